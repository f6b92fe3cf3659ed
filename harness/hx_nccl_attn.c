/* hx_nccl_attn.c: the nccl backend's attention (as hx_attn.c on the CPU):
 * one kernels/cuda call per (query segment, key segment) pair, flash or the
 * cuBLAS reference, the partial results merged by log-sum-exp into float32
 * accumulators; the ring's K,V (and dK,dV accumulator) hops on the ring
 * communicator's stream, overlapping each step's attention on the compute
 * stream, with the time the compute stream waits for them recorded as
 * those transfer ops' exposed time. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <string.h>

#include "hx_nccl.h"

/* ------------------------------------------------------------ attention */

static struct kern_cuda_attn_desc desc_for(const hx_ctx *c, const hx_seg *q, const hx_seg *kv)
{
    const hn *H = c->be_state;
    struct kern_cuda_attn_desc ds;
    HX_ATTN_DESC(ds, c, q, kv);
    ds.dtype = H->ct;
    return ds;
}

/* One (query segment, key segment) pair, forward: (oacc, lse) += its attention */
static int pair_fwd(hx_ctx *c, const hx_seg *q, const hx_seg *kv, const void *kb, const void *vb)
{
    hn *H = c->be_state;
    const int64_t d = c->d, Hq = c->Hq;
    const struct kern_cuda_attn_desc ds = desc_for(c, q, kv);
    const int64_t qo = q->base * Hq * d, ko = kv->base * c->Hkv * d;
    const void *qp = hn_at(H, H->qa, qo), *kp = hn_at(H, kb, ko), *vp = hn_at(H, vb, ko);
    float *tl = H->tmp_lse + q->base * Hq, *oacc = H->oacc + qo, *lse = H->lse + q->base * Hq;
    if (H->flash) {
        HX_TRY(HN_K(kern_cuda_attn_fwd(&ds, qp, kp, vp, hn_at(H, H->tmp_o, qo), tl, H->cs)));
        return HN_K(kern_cuda_attn_merge((int)Hq, (int)q->len, (int)d, oacc, lse, hn_at(H, H->tmp_o, qo), H->ct, tl,
                                         H->cs));
    }
    HX_TRY(HN_K(kern_cuda_attn_ref_fwd(H->blas, &ds, qp, kp, vp, H->tmp_o32 + qo, tl, H->ref_ws, H->ref_ws_bytes)));
    return HN_K(kern_cuda_attn_merge((int)Hq, (int)q->len, (int)d, oacc, lse, H->tmp_o32 + qo, KERN_CUDA_F32, tl,
                                     H->cs));
}

/* One pair, backward: dqa, dk, dv (float32) += its gradient */
static int pair_bwd(hx_ctx *c, const hx_seg *q, const hx_seg *kv, const void *kb, const void *vb, float *dkb,
                    float *dvb)
{
    hn *H = c->be_state;
    const int64_t d = c->d, Hq = c->Hq;
    const struct kern_cuda_attn_desc ds = desc_for(c, q, kv);
    const int64_t qo = q->base * Hq * d, ko = kv->base * c->Hkv * d;
    const void *qp = hn_at(H, H->qa, qo), *kp = hn_at(H, kb, ko), *vp = hn_at(H, vb, ko);
    const void *op = hn_at(H, H->oa, qo), *dop = hn_at(H, H->doa, qo);
    const float *lp = H->lse + q->base * Hq;
    if (H->flash)
        return HN_K(kern_cuda_attn_bwd(&ds, qp, kp, vp, op, lp, dop, H->dqa + qo, dkb + ko, dvb + ko, H->bwd_ws,
                                       H->cs));
    return HN_K(kern_cuda_attn_ref_bwd(H->blas, &ds, qp, kp, vp, op, lp, dop, H->dqa + qo, dkb + ko, dvb + ko,
                                       H->ref_ws, H->ref_ws_bytes));
}

/* Every query segment over the key segments ks (K at kb, V at vb): the
 * forward, or with dkb the backward into dkb, dvb; pairs the mask hides
 * (or with an empty segment) launch nothing. */
static int pairs(hx_ctx *c, const hx_segs *ks, const void *kb, const void *vb, float *dkb, float *dvb)
{
    for (int i = 0; i < c->qs.n; i++)
        for (int j = 0; j < ks->n; j++) {
            const hx_seg *q = &c->qs.s[i], *kv = &ks->s[j];
            if (hx_seg_pair_masked(c, q, kv) || q->len == 0 || kv->len == 0) continue;
            HX_TRY(dkb ? pair_bwd(c, q, kv, kb, vb, dkb, dvb) : pair_fwd(c, q, kv, kb, vb));
        }
    return HX_OK;
}

