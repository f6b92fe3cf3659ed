/* cp.h: what the context-parallel strategies share (ring.c, rsa.c,
 * allgather_cp.c): tokens split N/r over r ranks, each holding every head
 * and whole weights, so the layer around attention is the same for all
 * three; they differ in how keys and values reach the queries (blocks
 * passed round a ring, a ring with materialised scores, an all-gather) and
 * in the buffers that needs. Defined in ring.c. */
#ifndef ULY_STRATEGY_CP_H
#define ULY_STRATEGY_CP_H
#include "../internal.h"

/* N must split r ways, into 2r chunks with the causal zigzag split; the
 * causal contiguous split is allowed but leaves the last rank the most
 * work, which is recorded as a reason. */
void uly_cp_split_check(uly_bctx *x, int64_t r);

/* The end of a build: sets the plan's dimensions (N/r tokens and queries
 * per rank, every head, attn_kv keys per attention block), then, unless a
 * fatal reason stands, emits the layer around the strategy's attention
 * hooks (ctx is theirs). Returns the build's status. */
uly_status uly_cp_layer_emit(uly_bctx *x, int64_t r, int64_t attn_kv,
                             void (*attn_fwd)(uly_bctx *x, int recomp, void *ctx),
                             void (*attn_bwd)(uly_bctx *x, void *ctx), void *ctx);
#endif
