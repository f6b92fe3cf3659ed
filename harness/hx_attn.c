/* hx_attn.c: the attention section of each strategy, executed for real.
 *
 * Two layouts meet here. The GEMM side is token-major ([rows][heads*d], the
 * projections' output: with TP the TP group's gathered rows and this TP
 * rank's heads, which the attention modes then treat as a rank without TP
 * treats all of its rows and heads); the kernels want head-major blocks: an
 * "attention-side" buffer is a list of segments (contiguous position runs of
 * one sequence), each stored [H][len][d]. The layout changes happen inside
 * compute ops (projection epilogues, attention prologues/epilogues), so the
 * communication ops hand MPI exactly the buffers they send, with nothing
 * copied inside them.
 *
 * Attention over segments: one kernel call per (query segment, key segment)
 * pair of the same sequence, with the segments' global positions as the
 * causal offsets; pairs the causal mask hides completely are skipped; the
 * partial results are merged by log-sum-exp. Ring attention is the same
 * over the blocks that rotate round the ring (contiguous or zigzag split).
 *
 * Ring backward (ours, as model/strategy/ring.c names it): K,V rotate again
 * (r-1 hops) and a dK,dV accumulator for each block travels r-1 hops: it is
 * started by the first rank after the owner, each rank adds its share and
 * forwards it, and the last one sends it home, where the owner adds its own
 * share. Both transfers of a step are posted before the step's compute and
 * waited for after it; MPI is given the chance to move them between the
 * kernel calls of the compute (progress), and the wait after it is split
 * into waiting for the peer and moving the bytes (wait_split). */
#include <math.h>
#include <string.h>

#include "hx.h"

#define TAG_KV 11
#define TAG_DKV 12

/* token-major src [R][ld] (heads h0.. of width d) <-> attention side [rows][H][d] */
static void tok_to_att(const hx_ctx *c, const hx_segs *ss, const int64_t *map, int64_t R, const float *src,
                       int64_t ld, int64_t H, float *dst)
{
    const int64_t d = c->d;
    for (int64_t row = 0; row < R; row++)
        for (int64_t hh = 0; hh < H; hh++)
            memcpy(dst + hx_att_off(ss, map[row], hh, H, d), src + row * ld + hh * d, sizeof(float) * (size_t)d);
}

static void att_to_tok(const hx_ctx *c, const hx_segs *ss, const int64_t *map, int64_t R, const float *src,
                       int64_t H, float *dst, int64_t ld)
{
    const int64_t d = c->d;
    for (int64_t row = 0; row < R; row++)
        for (int64_t hh = 0; hh < H; hh++)
            memcpy(dst + row * ld + hh * d, src + hx_att_off(ss, map[row], hh, H, d), sizeof(float) * (size_t)d);
}

/* Ulysses: GEMM-side token-major [Rg][Htot*d] (this TP rank's heads) ->
 * all-to-all send [peer][Rg][Htot/u][d] (head group p to peer p); eff heads
 * map to source heads e / rep. */
static void uly_pack_heads(const hx_ctx *c, const float *src, int64_t src_heads, int64_t Htot, float *dst)
{
    const int64_t d = c->d, Hp = Htot / c->u, rep = Htot / src_heads, R = c->Rg;
    for (int64_t p = 0; p < c->u; p++)
        for (int64_t row = 0; row < R; row++)
            for (int64_t j = 0; j < Hp; j++) {
                const int64_t e = p * Hp + j;
                memcpy(dst + ((p * R + row) * Hp + j) * d, src + row * src_heads * d + (e / rep) * d,
                       sizeof(float) * (size_t)d);
            }
}

/* Ulysses: all-to-all receive [head group q][Rg][Htot/u][d] -> token-major
 * [Rg][dst_heads*d], summing the replicas of an eff head into its source head */
static void uly_unpack_heads(const hx_ctx *c, const float *src, int64_t Htot, float *dst, int64_t dst_heads)
{
    const int64_t d = c->d, Hp = Htot / c->u, rep = Htot / dst_heads, R = c->Rg;
    if (rep > 1) memset(dst, 0, sizeof(float) * (size_t)(R * dst_heads * d));
    for (int64_t q = 0; q < c->u; q++)
        for (int64_t row = 0; row < R; row++)
            for (int64_t j = 0; j < Hp; j++) {
                const int64_t e = q * Hp + j;
                const float *s = src + ((q * R + row) * Hp + j) * d;
                float *o = dst + row * dst_heads * d + (e / rep) * d;
                if (rep > 1)
                    for (int64_t x = 0; x < d; x++) o[x] += s[x];
                else
                    memcpy(o, s, sizeof(float) * (size_t)d);
            }
}

/* Ulysses: all-to-all receive [peer][Rg][H][d] (peer's tokens, my heads) <->
 * attention side over the ring part */
