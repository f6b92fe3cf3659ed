/* Per-layer bytes sent per rank equal, to the byte, the formulas of
 * docs/model.md ("Strategies") for every strategy, on several
 * (N, h, a, k, degree) combinations including degree 1 (zero bytes) and
 * groups that span nodes. Expected values are computed here from the
 * formulas, independently of the model's code. */
#include "fixtures.h"

typedef struct combo {
    int64_t seq, h, a, k, deg;
} combo;

/* 5+ combinations per strategy: degree 1; inside a node; across nodes; GQA. */
static const combo combos[] = {
    {131072, 4096, 32, 32, 1},  {131072, 4096, 32, 32, 8},  {131072, 4096, 32, 32, 32},
    {262144, 2048, 16, 16, 16}, {65536, 6144, 64, 64, 64},  {131072, 4096, 32, 8, 8},
    {524288, 8192, 64, 8, 16},
};
#define NC (int)(sizeof combos / sizeof combos[0])

static uly_model model_of(const combo *c)
{
    return fx_model("t", 4, c->h, c->a, c->k, 4 * c->h, 32000, 0);
}

static int64_t keff(int64_t k, int64_t u)
{
    if (k % u == 0) return k;
    if (u % k == 0) return u;
    return -1;
}

static void check(const char *what, const combo *c, uly_strategy_id s, int64_t u, int64_t r, int64_t t,
                  int64_t want_fwd, int64_t want_bwd, int want_inter)
{
    uly_model m = model_of(c);
    uly_workload w = fx_work(c->seq);
    w.recompute = ULY_RECOMPUTE_NONE;
    w.zero_stage = 0;
    uly_cluster cl = fx_a100(64);
    cl.gpu.hbm_bytes = 1e15; /* bytes are what is tested, not fit */
    uly_result res;
    int rc = fx_eval(&m, &w, &cl, s, u, r, t, 1, &res);
    CHECK(rc == 0, "%s: evaluate failed (%d)", what, rc);
    CHECK(res.comm_fwd_bytes == want_fwd, "%s N=%lld h=%lld a=%lld k=%lld P=%lld: fwd %lld, want %lld", what,
          (long long)c->seq, (long long)c->h, (long long)c->a, (long long)c->k, (long long)c->deg,
          (long long)res.comm_fwd_bytes, (long long)want_fwd);
    CHECK(res.comm_bwd_bytes == want_bwd, "%s P=%lld: bwd %lld, want %lld", what, (long long)c->deg,
          (long long)res.comm_bwd_bytes, (long long)want_bwd);
    if (c->deg > 1) {
        const int inter = (res.comm_tiers & ULY_TIER_INTER) != 0;
        CHECK(inter == want_inter, "%s P=%lld: crosses nodes %d, want %d", what, (long long)c->deg, inter, want_inter);
    }
    /* full recompute re-runs the forward's communication inside backward */
    w.recompute = ULY_RECOMPUTE_FULL;
    rc = fx_eval(&m, &w, &cl, s, u, r, t, 1, &res);
    CHECK(rc == 0 && res.comm_bwd_bytes == want_bwd + want_fwd && res.comm_recompute_bytes == want_fwd,
          "%s P=%lld: full recompute bwd %lld (recompute %lld), want %lld", what, (long long)c->deg,
          (long long)res.comm_bwd_bytes, (long long)res.comm_recompute_bytes, (long long)(want_bwd + want_fwd));
}

int main(void)
{
    const int64_t beta = 2, b = 1;
    /* plain TP does not split the sequence: N need not divide by t */
    const combo odd[] = {{100000, 4096, 32, 32, 8}, {131071, 2048, 16, 16, 16}, {3001, 768, 12, 12, 6}};
    for (int i = 0; i < (int)(sizeof odd / sizeof odd[0]); i++) {
        const combo *c = &odd[i];
        const int64_t N = c->seq, h = c->h, P = c->deg;
        const int64_t ar = 2 * (P - 1) * b * N * h * beta / P;
        check("megatron-tp (N % t != 0)", c, ULY_STRAT_MEGATRON_TP, 1, 1, P, 2 * ar, 2 * ar, P > 8);
    }
    for (int i = 0; i < NC; i++) {
        const combo *c = &combos[i];
        const int64_t N = c->seq, h = c->h, a = c->a, k = c->k, P = c->deg, d = h / a;
        const int inter = P > 8;
        /* Ulysses: b N d (2a + 2 k_eff) (u-1)/u^2 beta each way (k_eff: GQA replication) */
        const int64_t ke = keff(k, P);
        if (ke > 0 && a % P == 0) {
            int64_t f = b * N * d * (2 * a + 2 * ke) * (P - 1) / (P * P) * beta;
            check("ulysses", c, ULY_STRAT_ULYSSES, P, 1, 1, f, f, inter);
        }
        /* ring: 2 (r-1) b (N/r) k d beta forward; backward K,V again + dK,dV: twice */
        int64_t f = 2 * (P - 1) * b * (N / P) * k * d * beta;
        check("ring", c, ULY_STRAT_RING, 1, P, 1, f, 2 * f, inter);
        /* RSA: 2 (P-1) b (N/P) h beta forward, 6 (P-1) b (N/P) h beta backward (MHA: k d = h) */
        f = 2 * (P - 1) * b * (N / P) * k * d * beta;
        check("rsa", c, ULY_STRAT_RSA, 1, P, 1, f, 3 * f, inter);
        /* all-gather CP: (r-1)/r 2 b N k d beta forward, twice backward */
        f = (P - 1) * 2 * b * N * k * d * beta / P;
        check("allgather-cp", c, ULY_STRAT_ALLGATHER_CP, 1, P, 1, f, 2 * f, inter);
        /* Megatron SP: 4 (t-1)/t b N h beta forward (two all-gathers, two
         * reduce-scatters); backward those mirrored and the two regions'
         * inputs gathered again for the weight gradients: 6 (t-1)/t b N h
         * beta; t must divide heads */
        if (a % P == 0 && (ke > 0)) {
            f = 4 * (P - 1) * b * N * h * beta / P;
            check("megatron-sp", c, ULY_STRAT_MEGATRON_SP, 1, 1, P, f, 6 * (P - 1) * b * N * h * beta / P, inter);
        }
        /* plain Megatron TP: two ring all-reduces of b N h per layer each way
         * (forward after out_proj and mlp_down, backward before qkv and mlp_up),
         * each sending 2 (t-1)/t of the buffer; t must divide heads */
        if (a % P == 0 && (ke > 0)) {
            const int64_t ar = 2 * (P - 1) * b * N * h * beta / P;
            check("megatron-tp", c, ULY_STRAT_MEGATRON_TP, 1, 1, P, 2 * ar, 2 * ar, inter);
        }
        /* USP with u = min(P, 8) inside the node and r = P/u across:
         * a2a b N d (2a + 2k_eff)(u-1)/(u^2 r) beta + ring 2 (r-1) b (N/r) (k_eff/u) d beta;
         * backward: the a2a mirrored, the ring twice */
        const int64_t u = P < 8 ? P : 8, r = P / u, ku = keff(k, u);
        if (ku > 0 && a % u == 0) {
            const int64_t fa = b * N * d * (2 * a + 2 * ku) * (u - 1) / (u * u * r) * beta;
            const int64_t fr = 2 * (r - 1) * b * (N / r) * (ku / u) * d * beta;
            check("usp", c, ULY_STRAT_USP, u, r, 1, fa + fr, fa + 2 * fr, inter);
        }
    }
    FX_DONE();
}
