/* allgather_cp.c: all-gather context parallelism (Llama 3's CP). Tokens split
 * N/r; K and V are all-gathered to full length before attention (not
 * overlapped), each rank attends its N/r queries to all N keys; backward
 * gathers again and reduce-scatters dK, dV: twice the forward bytes. Holds
 * full-length K, V (and dK, dV) transiently. */
#include "../internal.h"
#include "cp.h"

typedef struct agcp_ctx {
    int64_t r;
    int64_t tokens; /* N/r */
} agcp_ctx;

static void gather(uly_bctx *x, const char *name, uly_phase ph, int rc, const agcp_ctx *s)
{
    if (s->r <= 1) return;
    const int64_t kd = x->m->kv_heads * x->m->head_dim;
    uly_emit_comm(x, name, ph, rc, ULY_COLL_ALLGATHER, ULY_GROUP_RING,
                  ULY_PROD(x, s->r - 1, x->b, s->tokens, kd, x->beta), ULY_PROD(x, x->b, s->tokens, kd), 1);
}

static void scatter(uly_bctx *x, const char *name, const agcp_ctx *s)
{
    if (s->r <= 1) return;
    const int64_t kd = x->m->kv_heads * x->m->head_dim;
    uly_emit_comm(x, name, ULY_PHASE_BWD, 0, ULY_COLL_REDUCE_SCATTER, ULY_GROUP_RING,
                  ULY_PROD(x, s->r - 1, x->b, s->tokens, kd, x->beta), ULY_PROD(x, x->b, x->w->seq, kd), 1);
}

static void attn_fwd(uly_bctx *x, int rc, void *ctx)
{
    const agcp_ctx *s = ctx;
    const uly_phase ph = rc ? ULY_PHASE_BWD : ULY_PHASE_FWD;
    if (rc != ULY_RC_SELECTIVE) {
        gather(x, "ag_k", ph, rc, s);
        gather(x, "ag_v", ph, rc, s);
    }
    uly_emit_attn(x, "attn_fwd", ph, rc, x->m->heads, s->tokens, x->w->seq, 1, x->w->causal ? 0.5 : 1.0,
                  uly_causal_crit(x->w, s->r), x->p->act_flash, 0);
}

static void attn_bwd(uly_bctx *x, void *ctx)
{
    const agcp_ctx *s = ctx;
    gather(x, "ag_k", ULY_PHASE_BWD, 0, s);
    gather(x, "ag_v", ULY_PHASE_BWD, 0, s);
    uly_emit_attn(x, "attn_bwd", ULY_PHASE_BWD, 0, x->m->heads, s->tokens, x->w->seq, 1,
                  x->w->causal ? 0.5 : 1.0, uly_causal_crit(x->w, s->r), x->p->act_flash, 1);
    scatter(x, "rs_dk", s);
    scatter(x, "rs_dv", s);
}

static uly_status build(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                        const uly_layout *l, uly_plan *p, uly_reason *reasons, int *n_reasons)
{
    uly_bctx x;
    uly_bctx_init(&x, m, w, c, l, p, reasons, n_reasons);
    agcp_ctx s = {.r = l->ring, .tokens = w->seq / l->ring};
    uly_cp_split_check(&x, s.r);
    p->comm_buf_bytes = s.r > 1 ? 4.0 * (double)x.beta * (double)x.b * (double)w->seq *
                                      (double)(m->kv_heads * m->head_dim)
                                : 0;
    /* the gathered K, V: all N keys at once */
    return uly_cp_layer_emit(&x, s.r, w->seq, attn_fwd, attn_bwd, &s);
}

const uly_strategy uly_strategy_allgather_cp = {
    .id = ULY_STRAT_ALLGATHER_CP,
    .name = "allgather-cp",
    .summary = "all-gather CP: gather full K,V, attend local queries, reduce-scatter dK,dV",
    .uses_ring = 1,
    .build = build,
};
