/* attn_bwd.cu: the flash backward's instantiations (attn_bwd_kernel.cuh)
 * and their launches: the rowsum(dO o O) preprocess and the main kernel. */
#include "kc_launch.h"

kern_cuda_status kc_launch_bwd_pre(const void *o, const void *dout, kern_cuda_dtype t, float *dr, long long rows,
                                   int d, cudaStream_t st)
{
    if (rows == 0) return KERN_CUDA_OK;
    const unsigned blocks = kc_blocks(rows, 8);
    if (t == KERN_CUDA_BF16)
        kc_attn_bwd_pre_kernel<kc_bf16><<<blocks, 256, 0, st>>>(static_cast<const uint16_t *>(o),
                                                               static_cast<const uint16_t *>(dout), dr, rows, d);
    else
        kc_attn_bwd_pre_kernel<kc_fp16><<<blocks, 256, 0, st>>>(static_cast<const uint16_t *>(o),
                                                               static_cast<const uint16_t *>(dout), dr, rows, d);
    KC_LAUNCHED("kc_attn_bwd_pre_kernel");
    return KERN_CUDA_OK;
}

template <typename T, int D, bool CAUSAL>
static kern_cuda_status kc_launch_bwd(const kc_bwd_params &p, cudaStream_t st)
{
    using C = kc_bwd_cfg<D>;
    auto kern = kc_attn_bwd_kernel<T, D, CAUSAL>;
    static unsigned optin_done; /* per instantiation: devices whose limit is raised */
    KC_TRY(kc_smem_optin(kern, C::SMEM, &optin_done));
    const dim3 grid((unsigned)p.heads, kc_blocks(p.n_kv, C::BN));
    kern<<<grid, C::NT, C::SMEM, st>>>(p);
    KC_LAUNCHED("kc_attn_bwd_kernel");
    return KERN_CUDA_OK;
}

template <typename T>
static kern_cuda_status kc_bwd_d(const kc_bwd_params &p, int d, bool causal, cudaStream_t st)
{
    if (d == 64) return causal ? kc_launch_bwd<T, 64, true>(p, st) : kc_launch_bwd<T, 64, false>(p, st);
    return causal ? kc_launch_bwd<T, 128, true>(p, st) : kc_launch_bwd<T, 128, false>(p, st);
}

kern_cuda_status kc_bwd_launch(const kc_bwd_params &p, kern_cuda_dtype t, int d, bool causal, cudaStream_t st)
{
    return t == KERN_CUDA_BF16 ? kc_bwd_d<kc_bf16>(p, d, causal, st) : kc_bwd_d<kc_fp16>(p, d, causal, st);
}
