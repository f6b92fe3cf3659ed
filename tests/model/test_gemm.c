/* GEMMs priced by shape (model/gemm.c; docs/model.md, "Compute costs"), the
 * sustained clock, and the attention curves' trend past their last point.
 * Every expectation is worked out here by hand from the written formula:
 *   R_sm = peak x frac x clock / SMs; a wave = one tile's 2 Tm Tn k FLOPs at
 *   R_sm; t = latency + max(waves x wave, operand bytes / B) + output bytes / B.
 * The mutants each check was run against are named beside it. */
#include "fixtures.h"

/* An H100 SXM5 as the dgx-h100 preset describes it (132 SMs, 989 TFLOP/s
 * bf16 at 1830 MHz, 0.803 of it at best, 128 x 128 tiles, 1.8 us fill,
 * 3350 GB/s at 0.9). */
static uly_gpu h100(void)
{
    uly_gpu g;
    memset(&g, 0, sizeof g);
    snprintf(g.name, sizeof g.name, "h100");
    g.peak_flops[ULY_BF16] = g.peak_flops[ULY_FP16] = 989e12;
    g.peak_flops[ULY_FP32] = 67e12;
    g.hbm_bytes = 80e9;
    g.hbm_bw_Bps = 3350e9;
    g.mem_eff = 0.9;
    g.sm_count = 132;
    g.gemm_peak_frac = 0.803;
    g.gemm_tile_m = g.gemm_tile_n = 128;
    g.gemm_latency_s = 1.8e-6;
    g.boost_clock_hz = 1830e6;
    return g;
}

/* the same GPU with memory so fast that bytes cost nothing and no fill:
 * the waves alone */
static uly_gpu h100_math_only(void)
{
    uly_gpu g = h100();
    g.hbm_bw_Bps = 1e30;
    g.gemm_latency_s = 0;
    return g;
}

static const double R_SM = 989e12 * 0.803 / 132.0; /* one SM's FLOP/s */
static const double B_HBM = 3350e9 * 0.9;          /* achievable HBM bytes/s */

static double gemm(const uly_gpu *g, double b, double m, double n, double k)
{
    uly_gemm_rates r;
    uly_gemm_rates_init(&r, g, ULY_BF16);
    return uly_gemm_time_s(&r, b, m, n, k);
}

/* Wave quantization at one tile row over 132 SMs: 128 x (132 x 128) is 132
 * tiles, one wave; one more tile column (133 tiles, whether a whole tile or
 * a single extra column of the output) is a second wave, twice the time.
 * Mutant tried: waves = tiles / SMs without the ceiling (133/132 the time,
 * not 2): fails; tiles without the ceiling of n / Tn (88 x 1.5 = 132
 * tiles, one wave, for the 192-column case): fails. */
static void test_wave_quantization(void)
{
    const uly_gpu g = h100_math_only();
    const double k = 4096;
    const double wave = 2.0 * 128 * 128 * k / R_SM; /* one tile over all of k, on one SM */
    const double t132 = gemm(&g, 1, 128, 132 * 128, k);
    const double t133 = gemm(&g, 1, 128, 133 * 128, k);
    const double t132p1 = gemm(&g, 1, 128, 132 * 128 + 1, k);
    printf("one tile row: 132 tiles %.2f us, 133 tiles %.2f us, 132 tiles + 1 column %.2f us (a wave %.2f us)\n",
           t132 * 1e6, t133 * 1e6, t132p1 * 1e6, wave * 1e6);
    CHECK(fx_close(t132, wave, 1e-12), "132 tiles on 132 SMs: one wave %g s, got %g", wave, t132);
    CHECK(fx_close(t133, 2 * wave, 1e-12), "133 tiles: two waves %g s, got %g", 2 * wave, t133);
    CHECK(fx_close(t132p1, 2 * wave, 1e-12), "one output column past 132 tiles: a 133rd tile, two waves; got %g",
          t132p1);
    /* tile quantization: 192 output columns are two 128-wide tile columns
     * (the second half empty), so 88 tile rows make 176 tiles, two waves,
     * where 88 x 1.5 = 132 tiles' worth of output would fit one */
    CHECK(fx_close(gemm(&g, 1, 88 * 128, 192, k), 2 * wave, 1e-12), "192 columns: two tile columns, two waves");
    /* a batch of 132 single tiles is one wave too; of 133, two */
    CHECK(fx_close(gemm(&g, 132, 128, 128, 256), 2.0 * 128 * 128 * 256 / R_SM, 1e-12), "batch of 132 tiles");
    CHECK(fx_close(gemm(&g, 133, 128, 128, 256), 2 * 2.0 * 128 * 128 * 256 / R_SM, 1e-12), "batch of 133 tiles");
}

