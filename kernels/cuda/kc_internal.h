/* kc_internal.h: what the .cu files of libulykern_cuda share: the checked
 * call macros (every CUDA and cuBLAS call goes through one) and the error
 * message of the last failure on this thread. C++ (nvcc) only. */
#ifndef KC_INTERNAL_H
#define KC_INTERNAL_H

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "kc_error.h"
#include "kern_cuda.h"

kern_cuda_status kc_fail_cuda(cudaError_t e, const char *what, const char *file, int line);
kern_cuda_status kc_fail_cublas(cublasStatus_t s, const char *what, const char *file, int line);
const char *kc_cublas_status_name(cublasStatus_t s);

#define KC_CUDA(call)                                                             \
    do {                                                                          \
        cudaError_t kc_e_ = (call);                                               \
        if (kc_e_ != cudaSuccess) return kc_fail_cuda(kc_e_, #call, __FILE__, __LINE__); \
    } while (0)

/* After a kernel launch: launch-configuration errors surface here. */
#define KC_LAUNCHED(what) KC_CUDA(cudaGetLastError())

#define KC_CUBLAS(call)                                                                  \
    do {                                                                                 \
        cublasStatus_t kc_s_ = (call);                                                   \
        if (kc_s_ != CUBLAS_STATUS_SUCCESS) return kc_fail_cublas(kc_s_, #call, __FILE__, __LINE__); \
    } while (0)

#define KC_TRY(expr)                                 \
    do {                                             \
        kern_cuda_status kc_st_ = (expr);            \
        if (kc_st_ != KERN_CUDA_OK) return kc_st_;   \
    } while (0)

#define KC_EINVAL(why) kc_fail(KERN_CUDA_EINVAL, __func__, __FILE__, __LINE__, why)

struct kern_cuda_blas {
    cublasHandle_t h;
    cudaStream_t stream;
    char version[64];
    cublasLtHandle_t lt; /* the FP8 GEMM's (kern_cuda_fp8.cu), made on its first call; NULL until then */
    int lt_cc;           /* that device's compute capability, major * 10 + minor */
};

/* Launch helpers shared by the files (attn_flash.cu, attn_ref.cu). */
kern_cuda_status kc_launch_bwd_pre(const void *o, const void *dout, kern_cuda_dtype t, float *dr, long long rows,
                                   int d, cudaStream_t st);

static inline unsigned kc_blocks(long long n, int per_block) { return (unsigned)((n + per_block - 1) / per_block); }

/* Raises a kernel's dynamic shared-memory limit once per device (a block
 * gets more than 48 KB only after this); *done holds one bit per device. */
template <typename K>
static inline kern_cuda_status kc_smem_optin(K kernel, int bytes, unsigned *done)
{
    int dev = 0;
    KC_CUDA(cudaGetDevice(&dev));
    const unsigned bit = dev < 32 ? 1u << dev : 0u;
    if (bit && (__atomic_load_n(done, __ATOMIC_RELAXED) & bit)) return KERN_CUDA_OK;
    KC_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    if (bit) __atomic_fetch_or(done, bit, __ATOMIC_RELAXED);
    return KERN_CUDA_OK;
}

#endif /* KC_INTERNAL_H */