static void uly_recv_to_att(const hx_ctx *c, const float *src, int64_t H, float *dst)
{
    const int64_t d = c->d;
    for (int64_t pr = 0; pr < c->u * c->Rg; pr++)
        for (int64_t j = 0; j < H; j++)
            memcpy(dst + hx_att_off(&c->qs, c->uly_map[pr], j, H, d), src + (pr * H + j) * d,
                   sizeof(float) * (size_t)d);
}

static void uly_att_to_send(const hx_ctx *c, const float *src, int64_t H, float *dst)
{
    const int64_t d = c->d;
    for (int64_t pr = 0; pr < c->u * c->Rg; pr++)
        for (int64_t j = 0; j < H; j++)
            memcpy(dst + (pr * H + j) * d, src + hx_att_off(&c->qs, c->uly_map[pr], j, H, d),
                   sizeof(float) * (size_t)d);
}

/* ------------------------------------------------------------ staging */

void hx_stage_qkv(hx_ctx *c)
{
    const int64_t kvb = c->kv_rows * c->Hkv * c->d;
    switch (c->mode) {
    case ULY_EXEC_A2A:
        uly_pack_heads(c, c->Qg, c->gq, c->gq, c->s_q);
        uly_pack_heads(c, c->Kg, c->gkv, c->kv_eff, c->s_k);
        uly_pack_heads(c, c->Vg, c->gkv, c->kv_eff, c->s_v);
        break;
    case ULY_EXEC_TOKENS:
    case ULY_EXEC_TP_SP:
    case ULY_EXEC_TP_ALLREDUCE:
        tok_to_att(c, &c->qs, c->g2a, c->Rg, c->Qg, c->qc, c->Hq, c->qa);
        tok_to_att(c, &c->qs, c->g2a, c->Rg, c->Kg, c->kc, c->Hkv, c->kv_own);
        tok_to_att(c, &c->qs, c->g2a, c->Rg, c->Vg, c->kc, c->Hkv, c->kv_own + kvb);
        break;
    case ULY_EXEC_ALLGATHER:
        /* K, V stay token-major: they are the all-gathers' inputs */
        tok_to_att(c, &c->qs, c->g2a, c->Rg, c->Qg, c->qc, c->Hq, c->qa);
        break;
    case ULY_EXEC_RSA: {
        const int64_t blk = c->Rt * c->kc;
        memcpy(c->k_all + c->ri * blk, c->Kg, sizeof(float) * (size_t)blk);
        memcpy(c->v_all + c->ri * blk, c->Vg, sizeof(float) * (size_t)blk);
        break;
    }
    case ULY_EXEC_COUNT: break;
    }
}

void hx_stage_o_in(hx_ctx *c)
{
    if (c->mode == ULY_EXEC_A2A) uly_unpack_heads(c, c->r_o, c->gq, c->Og, c->gq);
}

void hx_stage_do(hx_ctx *c)
{
    if (c->mode == ULY_EXEC_A2A) uly_pack_heads(c, c->dOg, c->gq, c->gq, c->s_do);
    else if (c->mode != ULY_EXEC_RSA) tok_to_att(c, &c->qs, c->g2a, c->Rg, c->dOg, c->qc, c->Hq, c->doa);
}

void hx_stage_dqkv_in(hx_ctx *c)
{
    if (c->mode == ULY_EXEC_A2A) {
        uly_unpack_heads(c, c->r_dq, c->gq, c->dQg, c->gq);
        uly_unpack_heads(c, c->r_dk, c->kv_eff, c->dKg, c->gkv);
        uly_unpack_heads(c, c->r_dv, c->kv_eff, c->dVg, c->gkv);
    } else if (c->mode == ULY_EXEC_RSA) {
        const int64_t blk = c->Rt * c->kc;
        memcpy(c->dKg, c->dk_all + c->ri * blk, sizeof(float) * (size_t)blk);
        memcpy(c->dVg, c->dv_all + c->ri * blk, sizeof(float) * (size_t)blk);
    }
    /* TOK, TP: attn_bwd wrote them; AG: the reduce-scatters did */
}

/* ------------------------------------------------------- segment pairs */

static struct kern_attn_desc desc_for(const hx_ctx *c, const hx_seg *q, const hx_seg *kv)
{
    struct kern_attn_desc ds;
    HX_ATTN_DESC(ds, c, q, kv);
    ds.acc = KERN_ACC_F32;
    ds.threads = c->o.threads;
    return ds;
}

static int kcheck(kern_status s, const char *what)
{
    return s == KERN_OK ? HX_OK : hx_fail("kernel %s: %s", what, kern_status_str(s));
}

/* Lets MPI move the bytes of the ring requests in flight (c->pend): Open
 * MPI has no progress thread for shared memory or TCP, so a transfer moves
 * only while a rank is inside an MPI call; without these tests between the
 * attention blocks a hop would wait, whole, for the wait after the compute. */
