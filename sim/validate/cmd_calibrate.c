/* cmd_calibrate.c: `ulysim calibrate MICROBENCH.trace... -o cluster.json`.
 *
 * Fits the parameters of the model's own collective formulas to measured
 * collective times, and writes a cluster profile that prices through the same
 * code (uly_cost_collective) with the fitted numbers. The fits themselves are
 * calib_fit.c; this file reads the traces, turns them into samples, prints
 * the fits and writes the profile.
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
 * point through uly_cost_collective with the fitted profile). The library's
 * own MPI_Allreduce ("allreduce_mpi") is not an algorithm the harness uses
 * and is left out.
 *
 * Compute (--kernels PLAN.trace...). The model prices a GEMM at
 * flops x crit_factor / (peak x gemm_eff(cbrt(m n k))), a flash attention op
 * at flops x crit_factor / (peak x attn_eff(kv rows)), an elementwise op at
 * bytes_touched / (hbm_bw x mem_eff). From the compute ops of the given plan
 * traces: per size bin (up to 8, equal widths in log2 of the curve's key) a
 * rate r minimising the relative residuals of t = flops / r; the peak is the
 * highest bin rate, the curves are the bin rates over it; the elementwise
 * rate likewise, one for all elementwise ops but the MLP activation. The
 * activation (plan ops with act_elems > 0) is priced at
 * max(bytes, elems x act_ns): its own per-element cost, forward and
 * backward, fitted the same way to elems x crit_factor (on a CPU tanhf and
 * expf make it compute-bound, ~10x its bytes). The attention curves are
 * fitted to the forward (and recompute) ops; the backward ops give one
 * ratio, attn_bwd_rel: the geometric mean of their rate over the forward
 * curve's at their key, and, per curve class, their own curve by the same
 * key (attn_bwd_eff, what the model then prices the backward with); the
 * activation's per-element rate is binned by its element count like a curve
 * (act_eff, over the best bin, whose cost act_fwd_ns / act_bwd_ns then is).
 * These traces must not be the runs you validate against. */
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "calib_cmd.h"
#include "calib_fit.h"
#include "json_strict.h"
#include "out_file.h"
#include "output.h"
#include "preset.h"
#include "trace_read.h"

int sim_cmd_calibrate(int argc, char **argv);

const char *const calib_attn_name[2][2] = {{"full_d64", "full_d128"}, {"causal_d64", "causal_d128"}};
static const char *const PARAM_NAME[CALIB_N_PARAM] = {"intra.lat", "intra.1/bw", "inter.lat", "inter.1/bw"};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ulysim calibrate MICROBENCH.trace... -o cluster.json [--base PRESET] [--name NAME]\n"
            "                        [--kernels PLAN.trace...]\n"
            "       ulysim calibrate --host [--ranks P,...] [...]   measure this host and write its profile where\n"
            "                        ulysim validate finds it (ulysim calibrate --host --help)\n"
            "       ulysim calibrate --gemms TABLE.csv... --base GPU -o cluster.json   fit a GPU's GEMM model to\n"
            "                        measured GEMMs (ulysim calibrate --gemms --help)\n"
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
            "  -o FILE         the profile to write (required; also --output FILE)\n"
            "Options take their value as --opt VALUE or --opt=VALUE.\n"
            "Exit: 0 written; 2 bad usage or bad traces; 1 the fit failed.\n");
}

/* ------------------------------------------------------- the command line */

int calib_list_empty(const char *opt, const char *what, const char *hint, const char *s, int have, int at)
{
    /* the next option came, or the end: --help and -h are read as asked */
    if (have != at || (s && !(s[0] == '-' && s[1] && strcmp(s, "--help") && strcmp(s, "-h")))) return 0;
    char qb[80];
    sim_err_as("ulysim calibrate", "%s needs a %s after it (got %s%s; %s)", opt, what, s ? "the option " : "nothing",
               s ? text_quote(s, qb, sizeof qb) : "", hint);
    return 1;
}

/* --name becomes the profile's "name", which the preset loader holds to
 * 1..ULY_NAME_LEN-1 characters of [A-Za-z0-9._+-] (js_get_name): checked
 * before the work, not found after the fit as a profile that will not
 * load, nor cut to fit. 0, or 2 after a message. */
