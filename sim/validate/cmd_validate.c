/* cmd_validate.c: `ulysim validate RUN.trace...`: prediction against
 * measurement for ulyharness plan traces.
 *
 * For each run: the plan is rebuilt from the header (trace_read.c), priced
 * by uly_plan_price on a cluster profile (the one embedded in the trace, or
 * --cluster, e.g. a profile written by `ulysim calibrate`), and joined with
 * the measured op lines on op id (trace_join.c). Reported per op and per
 * run: bytes planned against bytes measured (must be equal), time predicted
 * against measured (relative error), the exposed communication and the
 * overlap of ring transfers; then a summary over the runs: median and
 * maximum absolute step-time error, worst ops, and whether the model ranks
 * the strategies the way the measurement does at each size.
 *
 * The step compared is one layer of one micro-batch, forward and backward,
 * as the harness executed it (see trace_join.h). validate_report.c writes
 * the result. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "preset.h"
#include "trace_torch.h"
#include "validate_report.h"
#include "validate_runs.h"

int sim_cmd_validate(int argc, char **argv);

#define VALIDATE_DEFAULT_MAX_ERR 0.20 /* median |step err| when no limit is given */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ulysim validate RUN.trace... [--cluster NAME|FILE]... [--max-error F] [--max-run-error F]\n"
            "                       [--min-agreement F] [--format table|json] [--brief]\n"
            "       ulysim validate --runs FILE [--format table|csv|json] [--max-error F] [--max-run-error F]\n"
            "       ulysim validate --torch-trace FILE.json [plan flags: --model, --cluster, --gpus, --seq, ...]\n"
            "Prediction against measurement, for three kinds of measured run (one kind at a time):\n"
            "  RUN.trace           ulyharness plan traces (traces/FORMAT.md): bytes, per-op and step times,\n"
            "                      overlap, ranking; the options below\n"
            "  --runs FILE         a runs file (docs/runs.md: CSV or JSON Lines, one measured run per row, its\n"
            "                      configuration as plan's flags): each row priced as `ulysim plan` prices it,\n"
            "                      beside its step_s, tokens_per_s, tflops_per_gpu, mem_gib and oom; no limit by\n"
            "                      default: --max-error F (each quantity's median) and --max-run-error F (any row)\n"
            "                      exit 1 when exceeded\n"
            "                      (ulysim validate --runs FILE --help for more)\n"
            "  --torch-trace FILE  a torch.profiler Chrome trace (traceEvents): GPU kernel time per category\n"
            "                      (NCCL collectives, attention forward and backward, GEMM, the rest) per step\n"
            "                      against the plan of the same flags (docs/torch-traces.md); shown, no limit\n"
            "Options for ulyharness traces:\n"
            "  --cluster P       price on profile P (a preset name or a JSON file, e.g. from `ulysim calibrate`)\n"
            "                    instead of the one embedded in each trace; repeatable: then each run uses the\n"
            "                    profile whose gpus_per_node equals its rank count (profiles per rank count,\n"
            "                    for ranks that share the host's cores)\n"
            "Limits, in every mode, are fractions of the measured value (0.2 = 20%%), or percent with its sign\n"
            "(20%%).\n"
            "  --max-error F     fail (exit 1) when the median absolute step-time error over the runs exceeds F\n"
            "                    [default 0.2 when neither this nor --max-run-error is given; none: no limit on\n"
            "                    the times, bytes only]\n"
            "  --max-run-error F fail when any run's absolute step-time error exceeds F (none: no limit)\n"
            "                    [default: none]\n"
            "  --min-agreement F fail when fewer than this fraction of strategy pairs at the same size are\n"
            "                    ranked (faster/slower) by the model as by the measurement [default: none];\n"
            "                    a pair whose steps tie (predicted or measured) orders nothing: not ranked\n"
            "  --format table|json   (default table)   --brief: no per-op lines in the table\n"
            "Options take their value as --opt VALUE or --opt=VALUE, each once (--cluster: once per profile).\n"
            "The step is one layer of one micro-batch, forward and backward, as the harness executed it: the\n"
            "sum of the per-layer ops' times (ring transfers: the exposed wait after the attention compute).\n"
            "Exit: 0 bytes equal and errors within the limits; 1 bytes differ or a limit is exceeded;\n"
            "2 bad usage or a bad trace (a one-line reason naming the file and line), a trace whose summary says\n"
            "the run failed its checks (FILE.failed: a wrong run's times are no evidence) included.\n");
}

