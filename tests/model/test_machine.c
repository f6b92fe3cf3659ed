/* How the machine prices work beside the FLOPs (docs/model.md, "Memory-bound
 * ops", "Overlap costs compute", "Fixed costs"): element-wise bytes at the
 * rate of their kernel class, each kernel's launch added to its work, a
 * phase waiting on an eager host that issues its kernels slower than the
 * GPU runs them, and compute slowed beside the transfers it hides, by the
 * tier each transfer crosses. Every expectation is worked out here from the
 * rules as docs/model.md states them, with the kernel counts written out
 * again from Megatron-LM's layer. */
#include "fixtures.h"

static uly_plan plan;

static int find(const uly_plan *p, uly_op_type t, uly_phase ph)
{
    for (int i = 0; i < p->n_ops; i++)
        if (p->ops[i].type == t && p->ops[i].phase == ph && !p->ops[i].recompute) return i;
    return -1;
}

/* the kernels each op launches, as docs/model.md lists them */
static int kernels_of(const uly_op *o)
{
    switch (o->type) {
    case ULY_OPT_LN1: case ULY_OPT_LN2: return 2;
    case ULY_OPT_LN1_BWD: case ULY_OPT_LN2_BWD: return 3;
    case ULY_OPT_MLP_DOWN_BWD: case ULY_OPT_MLP_UP_BWD: case ULY_OPT_OUT_PROJ_BWD: case ULY_OPT_QKV_PROJ_BWD:
    case ULY_OPT_LOGITS_BWD: return 2;
    case ULY_OPT_EMBED: return 3;
    case ULY_OPT_LOSS: return 6;
    case ULY_OPT_OPTIMIZER: return 5;
    case ULY_OPT_ATTN_FWD: return (o->flash ? 1 : 5) * o->steps;
    case ULY_OPT_ATTN_BWD: return (o->flash ? 3 : 8) * o->steps;
    default: return 1;
    }
}

/* element-wise bytes by kernel class, and each kernel's launch */
static void memory_bound_classes(const uly_model *mp)
{
    const uly_model m = *mp;
    uly_result r;
    uly_cluster c = fx_a100(1);
    c.gpu.mem_eff = 0.5; /* what the classes replace: a mutant reading it is caught */
    const double mb[ULY_MB_COUNT] = {[ULY_MB_STREAM] = 0.85, [ULY_MB_NORM] = 0.62, [ULY_MB_NORM_BWD] = 0.57,
                                     [ULY_MB_SOFTMAX] = 0.79, [ULY_MB_OPTIM] = 0.8};
    memcpy(c.gpu.mb_eff, mb, sizeof mb);
    c.gpu.kernel_floor_s[0] = 2.6e-6;
    c.gpu.kernel_floor_s[1] = 1.3e-6;
    uly_workload w = fx_work(8192);
    w.recompute = ULY_RECOMPUTE_NONE;
    w.zero_stage = 1;
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 8, 1, 1, 1);
    for (int graphs = 0; graphs < 2; graphs++) {
        w.cuda_graphs = graphs;
        const double floor = graphs ? 1.3e-6 : 2.6e-6;
        CHECK(uly_evaluate(&m, &w, &c, &l, &plan, &r) == ULY_OK, "evaluate");
        const struct {
            uly_op_type t;
            uly_phase ph;
            double eff;
            int kernels;
        } cases[] = {{ULY_OPT_LN1, ULY_PHASE_FWD, 0.62, 2},       {ULY_OPT_LN2_BWD, ULY_PHASE_BWD, 0.57, 3},
                     {ULY_OPT_MLP_ACT, ULY_PHASE_FWD, 0.85, 1},   {ULY_OPT_MLP_ACT_BWD, ULY_PHASE_BWD, 0.85, 1},
                     {ULY_OPT_LOSS, ULY_PHASE_FWD, 0.79, 6},      {ULY_OPT_EMBED, ULY_PHASE_FWD, 0.85, 3},
                     {ULY_OPT_OPTIMIZER, ULY_PHASE_STEP, 0.8, 5}};
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            const int i = find(&plan, cases[k].t, cases[k].ph);
            CHECK(i >= 0, "%s: not in the plan", uly_op_type_name(cases[k].t));
            if (i < 0) continue;
            const uly_op *o = &plan.ops[i];
            const double want = o->bytes_touched / (2.0e12 * cases[k].eff) * o->crit_factor + cases[k].kernels * floor;
            CHECK(fabs(r.op_time_s[i] / want - 1) < 1e-12, "%s (graphs %d): %.9g s, want %.9g s",
                  uly_op_type_name(cases[k].t), graphs, r.op_time_s[i], want);
        }
        /* a GEMM: its FLOPs at the curve, then its one kernel's launch (two in backward) */
        const int g = find(&plan, ULY_OPT_MLP_UP, ULY_PHASE_FWD), gb = find(&plan, ULY_OPT_MLP_UP_BWD, ULY_PHASE_BWD);
        CHECK(g >= 0 && gb >= 0, "mlp_up ops");
        if (g >= 0 && gb >= 0) {
            const double f = plan.ops[g].flops / (312e12 * 0.8);
            CHECK(fabs(r.op_time_s[g] / (f + floor) - 1) < 1e-12, "mlp_up: %.9g s, want %.9g", r.op_time_s[g], f + floor);
            CHECK(fabs(r.op_time_s[gb] / (2 * f + 2 * floor) - 1) < 1e-12, "mlp_up_bwd: %.9g s, want %.9g",
                  r.op_time_s[gb], 2 * f + 2 * floor);
        }
    }
}

