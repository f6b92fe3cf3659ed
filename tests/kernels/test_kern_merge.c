/* test_kern_merge.c: ring attention done with the kernels' own pieces.
 * The sequence is split over r "ranks" (contiguous, uneven, or zigzag:
 * 2r chunks, rank i holding chunks i and 2r-1-i); each rank runs flash on
 * every (local Q chunk, KV chunk) pair in ring order with the chunks'
 * global offsets, merges the partials with kern_attn_merge, then runs the
 * backward per pair with the merged O and lse, accumulating dQ, dK, dV.
 * Everything must equal attention over the whole sequence. Also the
 * merge's -INFINITY cases, exactly. */
#include <stdbool.h>

#include "kern_test_util.h"

/* Reference pieces merged vs the reference whole: both float64-accumulated
 * and rounded to float once per piece, then combined with float64 weights
 * from float lse values. lse ~ 5 rounds to 5 * u = 3e-7 absolute, which is
 * the relative error of each weight: a few 1e-7 in O; 2e-6 allowed. */
#define TOL_MERGE_REF 2e-6
/* Flash pieces vs the reference whole: the flash-vs-ref tolerances of
 * test_kern_flash.c (float32 accumulation, see there for the bound) plus
 * the merge's few 1e-7. */
#define TOL_RING_FWD 3e-5
#define TOL_RING_LSE 2e-6
#define TOL_RING_BWD 1e-4

#define MAX_RANKS 4

struct split {
    const char *name;
    int ranks;
    int chunks;                    /* per rank: 1 (contiguous) or 2 (zigzag) */
    int start[MAX_RANKS][2];       /* global position of each chunk */
    int len[MAX_RANKS][2];
};

/* 2r chunks of c tokens; rank i holds chunks i and 2r-1-i. */
static struct split split_zigzag(const char *name, int r, int c)
{
    struct split s = {.name = name, .ranks = r, .chunks = 2};
    for (int i = 0; i < r; i++) {
        s.start[i][0] = i * c;
        s.start[i][1] = (2 * r - 1 - i) * c;
        s.len[i][0] = s.len[i][1] = c;
    }
    return s;
}

/* r contiguous pieces with the given boundaries (uneven on purpose). */
static struct split split_contiguous(const char *name, int r, const int *bounds)
{
    struct split s = {.name = name, .ranks = r, .chunks = 1};
    for (int i = 0; i < r; i++) {
        s.start[i][0] = bounds[i];
        s.len[i][0] = bounds[i + 1] - bounds[i];
    }
    return s;
}

/* kv_shift != 0 plants a bug (every KV chunk's offset moved by kv_shift):
 * then the comparisons must fail, which is checked instead. */
