/* The ring overlap rule c >= F/B applied to the shipped DGX A100 presets:
 * their own minimum ring blocks, inside a node (NVLink) and across nodes
 * (the NIC), from their peak bf16 rate and per-direction bandwidths. The
 * NVLink figure must agree with the Ring Attention paper's ~1.0K tokens,
 * since both use 312 TFLOP/s and 300 GB/s per direction. */
#include <math.h>
#include <stdio.h>

#include "preset.h"

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
        if (fabs(ib - F / c.nic_bw_Bps) > 1e-6 * ib) {
            fprintf(stderr, "FAIL: %s: block %.3f != F/B\n", names[i], ib);
            fails++;
        }
    }
    return fails ? 1 : 0;
}
