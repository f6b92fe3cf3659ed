/* What the frameworks run besides the layer's GEMMs and flash attention,
 * each against an expectation worked out here by hand on the tiny model
 * (fixtures.h: fx_tiny, h 64, a 4, d 16, N 1024, b 1, bf16 or fp16: 2 bytes
 * per element) and a unit cluster (1e12 FLOP/s at efficiency 1, no link
 * latency) given a finite HBM bandwidth:
 *   materialised attention (Megatron-LM's CoreAttention): each score GEMM is
 *   bound by its FLOPs or by its traffic over the score block, whichever is
 *   longer, and the element-wise kernels (fused softmax; the attention
 *   dropout when the model has one) add their passes over the block;
 *   the optimizer step (Megatron-LM's mixed-precision optimizer): unscale
 *   (fp16 only), gradient norm, Adam, the cast back to half precision, and
 *   the gradient buffer zeroed;
 *   the data-parallel gradient reduction overlaps backward only on its own
 *   stream: Megatron-LM's --overlap-grad-reduce, DeepSpeed's overlap_comm
 *   (default off below ZeRO-3), FSDP always;
 *   Megatron-LM's main-gradient accumulation per layer and micro-batch,
 *   fused into the weight-gradient GEMMs or an add per parameter;
 *   a biased model's bias kernels under Megatron-LM's local layers. */
#include "fixtures.h"

static uly_plan plan;

#define NEAR(got, want, what)                                                                                          \
    CHECK(fx_close((got), (want), 1e-9), "%s: %.10g, want %.10g", (what), (double)(got), (double)(want))

static int eval(const uly_model *m, const uly_workload *w, const uly_cluster *c, int64_t dp, uly_result *r)
{
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 1, 1, 1, dp);
    const int st = (int)uly_evaluate(m, w, c, &l, &plan, r);
    CHECK(st == 0 && r->feasible, "evaluate dp %lld: status %d, feasible %d", (long long)dp, st, r->feasible);
    return st;
}

static double op_time(const uly_result *r, uly_op_type type, uly_phase phase)
{
    for (int i = 0; i < plan.n_ops; i++)
        if (plan.ops[i].type == type && plan.ops[i].phase == phase && !plan.ops[i].recompute) return r->op_time_s[i];
    CHECK(0, "no %s op in phase %d", uly_op_type_name(type), (int)phase);
    return -1;
}

static double op_exposed(const uly_result *r, uly_op_type type, uly_phase phase)
{
    for (int i = 0; i < plan.n_ops; i++)
        if (plan.ops[i].type == type && plan.ops[i].phase == phase && !plan.ops[i].recompute)
            return r->op_exposed_s[i];
    CHECK(0, "no %s op in phase %d", uly_op_type_name(type), (int)phase);
    return -1;
}

static uly_workload work(void)
{
    uly_workload w = fx_work(1024);
    w.causal = 0;
    w.recompute = ULY_RECOMPUTE_NONE;
    w.zero_stage = 0;
    return w;
}

/* One rank, 4 heads of 1024 x 1024: S = 4,194,304 scores, 2 bytes each.
 * Forward: 4 S d = 268,435,456 FLOPs (2.68435456e-4 s at 1e12); the score
 * GEMMs move 2 x 2 S = 16,777,216 B (QK^T writes, PV reads). Backward:
 * twice the FLOPs (5.36870912e-4 s) and 4 x 2 S = 33,554,432 B. Element-wise:
 * softmax 2 x 2 S forward (read, write), 3 x 2 S backward (probabilities,
 * their gradient, the scores' gradient); dropout 2 x 2 + 1 = 5 S each way
 * (read, write, 1-byte mask; backward reads gradient and mask, writes one).
 * Layout copies over the 4 x 1024 x 16 = 65,536-element context: its
 * permute to [s, b, h] forward (read, write: 2 x 2 x 65,536 = C); backward
 * the gradient's permute (C) and the cat of the Q, K and V gradients into
 * the fused projection's gradient (3 C: 4 heads of K and V as of Q). Mutants
 * tried: the cat's K and V left out (1 C): fails; no copies: fails. */
