/* hx_nccl_layer.c: the nccl backend's layer around the attention (as
 * hx_layer.c on the CPU): norms, projections and the MLP as cuBLAS GEMMs and
 * the small kernels of hx_nccl_kern.cu on the run's 16-bit tensors; the
 * per-model ops (embedding, logits, loss); Adam on float32 master values;
 * the communication ops through kern_nccl (Megatron-SP's gathers and
 * reduce-scatters over TP, Ulysses all-to-alls, ZeRO gathers and
 * reduce-scatters, the DP all-reduce, the stage transfers);
 * and the handler table of all of these by op type. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <string.h>

#include "hx_nccl.h"

/* ---------------------------------------------------------------- GEMM */

int hn_gemm(const hn *H, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const void *a, int64_t lda,
            const void *b, int64_t ldb, float beta, void *cc, int64_t ldc)
{
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || lda > INT32_MAX || ldb > INT32_MAX || ldc > INT32_MAX)
        return hx_fail("GEMM %lld x %lld x %lld: too large for cuBLAS's int interface", (long long)m, (long long)n,
                       (long long)k);
    return HN_K(kern_cuda_gemm(H->blas, ta != 0, tb != 0, (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb,
                               H->ct, beta, cc, (int)ldc, H->ct));
}

/* ------------------------------------------------------- layer handlers */

#define W(c, off) hn_at(H, H->wt, (c)->off)
#define GW(c, off) hn_at(H, H->gwt, (c)->off)
#define RMS_EPS 1e-6f

static int g_ln1(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    (void)op;
    return HN_CUDA(hxk_rms_fwd(H->ct, c->Rt, c->h, H->X, W(c, off_g1), H->Y1, H->rms1, RMS_EPS, H->cs));
}

/* Sequence parallelism's gathered GEMM input: spent once the forward GEMM
 * has read it (a buffer the next gather reuses, as Megatron-LM's global
 * memory buffer): all bits set (NaN in every float type), so the weight
 * gradient reads what backward's sp_regather_* brings back; on the checked
 * pass only (the timed passes measure the GEMM) */
static int sp_input_spent(const hx_ctx *c, void *gathered)
{
    const hn *H = c->be_state;
    if (!c->sp || c->pass != 0) return HX_OK;
    return HN_CUDA(cudaMemsetAsync(gathered, 0xFF, (size_t)(c->Rg * c->h * H->es), H->cs));
}

static int g_qkv_proj(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    const int64_t ld = c->qc + 2 * c->kc, kvb = c->kv_rows * c->Hkv * c->d;
    const void *Wq = W(c, off_wqkv), *Wk = hn_at(H, Wq, c->qc), *Wv = hn_at(H, Wq, c->qc + c->kc);
    HX_TRY(hn_linear(c, op, HN_GRAD_NONE, 0, 0, c->Rg, c->qc, c->h, 1.0f, H->Y1g, c->h, Wq, ld, 0.0f, H->Q, c->qc));
    HX_TRY(hn_linear(c, op, HN_GRAD_NONE, 0, 0, c->Rg, c->kc, c->h, 1.0f, H->Y1g, c->h, Wk, ld, 0.0f, H->K, c->kc));
    HX_TRY(hn_linear(c, op, HN_GRAD_NONE, 0, 0, c->Rg, c->kc, c->h, 1.0f, H->Y1g, c->h, Wv, ld, 0.0f, H->V, c->kc));
    HX_TRY(sp_input_spent(c, H->Y1g));
    if (c->mode == ULY_EXEC_A2A) {
        HX_TRY(hn_map_run(H, &H->m_pq, 0, H->s_q, H->ct, H->Q, H->ct));
        HX_TRY(hn_map_run(H, &H->m_pk, 0, H->s_k, H->ct, H->K, H->ct));
        HX_TRY(hn_map_run(H, &H->m_pk, 0, H->s_v, H->ct, H->V, H->ct));
    } else {
        HX_TRY(hn_map_run(H, &H->m_tq, 0, H->qa, H->ct, H->Q, H->ct));
        HX_TRY(hn_map_run(H, &H->m_tk, 0, H->kv_own, H->ct, H->K, H->ct));
        HX_TRY(hn_map_run(H, &H->m_tk, 0, hn_at(H, H->kv_own, kvb), H->ct, H->V, H->ct));
    }
    return HX_OK;
}

