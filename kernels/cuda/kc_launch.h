/* kc_launch.h: the kernel launchers, one translation unit per group of
 * instantiations (nvcc is slow: attn_fwd_bf16.cu, attn_fwd_fp16.cu and
 * attn_bwd.cu compile in parallel), called by attn_flash.cu and
 * attn_ref.cu. Arguments are checked by the callers. C++ (nvcc) only. */
#ifndef KC_LAUNCH_H
#define KC_LAUNCH_H

#include "attn_bwd_kernel.cuh"
#include "attn_fwd_kernel.cuh"
#include "kc_internal.h"

/* forward of shape (mt, bnc) from kc_fwd_shape, head dimension 64 or 128 */
kern_cuda_status kc_fwd_launch_bf16(const kc_fwd_params &p, int d, int mt, int bnc, bool causal, cudaStream_t st);
kern_cuda_status kc_fwd_launch_fp16(const kc_fwd_params &p, int d, int mt, int bnc, bool causal, cudaStream_t st);
/* backward main kernel (after kc_launch_bwd_pre has filled p.dr) */
kern_cuda_status kc_bwd_launch(const kc_bwd_params &p, kern_cuda_dtype t, int d, bool causal, cudaStream_t st);

#endif
