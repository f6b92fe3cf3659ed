/* test_kern_api.c: the contract around the kernels rather than their
 * numbers: the registry, argument checking (every implementation must
 * reject the same bad input the same way, never crash), empty shapes, the
 * GEMM wrapper against a naive product in all four transpose cases, and the
 * OpenBLAS thread count surviving a flash call. */
#include <stdbool.h>

#include "kern_test_util.h"

static void registry(void)
{
    kt_expect("registry: ref found", kern_attn_find("ref") && strcmp(kern_attn_find("ref")->name, "ref") == 0);
    kt_expect("registry: flash found", kern_attn_find("flash") && kern_attn_find("flash")->fwd &&
                                           kern_attn_find("flash")->bwd);
    kt_expect("registry: unknown name gives NULL", kern_attn_find("nope") == NULL && kern_attn_find(NULL) == NULL);
    bool all = kern_attn_impl_count() >= 2;
    for (size_t i = 0; i < kern_attn_impl_count(); i++) {
        const struct kern_attn_impl *im = kern_attn_impl_at(i);
        all = all && im && im->name && im->summary && im->fwd && im->bwd && kern_attn_find(im->name) == im;
    }
    kt_expect("registry: every entry complete and findable by its name", all);
    kt_expect("registry: past the end gives NULL", kern_attn_impl_at(kern_attn_impl_count()) == NULL);
    kt_expect("status strings", strcmp(kern_status_str(KERN_OK), "ok") == 0 &&
                                    strlen(kern_status_str(KERN_EINVAL)) > 0 &&
                                    strlen(kern_status_str((kern_status)42)) > 0);
}

/* Each bad desc must give KERN_EINVAL from every implementation, fwd and bwd. */
static void bad_input(void)
{
    float buf[4096];
    memset(buf, 0, sizeof buf);
    const struct kern_attn_desc good = {.heads = 2, .kv_heads = 1, .n_q = 4, .n_kv = 4, .d = 8, .scale = 0.35f};
    struct {
        const char *what;
        struct kern_attn_desc ds;
    } bad[] = {
        {"heads 0", good}, {"kv_heads 0", good}, {"heads not a multiple of kv_heads", good},
        {"n_q < 0", good}, {"n_kv < 0", good}, {"d 0", good}, {"scale NaN", good},
        {"scale inf", good}, {"acc out of range", good}, {"threads < 0", good}, {"q_off huge", good},
    };
    bad[0].ds.heads = 0;
    bad[1].ds.kv_heads = 0;
    bad[2].ds.heads = 3, bad[2].ds.kv_heads = 2;
    bad[3].ds.n_q = -1;
    bad[4].ds.n_kv = -1;
    bad[5].ds.d = 0;
    bad[6].ds.scale = NAN;
    bad[7].ds.scale = INFINITY;
    bad[8].ds.acc = (kern_acc)7;
    bad[9].ds.threads = -1;
    bad[10].ds.q_off = INT64_MAX;
    for (size_t i = 0; i < kern_attn_impl_count(); i++) {
        const struct kern_attn_impl *im = kern_attn_impl_at(i);
        bool ok = im->fwd(NULL, buf, buf, buf, buf, buf) == KERN_EINVAL;
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            const kern_status f = im->fwd(&bad[b].ds, buf, buf, buf, buf, buf);
            const kern_status g = im->bwd(&bad[b].ds, buf, buf, buf, buf, buf, buf, buf, buf, buf);
            if (f != KERN_EINVAL || g != KERN_EINVAL) {
                printf("     %s accepted bad desc: %s\n", im->name, bad[b].what);
                ok = false;
            }
        }
        /* NULL buffers: rejected for non-empty tensors, fine for empty ones. */
        ok = ok && im->fwd(&good, NULL, buf, buf, buf, buf) == KERN_EINVAL;
        ok = ok && im->bwd(&good, buf, buf, buf, buf, buf, buf, buf, NULL, buf) == KERN_EINVAL;
        struct kern_attn_desc empty = good;
        empty.n_q = 0;
        empty.n_kv = 0;
        ok = ok && im->fwd(&empty, NULL, NULL, NULL, NULL, NULL) == KERN_OK;
        ok = ok && im->bwd(&empty, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == KERN_OK;
        char what[96];
        snprintf(what, sizeof what, "%s: rejects bad descs and NULL buffers, accepts empty shapes", im->name);
        kt_expect(what, ok);
        ok = im->fwd(&good, buf, buf, buf, buf, buf) == KERN_OK;
        snprintf(what, sizeof what, "%s: accepts the good desc", im->name);
        kt_expect(what, ok);
    }
}

