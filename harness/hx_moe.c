/* hx_moe.c: a MoE layer's routed experts, executed for real (docs/harness.md,
 * "Mixture of experts"): the router, the (token, expert) pairs permuted by
 * expert, dispatched over the expert-parallel group (all-to-all, or the
 * tokens all-gathered), gathered over expert tensor parallelism, the local
 * experts' GEMMs (one per local expert, f / etp wide), and the way back
 * (combine), forward and backward; the expert weights' gradients over the
 * expert data-parallel group. The shared experts are the layer's MLP ops
 * (hx_layer.c); the residual sum X1 + shared + routed is not formed (the
 * layer's upstream gradient G is seeded, as for a dense layer), so the
 * routed experts' output is checked on its own (hx_check.c, CK_MOE).
 *
 * The router is deterministic so that every transfer has the size the model
 * assumes (even routing, moe_plan.c): token g of the b x N tokens (sequence
 * x N + position) sends its j-th copy (j < k) to expert (g k + j) mod E. A
 * rank's tokens are contiguous runs of positions, so when each run's
 * tokens x k is a multiple of E every expert gets exactly P / E of the
 * rank's P = b T k pairs and every EP rank P / ep: the start-up checks this
 * (hx_moe_setup) and refuses a layout where it fails. The gate weights are
 * real: the softmax of the router's logits (Y2 Wr) over the k chosen
 * experts, and the router's gradient flows through them.
 *
 * Layouts. The pairs a rank sends are ordered [destination EP rank][its
 * local expert][pair], so the all-to-all has one count; what an EP rank
 * holds after the dispatch and the ETP all-gather is
 * [ETP rank][EP rank][local expert][P / E], which the expert GEMMs read in
 * expert-major order ([local expert][Re rows], Re = etp ep P / E, copied by
 * src[]). The all-gather dispatcher gathers the b T tokens instead
 * ([ETP rank][EP rank][token]); each expert rank picks its experts' pairs
 * (src[] = gathered token x k + choice), recomputes their gates from the
 * gathered tokens (no extra bytes: the router weights are replicated), and
 * weights and sums its experts' outputs per token before the
 * reduce-scatters; backward it adds its pairs' share of the router's input
 * gradient, which the reduce-scatters sum. Where a group has one rank, its
 * op is absent from the plan and the buffers after it alias those before. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx.h"

struct hx_moe {
    int64_t E, k, fe, fe1, le, ep, etp, edp, per_exp, P, Re, rows_a; /* rows_a: tokens after the dispatch (allgather) */
    int epi, etpi, a2a;
    int64_t n_w, sh;            /* expert parameters of this rank; their EDP shard (padded: sh x edp >= n_w) */
    int64_t *slot;              /* [Rt k]: a pair's row in the send order (alltoall) */
    int64_t *src;               /* [le Re]: an expert row's source (see above) */
    int64_t *gidx;              /* [rows_a]: the gathered tokens' global indices (allgather) */
    float *logits, *gates, *dgate, *dl; /* [Rt E]; gates, their gradients, the logits' (allgather: [rows_a k]) */
    float *moe_out;             /* [Rt h] the routed experts' output on this rank's tokens */
    /* the pairs' (alltoall) or tokens' (allgather) way out and back: in the
     * send order, after dispatch, after the ETP gather; outputs the reverse */
    float *send, *recv, *gath, *outg, *outr, *back;
    float *dback, *doutr, *doutg, *dgath, *drecv, *dsend;
    float *Xe, *Ue, *Ae, *Ye, *dYe, *dAe, *dUe, *dXe; /* expert-major [le][Re][...] */
    float *we, *gwe, *wsh, *gsh, *tmp; /* [le][W1 h x fe1 | W2 fe x h], padded to sh edp; EDP shard buffers */
    hx_slab slab;
};

/* ------------------------------------------------------------ the model */

int hx_moe_model(hx_ctx *c, uly_model *m, uly_workload *w)
{
    const hx_opts *o = &c->o;
    if (o->experts <= 0) return HX_OK;
    const int r = hx_world_rank();
    if (c->l.tp > 1) /* the layout's, --tp or the strategy's default (megatron-sp, megatron-tp: all the ranks) */
        return hx_args_reject(r, "--experts %lld with tensor parallelism %lld (%s): the harness runs MoE layers "
                                 "without it (valid: --tp 1, a strategy with a sequence degree)", (long long)o->experts,
                              (long long)c->l.tp, c->strat->name);
    if (o->topk > o->experts)
        return hx_args_reject(r, "--topk %lld: more than the %lld experts (valid: 1..%lld)", (long long)o->topk,
                              (long long)o->experts, (long long)o->experts);
    m->experts = o->experts;
    m->topk = o->topk;
    m->moe_ffn_hidden = o->moe_ffn;
    m->shared_ffn_hidden = o->shared_ffn;
    w->moe_dispatcher = o->moe_dispatcher;
    c->l.ep = (int32_t)(o->ep > 1 ? o->ep : 1);
    c->l.etp = (int32_t)(o->etp > 1 ? o->etp : 1);
    return HX_OK;
}

