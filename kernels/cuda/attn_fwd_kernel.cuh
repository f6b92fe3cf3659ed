/* attn_fwd_kernel.cuh: FlashAttention-2 forward on tensor cores.
 *
 * One block of 4 warps owns BM = 64*MT query rows of one head (each warp
 * 16*MT rows) and walks the keys in tiles of BN = 64:
 *   S = Q K^T        ldmatrix Q (A) and K (B, non-transposed), mma.sync
 *   online softmax   row max and sum in float32, exp2 with the scale folded
 *                    into log2(e) * scale; offset causal mask and the key
 *                    count applied only on the tiles that need them
 *   O += P V         P stays in registers (C fragments re-packed as A
 *                    fragments, rounded to the input type), V via ldmatrix.trans
 * K and V tiles are double-buffered with cp.async: the copy of tile j+1 is
 * in flight while tile j is computed; one barrier per tile. Tiles wholly
 * above the causal diagonal are never loaded. Causal grids run the heaviest
 * row blocks first (the grid's y index is reversed) so that the tail of the
 * launch is made of short blocks.
 *
 * Grid: x = query head, y = row block. Block: 128 threads.
 * Shared memory: Q [BM][D], K [2][BN][D], V [2][BN][D] (16-bit, swizzled).
 */
#ifndef ATTN_FWD_KERNEL_CUH
#define ATTN_FWD_KERNEL_CUH

#include <type_traits>

#include "kc_tile.cuh"

struct kc_fwd_params {
    const uint16_t *q, *k, *v;
    uint16_t *o;
    float *lse;
    int heads, kv_heads, n_q, n_kv;
    float scale_log2; /* scale * log2(e) */
    long long q_off, kv_off;
    int reverse;      /* 1: row block = gridDim.y - 1 - blockIdx.y */
};

/* MT: m16 tiles per warp (rows per block BM = 64 MT); BNC: keys per
 * softmax step (32 or 64) inside each 64-key tile: 32 halves the score
 * registers (MT x BNC / 2 floats per thread), which keeps d = 128 with
 * 32 rows per warp free of spills, at the price of twice the rescaling of
 * O and a second pass of Q fragments per tile. */
template <int D, int MT, int BNC = 64> struct kc_fwd_cfg {
    static constexpr int NW = 4, NT = 128;
    static constexpr int BM = 16 * MT * NW;
    static constexpr int BN = 64;
    static_assert(BNC == 32 || BNC == 64, "BNC is 32 or 64");
    static constexpr int SMEM = (BM * D + 4 * BN * D) * 2;
};

#define KC_NEG_INF (-__builtin_inff())

/* The forward's shapes, by number: 0 is the default for the head
 * dimension; benchmarks time the others to pick it on new hardware. */
#define KC_FWD_VARIANTS 4
static inline bool kc_fwd_shape(int d, int variant, int *mt, int *bnc)
{
    switch (variant) {
    case 0: /* 128 rows per block; d = 128 with 32-key softmax steps (no spills) */
        *mt = 2;
        *bnc = d >= 128 ? 32 : 64;
        return true;
    case 1: *mt = 2; *bnc = 64; return true; /* FlashAttention-2's 128 x 64 */
    case 2: *mt = 2; *bnc = 32; return true;
    case 3: *mt = 1; *bnc = 64; return true; /* 64 rows per block, 16 per warp */
    default: return false;
    }
}

/* Calls f(integral_constant<MT>, integral_constant<BNC>) for a runtime shape. */
template <typename F> static inline auto kc_fwd_dispatch(int mt, int bnc, F &&f)
{
    using I1 = std::integral_constant<int, 1>;
    using I2 = std::integral_constant<int, 2>;
    using B32 = std::integral_constant<int, 32>;
    using B64 = std::integral_constant<int, 64>;
    if (mt == 1) return f(I1{}, B64{}); /* the only 64-row shape */
    return bnc == 32 ? f(I2{}, B32{}) : f(I2{}, B64{});
}

