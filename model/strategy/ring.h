/* ring.h: the ring-attention section (K,V blocks rotate round r ranks while
 * the previous block's attention runs), shared by ring.c and usp.c. */
#ifndef ULY_STRATEGY_RING_H
#define ULY_STRATEGY_RING_H
#include "../internal.h"

typedef struct uly_ring_sec {
    int64_t r;        /* ring degree */
    int64_t tokens;   /* query/key rows per ring rank: N/r */
    int64_t heads;    /* query heads attended on this rank */
    int64_t kv_heads; /* KV heads rotated */
    /* worked out by the first emission (sized 0 until then: a section
     * starts zeroed): one hop's elements, the ring's bytes, the critical
     * rank's work over the average */
    int sized;
    int64_t hop_elems, ring_bytes;
    double crit;
} uly_ring_sec;

/* Forward: r blocks of attention, r-1 hops of K,V hidden under them. */
void uly_ring_fwd(uly_bctx *x, int recomp, uly_ring_sec *s);
/* Backward (our implementation, named in ring.c): K,V rotate again and the
 * dK,dV accumulators travel r-1 hops home: twice the forward bytes. */
void uly_ring_bwd(uly_bctx *x, uly_ring_sec *s);
/* Double buffers live at once: K,V and dK,dV blocks in flight, send + receive. */
double uly_ring_buf_bytes(const uly_bctx *x, const uly_ring_sec *s);
#endif