/* ------------------------------------------------------------ set-up */

static int64_t route(const struct hx_moe *s, int64_t g, int64_t j) { return (g * s->k + j) % s->E; }

static float *take(hx_slab *sl, int64_t n) { return hx_slab_f(sl, n); }

static void moe_carve(hx_ctx *c, hx_slab *sl)
{
    struct hx_moe *s = c->moe;
    const int64_t h = c->h, Rt = c->Rt, P = s->P, n = s->le * s->Re, ra = s->rows_a;
    s->slot = hx_slab_take(sl, Rt * s->k * (int64_t)sizeof(int64_t));
    s->src = hx_slab_take(sl, n * (int64_t)sizeof(int64_t));
    s->gidx = s->a2a ? NULL : hx_slab_take(sl, ra * (int64_t)sizeof(int64_t));
    s->logits = take(sl, Rt * s->E);
    s->gates = take(sl, (s->a2a ? Rt : ra) * s->k);
    s->dgate = take(sl, (s->a2a ? Rt : ra) * s->k);
    s->dl = take(sl, (s->a2a ? Rt : ra) * s->k);
    s->moe_out = take(sl, Rt * h);
    /* out (alltoall: pairs; allgather: tokens) and back */
    const int64_t unit = s->a2a ? P * h : Rt * h, g1 = s->a2a ? unit : s->ep * unit, g2 = s->etp * g1;
    s->send = s->a2a ? take(sl, unit) : c->Y2;
    s->recv = s->ep > 1 ? take(sl, g1) : s->send;
    s->gath = s->etp > 1 ? take(sl, g2) : s->recv;
    s->outg = take(sl, g2);
    s->outr = s->etp > 1 ? take(sl, g1) : s->outg;
    s->back = s->ep > 1 ? take(sl, unit) : s->outr;
    s->dback = s->a2a ? take(sl, unit) : c->G;
    s->doutr = s->ep > 1 ? take(sl, g1) : s->dback;
    s->doutg = s->etp > 1 ? take(sl, g2) : s->doutr;
    s->dgath = take(sl, g2);
    s->drecv = s->etp > 1 ? take(sl, g1) : s->dgath;
    s->dsend = s->ep > 1 ? take(sl, unit) : s->drecv;
    float **e_h[] = {&s->Xe, &s->Ye, &s->dYe, &s->dXe};
    for (int i = 0; i < 4; i++) *e_h[i] = take(sl, n * h);
    s->Ue = take(sl, n * s->fe1);
    s->dUe = take(sl, n * s->fe1);
    s->Ae = take(sl, n * s->fe);
    s->dAe = take(sl, n * s->fe);
    s->we = take(sl, s->sh * s->edp);
    s->gwe = take(sl, s->sh * s->edp);
    s->wsh = take(sl, s->sh);
    s->gsh = take(sl, s->sh);
    s->tmp = take(sl, s->sh);
}

static int group_split(hx_ctx *c, uly_group gid, int64_t stride, int64_t size, int *coord)
{
    const int rank = hx_world_rank();
    const int64_t stage = c->P / c->l.pp, co = (rank % stage) / stride % size;
    if (c->plan.place[gid].stride != stride || c->plan.place[gid].size != size)
        return hx_fail("group %s: stride %lld size %lld here, %lld and %lld in the plan", uly_group_name(gid),
                       (long long)stride, (long long)size, (long long)c->plan.place[gid].stride,
                       (long long)c->plan.place[gid].size);
    HX_TRY(hx_group_make(&c->g[gid], (int)(rank - co * stride), (int)co));
    if (c->g[gid].size != size)
        return hx_fail("group %s: %d ranks, want %lld", uly_group_name(gid), c->g[gid].size, (long long)size);
    *coord = (int)co;
    return HX_OK;
}

/* The send order of this rank's pairs (alltoall), each expert's P / E pairs
 * [destination EP rank][local expert][pair]; 0 when every expert gets
 * exactly P / E of them (the router's even routing), else 1. */
static int slots_make(hx_ctx *c)
{
    struct hx_moe *s = c->moe;
    int64_t *fill = calloc((size_t)s->E, sizeof *fill);
    if (!fill) return hx_fail("out of memory: MoE routing counts");
    int uneven = 0;
    for (int64_t r = 0; r < c->Rt; r++)
        for (int64_t j = 0; j < s->k; j++) {
            const int64_t e = route(s, c->tbat[r] * c->N + c->tpos[r], j), i = fill[e]++;
            if (i >= s->per_exp) uneven = 1;
            s->slot[r * s->k + j] = e * s->per_exp + (i < s->per_exp ? i : 0); /* e = its EP rank x le + local */
        }
    free(fill);
    return uneven;
}

/* Expert-major rows' sources: alltoall, the row of the gathered pairs
 * [ETP][EP][local expert][P / E]; allgather, gathered token x k + choice,
 * from the gathered tokens' global indices (gidx, [ETP][EP][Rt]). */
