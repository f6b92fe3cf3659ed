/* test_kcuda_fp8.c: kern_cuda_gemm_fp8 against a float64 reference of the
 * unquantized product. One source, two builds: against libulykern_cuda
 * (ctest kcuda_fp8: cuBLASLt on a GPU; exit 77 without one, or on a device
 * below compute capability 8.9, where the call must say EUNSUPPORTED), and
 * against the host emulation of tests/harness (ctest
 * harness.nccl_emu.fp8_gemm), which the harness's FP8 runs use in CI.
 *
 * Bounds, computed here from the formats (not from the code under test):
 *  - per element, rigorous: RNE to FP8 leaves |q - x s| <= u |x s| in the
 *    normal range (u = 2^-4 for E4M3, 2^-3 for E5M2) and at most half a
 *    subnormal step 2^(1 - bias - mbits) / 2 below it; in unscaled units
 *    e(x) = max(u |x|, step / 2 / s). So |got - ref|_ij <= sum_l (e(a_il)
 *    |b_lj| + |a_il| e(b_lj) + e(a_il) e(b_lj)) + k 2^-24 sum_l |a_il b_lj|
 *    (float32 accumulation) + 2^-8 |ref_ij| (bf16 output, with room for
 *    the error itself) + the same bf16 rounding of beta C;
 *  - normwise, statistical (beta 0, zero-mean inputs): each product carries
 *    two independent relative errors of variance at most u^2 / 3 (uniform
 *    in [-u, u]), so over k terms the error's rms grows like sqrt(k) u |ab|
 *    as the output's rms grows like sqrt(k) |ab|: rms(err) / rms(ref) <=
 *    sqrt((u_a^2 + u_b^2) / 3) + 2^-9. Truncating instead of rounding
 *    doubles it (the mutant this half catches); a scale not applied, a
 *    transposed operand or a wrong format fails the first.
 * Shapes cover every trans_a / trans_b, strides wider than the rows, alpha,
 * beta = 1 accumulation, E4M3 x E4M3 and the hybrid E5M2 gradient on
 * either side, operands of very different magnitudes (so that a scale not
 * applied saturates or flushes them), an all-zero operand, a NaN, and the
 * refusals (m not a multiple of 16, E5M2 x E5M2).
 * --time (GPU build): TFLOP/s of the FP8 GEMM (casts included, and the
 * cuBLASLt call's share) against kern_cuda_gemm in bf16 at 8192^3. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern_cuda.h"

static int fails;
#define CHECK(cond, ...)                                                                                                \
    do {                                                                                                                \
        if (!(cond)) {                                                                                                  \
            fails++;                                                                                                    \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                                \
            printf(__VA_ARGS__);                                                                                        \
            printf("\n");                                                                                               \
        }                                                                                                               \
    } while (0)
#define K_OK(call)                                                                                                      \
    do {                                                                                                                \
        kern_cuda_status s_ = (call);                                                                                   \
        if (s_ != KERN_CUDA_OK) {                                                                                       \
            printf("FAIL %s: %s (%s)\n", #call, kern_cuda_status_str(s_), kern_cuda_last_error());                      \
            exit(1);                                                                                                    \
        }                                                                                                               \
    } while (0)

/* the formats as the OCP FP8 specification gives them: unit roundoff, subnormal step, largest finite */
static double fmt_u(kern_cuda_fp8 f) { return f == KERN_CUDA_E5M2 ? 0.125 : 0.0625; }
static double fmt_sub_step(kern_cuda_fp8 f) { return f == KERN_CUDA_E5M2 ? ldexp(1.0, -16) : ldexp(1.0, -9); }
static double fmt_max(kern_cuda_fp8 f) { return f == KERN_CUDA_E5M2 ? 57344.0 : 448.0; }

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static double urand(void) /* [-1, 1) */
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return 2.0 * (double)(rng >> 11) / 9007199254740992.0 - 1.0;
}

typedef struct gcase {
    int ta, tb, m, n, k, pad;
    kern_cuda_fp8 fa, fb;
    double mag_a, mag_b; /* the operands' magnitudes */
    float alpha, beta;
} gcase;

/* the largest |x| of op(X) (stored rows x cols), for the test's own scale */
static double amax_of(const float *x, int64_t n)
{
    double a = 0;
    for (int64_t i = 0; i < n; i++) a = fabs(x[i]) > a ? fabs(x[i]) : a;
    return a;
}

/* e(x): the quantization error bound of one element in unscaled units */
static double qerr(double x, kern_cuda_fp8 f, double scale)
{
    const double rel = fmt_u(f) * fabs(x), sub = fmt_sub_step(f) / 2.0 / scale;
    return rel > sub ? rel : sub;
}

