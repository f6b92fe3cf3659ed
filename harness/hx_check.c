/* hx_check.c: every run's correctness check.
 *
 * After pass 0 every rank sends rank 0 what it holds of five tensors, with
 * the global (sequence, position, head) of every row: the attention output O
 * and the gradients dQ, dK, dV as the projections see them (token-major,
 * after the strategy's communication), and the layer's input gradient dX
 * (which crosses every GEMM, so Megatron's split GEMMs and their
 * reduce-scatters or all-reduces are checked too; under plain TP, where every
 * TP rank holds all of dX, each sends its 1/t share of the rows). Under TP
 * (alone or inside context parallelism) the t ranks of a TP group send the
 * same GEMM-side rows, each for its own heads. Rank 0
 * assembles the full tensors (dK, dV pieces of replicated KV heads are
 * summed, as the model's replicas would)
 * for each data-parallel replica and compares them with a single-rank
 * reference of the same layer on the same seeded inputs computed in float64:
 * GEMMs by cblas_dgemm, attention by kern_attn_ref_*_f64, everything else in
 * double.
 *
 * Error measure: max |x - ref| / max |ref| over the tensor (normwise, so that
 * entries near zero do not make a relative error meaningless).
 * Tolerances (float32 storage and arithmetic against the float64 oracle; the
 * observed errors at the test sizes are 1e-7..1e-6, the bounds leave room for
 * N in the thousands):
 *   ref   kernel 2e-4: float32 dot products and sums over up to N keys and
 *         h, f GEMM columns: unit roundoff 6e-8 grows like sqrt(n)..n;
 *   flash kernel 5e-4: the same plus its exp2 polynomial (about 2 ulp),
 *         flush-to-zero of denormal weights, and the log-sum-exp merges of
 *         ring steps. A wrong mask, block, offset or reduction gives errors of
 *         order 1.
 * Both grow by sqrt(N / 4096) past 4096 tokens (rounding of long sums). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "hx.h"

enum { CK_O = 0, CK_DQ, CK_DK, CK_DV, CK_DX, CK_N };

typedef struct piece {
    int64_t rows, width, h0, rep; /* width floats per row; first head (of d); eff heads per source head */
    const int64_t *bat, *pos;
    const float *data;
} piece;

static void pieces_of(const hx_ctx *c, piece pc[CK_N])
{
    /* KV heads replicated over the TP group (k < t) map back to their source
     * head: the replicas' dK, dV pieces sum into it */
    const int64_t rep = c->t * c->gkv / c->k;
    pc[CK_O] = (piece){c->Rg, c->qc, c->hq0, 1, c->gbat, c->gpos, c->Og};
    pc[CK_DQ] = (piece){c->Rg, c->qc, c->hq0, 1, c->gbat, c->gpos, c->dQg};
    pc[CK_DK] = (piece){c->Rg, c->kc, c->hk0, rep, c->gbat, c->gpos, c->dKg};
    pc[CK_DV] = (piece){c->Rg, c->kc, c->hk0, rep, c->gbat, c->gpos, c->dVg};
    pc[CK_DX] = (piece){c->Rt, c->h, 0, 1, c->tbat, c->tpos, c->dX};
    if (c->mode == ULY_EXEC_TP_ALLREDUCE) {
        /* plain TP: every TP rank holds dX for all rows (replicated); each
         * sends its own share of them, so every row counts once and every
         * rank's result is checked on its share */
        const int64_t lo = c->ti * c->Rt / c->t, hi = (c->ti + 1) * c->Rt / c->t;
        pc[CK_DX] = (piece){hi - lo, c->h, 0, 1, c->tbat + lo, c->tpos + lo, c->dX + lo * c->h};
    }
}

/* full tensor widths (floats per (sequence, position)) */
static int64_t full_width(const hx_ctx *c, int t)
{
    return (t == CK_DK || t == CK_DV) ? c->k * c->d : (t == CK_DX ? c->h : c->a * c->d);
}

