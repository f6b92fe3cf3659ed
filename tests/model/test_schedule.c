/* The schedule (uly_plan_price) on a tiny model and a cluster with round
 * rates (fixtures.h: fx_tiny, fx_unit), every expectation worked out here by
 * hand: compute at 1e12 FLOP/s, memory-bound ops free, no link latency, 1e9
 * B/s inside a node. Checked: an all-to-all on the critical path adds its
 * full time; a ring hop hides under its attention block when the block is
 * longer and shows by the difference when it is shorter, and shows in part
 * or whole on an executor that overlaps less (the cluster's overlap), with
 * the compute under it slowed by the GPU's comm_slowdown; ZeRO-3's prefetch
 * hides under a phase's compute up to that compute; the per-step gradient
 * reduction hides under the last micro-batch's backward only; the step is
 * slots x (stage layers x (fwd + bwd) + per micro-batch) + per step; tokens/s,
 * TFLOP/s and MFU from model FLOPs.
 *
 * Shape (fx_tiny): L 2, h 64, a = k = 4, d 16, f 256, V 1000; N 1024, b 1,
 * bf16 (2 bytes), non-causal, flash, no recompute. FLOPs of one layer for T
 * tokens on a rank holding all weights: GEMMs 2 T (4h^2 + 2hf) = 2 T 49152
 * forward, twice that backward; attention 4 b heads q kv d forward, 2.5x
 * that backward (flash). */
#include "fixtures.h"

static uly_plan plan;

static int eval(const uly_model *m, const uly_workload *w, const uly_cluster *c, const uly_layout *l, uly_result *r)
{
    const int st = (int)uly_evaluate(m, w, c, l, &plan, r);
    CHECK(st == 0 && r->feasible, "evaluate %s u%lld r%lld dp%lld pp%lld: status %d, feasible %d",
          uly_strategy_get(l->strategy)->name, (long long)l->ulysses, (long long)l->ring, (long long)l->dp,
          (long long)l->pp, st, r->feasible);
    return st;
}

/* evaluates on fx_unit(1) with in-node links of intra_bw B/s */
static int eval_bw(const uly_model *m, const uly_workload *w, const uly_layout *l, double intra_bw, uly_result *r)
{
    uly_cluster c = fx_unit(1);
    c.intra_bw_Bps = intra_bw;
    return eval(m, w, &c, l, r);
}

/* index of the first op of `type` in `phase` (not a recompute), -1 if none */
static int op_index(uly_op_type type, uly_phase phase)
{
    for (int i = 0; i < plan.n_ops; i++)
        if (plan.ops[i].type == type && plan.ops[i].phase == phase && !plan.ops[i].recompute) return i;
    return -1;
}

#define NEAR(got, want, what)                                                                                          \
    CHECK(fx_close((got), (want), 1e-9), "%s: %.10g, want %.10g", (what), (double)(got), (double)(want))

static uly_workload work(void)
{
    uly_workload w = fx_work(1024);
    w.causal = 0;
    w.recompute = ULY_RECOMPUTE_NONE;
    w.zero_stage = 0;
    w.overlap_grad_reduce = 1; /* gradient reduction on its own stream (test_step_passes.c: the defaults) */
    return w;
}

