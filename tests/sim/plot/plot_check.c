/* plot_check.c: end-to-end checks of `ulysim plot` (tests/sim/plot).
 *
 *   plot_check render ULYSIM OUTDIR FIGURE FMT [ARGS...]
 *       runs `ULYSIM plot FIGURE ARGS -o OUTDIR/FIGURE.FMT`; requires exit 0,
 *       an image of that format that is not trivially small (magic bytes,
 *       size, PNG dimensions), the CSV beside it ('#' header naming the
 *       command and the columns, a column-name line, data rows), and that the
 *       CSV holds the numbers the model gives for the same configuration:
 *       the figure's rows are recomputed with `ULYSIM --format json` (plan,
 *       max-seq) and compared field by field; for traces, the measured times
 *       with the trace's op lines and the predicted ones with the plan
 *       command run on the trace's own model, cluster and workload. The
 *       registry's columns the scripts draw with (sidx, label, label_short)
 *       must give each strategy its registry position and one label.
 *   plot_check nognuplot ULYSIM OUTDIR
 *       with $GNUPLOT naming no program: exit 1, a message naming gnuplot,
 *       the CSV kept, no image.
 *   plot_check fail SUBSTR ULYSIM ARGS...
 *       `ULYSIM ARGS` exits 2 with one line on stderr containing SUBSTR.
 *   plot_check byhand ULYSIM OUTDIR SCRIPTS
 *       writes a CSV with --data-only, then runs gnuplot on each script by
 *       hand with only `data` (and `out`) set: the documented defaults work.
 *   plot_check help ULYSIM
 *       `ulysim plot --help` names every figure; `ulysim --help` lists plot.
 *   plot_check look FIGURE SVG [TITLE]   what a reader sees (plot_look.c),
 *       also run on every SVG render: no text too small, outside the image
 *       or on another; markers apart and in range; nothing above the title.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "plot_check.h"

/* The model/cluster flags of the figure's arguments, for the plan commands. */
typedef struct figargs {
    const char *model, *cluster, *seq, *strategy;
    const char *extra[16]; /* workload flags given to the figure, each with its value: the plans are priced with them */
    int n_extra;
    int spread_best, spread_all;
    int exhaustive; /* the PNG variant: also the checks that run a command per layout */
} figargs;

static void add_common(args *a, const figargs *fa)
{
    if (fa->model) addf(a, "--model=%s", fa->model);
    if (fa->cluster) addf(a, "--cluster=%s", fa->cluster);
    for (int k = 0; k + 1 < fa->n_extra; k += 2) addf(a, "%s=%s", fa->extra[k], fa->extra[k + 1]);
}

static int check_comm_volume(const char *ulysim, const csv *c, const figargs *fa)
{
    static const char *const need[] = {"panel", "strategy", "gpus", "seq", "layout", "comm_fwd_bytes",
                                       "comm_bwd_bytes", "comm_total_bytes", NULL};
    if (need_cols(c, need)) return 1;
    int fixed = 0, scaled = 0;
    for (int r = 0; r < c->nrows; r++) {
        args a = {0};
        add(&a, ulysim);
        add(&a, "--format=json");
        addf(&a, "--gpus=%s", cell(c, r, "gpus"));
        addf(&a, "--seq=%s", cell(c, r, "seq"));
        addf(&a, "--strategy=%s", cell(c, r, "strategy"));
        add_pins(&a, cell(c, r, "layout"));
        add_common(&a, fa);
        cJSON *j = run_json(&a);
        args_free(&a);
        if (!j) return fail("row %d: the plan command failed", r + 1);
        const cJSON *p = plan_of(j, cell(c, r, "strategy"));
        char deg[64] = "";
        if (p) degrees_str(p, deg, sizeof deg);
        double fwd = jnum(p, "per_layer.comm_bytes_per_rank.fwd"), bwd = jnum(p, "per_layer.comm_bytes_per_rank.bwd");
        int bad = !p || strcmp(deg, cell(c, r, "layout")) != 0 || fwd != num(c, r, "comm_fwd_bytes") ||
                  bwd != num(c, r, "comm_bwd_bytes") || fwd + bwd != num(c, r, "comm_total_bytes");
        if (bad) {
            return fail("row %d (%s %s, %s GPUs, seq %s): CSV fwd %s bwd %s, `ulysim --format json` gives %s fwd %.0f bwd %.0f",
                        r + 1, cell(c, r, "panel"), cell(c, r, "strategy"), cell(c, r, "gpus"), cell(c, r, "seq"),
                        cell(c, r, "comm_fwd_bytes"), cell(c, r, "comm_bwd_bytes"), deg, fwd, bwd);
        }
        fixed += strcmp(cell(c, r, "panel"), "fixed") == 0;
        scaled += strcmp(cell(c, r, "panel"), "scaled") == 0;
        cJSON_Delete(j);
    }
    if (!fixed || !scaled) return fail("the CSV lacks the fixed or the scaled panel");
    /* without --strategy, no two lines lie on each other: a strategy whose
     * bytes equal an earlier one's at every point is drawn once */
    for (int r = 0; r < c->nrows && !fa->strategy; r++)
        for (int q = 0; q < c->nrows; q++) {
            if (strcmp(cell(c, q, "strategy"), cell(c, r, "strategy")) <= 0) continue;
            int same = 1;
            for (int x = 0; x < c->nrows && same; x++) {
                if (strcmp(cell(c, x, "strategy"), cell(c, r, "strategy")) != 0) continue;
                int found = 0;
                for (int y = 0; y < c->nrows && !found; y++)
                    found = strcmp(cell(c, y, "strategy"), cell(c, q, "strategy")) == 0 &&
                            strcmp(cell(c, y, "panel"), cell(c, x, "panel")) == 0 &&
                            strcmp(cell(c, y, "gpus"), cell(c, x, "gpus")) == 0 &&
                            num(c, y, "comm_total_bytes") == num(c, x, "comm_total_bytes");
                same = found;
            }
            if (same) return fail("%s and %s are both drawn with the same bytes at every point", cell(c, r, "strategy"),
                                  cell(c, q, "strategy"));
        }
    printf("  %d rows equal per_layer.comm_bytes_per_rank of `ulysim --format json`\n", c->nrows);
    return 0;
}