static void place(const hx_ctx *c, int t, const piece *p, const int64_t *bat, const int64_t *pos, const float *data,
                  double *full)
{
    const int64_t W = full_width(c, t), d = c->d;
    for (int64_t r = 0; r < p->rows; r++) {
        double *dst = full + (bat[r] * c->N + pos[r]) * W;
        const float *src = data + r * p->width;
        if (t == CK_DX) {
            for (int64_t j = 0; j < W; j++) dst[j] += src[j];
            continue;
        }
        for (int64_t hh = 0; hh < p->width / d; hh++) {
            const int64_t head = (p->h0 + hh) / p->rep;
            for (int64_t e = 0; e < d; e++) dst[head * d + e] += src[hh * d + e];
        }
    }
}

/* ------------------------------------------------------------ reference */

/* The reference's float64 tensors, allocated before any is computed (all
 * or none) and freed together by ref_free; out[] points among them. */
#define REF_MAX_BUFS 48
typedef struct ref {
    double *out[CK_N];
    double *buf[REF_MAX_BUFS];
    int n, failed;
} ref;

static double *ref_take(ref *R, int64_t n)
{
    double *p = R->failed || R->n == REF_MAX_BUFS ? NULL : hx_alloc(sizeof(double) * (size_t)n, "reference");
    if (!p) {
        R->failed = 1;
        return NULL;
    }
    return R->buf[R->n++] = p;
}

static void ref_free(ref *R)
{
    for (int i = 0; i < R->n; i++) free(R->buf[i]);
    R->n = 0;
}

static void dgemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const double *a, int64_t lda, const double *b,
                  int64_t ldb, double beta, double *cc, int64_t ldc)
{
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k,
                1.0, a, (int)lda, b, (int)ldb, beta, cc, (int)ldc);
}

static void rms_f(int64_t rows, int64_t h, const double *x, double *y, double *inv)
{
    for (int64_t r = 0; r < rows; r++) {
        double ss = 0;
        for (int64_t j = 0; j < h; j++) ss += x[r * h + j] * x[r * h + j];
        inv[r] = 1.0 / sqrt(ss / (double)h + 1e-6);
        for (int64_t j = 0; j < h; j++) y[r * h + j] = x[r * h + j] * inv[r];
    }
}

static void rms_b(int64_t rows, int64_t h, const double *x, const double *inv, const double *dy, const double *base,
                  double *dx)
{
    for (int64_t r = 0; r < rows; r++) {
        double dot = 0;
        for (int64_t j = 0; j < h; j++) dot += dy[r * h + j] * x[r * h + j] * inv[r];
        const double mean = dot / (double)h;
        for (int64_t j = 0; j < h; j++)
            dx[r * h + j] = base[r * h + j] + inv[r] * (dy[r * h + j] - x[r * h + j] * inv[r] * mean);
    }
}

/* token-major [b][N][H*d] <-> head-major [b][H][N][d] */
static void to_heads(const hx_ctx *c, const double *src, int64_t H, double *dst)
{
    const int64_t N = c->N, d = c->d;
    for (int64_t bb = 0; bb < c->b; bb++)
        for (int64_t n = 0; n < N; n++)
            for (int64_t hh = 0; hh < H; hh++)
                memcpy(dst + ((bb * H + hh) * N + n) * d, src + ((bb * N + n) * H + hh) * d, sizeof(double) * (size_t)d);
}

static void from_heads(const hx_ctx *c, const double *src, int64_t H, double *dst)
{
    const int64_t N = c->N, d = c->d;
    for (int64_t bb = 0; bb < c->b; bb++)
        for (int64_t n = 0; n < N; n++)
            for (int64_t hh = 0; hh < H; hh++)
                memcpy(dst + ((bb * N + n) * H + hh) * d, src + ((bb * H + hh) * N + n) * d, sizeof(double) * (size_t)d);
}

