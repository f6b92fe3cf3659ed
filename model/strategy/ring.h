/* ring.h: the ring-attention section (K,V blocks rotate round r ranks while
 * the previous block's attention runs), shared by ring.c and usp.c; its
 * builder inline, as cp.h's helpers. */
#ifndef ULY_STRATEGY_RING_H
#define ULY_STRATEGY_RING_H
#include "../internal.h"

typedef struct uly_ring_sec {
    int64_t r;        /* ring degree */
    int64_t tokens;   /* query/key rows per ring rank: N/r */
    int64_t heads;    /* query heads attended on this rank */
    int64_t kv_heads; /* KV heads rotated */
    /* what every transfer of the section moves, multiplied once: one hop's
     * elements and the ring's bytes (0 for a ring of one; ULY_SIZE_UNFIT
     * when one does not fit: the plan overflows once a transfer is emitted) */
    int64_t hop_elems, ring_bytes;
    uly_attn_shape attn; /* r blocks of N/r queries against N/r keys */
} uly_ring_sec;

/* The section of r ranks, `tokens` rows each, `heads` query and `kv_heads`
 * KV heads per rank (the plan's kernel, act_flash, set before). */
static inline void uly_ring_sec_init(const uly_bctx *x, int64_t r, int64_t tokens, int64_t heads, int64_t kv_heads,
                                     uly_ring_sec *s)
{
    s->r = r;
    s->tokens = tokens;
    s->heads = heads;
    s->kv_heads = kv_heads;
    /* one hop: K and V blocks, b x tokens x kv_heads x d each; the ring:
     * r - 1 hops of them. A ring of one moves nothing: its sizes are not
     * even multiplied */
    s->hop_elems = s->ring_bytes = 0;
    if (r > 1) {
        /* two statements: the ring's product reads the hop's, and the
         * operands of `&` are unsequenced */
        int fit = uly_prod_fits(5, (int64_t[]){2, x->b, tokens, kv_heads, x->m->head_dim}, &s->hop_elems);
        fit &= uly_prod_fits(3, (int64_t[]){s->hop_elems, r - 1, x->beta}, &s->ring_bytes);
        if (!fit) s->hop_elems = s->ring_bytes = ULY_SIZE_UNFIT;
    }
    const uly_workload *w = x->w;
    uly_attn_shape_init(x, &s->attn, heads, tokens, tokens, (int)r, w->causal ? 0.5 : 1.0, uly_causal_crit(w, r));
}

/* Forward: r blocks of attention, r-1 hops of K,V hidden under them. */
void uly_ring_fwd(uly_bctx *x, int recomp, const uly_ring_sec *s);
/* Backward (our implementation, named in ring.c): K,V rotate again and the
 * dK,dV accumulators travel r-1 hops home: twice the forward bytes. */
void uly_ring_bwd(uly_bctx *x, const uly_ring_sec *s);
/* Double buffers live at once: K,V and dK,dV blocks in flight, send + receive. */
double uly_ring_buf_bytes(const uly_bctx *x, const uly_ring_sec *s);
#endif