int calib_name_check(const char *name)
{
    static const char *const WHO = "ulysim calibrate";
    char qb[80];
    const size_t len = strlen(name);
    size_t bad = 0;
    while (bad < len && js_name_char_ok(name[bad])) bad++;
    if (len == 0 || len >= ULY_NAME_LEN || bad < len) {
        char what[64];
        if (len == 0) snprintf(what, sizeof what, "empty");
        else if (len >= ULY_NAME_LEN) snprintf(what, sizeof what, "%zu characters, too long", len);
        else if ((unsigned char)name[bad] < 0x20 || (unsigned char)name[bad] >= 0x7f)
            snprintf(what, sizeof what, "byte 0x%02x at %zu not allowed", (unsigned char)name[bad], bad + 1);
        else snprintf(what, sizeof what, "'%c' at %zu not allowed", name[bad], bad + 1);
        sim_err_as(WHO, "--name %s: %s (valid: 1..%d characters from A-Z a-z 0-9 . _ + -)",
                   text_quote(name, qb, sizeof qb), what, ULY_NAME_LEN - 1);
        return 2;
    }
    return 0;
}

/* 0, or the exit status after a message; *done after --help. */
static int parse_args(int argc, char **argv, cal_args *a, int *done)
{
    static const char *const WHO = "ulysim calibrate";
    static const char *const OUT[] = {"-o", "--output", "--out", NULL}, *const BASE[] = {"--base", NULL},
                             *const NAME[] = {"--name", NULL};
    const char *base = NULL;
    /* in_kernels: the arguments go to --kernels (k_at: the first, at its
     * position in argv), which must be given one */
    int in_kernels = 0, k_at = 0;
    for (int i = 1; i <= argc; i++) {
        const char *s = i < argc ? argv[i] : NULL, *v = NULL;
        int r = 0;
        if (in_kernels && calib_list_empty("--kernels", "plan trace",
                                           "valid: --kernels PLAN.trace..., every argument up to the next option; "
                                           "see ulysim calibrate --help",
                                           s, a->n_k, k_at))
            return 2;
        if (!s) break;
        if ((r = sim_opt_help(WHO, s))) {
            if (r < 0) return 2;
            usage(stdout);
            *done = 1;
            return 0;
        } else if ((r = sim_opt_value(WHO, argc, argv, &i, OUT, &a->out, &v)) ||
                   (r = sim_opt_value(WHO, argc, argv, &i, BASE, &base, &v)) ||
                   (r = sim_opt_value(WHO, argc, argv, &i, NAME, &a->name, &v))) {
            if (r < 0) return 2;
            in_kernels = 0;
        } else if (!strcmp(s, "--kernels") || !strncmp(s, "--kernels=", 10)) {
            in_kernels = 1, k_at = a->n_k;
            if (s[9] == '=' && s[10]) a->k_files[a->n_k++] = s + 10; /* --kernels=PLAN.trace: the first of them */
        } else if (s[0] == '-' && s[1]) {
            sim_err_as(WHO, "unknown option %s; see ulysim calibrate --help", s);
            return 2;
        } else if (in_kernels) {
            a->k_files[a->n_k++] = s;
        } else {
            a->mb_files[a->n_mb++] = s;
        }
    }
    if (base) a->base = base;
    if (!a->out || a->n_mb == 0) {
        sim_err_as(WHO, "%s; usage: ulysim calibrate MICROBENCH.trace... -o cluster.json",
                   !a->out ? "-o FILE is required" : "no micro-benchmark trace given");
        return 2;
    }
    if (a->name && calib_name_check(a->name)) return 2;
    char why[1200];
    /* a micro-benchmark (or kernel) trace given twice would count twice in the fit */
    if (sim_files_distinct(a->mb_files, a->n_mb, why, sizeof why) ||
        sim_files_distinct(a->k_files, a->n_k, why, sizeof why)) {
        sim_err_as(WHO, "%s", why);
        return 2;
    }
    for (int i = 0; i < a->n_mb; i++) out_file_input_note(a->mb_files[i], NULL); /* -o may not replace them */
    for (int i = 0; i < a->n_k; i++) out_file_input_note(a->k_files[i], NULL);
    if (out_file_check(a->out, OUT_FILE_STREAM, why, sizeof why)) { /* before the work */
        sim_err_as(WHO, "%s", why);
        return 2;
    }
    return 0;
}

/* Reads the traces of files as kind into runs; 0, or the exit status after
 * a message (flag: the option they came with, for the message). */