static int reference(const hx_ctx *c, ref *R)
{
    const int64_t b = c->b, N = c->N, h = c->h, a = c->a, k = c->k, d = c->d, f = c->f;
    const int64_t rows = b * N, ad = a * d, kd = k * d;
    const int sw = c->m.swiglu;
    double *X = ref_take(R, rows * h), *G = ref_take(R, rows * h);
    double *Wq = ref_take(R, h * ad), *Wk = ref_take(R, h * kd), *Wv = ref_take(R, h * kd), *Wo = ref_take(R, ad * h);
    double *W1 = ref_take(R, h * f), *W1u = sw ? ref_take(R, h * f) : NULL, *W2 = ref_take(R, f * h);
    double *inv1 = ref_take(R, rows), *inv2 = ref_take(R, rows), *Y1 = ref_take(R, rows * h);
    double *Q = ref_take(R, rows * ad), *K = ref_take(R, rows * kd), *V = ref_take(R, rows * kd);
    double *Qh = ref_take(R, rows * ad), *Kh = ref_take(R, rows * kd), *Vh = ref_take(R, rows * kd);
    double *Oh = ref_take(R, rows * ad), *lse = ref_take(R, b * a * N), *O = ref_take(R, rows * ad);
    double *X1 = ref_take(R, rows * h), *Y2 = ref_take(R, rows * h);
    double *U = ref_take(R, rows * f), *Uu = sw ? ref_take(R, rows * f) : NULL, *A = ref_take(R, rows * f);
    double *dA = ref_take(R, rows * f), *dU = ref_take(R, rows * f), *dUu = sw ? ref_take(R, rows * f) : NULL;
    double *dY2 = ref_take(R, rows * h), *dX1 = ref_take(R, rows * h);
    double *dO = ref_take(R, rows * ad), *dOh = ref_take(R, rows * ad);
    double *dQh = ref_take(R, rows * ad), *dKh = ref_take(R, rows * kd), *dVh = ref_take(R, rows * kd);
    double *dQ = ref_take(R, rows * ad), *dK = ref_take(R, rows * kd), *dV = ref_take(R, rows * kd);
    double *dY1 = ref_take(R, rows * h), *dX = ref_take(R, rows * h);
    if (R->failed) return HX_FAIL;

    for (int64_t bb = 0; bb < b; bb++)
        for (int64_t n = 0; n < N; n++)
            for (int64_t j = 0; j < h; j++) {
                const uint64_t gi = (uint64_t)(bb * N + n);
                X[(bb * N + n) * h + j] = (double)(hx_rand(c->o.seed, HX_T_X, gi, (uint64_t)j) * 1.7320508f);
                G[(bb * N + n) * h + j] = (double)hx_rand(c->o.seed, HX_T_G, gi, (uint64_t)j);
            }
    for (int64_t i = 0; i < h; i++) {
        for (int64_t j = 0; j < ad; j++) Wq[i * ad + j] = hx_weight(c, HX_T_WQ, i, j);
        for (int64_t j = 0; j < kd; j++) {
            Wk[i * kd + j] = hx_weight(c, HX_T_WK, i, j);
            Wv[i * kd + j] = hx_weight(c, HX_T_WV, i, j);
        }
        for (int64_t j = 0; j < f; j++) {
            W1[i * f + j] = hx_weight(c, HX_T_W1, i, j);
            if (sw) W1u[i * f + j] = hx_weight(c, HX_T_W1U, i, j);
        }
    }
    for (int64_t i = 0; i < ad; i++)
        for (int64_t j = 0; j < h; j++) Wo[i * h + j] = hx_weight(c, HX_T_WO, i, j);
    for (int64_t i = 0; i < f; i++)
        for (int64_t j = 0; j < h; j++) W2[i * h + j] = hx_weight(c, HX_T_W2, i, j);

    /* forward */
    rms_f(rows, h, X, Y1, inv1);
    dgemm(0, 0, rows, ad, h, Y1, h, Wq, ad, 0, Q, ad);
    dgemm(0, 0, rows, kd, h, Y1, h, Wk, kd, 0, K, kd);
    dgemm(0, 0, rows, kd, h, Y1, h, Wv, kd, 0, V, kd);
    to_heads(c, Q, a, Qh);
    to_heads(c, K, k, Kh);
    to_heads(c, V, k, Vh);
    struct kern_attn_desc ds;
    memset(&ds, 0, sizeof ds);
    ds.heads = (int)a;
    ds.kv_heads = (int)k;
    ds.n_q = ds.n_kv = (int)N;
    ds.d = (int)d;
    ds.scale = (float)(1.0 / sqrt((double)d));
    ds.causal = c->w.causal != 0;
    ds.acc = KERN_ACC_F64;
    for (int64_t bb = 0; bb < b; bb++)
        if (kern_attn_ref_fwd_f64(&ds, Qh + bb * N * ad, Kh + bb * N * kd, Vh + bb * N * kd, Oh + bb * N * ad,
                                  lse + bb * a * N) != KERN_OK)
            return hx_fail("reference attention forward failed");
    from_heads(c, Oh, a, O);
    memcpy(X1, X, sizeof(double) * (size_t)(rows * h));
    dgemm(0, 0, rows, h, ad, O, ad, Wo, h, 1.0, X1, h);
    rms_f(rows, h, X1, Y2, inv2);
    dgemm(0, 0, rows, f, h, Y2, h, W1, f, 0, U, f);
    if (sw) dgemm(0, 0, rows, f, h, Y2, h, W1u, f, 0, Uu, f);
    const double k0 = 0.7978845608028654, k1 = 0.044715;
    for (int64_t i = 0; i < rows * f; i++) {
        const double x = U[i];
        if (sw) A[i] = x / (1.0 + exp(-x)) * Uu[i];
        else A[i] = 0.5 * x * (1.0 + tanh(k0 * (x + k1 * x * x * x)));
    }
    /* backward from dM = G (dX2 = G reaches X1 through the residual too) */
    dgemm(0, 1, rows, f, h, G, h, W2, h, 0, dA, f);
    for (int64_t i = 0; i < rows * f; i++) {
        const double x = U[i];
        if (sw) {
            const double s = 1.0 / (1.0 + exp(-x));
            dU[i] = dA[i] * Uu[i] * s * (1.0 + x * (1.0 - s));
            dUu[i] = dA[i] * x * s;
        } else {
            const double t = tanh(k0 * (x + k1 * x * x * x));
            dU[i] = dA[i] * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k0 * (1.0 + 3.0 * k1 * x * x));
        }
    }
    dgemm(0, 1, rows, h, f, dU, f, W1, f, 0, dY2, h);
    if (sw) dgemm(0, 1, rows, h, f, dUu, f, W1u, f, 1.0, dY2, h);
    rms_b(rows, h, X1, inv2, dY2, G, dX1);
    dgemm(0, 1, rows, ad, h, dX1, h, Wo, h, 0, dO, ad);
    to_heads(c, dO, a, dOh);
    for (int64_t bb = 0; bb < b; bb++)
        if (kern_attn_ref_bwd_f64(&ds, Qh + bb * N * ad, Kh + bb * N * kd, Vh + bb * N * kd, Oh + bb * N * ad,
                                  lse + bb * a * N, dOh + bb * N * ad, dQh + bb * N * ad, dKh + bb * N * kd,
                                  dVh + bb * N * kd) != KERN_OK)
            return hx_fail("reference attention backward failed");
    from_heads(c, dQh, a, dQ);
    from_heads(c, dKh, k, dK);
    from_heads(c, dVh, k, dV);
    dgemm(0, 1, rows, h, ad, dQ, ad, Wq, ad, 0, dY1, h);
    dgemm(0, 1, rows, h, kd, dK, kd, Wk, kd, 1.0, dY1, h);
    dgemm(0, 1, rows, h, kd, dV, kd, Wv, kd, 1.0, dY1, h);
    rms_b(rows, h, X, inv1, dY1, dX1, dX);
    R->out[CK_O] = O;
    R->out[CK_DQ] = dQ;
    R->out[CK_DK] = dK;
    R->out[CK_DV] = dV;
    R->out[CK_DX] = dX;
    return HX_OK;
}