/* Ulysses u = 2 on one node: four all-to-alls each way on the critical path. */
static void ulysses_critical_path(void)
{
    const uly_model m = fx_tiny();
    const uly_cluster c = fx_unit(1);
    const uly_workload w = work();
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 2, 1, 1, 1);
    uly_result r;
    if (eval(&m, &w, &c, &l, &r)) return;
    /* T = 512 tokens per rank; attention: a/u = 2 heads over all 1024:
     * fwd GEMMs 2 x 512 x 49152 = 50,331,648; attention 4 x 2 x 1024^2 x 16
     * = 134,217,728: 184,549,376 FLOPs = 1.84549376e-4 s.
     * bwd: 2 x 50,331,648 + 2.5 x 134,217,728 = 436,207,616 = 4.36207616e-4 s.
     * Each all-to-all sends (u-1) blocks of b T (a/u) d beta = 512 x 2 x 16 x 2
     * = 32,768 B: 3.2768e-5 s at 1e9 B/s; four per phase: 1.31072e-4 s. */
    const double a2a = 3.2768e-5;
    NEAR(r.op_time_s[op_index(ULY_OPT_A2A_Q, ULY_PHASE_FWD)], a2a, "a2a_q");
    NEAR(r.op_exposed_s[op_index(ULY_OPT_A2A_O, ULY_PHASE_FWD)], a2a, "a2a_o exposed in full");
    NEAR(r.op_exposed_s[op_index(ULY_OPT_A2A_DQ, ULY_PHASE_BWD)], a2a, "a2a_dq exposed in full");
    NEAR(r.time.layer_fwd_s, 1.84549376e-4 + 4 * a2a, "ulysses layer fwd");  /* 3.15621376e-4 */
    NEAR(r.time.layer_bwd_s, 4.36207616e-4 + 4 * a2a, "ulysses layer bwd");  /* 5.67279616e-4 */
    NEAR(r.time.compute_s, 1.84549376e-4 + 4.36207616e-4, "ulysses compute");
    NEAR(r.time.comm_exposed_s, 8 * a2a, "ulysses exposed comm");
    CHECK(r.time.comm_overlapped_s == 0, "ulysses hides nothing: %g", r.time.comm_overlapped_s);
    /* per micro-batch: the logits GEMM, b T x V x h, 2 x 512 x 1000 x 64 =
     * 65,536,000 FLOPs forward, twice that backward: 196,608,000 = 1.96608e-4 s */
    NEAR(r.time.model_s, 1.96608e-4, "ulysses model ops");
    /* ZeRO-0 over the data x sequence group (u 2 x dp 1 = 2): one all-reduce
     * of the padded shard ceil(226624 / 2) = 113,312 parameters, 2 (G-1) x
     * 113,312 x 2 = 453,248 B = 4.53248e-4 s. The backward of the last
     * micro-batch, L x 5.67279616e-4 = 1.134559232e-3 s, would hide it, but
     * the whole model is one DeepSpeed bucket (5e8 elements): its reduction
     * starts when backward ends, all of it exposed */
    NEAR(r.op_time_s[op_index(ULY_OPT_DP_ALLREDUCE_GRAD, ULY_PHASE_STEP)], 4.53248e-4, "dp all-reduce");
    NEAR(r.op_exposed_s[op_index(ULY_OPT_DP_ALLREDUCE_GRAD, ULY_PHASE_STEP)], 4.53248e-4, "dp all-reduce: one bucket, exposed");
    NEAR(r.time.step_fixed_s, 4.53248e-4, "per step: the all-reduce");
    /* one micro-batch, one slot: 2 x (3.15621376e-4 + 5.67279616e-4) +
     * 1.96608e-4 + 4.53248e-4 = 2.415657984e-3 s */
    const double step = 2.415657984e-3;
    NEAR(r.time.slots, 1.0, "slots");
    NEAR(r.time.step_s, step, "ulysses step");
    NEAR(r.time.tokens_per_s, 1024.0 / step, "ulysses tokens/s");
    /* model FLOPs of the sequence: 3 (L (2 N 49152 + 4 N^2 a d) + 2 N h V)
     * = 3 (2 (100,663,296 + 268,435,456) + 131,072,000) = 2,607,808,512 */
    const double mf = 2607808512.0;
    NEAR(r.time.model_flops, mf, "model FLOPs");
    NEAR(r.time.mfu, mf / (step * 2 * 1e12), "ulysses MFU");
    NEAR(r.time.tflops_per_gpu, mf / step / 2 / 1e12, "ulysses TFLOP/s per GPU");
    /* hardware FLOPs: both ranks run 2 layers of (184,549,376 + 436,207,616)
     * and the logits 196,608,000: 2 x (2 x 620,756,992 + 196,608,000) */
    NEAR(r.time.hw_flops, 2.0 * (2.0 * 620756992.0 + 196608000.0), "hardware FLOPs");
}

/* Ring r = 2, non-causal: two blocks of T = 512 keys for all 4 heads; one
 * hop of K,V per phase (ring_kv), and in backward the dK,dV accumulators
 * (ring_dkv) beside it. A step costs max(block, hops). */
/* attention fwd: 4 x 4 x 512 x 512 x 16 x 2 blocks = 134,217,728 FLOPs,
 * 6.7108864e-5 s a block; bwd 2.5x: 1.6777216e-4 s a block. GEMMs as
 * Ulysses' (T = 512): 5.0331648e-5 s fwd, 1.00663296e-4 s bwd. A hop
 * moves K and V of the block: 2 x 512 x 4 x 16 x 2 = 131,072 B. */
static const double gemm_f = 5.0331648e-5, gemm_b = 1.00663296e-4, blk_f = 6.7108864e-5, blk_b = 1.6777216e-4;