static int progress(hx_ctx *c)
{
    if (c->n_pend <= 0) return HX_OK;
    int flag = 0;
    return HX_MPI(MPI_Testall(c->n_pend, c->pend, &flag, MPI_STATUSES_IGNORE));
}

/* The kernel calls of one (query, key) segment pair: while ring transfers are
 * in flight, one call per KV head (with its query heads: the buffers are
 * head-major, so a head's rows are contiguous) and a progress test after
 * each, so that the transfer moves while attention computes; else one call.
 * bwd: 0 the forward (o, lse written), 1 the backward (dq, dk, dv added). */
typedef struct attn_ptrs {
    const float *q, *k, *v, *o_in, *lse_in, *dout;
    float *o, *lse, *dq, *dk, *dv;
} attn_ptrs;

static int attn_pair(hx_ctx *c, struct kern_attn_desc ds, const attn_ptrs *p, int bwd)
{
    const int chunks = c->n_pend > 0 ? ds.kv_heads : 1;
    const int64_t hq = ds.heads / chunks, hk = ds.kv_heads / chunks;
    const int64_t qs = hq * ds.n_q * ds.d, ks = hk * ds.n_kv * ds.d, ls = hq * ds.n_q;
    ds.heads = (int)hq;
    ds.kv_heads = (int)hk;
    for (int64_t h = 0; h < chunks; h++) {
        if (bwd)
            HX_TRY(kcheck(c->kern->bwd(&ds, p->q + h * qs, p->k + h * ks, p->v + h * ks, p->o_in + h * qs,
                                       p->lse_in + h * ls, p->dout + h * qs, p->dq + h * qs, p->dk + h * ks,
                                       p->dv + h * ks),
                          "backward"));
        else
            HX_TRY(kcheck(c->kern->fwd(&ds, p->q + h * qs, p->k + h * ks, p->v + h * ks, p->o + h * qs,
                                       p->lse + h * ls),
                          "forward"));
        HX_TRY(progress(c));
    }
    return HX_OK;
}

/* (oa, lsea) += attention of the query segments over the key segments ks */
static int pairs_fwd(hx_ctx *c, const hx_segs *ks, const float *kb, const float *vb)
{
    const int64_t d = c->d, Hq = c->Hq, Hk = c->Hkv;
    for (int i = 0; i < c->qs.n; i++) {
        const hx_seg *q = &c->qs.s[i];
        for (int j = 0; j < ks->n; j++) {
            const hx_seg *kv = &ks->s[j];
            if (hx_seg_pair_masked(c, q, kv)) continue;
            struct kern_attn_desc ds = desc_for(c, q, kv);
            const float *qp = c->qa + q->base * Hq * d;
            const float *kp = kb + kv->base * Hk * d, *vp = vb + kv->base * Hk * d;
            float *op = c->oa + q->base * Hq * d, *lp = c->lsea + q->base * Hq;
            if (!c->has[i]) {
                HX_TRY(attn_pair(c, ds, &(attn_ptrs){.q = qp, .k = kp, .v = vp, .o = op, .lse = lp}, 0));
                c->has[i] = 1;
            } else {
                float *to = c->tmp_o + q->base * Hq * d, *tl = c->tmp_lse + q->base * Hq;
                HX_TRY(attn_pair(c, ds, &(attn_ptrs){.q = qp, .k = kp, .v = vp, .o = to, .lse = tl}, 0));
                HX_TRY(kcheck(kern_attn_merge((int)Hq, (int)q->len, (int)d, op, lp, to, tl), "merge"));
            }
        }
    }
    return HX_OK;
}

static void fwd_begin(hx_ctx *c) { memset(c->has, 0, (size_t)HX_MAX_SEGS); }

static void fwd_end(hx_ctx *c)
{
    const int64_t d = c->d, Hq = c->Hq;
    for (int i = 0; i < c->qs.n; i++) {
        if (c->has[i]) continue;
        const hx_seg *q = &c->qs.s[i];
        memset(c->oa + q->base * Hq * d, 0, sizeof(float) * (size_t)(Hq * q->len * d));
        for (int64_t x = 0; x < Hq * q->len; x++) c->lsea[q->base * Hq + x] = -INFINITY;
    }
}

/* dqa, dk, dv += gradient through the key segments ks */
static int pairs_bwd(hx_ctx *c, const hx_segs *ks, const float *kb, const float *vb, float *dkb, float *dvb)
{
    const int64_t d = c->d, Hq = c->Hq, Hk = c->Hkv;
    for (int i = 0; i < c->qs.n; i++) {
        const hx_seg *q = &c->qs.s[i];
        for (int j = 0; j < ks->n; j++) {
            const hx_seg *kv = &ks->s[j];
            if (hx_seg_pair_masked(c, q, kv)) continue;
            struct kern_attn_desc ds = desc_for(c, q, kv);
            const int64_t qo = q->base * Hq * d, ko = kv->base * Hk * d;
            const attn_ptrs pp = {.q = c->qa + qo, .k = kb + ko, .v = vb + ko, .o_in = c->oa + qo,
                                  .lse_in = c->lsea + q->base * Hq, .dout = c->doa + qo, .dq = c->dqa + qo,
                                  .dk = dkb + ko, .dv = dvb + ko};
            HX_TRY(attn_pair(c, ds, &pp, 1));
        }
    }
    return HX_OK;
}

