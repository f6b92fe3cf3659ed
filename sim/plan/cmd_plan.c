/* cmd_plan.c: `ulysim [plan]`: the best layout of every strategy on --gpus
 * at --seq, the recommendation and why it wins, and the per-layer operations
 * of the recommendation. The driver (driver.h) shares the rows across MPI
 * ranks; the table's parts are written by plan_table.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan_out.h"
#include "timeline.h"

int sim_plan_usable(const sim_summary *s)
{
    return s->status == SIM_ROW_OK && s->feasible;
}

/* Two strategies that reduce to one layout (usp with u = 1 is the ring). */
static int equivalent(const sim_summary *a, const sim_summary *b)
{
    double ta = a->time.tokens_per_s, tb = b->time.tokens_per_s;
    return a->layout.ulysses == b->layout.ulysses && a->layout.ring == b->layout.ring && a->layout.tp == b->layout.tp &&
           a->layout.dp == b->layout.dp && a->micro_batch == b->micro_batch && fabs(ta - tb) <= 1e-9 * fabs(ta);
}

/* Components of a step, per token, for explaining a difference. */
enum { COMP_COMPUTE, COMP_COMM, COMP_MODEL, COMP_FIXED, COMP_BUBBLE, COMP_COUNT };
static const char *const comp_words[COMP_COUNT] = {
    "less compute on the critical path",
    "less exposed communication",
    "less embedding and logits time",
    "less optimizer and gradient-synchronisation time",
    "less pipeline bubble",
};

static void components(const sim_ctx *c, const sim_summary *s, double out[COMP_COUNT])
{
    /* the slowest pipeline stage's layers over the step's micro-batches;
     * its idle slots (pp - 1 of them) are the bubble */
    (void)c;
    const uly_timing *t = &s->time;
    const double L = (double)t->stage_layers, ms = (double)(t->micro_steps > 0 ? t->micro_steps : 1);
    const double idle = t->slots > ms ? t->slots - ms : 0;
    out[COMP_COMPUTE] = t->compute_s * L * ms;
    out[COMP_COMM] = t->comm_exposed_s * L * ms;
    out[COMP_MODEL] = t->model_s * ms;
    out[COMP_FIXED] = t->step_fixed_s;
    out[COMP_BUBBLE] = idle * (L * (t->layer_fwd_s + t->layer_bwd_s) + t->model_s);
}

static double tokens_per_step(const sim_summary *s)
{
    return s->time.tokens_per_s * s->time.step_s;
}

/* A MoE model's winner and runner-up: their token all-to-alls (dispatch
 * and combine over expert parallelism), which the sequence's own
 * transfers sit beside. */
static void moe_words(const sim_summary *win, const sim_summary *run, char *buf, size_t n)
{
    const int ew = win->layout.ep > 1 ? (int)win->layout.ep : 1, er = run->layout.ep > 1 ? (int)run->layout.ep : 1;
    if (ew == 1 && er == 1) {
        snprintf(buf, n, "; no expert parallelism in either (every rank holds every expert: no token all-to-all)");
        return;
    }
    snprintf(buf, n, "; its MoE layers' token all-to-alls over EP %d send %.0f MiB per layer per rank (the runner-up's "
             "over EP %d: %.0f MiB)", ew, (double)win->moe_bytes / 1048576.0, er, (double)run->moe_bytes / 1048576.0);
}

/* One sentence: why `win` beats `run` (the runner-up). */
static void why_wins(const sim_ctx *c, const sim_summary *win, const sim_summary *run, char *buf, size_t n)
{
    char dw[80], dr[80];
    sim_degrees_words(&win->layout, dw, sizeof dw);
    sim_degrees_words(&run->layout, dr, sizeof dr);
    double ratio = run->time.tokens_per_s > 0 ? win->time.tokens_per_s / run->time.tokens_per_s : INFINITY;
    double cw[COMP_COUNT], cr[COMP_COUNT];
    components(c, win, cw);
    components(c, run, cr);
    double tw = tokens_per_step(win), tr = tokens_per_step(run);
    int same_tokens = tw > 0 && tr > 0 && fabs(tw - tr) <= 1e-9 * tw;
    int best = -1;
    double best_d = 0;
    for (int k = 0; k < COMP_COUNT; k++) {
        double d = (tr > 0 ? cr[k] / tr : 0) - (tw > 0 ? cw[k] / tw : 0);
        if (d > best_d) { best_d = d; best = k; }
    }
    size_t o = (size_t)snprintf(buf, n, "%.2fx the tokens/s of the runner-up, %s (%s)", ratio, run->strategy->name, dr);
    if (o >= n) return;
    if (best < 0) {
        snprintf(buf + o, n - o, "; it does no part of the step in less time per token");
        return;
    }
    if (same_tokens)
        o += (size_t)snprintf(buf + o, n - o, "; mostly %s: %.3g s against %.3g s per step", comp_words[best], cw[best],
                              cr[best]);
    else
        o += (size_t)snprintf(buf + o, n - o, "; mostly %s: %.3g s against %.3g s per 1M tokens", comp_words[best],
                              tw > 0 ? cw[best] / tw * 1048576.0 : 0, tr > 0 ? cr[best] / tr * 1048576.0 : 0);
    if (o < n && c->model.experts > 0) moe_words(win, run, buf + o, n - o);
}

