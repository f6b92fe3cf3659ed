/* ulysses.h: the Ulysses all-to-all section, shared by ulysses.c and usp.c. */
#ifndef ULY_STRATEGY_ULYSSES_H
#define ULY_STRATEGY_ULYSSES_H
#include "../internal.h"

typedef struct uly_ulysses_sec {
    int64_t u;       /* all-to-all degree */
    int64_t tokens;  /* tokens per rank before the all-to-all: N/u (N/(u r) in USP) */
    int64_t heads;   /* query heads the group splits: a, or a/t of one TP rank */
    int64_t kv_eff;  /* KV heads after replication */
    int64_t heads_u, kv_u; /* heads / u, kv_eff / u: one rank's after the all-to-all */
    int64_t head_elems; /* b x tokens x d: one head's elements */
    int64_t wire;    /* beta (u - 1): bytes sent per element of a head block */
    int sizes_fit;   /* head_elems and wire did not overflow (nor a factor go negative) */
} uly_ulysses_sec;

/* heads, kv: the query and KV heads the group holds (a and k, or one TP
 * rank's a/t and KV heads) */
void uly_ulysses_sec_init(uly_bctx *x, int64_t u, int64_t tokens, int64_t heads, int64_t kv, uly_ulysses_sec *s);
void uly_ulysses_pre_fwd(uly_bctx *x, int recomp, const uly_ulysses_sec *s);  /* a2a q, k, v */
void uly_ulysses_post_fwd(uly_bctx *x, int recomp, const uly_ulysses_sec *s); /* a2a o */
void uly_ulysses_pre_bwd(uly_bctx *x, const uly_ulysses_sec *s);          /* a2a do */
void uly_ulysses_post_bwd(uly_bctx *x, const uly_ulysses_sec *s);         /* a2a dq, dk, dv */
#endif
