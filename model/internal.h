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

/* A collective's links as NCCL's cost model reads them (network.c works
 * them out, nccl.c prices; docs/model.md, "NCCL's cost model"), B/s:
 * ring_bw the Simple ring's bus bandwidth (the slower of the in-node ring and
 * the group's NICs), tree_bw the tree graph's (NCCL raises its in-node speed
 * up to twice the network's on two nodes), intra_bw the in-node ring
 * bandwidth, net_bw the group's share of one node's NICs (0 inside a node);
 * nch NCCL's graph channels across nodes (0 inside a node), sm the compute
 * capability x 10. */
typedef struct uly_nccl_links {
    double ring_bw, tree_bw, intra_bw, net_bw, nch;
    int sm;
} uly_nccl_links;

/* All-gather, reduce-scatter, all-reduce: the fastest of NCCL's algorithm
 * and protocol candidates (nccl.c). */
double uly_nccl_coll_s(const uly_cluster *c, uly_coll coll, const uly_group_place *gp, double bytes_sent,
                       const uly_nccl_links *L);
/* Ring hops at bw per direction: LL for messages of 16 KiB or less, else Simple. */
double uly_nccl_hop_s(const uly_cluster *c, const uly_group_place *gp, double bytes_sent, int steps, double bw);

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

/* ULY_EINVAL with the reason formatted into why (may be NULL) (spec.c) */
__attribute__((format(printf, 3, 4))) uly_status uly_fail(char *why, size_t n, const char *fmt, ...);

void uly_reason_add(uly_bctx *x, uly_reason_code code, int fatal, double v0, double v1, double v2);
int uly_has_fatal(const uly_bctx *x);

/* Checked product of n factors into *out: 0 (and *out 0) on overflow or a
 * negative factor. Inline so constant-length products unroll. */
static inline int uly_prod_fits(int n, const int64_t *f, int64_t *out)
{
    /* flags gathered without a branch per factor: the product is a few
     * instructions, and a search runs millions of them */
    int64_t acc = 1, sign = 0;
    int bad = 0;
    for (int i = 0; i < n; i++) {
        sign |= f[i];
        bad |= __builtin_mul_overflow(acc, f[i], &acc);
    }
    if (__builtin_expect(bad | (sign < 0), 0)) {
        *out = 0;
        return 0;
    }
    *out = acc;
    return 1;
}

/* The checked product; 0 and x->overflow when it does not fit. */
static inline int64_t uly_prod(uly_bctx *x, int n, const int64_t *f)
{
    int64_t acc;
    if (__builtin_expect(!uly_prod_fits(n, f, &acc), 0)) x->overflow = 1;
    return acc;
}
/* A section's size that does not fit (see uly_emit_comm). */
#define ULY_SIZE_UNFIT (-1)

#define ULY_PROD(x, ...) uly_prod((x), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

/* The kernels behind a compute op (membound.c): per op type, the class of
 * kernel that moves its memory-bound bytes and how many kernels it
 * launches; attention's own counts, [flash][backward], per block. */
typedef struct uly_op_kernels_entry {
    uint8_t cls; /* uly_mb_class */
    uint8_t n;   /* kernels; 0 read as 1 */
} uly_op_kernels_entry;
extern const uly_op_kernels_entry uly_op_kernels_of[ULY_OPT_COUNT];
extern const uint8_t uly_attn_kernels_of[2][2];

/* FP8 training (fp8.c): per op type, whether it is a linear layer's GEMM
 * and whether the kernel producing the operand it quantizes writes FP8
 * itself (a norm, the MLP activation); the bytes per element of a cast by
 * recipe and its kernels; the share of the priced stage's layers kept in
 * bf16; the workload's FP8 fields checked. */
