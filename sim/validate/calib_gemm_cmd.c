/* calib_gemm_cmd.c: `ulysim calibrate --gemms TABLE.csv... [--kernels
 * PLAN.trace...] --base GPU -o cluster.json`, and `--kernels` alone on a GPU
 * base: fits the GEMM-by-shape model's two measured constants, the
 * achievable fraction of peak (gpu.gemm_peak_frac) and the k loop's fill
 * (gpu.gemm_latency_us), to measured GEMMs (calib_gemm.c), prints the fit
 * and every sample's residual, and writes the base profile with the two
 * numbers replaced and their source said. The rest of the GPU (SMs, tile,
 * peaks, HBM rate) stays the base's: datasheet numbers, not fitted.
 *
 * Samples: the rows of GEMM tables (a cuBLAS sweep, XLA's matmul table), and
 * the GEMM ops of plan traces run on that GPU (ulyharness), each op's
 * forward product or, for a backward op, its input and weight gradients,
 * the shapes the plan gave them (uly_op.gemm_*), its measured median less
 * the launches the plan prices apart (kernels x gpu.kernel_floor_us) and
 * over its crit_factor, as the schedule prices it. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "calib_cmd.h"
#include "calib_gemm.h"
#include "json_strict.h"
#include "out_file.h"
#include "output.h"
#include "preset.h"
#include "text_quote.h"

static const char *const WHO = "ulysim calibrate";

typedef struct gemm_args {
    const char *out, *base, *name;
    const char **tables, **traces;
    int n_tables, n_traces;
} gemm_args;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ulysim calibrate --gemms TABLE.csv... [--kernels PLAN.trace...] --base GPU -o cluster.json\n"
            "                        [--name NAME]\n"
            "       ulysim calibrate --kernels PLAN.trace... --base GPU -o cluster.json   (a GPU base)\n"
            "Fits the two measured constants of the GEMM-by-shape model (docs/model.md, GEMMs by shape) to\n"
            "measured GEMMs: gpu.gemm_peak_frac, the best achievable fraction of the dense peak, and\n"
            "gpu.gemm_latency_us, the k loop's fill paid once per GEMM; the SM count, tile, peaks and HBM rate\n"
            "stay the base's. Least squares on relative residuals; prints the fit, the base's error beside it\n"
            "and every sample's residual, and writes the base profile with the two numbers replaced.\n"
            "  --gemms T...    GEMM tables (CSV, '#' comments): a header naming m, n, k, a time column (time_s,\n"
            "                  time_ms, time_us or median_ms), optionally batch (default 1) and dtype (default\n"
            "                  bf16); e.g. traces/published/xla_matmul_sm90.csv. Every argument up to the next\n"
            "                  option is a table\n"
            "  --kernels T...  plan traces run on that GPU (ulyharness): their GEMM ops, by the shapes the plan\n"
            "                  gave them (a backward op: its input and weight gradients), less their launches\n"
            "  --base GPU      the profile whose GPU ran them (a preset or file that prices GEMMs by shape:\n"
            "                  gpu.sm_count); required\n"
            "  --name NAME     the profile's name (default: BASE-gemm-fit)\n"
            "  -o FILE         the profile to write (required; also --output FILE)\n"
            "Options take their value as --opt VALUE or --opt=VALUE.\n"
            "Exit: 0 written; 2 bad usage or a bad table or trace; 1 the fit failed.\n");
}

/* 0, or the exit status after a message; *done after --help. */
static int parse_args(int argc, char **argv, gemm_args *a, int *done)
{
    static const char *const OUT[] = {"-o", "--output", "--out", NULL}, *const BASE[] = {"--base", NULL},
                             *const NAME[] = {"--name", NULL};
    /* list: 1 --gemms, 2 --kernels take the arguments up to the next option
     * (at: how many the list had when its option came: it must get one) */
    int list = 0, at = 0;
    for (int i = 1; i <= argc; i++) {
        const char *s = i < argc ? argv[i] : NULL, *v = NULL;
        int r = 0;
        if (list && calib_list_empty(list == 1 ? "--gemms" : "--kernels", list == 1 ? "GEMM table" : "plan trace",
                                     "see ulysim calibrate --gemms --help", s,
                                     list == 1 ? a->n_tables : a->n_traces, at))
            return 2;
        if (!s) break;
        if ((r = sim_opt_help(WHO, s))) {
            if (r < 0) return 2;
            usage(stdout);
            *done = 1;
            return 0;
        } else if ((r = sim_opt_value(WHO, argc, argv, &i, OUT, &a->out, &v)) ||
                   (r = sim_opt_value(WHO, argc, argv, &i, BASE, &a->base, &v)) ||
                   (r = sim_opt_value(WHO, argc, argv, &i, NAME, &a->name, &v))) {
            if (r < 0) return 2;
            list = 0;
        } else if (!strcmp(s, "--gemms") || !strncmp(s, "--gemms=", 8)) {
            list = 1, at = a->n_tables;
            if (s[7] == '=' && s[8]) a->tables[a->n_tables++] = s + 8;
        } else if (!strcmp(s, "--kernels") || !strncmp(s, "--kernels=", 10)) {
            list = 2, at = a->n_traces;
            if (s[9] == '=' && s[10]) a->traces[a->n_traces++] = s + 10;
        } else if (s[0] == '-' && s[1]) {
            sim_err_as(WHO, "unknown option %s with --gemms; see ulysim calibrate --gemms --help", s);
            return 2;
        } else if (list == 1) {
            a->tables[a->n_tables++] = s;
        } else if (list == 2) {
            a->traces[a->n_traces++] = s;
        } else {
            char qb[80];
            sim_err_as(WHO, "%s: a micro-benchmark trace fits a host's links, not a GPU's GEMMs (valid here: "
                       "--gemms TABLE.csv..., --kernels PLAN.trace...; links: ulysim calibrate MICROBENCH.trace... "
                       "without --gemms)", text_quote(s, qb, sizeof qb));
            return 2;
        }
    }
    if (!a->out || !a->base) {
        sim_err_as(WHO, "%s (valid: ulysim calibrate --gemms TABLE.csv... --base GPU -o cluster.json)",
                   !a->out ? "-o FILE is required" : "--base is required: the GPU the GEMMs ran on");
        return 2;
    }
    char why[1200];
    if (a->name && calib_name_check(a->name)) return 2;
    if (sim_files_distinct(a->tables, a->n_tables, why, sizeof why) ||
        sim_files_distinct(a->traces, a->n_traces, why, sizeof why)) {
        sim_err_as(WHO, "%s", why);
        return 2;
    }
    for (int i = 0; i < a->n_tables; i++) out_file_input_note(a->tables[i], NULL); /* -o may not replace them */
    for (int i = 0; i < a->n_traces; i++) out_file_input_note(a->traces[i], NULL);
    if (out_file_check(a->out, OUT_FILE_STREAM, why, sizeof why)) {
        sim_err_as(WHO, "%s", why);
        return 2;
    }
    return 0;
}