/* The registry's columns: sidx is the strategy's position in the registry
 * (the order of `ulysim --format json` plans), from 1; each strategy has one
 * label and one short label, and no two share one. With --strategy all, every
 * strategy of the registry has rows. */
static int check_strategy_cols(const char *ulysim, const csv *c, const figargs *fa)
{
    static const char *const need[] = {"strategy", "sidx", "label", "label_short", NULL};
    if (need_cols(c, need)) return 1;
    args a = {0};
    add(&a, ulysim);
    add(&a, "--format=json");
    add(&a, "--gpus=64");
    add(&a, "--seq=64K");
    cJSON *j = run_json(&a);
    args_free(&a);
    if (!j) return fail("the plan command failed");
    int n_reg = cJSON_GetArraySize(jget(j, "plans")), seen[64] = {0};
    for (int r = 0; r < c->nrows; r++) {
        int want = 0, i = 0;
        const cJSON *p;
        cJSON_ArrayForEach(p, jget(j, "plans"))
        {
            i++;
            if (strcmp(jget(p, "strategy")->valuestring, cell(c, r, "strategy")) == 0) want = i;
        }
        if (!want || num(c, r, "sidx") != want || !cell(c, r, "label")[0] || !cell(c, r, "label_short")[0]) {
            cJSON_Delete(j);
            return fail("row %d (%s): sidx %s, label '%s', short '%s'; the registry has it at %d", r + 1,
                        cell(c, r, "strategy"), cell(c, r, "sidx"), cell(c, r, "label"), cell(c, r, "label_short"), want);
        }
        if (want < 64) seen[want] = 1;
        for (int q = 0; q < r; q++) {
            int same_s = strcmp(cell(c, q, "strategy"), cell(c, r, "strategy")) == 0;
            if (same_s != (strcmp(cell(c, q, "label"), cell(c, r, "label")) == 0) ||
                same_s != (strcmp(cell(c, q, "label_short"), cell(c, r, "label_short")) == 0)) {
                cJSON_Delete(j);
                return fail("rows %d and %d (%s, %s): labels '%s' / '%s', short '%s' / '%s'", q + 1, r + 1,
                            cell(c, q, "strategy"), cell(c, r, "strategy"), cell(c, q, "label"), cell(c, r, "label"),
                            cell(c, q, "label_short"), cell(c, r, "label_short"));
            }
        }
    }
    cJSON_Delete(j);
    for (int i = 1; fa->strategy && strcmp(fa->strategy, "all") == 0 && i <= n_reg && i < 64; i++)
        if (!seen[i]) return fail("--strategy all: no rows for the registry's strategy %d", i);
    printf("  sidx, label and label_short follow the registry (%d strategies)\n", n_reg);
    return 0;
}

static int check_throughput(const char *ulysim, const csv *c, const figargs *fa)
{
    static const char *const need[] = {"strategy", "seq", "gpus", "layout", "fits", "oom", "tflops_per_gpu",
                                       "tokens_per_s", NULL};
    if (need_cols(c, need)) return 1;
    int oom = 0;
    for (int r = 0; r < c->nrows; r++) {
        args a = {0};
        add(&a, ulysim);
        add(&a, "--format=json");
        addf(&a, "--gpus=%s", cell(c, r, "gpus"));
        addf(&a, "--seq=%s", cell(c, r, "seq"));
        addf(&a, "--strategy=%s", cell(c, r, "strategy"));
        if (!fa->spread_best) add_pins(&a, cell(c, r, "layout"));
        add_common(&a, fa);
        cJSON *j = run_json(&a);
        args_free(&a);
        if (!j) return fail("row %d: the plan command failed", r + 1);
        const cJSON *p = plan_of(j, cell(c, r, "strategy"));
        int feas = cJSON_IsTrue(jget(p, "feasible"));
        /* a plan that does not fit has its throughput under step.if_it_fit */
        const char *tf_key = feas ? "step.tflops_per_gpu" : "step.if_it_fit.tflops_per_gpu";
        const char *tps_key = feas ? "step.tokens_per_s" : "step.if_it_fit.tokens_per_s";
        double tf = jnum(p, tf_key), tps = jnum(p, tps_key);
        char deg[64] = "";
        if (p) degrees_str(p, deg, sizeof deg);
        if (!p || !close_rel(tf, num(c, r, "tflops_per_gpu"), 1e-8) || !close_rel(tps, num(c, r, "tokens_per_s"), 1e-8) ||
            feas != (int)num(c, r, "fits") || strcmp(deg, cell(c, r, "layout")) != 0) {
            return fail("row %d (%s at %s tokens): CSV %s fits %s %s TFLOP/s, `ulysim --format json` gives %s fits %d %.10g TFLOP/s",
                        r + 1, cell(c, r, "strategy"), cell(c, r, "seq"), cell(c, r, "layout"), cell(c, r, "fits"),
                        cell(c, r, "tflops_per_gpu"), deg, feas, tf);
        }
        oom += num(c, r, "oom") == 1;
        cJSON_Delete(j);
    }
    printf("  %d rows equal step.tflops_per_gpu, tokens_per_s (step.if_it_fit's where it does not fit) and feasible of `ulysim --format json` (%d out of memory)\n",
           c->nrows, oom);
    return 0;
}

