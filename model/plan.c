/* plan.c: the plan container, the op emitters, the shared transformer-layer
 * driver, and the per-step data-parallel/ZeRO ops that every strategy gets.
 * A strategy file only describes its attention section (and, for Megatron
 * SP, the comm around the GEMM regions); strategy/registry.c lists them. */
#include <math.h>
#include <string.h>

#include "internal.h"

/* ------------------------------------------------------------------ emitters */

void uly_reason_add(uly_bctx *x, uly_reason_code code, int fatal, double v0, double v1, double v2)
{
    for (int i = 0; i < *x->n_reasons; i++)
        if (x->reasons[i].code == code) return; /* one of each is enough */
    if (*x->n_reasons >= ULY_MAX_REASONS) return;
    uly_reason *r = &x->reasons[(*x->n_reasons)++];
    r->code = code;
    r->fatal = fatal;
    r->v[0] = v0;
    r->v[1] = v1;
    r->v[2] = v2;
}

int uly_has_fatal(const uly_bctx *x)
{
    for (int i = 0; i < *x->n_reasons; i++)
        if (x->reasons[i].fatal) return 1;
    return 0;
}

uly_op *uly_emit_sink(uly_bctx *x)
{
    static _Thread_local uly_op sink;
    x->overflow = 1;
    memset(&sink, 0, sizeof sink);
    return &sink;
}

void uly_attn_shape_init(const uly_bctx *x, uly_attn_shape *s, int64_t heads, int64_t q, int64_t kv, int blocks,
                         double frac, double crit)
{
    const int flash = x->p->act_flash; /* the executor's kernel choice */
    const double d = (double)x->m->head_dim;
    const double b = (double)x->b;
    /* block-sparse: only that fraction of the score blocks is computed */
    const double rho = uly_attn_density(x->w);
    double fwd = 4.0 * b * (double)heads * (double)q * (double)kv * d * (double)blocks * rho;
    if (flash) {
        /* a flash kernel skips the blocks outside a sliding window (masking
         * materialised scores skips nothing) */
        if (__builtin_expect(x->m->attn_window > 0, 0)) fwd *= uly_attn_window_density(x->m, x->w, NULL);
        s->flops[0] = fwd * frac;
        s->flops[1] = fwd * frac * 2.5;
        s->bytes[0] = s->bytes[1] = 0;
    } else {
        /* materialised: every score is computed (masking does not skip work);
         * the score GEMMs' own traffic over the block is priced from their
         * FLOPs (schedule.c); bytes_touched holds the element-wise passes */
        s->flops[0] = fwd;
        s->flops[1] = fwd * 2.0;
        double scores = b * (double)heads * (double)q * (double)kv * (double)blocks * rho;
        /* CoreAttention's layout copies: the context's permute to [s, b,
         * h] (read, write), and in backward its gradient's, and the cat of
         * the Q, K and V gradients into the fused projection's (read,
         * write), K and V of the model's kv_heads per query head */
        const double ctx = b * (double)heads * (double)q * d * 2.0 * x->beta;
        const double kvr = (double)x->m->kv_heads / (double)x->m->heads;
        s->bytes[0] = scores * uly_score_pass_bytes(x, 0) + ctx;
        s->bytes[1] = scores * uly_score_pass_bytes(x, 1) + ctx * (2.0 + 2.0 * kvr);
    }
    s->kv = (double)kv;
    s->dims[0] = b * (double)heads * (double)blocks;
    s->dims[1] = (double)q;
    s->dims[2] = (double)kv;
    s->dims[3] = d;
    s->crit = crit;
    s->blocks = blocks;
    s->flash = (uint8_t)(flash != 0);
}

/* ------------------------------------------------------------ layer driver */

double uly_attn_params(const uly_model *m)
{
    /* Wq, Wo: h x a*d; Wk, Wv: h x k*d */
    return (double)m->hidden * (double)m->head_dim * (double)(2 * m->heads + 2 * m->kv_heads);
}

double uly_mlp_params(const uly_model *m)
{
    return (double)m->hidden * (double)m->ffn_hidden * (m->swiglu ? 3.0 : 2.0);
}

/* Tensor-parallel communication overlap (TransformerEngine's userbuffers,
 * Megatron-LM's --tp-comm-overlap): the TP all-gathers and reduce-scatters
 * a hook just emitted (ops from `from` on) run under the GEMM they feed or
 * that feeds them, hidden up to its time. Without it they are exposed. */
static void tp_overlap(uly_bctx *x, int from, const uly_op *gemm)
{
    if (!x->w->tp_comm_overlap || x->overflow) return;
    for (int i = from; i < x->p->n_ops; i++) {
        uly_op *o = &x->p->ops[i];
        if (o->kind == ULY_OP_COMM && o->group == ULY_GROUP_TP &&
            (o->coll == ULY_COLL_ALLGATHER || o->coll == ULY_COLL_REDUCE_SCATTER))
            o->overlaps = gemm->id;
    }
}

/* What the layer's forward and backward ops share, worked out once: the
 * four weight GEMMs (rows: b x the GEMM tokens), the norms' and the MLP
 * activation's bytes. */
typedef struct layer_shape {
    uly_gemm_shape qkv, out, up, down;
    double ln_bytes[2], act_bytes[2]; /* [backward] */
    int64_t act_elems;
    int mlp, moe; /* the layer has an MLP (a MoE layer's: its shared experts), routed experts */
    double accum_bytes; /* Megatron-LM's main-gradient accumulation (0: another framework) */
    int accum_kernels;
    double bias_bytes[2]; /* the biases' own kernels [backward] (0: none, or fused) */
    int bias_kernels;     /* backward's: one reduction per bias */
    uly_moe_shape experts;
} layer_shape;

