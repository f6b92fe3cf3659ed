/* validate_rank.h: how `ulysim validate` ranks harness runs: each run's
 * layout label, the runs of one size (same model shape, workload, ranks and
 * threads), the pairs of different layouts among them ordered by prediction
 * and by measurement, and each size's fastest. */
#ifndef SIM_VALIDATE_RANK_H
#define SIM_VALIDATE_RANK_H

#include "trace_join.h"
#include "trace_read.h"

#define SIM_LABEL_LEN 160 /* a layout label */

typedef struct sim_rank_pair {
    int a, b;  /* runs */
    int agree; /* prediction and measurement order them alike */
    int tie;   /* predicted or measured steps equal (1 part in 1e9): not ranked */
} sim_rank_pair;

typedef struct sim_ranking {
    char (*label)[SIM_LABEL_LEN]; /* [run]: "usp u2 r2 t1", "ring r1 t1 pp2", ... */
    int *group;                   /* [run]: its size group */
    sim_rank_pair *pairs;         /* n_pairs + n_ties of them, in the runs' order */
    int n_pairs, n_ties, n_agree; /* ranked pairs (ties apart), those that agree */
    int n_win, n_win_agree;       /* sizes with two layouts or more; those whose fastest agrees */
} sim_ranking;

/* Ranks runs[0..n) with their joins; 0, or 1 when out of memory. */
int sim_rank_runs(const trace_run *runs, const trace_join *joins, int n, sim_ranking *out);
void sim_ranking_free(sim_ranking *r);

#endif
