/* torch_trace.h: reading the Chrome-trace JSON that torch.profiler exports
 * (prof.export_chrome_trace, or the on_trace_ready handler
 * tensorboard_trace_handler writes): its GPU kernels, classified by name
 * into the categories a plan's ops also fall into, summed per profiler step
 * (the ProfilerStep#N annotations prof.step() records). docs/torch-traces.md
 * lists the name patterns and the step rule.
 *
 * Text in, struct out: no I/O. Messages are one line naming the file (as
 * `shown`) and the event (its index in traceEvents). */
#ifndef FORMATS_TORCH_TRACE_H
#define FORMATS_TORCH_TRACE_H

#include <stddef.h>
#include <stdint.h>

/* The categories, in the order of the reports. */
#define TT_CATEGORIES(X)                                                                                               \
    X(A2A, "nccl_alltoall") X(ALLGATHER, "nccl_allgather") X(REDUCE_SCATTER, "nccl_reduce_scatter")                  \
    X(ALLREDUCE, "nccl_allreduce") X(SENDRECV, "nccl_sendrecv") X(ATTN_FWD, "attn_fwd") X(ATTN_BWD, "attn_bwd")     \
    X(GEMM, "gemm") X(OTHER, "other")

typedef enum tt_cat {
#define TT_CAT_ENUM(e, n) TT_##e,
    TT_CATEGORIES(TT_CAT_ENUM)
#undef TT_CAT_ENUM
    TT_CAT_COUNT
} tt_cat;

const char *tt_cat_name(tt_cat c);

/* The category of a kernel by its name (the first pattern of the table that
 * the name contains, letter case ignored); collective, when not NULL, is
 * the collective PyTorch names in the event's args ("Collective name":
 * all_to_all, _allgather_base, ...) and decides for NCCL kernels, whose
 * names do not tell an all-to-all from send/recv. */
tt_cat tt_classify(const char *name, const char *collective);

typedef struct tt_step {
    int64_t number;              /* N of ProfilerStep#N, 0..2147483647 */
    int event;                   /* its annotation's index in traceEvents (the first, on several streams) */
    double ts_us, dur_us;        /* the step's window */
    int kernels;
    double cat_us[TT_CAT_COUNT]; /* summed kernel time per category */
} tt_step;

#define TT_MAX_STEPS 1024
#define TT_MIN_DUR_US 1e-3 /* a kernel's dur: 0, or at least CUPTI's 1 ns */

typedef struct tt_trace {
    int n_steps;
    tt_step steps[TT_MAX_STEPS]; /* by start time */
    int gpu_windows;             /* 1: the steps are the GPU-side annotations */
    int64_t n_kernels;
    /* GEMM kernels whose names say FP8 operands (cuBLAS's and CUTLASS's
     * e4m3 / e5m2 in the name: sm90_xmma_gemm_e4m3bf16_..., cutlass3x_
     * sm90_tensorop_gemm_e4m3_...): an FP8 training run; the first one's name */
    int64_t n_fp8_gemms;
    char fp8_gemm[96];
    int64_t n_outside;           /* kernels in no step */
    double outside_us;
} tt_trace;

/* Reads the trace text (len bytes, NUL-terminated). Returns 0, or 2 with a
 * reason (not JSON, no traceEvents array, a kernel without a name or a
 * finite non-negative ts and dur, a kernel dur above 0 but below
 * TT_MIN_DUR_US, no ProfilerStep#N annotation, a step number that is not
 * a whole number in 0..2147483647, a step annotated twice (on the GPU: twice
 * on one stream; its annotations on several streams are one window), step
 * windows that overlap, no GPU kernel), or 1 when out of memory. */
int tt_read(const char *text, size_t len, const char *shown, tt_trace *out, char *why, size_t why_len);

#endif