typedef struct uly_fp8_cast_entry {
    uint8_t linear, fused;
} uly_fp8_cast_entry;
extern const uly_fp8_cast_entry uly_fp8_cast_of[ULY_OPT_COUNT];
double uly_fp8_cast_bytes_per_elem(uly_fp8_recipe r, int fused_producer);
double uly_saved_gemm_input_bytes(const uly_workload *w, double beta);
int uly_fp8_cast_kernels(uly_fp8_recipe r, int fused_producer);
double uly_fp8_bf16_layer_frac(const uly_model *m, const uly_workload *w, const uly_plan *plan);
uly_status uly_fp8_check(const uly_workload *w, char *why, size_t n);
/* MLA's attention parameters with value heads v_head_dim wide (moe.c). */
double uly_mla_params(const uly_model *m, int64_t v_head_dim);
/* The MoE and MLA fields of a model (moe.c). */
uly_status uly_moe_model_check(const uly_model *m, char *why, size_t n);
/* The sliding window's fields (window.c). */
uly_status uly_window_model_check(const uly_model *m, char *why, size_t n);
/* FP8 training's GEMM ops' times, and attention's forward under
 * fp8_attention, into out[] (fp8_price.c), over the compute times a bf16
 * pricing of the plan kept there */
void uly_fp8_gemm_times(const uly_model *m, const uly_workload *w, const uly_cluster *c, const uly_plan *plan,
                        double *out);
/* uly_fp8_mem_eval's total (out of line: the memory term's rare path) */
double uly_fp8_mem_total(const uly_model *m, const uly_workload *w, const uly_plan *plan);

/* The plan is full: marks the overflow and returns a scratch op that absorbs
 * the writes. */
uly_op *uly_emit_sink(uly_bctx *x);

/* Appends an op with every field given (per_step and per_model 0: the few
 * ops outside the layers set theirs); returns a scratch op (and marks
 * overflow) when the plan is full. Inline, each field stored once: a plan
 * is a few dozen ops, built millions of times by a search, and a field
 * stored twice (a default, then the emitter's value) is not always merged
 * away by the compiler. */
static inline __attribute__((always_inline)) uly_op *uly_emit_op(uly_bctx *x, uly_op_type type, uly_phase ph, uly_op_kind kind, int recompute,
                                  uly_coll coll, uly_group g, int32_t size, int32_t stride, int32_t steps,
                                  uint8_t tiers, int32_t overlaps, int64_t bytes_sent, int64_t comm_elems,
                                  int64_t act_elems, double flops, double bytes_touched, double eff_size,
                                  double crit, uint8_t flash, const double gemm_dims[4])
{
    uly_plan *p = x->p;
    if (__builtin_expect(p->n_ops >= ULY_PLAN_MAX_OPS, 0)) return uly_emit_sink(x);
    uly_op *o = &p->ops[p->n_ops];
    o->id = p->n_ops++;
    o->type = type, o->phase = ph, o->kind = kind;
    o->coll = coll, o->group = g, o->group_size = size, o->group_stride = stride;
    o->steps = steps, o->overlaps = overlaps, o->crit_factor = crit;
    o->recompute = (uint8_t)(recompute != 0);
    o->tiers = tiers, o->per_step = o->per_model = 0, o->flash = flash;
    const uly_op_kernels_entry k = uly_op_kernels_of[type];
    o->mb_class = k.cls;
    o->kernels = kind == ULY_OP_ATTN ? uly_attn_kernels_of[flash != 0][ph == ULY_PHASE_BWD && !recompute]
                                     : (uint8_t)(k.n ? k.n : 1);
    o->bytes_sent = bytes_sent, o->comm_elems = comm_elems, o->act_elems = act_elems;
    o->flops = flops, o->bytes_touched = bytes_touched, o->eff_size = eff_size;
    if (gemm_dims) {
        o->gemm_batch = gemm_dims[0], o->gemm_m = gemm_dims[1], o->gemm_n = gemm_dims[2], o->gemm_k = gemm_dims[3];
    } else {
        o->gemm_batch = o->gemm_m = o->gemm_n = o->gemm_k = 0;
    }
    return o;
}
/* Fails when uly_op gains a field: uly_emit_op must set it too. */
_Static_assert(sizeof(uly_op) == 136, "uly_emit_op sets every field of uly_op: add the new one there");

/* The kernels an op launches in all: attention's per block times its blocks. */
static inline int uly_op_kernels(const uly_op *o)
{
    return o->kind == ULY_OP_ATTN ? (int)o->kernels * (o->steps > 0 ? o->steps : 1) : (int)o->kernels;
}