static uly_layout ring2_layout(void)
{
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_RING, 1, 2, 1, 1);
    return l;
}

static void ring_hidden_or_exposed(void)
{
    const uly_model m = fx_tiny();
    const uly_workload w = work();
    const uly_layout l = ring2_layout();
    for (int fast = 0; fast < 2; fast++) {
        const double bw = fast ? 4e9 : 1e9;
        uly_result r;
        if (eval_bw(&m, &w, &l, bw, &r)) return;
        const double hop = 131072.0 / bw; /* 1.31072e-4 s, or 3.2768e-5 s at 4e9 */
        const int kv = op_index(ULY_OPT_RING_KV, ULY_PHASE_FWD);
        NEAR(r.op_time_s[kv], hop, "ring_kv");
        if (fast) {
            /* 3.2768e-5 < 6.7108864e-5 and 2 x 3.2768e-5 < 1.6777216e-4: hidden */
            CHECK(r.op_exposed_s[kv] == 0, "fast ring: hop hidden, exposed %g", r.op_exposed_s[kv]);
            NEAR(r.time.layer_fwd_s, gemm_f + 2 * blk_f, "fast ring layer fwd");
            NEAR(r.time.layer_bwd_s, gemm_b + 2 * blk_b, "fast ring layer bwd");
            CHECK(r.time.comm_exposed_s == 0, "fast ring: exposed %g", r.time.comm_exposed_s);
            NEAR(r.time.comm_overlapped_s, 3 * hop, "fast ring overlapped");
        } else {
            /* fwd: 1.31072e-4 - 6.7108864e-5 = 6.3963136e-5 s shows; bwd:
             * 2 x 1.31072e-4 - 1.6777216e-4 = 9.437184e-5 s */
            const double ef = 6.3963136e-5, eb = 9.437184e-5;
            NEAR(r.op_exposed_s[kv], ef, "slow ring: ring_kv exposed by the difference");
            NEAR(r.time.layer_fwd_s, gemm_f + 2 * blk_f + ef, "slow ring layer fwd"); /* 2.48512512e-4 */
            NEAR(r.time.layer_bwd_s, gemm_b + 2 * blk_b + eb, "slow ring layer bwd"); /* 5.30579456e-4 */
            NEAR(r.time.comm_exposed_s, ef + eb, "slow ring exposed");
            NEAR(r.time.comm_overlapped_s, 3 * hop - ef - eb, "slow ring overlapped");
        }
    }
}

/* The same fast ring (4e9 B/s: every hop shorter than its block) on
 * executors that overlap less. overlap 0 (a host where nothing drives the
 * transfer while attention runs): every hop shows in full, fwd 1 hop, bwd 2
 * (ring_kv and ring_dkv). overlap 0.5: half of each hop hides. A GPU whose
 * compute slows by 10% under a transfer, full overlap: each hidden hop
 * stretches its block by 10% of the hop. */
static void ring_partial_overlap(void)
{
    const uly_model m = fx_tiny();
    const uly_workload w = work();
    const uly_layout l = ring2_layout();
    const double hop = 131072.0 / 4e9; /* 3.2768e-5 s */
    const double overlap[3] = {0, 0.5, 1}, slowdown[3] = {0, 0, 0.1};
    for (int k = 0; k < 3; k++) {
        uly_cluster c = fx_unit(1);
        c.intra_bw_Bps = 4e9;
        c.overlap_miss = 1 - overlap[k];
        c.gpu.comm_slowdown = slowdown[k];
        uly_result r;
        if (eval(&m, &w, &c, &l, &r)) return;
        const double shown = (1 - overlap[k]) * hop;    /* per hop: exposed */
        const double slow = slowdown[k] * (hop - shown); /* per hop: the block under it, slowed */
        const int kv = op_index(ULY_OPT_RING_KV, ULY_PHASE_FWD);
        char what[64];
        snprintf(what, sizeof what, "overlap %g slowdown %g", overlap[k], slowdown[k]);
        NEAR(r.op_time_s[kv], hop, what);
        NEAR(r.op_exposed_s[kv], shown, what);
        NEAR(r.op_time_s[op_index(ULY_OPT_ATTN_FWD, ULY_PHASE_FWD)], 2 * blk_f + slow, what);
        NEAR(r.time.layer_fwd_s, gemm_f + 2 * blk_f + shown + slow, what);
        NEAR(r.time.layer_bwd_s, gemm_b + 2 * blk_b + 2 * shown + 2 * slow, what);
        NEAR(r.time.comm_exposed_s, 3 * shown, what);
        NEAR(r.time.comm_overlapped_s, 3 * (hop - shown), what);
    }
    /* overlap 0 by hand: fwd 5.0331648e-5 + 1.34217728e-4 + 3.2768e-5 */
    uly_cluster c = fx_unit(1);
    c.intra_bw_Bps = 4e9;
    c.overlap_miss = 1;
    uly_result r;
    if (eval(&m, &w, &c, &l, &r)) return;
    NEAR(r.time.layer_fwd_s, 2.17317376e-4, "no overlap: the hop fully exposed");
}

