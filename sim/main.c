/* main.c: the ulysim command. Parses the arguments, resolves presets and
 * workload, and runs one subcommand (plan by default). Also the helpers the
 * subcommands share: best layout of a strategy with its fallback, and the
 * compact summary of a result. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "output.h"
#include "par.h"

void sim_err(const char *fmt, ...)
{
    if (sim_par_rank() != 0) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    fprintf(stderr, "ulysim: %s\n", buf);
}

void sim_summary_from_result(sim_summary *s, const uly_result *r)
{
    s->layout = r->layout;
    s->micro_batch = r->micro_batch;
    s->feasible = r->feasible;
    s->n_reasons = r->n_reasons < 0 ? 0 : r->n_reasons > ULY_MAX_REASONS ? ULY_MAX_REASONS : r->n_reasons;
    memcpy(s->reasons, r->reasons, sizeof s->reasons);
    s->comm_fwd = r->comm_fwd_bytes;
    s->comm_bwd = r->comm_bwd_bytes;
    s->comm_recompute = r->comm_recompute_bytes;
    s->zero_bytes = r->zero_bytes;
    s->tiers = r->comm_tiers;
    s->mem = r->mem;
    s->time = r->time;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

void sim_pure_layout(const sim_ctx *c, uly_strategy_id s, int64_t gpus, uly_layout *l)
{
    const uly_strategy *st = uly_strategy_get(s);
    const sim_args *a = c->a;
    int64_t u = a->pin_u ? a->pin_u : 1, r = a->pin_r ? a->pin_r : 1, t = a->pin_t ? a->pin_t : 1;
    const int64_t pp = a->pin_pp > 1 ? a->pin_pp : 1;
    int64_t prod = u * r * t * pp;
    int64_t rest = prod > 0 && gpus % prod == 0 ? gpus / prod : 1;
    if (st) {
        int fu = st->uses_ulysses && !a->pin_u, fr = st->uses_ring && !a->pin_r, ft = st->uses_tp && !a->pin_t;
        if (fu && fr) {
            /* hybrid: Ulysses inside a node, the ring across */
            u = gcd64(rest, c->cluster.gpus_per_node > 0 ? c->cluster.gpus_per_node : 1);
            r = rest / u;
        } else if (fu) u = rest;
        else if (fr) r = rest;
        else if (ft) t = rest;
    }
    prod = u * r * t * pp;
    int64_t dp = prod > 0 && gpus % prod == 0 ? gpus / prod : 1;
    uly_layout_init(l, s, u, r, t, dp);
    l->pp = pp;
}

void sim_best(const sim_ctx *c, uly_strategy_id s, int64_t gpus, int64_t seq, sim_summary *out)
{
    memset(out, 0, sizeof *out);
    out->strategy = (int32_t)s;
    out->seq = seq;
    out->gpus = gpus;
    uly_workload w = c->w;
    w.seq = seq;
    uly_result *res = malloc(sizeof *res);
    uly_plan *plan = malloc(sizeof *plan);
    if (!res || !plan) {
        out->status = SIM_ROW_ERROR;
        snprintf(out->note, sizeof out->note, "out of memory");
        free(res);
        free(plan);
        return;
    }
    memset(res, 0, sizeof *res);
    uly_search_stats stats = {0, 0};
    uly_status st = uly_search_best(&c->model, &w, &c->cluster, gpus, s, &c->opts, res, &stats);
    out->evaluated = stats.evaluated;
    if (st == ULY_OK) {
        out->status = SIM_ROW_OK;
        sim_summary_from_result(out, res);
        goto done;
    }
    if (st != ULY_EINVAL && st != ULY_EOVERFLOW) {
        out->status = SIM_ROW_ERROR;
        snprintf(out->note, sizeof out->note, "uly_search_best(%s, %lld GPUs, seq %lld): %s", sim_strategy_name(s),
                 (long long)gpus, (long long)seq, uly_status_str(st));
        goto done;
    }
    /* No layout with valid shapes (or sizes overflow): show why, on the
     * representative layout. */
    uly_layout l;
    sim_pure_layout(c, s, gpus, &l);
    out->layout = l;
    out->micro_batch = w.micro_batch;
    if (uly_layout_gpus(&l) != gpus) {
        out->status = SIM_ROW_NOLAYOUT;
        out->n_reasons = 1;
        out->reasons[0].code = ULY_R_GPUS_MISMATCH;
        out->reasons[0].fatal = 1;
        out->reasons[0].v[0] = (double)uly_layout_gpus(&l);
        out->reasons[0].v[1] = (double)gpus;
        goto done;
    }
    memset(res, 0, sizeof *res);
    uly_status st2 = uly_evaluate(&c->model, &w, &c->cluster, &l, plan, res);
    if (st2 == ULY_OK) {
        sim_summary_from_result(out, res);
        out->layout = l;
        out->feasible = 0;
        out->status = st == ULY_EOVERFLOW ? SIM_ROW_OVERFLOW : SIM_ROW_NOLAYOUT;
    } else if (st2 == ULY_EOVERFLOW || st == ULY_EOVERFLOW) {
        out->status = SIM_ROW_OVERFLOW;
    } else {
        out->status = SIM_ROW_NOLAYOUT;
        char why[160] = "";
        if (uly_layout_check(&l, why, sizeof why) != ULY_OK && why[0]) snprintf(out->note, sizeof out->note, "%s", why);
        else snprintf(out->note, sizeof out->note, "%s", uly_status_str(st2));
    }
done:
    free(res);
    free(plan);
}