static int check_max_seq(const char *ulysim, const csv *c, const figargs *fa)
{
    static const char *const need[] = {"strategy", "gpus", "max_seq", "layout", NULL};
    if (need_cols(c, need)) return 1;
    cJSON *j = NULL;
    const char *gpus = NULL;
    for (int r = 0; r < c->nrows; r++) {
        if (!gpus || strcmp(gpus, cell(c, r, "gpus")) != 0) {
            cJSON_Delete(j);
            gpus = cell(c, r, "gpus");
            args a = {0};
            add(&a, ulysim);
            add(&a, "max-seq");
            add(&a, "--format=json");
            addf(&a, "--gpus=%s", gpus);
            if (fa->seq) addf(&a, "--seq=%s", fa->seq);
            add_common(&a, fa);
            j = run_json(&a);
            args_free(&a);
            if (!j) return fail("row %d: ulysim max-seq failed", r + 1);
        }
        const cJSON *p = plan_of(j, cell(c, r, "strategy"));
        double ms = jnum(p, "max_seq");
        if (!p || ms != num(c, r, "max_seq")) {
            return fail("row %d (%s on %s GPUs): CSV max_seq %s, `ulysim max-seq --format json` gives %.0f", r + 1,
                        cell(c, r, "strategy"), gpus, cell(c, r, "max_seq"), ms);
        }
    }
    cJSON_Delete(j);
    printf("  %d rows equal max_seq of `ulysim max-seq --format json`\n", c->nrows);
    return 0;
}

/* Feasibility of the row's strategy at micro-batch b with every degree
 * pinned (u, r, t; dp is what remains): 1 fits, 0 does not, -1 refused (a
 * degree the strategy does not take, or no valid shapes). deg: its degrees. */
static int pinned_fits(const char *ulysim, const csv *c, int r, const figargs *fa, long long b, long long u, long long rr,
                       long long t, char *deg, size_t degn)
{
    args a = {0};
    add(&a, ulysim);
    add(&a, "--format=json");
    addf(&a, "--gpus=%s", cell(c, r, "gpus"));
    addf(&a, "--seq=%s", cell(c, r, "seq"));
    addf(&a, "--strategy=%s", cell(c, r, "strategy"));
    addf(&a, "--batch=%lld", b);
    addf(&a, "--ulysses=%lld", u);
    addf(&a, "--ring=%lld", rr);
    addf(&a, "--tp=%lld", t);
    add_common(&a, fa);
    out o;
    int rc = run(a.v, &o);
    args_free(&a);
    cJSON *j = rc == 0 && o.rc == 0 ? cJSON_Parse(o.out) : NULL;
    out_free(&o);
    const cJSON *p = j ? plan_of(j, cell(c, r, "strategy")) : NULL;
    int fits = !p ? -1 : cJSON_IsTrue(jget(p, "feasible")) ? 1 : 0;
    if (p && deg) degrees_str(p, deg, degn);
    cJSON_Delete(j);
    return fits;
}

/* The degree of `key` ("u8" -> 8) in a layout string, 1 when absent. */
static long long layout_degree(const char *layout, const char *key)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", layout);
    char *save = NULL;
    for (char *t = strtok_r(buf, ".", &save); t; t = strtok_r(NULL, ".", &save))
        if (!strncmp(t, key, strlen(key)) && t[strlen(key)] >= '0' && t[strlen(key)] <= '9') return atoll(t + strlen(key));
    return 1;
}

/* Each row: its layout, pinned, fits max_micro_batch and not one more; and
 * no split of the GPUs into u x r x t x dp (brute force over the command
 * line, every degree pinned) fits more sequences in flight than max_batch. */
static int check_max_batch(const char *ulysim, const csv *c, const figargs *fa)
{
    static const char *const need[] = {"strategy", "gpus", "seq", "max_micro_batch", "dp", "max_batch", "layout", NULL};
    if (need_cols(c, need)) return 1;
    int tried = 0;
    for (int r = 0; r < c->nrows; r++) {
        const char *lay = cell(c, r, "layout");
        long long b = (long long)num(c, r, "max_micro_batch"), most = (long long)num(c, r, "max_batch");
        long long u = layout_degree(lay, "u"), rr = layout_degree(lay, "r"), t = layout_degree(lay, "tp");
        char deg[64] = "";
        int at = pinned_fits(ulysim, c, r, fa, b, u, rr, t, deg, sizeof deg);
        int above = pinned_fits(ulysim, c, r, fa, b + 1, u, rr, t, NULL, 0);
        if (at != 1 || above != 0 || strcmp(deg, lay) != 0 || most != b * (long long)num(c, r, "dp"))
            return fail("row %d (%s on %s GPUs): CSV micro-batch %lld at %s; pinned, `ulysim --batch %lld` fits %d (%s), "
                        "--batch %lld fits %d",
                        r + 1, cell(c, r, "strategy"), cell(c, r, "gpus"), b, lay, b, at, deg, b + 1, above);
        long long P = (long long)num(c, r, "gpus");
        for (long long tt = 1; fa->exhaustive && tt <= P; tt++)
            for (long long uu = 1; P % tt == 0 && uu <= P / tt; uu++)
                for (long long ru = 1; (P / tt) % uu == 0 && ru <= P / (tt * uu); ru++) {
                    if ((P / (tt * uu)) % ru) continue;
                    long long dp = P / (tt * uu * ru), more = most / dp + 1; /* more x dp > max_batch */
                    int fits = pinned_fits(ulysim, c, r, fa, more, uu, ru, tt, deg, sizeof deg);
                    tried += fits >= 0;
                    if (fits == 1)
                        return fail("row %d (%s on %lld GPUs): max_batch %lld, yet %s fits micro-batch %lld x dp %lld",
                                    r + 1, cell(c, r, "strategy"), P, most, deg, more, dp);
                }
    }
    printf("  %d rows: the layout fits max_micro_batch and not one more, pinned; %d other splits fit no more sequences "
           "in flight than max_batch%s\n",
           c->nrows, tried, fa->exhaustive ? "" : " (the splits are tried by the png variant)");
    return 0;
}

