/* blas_probe.c: which OpenBLAS kernel set runs SGEMM fastest, correctly, on
 * this CPU (kern_attn.h, "The OpenBLAS kernel set").
 *
 * OpenBLAS built with DYNAMIC_ARCH (Debian's 0.3.21 is) picks its kernels
 * once, when it loads, from the CPU's vendor, family and model
 * (driver/others/dynamic.c, get_coretype); a model it does not list falls
 * back on the instructions it finds (Cooperlake with AVX512-BF16, SkylakeX
 * with AVX-512, Haswell with AVX2), and OPENBLAS_CORETYPE overrides the
 * choice. The choice can only be changed before the library loads, so each
 * candidate is measured in a child process (the caller's own binary run
 * with child_flag, which calls kern_blas_probe_child): its SGEMM checked
 * against a float64 loop, then timed at 1024^3, where the kernel sets differ
 * most. A set the CPU lacks the instructions for is never started (it would
 * die of SIGILL). Used by attn_bench (bench/kernels) and by
 * `ulyharness --blas-probe`, which `ulysim calibrate --host` runs. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, posix_spawn under -std=c11 */
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kern_attn.h"

/* SGEMM is correct when every entry is within the float32 bound n u
 * (u = 2^-24) of a float64 loop, relative to the sum of its products'
 * magnitudes (Higham, Accuracy and Stability of Numerical Algorithms, 3.1). */
#define PROBE_N 256
#define PROBE_TOL ((double)PROBE_N / 16777216.0)
/* Each set is probed in PROBE_ROUNDS interleaved rounds and keeps its best:
 * a shared machine's load swings a single run by 2x, and interleaving
 * spreads it over every candidate alike. */
#define PROBE_ROUNDS 3

double kern_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

float *kern_rand_new(size_t n, unsigned *seed)
{
    float *p = malloc(n * sizeof *p);
    if (!p) return NULL;
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 1664525u + 1013904223u;
        p[i] = (float)((*seed >> 8) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
    }
    return p;
}

double kern_sgemm_gflops(int m, int n, int k, int reps)
{
    unsigned seed = 1;
    float *a = kern_rand_new((size_t)m * k, &seed), *b = kern_rand_new((size_t)k * n, &seed);
    float *c = kern_rand_new((size_t)m * n, &seed);
    double best = INFINITY;
    if (a && b && c) {
        kern_gemm_f32(false, true, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n); /* warm-up: pages, threads */
        for (int r = 0; r < reps; r++) {
            const double t = kern_now_s();
            kern_gemm_f32(false, true, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n);
            best = fmin(best, kern_now_s() - t);
        }
    }
    free(a), free(b), free(c);
    return isfinite(best) && best > 0 ? 2.0 * m * n * (double)k / best * 1e-9 : 0;
}

int kern_blas_probe_child(void)
{
    const double err = kern_gemm_check(PROBE_N, 12345u);
    const double g = kern_sgemm_gflops(1024, 1024, 1024, 4);
    printf("%s %d %.3g %.2f\n", kern_blas_core_get(), err <= PROBE_TOL, err, g);
    return 0;
}

/* OpenBLAS's x86-64 kernel sets worth trying, newest first, with the
 * instructions each needs. */
struct core_cand {
    const char *name;
    int ok;
};

static int cands_list(struct core_cand *c)
{
    int n = 0;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const int avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
    c[n++] = (struct core_cand){"Cooperlake", avx512};
    c[n++] = (struct core_cand){"SkylakeX", avx512};
    c[n++] = (struct core_cand){"Zen", avx2};
    c[n++] = (struct core_cand){"Haswell", avx2};
    c[n++] = (struct core_cand){"Sandybridge", __builtin_cpu_supports("avx")};
#endif
    (void)c;
    return n;
}

/* Runs `self child_flag` with OPENBLAS_CORETYPE = core (NULL: unset) and
 * reads its line; 0 when it ran and printed one. */
