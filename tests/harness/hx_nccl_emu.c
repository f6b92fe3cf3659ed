/* hx_nccl_emu.c: the GPU side of ulyharness's nccl backend emulated on the
 * host, so that the backend itself (hx_nccl*.c: layouts, staging, the ring's
 * data flow and dK,dV accumulators, byte counts, ZeRO and optimizer
 * plumbing, the check and the trace) runs in CI without a GPU. Built with
 * hx_nccl*.c into a library that main.c makes ulyharness_nccl_emu (and that
 * the handler test links), it replaces
 *   - the CUDA runtime calls the backend makes: device memory is host memory,
 *     streams and events are no-ops (every "kernel" has finished when it
 *     returns; event times are a constant 1 us), so the ordering that
 *     events give on a GPU is NOT exercised here;
 *   - kern_cuda: GEMMs through cblas_sgemm (the FP8 GEMM in
 *     hx_nccl_emu_fp8.c), attention through the CPU
 *     reference kernels on the widened 16-bit inputs (flash still refuses
 *     head dimensions other than 64 and 128), the merge through the CPU's;
 *   - kern_nccl: the same operations and byte counts over MPI, on a
 *     duplicate of the group's communicator (reductions summed in float32);
 *   - the hxk_ kernels of hx_nccl_kern.cu, element by element.
 * 16-bit values are rounded as the GPU rounds them (kern_cuda_host_*).
 * What it cannot show: anything about the CUDA kernels themselves (the
 * kcuda tests and the emulator of kernels/cuda do), stream ordering, NCCL,
 * speed. FAKE_NDEV sets the number of "GPUs" (default 8). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include <cblas.h>
#include <cuda_runtime.h>
#include <mpi.h>

#include "hx_nccl_kern.h"
#include "kern_attn.h"
#include "kern_cuda.h"
#include "kern_nccl.h"

/* ------------------------------------------------------------ runtime */
const char *cudaGetErrorName(cudaError_t e)
{
    (void)e;
    return "fakeError";
}
const char *cudaGetErrorString(cudaError_t e)
{
    (void)e;
    return "fake error";
}
cudaError_t cudaDeviceSynchronize(void)
{
    return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int *v)
{
    *v = 13000;
    return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int *v)
{
    *v = 13000;
    return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    *e = (cudaEvent_t)malloc(16);
    return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    free(e);
    return cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    (void)a;
    (void)b;
    *ms = 0.001f;
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    (void)e;
    (void)s;
    return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    (void)e;
    return cudaSuccess;
}
cudaError_t cudaMemset(void *p, int v, size_t n)
{
    memset(p, v, n);
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s)
{
    (void)s;
    memset(p, v, n);
    return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    (void)s;
    return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned f)
{
    (void)s;
    (void)e;
    (void)f;
    return cudaSuccess;
}

/* ------------------------------------------------------------ types */
static float ldv(const void *p, kern_cuda_dtype t, int64_t i)
{
    if (t == KERN_CUDA_F32) return ((const float *)p)[i];
    return kern_cuda_host_to_f32(((const uint16_t *)p)[i], t);
}
static void stv(void *p, kern_cuda_dtype t, int64_t i, float v)
{
    if (t == KERN_CUDA_F32)
        ((float *)p)[i] = v;
    else
        ((uint16_t *)p)[i] = kern_cuda_host_from_f32(v, t);
}
static float *widen(const void *p, kern_cuda_dtype t, int64_t n)
{
    float *o = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++) o[i] = ldv(p, t, i);
    return o;
}
static void narrow(void *dst, kern_cuda_dtype t, const float *src, int64_t n)
{
    for (int64_t i = 0; i < n; i++) stv(dst, t, i, src[i]);
}

