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
 * Both grow by sqrt(N / 4096) past 4096 tokens (rounding of long sums).
 *
 * What it compares (--check, hx_check_plan): full, every head and row; or a
 * sample drawn from a per-run seed: one KV head in eight (at least one) and
 * every query head reading it, whose O, dQ, dK, dV are recomputed over every
 * row, and dX on 256 rows. The float64 attention needs every head's O to
 * build the later layers' inputs of dO, and every head's dQ, dK, dV for dX:
 * the sample takes those of the unchecked heads from the run (replica 0), so
 * each checked value is a float64 recomputation from the same inputs. It
 * catches anything wrong in a checked head (any row: masks, offsets, blocks,
 * ring merges, the all-to-all of that head, dK/dV reductions) and in the
 * GEMMs, norms, MLP and their TP reductions on the checked rows; it misses
 * an error confined to unchecked heads (their O, dQ, dK, dV, which it takes
 * as given) and rows it does not sample. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "hx.h"

/* CK_MOE: a MoE layer's routed experts' output (token-side, h wide), only
 * for a MoE model (ck_count) */
enum { CK_O = 0, CK_DQ, CK_DK, CK_DV, CK_DX, CK_MOE, CK_N };

static int ck_count(const hx_ctx *c) { return c->m.experts > 0 ? CK_N : CK_MOE; }
static int token_side(int t) { return t == CK_DX || t == CK_MOE; }

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
    pc[CK_MOE] = (piece){c->moe ? c->Rt : 0, c->h, 0, 1, c->tbat, c->tpos, c->moe ? hx_moe_out(c) : NULL};
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
    return (t == CK_DK || t == CK_DV) ? c->k * c->d : (token_side(t) ? c->h : c->a * c->d);
}

