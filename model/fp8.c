/* fp8.c: FP8 training as TransformerEngine runs it under Megatron-LM
 * (docs/model.md, "FP8 training"): which ops run their GEMMs in FP8, the
 * casts that quantize a GEMM's operand before it (bytes by recipe and by
 * whether the kernel producing the operand writes it in FP8 itself), which
 * transformer layers stay bf16, and the memory FP8 adds (weight copies and
 * transposes, scales, amax histories). Pure: tables and arithmetic. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const char *const recipe_names[] = {ULY_FP8_RECIPES(ULY_X_NAME)};

const char *uly_fp8_recipe_name(uly_fp8_recipe r)
{
    return (unsigned)r < ULY_FP8_RECIPE_COUNT ? recipe_names[r] : "?";
}

uly_fp8_recipe uly_fp8_recipe_find(const char *name)
{
    for (int i = 0; name && i < ULY_FP8_RECIPE_COUNT; i++)
        if (strcmp(recipe_names[i], name) == 0) return (uly_fp8_recipe)i;
    return ULY_FP8_RECIPE_COUNT;
}

int uly_dtype_gemm_bytes(uly_dtype t) { return t == ULY_FP8 ? 1 : uly_dtype_bytes(t); }

/* The linear layers' GEMM ops: TransformerEngine's Linear, LayerNormLinear
 * and LayerNormMLP modules, the ones Megatron-Core's TE layer spec builds
 * (QKV, output projection, fc1, fc2). Cast: the operand each quantizes (the
 * forward op its input, m x k; the backward op the gradient of its output,
 * m x n) and whether the kernel producing it can write it in FP8 itself (a
 * norm or the MLP activation: 1) or a cast kernel must (attention's
 * output, the residual stream's gradient, attention's gradients: 0). */
const uly_fp8_cast_entry uly_fp8_cast_of[ULY_OPT_COUNT] = {
    [ULY_OPT_QKV_PROJ] = {1, 1},     [ULY_OPT_OUT_PROJ] = {1, 0},     [ULY_OPT_MLP_UP] = {1, 1},
    [ULY_OPT_MLP_DOWN] = {1, 1},     [ULY_OPT_QKV_PROJ_BWD] = {1, 0}, [ULY_OPT_OUT_PROJ_BWD] = {1, 0},
    [ULY_OPT_MLP_UP_BWD] = {1, 1},   [ULY_OPT_MLP_DOWN_BWD] = {1, 0},
    /* a MoE layer's experts: TransformerEngine's GroupedLinear (Megatron-Core's
     * TEGroupedMLP), their first GEMM's input the permuted or dispatched
     * tokens (a cast of its own), the second's the activation's output; the
     * router stays in higher precision */
    [ULY_OPT_EXPERT_UP] = {1, 0},    [ULY_OPT_EXPERT_DOWN] = {1, 1},  [ULY_OPT_EXPERT_UP_BWD] = {1, 1},
    [ULY_OPT_EXPERT_DOWN_BWD] = {1, 0},
};

int uly_op_fp8(const uly_workload *w, uly_op_type t)
{
    if (!w || w->dtype != ULY_FP8 || (unsigned)t >= ULY_OPT_COUNT) return 0;
    if (t == ULY_OPT_ATTN_FWD) return w->fp8_attention != 0; /* FlashAttention-3's FP8 is forward only */
    return uly_fp8_cast_of[t].linear;
}

/* Bytes per element of a quantized operand: read in bf16 (2), written in
 * FP8 twice, row-wise for this GEMM and column-wise (the transpose) for the
 * other pass's (2 x 1); the block recipes' scales beside each copy
 * (blockwise: an fp32 per 128, mxfp8: an E8M0 byte per 32); tensorwise
 * first reads the tensor for its amax (2) where the producer did not.
 * TransformerEngine's normalization (transformer_engine/pytorch/csrc/
 * extensions/normalization.cpp, layernorm_fwd's Impl) writes the FP8 output
 * itself only for the delayed recipe's quantizer (FULLY_FUSED); current
 * scaling computes norm and amax, then quantizes (FUSED_NORM_AMAX_FP8);
 * MXFP8 and block scaling run the norm, then the quantizer (UNFUSED). */
