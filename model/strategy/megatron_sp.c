/* megatron_sp.c: Megatron tensor parallelism with sequence parallelism
 * (Korthikanti et al. 2022), degree t. Weights split t ways; layer norms and
 * dropout run on N/t tokens; an all-gather of b x N x h enters each GEMM
 * region (attention, MLP) and a reduce-scatter leaves it: 4(t-1)/t b N h
 * bytes forward; backward the collectives swapped, and each region's input
 * gathered again for its weight gradient (a rank keeps only its N/t rows
 * of it): 6(t-1)/t b N h. All on the critical path. */
#include "megatron.h"

static const uly_op_type ag_types[2][2] = {{ULY_OPT_SP_AG_ATTN, ULY_OPT_SP_AG_MLP}, {ULY_OPT_SP_AG_DATTN, ULY_OPT_SP_AG_DMLP}};
static const uly_op_type rs_types[2][2] = {{ULY_OPT_SP_RS_ATTN, ULY_OPT_SP_RS_MLP}, {ULY_OPT_SP_RS_DATTN, ULY_OPT_SP_RS_DMLP}};

void uly_tp_sp_sizes(const uly_bctx *x, uly_tp_sec *s)
{
    /* of b x tokens x h: each rank contributes its tokens/t */
    const int64_t h = x->m->hidden;
    if (!(uly_prod_fits(5, (int64_t[]){s->t - 1, x->b, s->tokens_t, h, x->beta}, &s->sp_bytes) &
          uly_prod_fits(3, (int64_t[]){x->b, s->tokens_t, h}, &s->ag_elems) &
          uly_prod_fits(3, (int64_t[]){x->b, s->tokens, h}, &s->rs_elems)))
        s->sp_bytes = s->ag_elems = s->rs_elems = ULY_SIZE_UNFIT;
}

static void gather(uly_bctx *x, uly_op_type type, uly_phase ph, int recomp, const uly_tp_sec *s)
{
    uly_emit_comm(x, type, ph, recomp, ULY_COLL_ALLGATHER, ULY_GROUP_TP, s->sp_bytes, s->ag_elems, 1);
}

static void scatter(uly_bctx *x, uly_op_type type, uly_phase ph, int recomp, const uly_tp_sec *s)
{
    uly_emit_comm(x, type, ph, recomp, ULY_COLL_REDUCE_SCATTER, ULY_GROUP_TP, s->sp_bytes, s->rs_elems, 1);
}

/* forward: gather in; backward (the same hook point walked in reverse):
 * reduce-scatter the input's gradient */
void uly_tp_sp_enter(uly_bctx *x, uly_phase ph, int recomp, int which, void *tp_ctx)
{
    const uly_tp_sec *s = tp_ctx;
    if (s->t <= 1) return;
    const int bwd = ph == ULY_PHASE_BWD;
    if (bwd) scatter(x, rs_types[1][which], ph, recomp, s);
    else gather(x, ag_types[0][which], ph, recomp, s);
}

void uly_tp_sp_leave(uly_bctx *x, uly_phase ph, int recomp, int which, void *tp_ctx)
{
    const uly_tp_sec *s = tp_ctx;
    if (s->t <= 1) return;
    const int bwd = ph == ULY_PHASE_BWD;
    if (bwd) gather(x, ag_types[1][which], ph, recomp, s);
    else scatter(x, rs_types[0][which], ph, recomp, s);
}

/* backward, before the column-parallel GEMM's: sequence parallelism keeps
 * only this rank's 1/t of the region's input (the norm's output), and its
 * weight gradient needs all of it, so the input is gathered again, the
 * forward's all-gather once more (Megatron-LM's
 * LinearWithGradAccumulationAndAsyncCommunication.backward and
 * TransformerEngine's LayerNormLinear backward: gather_along_first_dim of
 * the saved input) */
void uly_tp_sp_regather(uly_bctx *x, int which, void *tp_ctx)
{
    static const uly_op_type types[2] = {ULY_OPT_SP_REGATHER_ATTN, ULY_OPT_SP_REGATHER_MLP};
    const uly_tp_sec *s = tp_ctx;
    if (s->t <= 1) return;
    gather(x, types[which], ULY_PHASE_BWD, 0, s);
}

void uly_tp_attn_fwd(uly_bctx *x, int recomp, void *ctx)
{
    const uly_tp_layer *s = ctx;
    uly_emit_attn(x, ULY_OPT_ATTN_FWD, recomp ? ULY_PHASE_BWD : ULY_PHASE_FWD, recomp, &s->attn, 0);
}

