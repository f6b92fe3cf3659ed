/* The fits of `ulysim calibrate` (sim/validate/calib_fit.c) on synthetic samples
 * made from known parameters. Exact samples must give the parameters back
 * to rounding (1e-9 relative: the least squares solve a well-conditioned
 * system of a few unknowns). Samples with relative noise, uniform in +-5%
 * (standard deviation 5%/sqrt(3) = 2.9%) from a fixed generator, must give
 * them within 4 of the fit's own standard errors (so the errors it reports
 * are honest) and within a relative bound stated at each check (the
 * standard error of n points is about 2.9%/sqrt(n) times the design's
 * leverage). */
#include <gsl/gsl_errno.h>
#include <stdint.h>

#include "calib_fit.h"
#include "fixtures.h" /* CHECK and FX_DONE, shared with the model's tests */

static double rel(double got, double want) { return fabs(got / want - 1.0); }

/* Uniform in [-1, 1), the same sequence every run. */
static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static double noise(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 4503599627370496.0 - 1.0; /* 2^52 */
}

/* ------------------------------------------------------------- the links */

/* Points as uly_cost_collective prices them on unit clusters: an all-to-all
 * of p ranks costs (p-1) latencies and its bytes sent over the bandwidth,
 * an all-reduce 2 (p-1) latencies; groups of 16 span two nodes of 8 and
 * pay the NIC's latency and bandwidth for their bytes instead. */
static const double TRUTH[CALIB_N_PARAM] = {2e-6, 1.0 / 5e9, 8e-6, 1.0 / 1e9};

static int make_points(calib_link_pt *pts, int with_inter, double noise_frac, const double *truth)
{
    static const int ps[] = {2, 4, 8, 16};
    int n = 0;
    for (int ip = 0; ip < 4; ip++) {
        const int p = ps[ip], inter = p > 8;
        if (inter && !with_inter) continue;
        for (int ar = 0; ar < 2; ar++)
            for (double bytes = 1024; bytes <= 16 * 1048576.0; bytes *= 4) {
                calib_link_pt *x = &pts[n++];
                memset(x, 0, sizeof *x);
                const double steps = (ar ? 2.0 : 1.0) * (p - 1);
                x->row[inter ? CALIB_LAT_INTER : CALIB_LAT_INTRA] = steps;
                x->row[inter ? CALIB_INVBW_INTER : CALIB_INVBW_INTRA] = bytes * (p - 1) / p;
                double t = 0;
                for (int k = 0; k < CALIB_N_PARAM; k++) t += x->row[k] * truth[k];
                x->t_s = t * (1.0 + noise_frac * noise());
            }
    }
    return n;
}

static void test_links_exact(void)
{
    calib_link_pt pts[128];
    calib_links F;
    int n = make_points(pts, 0, 0, TRUTH);
    CHECK(calib_links_fit(pts, n, &F) == CALIB_OK, "intra fit");
    CHECK(F.used[CALIB_LAT_INTRA] && F.used[CALIB_INVBW_INTRA] && !F.used[CALIB_LAT_INTER] &&
              !F.used[CALIB_INVBW_INTER],
          "only the in-node tier is used");
    CHECK(isnan(F.val[CALIB_LAT_INTER]), "an unused parameter is NAN");
    for (int k = 0; k < 2; k++)
        CHECK(rel(F.val[k], TRUTH[k]) < 1e-9 && !F.fixed0[k], "param %d: %g, want %g", k, F.val[k], TRUTH[k]);
    CHECK(F.n == n && F.k == 2 && F.chisq < 1e-20, "n %d k %d chisq %g", F.n, F.k, F.chisq);

    n = make_points(pts, 1, 0, TRUTH);
    CHECK(calib_links_fit(pts, n, &F) == CALIB_OK && F.k == 4, "both tiers");
    for (int k = 0; k < CALIB_N_PARAM; k++)
        CHECK(rel(F.val[k], TRUTH[k]) < 1e-9, "both tiers, param %d: %g, want %g", k, F.val[k], TRUTH[k]);
}