/* the bytes of a norm op, counted from Megatron-LM's layer: the
 * bias-dropout-add is a kernel of its own (read the branch and the
 * residual, write the sum, and with dropout a 1-byte mask), then the norm
 * reads the sum and writes its output; backward reads the gradient and the
 * saved input and writes the input's gradient, sums the residual's two
 * gradients, and with dropout runs the dropout's backward (read the
 * gradient and the mask, write one). Ulysses u = 8: each rank norms 1/8
 * of the 8192 tokens. Mutants tried: 4 beta forward (the sum not read
 * back): fails; the mask left out: fails; dropout's backward left out: fails. */
static void norm_bytes(const uly_model *mp)
{
    uly_cluster c = fx_a100(1);
    uly_workload w = fx_work(8192);
    w.recompute = ULY_RECOMPUTE_NONE;
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 8, 1, 1, 1);
    for (int drop = 0; drop < 2; drop++) {
        uly_model m = *mp;
        m.dropout = drop;
        uly_result r;
        CHECK(uly_evaluate(&m, &w, &c, &l, &plan, &r) == ULY_OK, "evaluate (dropout %d)", drop);
        const double elems = 1.0 * (8192.0 / 8.0) * (double)m.hidden, beta = 2.0;
        const double want_f = (beta + beta + beta + (drop ? 1.0 : 0.0) + beta + beta) * elems;
        const double want_b = (3.0 * beta + 3.0 * beta + (drop ? beta + 1.0 + beta : 0.0)) * elems;
        const int f = find(&plan, ULY_OPT_LN2, ULY_PHASE_FWD), b = find(&plan, ULY_OPT_LN1_BWD, ULY_PHASE_BWD);
        CHECK(f >= 0 && b >= 0, "norm ops in the plan");
        if (f < 0 || b < 0) continue;
        CHECK(fabs(plan.ops[f].bytes_touched / want_f - 1) < 1e-12, "ln2 (dropout %d): %.0f bytes, want %.0f", drop,
              plan.ops[f].bytes_touched, want_f);
        CHECK(fabs(plan.ops[b].bytes_touched / want_b - 1) < 1e-12, "ln1_bwd (dropout %d): %.0f bytes, want %.0f", drop,
              plan.ops[b].bytes_touched, want_b);
    }
}

/* the cross-entropy's bytes per logit, each kernel's passes written out
 * from the three implementations' code (Megatron-Core's
 * vocab_parallel_cross_entropy, its jit-fused functions,
 * TransformerEngine's Triton kernels), in bf16 and in fp32 (no casts).
 * Ulysses u = 8: the rank's 1024 tokens over the whole vocabulary. Mutants
 * tried: the casts left out under bf16: fails; TransformerEngine's
 * backward scaling left out: fails; the old 12 bytes for every kernel: fails. */
