/* validate_report.h: what `ulysim validate` on harness traces holds once its
 * runs are read, priced and summed up (cmd_validate.c), and the writers of
 * that result (validate_report.c): the table for people, JSON. */
#ifndef SIM_VALIDATE_REPORT_H
#define SIM_VALIDATE_REPORT_H

#include "trace_join.h"
#include "trace_read.h"
#include "validate_host.h"
#include "validate_rank.h"

#define VAL_MAX_PROFILES 16
#define VAL_N_WORST 8

/* The command line. A limit NAN: not given; INFINITY: none (bytes only). */
typedef struct val_opts {
    const char *profiles[VAL_MAX_PROFILES];
    int n_prof;
    double max_err, max_run_err, min_agree;
    int json, brief;
    const char **files; /* the traces, n_files of them */
    int n_files;
} val_opts;

/* Which profile priced a run: the one its trace embeds, a --cluster, or
 * the host profile of its host (ulysim calibrate --host). */
enum { VAL_PROF_EMBEDDED = 0, VAL_PROF_GIVEN = 1, VAL_PROF_HOST = 2 };

/* The runs, their joins and what they sum up to. */
typedef struct val_set {
    int n;
    trace_run *runs;
    trace_join *joins;
    const char **used_prof; /* [run]: the profile that priced it (a --cluster, or the host profile's path), or "embedded" */
    int *prof_kind;         /* [run]: VAL_PROF_* */
    val_host *prof_host;    /* [run]: the host that profile was measured on */
    int n_ops_total, n_bytes_bad;
    double med_step, max_step, med_op, max_op; /* |error| over the runs' steps, the per-layer ops' */
    int worst_run;                             /* the run of max_step */
    struct {
        int f, k; /* run, op */
        double d; /* |predicted - measured| seconds */
    } worst[VAL_N_WORST];                      /* the per-layer ops furthest off, furthest first */
    int n_worst;
    sim_ranking ranking;
    double agree;                              /* ranking.n_agree / n_pairs, NAN without pairs */
    /* the verdict */
    int default_limit; /* no limit given: max_err is the default */
    int fail_bytes, fail_med, fail_run, fail_agree, ok;
} val_set;

/* The definition of the step compared, written in both formats. */
extern const char val_step_definition[];

/* Write the result; return 0, or 1 when the output could not be made. */
int val_write_json(const val_opts *o, const val_set *s);
int val_write_table(const val_opts *o, const val_set *s);

#endif
