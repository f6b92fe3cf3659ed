/* trace_read.h: reading ulyharness traces (traces/FORMAT.md, versions 1 and 2) for
 * `ulysim validate`, `ulysim calibrate` and `ulysim trace export`.
 *
 * The reader trusts nothing in the file. It reads a regular file of at most
 * TRACE_MAX_BYTES, splits it into lines of at most TRACE_MAX_LINE bytes, and
 * rejects, with one line naming the file and the line number:
 *   - an empty file, a NUL byte, malformed JSON or trailing garbage on a line;
 *   - another format (header "format" not "ulysim-trace") or a version other
 *     than 1 and 2;
 *   - a truncated file: a last line without its newline, or no summary line
 *     at the end (a run that died, or a copy cut short);
 *   - a plan trace whose header plan is not the plan libulysim builds again
 *     from the header's model, workload, layout and cluster (the embedded
 *     preset with nodes and gpus_per_node from cluster.used);
 *   - op lines that do not match that plan: an id missing or not an integer,
 *     an id the plan does not have, an id seen twice, a name, phase, kind,
 *     collective, group or group size different from the plan's, a
 *     bytes_planned different from the plan's bytes, a plan op without a line,
 *     a line out of the header's harness.execution_order (when it has one);
 *   - times that are not finite, negative or not ordered min <= median <= max;
 *     a time above 0 but below TRACE_MIN_TIME_S (no clock measures it); a
 *     comm op's wait_s or transfer_s above its time_s (both are parts of it:
 *     transfer_s = time - wait, traces/FORMAT.md);
 *   - a plan trace whose layer ops' measured times add up to 0 s (nothing was
 *     timed: no prediction can be compared with it);
 *   - a number that is not JSON's grammar ("05", "1."), which cJSON reads;
 *   - a header plan.n_ops or a summary "ops" other than the op count; a
 *     summary whose "ok" is not bytes_ok and check.ok (or check.skipped).
 * The measured bytes_sent are data, not structure: a trace whose bytes differ
 * from the plan is read, and validate reports the difference. A trace whose
 * summary says the run failed its checks (a FILE.failed) is read too (trace
 * check reports it); the commands that use its times refuse it with
 * trace_require_passed.
 */
#ifndef FORMATS_TRACE_READ_H
#define FORMATS_TRACE_READ_H

#include <stddef.h>
#include <stdint.h>

#include "ulysim.h"

#define TRACE_FORMAT "ulysim-trace"
#define TRACE_VERSION 2 /* and version 1, without wait_s and transfer_s */
#define TRACE_MAX_BYTES (64L * 1024 * 1024) /* a plan trace is tens of KiB */
#define TRACE_MAX_LINE (4L * 1024 * 1024)   /* the header: plan ops and the preset (at most 1 MiB) */
#define TRACE_MAX_POINTS 4096               /* micro-benchmark lines */
/* A measured time is 0 or at least this. The harness's clocks tick in 1 ns
 * (clock_gettime behind MPI_Wtime; CUDA events in 0.5 us), so a difference
 * of two readings is 0 or at least a tick, and a median of an even count of
 * them (the mean of the middle two) at least half a tick: 0.5 ns. Below
 * 0.1 ns no clock measured it, and its ratios (predicted / measured, bytes
 * per second) would overflow to inf. */
#define TRACE_MIN_TIME_S 1e-10
#define TRACE_MAX_TIME_S 1e6

typedef struct trace_time {
    double median, min, max;
} trace_time;

typedef enum trace_kind { TRACE_PLAN = 0, TRACE_MICROBENCH = 1 } trace_kind;

/* One op line of a plan trace, by plan id. */
typedef struct trace_op {
    int present;
    int line;            /* line number in the file */
    int64_t bytes_sent;  /* measured */
    int64_t bytes_planned;
    trace_time t;
    trace_time wait;     /* comm ops, version 2: of t, waiting for the peers (version 1: 0) */
    trace_time xfer;     /* comm ops, version 2: the transfer proper (version 1: t) */
    int has_split;       /* wait and xfer were measured (version 2) */
    int reps;
    int exposed;         /* time_is "exposed": a transfer overlapping op `overlaps` */
    int overlaps;        /* the op id it overlaps, or -1 */
} trace_op;

