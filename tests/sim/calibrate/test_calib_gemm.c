/* The GEMM fit of `ulysim calibrate --gemms` (sim/validate/calib_gemm.c) on
 * synthetic GEMMs priced on the dgx-h100 preset's GPU with known f and L:
 * exact samples must give f and L back (to the golden section's resolution:
 * 1e-4 relative in f, the fit's L then within 1 ns), samples with +-3%
 * noise within 3% in f and 0.4 us in L (a few hundred samples average the
 * noise down); one sample's price is worked out here from the tile, wave and
 * byte terms of docs/model.md; the table reader on good and bad tables. */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "calib_gemm.h"
#include "fixtures.h" /* CHECK and FX_DONE, shared with the model's tests */
#include "gemm.h"     /* the model's own pricing of a GEMM op */
#include "preset.h"

static uint64_t rng = 0x2545F4914F6CDD1DULL;
static double noise(void) /* uniform in [-1, 1), the same every run */
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 4503599627370496.0 - 1.0;
}

/* Shapes from one tile to many waves, k from 256 to 8192, batch 1 to 4,
 * every fourth a backward op's pair (input and weight gradient), priced on
 * g; times with relative noise nf. */
static int make_samples(calib_gemm_pt *p, const uly_gpu *g, double nf)
{
    static const double sizes[] = {256, 768, 2048, 4096, 8192};
    int n = 0;
    for (int b = 1; b <= 4; b *= 2)
        for (int im = 0; im < 5; im++)
            for (int in = 0; in < 5; in++)
                for (int ik = 0; ik < 5; ik++) {
                    calib_gemm_pt *q = &p[n];
                    memset(q, 0, sizeof *q);
                    q->dtype = ULY_BF16;
                    calib_gemm_pt_shape(q, b, sizes[im], sizes[in], sizes[ik], n % 4 == 3);
                    q->t_s = calib_gemm_pred(q, g) * (1.0 + nf * noise());
                    n++;
                }
    return n;
}

static void test_recover(const uly_gpu *base)
{
    static calib_gemm_pt p[512];
    uly_gpu truth = *base;
    truth.gemm_peak_frac = 0.72, truth.gemm_latency_s = 3.0e-6;
    const int n = make_samples(p, &truth, 0);
    calib_gemm_result R;
    CHECK(calib_gemm_fit(p, n, base, &R) == 0, "fit of %d exact samples", n);
    CHECK(fabs(R.frac / 0.72 - 1) < 1e-4, "f %.6f, want 0.72", R.frac);
    CHECK(fabs(R.latency_s - 3.0e-6) < 1e-9, "L %.4f us, want 3", R.latency_s * 1e6);
    CHECK(R.res_max < 1e-3 && !R.latency_at0, "exact samples: largest residual %.2g", R.res_max);
    CHECK(R.base_med > 0.05, "the base (f 0.803, L 1.8 us) misses these by more than 5%% (median %.3f)", R.base_med);

    /* noisy: +-3% uniform */
    const int m = make_samples(p, &truth, 0.03);
    CHECK(calib_gemm_fit(p, m, base, &R) == 0, "fit of noisy samples");
    CHECK(fabs(R.frac / 0.72 - 1) < 0.03, "noisy: f %.4f, want 0.72 within 3%%", R.frac);
    CHECK(fabs(R.latency_s - 3.0e-6) < 0.4e-6, "noisy: L %.3f us, want 3 within 0.4", R.latency_s * 1e6);
    CHECK(R.res_med < 0.03 && R.res_max < 0.06, "noisy: residuals median %.3f, largest %.3f (noise 3%%)",
          R.res_med, R.res_max);

    /* a GPU slower than the base: L negative would fit better; held at 0 */
    truth.gemm_latency_s = 0;
    for (int i = 0; i < n; i++) p[i].t_s = calib_gemm_pred(&p[i], &truth) - 0.5e-6 * p[i].n_gemm;
    int ok = 1;
    for (int i = 0; i < n; i++) ok &= p[i].t_s > 0;
    CHECK(ok && calib_gemm_fit(p, n, base, &R) == 0 && R.latency_at0 && R.latency_s == 0,
          "a negative fill is held at 0 (at0 %d, L %.3g)", R.latency_at0, R.latency_s);

    CHECK(calib_gemm_fit(p, 2, base, &R) == -2, "two samples cannot fit two constants");
    uly_gpu cpu = *base;
    cpu.sm_count = 0;
    CHECK(calib_gemm_fit(p, n, &cpu, &R) == -1, "a GPU without SMs prices no GEMM by shape");
    p[5].t_s = 0;
    CHECK(calib_gemm_fit(p, n, base, &R) == -1, "a sample without a time is refused");
}

