/* hx_mem.c: the run's memory. Single buffers (hx_alloc) for what lives
 * briefly; for the run's own tensors a few slabs, one per lifetime class:
 *   layout   the index maps of the rank's tokens (positions, batches, the
 *            all-to-all and attention-side row maps);
 *   params   weights, gradients, ZeRO shards, Adam's master values and moments;
 *   tokens   the token-side and GEMM-side activations, the per-model ops'
 *            tensors (embedding, logits) and the stage transfers;
 *   attn     the attention side, the ring's buffers, the all-to-all,
 *            all-gather and RSA buffers, the all-reduce block.
 * A slab is carved by running the same carving function twice: first with
 * no memory, which only adds up the pieces (64-byte aligned), then over the
 * one zeroed allocation of that size, which hands them out. Every piece is
 * freed with its slab (hx_release). Here too: the parameters' layout and
 * their seeded values, and the seeded inputs of the per-model ops. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "host_mem.h"
#include "hx.h"

/* Under AddressSanitizer a host slab keeps what separate allocations gave:
 * a poisoned red zone after every piece, so that an overrun is caught. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define REDZONE 64
#else
#define ASAN_POISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define REDZONE 0
#endif

void *hx_alloc(size_t bytes, const char *what)
{
    void *p = NULL;
    if (bytes == 0) bytes = 64;
    bytes = (bytes + 63) & ~(size_t)63;
    if (posix_memalign(&p, 64, bytes) != 0 || !p) {
        hx_fail("out of memory: %zu bytes for %s", bytes, what);
        return NULL;
    }
    memset(p, 0, bytes);
    return p;
}

float *hx_falloc(int64_t n, const char *what)
{
    if (n < 0) {
        hx_fail("negative size for %s", what);
        return NULL;
    }
    return hx_alloc((size_t)n * sizeof(float), what);
}

/* ---------------------------------------------------------------- slabs */

void *hx_slab_take(hx_slab *s, int64_t bytes)
{
    const size_t align = s->align ? s->align : 64;
    const size_t at = (s->used + align - 1) / align * align, n = (size_t)(bytes > 0 ? bytes : 0);
    /* a size past any machine (sizing a huge --seq) saturates rather than wraps */
    s->used = n > SIZE_MAX / 2 || at > SIZE_MAX / 2 ? SIZE_MAX / 2 : at + n + s->redzone;
    if (s->base && s->redzone) ASAN_POISON_MEMORY_REGION(s->base + at + n, s->redzone);
    return s->base ? s->base + at : NULL;
}

void hx_slab_start(hx_slab *s, void *base)
{
    s->base = base;
    s->size = s->used;
    s->used = 0;
}

int hx_slab_carved(const hx_slab *s, const char *what)
{
    if (s->used == s->size) return HX_OK;
    return hx_fail("internal: the %s slab carved %zu bytes of the %zu it was sized for", what, s->used, s->size);
}

size_t hx_slab_need(hx_ctx *c, hx_carve_fn carve)
{
    hx_slab s = {.redzone = REDZONE};
    carve(c, &s);
    return s.used;
}

int hx_slab_carve(hx_ctx *c, hx_slab *s, const char *what, hx_carve_fn carve)
{
    hx_slab_free(s);
    s->redzone = REDZONE;
    carve(c, s);
    void *base = hx_alloc(s->used, what);
    if (!base) return HX_FAIL;
    hx_slab_start(s, base);
    carve(c, s);
    return hx_slab_carved(s, what);
}

void hx_slab_free(hx_slab *s)
{
    if (s->base) ASAN_UNPOISON_MEMORY_REGION(s->base, s->size);
    free(s->base);
    *s = (hx_slab){0};
}

int hx_release(hx_ctx *c)
{
    hx_slab_free(&c->mem.layout);
    hx_slab_free(&c->mem.params);
    hx_slab_free(&c->mem.tokens);
    hx_slab_free(&c->mem.attn);
    hx_sample_free(&c->sample);
    hx_moe_free(c);
    free(c->times);
    c->times = NULL;
    cJSON_Delete(c->cluster_json); /* the preset's text, kept for the trace header */
    c->cluster_json = NULL;
    int rc = HX_OK;
    for (int g = 0; g < ULY_GROUP_COUNT; g++)
        if (c->g[g].size > 0 && rc == HX_OK) rc = HX_MPI(MPI_Comm_free(&c->g[g].comm));
    memset(c->g, 0, sizeof c->g);
    return rc;
}