static void test_links_noise(void)
{
    calib_link_pt pts[128];
    calib_links F;
    const int n = make_points(pts, 1, 0.05, TRUTH);
    CHECK(calib_links_fit(pts, n, &F) == CALIB_OK, "noisy fit");
    /* 64 points, 48 in a node and 16 across: the fit's standard errors are
     * 0.6-1.1% here (latencies rest on the small messages alone), so 4 of
     * them are within 5% for the latencies and 3% for the bandwidths */
    static const double bound[CALIB_N_PARAM] = {0.05, 0.03, 0.05, 0.03};
    for (int k = 0; k < CALIB_N_PARAM; k++) {
        CHECK(F.se[k] > 0 && fabs(F.val[k] - TRUTH[k]) < 4 * F.se[k], "param %d: %g +- %g, truth %g", k, F.val[k],
              F.se[k], TRUTH[k]);
        CHECK(rel(F.val[k], TRUTH[k]) < bound[k], "param %d: %g, %.1f%% from %g (bound %.0f%%)", k, F.val[k],
              100 * rel(F.val[k], TRUTH[k]), TRUTH[k], 100 * bound[k]);
    }
    /* the rms relative residual is the noise's standard deviation, 2.9% */
    const double rms = sqrt(F.chisq / F.n);
    CHECK(rms > 0.02 && rms < 0.04, "rms relative residual %.2f%%, want about 2.9%%", 100 * rms);
}

static void test_links_negative(void)
{
    /* a latency below 0 (what noise on links of nearly no latency gives):
     * fixed at 0, the bandwidth refitted; the first fit is kept */
    calib_link_pt pts[128];
    calib_links F;
    const double truth[CALIB_N_PARAM] = {-1e-7, 1.0 / 5e9, 0, 0};
    int n = 0, m = make_points(pts, 0, 0, truth);
    for (int i = 0; i < m; i++)
        if (pts[i].row[CALIB_INVBW_INTRA] >= 65536) pts[n++] = pts[i]; /* long enough that t > 0 */
    CHECK(calib_links_fit(pts, n, &F) == CALIB_OK, "fit");
    CHECK(F.fixed0[CALIB_LAT_INTRA] && rel(F.free_val[CALIB_LAT_INTRA], -1e-7) < 1e-6,
          "latency fixed at 0, the free fit %g", F.free_val[CALIB_LAT_INTRA]);
    CHECK(!F.fixed0[CALIB_INVBW_INTRA] && F.k == 1 && rel(F.val[CALIB_INVBW_INTRA], 1.0 / 5e9) < 0.02,
          "bandwidth refitted alone: %g s/B (within 2%% of the truth: the latency it absorbs is 0.1 us of "
          "at least 13 us)",
          F.val[CALIB_INVBW_INTRA]);
}

static void test_links_bad(void)
{
    calib_link_pt pts[4];
    calib_links F;
    memset(pts, 0, sizeof pts);
    CHECK(calib_links_fit(pts, 0, &F) == CALIB_ENODATA, "no points");
    for (int i = 0; i < 4; i++) pts[i].row[CALIB_INVBW_INTRA] = 1000.0 * (i + 1), pts[i].t_s = 1e-6 * (i + 1);
    CHECK(calib_links_fit(pts, 4, &F) == CALIB_ENODATA, "no latency column");
    for (int i = 0; i < 2; i++) pts[i].row[CALIB_LAT_INTRA] = 1;
    CHECK(calib_links_fit(pts, 2, &F) == CALIB_EFEW, "two points, two parameters: too few (bad input, exit 2)");
}

/* ----------------------------------------------------------- the compute */

static void test_rate(void)
{
    calib_sample s[64];
    const double r = 3.5e10;
    for (int i = 0; i < 64; i++) s[i] = (calib_sample){1, 1e6 * (i + 1), 1e6 * (i + 1) / r, "op"};
    double rate, se, res;
    CHECK(calib_rate_fit(s, 64, &rate, &se, &res) == 0 && rel(rate, r) < 1e-12 && res < 1e-12 && se < 1e-3 * r,
          "exact: %g (want %g), se %g, residual %g", rate, r, se, res);
    for (int i = 0; i < 64; i++) s[i].t_s *= 1.0 + 0.05 * noise();
    CHECK(calib_rate_fit(s, 64, &rate, &se, &res) == 0, "noisy");
    /* 64 points at 2.9%: the rate within 1.5% (4 standard errors) and its
     * reported error agrees; the median |residual| of uniform +-5% is 2.5% */
    CHECK(rel(rate, r) < 0.015 && fabs(rate - r) < 4 * se, "noisy: %g +- %g, want %g", rate, se, r);
    CHECK(res > 0.015 && res < 0.035, "median |residual| %.2f%%, want about 2.5%%", 100 * res);
    CHECK(calib_rate_fit(s, 0, &rate, &se, &res) == -1, "no samples");
}

