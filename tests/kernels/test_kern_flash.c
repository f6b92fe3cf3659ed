/* test_kern_flash.c: the flash kernel against the float64-accumulated
 * reference, forward and backward, over the shapes ring attention and GQA
 * produce (n not a multiple of a block, d 64 and 128, GQA and MQA, causal
 * with offsets, rows that see nothing), plus proof that the comparison can
 * fail: perturbed outputs and off-by-one masks must be rejected. */
#include <stdbool.h>

#include "kern_test_util.h"

/* Tolerances on the norm-wise relative error max|x - ref| / max|ref|, for
 * float32 data and float32 accumulation (flash: SGEMM blocks and a
 * polynomial exp2) against float64 accumulation (the reference).
 *
 * u = 2^-24 = 6.0e-8. A sum of n float32 terms is off by at most n*u of the
 * sum of the terms' magnitudes (worst case) and typically by sqrt(n)*u,
 * because the roundings are independent. Each output here is a d-term score
 * dot product feeding an n-term weighted sum, n <= 515 + 128 in these cases
 * (and <= 1200 query rows for dK, dV), so the typical error is
 * sqrt(643)*u = 1.5e-6 of the magnitudes; the exp2 polynomial adds <= 2 ulp
 * per weight. The worst-case bound (643*u = 4e-5 of the magnitudes, times
 * the ratio below) is never approached by random data, so the tolerances
 * sit ~10-20x above the typical error instead, still far below what a bug
 * makes: one key wrongly masked moves O by ~1 relative (see the off-by-one
 * checks at the end), a lost rescale or block by more.
 *
 * TOL_FWD: O is an average of V rows, so max|V| (the magnitudes) is up to
 *   ~20x max|O| for random data: 1.5e-6 * 20 = 3e-5.
 * TOL_LSE: lse = log(sum) has absolute error ~ the sum's relative error,
 *   1.5e-6, and |lse| is 3..10 here: 5e-7 relative; 2e-6 allowed.
 * TOL_BWD: dS = P o (dP - D) subtracts two O(sqrt(d)) = O(10) numbers whose
 *   difference is the signal (10x cancellation), and dK, dV sum up to
 *   n_q * group + d = 1328 terms: sqrt(1328) * u * 10 = 2.2e-5; 1e-4.
 * The float32-accumulating reference is held to the same tolerances: they
 * are what plain float32 achieves, not what this kernel happens to get. */
#define TOL_FWD 3e-5
#define TOL_LSE 2e-6
#define TOL_BWD 1e-4
/* Calling backward twice into the same buffers must give twice one call:
 * only the order of the blocked float32 sums differs, a few u per element. */
#define TOL_ACCUM 2e-6

struct tcase {
    const char *name;
    int heads, kv_heads, n_q, n_kv, d;
    bool causal;
    int64_t q_off, kv_off;
    int threads;
};

static const struct tcase cases[] = {
    {"mha 2/2 d64 non-causal n 200", 2, 2, 200, 200, 64, false, 0, 0, 0},
    {"gqa 4/2 d128 causal n 300", 4, 2, 300, 300, 128, true, 0, 0, 0},
    {"mqa 4/1 d64 causal q = last 130 of 333 keys", 4, 1, 130, 333, 64, true, 203, 0, 0},
    {"gqa 2/1 d128 causal ring step q_off 1000 kv_off 900", 2, 1, 257, 190, 128, true, 1000, 900, 0},
    {"mha 2/2 d64 causal kv_off 100: 100 rows see nothing", 2, 2, 150, 260, 64, true, 0, 100, 0},
    {"mqa 4/1 d128 non-causal n_q 77 n_kv 515", 4, 1, 77, 515, 128, false, 0, 0, 0},
    {"gqa 2/1 d64 causal block wholly in the future", 2, 1, 64, 64, 64, true, 0, 64, 0},
    {"mha 2/2 d64 n_kv 0", 2, 2, 10, 0, 64, false, 0, 0, 0},
    {"gqa 4/2 d64 causal, 3 workers", 4, 2, 300, 300, 64, true, 0, 0, 3},
    {"gqa 4/2 d128 causal, 1 worker (BLAS threads untouched)", 4, 2, 190, 260, 128, true, 70, 0, 1},
};

struct tensors {
    size_t nq, nkv, rows; /* elements of Q, of K, rows of lse */
    float *q, *k, *v, *dout;
};

