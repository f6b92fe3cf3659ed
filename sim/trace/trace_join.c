/* trace_join.c: prediction against measurement per op (see trace_join.h). */
#include "trace_join.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int trace_join_build(const trace_run *run, const uly_cluster *cluster, trace_join *j, char *why, size_t why_len)
{
    memset(j, 0, sizeof *j);
    j->run = run;
    j->cluster = *cluster;
    snprintf(j->cluster_name, sizeof j->cluster_name, "%s", cluster->name);
    /* the plan again, on the pricing cluster: same nodes and GPUs per node,
     * so the same placement; ops and bytes must not change */
    static uly_plan p;
    uly_reason rs[ULY_MAX_REASONS];
    int nr = 0;
    if (uly_plan_build(&run->model, &run->workload, &j->cluster, &run->layout, &p, rs, &nr) != ULY_OK ||
        p.n_ops != run->plan.n_ops) {
        snprintf(why, why_len, "%s: the plan built on cluster %s differs from the trace's plan", run->path,
                 cluster->name);
        return 2;
    }
    for (int i = 0; i < p.n_ops; i++)
        if (p.ops[i].type != run->plan.ops[i].type || p.ops[i].bytes_sent != run->plan.ops[i].bytes_sent) {
            snprintf(why, why_len, "%s: op %d (%s) of the plan built on cluster %s differs from the trace's plan",
                     run->path, i, uly_op_type_name(run->plan.ops[i].type), cluster->name);
            return 2;
        }
    if (uly_plan_price(&run->model, &run->workload, &j->cluster, &p, &j->res) != ULY_OK) {
        snprintf(why, why_len, "%s: libulysim cannot price the plan on cluster %s", run->path, cluster->name);
        return 2;
    }
    j->model_layer_s = j->res.time.layer_fwd_s + j->res.time.layer_bwd_s;
    for (int k = 0; k < run->n_order; k++) {
        const int id = run->order[k];
        const uly_op *o = &run->plan.ops[id];
        const trace_op *m = &run->ops[id];
        trace_jop *x = &j->ops[j->n++];
        x->id = id;
        x->op = o;
        x->layer = !o->per_model && !o->per_step;
        x->hidden = o->kind == ULY_OP_COMM && o->overlaps >= 0;
        x->pred_total_s = j->res.op_time_s[id];
        x->pred_s = x->hidden ? j->res.op_exposed_s[id] : j->res.op_time_s[id];
        /* the slowest or the median rank's, a transfer's own time, its wait
         * for late peers apart (reported apart, counted in the measured
         * step): trace_op_measured_s */
        const trace_time *mt = o->kind == ULY_OP_COMM ? &m->xfer : &m->t;
        x->meas_s = trace_op_measured_s(run, id, &x->meas_wait_s);
        x->meas_min_s = mt->min;
        x->meas_max_s = mt->max;
        x->err = x->meas_s > 0 ? x->pred_s / x->meas_s - 1.0 : NAN;
        x->bytes_meas = m->bytes_sent;
        x->bytes_plan = o->bytes_sent;
        j->bytes_plan_total += x->bytes_plan;
        j->bytes_meas_total += x->bytes_meas;
        if (x->bytes_meas != x->bytes_plan) j->n_bytes_bad++;
        if (!x->layer) continue;
        j->pred_step_s += x->pred_s;
        j->meas_step_s += x->meas_s + x->meas_wait_s;
        j->meas_wait_s += x->meas_wait_s;
        if (o->kind == ULY_OP_COMM) {
            j->pred_comm_exposed_s += x->pred_s;
            j->meas_comm_exposed_s += x->meas_s;
            if (x->hidden) {
                j->pred_hidden_total_s += x->pred_total_s;
                j->pred_overlapped_s += x->pred_total_s - x->pred_s;
                const double h = x->pred_total_s - x->meas_s;
                j->meas_overlapped_s += h > 0 ? h : 0;
            }
        } else {
            j->pred_compute_s += x->pred_s;
            j->meas_compute_s += x->meas_s;
        }
    }
    /* nothing measured (every time 0: a trace edited, or a broken timer):
     * no error can be worked out against it, and NaN would pass as a number */
    if (!(j->meas_step_s > 0)) {
        snprintf(why, why_len, "%s: its layer ops' measured times add up to 0 s: nothing to compare a prediction "
                 "against (valid: the trace of a timed run)", run->path);
        return 2;
    }
    j->step_err = j->pred_step_s / j->meas_step_s - 1.0;
    /* a hidden transfer whose exposed part is under 1% of the step, predicted
     * and measured alike, is not judged op by op: microseconds of clock and
     * scheduling noise against nothing (it still counts in the step) */
    for (int k = 0; k < j->n; k++) {
        trace_jop *x = &j->ops[k];
        const double tiny = 0.01 * j->meas_step_s;
        if (x->hidden && x->pred_s < tiny && x->meas_s < tiny) x->err = NAN;
    }
    return 0;
}
