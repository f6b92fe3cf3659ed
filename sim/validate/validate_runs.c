/* validate_runs.c: the rows of a runs file priced as the plan command prices
 * its flags (validate_runs.h). A configuration column NAME is the flag
 * --NAME: each row becomes an argument vector for the plan command's own
 * parser (args.c) and context (context.c), so every flag, present or future,
 * is a column without being listed here; the row's strategy is priced at the
 * best layout of the pins given (sim_best, as plan does). */
#include "validate_runs.h"
#include "text_file.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "output.h"
#include "runs_read.h"

const char *const vr_quantity_names[VR_Q_COUNT] = {"step_s", "tokens_per_s", "tflops_per_gpu", "mem_gib"};

/* Measured columns in another unit, for tables transcribed as printed: the
 * cell over `per` is the quantity (a division, so that 32432.1333 ms is the
 * same double as the paper's number divided by 1000). */
static const struct {
    const char *name;
    int q;
    double per;
    const char *unit, *example;
} UNIT_COLS[] = {{"step_ms", VR_STEP, 1e3, "milliseconds per step", "1420"}};
#define N_UNIT ((int)(sizeof UNIT_COLS / sizeof UNIT_COLS[0]))

/* Columns that describe a row without configuring it. */
static const char *const META_COLS[] = {"label", "source", "group", "flop_convention", "oom"};
#define N_META ((int)(sizeof META_COLS / sizeof META_COLS[0]))

/* What a configuration column is, asked of the parser itself. */
enum { COL_VALUED = 0, COL_BOOL, COL_BOOL_NEG, COL_UNKNOWN, COL_QUANTITY, COL_META };


/* The parser's answer to argv {"ulysim", flag}: 0 accepted, 2 refused. */
static int probe(const char *flag, sim_args *a, char *why, size_t n)
{
    char *argv[] = {"ulysim", (char *)flag, NULL};
    return sim_args_parse(2, argv, a, why, n);
}

/* A column of the file: a measured quantity, a description, or a flag of the
 * command: boolean (with or without a --no- form) or taking a value. */
static int col_kind(const char *name, sim_args *a)
{
    for (int q = 0; q < VR_Q_COUNT; q++)
        if (!strcmp(name, vr_quantity_names[q])) return COL_QUANTITY;
    for (int k = 0; k < N_UNIT; k++)
        if (!strcmp(name, UNIT_COLS[k].name)) return COL_QUANTITY;
    for (int k = 0; k < N_META; k++)
        if (!strcmp(name, META_COLS[k])) return COL_META;
    /* what the planning command prints, not what it plans */
    if (!strcmp(name, "help") || !strcmp(name, "version") || !strcmp(name, "format") || !strcmp(name, "progress") ||
        !name[0] || name[0] == '-')
        return COL_UNKNOWN;
    char flag[96], why[512];
    snprintf(flag, sizeof flag, "--%s", name);
    if (probe(flag, a, why, sizeof why) == 0) {
        snprintf(flag, sizeof flag, "--no-%s", name);
        return probe(flag, a, why, sizeof why) == 0 ? COL_BOOL_NEG : COL_BOOL;
    }
    /* a flag taking a value is refused alone for want of it; an unknown one
     * for being unknown; a switch that needs another flag beside it (FP8's
     * need --dtype fp8, an uneven split a pipeline) for that, and says it
     * takes no value when given one */
    if (strncmp(why, "unknown option", 14) == 0) return COL_UNKNOWN;
    snprintf(flag, sizeof flag, "--%s=1", name);
    if (probe(flag, a, why, sizeof why) != 0 && strstr(why, " takes no value")) {
        snprintf(flag, sizeof flag, "--no-%s=1", name);
        return probe(flag, a, why, sizeof why) != 0 && strstr(why, " takes no value") ? COL_BOOL_NEG : COL_BOOL;
    }
    return COL_VALUED;
}

/* A model or cluster cell: an inline shape or a preset name as it is, a path
 * relative to the runs file's directory. */
