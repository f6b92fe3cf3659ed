/* GEMMs by shape against published cuBLAS measurements: every bf16 row of
 * XLA's H100 (sm_90) matmul table (traces/published/xla_matmul_sm90.csv,
 * its header names the source) priced on the dgx-h100 preset's GPU as
 * shipped; the acceptance is a median |error| of at most 15%. The
 * flat 0.80 of peak the presets held before (and the same with its bytes at
 * the HBM rate, the old GEMM price) is printed beside it for the record.
 * Run: test_model_gemm_xla CSV (CTest passes the repository's file). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preset.h"

#define MAX_ROWS 1024

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_model_gemm_xla traces/published/xla_matmul_sm90.csv\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        fprintf(stderr, "FAIL: cannot open %s\n", argv[1]);
        return 1;
    }
    uly_cluster c;
    char why[256];
    if (preset_cluster_load("dgx-h100", &c, why, sizeof why) != 0) {
        fprintf(stderr, "FAIL: dgx-h100: %s\n", why);
        return 1;
    }
    if (c.gpu.sm_count <= 0) {
        fprintf(stderr, "FAIL: dgx-h100 does not price GEMMs by shape (gpu.sm_count)\n");
        return 1;
    }
    uly_gemm_rates r;
    uly_gemm_rates_init(&r, &c.gpu, ULY_BF16);
    const double peak = c.gpu.peak_flops[ULY_BF16], bw = c.gpu.hbm_bw_Bps * c.gpu.mem_eff;
    static double err[MAX_ROWS], err_flat[MAX_ROWS], err_old[MAX_ROWS], signed_err[MAX_ROWS];
    int n = 0, bad = 0;
    char line[512];
    printf("# %s priced on %s (%d SMs, %.0f TFLOP/s x %.3f, %dx%d tiles, %.1f us fill)\n", argv[1], c.gpu.name,
           c.gpu.sm_count, peak / 1e12, c.gpu.gemm_peak_frac, c.gpu.gemm_tile_m, c.gpu.gemm_tile_n,
           c.gpu.gemm_latency_s * 1e6);
    printf("# batch     m     n     k  meas_us  model_us  err_pct  flat0.80_err_pct\n");
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || !strncmp(line, "gpu,", 4)) continue;
        char gpu[64], dtype[16];
        double b, m, nn, k, tflops, us;
        if (sscanf(line, "%63[^,],%15[^,],%lf,%lf,%lf,%lf,%lf,%lf", gpu, dtype, &b, &m, &nn, &k, &tflops, &us) != 8 ||
            strcmp(dtype, "bf16") || !(tflops > 0)) {
            fprintf(stderr, "FAIL: unreadable row: %s", line);
            bad++;
            continue;
        }
        if (n >= MAX_ROWS) break;
        const double flops = 2 * b * m * nn * k;
        const double meas = flops / (tflops * 1e12); /* from the table's FLOP/s, not the rounded time column */
        const double model = uly_gemm_time_s(&r, b, m, nn, k);
        const double flat = flops / (0.80 * peak);
        const double bytes = 2.0 * (b * m * k + b * k * nn + b * m * nn) / bw;
        const double old = flat > bytes ? flat : bytes;
        signed_err[n] = model / meas - 1;
        err[n] = fabs(signed_err[n]);
        err_flat[n] = fabs(flat / meas - 1);
        err_old[n] = fabs(old / meas - 1);
        printf("  %5.0f %5.0f %5.0f %5.0f %8.2f %9.2f %+8.1f %+8.1f\n", b, m, nn, k, meas * 1e6, model * 1e6,
               100 * signed_err[n], 100 * (flat / meas - 1));
        n++;
    }
    fclose(f);
    if (n < 30) {
        fprintf(stderr, "FAIL: %d rows (want 30 or more)\n", n);
        return 1;
    }
    double mean = 0, worst = 0;
    for (int i = 0; i < n; i++) {
        mean += err[i];
        if (err[i] > worst) worst = err[i];
    }
    mean /= n;
    const double med = median(err, n), bias = median(signed_err, n);
    const double med_flat = median(err_flat, n), med_old = median(err_old, n);
    printf("# %d shapes: GEMM by shape median |error| %.1f%% (mean %.1f%%, largest %.1f%%, median signed %+.1f%%)\n", n,
           100 * med, 100 * mean, 100 * worst, 100 * bias);
    printf("# the flat 0.80 of peak: median |error| %.1f%%; with its bytes at the HBM rate (the old price): %.1f%%\n",
           100 * med_flat, 100 * med_old);
    if (bad || med > 0.15) {
        fprintf(stderr, "FAIL: median |error| %.1f%% (at most 15%%), %d unreadable rows\n", 100 * med, bad);
        return 1;
    }
    return 0;
}
