/* hx_nccl.h: internals of the nccl backend of ulyharness (prefix hn_),
 * shared by its files, which mirror the CPU side's:
 *   hx_nccl.c        lifecycle: the backend table, configure, open, prepare
 *                    (buffers, communicators), exec, fetch, describe, close;
 *   hx_nccl_mem.c    device memory, host <-> device copies, events, layout maps;
 *   hx_nccl_layer.c  the layer around the attention, the per-model ops, the
 *                    optimizer and the communication ops (as hx_layer.c);
 *   hx_nccl_attn.c   attention over segment pairs and the ring's transfers
 *                    overlapping it (as hx_attn.c);
 *   hx_nccl_fp8.c    --dtype fp8: the linear layers' GEMMs in FP8, the
 *                    check's tolerance for them.
 * The backend's state (hn) is allocated by open and reached from the run's
 * context (hx_ctx.be_state); nothing of it is global. */
#ifndef HX_NCCL_H
#define HX_NCCL_H

#include <cuda_runtime.h>

#include "hx.h"
#include "hx_nccl_kern.h"
#include "kern_cuda.h"
#include "kern_nccl.h"

/* A layout change as an index table (hxk_gather): chunk i of d elements
 * goes to doff[i] from soff[i * nsrc ...]. Device pointers. */
typedef struct hn_map {
    int64_t *doff, *soff;
    int64_t n;
    int nsrc, d;
} hn_map;

/* an exposed-wait measurement: events before and after a wait on the compute stream */
typedef struct hn_pend {
    cudaEvent_t a, b;
    double *acc;
} hn_pend;

#define HN_MAX_ALLOCS 128

typedef struct hn {
    int device, ndev, local_rank, local_size;
    struct kern_cuda_device_info info;
    int driver, runtime;
    char nccl_version[128];
    kern_cuda_dtype ct; /* the run's element type (bf16 under --dtype fp8) */
    int64_t es;         /* its size */
    int fp8;            /* --dtype fp8: the linear layers' GEMMs through kern_cuda_gemm_fp8 (hn_linear) */
    void *fp8_ws;       /* its workspace, sized for the largest of them */
    size_t fp8_ws_bytes;
    int fp8_calls;      /* FP8 GEMM calls of the op being executed (hn_exec: hx_opstat.fp8_gemms) */
    char fp8_tol_reason[512];
    int flash;          /* 1: flash kernels; 0: cuBLAS reference attention */
    cudaStream_t cs;    /* compute stream */
    kern_cuda_blas *blas;
    kern_nccl_comm *nc[ULY_GROUP_COUNT];
    cudaEvent_t t0, t1;
    cudaEvent_t *pool;  /* events for ring steps and waits, reused op by op */
    int npool, used;
    hn_pend *pend;
    int npend, maxpend;
    void *allocs[HN_MAX_ALLOCS];
    int nallocs;

    /* token side [Rt][h] */
    void *X, *Y1, *X1, *Y2, *G, *dY1, *dX1, *dY2, *dX, *Z, *M;
    float *rms1, *rms2, *dg32;
    /* GEMM side [Rg][...]: the TP group's gathered rows under TP+SP (the
     * token side's buffers themselves without TP) */
    void *Y1g, *Y2g, *Gg, *dX1g, *Zg, *Mg, *dY2g, *dY1g;
    void *U, *dU, *A, *dA;
    void *Q, *K, *V, *O, *dO, *dQ, *dK, *dV;
    /* attention side */
    void *qa, *oa, *doa, *tmp_o, *kv_own;
    float *oacc, *lse, *tmp_lse, *tmp_o32, *dqa, *dkv, *acc32;
    void *rot[2], *accs[2], *accr[2];
    void *bwd_ws, *ref_ws; /* the attention kernels' workspaces (flash backward, cuBLAS reference) */
    size_t bwd_ws_bytes, ref_ws_bytes;
    /* Ulysses all-to-all buffers */
    void *s_q, *r_q, *s_k, *r_k, *s_v, *r_v, *s_o, *r_o;
    void *s_do, *r_do, *s_dq, *r_dq, *s_dk, *r_dk, *s_dv, *r_dv;
    /* parameters */
    void *wt, *gwt, *wshard, *gshard, *gmshard, *wmshard;
    float *master, *adam_m, *adam_v;
    /* per-model ops */
    void *emb_in, *emb_x, *xf, *emb_out, *logit, *dxf, *demb;
    void *pp_rx; /* a stage output (or its gradient) from the neighbouring stage */
    /* layout maps */
    hn_map m_tq, m_tk;         /* TOK: token-major Q / K,V <-> attention side */
    hn_map m_pq, m_pk, m_uk;   /* ULY: pack Q(O,dO) / K,V heads for the all-to-all; unpack dK, dV (replicas summed) */
    hn_map m_aq, m_ak;         /* ULY: all-to-all receive <-> attention side (Q / K,V heads) */
    hn_map m_emb;              /* embedding rows of this rank's tokens */
} hn;

