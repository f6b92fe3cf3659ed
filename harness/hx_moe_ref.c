/* hx_moe_ref.c: the float64 reference of a MoE layer's routed experts for
 * the check on rank 0 (hx_check.c): token by token, the same deterministic
 * router as the run (hx_moe.c: token g's j-th copy to expert (g k + j) mod
 * E), the gates the softmax of its k chosen logits, each chosen expert's
 * whole FFN (every ETP slice), their gated sum; and backward from the
 * layer's upstream gradient G, through the experts and the gates to the
 * router's input, added to dY2. Weights from the same seeded draws. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hx.h"

struct hx_moe_ref {
    int64_t E, k, h, f;
    int sw;
    double *wr, *w1, *w1u, *w2;          /* [h][E], [E][h][f] (x2), [E][f][h] */
    double *l, *g, *dg, *dl, *y, *u, *uu, *a, *da, *ys; /* one token's (ys: an output recomputed) */
};

static double *dal(int64_t n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(double)); }

struct hx_moe_ref *hx_moe_ref_new(const hx_ctx *c)
{
    struct hx_moe_ref *R = calloc(1, sizeof *R);
    if (!R) {
        hx_fail("out of memory: the MoE reference");
        return NULL;
    }
    const int64_t E = c->m.experts, h = c->h, f = c->m.moe_ffn_hidden, k = c->m.topk;
    *R = (struct hx_moe_ref){E, k, h, f, c->m.swiglu, dal(h * E), dal(E * h * f), dal(E * h * f), dal(E * f * h),
                             dal(k), dal(k), dal(k), dal(k), dal(k * h), dal(f), dal(f), dal(f), dal(f), dal(h)};
    if (!R->wr || !R->w1 || !R->w1u || !R->w2 || !R->l || !R->g || !R->dg || !R->dl || !R->y || !R->u || !R->uu ||
        !R->a || !R->da || !R->ys) {
        hx_moe_ref_free(R);
        hx_fail("out of memory: the MoE reference");
        return NULL;
    }
    for (int64_t i = 0; i < h; i++)
        for (int64_t e = 0; e < E; e++) R->wr[i * E + e] = hx_weight(c, HX_T_WR, i, e);
    for (int64_t e = 0; e < E; e++)
        for (int64_t i = 0; i < h; i++)
            for (int64_t m = 0; m < f; m++) {
                R->w1[(e * h + i) * f + m] = hx_weight(c, HX_T_EW1, e * h + i, m);
                R->w1u[(e * h + i) * f + m] = c->m.swiglu ? hx_weight(c, HX_T_EW1U, e * h + i, m) : 0;
                R->w2[(e * f + m) * h + i] = hx_weight(c, HX_T_EW2, e * f + m, i);
            }
    return R;
}

void hx_moe_ref_free(struct hx_moe_ref *R)
{
    if (!R) return;
    double *p[] = {R->wr, R->w1, R->w1u, R->w2, R->l, R->g, R->dg, R->dl, R->y, R->u, R->uu, R->a, R->da, R->ys};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
    free(R);
}

double hx_moe_ref_bytes(const hx_ctx *c)
{
    const double E = (double)c->m.experts, h = (double)c->h, f = (double)c->m.moe_ffn_hidden;
    return c->m.experts > 0 ? 8.0 * (h * E + 3.0 * E * h * f) : 0;
}