static void layer_shape_init(uly_bctx *x, const uly_layer_hooks *h, layer_shape *s)
{
    const uly_model *m = x->m;
    const double b = (double)x->b, beta = (double)x->beta;
    const double tg = (double)h->gemm_tokens, tn = (double)h->norm_tokens, t = (double)h->t;
    /* a MoE model's layer is priced as a MoE layer: its MLP is the shared
     * experts' (none when 0 wide) */
    s->moe = m->experts > 0;
    const double hid = (double)m->hidden, f = (double)(s->moe ? m->shared_ffn_hidden : m->ffn_hidden);
    s->mlp = f > 0;
    if (__builtin_expect(s->moe, 0)) uly_moe_shape_init(x, h->norm_tokens, &s->experts);
    double qkv_cols = (double)(m->heads + 2 * (h->kv_heads ? h->kv_heads : m->kv_heads)) * (double)m->head_dim / t;
    double out_k = (double)(m->heads * m->head_dim) / t;
    if (__builtin_expect(m->kv_lora_rank > 0, 0)) {
        /* MLA (head_dim here the mean width, uly_plan_build): its
         * projections to Q, K and V as one GEMM of their parameters over
         * h rows, the output projection a d_v wide */
        const int64_t dv = 2 * m->head_dim - uly_qk_head_dim(m);
        out_k = (double)(m->heads * dv) / t;
        qkv_cols = (uly_mla_params(m, dv) - out_k * t * hid) / hid / t;
    }
    s->qkv = uly_gemm_shape_of(x, b * tg, qkv_cols, hid);
    s->out = uly_gemm_shape_of(x, b * tg, hid, out_k);
    s->up = uly_gemm_shape_of(x, b * tg, f * (m->swiglu ? 2.0 : 1.0) / t, hid);
    s->down = uly_gemm_shape_of(x, b * tg, hid, f / t);
    s->ln_bytes[0] = uly_norm_pass_bytes(x, 0) * b * tn * hid;
    s->ln_bytes[1] = uly_norm_pass_bytes(x, 1) * b * tn * hid;
    s->act_bytes[0] = beta * b * tg * f / t * (m->swiglu ? 3.0 : 2.0);
    s->act_bytes[1] = 2.0 * beta * b * tg * f / t * (m->swiglu ? 3.0 : 2.0);
    s->accum_bytes = 0, s->accum_kernels = 0;
    s->bias_bytes[0] = s->bias_bytes[1] = 0, s->bias_kernels = 0;
    if (__builtin_expect((m->bias | m->qkv_bias) && x->w->transformer_impl == ULY_TI_LOCAL, 0)) {
        /* Megatron-LM's own layers (docs/model.md, "Memory-bound ops"): the
         * QKV projection's bias added out of place (read and write its
         * output); backward, each bias's gradient a reduction reading its
         * output's gradient: QKV's, and with every linear biased the output
         * projection's and the second MLP GEMM's over the tokens whose
         * residual this rank holds, the first MLP GEMM's over its columns.
         * The other forward biases ride in bias-dropout-add and bias-GeLU. */
        const double qkv = b * tg * qkv_cols;
        s->bias_bytes[0] = 2.0 * beta * qkv;
        s->bias_bytes[1] = beta * qkv;
        s->bias_kernels = 1;
        if (m->bias) {
            s->bias_bytes[1] += beta * b * (2.0 * tn * hid + (s->mlp ? tg * f * (m->swiglu ? 2.0 : 1.0) / t : 0.0));
            s->bias_kernels = s->mlp ? 4 : 2;
        }
    }
    if (x->w->framework == ULY_FW_MEGATRON) {
        /* the layer's parameters on this rank (its routed experts' too);
         * the norms' gains, counted t-way split as in layer_params_rank */
        const double gains = 2.0 * hid / t;
        const double experts = s->moe ? uly_layer_expert_params_rank(m, x->l) : 0.0;
        s->accum_bytes = uly_grad_accum_bytes(x->w, x->p->layer_params_rank - gains + experts, gains, &s->accum_kernels);
    }
    /* an element count past int64 cannot be cast (undefined; x86 gives
     * INT64_MIN, a negative cost): the plan's sizes overflow, as the
     * integer products' do */
    const double act_elems = b * tg * f / t;
    if (__builtin_expect(!(act_elems < 0x1p63), 0)) {
        x->overflow = 1;
        s->act_elems = 0;
    } else {
        s->act_elems = (int64_t)act_elems;
    }
}

static void layer_fwd(uly_bctx *x, const uly_layer_hooks *h, const layer_shape *s)
{
    const uly_phase ph = ULY_PHASE_FWD;
    const int recomp = ULY_RECOMP_NONE;
    uly_emit_elem(x, ULY_OPT_LN1, ph, recomp, s->ln_bytes[0], 0);
    int k = x->p->n_ops;
    if (h->enter_tp) h->enter_tp(x, ph, recomp, 0, h->tp_ctx);
    tp_overlap(x, k, uly_emit_gemm_shape(x, ULY_OPT_QKV_PROJ, ph, recomp, &s->qkv, 1.0));
    if (__builtin_expect(s->bias_bytes[0] > 0, 0)) uly_emit_elem(x, ULY_OPT_LINEAR_BIAS, ph, recomp, s->bias_bytes[0], 0);
    h->attn_fwd(x, recomp, h->ctx);
    const uly_op *g = uly_emit_gemm_shape(x, ULY_OPT_OUT_PROJ, ph, recomp, &s->out, 1.0);
    k = x->p->n_ops;
    if (h->leave_tp) h->leave_tp(x, ph, recomp, 0, h->tp_ctx);
    tp_overlap(x, k, g);
    uly_emit_elem(x, ULY_OPT_LN2, ph, recomp, s->ln_bytes[0], 0);
    /* Megatron-Core's MoELayer: the routed experts, then the shared ones */
    if (__builtin_expect(s->moe, 0)) uly_moe_fwd(x, &s->experts, ph, recomp);
    if (!s->mlp) return;
    k = x->p->n_ops;
    if (h->enter_tp) h->enter_tp(x, ph, recomp, 1, h->tp_ctx);
    tp_overlap(x, k, uly_emit_gemm_shape(x, ULY_OPT_MLP_UP, ph, recomp, &s->up, 1.0));
    uly_emit_elem(x, ULY_OPT_MLP_ACT, ph, recomp, s->act_bytes[0], s->act_elems);
    g = uly_emit_gemm_shape(x, ULY_OPT_MLP_DOWN, ph, recomp, &s->down, 1.0);
    k = x->p->n_ops;
    if (h->leave_tp) h->leave_tp(x, ph, recomp, 1, h->tp_ctx);
    tp_overlap(x, k, g);
}

