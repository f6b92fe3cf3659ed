/* hx_nccl_emu_fp8.c: kern_cuda_gemm_fp8 (kernels/cuda/kern_cuda_fp8.cu)
 * emulated on the host, for ulyharness_nccl_emu's FP8 runs and the FP8
 * GEMM test: the same checks and status codes, the same tensorwise scales
 * (kern_cuda_fp8_scale of each operand's amax over its op() window), the
 * same rounding (kern_cuda_host_fp8_from_f32: nearest even, saturating),
 * then cblas_sgemm on the decoded FP8 values with alpha times the two
 * inverse scales, beta C, and the bf16 rounding of the output. What it
 * cannot show: cuBLASLt's summation order and anything of the device's
 * kernels (test_kcuda_fp8 on a GPU does). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <cblas.h>

#include "kern_cuda.h"

static float emu_ld(const void *p, kern_cuda_dtype t, int64_t i)
{
    if (t == KERN_CUDA_F32) return ((const float *)p)[i];
    return kern_cuda_host_to_f32(((const uint16_t *)p)[i], t);
}

/* op(X)'s R x k window (element (r, kk) at src[r sr + kk sk]) quantized
 * and decoded back into q [R][k]; the inverse scale in *sinv */
static void emu_quantize(const void *src, kern_cuda_dtype t, int64_t sr, int64_t sk, int R, int k, kern_cuda_fp8 f,
                         float *q, float *sinv)
{
    float amax = 0.0f;
    for (int r = 0; r < R; r++)
        for (int kk = 0; kk < k; kk++) {
            const float a = fabsf(emu_ld(src, t, r * sr + kk * sk));
            if (a > amax || isnan(a)) amax = isnan(amax) ? amax : a; /* NaN sticks, as the device's bit max */
        }
    const float scale = kern_cuda_fp8_scale(amax, f);
    for (int r = 0; r < R; r++)
        for (int kk = 0; kk < k; kk++) {
            const float x = emu_ld(src, t, r * sr + kk * sk) * scale;
            q[(int64_t)r * k + kk] = kern_cuda_host_fp8_to_f32(kern_cuda_host_fp8_from_f32(x, f), f);
        }
    *sinv = 1.0f / scale;
}

kern_cuda_status kern_cuda_gemm_fp8(kern_cuda_blas *b, bool ta, bool tb, int m, int n, int k, float alpha,
                                    const void *a, int lda, kern_cuda_fp8 a_f, const void *bm, int ldb,
                                    kern_cuda_fp8 b_f, kern_cuda_dtype ab_t, float beta, void *c, int ldc,
                                    void *workspace, size_t workspace_bytes)
{
    if (!b || m < 0 || n < 0 || k < 0) return KERN_CUDA_EINVAL;
    if (lda < (ta ? m : k) || ldb < (tb ? k : n) || ldc < n || lda < 1 || ldb < 1 || ldc < 1) return KERN_CUDA_EINVAL;
    if (ab_t != KERN_CUDA_BF16 && ab_t != KERN_CUDA_FP16 && ab_t != KERN_CUDA_F32) return KERN_CUDA_EINVAL;
    if ((a_f != KERN_CUDA_E4M3 && a_f != KERN_CUDA_E5M2) || (b_f != KERN_CUDA_E4M3 && b_f != KERN_CUDA_E5M2))
        return KERN_CUDA_EINVAL;
    if (m % 16 || n % 16 || k % 16 || ldc % 8 || ((uintptr_t)c & 15)) return KERN_CUDA_EUNSUPPORTED;
    if (a_f == KERN_CUDA_E5M2 && b_f == KERN_CUDA_E5M2) return KERN_CUDA_EUNSUPPORTED;
    if (m == 0 || n == 0) return KERN_CUDA_OK;
    if (!a || !bm || !c) return KERN_CUDA_EINVAL;
    if (workspace && (workspace_bytes < kern_cuda_gemm_fp8_workspace(m, n, k) || ((uintptr_t)workspace & 255)))
        return KERN_CUDA_EINVAL;
    float *A = malloc(sizeof(float) * ((size_t)m * k + 1)), *B = malloc(sizeof(float) * ((size_t)n * k + 1));
    float *C = malloc(sizeof(float) * (size_t)m * n);
    if (!A || !B || !C) {
        free(A), free(B), free(C);
        return KERN_CUDA_ENOMEM;
    }
    float sa = 1.0f, sb = 1.0f;
    emu_quantize(a, ab_t, ta ? 1 : lda, ta ? lda : 1, m, k, a_f, A, &sa);
    emu_quantize(bm, ab_t, tb ? ldb : 1, tb ? 1 : ldb, n, k, b_f, B, &sb); /* op(B)^T: n x k */
    uint16_t *c16 = c;
    for (int i = 0; i < m; i++) /* beta 0 ignores C, poison included, as cuBLASLt */
        for (int j = 0; j < n; j++)
            C[(int64_t)i * n + j] = beta == 0.0f ? 0.0f : kern_cuda_host_to_f32(c16[(int64_t)i * ldc + j], KERN_CUDA_BF16);
    if (k > 0)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, alpha * sa * sb, A, k, B, k, beta, C, n);
    else
        for (int64_t i = 0; i < (int64_t)m * n; i++) C[i] *= beta;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            c16[(int64_t)i * ldc + j] = kern_cuda_host_from_f32(C[(int64_t)i * n + j], KERN_CUDA_BF16);
    free(A);
    free(B);
    free(C);
    return KERN_CUDA_OK;
}