static void test_curve(void)
{
    /* keys 2^5 .. 2^12, 4 samples each, a rate per key: 7 octaves make 8
     * bins 0.875 octave wide, one key in each */
    calib_sample s[32];
    double want[8];
    int n = 0;
    for (int k = 0; k < 8; k++) {
        want[k] = 1e9 * (1 + k);
        for (int j = 0; j < 4; j++) {
            const double work = 1e7 * (j + 1);
            s[n++] = (calib_sample){exp2(5 + k), work, work / want[k], "gemm"};
        }
    }
    /* shuffled: the fit sorts by key */
    for (int i = 0; i < n; i++) {
        const int j = (int)((noise() + 1) * 0.5 * n) % n;
        const calib_sample t = s[i];
        s[i] = s[j], s[j] = t;
    }
    calib_bin b[ULY_CURVE_MAX];
    const int nb = calib_curve_fit(s, n, b);
    CHECK(nb == 8, "%d bins, want 8", nb);
    for (int k = 0; k < nb; k++)
        CHECK(b[k].n == 4 && rel(b[k].x, exp2(5 + k)) < 1e-12 && rel(b[k].rate, want[k]) < 1e-12,
              "bin %d: %d samples at %g, rate %g (want 4 at %g, %g)", k, b[k].n, b[k].x, b[k].rate, exp2(5 + k),
              want[k]);
    CHECK(rel(calib_bins_peak(b, nb, 0), 8e9) < 1e-12, "peak: the best bin");
    CHECK(calib_bins_peak(b, nb, 1e10) == 1e10, "peak: a higher one given");
    /* one octave: 4 bins of a quarter octave; a fifth of an octave: one bin */
    for (int i = 0; i < 8; i++) s[i] = (calib_sample){exp2(10 + i / 7.0), 1e6, 1e-3, "a"};
    CHECK(calib_curve_fit(s, 8, b) == 4, "one octave: 4 bins");
    for (int i = 0; i < 8; i++) s[i].x = exp2(10 + 0.2 * i / 7.0);
    CHECK(calib_curve_fit(s, 8, b) == 1 && b[0].n == 8 && rel(b[0].rate, 1e9) < 1e-12, "a fifth of an octave");
    calib_bins_scale(b, 1, 0.5);
    CHECK(rel(b[0].rate, 5e8) < 1e-12, "scaled");
}

static void test_curve_points(void)
{
    /* keys rounded to 1e-3 and kept rising; efficiencies rate / peak,
     * clamped to [1e-4, 1] and rounded to 1e-4 */
    const calib_bin b[4] = {{.x = 8.00049, .rate = 5e9}, {.x = 8.0004, .rate = 2e10},
                            {.x = 64.1234, .rate = 1e3}, {.x = 512, .rate = 1.23456e9}};
    double x[4], eff[4];
    calib_curve_points(b, 4, 1e10, x, eff);
    CHECK(x[0] == 8.0 && x[1] > x[0] && fabs(x[1] - (8.0 * 1.001 + 1e-3)) < 1e-12, "keys %g %g: rising", x[0],
          x[1]);
    CHECK(x[2] == 64.123 && x[3] == 512, "keys %g %g", x[2], x[3]);
    CHECK(eff[0] == 0.5 && eff[1] == 1 && eff[2] == 1e-4 && eff[3] == 0.1235, "eff %g %g %g %g", eff[0], eff[1],
          eff[2], eff[3]);
}

