/* kc_emu.cc: the SIMT emulator described in kc_emu.h. */
#include "kc_emu.h"

#include <setjmp.h>
#include <ucontext.h>

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <vector>

#include "kern_cuda.h"

namespace {

enum State { RUN, AT_BAR, AT_WARP, DONE };
enum Op { OP_NONE, OP_LDM, OP_LDM_T, OP_MMA_BF16, OP_MMA_FP16, OP_SHFL };

struct Copy {
    void *dst;
    unsigned char data[16];
};

struct Thr {
    ucontext_t ctx; /* only to enter the fiber the first time */
    jmp_buf jb;     /* where it yielded */
    int started;
    int tid;
    State st;
    std::vector<Copy> open;                 /* issued, not committed */
    std::deque<std::vector<Copy>> groups;   /* committed, not landed (LAZY) */
};

struct MmaIn {
    const uint32_t *a, *b;
    float *d;
};

struct Warp {
    int arrived;
    Op op;
    int arg;
    const void *in[32];
    void *out[32];
};

struct Shadow {
    uint32_t w_epoch, r_epoch;
    int w_tid, r_tid; /* r_tid -2: several readers */
};

constexpr size_t STACK_BYTES = 256 * 1024;

kc_emu_stats stats;
std::vector<Thr> thr;
std::vector<char *> stacks;
std::vector<Warp> warps;
/* Fibers: makecontext/swapcontext to enter one the first time, then
 * _setjmp/_longjmp to switch (no signal-mask system call per switch, which
 * makes glibc's swapcontext ten times slower). A fiber never returns: it
 * jumps back to the scheduler when its body is done. */
ucontext_t sched_ctx;
jmp_buf sched_jb;
Thr *cur;
int n_threads, bar_arrived, n_done;
int grid[2], bid[2];
std::vector<unsigned char> smem;
std::vector<Shadow> shadow;
uint32_t epoch;
kc_emu_cp_mode cp_mode;
const std::function<void()> *body_fn;
std::unordered_map<uintptr_t, long> owners; /* global word -> block * threads + thread, this launch */

void error(const char *fmt, ...)
{
    stats.errors++;
    if (stats.errors > 1) return;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(stats.first_error, sizeof stats.first_error, "block (%d,%d) thread %d: %s", bid[0], bid[1],
             cur ? cur->tid : -1, msg);
}

bool in_smem(const void *p, int bytes)
{
    const unsigned char *c = static_cast<const unsigned char *>(p);
    return !smem.empty() && c >= smem.data() && c + bytes <= smem.data() + smem.size();
}

void shadow_access(int tid, const void *p, int bytes, bool write)
{
    const size_t off = static_cast<size_t>(static_cast<const unsigned char *>(p) - smem.data());
    for (size_t w = off / 4; w < (off + bytes + 3) / 4; w++) {
        Shadow &s = shadow[w];
        if (s.w_epoch == epoch && s.w_tid != tid) {
            error("shared-memory race at byte %zu: %s by thread %d after a write by thread %d, no barrier between",
                  w * 4, write ? "write" : "read", tid, s.w_tid);
        }
        if (write) {
            if (s.r_epoch == epoch && s.r_tid != tid)
                error("shared-memory race at byte %zu: write by thread %d after a read by thread %d, no barrier "
                      "between",
                      w * 4, tid, s.r_tid);
            s.w_epoch = epoch;
            s.w_tid = tid;
        } else {
            if (s.r_epoch != epoch) {
                s.r_epoch = epoch;
                s.r_tid = tid;
            } else if (s.r_tid != tid) {
                s.r_tid = -2;
            }
        }
    }
}

void smem_read(int tid, void *dst, const void *src, int bytes)
{
    if (!in_smem(src, bytes)) {
        error("shared read of %d bytes outside the block's %zu bytes", bytes, smem.size());
        memset(dst, 0xff, bytes);
        return;
    }
    shadow_access(tid, src, bytes, false);
    memcpy(dst, src, bytes);
}

void smem_write(int tid, void *dst, const void *src, int bytes)
{
    if (!in_smem(dst, bytes)) {
        error("shared write of %d bytes outside the block's %zu bytes", bytes, smem.size());
        return;
    }
    shadow_access(tid, dst, bytes, true);
    memcpy(dst, src, bytes);
}

void yield_to_scheduler()
{
    if (!_setjmp(cur->jb)) _longjmp(sched_jb, 1);
}

void trampoline()
{
    (*body_fn)();
    /* empty groups (a commit with nothing issued, as in the last tile) are harmless */
    bool in_flight = !cur->open.empty();
    for (const auto &g : cur->groups) in_flight = in_flight || !g.empty();
    if (in_flight && cp_mode == KC_EMU_CP_LAZY) error("thread exits with cp.async copies never waited for");
    cur->st = DONE;
    n_done++;
    if (bar_arrived > 0) error("thread exits while others wait at a barrier");
    _longjmp(sched_jb, 2); /* never return: uc_link's saved scheduler state is stale */
}


void exec_ldmatrix(Warp &w, bool trans)
{
    uint16_t m[4][8][8];
    for (int i = 0; i < 4; i++)
        for (int r = 0; r < 8; r++) {
            const void *row = w.in[8 * i + r];
            const int t = (cur->tid & ~31) + 8 * i + r;
            if (reinterpret_cast<uintptr_t>(row) % 16 != 0) error("ldmatrix row address not 16-byte aligned");
            uint16_t tmp[8];
            smem_read(t, tmp, row, 16);
            for (int c = 0; c < 8; c++) m[i][r][c] = tmp[c];
        }
    for (int l = 0; l < 32; l++) {
        uint32_t *r = static_cast<uint32_t *>(w.out[l]);
        for (int i = 0; i < 4; i++) {
            uint16_t lo, hi;
            if (!trans) {
                lo = m[i][l / 4][2 * (l % 4)];
                hi = m[i][l / 4][2 * (l % 4) + 1];
            } else {
                lo = m[i][2 * (l % 4)][l / 4];
                hi = m[i][2 * (l % 4) + 1][l / 4];
            }
            r[i] = static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
        }
    }
}

void exec_mma(Warp &w, bool bf16)
{
    float A[16][16], B[16][8], Cm[16][8];
    auto lo = [&](uint32_t v) { return kc_emu_to_f32(static_cast<uint16_t>(v & 0xffff), bf16); };
    auto hi = [&](uint32_t v) { return kc_emu_to_f32(static_cast<uint16_t>(v >> 16), bf16); };
    for (int l = 0; l < 32; l++) {
        const MmaIn *in = static_cast<const MmaIn *>(w.in[l]);
        const int g = l >> 2, t = l & 3;
        A[g][2 * t] = lo(in->a[0]);
        A[g][2 * t + 1] = hi(in->a[0]);
        A[g + 8][2 * t] = lo(in->a[1]);
        A[g + 8][2 * t + 1] = hi(in->a[1]);
        A[g][2 * t + 8] = lo(in->a[2]);
        A[g][2 * t + 9] = hi(in->a[2]);
        A[g + 8][2 * t + 8] = lo(in->a[3]);
        A[g + 8][2 * t + 9] = hi(in->a[3]);
        B[2 * t][g] = lo(in->b[0]);
        B[2 * t + 1][g] = hi(in->b[0]);
        B[2 * t + 8][g] = lo(in->b[1]);
        B[2 * t + 9][g] = hi(in->b[1]);
        Cm[g][2 * t] = in->d[0];
        Cm[g][2 * t + 1] = in->d[1];
        Cm[g + 8][2 * t] = in->d[2];
        Cm[g + 8][2 * t + 1] = in->d[3];
    }
    float Dm[16][8];
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 8; j++) {
            float s = Cm[i][j];
            for (int k = 0; k < 16; k++) s = std::fma(A[i][k], B[k][j], s);
            Dm[i][j] = s;
        }
    for (int l = 0; l < 32; l++) {
        const MmaIn *in = static_cast<const MmaIn *>(w.in[l]);
        const int g = l >> 2, t = l & 3;
        in->d[0] = Dm[g][2 * t];
        in->d[1] = Dm[g][2 * t + 1];
        in->d[2] = Dm[g + 8][2 * t];
        in->d[3] = Dm[g + 8][2 * t + 1];
    }
}

