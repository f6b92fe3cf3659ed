/* hx.h: ulyharness internals (prefix hx_). The harness executes the plan that
 * libulysim builds, op by op, with real MPI collectives and real kernels,
 * counts the bytes it hands to MPI, times every op and checks the result
 * against a single-rank float64 reference. Not installed; one program. */
#ifndef HX_H
#define HX_H

#include <stdint.h>
#include <stdio.h>
#include <mpi.h>

#include "kern_attn.h"
#include "ulysim.h"

#define HX_TRACE_FORMAT "ulysim-trace"
#define HX_TRACE_VERSION 2
#define HX_DTYPE_DEFAULT ULY_DTYPE_COUNT /* hx_opts.dtype not given: the backend's own (mpi fp32, nccl bf16) */

/* ------------------------------------------------------------- options */

typedef struct hx_opts {
    const char *strategy;  /* contract name */
    int64_t ulysses, ring, tp; /* 0 = pick (the strategy's degree = P / (dp pp)) */
    int64_t pp;            /* pipeline stages (1): the plan's outermost group */
    int64_t dp;            /* 0 = what remains */
    int64_t seq;           /* 0 = 128 * P */
    int64_t heads, kv_heads, head_dim, ffn, batch, vocab, layers;
    int swiglu;
    /* mixture of experts (hx_moe.c): experts 0 = dense; every layer MoE
     * with topk of experts experts moe_ffn wide, shared_ffn of shared
     * experts (the layer's MLP ops; 0: none), ep x etp expert ranks */
    int64_t experts, topk, moe_ffn, shared_ffn, ep, etp;
    uly_moe_dispatcher moe_dispatcher;
    int causal;
    uly_split split;
    uly_recompute recompute;
    int zero;
    const char *kernel;    /* "ref" | "flash" */
    int threads;           /* OpenBLAS and flash worker threads per rank */
    int warmup, reps;
    int sync_pass;         /* 1: one barrier per pass, ops run back to back (--sync pass);
                            * 0: a barrier before every op (--sync op) */
    const char *out;       /* trace file; NULL = none */
    const char *cluster;   /* preset name or JSON path for the trace header */
    uint64_t seed;
    double timeout_s;      /* watchdog: an op making no progress this long aborts the job */
    int microbench;
    int64_t mb_min, mb_max; /* micro-benchmark message sizes (bytes) */
    int print_plan;
    int quiet;
    /* hidden fault and error injection (tests) */
    int inject_error;      /* perturb one element of the distributed result */
    int inject_error_row;  /* perturb every element of one row of dQ (every head of one token) */
    int inject_fail_rank, inject_fail_op;   /* -1 = off; op -1 = first comm op */
    int inject_hang_rank, inject_hang_op;
    int inject_kill_rank, inject_kill_op;
    int inject_stop_check; /* rank 0 stops itself (SIGSTOP) in the reference check, the others waiting */
    int check;             /* --check: HX_CHECK_AUTO, _FULL, _SAMPLED or _NONE */
    uint64_t check_seed;   /* --check-seed: the sample's seed; 0 = drawn per run */
    int no_check;          /* --check none: skip the reference (benchmarks) */
    /* what executes the plan (see hx_backend below) */
    const char *backend;   /* "mpi" (default) | "nccl" */
    const struct hx_backend *be; /* chosen by main from `backend`; NULL = mpi */
    uly_dtype dtype;       /* the run's element type; HX_DTYPE_DEFAULT until the backend picks */
} hx_opts;

/* --check: the float64 reference over every head and row; over a sample of
 * them (hx_check.c says what a sample can and cannot catch); none; or auto:
 * full while the reference's attention costs at most HX_CHECK_FULL_FLOPS,
 * else sampled. */
enum { HX_CHECK_AUTO = 0, HX_CHECK_FULL, HX_CHECK_SAMPLED, HX_CHECK_NONE };
#define HX_CHECK_FULL_FLOPS 1e10

