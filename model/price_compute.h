/* price_compute.h: a compute op's time, for schedule.c's pricing (and
 * only there: its functions are inlined into the loop over the ops): the
 * rates of one pricing, worked out once from the GPU, the workload and the
 * model (rates_init), and an op's time from them (compute_time): GEMMs by
 * shape (gemm.h) or on the efficiency curve, flash or materialised
 * attention, element-wise ops by their kernel class's bandwidth. Not
 * installed. */
#ifndef ULY_PRICE_COMPUTE_H
#define ULY_PRICE_COMPUTE_H

#include <math.h>

#include "gemm.h"
#include "internal.h"

/* GEMM ops carry m*n*k; the curve is keyed by its cube root, taken only
 * when the curve has more than one point */
static double gemm_eff(const uly_curve *c, double volume)
{
    return c->n <= 1 ? c->eff[0] : uly_curve_eval(c, cbrt(volume));
}

typedef struct rates {
    double inv_peak;    /* s per FLOP at peak */
    double inv_tensor;  /* s per FLOP at the peak the sustained clock allows (attention's curves are fractions of it) */
    /* GEMMs by shape (a GPU: sm_count > 0), else on the gemm_eff curve; the
     * shape's rates; GEMM-less attention's efficiency there (the best
     * achievable fraction) */
    int by_shape;
    uly_gemm_rates gemm_r;
    double peak_frac;
    double inv_mem;     /* s per byte at achievable HBM bandwidth */
    double inv_mb[ULY_MB_COUNT]; /* s per byte of each memory-bound kernel class */
    double floor_s;     /* least time of one kernel */
    const uly_curve *gemm, *attn;
    const uly_curve *attn_bwd;  /* backward's own curve (n == 0: attn x attn_bwd_rel) */
    const uly_curve *act_eff;   /* [backward]: the activation's rate by elements (n == 0: constant) */
    double head_dim;
    double beta;        /* bytes per activation element */
    double act_s[2];    /* s per activation element [backward] (0: memory-bound) */
    double attn_bwd_rel;/* backward flash attention's efficiency over forward's */
    double ak_fwd, ak_bwd, ak_cap; /* the attention kernel against the curves' FlashAttention-2, and its cap */
    /* the flash attention curves' last answer, [own backward curve]: a
     * plan's attention ops (forward, its recompute, backward) share their
     * block size, and a curve between points costs three logarithms */
    double attn_x[2], attn_e[2];
    /* the last GEMM rows (gemm_m) tiled and their tiles: a plan's GEMMs
     * mostly share them (the tokens) */
    double rows_m, rows_tiles;
    double sigma[2];    /* compute's slowdown beside a transfer [crossing nodes] (comm_sigma) */
    /* sliding windows: the windowed layers' share of attention's FLOPs
     * (0: no window), run at the efficiency of a block of the window's keys */
    double win_share, win_keys;
} rates;

/* Flash attention's efficiency at block size x on curve c (or, without
 * one, the GEMM curve's): a GPU's published curves follow the kernel's trend
 * past their last point; a CPU profile's measured ones stay at it */
static double attn_curve_at(const rates *r, const uly_curve *c, double x)
{
    return c->n ? (r->by_shape ? uly_curve_eval_trend(c, x) : uly_curve_eval(c, x))
           : r->by_shape ? r->peak_frac
                         : gemm_eff(r->gemm, x * x * r->head_dim);
}

/* attn_curve_at on the backward's own curve (own) or the forward's,
 * remembering the last answer of each */
static double attn_eff(rates *r, int own, double x)
{
    if (r->attn_x[own] == x) return r->attn_e[own];
    const double e = attn_curve_at(r, own ? r->attn_bwd : r->attn, x);
    r->attn_x[own] = x;
    r->attn_e[own] = e;
    return e;
}

/* A flash attention op of a model with sliding windows: the windowed
 * layers' share of its FLOPs at the efficiency of a block of at most the
 * window's keys, the rest at the op's own block (the curves read directly,
 * not through attn_eff's one-key memo, which the two keys would defeat);
 * then the kernel's scale and cap, and the backward's ratio, on each. */
static double attn_window_time(const rates *r, const uly_op *o, int own, int bwd)
{
    const uly_curve *c = own ? r->attn_bwd : r->attn;
    double t = 0;
    for (int part = 0; part < 2; part++) {
        const double x = part && r->win_keys < o->eff_size ? r->win_keys : o->eff_size;
        double e = attn_curve_at(r, c, x);
        e *= bwd ? r->ak_bwd : r->ak_fwd;
        if (e > r->ak_cap) e = r->ak_cap;
        t += o->flops * (part ? r->win_share : 1.0 - r->win_share) * r->inv_tensor / e;
    }
    return bwd && !own ? t / r->attn_bwd_rel : t;
}