/* ----------------------------------------------------------- index maps */

void hx_layout_carve(hx_ctx *c, hx_slab *s)
{
    const int sp = c->sp; /* the GEMM side gathers every TP rank's rows */
    c->tpos = hx_slab_take(s, c->Rt * (int64_t)sizeof(int64_t));
    c->tbat = hx_slab_take(s, c->Rt * (int64_t)sizeof(int64_t));
    c->gpos = sp ? hx_slab_take(s, c->Rg * (int64_t)sizeof(int64_t)) : c->tpos;
    c->gbat = sp ? hx_slab_take(s, c->Rg * (int64_t)sizeof(int64_t)) : c->tbat;
    c->uly_map = c->mode == ULY_EXEC_A2A ? hx_slab_take(s, c->u * c->Rg * (int64_t)sizeof(int64_t)) : NULL;
    c->g2a = c->mode != ULY_EXEC_RSA && c->mode != ULY_EXEC_A2A ? hx_slab_take(s, c->Rg * (int64_t)sizeof(int64_t))
                                                                : NULL;
}

/* ----------------------------------------------------------- parameters */

static void params_carve(hx_ctx *c, hx_slab *s)
{
    const int zero = c->w.zero_stage, zop = c->zg > 1; /* the plan has ZeRO/DP ops only when zg > 1 */
    c->wt = hx_slab_f(s, c->n_alloc);
    c->gwt = hx_slab_f(s, c->n_alloc);
    c->wshard = zop && zero >= 3 ? hx_slab_f(s, c->layer_sh) : NULL;
    c->gshard = zop && zero >= 2 ? hx_slab_f(s, c->layer_sh) : NULL;
    c->gmshard = zop && zero == 1 ? hx_slab_f(s, c->model_sh) : NULL;
    c->wmshard = zop && (zero == 1 || zero == 2) ? hx_slab_f(s, c->model_sh) : NULL;
    /* Adam's master values: the full (model-level) weights without ZeRO, the
     * model-level shard under ZeRO-1/2, a shard of their own under ZeRO-3 */
    c->master = zero == 0 || !zop ? c->wt : zero <= 2 ? c->wmshard : hx_slab_f(s, c->n_opt);
    c->adam_m = hx_slab_f(s, c->n_opt);
    c->adam_v = hx_slab_f(s, c->n_opt);
}

/* This TP rank's flat parameters [Wqkv | Wo | W1 | W2 | g1 | g2 | Wr], their ZeRO
 * shards and the optimizer's state: their counts. */
void hx_params_size(hx_ctx *c)
{
    const int64_t h = c->h;
    c->off_wqkv = 0;
    c->off_wo = c->off_wqkv + h * (c->qc + 2 * c->kc);
    c->off_w1 = c->off_wo + c->qc * h;
    c->off_w2 = c->off_w1 + h * (c->m.swiglu ? 2 * c->fl : c->fl);
    c->off_g1 = c->off_w2 + c->fl * h;
    c->off_g2 = c->off_g1 + h;
    c->off_wr = c->off_g2 + h;
    c->n_real = c->off_wr + h * c->m.experts; /* a MoE layer's router (its experts: hx_moe.c) */
    /* the model's accounting of what a TP rank holds and shards (plan.c),
     * KV heads replicated over TP (k < t) included, as the ZeRO ops count them */
    c->zg = c->plan.dims.zero_group;
    c->layer_flat = (int64_t)ceil(c->plan.layer_params_rank);
    c->model_flat = (int64_t)ceil(c->plan.model_params_rank);
    c->layer_sh = (c->layer_flat + c->zg - 1) / c->zg;
    c->model_sh = (c->model_flat + c->zg - 1) / c->zg;
    int64_t na = c->n_real;
    if (c->layer_sh * c->zg > na) na = c->layer_sh * c->zg;
    if (c->model_sh * c->zg > na) na = c->model_sh * c->zg;
    c->n_alloc = na;
    const int zero = c->w.zero_stage;
    const int zop = c->zg > 1;
    /* optimizer state: what the plan's optimizer op prices */
    double np = c->plan.model_params_rank;
    if (zero >= 1) np /= (double)c->zg;
    c->n_opt = (int64_t)ceil(np);
    if (zero == 0 || !zop) {
        if (c->n_opt > c->n_alloc) c->n_opt = c->n_alloc;
    } else if (zero <= 2) {
        if (c->n_opt > c->model_sh) c->n_opt = c->model_sh;
    }
}