/* ---------------------------------------------------------- ring loops */

/* Waiting and moving bytes, apart. Every transfer of a ring step is
 * announced by a zero-byte "ready" message from the rank it waits for, sent
 * when that rank reaches the point where it posts the transfer. After the
 * compute, a rank first waits for the ready messages (the time its peers
 * arrive late: load imbalance, a descheduled peer), then for the transfers
 * themselves (moving the bytes that the compute did not hide). Zero-byte
 * messages carry no data: the op's bytes are those of the transfer alone. */
#define TAG_KV_READY 13
#define TAG_DKV_READY 14

/* The requests of one ring attention op, in one array that the progress
 * tests see (c->pend). K,V hop of this step: the ready messages from the
 * previous and the next rank (the one it receives from, the one its send
 * waits for), its own ready messages to them, the block received and sent.
 * The dK,dV accumulator: the one received last step and added this step
 * (ready, data), the one posted this step, this step's and last step's
 * sends (data, ready). */
enum { R_KV_RDY_P, R_KV_RDY_N, R_KV_RS_N, R_KV_RS_P, R_KV_RX, R_KV_TX,
       R_ACC_IN_RDY, R_ACC_IN, R_ACC_RECV_RDY, R_ACC_RECV,
       R_ACC_TX0, R_ACC_TX1, R_ACC_RS0, R_ACC_RS1, R_COUNT };

static float ready_buf; /* zero-byte messages need a buffer, never touched */

/* Posts step s's K,V hop (none at the last step): cur to the next rank,
 * the previous rank's block into nxt, with the ready messages. */
static int kv_hop_post(const hx_group *g, int s, const float *cur, float *nxt, int64_t blk, MPI_Request *R,
                       int64_t *bytes)
{
    if (s >= g->size - 1) return HX_OK;
    HX_TRY(hx_irecv(g, &ready_buf, 0, g->prev, TAG_KV_READY, &R[R_KV_RDY_P]));
    HX_TRY(hx_irecv(g, &ready_buf, 0, g->next, TAG_KV_READY, &R[R_KV_RDY_N]));
    HX_TRY(hx_isend(g, &ready_buf, 0, g->next, TAG_KV_READY, &R[R_KV_RS_N], NULL));
    HX_TRY(hx_isend(g, &ready_buf, 0, g->prev, TAG_KV_READY, &R[R_KV_RS_P], NULL));
    HX_TRY(hx_irecv(g, nxt, blk, g->prev, TAG_KV, &R[R_KV_RX]));
    HX_TRY(hx_isend(g, cur, blk, g->next, TAG_KV, &R[R_KV_TX], bytes));
    return HX_OK;
}

/* A transfer's exposed time, split: the time blocked on the nr ready
 * messages at ready (waiting for the peers) is added to *wait, the time then
 * blocked on the n requests at rq (moving the bytes) to *xfer. */
static int wait_split(int nr, MPI_Request *ready, int n, MPI_Request *rq, double *wait, double *xfer)
{
    const double t0 = hx_now();
    HX_TRY(hx_waitall(nr, ready));
    const double t1 = hx_now();
    HX_TRY(hx_waitall(n, rq));
    *wait += t1 - t0;
    *xfer += hx_now() - t1;
    return HX_OK;
}

/* A transfer op's pass: its exposed time (wait + transfer) and the wait */
static void xfer_done(hx_opstat *st, double wait, double xfer)
{
    st->done = 1;
    st->t_pass = wait + xfer;
    st->w_pass = wait;
}

static int ring_fwd(hx_ctx *c, int attn_id)
{
    const hx_group *g = &c->g[ULY_GROUP_RING];
    const int r = g->size, ri = g->rank;
    const int64_t blk = 2 * c->kv_rows * c->Hkv * c->d, half = blk / 2;
    const int kv_id = c->fuse_kv[attn_id];
    if (kv_id < 0) return hx_fail("plan: attention op %d has no ring_kv op to overlap", attn_id);
    hx_opstat *sk = &c->st[kv_id];
    double wait = 0, xfer = 0;
    MPI_Request R[R_COUNT];
    for (int i = 0; i < R_COUNT; i++) R[i] = MPI_REQUEST_NULL;
    c->pend = R;
    c->n_pend = R_KV_TX + 1;
    const float *cur = c->kv_own;
    for (int s = 0; s < r; s++) {
        float *nxt = c->rot[s % 2];
        HX_TRY(kv_hop_post(g, s, cur, nxt, blk, R, &sk->bytes_pass));
        hx_segs ks;
        hx_seg_ring_part(c, (ri - s + r) % r, c->b, &ks);
        HX_TRY(pairs_fwd(c, &ks, cur, cur + half));
        HX_TRY(wait_split(2, &R[R_KV_RDY_P], 4, &R[R_KV_RS_N], &wait, &xfer));
        hx_beat(attn_id, "attn_fwd ring step");
        cur = nxt;
    }
    c->n_pend = 0;
    xfer_done(sk, wait, xfer);
    return HX_OK;
}

