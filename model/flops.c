/* flops.c: parameter counts, FLOP accounting, and efficiency curves. */
#include <math.h>

#include "internal.h"

double uly_layer_params(const uly_model *m)
{
    /* two norms' gains are counted (2h); biases are not */
    return uly_attn_params(m) + uly_mlp_params(m) + 2.0 * (double)m->hidden;
}

double uly_model_params(const uly_model *m)
{
    const double emb = (double)m->vocab * (double)m->hidden * (m->tied_embeddings ? 1.0 : 2.0);
    return (double)m->layers * uly_layer_params(m) + emb + (double)m->hidden;
}

double uly_flops_megatron(const uly_model *m, int64_t global_batch, int64_t seq, int recompute_full)
{
    const double B = (double)global_batch, N = (double)seq, L = (double)m->layers, h = (double)m->hidden;
    const double V = (double)m->vocab;
    if (recompute_full) return 96.0 * B * N * L * h * h * (1.0 + N / (6.0 * h) + V / (16.0 * L * h));
    return 72.0 * B * N * L * h * h * (1.0 + N / (6.0 * h) + V / (12.0 * L * h));
}

double uly_curve_eval(const uly_curve *c, double x)
{
    if (c->n <= 0) return 0;
    if (c->n == 1 || x <= c->x[0]) return c->eff[0];
    if (x >= c->x[c->n - 1]) return c->eff[c->n - 1];
    int i = 1;
    while (c->x[i] < x) i++;
    const double t = (log2(x) - log2(c->x[i - 1])) / (log2(c->x[i]) - log2(c->x[i - 1]));
    return c->eff[i - 1] + t * (c->eff[i] - c->eff[i - 1]);
}