/* Room for one more sample. */
static calib_gemm_pt *pt_add(calib_gemm_pt **p, int *n, int *cap)
{
    if (*n == *cap) {
        const int nc = *cap ? 2 * *cap : 256;
        calib_gemm_pt *g = realloc(*p, (size_t)nc * sizeof *g);
        if (!g) return NULL;
        *p = g, *cap = nc;
    }
    return &(*p)[(*n)++];
}

/* The GEMM ops of one plan trace as samples. *skipped: ops with a time no
 * larger than their launches, or no shape. 0, or 1 out of memory. */
static int trace_samples(const trace_run *r, const uly_gpu *g, calib_gemm_pt **p, int *n, int *cap, int *skipped)
{
    const uly_workload *w = &r->workload;
    const double floor_s = g->kernel_floor_s[w->cuda_graphs ? 1 : 0];
    for (int i = 0; i < r->plan.n_ops; i++) {
        const uly_op *o = &r->plan.ops[i];
        if (o->kind != ULY_OP_GEMM) continue;
        const double t = (r->ops[i].t.median - (double)o->kernels * floor_s /* a GEMM op launches o->kernels */) / o->crit_factor;
        if (!(o->gemm_m > 0) || !(t > 0) || !(o->crit_factor > 0)) {
            (*skipped)++;
            continue;
        }
        calib_gemm_pt *q = pt_add(p, n, cap);
        if (!q) return 1;
        memset(q, 0, sizeof *q);
        q->dtype = w->dtype == ULY_FP8 ? (uly_op_fp8(w, o->type) ? ULY_FP8 : ULY_BF16) : w->dtype;
        q->t_s = t;
        calib_gemm_pt_shape(q, o->gemm_batch, o->gemm_m, o->gemm_n, o->gemm_k, o->phase == ULY_PHASE_BWD && !o->recompute);
    }
    return 0;
}

/* Reads every table and trace into samples. 0, or the exit status after a
 * message. */
