/* hx_nccl_kern.h: the device kernels of ulyharness's nccl backend (prefix
 * hxk_): what the layer around the attention needs on the GPU beyond
 * kernels/cuda (attention, merge, GEMM, convert, fill). Element types are
 * kern_cuda_dtype (BF16, FP16, F32): every value is widened to float, the
 * arithmetic is float32, results are rounded once to the output's type
 * (round to nearest even). All launches are asynchronous on `st`; each
 * returns the launch's cudaError_t (cudaSuccess = 0). The same arithmetic
 * as the CPU handlers (hx_layer.c), in float32 where those use float64
 * partial sums. */
#ifndef HX_NCCL_KERN_H
#define HX_NCCL_KERN_H

#include <stdint.h>

#include <cuda_runtime.h>

#include "kern_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Layout changes and conversions by index tables (element offsets):
 * for chunk i < nchunks and e < d:
 *   dst[doff[i] + e] = sum_{t < nsrc} src[soff[i * nsrc + t] + e]
 * (nsrc > 1 sums replicated KV heads back into their source head). */
cudaError_t hxk_gather(void *dst, kern_cuda_dtype dt, const int64_t *doff, const void *src, kern_cuda_dtype st_,
                       const int64_t *soff, int nsrc, int64_t nchunks, int d, cudaStream_t st);

/* dst[i] = a[i] + b[i] (b NULL: dst = a, a conversion); dst may be a. */
cudaError_t hxk_add(void *dst, kern_cuda_dtype dt, const void *a, kern_cuda_dtype at, const void *b,
                    kern_cuda_dtype bt, int64_t n, cudaStream_t st);

/* p[i] = v (float32) */
cudaError_t hxk_fill_f32(float *p, float v, int64_t n, cudaStream_t st);

/* RMSNorm with gains: inv[r] = 1 / sqrt(mean_j x^2 + eps); y = x inv g. */
cudaError_t hxk_rms_fwd(kern_cuda_dtype t, int64_t rows, int64_t h, const void *x, const void *g, void *y, float *inv,
                        float eps, cudaStream_t st);
/* dx = base + inv (dy g - x inv mean_j(dy g x inv)); dg = sum_rows dy x inv,
 * summed in dg32 (float32 scratch of h) and written to dg (type t). */
cudaError_t hxk_rms_bwd(kern_cuda_dtype t, int64_t rows, int64_t h, const void *x, const void *g, const float *inv,
                        const void *dy, const void *base, void *dx, void *dg, float *dg32, cudaStream_t st);

/* MLP activation: u [rows][w] with w = fl (GELU, tanh form) or 2 fl
 * (SwiGLU: gate | up); a [rows][fl]. Backward: du from da. */
cudaError_t hxk_act_fwd(kern_cuda_dtype t, int swiglu, int64_t rows, int64_t fl, const void *u, void *a,
                        cudaStream_t st);
cudaError_t hxk_act_bwd(kern_cuda_dtype t, int swiglu, int64_t rows, int64_t fl, const void *u, const void *da,
                        void *du, cudaStream_t st);

/* Cross-entropy over each row of z [rows][V], in place: softmax, then the
 * label (r * 7919) % V gets -1 (the gradient of the loss). */
cudaError_t hxk_loss(kern_cuda_dtype t, int64_t rows, int64_t V, void *z, cudaStream_t st);

/* Adam on n float32 master values: g[i] (type t) for i < gl, else 0;
 * w_out[i] (type t) = the updated master for i < nw. */
cudaError_t hxk_adam(kern_cuda_dtype t, int64_t n, const void *g, int64_t gl, float *master, float *m, float *v,
                     void *w_out, int64_t nw, float lr, float b1, float b2, float eps, float c1, float c2,
                     cudaStream_t st);

#ifdef __cplusplus
}
#endif

#endif