static void materialised_attention(void)
{
    const double S = 4194304.0, C = 2.0 * 2.0 * 4 * 1024 * 16;
    for (int drop = 0; drop <= 1; drop++) {
        uly_model m = fx_tiny();
        m.dropout = drop;
        uly_workload w = work();
        w.flash = 0;
        uly_cluster c = fx_unit(1);
        c.gpu.hbm_bw_Bps = 1e10; /* memory-bound: 16,777,216 B take 1.6777216e-3 s */
        uly_result r;
        if (eval(&m, &w, &c, 1, &r)) return;
        const double fwd = 4 * S / 1e10 + (4 * S + (drop ? 5 * S : 0) + C) / 1e10;
        const double bwd = 8 * S / 1e10 + (6 * S + (drop ? 5 * S : 0) + C + 3 * C) / 1e10;
        NEAR(op_time(&r, ULY_OPT_ATTN_FWD, ULY_PHASE_FWD), fwd, drop ? "memory-bound fwd, dropout" : "memory-bound fwd");
        NEAR(op_time(&r, ULY_OPT_ATTN_BWD, ULY_PHASE_BWD), bwd, drop ? "memory-bound bwd, dropout" : "memory-bound bwd");
        /* at 1e13 B/s the GEMMs' FLOPs outlast their traffic (1.6777216e-6 s) */
        c.gpu.hbm_bw_Bps = 1e13;
        if (eval(&m, &w, &c, 1, &r)) return;
        NEAR(op_time(&r, ULY_OPT_ATTN_FWD, ULY_PHASE_FWD), 2.68435456e-4 + (4 * S + (drop ? 5 * S : 0) + C) / 1e13,
             "compute-bound fwd");
        NEAR(op_time(&r, ULY_OPT_ATTN_BWD, ULY_PHASE_BWD), 5.36870912e-4 + (6 * S + (drop ? 5 * S : 0) + 4 * C) / 1e13,
             "compute-bound bwd");
    }
}

/* The optimizer's bytes per parameter: deepspeed bf16: 4 + 28 + 6 + 2 =
 * 40 P; deepspeed fp32: 4 + 28 + 4 = 36 P. Megatron-LM under fp16 keeps its
 * main gradients in fp16 (accumulate_allreduce_grads_in_fp32 is off unless
 * asked), so its optimizer first copies them to fp32 (read 2, write 4):
 * 8 + 4 + 28 + (4 + 2) + (2 + 4) over the parameters it updates, plus the
 * 2-byte gradients zeroed over all it holds: 54 P; with
 * --accumulate-allreduce-grads-in-fp32 no copy and 4-byte gradients: 50 P;
 * with its distributed optimizer over dp 2: 52 P / 2 + 2 P = 28 P. Under
 * bf16 its gradients are fp32 (38 P + 4 P = 42 P) unless
 * --grad-reduce-in-bf16 (38 P + 6 P + 2 P = 46 P). Compared as ratios, so
 * the parameter count P need not be restated. */
static void optimizer_passes(void)
{
    const uly_model m = fx_tiny();
    uly_cluster c = fx_unit(1);
    c.gpu.hbm_bw_Bps = 1e10;
    uly_workload w = work();
    uly_result r;
    w.framework = ULY_FW_DEEPSPEED;
    w.dtype = ULY_BF16;
    if (eval(&m, &w, &c, 1, &r)) return;
    const double ds_bf16 = op_time(&r, ULY_OPT_OPTIMIZER, ULY_PHASE_STEP);
    w.dtype = ULY_FP32;
    if (eval(&m, &w, &c, 1, &r)) return;
    NEAR(op_time(&r, ULY_OPT_OPTIMIZER, ULY_PHASE_STEP) / ds_bf16, 36.0 / 40.0, "deepspeed fp32 over bf16");
    w.framework = ULY_FW_MEGATRON;
    w.dtype = ULY_FP16;
    if (eval(&m, &w, &c, 1, &r)) return;
    NEAR(op_time(&r, ULY_OPT_OPTIMIZER, ULY_PHASE_STEP) / ds_bf16, 54.0 / 40.0, "megatron fp16 over deepspeed bf16");
    w.grad_reduce_fp32 = 1;
    if (eval(&m, &w, &c, 1, &r)) return;
    NEAR(op_time(&r, ULY_OPT_OPTIMIZER, ULY_PHASE_STEP) / ds_bf16, 50.0 / 40.0, "megatron fp16, fp32 main grads");
    w.grad_reduce_fp32 = 0;
    w.zero_stage = 1;
    if (eval(&m, &w, &c, 2, &r)) return;
    NEAR(op_time(&r, ULY_OPT_OPTIMIZER, ULY_PHASE_STEP) / ds_bf16, 28.0 / 40.0, "megatron distributed optimizer, dp 2");
    w.zero_stage = 0;
    w.dtype = ULY_BF16;
    if (eval(&m, &w, &c, 1, &r)) return;
    NEAR(op_time(&r, ULY_OPT_OPTIMIZER, ULY_PHASE_STEP) / ds_bf16, 42.0 / 40.0, "megatron bf16");
    w.grad_reduce_fp32 = -1;
    if (eval(&m, &w, &c, 1, &r)) return;
    NEAR(op_time(&r, ULY_OPT_OPTIMIZER, ULY_PHASE_STEP) / ds_bf16, 46.0 / 40.0, "megatron bf16, --grad-reduce-in-bf16");
}

