/* attn_bwd_kernel.cuh: FlashAttention-2 backward on tensor cores.
 *
 * Preprocess: Dr[row] = rowsum(dO o O) in float32 (one warp per row).
 *
 * Main kernel: one block of 4 warps owns BN = 64 keys of one query head's kv
 * head (warp w: keys 16w..16w+15, whose dK and dV it accumulates in
 * registers) and walks the query rows in tiles of BM = 64, Q and dO tiles
 * double-buffered with cp.async. Per tile, with the warp's keys as rows:
 *   S^T  = K Q^T                   P^T = exp2(S^T scale log2e - lse log2e)
 *   dV  += P^T dO                  (P^T re-packed from C to A fragments)
 *   dP^T = V dO^T                  dS^T = P^T o (dP^T - Dr)
 *   dK  += dS^T Q
 *   dS^T -> shared memory; barrier; warp w: dQ rows 16w..16w+15 of the tile
 *   dQ  += scale dS K              atomicAdd into the float32 dQ
 * At the end dK (times scale) and dV are added to the float32 outputs: a
 * plain read-modify-write when each kv head has one query head (the block
 * is the only writer), atomicAdd when several query heads share it (GQA).
 * Rows with lse = -inf saw no key: their lse is stored as +inf in shared
 * memory so that their P is exactly 0. Query tiles wholly before the first
 * row that sees the block's first key (causal) are skipped.
 *
 * Grid: x = query head, y = key block. Block: 128 threads.
 * Shared memory: K, V [BN][D]; Q, dO [2][BM][D]; dS^T [BN][BM] (16-bit,
 * swizzled); lse, Dr [2][BM] float32.
 */
#ifndef ATTN_BWD_KERNEL_CUH
#define ATTN_BWD_KERNEL_CUH

#include "kc_tile.cuh"

struct kc_bwd_params {
    const uint16_t *q, *k, *v, *dout;
    const float *lse, *dr;
    float *dq, *dk, *dv;
    int heads, kv_heads, n_q, n_kv;
    float scale, scale_log2;
    long long q_off, kv_off;
};

template <int D> struct kc_bwd_cfg {
    static constexpr int NW = 4, NT = 128;
    static constexpr int BM = 64; /* query rows per tile */
    static constexpr int BN = 64; /* keys per block: 16 per warp */
    /* query columns of S^T, P^T, dP^T, dS^T held in registers at once: 32
     * for d = 128 keeps the kernel within 255 registers without spills (the
     * warp's dK and dV accumulators take 128), 64 for d = 64 */
    static constexpr int QC = D >= 128 ? 32 : 64;
    static constexpr int SMEM = (2 * BN * D + 4 * BM * D + BN * BM) * 2 + 4 * BM * 4;
};

#ifndef KC_NEG_INF
#define KC_NEG_INF (-__builtin_inff())
#endif

/* Dr[r] = sum_c dO[r][c] O[r][c], r < rows; one warp per row, 8 rows per block. */
template <typename T>
KC_GLOBAL void KC_LAUNCH_BOUNDS(256, 1) kc_attn_bwd_pre_kernel(const uint16_t *KC_RESTRICT o,
                                                                const uint16_t *KC_RESTRICT dout,
                                                                float *KC_RESTRICT dr, long long rows, int d)
{
    const int lane = kc_tid() & 31;
    const long long r = (long long)kc_bid_x() * 8 + (kc_tid() >> 5);
    if (r >= rows) return; /* whole warps leave together: r is per warp */
    const uint16_t *orow = o + (size_t)r * d, *drow = dout + (size_t)r * d;
    float s = 0.f;
    for (int c = lane; c < d; c += 32) s += kc_to_f32<T>(orow[c]) * kc_to_f32<T>(drow[c]);
    KC_UNROLL
    for (int m = 16; m >= 1; m >>= 1) s += kc_shfl_xor(s, m);
    if (lane == 0) kc_stg_f32(dr + r, s);
}

