/* hx_mpi.c: checked, byte-counting MPI wrappers; failures and the job's
 * abort; the watchdog thread.
 *
 * Every communicator uses MPI_ERRORS_RETURN and every return code is checked:
 * a failure prints "ulyharness: rank R: <reason>" (hx_fail) and returns
 * HX_FAIL up to main, which calls hx_job_abort: MPI_Abort, so the launcher
 * kills every rank and the job exits non-zero. A rank that dies
 * outright (killed) is handled by mpirun, which then kills the others. A rank
 * that hangs is caught by the watchdog thread: when the op this rank is in
 * has made no progress for --timeout seconds it prints the rank and the op
 * and aborts the job the same way (exit status 1). Progress is judged, not
 * assumed from a fixed limit: outside MPI, the main thread using CPU time
 * (a compute loop: an attention block, a GEMM, the reference, the start-up)
 * counts as a heartbeat, so a slow but live rank is never called hung and a
 * stopped or sleeping one is; inside MPI the CPU is spent polling, so the
 * limit there is the timeout plus twice the longest op this rank has run
 * (a peer doing the same op may take that long) plus a grace of 3 s
 * (timeout/4 for short timeouts), so the first message names the hung
 * rank; with the default 20 s a hang in a small run ends the job within
 * about 21-24 s. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hx.h"
#include "out_file.h"

/* The process's own state, in one place: what hx_fail, hx_job_abort and
 * the watchdog thread need and have no context to reach it through (the
 * thread watches the whole process; a failure can be reported from any
 * function). The rank and size are set once after MPI_Init; the rest is
 * written by the main thread and read by the watchdog, hence atomic. */
static struct hx_proc {
    int rank, size;                  /* in MPI_COMM_WORLD (hx_proc_init) */
    _Atomic double last;             /* watchdog: hx_now() at the last beat */
    _Atomic int op;                  /* the op (or -1) and the phase it is in */
    const char *_Atomic name;
    _Atomic int in_mpi;
    _Atomic int peer;                /* the world rank this rank waits on inside MPI, or -1: unknown */
    double alive_last;               /* rank 0: when it last told the others it is alive */
    int64_t alive_sent;              /* rank 0: how many times */
    _Atomic double longest_op_s;     /* the longest op this rank has run: a peer's op may take as long */
    double timeout, grace;           /* set before the thread starts */
    clockid_t main_cpu;              /* the main thread's CPU clock: its advance is a heartbeat */
} proc = {.size = 1, .op = -1, .name = "startup", .peer = -1};

int hx_proc_init(void)
{
    HX_TRY(HX_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)));
    HX_TRY(HX_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &proc.rank)));
    return HX_MPI(MPI_Comm_size(MPI_COMM_WORLD, &proc.size));
}

int hx_world_rank(void) { return proc.rank; }
int hx_world_size(void) { return proc.size; }

double hx_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *hx_basename(const char *path)
{
    const char *base = strrchr(path, '/');
    return base ? base + 1 : path;
}

int hx_fail(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "ulyharness: rank %d: %s\n", proc.rank, msg);
    fflush(stderr);
    return HX_FAIL;
}

/* The one way out after a failure, from main or from the watchdog thread.
 * Open MPI's abort from a thread other than main only asks the launcher to
 * kill the job: if that has not ended this process within a few seconds, it
 * leaves without MPI. */
void hx_job_abort(int code)
{
    out_file_temporaries_remove(); /* rank 0's unfinished trace */
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin) {
        MPI_Abort(MPI_COMM_WORLD, code);
        sleep(5);
    }
    _exit(code);
}

int hx_mpi_check(int rc, const char *what, const char *file, int line)
{
    if (rc == MPI_SUCCESS) return HX_OK;
    char es[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, es, &len);
    return hx_fail("MPI error in %s (%s:%d): %s", what, hx_basename(file), line, es);
}

int hx_mpi_done(int rc, const char *what, const char *file, int line)
{
    hx_in_mpi(0);
    return hx_mpi_check(rc, what, file, line);
}

int hx_count(int64_t n, const char *what, int *count)
{
    if (n < 0 || n > INT_MAX) return hx_fail("%s: count %lld does not fit an MPI int count", what, (long long)n);
    *count = (int)n;
    return HX_OK;
}

/* ---------------------------------------------------------------- wrappers */

int hx_alltoall(const hx_group *g, const float *send, float *recv, int64_t count, int64_t *bytes)
{
    int n = 0;
    HX_TRY(hx_count(count, "alltoall", &n));
    HX_TRY(HX_MPI(MPI_Alltoall(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, g->comm)));
    if (bytes) *bytes += (int64_t)n * (g->size - 1) * (int64_t)sizeof(float);
    return HX_OK;
}

int hx_allgather(const hx_group *g, const float *send, float *recv, int64_t count, int64_t *bytes)
{
    int n = 0;
    HX_TRY(hx_count(count, "allgather", &n));
    HX_TRY(HX_MPI(MPI_Allgather(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, g->comm)));
    if (bytes) *bytes += (int64_t)n * (g->size - 1) * (int64_t)sizeof(float);
    return HX_OK;
}

