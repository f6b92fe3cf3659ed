/* Tensor parallelism inside context parallelism (Megatron-Core's TP x CP):
 * every op's bytes sent per rank, for every context-parallel strategy that
 * takes a TP degree, against formulas written here from the layout's
 * definition, not from the model's code:
 *   - TP splits the heads first: a/t query heads per TP rank, KV heads k/t
 *     (each KV head replicated when k < t: one per rank);
 *   - the context split works on what remains: Ulysses' all-to-all carries
 *     (a/t)/u heads per peer, a ring hop the rank's k/t heads' K and V;
 *   - Megatron-SP's collectives over the t ranks: an all-gather of the
 *     b x N/(cp t) x h share into each GEMM region and a reduce-scatter out
 *     of it, (t-1) b N/(cp t) h beta bytes each, swapped in backward.
 * Also: activation memory per Korthikanti et al. 2022 (TP+SP, divided by
 * the CP degree), the feasibility rules (heads, sequence divisibility) and
 * that RSA takes no TP degree. */
#include "fixtures.h"

static uly_plan plan;

static int build(const uly_model *m, const uly_workload *w, const uly_cluster *c, uly_strategy_id s, int64_t u,
                 int64_t r, int64_t t, uly_reason *rs, int *nr)
{
    uly_layout l;
    uly_layout_init(&l, s, u, r, t, 1);
    return (int)uly_plan_build(m, w, c, &l, &plan, rs, nr);
}

/* bytes of the first op of a type in a phase (forward ops, not the recompute copy) */
static int64_t op_bytes(uly_op_type type, uly_phase ph)
{
    for (int i = 0; i < plan.n_ops; i++)
        if (plan.ops[i].type == type && plan.ops[i].phase == ph && !plan.ops[i].recompute)
            return plan.ops[i].bytes_sent;
    return -1;
}

static int op_count(uly_op_type type)
{
    int n = 0;
    for (int i = 0; i < plan.n_ops; i++) n += plan.ops[i].type == type;
    return n;
}

typedef struct shape {
    int64_t N, h, a, k, t, u, r;
} shape;

/* the SP collectives: 4 forward, 6 backward (the two regions' inputs
 * gathered again for the weight gradients, one each), each (t-1) b N/(cp t)
 * h beta */
static void check_sp(const char *what, const shape *s, int64_t cp, int64_t b, int64_t beta)
{
    const int64_t want = (s->t - 1) * b * (s->N / (cp * s->t)) * s->h * beta;
    const uly_op_type fwd[] = {ULY_OPT_SP_AG_ATTN, ULY_OPT_SP_RS_ATTN, ULY_OPT_SP_AG_MLP, ULY_OPT_SP_RS_MLP};
    const uly_op_type bwd[] = {ULY_OPT_SP_AG_DATTN, ULY_OPT_SP_RS_DATTN, ULY_OPT_SP_AG_DMLP, ULY_OPT_SP_RS_DMLP};
    for (int i = 0; i < 4; i++) {
        CHECK(op_bytes(fwd[i], ULY_PHASE_FWD) == want, "%s t=%lld cp=%lld: %s %lld bytes, want %lld", what,
              (long long)s->t, (long long)cp, uly_op_type_name(fwd[i]), (long long)op_bytes(fwd[i], ULY_PHASE_FWD),
              (long long)want);
        CHECK(op_bytes(bwd[i], ULY_PHASE_BWD) == want, "%s t=%lld: %s %lld bytes, want %lld", what, (long long)s->t,
              uly_op_type_name(bwd[i]), (long long)op_bytes(bwd[i], ULY_PHASE_BWD), (long long)want);
    }
    const uly_op_type again[] = {ULY_OPT_SP_REGATHER_ATTN, ULY_OPT_SP_REGATHER_MLP};
    for (int i = 0; i < 2; i++)
        CHECK(op_count(again[i]) == 1 && op_bytes(again[i], ULY_PHASE_BWD) == want, "%s t=%lld: %d %s, %lld bytes, "
              "want one of %lld", what, (long long)s->t, op_count(again[i]), uly_op_type_name(again[i]),
              (long long)op_bytes(again[i], ULY_PHASE_BWD), (long long)want);
}

/* KV heads of one TP rank: k/t, or 1 when k < t (replicated) */
static int64_t kv_per_tp(int64_t k, int64_t t) { return k >= t ? k / t : 1; }

