/* calib_fit.h: the fits of `ulysim calibrate` (cmd_calibrate.c), without
 * I/O: measured samples in, fitted parameters, rates and curves with their
 * errors out. GSL does the least squares; its error handler must be off
 * (gsl_set_error_handler_off) so a failed fit returns a status.
 *
 * Links: the latency and inverse bandwidth of each link tier, a weighted
 * least-squares fit (weights 1/t^2: relative residuals, so 1 KiB and
 * 16 MiB messages count alike) of measured times to rows of coefficients
 * (the model's collective cost with one parameter 1 and the others 0).
 * A parameter the fit makes negative is fixed at 0 and the fit repeated.
 *
 * Compute: one rate per group of samples, t = work / rate with relative
 * residuals; a curve is such rates per bin of the curve's key. */
#ifndef SIM_CALIB_FIT_H
#define SIM_CALIB_FIT_H

#include "ulysim.h"

/* ------------------------------------------------------------- the links */

enum { CALIB_LAT_INTRA = 0, CALIB_INVBW_INTRA, CALIB_LAT_INTER, CALIB_INVBW_INTER, CALIB_N_PARAM };

/* One measured collective: its cost per unit of each parameter (seconds
 * per second of latency, per second-per-byte of inverse bandwidth) and the
 * measured time. */
typedef struct calib_link_pt {
    double row[CALIB_N_PARAM];
    double t_s;
} calib_link_pt;

typedef struct calib_links {
    int used[CALIB_N_PARAM];      /* some point depends on the parameter */
    int fixed0[CALIB_N_PARAM];    /* fitted not positive: fixed at 0, the rest refitted */
    double val[CALIB_N_PARAM];    /* the fit: s (latency) or s/B (1/bandwidth); NAN unused or fixed */
    double se[CALIB_N_PARAM];     /* standard errors: covariance times chi^2 / (n - k) */
    double free_val[CALIB_N_PARAM]; /* the first fit, before any parameter was fixed */
    double chisq;                 /* weighted: the sum of squared relative residuals */
    int n, k;                     /* points, parameters of the last fit */
} calib_links;

typedef enum calib_status {
    CALIB_OK = 0,
    CALIB_ENODATA, /* no point, or no point depends on a latency */
    CALIB_EFEW,    /* no more points than the parameters they depend on (F->used): bad input */
    CALIB_EFIT,    /* the least squares failed (GSL) */
} calib_status;

calib_status calib_links_fit(const calib_link_pt *pts, int n, calib_links *out);

/* ----------------------------------------------------------- the compute */

typedef struct calib_sample {
    double x;         /* the curve's key (1 when there is no curve) */
    double work;      /* flops x crit_factor, bytes, or elements */
    double t_s;       /* measured time */
    const char *name; /* the op's name */
} calib_sample;

typedef struct calib_bin {
    double x;         /* geometric mean of the keys in the bin */
    double rate, rate_se; /* work per second */
    int n;
    double resid_med; /* median |relative residual| in the bin */
} calib_bin;

/* One rate for samples: minimises sum ((t - work / rate) / t)^2. 0, or -1
 * when n is 0 or the fit fails. */
int calib_rate_fit(const calib_sample *s, int n, double *rate, double *rate_se, double *resid_med);

/* Rates per bin of log2(x): at most ULY_CURVE_MAX bins of equal width, none
 * narrower than a quarter octave. Sorts s by x. Returns the bins written. */
int calib_curve_fit(calib_sample *s, int n, calib_bin *bins);

/* The highest rate of the bins and of peak. */
double calib_bins_peak(const calib_bin *b, int n, double peak);
/* Multiplies the bins' rates and errors by f. */
void calib_bins_scale(calib_bin *b, int n, double f);

/* A curve as a profile writes it: keys rounded to 1e-3 and kept rising,
 * efficiencies (rate over peak) in [1e-4, 1] rounded to 1e-4. */
void calib_curve_points(const calib_bin *b, int n, double peak, double *x, double *eff);

/* The same as a model curve: n bins' rates over peak (peak <= 0: the best
 * bin's rate), at most ULY_CURVE_MAX points. Returns the peak used. */
double calib_curve_rel(const calib_bin *b, int n, double peak, uly_curve *out);

/* Each rank's share of the cores at `ranks` ranks over its share at
 * `k_ranks`: min(1, cores / ranks) / min(1, cores / k_ranks), what a
 * compute rate measured on k_ranks ranks is worth on ranks. */
double calib_core_share(double cores, int ranks, int k_ranks);

/* A geometric mean: sums of log(ratio). */
typedef struct calib_logmean {
    double sum, sum2;
    int n;
} calib_logmean;
void calib_logmean_add(calib_logmean *a, double ratio);
double calib_logmean_gmean(const calib_logmean *a);   /* NAN when empty */
double calib_logmean_sd(const calib_logmean *a);      /* sd of the logs; 0 below two */

/* Adds, for each backward sample, its rate (times scale) over the forward
 * curve's rate at its key: the forward bins read as uly_curve_eval reads a
 * curve (linear in log2 of the key, clamped at the ends). */
void calib_rel_add(calib_logmean *a, const calib_bin *fwd, int n_fwd, const calib_sample *bwd, int n_bwd,
                   double scale);

#endif