int hx_reduce_scatter(const hx_group *g, const float *send, float *recv, int64_t block, int64_t *bytes)
{
    int n = 0;
    HX_TRY(hx_count(block, "reduce_scatter", &n));
    HX_TRY(HX_MPI(MPI_Reduce_scatter_block(send, recv, n, MPI_FLOAT, MPI_SUM, g->comm)));
    if (bytes) *bytes += (int64_t)n * (g->size - 1) * (int64_t)sizeof(float);
    return HX_OK;
}

/* The all-reduce the model prices: reduce-scatter, then all-gather, so the
 * bytes leaving a rank are 2 (p-1)/p n. n must divide evenly. */
int hx_allreduce_ring(const hx_group *g, float *buf, float *tmp_block, int64_t n, int64_t *bytes)
{
    if (n % g->size != 0)
        return hx_fail("all-reduce of %lld elements over %d ranks: not divisible", (long long)n, g->size);
    const int64_t block = n / g->size;
    HX_TRY(hx_reduce_scatter(g, buf, tmp_block, block, bytes));
    return hx_allgather(g, tmp_block, buf, block, bytes);
}

int hx_isend(const hx_group *g, const float *buf, int64_t count, int dest, int tag, MPI_Request *req,
             int64_t *bytes)
{
    int n = 0;
    HX_TRY(hx_count(count, "isend", &n));
    HX_TRY(HX_MPI(MPI_Isend(buf, n, MPI_FLOAT, dest, tag, g->comm, req)));
    if (bytes && dest != g->rank) *bytes += (int64_t)n * (int64_t)sizeof(float);
    return HX_OK;
}

int hx_irecv(const hx_group *g, float *buf, int64_t count, int src, int tag, MPI_Request *req)
{
    int n = 0;
    HX_TRY(hx_count(count, "irecv", &n));
    return HX_MPI(MPI_Irecv(buf, n, MPI_FLOAT, src, tag, g->comm, req));
}

int hx_sendrecv(const hx_group *g, const float *send, int dest, float *recv, int src, int64_t count, int tag,
                int64_t *bytes)
{
    int n = 0;
    HX_TRY(hx_count(count, "sendrecv", &n));
    HX_TRY(HX_MPI(MPI_Sendrecv(send, n, MPI_FLOAT, dest, tag, recv, n, MPI_FLOAT, src, tag, g->comm,
                               MPI_STATUS_IGNORE)));
    if (bytes && dest != g->rank) *bytes += (int64_t)n * (int64_t)sizeof(float);
    return HX_OK;
}

int hx_waitall(int n, MPI_Request *reqs)
{
    if (n <= 0) return HX_OK;
    MPI_Status st[8];
    MPI_Status *sp = n <= 8 ? st : MPI_STATUSES_IGNORE;
    hx_in_mpi(1);
    int rc = MPI_Waitall(n, reqs, sp);
    hx_in_mpi(0);
    if (rc != MPI_SUCCESS && rc == MPI_ERR_IN_STATUS && sp != MPI_STATUSES_IGNORE) {
        for (int i = 0; i < n; i++)
            if (st[i].MPI_ERROR != MPI_SUCCESS)
                return hx_mpi_check(st[i].MPI_ERROR, "MPI_Waitall (request)", __FILE__, __LINE__);
    }
    return hx_mpi_check(rc, "MPI_Waitall", __FILE__, __LINE__);
}

/* ---------------------------------------------------------------- watchdog */

void hx_in_mpi(int in) { atomic_store_explicit(&proc.in_mpi, in, memory_order_relaxed); }

void hx_beat(int op_id, const char *name)
{
    atomic_store(&proc.op, op_id);
    atomic_store(&proc.name, name);
    atomic_store(&proc.last, hx_now());
}

void hx_watchdog_op_time(double seconds)
{
    if (seconds > atomic_load(&proc.longest_op_s)) atomic_store(&proc.longest_op_s, seconds);
}