/* Runs one case: host data rounded to bf16, the call, the bounds. */
static void run_case(kern_cuda_blas *bl, const gcase *g, void *ws, size_t ws_bytes)
{
    const int ra = g->ta ? g->k : g->m, ca = (g->ta ? g->m : g->k), rb = g->tb ? g->n : g->k, cb = g->tb ? g->k : g->n;
    const int lda = ca + g->pad, ldb = cb + g->pad, ldc = g->n + (g->pad ? 8 : 0);
    const int64_t na = (int64_t)ra * lda, nb = (int64_t)rb * ldb, nc = (int64_t)g->m * ldc;
    float *a = malloc(sizeof(float) * na), *b = malloc(sizeof(float) * nb), *c0 = malloc(sizeof(float) * nc);
    uint16_t *a16 = malloc(2 * na), *b16 = malloc(2 * nb), *c16 = malloc(2 * nc);
    for (int64_t i = 0; i < na; i++) a[i] = (float)(g->mag_a * urand());
    for (int64_t i = 0; i < nb; i++) b[i] = (float)(g->mag_b * urand());
    for (int64_t i = 0; i < nc; i++) c0[i] = (float)urand();
    kern_cuda_host_round(a, a16, na, KERN_CUDA_BF16), kern_cuda_host_widen(a16, a, na, KERN_CUDA_BF16);
    kern_cuda_host_round(b, b16, nb, KERN_CUDA_BF16), kern_cuda_host_widen(b16, b, nb, KERN_CUDA_BF16);
    kern_cuda_host_round(c0, c16, nc, KERN_CUDA_BF16), kern_cuda_host_widen(c16, c0, nc, KERN_CUDA_BF16);
    void *da, *db, *dc;
    K_OK(kern_cuda_malloc(&da, 2 * na));
    K_OK(kern_cuda_malloc(&db, 2 * nb));
    K_OK(kern_cuda_malloc(&dc, 2 * nc));
    K_OK(kern_cuda_h2d(da, a16, 2 * na));
    K_OK(kern_cuda_h2d(db, b16, 2 * nb));
    K_OK(kern_cuda_h2d(dc, c16, 2 * nc));
    K_OK(kern_cuda_gemm_fp8(bl, g->ta, g->tb, g->m, g->n, g->k, g->alpha, da, lda, g->fa, db, ldb, g->fb,
                            KERN_CUDA_BF16, g->beta, dc, ldc, ws, ws_bytes));
    K_OK(kern_cuda_d2h(c16, dc, 2 * nc));
    /* the padding (columns past n) may hold anything; the window only */
    const double sa = fmt_max(g->fa) / amax_of(a, na), sb = fmt_max(g->fb) / amax_of(b, nb);
    double worst = 0, e2 = 0, r2 = 0, mut_worst = 0;
    for (int i = 0; i < g->m; i++)
        for (int j = 0; j < g->n; j++) {
            double ref = 0, bound = 0, absum = 0;
            for (int l = 0; l < g->k; l++) {
                const double x = a[g->ta ? (int64_t)l * lda + i : (int64_t)i * lda + l];
                const double y = b[g->tb ? (int64_t)j * ldb + l : (int64_t)l * ldb + j];
                const double ex = qerr(x, g->fa, sa), ey = qerr(y, g->fb, sb);
                ref += x * y;
                absum += fabs(x * y);
                bound += ex * fabs(y) + fabs(x) * ey + ex * ey;
            }
            const double cij = c0[(int64_t)i * ldc + j];
            ref = g->alpha * ref + g->beta * cij;
            bound = fabs(g->alpha) * (bound + g->k * ldexp(1.0, -24) * absum) + ldexp(1.0, -8) * fabs(ref) +
                    ldexp(1.0, -9) * fabs(g->beta * cij);
            const double got = kern_cuda_host_to_f32(c16[(int64_t)i * ldc + j], KERN_CUDA_BF16);
            const double err = fabs(got - ref);
            if (!(err <= bound) && worst >= 0) {
                CHECK(0, "case %dx%dx%d ta %d tb %d %s x %s: C[%d][%d] = %.6g, reference %.6g, bound %.3g", g->m,
                      g->n, g->k, g->ta, g->tb, kern_cuda_fp8_name(g->fa), kern_cuda_fp8_name(g->fb), i, j, got, ref,
                      bound);
                worst = -1; /* one line per case */
            }
            if (worst >= 0 && err / bound > worst) worst = err / bound;
            e2 += err * err, r2 += ref * ref;
            /* the mutant "dequantizing scales not applied": got would be (got - beta c) sa sb + beta c */
            const double mut = (got - g->beta * cij) * sa * sb + g->beta * cij;
            if (fabs(mut - ref) / bound > mut_worst) mut_worst = fabs(mut - ref) / bound;
        }
    const double rms = sqrt(e2 / r2);
    const double stat = sqrt((fmt_u(g->fa) * fmt_u(g->fa) + fmt_u(g->fb) * fmt_u(g->fb)) / 3.0) + ldexp(1.0, -9);
    if (g->beta == 0.0f)
        CHECK(rms <= stat, "case %dx%dx%d %s x %s: normwise rms error %.4f above the statistical bound %.4f", g->m,
              g->n, g->k, kern_cuda_fp8_name(g->fa), kern_cuda_fp8_name(g->fb), rms, stat);
    CHECK(mut_worst > 1.0, "case %dx%dx%d: the bound would not catch unapplied scales", g->m, g->n, g->k);
    printf("  %4dx%4dx%4d ta %d tb %d %s x %s alpha %g beta %g: worst error / bound %.3f, normwise rms %.4f "
           "(statistical bound %.4f)\n", g->m, g->n, g->k, g->ta, g->tb, kern_cuda_fp8_name(g->fa),
           kern_cuda_fp8_name(g->fb), g->alpha, g->beta, worst, rms, stat);
    kern_cuda_free(da), kern_cuda_free(db), kern_cuda_free(dc);
    free(a), free(b), free(c0), free(a16), free(b16), free(c16);
}

