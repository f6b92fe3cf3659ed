/* kern_cuda.h: the public C API of libulykern_cuda, the GPU attention and GEMM
 * kernels (prefix kern_cuda_). C-callable; no CUDA type appears here: a
 * stream is a `void *` (a cudaStream_t; NULL = the legacy default stream),
 * device buffers are plain pointers from kern_cuda_malloc (or cudaMalloc).
 *
 * Semantics mirror the CPU kernels (kernels/cpu/kern_attn.h):
 *   Q, O, dO     [heads][n_q][d]        K, V  [kv_heads][n_kv][d]
 *   lse          [heads][n_q] float32, natural log of the sum of exp of the
 *                scaled scores of the row; -INFINITY for a row that sees no key
 *   GQA          query head j reads kv head j / (heads / kv_heads)
 *   causal mask  row i (global position q_off + i) sees key j (kv_off + j)
 *                iff kv_off + j <= q_off + i
 *   backward     dQ, dK, dV are float32 and ACCUMULATE (+=): zero them before
 *                the first call; ring steps add their blocks' shares. O and
 *                lse must be the forward results over all keys the rows see
 *                (the merged ones for ring attention).
 *
 * Element types: Q, K, V, O, dO are bf16 or fp16 (desc.dtype), stored as
 * 16-bit patterns; every product is accumulated in float32. The flash
 * kernels copy Q, K, V, dO with 16-byte cp.async: those pointers must be
 * 16-byte aligned (cudaMalloc's are; offsets of whole rows keep it for
 * d = 64, 128), else EINVAL.
 *
 * Implementations:
 *   kern_cuda_attn_fwd / _bwd        FlashAttention-2 style: tiles of 128
 *       query rows x 64 keys (forward) and 64 keys x 64 queries (backward),
 *       4 warps, ldmatrix + mma.sync m16n8k16 tensor-core instructions,
 *       online softmax, cp.async double buffering, fully masked tiles
 *       skipped. Head dimension 64 or 128 (KERN_CUDA_EUNSUPPORTED otherwise).
 *   kern_cuda_attn_ref_fwd / _bwd    the unfused cuBLAS reference: scores
 *       through cublasGemmStridedBatchedEx in float32, a softmax kernel,
 *       then P V; any head dimension. Materialises the scores: needs the
 *       workspace its _workspace() function names (it works through the KV
 *       heads in as many passes as the workspace given requires). It runs
 *       on the stream of its cuBLAS handle (kern_cuda_blas_set_stream).
 *
 * Errors: every CUDA, cuBLAS and NCCL call is checked; a failing call
 * returns a status and kern_cuda_last_error() names the call, file and line
 * and the library's message (per thread). Calls never exit the process.
 */
#ifndef KERN_CUDA_H
#define KERN_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kern_cuda_status {
    KERN_CUDA_OK = 0,
    KERN_CUDA_EINVAL = 1,       /* a shape, pointer or option is out of range */
    KERN_CUDA_ENOMEM = 2,       /* a device or host allocation failed */
    KERN_CUDA_ENODEV = 3,       /* no CUDA device or no usable driver */
    KERN_CUDA_ECUDA = 4,        /* a CUDA runtime call failed (see kern_cuda_last_error) */
    KERN_CUDA_ECUBLAS = 5,      /* a cuBLAS call failed */
    KERN_CUDA_ENCCL = 6,        /* an NCCL call failed */
    KERN_CUDA_EUNSUPPORTED = 7, /* valid, but not what this kernel implements (head dim, dtype) */
} kern_cuda_status;

const char *kern_cuda_status_str(kern_cuda_status s);
/* The last failure's message on this thread ("" if none): the call, file:line, error. */
const char *kern_cuda_last_error(void);

typedef enum kern_cuda_dtype {
    KERN_CUDA_BF16 = 0,
    KERN_CUDA_FP16 = 1,
    KERN_CUDA_F32 = 2,
} kern_cuda_dtype;

size_t kern_cuda_dtype_size(kern_cuda_dtype t); /* 2, 2, 4; 0 if unknown */
const char *kern_cuda_dtype_name(kern_cuda_dtype t);

/* ------------------------------------------------------------- devices */

struct kern_cuda_device_info {
    char name[256];
    int major, minor;           /* compute capability */
    int sm_count;
    size_t mem_bytes;           /* total device memory */
    size_t l2_bytes;
    size_t smem_per_block_optin;/* largest dynamic shared memory a block can opt into */
    int clock_khz;              /* SM clock (0 where the runtime no longer reports it) */
    int mem_clock_khz;
    int mem_bus_bits;
    int driver_version;         /* e.g. 13000 */
    int runtime_version;
    char pci_bus_id[32];
};