static int read_traces(const char **files, int n, trace_kind kind, trace_run *runs, const char *flag)
{
    char why[1024];
    for (int f = 0; f < n; f++) {
        int r = trace_read(files[f], &runs[f], why, sizeof why);
        if (r) {
            sim_err_as("ulysim calibrate", "%s%s", flag, r == 2 ? why : "out of memory");
            return r;
        }
        /* the times of a run whose result or bytes were wrong fit nothing */
        if (trace_require_passed(&runs[f], "calibration", why, sizeof why)) {
            sim_err_as("ulysim calibrate", "%s%s", flag, why);
            return 2;
        }
        if (runs[f].kind != kind) {
            if (kind == TRACE_MICROBENCH)
                sim_err_as("ulysim calibrate", "%s:1: a plan trace, not a micro-benchmark; plan traces go after "
                           "--kernels", files[f]);
            else
                sim_err_as("ulysim calibrate", "--kernels %s:1: a micro-benchmark trace; --kernels takes plan "
                           "traces", files[f]);
            return 2;
        }
    }
    return 0;
}

/* -------------------------------------------------------------- the links */

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
    c->intra_lat_s = k == CALIB_LAT_INTRA ? 1.0 : 0.0;
    c->intra_bw_Bps = k == CALIB_INVBW_INTRA ? 1.0 : INFINITY;
    c->nic_lat_s = k == CALIB_LAT_INTER ? 1.0 : 0.0;
    c->nic_bw_Bps = k == CALIB_INVBW_INTER ? 1.0 : INFINITY;
    c->torus_link_bw_Bps = 0; /* the torus bisection bound is not linear: not fitted */
    c->coll_model = ULY_COLL_HOCKNEY; /* the formulas fitted, whatever the base prices with */
}

static double cost_of(const uly_cluster *c, const trace_point *p, const uly_group_place *gp)
{
    return uly_cost_collective(c, p->coll, gp, (double)p->bytes_sent, 1, 1);
}

/* Reads the micro-benchmarks and makes a point of each collective with a
 * time and a size. 0, or the exit status after a message. */
static int links_read(const cal_args *a, const uly_cluster *bc, cal_links *L)
{
    L->mb = calloc((size_t)a->n_mb, sizeof *L->mb);
    if (!L->mb) return 1;
    L->n_mb = a->n_mb;
    int rc = read_traces(a->mb_files, a->n_mb, TRACE_MICROBENCH, L->mb, "");
    if (rc) return rc;
    int cap = 0;
    for (int f = 0; f < a->n_mb; f++) {
        cap += L->mb[f].n_points;
        if (L->ranks && L->mb[f].ranks != L->ranks) L->mixed = 1;
        if (L->mb[f].ranks > L->ranks) L->ranks = L->mb[f].ranks;
    }
    L->pts = calloc((size_t)cap + 1, sizeof *L->pts);
    L->lp = calloc((size_t)cap + 1, sizeof *L->lp);
    if (!L->pts || !L->lp) return 1;
    for (int f = 0; f < a->n_mb; f++)
        for (int i = 0; i < L->mb[f].n_points; i++) {
            const trace_point *p = &L->mb[f].points[i];
            if (p->coll == ULY_COLL_NONE) { /* allreduce_mpi */
                L->n_skip++;
                continue;
            }
            if (!(p->t.median > 0) || p->bytes_sent <= 0) {
                L->n_skip_empty++;
                continue;
            }
            const int j = L->n++;
            L->pts[j].run = &L->mb[f];
            L->pts[j].p = p;
            place_of(&L->mb[f], p->group_size, &L->pts[j].gp);
            L->lp[j].t_s = p->t.median;
            for (int k = 0; k < CALIB_N_PARAM; k++) {
                uly_cluster u;
                unit_cluster(bc, k, &u);
                L->lp[j].row[k] = cost_of(&u, p, &L->pts[j].gp);
            }
        }
    return 0;
}

/* Fits the links and sets them on a copy of the base (one node of all the
 * ranks). 0, or the exit status after a message. */
