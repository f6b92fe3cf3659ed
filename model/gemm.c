/* gemm.c: a GEMM's time by its shape on a GPU, the way cuBLAS runs it
 * (docs/model.md, "Compute costs"). The output is cut into tiles, one SM
 * computing one tile at a time, so a GEMM runs in waves of as many tiles as
 * the GPU has SMs (tile and wave quantization: NVIDIA's "Matrix
 * Multiplication Background" guide); each SM's k loop runs at the GPU's best
 * achievable rate (published "maximum achievable matmul FLOPS") while the
 * operands stream in from HBM beside it; the output is written after the
 * loop, not under it, and the pipeline's fill is paid once (XLA's dot cost
 * model, xla/service/gpu/model/gpu_dot_fusion_cost_model.cc). Too few tiles
 * to fill the SMs split the k loop over more of them (split-K, CUTLASS),
 * each split's partial sums written and read back in fp32. FP8 GEMMs run at
 * the FP8 dense peak, read 1-byte operands and write bf16 (cuBLASLt's FP8
 * matmul with a bf16 D, as TransformerEngine calls it), k blocks of 128
 * elements. Pure: no I/O, no
 * globals; a few divisions per GEMM. */
#include <math.h>

#include "gemm.h"
#include "internal.h"

double uly_gpu_clock_scale(const uly_gpu *g)
{
    if (!(g->boost_clock_hz > 0) || !(g->sustained_clock_hz > 0)) return 1.0;
    return g->sustained_clock_hz / g->boost_clock_hz;
}

void uly_gemm_rates_init(uly_gemm_rates *r, const uly_gpu *g, uly_dtype dt)
{
    const double sms = g->sm_count > 0 ? (double)g->sm_count : 1.0;
    r->sm_flops = g->peak_flops[dt] * g->gemm_peak_frac * uly_gpu_clock_scale(g) / sms;
    r->inv_bw = 1.0 / (g->hbm_bw_Bps * g->mem_eff);
    r->sms = sms;
    r->tile_m = g->gemm_tile_m > 0 ? (double)g->gemm_tile_m : 1.0;
    r->tile_n = g->gemm_tile_n > 0 ? (double)g->gemm_tile_n : 1.0;
    r->tile_s_per_k = 2.0 * r->tile_m * r->tile_n / r->sm_flops;
    r->latency_s = g->gemm_latency_s;
    r->beta = (double)uly_dtype_gemm_bytes(dt);
    r->s_per_elem = r->beta * r->inv_bw;
}

/* Seconds of batch x (m x k)(k x n) (uly_gemm_time_pos, gemm.h):
 *   tiles = batch ceil(m / Tm) ceil(n / Tn); with the k loop split s ways
 *   (s = 1 unless the tiles leave SMs idle), waves = ceil(s tiles / SMs);
 *   loop  = max(waves 2 Tm Tn ceil(k / s) / R_sm, beta batch (m k + k n) / B)
 *   write = (beta_out batch m n + [s > 1] 2 x 4 s batch m n) / B, beta_out
 *   the operands' beta but for FP8's (1): bf16, 2
 *   t     = latency + min over s of (loop + write)
 * R_sm one SM's achievable FLOP/s, B the achievable HBM rate. 0 unless
 * every size is positive. */
double uly_gemm_time_s(const uly_gemm_rates *r, double batch, double m, double n, double k)
{
    if (!(batch > 0 && m > 0 && n > 0 && k > 0)) return 0;
    if (r->beta < 2.0) /* FP8: bf16 outputs, 128-element k blocks */
        return uly_gemm_time_io(r, batch, m, n, k, 2.0 * r->inv_bw, 2.0, ULY_GEMM_SPLIT_MIN_K_FP8);
    return uly_gemm_time_io(r, batch, m, n, k, r->s_per_elem, r->beta, ULY_GEMM_SPLIT_MIN_K);
}
