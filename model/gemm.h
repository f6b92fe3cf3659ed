/* gemm.h: the GEMM time model of gemm.c, inline for the pricing loop (a
 * plan prices a dozen GEMMs, millions of plans a second): see gemm.c for
 * what it models and its sources. Not installed. */
#ifndef ULY_GEMM_H
#define ULY_GEMM_H

#include "ulysim.h"

/* Split-K keeps at least four k blocks in each split: the depth of the
 * software pipeline a k loop needs to hide its loads (CUTLASS's Hopper and
 * Ampere mainloops run k blocks of 128-byte rows, 64 elements of 16-bit
 * data, 128 of 8-bit, in 3 to 7 stages); shorter splits would leave the
 * pipeline empty. */
#define ULY_GEMM_SPLIT_MIN_K 256.0
#define ULY_GEMM_SPLIT_MIN_K_FP8 512.0
/* Bytes per partial sum of split-K, written and read back: fp32 */
#define ULY_GEMM_PARTIAL_BYTES 4.0

/* The ceiling of x >= 0: a truncation and a compare (libm's ceil is a long
 * inline sequence without SSE4.1's roundsd, and a GEMM takes four); from
 * 2^52 on every double is an integer already */
static inline double uly_ceil_pos(double x)
{
    if (!(x < 0x1p52)) return x;
    const double t = (double)(int64_t)x;
    return t < x ? t + 1.0 : t;
}

/* One split of the k loop s ways (s >= 2): the loop, the slower of its
 * waves and its operand bytes, then the output and the s fp32 partial sums
 * written and read back */
static inline double uly_gemm_split_s(const uly_gemm_rates *r, double tiles, double k, double read, double out,
                                      double s, double beta_out)
{
    const double waves = uly_ceil_pos(tiles * s / r->sms);
    const double math = waves * r->tile_s_per_k * uly_ceil_pos(k / s);
    const double loop = math > read ? math : read;
    return loop + (beta_out + 2.0 * ULY_GEMM_PARTIAL_BYTES * s) * out * r->inv_bw;
}

/* uly_gemm_time_s for positive sizes: seconds of batch x (m x k)(k x n),
 * the output written at s_out seconds and beta_out bytes an element, the k
 * loop split into parts of at least split_min_k (uly_gemm_time_pos, the
 * schedule's GEMM ops: outputs as the operands, 16-bit k blocks; FP8's
 * GEMMs, uly_gemm_time_s: bf16 outputs, 8-bit k blocks); tm, tn: the
 * output's tiles along m and n, ceil(m / Tm) and ceil(n / Tn), which a
 * backward op's two GEMMs share one of (uly_gemm_op_shape_time) */
static inline __attribute__((always_inline)) double uly_gemm_time_tiled(const uly_gemm_rates *r, double batch, double m,
                                                                        double n, double k, double tm, double tn,
                                                                        double s_out, double beta_out,
                                                                        double split_min_k)
{
    const double tiles = batch * tm * tn;
    const double read = batch * (m + n) * k * r->s_per_elem;
    const double math = uly_ceil_pos(tiles / r->sms) * r->tile_s_per_k * k;
    double best = (math > read ? math : read) + batch * m * n * s_out;
    /* split-K while the splits still fill idle SMs and each keeps the
     * pipeline's depth of k; most GEMMs fill the SMs unsplit */
    if (__builtin_expect(tiles * 2.0 <= r->sms && k >= 2.0 * split_min_k, 0)) {
        const double out = batch * m * n;
        for (double s = 2; tiles * s <= r->sms && k >= s * split_min_k; s *= 2) {
            const double t = uly_gemm_split_s(r, tiles, k, read, out, s, beta_out);
            if (t < best) best = t;
        }
    }
    return r->latency_s + best;
}

static inline __attribute__((always_inline)) double uly_gemm_time_io(const uly_gemm_rates *r, double batch, double m,
                                                                     double n, double k, double s_out, double beta_out,
                                                                     double split_min_k)
{
    return uly_gemm_time_tiled(r, batch, m, n, k, uly_ceil_pos(m / r->tile_m), uly_ceil_pos(n / r->tile_n), s_out,
                               beta_out, split_min_k);
}

static inline double uly_gemm_time_pos(const uly_gemm_rates *r, double batch, double m, double n, double k)
{
    return uly_gemm_time_io(r, batch, m, n, k, r->s_per_elem, r->beta, ULY_GEMM_SPLIT_MIN_K);
}

/* A GEMM op by its shape, its outputs as its operands (uly_gemm_time_pos),
 * given its tiles along m, tm_m = ceil(gemm_m / tile_m): the forward
 * product, or a backward op's input gradient (m x n)(n x k) and weight
 * gradient (k x m)(m x n). A plan's GEMMs mostly share m (their rows are
 * the tokens), which the caller may have tiled already. */
static inline __attribute__((always_inline)) double uly_gemm_op_rows_time(const uly_gemm_rates *g, const uly_op *o,
                                                                          double tm_m)
{
    const double b = o->gemm_batch, m = o->gemm_m, n = o->gemm_n, k = o->gemm_k;
    const double s = g->s_per_elem, beta = g->beta, kmin = ULY_GEMM_SPLIT_MIN_K;
    if (!(o->phase == ULY_PHASE_BWD && !o->recompute))
        return uly_gemm_time_tiled(g, b, m, n, k, tm_m, uly_ceil_pos(n / g->tile_n), s, beta, kmin);
    /* the input gradient's tiles along k (its n) are the weight
     * gradient's along k (its m) when the tiles are square: one division */
    const double tn_k = uly_ceil_pos(k / g->tile_n);
    const double tm_k = g->tile_m == g->tile_n ? tn_k : uly_ceil_pos(k / g->tile_m);
    return uly_gemm_time_tiled(g, b, m, k, n, tm_m, tn_k, s, beta, kmin) +
           uly_gemm_time_tiled(g, b, k, n, m, tm_k, uly_ceil_pos(n / g->tile_n), s, beta, kmin);
}

/* A GEMM op by its shape: the forward product, or a backward op's input
 * gradient (m x n)(n x k) and weight gradient (k x m)(m x n); an op built
 * without a shape at the achievable fraction of peak (inv_tensor: s per
 * FLOP at the peak the clock allows). out_own: outputs at the rates' own
 * bytes (uly_gemm_time_s: FP8's bf16), out of line; else inline, as the
 * operands. */
static inline __attribute__((always_inline)) double uly_gemm_op_shape_time(const uly_gemm_rates *g, double inv_tensor,
                                                                           double peak_frac, const uly_op *o,
                                                                           int out_own)
{
    if (!(o->gemm_m > 0)) return o->flops * inv_tensor / peak_frac;
    if (!out_own) return uly_gemm_op_rows_time(g, o, uly_ceil_pos(o->gemm_m / g->tile_m));
    const double b = o->gemm_batch, m = o->gemm_m, n = o->gemm_n, k = o->gemm_k;
    if (!(o->phase == ULY_PHASE_BWD && !o->recompute)) return uly_gemm_time_s(g, b, m, n, k);
    return uly_gemm_time_s(g, b, m, k, n) + uly_gemm_time_s(g, b, k, n, m);
}

#endif