uly_status sim_reevaluate(const sim_ctx *c, const sim_summary *s, uly_plan *plan, uly_result *res)
{
    uly_workload w = c->w;
    w.seq = s->seq;
    if (s->micro_batch > 0) w.micro_batch = s->micro_batch;
    memset(res, 0, sizeof *res);
    return uly_evaluate(&c->model, &w, &c->cluster, &s->layout, plan, res);
}

static int run(int argc, char **argv)
{
    sim_args *a = malloc(sizeof *a);
    sim_ctx *c = malloc(sizeof *c);
    char why[768];
    int rc;
    if (!a || !c) {
        sim_err("out of memory");
        rc = SIM_EXIT_INTERNAL;
        goto out;
    }
    rc = sim_args_parse(argc, argv, a, why, sizeof why);
    if (rc) {
        sim_err("%s", why);
        goto out;
    }
    if (a->help) {
        if (sim_par_rank() == 0) sim_args_help(stdout);
        goto out;
    }
    if (a->version) {
        if (sim_par_rank() == 0)
            printf("ulysim %s (libulysim %s, %s build)\n", ULY_VERSION, ULY_VERSION, sim_par_kind());
        goto out;
    }
    if (a->cmd == SIM_CMD_PRESETS) {
        rc = sim_cmd_presets(a);
        goto out;
    }
    rc = sim_ctx_resolve(a, c, why, sizeof why);
    if (rc) {
        sim_err("%s", why);
        goto out;
    }
    switch (a->cmd) {
    case SIM_CMD_PLAN: rc = sim_cmd_plan(c); break;
    case SIM_CMD_MAXSEQ: rc = sim_cmd_maxseq(c); break;
    case SIM_CMD_MINGPUS: rc = sim_cmd_mingpus(c); break;
    case SIM_CMD_SWEEP: rc = sim_cmd_sweep(c); break;
    default: rc = SIM_EXIT_INTERNAL; break;
    }
out:
    free(a);
    free(c);
    return rc;
}

int main(int argc, char **argv)
{
    /* commands with arguments of their own run without MPI */
    const sim_command *cmd = argc > 1 ? sim_command_find(argv[1]) : NULL;
    if (cmd) {
        int rc = cmd->run(argc - 1, argv + 1);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            fprintf(stderr, "ulysim: cannot write the output: %s\n", strerror(errno));
            rc = SIM_EXIT_INTERNAL;
        }
        return rc;
    }
    if (sim_par_init(&argc, &argv) != 0) {
        fprintf(stderr, "ulysim: MPI initialisation failed\n");
        return SIM_EXIT_INTERNAL;
    }
    int rc = run(argc, argv);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        sim_err("cannot write the output: %s", strerror(errno));
        rc = SIM_EXIT_INTERNAL;
    }
    sim_par_finalize();
    return rc;
}
