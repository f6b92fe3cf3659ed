/* gemm.c: the one place that talks to OpenBLAS directly: the row-major
 * SGEMM wrapper the harness uses for its projections, what the BLAS is and
 * how many threads it runs, and the switch that makes it single-threaded
 * while our own workers call it on small blocks. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <cblas.h>

#include "kern_internal.h"

/* OpenBLAS's cblas.h pulls in openblas_config.h; another CBLAS does not, and
 * then thread control is simply not available (one thread assumed). */
#ifdef OPENBLAS_CONFIG_H
#define KERN_HAVE_OPENBLAS 1
#else
#define KERN_HAVE_OPENBLAS 0
#endif

kern_status kern_gemm_f32(bool trans_a, bool trans_b, int m, int n, int k,
                          float alpha, const float *a, int lda,
                          const float *b, int ldb,
                          float beta, float *c, int ldc)
{
    if (m < 0 || n < 0 || k < 0) return KERN_EINVAL;
    /* Stored shapes: A is m x k (k x m if trans_a), B is k x n (n x k if
     * trans_b); a row stride shorter than a stored row would alias rows. */
    const int a_cols = trans_a ? m : k, b_cols = trans_b ? k : n;
    if (lda < (a_cols > 1 ? a_cols : 1) || ldb < (b_cols > 1 ? b_cols : 1) || ldc < (n > 1 ? n : 1))
        return KERN_EINVAL;
    if (m == 0 || n == 0) return KERN_OK;
    if (!c || (k > 0 && (!a || !b))) return KERN_EINVAL;
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return KERN_OK;
}

void kern_blas_threads_set(int n)
{
#if KERN_HAVE_OPENBLAS
    if (n > 0) openblas_set_num_threads(n);
#else
    (void)n;
#endif
}

int kern_blas_threads_get(void)
{
#if KERN_HAVE_OPENBLAS
    int t = openblas_get_num_threads();
    return t > 0 ? t : 1;
#else
    return 1;
#endif
}

const char *kern_blas_config_get(void)
{
#if KERN_HAVE_OPENBLAS
    const char *s = openblas_get_config();
    return s ? s : "OpenBLAS";
#else
    return "unknown CBLAS";
#endif
}

/* The kernel set OpenBLAS picked when it loaded (or OPENBLAS_CORETYPE named). */
#if KERN_HAVE_OPENBLAS
const char *kern_blas_core_get(void) { return openblas_get_corename() ? openblas_get_corename() : "unknown"; }
#else
const char *kern_blas_core_get(void) { return "unknown"; }
#endif

double kern_gemm_check(int n, unsigned seed)
{
    if (n < 1 || n > 1024) return INFINITY;
    const size_t nn = (size_t)n * n;
    float *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b), *c = malloc(nn * sizeof *c);
    double worst = INFINITY;
    if (a && b && c) {
        for (size_t i = 0; i < nn; i++) {
            seed = seed * 1664525u + 1013904223u;
            a[i] = (float)((seed >> 8) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
            seed = seed * 1664525u + 1013904223u;
            b[i] = (float)((seed >> 8) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
        }
        /* C = A B^T, the shape attention's QK^T has */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        worst = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double ref = 0, mag = 0;
                for (int k = 0; k < n; k++) {
                    ref += (double)a[(size_t)i * n + k] * b[(size_t)j * n + k];
                    mag += fabs((double)a[(size_t)i * n + k] * b[(size_t)j * n + k]);
                }
                const double e = fabs((double)c[(size_t)i * n + j] - ref) / (mag > 0 ? mag : 1);
                if (!(e <= worst)) worst = e; /* NaN too */
            }
    }
    free(a), free(b), free(c);
    return worst;
}

/* Reference count of callers inside a serial region, so that two threads
 * running flash at once do not restore each other's thread count early. */
static pthread_mutex_t blas_serial_lock = PTHREAD_MUTEX_INITIALIZER;
static int blas_serial_users;
static int blas_serial_saved = 1;

void kern_blas_serial_enter(void)
{
    pthread_mutex_lock(&blas_serial_lock);
    if (blas_serial_users++ == 0) {
        blas_serial_saved = kern_blas_threads_get();
#if KERN_HAVE_OPENBLAS
        if (blas_serial_saved != 1) openblas_set_num_threads(1);
#endif
    }
    pthread_mutex_unlock(&blas_serial_lock);
}

void kern_blas_serial_leave(void)
{
    pthread_mutex_lock(&blas_serial_lock);
    if (--blas_serial_users == 0) {
#if KERN_HAVE_OPENBLAS
        if (blas_serial_saved != 1) openblas_set_num_threads(blas_serial_saved);
#endif
    }
    pthread_mutex_unlock(&blas_serial_lock);
}

/* Measured on the project's 2-core Zen VM with Debian's OpenBLAS 0.3.21:
 * OpenBLAS keeps a pool of work buffers and hands each concurrent caller
 * the first free one. Until a buffer has served one SGEMM with a B panel of
 * >= ~512 columns, small GEMMs run in it at a third of their speed (12
 * against 34 GFLOP/s single-threaded for a 128 x 256 x 128 block, the size
 * of the flash kernel's), however many small calls it serves; one wide GEMM
 * fixes that buffer for good.
 * Plain loops are unaffected and it is not denormals; the cause is inside
 * OpenBLAS and not pinned down. The cure: one 34 MFLOP GEMM (~1 ms) per
 * buffer, run by as many threads at once as will call SGEMM at once (see
 * attn_flash.c's pool), so that each of them lands in a different buffer. */
void kern_blas_warm_gemm(void)
{
    enum { M = 128, N = 1024, K = 128 };
    float *a = calloc((size_t)M * K, sizeof *a), *b = calloc((size_t)N * K, sizeof *b);
    float *c = calloc((size_t)M * N, sizeof *c);
    if (a && b && c)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, a, K, b, K, 0.0f, c, N);
    free(a);
    free(b);
    free(c);
}

static int blas_warm_count; /* concurrent callers whose buffers are warm */

int kern_blas_warm_needed(int nthreads)
{
    pthread_mutex_lock(&blas_serial_lock);
    const int need = nthreads > blas_warm_count;
    if (need) blas_warm_count = nthreads;
    pthread_mutex_unlock(&blas_serial_lock);
    return need;
}
