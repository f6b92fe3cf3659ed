/* par_mpi.c: work sharing over MPI, initialised only under an MPI launcher so
 * that a plain `ulysim` run never touches MPI.
 *
 * Two things a single process gets for free are made to hold under mpirun:
 * a rank that stops or hangs ends the job with its rank named, after a
 * bounded wait (wait_bounded), instead of leaving the others waiting for
 * ever; and a failure to write the output (a full disk, `> /dev/full`) is
 * rank 0's exit status 1 with the message, as with one process: the
 * launcher forwards rank 0's stdout and drops its own write errors, so rank
 * 0 writes where the launcher's stdout goes when it can (stdout_direct). */
#define _GNU_SOURCE /* syscall */
#include "par.h"

#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int g_on, g_rank, g_size = 1;
static double g_t0; /* MPI_Wtime() at MPI_Init: this rank's working time so far */

static int launched_by_mpi(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) return 1;
    return 0;
}

/* The launcher's stdout as a descriptor of this process: the very open file
 * (pidfd_getfd: the same offset, so what the launcher's caller writes after
 * the job lands after rank 0's output), else, for what has no offset to
 * share (a pipe, a terminal, a device, a file opened for appending), the
 * same object opened again; -1 when neither is possible. */
static int launcher_stdout(long ppid)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
    const int pfd = (int)syscall(SYS_pidfd_open, (pid_t)ppid, 0);
    if (pfd >= 0) {
        const int fd = (int)syscall(SYS_pidfd_getfd, pfd, STDOUT_FILENO, 0);
        close(pfd);
        if (fd >= 0) return fd;
    }
#endif
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd/1", ppid);
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    int append = 0;
    if (S_ISREG(st.st_mode)) { /* a private offset would overwrite: only for appending */
        char info[256];
        snprintf(info, sizeof info, "/proc/%ld/fdinfo/1", ppid);
        FILE *f = fopen(info, "r");
        if (!f) return -1;
        while (fgets(info, sizeof info, f))
            if (!strncmp(info, "flags:", 6)) append = (strtoul(info + 6, NULL, 8) & O_APPEND) != 0;
        fclose(f);
        if (!append) return -1;
    }
    return open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (append ? O_APPEND : 0));
}

/* When the launcher is this rank's parent on the same host (Open MPI's
 * mpirun, MPICH's hydra: a single-host job), rank 0 writes its stdout
 * straight to the launcher's, so that a write error reaches rank 0.
 * Otherwise (a remote rank 0, anything unexpected) the forwarded stdout
 * stays. */
static void stdout_direct(void)
{
    char path[64], comm[64] = "";
    const long ppid = (long)getppid();
    snprintf(path, sizeof path, "/proc/%ld/comm", ppid);
    FILE *f = fopen(path, "r");
    if (!f) return;
    const int got = fgets(comm, sizeof comm, f) != NULL;
    fclose(f);
    comm[strcspn(comm, "\n")] = 0;
    if (!got || (strcmp(comm, "mpirun") && strcmp(comm, "mpiexec") && strcmp(comm, "orterun") && strcmp(comm, "prterun") &&
                 strcmp(comm, "hydra_pmi_proxy")))
        return;
    const int fd = launcher_stdout(ppid);
    if (fd < 0) return;
    fflush(stdout);
    if (dup2(fd, STDOUT_FILENO) < 0) { /* keeps the forwarded stdout */ }
    close(fd);
}

