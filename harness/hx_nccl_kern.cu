/* hx_nccl_kern.cu: device kernels of ulyharness's nccl backend (see
 * hx_nccl_kern.h). Simple, memory-bound kernels: grid-stride loops of 256
 * threads, or one block per row where a row needs a reduction. */
#include "hx_nccl_kern.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>

namespace {

constexpr int kThreads = 256;

template <typename T> __device__ __forceinline__ float ld(const T *p, int64_t i);
template <> __device__ __forceinline__ float ld<float>(const float *p, int64_t i) { return p[i]; }
template <> __device__ __forceinline__ float ld<__nv_bfloat16>(const __nv_bfloat16 *p, int64_t i)
{
    return __bfloat162float(p[i]);
}
template <> __device__ __forceinline__ float ld<__half>(const __half *p, int64_t i) { return __half2float(p[i]); }

template <typename T> __device__ __forceinline__ void st(T *p, int64_t i, float v);
template <> __device__ __forceinline__ void st<float>(float *p, int64_t i, float v) { p[i] = v; }
template <> __device__ __forceinline__ void st<__nv_bfloat16>(__nv_bfloat16 *p, int64_t i, float v)
{
    p[i] = __float2bfloat16_rn(v);
}
template <> __device__ __forceinline__ void st<__half>(__half *p, int64_t i, float v) { p[i] = __float2half_rn(v); }

__device__ __forceinline__ int64_t gtid() { return (int64_t)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t gstride() { return (int64_t)gridDim.x * blockDim.x; }

unsigned blocks_for(int64_t n)
{
    int64_t b = (n + kThreads - 1) / kThreads;
    if (b < 1) b = 1;
    if (b > (1 << 20)) b = 1 << 20;
    return (unsigned)b;
}

unsigned rows_grid(int64_t rows) { return (unsigned)(rows < (1 << 20) ? (rows < 1 ? 1 : rows) : (1 << 20)); }

/* every thread of the block gets the total (blockDim.x a multiple of 32) */
__device__ float block_reduce(float v, bool is_max, float *red)
{
    for (int m = 16; m >= 1; m >>= 1) {
        const float o = __shfl_xor_sync(0xffffffffu, v, m);
        v = is_max ? fmaxf(v, o) : v + o;
    }
    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = (int)(blockDim.x >> 5);
    __syncthreads(); /* red[] may still be read by the previous reduction */
    if (lane == 0) red[w] = v;
    __syncthreads();
    v = lane < nw ? red[lane] : (is_max ? -INFINITY : 0.f);
    for (int m = 16; m >= 1; m >>= 1) {
        const float o = __shfl_xor_sync(0xffffffffu, v, m);
        v = is_max ? fmaxf(v, o) : v + o;
    }
    return v;
}

/* ---------------------------------------------------------------- kernels */

template <typename D, typename S>
__global__ void k_gather(D *dst, const int64_t *doff, const S *src, const int64_t *soff, int nsrc, int64_t nchunks,
                         int d)
{
    const int64_t n = nchunks * d;
    for (int64_t i = gtid(); i < n; i += gstride()) {
        const int64_t c = i / d;
        const int64_t e = i - c * d;
        float acc = 0.f;
        for (int t = 0; t < nsrc; t++) acc += ld(src, soff[c * nsrc + t] + e);
        st(dst, doff[c] + e, acc);
    }
}

template <typename D, typename A, typename B>
__global__ void k_add(D *dst, const A *a, const B *b, int64_t n)
{
    for (int64_t i = gtid(); i < n; i += gstride()) st(dst, i, ld(a, i) + (b ? ld(b, i) : 0.f));
}

__global__ void k_fill(float *p, float v, int64_t n)
{
    for (int64_t i = gtid(); i < n; i += gstride()) p[i] = v;
}

template <typename T>
__global__ void k_rms_fwd(int64_t rows, int64_t h, const T *x, const T *g, T *y, float *inv, float eps)
{
    __shared__ float red[32];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *xr = x + r * h;
        float ss = 0.f;
        for (int64_t j = threadIdx.x; j < h; j += blockDim.x) {
            const float v = ld(xr, j);
            ss += v * v;
        }
        ss = block_reduce(ss, false, red);
        const float iv = 1.0f / sqrtf(ss / (float)h + eps);
        if (threadIdx.x == 0) inv[r] = iv;
        for (int64_t j = threadIdx.x; j < h; j += blockDim.x) st(y, r * h + j, ld(xr, j) * iv * ld(g, j));
    }
}

template <typename T>
__global__ void k_rms_bwd(int64_t rows, int64_t h, const T *x, const T *g, const float *inv, const T *dy,
                          const T *base, T *dx)
{
    __shared__ float red[32];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const int64_t o = r * h;
        const float iv = inv[r];
        float dot = 0.f;
        for (int64_t j = threadIdx.x; j < h; j += blockDim.x) dot += ld(dy, o + j) * ld(g, j) * (ld(x, o + j) * iv);
        dot = block_reduce(dot, false, red);
        const float mean = dot / (float)h;
        for (int64_t j = threadIdx.x; j < h; j += blockDim.x)
            st(dx, o + j, ld(base, o + j) + iv * (ld(dy, o + j) * ld(g, j) - ld(x, o + j) * iv * mean));
    }
}