int val_limit_parse(const char *flag, const char *v, double hi, double *out)
{
    char qb[80], *end = NULL;
    double x = sim_strtod_dec(v, &end);
    const int pct = *v && end && end[0] == '%' && !end[1]; /* 20% = 0.2: the other form, converted */
    if (pct) x /= 100;
    if (!*v || !end || (*end && !pct) || !(x >= 0 && x <= hi)) {
        if (hi > 1)
            sim_err_as("ulysim validate", "%s %s: must be a fraction in 0..%g (0.2 = 20%%; or percent with its sign: "
                       "20%%), or none (no limit)", flag, text_quote(v, qb, sizeof qb), hi);
        else
            sim_err_as("ulysim validate", "%s %s: must be a fraction in 0..1 (0.8 = 80%% of the pairs; or percent "
                       "with its sign: 80%%)", flag, text_quote(v, qb, sizeof qb));
        return 2;
    }
    *out = x;
    return 0;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    if (n <= 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_dbl);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A flag of the plan command that takes no value (--causal, --help): what
 * the plan parser reads alone, next to --help (which ends its checks). */
static int plan_switch(const char *a)
{
    sim_args pa;
    char why[256];
    char *v[] = {"ulysim", (char *)a, "--help", NULL};
    return sim_args_parse(3, v, &pa, why, sizeof why) == 0;
}

/* validate --torch-trace takes the plan command's flags (trace_torch.c): an
 * argument that is neither one of them, a value of one, nor the plan
 * command's name is a harness trace given with --torch-trace, refused as
 * that (the plan parser would call it an unknown command). An option the
 * plan parser does not know ends the look: that parser names it. 0, or 2
 * after the message. */
static int torch_stray(int argc, char **argv)
{
    for (int i = 1, first = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--torch-trace")) {
            i++;
            continue;
        }
        if (a[0] == '-' && a[1]) {
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)strcspn(a, "="), a);
            if (sim_args_takes_value(name)) {
                if (strchr(a, '=')) continue;
                if (i + 1 < argc && argv[i + 1][0] == '-') return 0; /* the value left out: the parser says so */
                i++;
                continue;
            }
            if (!strncmp(a, "--torch-trace=", 14) || plan_switch(a)) continue;
            return 0;
        }
        if (first && !strcmp(a, sim_cmd_name(SIM_CMD_PLAN))) { /* `plan`: its flags follow */
            first = 0;
            continue;
        }
        for (int c = SIM_CMD_PLAN; c <= SIM_CMD_PRESETS; c++)
            if (!strcmp(a, sim_cmd_name((sim_cmd)c))) return 0; /* a command: the parser or the torch path names it */
        char qb[80];
        sim_err_as("ulysim validate", "%s: a harness trace and --torch-trace cannot be combined (valid: ulysim "
                   "validate RUN.trace... for ulyharness traces, or ulysim validate --torch-trace FILE.json with plan "
                   "flags; see ulysim validate --help)", text_quote(a, qb, sizeof qb));
        return 2;
    }
    return 0;
}

/* Reads the options of harness-trace validation into o (o->files
 * allocated): 0, -1 when --help was printed, or 2 after the message. */