/* An op's time reads its phase only as `bwd` (backward, not recompute): a
 * full-recompute copy of a forward op costs what the forward op does, and
 * copy_pass takes it from there. */
/* A GEMM op by its shape (uly_gemm_op_rows_time): the forward product, or
 * a backward op's input gradient (m x n)(n x k) and weight gradient
 * (k x m)(m x n), its tiles along m those of the GEMM before when it has
 * the same rows; an op built without a shape at the achievable fraction of
 * peak */
static inline __attribute__((always_inline)) double gemm_op_time(rates *r, const uly_op *o)
{
    if (!(o->gemm_m > 0)) return o->flops * r->inv_tensor / r->peak_frac;
    if (o->gemm_m != r->rows_m) {
        r->rows_m = o->gemm_m;
        r->rows_tiles = uly_ceil_pos(o->gemm_m / r->gemm_r.tile_m);
    }
    return uly_gemm_op_rows_time(&r->gemm_r, o, r->rows_tiles);
}

/* element-wise bytes at their kernel class's rate (a GEMM's roofline
 * bytes stream: inv_mem) */
static inline double elem_bytes_s(const rates *r, const uly_op *o)
{
    return o->bytes_touched * r->inv_mb[o->mb_class];
}

/* The compute ops a GPU preset's plan rarely holds, out of line so that
 * the pricing loop stays small: GEMMs on the efficiency curve (CPU
 * profiles), materialised attention, and an op of no compute kind (0) */
__attribute__((noinline)) static double compute_time_rare(rates *r, const uly_op *o)
{
    const double mem = o->bytes_touched * r->inv_mem, mb = elem_bytes_s(r, o);
    if (o->kind == ULY_OP_GEMM) {
        const double t = o->flops * r->inv_peak / gemm_eff(r->gemm, o->eff_size);
        return mem > t ? mem : t;
    }
    if (o->kind != ULY_OP_ATTN) return 0;
    if (r->by_shape && o->gemm_m > 0) {
        /* materialised on a GPU: the two score GEMMs by shape, QK^T
         * (q x d)(d x kv) and PV (q x kv)(kv x d), their 4 batch q kv d
         * FLOPs scaled to the op's (the block's density, backward's
         * twice), then the element-wise passes */
        const double b = o->gemm_batch, q = o->gemm_m, kv = o->gemm_n, d = o->gemm_k;
        const double g = uly_gemm_time_pos(&r->gemm_r, b, q, kv, d) + uly_gemm_time_pos(&r->gemm_r, b, q, d, kv);
        return g * o->flops / (4.0 * b * q * kv * d) + mb;
    }
    /* materialised: the two score GEMMs, each bound by its FLOPs or by
     * its traffic over the score block (forward: QK^T writes it, PV
     * reads it; backward: four passes; 2 beta bytes per 4 d FLOPs),
     * then the element-wise passes over the block */
    const double ge = r->by_shape ? r->peak_frac : gemm_eff(r->gemm, o->eff_size * o->eff_size * r->head_dim);
    const double g = o->flops * (r->by_shape ? r->inv_tensor : r->inv_peak) / ge;
    const double gb = o->flops * r->beta / (2.0 * r->head_dim) * r->inv_mem;
    return (g > gb ? g : gb) + mb;
}

/* kernels: uly_op_kernels(o), which the caller reads once for its own sums
 * too (a load through the op after the pricing's stores of doubles, which
 * the compiler must assume may alias the op's bytes, is not merged) */
static inline __attribute__((always_inline)) double compute_time(rates *r, const uly_op *o, int kernels)
{
    double t = 0;
    /* tested in the order of how many a plan holds (a switch costs a table
     * jump per op); the element-wise bytes priced only where they count,
     * not for the GEMMs by shape and flash attention among them */
    if (o->kind == ULY_OP_GEMM && r->by_shape) {
        t = gemm_op_time(r, o);
    } else if (o->kind == ULY_OP_ELEM) {
        t = elem_bytes_s(r, o);
        if (o->act_elems) { /* the activation: its arithmetic may outlast its bytes */
            const int b = o->phase == ULY_PHASE_BWD && !o->recompute;
            const uly_curve *ae = &r->act_eff[b];
            /* a constant rate: no division (by 1) */
            double a = (double)o->act_elems * r->act_s[b];
            if (ae->n) a /= uly_curve_eval(ae, (double)o->act_elems);
            if (a > t) t = a;
        }
    } else if (o->kind == ULY_OP_ATTN && o->flash) {
        const int bwd = o->phase == ULY_PHASE_BWD && !o->recompute;
        /* a profile that measured the backward by block size prices it
         * on its own curve; otherwise the forward's, scaled */
        const int own = bwd && r->attn_bwd->n;
        if (__builtin_expect(r->win_share > 0, 0)) {
            t = attn_window_time(r, o, own, bwd);
        } else {
            double e = attn_eff(r, own, o->eff_size);
            e *= bwd ? r->ak_bwd : r->ak_fwd;
            if (e > r->ak_cap) e = r->ak_cap;
            t = o->flops * r->inv_tensor / e;
            if (bwd && !own) t /= r->attn_bwd_rel;
        }
    } else {
        t = compute_time_rare(r, o);
    }
    /* each kernel adds its launch and ramp to its work */
    return t * o->crit_factor + (double)kernels * r->floor_s;
}