static void loss_bytes(const uly_model *mp)
{
    const uly_model m = *mp;
    const uly_cluster c = fx_a100(1);
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 8, 1, 1, 1);
    struct {
        uly_dtype dt;
        uly_ce_impl impl;
        double want; /* bytes per logit */
    } cases[] = {
        /* cast to fp32 (2 + 4), max 4, shift 4 + 4, exp 4 + 4, sum 4, normalise 4 + 4; scale 4 + 4, cast back 4 + 2 */
        {ULY_BF16, ULY_CE_UNFUSED, 6 + 4 + 8 + 8 + 4 + 8 + 8 + 6},
        {ULY_FP32, ULY_CE_UNFUSED, 4 + 8 + 8 + 4 + 8 + 8},
        /* cast with the max (2 + 4), shift-exp-sum 4 + 4, normalise 4 + 4; gradient 4 + 4, cast back 4 + 2 */
        {ULY_BF16, ULY_CE_NATIVE, 6 + 8 + 8 + 8 + 6},
        {ULY_FP32, ULY_CE_NATIVE, 4 + 8 + 8 + 8},
        /* online softmax reads 2, the loss kernel reads 2 and writes the fp32 gradient 4; scale 4 + 4, cast 4 + 2 */
        {ULY_BF16, ULY_CE_TE, 2 + 2 + 4 + 8 + 6},
        {ULY_FP32, ULY_CE_TE, 4 + 4 + 4 + 8},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uly_workload w = fx_work(8192);
        w.dtype = cases[k].dt;
        w.ce_impl = cases[k].impl;
        uly_result r;
        CHECK(uly_evaluate(&m, &w, &c, &l, &plan, &r) == ULY_OK, "evaluate %s %s", uly_dtype_name(w.dtype),
              uly_ce_impl_name(w.ce_impl));
        const int i = find(&plan, ULY_OPT_LOSS, ULY_PHASE_FWD);
        CHECK(i >= 0, "loss in the plan");
        if (i < 0) continue;
        const double want = cases[k].want * (8192.0 / 8.0) * (double)m.vocab;
        CHECK(fabs(plan.ops[i].bytes_touched / want - 1) < 1e-12, "loss %s %s: %.0f bytes, want %.0f",
              uly_dtype_name(w.dtype), uly_ce_impl_name(w.ce_impl), plan.ops[i].bytes_touched, want);
    }
}

/* an eager host slower than the GPU: each phase waits for its
 * kernels' issue (1 ms each here, far above the GPU's work) */
static void host_bound_phases(const uly_model *mp)
{
    const uly_model m = *mp;
    uly_result r;
    uly_cluster c = fx_a100(1);
    uly_workload w = fx_work(1024);
    w.recompute = ULY_RECOMPUTE_NONE;
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 8, 1, 1, 1);
    c.host_launch_s = 1e-3;
    CHECK(uly_evaluate(&m, &w, &c, &l, &plan, &r) == ULY_OK, "evaluate host-bound");
    int kf = 0, kb = 0;
    for (int i = 0; i < plan.n_ops; i++) {
        const uly_op *o = &plan.ops[i];
        if (o->per_model || o->per_step) continue;
        if (o->phase == ULY_PHASE_FWD) kf += kernels_of(o);
        else kb += kernels_of(o);
    }
    CHECK(kf > 10 && fabs(r.time.layer_fwd_s / (kf * 1e-3) - 1) < 1e-12, "host-bound forward %.9g s, want %d kernels x 1 ms",
          r.time.layer_fwd_s, kf);
    CHECK(kb > 10 && fabs(r.time.layer_bwd_s / (kb * 1e-3) - 1) < 1e-12, "host-bound backward %.9g s, want %d kernels x 1 ms",
          r.time.layer_bwd_s, kb);
    /* the host's own work per step, as the user gives it, adds to the step */
    uly_result more;
    w.step_overhead_s = 0.0125;
    CHECK(uly_evaluate(&m, &w, &c, &l, &plan, &more) == ULY_OK, "evaluate with host work");
    CHECK(fabs(more.time.step_s - r.time.step_s - 0.0125) < 1e-12, "host work per step: the step grew %.9g s, want 0.0125",
          more.time.step_s - r.time.step_s);
    w.step_overhead_s = 0;
    /* CUDA graphs: the host issues nothing per kernel, as with no host cost */
    w.cuda_graphs = 1;
    uly_result free_host;
    CHECK(uly_evaluate(&m, &w, &c, &l, &plan, &r) == ULY_OK, "evaluate graphs");
    c.host_launch_s = 0;
    CHECK(uly_evaluate(&m, &w, &c, &l, &plan, &free_host) == ULY_OK, "evaluate no host cost");
    CHECK(r.time.layer_fwd_s == free_host.time.layer_fwd_s && r.time.layer_bwd_s == free_host.time.layer_bwd_s,
          "under CUDA graphs the layer (%.9g + %.9g s) waits on the host (free: %.9g + %.9g s)", r.time.layer_fwd_s,
          r.time.layer_bwd_s, free_host.time.layer_fwd_s, free_host.time.layer_bwd_s);
}

