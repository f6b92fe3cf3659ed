/* plot_fig_model.c: the figures `ulysim plot` computes from the model:
 * comm-volume, throughput, max-seq, max-batch, memory and breakdown. Each
 * writes its CSV (plot_csv.c) from the same libulysim calls as the planning
 * commands, so that `ulysim --format json` gives the same numbers for the
 * same configuration. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "plot_fig.h"

#define MAX_BATCH_CAP (1LL << 20) /* max-batch: searched up to 1M sequences */

/* "u8.r4", "tp8.dp2": the layout's degrees above 1. */
static void layout_str(const uly_layout *l, char *b, size_t n) { sim_degrees_str(l, b, n); }

static int has_fatal(const uly_reason *rs, int n, uly_reason_code code)
{
    for (int i = 0; i < n && i < ULY_MAX_REASONS; i++)
        if (rs[i].fatal && rs[i].code == code) return 1;
    return 0;
}

/* Fatal reasons that only say "does not fit this cluster" (memory, GPU
 * count), as opposed to shapes that make the layout meaningless. */
static int shapes_valid(const uly_reason *rs, int n)
{
    for (int i = 0; i < n && i < ULY_MAX_REASONS; i++) {
        if (!rs[i].fatal) continue;
        if (rs[i].code != ULY_R_OUT_OF_MEMORY && rs[i].code != ULY_R_GPUS_EXCEED_CLUSTER &&
            rs[i].code != ULY_R_GPUS_NOT_NODE_MULTIPLE && rs[i].code != ULY_R_BATCH_NOT_DIVISIBLE)
            return 0;
    }
    return 1;
}

static void size_words(int64_t v, char *b, size_t n) { sim_size_approx(v, b, n); }

/* ---------------------------------------------------- figure 1: comm-volume */

/* One point of comm-volume: strategy s spread over P GPUs at N tokens. */
typedef struct cv_point {
    int state;             /* CV_ROW, CV_NOTE (left out, why says why), CV_SKIP (N overflows) */
    int fits;
    int64_t seq, fwd, bwd; /* bytes sent per GPU, one layer */
    char ls[64], why[400];
} cv_point;
enum { CV_ROW = 0, CV_NOTE, CV_SKIP };

static void cv_point_eval(const sim_ctx *c, uly_strategy_id s, int64_t P, int64_t N, uly_plan *plan,
                          uly_result *res, cv_point *pt)
{
    uly_layout l;
    sim_pure_layout(c, s, P, &l);
    uly_workload w = c->w;
    w.seq = N;
    memset(res, 0, sizeof *res);
    uly_status st = uly_layout_gpus(&l) == P ? uly_evaluate(&c->model, &w, &c->cluster, &l, plan, res)
                                             : ULY_EINVAL;
    pt->seq = N;
    pt->why[0] = 0;
    layout_str(&l, pt->ls, sizeof pt->ls);
    /* a layout the library would not price (a GPU count that is not whole
     * nodes) has no byte totals: a note, never a row of zeros */
    if (st != ULY_OK || !shapes_valid(res->reasons, res->n_reasons) || !uly_result_priced(res)) {
        pt->state = CV_NOTE;
        if (st == ULY_OK) {
            sim_summary sm;
            memset(&sm, 0, sizeof sm);
            sim_summary_from_result(&sm, res);
            plot_reasons_plain(c, &sm, pt->why, sizeof pt->why);
        } else {
            snprintf(pt->why, sizeof pt->why, "%s", uly_layout_gpus(&l) == P ? uly_status_str(st) : "pinned degrees do not divide the GPUs");
        }
        return;
    }
    pt->state = CV_ROW;
    pt->fwd = res->comm_fwd_bytes;
    pt->bwd = res->comm_bwd_bytes;
    pt->fits = res->feasible ? 1 : 0;
}

/* 1 when strategy a's line would lie on b's: drawn at the same points with
 * the same bytes (all-gather CP sends what the ring sends; plain TP's
 * all-reduces what TP+SP's gathers and reduce-scatters send). */
static int cv_same_line(const cv_point *a, const cv_point *b, int n)
{
    for (int i = 0; i < n; i++) {
        if ((a[i].state == CV_ROW) != (b[i].state == CV_ROW)) return 0;
        if (a[i].state == CV_ROW && (a[i].fwd != b[i].fwd || a[i].bwd != b[i].bwd)) return 0;
    }
    return 1;
}

