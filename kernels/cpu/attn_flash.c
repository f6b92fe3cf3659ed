/* attn_flash.c: the fast CPU attention ("flash"), FlashAttention-2 on
 * OpenBLAS. The forward walks key blocks with an online softmax so no
 * n_q x n_kv score matrix ever exists; the backward recomputes each P block
 * from lse instead of storing it. Both put the work into block SGEMMs
 * (QK^T, PV; and S, dV, dP, dK, dQ in the backward), run one block task per
 * worker thread with OpenBLAS single-threaded underneath, and skip key
 * blocks that the causal mask hides from every row of the task. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <cblas.h>

#include "kern_internal.h"

/* Block sizes (rows). Measured on the 2-core Zen test box at N = 4096,
 * d = 128, two workers, against other settings from 64 to 512: every choice
 * from 128 up is within ~5% (single-threaded SGEMM runs at 31-36 GFLOP/s on
 * any block from 64x64x128 up), 64-row blocks lose 10-20% to per-call
 * overhead. Forward 256 x 256 was the fastest by a few percent: the S
 * block (256 KiB) and the K, V blocks (2 x 128 KiB at d = 128) fill the
 * 512 KiB L2 slice, and a head of 4096 rows still makes 16 tasks. The
 * backward keeps P and dS blocks plus the K, V blocks; 128 x 128 leaves
 * room for the dQ part and makes a task per 128 keys for balance. */
#define FWD_BR 256 /* query rows per forward task */
#define FWD_BC 256 /* keys per forward step */
#define BWD_BR 128 /* query rows per backward step */
#define BWD_BC 128 /* keys per backward task */

#define LOG2E 1.44269504088896340736f
#define LN2 0.693147180559945309417

/* 2^x for x <= 0, to ~2 ulp: the softmax's only transcendental, computed
 * as a Cephes minimax polynomial on the fraction times 2^round(x) built in
 * the exponent bits. Scores are kept in log2 units (the QK^T GEMM's alpha
 * carries log2 e), so no multiply precedes it. Below -126 the result would
 * be denormal and is anyway hidden by the row max: return exactly 0, which
 * keeps P free of denormals (slow in the GEMMs) and makes masked or "no
 * key" -INFINITY inputs vanish without a NaN. */
static inline float flash_exp2(float x)
{
    const float xc = x < -126.0f ? -126.0f : x;
    /* Round to nearest via the 1.5 * 2^23 trick: exact for |x| < 2^22 in
     * the default rounding mode and vectorisable, unlike rintf. */
    const float t = (xc + 12582912.0f) - 12582912.0f;
    const float f = xc - t; /* [-0.5, 0.5] */
    float p = 1.535336188319500e-4f;
    p = p * f + 1.339887440266574e-3f;
    p = p * f + 9.618437357674640e-3f;
    p = p * f + 5.550332471162809e-2f;
    p = p * f + 2.402264791363012e-1f;
    p = p * f + 6.931472028550421e-1f;
    p = p * f + 1.0f;
    union {
        int32_t i;
        float f;
    } pow2 = {.i = ((int32_t)t + 127) << 23};
    return x < -126.0f ? 0.0f : p * pow2.f;
}

#if defined(__GNUC__) || defined(__clang__)
/* The same function eight lanes at a time with GCC/Clang vector types: the
 * auto-vectoriser gives up on the exponent-bit pun above (and on float
 * max/sum reductions, which it may not reorder), and the scalar loops then
 * cost a third of the forward's time. Eight lanes are one AVX register; the
 * row functions below are built twice (target_clones), for x86-64-v3 (AVX2)
 * and for the baseline, where the compiler splits each vector into two SSE
 * halves, and the loader picks the one the CPU runs. The lanes and the order
 * of the sums are the same in both, so the results are too. */
#define FLASH_LANES 8
typedef float flash_vf __attribute__((vector_size(4 * FLASH_LANES)));
typedef int32_t flash_vi __attribute__((vector_size(4 * FLASH_LANES)));

