/* megatron_sp.c: Megatron tensor parallelism with sequence parallelism
 * (Korthikanti et al. 2022), degree t. Weights split t ways; layer norms and
 * dropout run on N/t tokens; an all-gather of b x N x h enters each GEMM
 * region (attention, MLP) and a reduce-scatter leaves it: 4(t-1)/t b N h
 * bytes forward, the same backward with the collectives swapped. All on the
 * critical path. */
#include "megatron.h"

typedef uly_tp_sec msp_ctx;

static const uly_op_type ag_types[2][2] = {{ULY_OPT_SP_AG_ATTN, ULY_OPT_SP_AG_MLP}, {ULY_OPT_SP_AG_DATTN, ULY_OPT_SP_AG_DMLP}};
static const uly_op_type rs_types[2][2] = {{ULY_OPT_SP_RS_ATTN, ULY_OPT_SP_RS_MLP}, {ULY_OPT_SP_RS_DATTN, ULY_OPT_SP_RS_DMLP}};

static void gather(uly_bctx *x, uly_op_type type, uly_phase ph, int recomp, int64_t t)
{
    const int64_t n = x->w->seq, h = x->m->hidden;
    uly_emit_comm(x, type, ph, recomp, ULY_COLL_ALLGATHER, ULY_GROUP_TP, ULY_PROD(x, t - 1, x->b, n / t, h, x->beta),
                  ULY_PROD(x, x->b, n / t, h), 1);
}

static void scatter(uly_bctx *x, uly_op_type type, uly_phase ph, int recomp, int64_t t)
{
    const int64_t n = x->w->seq, h = x->m->hidden;
    uly_emit_comm(x, type, ph, recomp, ULY_COLL_REDUCE_SCATTER, ULY_GROUP_TP,
                  ULY_PROD(x, t - 1, x->b, n / t, h, x->beta), ULY_PROD(x, x->b, n, h), 1);
}

/* forward: gather in; backward (the same hook point walked in reverse):
 * reduce-scatter the input's gradient */
static void enter_tp(uly_bctx *x, uly_phase ph, int recomp, int which, void *ctx)
{
    const msp_ctx *s = ctx;
    if (s->t <= 1) return;
    const int bwd = ph == ULY_PHASE_BWD;
    if (bwd) scatter(x, rs_types[1][which], ph, recomp, s->t);
    else gather(x, ag_types[0][which], ph, recomp, s->t);
}

static void leave_tp(uly_bctx *x, uly_phase ph, int recomp, int which, void *ctx)
{
    const msp_ctx *s = ctx;
    if (s->t <= 1) return;
    const int bwd = ph == ULY_PHASE_BWD;
    if (bwd) gather(x, ag_types[1][which], ph, recomp, s->t);
    else scatter(x, rs_types[0][which], ph, recomp, s->t);
}

void uly_tp_attn_fwd(uly_bctx *x, int recomp, void *ctx)
{
    const uly_tp_sec *s = ctx;
    const int64_t n = x->w->seq;
    uly_emit_attn(x, ULY_OPT_ATTN_FWD, recomp ? ULY_PHASE_BWD : ULY_PHASE_FWD, recomp, x->m->heads / s->t, n, n, 1,
                  x->w->causal ? 0.5 : 1.0, 1.0, x->p->act_flash, 0);
}

void uly_tp_attn_bwd(uly_bctx *x, void *ctx)
{
    const uly_tp_sec *s = ctx;
    const int64_t n = x->w->seq;
    uly_emit_attn(x, ULY_OPT_ATTN_BWD, ULY_PHASE_BWD, 0, x->m->heads / s->t, n, n, 1, x->w->causal ? 0.5 : 1.0, 1.0,
                  x->p->act_flash, 1);
}

int64_t uly_tp_setup(uly_bctx *x, const uly_tp_sec *s, int split_seq)
{
    const uly_model *m = x->m;
    const uly_cluster *c = x->c;
    uly_plan *p = x->p;
    uly_check_heads(x, s->t);
    const int64_t kv_eff = uly_kv_eff(x, s->t);
    if (split_seq) uly_check_seq(x, s->t);
    if (s->t > c->gpus_per_node)
        uly_reason_add(x, ULY_R_TP_SPANS_NODES, 0, (double)s->t, (double)c->gpus_per_node, 0);
    p->dims.cp = 1;
    p->dims.heads = m->heads / s->t;
    p->dims.kv_eff = kv_eff;
    p->dims.kv_heads = kv_eff / s->t;
    p->dims.attn_q = x->w->seq;
    p->dims.attn_kv = x->w->seq;
    p->act_tp = s->t;
    p->act_cp = 1;
    p->logit_tokens = x->w->seq;
    p->logit_vocab = (m->vocab + s->t - 1) / s->t;
    /* replicated KV heads (k < t) make each rank hold and project more
     * than 1/t of the K and V weights: h d k_eff / t each instead of h d k / t */
    const double kv_extra = (double)m->hidden * (double)m->head_dim * 2.0 * (double)(kv_eff - m->kv_heads) / (double)s->t;
    p->layer_params_rank += kv_extra;
    p->model_params_rank += kv_extra * (double)p->stage_layers; /* the layers this rank's stage holds */
    return kv_eff;
}

static uly_status build(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                        const uly_layout *l, uly_plan *p, uly_reason *reasons, int *n_reasons)
{
    uly_bctx x;
    uly_bctx_init(&x, m, w, c, l, p, reasons, n_reasons);
    msp_ctx s = {.t = l->tp};
    const int64_t kv_eff = uly_tp_setup(&x, &s, 1);
    p->dims.tokens = w->seq / s.t;
    p->act_sp = 1;
    p->act_tokens = w->seq / s.t;
    /* the gathered b x N x h input (its gradient is backward's working set) */
    p->comm_buf_bytes = s.t > 1 ? (double)x.beta * (double)x.b * (double)w->seq * (double)m->hidden : 0;
    if (uly_has_fatal(&x)) return x.overflow ? ULY_EOVERFLOW : ULY_OK;
    uly_layer_hooks h = {.gemm_tokens = w->seq, .norm_tokens = w->seq / s.t, .t = s.t, .kv_heads = kv_eff,
                         .attn_fwd = uly_tp_attn_fwd, .attn_bwd = uly_tp_attn_bwd, .enter_tp = enter_tp,
                         .leave_tp = leave_tp, .ctx = &s};
    uly_layer_emit(&x, &h);
    return x.overflow ? ULY_EOVERFLOW : ULY_OK;
}

const uly_strategy uly_strategy_megatron_sp = {
    .id = ULY_STRAT_MEGATRON_SP, .name = "megatron-sp", .label = "Megatron-SP", .label_short = "Megatron-SP",
    .summary = "Megatron TP+SP: all-gather / reduce-scatter of b N h around the GEMM regions",
    .uses_tp = 1, .exec = ULY_EXEC_TP_SP, .build = build,
};