static void resolve_file_cell(const char *runs_path, const char *v, char *out, size_t n)
{
    const char *slash = strrchr(runs_path, '/');
    const size_t l = strlen(v);
    const int is_path = !strchr(v, '=') && (strchr(v, '/') || (l > 5 && !strcmp(v + l - 5, ".json")));
    if (!is_path || v[0] == '/' || !slash) snprintf(out, n, "%s", v);
    else snprintf(out, n, "%.*s/%s", (int)(slash - runs_path), runs_path, v);
}

/* A measured quantity's valid range (runs_read.h says why the floors), its
 * unit and an example, for the messages. */
static const struct {
    double lo;
    const char *unit, *example;
} Q_RANGE[VR_Q_COUNT] = {[VR_STEP] = {RUNS_MIN_STEP_S, "seconds per step", "1.42"},
                         [VR_TOKENS] = {RUNS_MIN_TOKENS_PER_S, "tokens per second", "11500"},
                         [VR_TFLOPS] = {RUNS_MIN_TFLOPS, "TFLOP/s per GPU", "135.2"},
                         [VR_MEM] = {RUNS_MIN_MEM_GIB, "GiB per GPU", "61.5"}};

/* A measured cell: a decimal number, the whole cell (strtod alone reads
 * "0x10" as 16 and " 2.5" as 2.5, and a prefix of "2.5x"), in
 * [lo, RUNS_MAX_VALUE] once divided by per. 0; else what is wrong, in
 * words, for the message. */
static const char *parse_measured(const char *v, double lo, double per, double *out)
{
    char *end = NULL;
    const double x = sim_strtod_dec(v, &end);
    if (!v[0] || end == v || *end || isnan(x)) return "not a decimal number";
    if (!(x > 0)) return "not a positive number";
    if (!(x / per >= lo && x / per <= RUNS_MAX_VALUE)) return "out of range";
    *out = x;
    return NULL;
}

static int parse_bool_cell(const char *v, int *out)
{
    if (!strcmp(v, "true")) *out = 1;
    else if (!strcmp(v, "false")) *out = 0;
    else return 2;
    return 0;
}

/* Where a row's fault is told: vr_load names the file, the line and the
 * row; vr_check_row (bare) hands the message alone and the column at fault
 * to its caller, who knows where the row's values came from. */
typedef struct row_at {
    const char *path; /* the runs file: its messages, and where its model and cluster files are */
    int line, row;    /* the row's line and number (from 1) */
    int bare;
    int col;          /* out: the column at fault, -1 the row as a whole */
} row_at;