/* The roofline of a skinny GEMM: one row (m = 1) against a 16896 x 16896
 * weight (132 tile columns, one wave, no split-K: the tiles fill the SMs)
 * reads the weight once, 2 x 16896^2 bytes, at the achievable HBM rate:
 * t = fill + max(one wave, operand bytes / B) + output bytes / B, and here
 * the bytes win. The flat 0.80 priced it at 2 m n k / (0.80 peak), a
 * thousand times less. Mutant tried: the loop at its FLOPs alone (no
 * operand bytes): 92 us against 191 us, fails. */
static void test_skinny_roofline(void)
{
    const uly_gpu g = h100();
    const double m = 1, n = 16896, k = 16896;
    const double read = 2.0 * (m * k + k * n) / B_HBM;
    const double wave = 2.0 * 128 * 128 * k / R_SM;
    const double write = 2.0 * m * n / B_HBM;
    const double want = 1.8e-6 + (read > wave ? read : wave) + write;
    const double got = gemm(&g, 1, m, n, k);
    const double flat = 2.0 * m * n * k / (0.80 * 989e12);
    printf("skinny 1 x %.0f x %.0f: %.1f us (operands %.1f us, one wave %.1f us); the flat 0.80 %.3f us\n", n, k,
           got * 1e6, read * 1e6, wave * 1e6, flat * 1e6);
    CHECK(read > wave, "the case is memory-bound: bytes %g s against a wave %g s", read, wave);
    CHECK(fx_close(got, want, 1e-12), "skinny GEMM: %g s, got %g", want, got);
}

/* The output is written after the loop, not under it (XLA's dot cost
 * model: main loop, then epilogue): 4096 x 4096 x 128 is 1024 tiles, 8
 * waves of 128 x 128 x 128 (5.6 us), its operands 2 MiB (0.7 us) and its
 * output 32 MiB (11.1 us): t = fill + max(waves, operands) + output, 18.5
 * us, not fill + max(waves, operands + output), 13.6. Mutant tried: the
 * output under the loop (the max of the two): fails. */
static void test_output_after_loop(void)
{
    const uly_gpu g = h100();
    const double waves = 8 * 2.0 * 128 * 128 * 128 / R_SM;
    const double read = 2.0 * (4096.0 * 128 + 128.0 * 4096) / B_HBM;
    const double write = 2.0 * 4096 * 4096 / B_HBM;
    const double want = 1.8e-6 + (waves > read ? waves : read) + write;
    const double got = gemm(&g, 1, 4096, 4096, 128);
    printf("4096 x 4096 x 128: %.2f us (waves %.2f, operands %.2f, output %.2f)\n", got * 1e6, waves * 1e6,
           read * 1e6, write * 1e6);
    CHECK(fx_close(got, want, 1e-12), "output after the loop: %g s, got %g", want, got);
}

/* The k loop's fill at small k: one 128 x 128 x 256 tile (too short a k to
 * split) costs the fill plus its wave, so a GEMM's efficiency rises with k
 * as the fill is paid once: 2 m n k / (t peak). Mutant tried: the fill
 * dropped: the time is the wave alone, fails. */
