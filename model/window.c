/* window.c: sliding-window attention: which layers have a window, how much
 * of the score matrix a window leaves, and the model's check of its fields
 * (docs/model.md, "Sliding-window attention"). */
#include "internal.h"

int64_t uly_window_layers(const uly_model *m)
{
    if (m->attn_window <= 0) return 0;
    return m->window_layers > 0 ? m->window_layers : m->layers;
}

/* Score entries of an N x N attention a window of W keys leaves, and the
 * full matrix's: causal, query i (0-based) sees min(i + 1, W) keys of its
 * i + 1, so sum min(i + 1, W) = W N - W (W - 1) / 2 once N >= W;
 * bidirectional, the keys j with |i - j| < W: N (2W - 1) - W (W - 1) once
 * N >= W, against N^2. */
static void window_entries(double N, double W, int causal, double *win, double *full)
{
    if (causal) {
        *full = N * (N + 1.0) / 2.0;
        *win = N >= W ? W * N - W * (W - 1.0) / 2.0 : *full;
    } else {
        *full = N * N;
        *win = N >= W ? N * (2.0 * W - 1.0) - W * (W - 1.0) : *full;
    }
    if (*win > *full) *win = *full;
}

double uly_attn_window_density(const uly_model *m, const uly_workload *w, double *share)
{
    const int64_t nw = uly_window_layers(m);
    if (share) *share = 0;
    if (nw <= 0 || w->seq <= 0) return 1.0;
    double win, full;
    window_entries((double)w->seq, (double)m->attn_window, w->causal, &win, &full);
    const double L = (double)m->layers, phi = (double)nw / L, r = win / full;
    const double rho = (1.0 - phi) + phi * r;
    if (share) *share = phi * r / rho;
    return rho;
}

uly_status uly_window_model_check(const uly_model *m, char *why, size_t n)
{
    if (m->attn_window < 0 || m->attn_window > ((int64_t)1 << 40))
        return uly_fail(why, n, "attn_window = %lld: must be 0 (no window) or a token count 1..%lld",
                        (long long)m->attn_window, (long long)1 << 40);
    if (m->window_layers < 0 || m->window_layers > m->layers)
        return uly_fail(why, n, "window_layers = %lld: must be 0 (every layer) to layers = %lld",
                        (long long)m->window_layers, (long long)m->layers);
    if (m->window_layers > 0 && m->attn_window == 0)
        return uly_fail(why, n, "window_layers = %lld: needs attn_window, the window's width in tokens",
                        (long long)m->window_layers);
    return ULY_OK;
}