double uly_fp8_cast_bytes_per_elem(uly_fp8_recipe r, int fused_producer)
{
    switch (r) {
    case ULY_FP8_DELAYED: return fused_producer ? 0.0 : 4.0;
    case ULY_FP8_TENSORWISE: return fused_producer ? 4.0 : 6.0;
    case ULY_FP8_BLOCKWISE: return 4.0 + 2.0 * 4.0 / 128.0;
    case ULY_FP8_MXFP8: return 4.0 + 2.0 / 32.0;
    default: return 4.0;
    }
}

/* Bytes per element of a GEMM input a linear layer saves for its weight
 * gradient: under FP8 TransformerEngine saves the quantized input, not the
 * bf16 one, keeping one of its two copies (transformer_engine/pytorch/
 * module/linear.py and layernorm_linear.py, _Linear.forward and
 * _LayerNormLinear.forward: update_usage(rowwise_usage=False), or the
 * row-wise copy alone where sequence parallelism re-gathers it in
 * backward), 1 byte with the block recipes' scales beside it (blockwise: an
 * fp32 per 128, mxfp8: an E8M0 byte per 32); beta bytes, the input itself,
 * otherwise. */
double uly_saved_gemm_input_bytes(const uly_workload *w, double beta)
{
    if (w->dtype != ULY_FP8) return beta;
    switch (w->fp8_recipe) {
    case ULY_FP8_BLOCKWISE: return 1.0 + 4.0 / 128.0;
    case ULY_FP8_MXFP8: return 1.0 + 1.0 / 32.0;
    default: return 1.0;
    }
}

/* The kernels of one cast: tensorwise's amax pass and its cast, else one
 * (a fused one: none) */
int uly_fp8_cast_kernels(uly_fp8_recipe r, int fused_producer)
{
    if (r == ULY_FP8_DELAYED && fused_producer) return 0;
    return r == ULY_FP8_TENSORWISE && !fused_producer ? 2 : 1;
}

double uly_fp8_bf16_layer_frac(const uly_model *m, const uly_workload *w, const uly_plan *plan)
{
    const int64_t L = m->layers, S = plan->stage_layers > 0 ? plan->stage_layers : L;
    const int64_t start = w->fp8_bf16_start, end = w->fp8_bf16_end;
    if (start + end <= 0 || L <= 0) return 0;
    int64_t n;
    if (plan->layout.pp <= 1) {
        n = start + end < L ? start + end : L;
        return (double)n / (double)L;
    }
    /* the slowest stage priced is the last: its S layers end the model */
    n = end < S ? end : S;
    const int64_t first = L - S; /* the first layer of the last stage */
    if (start > first) n += start - first < S - n ? start - first : S - n;
    return (double)n / (double)S;
}

double uly_plan_linear_params(const uly_model *m, const uly_plan *plan)
{
    const double h = (double)m->hidden, d = (double)m->head_dim;
    const double qkv = h * (double)(m->heads + 2 * m->kv_heads) * d, out = (double)(m->heads) * d * h;
    /* a MoE model's layer: its shared experts here, its routed experts
     * (split over EP x ETP, not TP) beside */
    const double f = (double)(m->experts > 0 ? m->shared_ffn_hidden : m->ffn_hidden);
    const double mlp = (m->swiglu ? 3.0 : 2.0) * h * f;
    const double t = plan->weight_split > 0 ? (double)plan->weight_split : 1.0;
    return (double)plan->stage_layers * (qkv + out + mlp) / t + plan->expert_params_rank;
}

/* TransformerEngine's delayed scaling keeps, per FP8 module and GEMM, three
 * forward quantizers (input, weight, output) and two backward ones (output
 * gradient, input gradient) (transformer_engine/pytorch/module/base.py:
 * num_gemms x 3 forward, x 2 backward), each an fp32 amax history of
 * amax_history_len entries and an fp32 scale (quantization.py's
 * DelayedScaling state: amax_history [len, n], scale [n]) */