/* In place (a pointer, not a vector argument: the baseline clone has no
 * 32-byte registers to pass one in). */
static inline void flash_exp2_v(flash_vf *xp)
{
    const flash_vf x = *xp;
    const flash_vi under = x < -126.0f; /* lanes of all ones where true */
    const flash_vf lo = (flash_vf){0} - 126.0f;
    const flash_vf xc = (flash_vf)(((flash_vi)x & ~under) | ((flash_vi)lo & under));
    const flash_vf t = (xc + 12582912.0f) - 12582912.0f;
    const flash_vf f = xc - t;
    flash_vf p = f * 1.535336188319500e-4f + 1.339887440266574e-3f;
    p = p * f + 9.618437357674640e-3f;
    p = p * f + 5.550332471162809e-2f;
    p = p * f + 2.402264791363012e-1f;
    p = p * f + 6.931472028550421e-1f;
    p = p * f + 1.0f;
    const flash_vi bits = (__builtin_convertvector(t, flash_vi) + 127) << 23;
    *xp = (flash_vf)((flash_vi)(p * (flash_vf)bits) & ~under);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define FLASH_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define FLASH_CLONES
#endif
#else
#define FLASH_CLONES
#endif

/* max of s[0..n), n >= 1; -INFINITY entries are fine, NaN is not expected. */
FLASH_CLONES static float flash_row_max(const float *s, int n)
{
    int c = 0;
    float mx = -INFINITY;
#if defined(__GNUC__) || defined(__clang__)
    flash_vf vmx = (flash_vf){0} - INFINITY;
    for (; c + FLASH_LANES <= n; c += FLASH_LANES) {
        flash_vf v;
        memcpy(&v, s + c, sizeof v);
        const flash_vi gt = v > vmx;
        vmx = (flash_vf)(((flash_vi)v & gt) | ((flash_vi)vmx & ~gt));
    }
    for (int lane = 0; lane < FLASH_LANES; lane++) mx = vmx[lane] > mx ? vmx[lane] : mx;
#endif
    for (; c < n; c++) mx = s[c] > mx ? s[c] : mx;
    return mx;
}

/* s[c] = 2^(s[c] - bias) for c < n, in place; returns their sum. */
FLASH_CLONES static float flash_exp2_row(float *s, int n, float bias)
{
    int c = 0;
    float sum = 0.0f;
#if defined(__GNUC__) || defined(__clang__)
    flash_vf vsum = {0};
    for (; c + FLASH_LANES <= n; c += FLASH_LANES) {
        flash_vf v;
        memcpy(&v, s + c, sizeof v); /* unaligned load */
        v -= bias;
        flash_exp2_v(&v);
        memcpy(s + c, &v, sizeof v);
        vsum += v;
    }
    for (int lane = 0; lane < FLASH_LANES; lane += 2) sum += vsum[lane] + vsum[lane + 1];
#endif
    for (; c < n; c++) {
        s[c] = flash_exp2(s[c] - bias);
        sum += s[c];
    }
    return sum;
}

/* ------------------------------------------------------------ thread pool */

#define FLASH_MAX_WORKERS 256 /* per-worker pool state lives on the stack */

/* A parallel-for over task indices: the caller is worker 0, helpers are
 * plain pthreads, tasks are handed out by an atomic counter so uneven
 * causal tasks balance themselves. Tasks are numbered heaviest first. */
struct flash_pool {
    atomic_int next;
    int ntasks;
    void (*run)(void *job, int worker, int task);
    void *job;
    bool warm;         /* first warm OpenBLAS's buffers, all workers at once */
    atomic_int arrived; /* workers at the warm-up start line */
    atomic_int live;    /* workers actually running; -1 until known */
};

struct flash_worker {
    struct flash_pool *pool;
    int id;
};

static void *flash_worker_main(void *arg)
{
    struct flash_worker *w = arg;
    struct flash_pool *pool = w->pool;
    if (pool->warm) {
        /* Spin until every live worker is here, so that the warm-up GEMMs
         * overlap and each one gets its own OpenBLAS buffer. Microseconds:
         * the helpers were just created. */
        atomic_fetch_add(&pool->arrived, 1);
        int live;
        while ((live = atomic_load(&pool->live)) < 0 || atomic_load(&pool->arrived) < live) {
        }
        kern_blas_warm_gemm();
    }
    for (int t; (t = atomic_fetch_add(&pool->next, 1)) < pool->ntasks;) pool->run(pool->job, w->id, t);
    return NULL;
}

/* Runs all tasks on up to nworkers threads. A helper that fails to start
 * only costs speed: the remaining workers drain the counter. */
static void flash_pool_run(int nworkers, int ntasks, void (*run)(void *, int, int), void *job)
{
    struct flash_pool pool = {.ntasks = ntasks, .run = run, .job = job,
                              .warm = kern_blas_warm_needed(nworkers)};
    atomic_init(&pool.next, 0);
    atomic_init(&pool.arrived, 0);
    atomic_init(&pool.live, -1);
    pthread_t tid[FLASH_MAX_WORKERS];
    struct flash_worker ws[FLASH_MAX_WORKERS];
    int started = 0;
    for (int w = 0; w < nworkers; w++) ws[w] = (struct flash_worker){.pool = &pool, .id = w};
    for (int w = 1; w < nworkers; w++) {
        if (pthread_create(&tid[w - 1], NULL, flash_worker_main, &ws[w]) != 0) break;
        started++;
    }
    atomic_store(&pool.live, started + 1);
    flash_worker_main(&ws[0]);
    for (int w = 0; w < started; w++) pthread_join(tid[w], NULL);
}

/* Workers requested: desc->threads, or OpenBLAS's count, never more than
 * there are tasks. */
static int flash_workers(const struct kern_attn_desc *ds, int ntasks)
{
    int n = ds->threads > 0 ? ds->threads : kern_blas_threads_get();
    if (n > ntasks) n = ntasks;
    if (n > FLASH_MAX_WORKERS) n = FLASH_MAX_WORKERS;
    return n < 1 ? 1 : n;
}

/* Per-worker scratch, allocated once per call. */
static float **flash_scratch_alloc(int nworkers, size_t floats)
{
    float **s = calloc((size_t)nworkers, sizeof *s);
    if (!s) return NULL;
    for (int w = 0; w < nworkers; w++) {
        s[w] = malloc(floats * sizeof(float));
        if (!s[w]) {
            for (int u = 0; u < w; u++) free(s[u]);
            free(s);
            return NULL;
        }
    }
    return s;
}

static void flash_scratch_free(float **s, int nworkers)
{
    if (!s) return;
    for (int w = 0; w < nworkers; w++) free(s[w]);
    free(s);
}

/* --------------------------------------------------------------- forward */

struct flash_fwd_job {
    const struct kern_attn_desc *ds;
    const float *q, *k, *v;
    float *o, *lse;
    int nqb;        /* query blocks per head */
    float **scratch; /* per worker: S [FWD_BR][FWD_BC], m [FWD_BR], l [FWD_BR] */
};

/* One (head, query block): O is accumulated in place in the output rows,
 * rescaled by 2^(m_old - m_new) whenever a row's running max grows. */
static void flash_fwd_task(void *arg, int worker, int task)
{
    const struct flash_fwd_job *job = arg;
    const struct kern_attn_desc *ds = job->ds;
    const int d = ds->d, heads = ds->heads, group = heads / ds->kv_heads;
    const int h = task % heads, qb = job->nqb - 1 - task / heads; /* later rows see more keys */
    const int i0 = qb * FWD_BR, rows = ds->n_q - i0 < FWD_BR ? ds->n_q - i0 : FWD_BR;
    const float *qi = job->q + ((size_t)h * ds->n_q + i0) * d;
    const float *kh = job->k + (size_t)(h / group) * ds->n_kv * d;
    const float *vh = job->v + (size_t)(h / group) * ds->n_kv * d;
    float *oi = job->o + ((size_t)h * ds->n_q + i0) * d;
    float *lse = job->lse + (size_t)h * ds->n_q + i0;
    float *S = job->scratch[worker], *m = S + FWD_BR * FWD_BC, *l = m + FWD_BR;

    const int kend = kern_keys_visible(ds, i0 + rows - 1); /* keys any row sees */
    const int kfull = kern_keys_visible(ds, i0);           /* keys every row sees */
    for (int r = 0; r < rows; r++) {
        m[r] = -INFINITY;
        l[r] = 0.0f;
    }
    memset(oi, 0, sizeof(float) * (size_t)rows * d);

    for (int j0 = 0; j0 < kend; j0 += FWD_BC) {
        const int cols = kend - j0 < FWD_BC ? kend - j0 : FWD_BC;
        const int masked = j0 + cols > kfull; /* some row stops inside this block */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, cols, d, ds->scale * LOG2E, qi, d,
                    kh + (size_t)j0 * d, d, 0.0f, S, FWD_BC);
        for (int r = 0; r < rows; r++) {
            float *sr = S + (size_t)r * FWD_BC;
            int nc = cols;
            if (masked) {
                nc = kern_keys_visible(ds, i0 + r) - j0;
                nc = nc < 0 ? 0 : nc > cols ? cols : nc;
            }
            if (nc == 0) { /* row sees none of these keys: P row 0, state unchanged */
                memset(sr, 0, sizeof(float) * (size_t)cols);
                continue;
            }
            const float mx = flash_row_max(sr, nc);
            const float mnew = mx > m[r] ? mx : m[r];
            const float sum = flash_exp2_row(sr, nc, mnew);
            for (int c = nc; c < cols; c++) sr[c] = 0.0f;
            if (mnew > m[r]) {
                /* m[r] = -inf on a row's first block: 2^-inf = 0 wipes the
                 * zero accumulator, which is harmless. */
                const float corr = exp2f(m[r] - mnew);
                float *orow = oi + (size_t)r * d;
                for (int c = 0; c < d; c++) orow[c] *= corr;
                l[r] *= corr;
                m[r] = mnew;
            }
            l[r] += sum;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, d, cols, 1.0f, S, FWD_BC,
                    vh + (size_t)j0 * d, d, 1.0f, oi, d);
    }
    for (int r = 0; r < rows; r++) {
        float *orow = oi + (size_t)r * d;
        if (l[r] == 0.0f) { /* saw no key (the sum of a seen key's P is >= 1) */
            memset(orow, 0, sizeof(float) * (size_t)d);
            lse[r] = -INFINITY;
            continue;
        }
        const float inv = 1.0f / l[r];
        for (int c = 0; c < d; c++) orow[c] *= inv;
        lse[r] = (float)(((double)m[r] + log2((double)l[r])) * LN2);
    }
}

