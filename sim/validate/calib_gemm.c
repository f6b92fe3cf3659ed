/* calib_gemm.c: the fit of f and L of the GEMM-by-shape model to measured
 * GEMMs, and the reader of GEMM tables (calib_gemm.h says what and why). */
#include "calib_gemm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text_file.h"

/* Points of the log grid over [CALIB_GEMM_FRAC_MIN, MAX] and golden-section
 * steps after it: the grid's step is 2% in f, and 60 golden steps shrink
 * the bracket (two grid steps) by 0.618^60, far below what a time's
 * resolution distinguishes */
#define GRID_N 200
#define GOLDEN_STEPS 60
/* the most rows a table may have, and its size: a measured sweep is a few
 * thousand shapes */
#define TABLE_MAX_ROWS 1000000
#define TABLE_MAX_BYTES (64u << 20)

/* The sum of one sample's GEMMs on rates r (one per dtype). */
static double pt_time(const calib_gemm_pt *p, const uly_gemm_rates *r)
{
    double t = 0;
    for (int j = 0; j < p->n_gemm; j++)
        t += uly_gemm_time_s(&r[p->dtype], p->shape[j][0], p->shape[j][1], p->shape[j][2], p->shape[j][3]);
    return t;
}

static void rates_at(const uly_gpu *g, double frac, double latency_s, uly_gemm_rates r[ULY_DTYPE_COUNT])
{
    uly_gpu c = *g;
    c.gemm_peak_frac = frac;
    c.gemm_latency_s = latency_s;
    for (int d = 0; d < ULY_DTYPE_COUNT; d++) uly_gemm_rates_init(&r[d], &c, (uly_dtype)d);
}

void calib_gemm_pt_shape(calib_gemm_pt *p, double batch, double m, double n, double k, int backward)
{
    const double fwd[4] = {batch, m, n, k}, dgrad[4] = {batch, m, k, n}, wgrad[4] = {batch, k, n, m};
    p->n_gemm = backward ? 2 : 1;
    memcpy(p->shape[0], backward ? dgrad : fwd, sizeof fwd);
    if (backward) memcpy(p->shape[1], wgrad, sizeof wgrad);
}

double calib_gemm_pred(const calib_gemm_pt *p, const uly_gpu *g)
{
    if (g->sm_count <= 0) return 0;
    uly_gemm_rates r[ULY_DTYPE_COUNT];
    rates_at(g, g->gemm_peak_frac, g->gemm_latency_s, r);
    return pt_time(p, r);
}

/* At f: the best L >= 0 and the sum of squared relative residuals. Each
 * sample's time is c L + g(f) (c its GEMM count): minimising
 * sum ((c L + g) / t - 1)^2 over L gives
 * L = sum (c / t)(1 - g / t) / sum (c / t)^2. */
static double objective(const calib_gemm_pt *p, int n, const uly_gpu *g, double frac, double *gt, double *lat,
                        int *at0)
{
    uly_gemm_rates r[ULY_DTYPE_COUNT];
    rates_at(g, frac, 0, r);
    double num = 0, den = 0;
    for (int i = 0; i < n; i++) {
        gt[i] = pt_time(&p[i], r);
        const double c = p[i].n_gemm / p[i].t_s;
        num += c * (1.0 - gt[i] / p[i].t_s);
        den += c * c;
    }
    double L = den > 0 ? num / den : 0;
    *at0 = L < 0;
    if (L < 0) L = 0;
    double s = 0;
    for (int i = 0; i < n; i++) {
        const double e = (p[i].n_gemm * L + gt[i]) / p[i].t_s - 1.0;
        s += e * e;
    }
    *lat = L;
    return s;
}