static void test_curve_rel(void)
{
    /* the activation's cost per element by element count, 3 counts two
     * octaves apart, 2 ops each: 30 ns at 2^17, 28 at 2^19, 35 at 2^21.
     * The curve over the best bin (28 ns) gives each count its cost back as
     * best cost / eff, to the 1e-4 rounding of eff */
    const double ns[3] = {30, 28, 35};
    calib_sample s[6];
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 2; j++) {
            const double elems = exp2(17 + 2 * k);
            s[2 * k + j] = (calib_sample){elems, elems, elems * ns[k] * 1e-9 * (j ? 1.01 : 0.99), "mlp_act"};
        }
    calib_bin b[ULY_CURVE_MAX];
    const int nb = calib_curve_fit(s, 6, b);
    CHECK(nb == 3, "%d bins, want 3", nb);
    uly_curve c;
    const double best = calib_curve_rel(b, nb, 0, &c);
    CHECK(c.n == 3 && rel(1e9 / best, 28) < 1e-3, "best bin %g ns, want 28", 1e9 / best);
    for (int k = 0; k < 3; k++) {
        const double got_ns = 1e9 / best / uly_curve_eval(&c, exp2(17 + 2 * k));
        CHECK(rel(got_ns, ns[k]) < 5e-4, "at 2^%d: %g ns per element, want %g", 17 + 2 * k, got_ns, ns[k]);
    }
    /* over a given peak: eff = rate / peak; the curve holds at most ULY_CURVE_MAX points */
    CHECK(calib_curve_rel(b, nb, 2 * best, &c) == 2 * best && c.n == 3 && fabs(c.eff[1] - 0.5) < 1e-4,
          "over twice the best: eff %g at the best bin", c.eff[1]);
    calib_bin many[ULY_CURVE_MAX + 2];
    for (int i = 0; i < ULY_CURVE_MAX + 2; i++) many[i] = (calib_bin){.x = exp2(i + 1), .rate = 1e9};
    CHECK(calib_curve_rel(many, ULY_CURVE_MAX + 2, 0, &c) == 1e9 && c.n == ULY_CURVE_MAX, "%d points", c.n);
}

static void test_share_and_means(void)
{
    /* 2 cores: kernels on 2 ranks run a core each, on 4 ranks half of one */
    CHECK(calib_core_share(2, 4, 2) == 0.5, "4 ranks on 2 cores, kernels on 2");
    CHECK(calib_core_share(2, 2, 2) == 1, "same ranks");
    CHECK(calib_core_share(8, 4, 2) == 1, "enough cores for both");
    calib_logmean g = {0};
    CHECK(isnan(calib_logmean_gmean(&g)) && calib_logmean_sd(&g) == 0, "empty");
    calib_logmean_add(&g, 2);
    calib_logmean_add(&g, 8);
    CHECK(rel(calib_logmean_gmean(&g), 4) < 1e-12, "geometric mean of 2 and 8");
    CHECK(rel(calib_logmean_sd(&g), log(4) / sqrt(2)) < 1e-12, "sd of ln 2, ln 8");

    /* backward at 0.7 x the forward curve, which rises linearly in log2 of
     * the key from 1 GFLOP/s at 64 to 2 at 1024 and is flat beyond */
    const calib_bin fwd[2] = {{.x = 64, .rate = 1e9}, {.x = 1024, .rate = 2e9}};
    const calib_sample bwd[3] = {{256, 0.7 * 1.5e9, 1, "b"}, {64, 0.7e9, 1, "b"}, {4096, 1.4e9, 1, "b"}};
    calib_logmean r = {0};
    calib_rel_add(&r, fwd, 2, bwd, 3, 1.0);
    CHECK(r.n == 3 && rel(calib_logmean_gmean(&r), 0.7) < 1e-12 && calib_logmean_sd(&r) < 1e-7,
          "backward over forward %g (want 0.7), sd %g", calib_logmean_gmean(&r), calib_logmean_sd(&r));
    calib_logmean r2 = {0};
    calib_rel_add(&r2, fwd, 2, bwd, 3, 2.0);
    calib_rel_add(&r2, fwd, 0, bwd, 3, 1.0); /* no forward curve: nothing to compare */
    CHECK(r2.n == 3 && rel(calib_logmean_gmean(&r2), 1.4) < 1e-12, "scaled by 2: %g", calib_logmean_gmean(&r2));
}

int main(void)
{
    gsl_set_error_handler_off();
    test_links_exact();
    test_links_noise();
    test_links_negative();
    test_links_bad();
    test_rate();
    test_curve();
    test_curve_points();
    test_curve_rel();
    test_share_and_means();
    FX_DONE();
}