kern_status kern_attn_flash_fwd(const struct kern_attn_desc *desc,
                                const float *q, const float *k, const float *v,
                                float *o, float *lse)
{
    kern_status st = kern_desc_check(desc);
    if (st != KERN_OK) return st;
    if (!kern_fwd_bufs_ok(desc, q, k, v, o, lse)) return KERN_EINVAL;
    if (desc->n_q == 0) return KERN_OK;

    const int nqb = (desc->n_q + FWD_BR - 1) / FWD_BR;
    if ((int64_t)nqb * desc->heads > INT32_MAX) return KERN_EINVAL;
    const int ntasks = nqb * desc->heads;
    const int nw = flash_workers(desc, ntasks);
    struct flash_fwd_job job = {.ds = desc, .q = q, .k = k, .v = v, .o = o, .lse = lse, .nqb = nqb};
    job.scratch = flash_scratch_alloc(nw, (size_t)FWD_BR * FWD_BC + 2 * FWD_BR);
    if (!job.scratch) return KERN_ENOMEM;
    if (nw > 1) kern_blas_serial_enter();
    flash_pool_run(nw, ntasks, flash_fwd_task, &job);
    if (nw > 1) kern_blas_serial_leave();
    flash_scratch_free(job.scratch, nw);
    return KERN_OK;
}

