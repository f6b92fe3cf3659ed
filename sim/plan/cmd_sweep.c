/* cmd_sweep.c: `ulysim sweep`: the best layout of every strategy at every
 * (seq, gpus) of two lists or ranges. Rows go strategy by strategy, then
 * sequence, then GPUs. Under MPI, row i is computed by rank i % size and
 * rank 0 prints; the output is the same byte for byte as one process. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "context.h"
#include "output.h"
#include "par.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A progress bar on stderr: only on a tty, only after a second, at most ten
 * updates a second; rank 0 shows its own share. */
typedef struct progress {
    int on, shown;
    double t0, last;
    size_t total;
} progress;

static void progress_start(progress *p, const sim_args *a, size_t total)
{
    memset(p, 0, sizeof *p);
    p->on = a->progress && sim_par_rank() == 0 && isatty(STDERR_FILENO);
    p->t0 = p->last = now_s();
    p->total = total;
}

static void progress_step(progress *p, size_t done)
{
    if (!p->on) return;
    double t = now_s();
    if (t - p->t0 < 1.0 || t - p->last < 0.1) return;
    p->last = t;
    p->shown = 1;
    int width = 40;
    int fill = p->total ? (int)((double)done / (double)p->total * width) : width;
    char bar[64];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = 0;
    double eta = done ? (t - p->t0) * (double)(p->total - done) / (double)done : 0;
    fprintf(stderr, "\rulysim sweep [%s] %zu/%zu, %.0f s left ", bar, done, p->total, eta);
    fflush(stderr);
}

static void progress_end(progress *p)
{
    if (p->on && p->shown) {
        fprintf(stderr, "\r%*s\r", 79, "");
        fflush(stderr);
    }
}

int sim_cmd_sweep(const sim_ctx *c)
{
    const sim_args *a = c->a;
    size_t ns = (size_t)c->n_strat, nq = (size_t)c->n_seq, ng = (size_t)c->n_gpus;
    size_t n = ns * nq * ng;
    sim_summary *items = calloc(n ? n : 1, sizeof *items);
    unsigned char *best = calloc(n ? n : 1, 1);
    if (!items || !best) {
        free(items);
        free(best);
        sim_err("out of memory for %zu sweep rows", n);
        sim_par_abort(SIM_EXIT_INTERNAL);
        return SIM_EXIT_INTERNAL;
    }
    size_t mine = 0;
    for (size_t i = 0; i < n; i++) mine += sim_par_mine(i);
    progress pg;
    progress_start(&pg, a, mine);
    size_t done = 0;
    for (size_t i = 0; i < n; i++) {
        if (!sim_par_mine(i)) continue;
        size_t is = i / (nq * ng), iq = i / ng % nq, ig = i % ng;
        sim_best(c, c->strat[is], c->gpus[ig], c->seq[iq], &items[i]);
        progress_step(&pg, ++done);
    }
    progress_end(&pg);
    int rc = SIM_EXIT_OK;
    if (sim_par_gather(items, sizeof *items, n) != 0) {
        sim_err("gathering the results across MPI ranks failed");
        sim_par_abort(SIM_EXIT_INTERNAL);
        rc = SIM_EXIT_INTERNAL;
        goto out;
    }
    if (sim_par_rank() != 0) goto out;
    for (size_t i = 0; i < n; i++)
        if (items[i].status == SIM_ROW_ERROR) {
            sim_err("internal: %s", items[i].note);
            rc = SIM_EXIT_INTERNAL;
            goto out;
        }
    /* best strategy at each (seq, gpus) */
    for (size_t iq = 0; iq < nq; iq++)
        for (size_t ig = 0; ig < ng; ig++) {
            size_t bi = n;
            for (size_t is = 0; is < ns; is++) {
                size_t i = (is * nq + iq) * ng + ig;
                if (items[i].status != SIM_ROW_OK || !items[i].feasible) continue;
                if (bi == n || items[i].time.tokens_per_s > items[bi].time.tokens_per_s) bi = i;
            }
            if (bi < n) best[bi] = 1;
        }
    FILE *f = stdout;
    if (a->format == SIM_FMT_JSON) {
        int bad = 0;
        cJSON *root = cJSON_CreateObject();
        bad |= sim_json_add(root, "command", cJSON_CreateString("sweep"));
        cJSON *cfg = sim_json_config(c, "sweep");
        cJSON *sq = cJSON_CreateArray(), *gp = cJSON_CreateArray();
        for (size_t k = 0; k < nq; k++) bad |= sim_json_add(sq, NULL, sim_json_int(c->seq[k]));
        for (size_t k = 0; k < ng; k++) bad |= sim_json_add(gp, NULL, sim_json_int(c->gpus[k]));
        bad |= sim_json_add(cfg, "seq", sq);
        bad |= sim_json_add(cfg, "gpus", gp);
        bad |= sim_json_add(root, "config", cfg);
        bad |= sim_json_add(root, "flop_convention", cJSON_CreateString(sim_flop_convention));
        cJSON *plans = cJSON_CreateArray();
        for (size_t i = 0; i < n && !bad; i++) {
            cJSON *p = sim_json_plan(c, &items[i]);
            if (p) bad |= sim_json_add(p, "best", cJSON_CreateBool(best[i]));
            bad |= sim_json_add(plans, NULL, p);
        }
        bad |= sim_json_add(root, "plans", plans);
        if (bad) {
            cJSON_Delete(root);
            sim_err("out of memory building the JSON output");
            rc = SIM_EXIT_INTERNAL;
            goto out;
        }
        rc = sim_json_print(root, f) ? SIM_EXIT_INTERNAL : SIM_EXIT_OK;
        goto out;
    }
    if (a->format == SIM_FMT_TABLE) {
        fprintf(f, "# ulysim %s sweep: %s on %s; %zu strategies x %zu sequence lengths x %zu GPU counts\n", ULY_VERSION,
                c->model.name, c->cluster.name, ns, nq, ng);
        fprintf(f, "# best layout per row; best = 1: highest tokens/s at its (seq, gpus); one block per strategy (gnuplot index), a blank line per sequence\n");
    }
    rc = sim_print_rows(c, items, n, SIM_ROWS_SWEEP, best, (int)ng, (int)(nq * ng), f) ? SIM_EXIT_INTERNAL : SIM_EXIT_OK;
out:
    free(items);
    free(best);
    return rc;
}
