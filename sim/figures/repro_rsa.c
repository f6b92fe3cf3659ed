/* repro_rsa.c: the Sequence Parallelism / Ring Self-Attention experiments
 * of `ulysim reproduce` (Li et al. 2021, arXiv 2105.13120): Table 4 weak
 * scaling (memory per GPU, the SP/TP throughput ratio) and the maximum
 * batch and sequence results against tensor parallelism.
 *
 * The one reduction done here is Table 4's pipeline stage: the memory of
 * the first stage of the pipeline is the memory of a model made of that
 * stage's layers (see rsa_stage_model), which the model evaluates as it
 * stands. The model's own --pp is not used for it: its memory is the
 * heavier end stage, and the last one would add BERT's logits, a term of
 * the last stage only. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "repro.h"
#include "validate_runs.h"
#include "context.h"

/* ------------------------------------------------------------ RSA: Table 4 */

/* Table 4 is the runs file traces/published/rsa_table4_weak_scaling.csv: a
 * TP row (megatron-tp) and an SP row (rsa) per row of the paper, with the
 * paper's setup in its columns (fp32, no recompute, no ZeRO, materialised
 * scores, bidirectional attention, pp 8). validate --runs reads it and
 * resolves every row as plan would; the rows are priced here (rsa_price),
 * since the table measures one pipeline stage, not a step. */
#define RSA_TABLE4_FILE "rsa_table4_weak_scaling.csv"

/* The RSA runs (the paper's setup; what it leaves unstated is assumed in
 * the presets and here): fp32 (see the note printed with Table 4), no
 * activation recompute, no ZeRO (plain data parallelism with Adam),
 * materialised scores, bidirectional attention (BERT). The claims use it;
 * Table 4 has the same in its runs file. */
static uly_workload rsa_workload(int64_t seq, int64_t batch)
{
    uly_workload w = {.seq = seq, .micro_batch = batch, .global_batch = 0, .dtype = ULY_FP32, .causal = 0,
                      .flash = 0, .recompute = ULY_RECOMPUTE_NONE, .zero_stage = 0, .split = ULY_SPLIT_ZIGZAG};
    return w;
}

/* The heaviest stage of a model over pp pipeline stages: a uniform
 * partition gives ceil(L / pp) layers to the first stages (Megatron's and
 * Colossal-AI's partition), and the first stage also holds the embedding.
 * Under 1F1B with no more micro-batches than stages, every micro-batch of
 * the step is in flight on the first stage at its peak, so its activations
 * are those of the whole batch: the stage's memory is that of a model of
 * ceil(L / pp) layers (with the embedding) running the whole batch, less the
 * logits, which live on the last stage. */
static uly_model rsa_stage_model(const uly_model *m, int64_t pp)
{
    uly_model s = *m;
    s.layers = (m->layers + pp - 1) / pp;
    return s;
}

/* Memory of a stage as the paper measures it (torch max_memory_allocated,
 * MiB): the model's total less the logits (last stage) and the runtime
 * reserve (not an allocation), plus the stage's output of every micro-batch
 * in flight, which the pipeline schedule holds until that micro-batch's
 * backward (it calls backward on that tensor, and PyTorch keeps its storage
 * unless the schedule frees it by hand, as later Megatron-LM versions do):
 * b x N x h on every TP rank, b x N/P x h under SP. NAN when the layout has
 * no valid shapes. */
static double stage_alloc_mib(const uly_model *stage, const uly_workload *w, const uly_cluster *cl,
                              const uly_layout *l, uly_plan *plan, char *why, size_t why_n)
{
    uly_result *r = malloc(sizeof *r);
    if (!r) return NAN;
    double v = NAN;
    why[0] = 0;
    if (uly_evaluate(stage, w, cl, l, plan, r) == ULY_OK) {
        const double out_bytes = (double)uly_dtype_bytes(w->dtype) * (double)w->micro_batch *
                                 (double)plan->act_tokens * (double)stage->hidden;
        if (r->mem.total_bytes > 0)
            v = (r->mem.total_bytes - r->mem.term_bytes[ULY_MEM_LOGITS] - r->mem.term_bytes[ULY_MEM_RESERVED] +
                 out_bytes) /
                1048576.0;
        else
            rp_why_str(stage, r, why, why_n);
    }
    free(r);
    return v;
}