int fig_comm_volume(plot_run *r, FILE *f)
{
    sim_ctx *c = r->c;
    const sim_args *a = c->a;
    int64_t n_fixed = a->seq[0], p0 = a->gpus[0];
    if (n_fixed < p0) {
        sim_err("plot comm-volume: --seq %lld is shorter than the first GPU count %lld (valid: --seq >= --gpus, "
                "the scaled panel keeps --seq / %lld tokens per GPU)",
                (long long)n_fixed, (long long)p0, (long long)p0);
        return SIM_EXIT_USAGE;
    }
    int64_t per_gpu = n_fixed / p0;
    char b1[32], b2[32], l1[200], l2[200], l0[200];
    size_words(n_fixed, b1, sizeof b1);
    size_words(per_gpu, b2, sizeof b2);
    snprintf(l0, sizeof l0, "(%s: Ulysses inside a node, the ring across nodes; pinned --ulysses/--ring/--tp are kept)",
             plot_hybrid_name());
    snprintf(l1, sizeof l1, "panel fixed: N = %s tokens (%lld) on every GPU count", b1, (long long)n_fixed);
    snprintf(l2, sizeof l2, "panel scaled: N grows with the GPUs, N = %s tokens (%lld) per GPU x gpus", b2,
             (long long)per_gpu);
    const char *about[] = {
        "communication bytes sent per GPU for one layer and one micro-batch (the per_layer.comm_bytes_per_rank",
        "of `ulysim --format json`), each strategy spread over all GPUs: its own degree = gpus, dp = 1",
        l0, l1, l2, NULL};
    static const col cols[] = {
        {"panel", "fixed (N constant) or scaled (N proportional to gpus)"}, {"strategy", NULL},
        {"gpus", "GPUs [count]"}, {"seq", "sequence length N [tokens]"},
        {"layout", "degrees above 1 (u: Ulysses, r: context/ring, tp: tensor, dp: data)"},
        {"comm_fwd_bytes", "bytes sent per GPU, one layer, forward [bytes]"},
        {"comm_bwd_bytes", "bytes sent per GPU, one layer, backward with recompute [bytes]"},
        {"comm_total_bytes", "fwd + bwd [bytes]"},
        {"fits", "1: the layout also fits in memory (not needed for the volume)"},
        {"same_as_label", "the strategies drawn as this one, their bytes being the same at every point (legend: "
                          "\"Ring = All-gather CP\"); empty: none"},
    };
    plot_csv_header(r, f, about, cols, (int)(sizeof cols / sizeof cols[0]), 1);
    /* every point first: which strategies are drawn depends on all of them */
    const int per_strat = 2 * a->n_gpus;
    uly_plan *plan = malloc(sizeof *plan);
    uly_result *res = malloc(sizeof *res);
    cv_point *pts = calloc((size_t)(c->n_strat * per_strat), sizeof *pts);
    if (!plan || !res || !pts) {
        free(plan);
        free(res);
        free(pts);
        sim_err("out of memory");
        return SIM_EXIT_INTERNAL;
    }
    for (int si = 0; si < c->n_strat; si++)
        for (int pi = 0; pi < 2; pi++)
            for (int gi = 0; gi < a->n_gpus; gi++) {
                cv_point *pt = &pts[si * per_strat + pi * a->n_gpus + gi];
                int64_t P = a->gpus[gi];
                if (pi == 1 && per_gpu > INT64_MAX / P) pt->state = CV_SKIP;
                else cv_point_eval(c, c->strat[si], P, pi == 0 ? n_fixed : per_gpu * P, plan, res, pt);
            }
    free(plan);
    free(res);
    /* Without --strategy, a strategy whose line would hide under an earlier
     * one's is drawn once, as the earlier one, and named beside it in the
     * legend (same_as_label: "Ring = All-gather CP"); --strategy draws what
     * it names */
    int n_drawn = 0;
    char same[ULY_STRAT_COUNT][160];
    for (int si = 0; si < c->n_strat; si++) {
        int hidden = -1;
        for (int k = 0; k < n_drawn && !c->strat_explicit && hidden < 0; k++)
            if (cv_same_line(&pts[si * per_strat], &pts[k * per_strat], per_strat)) hidden = k;
        if (hidden >= 0) {
            const size_t l = strlen(same[hidden]);
            snprintf(same[hidden] + l, sizeof same[0] - l, "%s%s", l ? " = " : "", uly_strategy_get(c->strat[si])->label);
            continue;
        }
        if (n_drawn != si) memcpy(&pts[n_drawn * per_strat], &pts[si * per_strat], sizeof *pts * (size_t)per_strat);
        same[n_drawn][0] = 0;
        c->strat[n_drawn++] = c->strat[si];
    }
    c->n_strat = n_drawn;
    static const char *const panels[2] = {"fixed", "scaled"};
    /* each panel's log axis needs a point with bytes sent (at 1 GPU nothing
     * is): without one gnuplot fails on its own terms; say why here */
    for (int pi = 0; pi < 2 && !r->data_only; pi++) {
        const cv_point *first_note = NULL;
        int drawn = 0;
        for (int si = 0; si < c->n_strat; si++)
            for (int gi = 0; gi < a->n_gpus; gi++) {
                const cv_point *pt = &pts[si * per_strat + pi * a->n_gpus + gi];
                drawn |= pt->state == CV_ROW && pt->fwd + pt->bwd > 0;
                if (pt->state == CV_NOTE && !first_note) first_note = pt;
            }
        if (drawn) continue;
        char gl[64];
        if (a->n_gpus > 1) snprintf(gl, sizeof gl, "%lld..%lld", (long long)a->gpus[0], (long long)a->gpus[a->n_gpus - 1]);
        else snprintf(gl, sizeof gl, "%lld", (long long)a->gpus[0]);
        sim_err("plot comm-volume: nothing to draw in the %s panel: no strategy sends bytes on --gpus %s%s%s "
                "(valid: GPU counts above 1 that each strategy's degrees divide, e.g. powers of 2; --data-only "
                "writes the CSV alone)",
                panels[pi], gl, first_note ? ": " : "",
                first_note ? first_note->why : "");
        free(pts);
        return SIM_EXIT_USAGE;
    }
    for (int pi = 0; pi < 2; pi++)
        for (int si = 0; si < c->n_strat; si++)
            for (int gi = 0; gi < a->n_gpus; gi++) {
                const cv_point *pt = &pts[si * per_strat + pi * a->n_gpus + gi];
                uly_strategy_id s = c->strat[si];
                int64_t P = a->gpus[gi];
                if (pt->state == CV_NOTE)
                    plot_note(r, "%s %s, %lld GPUs (%s): %s", panels[pi], sim_strategy_name(s), (long long)P, pt->ls,
                              pt->why);
                if (pt->state != CV_ROW) continue;
                fprintf(f, "%s,%s,%lld,%lld,%s,%lld,%lld,%lld,%d,%s", panels[pi], sim_strategy_name(s), (long long)P,
                        (long long)pt->seq, pt->ls, (long long)pt->fwd, (long long)pt->bwd,
                        (long long)(pt->fwd + pt->bwd), pt->fits, same[si]);
                plot_strategy_cells(f, s);
            }
    free(pts);
    return 0;
}

