/* plot_fig_trace.c: the figures `ulysim plot` draws from ulyharness plan
 * traces: validation (measured against predicted time of every operation)
 * and timeline (one run's operations in execution order). A trace is read
 * and checked by trace_read.h's reader; its plan is priced on the cluster
 * profile embedded in it, or on --cluster, by trace_join_build. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "plot_fig.h"

int plot_trace_load(const char *path, const char *cluster_override, plot_trace *t, char *why, size_t why_n)
{
    memset(t, 0, sizeof *t);
    int rc = trace_read(path, &t->run, why, why_n);
    if (rc == 1 && !why[0]) snprintf(why, why_n, "%s: out of memory", path);
    if (rc) return rc;
    if (t->run.kind != TRACE_PLAN) {
        snprintf(why, why_n, "%s: kind \"microbench\": a micro-benchmark trace has no plan to predict (valid: a trace "
                 "of a plan, ulyharness --strategy S)", path);
        return SIM_EXIT_USAGE;
    }
    const char *sl = strrchr(path, '/');
    snprintf(t->base, sizeof t->base, "%.255s", sl ? sl + 1 : path);
    for (char *p = t->base; *p; p++)
        if (*p == ',' || *p == '"' || *p == '#' || (unsigned char)*p < 0x20) *p = '_';
    sim_degrees_str(&t->run.layout, t->layout, sizeof t->layout);

    /* the cluster: --cluster, else the profile the run used (embedded in the
     * header), with the node shape the plan was built for */
    char lib[600];
    if (trace_cluster_for(&t->run, cluster_override, &t->cluster, lib, sizeof lib)) {
        if (cluster_override) snprintf(why, why_n, "%s: --cluster %s: %s", path, cluster_override, lib);
        else snprintf(why, why_n, "%s", lib);
        return SIM_EXIT_USAGE;
    }
    if (uly_cluster_check(&t->cluster, lib, sizeof lib) != ULY_OK) {
        snprintf(why, why_n, "%s: cluster: %s", path, lib);
        return SIM_EXIT_USAGE;
    }
    if (cluster_override)
        snprintf(t->cluster_from, sizeof t->cluster_from, "--cluster %s", cluster_override);
    else
        snprintf(t->cluster_from, sizeof t->cluster_from, "the header's cluster.preset (%s)",
                 t->run.cluster_source[0] ? t->run.cluster_source : "?");
    return trace_join_build(&t->run, &t->cluster, &t->join, why, why_n);
}

/* Predicted seconds of op i, comparable with what the trace measured: the
 * exposed part where the trace timed only that. */
static double trace_predicted(const plot_trace *t, int i)
{
    return t->run.ops[i].exposed ? t->join.res.op_exposed_s[i] : t->join.res.op_time_s[i];
}

static const char *trace_strategy(const plot_trace *t) { return sim_strategy_name(t->run.layout.strategy); }

void plot_csv_traces(const plot_run *r, FILE *f)
{
    for (int k = 0; k < r->n_traces; k++) {
        const plot_trace *t = r->traces[k];
        const uly_model *m = &t->run.model;
        const uly_workload *w = &t->run.workload;
        fprintf(f, "# trace     %s: %s %s on %d ranks, %s, created %s%s\n", t->run.path, trace_strategy(t), t->layout,
                t->run.ranks, m->name, t->run.created, t->run.ok ? "" : "; its checks FAILED (summary.ok false)");
        fprintf(f, "#           model L %lld, h %lld, a %lld, k %lld, d %lld, f %lld; seq %lld, micro-batch %lld, %s, %s, recompute %s, ZeRO-%d\n",
                (long long)m->layers, (long long)m->hidden, (long long)m->heads, (long long)m->kv_heads,
                (long long)m->head_dim, (long long)m->ffn_hidden, (long long)w->seq, (long long)w->micro_batch,
                uly_dtype_name(w->dtype), w->causal ? "causal" : "non-causal", uly_recompute_name(w->recompute),
                w->zero_stage);
        fprintf(f, "#           predicted with %s: %s, %lld node(s) x %lld\n", t->cluster_from, t->cluster.name,
                (long long)t->cluster.nodes, (long long)t->cluster.gpus_per_node);
    }
}

