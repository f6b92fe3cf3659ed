/* attn_bench.c: how fast the CPU attention kernels are, in the units the
 * model prices compute in. Measures, in one run and with one thread count:
 * OpenBLAS SGEMM (the ceiling), flash forward and forward+backward
 * (non-causal and causal), and the reference, then prints flash/SGEMM and
 * flash/reference. Not a test: numbers depend on the machine and its load.
 *
 * FLOP conventions (hardware FLOPs of docs/model.md, "FLOPs, MFU and HFU"):
 * forward 4*N^2*d per head (QK^T and PV), halved for causal; backward 2.5x
 * forward (it recomputes QK^T), so forward+backward is 3.5x forward.
 *
 * The SGEMM ceiling is the fastest OpenBLAS kernel set that computes
 * correctly on this CPU. OpenBLAS picks its kernels once, when it loads,
 * from the CPU it recognises (OPENBLAS_CORETYPE overrides that), and a CPU
 * it does not know gets its generic code, several times slower. So before
 * measuring, attn_bench runs itself once per candidate kernel set the CPU
 * has the instructions for (--probe-core, each in its own process, so an
 * unusable one cannot take the benchmark down), checks each one's SGEMM
 * against a plain float64 loop, and, when a correct one is faster than the
 * one OpenBLAS chose, re-executes itself with OPENBLAS_CORETYPE set to it
 * (the probe is kernels/cpu/blas_probe.c, shared with ulyharness --blas-probe).
 * The variable is set in this process alone (and passed to the image that
 * replaces it), never for the caller's shell or other programs. An
 * OPENBLAS_CORETYPE the caller set is respected: no probe. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, posix_spawn, setenv under -std=c11 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kern_attn.h"

/* kern_rand_new, ending the benchmark when memory runs out */
static float *rand_new(size_t n, unsigned *seed)
{
    float *p = kern_rand_new(n, seed);
    if (!p) {
        fprintf(stderr, "attn_bench: out of memory (%zu floats)\n", n);
        exit(1);
    }
    return p;
}

struct attn_bufs {
    float *q, *k, *v, *o, *lse, *dout, *dq, *dk, *dv;
    size_t nq, nkv;
};

static void bufs_make(struct attn_bufs *b, int heads, int n, int d)
{
    unsigned seed = 7;
    b->nq = b->nkv = (size_t)heads * n * d;
    b->q = rand_new(b->nq, &seed), b->k = rand_new(b->nkv, &seed), b->v = rand_new(b->nkv, &seed);
    b->dout = rand_new(b->nq, &seed), b->o = rand_new(b->nq, &seed), b->lse = rand_new((size_t)heads * n, &seed);
    b->dq = calloc(b->nq, sizeof(float)), b->dk = calloc(b->nkv, sizeof(float)), b->dv = calloc(b->nkv, sizeof(float));
}

static void bufs_free(struct attn_bufs *b)
{
    free(b->q), free(b->k), free(b->v), free(b->o), free(b->lse), free(b->dout);
    free(b->dq), free(b->dk), free(b->dv);
}

/* Best-of-reps seconds of fwd (with_bwd = 0) or fwd + bwd. */
static double attn_time(const struct kern_attn_impl *im, const struct kern_attn_desc *ds,
                        struct attn_bufs *b, int with_bwd, int reps)
{
    double best = INFINITY;
    for (int r = 0; r < reps; r++) {
        const double t = kern_now_s();
        kern_status st = im->fwd(ds, b->q, b->k, b->v, b->o, b->lse);
        if (st == KERN_OK && with_bwd)
            st = im->bwd(ds, b->q, b->k, b->v, b->o, b->lse, b->dout, b->dq, b->dk, b->dv);
        if (st != KERN_OK) {
            fprintf(stderr, "attn_bench: %s failed: %s\n", im->name, kern_status_str(st));
            exit(1);
        }
        best = fmin(best, kern_now_s() - t);
    }
    return best;
}

/* Probes the kernel sets (kern_blas_probe); re-executes with the fastest
 * correct one when it is not the one running. */