/* ------------------------------------------------------------ kern_cuda */
const char *kern_cuda_last_error(void)
{
    return "fake";
}
const char *kern_cuda_build_info(void)
{
    return "fake GPU (host emulation)";
}
kern_cuda_status kern_cuda_device_count(int *n)
{
    *n = getenv("FAKE_NDEV") ? atoi(getenv("FAKE_NDEV")) : 8;
    return KERN_CUDA_OK;
}
kern_cuda_status kern_cuda_device_query(int dev, struct kern_cuda_device_info *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->name, sizeof o->name, "fake GPU %d", dev);
    o->major = 9;
    return KERN_CUDA_OK;
}
kern_cuda_status kern_cuda_set_device(int dev)
{
    (void)dev;
    return KERN_CUDA_OK;
}
kern_cuda_status kern_cuda_stream_create(void **s)
{
    *s = malloc(16);
    return KERN_CUDA_OK;
}
kern_cuda_status kern_cuda_stream_destroy(void *s)
{
    free(s);
    return KERN_CUDA_OK;
}
struct kern_cuda_blas {
    int x;
};
kern_cuda_status kern_cuda_blas_create(kern_cuda_blas **b)
{
    *b = calloc(1, sizeof **b);
    return KERN_CUDA_OK;
}
kern_cuda_status kern_cuda_blas_destroy(kern_cuda_blas *b)
{
    free(b);
    return KERN_CUDA_OK;
}
kern_cuda_status kern_cuda_blas_set_stream(kern_cuda_blas *b, void *s)
{
    (void)b;
    (void)s;
    return KERN_CUDA_OK;
}
const char *kern_cuda_blas_version(kern_cuda_blas *b)
{
    (void)b;
    return "fake cuBLAS";
}
kern_cuda_status kern_cuda_malloc(void **p, size_t n)
{
    /* aligned as cudaMalloc's (at least 256 bytes: the FP8 GEMM's workspace
     * needs it); poison: the backend must initialise what it reads */
    if (posix_memalign(p, 256, n ? n : 1)) return KERN_CUDA_ENOMEM;
    memset(*p, 0xff, n);
    return KERN_CUDA_OK;
}
kern_cuda_status kern_cuda_free(void *p)
{
    free(p);
    return KERN_CUDA_OK;
}
kern_cuda_status kern_cuda_h2d(void *d, const void *s, size_t n)
{
    memcpy(d, s, n);
    return KERN_CUDA_OK;
}
kern_cuda_status kern_cuda_d2h(void *d, const void *s, size_t n)
{
    memcpy(d, s, n);
    return KERN_CUDA_OK;
}
kern_cuda_status kern_cuda_fill_uniform(void *p, kern_cuda_dtype t, size_t n, uint64_t seed, float lo, float hi,
                                        void *st)
{
    (void)st;
    uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        stv(p, t, (int64_t)i, lo + (hi - lo) * (float)((x >> 40) / 16777216.0));
    }
    return KERN_CUDA_OK;
}
kern_cuda_status kern_cuda_gemm(kern_cuda_blas *b, bool ta, bool tb, int m, int n, int k, float alpha, const void *a,
                                int lda, const void *bm, int ldb, kern_cuda_dtype ab_t, float beta, void *c, int ldc,
                                kern_cuda_dtype c_t)
{
    (void)b;
    if (m == 0 || n == 0) return KERN_CUDA_OK;
    const int64_t ra = ta ? k : m, ca = ta ? m : k, rb = tb ? n : k, cb = tb ? k : n;
    const int64_t na = ra ? (ra - 1) * lda + ca : 0, nb = rb ? (rb - 1) * ldb + cb : 0, nc = (int64_t)(m - 1) * ldc + n;
    float *A = widen(a, ab_t, na), *B = widen(bm, ab_t, nb), *C = widen(c, c_t, nc);
    if (beta == 0)
        for (int64_t i = 0; i < nc; i++) C[i] = 0; /* poison-safe like cuBLAS with beta 0 */
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, A, lda,
                B, ldb, beta, C, ldc);
    /* only the m x n window is written */
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) stv(c, c_t, (int64_t)i * ldc + j, C[(int64_t)i * ldc + j]);
    free(A);
    free(B);
    free(C);
    return KERN_CUDA_OK;
}

