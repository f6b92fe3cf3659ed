/* calib_fit.c: the least-squares fits of `ulysim calibrate` (declared and
 * described in calib_fit.h). No I/O. */
#include <gsl/gsl_fit.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calib_fit.h"

/* ------------------------------------------------------------- the links */

/* One weighted fit over the parameters used and not fixed. 0, or -1. */
static int links_fit_once(const calib_link_pt *pts, int n, calib_links *F)
{
    int cols[CALIB_N_PARAM], k = 0;
    for (int j = 0; j < CALIB_N_PARAM; j++) {
        F->val[j] = NAN;
        F->se[j] = NAN;
        if (!F->used[j] || F->fixed0[j]) continue;
        cols[k++] = j;
    }
    if (k == 0) return 0;
    if (n <= k) return -1;
    gsl_matrix *X = gsl_matrix_alloc((size_t)n, (size_t)k);
    gsl_vector *y = gsl_vector_alloc((size_t)n), *w = gsl_vector_alloc((size_t)n), *c = gsl_vector_alloc((size_t)k);
    gsl_matrix *cov = gsl_matrix_alloc((size_t)k, (size_t)k);
    gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc((size_t)n, (size_t)k);
    int st = -1;
    if (!X || !y || !w || !c || !cov || !ws) goto out;
    for (int i = 0; i < n; i++) {
        const double t = pts[i].t_s;
        for (int q = 0; q < k; q++) gsl_matrix_set(X, (size_t)i, (size_t)q, pts[i].row[cols[q]]);
        gsl_vector_set(y, (size_t)i, t);
        gsl_vector_set(w, (size_t)i, 1.0 / (t * t));
    }
    double chisq = 0;
    st = gsl_multifit_wlinear(X, w, y, c, cov, &chisq, ws);
    /* the weights are relative, not measured variances: scale the
     * covariance by the residual variance */
    const double scale = n > k ? chisq / (double)(n - k) : 0;
    for (int q = 0; q < k; q++) {
        F->val[cols[q]] = gsl_vector_get(c, (size_t)q);
        F->se[cols[q]] = sqrt(gsl_matrix_get(cov, (size_t)q, (size_t)q) * scale);
    }
    F->chisq = chisq;
    F->n = n;
    F->k = k;
out:
    if (ws) gsl_multifit_linear_free(ws);
    if (X) gsl_matrix_free(X);
    if (cov) gsl_matrix_free(cov);
    if (y) gsl_vector_free(y);
    if (w) gsl_vector_free(w);
    if (c) gsl_vector_free(c);
    return st ? -1 : 0;
}

calib_status calib_links_fit(const calib_link_pt *pts, int n, calib_links *F)
{
    memset(F, 0, sizeof *F);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < CALIB_N_PARAM; k++)
            if (pts[i].row[k] != 0) F->used[k] = 1;
    if (n <= 0 || (!F->used[CALIB_LAT_INTRA] && !F->used[CALIB_LAT_INTER])) return CALIB_ENODATA;
    int n_used = 0;
    for (int k = 0; k < CALIB_N_PARAM; k++) n_used += F->used[k];
    if (n <= n_used) return CALIB_EFEW; /* the data, not the fit: a trace too short to determine them */
    /* a latency or inverse bandwidth below 0 is noise the data cannot
     * resolve, not a property of the link: fix it at 0, refit the rest */
    for (int round = 0; round < CALIB_N_PARAM; round++) {
        if (links_fit_once(pts, n, F)) return CALIB_EFIT;
        if (round == 0) memcpy(F->free_val, F->val, sizeof F->val);
        int again = 0;
        for (int k = 0; k < CALIB_N_PARAM; k++)
            if (F->used[k] && !F->fixed0[k] && !(F->val[k] > 0)) {
                F->fixed0[k] = 1;
                again = 1;
            }
        if (!again) break;
    }
    return CALIB_OK;
}

/* ----------------------------------------------------------- the compute */

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* t = c1 work with weights 1/t^2 (gsl_fit_wmul); rate = 1 / c1. */
int calib_rate_fit(const calib_sample *s, int n, double *rate, double *rate_se, double *resid_med)
{
    if (n <= 0) return -1;
    double *x = malloc(sizeof(double) * (size_t)n * 3);
    if (!x) return -1;
    double *y = x + n, *w = x + 2 * n;
    for (int i = 0; i < n; i++) {
        x[i] = s[i].work;
        y[i] = s[i].t_s;
        w[i] = 1.0 / (s[i].t_s * s[i].t_s);
    }
    double c1 = 0, cov = 0, sumsq = 0;
    int st = gsl_fit_wmul(x, 1, w, 1, y, 1, (size_t)n, &c1, &cov, &sumsq);
    if (st || !(c1 > 0)) {
        free(x);
        return -1;
    }
    const double se_c1 = n > 1 ? sqrt(cov * sumsq / (double)(n - 1)) : 0;
    *rate = 1.0 / c1;
    *rate_se = se_c1 / (c1 * c1);
    for (int i = 0; i < n; i++) x[i] = fabs(c1 * s[i].work / s[i].t_s - 1.0);
    qsort(x, (size_t)n, sizeof *x, cmp_dbl);
    *resid_med = n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
    free(x);
    return 0;
}

