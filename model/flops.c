/* flops.c: parameter counts, FLOP accounting, and efficiency curves. */
#include <math.h>

#include "internal.h"

/* A layer: attention, its FFN (a MoE model's MoE layer: experts, shared
 * experts, router) and two norms' gains (2h); biases are not counted. */
double uly_layer_params(const uly_model *m)
{
    const double ffn = m->experts > 0 ? uly_expert_params(m) + uly_moe_other_params(m) : uly_mlp_params(m);
    return uly_attention_params(m) + ffn + 2.0 * (double)m->hidden;
}

double uly_model_params(const uly_model *m)
{
    const double emb = (double)m->vocab * (double)m->hidden * (m->tied_embeddings ? 1.0 : 2.0);
    const double moe = (double)uly_moe_layers(m), dense = (double)m->layers - moe;
    const double dense_layer = uly_attention_params(m) + uly_mlp_params(m) + 2.0 * (double)m->hidden;
    return moe * (moe > 0 ? uly_layer_params(m) : 0) + dense * dense_layer + emb + (double)m->hidden;
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

/* Past the last point: e(x) = x / (a x + b), i.e. 1/e linear in 1/x, through
 * the last two points. A blockwise attention kernel's time per key/value
 * block is its FLOPs at a steady rate plus overheads per block that do not
 * grow with the block (loading the query tile, the softmax rescale, writing
 * the output), so its efficiency rises as E x / (x + x0) towards E = 1/a:
 * the last two published points fix E and x0. Curves whose last two points
 * do not rise (b <= 0) keep their last value, as uly_curve_eval does;
 * the efficiency stays at most 1. */
double uly_curve_eval_trend(const uly_curve *c, double x)
{
    const int n = c->n;
    if (n < 2 || !(x > c->x[n - 1])) return uly_curve_eval(c, x);
    const double x1 = c->x[n - 2], x2 = c->x[n - 1];
    const double i1 = 1.0 / c->eff[n - 2], i2 = 1.0 / c->eff[n - 1];
    const double b = (i1 - i2) / (1.0 / x1 - 1.0 / x2);
    if (!(b > 0)) return c->eff[n - 1];
    /* never past the peak: a steep last rise (a <= 0) would grow without
     * bound */
    const double inv = i2 - b / x2 + b / x;
    return inv > 1.0 ? 1.0 / inv : 1.0;
}