static void test_k_fill(void)
{
    uly_gpu g = h100_math_only();
    g.gemm_latency_s = 1.8e-6;
    const double wave = 2.0 * 128 * 128 * 256 / R_SM;
    const double got = gemm(&g, 1, 128, 128, 256);
    CHECK(fx_close(got, 1.8e-6 + wave, 1e-12), "fill + wave %g s, got %g", 1.8e-6 + wave, got);
    /* 132 tiles (one wave) at k = 256 and k = 4096: the fill's share falls
     * from 1.8 / (1.8 + 1.39) to 1.8 / (1.8 + 22.3) */
    const double e256 = 2.0 * 128 * 132 * 128 * 256 / (gemm(&g, 1, 128, 132 * 128, 256) * 989e12);
    const double e4k = 2.0 * 128 * 132 * 128 * 4096 / (gemm(&g, 1, 128, 132 * 128, 4096) * 989e12);
    const double w256 = 0.803 * (2.0 * 128 * 128 * 256 / R_SM) / (1.8e-6 + 2.0 * 128 * 128 * 256 / R_SM);
    const double w4k = 0.803 * (2.0 * 128 * 128 * 4096 / R_SM) / (1.8e-6 + 2.0 * 128 * 128 * 4096 / R_SM);
    printf("k fill: one wave at k 256 %.3f of peak, at k 4096 %.3f\n", e256, e4k);
    CHECK(fx_close(e256, w256, 1e-9) && fx_close(e4k, w4k, 1e-9), "efficiency %g and %g, want %g and %g", e256, e4k,
          w256, w4k);
}

/* Split-K: one 128 x 128 output tile over k = 8192 leaves 131 SMs idle;
 * the k loop splits in two while the splits still fit the SMs and keep
 * 256 of k each: 1, 2, ..., 32 (32 x 256 = 8192). With memory free the
 * 32-way split wins: a 32nd of the wave. With memory, each split s writes
 * and reads back fp32 partial sums (2 x 4 s bytes per output element) and
 * the fastest split is taken. Mutant tried: no split: 32 times the loop,
 * fails; the partial sums free: fails. */
static void test_split_k(void)
{
    const uly_gpu z = h100_math_only();
    CHECK(fx_close(gemm(&z, 1, 128, 128, 8192), 2.0 * 128 * 128 * 256 / R_SM, 1e-12), "split 32 ways, memory free");
    uly_gpu g = h100();
    g.gemm_latency_s = 0;
    const double read = 2.0 * (128.0 * 8192 + 8192.0 * 128) / B_HBM;
    double want = INFINITY;
    for (int s = 1; s <= 32; s *= 2) {
        const double loop = 2.0 * 128 * 128 * (8192.0 / s) / R_SM;
        const double write = (2.0 + (s > 1 ? 2 * 4.0 * s : 0)) * 128 * 128 / B_HBM;
        const double t = (loop > read ? loop : read) + write;
        if (t < want) want = t;
    }
    const double got = gemm(&g, 1, 128, 128, 8192);
    CHECK(fx_close(got, want, 1e-12), "the fastest split with memory: %g s, got %g", want, got);
    /* k = 511 cannot split (two splits would hold 255.5 each) */
    CHECK(fx_close(gemm(&z, 1, 128, 128, 511), 2.0 * 128 * 128 * 511 / R_SM, 1e-12), "k 511 unsplit");
}

/* A plan of one op on a GPU priced by shape: its priced time. */
static double one_op(const uly_cluster *c, const uly_op *op)
{
    static uly_plan p;
    static uly_result r;
    memset(&p, 0, sizeof p);
    uly_layout_init(&p.layout, ULY_STRAT_ULYSSES, 1, 1, 1, 1);
    p.stage_layers = 1;
    p.micro_steps = 1;
    p.vpp = 1;
    p.n_ops = 1;
    p.ops[0] = *op;
    uly_model m = fx_gpt7b();
    uly_workload w = fx_work(4096);
    if (uly_plan_price(&m, &w, c, &p, &r) != ULY_OK) return -1;
    return r.op_time_s[0];
}

