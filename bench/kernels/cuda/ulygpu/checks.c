/* checks.c: correctness of the GPU attention on fresh random inputs.
 *   cpu     flash (every forward variant) and the cuBLAS reference against
 *           the float64 CPU reference (kernels/cpu/attn_ref.c) on the same
 *           rounded inputs, small shapes: GQA, causal with offsets, rows
 *           that see no key, ragged tiles
 *   large   flash against the cuBLAS reference at sequence lengths the CPU
 *           reference cannot afford
 *   ring    keys in blocks with their offsets, forward per block merged by
 *           kern_cuda_attn_merge and backward accumulated over blocks,
 *           against one call over all keys
 * Every output is poisoned with NaN before the call that writes it; the
 * backward's accumulating outputs start from random values that must be
 * kept and added to. A NaN left in an output fails the check. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kern_attn.h"
#include "ulygpu.h"

/* Tolerances on max|x - ref| / max|ref| against a float64 reference on the
 * same rounded inputs. The kernels round P (and, backward, dS) to the input
 * type before the tensor-core products, and the forward rounds O on output;
 * everything else accumulates in float32. */
double ug_tol_o(kern_cuda_dtype t) { return t == KERN_CUDA_BF16 ? 1.6e-2 : 2.5e-3; }
double ug_tol_grad(kern_cuda_dtype t) { return t == KERN_CUDA_BF16 ? 3e-2 : 5e-3; }

const char *ug_tol_o_reason(kern_cuda_dtype t)
{
    return t == KERN_CUDA_BF16
               ? "bf16 unit roundoff 2^-9 = 2.0e-3: O rounded on output and P rounded before P V, about 4 units "
                 "in the max norm (8 mantissa bits)"
               : "fp16 unit roundoff 2^-12 = 2.4e-4: O rounded on output and P rounded before P V, about 10 "
                 "units in the max norm (11 mantissa bits)";
}

const char *ug_tol_grad_reason(kern_cuda_dtype t)
{
    return t == KERN_CUDA_BF16
               ? "bf16: P and dS rounded to 2^-9 before the tensor-core products for dV, dQ, dK, then summed over "
                 "keys or rows in float32; dS = P (dP - D) loses relative accuracy where dP ~ D: 15 units"
               : "fp16: P and dS rounded to 2^-12 before the products, summed in float32; dS cancellation: 20 "
                 "units";
}

#define TOL_LSE 2e-5
static const char *TOL_LSE_REASON =
    "lse is float32 softmax statistics (max and sum of exp2) with no rounding to the input type: float32 "
    "accumulation over up to n_kv terms plus ex2.approx (2 ulp)";

typedef struct acase {
    int heads, kv_heads, n_q, n_kv, d;
    int causal;
    long long q_off, kv_off;
    kern_cuda_dtype dt;
} acase;

static struct kern_cuda_attn_desc desc_of(const acase *a)
{
    struct kern_cuda_attn_desc d;
    memset(&d, 0, sizeof d);
    d.heads = a->heads;
    d.kv_heads = a->kv_heads;
    d.n_q = a->n_q;
    d.n_kv = a->n_kv;
    d.d = a->d;
    d.scale = (float)(1.0 / sqrt((double)a->d));
    d.causal = a->causal != 0;
    d.q_off = a->q_off;
    d.kv_off = a->kv_off;
    d.dtype = a->dt;
    return d;
}

static void case_name(const acase *a, char *b, size_t n)
{
    snprintf(b, n, "h%d/%d q%d kv%d d%d %s%s", a->heads, a->kv_heads, a->n_q, a->n_kv, a->d,
             a->causal ? "causal" : "full", "");
    if (a->causal && (a->q_off || a->kv_off)) {
        const size_t l = strlen(b);
        snprintf(b + l, n - l, " off%lld/%lld", a->q_off, a->kv_off);
    }
}

/* device tensors of one case */
typedef struct dev_t {
    void *q, *k, *v, *o, *dout;
    float *lse, *o32, *dq, *dk, *dv;
    void *ws;
    size_t ws_bytes;
} dev_t_;

static void widen_dev(const void *d16, size_t n, kern_cuda_dtype t, float *out)
{
    uint16_t *h = ug_halloc(n * 2);
    UG_CK(kern_cuda_d2h(h, d16, n * 2));
    kern_cuda_host_widen(h, out, n, t);
    free(h);
}