/* dg32[j] += sum over rows [r0, r0 + rch) of dy x inv */
template <typename T>
__global__ void k_rms_dg(int64_t rows, int64_t h, const T *x, const float *inv, const T *dy, float *dg32, int64_t rch)
{
    const int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= h) return;
    const int64_t r0 = (int64_t)blockIdx.y * rch;
    const int64_t r1 = r0 + rch < rows ? r0 + rch : rows;
    float s = 0.f;
    for (int64_t r = r0; r < r1; r++) s += ld(dy, r * h + j) * (ld(x, r * h + j) * inv[r]);
    atomicAdd(dg32 + j, s);
}

__device__ __forceinline__ float gelu(float x)
{
    const float k0 = 0.7978845608f, k1 = 0.044715f;
    return 0.5f * x * (1.0f + tanhf(k0 * (x + k1 * x * x * x)));
}

__device__ __forceinline__ float gelu_grad(float x)
{
    const float k0 = 0.7978845608f, k1 = 0.044715f;
    const float t = tanhf(k0 * (x + k1 * x * x * x));
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * k0 * (1.0f + 3.0f * k1 * x * x);
}

__device__ __forceinline__ float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }

template <typename T>
__global__ void k_act_fwd(int swiglu, int64_t rows, int64_t fl, const T *u, T *a)
{
    const int64_t w = swiglu ? 2 * fl : fl, n = rows * fl;
    for (int64_t i = gtid(); i < n; i += gstride()) {
        const int64_t r = i / fl, j = i - r * fl;
        const float x = ld(u, r * w + j);
        st(a, i, swiglu ? x * sigm(x) * ld(u, r * w + fl + j) : gelu(x));
    }
}

template <typename T>
__global__ void k_act_bwd(int swiglu, int64_t rows, int64_t fl, const T *u, const T *da, T *du)
{
    const int64_t w = swiglu ? 2 * fl : fl, n = rows * fl;
    for (int64_t i = gtid(); i < n; i += gstride()) {
        const int64_t r = i / fl, j = i - r * fl;
        const float x = ld(u, r * w + j), g = ld(da, i);
        if (swiglu) {
            const float s = sigm(x), up = ld(u, r * w + fl + j);
            st(du, r * w + j, g * up * s * (1.0f + x * (1.0f - s)));
            st(du, r * w + fl + j, g * x * s);
        } else {
            st(du, r * w + j, g * gelu_grad(x));
        }
    }
}

template <typename T>
__global__ void k_loss(int64_t rows, int64_t V, T *z)
{
    __shared__ float red[32];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        T *zr = z + r * V;
        float mx = -INFINITY;
        for (int64_t j = threadIdx.x; j < V; j += blockDim.x) mx = fmaxf(mx, ld(zr, j));
        mx = block_reduce(mx, true, red);
        float sum = 0.f;
        for (int64_t j = threadIdx.x; j < V; j += blockDim.x) sum += expf(ld(zr, j) - mx);
        sum = block_reduce(sum, false, red);
        const float inv = 1.0f / sum;
        const int64_t label = (r * 7919) % V;
        /* each element is read and written by the same thread: in place is safe */
        for (int64_t j = threadIdx.x; j < V; j += blockDim.x)
            st(zr, j, expf(ld(zr, j) - mx) * inv - (j == label ? 1.0f : 0.0f));
    }
}

