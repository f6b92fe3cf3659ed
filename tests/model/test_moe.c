/* test_moe.c: a mixture-of-experts layer's plan: the bytes of its token
 * dispatch and combine, where they travel, the experts' memory under
 * EP x ETP with a sharded optimizer, the leading dense layers' parameters
 * and FLOPs, and the layouts Megatron-Core refuses. Every expectation is
 * worked out here from the sizes, not read back from the library. */
#include "fixtures.h"

/* A Mixtral-like layer small enough to count by hand: h 1024, 8 experts of
 * f 2048 (SwiGLU), top-2, 16 heads of 64 (GQA 4), 32 layers. */
static uly_model moe_model(void)
{
    uly_model m = fx_model("moe-test", 32, 1024, 16, 4, 4096, 32000, 1);
    m.experts = 8, m.topk = 2, m.moe_ffn_hidden = 2048;
    return m;
}

/* Megatron-LM's distributed optimizer at 4K tokens, full recompute */
static uly_workload moe_work(void)
{
    uly_workload w = fx_work(4096);
    w.zero_stage = 1, w.framework = ULY_FW_MEGATRON;
    return w;
}

static const uly_op *find_op(const uly_plan *p, uly_op_type t, uly_phase ph)
{
    for (int i = 0; i < p->n_ops; i++)
        if (p->ops[i].type == t && p->ops[i].phase == ph && !p->ops[i].recompute) return &p->ops[i];
    return NULL;
}

static int build(const uly_model *m, const uly_workload *w, const uly_cluster *c, const uly_layout *l, uly_plan *p,
                 uly_reason *r, int *nr)
{
    return uly_plan_build(m, w, c, l, p, r, nr) == ULY_OK;
}

static int has_reason(const uly_reason *r, int n, uly_reason_code code, double v0)
{
    for (int i = 0; i < n; i++)
        if (r[i].code == code && r[i].v[0] == v0) return 1;
    return 0;
}

/* Top-2 of 8 experts over EP 8 on 16 GPUs: each rank routes its b T
 * tokens' 2 copies, 7/8 of them to other ranks, h bf16 elements each; the
 * combine brings as many back, and backward mirrors both. On 8-GPU nodes
 * the EP group is a node's; on 4-GPU nodes it spans two. */
static void test_dispatch_bytes(void)
{
    const uly_model m = moe_model();
    uly_workload w = moe_work();
    static uly_plan p;
    uly_reason r[ULY_MAX_REASONS];
    int nr = 0;
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 1, 1, 1, 16);
    l.ep = 8;
    const double T = 4096, pairs = T * 2, h = 1024, beta = 2;
    const int64_t want = (int64_t)(pairs * h * beta * 7.0 / 8.0); /* 14,680,064 */
    for (int gpn = 8; gpn >= 4; gpn -= 4) {
        uly_cluster c = fx_a100(16 / gpn);
        c.gpus_per_node = gpn;
        CHECK(build(&m, &w, &c, &l, &p, r, &nr), "plan builds");
        CHECK(p.n_ops < ULY_PLAN_MAX_OPS, "the plan has room: %d ops", p.n_ops);
        const uly_op_type types[4] = {ULY_OPT_MOE_DISPATCH, ULY_OPT_MOE_COMBINE, ULY_OPT_MOE_COMBINE_BWD,
                                      ULY_OPT_MOE_DISPATCH_BWD};
        for (int i = 0; i < 4; i++) {
            const uly_op *o = find_op(&p, types[i], i < 2 ? ULY_PHASE_FWD : ULY_PHASE_BWD);
            CHECK(o != NULL, "%s emitted", uly_op_type_name(types[i]));
            if (!o) continue;
            CHECK(o->bytes_sent == want, "%s: %lld bytes sent, want %lld", uly_op_type_name(types[i]),
                  (long long)o->bytes_sent, (long long)want);
            CHECK(o->coll == ULY_COLL_ALLTOALL && o->group == ULY_GROUP_EP && o->group_size == 8,
                  "%s: an all-to-all over the 8 EP ranks", uly_op_type_name(types[i]));
            const uint8_t tiers = gpn == 8 ? ULY_TIER_INTRA : (ULY_TIER_INTRA | ULY_TIER_INTER);
            CHECK(o->tiers == tiers, "%s on %d-GPU nodes: tiers %u, want %u", uly_op_type_name(types[i]), gpn,
                  o->tiers, tiers);
        }
        /* the experts' grouped GEMM: 8 / 8 = 1 local expert running the
         * 8192 pairs every rank receives under even routing */
        const uly_op *up = find_op(&p, ULY_OPT_EXPERT_UP, ULY_PHASE_FWD);
        CHECK(up && up->gemm_batch == 1 && up->gemm_m == pairs && up->gemm_n == 2.0 * 2048 && up->gemm_k == h,
              "expert_up: 1 x (8192 x 1024)(1024 x 4096)");
        CHECK(up && fabs(up->flops - 2.0 * pairs * h * 4096) < 1, "expert_up FLOPs");
    }
    /* the result's MoE traffic: dispatch and combine forward, again in full
     * recompute's copy, and their two mirrors in backward */
    {
        uly_cluster c = fx_a100(2);
        static uly_result res;
        CHECK(uly_evaluate(&m, &w, &c, &l, &p, &res) == ULY_OK && res.moe_bytes == 6 * want,
              "moe_bytes %lld, want %lld", (long long)res.moe_bytes, (long long)(6 * want));
    }
    /* the allgather dispatcher: the 4096 tokens from each of the 7 others */
    w.moe_dispatcher = ULY_MOE_ALLGATHER;
    uly_cluster c = fx_a100(2);
    CHECK(build(&m, &w, &c, &l, &p, r, &nr), "plan builds");
    const uly_op *ag = find_op(&p, ULY_OPT_MOE_DISPATCH, ULY_PHASE_FWD);
    const uly_op *rs = find_op(&p, ULY_OPT_MOE_COMBINE, ULY_PHASE_FWD);
    CHECK(ag && ag->coll == ULY_COLL_ALLGATHER && ag->bytes_sent == (int64_t)(7 * T * h * beta), "allgather dispatch");
    CHECK(rs && rs->coll == ULY_COLL_REDUCE_SCATTER && rs->bytes_sent == (int64_t)(7 * T * h * beta),
          "reduce-scatter combine");
}

