/* membound.c: the kernels behind each compute op, for pricing memory-bound
 * work by what it does (docs/model.md, "Memory-bound ops"): the class of
 * kernel that moves an element-wise op's bytes, which decides the share of
 * HBM bandwidth it reaches, and how many kernels each op launches, each
 * adding its launch to the op's work and each issued by an eager host.
 *
 * The counts are the kernels Megatron-LM's layer launches for the op (its
 * jit fusions, fused layer norm and fused softmax; FlashAttention-2's
 * kernels), written once here; uly_emit_op copies them onto each op. The
 * classes' names are the vocabulary's (spec.c). */
#include "internal.h"

/* Per op type, its class and kernels. A type left out is one kernel of the
 * stream class (class 0, count 0 read as 1): a forward GEMM, whose
 * roofline bytes stream; a collective's NCCL kernel. */
#define K(type, c, count) [ULY_OPT_##type] = {ULY_MB_##c, count}
const uly_op_kernels_entry uly_op_kernels_of[ULY_OPT_COUNT] = {
    /* forward: the residual branch's bias-dropout-add, then the norm
     * (Megatron-LM's bias_dropout_add_fused and fused layer norm) */
    K(LN1, NORM, 2), K(LN2, NORM, 2),
    /* backward: the norm's backward, the dropout's, the residual gradients' sum */
    K(LN1_BWD, NORM_BWD, 3), K(LN2_BWD, NORM_BWD, 3),
    /* bias + GeLU (or SwiGLU) fused, forward and backward */
    K(MLP_ACT, STREAM, 1), K(MLP_ACT_BWD, STREAM, 1),
    /* weight GEMMs: backward runs the input and the weight gradient */
    K(MLP_DOWN_BWD, STREAM, 2), K(MLP_UP_BWD, STREAM, 2), K(OUT_PROJ_BWD, STREAM, 2),
    K(QKV_PROJ_BWD, STREAM, 2), K(LOGITS_BWD, STREAM, 2),
    /* RSA's materialised softmax with its dropout */
    K(RSA_SOFTMAX, SOFTMAX, 2), K(RSA_SOFTMAX_BWD, SOFTMAX, 2),
    /* word (and position) embedding gather, sum, dropout */
    K(EMBED, STREAM, 3),
    /* vocab-parallel cross-entropy: row max, shift, exp-sum, log, target
     * gather; its backward folded into the softmax pass */
    K(LOSS, SOFTMAX, 6),
    /* unscale and inf check, gradient norm, Adam, cast to half precision,
     * zero the gradient buffer: multi-tensor launches */
    K(OPTIMIZER, OPTIM, 5),
    /* FSDP2's split_with_sizes_copy: one copy kernel per gathered layer */
    K(FSDP_COPY_OUT, STREAM, 1),
    /* attention: its element-wise bytes are materialised scores' softmax and
     * dropout passes; its counts are uly_attn_kernels_of's */
    K(ATTN_FWD, SOFTMAX, 0), K(ATTN_BWD, SOFTMAX, 0),
};
#undef K

/* Attention's kernels per block, [flash][backward, not recompute]. Flash:
 * FlashAttention-2's forward kernel; backward its dO.O preprocessing, the
 * main kernel and dQ's conversion. Materialised (Megatron-LM's
 * CoreAttention): QK^T, scale-mask-softmax, dropout, PV and the context's
 * permute copy forward; backward the permute's copy, PV's two GEMMs,
 * dropout, softmax, QK^T's two and the Q, K, V gradients' cat. */
const uint8_t uly_attn_kernels_of[2][2] = {{5, 8}, {1, 3}};