static int links_fit(const uly_cluster *bc, cal_links *L)
{
    const calib_status st = calib_links_fit(L->lp, L->n, &L->F);
    if (st == CALIB_ENODATA) {
        sim_err_as("ulysim calibrate", "no usable micro-benchmark point (alltoall, allgather, reduce_scatter, "
                   "allreduce or sendrecv with a positive time and size)");
        return 2;
    }
    if (st == CALIB_EFEW) {
        int k = 0;
        for (int j = 0; j < CALIB_N_PARAM; j++) k += L->F.used[j];
        sim_err_as("ulysim calibrate", "%d usable micro-benchmark point%s cannot determine the %d link parameters "
                   "they depend on (valid: traces with more than %d points, e.g. ulyharness --microbench over its "
                   "default sizes)", L->n, L->n == 1 ? "" : "s", k, k);
        return 2;
    }
    if (st != CALIB_OK) {
        sim_err_as("ulysim calibrate", "the least-squares fit failed (%d points)", L->n);
        return 1;
    }
    const calib_links *F = &L->F;
    uly_cluster *cal = &L->cal;
    *cal = *bc;
    cal->coll_model = ULY_COLL_HOCKNEY; /* the profile keeps the formulas fitted (calib_profile.c writes so) */
    cal->nodes = 1;
    cal->gpus_per_node = L->ranks;
    if (F->used[CALIB_LAT_INTRA]) cal->intra_lat_s = F->fixed0[CALIB_LAT_INTRA] ? 0 : F->val[CALIB_LAT_INTRA];
    if (F->used[CALIB_INVBW_INTRA] && !F->fixed0[CALIB_INVBW_INTRA])
        cal->intra_bw_Bps = 1.0 / F->val[CALIB_INVBW_INTRA];
    if (F->used[CALIB_LAT_INTER]) cal->nic_lat_s = F->fixed0[CALIB_LAT_INTER] ? 0 : F->val[CALIB_LAT_INTER];
    if (F->used[CALIB_INVBW_INTER] && !F->fixed0[CALIB_INVBW_INTER]) cal->nic_bw_Bps = 1.0 / F->val[CALIB_INVBW_INTER];
    return 0;
}

const char *calib_base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* The fitted parameters with their errors. */
static void links_print_fit(const cal_links *L)
{
    const calib_links *F = &L->F;
    const int n = L->n;
    char empty[96] = "";
    if (L->n_skip_empty)
        snprintf(empty, sizeof empty, "; %d left out with a time of 0 or no bytes (nothing to fit)", L->n_skip_empty);
    printf("# ulysim calibrate: %d micro-benchmark point%s from %d trace%s (%d ranks%s); %d left out "
           "(allreduce_mpi: the library's algorithm, not the harness's)%s\n",
           n, n == 1 ? "" : "s", L->n_mb, L->n_mb == 1 ? "" : "s", L->ranks, L->mixed ? ", mixed rank counts" : "",
           L->n_skip, empty);
    printf("# model: uly_cost_collective (alltoall, allgather, reduce_scatter: (p-1) alpha + sent beta; allreduce: "
           "2(p-1) alpha + sent beta; sendrecv: alpha + sent beta); weighted least squares, weights 1/t^2 "
           "(relative residuals); standard errors scaled by chi^2/(n-k)\n");
    printf("# %-12s %14s %14s   %s\n", "parameter", "fit", "std error", "meaning");
    for (int k = 0; k < CALIB_N_PARAM; k++) {
        if (!F->used[k]) continue;
        if (k == CALIB_LAT_INTRA || k == CALIB_LAT_INTER) {
            if (F->fixed0[k])
                printf("  %-12s %11.3f us %14s   latency fixed at 0: the free fit gave %.3f us\n", PARAM_NAME[k], 0.0,
                       "-", 1e6 * F->free_val[k]);
            else
                printf("  %-12s %11.3f us %11.3f us   alpha: %s_lat (per step)\n", PARAM_NAME[k], 1e6 * F->val[k],
                       1e6 * F->se[k], k == CALIB_LAT_INTRA ? "intra" : "nic");
        } else if (F->fixed0[k]) {
            printf("  %-12s %14s %14s   not determined (the free fit gave %.4g); base value kept\n", PARAM_NAME[k],
                   "-", "-", F->free_val[k]);
        } else {
            const double bw = 1.0 / F->val[k], lo = 1.0 / (F->val[k] + F->se[k]);
            const double hi = F->val[k] > F->se[k] ? 1.0 / (F->val[k] - F->se[k]) : INFINITY;
            printf("  %-12s %11.4f ns/B %9.4f ns/B   beta = 1/bandwidth: %.3f GB/s per direction (%.3f .. %.3f at "
                   "one std error)\n",
                   PARAM_NAME[k], 1e9 * F->val[k], 1e9 * F->se[k], bw / 1e9, lo / 1e9, hi / 1e9);
        }
    }
    char v[32];
    printf("# rms relative residual %s%%\n", sim_fixed_str(100 * sqrt(F->chisq / (F->n > 0 ? F->n : 1)), 1, 0, v, sizeof v));
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Every point priced through uly_cost_collective with the fitted profile,
 * its residual, whether the formulas were linear in the parameters, and the
 * bias per collective. */
static void links_print_points(cal_links *L)
{
    const uly_cluster *cal = &L->cal;
    const int n = L->n;
    printf("# %-40s %-14s %3s %10s %10s %12s %12s %8s\n", "trace", "coll", "p", "size", "sent", "meas_us", "pred_us",
           "resid");
    double lin_dev = 0;
    const double par[CALIB_N_PARAM] = {cal->intra_lat_s, 1.0 / cal->intra_bw_Bps, cal->nic_lat_s,
                                       1.0 / cal->nic_bw_Bps};
    double *res = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; i++) {
        const trace_point *p = L->pts[i].p;
        const double pred = L->pts[i].pred = cost_of(cal, p, &L->pts[i].gp);
        double lin = 0;
        for (int k = 0; k < CALIB_N_PARAM; k++) lin += L->lp[i].row[k] * par[k];
        const double d = fabs(lin - pred) / (pred > 0 ? pred : 1);
        lin_dev = d > lin_dev ? d : lin_dev;
        const double r = pred / p->t.median - 1.0;
        if (res) res[i] = fabs(r);
        char v[32];
        printf("  %-40s %-14s %3d %10lld %10lld %12.2f %12.2f %7s%%\n", calib_base_name(L->pts[i].run->path),
               p->coll_name, p->group_size, (long long)p->size_bytes, (long long)p->bytes_sent, 1e6 * p->t.median,
               1e6 * pred, sim_fixed_str(100 * r, 1, 1, v, sizeof v));
    }
    L->med_res = NAN;
    if (res) {
        qsort(res, (size_t)n, sizeof *res, cmp_dbl);
        L->med_res = n % 2 ? res[n / 2] : 0.5 * (res[n / 2 - 1] + res[n / 2]);
        char v1[32], v2[32];
        printf("# residuals through uly_cost_collective with the written profile: median |resid| %s%%, max %s%%\n",
               sim_fixed_str(100 * L->med_res, 1, 0, v1, sizeof v1), sim_fixed_str(100 * res[n - 1], 1, 0, v2, sizeof v2));
        free(res);
    }
    if (lin_dev > 1e-6)
        printf("# WARNING: uly_cost_collective is not linear in the fitted parameters (deviation %.2g): the fit is "
               "approximate\n", lin_dev);
    static const uly_coll colls[] = {ULY_COLL_ALLTOALL, ULY_COLL_ALLGATHER, ULY_COLL_REDUCE_SCATTER, ULY_COLL_ALLREDUCE,
                                     ULY_COLL_SENDRECV};
    for (size_t c = 0; c < sizeof colls / sizeof colls[0]; c++) {
        calib_logmean g = {0};
        for (int i = 0; i < n; i++)
            if (L->pts[i].p->coll == colls[c]) calib_logmean_add(&g, L->pts[i].pred / L->pts[i].p->t.median);
        if (g.n)
            printf("# %-14s %3d points: predicted / measured, geometric mean %.2f\n", uly_coll_name(colls[c]), g.n,
                   calib_logmean_gmean(&g));
    }
}