static void gemm(void)
{
    const int m = 37, n = 29, k = 45, pad = 3;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            /* Stored A is m x k (k x m if transposed) with padded rows. */
            const int a_rows = ta ? k : m, a_cols = ta ? m : k, lda = a_cols + pad;
            const int b_rows = tb ? n : k, b_cols = tb ? k : n, ldb = b_cols + pad, ldc = n + pad;
            float *a = kt_normal_new((size_t)a_rows * lda, 1.0), *b = kt_normal_new((size_t)b_rows * ldb, 1.0);
            float *c = kt_normal_new((size_t)m * ldc, 1.0), *want = kt_copy_new(c, (size_t)m * ldc);
            const float alpha = 0.75f, beta = -0.5f;
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    double s = 0.0;
                    for (int l = 0; l < k; l++) {
                        const double av = ta ? a[(size_t)l * lda + i] : a[(size_t)i * lda + l];
                        const double bv = tb ? b[(size_t)j * ldb + l] : b[(size_t)l * ldb + j];
                        s += av * bv;
                    }
                    want[(size_t)i * ldc + j] = (float)(alpha * s + beta * want[(size_t)i * ldc + j]);
                }
            const kern_status st = kern_gemm_f32(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
            char what[96];
            snprintf(what, sizeof what, "kern_gemm_f32 trans_a %d trans_b %d vs naive float64", ta, tb);
            /* k = 45 products in float32: sqrt(45) * u * few = 1e-6; the
             * padding columns of C must stay as they were (compared too). */
            kt_check(what, st == KERN_OK ? kt_rel_err(c, want, (size_t)m * ldc) : INFINITY, 1e-5);
            free(a), free(b), free(c), free(want);
        }
    float x[4] = {0};
    kt_expect("kern_gemm_f32 rejects lda < row length",
              kern_gemm_f32(false, false, 2, 2, 2, 1, x, 1, x, 2, 0, x, 2) == KERN_EINVAL);
    kt_expect("kern_gemm_f32 accepts m = 0 with NULLs",
              kern_gemm_f32(false, false, 0, 2, 2, 1, NULL, 2, NULL, 2, 0, NULL, 2) == KERN_OK);
}

static void blas_threads(void)
{
    const int before = kern_blas_threads_get();
    printf("     OpenBLAS: %d threads, %s\n", before, kern_blas_config_get());
    const struct kern_attn_desc ds = {.heads = 4, .kv_heads = 4, .n_q = 300, .n_kv = 300, .d = 64,
                                      .scale = 0.125f, .threads = 2};
    const size_t n = (size_t)4 * 300 * 64;
    float *q = kt_normal_new(n, 1.0), *o = kt_alloc(n), *lse = kt_alloc(4 * 300);
    float *dq = calloc(n, sizeof(float)), *dk = calloc(n, sizeof(float)), *dv = calloc(n, sizeof(float));
    kern_attn_flash_fwd(&ds, q, q, q, o, lse);
    kern_attn_flash_bwd(&ds, q, q, q, o, lse, o, dq, dk, dv);
    kt_expect("OpenBLAS thread count unchanged by flash fwd + bwd with 2 workers",
              kern_blas_threads_get() == before);
    free(q), free(o), free(lse), free(dq), free(dk), free(dv);
}

/* The SGEMM self-check attn_bench uses to accept an OpenBLAS kernel set:
 * passes OpenBLAS's own SGEMM within the float32 bound n 2^-24, and says
 * INFINITY for sizes it cannot check. */
static void gemm_check(void)
{
    printf("     OpenBLAS kernel set: %s\n", kern_blas_core_get());
    kt_expect("kern_blas_core_get names a kernel set", kern_blas_core_get()[0] != '\0');
    const int n = 96;
    const double err = kern_gemm_check(n, 7u);
    printf("     kern_gemm_check(%d): %.3g (bound %.3g)\n", n, err, n / 16777216.0);
    kt_expect("kern_gemm_check passes a correct SGEMM", err <= n / 16777216.0);
    kt_expect("kern_gemm_check refuses n = 0", isinf(kern_gemm_check(0, 1u)));
    kt_expect("kern_gemm_check refuses n > 1024", isinf(kern_gemm_check(1025, 1u)));
}

int main(void)
{
    kt_seed(3);
    registry();
    bad_input();
    gemm();
    gemm_check();
    blas_threads();
    return kt_finish("test_kern_api");
}
