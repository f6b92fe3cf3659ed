/* usp.c: the Ulysses x ring hybrid (USP; Megatron "a2a+p2p"), P = u r.
 * An all-to-all over u (inside a node by preference) on N/(u r) tokens
 * gathers N/r tokens for a/u heads; then a ring over r rotates K,V blocks of
 * N/r tokens for k_eff/u heads. Degenerates to ulysses (r = 1) or ring
 * (u = 1). */
#include "../internal.h"
#include "cp.h"
#include "ring.h"
#include "ulysses.h"

typedef struct usp_ctx {
    uly_ulysses_sec a2a;
    uly_ring_sec ring;
} usp_ctx;

static void attn_fwd(uly_bctx *x, int recomp, void *ctx)
{
    const usp_ctx *s = ctx;
    uly_ulysses_pre_fwd(x, recomp, &s->a2a);
    uly_ring_fwd(x, recomp, &s->ring);
    uly_ulysses_post_fwd(x, recomp, &s->a2a);
}

static void attn_bwd(uly_bctx *x, void *ctx)
{
    const usp_ctx *s = ctx;
    uly_ulysses_pre_bwd(x, &s->a2a);
    uly_ring_bwd(x, &s->ring);
    uly_ulysses_post_bwd(x, &s->a2a);
}

static uly_status build(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                        const uly_layout *l, uly_plan *p, uly_reason *reasons, int *n_reasons)
{
    uly_bctx x;
    uly_bctx_init(&x, m, w, c, l, p, reasons, n_reasons);
    const int64_t u = l->ulysses, r = l->ring, cp = u * r;
    uly_cp_split_check(&x, cp, r, l->tp);
    uly_cp_tp tp;
    uly_cp_tp_init(&x, l->tp, cp, &tp);
    usp_ctx s;
    uly_ulysses_sec_init(&x, u, w->seq / cp, tp.heads, tp.kv_heads, &s.a2a);
    uly_ring_sec_init(&x, r, w->seq / r, tp.heads / u, s.a2a.kv_eff / u, &s.ring);
    /* the all-to-all's staging (none without one: u = 1 is ring's layout,
     * and holds what ring holds) and the ring's blocks */
    p->comm_buf_bytes = (u > 1 ? (double)x.beta * (double)x.b * (double)(w->seq / cp) * (double)(tp.heads * m->head_dim) : 0) +
                        uly_ring_buf_bytes(&x, &s.ring);
    const uly_cp_shape sh = {.cp = cp, .heads = s.ring.heads, .kv_eff = s.a2a.kv_eff, .kv_heads = s.ring.kv_heads,
                             .attn_q = s.ring.tokens, .attn_kv = s.ring.tokens};
    return uly_cp_layer_emit(&x, &tp, &sh, attn_fwd, attn_bwd, &s);
}

const uly_strategy uly_strategy_usp = {
    .id = ULY_STRAT_USP, .name = "usp", .label = "USP", .label_short = "USP",
    .summary = "Ulysses x ring hybrid: all-to-all over u, ring over r",
    .uses_ulysses = 1, .uses_ring = 1, .uses_tp = 1, .causal_split = 1, .exec = ULY_EXEC_A2A,
    .megatron_cp_comm = "a2a+p2p", .build = build,
};