static uly_op gemm_op(uly_phase ph, int recompute, double m, double n, double k)
{
    uly_op o;
    memset(&o, 0, sizeof o);
    o.kind = ULY_OP_GEMM;
    o.type = ULY_OPT_MLP_UP;
    o.phase = ph;
    o.recompute = (uint8_t)recompute;
    o.overlaps = ULY_OVERLAP_NONE;
    o.crit_factor = 1;
    o.steps = 1;
    o.flops = 2 * m * n * k * (ph == ULY_PHASE_BWD && !recompute ? 2 : 1);
    o.gemm_batch = 1, o.gemm_m = m, o.gemm_n = n, o.gemm_k = k;
    return o;
}

/* A backward GEMM op runs its input gradient (m x n)(n x k) and its weight
 * gradient (k x m)(m x n): for m = 16896 tokens and n = k = 128, the input
 * gradient is 132 tiles (one wave over n = 128) and the weight gradient one
 * tile whose k = 16896 splits 64 ways (264 each; 128 splits would hold
 * 132): 2 fills + 2 x 128 x 128 x (128 + 264) / R_SM with memory free. Its
 * recompute copy is the forward. Mutant tried: the backward priced as twice
 * the forward shape: 2 x (fill + 1 wave), fails. */
static void test_backward_shapes(void)
{
    uly_cluster c = fx_unit(1);
    c.gpu = h100_math_only();
    c.gpu.gemm_latency_s = 1.8e-6;
    const double m = 16896, n = 128, k = 128;
    const double fwd = 1.8e-6 + 2.0 * 128 * 128 * 128 / R_SM;
    const double bwd = 2 * 1.8e-6 + 2.0 * 128 * 128 * (128 + 264) / R_SM;
    uly_op o = gemm_op(ULY_PHASE_FWD, 0, m, n, k);
    CHECK(fx_close(one_op(&c, &o), fwd, 1e-12), "forward %g s, got %g", fwd, one_op(&c, &o));
    o = gemm_op(ULY_PHASE_BWD, 0, m, n, k);
    CHECK(fx_close(one_op(&c, &o), bwd, 1e-12), "backward %g s, got %g", bwd, one_op(&c, &o));
    o = gemm_op(ULY_PHASE_BWD, 1, m, n, k);
    CHECK(fx_close(one_op(&c, &o), fwd, 1e-12), "recompute = forward %g s, got %g", fwd, one_op(&c, &o));
    /* crit_factor scales it */
    o = gemm_op(ULY_PHASE_FWD, 0, m, n, k);
    o.crit_factor = 1.5;
    CHECK(fx_close(one_op(&c, &o), 1.5 * fwd, 1e-12), "critical rank");
}

/* The sustained clock: 1500 of 1830 MHz runs tensor work at 1500/1830 of
 * its rate: a GEMM's waves and a flash attention op take 1830/1500 the
 * time; an element-wise op's bytes do not. Mutant tried: the scale left
 * out of the GEMM rates (and, separately, of attention): fails. */