static int ring_bwd(hx_ctx *c, int attn_id)
{
    const hx_group *g = &c->g[ULY_GROUP_RING];
    const int r = g->size, ri = g->rank;
    const int64_t blk = 2 * c->kv_rows * c->Hkv * c->d, half = blk / 2;
    const int kv_id = c->fuse_kv[attn_id], dkv_id = c->fuse_dkv[attn_id];
    if (kv_id < 0 || dkv_id < 0) return hx_fail("plan: attention op %d lacks its ring_kv/ring_dkv ops", attn_id);
    hx_opstat *sk = &c->st[kv_id], *sd = &c->st[dkv_id];
    double w_kv = 0, x_kv = 0, w_dkv = 0, x_dkv = 0;
    MPI_Request R[R_COUNT];
    for (int i = 0; i < R_COUNT; i++) R[i] = MPI_REQUEST_NULL;
    c->pend = R;
    c->n_pend = R_COUNT;
    const float *cur = c->kv_own;
    for (int s = 0; s < r; s++) {
        float *nxt = c->rot[s % 2];
        HX_TRY(kv_hop_post(g, s, cur, nxt, blk, R, &sk->bytes_pass));
        /* the accumulator posted last step is added this step */
        R[R_ACC_IN_RDY] = R[R_ACC_RECV_RDY];
        R[R_ACC_IN] = R[R_ACC_RECV];
        R[R_ACC_RECV_RDY] = R[R_ACC_RECV] = MPI_REQUEST_NULL;
        const float *acc_in_buf = c->accr[(s + 1) % 2];
        /* step s >= 1 receives the accumulator it adds at s+1 (the last: its own block's, home) */
        if (s >= 1) {
            HX_TRY(hx_irecv(g, &ready_buf, 0, g->prev, TAG_DKV_READY, &R[R_ACC_RECV_RDY]));
            HX_TRY(hx_irecv(g, c->accr[s % 2], blk, g->prev, TAG_DKV, &R[R_ACC_RECV]));
        }
        float *tgt = s == 0 ? c->dkv_own : c->accs[s % 2];
        if (s >= 1) {
            /* this buffer's send from step s-2 (its receiver posted then): moving bytes */
            HX_TRY(wait_split(0, NULL, 1, &R[R_ACC_TX0 + s % 2], &w_dkv, &x_dkv));
            HX_TRY(wait_split(0, NULL, 1, &R[R_ACC_RS0 + s % 2], &w_dkv, &x_dkv));
            memset(tgt, 0, sizeof(float) * (size_t)blk);
        }
        hx_segs ks;
        hx_seg_ring_part(c, (ri - s + r) % r, c->b, &ks);
        HX_TRY(pairs_bwd(c, &ks, cur, cur + half, tgt, tgt + half));
        if (s >= 1) {
            if (s >= 2) {
                HX_TRY(wait_split(1, &R[R_ACC_IN_RDY], 1, &R[R_ACC_IN], &w_dkv, &x_dkv));
                for (int64_t x = 0; x < blk; x++) tgt[x] += acc_in_buf[x];
            }
            HX_TRY(hx_isend(g, &ready_buf, 0, g->next, TAG_DKV_READY, &R[R_ACC_RS0 + s % 2], NULL));
            HX_TRY(hx_isend(g, tgt, blk, g->next, TAG_DKV, &R[R_ACC_TX0 + s % 2], &sd->bytes_pass));
        }
        HX_TRY(wait_split(2, &R[R_KV_RDY_P], 4, &R[R_KV_RS_N], &w_kv, &x_kv));
        hx_beat(attn_id, "attn_bwd ring step");
        cur = nxt;
    }
    if (r > 1) {
        /* my own block's accumulator comes home */
        HX_TRY(wait_split(1, &R[R_ACC_RECV_RDY], 1, &R[R_ACC_RECV], &w_dkv, &x_dkv));
        HX_TRY(wait_split(0, NULL, 4, &R[R_ACC_TX0], &w_dkv, &x_dkv));
        const float *home = c->accr[(r - 1) % 2];
        for (int64_t x = 0; x < blk; x++) c->dkv_own[x] += home[x];
    }
    c->n_pend = 0;
    xfer_done(sk, w_kv, x_kv);
    xfer_done(sd, w_dkv, x_dkv);
    return HX_OK;
}

/* ------------------------------------------------------------ handlers */