static int opts_parse(int argc, char **argv, val_opts *o)
{
    static const char *const WHO = "ulysim validate";
    /* each limit: its option, where it goes, the largest value, its value as typed */
    static const char *const LIMIT[3][2] = {
        {"--max-error", NULL}, {"--max-run-error", NULL}, {"--min-agreement", NULL}};
    static const char *const CLUSTER[] = {"--cluster", NULL}, *const FORMAT[] = {"--format", NULL};
    double *const limit_dst[3] = {&o->max_err, &o->max_run_err, &o->min_agree};
    const double limit_hi[3] = {100, 100, 1};
    const char *limit_seen[3] = {NULL, NULL, NULL}, *format_seen = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int lim = -1, r = 0; /* r < 0: an option misused, the message is out */
        for (int k = 0; k < 3 && !r; k++)
            if ((r = sim_opt_value(WHO, argc, argv, &i, LIMIT[k], &limit_seen[k], &v)) > 0) lim = k;
        if (r < 0) return 2;
        if (lim >= 0) {
            if (!strcmp(v, "none") && lim != 2) *limit_dst[lim] = INFINITY; /* no limit on the times, on purpose: bytes only */
            else if (val_limit_parse(LIMIT[lim][0], v, limit_hi[lim], limit_dst[lim])) return 2;
        } else if ((r = sim_opt_help(WHO, a))) {
            if (r < 0) return 2;
            usage(stdout);
            return -1;
        } else if ((r = sim_opt_value(WHO, argc, argv, &i, CLUSTER, NULL, &v))) { /* repeatable: a profile each */
            if (r < 0) return 2;
            if (o->n_prof == VAL_MAX_PROFILES) {
                sim_err_as(WHO, "at most %d --cluster profiles", VAL_MAX_PROFILES);
                return 2;
            }
            o->profiles[o->n_prof++] = v;
        } else if ((r = sim_opt_value(WHO, argc, argv, &i, FORMAT, &format_seen, &v))) {
            char qb[80];
            if (r < 0) return 2;
            if (strcmp(v, "json") && strcmp(v, "table")) {
                sim_err_as(WHO, "--format %s: must be table or json", text_quote(v, qb, sizeof qb));
                return 2;
            }
            o->json = !strcmp(v, "json");
        } else if ((r = sim_opt_switch(WHO, a, "--brief"))) {
            if (r < 0) return 2;
            o->brief = 1;
        } else if (a[0] == '-' && a[1]) {
            sim_err_as(WHO, "unknown option %s; see ulysim validate --help", a);
            return 2;
        } else {
            o->files[o->n_files++] = a;
        }
    }
    if (o->n_files == 0) {
        sim_err_as(WHO, "no trace given; usage: ulysim validate RUN.trace... (see --help)");
        return 2;
    }
    return 0;
}

/* The profiles, loaded once to learn their gpus_per_node (one profile per
 * rank count), and the traces checked distinct: 0, or 2 after the message. */
static int profiles_load(const val_opts *o, uly_cluster *prof)
{
    char why[1024];
    for (int k = 0; k < o->n_prof; k++) {
        if (preset_cluster_load(o->profiles[k], &prof[k], why, sizeof why)) {
            sim_err_as("ulysim validate", "--cluster %s", why);
            return 2;
        }
        for (int q = 0; q < k && o->n_prof > 1; q++)
            if (prof[q].gpus_per_node == prof[k].gpus_per_node) {
                sim_err_as("ulysim validate", "--cluster %s and %s both have gpus_per_node %lld: with several "
                           "profiles, each must be for a different rank count",
                           o->profiles[q], o->profiles[k], (long long)prof[k].gpus_per_node);
                return 2;
            }
    }
    /* one run given twice (by any name) would count twice in the medians */
    if (sim_files_distinct(o->files, o->n_files, why, sizeof why)) {
        sim_err_as("ulysim validate", "%s", why);
        return 2;
    }
    return 0;
}

/* Without --cluster, a CPU run is priced on the host profile of its host
 * (CPU model, cores, ranks: validate_host.c) where `ulysim calibrate --host`
 * wrote one: s->used_prof[f] its path (allocated), prof_kind VAL_PROF_HOST.
 * 0, or 1 when out of memory. */
static int host_profile_take(const trace_run *run, val_set *s, int f)
{
    char path[4096];
    if (!val_host_profile_find(run, path, sizeof path)) return 0;
    char *own = strdup(path);
    if (!own) return 1;
    s->used_prof[f] = own;
    s->prof_kind[f] = VAL_PROF_HOST;
    return 0;
}

/* The warnings about a run's profile, on stderr (the report's "# host:" line
 * says the same per run): priced with rates of another host, or of another
 * OpenBLAS kernel set; a CPU run (the harness's MPI backend) priced on the
 * profile its trace embeds, for want of a host profile. Each said once, not
 * once per run of a set. */