/* Data parallel only, Ulysses u = 1 x dp 2: T = 1024 tokens on each rank,
 * fwd 2 x 1024 x 49152 + 4 x 4 x 1024^2 x 16 = 369,098,752 FLOPs =
 * 3.69098752e-4 s; bwd 2 x 100,663,296 + 2.5 x 268,435,456 = 872,415,232 =
 * 8.72415232e-4 s; no communication inside the layer. */
static const double dp2_fwd_s = 3.69098752e-4, dp2_bwd_s = 8.72415232e-4;
static uly_layout dp2_layout(void)
{
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 1, 1, 1, 2);
    return l;
}

/* u 1 x dp 2 under ZeRO-3: each layer's weights gathered before its
 * forward and again before its backward, its gradients reduce-scattered, all
 * prefetched under the phase's compute. A gather or reduce-scatter of a
 * layer over G = 2 sends (G-1) ceil(49280/2) x 2 = 49,280 B; bwd has two. */
static void zero3_prefetch(void)
{
    const uly_model m = fx_tiny();
    uly_workload w = work();
    w.zero_stage = 3;
    const uly_layout l = dp2_layout();
    for (int slow = 0; slow < 2; slow++) {
        const double bw = slow ? 1e8 : 1e9;
        uly_result r;
        if (eval_bw(&m, &w, &l, bw, &r)) return;
        const double g = 49280.0 / bw; /* 4.928e-5 s, or 4.928e-4 s at 1e8 */
        NEAR(r.op_time_s[op_index(ULY_OPT_ZERO_GATHER_W, ULY_PHASE_FWD)], g, "zero-3 gather");
        if (!slow) {
            /* 4.928e-5 < 3.69e-4 and 9.856e-5 < 8.72e-4: hidden */
            NEAR(r.time.layer_fwd_s, dp2_fwd_s, "zero-3 hidden: fwd");
            NEAR(r.time.layer_bwd_s, dp2_bwd_s, "zero-3 hidden: bwd");
            NEAR(r.time.comm_overlapped_s, 3 * g, "zero-3 hidden: overlapped");
            CHECK(r.time.comm_exposed_s == 0, "zero-3 hidden: exposed %g", r.time.comm_exposed_s);
        } else {
            /* fwd: 4.928e-4 outlasts 3.69098752e-4 by 1.23701248e-4; bwd:
             * 9.856e-4 outlasts 8.72415232e-4 by 1.13184768e-4: the phase
             * takes as long as its ZeRO traffic */
            NEAR(r.time.layer_fwd_s, g, "zero-3 exposed: fwd");
            NEAR(r.time.layer_bwd_s, 2 * g, "zero-3 exposed: bwd");
            NEAR(r.time.comm_exposed_s, 1.23701248e-4 + 1.13184768e-4, "zero-3 exposed");
            NEAR(r.time.comm_overlapped_s, dp2_fwd_s + dp2_bwd_s, "zero-3 overlapped: up to the compute");
            NEAR(r.op_exposed_s[op_index(ULY_OPT_ZERO_GATHER_W, ULY_PHASE_FWD)], 1.23701248e-4,
                 "zero-3 fwd gather exposed");
        }
    }
}

/* u 1 x dp 2, global batch 8: 4 micro-batches per step. The gradient
 * reduction hides under one micro-batch's backward only. */