static void place(const hx_ctx *c, int t, const piece *p, const int64_t *bat, const int64_t *pos, const float *data,
                  double *full)
{
    const int64_t W = full_width(c, t), d = c->d;
    for (int64_t r = 0; r < p->rows; r++) {
        double *dst = full + (bat[r] * c->N + pos[r]) * W;
        const float *src = data + r * p->width;
        if (token_side(t)) {
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

/* The reference computes the checked heads' attention over every row and
 * the rest of the layer row by row, in blocks of REF_BLOCK rows (so that
 * its memory does not grow with the FFN width times N). out[t] are the
 * full token-major tensors [b][N][W]: under a sample they start as the
 * run's own (replica 0) and the reference overwrites what it checks; the
 * unchecked heads' O then feed the checked rows' dO, and their dQ, dK, dV
 * the checked rows' dX, as the run's values. */
#define REF_BLOCK 256
typedef struct ref {
    double *X, *G, *Y1, *inv1, *dX1;                 /* [rows][h], [rows] */
    double *Wq, *Wk, *Wv, *Wo, *W1, *W1u, *W2;
    double *Qh, *Kh, *Vh, *Oh, *lse, *dOh, *dQh, *dKh, *dVh; /* [b][checked heads][N][d], lse [b][n_q][N] */
    /* one block of rows */
    double *X1, *Y2, *inv2, *U, *Uu, *dA, *dU, *dUu, *dY2;
    double *bq, *bk, *bv, *bx, *binv, *bd1, *by, *bdx;
    double *out[CK_N];
    struct hx_moe_ref *moe; /* a MoE layer's routed experts (hx_moe_ref.c) */
} ref;

/* Carves the reference's buffers from s (sizing while s has no memory). */
static void ref_carve(const hx_ctx *c, const struct hx_sample *S, hx_slab *s, ref *R)
{
    const int64_t rows = c->b * c->N, h = c->h, ad = c->a * c->d, kd = c->k * c->d, f = c->f, d = c->d;
    const int64_t B = REF_BLOCK, sw = c->m.swiglu;
#define TAKE(n) ((double *)hx_slab_take(s, (n) > INT64_MAX / 8 ? INT64_MAX : (int64_t)(n) * 8))
    R->X = TAKE(rows * h);
    R->G = TAKE(rows * h);
    R->Y1 = TAKE(rows * h);
    R->inv1 = TAKE(rows);
    R->dX1 = TAKE(rows * h);
    R->Wq = TAKE(h * ad);
    R->Wk = TAKE(h * kd);
    R->Wv = TAKE(h * kd);
    R->Wo = TAKE(ad * h);
    R->W1 = TAKE(h * f);
    R->W1u = sw ? TAKE(h * f) : NULL;
    R->W2 = TAKE(f * h);
    const int64_t nq = rows * S->n_q * d, nk = rows * S->n_kv * d;
    double **q[] = {&R->Qh, &R->Oh, &R->dOh, &R->dQh}, **k[] = {&R->Kh, &R->Vh, &R->dKh, &R->dVh};
    for (int i = 0; i < 4; i++) *q[i] = TAKE(nq);
    for (int i = 0; i < 4; i++) *k[i] = TAKE(nk);
    R->lse = TAKE(rows * S->n_q);
    double **bh[] = {&R->X1, &R->Y2, &R->dY2, &R->bx, &R->bd1, &R->by, &R->bdx};
    for (int i = 0; i < 7; i++) *bh[i] = TAKE(B * h);
    R->inv2 = TAKE(B);
    R->binv = TAKE(B);
    R->U = TAKE(B * f);
    R->dA = TAKE(B * f);
    R->dU = TAKE(B * f);
    R->Uu = sw ? TAKE(B * f) : NULL;
    R->dUu = sw ? TAKE(B * f) : NULL;
    R->bq = TAKE(B * ad);
    R->bk = TAKE(B * kd);
    R->bv = TAKE(B * kd);
    for (int t = 0; t < CK_N; t++)
        R->out[t] = TAKE(t >= ck_count(c) ? 0 : rows * (t == CK_DK || t == CK_DV ? kd : token_side(t) ? h : ad));
#undef TAKE
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

/* head-major [b][n][N][d] of the listed heads <-> token-major [b][N][H*d] */
static void heads_put(const hx_ctx *c, const double *src, const int64_t *list, int64_t n, int64_t H, double *dst)
{
    const int64_t N = c->N, d = c->d;
    for (int64_t bb = 0; bb < c->b; bb++)
        for (int64_t i = 0; i < n; i++)
            for (int64_t p = 0; p < N; p++)
                memcpy(dst + ((bb * N + p) * H + list[i]) * d, src + ((bb * n + i) * N + p) * d,
                       sizeof(double) * (size_t)d);
}

/* the listed heads' columns of a token-major input times W [h][H*d]: head-major */
static void heads_gemm(const hx_ctx *c, const double *Y, const double *W, const int64_t *list, int64_t n, int64_t H,
                       double *dst)
{
    const int64_t N = c->N, d = c->d, h = c->h;
    for (int64_t bb = 0; bb < c->b; bb++)
        for (int64_t i = 0; i < n; i++)
            dgemm(0, 0, N, d, h, Y + bb * N * h, h, W + list[i] * d, H * d, 0, dst + (bb * n + i) * N * d, d);
}

/* the MLP of n rows (Y2) and its backward from dM = G into dY2 */
static void ref_mlp(const hx_ctx *c, ref *R, const double *G, int64_t n)
{
    const int64_t h = c->h, f = c->f;
    const int sw = c->m.swiglu;
    dgemm(0, 0, n, f, h, R->Y2, h, R->W1, f, 0, R->U, f);
    if (sw) dgemm(0, 0, n, f, h, R->Y2, h, R->W1u, f, 0, R->Uu, f);
    dgemm(0, 1, n, f, h, G, h, R->W2, h, 0, R->dA, f);
    const double k0 = 0.7978845608028654, k1 = 0.044715;
    for (int64_t i = 0; i < n * f; i++) {
        const double x = R->U[i], dA = R->dA[i];
        if (sw) {
            const double sg = 1.0 / (1.0 + exp(-x));
            R->dU[i] = dA * R->Uu[i] * sg * (1.0 + x * (1.0 - sg));
            R->dUu[i] = dA * x * sg;
        } else {
            const double t = tanh(k0 * (x + k1 * x * x * x));
            R->dU[i] = dA * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k0 * (1.0 + 3.0 * k1 * x * x));
        }
    }
    dgemm(0, 1, n, h, f, R->dU, f, R->W1, f, 0, R->dY2, h);
    if (sw) dgemm(0, 1, n, h, f, R->dUu, f, R->W1u, f, 1.0, R->dY2, h);
}

/* rows [r0, r0 + n) of one sequence after attention: X1 = X + O Wo, the MLP,
 * its backward from dM = G (which reaches X1 through the residual too), dX1,
 * and dO of the checked heads */
static void ref_rows(const hx_ctx *c, const struct hx_sample *S, ref *R, int64_t bb, int64_t p0, int64_t n)
{
    const int64_t h = c->h, ad = c->a * c->d, f = c->f, d = c->d, N = c->N, r0 = bb * N + p0;
    const double *G = R->G + r0 * h;
    memcpy(R->X1, R->X + r0 * h, sizeof(double) * (size_t)(n * h));
    dgemm(0, 0, n, h, ad, R->out[CK_O] + r0 * ad, ad, R->Wo, h, 1.0, R->X1, h);
    rms_f(n, h, R->X1, R->Y2, R->inv2);
    memset(R->dY2, 0, sizeof(double) * (size_t)(n * h));
    if (f > 0) ref_mlp(c, R, G, n); /* a MoE layer without shared experts has none */
    if (R->moe) hx_moe_ref_rows(c, R->moe, R->Y2, G, r0, n, R->out[CK_MOE] + r0 * h, R->dY2);
    rms_b(n, h, R->X1, R->inv2, R->dY2, G, R->dX1 + r0 * h);
    for (int64_t i = 0; i < S->n_q; i++)
        dgemm(0, 1, n, d, h, R->dX1 + r0 * h, h, R->Wo + S->q[i] * d * h, h, 0,
              R->dOh + ((bb * S->n_q + i) * N + p0) * d, d);
}

static int64_t sample_row(const struct hx_sample *S, int64_t i) { return S->rows ? S->rows[i] : i; }

/* dX of the checked rows [i0, i0 + n) of the sample from dQ, dK, dV (out[]) and dX1 */
static void ref_dx(const hx_ctx *c, const struct hx_sample *S, ref *R, int64_t i0, int64_t n)
{
    const int64_t h = c->h, ad = c->a * c->d, kd = c->k * c->d;
    for (int64_t i = 0; i < n; i++) {
        const int64_t row = sample_row(S, i0 + i);
        memcpy(R->bq + i * ad, R->out[CK_DQ] + row * ad, sizeof(double) * (size_t)ad);
        memcpy(R->bk + i * kd, R->out[CK_DK] + row * kd, sizeof(double) * (size_t)kd);
        memcpy(R->bv + i * kd, R->out[CK_DV] + row * kd, sizeof(double) * (size_t)kd);
        memcpy(R->bx + i * h, R->X + row * h, sizeof(double) * (size_t)h);
        memcpy(R->bd1 + i * h, R->dX1 + row * h, sizeof(double) * (size_t)h);
        R->binv[i] = R->inv1[row];
    }
    dgemm(0, 1, n, h, ad, R->bq, ad, R->Wq, ad, 0, R->by, h);
    dgemm(0, 1, n, h, kd, R->bk, kd, R->Wk, kd, 1.0, R->by, h);
    dgemm(0, 1, n, h, kd, R->bv, kd, R->Wv, kd, 1.0, R->by, h);
    rms_b(n, h, R->bx, R->binv, R->by, R->bd1, R->bdx);
    for (int64_t i = 0; i < n; i++)
        memcpy(R->out[CK_DX] + sample_row(S, i0 + i) * h, R->bdx + i * h, sizeof(double) * (size_t)h);
}

/* the reference kernels' progress callback: a beat per query row */
static void alive_row(void *arg)
{
    (void)arg;
    hx_alive_tick();
}

/* The float64 layer on the same seeded inputs: GEMMs by cblas_dgemm,
 * attention (the checked heads, every row) by kern_attn_ref_*_f64. */
static int reference(const hx_ctx *c, const struct hx_sample *S, ref *R)
{
    const int64_t b = c->b, N = c->N, h = c->h, a = c->a, k = c->k, d = c->d, f = c->f;
    const int64_t rows = b * N, ad = a * d, kd = k * d;
    const int sw = c->m.swiglu;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < h; j++) {
            R->X[r * h + j] = (double)(hx_rand(c->o.seed, HX_T_X, (uint64_t)r, (uint64_t)j) * 1.7320508f);
            R->G[r * h + j] = (double)hx_rand(c->o.seed, HX_T_G, (uint64_t)r, (uint64_t)j);
        }
    for (int64_t i = 0; i < h; i++) {
        for (int64_t j = 0; j < ad; j++) R->Wq[i * ad + j] = hx_weight(c, HX_T_WQ, i, j);
        for (int64_t j = 0; j < kd; j++) {
            R->Wk[i * kd + j] = hx_weight(c, HX_T_WK, i, j);
            R->Wv[i * kd + j] = hx_weight(c, HX_T_WV, i, j);
        }
        for (int64_t j = 0; j < f; j++) {
            R->W1[i * f + j] = hx_weight(c, HX_T_W1, i, j);
            if (sw) R->W1u[i * f + j] = hx_weight(c, HX_T_W1U, i, j);
        }
    }
    for (int64_t i = 0; i < ad; i++)
        for (int64_t j = 0; j < h; j++) R->Wo[i * h + j] = hx_weight(c, HX_T_WO, i, j);
    for (int64_t i = 0; i < f; i++)
        for (int64_t j = 0; j < h; j++) R->W2[i * h + j] = hx_weight(c, HX_T_W2, i, j);

    /* forward: the checked heads' Q, K, V and attention over every row */
    rms_f(rows, h, R->X, R->Y1, R->inv1);
    heads_gemm(c, R->Y1, R->Wq, S->q, S->n_q, a, R->Qh);
    heads_gemm(c, R->Y1, R->Wk, S->kv, S->n_kv, k, R->Kh);
    heads_gemm(c, R->Y1, R->Wv, S->kv, S->n_kv, k, R->Vh);
    struct kern_attn_desc ds;
    memset(&ds, 0, sizeof ds);
    ds.heads = (int)S->n_q;
    ds.kv_heads = (int)S->n_kv;
    ds.n_q = ds.n_kv = (int)N;
    ds.d = (int)d;
    ds.scale = (float)(1.0 / sqrt((double)d));
    ds.causal = c->w.causal != 0;
    ds.acc = KERN_ACC_F64;
    ds.progress = alive_row; /* a long reference shows the waiting ranks rank 0 is alive */
    const int64_t nq = S->n_q * N * d, nk = S->n_kv * N * d;
    for (int64_t bb = 0; bb < b; bb++, hx_alive_tick())
        if (kern_attn_ref_fwd_f64(&ds, R->Qh + bb * nq, R->Kh + bb * nk, R->Vh + bb * nk, R->Oh + bb * nq,
                                  R->lse + bb * S->n_q * N) != KERN_OK)
            return hx_fail("reference attention forward failed");
    heads_put(c, R->Oh, S->q, S->n_q, a, R->out[CK_O]);
    /* the rest of the layer and its backward, row by row, to dO */
    for (int64_t bb = 0; bb < b; bb++)
        for (int64_t p0 = 0; p0 < N; p0 += REF_BLOCK, hx_alive_tick())
            ref_rows(c, S, R, bb, p0, N - p0 < REF_BLOCK ? N - p0 : REF_BLOCK);
    for (int64_t bb = 0; bb < b; bb++, hx_alive_tick())
        if (kern_attn_ref_bwd_f64(&ds, R->Qh + bb * nq, R->Kh + bb * nk, R->Vh + bb * nk, R->Oh + bb * nq,
                                  R->lse + bb * S->n_q * N, R->dOh + bb * nq, R->dQh + bb * nq, R->dKh + bb * nk,
                                  R->dVh + bb * nk) != KERN_OK)
            return hx_fail("reference attention backward failed");
    heads_put(c, R->dQh, S->q, S->n_q, a, R->out[CK_DQ]);
    heads_put(c, R->dKh, S->kv, S->n_kv, k, R->out[CK_DK]);
    heads_put(c, R->dVh, S->kv, S->n_kv, k, R->out[CK_DV]);
    for (int64_t i0 = 0; i0 < S->n_rows; i0 += REF_BLOCK, hx_alive_tick())
        ref_dx(c, S, R, i0, S->n_rows - i0 < REF_BLOCK ? S->n_rows - i0 : REF_BLOCK);
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

/* rank 0: tensor t of one replica assembled from its ranks' pieces */
static void assemble(const hx_ctx *c, const piece *all, int t, int64_t rep, double *full)
{
    memset(full, 0, sizeof(double) * (size_t)(c->b * c->N * full_width(c, t)));
    for (int src = 0; src < hx_world_size(); src++)
        if (replica_of(c, src) == rep) {
            const piece *p = &all[src * CK_N + t];
            place(c, t, p, p->bat, p->pos, p->data, full);
        }
}

/* max |x - y| (y NULL: max |x|) over what the sample checks of tensor t:
 * the checked heads' columns of O, dQ, dK, dV over every row, the checked
 * rows of dX. NaN counts as the worst. */
static double checked_max(const hx_ctx *c, const struct hx_sample *S, int t, const double *x, const double *y)
{
    const int64_t W = full_width(c, t), d = c->d;
    double e = 0;
    if (token_side(t)) {
        for (int64_t i = 0; i < S->n_rows; i++)
            for (int64_t j = 0, r = sample_row(S, i); j < W; j++) {
                const double v = fabs(x[r * W + j] - (y ? y[r * W + j] : 0));
                if (!(v <= e)) e = v;
            }
        return e;
    }
    const uint8_t *on = t == CK_DK || t == CK_DV ? S->kv_on : S->q_on;
    for (int64_t r = 0; r < c->b * c->N; r++)
        for (int64_t j = 0; j < W; j++)
            if (on[j / d]) {
                const double v = fabs(x[r * W + j] - (y ? y[r * W + j] : 0));
                if (!(v <= e)) e = v;
            }
    return e;
}

/* rank 0: each tensor of each replica assembled from its ranks' pieces
 * against the reference; err[t] the worst over the replicas */
static int compare(const hx_ctx *c, const piece *all, const ref *R, double err[CK_N])
{
    const struct hx_sample *S = &c->sample;
    for (int t = 0; t < ck_count(c); t++) { /* a dense layer's CK_MOE pieces are empty */
        double *full = hx_alloc(sizeof(double) * (size_t)(c->b * c->N * full_width(c, t)), "check: assembled tensor");
        if (!full) return HX_FAIL;
        double mref = checked_max(c, S, t, R->out[t], NULL);
        if (mref == 0) mref = 1;
        for (int64_t rep = 0; rep < c->dp * c->l.pp; rep++) {
            hx_alive_tick();
            assemble(c, all, t, rep, full);
            const double e = checked_max(c, S, t, full, R->out[t]) / mref;
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
            hx_alive_tick();
            hx_wait_for(src);
            if (src == 0) all[t] = mine[t];
            else rc = piece_recv(&all[src * CK_N + t], src, t);
            hx_wait_for(-1);
        }
    if (rc == HX_OK && c->o.inject_stop_check) { /* as a debugger or a swapped-out node would */
        fprintf(stderr, "ulyharness: rank 0: injected stop in the reference check\n");
        fflush(stderr);
        raise(SIGSTOP);
    }
    ref R;
    hx_slab s = {0};
    if (rc == HX_OK) {
        ref_carve(c, &c->sample, &s, &R);
        void *base = hx_alloc(s.used, "the float64 reference");
        if (!base) rc = HX_FAIL;
        else {
            hx_slab_start(&s, base);
            ref_carve(c, &c->sample, &s, &R);
            rc = hx_slab_carved(&s, "reference");
        }
    }
    /* a sample: the unchecked heads' tensors are the run's own (replica 0) */
    for (int t = 0; rc == HX_OK && c->sample.rows && t < CK_DX; t++) assemble(c, all, t, 0, R.out[t]);
    R.moe = NULL;
    if (rc == HX_OK && c->moe && !(R.moe = hx_moe_ref_new(c))) rc = HX_FAIL;
    if (rc == HX_OK) rc = reference(c, &c->sample, &R);
    if (rc == HX_OK) rc = compare(c, all, &R, err);
    hx_moe_ref_free(R.moe);
    hx_slab_free(&s);
    pieces_free(all, P);
    return rc;
}

/* ------------------------------------------------------------ the sample */

/* a uniform integer in [0, n), drawn from the check's seed: 48 random bits */
static int64_t draw(uint64_t seed, uint64_t i, int64_t n)
{
    const uint64_t hi = (uint64_t)((hx_rand(seed, HX_T_CHECK, i, 0) + 1.0f) * 8388608.0f);
    const uint64_t lo = (uint64_t)((hx_rand(seed, HX_T_CHECK, i, 1) + 1.0f) * 8388608.0f);
    return (int64_t)(((hi << 24) | lo) % (uint64_t)n);
}

static int cmp_i64(const void *x, const void *y)
{
    const int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* k distinct integers of [0, n), sorted (Floyd's algorithm; k is small) */
static void draw_distinct(uint64_t seed, uint64_t stream, int64_t n, int64_t k, int64_t *out)
{
    int64_t m = 0;
    for (int64_t j = n - k; j < n; j++) {
        int64_t t = draw(seed, stream + (uint64_t)j, j + 1), seen = 0;
        for (int64_t i = 0; i < m && !seen; i++) seen = out[i] == t;
        out[m++] = seen ? j : t;
    }
    qsort(out, (size_t)m, sizeof *out, cmp_i64);
}

void hx_sample_free(struct hx_sample *s)
{
    free(s->q);
    free(s->kv);
    free(s->q_on);
    free(s->kv_on);
    free(s->rows);
    memset(s, 0, sizeof *s);
}

/* The sample: every head and row (full); else SAMPLE_KV_HEADS KV heads per
 * eight (at least one), every query head that reads them, and SAMPLE_ROWS
 * rows of dX, drawn from the seed. */
#define SAMPLE_ROWS 256
static int sample_make(hx_ctx *c, int full)
{
    struct hx_sample *S = &c->sample;
    const int64_t a = c->a, k = c->k, g = a / k, rows = c->b * c->N;
    S->n_kv = full ? k : (k + 7) / 8;
    S->n_q = S->n_kv * g;
    S->n_rows = full || rows <= SAMPLE_ROWS ? rows : SAMPLE_ROWS;
    S->kv = hx_alloc(sizeof(int64_t) * (size_t)S->n_kv, "check sample");
    S->q = hx_alloc(sizeof(int64_t) * (size_t)S->n_q, "check sample");
    S->kv_on = hx_alloc((size_t)k, "check sample");
    S->q_on = hx_alloc((size_t)a, "check sample");
    S->rows = full ? NULL : hx_alloc(sizeof(int64_t) * (size_t)S->n_rows, "check sample");
    if (!S->kv || !S->q || !S->kv_on || !S->q_on || (!full && !S->rows)) return HX_FAIL;
    if (full)
        for (int64_t i = 0; i < k; i++) S->kv[i] = i;
    else
        draw_distinct(c->check_seed, 0, k, S->n_kv, S->kv);
    for (int64_t i = 0; i < S->n_kv; i++) {
        S->kv_on[S->kv[i]] = 1;
        for (int64_t j = 0; j < g; j++) S->q_on[S->q[i * g + j] = S->kv[i] * g + j] = 1; /* GQA: head q reads q / g */
    }
    if (!full) draw_distinct(c->check_seed, (uint64_t)k, rows, S->n_rows, S->rows);
    return HX_OK;
}

/* one line: the sampled heads and rows (the trace's summary lists every row) */
static void sample_print(const hx_ctx *c, FILE *fp)
{
    const struct hx_sample *S = &c->sample;
    fprintf(fp, "check: sampled, seed %llu (--check-seed %llu repeats it): KV heads", (unsigned long long)c->check_seed,
            (unsigned long long)c->check_seed);
    for (int64_t i = 0; i < S->n_kv; i++) fprintf(fp, "%s%lld", i ? "," : " ", (long long)S->kv[i]);
    fprintf(fp, " (query heads");
    for (int64_t i = 0; i < S->n_q; i++) fprintf(fp, "%s%lld", i ? "," : " ", (long long)S->q[i]);
    fprintf(fp, ") of %lld/%lld over every row; dX on %lld of %lld rows (sequence*N + position):", (long long)c->k,
            (long long)c->a, (long long)S->n_rows, (long long)(c->b * c->N));
    for (int64_t i = 0; i < S->n_rows && i < 8; i++) fprintf(fp, " %lld", (long long)S->rows[i]);
    fprintf(fp, "%s\n", S->n_rows > 8 ? " ..." : "");
}

/* the reference's attention, forward and backward (4 and 10 flops per
 * query-key pair and head dimension), causal: half the pairs */
static double ref_attn_flops(const hx_ctx *c)
{
    return (double)c->b * (double)c->a * (double)c->N * (double)c->N * (double)c->d * 14.0 * (c->w.causal ? 0.5 : 1.0);
}

int hx_check_plan(hx_ctx *c)
{
    const int asked = c->o.no_check ? HX_CHECK_NONE : c->o.check;
    c->check_mode = asked != HX_CHECK_AUTO ? asked
                    : ref_attn_flops(c) <= HX_CHECK_FULL_FLOPS ? HX_CHECK_FULL : HX_CHECK_SAMPLED;
    c->o.no_check = c->check_mode == HX_CHECK_NONE;
    c->check_seed = c->o.check_seed;
    if (c->check_mode == HX_CHECK_SAMPLED && !c->check_seed && hx_world_rank() == 0) {
        /* per run: the clock and the process; kept below 2^53 so that the
         * trace's JSON number holds it exactly */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = (uint64_t)ts.tv_sec * 1000000007ULL ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
        x = (x * 0x9e3779b97f4a7c15ULL) >> 11;
        c->check_seed = x ? x : 1;
    }
    if (c->check_mode == HX_CHECK_NONE || hx_world_rank() != 0) return HX_OK;
    return sample_make(c, c->check_mode == HX_CHECK_FULL);
}

void hx_check_bytes(const hx_ctx *c, double *root, double *pieces)
{
    *root = *pieces = 0;
    if (c->check_mode == HX_CHECK_NONE) return;
    piece mine[CK_N];
    pieces_of(c, mine);
    for (int t = 0; t < CK_N; t++) /* data, (sequence, position) of every row, and their message */
        *pieces += (double)mine[t].rows * (double)(mine[t].width * 4 + 32);
    if (hx_world_rank() != 0) return;
    hx_slab s = {0};
    ref R;
    ref_carve(c, &c->sample, &s, &R);
    /* and one assembled tensor at a time, the widest */
    const int64_t w = c->a * c->d > c->h ? c->a * c->d : c->h;
    *root = (double)s.used + (double)c->b * (double)c->N * (double)w * 8.0 + hx_moe_ref_bytes(c);
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
    hx_moe_tol(c);
    int ok = 1;
    /* local work on rank 0 (its computing is its watchdog's heartbeat; its
     * alive messages the others'); the others wait in the broadcast below */
    hx_beat(-1, me == 0 ? "check: the float64 reference on rank 0" : "check: waiting for rank 0's reference check");
    if (me == 0) {
        HX_TRY(check_on_root(c, mine, err));
        for (int t = 0; t < CK_N; t++)
            if (!(err[t] <= (t == CK_MOE ? c->tol_moe : c->tol))) ok = 0;
    }
    double buf[CK_N + 2];
    for (int t = 0; t < CK_N; t++) buf[t] = err[t];
    buf[CK_N] = ok;
    HX_TRY(hx_bcast_after_root_work(buf, CK_N + 1));
    for (int t = 0; t < CK_N; t++) c->err[t] = buf[t];
    ok = buf[CK_N] != 0;
    const int sampled = c->check_mode == HX_CHECK_SAMPLED;
    if (me == 0 && sampled) sample_print(c, stdout);
    if (me == 0) {
        fprintf(ok ? stdout : stderr, "%s: max relative error vs float64 reference%s: O %.2e  dQ %.2e  dK %.2e  dV %.2e  "
                                      "dX %.2e  (tolerance %.1e, %s kernel)%s\n",
                ok ? "check" : "ulyharness: rank 0: CHECK FAILED", sampled ? " (sampled)" : "", c->err[0], c->err[1],
                c->err[2], c->err[3],
                c->err[4], c->tol, c->kern->name, ok ? "" : ": the distributed result is wrong");
        if (c->moe)
            fprintf(ok ? stdout : stderr, "%s: routed experts' output: max relative error %.2e (tolerance %.1e: %s)\n",
                    ok ? "check" : "ulyharness: rank 0: CHECK FAILED", c->err[CK_MOE], c->tol_moe, c->tol_moe_reason);
    }
    c->check_ok = ok;
    return HX_OK;
}
