/* kern_nccl.h: the NCCL collective layer of libulykern_cuda (prefix
 * kern_nccl_): what a GPU executor of ulysim plans needs from NCCL, with no
 * MPI inside and no CUDA or NCCL type in this header.
 *
 * One kern_nccl_comm per (rank, group): an NCCL communicator, the GPU it
 * drives, its own CUDA stream (communication runs there, so ring transfers
 * overlap attention running on the compute stream) and a pair of CUDA
 * events for timing. Setting one up needs the group's members to agree on
 * an NCCL unique id; the caller supplies that exchange as a callback, so the
 * layer works under MPI, under a launcher's key-value store or inside one
 * process. With MPI (one communicator per plan group):
 *
 *     static int bcast(void *id, size_t n, void *ctx)
 *     { return MPI_Bcast(id, (int)n, MPI_BYTE, 0, *(MPI_Comm *)ctx) == MPI_SUCCESS ? 0 : -1; }
 *     kern_nccl_comm_create(group_size, group_rank, local_rank % ngpus, bcast, &group_comm, &c);
 *
 * Operations are asynchronous on the communicator's stream. Counts are in
 * elements of `dtype` (BF16, FP16 or F32). Every operation adds to *bytes
 * (when not NULL) the bytes this rank hands to NCCL for other ranks, by the
 * same rules the CPU harness counts MPI traffic (harness/hx.h), so traces
 * of the two backends compare directly:
 *     alltoall        count * (p - 1)            (count: elements per peer)
 *     allgather       count * (p - 1)            (count: this rank's block)
 *     reduce_scatter  block * (p - 1)
 *     allreduce       2 * (n / p) * (p - 1)      (reduce-scatter + all-gather, in place)
 *     sendrecv, ring_step   count (0 when sending to itself)
 * times the element size. Blocks for oneself are copied on the stream,
 * never sent.
 *
 * Every CUDA and NCCL call is checked; failures return a kern_cuda_status
 * and kern_cuda_last_error() names the call. With several communicators
 * driven from one thread (one process, several GPUs), issue the
 * operations of all of them between kern_nccl_group_start() and
 * kern_nccl_group_end(), as NCCL requires.
 */
#ifndef KERN_NCCL_H
#define KERN_NCCL_H

#include <stddef.h>
#include <stdint.h>

#include "kern_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kern_nccl_comm kern_nccl_comm;

/* Broadcast `bytes` bytes from the group's rank 0 to every member: called on
 * every member with the id buffer (filled on rank 0, to be overwritten
 * elsewhere). Returns 0 on success. */
typedef int (*kern_nccl_bcast_fn)(void *id, size_t bytes, void *ctx);

/* NCCL's version as NCCL_VERSION_CODE (e.g. 22809), and as text. */
kern_cuda_status kern_nccl_version(int *code, char *text, size_t text_len);

/* One rank of a group of nranks, on `device`. Collective over the group. */
kern_cuda_status kern_nccl_comm_create(int nranks, int rank, int device, kern_nccl_bcast_fn bcast, void *ctx,
                                       kern_nccl_comm **out);
/* nranks communicators of one group in this process, rank i on devices[i]
 * (ncclCommInitAll); comms[i] receives rank i's. */
kern_cuda_status kern_nccl_comm_create_local(int nranks, const int *devices, kern_nccl_comm **comms);
kern_cuda_status kern_nccl_comm_destroy(kern_nccl_comm *c); /* NULL is fine */

int kern_nccl_comm_rank(const kern_nccl_comm *c);
int kern_nccl_comm_size(const kern_nccl_comm *c);
int kern_nccl_comm_device(const kern_nccl_comm *c);
void *kern_nccl_comm_stream(kern_nccl_comm *c); /* a cudaStream_t */

/* Stream dependencies: the communicator's stream waits for what has been
 * queued on `stream` so far (data produced there is then safe to send), or
 * `stream` waits for what has been queued on the communicator's stream
 * (received data is then safe to use). */
kern_cuda_status kern_nccl_wait_for(kern_nccl_comm *c, void *stream);
kern_cuda_status kern_nccl_make_wait(kern_nccl_comm *c, void *stream);
kern_cuda_status kern_nccl_sync(kern_nccl_comm *c); /* host waits for the communicator's stream */

kern_cuda_status kern_nccl_group_start(void);
kern_cuda_status kern_nccl_group_end(void);

/* send [p][count] -> recv [p][count]: block j of send goes to rank j, block
 * i of recv comes from rank i. */
kern_cuda_status kern_nccl_alltoall(kern_nccl_comm *c, const void *send, void *recv, size_t count,
                                    kern_cuda_dtype dtype, int64_t *bytes);
/* send count elements to `dest` and receive count from `src` (either may be
 * -1: no send / no receive), one NCCL group. */
kern_cuda_status kern_nccl_sendrecv(kern_nccl_comm *c, const void *send, int dest, void *recv, int src,
                                    size_t count, kern_cuda_dtype dtype, int64_t *bytes);
/* one ring hop: send to rank + 1, receive from rank - 1 (mod p). */
kern_cuda_status kern_nccl_ring_step(kern_nccl_comm *c, const void *send, void *recv, size_t count,
                                     kern_cuda_dtype dtype, int64_t *bytes);
/* send [count] -> recv [p][count] */
kern_cuda_status kern_nccl_allgather(kern_nccl_comm *c, const void *send, void *recv, size_t count,
                                     kern_cuda_dtype dtype, int64_t *bytes);
/* send [p][block] -> recv [block], summed over ranks */
kern_cuda_status kern_nccl_reduce_scatter(kern_nccl_comm *c, const void *send, void *recv, size_t block,
                                          kern_cuda_dtype dtype, int64_t *bytes);
/* buf [n] summed over ranks in place, as reduce-scatter then all-gather;
 * n must be a multiple of p (pad the buffer). */
kern_cuda_status kern_nccl_allreduce(kern_nccl_comm *c, void *buf, size_t n, kern_cuda_dtype dtype,
                                     int64_t *bytes);

/* CUDA-event timing on the communicator's stream. */
kern_cuda_status kern_nccl_timer_start(kern_nccl_comm *c);
kern_cuda_status kern_nccl_timer_stop(kern_nccl_comm *c);
kern_cuda_status kern_nccl_timer_ms(kern_nccl_comm *c, float *ms); /* waits for the stop event */

#ifdef __cplusplus
}
#endif

#endif /* KERN_NCCL_H */
