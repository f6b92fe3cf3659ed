/* Collective costs: a two-level all-to-all across nodes costs more than the
 * same inside one node; a fat tree with oversubscription rho slows an
 * all-to-all by max(1, rho (1 - k/p)); the ring overlap rule c >= F/B gives
 * the Ring Attention paper's minimum blocks from its own figures. */
#include "fixtures.h"

static uly_group_place place(const uly_cluster *c, int64_t u, int64_t dp)
{
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, u, 1, 1, dp);
    uly_group_place gp;
    uly_group_place_get(&l, c, ULY_GROUP_ULYSSES, &gp);
    return gp;
}

int main(void)
{
    uly_cluster c = fx_a100(64);
    const double n = 256e6;
    /* 8 ranks in one node vs 8 ranks one per node (Ulysses outside DP) */
    uly_group_place in = place(&c, 8, 1);
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 8, 1, 1, 8);
    l.order[0] = ULY_GROUP_DP; l.order[1] = ULY_GROUP_TP; l.order[2] = ULY_GROUP_ULYSSES; l.order[3] = ULY_GROUP_RING;
    uly_group_place across;
    uly_group_place_get(&l, &c, ULY_GROUP_ULYSSES, &across);
    CHECK(in.nodes == 1 && in.tiers == ULY_TIER_INTRA, "8 ranks inside a node: nodes %lld", (long long)in.nodes);
    CHECK(across.nodes == 8 && across.tiers == ULY_TIER_INTER, "8 ranks strided by 8: nodes %lld",
          (long long)across.nodes);
    const double t_in = uly_cost_collective(&c, ULY_COLL_ALLTOALL, &in, n, 1, 1);
    const double t_x = uly_cost_collective(&c, ULY_COLL_ALLTOALL, &across, n, 1, 1);
    CHECK(t_x > t_in, "all-to-all across nodes %.3g s should exceed inside %.3g s", t_x, t_in);
    /* two-level: 64 ranks = 8 per node x 8 nodes costs more than 8 in a node */
    uly_group_place two = place(&c, 64, 1);
    CHECK(two.per_node == 8 && two.nodes == 8 && two.tiers == (ULY_TIER_INTRA | ULY_TIER_INTER), "64 ranks placement");
    const double t_two = uly_cost_collective(&c, ULY_COLL_ALLTOALL, &two, n, 1, 1);
    CHECK(t_two > t_in, "two-level %.3g s should exceed in-node %.3g s", t_two, t_in);
    /* the two-level formula itself */
    const double buf = n * 64 / 63;
    const double want = 7 * c.intra_lat_s + buf * 7 / 8 / c.intra_bw_Bps + 7 * c.nic_lat_s + buf * 7 / 8 / c.nic_bw_Bps;
    CHECK(fabs(t_two / want - 1) < 1e-12, "two-level all-to-all %.6g, formula %.6g", t_two, want);

    /* fat tree: rho = 4, 16 GPUs per leaf, group of 64 GPUs: slower by rho (1 - 16/64) = 3 on the NIC term */
    uly_cluster ft = c;
    ft.gpus_per_leaf = 16;
    ft.oversub = 4;
    ft.nic_lat_s = 0;
    ft.intra_lat_s = 0;
    uly_cluster flat = ft;
    flat.oversub = 1;
    uly_group_place g64 = place(&ft, 64, 1);
    const double intra = buf * 7 / 8 / ft.intra_bw_Bps;
    const double slow = uly_cost_collective(&ft, ULY_COLL_ALLTOALL, &g64, n, 1, 1) - intra;
    const double fast = uly_cost_collective(&flat, ULY_COLL_ALLTOALL, &g64, n, 1, 1) - intra;
    CHECK(fabs(slow / fast - 3.0) < 1e-9, "oversubscribed fat tree slows the NIC term %.4fx, want 3", slow / fast);
    /* within one leaf no slowdown */
    uly_group_place g16 = place(&ft, 16, 4);
    CHECK(fabs(uly_cost_collective(&ft, ULY_COLL_ALLTOALL, &g16, n, 1, 1) -
               uly_cost_collective(&flat, ULY_COLL_ALLTOALL, &g16, n, 1, 1)) < 1e-15,
          "a group inside one leaf is not slowed");

    /* Ring Attention: 312 TFLOP/s with 300 GB/s NVLink -> ~1.0K tokens; 12.5 GB/s IB -> ~24.5K */
    const double nv = uly_ring_min_block_tokens(312e12, 300e9), ib = uly_ring_min_block_tokens(312e12, 12.5e9);
    CHECK(fabs(nv / 1024.0 - 1.0) < 0.10, "NVLink block %.0f tokens, paper ~1.0K", nv);
    CHECK(fabs(ib / (24.5 * 1024.0) - 1.0) < 0.10, "InfiniBand block %.0f tokens, paper ~24.5K", ib);
    printf("ring minimum block: NVLink %.0f tokens (paper ~1.0K), InfiniBand %.0f tokens (paper ~24.5K)\n", nv, ib);
    FX_DONE();
}