/* The MLP's backward (a MoE layer's shared experts'), the MLP region's
 * transfers around it */
static void mlp_bwd(uly_bctx *x, const uly_layer_hooks *h, const layer_shape *s)
{
    const uly_phase ph = ULY_PHASE_BWD;
    int k = x->p->n_ops;
    if (h->leave_tp) h->leave_tp(x, ph, 0, 1, h->tp_ctx);
    if (x->w->ffn_chunks > 1) {
        /* chunked FFN: the up-projection and activation rebuilt, a block at
         * a time, for their backward */
        uly_emit_gemm_shape(x, ULY_OPT_MLP_UP, ph, 1, &s->up, 1.0);
        uly_emit_elem(x, ULY_OPT_MLP_ACT, ph, 1, s->act_bytes[0], s->act_elems);
    }
    tp_overlap(x, k, uly_emit_gemm_shape(x, ULY_OPT_MLP_DOWN_BWD, ph, 0, &s->down, 2.0));
    uly_emit_elem(x, ULY_OPT_MLP_ACT_BWD, ph, 0, s->act_bytes[1], s->act_elems);
    k = x->p->n_ops;
    if (h->regather_tp) h->regather_tp(x, 1, h->tp_ctx);
    const uly_op *g = uly_emit_gemm_shape(x, ULY_OPT_MLP_UP_BWD, ph, 0, &s->up, 2.0);
    if (h->enter_tp) h->enter_tp(x, ph, 0, 1, h->tp_ctx);
    tp_overlap(x, k, g); /* the input's regather and the gradient's reduce-scatter */
}

static void layer_bwd(uly_bctx *x, const uly_layer_hooks *h, const layer_shape *s)
{
    const uly_phase ph = ULY_PHASE_BWD;
    /* the mirror of each forward comm is the same collective reversed
     * (all-gather <-> reduce-scatter): hooks are called in reverse order */
    if (s->mlp) mlp_bwd(x, h, s);
    if (__builtin_expect(s->moe, 0)) uly_moe_bwd(x, &s->experts);
    uly_emit_elem(x, ULY_OPT_LN2_BWD, ph, 0, s->ln_bytes[1], 0);
    int k = x->p->n_ops;
    if (h->leave_tp) h->leave_tp(x, ph, 0, 0, h->tp_ctx);
    tp_overlap(x, k, uly_emit_gemm_shape(x, ULY_OPT_OUT_PROJ_BWD, ph, 0, &s->out, 2.0));
    h->attn_bwd(x, h->ctx);
    k = x->p->n_ops;
    if (h->regather_tp) h->regather_tp(x, 0, h->tp_ctx);
    const uly_op *g = uly_emit_gemm_shape(x, ULY_OPT_QKV_PROJ_BWD, ph, 0, &s->qkv, 2.0);
    if (h->enter_tp) h->enter_tp(x, ph, 0, 0, h->tp_ctx);
    tp_overlap(x, k, g); /* the input's regather and the gradient's reduce-scatter */
    uly_emit_elem(x, ULY_OPT_LN1_BWD, ph, 0, s->ln_bytes[1], 0);
    if (__builtin_expect(s->bias_bytes[1] > 0, 0))
        uly_emit_elem(x, ULY_OPT_LINEAR_BIAS, ph, 0, s->bias_bytes[1], 0)->kernels = (uint8_t)s->bias_kernels;
    if (s->accum_bytes > 0) uly_emit_elem(x, ULY_OPT_GRAD_ACCUM, ph, 0, s->accum_bytes, 0)->kernels = (uint8_t)s->accum_kernels;
}

/* Full recompute re-runs the forward ops, unchanged but for their phase,
 * at the start of backward: copied rather than rebuilt (the evaluation path
 * is hot: a search prices millions of plans). */
static void layer_recompute_copy(uly_bctx *x, int first, int end)
{
    uly_plan *p = x->p;
    const int shift = p->n_ops - first;
    if (p->n_ops + (end - first) > ULY_PLAN_MAX_OPS) {
        x->overflow = 1;
        return;
    }
    /* one block copy, then the few fields that differ */
    const int from = p->n_ops, to = from + (end - first);
    uly_op *o = memcpy(&p->ops[from], &p->ops[first], (size_t)(end - first) * sizeof *o);
    for (int i = from; i < to; i++, o++) {
        o->id = i;
        o->phase = ULY_PHASE_BWD;
        o->recompute = 1;
        if (o->overlaps >= 0) o->overlaps += shift;
    }
    p->n_ops = to;
    p->recompute_src = first, p->recompute_at = from, p->recompute_ops = to - from;
}

