/* validate_runs.h: `ulysim validate --runs FILE` (docs/runs.md): every row of
 * a runs file (formats/runs_read.h) priced as the plan command prices its
 * flags, beside what was measured. validate_runs.c reads and prices the rows
 * and sums them up; validate_runs_out.c prints them and is the command; the
 * figure (plot_fig_validation.c) and reproduce use the same rows. */
#ifndef SIM_VALIDATE_RUNS_H
#define SIM_VALIDATE_RUNS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "args.h"

/* The measured quantities a row may hold, besides oom. */
enum { VR_STEP = 0, VR_TOKENS, VR_TFLOPS, VR_MEM, VR_Q_COUNT };
extern const char *const vr_quantity_names[VR_Q_COUNT]; /* the column names: "step_s", ... */

typedef struct vr_row {
    int line;                          /* where the row starts in the file */
    char label[128], source[256], group[128];
    const uly_strategy *strategy;      /* the registry's entry; NULL until resolved */
    int64_t gpus, seq;
    int priced;                        /* 1: a layout with valid shapes was priced */
    char layout[96];                   /* "tp8.pp8 mb1": the best layout of the pins given */
    char note[512];                    /* why it was not priced, or its fatal reasons */
    double pred[VR_Q_COUNT], meas[VR_Q_COUNT]; /* NAN: not measured / not priced */
    int flop_conv;                     /* uly_flop_conv of tflops_per_gpu, -1 none */
    int oom_meas;                      /* -1 not given, 0, 1 */
    int oom_pred;                      /* 1: the plan does not fit in memory */
    int feasible;                      /* 1: the priced layout fits and has no fatal reason */
    uly_layout best;                   /* the layout priced (when priced) */
    int64_t micro_batch;               /* its micro-batch */
    char cluster[64];                  /* the cluster that priced it: its name (the row's, or --cluster's) */
} vr_row;

typedef struct vr_set {
    char path[1024];
    int n;
    vr_row *rows;
} vr_set;

/* Reads path and prices every row. Returns 0; 2 for bad input with one line
 * in why naming the file, line, row and value; 1 internal. */
int vr_load(const char *path, vr_set *s, char *why, size_t why_len);

/* A row priced another way than plan's: c is the row's resolved request
 * (model, cluster, workload, pins), r has its strategy, gpus, seq and
 * measured numbers; the function fills r's predictions, priced, feasible,
 * best, micro_batch, layout and note. reproduce prices a table that
 * measured something else than a whole step this way (RSA's Table 4: one
 * pipeline stage's memory). Returns 0, or an exit status with why. */
struct sim_ctx;
typedef int (*vr_price_fn)(const struct sim_ctx *c, vr_row *r, void *user, char *why, size_t why_len);

typedef struct vr_opts {
    const char *cluster; /* replaces every row's cluster (as given: not relative to the file); NULL: the row's */
    vr_price_fn price;   /* NULL: as plan prices the row's flags */
    void *user;          /* price's */
} vr_opts;
/* vr_load with options (o NULL: none). */
int vr_load_with(const char *path, const vr_opts *o, vr_set *s, char *why, size_t why_len);
void vr_free(vr_set *s);

/* The checks vr_load applies to row i of a runs table before pricing it
 * (its columns, its measured cells, its flags through the plan command's
 * parser and context, one strategy), for a writer that must write only rows
 * vr_load accepts (`ulysim runs from-megatron`). path is the runs file the
 * row goes to (vr_load finds the row's model and cluster files beside it).
 * Returns 0; or 2 with the reason in why, without the file, line and row
 * (the caller knows where the row's values came from), and in *col the
 * column at fault, -1 when no one column is (flags that do not go
 * together); or 1 internal. */
struct runs_table;
int vr_check_row(const struct runs_table *t, int i, const char *path, int *col, char *why, size_t why_len);

/* predicted / measured - 1, or NAN when either is missing. */
double vr_err(const vr_row *r, int q);

typedef struct vr_stats {
    int count;                 /* rows with both numbers */
    double median_abs, max_abs; /* |error|, fractions; NAN when count is 0 */
} vr_stats;
void vr_stats_of(const vr_set *s, int q, vr_stats *out);

/* Out-of-memory agreement over the rows with oom measured: [0] both say
 * out of memory, [1] measured only, [2] predicted only, [3] neither. */
void vr_oom_counts(const vr_set *s, int out[4]);

/* Ranking agreement: pairs of rows of one group whose measured numbers order
 * them (step_s, else tokens_per_s, else tflops_per_gpu) and how many of
 * those the prediction orders the same way. A tie, measured or predicted
 * (equal to 1 part in 1e9), orders nothing: it is not a pair, and is counted
 * in *ties. */
void vr_rank_counts(const vr_set *s, int *pairs, int *agree, int *ties);

/* Prints the rows and the summary; with limits (percent; NAN: none) says
 * whether they hold. Returns 0, or 1 when a limit is exceeded. */
int vr_print(const vr_set *s, sim_format fmt, double max_median_pct, double max_pct, FILE *f);

/* The command: `ulysim validate --runs FILE ...` (argv[0] is "validate"). */
int sim_validate_runs(int argc, char **argv);
/* 1 when argv holds --runs: validate's entry hands over to sim_validate_runs. */
int sim_validate_is_runs(int argc, char **argv);

/* A limit of validate, in every mode: a fraction of the measured value in
 * 0..hi (0.2 = 20%), or percent with its sign (20%), decimal only; 0, or 2
 * after the message naming flag (cmd_validate.c). */
int val_limit_parse(const char *flag, const char *v, double hi, double *out);

#endif