static int g_out_proj(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    if (c->mode == ULY_EXEC_A2A) HX_TRY(hn_map_run(H, &H->m_pq, 1, H->O, H->ct, H->r_o, H->ct));
    return hn_linear(c, op, HN_GRAD_NONE, 0, 0, c->Rg, c->h, c->qc, 1.0f, H->O, c->qc, W(c, off_wo), c->h, 0.0f, H->Zg,
                     c->h);
}

static int g_ln2(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    (void)op;
    HX_TRY(HN_CUDA(hxk_add(H->X1, H->ct, H->X, H->ct, H->Z, H->ct, c->Rt * c->h, H->cs)));
    return HN_CUDA(hxk_rms_fwd(H->ct, c->Rt, c->h, H->X1, W(c, off_g2), H->Y2, H->rms2, RMS_EPS, H->cs));
}

static int g_mlp_up(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    HX_TRY(hn_linear(c, op, HN_GRAD_NONE, 0, 0, c->Rg, hn_f1l(c), c->h, 1.0f, H->Y2g, c->h, W(c, off_w1), hn_f1l(c),
                     0.0f, H->U, hn_f1l(c)));
    return sp_input_spent(c, H->Y2g);
}

static int g_mlp_act(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    (void)op;
    return HN_CUDA(hxk_act_fwd(H->ct, c->m.swiglu, c->Rg, c->fl, H->U, H->A, H->cs));
}

static int g_mlp_down(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    return hn_linear(c, op, HN_GRAD_NONE, 0, 0, c->Rg, c->h, c->fl, 1.0f, H->A, c->fl, W(c, off_w2), c->h, 0.0f, H->Mg,
                     c->h);
}

static int g_mlp_down_bwd(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    HX_TRY(hn_linear(c, op, HN_GRAD_A, 0, 1, c->Rg, c->fl, c->h, 1.0f, H->Gg, c->h, W(c, off_w2), c->h, 0.0f, H->dA,
                     c->fl));
    return hn_linear(c, op, HN_GRAD_B, 1, 0, c->fl, c->h, c->Rg, 1.0f, H->A, c->fl, H->Gg, c->h, 0.0f, GW(c, off_w2),
                     c->h);
}

static int g_mlp_act_bwd(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    (void)op;
    return HN_CUDA(hxk_act_bwd(H->ct, c->m.swiglu, c->Rg, c->fl, H->U, H->dA, H->dU, H->cs));
}

static int g_mlp_up_bwd(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    const int64_t w1 = hn_f1l(c);
    HX_TRY(hn_linear(c, op, HN_GRAD_A, 0, 1, c->Rg, c->h, w1, 1.0f, H->dU, w1, W(c, off_w1), w1, 0.0f, H->dY2g, c->h));
    return hn_linear(c, op, HN_GRAD_B, 1, 0, c->h, w1, c->Rg, 1.0f, H->Y2g, c->h, H->dU, w1, 0.0f, GW(c, off_w1), w1);
}

/* A norm's backward: the first (input X, its gradient dX) or the second
 * (input X1, gradient into dX1), each through the residual's gradient. */
static int norm_bwd(hx_ctx *c, const uly_op *op, int second)
{
    hn *H = c->be_state;
    (void)op;
    if (second)
        return HN_CUDA(hxk_rms_bwd(H->ct, c->Rt, c->h, H->X1, W(c, off_g2), H->rms2, H->dY2, H->G, H->dX1,
                                   GW(c, off_g2), H->dg32, H->cs));
    return HN_CUDA(hxk_rms_bwd(H->ct, c->Rt, c->h, H->X, W(c, off_g1), H->rms1, H->dY1, H->dX1, H->dX, GW(c, off_g1),
                               H->dg32, H->cs));
}