/* compute slowed beside the transfers it hides: Megatron-SP t = 8
 * with its collectives under their GEMMs (in-node, sigma 0.2), and a
 * ring over two nodes under attention (sigma 0.05 for the NIC) */
static void overlap_slowdown_tiers(const uly_model *mp)
{
    const uly_model m = *mp;
    uly_result r;
    uly_cluster c = fx_a100(2);
    uly_workload w = fx_work(32768);
    w.recompute = ULY_RECOMPUTE_NONE;
    w.tp_comm_overlap = 1;
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_MEGATRON_SP, 1, 1, 8, 1);
    uly_result base;
    CHECK(uly_evaluate(&m, &w, &c, &l, &plan, &base) == ULY_OK, "sp sigma 0");
    c.overlap_slowdown[0] = 0.2;
    c.overlap_slowdown[1] = 0.9; /* no in-node transfer may read it */
    CHECK(uly_evaluate(&m, &w, &c, &l, &plan, &r) == ULY_OK, "sp sigma 0.2");
    double hidden = 0;
    for (int i = 0; i < plan.n_ops; i++)
        if (plan.ops[i].kind == ULY_OP_COMM && plan.ops[i].overlaps >= 0) {
            CHECK(plan.ops[i].tiers == ULY_TIER_INTRA, "%s crosses nodes", uly_op_type_name(plan.ops[i].type));
            hidden += base.op_time_s[i] - base.op_exposed_s[i];
        }
    const double grew = (r.time.layer_fwd_s + r.time.layer_bwd_s) - (base.time.layer_fwd_s + base.time.layer_bwd_s);
    CHECK(hidden > 0 && fabs(grew / (0.2 * hidden) - 1) < 1e-9,
          "the GEMMs under TP collectives grew %.9g s, want 0.2 x %.9g s hidden", grew, hidden);
    /* the same GEMM's own time carries its slowdown */
    const int qkv = find(&plan, ULY_OPT_QKV_PROJ, ULY_PHASE_FWD), ag = find(&plan, ULY_OPT_SP_AG_ATTN, ULY_PHASE_FWD);
    CHECK(qkv >= 0 && ag >= 0, "qkv_proj, sp_ag_attn");
    if (qkv >= 0 && ag >= 0) {
        const double h = base.op_time_s[ag] - base.op_exposed_s[ag];
        CHECK(fabs((r.op_time_s[qkv] - base.op_time_s[qkv]) / (0.2 * h) - 1) < 1e-9,
              "qkv_proj slowed %.9g s, want 0.2 x %.9g", r.op_time_s[qkv] - base.op_time_s[qkv], h);
    }
    /* ring attention over two nodes: its hops cross the NIC */
    uly_workload wr = fx_work(262144);
    wr.recompute = ULY_RECOMPUTE_NONE;
    uly_layout lr;
    uly_layout_init(&lr, ULY_STRAT_RING, 1, 16, 1, 1);
    c.overlap_slowdown[0] = 0.9;
    c.overlap_slowdown[1] = 0;
    CHECK(uly_evaluate(&m, &wr, &c, &lr, &plan, &base) == ULY_OK, "ring sigma 0");
    c.overlap_slowdown[1] = 0.05;
    CHECK(uly_evaluate(&m, &wr, &c, &lr, &plan, &r) == ULY_OK, "ring sigma 0.05");
    hidden = 0;
    /* the ring hops under attention, and ZeRO-3's per-layer traffic under its phase */
    for (int i = 0; i < plan.n_ops; i++)
        if (plan.ops[i].kind == ULY_OP_COMM && !plan.ops[i].per_step &&
            (plan.ops[i].overlaps >= 0 || plan.ops[i].overlaps == ULY_OVERLAP_PHASE)) {
            CHECK(plan.ops[i].tiers & ULY_TIER_INTER, "%s stays in a node", uly_op_type_name(plan.ops[i].type));
            hidden += base.op_time_s[i] - base.op_exposed_s[i];
        }
    const double grew_r = (r.time.layer_fwd_s + r.time.layer_bwd_s) - (base.time.layer_fwd_s + base.time.layer_bwd_s);
    CHECK(hidden > 0 && fabs(grew_r / (0.05 * hidden) - 1) < 1e-9,
          "attention under ring hops grew %.9g s, want 0.05 x %.9g s hidden", grew_r, hidden);
}