static int ringed(const hx_ctx *c)
{
    return c->r > 1 && (c->mode == ULY_EXEC_TOKENS || c->mode == ULY_EXEC_A2A);
}

/* All-gather CP: row gr of ring rank j's GEMM side (the gathered [j][Rg][kc],
 * this TP rank's KV heads) <-> its row of the full attention side */
static int64_t ag_full_row(const hx_ctx *c, int64_t j, int64_t gr)
{
    return hx_row_batch(c, gr) * c->N + hx_row_pos(c, (int)j, 0, gr);
}

static void ag_assemble(hx_ctx *c, const float *all, float *dst)
{
    /* gathered [rank j][Rg][kc] -> full attention side [b][Hkv][N][d] */
    const int64_t d = c->d;
    for (int64_t j = 0; j < c->r; j++)
        for (int64_t gr = 0; gr < c->Rg; gr++) {
            const int64_t ar = ag_full_row(c, j, gr);
            const float *src = all + (j * c->Rg + gr) * c->kc;
            for (int64_t hh = 0; hh < c->Hkv; hh++)
                memcpy(dst + hx_att_off(&c->fulls, ar, hh, c->Hkv, d), src + hh * d, sizeof(float) * (size_t)d);
        }
}

static void ag_scatter_in(hx_ctx *c, const float *src, float *all)
{
    const int64_t d = c->d;
    for (int64_t j = 0; j < c->r; j++)
        for (int64_t gr = 0; gr < c->Rg; gr++) {
            const int64_t ar = ag_full_row(c, j, gr);
            float *dst = all + (j * c->Rg + gr) * c->kc;
            for (int64_t hh = 0; hh < c->Hkv; hh++)
                memcpy(dst + hh * d, src + hx_att_off(&c->fulls, ar, hh, c->Hkv, d), sizeof(float) * (size_t)d);
        }
}

static int h_attn_fwd(hx_ctx *c, const uly_op *op)
{
    const int64_t kvb = c->kv_rows * c->Hkv * c->d;
    /* prologue: inputs to the attention side */
    if (c->mode == ULY_EXEC_A2A) {
        uly_recv_to_att(c, c->r_q, c->Hq, c->qa);
        uly_recv_to_att(c, c->r_k, c->Hkv, c->kv_own);
        uly_recv_to_att(c, c->r_v, c->Hkv, c->kv_own + kvb);
    } else if (c->mode == ULY_EXEC_ALLGATHER) {
        ag_assemble(c, c->kg_all, c->kv_own);
        ag_assemble(c, c->vg_all, c->kv_own + kvb);
    }
    fwd_begin(c);
    if (ringed(c)) {
        HX_TRY(ring_fwd(c, op->id));
    } else {
        const hx_segs *ks = c->mode == ULY_EXEC_ALLGATHER ? &c->fulls : &c->qs;
        HX_TRY(pairs_fwd(c, ks, c->kv_own, c->kv_own + kvb));
    }
    fwd_end(c);
    /* epilogue: output to where out_proj (or a2a_o) reads it */
    if (c->mode == ULY_EXEC_A2A) uly_att_to_send(c, c->oa, c->Hq, c->s_o);
    else att_to_tok(c, &c->qs, c->g2a, c->Rg, c->oa, c->Hq, c->Og, c->qc);
    return HX_OK;
}

static int h_attn_bwd(hx_ctx *c, const uly_op *op)
{
    const int64_t kvb = c->kv_rows * c->Hkv * c->d;
    if (c->mode == ULY_EXEC_A2A) uly_recv_to_att(c, c->r_do, c->Hq, c->doa);
    memset(c->dqa, 0, sizeof(float) * (size_t)(c->qs.rows * c->Hq * c->d));
    memset(c->dkv_own, 0, sizeof(float) * (size_t)(2 * kvb));
    if (ringed(c)) {
        HX_TRY(ring_bwd(c, op->id));
    } else {
        const hx_segs *ks = c->mode == ULY_EXEC_ALLGATHER ? &c->fulls : &c->qs;
        HX_TRY(pairs_bwd(c, ks, c->kv_own, c->kv_own + kvb, c->dkv_own, c->dkv_own + kvb));
    }
    switch (c->mode) {
    case ULY_EXEC_A2A:
        uly_att_to_send(c, c->dqa, c->Hq, c->s_dq);
        uly_att_to_send(c, c->dkv_own, c->Hkv, c->s_dk);
        uly_att_to_send(c, c->dkv_own + kvb, c->Hkv, c->s_dv);
        break;
    case ULY_EXEC_ALLGATHER:
        att_to_tok(c, &c->qs, c->g2a, c->Rg, c->dqa, c->Hq, c->dQg, c->qc);
        ag_scatter_in(c, c->dkv_own, c->rs_dk_in);
        ag_scatter_in(c, c->dkv_own + kvb, c->rs_dv_in);
        break;
    default:
        att_to_tok(c, &c->qs, c->g2a, c->Rg, c->dqa, c->Hq, c->dQg, c->qc);
        att_to_tok(c, &c->qs, c->g2a, c->Rg, c->dkv_own, c->Hkv, c->dKg, c->kc);
        att_to_tok(c, &c->qs, c->g2a, c->Rg, c->dkv_own + kvb, c->Hkv, c->dVg, c->kc);
        break;
    }
    return HX_OK;
}