/* all-zero A gives exactly beta C = 0; a NaN in A makes every output NaN; the refusals */
static void edge_cases(kern_cuda_blas *bl)
{
    const int m = 16, n = 32, k = 48;
    uint16_t a16[16 * 48], b16[48 * 32], c16[16 * 32];
    for (int i = 0; i < m * k; i++) a16[i] = 0;
    for (int i = 0; i < k * n; i++) b16[i] = kern_cuda_host_from_f32((float)urand(), KERN_CUDA_BF16);
    void *da, *db, *dc;
    K_OK(kern_cuda_malloc(&da, sizeof a16));
    K_OK(kern_cuda_malloc(&db, sizeof b16));
    K_OK(kern_cuda_malloc(&dc, sizeof c16));
    K_OK(kern_cuda_h2d(da, a16, sizeof a16));
    K_OK(kern_cuda_h2d(db, b16, sizeof b16));
    K_OK(kern_cuda_gemm_fp8(bl, false, false, m, n, k, 1.0f, da, k, KERN_CUDA_E4M3, db, n, KERN_CUDA_E4M3,
                            KERN_CUDA_BF16, 0.0f, dc, n, NULL, 0));
    K_OK(kern_cuda_d2h(c16, dc, sizeof c16));
    int nz = 0;
    for (int i = 0; i < m * n; i++) nz += kern_cuda_host_to_f32(c16[i], KERN_CUDA_BF16) != 0.0f;
    CHECK(nz == 0, "all-zero A: %d nonzero outputs", nz);
    a16[5] = kern_cuda_host_from_f32(NAN, KERN_CUDA_BF16);
    K_OK(kern_cuda_h2d(da, a16, sizeof a16));
    K_OK(kern_cuda_gemm_fp8(bl, false, false, m, n, k, 1.0f, da, k, KERN_CUDA_E4M3, db, n, KERN_CUDA_E4M3,
                            KERN_CUDA_BF16, 0.0f, dc, n, NULL, 0));
    K_OK(kern_cuda_d2h(c16, dc, sizeof c16));
    int nn = 0;
    for (int i = 0; i < m * n; i++) nn += isnan(kern_cuda_host_to_f32(c16[i], KERN_CUDA_BF16));
    CHECK(nn == m * n, "a NaN in A: %d of %d outputs NaN", nn, m * n);
    kern_cuda_status s = kern_cuda_gemm_fp8(bl, false, false, 24, n, k, 1.0f, da, k, KERN_CUDA_E4M3, db, n,
                                            KERN_CUDA_E4M3, KERN_CUDA_BF16, 0.0f, dc, n, NULL, 0);
    CHECK(s == KERN_CUDA_EUNSUPPORTED, "m = 24: %s, want EUNSUPPORTED", kern_cuda_status_str(s));
    s = kern_cuda_gemm_fp8(bl, false, false, m, n, k, 1.0f, da, k, KERN_CUDA_E5M2, db, n, KERN_CUDA_E5M2,
                           KERN_CUDA_BF16, 0.0f, dc, n, NULL, 0);
    CHECK(s == KERN_CUDA_EUNSUPPORTED, "E5M2 x E5M2: %s, want EUNSUPPORTED", kern_cuda_status_str(s));
    s = kern_cuda_gemm_fp8(bl, false, false, m, n, k, 1.0f, da, k - 1, KERN_CUDA_E4M3, db, n, KERN_CUDA_E4M3,
                           KERN_CUDA_BF16, 0.0f, dc, n, NULL, 0);
    CHECK(s == KERN_CUDA_EINVAL, "lda < k: %s, want EINVAL", kern_cuda_status_str(s));
    kern_cuda_free(da), kern_cuda_free(db), kern_cuda_free(dc);
}