static struct kern_attn_desc cpu_desc(const struct kern_cuda_attn_desc *d)
{
    struct kern_attn_desc c;
    memset(&c, 0, sizeof c);
    c.heads = d->heads;
    c.kv_heads = d->kv_heads;
    c.n_q = d->n_q;
    c.n_kv = d->n_kv;
    c.d = d->d;
    c.scale = d->scale;
    c.causal = d->causal;
    c.q_off = d->q_off;
    c.kv_off = d->kv_off;
    c.acc = KERN_ACC_F32;
    return c;
}
static kern_cuda_status fwd(const struct kern_cuda_attn_desc *d, const void *q, const void *k, const void *v, void *o,
                            kern_cuda_dtype ot, float *lse)
{
    if (d->d != 64 && d->d != 128 && ot != KERN_CUDA_F32) {
        fprintf(stderr, "fake: flash d %d\n", d->d);
        return KERN_CUDA_EUNSUPPORTED;
    }
    struct kern_attn_desc c = cpu_desc(d);
    const int64_t nq = (int64_t)d->heads * d->n_q * d->d, nk = (int64_t)d->kv_heads * d->n_kv * d->d;
    float *Q = widen(q, d->dtype, nq), *K = widen(k, d->dtype, nk), *V = widen(v, d->dtype, nk),
          *O = malloc(sizeof(float) * (size_t)(nq ? nq : 1));
    if (kern_attn_ref_fwd(&c, Q, K, V, O, lse) != KERN_OK) return KERN_CUDA_EINVAL;
    narrow(o, ot, O, nq);
    free(Q);
    free(K);
    free(V);
    free(O);
    return KERN_CUDA_OK;
}
kern_cuda_status kern_cuda_attn_fwd(const struct kern_cuda_attn_desc *d, const void *q, const void *k, const void *v,
                                    void *o, float *lse, void *st)
{
    (void)st;
    return fwd(d, q, k, v, o, d->dtype, lse);
}
kern_cuda_status kern_cuda_attn_ref_fwd(kern_cuda_blas *b, const struct kern_cuda_attn_desc *d, const void *q,
                                        const void *k, const void *v, float *o, float *lse, void *ws, size_t wsb)
{
    (void)b;
    (void)ws;
    (void)wsb;
    return fwd(d, q, k, v, o, KERN_CUDA_F32, lse);
}
static kern_cuda_status bwd(const struct kern_cuda_attn_desc *d, const void *q, const void *k, const void *v,
                            const void *o, const float *lse, const void *dout, float *dq, float *dk, float *dv)
{
    struct kern_attn_desc c = cpu_desc(d);
    const int64_t nq = (int64_t)d->heads * d->n_q * d->d, nk = (int64_t)d->kv_heads * d->n_kv * d->d;
    float *Q = widen(q, d->dtype, nq), *K = widen(k, d->dtype, nk), *V = widen(v, d->dtype, nk);
    float *O = widen(o, d->dtype, nq), *dO = widen(dout, d->dtype, nq);
    if (kern_attn_ref_bwd(&c, Q, K, V, O, lse, dO, dq, dk, dv) != KERN_OK) return KERN_CUDA_EINVAL;
    free(Q);
    free(K);
    free(V);
    free(O);
    free(dO);
    return KERN_CUDA_OK;
}
size_t kern_cuda_attn_bwd_workspace(const struct kern_cuda_attn_desc *d)
{
    return sizeof(float) * (size_t)d->heads * (size_t)d->n_q;
}
kern_cuda_status kern_cuda_attn_bwd(const struct kern_cuda_attn_desc *d, const void *q, const void *k, const void *v,
                                    const void *o, const float *lse, const void *dout, float *dq, float *dk, float *dv,
                                    void *ws, void *st)
{
    (void)ws;
    (void)st;
    return bwd(d, q, k, v, o, lse, dout, dq, dk, dv);
}
void kern_cuda_attn_ref_workspace(const struct kern_cuda_attn_desc *d, bool backward, size_t *mn, size_t *al)
{
    (void)backward;
    *mn = sizeof(float) * (size_t)d->n_q * (size_t)d->n_kv;
    *al = *mn * (size_t)d->heads;
}
kern_cuda_status kern_cuda_attn_ref_bwd(kern_cuda_blas *b, const struct kern_cuda_attn_desc *d, const void *q,
                                        const void *k, const void *v, const void *o, const float *lse, const void *dout,
                                        float *dq, float *dk, float *dv, void *ws, size_t wsb)
{
    (void)b;
    (void)ws;
    (void)wsb;
    return bwd(d, q, k, v, o, lse, dout, dq, dk, dv);
}
kern_cuda_status kern_cuda_attn_merge(int heads, int n_q, int d, float *o, float *lse, const void *o_b,
                                      kern_cuda_dtype t, const float *lse_b, void *st)
{
    (void)st;
    float *ob = widen(o_b, t, (int64_t)heads * n_q * d);
    kern_status s = kern_attn_merge(heads, n_q, d, o, lse, ob, lse_b);
    free(ob);
    return s == KERN_OK ? KERN_CUDA_OK : KERN_CUDA_EINVAL;
}