/* tokens/s of the whole model on P GPUs without the pipeline: only the ratio
 * SP/TP is compared */
static double full_tokens_per_s(const uly_model *m, const uly_workload *w, const uly_cluster *cl,
                                const uly_layout *l, uly_plan *plan)
{
    uly_result *r = malloc(sizeof *r);
    if (!r) return NAN;
    double v = NAN;
    if (uly_evaluate(m, w, cl, l, plan, r) == ULY_OK && r->time.step_s > 0) v = r->time.tokens_per_s;
    free(r);
    return v;
}

/* What rsa_price leaves for the table besides the row: the stage's layers. */
typedef struct rsa_priced {
    rp_ctx *c;
    int n;
    int64_t stage_layers[32];
} rsa_priced;

/* A Table 4 row priced as the paper measured it: its P is its GPUs over its
 * pipeline stages (data parallel 1), its batch the global batch (in flight
 * whole on the first stage); mem_gib is the first stage's allocation with
 * the P-way layout (NAN, and why in the note, when the layout has no valid
 * shapes), tokens_per_s the whole model's on P GPUs without the pipeline
 * (only the SP/TP ratio is compared), oom whether the stage with the
 * runtime's reserve exceeds the GPU. */
static int rsa_price(const sim_ctx *sc, vr_row *r, void *user, char *why, size_t n)
{
    rsa_priced *rp = user;
    const uly_strategy_id id = r->strategy ? r->strategy->id : ULY_STRAT_COUNT;
    const int tp = id == ULY_STRAT_MEGATRON_TP, sp = id == ULY_STRAT_RSA;
    if (!tp && !sp)
        return sim_fail(why, n, "strategy %s: not one of Table 4's (valid: %s, %s)", sim_strategy_name(id),
                        sim_strategy_name(ULY_STRAT_MEGATRON_TP), sim_strategy_name(ULY_STRAT_RSA));
    if (rp->n >= (int)(sizeof rp->stage_layers / sizeof rp->stage_layers[0]))
        return sim_fail(why, n, "more than %d rows (valid: Table 4's 16)", rp->n);
    const int64_t pp = sc->opts.pin_pp > 1 ? sc->opts.pin_pp : 1, p = r->gpus / pp;
    uly_workload w = sc->w;
    w.seq = r->seq;
    w.micro_batch = w.global_batch > 0 ? w.global_batch : w.micro_batch;
    w.global_batch = 0;
    uly_layout l;
    uly_layout_init(&l, id, 1, sp ? p : 1, tp ? p : 1, 1);
    const uly_model stage = rsa_stage_model(&sc->model, pp);
    rp->stage_layers[rp->n++] = stage.layers;
    const double mib = stage_alloc_mib(&stage, &w, &sc->cluster, &l, &rp->c->plan, r->note, sizeof r->note);
    r->priced = r->feasible = !isnan(mib);
    r->best = l;
    r->best.pp = pp;
    r->micro_batch = w.micro_batch;
    r->pred[VR_MEM] = mib / 1024.0;
    r->oom_pred = r->priced && mib * 1048576.0 + sc->cluster.gpu.reserved_bytes > sc->cluster.gpu.hbm_bytes;
    r->pred[VR_TOKENS] = full_tokens_per_s(&sc->model, &w, &sc->cluster, &l, &rp->c->plan);
    char d[64];
    sim_degrees_str(&r->best, d, sizeof d);
    snprintf(r->layout, sizeof r->layout, "%s mb%lld", d, (long long)r->micro_batch);
    return 0;
}

/* The degree of a Table 4 row's strategy. */
static int is_rsa(const vr_row *r) { return r->strategy && r->strategy->id == ULY_STRAT_RSA; }
static int64_t rsa_degree(const vr_row *r) { return is_rsa(r) ? r->best.ring : r->best.tp; }

/* The SP row of TP row i's group, or -1 (why says so): one TP and one SP
 * row per group, of the same degree, batch and sequence. */