/* ----------------------------------------------------- figure 2: throughput */

/* Strategy s at (P GPUs, N tokens): its best layout (--spread best, as
 * `ulysim --gpus P --seq N`), or its own degree over all GPUs with dp = 1
 * (--spread all, as `ulysim --gpus P --seq N --strategy S` with the degrees
 * pinned: --ulysses P, --ring P, --tp P; the hybrid: degrees from Ulysses
 * inside a node, placed as the plan command places them). */
static void strategy_at(const plot_run *r, uly_strategy_id s, int64_t P, int64_t N, sim_summary *out)
{
    const sim_ctx *c = r->c;
    if (!r->spread_all) {
        sim_best(c, s, P, N, out);
        return;
    }
    sim_summary_start(out, s);
    out->gpus = P;
    out->seq = N;
    out->micro_batch = c->w.micro_batch;
    sim_pure_layout(c, s, P, &out->layout);
    if (uly_layout_gpus(&out->layout) != P) {
        out->status = SIM_ROW_NOLAYOUT;
        snprintf(out->note, sizeof out->note, "the pinned degrees do not divide %lld GPUs", (long long)P);
        return;
    }
    uly_plan *plan = malloc(sizeof *plan);
    uly_result *res = calloc(1, sizeof *res);
    if (!plan || !res) {
        free(plan);
        free(res);
        out->status = SIM_ROW_ERROR;
        snprintf(out->note, sizeof out->note, "out of memory");
        return;
    }
    uly_workload w = c->w;
    w.seq = N;
    uly_layout l = out->layout;
    uly_status st = uly_evaluate(&c->model, &w, &c->cluster, &l, plan, res);
    if (st == ULY_OK && l.ulysses > 1 && l.ring > 1 && c->opts.both_placements) {
        /* the hybrid's degrees pinned, placed as the plan command places
         * them: the better of Ulysses inside the node and the ring inside */
        const uly_search_opts o = {.pin_ulysses = l.ulysses, .pin_ring = l.ring, .pin_tp = l.tp, .pin_pp = l.pp,
                                   .pin_vpp = l.vpp, .both_placements = 1};
        if (uly_search_best_plan(&c->model, &w, &c->cluster, P, s, &o, res, plan, NULL) == ULY_OK) l = res->layout;
    }
    if (st == ULY_OK) {
        sim_summary_from_result(out, res);
        out->layout = l;
        if (out->micro_batch <= 0) out->micro_batch = w.micro_batch;
        out->status = shapes_valid(res->reasons, res->n_reasons) ? SIM_ROW_OK : SIM_ROW_NOLAYOUT;
    } else {
        out->status = st == ULY_EOVERFLOW ? SIM_ROW_OVERFLOW : SIM_ROW_NOLAYOUT;
        char why[160] = "";
        if (uly_layout_check(&l, why, sizeof why) != ULY_OK && why[0]) snprintf(out->note, sizeof out->note, "%s", why);
        else snprintf(out->note, sizeof out->note, "%s", uly_status_str(st));
    }
    free(plan);
    free(res);
}