/* The note on the pure all-to-all layout (every GPU in one Ulysses group)
 * when it is not what the search chose. */
static void pure_note(const sim_ctx *c, const sim_summary *pure, const sim_summary *best_u, char *buf, size_t n)
{
    char reasons[600], dw[80];
    int64_t g = pure->gpus;
    const uly_strategy *st = pure->strategy;
    const char *label = st && st->label ? st->label : pure->strategy->name;
    buf[0] = 0;
    if (sim_plan_usable(pure) && sim_plan_usable(best_u) && best_u->layout.ulysses == g) return;
    sim_degrees_words(&best_u->layout, dw, sizeof dw);
    if (!sim_plan_usable(pure)) {
        sim_reasons_str(c, pure, 0, reasons, sizeof reasons);
        if (!reasons[0]) snprintf(reasons, sizeof reasons, "%s", pure->note[0] ? pure->note : "no valid shapes");
        size_t o = (size_t)snprintf(buf, n, "pure %s over all %lld GPUs (u=%lld) is not possible: %s. ", label,
                                    (long long)g, (long long)g, reasons);
        if (o >= n) return;
        if (best_u->status == SIM_ROW_OK && best_u->layout.ulysses == g) {
            snprintf(buf + o, n - o, "No other %s layout does better on %lld GPUs", label, (long long)g);
        } else if (best_u->status == SIM_ROW_OK) {
            char ur[400] = "";
            sim_reasons_str(c, best_u, 0, ur, sizeof ur);
            /* a Ulysses degree of 1 has no all-to-all to speak of */
            char a2a[80] = "no all-to-all (u=1)";
            if (best_u->layout.ulysses > 1)
                snprintf(a2a, sizeof a2a, "all-to-all over %lld GPUs", (long long)best_u->layout.ulysses);
            snprintf(buf + o, n - o, "Instead the best %s layout is %s: %s, data parallel over %lld group%s%s%s%s", label,
                     dw, a2a, (long long)best_u->layout.dp, sim_plural_s(best_u->layout.dp),
                     sim_plan_usable(best_u) ? "" : ", which does not fit either", ur[0] ? "; " : "", ur);
        } else {
            snprintf(buf + o, n - o, "No %s layout has valid shapes on %lld GPUs", label, (long long)g);
        }
    } else if (sim_plan_usable(best_u)) {
        snprintf(buf, n, "pure %s over all %lld GPUs (u=%lld) fits, but %s is faster (%.0f against %.0f tokens/s)",
                 label, (long long)g, (long long)g, dw, best_u->time.tokens_per_s, pure->time.tokens_per_s);
    }
}

/* The strategy plan sets against its pure layout: the first asked for whose
 * sequence degree is the all-to-all (Ulysses) one alone, no ring; its index
 * in c->strat, or -1. */
static int pure_strategy(const sim_ctx *c)
{
    for (int i = 0; i < c->n_strat; i++) {
        const uly_strategy *s = uly_strategy_get(c->strat[i]);
        if (s && s->uses_ulysses && !s->uses_ring) return i;
    }
    return -1;
}

/* The rows: the strategies, then the pure all-to-all layout unless degrees
 * are pinned. */
static int pure_row_of(const sim_ctx *c) { return c->pinned ? -1 : pure_strategy(c); }

static size_t count(const sim_ctx *c)
{
    return (size_t)c->n_strat + (pure_row_of(c) >= 0 ? 1 : 0);
}

/* Row i: a strategy's best layout on the one GPU count (checked when
 * resolved), with its plan and priced result (the recommendation's
 * operations are printed); the last row, every GPU in one all-to-all group. */
static void compute(const sim_ctx *c, size_t i, sim_summary *row, uly_plan *plan, uly_result *res)
{
    const int64_t gpus = c->gpus[0], seq = c->seq[0];
    if (i < (size_t)c->n_strat) {
        sim_best_plan(c, c->strat[i], gpus, seq, row, plan, res);
        return;
    }
    const uly_strategy_id s = c->strat[pure_row_of(c)];
    uly_layout l;
    uly_layout_init(&l, s, gpus, 1, 1, 1);
    sim_summary_start(row, s);
    row->gpus = gpus;
    sim_summary_of_layout(c, &l, seq, row, plan, res);
}

/* The recommendation (most tokens/s of the rows that fit) and the
 * runner-up: the best of the others, leaving out those whose best layout is
 * the recommendation's own (usp with u = 1 is the ring), named in same. */
