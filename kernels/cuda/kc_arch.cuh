/* kc_arch.cuh: the few GPU primitives the attention kernels are written in,
 * behind one small interface with two implementations:
 *
 *   nvcc (__CUDACC__)  the real thing: PTX inline assembly for ldmatrix,
 *                      mma.sync m16n8k16, cp.async and ex2.approx.
 *   KC_EMU             a host C++ build for tests/kernels/cuda/emu: every
 *                      primitive calls the SIMT emulator (kc_emu.h), which
 *                      runs the kernel's threads as fibers, implements the
 *                      warp collectives from the PTX ISA's fragment layouts
 *                      and checks shared-memory races between barriers.
 *
 * The kernels touch shared memory only through these functions (ldmatrix,
 * cp.async, kc_sts_u32, kc_lds_f32...), so the emulator sees every shared
 * access and the same kernel source is what runs on the GPU and what the
 * CPU-only tests execute.
 *
 * Element storage: bf16 and fp16 are carried as raw 16-bit patterns
 * (uint16_t); the tag types kc_bf16 / kc_fp16 select the conversion and the
 * mma variant. Needs sm_80 or newer (bf16 mma, cp.async).
 */
#ifndef KC_ARCH_CUH
#define KC_ARCH_CUH

#include <stdint.h>

struct kc_bf16 { static constexpr bool is_bf16 = true; };
struct kc_fp16 { static constexpr bool is_bf16 = false; };

#if defined(__CUDACC__) && !defined(KC_EMU)
/* ================================================================ device */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define KC_DEV __device__ __forceinline__
#define KC_GLOBAL __global__
#define KC_LAUNCH_BOUNDS(t, b) __launch_bounds__(t, b)
#define KC_RESTRICT __restrict__
#define KC_UNROLL _Pragma("unroll")

KC_DEV int kc_tid() { return (int)threadIdx.x; }
KC_DEV int kc_bid_x() { return (int)blockIdx.x; }
KC_DEV int kc_bid_y() { return (int)blockIdx.y; }
KC_DEV int kc_grid_x() { return (int)gridDim.x; }
KC_DEV int kc_grid_y() { return (int)gridDim.y; }

#define KC_DYN_SMEM(name) \
    extern __shared__ __align__(128) unsigned char kc_dyn_smem_[]; \
    unsigned char *name = kc_dyn_smem_

KC_DEV void kc_sync() { __syncthreads(); }

KC_DEV uint32_t kc_smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* 16-byte global->shared copy; src_bytes 0 writes 16 zero bytes (rows past
 * the end of a tensor) without reading src. */
KC_DEV void kc_cp_async16(void *smem_dst, const void *gmem_src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(kc_smem_u32(smem_dst)),
                 "l"(gmem_src), "r"(src_bytes)
                 : "memory");
}
KC_DEV void kc_cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> KC_DEV void kc_cp_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

KC_DEV void kc_ldmatrix_x4(uint32_t r[4], const void *smem_row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(kc_smem_u32(smem_row)));
}
KC_DEV void kc_ldmatrix_x4_trans(uint32_t r[4], const void *smem_row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(kc_smem_u32(smem_row)));
}