/* `ulysim --format json` at the (gpus, seq) of the CSV's first row, every
 * strategy at its best layout; NULL when it fails. */
static cJSON *plain_plan(const char *ulysim, const csv *c, const figargs *fa)
{
    args a = {0};
    add(&a, ulysim);
    add(&a, "--format=json");
    addf(&a, "--gpus=%s", cell(c, 0, "gpus"));
    addf(&a, "--seq=%s", cell(c, 0, "seq"));
    add_common(&a, fa);
    cJSON *j = run_json(&a);
    args_free(&a);
    return j;
}

static int check_memory(const char *ulysim, const csv *c, const figargs *fa)
{
    static const char *const need[] = {"strategy", "layout", "gpus", "seq", "fits", "total_bytes", "capacity_bytes", NULL};
    if (need_cols(c, need)) return 1;
    cJSON *j = plain_plan(ulysim, c, fa);
    if (!j) return fail("the plan command failed");
    int nterms = 0;
    for (int r = 0; r < c->nrows; r++) {
        const cJSON *p = plan_of(j, cell(c, r, "strategy"));
        char deg[64] = "";
        if (p) degrees_str(p, deg, sizeof deg);
        if (!p || strcmp(deg, cell(c, r, "layout")) != 0 || jnum(p, "memory.total_bytes") != num(c, r, "total_bytes") ||
            jnum(p, "memory.capacity_bytes") != num(c, r, "capacity_bytes") ||
            cJSON_IsTrue(jget(p, "feasible")) != (int)num(c, r, "fits")) {
            return fail("row %d (%s): CSV %s total %s bytes, `ulysim --format json` gives %s %.0f", r + 1,
                        cell(c, r, "strategy"), cell(c, r, "layout"), cell(c, r, "total_bytes"), deg,
                        jnum(p, "memory.total_bytes"));
        }
        const cJSON *t;
        double sum = 0;
        nterms = 0;
        cJSON_ArrayForEach(t, jget(p, "memory.terms"))
        {
            char name[64];
            snprintf(name, sizeof name, "%s_bytes", t->string);
            double v = num(c, r, name);
            if (col_of(c, name) < 0 || v != t->valuedouble) {
                return fail("row %d (%s): term %s: CSV %g, JSON %.0f", r + 1, cell(c, r, "strategy"), name, v,
                            t->valuedouble);
            }
            sum += v;
            nterms++;
        }
        if (!close_rel(sum, num(c, r, "total_bytes"), 1e-12)) {
            return fail("row %d: the terms sum to %.0f, total_bytes is %s", r + 1, sum, cell(c, r, "total_bytes"));
        }
    }
    cJSON_Delete(j);
    printf("  %d rows x %d terms equal memory.terms and total_bytes of `ulysim --format json`\n", c->nrows, nterms);
    return 0;
}

