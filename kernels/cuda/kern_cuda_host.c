/* kern_cuda_host.c: the parts of libulykern_cuda that need no GPU: status
 * and dtype names, and bf16/fp16 conversions on the host (round to nearest
 * even, as the device's __float2bfloat16_rn / __float2half_rn). The CPU-only
 * emulator tests use these too. */
#include <math.h>
#include <string.h>

#include "kern_cuda.h"

const char *kern_cuda_status_str(kern_cuda_status s)
{
    switch (s) {
    case KERN_CUDA_OK: return "ok";
    case KERN_CUDA_EINVAL: return "invalid shape, pointer or option";
    case KERN_CUDA_ENOMEM: return "out of memory";
    case KERN_CUDA_ENODEV: return "no CUDA device or no usable driver";
    case KERN_CUDA_ECUDA: return "CUDA runtime error";
    case KERN_CUDA_ECUBLAS: return "cuBLAS error";
    case KERN_CUDA_ENCCL: return "NCCL error";
    case KERN_CUDA_EUNSUPPORTED: return "not supported by this kernel";
    }
    return "unknown status";
}

size_t kern_cuda_dtype_size(kern_cuda_dtype t)
{
    switch (t) {
    case KERN_CUDA_BF16:
    case KERN_CUDA_FP16: return 2;
    case KERN_CUDA_F32: return 4;
    }
    return 0;
}

const char *kern_cuda_dtype_name(kern_cuda_dtype t)
{
    switch (t) {
    case KERN_CUDA_BF16: return "bf16";
    case KERN_CUDA_FP16: return "fp16";
    case KERN_CUDA_F32: return "fp32";
    }
    return "unknown";
}

static uint32_t f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

static float bits_f32(uint32_t u)
{
    float x;
    memcpy(&x, &u, 4);
    return x;
}

static uint16_t to_bf16(float x)
{
    uint32_t u = f32_bits(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN, sign kept */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static uint16_t to_fp16(float x)
{
    const uint32_t u = f32_bits(x);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    const uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u); /* NaN */
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: inf */
    if (a < 0x38800000u) {                                   /* below 2^-14: subnormal or zero */
        /* value = a_float; subnormal step 2^-24: round(a * 2^24) to even */
        const float f = bits_f32(a) * 16777216.0f; /* exact: scaling by a power of two */
        const float r = nearbyintf(f);             /* default rounding mode: to nearest even */
        return (uint16_t)(sign | (uint16_t)r);     /* r <= 1024: 1024 is the smallest normal, encoded the same */
    }
    /* normal: rebias exponent 127 -> 15, round the 13 dropped mantissa bits to even */
    uint32_t m = a - 0x38000000u; /* exponent - 112 */
    m += 0x0fffu + ((m >> 13) & 1u);
    return (uint16_t)(sign | (uint16_t)(m >> 13));
}

static float from_fp16(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) {
        const float v = (float)m * (1.0f / 16777216.0f); /* m * 2^-24 */
        return sign ? -v : v;
    }
    if (e == 31) return bits_f32(sign | 0x7f800000u | (m << 13));
    return bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

uint16_t kern_cuda_host_from_f32(float x, kern_cuda_dtype t)
{
    return t == KERN_CUDA_FP16 ? to_fp16(x) : to_bf16(x);
}

float kern_cuda_host_to_f32(uint16_t bits, kern_cuda_dtype t)
{
    return t == KERN_CUDA_FP16 ? from_fp16(bits) : bits_f32((uint32_t)bits << 16);
}

void kern_cuda_host_round(const float *src, uint16_t *dst, size_t n, kern_cuda_dtype t)
{
    for (size_t i = 0; i < n; i++) dst[i] = kern_cuda_host_from_f32(src[i], t);
}

void kern_cuda_host_widen(const uint16_t *src, float *dst, size_t n, kern_cuda_dtype t)
{
    for (size_t i = 0; i < n; i++) dst[i] = kern_cuda_host_to_f32(src[i], t);
}
