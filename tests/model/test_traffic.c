/* The result's traffic totals, worked out here from the model's shapes:
 * ZeRO-3's bytes per rank and layer (two weight all-gathers and a gradient
 * reduce-scatter of padded shards), kept apart from the strategy's; and
 * the tiers, where a pipeline's stage transfers count (its stages on
 * different nodes) although ZeRO's traffic does not; and a total past
 * INT64_MAX reported as an overflow. */
#include "fixtures.h"
#include "../../model/internal.h"

static uly_plan plan;

int main(void)
{
    const uly_model m = fx_tiny(); /* a layer holds 49280 parameters (fixtures.h) */
    const uly_workload w = fx_work(4096);
    uly_result r;

    /* Ulysses u 1 x dp 8: ZeRO-3 over 8 ranks, shard ceil(49280 / 8) = 6160,
     * bf16 weights and gradients on the wire: 2 x 7 x 6160 x 2 gathered,
     * 7 x 6160 x 2 reduce-scattered */
    const uly_cluster c1 = fx_unit(1);
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 1, 1, 1, 8);
    CHECK(uly_evaluate(&m, &w, &c1, &l, &plan, &r) == ULY_OK, "evaluate");
    const int64_t shard = (49280 + 7) / 8;
    CHECK(r.zero_bytes == 3 * 7 * shard * 2, "ZeRO-3 bytes per rank and layer %lld, want %lld", (long long)r.zero_bytes,
          (long long)(3 * 7 * shard * 2));
    CHECK(r.comm_fwd_bytes == 0 && r.comm_bwd_bytes == 0 && r.comm_tiers == 0,
          "no Ulysses traffic at u 1 (ZeRO's is not the strategy's): fwd %lld bwd %lld tiers %d",
          (long long)r.comm_fwd_bytes, (long long)r.comm_bwd_bytes, r.comm_tiers);

    /* Ulysses u 2 x dp 4 in each of 2 pipeline stages on 2 nodes of 8: the
     * all-to-alls stay in the node, the stage transfers cross it */
    const uly_cluster c2 = fx_unit(2);
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 2, 1, 1, 4);
    l.pp = 2;
    CHECK(uly_evaluate(&m, &w, &c2, &l, &plan, &r) == ULY_OK, "evaluate with a pipeline");
    CHECK(r.comm_tiers == (ULY_TIER_INTRA | ULY_TIER_INTER), "tiers %d, want in-node (all-to-all) and between nodes (stages) %d",
          r.comm_tiers, ULY_TIER_INTRA | ULY_TIER_INTER);
    CHECK(r.comm_fwd_bytes > 0, "the all-to-alls' bytes");
    const int64_t fwd_pp = r.comm_fwd_bytes, bwd_pp = r.comm_bwd_bytes;
    l.pp = 1;
    l.dp = 8; /* the same all-to-alls on 16 GPUs with no pipeline: in the node only */
    CHECK(uly_evaluate(&m, &w, &c2, &l, &plan, &r) == ULY_OK && r.comm_tiers == ULY_TIER_INTRA,
          "tiers without the pipeline %d, want %d", r.comm_tiers, ULY_TIER_INTRA);
    /* the stage transfers are not the strategy's bytes: the same all-to-alls either way */
    CHECK(r.comm_fwd_bytes == fwd_pp && r.comm_bwd_bytes == bwd_pp,
          "strategy bytes with the pipeline %lld/%lld, without %lld/%lld", (long long)fwd_pp, (long long)bwd_pp,
          (long long)r.comm_fwd_bytes, (long long)r.comm_bwd_bytes);

    /* A total that does not fit int64 is an overflow, not a wrapped sum:
     * two forward all-to-alls of just over INT64_MAX / 2 bytes each (the
     * plan edited: no real shape gets there). The pricing without totals
     * still prices it; with them, and uly_evaluate's, it is ULY_EOVERFLOW. */
    uly_reason reasons[ULY_MAX_REASONS];
    int n_reasons = 0;
    CHECK(uly_plan_build(&m, &w, &c2, &l, &plan, reasons, &n_reasons) == ULY_OK, "build");
    int edited = 0;
    for (int i = 0; i < plan.n_ops && edited < 2; i++)
        if (plan.ops[i].kind == ULY_OP_COMM && plan.ops[i].phase == ULY_PHASE_FWD && plan.ops[i].group == ULY_GROUP_ULYSSES)
            plan.ops[i].bytes_sent = INT64_MAX / 2 + 1, edited++;
    CHECK(edited == 2, "two forward all-to-alls to edit, found %d", edited);
    CHECK(uly_plan_price(&m, &w, &c2, &plan, &r) == ULY_OK, "priced without totals");
    CHECK(uly_plan_price_totals(&m, &w, &c2, &plan, &r) == ULY_EOVERFLOW, "forward total past INT64_MAX: overflow");
    /* one of them alone fits */
    for (int i = 0, left = 1; i < plan.n_ops; i++)
        if (plan.ops[i].bytes_sent == INT64_MAX / 2 + 1 && left) plan.ops[i].bytes_sent = 1, left = 0;
    CHECK(uly_plan_price_totals(&m, &w, &c2, &plan, &r) == ULY_OK && r.comm_fwd_bytes > INT64_MAX / 2,
          "one large all-to-all fits: %lld", (long long)r.comm_fwd_bytes);
    FX_DONE();
}
