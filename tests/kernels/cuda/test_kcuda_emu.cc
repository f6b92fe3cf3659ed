/* test_kcuda_emu.cc: the CUDA attention kernels, run on the CPU by the SIMT
 * emulator (emu/kc_emu.h), against the float64 CPU reference
 * (kernels/cpu/attn_ref.c). No GPU needed: this is what proves, on every CI
 * run, that the kernels' fragment layouts, swizzles, masks (offset causal,
 * ragged tiles, rows that see no key), GQA mapping, online softmax,
 * cp.async pipelining, barriers and the backward's accumulate contract are
 * right. What it cannot prove: the PTX ISA semantics the emulator
 * implements are the hardware's (they are transcribed from the ISA manual),
 * timing, and the memory model beyond "a barrier orders shared accesses".
 *
 * Each case runs every kernel twice, with cp.async copies landing at issue
 * and at the wait (the two extremes the hardware allows), and requires the
 * two results to be bitwise equal, no shared-memory race, and the error
 * against the reference within the dtype's tolerance. Inputs live in
 * buffers that end at a PROT_NONE page, so a read past a tensor's end
 * crashes the test instead of passing silently. Outputs start as NaN; the
 * backward's outputs start as random values, which must be kept and added to.
 *
 * Usage: test_kcuda_emu [seed]   (default: a fixed seed; the seed is printed) */
#include <sys/mman.h>
#include <unistd.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "attn_bwd_kernel.cuh"
#include "attn_fwd_kernel.cuh"
#include "attn_merge_kernel.cuh"
#include "kc_emu.h"
#include "kern_attn.h"
#include "kern_cuda.h"

