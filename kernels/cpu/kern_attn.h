/* kern_attn.h: the public API of libulykern, the CPU attention and GEMM
 * kernels the harness runs when it executes a plan for real.
 *
 * Two attention implementations with one contract: "ref" (plain loops, the
 * oracle, optional float64 accumulation) and "flash" (FlashAttention-2
 * blocking on OpenBLAS SGEMM). Both take one (Q, KV block) pair with a causal
 * mask that may be offset, so ring attention calls them once per ring step
 * and merges the partial results with kern_attn_merge().
 *
 * Layouts (row-major, contiguous, float32, element counts):
 *   Q, O, dQ, dO   [heads][n_q][d]
 *   K, V, dK, dV   [kv_heads][n_kv][d]
 *   lse            [heads][n_q]   natural-log log-sum-exp of the scaled
 *                                 scores of each row (-INFINITY: no key seen)
 * GQA/MQA: query head j reads kv head j / (heads / kv_heads).
 * Causal mask with offsets: query row i sits at global position q_off + i,
 * key j at kv_off + j; row i may see key j iff kv_off + j <= q_off + i. With
 * q_off == kv_off this is the usual lower triangle; ring attention passes
 * the global positions of its local Q block and of the KV block it holds
 * (contiguous or zigzag split alike).
 */
#ifndef KERN_ATTN_H
#define KERN_ATTN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kern_status {
    KERN_OK = 0,
    KERN_EINVAL = 1, /* a shape, pointer or option is out of range */
    KERN_ENOMEM = 2, /* scratch or thread allocation failed */
} kern_status;

const char *kern_status_str(kern_status s);

/* How the reference accumulates dot products and sums. */
typedef enum kern_acc {
    KERN_ACC_F32 = 0, /* float32 throughout, like the fast kernels */
    KERN_ACC_F64 = 1, /* float64 accumulators, float32 in and out: the oracle */
} kern_acc;

/* One attention call: shapes, mask and options. Zero-initialise, then set. */
struct kern_attn_desc {
    int heads;      /* query heads (a); a multiple of kv_heads */
    int kv_heads;   /* key/value heads (k): heads for MHA, 1 for MQA */
    int n_q;        /* query rows per head (>= 0) */
    int n_kv;       /* key/value rows per kv head (>= 0) */
    int d;          /* head dimension (> 0) */
    float scale;    /* score scale, normally 1/sqrt(d); given, never derived */
    bool causal;    /* apply the offset causal mask above */
    int64_t q_off;  /* global position of query row 0 (causal only) */
    int64_t kv_off; /* global position of key row 0 (causal only) */
    kern_acc acc;   /* ref only; flash always accumulates in float32 */
    int threads;    /* flash only: worker threads; 0 = what OpenBLAS uses now */
    /* ref only: called with progress_arg once per query row worked, so a
     * caller waited on by others can show it is alive through a long
     * reference (the harness's check); NULL: none. Results do not depend on it. */
    void (*progress)(void *progress_arg);
    void *progress_arg;
};

/* Forward: overwrites o and lse. Rows that see no key get O = 0 and
 * lse = -INFINITY. */
typedef kern_status (*kern_attn_fwd_fn)(const struct kern_attn_desc *desc,
                                        const float *q, const float *k, const float *v,
                                        float *o, float *lse);

/* Backward for the loss L with dO = dL/dO.
 * o and lse must be the forward results over ALL keys the rows attend to
 * (for ring attention: the merged O and lse, not this block's partials);
 * k and v may be any one block of those keys, given with its own n_kv and
 * kv_off. Then the call ADDS this block's share of the gradient:
 *   dq += dL/dQ through this block, dk += dL/dK_block, dv += dL/dV_block.
 * All three outputs ACCUMULATE: zero them before the first call; ring steps
 * then sum their contributions into the same buffers. */
typedef kern_status (*kern_attn_bwd_fn)(const struct kern_attn_desc *desc,
                                        const float *q, const float *k, const float *v,
                                        const float *o, const float *lse, const float *dout,
                                        float *dq, float *dk, float *dv);

/* Reference: one row at a time, obviously correct, slow; single-threaded. */
kern_status kern_attn_ref_fwd(const struct kern_attn_desc *desc,
                              const float *q, const float *k, const float *v,
                              float *o, float *lse);
kern_status kern_attn_ref_bwd(const struct kern_attn_desc *desc,
                              const float *q, const float *k, const float *v,
                              const float *o, const float *lse, const float *dout,
                              float *dq, float *dk, float *dv);

/* The same reference on float64 buffers (desc->acc is ignored): what the
 * finite-difference gradient check uses to prove the reference itself. */
kern_status kern_attn_ref_fwd_f64(const struct kern_attn_desc *desc,
                                  const double *q, const double *k, const double *v,
                                  double *o, double *lse);
kern_status kern_attn_ref_bwd_f64(const struct kern_attn_desc *desc,
                                  const double *q, const double *k, const double *v,
                                  const double *o, const double *lse, const double *dout,
                                  double *dq, double *dk, double *dv);

