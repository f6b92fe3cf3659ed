/* kern_cuda_fp8.cu: the FP8 GEMM of libulykern_cuda (kern_cuda_gemm_fp8,
 * kern_cuda.h): tensorwise current scaling as TransformerEngine's
 * Float8CurrentScaling recipe runs it. Per operand: an amax kernel over its
 * op() window (|x| bit patterns, atomicMax: NaN's patterns sort above
 * infinity's, so a NaN reaches the scale), a cast kernel computing the scale
 * from that amax on the device and writing the operand k-contiguous in FP8
 * (cvt.rn.satfinite through __nv_cvt_float_to_fp8, which cuda_fp8.hpp
 * emulates below sm_89, so every architecture built compiles it), then one
 * cublasLtMatmul in the layout cuBLASLt's FP8 GEMMs require ("TN": A
 * transposed, B not, column-major) with the inverse scales as its A/B scale
 * pointers, float32 accumulation and a bf16 output. FP8 tensor cores need
 * compute capability 8.9: on older devices the call returns
 * KERN_CUDA_EUNSUPPORTED before launching anything. */
#include <math.h>
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kc_internal.h"

/* ---------------------------------------------------------------- kernels */

/* op(X)'s element (r, kk) of its R x k window is src[r * sr + kk * sk] */
struct kc_fp8_view {
    const void *src;
    long long sr, sk;
    long long rows, k;
    int t; /* kern_cuda_dtype */
};

__device__ __forceinline__ float kc_fp8_load(const kc_fp8_view &v, long long r, long long kk)
{
    const long long i = r * v.sr + kk * v.sk;
    if (v.t == KERN_CUDA_F32) return static_cast<const float *>(v.src)[i];
    const uint16_t u = static_cast<const uint16_t *>(v.src)[i];
    if (v.t == KERN_CUDA_BF16) return __uint_as_float((unsigned)u << 16);
    return __half2float(__ushort_as_half(u));
}

/* the same float32 expression as kern_cuda_fp8_scale (kern_cuda_host.c) */
__device__ __forceinline__ float kc_fp8_scale_dev(float amax, float fmax)
{
    if (amax == 0.0f) return 1.0f;
    if (!isfinite(amax)) return __int_as_float(0x7fc00000);
    return fmax / amax;
}

__global__ void kc_fp8_amax_kernel(kc_fp8_view v, unsigned *amax_bits)
{
    const long long n = v.rows * v.k;
    unsigned best = 0;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const unsigned b = __float_as_uint(kc_fp8_load(v, i / v.k, i % v.k)) & 0x7fffffffu;
        best = b > best ? b : best;
    }
    best = __reduce_max_sync(0xffffffffu, best);
    if ((threadIdx.x & 31) == 0 && best) atomicMax(amax_bits, best);
}

/* q[r][kk] = fp8(x * scale), k-contiguous; the first thread writes 1 / scale */
__global__ void kc_fp8_cast_kernel(kc_fp8_view v, const unsigned *amax_bits, float fmax, int e5m2, uint8_t *q,
                                   float *scale_inv)
{
    const float scale = kc_fp8_scale_dev(__uint_as_float(*amax_bits), fmax);
    const __nv_fp8_interpretation_t fmt = e5m2 ? __NV_E5M2 : __NV_E4M3;
    const long long n = v.rows * v.k;
    const long long i0 = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i0 == 0) *scale_inv = 1.0f / scale;
    for (long long i = i0; i < n; i += (long long)gridDim.x * blockDim.x)
        q[i] = (uint8_t)__nv_cvt_float_to_fp8(kc_fp8_load(v, i / v.k, i % v.k) * scale, __NV_SATFINITE, fmt);
}

/* ------------------------------------------------------------------ host */

static size_t kc_fp8_align(size_t x) { return (x + 255) & ~(size_t)255; }

/* The descriptors of one cublasLtMatmul, destroyed whichever way the call ends. */
struct kc_lt_descs {
    cublasLtMatmulDesc_t op = NULL;
    cublasLtMatrixLayout_t a = NULL, b = NULL, c = NULL;
    cublasLtMatmulPreference_t pref = NULL;
    ~kc_lt_descs()
    {
        /* release paths: a failure here cannot change the call's status */
        if (pref) (void)cublasLtMatmulPreferenceDestroy(pref);
        if (c) (void)cublasLtMatrixLayoutDestroy(c);
        if (b) (void)cublasLtMatrixLayoutDestroy(b);
        if (a) (void)cublasLtMatrixLayoutDestroy(a);
        if (op) (void)cublasLtMatmulDescDestroy(op);
    }
};

