/* cmd_trace.c: `ulysim trace export|check`.
 *
 *   ulysim trace export RUN.trace -o run.json [--cluster NAME|FILE]
 *       Chrome trace-event JSON (Perfetto, chrome://tracing) with the
 *       measurement and the prediction as two processes on one timeline.
 *       In each process the ops are laid out back to back in the order the
 *       harness executed them, each lasting its time (measured median, or
 *       uly_plan_price's op time); thread 1 is the critical path. A ring
 *       transfer that overlaps an attention op gets its own thread: it is in
 *       flight from the start of that attention op, and its exposed part (the
 *       wait after the attention compute) sits on thread 1 after it. The
 *       measured process cannot know when a transfer finished inside the
 *       compute, so its in-flight bar runs to the end of its wait; the
 *       predicted one lasts the transfer's priced time.
 *   ulysim trace check RUN.trace...
 *       Reads each trace with the validating reader and prints one line per
 *       file: "FILE: ok: ..." on stdout, or the reader's message on stderr;
 *       every file is read, the exit status is the worst of them. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"
#include "trace_events.h"
#include "trace_join.h"
#include "args.h"
#include "out_file.h"
#include "trace_read.h"

int sim_cmd_trace(int argc, char **argv);

static void usage(FILE *f)
{
    fprintf(f, "usage: ulysim trace export RUN.trace -o OUT.json [--cluster NAME|FILE]\n"
               "       ulysim trace check RUN.trace...\n"
               "export: Chrome trace-event JSON (open in https://ui.perfetto.dev or chrome://tracing) with the\n"
               "  measured run and the prediction (libulysim, on the trace's embedded cluster profile or\n"
               "  --cluster) as two processes on one timeline; ops back to back in execution order, ring\n"
               "  transfers on their own thread overlapping the attention op they hide under.\n"
               "check: read traces with the validating reader (format, version, truncation, ops against the\n"
               "  plan libulysim rebuilds); one line per file, every file: FILE: ok on stdout, or on stderr the\n"
               "  reason naming the file and line.\n"
               "Options take their value as --opt VALUE or --opt=VALUE (-o: also --output).\n"
               "Exit: 0 ok; 2 bad usage (one line, nothing checked) or a bad trace (check: any of them);\n"
               "1 internal failure (check: a file that could not be read for want of memory, over 2).\n");
}

/* One process: measured (pred = 0) or predicted (pred = 1). */
static void lay_out(cJSON *ev, const trace_join *j, int pid, int pred)
{
    double start[ULY_PLAN_MAX_OPS];
    int n_hid[ULY_PLAN_MAX_OPS];
    for (int i = 0; i < ULY_PLAN_MAX_OPS; i++) {
        start[i] = NAN;
        n_hid[i] = 0;
    }
    int max_tid = 1;
    double t = 0;
    for (int k = 0; k < j->n; k++) {
        const trace_jop *x = &j->ops[k];
        const uly_op *o = x->op;
        const double d = pred ? x->pred_s : x->meas_s;
        const char *cat = o->kind == ULY_OP_COMM ? "comm" : uly_op_kind_name(o->kind);
        char name[96];
        snprintf(name, sizeof name, "%s %s%s", uly_op_type_name(o->type), uly_phase_name(o->phase), x->hidden ? " (exposed)" : "");
        cJSON *a = sim_te_slice(ev, pid, 1, name, cat, t, d);
        cJSON_AddNumberToObject(a, "id", x->id);
        cJSON_AddStringToObject(a, "kind", uly_op_kind_name(o->kind));
        if (o->kind == ULY_OP_COMM) {
            cJSON_AddStringToObject(a, "coll", uly_coll_name(o->coll));
            cJSON_AddStringToObject(a, "group", uly_group_name(o->group));
            cJSON_AddNumberToObject(a, "group_size", o->group_size);
            cJSON_AddNumberToObject(a, "bytes", (double)(pred ? x->bytes_plan : x->bytes_meas));
        } else {
            cJSON_AddNumberToObject(a, "flops", o->flops);
        }
        cJSON_AddNumberToObject(a, "time_ms", 1e3 * d);
        cJSON_AddNumberToObject(a, pred ? "measured_ms" : "predicted_ms", 1e3 * (pred ? x->meas_s : x->pred_s));
        cJSON_AddBoolToObject(a, "in_step", x->layer);
        if (!pred) {
            cJSON_AddNumberToObject(a, "min_ms", 1e3 * x->meas_min_s);
            cJSON_AddNumberToObject(a, "max_ms", 1e3 * x->meas_max_s);
        }
        if (x->hidden && o->overlaps >= 0 && o->overlaps < ULY_PLAN_MAX_OPS && !isnan(start[o->overlaps])) {
            const int tid = 2 + n_hid[o->overlaps]++;
            if (tid > max_tid) max_tid = tid;
            const double s0 = start[o->overlaps];
            const double dur = pred ? x->pred_total_s : t + d - s0;
            char nm[96];
            snprintf(nm, sizeof nm, "%s %s (in flight)", uly_op_type_name(o->type), uly_phase_name(o->phase));
            cJSON *b = sim_te_slice(ev, pid, tid, nm, "comm-overlapped", s0, dur);
            cJSON_AddNumberToObject(b, "id", x->id);
            cJSON_AddNumberToObject(b, "overlaps", o->overlaps);
            cJSON_AddNumberToObject(b, "steps", o->steps);
            cJSON_AddNumberToObject(b, "bytes", (double)(pred ? x->bytes_plan : x->bytes_meas));
            cJSON_AddStringToObject(b, "note", pred ? "priced transfer time of all hops, from the start of the attention op"
                                                    : "from the start of the attention op to the end of the wait for it "
                                                      "(the harness times only the exposed wait)");
        }
        start[x->id] = t;
        t += d;
    }
    sim_te_meta(ev, "thread_name", pid, 1, "critical path (execution order)");
    for (int tid = 2; tid <= max_tid; tid++) {
        char nm[64];
        snprintf(nm, sizeof nm, "ring transfer %d (overlapped)", tid - 1);
        sim_te_meta(ev, "thread_name", pid, tid, nm);
    }
}

