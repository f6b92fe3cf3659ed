/* a2a_bench: is the harness's all-to-all as fast as MPI's?
 *
 * For each size, sets up the harness for Ulysses over all ranks (the plan,
 * the communicators, every buffer), then alternates, rep by rep:
 *   op:   hx_exec_op(a2a_q): the dispatch by type, the checked, byte-counting
 *         wrapper, MPI_Alltoall on the op's own send/receive buffers;
 *   bare: MPI_Alltoall on separate buffers, the same count, MPI_COMM_WORLD.
 * Each rep starts after an MPI_Barrier; a rep's time is the slowest rank's;
 * the median over reps gives bandwidth = bytes sent per rank / time. The
 * ratio op/bare bandwidth is the number to watch (target >= 0.9). Which of
 * the two goes first alternates from rep to rep.
 *
 *   mpirun -np 4 a2a_bench [--heads A --head-dim D --reps R] [SEQ ...]
 * SEQ: sequence lengths (default 1K 4K 16K); a2a_q sends (u-1)/u of
 * SEQ/u x A x D floats per rank. */
#include <stdlib.h>
#include <string.h>

#include "hx.h"
#include "hx_trace.h"

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmpd);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One sequence length: the harness set up for it, the paired reps, one
 * table row; *worst: the lowest paired ratio so far. */
static int bench_seq(int64_t seq, int64_t heads, int64_t hd, int reps, double *worst)
{
    const int P = hx_world_size();
    hx_opts o;
    hx_args_defaults(&o);
    o.strategy = "ulysses";
    o.seq = seq;
    o.heads = heads;
    o.head_dim = hd;
    o.ffn = 4 * heads * hd;
    o.vocab = 256;
    o.zero = 0;
    o.timeout_s = 0;
    hx_ctx *c = calloc(1, sizeof *c);
    if (!c) return hx_fail("out of memory: the context");
    int rc = hx_setup(c, &o);
    if (rc == HX_OK) rc = hx_schedule(c);
    int id = -1;
    for (int i = 0; rc == HX_OK && i < c->plan.n_ops; i++)
        if (c->plan.ops[i].type == ULY_OPT_A2A_Q) id = i;
    if (rc == HX_OK && id < 0) rc = hx_fail("no a2a_q op in the plan");
    const int64_t cnt = rc == HX_OK ? c->Rg * (c->gq / c->u) * c->d : 0; /* per peer, as the op passes it */
    float *s = hx_falloc(cnt * P, "bare send"), *r = hx_falloc(cnt * P, "bare recv");
    double *top = hx_alloc(sizeof(double) * (size_t)reps, "t"), *tb = hx_alloc(sizeof(double) * (size_t)reps, "t");
    double *pr = hx_alloc(sizeof(double) * (size_t)reps, "ratios");
    if (rc == HX_OK && (!s || !r || !top || !tb || !pr)) rc = HX_FAIL;
    for (int64_t i = 0; rc == HX_OK && i < cnt * P; i++) s[i] = (float)i;
    int64_t bytes = 0;
    for (int rep = -2; rc == HX_OK && rep < reps; rep++) {
        double t_op = 0, t_bare = 0;
        for (int half = 0; rc == HX_OK && half < 2; half++) {
            /* which one goes first alternates rep by rep */
            const int do_op = (half == 0) == (rep % 2 == 0);
            rc = HX_MPI(MPI_Barrier(MPI_COMM_WORLD));
            const double t0 = hx_now();
            if (rc == HX_OK && do_op) {
                c->st[id].done = 0;
                c->st[id].bytes_pass = 0;
                rc = hx_exec_op(c, id);
                t_op = hx_now() - t0;
                bytes = c->st[id].bytes_pass;
            } else if (rc == HX_OK) {
                rc = HX_MPI(MPI_Alltoall(s, (int)cnt, MPI_FLOAT, r, (int)cnt, MPI_FLOAT, MPI_COMM_WORLD));
                t_bare = hx_now() - t0;
            }
        }
        if (rep >= 0) {
            top[rep] = t_op;
            tb[rep] = t_bare;
        }
    }
    if (rc == HX_OK) rc = HX_MPI(MPI_Allreduce(MPI_IN_PLACE, top, reps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    if (rc == HX_OK) rc = HX_MPI(MPI_Allreduce(MPI_IN_PLACE, tb, reps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    if (rc == HX_OK && bytes != c->plan.ops[id].bytes_sent)
        rc = hx_fail("a2a_q sent %lld bytes, the plan says %lld", (long long)bytes,
                     (long long)c->plan.ops[id].bytes_sent);
    if (rc == HX_OK) {
        for (int i = 0; i < reps; i++) pr[i] = tb[i] / top[i]; /* the two halves of one rep */
        const double paired = median(pr, reps);
        const double mo = median(top, reps), mb = median(tb, reps);
        if (paired < *worst) *worst = paired;
        if (hx_world_rank() == 0)
            printf("  %8lld %12lld %12.1f %12.1f %12.3f %12.3f %8.3f %8.3f\n", (long long)seq, (long long)bytes,
                   mo * 1e6, mb * 1e6, (double)bytes / mo / 1e9, (double)bytes / mb / 1e9, mb / mo, paired);
    }
    free(s);
    free(r);
    free(top);
    free(tb);
    free(pr);
    if (rc == HX_OK) rc = hx_release(c);
    free(c);
    return rc;
}

int main(int argc, char **argv)
{
    int provided;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return 1;
    int rc = hx_proc_init();
    if (rc) hx_job_abort(1);
    kern_blas_threads_set(1);
    int64_t heads = 8, hd = 64;
    int reps = 51;
    int64_t seqs[16];
    int nseq = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--heads") && i + 1 < argc) heads = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--head-dim") && i + 1 < argc) hd = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (nseq < 16) {
            char why[128];
            if (uly_size_parse(argv[i], &seqs[nseq], why, sizeof why) != ULY_OK) {
                if (hx_world_rank() == 0) fprintf(stderr, "a2a_bench: %s: %s\n", argv[i], why);
                MPI_Finalize();
                return 2;
            }
            nseq++;
        }
    }
    if (!nseq) {
        seqs[0] = 1024;
        seqs[1] = 4096;
        seqs[2] = 16384;
        nseq = 3;
    }
    if (hx_world_rank() == 0) {
        printf("# a2a_bench: Ulysses a2a_q as ulyharness runs it vs a bare MPI_Alltoall, %d ranks, %d reps each,\n",
               hx_world_size(), reps);
        printf("# alternating; time = slowest rank per rep, median over reps; bandwidth = bytes sent per rank / time\n");
        printf("# ratio: op bandwidth / bare bandwidth from the medians; paired: median over reps of the ratio\n");
        printf("#   within one rep (both halves share the machine's state: the steadier number, the one judged)\n");
        printf("# %8s %12s %12s %12s %12s %12s %8s %8s\n", "seq", "bytes/rank", "op(us)", "bare(us)", "op(GB/s)",
               "bare(GB/s)", "ratio", "paired");
    }
    double worst = 1e9;
    for (int si = 0; si < nseq && rc == HX_OK; si++) rc = bench_seq(seqs[si], heads, hd, reps, &worst);
    if (rc == HX_FAIL) hx_job_abort(1); /* the other ranks may be waiting in a collective */
    if (rc == HX_OK && hx_world_rank() == 0) printf("# lowest paired ratio %.3f (target >= 0.9)\n", worst);
    MPI_Finalize();
    return rc;
}