/* dp 2 at 1e8 B/s in the node, one micro-batch. The layer's backward is
 * 8.72415232e-4 s (test_schedule.c), 2 layers: 1.744830464e-3 s.
 * ZeRO-0: the all-reduce of 453,248 B in bf16 takes 4.53248e-3 s (Megatron-LM
 * reduces its fp32 main grads: twice that); overlapped it shows only beyond
 * the last backward, and at least its last bucket, else in full.
 * ZeRO-2: each layer's gradient reduce-scatter, (G-1) ceil(49280/2) x 2 =
 * 49,280 B = 4.928e-4 s, hides under that layer's backward or adds to it. */
static void grad_reduce_overlap(void)
{
    const uly_model m = fx_tiny();
    uly_cluster c = fx_unit(1);
    c.intra_bw_Bps = 1e8;
    uly_workload w = work();
    uly_result r;
    const double bwd = 8.72415232e-4;
    const struct {
        uly_framework fw;
        int ask, want;
    } zero0[] = {{ULY_FW_DEEPSPEED, 0, 0}, {ULY_FW_MEGATRON, 0, 0}, {ULY_FW_FSDP, 0, 1},
                 {ULY_FW_DEEPSPEED, 1, 1}, {ULY_FW_MEGATRON, 1, 1}, {ULY_FW_FSDP, -1, 0}};
    for (size_t i = 0; i < sizeof zero0 / sizeof zero0[0]; i++) {
        w.framework = zero0[i].fw;
        w.overlap_grad_reduce = zero0[i].ask;
        w.zero_stage = 0;
        CHECK(uly_grad_reduce_overlaps(&w) == zero0[i].want, "%s asked %d: overlaps %d, want %d",
              uly_framework_name(zero0[i].fw), zero0[i].ask, uly_grad_reduce_overlaps(&w), zero0[i].want);
        if (eval(&m, &w, &c, 2, &r)) return;
        const double ar = zero0[i].fw == ULY_FW_MEGATRON ? 9.06496e-3 : 4.53248e-3;
        /* the last bucket starts when backward ends: DeepSpeed's (5e8
         * elements) and Megatron-LM's (40M parameters) hold the whole
         * 226,624-parameter model, FSDP's unit a layer's 49,280 */
        const double fb = zero0[i].fw == ULY_FW_FSDP ? 49280.0 / 226624.0 : 1.0;
        const double hid = ar - 2 * bwd > ar * fb ? ar - 2 * bwd : ar * fb;
        NEAR(op_exposed(&r, ULY_OPT_DP_ALLREDUCE_GRAD, ULY_PHASE_STEP), zero0[i].want ? hid : ar,
             "zero-0 all-reduce exposed");
    }
    /* ZeRO-2 and 3 under DeepSpeed: overlap_comm defaults on at stage 3 only */
    w.framework = ULY_FW_DEEPSPEED;
    w.overlap_grad_reduce = 0;
    for (int z = 2; z <= 3; z++) {
        w.zero_stage = z;
        if (eval(&m, &w, &c, 2, &r)) return;
        const double rs = op_exposed(&r, ULY_OPT_ZERO_RS_GRAD, ULY_PHASE_BWD);
        if (z == 3)
            CHECK(rs < 4.928e-4, "zero-3 reduce-scatter overlaps by default: exposed %g of 4.928e-4", rs);
        else
            NEAR(rs, 4.928e-4, "zero-2 reduce-scatter on the critical path by default");
    }
    w.zero_stage = 2;
    w.overlap_grad_reduce = 1;
    if (eval(&m, &w, &c, 2, &r)) return;
    const double hidden = r.time.layer_bwd_s;
    w.overlap_grad_reduce = -1;
    if (eval(&m, &w, &c, 2, &r)) return;
    NEAR(r.time.layer_bwd_s - hidden, 4.928e-4, "zero-2 without overlap: the layer's backward longer by its reduce-scatter");
}

/* The op of a plan of one type (the first), or NULL */
static const uly_op *find_op(uly_op_type type)
{
    for (int i = 0; i < plan.n_ops; i++)
        if (plan.ops[i].type == type) return &plan.ops[i];
    return NULL;
}

