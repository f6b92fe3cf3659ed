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
 * b x tokens x heads/u x d. tokens: this rank's share before the all-to-all. */
static void a2a(uly_bctx *x, uly_op_type type, uly_phase ph, int recomp, const uly_ulysses_sec *s, int64_t heads,
                int64_t heads_u)
{
    /* the section's per-head factors were multiplied once (sec_init);
     * when they did not fit, neither does any of its transfers */
    int64_t elems, bytes;
    int bad = !s->sizes_fit | ((heads | heads_u) < 0) | __builtin_mul_overflow(s->head_elems, heads, &elems);
    bad |= __builtin_mul_overflow(s->head_elems, heads_u, &bytes) | __builtin_mul_overflow(bytes, s->wire, &bytes);
    if (bad) x->overflow = 1; /* the plan is discarded: the sizes need not be right */
    uly_emit_comm(x, type, ph, recomp, ULY_COLL_ALLTOALL, ULY_GROUP_ULYSSES, bytes, elems, 1);
}

void uly_ulysses_pre_fwd(uly_bctx *x, int recomp, const uly_ulysses_sec *s)
{
    if (s->u <= 1 || recomp == ULY_RECOMP_SELECTIVE) return;
    a2a(x, ULY_OPT_A2A_Q, ULY_PHASE_FWD + (recomp != 0), recomp, s, s->heads, s->heads_u);
    a2a(x, ULY_OPT_A2A_K, ULY_PHASE_FWD + (recomp != 0), recomp, s, s->kv_eff, s->kv_u);
    a2a(x, ULY_OPT_A2A_V, ULY_PHASE_FWD + (recomp != 0), recomp, s, s->kv_eff, s->kv_u);
}

void uly_ulysses_post_fwd(uly_bctx *x, int recomp, const uly_ulysses_sec *s)
{
    if (s->u <= 1 || recomp == ULY_RECOMP_SELECTIVE) return;
    a2a(x, ULY_OPT_A2A_O, ULY_PHASE_FWD + (recomp != 0), recomp, s, s->heads, s->heads_u);
}

void uly_ulysses_pre_bwd(uly_bctx *x, const uly_ulysses_sec *s)
{
    if (s->u <= 1) return;
    a2a(x, ULY_OPT_A2A_DO, ULY_PHASE_BWD, 0, s, s->heads, s->heads_u);
}

void uly_ulysses_post_bwd(uly_bctx *x, const uly_ulysses_sec *s)
{
    if (s->u <= 1) return;
    a2a(x, ULY_OPT_A2A_DQ, ULY_PHASE_BWD, 0, s, s->heads, s->heads_u);
    a2a(x, ULY_OPT_A2A_DK, ULY_PHASE_BWD, 0, s, s->kv_eff, s->kv_u);
    a2a(x, ULY_OPT_A2A_DV, ULY_PHASE_BWD, 0, s, s->kv_eff, s->kv_u);
}

void uly_ulysses_sec_init(uly_bctx *x, int64_t u, int64_t tokens, int64_t heads, int64_t kv, uly_ulysses_sec *s)
{
    s->u = u;
    s->tokens = tokens;
    s->heads = heads;
    /* b x tokens x d and beta (u - 1), the factors every all-to-all shares;
     * whether they fit is kept for the all-to-alls to report: the plan
     * overflows only if one is emitted (after the shape checks) */
    s->sizes_fit = x->b >= 0 && tokens >= 0 && x->m->head_dim >= 0 && x->beta >= 0 && u >= 1 &&
                   !__builtin_mul_overflow(x->b, tokens, &s->head_elems) &&
                   !__builtin_mul_overflow(s->head_elems, x->m->head_dim, &s->head_elems) &&
                   !__builtin_mul_overflow(x->beta, u - 1, &s->wire);
    uly_check_heads(x, heads, u);
    s->kv_eff = uly_kv_eff(x, kv, heads, u);
    s->heads_u = heads / u; /* divided once: the emitters read them for every all-to-all */
    s->kv_u = s->kv_eff / u;
}

static void attn_fwd(uly_bctx *x, int recomp, void *ctx)
{
    const uly_ulysses_sec *s = ctx;
    const int64_t n = x->w->seq;
    const uly_phase ph = recomp ? ULY_PHASE_BWD : ULY_PHASE_FWD;
    uly_ulysses_pre_fwd(x, recomp, s);
    uly_emit_attn(x, ULY_OPT_ATTN_FWD, ph, recomp, s->heads_u, n, n, 1, x->w->causal ? 0.5 : 1.0, 1.0,
                  x->p->act_flash, 0);
    uly_ulysses_post_fwd(x, recomp, s);
}

static void attn_bwd(uly_bctx *x, void *ctx)
{
    const uly_ulysses_sec *s = ctx;
    const int64_t n = x->w->seq;
    uly_ulysses_pre_bwd(x, s);
    uly_emit_attn(x, ULY_OPT_ATTN_BWD, ULY_PHASE_BWD, 0, s->heads_u, n, n, 1, x->w->causal ? 0.5 : 1.0, 1.0,
                  x->p->act_flash, 1);
    uly_ulysses_post_bwd(x, s);
}

static uly_status build(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                        const uly_layout *l, uly_plan *p, uly_reason *reasons, int *n_reasons)
{
    uly_bctx x;
    uly_bctx_init(&x, m, w, c, l, p, reasons, n_reasons);
    const int64_t u = l->ulysses;
    uly_cp_tp tp;
    uly_cp_tp_init(&x, l->tp, u, &tp);
    uly_ulysses_sec s;
    uly_ulysses_sec_init(&x, u, w->seq / u, tp.heads, tp.kv_heads, &s);
    uly_cp_split_check(&x, u, 1, l->tp);
    /* staging for one all-to-all's output beside its input */
    p->comm_buf_bytes = (double)x.beta * (double)x.b * (double)(w->seq / u) * (double)(s.heads * m->head_dim);
    const uly_cp_shape sh = {.cp = u, .heads = s.heads / u, .kv_eff = s.kv_eff, .kv_heads = s.kv_eff / u,
                             .attn_q = w->seq, .attn_kv = w->seq};
    return uly_cp_layer_emit(&x, &tp, &sh, attn_fwd, attn_bwd, &s);
}

const uly_strategy uly_strategy_ulysses = {
    .id = ULY_STRAT_ULYSSES, .name = "ulysses", .label = "Ulysses", .label_short = "Ulysses",
    .summary = "DeepSpeed-Ulysses: all-to-all heads<->sequence around local attention",
    .uses_ulysses = 1, .uses_tp = 1, .exec = ULY_EXEC_A2A,
    .megatron_cp_comm = "a2a", .build = build,
};