static void ring_check(const struct split *sp, int heads, int kv_heads, int d, bool causal, int total,
                       const struct kern_attn_impl *impl, double tol_fwd, double tol_lse, double tol_bwd,
                       int kv_shift)
{
    const size_t nq = (size_t)heads * total * d, nkv = (size_t)kv_heads * total * d;
    const size_t rows = (size_t)heads * total;
    float *q = kt_normal_new(nq, 1.0), *k = kt_normal_new(nkv, 1.0), *v = kt_normal_new(nkv, 1.0);
    float *dout = kt_normal_new(nq, 1.0);
    struct kern_attn_desc whole = {.heads = heads, .kv_heads = kv_heads, .n_q = total, .n_kv = total,
                                   .d = d, .scale = 1.0f / sqrtf((float)d), .causal = causal,
                                   .acc = KERN_ACC_F64};
    float *o_ref = kt_alloc(nq), *lse_ref = kt_alloc(rows);
    float *dq_ref = calloc(nq, sizeof(float)), *dk_ref = calloc(nkv, sizeof(float)),
          *dv_ref = calloc(nkv, sizeof(float));
    kern_attn_ref_fwd(&whole, q, k, v, o_ref, lse_ref);
    kern_attn_ref_bwd(&whole, q, k, v, o_ref, lse_ref, dout, dq_ref, dk_ref, dv_ref);

    float *o_ring = kt_alloc(nq), *lse_ring = kt_alloc(rows);
    float *dq_ring = calloc(nq, sizeof(float)), *dk_ring = calloc(nkv, sizeof(float)),
          *dv_ring = calloc(nkv, sizeof(float));
    /* Per-chunk buffers, at most `total` rows. */
    float *qc = kt_alloc(nq), *doc = kt_alloc(nq), *oc = kt_alloc(nq), *lsec = kt_alloc(rows);
    float *ob = kt_alloc(nq), *lseb = kt_alloc(rows), *dqc = kt_alloc(nq);
    float *kc = kt_alloc(nkv), *vc = kt_alloc(nkv), *dkc = kt_alloc(nkv), *dvc = kt_alloc(nkv);
    int bad_status = 0;

    /* Forward, rank by rank, chunk by chunk: KV arrives from rank - step. */
    for (int rk = 0; rk < sp->ranks; rk++)
        for (int a = 0; a < sp->chunks; a++) {
            const int q0 = sp->start[rk][a], nqr = sp->len[rk][a];
            kt_rows_get(qc, q, heads, total, d, q0, nqr);
            for (size_t i = 0; i < (size_t)heads * nqr; i++) lsec[i] = -INFINITY; /* nothing seen yet */
            memset(oc, 0, sizeof(float) * (size_t)heads * nqr * d);
            for (int step = 0; step < sp->ranks; step++) {
                const int src = (rk - step + sp->ranks) % sp->ranks;
                for (int b = 0; b < sp->chunks; b++) {
                    const int k0 = sp->start[src][b], nkr = sp->len[src][b];
                    kt_rows_get(kc, k, kv_heads, total, d, k0, nkr);
                    kt_rows_get(vc, v, kv_heads, total, d, k0, nkr);
                    struct kern_attn_desc ds = whole;
                    ds.n_q = nqr, ds.n_kv = nkr, ds.q_off = q0, ds.kv_off = k0 + kv_shift;
                    bad_status |= impl->fwd(&ds, qc, kc, vc, ob, lseb) != KERN_OK;
                    bad_status |= kern_attn_merge(heads, nqr, d, oc, lsec, ob, lseb) != KERN_OK;
                }
            }
            kt_rows_put(o_ring, oc, heads, total, d, q0, nqr);
            kt_rows_put(lse_ring, lsec, heads, total, 1, q0, nqr);
        }

    /* Backward with the merged O and lse; dK, dV of a chunk accumulate over
     * every Q chunk that reads it (the ring carries them), dQ over steps. */
    for (int rk = 0; rk < sp->ranks; rk++)
        for (int a = 0; a < sp->chunks; a++) {
            const int q0 = sp->start[rk][a], nqr = sp->len[rk][a];
            kt_rows_get(qc, q, heads, total, d, q0, nqr);
            kt_rows_get(doc, dout, heads, total, d, q0, nqr);
            kt_rows_get(oc, o_ring, heads, total, d, q0, nqr);
            kt_rows_get(lsec, lse_ring, heads, total, 1, q0, nqr);
            kt_rows_get(dqc, dq_ring, heads, total, d, q0, nqr);
            for (int step = 0; step < sp->ranks; step++) {
                const int src = (rk - step + sp->ranks) % sp->ranks;
                for (int b = 0; b < sp->chunks; b++) {
                    const int k0 = sp->start[src][b], nkr = sp->len[src][b];
                    kt_rows_get(kc, k, kv_heads, total, d, k0, nkr);
                    kt_rows_get(vc, v, kv_heads, total, d, k0, nkr);
                    kt_rows_get(dkc, dk_ring, kv_heads, total, d, k0, nkr);
                    kt_rows_get(dvc, dv_ring, kv_heads, total, d, k0, nkr);
                    struct kern_attn_desc ds = whole;
                    ds.n_q = nqr, ds.n_kv = nkr, ds.q_off = q0, ds.kv_off = k0 + kv_shift;
                    bad_status |= impl->bwd(&ds, qc, kc, vc, oc, lsec, doc, dqc, dkc, dvc) != KERN_OK;
                    kt_rows_put(dk_ring, dkc, kv_heads, total, d, k0, nkr);
                    kt_rows_put(dv_ring, dvc, kv_heads, total, d, k0, nkr);
                }
            }
            kt_rows_put(dq_ring, dqc, heads, total, d, q0, nqr);
        }

    char what[200];
    snprintf(what, sizeof what, "status ok: %s %s %s", impl->name, sp->name, causal ? "causal" : "non-causal");
    kt_expect(what, !bad_status);
    double worst = 0.0; /* largest err / tol, for the planted-bug run */
#define CMP(x, ref, n, tol, label)                                                                  \
    do {                                                                                           \
        snprintf(what, sizeof what, "%s %s: %s %s", impl->name, label, sp->name,                 \
                 causal ? "causal" : "non-causal");                                                \
        const double e_ = kt_rel_err(x, ref, n);                                                   \
        if (kv_shift == 0) kt_check(what, e_, tol);                                                \
        worst = fmax(worst, e_ / (tol));                                                           \
    } while (0)
    CMP(o_ring, o_ref, nq, tol_fwd, "O  ");
    CMP(lse_ring, lse_ref, rows, tol_lse, "lse");
    CMP(dq_ring, dq_ref, nq, tol_bwd, "dQ ");
    CMP(dk_ring, dk_ref, nkv, tol_bwd, "dK ");
    CMP(dv_ring, dv_ref, nkv, tol_bwd, "dV ");
#undef CMP
    if (kv_shift != 0) {
        snprintf(what, sizeof what, "can-fail: KV offsets shifted by %d rejected (worst err/tol %.1e): %s",
                 kv_shift, worst, sp->name);
        kt_expect(what, !(worst <= 1.0));
    }

    free(q), free(k), free(v), free(dout), free(o_ref), free(lse_ref), free(dq_ref), free(dk_ref);
    free(dv_ref), free(o_ring), free(lse_ring), free(dq_ring), free(dk_ring), free(dv_ring);
    free(qc), free(doc), free(oc), free(lsec), free(ob), free(lseb), free(dqc), free(kc), free(vc);
    free(dkc), free(dvc);
}

