/* kern_cuda.cu: errors, devices, memory, streams, timers and the elementwise
 * helpers (convert, poison, random fill) of libulykern_cuda. */
#include <stdio.h>
#include <string.h>

#include <new>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kc_internal.h"

/* ---------------------------------------------------------------- errors */

static thread_local char kc_last_error[768];

const char *kern_cuda_last_error(void) { return kc_last_error; }

kern_cuda_status kc_fail(kern_cuda_status st, const char *what, const char *file, int line, const char *msg)
{
    const char *base = strrchr(file, '/');
    snprintf(kc_last_error, sizeof kc_last_error, "%s (%s:%d): %s", what, base ? base + 1 : file, line, msg);
    return st;
}

kern_cuda_status kc_fail_cuda(cudaError_t e, const char *what, const char *file, int line)
{
    char msg[300];
    snprintf(msg, sizeof msg, "%s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
    (void)cudaGetLastError(); /* clear a non-sticky error so later calls are not blamed */
    kern_cuda_status st = KERN_CUDA_ECUDA;
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) st = KERN_CUDA_ENODEV;
    if (e == cudaErrorMemoryAllocation) st = KERN_CUDA_ENOMEM;
    return kc_fail(st, what, file, line, msg);
}

const char *kc_cublas_status_name(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "CUBLAS_STATUS_(unknown)";
    }
}

kern_cuda_status kc_fail_cublas(cublasStatus_t s, const char *what, const char *file, int line)
{
    return kc_fail(s == CUBLAS_STATUS_ALLOC_FAILED ? KERN_CUDA_ENOMEM : KERN_CUDA_ECUBLAS, what, file, line,
                   kc_cublas_status_name(s));
}

/* --------------------------------------------------------------- devices */

