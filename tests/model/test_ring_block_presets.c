/* The ring overlap rule c >= F/B applied to the shipped DGX A100 presets:
 * their own minimum ring blocks, inside a node (NVLink) and across nodes
 * (the NIC), from their peak bf16 rate and per-direction bandwidths. The
 * NVLink figure must agree with the Ring Attention paper's ~1.0K tokens,
 * since both use 312 TFLOP/s and 300 GB/s per direction. And the block
 * uly_ring_min_block_tokens returns must be where the schedule's priced
 * ring step turns: a ring of 2 ranks on the preset's links at its peak rate
 * (efficiency 1, no latency) exposes the K,V hop at a block 2% below it and
 * hides it at a block 2% above. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "preset.h"

static uly_plan plan;

/* Exposed seconds of the forward K,V hop of a ring of 2 ranks with blocks of
 * c tokens; across nodes when `nic`. MHA (k = a), bf16, non-causal: a block
 * is 4 a c^2 d FLOPs, a hop moves K and V, 2 x 2 x c a d bytes. */
static double hop_exposed(const uly_cluster *preset, int64_t c, int nic, int *ok)
{
    uly_cluster cl = *preset;
    cl.gpu.gemm_eff.n = 1;
    cl.gpu.gemm_eff.x[0] = 1;
    cl.gpu.gemm_eff.eff[0] = 1;
    memset(cl.gpu.attn_eff, 0, sizeof cl.gpu.attn_eff); /* the GEMM curve: efficiency 1 */
    cl.intra_lat_s = cl.nic_lat_s = 0;
    cl.gpu.hbm_bytes = 1e18;
    uly_model m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "mha");
    m.layers = 1; m.hidden = 1024; m.heads = 8; m.kv_heads = 8; m.head_dim = 128; m.ffn_hidden = 4096; m.vocab = 1024;
    uly_workload w;
    memset(&w, 0, sizeof w);
    w.seq = 2 * c; w.micro_batch = 1; w.dtype = ULY_BF16; w.flash = 1; w.recompute = ULY_RECOMPUTE_NONE;
    uly_layout l;
    /* across nodes: data parallel of 8 inside the node, the ring's 2 ranks 8 apart */
    uly_layout_init(&l, ULY_STRAT_RING, 1, 2, 1, nic ? 8 : 1);
    if (nic) {
        l.order[0] = ULY_GROUP_TP; l.order[1] = ULY_GROUP_DP; l.order[2] = ULY_GROUP_ULYSSES; l.order[3] = ULY_GROUP_RING;
    }
    uly_result r;
    *ok = uly_evaluate(&m, &w, &cl, &l, &plan, &r) == ULY_OK && r.feasible;
    for (int i = 0; i < plan.n_ops; i++)
        if (plan.ops[i].type == ULY_OPT_RING_KV && plan.ops[i].phase == ULY_PHASE_FWD) {
            const int tier = nic ? ULY_TIER_INTER : ULY_TIER_INTRA;
            if (plan.ops[i].tiers != tier) *ok = 0;
            return r.op_exposed_s[i];
        }
    *ok = 0;
    return -1;
}

int main(void)
{
    int fails = 0;
    const char *names[] = {"dgx-a100-40g", "dgx-a100-80g"};
    for (int i = 0; i < 2; i++) {
        uly_cluster c;
        char why[256];
        if (sim_cluster_load(names[i], &c, why, sizeof why) != 0) {
            fprintf(stderr, "FAIL: %s: %s\n", names[i], why);
            return 1;
        }
        const double F = c.gpu.peak_flops[ULY_BF16];
        const double nv = uly_ring_min_block_tokens(F, c.intra_bw_Bps);
        const double ib = uly_ring_min_block_tokens(F, c.nic_bw_Bps);
        printf("%s: F %.0f TFLOP/s, NVLink %.0f GB/s -> block >= %.0f tokens; NIC %.1f GB/s -> block >= %.0f tokens\n",
               names[i], F / 1e12, c.intra_bw_Bps / 1e9, nv, c.nic_bw_Bps / 1e9, ib);
        if (fabs(nv / 1024.0 - 1.0) > 0.10) {
            fprintf(stderr, "FAIL: %s NVLink block %.0f, Ring Attention paper ~1.0K\n", names[i], nv);
            fails++;
        }
        if (!(ib > 8 * nv)) {
            fprintf(stderr, "FAIL: %s: the NIC block %.0f should be far above NVLink's %.0f\n", names[i], ib, nv);
            fails++;
        }
        for (int nic = 0; nic < 2; nic++) {
            const double blk = nic ? ib : nv;
            const int64_t below = (int64_t)floor(blk * 0.98), above = (int64_t)ceil(blk * 1.02);
            int ok_b = 0, ok_a = 0;
            const double eb = hop_exposed(&c, below, nic, &ok_b), ea = hop_exposed(&c, above, nic, &ok_a);
            if (!ok_b || !ok_a || !(eb > 0) || ea != 0) {
                fprintf(stderr,
                        "FAIL: %s %s: minimum block %.0f tokens, but the priced hop shows %.3g s at %lld tokens "
                        "(want > 0) and %.3g s at %lld (want 0) (evaluated %d %d)\n",
                        names[i], nic ? "NIC" : "NVLink", blk, eb, (long long)below, ea, (long long)above, ok_b, ok_a);
                fails++;
            }
        }
    }
    return fails ? 1 : 0;
}
