/* ring.c: ring attention / context-parallel P2P (Liu et al., Ring Attention;
 * Megatron CP). Tokens split N/r; each step a rank runs flash attention of
 * its queries against the K,V block it holds while sending that block to the
 * next rank and receiving the previous rank's: a step costs
 * max(compute, transfer). Causal masks: the zigzag split (2r chunks, rank i
 * holds i and 2r-1-i) balances work; the contiguous split leaves the last
 * rank (2r-1)/r times the average. */
#include "../internal.h"
#include "cp.h"
#include "ring.h"

void uly_ring_fwd(uly_bctx *x, int recomp, const uly_ring_sec *s)
{
    const uly_phase ph = recomp ? ULY_PHASE_BWD : ULY_PHASE_FWD;
    const uly_op *a = uly_emit_attn(x, ULY_OPT_ATTN_FWD, ph, recomp, &s->attn, 0);
    if (s->r <= 1 || recomp == ULY_RECOMP_SELECTIVE) return;
    const int32_t id = a->id;
    uly_op *o = uly_emit_comm(x, ULY_OPT_RING_KV, ph, recomp, ULY_COLL_SENDRECV, ULY_GROUP_RING, s->ring_bytes,
                              s->hop_elems, (int)(s->r - 1));
    o->overlaps = id;
}

void uly_ring_bwd(uly_bctx *x, const uly_ring_sec *s)
{
    const uly_op *a = uly_emit_attn(x, ULY_OPT_ATTN_BWD, ULY_PHASE_BWD, 0, &s->attn, 1);
    if (s->r <= 1) return;
    const int32_t id = a->id;
    uly_op *o = uly_emit_comm(x, ULY_OPT_RING_KV, ULY_PHASE_BWD, 0, ULY_COLL_SENDRECV, ULY_GROUP_RING,
                              s->ring_bytes, s->hop_elems, (int)(s->r - 1));
    o->overlaps = id;
    o = uly_emit_comm(x, ULY_OPT_RING_DKV, ULY_PHASE_BWD, 0, ULY_COLL_SENDRECV, ULY_GROUP_RING, s->ring_bytes,
                      s->hop_elems, (int)(s->r - 1));
    o->overlaps = id;
}

double uly_ring_buf_bytes(const uly_bctx *x, const uly_ring_sec *s)
{
    if (s->r <= 1) return 0;
    return 8.0 * (double)x->beta * (double)x->b * (double)s->tokens * (double)s->kv_heads *
           (double)x->m->head_dim;
}

static void attn_fwd(uly_bctx *x, int recomp, void *ctx) { uly_ring_fwd(x, recomp, ctx); }
static void attn_bwd(uly_bctx *x, void *ctx) { uly_ring_bwd(x, ctx); }

static uly_status build(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                        const uly_layout *l, uly_plan *p, uly_reason *reasons, int *n_reasons)
{
    uly_bctx x;
    uly_bctx_init(&x, m, w, c, l, p, reasons, n_reasons);
    const int64_t r = l->ring;
    uly_cp_tp tp;
    uly_cp_split_check(&x, r, r, l->tp);
    uly_cp_tp_init(&x, l->tp, r, &tp);
    uly_ring_sec s;
    uly_ring_sec_init(&x, r, w->seq / r, tp.heads, tp.kv_heads, &s);
    p->comm_buf_bytes = uly_ring_buf_bytes(&x, &s);
    /* each block of keys is one rank's N/r */
    const uly_cp_shape sh = {.cp = r, .heads = s.heads, .kv_eff = tp.kv_heads, .kv_heads = s.kv_heads,
                             .attn_q = s.tokens, .attn_kv = s.tokens};
    return uly_cp_layer_emit(&x, &tp, &sh, attn_fwd, attn_bwd, &s);
}

const uly_strategy uly_strategy_ring = {
    .id = ULY_STRAT_RING, .name = "ring", .label = "Ring", .label_short = "Ring",
    .summary = "ring attention: K,V blocks rotate P2P under blockwise flash attention",
    .uses_ring = 1, .uses_tp = 1, .causal_split = 1, .exec = ULY_EXEC_TOKENS,
    .megatron_cp_comm = "p2p", .build = build,
};