/* One wave of 132 full tiles, k 4096, worked out from docs/model.md:
 * T = L + max(waves 2 Tm Tn k / R_sm, (m k + k n) beta / B) + m n beta / B,
 * R_sm = peak f / SMs, B = HBM x mem_eff. */
static void test_one_price(const uly_gpu *g)
{
    calib_gemm_pt p = {.dtype = ULY_BF16, .n_gemm = 1};
    const double m = 128 * 12, n = 128 * 11, k = 4096; /* 132 tiles */
    const double s0[4] = {1, m, n, k};
    memcpy(p.shape[0], s0, sizeof s0);
    const double r_sm = g->peak_flops[ULY_BF16] * g->gemm_peak_frac / g->sm_count;
    const double B = g->hbm_bw_Bps * g->mem_eff;
    const double math = 2.0 * 128 * 128 * k / r_sm, read = (m * k + k * n) * 2 / B;
    const double want = g->gemm_latency_s + (math > read ? math : read) + m * n * 2 / B;
    CHECK(g->sm_count == 132, "dgx-h100 has 132 SMs (%d)", g->sm_count);
    CHECK(fabs(calib_gemm_pred(&p, g) / want - 1) < 1e-12, "one wave: %.4f us, want %.4f",
          calib_gemm_pred(&p, g) * 1e6, want * 1e6);
    p.dtype = ULY_FP32; /* the fp32 peak and 4-byte elements */
    const double r32 = g->peak_flops[ULY_FP32] * g->gemm_peak_frac / g->sm_count;
    const double m32 = 2.0 * 128 * 128 * k / r32, rd32 = (m * k + k * n) * 4 / B;
    const double want32 = g->gemm_latency_s + (m32 > rd32 ? m32 : rd32) + m * n * 4 / B;
    CHECK(fabs(calib_gemm_pred(&p, g) / want32 - 1) < 1e-12, "fp32: %.4f us, want %.4f",
          calib_gemm_pred(&p, g) * 1e6, want32 * 1e6);
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    fputs(text, f);
    return fclose(f) == 0;
}

