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
#include "ulysses.h"

/* Per tensor of `heads` heads: each rank sends (u-1) blocks of
 * b x tokens x heads/u x d. tokens: this rank's share before the all-to-all. */
static void a2a(uly_bctx *x, uly_op_type type, uly_phase ph, int recomp, const uly_ulysses_sec *s, int64_t heads)
{
    const int64_t u = s->u;
    int64_t elems = ULY_PROD(x, x->b, s->tokens, heads, x->m->head_dim);
    int64_t bytes = ULY_PROD(x, x->b, s->tokens, heads / u, x->m->head_dim, x->beta, u - 1);
    uly_emit_comm(x, type, ph, recomp, ULY_COLL_ALLTOALL, ULY_GROUP_ULYSSES, bytes, elems, 1);
}

void uly_ulysses_pre_fwd(uly_bctx *x, int recomp, const uly_ulysses_sec *s)
{
    if (s->u <= 1 || recomp == ULY_RECOMP_SELECTIVE) return;
    a2a(x, ULY_OPT_A2A_Q, ULY_PHASE_FWD + (recomp != 0), recomp, s, x->m->heads);
    a2a(x, ULY_OPT_A2A_K, ULY_PHASE_FWD + (recomp != 0), recomp, s, s->kv_eff);
    a2a(x, ULY_OPT_A2A_V, ULY_PHASE_FWD + (recomp != 0), recomp, s, s->kv_eff);
}

void uly_ulysses_post_fwd(uly_bctx *x, int recomp, const uly_ulysses_sec *s)
{
    if (s->u <= 1 || recomp == ULY_RECOMP_SELECTIVE) return;
    a2a(x, ULY_OPT_A2A_O, ULY_PHASE_FWD + (recomp != 0), recomp, s, x->m->heads);
}

void uly_ulysses_pre_bwd(uly_bctx *x, const uly_ulysses_sec *s)
{
    if (s->u <= 1) return;
    a2a(x, ULY_OPT_A2A_DO, ULY_PHASE_BWD, 0, s, x->m->heads);
}

void uly_ulysses_post_bwd(uly_bctx *x, const uly_ulysses_sec *s)
{
    if (s->u <= 1) return;
    a2a(x, ULY_OPT_A2A_DQ, ULY_PHASE_BWD, 0, s, x->m->heads);
    a2a(x, ULY_OPT_A2A_DK, ULY_PHASE_BWD, 0, s, s->kv_eff);
    a2a(x, ULY_OPT_A2A_DV, ULY_PHASE_BWD, 0, s, s->kv_eff);
}

void uly_ulysses_sec_init(uly_bctx *x, int64_t u, int64_t tokens, uly_ulysses_sec *s)
{
    s->u = u;
    s->tokens = tokens;
    uly_check_heads(x, u);
    s->kv_eff = uly_kv_eff(x, u);
}

static void attn_fwd(uly_bctx *x, int recomp, void *ctx)
{
    const uly_ulysses_sec *s = ctx;
    const int64_t n = x->w->seq;
    const uly_phase ph = recomp ? ULY_PHASE_BWD : ULY_PHASE_FWD;
    uly_ulysses_pre_fwd(x, recomp, s);
    uly_emit_attn(x, ULY_OPT_ATTN_FWD, ph, recomp, x->m->heads / s->u, n, n, 1, x->w->causal ? 0.5 : 1.0, 1.0,
                  x->p->act_flash, 0);
    uly_ulysses_post_fwd(x, recomp, s);
}

static void attn_bwd(uly_bctx *x, void *ctx)
{
    const uly_ulysses_sec *s = ctx;
    const int64_t n = x->w->seq;
    uly_ulysses_pre_bwd(x, s);
    uly_emit_attn(x, ULY_OPT_ATTN_BWD, ULY_PHASE_BWD, 0, x->m->heads / s->u, n, n, 1, x->w->causal ? 0.5 : 1.0, 1.0,
                  x->p->act_flash, 1);
    uly_ulysses_post_bwd(x, s);
}

static uly_status build(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                        const uly_layout *l, uly_plan *p, uly_reason *reasons, int *n_reasons)
{
    uly_bctx x;
    uly_bctx_init(&x, m, w, c, l, p, reasons, n_reasons);
    const int64_t u = l->ulysses;
    uly_ulysses_sec s;
    uly_ulysses_sec_init(&x, u, w->seq / u, &s);
    uly_check_seq(&x, u);
    p->dims.cp = u;
    p->dims.tokens = w->seq / u;
    p->dims.heads = m->heads / u;
    p->dims.kv_eff = s.kv_eff;
    p->dims.kv_heads = s.kv_eff / u;
    p->dims.attn_q = w->seq;
    p->dims.attn_kv = w->seq;
    p->act_cp = u;
    /* staging for one all-to-all's output beside its input */
    p->comm_buf_bytes = (double)x.beta * (double)x.b * (double)(w->seq / u) * (double)(m->heads * m->head_dim);
    if (uly_has_fatal(&x)) return x.overflow ? ULY_EOVERFLOW : ULY_OK;
    uly_layer_hooks h = {.gemm_tokens = w->seq / u, .norm_tokens = w->seq / u, .t = 1,
                         .attn_fwd = attn_fwd, .attn_bwd = attn_bwd, .ctx = &s};
    uly_layer_emit(&x, &h);
    return x.overflow ? ULY_EOVERFLOW : ULY_OK;
}

const uly_strategy uly_strategy_ulysses = {
    .id = ULY_STRAT_ULYSSES, .name = "ulysses", .label = "Ulysses", .label_short = "Ulysses",
    .summary = "DeepSpeed-Ulysses: all-to-all heads<->sequence around local attention",
    .uses_ulysses = 1, .exec = ULY_EXEC_A2A, .build = build,
};