/* The figure line saying which layouts: for the CSV header. */
static void spread_line(const plot_run *r, int64_t P, const char *seq_words, char *b, size_t n)
{
    if (r->spread_all)
        snprintf(b, n, "each strategy over all %lld GPUs at %s: its own degree = %lld, dp = 1 (%s: Ulysses inside a node, ring across), "
                 "as `ulysim --gpus %lld --seq N --strategy S` with --ulysses/--ring/--tp pinned to the layout column",
                 (long long)P, seq_words, (long long)P, plot_hybrid_name(), (long long)P);
    else
        snprintf(b, n, "best layout of each strategy on %lld GPUs at %s (as `ulysim --gpus %lld --seq N%s`)", (long long)P,
                 seq_words, (long long)P, r->c->w.global_batch ? " --global-batch G" : "");
}

/* spread_line for the figures at one (P GPUs, N tokens): memory, breakdown. */
static void spread_line_at(const plot_run *r, int64_t P, int64_t N, char *b, size_t n)
{
    char words[64];
    size_words(N, words, sizeof words);
    snprintf(words + strlen(words), sizeof words - strlen(words), " tokens");
    spread_line(r, P, words, b, n);
}

static int is_oom(const sim_summary *s)
{
    return sim_has_numbers(s) && !s->feasible && has_fatal(s->reasons, s->n_reasons, ULY_R_OUT_OF_MEMORY);
}

/* The figures at one GPU count (throughput, memory, breakdown) have no point
 * to draw when the pinned degrees do not divide it: 0, or the usage error,
 * reported. */
static int pins_check(plot_run *r, int64_t P)
{
    int rc = sim_check_pins_divide(r->c, P, r->notes, sizeof r->notes);
    if (rc) sim_err("plot %s: %s", r->fig->name, r->notes);
    return rc;
}

/* strategy_at for one row of a figure, with the layout as text in ls: 0, or
 * SIM_EXIT_INTERNAL (reported) when libulysim itself failed. */
static int row_at(const plot_run *r, uly_strategy_id id, int64_t P, int64_t N, sim_summary *s, char *ls, size_t ls_n)
{
    strategy_at(r, id, P, N, s);
    if (s->status == SIM_ROW_ERROR) {
        sim_err("internal: %s", s->note);
        return SIM_EXIT_INTERNAL;
    }
    layout_str(&s->layout, ls, ls_n);
    return 0;
}

/* A row the one-point figures (memory, breakdown) cannot draw, having no
 * numbers: 1, with the reason noted; an infeasible plan with numbers is
 * drawn (fits = 0). */
static int row_unpriced(plot_run *r, const sim_summary *s, const char *ls)
{
    if (sim_has_numbers(s) && s->status == SIM_ROW_OK) return 0;
    char why[600];
    plot_reasons_plain(r->c, s, why, sizeof why);
    plot_note(r, "%s (%s): %s", s->strategy->name, ls, why);
    return 1;
}