/* ZeRO-3 at micro-batch 1: DeepSpeed gathers a submodule at a time
 * (one all-gather per weight matrix: Q, K, V, O and the MLP's two),
 * FSDP a layer's flat parameter at once. Over 8 GPUs of one node (ring:
 * 7 steps of latency alpha, n / B for the bytes), the same bytes cost
 * DeepSpeed 6 x 7 alpha + n / B and FSDP 7 alpha + n / B */
static void zero3_gather_messages(const uly_model *mp)
{
    const uly_model m = *mp;
    uly_result r;
    uly_cluster c = fx_a100(1);
    uly_workload w = fx_work(4096);
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 8, 1, 1, 1);
    double t[2] = {0, 0}, n = 0;
    const uly_framework fw[2] = {ULY_FW_DEEPSPEED, ULY_FW_FSDP};
    for (int k = 0; k < 2; k++) {
        w.framework = fw[k];
        CHECK(uly_evaluate(&m, &w, &c, &l, &plan, &r) == ULY_OK, "zero-3 %s", uly_framework_name(fw[k]));
        const int i = find(&plan, ULY_OPT_ZERO_GATHER_W, ULY_PHASE_FWD);
        CHECK(i >= 0, "zero_gather_w");
        if (i < 0) continue;
        t[k] = r.op_time_s[i];
        n = (double)plan.ops[i].bytes_sent;
    }
    const double alpha = 3e-6, B = 300e9;
    CHECK(fabs(t[0] / (6 * 7 * alpha + n / B) - 1) < 1e-12, "deepspeed gather %.9g s, want %.9g", t[0],
          6 * 7 * alpha + n / B);
    CHECK(fabs(t[1] / (7 * alpha + n / B) - 1) < 1e-12, "fsdp gather %.9g s, want %.9g", t[1], 7 * alpha + n / B);
}

/* FSDP2 copies each gathered layer out of its all-gather buffer on the
 * compute stream (split_with_sizes_copy), before the forward and again
 * before the backward: the whole gathered layer read and written, beta
 * bytes a parameter, at the stream class's bandwidth with one kernel's
 * launch; DeepSpeed and Megatron-LM use the gathered buffer in place. The
 * gathered layer is the ZeRO group's padded shards: g x ceil(P_layer / g). */