/* How much compute beside a transfer slows, per second of the transfer:
 * by the tier it crosses (NCCL holds more SMs for NVLink's channels than
 * for a NIC's), else the GPU's own figure (CPU profiles: calibrated); the
 * pricing's rates hold both tiers' (rates_init) */
static inline double comm_sigma(const uly_cluster *c, int inter)
{
    const double s = c->overlap_slowdown[inter];
    return s > 0 ? s : c->gpu.comm_slowdown;
}

/* The rates of one pricing, from the GPU, the workload and the model:
 * field by field, as an initializer would zero the whole struct first (the
 * GEMM rates, set only where GEMMs go by shape, too) */
static inline __attribute__((always_inline)) void rates_init(rates *rt, const uly_model *m, const uly_workload *w,
                                                             const uly_cluster *c)
{
    const uly_gpu *g = &c->gpu;
    double ak[3];
    uly_attn_kernel_scale(w->attn_kernel, &ak[0], &ak[1], &ak[2]);
    /* all but FP8 training's linear GEMMs run in the dtype, bf16 under fp8 */
    const uly_dtype cd = w->dtype == ULY_FP8 ? ULY_BF16 : w->dtype;
    rt->inv_peak = 1.0 / g->peak_flops[cd];
    rt->inv_tensor = 1.0 / (g->peak_flops[cd] * uly_gpu_clock_scale(g));
    rt->by_shape = g->sm_count > 0;
    rt->peak_frac = g->gemm_peak_frac;
    rt->inv_mem = 1.0 / (g->hbm_bw_Bps * g->mem_eff);
    for (int k = 0; k < ULY_MB_COUNT; k++)
        rt->inv_mb[k] = 1.0 / (g->hbm_bw_Bps * (g->mb_eff[k] > 0 ? g->mb_eff[k] : g->mem_eff));
    rt->floor_s = g->kernel_floor_s[w->cuda_graphs ? 1 : 0];
    rt->gemm = &g->gemm_eff;
    rt->attn = &g->attn_eff[w->causal ? 1 : 0][m->head_dim >= 128 ? 1 : 0];
    rt->attn_bwd = &g->attn_bwd_eff[w->causal ? 1 : 0][m->head_dim >= 128 ? 1 : 0];
    if (__builtin_expect(w->attn_kernel == ULY_AK_CUDNN, 0)) { /* cuDNN's own forward and backward curves */
        rt->attn = &uly_cudnn_attn_eff[0][w->causal ? 1 : 0];
        rt->attn_bwd = &uly_cudnn_attn_eff[1][w->causal ? 1 : 0];
    }
    rt->act_eff = g->act_eff;
    rt->head_dim = (double)m->head_dim;
    rt->beta = (double)uly_dtype_bytes(w->dtype);
    rt->act_s[0] = g->act_fwd_s_per_elem;
    rt->act_s[1] = g->act_bwd_s_per_elem;
    rt->attn_bwd_rel = g->attn_bwd_rel > 0 ? g->attn_bwd_rel : 1.0;
    rt->ak_fwd = ak[0], rt->ak_bwd = ak[1], rt->ak_cap = ak[2];
    rt->attn_x[0] = rt->attn_x[1] = -1; /* no block size is negative */
    rt->attn_e[0] = rt->attn_e[1] = 0;
    rt->rows_m = -1, rt->rows_tiles = 0; /* no GEMM has negative rows */
    rt->sigma[0] = comm_sigma(c, 0);
    rt->sigma[1] = comm_sigma(c, 1);
    rt->win_share = 0, rt->win_keys = (double)m->attn_window;
    if (__builtin_expect(m->attn_window > 0, 0)) uly_attn_window_density(m, w, &rt->win_share);
    if (rt->by_shape) uly_gemm_rates_init(&rt->gemm_r, g, cd);
}

#endif