static int g_ln2_bwd(hx_ctx *c, const uly_op *op) { return norm_bwd(c, op, 1); }

static int g_out_proj_bwd(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    HX_TRY(hn_linear(c, op, HN_GRAD_A, 0, 1, c->Rg, c->qc, c->h, 1.0f, H->dX1g, c->h, W(c, off_wo), c->h, 0.0f, H->dO,
                     c->qc));
    HX_TRY(hn_linear(c, op, HN_GRAD_B, 1, 0, c->qc, c->h, c->Rg, 1.0f, H->O, c->qc, H->dX1g, c->h, 0.0f,
                     GW(c, off_wo), c->h));
    if (c->mode == ULY_EXEC_A2A) return hn_map_run(H, &H->m_pq, 0, H->s_do, H->ct, H->dO, H->ct);
    return hn_map_run(H, &H->m_tq, 0, H->doa, H->ct, H->dO, H->ct);
}

static int g_qkv_proj_bwd(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    (void)op;
    if (c->mode == ULY_EXEC_A2A) {
        HX_TRY(hn_map_run(H, &H->m_pq, 1, H->dQ, H->ct, H->r_dq, H->ct));
        HX_TRY(hn_map_run(H, &H->m_uk, 0, H->dK, H->ct, H->r_dk, H->ct));
        HX_TRY(hn_map_run(H, &H->m_uk, 0, H->dV, H->ct, H->r_dv, H->ct));
    } /* TOK: attn_bwd wrote dQ, dK, dV */
    const int64_t ld = c->qc + 2 * c->kc;
    const void *Wq = W(c, off_wqkv);
    void *dW = GW(c, off_wqkv);
    const int GA = HN_GRAD_A, GB = HN_GRAD_B;
    HX_TRY(hn_linear(c, op, GA, 0, 1, c->Rg, c->h, c->qc, 1.0f, H->dQ, c->qc, Wq, ld, 0.0f, H->dY1g, c->h));
    const void *Wk = hn_at(H, Wq, c->qc), *Wv = hn_at(H, Wq, c->qc + c->kc);
    HX_TRY(hn_linear(c, op, GA, 0, 1, c->Rg, c->h, c->kc, 1.0f, H->dK, c->kc, Wk, ld, 1.0f, H->dY1g, c->h));
    HX_TRY(hn_linear(c, op, GA, 0, 1, c->Rg, c->h, c->kc, 1.0f, H->dV, c->kc, Wv, ld, 1.0f, H->dY1g, c->h));
    HX_TRY(hn_linear(c, op, GB, 1, 0, c->h, c->qc, c->Rg, 1.0f, H->Y1g, c->h, H->dQ, c->qc, 0.0f, dW, ld));
    HX_TRY(hn_linear(c, op, GB, 1, 0, c->h, c->kc, c->Rg, 1.0f, H->Y1g, c->h, H->dK, c->kc, 0.0f, hn_at(H, dW, c->qc),
                     ld));
    return hn_linear(c, op, GB, 1, 0, c->h, c->kc, c->Rg, 1.0f, H->Y1g, c->h, H->dV, c->kc, 0.0f,
                     hn_at(H, dW, c->qc + c->kc), ld);
}

static int g_ln1_bwd(hx_ctx *c, const uly_op *op) { return norm_bwd(c, op, 0); }

/* ---------------------------------------------------------- per model */

static int g_embed(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    (void)op;
    return hn_map_run(H, &H->m_emb, 0, H->emb_x, H->ct, H->emb_in, H->ct);
}

static int g_logits(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    (void)op;
    return hn_gemm(H, 0, 1, c->b * c->lt, c->lv, c->h, 1.0f, H->xf, c->h, H->emb_out, c->h, 0.0f, H->logit, c->lv);
}

static int g_loss(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    (void)op;
    return HN_CUDA(hxk_loss(H->ct, c->b * c->lt, c->lv, H->logit, H->cs));
}