/* ------------------------------------------------------------ the compute */

static int set_alloc(cal_set *s, int cap)
{
    s->n = 0;
    s->s = calloc((size_t)(cap > 0 ? cap : 1), sizeof *s->s);
    return s->s != NULL;
}

/* Sorts the compute ops of the kernel runs into sample sets by what prices
 * them: GEMMs, flash attention (forward and recompute; backward) per curve
 * class, the MLP activation (forward and recompute; backward), the other
 * elementwise ops. */
static void compute_collect(cal_compute *C)
{
    for (int f = 0; f < C->n_k; f++) {
        const trace_run *r = &C->kr[f];
        const int ci = r->workload.causal ? 1 : 0, di = r->model.head_dim >= 128 ? 1 : 0;
        for (int i = 0; i < r->plan.n_ops; i++) {
            const uly_op *o = &r->plan.ops[i];
            const double t = r->ops[i].t.median;
            const char *name = uly_op_type_name(o->type);
            if (!(t > 0)) continue;
            if (!(o->eff_size > 0) && o->kind != ULY_OP_ELEM) continue; /* no curve key */
            cal_set *s = NULL;
            calib_sample sm = {1, 0, t, name};
            if (o->kind == ULY_OP_GEMM && o->flops > 0) {
                s = &C->gemm;
                sm.x = cbrt(o->eff_size), sm.work = o->flops * o->crit_factor;
            } else if (o->kind == ULY_OP_ATTN && o->flops > 0) {
                if (!o->flash) { /* materialised attention: GEMMs plus softmax passes, not one curve */
                    C->n_skipped_attn++;
                    continue;
                }
                s = o->phase == ULY_PHASE_BWD && !o->recompute ? &C->attn_bwd[ci][di] : &C->attn[ci][di];
                sm.x = o->eff_size, sm.work = o->flops * o->crit_factor;
            } else if (o->kind == ULY_OP_ELEM && o->act_elems > 0) {
                s = &C->act[o->phase == ULY_PHASE_BWD && !o->recompute];
                sm.x = (double)o->act_elems, sm.work = (double)o->act_elems * o->crit_factor;
            } else if (o->kind == ULY_OP_ELEM && o->bytes_touched > 0) {
                s = &C->elem;
                sm.work = o->bytes_touched * o->crit_factor;
            }
            if (s) s->s[s->n++] = sm;
        }
    }
}

