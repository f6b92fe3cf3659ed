/* test_kcuda_attn.c: the CUDA attention library through its public C API.
 * Without a GPU it checks what needs none (argument checking, status
 * strings) and exits 77, which ctest reports as skipped. With one: flash
 * forward (every variant) and backward, and the cuBLAS reference, against
 * the float64 CPU reference on fresh inputs (seed printed), outputs
 * poisoned with NaN, the backward's accumulate contract, the merge, the
 * empty and no-key edge cases, and error paths. ulygpu does the same at
 * scale; this is the quick unit test. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kern_attn.h"
#include "kern_cuda.h"

static int fails, checks;

#define EXPECT(cond, ...)                    \
    do {                                     \
        checks++;                            \
        if (!(cond)) {                       \
            fails++;                         \
            printf("FAIL %s:%d: ", __FILE__, __LINE__); \
            printf(__VA_ARGS__);             \
            printf("\n");                    \
        }                                    \
    } while (0)

#define CK(call)                                                                                    \
    do {                                                                                            \
        kern_cuda_status st_ = (call);                                                              \
        if (st_ != KERN_CUDA_OK) {                                                                  \
            printf("FAIL %s: %s: %s\n", #call, kern_cuda_status_str(st_), kern_cuda_last_error()); \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

static uint64_t rs;
static double unif(void)
{
    rs += 0x9E3779B97F4A7C15ull;
    uint64_t z = rs;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}
static double normal(void) { return sqrt(-2 * log(unif())) * cos(6.283185307179586 * unif()); }

static double rel_err(const float *x, const float *r, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i]) || isnan(r[i])) return INFINITY;
        if (isinf(x[i]) || isinf(r[i])) {
            if (x[i] != r[i]) return INFINITY;
            continue;
        }
        num = fmax(num, fabs((double)x[i] - r[i]));
        den = fmax(den, fabs((double)r[i]));
    }
    return den > 0 ? num / den : num;
}

static void *dmalloc(size_t n)
{
    void *p;
    CK(kern_cuda_malloc(&p, n));
    return p;
}

static void host_only(void)
{
    struct kern_cuda_attn_desc d;
    memset(&d, 0, sizeof d);
    d.heads = 4;
    d.kv_heads = 2;
    d.n_q = 10;
    d.n_kv = 10;
    d.d = 128;
    d.scale = 0.1f;
    d.dtype = KERN_CUDA_BF16;
    EXPECT(kern_cuda_attn_check(&d, true) == KERN_CUDA_OK, "a valid desc");
    d.kv_heads = 3;
    EXPECT(kern_cuda_attn_check(&d, true) == KERN_CUDA_EINVAL, "heads not a multiple of kv_heads");
    d.kv_heads = 2;
    d.d = 96;
    EXPECT(kern_cuda_attn_check(&d, true) == KERN_CUDA_EUNSUPPORTED, "flash with d = 96");
    EXPECT(kern_cuda_attn_check(&d, false) == KERN_CUDA_OK, "reference with d = 96");
    d.d = 96;
    (void)kern_cuda_attn_check(&d, true);
    EXPECT(strstr(kern_cuda_last_error(), "64 or 128") != NULL, "the message names what is supported: %s",
           kern_cuda_last_error());
    d.d = 64;
    d.scale = NAN;
    EXPECT(kern_cuda_attn_check(&d, true) == KERN_CUDA_EINVAL, "NaN scale");
    d.scale = 0.1f;
    d.dtype = KERN_CUDA_F32;
    EXPECT(kern_cuda_attn_check(&d, true) == KERN_CUDA_EINVAL, "fp32 inputs");
    EXPECT(kern_cuda_attn_check(NULL, true) == KERN_CUDA_EINVAL, "NULL desc");
    EXPECT(strcmp(kern_cuda_status_str(KERN_CUDA_ENODEV), "no CUDA device or no usable driver") == 0, "status text");
    EXPECT(kern_cuda_dtype_size(KERN_CUDA_BF16) == 2 && kern_cuda_dtype_size(KERN_CUDA_F32) == 4, "dtype sizes");
    char b[160];
    EXPECT(strstr(kern_cuda_attn_fwd_variant_name(128, 0, b, sizeof b), "128 query rows") != NULL, "variant name");
}

static double tol_o(kern_cuda_dtype t) { return t == KERN_CUDA_BF16 ? 1.6e-2 : 2.5e-3; }
static double tol_g(kern_cuda_dtype t) { return t == KERN_CUDA_BF16 ? 3e-2 : 5e-3; }

static void one_case(int heads, int kvh, int nq_, int nkv_, int d, int causal, long long qo, long long ko,
                     kern_cuda_dtype t, kern_cuda_blas *blas)
{
    char nm[128];
    snprintf(nm, sizeof nm, "%s h%d/%d q%d kv%d d%d %s off %lld/%lld", kern_cuda_dtype_name(t), heads, kvh, nq_, nkv_,
             d, causal ? "causal" : "full", qo, ko);
    const size_t nq = (size_t)heads * nq_ * d, nkv = (size_t)kvh * nkv_ * d, rows = (size_t)heads * nq_;
    uint16_t *h16[4];
    float *f[4];
    const size_t cnt[4] = {nq, nkv, nkv, nq};
    void *dv16[4];
    for (int i = 0; i < 4; i++) {
        h16[i] = malloc(cnt[i] * 2 + 2);
        f[i] = malloc(cnt[i] * 4 + 4);
        for (size_t j = 0; j < cnt[i]; j++) {
            h16[i][j] = kern_cuda_host_from_f32((float)normal(), t);
            f[i][j] = kern_cuda_host_to_f32(h16[i][j], t);
        }
        dv16[i] = dmalloc(cnt[i] * 2 + 2);
        CK(kern_cuda_h2d(dv16[i], h16[i], cnt[i] * 2));
    }
    struct kern_attn_desc rd;
    memset(&rd, 0, sizeof rd);
    rd.heads = heads, rd.kv_heads = kvh, rd.n_q = nq_, rd.n_kv = nkv_, rd.d = d;
    rd.scale = (float)(1 / sqrt((double)d));
    rd.causal = causal, rd.q_off = qo, rd.kv_off = ko, rd.acc = KERN_ACC_F64;
    float *o_ref = malloc(nq * 4 + 4), *l_ref = malloc(rows * 4 + 4);
    EXPECT(kern_attn_ref_fwd(&rd, f[0], f[1], f[2], o_ref, l_ref) == KERN_OK, "CPU reference");
    struct kern_cuda_attn_desc ds;
    memset(&ds, 0, sizeof ds);
    ds.heads = heads, ds.kv_heads = kvh, ds.n_q = nq_, ds.n_kv = nkv_, ds.d = d, ds.scale = rd.scale;
    ds.causal = causal, ds.q_off = qo, ds.kv_off = ko, ds.dtype = t;
    void *o = dmalloc(nq * 2 + 2);
    float *lse = dmalloc(rows * 4 + 4), *o32 = dmalloc(nq * 4 + 4);
    uint16_t *ho16 = malloc(nq * 2 + 2);
    float *ho = malloc(nq * 4 + 4), *hl = malloc(rows * 4 + 4), *o_keep = malloc(nq * 4 + 4), *l_keep = malloc(rows * 4 + 4);
    for (int var = kern_cuda_attn_fwd_variants() - 1; var >= 0; var--) {
        CK(kern_cuda_fill_nan(o, t, nq, NULL));
        CK(kern_cuda_fill_nan(lse, KERN_CUDA_F32, rows, NULL));
        CK(kern_cuda_attn_fwd_variant(&ds, dv16[0], dv16[1], dv16[2], o, lse, var, NULL));
        CK(kern_cuda_d2h(ho16, o, nq * 2));
        CK(kern_cuda_d2h(hl, lse, rows * 4));
        kern_cuda_host_widen(ho16, ho, nq, t);
        const double eo = rel_err(ho, o_ref, nq), el = rel_err(hl, l_ref, rows);
        EXPECT(eo <= tol_o(t), "%s v%d: O rel err %.3e", nm, var, eo);
        EXPECT(el <= 2e-5, "%s v%d: lse rel err %.3e", nm, var, el);
    }
    memcpy(o_keep, ho, nq * 4);
    memcpy(l_keep, hl, rows * 4);
    size_t wmin, wall;
    kern_cuda_attn_ref_workspace(&ds, true, &wmin, &wall);
    void *ws = dmalloc(wall + 16);
    CK(kern_cuda_fill_nan(o32, KERN_CUDA_F32, nq, NULL));
    CK(kern_cuda_attn_ref_fwd(blas, &ds, dv16[0], dv16[1], dv16[2], o32, lse, ws, wall));
    CK(kern_cuda_d2h(ho, o32, nq * 4));
    CK(kern_cuda_d2h(hl, lse, rows * 4));
    EXPECT(rel_err(ho, o_ref, nq) <= tol_o(t), "%s cublas: O rel err %.3e", nm, rel_err(ho, o_ref, nq));
    EXPECT(rel_err(hl, l_ref, rows) <= 2e-5, "%s cublas: lse rel err %.3e", nm, rel_err(hl, l_ref, rows));
    /* backward: the flash forward's O and lse, random starting gradients kept and added to */
    kern_cuda_host_round(o_keep, ho16, nq, t);
    CK(kern_cuda_h2d(o, ho16, nq * 2));
    CK(kern_cuda_h2d(lse, l_keep, rows * 4));
    float *g_ref[3], *g0[3], *gh[3];
    float *gd[3];
    const size_t gc[3] = {nq, nkv, nkv};
    for (int i = 0; i < 3; i++) {
        g_ref[i] = calloc(gc[i] + 1, 4);
        g0[i] = malloc(gc[i] * 4 + 4);
        gh[i] = malloc(gc[i] * 4 + 4);
        gd[i] = dmalloc(gc[i] * 4 + 4);
        for (size_t j = 0; j < gc[i]; j++) g0[i][j] = (float)normal();
    }
    EXPECT(kern_attn_ref_bwd(&rd, f[0], f[1], f[2], o_keep, l_keep, f[3], g_ref[0], g_ref[1], g_ref[2]) == KERN_OK,
           "CPU reference backward");
    for (int impl = 0; impl < 2; impl++) {
        for (int i = 0; i < 3; i++) CK(kern_cuda_h2d(gd[i], g0[i], gc[i] * 4));
        if (impl == 0)
            CK(kern_cuda_attn_bwd(&ds, dv16[0], dv16[1], dv16[2], o, lse, dv16[3], gd[0], gd[1], gd[2], NULL, NULL));
        else
            CK(kern_cuda_attn_ref_bwd(blas, &ds, dv16[0], dv16[1], dv16[2], o, lse, dv16[3], gd[0], gd[1], gd[2], ws,
                                      wall));
        static const char *gn[3] = {"dQ", "dK", "dV"};
        for (int i = 0; i < 3; i++) {
            CK(kern_cuda_d2h(gh[i], gd[i], gc[i] * 4));
            for (size_t j = 0; j < gc[i]; j++) gh[i][j] -= g0[i][j];
            const double e = rel_err(gh[i], g_ref[i], gc[i]);
            EXPECT(e <= tol_g(t), "%s %s: %s rel err %.3e", nm, impl ? "cublas" : "flash", gn[i], e);
        }
    }
    printf("ok %s\n", nm);
    for (int i = 0; i < 4; i++) {
        free(h16[i]);
        free(f[i]);
        CK(kern_cuda_free(dv16[i]));
    }
    for (int i = 0; i < 3; i++) {
        free(g_ref[i]);
        free(g0[i]);
        free(gh[i]);
        CK(kern_cuda_free(gd[i]));
    }
    CK(kern_cuda_free(o));
    CK(kern_cuda_free(lse));
    CK(kern_cuda_free(o32));
    CK(kern_cuda_free(ws));
    free(o_ref);
    free(l_ref);
    free(ho16);
    free(ho);
    free(hl);
    free(o_keep);
    free(l_keep);
}