static void d2h_f32(float *h, const float *d, size_t n) { UG_CK(kern_cuda_d2h(h, d, n * 4)); }

/* x - x0 for accumulated outputs */
static void minus(float *x, const float *x0, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] -= x0[i];
}

static void check_pair(ug_ctx *c, const char *group, const char *what, const char *tensor, kern_cuda_dtype t,
                       const float *x, const float *ref, size_t n, double tol, const char *reason)
{
    double mr, fr;
    size_t nans;
    ug_rel_err(x, ref, n, &mr, &fr, &nans);
    ug_check(c, group, what, tensor, t, mr, fr, nans, tol, reason);
}

/* ------------------------------------------------------------ cpu */

static void cpu_case(ug_ctx *c, const acase *a)
{
    char nm[120];
    case_name(a, nm, sizeof nm);
    const struct kern_cuda_attn_desc ds = desc_of(a);
    const kern_cuda_dtype t = a->dt;
    const size_t nq = (size_t)a->heads * a->n_q * a->d, nkv = (size_t)a->kv_heads * a->n_kv * a->d;
    const size_t rows = (size_t)a->heads * a->n_q;
    uint16_t *hq = ug_halloc(nq * 2), *hk = ug_halloc(nkv * 2), *hv = ug_halloc(nkv * 2), *hdo = ug_halloc(nq * 2);
    float *fq = ug_halloc(nq * 4), *fk = ug_halloc(nkv * 4), *fv = ug_halloc(nkv * 4), *fdo = ug_halloc(nq * 4);
    ug_fill_normal(hq, fq, nq, t);
    ug_fill_normal(hk, fk, nkv, t);
    ug_fill_normal(hv, fv, nkv, t);
    ug_fill_normal(hdo, fdo, nq, t);

    struct kern_attn_desc rd;
    memset(&rd, 0, sizeof rd);
    rd.heads = a->heads;
    rd.kv_heads = a->kv_heads;
    rd.n_q = a->n_q;
    rd.n_kv = a->n_kv;
    rd.d = a->d;
    rd.scale = ds.scale;
    rd.causal = ds.causal;
    rd.q_off = a->q_off;
    rd.kv_off = a->kv_off;
    rd.acc = KERN_ACC_F64;
    float *o_ref = ug_halloc(nq * 4), *lse_ref = ug_halloc(rows * 4);
    if (kern_attn_ref_fwd(&rd, fq, fk, fv, o_ref, lse_ref) != KERN_OK) ug_die("CPU reference refused %s", nm);

    void *q = ug_dalloc(nq * 2), *k = ug_dalloc(nkv * 2), *v = ug_dalloc(nkv * 2), *dout = ug_dalloc(nq * 2);
    void *o = ug_dalloc(nq * 2);
    float *lse = ug_dalloc(rows * 4), *o32 = ug_dalloc(nq * 4);
    UG_CK(kern_cuda_h2d(q, hq, nq * 2));
    UG_CK(kern_cuda_h2d(k, hk, nkv * 2));
    UG_CK(kern_cuda_h2d(v, hv, nkv * 2));
    UG_CK(kern_cuda_h2d(dout, hdo, nq * 2));
    float *ho = ug_halloc(nq * 4), *hl = ug_halloc(rows * 4);

    /* forward, every variant; the default's O and lse feed the backward */
    float *o_fwd = ug_halloc(nq * 4), *lse_fwd = ug_halloc(rows * 4);
    for (int var = kern_cuda_attn_fwd_variants() - 1; var >= 0; var--) {
        UG_CK(kern_cuda_fill_nan(o, t, nq, NULL));
        UG_CK(kern_cuda_fill_nan(lse, KERN_CUDA_F32, rows, NULL));
        UG_CK(kern_cuda_attn_fwd_variant(&ds, q, k, v, o, lse, var, NULL));
        widen_dev(o, nq, t, ho);
        d2h_f32(hl, lse, rows);
        char w[160];
        snprintf(w, sizeof w, "flash v%d %s", var, nm);
        check_pair(c, "cpu-ref", w, "O", t, ho, o_ref, nq, ug_tol_o(t), ug_tol_o_reason(t));
        check_pair(c, "cpu-ref", w, "lse", t, hl, lse_ref, rows, TOL_LSE, TOL_LSE_REASON);
        if (var == 0) {
            memcpy(o_fwd, ho, nq * 4);
            memcpy(lse_fwd, hl, rows * 4);
        }
    }
    /* cuBLAS reference forward */
    size_t ws_min = 0, ws_all = 0, wb_min = 0, wb_all = 0;
    kern_cuda_attn_ref_workspace(&ds, false, &ws_min, &ws_all);
    kern_cuda_attn_ref_workspace(&ds, true, &wb_min, &wb_all);
    const size_t ws_bytes = ws_all > wb_all ? ws_all : wb_all;
    void *ws = ug_dalloc(ws_bytes);
    UG_CK(kern_cuda_fill_nan(o32, KERN_CUDA_F32, nq, NULL));
    UG_CK(kern_cuda_fill_nan(lse, KERN_CUDA_F32, rows, NULL));
    UG_CK(kern_cuda_attn_ref_fwd(c->blas, &ds, q, k, v, o32, lse, ws, ws_bytes));
    d2h_f32(ho, o32, nq);
    d2h_f32(hl, lse, rows);
    char w[160];
    snprintf(w, sizeof w, "cublas %s", nm);
    /* the reference rounds P only (O stays float32): the flash tolerance bounds it */
    check_pair(c, "cpu-ref", w, "O", t, ho, o_ref, nq, ug_tol_o(t), ug_tol_o_reason(t));
    check_pair(c, "cpu-ref", w, "lse", t, hl, lse_ref, rows, TOL_LSE, TOL_LSE_REASON);

    /* backward: O (rounded) and lse from the flash forward, for both sides */
    uint16_t *ho16 = ug_halloc(nq * 2);
    kern_cuda_host_round(o_fwd, ho16, nq, t);
    UG_CK(kern_cuda_h2d(o, ho16, nq * 2));
    UG_CK(kern_cuda_h2d(lse, lse_fwd, rows * 4));
    float *dq_ref = ug_halloc(nq * 4), *dk_ref = ug_halloc(nkv * 4), *dv_ref = ug_halloc(nkv * 4);
    if (kern_attn_ref_bwd(&rd, fq, fk, fv, o_fwd, lse_fwd, fdo, dq_ref, dk_ref, dv_ref) != KERN_OK)
        ug_die("CPU reference backward refused %s", nm);
    float *dq0 = ug_halloc(nq * 4), *dk0 = ug_halloc(nkv * 4), *dv0 = ug_halloc(nkv * 4);
    for (size_t i = 0; i < nq; i++) dq0[i] = (float)ug_normal();
    for (size_t i = 0; i < nkv; i++) dk0[i] = (float)ug_normal();
    for (size_t i = 0; i < nkv; i++) dv0[i] = (float)ug_normal();
    float *dq = ug_dalloc(nq * 4), *dk = ug_dalloc(nkv * 4), *dv = ug_dalloc(nkv * 4);
    float *hdq = ug_halloc(nq * 4), *hdk = ug_halloc(nkv * 4), *hdv = ug_halloc(nkv * 4);
    for (int impl = 0; impl < 2; impl++) {
        UG_CK(kern_cuda_h2d(dq, dq0, nq * 4));
        UG_CK(kern_cuda_h2d(dk, dk0, nkv * 4));
        UG_CK(kern_cuda_h2d(dv, dv0, nkv * 4));
        if (impl == 0)
            UG_CK(kern_cuda_attn_bwd(&ds, q, k, v, o, lse, dout, dq, dk, dv, NULL, NULL));
        else
            UG_CK(kern_cuda_attn_ref_bwd(c->blas, &ds, q, k, v, o, lse, dout, dq, dk, dv, ws, ws_bytes));
        d2h_f32(hdq, dq, nq);
        d2h_f32(hdk, dk, nkv);
        d2h_f32(hdv, dv, nkv);
        minus(hdq, dq0, nq);
        minus(hdk, dk0, nkv);
        minus(hdv, dv0, nkv);
        snprintf(w, sizeof w, "%s bwd %s", impl ? "cublas" : "flash", nm);
        check_pair(c, "cpu-ref", w, "dQ", t, hdq, dq_ref, nq, ug_tol_grad(t), ug_tol_grad_reason(t));
        check_pair(c, "cpu-ref", w, "dK", t, hdk, dk_ref, nkv, ug_tol_grad(t), ug_tol_grad_reason(t));
        check_pair(c, "cpu-ref", w, "dV", t, hdv, dv_ref, nkv, ug_tol_grad(t), ug_tol_grad_reason(t));
    }

    void *dev[] = {q, k, v, dout, o, lse, o32, ws, dq, dk, dv};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++) ug_dfree(dev[i]);
    void *host[] = {hq, hk, hv, hdo, fq, fk, fv, fdo, o_ref, lse_ref, ho, hl, o_fwd, lse_fwd, ho16, dq_ref, dk_ref,
                    dv_ref, dq0, dk0, dv0, hdq, hdk, hdv};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++) free(host[i]);
}