static int do_export(int argc, char **argv)
{
    static const char *const WHO = "ulysim trace export";
    static const char *const OUT[] = {"-o", "--output", "--out", NULL}, *const CLUSTER[] = {"--cluster", NULL};
    const char *in = NULL, *out = NULL, *profile = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int r;
        if ((r = sim_opt_help(WHO, a)) != 0) {
            if (r < 0) return 2;
            usage(stdout);
            return 0;
        } else if ((r = sim_opt_value(WHO, argc, argv, &i, OUT, &out, &v)) ||
                   (r = sim_opt_value(WHO, argc, argv, &i, CLUSTER, &profile, &v))) {
            if (r < 0) return 2;
        } else if (a[0] == '-' && a[1]) {
            sim_err_as(WHO, "unknown option %s; see ulysim trace --help", a);
            return 2;
        } else if (!in) {
            in = a;
        } else {
            sim_err_as(WHO, "one trace at a time (got %s and %s)", in, a);
            return 2;
        }
    }
    if (!in || !out) {
        sim_err_as(WHO, "usage: ulysim trace export RUN.trace -o OUT.json");
        return 2;
    }
    static trace_run run;
    static trace_join j;
    char why[1024];
    out_file_input_note(in, NULL); /* -o may not replace it */
    if (out_file_check(out, OUT_FILE_STREAM, why, sizeof why)) { /* before the work */
        sim_err_as("ulysim trace export", "%s", why);
        return 2;
    }
    int rc = trace_read(in, &run, why, sizeof why);
    if (rc) {
        sim_err_as("ulysim trace export", "%s", rc == 2 ? why : "out of memory");
        trace_free(&run);
        return rc;
    }
    if (run.kind != TRACE_PLAN) {
        sim_err_as("ulysim trace export", "%s:1: a microbench trace has no plan to lay out", in);
        trace_free(&run);
        return 2;
    }
    uly_cluster c;
    if (trace_cluster_for(&run, profile, &c, why, sizeof why) || trace_join_build(&run, &c, &j, why, sizeof why)) {
        sim_err_as("ulysim trace export", "%s", why);
        trace_free(&run);
        return 2;
    }
    cJSON *root = cJSON_CreateObject();
    cJSON *ev = cJSON_AddArrayToObject(root, "traceEvents");
    char pname[256];
    snprintf(pname, sizeof pname, "measured: ulyharness %s on %d rank%s (%s)", uly_strategy_get(run.layout.strategy)->name,
             run.ranks, sim_plural_s(run.ranks), run.hostname[0] ? run.hostname : "?");
    sim_te_meta(ev, "process_name", 1, 0, pname);
    snprintf(pname, sizeof pname, "predicted: libulysim on %s", j.cluster_name);
    sim_te_meta(ev, "process_name", 2, 0, pname);
    lay_out(ev, &j, 1, 0);
    lay_out(ev, &j, 2, 1);
    cJSON_AddStringToObject(root, "displayTimeUnit", "ms");
    cJSON *md = cJSON_AddObjectToObject(root, "otherData");
    cJSON_AddStringToObject(md, "trace", run.path);
    cJSON_AddStringToObject(md, "command", run.command);
    cJSON_AddStringToObject(md, "created", run.created);
    cJSON_AddStringToObject(md, "cluster", j.cluster_name);
    cJSON_AddStringToObject(md, "profile", profile ? profile : "embedded in the trace");
    cJSON_AddNumberToObject(md, "step_predicted_ms", 1e3 * j.pred_step_s);
    cJSON_AddNumberToObject(md, "step_measured_ms", 1e3 * j.meas_step_s);
    cJSON_AddStringToObject(md, "step", "one layer of one micro-batch, fwd + bwd, as executed (per-layer ops)");
    trace_free(&run);
    if ((rc = sim_te_write(root, out, "ulysim trace export")) != 0) return rc;
    printf("ulysim trace export: %s -> %s (%d ops; step %.3f ms measured, %.3f ms predicted on %s)\n", in, out, j.n,
           1e3 * j.meas_step_s, 1e3 * j.pred_step_s, j.cluster_name);
    return 0;
}