/* ENODEV (not an error message worth printing twice) when there is no
 * device or no driver; *n = 0 then. */
kern_cuda_status kern_cuda_device_count(int *n);
kern_cuda_status kern_cuda_device_query(int dev, struct kern_cuda_device_info *out);
kern_cuda_status kern_cuda_set_device(int dev);
kern_cuda_status kern_cuda_synchronize(void);
const char *kern_cuda_build_info(void); /* nvcc version and the architectures compiled in */

/* --------------------------------------------------------------- memory */

kern_cuda_status kern_cuda_malloc(void **p, size_t bytes);
kern_cuda_status kern_cuda_free(void *p); /* NULL is fine */
kern_cuda_status kern_cuda_mem_get_info(size_t *free_bytes, size_t *total_bytes);
kern_cuda_status kern_cuda_h2d(void *dst, const void *src, size_t bytes);
kern_cuda_status kern_cuda_d2h(void *dst, const void *src, size_t bytes);
kern_cuda_status kern_cuda_d2d(void *dst, const void *src, size_t bytes, void *stream);
kern_cuda_status kern_cuda_memset0(void *p, size_t bytes, void *stream);

kern_cuda_status kern_cuda_stream_create(void **stream);
kern_cuda_status kern_cuda_stream_destroy(void *stream);
kern_cuda_status kern_cuda_stream_sync(void *stream);

/* Elementwise on the device: convert n elements between dtypes; fill with
 * quiet NaN (poison); fill uniform in [lo, hi) from a counter-based hash of
 * (seed, index), rounded to the dtype. */
kern_cuda_status kern_cuda_convert(void *dst, kern_cuda_dtype dst_t, const void *src, kern_cuda_dtype src_t,
                                   size_t n, void *stream);
kern_cuda_status kern_cuda_fill_nan(void *p, kern_cuda_dtype t, size_t n, void *stream);
kern_cuda_status kern_cuda_fill_uniform(void *p, kern_cuda_dtype t, size_t n, uint64_t seed, float lo, float hi,
                                        void *stream);

/* Host conversions (no GPU needed): round to nearest even, NaN kept NaN. */
uint16_t kern_cuda_host_from_f32(float x, kern_cuda_dtype t); /* t: BF16 or FP16 */
float kern_cuda_host_to_f32(uint16_t bits, kern_cuda_dtype t);
void kern_cuda_host_round(const float *src, uint16_t *dst, size_t n, kern_cuda_dtype t);
void kern_cuda_host_widen(const uint16_t *src, float *dst, size_t n, kern_cuda_dtype t);

/* FP8 formats (OCP FP8, NVIDIA's __nv_fp8_e4m3 / __nv_fp8_e5m2):
 *   E4M3  1 sign, 4 exponent (bias 7), 3 mantissa bits; largest finite 448
 *         (0x7e), NaN 0x7f / 0xff, no infinity; unit roundoff 2^-4.
 *   E5M2  1 sign, 5 exponent (bias 15), 2 mantissa bits; largest finite
 *         57344 (0x7b), infinity 0x7c, NaN 0x7d..0x7f; unit roundoff 2^-3.
 * Encoding as the device's cvt.rn.satfinite (__nv_cvt_float_to_fp8 with
 * __NV_SATFINITE): round to nearest even, magnitudes beyond the largest
 * finite value (infinity included) saturate to it, NaN stays NaN. */
typedef enum kern_cuda_fp8 {
    KERN_CUDA_E4M3 = 0,
    KERN_CUDA_E5M2 = 1,
} kern_cuda_fp8;

float kern_cuda_fp8_max(kern_cuda_fp8 f); /* 448, 57344; 0 if unknown */
const char *kern_cuda_fp8_name(kern_cuda_fp8 f);
uint8_t kern_cuda_host_fp8_from_f32(float x, kern_cuda_fp8 f);
float kern_cuda_host_fp8_to_f32(uint8_t bits, kern_cuda_fp8 f);
/* Tensorwise current scaling (TransformerEngine's Float8CurrentScaling):
 * a tensor of largest magnitude amax is quantized as fp8(x * scale) with
 * scale = fp8_max / amax in float32, and the GEMM multiplies its result by
 * 1 / scale. amax 0 (an all-zero tensor): scale 1. amax infinite or NaN:
 * scale NaN, so that the GEMM's output is NaN rather than quietly wrong.
 * The device computes the same float32 expression. */
