/* rsa.c: Ring Self-Attention (Li et al., arXiv 2105.13120). Parameters are
 * replicated and tokens split N/P. Forward: keys circulate round the ring
 * (P-1 hops) to build the full (N/P) x N score block, which is materialised
 * (no flash attention), then values circulate to form the output. Backward:
 * the two rings again plus two all-reduces of the full-length dK and dV:
 * 6(P-1) b (N/P) h bytes against the forward's 2(P-1) b (N/P) h. The paper's
 * implementation does not overlap the rings with compute, so neither do we.
 * Each of its two ring functions (RingAV, then RingQK going backward)
 * all-reduces its own full-length gradient as it returns. What they return
 * are views of those b x N x kd buffers (Colossal-AI's implementation), so
 * both are alive in RingQK's backward; by then the layer's scores, their
 * dropout mask and output are freed (2 beta + 1 bytes per score element,
 * more than a b x N x kd buffer whenever a (N/P)(2 beta + 1)/beta >= kd,
 * true of every shape the papers ran), so one buffer plus the K/V block in
 * flight bounds what the two add at backward's peak. */
#include "../internal.h"
#include "cp.h"

typedef struct rsa_ctx {
    int64_t p;      /* ring degree */
    int64_t tokens; /* N/P */
    int64_t kvd;    /* k d: width of K and V */
    /* multiplied once: a ring's bytes and elements in flight (p > 1), an
     * all-reduce's bytes (p > 1) and its full-length b x N x kd elements;
     * all ULY_SIZE_UNFIT when one does not fit (the plan overflows once
     * they are emitted) */
    int64_t ring_bytes, ring_elems, ar_bytes, ar_elems;
    /* the score block's GEMMs, QK^T (b a N/P x d times d x N) and PV
     * (b a N/P x N times N x d), shaped once for forward and backward; the
     * element-wise passes over its scores, forward and backward */
    uly_gemm_shape qk, pv;
    double softmax_bytes[2];
} rsa_ctx;

static void ring(uly_bctx *x, uly_op_type type, uly_phase ph, int recomp, const rsa_ctx *s)
{
    if (s->p <= 1) return;
    uly_emit_comm(x, type, ph, recomp, ULY_COLL_SENDRECV, ULY_GROUP_RING, s->ring_bytes, s->ring_elems,
                  (int)(s->p - 1));
}

static void attn_fwd(uly_bctx *x, int recomp, void *ctx)
{
    const rsa_ctx *s = ctx;
    const uly_phase ph = recomp ? ULY_PHASE_BWD : ULY_PHASE_FWD;
    if (recomp != ULY_RECOMP_SELECTIVE) ring(x, ULY_OPT_RING_K, ph, recomp, s);
    uly_emit_gemm_shape(x, ULY_OPT_RSA_QK, ph, recomp, &s->qk, 1.0);
    uly_emit_elem(x, ULY_OPT_RSA_SOFTMAX, ph, recomp, s->softmax_bytes[0], 0);
    if (recomp != ULY_RECOMP_SELECTIVE) ring(x, ULY_OPT_RING_V, ph, recomp, s);
    uly_emit_gemm_shape(x, ULY_OPT_RSA_PV, ph, recomp, &s->pv, 1.0);
}

static void attn_bwd(uly_bctx *x, void *ctx)
{
    const rsa_ctx *s = ctx;
    const uly_phase ph = ULY_PHASE_BWD;
    if (s->ar_elems < 0) x->overflow = 1; /* the full-length sizes, even with no ring */
    /* dP = dO V^T needs V again; dV = P^T dO is full length (all-reduced) */
    ring(x, ULY_OPT_RING_V, ph, 0, s);
    uly_emit_gemm_shape(x, ULY_OPT_RSA_PV_BWD, ph, 0, &s->pv, 2.0);
    if (s->p > 1)
        uly_emit_comm(x, ULY_OPT_ALLREDUCE_DV, ph, 0, ULY_COLL_ALLREDUCE, ULY_GROUP_RING, s->ar_bytes, s->ar_elems, 1);
    uly_emit_elem(x, ULY_OPT_RSA_SOFTMAX_BWD, ph, 0, s->softmax_bytes[1], 0);
    /* dQ = dS K needs K again; dK = dS^T Q is full length (all-reduced) */
    ring(x, ULY_OPT_RING_K, ph, 0, s);
    uly_emit_gemm_shape(x, ULY_OPT_RSA_QK_BWD, ph, 0, &s->qk, 2.0);
    if (s->p > 1)
        uly_emit_comm(x, ULY_OPT_ALLREDUCE_DK, ph, 0, ULY_COLL_ALLREDUCE, ULY_GROUP_RING, s->ar_bytes, s->ar_elems, 1);
}