static void test_sustained_clock(void)
{
    uly_cluster c = fx_unit(1);
    c.gpu = h100_math_only();
    c.gpu.attn_eff[1][1].n = 1;
    c.gpu.attn_eff[1][1].x[0] = 4096;
    c.gpu.attn_eff[1][1].eff[0] = 0.3;
    uly_cluster s = c;
    s.gpu.sustained_clock_hz = 1500e6;
    char why[256];
    uly_cluster checked = s;
    checked.gpu.hbm_bw_Bps = 3350e9; /* a real HBM rate: the check bounds it */
    CHECK(uly_cluster_check(&checked, why, sizeof why) == ULY_OK, "%s", why);
    CHECK(fx_close(uly_gpu_clock_scale(&s.gpu), 1500.0 / 1830.0, 1e-15), "clock scale");
    uly_op o = gemm_op(ULY_PHASE_FWD, 0, 4096, 4096, 4096);
    CHECK(fx_close(one_op(&s, &o), one_op(&c, &o) * 1830.0 / 1500.0, 1e-12), "GEMM at the sustained clock");
    uly_op a;
    memset(&a, 0, sizeof a);
    a.kind = ULY_OP_ATTN, a.type = ULY_OPT_ATTN_FWD, a.phase = ULY_PHASE_FWD, a.flash = 1;
    a.overlaps = ULY_OVERLAP_NONE, a.crit_factor = 1, a.steps = 1, a.flops = 1e12, a.eff_size = 4096;
    const double at = 1e12 / (989e12 * 0.3);
    CHECK(fx_close(one_op(&c, &a), at, 1e-12), "attention at boost %g, got %g", at, one_op(&c, &a));
    CHECK(fx_close(one_op(&s, &a), at * 1830.0 / 1500.0, 1e-12), "attention at the sustained clock");
    uly_op e;
    memset(&e, 0, sizeof e);
    e.kind = ULY_OP_ELEM, e.type = ULY_OPT_LN1, e.overlaps = ULY_OVERLAP_NONE, e.crit_factor = 1, e.steps = 1;
    e.bytes_touched = 1e9;
    s.gpu.hbm_bw_Bps = 1e12;
    CHECK(fx_close(one_op(&s, &e), 1e9 / (1e12 * 0.9), 1e-12), "bytes do not follow the clock");
    /* a sustained clock needs the boost clock it is a fraction of */
    checked.gpu.boost_clock_hz = 0;
    CHECK(uly_cluster_check(&checked, why, sizeof why) == ULY_EINVAL, "sustained without boost refused");
}

/* The attention curve past its last point, on the H100 causal d128
 * FlashAttention-2 points: 1/e = a + b/x through (8192, 0.311) and
 * (16384, 0.332): b = (1/0.311 - 1/0.332) / (1/8192 - 1/16384), a =
 * 1/0.332 - b/16384; at 64K, 1/(a + b/65536), towards 1/a = 0.356. Inside
 * the points and on a falling last pair it is the clamped curve. A GPU
 * cluster prices an attention block past the points on the trend, a CPU
 * profile at the last point. Mutant tried: the trend replaced by the clamp
 * (uly_curve_eval): fails; the GPU plan on the clamp: fails. */
static void test_attention_trend(void)
{
    uly_curve c = {.n = 6, .x = {512, 1024, 2048, 4096, 8192, 16384}, .eff = {0.165, 0.223, 0.268, 0.297, 0.311, 0.332}};
    const double b = (1 / 0.311 - 1 / 0.332) / (1.0 / 8192 - 1.0 / 16384);
    const double a = 1 / 0.332 - b / 16384;
    const double want = 1 / (a + b / 65536);
    const double got = uly_curve_eval_trend(&c, 65536);
    printf("attention causal d128 at 64K: %.4f (last point 0.332, asymptote %.4f)\n", got, 1 / a);
    CHECK(fx_close(got, want, 1e-12), "trend at 64K %g, got %g", want, got);
    CHECK(want > 0.332 && want < 1 / a, "between the last point and the asymptote");
    CHECK(uly_curve_eval_trend(&c, 3000) == uly_curve_eval(&c, 3000), "inside: the curve");
    CHECK(uly_curve_eval_trend(&c, 16384) == 0.332, "at the last point");
    uly_curve f = {.n = 2, .x = {1024, 2048}, .eff = {0.5, 0.4}};
    CHECK(uly_curve_eval_trend(&f, 1e6) == 0.4, "a falling last pair stays at its last point");
    uly_curve steep = {.n = 2, .x = {1024, 2048}, .eff = {0.1, 0.9}};
    CHECK(uly_curve_eval_trend(&steep, 1e9) <= 1.0, "never past the peak");

    uly_cluster gpu = fx_unit(1);
    gpu.gpu = h100();
    gpu.gpu.attn_eff[1][1] = c;
    uly_op o;
    memset(&o, 0, sizeof o);
    o.kind = ULY_OP_ATTN, o.type = ULY_OPT_ATTN_FWD, o.phase = ULY_PHASE_FWD, o.flash = 1;
    o.overlaps = ULY_OVERLAP_NONE, o.crit_factor = 1, o.steps = 1, o.flops = 1e12, o.eff_size = 65536;
    CHECK(fx_close(one_op(&gpu, &o), 1e12 / (989e12 * want), 1e-12), "GPU: the trend");
    uly_cluster cpu = gpu;
    cpu.gpu.sm_count = 0;
    cpu.gpu.gemm_eff.n = 1, cpu.gpu.gemm_eff.x[0] = 1, cpu.gpu.gemm_eff.eff[0] = 1;
    CHECK(fx_close(one_op(&cpu, &o), 1e12 / (989e12 * 0.332), 1e-12), "CPU profile: the last point");
}