static int cmp_sample(const void *a, const void *b)
{
    const calib_sample *x = a, *y = b;
    return (x->x > y->x) - (x->x < y->x);
}

int calib_curve_fit(calib_sample *s, int n, calib_bin *bins)
{
    if (n <= 0) return 0;
    qsort(s, (size_t)n, sizeof *s, cmp_sample);
    const double lo = log2(s[0].x), hi = log2(s[n - 1].x);
    int nb = ULY_CURVE_MAX;
    if (hi - lo < 0.25) nb = 1;
    else if ((hi - lo) / nb < 0.25) nb = (int)((hi - lo) / 0.25);
    if (nb < 1) nb = 1;
    int out = 0;
    for (int b = 0, i = 0; b < nb; b++) {
        const double edge = b == nb - 1 ? INFINITY : lo + (hi - lo) * (b + 1) / nb;
        int j = i;
        while (j < n && log2(s[j].x) <= edge) j++;
        if (j > i) {
            double lx = 0;
            for (int q = i; q < j; q++) lx += log2(s[q].x);
            bins[out].x = exp2(lx / (j - i));
            bins[out].n = j - i;
            if (calib_rate_fit(s + i, j - i, &bins[out].rate, &bins[out].rate_se, &bins[out].resid_med) == 0) out++;
        }
        i = j;
    }
    return out;
}

double calib_bins_peak(const calib_bin *b, int n, double peak)
{
    for (int i = 0; i < n; i++) peak = b[i].rate > peak ? b[i].rate : peak;
    return peak;
}

void calib_bins_scale(calib_bin *b, int n, double f)
{
    for (int i = 0; i < n; i++) b[i].rate *= f, b[i].rate_se *= f;
}

void calib_curve_points(const calib_bin *b, int n, double peak, double *x, double *eff)
{
    double prev = 0;
    for (int i = 0; i < n; i++) {
        double v = round(b[i].x * 1000) / 1000;
        if (v <= prev) v = prev * 1.001 + 1e-3; /* a curve's keys must rise */
        prev = v;
        double e = b[i].rate / peak;
        if (e > 1) e = 1;
        if (e < 1e-4) e = 1e-4;
        x[i] = v;
        eff[i] = round(e * 10000) / 10000;
    }
}

double calib_curve_rel(const calib_bin *b, int n, double peak, uly_curve *out)
{
    if (n > ULY_CURVE_MAX) n = ULY_CURVE_MAX;
    if (!(peak > 0)) peak = calib_bins_peak(b, n, 0);
    memset(out, 0, sizeof *out);
    out->n = n > 0 ? n : 0;
    calib_curve_points(b, out->n, peak, out->x, out->eff);
    return peak;
}

double calib_core_share(double cores, int ranks, int k_ranks)
{
    return fmin(1.0, cores / ranks) / fmin(1.0, cores / k_ranks);
}

void calib_logmean_add(calib_logmean *a, double ratio)
{
    const double l = log(ratio);
    a->sum += l, a->sum2 += l * l, a->n++;
}

double calib_logmean_gmean(const calib_logmean *a) { return a->n ? exp(a->sum / a->n) : NAN; }

double calib_logmean_sd(const calib_logmean *a)
{
    const double var = a->n > 1 ? (a->sum2 - a->sum * a->sum / a->n) / (a->n - 1) : 0;
    return sqrt(var > 0 ? var : 0);
}

void calib_rel_add(calib_logmean *a, const calib_bin *fwd, int n_fwd, const calib_sample *bwd, int n_bwd,
                   double scale)
{
    if (n_fwd <= 0) return;
    uly_curve fc = {.n = n_fwd < ULY_CURVE_MAX ? n_fwd : ULY_CURVE_MAX};
    for (int i = 0; i < fc.n; i++) fc.x[i] = fwd[i].x, fc.eff[i] = fwd[i].rate;
    for (int i = 0; i < n_bwd; i++)
        calib_logmean_add(a, scale * bwd[i].work / bwd[i].t_s / uly_curve_eval(&fc, bwd[i].x));
}