static int g_logits_bwd(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    (void)op;
    HX_TRY(hn_gemm(H, 0, 0, c->b * c->lt, c->h, c->lv, 1.0f, H->logit, c->lv, H->emb_out, c->h, 0.0f, H->dxf, c->h));
    return hn_gemm(H, 1, 0, c->lv, c->h, c->b * c->lt, 1.0f, H->logit, c->lv, H->xf, c->h, 0.0f, H->demb, c->h);
}

/* Adam as h_optimizer (hx_layer.c), on float32 master values; the updated
 * values go to the 16-bit weights the next gather (or the next pass) reads */
static int g_optimizer(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    (void)op;
    const float lr = 1e-5f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    const int zop = c->zg > 1;
    const void *g;
    int64_t gl;
    void *wout;
    int64_t nw = c->n_opt;
    if (!zop || c->w.zero_stage == 0) {
        g = H->gwt;
        gl = c->n_opt;
        wout = H->wt;
    } else if (c->w.zero_stage == 1) {
        g = H->gmshard;
        gl = c->model_sh;
        wout = H->wmshard;
    } else {
        g = H->gshard;
        gl = c->layer_sh;
        wout = c->w.zero_stage == 2 ? H->wmshard : H->wshard;
        if (c->w.zero_stage == 3 && nw > c->layer_sh) nw = c->layer_sh;
    }
    const int step = ++c->adam_step;
    const float c1 = 1.0f - powf(b1, (float)step), c2 = 1.0f - powf(b2, (float)step);
    return HN_CUDA(hxk_adam(H->ct, c->n_opt, g, gl, H->master, H->adam_m, H->adam_v, wout, nw, lr, b1, b2, eps, c1,
                            c2, H->cs));
}

/* --------------------------------------------------------- communication */

/* the communicator's stream waits for what the compute stream has queued
 * (the data to send), and the compute stream for the communication */
static int comm_in(hn *H, uly_group g, const uly_op *op, kern_nccl_comm **nc)
{
    if (!(*nc = H->nc[g]))
        return hx_fail("op %d (%s): no NCCL communicator for group %s", op->id, uly_op_type_name(op->type),
                       uly_group_name(g));
    return HN_K(kern_nccl_wait_for(*nc, H->cs));
}

static int comm_out(hn *H, kern_nccl_comm *nc) { return HN_K(kern_nccl_make_wait(nc, H->cs)); }

static int g_a2a(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    int64_t *bytes = &c->st[op->id].bytes_pass;
    const size_t nq = (size_t)(c->Rg * (c->gq / c->u) * c->d), nk = (size_t)(c->Rg * (c->kv_eff / c->u) * c->d);
    const char *nm = uly_op_type_name(op->type);
    if (c->mode != ULY_EXEC_A2A)
        return hx_fail("op %s: no Ulysses all-to-all in mode %s", nm, uly_exec_mode_name(c->mode));
    const void *s;
    void *r;
    size_t n = nq;
    switch (op->type) {
    case ULY_OPT_A2A_Q: s = H->s_q, r = H->r_q; break;
    case ULY_OPT_A2A_K: s = H->s_k, r = H->r_k, n = nk; break;
    case ULY_OPT_A2A_V: s = H->s_v, r = H->r_v, n = nk; break;
    case ULY_OPT_A2A_O: s = H->s_o, r = H->r_o; break;
    case ULY_OPT_A2A_DO: s = H->s_do, r = H->r_do; break;
    case ULY_OPT_A2A_DQ: s = H->s_dq, r = H->r_dq; break;
    case ULY_OPT_A2A_DK: s = H->s_dk, r = H->r_dk, n = nk; break;
    case ULY_OPT_A2A_DV: s = H->s_dv, r = H->r_dv, n = nk; break;
    default: return hx_fail("no all-to-all handler for op %s", nm);
    }
    kern_nccl_comm *nc;
    HX_TRY(comm_in(H, ULY_GROUP_ULYSSES, op, &nc));
    HX_TRY(HN_K(kern_nccl_alltoall(nc, s, r, n, H->ct, bytes)));
    return comm_out(H, nc);
}

