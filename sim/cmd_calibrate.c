/* cmd_calibrate.c: `ulysim calibrate MICROBENCH.trace... -o cluster.json`.
 *
 * Fits the parameters of the model's own collective formulas to measured
 * collective times, and writes a cluster profile that prices through the same
 * code (uly_cost_collective) with the fitted numbers.
 *
 * Links. For a group inside one node, uly_cost_collective is linear in the
 * in-node latency a = intra_lat_s and the inverse bandwidth b = 1 /
 * intra_bw_Bps (and, for groups spanning nodes, in nic_lat_s and
 * 1 / nic_bw_Bps):
 *     alltoall        (p-1) a + sent b
 *     allgather, RS   (p-1) a + sent b
 *     allreduce       2 (p-1) a + sent b   (the harness's RS + AG)
 *     sendrecv        steps a + sent b
 * The design matrix is not re-derived here: each row is uly_cost_collective
 * itself, evaluated on unit clusters (one parameter 1, the others 0), so the
 * fit stays true to the formulas whatever they become (as long as they stay
 * linear in these parameters, which is checked afterwards by pricing every
 * point through uly_cost_collective with the fitted profile). The fit is
 * weighted least squares (gsl_multifit_wlinear) with weights 1/t^2: it
 * minimises relative residuals, so 1 KiB and 16 MiB messages count alike.
 * Standard errors are the covariance scaled by the residual variance
 * (chi^2 / (n - k)): the weights are relative, not measured variances. The
 * library's own MPI_Allreduce ("allreduce_mpi") is not an algorithm the
 * harness uses and is left out.
 *
 * Compute (--kernels PLAN.trace...). The model prices a GEMM at
 * flops x crit_factor / (peak x gemm_eff(cbrt(m n k))), a flash attention op
 * at flops x crit_factor / (peak x attn_eff(kv rows)), an elementwise op at
 * bytes_touched / (hbm_bw x mem_eff). From the compute ops of the given plan
 * traces: per size bin (up to 8, equal widths in log2 of the curve's key) a
 * rate r minimising the relative residuals of t = flops / r (gsl_fit_wmul);
 * the peak is the highest bin rate, the curves are the bin rates over it;
 * the elementwise rate likewise, one for all elementwise ops but the MLP
 * activation. The activation (plan ops with elems > 0) is priced at
 * max(bytes, elems x act_ns): its own per-element cost, forward and
 * backward, fitted the same way to elems x crit_factor (on a CPU tanhf and
 * expf make it compute-bound, ~10x its bytes). The attention curves are
 * fitted to the forward (and recompute) ops; the backward ops give one
 * ratio, attn_bwd_rel: the geometric mean of their rate over the forward
 * curve's at their key. These traces must not be the runs you validate
 * against. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <errno.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "preset.h"
#include "trace_read.h"

int sim_cmd_calibrate(int argc, char **argv);

enum { P_LAT_INTRA = 0, P_INVBW_INTRA, P_LAT_INTER, P_INVBW_INTER, N_PARAM };
static const char *const PARAM_NAME[N_PARAM] = {"intra.lat", "intra.1/bw", "inter.lat", "inter.1/bw"};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ulysim calibrate MICROBENCH.trace... -o cluster.json [--base PRESET] [--name NAME]\n"
            "                        [--kernels PLAN.trace...]\n"
            "Fits latency (alpha) and inverse bandwidth (beta) per link tier from ulyharness --microbench traces,\n"
            "by weighted least squares (GSL; relative residuals) on the model's own collective formulas\n"
            "(uly_cost_collective: alltoall, allgather, reduce_scatter, allreduce, sendrecv points), prints the\n"
            "fit with standard errors and the residual of every point, and writes a cluster profile for\n"
            "`ulysim --cluster` / `ulysim validate --cluster`.\n"
            "  --base PRESET   the profile the fitted numbers replace fields of (default cpu-local)\n"
            "  --name NAME     the profile's name (default: BASE-calibrated-npP)\n"
            "  --kernels T...  plan traces (not the runs to validate) whose compute ops set the compute rates:\n"
            "                  peak and GEMM curve, flash-attention curve, elementwise rate; every argument\n"
            "                  after --kernels up to the next option is a kernel trace\n"
            "  -o FILE         the profile to write (required)\n"
            "Exit: 0 written; 2 bad usage or bad traces; 1 the fit failed.\n");
}

/* ------------------------------------------------------------- the links */

typedef struct pt {
    const trace_run *run;
    const trace_point *p;
    uly_group_place gp;
    double row[N_PARAM];
    double pred;
} pt;

static void place_of(const trace_run *r, int size, uly_group_place *gp)
{
    int64_t gpn = r->used_gpn > 0 ? r->used_gpn : size;
    memset(gp, 0, sizeof *gp);
    gp->size = size;
    gp->stride = 1;
    gp->per_node = size < gpn ? size : gpn;
    gp->nodes = (size + gp->per_node - 1) / gp->per_node;
    gp->tiers = gp->nodes > 1 ? (ULY_TIER_INTER | (gp->per_node > 1 ? ULY_TIER_INTRA : 0)) : ULY_TIER_INTRA;
}

/* A cluster where parameter k is 1 and the others 0 (bandwidths infinite). */
static void unit_cluster(const uly_cluster *base, int k, uly_cluster *c)
{
    *c = *base;
    c->intra_lat_s = k == P_LAT_INTRA ? 1.0 : 0.0;
    c->intra_bw_Bps = k == P_INVBW_INTRA ? 1.0 : INFINITY;
    c->nic_lat_s = k == P_LAT_INTER ? 1.0 : 0.0;
    c->nic_bw_Bps = k == P_INVBW_INTER ? 1.0 : INFINITY;
    c->torus_link_bw_Bps = 0; /* the torus bisection bound is not linear: not fitted */
}