/* Fits the rates and curves; rescales them to the micro-benchmarks' rank
 * count, and compares attention's backward with its forward curve. */
static void compute_fit(cal_compute *C, const cal_links *L)
{
    C->e_rate = C->e_se = C->e_res = NAN;
    for (int b = 0; b < 2; b++) C->act_rate[b] = C->act_se[b] = C->act_res[b] = NAN;
    C->n_gb = calib_curve_fit(C->gemm.s, C->gemm.n, C->gb);
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) C->n_ab[a][b] = calib_curve_fit(C->attn[a][b].s, C->attn[a][b].n, C->ab[a][b]);
    if (C->elem.n) calib_rate_fit(C->elem.s, C->elem.n, &C->e_rate, &C->e_se, &C->e_res);
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            C->n_abw[a][b] = calib_curve_fit(C->attn_bwd[a][b].s, C->attn_bwd[a][b].n, C->abw[a][b]);
    for (int b = 0; b < 2; b++) {
        if (C->act[b].n) calib_rate_fit(C->act[b].s, C->act[b].n, &C->act_rate[b], &C->act_se[b], &C->act_res[b]);
        C->n_actb[b] = calib_curve_fit(C->act[b].s, C->act[b].n, C->actb[b]);
    }
    /* Kernel runs on another rank count than the micro-benchmarks, on the
     * same host: per-rank compute rates scale with each rank's share of
     * the cores, min(1, cores / ranks). Kernel runs with one rank per core
     * measure the kernels themselves; with more ranks than cores each op
     * would also measure the scheduler (an op shorter than its time slice
     * runs alone while the others wait at the barrier, a long one at the
     * fair share), which a size-keyed curve cannot express. */
    C->share = 1.0;
    const trace_run *k0 = &C->kr[0], *m0 = &L->mb[0];
    if (C->k_ranks != L->ranks && !C->mixed && k0->cores_online > 0 && k0->cores_online == m0->cores_online) {
        const double f = C->share = calib_core_share(k0->cores_online, L->ranks, C->k_ranks);
        calib_bins_scale(C->gb, C->n_gb, f);
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) {
                calib_bins_scale(C->ab[a][b], C->n_ab[a][b], f);
                calib_bins_scale(C->abw[a][b], C->n_abw[a][b], f);
            }
        C->e_rate *= f, C->e_se *= f;
        for (int b = 0; b < 2; b++) {
            C->act_rate[b] *= f, C->act_se[b] *= f;
            calib_bins_scale(C->actb[b], C->n_actb[b], f);
        }
    }
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            calib_rel_add(&C->rel, C->ab[a][b], C->n_ab[a][b], C->attn_bwd[a][b].s, C->attn_bwd[a][b].n, C->share);
    C->peak = calib_bins_peak(C->gb, C->n_gb, 0);
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) C->peak = calib_bins_peak(C->ab[a][b], C->n_ab[a][b], C->peak);
}

static void print_bins(const char *name, const calib_bin *b, int n, double peak)
{
    char v[32];
    for (int i = 0; i < n; i++)
        printf("  %-10s %12.1f %6d %14.3f %14.3f %8.3f %11s%%\n", name, b[i].x, b[i].n, b[i].rate / 1e9,
               b[i].rate_se / 1e9, b[i].rate / peak, sim_fixed_str(100 * b[i].resid_med, 1, 0, v, sizeof v));
}