void uly_layer_emit(uly_bctx *x, const uly_layer_hooks *h)
{
    const int first = x->p->n_ops;
    if (__builtin_expect(x->m->experts > 0 || x->l->ep > 1 || x->l->etp > 1, 0)) {
        const uly_layout *l = x->l;
        /* sequence parallel: the norms run on a t-th of the GEMMs' rows */
        const int sp = h->t <= 1 || h->norm_tokens < h->gemm_tokens;
        uly_moe_layout_check(x, l->tp * l->ulysses * l->ring * l->dp, h->t, sp);
    }
    layer_shape s;
    layer_shape_init(x, h, &s);
    layer_fwd(x, h, &s);
    const uly_recompute rc = x->w->recompute;
    const uint32_t mods = x->w->recompute_modules;
    if (rc == ULY_RECOMPUTE_FULL)
        layer_recompute_copy(x, first, x->p->n_ops);
    else if (rc == ULY_RECOMPUTE_SELECTIVE && (mods & ~(1u << ULY_RMOD_CORE_ATTN)) == 0) {
        if (!x->p->act_flash) h->attn_fwd(x, ULY_RECOMP_SELECTIVE, h->ctx); /* core_attn, Megatron-LM's default */
    } else if (rc != ULY_RECOMPUTE_NONE)
        uly_layer_recompute_other(x, h, first);
    layer_bwd(x, h, &s);
}

/* ------------------------------------------------------------ shape checks */

int64_t uly_kv_heads_spread(int64_t k, int64_t a, int64_t u)
{
    if (u <= 1 || k % u == 0) return k;
    return u % k == 0 ? u : a;
}

int64_t uly_kv_eff(uly_bctx *x, int64_t k, int64_t a, int64_t u)
{
    /* a degree past the query heads is fatal (uly_check_heads says so):
     * no KV note beside it, which would count ranks that cannot exist */
    if (u > 1 && u <= a && k % u != 0) {
        if (u % k == 0) uly_reason_add(x, ULY_R_KV_REPLICATED, 0, (double)k, (double)u, (double)u);
        else uly_reason_add(x, ULY_R_KV_EXPANDED, 0, (double)k, (double)a, (double)u);
    }
    return uly_kv_heads_spread(k, a, u);
}

void uly_check_heads(uly_bctx *x, int64_t a, int64_t degree)
{
    if (degree <= 1) return;
    if (degree > a) {
        uly_reason_add(x, ULY_R_DEGREE_GT_HEADS, 1, (double)degree, (double)a, 0);
        return;
    }
    if (a % degree != 0) {
        /* uneven heads would run at ceil/floor imbalance; we do not model it */
        double imb = (double)((a + degree - 1) / degree) / (double)(a / degree);
        uly_reason_add(x, ULY_R_HEADS_NOT_DIVISIBLE, 1, (double)a, (double)degree, imb);
    }
}

void uly_check_seq(uly_bctx *x, int64_t cp, int64_t t, int zig)
{
    const int64_t div = (zig ? 2 : 1) * cp * t;
    /* the granule of lengths the layout accepts: every check's divisor
     * (a search for the longest sequence steps by it) */
    int64_t *g = &x->p->seq_granule;
    if (div > 1) *g = *g > 1 ? *g / uly_gcd(*g, div) * div : div;
    if (div > 1 && x->w->seq % div != 0)
        uly_reason_add(x, ULY_R_SEQ_NOT_DIVISIBLE, 1, (double)x->w->seq, (double)div, (double)(2 * t + (zig != 0)));
}

double uly_causal_crit(const uly_workload *w, int64_t ways)
{
    if (!w->causal || ways <= 1 || w->split == ULY_SPLIT_ZIGZAG) return 1.0;
    /* contiguous: the last rank sees (ways - 1/2) blocks, the average ways/2 */
    return (2.0 * (double)ways - 1.0) / (double)ways;
}

/* --------------------------------------------------------- group placement */

/* a / b where b is often 1: a 64-bit division costs more than the rest of
 * a group's placement */
static inline __attribute__((always_inline)) int64_t div_often_one(int64_t a, int64_t b)
{
    return b == 1 ? a : a / b;
}

/* A group of `size` members `stride` ranks apart, `per_node` of them (before
 * clamping to 1..size) sharing a node of `gpn` used GPUs: the nodes it spans,
 * how many groups of its kind have members on one node (the groups partition
 * the ranks and run their collectives at once, so they share the node's
 * NICs), and the tiers its traffic crosses. */
static inline __attribute__((always_inline)) void place_set(uly_group_place *out, int64_t size, int64_t stride,
                                                            int64_t per_node, int64_t gpn)
{
    if (size == 1) { /* most groups of a layout: no traffic */
        *out = (uly_group_place){.size = 1, .stride = stride, .per_node = 1, .nodes = 1, .node_groups = gpn, .tiers = 0};
        return;
    }
    if (per_node < 1) per_node = 1;
    if (per_node > size) per_node = size;
    out->size = size;
    out->stride = stride;
    out->per_node = per_node;
    out->nodes = per_node == size ? 1 : div_often_one(size + per_node - 1, per_node);
    out->node_groups = per_node >= gpn ? 1 : div_often_one(gpn, per_node);
    out->tiers = 0;
    if (size > 1) {
        if (per_node > 1) out->tiers |= ULY_TIER_INTRA;
        if (out->nodes > 1) out->tiers |= ULY_TIER_INTER;
    }
}

/* Every group's placement at once (place[ULY_GROUP_NONE] zeroed): the rank
 * distance of a group is the product of the degrees inside it in the rank
 * order; the pipeline group is outside all four, so its stride is their
 * product. */