static double cost_of(const uly_cluster *c, const pt *x)
{
    return uly_cost_collective(c, x->p->coll, &x->gp, (double)x->p->bytes_sent, 1, 1);
}

typedef struct fit {
    int used[N_PARAM];
    double val[N_PARAM], se[N_PARAM];
    int fixed0[N_PARAM]; /* fitted negative: fixed at 0 and refitted */
    double chisq;
    int n, k;
} fit;

static int do_fit(pt *pts, int n, fit *F)
{
    int cols[N_PARAM], k = 0;
    for (int j = 0; j < N_PARAM; j++) {
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
        const double t = pts[i].p->t.median;
        for (int q = 0; q < k; q++) gsl_matrix_set(X, (size_t)i, (size_t)q, pts[i].row[cols[q]]);
        gsl_vector_set(y, (size_t)i, t);
        gsl_vector_set(w, (size_t)i, 1.0 / (t * t));
    }
    double chisq = 0;
    st = gsl_multifit_wlinear(X, w, y, c, cov, &chisq, ws);
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

/* ------------------------------------------------------------ compute */

typedef struct sample {
    double x;    /* the curve's key */
    double work; /* flops x crit_factor, or bytes */
    double t;
    const char *name;
} sample;

typedef struct bin {
    double x, rate, rate_se;
    int n;
    double resid_med; /* median |relative residual| in the bin */
} bin;

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One rate r for samples: minimises sum ((t - work / r) / t)^2, i.e. fits
 * t = c1 work with weights 1/t^2 (gsl_fit_wmul); r = 1 / c1. */
static int fit_rate(const sample *s, int n, double *rate, double *rate_se, double *resid_med)
{
    if (n <= 0) return -1;
    double *x = malloc(sizeof(double) * (size_t)n * 3);
    if (!x) return -1;
    double *y = x + n, *w = x + 2 * n;
    for (int i = 0; i < n; i++) {
        x[i] = s[i].work;
        y[i] = s[i].t;
        w[i] = 1.0 / (s[i].t * s[i].t);
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
    for (int i = 0; i < n; i++) x[i] = fabs(c1 * s[i].work / s[i].t - 1.0);
    qsort(x, (size_t)n, sizeof *x, cmp_dbl);
    *resid_med = n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
    free(x);
    return 0;
}

static int cmp_sample(const void *a, const void *b)
{
    const sample *x = a, *y = b;
    return (x->x > y->x) - (x->x < y->x);
}

/* Bins samples by log2 of x into at most ULY_CURVE_MAX bins of equal width. */
static int fit_curve(sample *s, int n, bin *bins)
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
            if (fit_rate(s + i, j - i, &bins[out].rate, &bins[out].rate_se, &bins[out].resid_med) == 0) out++;
        }
        i = j;
    }
    return out;
}

/* ------------------------------------------------------------ output */

static char *read_text(const char *path, size_t cap)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    char *buf = malloc(cap + 1);
    size_t n = buf ? fread(buf, 1, cap, fp) : 0;
    fclose(fp);
    if (!buf) return NULL;
    buf[n] = 0;
    return buf;
}

static cJSON *curve_json(const bin *b, int n, double peak)
{
    cJSON *a = cJSON_CreateArray();
    double prev = 0;
    for (int i = 0; i < n; i++) {
        double x = round(b[i].x * 1000) / 1000;
        if (x <= prev) x = prev * 1.001 + 1e-3;
        prev = x;
        double e = b[i].rate / peak;
        if (e > 1) e = 1;
        if (e < 1e-4) e = 1e-4;
        cJSON *p = cJSON_CreateArray();
        cJSON_AddItemToArray(p, cJSON_CreateNumber(x));
        cJSON_AddItemToArray(p, cJSON_CreateNumber(round(e * 10000) / 10000));
        cJSON_AddItemToArray(a, p);
    }
    return a;
}

static void set_item(cJSON *o, const char *k, cJSON *v)
{
    if (cJSON_GetObjectItemCaseSensitive(o, k)) cJSON_ReplaceItemInObjectCaseSensitive(o, k, v);
    else cJSON_AddItemToObject(o, k, v);
}

static void set_source(cJSON *root, const char *k, const char *text)
{
    cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "sources");
    if (!cJSON_IsObject(s)) {
        s = cJSON_CreateObject();
        set_item(root, "sources", s);
    }
    char buf[4000];
    snprintf(buf, sizeof buf, "%s", text);
    set_item(s, k, cJSON_CreateString(buf));
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* file names for "sources": "a, b, c (and N more)" */
static void list_files(char *out, size_t n, const trace_run *r, int cnt)
{
    size_t o = 0;
    out[0] = 0;
    for (int i = 0; i < cnt && o + 1 < n; i++) {
        if (o > 600) {
            snprintf(out + o, n - o, " and %d more", cnt - i);
            break;
        }
        int w = snprintf(out + o, n - o, "%s%s", i ? ", " : "", base_name(r[i].path));
        if (w < 0) break;
        o += (size_t)w;
    }
}

/* ------------------------------------------------------------------ main */