int fig_throughput(plot_run *r, FILE *f)
{
    const sim_ctx *c = r->c;
    const sim_args *a = c->a;
    int64_t P = a->gpus[0];
    char l1[400];
    spread_line(r, P, "each sequence length N", l1, sizeof l1);
    const char *about[] = {
        l1,
        "fits = 0 and oom = 1: out of memory; tflops_per_gpu is then what the closest layout (least memory over",
        "the HBM) would reach if it fitted: the figure marks these points, it does not join them",
        NULL};
    static const col cols[] = {
        {"strategy", NULL}, {"seq", "sequence length N [tokens]"}, {"gpus", "GPUs [count]"},
        {"layout", "degrees above 1 of the best layout"}, {"micro_batch", "sequences per replica per micro-step"},
        {"fits", "1: fits in memory and has valid shapes"}, {"oom", "1: only memory stops it"},
        {"mem_bytes", "memory per GPU [bytes]"},
        {"tflops_per_gpu", "model TFLOP/s per GPU [1e12 FLOP/s] (step.tflops_per_gpu)"},
        {"tokens_per_s", "tokens per second, all GPUs [tokens/s]"}, {"mfu", "model FLOPs utilisation [fraction]"},
        {"step_s", "one optimizer step [s]"},
    };
    int rc = pins_check(r, P);
    if (rc) return rc;
    plot_csv_header(r, f, about, cols, (int)(sizeof cols / sizeof cols[0]), 1);
    for (int si = 0; si < c->n_strat; si++)
        for (int qi = 0; qi < a->n_seq; qi++) {
            sim_summary s;
            char ls[64], why[600];
            if (row_at(r, c->strat[si], P, a->seq[qi], &s, ls, sizeof ls)) return SIM_EXIT_INTERNAL;
            /* out-of-memory points stay: the figure marks them */
            int fits = s.status == SIM_ROW_OK && s.feasible;
            if (!sim_has_numbers(&s) || s.status != SIM_ROW_OK || (!fits && !is_oom(&s))) {
                plot_reasons_plain(c, &s, why, sizeof why);
                plot_note(r, "%s at %lld tokens (%s): %s", s.strategy->name, (long long)s.seq, ls, why);
                continue;
            }
            fprintf(f, "%s,%lld,%lld,%s,%lld,%d,%d,%.0f,%.10g,%.10g,%.10g,%.10g", s.strategy->name,
                    (long long)s.seq, (long long)P, ls, (long long)s.micro_batch, fits, is_oom(&s), s.mem.total_bytes,
                    s.time.tflops_per_gpu, s.time.tokens_per_s, s.time.mfu, s.time.step_s);
            plot_strategy_cells(f, s.strategy->id);
        }
    return 0;
}

/* ------------------------------------------- figures over GPU counts: 3, 3b */

/* One point of a figure whose x axis is the GPU count: strategy s on P GPUs,
 * its row written to f or why not noted. res: scratch for the search (a
 * uly_result is too large for the stack). 0, or an exit status that stops
 * the figure (reported). */
typedef int (*gpus_point_fn)(plot_run *r, FILE *f, uly_strategy_id s, int64_t P, uly_result *res);

/* Runs point on each strategy and GPU count. A count the pinned degrees do
 * not divide is a point left out, not an error: the axis is a list or range. */
static int gpus_points(plot_run *r, FILE *f, gpus_point_fn point)
{
    const sim_ctx *c = r->c;
    const sim_args *a = c->a;
    uly_result *res = malloc(sizeof *res);
    if (!res) {
        sim_err("out of memory");
        return SIM_EXIT_INTERNAL;
    }
    int rc = 0;
    for (int si = 0; si < c->n_strat && !rc; si++)
        for (int gi = 0; gi < a->n_gpus && !rc; gi++) {
            uly_strategy_id s = c->strat[si];
            int64_t P = a->gpus[gi];
            char why[600];
            if (sim_check_pins_divide(c, P, why, sizeof why)) {
                plot_note(r, "%s on %lld GPUs: %s", sim_strategy_name(s), (long long)P, why);
                continue;
            }
            rc = point(r, f, s, P, res);
        }
    free(res);
    return rc;
}

/* ----------------------------------------------- figure 3: max-seq, a point */

/* The longest sequence up to the bound --seq that some layout of s fits on P GPUs. */
static int max_seq_point(plot_run *r, FILE *f, uly_strategy_id s, int64_t P, uly_result *at)
{
    const sim_ctx *c = r->c;
    int64_t hi = c->a->seq[0], best = 0;
    memset(at, 0, sizeof *at);
    uly_status st = uly_search_max_seq(&c->model, &c->w, &c->cluster, P, s, &c->opts, hi, &best, at);
    if (st != ULY_OK && st != ULY_EINVAL && st != ULY_EOVERFLOW) {
        sim_err("internal: uly_search_max_seq(%s, %lld GPUs): %s", sim_strategy_name(s), (long long)P,
                uly_status_str(st));
        return SIM_EXIT_INTERNAL;
    }
    if (st != ULY_OK || best <= 0) {
        /* why not: the reasons at a short length every layout divides */
        sim_summary sm;
        char why[600];
        int64_t probe = P <= hi / 2 ? 2 * P : hi;
        sim_best(c, s, P, probe, &sm);
        plot_reasons_plain(c, &sm, why, sizeof why);
        plot_note(r, "%s on %lld GPUs fits no sequence length: %s", sim_strategy_name(s), (long long)P, why);
        return 0;
    }
    char ls[64];
    layout_str(&at->layout, ls, sizeof ls);
    fprintf(f, "%s,%lld,%lld,%s,%.0f,%.10g,%d", sim_strategy_name(s), (long long)P, (long long)best, ls,
            at->mem.total_bytes, at->time.tokens_per_s, best == hi);
    plot_strategy_cells(f, s);
    return 0;
}