/* ----------------------------------------------------------- large */

static void large_case(ug_ctx *c, const acase *a)
{
    char nm[120], w[160];
    case_name(a, nm, sizeof nm);
    const struct kern_cuda_attn_desc ds = desc_of(a);
    const kern_cuda_dtype t = a->dt;
    const size_t nq = (size_t)a->heads * a->n_q * a->d, nkv = (size_t)a->kv_heads * a->n_kv * a->d;
    const size_t rows = (size_t)a->heads * a->n_q;
    const uint64_t s = (uint64_t)(fabs(ug_normal()) * 1e9) ^ c->o.seed;
    void *q = ug_dalloc(nq * 2), *k = ug_dalloc(nkv * 2), *v = ug_dalloc(nkv * 2), *dout = ug_dalloc(nq * 2);
    UG_CK(kern_cuda_fill_uniform(q, t, nq, s + 1, -1.7f, 1.7f, NULL)); /* variance ~1, like N(0, 1) */
    UG_CK(kern_cuda_fill_uniform(k, t, nkv, s + 2, -1.7f, 1.7f, NULL));
    UG_CK(kern_cuda_fill_uniform(v, t, nkv, s + 3, -1.7f, 1.7f, NULL));
    UG_CK(kern_cuda_fill_uniform(dout, t, nq, s + 4, -1.7f, 1.7f, NULL));
    void *o = ug_dalloc(nq * 2);
    float *lse = ug_dalloc(rows * 4), *o32 = ug_dalloc(nq * 4), *lse_r = ug_dalloc(rows * 4);
    size_t wf = 0, wb = 0, wf_min = 0, wb_min = 0;
    kern_cuda_attn_ref_workspace(&ds, false, &wf_min, &wf);
    kern_cuda_attn_ref_workspace(&ds, true, &wb_min, &wb);
    size_t free_b = 0, total_b = 0;
    UG_CK(kern_cuda_mem_get_info(&free_b, &total_b));
    size_t ws_bytes = wf > wb ? wf : wb;
    if (ws_bytes > free_b / 2) ws_bytes = free_b / 2; /* the reference then works in passes over kv heads */
    if (ws_bytes < (wf_min > wb_min ? wf_min : wb_min)) {
        printf("  skip large %s: the cuBLAS reference needs %.1f GiB for one kv head\n", nm,
               (double)(wf_min > wb_min ? wf_min : wb_min) / 1073741824.0);
        goto out;
    }
    void *ws = ug_dalloc(ws_bytes);
    UG_CK(kern_cuda_fill_nan(o, t, nq, NULL));
    UG_CK(kern_cuda_fill_nan(lse, KERN_CUDA_F32, rows, NULL));
    UG_CK(kern_cuda_attn_fwd(&ds, q, k, v, o, lse, NULL));
    UG_CK(kern_cuda_fill_nan(o32, KERN_CUDA_F32, nq, NULL));
    UG_CK(kern_cuda_fill_nan(lse_r, KERN_CUDA_F32, rows, NULL));
    UG_CK(kern_cuda_attn_ref_fwd(c->blas, &ds, q, k, v, o32, lse_r, ws, ws_bytes));
    float *a1 = ug_halloc(nq * 4), *a2 = ug_halloc(nq * 4);
    widen_dev(o, nq, t, a1);
    d2h_f32(a2, o32, nq);
    snprintf(w, sizeof w, "flash vs cublas %s", nm);
    /* both sides carry rounding of P: twice the tolerance against float64 */
    check_pair(c, "large", w, "O", t, a1, a2, nq, 2 * ug_tol_o(t), ug_tol_o_reason(t));
    float *l1 = ug_halloc(rows * 4), *l2 = ug_halloc(rows * 4);
    d2h_f32(l1, lse, rows);
    d2h_f32(l2, lse_r, rows);
    check_pair(c, "large", w, "lse", t, l1, l2, rows, 2 * TOL_LSE, TOL_LSE_REASON);
    /* backward from zero, both with the flash forward's O and lse */
    float *g[2][3];
    for (int impl = 0; impl < 2; impl++) {
        float *dq = ug_dalloc(nq * 4), *dk = ug_dalloc(nkv * 4), *dv = ug_dalloc(nkv * 4);
        UG_CK(kern_cuda_memset0(dq, nq * 4, NULL));
        UG_CK(kern_cuda_memset0(dk, nkv * 4, NULL));
        UG_CK(kern_cuda_memset0(dv, nkv * 4, NULL));
        if (impl == 0)
            UG_CK(kern_cuda_attn_bwd(&ds, q, k, v, o, lse, dout, dq, dk, dv, NULL, NULL));
        else
            UG_CK(kern_cuda_attn_ref_bwd(c->blas, &ds, q, k, v, o, lse, dout, dq, dk, dv, ws, ws_bytes));
        g[impl][0] = ug_halloc(nq * 4);
        g[impl][1] = ug_halloc(nkv * 4);
        g[impl][2] = ug_halloc(nkv * 4);
        d2h_f32(g[impl][0], dq, nq);
        d2h_f32(g[impl][1], dk, nkv);
        d2h_f32(g[impl][2], dv, nkv);
        ug_dfree(dq);
        ug_dfree(dk);
        ug_dfree(dv);
    }
    snprintf(w, sizeof w, "flash vs cublas bwd %s", nm);
    check_pair(c, "large", w, "dQ", t, g[0][0], g[1][0], nq, 2 * ug_tol_grad(t), ug_tol_grad_reason(t));
    check_pair(c, "large", w, "dK", t, g[0][1], g[1][1], nkv, 2 * ug_tol_grad(t), ug_tol_grad_reason(t));
    check_pair(c, "large", w, "dV", t, g[0][2], g[1][2], nkv, 2 * ug_tol_grad(t), ug_tol_grad_reason(t));
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) free(g[i][j]);
    free(a1);
    free(a2);
    free(l1);
    free(l2);
    ug_dfree(ws);