/* The -INFINITY cases, which a ring hits on every causal step that brings
 * only future keys: exact results required. */
static void merge_edges(void)
{
    float o[4] = {1, 2, 3, 4}, lse[2] = {-INFINITY, 0.5f};
    const float ob[4] = {5, 6, 7, 8}, lseb[2] = {-INFINITY, -INFINITY};
    kern_attn_merge(1, 2, 2, o, lse, ob, lseb);
    kt_expect("merge: new side -inf leaves (O, lse) untouched",
              o[0] == 1 && o[1] == 2 && o[2] == 3 && o[3] == 4 && lse[0] == -INFINITY && lse[1] == 0.5f);

    float o2[2] = {0, 0}, lse2[1] = {-INFINITY};
    const float ob2[2] = {5, 6}, lseb2[1] = {1.25f};
    kern_attn_merge(1, 1, 2, o2, lse2, ob2, lseb2);
    kt_expect("merge: running side -inf takes the new block as is", o2[0] == 5 && o2[1] == 6 && lse2[0] == 1.25f);

    /* Equal lse: plain average, lse + log 2. */
    float o3[2] = {1, 3}, lse3[1] = {2.0f};
    const float ob3[2] = {3, 5}, lseb3[1] = {2.0f};
    kern_attn_merge(1, 1, 2, o3, lse3, ob3, lseb3);
    const float want3[3] = {2, 4, (float)(2.0 + log(2.0))};
    const float got3[3] = {o3[0], o3[1], lse3[0]};
    kt_check("merge: equal lse averages, lse + log 2", kt_rel_err(got3, want3, 3), 2e-7);

    /* Far-apart lse values must not overflow: weight exp(-200) ~ 0. */
    float o4[1] = {1}, lse4[1] = {300.0f};
    const float ob4[1] = {-7}, lseb4[1] = {100.0f};
    kern_attn_merge(1, 1, 1, o4, lse4, ob4, lseb4);
    kt_expect("merge: lse 300 vs 100 stays finite and picks the first", o4[0] == 1.0f && lse4[0] == 300.0f);

    kt_expect("merge: d = 0 rejected", kern_attn_merge(1, 1, 0, o4, lse4, ob4, lseb4) == KERN_EINVAL);
}

int main(void)
{
    kt_seed(99);
    merge_edges();
    const struct kern_attn_impl *ref = kern_attn_find("ref"), *flash = kern_attn_find("flash");

    const int b2[] = {0, 70, 161}, b3[] = {0, 84, 168, 250}, b4[] = {0, 40, 111, 150, 229};
    struct split s2 = split_contiguous("contiguous r=2 (70+91)", 2, b2);
    struct split s3 = split_contiguous("contiguous r=3 (84+84+82)", 3, b3);
    struct split s4 = split_contiguous("contiguous r=4 (40+71+39+79)", 4, b4);
    struct split z2 = split_zigzag("zigzag r=2 (4 chunks of 37)", 2, 37);
    struct split z3 = split_zigzag("zigzag r=3 (6 chunks of 29)", 3, 29);

    /* The merge itself, isolated from float32 kernel error. */
    ring_check(&s3, 2, 2, 64, false, 250, ref, TOL_MERGE_REF, TOL_MERGE_REF, TOL_MERGE_REF, 0);
    ring_check(&z2, 4, 2, 64, true, 148, ref, TOL_MERGE_REF, TOL_MERGE_REF, TOL_MERGE_REF, 0);
    /* What ring attention really runs: flash pieces. */
    ring_check(&s2, 4, 2, 64, false, 161, flash, TOL_RING_FWD, TOL_RING_LSE, TOL_RING_BWD, 0);
    ring_check(&s3, 2, 1, 128, true, 250, flash, TOL_RING_FWD, TOL_RING_LSE, TOL_RING_BWD, 0);
    ring_check(&s4, 4, 2, 64, true, 229, flash, TOL_RING_FWD, TOL_RING_LSE, TOL_RING_BWD, 0);
    ring_check(&z2, 4, 2, 64, true, 148, flash, TOL_RING_FWD, TOL_RING_LSE, TOL_RING_BWD, 0);
    ring_check(&z3, 2, 1, 128, true, 174, flash, TOL_RING_FWD, TOL_RING_LSE, TOL_RING_BWD, 0);
    /* The same zigzag ring with every KV offset one token late (the bug of
     * a ring that forgets which chunk it holds) must be caught. */
    ring_check(&z2, 4, 2, 64, true, 148, flash, TOL_RING_FWD, TOL_RING_LSE, TOL_RING_BWD, 1);
    return kt_finish("test_kern_merge");
}