static int src_make(hx_ctx *c)
{
    const int64_t *gidx = c->moe->gidx;
    struct hx_moe *s = c->moe;
    if (s->a2a) {
        for (int64_t le = 0; le < s->le; le++)
            for (int64_t b = 0; b < s->etp * s->ep; b++)
                for (int64_t i = 0; i < s->per_exp; i++)
                    s->src[le * s->Re + b * s->per_exp + i] = (b * s->le + le) * s->per_exp + i;
        return HX_OK;
    }
    int64_t *fill = calloc((size_t)s->le, sizeof *fill);
    if (!fill) return hx_fail("out of memory: MoE routing counts");
    int rc = HX_OK;
    for (int64_t q = 0; q < s->rows_a && rc == HX_OK; q++)
        for (int64_t j = 0; j < s->k; j++) {
            const int64_t e = route(s, gidx[q], j);
            if (e / s->le != s->epi) continue;
            if (fill[e % s->le] >= s->Re) rc = hx_fail("internal: expert %lld gets more than %lld pairs", (long long)e,
                                                       (long long)s->Re);
            else s->src[e % s->le * s->Re + fill[e % s->le]++] = q * s->k + j;
        }
    free(fill);
    return rc;
}

/* the gathered tokens' global indices, in the all-gather dispatcher's order */
static int gidx_gather(hx_ctx *c, int64_t *own, int64_t *mid, int64_t *all)
{
    struct hx_moe *s = c->moe;
    for (int64_t r = 0; r < c->Rt; r++) own[r] = c->tbat[r] * c->N + c->tpos[r];
    int n = 0;
    HX_TRY(hx_count(c->Rt, "MoE token indices", &n));
    HX_TRY(HX_MPI(MPI_Allgather(own, n, MPI_INT64_T, mid, n, MPI_INT64_T, c->g[ULY_GROUP_EP].comm)));
    HX_TRY(hx_count(c->Rt * s->ep, "MoE token indices", &n));
    return HX_MPI(MPI_Allgather(mid, n, MPI_INT64_T, all, n, MPI_INT64_T, c->g[ULY_GROUP_ETP].comm));
}

/* this rank's experts' weights, seeded by (global expert, row, column) of
 * the full matrices: W1 [h][f] (and the SwiGLU up half), W2 [f][h] */
static void weights_seed(hx_ctx *c)
{
    struct hx_moe *s = c->moe;
    const int64_t h = c->h, f = c->m.moe_ffn_hidden, per = h * s->fe1 + s->fe * h;
    for (int64_t le = 0; le < s->le; le++) {
        const int64_t e = s->epi * s->le + le, c0 = s->etpi * s->fe;
        float *w1 = s->we + le * per, *w2 = w1 + h * s->fe1;
        for (int64_t i = 0; i < h; i++)
            for (int64_t j = 0; j < s->fe1; j++)
                w1[i * s->fe1 + j] = j < s->fe ? hx_weight(c, HX_T_EW1, e * h + i, c0 + j)
                                               : hx_weight(c, HX_T_EW1U, e * h + i, c0 + j - s->fe);
        for (int64_t i = 0; i < s->fe; i++)
            for (int64_t j = 0; j < h; j++) w2[i * h + j] = hx_weight(c, HX_T_EW2, e * f + c0 + i, j);
    }
    const int64_t edpi = c->g[ULY_GROUP_EDP].size > 0 ? c->g[ULY_GROUP_EDP].rank : 0;
    memcpy(s->wsh, s->we + edpi * s->sh, sizeof(float) * (size_t)s->sh);
}

