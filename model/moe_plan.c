/* moe_plan.c: the routed experts of a MoE layer as ops (docs/model.md,
 * "Mixture of experts"): the router, the tokens permuted by expert,
 * dispatched to the experts' ranks, gathered over expert tensor
 * parallelism, the local experts' grouped GEMMs, and the way back; and
 * the layout's expert checks. The shared experts are the layer's MLP ops
 * (plan.c), the expert weights' gradient reduction a per-step op here.
 *
 * Sizes per rank, b the micro-batch, T the rank's own tokens (its norm's
 * rows: N / cp, over t as well under sequence parallelism), k the top-k,
 * E the experts, h hidden, f the expert FFN, beta bytes per element:
 *   pairs P = b T k (token, expert) pairs routed from this rank;
 *   alltoall: P h beta (ep - 1) / ep bytes leave for other EP ranks (the
 *     pairs routed to its own experts stay), each rank receives P pairs
 *     under even routing; expert TP all-gathers them: etp P pairs;
 *   allgather: the b T tokens all-gathered over EP, then over ETP
 *     ((ep etp - 1) b T h beta in all), the pairs of the local experts
 *     selected from them, etp P of them again;
 *   the E / ep local experts run etp P pairs, f / etp wide each: a grouped
 *     GEMM of E / ep products of (etp P ep / E) x h x (f / etp);
 *   the busiest rank runs imbalance (capped by the capacity factor) times
 *     the even share (crit_factor of the expert GEMMs). */
#include <math.h>

#include "internal.h"

/* Megatron-Core's own checks of an expert layout (TransformerConfig,
 * parallel_state.initialize_model_parallel): EP x ETP divides the stage's
 * ranks, EP divides the experts, and tensor parallelism beside MoE needs
 * sequence parallelism. Fatal reasons, so a search skips such layouts. */
int uly_moe_layout_check(uly_bctx *x, int64_t stage_gpus, int64_t t, int sp)
{
    const uly_model *m = x->m;
    const int64_t ep = uly_layout_ep(x->l), etp = uly_layout_etp(x->l);
    if (m->experts <= 0) {
        if (ep > 1 || etp > 1) uly_reason_add(x, ULY_R_MOE_LAYOUT, 1, 0, (double)ep, (double)etp);
        return ep == 1 && etp == 1;
    }
    if (stage_gpus % (ep * etp) != 0) {
        uly_reason_add(x, ULY_R_MOE_LAYOUT, 1, 1, (double)(ep * etp), (double)stage_gpus);
        return 0;
    }
    if (m->experts % ep != 0) {
        uly_reason_add(x, ULY_R_MOE_LAYOUT, 1, 2, (double)ep, (double)m->experts);
        return 0;
    }
    if (t > 1 && !sp) {
        uly_reason_add(x, ULY_R_MOE_LAYOUT, 1, 3, (double)t, 0);
        return 0;
    }
    return 1;
}

/* The load of the busiest expert rank over the even share: the imbalance,
 * capped by the capacity factor (its tokens past capacity dropped). */
static double moe_load(const uly_workload *w)
{
    double l = w->moe_imbalance >= 1 ? w->moe_imbalance : 1.0;
    if (w->moe_capacity > 0 && w->moe_capacity < l) l = w->moe_capacity;
    return l;
}

/* The routed experts' saved activations on the busiest rank, of `tokens`
 * tokens (b T) under expert TP etp: the gathered input of the first
 * grouped GEMM (etp P h), the activation's input (P f, twice under a
 * gated unit) and output (P f), the experts' outputs the combine weights
 * by their probabilities (P h), each P = tokens k pairs, times the load.
 * The two grouped GEMMs' inputs as TransformerEngine's GroupedLinear saves
 * them: FP8 copies under FP8 (uly_saved_gemm_input_bytes). */
double uly_moe_act_bytes(const uly_model *m, const uly_workload *w, double tokens, int64_t etp)
{
    const double beta = uly_dtype_bytes(w->dtype), P = tokens * (double)m->topk, h = (double)m->hidden;
    const double q = uly_saved_gemm_input_bytes(w, beta);
    const double f = (double)m->moe_ffn_hidden, e = etp > 1 ? (double)etp : 1.0;
    const double kept = w->moe_capacity > 0 && w->moe_capacity < 1 ? w->moe_capacity : 1.0;
    return moe_load(w) * kept * P * (q * e * h + beta * f * (m->swiglu ? 2.0 : 1.0) + q * f + beta * h);
}