void collective(Op op, int arg, const void *in, void *out)
{
    Warp &w = warps[cur->tid / 32];
    const int lane = cur->tid % 32;
    if (w.arrived == 0) {
        w.op = op;
        w.arg = arg;
    } else if (w.op != op || w.arg != arg) {
        error("warp collective mismatch: lanes reached different operations");
    }
    w.in[lane] = in;
    w.out[lane] = out;
    cur->st = AT_WARP;
    if (++w.arrived == 32) {
        stats.collectives++;
        switch (op) {
        case OP_LDM: exec_ldmatrix(w, false); break;
        case OP_LDM_T: exec_ldmatrix(w, true); break;
        case OP_MMA_BF16: exec_mma(w, true); break;
        case OP_MMA_FP16: exec_mma(w, false); break;
        case OP_SHFL:
            for (int l = 0; l < 32; l++)
                *static_cast<float *>(w.out[l]) = *static_cast<const float *>(w.in[l ^ arg]);
            break;
        default: break;
        }
        w.arrived = 0;
        const int base = cur->tid & ~31;
        for (int l = 0; l < 32; l++) thr[base + l].st = RUN;
    }
    yield_to_scheduler();
}

/* Runs fiber t until it yields or ends. Its own frame holds the jump
 * buffer, so the scheduler loop's variables never cross a longjmp. */
