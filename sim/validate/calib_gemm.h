/* calib_gemm.h: fitting the GEMM-by-shape model to measured GEMMs, for
 * `ulysim calibrate --gemms` and a GPU base's `--kernels` (calib_gemm_cmd.c).
 *
 * The model (model/gemm.c, docs/model.md "GEMMs by shape") takes the SM
 * count, the tile and the HBM rate from the datasheet and the copy
 * measurement, and leaves two constants to measurement: f, the achievable
 * fraction of the dense peak (gpu.gemm_peak_frac), and L, the k loop's fill
 * paid once per GEMM (gpu.gemm_latency_us). Each sample is one GEMM, or a
 * backward op's two (input and weight gradient), priced through the
 * library's own uly_gemm_time_s, so the fit stays true to the formulas
 * whatever they become. The fit minimises the squared relative residuals
 * (a 5 us GEMM counts as much as a 5 ms one): for a given f the best
 * L >= 0 is closed-form (the time is linear in L), and f is searched on a
 * log grid, then refined by golden section around the best grid point (the
 * time is piecewise in f: waves and split-K choices jump). No I/O but the
 * table reader's, which returns a reason instead of printing. */
#ifndef SIM_CALIB_GEMM_H
#define SIM_CALIB_GEMM_H

#include <stddef.h>

#include "ulysim.h"

/* The bounds of the fit: those a cluster profile may hold
 * (formats/preset_cluster.c reads gemm_peak_frac in (0, 1]) */
#define CALIB_GEMM_FRAC_MIN 0.02
#define CALIB_GEMM_FRAC_MAX 1.0

/* One measured sample: n_gemm GEMMs of shape[i] = {batch, m, n, k}, each
 * (batch x (m x k)(k x n)), of dtype, taking t_s seconds together (what is
 * not theirs, a launch the plan prices apart, already taken off). */
typedef struct calib_gemm_pt {
    uly_dtype dtype;
    int n_gemm; /* 1, or 2: a backward op's input and weight gradients */
    double shape[2][4];
    double t_s;
    int line; /* where it came from, for the listing (a table's line; 0: a trace op) */
} calib_gemm_pt;

typedef struct calib_gemm_result {
    double frac;       /* f */
    double latency_s;  /* L */
    int latency_at0;   /* the best L for that f came out negative: held at 0 */
    double res_med, res_mean, res_max; /* |predicted / measured - 1| at the fit */
    double base_med, base_mean, base_max; /* the same with the base GPU's f and L */
    int n;
} calib_gemm_result;

/* Seconds the model prices sample p at on GPU g (its gemm_peak_frac and
 * gemm_latency_s as they are); 0 for a GPU that does not price GEMMs by
 * shape (sm_count 0). */
double calib_gemm_pred(const calib_gemm_pt *p, const uly_gpu *g);

/* A sample's GEMMs from an op's shape batch x (m x k)(k x n): the forward
 * product, or (backward) its input gradient (m x n)(n x k) and weight
 * gradient (k x m)(m x n), as uly_gemm_op_shape_time prices them. */
void calib_gemm_pt_shape(calib_gemm_pt *p, double batch, double m, double n, double k, int backward);

/* Fits f and L of g's GEMM model to the n samples; the rest of g (SMs,
 * peaks, tile, HBM rate, clocks) as given. 0; -1 when g does not price
 * GEMMs by shape or a sample has no positive time or size; -2 when there
 * are fewer than 3 samples (two parameters need a residual to judge); -3
 * out of memory. */
int calib_gemm_fit(const calib_gemm_pt *p, int n, const uly_gpu *g, calib_gemm_result *R);

/* Reads a table of measured GEMMs: CSV, '#' lines comments, a header naming
 * the columns m, n, k, a time (time_s, time_ms, time_us or median_ms) and
 * optionally batch (default 1) and dtype (default bf16); other columns are
 * ignored (so XLA's table in traces/published/xla_matmul_sm90.csv reads as
 * it is). Appends to *pts (grown with realloc; *n and *cap updated). 0; 1
 * out of memory; 2 a bad file, with "PATH:LINE: what (valid: ...)" in why. */
int calib_gemm_table_read(const char *path, calib_gemm_pt **pts, int *n, int *cap, char *why, size_t why_len);
/* The same from a table's text (NUL-terminated, changed in place), path
 * only naming it in messages. */
int calib_gemm_table_parse(char *text, const char *path, calib_gemm_pt **pts, int *n, int *cap, char *why,
                           size_t why_len);

#endif