static void host_warn(const trace_run *run, const val_set *s, int f)
{
    static char said[3][10240];
    char msg[10240] = "", hr[192], hp[192], path[4096], fix[4200];
    const val_host *h = &s->prof_host[f];
    const int kind = s->prof_kind[f];
    const char *prof = kind == VAL_PROF_EMBEDDED ? "the profile the trace embeds" : s->used_prof[f];
    val_host_describe(run->cpu_model, run->cores_online, hr, sizeof hr);
    val_host_describe(h->cpu_model, h->cores, hp, sizeof hp);
    val_host_profile_find(run, path, sizeof path);
    if (!path[0]) snprintf(path, sizeof path, "%s", "(no configuration directory: set ULYSIM_CONFIG_DIR)");
    if (kind == VAL_PROF_GIVEN)
        snprintf(fix, sizeof fix, "ulysim calibrate --host, run on the trace's host, writes a profile validate uses "
                 "without --cluster");
    else
        snprintf(fix, sizeof fix, "no profile of its host at %s: ulysim calibrate --host, run there, writes one", path);
    const int m = val_host_matches(run, h);
    if (m == 0)
        snprintf(msg, sizeof msg, "warning: %s ran on %s; %s was measured on %s: its rates are not this host's (%s)",
                 run->path, hr, prof, hp, fix);
    else if (m == 1 && h->blas_core[0] && run->blas_core[0] && strcmp(h->blas_core, run->blas_core))
        snprintf(msg, sizeof msg, "warning: %s ran OpenBLAS's %s kernels; %s was measured with %s (set "
                 "OPENBLAS_CORETYPE=%s for the harness, as ulysim calibrate --host said)", run->path,
                 run->blas_core, prof, h->blas_core, h->blas_core);
    else if (kind == VAL_PROF_EMBEDDED && strcmp(run->backend, "nccl"))
        snprintf(msg, sizeof msg, "warning: %s ran on %s with %d ranks, priced on the profile the trace embeds "
                 "(%s, %s: not rates measured for this run; %s)", run->path, hr, run->ranks, run->cluster.name,
                 m < 0 ? "which records no host" : "measured on this CPU with other ranks or settings", fix);
    if (!msg[0]) return;
    /* the same words for every run of a set but the file's name: compare without it */
    const char *key = msg + strlen("warning: ") + strlen(run->path);
    for (int i = 0; i < 3; i++)
        if (!strcmp(said[i], key)) return;
    memmove(said[1], said[0], sizeof said[0] * 2);
    snprintf(said[0], sizeof said[0], "%s", key);
    sim_err_as("ulysim validate", "%s", msg);
}

/* Trace f read, checked to be a passed plan run, and joined with its
 * prediction on its profile: 0, or 1 / 2 after the message. */
static int run_load(const val_opts *o, const uly_cluster *prof, val_set *s, int f)
{
    char why[1024];
    const char *file = o->files[f];
    trace_run *run = &s->runs[f];
    int r = trace_read(file, run, why, sizeof why);
    if (r) {
        if (r == 2) sim_err_as("ulysim validate", "%s", why);
        else sim_err_as("ulysim validate", "%s: out of memory", file);
        return r;
    }
    if (run->kind != TRACE_PLAN) {
        sim_err_as("ulysim validate", "%s:1: a microbench trace; validate reads plan traces (use it with "
                   "ulysim calibrate)", file);
        return 2;
    }
    /* a FILE.failed: the times of a run whose result or bytes were wrong
     * are not a measurement of the plan (trace check reports it too) */
    if (trace_require_passed(run, "validation", why, sizeof why)) {
        sim_err_as("ulysim validate", "%s", why);
        return 2;
    }
    const char *p = o->n_prof == 1 ? o->profiles[0] : NULL;
    for (int k = 0; k < o->n_prof && o->n_prof > 1; k++)
        if (prof[k].gpus_per_node == run->ranks) p = o->profiles[k];
    if (o->n_prof > 1 && !p) {
        sim_err_as("ulysim validate", "%s: %d ranks, and no --cluster profile has gpus_per_node %d", file,
                   run->ranks, run->ranks);
        return 2;
    }
    s->prof_kind[f] = p ? VAL_PROF_GIVEN : VAL_PROF_EMBEDDED;
    if (!p && host_profile_take(run, s, f)) return 1;
    if (!p && s->prof_kind[f] == VAL_PROF_HOST) p = s->used_prof[f];
    if (!p) s->used_prof[f] = "embedded";
    else if (s->prof_kind[f] == VAL_PROF_GIVEN) s->used_prof[f] = p;
    val_profile_host(p, run->cluster_text, &s->prof_host[f]);
    host_warn(run, s, f);
    uly_cluster c;
    if (trace_cluster_for(run, p, &c, why, sizeof why) || trace_join_build(run, &c, &s->joins[f], why, sizeof why)) {
        sim_err_as("ulysim validate", "%s", why);
        return 2;
    }
    return 0;
}