static void test_table(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/test_calib_gemm.%d.csv", (int)getpid());
    calib_gemm_pt *p = NULL;
    int n = 0, cap = 0;
    char why[512];
    CHECK(write_file(path, "# a comment\ngpu,dtype,batch,m,n,k,tflops,time_us\n"
                           "H100,bf16,2,256,512,1024,1.0,6.5\n\nH100,fp16,1,4096,4096,4096, 700 ,200\n"),
          "write %s", path);
    CHECK(calib_gemm_table_read(path, &p, &n, &cap, why, sizeof why) == 0 && n == 2, "good table: %d rows (%s)", n,
          n ? "" : why);
    if (n == 2) {
        CHECK(p[0].dtype == ULY_BF16 && p[0].shape[0][0] == 2 && p[0].shape[0][1] == 256 &&
              p[0].shape[0][2] == 512 && p[0].shape[0][3] == 1024 && fabs(p[0].t_s - 6.5e-6) < 1e-15 &&
              p[0].n_gemm == 1 && p[0].line == 3, "row 1 read as batch 2, 256 x 512 x 1024, 6.5 us, line 3");
        CHECK(p[1].dtype == ULY_FP16 && p[1].shape[0][0] == 1 && p[1].shape[0][1] == 4096 && fabs(p[1].t_s - 200e-6) < 1e-15,
              "row 2: fp16, 4096 cubed, 200 us");
    }
    /* median_ms, no batch or dtype: batch 1, bf16 */
    CHECK(write_file(path, "m,n,k,median_ms\n1024,1024,1024,0.25\n"), "write");
    CHECK(calib_gemm_table_read(path, &p, &n, &cap, why, sizeof why) == 0 && n == 3 && p[2].shape[0][0] == 1 &&
          p[2].dtype == ULY_BF16 && fabs(p[2].t_s - 0.25e-3) < 1e-15, "median_ms appended as row 3");
    static const struct { const char *text, *want; } bad[] = {
        {"m,n,k,time_us\n0,1,1,5\n", ":2: m '0' is not a size"},
        {"m,n,k,time_us\n1,1.5,1,5\n", ":2: n '1.5' is not a size"},
        {"m,n,k,time_us\n1,1,1,-5\n", ":2: time '-5' is not a positive time"},
        {"m,n,k,time_us\n1,1,1\n", ":2: no field for column 'time'"},
        {"m,n,k,dtype,time_us\n1,1,1,int4,3\n", ":2: dtype 'int4' unknown"},
        {"m,n,time_us\n1,1,3\n", ":1: the header names no column 'k'"},
        {"m,n,k,tflops\n1,1,1,3\n", ":1: the header names no time column"},
        {"m,n,k,time_s\n", "no GEMM rows after the header"},
        {"# nothing\n", "no header and no rows"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int before = n;
        CHECK(write_file(path, bad[i].text), "write");
        const int rc = calib_gemm_table_read(path, &p, &n, &cap, why, sizeof why);
        CHECK(rc == 2 && strstr(why, bad[i].want) && !strchr(why, '\n'), "bad table %zu: rc %d, '%s' (want '%s')", i,
              rc, why, bad[i].want);
        n = before; /* rows before the bad one may have been appended; drop them */
    }
    unlink(path);
    CHECK(calib_gemm_table_read(path, &p, &n, &cap, why, sizeof why) == 2, "a missing file is bad input");
    free(p);
}

/* A trace op's sample (calib_gemm_pt_shape) prices as the model prices
 * the op (uly_gemm_op_shape_time): a forward GEMM, and a backward op's two,
 * on a shape whose three sizes differ so that a swapped size shows */
static void test_op_shape(const uly_gpu *g)
{
    uly_gemm_rates r;
    uly_gemm_rates_init(&r, g, ULY_BF16);
    const double inv_tensor = 1.0 / g->peak_flops[ULY_BF16];
    for (int bwd = 0; bwd <= 1; bwd++) {
        uly_op o;
        memset(&o, 0, sizeof o);
        o.phase = bwd ? ULY_PHASE_BWD : ULY_PHASE_FWD;
        o.gemm_batch = 2, o.gemm_m = 8192, o.gemm_n = 384, o.gemm_k = 2048;
        calib_gemm_pt p = {.dtype = ULY_BF16};
        calib_gemm_pt_shape(&p, o.gemm_batch, o.gemm_m, o.gemm_n, o.gemm_k, bwd);
        const double want = uly_gemm_op_shape_time(&r, inv_tensor, g->gemm_peak_frac, &o, 0);
        CHECK(p.n_gemm == 1 + bwd && fabs(calib_gemm_pred(&p, g) / want - 1) < 1e-12,
              "%s op: sample %.4f us, the model's op %.4f us", bwd ? "backward" : "forward",
              calib_gemm_pred(&p, g) * 1e6, want * 1e6);
    }
}

int main(void)
{
    uly_cluster c;
    char why[256];
    if (preset_cluster_load("dgx-h100", &c, why, sizeof why)) {
        fprintf(stderr, "FAIL: dgx-h100: %s\n", why);
        return 1;
    }
    test_one_price(&c.gpu);
    test_op_shape(&c.gpu);
    test_recover(&c.gpu);
    test_table();
    FX_DONE();
}