/* EP 4 x ETP 2 over 16 GPUs, Megatron's distributed optimizer: each rank
 * holds 8/4 experts of every layer, half of each (ETP), and shards their
 * fp32 states over the 16 / 8 = 2 expert data-parallel ranks; the rest of
 * the model over all 16 (DP). */
static void test_expert_memory(void)
{
    const uly_model m = moe_model();
    uly_workload w = moe_work();
    const uly_cluster c = fx_a100(2);
    static uly_plan p;
    uly_reason r[ULY_MAX_REASONS];
    int nr = 0;
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 1, 1, 1, 16);
    l.ep = 4, l.etp = 2;
    CHECK(build(&m, &w, &c, &l, &p, r, &nr), "plan builds");
    const double h = 1024, f = 2048, L = 32, E = 8;
    const double expert = 3.0 * h * f; /* SwiGLU: three h x f matrices */
    const double rank_experts = L * E * expert / (4.0 * 2.0);
    CHECK(fabs(p.expert_params_rank - rank_experts) < 1, "expert params per rank %.0f, want %.0f",
          p.expert_params_rank, rank_experts);
    CHECK(fabs(p.expert_params_shard - rank_experts / 2.0) <= 1, "shard over EDP 2: %.0f", p.expert_params_shard);
    /* the rest: attention (Wq, Wo h x h; Wk, Wv h x 4 x 64), the router
     * h x E and two norms per layer, embeddings in and out, the final norm */
    const double attn = 2.0 * h * h + 2.0 * h * 4 * 64, rest = L * (attn + h * E + 2 * h) + 2.0 * 32000 * h + h;
    CHECK(fabs(p.model_params_rank - rest) < 1, "non-expert params %.0f, want %.0f", p.model_params_rank, rest);
    uly_memory mem;
    CHECK(uly_memory_eval(&m, &w, &c, &p, &mem) == ULY_OK, "memory");
    /* Megatron: bf16 weights and fp32 gradients whole, 12 bytes of fp32
     * states sharded; padded shards as ZeRO pads them */
    const double sh_rest = ceil(ceil(rest) / 16.0), sh_exp = ceil(ceil(rank_experts) / 2.0);
    const double optim = 12.0 * (sh_rest + sh_exp), weights = 2.0 * (rest + rank_experts);
    CHECK(fabs(mem.term_bytes[ULY_MEM_OPTIM] - optim) < 64, "optimizer bytes %.0f, want %.0f",
          mem.term_bytes[ULY_MEM_OPTIM], optim);
    CHECK(fabs(mem.term_bytes[ULY_MEM_WEIGHTS] - weights) < 64, "weight bytes %.0f, want %.0f",
          mem.term_bytes[ULY_MEM_WEIGHTS], weights);
    /* the expert gradients reduce-scattered over the 2 EDP ranks, in fp32 */
    const uly_op *g = find_op(&p, ULY_OPT_EXPERT_GRAD_REDUCE, ULY_PHASE_STEP);
    CHECK(g && g->group == ULY_GROUP_EDP && g->coll == ULY_COLL_REDUCE_SCATTER &&
              g->bytes_sent == (int64_t)(sh_exp * 4.0),
          "expert gradients: %lld bytes", g ? (long long)g->bytes_sent : -1LL);
    /* the ETP all-gather of the 8192 received pairs, to the other rank */
    const uly_op *ag = find_op(&p, ULY_OPT_MOE_ETP_AG, ULY_PHASE_FWD);
    CHECK(ag && ag->group == ULY_GROUP_ETP && ag->bytes_sent == (int64_t)(8192.0 * h * 2.0), "ETP all-gather");
}