/* Every option before any file (a bad one is bad usage, before any
 * output); then one line per file, the good on stdout, the bad on stderr
 * (the reader's message, naming the file and line), every file read
 * whatever the others gave; the exit status the worst of them: 1 (a file
 * could not be checked: out of memory) over 2 (a bad trace) over 0. */
static int do_check(int argc, char **argv)
{
    static const char *const WHO = "ulysim trace check";
    int n = 0, worst = 0;
    for (int i = 1; i < argc; i++) {
        const int r = sim_opt_help(WHO, argv[i]);
        if (r < 0) return 2;
        if (r) {
            usage(stdout);
            return 0;
        }
    }
    for (int i = 1; i < argc; i++)
        if (argv[i][0] == '-' && argv[i][1]) {
            sim_err_as(WHO, "unknown option %s (valid: --help; see ulysim trace --help)", argv[i]);
            return 2;
        }
    for (int i = 1; i < argc; i++) {
        static trace_run run;
        char why[1024];
        n++;
        int rc = trace_read(argv[i], &run, why, sizeof why);
        if (rc) {
            fflush(stdout); /* the lines in the order of the files, stdout and stderr on one terminal or file */
            if (rc == 2) sim_err_as(WHO, "%s", why);
            else sim_err_as(WHO, "%s: out of memory", argv[i]);
            trace_free(&run);
            if (rc == 1 || worst == 0) worst = rc;
            continue;
        }
        if (run.kind == TRACE_PLAN)
            printf("%s: ok: plan trace, %s on %d rank%s, %d ops, one line each%s\n", argv[i],
                   uly_strategy_get(run.layout.strategy)->name, run.ranks, sim_plural_s(run.ranks), run.plan.n_ops,
                   run.ok ? "" : "; summary says the run FAILED its checks");
        else
            printf("%s: ok: microbench trace, %d rank%s, %d points\n", argv[i], run.ranks, sim_plural_s(run.ranks),
                   run.n_points);
        trace_free(&run);
    }
    if (!n) {
        sim_err_as(WHO, "no trace given (usage: ulysim trace check RUN.trace...)");
        return 2;
    }
    return worst;
}

int sim_cmd_trace(int argc, char **argv)
{
    /* bad usage is one line on stderr (args.h); the whole usage is --help's */
    if (argc < 2) {
        sim_err_as("ulysim trace", "which action? (valid: export, check; see ulysim trace --help)");
        return SIM_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return SIM_EXIT_OK;
    }
    if (!strcmp(argv[1], "export")) return do_export(argc - 1, argv + 1);
    if (!strcmp(argv[1], "check")) return do_check(argc - 1, argv + 1);
    char qb[80];
    sim_err_as("ulysim trace", "unknown action %s (valid: export, check; see ulysim trace --help)",
               text_quote(argv[1], qb, sizeof qb));
    return SIM_EXIT_USAGE;
}
