/* test_kcuda_nccl.c: the NCCL collective layer (kern_nccl.h) in one process:
 * one communicator per visible GPU (up to 8), built twice, through
 * ncclCommInitAll (kern_nccl_comm_create_local) and through the unique-id
 * broadcast callback (kern_nccl_comm_create, the path a harness under MPI
 * takes), then every operation on known data: alltoall, sendrecv, ring
 * step, all-gather, reduce-scatter, all-reduce, with the received values
 * and the byte counts checked. With one GPU the group has one rank (every
 * operation is then a local copy and counts 0 bytes); with none the test
 * exits 77 (ctest: skipped). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern_nccl.h"

static int fails, checks;

#define EXPECT(cond, ...)                               \
    do {                                                \
        checks++;                                       \
        if (!(cond)) {                                  \
            fails++;                                    \
            printf("FAIL %s:%d: ", __FILE__, __LINE__); \
            printf(__VA_ARGS__);                        \
            printf("\n");                               \
        }                                               \
    } while (0)

#define CK(call)                                                                                    \
    do {                                                                                            \
        kern_cuda_status st_ = (call);                                                              \
        if (st_ != KERN_CUDA_OK) {                                                                  \
            printf("FAIL %s: %s: %s\n", #call, kern_cuda_status_str(st_), kern_cuda_last_error()); \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

#define MAXR 8

/* in-process "broadcast": rank 0 (called first) leaves the id, the others take it */
struct idbox {
    unsigned char id[256];
    size_t n;
};

static int local_bcast(void *id, size_t bytes, void *ctx)
{
    struct idbox *b = ctx;
    if (bytes > sizeof b->id) return -1;
    if (b->n == 0) {
        memcpy(b->id, id, bytes);
        b->n = bytes;
    } else {
        if (bytes != b->n) return -1;
        memcpy(id, b->id, bytes);
    }
    return 0;
}

static float val(int from, int to, size_t i) { return (float)(from * 1000 + to * 100) + (float)(i % 97); }

static void *dmalloc(int dev, size_t n)
{
    void *p;
    CK(kern_cuda_set_device(dev));
    CK(kern_cuda_malloc(&p, n));
    return p;
}