/* ZeRO-3 (DeepSpeed-MoE) over EP 4 on 16 GPUs: each layer's 2 local
 * experts sharded over the 4 expert data-parallel ranks, gathered before
 * forward and backward, their gradients reduce-scattered per layer. */
static void test_expert_zero3(void)
{
    uly_model m = moe_model();
    m.vocab = 1000; /* the gathered embedding smaller than a layer */
    uly_workload w = fx_work(4096);
    const uly_cluster c = fx_a100(2);
    static uly_plan p;
    uly_reason r[ULY_MAX_REASONS];
    int nr = 0;
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 1, 1, 1, 16);
    l.ep = 4;
    CHECK(build(&m, &w, &c, &l, &p, r, &nr), "plan builds");
    const double local = 2.0 * 3.0 * 1024 * 2048, sh = ceil(local / 4.0);
    const uly_op *gf = find_op(&p, ULY_OPT_EXPERT_PARAM_GATHER, ULY_PHASE_FWD);
    const uly_op *gb = find_op(&p, ULY_OPT_EXPERT_PARAM_GATHER, ULY_PHASE_BWD);
    const uly_op *rs = find_op(&p, ULY_OPT_EXPERT_GRAD_REDUCE, ULY_PHASE_BWD);
    CHECK(gf && gb && gf->group == ULY_GROUP_EDP && gf->bytes_sent == (int64_t)(3 * sh * 2) && !gf->per_step,
          "expert gather per layer: %lld bytes", gf ? (long long)gf->bytes_sent : -1LL);
    CHECK(rs && rs->coll == ULY_COLL_REDUCE_SCATTER && rs->bytes_sent == (int64_t)(3 * sh * 2) && !rs->per_step,
          "expert gradients per layer (deepspeed: bf16 on the wire): %lld", rs ? (long long)rs->bytes_sent : -1LL);
    uly_memory mem;
    CHECK(uly_memory_eval(&m, &w, &c, &p, &mem) == ULY_OK, "memory");
    /* the live gathered layer: its non-expert weights (attention, router,
     * norms) and its 2 local experts, bf16, held twice (the layer and one
     * prefetched) */
    const double layer = 2.0 * 1024 * 1024 + 2.0 * 1024 * 256 + 1024 * 8 + 2 * 1024 + local;
    CHECK(fabs(mem.term_bytes[ULY_MEM_ZERO_GATHER] - 2.0 * 2.0 * layer) < 64, "zero-3 gathered bytes %.0f, want %.0f",
          mem.term_bytes[ULY_MEM_ZERO_GATHER], 4.0 * layer);
}

/* DeepSeek's leading dense layers: 2 of 6 layers keep a 4096-wide dense
 * FFN; the parameters and the model FLOPs count them so. */