static void fsdp_copy_out(const uly_model *mp)
{
    const uly_model m = *mp;
    uly_result r;
    uly_cluster c = fx_a100(1);
    c.gpu.mb_eff[ULY_MB_STREAM] = 0.85;
    c.gpu.kernel_floor_s[0] = 2.6e-6;
    uly_workload w = fx_work(4096);
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 8, 1, 1, 1);
    const uly_framework fw[3] = {ULY_FW_FSDP, ULY_FW_DEEPSPEED, ULY_FW_MEGATRON};
    for (int k = 0; k < 3; k++) {
        w.framework = fw[k];
        CHECK(uly_evaluate(&m, &w, &c, &l, &plan, &r) == ULY_OK, "zero-3 %s", uly_framework_name(fw[k]));
        for (int ph = ULY_PHASE_FWD; ph <= ULY_PHASE_BWD; ph++) {
            const int i = find(&plan, ULY_OPT_FSDP_COPY_OUT, (uly_phase)ph);
            if (fw[k] != ULY_FW_FSDP) {
                CHECK(i < 0, "%s copies no gathered layer", uly_framework_name(fw[k]));
                continue;
            }
            CHECK(i >= 0, "fsdp: a copy-out in %s", uly_phase_name((uly_phase)ph));
            if (i < 0) continue;
            const double g = 8, shard = ceil(ceil(plan.layer_params_rank) / g);
            const double bytes = 2.0 * g * shard * 2.0; /* bf16: read and write */
            CHECK(plan.ops[i].bytes_touched == bytes, "copy-out bytes %.17g, want %.17g", plan.ops[i].bytes_touched, bytes);
            const double want = bytes / (2.0e12 * 0.85) + 2.6e-6;
            CHECK(fabs(r.op_time_s[i] / want - 1) < 1e-12, "copy-out %.9g s, want %.9g s", r.op_time_s[i], want);
        }
    }
}

/* Megatron-LM's distributed optimizer with --overlap-param-gather:
 * the step's weight gather runs under the next step's first forward,
 * bucket by bucket (max(40M, 1M x DP) parameters), the first bucket
 * before it; without the flag it is all on the critical path */
static void distopt_param_gather(const uly_model *mp)
{
    const uly_model m = *mp;
    uly_result r;
    uly_cluster c = fx_a100(4);
    uly_workload w = fx_work(32768); /* a forward longer than the gather: its first bucket shows */
    w.framework = ULY_FW_MEGATRON;
    w.zero_stage = 1;
    w.global_batch = 32;
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_MEGATRON_SP, 1, 1, 8, 4);
    uly_result off;
    CHECK(uly_evaluate(&m, &w, &c, &l, &plan, &off) == ULY_OK, "distopt");
    w.overlap_param_gather = 1;
    CHECK(uly_evaluate(&m, &w, &c, &l, &plan, &r) == ULY_OK, "distopt overlapped");
    int i = -1;
    for (int k = 0; k < plan.n_ops; k++)
        if (plan.ops[k].type == ULY_OPT_ZERO_GATHER_W && plan.ops[k].per_step) i = k;
    CHECK(i >= 0, "the step's weight gather");
    if (i >= 0) {
        const double T = r.op_time_s[i], F = (double)plan.stage_layers * r.time.layer_fwd_s;
        const double bucket = 4e7 > 1e6 * 4 ? 4e7 : 1e6 * 4;
        const double fb = bucket < plan.model_params_rank ? bucket / plan.model_params_rank : 1;
        double want = T > F ? T - F : 0;
        if (want < T * fb) want = T * fb;
        CHECK(fb < 1 && F > T && fabs(r.op_exposed_s[i] / want - 1) < 1e-9, "param gather exposes %.9g s, want %.9g (T %.9g, F %.9g, bucket %.4f)",
              r.op_exposed_s[i], want, T, F, fb);
        CHECK(off.op_exposed_s[i] == off.op_time_s[i], "without overlap the gather is exposed");
        const double saved = off.time.step_s - r.time.step_s;
        /* the hidden part, less the compute it slows (sigma 0 here) */
        CHECK(fabs(saved / (T - want) - 1) < 1e-9, "overlap saved %.9g s, want %.9g", saved, T - want);
    }
}

int main(void)
{
    const uly_model m = fx_gpt7b();
    memory_bound_classes(&m);
    norm_bytes(&m);
    loss_bytes(&m);
    fsdp_copy_out(&m);
    host_bound_phases(&m);
    overlap_slowdown_tiers(&m);
    zero3_gather_messages(&m);
    distopt_param_gather(&m);
    FX_DONE();
}