/* batch x (m x k) times (k x n): 2 batch m n k FLOPs, operands read once
 * and the result written once, before the pass's multiplier (2 for a
 * backward's input and weight gradients); the curve (CPU profiles) reads
 * the cube root of m n k over the batch, a GPU prices the shape (dims:
 * batch, m, n, k). Worked out once for the forward and backward ops of one
 * matrix. */
typedef struct uly_gemm_shape {
    double flops, bytes, eff;
    double dims[4];
} uly_gemm_shape;
static inline uly_gemm_shape uly_gemm_shape_of(const uly_bctx *x, double m, double n, double k)
{
    return (uly_gemm_shape){2.0 * m * n * k, (double)x->beta * (m * k + k * n + m * n), m * n * k, {1.0, m, n, k}};
}
static inline __attribute__((always_inline)) uly_op *uly_emit_gemm_shape(uly_bctx *x, uly_op_type type, uly_phase ph, int recompute,
                                          const uly_gemm_shape *g, double mult)
{
    return uly_emit_op(x, type, ph, ULY_OP_GEMM, recompute, ULY_COLL_NONE, ULY_GROUP_NONE, 1, 1, 1, 0,
                       ULY_OVERLAP_NONE, 0, 0, 0, g->flops * mult, g->bytes * mult, g->eff, 1.0, 0, g->dims);
}

/* An element-wise op of `bytes` HBM traffic; act_elems: elements through
 * the MLP activation function (0: none). */
static inline __attribute__((always_inline)) uly_op *uly_emit_elem(uly_bctx *x, uly_op_type type, uly_phase ph, int recompute, double bytes,
                                    int64_t act_elems)
{
    return uly_emit_op(x, type, ph, ULY_OP_ELEM, recompute, ULY_COLL_NONE, ULY_GROUP_NONE, 1, 1, 1, 0,
                       ULY_OVERLAP_NONE, 0, 0, act_elems, 0, bytes, 0, 1.0, 0, NULL);
}

/* A collective: bytes_sent per rank over all steps; elems in the rank's
 * input buffer. Its group's placement (the plan's, set before any op is
 * emitted) says where the traffic goes. A size that did not fit (negative:
 * ULY_SIZE_UNFIT, as a section keeps one it works out before its shape
 * checks) overflows the plan here, once a transfer of it is emitted, so
 * that an impossible shape stays a reason rather than an error. */
static inline uly_op *uly_emit_comm(uly_bctx *x, uly_op_type type, uly_phase ph, int recompute, uly_coll coll,
                                    uly_group g, int64_t bytes_sent, int64_t elems, int steps)
{
    if (__builtin_expect((bytes_sent | elems) < 0, 0)) x->overflow = 1;
    const uly_group_place *q = &x->p->place[g];
    return uly_emit_op(x, type, ph, ULY_OP_COMM, recompute, coll, g, (int32_t)q->size, (int32_t)q->stride,
                       steps > 0 ? steps : 1, q->tiers, ULY_OVERLAP_NONE, bytes_sent, elems, 0, 0, 0, 0, 1.0, 0, NULL);
}

/* Attention of q query rows against kv key rows per block, `blocks` blocks,
 * for `heads` heads; frac: average fraction of score entries computed (0.5
 * causal); crit: critical rank's work over the average. Flash kernels count
 * 4qkvd per head forward and 2.5x that backward; materialised ones 2x. A
 * section's forward, recompute and backward share one shape: its FLOPs and
 * bytes are multiplied out once (uly_attn_shape_init), before any op is
 * emitted, and each attention op only copies them. */
typedef struct uly_attn_shape {
    double flops[2];  /* [backward] */
    double bytes[2];  /* [backward]: the element-wise passes over materialised scores (0 under flash) */
    double kv;        /* the efficiency curve's key */
    double dims[4];   /* the score GEMM QK^T, batch x (q x d)(d x kv), batch = b heads blocks */
    double crit;
    int blocks;
    uint8_t flash;    /* the plan's kernel (act_flash): set before the shape */
} uly_attn_shape;
double uly_score_pass_bytes(const uly_bctx *x, int backward);
double uly_norm_pass_bytes(const uly_bctx *x, int backward);
double uly_loss_bytes_per_logit(uly_ce_impl impl, double beta);
/* Megatron-LM's main-gradient accumulation of one layer per micro-batch
 * (membound.c): its bytes and kernels, over gemm_params weights of its
 * GEMMs and other_params parameters beside them (the norms' gains) this
 * rank holds. */
