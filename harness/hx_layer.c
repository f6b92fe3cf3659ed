/* hx_layer.c: the transformer layer around the attention, executed for real.
 *
 * The layer (pre-norm, RMSNorm with gains, no biases):
 *   Y1 = rms(X) g1;  [Q K V] = Y1 [Wq Wk Wv];  O = attention(Q, K, V)
 *   X1 = X + O Wo;   Y2 = rms(X1) g2;  U = Y2 W1;  A = gelu(U) (or SwiGLU)
 *   M = A W2 (the layer output X1 + M is the next layer's input; its
 *   gradient G is a seeded tensor, so the check does not depend on a loss).
 * Token-local ops run on this rank's rows; under Megatron TP+SP (alone, or
 * inside a context-parallel strategy: its CP rank's tokens split t ways)
 * the GEMMs run on the TP group's gathered rows with column/row-split
 * weights; under plain Megatron TP every rank holds all rows, and the
 * row-split GEMMs' partial outputs (and, backward, the input gradients) are
 * all-reduced in place. Weight gradients go to the flat gradient buffer in
 * the weights' layout. */
#include <math.h>
#include <string.h>

#include "hx.h"

#define RMS_EPS 1e-6f

int hx_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
            const float *b, int64_t ldb, float beta, float *cc, int64_t ldc)
{
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || lda > INT32_MAX || ldb > INT32_MAX || ldc > INT32_MAX)
        return hx_fail("GEMM %lld x %lld x %lld: too large for the BLAS interface", (long long)m, (long long)n,
                       (long long)k);
    kern_status s = kern_gemm_f32(ta != 0, tb != 0, (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb, beta,
                                  cc, (int)ldc);
    if (s != KERN_OK)
        return hx_fail("GEMM %lld x %lld x %lld: %s", (long long)m, (long long)n, (long long)k, kern_status_str(s));
    return HX_OK;
}

/* ---------------------------------------------------------------- norms */

static void rms_fwd(int64_t rows, int64_t h, const float *x, const float *g, float *y, float *inv)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * h;
        double ss = 0;
        for (int64_t j = 0; j < h; j++) ss += (double)xr[j] * xr[j];
        const float iv = (float)(1.0 / sqrt(ss / (double)h + RMS_EPS));
        inv[r] = iv;
        float *yr = y + r * h;
        for (int64_t j = 0; j < h; j++) yr[j] = xr[j] * iv * g[j];
    }
}

/* dx = base + d rms(x) g / dx . dy;  dg += sum_rows dy x inv */
static void rms_bwd(int64_t rows, int64_t h, const float *x, const float *g, const float *inv, const float *dy,
                    const float *base, float *dx, float *dg)
{
    for (int64_t j = 0; j < h; j++) dg[j] = 0;
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * h, *dyr = dy + r * h;
        const float iv = inv[r];
        double dot = 0;
        for (int64_t j = 0; j < h; j++) {
            const float xh = xr[j] * iv;
            dot += (double)(dyr[j] * g[j]) * xh;
            dg[j] += dyr[j] * xh;
        }
        const float mean = (float)(dot / (double)h);
        float *dxr = dx + r * h;
        const float *br = base + r * h;
        for (int64_t j = 0; j < h; j++) dxr[j] = br[j] + iv * (dyr[j] * g[j] - xr[j] * iv * mean);
    }
}

/* ------------------------------------------------------------ handlers */

#define W(c, off) ((c)->wt + (c)->off)
#define GW(c, off) ((c)->gwt + (c)->off)

static int h_ln1(hx_ctx *c, const uly_op *op)
{
    (void)op;
    rms_fwd(c->Rt, c->h, c->X, W(c, off_g1), c->Y1, c->rms1);
    return HX_OK;
}

/* Sequence parallelism's gathered GEMM input lives in a buffer the next
 * gather reuses (Megatron-LM's global memory buffer), so a rank keeps only
 * its own 1/t: once the forward GEMM has read it, it is poisoned (NaN),
 * and the weight gradient reads what backward's sp_regather_* brings back.
 * A plan without the regather fails the gradient check. On the checked pass
 * only: the timed passes measure the GEMM, not the poisoning. */
static void sp_input_spent(const hx_ctx *c, float *gathered)
{
    if (!c->sp || c->pass != 0) return;
    const int64_t n = c->Rg * c->h;
    for (int64_t i = 0; i < n; i++) gathered[i] = NAN;
}