/* The step and per-op errors over the runs: medians and maxima. 0, or 1
 * when out of memory. */
static int errors_sum_up(val_set *s)
{
    double *step_abs = calloc((size_t)s->n + 1, sizeof *step_abs);
    double *op_abs = calloc((size_t)s->n * ULY_PLAN_MAX_OPS + 1, sizeof *op_abs);
    int n_op_abs = 0;
    if (!step_abs || !op_abs) {
        free(step_abs);
        free(op_abs);
        return 1;
    }
    for (int f = 0; f < s->n; f++) {
        const trace_join *j = &s->joins[f];
        s->n_bytes_bad += j->n_bytes_bad;
        s->n_ops_total += j->n;
        step_abs[f] = fabs(j->step_err);
        if (step_abs[f] > s->max_step || f == 0) {
            s->max_step = step_abs[f];
            s->worst_run = f;
        }
        for (int k = 0; k < j->n; k++)
            if (j->ops[k].layer && isfinite(j->ops[k].err)) op_abs[n_op_abs++] = fabs(j->ops[k].err);
    }
    for (int k = 0; k < n_op_abs; k++) s->max_op = op_abs[k] > s->max_op ? op_abs[k] : s->max_op;
    s->med_step = median(step_abs, s->n);
    s->med_op = median(op_abs, n_op_abs);
    free(step_abs);
    free(op_abs);
    return 0;
}

/* The worst ops: the largest |predicted - measured| seconds among per-layer ops. */
static void worst_ops(val_set *s)
{
    for (int f = 0; f < s->n; f++)
        for (int k = 0; k < s->joins[f].n; k++) {
            const trace_jop *x = &s->joins[f].ops[k];
            /* an op without an error (measured 0 s, or a hidden transfer
             * too small to judge: '-' in its row) is not ranked worst at +0% */
            if (!x->layer || !isfinite(x->err)) continue;
            double d = fabs(x->pred_s - x->meas_s);
            int pos = s->n_worst < VAL_N_WORST ? s->n_worst++ : VAL_N_WORST;
            if (pos == VAL_N_WORST) {
                if (d <= s->worst[VAL_N_WORST - 1].d) continue;
                pos = VAL_N_WORST - 1;
            }
            while (pos > 0 && s->worst[pos - 1].d < d) {
                s->worst[pos] = s->worst[pos - 1];
                pos--;
            }
            s->worst[pos].f = f;
            s->worst[pos].k = k;
            s->worst[pos].d = d;
        }
}

/* The verdict: without a limit given, the validation target holds (median
 * |step err| <= 20%), so a run far off never reads as a pass. */
static void verdict(val_opts *o, val_set *s)
{
    s->default_limit = isnan(o->max_err) && isnan(o->max_run_err);
    if (s->default_limit) o->max_err = VALIDATE_DEFAULT_MAX_ERR;
    const int n_pairs = s->ranking.n_pairs;
    s->fail_bytes = s->n_bytes_bad > 0;
    s->fail_med = !isnan(o->max_err) && !(s->med_step <= o->max_err);
    s->fail_run = !isnan(o->max_run_err) && !(s->max_step <= o->max_run_err);
    s->fail_agree = !isnan(o->min_agree) && !(n_pairs > 0 && s->agree >= o->min_agree);
    s->ok = !s->fail_bytes && !s->fail_med && !s->fail_run && !s->fail_agree;
}