/* The parameters, seeded as hx_weight draws them. */
int hx_params_setup(hx_ctx *c)
{
    const int64_t h = c->h, d = c->d;
    const int zi = c->g[ULY_GROUP_ZERO].rank, zero = c->w.zero_stage, zop = c->zg > 1;
    const int64_t f1l = c->m.swiglu ? 2 * c->fl : c->fl;
    hx_params_size(c);
    HX_TRY(hx_slab_carve(c, &c->mem.params, "parameters", params_carve));

    const int64_t rep = c->t * c->gkv / c->k; /* KV heads over the TP group per source KV head */
    float *W = c->wt + c->off_wqkv;
    const int64_t ld = c->qc + 2 * c->kc;
    for (int64_t i = 0; i < h; i++) {
        for (int64_t cc = 0; cc < c->qc; cc++) W[i * ld + cc] = hx_weight(c, HX_T_WQ, i, c->hq0 * d + cc);
        for (int64_t cc = 0; cc < c->kc; cc++) {
            int64_t orig = (c->hk0 + cc / d) / rep;
            W[i * ld + c->qc + cc] = hx_weight(c, HX_T_WK, i, orig * d + cc % d);
            W[i * ld + c->qc + c->kc + cc] = hx_weight(c, HX_T_WV, i, orig * d + cc % d);
        }
    }
    float *Wo = c->wt + c->off_wo;
    for (int64_t rr = 0; rr < c->qc; rr++)
        for (int64_t j = 0; j < h; j++) Wo[rr * h + j] = hx_weight(c, HX_T_WO, c->hq0 * d + rr, j);
    float *W1 = c->wt + c->off_w1;
    for (int64_t i = 0; i < h; i++)
        for (int64_t cc = 0; cc < f1l; cc++)
            W1[i * f1l + cc] = cc < c->fl ? hx_weight(c, HX_T_W1, i, c->ti * c->fl + cc)
                                          : hx_weight(c, HX_T_W1U, i, c->ti * c->fl + cc - c->fl);
    float *W2 = c->wt + c->off_w2;
    for (int64_t rr = 0; rr < c->fl; rr++)
        for (int64_t j = 0; j < h; j++) W2[rr * h + j] = hx_weight(c, HX_T_W2, c->ti * c->fl + rr, j);
    for (int64_t j = 0; j < 2 * h; j++) c->wt[c->off_g1 + j] = 1.0f;
    for (int64_t i = 0; i < h; i++)
        for (int64_t e = 0; e < c->m.experts; e++) c->wt[c->off_wr + i * c->m.experts + e] = hx_weight(c, HX_T_WR, i, e);

    if (c->wshard) {
        memcpy(c->wshard, c->wt + zi * c->layer_sh, sizeof(float) * (size_t)c->layer_sh);
        /* the gathered region is rebuilt by zero_gather_w before use: clear
         * it so that only a working gather gives the right answer */
        memset(c->wt, 0, sizeof(float) * (size_t)(c->layer_sh * c->zg));
    }
    if (c->wmshard) memcpy(c->wmshard, c->wt + zi * c->model_sh, sizeof(float) * (size_t)c->model_sh);
    if (zop && zero >= 3)
        memcpy(c->master, c->wshard, sizeof(float) * (size_t)(c->n_opt < c->layer_sh ? c->n_opt : c->layer_sh));
    return HX_OK;
}

/* ---------------------------------------------------------- activations */