/* The columns of both trace figures, first; then each figure's own. */
static const col trace_cols_common[] = {
    {"trace", "trace file name"},
    {"strategy", NULL},
    {"layout", "degrees above 1"},
    {"op_id", "operation id (the plan's)"},
    {"op", "operation name"},
    {"phase", "fwd, bwd, step"},
    {"kind", "gemm, attn, elem, comm"},
    {"time_is", "total, or exposed: a transfer hidden under compute, only the part that was not"},
    {"predicted_s", "libulysim's time of the op re-priced from the trace header [s] (op_exposed_s when time_is = exposed)"},
    {"measured_s", "median over reps and ranks [s]"},
};
#define N_TRACE_COLS ((int)(sizeof trace_cols_common / sizeof trace_cols_common[0]))
static const col validation_cols[] = {
    {"measured_min_s", "fastest rank's median [s]"},
    {"measured_max_s", "slowest rank's median [s]"},
    {"ratio", "measured_s / predicted_s"},
    {"bytes_sent", "measured bytes sent per rank [bytes]"},
    {"bytes_planned", "the plan's bytes sent per rank [bytes]"},
};
static const col timeline_cols[] = {
    {"order", "position in the execution order (0 first)"},
    {"predicted_start_s", "sum of the predicted times of the ops before it [s]"},
    {"measured_start_s", "sum of the measured times of the ops before it [s]"},
};
#define N_OWN(t) ((int)(sizeof t / sizeof t[0]))

/* The header of a trace figure: the common columns, then its own n_own
 * (at most 8). */
static void trace_header(plot_run *r, FILE *f, const char *const *about, const col *own, int n_own, int with_strategy)
{
    col cols[N_TRACE_COLS + 8];
    if (n_own > 8) n_own = 8;
    memcpy(cols, trace_cols_common, sizeof trace_cols_common);
    memcpy(cols + N_TRACE_COLS, own, sizeof *own * (size_t)n_own);
    plot_csv_header(r, f, about, cols, N_TRACE_COLS + n_own, with_strategy);
}

static void trace_row_common(FILE *f, const plot_trace *t, int i)
{
    const uly_op *op = &t->run.plan.ops[i];
    fprintf(f, "%s,%s,%s,%d,%s,%s,%s,%s,%.10g,%.10g", t->base, trace_strategy(t), t->layout, i,
            uly_op_type_name(op->type), uly_phase_name(op->phase), uly_op_kind_name(op->kind),
            t->run.ops[i].exposed ? "exposed" : "total", trace_predicted(t, i), t->run.ops[i].t.median);
}

/* The points VAL_FAR_OFF times or more off the prediction (either way),
 * the figure's extremes: the command names them (run->summary) and the CSV
 * notes them, furthest first, VAL_FAR_NAMED of them by name. */
#define VAL_FAR_OFF 10.0
static void duration_str(double s, char *b, size_t n)
{
    if (s >= 1) snprintf(b, n, "%.3g s", s);
    else if (s >= 1e-3) snprintf(b, n, "%.3g ms", s * 1e3);
    else snprintf(b, n, "%.3g µs", s * 1e6);
}

#define VAL_FAR_NAMED 4
typedef struct far_pt {
    const plot_trace *t;
    int i;
    double off; /* |log10(measured / predicted)| */
} far_pt;

static int far_cmp(const void *a, const void *b)
{
    const double x = ((const far_pt *)a)->off, y = ((const far_pt *)b)->off;
    return (x < y) - (x > y);
}