static int h_qkv_proj(hx_ctx *c, const uly_op *op)
{
    (void)op;
    const int64_t ld = c->qc + 2 * c->kc;
    const float *Wq = W(c, off_wqkv);
    HX_TRY(hx_gemm(0, 0, c->Rg, c->qc, c->h, 1.0f, c->Y1g, c->h, Wq, ld, 0.0f, c->Qg, c->qc));
    HX_TRY(hx_gemm(0, 0, c->Rg, c->kc, c->h, 1.0f, c->Y1g, c->h, Wq + c->qc, ld, 0.0f, c->Kg, c->kc));
    HX_TRY(hx_gemm(0, 0, c->Rg, c->kc, c->h, 1.0f, c->Y1g, c->h, Wq + c->qc + c->kc, ld, 0.0f, c->Vg, c->kc));
    sp_input_spent(c, c->Y1g);
    hx_stage_qkv(c);
    return HX_OK;
}

static int h_out_proj(hx_ctx *c, const uly_op *op)
{
    (void)op;
    hx_stage_o_in(c);
    return hx_gemm(0, 0, c->Rg, c->h, c->qc, 1.0f, c->Og, c->qc, W(c, off_wo), c->h, 0.0f, c->Zg, c->h);
}

static int h_ln2(hx_ctx *c, const uly_op *op)
{
    (void)op;
    const int64_t n = c->Rt * c->h;
    for (int64_t i = 0; i < n; i++) c->X1[i] = c->X[i] + c->Z[i];
    rms_fwd(c->Rt, c->h, c->X1, W(c, off_g2), c->Y2, c->rms2);
    return HX_OK;
}

static int64_t f1l(const hx_ctx *c) { return c->m.swiglu ? 2 * c->fl : c->fl; }

static int h_mlp_up(hx_ctx *c, const uly_op *op)
{
    (void)op;
    HX_TRY(hx_gemm(0, 0, c->Rg, f1l(c), c->h, 1.0f, c->Y2g, c->h, W(c, off_w1), f1l(c), 0.0f, c->Ug, f1l(c)));
    sp_input_spent(c, c->Y2g);
    return HX_OK;
}

static inline float gelu(float x)
{
    const float k0 = 0.7978845608f, k1 = 0.044715f;
    return 0.5f * x * (1.0f + tanhf(k0 * (x + k1 * x * x * x)));
}

static inline float gelu_grad(float x)
{
    const float k0 = 0.7978845608f, k1 = 0.044715f;
    const float t = tanhf(k0 * (x + k1 * x * x * x));
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * k0 * (1.0f + 3.0f * k1 * x * x);
}

static inline float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }

void hx_act_fwd(int swiglu, int64_t rows, int64_t fl, const float *ug, float *ag)
{
    const int64_t w1 = swiglu ? 2 * fl : fl;
    for (int64_t r = 0; r < rows; r++) {
        const float *u = ug + r * w1;
        float *a = ag + r * fl;
        if (swiglu)
            for (int64_t j = 0; j < fl; j++) a[j] = u[j] * sigm(u[j]) * u[fl + j];
        else
            for (int64_t j = 0; j < fl; j++) a[j] = gelu(u[j]);
    }
}

static int h_mlp_act(hx_ctx *c, const uly_op *op)
{
    (void)op;
    hx_act_fwd(c->m.swiglu, c->Rg, c->fl, c->Ug, c->Ag);
    return HX_OK;
}

static int h_mlp_down(hx_ctx *c, const uly_op *op)
{
    (void)op;
    return hx_gemm(0, 0, c->Rg, c->h, c->fl, 1.0f, c->Ag, c->fl, W(c, off_w2), c->h, 0.0f, c->Mg, c->h);
}

static int h_mlp_down_bwd(hx_ctx *c, const uly_op *op)
{
    (void)op;
    /* dA = dM W2^T, dW2 = A^T dM; dM = G (gathered under TP) */
    HX_TRY(hx_gemm(0, 1, c->Rg, c->fl, c->h, 1.0f, c->Gg, c->h, W(c, off_w2), c->h, 0.0f, c->dAg, c->fl));
    return hx_gemm(1, 0, c->fl, c->h, c->Rg, 1.0f, c->Ag, c->fl, c->Gg, c->h, 0.0f, GW(c, off_w2), c->h);
}