static void core_choose(char **argv, char *report, size_t report_len)
{
    const char *self = "/proc/self/exe";
    if (getenv("OPENBLAS_CORETYPE")) {
        snprintf(report, report_len, "OPENBLAS_CORETYPE=%s set by the caller: not probed", getenv("OPENBLAS_CORETYPE"));
        return;
    }
    kern_blas_choice ch;
    const int found = kern_blas_probe(self, "--probe-core", &ch) == 0;
    snprintf(report, report_len, "%s", ch.report);
    if (found && strcmp(ch.best, kern_blas_core_get()) != 0 && setenv("OPENBLAS_CORETYPE", ch.best, 1) == 0) {
        /* the same arguments, and what the probe found for the header */
        char *args[128];
        int n = 0;
        for (int i = 0; argv[i] && n < 125; i++) args[n++] = argv[i];
        args[n++] = "--core-report";
        args[n++] = report;
        args[n] = NULL;
        fflush(stdout);
        execv(self, args);
        unsetenv("OPENBLAS_CORETYPE"); /* exec failed: carry on with the default */
    }
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: attn_bench [--n N] [--d D] [--heads H] [--reps R] [--ref-n M] [--ref-acc f32|f64] [--fwd-only]\n"
            "                  [--no-core-probe]\n"
            "  N tokens (default 4096), D head dim (128), H heads (1), R repetitions, best kept (3);\n"
            "  the reference runs once at M tokens (default N; 0 skips it) and is scaled by (N/M)^2;\n"
            "  its accumulation defaults to f64, the configuration the tests use as the oracle.\n"
            "  Threads: OPENBLAS_NUM_THREADS; flash uses as many workers as OpenBLAS threads.\n"
            "  --fwd-only: SGEMM and the flash forward alone (long sequences).\n"
            "  OpenBLAS kernel set: the fastest whose SGEMM checks out against a float64 loop,\n"
            "  probed in child processes and set (OPENBLAS_CORETYPE) for this run only;\n"
            "  --no-core-probe or a caller's OPENBLAS_CORETYPE keeps OpenBLAS's own choice.\n");
}

static int arg_int(const char *s, int lo, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > (1 << 24)) return 0;
    *out = (int)v;
    return 1;
}

