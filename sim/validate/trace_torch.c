/* trace_torch.c: `ulysim validate --torch-trace FILE.json [plan flags]`: a
 * torch.profiler trace against the plan the same flags price.
 *
 * The trace's GPU kernels are summed per profiler step and per category
 * (formats/torch_trace.c: NCCL collectives, attention forward and backward,
 * GEMM, the rest); the plan's ops fall into the same categories by their
 * cost class, collective and phase (uly_op fields, never their names), each
 * op's priced time counted as often as a step runs it (per layer, per
 * micro-batch, per step). Kernel time is busy time on the GPU: a transfer
 * hidden under compute counts whole on both sides, and an NCCL kernel's time
 * includes its wait for the peers. */
#include "trace_torch.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "context.h"
#include "host_mem.h"
#include "output.h"
#include "text_file.h"
#include "torch_trace.h"

#define TT_MAX_BYTES (1024L * 1024 * 1024) /* a long trace is hundreds of MiB */
/* The reader holds the whole text and cJSON's tree of it: about 7.7 times
 * the file at its peak (maximum resident set of `validate --torch-trace` on
 * a 14 MB trace of 900 copies of tests/sim/ingest/data's H100 layer steps:
 * 108 MB), rounded up for events with more fields. */
#define TT_MEM_PER_BYTE 10.0

/* Refuses, before reading it, a trace whose JSON tree would not fit in the
 * memory this process can still take (exit 2 naming both); a path that is
 * not a readable file is text_file_read's to report. */
static int room_check(const char *path, char *why, size_t n)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > TT_MAX_BYTES) return 0;
    const char *src = "";
    const double need = TT_MEM_PER_BYTE * (double)st.st_size, room = host_mem_process_room(&src);
    if (room < 0 || need <= room) return 0;
    return text_fail_at(why, n, path, 0, "%.1f MiB of JSON needs about %.0f MiB of memory to read, but %s is %.0f MiB "
                                         "(valid: a trace of fewer steps, e.g. torch.profiler's schedule, or more memory)",
                        (double)st.st_size / 1048576.0, need / 1048576.0, src, room / 1048576.0);
}

/* The category of a plan op, from the op vocabulary's fields. */
static tt_cat op_category(const uly_op *op)
{
    static const tt_cat by_coll[ULY_COLL_COUNT] = {
        [ULY_COLL_NONE] = TT_OTHER,          [ULY_COLL_ALLTOALL] = TT_A2A,
        [ULY_COLL_ALLGATHER] = TT_ALLGATHER, [ULY_COLL_REDUCE_SCATTER] = TT_REDUCE_SCATTER,
        [ULY_COLL_ALLREDUCE] = TT_ALLREDUCE, [ULY_COLL_SENDRECV] = TT_SENDRECV,
    };
    switch (op->kind) {
    case ULY_OP_COMM: return op->coll >= 0 && op->coll < ULY_COLL_COUNT ? by_coll[op->coll] : TT_OTHER;
    case ULY_OP_ATTN: return op->phase == ULY_PHASE_FWD || op->recompute ? TT_ATTN_FWD : TT_ATTN_BWD;
    case ULY_OP_GEMM: return TT_GEMM;
    case ULY_OP_ELEM: break;
    }
    return TT_OTHER;
}

/* How many times one step runs op: per step once, per micro-batch for the
 * model once per micro-batch, a layer op once per layer of the stage and
 * micro-batch. */
static double op_count(const uly_op *op, const uly_result *r)
{
    const double micro = r->time.micro_steps > 0 ? (double)r->time.micro_steps : 1.0;
    if (op->per_step) return 1.0;
    if (op->per_model) return micro;
    return micro * (double)(r->time.stage_layers > 0 ? r->time.stage_layers : 1);
}

