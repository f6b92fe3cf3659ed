/* attn_ref.c: the reference attention ("ref"), the oracle every faster
 * kernel is tested against. Plain loops, one row at a time, single-threaded,
 * with optional float64 accumulation; the body lives in attn_ref_tmpl.h and
 * is instantiated here for float/float, float/double and double/double. */
#include <math.h>
#include <stdlib.h>

#include "kern_internal.h"

#define REF_T float
#define REF_ACC float
#define REF_SFX f32
#define REF_EXP expf
#define REF_LOG logf
#include "attn_ref_tmpl.h"
#undef REF_T
#undef REF_ACC
#undef REF_SFX
#undef REF_EXP
#undef REF_LOG

#define REF_T float
#define REF_ACC double
#define REF_SFX f32acc64
#define REF_EXP exp
#define REF_LOG log
#include "attn_ref_tmpl.h"
#undef REF_T
#undef REF_ACC
#undef REF_SFX
#undef REF_EXP
#undef REF_LOG

#define REF_T double
#define REF_ACC double
#define REF_SFX f64
#define REF_EXP exp
#define REF_LOG log
#include "attn_ref_tmpl.h"
#undef REF_T
#undef REF_ACC
#undef REF_SFX
#undef REF_EXP
#undef REF_LOG

kern_status kern_attn_ref_fwd(const struct kern_attn_desc *desc,
                              const float *q, const float *k, const float *v,
                              float *o, float *lse)
{
    kern_status st = kern_desc_check(desc);
    if (st != KERN_OK) return st;
    if (!kern_fwd_bufs_ok(desc, q, k, v, o, lse)) return KERN_EINVAL;
    return desc->acc == KERN_ACC_F64 ? ref_fwd_f32acc64(desc, q, k, v, o, lse)
                                     : ref_fwd_f32(desc, q, k, v, o, lse);
}

kern_status kern_attn_ref_bwd(const struct kern_attn_desc *desc,
                              const float *q, const float *k, const float *v,
                              const float *o, const float *lse, const float *dout,
                              float *dq, float *dk, float *dv)
{
    kern_status st = kern_desc_check(desc);
    if (st != KERN_OK) return st;
    if (!kern_bwd_bufs_ok(desc, q, k, v, o, lse, dout, dq, dk, dv)) return KERN_EINVAL;
    return desc->acc == KERN_ACC_F64 ? ref_bwd_f32acc64(desc, q, k, v, o, lse, dout, dq, dk, dv)
                                     : ref_bwd_f32(desc, q, k, v, o, lse, dout, dq, dk, dv);
}

kern_status kern_attn_ref_fwd_f64(const struct kern_attn_desc *desc,
                                  const double *q, const double *k, const double *v,
                                  double *o, double *lse)
{
    kern_status st = kern_desc_check(desc);
    if (st != KERN_OK) return st;
    if (!kern_fwd_bufs_ok(desc, q, k, v, o, lse)) return KERN_EINVAL;
    return ref_fwd_f64(desc, q, k, v, o, lse);
}

kern_status kern_attn_ref_bwd_f64(const struct kern_attn_desc *desc,
                                  const double *q, const double *k, const double *v,
                                  const double *o, const double *lse, const double *dout,
                                  double *dq, double *dk, double *dv)
{
    kern_status st = kern_desc_check(desc);
    if (st != KERN_OK) return st;
    if (!kern_bwd_bufs_ok(desc, q, k, v, o, lse, dout, dq, dk, dv)) return KERN_EINVAL;
    return ref_bwd_f64(desc, q, k, v, o, lse, dout, dq, dk, dv);
}

const struct kern_attn_impl kern_attn_impl_ref = {
    .name = "ref",
    .summary = "reference: row by row, single-threaded, float32 or float64 accumulation",
    .fwd = kern_attn_ref_fwd,
    .bwd = kern_attn_ref_bwd,
};
