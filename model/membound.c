/* membound.c: the kernels behind each compute op, for pricing memory-bound
 * work by what it does (docs/model.md, "Memory-bound ops"): the class of
 * kernel that moves an element-wise op's bytes, which decides the share of
 * HBM bandwidth it reaches, and how many kernels each op launches, which
 * sets its floor (a kernel costs at least its launch and ramp however few
 * bytes it moves) and what an eager framework issues from the host.
 *
 * The counts are the kernels Megatron-LM's layer launches for the op (its
 * jit fusions, fused layer norm and fused softmax; FlashAttention-2's
 * kernels), written once here: the schedule and the timeline read them. */
#include <string.h>

#include "internal.h"

static const char *const mb_names[ULY_MB_COUNT] = {
#define ULY_MB_CLASS_NAME(e, n) [ULY_MB_##e] = n,
    ULY_MB_CLASSES(ULY_MB_CLASS_NAME)
#undef ULY_MB_CLASS_NAME
};

const char *uly_mb_class_name(uly_mb_class c)
{
    return (unsigned)c < ULY_MB_COUNT ? mb_names[c] : "?";
}

uly_mb_class uly_mb_class_find(const char *name)
{
    if (!name) return ULY_MB_COUNT;
    for (int i = 0; i < ULY_MB_COUNT; i++)
        if (strcmp(mb_names[i], name) == 0) return (uly_mb_class)i;
    return ULY_MB_COUNT;
}

/* Per op type: the class of its memory-bound bytes and its kernels. An op
 * type left out is one kernel of the stream class (a GEMM's roofline bytes,
 * a collective's NCCL kernel). */
typedef struct op_kernels {
    uint8_t cls;  /* uly_mb_class + 1 (0: left out) */
    uint8_t n;    /* kernels launched */
} op_kernels;

#define K(type, c, count) [ULY_OPT_##type] = {ULY_MB_##c + 1, count}
static const op_kernels op_k[ULY_OPT_COUNT] = {
    /* forward: the residual branch's bias-dropout-add, then the norm
     * (Megatron-LM's bias_dropout_add_fused and fused layer norm) */
    K(LN1, NORM, 2), K(LN2, NORM, 2),
    /* backward: the norm's backward, the dropout's backward, the residual
     * gradients' sum */
    K(LN1_BWD, NORM_BWD, 3), K(LN2_BWD, NORM_BWD, 3),
    /* bias + GeLU (or SwiGLU) fused, forward and backward */
    K(MLP_ACT, STREAM, 1), K(MLP_ACT_BWD, STREAM, 1),
    /* weight GEMMs: backward runs the data and the weight gradient */
    K(MLP_DOWN_BWD, STREAM, 2), K(MLP_UP_BWD, STREAM, 2), K(OUT_PROJ_BWD, STREAM, 2),
    K(QKV_PROJ_BWD, STREAM, 2), K(LOGITS_BWD, STREAM, 2),
    /* RSA's materialised softmax with its dropout */
    K(RSA_SOFTMAX, SOFTMAX, 2), K(RSA_SOFTMAX_BWD, SOFTMAX, 2),
    /* word (and position) embedding gather, sum, dropout */
    K(EMBED, STREAM, 3),
    /* vocab-parallel cross-entropy: row max, shift, exp-sum, log, target
     * gather, forward; its backward is folded into the softmax pass */
    K(LOSS, SOFTMAX, 6),
    /* unscale and inf check, gradient norm, Adam, cast to half precision,
     * zero the gradient buffer: multi-tensor launches */
    K(OPTIMIZER, OPTIM, 5),
};
#undef K

uly_mb_class uly_op_mb_class(const uly_op *o)
{
    const unsigned t = (unsigned)o->type;
    if (o->kind == ULY_OP_ATTN) return ULY_MB_SOFTMAX; /* materialised scores: softmax and its dropout */
    return t < ULY_OPT_COUNT && op_k[t].cls ? (uly_mb_class)(op_k[t].cls - 1) : ULY_MB_STREAM;
}

int uly_op_kernels(const uly_op *o)
{
    const unsigned t = (unsigned)o->type;
    if (o->kind == ULY_OP_ATTN) {
        const int bwd = o->phase == ULY_PHASE_BWD && !o->recompute;
        /* flash: FlashAttention-2's forward kernel; backward its dO.O
         * preprocessing, the main kernel and dQ's conversion. Materialised
         * (Megatron-LM's CoreAttention): QK^T, scale-mask-softmax, dropout,
         * PV forward; backward PV's two GEMMs, dropout, softmax, QK^T's two */
        const int per_block = o->flash ? (bwd ? 3 : 1) : (bwd ? 6 : 4);
        return per_block * (o->steps > 0 ? o->steps : 1);
    }
    return t < ULY_OPT_COUNT && op_k[t].n ? op_k[t].n : 1;
}