int hx_moe_setup(hx_ctx *c)
{
    if (c->m.experts <= 0) return HX_OK;
    struct hx_moe *s = c->moe = hx_alloc(sizeof *c->moe, "MoE state");
    if (!s) return HX_FAIL;
    const uly_model *m = &c->m;
    s->E = m->experts, s->k = m->topk, s->ep = c->l.ep > 1 ? c->l.ep : 1, s->etp = c->l.etp > 1 ? c->l.etp : 1;
    s->a2a = c->w.moe_dispatcher == ULY_MOE_ALLTOALL;
    s->edp = c->P / c->l.pp / (s->ep * s->etp);
    s->le = s->E / s->ep, s->fe = m->moe_ffn_hidden / s->etp, s->fe1 = m->swiglu ? 2 * s->fe : s->fe;
    if (m->moe_ffn_hidden % s->etp)
        return hx_args_reject(hx_world_rank(), "--moe-ffn %lld: not divisible by --etp %lld (valid: a multiple of it)",
                              (long long)m->moe_ffn_hidden, (long long)s->etp);
    s->P = c->Rt * s->k, s->per_exp = s->P / s->E, s->Re = s->etp * s->ep * s->per_exp;
    s->rows_a = s->etp * s->ep * c->Rt;
    s->n_w = s->le * (c->h * s->fe1 + s->fe * c->h);
    s->sh = (int64_t)ceil(c->plan.expert_params_shard);
    if (s->sh * s->edp < s->n_w) s->sh = (s->n_w + s->edp - 1) / s->edp;
    int co = 0;
    HX_TRY(group_split(c, ULY_GROUP_ETP, 1, s->etp, &s->etpi));
    HX_TRY(group_split(c, ULY_GROUP_EP, s->etp, s->ep, &s->epi));
    HX_TRY(group_split(c, ULY_GROUP_EDP, s->etp * s->ep, s->edp, &co));
    HX_TRY(hx_slab_carve(c, &s->slab, "MoE buffers", moe_carve));
    int uneven = s->P % s->E != 0 || slots_make(c);
    HX_TRY(HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &uneven, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD)));
    if (uneven)
        return hx_args_reject(hx_world_rank(), "--experts %lld --topk %lld: the deterministic router (token g's j-th "
                              "copy to expert (g k + j) mod E) spreads a rank's %lld tokens unevenly (valid: a --seq "
                              "whose tokens per rank, in each contiguous run, times --topk are a multiple of --experts)",
                              (long long)s->E, (long long)s->k, (long long)c->Rt);
    int64_t *gi = s->a2a ? NULL : calloc((size_t)(c->Rt * (1 + s->ep)), sizeof *gi);
    if (!s->a2a && !gi) return hx_fail("out of memory: MoE token indices");
    int rc = s->a2a ? HX_OK : gidx_gather(c, gi, gi + c->Rt, s->gidx);
    free(gi);
    HX_TRY(rc);
    HX_TRY(src_make(c));
    weights_seed(c);
    return HX_OK;
}

double hx_moe_bytes(const hx_ctx *c)
{
    const uly_model *m = &c->m;
    if (m->experts <= 0) return 0;
    /* hx_moe_setup's sizes in double (no int64 product to overflow), each
     * transfer buffer counted as if no group aliased it */
    const double ep = c->l.ep > 1 ? c->l.ep : 1, etp = c->l.etp > 1 ? c->l.etp : 1, k = (double)m->topk;
    const double Rt = (double)c->Rt, h = (double)c->h, E = (double)m->experts, P = Rt * k, n = etp * P;
    const double fe = (double)m->moe_ffn_hidden / etp, fe1 = m->swiglu ? 2 * fe : fe;
    const int a2a = c->w.moe_dispatcher == ULY_MOE_ALLTOALL;
    const double rows_a = etp * ep * Rt, unit = (a2a ? P : Rt) * h, g1 = a2a ? unit : ep * unit, g2 = etp * g1;
    const double edp = (double)c->P / (double)c->l.pp / (ep * etp), sh = ceil(c->plan.expert_params_shard) + 1.0;
    const double idx = 8.0 * (P + n + (a2a ? 0 : rows_a));
    const double floats = Rt * E + 3.0 * (a2a ? Rt : rows_a) * k + Rt * h + 4.0 * unit + 4.0 * g1 + 4.0 * g2 +
                          n * (4.0 * h + 2.0 * fe1 + 2.0 * fe) + sh * (2.0 * edp + 3.0);
    return idx + 4.0 * floats;
}

void hx_moe_free(hx_ctx *c)
{
    if (!c->moe) return;
    hx_slab_free(&c->moe->slab);
    free(c->moe);
    c->moe = NULL;
}

/* ------------------------------------------------------------ handlers */

#define WR(c) ((c)->wt + (c)->off_wr)
#define GWR(c) ((c)->gwt + (c)->off_wr)
#define BYTES(c, op) (&(c)->st[(op)->id].bytes_pass)

static float *w1_of(const struct hx_moe *s, int64_t h, int64_t le) { return s->we + le * (h * s->fe1 + s->fe * h); }
static float *gw1_of(const struct hx_moe *s, int64_t h, int64_t le) { return s->gwe + le * (h * s->fe1 + s->fe * h); }

/* softmax over the k chosen logits l[] into g[] */
static void gate_softmax(int64_t k, const float *l, float *g)
{
    float mx = l[0];
    for (int64_t j = 1; j < k; j++) mx = l[j] > mx ? l[j] : mx;
    float sum = 0;
    for (int64_t j = 0; j < k; j++) sum += g[j] = expf(l[j] - mx);
    for (int64_t j = 0; j < k; j++) g[j] /= sum;
}

/* the logit of expert e for token row x: x . Wr[:, e] */
static float logit_of(const hx_ctx *c, const float *x, int64_t e)
{
    const float *wr = WR(c) + e;
    float v = 0;
    for (int64_t i = 0; i < c->h; i++) v += x[i] * wr[i * c->moe->E];
    return v;
}

/* the logits' gradient of a token from its gates' (dl_j = g_j (dg_j - sum g dg)) */
static void gate_softmax_bwd(int64_t k, const float *g, const float *dg, float *dl)
{
    float sdot = 0;
    for (int64_t j = 0; j < k; j++) sdot += g[j] * dg[j];
    for (int64_t j = 0; j < k; j++) dl[j] = g[j] * (dg[j] - sdot);
}

