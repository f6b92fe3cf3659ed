/* megatron.h: what Megatron tensor parallelism with and without sequence
 * parallelism share (megatron_sp.c, megatron_tp.c): heads and weights split
 * t ways, attention over the full N for a/t heads; they differ only in the
 * collectives around the GEMM regions and in how the norms' tokens split.
 * Defined in megatron_sp.c. */
#ifndef ULY_STRATEGY_MEGATRON_H
#define ULY_STRATEGY_MEGATRON_H
#include "../internal.h"

/* The hooks' ctx of both strategies. */
typedef struct uly_tp_sec {
    int64_t t;
} uly_tp_sec;

/* Attention hooks (ctx: uly_tp_sec): a/t heads over all N queries and keys. */
void uly_tp_attn_fwd(uly_bctx *x, int recomp, void *ctx);
void uly_tp_attn_bwd(uly_bctx *x, void *ctx);

/* Feasibility (heads; with split_seq, N divisible by t; TP spanning nodes)
 * and the plan fields both set:
 * heads, KV heads, attention shape, the t-way GEMM activations, the
 * vocabulary-parallel logits, and the K,V weights replicated when k < t.
 * Returns k_eff. */
int64_t uly_tp_setup(uly_bctx *x, const uly_tp_sec *s, int split_seq);
#endif