/* --------------------------------------------- figure 3b: max-batch, a point */

/* The most sequences in flight (micro-batch x dp) that some layout of s
 * fits on P GPUs at sequence N: every split of the GPUs into TP, Ulysses and
 * ring degrees (the pins kept; the model refuses the splits a strategy does
 * not take), each at its largest micro-batch. Maximising the micro-batch of
 * the fastest layout first would miss a layout with more replicas (TP 4 x dp
 * 32 at one sequence each against TP 8 x dp 16 at one). Ties go to the
 * better result (uly_result_better: the faster). Returns the micro-batch, 0
 * when no layout fits one sequence. */
static int64_t most_in_flight(const sim_ctx *c, uly_strategy_id s, int64_t P, int64_t N, uly_result *best)
{
    uly_workload w = c->w;
    w.seq = N;
    w.global_batch = 0;
    const uly_search_opts *o = &c->opts;
    const int64_t pp = o->pin_pp > 1 ? o->pin_pp : 1;
    int64_t best_b = 0;
    if (P % pp) return 0;
    const int64_t G = P / pp;
    for (int64_t t = 1; t <= G; t++) {
        if (G % t || (o->pin_tp && t != o->pin_tp)) continue;
        for (int64_t u = 1; u <= G / t; u++) {
            if ((G / t) % u || (o->pin_ulysses && u != o->pin_ulysses)) continue;
            for (int64_t r = 1; r <= G / (t * u); r++) {
                if ((G / (t * u)) % r || (o->pin_ring && r != o->pin_ring)) continue;
                uly_layout l;
                uly_layout_init(&l, s, u, r, t, G / (t * u * r));
                l.pp = pp;
                l.vpp = o->pin_vpp > 0 ? o->pin_vpp : 1;
                int64_t b = 0;
                uly_result at;
                if (uly_search_max_batch(&c->model, &w, &c->cluster, &l, MAX_BATCH_CAP, &b, &at) != ULY_OK || b < 1)
                    continue;
                const int64_t have = best_b * (best_b ? best->layout.dp : 0), got = b * l.dp;
                if (got > have || (got == have && uly_result_better(&at, best))) {
                    *best = at;
                    best_b = b;
                }
            }
        }
    }
    return best_b;
}

/* The most sequences in flight at --seq that some layout of s fits on P GPUs. */
static int max_batch_point(plot_run *r, FILE *f, uly_strategy_id s, int64_t P, uly_result *res)
{
    const sim_ctx *c = r->c;
    int64_t N = c->a->seq[0];
    memset(res, 0, sizeof *res);
    const int64_t lo = most_in_flight(c, s, P, N, res);
    if (lo < 1) {
        sim_summary sm;
        char why[600];
        sim_best(c, s, P, N, &sm);
        plot_reasons_plain(c, &sm, why, sizeof why);
        plot_note(r, "%s on %lld GPUs fits no batch at %lld tokens: %s", sim_strategy_name(s), (long long)P,
             (long long)N, why);
        return 0;
    }
    if (lo >= MAX_BATCH_CAP)
        plot_note(r, "%s on %lld GPUs: fits the search bound of %lld sequences per replica", sim_strategy_name(s),
                  (long long)P, (long long)MAX_BATCH_CAP);
    char ls[64];
    layout_str(&res->layout, ls, sizeof ls);
    fprintf(f, "%s,%lld,%lld,%lld,%lld,%lld,%s,%.0f,%.10g", sim_strategy_name(s), (long long)P,
            (long long)N, (long long)lo, (long long)res->layout.dp, (long long)(lo * res->layout.dp), ls,
            res->mem.total_bytes, res->time.tokens_per_s);
    plot_strategy_cells(f, s);
    return 0;
}

/* ------------------------------------------ figures 3, 3b: the whole figure */

/* The two limit figures over GPU counts: their header (a title naming the
 * bound or the sequence, N, its words and tokens) and one point per
 * (strategy, GPU count). */
typedef struct limit_fig {
    const char *title; /* printf format of (N in words, N) */
    const char *about[3];
    col cols[10];
    int ncols;
    gpus_point_fn point;
} limit_fig;

