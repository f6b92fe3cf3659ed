/* The emitters' size checks: a strategy section multiplies its transfers'
 * sizes once, before the shape checks, but a size that does not fit int64
 * makes the build ULY_EOVERFLOW only once a transfer of that size is
 * emitted; with the shapes impossible (a fatal reason, no ops) the build
 * stays ULY_OK. The models are made so that only the section's transfers
 * overflow: head_dim 2^20 against hidden and FFN widths of 64 for the
 * context-parallel sections, a hidden width of 2^20 against heads of 8
 * elements for the tensor-parallel ones. And the placement of a group of
 * one rank, which the comm ops of a larger one rely on: one rank, on one
 * node, no traffic, its stride the product of the degrees inside it. */
#include "fixtures.h"

static uly_plan plan;

static uly_status build_tp(const uly_model *m, const uly_workload *w, const uly_cluster *c, uly_strategy_id s,
                           int64_t u, int64_t r, int64_t t, int *fatal)
{
    uly_layout l;
    uly_layout_init(&l, s, u, r, t, 1);
    uly_reason reasons[ULY_MAX_REASONS];
    int n = 0;
    const uly_status st = uly_plan_build(m, w, c, &l, &plan, reasons, &n);
    *fatal = 0;
    for (int i = 0; i < n; i++) *fatal |= reasons[i].fatal;
    return st;
}

static uly_status build(const uly_model *m, const uly_workload *w, const uly_cluster *c, uly_strategy_id s,
                        int64_t u, int64_t r, int *fatal)
{
    return build_tp(m, w, c, s, u, r, 1, fatal);
}