static int row_fail(char *why, size_t n, row_at *at, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int row_fail(char *why, size_t n, row_at *at, int col, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    at->col = col;
    if (at->bare) {
        snprintf(why, n, "%s", msg);
        return SIM_EXIT_USAGE;
    }
    return text_fail_at(why, n, at->path, at->line, "row %d: %s", at->row, msg);
}

/* The row's measured columns and description into r. */
static int row_measured(const runs_table *t, int i, row_at *at, vr_row *r, char *why, size_t n)
{
    char **cell = t->cells[i];
    char qb[80];
    const char *bad;
    for (int q = 0; q < VR_Q_COUNT; q++) {
        r->meas[q] = r->pred[q] = NAN;
        int c = runs_col(t, vr_quantity_names[q]);
        if (c >= 0 && cell[c][0] && (bad = parse_measured(cell[c], Q_RANGE[q].lo, 1, &r->meas[q])))
            return row_fail(why, n, at, c, "%s %s: %s (valid: %s in [%g, %g], e.g. %s)", vr_quantity_names[q],
                            text_quote(cell[c], qb, sizeof qb), bad, Q_RANGE[q].unit, Q_RANGE[q].lo, RUNS_MAX_VALUE,
                            Q_RANGE[q].example);
    }
    for (int k = 0; k < N_UNIT; k++) {
        const int c = runs_col(t, UNIT_COLS[k].name), q = UNIT_COLS[k].q;
        if (c < 0 || !cell[c][0]) continue;
        if (!isnan(r->meas[q]))
            return row_fail(why, n, at, c, "%s and %s both given (valid: one of them)",
                            vr_quantity_names[q], UNIT_COLS[k].name);
        const double per = UNIT_COLS[k].per;
        if ((bad = parse_measured(cell[c], Q_RANGE[q].lo, per, &r->meas[q])))
            return row_fail(why, n, at, c, "%s %s: %s (valid: %s in [%g, %g], e.g. %s)", UNIT_COLS[k].name,
                            text_quote(cell[c], qb, sizeof qb), bad, UNIT_COLS[k].unit, Q_RANGE[q].lo * per,
                            RUNS_MAX_VALUE * per, UNIT_COLS[k].example);
        r->meas[q] /= per;
    }
    r->oom_meas = -1;
    int c = runs_col(t, "oom");
    if (c >= 0 && cell[c][0] && parse_bool_cell(cell[c], &r->oom_meas))
        return row_fail(why, n, at, c, "oom %s: not a boolean (valid: true, false or empty)",
                        text_quote(cell[c], qb, sizeof qb));
    r->flop_conv = -1;
    c = runs_col(t, "flop_convention");
    if (c >= 0 && cell[c][0]) {
        r->flop_conv = uly_flop_conv_find(cell[c]);
        if (r->flop_conv < 0) {
            char valid[160] = "";
            for (int k = 0; k < ULY_FLOP_CONV_COUNT; k++) sim_join(valid, sizeof valid, ", ", uly_flop_conv_name(k));
            return row_fail(why, n, at, c, "flop_convention %s: unknown (valid: %s)",
                            text_quote(cell[c], qb, sizeof qb), valid);
        }
    }
    if (!isnan(r->meas[VR_TFLOPS]) && r->flop_conv < 0)
        return row_fail(why, n, at, runs_col(t, "tflops_per_gpu"), "tflops_per_gpu needs its flop_convention (valid: "
                        "megatron-lm, narayanan, palm, ulysim; docs/runs.md, \"FLOP conventions\")");
    const struct { const char *name; char *dst; size_t len; } text[] = {
        {"label", r->label, sizeof r->label}, {"source", r->source, sizeof r->source}, {"group", r->group, sizeof r->group}};
    for (size_t k = 0; k < sizeof text / sizeof text[0]; k++) {
        c = runs_col(t, text[k].name);
        snprintf(text[k].dst, text[k].len, "%s", c >= 0 ? cell[c] : "");
    }
    return 0;
}

/* The row's argument vector: one --NAME=VALUE per non-empty configuration
 * cell, --NAME / --no-NAME for a boolean, and in argcol the column of each
 * (-1: the caller's cluster). Strings go into store. */
static int row_argv(const runs_table *t, int i, const int *kind, row_at *at, const char *cluster, char **argv,
                    int *argcol, int *argc, char *store, size_t store_len, char *why, size_t n)
{
    char qb[80], v[1100];
    size_t used = 0;
    *argc = 0;
    argv[(*argc)++] = "ulysim";
    for (int c = 0; c <= t->n_cols; c++) {
        /* the caller's cluster, after the row's flags, in place of the row's */
        const int extra = c == t->n_cols;
        if (extra && !cluster) break;
        const char *cell = extra ? cluster : t->cells[i][c];
        if (!extra && (kind[c] > COL_BOOL_NEG || !cell[0] || (cluster && !strcmp(t->cols[c], "cluster")))) continue;
        char *arg = store + used;
        int w;
        if (extra) {
            w = snprintf(arg, store_len - used, "--cluster=%s", cluster);
        } else if (kind[c] == COL_VALUED) {
            const int file = !strcmp(t->cols[c], "model") || !strcmp(t->cols[c], "cluster");
            if (file) resolve_file_cell(at->path, cell, v, sizeof v);
            else snprintf(v, sizeof v, "%s", cell);
            w = snprintf(arg, store_len - used, "--%s=%s", t->cols[c], v);
        } else {
            int b;
            if (parse_bool_cell(cell, &b))
                return row_fail(why, n, at, c, "%s %s: a switch (valid: true, false or empty)",
                                t->cols[c], text_quote(cell, qb, sizeof qb));
            if (!b && kind[c] == COL_BOOL) continue; /* a switch without a --no- form: off is its default */
            w = snprintf(arg, store_len - used, "--%s%s", b ? "" : "no-", t->cols[c]);
        }
        if (w < 0 || (size_t)w + 1 >= store_len - used)
            return row_fail(why, n, at, extra ? -1 : c, "too long");
        used += (size_t)w + 1;
        argcol[*argc] = extra ? -1 : c;
        argv[(*argc)++] = arg;
    }
    argv[*argc] = NULL;
    return 0;
}

/* Prices a row as plan prices its flags: the best layout of its strategy. */
static int price_best(const sim_ctx *c, vr_row *r, char *why, size_t n)
{
    sim_summary *s = malloc(sizeof *s);
    if (!s) return sim_fail(why, n, "out of memory");
    sim_best(c, c->strat[0], r->gpus, r->seq, s);
    r->priced = sim_has_numbers(s);
    r->note[0] = 0;
    if (s->status == SIM_ROW_ERROR) {
        snprintf(why, n, "%s", s->note);
        free(s);
        return SIM_EXIT_INTERNAL;
    }
    r->best = s->layout;
    r->micro_batch = s->micro_batch;
    r->feasible = r->priced && s->feasible;
    if (r->priced) {
        char d[64];
        sim_degrees_str(&s->layout, d, sizeof d);
        snprintf(r->layout, sizeof r->layout, "%s mb%lld%s", d, (long long)s->micro_batch, "");
        const uly_timing *tm = &s->time;
        uly_workload w = c->w;
        w.seq = r->seq;
        const double seqs = w.global_batch > 0 ? (double)w.global_batch : (double)s->micro_batch * (double)s->layout.dp;
        r->pred[VR_STEP] = tm->step_s;
        r->pred[VR_TOKENS] = tm->tokens_per_s;
        r->pred[VR_MEM] = s->mem.total_bytes / 1073741824.0;
        r->pred[VR_TFLOPS] =
            r->flop_conv >= 0 ? uly_flops_step(r->flop_conv, &c->model, &w, seqs) / tm->step_s / (double)r->gpus / 1e12
                              : NAN;
        r->oom_pred = !s->mem.fits;
        if (!s->feasible) sim_reasons_str(c, s, 1, r->note, sizeof r->note);
    } else {
        snprintf(r->layout, sizeof r->layout, "-");
        sim_reasons_str(c, s, 1, r->note, sizeof r->note);
        if (!r->note[0]) snprintf(r->note, sizeof r->note, "%s", s->note);
        r->oom_pred = 0;
    }
    free(s);
    return 0;
}

/* Row i's flags through the plan command's parser and context into a and c,
 * its strategy, gpus and seq into r: what a row must pass before it is
 * priced. A flag the parser refuses is blamed on the first cell it refuses
 * alone; one that passes alone is refused with others (the row). */
static int row_resolve(const runs_table *t, int i, const int *kind, row_at *at, const vr_opts *o, vr_row *r,
                       sim_args *a, sim_ctx *c, char *why, size_t n)
{
    char *argv[RUNS_MAX_COLS + 3], store[16384], msg[768], alone[8];
    int argcol[RUNS_MAX_COLS + 3], argc, rc;
    if ((rc = row_argv(t, i, kind, at, o->cluster, argv, argcol, &argc, store, sizeof store, why, n)) != 0) return rc;
    if ((rc = sim_args_parse(argc, argv, a, msg, sizeof msg)) != 0) {
        if (rc != SIM_EXIT_USAGE) return snprintf(why, n, "%s", msg), rc;
        int col = -1;
        for (int k = 1; k < argc && col < 0; k++)
            if (probe(argv[k], a, alone, sizeof alone)) col = argcol[k];
        return row_fail(why, n, at, col, "%s", msg);
    }
    if ((rc = sim_ctx_resolve(a, c, msg, sizeof msg)) != 0)
        return rc == SIM_EXIT_USAGE ? row_fail(why, n, at, -1, "%s", msg) : (snprintf(why, n, "%s", msg), rc);
    if (!c->strat_explicit || c->n_strat != 1)
        return row_fail(why, n, at, runs_col(t, "strategy"), "which strategy? (valid: a strategy column naming one, "
                        "e.g. ulysses; see ulysim --help)");
    r->strategy = uly_strategy_get(c->strat[0]);
    r->gpus = c->gpus[0];
    r->seq = c->seq[0];
    snprintf(r->cluster, sizeof r->cluster, "%s", c->cluster.name);
    return 0;
}

/* Prices row i: row_resolve, then the best layout of the row's one strategy
 * (or o's pricing). */
static int row_price(const runs_table *t, int i, const int *kind, row_at *at, const vr_opts *o, vr_row *r,
                     sim_args *a, sim_ctx *c, char *why, size_t n)
{
    char msg[768];
    int rc = row_resolve(t, i, kind, at, o, r, a, c, why, n);
    if (rc) return rc;
    rc = o->price ? o->price(c, r, o->user, msg, sizeof msg) : price_best(c, r, msg, sizeof msg);
    if (rc == SIM_EXIT_USAGE) return row_fail(why, n, at, -1, "%s", msg);
    if (rc) snprintf(why, n, "row %d: %s", at->row, msg);
    return rc;
}

/* What each column of t is (kind); a column that is neither a flag nor a
 * measured quantity or description, or no strategy column, is refused. */
static int table_kinds(const runs_table *t, const char *path, int *kind, sim_args *a, char *why, size_t n)
{
    for (int k = 0; k < t->n_cols; k++) {
        /* an output flag writes a file when the row is priced: plan's flags
         * minus what they print, or a row would write (or, checked as a
         * path and then dropped, seem to write) a schedule per row */
        char qb[80];
        if (!strcmp(t->cols[k], "timeline"))
            return text_fail_at(why, n, path, 1, "header: column %s is an output flag, not a property of the run "
                                                 "measured (valid: drop the column; ulysim plan --timeline FILE "
                                                 "writes one plan's schedule)",
                                text_quote(t->cols[k], qb, sizeof qb));
        if ((kind[k] = col_kind(t->cols[k], a)) == COL_UNKNOWN) {
            int row = -1;
            for (int i = 0; i < t->n_rows && row < 0; i++)
                if (t->cells[i][k][0]) row = i;
            return text_fail_at(why, n, path, row >= 0 ? t->line[row] : 1,
                         "%s%.0d%s column %s is neither a ulysim flag nor a measured quantity (valid: a long flag "
                         "without its dashes, e.g. gpus, seq, strategy, tp, recompute; step_s, tokens_per_s, "
                         "tflops_per_gpu with flop_convention, mem_gib, oom; label, source, group)",
                         row >= 0 ? "row " : "header:", row >= 0 ? row + 1 : 0, row >= 0 ? ":" : "",
                         text_quote(t->cols[k], qb, sizeof qb));
        }
    }
    if (runs_col(t, "strategy") < 0)
        return text_fail_at(why, n, path, 1, "no strategy column (valid: one strategy per row, e.g. ulysses)");
    return 0;
}

int vr_check_row(const runs_table *t, int i, const char *path, int *col, char *why, size_t n)
{
    static const vr_opts none = {0};
    int kind[RUNS_MAX_COLS];
    row_at at = {path, t->line[i], i + 1, 1, -1};
    sim_args *a = malloc(sizeof *a);
    sim_ctx *c = malloc(sizeof *c);
    vr_row *r = calloc(1, sizeof *r);
    int rc = 0;
    if (!a || !c || !r) {
        sim_fail(why, n, "out of memory");
        rc = SIM_EXIT_INTERNAL;
    }
    if (!rc) rc = table_kinds(t, path, kind, a, why, n);
    if (!rc) rc = row_measured(t, i, &at, r, why, n);
    if (!rc) rc = row_resolve(t, i, kind, &at, &none, r, a, c, why, n);
    *col = at.col;
    free(a);
    free(c);
    free(r);
    return rc;
}

int vr_load(const char *path, vr_set *s, char *why, size_t n) { return vr_load_with(path, NULL, s, why, n); }

int vr_load_with(const char *path, const vr_opts *o, vr_set *s, char *why, size_t n)
{
    static const vr_opts none = {0};
    if (!o) o = &none;
    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path);
    runs_table t;
    int rc = runs_load(path, &t, why, n);
    if (rc) return rc;
    int kind[RUNS_MAX_COLS];
    sim_args *a = malloc(sizeof *a);
    sim_ctx *c = malloc(sizeof *c);
    s->rows = calloc((size_t)(t.n_rows ? t.n_rows : 1), sizeof *s->rows);
    if (!a || !c || !s->rows) {
        sim_fail(why, n, "out of memory");
        rc = SIM_EXIT_INTERNAL;
        goto out;
    }
    rc = table_kinds(&t, path, kind, a, why, n);
    for (int i = 0; i < t.n_rows && !rc; i++) {
        vr_row *r = &s->rows[i];
        row_at at = {path, t.line[i], i + 1, 0, -1};
        r->line = t.line[i];
        if ((rc = row_measured(&t, i, &at, r, why, n)) == 0) rc = row_price(&t, i, kind, &at, o, r, a, c, why, n);
        s->n = i + 1;
    }
    if (!rc && t.n_rows == 0) rc = text_fail_at(why, n, path, 0, "no rows (valid: a header line, then one run per line)");
out:
    runs_free(&t);
    free(a);
    free(c);
    if (rc) vr_free(s);
    return rc;
}