static uly_status build(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                        const uly_layout *l, uly_plan *p, uly_reason *reasons, int *n_reasons)
{
    uly_bctx x;
    uly_bctx_init(&x, m, w, c, l, p, reasons, n_reasons);
    /* field by field: an initializer zeroes the whole struct first, the
     * GEMM shapes set below among it */
    rsa_ctx s;
    s.p = l->ring, s.tokens = w->seq / l->ring, s.kvd = m->kv_heads * m->head_dim;
    s.ring_bytes = s.ring_elems = s.ar_bytes = 0; /* none without a ring */
    int fit = uly_prod_fits(3, (int64_t[]){x.b, w->seq, s.kvd}, &s.ar_elems);
    if (s.p > 1)
        fit &= uly_prod_fits(5, (int64_t[]){s.p - 1, x.b, s.tokens, s.kvd, x.beta}, &s.ring_bytes) &
               uly_prod_fits(3, (int64_t[]){x.b, s.tokens, s.kvd}, &s.ring_elems) &
               uly_prod_fits(6, (int64_t[]){2, s.p - 1, x.b, s.tokens, s.kvd, x.beta}, &s.ar_bytes);
    if (!fit) s.ring_bytes = s.ring_elems = s.ar_bytes = s.ar_elems = ULY_SIZE_UNFIT;
    const double b = (double)x.b, a = (double)m->heads, q = (double)s.tokens, n = (double)w->seq;
    const double rows = b * a * q, d = (double)m->head_dim;
    s.qk = uly_gemm_shape_of(&x, rows, n, d);
    s.pv = uly_gemm_shape_of(&x, rows, d, n);
    /* priced by shape, each is b a GEMMs of the rank's q rows, one per head
     * (the FLOPs, bytes and curve key above stay those of the rows together) */
    s.qk.dims[0] = s.pv.dims[0] = b * a;
    s.qk.dims[1] = s.pv.dims[1] = q;
    s.softmax_bytes[0] = uly_score_pass_bytes(&x, 0) * b * a * q * n;
    s.softmax_bytes[1] = uly_score_pass_bytes(&x, 1) * b * a * q * n;
    uly_check_seq(&x, s.p, 1, 0);
    uly_reason_add(&x, ULY_R_NO_FLASH, 0, 0, 0, 0);
    p->act_flash = 0;
    /* one full-length dK or dV for its all-reduce plus one K/V block in flight */
    p->comm_buf_bytes = s.p > 1 ? (double)x.beta * (double)x.b * (double)s.kvd *
                                      ((double)w->seq + 2.0 * (double)s.tokens)
                                : 0;
    /* the score block is N/P x N: all N keys at once; no TP inside (the
     * published method replicates the parameters over the ring) */
    uly_cp_tp tp;
    uly_cp_tp_init(&x, 1, s.p, &tp);
    const uly_cp_shape sh = {.cp = s.p, .heads = m->heads, .kv_eff = m->kv_heads, .kv_heads = m->kv_heads,
                             .attn_q = s.tokens, .attn_kv = w->seq};
    return uly_cp_layer_emit(&x, &tp, &sh, attn_fwd, attn_bwd, &s);
}

const uly_strategy uly_strategy_rsa = {
    .id = ULY_STRAT_RSA, .name = "rsa", .label = "RSA", .label_short = "RSA",
    .summary = "Ring Self-Attention: K ring, materialised scores, V ring; all-reduced dK, dV",
    .uses_ring = 1, .exec = ULY_EXEC_RSA, .build = build,
};