void hx_act_bwd(int swiglu, int64_t rows, int64_t fl, const float *ug, const float *dag, float *dug)
{
    const int64_t w1 = swiglu ? 2 * fl : fl;
    for (int64_t r = 0; r < rows; r++) {
        const float *u = ug + r * w1, *da = dag + r * fl;
        float *du = dug + r * w1;
        if (swiglu) {
            for (int64_t j = 0; j < fl; j++) {
                const float x = u[j], s = sigm(x);
                du[j] = da[j] * u[fl + j] * s * (1.0f + x * (1.0f - s));
                du[fl + j] = da[j] * x * s;
            }
        } else {
            for (int64_t j = 0; j < fl; j++) du[j] = da[j] * gelu_grad(u[j]);
        }
    }
}

static int h_mlp_act_bwd(hx_ctx *c, const uly_op *op)
{
    (void)op;
    hx_act_bwd(c->m.swiglu, c->Rg, c->fl, c->Ug, c->dAg, c->dUg);
    return HX_OK;
}

static int h_mlp_up_bwd(hx_ctx *c, const uly_op *op)
{
    (void)op;
    HX_TRY(hx_gemm(0, 1, c->Rg, c->h, f1l(c), 1.0f, c->dUg, f1l(c), W(c, off_w1), f1l(c), 0.0f, c->dY2g, c->h));
    return hx_gemm(1, 0, c->h, f1l(c), c->Rg, 1.0f, c->Y2g, c->h, c->dUg, f1l(c), 0.0f, GW(c, off_w1), f1l(c));
}

static int h_ln2_bwd(hx_ctx *c, const uly_op *op)
{
    (void)op;
    rms_bwd(c->Rt, c->h, c->X1, W(c, off_g2), c->rms2, c->dY2, c->G, c->dX1, GW(c, off_g2));
    return HX_OK;
}

static int h_out_proj_bwd(hx_ctx *c, const uly_op *op)
{
    (void)op;
    HX_TRY(hx_gemm(0, 1, c->Rg, c->qc, c->h, 1.0f, c->dX1g, c->h, W(c, off_wo), c->h, 0.0f, c->dOg, c->qc));
    HX_TRY(hx_gemm(1, 0, c->qc, c->h, c->Rg, 1.0f, c->Og, c->qc, c->dX1g, c->h, 0.0f, GW(c, off_wo), c->h));
    hx_stage_do(c);
    return HX_OK;
}

static int h_qkv_proj_bwd(hx_ctx *c, const uly_op *op)
{
    (void)op;
    hx_stage_dqkv_in(c);
    const int64_t ld = c->qc + 2 * c->kc;
    const float *Wq = W(c, off_wqkv);
    float *dW = GW(c, off_wqkv);
    HX_TRY(hx_gemm(0, 1, c->Rg, c->h, c->qc, 1.0f, c->dQg, c->qc, Wq, ld, 0.0f, c->dY1g, c->h));
    HX_TRY(hx_gemm(0, 1, c->Rg, c->h, c->kc, 1.0f, c->dKg, c->kc, Wq + c->qc, ld, 1.0f, c->dY1g, c->h));
    HX_TRY(hx_gemm(0, 1, c->Rg, c->h, c->kc, 1.0f, c->dVg, c->kc, Wq + c->qc + c->kc, ld, 1.0f, c->dY1g, c->h));
    HX_TRY(hx_gemm(1, 0, c->h, c->qc, c->Rg, 1.0f, c->Y1g, c->h, c->dQg, c->qc, 0.0f, dW, ld));
    HX_TRY(hx_gemm(1, 0, c->h, c->kc, c->Rg, 1.0f, c->Y1g, c->h, c->dKg, c->kc, 0.0f, dW + c->qc, ld));
    return hx_gemm(1, 0, c->h, c->kc, c->Rg, 1.0f, c->Y1g, c->h, c->dVg, c->kc, 0.0f, dW + c->qc + c->kc, ld);
}

static int h_ln1_bwd(hx_ctx *c, const uly_op *op)
{
    (void)op;
    rms_bwd(c->Rt, c->h, c->X, W(c, off_g1), c->rms1, c->dY1, c->dX1, c->dX, GW(c, off_g1));
    return HX_OK;
}

/* ---------------------------------------------------------- per model */

static int h_embed(hx_ctx *c, const uly_op *op)
{
    (void)op;
    const int64_t n = c->b * c->plan.act_tokens, h = c->h;
    for (int64_t i = 0; i < n; i++) memcpy(c->emb_x + i * h, c->emb_in + c->tok_ids[i] * h, sizeof(float) * (size_t)h);
    return HX_OK;
}