static void test_dense_first(void)
{
    uly_model m = moe_model();
    m.layers = 6, m.moe_dense_first = 2, m.shared_ffn_hidden = 1024;
    const double h = 1024, attn = 2.0 * h * h + 2.0 * h * 256;
    const double dense = attn + 3.0 * h * 4096 + 2 * h;
    const double moe = attn + 8 * 3.0 * h * 2048 + 3.0 * h * 1024 + h * 8 + 2 * h;
    const double total = 2 * dense + 4 * moe + 2.0 * 32000 * h + h;
    CHECK(fabs(uly_model_params(&m) - total) < 1, "params %.0f, want %.0f", uly_model_params(&m), total);
    const double active = total - 4 * 6 * 3.0 * h * 2048; /* 6 of 8 experts idle per token */
    CHECK(fabs(uly_model_active_params(&m) - active) < 1, "active params %.0f, want %.0f",
          uly_model_active_params(&m), active);
    uly_workload w = fx_work(1024);
    w.causal = 0;
    /* per token: 2 x the parameters a token meets in its layers' GEMMs,
     * the scores' 4 N a d, the logits' 2 h V; three passes */
    const double N = 1024, per_layer_attn = 2 * attn + 4 * N * 16 * 64;
    const double ffn = 2 * (2 * 3.0 * h * 4096) + 4 * 2 * (2 * 3.0 * h * 2048 + 3.0 * h * 1024 + h * 8);
    const double want = 3.0 * N * (6 * per_layer_attn + ffn + 2 * h * 32000);
    const double got = uly_flops_model_step(&m, &w, 1);
    CHECK(fabs(got - want) < 1e-9 * want, "model FLOPs %.6g, want %.6g", got, want);
    m.moe_dense_first = 0, m.moe_every = 2; /* Megatron's --moe-layer-freq 2: layers 0, 2, 4 */
    CHECK(uly_moe_layers(&m) == 3, "every other layer MoE: %lld", (long long)uly_moe_layers(&m));
}

/* Megatron-Core's refusals: EP must divide the experts and, with ETP, the
 * stage's GPUs; TP beside MoE needs sequence parallelism. */
static void test_refused(void)
{
    const uly_model m = moe_model();
    uly_workload w = moe_work();
    const uly_cluster c = fx_a100(2);
    static uly_plan p;
    uly_reason r[ULY_MAX_REASONS];
    int nr = 0;
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 1, 1, 1, 16);
    l.ep = 16;
    CHECK(build(&m, &w, &c, &l, &p, r, &nr) && has_reason(r, nr, ULY_R_MOE_LAYOUT, 2), "EP 16 over 8 experts");
    l.ep = 4, l.etp = 8;
    CHECK(build(&m, &w, &c, &l, &p, r, &nr) && has_reason(r, nr, ULY_R_MOE_LAYOUT, 1), "EP x ETP 32 over 16 GPUs");
    uly_layout_init(&l, ULY_STRAT_MEGATRON_TP, 1, 1, 2, 8);
    CHECK(build(&m, &w, &c, &l, &p, r, &nr) && has_reason(r, nr, ULY_R_MOE_LAYOUT, 3), "TP without SP");
    uly_layout_init(&l, ULY_STRAT_MEGATRON_SP, 1, 1, 2, 8);
    l.ep = 8;
    CHECK(build(&m, &w, &c, &l, &p, r, &nr) && !has_reason(r, nr, ULY_R_MOE_LAYOUT, 3), "TP with SP runs");
    const uly_model dense = fx_llama3_8b();
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 1, 1, 1, 16);
    l.ep = 2;
    CHECK(build(&dense, &w, &c, &l, &p, r, &nr) && has_reason(r, nr, ULY_R_MOE_LAYOUT, 0), "EP on a dense model");
}

/* The search tries expert-parallel degrees dividing the experts; a pinned
 * one is kept. */
static void test_search(void)
{
    const uly_model m = moe_model();
    uly_workload w = fx_work(4096);
    w.zero_stage = 1, w.framework = ULY_FW_MEGATRON, w.global_batch = 64;
    const uly_cluster c = fx_a100(2);
    uly_search_opts o;
    memset(&o, 0, sizeof o);
    o.pin_ep = 4, o.pin_etp = 1;
    static uly_result best;
    uly_search_stats stats = {0};
    uly_status st = uly_search_best(&m, &w, &c, 16, ULY_STRAT_ULYSSES, &o, &best, &stats);
    CHECK(st == ULY_OK && best.feasible && best.layout.ep == 4, "pinned EP 4 kept: ep %d", (int)best.layout.ep);
    /* searched: the degrees 1, 2, 4, 8 dividing both the 16 GPUs and the 8
     * experts, each a layout of its own */
    const uint64_t pinned = stats.evaluated;
    o.pin_ep = 0;
    memset(&stats, 0, sizeof stats);
    st = uly_search_best(&m, &w, &c, 16, ULY_STRAT_ULYSSES, &o, &best, &stats);
    CHECK(st == ULY_OK && stats.evaluated == 4 * pinned, "4 EP degrees: %llu evaluations against %llu pinned",
          (unsigned long long)stats.evaluated, (unsigned long long)pinned);
    /* TP 2 with sequence parallelism: the expert TP unpinned is tried at 1
     * and at the TP degree (Megatron-LM's default), pinned at its own */
    o.pin_ep = 4, o.pin_tp = 2, o.pin_etp = 1;
    memset(&stats, 0, sizeof stats);
    st = uly_search_best(&m, &w, &c, 16, ULY_STRAT_MEGATRON_SP, &o, &best, &stats);
    const uint64_t one = stats.evaluated;
    CHECK(st == ULY_OK && best.layout.etp == 1, "expert TP pinned at 1");
    o.pin_etp = 0;
    memset(&stats, 0, sizeof stats);
    st = uly_search_best(&m, &w, &c, 16, ULY_STRAT_MEGATRON_SP, &o, &best, &stats);
    CHECK(st == ULY_OK && stats.evaluated == 2 * one, "expert TP 1 and 2: %llu evaluations against %llu",
          (unsigned long long)stats.evaluated, (unsigned long long)one);
}

