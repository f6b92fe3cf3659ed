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

#ifdef __cplusplus
}
#endif

#endif /* KERN_CUDA_H */