float kern_cuda_fp8_scale(float amax, kern_cuda_fp8 f);

/* --------------------------------------------------------------- timing */

typedef struct kern_cuda_timer kern_cuda_timer; /* a pair of CUDA events */
kern_cuda_status kern_cuda_timer_create(kern_cuda_timer **t);
kern_cuda_status kern_cuda_timer_destroy(kern_cuda_timer *t); /* NULL is fine */
kern_cuda_status kern_cuda_timer_start(kern_cuda_timer *t, void *stream);
kern_cuda_status kern_cuda_timer_stop(kern_cuda_timer *t, void *stream);
/* Waits for the stop event; milliseconds between start and stop. */
kern_cuda_status kern_cuda_timer_ms(kern_cuda_timer *t, float *ms);

/* ------------------------------------------------------------ attention */

struct kern_cuda_attn_desc {
    int heads;      /* query heads; a multiple of kv_heads */
    int kv_heads;
    int n_q;        /* query rows per head (>= 0) */
    int n_kv;       /* key rows per kv head (>= 0) */
    int d;          /* head dimension (flash: 64 or 128; reference: any d >= 1) */
    float scale;    /* score scale, normally 1/sqrt(d); finite */
    bool causal;
    int64_t q_off;  /* global position of query row 0 (causal only) */
    int64_t kv_off; /* global position of key row 0 (causal only) */
    kern_cuda_dtype dtype; /* BF16 or FP16 */
};

/* EINVAL for a bad shape or option; EUNSUPPORTED where the shape is valid
 * but the flash kernels do not cover it (head dimension other than 64 or 128). */
kern_cuda_status kern_cuda_attn_check(const struct kern_cuda_attn_desc *desc, bool flash);

/* Forward: overwrites o (dtype) and lse (float32). Rows that see no key get
 * O = 0, lse = -INFINITY. */
kern_cuda_status kern_cuda_attn_fwd(const struct kern_cuda_attn_desc *desc, const void *q, const void *k,
                                    const void *v, void *o, float *lse, void *stream);
/* The same with the kernel's tile shape chosen: variant 0 is the default
 * for the head dimension, 1..kern_cuda_attn_fwd_variants()-1 the others
 * (benchmarks time them all; the name says what each is). */
int kern_cuda_attn_fwd_variants(void);
const char *kern_cuda_attn_fwd_variant_name(int d, int variant, char *buf, size_t len);
kern_cuda_status kern_cuda_attn_fwd_variant(const struct kern_cuda_attn_desc *desc, const void *q, const void *k,
                                            const void *v, void *o, float *lse, int variant, void *stream);

/* Backward: dq, dk, dv (float32) accumulate. Needs float32 scratch of
 * heads * n_q elements (rowsum(dO o O)): pass `workspace` of at least
 * kern_cuda_attn_bwd_workspace() bytes, or NULL to have the call take it
 * stream-ordered (cudaMallocAsync) and give it back. */
size_t kern_cuda_attn_bwd_workspace(const struct kern_cuda_attn_desc *desc);
kern_cuda_status kern_cuda_attn_bwd(const struct kern_cuda_attn_desc *desc, const void *q, const void *k,
                                    const void *v, const void *o, const float *lse, const void *dout, float *dq,
                                    float *dk, float *dv, void *workspace, void *stream);

/* Ring attention's merge: (o, lse) hold attention over some keys, (o_b,
 * lse_b) over a disjoint set, for the same rows; (o, lse) become attention
 * over the union. o is float32 (the accumulator), o_b is o_b_dtype (any
 * kern_cuda_dtype). -INFINITY on either side means "no key": both leave O = 0,
 * lse = -INFINITY. Shapes: o, o_b [heads][n_q][d]; lse, lse_b [heads][n_q]. */
kern_cuda_status kern_cuda_attn_merge(int heads, int n_q, int d, float *o, float *lse, const void *o_b,
                                      kern_cuda_dtype o_b_dtype, const float *lse_b, void *stream);

/* ---------------------------------------------------- cuBLAS: reference + GEMM */

typedef struct kern_cuda_blas kern_cuda_blas; /* a cuBLAS handle and its stream */
kern_cuda_status kern_cuda_blas_create(kern_cuda_blas **b);
kern_cuda_status kern_cuda_blas_destroy(kern_cuda_blas *b); /* NULL is fine */
kern_cuda_status kern_cuda_blas_set_stream(kern_cuda_blas *b, void *stream);
const char *kern_cuda_blas_version(kern_cuda_blas *b); /* "cuBLAS 13.0.0" */

