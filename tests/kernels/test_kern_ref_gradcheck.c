/* test_kern_ref_gradcheck.c: proves the reference itself, so that "flash
 * agrees with ref" means "flash is right". The forward against closed-form
 * cases; the backward against central finite differences of the forward,
 * all in float64 (kern_attn_ref_*_f64, the same template body the float32
 * entry points run), on tiny GQA shapes with and without offset masks. */
#include <stdbool.h>

#include "kern_test_util.h"

/* Central differences with step h on a float64 forward: truncation error
 * ~ h^2 * |f'''| / 6 ~ 1e-12 for h = 1e-5 and O(1) derivatives, rounding
 * error ~ eps_64 * |L| / h ~ 2e-16 * 10 / 1e-5 = 2e-10. Against gradients
 * of O(0.1..1), TOL_FD = 1e-7 is 500x above both and far below any real
 * error in a gradient formula (a missing D term or a wrong scale is O(1)). */
#define FD_STEP 1e-5
#define TOL_FD 1e-7
/* Closed-form forward cases are exact up to a few float64 roundings. */
#define TOL_EXACT 1e-13

static double *f64_new(size_t n)
{
    double *p = calloc(n > 0 ? n : 1, sizeof *p);
    if (!p) exit(1);
    return p;
}

static double *f64_normal_new(size_t n)
{
    double *p = f64_new(n);
    for (size_t i = 0; i < n; i++) p[i] = kt_normal();
    return p;
}

/* L = sum(W o O): its gradient w.r.t. O is W, so the backward with dO = W
 * must return dL/dQ, dL/dK, dL/dV. */
static double loss(const struct kern_attn_desc *ds, const double *q, const double *k, const double *v,
                   const double *w, double *o, double *lse)
{
    const size_t n = (size_t)ds->heads * ds->n_q * ds->d;
    if (kern_attn_ref_fwd_f64(ds, q, k, v, o, lse) != KERN_OK) return NAN;
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += w[i] * o[i];
    return s;
}

/* Finite-difference gradient of loss() w.r.t. every element of x. */
static void fd_grad(const struct kern_attn_desc *ds, double *q, double *k, double *v, const double *w,
                    double *x, size_t n, double *g, double *o, double *lse)
{
    for (size_t i = 0; i < n; i++) {
        const double x0 = x[i];
        x[i] = x0 + FD_STEP;
        const double lp = loss(ds, q, k, v, w, o, lse);
        x[i] = x0 - FD_STEP;
        const double lm = loss(ds, q, k, v, w, o, lse);
        x[i] = x0;
        g[i] = (lp - lm) / (2.0 * FD_STEP);
    }
}

static void gradcheck(const char *name, struct kern_attn_desc ds)
{
    const size_t nq = (size_t)ds.heads * ds.n_q * ds.d, nkv = (size_t)ds.kv_heads * ds.n_kv * ds.d;
    double *q = f64_normal_new(nq), *k = f64_normal_new(nkv), *v = f64_normal_new(nkv);
    double *w = f64_normal_new(nq);
    double *o = f64_new(nq), *lse = f64_new((size_t)ds.heads * ds.n_q);
    double *dq = f64_new(nq), *dk = f64_new(nkv), *dv = f64_new(nkv);
    double *gq = f64_new(nq), *gk = f64_new(nkv), *gv = f64_new(nkv);
    char what[160];

    kern_attn_ref_fwd_f64(&ds, q, k, v, o, lse);
    kern_status st = kern_attn_ref_bwd_f64(&ds, q, k, v, o, lse, w, dq, dk, dv);
    snprintf(what, sizeof what, "status ok: %s", name);
    kt_expect(what, st == KERN_OK);
    fd_grad(&ds, q, k, v, w, q, nq, gq, o, lse);
    fd_grad(&ds, q, k, v, w, k, nkv, gk, o, lse);
    fd_grad(&ds, q, k, v, w, v, nkv, gv, o, lse);
    snprintf(what, sizeof what, "ref dQ = finite differences: %s", name);
    kt_check(what, kt_rel_err_f64(dq, gq, nq), TOL_FD);
    snprintf(what, sizeof what, "ref dK = finite differences: %s", name);
    kt_check(what, kt_rel_err_f64(dk, gk, nkv), TOL_FD);
    snprintf(what, sizeof what, "ref dV = finite differences: %s", name);
    kt_check(what, kt_rel_err_f64(dv, gv, nkv), TOL_FD);

    /* The same comparison must reject a gradient with one entry wrong by
     * 1e-3 of its scale, or this check proves nothing. */
    double gmax = 0.0;
    for (size_t i = 0; i < nkv; i++) gmax = fmax(gmax, fabs(gk[i]));
    dk[nkv / 2] += 1e-3 * gmax;
    snprintf(what, sizeof what, "can-fail: perturbed dK rejected: %s", name);
    kt_expect(what, !(kt_rel_err_f64(dk, gk, nkv) <= TOL_FD));

    free(q), free(k), free(v), free(w), free(o), free(lse);
    free(dq), free(dk), free(dv), free(gq), free(gk), free(gv);
}