static uly_status place_all(const uly_layout *l, const uly_cluster *c, uly_group_place place[ULY_GROUP_COUNT])
{
    const int64_t gpus = uly_layout_gpus(l);
    const int64_t gpn = c->gpus_per_node < gpus ? c->gpus_per_node : gpus;
    if (gpn <= 0 || gpus <= 0) return ULY_EINVAL;
    /* each group's degree: ZeRO's is placed apart below, and a group's not
     * in the layout (none) counts 1 */
    const int64_t deg[ULY_GROUP_COUNT] = {[ULY_GROUP_NONE] = 1, [ULY_GROUP_TP] = l->tp, [ULY_GROUP_ULYSSES] = l->ulysses,
                                          [ULY_GROUP_RING] = l->ring, [ULY_GROUP_DP] = l->dp, [ULY_GROUP_ZERO] = 1,
                                          [ULY_GROUP_PP] = l->pp};
    /* a group's stride: the product of the degrees before its first
     * position in the order (0: not found yet; no degree is 0 here, the
     * GPUs being >= 1) */
    int64_t stride[ULY_GROUP_COUNT] = {0};
    int64_t inside = 1;
    for (int i = 0; i < 4; i++) {
        const unsigned g = (unsigned)l->order[i];
        if (g >= ULY_GROUP_COUNT) continue; /* an unknown group counts 1 */
        if (!stride[g]) stride[g] = inside;
        inside *= deg[g];
    }
    memset(&place[ULY_GROUP_NONE], 0, sizeof place[0]);
    for (int g = ULY_GROUP_TP; g <= ULY_GROUP_PP; g++) {
        if (g == ULY_GROUP_ZERO) continue;
        const int64_t st = stride[g] ? stride[g] : inside; /* not in the order (the pipeline): outside all four */
        place_set(&place[g], deg[g], st, st >= gpn ? 1 : div_often_one(gpn, st), gpn);
    }
    /* ZeRO's group is everything but TP (and the pipeline stages, outside
     * it): its members in a node are the node's ranks over the TP ranks
     * sharing that node */
    place_set(&place[ULY_GROUP_ZERO], l->ulysses * l->ring * l->dp, l->order[0] == ULY_GROUP_TP ? l->tp : 1,
              div_often_one(gpn, place[ULY_GROUP_TP].per_node), gpn);
    /* the expert layers' groups fold over the stage's ranks in
     * Megatron-Core's expert order, expert TP innermost, then EP, then
     * expert DP (the rest of the stage; an EP x ETP that does not divide
     * the stage is refused by the plan) */
    const int64_t etp = uly_layout_etp(l), ep = uly_layout_ep(l);
    place_set(&place[ULY_GROUP_ETP], etp, 1, gpn, gpn);
    place_set(&place[ULY_GROUP_EP], ep, etp, etp >= gpn ? 1 : div_often_one(gpn, etp), gpn);
    const int64_t ee = etp * ep, edp = inside % ee == 0 ? inside / ee : 1;
    place_set(&place[ULY_GROUP_EDP], edp, ee, ee >= gpn ? 1 : div_often_one(gpn, ee), gpn);
    return ULY_OK;
}

uly_status uly_group_place_get(const uly_layout *l, const uly_cluster *c, uly_group g,
                               uly_group_place *out)
{
    if (!l || !c || !out || (int)g < 0 || g >= ULY_GROUP_COUNT) return ULY_EINVAL;
    uly_group_place all[ULY_GROUP_COUNT];
    const uly_status st = place_all(l, c, all);
    if (st == ULY_OK) *out = all[g];
    return st;
}

uly_status uly_plan_reorder(uly_plan *plan, const uly_layout *l, const uly_cluster *c)
{
    if (place_all(l, c, plan->place) != ULY_OK) return ULY_EINVAL;
    plan->layout = *l;
    /* the count read once: the stores below could alias it */
    for (uly_op *o = plan->ops, *end = plan->ops + plan->n_ops; o < end; o++) {
        if (o->kind != ULY_OP_COMM) continue;
        const uly_group_place *q = &plan->place[o->group];
        o->group_size = (int32_t)q->size; /* as uly_emit_comm copies them */
        o->group_stride = (int32_t)q->stride;
        o->tiers = q->tiers;
    }
    return ULY_OK;
}

/* --------------------------------------------------------------- plan build */

static void emit_model_ops(uly_bctx *x)
{
    /* per micro-batch, outside the layers: embedding lookup, final norm,
     * logits GEMM (vocab-parallel under TP) and the cross-entropy */
    const uly_plan *p = x->p;
    const double b = (double)x->b, beta = (double)x->beta, hid = (double)x->m->hidden;
    const double tl = (double)p->logit_tokens, vl = (double)p->logit_vocab;
    uly_op *o;
    o = uly_emit_elem(x, ULY_OPT_EMBED, ULY_PHASE_FWD, 0, 2.0 * beta * b * (double)p->act_tokens * hid, 0);
    o->per_model = 1;
    const uly_gemm_shape logits = uly_gemm_shape_of(x, b * tl, vl, hid); /* forward and backward */
    o = uly_emit_gemm_shape(x, ULY_OPT_LOGITS, ULY_PHASE_FWD, 0, &logits, 1.0);
    o->per_model = 1;
    const double loss_bytes = uly_loss_bytes_per_logit(x->w->ce_impl, beta) * b * tl * vl;
    o = uly_emit_elem(x, ULY_OPT_LOSS, ULY_PHASE_FWD, 0, loss_bytes, 0);
    o->per_model = 1;
    o = uly_emit_gemm_shape(x, ULY_OPT_LOGITS_BWD, ULY_PHASE_BWD, 0, &logits, 2.0);
    o->per_model = 1;
}

/* Pipeline stages hand each micro-batch's activations forward and their
 * gradient back: one point-to-point transfer of this rank's share of the
 * stage output each way per micro-batch (Megatron-LM's 1F1B). On the
 * critical path: a stage waits for it. Under plain TP every TP rank holds
 * the whole b N h; Megatron-LM's scatter-gather (2021-02 to 2023-03,
 * megatron/p2p_communication.py: split_tensor_into_1d_equal_chunks before
 * the send, gather_split_1d_tensor after the receive; off under sequence
 * parallelism, whose ranks hold 1/t already; t divides h, so the tensor
 * always splits) sends 1/t of it from each TP rank, each over its own NIC,
 * and the receiving stage all-gathers the pieces over the TP group; the v
 * gathers of an interleaved schedule are priced as one of v times the
 * bytes (MB-sized pieces: one latency more or less is noise). */