/* expert e's FFN of token x: u (and uu), the activation a, the output y */
static void expert_fwd(struct hx_moe_ref *R, int64_t e, const double *x, double *y)
{
    const int64_t h = R->h, f = R->f;
    const double *w1 = R->w1 + e * h * f, *w1u = R->w1u + e * h * f, *w2 = R->w2 + e * f * h;
    const double k0 = 0.7978845608028654, k1 = 0.044715;
    for (int64_t m = 0; m < f; m++) R->u[m] = R->uu[m] = 0;
    for (int64_t i = 0; i < h; i++)
        for (int64_t m = 0; m < f; m++) {
            R->u[m] += x[i] * w1[i * f + m];
            R->uu[m] += x[i] * w1u[i * f + m];
        }
    for (int64_t m = 0; m < f; m++) {
        const double v = R->u[m];
        R->a[m] = R->sw ? v / (1.0 + exp(-v)) * R->uu[m] : 0.5 * v * (1.0 + tanh(k0 * (v + k1 * v * v * v)));
    }
    for (int64_t i = 0; i < h; i++) y[i] = 0;
    for (int64_t m = 0; m < f; m++)
        for (int64_t i = 0; i < h; i++) y[i] += R->a[m] * w2[m * h + i];
}

/* its backward from dy: dx += W1 du (recomputes u, a) */
static void expert_bwd(struct hx_moe_ref *R, int64_t e, const double *x, const double *dy, double *dx)
{
    const int64_t h = R->h, f = R->f;
    const double *w1 = R->w1 + e * h * f, *w1u = R->w1u + e * h * f, *w2 = R->w2 + e * f * h;
    const double k0 = 0.7978845608028654, k1 = 0.044715;
    expert_fwd(R, e, x, R->ys); /* u, uu, a again */
    for (int64_t m = 0; m < f; m++) {
        double d = 0;
        for (int64_t i = 0; i < h; i++) d += w2[m * h + i] * dy[i];
        R->da[m] = d;
    }
    for (int64_t m = 0; m < f; m++) {
        const double v = R->u[m], da = R->da[m];
        double du, duu = 0;
        if (R->sw) {
            const double sg = 1.0 / (1.0 + exp(-v));
            du = da * R->uu[m] * sg * (1.0 + v * (1.0 - sg));
            duu = da * v * sg;
        } else {
            const double t = tanh(k0 * (v + k1 * v * v * v));
            du = da * (0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * k0 * (1.0 + 3.0 * k1 * v * v));
        }
        for (int64_t i = 0; i < h; i++) dx[i] += w1[i * f + m] * du + w1u[i * f + m] * duu;
    }
}

void hx_moe_ref_rows(const hx_ctx *c, struct hx_moe_ref *R, const double *Y2, const double *G, int64_t g0, int64_t n,
                     double *out, double *dY2)
{
    (void)c;
    const int64_t h = R->h, k = R->k, E = R->E;
    for (int64_t t = 0; t < n; t++) {
        const double *x = Y2 + t * h, *gr = G + t * h;
        const int64_t g = g0 + t;
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < k; j++) {
            const int64_t e = (g * k + j) % E;
            double l = 0;
            for (int64_t i = 0; i < h; i++) l += x[i] * R->wr[i * E + e];
            R->l[j] = l;
            mx = l > mx ? l : mx;
        }
        for (int64_t j = 0; j < k; j++) sum += R->g[j] = exp(R->l[j] - mx);
        double *o = out + t * h, *dx = dY2 + t * h, sdot = 0;
        for (int64_t i = 0; i < h; i++) o[i] = 0;
        for (int64_t j = 0; j < k; j++) {
            R->g[j] /= sum;
            double *y = R->y + j * h;
            expert_fwd(R, (g * k + j) % E, x, y);
            R->dg[j] = 0;
            for (int64_t i = 0; i < h; i++) {
                o[i] += R->g[j] * y[i];
                R->dg[j] += gr[i] * y[i];
            }
            sdot += R->g[j] * R->dg[j];
        }
        for (int64_t j = 0; j < k; j++) {
            const int64_t e = (g * k + j) % E;
            double *dy = R->y + j * h; /* the gated upstream gradient, over y (used) */
            for (int64_t i = 0; i < h; i++) dy[i] = R->g[j] * gr[i];
            expert_bwd(R, e, x, dy, dx);
            const double dl = R->g[j] * (R->dg[j] - sdot);
            for (int64_t i = 0; i < h; i++) dx[i] += dl * R->wr[i * E + e];
        }
    }
}