/* One hop round the ring on its communicator's stream: send to the next
 * rank, recv from the previous, n elements. It starts once everything
 * queued on the compute stream so far has run (send is ready, recv no
 * longer read); *done is recorded after it, for the compute stream to wait
 * on. */
static int ring_hop(hn *H, kern_nccl_comm *nc, const void *send, void *recv, int64_t n, int64_t *bytes,
                    cudaEvent_t *done)
{
    HX_TRY(HN_K(kern_nccl_wait_for(nc, H->cs)));
    HX_TRY(HN_K(kern_nccl_ring_step(nc, send, recv, (size_t)n, H->ct, bytes)));
    HX_TRY(hn_ev_get(H, done));
    return HN_CUDA(cudaEventRecord(*done, (cudaStream_t)kern_nccl_comm_stream(nc)));
}

/* The ring, forward or backward (as ring_fwd and ring_bwd in hx_attn.c):
 * K,V rotate on the ring communicator's stream while the compute stream
 * works on the block it has. Backward, each block's dK,dV accumulator also
 * travels r-1 hops in the run's 16-bit type (the plan's bytes): started by
 * the rank after the owner, each rank adds its share (computed in float32)
 * and forwards it, the last sends it home. */
static int ring_run(hx_ctx *c, int attn_id, int bwd)
{
    hn *H = c->be_state;
    const hx_group *g = &c->g[ULY_GROUP_RING];
    const int r = g->size, ri = g->rank;
    kern_nccl_comm *nc = H->nc[ULY_GROUP_RING];
    const int64_t blk = 2 * c->kv_rows * c->Hkv * c->d, half = blk / 2;
    const int kv_id = c->fuse_kv[attn_id], dkv_id = bwd ? c->fuse_dkv[attn_id] : 0;
    if (!nc) return hx_fail("internal: no NCCL communicator for the ring");
    if (kv_id < 0 || dkv_id < 0)
        return hx_fail(bwd ? "plan: attention op %d lacks its ring_kv/ring_dkv ops"
                           : "plan: attention op %d has no ring_kv op to overlap", attn_id);
    hx_opstat *sk = &c->st[kv_id], *sd = bwd ? &c->st[dkv_id] : NULL;
    sk->t_pass = 0;
    if (sd) sd->t_pass = 0;
    cudaEvent_t acc_got = NULL; /* the accumulator received in the previous step */
    const void *cur = H->kv_own;
    for (int s = 0; s < r; s++) {
        void *nxt = H->rot[s % 2];
        cudaEvent_t got = NULL;
        if (s < r - 1) HX_TRY(ring_hop(H, nc, cur, nxt, blk, &sk->bytes_pass, &got));
        hx_segs ks;
        hx_seg_ring_part(c, (ri - s + r) % r, c->b, &ks);
        if (!bwd) {
            HX_TRY(pairs(c, &ks, cur, hn_at(H, cur, half), NULL, NULL));
        } else {
            float *tgt = s == 0 ? H->dkv : H->acc32;
            if (s >= 1) HX_TRY(HN_CUDA(cudaMemsetAsync(H->acc32, 0, sizeof(float) * (size_t)blk, H->cs)));
            HX_TRY(pairs(c, &ks, cur, hn_at(H, cur, half), tgt, tgt + half));
            if (s >= 1) {
                /* the accumulator to forward: my share, plus what came from the previous rank */
                const void *prev = NULL;
                if (s >= 2) {
                    HX_TRY(hn_wait_timed(H, acc_got, &sd->t_pass));
                    prev = H->accr[(s - 1) % 2];
                }
                HX_TRY(HN_CUDA(hxk_add(H->accs[s % 2], H->ct, H->acc32, KERN_CUDA_F32, prev,
                                       prev ? H->ct : KERN_CUDA_F32, blk, H->cs)));
                HX_TRY(ring_hop(H, nc, H->accs[s % 2], H->accr[s % 2], blk, &sd->bytes_pass, &acc_got));
            }
        }
        if (got) HX_TRY(hn_wait_timed(H, got, &sk->t_pass));
        cur = nxt;
    }
    if (bwd && r > 1) {
        /* my own block's accumulator comes home */
        HX_TRY(hn_wait_timed(H, acc_got, &sd->t_pass));
        HX_TRY(HN_CUDA(hxk_add(H->dkv, KERN_CUDA_F32, H->dkv, KERN_CUDA_F32, H->accr[(r - 1) % 2], H->ct, blk, H->cs)));
    }
    sk->done = 1;
    if (sd) sd->done = 1;
    return HX_OK;
}