static double cpu_s(clockid_t clk)
{
    struct timespec ts;
    if (clock_gettime(clk, &ts) != 0) return 0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *wd_main(void *arg)
{
    (void)arg;
    const struct timespec tick = {0, 100 * 1000 * 1000};
    double cpu_ref = cpu_s(proc.main_cpu);
    for (;;) {
        nanosleep(&tick, NULL);
        const int in_mpi = atomic_load(&proc.in_mpi);
        /* outside MPI, the main thread computing is progress: 2 ms of CPU
         * since the last beat (a sleeping or stopped thread gets none) */
        const double cpu = cpu_s(proc.main_cpu);
        if (in_mpi) {
            cpu_ref = cpu; /* polling inside MPI is not progress */
        } else if (cpu - cpu_ref >= 0.002) {
            atomic_store(&proc.last, hx_now());
            cpu_ref = cpu;
        }
        double idle = hx_now() - atomic_load(&proc.last);
        /* A rank blocked inside MPI waits longer than one stuck outside it:
         * for a peer still computing the longest op, and a grace so that
         * the hung rank is the one that reports first (and names itself)
         * before the others abort the job. */
        const double limit = proc.timeout + (in_mpi ? proc.grace + 2 * atomic_load(&proc.longest_op_s) : 0);
        if (idle > limit) {
            int op = atomic_load(&proc.op);
            const char *nm = atomic_load(&proc.name);
            const int peer = atomic_load(&proc.peer);
            char why[160];
            if (!in_mpi) snprintf(why, sizeof why, "HUNG outside MPI (this rank is the hung one)");
            else if (peer >= 0)
                snprintf(why, sizeof why, "blocked inside MPI waiting for rank %d, which sent nothing: rank %d is the "
                                          "stopped or hung one", peer, peer);
            else snprintf(why, sizeof why, "blocked inside MPI, waiting for a peer");
            fprintf(stderr, "ulyharness: rank %d: watchdog: no progress for %.0f s in op %d (%s): %s; aborting the job\n",
                    proc.rank, idle, op, nm ? nm : "?", why);
            fflush(stderr);
            hx_job_abort(1);
        }
    }
    return NULL;
}

void hx_wait_for(int world_rank) { atomic_store(&proc.peer, world_rank); }

/* ------------------------------------------- rank 0's long local work
 *
 * While rank 0 works alone (the float64 reference check) the others wait
 * for its broadcast. A rank stopped there stops its own watchdog with it,
 * so the waiting ranks must judge it: rank 0 sends each of them an empty
 * "alive" message from its work loops (hx_alive_tick, at most every
 * timeout/4 s), each one a beat for the receiver's watchdog; the waiting
 * ranks post the broadcast non-blocking and test it, taking these messages,
 * between short sleeps, so a silent rank 0 trips their watchdog within its
 * usual limit inside MPI and the message names rank 0. The broadcast's last
 * element is how many were sent, so every one is received before it ends. */
#define HX_TAG_ALIVE 190

void hx_alive_tick(void)
{
    if (proc.rank != 0 || proc.size < 2) return;
    const double now = hx_now(), every = proc.timeout > 0 && proc.timeout < 4 ? proc.timeout / 4 : 1.0;
    atomic_store(&proc.last, now); /* rank 0 working is its own progress too */
    if (now - proc.alive_last < every) return;
    proc.alive_last = now;
    proc.alive_sent++;
    for (int r = 1; r < proc.size; r++) {
        MPI_Request rq;
        if (MPI_Isend(NULL, 0, MPI_BYTE, r, HX_TAG_ALIVE, MPI_COMM_WORLD, &rq) == MPI_SUCCESS) MPI_Request_free(&rq);
        else proc.alive_sent = -1; /* not counted: the receivers would wait for it; a failure ends the job below */
    }
}

/* every rank: buf[0..n-1] from rank 0 (which adds buf[n], its alive count) */
int hx_bcast_after_root_work(double *buf, int n)
{
    if (proc.alive_sent < 0) return hx_fail("cannot send the alive message to the waiting ranks");
    MPI_Request rq;
    if (proc.rank == 0) {
        buf[n] = (double)proc.alive_sent;
        HX_TRY(HX_MPI(MPI_Ibcast(buf, n + 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &rq)));
        return HX_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
    const struct timespec nap = {0, 2 * 1000 * 1000};
    hx_wait_for(0);
    atomic_store(&proc.last, hx_now());
    int64_t got = 0;
    int done = 0;
    HX_TRY(HX_MPI(MPI_Ibcast(buf, n + 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &rq)));
    hx_in_mpi(1);
    int rc = MPI_SUCCESS;
    for (;;) {
        int more = 1;
        while (rc == MPI_SUCCESS && more) {
            rc = MPI_Iprobe(0, HX_TAG_ALIVE, MPI_COMM_WORLD, &more, MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS && more) {
                rc = MPI_Recv(NULL, 0, MPI_BYTE, 0, HX_TAG_ALIVE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                got++;
                atomic_store(&proc.last, hx_now());
            }
        }
        if (rc == MPI_SUCCESS && !done) rc = MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || (done && got >= (int64_t)buf[n])) break;
        nanosleep(&nap, NULL);
    }
    hx_wait_for(-1);
    return hx_mpi_done(rc, "MPI_Ibcast (after rank 0's reference check)", __FILE__, __LINE__);
}

int hx_watchdog_start(double timeout_s)
{
    if (timeout_s <= 0) return HX_OK;
    proc.timeout = timeout_s;
    proc.grace = timeout_s < 12 ? timeout_s / 4 : 3;
    if (pthread_getcpuclockid(pthread_self(), &proc.main_cpu) != 0) proc.main_cpu = CLOCK_PROCESS_CPUTIME_ID;
    atomic_store(&proc.last, hx_now());
    pthread_t th;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    const int rc = pthread_create(&th, &at, wd_main, NULL);
    pthread_attr_destroy(&at);
    if (rc != 0) return hx_fail("cannot start the watchdog thread: %s", strerror(rc));
    return HX_OK;
}
