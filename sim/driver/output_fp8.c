/* output_fp8.c: what the planning commands print of FP8 training (docs/cli.md,
 * "FP8 training"): the workload's recipe and which ops ran in FP8, the peaks
 * MFU is stated against (bf16, as NVIDIA's performance tables report model
 * TFLOP/s, and the FP8 one), in the table's header and notes and in JSON.
 * Said only under --dtype fp8: other plans print as before. */
#include <stdio.h>
#include <string.h>

#include "output.h"

/* The FP8 ops of a layer, by name: forward types (their backward follows) */
static const uly_op_type fp8_fwd_ops[] = {ULY_OPT_QKV_PROJ, ULY_OPT_OUT_PROJ, ULY_OPT_MLP_UP, ULY_OPT_MLP_DOWN};

const char *sim_op_kind_label(const uly_workload *w, const uly_op *op)
{
    if (!uly_op_fp8(w, op->type)) return uly_op_kind_name(op->kind);
    return op->kind == ULY_OP_ATTN ? "attn fp8" : "gemm fp8";
}

/* The ops that run in FP8, "qkv_proj, out_proj, mlp_up, mlp_down" */
static void fp8_ops_str(const uly_workload *w, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof fp8_fwd_ops / sizeof fp8_fwd_ops[0] && k < n; i++) {
        if (!uly_op_fp8(w, fp8_fwd_ops[i])) continue;
        const int r = snprintf(buf + k, n - k, "%s%s", k ? ", " : "", uly_op_type_name(fp8_fwd_ops[i]));
        if (r < 0) break;
        k += (size_t)r;
    }
}

int sim_fp8_workload_str(const uly_workload *w, char *buf, size_t n)
{
    if (w->dtype != ULY_FP8 || !n) return 0;
    char ops[120], edges[96] = "";
    fp8_ops_str(w, ops, sizeof ops);
    if (w->fp8_bf16_start + w->fp8_bf16_end > 0)
        snprintf(edges, sizeof edges, "; the first %d and last %d layers in bf16", (int)w->fp8_bf16_start,
                 (int)w->fp8_bf16_end);
    return snprintf(buf, n,
                    "; FP8 %s scaling: GEMMs of %s (forward and backward) in FP8; %snorms, softmax, loss, embedding "
                    "and output layer in bf16, activations and gradients sent in bf16%s%s; attention priced by %s%s",
                    uly_fp8_recipe_name(w->fp8_recipe), ops,
                    w->fp8_attention ? "attention's forward in FP8 (FlashAttention-3's FP8 speed-up), its backward, "
                                     : "attention, ",
                    edges,
                    w->fp8_param_gather ? "; weights gathered in FP8" : "",
                    w->flash ? uly_attn_kernel_name(w->attn_kernel) : "materialised score GEMMs",
                    w->flash ? sim_attn_kernel_why(w->attn_kernel) : "");
}

void sim_peak_str(const uly_cluster *cl, const uly_workload *w, char *buf, size_t n)
{
    if (w->dtype == ULY_FP8)
        snprintf(buf, n, "%.0f TFLOP/s bf16, %.0f fp8", cl->gpu.peak_flops[ULY_BF16] / 1e12,
                 cl->gpu.peak_flops[ULY_FP8] / 1e12);
    else
        snprintf(buf, n, "%.0f TFLOP/s %s", cl->gpu.peak_flops[w->dtype] / 1e12, uly_dtype_name(w->dtype));
}

void sim_fp8_note(FILE *f, const uly_workload *w, const uly_cluster *cl, const uly_timing *t)
{
    if (w->dtype != ULY_FP8) return;
    char line[400];
    snprintf(line, sizeof line,
             "FP8: MFU %.1f%% of the bf16 dense peak (%.0f TFLOP/s; the mfu_pct column, as NVIDIA's tables report "
             "model TFLOP/s), %.1f%% of the fp8 dense peak (%.0f TFLOP/s)",
             t->mfu * 100.0, cl->gpu.peak_flops[ULY_BF16] / 1e12,
             uly_mfu_at(t, cl->gpu.peak_flops[ULY_FP8]) * 100.0, cl->gpu.peak_flops[ULY_FP8] / 1e12);
    sim_print_note(f, "# ", "#   ", line, 120);
}

void sim_fp8_json_workload(cJSON *wo, const uly_workload *w)
{
    if (w->dtype != ULY_FP8) return;
    cJSON *o = cJSON_CreateObject();
    sim_json_add(o, "recipe", cJSON_CreateString(uly_fp8_recipe_name(w->fp8_recipe)));
    sim_json_add(o, "param_gather", cJSON_CreateBool(w->fp8_param_gather));
    sim_json_add(o, "attention", cJSON_CreateBool(w->fp8_attention));
    sim_json_add(o, "bf16_first_layers", sim_json_int(w->fp8_bf16_start));
    sim_json_add(o, "bf16_last_layers", sim_json_int(w->fp8_bf16_end));
    sim_json_add(o, "amax_history_len", sim_json_int(w->fp8_amax_history > 0 ? w->fp8_amax_history : 1));
    cJSON *ops = cJSON_CreateArray();
    for (size_t i = 0; i < sizeof fp8_fwd_ops / sizeof fp8_fwd_ops[0]; i++)
        if (uly_op_fp8(w, fp8_fwd_ops[i])) sim_json_add(ops, NULL, cJSON_CreateString(uly_op_type_name(fp8_fwd_ops[i])));
    if (w->fp8_attention) sim_json_add(ops, NULL, cJSON_CreateString(uly_op_type_name(ULY_OPT_ATTN_FWD)));
    sim_json_add(o, "ops", ops);
    sim_json_add(o, "mfu_peak", cJSON_CreateString("mfu and hfu against the bf16 dense peak; mfu_fp8 against the fp8"));
    sim_json_add(wo, "fp8", o);
}

void sim_fp8_json_time(cJSON *st, const uly_workload *w, const uly_cluster *cl, const uly_timing *t, int runs)
{
    if (w->dtype != ULY_FP8) return;
    sim_json_add(st, "mfu_fp8", runs ? sim_json_num(uly_mfu_at(t, cl->gpu.peak_flops[ULY_FP8])) : cJSON_CreateNull());
}