static int g_attn_fwd(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    const int64_t kvb = c->kv_rows * c->Hkv * c->d, nq = c->qs.rows * c->Hq;
    if (c->mode == ULY_EXEC_A2A) {
        HX_TRY(hn_map_run(H, &H->m_aq, 0, H->qa, H->ct, H->r_q, H->ct));
        HX_TRY(hn_map_run(H, &H->m_ak, 0, H->kv_own, H->ct, H->r_k, H->ct));
        HX_TRY(hn_map_run(H, &H->m_ak, 0, hn_at(H, H->kv_own, kvb), H->ct, H->r_v, H->ct));
    }
    /* the float32 accumulator starts as "no key seen" (O = 0, lse = -inf):
     * the first merge takes a block as it is, and rows no key reaches stay so */
    HX_TRY(HN_CUDA(cudaMemsetAsync(H->oacc, 0, sizeof(float) * (size_t)(nq * c->d), H->cs)));
    HX_TRY(HN_CUDA(hxk_fill_f32(H->lse, -INFINITY, nq, H->cs)));
    if (hn_ringed(c)) HX_TRY(ring_run(c, op->id, 0));
    else HX_TRY(pairs(c, &c->qs, H->kv_own, hn_at(H, H->kv_own, kvb), NULL, NULL));
    HX_TRY(HN_CUDA(hxk_add(H->oa, H->ct, H->oacc, KERN_CUDA_F32, NULL, KERN_CUDA_F32, nq * c->d, H->cs)));
    if (c->mode == ULY_EXEC_A2A) return hn_map_run(H, &H->m_aq, 1, H->s_o, H->ct, H->oa, H->ct);
    return hn_map_run(H, &H->m_tq, 1, H->O, H->ct, H->oa, H->ct);
}

static int g_attn_bwd(hx_ctx *c, const uly_op *op)
{
    hn *H = c->be_state;
    const int64_t kvb = c->kv_rows * c->Hkv * c->d;
    if (c->mode == ULY_EXEC_A2A) HX_TRY(hn_map_run(H, &H->m_aq, 0, H->doa, H->ct, H->r_do, H->ct));
    HX_TRY(HN_CUDA(cudaMemsetAsync(H->dqa, 0, sizeof(float) * (size_t)(c->qs.rows * c->Hq * c->d), H->cs)));
    HX_TRY(HN_CUDA(cudaMemsetAsync(H->dkv, 0, sizeof(float) * (size_t)(2 * kvb), H->cs)));
    if (hn_ringed(c)) HX_TRY(ring_run(c, op->id, 1));
    else HX_TRY(pairs(c, &c->qs, H->kv_own, hn_at(H, H->kv_own, kvb), H->dkv, H->dkv + kvb));
    const int a2a = c->mode == ULY_EXEC_A2A;
    const hn_map *mq = a2a ? &H->m_aq : &H->m_tq, *mk = a2a ? &H->m_ak : &H->m_tk;
    HX_TRY(hn_map_run(H, mq, 1, a2a ? H->s_dq : H->dQ, H->ct, H->dqa, KERN_CUDA_F32));
    HX_TRY(hn_map_run(H, mk, 1, a2a ? H->s_dk : H->dK, H->ct, H->dkv, KERN_CUDA_F32));
    return hn_map_run(H, mk, 1, a2a ? H->s_dv : H->dV, H->ct, H->dkv + kvb, KERN_CUDA_F32);
}

/* the pair shapes the attention calls will use: their largest workspaces */
void hn_attn_workspaces(hx_ctx *c)
{
    hn *H = c->be_state;
    size_t bwd = 16, ref_min = 16, ref_all = 16;
    for (int i = 0; i < c->qs.n; i++)
        for (int j = 0; j < c->qs.n; j++) {
            const struct kern_cuda_attn_desc ds = desc_for(c, &c->qs.s[i], &c->qs.s[j]);
            const size_t w = kern_cuda_attn_bwd_workspace(&ds);
            if (w > bwd) bwd = w;
            for (int b = 0; b < 2; b++) {
                size_t mn = 0, al = 0;
                kern_cuda_attn_ref_workspace(&ds, b != 0, &mn, &al);
                if (mn > ref_min) ref_min = mn;
                if (al > ref_all) ref_all = al;
            }
        }
    H->bwd_ws_bytes = bwd;
    H->ref_ws_bytes = H->flash ? 0 : ref_all <= ((size_t)1 << 30) ? ref_all : ref_min;
}

/* ---------------------------------------------------------------- table */

const hx_handler hn_attn_handlers[ULY_OPT_COUNT] = {
    [ULY_OPT_ATTN_FWD] = g_attn_fwd,
    [ULY_OPT_ATTN_BWD] = g_attn_bwd,
    [ULY_OPT_RING_KV] = hx_ring_fused,
    [ULY_OPT_RING_DKV] = hx_ring_fused,
};
