/* cmd_limits.c: `ulysim max-seq` and `ulysim min-gpus`, one row per
 * strategy with the limit it reaches under a bound: the longest sequence on
 * --gpus (uly_search_max_seq, up to --seq or 1G tokens), or the fewest GPUs
 * that fit --seq (uly_search_min_gpus, up to --gpus or the cluster's GPUs).
 * The driver (driver.h) shares the rows across MPI ranks; the result is the
 * rows and the strategy that reaches furthest, written as a table, JSON or
 * CSV. */
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "output.h"

typedef struct sim_limits {
    const sim_summary *row;
    int n;
    sim_rows_kind kind; /* SIM_ROWS_MAXSEQ or SIM_ROWS_MINGPUS */
    int64_t bound;      /* the longest sequence, or the most GPUs, searched */
    int rec;            /* the row that reaches furthest (ties: more tokens/s), or -1 */
} sim_limits;

static size_t count(const sim_ctx *c) { return (size_t)c->n_strat; }

/* The search stops at the bound, not at memory, when the layout's next
 * length (it steps by its plan's granule) is past the bound. */
static int at_bound(const sim_ctx *c, const uly_layout *l, int64_t best, int64_t seq_hi)
{
    uly_plan *p = malloc(sizeof *p);
    uly_reason rs[ULY_MAX_REASONS];
    int nr = 0, at = 0;
    uly_workload w = c->w;
    w.seq = best;
    if (p && uly_plan_build(&c->model, &w, &c->cluster, l, p, rs, &nr) == ULY_OK)
        at = best > seq_hi - (p->seq_granule > 1 ? p->seq_granule : 1);
    free(p);
    return at;
}

/* Strategy i's limit: max-seq on the one GPU count (checked when resolved)
 * up to the sequence bound; min-gpus at the one sequence up to the GPU bound. */
static void compute_limit(const sim_ctx *c, size_t i, sim_summary *out, sim_rows_kind kind)
{
    const int maxseq = kind == SIM_ROWS_MAXSEQ;
    const uly_strategy_id s = c->strat[i];
    const int64_t gpus = c->gpus[0], seq = c->seq[0];
    sim_summary_start(out, s);
    out->gpus = gpus;
    out->seq = seq;
    uly_result *at = calloc(1, sizeof *at);
    int64_t best = 0;
    uly_status st = !at ? ULY_ENOSPACE
                    : maxseq ? uly_search_max_seq(&c->model, &c->w, &c->cluster, gpus, s, &c->opts, seq, &best, at)
                             : uly_search_min_gpus(&c->model, &c->w, &c->cluster, s, &c->opts, gpus, &best, at);
    if (st == ULY_OK && best > 0) {
        out->status = SIM_ROW_OK;
        out->value = best;
        sim_summary_from_result(out, at);
        if (maxseq) out->seq = best, out->at_bound = at_bound(c, &at->layout, best, seq);
        else out->gpus = best;
    } else if (st == ULY_OK || st == ULY_EINVAL || st == ULY_EOVERFLOW) {
        /* nothing fits: say why on the most GPUs, at the sequence bound or,
         * when max-seq's layouts have valid shapes, at a short sequence
         * every layout divides */
        const int64_t probe = maxseq && st == ULY_OK && gpus <= seq / 2 ? 2 * gpus : seq;
        sim_best(c, s, gpus, probe, out);
        if (st != ULY_OK && out->status == SIM_ROW_OK) out->status = SIM_ROW_NOLAYOUT;
        out->value = 0;
    } else if (!at) {
        out->status = SIM_ROW_ERROR;
        snprintf(out->note, sizeof out->note, "out of memory");
    } else {
        out->status = SIM_ROW_ERROR;
        if (maxseq)
            snprintf(out->note, sizeof out->note, "uly_search_max_seq(%s, %lld GPUs): %s", sim_strategy_name(s),
                     (long long)gpus, uly_status_str(st));
        else
            snprintf(out->note, sizeof out->note, "uly_search_min_gpus(%s, seq %lld): %s", sim_strategy_name(s),
                     (long long)seq, uly_status_str(st));
    }
    free(at);
}