__attribute__((noinline)) void resume(Thr *t)
{
    cur = t;
    if (_setjmp(sched_jb)) return;
    if (t->started) _longjmp(t->jb, 1);
    t->started = 1;
    swapcontext(&sched_ctx, &t->ctx);
}

void land(Thr &t, std::vector<Copy> &g)
{
    for (Copy &c : g) smem_write(t.tid, c.dst, c.data, 16);
    g.clear();
}

} // namespace

int kc_emu_tid() { return cur->tid; }
int kc_emu_bid(int axis) { return bid[axis]; }
int kc_emu_grid(int axis) { return grid[axis]; }
unsigned char *kc_emu_smem() { return smem.data(); }

void kc_emu_sync()
{
    if (n_done > 0) error("barrier reached after some threads of the block exited");
    cur->st = AT_BAR;
    if (++bar_arrived == n_threads) {
        bar_arrived = 0;
        epoch++;
        stats.barriers++;
        for (Thr &t : thr) t.st = RUN;
    }
    yield_to_scheduler();
}

void kc_emu_cp_async16(void *smem_dst, const void *gmem_src, int src_bytes)
{
    if (reinterpret_cast<uintptr_t>(smem_dst) % 16 != 0) error("cp.async destination not 16-byte aligned");
    if (src_bytes != 0 && src_bytes != 16) error("cp.async source size %d (kernels use 0 or 16)", src_bytes);
    Copy c;
    c.dst = smem_dst;
    memset(c.data, 0, 16);
    if (src_bytes) memcpy(c.data, gmem_src, 16);
    if (cp_mode == KC_EMU_CP_EAGER) {
        smem_write(cur->tid, c.dst, c.data, 16);
    } else {
        cur->open.push_back(c);
    }
}

void kc_emu_cp_commit()
{
    cur->groups.push_back(std::move(cur->open));
    cur->open.clear();
}

void kc_emu_cp_wait(int n)
{
    while (static_cast<int>(cur->groups.size()) > n) {
        land(*cur, cur->groups.front());
        cur->groups.pop_front();
    }
}

void kc_emu_ldmatrix_x4(uint32_t r[4], const void *smem_row, int trans)
{
    collective(trans ? OP_LDM_T : OP_LDM, 0, smem_row, r);
}

void kc_emu_mma(float d[4], const uint32_t a[4], const uint32_t b[2], int bf16)
{
    MmaIn in = {a, b, d};
    collective(bf16 ? OP_MMA_BF16 : OP_MMA_FP16, 0, &in, nullptr);
}