/* Multi-head latent attention, DeepSeek-V3's shape scaled down: h 256,
 * 4 heads, queries through a 64-wide latent, keys and values through a
 * 32-wide one, query/key heads 32 + 16 wide, value heads 32. */
static void test_mla(void)
{
    uly_model m = fx_model("mla-test", 4, 256, 4, 4, 1024, 1000, 1);
    m.head_dim = 32, m.q_lora_rank = 64, m.kv_lora_rank = 32, m.qk_nope_dim = 32, m.qk_rope_dim = 16;
    char why[160];
    CHECK(uly_model_check(&m, why, sizeof why) == ULY_OK, "MLA model valid: %s", why);
    const double h = 256, a = 4, dqk = 48, dv = 32;
    /* q_a h x 64, its norm, q_b 64 x a dqk; kv_a h x (32 + 16), its norm,
     * kv_b 32 x a (32 + dv); o a dv x h */
    const double qkv = h * 64 + 64 + 64 * a * dqk + h * 48 + 32 + 32 * a * (32 + dv), out = a * dv * h;
    CHECK(fabs(uly_attention_params(&m) - (qkv + out)) < 0.5, "MLA params %.0f, want %.0f",
          uly_attention_params(&m), qkv + out);
    uly_workload w = fx_work(2048);
    w.causal = 0, w.recompute = ULY_RECOMPUTE_NONE, w.zero_stage = 0;
    const uly_cluster c = fx_a100(1);
    static uly_plan p;
    uly_reason r[ULY_MAX_REASONS];
    int nr = 0;
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 2, 1, 1, 1);
    CHECK(build(&m, &w, &c, &l, &p, r, &nr), "plan builds");
    const double N = 2048, T = N / 2;
    const uly_op *at = find_op(&p, ULY_OPT_ATTN_FWD, ULY_PHASE_FWD);
    /* q.k over dqk and p.v over dv for the 2 heads of this rank, N x N */
    CHECK(at && fabs(at->flops - 2.0 * 2 * N * N * (dqk + dv)) < 1, "attention FLOPs %.6g, want %.6g",
          at ? at->flops : -1, 2.0 * 2 * N * N * (dqk + dv));
    const uly_op *pq = find_op(&p, ULY_OPT_QKV_PROJ, ULY_PHASE_FWD), *po = find_op(&p, ULY_OPT_OUT_PROJ, ULY_PHASE_FWD);
    CHECK(pq && fabs(pq->flops - 2.0 * T * qkv) < 1, "projections' FLOPs %.6g, want %.6g", pq ? pq->flops : -1,
          2.0 * T * qkv);
    CHECK(po && fabs(po->flops - 2.0 * T * out) < 1, "output projection's FLOPs");
    /* Ulysses moves Q, K (dqk wide) and V, O (dv wide) of all 4 heads for
     * T tokens, half to the other rank */
    int64_t sum = 0;
    const uly_op_type a2a[4] = {ULY_OPT_A2A_Q, ULY_OPT_A2A_K, ULY_OPT_A2A_V, ULY_OPT_A2A_O};
    for (int i = 0; i < 4; i++) {
        const uly_op *o = find_op(&p, a2a[i], ULY_PHASE_FWD);
        if (o) sum += o->bytes_sent;
    }
    const int64_t want = (int64_t)(T * a * (2 * dqk + 2 * dv) * 2.0 / 2.0);
    CHECK(sum == want, "Ulysses forward bytes %lld, want %lld", (long long)sum, (long long)want);
}

int main(void)
{
    test_mla();
    test_expert_zero3();
    test_dispatch_bytes();
    test_expert_memory();
    test_dense_first();
    test_refused();
    test_search();
    FX_DONE();
}