static void compute_maxseq(const sim_ctx *c, size_t i, sim_summary *out, uly_plan *plan, uly_result *res)
{
    (void)plan, (void)res;
    compute_limit(c, i, out, SIM_ROWS_MAXSEQ);
}

static void compute_mingpus(const sim_ctx *c, size_t i, sim_summary *out, uly_plan *plan, uly_result *res)
{
    (void)plan, (void)res;
    compute_limit(c, i, out, SIM_ROWS_MINGPUS);
}

/* The rows and the one that reaches furthest. */
static void limits_sum_up(const sim_rows *rows, sim_rows_kind kind, int64_t bound, sim_limits *out)
{
    const int maxseq = kind == SIM_ROWS_MAXSEQ;
    const sim_summary *r = rows->row;
    out->row = r;
    out->n = (int)rows->n;
    out->kind = kind;
    out->bound = bound;
    out->rec = -1;
    for (int i = 0; i < out->n; i++) {
        if (r[i].value <= 0 || r[i].status != SIM_ROW_OK) continue;
        const int k = out->rec;
        if (k < 0 || (maxseq ? r[i].value > r[k].value : r[i].value < r[k].value) ||
            (r[i].value == r[k].value && r[i].time.tokens_per_s > r[k].time.tokens_per_s))
            out->rec = i;
    }
}

static int sum_up_maxseq(const sim_ctx *c, sim_rows *rows, void *result)
{
    limits_sum_up(rows, SIM_ROWS_MAXSEQ, c->seq[0], result);
    return SIM_EXIT_OK;
}

static int sum_up_mingpus(const sim_ctx *c, sim_rows *rows, void *result)
{
    limits_sum_up(rows, SIM_ROWS_MINGPUS, c->gpus[0], result);
    return SIM_EXIT_OK;
}

static int write_json(const sim_ctx *c, const void *result, FILE *f)
{
    const sim_limits *L = result;
    const int maxseq = L->kind == SIM_ROWS_MAXSEQ;
    int bad = 0;
    cJSON *root = cJSON_CreateObject();
    const char *cmd = maxseq ? "max-seq" : "min-gpus";
    bad |= sim_json_add(root, "command", cJSON_CreateString(cmd));
    cJSON *cfg = sim_json_config(c, cmd);
    if (cfg && maxseq) {
        bad |= sim_json_add(cfg, "gpus", sim_json_int(c->gpus[0]));
        bad |= sim_json_add(cfg, "seq_hi", sim_json_int(L->bound));
    } else if (cfg) {
        bad |= sim_json_add(cfg, "gpus_hi", sim_json_int(L->bound));
    }
    bad |= sim_json_add(root, "config", cfg);
    bad |= sim_json_add(root, "flop_convention", cJSON_CreateString(sim_flop_convention));
    cJSON *plans = cJSON_CreateArray();
    for (int i = 0; i < L->n; i++) {
        cJSON *p = sim_json_plan(c, &L->row[i]);
        if (p) bad |= sim_json_add(p, maxseq ? "max_seq" : "min_gpus",
                                   L->row[i].value > 0 ? sim_json_int(L->row[i].value) : cJSON_CreateNull());
        bad |= sim_json_add(plans, NULL, p);
    }
    bad |= sim_json_add(root, "plans", plans);
    bad |= sim_json_recommended(root, L->row, L->rec);
    return sim_json_emit(root, bad, f);
}