static void recommend(const sim_summary *rows, int nrows, int *rec, int *run, char *same, size_t same_len)
{
    *rec = *run = -1;
    same[0] = 0;
    for (int i = 0; i < nrows; i++)
        if (sim_plan_usable(&rows[i]) && (*rec < 0 || rows[i].time.tokens_per_s > rows[*rec].time.tokens_per_s))
            *rec = i;
    for (int i = 0; *rec >= 0 && i < nrows; i++) {
        if (i == *rec || !sim_plan_usable(&rows[i])) continue;
        if (equivalent(&rows[i], &rows[*rec])) {
            sim_join(same, same_len, ", ", rows[i].strategy->name);
            continue;
        }
        if (*run < 0 || rows[i].time.tokens_per_s > rows[*run].time.tokens_per_s) *run = i;
    }
}

/* A hybrid (TP inside a context-parallel strategy) set against the same
 * strategy's best layout without TP: what the TP buys, appended to why. */
static void tp_buys(const sim_ctx *c, const sim_summary *win, char *why, size_t n)
{
    const uly_strategy *st = win->strategy;
    if (!st || !(st->uses_ulysses || st->uses_ring)) return;
    sim_ctx c1 = *c;
    c1.opts.pin_tp = 1;
    sim_summary alt;
    sim_best(&c1, st->id, win->gpus, win->seq, &alt);
    size_t l = strlen(why);
    if (!sim_plan_usable(&alt)) {
        snprintf(why + l, n - l, "; without TP inside no %s layout fits", st->name);
        return;
    }
    char wt[600];
    why_wins(c, win, &alt, wt, sizeof wt);
    snprintf(why + l, n - l, "; with TP %lld inside, %s", (long long)win->layout.tp, wt);
    /* "the runner-up" there is the same strategy without TP */
    char *r = strstr(why + l, "the runner-up, ");
    if (r) {
        char rest[600];
        snprintf(rest, sizeof rest, "%s", r + strlen("the runner-up, "));
        snprintf(r, n - (size_t)(r - why), "its best layout without TP, %s", rest);
    }
}

/* Why the recommendation wins, into R->why. */
static void why_text(const sim_ctx *c, sim_plan_result *R, int run, const char *same)
{
    const int nrows = R->nrows;
    char *why = R->why;
    const size_t n = sizeof R->why;
    if (run >= 0) why_wins(c, &R->row[R->rec], &R->row[run], why, n);
    else if (nrows > 1 && !same[0]) snprintf(why, n, "the only strategy that fits");
    else if (nrows > 1) snprintf(why, n, "no other layout fits");
    else snprintf(why, n, "the only strategy asked for");
    if (same[0]) {
        size_t l = strlen(why);
        snprintf(why + l, n - l, " (%s: the same layout and speed here)", same);
    }
    if (R->row[R->rec].layout.tp > 1 && !c->a->pin_t) tp_buys(c, &R->row[R->rec], why, n);
}

static int sum_up(const sim_ctx *c, sim_rows *rows, void *result)
{
    sim_plan_result *R = result;
    const int pure_at = pure_row_of(c);
    R->row = rows->row;
    R->nrows = c->n_strat;
    int run;
    char same[200];
    recommend(R->row, R->nrows, &R->rec, &run, same, sizeof same);
    if (R->rec >= 0) why_text(c, R, run, same);
    R->pure = pure_at >= 0 ? &rows->row[rows->n - 1] : NULL;
    if (R->pure) pure_note(c, R->pure, &R->row[pure_at], R->note, sizeof R->note);
    /* the recommendation's plan and per-op times, as its search priced them */
    R->plan = R->rec >= 0 ? &rows->plan[R->rec] : NULL;
    R->pres = R->rec >= 0 ? &rows->result[R->rec] : NULL;
    /* the timeline first: a file that cannot be written is bad input, said
     * before any output */
    if (c->a->timeline && R->plan) {
        int w = sim_timeline_write(c->a->timeline, c, &R->row[R->rec], R->plan, R->pres);
        return w == 2 ? SIM_EXIT_USAGE : w ? SIM_EXIT_INTERNAL : SIM_EXIT_OK;
    }
    return SIM_EXIT_OK;
}

/* When no plan fits there is no schedule: the plans are printed (they say
 * why), then that, exit 2. */
static int after(const sim_ctx *c, const void *result)
{
    const sim_plan_result *R = result;
    char what[160];
    snprintf(what, sizeof what, "no strategy fits %lld GPUs at %lld tokens", (long long)c->gpus[0],
             (long long)c->seq[0]);
    if (!c->a->timeline || R->plan) return sim_require_fit(c, R->rec >= 0, what);
    fflush(stdout);
    sim_err("--timeline %s: no plan fits, so no schedule was written (the plans above say why)", c->a->timeline);
    return SIM_EXIT_USAGE;
}

const sim_planning sim_cmd_plan = {.name = "plan", .keeps_plans = 1, .count = count, .compute = compute,
                                   .result_size = sizeof(sim_plan_result), .sum_up = sum_up,
                                   .write = {sim_plan_write_table, sim_plan_write_json, sim_plan_write_csv},
                                   .after = after};