static int rsa_pair(const vr_set *s, int i, char *why, size_t n)
{
    const vr_row *t = &s->rows[i];
    int j = -1, n_tp = 0;
    for (int k = 0; k < s->n; k++) {
        const vr_row *x = &s->rows[k];
        if (strcmp(x->group, t->group)) continue;
        if (is_rsa(x)) j = j < 0 ? k : -2;
        else n_tp++;
    }
    if (j < 0 || n_tp != 1) {
        sim_fail(why, n, "%s:%d: row %d: group '%s' has %d %s and %s %s row%s (valid: one of each: a row of the "
                 "paper's table)", s->path, t->line, i + 1, t->group, n_tp, sim_strategy_name(ULY_STRAT_MEGATRON_TP),
                 j == -1 ? "no" : "more than one", sim_strategy_name(ULY_STRAT_RSA), j == -1 ? "" : "s");
        return -1;
    }
    const vr_row *u = &s->rows[j];
    if (rsa_degree(u) != rsa_degree(t) || u->micro_batch != t->micro_batch || u->seq != t->seq) {
        sim_fail(why, n, "%s:%d: row %d: group '%s': its %s and %s rows differ in GPUs, batch or sequence (valid: "
                 "the same, a row of the paper's table)", s->path, u->line, j + 1, t->group,
                 sim_strategy_name(ULY_STRAT_MEGATRON_TP), sim_strategy_name(ULY_STRAT_RSA));
        return -1;
    }
    return j;
}