static int cmp_dbl(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* |relative residual| statistics of g's prices of the samples. */
static void residuals(const calib_gemm_pt *p, int n, const uly_gpu *g, double *med, double *mean, double *max)
{
    double *e = malloc((size_t)n * sizeof *e);
    *med = *mean = *max = NAN;
    if (!e) return;
    uly_gemm_rates r[ULY_DTYPE_COUNT];
    rates_at(g, g->gemm_peak_frac, g->gemm_latency_s, r);
    double sum = 0, hi = 0;
    for (int i = 0; i < n; i++) {
        e[i] = fabs(pt_time(&p[i], r) / p[i].t_s - 1.0);
        sum += e[i];
        if (e[i] > hi) hi = e[i];
    }
    qsort(e, (size_t)n, sizeof e[0], cmp_dbl);
    *med = n % 2 ? e[n / 2] : 0.5 * (e[n / 2 - 1] + e[n / 2]);
    *mean = sum / n, *max = hi;
    free(e);
}

int calib_gemm_fit(const calib_gemm_pt *p, int n, const uly_gpu *g, calib_gemm_result *R)
{
    memset(R, 0, sizeof *R);
    if (g->sm_count <= 0) return -1;
    for (int i = 0; i < n; i++) {
        if (!(p[i].t_s > 0) || p[i].n_gemm < 1 || p[i].n_gemm > 2 || (unsigned)p[i].dtype >= ULY_DTYPE_COUNT)
            return -1;
        for (int j = 0; j < p[i].n_gemm; j++)
            for (int d = 0; d < 4; d++)
                if (!(p[i].shape[j][d] > 0)) return -1;
    }
    if (n < 3) return -2;
    double *gt = malloc((size_t)n * sizeof *gt); /* each sample's GEMM time at the f tried, without L */
    if (!gt) return -3;
    /* the grid */
    const double lo = log(CALIB_GEMM_FRAC_MIN), hi = log(CALIB_GEMM_FRAC_MAX);
    int best = 0, at0 = 0;
    double best_s = INFINITY, lat = 0;
    for (int j = 0; j < GRID_N; j++) {
        const double f = exp(lo + (hi - lo) * j / (GRID_N - 1));
        const double s = objective(p, n, g, f, gt, &lat, &at0);
        if (s < best_s) best_s = s, best = j;
    }
    /* golden section in the bracket of the best grid point's neighbours */
    double a = lo + (hi - lo) * (best > 0 ? best - 1 : 0) / (GRID_N - 1);
    double b = lo + (hi - lo) * (best < GRID_N - 1 ? best + 1 : GRID_N - 1) / (GRID_N - 1);
    const double phi = 0.5 * (sqrt(5.0) - 1.0);
    double x1 = b - phi * (b - a), x2 = a + phi * (b - a);
    double s1 = objective(p, n, g, exp(x1), gt, &lat, &at0), s2 = objective(p, n, g, exp(x2), gt, &lat, &at0);
    for (int it = 0; it < GOLDEN_STEPS; it++) {
        if (s1 <= s2) {
            b = x2, x2 = x1, s2 = s1;
            x1 = b - phi * (b - a);
            s1 = objective(p, n, g, exp(x1), gt, &lat, &at0);
        } else {
            a = x1, x1 = x2, s1 = s2;
            x2 = a + phi * (b - a);
            s2 = objective(p, n, g, exp(x2), gt, &lat, &at0);
        }
    }
    /* the best of the refined point and the grid's (the objective jumps,
     * so the bracket may hold no better point than the grid's own) */
    double f = exp(0.5 * (a + b));
    double s = objective(p, n, g, f, gt, &lat, &at0);
    const double fg = exp(lo + (hi - lo) * best / (GRID_N - 1));
    if (!(s <= best_s)) s = objective(p, n, g, fg, gt, &lat, &at0), f = fg;
    free(gt);
    R->frac = f;
    R->latency_s = lat;
    R->latency_at0 = at0;
    R->n = n;
    uly_gpu fit = *g;
    fit.gemm_peak_frac = f;
    fit.gemm_latency_s = lat;
    residuals(p, n, &fit, &R->res_med, &R->res_mean, &R->res_max);
    residuals(p, n, g, &R->base_med, &R->base_mean, &R->base_max);
    return 0;
}

/* ------------------------------------------------------------- the table */

enum { COL_M, COL_N, COL_K, COL_BATCH, COL_DTYPE, COL_TIME, COL_COUNT };

/* The next comma-separated field of *s (in place), trimmed of blanks. */
static char *next_field(char **s)
{
    char *f = *s, *c = strchr(f, ',');
    if (c) *c = 0, *s = c + 1;
    else *s = f + strlen(f);
    while (*f == ' ' || *f == '\t') f++;
    size_t l = strlen(f);
    while (l && (f[l - 1] == ' ' || f[l - 1] == '\t' || f[l - 1] == '\r')) f[--l] = 0;
    return f;
}

/* The header: which field holds each column; the time column's seconds per unit. */
static int header_read(char *line, int col[COL_COUNT], double *time_unit, const char *path, int ln, char *why,
                       size_t wl)
{
    static const struct { const char *name; double unit; } times[] = {
        {"time_s", 1}, {"time_ms", 1e-3}, {"median_ms", 1e-3}, {"time_us", 1e-6}};
    for (int c = 0; c < COL_COUNT; c++) col[c] = -1;
    char *s = line;
    for (int i = 0; *s || i == 0; i++) {
        const char *f = next_field(&s);
        if (!strcmp(f, "m")) col[COL_M] = i;
        else if (!strcmp(f, "n")) col[COL_N] = i;
        else if (!strcmp(f, "k")) col[COL_K] = i;
        else if (!strcmp(f, "batch")) col[COL_BATCH] = i;
        else if (!strcmp(f, "dtype")) col[COL_DTYPE] = i;
        for (size_t t = 0; t < sizeof times / sizeof times[0]; t++)
            if (!strcmp(f, times[t].name) && col[COL_TIME] < 0) col[COL_TIME] = i, *time_unit = times[t].unit;
        if (!*s) break;
    }
    static const char *const need[] = {"m", "n", "k"};
    for (int c = COL_M; c <= COL_K; c++)
        if (col[c] < 0)
            return text_fail_at(why, wl, path, ln, "the header names no column '%s' (valid: a CSV header with m, n, "
                                "k, a time column time_s, time_ms, time_us or median_ms, and optionally batch and "
                                "dtype)", need[c]);
    if (col[COL_TIME] < 0)
        return text_fail_at(why, wl, path, ln, "the header names no time column (valid: time_s, time_ms, time_us or "
                            "median_ms)");
    return 0;
}

/* One row into *p. 0, or 2 with why. */
static int row_read(char *line, const int col[COL_COUNT], double time_unit, calib_gemm_pt *p, const char *path,
                    int ln, char *why, size_t wl)
{
    static const char *const names[COL_COUNT] = {"m", "n", "k", "batch", "dtype", "time"};
    char *fields[COL_COUNT] = {0};
    char *s = line;
    for (int i = 0; *s || i == 0; i++) {
        char *f = next_field(&s);
        for (int c = 0; c < COL_COUNT; c++)
            if (col[c] == i) fields[c] = f;
        if (!*s) break;
    }
    memset(p, 0, sizeof *p);
    p->n_gemm = 1;
    p->line = ln;
    p->dtype = ULY_BF16;
    p->shape[0][0] = 1;
    for (int c = 0; c < COL_COUNT; c++) {
        if (col[c] < 0) continue;
        if (!fields[c])
            return text_fail_at(why, wl, path, ln, "no field for column '%s' (valid: as many fields as the header)",
                                names[c]);
        if (c == COL_DTYPE) {
            const uly_dtype d = uly_dtype_find(fields[c]);
            if (d == ULY_DTYPE_COUNT)
                return text_fail_at(why, wl, path, ln, "dtype '%.32s' unknown (valid: bf16, fp16, fp32 or fp8)",
                                    fields[c]);
            p->dtype = d;
            continue;
        }
        char *end;
        const double v = strtod(fields[c], &end);
        if (end == fields[c] || *end || !(v > 0) || !isfinite(v) || (c != COL_TIME && (v != floor(v) || v > 1e9)))
            return text_fail_at(why, wl, path, ln, "%s '%.32s' is not %s", names[c], fields[c],
                                c == COL_TIME ? "a positive time (valid: a number > 0 in the header's unit)"
                                              : "a size (valid: a whole number 1..1e9)");
        if (c == COL_TIME) {
            p->t_s = v * time_unit;
            /* a GEMM takes a kernel launch at least, and not hours */
            if (!(p->t_s >= 1e-9 && p->t_s <= 3600))
                return text_fail_at(why, wl, path, ln, "time '%.32s' is not a GEMM's time (valid: 1 ns to 1 hour)",
                                    fields[c]);
        } else {
            p->shape[0][c == COL_BATCH ? 0 : c + 1] = v;
        }
    }
    return 0;
}

int calib_gemm_table_parse(char *text, const char *path, calib_gemm_pt **pts, int *n, int *cap, char *why,
                           size_t why_len)
{
    int rc = 0, col[COL_COUNT], have_header = 0, ln = 0, rows = 0;
    double unit = 1;
    char *s = text;
    while (*s && rc == 0) {
        char *line = s, *nl = strchr(s, '\n');
        if (nl) *nl = 0, s = nl + 1;
        else s += strlen(s);
        ln++;
        while (*line == ' ' || *line == '\t') line++;
        if (!*line || *line == '#' || *line == '\r') continue;
        if (!have_header) {
            rc = header_read(line, col, &unit, path, ln, why, why_len);
            have_header = 1;
            continue;
        }
        if (++rows > TABLE_MAX_ROWS) {
            rc = text_fail_at(why, why_len, path, ln, "more than %d rows (valid: a table of at most %d GEMMs)",
                              TABLE_MAX_ROWS, TABLE_MAX_ROWS);
            break;
        }
        if (*n == *cap) {
            const int nc = *cap ? 2 * *cap : 256;
            calib_gemm_pt *g = realloc(*pts, (size_t)nc * sizeof *g);
            if (!g) {
                rc = 1;
                break;
            }
            *pts = g, *cap = nc;
        }
        rc = row_read(line, col, unit, &(*pts)[*n], path, ln, why, why_len);
        if (!rc) (*n)++;
    }
    if (!rc && !rows)
        rc = text_fail_at(why, why_len, path, 0, "%s", have_header ? "no GEMM rows after the header (valid: one "
                          "measured GEMM per line)" : "no header and no rows (valid: a CSV header with m, n, k "
                          "and a time column, then one measured GEMM per line)");
    return rc;
}

int calib_gemm_table_read(const char *path, calib_gemm_pt **pts, int *n, int *cap, char *why, size_t why_len)
{
    char *text = NULL;
    size_t len = 0;
    int rc = text_file_read(path, TABLE_MAX_BYTES, "a GEMM table (CSV)", &text, &len, why, why_len);
    if (rc) return rc;
    if (memchr(text, 0, len))
        rc = text_fail_at(why, why_len, path, 0, "a NUL byte in the file (valid: a text CSV table)");
    else
        rc = calib_gemm_table_parse(text, path, pts, n, cap, why, why_len);
    free(text);
    return rc;
}
