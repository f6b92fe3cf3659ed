/* kc_tile.cuh: shared-memory tiles of 16-bit elements and the ldmatrix
 * address patterns that turn them into mma.sync m16n8k16 fragments.
 *
 * A tile is [rows][W] 16-bit elements, W a multiple of 64, stored in 16-byte
 * chunks (8 elements) with the chunk index XOR-swizzled by the row's low
 * three bits, so that the 8 row addresses of one ldmatrix phase (8 rows,
 * one logical chunk) fall into 8 different 16-byte bank groups. cp.async
 * writes and ldmatrix reads go through the same kc_sw().
 *
 * Fragment layouts (PTX ISA, mma.m16n8k16 with .bf16/.f16 and f32 C/D;
 * lane l, g = l / 4, t = l % 4; each 32-bit register holds two elements,
 * the lower-indexed one in the low half):
 *   A (16x16, row)  a[0] = A[g][2t..2t+1]    a[1] = A[g+8][2t..2t+1]
 *                   a[2] = A[g][2t+8..+9]    a[3] = A[g+8][2t+8..+9]
 *   B (16x8,  col)  b[0] = B[2t..2t+1][g]    b[1] = B[2t+8..2t+9][g]
 *   C (16x8,  f32)  c[0..1] = C[g][2t..2t+1] c[2..3] = C[g+8][2t..2t+1]
 * ldmatrix.x4: lanes 8i..8i+7 give the row addresses of matrix i; register
 * i of lane l receives M_i[l/4][2(l%4)..+1] (with .trans, M_i[2(l%4)..+1][l/4]).
 */
#ifndef KC_TILE_CUH
#define KC_TILE_CUH

#include "kc_arch.cuh"

/* Byte offset of 16-byte chunk c of row r in a [rows][W] 16-bit tile. */
template <int W> KC_DEV int kc_sw(int r, int c)
{
    static_assert(W % 64 == 0, "swizzle needs rows of at least 8 chunks");
    return r * (W * 2) + ((c ^ (r & 7)) << 4);
}

/* Byte offset of element (r, col) (col even: a 32-bit pair). */
template <int W> KC_DEV int kc_sw_elem(int r, int col) { return kc_sw<W>(r, col >> 3) + ((col & 7) << 1); }

/* cp.async ROWS rows of W elements from a row-major global matrix with row
 * stride W, rows row0.. of n_rows valid ones; rows past n_rows are zero. All
 * NT threads of the block take part; no commit here. */
template <int ROWS, int W, int NT>
KC_DEV void kc_load_tile(unsigned char *s, const uint16_t *g, int row0, int n_rows, int tid)
{
    constexpr int CH = W / 8;
    static_assert((ROWS * CH) % NT == 0, "tile chunks must split evenly over the threads");
    KC_UNROLL
    for (int i = 0; i < ROWS * CH / NT; i++) {
        const int idx = tid + i * NT;
        const int r = idx / CH, c = idx % CH;
        const int gr = row0 + r;
        const bool ok = gr < n_rows;
        const uint16_t *src = ok ? g + (size_t)gr * W + (size_t)c * 8 : g;
        kc_cp_async16(s + kc_sw<W>(r, c), src, ok ? 16 : 0);
    }
}

/* A fragment of the 16x16 block at (rows r0.., chunk c0 = k0/8) of a tile
 * holding A row-major (rows = m, columns = k). */
template <int W> KC_DEV void kc_frag_a(uint32_t a[4], const unsigned char *s, int r0, int c0, int lane)
{
    kc_ldmatrix_x4(a, s + kc_sw<W>(r0 + (lane & 15), c0 + (lane >> 4)));
}

/* A fragment (m = tile column, k = tile row): the tile holds A transposed,
 * rows = k (k0..k0+15), columns = m (chunks c0, c0+1 = m0/8, m0/8 + 1). */
template <int W> KC_DEV void kc_frag_a_trans(uint32_t a[4], const unsigned char *s, int k0, int c0, int lane)
{
    kc_ldmatrix_x4_trans(a, s + kc_sw<W>(k0 + (lane & 7) + ((lane >> 4) << 3), c0 + ((lane >> 3) & 1)));
}

/* B fragments of two adjacent n-tiles (n0..n0+7 -> b[0..1], n0+8..+15 ->
 * b[2..3]) for one k16 step (chunk c0 = k0/8), from a tile holding B
 * transposed: rows = n, columns = k (K in Q K^T). */
template <int W> KC_DEV void kc_frag_b_nk(uint32_t b[4], const unsigned char *s, int n0, int c0, int lane)
{
    kc_ldmatrix_x4(b, s + kc_sw<W>(n0 + (lane & 7) + ((lane >> 4) << 3), c0 + ((lane >> 3) & 1)));
}

/* The same two n-tiles (chunks c0, c0+1 of the columns) for the k16 step at
 * rows k0.., from a tile holding B as is: rows = k, columns = n (V in P V). */
template <int W> KC_DEV void kc_frag_b_kn(uint32_t b[4], const unsigned char *s, int k0, int c0, int lane)
{
    kc_ldmatrix_x4_trans(b, s + kc_sw<W>(k0 + (lane & 15), c0 + (lane >> 4)));
}

/* The A fragment for the k16 step kk made of two f32 C tiles (columns
 * 16kk..16kk+7 and 16kk+8..+15), rounded to T: FlashAttention's P in registers. */
template <typename T> KC_DEV void kc_c_to_a(uint32_t a[4], const float c0[4], const float c1[4])
{
    a[0] = kc_pack2<T>(c0[0], c0[1]);
    a[1] = kc_pack2<T>(c0[2], c0[3]);
    a[2] = kc_pack2<T>(c1[0], c1[1]);
    a[3] = kc_pack2<T>(c1[2], c1[3]);
}

#endif /* KC_TILE_CUH */