static int samples_read(const gemm_args *a, const uly_gpu *g, calib_gemm_pt **p, int *n, int *from_tables,
                        int *skipped)
{
    char why[1200];
    int cap = 0;
    for (int f = 0; f < a->n_tables; f++) {
        const int rc = calib_gemm_table_read(a->tables[f], p, n, &cap, why, sizeof why);
        if (rc) {
            if (rc == 2) sim_err_as(WHO, "--gemms %s", why);
            return rc;
        }
    }
    *from_tables = *n;
    for (int f = 0; f < a->n_traces; f++) {
        trace_run r;
        int rc = trace_read(a->traces[f], &r, why, sizeof why);
        if (rc) {
            if (rc == 2) sim_err_as(WHO, "--kernels %s", why);
            return rc;
        }
        if (r.kind != TRACE_PLAN) {
            sim_err_as(WHO, "--kernels %s:1: a micro-benchmark trace; --kernels takes plan traces", a->traces[f]);
            rc = 2;
        } else if (trace_require_passed(&r, "calibration", why, sizeof why)) {
            sim_err_as(WHO, "--kernels %s", why);
            rc = 2;
        } else {
            rc = trace_samples(&r, g, p, n, &cap, skipped);
        }
        trace_free(&r);
        if (rc) return rc;
    }
    return 0;
}

static void print_fit(const gemm_args *a, const uly_cluster *bc, const calib_gemm_pt *p, int n, int from_tables,
                      int skipped, const calib_gemm_result *R)
{
    const uly_gpu *g = &bc->gpu;
    printf("# ulysim calibrate: GEMMs by shape on %s (%s: %d SMs, %.0f TFLOP/s bf16, %dx%d tiles, HBM %.0f GB/s x "
           "%.2f)\n", g->name, bc->name, g->sm_count, g->peak_flops[ULY_BF16] / 1e12, g->gemm_tile_m, g->gemm_tile_n,
           g->hbm_bw_Bps / 1e9, g->mem_eff);
    printf("# samples: %d GEMMs from %d table%s, %d GEMM ops from %d plan trace%s", from_tables, a->n_tables,
           a->n_tables == 1 ? "" : "s", n - from_tables, a->n_traces, a->n_traces == 1 ? "" : "s");
    if (skipped) printf(" (%d left out: no shape, or no time beyond their launches)", skipped);
    printf("\n# fit: least squares on relative residuals over gemm_peak_frac (log grid, then golden section) and\n"
           "#      gemm_latency_us (closed form for each, at least 0)\n");
    printf("# gemm_peak_frac  %.4f   (base %.4f)\n", R->frac, g->gemm_peak_frac);
    printf("# gemm_latency_us %.3f%s   (base %.3f)\n", R->latency_s * 1e6,
           R->latency_at0 ? " (came out negative: held at 0)" : "", g->gemm_latency_s * 1e6);
    if (R->frac <= CALIB_GEMM_FRAC_MIN * 1.001 || R->frac >= CALIB_GEMM_FRAC_MAX * 0.999)
        printf("# WARNING: gemm_peak_frac came out at the end of its range [%g, %g]: the measured GEMMs are not "
               "this GPU's as the model prices it (another GPU, or times that are not the kernels')\n",
               CALIB_GEMM_FRAC_MIN, CALIB_GEMM_FRAC_MAX);
    printf("# |predicted / measured - 1|: fitted median %.1f%%, mean %.1f%%, largest %.1f%%; base median %.1f%%, "
           "mean %.1f%%, largest %.1f%%\n", 100 * R->res_med, 100 * R->res_mean, 100 * R->res_max, 100 * R->base_med,
           100 * R->base_mean, 100 * R->base_max);
    uly_gpu fit = *g;
    fit.gemm_peak_frac = R->frac;
    fit.gemm_latency_s = R->latency_s;
    printf("# %-6s %5s %6s %7s %7s %7s %5s %12s %12s %8s %12s %8s\n", "from", "line", "batch", "m", "n", "k",
           "dtype", "measured_us", "fitted_us", "err_pct", "base_us", "base_pct");
    for (int i = 0; i < n; i++) {
        const double tf = calib_gemm_pred(&p[i], &fit), tb = calib_gemm_pred(&p[i], g);
        const double *s = p[i].shape[0];
        printf("  %-6s %5d %6.0f %7.0f %7.0f %7.0f %5s %12.3f %12.3f %+8.1f %12.3f %+8.1f\n",
               i < from_tables ? "table" : (p[i].n_gemm == 2 ? "op-bwd" : "op"), p[i].line, s[0], s[1], s[2], s[3],
               uly_dtype_name(p[i].dtype), p[i].t_s * 1e6, tf * 1e6, 100 * (tf / p[i].t_s - 1), tb * 1e6,
               100 * (tb / p[i].t_s - 1));
    }
}