#define FP8_GEMMS_PER_LAYER 4.0
#define FP8_QUANTIZERS_PER_GEMM 5.0

uly_status uly_fp8_mem_eval(const uly_model *m, const uly_workload *w, const uly_plan *plan, uly_fp8_mem *out)
{
    if (!m || !w || !plan || !out) return ULY_EINVAL;
    memset(out, 0, sizeof *out);
    if (w->dtype != ULY_FP8) return ULY_OK;
    double lin = uly_plan_linear_params(m, plan);
    double layers = (double)plan->stage_layers;
    if (w->zero_stage >= 3 && plan->dims.zero_group > 1) {
        /* ZeRO-3 / FSDP: FP8 copies of the gathered layers only */
        double held = (double)(1 + uly_zero_prefetch_layers(w));
        if (held > layers) held = layers;
        lin *= held / layers;
    }
    const double f8 = 1.0 - uly_fp8_bf16_layer_frac(m, w, plan); /* the layers run in FP8 */
    lin *= f8;
    /* the weight in FP8 and its transpose, 1 + 1 bytes (Hopper's FP8 GEMMs
     * take K-major operands only, so the backward's weight is a transposed
     * copy; the block recipes quantize both directions); with
     * fp8_param_gather these two replace the bf16 weight (its 2 bytes, which
     * the weights term counts) */
    out->copies_bytes = lin * (2.0 - (w->fp8_param_gather ? (double)uly_dtype_bytes(ULY_FP8) : 0.0));
    if (w->fp8_recipe == ULY_FP8_BLOCKWISE) out->scales_bytes = 2.0 * lin * 4.0 / (128.0 * 128.0);
    else if (w->fp8_recipe == ULY_FP8_MXFP8) out->scales_bytes = 2.0 * lin / 32.0;
    if (w->fp8_recipe == ULY_FP8_DELAYED) {
        const double len = w->fp8_amax_history > 0 ? (double)w->fp8_amax_history : 1.0;
        out->amax_bytes = layers * f8 * FP8_GEMMS_PER_LAYER * FP8_QUANTIZERS_PER_GEMM * (len + 1.0) * 4.0;
    }
    out->total_bytes = out->copies_bytes + out->scales_bytes + out->amax_bytes;
    return ULY_OK;
}

__attribute__((noinline, cold)) double uly_fp8_mem_total(const uly_model *m, const uly_workload *w,
                                                         const uly_plan *plan)
{
    uly_fp8_mem f;
    return uly_fp8_mem_eval(m, w, plan, &f) == ULY_OK ? f.total_bytes : 0;
}

uly_status uly_fp8_check(const uly_workload *w, char *why, size_t n)
{
    if ((unsigned)w->fp8_recipe >= ULY_FP8_RECIPE_COUNT) {
        if (why && n) snprintf(why, n, "fp8_recipe = %d: must be delayed, tensorwise, blockwise or mxfp8", (int)w->fp8_recipe);
        return ULY_EINVAL;
    }
    const int32_t v[5] = {w->fp8_param_gather, w->fp8_attention, w->fp8_bf16_start, w->fp8_bf16_end,
                          w->fp8_amax_history};
    static const char *const names[5] = {"fp8_param_gather", "fp8_attention", "fp8_bf16_start", "fp8_bf16_end",
                                         "fp8_amax_history"};
    static const int32_t hi[5] = {1, 1, 1 << 20, 1 << 20, 1 << 20};
    for (int i = 0; i < 5; i++)
        if (v[i] < 0 || v[i] > hi[i]) {
            if (why && n) snprintf(why, n, "%s = %d: must be in [0, %d]", names[i], (int)v[i], (int)hi[i]);
            return ULY_EINVAL;
        }
    return ULY_OK;
}

double uly_mfu_at(const uly_timing *t, double peak_flops)
{
    return t && peak_flops > 0 ? t->tflops_per_gpu * 1e12 / peak_flops : 0;
}