void uly_moe_shape_init(uly_bctx *x, int64_t norm_tokens, uly_moe_shape *s)
{
    const uly_model *m = x->m;
    const int64_t ep = uly_layout_ep(x->l), etp = uly_layout_etp(x->l);
    const double b = (double)x->b, beta = (double)x->beta, h = (double)m->hidden;
    const double T = b * (double)norm_tokens, k = (double)m->topk, E = (double)m->experts;
    const double f = (double)m->moe_ffn_hidden / (double)etp, gated = m->swiglu ? 2.0 : 1.0;
    /* dropping past capacity under even routing: a capacity factor under 1
     * keeps that share of the pairs */
    const double kept = x->w->moe_capacity > 0 && x->w->moe_capacity < 1 ? x->w->moe_capacity : 1.0;
    const double P = T * k * kept, local = E / (double)ep, rows = (double)etp * P / local;
    s->ep = ep, s->etp = etp;
    s->load = moe_load(x->w);
    s->router = uly_gemm_shape_of(x, T, E, h);
    const double g[2][3] = {{local, rows, f * gated}, {local, rows, h}};
    for (int i = 0; i < 2; i++) {
        const double bt = g[i][0], mm = g[i][1], nn = g[i][2], kk = i == 0 ? h : f;
        uly_gemm_shape *o = i == 0 ? &s->up : &s->down;
        *o = (uly_gemm_shape){2.0 * bt * mm * nn * kk, beta * bt * (mm * kk + kk * nn + mm * nn), mm * nn * kk,
                              {bt, mm, nn, kk}};
    }
    const double ep_rows = (double)etp * P; /* pairs through this rank's experts */
    s->act_bytes[0] = beta * ep_rows * f * (gated + 1.0);
    s->act_bytes[1] = 2.0 * s->act_bytes[0];
    const double act_elems = ep_rows * f;
    s->act_elems = act_elems < 0x1p62 ? (int64_t)act_elems : 0;
    if (!(act_elems < 0x1p62)) x->overflow = 1;
    /* the permutation reads the tokens and writes the pairs (alltoall), or
     * picks the local pairs out of the gathered tokens (allgather); the
     * unpermutation the reverse, summing each token's k outputs */
    const int a2a = x->w->moe_dispatcher == ULY_MOE_ALLTOALL;
    s->perm_bytes = beta * h * (a2a ? T + P : 2.0 * ep_rows);
    /* the transfers, per rank: pairs or tokens out over EP, then over ETP */
    const double pair_bytes = beta * h * P, tok_bytes = beta * h * T;
    const double disp = a2a ? pair_bytes * (double)(ep - 1) / (double)ep : tok_bytes * (double)(ep - 1);
    const double etp_in = a2a ? pair_bytes : tok_bytes * (double)ep;
    const double big = 0x1p62;
    if (!(disp < big && etp_in * (double)etp < big)) {
        x->overflow = 1;
        s->disp_bytes = s->etp_bytes = s->disp_elems = s->etp_elems = 0;
        return;
    }
    s->disp_bytes = (int64_t)llround(disp);
    s->disp_elems = (int64_t)llround((a2a ? P : T) * h);
    s->etp_bytes = (int64_t)llround(etp_in * (double)(etp - 1));
    s->etp_elems = (int64_t)llround(etp_in / beta);
    s->coll = a2a ? ULY_COLL_ALLTOALL : ULY_COLL_ALLGATHER;
    s->coll_back = a2a ? ULY_COLL_ALLTOALL : ULY_COLL_REDUCE_SCATTER;
}

static uly_op *expert_gemm(uly_bctx *x, uly_op_type type, uly_phase ph, int recomp, const uly_gemm_shape *g,
                           double mult, double load)
{
    uly_op *o = uly_emit_gemm_shape(x, type, ph, recomp, g, mult);
    o->crit_factor = load;
    return o;
}