static void per_step_and_slots(void)
{
    const uly_model m = fx_tiny();
    uly_workload w = work();
    w.global_batch = 8;
    const uly_layout l = dp2_layout();
    /* logits: 2 x 1024 x 1000 x 64 x 3 = 393,216,000 FLOPs = 3.93216e-4 s */
    const double model_s = 3.93216e-4;
    /* model FLOPs: 8 sequences of 869,269,504 x 3 */
    const double mf = 8.0 * 3.0 * 869269504.0;
    {
        /* ZeRO-0 at 1e8 B/s: the all-reduce, 453,248 B = 4.53248e-3 s,
         * outlasts the last backward, L x 8.72415232e-4 = 1.744830464e-3 s;
         * and the whole model being one bucket, none of it runs beside
         * backward: all exposed */
        uly_result r;
        if (eval_bw(&m, &w, &l, 1e8, &r)) return;
        const double fixed = 4.53248e-3;
        CHECK(r.time.micro_steps == 4, "micro-steps %lld, want 8 / (1 x 2) = 4", (long long)r.time.micro_steps);
        NEAR(r.time.slots, 4.0, "slots without a pipeline");
        NEAR(r.time.layer_fwd_s, dp2_fwd_s, "dp layer fwd");
        NEAR(r.time.layer_bwd_s, dp2_bwd_s, "dp layer bwd");
        NEAR(r.time.model_s, model_s, "dp model ops");
        NEAR(r.time.step_fixed_s, fixed, "zero-0 step fixed: the all-reduce beyond the last backward");
        NEAR(r.op_exposed_s[op_index(ULY_OPT_DP_ALLREDUCE_GRAD, ULY_PHASE_STEP)], fixed, "all-reduce exposed");
        /* 4 x (2 x (3.69098752e-4 + 8.72415232e-4) + 3.93216e-4) + 4.53248e-3
         * = 4 x 2.876243968e-3 + 4.53248e-3 = 1.6037455872e-2 s */
        const double step = 1.6037455872e-2;
        NEAR(r.time.step_s, step, "dp step");
        NEAR(r.time.tokens_per_s, 8.0 * 1024.0 / step, "dp tokens/s");
        NEAR(r.time.mfu, mf / (step * 2 * 1e12), "dp MFU");
    }
    {
        /* ZeRO-1 at 1e9 B/s: the gradients' reduce-scatter, (G-1) 113,312 x 2
         * = 226,624 B = 2.26624e-4 s, one bucket, after the last backward;
         * the updated shards' all-gather, as many bytes, after it in full */
        w.zero_stage = 1;
        const uly_cluster c = fx_unit(1);
        uly_result r;
        if (eval(&m, &w, &c, &l, &r)) return;
        NEAR(r.op_exposed_s[op_index(ULY_OPT_ZERO_RS_GRAD, ULY_PHASE_STEP)], 2.26624e-4, "zero-1 reduce-scatter: one bucket");
        NEAR(r.time.step_fixed_s, 2 * 2.26624e-4, "zero-1 step fixed: the reduce-scatter and the all-gather");
        NEAR(r.time.step_s, 4 * (2 * (dp2_fwd_s + dp2_bwd_s) + model_s) + 2 * 2.26624e-4, "zero-1 step");
    }
}

/* Two pipeline stages of one layer each (u 1, dp 1, pp 2), 4 micro-batches:
 * 4 + 2 - 1 = 5 slots of the last stage: its layer, the logits and the two
 * stage transfers of b N h x 2 = 131,072 B each, 1.31072e-4 s at 1e9 B/s. */
static void pipeline_slots(void)
{
    const uly_model m = fx_tiny();
    uly_workload w = work();
    w.global_batch = 4;
    const uly_cluster c = fx_unit(1);
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 1, 1, 1, 1);
    l.pp = 2;
    uly_result r;
    if (eval(&m, &w, &c, &l, &r)) return;
    CHECK(r.time.stage_layers == 1, "stage layers %lld, want 1", (long long)r.time.stage_layers);
    NEAR(r.time.slots, 5.0, "pipeline slots");
    NEAR(r.time.pp_bubble, 1.0 / 5.0, "pipeline bubble");
    NEAR(r.time.model_s, 3.93216e-4 + 2 * 1.31072e-4, "pipeline per micro-batch");
    /* 5 x (1 x (3.69098752e-4 + 8.72415232e-4) + 3.93216e-4 + 2.62144e-4)
     * = 5 x 1.896873984e-3 = 9.48436992e-3 s */
    NEAR(r.time.step_s, 9.48436992e-3, "pipeline step");
    NEAR(r.time.tokens_per_s, 4.0 * 1024.0 / 9.48436992e-3, "pipeline tokens/s");
}

int main(void)
{
    ulysses_critical_path();
    ring_hidden_or_exposed();
    ring_partial_overlap();
    zero3_prefetch();
    per_step_and_slots();
    pipeline_slots();
    FX_DONE();
}
