/* kern_internal.h: what the kernel files share and the public header does
 * not promise: argument checking, the causal-mask arithmetic every
 * implementation must agree on, and the OpenBLAS thread switch. */
#ifndef KERN_INTERNAL_H
#define KERN_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kern_attn.h"

/* Offsets beyond this cannot be real token positions, and keeping them
 * small keeps off + index arithmetic far from int64 overflow. */
#define KERN_OFF_MAX ((int64_t)1 << 52)

/* Shape and option checks shared by every implementation, so that "ref"
 * and "flash" reject exactly the same inputs. */
static inline kern_status kern_desc_check(const struct kern_attn_desc *ds)
{
    if (!ds) return KERN_EINVAL;
    if (ds->heads < 1 || ds->kv_heads < 1 || ds->heads % ds->kv_heads != 0) return KERN_EINVAL;
    if (ds->n_q < 0 || ds->n_kv < 0 || ds->d < 1) return KERN_EINVAL;
    if (!isfinite(ds->scale)) return KERN_EINVAL;
    if (ds->acc != KERN_ACC_F32 && ds->acc != KERN_ACC_F64) return KERN_EINVAL;
    if (ds->threads < 0) return KERN_EINVAL;
    if (ds->q_off < -KERN_OFF_MAX || ds->q_off > KERN_OFF_MAX ||
        ds->kv_off < -KERN_OFF_MAX || ds->kv_off > KERN_OFF_MAX)
        return KERN_EINVAL;
    return KERN_OK;
}

/* A tensor of n elements needs a buffer only when n > 0. */
static inline int kern_buf_ok(const void *p, size_t n) { return p != NULL || n == 0; }

/* Buffers of a forward call (any element type; sizes in elements). */
static inline int kern_fwd_bufs_ok(const struct kern_attn_desc *ds, const void *q, const void *k,
                                   const void *v, const void *o, const void *lse)
{
    const size_t nq = (size_t)ds->heads * ds->n_q, nkv = (size_t)ds->kv_heads * ds->n_kv;
    return kern_buf_ok(q, nq * ds->d) && kern_buf_ok(o, nq * ds->d) && kern_buf_ok(lse, nq) &&
           kern_buf_ok(k, nkv * ds->d) && kern_buf_ok(v, nkv * ds->d);
}

/* Buffers of a backward call. */
static inline int kern_bwd_bufs_ok(const struct kern_attn_desc *ds, const void *q, const void *k,
                                   const void *v, const void *o, const void *lse,
                                   const void *dout, const void *dq, const void *dk,
                                   const void *dv)
{
    const size_t nq = (size_t)ds->heads * ds->n_q * ds->d;
    const size_t nkv = (size_t)ds->kv_heads * ds->n_kv * ds->d;
    return kern_fwd_bufs_ok(ds, q, k, v, o, lse) && kern_buf_ok(dout, nq) &&
           kern_buf_ok(dq, nq) && kern_buf_ok(dk, nkv) && kern_buf_ok(dv, nkv);
}

/* Number of keys (a prefix 0..count-1 of the block) that query row i sees:
 * key j is visible iff kv_off + j <= q_off + i. The mask is a prefix per
 * row because positions grow with the index, which is what lets every
 * implementation loop over [0, count) instead of testing each key. */
static inline int kern_keys_visible(const struct kern_attn_desc *ds, int64_t i)
{
    if (!ds->causal) return ds->n_kv;
    int64_t last = ds->q_off + i - ds->kv_off; /* highest visible key index */
    if (last < 0) return 0;
    if (last >= ds->n_kv) return ds->n_kv;
    return (int)(last + 1);
}

/* First query row that sees key j (n_q if none): the column view of the
 * same mask, for loops that own a block of keys (the backward's dK, dV). */
static inline int kern_first_row_seeing(const struct kern_attn_desc *ds, int64_t j)
{
    if (!ds->causal) return 0;
    int64_t first = ds->kv_off + j - ds->q_off;
    if (first < 0) return 0;
    if (first >= ds->n_q) return ds->n_q;
    return (int)first;
}

/* Bracket a region where several of our threads each call SGEMM on small
 * blocks: OpenBLAS is switched to one thread inside it (restored when the
 * last concurrent user leaves), because its own threading on 128-wide
 * blocks costs more than it gains and nesting it under ours oversubscribes. */
void kern_blas_serial_enter(void);
void kern_blas_serial_leave(void);

/* OpenBLAS runs small GEMMs slowly in a work buffer that has never served
 * a wide one (gemm.c says more). kern_blas_warm_needed(n) says, once per
 * new high-water mark of concurrent callers n, that n threads should each
 * run kern_blas_warm_gemm() at the same moment. */
int kern_blas_warm_needed(int nthreads);
void kern_blas_warm_gemm(void);

#endif /* KERN_INTERNAL_H */
