/* hx_microbench.c: the collective micro-benchmark (--microbench), in the
 * manner of nccl-tests and OSU, over all ranks, float32, to calibrate the
 * cluster model.
 *
 * Size, algbw and busbw as nccl-tests defines them: size is the send buffer
 * of alltoall and reduce_scatter, the receive buffer of allgather, the
 * buffer of allreduce, the message of sendrecv (bytes per rank);
 * algbw = size / time; busbw = algbw x (p-1)/p for alltoall, allgather and
 * reduce_scatter, x 2(p-1)/p for allreduce, x 1 for sendrecv. "allreduce" is
 * the harness's ring all-reduce (reduce-scatter then all-gather, what the
 * plan ops execute); "allreduce_mpi" is the library's MPI_Allreduce.
 * Time: an MPI_Barrier, then the collective, per rep; a rep's time is the
 * slowest rank's; the table shows the median over reps. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "hx.h"
#include "hx_trace.h"
#include "trace_read.h"

typedef enum { MB_A2A, MB_AG, MB_RS, MB_AR, MB_AR_MPI, MB_SR, MB_N } mb_kind;
static const char *const mb_name[MB_N] = {"alltoall", "allgather", "reduce_scatter", "allreduce", "allreduce_mpi",
                                          "sendrecv"};

/* each kind as the trace reader names its collective (allreduce_mpi: none) */
static const uly_coll mb_coll[MB_N] = {ULY_COLL_ALLTOALL, ULY_COLL_ALLGATHER, ULY_COLL_REDUCE_SCATTER,
                                       ULY_COLL_ALLREDUCE, ULY_COLL_NONE,      ULY_COLL_SENDRECV};

/* nccl-tests' busbw factor: the bytes sent per rank over size */
static double busbw_factor(mb_kind k, int p) { return trace_coll_volume_factor(mb_coll[k], p); }

/* elements per rank of the "count" nccl-tests reports, from size in bytes */
static int64_t count_for(mb_kind k, int64_t size, int p)
{
    int64_t n = size / (int64_t)sizeof(float);
    switch (k) {
    case MB_A2A:
    case MB_AG:
    case MB_RS: return n / p > 0 ? n / p : 1; /* per peer / per rank block */
    case MB_AR: return (n / p > 0 ? n / p : 1) * p;
    default: return n > 0 ? n : 1;
    }
}

static int run_one(mb_kind k, const hx_group *g, float *s, float *r, float *tmp, int64_t cnt, int64_t *bytes)
{
    int n = 0;
    switch (k) {
    case MB_A2A: return hx_alltoall(g, s, r, cnt, bytes);
    case MB_AG: return hx_allgather(g, s, r, cnt, bytes);
    case MB_RS: return hx_reduce_scatter(g, s, r, cnt, bytes);
    case MB_AR: return hx_allreduce_ring(g, s, tmp, cnt, bytes);
    case MB_AR_MPI:
        HX_TRY(hx_count(cnt, "allreduce", &n));
        HX_TRY(HX_MPI(MPI_Allreduce(MPI_IN_PLACE, s, n, MPI_FLOAT, MPI_SUM, g->comm)));
        *bytes += 2 * (g->size - 1) * (cnt / g->size) * (int64_t)sizeof(float); /* nominal: the algorithm is MPI's */
        return HX_OK;
    case MB_SR: return hx_sendrecv(g, s, g->next, r, g->prev, cnt, 21, bytes);
    default: return HX_OK;
    }
}

/* The overlap this executor achieves, measured the way the ring attention
 * runs: a ring hop of the largest message (Isend to the next rank, Irecv
 * from the previous) posted, then compute in chunks (128^3 SGEMMs, about
 * the attention kernel's block) with MPI_Testall after each chunk, then the
 * wait. Per rep, after a barrier each: the transfer alone (T_x), the compute
 * alone (T_c), both (its compute part T_bc, with the progress tests, and
 * the wait after it T_bw); a rep's times are the slowest rank's, the medians
 * over reps are kept. Then
 *   overlap  = (T_x - T_bw) / min(T_x, T_c): the share of the transfer that
 *              did not show as waiting after the compute;
 *   slowdown = (T_bc - T_c) / (overlap x min(T_x, T_c)): how much longer the
 *              compute ran per second of transfer hidden under it (1: the
 *              rank's own core moved the bytes; 0: something else did).
 * The compute is sized to about twice the transfer alone. */
