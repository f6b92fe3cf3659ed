/* trace_join.h: prediction joined with measurement, op by op, for one plan
 * trace (used by `ulysim validate` and `ulysim trace export`).
 *
 * What is compared with what (the harness times one layer of one
 * micro-batch, op by op, each op after an MPI_Barrier over all ranks):
 *   - a compute op or a blocking collective: uly_plan_price's op_time_s
 *     against the measured median time;
 *   - a ring transfer that overlaps an attention op (overlaps >= 0): the
 *     harness reports the time spent waiting for it after the attention
 *     compute (time_is "exposed"), so it is compared with the model's exposed
 *     part op_exposed_s; the attention op's measured time is its compute;
 *   - ZeRO prefetches (overlaps = whole phase) are executed blocking by the
 *     harness, so their full op_time_s is the comparable prediction;
 *   - a transfer's measured time is its transfer_s (version 2 traces): the
 *     wait for late peers (wait_s, load imbalance) is apart, meas_wait_s,
 *     counted in the measured step but not in the op's error.
 * The run's "step" is one layer of one micro-batch, forward and backward as
 * the harness executed them: the sum over the per-layer ops (not per_model,
 * not per_step) of these comparable times, measured and predicted alike. */
#ifndef SIM_TRACE_JOIN_H
#define SIM_TRACE_JOIN_H

#include "trace_read.h"

typedef struct trace_jop {
    int id;
    const uly_op *op;
    int layer;            /* counted in the step: not per_model, not per_step */
    int hidden;           /* a transfer overlapping op `op->overlaps` */
    double pred_s;        /* comparable prediction (exposed part for hidden transfers) */
    double pred_total_s;  /* op_time_s: the whole op (all hops of a transfer) */
    double meas_s;        /* measured median over ranks (a transfer: its transfer_s, without the wait) */
    double meas_wait_s;   /* a transfer: its wait for late peers (wait_s; 0 in version 1 traces) */
    double meas_min_s, meas_max_s;
    double err;           /* pred_s / meas_s - 1 (NAN when meas_s is 0) */
    int64_t bytes_meas, bytes_plan;
} trace_jop;

typedef struct trace_join {
    const trace_run *run;
    uly_cluster cluster;  /* what it was priced on */
    char cluster_name[64];
    uly_result res;
    int n;                /* ops, in execution order */
    trace_jop ops[ULY_PLAN_MAX_OPS];
    /* per layer (one micro-batch), as the harness executed it */
    double pred_step_s, meas_step_s, step_err;
    double pred_compute_s, meas_compute_s;
    double pred_comm_exposed_s, meas_comm_exposed_s;   /* comm on the path: blocking + exposed parts */
    double meas_wait_s;                                /* transfers waiting for late peers (in meas_step_s) */
    double pred_hidden_total_s;                        /* overlapped transfers, whole (predicted) */
    double pred_overlapped_s;                          /* their hidden part, predicted */
    double meas_overlapped_s;                          /* pred_hidden_total_s - measured exposed, >= 0: estimate */
    double model_layer_s;                              /* the model's own layer_fwd_s + layer_bwd_s */
    int n_bytes_bad;
    int64_t bytes_plan_total, bytes_meas_total;
} trace_join;

/* Prices run's plan on cluster (nodes/gpus_per_node already those of the
 * run) and joins. Returns 0, or 2 with a reason when the plan rebuilt on
 * that cluster differs from the trace's. */
int trace_join_build(const trace_run *run, const uly_cluster *cluster, trace_join *j, char *why, size_t why_len);

#endif