/* dx += sum_j dl_j Wr[:, e_j] over token g's chosen experts */
static void router_dx(const hx_ctx *c, int64_t g, const float *dl, float *dx)
{
    const struct hx_moe *s = c->moe;
    for (int64_t j = 0; j < s->k; j++) {
        const float *wr = WR(c) + route(s, g, j);
        for (int64_t i = 0; i < c->h; i++) dx[i] += dl[j] * wr[i * s->E];
    }
}

/* gWr[:, e_j] += dl_j x over token g's chosen experts */
static void router_dw(const hx_ctx *c, int64_t g, const float *dl, const float *x)
{
    const struct hx_moe *s = c->moe;
    for (int64_t j = 0; j < s->k; j++) {
        float *gw = GWR(c) + route(s, g, j);
        for (int64_t i = 0; i < c->h; i++) gw[i * s->E] += dl[j] * x[i];
    }
}

/* o += gt y over h */
static void axpy(int64_t h, float gt, const float *y, float *o)
{
    for (int64_t i = 0; i < h; i++) o[i] += gt * y[i];
}

/* a gated output's backward: d = gt g, and the gate's gradient g . y */
static float gated_bwd(int64_t h, float gt, const float *g, const float *y, float *d)
{
    float dot = 0;
    for (int64_t i = 0; i < h; i++) {
        d[i] = gt * g[i];
        dot += g[i] * y[i];
    }
    return dot;
}

static int64_t gidx_own(const hx_ctx *c, int64_t r) { return c->tbat[r] * c->N + c->tpos[r]; }

static int h_router(hx_ctx *c, const uly_op *op)
{
    (void)op;
    struct hx_moe *s = c->moe;
    HX_TRY(hx_gemm(0, 0, c->Rt, s->E, c->h, 1.0f, c->Y2, c->h, WR(c), s->E, 0.0f, s->logits, s->E));
    if (!s->a2a) return HX_OK; /* the expert ranks weigh the gathered tokens (h_expert_up) */
    float l[64];
    for (int64_t r = 0; r < c->Rt; r++) {
        for (int64_t j = 0; j < s->k; j++) l[j] = s->logits[r * s->E + route(s, gidx_own(c, r), j)];
        gate_softmax(s->k, l, s->gates + r * s->k);
    }
    return HX_OK;
}

static int h_permute(hx_ctx *c, const uly_op *op)
{
    (void)op;
    struct hx_moe *s = c->moe;
    if (!s->a2a) return HX_OK; /* the tokens go as they are */
    const size_t row = sizeof(float) * (size_t)c->h;
    for (int64_t r = 0; r < c->Rt; r++)
        for (int64_t j = 0; j < s->k; j++) memcpy(s->send + s->slot[r * s->k + j] * c->h, c->Y2 + r * c->h, row);
    return HX_OK;
}

/* The plan's EP and ETP transfers on this rank's buffers: forward out
 * (dispatch, its ETP gather) and back (ETP reduce-scatter, combine), and
 * their mirrors backward. Counts per peer (all-to-all), per rank
 * (all-gather) or per block (reduce-scatter). */
static int h_moe_coll(hx_ctx *c, const uly_op *op)
{
    struct hx_moe *s = c->moe;
    const hx_group *ep = &c->g[ULY_GROUP_EP], *etp = &c->g[ULY_GROUP_ETP];
    const int64_t unit = (s->a2a ? s->P : c->Rt) * c->h, g1 = s->a2a ? unit : s->ep * unit;
    int64_t *b = BYTES(c, op);
    switch (op->type) {
    case ULY_OPT_MOE_DISPATCH:
        return s->a2a ? hx_alltoall(ep, s->send, s->recv, unit / s->ep, b) : hx_allgather(ep, s->send, s->recv, unit, b);
    case ULY_OPT_MOE_ETP_AG: return hx_allgather(etp, s->recv, s->gath, g1, b);
    case ULY_OPT_MOE_ETP_RS: return hx_reduce_scatter(etp, s->outg, s->outr, g1, b);
    case ULY_OPT_MOE_COMBINE:
        return s->a2a ? hx_alltoall(ep, s->outr, s->back, unit / s->ep, b) : hx_reduce_scatter(ep, s->outr, s->back, unit, b);
    case ULY_OPT_MOE_COMBINE_BWD:
        return s->a2a ? hx_alltoall(ep, s->dback, s->doutr, unit / s->ep, b) : hx_allgather(ep, s->dback, s->doutr, unit, b);
    case ULY_OPT_MOE_ETP_RS_BWD: return hx_allgather(etp, s->doutr, s->doutg, g1, b);
    case ULY_OPT_MOE_ETP_AG_BWD: return hx_reduce_scatter(etp, s->dgath, s->drecv, g1, b);
    case ULY_OPT_MOE_DISPATCH_BWD:
        return s->a2a ? hx_alltoall(ep, s->drecv, s->dsend, unit / s->ep, b)
                      : hx_reduce_scatter(ep, s->drecv, s->dsend, unit, b);
    default: return hx_fail("op %s: not a MoE transfer", uly_op_type_name(op->type));
    }
}