static void emit_pipeline_ops(uly_bctx *x)
{
    const uly_plan *p = x->p;
    if (x->l->pp <= 1) return;
    int64_t elems = ULY_PROD(x, x->b, p->act_tokens, x->m->hidden);
    const int64_t t = x->l->tp;
    const int split = x->w->pp_scatter_gather && t > 1 && !p->act_sp; /* every TP rank holds all of it */
    if (split) elems /= t;
    const int64_t bytes = ULY_PROD(x, elems, x->beta, p->vpp);
    const int steps = (int)p->vpp; /* interleaved: each of the V chunks hands its output on */
    uly_op *o = uly_emit_comm(x, ULY_OPT_PP_SEND_ACT, ULY_PHASE_FWD, 0, ULY_COLL_SENDRECV, ULY_GROUP_PP, bytes, elems,
                              steps);
    o->per_model = 1;
    /* the ring all-gather of the whole tensor: (t - 1) pieces sent per rank */
    const int64_t ag_bytes = split ? ULY_PROD(x, t - 1, bytes) : 0;
    if (split) {
        o = uly_emit_comm(x, ULY_OPT_PP_GATHER_ACT, ULY_PHASE_FWD, 0, ULY_COLL_ALLGATHER, ULY_GROUP_TP, ag_bytes,
                          elems, steps);
        o->per_model = 1;
    }
    o = uly_emit_comm(x, ULY_OPT_PP_SEND_GRAD, ULY_PHASE_BWD, 0, ULY_COLL_SENDRECV, ULY_GROUP_PP, bytes, elems, steps);
    o->per_model = 1;
    if (split) {
        o = uly_emit_comm(x, ULY_OPT_PP_GATHER_GRAD, ULY_PHASE_BWD, 0, ULY_COLL_ALLGATHER, ULY_GROUP_TP, ag_bytes,
                          elems, steps);
        o->per_model = 1;
    }
}

/* FP8 training's weight casts once per step (Megatron-LM marks the first
 * micro-batch, and TransformerEngine keeps the weights' FP8 copies for the
 * rest): the linear weights of the layers that run FP8, quantized with their
 * transposes (read bf16, write both: uly_fp8_cast_bytes_per_elem of a cast
 * kernel); under fp8_param_gather the optimizer writes its shard's weights
 * in FP8 (one byte less than bf16) and the gathered FP8 weights are
 * transposed (read 1, write 1) */
__attribute__((noinline, cold)) static double fp8_weight_cast_bytes(const uly_bctx *x, double params)
{
    const uly_workload *w = x->w;
    const uly_plan *p = x->p;
    const double lin = uly_plan_linear_params(x->m, p) * (1.0 - uly_fp8_bf16_layer_frac(x->m, w, p));
    if (!w->fp8_param_gather) return lin * uly_fp8_cast_bytes_per_elem(w->fp8_recipe, 0);
    const double share = p->model_params_rank > 0 ? params / p->model_params_rank : 1.0;
    return -lin * share + 2.0 * lin;
}

/* Bytes of a weight all-gather of `elems` parameters per rank over g ranks:
 * in the dtype's bytes, but under fp8_param_gather (Megatron-LM) the linear
 * weights of the FP8 layers, lin of the parameters, move in FP8 */
__attribute__((noinline, cold)) static int64_t gather_bytes_fp8(uly_bctx *x, int64_t g, int64_t elems, double lin)
{
    const int64_t all = ULY_PROD(x, g - 1, elems, x->beta);
    return all - (int64_t)llround((double)(all / x->beta) * lin * (double)(x->beta - 1));
}

static inline int64_t gather_bytes(uly_bctx *x, int64_t g, int64_t elems, double lin)
{
    if (__builtin_expect(x->w->fp8_param_gather && x->w->dtype == ULY_FP8, 0)) return gather_bytes_fp8(x, g, elems, lin);
    return ULY_PROD(x, g - 1, elems, x->beta);
}

/* The share of linear-layer weights, of the FP8 layers, among the rank's
 * parameters: of a layer's (layer 1) or of the stage's */
__attribute__((noinline, cold)) static double fp8_lin_share_of(const uly_bctx *x, int layer)
{
    const uly_plan *p = x->p;
    const double lin = uly_plan_linear_params(x->m, p) * (1.0 - uly_fp8_bf16_layer_frac(x->m, x->w, p));
    const double of = layer ? p->layer_params_rank * (double)p->stage_layers : p->model_params_rank;
    return of > 0 ? lin / of : 0;
}

static inline double fp8_lin_share(const uly_bctx *x, int layer)
{
    return __builtin_expect(x->w->dtype == ULY_FP8 && x->w->fp8_param_gather, 0) ? fp8_lin_share_of(x, layer) : 0;
}

/* Data-parallel gradient reduction and ZeRO traffic over the data x sequence
 * group (docs/model.md, "Data parallelism, ZeRO and the optimizer"). */