static void compute_print(const cal_compute *C, const cal_links *L)
{
    const int n_attn = C->attn[0][0].n + C->attn[0][1].n + C->attn[1][0].n + C->attn[1][1].n + C->rel.n;
    printf("\n# compute from %d kernel trace%s (%d ranks%s): %d GEMM ops, %d flash-attention ops, %d elementwise "
           "ops%s\n",
           C->n_k, C->n_k == 1 ? "" : "s", C->k_ranks, C->mixed ? ", mixed rank counts" : "", C->gemm.n, n_attn,
           C->elem.n, C->n_skipped_attn ? "; materialised-attention ops left out (not one curve)" : "");
    if (C->k_ranks != L->ranks && C->share != 1.0)
        printf("# kernel traces ran on %d ranks, the micro-benchmarks on %d, on %d cores: every compute rate "
               "below is the kernel runs' times their share of the cores, min(1, cores/%d) / min(1, cores/%d) "
               "= %.4g\n", C->k_ranks, L->ranks, C->kr[0].cores_online, L->ranks, C->k_ranks, C->share);
    else if (C->k_ranks != L->ranks)
        printf("# WARNING: kernel traces ran on %d ranks, the micro-benchmarks on %d, and the core counts are "
               "not known to be the same: the compute rates are not rescaled\n", C->k_ranks, L->ranks);
    if (C->peak > 0) {
        printf("# peak (the best bin rate): %.2f GFLOP/s per rank\n", C->peak / 1e9);
        printf("# %-10s %12s %6s %14s %14s %8s %12s\n", "curve", "key", "ops", "GFLOP/s", "std err", "eff",
               "med |resid|");
        print_bins("gemm", C->gb, C->n_gb, C->peak);
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) print_bins(calib_attn_name[a][b], C->ab[a][b], C->n_ab[a][b], C->peak);
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) {
                char nm[32];
                snprintf(nm, sizeof nm, "%s_bwd", calib_attn_name[a][b]);
                print_bins(nm, C->abw[a][b], C->n_abw[a][b], C->peak);
            }
    }
    const cal_set *e = &C->elem;
    if (e->n) {
        printf("# elementwise: %.3f GB/s (std err %.3f) over %d ops, median |resid| %.0f%%; per op:\n", C->e_rate / 1e9,
               C->e_se / 1e9, e->n, 100 * C->e_res);
        /* per op name: the rate each would want */
        for (int i = 0; i < e->n; i++) {
            int first = 1;
            for (int q = 0; q < i; q++)
                if (!strcmp(e->s[q].name, e->s[i].name)) first = 0;
            if (!first) continue;
            calib_logmean g = {0};
            for (int q = i; q < e->n; q++)
                if (!strcmp(e->s[q].name, e->s[i].name)) calib_logmean_add(&g, e->s[q].work / e->s[q].t_s);
            printf("#   %-14s %3d ops: %8.3f GB/s (geometric mean)\n", e->s[i].name, g.n,
                   C->share * calib_logmean_gmean(&g) / 1e9);
        }
    }
}

/* The trailing lines on attention's backward and the activation, printed
 * with or without kernel traces. */
static void compute_print_ratios(const cal_compute *C)
{
    if (C->rel.n)
        printf("# attention backward: %.3f x the forward curve's rate at the same key (geometric mean over %d ops, "
               "sd of log %.3f); curves above: forward and recompute ops\n",
               calib_logmean_gmean(&C->rel), C->rel.n, calib_logmean_sd(&C->rel));
    for (int b = 0; b < 2; b++)
        if (C->act[b].n && C->act_rate[b] > 0) {
            printf("# activation %s: %.3f ns per element (std err %.3f) over %d ops, median |resid| %.0f%%\n",
                   b ? "backward" : "forward", 1e9 / C->act_rate[b],
                   1e9 * C->act_se[b] / (C->act_rate[b] * C->act_rate[b]), C->act[b].n, 100 * C->act_res[b]);
            for (int i = 0; i < C->n_actb[b]; i++)
                printf("#   %12.0f elements %3d ops: %8.3f ns per element, median |resid| %.1f%%\n", C->actb[b][i].x,
                       C->actb[b][i].n, 1e9 / C->actb[b][i].rate, 100 * C->actb[b][i].resid_med);
        }
}

/* Reads the kernel runs: before anything is printed, so that a bad one is
 * the command's one line. 0, or the exit status after a message. */
static int compute_read(const cal_args *a, cal_compute *C)
{
    C->n_k = a->n_k;
    C->kr = calloc((size_t)(a->n_k ? a->n_k : 1), sizeof *C->kr);
    if (!C->kr) return 1;
    if (!a->n_k) return 0;
    return read_traces(a->k_files, a->n_k, TRACE_PLAN, C->kr, "--kernels ");
}

/* Fits the compute of the kernel runs compute_read read. 0, or the exit
 * status after a message. */