static int rsa_table4(rp_ctx *c)
{
    const char *exp = rp_experiments[RP_EXP_RSA_TABLE4].id, *acc = rp_accepts[RP_ACC_RSA_TABLE4].id;
    const char *sp_name = sim_strategy_name(ULY_STRAT_RSA), *tp_name = sim_strategy_name(ULY_STRAT_MEGATRON_TP);
    char path[1200], why[1400];
    rp_published_path(RSA_TABLE4_FILE, path, sizeof path);
    rsa_priced priced = {.c = c};
    const vr_opts opts = {.cluster = c->cluster_arg[RP_PAPER_RSA], .price = rsa_price, .user = &priced};
    vr_set set;
    int rc = vr_load_with(path, &opts, &set, why, sizeof why);
    for (int i = 0; i < set.n && !rc; i++)
        if (!is_rsa(&set.rows[i]) && rsa_pair(&set, i, why, sizeof why) < 0) rc = SIM_EXIT_USAGE;
    if (rc) {
        sim_err("reproduce: %s", why);
        vr_free(&set);
        c->exit_rc = rc;
        return 1;
    }
    for (int i = 0; i < set.n && !c->r.oom; i++) {
        const vr_row *t = &set.rows[i];
        if (is_rsa(t)) continue;
        const int j = rsa_pair(&set, i, why, sizeof why);
        const vr_row *s = &set.rows[j];
        const int64_t p = rsa_degree(t), b = t->micro_batch, n = t->seq;
        const double tp_pub = t->meas[VR_MEM] * 1024.0, sp_pub = s->meas[VR_MEM] * 1024.0;
        const double tp = t->priced ? t->pred[VR_MEM] * 1024.0 : NAN, sp = s->priced ? s->pred[VR_MEM] * 1024.0 : NAN;
        char tag[40];
        SETF(tag, "P%lld.b%lld.n%lld", (long long)p, (long long)b, (long long)n);

        /* the paper's empty cell: out of memory, a yes/no */
        const int oom_cell = t->oom_meas == 1;
        rp_row *x = oom_cell ? rp_row_add(&c->r, exp, acc, "yes/no", RP_SAME, 0, 1)
                             : rp_row_add(&c->r, exp, acc, "MiB", RP_WITHIN, 0.10, tp_pub);
        if (!x) break;
        SETF(x->id, "%s.tp_mem", tag);
        SETF(x->setup, "%s tp%lld, stage of %lld layers, fp32", tp_name, (long long)p,
             (long long)priced.stage_layers[i]);
        if (oom_cell) {
            SETF(x->label, "TP %lld, batch %lld, seq %lld: out of memory (1 yes, 0 no)", (long long)p, (long long)b,
                 (long long)n);
            if (!isnan(tp)) x->pred = t->oom_pred;
        } else {
            SETF(x->label, "TP %lld, batch %lld, seq %lld: memory per GPU", (long long)p, (long long)b, (long long)n);
            x->pred = tp;
        }
        if (isnan(tp)) SETF(x->note, "the model has no valid layout: %.440s", t->note);
        rp_row_judge(x);

        rp_row *y = rp_row_add(&c->r, exp, acc, "MiB", RP_WITHIN, 0.10, sp_pub);
        if (!y) break;
        SETF(y->id, "%s.sp_mem", tag);
        SETF(y->label, "SP %lld, batch %lld, seq %lld: memory per GPU", (long long)p, (long long)b, (long long)n);
        SETF(y->setup, "%s r%lld, stage of %lld layers, fp32", sp_name, (long long)p,
             (long long)priced.stage_layers[j]);
        y->pred = sp;
        if (isnan(sp)) SETF(y->note, "the model has no valid layout: %.440s", s->note);
        rp_row_judge(y);

        /* throughput: SP over TP */
        const double ts = s->pred[VR_TOKENS], tt = t->pred[VR_TOKENS];
        rp_row *z = rp_row_add(&c->r, exp, NULL, "x", RP_INFO, 0, NAN);
        if (!z) break;
        SETF(z->id, "%s.tokens_ratio", tag);
        SETF(z->label, "P %lld, batch %lld, seq %lld: tokens/s of SP over TP", (long long)p, (long long)b,
             (long long)n);
        if (!isnan(t->meas[VR_TOKENS])) z->pub = s->meas[VR_TOKENS] / t->meas[VR_TOKENS];
        if (!isnan(ts) && !isnan(tt)) z->pred = ts / tt;
        SETF(z->setup, "whole model on %lld GPUs without the pipeline: only the ratio is comparable", (long long)p);
        rp_row_judge(z);

        if (c->n_rsa_tab < (int)(sizeof c->rsa_tab / sizeof c->rsa_tab[0])) {
            int k = c->n_rsa_tab++;
            c->rsa_tab[k].p = p;
            c->rsa_tab[k].batch = b;
            c->rsa_tab[k].seq = n;
            c->rsa_tab[k].tp_pub = oom_cell ? NAN : tp_pub;
            c->rsa_tab[k].tp_pred = tp;
            c->rsa_tab[k].sp_pub = sp_pub;
            c->rsa_tab[k].sp_pred = sp;
        }
    }
    vr_free(&set);
    return c->r.oom;
}

/* ------------------------------------------------------------ RSA: claims */

/* Largest micro-batch a fixed layout fits (0 none; -1 no valid shapes, and
 * why says so). At most 2^31 sequences: far past any memory. */
static int64_t max_batch(rp_ctx *c, const uly_model *m, const uly_layout *l, int64_t seq, char *why, size_t why_n)
{
    uly_result *r = malloc(sizeof *r);
    if (!r) return -1;
    why[0] = 0;
    const uly_workload w = rsa_workload(seq, 1);
    int64_t b = 0;
    if (uly_search_max_batch(m, &w, &c->cluster[RP_PAPER_RSA], l, 1LL << 31, &b, r) != ULY_OK) {
        b = -1;
    } else if (b == 0 && !uly_result_priced(r)) { /* shapes, not memory */
        rp_why_str(m, r, why, why_n);
        b = -1;
    }
    free(r);
    return b;
}

static int64_t max_seq_pinned(rp_ctx *c, uly_strategy_id s, int64_t gpus, int64_t pin, int64_t batch)
{
    uly_workload w = rsa_workload(1, batch);
    uly_search_opts o = {0};
    if (s == ULY_STRAT_RSA) o.pin_ring = pin;
    else o.pin_tp = pin;
    uly_result *at = malloc(sizeof *at);
    if (!at) return 0;
    int64_t v = 0;
    if (uly_search_max_seq(&c->bert, &w, &c->cluster[RP_PAPER_RSA], gpus, s, &o, 1LL << 22, &v, at) != ULY_OK)
        v = 0;
    free(at);
    return v;
}

