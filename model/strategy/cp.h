/* cp.h: what the context-parallel strategies share (ulysses.c, ring.c,
 * rsa.c, allgather_cp.c, usp.c): tokens split N/cp over cp ranks, with
 * optional tensor parallelism of degree t inside (Megatron-Core's TP x CP:
 * heads and weights split t ways, the GEMM regions all-gather the rank's
 * N/(cp t) tokens to N/cp). The layer around attention is the same for
 * all; they differ in how keys and values reach the queries (all-to-all,
 * blocks passed round a ring, a ring with materialised scores, an
 * all-gather) and in the buffers that needs. Inline: each strategy's build
 * calls them once, and out of line their arguments and the sections they
 * fill went through memory (plan_bench under callgrind: about 1% of an
 * evaluation with ring.h's and ulysses.h's section builders). */
#ifndef ULY_STRATEGY_CP_H
#define ULY_STRATEGY_CP_H
#include "../internal.h"
#include "megatron.h"

/* N must split cp t ways, 2 cp t with the causal zigzag split of a ring
 * part (r > 1: 2r chunks); the causal contiguous split is allowed but
 * leaves the last ring rank the most work, which is recorded as a reason. */
static inline void uly_cp_split_check(uly_bctx *x, int64_t cp, int64_t r, int64_t t)
{
    const uly_workload *w = x->w;
    const int zig = w->causal && w->split == ULY_SPLIT_ZIGZAG && r > 1;
    uly_check_seq(x, cp, t, zig);
    if (w->causal && w->split == ULY_SPLIT_CONTIGUOUS && r > 1)
        uly_reason_add(x, ULY_R_CAUSAL_IMBALANCE, 0, uly_causal_crit(w, r), 0, 0);
}

/* One rank's attention shape, as the strategy lays it out. */
typedef struct uly_cp_shape {
    int64_t cp;       /* ways the sequence splits: u r */
    int64_t heads;    /* query heads this rank attends */
    int64_t kv_eff;   /* KV heads of the attention group after replication (of one TP rank) */
    int64_t kv_heads; /* KV heads this rank attends with */
    int64_t attn_q;   /* query rows per attention call */
    int64_t attn_kv;  /* key rows per attention call (per block for rings) */
} uly_cp_shape;

/* The end of a build: sets the plan's dimensions from the shape and the TP
 * split (tp: from uly_cp_tp_init; t = 1 for none), then, unless a fatal
 * reason stands, emits the layer around the strategy's attention hooks (ctx
 * is theirs) with Megatron-SP's collectives around the GEMM regions when
 * t > 1. Returns the build's status. */
static inline uly_status uly_cp_layer_emit(uly_bctx *x, uly_cp_tp *tp, const uly_cp_shape *sh,
                                           void (*attn_fwd)(uly_bctx *x, int recomp, void *ctx),
                                           void (*attn_bwd)(uly_bctx *x, void *ctx), void *ctx)
{
    const uly_model *m = x->m;
    uly_plan *p = x->p;
    const int64_t t = tp->sec.t, tokens = x->w->seq / sh->cp; /* a CP rank's: gathered over its t TP ranks */
    p->dims.cp = sh->cp;
    p->dims.tokens = tokens / t;
    p->dims.heads = sh->heads;
    p->dims.kv_eff = sh->kv_eff;
    p->dims.kv_heads = sh->kv_heads;
    p->dims.attn_q = sh->attn_q;
    p->dims.attn_kv = sh->attn_kv;
    p->act_cp = sh->cp;
    p->act_tokens = tokens / t;
    p->logit_tokens = tokens;
    /* the gathered b x N/cp x h input of a GEMM region (its gradient is
     * backward's working set), as Megatron-SP holds */
    if (t > 1) p->comm_buf_bytes += (double)x->beta * (double)x->b * (double)tokens * (double)m->hidden;
    if (uly_has_fatal(x)) return x->overflow ? ULY_EOVERFLOW : ULY_OK;
    uly_layer_hooks h = {.gemm_tokens = tokens, .norm_tokens = tokens / t, .t = t, .kv_heads = tp->kv_eff,
                         .attn_fwd = attn_fwd, .attn_bwd = attn_bwd, .ctx = ctx};
    if (t > 1) {
        h.enter_tp = uly_tp_sp_enter;
        h.leave_tp = uly_tp_sp_leave;
        h.regather_tp = uly_tp_sp_regather;
        h.tp_ctx = &tp->sec;
    }
    uly_layer_emit(x, &h);
    return x->overflow ? ULY_EOVERFLOW : ULY_OK;
}

#endif
