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
 * as the harness executed it (see trace_join.h). */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "preset.h"
#include "trace_join.h"
#include "trace_torch.h"
#include "trace_read.h"
#include "validate_rank.h"
#include "validate_runs.h"

int sim_cmd_validate(int argc, char **argv);

#define MAX_PROFILES 16
#define VALIDATE_DEFAULT_MAX_ERR 0.20 /* median |step err| when no limit is given */

static const char *STEP_DEF =
    "step = one layer of one micro-batch, forward and backward, as the harness executed it: the sum over the "
    "per-layer ops (not per-model, not per-step) of each op's time (the median rank's, or the slowest rank's "
    "where the plan gives the ranks different work: a contiguous causal split); the harness runs every op after a "
    "barrier "
    "(or, --sync pass, the ops back to back after one barrier per pass), "
    "ring K/V transfers inside the attention op they overlap (their line times the exposed wait, the attention "
    "line the rest) and ZeRO prefetches blocking; the prediction sums uly_plan_price's op_time_s the same way, "
    "with op_exposed_s for the overlapped ring transfers";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ulysim validate RUN.trace... [--cluster NAME|FILE]... [--max-error F] [--max-run-error F]\n"
            "                       [--min-agreement F] [--format table|json] [--brief]\n"
            "       ulysim validate --runs FILE [--format table|csv|json] [--max-median-err PCT] [--max-err PCT]\n"
            "       ulysim validate --torch-trace FILE.json [plan flags: --model, --cluster, --gpus, --seq, ...]\n"
            "Prediction against measurement, for three kinds of measured run (one kind at a time):\n"
            "  RUN.trace           ulyharness plan traces (traces/FORMAT.md): bytes, per-op and step times,\n"
            "                      overlap, ranking; the options below\n"
            "  --runs FILE         a runs file (docs/runs.md: CSV or JSON Lines, one measured run per row, its\n"
            "                      configuration as plan's flags): each row priced as `ulysim plan` prices it,\n"
            "                      beside its step_s, tokens_per_s, tflops_per_gpu, mem_gib and oom; no limit by\n"
            "                      default: --max-median-err PCT and --max-err PCT (percent) exit 1 when exceeded\n"
            "                      (ulysim validate --runs FILE --help for more)\n"
            "  --torch-trace FILE  a torch.profiler Chrome trace (traceEvents): GPU kernel time per category\n"
            "                      (NCCL collectives, attention forward and backward, GEMM, the rest) per step\n"
            "                      against the plan of the same flags (docs/torch-traces.md); shown, no limit\n"
            "Options for ulyharness traces:\n"
            "  --cluster P       price on profile P (a preset name or a JSON file, e.g. from `ulysim calibrate`)\n"
            "                    instead of the one embedded in each trace; repeatable: then each run uses the\n"
            "                    profile whose gpus_per_node equals its rank count (profiles per rank count,\n"
            "                    for ranks that share the host's cores)\n"
            "  --max-error F     fail (exit 1) when the median absolute step-time error over the runs exceeds F\n"
            "                    (a fraction: 0.2 = 20%%) [default 0.2 when neither this nor --max-run-error is\n"
            "                    given; none: no limit on the times, bytes only]\n"
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

/* A limit: an error (a fraction of the measured time, 0.2 = 20%, in
 * 0..100) or an agreement (a fraction of the pairs: 0..1, above 1 no run
 * could pass). Decimal only (sim_strtod_dec): strtod would read 0x10 as 16,
 * 1600%, where sizes refuse hex. */
