/* internal.h: helpers shared by the model's files; not installed.
 * Checked integer arithmetic (sizes must never wrap) and the op emitters the
 * strategy files use to describe one transformer layer. */
#ifndef ULY_INTERNAL_H
#define ULY_INTERNAL_H

#include "ulysim.h"

static inline int64_t uly_gcd(int64_t a, int64_t b)
{
    while (b) { int64_t t = a % b; a = b; b = t; }
    return a;
}

/* Everything a strategy needs while it emits ops, derived once per plan. */
typedef struct uly_bctx {
    const uly_model *m;
    const uly_workload *w;
    const uly_cluster *c;
    const uly_layout *l;
    uly_plan *p;
    uly_reason *reasons;
    int *n_reasons;
    int64_t beta;        /* bytes per element of activations and comm */
    int64_t b;           /* micro-batch */
    int overflow;        /* a size product overflowed, or the plan is full */
} uly_bctx;

/* Recompute modes the layer driver passes to a strategy's attention. Full
 * recompute needs none: the driver copies the forward ops into backward. */
enum { ULY_RECOMP_NONE = 0, ULY_RECOMP_SELECTIVE = 2 };

static inline void uly_bctx_init(uly_bctx *x, const uly_model *m, const uly_workload *w,
                                 const uly_cluster *c, const uly_layout *l, uly_plan *p,
                                 uly_reason *reasons, int *n_reasons)
{
    x->m = m; x->w = w; x->c = c; x->l = l; x->p = p;
    x->reasons = reasons; x->n_reasons = n_reasons;
    x->beta = uly_dtype_bytes(w->dtype);
    x->b = w->micro_batch;
    x->overflow = 0;
}

void uly_reason_add(uly_bctx *x, uly_reason_code code, int fatal, double v0, double v1, double v2);
int uly_has_fatal(const uly_bctx *x);

/* Checked product of n factors; 0 (and x->overflow) on overflow or a
 * negative factor. Inline so constant-length products unroll. */
static inline int64_t uly_prod(uly_bctx *x, int n, const int64_t *f)
{
    int64_t acc = 1;
    for (int i = 0; i < n; i++) {
        if (f[i] < 0 || __builtin_mul_overflow(acc, f[i], &acc)) {
            x->overflow = 1;
            return 0;
        }
    }
    return acc;
}
#define ULY_PROD(x, ...) uly_prod((x), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

/* Appends an op; returns a scratch op (and marks overflow) when the plan is full. */
uly_op *uly_emit(uly_bctx *x, uly_op_type type, uly_phase ph, uly_op_kind kind, int recompute);
/* (m x k) times (k x n): 2mnk FLOPs times mult (2 for a backward's dgrad + wgrad). */
uly_op *uly_emit_gemm(uly_bctx *x, uly_op_type type, uly_phase ph, int recompute,
                      double m, double n, double k, double mult);
uly_op *uly_emit_elem(uly_bctx *x, uly_op_type type, uly_phase ph, int recompute, double bytes);
/* A collective: bytes_sent per rank over all steps; elems in the rank's input buffer. */
uly_op *uly_emit_comm(uly_bctx *x, uly_op_type type, uly_phase ph, int recompute, uly_coll coll,
                      uly_group g, int64_t bytes_sent, int64_t elems, int steps);
/* Attention of q query rows against kv key rows per block, `blocks` blocks,
 * for `heads` heads; frac: average fraction of score entries computed (0.5
 * causal); crit: critical rank's work over the average. Flash kernels count
 * 4qkvd per head forward and 2.5x that backward; materialised ones 2x. */
double uly_score_pass_bytes(const uly_bctx *x, int backward);
uly_op *uly_emit_attn(uly_bctx *x, uly_op_type type, uly_phase ph, int recompute,
                      int64_t heads, int64_t q, int64_t kv, int blocks, double frac, double crit,
                      int flash, int backward);

/* The transformer layer around a strategy's attention section. */
typedef struct uly_layer_hooks {
    int64_t gemm_tokens;  /* rows of this rank's projection GEMMs per sequence */
    int64_t norm_tokens;  /* rows of its norms and residuals */
    int64_t t;            /* weight split */
    int64_t kv_heads;     /* KV heads the QKV projection produces over all t ranks (0: the model's k) */
    /* attention section: input after qkv, output before out_proj */
    void (*attn_fwd)(uly_bctx *x, int recomp, void *ctx);
    void (*attn_bwd)(uly_bctx *x, void *ctx);
    /* optional: comm around the GEMM regions (Megatron SP); may be NULL */
    void (*enter_tp)(uly_bctx *x, uly_phase ph, int recomp, int which, void *tp_ctx); /* before qkv (0) / mlp (1) */
    void (*leave_tp)(uly_bctx *x, uly_phase ph, int recomp, int which, void *tp_ctx); /* after out_proj (0) / mlp (1) */
    void *ctx;            /* the attention hooks' */
    void *tp_ctx;         /* the enter/leave hooks' */
} uly_layer_hooks;

/* Emits forward, the recompute pass (full: whole layer; selective: the
 * attention's compute), then backward, in the order they run. */
void uly_layer_emit(uly_bctx *x, const uly_layer_hooks *h);

/* KV heads a head-splitting group of degree u (Ulysses u, TP t) needs, of a
 * group holding k KV heads for a query heads: k if u | k, u if k | u (each
 * KV head replicated), else a (KV expanded to MHA); records the assumption
 * as a reason. */
int64_t uly_kv_eff(uly_bctx *x, int64_t k, int64_t a, int64_t u);

/* Checks that `heads` query heads split `degree` ways (Ulysses u, TP t). */
void uly_check_heads(uly_bctx *x, int64_t heads, int64_t degree);
/* Checks N divisible by cp t (2 cp t with the zigzag causal split): the
 * context-parallel ranks' shares, each split t ways by sequence parallelism. */
void uly_check_seq(uly_bctx *x, int64_t cp, int64_t t, int zig);

/* Critical rank's causal work over the average for a split of `ways`. */
double uly_causal_crit(const uly_workload *w, int64_t ways);

/* Params of the attention and MLP blocks of one layer. */
double uly_attn_params(const uly_model *m);
double uly_mlp_params(const uly_model *m);

#endif