template <typename T>
__global__ void k_adam(int64_t n, const T *g, int64_t gl, float *master, float *m, float *v, T *w_out, int64_t nw,
                       float lr, float b1, float b2, float eps, float c1, float c2)
{
    for (int64_t i = gtid(); i < n; i += gstride()) {
        const float gi = i < gl ? ld(g, i) : 0.f;
        const float mi = b1 * m[i] + (1.0f - b1) * gi, vi = b2 * v[i] + (1.0f - b2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        const float w = master[i] - lr * (mi / c1) / (sqrtf(vi / c2) + eps);
        master[i] = w;
        if (i < nw) st(w_out, i, w);
    }
}

} // namespace

/* ------------------------------------------------------------- dispatch */

/* the 16-bit types (the layer's activations) */
#define HXK_CASES16(T, ...)                                                       \
    case KERN_CUDA_BF16: {                                                        \
        typedef __nv_bfloat16 T;                                                  \
        __VA_ARGS__;                                                              \
        break;                                                                    \
    }                                                                             \
    case KERN_CUDA_FP16: {                                                        \
        typedef __half T;                                                         \
        __VA_ARGS__;                                                              \
        break;                                                                    \
    }

#define HXK_TYPE(t, T, ...)                                                       \
    switch (t) {                                                                  \
        HXK_CASES16(T, __VA_ARGS__)                                               \
    case KERN_CUDA_F32: {                                                         \
        typedef float T;                                                          \
        __VA_ARGS__;                                                              \
        break;                                                                    \
    }                                                                             \
    default: return cudaErrorInvalidValue;                                        \
    }

#define HXK_TYPE16(t, T, ...)                                                     \
    switch (t) {                                                                  \
        HXK_CASES16(T, __VA_ARGS__)                                               \
    default: return cudaErrorInvalidValue;                                        \
    }

extern "C" cudaError_t hxk_gather(void *dst, kern_cuda_dtype dt, const int64_t *doff, const void *src,
                                  kern_cuda_dtype st_, const int64_t *soff, int nsrc, int64_t nchunks, int d,
                                  cudaStream_t st)
{
    if (nchunks <= 0 || d <= 0) return cudaSuccess;
    if (nsrc < 1) return cudaErrorInvalidValue;
    const unsigned nb = blocks_for(nchunks * d);
    HXK_TYPE(dt, D, HXK_TYPE(st_, S,
        k_gather<D, S><<<nb, kThreads, 0, st>>>(static_cast<D *>(dst), doff, static_cast<const S *>(src), soff,
                                                 nsrc, nchunks, d)))
    return cudaGetLastError();
}

extern "C" cudaError_t hxk_add(void *dst, kern_cuda_dtype dt, const void *a, kern_cuda_dtype at, const void *b,
                               kern_cuda_dtype bt, int64_t n, cudaStream_t st)
{
    if (n <= 0) return cudaSuccess;
    const unsigned nb = blocks_for(n);
    HXK_TYPE(dt, D, HXK_TYPE(at, A, HXK_TYPE(bt, B,
        k_add<D, A, B><<<nb, kThreads, 0, st>>>(static_cast<D *>(dst), static_cast<const A *>(a),
                                                 static_cast<const B *>(b), n))))
    return cudaGetLastError();
}

extern "C" cudaError_t hxk_fill_f32(float *p, float v, int64_t n, cudaStream_t st)
{
    if (n <= 0) return cudaSuccess;
    k_fill<<<blocks_for(n), kThreads, 0, st>>>(p, v, n);
    return cudaGetLastError();
}

