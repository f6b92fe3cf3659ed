/* kern_test_util.h: what the kernel tests share: a seeded generator (so a
 * failure reproduces), tensor helpers, and the one comparator every check
 * goes through, so "can this test fail?" is answered once, by
 * test_kern_flash's perturbation checks. Header-only: each test is one
 * executable. */
#ifndef KERN_TEST_UTIL_H
#define KERN_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern_attn.h"

/* splitmix64: tiny, seedable, good enough for test data. */
static uint64_t kt_rng_state = 0x9E3779B97F4A7C15ull;

static inline void kt_seed(uint64_t s) { kt_rng_state = s ^ 0x9E3779B97F4A7C15ull; }

static inline uint64_t kt_next(void)
{
    uint64_t z = (kt_rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1): never 0, so Box-Muller's log is finite. */
static inline double kt_uniform(void) { return ((double)(kt_next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

static inline double kt_normal(void)
{
    return sqrt(-2.0 * log(kt_uniform())) * cos(6.283185307179586 * kt_uniform());
}

static inline float *kt_alloc(size_t n)
{
    float *p = malloc((n > 0 ? n : 1) * sizeof *p);
    if (!p) {
        fprintf(stderr, "out of memory (%zu floats)\n", n);
        exit(1);
    }
    return p;
}

static inline float *kt_normal_new(size_t n, double sigma)
{
    float *p = kt_alloc(n);
    for (size_t i = 0; i < n; i++) p[i] = (float)(sigma * kt_normal());
    return p;
}

static inline float *kt_copy_new(const float *src, size_t n)
{
    float *p = kt_alloc(n);
    memcpy(p, src, n * sizeof *p);
    return p;
}

/* Norm-wise relative error max|x - ref| / max|ref|: element-wise relative
 * error is meaningless where a value cancels to ~0, while this one is the
 * quantity floating-point error bounds are stated in. Infinities must match
 * exactly (lse = -INFINITY for rows that see no key) and are left out of
 * the norms; any NaN, or an infinity mismatch, gives +INFINITY. */
static inline double kt_rel_err(const float *x, const float *ref, size_t n)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double a = x[i], b = ref[i];
        if (isnan(a) || isnan(b)) return INFINITY;
        if (isinf(a) || isinf(b)) {
            if (a != b) return INFINITY;
            continue;
        }
        const double e = fabs(a - b);
        if (e > num) num = e;
        if (fabs(b) > den) den = fabs(b);
    }
    if (num == 0.0) return 0.0;
    return den > 0.0 ? num / den : INFINITY;
}

static inline double kt_rel_err_f64(const double *x, const double *ref, size_t n)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double a = x[i], b = ref[i];
        if (isnan(a) || isnan(b)) return INFINITY;
        if (isinf(a) || isinf(b)) {
            if (a != b) return INFINITY;
            continue;
        }
        if (fabs(a - b) > num) num = fabs(a - b);
        if (fabs(b) > den) den = fabs(b);
    }
    if (num == 0.0) return 0.0;
    return den > 0.0 ? num / den : INFINITY;
}

static int kt_failures;

/* Records and prints one check; returns 1 if it passed. Written as
 * err <= tol so that a NaN error fails. */
static inline int kt_check(const char *what, double err, double tol)
{
    const int ok = err <= tol;
    printf("%-4s %-58s err %.3e  tol %.1e\n", ok ? "ok" : "FAIL", what, err, tol);
    if (!ok) kt_failures++;
    return ok;
}

static inline int kt_expect(const char *what, int cond)
{
    printf("%-4s %s\n", cond ? "ok" : "FAIL", what);
    if (!cond) kt_failures++;
    return cond;
}

static inline int kt_finish(const char *name)
{
    if (kt_failures) {
        printf("%s: %d check(s) FAILED\n", name, kt_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

/* Rows [r0, r0 + n) of each head of a [heads][rows][d] tensor, packed into
 * [heads][n][d]: how a rank's chunk of a sequence looks in its own buffer. */
static inline void kt_rows_get(float *dst, const float *src, int heads, int rows, int d, int r0, int n)
{
    for (int h = 0; h < heads; h++)
        memcpy(dst + (size_t)h * n * d, src + ((size_t)h * rows + r0) * d, sizeof(float) * (size_t)n * d);
}

static inline void kt_rows_put(float *dst, const float *src, int heads, int rows, int d, int r0, int n)
{
    for (int h = 0; h < heads; h++)
        memcpy(dst + ((size_t)h * rows + r0) * d, src + (size_t)h * n * d, sizeof(float) * (size_t)n * d);
}

#endif /* KERN_TEST_UTIL_H */
