/* attn_ref.cu: the cuBLAS path. The row-major GEMM wrapper, and the unfused
 * reference attention that materialises the scores:
 *   forward   S = Q K^T (cublasGemmStridedBatchedEx, float32 out), a
 *             softmax kernel (offset causal mask, lse, P rounded to the
 *             input type), O = P V (float32 out);
 *   backward  S and dP = dO V^T again, an elementwise kernel for
 *             P = exp(scale S - lse) and dS = P o (dP - Dr), then
 *             dV += P^T dO, dQ += scale dS K, dK += scale dS^T Q (beta = 1).
 * GQA without copies: the query heads of one kv head are contiguous, so
 * they form one (group * n_q) x d matrix against that head's K and V; the
 * batch runs over kv heads, as many per pass as the workspace holds. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <new>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kc_internal.h"

/* ------------------------------------------------------------ handles */

kern_cuda_status kern_cuda_blas_create(kern_cuda_blas **b)
{
    if (!b) return KC_EINVAL("b is NULL");
    *b = NULL;
    kern_cuda_blas *x = new (std::nothrow) kern_cuda_blas;
    if (!x) return kc_fail(KERN_CUDA_ENOMEM, "new kern_cuda_blas", __FILE__, __LINE__, "out of host memory");
    x->stream = 0;
    x->lt = NULL;
    x->lt_cc = 0;
    const cublasStatus_t s = cublasCreate(&x->h);
    if (s != CUBLAS_STATUS_SUCCESS) {
        delete x;
        return kc_fail_cublas(s, "cublasCreate(&x->h)", __FILE__, __LINE__);
    }
    int ver = 0;
    const cublasStatus_t sv = cublasGetVersion(x->h, &ver);
    if (sv != CUBLAS_STATUS_SUCCESS) {
        kern_cuda_status st = kc_fail_cublas(sv, "cublasGetVersion(x->h, &ver)", __FILE__, __LINE__);
        if (cublasDestroy(x->h) != CUBLAS_STATUS_SUCCESS) { /* the first failure is the one reported */ }
        delete x;
        return st;
    }
    snprintf(x->version, sizeof x->version, "cuBLAS %d.%d.%d", ver / 10000, (ver / 100) % 100, ver % 100);
    *b = x;
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_blas_destroy(kern_cuda_blas *b)
{
    if (!b) return KERN_CUDA_OK;
    const cublasStatus_t s = cublasDestroy(b->h);
    const cublasStatus_t sl = b->lt ? cublasLtDestroy(b->lt) : CUBLAS_STATUS_SUCCESS;
    delete b;
    if (s != CUBLAS_STATUS_SUCCESS) return kc_fail_cublas(s, "cublasDestroy(b->h)", __FILE__, __LINE__);
    if (sl != CUBLAS_STATUS_SUCCESS) return kc_fail_cublas(sl, "cublasLtDestroy(b->lt)", __FILE__, __LINE__);
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_blas_set_stream(kern_cuda_blas *b, void *stream)
{
    if (!b) return KC_EINVAL("b is NULL");
    KC_CUBLAS(cublasSetStream(b->h, (cudaStream_t)stream));
    b->stream = (cudaStream_t)stream;
    return KERN_CUDA_OK;
}

const char *kern_cuda_blas_version(kern_cuda_blas *b) { return b ? b->version : "cuBLAS (no handle)"; }

/* --------------------------------------------------------------- GEMM */

static bool kc_cuda_type(kern_cuda_dtype t, cudaDataType *out)
{
    switch (t) {
    case KERN_CUDA_BF16: *out = CUDA_R_16BF; return true;
    case KERN_CUDA_FP16: *out = CUDA_R_16F; return true;
    case KERN_CUDA_F32: *out = CUDA_R_32F; return true;
    }
    return false;
}

/* Row-major strided-batched C = alpha op(A) op(B) + beta C: cuBLAS is
 * column-major, and a row-major X is a column-major X^T, so compute
 * C^T = op(B)^T op(A)^T with the operands swapped and the flags kept. */
static kern_cuda_status kc_gemm_sb(kern_cuda_blas *b, bool ta, bool tb, int m, int n, int k, float alpha,
                                   const void *A, int lda, long long sA, const void *B, int ldb, long long sB,
                                   kern_cuda_dtype abt, float beta, void *C, int ldc, long long sC,
                                   kern_cuda_dtype ct, int batch)
{
    cudaDataType tab, tc;
    if (!kc_cuda_type(abt, &tab) || !kc_cuda_type(ct, &tc)) return KC_EINVAL("unknown dtype");
    if (abt == KERN_CUDA_F32 && ct != KERN_CUDA_F32) return KC_EINVAL("float32 A, B need a float32 C");
    if (ct != KERN_CUDA_F32 && ct != abt) return KC_EINVAL("C must be float32 or the type of A and B");
    if (m < 0 || n < 0 || k < 0 || batch < 0) return KC_EINVAL("negative size");
    if (lda < (ta ? m : k) || ldb < (tb ? k : n) || ldc < n || lda < 1 || ldb < 1 || ldc < 1)
        return KC_EINVAL("leading dimension smaller than the row it strides over");
    if (m == 0 || n == 0 || batch == 0) return KERN_CUDA_OK;
    if (!A || !B || !C) return KC_EINVAL("NULL matrix");
    const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (batch == 1)
        KC_CUBLAS(cublasGemmEx(b->h, opb, opa, n, m, k, &alpha, B, tab, ldb, A, tab, lda, &beta, C, tc, ldc,
                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    else
        KC_CUBLAS(cublasGemmStridedBatchedEx(b->h, opb, opa, n, m, k, &alpha, B, tab, ldb, sB, A, tab, lda, sA,
                                             &beta, C, tc, ldc, sC, batch, CUBLAS_COMPUTE_32F,
                                             CUBLAS_GEMM_DEFAULT));
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_gemm(kern_cuda_blas *b, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                                const void *a, int lda, const void *bm, int ldb, kern_cuda_dtype ab_t, float beta,
                                void *c, int ldc, kern_cuda_dtype c_t)
{
    if (!b) return KC_EINVAL("b is NULL");
    return kc_gemm_sb(b, trans_a, trans_b, m, n, k, alpha, a, lda, 0, bm, ldb, 0, ab_t, beta, c, ldc, 0, c_t, 1);
}

/* ------------------------------------------------------ reference kernels */

template <typename T> __device__ __forceinline__ uint16_t kc_round16(float x);
template <> __device__ __forceinline__ uint16_t kc_round16<__nv_bfloat16>(float x)
{
    return __bfloat16_as_ushort(__float2bfloat16_rn(x));
}
template <> __device__ __forceinline__ uint16_t kc_round16<__half>(float x) { return __half_as_ushort(__float2half_rn(x)); }

struct kc_ref_rows {
    int n_q, n_kv;
    int causal;
    long long q_off, kv_off;
    float scale;
};

/* keys row i of a head sees: a prefix [0, count) */
__device__ __forceinline__ int kc_ref_visible(const kc_ref_rows &r, long long i)
{
    if (!r.causal) return r.n_kv;
    const long long last = r.q_off + i - r.kv_off;
    if (last < 0) return 0;
    return last >= r.n_kv ? r.n_kv : (int)(last + 1);
}

__device__ __forceinline__ float kc_block_reduce(float v, bool is_max, float *red)
{
    for (int m = 16; m >= 1; m >>= 1) {
        const float o = __shfl_xor_sync(0xffffffffu, v, m);
        v = is_max ? fmaxf(v, o) : v + o;
    }
    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __syncthreads(); /* red[] may still be read from the previous reduction */
    if (lane == 0) red[w] = v;
    __syncthreads();
    float x = is_max ? -INFINITY : 0.f;
    for (int i = 0; i < (int)(blockDim.x >> 5); i++) x = is_max ? fmaxf(x, red[i]) : x + red[i];
    return x;
}

/* One block per row of S (rows: c kv heads x group x n_q, consecutive). */
template <typename T>
__global__ void __launch_bounds__(256) kc_ref_softmax_kernel(const float *__restrict__ S, uint16_t *__restrict__ P,
                                                             float *__restrict__ lse, kc_ref_rows r)
{
    __shared__ float red[32];
    const long long row = blockIdx.x;
    const long long i = row % r.n_q;
    const float *s = S + row * r.n_kv;
    uint16_t *p = P + row * r.n_kv;
    const int vis = kc_ref_visible(r, i);
    float m = -INFINITY;
    for (int j = threadIdx.x; j < vis; j += blockDim.x) m = fmaxf(m, s[j] * r.scale);
    m = kc_block_reduce(m, true, red);
    float l = 0.f;
    for (int j = threadIdx.x; j < vis; j += blockDim.x) l += expf(s[j] * r.scale - m);
    l = kc_block_reduce(l, false, red);
    const float inv = vis > 0 ? 1.f / l : 0.f;
    for (int j = threadIdx.x; j < r.n_kv; j += blockDim.x)
        p[j] = kc_round16<T>(j < vis ? expf(s[j] * r.scale - m) * inv : 0.f);
    if (threadIdx.x == 0) lse[row] = vis > 0 ? m + logf(l) : -INFINITY;
}

/* P = exp(scale S - lse), dS = P o (dP - Dr), both rounded to T; elementwise. */
template <typename T>
__global__ void kc_ref_bwd_elem_kernel(const float *__restrict__ S, const float *__restrict__ dP,
                                       const float *__restrict__ lse, const float *__restrict__ dr,
                                       uint16_t *__restrict__ P, uint16_t *__restrict__ dS, long long n,
                                       kc_ref_rows r)
{
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < n;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long row = idx / r.n_kv;
        const int j = (int)(idx % r.n_kv);
        const long long i = row % r.n_q;
        const float l = lse[row];
        float p = 0.f;
        if (l != -INFINITY && j < kc_ref_visible(r, i)) p = expf(S[idx] * r.scale - l);
        P[idx] = kc_round16<T>(p);
        dS[idx] = kc_round16<T>(p * (dP[idx] - dr[row]));
    }
}

/* ---------------------------------------------------- reference drivers */

static size_t kc_align(size_t x) { return (x + 255) & ~(size_t)255; }

/* bytes per kv head of the score-sized buffers */
static size_t kc_ref_per_head(const struct kern_cuda_attn_desc *ds, bool bwd)
{
    const size_t elems = (size_t)(ds->heads / ds->kv_heads) * ds->n_q * ds->n_kv;
    return bwd ? kc_align(elems * 4) * 2 + kc_align(elems * 2) * 2 : kc_align(elems * 4) + kc_align(elems * 2);
}

void kern_cuda_attn_ref_workspace(const struct kern_cuda_attn_desc *desc, bool backward, size_t *min_bytes,
                                  size_t *all_bytes)
{
    size_t mn = 0, all = 0;
    if (desc && desc->heads >= 1 && desc->kv_heads >= 1 && desc->heads % desc->kv_heads == 0 && desc->n_q >= 0 &&
        desc->n_kv >= 0) {
        const size_t per = kc_ref_per_head(desc, backward);
        const size_t extra = backward ? kc_align((size_t)desc->heads * desc->n_q * 4) : 0;
        mn = per + extra;
        all = per * desc->kv_heads + extra;
    }
    if (min_bytes) *min_bytes = mn;
    if (all_bytes) *all_bytes = all;
}

static kc_ref_rows kc_rows_of(const struct kern_cuda_attn_desc *ds)
{
    kc_ref_rows r;
    r.n_q = ds->n_q;
    r.n_kv = ds->n_kv;
    r.causal = ds->causal ? 1 : 0;
    r.q_off = ds->q_off;
    r.kv_off = ds->kv_off;
    r.scale = ds->scale;
    return r;
}

kern_cuda_status kern_cuda_attn_ref_fwd(kern_cuda_blas *b, const struct kern_cuda_attn_desc *ds, const void *q,
                                        const void *k, const void *v, float *o, float *lse, void *ws,
                                        size_t ws_bytes)
{
    if (!b) return KC_EINVAL("b is NULL");
    KC_TRY(kern_cuda_attn_check(ds, false));
    const int group = ds->heads / ds->kv_heads, d = ds->d, n_q = ds->n_q, n_kv = ds->n_kv;
    const size_t R = (size_t)group * n_q;
    if (R == 0) return KERN_CUDA_OK;
    if (!q || !o || !lse) return KC_EINVAL("NULL buffer");
    cudaStream_t st = b->stream;
    if (n_kv == 0) { /* no keys: O = 0, lse = -inf */
        KC_CUDA(cudaMemsetAsync(o, 0, (size_t)ds->heads * n_q * d * sizeof(float), st));
        kc_ref_rows r = kc_rows_of(ds);
        r.n_kv = 0;
        /* a zero-width softmax writes lse = -inf for every row */
        kc_ref_softmax_kernel<__nv_bfloat16><<<(unsigned)(ds->heads * (size_t)n_q), 32, 0, st>>>(
            static_cast<const float *>(nullptr), static_cast<uint16_t *>(nullptr), lse, r);
        KC_LAUNCHED("kc_ref_softmax_kernel");
        return KERN_CUDA_OK;
    }
    if (!k || !v || !ws) return KC_EINVAL("NULL buffer");
    const size_t per = kc_ref_per_head(ds, false);
    const int chunk = (int)(ws_bytes / per < (size_t)ds->kv_heads ? ws_bytes / per : (size_t)ds->kv_heads);
    if (chunk < 1) return kc_fail(KERN_CUDA_ENOMEM, "kern_cuda_attn_ref_fwd", __FILE__, __LINE__,
                                  "workspace smaller than one kv head's scores");
    if (R > (size_t)0x7fffffff) return KC_EINVAL("group * n_q exceeds the int range of cuBLAS");
    const size_t elems = R * n_kv;
    float *S = static_cast<float *>(ws);
    uint16_t *P = reinterpret_cast<uint16_t *>(static_cast<char *>(ws) + kc_align(elems * 4) * chunk);
    const kc_ref_rows r = kc_rows_of(ds);
    for (int h0 = 0; h0 < ds->kv_heads; h0 += chunk) {
        const int c = ds->kv_heads - h0 < chunk ? ds->kv_heads - h0 : chunk;
        const long long sS = (long long)(kc_align(elems * 4) / 4), sP = (long long)(kc_align(elems * 2) / 2);
        const char *qh = static_cast<const char *>(q) + (size_t)h0 * R * d * 2;
        const char *kh = static_cast<const char *>(k) + (size_t)h0 * n_kv * d * 2;
        const char *vh = static_cast<const char *>(v) + (size_t)h0 * n_kv * d * 2;
        KC_TRY(kc_gemm_sb(b, false, true, (int)R, n_kv, d, 1.f, qh, d, (long long)R * d, kh, d,
                          (long long)n_kv * d, ds->dtype, 0.f, S, n_kv, sS, KERN_CUDA_F32, c));
        for (int i = 0; i < c; i++) { /* rows of one kv head are contiguous; heads are sS apart */
            const unsigned rows = (unsigned)R;
            float *lh = lse + (size_t)(h0 + i) * R;
            if (ds->dtype == KERN_CUDA_BF16)
                kc_ref_softmax_kernel<__nv_bfloat16><<<rows, 256, 0, st>>>(S + i * sS, P + i * sP, lh, r);
            else
                kc_ref_softmax_kernel<__half><<<rows, 256, 0, st>>>(S + i * sS, P + i * sP, lh, r);
            KC_LAUNCHED("kc_ref_softmax_kernel");
        }
        KC_TRY(kc_gemm_sb(b, false, false, (int)R, d, n_kv, 1.f, P, n_kv, sP, vh, d, (long long)n_kv * d, ds->dtype,
                          0.f, o + (size_t)h0 * R * d, d, (long long)R * d, KERN_CUDA_F32, c));
    }
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_attn_ref_bwd(kern_cuda_blas *b, const struct kern_cuda_attn_desc *ds, const void *q,
                                        const void *k, const void *v, const void *o, const float *lse,
                                        const void *dout, float *dq, float *dk, float *dv, void *ws,
                                        size_t ws_bytes)
{
    if (!b) return KC_EINVAL("b is NULL");
    KC_TRY(kern_cuda_attn_check(ds, false));
    const int group = ds->heads / ds->kv_heads, d = ds->d, n_q = ds->n_q, n_kv = ds->n_kv;
    const size_t R = (size_t)group * n_q;
    if (R == 0 || n_kv == 0) return KERN_CUDA_OK;
    if (!q || !k || !v || !o || !lse || !dout || !dq || !dk || !dv || !ws) return KC_EINVAL("NULL buffer");
    if (R > (size_t)0x7fffffff) return KC_EINVAL("group * n_q exceeds the int range of cuBLAS");
    cudaStream_t st = b->stream;
    const size_t dr_bytes = kc_align((size_t)ds->heads * n_q * 4);
    const size_t per = kc_ref_per_head(ds, true);
    if (ws_bytes < dr_bytes + per)
        return kc_fail(KERN_CUDA_ENOMEM, "kern_cuda_attn_ref_bwd", __FILE__, __LINE__,
                       "workspace smaller than one kv head's scores");
    const int chunk = (int)((ws_bytes - dr_bytes) / per < (size_t)ds->kv_heads ? (ws_bytes - dr_bytes) / per
                                                                                : (size_t)ds->kv_heads);
    const size_t elems = R * n_kv;
    const size_t b4 = kc_align(elems * 4), b2 = kc_align(elems * 2);
    char *w = static_cast<char *>(ws);
    float *dr = reinterpret_cast<float *>(w);
    float *S = reinterpret_cast<float *>(w + dr_bytes);
    float *dP = reinterpret_cast<float *>(w + dr_bytes + b4 * chunk);
    uint16_t *P = reinterpret_cast<uint16_t *>(w + dr_bytes + 2 * b4 * chunk);
    uint16_t *dS = reinterpret_cast<uint16_t *>(w + dr_bytes + 2 * b4 * chunk + b2 * chunk);
    const long long s4 = (long long)(b4 / 4), s2 = (long long)(b2 / 2);
    KC_TRY(kc_launch_bwd_pre(o, dout, ds->dtype, dr, (long long)ds->heads * n_q, d, st));
    const kc_ref_rows r = kc_rows_of(ds);
    for (int h0 = 0; h0 < ds->kv_heads; h0 += chunk) {
        const int c = ds->kv_heads - h0 < chunk ? ds->kv_heads - h0 : chunk;
        const char *qh = static_cast<const char *>(q) + (size_t)h0 * R * d * 2;
        const char *doh = static_cast<const char *>(dout) + (size_t)h0 * R * d * 2;
        const char *kh = static_cast<const char *>(k) + (size_t)h0 * n_kv * d * 2;
        const char *vh = static_cast<const char *>(v) + (size_t)h0 * n_kv * d * 2;
        const long long sQ = (long long)R * d, sK = (long long)n_kv * d;
        KC_TRY(kc_gemm_sb(b, false, true, (int)R, n_kv, d, 1.f, qh, d, sQ, kh, d, sK, ds->dtype, 0.f, S, n_kv, s4,
                          KERN_CUDA_F32, c));
        KC_TRY(kc_gemm_sb(b, false, true, (int)R, n_kv, d, 1.f, doh, d, sQ, vh, d, sK, ds->dtype, 0.f, dP, n_kv, s4,
                          KERN_CUDA_F32, c));
        for (int i = 0; i < c; i++) {
            const float *lh = lse + (size_t)(h0 + i) * R;
            const float *drh = dr + (size_t)(h0 + i) * R;
            const long long n = (long long)elems;
            const unsigned blocks = (unsigned)((n + 255) / 256 < 1048576 ? (n + 255) / 256 : 1048576);
            if (ds->dtype == KERN_CUDA_BF16)
                kc_ref_bwd_elem_kernel<__nv_bfloat16><<<blocks, 256, 0, st>>>(S + i * s4, dP + i * s4, lh, drh,
                                                                              P + i * s2, dS + i * s2, n, r);
            else
                kc_ref_bwd_elem_kernel<__half><<<blocks, 256, 0, st>>>(S + i * s4, dP + i * s4, lh, drh, P + i * s2,
                                                                       dS + i * s2, n, r);
            KC_LAUNCHED("kc_ref_bwd_elem_kernel");
        }
        /* dV += P^T dO, dQ += scale dS K, dK += scale dS^T Q */
        KC_TRY(kc_gemm_sb(b, true, false, n_kv, d, (int)R, 1.f, P, n_kv, s2, doh, d, sQ, ds->dtype, 1.f,
                          dv + (size_t)h0 * n_kv * d, d, sK, KERN_CUDA_F32, c));
        KC_TRY(kc_gemm_sb(b, false, false, (int)R, d, n_kv, ds->scale, dS, n_kv, s2, kh, d, sK, ds->dtype, 1.f,
                          dq + (size_t)h0 * R * d, d, sQ, KERN_CUDA_F32, c));
        KC_TRY(kc_gemm_sb(b, true, false, n_kv, d, (int)R, ds->scale, dS, n_kv, s2, qh, d, sQ, ds->dtype, 1.f,
                          dk + (size_t)h0 * n_kv * d, d, sK, KERN_CUDA_F32, c));
    }
    return KERN_CUDA_OK;
}