/* The ring transfers run inside the attention op that they overlap (both
 * backends): their own handler only checks that it did. */
int hx_ring_fused(hx_ctx *c, const uly_op *op)
{
    if (!c->st[op->id].done)
        return hx_fail("plan op %d (%s) overlaps op %d, which did not run it", op->id, uly_op_type_name(op->type),
                       op->overlaps);
    return HX_OK;
}

/* ------------------------------------------------------------------ RSA */

static float rsa_scale(const hx_ctx *c) { return (float)(1.0 / sqrt((double)c->d)); }

static int h_rsa_ring(hx_ctx *c, const uly_op *op)
{
    const hx_group *g = &c->g[ULY_GROUP_RING];
    const int r = g->size, ri = g->rank;
    float *all = op->type == ULY_OPT_RING_K ? c->k_all : c->v_all;
    const int64_t blk = c->Rt * c->kc;
    for (int s = 1; s < r; s++) {
        const int send_blk = (ri - s + 1 + r) % r, recv_blk = (ri - s + r) % r;
        HX_TRY(hx_sendrecv(g, all + send_blk * blk, g->next, all + recv_blk * blk, g->prev, blk, 13,
                           &c->st[op->id].bytes_pass));
    }
    return HX_OK;
}

/* S[bb][hh][T][N] */
static float *S_at(const hx_ctx *c, float *S, int64_t bb, int64_t hh) { return S + ((bb * c->a + hh) * c->T) * c->N; }

/* Head hh of sequence bb in the token-major Q, O, dO, dQ: [b][T][qc] */
static int64_t rsa_q_off(const hx_ctx *c, int64_t bb, int64_t hh) { return bb * c->T * c->qc + hh * c->d; }

/* The KV head that query head hh reads, of sequence bb, in ring block j of
 * K, V, dK, dV gathered from every rank: [r][b][T][kc] */
static int64_t rsa_kv_off(const hx_ctx *c, int64_t j, int64_t bb, int64_t hh)
{
    return j * c->Rt * c->kc + bb * c->T * c->kc + (hh / (c->a / c->k)) * c->d;
}

static int h_rsa_qk(hx_ctx *c, const uly_op *op)
{
    (void)op;
    const int64_t T = c->T;
    for (int64_t bb = 0; bb < c->b; bb++)
        for (int64_t hh = 0; hh < c->a; hh++)
            for (int64_t j = 0; j < c->r; j++)
                HX_TRY(hx_gemm(0, 1, T, T, c->d, rsa_scale(c), c->Qg + rsa_q_off(c, bb, hh), c->qc,
                               c->k_all + rsa_kv_off(c, j, bb, hh), c->kc, 0.0f,
                               S_at(c, c->S, bb, hh) + j * T, c->N));
    return HX_OK;
}

static int h_rsa_softmax(hx_ctx *c, const uly_op *op)
{
    (void)op;
    const int64_t N = c->N;
    for (int64_t bb = 0; bb < c->b; bb++)
        for (int64_t hh = 0; hh < c->a; hh++)
            for (int64_t i = 0; i < c->T; i++) {
                float *s = S_at(c, c->S, bb, hh) + i * N;
                const int64_t vis = c->w.causal ? c->ri * c->T + i + 1 : N;
                float mx = -INFINITY;
                for (int64_t j = 0; j < vis; j++) mx = s[j] > mx ? s[j] : mx;
                double sum = 0;
                for (int64_t j = 0; j < vis; j++) {
                    s[j] = expf(s[j] - mx);
                    sum += s[j];
                }
                const float inv = (float)(1.0 / sum);
                for (int64_t j = 0; j < vis; j++) s[j] *= inv;
                for (int64_t j = vis; j < N; j++) s[j] = 0.0f;
            }
    return HX_OK;
}

static int h_rsa_pv(hx_ctx *c, const uly_op *op)
{
    (void)op;
    const int64_t T = c->T;
    for (int64_t bb = 0; bb < c->b; bb++)
        for (int64_t hh = 0; hh < c->a; hh++)
            for (int64_t j = 0; j < c->r; j++)
                HX_TRY(hx_gemm(0, 0, T, c->d, T, 1.0f, S_at(c, c->S, bb, hh) + j * T, c->N,
                               c->v_all + rsa_kv_off(c, j, bb, hh), c->kc, j ? 1.0f : 0.0f,
                               c->Og + rsa_q_off(c, bb, hh), c->qc));
    return HX_OK;
}

