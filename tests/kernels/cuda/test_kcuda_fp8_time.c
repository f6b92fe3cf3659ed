/* test_kcuda_fp8_time.c: `test_kcuda_fp8 --time` on a GPU (not in the
 * host emulation): the FP8 GEMM's rate, the amax and cast kernels of both
 * operands included (what the harness's FP8 ops pay), against
 * kern_cuda_gemm in bf16 on the same operands, at square sizes; the
 * median of 10 timed calls after 3 warm-up calls. Prints; returns the
 * number of failed calls. */
#include <stdio.h>
#include <stdlib.h>

#include "kern_cuda.h"

static int cmp_f(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* median milliseconds of `reps` calls of one GEMM (fp8: 1, bf16: 0) */
static int time_one(kern_cuda_blas *bl, int fp8, int n, void *a, void *b, void *c, void *ws, size_t ws_bytes,
                    kern_cuda_timer *t, float *ms_out)
{
    enum { WARM = 3, REPS = 10 };
    float ms[REPS];
    for (int i = 0; i < WARM + REPS; i++) {
        if (i >= WARM && kern_cuda_timer_start(t, NULL) != KERN_CUDA_OK) return 1;
        const kern_cuda_status s =
            fp8 ? kern_cuda_gemm_fp8(bl, false, true, n, n, n, 1.0f, a, n, KERN_CUDA_E4M3, b, n, KERN_CUDA_E4M3,
                                     KERN_CUDA_BF16, 0.0f, c, n, ws, ws_bytes)
                : kern_cuda_gemm(bl, false, true, n, n, n, 1.0f, a, n, b, n, KERN_CUDA_BF16, 0.0f, c, n,
                                 KERN_CUDA_BF16);
        if (s != KERN_CUDA_OK) {
            printf("FAIL: %s GEMM %d^3: %s (%s)\n", fp8 ? "FP8" : "bf16", n, kern_cuda_status_str(s),
                   kern_cuda_last_error());
            return 1;
        }
        if (i >= WARM && (kern_cuda_timer_stop(t, NULL) != KERN_CUDA_OK || kern_cuda_timer_ms(t, &ms[i - WARM])))
            return 1;
    }
    qsort(ms, REPS, sizeof ms[0], cmp_f);
    *ms_out = ms[REPS / 2];
    return 0;
}

int kcuda_fp8_time(kern_cuda_blas *bl)
{
    static const int sizes[] = {4096, 8192};
    int bad = 0;
    printf("FP8 GEMM timing (E4M3 x E4M3, row-major A B^T, bf16 out; FP8 includes both operands' amax and cast "
           "kernels):\n");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const int n = sizes[i];
        const size_t bytes = (size_t)n * n * 2, ws_bytes = kern_cuda_gemm_fp8_workspace(n, n, n);
        void *a = NULL, *b = NULL, *c = NULL, *ws = NULL;
        kern_cuda_timer *t = NULL;
        float ms8 = 0, ms16 = 0;
        int rc = kern_cuda_malloc(&a, bytes) || kern_cuda_malloc(&b, bytes) || kern_cuda_malloc(&c, bytes) ||
                 kern_cuda_malloc(&ws, ws_bytes) || kern_cuda_timer_create(&t) ||
                 kern_cuda_fill_uniform(a, KERN_CUDA_BF16, (size_t)n * n, 1, -1.0f, 1.0f, NULL) ||
                 kern_cuda_fill_uniform(b, KERN_CUDA_BF16, (size_t)n * n, 2, -1.0f, 1.0f, NULL);
        if (!rc) rc = time_one(bl, 1, n, a, b, c, ws, ws_bytes, t, &ms8);
        if (!rc) rc = time_one(bl, 0, n, a, b, c, ws, ws_bytes, t, &ms16);
        if (rc) {
            printf("FAIL: timing at %d^3: %s\n", n, kern_cuda_last_error());
            bad++;
        } else {
            const double fl = 2.0 * n * (double)n * n;
            printf("  %5d^3: FP8 %.3f ms (%.0f TFLOP/s), bf16 %.3f ms (%.0f TFLOP/s), FP8 / bf16 speed %.2fx\n", n,
                   ms8, fl / (ms8 * 1e-3) / 1e12, ms16, fl / (ms16 * 1e-3) / 1e12, ms16 / ms8);
        }
        kern_cuda_timer_destroy(t);
        kern_cuda_free(a), kern_cuda_free(b), kern_cuda_free(c), kern_cuda_free(ws);
    }
    return bad;
}