/* D = A * B + D, m16n8k16, f32 accumulators. */
template <typename T> KC_DEV void kc_mma(float d[4], const uint32_t a[4], const uint32_t b[2]);
template <> KC_DEV void kc_mma<kc_bf16>(float d[4], const uint32_t a[4], const uint32_t b[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
template <> KC_DEV void kc_mma<kc_fp16>(float d[4], const uint32_t a[4], const uint32_t b[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

KC_DEV float kc_shfl_xor(float v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }

/* 2^x, approximate (ex2.approx.ftz: 2 ulp; 2^-inf = +0). */
KC_DEV float kc_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}
KC_DEV float kc_log2(float x) { return __log2f(x); }

/* Two floats -> packed 16-bit pair, round to nearest even; lo in the low half. */
template <typename T> KC_DEV uint32_t kc_pack2(float lo, float hi);
template <> KC_DEV uint32_t kc_pack2<kc_bf16>(float lo, float hi)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}
template <> KC_DEV uint32_t kc_pack2<kc_fp16>(float lo, float hi)
{
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}
template <typename T> KC_DEV float kc_to_f32(uint16_t bits);
template <> KC_DEV float kc_to_f32<kc_bf16>(uint16_t bits) { return __uint_as_float((uint32_t)bits << 16); }
template <> KC_DEV float kc_to_f32<kc_fp16>(uint16_t bits) { return __half2float(__ushort_as_half(bits)); }
template <typename T> KC_DEV uint16_t kc_from_f32(float x);
template <> KC_DEV uint16_t kc_from_f32<kc_bf16>(float x) { return __bfloat16_as_ushort(__float2bfloat16_rn(x)); }
template <> KC_DEV uint16_t kc_from_f32<kc_fp16>(float x) { return __half_as_ushort(__float2half_rn(x)); }

/* Shared-memory scalar access (plain loads and stores on the device). */
KC_DEV void kc_sts_u32(void *p, uint32_t v) { *reinterpret_cast<uint32_t *>(p) = v; }
KC_DEV void kc_sts_f32(float *p, float v) { *p = v; }
KC_DEV float kc_lds_f32(const float *p) { return *p; }

KC_DEV void kc_atomic_add(float *p, float v) { atomicAdd(p, v); }
/* Global stores and read-modify-writes of an element this thread alone
 * writes in the launch (the emulator checks that claim). */
KC_DEV void kc_stg_u32(void *p, uint32_t v) { *reinterpret_cast<uint32_t *>(p) = v; }
KC_DEV void kc_stg_f32(float *p, float v) { *p = v; }
KC_DEV void kc_add_owned(float *p, float v) { *p += v; }

#else
/* ============================================================== emulator */
#include <cmath>
#include <cstring>

#include "kc_emu.h"

#define KC_DEV static inline
#define KC_GLOBAL static
#define KC_LAUNCH_BOUNDS(t, b)
#define KC_RESTRICT
#define KC_UNROLL

KC_DEV int kc_tid() { return kc_emu_tid(); }
KC_DEV int kc_bid_x() { return kc_emu_bid(0); }
KC_DEV int kc_bid_y() { return kc_emu_bid(1); }
KC_DEV int kc_grid_x() { return kc_emu_grid(0); }
KC_DEV int kc_grid_y() { return kc_emu_grid(1); }

#define KC_DYN_SMEM(name) unsigned char *name = kc_emu_smem()

KC_DEV void kc_sync() { kc_emu_sync(); }
KC_DEV void kc_cp_async16(void *smem_dst, const void *gmem_src, int src_bytes)
{
    kc_emu_cp_async16(smem_dst, gmem_src, src_bytes);
}
KC_DEV void kc_cp_commit() { kc_emu_cp_commit(); }
template <int N> KC_DEV void kc_cp_wait() { kc_emu_cp_wait(N); }
KC_DEV void kc_ldmatrix_x4(uint32_t r[4], const void *smem_row) { kc_emu_ldmatrix_x4(r, smem_row, 0); }
KC_DEV void kc_ldmatrix_x4_trans(uint32_t r[4], const void *smem_row) { kc_emu_ldmatrix_x4(r, smem_row, 1); }
template <typename T> KC_DEV void kc_mma(float d[4], const uint32_t a[4], const uint32_t b[2])
{
    kc_emu_mma(d, a, b, T::is_bf16 ? 1 : 0);
}
KC_DEV float kc_shfl_xor(float v, int mask) { return kc_emu_shfl_xor(v, mask); }
KC_DEV float kc_exp2(float x) { return std::exp2(x); }
KC_DEV float kc_log2(float x) { return std::log2(x); }
template <typename T> KC_DEV uint32_t kc_pack2(float lo, float hi)
{
    return (uint32_t)kc_emu_from_f32(lo, T::is_bf16) | ((uint32_t)kc_emu_from_f32(hi, T::is_bf16) << 16);
}
template <typename T> KC_DEV float kc_to_f32(uint16_t bits) { return kc_emu_to_f32(bits, T::is_bf16); }
template <typename T> KC_DEV uint16_t kc_from_f32(float x) { return kc_emu_from_f32(x, T::is_bf16); }
KC_DEV void kc_sts_u32(void *p, uint32_t v) { kc_emu_sts(p, &v, 4); }
KC_DEV void kc_sts_f32(float *p, float v) { kc_emu_sts(p, &v, 4); }
KC_DEV float kc_lds_f32(const float *p)
{
    float v;
    kc_emu_lds(&v, p, 4);
    return v;
}
KC_DEV void kc_atomic_add(float *p, float v) { *p += v; }
KC_DEV void kc_stg_u32(void *p, uint32_t v)
{
    kc_emu_global_owned(p, 4);
    *reinterpret_cast<uint32_t *>(p) = v;
}
KC_DEV void kc_stg_f32(float *p, float v)
{
    kc_emu_global_owned(p, 4);
    *p = v;
}
KC_DEV void kc_add_owned(float *p, float v)
{
    kc_emu_global_owned(p, 4);
    *p += v;
}
#endif

/* Bits of a 16-bit element as stored in a packed pair. */
KC_DEV uint16_t kc_lo16(uint32_t v) { return (uint16_t)(v & 0xffffu); }
KC_DEV uint16_t kc_hi16(uint32_t v) { return (uint16_t)(v >> 16); }

#endif /* KC_ARCH_CUH */