static void emit_zero_ops(uly_bctx *x, const uly_state_bytes *sb)
{
    const uly_workload *w = x->w;
    const uly_plan *p = x->p;
    const int64_t g = p->dims.zero_group;
    if (g <= 1) return;
    const int64_t gw = sb->grad_wire; /* gradients travel in the framework's reduction type */
    const int64_t layer = (int64_t)ceil(p->layer_params_rank);
    const int64_t layer_sh = (layer + g - 1) / g; /* padded shard */
    const int64_t model_sh = (int64_t)p->model_params_shard;
    uly_op *o;
    if (w->zero_stage >= 3) {
        /* gather each layer's weights before its forward and again before its
         * backward, reduce-scatter its grads; prefetch hides the gathers
         * under the phase's compute, without it they wait on the critical path
         * (the messages a framework sends them in: uly_zero_gather_msgs) */
        const int32_t ov = uly_zero_prefetch_layers(w) > 0 ? ULY_OVERLAP_PHASE : ULY_OVERLAP_NONE;
        const int64_t gb = gather_bytes(x, g, layer_sh, fp8_lin_share(x, 1));
        o = uly_emit_comm(x, ULY_OPT_ZERO_GATHER_W, ULY_PHASE_FWD, 0, ULY_COLL_ALLGATHER, ULY_GROUP_ZERO, gb, layer_sh,
                          1);
        o->overlaps = ov;
        o = uly_emit_comm(x, ULY_OPT_ZERO_GATHER_W, ULY_PHASE_BWD, 0, ULY_COLL_ALLGATHER, ULY_GROUP_ZERO, gb, layer_sh,
                          1);
        o->overlaps = ov;
        if (uly_zero_copy_out(w)) {
            /* FSDP2 gathers into one flat buffer, then copies each
             * parameter out of it on the compute stream before the layer
             * runs (split_with_sizes_copy): the gathered layer read and
             * written, each time it is gathered (the gather's bytes: FP8
             * weights too under --fp8-param-gather) */
            const double copy = 2.0 * (double)g * ((double)gb / (double)(g - 1));
            uly_emit_elem(x, ULY_OPT_FSDP_COPY_OUT, ULY_PHASE_FWD, 0, copy, 0);
            uly_emit_elem(x, ULY_OPT_FSDP_COPY_OUT, ULY_PHASE_BWD, 0, copy, 0);
        }
    }
    /* gradient reductions hide under backward only on their own stream */
    const int32_t grad_ov = uly_grad_reduce_overlaps(w) ? ULY_OVERLAP_PHASE : ULY_OVERLAP_NONE;
    if (w->zero_stage >= 2) {
        o = uly_emit_comm(x, ULY_OPT_ZERO_RS_GRAD, ULY_PHASE_BWD, 0, ULY_COLL_REDUCE_SCATTER, ULY_GROUP_ZERO,
                          ULY_PROD(x, g - 1, layer_sh, gw), ULY_PROD(x, layer_sh, g), 1);
        o->overlaps = grad_ov;
    }
    if (w->zero_stage <= 1) {
        /* one all-reduce (ZeRO-0) or reduce-scatter (ZeRO-1) of all grads per
         * step: bucketed under the last micro-batch's backward when it
         * overlaps, else after it */
        if (w->zero_stage == 0)
            o = uly_emit_comm(x, ULY_OPT_DP_ALLREDUCE_GRAD, ULY_PHASE_STEP, 0, ULY_COLL_ALLREDUCE, ULY_GROUP_ZERO,
                              ULY_PROD(x, 2, g - 1, model_sh, gw), ULY_PROD(x, model_sh, g), 1);
        else
            o = uly_emit_comm(x, ULY_OPT_ZERO_RS_GRAD, ULY_PHASE_STEP, 0, ULY_COLL_REDUCE_SCATTER, ULY_GROUP_ZERO,
                              ULY_PROD(x, g - 1, model_sh, gw), ULY_PROD(x, model_sh, g), 1);
        o->per_step = 1;
        o->per_model = 1;
        o->overlaps = grad_ov;
    }
    if (w->zero_stage == 1 || w->zero_stage == 2) {
        /* updated shards are all-gathered once per step */
        o = uly_emit_comm(x, ULY_OPT_ZERO_GATHER_W, ULY_PHASE_STEP, 0, ULY_COLL_ALLGATHER, ULY_GROUP_ZERO,
                          gather_bytes(x, g, model_sh, fp8_lin_share(x, 0)), model_sh, 1);
        o->per_step = 1;
        o->per_model = 1;
        if (w->overlap_param_gather) o->overlaps = ULY_OVERLAP_PHASE; /* under the next step's forward */
    }
}

/* The optimizer step's passes over memory, as Megatron-LM's mixed-precision
 * optimizer (and DeepSpeed's fp16 optimizer) run them, per parameter this
 * rank updates: fp16 loss scaling unscales the fp32 gradients in place and
 * checks them for inf/NaN (read and write 4 + 4); the gradient norm for
 * clipping reads them (4); Adam reads parameter, gradient, m and v and
 * writes parameter, m and v (16 + 12); mixed precision then casts the fp32
 * master to the half-precision weights (4 + beta). Megatron-LM's main
 * gradients kept in the parameters' precision are first copied to fp32
 * (its optimizers' _copy_model_grads_to_main_grads, main_grad.float():
 * read beta, write 4). The gradient buffer is zeroed for the next step over
 * every gradient the rank holds. */
static void emit_optimizer(uly_bctx *x, const uly_state_bytes *sb)
{
    const uly_plan *p = x->p;
    const uly_workload *w = x->w;
    const double all = p->model_params_rank, shard = p->model_params_shard;
    const double params = w->zero_stage >= 1 ? shard : all;
    const double unscale = w->dtype == ULY_FP16 ? 8.0 : 0.0;
    const double cast = w->dtype == ULY_FP32 ? 0.0 : 4.0 + (double)x->beta;
    /* Megatron-LM's main gradients held in fewer than fp32's 4 bytes */
    const double copy = w->framework == ULY_FW_MEGATRON && sb->grad_wire < 4 ? (double)x->beta + 4.0 : 0.0;
    double bytes = (unscale + 4.0 + 28.0 + cast + copy) * params + sb->grads_whole * all + sb->grads_shard * shard;
    if (__builtin_expect(w->dtype == ULY_FP8, 0)) bytes += fp8_weight_cast_bytes(x, params);
    uly_op *o = uly_emit_elem(x, ULY_OPT_OPTIMIZER, ULY_PHASE_STEP, 0, bytes, 0);
    o->per_step = 1;
    o->per_model = 1;
}