/* Megatron-LM's main-gradient accumulation, per layer of the tiny model:
 * its GEMMs' weights h d (2a + 2k) + 2 h f = 16,384 + 32,768 = 49,152,
 * beside 2h = 128 norm gains (t ways: half each at TP 2). Unfused, every
 * parameter's gradient (2 bytes) and main gradient (g) are read and the
 * main gradient written: 2 + 2g a parameter, 6 kernels (4 weights, 2
 * gains). Fused, the weight-gradient GEMM reads and writes g where it wrote
 * 2: 2g - 2 more a weight; the gains are still added apart (2 kernels).
 * g: 2 under fp16 or --grad-reduce-in-bf16, 4 under bf16. At 1e10 B/s the
 * op takes its bytes / 1e10 s, and the step grows by the two layers'
 * difference. DeepSpeed and FSDP plans have no such op. */
static void grad_accum(void)
{
    const uly_model m = fx_tiny();
    uly_cluster c = fx_unit(1);
    c.gpu.hbm_bw_Bps = 1e10;
    uly_workload w = work();
    uly_result r;
    const double lin = 49152.0, gains = 128.0;
    static const struct {
        uly_dtype dt;
        int fusion, grads_fp32;
        double bytes;
        int kernels;
    } cases[] = {
        {ULY_FP16, 0, 0, lin * 2.0 + gains * 6.0, 2},   {ULY_FP16, -1, 0, (lin + gains) * 6.0, 6},
        {ULY_BF16, 1, 0, lin * 6.0 + gains * 10.0, 2},  {ULY_BF16, -1, 0, (lin + gains) * 10.0, 6},
        {ULY_BF16, -1, -1, (lin + gains) * 6.0, 6},     {ULY_FP16, 1, 1, lin * 6.0 + gains * 10.0, 2},
    };
    w.framework = ULY_FW_MEGATRON;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        w.dtype = cases[i].dt;
        w.grad_accum_fusion = cases[i].fusion;
        w.grad_reduce_fp32 = cases[i].grads_fp32;
        if (eval(&m, &w, &c, 1, &r)) return;
        const uly_op *o = find_op(ULY_OPT_GRAD_ACCUM);
        CHECK(o && o->phase == ULY_PHASE_BWD && o->kind == ULY_OP_ELEM, "case %zu: no backward grad_accum op", i);
        if (!o) continue;
        NEAR(o->bytes_touched, cases[i].bytes, "grad_accum bytes");
        CHECK(o->kernels == cases[i].kernels, "case %zu: %d kernels, want %d", i, o->kernels, cases[i].kernels);
        NEAR(r.op_time_s[o->id], cases[i].bytes / 1e10, "grad_accum time");
    }
    /* the step: fp16, unfused against fused, two layers of one micro-batch */
    w.dtype = ULY_FP16, w.grad_reduce_fp32 = 0, w.grad_accum_fusion = 1;
    if (eval(&m, &w, &c, 1, &r)) return;
    const double fused = r.time.step_s;
    w.grad_accum_fusion = -1;
    if (eval(&m, &w, &c, 1, &r)) return;
    NEAR(r.time.step_s - fused, 2.0 * ((lin + gains) * 6.0 - (lin * 2.0 + gains * 6.0)) / 1e10, "unfused step over fused");
    /* TP 2 (megatron-tp): each rank's half */
    w.dtype = ULY_BF16, w.grad_accum_fusion = 0;
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_MEGATRON_TP, 1, 1, 2, 1);
    CHECK(uly_evaluate(&m, &w, &c, &l, &plan, &r) == ULY_OK && r.feasible, "megatron-tp tp 2");
    const uly_op *o = find_op(ULY_OPT_GRAD_ACCUM);
    CHECK(o != NULL, "megatron-tp: no grad_accum op");
    if (o) NEAR(o->bytes_touched, lin / 2.0 * 6.0 + gains / 2.0 * 10.0, "grad_accum bytes at tp 2");
    w.grad_accum_fusion = 0;
    for (uly_framework fw = ULY_FW_DEEPSPEED; fw <= ULY_FW_FSDP; fw = (uly_framework)(fw + 1)) {
        if (fw == ULY_FW_MEGATRON) continue;
        w.framework = fw;
        w.zero_stage = fw == ULY_FW_FSDP ? 3 : 0;
        if (eval(&m, &w, &c, 1, &r)) return;
        CHECK(find_op(ULY_OPT_GRAD_ACCUM) == NULL, "framework %s: a grad_accum op", uly_framework_name(fw));
    }
}

