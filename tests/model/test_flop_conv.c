/* FLOP conventions (uly_flops_step) against counts worked out here: GEMM by
 * GEMM for Megatron-LM's num_floating_point_operations, the parameter count
 * summed matrix by matrix for PaLM's 6 P + 12 L h s, the paper's numbers for
 * Narayanan et al., and the model FLOPs a priced plan reports for ulysim. */
#include "fixtures.h"

static int close_to(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b); }

int main(void)
{
    /* Llama-3 8B: GQA (8 KV heads of 32) and SwiGLU, untied embeddings */
    const uly_model m = fx_llama3_8b();
    const double L = 32, h = 4096, a = 32, k = 8, d = 128, f = 14336, V = 128256, s = 8192, B = 16;
    uly_workload w = fx_work(8192);
    w.global_batch = 16;

    /* Megatron-LM: per token and layer, forward: Q and O projections
     * 2 h (a d) each, K and V 2 h (k d) each, Q K^T and A V 2 s (a d) each
     * (full s x s), the MLP's three h x f GEMMs; the logits 2 h V once; all
     * three times (forward, backward's data and weight gradients) */
    const double fwd_layer = 2 * h * a * d * 2 + 2 * h * k * d * 2 + 2 * s * a * d * 2 + 3 * 2 * h * f;
    const double mlm = 3 * B * s * (L * fwd_layer + 2 * h * V);
    const double got_mlm = uly_flops_step(ULY_FLOPS_MEGATRON_LM, &m, &w, B);
    CHECK(close_to(got_mlm, mlm), "megatron-lm: %.6e, want %.6e", got_mlm, mlm);

    /* PaLM: P summed matrix by matrix (Q, K, V, O; three MLP matrices; two
     * norm gains per layer; the final norm; input and output embeddings) */
    const double P = L * (h * a * d + 2 * h * k * d + a * d * h + 3 * h * f + 2 * h) + h + 2 * V * h;
    const double palm = B * s * (6 * P + 12 * L * h * s);
    const double got_palm = uly_flops_step(ULY_FLOPS_PALM, &m, &w, B);
    CHECK(close_to(got_palm, palm), "palm: %.6e, want %.6e", got_palm, palm);

    /* Narayanan et al. 2021 on GPT-3 175B (L 96, h 12288, V 51200), batch
     * 1536, s 2048, full recompute: 96 B s L h^2 (1 + s/6h + V/16Lh) */
    uly_model g = fx_model("gpt3", 96, 12288, 96, 96, 4 * 12288, 51200, 0);
    uly_workload wg = fx_work(2048);
    wg.recompute = ULY_RECOMPUTE_FULL;
    const double nar = 96.0 * 1536 * 2048 * 96 * 12288.0 * 12288.0 *
                       (1 + 2048 / (6.0 * 12288) + 51200 / (16.0 * 96 * 12288));
    const double got_nar = uly_flops_step(ULY_FLOPS_NARAYANAN, &g, &wg, 1536);
    CHECK(close_to(got_nar, nar), "narayanan: %.6e, want %.6e", got_nar, nar);
    /* without full recompute the forward is not run twice: 72 and V/(12 L h) */
    wg.recompute = ULY_RECOMPUTE_SELECTIVE;
    const double nar72 = 72.0 * 1536 * 2048 * 96 * 12288.0 * 12288.0 *
                         (1 + 2048 / (6.0 * 12288) + 51200 / (12.0 * 96 * 12288));
    CHECK(close_to(uly_flops_step(ULY_FLOPS_NARAYANAN, &g, &wg, 1536), nar72), "narayanan without full recompute");
    /* for this MHA GELU model with f = 4h, Megatron-LM's count is the 72
     * form (no recompute): 72 B s L h^2 (1 + s/6h + V/12Lh) */
    const double mlm72 = 72.0 * 1536 * 2048 * 96 * 12288.0 * 12288.0 *
                         (1 + 2048 / (6.0 * 12288) + 51200 / (12.0 * 96 * 12288));
    const double got_mlm72 = uly_flops_step(ULY_FLOPS_MEGATRON_LM, &g, &wg, 1536);
    CHECK(close_to(got_mlm72, mlm72), "megatron-lm GPT-3: %.6e, want %.6e", got_mlm72, mlm72);

    /* ulysim: the model FLOPs a priced plan reports, and by hand: causal
     * attention halved, 3 x (L (2 s P_layer_matrices + 2 s^2 a d) + 2 s h V) */
    uly_cluster c = fx_a100(64);
    c.gpu.hbm_bytes = 1e15;
    uly_workload wu = fx_work(8192);
    wu.global_batch = 8;
    uly_result r;
    CHECK(fx_eval(&m, &wu, &c, ULY_STRAT_ULYSSES, 8, 1, 1, 8, &r) == 0, "evaluate");
    const double got_u = uly_flops_step(ULY_FLOPS_ULYSIM, &m, &wu, 8);
    CHECK(close_to(got_u, r.time.model_flops), "ulysim: %.6e, the plan's %.6e", got_u, r.time.model_flops);
    const double Pm = h * a * d + 2 * h * k * d + a * d * h + 3 * h * f;
    const double byhand = 3 * 8 * (L * (2 * s * Pm + 0.5 * 4 * s * s * a * d) + 2 * s * h * V);
    CHECK(close_to(got_u, byhand), "ulysim: %.6e, by hand %.6e", got_u, byhand);

    /* names */
    for (int i = 0; i < ULY_FLOP_CONV_COUNT; i++)
        CHECK(uly_flop_conv_find(uly_flop_conv_name((uly_flop_conv)i)) == i, "name %d", i);
    CHECK(uly_flop_conv_find("megatron") == -1 && uly_flop_conv_name(ULY_FLOP_CONV_COUNT) == NULL, "unknown names");
    FX_DONE();
}