void uly_moe_fwd(uly_bctx *x, const uly_moe_shape *s, uly_phase ph, int recomp)
{
    uly_emit_gemm_shape(x, ULY_OPT_ROUTER, ph, recomp, &s->router, 1.0);
    uly_emit_elem(x, ULY_OPT_MOE_PERMUTE, ph, recomp, s->perm_bytes, 0);
    if (s->ep > 1) uly_emit_comm(x, ULY_OPT_MOE_DISPATCH, ph, recomp, s->coll, ULY_GROUP_EP, s->disp_bytes, s->disp_elems, 1);
    if (s->etp > 1)
        uly_emit_comm(x, ULY_OPT_MOE_ETP_AG, ph, recomp, ULY_COLL_ALLGATHER, ULY_GROUP_ETP, s->etp_bytes, s->etp_elems, 1);
    expert_gemm(x, ULY_OPT_EXPERT_UP, ph, recomp, &s->up, 1.0, s->load);
    uly_op *a = uly_emit_elem(x, ULY_OPT_EXPERT_ACT, ph, recomp, s->act_bytes[0], s->act_elems);
    a->crit_factor = s->load;
    expert_gemm(x, ULY_OPT_EXPERT_DOWN, ph, recomp, &s->down, 1.0, s->load);
    if (s->etp > 1)
        uly_emit_comm(x, ULY_OPT_MOE_ETP_RS, ph, recomp, ULY_COLL_REDUCE_SCATTER, ULY_GROUP_ETP, s->etp_bytes,
                      s->etp_elems * s->etp, 1);
    if (s->ep > 1)
        uly_emit_comm(x, ULY_OPT_MOE_COMBINE, ph, recomp, s->coll_back, ULY_GROUP_EP, s->disp_bytes,
                      s->coll_back == ULY_COLL_REDUCE_SCATTER ? s->disp_elems * s->ep : s->disp_elems, 1);
    uly_emit_elem(x, ULY_OPT_MOE_UNPERMUTE, ph, recomp, s->perm_bytes, 0);
}

void uly_moe_bwd(uly_bctx *x, const uly_moe_shape *s)
{
    const uly_phase ph = ULY_PHASE_BWD;
    /* each transfer's mirror: an all-to-all stays one, an all-gather's
     * gradient is a reduce-scatter and the reverse */
    uly_emit_elem(x, ULY_OPT_MOE_UNPERMUTE_BWD, ph, 0, s->perm_bytes, 0);
    if (s->ep > 1)
        uly_emit_comm(x, ULY_OPT_MOE_COMBINE_BWD, ph, 0, s->coll, ULY_GROUP_EP, s->disp_bytes, s->disp_elems, 1);
    if (s->etp > 1)
        uly_emit_comm(x, ULY_OPT_MOE_ETP_RS_BWD, ph, 0, ULY_COLL_ALLGATHER, ULY_GROUP_ETP, s->etp_bytes, s->etp_elems, 1);
    expert_gemm(x, ULY_OPT_EXPERT_DOWN_BWD, ph, 0, &s->down, 2.0, s->load);
    uly_op *a = uly_emit_elem(x, ULY_OPT_EXPERT_ACT_BWD, ph, 0, s->act_bytes[1], s->act_elems);
    a->crit_factor = s->load;
    expert_gemm(x, ULY_OPT_EXPERT_UP_BWD, ph, 0, &s->up, 2.0, s->load);
    if (s->etp > 1)
        uly_emit_comm(x, ULY_OPT_MOE_ETP_AG_BWD, ph, 0, ULY_COLL_REDUCE_SCATTER, ULY_GROUP_ETP, s->etp_bytes,
                      s->etp_elems * s->etp, 1);
    if (s->ep > 1)
        uly_emit_comm(x, ULY_OPT_MOE_DISPATCH_BWD, ph, 0, s->coll_back, ULY_GROUP_EP, s->disp_bytes,
                      s->coll_back == ULY_COLL_REDUCE_SCATTER ? s->disp_elems * s->ep : s->disp_elems, 1);
    uly_emit_elem(x, ULY_OPT_MOE_PERMUTE_BWD, ph, 0, s->perm_bytes, 0);
    uly_emit_gemm_shape(x, ULY_OPT_ROUTER_BWD, ph, 0, &s->router, 2.0);
}

/* The parameters a rank holds of a MoE model: the routed experts of its
 * stage's MoE layers split over EP x ETP, sharded over the expert
 * data-parallel group (the stage's ranks over EP x ETP), apart from the
 * rest, split over TP (uly_plan_build's counts, which hold every expert,
 * less them). A pipeline stage is taken to hold the average layer's
 * non-expert parameters and min(its layers, the MoE layers) MoE layers. */
void uly_moe_plan_params(uly_bctx *x)
{
    const uly_model *m = x->m;
    uly_plan *p = x->p;
    const double t = (double)x->l->tp, pe = uly_expert_params(m);
    const int64_t moe = uly_moe_layers(m);
    const double head = (double)m->vocab * (double)m->hidden + (double)m->hidden;
    const double emb = (double)m->vocab * (double)m->hidden * (m->tied_embeddings ? 1.0 : 2.0) + (double)m->hidden;
    const double rest = uly_model_params(m) - (double)moe * pe;
    p->layer_params_rank = (uly_layer_params(m) - pe) / t;
    p->model_params_rank = rest / t;
    if (x->l->pp > 1) p->model_params_rank = ((double)p->stage_layers * (rest - emb) / (double)m->layers + head) / t;
    const int64_t held = p->stage_layers < moe ? p->stage_layers : moe;
    p->expert_params_rank = (double)held * uly_layer_expert_params_rank(m, x->l);
    /* over the expert data-parallel group, as placed (1 where EP x ETP does
     * not divide the stage: a fatal reason) */
    p->expert_params_shard = uly_shard_params(p->expert_params_rank, (double)p->place[ULY_GROUP_EDP].size);
    if (moe < m->layers) uly_reason_add(x, ULY_R_MOE_DENSE_LAYERS, 0, (double)(m->layers - moe), (double)m->layers, 0);
}