static void tokens_carve(hx_ctx *c, hx_slab *s)
{
    const int64_t Rt = c->Rt, Rg = c->Rg, h = c->h, act = c->plan.act_tokens;
    float **tok[] = {&c->X, &c->Y1, &c->X1, &c->Y2, &c->G, &c->dY1, &c->dX1, &c->dY2, &c->dX, &c->Z, &c->M};
    for (size_t i = 0; i < sizeof tok / sizeof tok[0]; i++) *tok[i] = hx_slab_f(s, Rt * h);
    c->rms1 = hx_slab_f(s, Rt);
    c->rms2 = hx_slab_f(s, Rt);
    /* TP+SP gathers into separate GEMM-side buffers; plain TP's GEMM side is
     * its token side (all rows), all-reduced in place */
    float **gemm[] = {&c->Y1g, &c->Y2g, &c->Gg, &c->dX1g, &c->Zg, &c->Mg, &c->dY2g, &c->dY1g};
    float *same[] = {c->Y1, c->Y2, c->G, c->dX1, c->Z, c->M, c->dY2, c->dY1};
    for (int i = 0; i < 8; i++) *gemm[i] = c->sp ? hx_slab_f(s, Rg * h) : same[i];
    const int64_t f1l = c->m.swiglu ? 2 * c->fl : c->fl;
    c->Ug = hx_slab_f(s, Rg * f1l);
    c->dUg = hx_slab_f(s, Rg * f1l);
    c->Ag = hx_slab_f(s, Rg * c->fl);
    c->dAg = hx_slab_f(s, Rg * c->fl);
    float **q[] = {&c->Qg, &c->Og, &c->dOg, &c->dQg}, **kv[] = {&c->Kg, &c->Vg, &c->dKg, &c->dVg};
    for (int i = 0; i < 4; i++) *q[i] = hx_slab_f(s, Rg * c->qc);
    for (int i = 0; i < 4; i++) *kv[i] = hx_slab_f(s, Rg * c->kc);

    /* per-model ops: embedding lookups on this rank's tokens, logits over the
     * plan's logit tokens and vocabulary columns */
    c->emb_in = hx_slab_f(s, c->lv * h);
    c->emb_x = hx_slab_f(s, c->b * act * h);
    c->pp_rx = c->l.pp > 1 ? hx_slab_f(s, c->b * act * h) : NULL;
    for (int dir = 0; dir < 2; dir++) c->pp_tx[dir] = c->l.pp > 1 ? hx_slab_f(s, c->b * act * h) : NULL;
    c->tok_ids = hx_slab_take(s, c->b * act * (int64_t)sizeof(int64_t));
    c->xf = hx_slab_f(s, c->b * c->lt * h);
    c->emb_out = hx_slab_f(s, c->lv * h);
    c->logit = hx_slab_f(s, c->b * c->lt * c->lv);
    c->dxf = hx_slab_f(s, c->b * c->lt * h);
    c->demb = hx_slab_f(s, c->lv * h);
}

static void attn_carve(hx_ctx *c, hx_slab *s)
{
    const int64_t Rg = c->Rg, d = c->d;
    if (c->mode != ULY_EXEC_RSA) {
        const int64_t nq = c->qs.rows * c->Hq, blk = 2 * c->kv_rows * c->Hkv * d;
        float **qside[] = {&c->qa, &c->oa, &c->doa, &c->dqa, &c->tmp_o};
        for (int i = 0; i < 5; i++) *qside[i] = hx_slab_f(s, nq * d);
        c->lsea = hx_slab_f(s, nq);
        c->tmp_lse = hx_slab_f(s, nq);
        c->has = hx_slab_take(s, HX_MAX_SEGS);
        c->kv_own = hx_slab_f(s, blk);
        c->dkv_own = hx_slab_f(s, blk);
        const int ring = c->r > 1 && (c->mode == ULY_EXEC_TOKENS || c->mode == ULY_EXEC_A2A);
        for (int i = 0; i < 2; i++) {
            c->rot[i] = ring ? hx_slab_f(s, blk) : NULL;
            c->accs[i] = ring ? hx_slab_f(s, blk) : NULL;
            c->accr[i] = ring ? hx_slab_f(s, blk) : NULL;
        }
    }
    if (c->mode == ULY_EXEC_A2A) {
        const int64_t nq = Rg * c->gq * d, nk = Rg * c->kv_eff * d;
        float **qbufs[] = {&c->s_q, &c->r_q, &c->s_o, &c->r_o, &c->s_do, &c->r_do, &c->s_dq, &c->r_dq};
        float **kbufs[] = {&c->s_k, &c->r_k, &c->s_v, &c->r_v, &c->s_dk, &c->r_dk, &c->s_dv, &c->r_dv};
        for (int i = 0; i < 8; i++) *qbufs[i] = hx_slab_f(s, nq);
        for (int i = 0; i < 8; i++) *kbufs[i] = hx_slab_f(s, nk);
    }
    const int64_t n = c->r * Rg * c->kc; /* RSA: no TP, Rg = Rt */
    if (c->mode == ULY_EXEC_ALLGATHER) {
        float **ag[] = {&c->kg_all, &c->vg_all, &c->rs_dk_in, &c->rs_dv_in};
        for (int i = 0; i < 4; i++) *ag[i] = hx_slab_f(s, n);
    }
    if (c->mode == ULY_EXEC_RSA) {
        float **rsa[] = {&c->k_all, &c->v_all, &c->dk_all, &c->dv_all};
        for (int i = 0; i < 4; i++) *rsa[i] = hx_slab_f(s, n);
        c->S = hx_slab_f(s, c->b * c->a * c->T * c->N);
        c->dP = hx_slab_f(s, c->b * c->a * c->T * c->N);
    }
    c->rs_tmp = hx_slab_f(s, c->rs_tmp_n);
}