/* merge: two disjoint key sets merged equal one call; -inf sides */
static void merge_case(void)
{
    const int heads = 2, n = 3, d = 4;
    float o[24], lse[6], ob[24], lb[6];
    for (int i = 0; i < 24; i++) o[i] = (float)i, ob[i] = (float)(100 + i);
    const float la[6] = {0.f, -INFINITY, 1.f, -INFINITY, 2.f, 0.5f};
    const float lbv[6] = {0.f, 3.f, -INFINITY, -INFINITY, 2.f, -1.f};
    memcpy(lse, la, sizeof lse);
    memcpy(lb, lbv, sizeof lb);
    float *dO = dmalloc(sizeof o), *dL = dmalloc(sizeof lse), *dOb = dmalloc(sizeof ob), *dLb = dmalloc(sizeof lb);
    CK(kern_cuda_h2d(dO, o, sizeof o));
    CK(kern_cuda_h2d(dL, lse, sizeof lse));
    CK(kern_cuda_h2d(dOb, ob, sizeof ob));
    CK(kern_cuda_h2d(dLb, lb, sizeof lb));
    CK(kern_cuda_attn_merge(heads, n, d, dO, dL, dOb, KERN_CUDA_F32, dLb, NULL));
    float ro[24], rl[6];
    CK(kern_cuda_d2h(ro, dO, sizeof ro));
    CK(kern_cuda_d2h(rl, dL, sizeof rl));
    memcpy(lse, la, sizeof lse);
    EXPECT(kern_attn_merge(heads, n, d, o, lse, ob, lb) == KERN_OK, "CPU merge");
    EXPECT(rel_err(ro, o, 24) < 1e-6, "merged O equals the CPU merge (%.3e)", rel_err(ro, o, 24));
    EXPECT(rel_err(rl, lse, 6) < 1e-6, "merged lse equals the CPU merge");
    EXPECT(rl[3] == -INFINITY, "both empty stays -inf");
    CK(kern_cuda_free(dO));
    CK(kern_cuda_free(dL));
    CK(kern_cuda_free(dOb));
    CK(kern_cuda_free(dLb));
}