void vr_free(vr_set *s)
{
    free(s->rows);
    s->rows = NULL;
    s->n = 0;
}

double vr_err(const vr_row *r, int q)
{
    if (isnan(r->pred[q]) || isnan(r->meas[q]) || !(r->meas[q] > 0)) return NAN;
    return r->pred[q] / r->meas[q] - 1.0;
}

static int cmp_dbl(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

void vr_stats_of(const vr_set *s, int q, vr_stats *out)
{
    double *v = malloc((size_t)(s->n ? s->n : 1) * sizeof *v);
    int k = 0;
    out->max_abs = 0;
    for (int i = 0; v && i < s->n; i++) {
        const double e = fabs(vr_err(&s->rows[i], q));
        if (isnan(e)) continue;
        v[k++] = e;
        if (e > out->max_abs) out->max_abs = e;
    }
    out->count = k;
    if (k == 0) {
        out->median_abs = out->max_abs = NAN;
    } else {
        qsort(v, (size_t)k, sizeof *v, cmp_dbl);
        out->median_abs = k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
    }
    free(v);
}

void vr_oom_counts(const vr_set *s, int out[4])
{
    out[0] = out[1] = out[2] = out[3] = 0;
    for (int i = 0; i < s->n; i++) {
        const vr_row *r = &s->rows[i];
        if (r->oom_meas < 0 || !r->priced) continue;
        out[r->oom_meas ? (r->oom_pred ? 0 : 1) : (r->oom_pred ? 2 : 3)]++;
    }
}

/* The quantity two rows are ordered by: both measured and predicted. */
static int rank_quantity(const vr_row *x, const vr_row *y)
{
    static const int order[] = {VR_STEP, VR_TOKENS, VR_TFLOPS};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        const int q = order[k];
        if (!isnan(x->meas[q]) && !isnan(y->meas[q]) && !isnan(x->pred[q]) && !isnan(y->pred[q])) return q;
    }
    return -1;
}

/* Equal to 1 part in 1e9: the model's own rounding (a measured tie is two
 * equal numbers). */
static int same_value(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)); }

void vr_rank_counts(const vr_set *s, int *pairs, int *agree, int *ties)
{
    *pairs = *agree = *ties = 0;
    for (int i = 0; i < s->n; i++)
        for (int j = i + 1; j < s->n; j++) {
            const vr_row *x = &s->rows[i], *y = &s->rows[j];
            if (!x->group[0] || strcmp(x->group, y->group) || x->oom_meas == 1 || y->oom_meas == 1) continue;
            const int q = rank_quantity(x, y);
            if (q < 0) continue;
            /* a tie, measured or predicted, orders nothing: neither an
             * agreement nor a disagreement, not a pair to rank */
            if (same_value(x->meas[q], y->meas[q]) || same_value(x->pred[q], y->pred[q])) {
                (*ties)++;
                continue;
            }
            (*pairs)++;
            /* the same direction in either quantity: a longer step is a lower rate */
            if ((x->meas[q] > y->meas[q]) == (x->pred[q] > y->pred[q])) (*agree)++;
        }
}
