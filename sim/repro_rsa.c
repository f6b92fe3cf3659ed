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

/* ------------------------------------------------------------ RSA: Table 4 */

static const struct {
    int64_t p, batch, seq;
    double tp_mem, tp_tok, sp_mem, sp_tok; /* NAN: out of memory (an empty cell) */
} rsa_pub[] = {
    /* traces/published/rsa_table4_weak_scaling.csv (arXiv 2105.13120 Table 4) */
    {1, 64, 512, 8477.28, 9946.15, 8477.53, 9261.04},
    {2, 128, 512, 9520.47, 15510.19, 8478.76, 13938.22},
    {4, 256, 512, 12232.52, 20701.96, 8481.26, 21269.91},
    {8, 512, 512, NAN, NAN, 8490.75, 26401.64},
    {1, 64, 256, 3707.39, 9752.61, 3707.01, 9340.13},
    {2, 64, 512, 4993.43, 14195.17, 4670.64, 13144.16},
    {4, 64, 1024, 8175.93, 19879.27, 6601.88, 18243.82},
    {8, 64, 2048, 14862.09, 22330.5, 10536.38, 21625.51},
};
#define N_RSA_PUB ((int)(sizeof rsa_pub / sizeof rsa_pub[0]))

#define RSA_PP 8 /* the paper's pipeline size for Table 4 */

/* The RSA runs (the paper's setup; what it leaves unstated is assumed in
 * the presets and here): fp32 (see the note printed with Table 4), no
 * activation recompute, no ZeRO (plain data parallelism with Adam),
 * materialised scores, bidirectional attention (BERT). */
static uly_workload rsa_workload(int64_t seq, int64_t batch)
{
    uly_workload w = {.seq = seq, .micro_batch = batch, .global_batch = 0, .dtype = ULY_FP32, .causal = 0,
                      .flash = 0, .recompute = ULY_RECOMPUTE_NONE, .zero_stage = 0, .split = ULY_SPLIT_ZIGZAG};
    return w;
}

/* The heaviest stage of BERT Base over RSA_PP pipeline stages: a uniform
 * partition gives ceil(L / pp) layers to the first stages (Megatron's and
 * Colossal-AI's partition), and the first stage also holds the embedding.
 * Under 1F1B with no more micro-batches than stages, every micro-batch of
 * the step is in flight on the first stage at its peak, so its activations
 * are those of the whole batch: the stage's memory is that of a model of
 * ceil(L / pp) layers (with the embedding) running the whole batch, less the
 * logits, which live on the last stage. */