int main(void)
{
    /* 2 heads (and 2 KV heads) of 2^20 elements each */
    uly_model m = fx_model("wide-heads", 2, 64, 2, 2, 64, 1000, 0);
    m.head_dim = (int64_t)1 << 20;
    uly_workload w = fx_work((int64_t)1 << 26);
    w.micro_batch = (int64_t)1 << 20;
    const uly_cluster c = fx_unit(1);
    int fatal = 0;

    /* Ulysses u 2: a head's elements on a rank, b x N/2 x d = 2^20 2^25 2^20,
     * are past 2^63 */
    CHECK(build(&m, &w, &c, ULY_STRAT_ULYSSES, 2, 1, &fatal) == ULY_EOVERFLOW && !fatal,
          "ulysses u 2: the all-to-all's 2^65 elements overflow");
    /* ring r 2: one hop's K and V, 2 x b x N/2 x k x d = 2^67 */
    CHECK(build(&m, &w, &c, ULY_STRAT_RING, 1, 2, &fatal) == ULY_EOVERFLOW && !fatal,
          "ring r 2: the hop's 2^67 elements overflow");
    /* all-gather CP r 2: b x N/2 x k d = 2^20 2^25 2^21 gathered */
    CHECK(build(&m, &w, &c, ULY_STRAT_ALLGATHER_CP, 1, 2, &fatal) == ULY_EOVERFLOW && !fatal,
          "allgather-cp r 2: the gather's 2^66 elements overflow");
    /* RSA: the ring's b x N/2 x k d at r 2; the full-length b x N x k d of
     * its dK, dV even at r 1 (multiplied whatever the degree) */
    CHECK(build(&m, &w, &c, ULY_STRAT_RSA, 1, 2, &fatal) == ULY_EOVERFLOW && !fatal, "rsa r 2: overflow");
    CHECK(build(&m, &w, &c, ULY_STRAT_RSA, 1, 1, &fatal) == ULY_EOVERFLOW && !fatal,
          "rsa r 1: the full-length gradient's 2^67 elements overflow");
    /* USP u 2 r 2: both sections' sizes are past 2^63 */
    CHECK(build(&m, &w, &c, ULY_STRAT_USP, 2, 2, &fatal) == ULY_EOVERFLOW && !fatal, "usp 2 x 2: overflow");

    /* degree 1: nothing moves, nothing is multiplied: the layer's own sizes
     * (2^20 x 2^26 x 64 = 2^52 at most) fit */
    CHECK(build(&m, &w, &c, ULY_STRAT_ULYSSES, 1, 1, &fatal) == ULY_OK && !fatal, "ulysses u 1: no transfer");
    CHECK(build(&m, &w, &c, ULY_STRAT_RING, 1, 1, &fatal) == ULY_OK && !fatal, "ring r 1: no transfer");

    /* the shapes impossible: Ulysses u 4 over 2 heads, 2^26 + 1 tokens over
     * a ring of 2: a fatal reason and no ops, so nothing overflows */
    CHECK(build(&m, &w, &c, ULY_STRAT_ULYSSES, 4, 1, &fatal) == ULY_OK && fatal, "ulysses u 4 > 2 heads: fatal, no overflow");
    w.seq += 1;
    CHECK(build(&m, &w, &c, ULY_STRAT_RING, 1, 2, &fatal) == ULY_OK && fatal,
          "ring over an odd sequence: fatal, no overflow");
    CHECK(build(&m, &w, &c, ULY_STRAT_ALLGATHER_CP, 1, 2, &fatal) == ULY_OK && fatal,
          "allgather-cp over an odd sequence: fatal, no overflow");
    CHECK(build(&m, &w, &c, ULY_STRAT_RSA, 1, 2, &fatal) == ULY_OK && fatal, "rsa over an odd sequence: fatal, no overflow");
    w.seq -= 1;

    /* tensor parallelism: b x N/t x h = 2^20 2^25 2^20 elements gathered
     * by Megatron-SP, b x N x h all-reduced by plain TP, b x N/(2 t) x h
     * gathered by TP inside a ring of 2 (whose own hops, of heads of 8
     * elements, fit) */
    uly_model wide = fx_model("wide", 2, (int64_t)1 << 20, 2, 2, 64, 1000, 0);
    wide.head_dim = 8;
    CHECK(build_tp(&wide, &w, &c, ULY_STRAT_MEGATRON_SP, 1, 1, 2, &fatal) == ULY_EOVERFLOW && !fatal,
          "megatron-sp t 2: the all-gather's 2^65 elements overflow");
    CHECK(build_tp(&wide, &w, &c, ULY_STRAT_MEGATRON_TP, 1, 1, 2, &fatal) == ULY_EOVERFLOW && !fatal,
          "megatron-tp t 2: the all-reduce's 2^66 elements overflow");
    CHECK(build_tp(&wide, &w, &c, ULY_STRAT_RING, 1, 2, 2, &fatal) == ULY_EOVERFLOW && !fatal,
          "ring 2 x tp 2: the all-gather's 2^64 elements overflow");
    CHECK(build_tp(&wide, &w, &c, ULY_STRAT_RING, 1, 2, 1, &fatal) == ULY_OK && !fatal, "ring 2 without TP: fits");
    /* t 4 over 2 heads: fatal, nothing emitted, nothing overflows */
    CHECK(build_tp(&wide, &w, &c, ULY_STRAT_MEGATRON_SP, 1, 1, 4, &fatal) == ULY_OK && fatal,
          "megatron-sp t 4 > 2 heads: fatal, no overflow");
    CHECK(build_tp(&wide, &w, &c, ULY_STRAT_MEGATRON_TP, 1, 1, 4, &fatal) == ULY_OK && fatal,
          "megatron-tp t 4 > 2 heads: fatal, no overflow");
    CHECK(build_tp(&wide, &w, &c, ULY_STRAT_RING, 1, 2, 4, &fatal) == ULY_OK && fatal,
          "ring 2 x tp 4 > 2 heads: fatal, no overflow");

    /* the MLP activation's element count, b x N x f = 2^10 2^40 14336, is
     * past 2^63 while every transfer of plain TP 1 is empty: the build
     * overflows (a double cast to int64 there was undefined, INT64_MIN on
     * x86, a negative activation cost) */
    {
        uly_model big = fx_model("ffn", 2, 4096, 32, 8, 14336, 1000, 1);
        uly_workload wb = fx_work((int64_t)1 << 40);
        wb.micro_batch = 1024;
        CHECK(build_tp(&big, &wb, &c, ULY_STRAT_MEGATRON_TP, 1, 1, 1, &fatal) == ULY_EOVERFLOW,
              "megatron-tp t 1: the activation's 1.5e19 elements overflow");
        wb.micro_batch = 512; /* 7.9e18 elements: fits */
        CHECK(build_tp(&big, &wb, &c, ULY_STRAT_MEGATRON_TP, 1, 1, 1, &fatal) == ULY_OK, "b 512: fits");
    }

    /* ring 4 inside TP 2 inside DP 2, Ulysses 1 (USP), 2 pipeline stages, 8
     * GPUs a node: Ulysses (placed between the ring and DP) is 8 ranks
     * apart, the pipeline 16 */
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_USP, 1, 4, 2, 2);
    l.pp = 2;
    l.order[0] = ULY_GROUP_RING, l.order[1] = ULY_GROUP_TP, l.order[2] = ULY_GROUP_ULYSSES, l.order[3] = ULY_GROUP_DP;
    const uly_cluster c4 = fx_unit(4);
    uly_group_place gp;
    CHECK(uly_group_place_get(&l, &c4, ULY_GROUP_ULYSSES, &gp) == ULY_OK, "placement");
    CHECK(gp.size == 1 && gp.stride == 8 && gp.per_node == 1 && gp.nodes == 1 && gp.tiers == 0,
          "Ulysses of 1: size %lld stride %lld per node %lld nodes %lld tiers %d, want 1 8 1 1 0", (long long)gp.size,
          (long long)gp.stride, (long long)gp.per_node, (long long)gp.nodes, gp.tiers);
    CHECK(uly_group_place_get(&l, &c4, ULY_GROUP_PP, &gp) == ULY_OK && gp.size == 2 && gp.stride == 16 &&
              gp.per_node == 1 && gp.nodes == 2 && gp.tiers == ULY_TIER_INTER,
          "pipeline of 2 across nodes: stride %lld nodes %lld tiers %d", (long long)gp.stride, (long long)gp.nodes,
          gp.tiers);
    l.pp = 1;
    CHECK(uly_group_place_get(&l, &c4, ULY_GROUP_PP, &gp) == ULY_OK && gp.size == 1 && gp.stride == 16 &&
              gp.per_node == 1 && gp.nodes == 1 && gp.tiers == 0,
          "pipeline of 1: stride %lld per node %lld nodes %lld tiers %d", (long long)gp.stride, (long long)gp.per_node,
          (long long)gp.nodes, gp.tiers);
    FX_DONE();
}
