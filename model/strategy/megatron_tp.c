/* megatron_tp.c: plain Megatron tensor parallelism (Shoeybi et al. 2019),
 * degree t, without sequence parallelism. Weights split t ways (QKV and the
 * first MLP GEMM by columns, the output projection and the second MLP GEMM by
 * rows); heads split t ways; layer norms, dropout and residuals run on all N
 * tokens on every rank (replicated). Megatron's "f" and "g" operators: in
 * forward, f (entering a GEMM region) is the identity and g (leaving it, after
 * the row-split out_proj and mlp_down) all-reduces the partial b x N x h sums;
 * in backward g is the identity and f all-reduces the input's gradient. Each
 * all-reduce is a ring: reduce-scatter then all-gather, 2 (t-1)/t b N h beta
 * bytes sent per rank (the harness's hx_allreduce_ring). Per layer:
 * 4 (t-1)/t b N h beta forward, the same backward, all on the critical path:
 * forward the same bytes as TP+SP (docs/model.md), which trades each
 * all-reduce for a reduce-scatter and an all-gather (and gathers its
 * inputs again in backward). Activation memory per layer
 * (Korthikanti et al. 2022): s b h (10 + 24/t + 5 a s / (h t)). */
#include "megatron.h"

/* The TP hooks' ctx: the all-reduces' sizes, multiplied once (a ring
 * all-reduce of the b x N x h buffer: 2 (t-1) blocks of b N h / t sent; t
 * divides h: it divides the heads, checked before any op is emitted); both
 * ULY_SIZE_UNFIT when one does not fit (the plan overflows once one is
 * emitted). */
typedef struct mtp_ctx {
    int64_t t;
    int64_t bytes, elems;
} mtp_ctx;

/* [bwd][which]: which 0 the attention region, 1 the MLP */
static const uly_op_type ar_types[2][2] = {{ULY_OPT_TP_AR_ATTN, ULY_OPT_TP_AR_MLP}, {ULY_OPT_TP_AR_DATTN, ULY_OPT_TP_AR_DMLP}};

static void allreduce(uly_bctx *x, uly_op_type type, uly_phase ph, int recomp, const mtp_ctx *s)
{
    uly_emit_comm(x, type, ph, recomp, ULY_COLL_ALLREDUCE, ULY_GROUP_TP, s->bytes, s->elems, 1);
}

/* f: identity forward; backward (the same hook point walked in reverse), the
 * all-reduce of the region input's gradient */
static void enter_tp(uly_bctx *x, uly_phase ph, int recomp, int which, void *ctx)
{
    const mtp_ctx *s = ctx;
    if (s->t <= 1 || ph != ULY_PHASE_BWD) return;
    allreduce(x, ar_types[1][which], ph, recomp, s);
}

/* g: the all-reduce of the row-split GEMM's partial output forward; identity backward */
static void leave_tp(uly_bctx *x, uly_phase ph, int recomp, int which, void *ctx)
{
    const mtp_ctx *s = ctx;
    if (s->t <= 1 || ph == ULY_PHASE_BWD) return;
    allreduce(x, ar_types[0][which], ph, recomp, s);
}

static uly_status build(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                        const uly_layout *l, uly_plan *p, uly_reason *reasons, int *n_reasons)
{
    uly_bctx x;
    uly_bctx_init(&x, m, w, c, l, p, reasons, n_reasons);
    uly_tp_layer s;
    uly_tp_sec_init(&x, l->tp, w->seq, 0, &s.sec);
    const int64_t t = l->tp, n = w->seq, hid = m->hidden;
    mtp_ctx ar = {.t = t};
    if (t > 1 && !(uly_prod_fits(6, (int64_t[]){2, t - 1, x.b, n, hid / t, x.beta}, &ar.bytes) &
                   uly_prod_fits(3, (int64_t[]){x.b, n, hid}, &ar.elems)))
        ar.bytes = ar.elems = ULY_SIZE_UNFIT;
    /* no sequence split: N need not divide by t */
    const int64_t kv_eff = uly_tp_setup(&x, &s, 0);
    p->dims.tokens = w->seq;
    /* activations: the GEMM regions split t ways, the rest replicated */
    p->act_sp = 0;
    p->act_tokens = w->seq;
    /* the all-reduces run in place on the b x N x h output (or its
     * gradient), which the layer holds anyway: no extra buffer */
    p->comm_buf_bytes = 0;
    if (uly_has_fatal(&x)) return x.overflow ? ULY_EOVERFLOW : ULY_OK;
    uly_layer_hooks h = {.gemm_tokens = w->seq, .norm_tokens = w->seq, .t = s.sec.t, .kv_heads = kv_eff,
                         .attn_fwd = uly_tp_attn_fwd, .attn_bwd = uly_tp_attn_bwd, .enter_tp = enter_tp,
                         .leave_tp = leave_tp, .ctx = &s, .tp_ctx = &ar};
    uly_layer_emit(&x, &h);
    return x.overflow ? ULY_EOVERFLOW : ULY_OK;
}

const uly_strategy uly_strategy_megatron_tp = {
    .id = ULY_STRAT_MEGATRON_TP, .name = "megatron-tp", .label = "Megatron-TP", .label_short = "Megatron-TP",
    .summary = "Megatron TP (no SP): all-reduce of b N h after each GEMM region, replicated norms",
    .uses_tp = 1, .exec = ULY_EXEC_TP_ALLREDUCE, .build = build,
};