#ifdef KCUDA_FP8_TIMING
int kcuda_fp8_time(kern_cuda_blas *bl); /* test_kcuda_fp8_time.c */
#endif

int main(int argc, char **argv)
{
    int ndev = 0;
    if (kern_cuda_device_count(&ndev) != KERN_CUDA_OK || ndev < 1) {
        printf("SKIPPED: no CUDA device (%s)\n", kern_cuda_last_error());
        return 77;
    }
    struct kern_cuda_device_info info;
    K_OK(kern_cuda_set_device(0));
    K_OK(kern_cuda_device_query(0, &info));
    kern_cuda_blas *bl;
    K_OK(kern_cuda_blas_create(&bl));
    printf("kcuda_fp8 on %s (compute capability %d.%d)\n", info.name, info.major, info.minor);
    if (info.major * 10 + info.minor < 89) {
        uint16_t z[16 * 16] = {0};
        void *d;
        K_OK(kern_cuda_malloc(&d, sizeof z));
        K_OK(kern_cuda_h2d(d, z, sizeof z));
        const kern_cuda_status s = kern_cuda_gemm_fp8(bl, false, false, 16, 16, 16, 1.0f, d, 16, KERN_CUDA_E4M3, d,
                                                      16, KERN_CUDA_E4M3, KERN_CUDA_BF16, 0.0f, d, 16, NULL, 0);
        kern_cuda_free(d);
        kern_cuda_blas_destroy(bl);
        if (s != KERN_CUDA_EUNSUPPORTED) {
            printf("FAIL: FP8 GEMM below compute capability 8.9 returned %s, want EUNSUPPORTED\n",
                   kern_cuda_status_str(s));
            return 1;
        }
        printf("SKIPPED: compute capability %d.%d has no FP8 tensor cores (EUNSUPPORTED, as it should)\n",
               info.major, info.minor);
        return 77;
    }
    const kern_cuda_fp8 E4 = KERN_CUDA_E4M3, E5 = KERN_CUDA_E5M2;
    const gcase cases[] = {
        /* magnitudes an unapplied scale would ruin: below E4M3's normals (2^-6), below E5M2's
         * subnormals (2^-16), above E4M3's 448 */
        {0, 0, 64, 96, 128, 0, E4, E4, 1e-3, 1.0, 1.0f, 0.0f},     /* forward: activations x weights */
        {0, 1, 128, 64, 256, 8, E5, E4, 1e-6, 50.0, 1.0f, 0.0f},   /* dgrad: gradient (E5M2) x W^T */
        {1, 0, 64, 128, 192, 0, E4, E5, 20.0, 1e-6, 1.0f, 0.0f},   /* wgrad: X^T x gradient */
        {1, 1, 48, 80, 64, 16, E4, E4, 3e3, 0.01, 0.5f, 0.0f},     /* above E4M3's 448 unscaled: saturates */
        {0, 1, 32, 48, 96, 0, E5, E4, 1.0, 1.0, 1.0f, 1.0f},       /* accumulate: beta 1 (qkv_proj_bwd's dY) */
        {0, 0, 256, 256, 512, 0, E4, E4, 1.0, 1.0, 1.0f, 0.0f},    /* a longer k */
    };
    const size_t ws_bytes = kern_cuda_gemm_fp8_workspace(256, 256, 512);
    void *ws;
    K_OK(kern_cuda_malloc(&ws, ws_bytes));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(bl, &cases[i], i % 2 ? ws : NULL, ws_bytes);
    kern_cuda_free(ws);
    edge_cases(bl);
#ifdef KCUDA_FP8_TIMING
    if (argc > 1 && !strcmp(argv[1], "--time") && !fails) fails += kcuda_fp8_time(bl);
#else
    if (argc > 1 && !strcmp(argv[1], "--time")) printf("--time: not in this build (the host emulation)\n");
#endif
    kern_cuda_blas_destroy(bl);
    if (fails) {
        printf("kcuda_fp8: %d failure(s)\n", fails);
        return 1;
    }
    printf("kcuda_fp8: pass\n");
    return 0;
}