template <typename T, int D, bool CAUSAL>
KC_GLOBAL void KC_LAUNCH_BOUNDS(128, 2) kc_attn_bwd_kernel(const kc_bwd_params p)
{
    using C = kc_bwd_cfg<D>;
    constexpr int BM = C::BM, BN = C::BN, NT = C::NT, QC = C::QC;
    constexpr int DCH = D / 8;
    KC_DYN_SMEM(smem);
    unsigned char *sK = smem;
    unsigned char *sV = sK + BN * D * 2;
    unsigned char *sQ = sV + BN * D * 2;   /* [2][BM][D] */
    unsigned char *sdO = sQ + 2 * BM * D * 2; /* [2][BM][D] */
    unsigned char *sdS = sdO + 2 * BM * D * 2; /* [BN][BM] */
    float *sLse = reinterpret_cast<float *>(sdS + BN * BM * 2); /* [2][BM], log2 units */
    float *sDr = sLse + 2 * BM;                                 /* [2][BM] */

    const int tid = kc_tid(), warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, t4 = lane & 3;
    const int h = kc_bid_x();
    const int n0 = kc_bid_y() * BN;
    const int group = p.heads / p.kv_heads;
    const int hk = h / group;
    const uint16_t *qg = p.q + (size_t)h * p.n_q * D;
    const uint16_t *dog = p.dout + (size_t)h * p.n_q * D;
    const float *lseg = p.lse + (size_t)h * p.n_q;
    const float *drg = p.dr + (size_t)h * p.n_q;
    float *dqg = p.dq + (size_t)h * p.n_q * D;

    /* first query row that sees key n0 */
    int m_first = 0;
    if (CAUSAL) {
        const long long i0 = p.kv_off + n0 - p.q_off;
        if (i0 >= p.n_q) return; /* no row sees any key of this block: nothing to add */
        m_first = i0 <= 0 ? 0 : (int)(i0 / BM) * BM;
    }
    const int n_tiles = (p.n_q - m_first + BM - 1) / BM;
    if (n_tiles <= 0) return;

    /* stage tile it (rows m0..) into buffer b: Q, dO by cp.async; lse, Dr by plain stores */
    auto stage = [&](int m0, int b) {
        kc_load_tile<BM, D, NT>(sQ + b * BM * D * 2, qg, m0, p.n_q, tid);
        kc_load_tile<BM, D, NT>(sdO + b * BM * D * 2, dog, m0, p.n_q, tid);
        if (tid < BM) {
            const int r = m0 + tid;
            float l2 = __builtin_inff(), dr = 0.f;
            if (r < p.n_q) {
                const float l = lseg[r];
                if (l != KC_NEG_INF) l2 = l * 1.4426950408889634f;
                dr = drg[r];
            }
            kc_sts_f32(sLse + b * BM + tid, l2);
            kc_sts_f32(sDr + b * BM + tid, dr);
        }
    };

    kc_load_tile<BN, D, NT>(sK, p.k + (size_t)hk * p.n_kv * D, n0, p.n_kv, tid);
    kc_load_tile<BN, D, NT>(sV, p.v + (size_t)hk * p.n_kv * D, n0, p.n_kv, tid);
    stage(m_first, 0);
    kc_cp_commit();

    float dk[D / 8][4], dv[D / 8][4];
    KC_UNROLL
    for (int nt = 0; nt < D / 8; nt++)
        KC_UNROLL
        for (int e = 0; e < 4; e++) dk[nt][e] = dv[nt][e] = 0.f;

    const int kw0 = warp * 16; /* this warp's first key within the block */
    for (int it = 0; it < n_tiles; it++) {
        const int m0 = m_first + it * BM;
        const int b = it & 1;
        kc_cp_wait<0>();
        kc_sync(); /* tile it visible; tile it-1 (buffers, dS) no longer read */
        if (it + 1 < n_tiles) stage(m0 + BM, b ^ 1);
        kc_cp_commit();
        const unsigned char *sQc = sQ + b * BM * D * 2;
        const unsigned char *sdOc = sdO + b * BM * D * 2;
        const float *sLc = sLse + b * BM;
        const float *sDc = sDr + b * BM;

        const bool need_mask = n0 + BN > p.n_kv || m0 + BM > p.n_q ||
                               (CAUSAL && p.kv_off + n0 + BN - 1 > p.q_off + m0);

        KC_UNROLL
        for (int qh = 0; qh < BM / QC; qh++) {
            const int q0 = qh * QC; /* first query column of this step within the tile */
            /* S^T = K Q^T (rows: keys kw0.., columns: queries q0..q0+QC-1) */
            float pt[QC / 8][4];
            KC_UNROLL
            for (int nt = 0; nt < QC / 8; nt++)
                KC_UNROLL
                for (int e = 0; e < 4; e++) pt[nt][e] = 0.f;
            KC_UNROLL
            for (int ks = 0; ks < DCH / 2; ks++) {
                uint32_t a[4];
                kc_frag_a<D>(a, sK, kw0, ks * 2, lane);
                KC_UNROLL
                for (int np = 0; np < QC / 16; np++) {
                    uint32_t bb[4];
                    kc_frag_b_nk<D>(bb, sQc, q0 + np * 16, ks * 2, lane);
                    kc_mma<T>(pt[2 * np], a, bb);
                    kc_mma<T>(pt[2 * np + 1], a, bb + 2);
                }
            }
            /* P^T */
            KC_UNROLL
            for (int nt = 0; nt < QC / 8; nt++) {
                KC_UNROLL
                for (int e = 0; e < 4; e++) {
                    const int qc = q0 + nt * 8 + t4 * 2 + (e & 1);
                    float pv = kc_exp2(pt[nt][e] * p.scale_log2 - kc_lds_f32(sLc + qc));
                    if (need_mask) {
                        const int key = n0 + kw0 + g + (e >> 1) * 8;
                        const int row = m0 + qc;
                        if (key >= p.n_kv || row >= p.n_q || (CAUSAL && p.kv_off + key > p.q_off + row)) pv = 0.f;
                    }
                    pt[nt][e] = pv;
                }
            }
            /* dV += P^T dO */
            KC_UNROLL
            for (int kk = 0; kk < QC / 16; kk++) {
                uint32_t a[4];
                kc_c_to_a<T>(a, pt[2 * kk], pt[2 * kk + 1]);
                KC_UNROLL
                for (int dp = 0; dp < DCH / 2; dp++) {
                    uint32_t bb[4];
                    kc_frag_b_kn<D>(bb, sdOc, q0 + kk * 16, dp * 2, lane);
                    kc_mma<T>(dv[2 * dp], a, bb);
                    kc_mma<T>(dv[2 * dp + 1], a, bb + 2);
                }
            }
            /* dP^T = V dO^T, then dS^T = P^T o (dP^T - Dr) in place of dP^T */
            float ds[QC / 8][4];
            KC_UNROLL
            for (int nt = 0; nt < QC / 8; nt++)
                KC_UNROLL
                for (int e = 0; e < 4; e++) ds[nt][e] = 0.f;
            KC_UNROLL
            for (int ks = 0; ks < DCH / 2; ks++) {
                uint32_t a[4];
                kc_frag_a<D>(a, sV, kw0, ks * 2, lane);
                KC_UNROLL
                for (int np = 0; np < QC / 16; np++) {
                    uint32_t bb[4];
                    kc_frag_b_nk<D>(bb, sdOc, q0 + np * 16, ks * 2, lane);
                    kc_mma<T>(ds[2 * np], a, bb);
                    kc_mma<T>(ds[2 * np + 1], a, bb + 2);
                }
            }
            KC_UNROLL
            for (int nt = 0; nt < QC / 8; nt++)
                KC_UNROLL
                for (int e = 0; e < 4; e++) {
                    const int qc = q0 + nt * 8 + t4 * 2 + (e & 1);
                    ds[nt][e] = pt[nt][e] * (ds[nt][e] - kc_lds_f32(sDc + qc));
                }
            /* dK += dS^T Q (scale applied at the end); dS^T to shared memory */
            KC_UNROLL
            for (int kk = 0; kk < QC / 16; kk++) {
                uint32_t a[4];
                kc_c_to_a<T>(a, ds[2 * kk], ds[2 * kk + 1]);
                /* the same rounded values go to shared memory for dQ: rows g, g+8
                 * of the warp's keys, columns q0 + 16kk + 2t4 (+8) */
                const int qc = q0 + kk * 16 + t4 * 2;
                kc_sts_u32(sdS + kc_sw_elem<BM>(kw0 + g, qc), a[0]);
                kc_sts_u32(sdS + kc_sw_elem<BM>(kw0 + g + 8, qc), a[1]);
                kc_sts_u32(sdS + kc_sw_elem<BM>(kw0 + g, qc + 8), a[2]);
                kc_sts_u32(sdS + kc_sw_elem<BM>(kw0 + g + 8, qc + 8), a[3]);
                KC_UNROLL
                for (int dp = 0; dp < DCH / 2; dp++) {
                    uint32_t bb[4];
                    kc_frag_b_kn<D>(bb, sQc, q0 + kk * 16, dp * 2, lane);
                    kc_mma<T>(dk[2 * dp], a, bb);
                    kc_mma<T>(dk[2 * dp + 1], a, bb + 2);
                }
            }
        }
        kc_sync(); /* dS^T of all warps visible */

        /* dQ rows kw0..kw0+15 of this tile (warp w takes query rows 16w..):
         * dQ += scale dS K, in two halves of the head dimension to bound registers */
        constexpr int DH = D / 2;
        KC_UNROLL
        for (int half = 0; half < 2; half++) {
            float dq[DH / 8][4];
            KC_UNROLL
            for (int nt = 0; nt < DH / 8; nt++)
                KC_UNROLL
                for (int e = 0; e < 4; e++) dq[nt][e] = 0.f;
            KC_UNROLL
            for (int kk = 0; kk < BN / 16; kk++) {
                uint32_t a[4];
                kc_frag_a_trans<BM>(a, sdS, kk * 16, warp * 2, lane);
                KC_UNROLL
                for (int dp = 0; dp < DH / 16; dp++) {
                    uint32_t bb[4];
                    kc_frag_b_kn<D>(bb, sK, kk * 16, half * (DH / 8) + dp * 2, lane);
                    kc_mma<T>(dq[2 * dp], a, bb);
                    kc_mma<T>(dq[2 * dp + 1], a, bb + 2);
                }
            }
            KC_UNROLL
            for (int hh = 0; hh < 2; hh++) {
                const int row = m0 + warp * 16 + g + hh * 8;
                if (row >= p.n_q) continue;
                float *dqr = dqg + (size_t)row * D + half * DH;
                KC_UNROLL
                for (int nt = 0; nt < DH / 8; nt++) {
                    const float x0 = dq[nt][hh * 2] * p.scale, x1 = dq[nt][hh * 2 + 1] * p.scale;
                    if (x0 != 0.f) kc_atomic_add(dqr + nt * 8 + t4 * 2, x0);
                    if (x1 != 0.f) kc_atomic_add(dqr + nt * 8 + t4 * 2 + 1, x1);
                }
            }
        }
    }

    /* dK (times scale), dV into the float32 outputs */
    float *dkg = p.dk + (size_t)hk * p.n_kv * D, *dvg = p.dv + (size_t)hk * p.n_kv * D;
    KC_UNROLL
    for (int hh = 0; hh < 2; hh++) {
        const int key = n0 + kw0 + g + hh * 8;
        if (key >= p.n_kv) continue;
        float *dkr = dkg + (size_t)key * D, *dvr = dvg + (size_t)key * D;
        KC_UNROLL
        for (int nt = 0; nt < D / 8; nt++) {
            KC_UNROLL
            for (int e = 0; e < 2; e++) {
                const int c = nt * 8 + t4 * 2 + e;
                const float xk = dk[nt][hh * 2 + e] * p.scale, xv = dv[nt][hh * 2 + e];
                if (group == 1) {
                    kc_add_owned(dkr + c, xk);
                    kc_add_owned(dvr + c, xv);
                } else {
                    kc_atomic_add(dkr + c, xk);
                    kc_atomic_add(dvr + c, xv);
                }
            }
        }
    }
}

#endif /* ATTN_BWD_KERNEL_CUH */