double uly_grad_accum_bytes(const uly_workload *w, double gemm_params, double other_params, int *kernels);
void uly_attn_shape_init(const uly_bctx *x, uly_attn_shape *s, int64_t heads, int64_t q, int64_t kv, int blocks,
                         double frac, double crit);
static inline uly_op *uly_emit_attn(uly_bctx *x, uly_op_type type, uly_phase ph, int recompute,
                                    const uly_attn_shape *s, int backward)
{
    return uly_emit_op(x, type, ph, ULY_OP_ATTN, recompute, ULY_COLL_NONE, ULY_GROUP_NONE, 1, 1, s->blocks, 0,
                       ULY_OVERLAP_NONE, 0, 0, 0, s->flops[backward], s->bytes[backward], s->kv, s->crit, s->flash,
                       s->dims);
}

/* A MoE layer's routed experts, worked out once for its forward and
 * backward ops (moe_plan.c): the router and the experts' grouped GEMMs,
 * the expert activation's and the permutations' bytes, the transfers'. */
typedef struct uly_moe_shape {
    uly_gemm_shape router, up, down;
    double act_bytes[2], perm_bytes, load;
    int64_t act_elems, ep, etp;
    int64_t disp_bytes, disp_elems, etp_bytes, etp_elems;
    uly_coll coll, coll_back;
} uly_moe_shape;
/* A layout's expert-parallel and expert tensor-parallel degrees (0 or 1:
 * none), and one MoE layer's routed-expert parameters a rank holds. */
static inline int64_t uly_layout_ep(const uly_layout *l) { return l->ep > 1 ? l->ep : 1; }
static inline int64_t uly_layout_etp(const uly_layout *l) { return l->etp > 1 ? l->etp : 1; }
static inline double uly_layer_expert_params_rank(const uly_model *m, const uly_layout *l)
{
    return uly_expert_params(m) / (double)(uly_layout_ep(l) * uly_layout_etp(l));
}
int uly_moe_layout_check(uly_bctx *x, int64_t stage_gpus, int64_t t, int sp);
void uly_moe_plan_params(uly_bctx *x);
int64_t uly_moe_bytes(const uly_plan *p);
void uly_moe_emit_grads(uly_bctx *x, const uly_state_bytes *sb);
double uly_moe_act_bytes(const uly_model *m, const uly_workload *w, double tokens, int64_t etp);
void uly_moe_shape_init(uly_bctx *x, int64_t norm_tokens, uly_moe_shape *s);
void uly_moe_fwd(uly_bctx *x, const uly_moe_shape *s, uly_phase ph, int recomp);
void uly_moe_bwd(uly_bctx *x, const uly_moe_shape *s);

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
    /* optional: backward, before qkv_proj's (0) / mlp_up's (1): the
     * region's input gathered again for the weight gradient (SP keeps
     * only its 1/t) */
    void (*regather_tp)(uly_bctx *x, int which, void *tp_ctx);
    void *ctx;            /* the attention hooks' */
    void *tp_ctx;         /* the enter/leave hooks' */
} uly_layer_hooks;

/* Emits forward, the recompute pass (full: whole layer; selective: the
 * attention's compute), then backward, in the order they run. */
void uly_layer_emit(uly_bctx *x, const uly_layer_hooks *h);
/* The recompute passes other than full's copy and core attention's
 * (recompute.c): forward ops from `first` on re-run in backward. */
void uly_layer_recompute_other(uly_bctx *x, const uly_layer_hooks *h, int first);

/* uly_plan_price that also totals the plan's traffic into the result
 * (comm_*_bytes, zero_bytes, comm_tiers) in the same pass over the ops:
 * ULY_EOVERFLOW when a total overflows. */
