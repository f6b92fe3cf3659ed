/* ulysses.c: DeepSpeed-Ulysses (arXiv 2309.14509). Tokens split N/u; Q, K, V
 * go through an all-to-all that scatters heads and gathers the sequence,
 * attention runs over all N tokens for a/u heads, and one all-to-all brings
 * the output back. Backward mirrors the four all-to-alls (dO in; dQ, dK, dV
 * out). GQA with k < u replicates each KV head u/k times before the
 * all-to-all (k_eff = u). All all-to-alls sit on the critical path.
 *
 * The Ulysses group may be a sub-group of USP; usp.c reuses the section
 * builders below through uly_ulysses_section. */
#include "../internal.h"
#include "cp.h"
#include "ulysses.h"

/* Per tensor of `heads` heads: each rank sends (u-1) blocks of
 * b x tokens x heads/u x d. tokens: this rank's share before the all-to-all.
 * kv: a tensor of the KV heads, else of the query heads. */
static void a2a(uly_bctx *x, uly_op_type type, uly_phase ph, int recomp, const uly_ulysses_sec *s, int kv)
{
    /* the section's sizes were multiplied once (sec_init) */
    uly_emit_comm(x, type, ph, recomp, ULY_COLL_ALLTOALL, ULY_GROUP_ULYSSES, kv ? s->kv_bytes : s->q_bytes,
                  kv ? s->kv_elems : s->q_elems, 1);
}

void uly_ulysses_pre_fwd(uly_bctx *x, int recomp, const uly_ulysses_sec *s)
{
    if (s->u <= 1 || recomp == ULY_RECOMP_SELECTIVE) return;
    a2a(x, ULY_OPT_A2A_Q, ULY_PHASE_FWD + (recomp != 0), recomp, s, 0);
    a2a(x, ULY_OPT_A2A_K, ULY_PHASE_FWD + (recomp != 0), recomp, s, 1);
    a2a(x, ULY_OPT_A2A_V, ULY_PHASE_FWD + (recomp != 0), recomp, s, 1);
}

void uly_ulysses_post_fwd(uly_bctx *x, int recomp, const uly_ulysses_sec *s)
{
    if (s->u <= 1 || recomp == ULY_RECOMP_SELECTIVE) return;
    a2a(x, ULY_OPT_A2A_O, ULY_PHASE_FWD + (recomp != 0), recomp, s, 0);
}

void uly_ulysses_pre_bwd(uly_bctx *x, const uly_ulysses_sec *s)
{
    if (s->u <= 1) return;
    a2a(x, ULY_OPT_A2A_DO, ULY_PHASE_BWD, 0, s, 0);
}

void uly_ulysses_post_bwd(uly_bctx *x, const uly_ulysses_sec *s)
{
    if (s->u <= 1) return;
    a2a(x, ULY_OPT_A2A_DQ, ULY_PHASE_BWD, 0, s, 0);
    a2a(x, ULY_OPT_A2A_DK, ULY_PHASE_BWD, 0, s, 1);
    a2a(x, ULY_OPT_A2A_DV, ULY_PHASE_BWD, 0, s, 1);
}

/* The hooks' ctx: the all-to-alls and the attention between them. */
typedef struct ulysses_ctx {
    uly_ulysses_sec a2a;
    uly_attn_shape attn;
} ulysses_ctx;

static void attn_fwd(uly_bctx *x, int recomp, void *ctx)
{
    const ulysses_ctx *s = ctx;
    uly_ulysses_pre_fwd(x, recomp, &s->a2a);
    uly_emit_attn(x, ULY_OPT_ATTN_FWD, recomp ? ULY_PHASE_BWD : ULY_PHASE_FWD, recomp, &s->attn, 0);
    uly_ulysses_post_fwd(x, recomp, &s->a2a);
}

static void attn_bwd(uly_bctx *x, void *ctx)
{
    const ulysses_ctx *s = ctx;
    uly_ulysses_pre_bwd(x, &s->a2a);
    uly_emit_attn(x, ULY_OPT_ATTN_BWD, ULY_PHASE_BWD, 0, &s->attn, 1);
    uly_ulysses_post_bwd(x, &s->a2a);
}

static uly_status build(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                        const uly_layout *l, uly_plan *p, uly_reason *reasons, int *n_reasons)
{
    uly_bctx x;
    uly_bctx_init(&x, m, w, c, l, p, reasons, n_reasons);
    const int64_t u = l->ulysses;
    uly_cp_tp tp;
    uly_cp_tp_init(&x, l->tp, u, &tp);
    ulysses_ctx s;
    uly_ulysses_sec_init(&x, u, w->seq / u, tp.heads, tp.kv_heads, &s.a2a);
    uly_cp_split_check(&x, u, 1, l->tp);
    /* attention over all N tokens for the rank's heads */
    uly_attn_shape_init(&x, &s.attn, s.a2a.heads_u, w->seq, w->seq, 1, w->causal ? 0.5 : 1.0, 1.0);
    /* staging for one all-to-all's output beside its input (u = 1 runs none) */
    p->comm_buf_bytes = u > 1 ? (double)x.beta * (double)x.b * (double)(w->seq / u) * (double)(s.a2a.heads * m->head_dim) : 0;
    const uly_cp_shape sh = {.cp = u, .heads = s.a2a.heads / u, .kv_eff = s.a2a.kv_eff, .kv_heads = s.a2a.kv_eff / u,
                             .attn_q = w->seq, .attn_kv = w->seq};
    return uly_cp_layer_emit(&x, &tp, &sh, attn_fwd, attn_bwd, &s);
}

const uly_strategy uly_strategy_ulysses = {
    .id = ULY_STRAT_ULYSSES, .name = "ulysses", .label = "Ulysses", .label_short = "Ulysses",
    .summary = "DeepSpeed-Ulysses: all-to-all heads<->sequence around local attention",
    .uses_ulysses = 1, .uses_tp = 1, .exec = ULY_EXEC_A2A,
    .megatron_cp_comm = "a2a", .build = build,
};
