/* plot_fig.h: what the parts of `ulysim plot` share. The command
 * (cmd_plot.c) parses the arguments and runs a figure of its table; a
 * figure's data function writes the figure's CSV: from the model
 * (plot_fig_model.c) or from harness traces (plot_fig_trace.c), through the
 * CSV writers of plot_csv.c. */
#ifndef SIM_PLOT_FIG_H
#define SIM_PLOT_FIG_H

#include <stddef.h>
#include <stdio.h>

#include "args.h"
#include "trace_join.h"
#include "trace_read.h"

typedef struct plot_run plot_run;
typedef int (*fig_data_fn)(plot_run *r, FILE *f);

typedef struct figure {
    const char *name;
    const char *summary;
    const char *def_gpus, *def_seq; /* defaults, given to the argument parser first */
    int gpus_list, seq_list;        /* 1: takes a list or range */
    int def_spread;                 /* -1: no --spread; 0: best layout; 1: all GPUs */
    int traces;                     /* 0: from the model; 1: one trace; 2: one or more */
    const char *x_what;             /* what the figure's axis needs, for messages */
    fig_data_fn data;
} figure;

/* A harness trace (read by trace_read.h's reader) with its plan priced on
 * the cluster the figure predicts with. */
typedef struct plot_trace {
    trace_run run;
    uly_cluster cluster;      /* the embedded profile, or --cluster's */
    char cluster_from[1100];  /* where that profile came from, for the CSV header */
    char base[256];           /* the file name without its directory, safe in a CSV cell */
    char layout[64];          /* degrees above 1 */
    trace_join join;          /* join.res: the plan priced on `cluster` */
} plot_trace;

struct plot_run {
    const figure *fig;
    sim_ctx *c;
    int n_traces;
    plot_trace **traces; /* the trace figures' TRACE arguments, loaded */
    const char *runs_path; /* validation --runs FILE (plot_fig_validation.c) */
    int spread_all;      /* 1: each strategy over all GPUs; 0: its best layout */
    int data_only;       /* --data-only: the CSV alone, no gnuplot */
    char command[1024];  /* the ulysim command line, for the CSV header */
    char notes[8192];    /* '#' notes after the rows: points left out and why */
    size_t notes_len;
    char summary[2048];  /* '#' lines the command prints after the files' names: what the reader must not miss */
};

/* A CSV column: its name, and its meaning with the unit. */
typedef struct col {
    const char *name;
    const char *what;
} col;

/* ------------------------------------------------------ CSV (plot_csv.c) */

/* Adds a line to the notes written after the rows. */
void plot_note(plot_run *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The '#' header: figure, command, configuration (or the traces), the
 * figure's own lines, the columns; then the line of column names. A column
 * whose `what` is NULL holds strategy names: the registry's are listed.
 * with_strategy: the rows end with the strategy registry's columns (sidx,
 * label, label_short; plot_strategy_cells), which the figure scripts draw
 * with. */
void plot_csv_header(plot_run *r, FILE *f, const char *const *about, const col *cols, int ncols, int with_strategy);
/* The notes as '#' lines after the rows. */
void plot_csv_notes(plot_run *r, FILE *f);

/* The registry's columns for strategy s (sidx: its position in the
 * registry from 1, which picks the line style and the legend order; label,
 * label_short: its legend and bar names), each after a comma, and the end of
 * the row. */
void plot_strategy_cells(FILE *f, uly_strategy_id s);
/* The name of the registry's hybrid (Ulysses inside a node, the ring
 * across), for the lines that say how it is spread. */
const char *plot_hybrid_name(void);

/* The reasons of a summary as one line without commas (CSV cells stay plain). */
void plot_reasons_plain(const sim_ctx *c, const sim_summary *s, char *b, size_t n);

/* ------------------------------------ figures from the model (plot_fig_model.c) */

int fig_comm_volume(plot_run *r, FILE *f);
int fig_throughput(plot_run *r, FILE *f);
int fig_max_seq(plot_run *r, FILE *f);
int fig_max_batch(plot_run *r, FILE *f);
int fig_memory(plot_run *r, FILE *f);
int fig_breakdown(plot_run *r, FILE *f);
/* breakdown's default global batch: the recommendation's own micro-batch x
 * dp at (P, N), as `ulysim --gpus P --seq N` runs it, so every strategy's
 * step holds the same tokens and the recommended bar is that plan's step;
 * P x micro-batch when nothing fits. */
int64_t plot_breakdown_batch(const sim_ctx *c, int64_t P, int64_t N);

/* ------------------------------------- figures from traces (plot_fig_trace.c) */

/* Reads path and prices its plan on the embedded cluster profile, or on
 * cluster_override (a preset name or a file). Returns 0; 2 for bad input,
 * 1 for an internal failure, with a one-line reason naming the file. */
int plot_trace_load(const char *path, const char *cluster_override, plot_trace *t, char *why, size_t why_n);
/* The '#' lines saying which traces, for plot_csv_header. */
void plot_csv_traces(const plot_run *r, FILE *f);
int fig_validation(plot_run *r, FILE *f);
int fig_timeline(plot_run *r, FILE *f);

/* --------------------- a runs file's runs (plot_fig_validation.c) */

/* `plot validation --runs FILE`: the figure (script validation-runs.gp) and
 * its data: measured against predicted step time per run. */
extern const figure fig_validation_runs_def;
int fig_validation_runs(plot_run *r, FILE *f);

#endif
