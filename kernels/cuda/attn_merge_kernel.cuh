/* attn_merge_kernel.cuh: ring attention's log-sum-exp merge on the GPU, in
 * two launches so that no thread reads an lse another thread is rewriting:
 *   1. one thread per element of O:  O = wa O + wb O_b, with
 *      wa = exp(lse - lse_new), wb = exp(lse_b - lse_new) computed from the
 *      row's two (unchanged) lse values around their maximum;
 *   2. one thread per row:           lse = lse_new.
 * A -inf side has weight 0 (and is skipped outright: exp(-inf - -inf) is
 * NaN); both -inf leave O = 0 (O_b is taken as is, and O_b of a row that saw
 * no key is 0), lse = -inf. The same arithmetic as kernels/cpu/attn_merge.c,
 * the weights in float64. */
#ifndef ATTN_MERGE_KERNEL_CUH
#define ATTN_MERGE_KERNEL_CUH

#include "kc_arch.cuh"

/* weights of the two sides of one row; *lse_new the merged lse */
KC_DEV void kc_merge_weights(float la, float lb, float *wa, float *wb, float *lse_new)
{
    const float ninf = -__builtin_inff();
    if (lb == ninf) { /* nothing new (also both empty) */
        *wa = 1.f;
        *wb = 0.f;
        *lse_new = la;
        return;
    }
    if (la == ninf) { /* nothing yet: take the new block as is */
        *wa = 0.f;
        *wb = 1.f;
        *lse_new = lb;
        return;
    }
    const double mx = la > lb ? la : lb;
    const double ea = exp((double)la - mx), eb = exp((double)lb - mx);
    const double sum = ea + eb;
    *wa = (float)(ea / sum);
    *wb = (float)(eb / sum);
    *lse_new = (float)(mx + log(sum));
}

/* OB: 0 = bf16, 1 = fp16, 2 = f32 storage of o_b */
template <int OB>
KC_GLOBAL void kc_merge_o_kernel(float *KC_RESTRICT o, const float *KC_RESTRICT lse, const void *KC_RESTRICT o_b,
                                 const float *KC_RESTRICT lse_b, long long n, int d)
{
    const long long i = (long long)kc_bid_x() * 256 + kc_tid();
    if (i >= n) return;
    const long long r = i / d;
    float wa, wb, ln;
    kc_merge_weights(lse[r], lse_b[r], &wa, &wb, &ln);
    float b;
    if (OB == 2)
        b = static_cast<const float *>(o_b)[i];
    else if (OB == 0)
        b = kc_to_f32<kc_bf16>(static_cast<const uint16_t *>(o_b)[i]);
    else
        b = kc_to_f32<kc_fp16>(static_cast<const uint16_t *>(o_b)[i]);
    if (wb == 0.f) return;           /* keep O exactly (and skip reading garbage weights) */
    o[i] = wa == 0.f ? b : wa * o[i] + wb * b;
}

KC_GLOBAL void kc_merge_lse_kernel(float *KC_RESTRICT lse, const float *KC_RESTRICT lse_b, long long rows)
{
    const long long r = (long long)kc_bid_x() * 256 + kc_tid();
    if (r >= rows) return;
    float wa, wb, ln;
    kc_merge_weights(lse[r], lse_b[r], &wa, &wb, &ln);
    lse[r] = ln;
}

#endif /* ATTN_MERGE_KERNEL_CUH */