/* the expert-major input rows; under the all-gather dispatcher first the
 * gates of the gathered tokens routed here (every choice of such a token:
 * its softmax needs all k logits) */
static int h_expert_up(hx_ctx *c, const uly_op *op)
{
    (void)op;
    struct hx_moe *s = c->moe;
    const int64_t h = c->h, n = s->le * s->Re;
    for (int64_t q = 0; !s->a2a && q < s->rows_a; q++) {
        float l[64];
        int here = 0;
        for (int64_t j = 0; j < s->k; j++) here |= route(s, s->gidx[q], j) / s->le == s->epi;
        if (!here) continue;
        for (int64_t j = 0; j < s->k; j++) l[j] = logit_of(c, s->gath + q * h, route(s, s->gidx[q], j));
        gate_softmax(s->k, l, s->gates + q * s->k);
    }
    for (int64_t i = 0; i < n; i++)
        memcpy(s->Xe + i * h, s->gath + (s->a2a ? s->src[i] : s->src[i] / s->k) * h, sizeof(float) * (size_t)h);
    for (int64_t le = 0; le < s->le; le++)
        HX_TRY(hx_gemm(0, 0, s->Re, s->fe1, h, 1.0f, s->Xe + le * s->Re * h, h, w1_of(s, h, le), s->fe1, 0.0f,
                       s->Ue + le * s->Re * s->fe1, s->fe1));
    return HX_OK;
}

static int h_expert_act(hx_ctx *c, const uly_op *op)
{
    (void)op;
    const struct hx_moe *s = c->moe;
    hx_act_fwd(c->m.swiglu, s->le * s->Re, s->fe, s->Ue, s->Ae);
    return HX_OK;
}

/* the experts' outputs, back to the gathered layout: each pair's row
 * (alltoall), or each gathered token's weighted sum of its pairs here */
static int h_expert_down(hx_ctx *c, const uly_op *op)
{
    (void)op;
    struct hx_moe *s = c->moe;
    const int64_t h = c->h, n = s->le * s->Re;
    for (int64_t le = 0; le < s->le; le++)
        HX_TRY(hx_gemm(0, 0, s->Re, h, s->fe, 1.0f, s->Ae + le * s->Re * s->fe, s->fe, w1_of(s, h, le) + h * s->fe1, h,
                       0.0f, s->Ye + le * s->Re * h, h));
    if (s->a2a) {
        for (int64_t i = 0; i < n; i++) memcpy(s->outg + s->src[i] * h, s->Ye + i * h, sizeof(float) * (size_t)h);
        return HX_OK;
    }
    memset(s->outg, 0, sizeof(float) * (size_t)(s->rows_a * h));
    for (int64_t i = 0; i < n; i++) axpy(h, s->gates[s->src[i]], s->Ye + i * h, s->outg + s->src[i] / s->k * h);
    return HX_OK;
}

static int h_unpermute(hx_ctx *c, const uly_op *op)
{
    (void)op;
    struct hx_moe *s = c->moe;
    const int64_t h = c->h;
    if (!s->a2a) { /* weighted and summed by the reduce-scatters */
        memcpy(s->moe_out, s->back, sizeof(float) * (size_t)(c->Rt * h));
        return HX_OK;
    }
    for (int64_t r = 0; r < c->Rt; r++) {
        float *o = s->moe_out + r * h;
        memset(o, 0, sizeof(float) * (size_t)h);
        for (int64_t j = 0; j < s->k; j++) axpy(h, s->gates[r * s->k + j], s->back + s->slot[r * s->k + j] * h, o);
    }
    return HX_OK;
}

/* ------------------------------------------------------------ backward */

/* each pair's output gradient gate G and its gate's gradient G . y (alltoall) */
static int h_unpermute_bwd(hx_ctx *c, const uly_op *op)
{
    (void)op;
    struct hx_moe *s = c->moe;
    const int64_t h = c->h;
    if (!s->a2a) return HX_OK; /* G goes as it is; the expert ranks weigh it */
    for (int64_t r = 0; r < c->Rt; r++)
        for (int64_t j = 0; j < s->k; j++) {
            const int64_t sl = s->slot[r * s->k + j];
            s->dgate[r * s->k + j] = gated_bwd(h, s->gates[r * s->k + j], c->G + r * h, s->back + sl * h, s->dback + sl * h);
        }
    return HX_OK;
}

