/* selftest.c: ulygpu --self-test-host, the parts of ulygpu and of the
 * library's host side that need no GPU, run by ctest everywhere:
 *   - bf16/fp16 rounding on the host (what the checks feed the CPU
 *     reference) on chosen values and on every 16-bit pattern;
 *   - the trace's JSON escaping;
 *   - the plans of the plan section build on the preset, are feasible, and
 *     every GEMM op maps to m, n, k whose FLOPs equal the plan's, and each
 *     has the attention ops the GPU section runs. */
#include <math.h>
#include <string.h>

#include "ulygpu.h"

static int fails;

static void expect(int ok, const char *what)
{
    if (!ok) {
        fails++;
        printf("  FAIL %s\n", what);
    }
}

static void conversions(void)
{
    struct {
        float x;
        kern_cuda_dtype t;
        uint16_t bits;
    } cases[] = {
        {1.0f, KERN_CUDA_BF16, 0x3f80},
        {-2.5f, KERN_CUDA_BF16, 0xc020},
        {1.00390625f, KERN_CUDA_BF16, 0x3f80},  /* 1 + 2^-8: a tie, to even */
        {1.01171875f, KERN_CUDA_BF16, 0x3f82},  /* 1 + 3 2^-8: a tie, to even (up) */
        {1.0f, KERN_CUDA_FP16, 0x3c00},
        {65504.0f, KERN_CUDA_FP16, 0x7bff},
        {65520.0f, KERN_CUDA_FP16, 0x7c00},     /* rounds past the largest finite: inf */
        {5.9604644775390625e-08f, KERN_CUDA_FP16, 0x0001}, /* 2^-24, smallest subnormal */
        {2.98023223876953125e-08f, KERN_CUDA_FP16, 0x0000}, /* 2^-25: a tie, to even (0) */
        {8.94069671630859375e-08f, KERN_CUDA_FP16, 0x0002}, /* 1.5 x 2^-24: a tie, to even (2) */
        {6.103515625e-05f, KERN_CUDA_FP16, 0x0400},        /* 2^-14, smallest normal */
        {-0.333333343f, KERN_CUDA_FP16, 0xb555},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const uint16_t b = kern_cuda_host_from_f32(cases[i].x, cases[i].t);
        char w[120];
        snprintf(w, sizeof w, "%s(%.9g) = 0x%04x, want 0x%04x", kern_cuda_dtype_name(cases[i].t), cases[i].x, b,
                 cases[i].bits);
        expect(b == cases[i].bits, w);
    }
    expect(isnan(kern_cuda_host_to_f32(kern_cuda_host_from_f32(NAN, KERN_CUDA_BF16), KERN_CUDA_BF16)), "bf16 NaN");
    expect(isnan(kern_cuda_host_to_f32(kern_cuda_host_from_f32(NAN, KERN_CUDA_FP16), KERN_CUDA_FP16)), "fp16 NaN");
    /* every pattern that is a number survives the round trip */
    int bad = 0;
    for (int t = 0; t < 2; t++)
        for (uint32_t b = 0; b < 65536; b++) {
            const kern_cuda_dtype dt = t ? KERN_CUDA_FP16 : KERN_CUDA_BF16;
            const float f = kern_cuda_host_to_f32((uint16_t)b, dt);
            if (isnan(f)) continue;
            if (kern_cuda_host_from_f32(f, dt) != (uint16_t)b) bad++;
        }
    expect(bad == 0, "every bf16 and fp16 number round-trips through float");
}

static void json(void)
{
    char out[64];
    ug_json_escape("a\"b\\c\nd", out, sizeof out);
    expect(!strcmp(out, "a\\\"b\\\\c\\u000ad"), "JSON escaping");
    ug_json j;
    ug_j_begin(&j);
    ug_j_str(&j, "k", "v");
    ug_j_num(&j, "x", 1.5);
    ug_j_num(&j, "n", NAN);
    ug_j_bool(&j, "b", 1);
    expect(!strcmp(ug_j_end(&j), "{\"k\":\"v\",\"x\":1.5,\"n\":null,\"b\":true}"), "JSON object");
    ug_j_free(&j);
}