/* Parses argv; returns 0, 1 (printed help or version: exit 0) or 2 (bad usage, reason printed by rank 0). */
int hx_args_parse(int argc, char **argv, hx_opts *o, int rank);
/* --out writable (rank 0 checks, every rank learns): HX_OK or HX_USAGE. */
int hx_args_out_check(const hx_opts *o);
void hx_args_defaults(hx_opts *o);
/* Bad usage, found by the parser or a backend's configure: rank 0 prints
 * "ulyharness: <reason>" on stderr (the other ranks would repeat it);
 * returns 2, the exit status of bad usage. */
int hx_args_reject(int rank, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------- status */

/* Every harness function that can fail returns a status: HX_OK (0), or
 *   HX_FAIL   a failure on this rank (an MPI, CUDA or kernel error, memory,
 *             an internal inconsistency): its reason is printed once, where
 *             it is found, by hx_fail; the caller passes the status up;
 *   HX_USAGE  bad usage or an impossible configuration: one line from rank
 *             0 (hx_args_reject); every rank finds it;
 *   HX_SKIP   nothing to run here (no GPU): every rank finds it.
 * Only main acts on them: HX_FAIL aborts the MPI job (hx_job_abort: the
 * other ranks may be blocked in a collective), the others end the run
 * normally with that exit status. */
enum { HX_OK = 0, HX_FAIL = 1, HX_USAGE = 2, HX_SKIP = 77 };
/* Prints "ulyharness: rank R: <reason>" on stderr; returns HX_FAIL. */
int hx_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Returns from the calling function with the status of expr unless it is HX_OK. */
#define HX_TRY(expr)                                                                                                 \
    do {                                                                                                             \
        const int hx_try_rc_ = (expr);                                                                               \
        if (hx_try_rc_) return hx_try_rc_;                                                                           \
    } while (0)

/* ------------------------------------------------------- MPI and faults */

/* After MPI_Init: MPI_ERRORS_RETURN on MPI_COMM_WORLD, and this process's
 * rank and the job's size, which hx_world_rank() and hx_world_size() return. */
int hx_proc_init(void);
int hx_world_rank(void);
int hx_world_size(void);

/* Ends the whole job after a failure: removes this rank's temporary trace
 * and calls MPI_Abort, which makes every rank exit non-zero (exit status
 * `code` where MPI is not running). Called by main and by the watchdog. */
void hx_job_abort(int code) __attribute__((noreturn));
/* An MPI return code: HX_OK, or HX_FAIL naming the call and the MPI error. */
int hx_mpi_check(int rc, const char *what, const char *file, int line);
void hx_in_mpi(int in); /* for the watchdog's message: blocked in MPI, or hung outside it */
int hx_mpi_done(int rc, const char *what, const char *file, int line); /* hx_in_mpi(0), then hx_mpi_check */
/* A checked MPI call, marked as inside MPI for the watchdog: HX_OK or HX_FAIL. */
#define HX_MPI(call) (hx_in_mpi(1), hx_mpi_done((call), #call, __FILE__, __LINE__))
void *hx_alloc(size_t bytes, const char *what); /* zeroed, 64-byte aligned; NULL (reason printed) on failure */
float *hx_falloc(int64_t n, const char *what);

/* A slab: one allocation carved into the buffers of one lifetime class
 * (hx_mem.c). The same carving code runs twice: while base is NULL, each
 * hx_slab_take only adds its piece to `used` (and returns NULL); once the
 * memory is there (hx_slab_start), the same calls hand the pieces out. */
typedef struct hx_slab {
    char *base;   /* NULL while sizing */
    size_t used;  /* bytes carved so far (while sizing: needed) */
    size_t size;  /* bytes at base */
    size_t align; /* of every piece; 0: 64 */
    size_t redzone; /* bytes left after every piece (poisoned under AddressSanitizer) */
} hx_slab;
void *hx_slab_take(hx_slab *s, int64_t bytes);
static inline float *hx_slab_f(hx_slab *s, int64_t n)
{
    return hx_slab_take(s, n > INT64_MAX / 4 ? INT64_MAX : n * (int64_t)sizeof(float)); /* saturates, as hx_slab_take */
}
void hx_slab_start(hx_slab *s, void *base); /* after sizing: carve again at base (s->used bytes, zeroed) */
int hx_slab_carved(const hx_slab *s, const char *what); /* HX_FAIL if carving took other than it sized */
void hx_slab_free(hx_slab *s);              /* a host slab (hx_slab_carve); a zeroed slab stays reusable */

/* The watchdog: a thread that aborts the job when the current op has made
 * no progress for timeout_s seconds, naming this rank and the op (progress:
 * a beat, or the main thread computing outside MPI; see hx_mpi.c). */
int hx_watchdog_start(double timeout_s);
void hx_watchdog_op_time(double seconds); /* an op's time: waits in MPI allow for a peer's as long */
void hx_beat(int op_id, const char *name); /* progress: entering op (or phase) */
void hx_wait_for(int world_rank);          /* the rank waited on inside MPI (named if it hangs); -1: none */
/* Rank 0's long local work while the others wait on it: rank 0 calls
 * hx_alive_tick from its loops; then every rank calls
 * hx_bcast_after_root_work (buf holds n + 1 doubles, the last one its own). */
void hx_alive_tick(void);
int hx_bcast_after_root_work(double *buf, int n);

/* A group communicator and where this rank sits in it. */
typedef struct hx_group {
    MPI_Comm comm;
    int size, rank;
    int next, prev; /* ring neighbours */
} hx_group;

/* A communicator of MPI_COMM_WORLD's ranks of one color, ordered by key,
 * errors returned, and this rank's place in it: HX_OK or HX_FAIL. */
int hx_group_make(hx_group *g, int color, int key);

/* Byte-counting collective wrappers. Every count is what this rank hands to
 * MPI; *bytes grows by what leaves the rank: alltoall count*(p-1)*4,
 * allgather count*(p-1)*4, reduce-scatter block*(p-1)*4, the ring
 * all-reduce (reduce-scatter then all-gather) 2*block*(p-1)*4, send count*4. */
int hx_alltoall(const hx_group *g, const float *send, float *recv, int64_t count, int64_t *bytes);
int hx_allgather(const hx_group *g, const float *send, float *recv, int64_t count, int64_t *bytes);
int hx_reduce_scatter(const hx_group *g, const float *send, float *recv, int64_t block, int64_t *bytes);
int hx_allreduce_ring(const hx_group *g, float *buf, float *tmp_block, int64_t n, int64_t *bytes);
int hx_isend(const hx_group *g, const float *buf, int64_t count, int dest, int tag, MPI_Request *req,
             int64_t *bytes);
int hx_irecv(const hx_group *g, float *buf, int64_t count, int src, int tag, MPI_Request *req);
int hx_sendrecv(const hx_group *g, const float *send, int dest, float *recv, int src, int64_t count, int tag,
                int64_t *bytes);
int hx_waitall(int n, MPI_Request *reqs);
int hx_count(int64_t n, const char *what, int *count); /* *count = n as MPI's int count, or HX_FAIL */

double hx_now(void);
const char *hx_basename(const char *path); /* the part after the last '/' */

/* ------------------------------------------------------------- the run */


/* A contiguous run of positions of one sequence, stored head-major
 * [H][len][d] at row offset `base` of an attention-side buffer. */
typedef struct hx_seg {
    int64_t batch, off, len, base;
} hx_seg;

#define HX_MAX_SEGS 64
typedef struct hx_segs {
    int n;
    int64_t rows; /* sum of len */
    hx_seg s[HX_MAX_SEGS];
} hx_segs;

/* per-op measurements */
typedef struct hx_opstat {
    int64_t bytes;       /* bytes handed to MPI that leave the rank, pass 0 */
    int64_t bytes_pass;  /* the same, in the pass being executed */
    double t_pass;       /* time in the pass being executed (a transfer: wait + transfer) */
    double w_pass;       /* of t_pass, the time spent waiting for the peers to arrive (comm ops) */
    double *t;           /* per timed rep */
    double *w;           /* per timed rep: w_pass */
    int done;            /* executed this pass (fused ring comm ops) */
    int fp8_gemms;       /* GEMM calls the op ran in FP8 in a pass (the nccl backend's --dtype fp8) */
} hx_opstat;

struct hx_ctx;
/* executes one op of the plan: HX_OK or HX_FAIL */
typedef int (*hx_handler)(struct hx_ctx *c, const uly_op *op);

typedef struct hx_ctx {
    hx_opts o;
    const uly_strategy *strat;
    uly_model m;
    uly_workload w;
    uly_cluster cl;
    uly_layout l;
    uly_plan plan;
    uly_reason reasons[ULY_MAX_REASONS];
    int n_reasons;
    char cluster_src[512];  /* where the cluster profile came from */
    void *cluster_json;     /* cJSON * of the preset file (rank 0), or NULL */
    int cluster_adjusted;   /* gpus_per_node raised to the rank count */
    int64_t cluster_orig_gpn, cluster_orig_nodes;

    hx_group g[ULY_GROUP_COUNT];
    int P;
    uly_exec_mode mode;
    const struct kern_attn_impl *kern;

    /* shapes */
    int64_t b, N, a, k, d, h, f, f1, V;
    int64_t u, r, t, dp;
    int ui, ri, ti, di;      /* coordinates */
    int zig;                 /* zigzag causal split of the ring part */
    int64_t T;               /* token-side tokens per sequence on this rank: N/(u r t), N for plain TP */
    int64_t Tg;              /* GEMM-side tokens per sequence: the CP rank's N/(u r) (t T) under SP, else T */
    int64_t Rt, Rg;          /* rows: b*T, b*Tg */
    int sp;                  /* 1: the GEMM side gathers the TP group's token rows (Megatron SP, also inside CP) */
    int64_t gq, gkv;         /* GEMM-side heads of this TP rank (query, kv): a/t and k/t (or one replica) */
    int64_t Hq, Hkv;         /* attention-side heads (query, kv) */
    int64_t kv_eff;          /* the GEMM side's KV heads after Ulysses replication (gkv without Ulysses) */
    int64_t qc, kc;          /* GEMM-side Q and K (=V) columns */
    int64_t hq0, hk0;        /* first global query head / TP-replicated kv head of the GEMM side */
    int64_t fl;              /* f / t: local FFN width (per half for SwiGLU) */
    int64_t *tpos, *tbat;    /* [Rt] token-side row -> position, batch */
    int64_t *gpos, *gbat;    /* [Rg] GEMM-side row -> position, batch */
    hx_segs qs;              /* attention-side query segments (own ring part) */
    int64_t *uly_map;        /* ULY: [u][Rg] peer's GEMM-side row -> attention-side row index (seg base + idx) */
    int64_t *g2a;            /* TOK, AG, TP: [Rg] GEMM-side row -> attention-side row */

    /* parameters: flat layout [Wqkv | Wo | W1 | W2 | g1 | g2 | Wr] of this TP
     * rank (Wr: a MoE layer's router, h x experts; W1, W2 its shared experts) */
    int64_t off_wqkv, off_wo, off_w1, off_w2, off_g1, off_g2, off_wr, n_real;
    int64_t layer_flat, layer_sh, model_flat, model_sh, zg; /* ZeRO sizes (plan's accounting) */
    int64_t n_alloc;
    float *wt, *gwt;         /* weights and grads (model-level prefix = this layer) */
    float *wshard, *gshard;  /* ZeRO-3 layer shard, ZeRO-2/3 layer grad shard */
    float *gmshard, *wmshard;/* ZeRO-1/2 model-level shards */
    float *master, *adam_m, *adam_v;
    int64_t n_opt;
    float *rs_tmp;           /* all-reduce scratch block */
    int64_t rs_tmp_n;

    /* token side [Rt][h] */
    float *X, *Y1, *X1, *Y2, *G, *dY1, *dX1, *dY2, *dX, *rms1, *rms2;
    /* GEMM side */
    float *Y1g, *Y2g, *Zg, *Ug, *Ag, *Mg, *Gg, *dX1g, *dAg, *dUg, *dY2g, *dY1g;
    float *Qg, *Kg, *Vg, *Og, *dOg, *dQg, *dKg, *dVg; /* [Rg][qc], [Rg][kc] */
    float *Z, *M;            /* token side results of out_proj / mlp_down (TP: after RS) */
    /* attention side */
    float *qa, *oa, *lsea, *doa, *dqa;       /* [qs.rows][Hq][d] */
    float *kv_own, *dkv_own;                 /* [K | V], [dK | dV]: [2][rows][Hkv][d] */
    int64_t kv_rows;                         /* rows of one KV block */
    float *rot[2], *accs[2], *accr[2];       /* ring double buffers */
    float *tmp_o, *tmp_lse;
    /* ring requests in flight while the attention blocks run: the kernels'
     * loops call hx_progress between blocks, so that MPI (which has no
     * progress thread here) moves their bytes while attention computes */
    MPI_Request *pend;
    int n_pend;
    uint8_t *has;                            /* per q seg: accumulator filled */
    /* a2a buffers (ULY) */
    float *s_q, *r_q, *s_k, *r_k, *s_v, *r_v, *s_o, *r_o;
    float *s_do, *r_do, *s_dq, *r_dq, *s_dk, *r_dk, *s_dv, *r_dv;
    /* AG: gathered K, V [r][Rt][kc] (the full attention side is kv_own over fulls), the dK, dV to reduce */
    float *kg_all, *vg_all, *rs_dk_in, *rs_dv_in;
    hx_segs fulls;
    /* RSA: full K, V [r][Rt][kc]; scores [b][a][T][N] */
    float *k_all, *v_all, *S, *dP, *dk_all, *dv_all;
    /* per-model ops */
    int64_t lt, lv;          /* logit tokens and vocab columns */
    float *emb_in, *emb_x, *xf, *emb_out, *logit, *dxf, *demb;
    int64_t *tok_ids;
    float *pp_tx[2], *pp_rx; /* stage transfers: what this stage sends forward [backward], what it receives */

    /* execution */
    hx_opstat st[ULY_PLAN_MAX_OPS];
    hx_handler handler[ULY_PLAN_MAX_OPS];
    int fuse_kv[ULY_PLAN_MAX_OPS];  /* attention op id -> its overlapped ring_kv op id, or -1 */
    int fuse_dkv[ULY_PLAN_MAX_OPS]; /* attention op id -> its ring_dkv op id, or -1 */
    int order[ULY_PLAN_MAX_OPS]; /* execution order (plan ids) */
    int n_order;
    double *times;               /* the timed reps of every op (hx_opstat.t points into it) */
    int pass;                    /* 0: checked pass; then warm-up, then timed */
    int adam_step;               /* optimizer steps taken so far (Adam's bias correction) */
    int timed_rep;               /* -1 when not timed */
    int inject_fail_id, inject_hang_id, inject_kill_id;

    /* the check: its resolved mode (full, sampled or none), its sample's
     * seed and what it compares (hx_sample_make: every head and row when full) */
    int check_mode;
    uint64_t check_seed;
    struct hx_sample {
        int64_t n_q, n_kv;    /* checked query heads, and the KV heads they read */
        int64_t *q, *kv;      /* sorted head indices */
        uint8_t *q_on, *kv_on;/* [a], [k]: 1 where checked */
        int64_t n_rows;       /* checked rows (global b*N + position) of dX: b*N when full */
        int64_t *rows;        /* sorted; NULL when full (every row) */
    } sample;

    /* results */
    double err[6];               /* O, dQ, dK, dV, dX (and a MoE layer's routed experts' output) max relative error */
    double tol;
    const char *tol_reason;
    double tol_moe;              /* the MoE output's (hx_moe_tol) */
    const char *tol_moe_reason;
    int check_ok, bytes_ok;
    double t_total;

    /* the host memory of the buffers above, by lifetime (hx_mem.c) */
    struct {
        hx_slab layout, params, tokens, attn;
    } mem;

    struct hx_moe *moe;          /* a MoE layer's state (hx_moe.c); NULL for a dense model */

    const struct hx_backend *be; /* never NULL after hx_setup */
    void *be_state;              /* the backend's own state (open made it; main sets it after hx_setup) */
} hx_ctx;

/* The offset of (row ar, head hh) in an attention-side buffer over the
 * segments ss: segment-major, each [Hh][len][d]. */
static inline int64_t hx_att_off(const hx_segs *ss, int64_t ar, int64_t hh, int64_t Hh, int64_t d)
{
    int i = 0;
    while (i + 1 < ss->n && ss->s[i + 1].base <= ar) i++;
    const hx_seg *s = &ss->s[i];
    return (s->base * Hh + hh * s->len + (ar - s->base)) * d;
}

/* The descriptor of an attention kernel call (the CPU's kern_attn_desc or
 * the GPU's kern_cuda_attn_desc, whose fields these are) for the query
 * segment q over the key segment kv; the caller adds the kernel's own
 * options. Needs <math.h> and <string.h>. */
#define HX_ATTN_DESC(ds, c, q, kv)                                                                                   \
    do {                                                                                                             \
        memset(&(ds), 0, sizeof(ds));                                                                                \
        (ds).heads = (int)(c)->Hq;                                                                                   \
        (ds).kv_heads = (int)(c)->Hkv;                                                                               \
        (ds).n_q = (int)(q)->len;                                                                                    \
        (ds).n_kv = (int)(kv)->len;                                                                                  \
        (ds).d = (int)(c)->d;                                                                                        \
        (ds).scale = (float)(1.0 / sqrt((double)(c)->d));                                                            \
        (ds).causal = (c)->w.causal != 0;                                                                            \
        (ds).q_off = (q)->off;                                                                                       \
        (ds).kv_off = (kv)->off;                                                                                     \
    } while (0)

/* A (query, key) segment pair with every score masked: two sequences of the
 * batch, or keys wholly after the queries under the causal mask. Both
 * backends' attention skips it. */
static inline int hx_seg_pair_masked(const hx_ctx *c, const hx_seg *q, const hx_seg *kv)
{
    return q->batch != kv->batch || (c->w.causal && kv->off > q->off + q->len - 1);
}

/* ------------------------------------------------------------ backends */

/* What executes the plan. Both are launched by MPI, which also carries the
 * plan's group communicators, the check and the trace; they differ in where
 * the data lives and what moves it:
 *   mpi   host buffers, CPU kernels, Open MPI collectives (hx_exec.c);
 *   nccl  one GPU per rank, CUDA kernels, cuBLAS, NCCL (hx_nccl*.c; when
 *         ulyharness is built without CUDA/NCCL, hx_nccl_stub.c refuses it).
 * main picks one from --backend; NULL members are skipped. Functions return
 * a status (HX_OK ...). */
typedef struct hx_backend {
    const char *name;
    int host_buffers;     /* hx_setup allocates the CPU executor's buffers */
    unsigned exec_modes;  /* bit (1u << m) for each uly_exec_mode m it runs */
    /* validates and completes the options (dtype); HX_OK, or HX_USAGE with one line from rank 0 */
    int (*configure)(hx_opts *o, int rank);
    /* before the plan is built (devices): HX_OK, HX_USAGE or HX_SKIP (nothing to run
     * here, e.g. no GPU: exit 77, which ctest counts as skipped), the same on every
     * rank, or HX_FAIL.
     * *state: the backend's state, which main hands to the context (be_state) */
    int (*open)(const hx_opts *o, void **state);
    /* after hx_setup: buffers, communicators, hx_schedule */
    int (*prepare)(struct hx_ctx *c);
    /* its handlers by op type: the layer's (and the per-model, ZeRO and
     * optimizer ops'), attention's, a MoE layer's; a NULL table or entry: none */
    const hx_handler *handlers[3];
    /* runs c->handler[id] and sets *seconds to its time; fused ring transfer
     * ops' t_pass (their exposed time) are set when it returns */
    int (*exec)(struct hx_ctx *c, int id, double *seconds);
    int (*fetch)(struct hx_ctx *c); /* pass 0's results to the host buffers hx_check reads */
    void (*describe)(const struct hx_ctx *c, void *header); /* adds to the trace header (a cJSON *) */
    int (*close)(struct hx_ctx *c); /* before MPI_Finalize; frees be_state */
} hx_backend;

extern const hx_backend hx_backend_mpi, hx_backend_nccl;

/* Does the backend run strategies of this exec mode? */
static inline int hx_backend_runs(const hx_backend *be, uly_exec_mode m)
{
    return (unsigned)m < ULY_EXEC_COUNT && ((be->exec_modes >> m) & 1u);
}

/* setup: plan, communicators, shapes, buffers, weights (collective);
 * HX_OK, HX_USAGE (bad input, reason printed on rank 0) or HX_FAIL */
int hx_setup(hx_ctx *c, const hx_opts *o);
/* memory (hx_mem.c): a host slab carved by carve (run twice: sizing, then
 * handing out); the layout slab's carving; parameters and the CPU
 * executor's buffers with their seeded values; everything freed at the end */
typedef void (*hx_carve_fn)(hx_ctx *c, hx_slab *s);
int hx_slab_carve(hx_ctx *c, hx_slab *s, const char *what, hx_carve_fn carve);
void hx_layout_carve(hx_ctx *c, hx_slab *s);
int hx_params_setup(hx_ctx *c);
int hx_buffers_setup(hx_ctx *c);
int hx_release(hx_ctx *c); /* the slabs and the group communicators (collective) */
/* execution order, handlers, fused ops, injection targets; HX_FAIL names a
 * plan op the backend has no handler for */
int hx_schedule(hx_ctx *c);
/* runs pass 0 (checked), warm-up and timed passes */
int hx_run(hx_ctx *c);
/* executes one op of the plan (dispatch by type) */
int hx_exec_op(hx_ctx *c, int id);
/* check against the float64 reference on rank 0: c->check_ok (the same on every rank) */
int hx_check(hx_ctx *c);
/* the check's mode from --check and the reference's cost, its seed (rank 0
 * draws one unless --check-seed gave it) and its sample: HX_OK or HX_FAIL */
int hx_check_plan(hx_ctx *c);
void hx_sample_free(struct hx_sample *s);
/* bytes the check allocates: *root on rank 0 (the float64 reference and the
 * assembled tensors), *pieces on every rank (what it sends rank 0, which
 * holds every rank's at once) */
void hx_check_bytes(const hx_ctx *c, double *root, double *pieces);
/* before any buffer that scales with the run: what this run will allocate,
 * summed over the ranks of each node, against the memory available there
 * (MemAvailable, or the cgroup's room where a limit is set); HX_USAGE with
 * one line naming both when it does not fit */
int hx_mem_check(hx_ctx *c);
/* The same for --microbench's buffers of --mb-max bytes. */
int hx_mem_check_microbench(const hx_opts *o);
/* sizes the parameters (counts only; hx_params_setup allocates them) */
void hx_params_size(hx_ctx *c);
/* bytes a host slab carved by carve needs (a sizing run of it) */
size_t hx_slab_need(hx_ctx *c, hx_carve_fn carve);
struct hx_trace;
/* what --microbench measured, for its one-line result (rank 0) */
typedef struct hx_mb_result {
    int points, collectives;      /* points written, collectives measured */
    int64_t min_bytes, max_bytes; /* the smallest and largest size of a point */
    double overlap;               /* the ring hop's overlap with compute */
} hx_mb_result;
/* the table (not with --quiet); its lines also to the trace */
int hx_microbench(const hx_opts *o, struct hx_trace *trace, hx_mb_result *res);
void hx_print_plan(const hx_ctx *c, FILE *fp);

/* seeded inputs */
float hx_rand(uint64_t seed, uint32_t tensor, uint64_t i, uint64_t j);
enum { HX_T_X = 1, HX_T_G, HX_T_WQ, HX_T_WK, HX_T_WV, HX_T_WO, HX_T_W1, HX_T_W1U, HX_T_W2,
       HX_T_EMB, HX_T_TOK, HX_T_XF, HX_T_EOUT, HX_T_PP, HX_T_CHECK, HX_T_WR, HX_T_EW1, HX_T_EW1U, HX_T_EW2 };
float hx_weight(const hx_ctx *c, uint32_t tensor, int64_t row, int64_t col);
int64_t hx_token_id(const hx_ctx *c, int64_t i); /* the vocabulary id of this rank's token i (embedding) */
void hx_layer_io_seed(const hx_ctx *c, float *x, float *g); /* the layer's input and upstream gradient [Rt][h] */

/* The MLP's activation on rows x fl (SwiGLU: u holds [gate | up], 2 fl
 * wide; else GELU), and its backward: du from da and the saved u. */
void hx_act_fwd(int swiglu, int64_t rows, int64_t fl, const float *u, float *a);
void hx_act_bwd(int swiglu, int64_t rows, int64_t fl, const float *u, const float *da, float *du);

/* mixture of experts (hx_moe.c): the routed experts of a MoE layer, whose
 * model the options ask for (hx_moe_model: HX_OK or HX_USAGE, one line); its
 * groups, router, buffers and weights after the plan (hx_moe_setup:
 * collective); its handlers; the float64 reference of the routed experts on
 * rank 0 (hx_moe_ref_*: the output of rows [g0, g0 + n) of the b x N tokens
 * into out, their input gradient added to dY2); the tolerance of its check */
int hx_moe_model(hx_ctx *c, uly_model *m, uly_workload *w);
int hx_moe_setup(hx_ctx *c);
void hx_moe_free(hx_ctx *c);
double hx_moe_bytes(const hx_ctx *c); /* what hx_moe_setup allocates on this rank, at most (hx_mem_check) */
const float *hx_moe_out(const hx_ctx *c); /* [Rt][h] the routed experts' output; NULL for a dense model */
extern const hx_handler hx_moe_handlers[ULY_OPT_COUNT];
struct hx_moe_ref;
struct hx_moe_ref *hx_moe_ref_new(const hx_ctx *c);
void hx_moe_ref_rows(const hx_ctx *c, struct hx_moe_ref *R, const double *Y2, const double *G, int64_t g0, int64_t n,
                     double *out, double *dY2);
void hx_moe_ref_free(struct hx_moe_ref *R);
double hx_moe_ref_bytes(const hx_ctx *c);
void hx_moe_tol(hx_ctx *c);

/* layer pieces used by the executor and the reference */
extern const hx_handler hx_layer_handlers[ULY_OPT_COUNT]; /* layer, model, comm ops (hx_layer.c) */
extern const hx_handler hx_attn_handlers[ULY_OPT_COUNT];  /* attention, ring and RSA ops (hx_attn.c) */
hx_handler hx_backend_handler(const hx_backend *be, uly_op_type t); /* the handler of an op type, or NULL */
int hx_ring_fused(hx_ctx *c, const uly_op *op); /* ring_kv, ring_dkv: ran inside their attention op */
double hx_median(double *v, int n);          /* sorts v */

/* GEMM: row-major C = alpha op(A) op(B) + beta C; HX_OK or HX_FAIL */
int hx_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
             const float *b, int64_t ldb, float beta, float *cc, int64_t ldc);

/* attention-side helpers */
int64_t hx_seg_row(const hx_segs *ss, int64_t batch, int64_t pos); /* row of (batch, pos); -1 if none */
void hx_stage_qkv(hx_ctx *c);     /* after the qkv GEMMs */
void hx_stage_o_in(hx_ctx *c);    /* before out_proj: O token-major */
void hx_stage_do(hx_ctx *c);      /* after out_proj_bwd: dO to where attention reads it */
void hx_stage_dqkv_in(hx_ctx *c); /* before qkv_proj_bwd: dQ, dK, dV token-major */
void hx_seg_ring_part(const hx_ctx *c, int ring_rank, int64_t b, hx_segs *out);
int64_t hx_ring_part_pos(const hx_ctx *c, int ring_rank, int64_t idx);
/* GEMM-side row gr ([TP rank][batch][token]) of a CP rank: its sequence,
 * and its position on the CP rank at (ring rank, Ulysses rank) */
int64_t hx_row_batch(const hx_ctx *c, int64_t gr);
int64_t hx_row_pos(const hx_ctx *c, int ring_rank, int uly_rank, int64_t gr);

#endif