static int h_logits(hx_ctx *c, const uly_op *op)
{
    (void)op;
    return hx_gemm(0, 1, c->b * c->lt, c->lv, c->h, 1.0f, c->xf, c->h, c->emb_out, c->h, 0.0f, c->logit, c->lv);
}

/* cross-entropy over this rank's vocabulary columns: softmax, loss, and its
 * gradient written over the logits (max, exp-sum, normalise: three passes) */
static int h_loss(hx_ctx *c, const uly_op *op)
{
    (void)op;
    const int64_t rows = c->b * c->lt, V = c->lv;
    for (int64_t r = 0; r < rows; r++) {
        float *z = c->logit + r * V;
        float mx = -INFINITY;
        for (int64_t j = 0; j < V; j++) mx = z[j] > mx ? z[j] : mx;
        double sum = 0;
        for (int64_t j = 0; j < V; j++) {
            z[j] = expf(z[j] - mx);
            sum += z[j];
        }
        const float inv = (float)(1.0 / sum);
        for (int64_t j = 0; j < V; j++) z[j] *= inv;
        z[(r * 7919) % V] -= 1.0f; /* the label */
    }
    return HX_OK;
}

static int h_logits_bwd(hx_ctx *c, const uly_op *op)
{
    (void)op;
    HX_TRY(hx_gemm(0, 0, c->b * c->lt, c->h, c->lv, 1.0f, c->logit, c->lv, c->emb_out, c->h, 0.0f, c->dxf, c->h));
    return hx_gemm(1, 0, c->lv, c->h, c->b * c->lt, 1.0f, c->logit, c->lv, c->xf, c->h, 0.0f, c->demb, c->h);
}

/* Adam on the parameters this rank owns (the plan's optimizer op): ZeRO-0
 * all of them (after dp_allreduce_grad), ZeRO-1/2 its model-level shard
 * (ZeRO-1's grads from the per-step reduce-scatter; ZeRO-2's from the
 * layer's reduce-scatter, which stands in for the model-level shard), ZeRO-3
 * its shard, whose first layer_sh values become the layer weight shard the
 * next zero_gather_w gathers. The check uses the first pass, which runs on
 * the initial weights, so the updates only keep later passes honest work. */
static int h_optimizer(hx_ctx *c, const uly_op *op)
{
    const float lr = 1e-5f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    const int zop = c->zg > 1;
    const float *g;
    int64_t gl;
    if (!zop || c->w.zero_stage == 0) {
        g = c->gwt;
        gl = c->n_opt;
    } else if (c->w.zero_stage == 1) {
        g = c->gmshard;
        gl = c->model_sh;
    } else {
        g = c->gshard;
        gl = c->layer_sh;
    }
    const int step = ++c->adam_step;
    const float c1 = 1.0f - powf(b1, (float)step), c2 = 1.0f - powf(b2, (float)step);
    for (int64_t i = 0; i < c->n_opt; i++) {
        const float gi = i < gl ? g[i] : 0.0f;
        /* the loss scaler's inf/NaN check, as frameworks make it before the
         * step: here it also catches a weight gradient that read a spent
         * buffer (sp_input_spent), which the float64 check (activations and
         * dX) does not see */
        if (!isfinite(gi))
            return hx_fail("op %d optimizer: gradient element %lld is not finite (a weight gradient read an input "
                           "the plan did not gather again, or a spent buffer)", op->id, (long long)i);
        c->adam_m[i] = b1 * c->adam_m[i] + (1.0f - b1) * gi;
        c->adam_v[i] = b2 * c->adam_v[i] + (1.0f - b2) * gi * gi;
        c->master[i] -= lr * (c->adam_m[i] / c1) / (sqrtf(c->adam_v[i] / c2) + eps);
    }
    if (zop && c->w.zero_stage == 3)
        memcpy(c->wshard, c->master, sizeof(float) * (size_t)(c->n_opt < c->layer_sh ? c->n_opt : c->layer_sh));
    return HX_OK;
}

/* ------------------------------------------------ the layer's collectives */