static void plans(ug_ctx *c)
{
    const struct {
        uly_strategy_id s;
        int64_t u, r, seq;
        uly_split split;
    } ps[] = {
        {ULY_STRAT_ULYSSES, 1, 1, 16384, ULY_SPLIT_ZIGZAG},    {ULY_STRAT_ULYSSES, 8, 1, 65536, ULY_SPLIT_ZIGZAG},
        {ULY_STRAT_RING, 1, 8, 65536, ULY_SPLIT_ZIGZAG},       {ULY_STRAT_RING, 1, 8, 65536, ULY_SPLIT_CONTIGUOUS},
        {ULY_STRAT_ULYSSES, 1, 1, 4096, ULY_SPLIT_ZIGZAG},     {ULY_STRAT_ULYSSES, 8, 1, 8192, ULY_SPLIT_ZIGZAG},
        {ULY_STRAT_RING, 1, 8, 8192, ULY_SPLIT_ZIGZAG},        {ULY_STRAT_RING, 1, 8, 8192, ULY_SPLIT_CONTIGUOUS},
    };
    static uly_plan plan;
    static uly_result res;
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        uly_workload w;
        memset(&w, 0, sizeof w);
        w.seq = ps[i].seq;
        w.micro_batch = 1;
        w.dtype = ULY_BF16;
        w.causal = 1;
        w.flash = 1;
        w.recompute = ULY_RECOMPUTE_FULL;
        w.zero_stage = 3;
        w.split = ps[i].split;
        uly_layout l;
        uly_layout_init(&l, ps[i].s, ps[i].u, ps[i].r, 1, 1);
        uly_reason rs[ULY_MAX_REASONS];
        int nr = 0;
        char w2[160];
        snprintf(w2, sizeof w2, "plan %s u=%lld r=%lld N=%lld builds and prices", uly_strategy_get(ps[i].s)->name,
                 (long long)ps[i].u, (long long)ps[i].r, (long long)ps[i].seq);
        const int ok = uly_plan_build(&c->model, &w, &c->cluster, &l, &plan, rs, &nr) == ULY_OK &&
                       uly_plan_price(&c->model, &w, &c->cluster, &plan, &res) == ULY_OK;
        expect(ok, w2);
        if (!ok) continue;
        int fatal = 0, gemms = 0, attn_f = 0, attn_b = 0;
        for (int k = 0; k < nr; k++) fatal |= rs[k].fatal;
        snprintf(w2, sizeof w2, "plan %zu is feasible", i);
        expect(!fatal, w2);
        for (int k = 0; k < plan.n_ops; k++) {
            const uly_op *o = &plan.ops[k];
            if (o->kind == ULY_OP_GEMM) {
                ug_gemm_shape s;
                snprintf(w2, sizeof w2, "plan %zu op %d %s: GEMM shape derived with the plan's FLOPs", i, k, uly_op_type_name(o->type));
                expect(ug_gemm_shape_of(&c->model, &w, &plan, o, &s) == 1, w2);
                gemms++;
            }
            if (o->kind == ULY_OP_ATTN && o->flash) {
                attn_f += o->type == ULY_OPT_ATTN_FWD;
                attn_b += o->type == ULY_OPT_ATTN_BWD;
            }
            if (o->kind == ULY_OP_GEMM || o->kind == ULY_OP_ATTN) {
                snprintf(w2, sizeof w2, "plan %zu op %d %s: a positive predicted time", i, k, uly_op_type_name(o->type));
                expect(res.op_time_s[k] > 0 && isfinite(res.op_time_s[k]), w2);
            }
        }
        snprintf(w2, sizeof w2, "plan %zu has GEMM ops (%d), a flash attention forward and backward", i, gemms);
        expect(gemms >= 10 && attn_f >= 1 && attn_b == 1, w2);
        /* ring chunks divide evenly (the GPU section splits N into 2r chunks for zigzag) */
        if (ps[i].s == ULY_STRAT_RING)
            expect(ps[i].seq % (2 * ps[i].r) == 0, "ring sequence divides into 2r chunks");
    }
}

static void tolerances(void)
{
    expect(ug_tol_o(KERN_CUDA_BF16) > ug_tol_o(KERN_CUDA_FP16), "bf16 forward tolerance above fp16's");
    expect(ug_tol_grad(KERN_CUDA_BF16) > ug_tol_grad(KERN_CUDA_FP16), "bf16 gradient tolerance above fp16's");
    expect(strlen(ug_tol_o_reason(KERN_CUDA_BF16)) > 20 && strlen(ug_tol_grad_reason(KERN_CUDA_FP16)) > 20,
           "every tolerance has its reason");
}

int ug_self_test_host(ug_ctx *c)
{
    printf("ulygpu --self-test-host: cluster %s, model %s\n", c->cluster.name, c->model.name);
    conversions();
    json();
    plans(c);
    tolerances();
    printf("ulygpu --self-test-host: %s\n", fails ? "FAIL" : "ok");
    return fails ? UG_EXIT_FAIL : 0;
}