static int h_rsa_pv_bwd(hx_ctx *c, const uly_op *op)
{
    (void)op;
    const int64_t T = c->T, blk = c->Rt * c->kc;
    memset(c->dv_all, 0, sizeof(float) * (size_t)(c->r * blk));
    for (int64_t bb = 0; bb < c->b; bb++)
        for (int64_t hh = 0; hh < c->a; hh++)
            for (int64_t j = 0; j < c->r; j++) {
                const float *dO = c->dOg + rsa_q_off(c, bb, hh);
                const int64_t ko = rsa_kv_off(c, j, bb, hh);
                /* dP = dO V^T */
                HX_TRY(hx_gemm(0, 1, T, T, c->d, 1.0f, dO, c->qc, c->v_all + ko, c->kc, 0.0f,
                               S_at(c, c->dP, bb, hh) + j * T, c->N));
                /* dV += P^T dO (full length: summed over the ring by allreduce_dv) */
                HX_TRY(hx_gemm(1, 0, T, c->d, T, 1.0f, S_at(c, c->S, bb, hh) + j * T, c->N, dO, c->qc, 1.0f,
                               c->dv_all + ko, c->kc));
            }
    return HX_OK;
}

static int h_rsa_softmax_bwd(hx_ctx *c, const uly_op *op)
{
    (void)op;
    const int64_t N = c->N, d = c->d;
    for (int64_t bb = 0; bb < c->b; bb++)
        for (int64_t hh = 0; hh < c->a; hh++)
            for (int64_t i = 0; i < c->T; i++) {
                const float *o = c->Og + (bb * c->T + i) * c->qc + hh * d;
                const float *g = c->dOg + (bb * c->T + i) * c->qc + hh * d;
                double D = 0;
                for (int64_t e = 0; e < d; e++) D += (double)o[e] * g[e];
                const float Df = (float)D;
                const float *p = S_at(c, c->S, bb, hh) + i * N;
                float *dp = S_at(c, c->dP, bb, hh) + i * N;
                for (int64_t j = 0; j < N; j++) dp[j] = p[j] * (dp[j] - Df);
            }
    return HX_OK;
}

static int h_rsa_qk_bwd(hx_ctx *c, const uly_op *op)
{
    (void)op;
    const int64_t T = c->T, blk = c->Rt * c->kc;
    memset(c->dk_all, 0, sizeof(float) * (size_t)(c->r * blk));
    for (int64_t bb = 0; bb < c->b; bb++)
        for (int64_t hh = 0; hh < c->a; hh++)
            for (int64_t j = 0; j < c->r; j++) {
                const int64_t ko = rsa_kv_off(c, j, bb, hh);
                const float *dS = S_at(c, c->dP, bb, hh) + j * T;
                /* dQ = scale dS K */
                HX_TRY(hx_gemm(0, 0, T, c->d, T, rsa_scale(c), dS, c->N, c->k_all + ko, c->kc, j ? 1.0f : 0.0f,
                               c->dQg + rsa_q_off(c, bb, hh), c->qc));
                /* dK += scale dS^T Q */
                HX_TRY(hx_gemm(1, 0, T, c->d, T, rsa_scale(c), dS, c->N, c->Qg + rsa_q_off(c, bb, hh), c->qc, 1.0f,
                               c->dk_all + ko, c->kc));
            }
    return HX_OK;
}

static int h_rsa_allreduce(hx_ctx *c, const uly_op *op)
{
    float *buf = op->type == ULY_OPT_ALLREDUCE_DK ? c->dk_all : c->dv_all;
    return hx_allreduce_ring(&c->g[ULY_GROUP_RING], buf, c->rs_tmp, c->r * c->Rt * c->kc, &c->st[op->id].bytes_pass);
}

/* ------------------------------------------------------------ table */

const hx_handler hx_attn_handlers[ULY_OPT_COUNT] = {
    [ULY_OPT_ATTN_FWD] = h_attn_fwd, [ULY_OPT_ATTN_BWD] = h_attn_bwd, [ULY_OPT_RING_KV] = hx_ring_fused,
    [ULY_OPT_RING_DKV] = hx_ring_fused, [ULY_OPT_RING_K] = h_rsa_ring, [ULY_OPT_RING_V] = h_rsa_ring,
    [ULY_OPT_RSA_QK] = h_rsa_qk, [ULY_OPT_RSA_SOFTMAX] = h_rsa_softmax, [ULY_OPT_RSA_PV] = h_rsa_pv,
    [ULY_OPT_RSA_PV_BWD] = h_rsa_pv_bwd, [ULY_OPT_RSA_SOFTMAX_BWD] = h_rsa_softmax_bwd,
    [ULY_OPT_RSA_QK_BWD] = h_rsa_qk_bwd, [ULY_OPT_ALLREDUCE_DK] = h_rsa_allreduce,
    [ULY_OPT_ALLREDUCE_DV] = h_rsa_allreduce,
};