/* The base profile with f and L replaced and said where from. */
static int profile_write(const gemm_args *a, const uly_cluster *bc, int n, const calib_gemm_result *R)
{
    cJSON *root = calib_profile_base(a->base);
    if (!root) return 2;
    char date[32], nm[ULY_NAME_LEN], files[1024] = "", buf[2048];
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(date, sizeof date, "%Y-%m-%d", &tmv);
    if (a->name) snprintf(nm, sizeof nm, "%s", a->name);
    else snprintf(nm, sizeof nm, "%.38s-gemm-fit", bc->name);
    size_t o = 0;
    for (int i = 0; i < a->n_tables + a->n_traces && o + 1 < sizeof files; i++) {
        const char *f = i < a->n_tables ? a->tables[i] : a->traces[i - a->n_tables];
        const int w = snprintf(files + o, sizeof files - o, "%s%s", i ? ", " : "", calib_base_name(f));
        if (w < 0) break;
        o += (size_t)w;
    }
    calib_profile_set(root, "name", cJSON_CreateString(nm));
    snprintf(buf, sizeof buf, "%s with its GEMM constants fitted to measured GEMMs by ulysim calibrate (%s)", bc->name,
             date);
    calib_profile_set(root, "description", cJSON_CreateString(buf));
    cJSON *gpu = cJSON_GetObjectItemCaseSensitive(root, "gpu");
    if (!cJSON_IsObject(gpu)) {
        cJSON_Delete(root);
        sim_err_as(WHO, "the base profile %s has no gpu object", a->base);
        return 2;
    }
    calib_profile_set(gpu, "gemm_peak_frac", cJSON_CreateNumber(round(R->frac * 1e4) / 1e4));
    calib_profile_set(gpu, "gemm_latency_us", cJSON_CreateNumber(round(R->latency_s * 1e6 * 1e3) / 1e3));
    snprintf(buf, sizeof buf, "ulysim calibrate %s: least squares on relative residuals of the GEMM-by-shape model "
             "(uly_gemm_time_s) over %d measured GEMMs of %s: f %.4f (the base's %.4f), |error| median %.1f%% "
             "(the base's %.1f%%), largest %.1f%%", date, n, files, R->frac, bc->gpu.gemm_peak_frac,
             100 * R->res_med, 100 * R->base_med, 100 * R->res_max);
    calib_profile_source(root, "gpu.gemm_peak_frac", buf);
    snprintf(buf, sizeof buf, "ulysim calibrate %s: the same fit, %.3f us%s (the base's %.3f)", date,
             R->latency_s * 1e6, R->latency_at0 ? " (negative: held at 0)" : "", bc->gpu.gemm_latency_s * 1e6);
    calib_profile_source(root, "gpu.gemm_latency_us", buf);
    uly_cluster chk;
    const int rc = calib_profile_emit(root, a->out, &chk);
    cJSON_Delete(root);
    if (!rc)
        printf("# wrote %s (cluster \"%s\": gemm_peak_frac %.4f, gemm_latency_us %.3f)\n", a->out, nm,
               chk.gpu.gemm_peak_frac, chk.gpu.gemm_latency_s * 1e6);
    return rc;
}

int sim_calib_gemms(int argc, char **argv)
{
    gemm_args a = {0};
    calib_gemm_pt *p = NULL;
    int n = 0, from_tables = 0, skipped = 0, done = 0, rc;
    a.tables = calloc((size_t)argc + 1, sizeof(char *));
    a.traces = calloc((size_t)argc + 1, sizeof(char *));
    if (!a.tables || !a.traces) {
        rc = 1;
        goto out;
    }
    if ((rc = parse_args(argc, argv, &a, &done)) || done) goto out;
    uly_cluster bc;
    char why[1024];
    if (preset_cluster_load(a.base, &bc, why, sizeof why)) {
        sim_err_as(WHO, "--base %s", why);
        rc = 2;
        goto out;
    }
    if (bc.gpu.sm_count <= 0) {
        sim_err_as(WHO, "--base %s: its GPU (%s) does not price GEMMs by shape (no gpu.sm_count), so there is no "
                   "gemm_peak_frac or gemm_latency_us to fit (valid: a GPU preset such as dgx-h100, or a profile "
                   "with gpu.sm_count)", a.base, bc.gpu.name);
        rc = 2;
        goto out;
    }
    if ((rc = samples_read(&a, &bc.gpu, &p, &n, &from_tables, &skipped))) goto out;
    calib_gemm_result R;
    const int fr = calib_gemm_fit(p, n, &bc.gpu, &R);
    if (fr == -2) {
        sim_err_as(WHO, "%d measured GEMM%s cannot determine the 2 constants with a residual to judge them "
                   "(valid: 3 or more GEMMs, best small to large)", n, n == 1 ? "" : "s");
        rc = 2;
        goto out;
    }
    if (fr) {
        sim_err_as(WHO, "the fit failed (%d GEMMs)", n);
        rc = 1;
        goto out;
    }
    print_fit(&a, &bc, p, n, from_tables, skipped, &R);
    rc = profile_write(&a, &bc, n, &R);
out:
    free(p);
    free(a.tables);
    free(a.traces);
    return rc;
}