static int h_expert_down_bwd(hx_ctx *c, const uly_op *op)
{
    (void)op;
    struct hx_moe *s = c->moe;
    const int64_t h = c->h, n = s->le * s->Re;
    if (s->a2a) {
        for (int64_t i = 0; i < n; i++) memcpy(s->dYe + i * h, s->doutg + s->src[i] * h, sizeof(float) * (size_t)h);
    } else {
        /* this rank's share of each pair's gate gradient: G . its partial output (ETP slices sum it) */
        memset(s->dgate, 0, sizeof(float) * (size_t)(s->rows_a * s->k));
        for (int64_t i = 0; i < n; i++)
            s->dgate[s->src[i]] = gated_bwd(h, s->gates[s->src[i]], s->doutg + s->src[i] / s->k * h, s->Ye + i * h,
                                            s->dYe + i * h);
    }
    for (int64_t le = 0; le < s->le; le++) {
        const float *w2 = w1_of(s, h, le) + h * s->fe1, *dy = s->dYe + le * s->Re * h;
        HX_TRY(hx_gemm(0, 1, s->Re, s->fe, h, 1.0f, dy, h, w2, h, 0.0f, s->dAe + le * s->Re * s->fe, s->fe));
        HX_TRY(hx_gemm(1, 0, s->fe, h, s->Re, 1.0f, s->Ae + le * s->Re * s->fe, s->fe, dy, h, 0.0f,
                       gw1_of(s, h, le) + h * s->fe1, h));
    }
    return HX_OK;
}

static int h_expert_act_bwd(hx_ctx *c, const uly_op *op)
{
    (void)op;
    const struct hx_moe *s = c->moe;
    hx_act_bwd(c->m.swiglu, s->le * s->Re, s->fe, s->Ue, s->dAe, s->dUe);
    return HX_OK;
}

/* The allgather dispatcher's router input gradient, on the expert ranks:
 * a token's logits' gradient is linear in its gates' gradients, each pair
 * here adding g_i dg_i (onehot_i - g) to it, so each rank adds its pairs'
 * share (dl, kept for h_router_bwd's weight gradient) to the gathered
 * tokens' gradient before the reduce-scatters sum the shares. */
static void router_shares(hx_ctx *c)
{
    struct hx_moe *s = c->moe;
    const int64_t n = s->le * s->Re, k = s->k;
    memset(s->dl, 0, sizeof(float) * (size_t)(s->rows_a * k));
    for (int64_t i = 0; i < n; i++) {
        const int64_t q = s->src[i] / k, me = s->src[i] % k;
        const float *g = s->gates + q * k, ci = g[me] * s->dgate[s->src[i]];
        for (int64_t j = 0; j < k; j++) s->dl[q * k + j] += ci * ((j == me ? 1.0f : 0.0f) - g[j]);
    }
    for (int64_t q = 0; q < s->rows_a; q++) {
        int here = 0;
        for (int64_t j = 0; j < k; j++) here |= s->dl[q * k + j] != 0;
        if (here) router_dx(c, s->gidx[q], s->dl + q * k, s->dgath + q * c->h);
    }
}

static int h_expert_up_bwd(hx_ctx *c, const uly_op *op)
{
    (void)op;
    struct hx_moe *s = c->moe;
    const int64_t h = c->h, n = s->le * s->Re;
    for (int64_t le = 0; le < s->le; le++) {
        const float *du = s->dUe + le * s->Re * s->fe1;
        HX_TRY(hx_gemm(0, 1, s->Re, h, s->fe1, 1.0f, du, s->fe1, w1_of(s, h, le), s->fe1, 0.0f, s->dXe + le * s->Re * h,
                       h));
        HX_TRY(hx_gemm(1, 0, h, s->fe1, s->Re, 1.0f, s->Xe + le * s->Re * h, h, du, s->fe1, 0.0f, gw1_of(s, h, le),
                       s->fe1));
    }
    if (s->a2a) {
        for (int64_t i = 0; i < n; i++) memcpy(s->dgath + s->src[i] * h, s->dXe + i * h, sizeof(float) * (size_t)h);
        return HX_OK;
    }
    memset(s->dgath, 0, sizeof(float) * (size_t)(s->rows_a * h));
    for (int64_t i = 0; i < n; i++) axpy(h, 1.0f, s->dXe + i * h, s->dgath + s->src[i] / s->k * h);
    router_shares(c);
    return HX_OK;
}

/* the routed experts' input gradient into dY2: added to the shared
 * experts' (their MLP ran first in backward), or the whole of it */
static int h_permute_bwd(hx_ctx *c, const uly_op *op)
{
    (void)op;
    struct hx_moe *s = c->moe;
    const int64_t h = c->h;
    const float keep = c->f > 0 ? 1.0f : 0.0f;
    for (int64_t r = 0; r < c->Rt; r++) {
        float *d = c->dY2 + r * h;
        for (int64_t i = 0; i < h; i++) d[i] *= keep;
        if (!s->a2a) {
            axpy(h, 1.0f, s->dsend + r * h, d);
            continue;
        }
        for (int64_t j = 0; j < s->k; j++) axpy(h, 1.0f, s->dsend + s->slot[r * s->k + j] * h, d);
    }
    return HX_OK;
}

/* the router's weight gradient (and under the all-to-all dispatcher its
 * input gradient, into dY2; the all-gather dispatcher's came back through
 * the reduce-scatters) */