static void run_ops(kern_nccl_comm **c, int P, const int *devs)
{
    const size_t cnt = 1000; /* elements per peer / per block */
    float *send[MAXR], *recv[MAXR];
    float *h = malloc(sizeof(float) * cnt * P);
    int64_t bytes[MAXR];
    for (int r = 0; r < P; r++) {
        send[r] = dmalloc(devs[r], sizeof(float) * cnt * P);
        recv[r] = dmalloc(devs[r], sizeof(float) * cnt * P);
    }
    /* alltoall: block j of rank r's send holds val(r, j) */
    for (int r = 0; r < P; r++) {
        for (int j = 0; j < P; j++)
            for (size_t i = 0; i < cnt; i++) h[j * cnt + i] = val(r, j, i);
        CK(kern_cuda_set_device(devs[r]));
        CK(kern_cuda_h2d(send[r], h, sizeof(float) * cnt * P));
        bytes[r] = 0;
    }
    CK(kern_nccl_group_start());
    for (int r = 0; r < P; r++) CK(kern_nccl_alltoall(c[r], send[r], recv[r], cnt, KERN_CUDA_F32, &bytes[r]));
    CK(kern_nccl_group_end());
    for (int r = 0; r < P; r++) {
        CK(kern_nccl_sync(c[r]));
        CK(kern_cuda_set_device(devs[r]));
        CK(kern_cuda_d2h(h, recv[r], sizeof(float) * cnt * P));
        int bad = 0;
        for (int i2 = 0; i2 < P; i2++)
            for (size_t i = 0; i < cnt; i++) bad += h[i2 * cnt + i] != val(i2, r, i);
        EXPECT(!bad, "alltoall: rank %d received %d wrong values", r, bad);
        EXPECT(bytes[r] == (int64_t)(cnt * 4 * (P - 1)), "alltoall bytes %lld", (long long)bytes[r]);
    }
    /* ring step, timed on the communicator's stream */
    for (int r = 0; r < P; r++) bytes[r] = 0;
    for (int r = 0; r < P; r++) CK(kern_nccl_timer_start(c[r]));
    CK(kern_nccl_group_start());
    for (int r = 0; r < P; r++) CK(kern_nccl_ring_step(c[r], send[r], recv[r], cnt, KERN_CUDA_F32, &bytes[r]));
    CK(kern_nccl_group_end());
    for (int r = 0; r < P; r++) CK(kern_nccl_timer_stop(c[r]));
    for (int r = 0; r < P; r++) {
        float ms = -1;
        CK(kern_nccl_timer_ms(c[r], &ms));
        EXPECT(ms >= 0, "ring step time %f ms", ms);
        CK(kern_cuda_set_device(devs[r]));
        CK(kern_cuda_d2h(h, recv[r], sizeof(float) * cnt));
        const int from = (r + P - 1) % P;
        int bad = 0;
        for (size_t i = 0; i < cnt; i++) bad += h[i] != val(from, 0, i); /* block 0 of the sender's buffer */
        EXPECT(!bad, "ring step: rank %d got %d wrong values from rank %d", r, bad, from);
        EXPECT(bytes[r] == (P > 1 ? (int64_t)cnt * 4 : 0), "ring step bytes %lld", (long long)bytes[r]);
    }
    /* all-gather of each rank's block 0 */
    for (int r = 0; r < P; r++) bytes[r] = 0;
    CK(kern_nccl_group_start());
    for (int r = 0; r < P; r++) CK(kern_nccl_allgather(c[r], send[r], recv[r], cnt, KERN_CUDA_F32, &bytes[r]));
    CK(kern_nccl_group_end());
    for (int r = 0; r < P; r++) {
        CK(kern_nccl_sync(c[r]));
        CK(kern_cuda_set_device(devs[r]));
        CK(kern_cuda_d2h(h, recv[r], sizeof(float) * cnt * P));
        int bad = 0;
        for (int j = 0; j < P; j++)
            for (size_t i = 0; i < cnt; i++) bad += h[j * cnt + i] != val(j, 0, i);
        EXPECT(!bad, "allgather: rank %d %d wrong", r, bad);
        EXPECT(bytes[r] == (int64_t)(cnt * 4 * (P - 1)), "allgather bytes %lld", (long long)bytes[r]);
    }
    /* reduce-scatter: block j summed over ranks lands on rank j */
    for (int r = 0; r < P; r++) bytes[r] = 0;
    CK(kern_nccl_group_start());
    for (int r = 0; r < P; r++) CK(kern_nccl_reduce_scatter(c[r], send[r], recv[r], cnt, KERN_CUDA_F32, &bytes[r]));
    CK(kern_nccl_group_end());
    for (int r = 0; r < P; r++) {
        CK(kern_nccl_sync(c[r]));
        CK(kern_cuda_set_device(devs[r]));
        CK(kern_cuda_d2h(h, recv[r], sizeof(float) * cnt));
        int bad = 0;
        for (size_t i = 0; i < cnt; i++) {
            float want = 0;
            for (int s = 0; s < P; s++) want += val(s, r, i);
            bad += h[i] != want;
        }
        EXPECT(!bad, "reduce_scatter: rank %d %d wrong", r, bad);
        EXPECT(bytes[r] == (int64_t)(cnt * 4 * (P - 1)), "reduce_scatter bytes %lld", (long long)bytes[r]);
    }
    /* all-reduce in place over the whole buffer (cnt * P, a multiple of P) */
    for (int r = 0; r < P; r++) bytes[r] = 0;
    CK(kern_nccl_group_start());
    for (int r = 0; r < P; r++) CK(kern_nccl_allreduce(c[r], send[r], cnt * P, KERN_CUDA_F32, &bytes[r]));
    CK(kern_nccl_group_end());
    for (int r = 0; r < P; r++) {
        CK(kern_nccl_sync(c[r]));
        CK(kern_cuda_set_device(devs[r]));
        CK(kern_cuda_d2h(h, send[r], sizeof(float) * cnt * P));
        int bad = 0;
        for (int j = 0; j < P; j++)
            for (size_t i = 0; i < cnt; i++) {
                float want = 0;
                for (int s = 0; s < P; s++) want += val(s, j, i);
                bad += h[j * cnt + i] != want;
            }
        EXPECT(!bad, "allreduce: rank %d %d wrong", r, bad);
        EXPECT(bytes[r] == 2 * (int64_t)(cnt * 4 * (P - 1)), "allreduce bytes %lld", (long long)bytes[r]);
    }
    /* a length that is not a multiple of p is refused (with p > 1) */
    if (P > 1) EXPECT(kern_nccl_allreduce(c[0], send[0], cnt * P + 1, KERN_CUDA_F32, NULL) == KERN_CUDA_EINVAL,
                      "allreduce of n %% p != 0 refused");
    for (int r = 0; r < P; r++) {
        CK(kern_cuda_set_device(devs[r]));
        CK(kern_cuda_free(send[r]));
        CK(kern_cuda_free(recv[r]));
    }
    free(h);
}

int main(void)
{
    int n = 0;
    const kern_cuda_status st = kern_cuda_device_count(&n);
    if (st != KERN_CUDA_OK || n < 1) {
        printf("test_kcuda_nccl: SKIP: no usable CUDA device (%s)\n", kern_cuda_last_error());
        return 77;
    }
    int code = 0;
    char ver[96];
    CK(kern_nccl_version(&code, ver, sizeof ver));
    const int P = n < MAXR ? n : MAXR;
    printf("test_kcuda_nccl: %s, %d GPU(s), one communicator each\n", ver, P);
    int devs[MAXR];
    for (int i = 0; i < P; i++) devs[i] = i;
    kern_nccl_comm *c[MAXR];

    CK(kern_nccl_comm_create_local(P, devs, c));
    for (int r = 0; r < P; r++) {
        EXPECT(kern_nccl_comm_rank(c[r]) == r && kern_nccl_comm_size(c[r]) == P, "rank/size");
        EXPECT(kern_nccl_comm_stream(c[r]) != NULL, "own stream");
    }
    run_ops(c, P, devs);
    for (int r = 0; r < P; r++) CK(kern_nccl_comm_destroy(c[r]));

    /* the callback path: every rank's init inside one group, rank 0 first */
    struct idbox box;
    memset(&box, 0, sizeof box);
    CK(kern_nccl_group_start());
    for (int r = 0; r < P; r++) CK(kern_nccl_comm_create(P, r, devs[r], local_bcast, &box, &c[r]));
    CK(kern_nccl_group_end());
    run_ops(c, P, devs);
    for (int r = 0; r < P; r++) CK(kern_nccl_comm_destroy(c[r]));

    printf("test_kcuda_nccl: %d checks, %d failed\n", checks, fails);
    return fails ? 1 : 0;
}
