/* cmd_plan.c: `ulysim [plan]`: the best layout of every strategy on --gpus
 * at --seq, the recommendation and why it wins, and the per-layer operations
 * of the recommendation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "output.h"
#include "timeline.h"
#include "par.h"

static int usable(const sim_summary *s)
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
    size_t o = (size_t)snprintf(buf, n, "%.2fx the tokens/s of the runner-up, %s (%s)", ratio, sim_strategy_name(run->strategy), dr);
    if (o >= n) return;
    if (best < 0) {
        snprintf(buf + o, n - o, "; it does no part of the step in less time per token");
        return;
    }
    if (same_tokens)
        snprintf(buf + o, n - o, "; mostly %s: %.3g s against %.3g s per step", comp_words[best], cw[best], cr[best]);
    else
        snprintf(buf + o, n - o, "; mostly %s: %.3g s against %.3g s per 1M tokens", comp_words[best],
                 tw > 0 ? cw[best] / tw * 1048576.0 : 0, tr > 0 ? cr[best] / tr * 1048576.0 : 0);
}

/* A strategy out of memory on a layout that keeps the whole sequence on
 * every GPU, because even its smallest sequence split (degree 2, or the
 * smallest divisor of the GPUs) fails on divisibility: that failure, not
 * the memory, is why; said with the lengths that would work. */
static void seq_split_note(const sim_ctx *c, const sim_summary *s, char *buf, size_t n)
{
    buf[0] = 0;
    const uly_strategy *st = uly_strategy_get((uly_strategy_id)s->strategy);
    if (!st || !(st->uses_ulysses || st->uses_ring) || s->feasible || s->gpus <= 1) return;
    if (s->layout.ulysses * s->layout.ring > 1) return;
    int oom = 0;
    for (int i = 0; i < s->n_reasons; i++) oom |= s->reasons[i].fatal && s->reasons[i].code == ULY_R_OUT_OF_MEMORY;
    if (!oom) return;
    const int64_t pp = s->layout.pp > 1 ? s->layout.pp : 1, stage = s->gpus / pp;
    int64_t d = 2;
    while (d <= stage && stage % d) d++;
    if (d > stage) return;
    uly_layout l;
    uly_layout_init(&l, st->id, st->uses_ulysses ? d : 1, st->uses_ulysses ? 1 : d, 1, stage / d);
    l.pp = pp;
    uly_plan *plan = malloc(sizeof *plan);
    uly_result *r = malloc(sizeof *r);
    if (plan && r && uly_evaluate(&c->model, &c->w, &c->cluster, &l, plan, r) == ULY_OK)
        for (int i = 0; i < r->n_reasons; i++) {
            if (!r->reasons[i].fatal || r->reasons[i].code != ULY_R_SEQ_NOT_DIVISIBLE) continue;
            char why[400], dw[80];
            uly_reason_format(&r->reasons[i], &c->model, why, sizeof why);
            sim_degrees_words(&l, dw, sizeof dw);
            snprintf(buf, n, "no layout that splits the sequence has valid shapes (the smallest, %s: %s), so this one "
                     "keeps all of it on every GPU", dw, why);
            break;
        }
    free(plan);
    free(r);
}

/* 1 when a row of a context-parallel strategy (one with a Ulysses or ring
 * degree) has those degrees at 1 and TP above 1: what runs is TP with
 * sequence parallelism, Megatron-SP's layout, whatever the row's name. */
static int sequence_degree_one(const sim_summary *s)
{
    const uly_strategy *st = uly_strategy_get((uly_strategy_id)s->strategy);
    return st && (st->uses_ulysses || st->uses_ring) && s->layout.ulysses <= 1 && s->layout.ring <= 1 &&
           s->layout.tp > 1;
}

/* The note on the pure all-to-all layout (every GPU in one Ulysses group)
 * when it is not what the search chose. */