/* -------------------------------------------------------------- backward */

#define BWD_LOCKS 64 /* dQ row-block locks, striped: contention is rare */

struct flash_bwd_job {
    const struct kern_attn_desc *ds;
    const float *q, *k, *v, *lse, *dout;
    float *dq, *dk, *dv;
    const float *D;  /* rowsum(dO o O) [heads][n_q] */
    int nkb;         /* key blocks per kv head */
    float **scratch; /* per worker: P [BWD_BR][BWD_BC], dS [BWD_BR][BWD_BC], dQ part [BWD_BR][d] */
    pthread_mutex_t locks[BWD_LOCKS];
};

/* One (kv head, key block): owns its dK, dV rows outright (accumulated with
 * beta = 1 straight into the caller's buffers) and walks every query block
 * of every query head in the group that sees any of its keys. dQ rows are
 * shared between tasks, so each dQ part is summed under a striped lock. */
static void flash_bwd_task(void *arg, int worker, int task)
{
    struct flash_bwd_job *job = arg;
    const struct kern_attn_desc *ds = job->ds;
    const int d = ds->d, n_q = ds->n_q, group = ds->heads / ds->kv_heads;
    const int hk = task % ds->kv_heads, kb = task / ds->kv_heads; /* early keys: most rows */
    const int j0 = kb * BWD_BC, cols = ds->n_kv - j0 < BWD_BC ? ds->n_kv - j0 : BWD_BC;
    const float *kj = job->k + ((size_t)hk * ds->n_kv + j0) * d;
    const float *vj = job->v + ((size_t)hk * ds->n_kv + j0) * d;
    float *dkj = job->dk + ((size_t)hk * ds->n_kv + j0) * d;
    float *dvj = job->dv + ((size_t)hk * ds->n_kv + j0) * d;
    float *P = job->scratch[worker], *dS = P + BWD_BR * BWD_BC, *dqp = dS + BWD_BR * BWD_BC;
    const float qk_scale = ds->scale * LOG2E;

    const int i_first = kern_first_row_seeing(ds, j0);           /* sees key j0 */
    const int i_all = kern_first_row_seeing(ds, j0 + cols - 1);  /* sees the whole block */
    if (i_first >= n_q) return; /* hidden from every row: adds nothing */
    for (int h = hk * group; h < (hk + 1) * group; h++) {
        for (int i0 = i_first - i_first % BWD_BR; i0 < n_q; i0 += BWD_BR) {
            const int rows = n_q - i0 < BWD_BR ? n_q - i0 : BWD_BR;
            const size_t row0 = (size_t)h * n_q + i0;
            const float *qi = job->q + row0 * d, *doi = job->dout + row0 * d;
            const float *lse = job->lse + row0, *D = job->D + row0;
            const int masked = i0 < i_all;

            /* P = 2^(S log2e - lse log2e); a row with lse = -inf saw no key
             * and must get P = 0, which bias = +inf delivers through the
             * exp2 underflow path. */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, cols, d, qk_scale, qi, d, kj, d,
                        0.0f, P, BWD_BC);
            for (int r = 0; r < rows; r++) {
                float *pr = P + (size_t)r * BWD_BC;
                const float bias = lse[r] == -INFINITY ? INFINITY : lse[r] * LOG2E;
                int nc = cols;
                if (masked) {
                    nc = kern_keys_visible(ds, i0 + r) - j0;
                    nc = nc < 0 ? 0 : nc > cols ? cols : nc;
                }
                flash_exp2_row(pr, nc, bias);
                for (int c = nc; c < cols; c++) pr[c] = 0.0f;
            }
            /* dV_j += P^T dO_i */
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, cols, d, rows, 1.0f, P, BWD_BC, doi, d,
                        1.0f, dvj, d);
            /* dS = P o (dO_i V_j^T - D_i) */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, cols, d, 1.0f, doi, d, vj, d, 0.0f,
                        dS, BWD_BC);
            for (int r = 0; r < rows; r++) {
                float *sr = dS + (size_t)r * BWD_BC;
                const float *pr = P + (size_t)r * BWD_BC;
                const float Dr = D[r];
                for (int c = 0; c < cols; c++) sr[c] = pr[c] * (sr[c] - Dr);
            }
            /* dK_j += scale dS^T Q_i */
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, cols, d, rows, ds->scale, dS, BWD_BC, qi,
                        d, 1.0f, dkj, d);
            /* dQ_i += scale dS K_j, computed privately, added under the lock */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, d, cols, ds->scale, dS, BWD_BC,
                        kj, d, 0.0f, dqp, d);
            float *dqi = job->dq + row0 * d;
            pthread_mutex_t *lock = &job->locks[(row0 / BWD_BR) % BWD_LOCKS];
            pthread_mutex_lock(lock);
            for (size_t e = 0; e < (size_t)rows * d; e++) dqi[e] += dqp[e];
            pthread_mutex_unlock(lock);
        }
    }
}