static int probe_one(const char *self, const char *child_flag, const char *core, char *name, size_t name_len, int *ok,
                     double *gflops)
{
    extern char **environ;
    char *env[512], coreenv[96];
    int ne = 0;
    for (char **e = environ; *e && ne < 510; e++)
        if (strncmp(*e, "OPENBLAS_CORETYPE=", 18) != 0 && strncmp(*e, "OPENBLAS_VERBOSE=", 17) != 0) env[ne++] = *e;
    if (core) {
        snprintf(coreenv, sizeof coreenv, "OPENBLAS_CORETYPE=%s", core);
        env[ne++] = coreenv;
    }
    env[ne] = NULL;
    int fd[2];
    if (pipe(fd) != 0) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", 1 /* O_WRONLY */, 0);
    char *args[] = {(char *)self, (char *)child_flag, NULL};
    pid_t pid;
    const int rc = posix_spawn(&pid, self, &fa, NULL, args, env);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    char line[256] = "";
    FILE *f = fdopen(fd[0], "r");
    if (f) {
        if (rc == 0 && !fgets(line, sizeof line, f)) line[0] = 0;
        fclose(f);
    } else {
        close(fd[0]);
    }
    if (rc != 0) return -1;
    int status = 0;
    waitpid(pid, &status, 0);
    char nm[64];
    double err;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || sscanf(line, "%63s %d %lg %lg", nm, ok, &err, gflops) != 4)
        return -1;
    snprintf(name, name_len, "%s", nm);
    return 0;
}

int kern_blas_probe(const char *self, const char *child_flag, kern_blas_choice *out)
{
    char *report = out->report;
    const size_t report_len = sizeof out->report;
    memset(out, 0, sizeof *out);
    struct core_cand c[8];
    const int nc = cands_list(c);
    char got[9][64]; /* [0]: OpenBLAS's own choice; [1 + i]: candidate i */
    int ran[9] = {0}, ok[9] = {0};
    double g[9] = {0};
    for (int round = 0; round < PROBE_ROUNDS; round++)
        for (int i = -1; i < nc; i++) {
            if (i >= 0 && !c[i].ok) continue;
            int okr = 0;
            double gr = 0;
            if (probe_one(self, child_flag, i < 0 ? NULL : c[i].name, got[i + 1], sizeof got[0], &okr, &gr) != 0)
                continue;
            ok[i + 1] = (ran[i + 1] ? ok[i + 1] : 1) && okr; /* wrong once: wrong */
            ran[i + 1] = 1;
            if (gr > g[i + 1]) g[i + 1] = gr;
        }
    size_t used = (size_t)snprintf(report, report_len, "probed SGEMM 1024^3, best of %d rounds (GFLOP/s):", PROBE_ROUNDS);
    int best = -1;
    for (int i = -1; i < nc; i++) {
        const int k = i + 1;
        const char *want = i < 0 ? "default" : c[i].name;
        if (i >= 0 && !c[i].ok) continue;
        if (used < report_len) {
            if (!ran[k]) used += (size_t)snprintf(report + used, report_len - used, " %s failed;", want);
            else
                used += (size_t)snprintf(report + used, report_len - used, " %s%s%s %.1f%s;", want,
                                         i >= 0 && strcmp(want, got[k]) ? " ran " : i < 0 ? " " : "",
                                         i >= 0 && strcmp(want, got[k]) ? got[k] : i < 0 ? got[k] : "", g[k],
                                         ok[k] ? "" : " WRONG");
        }
        /* a candidate counts only when OpenBLAS really ran that set */
        if (ran[k] && ok[k] && (i < 0 || strcmp(want, got[k]) == 0) && (best < 0 || g[k] > g[best])) best = k;
    }
    if (ran[0]) {
        snprintf(out->deflt, sizeof out->deflt, "%s", got[0]);
        out->default_gflops = ok[0] ? g[0] : 0;
    }
    if (best < 0) return -1;
    snprintf(out->best, sizeof out->best, "%s", got[best]);
    out->best_gflops = g[best];
    return 0;
}