/* Workspace for the reference; `min_bytes` is what one KV head needs (the
 * least that works), `all_bytes` what one pass over all heads needs. */
void kern_cuda_attn_ref_workspace(const struct kern_cuda_attn_desc *desc, bool backward, size_t *min_bytes,
                                  size_t *all_bytes);
/* Reference forward: o is FLOAT32 here (the unrounded result), lse float32. */
kern_cuda_status kern_cuda_attn_ref_fwd(kern_cuda_blas *b, const struct kern_cuda_attn_desc *desc, const void *q,
                                        const void *k, const void *v, float *o, float *lse, void *workspace,
                                        size_t workspace_bytes);
/* Reference backward: the same contract as kern_cuda_attn_bwd (o in dtype,
 * dq/dk/dv float32 accumulated). */
kern_cuda_status kern_cuda_attn_ref_bwd(kern_cuda_blas *b, const struct kern_cuda_attn_desc *desc, const void *q,
                                        const void *k, const void *v, const void *o, const float *lse,
                                        const void *dout, float *dq, float *dk, float *dv, void *workspace,
                                        size_t workspace_bytes);

/* Row-major C = alpha op(A) op(B) + beta C through cublasGemmEx with float32
 * accumulation (CUBLAS_COMPUTE_32F). op(A) is m x k, op(B) is k x n; lda,
 * ldb, ldc are the row strides of the matrices as stored (A is k x m when
 * trans_a). A and B share ab_t (BF16, FP16 or F32); C is c_t (ab_t or F32). */
kern_cuda_status kern_cuda_gemm(kern_cuda_blas *b, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                                const void *a, int lda, const void *bm, int ldb, kern_cuda_dtype ab_t, float beta,
                                void *c, int ldc, kern_cuda_dtype c_t);

/* Row-major C = alpha op(A) op(B) + beta C with A and B quantized to FP8
 * (cuBLASLt, kern_cuda_fp8.cu): the semantics, shapes and strides of
 * kern_cuda_gemm; A and B are ab_t (BF16, FP16 or F32), C is BF16 (read
 * when beta != 0). Each of A and B is quantized on the device to its own
 * format (a_f, b_f) with its own tensorwise current scale
 * (kern_cuda_fp8_scale of its amax, computed on the device over the op(A)
 * m x k / op(B) k x n window), written k-contiguous into the workspace (the
 * transpose done by the cast when the operand is not stored that way), and
 * multiplied by cublasLtMatmul: FP8 inputs, float32 compute and
 * accumulation, the inverse scales through CUBLASLT_MATMUL_DESC_A/B_SCALE_
 * POINTER, bf16 output. TransformerEngine's recipes: E4M3 for weights and
 * activations; the "hybrid" format puts gradients in E5M2.
 * Constraints (KERN_CUDA_EUNSUPPORTED otherwise; EINVAL for what would be
 * invalid for kern_cuda_gemm too):
 *   - m, n, k multiples of 16 (cuBLASLt's FP8 operands: 16-byte aligned
 *     rows in its "TN" layout, which the cast's k-contiguous copies give);
 *   - C 16-byte aligned, ldc a multiple of 8;
 *   - not both E5M2 (cuBLASLt has no E5M2 x E5M2 FP8 GEMM);
 *   - a device of compute capability 8.9 or newer (FP8 tensor cores), and
 *     a cuBLASLt that finds an algorithm for the shape.
 * Workspace: kern_cuda_gemm_fp8_workspace(m, n, k) bytes (the FP8 copies,
 * amax and scales, cuBLASLt's own workspace), 256-byte aligned; NULL takes
 * it stream-ordered (cudaMallocAsync) for the call. Runs on the stream of
 * the handle (kern_cuda_blas_set_stream). */
size_t kern_cuda_gemm_fp8_workspace(int m, int n, int k);
kern_cuda_status kern_cuda_gemm_fp8(kern_cuda_blas *b, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                                    const void *a, int lda, kern_cuda_fp8 a_f, const void *bm, int ldb,
                                    kern_cuda_fp8 b_f, kern_cuda_dtype ab_t, float beta, void *c, int ldc,
                                    void *workspace, size_t workspace_bytes);

#ifdef __cplusplus
}
#endif

#endif /* KERN_CUDA_H */