namespace {

uint64_t rng_state;
uint64_t rng_next()
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
double rng_uniform() { return ((double)(rng_next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
double rng_normal() { return std::sqrt(-2.0 * std::log(rng_uniform())) * std::cos(6.283185307179586 * rng_uniform()); }

/* A buffer whose end touches an inaccessible page. */
struct Guarded {
    void *base = nullptr;
    size_t map = 0;
    void *p = nullptr;
    Guarded() = default;
    Guarded(const Guarded &) = delete;
    Guarded &operator=(const Guarded &) = delete;
    void alloc(size_t bytes)
    {
        const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
        const size_t data = (bytes + pg - 1) / pg * pg;
        map = data + pg;
        base = mmap(nullptr, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED) {
            perror("mmap");
            exit(1);
        }
        if (mprotect(static_cast<char *>(base) + data, pg, PROT_NONE) != 0) {
            perror("mprotect");
            exit(1);
        }
        /* align the end of the tensor (16 bytes) to the guard page */
        p = static_cast<char *>(base) + data - ((bytes + 15) / 16 * 16);
    }
    ~Guarded()
    {
        if (base) munmap(base, map);
    }
};

struct Case {
    int heads, kv_heads, n_q, n_kv, d;
    bool causal;
    long long q_off, kv_off;
    bool bf16;
    int variant; /* forward shape (kc_fwd_shape) */
};

int failures = 0, checks = 0;

double rel_err(const float *x, const float *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        const double a = x[i], b = ref[i];
        if (std::isnan(a) || std::isnan(b)) return INFINITY;
        if (std::isinf(a) || std::isinf(b)) {
            if (a != b) return INFINITY;
            continue;
        }
        num = std::fmax(num, std::fabs(a - b));
        den = std::fmax(den, std::fabs(b));
    }
    return den > 0 ? num / den : num;
}

void check(bool ok, const char *what, const char *cs)
{
    checks++;
    if (!ok) {
        failures++;
        printf("FAIL %s: %s\n", cs, what);
    }
}

void check_err(double err, double tol, const char *what, const char *cs)
{
    checks++;
    const bool ok = err <= tol;
    if (!ok) failures++;
    printf("%s %s: %s rel err %.3e (tol %.1e)\n", ok ? "ok  " : "FAIL", cs, what, err, tol);
}

void emu_ok(const char *what, const char *cs)
{
    const kc_emu_stats *s = kc_emu_get_stats();
    checks++;
    if (s->errors) {
        failures++;
        printf("FAIL %s: %s: emulator: %ld error(s), first: %s\n", cs, what, s->errors, s->first_error);
    }
    kc_emu_reset_stats();
}

template <typename T, int D> void run_fwd_d(const kc_fwd_params &p, int variant, bool causal, kc_emu_cp_mode mode)
{
    int mt = 0, bnc = 0;
    if (!kc_fwd_shape(D, variant, &mt, &bnc)) {
        printf("no forward variant %d\n", variant);
        exit(1);
    }
    kc_fwd_dispatch(mt, bnc, [&](auto MT, auto BNC) {
        constexpr int M = decltype(MT)::value, B = decltype(BNC)::value;
        using C = kc_fwd_cfg<D, M, B>;
        const int gy = (p.n_q + C::BM - 1) / C::BM;
        if (causal)
            kc_emu_launch(p.heads, gy, C::NT, C::SMEM, mode, [&] { kc_attn_fwd_kernel<T, D, M, B, true>(p); });
        else
            kc_emu_launch(p.heads, gy, C::NT, C::SMEM, mode, [&] { kc_attn_fwd_kernel<T, D, M, B, false>(p); });
        return 0;
    });
}

void run_fwd(const Case &c, const kc_fwd_params &p, kc_emu_cp_mode mode)
{
    if (c.bf16) {
        if (c.d == 64) run_fwd_d<kc_bf16, 64>(p, c.variant, c.causal, mode);
        else run_fwd_d<kc_bf16, 128>(p, c.variant, c.causal, mode);
    } else {
        if (c.d == 64) run_fwd_d<kc_fp16, 64>(p, c.variant, c.causal, mode);
        else run_fwd_d<kc_fp16, 128>(p, c.variant, c.causal, mode);
    }
}

template <typename T, int D, bool CAUSAL> void run_bwd_t(const kc_bwd_params &p, kc_emu_cp_mode mode)
{
    using C = kc_bwd_cfg<D>;
    const int gy = (p.n_kv + C::BN - 1) / C::BN;
    kc_emu_launch(p.heads, gy, C::NT, C::SMEM, mode, [&] { kc_attn_bwd_kernel<T, D, CAUSAL>(p); });
}

void run_bwd(const Case &c, const kc_bwd_params &p, kc_emu_cp_mode mode)
{
    if (c.bf16) {
        if (c.d == 64) c.causal ? run_bwd_t<kc_bf16, 64, true>(p, mode) : run_bwd_t<kc_bf16, 64, false>(p, mode);
        else c.causal ? run_bwd_t<kc_bf16, 128, true>(p, mode) : run_bwd_t<kc_bf16, 128, false>(p, mode);
    } else {
        if (c.d == 64) c.causal ? run_bwd_t<kc_fp16, 64, true>(p, mode) : run_bwd_t<kc_fp16, 64, false>(p, mode);
        else c.causal ? run_bwd_t<kc_fp16, 128, true>(p, mode) : run_bwd_t<kc_fp16, 128, false>(p, mode);
    }
}

void run_pre(const Case &c, const uint16_t *o, const uint16_t *dout, float *dr, long long rows)
{
    const int blocks = (int)((rows + 7) / 8);
    if (c.bf16)
        kc_emu_launch(blocks, 1, 256, 0, KC_EMU_CP_EAGER, [&] { kc_attn_bwd_pre_kernel<kc_bf16>(o, dout, dr, rows, c.d); });
    else
        kc_emu_launch(blocks, 1, 256, 0, KC_EMU_CP_EAGER, [&] { kc_attn_bwd_pre_kernel<kc_fp16>(o, dout, dr, rows, c.d); });
}

/* Tolerances (max|x - ref| / max|ref|, the reference in float64 on the
 * same rounded inputs). The kernels round P (forward, and backward for dV)
 * and dS (backward) to the input type before the tensor-core products, and
 * O to the input type on output: a few units of the type's rounding error,
 * 2^-9 for bf16 and 2^-12 for fp16 (relative, per element). */
double tol_o(bool bf16) { return bf16 ? 1.6e-2 : 2.5e-3; }   /* ~4 units: O's own rounding + P's */
double tol_grad(bool bf16) { return bf16 ? 3e-2 : 5e-3; }    /* dS and P rounded, then summed over keys/rows */
constexpr double TOL_LSE = 2e-5;                              /* float32 softmax statistics; no rounding to the type */

void run_case(const Case &c)
{
    char cs[200];
    snprintf(cs, sizeof cs, "%s d=%d heads=%d/%d n_q=%d n_kv=%d %s q_off=%lld kv_off=%lld fwd v%d",
             c.bf16 ? "bf16" : "fp16", c.d, c.heads, c.kv_heads, c.n_q, c.n_kv, c.causal ? "causal" : "full",
             c.q_off, c.kv_off, c.variant);
    const kern_cuda_dtype dt = c.bf16 ? KERN_CUDA_BF16 : KERN_CUDA_FP16;
    const size_t nq = (size_t)c.heads * c.n_q * c.d, nkv = (size_t)c.kv_heads * c.n_kv * c.d;
    const size_t rows = (size_t)c.heads * c.n_q;

    /* inputs: normal(0, 1), rounded to the type; the reference sees the rounded values */
    std::vector<float> qf(nq), kf(nkv), vf(nkv), dof(nq);
    Guarded q16, k16, v16, do16, o16[2], lse[2], dr, dq[2], dk[2], dv[2];
    q16.alloc(nq * 2);
    k16.alloc(nkv * 2);
    v16.alloc(nkv * 2);
    do16.alloc(nq * 2);
    auto fill = [&](std::vector<float> &f, Guarded &g) {
        uint16_t *b = static_cast<uint16_t *>(g.p);
        for (size_t i = 0; i < f.size(); i++) {
            b[i] = kern_cuda_host_from_f32((float)rng_normal(), dt);
            f[i] = kern_cuda_host_to_f32(b[i], dt);
        }
    };
    fill(qf, q16);
    fill(kf, k16);
    fill(vf, v16);
    fill(dof, do16);

    struct kern_attn_desc rd;
    memset(&rd, 0, sizeof rd);
    rd.heads = c.heads;
    rd.kv_heads = c.kv_heads;
    rd.n_q = c.n_q;
    rd.n_kv = c.n_kv;
    rd.d = c.d;
    rd.scale = (float)(1.0 / std::sqrt((double)c.d));
    rd.causal = c.causal;
    rd.q_off = c.q_off;
    rd.kv_off = c.kv_off;
    rd.acc = KERN_ACC_F64;
    std::vector<float> o_ref(nq), lse_ref(rows);
    if (kern_attn_ref_fwd(&rd, qf.data(), kf.data(), vf.data(), o_ref.data(), lse_ref.data()) != KERN_OK) {
        printf("FAIL %s: CPU reference forward refused the case\n", cs);
        failures++;
        return;
    }

    /* forward, both cp.async modes */
    for (int m = 0; m < 2; m++) {
        o16[m].alloc(nq * 2);
        lse[m].alloc(rows * 4);
        memset(o16[m].p, 0xff, nq * 2); /* NaN */
        memset(lse[m].p, 0xff, rows * 4);
        kc_fwd_params p;
        p.q = static_cast<const uint16_t *>(q16.p);
        p.k = static_cast<const uint16_t *>(k16.p);
        p.v = static_cast<const uint16_t *>(v16.p);
        p.o = static_cast<uint16_t *>(o16[m].p);
        p.lse = static_cast<float *>(lse[m].p);
        p.heads = c.heads;
        p.kv_heads = c.kv_heads;
        p.n_q = c.n_q;
        p.n_kv = c.n_kv;
        p.scale_log2 = rd.scale * 1.4426950408889634f;
        p.q_off = c.causal ? c.q_off : 0;
        p.kv_off = c.causal ? c.kv_off : 0;
        p.reverse = c.causal ? 1 : 0;
        run_fwd(c, p, m ? KC_EMU_CP_LAZY : KC_EMU_CP_EAGER);
        emu_ok(m ? "forward (cp.async lands at wait)" : "forward (cp.async lands at issue)", cs);
    }
    check(memcmp(o16[0].p, o16[1].p, nq * 2) == 0 && memcmp(lse[0].p, lse[1].p, rows * 4) == 0,
          "forward differs between the two cp.async landing orders", cs);
    std::vector<float> o_f(nq);
    kern_cuda_host_widen(static_cast<const uint16_t *>(o16[0].p), o_f.data(), nq, dt);
    check_err(rel_err(o_f.data(), o_ref.data(), nq), tol_o(c.bf16), "O  ", cs);
    check_err(rel_err(static_cast<float *>(lse[0].p), lse_ref.data(), rows), TOL_LSE, "lse", cs);
    /* rows that see no key: exactly O = 0 and lse = -inf */
    bool empty_ok = true;
    for (size_t r = 0; r < rows; r++)
        if (lse_ref[r] == -INFINITY) {
            if (static_cast<float *>(lse[0].p)[r] != -INFINITY) empty_ok = false;
            for (int j = 0; j < c.d; j++)
                if (o_f[r * c.d + j] != 0.f) empty_ok = false;
        }
    check(empty_ok, "rows that see no key must have O = 0, lse = -inf", cs);

    /* backward: O and lse from the kernel's forward for both sides */
    dr.alloc(rows * 4);
    run_pre(c, static_cast<const uint16_t *>(o16[0].p), static_cast<const uint16_t *>(do16.p),
            static_cast<float *>(dr.p), (long long)rows);
    emu_ok("backward preprocess", cs);
    std::vector<float> dq0(nq), dk0(nkv), dv0(nkv);
    for (auto &x : dq0) x = (float)rng_normal();
    for (auto &x : dk0) x = (float)rng_normal();
    for (auto &x : dv0) x = (float)rng_normal();
    std::vector<float> dq_ref(nq, 0.f), dk_ref(nkv, 0.f), dv_ref(nkv, 0.f);
    if (kern_attn_ref_bwd(&rd, qf.data(), kf.data(), vf.data(), o_f.data(), static_cast<float *>(lse[0].p),
                          dof.data(), dq_ref.data(), dk_ref.data(), dv_ref.data()) != KERN_OK) {
        printf("FAIL %s: CPU reference backward refused the case\n", cs);
        failures++;
        return;
    }
    for (int m = 0; m < 2; m++) {
        dq[m].alloc(nq * 4);
        dk[m].alloc(nkv * 4);
        dv[m].alloc(nkv * 4);
        memcpy(dq[m].p, dq0.data(), nq * 4);
        memcpy(dk[m].p, dk0.data(), nkv * 4);
        memcpy(dv[m].p, dv0.data(), nkv * 4);
        kc_bwd_params p;
        p.q = static_cast<const uint16_t *>(q16.p);
        p.k = static_cast<const uint16_t *>(k16.p);
        p.v = static_cast<const uint16_t *>(v16.p);
        p.dout = static_cast<const uint16_t *>(do16.p);
        p.lse = static_cast<const float *>(lse[0].p);
        p.dr = static_cast<const float *>(dr.p);
        p.dq = static_cast<float *>(dq[m].p);
        p.dk = static_cast<float *>(dk[m].p);
        p.dv = static_cast<float *>(dv[m].p);
        p.heads = c.heads;
        p.kv_heads = c.kv_heads;
        p.n_q = c.n_q;
        p.n_kv = c.n_kv;
        p.scale = rd.scale;
        p.scale_log2 = rd.scale * 1.4426950408889634f;
        p.q_off = c.causal ? c.q_off : 0;
        p.kv_off = c.causal ? c.kv_off : 0;
        if (nq && nkv) run_bwd(c, p, m ? KC_EMU_CP_LAZY : KC_EMU_CP_EAGER);
        emu_ok(m ? "backward (cp.async lands at wait)" : "backward (cp.async lands at issue)", cs);
    }
    /* the emulator's atomics are sequential and its schedule fixed: bitwise equal */
    check(memcmp(dq[0].p, dq[1].p, nq * 4) == 0 && memcmp(dk[0].p, dk[1].p, nkv * 4) == 0 &&
              memcmp(dv[0].p, dv[1].p, nkv * 4) == 0,
          "backward differs between the two cp.async landing orders", cs);
    std::vector<float> g(nq > nkv ? nq : nkv);
    for (size_t i = 0; i < nq; i++) g[i] = static_cast<float *>(dq[0].p)[i] - dq0[i];
    check_err(rel_err(g.data(), dq_ref.data(), nq), tol_grad(c.bf16), "dQ ", cs);
    for (size_t i = 0; i < nkv; i++) g[i] = static_cast<float *>(dk[0].p)[i] - dk0[i];
    check_err(rel_err(g.data(), dk_ref.data(), nkv), tol_grad(c.bf16), "dK ", cs);
    for (size_t i = 0; i < nkv; i++) g[i] = static_cast<float *>(dv[0].p)[i] - dv0[i];
    check_err(rel_err(g.data(), dv_ref.data(), nkv), tol_grad(c.bf16), "dV ", cs);
}

/* Ring attention on one head set: the keys in blocks with their offsets,
 * each block's forward merged into a float32 accumulator (the merge kernels),
 * against the one-call forward. */
void run_ring(int blocks, bool bf16, int d)
{
    char cs[120];
    snprintf(cs, sizeof cs, "ring merge: %d blocks %s d=%d causal", blocks, bf16 ? "bf16" : "fp16", d);
    const kern_cuda_dtype dt = bf16 ? KERN_CUDA_BF16 : KERN_CUDA_FP16;
    const int heads = 2, kvh = 1, n_q = 96, blk = 80, n_kv = blk * blocks;
    const long long q_off = 150; /* the queries sit inside the key range: some blocks partly, some wholly masked */
    const size_t nq = (size_t)heads * n_q * d;
    std::vector<uint16_t> q(nq), k((size_t)kvh * n_kv * d), v((size_t)kvh * n_kv * d);
    for (auto &x : q) x = kern_cuda_host_from_f32((float)rng_normal(), dt);
    for (auto &x : k) x = kern_cuda_host_from_f32((float)rng_normal(), dt);
    for (auto &x : v) x = kern_cuda_host_from_f32((float)rng_normal(), dt);
    std::vector<float> acc(nq, 12345.f), lacc((size_t)heads * n_q, -INFINITY);
    std::vector<uint16_t> ob(nq), kb((size_t)kvh * blk * d), vb((size_t)kvh * blk * d);
    std::vector<float> lb((size_t)heads * n_q);
    for (int b = 0; b < blocks; b++) {
        for (int h = 0; h < kvh; h++) { /* block b of each kv head, contiguous */
            memcpy(&kb[(size_t)h * blk * d], &k[((size_t)h * n_kv + (size_t)b * blk) * d], (size_t)blk * d * 2);
            memcpy(&vb[(size_t)h * blk * d], &v[((size_t)h * n_kv + (size_t)b * blk) * d], (size_t)blk * d * 2);
        }
        kc_fwd_params p;
        p.q = q.data();
        p.k = kb.data();
        p.v = vb.data();
        p.o = ob.data();
        p.lse = lb.data();
        p.heads = heads;
        p.kv_heads = kvh;
        p.n_q = n_q;
        p.n_kv = blk;
        p.scale_log2 = (float)(1.0 / std::sqrt((double)d)) * 1.4426950408889634f;
        p.q_off = q_off;
        p.kv_off = (long long)b * blk;
        p.reverse = 1;
        Case c = {heads, kvh, n_q, blk, d, true, q_off, p.kv_off, bf16, b % 3};
        run_fwd(c, p, KC_EMU_CP_EAGER);
        const long long n = (long long)nq;
        const int gb = (int)((n + 255) / 256);
        if (bf16)
            kc_emu_launch(gb, 1, 256, 0, KC_EMU_CP_EAGER,
                          [&] { kc_merge_o_kernel<0>(acc.data(), lacc.data(), ob.data(), lb.data(), n, d); });
        else
            kc_emu_launch(gb, 1, 256, 0, KC_EMU_CP_EAGER,
                          [&] { kc_merge_o_kernel<1>(acc.data(), lacc.data(), ob.data(), lb.data(), n, d); });
        const long long rows = (long long)heads * n_q;
        kc_emu_launch((int)((rows + 255) / 256), 1, 256, 0, KC_EMU_CP_EAGER,
                      [&] { kc_merge_lse_kernel(lacc.data(), lb.data(), rows); });
    }
    emu_ok("ring blocks and merges", cs);
    /* the whole thing in float64 */
    struct kern_attn_desc rd;
    memset(&rd, 0, sizeof rd);
    rd.heads = heads;
    rd.kv_heads = kvh;
    rd.n_q = n_q;
    rd.n_kv = n_kv;
    rd.d = d;
    rd.scale = (float)(1.0 / std::sqrt((double)d));
    rd.causal = true;
    rd.q_off = q_off;
    rd.kv_off = 0;
    rd.acc = KERN_ACC_F64;
    std::vector<float> qf(nq), kf(k.size()), vf(v.size()), o_ref(nq), l_ref((size_t)heads * n_q);
    kern_cuda_host_widen(q.data(), qf.data(), nq, dt);
    kern_cuda_host_widen(k.data(), kf.data(), k.size(), dt);
    kern_cuda_host_widen(v.data(), vf.data(), v.size(), dt);
    if (kern_attn_ref_fwd(&rd, qf.data(), kf.data(), vf.data(), o_ref.data(), l_ref.data()) != KERN_OK) {
        printf("FAIL %s: CPU reference refused the case\n", cs);
        failures++;
        return;
    }
    /* the merge adds the rounding of each block's O to the type: a few units more */
    check_err(rel_err(acc.data(), o_ref.data(), nq), 1.5 * tol_o(bf16), "O  ", cs);
    check_err(rel_err(lacc.data(), l_ref.data(), l_ref.size()), TOL_LSE, "lse", cs);
}

/* The emulator's own checks must be able to fail: a racy kernel, a read
 * before cp.async's wait, a cross-block plain write, and a 16x16x16 product
 * through the fragment helpers against a plain loop. */
void emulator_self_checks()
{
    const char *cs = "emulator self-check";
    /* 1. thread 1 reads what thread 0 wrote, no barrier: a race */
    kc_emu_launch(1, 1, 32, 64, KC_EMU_CP_EAGER, [] {
        KC_DYN_SMEM(sm);
        if (kc_tid() == 0) kc_sts_f32(reinterpret_cast<float *>(sm), 1.f);
        if (kc_tid() == 1) (void)kc_lds_f32(reinterpret_cast<float *>(sm));
    });
    check(kc_emu_get_stats()->errors > 0, "a write and a read by two threads with no barrier is reported", cs);
    kc_emu_reset_stats();
    /* the same with a barrier between: no error */
    kc_emu_launch(1, 1, 32, 64, KC_EMU_CP_EAGER, [] {
        KC_DYN_SMEM(sm);
        if (kc_tid() == 0) kc_sts_f32(reinterpret_cast<float *>(sm), 1.f);
        kc_sync();
        if (kc_tid() == 1) (void)kc_lds_f32(reinterpret_cast<float *>(sm));
    });
    check(kc_emu_get_stats()->errors == 0, "with a barrier between, no race is reported", cs);
    kc_emu_reset_stats();
    /* 2. reading a cp.async destination before the wait sees the old contents when copies land late */
    static uint16_t src[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    float seen = 0;
    kc_emu_launch(1, 1, 32, 64, KC_EMU_CP_LAZY, [&] {
        KC_DYN_SMEM(sm);
        if (kc_tid() == 0) {
            kc_cp_async16(sm, src, 16);
            kc_cp_commit();
            seen = kc_lds_f32(reinterpret_cast<float *>(sm)); /* too early */
            kc_cp_wait<0>();
        }
    });
    uint32_t bits;
    memcpy(&bits, &seen, 4);
    check(bits != (1u | (2u << 16)), "a read before cp.async.wait does not see the copy (LAZY)", cs);
    kc_emu_reset_stats();
    /* 3. two blocks claiming one global word */
    static float g = 0;
    kc_emu_launch(2, 1, 32, 0, KC_EMU_CP_EAGER, [] {
        if (kc_tid() == 0) kc_add_owned(&g, 1.f);
    });
    check(kc_emu_get_stats()->errors > 0, "two blocks writing one word without atomics is reported", cs);
    kc_emu_reset_stats();
    /* 4. C = A B^T for 16x16 A, 16x16 B (as [n][k]) through kc_frag_a, kc_frag_b_nk, kc_mma */
    static uint16_t A[16 * 64], B[16 * 64]; /* rows of 64 elements (the swizzle's minimum), k < 16 used */
    float Cref[16][16], Cemu[16][16];
    for (int i = 0; i < 16; i++)
        for (int k = 0; k < 64; k++) {
            A[i * 64 + k] = kern_cuda_host_from_f32(k < 16 ? (float)((i * 7 + k * 3) % 11 - 5) : 0.f, KERN_CUDA_BF16);
            B[i * 64 + k] = kern_cuda_host_from_f32(k < 16 ? (float)((i * 5 + k) % 7 - 3) : 0.f, KERN_CUDA_BF16);
        }
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
            float acc = 0;
            for (int k = 0; k < 16; k++)
                acc += kern_cuda_host_to_f32(A[i * 64 + k], KERN_CUDA_BF16) * kern_cuda_host_to_f32(B[j * 64 + k], KERN_CUDA_BF16);
            Cref[i][j] = acc;
        }
    kc_emu_launch(1, 1, 32, 2 * 16 * 64 * 2, KC_EMU_CP_EAGER, [&] {
        KC_DYN_SMEM(sm);
        const int lane = kc_tid();
        kc_load_tile<16, 64, 32>(sm, A, 0, 16, lane);
        kc_load_tile<16, 64, 32>(sm + 16 * 128, B, 0, 16, lane);
        kc_cp_commit();
        kc_cp_wait<0>();
        kc_sync();
        uint32_t a[4], b[4];
        float c0[4] = {0, 0, 0, 0}, c1[4] = {0, 0, 0, 0};
        kc_frag_a<64>(a, sm, 0, 0, lane);
        kc_frag_b_nk<64>(b, sm + 16 * 128, 0, 0, lane);
        kc_mma<kc_bf16>(c0, a, b);
        kc_mma<kc_bf16>(c1, a, b + 2);
        const int gq = lane >> 2, t = lane & 3;
        for (int e = 0; e < 4; e++) {
            Cemu[gq + (e >> 1) * 8][t * 2 + (e & 1)] = c0[e];
            Cemu[gq + (e >> 1) * 8][8 + t * 2 + (e & 1)] = c1[e];
        }
    });
    double err = 0;
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) err = std::fmax(err, std::fabs(Cemu[i][j] - Cref[i][j]));
    check(err == 0 && kc_emu_get_stats()->errors == 0, "a 16x16x16 product through the fragment helpers is exact", cs);
    kc_emu_reset_stats();
    printf("emulator self-checks: %s\n", failures ? "FAILED" : "ok");
}

} // namespace

int main(int argc, char **argv)
{
    uint64_t seed = 20260101;
    if (argc > 1) seed = strtoull(argv[1], nullptr, 0);
    rng_state = seed;
    printf("test_kcuda_emu: seed %" PRIu64 " (rerun with this argument to reproduce)\n", seed);
    emulator_self_checks();
    const Case cases[] = {
        /* heads kvh  n_q  n_kv  d   causal q_off kv_off bf16  fwd variant */
        {2, 2, 130, 200, 64, false, 0, 0, true, 0},   /* ragged tiles on both sides */
        {2, 2, 130, 200, 128, false, 0, 0, true, 0},
        {2, 2, 130, 200, 128, false, 0, 0, false, 1}, /* 64-key softmax steps at d = 128 */
        {2, 1, 100, 100, 128, true, 0, 0, true, 0},   /* causal square, GQA 2:1 */
        {2, 1, 100, 100, 128, true, 0, 0, true, 1},
        {4, 2, 200, 150, 64, true, 0, 0, false, 3},   /* fp16, causal, 64-row blocks */
        {2, 2, 150, 150, 64, true, 0, 0, true, 2},    /* 32-key steps at d = 64 */
        {2, 2, 70, 190, 128, true, 120, 0, true, 3},  /* queries after a key prefix (ring: later block) */
        {3, 1, 150, 129, 64, true, 0, 40, true, 0},   /* keys start after the first queries: rows that see none */
        {2, 2, 64, 64, 128, true, 0, 100, false, 0},  /* every row sees no key */
        {2, 2, 1, 300, 64, true, 299, 0, true, 0},    /* one query row, decode-like */
        {1, 1, 129, 1, 128, false, 0, 0, true, 0},    /* one key */
        {2, 2, 0, 64, 64, false, 0, 0, true, 0},      /* no queries */
        {2, 2, 64, 0, 64, false, 0, 0, true, 0},      /* no keys: O = 0, lse = -inf */
        {1, 1, 129, 129, 64, true, 0, 0, true, 0},    /* the last row's last key opens a new key tile */
        {1, 1, 129, 129, 128, true, 0, 0, true, 0},
        {1, 1, 65, 65, 128, true, 0, 0, false, 3},    /* the same with 64-row blocks */
    };
    for (const Case &c : cases) run_case(c);
    run_ring(3, true, 64);
    run_ring(2, false, 128);
    printf("test_kcuda_emu: %d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