kern_status kern_attn_flash_bwd(const struct kern_attn_desc *desc,
                                const float *q, const float *k, const float *v,
                                const float *o, const float *lse, const float *dout,
                                float *dq, float *dk, float *dv)
{
    kern_status st = kern_desc_check(desc);
    if (st != KERN_OK) return st;
    if (!kern_bwd_bufs_ok(desc, q, k, v, o, lse, dout, dq, dk, dv)) return KERN_EINVAL;
    if (desc->n_q == 0 || desc->n_kv == 0) return KERN_OK; /* nothing to add */

    const int nkb = (desc->n_kv + BWD_BC - 1) / BWD_BC;
    if ((int64_t)nkb * desc->kv_heads > INT32_MAX) return KERN_EINVAL;
    const int ntasks = nkb * desc->kv_heads;
    const int nw = flash_workers(desc, ntasks);
    const size_t rows = (size_t)desc->heads * desc->n_q;
    const int d = desc->d;

    struct flash_bwd_job *job = calloc(1, sizeof *job);
    float *D = malloc(rows * sizeof *D);
    if (!job || !D) {
        free(job);
        free(D);
        return KERN_ENOMEM;
    }
    /* D_i = rowsum(dO o O): O(n d) work, in float64 because dP - D cancels
     * to the size of the gradient and D's error passes straight into it. */
    for (size_t r = 0; r < rows; r++) {
        double s = 0.0;
        for (int c = 0; c < d; c++) s += (double)dout[r * d + c] * o[r * d + c];
        D[r] = (float)s;
    }
    *job = (struct flash_bwd_job){.ds = desc, .q = q, .k = k, .v = v, .lse = lse, .dout = dout,
                                  .dq = dq, .dk = dk, .dv = dv, .D = D, .nkb = nkb};
    job->scratch = flash_scratch_alloc(nw, 2 * (size_t)BWD_BR * BWD_BC + (size_t)BWD_BR * d);
    if (!job->scratch) {
        free(job);
        free(D);
        return KERN_ENOMEM;
    }
    for (int i = 0; i < BWD_LOCKS; i++) pthread_mutex_init(&job->locks[i], NULL);
    if (nw > 1) kern_blas_serial_enter();
    flash_pool_run(nw, ntasks, flash_bwd_task, job);
    if (nw > 1) kern_blas_serial_leave();
    for (int i = 0; i < BWD_LOCKS; i++) pthread_mutex_destroy(&job->locks[i]);
    flash_scratch_free(job->scratch, nw);
    free(job);
    free(D);
    return KERN_OK;
}

const struct kern_attn_impl kern_attn_impl_flash = {
    .name = "flash",
    .summary = "FlashAttention-2 blocking on OpenBLAS SGEMM, float32, one task per worker",
    .fwd = kern_attn_flash_fwd,
    .bwd = kern_attn_flash_bwd,
};
