/* Sliding-window attention (model/window.c; docs/model.md, "Sliding-window
 * attention"), each against an expectation worked out here:
 *   the score entries a window leaves, counted query by query, causal and
 *   bidirectional, and the mean over windowed and full layers;
 *   flash attention's FLOPs scaled by that mean for Ulysses, the ring and
 *   all-gather CP, materialised attention's left whole, the bytes sent
 *   unchanged;
 *   the model FLOPs' attention term scaled likewise;
 *   the time of a flash op: the windowed layers' share at the efficiency of
 *   a block of the window's keys, the rest at the op's own block;
 *   the fields' checks. */
#include "fixtures.h"

static uly_plan plan;

/* Visible entries by brute force: query i sees key j when j <= i and
 * i - j < W (causal), or |i - j| < W. */
static double count_entries(int64_t N, int64_t W, int causal)
{
    double c = 0;
    for (int64_t i = 0; i < N; i++)
        for (int64_t j = 0; j < N; j++) {
            const int64_t dist = i > j ? i - j : j - i;
            if (causal && j > i) continue;
            if (W > 0 && dist >= W) continue;
            c += 1;
        }
    return c;
}

static void density_counts(void)
{
    uly_model m = fx_llama3_8b();
    uly_workload w = fx_work(300);
    static const int64_t wins[] = {1, 7, 64, 299, 300, 1000};
    for (int causal = 0; causal <= 1; causal++)
        for (size_t k = 0; k < sizeof wins / sizeof wins[0]; k++)
            for (int64_t layers = 0; layers <= m.layers; layers += 8) {
                m.attn_window = wins[k], m.window_layers = layers;
                w.causal = causal;
                const double full = count_entries(300, 0, causal), win = count_entries(300, wins[k], causal);
                const double phi = (layers ? (double)layers : (double)m.layers) / (double)m.layers;
                const double want = (1 - phi) + phi * win / full;
                double share = -1;
                const double got = uly_attn_window_density(&m, &w, &share);
                CHECK(fabs(got / want - 1) < 1e-12, "causal %d, W %lld, %lld layers: density %.12g, want %.12g",
                      causal, (long long)wins[k], (long long)layers, got, want);
                CHECK(fabs(share - phi * (win / full) / want) < 1e-12, "causal %d, W %lld: share %.12g, want %.12g",
                      causal, (long long)wins[k], share, phi * (win / full) / want);
            }
    m.attn_window = 0, m.window_layers = 0;
    double share = -1;
    CHECK(uly_attn_window_density(&m, &w, &share) == 1.0 && share == 0, "no window: density 1, share 0");
}

static double attn_flops(void)
{
    double f = 0;
    for (int i = 0; i < plan.n_ops; i++)
        if (plan.ops[i].kind == ULY_OP_ATTN) f += plan.ops[i].flops;
    return f;
}

static int eval(const uly_model *m, const uly_workload *w, const uly_cluster *c, uly_strategy_id s, int64_t u,
                int64_t r, uly_result *res)
{
    uly_layout l;
    uly_layout_init(&l, s, u, r, 1, 1);
    return (int)uly_evaluate(m, w, c, &l, &plan, res);
}

/* Attention FLOPs, bytes and model FLOPs: half the layers windowed at 4096
 * of 65536 tokens */
static void flops_and_bytes(void)
{
    const uly_cluster c = fx_a100(8);
    const uly_model full = fx_llama3_8b();
    uly_model win = full;
    win.attn_window = 4096, win.window_layers = 16;
    const double N = 65536, W = 4096;
    const double r = (W * N - W * (W - 1) / 2) / (N * (N + 1) / 2), rho = 0.5 + 0.5 * r;
    const struct {
        uly_strategy_id s;
        int64_t u, r;
    } lay[] = {{ULY_STRAT_ULYSSES, 8, 1}, {ULY_STRAT_RING, 1, 8}, {ULY_STRAT_ALLGATHER_CP, 1, 8}};
    for (size_t i = 0; i < sizeof lay / sizeof lay[0]; i++)
        for (int flash = 0; flash <= 1; flash++) {
            uly_workload w = fx_work((int64_t)N);
            w.flash = flash, w.recompute = ULY_RECOMPUTE_NONE;
            uly_result a, b;
            CHECK(eval(&full, &w, &c, lay[i].s, lay[i].u, lay[i].r, &a) == 0, "full");
            const double fa = attn_flops();
            CHECK(eval(&win, &w, &c, lay[i].s, lay[i].u, lay[i].r, &b) == 0, "windowed");
            const double fb = attn_flops();
            const char *nm = uly_strategy_get(lay[i].s)->name;
            const double want = flash ? rho : 1.0; /* materialised scores are computed whole, then masked */
            CHECK(fabs(fb / fa / want - 1) < 1e-12, "%s flash %d: attention FLOPs x%.9g, want x%.9g", nm, flash,
                  fb / fa, want);
            CHECK(a.comm_fwd_bytes == b.comm_fwd_bytes && a.comm_bwd_bytes == b.comm_bwd_bytes,
                  "%s: a window changed the bytes sent", nm);
            /* model FLOPs: 3 L x 2 N^2 a (d_qk + d_v) x 1/2 (causal) per
             * sequence, whatever the kernel, times rho */
            const double attn_model = 3.0 * 32 * 2.0 * N * N * 32 * (128 + 128) * 0.5;
            CHECK(fabs((a.time.model_flops - b.time.model_flops) / (attn_model * (1 - rho)) - 1) < 1e-6,
                  "%s flash %d: model FLOPs fell by %.9g, want %.9g", nm, flash, a.time.model_flops - b.time.model_flops,
                  attn_model * (1 - rho));
        }
}