/* the all-reduce block: the largest reduce-scatter block of the run */
static void rs_tmp_size(hx_ctx *c)
{
    const int64_t Rt = c->Rt, h = c->h;
    c->rs_tmp_n = c->model_sh > c->layer_sh ? c->model_sh : c->layer_sh;
    if (c->mode == ULY_EXEC_RSA && c->r > 1 && Rt * c->kc > c->rs_tmp_n) c->rs_tmp_n = Rt * c->kc;
    if (c->mode == ULY_EXEC_TP_ALLREDUCE && c->t > 1 && Rt * h / c->t > c->rs_tmp_n) c->rs_tmp_n = Rt * h / c->t;
}

/* The CPU executor's buffers, and the seeded inputs of the layer and of the
 * per-model ops. */
int hx_buffers_setup(hx_ctx *c)
{
    const int64_t h = c->h;
    rs_tmp_size(c);
    HX_TRY(hx_slab_carve(c, &c->mem.tokens, "activations", tokens_carve));
    HX_TRY(hx_slab_carve(c, &c->mem.attn, "attention and communication", attn_carve));

    const int64_t act = c->plan.act_tokens;
    if (c->l.pp > 1) {
        /* seeded by the sending stage and the direction, so the receiver can
         * tell whose transfer arrived (hx_layer.c h_pp) */
        const int64_t n = c->b * act * h;
        for (int dir = 0; dir < 2; dir++)
            for (int64_t i = 0; i < n; i++)
                c->pp_tx[dir][i] =
                    hx_rand(c->o.seed, HX_T_PP, (uint64_t)(2 * c->g[ULY_GROUP_PP].rank + dir), (uint64_t)i);
    }
    const uint64_t sd = c->o.seed;
    for (int64_t i = 0; i < c->lv * h; i++) {
        c->emb_in[i] = 0.02f * hx_rand(sd, HX_T_EMB, (uint64_t)i, 0);
        c->emb_out[i] = 0.02f * hx_rand(sd, HX_T_EOUT, (uint64_t)i, 0);
    }
    for (int64_t i = 0; i < c->b * act; i++) c->tok_ids[i] = hx_token_id(c, i);
    for (int64_t i = 0; i < c->b * c->lt * h; i++)
        c->xf[i] = hx_rand(sd, HX_T_XF, (uint64_t)i, (uint64_t)hx_world_rank());
    hx_layer_io_seed(c, c->X, c->G);
    return HX_OK;
}

/* ------------------------------------------------- the up-front check */

static double gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

/* What a node needs against what it has: every rank allocates own bytes,
 * rank 0 also check bytes; each node's first rank judges its node, and the
 * node most over its memory is the one that speaks. Collective: every rank
 * calls it. Returns HX_OK with *speak set on the rank that should print
 * (0 everywhere when every node has room) and its node's figures. */
typedef struct node_room {
    double need, most, avail, check;
    int size, speak;
    const char *src;
} node_room;

