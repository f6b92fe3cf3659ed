/* driver.h: the one driver of the planning commands (plan, max-seq,
 * min-gpus, sweep), in the manner of nccl-tests' shared driver: a command
 * says how many rows its resolved request has and how to compute one row,
 * sums the gathered rows up into its result, and writes that result in each
 * format; the driver does the rest, once for all of them: the rows shared
 * over the MPI ranks (row i on rank i % size, par.h), the progress bar,
 * the gather to rank 0, the refusal of a row that failed internally, and
 * the choice of the writer of --format (table, JSON or CSV). */
#ifndef SIM_DRIVER_H
#define SIM_DRIVER_H

#include <stddef.h>
#include <stdio.h>

#include "context.h"

/* The rows of one request, computed across the ranks and gathered on rank 0. */
typedef struct sim_rows {
    size_t n;
    sim_summary *row;
    uly_plan *plan;      /* each row's plan and priced result when the command keeps them */
    uly_result *result;  /* (plan: the recommendation's operations); else NULL */
    unsigned char *mark; /* a flag per row the command may set when it sums up (sweep: best at its point) */
} sim_rows;

/* A writer prints a command's result in one format; returns an exit status. */
typedef int (*sim_writer)(const sim_ctx *c, const void *result, FILE *f);

typedef struct sim_planning {
    const char *name;
    int keeps_plans;      /* gathers each row's plan and priced result too */
    int shows_progress;   /* draws the progress bar on a tty (sweep) */
    /* the rows of the request (at least one is allocated) */
    size_t (*count)(const sim_ctx *c);
    /* row i into *row (and *plan, *result when keeps_plans; else NULL) */
    void (*compute)(const sim_ctx *c, size_t i, sim_summary *row, uly_plan *plan, uly_result *result);
    /* rank 0, on the gathered rows (none failed internally): the command's
     * result, result_size bytes zeroed beforehand; an exit status (not 0:
     * nothing is written) */
    size_t result_size;
    int (*sum_up)(const sim_ctx *c, sim_rows *rows, void *result);
    sim_writer write[3]; /* by sim_format: table, JSON, CSV */
    /* after the writer succeeded (NULL: nothing): an exit status */
    int (*after)(const sim_ctx *c, const void *result);
} sim_planning;

/* The planning commands (plan/cmd_*.c). */
extern const sim_planning sim_cmd_plan, sim_cmd_maxseq, sim_cmd_mingpus, sim_cmd_sweep;

/* --require-fit (an after hook's part): SIM_EXIT_NOFIT with one line on
 * stderr when the flag is given and no plan fits (any_fits 0), what saying
 * of what; else SIM_EXIT_OK. The output is written before, as without it. */
int sim_require_fit(const sim_ctx *c, int any_fits, const char *what);

/* Runs one planning command on a resolved request; rank 0 writes. Returns
 * the exit status. */
int sim_planning_run(const sim_ctx *c, const sim_planning *cmd);

#endif
