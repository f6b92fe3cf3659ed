/* fp8_price.c: FP8 training's compute times (docs/model.md, "FP8
 * training"), which schedule.c's pricing of an fp8 plan takes in place of
 * the bf16 ones it keeps: the linear layers' GEMMs at the FP8 rates
 * (gemm.c: 1-byte operands, bf16 outputs) after the cast of their operand
 * (fp8.c's bytes by recipe) in the layers that run FP8, and attention's
 * forward under --fp8-attention. Apart from schedule.c, so that its pass
 * over the ops prices bf16 plans as before. Pure. */
#include "gemm.h"
#include "internal.h"

/* FP8 training's rates, apart from `rates` (schedule.c's, whose address never
 * leaves its pricing, so that the pass over the ops keeps them in registers): the linear layers' GEMMs
 * at the FP8 rates, the bf16 ones for the layers kept bf16 and the other
 * GEMMs, the share of the stage's layers kept in bf16, a cast's bytes per
 * element and kernels [the producer writes FP8 itself] (fp8.c), the stream
 * class's seconds per byte and a kernel's floor */
typedef struct fp8_rates {
    uly_gemm_rates g8, g16;
    double inv_tensor8, inv_tensor16, peak_frac;
    double f16;
    double cast_Bpe[2];
    double cast_kern[2];
    double inv_stream, floor_s;
} fp8_rates;

/* A GEMM op in FP8 training: a linear layer's at the FP8 rates after the
 * cast that quantizes its operand (forward: its input, m x k; backward: its
 * output's gradient, m x n) at the stream class's bandwidth, in the share
 * of layers that run FP8, and at the bf16 rates in the rest (the layers
 * kept bf16); any other GEMM (the output layer's) in bf16 */
static double gemm_op_time_fp8(const fp8_rates *f, const uly_op *o)
{
    const double t16 = uly_gemm_op_shape_time(&f->g16, f->inv_tensor16, f->peak_frac, o, 1);
    const uly_fp8_cast_entry e = uly_fp8_cast_of[o->type];
    if (!e.linear) return t16;
    double t8 = uly_gemm_op_shape_time(&f->g8, f->inv_tensor8, f->peak_frac, o, 1);
    if (o->gemm_m > 0) {
        const int bwd = o->phase == ULY_PHASE_BWD && !o->recompute;
        const double elems = o->gemm_batch * o->gemm_m * (bwd ? o->gemm_n : o->gemm_k);
        t8 += elems * f->cast_Bpe[e.fused] * f->inv_stream + f->cast_kern[e.fused] * f->floor_s;
    }
    return f->f16 * t16 + (1.0 - f->f16) * t8;
}

/* FP8 attention's forward (FlashAttention-3, Shah et al. 2024, arXiv
 * 2407.08608): FP8 "close to 1.2 PFLOP/s" against bf16's "up to 740
 * TFLOP/s" on H100 SXM5, 1.2 / 0.74 = 1.6x, at most 1.2 of the 1979 PFLOP/s
 * FP8 peak; FlashAttention-3 has no FP8 backward */
#define ULY_FP8_ATTN_FWD_SPEEDUP (1.2 / 0.74)
#define ULY_FP8_ATTN_FWD_CAP (1.2 / 1.979)

/* FP8 training's rates (fp8_rates) */
static void fp8_rates_init(fp8_rates *f, const uly_model *m, const uly_workload *w,
                                                           const uly_cluster *c, const uly_plan *plan)
{
    const uly_gpu *g = &c->gpu;
    f->inv_tensor8 = 1.0 / (g->peak_flops[ULY_FP8] * uly_gpu_clock_scale(g));
    f->inv_tensor16 = 1.0 / (g->peak_flops[ULY_BF16] * uly_gpu_clock_scale(g));
    f->peak_frac = g->gemm_peak_frac;
    uly_gemm_rates_init(&f->g8, g, ULY_FP8);
    uly_gemm_rates_init(&f->g16, g, ULY_BF16);
    f->f16 = uly_fp8_bf16_layer_frac(m, w, plan);
    for (int k = 0; k < 2; k++) {
        f->cast_Bpe[k] = uly_fp8_cast_bytes_per_elem(w->fp8_recipe, k);
        f->cast_kern[k] = (double)uly_fp8_cast_kernels(w->fp8_recipe, k);
    }
    const double cls = g->mb_eff[ULY_MB_STREAM] > 0 ? g->mb_eff[ULY_MB_STREAM] : g->mem_eff;
    f->inv_stream = 1.0 / (g->hbm_bw_Bps * cls);
    f->floor_s = g->kernel_floor_s[w->cuda_graphs ? 1 : 0];
}

/* FP8 training: the GEMM ops' times in out[] (their compute times, as the
 * pass over the ops takes them), the linear layers' at the FP8 rates */
void uly_fp8_gemm_times(const uly_model *m, const uly_workload *w, const uly_cluster *c, const uly_plan *plan,
                        double *out)
{
    fp8_rates f;
    fp8_rates_init(&f, m, w, c, plan);
    for (int i = 0; i < plan->n_ops && i < ULY_PLAN_MAX_OPS; i++) {
        const uly_op *o = &plan->ops[i];
        const double floors = (double)uly_op_kernels(o) * f.floor_s;
        if (o->kind == ULY_OP_GEMM) out[i] = gemm_op_time_fp8(&f, o) * o->crit_factor + floors;
        /* FP8 attention (--fp8-attention): the forward kernel (and its
         * recompute) at FlashAttention-3's FP8 speed over its bf16 one,
         * at most its best FP8 rate; the backward stays bf16 */
        if (o->kind == ULY_OP_ATTN && o->flash && w->fp8_attention && !(o->phase == ULY_PHASE_BWD && !o->recompute)) {
            double t = (out[i] - floors) / ULY_FP8_ATTN_FWD_SPEEDUP;
            const double best = o->flops * o->crit_factor * f.inv_tensor8 / ULY_FP8_ATTN_FWD_CAP;
            out[i] = (t > best ? t : best) + floors;
        }
    }
}
