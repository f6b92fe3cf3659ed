/* megatron.h: what Megatron tensor parallelism with and without sequence
 * parallelism share (megatron_sp.c, megatron_tp.c): heads and weights split
 * t ways, attention over the full N for a/t heads; they differ only in the
 * collectives around the GEMM regions and in how the norms' tokens split.
 * Defined in megatron_sp.c. */
#ifndef ULY_STRATEGY_MEGATRON_H
#define ULY_STRATEGY_MEGATRON_H
#include "../internal.h"

/* The hooks' ctx of both strategies and of TP inside context parallelism. */
typedef struct uly_tp_sec {
    int64_t t;
    int64_t tokens; /* tokens of a GEMM region's whole input: N, or N/cp inside context parallelism */
    int64_t tokens_t, heads_t; /* tokens / t, heads / t: divided once, read by every hook */
    /* Megatron-SP's collectives (sp and t > 1; else 0), multiplied once:
     * the bytes each all-gather or reduce-scatter sends, the elements of an
     * all-gather's input (b x tokens/t x h) and of a reduce-scatter's
     * (b x tokens x h); all ULY_SIZE_UNFIT when one does not fit (the plan
     * overflows once one is emitted) */
    int64_t sp_bytes, ag_elems, rs_elems;
} uly_tp_sec;

/* The sizes of Megatron-SP's collectives of a section of t > 1. */
void uly_tp_sp_sizes(const uly_bctx *x, uly_tp_sec *s);

/* A section of degree t >= 1 over `tokens` tokens; sp: with Megatron-SP's
 * collectives (uly_tp_sp_enter, uly_tp_sp_leave). */
static inline void uly_tp_sec_init(const uly_bctx *x, int64_t t, int64_t tokens, int sp, uly_tp_sec *s)
{
    s->t = t;
    s->tokens = tokens;
    s->sp_bytes = s->ag_elems = s->rs_elems = 0;
    if (t <= 1) {
        s->tokens_t = tokens, s->heads_t = x->m->heads;
        return;
    }
    s->tokens_t = tokens / t;
    s->heads_t = x->m->heads / t;
    if (sp) uly_tp_sp_sizes(x, s);
}

/* Both strategies' section: the split and its attention, a/t heads over
 * all N queries and keys. */
typedef struct uly_tp_layer {
    uly_tp_sec sec;
    uly_attn_shape attn;
} uly_tp_layer;

/* Attention hooks (ctx: uly_tp_layer). */
void uly_tp_attn_fwd(uly_bctx *x, int recomp, void *ctx);
void uly_tp_attn_bwd(uly_bctx *x, void *ctx);

/* Feasibility (heads; with split_seq, N divisible by t; TP spanning nodes)
 * and the plan fields both set:
 * heads, KV heads, attention shape, the t-way GEMM activations, the
 * vocabulary-parallel logits, and the K,V weights replicated when k < t;
 * then the attention's shape (s->sec set before). Returns k_eff. */
int64_t uly_tp_setup(uly_bctx *x, uly_tp_layer *s, int split_seq);

/* Megatron-SP's collectives around the GEMM regions (tp_ctx: uly_tp_sec):
 * an all-gather of b x tokens x h entering each region and a reduce-scatter
 * leaving it, swapped in backward. */
void uly_tp_sp_enter(uly_bctx *x, uly_phase ph, int recomp, int which, void *tp_ctx);
void uly_tp_sp_leave(uly_bctx *x, uly_phase ph, int recomp, int which, void *tp_ctx);
/* ... and backward's second gather of each region's input for its weight
 * gradient, sequence parallelism keeping only 1/t of it */
void uly_tp_sp_regather(uly_bctx *x, int which, void *tp_ctx);

/* Tensor parallelism of degree t with sequence parallelism inside a
 * context-parallel strategy of degree cp (Megatron-Core's TP x CP, TP the
 * innermost group): heads and weights split t ways first, the context
 * split works on what remains. Each GEMM region all-gathers the rank's
 * b x N/(cp t) x h share to the CP rank's N/cp tokens and reduce-scatters
 * it back; norms and dropout run on N/(cp t) tokens. */
typedef struct uly_cp_tp {
    uly_tp_sec sec;   /* t, and N/cp tokens per GEMM region */
    int64_t heads;    /* query heads of one TP rank: a/t */
    int64_t kv_eff;   /* KV heads over the t ranks after replication: k, or t when k < t */
    int64_t kv_heads; /* KV heads of one TP rank: kv_eff/t */
} uly_cp_tp;

/* Checks (heads divisible by t, TP spanning nodes), the KV replication,
 * the t-way plan fields (replicated K,V weights, vocabulary-parallel
 * logits). t = 1 leaves the plan as it is: heads a, KV heads k. */
void uly_cp_tp_split(uly_bctx *x, uly_cp_tp *tp); /* the part of t > 1 */
static inline void uly_cp_tp_init(uly_bctx *x, int64_t t, int64_t cp, uly_cp_tp *tp)
{
    /* inline: every context-parallel build starts one, mostly of t = 1 */
    const uly_model *m = x->m;
    uly_tp_sec_init(x, t, x->w->seq / cp, 1, &tp->sec);
    tp->heads = m->heads;
    tp->kv_eff = m->kv_heads;
    tp->kv_heads = m->kv_heads;
    if (t > 1) uly_cp_tp_split(x, tp);
}
#endif