int main(int argc, char **argv)
{
    int n = 4096, d = 128, heads = 1, reps = 3, ref_n = -1, fwd_only = 0, probe = 1;
    kern_acc ref_acc = KERN_ACC_F64;
    const char *core_report = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1;
        if (strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--probe-core") == 0) return kern_blas_probe_child();
        else if (strcmp(a, "--fwd-only") == 0) fwd_only = 1;
        else if (strcmp(a, "--no-core-probe") == 0) probe = 0;
        else if (strcmp(a, "--core-report") == 0 && v) core_report = v, i++; else if (strcmp(a, "--n") == 0 && v) ok = arg_int(v, 1, &n), i++;
        else if (strcmp(a, "--d") == 0 && v) ok = arg_int(v, 1, &d), i++;
        else if (strcmp(a, "--heads") == 0 && v) ok = arg_int(v, 1, &heads), i++;
        else if (strcmp(a, "--reps") == 0 && v) ok = arg_int(v, 1, &reps), i++;
        else if (strcmp(a, "--ref-n") == 0 && v) ok = arg_int(v, 0, &ref_n), i++;
        else if (strcmp(a, "--ref-acc") == 0 && v) {
            ok = strcmp(v, "f32") == 0 || strcmp(v, "f64") == 0;
            ref_acc = strcmp(v, "f32") == 0 ? KERN_ACC_F32 : KERN_ACC_F64;
            i++;
        } else ok = 0;
        if (!ok) {
            fprintf(stderr, "attn_bench: bad argument '%s%s%s'\n", a, v ? " " : "", v ? v : "");
            usage(stderr);
            return 2;
        }
    }
    if (ref_n < 0) ref_n = n;
    static char report[1024];
    if (core_report) snprintf(report, sizeof report, "%s", core_report);
    else if (probe) core_choose(argv, report, sizeof report);
    else snprintf(report, sizeof report, "not probed (--no-core-probe)");
    if (fwd_only) ref_n = 0;

    const int threads = kern_blas_threads_get();
    const struct kern_attn_impl *flash = kern_attn_find("flash"), *ref = kern_attn_find("ref");
    printf("# attn_bench: N %d, d %d, heads %d (MHA), float32, best of %d\n", n, d, heads, reps);
    printf("# BLAS: %s\n", kern_blas_config_get());
    printf("# OpenBLAS kernels: %s%s; %s\n", kern_blas_core_get(),
           getenv("OPENBLAS_CORETYPE") ? " (OPENBLAS_CORETYPE, this process only)" : " (OpenBLAS's own choice)", report);
    printf("# threads: OpenBLAS %d for SGEMM; flash %d workers x 1 OpenBLAS thread; reference 1 (serial)\n",
           threads, threads);
    printf("# FLOPs: fwd 4*N^2*d*heads (causal half); fwd+bwd 3.5x fwd (bwd recomputes QK^T: 2.5x fwd)\n");
    printf("#\n# %-34s %12s %12s %10s\n", "kernel", "time_ms", "GFLOP", "GFLOP/s");

    const double g1 = kern_sgemm_gflops(n, n, d, reps);
    printf("  %-34s %12.2f %12.3f %10.1f\n", "sgemm NxNxd (QK^T shape)", 2.0 * n * n * (double)d / g1 * 1e-6,
           2.0 * n * n * (double)d * 1e-9, g1);
    const int sq = 2048;
    const double g2 = kern_sgemm_gflops(sq, sq, sq, reps);
    printf("  %-34s %12.2f %12.3f %10.1f\n", "sgemm 2048^3", 2.0 * sq * sq * (double)sq / g2 * 1e-6,
           2.0 * sq * sq * (double)sq * 1e-9, g2);
    const double g_sgemm = fmax(g1, g2); /* the harder bar of the two */

    struct attn_bufs b;
    bufs_make(&b, heads, n, d);
    struct kern_attn_desc ds = {.heads = heads, .kv_heads = heads, .n_q = n, .n_kv = n, .d = d,
                                .scale = 1.0f / sqrtf((float)d), .acc = KERN_ACC_F32};
    const double fwd_flop = 4.0 * n * (double)n * d * heads;
    attn_time(flash, &ds, &b, 0, 1); /* warm-up */
    const double t_fwd = attn_time(flash, &ds, &b, 0, reps);
#define ROW(name, t, flop) printf("  %-34s %12.2f %12.3f %10.1f\n", name, (t) * 1e3, (flop) * 1e-9, (flop) / (t) * 1e-9)
    ROW("flash fwd", t_fwd, fwd_flop);
    double t_fb = NAN, t_fwd1 = NAN;
    if (!fwd_only) {
        t_fb = attn_time(flash, &ds, &b, 1, reps);
        ds.threads = 1;
        t_fwd1 = attn_time(flash, &ds, &b, 0, reps);
        ds.threads = 0;
        ds.causal = true;
        const double t_fwd_c = attn_time(flash, &ds, &b, 0, reps);
        const double t_fb_c = attn_time(flash, &ds, &b, 1, reps);
        ds.causal = false;
        ROW("flash fwd, 1 worker", t_fwd1, fwd_flop);
        ROW("flash fwd+bwd", t_fb, 3.5 * fwd_flop);
        ROW("flash fwd causal", t_fwd_c, 0.5 * fwd_flop);
        ROW("flash fwd+bwd causal", t_fb_c, 1.75 * fwd_flop);
    }

    double t_ref = NAN, t_ref_fb = NAN;
    if (ref_n > 0) {
        struct attn_bufs rb;
        bufs_make(&rb, heads, ref_n, d);
        struct kern_attn_desc rds = ds;
        rds.n_q = rds.n_kv = ref_n;
        rds.acc = ref_acc;
        const double scale = (double)n / ref_n * ((double)n / ref_n);
        const double t0 = attn_time(ref, &rds, &rb, 0, 1);
        const double t1 = attn_time(ref, &rds, &rb, 1, 1);
        t_ref = t0 * scale;
        t_ref_fb = t1 * scale;
        char name[64];
        const char *acc = ref_acc == KERN_ACC_F64 ? "f64 acc" : "f32 acc";
        if (ref_n == n) {
            snprintf(name, sizeof name, "ref fwd (%s, 1 run)", acc);
            ROW(name, t_ref, fwd_flop);
            snprintf(name, sizeof name, "ref fwd+bwd (%s, 1 run)", acc);
            ROW(name, t_ref_fb, 3.5 * fwd_flop);
        } else {
            printf("# reference timed at N = %d and scaled by (N/%d)^2 = %.2f (its work is N^2*d)\n", ref_n,
                   ref_n, scale);
            snprintf(name, sizeof name, "ref fwd (%s, scaled)", acc);
            ROW(name, t_ref, fwd_flop);
            snprintf(name, sizeof name, "ref fwd+bwd (%s, scaled)", acc);
            ROW(name, t_ref_fb, 3.5 * fwd_flop);
        }
        bufs_free(&rb);
    }
#undef ROW
    bufs_free(&b);

    const double r_fwd = fwd_flop / t_fwd * 1e-9 / g_sgemm;
    const double r_fb = 3.5 * fwd_flop / t_fb * 1e-9 / g_sgemm;
    printf("#\n# %-46s %8s %8s\n", "ratio", "value", "target");
    printf("  %-46s %8.2f %8s  %s\n", "flash fwd / best SGEMM (GFLOP/s)", r_fwd, ">=0.50",
           r_fwd >= 0.5 ? "met" : "NOT met");
    if (!fwd_only) printf("  %-46s %8.2f %8s\n", "flash fwd+bwd / best SGEMM (GFLOP/s)", r_fb, "-");
    if (ref_n > 0) {
        const double s_fwd = t_ref / t_fwd, s_fb = t_ref_fb / t_fb;
        printf("  %-46s %8.1f %8s  %s\n", "flash speed-up over ref, fwd (time)", s_fwd, ">=10x",
               s_fwd >= 10.0 ? "met" : "NOT met");
        printf("  %-46s %8.1f %8s  %s\n", "flash speed-up over ref, fwd+bwd (time)", s_fb, ">=10x",
               s_fb >= 10.0 ? "met" : "NOT met");
        /* The reference is serial: flash on one worker is the part of the
         * speed-up that is not just more cores. */
        printf("  %-46s %8.1f %8s\n", "flash 1 worker speed-up over ref, fwd (time)", t_ref / t_fwd1, "-");
    }
    return 0;
}