/* This rank's buffers and count (what it hands to MPI: per peer, per block,
 * or the whole buffer) for a collective of the layer: Megatron TP+SP's
 * gathers and reduce-scatters, plain TP's all-reduces (in place: the GEMM
 * side aliases the token side), Ulysses' all-to-alls, all-gather CP's K, V
 * and dK, dV; and the exec mode they belong to (TP_SP: any mode whose GEMM
 * side gathers over TP, megatron-sp's and the context-parallel ones with
 * t > 1). The counts are the harness's own, so the bytes they give are
 * checked against the plan's. */
static int coll_bufs(const hx_ctx *c, uly_op_type t, float **send, float **recv, int64_t *n, uly_exec_mode *mode)
{
    const int64_t tok = c->Rt * c->h, kv = c->Rg * c->kc;
    const int64_t q_a2a = c->Rg * (c->gq / c->u) * c->d, kv_a2a = c->Rg * (c->kv_eff / c->u) * c->d;
#define BUFS(s, r, count, m) (*send = (s), *recv = (r), *n = (count), *mode = (m))
    switch (t) {
    case ULY_OPT_SP_AG_ATTN: BUFS(c->Y1, c->Y1g, tok, ULY_EXEC_TP_SP); break;
    case ULY_OPT_SP_AG_MLP: BUFS(c->Y2, c->Y2g, tok, ULY_EXEC_TP_SP); break;
    case ULY_OPT_SP_AG_DMLP: BUFS(c->G, c->Gg, tok, ULY_EXEC_TP_SP); break;
    case ULY_OPT_SP_AG_DATTN: BUFS(c->dX1, c->dX1g, tok, ULY_EXEC_TP_SP); break;
    case ULY_OPT_SP_RS_ATTN: BUFS(c->Zg, c->Z, tok, ULY_EXEC_TP_SP); break;
    case ULY_OPT_SP_RS_MLP: BUFS(c->Mg, c->M, tok, ULY_EXEC_TP_SP); break;
    case ULY_OPT_SP_RS_DMLP: BUFS(c->dY2g, c->dY2, tok, ULY_EXEC_TP_SP); break;
    case ULY_OPT_SP_RS_DATTN: BUFS(c->dY1g, c->dY1, tok, ULY_EXEC_TP_SP); break;
    /* backward: the norms' outputs gathered again for the weight gradients */
    case ULY_OPT_SP_REGATHER_ATTN: BUFS(c->Y1, c->Y1g, tok, ULY_EXEC_TP_SP); break;
    case ULY_OPT_SP_REGATHER_MLP: BUFS(c->Y2, c->Y2g, tok, ULY_EXEC_TP_SP); break;
    /* Megatron's g (forward, after out_proj and mlp_down) and f (backward,
     * before ln2_bwd and ln1_bwd) over the b x N x h buffer */
    case ULY_OPT_TP_AR_ATTN: BUFS(c->Z, c->Z, tok, ULY_EXEC_TP_ALLREDUCE); break;
    case ULY_OPT_TP_AR_MLP: BUFS(c->M, c->M, tok, ULY_EXEC_TP_ALLREDUCE); break;
    case ULY_OPT_TP_AR_DMLP: BUFS(c->dY2, c->dY2, tok, ULY_EXEC_TP_ALLREDUCE); break;
    case ULY_OPT_TP_AR_DATTN: BUFS(c->dY1, c->dY1, tok, ULY_EXEC_TP_ALLREDUCE); break;
    case ULY_OPT_A2A_Q: BUFS(c->s_q, c->r_q, q_a2a, ULY_EXEC_A2A); break;
    case ULY_OPT_A2A_K: BUFS(c->s_k, c->r_k, kv_a2a, ULY_EXEC_A2A); break;
    case ULY_OPT_A2A_V: BUFS(c->s_v, c->r_v, kv_a2a, ULY_EXEC_A2A); break;
    case ULY_OPT_A2A_O: BUFS(c->s_o, c->r_o, q_a2a, ULY_EXEC_A2A); break;
    case ULY_OPT_A2A_DO: BUFS(c->s_do, c->r_do, q_a2a, ULY_EXEC_A2A); break;
    case ULY_OPT_A2A_DQ: BUFS(c->s_dq, c->r_dq, q_a2a, ULY_EXEC_A2A); break;
    case ULY_OPT_A2A_DK: BUFS(c->s_dk, c->r_dk, kv_a2a, ULY_EXEC_A2A); break;
    case ULY_OPT_A2A_DV: BUFS(c->s_dv, c->r_dv, kv_a2a, ULY_EXEC_A2A); break;
    case ULY_OPT_AG_K: BUFS(c->Kg, c->kg_all, kv, ULY_EXEC_ALLGATHER); break;
    case ULY_OPT_AG_V: BUFS(c->Vg, c->vg_all, kv, ULY_EXEC_ALLGATHER); break;
    case ULY_OPT_RS_DK: BUFS(c->rs_dk_in, c->dKg, kv, ULY_EXEC_ALLGATHER); break;
    case ULY_OPT_RS_DV: BUFS(c->rs_dv_in, c->dVg, kv, ULY_EXEC_ALLGATHER); break;
    default: return hx_fail("op %s: not a collective of the layer", uly_op_type_name(t));
    }
#undef BUFS
    return HX_OK;
}