void uly_tp_attn_bwd(uly_bctx *x, void *ctx)
{
    const uly_tp_layer *s = ctx;
    uly_emit_attn(x, ULY_OPT_ATTN_BWD, ULY_PHASE_BWD, 0, &s->attn, 1);
}

/* What every t-way split shares: the heads check, the KV replication
 * (returned: KV heads over the t ranks), N divisible by seq_div (0: not
 * checked here), TP spanning nodes, and the K,V
 * weights each rank holds and projects when KV heads are replicated (k < t):
 * h d k_eff / t each instead of h d k / t. */
static int64_t tp_split(uly_bctx *x, int64_t t, int64_t seq_div)
{
    const uly_model *m = x->m;
    uly_plan *p = x->p;
    uly_check_heads(x, m->heads, t);
    const int64_t kv_eff = uly_kv_eff(x, m->kv_heads, m->heads, t);
    if (seq_div) uly_check_seq(x, 1, seq_div, 0);
    if (t > x->c->gpus_per_node)
        uly_reason_add(x, ULY_R_TP_SPANS_NODES, 0, (double)t, (double)x->c->gpus_per_node, 0);
    const double kv_extra = (double)m->hidden * (double)m->head_dim * 2.0 * (double)(kv_eff - m->kv_heads) / (double)t;
    p->layer_params_rank += kv_extra;
    p->model_params_rank += kv_extra * (double)p->stage_layers; /* the layers this rank's stage holds */
    p->act_tp = t;
    p->logit_vocab = (m->vocab + t - 1) / t;
    return kv_eff;
}

int64_t uly_tp_setup(uly_bctx *x, uly_tp_layer *s, int split_seq)
{
    const uly_model *m = x->m;
    uly_plan *p = x->p;
    const int64_t t = s->sec.t, n = x->w->seq;
    const int64_t kv_eff = tp_split(x, t, split_seq ? t : 0);
    uly_attn_shape_init(x, &s->attn, s->sec.heads_t, n, n, 1, x->w->causal ? 0.5 : 1.0, 1.0);
    p->dims.cp = 1;
    p->dims.heads = m->heads / t;
    p->dims.kv_eff = kv_eff;
    p->dims.kv_heads = kv_eff / t;
    p->dims.attn_q = x->w->seq;
    p->dims.attn_kv = x->w->seq;
    p->act_cp = 1;
    p->logit_tokens = x->w->seq;
    return kv_eff;
}

void uly_cp_tp_split(uly_bctx *x, uly_cp_tp *tp)
{
    const uly_model *m = x->m;
    const int64_t t = tp->sec.t;
    tp->kv_eff = tp_split(x, t, 0);
    tp->heads = m->heads / t;
    tp->kv_heads = tp->kv_eff / t;
    x->p->act_sp = 1;
}

static uly_status build(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                        const uly_layout *l, uly_plan *p, uly_reason *reasons, int *n_reasons)
{
    uly_bctx x;
    uly_bctx_init(&x, m, w, c, l, p, reasons, n_reasons);
    uly_tp_layer s;
    uly_tp_sec_init(&x, l->tp, w->seq, 1, &s.sec);
    const int64_t kv_eff = uly_tp_setup(&x, &s, 1);
    p->dims.tokens = w->seq / s.sec.t;
    p->act_sp = 1;
    p->act_tokens = w->seq / s.sec.t;
    /* the gathered b x N x h input (its gradient is backward's working set) */
    p->comm_buf_bytes = s.sec.t > 1 ? (double)x.beta * (double)x.b * (double)w->seq * (double)m->hidden : 0;
    if (uly_has_fatal(&x)) return x.overflow ? ULY_EOVERFLOW : ULY_OK;
    uly_layer_hooks h = {.gemm_tokens = w->seq, .norm_tokens = w->seq / s.sec.t, .t = s.sec.t, .kv_heads = kv_eff,
                         .attn_fwd = uly_tp_attn_fwd, .attn_bwd = uly_tp_attn_bwd, .enter_tp = uly_tp_sp_enter,
                         .leave_tp = uly_tp_sp_leave, .regather_tp = uly_tp_sp_regather, .ctx = &s,
                         .tp_ctx = &s.sec};
    uly_layer_emit(&x, &h);
    return x.overflow ? ULY_EOVERFLOW : ULY_OK;
}

const uly_strategy uly_strategy_megatron_sp = {
    .id = ULY_STRAT_MEGATRON_SP, .name = "megatron-sp", .label = "Megatron-SP", .label_short = "Megatron-SP",
    .summary = "Megatron TP+SP: all-gather / reduce-scatter of b N h around the GEMM regions",
    .uses_tp = 1, .exec = ULY_EXEC_TP_SP, .build = build,
};