static void tensors_make(struct tensors *t, const struct kern_attn_desc *ds)
{
    t->rows = (size_t)ds->heads * ds->n_q;
    t->nq = t->rows * ds->d;
    t->nkv = (size_t)ds->kv_heads * ds->n_kv * ds->d;
    t->q = kt_normal_new(t->nq, 1.0);
    t->k = kt_normal_new(t->nkv, 1.0);
    t->v = kt_normal_new(t->nkv, 1.0);
    t->dout = kt_normal_new(t->nq, 1.0);
}

static void tensors_free(struct tensors *t)
{
    free(t->q);
    free(t->k);
    free(t->v);
    free(t->dout);
}

struct result {
    float *o, *lse, *dq, *dk, *dv;
};

static void result_alloc(struct result *r, const struct tensors *t)
{
    r->o = kt_alloc(t->nq);
    r->lse = kt_alloc(t->rows);
    r->dq = calloc(t->nq + 1, sizeof(float));
    r->dk = calloc(t->nkv + 1, sizeof(float));
    r->dv = calloc(t->nkv + 1, sizeof(float));
}

static void result_free(struct result *r)
{
    free(r->o);
    free(r->lse);
    free(r->dq);
    free(r->dk);
    free(r->dv);
}

/* Forward, then backward from zeroed gradients using the REFERENCE's O and
 * lse (ref_o, ref_lse; NULL = this impl's own), so a backward check tests
 * the backward alone. */
static kern_status run_impl(const struct kern_attn_impl *impl, const struct kern_attn_desc *ds,
                            const struct tensors *t, struct result *r, const float *ref_o,
                            const float *ref_lse)
{
    kern_status st = impl->fwd(ds, t->q, t->k, t->v, r->o, r->lse);
    if (st != KERN_OK) return st;
    return impl->bwd(ds, t->q, t->k, t->v, ref_o ? ref_o : r->o, ref_lse ? ref_lse : r->lse, t->dout,
                     r->dq, r->dk, r->dv);
}