static int h_router_bwd(hx_ctx *c, const uly_op *op)
{
    (void)op;
    struct hx_moe *s = c->moe;
    memset(GWR(c), 0, sizeof(float) * (size_t)(c->h * s->E));
    if (!s->a2a) {
        for (int64_t q = 0; q < s->rows_a; q++) router_dw(c, s->gidx[q], s->dl + q * s->k, s->gath + q * c->h);
        return HX_OK;
    }
    for (int64_t r = 0; r < c->Rt; r++) {
        float *dl = s->dl + r * s->k;
        gate_softmax_bwd(s->k, s->gates + r * s->k, s->dgate + r * s->k, dl);
        router_dx(c, gidx_own(c, r), dl, c->dY2 + r * c->h);
        router_dw(c, gidx_own(c, r), dl, c->Y2 + r * c->h);
    }
    return HX_OK;
}

/* the expert weights' gradients over the expert data-parallel group:
 * all-reduced (ZeRO 0) or reduce-scattered, and the updated shards
 * gathered (ZeRO 1-2), over the padded sh x edp buffer the plan counts */
static int h_expert_grads(hx_ctx *c, const uly_op *op)
{
    struct hx_moe *s = c->moe;
    const hx_group *g = &c->g[ULY_GROUP_EDP];
    if (op->comm_elems != (op->type == ULY_OPT_EXPERT_PARAM_GATHER ? s->sh : s->sh * s->edp))
        return hx_fail("op %d %s: %lld elements in the plan, %lld here", op->id, uly_op_type_name(op->type),
                       (long long)op->comm_elems, (long long)(s->sh * s->edp));
    if (op->type == ULY_OPT_EXPERT_PARAM_GATHER) return hx_allgather(g, s->wsh, s->we, s->sh, BYTES(c, op));
    if (op->coll == ULY_COLL_ALLREDUCE) return hx_allreduce_ring(g, s->gwe, s->tmp, s->sh * s->edp, BYTES(c, op));
    return hx_reduce_scatter(g, s->gwe, s->gsh, s->sh, BYTES(c, op));
}

const hx_handler hx_moe_handlers[ULY_OPT_COUNT] = {
    [ULY_OPT_ROUTER] = h_router, [ULY_OPT_MOE_PERMUTE] = h_permute, [ULY_OPT_MOE_DISPATCH] = h_moe_coll,
    [ULY_OPT_MOE_ETP_AG] = h_moe_coll, [ULY_OPT_EXPERT_UP] = h_expert_up, [ULY_OPT_EXPERT_ACT] = h_expert_act,
    [ULY_OPT_EXPERT_DOWN] = h_expert_down, [ULY_OPT_MOE_ETP_RS] = h_moe_coll, [ULY_OPT_MOE_COMBINE] = h_moe_coll,
    [ULY_OPT_MOE_UNPERMUTE] = h_unpermute, [ULY_OPT_MOE_UNPERMUTE_BWD] = h_unpermute_bwd,
    [ULY_OPT_MOE_COMBINE_BWD] = h_moe_coll, [ULY_OPT_MOE_ETP_RS_BWD] = h_moe_coll,
    [ULY_OPT_EXPERT_DOWN_BWD] = h_expert_down_bwd, [ULY_OPT_EXPERT_ACT_BWD] = h_expert_act_bwd,
    [ULY_OPT_EXPERT_UP_BWD] = h_expert_up_bwd, [ULY_OPT_MOE_ETP_AG_BWD] = h_moe_coll,
    [ULY_OPT_MOE_DISPATCH_BWD] = h_moe_coll, [ULY_OPT_MOE_PERMUTE_BWD] = h_permute_bwd,
    [ULY_OPT_ROUTER_BWD] = h_router_bwd, [ULY_OPT_EXPERT_GRAD_REDUCE] = h_expert_grads,
    [ULY_OPT_EXPERT_PARAM_GATHER] = h_expert_grads,
};

const float *hx_moe_out(const hx_ctx *c) { return c->moe ? c->moe->moe_out : NULL; }

/* The check's tolerance for the routed experts' output (float32 against the
 * float64 reference, normwise): each output element comes out of three
 * chained float32 sums, the router's and the up-projection's over h, the
 * down-projection's over f (f / etp per slice, the ETP reduce-scatter adding
 * the slices) and the gated sum over k; a sum of n terms is off by at most
 * n u relative to its terms (u = 2^-24), so the chain by (h + f + k) u; x 8
 * for the exp of the softmax and the activation (a few ulp each) and the
 * normwise measure's cancellation. A wrong route, gate or expert gives O(1). */
void hx_moe_tol(hx_ctx *c)
{
    if (!c->moe) return;
    const double u = 0x1p-24, n = (double)(c->h + c->m.moe_ffn_hidden + c->m.topk);
    c->tol_moe = 8.0 * n * u;
    c->tol_moe_reason = "8 (h + f + k) u, u = 2^-24: float32 sums over h (router, up), f (down) and k (gated sum)";
}
