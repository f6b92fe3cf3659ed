/* par_mpi.c: work sharing over MPI, initialised only under an MPI launcher so
 * that a plain `ulysim` run never touches MPI. */
#include "par.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

static int g_on, g_rank, g_size = 1;

static int launched_by_mpi(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) return 1;
    return 0;
}

int sim_par_init(int *argc, char ***argv)
{
    if (!launched_by_mpi()) return 0;
    if (MPI_Init(argc, argv) != MPI_SUCCESS) return 1;
    g_on = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    return 0;
}

void sim_par_finalize(void)
{
    if (g_on) MPI_Finalize();
    g_on = 0;
}

void sim_par_abort(int code)
{
    if (g_on) MPI_Abort(MPI_COMM_WORLD, code);
}

int sim_par_rank(void) { return g_rank; }
int sim_par_size(void) { return g_size; }
const char *sim_par_kind(void) { return "mpi"; }

int sim_par_gather(void *items, size_t item_size, size_t n)
{
    if (!g_on || g_size == 1 || n == 0) return 0;
    if (n > (size_t)0x7fffffff || item_size > (size_t)0x7fffffff) return 1;
    size_t size = (size_t)g_size, rank = (size_t)g_rank;
    size_t mine = n / size + (rank < n % size);
    unsigned char *base = items;
    unsigned char *send = malloc(mine ? mine * item_size : 1);
    int *counts = NULL, *displs = NULL;
    unsigned char *recv = NULL;
    int rc = 1;
    if (!send) goto out;
    for (size_t i = rank, j = 0; i < n; i += size, j++) memcpy(send + j * item_size, base + i * item_size, item_size);

    MPI_Datatype item;
    if (MPI_Type_contiguous((int)item_size, MPI_BYTE, &item) != MPI_SUCCESS) goto out;
    MPI_Type_commit(&item);
    if (rank == 0) {
        counts = malloc(size * sizeof *counts);
        displs = malloc(size * sizeof *displs);
        recv = malloc(n * item_size);
        if (!counts || !displs || !recv) { MPI_Type_free(&item); goto out; }
        int off = 0;
        for (size_t r = 0; r < size; r++) {
            counts[r] = (int)(n / size + (r < n % size));
            displs[r] = off;
            off += counts[r];
        }
    }
    int err = MPI_Gatherv(send, (int)mine, item, recv, counts, displs, item, 0, MPI_COMM_WORLD);
    MPI_Type_free(&item);
    if (err != MPI_SUCCESS) goto out;
    if (rank == 0) {
        for (size_t r = 0; r < size; r++) {
            const unsigned char *blk = recv + (size_t)displs[r] * item_size;
            for (size_t i = r, j = 0; i < n; i += size, j++) memcpy(base + i * item_size, blk + j * item_size, item_size);
        }
    }
    rc = 0;
out:
    free(send);
    free(counts);
    free(displs);
    free(recv);
    return rc;
}