static int compute_run(const cal_args *a, const cal_links *L, cal_compute *C)
{
    if (!a->n_k) return 0;
    int cap = 0;
    for (int f = 0; f < a->n_k; f++) {
        cap += C->kr[f].plan.n_ops;
        if (C->k_ranks && C->kr[f].ranks != C->k_ranks) C->mixed = 1;
        C->k_ranks = C->kr[f].ranks;
    }
    int ok = set_alloc(&C->gemm, cap) && set_alloc(&C->elem, cap) && set_alloc(&C->act[0], cap) &&
             set_alloc(&C->act[1], cap);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) ok &= set_alloc(&C->attn[i][j], cap) && set_alloc(&C->attn_bwd[i][j], cap);
    if (!ok) return 1;
    compute_collect(C);
    compute_fit(C, L);
    compute_print(C, L);
    return 0;
}

static void compute_free(cal_compute *C)
{
    if (C->kr)
        for (int f = 0; f < C->n_k; f++) trace_free(&C->kr[f]);
    free(C->kr);
    free(C->gemm.s);
    free(C->elem.s);
    for (int i = 0; i < 2; i++) {
        free(C->act[i].s);
        for (int j = 0; j < 2; j++) free(C->attn[i][j].s), free(C->attn_bwd[i][j].s);
    }
}

/* ------------------------------------------------------------ the command */

/* The GEMM fit's mode (calib_gemm_cmd.c): --gemms given, or --kernels with
 * no micro-benchmark on a base GPU that prices GEMMs by shape (sm_count),
 * whose compute constants are the GEMM model's, not a CPU's curves. */
static int gemm_mode(int argc, char **argv)
{
    const char *base = NULL;
    int kernels = 0, positional = 0, in_list = 0;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--gemms") || !strncmp(s, "--gemms=", 8)) return 1;
        if (!strcmp(s, "--kernels") || !strncmp(s, "--kernels=", 10)) kernels = 1, in_list = 1;
        else if (!strcmp(s, "--base") && i + 1 < argc) base = argv[++i], in_list = 0;
        else if (!strncmp(s, "--base=", 7)) base = s + 7, in_list = 0;
        else if (s[0] == '-' && s[1]) in_list = 0, i += (!strcmp(s, "-o") || !strcmp(s, "--output") ||
                                                       !strcmp(s, "--out") || !strcmp(s, "--name")) && i + 1 < argc;
        else if (!in_list) positional = 1;
    }
    if (!kernels || positional || !base) return 0;
    uly_cluster c;
    char why[1024];
    return preset_cluster_load(base, &c, why, sizeof why) == 0 && c.gpu.sm_count > 0;
}

int sim_cmd_calibrate(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--host")) return sim_calib_host(argc, argv); /* calib_host.c */
    if (gemm_mode(argc, argv)) return sim_calib_gemms(argc, argv); /* calib_gemm_cmd.c */
    cal_args a = {.base = "cpu-local"};
    cal_links L;
    cal_compute C;
    memset(&L, 0, sizeof L);
    memset(&C, 0, sizeof C);
    char why[1024];
    int rc = 0, done = 0;
    gsl_set_error_handler_off(); /* GSL reports through status codes; never abort() */
    a.mb_files = calloc((size_t)argc + 1, sizeof(char *));
    a.k_files = calloc((size_t)argc + 1, sizeof(char *));
    if (!a.mb_files || !a.k_files) {
        rc = 1;
        goto done;
    }
    rc = parse_args(argc, argv, &a, &done);
    if (rc || done) goto done;
    uly_cluster bc;
    if (preset_cluster_load(a.base, &bc, why, sizeof why)) {
        sim_err_as("ulysim calibrate", "--base %s", why);
        rc = 2;
        goto done;
    }
    /* the base, read now, is an input too: -o may not replace it (said
     * before the fit is printed) */
    if (out_file_check(a.out, OUT_FILE_STREAM, why, sizeof why)) {
        sim_err_as("ulysim calibrate", "%s", why);
        rc = 2;
        goto done;
    }
    if ((rc = links_read(&a, &bc, &L)) || (rc = compute_read(&a, &C)) || (rc = links_fit(&bc, &L))) goto done;
    links_print_fit(&L);
    links_print_points(&L);
    if ((rc = compute_run(&a, &L, &C))) goto done;
    compute_print_ratios(&C);
    rc = calib_profile_write(&a, &bc, &L, &C);
done:
    if (L.mb)
        for (int f = 0; f < L.n_mb; f++) trace_free(&L.mb[f]);
    free(L.mb);
    free(L.pts);
    free(L.lp);
    compute_free(&C);
    free(a.mb_files);
    free(a.k_files);
    return rc;
}