static const limit_fig max_seq_fig = {
    "longest sequence each strategy fits on each GPU count (as `ulysim max-seq --gpus P`), searched up to %s = %lld tokens",
    {"layout: the best layout at that length; at_bound = 1: fits the bound, the true limit is higher", NULL, NULL},
    {{"strategy", NULL}, {"gpus", "GPUs [count]"}, {"max_seq", "longest sequence that fits [tokens]"},
     {"layout", "degrees above 1 of the best layout at max_seq"}, {"mem_bytes", "memory per GPU at max_seq [bytes]"},
     {"tokens_per_s", "tokens per second at max_seq [tokens/s]"}, {"at_bound", "1: max_seq is the search bound (--seq)"}},
    7, max_seq_point};

static const limit_fig max_batch_fig = {
    "most sequences in flight at once on all GPUs (micro-batch b x dp, sequences of %s = %lld tokens) that some layout fits,",
    {"on each GPU count: every split of the GPUs, each layout at its largest b (as `ulysim --gpus P --seq N --ulysses U",
     "--ring R --tp T --batch b`: fits at b, not at b + 1; searched up to 1M per replica); ties to the faster", NULL},
    {{"strategy", NULL}, {"gpus", "GPUs [count]"}, {"seq", "sequence length N [tokens]"},
     {"max_micro_batch", "micro-batch of that layout: its largest that fits [sequences per replica]"},
     {"dp", "data-parallel degree of that layout"},
     {"max_batch", "max_micro_batch x dp: sequences in flight on all GPUs, the most of any layout [sequences]"},
     {"layout", "degrees above 1 of that layout"},
     {"mem_bytes", "memory per GPU there [bytes]"}, {"tokens_per_s", "tokens per second there [tokens/s]"}},
    9, max_batch_point};

static int limit_figure(plot_run *r, FILE *f, const limit_fig *fig)
{
    const int64_t N = r->c->a->seq[0];
    char l1[240], b[32];
    size_words(N, b, sizeof b);
    snprintf(l1, sizeof l1, fig->title, b, (long long)N);
    const char *about[] = {l1, fig->about[0], fig->about[1], NULL};
    plot_csv_header(r, f, about, fig->cols, fig->ncols, 1);
    return gpus_points(r, f, fig->point);
}

int fig_max_seq(plot_run *r, FILE *f) { return limit_figure(r, f, &max_seq_fig); }
int fig_max_batch(plot_run *r, FILE *f) { return limit_figure(r, f, &max_batch_fig); }

/* One GPU count and sequence, and the line saying how strategies spread there. */
typedef struct fig_at {
    const sim_ctx *c;
    int64_t P, N;
    char line[400];
} fig_at;

static void fig_at_init(plot_run *r, fig_at *q)
{
    q->c = r->c;
    q->P = r->c->a->gpus[0];
    q->N = r->c->a->seq[0];
    spread_line_at(r, q->P, q->N, q->line, sizeof q->line);
}

/* --------------------------------------------------------- figure 4: memory */

int fig_memory(plot_run *r, FILE *f)
{
    fig_at q;
    fig_at_init(r, &q);
    const sim_ctx *c = q.c;
    const int64_t P = q.P, N = q.N;
    const char *about[] = {"memory per GPU by term:", q.line,
                           "the *_bytes term columns sum to total_bytes (memory.terms of the JSON output); capacity_bytes: the HBM", NULL};
    col cols[8 + ULY_MEM_TERM_COUNT];
    char names[ULY_MEM_TERM_COUNT][48];
    int n = 0;
    cols[n++] = (col){"strategy", NULL};
    cols[n++] = (col){"layout", "degrees above 1 of the best layout"};
    cols[n++] = (col){"gpus", "GPUs [count]"};
    cols[n++] = (col){"seq", "sequence length N [tokens]"};
    cols[n++] = (col){"micro_batch", "sequences per replica per micro-step"};
    cols[n++] = (col){"fits", "1: fits in memory and has valid shapes"};
    for (int t = 0; t < ULY_MEM_TERM_COUNT; t++) {
        snprintf(names[t], sizeof names[t], "%s_bytes", uly_mem_term_name((uly_mem_term)t));
        cols[n++] = (col){names[t], "memory per GPU of this term [bytes]"};
    }
    cols[n++] = (col){"total_bytes", "memory per GPU [bytes] (memory.total_bytes)"};
    cols[n++] = (col){"capacity_bytes", "usable HBM per GPU [bytes]"};
    int rc = pins_check(r, P);
    if (rc) return rc;
    plot_csv_header(r, f, about, cols, n, 1);
    for (int si = 0; si < c->n_strat; si++) {
        sim_summary s;
        char ls[64];
        if (row_at(r, c->strat[si], P, N, &s, ls, sizeof ls)) return SIM_EXIT_INTERNAL;
        if (row_unpriced(r, &s, ls)) continue;
        fprintf(f, "%s,%s,%lld,%lld,%lld,%d", s.strategy->name, ls, (long long)P, (long long)N,
                (long long)s.micro_batch, s.feasible ? 1 : 0);
        for (int t = 0; t < ULY_MEM_TERM_COUNT; t++) fprintf(f, ",%.0f", s.mem.term_bytes[t]);
        fprintf(f, ",%.0f,%.0f", s.mem.total_bytes, s.mem.capacity_bytes);
        plot_strategy_cells(f, s.strategy->id);
    }
    return 0;
}