out:
    ug_dfree(q);
    ug_dfree(k);
    ug_dfree(v);
    ug_dfree(dout);
    ug_dfree(o);
    ug_dfree(lse);
    ug_dfree(o32);
    ug_dfree(lse_r);
}

/* ------------------------------------------------------------ ring */

/* The queries of the last of r contiguous ranks against all N keys, once
 * in one call and once block by block (forward merged in float32, backward
 * accumulated), as a ring rank computes them. */
static void ring_case(ug_ctx *c, int N, int r, int heads, int kvh, int d, kern_cuda_dtype t)
{
    char w[160];
    snprintf(w, sizeof w, "N%d r%d h%d/%d d%d causal, last rank", N, r, heads, kvh, d);
    const int blk = N / r;
    const size_t nq = (size_t)heads * blk * d, nkv = (size_t)kvh * N * d, rows = (size_t)heads * blk;
    const size_t nkb = (size_t)kvh * blk * d;
    const uint64_t s = c->o.seed * 31 + 7;
    void *q = ug_dalloc(nq * 2), *k = ug_dalloc(nkv * 2), *v = ug_dalloc(nkv * 2), *dout = ug_dalloc(nq * 2);
    UG_CK(kern_cuda_fill_uniform(q, t, nq, s + 1, -1.7f, 1.7f, NULL));
    UG_CK(kern_cuda_fill_uniform(k, t, nkv, s + 2, -1.7f, 1.7f, NULL));
    UG_CK(kern_cuda_fill_uniform(v, t, nkv, s + 3, -1.7f, 1.7f, NULL));
    UG_CK(kern_cuda_fill_uniform(dout, t, nq, s + 4, -1.7f, 1.7f, NULL));
    /* K, V blocks: [r][kvh][blk][d] copies of [kvh][N][d] */
    void *kb = ug_dalloc(nkv * 2), *vb = ug_dalloc(nkv * 2);
    for (int b = 0; b < r; b++)
        for (int h = 0; h < kvh; h++) {
            const size_t src = ((size_t)h * N + (size_t)b * blk) * d * 2, dst = ((size_t)b * kvh + h) * blk * d * 2;
            UG_CK(kern_cuda_d2d((char *)kb + dst, (const char *)k + src, (size_t)blk * d * 2, NULL));
            UG_CK(kern_cuda_d2d((char *)vb + dst, (const char *)v + src, (size_t)blk * d * 2, NULL));
        }
    struct kern_cuda_attn_desc one;
    memset(&one, 0, sizeof one);
    one.heads = heads;
    one.kv_heads = kvh;
    one.n_q = blk;
    one.n_kv = N;
    one.d = d;
    one.scale = (float)(1.0 / sqrt((double)d));
    one.causal = true;
    one.q_off = (long long)(r - 1) * blk;
    one.kv_off = 0;
    one.dtype = t;
    void *o1 = ug_dalloc(nq * 2);
    float *l1 = ug_dalloc(rows * 4);
    UG_CK(kern_cuda_fill_nan(o1, t, nq, NULL));
    UG_CK(kern_cuda_fill_nan(l1, KERN_CUDA_F32, rows, NULL));
    UG_CK(kern_cuda_attn_fwd(&one, q, k, v, o1, l1, NULL));

    float *acc = ug_dalloc(nq * 4), *lacc = ug_dalloc(rows * 4), *lb = ug_dalloc(rows * 4);
    void *ob = ug_dalloc(nq * 2);
    UG_CK(kern_cuda_fill_nan(acc, KERN_CUDA_F32, nq, NULL)); /* never read: lacc = -inf takes block 0 as is */
    {
        float *ninf = ug_halloc(rows * 4);
        for (size_t i = 0; i < rows; i++) ninf[i] = -INFINITY;
        UG_CK(kern_cuda_h2d(lacc, ninf, rows * 4));
        free(ninf);
    }
    struct kern_cuda_attn_desc bd = one;
    bd.n_kv = blk;
    for (int b = 0; b < r; b++) {
        bd.kv_off = (long long)b * blk;
        UG_CK(kern_cuda_fill_nan(ob, t, nq, NULL));
        UG_CK(kern_cuda_fill_nan(lb, KERN_CUDA_F32, rows, NULL));
        UG_CK(kern_cuda_attn_fwd(&bd, q, (char *)kb + (size_t)b * nkb * 2, (char *)vb + (size_t)b * nkb * 2, ob,
                                 lb, NULL));
        UG_CK(kern_cuda_attn_merge(heads, blk, d, acc, lacc, ob, t, lb, NULL));
    }
    float *x1 = ug_halloc(nq * 4), *x2 = ug_halloc(nq * 4), *y1 = ug_halloc(rows * 4), *y2 = ug_halloc(rows * 4);
    widen_dev(o1, nq, t, x1);
    d2h_f32(x2, acc, nq);
    d2h_f32(y1, l1, rows);
    d2h_f32(y2, lacc, rows);
    check_pair(c, "ring", w, "O", t, x2, x1, nq, 2 * ug_tol_o(t),
               "each block's O rounded to the type before the merge, the one-call O once: both within the flash "
               "tolerance of the exact result");
    check_pair(c, "ring", w, "lse", t, y2, y1, rows, 2 * TOL_LSE, TOL_LSE_REASON);

    /* backward: merged O (rounded) and lse, blocks accumulate */
    UG_CK(kern_cuda_convert(ob, t, acc, KERN_CUDA_F32, nq, NULL));
    float *dq1 = ug_dalloc(nq * 4), *dk1 = ug_dalloc(nkv * 4), *dv1 = ug_dalloc(nkv * 4);
    float *dq2 = ug_dalloc(nq * 4), *dk2 = ug_dalloc(nkv * 4), *dv2 = ug_dalloc(nkv * 4);
    UG_CK(kern_cuda_memset0(dq1, nq * 4, NULL));
    UG_CK(kern_cuda_memset0(dk1, nkv * 4, NULL));
    UG_CK(kern_cuda_memset0(dv1, nkv * 4, NULL));
    UG_CK(kern_cuda_memset0(dq2, nq * 4, NULL));
    UG_CK(kern_cuda_memset0(dk2, nkv * 4, NULL));
    UG_CK(kern_cuda_memset0(dv2, nkv * 4, NULL));
    UG_CK(kern_cuda_attn_bwd(&one, q, k, v, ob, lacc, dout, dq1, dk1, dv1, NULL, NULL));
    for (int b = 0; b < r; b++) {
        bd.kv_off = (long long)b * blk;
        UG_CK(kern_cuda_attn_bwd(&bd, q, (char *)kb + (size_t)b * nkb * 2, (char *)vb + (size_t)b * nkb * 2, ob,
                                 lacc, dout, dq2, dk2 + (size_t)b * nkb, dv2 + (size_t)b * nkb, NULL, NULL));
    }
    float *h1 = ug_halloc(nkv * 4), *h2 = ug_halloc(nkv * 4), *h3 = ug_halloc(nkv * 4);
    d2h_f32(x1, dq1, nq);
    d2h_f32(x2, dq2, nq);
    check_pair(c, "ring", w, "dQ", t, x2, x1, nq, 2 * ug_tol_grad(t),
               "per-block dQ summed in float32 against one call: the same roundings, another summation order");
    /* one-call dK is [kvh][N][d]; the blocks' are [r][kvh][blk][d]: reorder */
    for (int which = 0; which < 2; which++) {
        d2h_f32(h1, which ? dv1 : dk1, nkv);
        d2h_f32(h2, which ? dv2 : dk2, nkv);
        for (int b = 0; b < r; b++)
            for (int h = 0; h < kvh; h++)
                memcpy(h3 + ((size_t)h * N + (size_t)b * blk) * d, h2 + ((size_t)b * kvh + h) * blk * d,
                       (size_t)blk * d * 4);
        check_pair(c, "ring", w, which ? "dV" : "dK", t, h3, h1, nkv, 2 * ug_tol_grad(t),
                   "per-block dK, dV against one call: the same roundings");
    }
    void *dev[] = {q, k, v, dout, kb, vb, o1, l1, acc, lacc, lb, ob, dq1, dk1, dv1, dq2, dk2, dv2};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++) ug_dfree(dev[i]);
    void *host[] = {x1, x2, y1, y2, h1, h2, h3};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++) free(host[i]);
}