/* The expert weights' traffic over the expert data-parallel group, as the
 * dense parameters' over theirs (plan.c's emit_zero_ops), DeepSpeed-MoE's
 * and Megatron-LM's: ZeRO-3 gathers a layer's local experts before its
 * forward and its backward and reduce-scatters their gradients (ZeRO 2:
 * the reduce-scatter alone); below, the gradients all-reduced (ZeRO 0) or
 * reduce-scattered (ZeRO 1) once a step, and under ZeRO 1-2 the updated
 * shards all-gathered. */
void uly_moe_emit_grads(uly_bctx *x, const uly_state_bytes *sb)
{
    const uly_plan *p = x->p;
    const int64_t g = p->place[ULY_GROUP_EDP].size;
    if (g <= 1) return;
    const int64_t sh = (int64_t)ceil(p->expert_params_shard), gw = sb->grad_wire;
    const int64_t layer_sh = (int64_t)ceil(ceil(uly_layer_expert_params_rank(x->m, x->l)) / (double)g);
    const int zero = x->w->zero_stage;
    const int32_t grad_ov = uly_grad_reduce_overlaps(x->w) ? ULY_OVERLAP_PHASE : ULY_OVERLAP_NONE;
    uly_op *o;
    if (zero >= 3) {
        const int32_t ov = uly_zero_prefetch_layers(x->w) > 0 ? ULY_OVERLAP_PHASE : ULY_OVERLAP_NONE;
        const int64_t gb = ULY_PROD(x, g - 1, layer_sh, x->beta);
        for (int ph = ULY_PHASE_FWD; ph <= ULY_PHASE_BWD; ph++) {
            o = uly_emit_comm(x, ULY_OPT_EXPERT_PARAM_GATHER, (uly_phase)ph, 0, ULY_COLL_ALLGATHER, ULY_GROUP_EDP, gb,
                              layer_sh, 1);
            o->overlaps = ov;
        }
    }
    if (zero >= 2) {
        o = uly_emit_comm(x, ULY_OPT_EXPERT_GRAD_REDUCE, ULY_PHASE_BWD, 0, ULY_COLL_REDUCE_SCATTER, ULY_GROUP_EDP,
                          ULY_PROD(x, g - 1, layer_sh, gw), ULY_PROD(x, layer_sh, g), 1);
        o->overlaps = grad_ov;
    } else {
        o = zero == 0 ? uly_emit_comm(x, ULY_OPT_EXPERT_GRAD_REDUCE, ULY_PHASE_STEP, 0, ULY_COLL_ALLREDUCE, ULY_GROUP_EDP,
                                      ULY_PROD(x, 2, g - 1, sh, gw), ULY_PROD(x, sh, g), 1)
                      : uly_emit_comm(x, ULY_OPT_EXPERT_GRAD_REDUCE, ULY_PHASE_STEP, 0, ULY_COLL_REDUCE_SCATTER,
                                      ULY_GROUP_EDP, ULY_PROD(x, g - 1, sh, gw), ULY_PROD(x, sh, g), 1);
        o->per_step = o->per_model = 1;
        o->overlaps = grad_ov;
    }
    if (zero == 1 || zero == 2) {
        o = uly_emit_comm(x, ULY_OPT_EXPERT_PARAM_GATHER, ULY_PHASE_STEP, 0, ULY_COLL_ALLGATHER, ULY_GROUP_EDP,
                          ULY_PROD(x, g - 1, sh, x->beta), sh, 1);
        o->per_step = o->per_model = 1;
        if (x->w->overlap_param_gather) o->overlaps = ULY_OVERLAP_PHASE;
    }
}

/* The MoE transfers of a layer: the ops between the router and the
 * unpermutation that move tokens (dispatch, combine, the expert-TP
 * gathers), forward, recompute and backward. */
int64_t uly_moe_bytes(const uly_plan *p)
{
    int64_t sum = 0;
    for (int i = 0; i < p->n_ops; i++) {
        const uly_op *o = &p->ops[i];
        const uly_group g = o->group;
        if (o->kind == ULY_OP_COMM && (g == ULY_GROUP_EP || g == ULY_GROUP_ETP))
            sum += o->bytes_sent;
    }
    return sum;
}