/* Flash: blocked over queries and keys, online softmax, SGEMM on blocks,
 * fully masked blocks skipped. With more than one worker it runs OpenBLAS
 * single-threaded for the duration of the call (restoring the previous
 * thread count afterwards), so each worker's block GEMMs stay on its core;
 * other BLAS calls made meanwhile by other threads of the process run
 * single-threaded too. The first call with a new, higher worker count costs
 * ~1 ms more per worker: one wide SGEMM each, which OpenBLAS needs before
 * it runs small blocks at full speed (see gemm.c). Thread-safe: concurrent
 * calls share nothing but the OpenBLAS thread setting. */
kern_status kern_attn_flash_fwd(const struct kern_attn_desc *desc,
                                const float *q, const float *k, const float *v,
                                float *o, float *lse);
kern_status kern_attn_flash_bwd(const struct kern_attn_desc *desc,
                                const float *q, const float *k, const float *v,
                                const float *o, const float *lse, const float *dout,
                                float *dq, float *dk, float *dv);

/* Ring attention's merge: (o, lse) holds attention over one set of keys,
 * (o_b, lse_b) over a disjoint set, both for the same rows. Updates (o, lse)
 * in place to attention over the union. -INFINITY lse means "no key yet" on
 * either side; both -INFINITY leaves O = 0, lse = -INFINITY.
 * Shapes: o, o_b [heads][n_q][d]; lse, lse_b [heads][n_q]. */
kern_status kern_attn_merge(int heads, int n_q, int d,
                            float *o, float *lse, const float *o_b, const float *lse_b);

/* The registry: every implementation with the fwd/bwd contract above.
 * Adding a variant = one file defining `const struct kern_attn_impl
 * kern_attn_impl_NAME` + one entry in attn_registry.c's list. */
struct kern_attn_impl {
    const char *name;    /* "ref", "flash", ... */
    const char *summary; /* one line for --help and trace headers */
    kern_attn_fwd_fn fwd;
    kern_attn_bwd_fn bwd;
};

const struct kern_attn_impl *kern_attn_find(const char *name); /* NULL if unknown */
size_t kern_attn_impl_count(void);
const struct kern_attn_impl *kern_attn_impl_at(size_t i); /* NULL past the end */

/* Row-major C = alpha * op(A) * op(B) + beta * C through cblas_sgemm, for the
 * harness's projections. op(A) is m x k, op(B) is k x n, C is m x n; lda, ldb,
 * ldc are row strides in elements of the matrices as stored (A is k x m when
 * trans_a). Uses OpenBLAS's current thread count. */
kern_status kern_gemm_f32(bool trans_a, bool trans_b, int m, int n, int k,
                          float alpha, const float *a, int lda,
                          const float *b, int ldb,
                          float beta, float *c, int ldc);

/* What the BLAS underneath is, for benchmark output and trace headers. */
int kern_blas_threads_get(void);         /* OpenBLAS threads now (1 if unknown) */
void kern_blas_threads_set(int n);       /* OpenBLAS threads from now on (n >= 1; no-op for another BLAS) */
const char *kern_blas_config_get(void);  /* OpenBLAS build string, or "unknown" */
const char *kern_blas_core_get(void);    /* the OpenBLAS kernel set running (openblas_get_corename), or "unknown" */
/* SGEMM (C = A B^T, n x n x n, n <= 1024, entries from seed) against a plain
 * float64 loop: the largest error relative to the sum of |products| of its
 * entry (about n 2^-24 for a correct float32 SGEMM); INFINITY when it cannot
 * run, and not below a NaN. */
double kern_gemm_check(int n, unsigned seed);

/* The OpenBLAS kernel set (blas_probe.c). OpenBLAS picks its kernels once,
 * when it loads, from the CPU it recognises; OPENBLAS_CORETYPE overrides
 * that. kern_blas_probe runs `self child_flag` once per candidate set the
 * CPU has the instructions for (and once with OpenBLAS's own choice), each
 * a process whose main calls kern_blas_probe_child (one line: the set
 * running, whether its SGEMM checks out against float64, its GFLOP/s at
 * 1024^3): the fastest correct one and OpenBLAS's own choice, with
 * their rates, and one line of every candidate's rate in report. 0, or -1
 * when none ran correctly. */
typedef struct kern_blas_choice {
    char best[64], deflt[64];           /* kernel set names, as openblas_get_corename gives them */
    double best_gflops, default_gflops; /* default_gflops 0: OpenBLAS's own choice did not run correctly */
    char report[512];
} kern_blas_choice;
int kern_blas_probe_child(void);
int kern_blas_probe(const char *self, const char *child_flag, kern_blas_choice *out);
/* Best of reps SGEMM C = A B^T, m x n x k, in GFLOP/s (0 when it cannot run).
 * Best, not mean: the box may be shared, and the minimum is the kernel's
 * time without other people's work in it. */
double kern_sgemm_gflops(int m, int n, int k, int reps);
/* For benchmarks and probes (blas_probe.c): a monotonic clock in seconds,
 * and n floats in [-1, 1) from a linear congruential generator seeded by
 * *seed (malloc'ed; NULL when out of memory). */
double kern_now_s(void);
float *kern_rand_new(size_t n, unsigned *seed);

#ifdef __cplusplus
}
#endif

#endif /* KERN_ATTN_H */