/* The Lt handle and the device's compute capability, on the first call. */
static kern_cuda_status kc_fp8_lt(kern_cuda_blas *b)
{
    if (b->lt) return KERN_CUDA_OK;
    int dev = 0, major = 0, minor = 0;
    KC_CUDA(cudaGetDevice(&dev));
    KC_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    KC_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    KC_CUBLAS(cublasLtCreate(&b->lt));
    b->lt_cc = major * 10 + minor;
    return KERN_CUDA_OK;
}

/* Amax, then the cast, of one operand into q (rows x k) and its inverse scale. */
static kern_cuda_status kc_fp8_quantize(const kc_fp8_view &v, kern_cuda_fp8 f, unsigned *amax, uint8_t *q,
                                        float *scale_inv, cudaStream_t st)
{
    const long long n = v.rows * v.k;
    const unsigned blocks = (unsigned)((n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096);
    KC_CUDA(cudaMemsetAsync(amax, 0, sizeof *amax, st));
    kc_fp8_amax_kernel<<<blocks, 256, 0, st>>>(v, amax);
    KC_LAUNCHED("kc_fp8_amax_kernel");
    kc_fp8_cast_kernel<<<blocks, 256, 0, st>>>(v, amax, kern_cuda_fp8_max(f), f == KERN_CUDA_E5M2, q, scale_inv);
    KC_LAUNCHED("kc_fp8_cast_kernel");
    return KERN_CUDA_OK;
}

/* Row-major C (m x n) = A8 (m x k) B8^T (B8: n x k), both k-contiguous: in
 * cuBLASLt's column-major terms C^T (n x m) = B8c^T A8c with B8c, A8c the
 * k x n and k x m column-major views, i.e. op(A_lt) = T on B8, op(B_lt) = N
 * on A8: the "TN" layout its FP8 kernels take. */
static kern_cuda_status kc_fp8_matmul(kern_cuda_blas *b, int m, int n, int k, float alpha, const uint8_t *a8,
                                      kern_cuda_fp8 a_f, const float *sinv_a, const uint8_t *b8, kern_cuda_fp8 b_f,
                                      const float *sinv_b, float beta, void *c, int ldc, void *lt_ws,
                                      size_t lt_ws_bytes)
{
    kc_lt_descs d;
    const cudaDataType ta = a_f == KERN_CUDA_E5M2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3;
    const cudaDataType tb = b_f == KERN_CUDA_E5M2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3;
    const cublasOperation_t opT = CUBLAS_OP_T, opN = CUBLAS_OP_N;
    KC_CUBLAS(cublasLtMatmulDescCreate(&d.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    KC_CUBLAS(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSA, &opT, sizeof opT));
    KC_CUBLAS(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSB, &opN, sizeof opN));
    /* cuBLASLt's A is our B and its B our A */
    KC_CUBLAS(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sinv_b, sizeof sinv_b));
    KC_CUBLAS(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sinv_a, sizeof sinv_a));
    KC_CUBLAS(cublasLtMatrixLayoutCreate(&d.a, tb, k, n, k));
    KC_CUBLAS(cublasLtMatrixLayoutCreate(&d.b, ta, k, m, k));
    KC_CUBLAS(cublasLtMatrixLayoutCreate(&d.c, CUDA_R_16BF, n, m, ldc));
    KC_CUBLAS(cublasLtMatmulPreferenceCreate(&d.pref));
    KC_CUBLAS(cublasLtMatmulPreferenceSetAttribute(d.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &lt_ws_bytes,
                                                   sizeof lt_ws_bytes));
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    KC_CUBLAS(cublasLtMatmulAlgoGetHeuristic(b->lt, d.op, d.a, d.b, d.c, d.c, d.pref, 1, &heur, &found));
    if (found < 1)
        return kc_fail(KERN_CUDA_EUNSUPPORTED, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__,
                       "no FP8 algorithm for this shape");
    KC_CUBLAS(cublasLtMatmul(b->lt, d.op, &alpha, b8, d.a, a8, d.b, &beta, c, d.c, c, d.c, &heur.algo, lt_ws,
                             lt_ws_bytes, b->stream));
    return KERN_CUDA_OK;
}