/* Reads, prices and sums up every run of o into s: 0, or 1 / 2 after the
 * message. */
static int runs_validate(val_opts *o, val_set *s)
{
    uly_cluster prof[VAL_MAX_PROFILES];
    int rc = profiles_load(o, prof);
    if (rc) return rc;
    s->runs = calloc((size_t)o->n_files, sizeof *s->runs);
    s->joins = calloc((size_t)o->n_files, sizeof *s->joins);
    s->used_prof = calloc((size_t)o->n_files, sizeof *s->used_prof);
    s->prof_kind = calloc((size_t)o->n_files, sizeof *s->prof_kind);
    s->prof_host = calloc((size_t)o->n_files, sizeof *s->prof_host);
    if (!s->runs || !s->joins || !s->used_prof || !s->prof_kind || !s->prof_host) return 1;
    s->n = o->n_files; /* every trace is freed, read or not */
    for (int f = 0; f < s->n; f++)
        if ((rc = run_load(o, prof, s, f)) != 0) return rc;
    if (errors_sum_up(s)) return 1;
    worst_ops(s);
    /* ranking: pairs of runs at the same size with different layouts (validate_rank.c) */
    if (sim_rank_runs(s->runs, s->joins, s->n, &s->ranking)) return 1;
    s->agree = s->ranking.n_pairs ? (double)s->ranking.n_agree / s->ranking.n_pairs : NAN;
    verdict(o, s);
    return 0;
}

static void val_set_free(val_set *s)
{
    sim_ranking_free(&s->ranking);
    for (int f = 0; s->runs && f < s->n; f++) trace_free(&s->runs[f]);
    free(s->runs);
    free(s->joins);
    for (int f = 0; s->used_prof && s->prof_kind && f < s->n; f++)
        if (s->prof_kind[f] == VAL_PROF_HOST) free((char *)s->used_prof[f]);
    free(s->used_prof);
    free(s->prof_kind);
    free(s->prof_host);
}

/* ulyharness plan traces: validated, written, and the exit status. */
static int validate_traces(int argc, char **argv)
{
    val_opts o = {.max_err = NAN, .max_run_err = NAN, .min_agree = NAN};
    val_set s;
    memset(&s, 0, sizeof s);
    o.files = calloc((size_t)argc + 1, sizeof *o.files);
    if (!o.files) return 1;
    int rc = opts_parse(argc, argv, &o);
    if (rc == 0) rc = runs_validate(&o, &s);
    if (rc == 0) {
        rc = o.json ? val_write_json(&o, &s) : val_write_table(&o, &s);
        if (s.fail_bytes)
            sim_err_as("ulysim validate", "%d op%s sent a different number of bytes than planned", s.n_bytes_bad,
                       s.n_bytes_bad == 1 ? "" : "s");
        if (!s.ok && rc == 0) rc = 1;
    }
    val_set_free(&s);
    free(o.files);
    return rc < 0 ? 0 : rc;
}

int sim_cmd_validate(int argc, char **argv)
{
    /* three modes, one at a time: harness traces, --runs FILE, --torch-trace FILE */
    int torch = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--torch-trace") || !strncmp(argv[i], "--torch-trace=", 14)) torch = 1;
    if (torch && sim_validate_is_runs(argc, argv)) {
        sim_err_as("ulysim validate", "--runs and --torch-trace cannot be combined: one kind of measured run at a "
                   "time (valid: ulysim validate RUN.trace..., ulysim validate --runs FILE, or ulysim validate "
                   "--torch-trace FILE.json; see ulysim validate --help)");
        return 2;
    }
    if (torch) /* a torch.profiler trace: trace_torch.c */
        return torch_stray(argc, argv) ? 2 : sim_validate_torch(argc, argv);
    if (sim_validate_is_runs(argc, argv)) /* measured runs of a runs file: validate_runs_out.c */
        return sim_validate_runs(argc, argv);
    return validate_traces(argc, argv);
}