/* ------------------------------------------------------------ kern_nccl */
struct kern_nccl_comm {
    MPI_Comm comm;
    int rank, size;
};
kern_cuda_status kern_nccl_version(int *code, char *text, size_t n)
{
    *code = 0;
    snprintf(text, n, "fake NCCL over MPI");
    return KERN_CUDA_OK;
}
kern_cuda_status kern_nccl_comm_create(int nranks, int rank, int device, kern_nccl_bcast_fn bcast, void *ctx,
                                       kern_nccl_comm **out)
{
    (void)device;
    char id[128] = "id";
    if (bcast(id, sizeof id, ctx)) return KERN_CUDA_ENCCL;
    kern_nccl_comm *c = calloc(1, sizeof *c);
    MPI_Comm_dup(*(MPI_Comm *)ctx, &c->comm);
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->size);
    if (c->rank != rank || c->size != nranks) return KERN_CUDA_EINVAL;
    *out = c;
    return KERN_CUDA_OK;
}
kern_cuda_status kern_nccl_comm_destroy(kern_nccl_comm *c)
{
    if (c) {
        MPI_Comm_free(&c->comm);
        free(c);
    }
    return KERN_CUDA_OK;
}
void *kern_nccl_comm_stream(kern_nccl_comm *c)
{
    (void)c;
    static char s[16];
    return s;
}
kern_cuda_status kern_nccl_wait_for(kern_nccl_comm *c, void *s)
{
    (void)c;
    (void)s;
    return KERN_CUDA_OK;
}
kern_cuda_status kern_nccl_make_wait(kern_nccl_comm *c, void *s)
{
    (void)c;
    (void)s;
    return KERN_CUDA_OK;
}
static int es(kern_cuda_dtype t)
{
    return (int)kern_cuda_dtype_size(t);
}
kern_cuda_status kern_nccl_alltoall(kern_nccl_comm *c, const void *s, void *r, size_t n, kern_cuda_dtype t,
                                    int64_t *bytes)
{
    MPI_Alltoall(s, (int)(n * es(t)), MPI_BYTE, r, (int)(n * es(t)), MPI_BYTE, c->comm);
    if (bytes) *bytes += (int64_t)(n * es(t)) * (c->size - 1);
    return KERN_CUDA_OK;
}
kern_cuda_status kern_nccl_sendrecv(kern_nccl_comm *c, const void *s, int dest, void *r, int src, size_t n,
                                    kern_cuda_dtype t, int64_t *bytes)
{
    const int b = (int)(n * es(t));
    if (dest == c->rank && src == c->rank)
        memcpy(r, s, (size_t)b);
    else
        MPI_Sendrecv(s, b, MPI_BYTE, dest, 77, r, b, MPI_BYTE, src, 77, c->comm, MPI_STATUS_IGNORE);
    if (bytes && dest != c->rank) *bytes += b;
    return KERN_CUDA_OK;
}
kern_cuda_status kern_nccl_ring_step(kern_nccl_comm *c, const void *s, void *r, size_t n, kern_cuda_dtype t,
                                     int64_t *bytes)
{
    return kern_nccl_sendrecv(c, s, (c->rank + 1) % c->size, r, (c->rank + c->size - 1) % c->size, n, t, bytes);
}
kern_cuda_status kern_nccl_allgather(kern_nccl_comm *c, const void *s, void *r, size_t n, kern_cuda_dtype t,
                                     int64_t *bytes)
{
    MPI_Allgather(s, (int)(n * es(t)), MPI_BYTE, r, (int)(n * es(t)), MPI_BYTE, c->comm);
    if (bytes) *bytes += (int64_t)(n * es(t)) * (c->size - 1);
    return KERN_CUDA_OK;
}
kern_cuda_status kern_nccl_reduce_scatter(kern_nccl_comm *c, const void *s, void *r, size_t blk, kern_cuda_dtype t,
                                          int64_t *bytes)
{
    const int64_t n = (int64_t)blk * c->size;
    float *all = malloc(sizeof(float) * (size_t)(n * c->size)), *mine = widen(s, t, n);
    MPI_Allgather(mine, (int)n, MPI_FLOAT, all, (int)n, MPI_FLOAT, c->comm);
    for (int64_t i = 0; i < (int64_t)blk; i++) {
        float acc = 0;
        for (int p = 0; p < c->size; p++) acc += all[(int64_t)p * n + (int64_t)c->rank * blk + i];
        stv(r, t, i, acc);
    }
    free(all);
    free(mine);
    if (bytes) *bytes += (int64_t)(blk * es(t)) * (c->size - 1);
    return KERN_CUDA_OK;
}
kern_cuda_status kern_nccl_allreduce(kern_nccl_comm *c, void *buf, size_t n, kern_cuda_dtype t, int64_t *bytes)
{
    const size_t blk = n / (size_t)c->size;
    char *mine = (char *)buf + (size_t)c->rank * blk * es(t);
    char *tmp = malloc(blk * es(t) + 1);
    kern_nccl_reduce_scatter(c, buf, tmp, blk, t, NULL);
    memcpy(mine, tmp, blk * es(t));
    free(tmp);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_BYTE, buf, (int)(blk * es(t)), MPI_BYTE, c->comm);
    if (bytes) *bytes += 2 * (int64_t)(blk * es(t)) * (c->size - 1);
    return KERN_CUDA_OK;
}