uly_status uly_plan_build(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                          const uly_layout *l, uly_plan *plan,
                          uly_reason *reasons, int *n_reasons)
{
    if (!m || !w || !c || !l || !plan || !reasons || !n_reasons) return ULY_EINVAL;
    const uly_strategy *s = uly_strategy_get(l->strategy);
    if (!s) return ULY_EINVAL;
    if (l->ulysses < 1 || l->ring < 1 || l->tp < 1 || l->dp < 1 || l->pp < 1) return ULY_EINVAL;
    /* FP8 training needs FP8 tensor cores and GEMMs priced by shape */
    if (w->dtype == ULY_FP8 && !(c->gpu.peak_flops[ULY_FP8] > 0 && c->gpu.sm_count > 0)) return ULY_EINVAL;
    memset(plan, 0, offsetof(uly_plan, ops));
    plan->layout = *l;
    *n_reasons = 0;
    uly_bctx x;
    uly_bctx_init(&x, m, w, c, l, plan, reasons, n_reasons);

    int64_t gpus = 1, stage_gpus = 1; /* all of them; those of one pipeline stage */
    if (__builtin_mul_overflow(l->ulysses, l->ring, &stage_gpus) ||
        __builtin_mul_overflow(stage_gpus, l->tp, &stage_gpus) || __builtin_mul_overflow(stage_gpus, l->dp, &stage_gpus) ||
        __builtin_mul_overflow(stage_gpus, l->pp, &gpus))
        return ULY_EOVERFLOW;
    {
        const double per = (double)w->micro_batch * (double)l->dp;
        plan->micro_steps = w->global_batch > 0 ? (int64_t)llround((double)w->global_batch / per) : 1;
        if (plan->micro_steps < 1) plan->micro_steps = 1;
    }
    uly_plan_pipeline(&x);
    if (!s->uses_ulysses && l->ulysses != 1) return ULY_EINVAL;
    if (!s->uses_ring && l->ring != 1) return ULY_EINVAL;
    if (!s->uses_tp && l->tp != 1) return ULY_EINVAL;
    int64_t cluster_gpus;
    if (__builtin_mul_overflow(c->nodes, c->gpus_per_node, &cluster_gpus)) cluster_gpus = INT64_MAX;
    if (gpus > cluster_gpus)
        uly_reason_add(&x, ULY_R_GPUS_EXCEED_CLUSTER, 1, (double)gpus, (double)cluster_gpus, 0);
    if (gpus > c->gpus_per_node && gpus % c->gpus_per_node != 0)
        uly_reason_add(&x, ULY_R_GPUS_NOT_NODE_MULTIPLE, 1, (double)gpus, (double)c->gpus_per_node, 0);
    if (w->global_batch > 0) {
        int64_t per = 0;
        if (__builtin_mul_overflow(w->micro_batch, l->dp, &per) || w->global_batch % per != 0)
            uly_reason_add(&x, ULY_R_BATCH_NOT_DIVISIBLE, 1, (double)w->global_batch,
                           (double)w->micro_batch * (double)l->dp, 0);
    }

    if (place_all(l, c, plan->place) != ULY_OK) return ULY_EINVAL;
    plan->dims.zero_group = stage_gpus / l->tp;
    plan->weight_split = l->tp;
    plan->act_tp = 1;
    plan->act_cp = 1;
    plan->act_flash = w->flash;
    plan->logit_vocab = m->vocab;

    plan->layer_params_rank = uly_layer_params(m) / (double)l->tp;
    plan->model_params_rank = uly_model_params(m) / (double)l->tp;
    if (l->pp > 1) {
        /* the heavier end stage: the last holds the output layer (a copy of
         * the word embedding when tied, as Megatron-LM keeps) and the final
         * norm, the first the embedding; an uneven split, the heaviest of
         * its stages */
        const double emb = (double)m->vocab * (double)m->hidden, head = emb + (double)m->hidden;
        const double lp = uly_layer_params(m);
        double most = ((double)plan->stage_layers * lp + head);
        if (plan->pp_staged) {
            const int64_t *n = plan->pp_stage_layers;
            const double first = (double)n[0] * lp + emb, mid = l->pp > 2 ? (double)n[1] * lp : 0;
            const double last = (double)n[2] * lp + head;
            most = first > last ? first : last;
            if (mid > most) most = mid;
        }
        plan->model_params_rank = most / (double)l->tp;
    }
    if (__builtin_expect(m->experts > 0, 0)) uly_moe_plan_params(&x);
    /* multi-head latent attention: the attention side (the kernel, the
     * context-parallel transfers) sees heads of the mean of a query head's
     * and a value head's width, which keeps its FLOPs and its bytes per
     * layer exact (q.k over d_qk, p.v over d_v; Q and K d_qk wide, V and O
     * d_v); the projections are priced from the model's own sizes */
    uly_model mla;
    const uly_model *ms = m;
    if (__builtin_expect(m->kv_lora_rank > 0, 0)) {
        mla = *m;
        mla.head_dim = (uly_qk_head_dim(m) + m->head_dim) / 2;
        mla.kv_heads = m->heads;
        ms = &mla;
    }
    uly_status st = s->build(ms, w, c, l, plan, reasons, n_reasons);
    if (st != ULY_OK) return st;
    if (plan->dims.cp < 1) plan->dims.cp = 1;
    if (plan->act_tokens <= 0) plan->act_tokens = w->seq / plan->dims.cp;
    if (plan->logit_tokens <= 0) plan->logit_tokens = plan->act_tokens;

    if (__builtin_expect((w->recompute_method == ULY_RMETHOD_BLOCK) | (w->offload_layers > 0), 0))
        uly_plan_recompute(&x);
    emit_model_ops(&x);
    emit_pipeline_ops(&x);
    plan->model_params_shard = uly_shard_params(plan->model_params_rank, (double)plan->dims.zero_group);
    uly_state_bytes sb; /* per parameter, whole and sharded: both of these read it */
    uly_state_bytes_get(w, &sb);
    emit_zero_ops(&x, &sb);
    if (__builtin_expect(plan->expert_params_rank > 0, 0)) uly_moe_emit_grads(&x, &sb);
    emit_optimizer(&x, &sb);
    plan->price_rare = plan->pp_staged | (plan->recompute_skip > 0) | (plan->offload_share > 0);
    if (x.overflow) return ULY_EOVERFLOW;

    return ULY_OK;
}