int main(void)
{
    const int64_t b = 1, beta = 2;
    uly_cluster cl = fx_a100(16);
    cl.gpu.hbm_bytes = 1e15;
    uly_reason rs[ULY_MAX_REASONS];
    int nr = 0;
    const shape shapes[] = {
        {131072, 4096, 32, 32, 2, 2, 2}, {131072, 4096, 32, 8, 4, 2, 4}, {262144, 8192, 64, 8, 8, 4, 2},
        {65536, 4096, 32, 4, 8, 2, 2}, /* k < t: KV replicated to one head per TP rank */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const shape *s = &shapes[i];
        uly_model m = fx_model("t", 4, s->h, s->a, s->k, 4 * s->h, 32000, 0);
        uly_workload w = fx_work(s->N);
        w.recompute = ULY_RECOMPUTE_NONE;
        const int64_t d = s->h / s->a, at = s->a / s->t, kt = kv_per_tp(s->k, s->t);

        /* ring: r-1 hops of the rank's K and V (kt heads) over N/r tokens, forward;
         * backward K,V again plus dK,dV home */
        CHECK(build(&m, &w, &cl, ULY_STRAT_RING, 1, s->r, s->t, rs, &nr) == 0, "ring build");
        {
            const int64_t hop = (s->r - 1) * 2 * b * (s->N / s->r) * kt * d * beta;
            CHECK(op_bytes(ULY_OPT_RING_KV, ULY_PHASE_FWD) == hop, "ring t=%lld r=%lld: ring_kv %lld, want %lld",
                  (long long)s->t, (long long)s->r, (long long)op_bytes(ULY_OPT_RING_KV, ULY_PHASE_FWD), (long long)hop);
            CHECK(op_bytes(ULY_OPT_RING_DKV, ULY_PHASE_BWD) == hop, "ring: ring_dkv %lld, want %lld",
                  (long long)op_bytes(ULY_OPT_RING_DKV, ULY_PHASE_BWD), (long long)hop);
            check_sp("ring", s, s->r, b, beta);
            CHECK(plan.dims.heads == at && plan.dims.kv_heads == kt, "ring: heads %lld/%lld, want %lld/%lld",
                  (long long)plan.dims.heads, (long long)plan.dims.kv_heads, (long long)at, (long long)kt);
        }

        /* all-gather CP: (r-1) blocks of b N/r kt d each of K and V */
        CHECK(build(&m, &w, &cl, ULY_STRAT_ALLGATHER_CP, 1, s->r, s->t, rs, &nr) == 0, "allgather-cp build");
        {
            const int64_t ag = (s->r - 1) * b * (s->N / s->r) * kt * d * beta;
            CHECK(op_bytes(ULY_OPT_AG_K, ULY_PHASE_FWD) == ag && op_bytes(ULY_OPT_AG_V, ULY_PHASE_FWD) == ag,
                  "allgather-cp t=%lld: ag_k %lld, want %lld", (long long)s->t,
                  (long long)op_bytes(ULY_OPT_AG_K, ULY_PHASE_FWD), (long long)ag);
            CHECK(op_bytes(ULY_OPT_RS_DK, ULY_PHASE_BWD) == ag, "allgather-cp: rs_dk %lld, want %lld",
                  (long long)op_bytes(ULY_OPT_RS_DK, ULY_PHASE_BWD), (long long)ag);
            check_sp("allgather-cp", s, s->r, b, beta);
        }

        /* Ulysses over u: per tensor of H heads, (u-1) blocks of b N/u H/u d */
        if (at % s->u == 0) {
            int64_t ke = kt % s->u == 0 ? kt : s->u % kt == 0 ? s->u : at; /* replication inside the group */
            CHECK(build(&m, &w, &cl, ULY_STRAT_ULYSSES, s->u, 1, s->t, rs, &nr) == 0, "ulysses build");
            const int64_t q = (s->u - 1) * b * (s->N / s->u) * (at / s->u) * d * beta;
            const int64_t kv = (s->u - 1) * b * (s->N / s->u) * (ke / s->u) * d * beta;
            CHECK(op_bytes(ULY_OPT_A2A_Q, ULY_PHASE_FWD) == q, "ulysses t=%lld u=%lld: a2a_q %lld, want %lld",
                  (long long)s->t, (long long)s->u, (long long)op_bytes(ULY_OPT_A2A_Q, ULY_PHASE_FWD), (long long)q);
            CHECK(op_bytes(ULY_OPT_A2A_K, ULY_PHASE_FWD) == kv, "ulysses t=%lld u=%lld: a2a_k %lld, want %lld",
                  (long long)s->t, (long long)s->u, (long long)op_bytes(ULY_OPT_A2A_K, ULY_PHASE_FWD), (long long)kv);
            CHECK(op_bytes(ULY_OPT_A2A_O, ULY_PHASE_FWD) == q && op_bytes(ULY_OPT_A2A_DQ, ULY_PHASE_BWD) == q &&
                      op_bytes(ULY_OPT_A2A_DV, ULY_PHASE_BWD) == kv,
                  "ulysses: a2a_o/dq/dv bytes");
            check_sp("ulysses", s, s->u, b, beta);

            /* USP: the all-to-all over u on N/(u r) tokens, then the ring over r
             * rotating the group's ke/u KV heads over N/r tokens */
            CHECK(build(&m, &w, &cl, ULY_STRAT_USP, s->u, s->r, s->t, rs, &nr) == 0, "usp build");
            const int64_t cp = s->u * s->r;
            const int64_t uq = (s->u - 1) * b * (s->N / cp) * (at / s->u) * d * beta;
            const int64_t hop = (s->r - 1) * 2 * b * (s->N / s->r) * (ke / s->u) * d * beta;
            CHECK(op_bytes(ULY_OPT_A2A_Q, ULY_PHASE_FWD) == uq, "usp: a2a_q %lld, want %lld",
                  (long long)op_bytes(ULY_OPT_A2A_Q, ULY_PHASE_FWD), (long long)uq);
            CHECK(op_bytes(ULY_OPT_RING_KV, ULY_PHASE_FWD) == hop, "usp t=%lld u=%lld r=%lld: ring_kv %lld, want %lld",
                  (long long)s->t, (long long)s->u, (long long)s->r, (long long)op_bytes(ULY_OPT_RING_KV, ULY_PHASE_FWD),
                  (long long)hop);
            check_sp("usp", s, cp, b, beta);
        }
    }

    /* t = 1: no SP collective appears */
    {
        uly_model m = fx_gpt7b();
        uly_workload w = fx_work(65536);
        CHECK(build(&m, &w, &cl, ULY_STRAT_RING, 1, 8, 1, rs, &nr) == 0, "ring t=1");
        CHECK(op_count(ULY_OPT_SP_AG_ATTN) == 0 && op_count(ULY_OPT_SP_RS_MLP) == 0, "ring t=1 has SP collectives");
    }

    /* activations per layer, Korthikanti et al. 2022 Table 2 with TP+SP and
     * materialised scores: s b h (34 + 5 a s / h) / t bytes (beta = 2, dropout
     * masks kept), here over s/cp tokens of the rank (queries against all s
     * keys: 5 a (s/cp) s / (h t) for the scores); flash removes the
     * 5 a s/h scores and adds the fp32 log-sum-exp, 4 b a (s/cp) / t */
    {
        uly_model m = fx_model("gpt", 4, 4096, 32, 32, 4 * 4096, 32000, 0);
        m.dropout = 1;
        uly_workload w = fx_work(32768);
        w.flash = 0;
        w.recompute = ULY_RECOMPUTE_NONE;
        const double s = 32768, hh = 4096, a = 32;
        for (int64_t t = 2; t <= 8; t *= 2)
            for (int64_t cp = 2; cp <= 8; cp *= 2) {
                uly_act_terms at;
                uly_act_layer_terms(&m, &w, (int64_t)s, t, 1, cp, 0, &at);
                const double T = s / (double)cp;
                const double want = T * hh * 34.0 / (double)t + 5.0 * a * T * s / (double)t;
                CHECK(fabs(at.total / want - 1) < 1e-12, "activations t=%lld cp=%lld: %.6g, want %.6g", (long long)t,
                      (long long)cp, at.total, want);
            }
        /* and the plan hands the memory model exactly those ways */
        CHECK(build(&m, &w, &cl, ULY_STRAT_RING, 1, 4, 2, rs, &nr) == 0, "ring t=2 r=4");
        CHECK(plan.act_tp == 2 && plan.act_sp == 1 && plan.act_cp == 4 && plan.act_tokens == 32768 / 8,
              "ring t=2 r=4: act_tp %lld sp %d cp %lld tokens %lld", (long long)plan.act_tp, plan.act_sp,
              (long long)plan.act_cp, (long long)plan.act_tokens);
    }

    /* feasibility: heads must split t ways then u ways; N by 2 r t (zigzag) */
    {
        uly_model m = fx_model("t", 4, 4096, 32, 8, 16384, 32000, 0);
        uly_workload w = fx_work(131072);
        build(&m, &w, &cl, ULY_STRAT_ULYSSES, 8, 1, 8, rs, &nr); /* 32/8 = 4 heads per TP rank, u = 8 */
        int bad = 0;
        for (int i = 0; i < nr; i++) bad |= rs[i].fatal && rs[i].code == ULY_R_DEGREE_GT_HEADS;
        CHECK(bad, "ulysses u=8 inside t=8 of 32 heads: expected degree > heads per TP rank");
        w.seq = 24 * 1001; /* divisible by r t = 24, not by 2 r t = 48 */
        build(&m, &w, &cl, ULY_STRAT_RING, 1, 6, 4, rs, &nr);
        int seq = 0;
        for (int i = 0; i < nr; i++) seq |= rs[i].code == ULY_R_SEQ_NOT_DIVISIBLE && rs[i].v[1] == 48;
        CHECK(seq, "ring r=6 t=4 zigzag at N=24024: expected N not divisible by 48");
        const uly_strategy *rsa = uly_strategy_get(ULY_STRAT_RSA);
        CHECK(rsa && !rsa->uses_tp, "rsa takes no TP degree");
        for (int i = 0; i < ULY_STRAT_COUNT; i++) {
            const uly_strategy *st = uly_strategy_get((uly_strategy_id)i);
            if (st->uses_ring || st->uses_ulysses)
                CHECK(st->uses_tp || st->id == ULY_STRAT_RSA, "%s: a context-parallel strategy without TP", st->name);
        }
    }
    FX_DONE();
}
