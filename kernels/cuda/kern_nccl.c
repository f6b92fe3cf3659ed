/* kern_nccl.c: the NCCL collective layer (kern_nccl.h). */
#include "kern_nccl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "kc_error.h"

struct kern_nccl_comm {
    ncclComm_t comm;
    int rank, size, device;
    cudaStream_t stream;
    cudaEvent_t dep;    /* stream dependencies */
    cudaEvent_t t0, t1; /* timing */
};

static kern_cuda_status kn_cuda(cudaError_t e, const char *what, int line)
{
    char msg[300];
    snprintf(msg, sizeof msg, "%s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
    kern_cuda_status st = KERN_CUDA_ECUDA;
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) st = KERN_CUDA_ENODEV;
    if (e == cudaErrorMemoryAllocation) st = KERN_CUDA_ENOMEM;
    return kc_fail(st, what, __FILE__, line, msg);
}

static kern_cuda_status kn_nccl(ncclResult_t r, const char *what, int line)
{
    char msg[300];
    snprintf(msg, sizeof msg, "%s", ncclGetErrorString(r));
    return kc_fail(KERN_CUDA_ENCCL, what, __FILE__, line, msg);
}

#define KN_CUDA(call)                                                \
    do {                                                             \
        cudaError_t kn_e_ = (call);                                  \
        if (kn_e_ != cudaSuccess) return kn_cuda(kn_e_, #call, __LINE__); \
    } while (0)
#define KN_NCCL(call)                                                \
    do {                                                             \
        ncclResult_t kn_r_ = (call);                                 \
        if (kn_r_ != ncclSuccess) return kn_nccl(kn_r_, #call, __LINE__); \
    } while (0)
#define KN_TRY(expr)                               \
    do {                                           \
        kern_cuda_status kn_s_ = (expr);           \
        if (kn_s_ != KERN_CUDA_OK) return kn_s_;   \
    } while (0)
#define KN_EINVAL(why) kc_fail(KERN_CUDA_EINVAL, __func__, __FILE__, __LINE__, why)

static int kn_type(kern_cuda_dtype t, ncclDataType_t *out)
{
    switch (t) {
    case KERN_CUDA_BF16: *out = ncclBfloat16; return 1;
    case KERN_CUDA_FP16: *out = ncclFloat16; return 1;
    case KERN_CUDA_F32: *out = ncclFloat32; return 1;
    }
    return 0;
}

/* Run body with the communicator's device current; the caller's device is
 * restored afterwards (a harness rank has one device; a single-process
 * driver of several communicators switches between them). */
typedef kern_cuda_status (*kn_body_fn)(kern_nccl_comm *c, void *arg);

static kern_cuda_status kn_on_device(kern_nccl_comm *c, kn_body_fn body, void *arg)
{
    int prev = -1;
    KN_CUDA(cudaGetDevice(&prev));
    if (prev != c->device) KN_CUDA(cudaSetDevice(c->device));
    kern_cuda_status st = body(c, arg);
    if (prev != c->device) {
        const cudaError_t e = cudaSetDevice(prev);
        if (e != cudaSuccess && st == KERN_CUDA_OK) st = kn_cuda(e, "cudaSetDevice(prev)", __LINE__);
    }
    return st;
}

kern_cuda_status kern_nccl_version(int *code, char *text, size_t text_len)
{
    int v = 0;
    KN_NCCL(ncclGetVersion(&v));
    if (code) *code = v;
    if (text && text_len)
        snprintf(text, text_len, "NCCL %d.%d.%d (header %d.%d.%d)", v / 10000, (v / 100) % 100, v % 100,
                 NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
    return KERN_CUDA_OK;
}

/* --------------------------------------------------------- set-up */

static kern_cuda_status kn_attach(kern_nccl_comm *c)
{
    KN_CUDA(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    KN_CUDA(cudaEventCreateWithFlags(&c->dep, cudaEventDisableTiming));
    KN_CUDA(cudaEventCreate(&c->t0));
    KN_CUDA(cudaEventCreate(&c->t1));
    return KERN_CUDA_OK;
}

static kern_nccl_comm *kn_new(int nranks, int rank, int device)
{
    kern_nccl_comm *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->rank = rank;
    c->size = nranks;
    c->device = device;
    return c;
}

struct kn_init_arg {
    int nranks, rank;
    ncclUniqueId id;
};

static kern_cuda_status kn_init_body(kern_nccl_comm *c, void *arg)
{
    struct kn_init_arg *a = arg;
    KN_NCCL(ncclCommInitRank(&c->comm, a->nranks, a->id, a->rank));
    return kn_attach(c);
}

kern_cuda_status kern_nccl_comm_create(int nranks, int rank, int device, kern_nccl_bcast_fn bcast, void *ctx,
                                       kern_nccl_comm **out)
{
    if (!out) return KN_EINVAL("out is NULL");
    *out = NULL;
    if (nranks < 1 || rank < 0 || rank >= nranks || device < 0 || !bcast)
        return KN_EINVAL("need 0 <= rank < nranks, device >= 0 and a broadcast callback");
    struct kn_init_arg a = {.nranks = nranks, .rank = rank};
    memset(&a.id, 0, sizeof a.id);
    if (rank == 0) KN_NCCL(ncclGetUniqueId(&a.id));
    if (bcast(&a.id, sizeof a.id, ctx) != 0)
        return kc_fail(KERN_CUDA_ENCCL, "kern_nccl_comm_create", __FILE__, __LINE__,
                       "the unique-id broadcast callback failed");
    kern_nccl_comm *c = kn_new(nranks, rank, device);
    if (!c) return kc_fail(KERN_CUDA_ENOMEM, "calloc", __FILE__, __LINE__, "out of host memory");
    kern_cuda_status st = kn_on_device(c, kn_init_body, &a);
    if (st != KERN_CUDA_OK) {
        (void)kern_nccl_comm_destroy(c); /* the first failure is the one reported */
        return st;
    }
    *out = c;
    return KERN_CUDA_OK;
}

static kern_cuda_status kn_attach_body(kern_nccl_comm *c, void *arg)
{
    (void)arg;
    return kn_attach(c);
}

kern_cuda_status kern_nccl_comm_create_local(int nranks, const int *devices, kern_nccl_comm **comms)
{
    if (nranks < 1 || !devices || !comms) return KN_EINVAL("need nranks >= 1, devices and comms");
    for (int i = 0; i < nranks; i++) comms[i] = NULL;
    ncclComm_t *raw = calloc((size_t)nranks, sizeof *raw);
    if (!raw) return kc_fail(KERN_CUDA_ENOMEM, "calloc", __FILE__, __LINE__, "out of host memory");
    ncclResult_t r = ncclCommInitAll(raw, nranks, devices);
    if (r != ncclSuccess) {
        free(raw);
        return kn_nccl(r, "ncclCommInitAll(raw, nranks, devices)", __LINE__);
    }
    kern_cuda_status st = KERN_CUDA_OK;
    for (int i = 0; i < nranks; i++) {
        comms[i] = kn_new(nranks, i, devices[i]);
        if (!comms[i]) {
            st = kc_fail(KERN_CUDA_ENOMEM, "calloc", __FILE__, __LINE__, "out of host memory");
            break;
        }
        comms[i]->comm = raw[i];
        raw[i] = NULL;
        st = kn_on_device(comms[i], kn_attach_body, NULL);
        if (st != KERN_CUDA_OK) break;
    }
    if (st != KERN_CUDA_OK) {
        for (int i = 0; i < nranks; i++) {
            if (comms[i]) (void)kern_nccl_comm_destroy(comms[i]); /* first failure reported */
            else if (raw[i] && ncclCommDestroy(raw[i]) != ncclSuccess) { /* first failure reported */ }
            comms[i] = NULL;
        }
    }
    free(raw);
    return st;
}

static kern_cuda_status kn_destroy_body(kern_nccl_comm *c, void *arg)
{
    (void)arg;
    kern_cuda_status st = KERN_CUDA_OK;
    if (c->stream) {
        cudaError_t e = cudaStreamSynchronize(c->stream);
        if (e != cudaSuccess && st == KERN_CUDA_OK) st = kn_cuda(e, "cudaStreamSynchronize(c->stream)", __LINE__);
    }
    if (c->comm) {
        ncclResult_t r = ncclCommDestroy(c->comm);
        if (r != ncclSuccess && st == KERN_CUDA_OK) st = kn_nccl(r, "ncclCommDestroy(c->comm)", __LINE__);
    }
    cudaEvent_t evs[3] = {c->dep, c->t0, c->t1};
    for (int i = 0; i < 3; i++)
        if (evs[i]) {
            cudaError_t e = cudaEventDestroy(evs[i]);
            if (e != cudaSuccess && st == KERN_CUDA_OK) st = kn_cuda(e, "cudaEventDestroy", __LINE__);
        }
    if (c->stream) {
        cudaError_t e = cudaStreamDestroy(c->stream);
        if (e != cudaSuccess && st == KERN_CUDA_OK) st = kn_cuda(e, "cudaStreamDestroy(c->stream)", __LINE__);
    }
    return st;
}

kern_cuda_status kern_nccl_comm_destroy(kern_nccl_comm *c)
{
    if (!c) return KERN_CUDA_OK;
    kern_cuda_status st = kn_on_device(c, kn_destroy_body, NULL);
    free(c);
    return st;
}

int kern_nccl_comm_rank(const kern_nccl_comm *c) { return c ? c->rank : -1; }
int kern_nccl_comm_size(const kern_nccl_comm *c) { return c ? c->size : 0; }
int kern_nccl_comm_device(const kern_nccl_comm *c) { return c ? c->device : -1; }
void *kern_nccl_comm_stream(kern_nccl_comm *c) { return c ? (void *)c->stream : NULL; }

/* ------------------------------------------------------ dependencies */

static kern_cuda_status kn_wait_for_body(kern_nccl_comm *c, void *stream)
{
    KN_CUDA(cudaEventRecord(c->dep, (cudaStream_t)stream));
    KN_CUDA(cudaStreamWaitEvent(c->stream, c->dep, 0));
    return KERN_CUDA_OK;
}

static kern_cuda_status kn_make_wait_body(kern_nccl_comm *c, void *stream)
{
    KN_CUDA(cudaEventRecord(c->dep, c->stream));
    KN_CUDA(cudaStreamWaitEvent((cudaStream_t)stream, c->dep, 0));
    return KERN_CUDA_OK;
}

static kern_cuda_status kn_sync_body(kern_nccl_comm *c, void *arg)
{
    (void)arg;
    KN_CUDA(cudaStreamSynchronize(c->stream));
    return KERN_CUDA_OK;
}

kern_cuda_status kern_nccl_wait_for(kern_nccl_comm *c, void *stream)
{
    if (!c) return KN_EINVAL("c is NULL");
    return kn_on_device(c, kn_wait_for_body, stream);
}

kern_cuda_status kern_nccl_make_wait(kern_nccl_comm *c, void *stream)
{
    if (!c) return KN_EINVAL("c is NULL");
    return kn_on_device(c, kn_make_wait_body, stream);
}

kern_cuda_status kern_nccl_sync(kern_nccl_comm *c)
{
    if (!c) return KN_EINVAL("c is NULL");
    return kn_on_device(c, kn_sync_body, NULL);
}

kern_cuda_status kern_nccl_group_start(void)
{
    KN_NCCL(ncclGroupStart());
    return KERN_CUDA_OK;
}

kern_cuda_status kern_nccl_group_end(void)
{
    KN_NCCL(ncclGroupEnd());
    return KERN_CUDA_OK;
}

/* ------------------------------------------------------- operations */

struct kn_op {
    const void *send;
    void *recv;
    size_t count;
    int dest, src;
    kern_cuda_dtype dtype;
    ncclDataType_t nt;
    size_t es;
};

static kern_cuda_status kn_op_init(struct kn_op *o, const kern_nccl_comm *c, kern_cuda_dtype dtype)
{
    if (!c) return KN_EINVAL("c is NULL");
    memset(o, 0, sizeof *o);
    if (!kn_type(dtype, &o->nt)) return KN_EINVAL("dtype must be bf16, fp16 or fp32");
    o->dtype = dtype;
    o->es = kern_cuda_dtype_size(dtype);
    return KERN_CUDA_OK;
}

/* ncclSend/ncclRecv pairs of one group; the block for oneself is copied */
static kern_cuda_status kn_alltoall_body(kern_nccl_comm *c, void *arg)
{
    const struct kn_op *o = arg;
    const size_t blk = o->count * o->es;
    const char *s = o->send;
    char *r = o->recv;
    KN_CUDA(cudaMemcpyAsync(r + (size_t)c->rank * blk, s + (size_t)c->rank * blk, blk, cudaMemcpyDeviceToDevice,
                            c->stream));
    if (c->size == 1) return KERN_CUDA_OK;
    KN_NCCL(ncclGroupStart());
    for (int p = 0; p < c->size; p++) {
        if (p == c->rank) continue;
        ncclResult_t e1 = ncclSend(s + (size_t)p * blk, o->count, o->nt, p, c->comm, c->stream);
        ncclResult_t e2 = e1 == ncclSuccess ? ncclRecv(r + (size_t)p * blk, o->count, o->nt, p, c->comm, c->stream)
                                            : ncclSuccess;
        if (e1 != ncclSuccess || e2 != ncclSuccess) {
            kern_cuda_status st = kn_nccl(e1 != ncclSuccess ? e1 : e2, "ncclSend/ncclRecv", __LINE__);
            (void)ncclGroupEnd(); /* close the group; the first failure is the one reported */
            return st;
        }
    }
    KN_NCCL(ncclGroupEnd());
    return KERN_CUDA_OK;
}

/* The collectives whose count is one block per peer (all-to-all, all-gather,
 * reduce-scatter): each rank hands NCCL count elements for each of the
 * other p - 1 ranks. */
static kern_cuda_status kn_blocks(kern_nccl_comm *c, const void *send, void *recv, size_t count,
                                  kern_cuda_dtype dtype, kn_body_fn body,
                                  int64_t *bytes)
{
    struct kn_op o;
    KN_TRY(kn_op_init(&o, c, dtype));
    if (count == 0) return KERN_CUDA_OK;
    if (!send || !recv) return KN_EINVAL("NULL buffer");
    o.send = send;
    o.recv = recv;
    o.count = count;
    KN_TRY(kn_on_device(c, body, &o));
    if (bytes) *bytes += (int64_t)(count * o.es) * (c->size - 1);
    return KERN_CUDA_OK;
}

kern_cuda_status kern_nccl_alltoall(kern_nccl_comm *c, const void *send, void *recv, size_t count,
                                    kern_cuda_dtype dtype, int64_t *bytes)
{
    return kn_blocks(c, send, recv, count, dtype, kn_alltoall_body, bytes);
}

static kern_cuda_status kn_sendrecv_body(kern_nccl_comm *c, void *arg)
{
    const struct kn_op *o = arg;
    const size_t blk = o->count * o->es;
    if (o->dest == c->rank && o->src == c->rank) { /* a hop to oneself: a copy */
        KN_CUDA(cudaMemcpyAsync(o->recv, o->send, blk, cudaMemcpyDeviceToDevice, c->stream));
        return KERN_CUDA_OK;
    }
    if ((o->dest == c->rank) != (o->src == c->rank))
        return KN_EINVAL("send to oneself needs a receive from oneself (and the reverse)");
    KN_NCCL(ncclGroupStart());
    ncclResult_t e = ncclSuccess;
    if (o->dest >= 0) e = ncclSend(o->send, o->count, o->nt, o->dest, c->comm, c->stream);
    if (e == ncclSuccess && o->src >= 0) e = ncclRecv(o->recv, o->count, o->nt, o->src, c->comm, c->stream);
    if (e != ncclSuccess) {
        kern_cuda_status st = kn_nccl(e, "ncclSend/ncclRecv", __LINE__);
        (void)ncclGroupEnd(); /* close the group; the first failure is the one reported */
        return st;
    }
    KN_NCCL(ncclGroupEnd());
    return KERN_CUDA_OK;
}

kern_cuda_status kern_nccl_sendrecv(kern_nccl_comm *c, const void *send, int dest, void *recv, int src,
                                    size_t count, kern_cuda_dtype dtype, int64_t *bytes)
{
    struct kn_op o;
    KN_TRY(kn_op_init(&o, c, dtype));
    if (dest < -1 || dest >= c->size || src < -1 || src >= c->size) return KN_EINVAL("peer out of range");
    if (count == 0 || (dest < 0 && src < 0)) return KERN_CUDA_OK;
    if ((dest >= 0 && !send) || (src >= 0 && !recv)) return KN_EINVAL("NULL buffer");
    o.send = send;
    o.recv = recv;
    o.count = count;
    o.dest = dest;
    o.src = src;
    KN_TRY(kn_on_device(c, kn_sendrecv_body, &o));
    if (bytes && dest >= 0 && dest != c->rank) *bytes += (int64_t)(count * o.es);
    return KERN_CUDA_OK;
}

kern_cuda_status kern_nccl_ring_step(kern_nccl_comm *c, const void *send, void *recv, size_t count,
                                     kern_cuda_dtype dtype, int64_t *bytes)
{
    if (!c) return KN_EINVAL("c is NULL");
    return kern_nccl_sendrecv(c, send, (c->rank + 1) % c->size, recv, (c->rank + c->size - 1) % c->size, count,
                              dtype, bytes);
}

static kern_cuda_status kn_allgather_body(kern_nccl_comm *c, void *arg)
{
    const struct kn_op *o = arg;
    KN_NCCL(ncclAllGather(o->send, o->recv, o->count, o->nt, c->comm, c->stream));
    return KERN_CUDA_OK;
}

kern_cuda_status kern_nccl_allgather(kern_nccl_comm *c, const void *send, void *recv, size_t count,
                                     kern_cuda_dtype dtype, int64_t *bytes)
{
    return kn_blocks(c, send, recv, count, dtype, kn_allgather_body, bytes);
}

static kern_cuda_status kn_reduce_scatter_body(kern_nccl_comm *c, void *arg)
{
    const struct kn_op *o = arg;
    KN_NCCL(ncclReduceScatter(o->send, o->recv, o->count, o->nt, ncclSum, c->comm, c->stream));
    return KERN_CUDA_OK;
}

kern_cuda_status kern_nccl_reduce_scatter(kern_nccl_comm *c, const void *send, void *recv, size_t block,
                                          kern_cuda_dtype dtype, int64_t *bytes)
{
    return kn_blocks(c, send, recv, block, dtype, kn_reduce_scatter_body, bytes);
}

/* in place: reduce-scatter into this rank's block of buf, then all-gather
 * from it (NCCL's in-place forms: recv = send + rank * block) */
static kern_cuda_status kn_allreduce_body(kern_nccl_comm *c, void *arg)
{
    const struct kn_op *o = arg;
    char *buf = o->recv;
    const size_t block = o->count / (size_t)c->size;
    char *mine = buf + (size_t)c->rank * block * o->es;
    KN_NCCL(ncclReduceScatter(buf, mine, block, o->nt, ncclSum, c->comm, c->stream));
    KN_NCCL(ncclAllGather(mine, buf, block, o->nt, c->comm, c->stream));
    return KERN_CUDA_OK;
}

kern_cuda_status kern_nccl_allreduce(kern_nccl_comm *c, void *buf, size_t n, kern_cuda_dtype dtype,
                                     int64_t *bytes)
{
    struct kn_op o;
    KN_TRY(kn_op_init(&o, c, dtype));
    if (n == 0) return KERN_CUDA_OK;
    if (!buf) return KN_EINVAL("NULL buffer");
    if (n % (size_t)c->size != 0) return KN_EINVAL("n must be a multiple of the group size (pad the buffer)");
    o.recv = buf;
    o.count = n;
    KN_TRY(kn_on_device(c, kn_allreduce_body, &o));
    if (bytes) *bytes += 2 * (int64_t)(n / (size_t)c->size * o.es) * (c->size - 1);
    return KERN_CUDA_OK;
}

/* ----------------------------------------------------------- timing */

static kern_cuda_status kn_t0_body(kern_nccl_comm *c, void *arg)
{
    (void)arg;
    KN_CUDA(cudaEventRecord(c->t0, c->stream));
    return KERN_CUDA_OK;
}

static kern_cuda_status kn_t1_body(kern_nccl_comm *c, void *arg)
{
    (void)arg;
    KN_CUDA(cudaEventRecord(c->t1, c->stream));
    return KERN_CUDA_OK;
}

static kern_cuda_status kn_ms_body(kern_nccl_comm *c, void *arg)
{
    KN_CUDA(cudaEventSynchronize(c->t1));
    KN_CUDA(cudaEventElapsedTime((float *)arg, c->t0, c->t1));
    return KERN_CUDA_OK;
}

kern_cuda_status kern_nccl_timer_start(kern_nccl_comm *c)
{
    if (!c) return KN_EINVAL("c is NULL");
    return kn_on_device(c, kn_t0_body, NULL);
}

kern_cuda_status kern_nccl_timer_stop(kern_nccl_comm *c)
{
    if (!c) return KN_EINVAL("c is NULL");
    return kn_on_device(c, kn_t1_body, NULL);
}

kern_cuda_status kern_nccl_timer_ms(kern_nccl_comm *c, float *ms)
{
    if (!c || !ms) return KN_EINVAL("NULL argument");
    return kn_on_device(c, kn_ms_body, ms);
}