/* ------------------------------------------------------------- checking */

/* Every CUDA, cuBLAS and NCCL call is checked: HX_OK, or HX_FAIL after
 * naming the call, where it is and the library's message (hx_fail). */
int hn_cuda_check(cudaError_t e, const char *what, const char *file, int line);
int hn_k_check(kern_cuda_status s, const char *what, const char *file, int line);
#define HN_CUDA(call) hn_cuda_check((call), #call, __FILE__, __LINE__)
#define HN_K(call) hn_k_check((call), #call, __FILE__, __LINE__)

/* ------------------------------------------------ memory (hx_nccl_mem.c) */

/* p advanced by `elems` elements of the run's type */
static inline void *hn_at(const hn *H, const void *p, int64_t elems) { return (char *)p + elems * H->es; }
/* zeroed device memory, freed by hn_close; NULL (reason printed) on failure */
void *hn_dalloc(hn *H, int64_t bytes, const char *what);
/* a device slab: carve run twice as on the host (hx_slab), over one
 * hn_dalloc; pieces 256-byte aligned, as cudaMalloc's */
int hn_slab_carve(hx_ctx *c, const char *what, hx_carve_fn carve);
static inline void *hn_slab_ct(const hn *H, hx_slab *s, int64_t n) { return hx_slab_take(s, n * H->es); }
int hn_upload_ct(const hn *H, void *dst, const float *src, int64_t n);   /* rounded to the run's type */
int hn_download_ct(const hn *H, float *dst, const void *src, int64_t n); /* widened to float32 */
int hn_ev_get(hn *H, cudaEvent_t *ev);                  /* the pool's next event */
/* the compute stream waits for `ev`; the wait's length is added to *acc
 * when the op's events are read (hn_exec) */
int hn_wait_timed(hn *H, cudaEvent_t ev, double *acc);
/* rev: the inverse layout change (one source per chunk only) */
int hn_map_run(const hn *H, const hn_map *m, int rev, void *dst, kern_cuda_dtype dt, const void *src,
               kern_cuda_dtype st);
int hn_maps_build(hx_ctx *c);

/* ----------------------------------------------- ops (hx_nccl_layer.c) */

int hn_gemm(const hn *H, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const void *a, int64_t lda,
            const void *b, int64_t ldb, float beta, void *cc, int64_t ldc);
/* A linear layer's GEMM (op: the plan op it belongs to): in FP8 where the
 * model library says the op runs FP8 (uly_op_fp8 of the run's workload),
 * with `grad` naming the operand that is a gradient (HN_GRAD_A, _B: E5M2,
 * the hybrid format; the others E4M3); hn_gemm otherwise. */
enum { HN_GRAD_NONE = 0, HN_GRAD_A = 1, HN_GRAD_B = 2 };
int hn_linear(hx_ctx *c, const uly_op *op, int grad, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
              const void *a, int64_t lda, const void *b, int64_t ldb, float beta, void *cc, int64_t ldc);
/* --dtype fp8: a usage refusal (HX_USAGE, every rank alike) where a GPU
 * has no FP8 tensor cores or a GEMM's dimensions are not what the FP8 GEMM
 * takes (multiples of 16); HX_OK otherwise */
int hn_fp8_prepare(hx_ctx *c);
/* --dtype fp8: the check's tolerance and its reason (hx_nccl_layer.c) */
void hn_fp8_tolerance(hx_ctx *c);
static inline int64_t hn_f1l(const hx_ctx *c) { return c->m.swiglu ? 2 * c->fl : c->fl; }
extern const hx_handler hn_layer_handlers[ULY_OPT_COUNT]; /* layer, model, comm ops */

/* ------------------------------------------ attention (hx_nccl_attn.c) */

extern const hx_handler hn_attn_handlers[ULY_OPT_COUNT];  /* attention and the ring transfers fused into it */
static inline int hn_ringed(const hx_ctx *c) { return c->r > 1; }
void hn_attn_workspaces(hx_ctx *c);     /* the sizes of the largest workspaces the attention calls use */

#endif
