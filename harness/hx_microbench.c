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

typedef enum { MB_A2A, MB_AG, MB_RS, MB_AR, MB_AR_MPI, MB_SR, MB_N } mb_kind;
static const char *const mb_name[MB_N] = {"alltoall", "allgather", "reduce_scatter", "allreduce", "allreduce_mpi",
                                          "sendrecv"};

static double busbw_factor(mb_kind k, int p)
{
    switch (k) {
    case MB_AR:
    case MB_AR_MPI: return 2.0 * (p - 1) / p;
    case MB_SR: return 1.0;
    default: return (double)(p - 1) / p;
    }
}

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

/* every collective at every size: the table and the trace lines */
static int sweep(const hx_opts *o, hx_trace *trace, const hx_group *gp, float *s, float *r, float *tmp, double *tr)
{
    const hx_group g = *gp;
    const int p = g.size;
    const int64_t maxn = o->mb_max / (int64_t)sizeof(float) + p;
    for (int64_t i = 0; i < maxn; i++) s[i] = (float)(i % 97) * 0.01f;
    if (g.rank == 0) {
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
    for (int k = 0; k < MB_N; k++) {
        /* the all-reduces work in place: zeros stay finite however many reps */
        if (k == MB_AR || k == MB_AR_MPI) memset(s, 0, sizeof(float) * (size_t)maxn);
        for (int64_t size = o->mb_min; size <= o->mb_max; size *= 2) {
            const int64_t cnt = count_for((mb_kind)k, size, p);
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
            const int64_t sz = k == MB_A2A || k == MB_AG || k == MB_RS ? cnt * p * 4 : cnt * 4;
            const double alg = med > 0 ? (double)sz / med / 1e9 : 0, bus = alg * busbw_factor((mb_kind)k, p);
            if (g.rank == 0) {
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
            if (size > o->mb_max / 2) break; /* no overflow past the top */
        }
    }
    if (g.rank == 0) {
        cJSON *sm = cJSON_CreateObject();
        cJSON_AddStringToObject(sm, "type", "summary");
        cJSON_AddBoolToObject(sm, "ok", 1);
        HX_TRY(hx_trace_line(trace, sm));
    }
    return HX_OK;
}

int hx_microbench(const hx_opts *o, hx_trace *trace)
{
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
    const int64_t maxn = o->mb_max / (int64_t)sizeof(float) + p;
    float *s = hx_falloc(maxn + 64, "send buffer");
    float *r = hx_falloc(maxn + 64, "receive buffer");
    float *tmp = hx_falloc(maxn / p + 64, "block");
    double *tr = hx_alloc(sizeof(double) * (size_t)o->reps, "times");
    const int rc = s && r && tmp && tr ? sweep(o, trace, &g, s, r, tmp, tr) : HX_FAIL;
    free(s);
    free(r);
    free(tmp);
    free(tr);
    return rc;
}