kern_cuda_status kern_cuda_device_count(int *n)
{
    if (!n) return KC_EINVAL("n is NULL");
    *n = 0;
    cudaError_t e = cudaGetDeviceCount(n);
    if (e != cudaSuccess) {
        *n = 0;
        return kc_fail_cuda(e, "cudaGetDeviceCount(n)", __FILE__, __LINE__);
    }
    if (*n == 0) return kc_fail(KERN_CUDA_ENODEV, "cudaGetDeviceCount", __FILE__, __LINE__, "0 devices");
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_device_query(int dev, struct kern_cuda_device_info *out)
{
    if (!out) return KC_EINVAL("out is NULL");
    memset(out, 0, sizeof *out);
    cudaDeviceProp p;
    KC_CUDA(cudaGetDeviceProperties(&p, dev));
    snprintf(out->name, sizeof out->name, "%s", p.name);
    out->major = p.major;
    out->minor = p.minor;
    out->sm_count = p.multiProcessorCount;
    out->mem_bytes = p.totalGlobalMem;
    out->l2_bytes = (size_t)p.l2CacheSize;
    out->smem_per_block_optin = p.sharedMemPerBlockOptin;
    KC_CUDA(cudaDeviceGetAttribute(&out->clock_khz, cudaDevAttrClockRate, dev));
    KC_CUDA(cudaDeviceGetAttribute(&out->mem_clock_khz, cudaDevAttrMemoryClockRate, dev));
    KC_CUDA(cudaDeviceGetAttribute(&out->mem_bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev));
    KC_CUDA(cudaDriverGetVersion(&out->driver_version));
    KC_CUDA(cudaRuntimeGetVersion(&out->runtime_version));
    KC_CUDA(cudaDeviceGetPCIBusId(out->pci_bus_id, (int)sizeof out->pci_bus_id, dev));
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_set_device(int dev)
{
    KC_CUDA(cudaSetDevice(dev));
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_synchronize(void)
{
    KC_CUDA(cudaDeviceSynchronize());
    return KERN_CUDA_OK;
}

#ifndef KC_CUDA_ARCHS
#define KC_CUDA_ARCHS "(not recorded)"
#endif
#define KC_STR2(x) #x
#define KC_STR(x) KC_STR2(x)
const char *kern_cuda_build_info(void)
{
    return "nvcc " KC_STR(__CUDACC_VER_MAJOR__) "." KC_STR(__CUDACC_VER_MINOR__) "." KC_STR(
        __CUDACC_VER_BUILD__) ", architectures " KC_CUDA_ARCHS;
}

/* ---------------------------------------------------------------- memory */

kern_cuda_status kern_cuda_malloc(void **p, size_t bytes)
{
    if (!p) return KC_EINVAL("p is NULL");
    *p = NULL;
    KC_CUDA(cudaMalloc(p, bytes ? bytes : 1));
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_free(void *p)
{
    if (p) KC_CUDA(cudaFree(p));
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_mem_get_info(size_t *free_bytes, size_t *total_bytes)
{
    KC_CUDA(cudaMemGetInfo(free_bytes, total_bytes));
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_h2d(void *dst, const void *src, size_t bytes)
{
    if (bytes) KC_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_d2h(void *dst, const void *src, size_t bytes)
{
    if (bytes) KC_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_d2d(void *dst, const void *src, size_t bytes, void *stream)
{
    if (bytes) KC_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, (cudaStream_t)stream));
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_memset0(void *p, size_t bytes, void *stream)
{
    if (bytes) KC_CUDA(cudaMemsetAsync(p, 0, bytes, (cudaStream_t)stream));
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_stream_create(void **stream)
{
    if (!stream) return KC_EINVAL("stream is NULL");
    cudaStream_t s;
    KC_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    *stream = (void *)s;
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_stream_destroy(void *stream)
{
    if (stream) KC_CUDA(cudaStreamDestroy((cudaStream_t)stream));
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_stream_sync(void *stream)
{
    KC_CUDA(cudaStreamSynchronize((cudaStream_t)stream));
    return KERN_CUDA_OK;
}

/* ----------------------------------------------------------- elementwise */

__device__ __forceinline__ float kc_load_as_f32(const void *p, int t, size_t i)
{
    if (t == KERN_CUDA_F32) return static_cast<const float *>(p)[i];
    const uint16_t b = static_cast<const uint16_t *>(p)[i];
    if (t == KERN_CUDA_BF16) return __uint_as_float((uint32_t)b << 16);
    return __half2float(__ushort_as_half(b));
}

__device__ __forceinline__ void kc_store_f32_as(void *p, int t, size_t i, float x)
{
    if (t == KERN_CUDA_F32)
        static_cast<float *>(p)[i] = x;
    else if (t == KERN_CUDA_BF16)
        static_cast<uint16_t *>(p)[i] = __bfloat16_as_ushort(__float2bfloat16_rn(x));
    else
        static_cast<uint16_t *>(p)[i] = __half_as_ushort(__float2half_rn(x));
}

__global__ void kc_convert_kernel(void *dst, int dt, const void *src, int st, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        kc_store_f32_as(dst, dt, i, kc_load_as_f32(src, st, i));
}

__global__ void kc_fill_nan_kernel(void *p, int t, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        if (t == KERN_CUDA_F32)
            static_cast<uint32_t *>(p)[i] = 0x7fc00000u;
        else
            static_cast<uint16_t *>(p)[i] = t == KERN_CUDA_BF16 ? 0x7fc0u : 0x7e00u;
    }
}

__device__ __forceinline__ uint64_t kc_splitmix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

__global__ void kc_fill_uniform_kernel(void *p, int t, size_t n, uint64_t seed, float lo, float hi)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const uint64_t r = kc_splitmix(seed * 0xD1B54A32D192ED03ull + i);
        const float u = (float)(r >> 40) * (1.0f / 16777216.0f); /* [0, 1) */
        kc_store_f32_as(p, t, i, lo + (hi - lo) * u);
    }
}

static unsigned kc_grid_for(size_t n)
{
    size_t b = (n + 255) / 256;
    if (b > 65536u * 16u) b = 65536u * 16u; /* grid-stride beyond ~270M elements */
    return (unsigned)(b ? b : 1);
}

static bool kc_dtype_ok(kern_cuda_dtype t) { return t == KERN_CUDA_BF16 || t == KERN_CUDA_FP16 || t == KERN_CUDA_F32; }

kern_cuda_status kern_cuda_convert(void *dst, kern_cuda_dtype dst_t, const void *src, kern_cuda_dtype src_t,
                                   size_t n, void *stream)
{
    if (!kc_dtype_ok(dst_t) || !kc_dtype_ok(src_t)) return KC_EINVAL("unknown dtype");
    if (n == 0) return KERN_CUDA_OK;
    if (!dst || !src) return KC_EINVAL("NULL buffer");
    kc_convert_kernel<<<kc_grid_for(n), 256, 0, (cudaStream_t)stream>>>(dst, dst_t, src, src_t, n);
    KC_LAUNCHED("kc_convert_kernel");
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_fill_nan(void *p, kern_cuda_dtype t, size_t n, void *stream)
{
    if (!kc_dtype_ok(t)) return KC_EINVAL("unknown dtype");
    if (n == 0) return KERN_CUDA_OK;
    if (!p) return KC_EINVAL("NULL buffer");
    kc_fill_nan_kernel<<<kc_grid_for(n), 256, 0, (cudaStream_t)stream>>>(p, t, n);
    KC_LAUNCHED("kc_fill_nan_kernel");
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_fill_uniform(void *p, kern_cuda_dtype t, size_t n, uint64_t seed, float lo, float hi,
                                        void *stream)
{
    if (!kc_dtype_ok(t)) return KC_EINVAL("unknown dtype");
    if (n == 0) return KERN_CUDA_OK;
    if (!p) return KC_EINVAL("NULL buffer");
    kc_fill_uniform_kernel<<<kc_grid_for(n), 256, 0, (cudaStream_t)stream>>>(p, t, n, seed, lo, hi);
    KC_LAUNCHED("kc_fill_uniform_kernel");
    return KERN_CUDA_OK;
}

/* ---------------------------------------------------------------- timers */

struct kern_cuda_timer {
    cudaEvent_t a, b;
};

kern_cuda_status kern_cuda_timer_create(kern_cuda_timer **t)
{
    if (!t) return KC_EINVAL("t is NULL");
    *t = NULL;
    kern_cuda_timer *x = new (std::nothrow) kern_cuda_timer;
    if (!x) return kc_fail(KERN_CUDA_ENOMEM, "new kern_cuda_timer", __FILE__, __LINE__, "out of host memory");
    cudaError_t e = cudaEventCreate(&x->a);
    if (e != cudaSuccess) {
        delete x;
        return kc_fail_cuda(e, "cudaEventCreate(&x->a)", __FILE__, __LINE__);
    }
    e = cudaEventCreate(&x->b);
    if (e != cudaSuccess) {
        kern_cuda_status st = kc_fail_cuda(e, "cudaEventCreate(&x->b)", __FILE__, __LINE__);
        if (cudaEventDestroy(x->a) != cudaSuccess) (void)cudaGetLastError(); /* the first failure is the one reported */
        delete x;
        return st;
    }
    *t = x;
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_timer_destroy(kern_cuda_timer *t)
{
    if (!t) return KERN_CUDA_OK;
    const cudaError_t ea = cudaEventDestroy(t->a), eb = cudaEventDestroy(t->b);
    delete t;
    if (ea != cudaSuccess) return kc_fail_cuda(ea, "cudaEventDestroy(t->a)", __FILE__, __LINE__);
    if (eb != cudaSuccess) return kc_fail_cuda(eb, "cudaEventDestroy(t->b)", __FILE__, __LINE__);
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_timer_start(kern_cuda_timer *t, void *stream)
{
    if (!t) return KC_EINVAL("t is NULL");
    KC_CUDA(cudaEventRecord(t->a, (cudaStream_t)stream));
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_timer_stop(kern_cuda_timer *t, void *stream)
{
    if (!t) return KC_EINVAL("t is NULL");
    KC_CUDA(cudaEventRecord(t->b, (cudaStream_t)stream));
    return KERN_CUDA_OK;
}

kern_cuda_status kern_cuda_timer_ms(kern_cuda_timer *t, float *ms)
{
    if (!t || !ms) return KC_EINVAL("NULL argument");
    KC_CUDA(cudaEventSynchronize(t->b));
    KC_CUDA(cudaEventElapsedTime(ms, t->a, t->b));
    return KERN_CUDA_OK;
}