static int overlap_bench(const hx_opts *o, hx_trace *trace, const hx_group *g, float *s, float *r, double *tr,
                         hx_mb_result *res)
{
    const int64_t cnt = o->mb_max / (int64_t)sizeof(float), n = 128;
    const int reps = o->reps, nt = 4 * reps;
    float *a = hx_falloc(3 * n * n, "overlap GEMM");
    double *t = hx_alloc(sizeof(double) * (size_t)nt, "overlap times");
    if (!a || !t) {
        free(a);
        free(t);
        return HX_FAIL;
    }
    for (int64_t i = 0; i < 3 * n * n; i++) a[i] = (float)(i % 13) * 0.01f;
    int rc = HX_OK;
    MPI_Request rq[2];
    /* one mode: 0 transfer, 1 compute, 2 both; *tc, *tw: compute and wait parts */
#define OV_POST()                                                                                                        do {                                                                                                                     if ((rc = hx_irecv(g, r, cnt, g->prev, 31, &rq[0]))) goto out;                                                      if ((rc = hx_isend(g, s, cnt, g->next, 31, &rq[1], NULL))) goto out;                                            } while (0)
    int chunks = 4;
    for (int pass = 0; pass < 2; pass++) { /* pass 0 sizes the compute, pass 1 measures */
        const int nrep = pass ? reps : (o->warmup > 0 ? o->warmup : 1);
        for (int i = 0; i < nrep; i++) {
            double v[4];
            if ((rc = HX_MPI(MPI_Barrier(g->comm)))) goto out;
            double t0 = hx_now();
            OV_POST();
            if ((rc = hx_waitall(2, rq))) goto out;
            v[0] = hx_now() - t0;
            if ((rc = HX_MPI(MPI_Barrier(g->comm)))) goto out;
            t0 = hx_now();
            for (int k = 0; k < chunks; k++)
                if ((rc = hx_gemm(0, 0, n, n, n, 1.0f, a, n, a + n * n, n, 0.0f, a + 2 * n * n, n))) goto out;
            v[1] = hx_now() - t0;
            if ((rc = HX_MPI(MPI_Barrier(g->comm)))) goto out;
            t0 = hx_now();
            OV_POST();
            for (int k = 0; k < chunks; k++) {
                int flag = 0;
                if ((rc = hx_gemm(0, 0, n, n, n, 1.0f, a, n, a + n * n, n, 0.0f, a + 2 * n * n, n))) goto out;
                if ((rc = HX_MPI(MPI_Testall(2, rq, &flag, MPI_STATUSES_IGNORE)))) goto out;
            }
            const double t1 = hx_now();
            if ((rc = hx_waitall(2, rq))) goto out;
            v[2] = t1 - t0;
            v[3] = hx_now() - t1;
            if ((rc = HX_MPI(MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_DOUBLE, MPI_MAX, g->comm)))) goto out;
            if (!pass) {
                /* the compute: about twice the transfer alone */
                const double per = v[1] / chunks;
                int want = per > 0 ? (int)(2 * v[0] / per) + 1 : 4;
                chunks = want < 4 ? 4 : want > 100000 ? 100000 : want;
            } else {
                for (int m = 0; m < 4; m++) t[m * reps + i] = v[m];
            }
        }
    }
    double med[4];
    for (int m = 0; m < 4; m++) med[m] = hx_median(t + m * reps, reps);
    const double tx = med[0], tc = med[1], mn = tx < tc ? tx : tc;
    double ov = mn > 0 ? (tx - med[3]) / mn : 1;
    ov = ov < 0 ? 0 : ov > 1 ? 1 : ov;
    double sl = ov * mn > 0 ? (med[2] - tc) / (ov * mn) : 0;
    sl = sl < 0 ? 0 : sl > 1 ? 1 : sl;
    res->overlap = ov;
    if (g->rank == 0) {
        if (!o->quiet)
            printf("# overlap: %lld B ring hop alone %.1f us, %d GEMM chunks alone %.1f us, both: compute %.1f us + "
                   "wait %.1f us: overlap %.3f, compute slowdown %.3f\n",
                   (long long)(cnt * 4), tx * 1e6, chunks, tc * 1e6, med[2] * 1e6, med[3] * 1e6, ov, sl);
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "type", "overlap");
        cJSON_AddNumberToObject(x, "group_size", g->size);
        cJSON_AddNumberToObject(x, "size_bytes", (double)(cnt * 4));
        cJSON_AddNumberToObject(x, "chunks", chunks);
        cJSON_AddNumberToObject(x, "transfer_s", tx);
        cJSON_AddNumberToObject(x, "compute_s", tc);
        cJSON_AddNumberToObject(x, "both_compute_s", med[2]);
        cJSON_AddNumberToObject(x, "both_wait_s", med[3]);
        cJSON_AddNumberToObject(x, "overlap", ov);
        cJSON_AddNumberToObject(x, "slowdown", sl);
        cJSON_AddNumberToObject(x, "reps", reps);
        rc = hx_trace_line(trace, x);
    }