/* Megatron-SP's collectives over the TP group (as hx_layer.c's coll_bufs):
 * the all-gather of this rank's b x T x h rows into the GEMM side entering
 * a GEMM region, the reduce-scatter of the GEMM side's partial sums back to
 * the token side leaving it (swapped in backward) */
static int g_sp(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    const char *nm = uly_op_type_name(op->type);
    if (!c->sp) return hx_fail("op %s: no TP+SP gathers in this run (tp %lld)", nm, (long long)c->t);
    const void *s;
    void *r;
    int gather = 1;
    switch (op->type) {
    case ULY_OPT_SP_AG_ATTN: s = H->Y1, r = H->Y1g; break;
    case ULY_OPT_SP_AG_MLP: s = H->Y2, r = H->Y2g; break;
    case ULY_OPT_SP_AG_DMLP: s = H->G, r = H->Gg; break;
    case ULY_OPT_SP_AG_DATTN: s = H->dX1, r = H->dX1g; break;
    case ULY_OPT_SP_RS_ATTN: s = H->Zg, r = H->Z, gather = 0; break;
    case ULY_OPT_SP_RS_MLP: s = H->Mg, r = H->M, gather = 0; break;
    case ULY_OPT_SP_RS_DMLP: s = H->dY2g, r = H->dY2, gather = 0; break;
    case ULY_OPT_SP_RS_DATTN: s = H->dY1g, r = H->dY1, gather = 0; break;
    case ULY_OPT_SP_REGATHER_ATTN: s = H->Y1, r = H->Y1g; break;
    case ULY_OPT_SP_REGATHER_MLP: s = H->Y2, r = H->Y2g; break;
    default: return hx_fail("no TP+SP handler for op %s", nm);
    }
    const size_t n = (size_t)(c->Rt * c->h);
    int64_t *bytes = &c->st[op->id].bytes_pass;
    kern_nccl_comm *nc;
    HX_TRY(comm_in(H, ULY_GROUP_TP, op, &nc));
    if (gather) HX_TRY(HN_K(kern_nccl_allgather(nc, s, r, n, H->ct, bytes)));
    else HX_TRY(HN_K(kern_nccl_reduce_scatter(nc, s, r, n, H->ct, bytes)));
    return comm_out(H, nc);
}

/* ZeRO over the data x sequence group: the weights' all-gather
 * (zero_gather_w) or the gradients' reduce-scatter (zero_rs_grad), once per
 * step over the model-level shards (phase step: ZeRO-1/2) or per layer over
 * the layer's (ZeRO-2/3) */
static int g_zero(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    const int per_step = op->phase == ULY_PHASE_STEP, gather = op->type == ULY_OPT_ZERO_GATHER_W;
    void *shard = gather ? (per_step ? H->wmshard : H->wshard) : (per_step ? H->gmshard : H->gshard);
    const size_t n = (size_t)(per_step ? c->model_sh : c->layer_sh);
    if (!shard)
        return hx_fail("op %d %s: no %s %s shard (zero stage %d)", op->id, uly_op_type_name(op->type),
                       per_step ? "model-level" : "layer", gather ? "weight" : "gradient", c->w.zero_stage);
    int64_t *bytes = &c->st[op->id].bytes_pass;
    kern_nccl_comm *nc;
    HX_TRY(comm_in(H, ULY_GROUP_ZERO, op, &nc));
    if (gather) HX_TRY(HN_K(kern_nccl_allgather(nc, shard, H->wt, n, H->ct, bytes)));
    else HX_TRY(HN_K(kern_nccl_reduce_scatter(nc, H->gwt, shard, n, H->ct, bytes)));
    return comm_out(H, nc);
}

/* The stage output (forward) or its gradient (backward) to the next (the
 * previous) stage, a ring over the stages as in hx_layer.c's h_pp. */