static int room_judge(double own, double check, node_room *out)
{
    const int me = hx_world_rank();
    MPI_Comm node;
    HX_TRY(HX_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node)));
    int node_rank = 0, node_size = 1;
    double sum[2] = {own, me == 0 ? check : 0}, most = own;
    int rc = HX_MPI(MPI_Comm_rank(node, &node_rank));
    if (rc == HX_OK) rc = HX_MPI(MPI_Comm_size(node, &node_size));
    if (rc == HX_OK) rc = HX_MPI(MPI_Allreduce(MPI_IN_PLACE, sum, 2, MPI_DOUBLE, MPI_SUM, node));
    if (rc == HX_OK) rc = HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_DOUBLE, MPI_MAX, node));
    const int rc_free = HX_MPI(MPI_Comm_free(&node));
    HX_TRY(rc);
    HX_TRY(rc_free);
    const char *src = "";
    const double avail = node_rank == 0 ? host_mem_available(&src) : -1;
    const double need = sum[0] + sum[1];
    struct {
        double over;
        int rank;
    } worst = {avail >= 0 && need > avail ? need / (avail > 1 ? avail : 1) : 0, me};
    HX_TRY(HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD)));
    *out = (node_room){need, most, avail, sum[1], node_size, worst.over > 0 && me == worst.rank, src};
    return worst.over > 0 ? HX_USAGE : HX_OK;
}

int hx_mem_check_microbench(const hx_opts *o)
{
    /* hx_microbench's send and receive buffers of --mb-max plus a block */
    const double p = (double)hx_world_size(), mx = (double)o->mb_max;
    const double own = 2.0 * (mx + 4.0 * (p + 64.0)) + mx / p + 4.0 * 64.0;
    node_room nr;
    const int rc = room_judge(own, 0, &nr);
    if (rc == HX_USAGE && nr.speak)
        fprintf(stderr,
                "ulyharness: --mb-max %lld: needs %.1f GiB of host memory on this node (%d ranks: %.1f GiB each for "
                "the send, receive and block buffers) but %s is %.1f GiB; valid: a smaller --mb-max\n",
                (long long)o->mb_max, gib(nr.need), nr.size, gib(nr.most), nr.src, gib(nr.avail));
    return rc;
}

int hx_mem_check(hx_ctx *c)
{
    /* what this rank allocates on the host: the index maps, then (a run, not
     * --print-plan) the parameters, the CPU executor's buffers, the check's */
    double own = (double)hx_slab_need(c, hx_layout_carve), root = 0, pieces = 0;
    if (!c->o.print_plan) {
        hx_params_size(c);
        own += (double)hx_slab_need(c, params_carve);
        if (c->be->host_buffers) {
            rs_tmp_size(c);
            own += (double)hx_slab_need(c, tokens_carve) + (double)hx_slab_need(c, attn_carve) + hx_moe_bytes(c);
        }
        hx_check_bytes(c, &root, &pieces);
    }
    /* rank 0 holds every rank's check pieces at once */
    HX_TRY(HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &pieces, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD)));
    node_room nr;
    const int rc = room_judge(own, root + pieces, &nr);
    if (rc != HX_USAGE) return rc;
    char scale[128];
    if (c->o.seq) snprintf(scale, sizeof scale, "--seq %lld", (long long)c->N);
    else snprintf(scale, sizeof scale, "seq %lld (the default)", (long long)c->N);
    char chk[160] = "";
    if (nr.check > 0)
        snprintf(chk, sizeof chk, " and %.1f GiB for rank 0's %s check", gib(nr.check),
                 c->check_mode == HX_CHECK_FULL ? "full float64" : "sampled float64");
    if (nr.speak)
        fprintf(stderr,
                "ulyharness: %s: needs %.1f GiB of host memory on this node (%d ranks: up to %.1f GiB each for the "
                "run's buffers%s) but %s is %.1f GiB; valid: a smaller --seq, --batch or model, more nodes%s\n",
                scale, gib(nr.need), nr.size, gib(nr.most), chk, nr.src, gib(nr.avail),
                nr.check > 0 && c->check_mode == HX_CHECK_FULL ? ", or --check sampled" : "");
    return HX_USAGE;
}