template <typename T, int D, int MT, int BNC, bool CAUSAL>
KC_GLOBAL void KC_LAUNCH_BOUNDS(128, 2) kc_attn_fwd_kernel(const kc_fwd_params p)
{
    using C = kc_fwd_cfg<D, MT, BNC>;
    constexpr int BM = C::BM, BN = C::BN, NT = C::NT;
    constexpr int DCH = D / 8; /* 16-byte chunks per row */
    KC_DYN_SMEM(smem);
    unsigned char *sQ = smem;
    unsigned char *sK = sQ + BM * D * 2;
    unsigned char *sV = sK + 2 * BN * D * 2;

    const int tid = kc_tid(), warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, t4 = lane & 3;
    const int h = kc_bid_x();
    const int mb = p.reverse ? kc_grid_y() - 1 - kc_bid_y() : kc_bid_y();
    const int m0 = mb * BM;
    const int wr0 = warp * 16 * MT; /* this warp's first row within the block */
    const int group = p.heads / p.kv_heads;
    const uint16_t *qg = p.q + (size_t)h * p.n_q * D;
    const uint16_t *kg = p.k + (size_t)(h / group) * p.n_kv * D;
    const uint16_t *vg = p.v + (size_t)(h / group) * p.n_kv * D;

    /* Keys this block needs: all, or (causal) up to the last row's last
     * visible key. first_last: the first row's last visible key; tiles past
     * it, and the tile holding key n_kv, need the element mask. */
    int n_end = p.n_kv;
    long long first_last = 0;
    if (CAUSAL) {
        const int last_row = (m0 + BM < p.n_q ? m0 + BM : p.n_q) - 1;
        const long long lk = p.q_off + last_row - p.kv_off;
        n_end = lk < 0 ? 0 : (lk + 1 < p.n_kv ? (int)(lk + 1) : p.n_kv);
        first_last = p.q_off + m0 - p.kv_off;
    }
    const int n_tiles = (n_end + BN - 1) / BN;

    float acc[MT][D / 8][4];
    float m_i[MT][2], l_i[MT][2];
    KC_UNROLL
    for (int mt = 0; mt < MT; mt++) {
        KC_UNROLL
        for (int nt = 0; nt < D / 8; nt++)
            KC_UNROLL
            for (int e = 0; e < 4; e++) acc[mt][nt][e] = 0.f;
        m_i[mt][0] = m_i[mt][1] = KC_NEG_INF;
        l_i[mt][0] = l_i[mt][1] = 0.f;
    }

    if (n_tiles > 0) {
        kc_load_tile<BM, D, NT>(sQ, qg, m0, p.n_q, tid);
        kc_load_tile<BN, D, NT>(sK, kg, 0, p.n_kv, tid);
        kc_load_tile<BN, D, NT>(sV, vg, 0, p.n_kv, tid);
        kc_cp_commit();
    }

    for (int j = 0; j < n_tiles; j++) {
        const int n0 = j * BN;
        kc_cp_wait<0>();
        kc_sync(); /* tile j visible to all; everyone is done with tile j-1's buffers */
        if (j + 1 < n_tiles) {
            const int nb = (j + 1) & 1;
            kc_load_tile<BN, D, NT>(sK + nb * BN * D * 2, kg, n0 + BN, p.n_kv, tid);
            kc_load_tile<BN, D, NT>(sV + nb * BN * D * 2, vg, n0 + BN, p.n_kv, tid);
        }
        kc_cp_commit();
        const unsigned char *sKc = sK + (j & 1) * BN * D * 2;
        const unsigned char *sVc = sV + (j & 1) * BN * D * 2;

        KC_UNROLL
        for (int sub = 0; sub < BN / BNC; sub++) {
            const int c0 = sub * BNC; /* first key of this step within the tile */
            if (BNC < BN && n0 + c0 >= n_end) continue; /* past the last row's last key (causal) */
            /* S = Q K^T */
            float s[MT][BNC / 8][4];
            KC_UNROLL
            for (int mt = 0; mt < MT; mt++)
                KC_UNROLL
                for (int nt = 0; nt < BNC / 8; nt++)
                    KC_UNROLL
                    for (int e = 0; e < 4; e++) s[mt][nt][e] = 0.f;
            KC_UNROLL
            for (int ks = 0; ks < DCH / 2; ks++) {
                uint32_t a[MT][4];
                KC_UNROLL
                for (int mt = 0; mt < MT; mt++) kc_frag_a<D>(a[mt], sQ, wr0 + mt * 16, ks * 2, lane);
                KC_UNROLL
                for (int np = 0; np < BNC / 16; np++) {
                    uint32_t b[4];
                    kc_frag_b_nk<D>(b, sKc, c0 + np * 16, ks * 2, lane);
                    KC_UNROLL
                    for (int mt = 0; mt < MT; mt++) {
                        kc_mma<T>(s[mt][2 * np], a[mt], b);
                        kc_mma<T>(s[mt][2 * np + 1], a[mt], b + 2);
                    }
                }
            }

            /* scale (base 2), mask, online softmax */
            const int k0 = n0 + c0;
            const bool need_mask = k0 + BNC > p.n_kv || (CAUSAL && (long long)(k0 + BNC - 1) > first_last);
            KC_UNROLL
            for (int mt = 0; mt < MT; mt++) {
                KC_UNROLL
                for (int hh = 0; hh < 2; hh++) {
                    const int row = m0 + wr0 + mt * 16 + g + hh * 8;
                    float mx = KC_NEG_INF;
                    KC_UNROLL
                    for (int nt = 0; nt < BNC / 8; nt++) {
                        KC_UNROLL
                        for (int e = 0; e < 2; e++) {
                            float x = s[mt][nt][hh * 2 + e] * p.scale_log2;
                            if (need_mask) {
                                const int col = k0 + nt * 8 + t4 * 2 + e;
                                if (col >= p.n_kv || (CAUSAL && p.kv_off + col > p.q_off + row)) x = KC_NEG_INF;
                            }
                            s[mt][nt][hh * 2 + e] = x;
                            mx = fmaxf(mx, x);
                        }
                    }
                    mx = fmaxf(mx, kc_shfl_xor(mx, 1));
                    mx = fmaxf(mx, kc_shfl_xor(mx, 2));
                    const float m_new = fmaxf(m_i[mt][hh], mx);
                    const float m_use = m_new == KC_NEG_INF ? 0.f : m_new;
                    const float alpha = kc_exp2(m_i[mt][hh] - m_use);
                    m_i[mt][hh] = m_new;
                    float rs = 0.f;
                    KC_UNROLL
                    for (int nt = 0; nt < BNC / 8; nt++) {
                        KC_UNROLL
                        for (int e = 0; e < 2; e++) {
                            const float pv = kc_exp2(s[mt][nt][hh * 2 + e] - m_use);
                            s[mt][nt][hh * 2 + e] = pv;
                            rs += pv;
                        }
                    }
                    l_i[mt][hh] = l_i[mt][hh] * alpha + rs;
                    KC_UNROLL
                    for (int nt = 0; nt < D / 8; nt++) {
                        acc[mt][nt][hh * 2] *= alpha;
                        acc[mt][nt][hh * 2 + 1] *= alpha;
                    }
                }
            }

            /* O += P V */
            KC_UNROLL
            for (int kk = 0; kk < BNC / 16; kk++) {
                uint32_t a[MT][4];
                KC_UNROLL
                for (int mt = 0; mt < MT; mt++) kc_c_to_a<T>(a[mt], s[mt][2 * kk], s[mt][2 * kk + 1]);
                KC_UNROLL
                for (int dp = 0; dp < DCH / 2; dp++) {
                    uint32_t b[4];
                    kc_frag_b_kn<D>(b, sVc, c0 + kk * 16, dp * 2, lane);
                    KC_UNROLL
                    for (int mt = 0; mt < MT; mt++) {
                        kc_mma<T>(acc[mt][2 * dp], a[mt], b);
                        kc_mma<T>(acc[mt][2 * dp + 1], a[mt], b + 2);
                    }
                }
            }
        }
    }

    /* O = acc / l, lse = ln(2^m * l); rows that saw no key: O = 0, lse = -inf */
    uint16_t *og = p.o + (size_t)h * p.n_q * D;
    KC_UNROLL
    for (int mt = 0; mt < MT; mt++) {
        KC_UNROLL
        for (int hh = 0; hh < 2; hh++) {
            float l = l_i[mt][hh];
            l += kc_shfl_xor(l, 1);
            l += kc_shfl_xor(l, 2);
            const int row = m0 + wr0 + mt * 16 + g + hh * 8;
            if (row >= p.n_q) continue;
            const float inv = l > 0.f ? 1.f / l : 0.f;
            uint16_t *orow = og + (size_t)row * D;
            KC_UNROLL
            for (int nt = 0; nt < D / 8; nt++) {
                const uint32_t v2 = kc_pack2<T>(acc[mt][nt][hh * 2] * inv, acc[mt][nt][hh * 2 + 1] * inv);
                kc_stg_u32(orow + nt * 8 + t4 * 2, v2);
            }
            if (t4 == 0)
                kc_stg_f32(p.lse + (size_t)h * p.n_q + row,
                           l > 0.f ? (m_i[mt][hh] + kc_log2(l)) * 0.6931471805599453f : KC_NEG_INF);
        }
    }
}

#endif /* ATTN_FWD_KERNEL_CUH */