static void compare(const char *impl, const char *tc, const struct tensors *t,
                    const struct result *x, const struct result *ref)
{
    char what[160];
#define CMP(field, n, tol)                                                  \
    do {                                                                    \
        snprintf(what, sizeof what, "%s %-3s %s", impl, #field, tc);        \
        kt_check(what, kt_rel_err(x->field, ref->field, (n)), (tol));       \
    } while (0)
    CMP(o, t->nq, TOL_FWD);
    CMP(lse, t->rows, TOL_LSE);
    CMP(dq, t->nq, TOL_BWD);
    CMP(dk, t->nkv, TOL_BWD);
    CMP(dv, t->nkv, TOL_BWD);
#undef CMP
}

static void check_case(const struct tcase *tc)
{
    const struct kern_attn_desc ds = {
        .heads = tc->heads, .kv_heads = tc->kv_heads, .n_q = tc->n_q, .n_kv = tc->n_kv, .d = tc->d,
        .scale = 1.0f / sqrtf((float)tc->d), .causal = tc->causal, .q_off = tc->q_off,
        .kv_off = tc->kv_off, .acc = KERN_ACC_F64, .threads = tc->threads,
    };
    struct kern_attn_desc ds32 = ds;
    ds32.acc = KERN_ACC_F32;
    struct tensors t;
    tensors_make(&t, &ds);
    struct result ref, ref32, fl;
    result_alloc(&ref, &t);
    result_alloc(&ref32, &t);
    result_alloc(&fl, &t);
    const struct kern_attn_impl *iref = kern_attn_find("ref"), *ifl = kern_attn_find("flash");

    kern_status s1 = run_impl(iref, &ds, &t, &ref, NULL, NULL);
    kern_status s2 = run_impl(iref, &ds32, &t, &ref32, ref.o, ref.lse);
    kern_status s3 = run_impl(ifl, &ds, &t, &fl, ref.o, ref.lse);
    char what[160];
    snprintf(what, sizeof what, "status ok: %s", tc->name);
    if (!kt_expect(what, s1 == KERN_OK && s2 == KERN_OK && s3 == KERN_OK)) goto out;
    compare("ref32", tc->name, &t, &ref32, &ref);
    compare("flash", tc->name, &t, &fl, &ref);

    /* Accumulation contract: a second backward into the same buffers adds
     * the same gradient again. */
    if (t.nkv > 0) {
        float *dq1 = kt_copy_new(fl.dq, t.nq), *dk1 = kt_copy_new(fl.dk, t.nkv), *dv1 = kt_copy_new(fl.dv, t.nkv);
        ifl->bwd(&ds, t.q, t.k, t.v, ref.o, ref.lse, t.dout, fl.dq, fl.dk, fl.dv);
        for (size_t i = 0; i < t.nq; i++) dq1[i] *= 2.0f;
        for (size_t i = 0; i < t.nkv; i++) {
            dk1[i] *= 2.0f;
            dv1[i] *= 2.0f;
        }
        const double e = fmax(kt_rel_err(fl.dq, dq1, t.nq),
                              fmax(kt_rel_err(fl.dk, dk1, t.nkv), kt_rel_err(fl.dv, dv1, t.nkv)));
        snprintf(what, sizeof what, "flash bwd accumulates (2 calls = 2x) %s", tc->name);
        kt_check(what, e, TOL_ACCUM);
        free(dq1);
        free(dk1);
        free(dv1);
    }
out:
    result_free(&ref);
    result_free(&ref32);
    result_free(&fl);
    tensors_free(&t);
}

/* The checks above only mean something if the comparator rejects what a
 * bug would produce. Each of these must FAIL its comparison. */
static void check_can_fail(void)
{
    const struct kern_attn_desc ds = {.heads = 2, .kv_heads = 1, .n_q = 150, .n_kv = 260, .d = 64,
                                      .scale = 0.125f, .causal = true, .q_off = 0, .kv_off = 100,
                                      .acc = KERN_ACC_F64};
    struct tensors t;
    tensors_make(&t, &ds);
    struct result ref, fl;
    result_alloc(&ref, &t);
    result_alloc(&fl, &t);
    run_impl(kern_attn_find("ref"), &ds, &t, &ref, NULL, NULL);
    run_impl(kern_attn_find("flash"), &ds, &t, &fl, ref.o, ref.lse);

    /* Baseline: unperturbed passes, so any rejection below is the perturbation's. */
    kt_expect("can-fail baseline: flash O passes", kt_rel_err(fl.o, ref.o, t.nq) <= TOL_FWD);

    /* One output element off by 1e-4 of the largest: ~1e-4 of a one-key
     * masking error, and still caught. */
    double omax = 0.0;
    for (size_t i = 0; i < t.nq; i++) omax = fmax(omax, fabs(ref.o[i]));
    float *p = kt_copy_new(fl.o, t.nq);
    p[t.nq / 2 + 7] += (float)(1e-4 * omax);
    kt_expect("can-fail: one O element +1e-4*max|O| is rejected", !(kt_rel_err(p, ref.o, t.nq) <= TOL_FWD));
    free(p);

    /* A row that saw no key must keep lse = -inf, not a large negative. */
    p = kt_copy_new(fl.lse, t.rows);
    p[0] = -1e30f;
    kt_expect("can-fail: finite lse where -inf is due is rejected", !(kt_rel_err(p, ref.lse, t.rows) <= TOL_LSE));
    free(p);

    p = kt_copy_new(fl.dk, t.nkv);
    p[3] = NAN;
    kt_expect("can-fail: NaN in dK is rejected", !(kt_rel_err(p, ref.dk, t.nkv) <= TOL_BWD));
    free(p);

    /* Off-by-one causal masks, the bug ring-attention offsets invite. */
    struct kern_attn_desc bad = ds;
    bad.q_off = ds.q_off + 1;
    struct result wr;
    result_alloc(&wr, &t);
    run_impl(kern_attn_find("flash"), &bad, &t, &wr, ref.o, ref.lse);
    printf("     (off-by-one mask: O err %.2e, dK err %.2e)\n", kt_rel_err(wr.o, ref.o, t.nq),
           kt_rel_err(wr.dk, ref.dk, t.nkv));
    kt_expect("can-fail: mask off by one (q_off + 1) is rejected in O", !(kt_rel_err(wr.o, ref.o, t.nq) <= TOL_FWD));
    kt_expect("can-fail: mask off by one (q_off + 1) is rejected in dK",
              !(kt_rel_err(wr.dk, ref.dk, t.nkv) <= TOL_BWD));
    result_free(&wr);

    result_free(&ref);
    result_free(&fl);
    tensors_free(&t);
}

int main(void)
{
    kt_seed(20240601);
    printf("# flash vs ref (float64 accumulation); OpenBLAS threads %d\n", kern_blas_threads_get());
    const int blas_threads = kern_blas_threads_get();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) check_case(&cases[c]);
    kt_expect("OpenBLAS thread count restored after flash calls", kern_blas_threads_get() == blas_threads);
    check_can_fail();
    return kt_finish("test_kern_flash");
}