/* ------------------------------------------------------------ hxk_ */
cudaError_t hxk_gather(void *dst, kern_cuda_dtype dt, const int64_t *doff, const void *src, kern_cuda_dtype st_,
                       const int64_t *soff, int nsrc, int64_t nchunks, int d, cudaStream_t st)
{
    (void)st;
    for (int64_t c = 0; c < nchunks; c++)
        for (int e = 0; e < d; e++) {
            float acc = 0;
            for (int t = 0; t < nsrc; t++) acc += ldv(src, st_, soff[c * nsrc + t] + e);
            stv(dst, dt, doff[c] + e, acc);
        }
    return cudaSuccess;
}
cudaError_t hxk_add(void *dst, kern_cuda_dtype dt, const void *a, kern_cuda_dtype at, const void *b, kern_cuda_dtype bt,
                    int64_t n, cudaStream_t st)
{
    (void)st;
    for (int64_t i = 0; i < n; i++) stv(dst, dt, i, ldv(a, at, i) + (b ? ldv(b, bt, i) : 0.f));
    return cudaSuccess;
}
cudaError_t hxk_fill_f32(float *p, float v, int64_t n, cudaStream_t st)
{
    (void)st;
    for (int64_t i = 0; i < n; i++) p[i] = v;
    return cudaSuccess;
}
cudaError_t hxk_rms_fwd(kern_cuda_dtype t, int64_t rows, int64_t h, const void *x, const void *g, void *y, float *inv,
                        float eps, cudaStream_t st)
{
    (void)st;
    for (int64_t r = 0; r < rows; r++) {
        float ss = 0;
        for (int64_t j = 0; j < h; j++) {
            float v = ldv(x, t, r * h + j);
            ss += v * v;
        }
        const float iv = 1.0f / sqrtf(ss / (float)h + eps);
        inv[r] = iv;
        for (int64_t j = 0; j < h; j++) stv(y, t, r * h + j, ldv(x, t, r * h + j) * iv * ldv(g, t, j));
    }
    return cudaSuccess;
}
cudaError_t hxk_rms_bwd(kern_cuda_dtype t, int64_t rows, int64_t h, const void *x, const void *g, const float *inv,
                        const void *dy, const void *base, void *dx, void *dg, float *dg32, cudaStream_t st)
{
    (void)st;
    for (int64_t j = 0; j < h; j++) dg32[j] = 0;
    for (int64_t r = 0; r < rows; r++) {
        const int64_t o = r * h;
        const float iv = inv[r];
        float dot = 0;
        for (int64_t j = 0; j < h; j++) dot += ldv(dy, t, o + j) * ldv(g, t, j) * (ldv(x, t, o + j) * iv);
        const float mean = dot / (float)h;
        for (int64_t j = 0; j < h; j++) {
            stv(dx, t, o + j,
                ldv(base, t, o + j) + iv * (ldv(dy, t, o + j) * ldv(g, t, j) - ldv(x, t, o + j) * iv * mean));
            dg32[j] += ldv(dy, t, o + j) * (ldv(x, t, o + j) * iv);
        }
    }
    for (int64_t j = 0; j < h; j++) stv(dg, t, j, dg32[j]);
    return cudaSuccess;
}
static float gelu(float x)
{
    return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}