void ug_checks(ug_ctx *c)
{
    printf("\n== checks (seed %llu; relative error max|x-ref|/max|ref|, Frobenius beside it)\n",
           (unsigned long long)c->o.seed);
    const int f0 = c->failures, n0 = c->checks;
    const int n = c->o.quick ? 160 : 384;
    for (int dt = 0; dt < 2; dt++)
        for (int di = 0; di < 2; di++)
            for (int causal = 0; causal < 2; causal++) {
                acase a = {4, 2, n, n, di ? 128 : 64, causal, 0, 0, dt ? KERN_CUDA_FP16 : KERN_CUDA_BF16};
                cpu_case(c, &a);
            }
    const acase extra[] = {
        {4, 4, 256 - 3, 640 + 5, 128, 1, 512, 0, KERN_CUDA_BF16}, /* queries after a key prefix, ragged */
        {2, 1, 300, 200, 64, 1, 0, 100, KERN_CUDA_FP16},          /* rows that see no key */
        {8, 1, 130, 1000, 128, 0, 0, 0, KERN_CUDA_BF16},          /* MQA, ragged */
    };
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) cpu_case(c, &extra[i]);

    const int N = c->o.quick ? 1024 : 4096;
    const acase large[] = {
        {8, 2, N, N, 128, 1, 0, 0, KERN_CUDA_BF16},
        {8, 8, N, N, 64, 0, 0, 0, KERN_CUDA_FP16},
    };
    for (size_t i = 0; i < sizeof large / sizeof large[0]; i++) {
        if (ug_over_budget(c, 0.4)) {
            printf("  skip the remaining large checks: past 40%% of the time budget\n");
            break;
        }
        large_case(c, &large[i]);
    }
    ring_case(c, c->o.quick ? 1024 : 2048, 4, 4, 2, 128, KERN_CUDA_BF16);
    ring_case(c, c->o.quick ? 512 : 2048, 4, 4, 4, 64, KERN_CUDA_FP16);
    ug_summary(c, "checks         %d of %d passed (flash, cuBLAS reference, ring merge; bf16 and fp16)",
               (c->checks - n0) - (c->failures - f0), c->checks - n0);
}
