/* membound.c: the kernels behind each compute op, for pricing memory-bound
 * work by what it does (docs/model.md, "Memory-bound ops"): the class of
 * kernel that moves an element-wise op's bytes, which decides the share of
 * HBM bandwidth it reaches, and how many kernels each op launches, each
 * adding its launch to the op's work and each issued by an eager host; and
 * the bytes of the element-wise kernels the frameworks run (the score
 * passes, the norms, the loss, the main gradients' accumulation, the
 * biases).
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
    /* the main gradients' adds: uly_grad_accum_bytes sets the op's count */
    K(GRAD_ACCUM, STREAM, 1),
    /* the QKV bias's add (forward); backward's count: the layer's biases */
    K(LINEAR_BIAS, STREAM, 1),
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

/* Bytes per score element of the element-wise kernels around a
 * materialised score block, as Megatron-LM's CoreAttention runs them: the
 * fused scale-mask-softmax reads and writes it (backward: reads the
 * probabilities and their gradient, writes the scores' gradient), and the
 * attention dropout, when the model has it, reads it and writes its output
 * and a 1-byte mask (backward: reads gradient and mask, writes one). */
double uly_score_pass_bytes(const uly_bctx *x, int backward)
{
    const double beta = (double)x->beta;
    const double drop = x->m->dropout ? 2.0 * beta + 1.0 : 0.0;
    return beta * (backward ? 3.0 : 2.0) + drop;
}

/* Bytes per hidden element of a norm op: the residual branch's
 * bias-dropout-add, a kernel of its own (Megatron-LM's
 * bias_dropout_add_fused_train, a jit function apart from the norm), reads
 * the branch and the residual and writes their sum, and with dropout its
 * 1-byte mask; the norm then reads the sum and writes the normalised rows:
 * 5 beta (+ 1). Backward: the norm's backward reads the gradient and the
 * saved input and writes the input's gradient, the residual's two
 * gradients are summed (read two, write one): 6 beta; with dropout its
 * backward reads the gradient and the mask and writes one (2 beta + 1). */
double uly_norm_pass_bytes(const uly_bctx *x, int backward)
{
    const double beta = (double)x->beta;
    if (backward) return 6.0 * beta + (x->m->dropout ? 2.0 * beta + 1.0 : 0.0);
    return 5.0 * beta + (x->m->dropout ? 1.0 : 0.0);
}

/* Bytes per logit of the cross-entropy, forward and backward together
 * (one op: its backward is priced with it), the logits beta bytes wide
 * (docs/model.md, "Memory-bound ops"). Where the logits are half
 * precision the loss first casts them to fp32 (read beta, write 4) and its
 * gradient is cast back (read 4, write beta); fp32 logits need neither.
 *   unfused (Megatron-Core's vocab_parallel_cross_entropy): row max (read
 *     4), shift (read, write: 8), exp in place (8), sum (4), normalise in
 *     place (8); backward: the gradient scaled in place (8)
 *   native (its jit-fused functions): the cast fused with the max (the
 *     fp32 copy written; fp32 logits: the max reads 4), shift-exp-sum
 *     (8), normalise (8); backward (8)
 *   te (TransformerEngine's online softmax): two passes over the logits
 *     as they are (2 beta), the fp32 gradient written (4); backward: the
 *     gradient scaled by the per-token loss gradient (8), autograd's cast
 *     back to beta */
double uly_loss_bytes_per_logit(uly_ce_impl impl, double beta)
{
    const double cast = beta < 4.0 ? beta + 4.0 : 0.0; /* to fp32, or back */
    switch (impl) {
    case ULY_CE_NATIVE: return (beta < 4.0 ? beta + 4.0 : 4.0) + 8.0 + 8.0 + 8.0 + cast;
    case ULY_CE_TE: return 2.0 * beta + 4.0 + 8.0 + cast;
    default: return cast + 4.0 + 8.0 + 8.0 + 4.0 + 8.0 + 8.0 + cast;
    }
}

/* Megatron-LM adds each micro-batch's weight gradients into the main
 * gradients it keeps for the step (g bytes each: fp32 or the parameters'
 * precision, uly_megatron_grads_fp32), in one of two ways:
 * - unfused (--no-gradient-accumulation-fusion; the only way before
 *   2022-02, and under fp16 until 2022-09, when the fused kernels took fp32
 *   main gradients only): the weight-gradient GEMM writes the gradient in
 *   the activations' precision (beta, priced with the GEMM), then its
 *   data-parallel wrapper's hook adds it, param.main_grad.add_(param.grad):
 *   beta + g read and g written per parameter, a kernel per parameter
 *   tensor (the four weights and the two norms' gains; biases are not
 *   counted, as uly_layer_params does not);
 * - fused (the default since): the weight-gradient GEMM reads the main
 *   gradient and writes the sum in its epilogue, 2 g where it wrote beta,
 *   no kernel of its own (fused_weight_gradient_mlp_cuda's
 *   wgrad_gemm_accum_fp32/fp16, TransformerEngine's
 *   fuse_wgrad_accumulation); the norms' gains are still added by the hook.
 * Sources: Megatron-LM's megatron/core/tensor_parallel/layers.py
 * (LinearWithGradAccumulationAndAsyncCommunication.backward) and
 * megatron/core/distributed/distributed_data_parallel.py
 * (_make_backward_post_hook); the 2022 arguments.py that turned the fusion
 * off without fp32 accumulation. */
double uly_grad_accum_bytes(const uly_workload *w, double gemm_params, double other_params, int *kernels)
{
    const double beta = uly_dtype_bytes(w->dtype), g = uly_megatron_grads_fp32(w) ? 4.0 : beta;
    const double add = beta + 2.0 * g; /* read the gradient and the main gradient, write the sum */
    if (w->grad_accum_fusion < 0) {
        *kernels = 6;
        return (gemm_params + other_params) * add;
    }
    *kernels = 2;
    return gemm_params * (2.0 * g - beta) + other_params * add;
}