/* ------------------------------------------------------------ the check */

/* Which copy of the layer a rank's pieces belong to: its data-parallel
 * replica, within its pipeline stage (every stage runs the same layer on the
 * same inputs, so each stage's copy is checked on its own). The plan's
 * placements give each group's stride in the rank order. */
static int replica_of(const hx_ctx *c, int rank)
{
    const int64_t dp = (rank / c->plan.place[ULY_GROUP_DP].stride) % c->l.dp;
    return (int)(dp + c->l.dp * (rank / c->plan.place[ULY_GROUP_PP].stride));
}

/* every rank but 0: its pieces to rank 0, each a header, the (sequence,
 * position) of every row, and the data */
static int pieces_send(const piece mine[CK_N])
{
    for (int t = 0; t < CK_N; t++) {
        const piece *p = &mine[t];
        int64_t hdr[4] = {p->rows, p->width, p->h0, p->rep};
        int nmeta = 0, ndata = 0;
        HX_TRY(hx_count(2 * p->rows, "check meta", &nmeta));
        HX_TRY(hx_count(p->rows * p->width, "check data", &ndata));
        HX_TRY(HX_MPI(MPI_Send(hdr, 4, MPI_INT64_T, 0, 100 + t, MPI_COMM_WORLD)));
        int64_t *meta = hx_alloc(sizeof(int64_t) * (size_t)(2 * p->rows), "check meta");
        if (!meta) return HX_FAIL;
        for (int64_t r = 0; r < p->rows; r++) {
            meta[2 * r] = p->bat[r];
            meta[2 * r + 1] = p->pos[r];
        }
        int rc = HX_MPI(MPI_Send(meta, nmeta, MPI_INT64_T, 0, 110 + t, MPI_COMM_WORLD));
        free(meta);
        HX_TRY(rc);
        HX_TRY(HX_MPI(MPI_Send(p->data, ndata, MPI_FLOAT, 0, 120 + t, MPI_COMM_WORLD)));
    }
    return HX_OK;
}

