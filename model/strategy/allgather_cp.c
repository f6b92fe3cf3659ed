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
    int64_t kd;     /* width of K and V: the rank's KV heads x d */
    int64_t heads;  /* query heads this rank attends */
    uly_attn_shape attn; /* N/r queries against all N keys */
    /* multiplied once (r > 1): the bytes each gather or reduce-scatter
     * sends, the elements of a gather's input (b x N/r x kd) and of a
     * reduce-scatter's (b x N x kd); all ULY_SIZE_UNFIT when one does not
     * fit (the plan overflows once one is emitted) */
    int64_t bytes, gather_elems, scatter_elems;
} agcp_ctx;

static void gather(uly_bctx *x, uly_op_type type, uly_phase ph, int recomp, const agcp_ctx *s)
{
    if (s->r <= 1) return;
    uly_emit_comm(x, type, ph, recomp, ULY_COLL_ALLGATHER, ULY_GROUP_RING, s->bytes, s->gather_elems, 1);
}

static void scatter(uly_bctx *x, uly_op_type type, const agcp_ctx *s)
{
    if (s->r <= 1) return;
    uly_emit_comm(x, type, ULY_PHASE_BWD, 0, ULY_COLL_REDUCE_SCATTER, ULY_GROUP_RING, s->bytes, s->scatter_elems, 1);
}

static void attn_fwd(uly_bctx *x, int recomp, void *ctx)
{
    const agcp_ctx *s = ctx;
    const uly_phase ph = recomp ? ULY_PHASE_BWD : ULY_PHASE_FWD;
    if (recomp != ULY_RECOMP_SELECTIVE) {
        gather(x, ULY_OPT_AG_K, ph, recomp, s);
        gather(x, ULY_OPT_AG_V, ph, recomp, s);
    }
    uly_emit_attn(x, ULY_OPT_ATTN_FWD, ph, recomp, &s->attn, 0);
}

static void attn_bwd(uly_bctx *x, void *ctx)
{
    const agcp_ctx *s = ctx;
    gather(x, ULY_OPT_AG_K, ULY_PHASE_BWD, 0, s);
    gather(x, ULY_OPT_AG_V, ULY_PHASE_BWD, 0, s);
    uly_emit_attn(x, ULY_OPT_ATTN_BWD, ULY_PHASE_BWD, 0, &s->attn, 1);
    scatter(x, ULY_OPT_RS_DK, s);
    scatter(x, ULY_OPT_RS_DV, s);
}

static uly_status build(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                        const uly_layout *l, uly_plan *p, uly_reason *reasons, int *n_reasons)
{
    uly_bctx x;
    uly_bctx_init(&x, m, w, c, l, p, reasons, n_reasons);
    const int64_t r = l->ring;
    uly_cp_split_check(&x, r, r, l->tp);
    uly_cp_tp tp;
    uly_cp_tp_init(&x, l->tp, r, &tp);
    agcp_ctx s = {.r = r, .tokens = w->seq / r, .kd = tp.kv_heads * m->head_dim, .heads = tp.heads};
    if (r > 1 && !(uly_prod_fits(5, (int64_t[]){r - 1, x.b, s.tokens, s.kd, x.beta}, &s.bytes) &
                   uly_prod_fits(3, (int64_t[]){x.b, s.tokens, s.kd}, &s.gather_elems) &
                   uly_prod_fits(3, (int64_t[]){x.b, w->seq, s.kd}, &s.scatter_elems)))
        s.bytes = s.gather_elems = s.scatter_elems = ULY_SIZE_UNFIT;
    uly_attn_shape_init(&x, &s.attn, s.heads, s.tokens, w->seq, 1, w->causal ? 0.5 : 1.0, uly_causal_crit(w, r));
    p->comm_buf_bytes = s.r > 1 ? 4.0 * (double)x.beta * (double)x.b * (double)w->seq * (double)s.kd : 0;
    /* the gathered K, V: all N keys at once */
    const uly_cp_shape sh = {.cp = r, .heads = s.heads, .kv_eff = tp.kv_heads, .kv_heads = tp.kv_heads,
                             .attn_q = s.tokens, .attn_kv = w->seq};
    return uly_cp_layer_emit(&x, &tp, &sh, attn_fwd, attn_bwd, &s);
}

const uly_strategy uly_strategy_allgather_cp = {
    .id = ULY_STRAT_ALLGATHER_CP, .name = "allgather-cp", .label = "All-gather CP", .label_short = "AG-CP",
    .summary = "all-gather CP: gather full K,V, attend local queries, reduce-scatter dK,dV",
    .uses_ring = 1, .uses_tp = 1, .causal_split = 1, .exec = ULY_EXEC_ALLGATHER,
    .megatron_cp_comm = "all_gather", .build = build,
};
