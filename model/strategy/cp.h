/* cp.h: what the context-parallel strategies share (ulysses.c, ring.c,
 * rsa.c, allgather_cp.c, usp.c): tokens split N/cp over cp ranks, with
 * optional tensor parallelism of degree t inside (Megatron-Core's TP x CP:
 * heads and weights split t ways, the GEMM regions all-gather the rank's
 * N/(cp t) tokens to N/cp). The layer around attention is the same for
 * all; they differ in how keys and values reach the queries (all-to-all,
 * blocks passed round a ring, a ring with materialised scores, an
 * all-gather) and in the buffers that needs. Defined in ring.c. */
#ifndef ULY_STRATEGY_CP_H
#define ULY_STRATEGY_CP_H
#include "../internal.h"
#include "megatron.h"

/* N must split cp t ways, 2 cp t with the causal zigzag split of a ring
 * part (r > 1: 2r chunks); the causal contiguous split is allowed but
 * leaves the last ring rank the most work, which is recorded as a reason. */
void uly_cp_split_check(uly_bctx *x, int64_t cp, int64_t r, int64_t t);

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
uly_status uly_cp_layer_emit(uly_bctx *x, uly_cp_tp *tp, const uly_cp_shape *sh,
                             void (*attn_fwd)(uly_bctx *x, int recomp, void *ctx),
                             void (*attn_bwd)(uly_bctx *x, void *ctx), void *ctx);
#endif