static uly_model rsa_stage_model(const uly_model *m)
{
    uly_model s = *m;
    s.layers = (m->layers + RSA_PP - 1) / RSA_PP;
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
static double stage_alloc_mib(rp_ctx *c, const uly_model *stage, const uly_layout *l, int64_t seq, int64_t batch,
                              char *why, size_t why_n)
{
    const uly_cluster *p100 = &c->cluster[RP_PAPER_RSA];
    uly_workload w = rsa_workload(seq, batch);
    uly_result *r = malloc(sizeof *r);
    if (!r) return NAN;
    double v = NAN;
    why[0] = 0;
    if (uly_evaluate(stage, &w, p100, l, &c->plan, r) == ULY_OK) {
        const double out_bytes = (double)uly_dtype_bytes(w.dtype) * (double)batch * (double)c->plan.act_tokens *
                                 (double)stage->hidden;
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
static double full_tokens_per_s(rp_ctx *c, const uly_layout *l, int64_t seq, int64_t batch)
{
    const uly_cluster *p100 = &c->cluster[RP_PAPER_RSA];
    uly_workload w = rsa_workload(seq, batch);
    uly_result *r = malloc(sizeof *r);
    if (!r) return NAN;
    double v = NAN;
    if (uly_evaluate(&c->bert, &w, p100, l, &c->plan, r) == ULY_OK && r->time.step_s > 0)
        v = r->time.tokens_per_s;
    free(r);
    return v;
}

static int rsa_table4(rp_ctx *c)
{
    const char *exp = rp_experiments[RP_EXP_RSA_TABLE4].id, *acc = rp_accepts[RP_ACC_RSA_TABLE4].id;
    const uly_cluster *p100 = &c->cluster[RP_PAPER_RSA];
    const char *sp_name = sim_strategy_name(ULY_STRAT_RSA), *tp_name = sim_strategy_name(ULY_STRAT_MEGATRON_TP);
    const uly_model stage = rsa_stage_model(&c->bert);
    for (int i = 0; i < N_RSA_PUB; i++) {
        const int64_t p = rsa_pub[i].p, b = rsa_pub[i].batch, n = rsa_pub[i].seq;
        uly_layout ls, lt;
        uly_layout_init(&ls, ULY_STRAT_RSA, 1, p, 1, 1);
        uly_layout_init(&lt, ULY_STRAT_MEGATRON_TP, 1, 1, p, 1);
        char why_s[256], why_t[256];
        const double sp = stage_alloc_mib(c, &stage, &ls, n, b, why_s, sizeof why_s);
        const double tp = stage_alloc_mib(c, &stage, &lt, n, b, why_t, sizeof why_t);
        char tag[40];
        SETF(tag, "P%lld.b%lld.n%lld", (long long)p, (long long)b, (long long)n);

        /* the paper's empty cell: out of memory, a yes/no */
        const int oom_cell = isnan(rsa_pub[i].tp_mem);
        rp_row *x = oom_cell ? rp_row_add(&c->r, exp, acc, "yes/no", RP_SAME, 0, 1)
                             : rp_row_add(&c->r, exp, acc, "MiB", RP_WITHIN, 0.10, rsa_pub[i].tp_mem);
        if (!x) return 1;
        SETF(x->id, "%s.tp_mem", tag);
        SETF(x->setup, "%s tp%lld, stage of %lld layers, fp32", tp_name, (long long)p, (long long)stage.layers);
        if (oom_cell) {
            SETF(x->label, "TP %lld, batch %lld, seq %lld: out of memory (1 yes, 0 no)", (long long)p, (long long)b,
                 (long long)n);
            if (!isnan(tp)) x->pred = tp * 1048576.0 + p100->gpu.reserved_bytes > p100->gpu.hbm_bytes ? 1 : 0;
        } else {
            SETF(x->label, "TP %lld, batch %lld, seq %lld: memory per GPU", (long long)p, (long long)b, (long long)n);
            x->pred = tp;
        }
        if (isnan(tp)) SETF(x->note, "the model has no valid layout: %s", why_t);
        rp_row_judge(x);

        rp_row *y = rp_row_add(&c->r, exp, acc, "MiB", RP_WITHIN, 0.10, rsa_pub[i].sp_mem);
        if (!y) return 1;
        SETF(y->id, "%s.sp_mem", tag);
        SETF(y->label, "SP %lld, batch %lld, seq %lld: memory per GPU", (long long)p, (long long)b, (long long)n);
        SETF(y->setup, "%s r%lld, stage of %lld layers, fp32", sp_name, (long long)p, (long long)stage.layers);
        y->pred = sp;
        if (isnan(sp)) SETF(y->note, "the model has no valid layout: %s", why_s);
        rp_row_judge(y);

        /* throughput: SP over TP */
        const double ts = full_tokens_per_s(c, &ls, n, b), tt = full_tokens_per_s(c, &lt, n, b);
        rp_row *z = rp_row_add(&c->r, exp, NULL, "x", RP_INFO, 0, NAN);
        if (!z) return 1;
        SETF(z->id, "%s.tokens_ratio", tag);
        SETF(z->label, "P %lld, batch %lld, seq %lld: tokens/s of SP over TP", (long long)p, (long long)b,
             (long long)n);
        if (!isnan(rsa_pub[i].tp_tok)) z->pub = rsa_pub[i].sp_tok / rsa_pub[i].tp_tok;
        if (!isnan(ts) && !isnan(tt)) z->pred = ts / tt;
        SETF(z->setup, "whole model on %lld GPUs without the pipeline: only the ratio is comparable", (long long)p);
        rp_row_judge(z);

        if (c->n_rsa_tab < (int)(sizeof c->rsa_tab / sizeof c->rsa_tab[0])) {
            int k = c->n_rsa_tab++;
            c->rsa_tab[k].p = p;
            c->rsa_tab[k].batch = b;
            c->rsa_tab[k].seq = n;
            c->rsa_tab[k].tp_pub = rsa_pub[i].tp_mem;
            c->rsa_tab[k].tp_pred = tp;
            c->rsa_tab[k].sp_pub = rsa_pub[i].sp_mem;
            c->rsa_tab[k].sp_pred = sp;
        }
    }
    return 0;
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