/* The bias kernels of the tiny model (h 64, a = k = 4, d 16, f 256, GELU,
 * N 1024, b 1, 2 bytes an element) under Megatron-LM's local layers:
 * forward, the QKV bias added to the QKV output, (a + 2k) d = 192 columns
 * over t ranks, read and written: 2 x 2 x 1024 x 192 / t; backward, each
 * bias's gradient reduced from its output's gradient, read once: QKV's
 * 1024 x 192 / t, the MLP up-projection's 1024 x 256 / t, and the output
 * projection's and the MLP down-projection's 1024 x 64 each over the tokens
 * whose residual the rank holds (all 1024 under plain TP, 1024 / t under
 * sequence parallelism); 4 kernels (qkv_bias alone: QKV's, 1 kernel).
 * TransformerEngine's layers (the default) fuse them: no op. Full
 * recompute runs the forward's again. */
static void bias_kernels(void)
{
    uly_model m = fx_tiny();
    m.bias = 1;
    uly_cluster c = fx_unit(1);
    c.gpu.hbm_bw_Bps = 1e10;
    uly_workload w = work();
    w.dtype = ULY_BF16;
    w.transformer_impl = ULY_TI_LOCAL;
    static const struct {
        uly_strategy_id s;
        int64_t t;
        int qkv_only;
        double fwd, bwd;
        int kernels;
    } cases[] = {
        {ULY_STRAT_ULYSSES, 1, 0, 4.0 * 1024 * 192, 2.0 * (1024 * 192 + 1024 * 256 + 2 * 1024 * 64), 4},
        {ULY_STRAT_ULYSSES, 1, 1, 4.0 * 1024 * 192, 2.0 * 1024 * 192, 1},
        {ULY_STRAT_MEGATRON_TP, 2, 0, 4.0 * 1024 * 96, 2.0 * (1024 * 96 + 1024 * 128 + 2 * 1024 * 64), 4},
        {ULY_STRAT_MEGATRON_SP, 2, 0, 4.0 * 1024 * 96, 2.0 * (1024 * 96 + 1024 * 128 + 2 * 512 * 64), 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        m.bias = !cases[i].qkv_only, m.qkv_bias = cases[i].qkv_only;
        uly_layout l;
        uly_layout_init(&l, cases[i].s, 1, 1, cases[i].t, 1);
        uly_result r;
        CHECK(uly_evaluate(&m, &w, &c, &l, &plan, &r) == ULY_OK && r.feasible, "case %zu: evaluate", i);
        int n_fwd = 0, n_bwd = 0;
        for (int k = 0; k < plan.n_ops; k++) {
            const uly_op *o = &plan.ops[k];
            if (o->type != ULY_OPT_LINEAR_BIAS) continue;
            if (o->phase == ULY_PHASE_FWD) {
                n_fwd++;
                NEAR(o->bytes_touched, cases[i].fwd, "bias forward bytes");
                CHECK(o->kernels == 1, "case %zu: forward %d kernels, want 1", i, o->kernels);
                NEAR(r.op_time_s[k], cases[i].fwd / 1e10, "bias forward time");
            } else {
                n_bwd++;
                NEAR(o->bytes_touched, cases[i].bwd, "bias backward bytes");
                CHECK(o->kernels == cases[i].kernels, "case %zu: backward %d kernels, want %d", i, o->kernels,
                      cases[i].kernels);
            }
        }
        CHECK(n_fwd == 1 && n_bwd == 1, "case %zu: %d forward and %d backward bias ops, want 1 and 1", i, n_fwd, n_bwd);
    }
    /* full recompute: the forward's add again, in backward */
    m.bias = 1, m.qkv_bias = 0;
    w.recompute = ULY_RECOMPUTE_FULL;
    uly_result r;
    if (eval(&m, &w, &c, 1, &r)) return;
    int n = 0;
    for (int k = 0; k < plan.n_ops; k++) n += plan.ops[k].type == ULY_OPT_LINEAR_BIAS;
    CHECK(n == 3, "full recompute: %d bias ops, want 3 (forward, its recompute, backward)", n);
    /* TransformerEngine's layers, and a model without biases: none */
    w.transformer_impl = ULY_TI_TE;
    if (eval(&m, &w, &c, 1, &r)) return;
    CHECK(find_op(ULY_OPT_LINEAR_BIAS) == NULL, "transformer_engine: a bias op");
    w.transformer_impl = ULY_TI_LOCAL;
    m.bias = 0;
    if (eval(&m, &w, &c, 1, &r)) return;
    CHECK(find_op(ULY_OPT_LINEAR_BIAS) == NULL, "no biases: a bias op");
}

int main(void)
{
    materialised_attention();
    optimizer_passes();
    grad_reduce_overlap();
    grad_accum();
    bias_kernels();
    FX_DONE();
}
