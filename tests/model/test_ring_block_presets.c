/* The ring overlap rule c >= F/B applied to the shipped DGX A100 presets:
 * their own minimum ring blocks, inside a node (NVLink) and across nodes
 * (the NIC), from their peak bf16 rate and per-direction bandwidths. The
 * Ring Attention paper's ~1.0K tokens is 312 TFLOP/s over NVLink's 300 GB/s
 * signalling rate per direction; the presets carry what NCCL achieves on it
 * (240 GB/s), so their block must be that figure scaled by 300/240. And the block
 * uly_ring_min_block_tokens returns must be where the schedule's priced
 * ring step turns: a ring of 2 ranks on the preset's links at its peak rate
 * (efficiency 1, no latency, no kernel launch cost) exposes the K,V hop at a block 2% below it and
 * hides it at a block 2% above. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "preset.h"

static uly_plan plan;

/* What the forward K,V hop of a ring of 2 ranks with blocks of c tokens
 * adds to the layer's forward (its time less its compute ops'), and the
 * hop's own exposed time; across nodes when `nic`. MHA (k = a), bf16,
 * non-causal: a block is 4 a c^2 d FLOPs, a hop moves K and V, 2 x 2 x c a d
 * bytes. */
static int hop_exposed(const uly_cluster *preset, int64_t c, int nic, double *layer_extra, double *op_exposed)
{
    uly_cluster cl = *preset;
    cl.gpu.sm_count = 0; /* GEMMs and attention on the curve below, not by shape */
    cl.gpu.gemm_eff.n = 1;
    cl.gpu.gemm_eff.x[0] = 1;
    cl.gpu.gemm_eff.eff[0] = 1;
    memset(cl.gpu.attn_eff, 0, sizeof cl.gpu.attn_eff); /* the GEMM curve: efficiency 1 */
    cl.intra_lat_s = cl.nic_lat_s = 0;
    cl.gpu.kernel_floor_s[0] = cl.gpu.kernel_floor_s[1] = 0; /* no launch costs: the rule's idealisation */
    cl.host_launch_s = 0;
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
    if (uly_evaluate(&m, &w, &cl, &l, &plan, &r) != ULY_OK || !r.feasible) return 0;
    double compute = 0;
    int found = 0;
    for (int i = 0; i < plan.n_ops; i++) {
        const uly_op *o = &plan.ops[i];
        if (o->phase != ULY_PHASE_FWD || o->per_model || o->per_step) continue;
        if (o->kind != ULY_OP_COMM) compute += r.op_time_s[i];
        if (o->type == ULY_OPT_RING_KV) {
            if (o->tiers != (nic ? ULY_TIER_INTER : ULY_TIER_INTRA)) return 0;
            *op_exposed = r.op_exposed_s[i];
            found = 1;
        }
    }
    *layer_extra = r.time.layer_fwd_s - compute;
    if (fabs(*layer_extra) < 1e-12 * r.time.layer_fwd_s) *layer_extra = 0; /* rounding of the sum */
    return found;
}

int main(void)
{
    int fails = 0;
    const char *names[] = {"dgx-a100-40g", "dgx-a100-80g"};
    for (int i = 0; i < 2; i++) {
        uly_cluster c;
        char why[256];
        if (preset_cluster_load(names[i], &c, why, sizeof why) != 0) {
            fprintf(stderr, "FAIL: %s: %s\n", names[i], why);
            return 1;
        }
        const double F = c.gpu.peak_flops[ULY_BF16];
        const double nv = uly_ring_min_block_tokens(F, c.intra_bw_Bps);
        const double ib = uly_ring_min_block_tokens(F, c.nic_bw_Bps);
        printf("%s: F %.0f TFLOP/s, NVLink %.0f GB/s -> block >= %.0f tokens; NIC %.1f GB/s -> block >= %.0f tokens\n",
               names[i], F / 1e12, c.intra_bw_Bps / 1e9, nv, c.nic_bw_Bps / 1e9, ib);
        if (fabs(nv / (1024.0 * 300e9 / c.intra_bw_Bps) - 1.0) > 0.10) {
            fprintf(stderr, "FAIL: %s NVLink block %.0f, want the Ring Attention paper's ~1.0K x 300 GB/s / %.0f GB/s\n",
                    names[i], nv, c.intra_bw_Bps / 1e9);
            fails++;
        }
        if (!(ib > 8 * nv)) {
            fprintf(stderr, "FAIL: %s: the NIC block %.0f should be far above NVLink's %.0f\n", names[i], ib, nv);
            fails++;
        }
        for (int nic = 0; nic < 2; nic++) {
            const double blk = nic ? ib : nv;
            const int64_t below = (int64_t)floor(blk * 0.98), above = (int64_t)ceil(blk * 1.02);
            double lb = -1, ob = -1, la = -1, oa = -1;
            const int ok = hop_exposed(&c, below, nic, &lb, &ob) && hop_exposed(&c, above, nic, &la, &oa);
            if (!ok || !(lb > 0) || !(ob > 0) || la != 0 || oa != 0) {
                fprintf(stderr,
                        "FAIL: %s %s: minimum block %.0f tokens, but the priced hop adds %.3g s to the layer (%.3g s "
                        "its own) at %lld tokens (want > 0) and %.3g s (%.3g s) at %lld (want 0) (evaluated %d)\n",
                        names[i], nic ? "NIC" : "NVLink", blk, lb, ob, (long long)below, la, oa, (long long)above, ok);
                fails++;
            }
        }
    }
    return fails ? 1 : 0;
}