/* ------------------------------------------------------ figure 6: breakdown */

int64_t plot_breakdown_batch(const sim_ctx *c, int64_t P, int64_t N)
{
    int64_t g = P * c->w.micro_batch;
    double best = 0;
    for (int si = 0; si < c->n_strat; si++) {
        sim_summary s;
        sim_best(c, c->strat[si], P, N, &s);
        if (s.status == SIM_ROW_OK && s.feasible && s.time.tokens_per_s > best) {
            best = s.time.tokens_per_s;
            g = s.micro_batch * s.layout.dp;
        }
    }
    return g;
}

int fig_breakdown(plot_run *r, FILE *f)
{
    fig_at q;
    fig_at_init(r, &q);
    const sim_ctx *c = q.c;
    const int64_t P = q.P, N = q.N;
    const char *about[] = {
        "one optimizer step split by what its time is spent on:", q.line,
        "(with --spread best and no --global-batch, the global batch is the recommendation's micro-batch x dp, as",
        "`ulysim --gpus P --seq N` runs it, for every strategy, so each step holds the same tokens: as `ulysim",
        "--gpus P --seq N --batch B --global-batch G`; the recommended strategy's bar is that plan's step)",
        "compute_s + comm_exposed_s + step_fixed_s = step_s; comm_overlapped_s runs hidden under compute_s",
        "(layers: micro_steps x L x the per_layer times of the JSON output; compute_s includes model_s)",
        "(plot takes no --pp: figures are drawn without a pipeline)", NULL};
    static const col cols[] = {
        {"strategy", NULL}, {"layout", "degrees above 1 of the best layout"},
        {"gpus", "GPUs [count]"}, {"seq", "sequence length N [tokens]"},
        {"micro_batch", "sequences per replica per micro-step"},
        {"micro_steps", "micro-steps per optimizer step"},
        {"fits", "1: fits in memory and has valid shapes"},
        {"compute_s", "compute on the critical path per step: layers plus embedding/logits [s]"},
        {"comm_exposed_s", "communication not hidden, per step [s]"},
        {"step_fixed_s", "per step: optimizer and exposed gradient synchronisation [s]"},
        {"comm_overlapped_s", "communication hidden under compute, per step [s]"},
        {"step_s", "one optimizer step [s] (step.time_s)"},
        {"tokens_per_step", "tokens per optimizer step, all GPUs [tokens]"},
        {"layer_compute_s", "per layer, one micro-batch (per_layer.compute_s) [s]"},
        {"layer_comm_exposed_s", "per layer, one micro-batch (per_layer.comm_exposed_s) [s]"},
        {"layer_comm_overlapped_s", "per layer, one micro-batch (per_layer.comm_overlapped_s) [s]"},
        {"model_s", "per micro-batch outside the layers (step.model_s) [s]"},
    };
    int rc = pins_check(r, P);
    if (rc) return rc;
    plot_csv_header(r, f, about, cols, (int)(sizeof cols / sizeof cols[0]), 1);
    for (int si = 0; si < c->n_strat; si++) {
        sim_summary s;
        char ls[64];
        if (row_at(r, c->strat[si], P, N, &s, ls, sizeof ls)) return SIM_EXIT_INTERNAL;
        if (row_unpriced(r, &s, ls)) continue;
        const uly_timing *t = &s.time;
        /* plot refuses --pp, so a stage is the whole model and there is no bubble */
        const double L = (double)t->stage_layers, ms = (double)(t->micro_steps > 0 ? t->micro_steps : 1);
        double compute = ms * (L * t->compute_s + t->model_s);
        double exposed = ms * L * t->comm_exposed_s;
        double hidden = ms * L * t->comm_overlapped_s;
        fprintf(f, "%s,%s,%lld,%lld,%lld,%lld,%d,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g",
                s.strategy->name, ls, (long long)P, (long long)N, (long long)s.micro_batch,
                (long long)t->micro_steps, s.feasible ? 1 : 0, compute, exposed, t->step_fixed_s, hidden, t->step_s,
                t->tokens_per_s * t->step_s, t->compute_s, t->comm_exposed_s, t->comm_overlapped_s, t->model_s);
        plot_strategy_cells(f, s.strategy->id);
    }
    return 0;
}
