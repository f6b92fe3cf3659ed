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
    /* every all-to-all moves a tensor of the query heads (q, o and their
     * gradients) or of the KV heads (k, v, theirs): its elements in the
     * rank's buffer and bytes sent, multiplied once */
    int64_t q_bytes, q_elems, kv_bytes, kv_elems; /* in the op's order; all ULY_SIZE_UNFIT when one does not fit */
} uly_ulysses_sec;

/* heads, kv: the query and KV heads the group holds (a and k, or one TP
 * rank's a/t and KV heads) */
void uly_ulysses_sec_init(uly_bctx *x, int64_t u, int64_t tokens, int64_t heads, int64_t kv, uly_ulysses_sec *s);
void uly_ulysses_pre_fwd(uly_bctx *x, int recomp, const uly_ulysses_sec *s);  /* a2a q, k, v */
void uly_ulysses_post_fwd(uly_bctx *x, int recomp, const uly_ulysses_sec *s); /* a2a o */
void uly_ulysses_pre_bwd(uly_bctx *x, const uly_ulysses_sec *s);          /* a2a do */
void uly_ulysses_post_bwd(uly_bctx *x, const uly_ulysses_sec *s);         /* a2a dq, dk, dv */
#endif
