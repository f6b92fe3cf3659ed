/* test_torch_trace: the torch.profiler trace reader (formats/torch_trace.c):
 * kernel names as the libraries print them into their categories; kernels
 * placed in the step that launched them, or by the GPU-side step windows;
 * kernels outside every step; bad traces refused with the file and event. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h" /* CHECK, FX_DONE */

#include "torch_trace.h"


static void test_classify(void)
{
    static const struct {
        tt_cat want;
        const char *collective, *name;
    } cases[] = {
        {TT_ALLGATHER, NULL, "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"},
        {TT_ALLREDUCE, NULL, "ncclKernel_AllReduce_RING_LL_Sum_bfloat16(ncclDevComm*, unsigned long, ncclWork*)"},
        {TT_REDUCE_SCATTER, NULL, "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"},
        {TT_SENDRECV, NULL, "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)"},
        /* an all-to-all runs as send/recv kernels: PyTorch's collective name tells */
        {TT_A2A, "all_to_allv", "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)"},
        {TT_A2A, NULL, "ncclKernel_AllToAll_RING_SIMPLE_Sum_int8_t"},
        {TT_ATTN_BWD, NULL, "void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128> >(Flash_bwd_params)"},
        {TT_ATTN_FWD, NULL, "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4> >(pytorch_flash::Flash_fwd_params)"},
        {TT_ATTN_BWD, NULL, "void cutlass::device_kernel<flash::FlashAttnBwdSm90<flash::CollectiveMainloopBwd<2, 1> > >(...)"},
        {TT_ATTN_FWD, NULL, "void cutlass::device_kernel<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwd<2, 1> > >(...)"},
        {TT_ATTN_FWD, NULL, "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<...>::Params)"},
        {TT_ATTN_BWD, NULL, "fmha_cutlassB_bf16_aligned_128x64_k128_sm80(PyTorchMemEffAttention::AttentionBackwardKernel<...>::Params)"},
        {TT_ATTN_BWD, NULL, "void fmha_bwd_dq_dk_dv_loop_kernel<FMHA_kernel_traits<256, 64, 16, 1, 8, 0x08u> >(FMHA_dgrad_params)"},
        {TT_ATTN_FWD, NULL, "void fmha_fwd_loop_kernel<FMHA_kernel_traits<256, 64, 16, 1, 4, 0x08u> >(FMHA_fprop_params)"},
        {TT_ATTN_FWD, NULL, "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0"},
        {TT_ATTN_BWD, NULL, "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_7_64x128x128_4x1x1_kernel0_0"},
        {TT_GEMM, NULL, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"},
        {TT_GEMM, NULL, "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_tn"},
        {TT_GEMM, NULL, "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTT"},
        {TT_GEMM, NULL, "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(Params)"},
        {TT_OTHER, NULL, "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >(int, ...)"},
        /* a collective name does not turn a compute kernel into communication */
        {TT_OTHER, "allreduce", "void at::native::vectorized_layer_norm_kernel<c10::BFloat16, float>(...)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tt_cat got = tt_classify(cases[i].name, cases[i].collective);
        CHECK(got == cases[i].want, "%.60s: %s, want %s", cases[i].name, tt_cat_name(got), tt_cat_name(cases[i].want));
    }
}

static tt_trace trace;
static char why[1024];

static int read_text(const char *text)
{
    why[0] = 0;
    return tt_read(text, strlen(text), "t.json", &trace, why, sizeof why);
}

#define STEP(n, ts, cat) "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"ProfilerStep#" #n "\",\"ts\":" #ts ",\"dur\":100},"
#define LAUNCH(c, ts) "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"ts\":" #ts ",\"dur\":2,\"args\":{\"correlation\":" #c "}},"
#define KERNEL(c, ts, dur, name) "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"correlation\":" #c "}},"
#define END "{\"ph\":\"M\",\"name\":\"process_name\",\"args\":{\"name\":\"x\"}}]}"

static void test_steps(void)
{
    /* CPU windows [100, 200] and [200, 300]: kernel 1 launched in the first
     * runs in the second's window; kernel 2 launched in the second; kernel
     * 3 launched before both; kernel 4 has no launch and runs in the second */
    CHECK(read_text("{\"traceEvents\":[" STEP(1, 100, "user_annotation") STEP(2, 200, "user_annotation")
                    LAUNCH(1, 150) KERNEL(1, 250, 30, "sm90_xmma_gemm_x") LAUNCH(2, 210) KERNEL(2, 290, 7, "flash_fwd_kernel")
                    LAUNCH(3, 50) KERNEL(3, 120, 11, "sm90_xmma_gemm_x") KERNEL(9, 260, 5, "elementwise") END) == 0,
          "%s", why);
    CHECK(trace.n_steps == 2 && !trace.gpu_windows && trace.steps[0].number == 1, "steps: %d", trace.n_steps);
    CHECK(trace.steps[0].cat_us[TT_GEMM] == 30 && trace.steps[0].kernels == 1, "step 1 gemm %g us, %d kernels (want 30, 1)",
          trace.steps[0].cat_us[TT_GEMM], trace.steps[0].kernels);
    CHECK(trace.steps[1].cat_us[TT_ATTN_FWD] == 7 && trace.steps[1].cat_us[TT_OTHER] == 5 &&
              trace.steps[1].cat_us[TT_GEMM] == 0,
          "step 2: attn_fwd %g other %g gemm %g (want 7, 5, 0)", trace.steps[1].cat_us[TT_ATTN_FWD],
          trace.steps[1].cat_us[TT_OTHER], trace.steps[1].cat_us[TT_GEMM]);
    CHECK(trace.n_kernels == 4 && trace.n_outside == 1 && trace.outside_us == 11, "kernels %lld, outside %lld (%g us)",
          (long long)trace.n_kernels, (long long)trace.n_outside, trace.outside_us);

    /* GPU-side windows win: kernel 1 (launched in CPU step 1) runs in GPU step 2 */
    CHECK(read_text("{\"traceEvents\":[" STEP(1, 100, "user_annotation") STEP(2, 200, "user_annotation")
                    STEP(1, 180, "gpu_user_annotation") STEP(2, 280, "gpu_user_annotation")
                    LAUNCH(1, 150) KERNEL(1, 300, 30, "sm90_xmma_gemm_x") END) == 0, "%s", why);
    CHECK(trace.gpu_windows && trace.steps[1].cat_us[TT_GEMM] == 30 && trace.steps[0].cat_us[TT_GEMM] == 0,
          "GPU windows: step 1 %g, step 2 %g (want 0, 30)", trace.steps[0].cat_us[TT_GEMM], trace.steps[1].cat_us[TT_GEMM]);
}

/* A GPU-side step annotation on stream (tid) t, of duration d. */
#define GSTEP(n, ts, d, t) "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"ProfilerStep#" #n "\",\"ts\":" #ts \
    ",\"dur\":" #d ",\"tid\":" #t "},"

static void expect_bad(const char *text, const char *want)
{
    int rc = read_text(text);
    CHECK(rc == 2 && strstr(why, want) && strstr(why, "t.json") && !strchr(why, '\n'), "want 2 and '%s': %d %s", want,
          rc, why);
}

static void test_bad(void)
{
    expect_bad("{\"traceEvents\": [", "t.json");
    expect_bad("[1, 2]", "t.json");
    expect_bad("{\"events\": []}", "no traceEvents array");
    /* a key twice: the lookup would take the first (empty) array and blame the trace */
    expect_bad("{\"traceEvents\":[],\"traceEvents\":[" STEP(1, 100, "user_annotation") KERNEL(1, 5, 5, "gemm") END,
               "field \"traceEvents\" appears twice");
    expect_bad("{\"traceEvents\":[" STEP(1, 100, "user_annotation") "{\"ph\":\"X\",\"ph\":\"X\"}," END,
               "field \"traceEvents[1].ph\" appears twice");
    expect_bad("{\"traceEvents\":[" KERNEL(1, 5, 5, "gemm") END, "no ProfilerStep#N annotation");
    expect_bad("{\"traceEvents\":[" STEP(1, 100, "user_annotation") END, "no GPU kernel");
    expect_bad("{\"traceEvents\":[" STEP(1, 100, "user_annotation") KERNEL(1, 5, -5, "gemm") END,
               "event 1: a kernel needs a name and a ts and dur in 0..1e15 us");
    /* finite, but a few of them add up to infinity */
    expect_bad("{\"traceEvents\":[" STEP(1, 100, "user_annotation") KERNEL(1, 5, 1.7e308, "gemm") END,
               "event 1: a kernel needs a name and a ts and dur in 0..1e15 us");
    {
        /* more steps than the reader holds: refused, not counted as outside every step */
        static char big[(TT_MAX_STEPS + 2) * 128 + 256];
        size_t o = (size_t)snprintf(big, sizeof big, "{\"traceEvents\":[");
        for (int i = 0; i <= TT_MAX_STEPS; i++)
            o += (size_t)snprintf(big + o, sizeof big - o,
                                  "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\",\"ts\":%d,"
                                  "\"dur\":100},", i, 200 * i);
        snprintf(big + o, sizeof big - o, "%s", KERNEL(1, 5, 5, "gemm") END);
        char want[128];
        snprintf(want, sizeof want, "more than %d CPU step annotations", TT_MAX_STEPS);
        expect_bad(big, want);
    }
    expect_bad("{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#x\",\"ts\":1,"
               "\"dur\":1}," END,
               "event 0 (ProfilerStep#x)");
}

/* The step rules (docs/torch-traces.md): N a whole number in 0..2^31-1, one
 * CPU annotation per step, a step's GPU annotations on several streams one
 * window, windows that do not overlap; a kernel's dur 0 or at least 1 ns. */
static void test_step_rules(void)
{
    /* a copy of a step's annotation was a 4th step, and moved the medians */
    expect_bad("{\"traceEvents\":[" STEP(1, 100, "user_annotation") STEP(2, 200, "user_annotation")
               STEP(2, 200, "user_annotation") KERNEL(1, 150, 5, "gemm") END,
               "event 2 (ProfilerStep#2): step 2 is annotated twice (first at event 1) (valid: one ProfilerStep#N per "
               "step, as prof.step() records them)");
    /* numbers strtoll took: clamped to 2^63-1, negative, signed, blank */
    static const char *const nums[] = {"99999999999999999999999", "-3", "+3", " 3", "2147483648", "3x"};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        char text[512], want[160];
        snprintf(text, sizeof text,
                 "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%s\",\"ts\":100,"
                 "\"dur\":100}," KERNEL(1, 150, 5, "gemm") END, nums[i]);
        snprintf(want, sizeof want, "event 0 (ProfilerStep#%s): the step number is not a whole number in "
                 "0..2147483647", nums[i]);
        expect_bad(text, want);
    }
    CHECK(read_text("{\"traceEvents\":[" STEP(2147483647, 100, "user_annotation") KERNEL(1, 150, 5, "gemm") END) == 0 &&
              trace.steps[0].number == 2147483647, "the largest step number: %s", why);
    /* a window moved over another: its kernels were dropped as outside the steps */
    expect_bad("{\"traceEvents\":[" STEP(1, 100, "user_annotation") STEP(2, 150, "user_annotation")
               KERNEL(1, 160, 5, "gemm") END,
               "event 1 (ProfilerStep#2): its CPU window 150.000..250.000 us overlaps step 1's 100.000..200.000 us "
               "(event 0) (valid: steps one after another");
    /* a step on two GPU streams (Kineto writes one annotation per stream):
     * one window, from the first start to the last end */
    CHECK(read_text("{\"traceEvents\":[" STEP(1, 100, "user_annotation") GSTEP(1, 180, 50, 7) GSTEP(1, 200, 60, 13)
                    GSTEP(2, 300, 50, 7) KERNEL(1, 255, 5, "gemm") KERNEL(2, 310, 5, "gemm") END) == 0,
          "a step on two streams: %s", why);
    CHECK(trace.n_steps == 2 && trace.steps[0].ts_us == 180 && trace.steps[0].dur_us == 80 &&
              trace.steps[0].cat_us[TT_GEMM] == 5 && trace.steps[1].cat_us[TT_GEMM] == 5 && trace.n_outside == 0,
          "two streams: %d steps, step 1 %g..+%g us, gemm %g and %g", trace.n_steps, trace.steps[0].ts_us,
          trace.steps[0].dur_us, trace.steps[0].cat_us[TT_GEMM], trace.steps[1].cat_us[TT_GEMM]);
    expect_bad("{\"traceEvents\":[" GSTEP(1, 180, 50, 7) GSTEP(1, 300, 50, 7) KERNEL(1, 190, 5, "gemm") END,
               "event 1 (ProfilerStep#1): step 1 is annotated twice on GPU stream 7 (first at event 0)");
    expect_bad("{\"traceEvents\":[" GSTEP(1, 180, 50, 7) GSTEP(2, 200, 50, 13) KERNEL(1, 190, 5, "gemm") END,
               "event 1 (ProfilerStep#2): its GPU window 200.000..250.000 us overlaps step 1's");
    /* a kernel's dur: 0, or at least CUPTI's 1 ns (1e-322 us made the step's
     * sums denormal and predicted / measured inf) */
    expect_bad("{\"traceEvents\":[" STEP(1, 100, "user_annotation") KERNEL(1, 150, 1e-322, "gemm") END,
               "event 1 (gemm): a kernel's dur 9.88131e-323 us is above 0 but below CUPTI's 1 ns resolution (valid: 0, "
               "or at least 0.001 us)");
    CHECK(read_text("{\"traceEvents\":[" STEP(1, 100, "user_annotation") KERNEL(1, 150, 0.001, "gemm")
                    KERNEL(2, 160, 0, "gemm") END) == 0 && trace.steps[0].cat_us[TT_GEMM] == 0.001,
          "kernels of 0.001 and 0 us: %s", why);
}

/* FP8 GEMMs by their kernels' names: counted and the first named; an
 * e4m3 that is no GEMM's (a cast kernel) and a bf16 GEMM are not */
static void test_fp8(void)
{
    CHECK(read_text("{\"traceEvents\":[" STEP(1, 100, "user_annotation") LAUNCH(1, 110)
                    KERNEL(1, 120, 30, "sm90_xmma_gemm_e4m3bf16_e4m3f32_f32_tn_n_tilesize128x128x128") LAUNCH(2, 130)
                    KERNEL(2, 140, 20, "cutlass3x_sm90_tensorop_gemm_e5m2_e4m3_f32_bf16") LAUNCH(3, 150)
                    KERNEL(3, 160, 5, "cast_transpose_kernel_e4m3") LAUNCH(4, 170)
                    KERNEL(4, 180, 9, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n") END) == 0, "%s", why);
    CHECK(trace.n_fp8_gemms == 2, "fp8 gemms %lld (want 2)", (long long)trace.n_fp8_gemms);
    CHECK(!strcmp(trace.fp8_gemm, "sm90_xmma_gemm_e4m3bf16_e4m3f32_f32_tn_n_tilesize128x128x128"), "first: %s",
          trace.fp8_gemm);
    CHECK(read_text("{\"traceEvents\":[" STEP(1, 100, "user_annotation") LAUNCH(1, 110)
                    KERNEL(1, 120, 30, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n") END) == 0 && trace.n_fp8_gemms == 0,
          "a bf16 run: %lld fp8 gemms", (long long)trace.n_fp8_gemms);
}

int main(void)
{
    test_classify();
    test_steps();
    test_fp8();
    test_bad();
    test_step_rules();
    FX_DONE();
}