/* Materialised attention on a GPU: its two score GEMMs by shape, QK^T
 * (q x d)(d x kv) and PV (q x kv)(kv x d), batch b heads: 32 heads of
 * 4096 x 4096 x 128: QK^T is 32 x 32 x 32 = 32768 tiles, 249 waves (248.2),
 * over k = 128; PV 32 x 32 x 1 = 1024 tiles, 8 waves (7.76) over k = 4096;
 * with memory free, 2 fills + (249 x 128 + 8 x 4096) 2 x 128 x 128 / R_SM,
 * plus the element-wise passes. Mutant tried: one GEMM of both FLOPs at the
 * achievable fraction (no shapes): fails. */
static void test_materialised(void)
{
    uly_cluster c = fx_unit(1);
    c.gpu = h100_math_only();
    c.gpu.gemm_latency_s = 1.8e-6;
    uly_op o;
    memset(&o, 0, sizeof o);
    o.kind = ULY_OP_ATTN, o.type = ULY_OPT_ATTN_FWD, o.phase = ULY_PHASE_FWD, o.flash = 0;
    o.overlaps = ULY_OVERLAP_NONE, o.crit_factor = 1, o.steps = 1;
    o.gemm_batch = 32, o.gemm_m = 4096, o.gemm_n = 4096, o.gemm_k = 128;
    o.flops = 4.0 * 32 * 4096 * 4096 * 128;
    const double want = 2 * 1.8e-6 + (249.0 * 128 + 8.0 * 4096) * 2 * 128 * 128 / R_SM;
    CHECK(fx_close(one_op(&c, &o), want, 1e-12), "materialised: %g s, got %g", want, one_op(&c, &o));
}

/* The flat 0.80 and the CPU path: a cluster without SMs keeps its curve
 * (flops / (peak x gemm_eff), at least its bytes). */
static void test_curve_path(void)
{
    uly_cluster c = fx_a100(1);
    uly_op o = gemm_op(ULY_PHASE_FWD, 0, 4096, 4096, 4096);
    o.eff_size = 4096.0 * 4096 * 4096;
    o.bytes_touched = 2.0 * 3 * 4096 * 4096;
    const double want = o.flops / (312e12 * 0.8);
    CHECK(fx_close(one_op(&c, &o), want, 1e-12), "curve: %g s, got %g", want, one_op(&c, &o));
}

int main(void)
{
    test_wave_quantization();
    test_skinny_roofline();
    test_output_after_loop();
    test_k_fill();
    test_split_k();
    test_backward_shapes();
    test_sustained_clock();
    test_attention_trend();
    test_materialised();
    test_curve_path();
    FX_DONE();
}