extern "C" cudaError_t hxk_rms_fwd(kern_cuda_dtype t, int64_t rows, int64_t h, const void *x, const void *g, void *y,
                                   float *inv, float eps, cudaStream_t st)
{
    if (rows <= 0 || h <= 0) return cudaSuccess;
    HXK_TYPE16(t, T,
        k_rms_fwd<T><<<rows_grid(rows), kThreads, 0, st>>>(rows, h, static_cast<const T *>(x),
                                                            static_cast<const T *>(g), static_cast<T *>(y), inv, eps))
    return cudaGetLastError();
}

extern "C" cudaError_t hxk_rms_bwd(kern_cuda_dtype t, int64_t rows, int64_t h, const void *x, const void *g,
                                   const float *inv, const void *dy, const void *base, void *dx, void *dg,
                                   float *dg32, cudaStream_t st)
{
    if (rows <= 0 || h <= 0) return cudaSuccess;
    cudaError_t e = cudaMemsetAsync(dg32, 0, sizeof(float) * (size_t)h, st);
    if (e != cudaSuccess) return e;
    int64_t rch = 256;
    while ((rows + rch - 1) / rch > 65535) rch *= 2;
    const dim3 grid((unsigned)((h + kThreads - 1) / kThreads), (unsigned)((rows + rch - 1) / rch));
    HXK_TYPE16(t, T,
        k_rms_bwd<T><<<rows_grid(rows), kThreads, 0, st>>>(rows, h, static_cast<const T *>(x),
                                                            static_cast<const T *>(g), inv,
                                                            static_cast<const T *>(dy), static_cast<const T *>(base),
                                                            static_cast<T *>(dx));
        e = cudaGetLastError();
        if (e != cudaSuccess) return e;
        k_rms_dg<T><<<grid, kThreads, 0, st>>>(rows, h, static_cast<const T *>(x), inv, static_cast<const T *>(dy),
                                               dg32, rch);
        e = cudaGetLastError();
        if (e != cudaSuccess) return e;
        k_add<T, float, float><<<blocks_for(h), kThreads, 0, st>>>(static_cast<T *>(dg), dg32, nullptr, h))
    return cudaGetLastError();
}

extern "C" cudaError_t hxk_act_fwd(kern_cuda_dtype t, int swiglu, int64_t rows, int64_t fl, const void *u, void *a,
                                   cudaStream_t st)
{
    if (rows <= 0 || fl <= 0) return cudaSuccess;
    HXK_TYPE16(t, T,
        k_act_fwd<T><<<blocks_for(rows * fl), kThreads, 0, st>>>(swiglu, rows, fl, static_cast<const T *>(u),
                                                                  static_cast<T *>(a)))
    return cudaGetLastError();
}

extern "C" cudaError_t hxk_act_bwd(kern_cuda_dtype t, int swiglu, int64_t rows, int64_t fl, const void *u,
                                   const void *da, void *du, cudaStream_t st)
{
    if (rows <= 0 || fl <= 0) return cudaSuccess;
    HXK_TYPE16(t, T,
        k_act_bwd<T><<<blocks_for(rows * fl), kThreads, 0, st>>>(swiglu, rows, fl, static_cast<const T *>(u),
                                                                  static_cast<const T *>(da), static_cast<T *>(du)))
    return cudaGetLastError();
}

extern "C" cudaError_t hxk_loss(kern_cuda_dtype t, int64_t rows, int64_t V, void *z, cudaStream_t st)
{
    if (rows <= 0 || V <= 0) return cudaSuccess;
    HXK_TYPE16(t, T, k_loss<T><<<rows_grid(rows), kThreads, 0, st>>>(rows, V, static_cast<T *>(z)))
    return cudaGetLastError();
}

extern "C" cudaError_t hxk_adam(kern_cuda_dtype t, int64_t n, const void *g, int64_t gl, float *master, float *m,
                                float *v, void *w_out, int64_t nw, float lr, float b1, float b2, float eps, float c1,
                                float c2, cudaStream_t st)
{
    if (n <= 0) return cudaSuccess;
    HXK_TYPE16(t, T,
        k_adam<T><<<blocks_for(n), kThreads, 0, st>>>(n, static_cast<const T *>(g), gl, master, m, v,
                                                       static_cast<T *>(w_out), nw, lr, b1, b2, eps, c1, c2))
    return cudaGetLastError();
}