static void pure_note(const sim_ctx *c, const sim_summary *pure, const sim_summary *best_u, char *buf, size_t n)
{
    char reasons[600], dw[80];
    int64_t g = pure->gpus;
    const uly_strategy *st = uly_strategy_get((uly_strategy_id)pure->strategy);
    const char *label = st && st->label ? st->label : sim_strategy_name(pure->strategy);
    buf[0] = 0;
    if (usable(pure) && usable(best_u) && best_u->layout.ulysses == g) return;
    sim_degrees_words(&best_u->layout, dw, sizeof dw);
    if (!usable(pure)) {
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
                     usable(best_u) ? "" : ", which does not fit either", ur[0] ? "; " : "", ur);
        } else {
            snprintf(buf + o, n - o, "No %s layout has valid shapes on %lld GPUs", label, (long long)g);
        }
    } else if (usable(best_u)) {
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

#define WIDTH 120

static int print_table(const sim_ctx *c, const sim_summary *rows, int nrows, int rec, const char *why, const char *note, const uly_plan *plan, const uly_result *pres)
{
    const uly_model *m = &c->model;
    const uly_cluster *cl = &c->cluster;
    const uly_workload *w = &c->w;
    FILE *f = stdout;
    char b1[64];
    int64_t gpus = rows[0].gpus;
    uint64_t evaluated = 0;
    for (int i = 0; i < nrows; i++) evaluated += rows[i].evaluated;

    sim_size_str(w->seq, b1, sizeof b1);
    fprintf(f, "# ulysim %s plan: %s on %s, %lld GPU%s, sequence %s (%lld tokens)\n", ULY_VERSION, m->name, cl->name,
            (long long)gpus, sim_plural_s(gpus), b1, (long long)w->seq);
    fprintf(f, "# model     L %lld, h %lld, a %lld heads, k %lld KV heads, d %lld, f %lld %s, V %lld; %.2f B parameters\n",
            (long long)m->layers, (long long)m->hidden, (long long)m->heads, (long long)m->kv_heads,
            (long long)m->head_dim, (long long)m->ffn_hidden, m->swiglu ? "SwiGLU" : "GELU", (long long)m->vocab,
            uly_model_params(m) / 1e9);
    fprintf(f, "# cluster   %s: %lld node%s x %lld GPU%s, %.0f TFLOP/s %s, %.1f GiB HBM; in-node %.0f GB/s, NIC %.0f GB/s per GPU, %s\n",
            cl->gpu.name, (long long)cl->nodes, sim_plural_s(cl->nodes), (long long)cl->gpus_per_node,
            sim_plural_s(cl->gpus_per_node), cl->gpu.peak_flops[w->dtype] / 1e12,
            uly_dtype_name(w->dtype), cl->gpu.hbm_bytes / 1073741824.0, cl->intra_bw_Bps / 1e9, cl->nic_bw_Bps / 1e9,
            uly_topo_name(cl->topo));
    {
        const sim_args *a = c->a;
        /* [0]: changed from the preset; [1]: what-if flags that restate it */
        char wi[2][240] = {"", ""};
#define WI(bit, ...)                                                                                                   \
    do {                                                                                                               \
        char *w_ = wi[(c->whatif_same & (bit)) != 0];                                                                  \
        snprintf(w_ + strlen(w_), sizeof wi[0] - strlen(w_), __VA_ARGS__);                                            \
    } while (0)
        if (a->nic_bw_Bps > 0) WI(SIM_WHATIF_NIC, "; NIC %.4g GB/s", a->nic_bw_Bps / 1e9);
        if (a->intra_bw_Bps > 0) WI(SIM_WHATIF_INTRA, "; in-node %.4g GB/s", a->intra_bw_Bps / 1e9);
        if (a->gpus_per_node > 0) WI(SIM_WHATIF_GPN, "; %lld GPUs per node", (long long)a->gpus_per_node);
        if (a->oversub > 0) WI(SIM_WHATIF_OVERSUB, "; oversubscription %g", a->oversub);
#undef WI
        if (wi[0][0]) fprintf(f, "#           what-if, changed from the preset: %s\n", wi[0] + 2);
        if (wi[1][0]) fprintf(f, "#           what-if flags equal to the preset's values (nothing changed): %s\n", wi[1] + 2);
    }
    if (c->preset_nodes)
        fprintf(f, "#           (the preset has %lld node%s; nodes of the same kind were added for %lld GPUs)\n",
                (long long)c->preset_nodes, sim_plural_s(c->preset_nodes), (long long)c->gpus[0]);
    char wl[400];
    sim_workload_str(w, wl, sizeof wl);
    fprintf(f, "# workload  %s\n", wl);
    char pps[160] = "";
    if (c->opts.pin_pp > 1 && c->opts.pin_vpp > 1)
        snprintf(pps, sizeof pps, ", under an interleaved 1F1B pipeline of %lld stages x %lld virtual (pinned)",
                 (long long)c->opts.pin_pp, (long long)c->opts.pin_vpp);
    else if (c->opts.pin_pp > 1)
        snprintf(pps, sizeof pps, ", under a 1F1B pipeline of %lld stages (pinned)", (long long)c->opts.pin_pp);
    else if (c->opts.pin_pp == ULY_PP_SEARCH)
        snprintf(pps, sizeof pps, " x 1F1B pipeline stages (every divisor of the GPUs up to the layers%s)",
                 c->opts.pin_vpp == 1 ? "" : c->opts.pin_vpp > 1 ? ", interleaved as pinned" : ", interleaved where the layers split");
    fprintf(f, "# search    best layout per strategy over u x r x tp x dp, both placements%s%s; %llu layout(s) evaluated\n",
            c->opts.search_micro_batch ? ", micro-batches" : "", pps, (unsigned long long)evaluated);
    fprintf(f, "# columns   comm per rank per layer per micro-batch (fwd; bwd with recompute); link: tiers it crosses; FLOPs: model FLOPs\n");

    fprintf(f, "# marks     *: the recommendation (most tokens/s of the plans that fit); a plan that does not fit shows\n"
               "#           its step time as priced but no tokens/s, TFLOP/s or MFU, as it cannot run\n");
    static const char *const names[] = {"strategy", "u", "r", "tp", "dp", "pp", "mb", "fits", "mem_GiB",
                                        "mem_largest", "fwd_MiB", "bwd_MiB", "link", "step_s", "tokens_per_s",
                                        "TFLOPs_gpu", "mfu_pct"};
    sim_table t;
    sim_table_init(&t, 17, names, "lrrrrrrlrlrrlrrrr");
    for (int i = 0; i < nrows; i++) {
        const sim_summary *s = &rows[i];
        const uly_layout *l = &s->layout;
        sim_table_row(&t);
        sim_table_cell(&t, "%s%s", sim_strategy_name(s->strategy), i == rec ? "*" : "");
        sim_table_cell(&t, "%lld", (long long)l->ulysses);
        sim_table_cell(&t, "%lld", (long long)l->ring);
        sim_table_cell(&t, "%lld", (long long)l->tp);
        sim_table_cell(&t, "%lld", (long long)l->dp);
        sim_table_cell(&t, "%lld", (long long)(l->pp > 0 ? l->pp : 1));
        if (!sim_has_numbers(s)) {
            sim_table_cell(&t, "%s", "");
            sim_table_cell(&t, "%s", sim_fit_tag(s));
            for (int k = 0; k < 9; k++) sim_table_cell(&t, "%s", "");
            continue;
        }
        sim_table_cell(&t, "%lld", (long long)s->micro_batch);
        sim_table_cell(&t, "%s", sim_fit_tag(s));
        sim_cell_gib(&t, s->mem.total_bytes);
        sim_table_cell(&t, "%s", uly_mem_term_name((uly_mem_term)s->mem.largest));
        sim_table_cell(&t, "%.1f", (double)s->comm_fwd / 1048576.0);
        sim_table_cell(&t, "%.1f", (double)s->comm_bwd / 1048576.0);
        sim_table_cell(&t, "%s", sim_tiers_name(s->tiers));
        sim_cell_seconds(&t, s->time.step_s);
        if (sim_shows_throughput(s)) {
            sim_table_cell(&t, "%.0f", s->time.tokens_per_s);
            sim_table_cell(&t, "%.1f", s->time.tflops_per_gpu);
            sim_table_cell(&t, "%.1f", s->time.mfu * 100.0);
        } else {
            for (int k = 0; k < 3; k++) sim_table_cell(&t, "%s", "");
        }
    }
    int bad = sim_table_print(&t, f);
    sim_table_free(&t);

    fprintf(f, "#\n# why not, and what was assumed:\n");
    for (int i = 0; i < nrows; i++) {
        char r[1000], d[80], split[600];
        sim_reasons_str(c, &rows[i], 0, r, sizeof r);
        if (!r[0] && rows[i].note[0]) snprintf(r, sizeof r, "%s", rows[i].note);
        if (rows[i].status == SIM_ROW_OK && sim_is_plain_dp(&rows[i].layout)) {
            /* a strategy's degrees all 1: its name would claim a scheme that does not run */
            char dp[200];
            snprintf(dp, sizeof dp, "degrees 1: %s, no %s (every strategy reduces to it)",
                     sim_plain_dp_words(&rows[i].layout), uly_strategy_get((uly_strategy_id)rows[i].strategy)->label);
            sim_join(r, sizeof r, "; ", dp);
        } else if (rows[i].status == SIM_ROW_OK && sequence_degree_one(&rows[i])) {
            /* TP alone under a context-parallel name: the row is Megatron-SP's layout */
            char sp[240];
            snprintf(sp, sizeof sp, "context-parallel degree 1: %s's layout (TP %lld with sequence parallelism), no %s",
                     uly_strategy_get(ULY_STRAT_MEGATRON_SP)->label, (long long)rows[i].layout.tp,
                     uly_strategy_get((uly_strategy_id)rows[i].strategy)->label);
            sim_join(r, sizeof r, "; ", sp);
        }
        seq_split_note(c, &rows[i], split, sizeof split);
        if (!r[0] && !split[0]) continue;
        sim_degrees_words(&rows[i].layout, d, sizeof d);
        char line[1800];
        snprintf(line, sizeof line, "%s (%s)%s: %s%s%s", sim_strategy_name(rows[i].strategy), d,
                 rows[i].status == SIM_ROW_NOLAYOUT ? ", no layout has valid shapes; this one" : "", split,
                 split[0] && r[0] ? "; " : "", r);
        sim_print_note(f, "#   ", "#       ", line, WIDTH);
    }
    if (note[0]) {
        fprintf(f, "#\n");
        sim_print_note(f, "# ", "#   ", note, WIDTH);
    }
    fprintf(f, "#\n");
    if (rec < 0) {
        /* more GPUs help only where memory stopped a strategy; shapes that
         * do not divide (sequence, heads, global batch) need other sizes */
        int oom = 0;
        for (int i = 0; i < nrows && !oom; i++)
            for (int k = 0; k < rows[i].n_reasons && k < ULY_MAX_REASONS; k++)
                oom |= rows[i].reasons[k].code == ULY_R_OUT_OF_MEMORY;
        char none[300];
        snprintf(none, sizeof none, "recommended: none: no strategy fits %lld GPU%s at %lld tokens (see the reasons "
                 "above; %s)", (long long)gpus, sim_plural_s(gpus), (long long)w->seq,
                 oom ? "try more GPUs, `ulysim min-gpus`, or `ulysim max-seq`"
                     : "no layout's degrees divide these sizes: choose a sequence length, GPU count or global batch they divide");
        sim_print_note(f, "# ", "#   ", none, WIDTH);
        return bad;
    }
    char d[80];
    sim_degrees_words(&rows[rec].layout, d, sizeof d);
    char line[1200];
    char as[120] = "";
    if (sim_is_plain_dp(&rows[rec].layout))
        snprintf(as, sizeof as, "%s, as ", sim_plain_dp_words(&rows[rec].layout));
    else if (sequence_degree_one(&rows[rec]))
        snprintf(as, sizeof as, "%s's layout, as ", uly_strategy_get(ULY_STRAT_MEGATRON_SP)->label);
    snprintf(line, sizeof line, "recommended: %s%s (%s), micro-batch %lld: %.0f tokens/s, %.1f%% MFU; %s", as,
             sim_strategy_name(rows[rec].strategy), d,
             (long long)rows[rec].micro_batch, rows[rec].time.tokens_per_s, rows[rec].time.mfu * 100.0, why);
    sim_print_note(f, "# ", "#   ", line, WIDTH);
    const uly_timing *rt = &rows[rec].time;
    if (rt->zero_gather_s > 0) {
        const int64_t pf = uly_zero_prefetch_layers(w);
        char pfs[80];
        if (pf) snprintf(pfs, sizeof pfs, "prefetched %lld layer%s ahead, the step's first waits", (long long)pf, pf > 1 ? "s" : "");
        else snprintf(pfs, sizeof pfs, "no prefetch: each waits on the critical path");
        snprintf(line, sizeof line, "ZeRO-3 weight gathers: %.3g s per step per GPU, %.3g s of it exposed (%.0f%% hidden; %s)",
                 rt->zero_gather_s, rt->zero_gather_exposed_s,
                 100.0 * (1.0 - rt->zero_gather_exposed_s / rt->zero_gather_s), pfs);
        sim_print_note(f, "# ", "#   ", line, WIDTH);
    }

    if (!plan) return bad;
    fprintf(f, "\n\n# operations of the recommendation, %s (%s): one layer, one micro-batch, per rank; per-step ops last\n",
            sim_strategy_name(rows[rec].strategy), d);
    fprintf(f, "# overlap: exposed (on the critical path), hidden (under compute), partly; compute ops run on the critical path\n");
    /* GFLOP and TFLOPs (achieved: the op's FLOPs over its priced time) for
     * compute ops, what the kernels execute (recompute and attention's
     * backward included), so a slow op shows where the time goes. */
    static const char *const onames[] = {"id", "op", "phase", "per", "kind", "group", "MiB_sent", "link", "GFLOP",
                                         "TFLOPs", "time_ms", "exposed_ms", "overlap"};
    sim_table_init(&t, 13, onames, "rllllrrlrrrrl");
    for (int i = 0; i < plan->n_ops && i < ULY_PLAN_MAX_OPS; i++) {
        const uly_op *op = &plan->ops[i];
        double tm = pres->op_time_s[i], ex = pres->op_exposed_s[i];
        sim_table_row(&t);
        sim_table_cell(&t, "%d", (int)op->id);
        sim_table_cell(&t, "%s", uly_op_type_name(op->type));
        sim_table_cell(&t, "%s", op->recompute ? "recomp" : uly_phase_name(op->phase));
        sim_table_cell(&t, "%s", op->per_step ? "step" : op->per_model ? "model" : "layer");
        if (op->kind == ULY_OP_COMM) {
            sim_table_cell(&t, "%s", uly_coll_name(op->coll));
            sim_table_cell(&t, "%s%d", uly_group_name(op->group), (int)op->group_size);
            sim_table_cell(&t, "%.2f", (double)op->bytes_sent / 1048576.0);
            sim_table_cell(&t, "%s", sim_tiers_name(op->tiers));
            sim_table_cell(&t, "%s", "");
            sim_table_cell(&t, "%s", "");
        } else {
            sim_table_cell(&t, "%s", uly_op_kind_name(op->kind));
            sim_table_cell(&t, "%s", "");
            sim_table_cell(&t, "%s", "");
            sim_table_cell(&t, "%s", "");
            sim_table_cell(&t, "%.3f", op->flops / 1e9);
            if (tm > 0 && op->flops > 0) sim_table_cell(&t, "%.1f", op->flops / tm / 1e12);
            else sim_table_cell(&t, "%s", "");
        }
        sim_table_cell(&t, "%.3f", tm * 1e3);
        sim_table_cell(&t, "%.3f", ex * 1e3);
        const char *ov = "compute";
        if (op->kind == ULY_OP_COMM) {
            if (tm <= 0) ov = "-";
            else if (ex <= 1e-6 * tm) ov = "hidden";
            else if (ex >= tm * (1 - 1e-6)) ov = "exposed";
            else ov = "partly";
        }
        sim_table_cell(&t, "%s", ov);
    }
    bad |= sim_table_print(&t, f);
    sim_table_free(&t);
    char ms[5][32];
    const double ms_v[5] = {pres->time.layer_fwd_s, pres->time.layer_bwd_s, pres->time.compute_s,
                            pres->time.comm_exposed_s, pres->time.comm_overlapped_s};
    for (int k = 0; k < 5; k++) sim_fixed_str(ms_v[k] * 1e3, 3, 0, ms[k], sizeof ms[k]);
    fprintf(f, "# per layer: fwd %s ms, bwd %s ms (compute %s ms, comm exposed %s ms, hidden %s ms); per step: %lld micro-step(s), %.4g s\n",
            ms[0], ms[1], ms[2], ms[3], ms[4], (long long)pres->time.micro_steps, pres->time.step_s);
    return bad;
}

static int print_csv(const sim_ctx *c, const sim_summary *rows, int nrows, int rec)
{
    static const char *const names[] = {"strategy", "ulysses", "ring", "tp", "dp", "pp", "gpus", "seq", "micro_batch",
                                        "feasible", "fits", "mem_bytes", "mem_capacity_bytes", "mem_largest",
                                        "comm_fwd_bytes", "comm_bwd_bytes", "comm_recompute_bytes", "zero_bytes",
                                        "link", "step_s", "tokens_per_s", "tflops_per_gpu", "mfu", "hfu",
                                        "recommended", "reasons"};
    sim_table t;
    sim_table_init(&t, 26, names, "llllllllllllllllllllllllll");
    for (int i = 0; i < nrows; i++) {
        const sim_summary *s = &rows[i];
        char r[900];
        sim_table_row(&t);
        sim_table_cell(&t, "%s", sim_strategy_name(s->strategy));
        sim_table_cell(&t, "%lld", (long long)s->layout.ulysses);
        sim_table_cell(&t, "%lld", (long long)s->layout.ring);
        sim_table_cell(&t, "%lld", (long long)s->layout.tp);
        sim_table_cell(&t, "%lld", (long long)s->layout.dp);
        sim_table_cell(&t, "%lld", (long long)(s->layout.pp ? s->layout.pp : 1));
        sim_table_cell(&t, "%lld", (long long)s->gpus);
        sim_table_cell(&t, "%lld", (long long)s->seq);
        sim_table_cell(&t, "%lld", (long long)s->micro_batch);
        sim_table_cell(&t, "%d", usable(s));
        sim_table_cell(&t, "%s", sim_fit_tag(s));
        if (sim_has_numbers(s)) {
            sim_table_cell(&t, "%.17g", s->mem.total_bytes);
            sim_table_cell(&t, "%.17g", s->mem.capacity_bytes);
            sim_table_cell(&t, "%s", uly_mem_term_name((uly_mem_term)s->mem.largest));
            sim_table_cell(&t, "%lld", (long long)s->comm_fwd);
            sim_table_cell(&t, "%lld", (long long)s->comm_bwd);
            sim_table_cell(&t, "%lld", (long long)s->comm_recompute);
            sim_table_cell(&t, "%lld", (long long)s->zero_bytes);
            sim_table_cell(&t, "%s", sim_tiers_name(s->tiers));
            sim_table_cell(&t, "%.9g", s->time.step_s);
            if (sim_shows_throughput(s)) {
                sim_table_cell(&t, "%.9g", s->time.tokens_per_s);
                sim_table_cell(&t, "%.9g", s->time.tflops_per_gpu);
                sim_table_cell(&t, "%.9g", s->time.mfu);
                sim_table_cell(&t, "%.9g", s->time.hfu);
            } else {
                for (int k = 0; k < 4; k++) sim_table_cell(&t, "%s", "");
            }
        } else {
            for (int k = 0; k < 13; k++) sim_table_cell(&t, "%s", "");
        }
        sim_table_cell(&t, "%d", i == rec);
        sim_reasons_str(c, s, 0, r, sizeof r);
        if (!r[0] && s->note[0]) snprintf(r, sizeof r, "%s", s->note);
        sim_table_cell(&t, "%s", r);
    }
    int bad = sim_table_print_csv(&t, stdout);
    sim_table_free(&t);
    return bad;
}

static int print_json(const sim_ctx *c, const sim_summary *rows, int nrows, const sim_summary *pure, int rec,
                      const char *why, const char *note, const uly_plan *plan, const uly_result *pres)
{
    int bad = 0;
    cJSON *root = cJSON_CreateObject();
    bad |= sim_json_add(root, "command", cJSON_CreateString("plan"));
    cJSON *cfg = sim_json_config(c, "plan");
    if (cfg) bad |= sim_json_add(cfg, "gpus", sim_json_int(rows[0].gpus));
    bad |= sim_json_add(root, "config", cfg);
    bad |= sim_json_add(root, "flop_convention", cJSON_CreateString(sim_flop_convention));
    cJSON *plans = cJSON_CreateArray();
    for (int i = 0; i < nrows; i++) bad |= sim_json_add(plans, NULL, sim_json_plan(c, &rows[i]));
    bad |= sim_json_add(root, "plans", plans);
    bad |= sim_json_add(root, "recommended", rec >= 0 ? sim_json_int(rec) : cJSON_CreateNull());
    bad |= sim_json_add(root, "why", rec >= 0 ? cJSON_CreateString(why) : cJSON_CreateNull());
    cJSON *notes = cJSON_CreateArray();
    if (note[0]) bad |= sim_json_add(notes, NULL, cJSON_CreateString(note));
    bad |= sim_json_add(root, "notes", notes);
    if (pure) {
        cJSON *pj = sim_json_plan(c, pure);
        if (pj) bad |= sim_json_add(pj, "note", cJSON_CreateString(note));
        bad |= sim_json_add(root, "pure_ulysses", pj);
    }
    if (plan && rec >= 0) {
        cJSON *ops = cJSON_CreateObject();
        bad |= sim_json_add(ops, "plan", sim_json_int(rec));
        bad |= sim_json_add(ops, "ops", sim_json_ops(plan, pres));
        bad |= sim_json_add(root, "operations", ops);
    } else {
        bad |= sim_json_add(root, "operations", cJSON_CreateNull());
    }
    if (bad) {
        cJSON_Delete(root);
        sim_err("out of memory building the JSON output");
        return SIM_EXIT_INTERNAL;
    }
    return sim_json_print(root, stdout) ? SIM_EXIT_INTERNAL : SIM_EXIT_OK;
}

int sim_cmd_plan(const sim_ctx *c)
{
    const sim_args *a = c->a;
    const int64_t gpus = c->gpus[0], seq = c->seq[0]; /* one GPU count, checked when resolved */
    /* rows: the strategies, then the pure all-to-all layout unless degrees are pinned */
    const int nrows = c->n_strat, pure_at = c->pinned ? -1 : pure_strategy(c);
    int n = nrows + (pure_at >= 0 ? 1 : 0);
    if (n <= 0) n = 1;
    sim_summary *items = calloc((size_t)n, sizeof *items);
    /* each row's plan and priced result: the recommendation's ops are printed */
    uly_plan *plans = calloc((size_t)n, sizeof *plans);
    uly_result *results = calloc((size_t)n, sizeof *results);
    if (!items || !plans || !results) {
        free(items);
        free(plans);
        free(results);
        sim_err("out of memory");
        sim_par_abort(SIM_EXIT_INTERNAL);
        return SIM_EXIT_INTERNAL;
    }
    for (int i = 0; i < n; i++) {
        if (!sim_par_mine((size_t)i)) continue;
        if (i < nrows) {
            sim_best_plan(c, c->strat[i], gpus, seq, &items[i], &plans[i], &results[i]);
        } else {
            /* every GPU in one all-to-all group */
            uly_layout l;
            uly_layout_init(&l, c->strat[pure_at], gpus, 1, 1, 1);
            memset(&items[i], 0, sizeof items[i]);
            items[i].strategy = (int32_t)c->strat[pure_at];
            items[i].gpus = gpus;
            sim_summary_of_layout(c, &l, seq, &items[i], &plans[i], &results[i]);
        }
    }
    int rc = SIM_EXIT_OK;
    if (sim_par_gather(items, sizeof *items, (size_t)n) != 0 || sim_par_gather(plans, sizeof *plans, (size_t)n) != 0 ||
        sim_par_gather(results, sizeof *results, (size_t)n) != 0) {
        sim_err("gathering the results across MPI ranks failed");
        sim_par_abort(SIM_EXIT_INTERNAL);
        rc = SIM_EXIT_INTERNAL;
        goto out;
    }
    if (sim_par_rank() != 0) goto out;
    for (int i = 0; i < n; i++) {
        if (items[i].status == SIM_ROW_ERROR) {
            sim_err("internal: %s", items[i].note);
            rc = SIM_EXIT_INTERNAL;
            goto out;
        }
    }
    int rec = -1, run = -1;
    for (int i = 0; i < nrows; i++)
        if (usable(&items[i]) && (rec < 0 || items[i].time.tokens_per_s > items[rec].time.tokens_per_s)) rec = i;
    /* the runner-up: the best of the others, leaving out those whose best
     * layout is the recommendation's own (usp with u = 1 is the ring) */
    char same[200] = "";
    for (int i = 0; rec >= 0 && i < nrows; i++) {
        if (i == rec || !usable(&items[i])) continue;
        if (equivalent(&items[i], &items[rec])) {
            sim_join(same, sizeof same, ", ", sim_strategy_name(items[i].strategy));
            continue;
        }
        if (run < 0 || items[i].time.tokens_per_s > items[run].time.tokens_per_s) run = i;
    }
    char whytxt[800] = "", note[1400] = "";
    if (rec >= 0) {
        if (run >= 0) why_wins(c, &items[rec], &items[run], whytxt, sizeof whytxt);
        else if (nrows > 1 && !same[0]) snprintf(whytxt, sizeof whytxt, "the only strategy that fits");
        else if (nrows > 1) snprintf(whytxt, sizeof whytxt, "no other layout fits");
        else snprintf(whytxt, sizeof whytxt, "the only strategy asked for");
        if (same[0]) {
            size_t l = strlen(whytxt);
            snprintf(whytxt + l, sizeof whytxt - l, " (%s: the same layout and speed here)", same);
        }
    }
    /* a hybrid (TP inside a context-parallel strategy) set against the same
     * strategy's best layout without TP: what the TP buys */
    if (rec >= 0 && items[rec].layout.tp > 1 && !a->pin_t) {
        const uly_strategy *st = uly_strategy_get((uly_strategy_id)items[rec].strategy);
        if (st && (st->uses_ulysses || st->uses_ring)) {
            sim_ctx c1 = *c;
            c1.opts.pin_tp = 1;
            sim_summary alt;
            sim_best(&c1, st->id, items[rec].gpus, items[rec].seq, &alt);
            size_t l = strlen(whytxt);
            if (usable(&alt)) {
                char wt[600];
                why_wins(c, &items[rec], &alt, wt, sizeof wt);
                snprintf(whytxt + l, sizeof whytxt - l, "; with TP %lld inside, %s", (long long)items[rec].layout.tp,
                         wt);
                /* "the runner-up" there is the same strategy without TP */
                char *r = strstr(whytxt + l, "the runner-up, ");
                if (r) {
                    char rest[600];
                    snprintf(rest, sizeof rest, "%s", r + strlen("the runner-up, "));
                    snprintf(r, sizeof whytxt - (size_t)(r - whytxt), "its best layout without TP, %s", rest);
                }
            } else {
                snprintf(whytxt + l, sizeof whytxt - l, "; without TP inside no %s layout fits", st->name);
            }
        }
    }
    const sim_summary *pure = pure_at >= 0 ? &items[n - 1] : NULL;
    if (pure) pure_note(c, pure, &items[pure_at], note, sizeof note);
    /* the recommendation's plan and per-op times, as its search priced them */
    const uly_plan *pp = rec >= 0 ? &plans[rec] : NULL;
    const uly_result *pres = rec >= 0 ? &results[rec] : NULL;
    /* the timeline first: a file that cannot be written is bad input, said
     * before any output. When no plan fits there is no schedule: the plans
     * are printed (they say why), then that, exit 2 */
    if (a->timeline && pp) {
        int w = sim_timeline_write(a->timeline, c, &items[rec], pp, pres);
        rc = w == 2 ? SIM_EXIT_USAGE : w ? SIM_EXIT_INTERNAL : SIM_EXIT_OK;
        if (rc) goto out;
    }
    switch (a->format) {
    case SIM_FMT_JSON: rc = print_json(c, items, nrows, pure, rec, whytxt, note, pp, pres); break;
    case SIM_FMT_CSV: rc = print_csv(c, items, nrows, rec) ? SIM_EXIT_INTERNAL : SIM_EXIT_OK; break;
    default: rc = print_table(c, items, nrows, rec, whytxt, note, pp, pres) ? SIM_EXIT_INTERNAL : SIM_EXIT_OK; break;
    }
    if (a->timeline && !pp && rc == SIM_EXIT_OK) {
        fflush(stdout);
        sim_err("--timeline %s: no plan fits, so no schedule was written (the plans above say why)", a->timeline);
        rc = SIM_EXIT_USAGE;
    }
out:
    free(items);
    free(plans);
    free(results);
    return rc;
}