/* The collective the plan names, over the plan's group, on this rank's buffers */
static int h_coll(hx_ctx *c, const uly_op *op)
{
    float *send = NULL, *recv = NULL;
    int64_t n = 0;
    uly_exec_mode mode = ULY_EXEC_COUNT;
    HX_TRY(coll_bufs(c, op->type, &send, &recv, &n, &mode));
    if (mode == ULY_EXEC_TP_SP ? !c->sp : c->mode != mode)
        return hx_fail("op %s: belongs to mode %s, the run is in mode %s", uly_op_type_name(op->type),
                       uly_exec_mode_name(mode), uly_exec_mode_name(c->mode));
    const hx_group *g = &c->g[op->group];
    int64_t *bytes = &c->st[op->id].bytes_pass;
    switch (op->coll) {
    case ULY_COLL_ALLTOALL: return hx_alltoall(g, send, recv, n, bytes);
    case ULY_COLL_ALLGATHER: return hx_allgather(g, send, recv, n, bytes);
    case ULY_COLL_REDUCE_SCATTER: return hx_reduce_scatter(g, send, recv, n, bytes);
    case ULY_COLL_ALLREDUCE: return hx_allreduce_ring(g, send, c->rs_tmp, n, bytes);
    default:
        return hx_fail("op %s: collective %s is not one the layer runs", uly_op_type_name(op->type),
                       uly_coll_name(op->coll));
    }
}

/* ------------------------------------------------------- DP and ZeRO */

/* ZeRO over the data x sequence group: the weights' all-gather
 * (zero_gather_w) or the gradients' reduce-scatter (zero_rs_grad), once per
 * step over the model-level shards (phase step: ZeRO-1/2) or per layer over
 * the layer's (ZeRO-2/3) */
static int h_zero(hx_ctx *c, const uly_op *op)
{
    const int per_step = op->phase == ULY_PHASE_STEP, gather = op->type == ULY_OPT_ZERO_GATHER_W;
    float *shard = gather ? (per_step ? c->wmshard : c->wshard) : (per_step ? c->gmshard : c->gshard);
    const int64_t n = per_step ? c->model_sh : c->layer_sh;
    if (!shard)
        return hx_fail("op %d %s: no %s %s shard (zero stage %d)", op->id, uly_op_type_name(op->type),
                       per_step ? "model-level" : "layer", gather ? "weight" : "gradient", c->w.zero_stage);
    const hx_group *g = &c->g[ULY_GROUP_ZERO];
    int64_t *bytes = &c->st[op->id].bytes_pass;
    return gather ? hx_allgather(g, shard, c->wt, n, bytes) : hx_reduce_scatter(g, c->gwt, shard, n, bytes);
}

static int h_dp_allreduce(hx_ctx *c, const uly_op *op)
{
    return hx_allreduce_ring(&c->g[ULY_GROUP_ZERO], c->gwt, c->rs_tmp, c->model_sh * c->zg, &c->st[op->id].bytes_pass);
}

/* ------------------------------------------------------------ pipeline */

/* The stage output (forward) or its gradient (backward): this rank's
 * b x act_tokens x h elements to the next stage and the previous stage's
 * into pp_rx, the reverse way in backward. Run as a ring over the stages,
 * so every rank sends what a middle stage of a real pipeline sends. Every
 * stage runs the same layer on the same inputs, so the payload is seeded by
 * the sending stage and the direction instead: the checked pass verifies
 * that each rank received its neighbour's, bit for bit. */