out:
#undef OV_POST
    free(a);
    free(t);
    return rc;
}

/* every collective at every size: the table and the trace lines. A size of
 * the ladder that rounds (to whole float32 elements per rank) to the size
 * its predecessor gave is measured once: a point appears once per
 * collective, as the trace reader requires. */
static int sweep(const hx_opts *o, hx_trace *trace, const hx_group *gp, float *s, float *r, float *tmp, double *tr,
                 hx_mb_result *res)
{
    const hx_group g = *gp;
    const int p = g.size;
    const int64_t maxn = o->mb_max / (int64_t)sizeof(float) + p;
    for (int64_t i = 0; i < maxn; i++) s[i] = (float)(i % 97) * 0.01f;
    if (g.rank == 0 && !o->quiet) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
        int len = 0;
        MPI_Get_library_version(lib, &len);
        char *nl = strchr(lib, '\n');
        if (nl) *nl = 0;
        char *cm = strchr(lib, ',');
        if (cm) *cm = 0;
        printf("# ulyharness microbench: %d ranks, %s, float32, %d warm-up + %d reps\n", p, lib, o->warmup, o->reps);
        printf("# time: slowest rank per rep (MPI_Barrier before each), median over reps; bandwidths from it\n");
        printf("# size: nccl-tests' definition (bytes per rank); busbw = algbw x (p-1)/p (alltoall, allgather,\n");
        printf("#   reduce_scatter), 2(p-1)/p (allreduce), 1 (sendrecv); allreduce = reduce-scatter + all-gather\n");
        printf("# %-14s %12s %10s %14s %12s %12s %12s %12s\n", "collective", "size(B)", "count", "bytes_sent(B)",
               "time(us)", "min(us)", "algbw(GB/s)", "busbw(GB/s)");
    }
    int merged = 0;
    res->collectives = MB_N;
    for (int k = 0; k < MB_N; k++) {
        /* the all-reduces work in place: zeros stay finite however many reps */
        if (k == MB_AR || k == MB_AR_MPI) memset(s, 0, sizeof(float) * (size_t)maxn);
        int64_t prev = -1; /* the size of this collective's last point */
        for (int64_t size = o->mb_min; size <= o->mb_max; size *= 2) {
            const int top = size > o->mb_max / 2; /* no overflow past the top */
            const int64_t cnt = count_for((mb_kind)k, size, p);
            const int64_t sz = k == MB_A2A || k == MB_AG || k == MB_RS ? cnt * p * 4 : cnt * 4;
            if (sz == prev) { /* every rank alike: the sizes are the same everywhere */
                merged++;
                if (top) break;
                continue;
            }
            prev = sz;
            int64_t bytes = 0, junk = 0;
            hx_beat(-1, mb_name[k]);
            for (int w = 0; w < o->warmup; w++) {
                HX_TRY(HX_MPI(MPI_Barrier(g.comm)));
                HX_TRY(run_one((mb_kind)k, &g, s, r, tmp, cnt, &junk));
            }
            for (int i = 0; i < o->reps; i++) {
                HX_TRY(HX_MPI(MPI_Barrier(g.comm)));
                double t0 = hx_now();
                int64_t b = 0;
                HX_TRY(run_one((mb_kind)k, &g, s, r, tmp, cnt, &b));
                tr[i] = hx_now() - t0;
                bytes = b;
                hx_beat(-1, mb_name[k]);
            }
            HX_TRY(HX_MPI(MPI_Allreduce(MPI_IN_PLACE, tr, o->reps, MPI_DOUBLE, MPI_MAX, g.comm)));
            double mn = 1e300, mx = 0;
            for (int i = 0; i < o->reps; i++) {
                mn = tr[i] < mn ? tr[i] : mn;
                mx = tr[i] > mx ? tr[i] : mx;
            }
            const double med = hx_median(tr, o->reps);
            const double alg = med > 0 ? (double)sz / med / 1e9 : 0, bus = alg * busbw_factor((mb_kind)k, p);
            res->points++;
            if (res->points == 1 || sz < res->min_bytes) res->min_bytes = sz;
            if (sz > res->max_bytes) res->max_bytes = sz;
            if (g.rank == 0) {
                if (!o->quiet)
                    printf("  %-14s %12lld %10lld %14lld %12.2f %12.2f %12.3f %12.3f\n", mb_name[k], (long long)sz,
                           (long long)cnt, (long long)bytes, med * 1e6, mn * 1e6, alg, bus);
                cJSON *x = cJSON_CreateObject();
                cJSON_AddStringToObject(x, "type", "microbench");
                cJSON_AddStringToObject(x, "kind", "microbench");
                cJSON_AddStringToObject(x, "coll", mb_name[k]);
                cJSON_AddNumberToObject(x, "group_size", p);
                cJSON_AddNumberToObject(x, "size_bytes", (double)sz);
                cJSON_AddNumberToObject(x, "count", (double)cnt);
                cJSON_AddNumberToObject(x, "bytes_sent", (double)bytes);
                cJSON *t = cJSON_AddObjectToObject(x, "time_s");
                cJSON_AddNumberToObject(t, "median", med);
                cJSON_AddNumberToObject(t, "min", mn);
                cJSON_AddNumberToObject(t, "max", mx);
                cJSON_AddNumberToObject(x, "algbw_GBps", alg);
                cJSON_AddNumberToObject(x, "busbw_GBps", bus);
                cJSON_AddNumberToObject(x, "busbw_factor", busbw_factor((mb_kind)k, p));
                cJSON_AddNumberToObject(x, "reps", o->reps);
                HX_TRY(hx_trace_line(trace, x));
            }
            if (top) break;
        }
    }
    if (g.rank == 0 && merged && !o->quiet)
        printf("# %d size%s of the ladder measured once: rounded to whole float32 elements per rank, each gave the "
               "size before it\n", merged, merged == 1 ? "" : "s");
    HX_TRY(overlap_bench(o, trace, gp, s, r, tr, res));
    if (g.rank == 0) {
        cJSON *sm = cJSON_CreateObject();
        cJSON_AddStringToObject(sm, "type", "summary");
        cJSON_AddBoolToObject(sm, "ok", 1);
        HX_TRY(hx_trace_line(trace, sm));
    }
    return HX_OK;
}