static float gelu_grad(float x)
{
    const float k0 = 0.7978845608f, k1 = 0.044715f, t = tanhf(k0 * (x + k1 * x * x * x));
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * k0 * (1.0f + 3.0f * k1 * x * x);
}
static float sigm(float x)
{
    return 1.0f / (1.0f + expf(-x));
}
cudaError_t hxk_act_fwd(kern_cuda_dtype t, int sw, int64_t rows, int64_t fl, const void *u, void *a, cudaStream_t st)
{
    (void)st;
    const int64_t w = sw ? 2 * fl : fl;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < fl; j++) {
            const float x = ldv(u, t, r * w + j);
            stv(a, t, r * fl + j, sw ? x * sigm(x) * ldv(u, t, r * w + fl + j) : gelu(x));
        }
    return cudaSuccess;
}
cudaError_t hxk_act_bwd(kern_cuda_dtype t, int sw, int64_t rows, int64_t fl, const void *u, const void *da, void *du,
                        cudaStream_t st)
{
    (void)st;
    const int64_t w = sw ? 2 * fl : fl;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < fl; j++) {
            const float x = ldv(u, t, r * w + j), g = ldv(da, t, r * fl + j);
            if (sw) {
                const float s = sigm(x), up = ldv(u, t, r * w + fl + j);
                stv(du, t, r * w + j, g * up * s * (1.0f + x * (1.0f - s)));
                stv(du, t, r * w + fl + j, g * x * s);
            } else {
                stv(du, t, r * w + j, g * gelu_grad(x));
            }
        }
    return cudaSuccess;
}
cudaError_t hxk_loss(kern_cuda_dtype t, int64_t rows, int64_t V, void *z, cudaStream_t st)
{
    (void)st;
    for (int64_t r = 0; r < rows; r++) {
        float mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < V; j++) mx = fmaxf(mx, ldv(z, t, r * V + j));
        for (int64_t j = 0; j < V; j++) sum += expf(ldv(z, t, r * V + j) - mx);
        const int64_t lab = (r * 7919) % V;
        for (int64_t j = 0; j < V; j++) stv(z, t, r * V + j, expf(ldv(z, t, r * V + j) - mx) / sum - (j == lab));
    }
    return cudaSuccess;
}
cudaError_t hxk_adam(kern_cuda_dtype t, int64_t n, const void *g, int64_t gl, float *master, float *m, float *v,
                     void *w_out, int64_t nw, float lr, float b1, float b2, float eps, float c1, float c2,
                     cudaStream_t st)
{
    (void)st;
    for (int64_t i = 0; i < n; i++) {
        const float gi = i < gl ? ldv(g, t, i) : 0.f;
        m[i] = b1 * m[i] + (1 - b1) * gi;
        v[i] = b2 * v[i] + (1 - b2) * gi * gi;
        master[i] -= lr * (m[i] / c1) / (sqrtf(v[i] / c2) + eps);
        if (i < nw) stv(w_out, t, i, master[i]);
    }
    return cudaSuccess;
}