uly_status uly_plan_price_totals(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                                 const uly_plan *plan, uly_result *res);

/* uly_plan_price_totals that also keeps each compute op's time in
 * compute_s[op] (comm ops' entries untouched); and the same pricing that
 * takes those times from compute_s instead of working them out again: valid
 * for the plan they were kept from under another placement of its groups
 * (uly_plan_reorder), as a compute op's time depends only on the op, the
 * model, the workload and the GPU. The reuse leaves the byte totals res
 * holds from that pricing (the bytes do not move with the placement) and
 * sets only the tiers. A search prices every rank order so. */
uly_status uly_plan_price_keep(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                               const uly_plan *plan, uly_result *res, double *compute_s);
uly_status uly_plan_price_reuse(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                                const uly_plan *plan, uly_result *res, const double *compute_s);

/* Moves a built plan to layout l, the plan's own but for the order of its
 * groups: their placement, and the copy of it each comm op holds. */
uly_status uly_plan_reorder(uly_plan *plan, const uly_layout *l, const uly_cluster *c);

/* uly_evaluate of layout l from the plan, result and compute times
 * uly_evaluate_keep (status ULY_OK) just gave for the same layout under
 * another order of its groups: the ops, memory and reasons do not depend on
 * the order; the placement, the tiers and the price do. A search prices
 * every order of a split so. */
uly_status uly_evaluate_reordered(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                                  const uly_layout *l, uly_plan *plan, uly_result *res,
                                  const double *compute_s);

/* uly_evaluate keeping the compute ops' times for uly_evaluate_reordered
 * (uly_plan_price_keep). */
uly_status uly_evaluate_keep(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                             const uly_layout *l, uly_plan *scratch, uly_result *res, double *compute_s);

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

/* The pipeline's part of a plan (pipeline.c): each stage's layers, what
 * the stages hold in flight, the schedule's notes; after micro_steps. */
__attribute__((noinline)) void uly_plan_pipeline(uly_bctx *x);

/* The pipeline's part of a step under an uneven split (plan->pp_staged):
 * stage s takes t_s = n_s layer_s plus its end ops (the first the
 * embedding, the last the head: logits and loss; every stage the
 * transfers; of model_s, the ops' times in op_s), and m micro-batches take
 * m max t + (sum t - max t) / V (pipeline.c). Sets tm's pp_bubble and
 * stage_layers (the pacing stage's); the pacing stage's t into *pace_s. */
__attribute__((cold)) double uly_pp_staged_s(const uly_plan *plan, const double *op_s, double layer_s, double model_s, uly_timing *tm,
                       double *pace_s);

/* A layer's activation terms as the plan lays them out (memory.c): its
 * kernel, tokens, tensor and context splits; nothing recomputed. */
void uly_act_terms_plan(const uly_model *m, const uly_workload *w, const uly_plan *plan, uly_act_terms *o);

/* Recompute's and offload's part of a plan and of its price (recompute.c):
 * the block method's layers not recomputed and what offload moves
 * (uly_plan_recompute, after the strategy's build); the stage's saved
 * activations under each recompute mode (uly_recompute_stage_terms, for
 * memory.c); and the price's share: the block method's recompute taken
 * off the layers not recomputed, offload's exposed transfers added
 * (uly_recompute_price, with the ops' times ex). */
__attribute__((cold)) void uly_plan_recompute(uly_bctx *x);
__attribute__((cold)) void uly_recompute_stage_terms(const uly_model *m, const uly_workload *w, const uly_plan *plan,
                               const uly_act_terms *full, double grads_live, double layers, double in_flight,
                               double *tb);
__attribute__((cold)) void uly_recompute_price(const uly_cluster *c, const uly_workload *w, const uly_plan *plan, const double *ex,
                         uly_timing *tm, double *layer_hw_flops);

/* Critical rank's causal work over the average for a split of `ways`. */
double uly_causal_crit(const uly_workload *w, int64_t ways);

/* Params of the attention and MLP blocks of one layer. */
double uly_attn_params(const uly_model *m);
double uly_mlp_params(const uly_model *m);

#endif
