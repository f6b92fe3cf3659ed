/* ulysim_kernels.h: which kernels run a workload, where users and
 * frameworks choose among several for the same work: the flash attention
 * kernel, the cross-entropy's kernels, and the transformer layers'
 * implementation. Included by ulysim.h; include that, not this. */
#ifndef ULYSIM_KERNELS_H
#define ULYSIM_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

/* The flash attention kernel, priced from the cluster preset's curves
 * (FlashAttention-2's published throughput) scaled by the kernel's measured
 * speed relative to it, forward and backward, capped at its stated best:
 *   flash2  FlashAttention-2 (Dao 2023): the presets' curves as they are;
 *   flash3  FlashAttention-3 on Hopper (Shah et al. 2024): 1.5x, the low end
 *           of the paper's 1.5-2.0x over FlashAttention-2, at most 75% of
 *           peak (the paper's best forward);
 *   triton  the 2023 Triton FlashAttention: 1/1.3, FlashAttention-2 being
 *           1.3-2.5x faster on A100 (the FlashAttention-2 paper; the low end);
 *   sdpa    PyTorch scaled_dot_product_attention as benchmarked on H100 in
 *           pytorch/benchmark pull request 2296: 0.74 of the Triton
 *           tutorial's FlashAttention-2 forward at 4K tokens (298 against 405
 *           TFLOP/s); backward assumed the same ratio (not published there).
 *   cudnn   TransformerEngine's cuDNN fused attention (Megatron-Core's on
 *           Hopper and Blackwell): its own forward and backward curves by
 *           sequence length (uly_cudnn_attn_eff), NVIDIA's published cuDNN
 *           SDPA training benchmark on H200 (cudnn-frontend), not the
 *           preset's.
 * Materialised scores are --no-flash (workload.flash = 0), not a kernel. */
#define ULY_ATTN_KERNELS(X)                                                                                            \
    X(ULY_AK_FLASH2, "flash2") X(ULY_AK_FLASH3, "flash3") X(ULY_AK_TRITON, "triton") X(ULY_AK_SDPA, "sdpa")             \
    X(ULY_AK_CUDNN, "cudnn")
typedef enum uly_attn_kernel { ULY_ATTN_KERNELS(ULY_X_ENUM) ULY_AK_COUNT } uly_attn_kernel;
const char *uly_attn_kernel_name(uly_attn_kernel k);
uly_attn_kernel uly_attn_kernel_find(const char *name);
/* Speed relative to the preset's FlashAttention-2 curves [backward], and the
 * efficiency cap (1: none). */
void uly_attn_kernel_scale(uly_attn_kernel k, double *fwd, double *bwd, double *cap);

/* The cross-entropy's kernels over the logits (Megatron-LM's
 * --cross-entropy-loss-fusion and --cross-entropy-fusion-impl; the bytes
 * of each in docs/model.md, "Memory-bound ops"): unfused, the logits cast
 * to fp32 and reduced, shifted, exponentiated, summed and normalised pass
 * by pass (Megatron-LM's default, as PyTorch's cross_entropy over fp32
 * logits); native, Megatron-Core's jit-fused passes; te,
 * TransformerEngine's online-softmax kernels. */
#define ULY_CE_IMPLS(X) X(ULY_CE_UNFUSED, "unfused") X(ULY_CE_NATIVE, "native") X(ULY_CE_TE, "te")
typedef enum uly_ce_impl { ULY_CE_IMPLS(ULY_X_ENUM) ULY_CE_COUNT } uly_ce_impl;
const char *uly_ce_impl_name(uly_ce_impl c);
uly_ce_impl uly_ce_impl_find(const char *name);

/* The transformer layers' implementation (Megatron-LM's
 * --transformer-impl): transformer_engine, TransformerEngine's modules,
 * whose GEMMs add a linear layer's bias and reduce its gradient in their
 * epilogues (cuBLASLt's bias and bias-gradient epilogues); local,
 * Megatron-LM's own layers (and the 2021-2022 code), which add the QKV
 * projection's bias by a kernel of its own and reduce every bias's
 * gradient by one (docs/model.md, "Memory-bound ops"). Only a model with
 * biases (uly_model.bias, qkv_bias) tells them apart. */
#define ULY_TRANSFORMER_IMPLS(X) X(ULY_TI_TE, "transformer_engine") X(ULY_TI_LOCAL, "local")
typedef enum uly_transformer_impl { ULY_TRANSFORMER_IMPLS(ULY_X_ENUM) ULY_TI_COUNT } uly_transformer_impl;
const char *uly_transformer_impl_name(uly_transformer_impl t);
uly_transformer_impl uly_transformer_impl_find(const char *name);

#ifdef __cplusplus
}
#endif
#endif
