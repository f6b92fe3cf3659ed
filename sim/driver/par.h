/* par.h: how the ulysim subcommands share work across MPI ranks. Item i of a
 * batch belongs to rank i % size; each rank fills its own items, then
 * sim_par_gather brings every item to rank 0, which alone prints. With one
 * process (par_serial.c, or par_mpi.c outside mpirun) all items are local.
 * MPI stays behind par_mpi.c: nothing else includes mpi.h. */
#ifndef SIM_PAR_H
#define SIM_PAR_H

#include <stddef.h>

/* Starts MPI only when launched by an MPI launcher (OMPI_COMM_WORLD_SIZE,
 * PMI_SIZE or PMIX_RANK in the environment). Returns 0, or 1 on failure. */
int sim_par_init(int *argc, char ***argv);
void sim_par_finalize(void);
/* An internal failure on one rank: under MPI ends every rank at once (the
 * others would wait in the gather for ever); with one process it returns,
 * and the command returns its status to main. */
void sim_par_abort(int code);

int sim_par_rank(void);
int sim_par_size(void);
const char *sim_par_kind(void); /* "mpi" or "serial": what was built */

static inline int sim_par_mine(size_t i)
{
    return (int)(i % (size_t)sim_par_size()) == sim_par_rank();
}

/* items: n items of item_size bytes, the same array on every rank; each rank
 * has filled the items it owns. Afterwards rank 0 holds all of them (other
 * ranks' arrays are left as they were). Returns 0, or 1 on failure. */
int sim_par_gather(void *items, size_t item_size, size_t n);

#endif