/* e(x) on a two-point curve, linear in log2 x, clamped at its ends */
static double curve_at(double x0, double e0, double x1, double e1, double x)
{
    if (x <= x0) return e0;
    if (x >= x1) return e1;
    return e0 + (e1 - e0) * (log2(x) - log2(x0)) / (log2(x1) - log2(x0));
}

/* A flash op's time: the windowed share at e(W), the rest at e(kv) */
static void time_at_window_key(void)
{
    uly_cluster c = fx_a100(8);
    const double x0 = 128, e0 = 0.10, x1 = 65536, e1 = 0.40;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            uly_curve *cv = &c.gpu.attn_eff[i][j];
            cv->n = 2, cv->x[0] = x0, cv->eff[0] = e0, cv->x[1] = x1, cv->eff[1] = e1;
        }
    uly_model m = fx_llama3_8b();
    m.attn_window = 4096, m.window_layers = 8;
    uly_workload w = fx_work(32768);
    w.recompute = ULY_RECOMPUTE_NONE;
    uly_result res;
    CHECK(eval(&m, &w, &c, ULY_STRAT_ULYSSES, 8, 1, &res) == 0, "windowed ulysses");
    double share = 0;
    uly_attn_window_density(&m, &w, &share);
    CHECK(share > 0 && share < 1, "a share between 0 and 1 (%.6g)", share);
    int n = 0;
    for (int i = 0; i < plan.n_ops; i++) {
        const uly_op *o = &plan.ops[i];
        if (o->kind != ULY_OP_ATTN) continue;
        const double kv = o->eff_size, peak = 312e12;
        const double want = o->flops * ((1 - share) / (peak * curve_at(x0, e0, x1, e1, kv)) +
                                        share / (peak * curve_at(x0, e0, x1, e1, kv < 4096 ? kv : 4096))) *
                            o->crit_factor;
        CHECK(fabs(res.op_time_s[i] / want - 1) < 1e-9, "%s: %.9g s, want %.9g (kv %.0f)", uly_op_type_name(o->type),
              res.op_time_s[i], want, kv);
        n++;
    }
    CHECK(n == 2, "the forward and backward attention ops priced (%d)", n);
}

static void field_checks(void)
{
    uly_model m = fx_llama3_8b();
    char why[256];
    m.attn_window = -1;
    CHECK(uly_model_check(&m, why, sizeof why) != ULY_OK && strstr(why, "attn_window = -1"), "a negative window: %s",
          why);
    m.attn_window = 4096, m.window_layers = 33;
    CHECK(uly_model_check(&m, why, sizeof why) != ULY_OK && strstr(why, "window_layers = 33"),
          "more windowed layers than layers: %s", why);
    m.attn_window = 0, m.window_layers = 4;
    CHECK(uly_model_check(&m, why, sizeof why) != ULY_OK && strstr(why, "needs attn_window"),
          "windowed layers without a window: %s", why);
    m.attn_window = 4096, m.window_layers = 0;
    CHECK(uly_model_check(&m, why, sizeof why) == ULY_OK && uly_window_layers(&m) == 32,
          "a window on every layer (window_layers 0): %lld layers", (long long)uly_window_layers(&m));
}

int main(void)
{
    density_counts();
    flops_and_bytes();
    time_at_window_key();
    field_checks();
    FX_DONE();
}