int main(int argc, char **argv)
{
    host_only();
    int n = 0;
    const kern_cuda_status st = kern_cuda_device_count(&n);
    if (st != KERN_CUDA_OK || n < 1) {
        printf("test_kcuda_attn: %d host-side checks, %d failed; SKIP the GPU part: no usable CUDA device (%s)\n",
               checks, fails, kern_cuda_last_error());
        return fails ? 1 : 77;
    }
    struct kern_cuda_device_info info;
    CK(kern_cuda_device_query(0, &info));
    if (info.major < 8) {
        printf("test_kcuda_attn: SKIP: %s is sm_%d%d (needs sm_80+)\n", info.name, info.major, info.minor);
        return fails ? 1 : 77;
    }
    /* --small: two small cases (for compute-sanitizer, whose tools run kernels 10-100x slower) */
    int small = 0, argi = 1;
    if (argc > 1 && !strcmp(argv[1], "--small")) small = 1, argi = 2;
    rs = argc > argi ? strtoull(argv[argi], NULL, 0) : (uint64_t)time(NULL);
    printf("test_kcuda_attn on %s, seed %llu%s\n", info.name, (unsigned long long)rs, small ? ", small" : "");
    kern_cuda_blas *blas;
    CK(kern_cuda_blas_create(&blas));
    if (small) {
        one_case(2, 1, 130, 150, 128, 1, 0, 0, KERN_CUDA_BF16, blas);
        one_case(2, 2, 70, 100, 64, 0, 0, 0, KERN_CUDA_FP16, blas);
    } else {
        for (int t = 0; t < 2; t++)
            for (int d = 64; d <= 128; d += 64)
                for (int causal = 0; causal < 2; causal++)
                    one_case(4, 2, 200, 200, d, causal, 0, 0, t ? KERN_CUDA_FP16 : KERN_CUDA_BF16, blas);
        one_case(2, 2, 77, 333, 128, 1, 256, 0, KERN_CUDA_BF16, blas); /* later ring block */
        one_case(3, 1, 150, 129, 64, 1, 0, 40, KERN_CUDA_FP16, blas);  /* rows that see no key */
        one_case(2, 2, 64, 0, 64, 0, 0, 0, KERN_CUDA_BF16, blas);      /* no keys */
    }
    merge_case();
    /* error paths: a bad shape is refused before any launch */
    struct kern_cuda_attn_desc bad;
    memset(&bad, 0, sizeof bad);
    bad.heads = 2, bad.kv_heads = 2, bad.n_q = 4, bad.n_kv = 4, bad.d = 96, bad.scale = 1, bad.dtype = KERN_CUDA_BF16;
    EXPECT(kern_cuda_attn_fwd(&bad, NULL, NULL, NULL, NULL, NULL, NULL) == KERN_CUDA_EUNSUPPORTED, "d = 96 refused");
    bad.d = 64;
    EXPECT(kern_cuda_attn_fwd(&bad, NULL, NULL, NULL, NULL, NULL, NULL) == KERN_CUDA_EINVAL, "NULL buffers refused");
    CK(kern_cuda_blas_destroy(blas));
    printf("test_kcuda_attn: %d checks, %d failed\n", checks, fails);
    return fails ? 1 : 0;
}