float kc_emu_shfl_xor(float v, int mask)
{
    float out;
    collective(OP_SHFL, mask, &v, &out);
    return out;
}

uint16_t kc_emu_from_f32(float x, bool bf16) { return kern_cuda_host_from_f32(x, bf16 ? KERN_CUDA_BF16 : KERN_CUDA_FP16); }
float kc_emu_to_f32(uint16_t bits, bool bf16) { return kern_cuda_host_to_f32(bits, bf16 ? KERN_CUDA_BF16 : KERN_CUDA_FP16); }

void kc_emu_sts(void *smem_dst, const void *src, int bytes) { smem_write(cur->tid, smem_dst, src, bytes); }
void kc_emu_lds(void *dst, const void *smem_src, int bytes) { smem_read(cur->tid, dst, smem_src, bytes); }

void kc_emu_global_owned(const void *p, int bytes)
{
    const long me = ((long)bid[1] * grid[0] + bid[0]) * n_threads + cur->tid;
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    for (uintptr_t w = a / 4; w < (a + bytes + 3) / 4; w++) {
        auto it = owners.find(w);
        if (it == owners.end()) {
            owners.emplace(w, me);
        } else if (it->second != me) {
            error("global word %#lx written without atomics by thread %ld and thread %ld of the launch "
                  "(block-linear ids x threads + thread)",
                  (unsigned long)(w * 4), it->second, me);
        }
    }
}

void kc_emu_launch(int gx, int gy, int threads, size_t smem_bytes, kc_emu_cp_mode mode,
                   const std::function<void()> &body)
{
    if (threads % 32 != 0 || threads <= 0) {
        fprintf(stderr, "kc_emu_launch: %d threads is not a whole number of warps\n", threads);
        abort();
    }
    grid[0] = gx;
    grid[1] = gy;
    n_threads = threads;
    cp_mode = mode;
    body_fn = &body;
    thr.assign(threads, Thr());
    warps.assign(threads / 32, Warp());
    while (static_cast<int>(stacks.size()) < threads) stacks.push_back(static_cast<char *>(malloc(STACK_BYTES)));
    owners.clear();
    smem.assign(smem_bytes, 0);
    shadow.assign((smem_bytes + 3) / 4, Shadow());
    for (int by = 0; by < gy; by++)
        for (int bx = 0; bx < gx; bx++) {
            bid[0] = bx;
            bid[1] = by;
            stats.blocks++;
            /* uninitialised shared memory: a NaN pattern, so that a read of
             * something never written shows up in the result */
            for (size_t i = 0; i + 1 < smem.size(); i += 2) {
                smem[i] = 0xc1;
                smem[i + 1] = 0x7f;
            }
            for (Shadow &s : shadow) s = Shadow{0, 0, -1, -1};
            epoch = 1;
            bar_arrived = 0;
            n_done = 0;
            for (int t = 0; t < threads; t++) {
                Thr &x = thr[t];
                x.tid = t;
                x.st = RUN;
                x.started = 0;
                x.open.clear();
                x.groups.clear();
                getcontext(&x.ctx);
                x.ctx.uc_stack.ss_sp = stacks[t];
                x.ctx.uc_stack.ss_size = STACK_BYTES;
                x.ctx.uc_link = &sched_ctx;
                makecontext(&x.ctx, trampoline, 0);
            }
            for (Warp &w : warps) w.arrived = 0;
            while (n_done < threads) {
                bool ran = false;
                for (int t = 0; t < threads; t++) {
                    if (thr[t].st != RUN) continue;
                    ran = true;
                    resume(&thr[t]);
                }
                if (!ran) {
                    cur = nullptr;
                    error("deadlock: no thread can run (%d of %d done, %d at the barrier)", n_done, threads,
                          bar_arrived);
                    break;
                }
            }
            cur = nullptr;
        }
}

const kc_emu_stats *kc_emu_get_stats() { return &stats; }
void kc_emu_reset_stats() { memset(&stats, 0, sizeof stats); }