int sim_cmd_calibrate(int argc, char **argv)
{
    const char *out = NULL, *base = "cpu-local", *name = NULL;
    const char **mb_files = calloc((size_t)argc + 1, sizeof(char *));
    const char **k_files = calloc((size_t)argc + 1, sizeof(char *));
    int n_mb = 0, n_k = 0, in_kernels = 0, rc = 0;
    trace_run *mb = NULL, *kr = NULL;
    pt *pts = NULL;
    sample *gs = NULL, *as[2][2] = {{NULL, NULL}, {NULL, NULL}}, *es = NULL, *acs[2] = {NULL, NULL};
    sample *abw[2][2] = {{NULL, NULL}, {NULL, NULL}};
    cJSON *root = NULL;
    char why[1024];
    gsl_set_error_handler_off(); /* GSL reports through status codes; never abort() */
    if (!mb_files || !k_files) {
        rc = 1;
        goto done;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            goto done;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--out") || !strcmp(a, "--base") || !strcmp(a, "--name")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "ulysim calibrate: %s needs a value; see ulysim calibrate --help\n", a);
                rc = 2;
                goto done;
            }
            if (!strcmp(a, "--base")) base = argv[++i];
            else if (!strcmp(a, "--name")) name = argv[++i];
            else out = argv[++i];
            in_kernels = 0;
        } else if (!strcmp(a, "--kernels")) {
            in_kernels = 1;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "ulysim calibrate: unknown option %s; see ulysim calibrate --help\n", a);
            rc = 2;
            goto done;
        } else if (in_kernels) {
            k_files[n_k++] = a;
        } else {
            mb_files[n_mb++] = a;
        }
    }
    if (!out || n_mb == 0) {
        fprintf(stderr, "ulysim calibrate: %s; usage: ulysim calibrate MICROBENCH.trace... -o cluster.json\n",
                !out ? "-o FILE is required" : "no micro-benchmark trace given");
        rc = 2;
        goto done;
    }

    uly_cluster bc;
    if (sim_cluster_load(base, &bc, why, sizeof why)) {
        fprintf(stderr, "ulysim calibrate: --base %s\n", why);
        rc = 2;
        goto done;
    }

    /* ----- micro-benchmark traces */
    mb = calloc((size_t)n_mb, sizeof *mb);
    kr = calloc((size_t)(n_k ? n_k : 1), sizeof *kr);
    if (!mb || !kr) {
        rc = 1;
        goto done;
    }
    int n_pts = 0, ranks = 0, mixed = 0;
    for (int f = 0; f < n_mb; f++) {
        int r = trace_read(mb_files[f], &mb[f], why, sizeof why);
        if (r) {
            fprintf(stderr, "ulysim calibrate: %s\n", r == 2 ? why : "out of memory");
            rc = r;
            goto done;
        }
        if (mb[f].kind != TRACE_MICROBENCH) {
            fprintf(stderr, "ulysim calibrate: %s:1: a plan trace, not a micro-benchmark; plan traces go after "
                            "--kernels\n", mb_files[f]);
            rc = 2;
            goto done;
        }
        n_pts += mb[f].n_points;
        if (ranks && mb[f].ranks != ranks) mixed = 1;
        if (mb[f].ranks > ranks) ranks = mb[f].ranks;
    }
    pts = calloc((size_t)n_pts, sizeof *pts);
    if (!pts) {
        rc = 1;
        goto done;
    }
    int n = 0, n_skip = 0;
    for (int f = 0; f < n_mb; f++)
        for (int i = 0; i < mb[f].n_points; i++) {
            const trace_point *p = &mb[f].points[i];
            if (p->coll == ULY_COLL_NONE || !(p->t.median > 0) || p->bytes_sent <= 0) {
                n_skip++;
                continue;
            }
            pt *x = &pts[n++];
            x->run = &mb[f];
            x->p = p;
            place_of(&mb[f], p->group_size, &x->gp);
            for (int k = 0; k < N_PARAM; k++) {
                uly_cluster u;
                unit_cluster(&bc, k, &u);
                x->row[k] = cost_of(&u, x);
            }
        }
    fit F;
    memset(&F, 0, sizeof F);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < N_PARAM; k++)
            if (pts[i].row[k] != 0) F.used[k] = 1;
    if (n == 0 || (!F.used[P_LAT_INTRA] && !F.used[P_LAT_INTER])) {
        fprintf(stderr, "ulysim calibrate: no usable micro-benchmark point (alltoall, allgather, reduce_scatter, "
                        "allreduce or sendrecv with a positive time and size)\n");
        rc = 2;
        goto done;
    }
    fit F0;
    for (int round = 0; round < N_PARAM; round++) {
        if (do_fit(pts, n, &F)) {
            fprintf(stderr, "ulysim calibrate: the least-squares fit failed (%d points)\n", n);
            rc = 1;
            goto done;
        }
        if (round == 0) F0 = F;
        int again = 0;
        for (int k = 0; k < N_PARAM; k++)
            if (F.used[k] && !F.fixed0[k] && !(F.val[k] > 0)) {
                F.fixed0[k] = 1;
                again = 1;
            }
        if (!again) break;
    }
    uly_cluster cal = bc;
    cal.nodes = 1;
    cal.gpus_per_node = ranks;
    if (F.used[P_LAT_INTRA]) cal.intra_lat_s = F.fixed0[P_LAT_INTRA] ? 0 : F.val[P_LAT_INTRA];
    if (F.used[P_INVBW_INTRA] && !F.fixed0[P_INVBW_INTRA]) cal.intra_bw_Bps = 1.0 / F.val[P_INVBW_INTRA];
    if (F.used[P_LAT_INTER]) cal.nic_lat_s = F.fixed0[P_LAT_INTER] ? 0 : F.val[P_LAT_INTER];
    if (F.used[P_INVBW_INTER] && !F.fixed0[P_INVBW_INTER]) cal.nic_bw_Bps = 1.0 / F.val[P_INVBW_INTER];

    printf("# ulysim calibrate: %d micro-benchmark point%s from %d trace%s (%d ranks%s); %d left out "
           "(allreduce_mpi: the library's algorithm, not the harness's)\n",
           n, n == 1 ? "" : "s", n_mb, n_mb == 1 ? "" : "s", ranks, mixed ? ", mixed rank counts" : "", n_skip);
    printf("# model: uly_cost_collective (alltoall, allgather, reduce_scatter: (p-1) alpha + sent beta; allreduce: "
           "2(p-1) alpha + sent beta; sendrecv: alpha + sent beta); weighted least squares, weights 1/t^2 "
           "(relative residuals); standard errors scaled by chi^2/(n-k)\n");
    printf("# %-12s %14s %14s   %s\n", "parameter", "fit", "std error", "meaning");
    for (int k = 0; k < N_PARAM; k++) {
        if (!F.used[k]) continue;
        if (k == P_LAT_INTRA || k == P_LAT_INTER) {
            if (F.fixed0[k])
                printf("  %-12s %11.3f us %14s   latency fixed at 0: the free fit gave %.3f us\n", PARAM_NAME[k], 0.0,
                       "-", 1e6 * F0.val[k]);
            else
                printf("  %-12s %11.3f us %11.3f us   alpha: %s_lat (per step)\n", PARAM_NAME[k], 1e6 * F.val[k],
                       1e6 * F.se[k], k == P_LAT_INTRA ? "intra" : "nic");
        } else {
            if (F.fixed0[k]) {
                printf("  %-12s %14s %14s   not determined (the free fit gave %.4g); base value kept\n", PARAM_NAME[k],
                       "-", "-", F0.val[k]);
            } else {
                const double bw = 1.0 / F.val[k], lo = 1.0 / (F.val[k] + F.se[k]);
                const double hi = F.val[k] > F.se[k] ? 1.0 / (F.val[k] - F.se[k]) : INFINITY;
                printf("  %-12s %11.4f ns/B %9.4f ns/B   beta = 1/bandwidth: %.3f GB/s per direction (%.3f .. %.3f at "
                       "one std error)\n",
                       PARAM_NAME[k], 1e9 * F.val[k], 1e9 * F.se[k], bw / 1e9, lo / 1e9, hi / 1e9);
            }
        }
    }
    const double rms = sqrt(F.chisq / (F.n > 0 ? F.n : 1));
    printf("# rms relative residual %.1f%%\n", 100 * rms);
    printf("# %-40s %-14s %3s %10s %10s %12s %12s %8s\n", "trace", "coll", "p", "size", "sent", "meas_us", "pred_us",
           "resid");
    double lin_dev = 0;
    double *res = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; i++) {
        pt *x = &pts[i];
        x->pred = cost_of(&cal, x);
        double lin = 0;
        for (int k = 0; k < N_PARAM; k++) {
            double v = k == P_LAT_INTRA ? cal.intra_lat_s : k == P_INVBW_INTRA ? 1.0 / cal.intra_bw_Bps
                     : k == P_LAT_INTER ? cal.nic_lat_s : 1.0 / cal.nic_bw_Bps;
            lin += x->row[k] * v;
        }
        const double d = fabs(lin - x->pred) / (x->pred > 0 ? x->pred : 1);
        lin_dev = d > lin_dev ? d : lin_dev;
        const double r = x->pred / x->p->t.median - 1.0;
        if (res) res[i] = fabs(r);
        printf("  %-40s %-14s %3d %10lld %10lld %12.2f %12.2f %+7.1f%%\n", base_name(x->run->path), x->p->coll_name,
               x->p->group_size, (long long)x->p->size_bytes, (long long)x->p->bytes_sent, 1e6 * x->p->t.median,
               1e6 * x->pred, 100 * r);
    }
    double med_res = NAN;
    if (res) {
        qsort(res, (size_t)n, sizeof *res, cmp_dbl);
        med_res = n % 2 ? res[n / 2] : 0.5 * (res[n / 2 - 1] + res[n / 2]);
        printf("# residuals through uly_cost_collective with the written profile: median |resid| %.1f%%, max %.1f%%\n",
               100 * med_res, 100 * res[n - 1]);
        free(res);
    }
    if (lin_dev > 1e-6)
        printf("# WARNING: uly_cost_collective is not linear in the fitted parameters (deviation %.2g): the fit is "
               "approximate\n", lin_dev);
    /* per collective */
    static const uly_coll colls[] = {ULY_COLL_ALLTOALL, ULY_COLL_ALLGATHER, ULY_COLL_REDUCE_SCATTER, ULY_COLL_ALLREDUCE,
                                     ULY_COLL_SENDRECV};
    for (size_t c = 0; c < sizeof colls / sizeof colls[0]; c++) {
        double s = 0, sb = 0;
        int m = 0;
        for (int i = 0; i < n; i++)
            if (pts[i].p->coll == colls[c]) {
                s += log(pts[i].pred / pts[i].p->t.median);
                m++;
            }
        (void)sb;
        if (m) printf("# %-14s %3d points: predicted / measured, geometric mean %.2f\n", uly_coll_name(colls[c]), m, exp(s / m));
    }

    /* ----- compute from kernel traces */
    int n_g = 0, n_a[2][2] = {{0, 0}, {0, 0}}, n_e = 0, n_act[2] = {0, 0}, n_skipped_attn = 0, k_ranks = 0;
    int n_abw[2][2] = {{0, 0}, {0, 0}}, n_rel = 0;
    double bwd_rel = NAN, bwd_rel_sd = NAN;
    double act_rate[2] = {NAN, NAN}, act_se[2] = {NAN, NAN}, act_res[2] = {NAN, NAN};
    bin gb[ULY_CURVE_MAX], ab[2][2][ULY_CURVE_MAX];
    int n_gb = 0, n_ab[2][2] = {{0, 0}, {0, 0}};
    double e_rate = NAN, e_se = NAN, e_res = NAN, peak = NAN, share = 1.0;
    if (n_k) {
        int cap = 0;
        for (int f = 0; f < n_k; f++) {
            int r = trace_read(k_files[f], &kr[f], why, sizeof why);
            if (r) {
                fprintf(stderr, "ulysim calibrate: --kernels %s\n", r == 2 ? why : "out of memory");
                rc = r;
                goto done;
            }
            if (kr[f].kind != TRACE_PLAN) {
                fprintf(stderr, "ulysim calibrate: --kernels %s:1: a micro-benchmark trace; --kernels takes plan "
                                "traces\n", k_files[f]);
                rc = 2;
                goto done;
            }
            cap += kr[f].plan.n_ops;
            if (k_ranks && kr[f].ranks != k_ranks) mixed |= 2;
            k_ranks = kr[f].ranks;
        }
        gs = calloc((size_t)cap, sizeof *gs);
        es = calloc((size_t)cap, sizeof *es);
        acs[0] = calloc((size_t)cap, sizeof(sample));
        acs[1] = calloc((size_t)cap, sizeof(sample));
        int abw_ok = 1;
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) {
                as[a][b] = calloc((size_t)cap, sizeof(sample));
                abw[a][b] = calloc((size_t)cap, sizeof(sample));
                abw_ok &= abw[a][b] != NULL;
            }
        if (!abw_ok || !gs || !es || !acs[0] || !acs[1] || !as[0][0] || !as[0][1] || !as[1][0] || !as[1][1]) {
            rc = 1;
            goto done;
        }
        for (int f = 0; f < n_k; f++) {
            const trace_run *r = &kr[f];
            const int ci = r->workload.causal ? 1 : 0, di = r->model.head_dim >= 128 ? 1 : 0;
            for (int i = 0; i < r->plan.n_ops; i++) {
                const uly_op *o = &r->plan.ops[i];
                const double t = r->ops[i].t.median;
                if (!(t > 0)) continue;
                if (!(o->eff_size > 0) && o->kind != ULY_OP_ELEM) continue; /* no curve key */
                if (o->kind == ULY_OP_GEMM && o->flops > 0) {
                    gs[n_g++] = (sample){cbrt(o->eff_size), o->flops * o->crit_factor, t, uly_op_type_name(o->type)};
                } else if (o->kind == ULY_OP_ATTN && o->flops > 0) {
                    if (!o->flash) { /* materialised attention: GEMMs plus softmax passes, not one curve */
                        n_skipped_attn++;
                        continue;
                    }
                    const sample sm = {o->eff_size, o->flops * o->crit_factor, t, uly_op_type_name(o->type)};
                    if (o->phase == ULY_PHASE_BWD && !o->recompute) abw[ci][di][n_abw[ci][di]++] = sm;
                    else as[ci][di][n_a[ci][di]++] = sm;
                } else if (o->kind == ULY_OP_ELEM && o->act_elems > 0) {
                    const int bw = o->phase == ULY_PHASE_BWD && !o->recompute;
                    acs[bw][n_act[bw]++] = (sample){1, (double)o->act_elems * o->crit_factor, t, uly_op_type_name(o->type)};
                } else if (o->kind == ULY_OP_ELEM && o->bytes_touched > 0) {
                    es[n_e++] = (sample){1, o->bytes_touched * o->crit_factor, t, uly_op_type_name(o->type)};
                }
            }
        }
        n_gb = fit_curve(gs, n_g, gb);
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) n_ab[a][b] = fit_curve(as[a][b], n_a[a][b], ab[a][b]);
        if (n_e) fit_rate(es, n_e, &e_rate, &e_se, &e_res);
        for (int b = 0; b < 2; b++)
            if (n_act[b]) fit_rate(acs[b], n_act[b], &act_rate[b], &act_se[b], &act_res[b]);
        /* Kernel runs on another rank count than the micro-benchmarks, on the
         * same host: per-rank compute rates scale with each rank's share of
         * the cores, min(1, cores / ranks). Kernel runs with one rank per core
         * measure the kernels themselves; with more ranks than cores each op
         * would also measure the scheduler (an op shorter than its time slice
         * runs alone while the others wait at the barrier, a long one at the
         * fair share), which a size-keyed curve cannot express. */
        if (k_ranks != ranks && !(mixed & 2) && kr[0].cores_online > 0 && kr[0].cores_online == mb[0].cores_online) {
            const double cores = kr[0].cores_online;
            share = fmin(1.0, cores / ranks) / fmin(1.0, cores / k_ranks);
            for (int i = 0; i < n_gb; i++) gb[i].rate *= share, gb[i].rate_se *= share;
            for (int a = 0; a < 2; a++)
                for (int b = 0; b < 2; b++)
                    for (int i = 0; i < n_ab[a][b]; i++) ab[a][b][i].rate *= share, ab[a][b][i].rate_se *= share;
            e_rate *= share, e_se *= share;
            for (int b = 0; b < 2; b++) act_rate[b] *= share, act_se[b] *= share;
        }
        /* backward over the forward curve at the same key (log-log interpolation
         * between bins, clamped at the ends, as uly_curve_eval reads a curve) */
        double lr = 0, lr2 = 0;
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) {
                if (!n_ab[a][b]) continue;
                uly_curve fc = {.n = n_ab[a][b]};
                for (int i = 0; i < fc.n; i++) fc.x[i] = ab[a][b][i].x, fc.eff[i] = ab[a][b][i].rate;
                for (int i = 0; i < n_abw[a][b]; i++) {
                    const sample *q = &abw[a][b][i];
                    const double l = log(share * q->work / q->t / uly_curve_eval(&fc, q->x));
                    lr += l, lr2 += l * l, n_rel++;
                }
            }
        if (n_rel) {
            bwd_rel = exp(lr / n_rel);
            const double var = n_rel > 1 ? (lr2 - lr * lr / n_rel) / (n_rel - 1) : 0;
            bwd_rel_sd = sqrt(var > 0 ? var : 0);
        }
        peak = 0;
        for (int i = 0; i < n_gb; i++) peak = gb[i].rate > peak ? gb[i].rate : peak;
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++)
                for (int i = 0; i < n_ab[a][b]; i++) peak = ab[a][b][i].rate > peak ? ab[a][b][i].rate : peak;
        printf("\n# compute from %d kernel trace%s (%d ranks%s): %d GEMM ops, %d flash-attention ops, %d elementwise "
               "ops%s\n",
               n_k, n_k == 1 ? "" : "s", k_ranks, (mixed & 2) ? ", mixed rank counts" : "", n_g,
               n_a[0][0] + n_a[0][1] + n_a[1][0] + n_a[1][1] + n_rel, n_e,
               n_skipped_attn ? "; materialised-attention ops left out (not one curve)" : "");
        if (k_ranks != ranks && share != 1.0)
            printf("# kernel traces ran on %d ranks, the micro-benchmarks on %d, on %d cores: every compute rate "
                   "below is the kernel runs' times their share of the cores, min(1, cores/%d) / min(1, cores/%d) "
                   "= %.4g\n", k_ranks, ranks, kr[0].cores_online, ranks, k_ranks, share);
        else if (k_ranks != ranks)
            printf("# WARNING: kernel traces ran on %d ranks, the micro-benchmarks on %d, and the core counts are "
                   "not known to be the same: the compute rates are not rescaled\n", k_ranks, ranks);
        if (peak > 0) {
            printf("# peak (the best bin rate): %.2f GFLOP/s per rank\n", peak / 1e9);
            printf("# %-10s %12s %6s %14s %14s %8s %12s\n", "curve", "key", "ops", "GFLOP/s", "std err", "eff",
                   "med |resid|");
            for (int i = 0; i < n_gb; i++)
                printf("  %-10s %12.1f %6d %14.3f %14.3f %8.3f %11.1f%%\n", "gemm", gb[i].x, gb[i].n, gb[i].rate / 1e9,
                       gb[i].rate_se / 1e9, gb[i].rate / peak, 100 * gb[i].resid_med);
            static const char *an[2][2] = {{"full_d64", "full_d128"}, {"causal_d64", "causal_d128"}};
            for (int a = 0; a < 2; a++)
                for (int b = 0; b < 2; b++)
                    for (int i = 0; i < n_ab[a][b]; i++)
                        printf("  %-10s %12.1f %6d %14.3f %14.3f %8.3f %11.1f%%\n", an[a][b], ab[a][b][i].x,
                               ab[a][b][i].n, ab[a][b][i].rate / 1e9, ab[a][b][i].rate_se / 1e9,
                               ab[a][b][i].rate / peak, 100 * ab[a][b][i].resid_med);
        }
        if (n_e) {
            printf("# elementwise: %.3f GB/s (std err %.3f) over %d ops, median |resid| %.0f%%; per op:\n", e_rate / 1e9,
                   e_se / 1e9, n_e, 100 * e_res);
            /* per op name: the rate each would want */
            for (int i = 0; i < n_e; i++) {
                int first = 1;
                for (int q = 0; q < i; q++)
                    if (!strcmp(es[q].name, es[i].name)) first = 0;
                if (!first) continue;
                double s = 0;
                int m = 0;
                for (int q = i; q < n_e; q++)
                    if (!strcmp(es[q].name, es[i].name)) {
                        s += log(es[q].work / es[q].t);
                        m++;
                    }
                printf("#   %-14s %3d ops: %8.3f GB/s (geometric mean)\n", es[i].name, m, share * exp(s / m) / 1e9);
            }
        }
    }

    if (n_rel)
        printf("# attention backward: %.3f x the forward curve's rate at the same key (geometric mean over %d ops, "
               "sd of log %.3f); curves above: forward and recompute ops\n", bwd_rel, n_rel, bwd_rel_sd);
    for (int b = 0; b < 2; b++)
        if (n_act[b] && act_rate[b] > 0)
            printf("# activation %s: %.3f ns per element (std err %.3f) over %d ops, median |resid| %.0f%%\n",
                   b ? "backward" : "forward", 1e9 / act_rate[b], 1e9 * act_se[b] / (act_rate[b] * act_rate[b]),
                   n_act[b], 100 * act_res[b]);

    /* ----- the profile */
    char bpath[4096];
    if (strchr(base, '/') || (strlen(base) >= 5 && !strcmp(base + strlen(base) - 5, ".json")))
        snprintf(bpath, sizeof bpath, "%s", base);
    else
        snprintf(bpath, sizeof bpath, "%s/clusters/%s.json", sim_preset_dir(), base);
    char *btext = read_text(bpath, 1 << 20);
    root = btext ? cJSON_Parse(btext) : NULL;
    free(btext);
    if (!root) {
        fprintf(stderr, "ulysim calibrate: cannot read the base profile %s again\n", bpath);
        rc = 2;
        goto done;
    }
    char date[32], nm[ULY_NAME_LEN], files[1024], kfiles[1024], buf[4000];
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(date, sizeof date, "%Y-%m-%d", &tmv);
    if (name) snprintf(nm, sizeof nm, "%s", name);
    else snprintf(nm, sizeof nm, "%.24s-calibrated-np%d", bc.name, ranks);
    list_files(files, sizeof files, mb, n_mb);
    list_files(kfiles, sizeof kfiles, kr, n_k);
    set_item(root, "name", cJSON_CreateString(nm));
    snprintf(buf, sizeof buf, "%s, calibrated for %d ranks on one host by ulysim calibrate (%s)", bc.name, ranks, date);
    set_item(root, "description", cJSON_CreateString(buf));
    snprintf(buf, sizeof buf, "ulysim calibrate on %s from ulyharness traces of %s (%s; %s): links fitted to %s%s%s",
             date, mb[0].hostname[0] ? mb[0].hostname : "?", mb[0].cpu_model, mb[0].mpi_library, files,
             n_k ? "; compute fitted to " : "; compute kept from the base profile ", n_k ? kfiles : bc.name);
    set_item(root, "source", cJSON_CreateString(buf));
    set_item(root, "nodes", cJSON_CreateNumber(1));
    set_item(root, "gpus_per_node", cJSON_CreateNumber(ranks));
    snprintf(buf, sizeof buf, "the rank count of the micro-benchmarks (%s): ranks share the host's %d cores, so every "
                              "rate below is per rank at this count",
             files, mb[0].cores_online);
    set_source(root, "gpus_per_node", buf);
    cJSON *intra = cJSON_GetObjectItemCaseSensitive(root, "intra");
    cJSON *inter = cJSON_GetObjectItemCaseSensitive(root, "inter");
    cJSON *gpu = cJSON_GetObjectItemCaseSensitive(root, "gpu");
    if (F.used[P_LAT_INTRA] && cJSON_IsObject(intra)) {
        set_item(intra, "bw_GBps_per_dir", cJSON_CreateNumber(round(cal.intra_bw_Bps / 1e9 * 1e4) / 1e4));
        set_item(intra, "lat_us", cJSON_CreateNumber(round(cal.intra_lat_s * 1e6 * 1e3) / 1e3));
        snprintf(buf, sizeof buf,
                 "ulysim calibrate %s: 1/beta of a weighted least-squares fit (relative residuals) of "
                 "uly_cost_collective to %d points (alltoall, allgather, reduce_scatter, allreduce, sendrecv) of %s: "
                 "%.4f +- %.4f ns/B; median |residual| %.1f%%",
                 date, n, files, 1e9 * F.val[P_INVBW_INTRA], 1e9 * F.se[P_INVBW_INTRA], 100 * med_res);
        set_source(root, "intra.bw_GBps_per_dir", buf);
        if (F.fixed0[P_LAT_INTRA])
            snprintf(buf, sizeof buf, "ulysim calibrate %s: alpha of the same fit came out %.3f us (not positive), "
                                      "fixed at 0 and the fit repeated", date, 1e6 * F0.val[P_LAT_INTRA]);
        else
            snprintf(buf, sizeof buf, "ulysim calibrate %s: alpha of the same fit, %.3f +- %.3f us per step", date,
                     1e6 * F.val[P_LAT_INTRA], 1e6 * F.se[P_LAT_INTRA]);
        set_source(root, "intra.lat_us", buf);
    }
    if (F.used[P_LAT_INTER] && cJSON_IsObject(inter)) {
        set_item(inter, "nic_GBps_per_gpu", cJSON_CreateNumber(round(cal.nic_bw_Bps / 1e9 * 1e4) / 1e4));
        set_item(inter, "lat_us", cJSON_CreateNumber(round(cal.nic_lat_s * 1e6 * 1e3) / 1e3));
        snprintf(buf, sizeof buf, "ulysim calibrate %s: fitted with the in-node tier to %s", date, files);
        set_source(root, "inter.nic_GBps_per_gpu", buf);
        set_source(root, "inter.lat_us", buf);
    } else if (cJSON_IsObject(inter) && F.used[P_LAT_INTRA] && bc.nodes <= 1) {
        /* one host: the base sets the unused NIC equal to the in-node rate */
        set_item(inter, "nic_GBps_per_gpu", cJSON_CreateNumber(round(cal.intra_bw_Bps / 1e9 * 1e4) / 1e4));
        set_item(inter, "lat_us", cJSON_CreateNumber(round(cal.intra_lat_s * 1e6 * 1e3) / 1e3));
        set_item(inter, "gpus_per_leaf", cJSON_CreateNumber(ranks));
        set_source(root, "inter.nic_GBps_per_gpu", "Unused: one host; set equal to the fitted in-node rate");
        set_source(root, "inter.lat_us", "Unused: one host; set equal to the fitted in-node latency");
        set_source(root, "inter.gpus_per_leaf", "Unused: one host; all ranks");
    }
    if (cJSON_IsObject(gpu) && bc.gpus_per_node != ranks) {
        const double hbm = bc.gpu.hbm_bytes / 1073741824.0 * (double)bc.gpus_per_node / ranks;
        set_item(gpu, "hbm_gib", cJSON_CreateNumber(round(hbm * 100) / 100));
        snprintf(buf, sizeof buf, "%s's per-rank memory for %lld ranks scaled to %d ranks sharing the host", bc.name,
                 (long long)bc.gpus_per_node, ranks);
        set_source(root, "gpu.hbm_gib", buf);
    }
    if (n_k && cJSON_IsObject(gpu) && peak > 0 && n_gb > 0) {
        cJSON *pk = cJSON_GetObjectItemCaseSensitive(gpu, "peak_tflops");
        if (cJSON_IsObject(pk)) set_item(pk, "fp32", cJSON_CreateNumber(peak / 1e12));
        snprintf(buf, sizeof buf, "ulysim calibrate %s: the best per-rank rate of the compute ops of %s (%d ranks, "
                                  "%d threads)%s: %.3f GFLOP/s; bf16/fp16 as the base",
                 date, kfiles, k_ranks, kr[0].threads, share != 1.0 ? ", times the share of the cores" : "",
                 peak / 1e9);
        set_source(root, "gpu.peak_tflops", buf);
        set_item(gpu, "gemm_eff", curve_json(gb, n_gb, peak));
        snprintf(buf, sizeof buf, "ulysim calibrate %s: %d GEMM ops of %s in %d bins of cube root of m*n*k; each "
                                  "point a rate fitted with relative residuals (gsl_fit_wmul), over the peak",
                 date, n_g, kfiles, n_gb);
        set_source(root, "gpu.gemm_eff", buf);
        int any_a = 0;
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) any_a |= n_ab[a][b] > 0;
        if (any_a) {
            cJSON *ae = cJSON_GetObjectItemCaseSensitive(gpu, "attn_eff");
            if (!cJSON_IsObject(ae)) {
                ae = cJSON_CreateObject();
                set_item(gpu, "attn_eff", ae);
            }
            static const char *an[2][2] = {{"full_d64", "full_d128"}, {"causal_d64", "causal_d128"}};
            int na = 0;
            for (int a = 0; a < 2; a++)
                for (int b = 0; b < 2; b++)
                    if (n_ab[a][b]) {
                        set_item(ae, an[a][b], curve_json(ab[a][b], n_ab[a][b], peak));
                        na += n_a[a][b];
                    }
            snprintf(buf, sizeof buf, "ulysim calibrate %s: %d flash-attention ops (forward and backward) of %s, "
                                      "binned by key/value rows per block; curves not measured keep the base's",
                     date, na, kfiles);
            set_source(root, "gpu.attn_eff", buf);
        }
    }
    if (n_k && n_e && cJSON_IsObject(gpu) && e_rate > 0) {
        set_item(gpu, "hbm_bw_GBps", cJSON_CreateNumber(round(e_rate / 1e9 * 1e4) / 1e4));
        set_item(gpu, "mem_eff", cJSON_CreateNumber(1));
        snprintf(buf, sizeof buf, "ulysim calibrate %s: one rate for the %d elementwise ops of %s (bytes_touched / "
                                  "time, relative residuals): %.3f +- %.3f GB/s, median |residual| %.0f%%",
                 date, n_e, kfiles, e_rate / 1e9, e_se / 1e9, 100 * e_res);
        set_source(root, "gpu.hbm_bw_GBps", buf);
        set_source(root, "gpu.mem_eff", "hbm_bw_GBps is itself the fitted elementwise rate");
    }
    if (n_k && n_rel && cJSON_IsObject(gpu) && bwd_rel > 0) {
        set_item(gpu, "attn_bwd_rel", cJSON_CreateNumber(round(bwd_rel * 1e4) / 1e4));
        snprintf(buf, sizeof buf, "ulysim calibrate %s: the %d flash-attention backward ops of %s: rate over the "
                                  "forward curve's at the same key, geometric mean %.4f (sd of log %.3f)",
                 date, n_rel, kfiles, bwd_rel, bwd_rel_sd);
        set_source(root, "gpu.attn_bwd_rel", buf);
    }
    static const char *const act_key[2] = {"act_fwd_ns", "act_bwd_ns"};
    for (int b = 0; b < 2 && n_k && cJSON_IsObject(gpu); b++)
        if (n_act[b] && act_rate[b] > 0) {
            set_item(gpu, act_key[b], cJSON_CreateNumber(round(1e9 / act_rate[b] * 1e4) / 1e4));
            snprintf(buf, sizeof buf, "ulysim calibrate %s: the %d MLP activation ops (%s) of %s: elements / time, "
                                      "relative residuals: %.3f +- %.3f ns per element, median |residual| %.0f%%",
                     date, n_act[b], b ? "backward" : "forward and recompute", kfiles, 1e9 / act_rate[b],
                     1e9 * act_se[b] / (act_rate[b] * act_rate[b]), 100 * act_res[b]);
            char key[32];
            snprintf(key, sizeof key, "gpu.%s", act_key[b]);
            set_source(root, key, buf);
        }
    char *text = cJSON_Print(root);
    if (!text) {
        rc = 1;
        goto done;
    }
    uly_cluster chk;
    if (sim_cluster_parse(text, strlen(text), out, &chk, why, sizeof why)) {
        fprintf(stderr, "ulysim calibrate: the profile would not load: %s\n", why);
        free(text);
        rc = 1;
        goto done;
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", out, (long)getpid());
    FILE *fp = fopen(tmp, "w");
    int bad = !fp;
    if (fp) {
        bad |= fputs(text, fp) < 0 || fputc('\n', fp) == EOF;
        bad |= fclose(fp) != 0;
    }
    free(text);
    if (bad || rename(tmp, out) != 0) {
        fprintf(stderr, "ulysim calibrate: cannot write %s: %s\n", out, strerror(errno));
        remove(tmp);
        rc = 2;
        goto done;
    }
    printf("# wrote %s (cluster \"%s\": intra %.3f GB/s, %.3f us%s)\n", out, nm, cal.intra_bw_Bps / 1e9,
           cal.intra_lat_s * 1e6, n_k ? "; compute from the kernel traces" : "; compute as the base");
done:
    cJSON_Delete(root);
    if (mb)
        for (int f = 0; f < n_mb; f++) trace_free(&mb[f]);
    if (kr)
        for (int f = 0; f < n_k; f++) trace_free(&kr[f]);
    free(mb);
    free(kr);
    free(pts);
    free(gs);
    free(es);
    free(acs[0]);
    free(acs[1]);
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) free(abw[a][b]);
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) free(as[a][b]);
    free(mb_files);
    free(k_files);
    return rc;
}