static int check_breakdown(const char *ulysim, const csv *c, const figargs *fa)
{
    static const char *const need[] = {"strategy", "layout", "gpus", "seq", "micro_batch", "micro_steps", "fits",
                                       "compute_s", "comm_exposed_s", "step_fixed_s", "comm_overlapped_s", "step_s",
                                       "layer_compute_s", "layer_comm_exposed_s", "layer_comm_overlapped_s", NULL};
    if (need_cols(c, need)) return 1;
    cJSON *j = NULL;
    /* best layouts: the global batch is the plain plan's recommendation's
     * micro-batch x dp, and that strategy's bar is the plan's step */
    long long g = 0;
    const char *rec_name = NULL;
    double rec_step = 0;
    cJSON *plain = NULL;
    if (!fa->spread_all && c->nrows > 0) {
        plain = plain_plan(ulysim, c, fa);
        const cJSON *rec = plain ? cJSON_GetArrayItem(jget(plain, "plans"), (int)jnum(plain, "recommended")) : NULL;
        if (!rec) return fail("the plain plan command failed or recommends nothing");
        g = (long long)(jnum(rec, "step.micro_batch") * jnum(rec, "degrees.dp"));
        rec_name = cJSON_GetStringValue(jget(rec, "strategy"));
        rec_step = jnum(rec, "step.time_s");
    }
    for (int r = 0; r < c->nrows; r++) {
        /* best layouts: one plan command, with the tokens per step the figure
         * fixes; all GPUs: one per strategy, its degrees pinned */
        if (fa->spread_all || !j) {
            cJSON_Delete(j);
            args a = {0};
            add(&a, ulysim);
            add(&a, "--format=json");
            addf(&a, "--gpus=%s", cell(c, r, "gpus"));
            addf(&a, "--seq=%s", cell(c, r, "seq"));
            if (fa->spread_all) {
                addf(&a, "--strategy=%s", cell(c, r, "strategy"));
                add_pins(&a, cell(c, r, "layout"));
            } else {
                add(&a, "--batch=1");
                addf(&a, "--global-batch=%lld", g);
            }
            add_common(&a, fa);
            j = run_json(&a);
            args_free(&a);
            if (!j) return fail("row %d: the plan command failed", r + 1);
        }
        const cJSON *p = plan_of(j, cell(c, r, "strategy"));
        char deg[64] = "";
        if (p) degrees_str(p, deg, sizeof deg);
        if (rec_name && !strcmp(rec_name, cell(c, r, "strategy")) && !close_rel(rec_step, num(c, r, "step_s"), 1e-8))
            return fail("row %d (%s, the recommendation): step %s s, the plain plan's step is %.10g s", r + 1, rec_name,
                        cell(c, r, "step_s"), rec_step);
        double parts = num(c, r, "compute_s") + num(c, r, "comm_exposed_s") + num(c, r, "step_fixed_s");
        if (!p || strcmp(deg, cell(c, r, "layout")) != 0 || !close_rel(jnum(p, "step.time_s"), num(c, r, "step_s"), 1e-8) ||
            !close_rel(jnum(p, "per_layer.compute_s"), num(c, r, "layer_compute_s"), 1e-8) ||
            !close_rel(jnum(p, "per_layer.comm_exposed_s"), num(c, r, "layer_comm_exposed_s"), 1e-8) ||
            !close_rel(jnum(p, "per_layer.comm_overlapped_s"), num(c, r, "layer_comm_overlapped_s"), 1e-8) ||
            jnum(p, "step.micro_steps") != num(c, r, "micro_steps") || !close_rel(parts, num(c, r, "step_s"), 1e-8)) {
            return fail("row %d (%s): CSV %s step %s s (parts %.10g), `ulysim --format json` gives %s step %.10g s", r + 1,
                        cell(c, r, "strategy"), cell(c, r, "layout"), cell(c, r, "step_s"), parts, deg,
                        jnum(p, "step.time_s"));
        }
    }
    cJSON_Delete(j);
    cJSON_Delete(plain);
    printf("  %d rows equal step.time_s and per_layer times of `ulysim --format json`; compute + exposed + per-step = step"
           "%s\n",
           c->nrows, rec_name ? "; global batch and the recommended bar as the plain plan's" : "");
    return 0;
}

/* ------------------------------------------------------------- traces */

typedef struct trace {
    char *path;
    cJSON *header;
    cJSON *ops[80];  /* op lines by id */
    int order[80], n_order;
    cJSON *plan_json; /* `ulysim --format json` for the trace's configuration */
} trace;

static int trace_read(const char *path, trace *t, const char *ulysim, const char *outdir)
{
    memset(t, 0, sizeof *t);
    t->path = strdup(path);
    char *text = slurp(path, NULL);
    if (!text) return fail("cannot read %s", path);
    char *save = NULL;
    int first = 1;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *o = cJSON_Parse(line);
        if (!o) continue;
        if (first) {
            t->header = o;
            first = 0;
            continue;
        }
        const cJSON *ty = jget(o, "type");
        int id = (int)jnum(o, "id");
        if (cJSON_IsString(ty) && strcmp(ty->valuestring, "op") == 0 && id >= 0 && id < 80) {
            t->ops[id] = o;
            t->order[t->n_order++] = id;
        } else {
            cJSON_Delete(o);
        }
    }
    free(text);
    if (!t->header) return fail("%s: no header", path);
    /* the plan command on the trace's own model, cluster and workload */
    const cJSON *h = t->header;
    if (cJSON_IsTrue(jget(h, "cluster.used.adjusted"))) return fail("%s: a stretched cluster profile; use another trace", path);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char mpath[1200], cpath[1200];
    snprintf(mpath, sizeof mpath, "%s/%s.model.json", outdir, base);
    snprintf(cpath, sizeof cpath, "%s/%s.cluster.json", outdir, base);
    char *ms = cJSON_Print(jget(h, "model")), *cs = cJSON_Print(jget(h, "cluster.preset"));
    FILE *f1 = fopen(mpath, "w"), *f2 = fopen(cpath, "w");
    if (!ms || !cs || !f1 || !f2) return fail("cannot write %s or %s", mpath, cpath);
    fputs(ms, f1);
    fputs(cs, f2);
    fclose(f1);
    fclose(f2);
    free(ms);
    free(cs);
    const cJSON *w = jget(h, "workload"), *l = jget(h, "plan.layout");
    args a = {0};
    add(&a, ulysim);
    add(&a, "--format=json");
    addf(&a, "--model=%s", mpath);
    addf(&a, "--cluster=%s", cpath);
    addf(&a, "--gpus=%.0f", jnum(l, "ulysses") * jnum(l, "ring") * jnum(l, "tp") * jnum(l, "dp"));
    addf(&a, "--seq=%.0f", jnum(w, "seq"));
    addf(&a, "--batch=%.0f", jnum(w, "micro_batch"));
    if (jnum(w, "global_batch") > 0) addf(&a, "--global-batch=%.0f", jnum(w, "global_batch"));
    addf(&a, "--dtype=%s", jget(w, "dtype")->valuestring);
    addf(&a, "--recompute=%s", jget(w, "recompute")->valuestring);
    addf(&a, "--zero=%.0f", jnum(w, "zero_stage"));
    addf(&a, "--split=%s", jget(w, "split")->valuestring);
    add(&a, cJSON_IsTrue(jget(w, "causal")) ? "--causal" : "--no-causal");
    add(&a, cJSON_IsTrue(jget(w, "flash")) ? "--flash" : "--no-flash");
    addf(&a, "--strategy=%s", jget(h, "plan.strategy")->valuestring);
    if (jnum(l, "ulysses") > 1) addf(&a, "--ulysses=%.0f", jnum(l, "ulysses"));
    if (jnum(l, "ring") > 1) addf(&a, "--ring=%.0f", jnum(l, "ring"));
    if (jnum(l, "tp") > 1) addf(&a, "--tp=%.0f", jnum(l, "tp"));
    t->plan_json = run_json(&a);
    args_free(&a);
    if (!t->plan_json || !cJSON_IsArray(jget(t->plan_json, "operations.ops")))
        return fail("%s: the plan command for its configuration gave no operations", path);
    return 0;
}