static int g_pp(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    const int fwd = op->phase == ULY_PHASE_FWD;
    if (!H->pp_rx)
        return hx_fail("op %d %s: no pipeline (pp %lld)", op->id, uly_op_type_name(op->type), (long long)c->l.pp);
    const hx_group *g = &c->g[ULY_GROUP_PP]; /* its NCCL communicator has the same ranks */
    kern_nccl_comm *nc;
    HX_TRY(comm_in(H, ULY_GROUP_PP, op, &nc));
    HX_TRY(HN_K(kern_nccl_sendrecv(nc, H->emb_x, fwd ? g->next : g->prev, H->pp_rx, fwd ? g->prev : g->next,
                                   (size_t)(c->b * c->plan.act_tokens * c->h), H->ct, &c->st[op->id].bytes_pass)));
    return comm_out(H, nc);
}

static int g_dp_allreduce(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    kern_nccl_comm *nc;
    HX_TRY(comm_in(H, ULY_GROUP_ZERO, op, &nc));
    HX_TRY(HN_K(kern_nccl_allreduce(nc, H->gwt, (size_t)(c->model_sh * c->zg), H->ct, &c->st[op->id].bytes_pass)));
    return comm_out(H, nc);
}

/* ---------------------------------------------------------------- table */

const hx_handler hn_layer_handlers[ULY_OPT_COUNT] = {
    /* layer */
    [ULY_OPT_LN1] = g_ln1, [ULY_OPT_QKV_PROJ] = g_qkv_proj, [ULY_OPT_OUT_PROJ] = g_out_proj,
    [ULY_OPT_LN2] = g_ln2, [ULY_OPT_MLP_UP] = g_mlp_up, [ULY_OPT_MLP_ACT] = g_mlp_act,
    [ULY_OPT_MLP_DOWN] = g_mlp_down, [ULY_OPT_MLP_DOWN_BWD] = g_mlp_down_bwd,
    [ULY_OPT_MLP_ACT_BWD] = g_mlp_act_bwd, [ULY_OPT_MLP_UP_BWD] = g_mlp_up_bwd,
    [ULY_OPT_LN2_BWD] = g_ln2_bwd, [ULY_OPT_OUT_PROJ_BWD] = g_out_proj_bwd,
    [ULY_OPT_QKV_PROJ_BWD] = g_qkv_proj_bwd, [ULY_OPT_LN1_BWD] = g_ln1_bwd,
    /* per model and step */
    [ULY_OPT_EMBED] = g_embed, [ULY_OPT_LOGITS] = g_logits, [ULY_OPT_LOSS] = g_loss,
    [ULY_OPT_LOGITS_BWD] = g_logits_bwd, [ULY_OPT_OPTIMIZER] = g_optimizer,
    [ULY_OPT_ZERO_GATHER_W] = g_zero, [ULY_OPT_ZERO_RS_GRAD] = g_zero,
    [ULY_OPT_DP_ALLREDUCE_GRAD] = g_dp_allreduce, [ULY_OPT_PP_SEND_ACT] = g_pp,
    [ULY_OPT_PP_SEND_GRAD] = g_pp,
    /* communication and attention */
    [ULY_OPT_SP_AG_MLP] = g_sp, [ULY_OPT_SP_AG_DMLP] = g_sp, [ULY_OPT_SP_RS_MLP] = g_sp, [ULY_OPT_SP_RS_DMLP] = g_sp,
    [ULY_OPT_A2A_Q] = g_a2a, [ULY_OPT_A2A_K] = g_a2a, [ULY_OPT_A2A_V] = g_a2a,
    [ULY_OPT_A2A_O] = g_a2a, [ULY_OPT_A2A_DO] = g_a2a, [ULY_OPT_A2A_DQ] = g_a2a,
    [ULY_OPT_A2A_DK] = g_a2a, [ULY_OPT_A2A_DV] = g_a2a, [ULY_OPT_SP_AG_ATTN] = g_sp,
    [ULY_OPT_SP_AG_DATTN] = g_sp, [ULY_OPT_SP_RS_ATTN] = g_sp, [ULY_OPT_SP_RS_DATTN] = g_sp,
    [ULY_OPT_SP_REGATHER_ATTN] = g_sp, [ULY_OPT_SP_REGATHER_MLP] = g_sp,
};