/* Closed forms: one visible key gives O = V_0 and lse = s_0; n identical
 * keys give O = mean(V) and lse = s + log n. */
static void closed_forms(void)
{
    const int d = 3, n = 4;
    struct kern_attn_desc ds = {.heads = 1, .kv_heads = 1, .n_q = 1, .n_kv = n, .d = d, .scale = 0.5f};
    double q[3] = {0.3, -1.2, 2.0}, k[4 * 3], v[4 * 3], o[3], lse[1];
    double s = 0.0;
    for (int j = 0; j < n; j++)
        for (int c = 0; c < d; c++) {
            k[j * d + c] = 0.7 - 0.4 * c; /* identical keys */
            v[j * d + c] = j + 10.0 * c;
        }
    for (int c = 0; c < d; c++) s += 0.5 * q[c] * k[c];
    kern_attn_ref_fwd_f64(&ds, q, k, v, o, lse);
    double want_o[3];
    for (int c = 0; c < d; c++) want_o[c] = 1.5 + 10.0 * c; /* mean of j = 0..3 */
    const double want_lse = s + log((double)n);
    kt_check("closed form: identical keys give mean(V)", kt_rel_err_f64(o, want_o, 3), TOL_EXACT);
    kt_check("closed form: identical keys give lse = s + log n", kt_rel_err_f64(lse, &want_lse, 1), TOL_EXACT);

    /* Causal with q_off 5, kv_off 5: row 0 sees key 0 only. */
    ds.causal = true;
    ds.q_off = ds.kv_off = 5;
    kern_attn_ref_fwd_f64(&ds, q, k, v, o, lse);
    kt_check("closed form: one visible key gives O = V_0", kt_rel_err_f64(o, v, 3), TOL_EXACT);
    kt_check("closed form: one visible key gives lse = s_0", kt_rel_err_f64(lse, &s, 1), TOL_EXACT);

    /* kv_off 6: the row sees nothing. */
    ds.kv_off = 6;
    kern_attn_ref_fwd_f64(&ds, q, k, v, o, lse);
    kt_expect("closed form: no visible key gives O = 0, lse = -inf",
              o[0] == 0.0 && o[1] == 0.0 && o[2] == 0.0 && lse[0] == -INFINITY);
}

int main(void)
{
    kt_seed(7);
    closed_forms();
    const struct kern_attn_desc base = {.heads = 2, .kv_heads = 1, .n_q = 5, .n_kv = 6, .d = 3,
                                        .scale = 0.57735026f};
    struct kern_attn_desc ds = base;
    gradcheck("gqa 2/1 non-causal", ds);
    ds.causal = true;
    gradcheck("gqa 2/1 causal square", ds);
    ds.q_off = 10;
    ds.kv_off = 8; /* rows see 3..6 keys */
    gradcheck("gqa 2/1 causal q_off 10 kv_off 8", ds);
    ds.q_off = 0;
    ds.kv_off = 2; /* rows 0, 1 see nothing: their gradient must be 0 */
    gradcheck("gqa 2/1 causal kv_off 2 (empty rows)", ds);
    ds = base;
    ds.heads = ds.kv_heads = 2;
    ds.d = 4;
    ds.scale = 0.5f;
    gradcheck("mha 2/2 d4 non-causal", ds);
    return kt_finish("test_kern_ref_gradcheck");
}