static void trace_free(trace *t)
{
    cJSON_Delete(t->header);
    for (int i = 0; i < 80; i++) cJSON_Delete(t->ops[i]);
    cJSON_Delete(t->plan_json);
    free(t->path);
}

static int check_traces(const csv *c, trace *tr, int ntr, int timeline)
{
    static const char *const need[] = {"trace", "strategy", "op_id", "op", "kind", "time_is", "predicted_s",
                                       "measured_s", NULL};
    if (need_cols(c, need)) return 1;
    int rows_per[16] = {0};
    for (int r = 0; r < c->nrows; r++) {
        int k = -1;
        for (int i = 0; i < ntr; i++) {
            const char *base = strrchr(tr[i].path, '/') ? strrchr(tr[i].path, '/') + 1 : tr[i].path;
            if (strcmp(base, cell(c, r, "trace")) == 0) k = i;
        }
        if (k < 0) return fail("row %d names trace %s, not one given", r + 1, cell(c, r, "trace"));
        rows_per[k]++;
        int id = (int)num(c, r, "op_id");
        const cJSON *op = id >= 0 && id < 80 ? tr[k].ops[id] : NULL;
        if (!op) return fail("row %d: op %d is not in %s", r + 1, id, tr[k].path);
        double med = jnum(op, "time_s.median");
        if (!close_rel(med, num(c, r, "measured_s"), 1e-9) || strcmp(jget(op, "name")->valuestring, cell(c, r, "op")) != 0)
            return fail("row %d (%s): measured %s, the trace says %.10g", r + 1, cell(c, r, "op"), cell(c, r, "measured_s"), med);
        const cJSON *pop = cJSON_GetArrayItem(jget(tr[k].plan_json, "operations.ops"), id);
        int exposed = strcmp(cell(c, r, "time_is"), "exposed") == 0;
        double pred = jnum(pop, exposed ? "exposed_s" : "time_s");
        if (!pop || !close_rel(pred, num(c, r, "predicted_s"), 1e-8))
            return fail("row %d (%s op %d %s): predicted %s, `ulysim --format json` operations[%d].%s = %.10g", r + 1,
                        cell(c, r, "trace"), id, cell(c, r, "op"), cell(c, r, "predicted_s"), id,
                        exposed ? "exposed_s" : "time_s", pred);
        if (timeline) {
            int ord = (int)num(c, r, "order");
            if (ord < 0 || ord >= tr[k].n_order || tr[k].order[ord] != id)
                return fail("row %d: op %d is at position %d; the trace ran it elsewhere", r + 1, id, ord);
        }
    }
    if (timeline) {
        /* starts: the running sums, in execution order */
        double ps = 0, ms = 0;
        for (int r = 0; r < c->nrows; r++) {
            if (!close_rel(num(c, r, "predicted_start_s"), ps, 1e-8) || !close_rel(num(c, r, "measured_start_s"), ms, 1e-8))
                return fail("row %d: starts %s / %s, expected %.10g / %.10g", r + 1, cell(c, r, "predicted_start_s"),
                            cell(c, r, "measured_start_s"), ps, ms);
            if (num(c, r, "predicted_s") > 0) ps += num(c, r, "predicted_s");
            if (num(c, r, "measured_s") > 0) ms += num(c, r, "measured_s");
        }
        if (c->nrows != tr[0].n_order) return fail("%d rows for %d ops", c->nrows, tr[0].n_order);
    }
    for (int i = 0; i < ntr; i++)
        if (!rows_per[i]) return fail("no rows for trace %s", tr[i].path);
    printf("  %d rows: measured = the traces' op lines, predicted = `ulysim --format json` operations for the trace's configuration\n",
           c->nrows);
    return 0;
}

/* --------------------------------------------------------------- modes */