/* One micro-benchmark point. */
typedef struct trace_point {
    int line;
    char coll_name[24];  /* as written: alltoall, allgather, reduce_scatter, allreduce, allreduce_mpi, sendrecv */
    uly_coll coll;       /* ULY_COLL_NONE for allreduce_mpi (the library's, not the harness's) */
    int group_size;
    int64_t size_bytes, count, bytes_sent;
    trace_time t;
    trace_time wait;     /* comm ops, version 2: of t, waiting for the peers (version 1: 0) */
    trace_time xfer;     /* comm ops, version 2: the transfer proper (version 1: t) */
    int has_split;       /* wait and xfer were measured (version 2) */
    int reps;
} trace_point;

typedef struct trace_run {
    char path[512];
    trace_kind kind;
    int version;             /* 1 or 2 */
    int n_lines;
    char created[64];
    char command[1024];      /* argv joined with spaces (shell-quoted where needed) */
    char hostname[128], cpu_model[128], mpi_library[160], blas[160], kernel[32], mode[32];
    char blas_core[32];      /* OpenBLAS's kernel set (software.blas_core; older traces: "") */
    char backend[16];        /* harness.backend: "mpi" (CPU kernels; also where absent) or "nccl" */
    int ranks, cores_online, threads, warmup, reps;

    /* the cluster of the header: the embedded preset with cluster.used applied */
    char cluster_source[512];
    char *cluster_text;      /* the embedded preset, re-serialised (malloc) */
    uly_cluster cluster;
    int64_t used_nodes, used_gpn;
    int adjusted;

    /* plan traces */
    uly_model model;
    uly_workload workload;
    uly_layout layout;
    uly_plan plan;           /* rebuilt by libulysim, checked equal to the header's */
    trace_op ops[ULY_PLAN_MAX_OPS];
    int order[ULY_PLAN_MAX_OPS]; /* op ids in the order of their lines (= execution order) */
    int n_order;

    /* micro-benchmark traces */
    trace_point *points;     /* malloc */
    int n_points;
    /* the overlap micro-benchmark (version 2; has_overlap 0 where absent) */
    int has_overlap;
    double overlap, overlap_slowdown, overlap_transfer_s, overlap_compute_s;

    /* summary */
    int summary_line;
    int ok, bytes_ok, check_ok, check_skipped;
    double wall_s;
} trace_run;

/* Reads and checks path. Returns 0; 2 for bad input (a one-line message
 * "PATH:LINE: what is wrong" in why); 1 for an internal failure (memory).
 * The run must be released with trace_free even on failure. */
int trace_read(const char *path, trace_run *run, char *why, size_t why_len);
void trace_free(trace_run *run);

/* 0 when the run's summary says it passed its checks (ok); else 2 with
 * "PATH:LINE: the summary says the run FAILED its checks (which): ..." in
 * why: the times of a run whose result or bytes were wrong are not a
 * measurement of the plan, for validate or calibrate. `use` says what they
 * were wanted for ("validation", "calibration"). */
int trace_require_passed(const trace_run *run, const char *use, char *why, size_t why_len);

/* Op id's measured time as validate compares it with the model's: the
 * model prices the critical rank, so where the plan says the ranks' work
 * differs (crit_factor > 1: a contiguous causal split) the slowest rank's,
 * else the median rank's (the robust estimate of the same work on every
 * rank); a transfer's own time (transfer_s), its wait for late peers (load
 * imbalance) in *wait_s, 0 for other ops. Their sum over the layer ops is
 * the measured step (sim/trace/trace_join.c). */
double trace_op_measured_s(const trace_run *run, int id, double *wait_s);

/* The cluster to price a run's plan on: the embedded preset (profile NULL) or
 * a profile (a preset name or a JSON file), with nodes and gpus_per_node of
 * the run (cluster.used). Returns 0 or 2 with a reason. */
int trace_cluster_for(const trace_run *run, const char *profile, uly_cluster *out, char *why, size_t why_len);

/* Names used in the trace for groups, phases, kinds, collectives. */
int trace_group_parse(const char *s, uly_group *g);
const char *trace_coll_name(uly_coll c); /* "reduce_scatter" etc., as the harness writes them */
/* A micro-benchmark collective's bytes sent per rank over its size_bytes
 * (traces/FORMAT.md; nccl-tests' busbw factor): (p-1)/p for alltoall,
 * allgather and reduce_scatter, 2(p-1)/p for the all-reduces (ULY_COLL_NONE
 * stands for allreduce_mpi), 1 for sendrecv. */
double trace_coll_volume_factor(uly_coll c, int p);

#endif