int hx_microbench(const hx_opts *o, hx_trace *trace, hx_mb_result *res)
{
    memset(res, 0, sizeof *res);
    hx_group g;
    g.comm = MPI_COMM_WORLD;
    g.size = hx_world_size();
    g.rank = hx_world_rank();
    g.next = (g.rank + 1) % g.size;
    g.prev = (g.rank + g.size - 1) % g.size;
    const int p = g.size;
    if (p < 2) {
        if (g.rank == 0) fprintf(stderr, "ulyharness: --microbench needs at least 2 ranks\n");
        return HX_USAGE;
    }
    HX_TRY(hx_mem_check_microbench(o)); /* exit 2 naming --mb-max, not out of memory on every rank */
    const int64_t maxn = o->mb_max / (int64_t)sizeof(float) + p;
    float *s = hx_falloc(maxn + 64, "send buffer");
    float *r = hx_falloc(maxn + 64, "receive buffer");
    float *tmp = hx_falloc(maxn / p + 64, "block");
    double *tr = hx_alloc(sizeof(double) * (size_t)o->reps, "times");
    const int rc = s && r && tmp && tr ? sweep(o, trace, &g, s, r, tmp, tr, res) : HX_FAIL;
    free(s);
    free(r);
    free(tmp);
    free(tr);
    return rc;
}
