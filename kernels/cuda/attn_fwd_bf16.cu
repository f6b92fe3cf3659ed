/* attn_fwd_bf16.cu: the bf16 instantiations of the flash forward
 * (attn_fwd_kernel.cuh) and their launch. */
#include "kc_launch.h"

template <typename T, int D, int MT, int BNC, bool CAUSAL>
static kern_cuda_status kc_launch_fwd(const kc_fwd_params &p, cudaStream_t st)
{
    using C = kc_fwd_cfg<D, MT, BNC>;
    auto kern = kc_attn_fwd_kernel<T, D, MT, BNC, CAUSAL>;
    static unsigned optin_done; /* per instantiation: devices whose limit is raised */
    KC_TRY(kc_smem_optin(kern, C::SMEM, &optin_done));
    const dim3 grid((unsigned)p.heads, kc_blocks(p.n_q, C::BM));
    kern<<<grid, C::NT, C::SMEM, st>>>(p);
    KC_LAUNCHED("kc_attn_fwd_kernel");
    return KERN_CUDA_OK;
}

template <typename T, int D>
static kern_cuda_status kc_fwd_shape_launch(const kc_fwd_params &p, int mt, int bnc, bool causal, cudaStream_t st)
{
    return kc_fwd_dispatch(mt, bnc, [&](auto MT, auto BNC) {
        return causal ? kc_launch_fwd<T, D, decltype(MT)::value, decltype(BNC)::value, true>(p, st)
                      : kc_launch_fwd<T, D, decltype(MT)::value, decltype(BNC)::value, false>(p, st);
    });
}

kern_cuda_status kc_fwd_launch_bf16(const kc_fwd_params &p, int d, int mt, int bnc, bool causal, cudaStream_t st)
{
    return d == 64 ? kc_fwd_shape_launch<kc_bf16, 64>(p, mt, bnc, causal, st)
                   : kc_fwd_shape_launch<kc_bf16, 128>(p, mt, bnc, causal, st);
}