static int mode_render(int argc, char **argv)
{
    if (argc < 6) return fail("usage: plot_check render ULYSIM OUTDIR FIGURE FMT [ARGS...]");
    const char *ulysim = argv[2], *outdir = argv[3], *figure = argv[4], *fmt = argv[5];
    char img[1100], csvp[1100];
    snprintf(img, sizeof img, "%s/%s.%s", outdir, figure, fmt);
    snprintf(csvp, sizeof csvp, "%s/%s.csv", outdir, figure);
    mkdirs(outdir);
    unlink(img);
    unlink(csvp);
    figargs fa = {0};
    fa.exhaustive = strcmp(fmt, "png") == 0; /* the SVG and PDF variants hold the same CSV */
    char *traces[16];
    int ntr = 0;
    args a = {0};
    add(&a, ulysim);
    add(&a, "plot");
    add(&a, figure);
    for (int i = 6; i < argc; i++) {
        add(&a, argv[i]);
        if (i + 1 < argc && strcmp(argv[i], "--model") == 0) fa.model = argv[i + 1];
        if (i + 1 < argc && strcmp(argv[i], "--cluster") == 0) fa.cluster = argv[i + 1];
        if (i + 1 < argc && strcmp(argv[i], "--seq") == 0) fa.seq = argv[i + 1];
        if (i + 1 < argc && strcmp(argv[i], "--strategy") == 0) fa.strategy = argv[i + 1];
        static const char *const workload[] = {"--framework", "--tensor-model-parallel-size", "--attn-kernel",
                                               "--zero", "--dtype", "--recompute"};
        for (size_t k = 0; k < sizeof workload / sizeof workload[0]; k++)
            if (i + 1 < argc && strcmp(argv[i], workload[k]) == 0 && fa.n_extra + 2 <= 16) {
                fa.extra[fa.n_extra++] = argv[i];
                fa.extra[fa.n_extra++] = argv[i + 1];
            }
        if (i + 1 < argc && strcmp(argv[i], "--spread") == 0) {
            fa.spread_best = strcmp(argv[i + 1], "best") == 0;
            fa.spread_all = strcmp(argv[i + 1], "all") == 0;
        }
        size_t l = strlen(argv[i]);
        if (argv[i][0] != '-' && l > 6 && strcmp(argv[i] + l - 6, ".trace") == 0 && ntr < 16) traces[ntr++] = argv[i];
    }
    add(&a, "-o");
    add(&a, img);
    out o;
    if (run(a.v, &o) != 0) return fail("cannot run %s", ulysim);
    args_free(&a);
    if (o.rc != 0) {
        int r = fail("ulysim plot %s exited %d: %s", figure, o.rc, o.err);
        out_free(&o);
        return r;
    }
    out_free(&o);
    if (check_image(img, fmt, figure)) return 1;
    csv c;
    if (csv_load(csvp, &c, figure)) return 1;
    printf("%s: %s is a %s figure, %s has %d columns x %d rows\n", g_test, img, fmt, csvp, c.ncols, c.nrows);
    int rc;
    if (strcmp(figure, "comm-volume") == 0) rc = check_comm_volume(ulysim, &c, &fa);
    else if (strcmp(figure, "throughput") == 0) rc = check_throughput(ulysim, &c, &fa);
    else if (strcmp(figure, "max-seq") == 0) rc = check_max_seq(ulysim, &c, &fa);
    else if (strcmp(figure, "max-batch") == 0) rc = check_max_batch(ulysim, &c, &fa);
    else if (strcmp(figure, "memory") == 0) rc = check_memory(ulysim, &c, &fa);
    else if (strcmp(figure, "breakdown") == 0) rc = check_breakdown(ulysim, &c, &fa);
    else if (strcmp(figure, "validation") == 0 || strcmp(figure, "timeline") == 0) {
        trace tr[16];
        rc = 0;
        for (int i = 0; i < ntr && !rc; i++) rc = trace_read(traces[i], &tr[i], ulysim, outdir);
        if (!rc) rc = check_traces(&c, tr, ntr, strcmp(figure, "timeline") == 0);
        for (int i = 0; i < ntr; i++) trace_free(&tr[i]);
    } else rc = fail("no check for figure %s", figure);
    if (!rc && strcmp(figure, "timeline") != 0) rc = check_strategy_cols(ulysim, &c, &fa);
    if (!rc && strcmp(fmt, "svg") == 0) rc = look_figure(img, figure, &c); /* plot_look.c */
    csv_free(&c);
    return rc;
}

static int mode_nognuplot(int argc, char **argv)
{
    if (argc < 4) return fail("usage: plot_check nognuplot ULYSIM OUTDIR");
    char img[1100], csvp[1100];
    mkdirs(argv[3]);
    snprintf(img, sizeof img, "%s/nognuplot.png", argv[3]);
    snprintf(csvp, sizeof csvp, "%s/nognuplot.csv", argv[3]);
    unlink(img);
    unlink(csvp);
    setenv("GNUPLOT", "/nonexistent/gnuplot", 1);
    args a = {0};
    add(&a, argv[2]);
    add(&a, "plot");
    add(&a, "throughput");
    add(&a, "--seq=16K..64K");
    add(&a, "-o");
    add(&a, img);
    out o;
    run(a.v, &o);
    args_free(&a);
    int rc = 0;
    if (o.rc != 1) rc = fail("exit %d without gnuplot, expected 1", o.rc);
    else if (!strstr(o.err, "gnuplot") || !strstr(o.err, csvp)) rc = fail("the message names neither gnuplot nor the CSV: %s", o.err);
    else if (access(csvp, F_OK) != 0) rc = fail("the CSV %s was not kept", csvp);
    else if (access(img, F_OK) == 0) rc = fail("an image %s was left", img);
    if (!rc) printf("%s: exit 1, CSV kept, no image; stderr: %s", g_test, o.err);
    out_free(&o);
    return rc;
}