int sim_par_init(int *argc, char ***argv)
{
    if (!launched_by_mpi()) return 0;
    if (MPI_Init(argc, argv) != MPI_SUCCESS) return 1;
    g_on = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    g_t0 = MPI_Wtime();
    if (g_rank == 0) stdout_direct();
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

/* How long a rank waits for the others once its own share is done: they do
 * as much work, so 30 s plus four times what this rank took is ample for a
 * live one; ULYSIM_MPI_WAIT_S (seconds) sets it instead. */
static double wait_limit_s(void)
{
    const char *e = getenv("ULYSIM_MPI_WAIT_S");
    char *end = NULL;
    const double v = e ? strtod(e, &end) : 0;
    if (e && end != e && !*end && v > 0 && v < 1e7) return v;
    return 30 + 4 * (MPI_Wtime() - g_t0);
}

/* Completes reqs or, past the limit, names the rank of each request left
 * (peer[k]) and ends the job: a stopped or hung rank must not leave the
 * others waiting for ever. */
static int wait_bounded(int n, MPI_Request *reqs, const int *peer, const char *what)
{
    const double limit = wait_limit_s(), t0 = MPI_Wtime();
    const struct timespec nap = {0, 1000 * 1000};
    for (;;) {
        int done = 0;
        if (MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS) return 1;
        if (done) return 0;
        if (MPI_Wtime() - t0 > limit) break;
        nanosleep(&nap, NULL);
    }
    for (int k = 0; k < n; k++) {
        int done = 0;
        MPI_Test(&reqs[k], &done, MPI_STATUS_IGNORE);
        if (!done)
            fprintf(stderr, "ulysim: rank %d: rank %d %s within %.0f s (stopped, hung or far slower than the others); "
                            "ending the job\n", g_rank, peer[k], what, limit);
    }
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

/* Point to point rather than MPI_Gatherv, so that a rank that never sends
 * can be told apart and named (wait_bounded). */
int sim_par_gather(void *items, size_t item_size, size_t n)
{
    if (!g_on || g_size == 1 || n == 0) return 0;
    if (n > (size_t)0x7fffffff || item_size > (size_t)0x7fffffff) return 1;
    const char *stop = getenv("ULYSIM_TEST_STOP_RANK"); /* tests: this rank stops before it sends */
    if (stop && atoi(stop) == g_rank && g_rank != 0) raise(SIGSTOP);
    static int tag; /* one per gather, in the same order on every rank */
    tag = (tag + 1) % 30000;
    const size_t size = (size_t)g_size, rank = (size_t)g_rank;
    unsigned char *base = items;
    MPI_Datatype item;
    if (MPI_Type_contiguous((int)item_size, MPI_BYTE, &item) != MPI_SUCCESS) return 1;
    MPI_Type_commit(&item);
    int rc = 1;
    if (rank != 0) {
        const size_t mine = n / size + (rank < n % size);
        unsigned char *send = malloc(mine ? mine * item_size : 1);
        if (send) {
            for (size_t i = rank, j = 0; i < n; i += size, j++) memcpy(send + j * item_size, base + i * item_size, item_size);
            MPI_Request req;
            const int to = 0;
            if (MPI_Isend(send, (int)mine, item, 0, tag, MPI_COMM_WORLD, &req) == MPI_SUCCESS)
                rc = wait_bounded(1, &req, &to, "took no results");
        }
        free(send);
    } else {
        unsigned char *recv = malloc(n * item_size);
        MPI_Request *reqs = malloc(size * sizeof *reqs);
        int *peer = calloc(size, sizeof *peer);
        size_t *off = malloc(size * sizeof *off);
        if (recv && reqs && peer && off) {
            size_t at = 0;
            int ok = 1;
            for (size_t r = 1; r < size && ok; r++) {
                const size_t cnt = n / size + (r < n % size);
                off[r] = at;
                peer[r - 1] = (int)r;
                ok = MPI_Irecv(recv + at * item_size, (int)cnt, item, (int)r, tag, MPI_COMM_WORLD, &reqs[r - 1]) ==
                     MPI_SUCCESS;
                at += cnt;
            }
            if (ok && wait_bounded((int)size - 1, reqs, peer, "sent no results") == 0) {
                for (size_t r = 1; r < size; r++) {
                    const unsigned char *blk = recv + off[r] * item_size;
                    for (size_t i = r, j = 0; i < n; i += size, j++)
                        memcpy(base + i * item_size, blk + j * item_size, item_size);
                }
                rc = 0;
            }
        }
        free(recv);
        free(reqs);
        free(peer);
        free(off);
    }
    MPI_Type_free(&item);
    return rc;
}