static int parse_frac(const char *flag, const char *v, double hi, double *out)
{
    char qb[80], *end = NULL;
    const double x = sim_strtod_dec(v, &end);
    if (!*v || *end || !(x >= 0 && x <= hi)) {
        if (hi > 1)
            sim_err_as("ulysim validate", "%s %s: must be a fraction in 0..%g (0.2 = 20%%), or none (no limit)", flag,
                       text_quote(v, qb, sizeof qb), hi);
        else
            sim_err_as("ulysim validate", "%s %s: must be a fraction in 0..1 (0.8 = 80%% of the pairs)", flag,
                       text_quote(v, qb, sizeof qb));
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
    const char *profiles[MAX_PROFILES];
    int n_prof = 0;
    double max_err = NAN, max_run_err = NAN, min_agree = NAN;
    int json = 0, brief = 0;
    static const char *const WHO = "ulysim validate";
    /* each limit: its option, where it goes, the largest value, its value as typed */
    static const char *const LIMIT[3][2] = {
        {"--max-error", NULL}, {"--max-run-error", NULL}, {"--min-agreement", NULL}};
    static const char *const CLUSTER[] = {"--cluster", NULL}, *const FORMAT[] = {"--format", NULL};
    double *const limit_dst[3] = {&max_err, &max_run_err, &min_agree};
    const double limit_hi[3] = {100, 100, 1};
    const char *limit_seen[3] = {NULL, NULL, NULL}, *format_seen = NULL;
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    int n_files = 0;
    if (!files) return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int lim = -1, r = 0; /* r < 0: an option misused, the message is out */
        for (int k = 0; k < 3 && !r; k++)
            if ((r = sim_opt_value(WHO, argc, argv, &i, LIMIT[k], &limit_seen[k], &v)) > 0) lim = k;
        if (r < 0) goto bad;
        if (lim >= 0) {
            if (!strcmp(v, "none") && lim != 2) {
                *limit_dst[lim] = INFINITY; /* no limit on the times, on purpose: bytes only */
            } else if (parse_frac(LIMIT[lim][0], v, limit_hi[lim], limit_dst[lim])) {
                goto bad;
            }
        } else if ((r = sim_opt_help(WHO, a))) {
            if (r < 0) goto bad;
            usage(stdout);
            free(files);
            return 0;
        } else if ((r = sim_opt_value(WHO, argc, argv, &i, CLUSTER, NULL, &v))) { /* repeatable: a profile each */
            if (r < 0) goto bad;
            if (n_prof == MAX_PROFILES) {
                sim_err_as(WHO, "at most %d --cluster profiles", MAX_PROFILES);
                goto bad;
            }
            profiles[n_prof++] = v;
        } else if ((r = sim_opt_value(WHO, argc, argv, &i, FORMAT, &format_seen, &v))) {
            if (r < 0) goto bad;
            if (!strcmp(v, "json")) json = 1;
            else if (!strcmp(v, "table")) json = 0;
            else {
                char qb[80];
                sim_err_as(WHO, "--format %s: must be table or json", text_quote(v, qb, sizeof qb));
                goto bad;
            }
        } else if ((r = sim_opt_switch(WHO, a, "--brief"))) {
            if (r < 0) goto bad;
            brief = 1;
        } else if (a[0] == '-' && a[1]) {
            sim_err_as(WHO, "unknown option %s; see ulysim validate --help", a);
            goto bad;
        } else {
            files[n_files++] = a;
        }
        continue;
    bad:
        free(files);
        return 2;
    }
    if (n_files == 0) {
        sim_err_as("ulysim validate", "no trace given; usage: ulysim validate RUN.trace... (see --help)");
        free(files);
        return 2;
    }

    /* profiles: loaded once to learn their gpus_per_node */
    uly_cluster prof[MAX_PROFILES];
    char why[1024];
    for (int k = 0; k < n_prof; k++) {
        if (preset_cluster_load(profiles[k], &prof[k], why, sizeof why)) {
            sim_err_as("ulysim validate", "--cluster %s", why);
            free(files);
            return 2;
        }
        for (int q = 0; q < k && n_prof > 1; q++)
            if (prof[q].gpus_per_node == prof[k].gpus_per_node) {
                sim_err_as("ulysim validate", "--cluster %s and %s both have gpus_per_node %lld: with several "
                           "profiles, each must be for a different rank count",
                           profiles[q], profiles[k], (long long)prof[k].gpus_per_node);
                free(files);
                return 2;
            }
    }

    /* one run given twice (by any name) would count twice in the medians */
    if (sim_files_distinct(files, n_files, why, sizeof why)) {
        sim_err_as("ulysim validate", "%s", why);
        free(files);
        return 2;
    }

    trace_run *runs = calloc((size_t)n_files, sizeof *runs);
    trace_join *joins = calloc((size_t)n_files, sizeof *joins);
    const char **used_prof = calloc((size_t)n_files, sizeof *used_prof);
    int rc = 0;
    if (!runs || !joins || !used_prof) {
        rc = 1;
        goto done;
    }
    for (int f = 0; f < n_files; f++) {
        int r = trace_read(files[f], &runs[f], why, sizeof why);
        if (r) {
            if (r == 2) sim_err_as("ulysim validate", "%s", why);
            else sim_err_as("ulysim validate", "%s: out of memory", files[f]);
            rc = r;
            goto done;
        }
        if (runs[f].kind != TRACE_PLAN) {
            sim_err_as("ulysim validate", "%s:1: a microbench trace; validate reads plan traces (use it with "
                       "ulysim calibrate)", files[f]);
            rc = 2;
            goto done;
        }
        /* a FILE.failed: the times of a run whose result or bytes were wrong
         * are not a measurement of the plan (trace check reports it too) */
        if (trace_require_passed(&runs[f], "validation", why, sizeof why)) {
            sim_err_as("ulysim validate", "%s", why);
            rc = 2;
            goto done;
        }
        const char *p = NULL;
        if (n_prof == 1) p = profiles[0];
        else if (n_prof > 1) {
            for (int k = 0; k < n_prof; k++)
                if (prof[k].gpus_per_node == runs[f].ranks) p = profiles[k];
            if (!p) {
                sim_err_as("ulysim validate", "%s: %d ranks, and no --cluster profile has gpus_per_node %d",
                           files[f], runs[f].ranks, runs[f].ranks);
                rc = 2;
                goto done;
            }
        }
        used_prof[f] = p ? p : "embedded";
        uly_cluster c;
        if (trace_cluster_for(&runs[f], p, &c, why, sizeof why) ||
            trace_join_build(&runs[f], &c, &joins[f], why, sizeof why)) {
            sim_err_as("ulysim validate", "%s", why);
            rc = 2;
            goto done;
        }
    }

    /* ----- summary numbers */
    int n_ops_total = 0, n_bytes_bad = 0;
    double *step_abs = calloc((size_t)n_files, sizeof *step_abs);
    double *op_abs = calloc((size_t)n_files * ULY_PLAN_MAX_OPS, sizeof *op_abs);
    int n_op_abs = 0;
    if (!step_abs || !op_abs) {
        free(step_abs);
        free(op_abs);
        rc = 1;
        goto done;
    }
    double max_step = 0;
    int worst_run = 0;
    for (int f = 0; f < n_files; f++) {
        const trace_join *j = &joins[f];
        n_bytes_bad += j->n_bytes_bad;
        n_ops_total += j->n;
        step_abs[f] = fabs(j->step_err);
        if (step_abs[f] > max_step || f == 0) {
            max_step = step_abs[f];
            worst_run = f;
        }
        for (int k = 0; k < j->n; k++)
            if (j->ops[k].layer && isfinite(j->ops[k].err)) op_abs[n_op_abs++] = fabs(j->ops[k].err);
    }
    double *tmp = malloc(sizeof(double) * (size_t)(n_files > n_op_abs ? n_files : n_op_abs + 1));
    if (!tmp) {
        free(step_abs);
        free(op_abs);
        rc = 1;
        goto done;
    }
    memcpy(tmp, step_abs, sizeof(double) * (size_t)n_files);
    const double med_step = median(tmp, n_files);
    memcpy(tmp, op_abs, sizeof(double) * (size_t)n_op_abs);
    const double med_op = median(tmp, n_op_abs);
    double max_op = 0;
    for (int k = 0; k < n_op_abs; k++) max_op = op_abs[k] > max_op ? op_abs[k] : max_op;
    free(tmp);

    /* worst ops: the largest |predicted - measured| seconds among per-layer ops */
    enum { N_WORST = 8 };
    struct {
        int f, k;
        double d;
    } worst[N_WORST];
    int n_worst = 0;
    for (int f = 0; f < n_files; f++)
        for (int k = 0; k < joins[f].n; k++) {
            const trace_jop *x = &joins[f].ops[k];
            /* an op without an error (measured 0 s, or a hidden transfer
             * too small to judge: '-' in its row) is not ranked worst at +0% */
            if (!x->layer || !isfinite(x->err)) continue;
            double d = fabs(x->pred_s - x->meas_s);
            int pos = n_worst < N_WORST ? n_worst++ : N_WORST;
            if (pos == N_WORST) {
                if (d <= worst[N_WORST - 1].d) continue;
                pos = N_WORST - 1;
            }
            while (pos > 0 && worst[pos - 1].d < d) {
                worst[pos] = worst[pos - 1];
                pos--;
            }
            worst[pos].f = f;
            worst[pos].k = k;
            worst[pos].d = d;
        }

    /* ranking: pairs of runs at the same size with different layouts (validate_rank.c) */
    sim_ranking ranking;
    if (sim_rank_runs(runs, joins, n_files, &ranking)) {
        free(step_abs);
        free(op_abs);
        rc = 1;
        goto done;
    }
    const int n_pairs = ranking.n_pairs, n_ties = ranking.n_ties, n_agree = ranking.n_agree;
    const int n_win = ranking.n_win, n_win_agree = ranking.n_win_agree;
    const sim_rank_pair *pairs = ranking.pairs;
    const double agree = n_pairs ? (double)n_agree / n_pairs : NAN;

    /* ----- verdict: without a limit given, the validation target holds
     * (median |step err| <= 20%), so a run far off never reads as a pass */
    const int default_limit = isnan(max_err) && isnan(max_run_err);
    if (default_limit) max_err = VALIDATE_DEFAULT_MAX_ERR;
    int fail_bytes = n_bytes_bad > 0;
    int fail_med = !isnan(max_err) && !(med_step <= max_err);
    int fail_run = !isnan(max_run_err) && !(max_step <= max_run_err);
    int fail_agree = !isnan(min_agree) && !(n_pairs > 0 && agree >= min_agree);
    int ok = !fail_bytes && !fail_med && !fail_run && !fail_agree && rc == 0;

    if (json) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "step_definition", STEP_DEF);
        cJSON *ra = cJSON_AddArrayToObject(root, "runs");
        for (int f = 0; f < n_files; f++) {
            const trace_run *r = &runs[f];
            const trace_join *j = &joins[f];
            const char *lab = ranking.label[f];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "file", r->path);
            cJSON_AddStringToObject(o, "strategy", uly_strategy_get(r->layout.strategy)->name);
            cJSON_AddStringToObject(o, "layout", lab);
            cJSON *dg = cJSON_AddObjectToObject(o, "degrees");
            cJSON_AddNumberToObject(dg, "ulysses", (double)r->layout.ulysses);
            cJSON_AddNumberToObject(dg, "ring", (double)r->layout.ring);
            cJSON_AddNumberToObject(dg, "tp", (double)r->layout.tp);
            cJSON_AddNumberToObject(dg, "dp", (double)r->layout.dp);
            cJSON_AddNumberToObject(o, "ranks", r->ranks);
            cJSON_AddNumberToObject(o, "seq", (double)r->workload.seq);
            cJSON_AddNumberToObject(o, "micro_batch", (double)r->workload.micro_batch);
            cJSON_AddBoolToObject(o, "causal", r->workload.causal);
            cJSON_AddStringToObject(o, "cluster", j->cluster_name);
            cJSON_AddStringToObject(o, "profile", used_prof[f]);
            char pcpu[128];
            validate_profile_cpu(strcmp(used_prof[f], "embedded") ? used_prof[f] : NULL, r->cluster_text, pcpu,
                                 sizeof pcpu);
            cJSON_AddStringToObject(o, "cpu_model", r->cpu_model);
            cJSON_AddStringToObject(o, "profile_cpu_model", pcpu);
            cJSON_AddBoolToObject(o, "host_matches_profile", pcpu[0] && !strcmp(pcpu, r->cpu_model));
            cJSON_AddNumberToObject(o, "size_group", ranking.group[f]);
            cJSON *st = cJSON_AddObjectToObject(o, "step");
            cJSON_AddNumberToObject(st, "predicted_s", j->pred_step_s);
            cJSON_AddNumberToObject(st, "measured_s", j->meas_step_s);
            cJSON_AddNumberToObject(st, "error", j->step_err);
            cJSON_AddNumberToObject(st, "model_layer_s", j->model_layer_s);
            cJSON *cp = cJSON_AddObjectToObject(o, "compute");
            cJSON_AddNumberToObject(cp, "predicted_s", j->pred_compute_s);
            cJSON_AddNumberToObject(cp, "measured_s", j->meas_compute_s);
            cJSON *ce = cJSON_AddObjectToObject(o, "comm_exposed");
            cJSON_AddNumberToObject(ce, "predicted_s", j->pred_comm_exposed_s);
            cJSON_AddNumberToObject(ce, "measured_s", j->meas_comm_exposed_s);
            cJSON_AddNumberToObject(ce, "measured_wait_s", j->meas_wait_s); /* late peers, apart from the transfers */
            cJSON *ov = cJSON_AddObjectToObject(o, "overlap");
            cJSON_AddNumberToObject(ov, "transfer_predicted_s", j->pred_hidden_total_s);
            cJSON_AddNumberToObject(ov, "hidden_predicted_s", j->pred_overlapped_s);
            cJSON_AddNumberToObject(ov, "hidden_measured_s", j->meas_overlapped_s);
            if (j->pred_hidden_total_s > 0) {
                cJSON_AddNumberToObject(ov, "fraction_predicted", j->pred_overlapped_s / j->pred_hidden_total_s);
                cJSON_AddNumberToObject(ov, "fraction_measured", j->meas_overlapped_s / j->pred_hidden_total_s);
            }
            cJSON_AddBoolToObject(o, "bytes_ok", j->n_bytes_bad == 0);
            cJSON_AddNumberToObject(o, "bytes_planned", (double)j->bytes_plan_total);
            cJSON_AddNumberToObject(o, "bytes_measured", (double)j->bytes_meas_total);
            cJSON *oa = cJSON_AddArrayToObject(o, "ops");
            for (int k = 0; k < j->n; k++) {
                const trace_jop *x = &j->ops[k];
                cJSON *q = cJSON_CreateObject();
                cJSON_AddNumberToObject(q, "id", x->id);
                cJSON_AddStringToObject(q, "name", uly_op_type_name(x->op->type));
                cJSON_AddStringToObject(q, "phase", uly_phase_name(x->op->phase));
                cJSON_AddStringToObject(q, "kind", uly_op_kind_name(x->op->kind));
                cJSON_AddStringToObject(q, "coll", uly_coll_name(x->op->coll));
                cJSON_AddBoolToObject(q, "in_step", x->layer);
                cJSON_AddStringToObject(q, "time_is", x->hidden ? "exposed" : "total");
                cJSON_AddNumberToObject(q, "bytes_planned", (double)x->bytes_plan);
                cJSON_AddNumberToObject(q, "bytes_measured", (double)x->bytes_meas);
                cJSON_AddBoolToObject(q, "bytes_ok", x->bytes_plan == x->bytes_meas);
                cJSON_AddNumberToObject(q, "predicted_s", x->pred_s);
                cJSON_AddNumberToObject(q, "predicted_total_s", x->pred_total_s);
                cJSON_AddNumberToObject(q, "measured_s", x->meas_s);
                cJSON_AddNumberToObject(q, "measured_min_s", x->meas_min_s);
                cJSON_AddNumberToObject(q, "measured_max_s", x->meas_max_s);
                if (isfinite(x->err)) cJSON_AddNumberToObject(q, "error", x->err);
                else cJSON_AddNullToObject(q, "error");
                cJSON_AddItemToArray(oa, q);
            }
            cJSON_AddItemToArray(ra, o);
        }
        cJSON *s = cJSON_AddObjectToObject(root, "summary");
        cJSON_AddNumberToObject(s, "runs", n_files);
        cJSON_AddNumberToObject(s, "ops", n_ops_total);
        cJSON_AddNumberToObject(s, "ops_bytes_differ", n_bytes_bad);
        cJSON_AddNumberToObject(s, "step_error_median_abs", med_step);
        cJSON_AddNumberToObject(s, "step_error_max_abs", max_step);
        cJSON_AddStringToObject(s, "step_error_max_run", runs[worst_run].path);
        cJSON_AddNumberToObject(s, "op_error_median_abs", med_op);
        cJSON_AddNumberToObject(s, "op_error_max_abs", max_op);
        cJSON *wa = cJSON_AddArrayToObject(s, "worst_ops");
        for (int k = 0; k < n_worst; k++) {
            const trace_jop *x = &joins[worst[k].f].ops[worst[k].k];
            cJSON *q = cJSON_CreateObject();
            cJSON_AddStringToObject(q, "file", runs[worst[k].f].path);
            cJSON_AddNumberToObject(q, "id", x->id);
            cJSON_AddStringToObject(q, "name", uly_op_type_name(x->op->type));
            cJSON_AddStringToObject(q, "phase", uly_phase_name(x->op->phase));
            cJSON_AddNumberToObject(q, "predicted_s", x->pred_s);
            cJSON_AddNumberToObject(q, "measured_s", x->meas_s);
            cJSON_AddNumberToObject(q, "error", x->err);
            cJSON_AddItemToArray(wa, q);
        }
        cJSON *rk = cJSON_AddObjectToObject(root, "ranking");
        cJSON_AddNumberToObject(rk, "pairs", n_pairs);
        cJSON_AddNumberToObject(rk, "pairs_agree", n_agree);
        cJSON_AddNumberToObject(rk, "ties", n_ties); /* not in pairs: equal steps order nothing */
        if (n_pairs) cJSON_AddNumberToObject(rk, "agreement", agree);
        else cJSON_AddNullToObject(rk, "agreement");
        cJSON_AddNumberToObject(rk, "sizes", n_win);
        cJSON_AddNumberToObject(rk, "winner_agrees", n_win_agree);
        cJSON *pa = cJSON_AddArrayToObject(rk, "cases");
        for (int k = 0; k < n_pairs + n_ties; k++) {
            cJSON *q = cJSON_CreateObject();
            const char *la = ranking.label[pairs[k].a], *lb = ranking.label[pairs[k].b];
            cJSON_AddStringToObject(q, "a", la);
            cJSON_AddStringToObject(q, "b", lb);
            cJSON_AddStringToObject(q, "a_file", runs[pairs[k].a].path);
            cJSON_AddStringToObject(q, "b_file", runs[pairs[k].b].path);
            cJSON_AddNumberToObject(q, "seq", (double)runs[pairs[k].a].workload.seq);
            cJSON_AddNumberToObject(q, "ranks", runs[pairs[k].a].ranks);
            cJSON_AddNumberToObject(q, "predicted_ratio", joins[pairs[k].a].pred_step_s / joins[pairs[k].b].pred_step_s);
            cJSON_AddNumberToObject(q, "measured_ratio", joins[pairs[k].a].meas_step_s / joins[pairs[k].b].meas_step_s);
            cJSON_AddBoolToObject(q, "tie", pairs[k].tie);
            if (pairs[k].tie) cJSON_AddNullToObject(q, "agree");
            else cJSON_AddBoolToObject(q, "agree", pairs[k].agree);
            cJSON_AddItemToArray(pa, q);
        }
        cJSON *ck = cJSON_AddObjectToObject(root, "checks");
        cJSON_AddBoolToObject(ck, "bytes_equal", !fail_bytes);
        if (isfinite(max_err)) cJSON_AddNumberToObject(ck, "max_error", max_err);
        cJSON_AddBoolToObject(ck, "max_error_default", default_limit);
        if (isfinite(max_run_err)) cJSON_AddNumberToObject(ck, "max_run_error", max_run_err);
        if (!isnan(min_agree)) cJSON_AddNumberToObject(ck, "min_agreement", min_agree);
        cJSON_AddBoolToObject(ck, "median_step_error_ok", !fail_med);
        cJSON_AddBoolToObject(ck, "run_step_error_ok", !fail_run);
        cJSON_AddBoolToObject(ck, "ranking_ok", !fail_agree);
        cJSON_AddBoolToObject(root, "ok", ok);
        char *out = cJSON_Print(root);
        if (out) {
            fputs(out, stdout);
            fputc('\n', stdout);
            free(out);
        } else {
            rc = 1;
        }
        cJSON_Delete(root);
    } else {
        printf("# ulysim validate: %d run%s; times in ms; error = predicted / measured - 1\n", n_files,
               n_files == 1 ? "" : "s");
        printf("# %s\n", STEP_DEF);
        for (int f = 0; f < n_files && !brief; f++) {
            const trace_run *r = &runs[f];
            const trace_join *j = &joins[f];
            const char *lab = ranking.label[f];
            printf("\n## %s: %s, %d ranks, seq %lld, batch %lld, %s, zero %d; priced on %s (%s)\n", r->path, lab,
                   r->ranks, (long long)r->workload.seq, (long long)r->workload.micro_batch,
                   r->workload.causal ? "causal" : "non-causal", r->workload.zero_stage, j->cluster_name, used_prof[f]);
            char pcpu[128];
            validate_profile_cpu(strcmp(used_prof[f], "embedded") ? used_prof[f] : NULL, r->cluster_text, pcpu,
                                 sizeof pcpu);
            if (!pcpu[0])
                printf("# host: %s (%s); the profile records no calibration host: its rates are not measured on this "
                       "CPU (ulysim calibrate writes a profile that does)\n", r->hostname, r->cpu_model);
            else
                printf("# host: %s (%s); the profile was calibrated on %s: %s\n", r->hostname, r->cpu_model, pcpu,
                       strcmp(pcpu, r->cpu_model) ? "ANOTHER CPU, its rates are not this host's" : "the same CPU");
            printf("# %3s %-16s %-5s %-4s %-14s %12s %12s %5s %10s %10s %8s %s\n", "id", "op", "phase", "kind", "coll",
                   "bytes_plan", "bytes_meas", "bytes", "pred_ms", "meas_ms", "err", "note");
            for (int k = 0; k < j->n; k++) {
                const trace_jop *x = &j->ops[k];
                char e[16];
                char v[32];
                if (isfinite(x->err)) snprintf(e, sizeof e, "%7s%%", sim_fixed_str(100 * x->err, 1, 1, v, sizeof v));
                else snprintf(e, sizeof e, "%8s", "-");
                printf("  %3d %-16s %-5s %-4s %-14s %12lld %12lld %5s %10.3f %10.3f %8s %s\n", x->id, uly_op_type_name(x->op->type),
                       uly_phase_name(x->op->phase), uly_op_kind_name(x->op->kind), uly_coll_name(x->op->coll),
                       (long long)x->bytes_plan, (long long)x->bytes_meas, x->bytes_plan == x->bytes_meas ? "ok" : "DIFF",
                       1e3 * x->pred_s, 1e3 * x->meas_s, e,
                       !x->layer ? (x->op->per_step ? "per-step, not in step" : "per-model, not in step")
                       : x->hidden ? "exposed part (overlaps attention)" : "");
            }
            char se[32];
            printf("# step %.3f ms predicted, %.3f ms measured: %s%%;  compute %.3f / %.3f ms;  exposed comm "
                   "%.3f / %.3f ms\n",
                   1e3 * j->pred_step_s, 1e3 * j->meas_step_s, sim_fixed_str(100 * j->step_err, 1, 1, se, sizeof se),
                   1e3 * j->pred_compute_s,
                   1e3 * j->meas_compute_s, 1e3 * j->pred_comm_exposed_s, 1e3 * j->meas_comm_exposed_s);
            if (j->pred_hidden_total_s > 0)
                printf("# overlap: ring transfers %.3f ms (predicted), hidden %.3f ms predicted (%.0f%%), %.3f ms "
                       "achieved (%.0f%%: predicted transfer time - measured exposed wait)\n",
                       1e3 * j->pred_hidden_total_s, 1e3 * j->pred_overlapped_s,
                       100 * j->pred_overlapped_s / j->pred_hidden_total_s, 1e3 * j->meas_overlapped_s,
                       100 * j->meas_overlapped_s / j->pred_hidden_total_s);
            printf("# waiting for late peers (imbalance, in the measured step, not in comm): %.3f ms\n",
                   1e3 * j->meas_wait_s);
            printf("# bytes: %s (%lld planned, %lld measured)\n",
                   j->n_bytes_bad ? "DIFFER" : "equal for every op", (long long)j->bytes_plan_total,
                   (long long)j->bytes_meas_total);
        }
        printf("\n## runs\n# %-40s %-22s %5s %7s %10s %10s %8s %10s %10s %6s\n", "file", "layout", "ranks", "seq",
               "pred_ms", "meas_ms", "err", "comm_pred", "comm_meas", "bytes");
        for (int f = 0; f < n_files; f++) {
            const char *lab = ranking.label[f];
            const char *base = strrchr(runs[f].path, '/');
            base = base ? base + 1 : runs[f].path;
            char se[32];
            printf("  %-40s %-22s %5d %7lld %10.3f %10.3f %7s%% %10.3f %10.3f %6s\n", base, lab, runs[f].ranks,
                   (long long)runs[f].workload.seq, 1e3 * joins[f].pred_step_s, 1e3 * joins[f].meas_step_s,
                   sim_fixed_str(100 * joins[f].step_err, 1, 1, se, sizeof se), 1e3 * joins[f].pred_comm_exposed_s, 1e3 * joins[f].meas_comm_exposed_s,
                   joins[f].n_bytes_bad ? "DIFF" : "ok");
        }
        printf("\n## summary\n");
        printf("# bytes: %s (%d ops of %d runs)\n",
               n_bytes_bad ? "DIFFER" : "planned = measured for every op", n_ops_total, n_files);
        char p1[32], p2[32];
        printf("# step-time error: median |err| %s%%, max |err| %s%% (%s)\n",
               sim_fixed_str(100 * med_step, 1, 0, p1, sizeof p1), sim_fixed_str(100 * max_step, 1, 0, p2, sizeof p2),
               runs[worst_run].path);
        printf("# per-op error (per-layer ops): median |err| %s%%, max |err| %s%%\n",
               sim_fixed_str(100 * med_op, 1, 0, p1, sizeof p1), sim_fixed_str(100 * max_op, 1, 0, p2, sizeof p2));
        printf("# worst ops by |predicted - measured|:\n");
        for (int k = 0; k < n_worst; k++) {
            const trace_jop *x = &joins[worst[k].f].ops[worst[k].k];
            const char *base = strrchr(runs[worst[k].f].path, '/');
            base = base ? base + 1 : runs[worst[k].f].path;
            printf("#   %-40s %3d %-14s %-4s pred %8.3f ms, meas %8.3f ms (%s%%)\n", base, x->id, uly_op_type_name(x->op->type),
                   uly_phase_name(x->op->phase), 1e3 * x->pred_s, 1e3 * x->meas_s,
                   sim_fixed_str(100 * x->err, 0, 1, p1, sizeof p1));
        }
        if (n_pairs + n_ties) {
            char tie[160] = "";
            if (n_ties)
                snprintf(tie, sizeof tie, "; %d pair%s tied (equal predicted or measured steps: not ranked)", n_ties,
                         n_ties == 1 ? "" : "s");
            if (n_pairs)
                printf("# ranking: %d of %d strategy pairs at the same size ordered as measured (%.0f%%); fastest "
                       "agrees at %d of %d sizes%s\n",
                       n_agree, n_pairs, 100 * agree, n_win_agree, n_win, tie);
            else
                printf("# ranking: no strategy pair at the same size to rank; fastest agrees at %d of %d sizes%s\n",
                       n_win_agree, n_win, tie);
            for (int k = 0; k < n_pairs + n_ties; k++) {
                const char *la = ranking.label[pairs[k].a], *lb = ranking.label[pairs[k].b];
                printf("#   P %d seq %-7lld %-18s / %-18s predicted %s, measured %s  %s\n", runs[pairs[k].a].ranks,
                       (long long)runs[pairs[k].a].workload.seq, la, lb,
                       sim_fixed_str(joins[pairs[k].a].pred_step_s / joins[pairs[k].b].pred_step_s, 2, 0, p1, sizeof p1),
                       sim_fixed_str(joins[pairs[k].a].meas_step_s / joins[pairs[k].b].meas_step_s, 2, 0, p2, sizeof p2),
                       pairs[k].tie ? "tie: not ranked" : pairs[k].agree ? "agree" : "DISAGREE");
            }
        } else {
            printf("# ranking: no two runs of different strategies at the same size\n");
        }
        if (isfinite(max_err))
            printf("# check: median |step err| %s%% <= %.1f%%%s: %s\n", sim_fixed_str(100 * med_step, 1, 0, p1, sizeof p1),
                   100 * max_err,
                   default_limit ? " (the default; --max-error F to set another)" : "", fail_med ? "FAIL" : "pass");
        if (isfinite(max_run_err))
            printf("# check: every run's |step err| <= %.1f%%: %s\n", 100 * max_run_err, fail_run ? "FAIL" : "pass");
        if (!isnan(min_agree) && n_pairs)
            printf("# check: ranking agreement %.0f%% >= %.0f%%: %s\n", 100 * agree, 100 * min_agree,
                   fail_agree ? "FAIL" : "pass");
        else if (!isnan(min_agree)) /* nothing to rank is no evidence of agreement */
            printf("# check: ranking agreement >= %.0f%%: no pair to rank: %s\n", 100 * min_agree,
                   fail_agree ? "FAIL" : "pass");
        printf("# check: bytes equal: %s\n", fail_bytes ? "FAIL" : "pass");
        printf("# result: %s\n", ok ? "PASS" : "FAIL");
    }
    if (fail_bytes)
        sim_err_as("ulysim validate", "%d op%s sent a different number of bytes than planned", n_bytes_bad,
                   n_bytes_bad == 1 ? "" : "s");
    if (!ok && rc == 0) rc = 1;
    sim_ranking_free(&ranking);
    free(step_abs);
    free(op_abs);
done:
    if (runs)
        for (int f = 0; f < n_files; f++) trace_free(&runs[f]);
    free(runs);
    free(joins);
    free(used_prof);
    free(files);
    return rc;
}