static int rsa_claims(rp_ctx *c)
{
    const char *exp = rp_experiments[RP_EXP_RSA_CLAIMS].id, *acc = rp_accepts[RP_ACC_RSA_HEADLINE].id;
    const char *sp_name = sim_strategy_name(ULY_STRAT_RSA), *tp_name = sim_strategy_name(ULY_STRAT_MEGATRON_TP);
    /* BERT Base on Piz Daint without a pipeline: SP over all GPUs, TP at
     * its largest degree, 12 (the heads), which is where the paper stops it */
    const int64_t tp_max = c->bert.heads;
    char why_s[256], why_t[256];
    uly_layout ls, lt;
    uly_layout_init(&ls, ULY_STRAT_RSA, 1, 64, 1, 1);
    uly_layout_init(&lt, ULY_STRAT_MEGATRON_TP, 1, 1, tp_max, 1);
    const int64_t bs = max_batch(c, &c->bert, &ls, 512, why_s, sizeof why_s);
    const int64_t bt = max_batch(c, &c->bert, &lt, 512, why_t, sizeof why_t);
    rp_row *x = rp_row_add(&c->r, exp, acc, "x", RP_WITHIN, 0.20, 13.7);
    if (!x) return 1;
    SETF(x->id, "max_batch_ratio_seq512");
    SETF(x->label, "BERT Base, seq 512: largest batch, SP on 64 GPUs over TP on 12 (paper: 13.7x)");
    if (bs > 0 && bt > 0) x->pred = (double)bs / (double)bt;
    if (bt >= 0)
        SETF(x->setup, "SP %s r64: batch %lld; TP %s tp%lld: batch %lld", sp_name, (long long)bs, tp_name,
             (long long)tp_max, (long long)bt);
    else
        SETF(x->setup, "SP %s r64: batch %lld; TP %s tp%lld: no valid layout", sp_name, (long long)bs, tp_name,
             (long long)tp_max);
    if (bt < 0) SETF(x->note, "the model has no valid TP layout: %s", why_t);
    rp_row_judge(x);

    const int64_t s64 = max_seq_pinned(c, ULY_STRAT_RSA, 64, 64, 64);
    const int64_t s16 = max_seq_pinned(c, ULY_STRAT_RSA, 16, 16, 64);
    const int64_t t12 = max_seq_pinned(c, ULY_STRAT_MEGATRON_TP, tp_max, tp_max, 64);
    x = rp_row_add(&c->r, exp, acc, "x", RP_WITHIN, 0.20, 3.0);
    if (!x) return 1;
    SETF(x->id, "max_seq_ratio_64gpus");
    SETF(x->label, "BERT Base, batch 64: longest sequence, SP on 64 GPUs over TP (paper: 3.0x)");
    if (s64 > 0 && t12 > 0) x->pred = (double)s64 / (double)t12;
    SETF(x->setup, "SP %s r64: %lld tokens; TP %s tp%lld (its largest degree): %lld tokens", sp_name,
         (long long)s64, tp_name, (long long)tp_max, (long long)t12);
    rp_row_judge(x);

    x = rp_row_add(&c->r, exp, acc, "x", RP_WITHIN, 0.20, 1.4);
    if (!x) return 1;
    SETF(x->id, "max_seq_ratio_16gpus");
    SETF(x->label, "BERT Base, batch 64: longest sequence, SP on 16 GPUs over TP (paper: 1.4x)");
    if (s16 > 0 && t12 > 0) x->pred = (double)s16 / (double)t12;
    SETF(x->setup, "SP %s r16: %lld tokens; TP %s tp%lld: %lld tokens", sp_name, (long long)s16, tp_name,
         (long long)tp_max, (long long)t12);
    SETF(x->note, "TP cannot use 16 GPUs with 12 heads: its largest degree, 12, stands in");
    rp_row_judge(x);
    return 0;
}

int rp_rsa_run(rp_ctx *c) { return rsa_table4(c) || rsa_claims(c); }