static void table_head(const sim_ctx *c, const sim_limits *L, FILE *f)
{
    char b[64];
    if (L->kind == SIM_ROWS_MAXSEQ) {
        sim_size_str(L->bound, b, sizeof b);
        fprintf(f, "# ulysim %s max-seq: longest sequence each strategy fits: %s on %s, %lld GPU%s (searched up to %s = %lld tokens)\n",
                ULY_VERSION, c->model.name, c->cluster.name, (long long)c->gpus[0], sim_plural_s(c->gpus[0]), b,
                (long long)L->bound);
    } else {
        sim_size_str(c->seq[0], b, sizeof b);
        fprintf(f, "# ulysim %s min-gpus: fewest GPUs on which each strategy fits: %s on %s, sequence %s (%lld tokens), at most %lld GPUs\n",
                ULY_VERSION, c->model.name, c->cluster.name, b, (long long)c->seq[0], (long long)L->bound);
    }
    char grown[200];
    if (sim_cluster_grown(c, grown, sizeof grown)[0]) fprintf(f, "# cluster   %s\n", grown);
    fprintf(f, "# micro-batch %lld, %s, %s, %s, recompute %s, ZeRO-%d; columns as in `ulysim plan`, at the limit found\n",
            (long long)c->w.micro_batch, uly_dtype_name(c->w.dtype), c->w.causal ? "causal" : "non-causal",
            c->w.flash ? "flash" : "no flash", uly_recompute_name(c->w.recompute), c->w.zero_stage);
}

/* Below the rows: why a strategy reaches no limit, and which reaches furthest. */
static void table_notes(const sim_ctx *c, const sim_limits *L, FILE *f)
{
    const int maxseq = L->kind == SIM_ROWS_MAXSEQ;
    for (int i = 0; i < L->n; i++) {
        const sim_summary *s = &L->row[i];
        if (s->value > 0 && s->status == SIM_ROW_OK) {
            if (maxseq && s->at_bound)
                fprintf(f, "#   %s: fits at the upper bound; raise --seq to search further\n", s->strategy->name);
            continue;
        }
        char r[900];
        sim_reasons_str(c, s, 0, r, sizeof r);
        if (!r[0] && s->note[0]) snprintf(r, sizeof r, "%s", s->note);
        char line[1200];
        snprintf(line, sizeof line, "%s: %s%s%s", s->strategy->name,
                 maxseq ? "fits no sequence length" : "fits on no GPU count up to the bound", r[0] ? ": " : "", r);
        sim_print_note(f, "#   ", "#       ", line, 120);
    }
    if (L->rec < 0) return;
    const sim_summary *best = &L->row[L->rec];
    char d[80], b[64];
    sim_degrees_words(&best->layout, d, sizeof d);
    if (maxseq) {
        sim_size_approx(best->value, b, sizeof b);
        fprintf(f, "# longest: %s (%s) at %s tokens\n", best->strategy->name, d, b);
    } else {
        fprintf(f, "# fewest: %s (%s) on %lld GPU%s\n", best->strategy->name, d, (long long)best->value,
                sim_plural_s(best->value));
    }
}

static int write_table(const sim_ctx *c, const void *result, FILE *f)
{
    const sim_limits *L = result;
    table_head(c, L, f);
    if (sim_print_rows(c, L->row, (size_t)L->n, L->kind, NULL, 0, 0, f)) return SIM_EXIT_INTERNAL;
    table_notes(c, L, f);
    return ferror(f) ? SIM_EXIT_INTERNAL : SIM_EXIT_OK;
}

static int write_csv(const sim_ctx *c, const void *result, FILE *f)
{
    const sim_limits *L = result;
    if (sim_print_rows(c, L->row, (size_t)L->n, L->kind, NULL, 0, 0, f)) return SIM_EXIT_INTERNAL;
    return ferror(f) ? SIM_EXIT_INTERNAL : SIM_EXIT_OK;
}

/* --require-fit: no strategy reaches a limit (no length fits, or no GPU count) */
static int after(const sim_ctx *c, const void *result)
{
    const sim_limits *L = result;
    return sim_require_fit(c, L->rec >= 0, L->kind == SIM_ROWS_MAXSEQ ? "no strategy fits any sequence length searched"
                                                                      : "no strategy fits on the GPU counts searched");
}

#define LIMITS_COMMAND(name_, compute_, sum_up_)                                                                       \
    {.name = name_, .count = count, .compute = compute_, .result_size = sizeof(sim_limits), .sum_up = sum_up_,         \
     .write = {write_table, write_json, write_csv}, .after = after}
const sim_planning sim_cmd_maxseq = LIMITS_COMMAND("max-seq", compute_maxseq, sum_up_maxseq);
const sim_planning sim_cmd_mingpus = LIMITS_COMMAND("min-gpus", compute_mingpus, sum_up_mingpus);
