/* attn_merge.c: the log-sum-exp merge that turns ring attention's per-step
 * partial results into attention over all keys seen so far. */
#include <math.h>

#include "kern_internal.h"

/* With w = exp(lse - lse_new) and w_b = exp(lse_b - lse_new) the merged
 * softmax weights are the partial ones scaled by w and w_b, so
 * O = w O + w_b O_b and lse_new = log(exp(lse) + exp(lse_b)), computed
 * around the larger lse so neither exp overflows. A -INFINITY side has
 * weight 0 and is skipped outright: exp(-inf - -inf) would be NaN. */
kern_status kern_attn_merge(int heads, int n_q, int d,
                            float *o, float *lse, const float *o_b, const float *lse_b)
{
    if (heads < 0 || n_q < 0 || d < 1) return KERN_EINVAL;
    const size_t rows = (size_t)heads * n_q;
    if (!kern_buf_ok(o, rows) || !kern_buf_ok(lse, rows) || !kern_buf_ok(o_b, rows) ||
        !kern_buf_ok(lse_b, rows))
        return KERN_EINVAL;
    for (size_t r = 0; r < rows; r++) {
        const float la = lse[r], lb = lse_b[r];
        float *oa = o + r * d;
        const float *ob = o_b + r * d;
        if (lb == -INFINITY) continue; /* nothing new: also covers both empty */
        if (la == -INFINITY) {         /* nothing yet: take the new block as is */
            for (int c = 0; c < d; c++) oa[c] = ob[c];
            lse[r] = lb;
            continue;
        }
        /* float64 for the weights: they are per row, cheap, and keep the
         * merged lse within float rounding of a single-pass result. */
        const double mx = la > lb ? la : lb;
        const double ea = exp((double)la - mx), eb = exp((double)lb - mx);
        const double sum = ea + eb;
        const float wa = (float)(ea / sum), wb = (float)(eb / sum);
        for (int c = 0; c < d; c++) oa[c] = wa * oa[c] + wb * ob[c];
        lse[r] = (float)(mx + log(sum));
    }
    return KERN_OK;
}
