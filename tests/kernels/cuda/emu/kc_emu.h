/* kc_emu.h: a small SIMT emulator that runs the CUDA attention kernels'
 * source (the kernels/cuda headers named *_kernel.cuh, built with -DKC_EMU) on the CPU, so
 * their indexing, fragment layouts, masking, pipelining and barriers are
 * tested on machines without a GPU.
 *
 * How it works: each thread of a block is a fiber (ucontext) on one OS
 * thread; the scheduler runs fibers until they block at a barrier or a warp
 * collective. __syncthreads releases when every thread of the block has
 * arrived; a warp collective (ldmatrix, mma.sync, shfl) is computed by the
 * last of its 32 lanes to arrive, from all lanes' operands, with the
 * fragment layouts of the PTX ISA (written out in kc_emu.cc independently of
 * the kernels' address helpers in kc_tile.cuh).
 *
 * Checks, each counted as an error with the first message kept:
 *   - shared-memory races: two different threads touching a 4-byte word
 *     between the same two barriers with at least one write (the emulator
 *     sees every shared access: the kernels use only ldmatrix, cp.async and
 *     the kc_sts/kc_lds helpers on shared memory);
 *   - shared accesses outside the block's dynamic allocation, misaligned
 *     ldmatrix/cp.async addresses;
 *   - barriers or collectives reached by only part of a block or warp, or
 *     with different operations (deadlock, divergence);
 *   - global stores and read-modify-writes made without atomics
 *     (kc_stg_*, kc_add_owned) by more than one thread of the launch: blocks
 *     run one after another here, so a race between blocks would otherwise
 *     go unseen.
 * cp.async copies land either at issue (EAGER) or at the wait that covers
 * them (LAZY): the two extremes of what the hardware may do; a kernel that
 * reads a tile before waiting for it, or overwrites a buffer another warp
 * still reads, gives a wrong answer or a race in one of the two modes.
 */
#ifndef KC_EMU_H
#define KC_EMU_H

#include <cstddef>
#include <cstdint>
#include <functional>

int kc_emu_tid();
int kc_emu_bid(int axis);
int kc_emu_grid(int axis);
unsigned char *kc_emu_smem();
void kc_emu_sync();
void kc_emu_cp_async16(void *smem_dst, const void *gmem_src, int src_bytes);
void kc_emu_cp_commit();
void kc_emu_cp_wait(int n);
void kc_emu_ldmatrix_x4(uint32_t r[4], const void *smem_row, int trans);
void kc_emu_mma(float d[4], const uint32_t a[4], const uint32_t b[2], int bf16);
float kc_emu_shfl_xor(float v, int mask);
uint16_t kc_emu_from_f32(float x, bool bf16);
float kc_emu_to_f32(uint16_t bits, bool bf16);
void kc_emu_sts(void *smem_dst, const void *src, int bytes);
void kc_emu_lds(void *dst, const void *smem_src, int bytes);
/* A global store or read-modify-write the kernel claims only this thread
 * makes in the launch: two different threads (of any blocks) claiming one
 * 4-byte word is an error (a race between blocks the sequential block
 * schedule would otherwise hide). */
void kc_emu_global_owned(const void *p, int bytes);

enum kc_emu_cp_mode { KC_EMU_CP_EAGER = 0, KC_EMU_CP_LAZY = 1 };

struct kc_emu_stats {
    long errors;      /* races, bad addresses, divergence */
    long barriers;    /* block barriers released */
    long collectives; /* warp collectives executed */
    long blocks;
    char first_error[512];
};

/* Runs body() as every thread of a gx x gy grid of `threads`-thread blocks,
 * one block after another, with `smem` bytes of dynamic shared memory
 * (filled with a NaN pattern at each block start). */
void kc_emu_launch(int gx, int gy, int threads, size_t smem, kc_emu_cp_mode mode, const std::function<void()> &body);
const kc_emu_stats *kc_emu_get_stats();
void kc_emu_reset_stats();

#endif