static int h_pp(hx_ctx *c, const uly_op *op)
{
    const hx_group *g = &c->g[ULY_GROUP_PP];
    const int fwd = op->phase == ULY_PHASE_FWD, dir = fwd ? 0 : 1;
    const int64_t n = c->b * c->plan.act_tokens * c->h;
    const char *nm = uly_op_type_name(op->type);
    if (!c->pp_rx) return hx_fail("op %d %s: no pipeline (pp %lld)", op->id, nm, (long long)c->l.pp);
    const int src = fwd ? g->prev : g->next;
    HX_TRY(hx_sendrecv(g, c->pp_tx[dir], fwd ? g->next : g->prev, c->pp_rx, src, n, fwd ? 41 : 42,
                       &c->st[op->id].bytes_pass));
    if (c->pass != 0) return HX_OK;
    for (int64_t i = 0; i < n; i++)
        if (c->pp_rx[i] != hx_rand(c->o.seed, HX_T_PP, (uint64_t)(2 * src + dir), (uint64_t)i))
            return hx_fail("op %d %s: element %lld is not what stage %d sent (the transfer paired the wrong ranks "
                           "or carried the wrong buffer)", op->id, nm, (long long)i, src);
    return HX_OK;
}

/* ------------------------------------------------------------ table */

const hx_handler hx_layer_handlers[ULY_OPT_COUNT] = {
    [ULY_OPT_LN1] = h_ln1, [ULY_OPT_QKV_PROJ] = h_qkv_proj, [ULY_OPT_OUT_PROJ] = h_out_proj, [ULY_OPT_LN2] = h_ln2,
    [ULY_OPT_MLP_UP] = h_mlp_up, [ULY_OPT_MLP_ACT] = h_mlp_act, [ULY_OPT_MLP_DOWN] = h_mlp_down,
    [ULY_OPT_MLP_DOWN_BWD] = h_mlp_down_bwd, [ULY_OPT_MLP_ACT_BWD] = h_mlp_act_bwd,
    [ULY_OPT_MLP_UP_BWD] = h_mlp_up_bwd, [ULY_OPT_LN2_BWD] = h_ln2_bwd, [ULY_OPT_OUT_PROJ_BWD] = h_out_proj_bwd,
    [ULY_OPT_QKV_PROJ_BWD] = h_qkv_proj_bwd, [ULY_OPT_LN1_BWD] = h_ln1_bwd, [ULY_OPT_EMBED] = h_embed,
    [ULY_OPT_LOGITS] = h_logits, [ULY_OPT_LOSS] = h_loss, [ULY_OPT_LOGITS_BWD] = h_logits_bwd,
    [ULY_OPT_OPTIMIZER] = h_optimizer, [ULY_OPT_SP_AG_ATTN] = h_coll, [ULY_OPT_SP_AG_MLP] = h_coll,
    [ULY_OPT_SP_AG_DATTN] = h_coll, [ULY_OPT_SP_AG_DMLP] = h_coll, [ULY_OPT_SP_RS_ATTN] = h_coll,
    [ULY_OPT_SP_RS_MLP] = h_coll, [ULY_OPT_SP_RS_DATTN] = h_coll, [ULY_OPT_SP_RS_DMLP] = h_coll,
    [ULY_OPT_SP_REGATHER_ATTN] = h_coll, [ULY_OPT_SP_REGATHER_MLP] = h_coll,
    [ULY_OPT_TP_AR_ATTN] = h_coll, [ULY_OPT_TP_AR_MLP] = h_coll, [ULY_OPT_TP_AR_DATTN] = h_coll,
    [ULY_OPT_TP_AR_DMLP] = h_coll, [ULY_OPT_A2A_Q] = h_coll, [ULY_OPT_A2A_K] = h_coll, [ULY_OPT_A2A_V] = h_coll,
    [ULY_OPT_A2A_O] = h_coll, [ULY_OPT_A2A_DO] = h_coll, [ULY_OPT_A2A_DQ] = h_coll, [ULY_OPT_A2A_DK] = h_coll,
    [ULY_OPT_A2A_DV] = h_coll, [ULY_OPT_AG_K] = h_coll, [ULY_OPT_AG_V] = h_coll, [ULY_OPT_RS_DK] = h_coll,
    [ULY_OPT_RS_DV] = h_coll, [ULY_OPT_ZERO_GATHER_W] = h_zero, [ULY_OPT_ZERO_RS_GRAD] = h_zero,
    [ULY_OPT_DP_ALLREDUCE_GRAD] = h_dp_allreduce, [ULY_OPT_PP_SEND_ACT] = h_pp, [ULY_OPT_PP_SEND_GRAD] = h_pp,
};
