/* Recompute modes and activation offload (docs/model.md, "Recompute modes"
 * and "Activation offload"): what each keeps of a layer, what it runs
 * again, and what offload moves over the host link. GPT 7B (L 32, h 4096,
 * a = k = 32, f 16384, GELU) on Ulysses 8, 32K tokens, flash attention,
 * bf16: a rank holds T = 4096 tokens, and a layer keeps (Korthikanti et al.
 * 2022's terms, flash) the norms' inputs 2D, the QKV input D, Q K V 3D,
 * the log-sum-exp 4 a T bytes, attention's output D, the MLP input D, the
 * activation's input 4D and output 4D (D = 2 T h bytes): 16 D + lse. Every
 * expectation is that arithmetic, written out here. */
#include "fixtures.h"

static uly_plan plan;

static int eval(const uly_model *m, const uly_workload *w, const uly_cluster *c, uly_result *r)
{
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 8, 1, 1, 1);
    return uly_evaluate(m, w, c, &l, &plan, r) == ULY_OK;
}

int main(void)
{
    const uly_model m = fx_gpt7b();
    uly_cluster c = fx_a100(1);
    uly_workload w = fx_work(32768);
    w.zero_stage = 0;
    uly_result *none = calloc(1, sizeof *none), *full = calloc(1, sizeof *full), *r = calloc(1, sizeof *r);
    if (!none || !full || !r) return 1;
    const double T = 4096.0, h = 4096.0, D = 2.0 * T * h, lse = 4.0 * 32.0 * T, layer = 16.0 * D + lse;
    /* FLOPs of one layer's forward on this rank: GEMMs 2 T (4 h^2 + 2 h f),
     * causal flash attention for 32 / 8 heads over N: 4 x 4 N^2 d / 2 */
    const double N = 32768.0, G = 2.0 * T * (4.0 * h * h + 2.0 * h * 16384.0), A = 4.0 * 4.0 * N * N * 128.0 / 2.0;
    const double G_mlp = 2.0 * T * 2.0 * h * 16384.0, G_out = 2.0 * T * h * h;
    const double gpus = 8.0; /* one micro-batch a step, 8 ranks */

    w.recompute = ULY_RECOMPUTE_NONE;
    CHECK(eval(&m, &w, &c, none), "none");
    CHECK(fx_close(none->mem.term_bytes[ULY_MEM_ACTIV], 32.0 * layer, 1e-12), "none: activations %.6g, want %.6g",
          none->mem.term_bytes[ULY_MEM_ACTIV], 32.0 * layer);
    w.recompute = ULY_RECOMPUTE_FULL;
    CHECK(eval(&m, &w, &c, full), "full");
    CHECK(fx_close(full->mem.term_bytes[ULY_MEM_ACTIV], 32.0 * D, 1e-12), "full: activations %.6g, want %.6g",
          full->mem.term_bytes[ULY_MEM_ACTIV], 32.0 * D);
    CHECK(fx_close(full->time.hw_flops - none->time.hw_flops, 32.0 * (G + A) * gpus, 1e-9),
          "full: recompute FLOPs %.6g, want %.6g", full->time.hw_flops - none->time.hw_flops, 32.0 * (G + A) * gpus);

    /* Megatron-LM's selective modules */
    const struct {
        uint32_t mods;
        double keep, flops; /* a layer's kept bytes; its recompute FLOPs */
        const char *what;
    } sel[] = {
        {1u << ULY_RMOD_CORE_ATTN, 16.0 * D + lse, 0, "core_attn (flash: nothing to drop)"},
        {1u << ULY_RMOD_LAYERNORM, 14.0 * D + lse, 0, "layernorm: the two norms' outputs"},
        {1u << ULY_RMOD_MLP, 8.0 * D + lse, 2.0 * T * 2.0 * 4096.0 * 16384.0, "mlp: its two f-wide tensors"},
        {(1u << ULY_RMOD_LAYERNORM) | (1u << ULY_RMOD_MLP), 6.0 * D + lse, 2.0 * T * 2.0 * 4096.0 * 16384.0,
         "layernorm and mlp"},
    };
    w.recompute = ULY_RECOMPUTE_SELECTIVE;
    for (size_t i = 0; i < sizeof sel / sizeof sel[0]; i++) {
        w.recompute_modules = sel[i].mods;
        CHECK(eval(&m, &w, &c, r), "selective %s", sel[i].what);
        CHECK(fx_close(r->mem.term_bytes[ULY_MEM_ACTIV], 32.0 * sel[i].keep, 1e-12), "%s: activations %.6g, want %.6g",
              sel[i].what, r->mem.term_bytes[ULY_MEM_ACTIV], 32.0 * sel[i].keep);
        CHECK(fx_close(r->time.hw_flops - none->time.hw_flops, 32.0 * sel[i].flops * gpus, 1e-9) ||
                  (sel[i].flops == 0 && r->time.hw_flops == none->time.hw_flops),
              "%s: recompute FLOPs %.6g, want %.6g", sel[i].what, r->time.hw_flops - none->time.hw_flops,
              32.0 * sel[i].flops * gpus);
    }
    CHECK(G_mlp == sel[2].flops, "the MLP's two GEMMs");
    w.recompute_modules = 1u << ULY_RMOD_MOE_ACT;
    char why[256];
    CHECK(uly_workload_check(&w, why, sizeof why) == ULY_EINVAL && strstr(why, "moe_act"), "moe_act accepted: %s", why);
    w.recompute_modules = 0;

    /* torchtitan's op-level policies: matmuls' and attention's outputs
     * saved, the norms' outputs and the activation's output dropped, the
     * output projection's and down projection's outputs added: 11 D; every
     * other matmul, the output projection's recomputed: 10 D, its GEMM again */
    w.recompute = ULY_RECOMPUTE_OPS;
    CHECK(eval(&m, &w, &c, r), "ops");
    CHECK(fx_close(r->mem.term_bytes[ULY_MEM_ACTIV], 32.0 * (11.0 * D + lse), 1e-12), "ops: activations %.6g, want %.6g",
          r->mem.term_bytes[ULY_MEM_ACTIV], 32.0 * (11.0 * D + lse));
    CHECK(r->time.hw_flops == none->time.hw_flops, "ops: FLOPs %.6g, want none's %.6g", r->time.hw_flops,
          none->time.hw_flops);
    CHECK(r->time.layer_bwd_s > none->time.layer_bwd_s, "ops: the norms and activation run again in backward");
    w.recompute = ULY_RECOMPUTE_OPS_HALF;
    CHECK(eval(&m, &w, &c, r), "ops-half");
    CHECK(fx_close(r->mem.term_bytes[ULY_MEM_ACTIV], 32.0 * (10.0 * D + lse), 1e-12),
          "ops-half: activations %.6g, want %.6g", r->mem.term_bytes[ULY_MEM_ACTIV], 32.0 * (10.0 * D + lse));
    CHECK(fx_close(r->time.hw_flops - none->time.hw_flops, 32.0 * G_out * gpus, 1e-9),
          "ops-half: recompute FLOPs %.6g, want %.6g", r->time.hw_flops - none->time.hw_flops, 32.0 * G_out * gpus);

    /* DistFlashAttn: checkpointed at attention's output, the layer's input,
     * the output and its log-sum-exp kept; the recompute skips attention */
    w.recompute = ULY_RECOMPUTE_ATTN_SKIP;
    CHECK(eval(&m, &w, &c, r), "attn-skip");
    CHECK(fx_close(r->mem.term_bytes[ULY_MEM_ACTIV], 32.0 * (2.0 * D + lse), 1e-12),
          "attn-skip: activations %.6g, want %.6g", r->mem.term_bytes[ULY_MEM_ACTIV], 32.0 * (2.0 * D + lse));
    CHECK(fx_close(r->time.hw_flops - none->time.hw_flops, 32.0 * G * gpus, 1e-9),
          "attn-skip: recompute FLOPs %.6g, want the GEMMs' %.6g", r->time.hw_flops - none->time.hw_flops,
          32.0 * G * gpus);
    CHECK(fx_close(r->mem.term_bytes[ULY_MEM_WORKING], full->mem.term_bytes[ULY_MEM_WORKING] - D - lse, 1e-12),
          "attn-skip: working set %.6g, want full's less the output and lse %.6g", r->mem.term_bytes[ULY_MEM_WORKING],
          full->mem.term_bytes[ULY_MEM_WORKING] - D - lse);

    /* Megatron-LM's methods of full recompute: uniform 4 keeps 32 / 4 chunk
     * inputs and rebuilds 4 layers at once (3 more layers' 16 D + lse than
     * one); block 8 recomputes 8 layers, the other 24 keep everything */
    w.recompute = ULY_RECOMPUTE_FULL;
    w.recompute_method = ULY_RMETHOD_UNIFORM;
    w.recompute_layers = 4;
    CHECK(eval(&m, &w, &c, r), "uniform 4");
    CHECK(fx_close(r->mem.term_bytes[ULY_MEM_ACTIV], 8.0 * D, 1e-12), "uniform: activations %.6g, want %.6g",
          r->mem.term_bytes[ULY_MEM_ACTIV], 8.0 * D);
    CHECK(fx_close(r->mem.term_bytes[ULY_MEM_WORKING] - full->mem.term_bytes[ULY_MEM_WORKING], 3.0 * layer, 1e-12),
          "uniform: working set %.6g over full's, want %.6g",
          r->mem.term_bytes[ULY_MEM_WORKING] - full->mem.term_bytes[ULY_MEM_WORKING], 3.0 * layer);
    CHECK(r->time.hw_flops == full->time.hw_flops, "uniform: every layer recomputed");
    w.recompute_method = ULY_RMETHOD_BLOCK;
    w.recompute_layers = 8;
    CHECK(eval(&m, &w, &c, r), "block 8");
    CHECK(fx_close(r->mem.term_bytes[ULY_MEM_ACTIV], 8.0 * D + 24.0 * layer, 1e-12), "block: activations %.6g, want %.6g",
          r->mem.term_bytes[ULY_MEM_ACTIV], 8.0 * D + 24.0 * layer);
    CHECK(fx_close(r->time.hw_flops - none->time.hw_flops, 8.0 * (G + A) * gpus, 1e-9),
          "block: recompute FLOPs %.6g, want 8 layers' %.6g", r->time.hw_flops - none->time.hw_flops,
          8.0 * (G + A) * gpus);
    {
        /* the recompute's critical path, 24 of 32 layers' taken off */
        double rc = 0;
        for (int i = 0; i < plan.n_ops; i++)
            if (plan.ops[i].recompute) rc += r->op_exposed_s[i];
        CHECK(rc > 0 && fx_close(r->time.layer_bwd_s, full->time.layer_bwd_s - 24.0 / 32.0 * rc, 1e-12),
              "block: layer backward %.6g s, want %.6g", r->time.layer_bwd_s, full->time.layer_bwd_s - 0.75 * rc);
    }
    w.recompute_method = ULY_RMETHOD_BLOCK;
    w.recompute_layers = 0;
    CHECK(uly_workload_check(&w, why, sizeof why) == ULY_EINVAL, "block without layers accepted");
    w.recompute = ULY_RECOMPUTE_SELECTIVE;
    w.recompute_layers = 2;
    CHECK(uly_workload_check(&w, why, sizeof why) == ULY_EINVAL, "block under selective accepted");
    w.recompute_method = ULY_RMETHOD_EVERY;
    w.recompute_layers = 0;

    /* activation offload of 16 of 32 layers over a 32 GB/s host link: 17
     * layers in HBM (one in transit); each offloaded layer's 16 D + lse go
     * out under the next layer's forward and back under a backward: what
     * outlasts them is exposed, half the layers' worth on the average layer */
    w.recompute = ULY_RECOMPUTE_NONE;
    w.offload_layers = 16;
    CHECK(eval(&m, &w, &c, r) && !r->feasible && fx_has_reason(r, ULY_R_OFFLOAD_NO_HOST_LINK, 1),
          "offload without a host link: feasible %d", r->feasible);
    c.gpu.host_link_bw_Bps = 32e9;
    CHECK(eval(&m, &w, &c, r), "offload 16");
    CHECK(fx_close(r->mem.term_bytes[ULY_MEM_ACTIV], 17.0 * layer, 1e-12), "offload: activations %.6g, want %.6g",
          r->mem.term_bytes[ULY_MEM_ACTIV], 17.0 * layer);
    const double xfer = layer / 32e9;
    const double ef = xfer > none->time.layer_fwd_s ? xfer - none->time.layer_fwd_s : 0;
    const double eb = xfer > none->time.layer_bwd_s ? xfer - none->time.layer_bwd_s : 0;
    CHECK(ef > 0, "this layer's offload outlasts its forward (%.6g s against %.6g s)", xfer, none->time.layer_fwd_s);
    CHECK(fx_close(r->time.layer_fwd_s, none->time.layer_fwd_s + 0.5 * ef, 1e-12) &&
              fx_close(r->time.layer_bwd_s, none->time.layer_bwd_s + 0.5 * eb, 1e-12),
          "offload: layer %.6g / %.6g s, want %.6g / %.6g", r->time.layer_fwd_s, r->time.layer_bwd_s,
          none->time.layer_fwd_s + 0.5 * ef, none->time.layer_bwd_s + 0.5 * eb);
    CHECK(r->time.step_s > none->time.step_s, "offload's exposed transfers cost time");
    w.recompute = ULY_RECOMPUTE_FULL;
    CHECK(uly_workload_check(&w, why, sizeof why) == ULY_EINVAL, "offload beside recompute accepted");
    free(none);
    free(full);
    free(r);
    FX_DONE();
}