/* What kern_cuda_gemm would refuse, then what FP8 on cuBLASLt does not cover. */
static kern_cuda_status kc_fp8_check(bool ta, bool tb, int m, int n, int k, int lda, int ldb, kern_cuda_fp8 a_f,
                                     kern_cuda_fp8 b_f, kern_cuda_dtype ab_t, const void *c, int ldc)
{
    if (m < 0 || n < 0 || k < 0) return KC_EINVAL("negative size");
    if (lda < (ta ? m : k) || ldb < (tb ? k : n) || ldc < n || lda < 1 || ldb < 1 || ldc < 1)
        return KC_EINVAL("leading dimension smaller than the row it strides over");
    if (ab_t != KERN_CUDA_BF16 && ab_t != KERN_CUDA_FP16 && ab_t != KERN_CUDA_F32) return KC_EINVAL("unknown dtype");
    if ((a_f != KERN_CUDA_E4M3 && a_f != KERN_CUDA_E5M2) || (b_f != KERN_CUDA_E4M3 && b_f != KERN_CUDA_E5M2))
        return KC_EINVAL("unknown FP8 format");
    if (m % 16 || n % 16 || k % 16)
        return kc_fail(KERN_CUDA_EUNSUPPORTED, "kern_cuda_gemm_fp8", __FILE__, __LINE__,
                       "FP8 GEMM needs m, n, k multiples of 16");
    if (ldc % 8 || ((uintptr_t)c & 15))
        return kc_fail(KERN_CUDA_EUNSUPPORTED, "kern_cuda_gemm_fp8", __FILE__, __LINE__,
                       "FP8 GEMM needs C 16-byte aligned and ldc a multiple of 8");
    if (a_f == KERN_CUDA_E5M2 && b_f == KERN_CUDA_E5M2)
        return kc_fail(KERN_CUDA_EUNSUPPORTED, "kern_cuda_gemm_fp8", __FILE__, __LINE__,
                       "cuBLASLt has no E5M2 x E5M2 GEMM");
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_gemm_fp8(kern_cuda_blas *b, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                                    const void *a, int lda, kern_cuda_fp8 a_f, const void *bm, int ldb,
                                    kern_cuda_fp8 b_f, kern_cuda_dtype ab_t, float beta, void *c, int ldc,
                                    void *workspace, size_t workspace_bytes)
{
    if (!b) return KC_EINVAL("b is NULL");
    KC_TRY(kc_fp8_check(trans_a, trans_b, m, n, k, lda, ldb, a_f, b_f, ab_t, c, ldc));
    if (m == 0 || n == 0) return KERN_CUDA_OK;
    if (!a || !bm || !c) return KC_EINVAL("NULL matrix");
    KC_TRY(kc_fp8_lt(b));
    if (b->lt_cc < 89)
        return kc_fail(KERN_CUDA_EUNSUPPORTED, "kern_cuda_gemm_fp8", __FILE__, __LINE__,
                       "FP8 GEMMs need compute capability 8.9 or newer");
    const size_t need = kern_cuda_gemm_fp8_workspace(m, n, k);
    if (workspace && (workspace_bytes < need || ((uintptr_t)workspace & 255)))
        return KC_EINVAL("workspace smaller than kern_cuda_gemm_fp8_workspace() or not 256-byte aligned");
    cudaStream_t st = b->stream;
    void *ws = workspace;
    if (!ws) KC_CUDA(cudaMallocAsync(&ws, need, st));
    char *w = static_cast<char *>(ws);
    uint8_t *a8 = reinterpret_cast<uint8_t *>(w);
    uint8_t *b8 = reinterpret_cast<uint8_t *>(w + kc_fp8_align((size_t)m * k));
    char *small = w + kc_fp8_align((size_t)m * k) + kc_fp8_align((size_t)n * k);
    unsigned *amax = reinterpret_cast<unsigned *>(small);
    float *sinv = reinterpret_cast<float *>(small + 2 * sizeof(unsigned));
    char *lt_ws = small + 256;
    const size_t lt_bytes = need - (size_t)(lt_ws - w);
    /* op(A) m x k and op(B)^T n x k, k-contiguous, as the strides of the stored matrices give them */
    const kc_fp8_view va = {a, trans_a ? 1 : (long long)lda, trans_a ? (long long)lda : 1, m, k, (int)ab_t};
    const kc_fp8_view vb = {bm, trans_b ? (long long)ldb : 1, trans_b ? 1 : (long long)ldb, n, k, (int)ab_t};
    kern_cuda_status s = KERN_CUDA_OK;
    if (k == 0) {
        /* no products: C = beta C, through the same Lt call on zero-filled operands would still need k >= 1 */
        s = kern_cuda_gemm(b, false, false, m, n, 0, alpha, a8, 1, b8, n, KERN_CUDA_BF16, beta, c, ldc,
                           KERN_CUDA_BF16);
    } else {
        s = kc_fp8_quantize(va, a_f, amax, a8, sinv, st);
        if (s == KERN_CUDA_OK) s = kc_fp8_quantize(vb, b_f, amax + 1, b8, sinv + 1, st);
        if (s == KERN_CUDA_OK)
            s = kc_fp8_matmul(b, m, n, k, alpha, a8, a_f, sinv, b8, b_f, sinv + 1, beta, c, ldc, lt_ws, lt_bytes);
    }
    if (!workspace) {
        const cudaError_t e = cudaFreeAsync(ws, st);
        if (s == KERN_CUDA_OK && e != cudaSuccess) s = kc_fail_cuda(e, "cudaFreeAsync(ws, st)", __FILE__, __LINE__);
    }
    return s;
}