static void far_off_name(plot_run *r)
{
    int n_far = 0, cap = 0;
    for (int k = 0; k < r->n_traces; k++) cap += r->traces[k]->run.plan.n_ops;
    far_pt *far = malloc(sizeof *far * (size_t)(cap + 1));
    if (!far) return;
    for (int k = 0; k < r->n_traces; k++) {
        const plot_trace *t = r->traces[k];
        for (int i = 0; i < t->run.plan.n_ops; i++) {
            const double p = trace_predicted(t, i), m = t->run.ops[i].t.median;
            if (p > 0 && m > 0 && fabs(log10(m / p)) >= log10(VAL_FAR_OFF))
                far[n_far++] = (far_pt){t, i, fabs(log10(m / p))};
        }
    }
    qsort(far, (size_t)n_far, sizeof *far, far_cmp);
    const int n = n_far < VAL_FAR_NAMED ? n_far : VAL_FAR_NAMED;
    if (!n_far) {
        free(far);
        return;
    }
    size_t o = (size_t)snprintf(r->summary, sizeof r->summary,
                                "# %d point%s %g times or more off the prediction, furthest first:\n", n_far,
                                n_far == 1 ? " is" : "s are", VAL_FAR_OFF);
    for (int j = 0; j < n && o < sizeof r->summary; j++) {
        const plot_trace *t = far[j].t;
        const uly_op *op = &t->run.plan.ops[far[j].i];
        const double ratio = t->run.ops[far[j].i].t.median / trace_predicted(t, far[j].i);
        char pb[32], mb[32];
        duration_str(trace_predicted(t, far[j].i), pb, sizeof pb);
        duration_str(t->run.ops[far[j].i].t.median, mb, sizeof mb);
        int k = snprintf(r->summary + o, sizeof r->summary - o,
                         "#   %s %s (%s) of %s: predicted %s, measured %s (%s%.*f times)%s\n",
                         uly_op_type_name(op->type), uly_phase_name(op->phase), uly_op_kind_name(op->kind), t->base,
                         pb, mb, ratio >= 1 ? "" : "1/", fabs(log10(ratio)) >= 2 ? 0 : 1, ratio >= 1 ? ratio : 1 / ratio,
                         t->run.ops[far[j].i].exposed ? "; the exposed part of a transfer under compute" : "");
        if (k > 0) o += (size_t)k;
    }
    free(far);
    for (const char *p = r->summary; *p;) { /* the same lines as notes in the CSV */
        const char *nl = strchr(p, '\n');
        plot_note(r, "%.*s", (int)(nl ? nl - p - 2 : (long)strlen(p) - 2), p + 2);
        p = nl ? nl + 1 : p + strlen(p);
    }
}

int fig_validation(plot_run *r, FILE *f)
{
    const char *about[] = {
        "one point per operation of each trace: measured time (ulyharness) against the time libulysim predicts for",
        "the same plan; the figure draws y = x and a +-20% band", NULL};
    trace_header(r, f, about, validation_cols, N_OWN(validation_cols), 1);
    for (int k = 0; k < r->n_traces; k++) {
        const plot_trace *t = r->traces[k];
        for (int i = 0; i < t->run.plan.n_ops; i++) {
            const trace_op *op = &t->run.ops[i];
            double p = trace_predicted(t, i);
            if (!(p > 0) || !(op->t.median > 0)) {
                plot_note(r, "%s op %d %s: predicted %.3g s, measured %.3g s (a log axis needs both > 0)", t->base, i,
                          uly_op_type_name(t->run.plan.ops[i].type), p, op->t.median);
                continue;
            }
            trace_row_common(f, t, i);
            fprintf(f, ",%.10g,%.10g,%.10g,%lld,%lld", op->t.min, op->t.max, op->t.median / p,
                    (long long)op->bytes_sent, (long long)op->bytes_planned);
            plot_strategy_cells(f, t->run.layout.strategy);
        }
    }
    far_off_name(r);
    return 0;
}

int fig_timeline(plot_run *r, FILE *f)
{
    const plot_trace *t = r->traces[0];
    const char *about[] = {
        "the run's operations in execution order, one after the other as the harness runs them (a barrier before",
        "each): measured (ulyharness) and predicted (libulysim, the same plan re-priced) start and duration", NULL};
    trace_header(r, f, about, timeline_cols, N_OWN(timeline_cols), 0);
    double ps = 0, ms = 0;
    for (int k = 0; k < t->run.n_order; k++) {
        int i = t->run.order[k];
        double p = trace_predicted(t, i), m = t->run.ops[i].t.median;
        trace_row_common(f, t, i);
        fprintf(f, ",%d,%.10g,%.10g\n", k, ps, ms);
        if (p > 0) ps += p;
        if (m > 0) ms += m;
    }
    return 0;
}