static int mode_fail(int argc, char **argv)
{
    if (argc < 4) return fail("usage: plot_check fail SUBSTR ULYSIM ARGS...");
    args a = {0};
    for (int i = 3; i < argc; i++) add(&a, argv[i]);
    out o;
    run(a.v, &o);
    args_free(&a);
    int rc = 0, lines = 0;
    for (const char *p = o.err; *p; p++) lines += *p == '\n';
    if (o.rc != 2) rc = fail("exit %d, expected 2; stderr: %s", o.rc, o.err);
    else if (lines != 1) rc = fail("%d lines on stderr, expected one: %s", lines, o.err);
    else if (!strstr(o.err, argv[2])) rc = fail("stderr lacks '%s': %s", argv[2], o.err);
    if (!rc) printf("%s: exit 2: %s", g_test, o.err);
    out_free(&o);
    return rc;
}

static int mode_byhand(int argc, char **argv)
{
    if (argc < 5) return fail("usage: plot_check byhand ULYSIM OUTDIR SCRIPTS [TRACE]");
    const char *ulysim = argv[2], *outdir = argv[3], *scripts = argv[4];
    static const char *const figs[] = {"comm-volume", "throughput", "max-seq", "max-batch", "memory", "breakdown",
                                       "validation", "timeline"};
    mkdirs(outdir);
    for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
        char csvp[1100], png[1100], pdf[1100], vars[3000];
        snprintf(png, sizeof png, "%s/hand-%s.png", outdir, figs[i]);
        snprintf(csvp, sizeof csvp, "%s/hand-%s.csv", outdir, figs[i]);
        snprintf(pdf, sizeof pdf, "%s/hand-%s.pdf", outdir, figs[i]);
        int trace_fig = strcmp(figs[i], "validation") == 0 || strcmp(figs[i], "timeline") == 0;
        if (trace_fig && argc < 6) continue;
        args a = {0};
        add(&a, ulysim);
        add(&a, "plot");
        add(&a, figs[i]);
        if (trace_fig) add(&a, argv[5]);
        else if (strcmp(figs[i], "throughput") == 0) add(&a, "--seq=16K..256K");
        else if (strcmp(figs[i], "comm-volume") == 0 || strcmp(figs[i], "max-seq") == 0 || strcmp(figs[i], "max-batch") == 0)
            add(&a, "--gpus=8..64");
        add(&a, "--data-only");
        add(&a, "-o");
        add(&a, png);
        out o;
        run(a.v, &o);
        args_free(&a);
        if (o.rc != 0) {
            int r = fail("%s --data-only exited %d: %s", figs[i], o.rc, o.err);
            out_free(&o);
            return r;
        }
        out_free(&o);
        if (access(png, F_OK) == 0) return fail("--data-only wrote an image %s", png);
        /* gnuplot by hand: only data and out, as the scripts' headers say */
        unlink(pdf);
        snprintf(vars, sizeof vars, "data='%s'; out='%s'", csvp, pdf);
        char script[1100];
        snprintf(script, sizeof script, "%s/%s.gp", scripts, figs[i]);
        args g = {0};
        add(&g, getenv("GNUPLOT") && getenv("GNUPLOT")[0] ? getenv("GNUPLOT") : "gnuplot");
        add(&g, "-e");
        add(&g, vars);
        add(&g, script);
        run(g.v, &o);
        args_free(&g);
        if (o.rc != 0) {
            int r = fail("gnuplot %s by hand exited %d: %s", script, o.rc, o.err);
            out_free(&o);
            return r;
        }
        out_free(&o);
        if (check_image(pdf, "pdf", figs[i])) return 1;
        printf("%s: gnuplot -e \"data=...; out=...\" %s: %s\n", g_test, script, pdf);
    }
    return 0;
}

static int mode_help(int argc, char **argv)
{
    if (argc < 3) return fail("usage: plot_check help ULYSIM");
    static const char *const figs[] = {"comm-volume", "throughput", "max-seq", "max-batch", "memory", "breakdown",
                                       "validation", "timeline", "--spread", "--scripts", "--no-title"};
    args a = {0};
    add(&a, argv[2]);
    add(&a, "plot");
    add(&a, "--help");
    out o;
    run(a.v, &o);
    args_free(&a);
    int rc = o.rc != 0 ? fail("ulysim plot --help exited %d", o.rc) : 0;
    for (size_t i = 0; !rc && i < sizeof figs / sizeof figs[0]; i++)
        if (!strstr(o.out, figs[i])) rc = fail("ulysim plot --help does not mention %s", figs[i]);
    out_free(&o);
    if (rc) return rc;
    add(&a, argv[2]);
    add(&a, "--help");
    run(a.v, &o);
    args_free(&a);
    if (o.rc != 0 || !strstr(o.out, "  plot ")) rc = fail("ulysim --help does not list plot");
    out_free(&o);
    if (!rc) printf("%s: help names every figure and option; ulysim --help lists plot\n", g_test);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) return fail("usage: plot_check render|nognuplot|fail|byhand|help|look ...");
    const char *t = getenv("PLOT_CHECK_NAME");
    if (t) g_test = t;
    if (strcmp(argv[1], "render") == 0) return mode_render(argc, argv);
    if (strcmp(argv[1], "nognuplot") == 0) return mode_nognuplot(argc, argv);
    if (strcmp(argv[1], "fail") == 0) return mode_fail(argc, argv);
    if (strcmp(argv[1], "byhand") == 0) return mode_byhand(argc, argv);
    if (strcmp(argv[1], "help") == 0) return mode_help(argc, argv);
    if (strcmp(argv[1], "look") == 0) return mode_look(argc, argv);
    return fail("unknown mode %s", argv[1]);
}
