/* kern_cuda_host.c: the parts of libulykern_cuda that need no GPU: status
 * and dtype names, bf16/fp16 conversions on the host (round to nearest
 * even, as the device's __float2bfloat16_rn / __float2half_rn), the FP8
 * formats' host reference (as the device's saturating cvt.rn.satfinite),
 * tensorwise scales and the FP8 GEMM's workspace size. The CPU-only
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

/* ------------------------------------------------------------------ FP8 */

/* A format's fields: mantissa bits, exponent bias, largest finite code
 * (sign cleared) and its NaN code */
typedef struct fp8_fmt {
    int mbits, bias;
    uint8_t max_code, nan_code;
} fp8_fmt;

static fp8_fmt fp8_fmt_of(kern_cuda_fp8 f)
{
    return f == KERN_CUDA_E5M2 ? (fp8_fmt){2, 15, 0x7b, 0x7f} : (fp8_fmt){3, 7, 0x7e, 0x7f};
}

float kern_cuda_fp8_max(kern_cuda_fp8 f)
{
    switch (f) {
    case KERN_CUDA_E4M3: return 448.0f;
    case KERN_CUDA_E5M2: return 57344.0f;
    }
    return 0.0f;
}

const char *kern_cuda_fp8_name(kern_cuda_fp8 f)
{
    switch (f) {
    case KERN_CUDA_E4M3: return "e4m3";
    case KERN_CUDA_E5M2: return "e5m2";
    }
    return "unknown";
}

float kern_cuda_host_fp8_to_f32(uint8_t bits, kern_cuda_fp8 f)
{
    const fp8_fmt F = fp8_fmt_of(f);
    const int sign = bits >> 7, e = (bits & 0x7f) >> F.mbits, m = bits & ((1 << F.mbits) - 1);
    const int e_max = 0x7f >> F.mbits; /* the all-ones exponent */
    double v;
    if (f == KERN_CUDA_E4M3 && (bits & 0x7f) == 0x7f) return NAN;
    if (f == KERN_CUDA_E5M2 && e == e_max) v = m ? NAN : INFINITY;
    else if (e == 0) v = ldexp((double)m, 1 - F.bias - F.mbits); /* subnormal: m * 2^(1 - bias - mbits) */
    else v = ldexp((double)((1 << F.mbits) | m), e - F.bias - F.mbits);
    return (float)(sign ? -v : v);
}

uint8_t kern_cuda_host_fp8_from_f32(float x, kern_cuda_fp8 f)
{
    const fp8_fmt F = fp8_fmt_of(f);
    const uint8_t sign = signbit(x) ? 0x80 : 0x00;
    if (isnan(x)) return (uint8_t)(sign | F.nan_code);
    const double a = fabs((double)x);
    if (a >= (double)kern_cuda_fp8_max(f)) return (uint8_t)(sign | F.max_code); /* saturate, infinity too */
    const int e_min = 1 - F.bias;                                                /* the smallest normal's exponent */
    int code;
    if (a < ldexp(1.0, e_min)) {
        /* subnormal: steps of 2^(e_min - mbits); nearbyint rounds to even in the default mode. The
         * count may reach 2^mbits, which is the smallest normal's code */
        code = (int)nearbyint(ldexp(a, F.mbits - e_min));
    } else {
        int e;
        const double fr = frexp(a, &e); /* a = fr 2^e, fr in [0.5, 1) */
        e -= 1;                         /* a = (2 fr) 2^e, 2 fr in [1, 2) */
        int q = (int)nearbyint(ldexp(2.0 * fr - 1.0, F.mbits)); /* mantissa steps; exact in double */
        if (q == 1 << F.mbits) q = 0, e++;                        /* rounded up into the next binade */
        code = ((e + F.bias) << F.mbits) | q;
    }
    if (code > F.max_code) code = F.max_code; /* rounds beyond the largest finite value: saturate */
    return (uint8_t)(sign | code);
}

float kern_cuda_fp8_scale(float amax, kern_cuda_fp8 f)
{
    if (amax == 0.0f) return 1.0f;
    if (!isfinite(amax)) return NAN;
    return kern_cuda_fp8_max(f) / amax; /* float32, as the device */
}

/* The FP8 GEMM's workspace: the k-contiguous FP8 copies of A (m x k) and B
 * (n x k), four floats (amax of A and B, then the inverse scales), and
 * cuBLASLt's own workspace: 32 MiB, what TransformerEngine gives cuBLASLt
 * on Hopper (transformer_engine/pytorch/module/base.py,
 * get_cublas_workspace_size_bytes: 32 MiB for compute capability 9 and
 * newer, 4 MiB before). */
#define KC_FP8_LT_WORKSPACE_BYTES ((size_t)32 << 20)
static size_t align256(size_t x) { return (x + 255) & ~(size_t)255; }

size_t kern_cuda_gemm_fp8_workspace(int m, int n, int k)
{
    if (m < 0 || n < 0 || k < 0) return 0;
    return align256((size_t)m * (size_t)k) + align256((size_t)n * (size_t)k) + 256 + KC_FP8_LT_WORKSPACE_BYTES;
}
