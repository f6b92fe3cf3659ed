/* ulysses.h: the Ulysses all-to-all section, shared by ulysses.c and usp.c;
 * its builder inline, as cp.h's helpers. */
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
static inline void uly_ulysses_sec_init(uly_bctx *x, int64_t u, int64_t tokens, int64_t heads, int64_t kv,
                                        uly_ulysses_sec *s)
{
    s->u = u;
    s->tokens = tokens;
    s->heads = heads;
    uly_check_heads(x, heads, u);
    s->kv_eff = uly_kv_eff(x, kv, heads, u);
    s->heads_u = heads / u; /* divided once: the emitters read them for every all-to-all */
    s->kv_u = s->kv_eff / u;
    /* b x tokens x d (one head's elements) and beta (u - 1) (bytes sent per
     * element of a head block), the factors every all-to-all shares;
     * sizes that do not fit are kept as such for the all-to-alls to report:
     * the plan overflows only if one is emitted (after the shape checks) */
    int64_t head_elems = 0, wire = 0;
    /* every product taken, no branch between them (`|` of ints, not `||`);
     * one statement per product that reads an earlier one's result: the
     * operands of `|` are unsequenced */
    int bad = (x->b | tokens | x->m->head_dim | x->beta | heads | s->kv_eff) < 0 || u < 1;
    bad |= (int)__builtin_mul_overflow(x->b, tokens, &head_elems) | (int)__builtin_mul_overflow(x->beta, u - 1, &wire);
    bad |= (int)__builtin_mul_overflow(head_elems, x->m->head_dim, &head_elems);
    bad |= (int)__builtin_mul_overflow(head_elems, heads, &s->q_elems) |
           (int)__builtin_mul_overflow(head_elems, s->kv_eff, &s->kv_elems) |
           (int)__builtin_mul_overflow(head_elems, s->heads_u, &s->q_bytes) |
           (int)__builtin_mul_overflow(head_elems, s->kv_u, &s->kv_bytes);
    bad |= (int)__builtin_mul_overflow(s->q_bytes, wire, &s->q_bytes) |
           (int)__builtin_mul_overflow(s->kv_bytes, wire, &s->kv_bytes);
    if (bad) s->q_bytes = s->q_elems = s->kv_bytes = s->kv_elems = ULY_SIZE_UNFIT;
}

void uly_ulysses_pre_fwd(uly_bctx *x, int recomp, const uly_ulysses_sec *s);  /* a2a q, k, v */
void uly_ulysses_post_fwd(uly_bctx *x, int recomp, const uly_ulysses_sec *s); /* a2a o */
void uly_ulysses_pre_bwd(uly_bctx *x, const uly_ulysses_sec *s);          /* a2a do */
void uly_ulysses_post_bwd(uly_bctx *x, const uly_ulysses_sec *s);         /* a2a dq, dk, dv */
#endif