void sim_torch_predict(const uly_plan *p, const uly_result *r, double *cat_s)
{
    for (int c = 0; c < TT_CAT_COUNT; c++) cat_s[c] = 0;
    for (int i = 0; i < p->n_ops; i++)
        cat_s[op_category(&p->ops[i])] += r->op_time_s[i] * op_count(&p->ops[i], r);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median over the steps of a category (TT_CAT_COUNT: all together), in s. */
static double step_median_s(const tt_trace *t, int cat, double *buf)
{
    for (int i = 0; i < t->n_steps; i++) {
        double us = 0;
        for (int c = 0; c < TT_CAT_COUNT; c++)
            if (cat == TT_CAT_COUNT || c == cat) us += t->steps[i].cat_us[c];
        buf[i] = us * 1e-6;
    }
    qsort(buf, (size_t)t->n_steps, sizeof *buf, cmp_dbl);
    const int n = t->n_steps;
    return n % 2 ? buf[n / 2] : 0.5 * (buf[n / 2 - 1] + buf[n / 2]);
}

/* The layout the flags price: the best feasible one of the strategies asked
 * for (most tokens/s, as plan recommends), else the best priced one. */
static int price(const sim_ctx *c, sim_summary *best, uly_plan *plan, uly_result *res)
{
    sim_summary *s = malloc(sizeof *s);
    uly_plan *p = malloc(sizeof *p);
    uly_result *r = malloc(sizeof *r);
    int found = -1; /* -1 none, 0 priced, 1 feasible */
    if (!s || !p || !r) found = -2;
    for (int i = 0; i < c->n_strat && found > -2; i++) {
        sim_best_plan(c, c->strat[i], c->gpus[0], c->seq[0], s, p, r);
        if (s->status != SIM_ROW_OK) continue;
        const int level = s->feasible ? 1 : 0;
        if (level > found || (level == found && s->time.tokens_per_s > best->time.tokens_per_s)) {
            found = level;
            *best = *s;
            *plan = *p;
            *res = *r;
        }
    }
    free(s);
    free(p);
    free(r);
    return found;
}

static void print_table(const char *path, const tt_trace *t, const sim_ctx *c, const sim_summary *s,
                        const double *meas_s, const double *pred_s, int csv)
{
    char deg[64];
    sim_degrees_str(&s->layout, deg, sizeof deg);
    if (!csv) {
        printf("# torch trace %s: %d steps (ProfilerStep#%lld..#%lld, %s windows), %lld kernels",
               path, t->n_steps, (long long)t->steps[0].number, (long long)t->steps[t->n_steps - 1].number,
               t->gpu_windows ? "GPU" : "CPU launch", (long long)t->n_kernels);
        if (t->n_outside) printf(", %lld outside the steps (%.3f ms, not counted)", (long long)t->n_outside,
                                 t->outside_us * 1e-3);
        printf("\n# predicted: %s %s, micro-batch %lld, %lld GPUs, seq %lld, model %s, cluster %s%s\n",
               s->strategy->name, deg, (long long)s->micro_batch, (long long)c->gpus[0],
               (long long)c->seq[0], c->model.name, c->cluster.name, s->feasible ? "" : " (infeasible: priced anyway)");
        printf("# per step: measured = median over the steps of the kernel time, predicted = the plan's op times "
               "times their count per step; error = predicted / measured - 1\n");
    }
    static const char *const cols[] = {"category", "measured_ms", "predicted_ms", "error_pct"};
    sim_table tb;
    sim_table_init(&tb, 4, cols, "lrrr");
    for (int k = 0; k <= TT_CAT_COUNT; k++) {
        sim_table_row(&tb);
        sim_table_cell(&tb, "%s", k < TT_CAT_COUNT ? tt_cat_name((tt_cat)k) : "total");
        sim_table_cell(&tb, "%.3f", meas_s[k] * 1e3);
        sim_table_cell(&tb, "%.3f", pred_s[k] * 1e3);
        if (meas_s[k] > 0) sim_table_cell(&tb, "%+.1f", 100.0 * (pred_s[k] / meas_s[k] - 1.0));
        else sim_table_cell(&tb, "%s", "");
    }
    if (csv) sim_table_print_csv(&tb, stdout);
    else sim_table_print(&tb, stdout);
    sim_table_free(&tb);
}

static int print_json(const char *path, const tt_trace *t, const sim_ctx *c, const sim_summary *s,
                      const double *meas_s, const double *pred_s)
{
    cJSON *root = cJSON_CreateObject(), *cats = cJSON_CreateArray();
    int bad = !root || !cats;
    bad |= sim_json_add(root, "torch_trace", cJSON_CreateString(path));
    bad |= sim_json_add(root, "steps", sim_json_int(t->n_steps));
    bad |= sim_json_add(root, "kernels", sim_json_int(t->n_kernels));
    bad |= sim_json_add(root, "kernels_outside_steps", sim_json_int(t->n_outside));
    bad |= sim_json_add(root, "plan", sim_json_plan(c, s));
    for (int k = 0; k <= TT_CAT_COUNT; k++) {
        cJSON *o = cJSON_CreateObject();
        bad |= sim_json_add(o, "category", cJSON_CreateString(k < TT_CAT_COUNT ? tt_cat_name((tt_cat)k) : "total"));
        bad |= sim_json_add(o, "measured_s", sim_json_num(meas_s[k]));
        bad |= sim_json_add(o, "predicted_s", sim_json_num(pred_s[k]));
        bad |= sim_json_add(o, "error", meas_s[k] > 0 ? sim_json_num(pred_s[k] / meas_s[k] - 1.0) : cJSON_CreateNull());
        bad |= sim_json_add(cats, NULL, o);
    }
    bad |= sim_json_add(root, "categories", cats);
    if (bad) {
        cJSON_Delete(root);
        return 1;
    }
    return sim_json_print(root, stdout);
}

int sim_validate_torch(int argc, char **argv)
{
    char why[1024];
    const char *path = NULL;
    /* the plan flags go to the planning parser, argv[0] standing for the program */
    char **pargv = calloc((size_t)argc + 1, sizeof *pargv);
    int pargc = 0;
    if (!pargv) return SIM_EXIT_INTERNAL;
    pargv[pargc++] = "ulysim";
    for (int i = 1; i < argc; i++) {
        const int eq = !strncmp(argv[i], "--torch-trace=", 14);
        if (eq || !strcmp(argv[i], "--torch-trace")) {
            const char *p = eq ? argv[i] + 14 : i + 1 < argc ? argv[++i] : NULL;
            if (!p || !*p) {
                free(pargv);
                sim_err_as("ulysim validate", "--torch-trace needs a FILE.json (a torch.profiler trace)");
                return SIM_EXIT_USAGE;
            }
            if (path) { /* one trace is compared with one plan: a second would drop the first */
                free(pargv);
                sim_err_as("ulysim validate", "--torch-trace given twice (%s, then %s; valid: one trace per run)", path, p);
                return SIM_EXIT_USAGE;
            }
            path = p;
        } else {
            pargv[pargc++] = argv[i];
        }
    }
    sim_args *a = malloc(sizeof *a);
    sim_ctx *c = malloc(sizeof *c);
    tt_trace *t = malloc(sizeof *t);
    uly_plan *plan = malloc(sizeof *plan);
    uly_result *res = malloc(sizeof *res);
    sim_summary *s = calloc(1, sizeof *s);
    double *buf = t ? malloc(sizeof(double) * TT_MAX_STEPS) : NULL;
    char *text = NULL;
    size_t len = 0;
    int rc = SIM_EXIT_INTERNAL;
    if (!a || !c || !t || !plan || !res || !s || !buf) goto out;
    if ((rc = sim_args_parse(pargc, pargv, a, why, sizeof why)) != 0) goto fail;
    if (a->cmd != SIM_CMD_PLAN) {
        rc = sim_fail(why, sizeof why, "validate --torch-trace takes the plan command's flags, not '%s'",
                      sim_cmd_name(a->cmd));
        goto fail;
    }
    if (a->timeline) {
        rc = sim_fail(why, sizeof why, "--timeline %s: validate --torch-trace writes no timeline (valid: ulysim plan "
                      "with the same flags and --timeline FILE)", a->timeline);
        goto fail;
    }
    if ((rc = sim_ctx_resolve(a, c, why, sizeof why)) != 0) goto fail;
    if ((rc = room_check(path, why, sizeof why)) != 0) goto fail;
    if ((rc = text_file_read(path, TT_MAX_BYTES, "a torch.profiler trace (JSON)", &text, &len, why, sizeof why)) ||
        (rc = tt_read(text, len, path, t, why, sizeof why)))
        goto fail;
    /* an FP8 run is priced as one: its GEMM kernels say so by name */
    if (t->n_fp8_gemms && c->w.dtype != ULY_FP8) {
        rc = sim_fail(why, sizeof why, "%s: an FP8 training run (%lld GEMM kernels of FP8 operands, e.g. %.60s) priced "
                      "as %s (valid: --dtype fp8 with its --fp8-recipe)", path, (long long)t->n_fp8_gemms, t->fp8_gemm,
                      uly_dtype_name(c->w.dtype));
        goto fail;
    }
    if (price(c, s, plan, res) < 0) {
        rc = sim_fail(why, sizeof why, "no layout of the strategies asked for has valid shapes on %lld GPUs at %lld "
                      "tokens (see `ulysim plan` with the same flags)", (long long)c->gpus[0], (long long)c->seq[0]);
        goto fail;
    }
    double meas_s[TT_CAT_COUNT + 1], pred_s[TT_CAT_COUNT + 1];
    sim_torch_predict(plan, res, pred_s);
    pred_s[TT_CAT_COUNT] = 0;
    for (int k = 0; k < TT_CAT_COUNT; k++) pred_s[TT_CAT_COUNT] += pred_s[k];
    for (int k = 0; k <= TT_CAT_COUNT; k++) meas_s[k] = step_median_s(t, k, buf);
    if (a->format == SIM_FMT_JSON) rc = print_json(path, t, c, s, meas_s, pred_s);
    else {
        print_table(path, t, c, s, meas_s, pred_s, a->format == SIM_FMT_CSV);
        rc = SIM_EXIT_OK;
    }
    goto out;
fail:
    if (rc == SIM_EXIT_USAGE) sim_err_as("ulysim validate", "%s", why);
    else if (rc) sim_err_as("ulysim validate", "internal failure");
out:
    free(text);
    free(buf);
    free(s);
    free(res);
    free(plan);
    free(t);
    free(c);
    free(a);
    free(pargv);
    return rc;
}