/* rank 0: one rank's piece of tensor t; its buffers belong to p (pieces_free) */
static int piece_recv(piece *p, int src, int t)
{
    int64_t hdr[4];
    HX_TRY(HX_MPI(MPI_Recv(hdr, 4, MPI_INT64_T, src, 100 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE)));
    p->rows = hdr[0];
    p->width = hdr[1];
    p->h0 = hdr[2];
    p->rep = hdr[3];
    int nmeta = 0, ndata = 0;
    HX_TRY(hx_count(2 * p->rows, "check meta", &nmeta));
    HX_TRY(hx_count(p->rows * p->width, "check data", &ndata));
    int64_t *bat = hx_alloc(sizeof(int64_t) * (size_t)p->rows, "check meta");
    int64_t *pos = hx_alloc(sizeof(int64_t) * (size_t)p->rows, "check meta");
    float *data = hx_falloc(p->rows * p->width, "check data");
    p->bat = bat;
    p->pos = pos;
    p->data = data;
    int64_t *meta = hx_alloc(sizeof(int64_t) * (size_t)(2 * p->rows), "check meta");
    if (!bat || !pos || !data || !meta) {
        free(meta);
        return HX_FAIL;
    }
    const int rc = HX_MPI(MPI_Recv(meta, nmeta, MPI_INT64_T, src, 110 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int64_t r = 0; rc == HX_OK && r < p->rows; r++) {
        bat[r] = meta[2 * r];
        pos[r] = meta[2 * r + 1];
    }
    free(meta);
    HX_TRY(rc);
    return HX_MPI(MPI_Recv(data, ndata, MPI_FLOAT, src, 120 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

/* the received pieces (rank 0's own are its buffers, not freed) */
static void pieces_free(piece *all, int P)
{
    for (int src = 1; src < P; src++)
        for (int t = 0; t < CK_N; t++) {
            piece *p = &all[src * CK_N + t];
            free((void *)p->bat);
            free((void *)p->pos);
            free((void *)p->data);
        }
    free(all);
}

/* rank 0: each tensor of each replica assembled from its ranks' pieces
 * against the reference; err[t] the worst over the replicas */
static int compare(const hx_ctx *c, const piece *all, const ref *R, double err[CK_N])
{
    const int P = hx_world_size();
    for (int t = 0; t < CK_N; t++) {
        const int64_t n = c->b * c->N * full_width(c, t);
        double *full = hx_alloc(sizeof(double) * (size_t)n, "check: assembled tensor");
        if (!full) return HX_FAIL;
        double mref = 0;
        for (int64_t i = 0; i < n; i++) mref = fabs(R->out[t][i]) > mref ? fabs(R->out[t][i]) : mref;
        if (mref == 0) mref = 1;
        for (int64_t rep = 0; rep < c->dp * c->l.pp; rep++) {
            memset(full, 0, sizeof(double) * (size_t)n);
            for (int src = 0; src < P; src++)
                if (replica_of(c, src) == rep) {
                    const piece *p = &all[src * CK_N + t];
                    place(c, t, p, p->bat, p->pos, p->data, full);
                }
            double e = 0;
            for (int64_t i = 0; i < n; i++) {
                const double x = fabs(full[i] - R->out[t][i]);
                if (!(x <= e)) e = x; /* NaN counts as the worst */
            }
            e /= mref;
            if (!(e <= err[t])) err[t] = e;
        }
        free(full);
    }
    return HX_OK;
}

/* rank 0: every rank's pieces, the reference, the comparison */
static int check_on_root(const hx_ctx *c, const piece mine[CK_N], double err[CK_N])
{
    const int P = hx_world_size();
    piece *all = hx_alloc(sizeof(piece) * (size_t)(P * CK_N), "check pieces");
    if (!all) return HX_FAIL;
    int rc = HX_OK;
    for (int src = 0; src < P && rc == HX_OK; src++)
        for (int t = 0; t < CK_N && rc == HX_OK; t++) {
            if (src == 0) all[t] = mine[t];
            else rc = piece_recv(&all[src * CK_N + t], src, t);
        }
    ref R = {0};
    if (rc == HX_OK) rc = reference(c, &R);
    if (rc == HX_OK) rc = compare(c, all, &R, err);
    ref_free(&R);
    pieces_free(all, P);
    return rc;
}

int hx_check(hx_ctx *c)
{
    piece mine[CK_N];
    pieces_of(c, mine);
    const int me = hx_world_rank();
    hx_beat(-1, "check: sending results to rank 0");
    if (me != 0) HX_TRY(pieces_send(mine));
    double err[CK_N] = {0};
    const int flash = !strcmp(c->kern->name, "flash");
    /* rounding of long sums grows like sqrt(n): widen past 4096 keys */
    const double grow = c->N > 4096 ? sqrt((double)c->N / 4096.0) : 1.0;
    if (!(c->tol > 0)) { /* a backend that computes in another precision sets its own (hx_nccl.c) */
        c->tol = (flash ? 5e-4 : 2e-4) * grow;
        c->tol_reason = flash ? "flash: float32 sums over N keys and GEMM columns, exp2 polynomial (~2 ulp), "
                                "flush-to-zero, log-sum-exp merges; errors of a wrong result are O(1)"
                              : "ref: float32 dot products and sums over N keys and GEMM columns against "
                                "the float64 oracle; errors of a wrong result are O(1)";
    }
    int ok = 1;
    /* local work on rank 0; the others wait in the broadcast below */
    hx_watchdog_pause(1);
    if (me == 0) {
        HX_TRY(check_on_root(c, mine, err));
        for (int t = 0; t < CK_N; t++)
            if (!(err[t] <= c->tol)) ok = 0;
        hx_watchdog_pause(0);
    }
    double buf[CK_N + 1];
    for (int t = 0; t < CK_N; t++) buf[t] = err[t];
    buf[CK_N] = ok;
    HX_TRY(HX_MPI(MPI_Bcast(buf, CK_N + 1, MPI_DOUBLE, 0, MPI_COMM_WORLD)));
    hx_watchdog_pause(0);
    for (int t = 0; t < CK_N; t++) c->err[t] = buf[t];
    ok = buf[CK_N] != 0;
    if (me == 0) {
        fprintf(ok ? stdout : stderr, "%s: max relative error vs float64 reference: O %.2e  dQ %.2e  dK %.2e  dV %.2e  "
                                      "dX %.2e  (tolerance %.1e, %s kernel)%s\n",
                ok ? "check" : "ulyharness: rank 0: CHECK FAILED", c->err[0], c->err[1], c->err[2], c->err[3],
                c->err[4], c->tol, c->kern->name, ok ? "" : ": the distributed result is wrong");
    }
    c->check_ok = ok;
    return HX_OK;
}
