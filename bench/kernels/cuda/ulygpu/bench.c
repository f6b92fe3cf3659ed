/* bench.c: the GPU's measured ceilings (cuBLAS GEMM rate, device copy
 * bandwidth) and the attention benchmarks against them.
 *
 * FLOPs counted: forward 4 d per (query, visible key) pair, backward 2.5x
 * the forward (5 products of the same size as the forward's 2), the
 * FlashAttention convention; causal counts only the visible pairs (about
 * half). The cuBLAS reference computes every score and is credited with the
 * same useful FLOPs, so its TFLOP/s compare directly. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ulygpu.h"

/* visible (row, key) pairs of one head */
static double visible_pairs(int n_q, int n_kv, int causal, long long q_off, long long kv_off)
{
    if (!causal) return (double)n_q * (double)n_kv;
    double s = 0;
    for (int i = 0; i < n_q; i++) {
        long long last = q_off + i - kv_off;
        if (last < 0) continue;
        s += last >= n_kv ? n_kv : (double)(last + 1);
    }
    return s;
}

/* ------------------------------------------------------------ rates */

typedef struct gemm_arg {
    kern_cuda_blas *b;
    int m, n, k;
    const void *a, *bm;
    void *c;
    kern_cuda_dtype t;
} gemm_arg;

static kern_cuda_status run_gemm(void *p)
{
    gemm_arg *g = p;
    return kern_cuda_gemm(g->b, false, false, g->m, g->n, g->k, 1.f, g->a, g->k, g->bm, g->n, g->t, 0.f, g->c, g->n,
                          g->t);
}

typedef struct copy_arg {
    void *dst;
    const void *src;
    size_t bytes;
} copy_arg;

static kern_cuda_status run_copy(void *p)
{
    copy_arg *a = p;
    return kern_cuda_d2d(a->dst, a->src, a->bytes, NULL);
}

/* The GEMM shape sweep: cuBLAS bf16 GEMMs (random inputs, float32
 * accumulation, as the plans' GEMMs run) over m (tokens) x n x k (a layer's
 * widths), from a tile-quantized small GEMM to a large one, written as the
 * CSV `ulysim calibrate --gemms` fits the GEMM model's f and L to. Shapes of
 * every size matter: f is set by the large ones, L by the small ones. */
void ug_gemm_sweep(ug_ctx *c)
{
    static const int ms[] = {512, 2048, 8192, 16384}, nks[] = {1024, 4096, 14336};
    const int nm = c->o.quick ? 2 : 4, nk = c->o.quick ? 2 : 3;
    printf("\n== GEMM shapes (cuBLAS bf16, for ulysim calibrate --gemms %s)\n", c->o.gemm_table);
    FILE *f = fopen(c->o.gemm_table, "w");
    if (!f) {
        printf("  cannot write %s: skipped\n", c->o.gemm_table);
        return;
    }
    fprintf(f, "# cuBLAS bf16 GEMMs (row-major (m x k)(k x n), float32 accumulation, random inputs) on %s, timed by "
               "ulygpu between CUDA events: median of %d after %d warm-up runs; seed %llu\n",
            c->dev.name, c->o.quick ? 5 : 10, 3, (unsigned long long)c->o.seed);
    fprintf(f, "gpu,dtype,batch,m,n,k,median_ms,min_ms,max_ms,tflops\n");
    const int mmax = ms[nm - 1], kmax = nks[nk - 1];
    const size_t ea = (size_t)mmax * kmax, eb = (size_t)kmax * kmax, ec = (size_t)mmax * kmax;
    gemm_arg g = {c->blas, 0, 0, 0, ug_dalloc(ea * 2), ug_dalloc(eb * 2), ug_dalloc(ec * 2), KERN_CUDA_BF16};
    UG_CK(kern_cuda_fill_uniform((void *)g.a, KERN_CUDA_BF16, ea, c->o.seed + 21, -1.f, 1.f, NULL));
    UG_CK(kern_cuda_fill_uniform((void *)g.bm, KERN_CUDA_BF16, eb, c->o.seed + 22, -1.f, 1.f, NULL));
    int done = 0;
    for (int i = 0; i < nm; i++)
        for (int j = 0; j < nk; j++)
            for (int l = 0; l < nk; l++) {
                if (ug_over_budget(c, 0.2)) {
                    printf("  skip the other shapes: past 20%% of the time budget\n");
                    goto out;
                }
                g.m = ms[i], g.n = nks[j], g.k = nks[l];
                ug_stats st;
                ug_time(c, run_gemm, &g, 3, c->o.quick ? 5 : 10, &st);
                const double tf = 2.0 * g.m * (double)g.n * g.k / (st.median_ms * 1e-3) / 1e12;
                fprintf(f, "%s,bf16,1,%d,%d,%d,%.6f,%.6f,%.6f,%.2f\n", c->dev.name, g.m, g.n, g.k, st.median_ms,
                        st.min_ms, st.max_ms, tf);
                printf("  %6d x %6d x %6d: median %9.4f ms = %6.1f TFLOP/s\n", g.m, g.n, g.k, st.median_ms, tf);
                done++;
            }
out:
    printf("  %d shapes written to %s\n", done, c->o.gemm_table);
    if (fclose(f) != 0) printf("  WARNING: writing %s failed\n", c->o.gemm_table);
    ug_dfree((void *)g.a);
    ug_dfree((void *)g.bm);
    ug_dfree(g.c);
}

void ug_rates(ug_ctx *c)
{
    printf("\n== rates measured now (the ceilings the attention numbers are compared with)\n");
    const int n = c->o.quick ? 4096 : 8192;
    for (int ti = 0; ti < 2; ti++) {
        const kern_cuda_dtype t = ti ? KERN_CUDA_FP16 : KERN_CUDA_BF16;
        const size_t e = (size_t)n * n;
        gemm_arg g = {c->blas, n, n, n, ug_dalloc(e * 2), ug_dalloc(e * 2), ug_dalloc(e * 2), t};
        UG_CK(kern_cuda_fill_uniform((void *)g.a, t, e, c->o.seed + 11, -1.f, 1.f, NULL)); /* random, not zeros */
        UG_CK(kern_cuda_fill_uniform((void *)g.bm, t, e, c->o.seed + 12, -1.f, 1.f, NULL));
        ug_stats st;
        ug_time(c, run_gemm, &g, 3, c->o.quick ? 5 : 10, &st);
        const double fl = 2.0 * n * (double)n * n;
        c->gemm_tflops[ti] = fl / (st.median_ms * 1e-3) / 1e12;
        printf("  cuBLAS GEMM %s %dx%dx%d (C %s, float32 accumulation): median %.3f ms (min %.3f, max %.3f, %d reps) "
               "= %.1f TFLOP/s\n",
               kern_cuda_dtype_name(t), n, n, n, kern_cuda_dtype_name(t), st.median_ms, st.min_ms, st.max_ms, st.reps,
               c->gemm_tflops[ti]);
        ug_json j;
        ug_j_begin(&j);
        ug_j_str(&j, "type", "rate");
        ug_j_str(&j, "what", "cublas_gemm");
        ug_j_str(&j, "dtype", kern_cuda_dtype_name(t));
        ug_j_int(&j, "m", n);
        ug_j_int(&j, "n", n);
        ug_j_int(&j, "k", n);
        ug_j_num(&j, "median_ms", st.median_ms);
        ug_j_num(&j, "min_ms", st.min_ms);
        ug_j_num(&j, "max_ms", st.max_ms);
        ug_j_int(&j, "reps", st.reps);
        ug_j_num(&j, "tflops", c->gemm_tflops[ti]);
        ug_j_num(&j, "fraction_of_preset_peak", c->gemm_tflops[ti] * 1e12 / c->cluster.gpu.peak_flops[ULY_BF16]);
        ug_trace_line(&j);
        ug_dfree((void *)g.a);
        ug_dfree((void *)g.bm);
        ug_dfree(g.c);
    }
    const size_t bytes = (size_t)(c->o.quick ? 512 : 2048) << 20;
    copy_arg cp = {ug_dalloc(bytes), ug_dalloc(bytes), bytes};
    UG_CK(kern_cuda_fill_uniform((void *)cp.src, KERN_CUDA_F32, bytes / 4, c->o.seed + 13, -1.f, 1.f, NULL));
    ug_stats st;
    ug_time(c, run_copy, &cp, 2, c->o.quick ? 5 : 10, &st);
    c->copy_GBps = 2.0 * (double)bytes / (st.median_ms * 1e-3) / 1e9;
    printf("  device copy %zu MiB: median %.3f ms = %.0f GB/s counting bytes read and written\n", bytes >> 20,
           st.median_ms, c->copy_GBps);
    ug_json j;
    ug_j_begin(&j);
    ug_j_str(&j, "type", "rate");
    ug_j_str(&j, "what", "device_copy");
    ug_j_int(&j, "bytes", (long long)bytes);
    ug_j_num(&j, "median_ms", st.median_ms);
    ug_j_num(&j, "GBps_read_plus_write", c->copy_GBps);
    ug_j_num(&j, "fraction_of_preset_hbm_bw", c->copy_GBps * 1e9 / c->cluster.gpu.hbm_bw_Bps);
    ug_trace_line(&j);
    ug_dfree(cp.dst);
    ug_dfree((void *)cp.src);
    ug_summary(c, "cuBLAS GEMM    bf16 %.1f TFLOP/s, fp16 %.1f TFLOP/s (%dx%dx%d); copy %.0f GB/s", c->gemm_tflops[0],
               c->gemm_tflops[1], n, n, n, c->copy_GBps);
}

/* ------------------------------------------------------------ attention */

typedef struct attn_arg {
    ug_ctx *c;
    struct kern_cuda_attn_desc ds;
    void *q, *k, *v, *o, *dout;
    float *lse, *o32, *dq, *dk, *dv, *dr;
    void *ws;
    size_t ws_bytes;
    int variant;
} attn_arg;

static kern_cuda_status run_fwd(void *p)
{
    attn_arg *a = p;
    return kern_cuda_attn_fwd_variant(&a->ds, a->q, a->k, a->v, a->o, a->lse, a->variant, NULL);
}

static kern_cuda_status run_bwd(void *p)
{
    attn_arg *a = p;
    return kern_cuda_attn_bwd(&a->ds, a->q, a->k, a->v, a->o, a->lse, a->dout, a->dq, a->dk, a->dv, a->dr, NULL);
}

static kern_cuda_status run_ref_fwd(void *p)
{
    attn_arg *a = p;
    return kern_cuda_attn_ref_fwd(a->c->blas, &a->ds, a->q, a->k, a->v, a->o32, a->lse, a->ws, a->ws_bytes);
}

static kern_cuda_status run_ref_bwd(void *p)
{
    attn_arg *a = p;
    return kern_cuda_attn_ref_bwd(a->c->blas, &a->ds, a->q, a->k, a->v, a->o, a->lse, a->dout, a->dq, a->dk, a->dv,
                                  a->ws, a->ws_bytes);
}

static void bench_line(ug_ctx *c, const char *kernel, const char *phase, const struct kern_cuda_attn_desc *ds,
                       const ug_stats *st, double flops, int target)
{
    const double tf = flops / (st->median_ms * 1e-3) / 1e12;
    const int ti = ds->dtype == KERN_CUDA_FP16 ? 1 : 0;
    const double frac = c->gemm_tflops[ti] > 0 ? tf / c->gemm_tflops[ti] : NAN;
    printf("  %-10s %-3s h%d/%d N%-6d d%-3d %-6s %s: median %8.3f ms (min %.3f max %.3f) %6.1f TFLOP/s = %5.1f%% of "
           "cuBLAS %s GEMM\n",
           kernel, phase, ds->heads, ds->kv_heads, ds->n_q, ds->d, ds->causal ? "causal" : "full",
           kern_cuda_dtype_name(ds->dtype), st->median_ms, st->min_ms, st->max_ms, tf, 100 * frac,
           kern_cuda_dtype_name(ds->dtype));
    ug_json j;
    ug_j_begin(&j);
    ug_j_str(&j, "type", "bench");
    ug_j_str(&j, "kernel", kernel);
    ug_j_str(&j, "phase", phase);
    ug_j_int(&j, "heads", ds->heads);
    ug_j_int(&j, "kv_heads", ds->kv_heads);
    ug_j_int(&j, "n_q", ds->n_q);
    ug_j_int(&j, "n_kv", ds->n_kv);
    ug_j_int(&j, "d", ds->d);
    ug_j_bool(&j, "causal", ds->causal);
    ug_j_str(&j, "dtype", kern_cuda_dtype_name(ds->dtype));
    ug_j_num(&j, "flops", flops);
    ug_j_num(&j, "median_ms", st->median_ms);
    ug_j_num(&j, "min_ms", st->min_ms);
    ug_j_num(&j, "max_ms", st->max_ms);
    ug_j_int(&j, "reps", st->reps);
    ug_j_num(&j, "tflops", tf);
    ug_j_num(&j, "fraction_of_cublas_gemm", frac);
    if (target) ug_j_num(&j, "target_fraction", 0.40);
    ug_trace_line(&j);
}

/* one shape: every forward variant, the flash backward, the cuBLAS reference */
static void bench_shape(ug_ctx *c, int heads, int kvh, int N, int d, int causal, kern_cuda_dtype t, int target,
                        int do_bwd)
{
    attn_arg a;
    memset(&a, 0, sizeof a);
    a.c = c;
    a.ds.heads = heads;
    a.ds.kv_heads = kvh;
    a.ds.n_q = a.ds.n_kv = N;
    a.ds.d = d;
    a.ds.scale = (float)(1.0 / sqrt((double)d));
    a.ds.causal = causal != 0;
    a.ds.dtype = t;
    const size_t nq = (size_t)heads * N * d, nkv = (size_t)kvh * N * d, rows = (size_t)heads * N;
    a.q = ug_dalloc(nq * 2);
    a.k = ug_dalloc(nkv * 2);
    a.v = ug_dalloc(nkv * 2);
    a.o = ug_dalloc(nq * 2);
    a.dout = ug_dalloc(nq * 2);
    a.lse = ug_dalloc(rows * 4);
    const uint64_t s = c->o.seed * 1000003 + (uint64_t)N * 7 + (uint64_t)d;
    UG_CK(kern_cuda_fill_uniform(a.q, t, nq, s + 1, -1.7f, 1.7f, NULL));
    UG_CK(kern_cuda_fill_uniform(a.k, t, nkv, s + 2, -1.7f, 1.7f, NULL));
    UG_CK(kern_cuda_fill_uniform(a.v, t, nkv, s + 3, -1.7f, 1.7f, NULL));
    UG_CK(kern_cuda_fill_uniform(a.dout, t, nq, s + 4, -1.7f, 1.7f, NULL));
    const double pairs = visible_pairs(N, N, causal, 0, 0) * heads;
    const double ffl = 4.0 * d * pairs, bfl = 2.5 * ffl;
    const int reps = c->o.reps, warm = c->o.warmup;
    ug_stats st;
    double best_ms = INFINITY, v0_ms = NAN;
    int best = 0;
    for (int var = 0; var < kern_cuda_attn_fwd_variants(); var++) {
        a.variant = var;
        ug_time(c, run_fwd, &a, warm, reps, &st);
        char name[32];
        snprintf(name, sizeof name, "flash-v%d", var);
        bench_line(c, name, "fwd", &a.ds, &st, ffl, target);
        if (var == 0) v0_ms = st.median_ms;
        if (st.median_ms < best_ms) {
            best_ms = st.median_ms;
            best = var;
        }
        if (target && var == 0) {
            const double tf = ffl / (st.median_ms * 1e-3) / 1e12;
            const double frac = tf / c->gemm_tflops[t == KERN_CUDA_FP16];
            ug_summary(c, "flash fwd v0   N%d d%d %s causal: %.1f TFLOP/s = %.1f%% of cuBLAS GEMM (target 40%%: %s)",
                       N, d, kern_cuda_dtype_name(t), tf, 100 * frac, frac >= 0.40 ? "MET" : "NOT MET");
        }
    }
    if (target) {
        c->best_variant = best;
        const double tf = ffl / (best_ms * 1e-3) / 1e12;
        char vn[160];
        printf("  fastest forward variant here: %s\n", kern_cuda_attn_fwd_variant_name(d, best, vn, sizeof vn));
        ug_summary(c, "flash fwd best v%d: %.1f TFLOP/s = %.1f%% of cuBLAS GEMM", best, tf,
                   100 * tf / c->gemm_tflops[t == KERN_CUDA_FP16]);
    }
    if (do_bwd) {
        a.variant = 0;
        UG_CK(run_fwd(&a));
        a.dq = ug_dalloc(nq * 4);
        a.dk = ug_dalloc(nkv * 4);
        a.dv = ug_dalloc(nkv * 4);
        a.dr = ug_dalloc(kern_cuda_attn_bwd_workspace(&a.ds));
        UG_CK(kern_cuda_memset0(a.dq, nq * 4, NULL));
        UG_CK(kern_cuda_memset0(a.dk, nkv * 4, NULL));
        UG_CK(kern_cuda_memset0(a.dv, nkv * 4, NULL));
        ug_time(c, run_bwd, &a, warm, reps, &st); /* accumulates into dq.. each rep: fine for timing */
        bench_line(c, "flash", "bwd", &a.ds, &st, bfl, 0);
        if (target) {
            const double peak = c->cluster.gpu.peak_flops[t == KERN_CUDA_FP16 ? ULY_FP16 : ULY_BF16];
            c->eff_x = N;
            /* the default variant: what kern_cuda_attn_fwd (and so an executor) runs */
            c->eff_fwd = ffl / (v0_ms * 1e-3) / peak;
            c->eff_bwd = bfl / (st.median_ms * 1e-3) / peak;
            c->eff_fb = (ffl + bfl) / ((v0_ms + st.median_ms) * 1e-3) / peak;
        }
        if (target) {
            const double tf = bfl / (st.median_ms * 1e-3) / 1e12;
            ug_summary(c, "flash bwd      N%d d%d %s causal: %.1f TFLOP/s = %.1f%% of cuBLAS GEMM", N, d,
                       kern_cuda_dtype_name(t), tf, 100 * tf / c->gemm_tflops[t == KERN_CUDA_FP16]);
        }
    }
    /* the cuBLAS reference, when its scores fit in half the free memory */
    size_t wf = 0, wb = 0, mn = 0, free_b = 0, total_b = 0;
    kern_cuda_attn_ref_workspace(&a.ds, do_bwd != 0, &mn, &wb);
    kern_cuda_attn_ref_workspace(&a.ds, false, NULL, &wf);
    UG_CK(kern_cuda_mem_get_info(&free_b, &total_b));
    size_t want = wb > wf ? wb : wf;
    if (want > free_b / 2) want = free_b / 2;
    if (want >= mn) {
        a.ws_bytes = want;
        a.ws = ug_dalloc(want);
        a.o32 = ug_dalloc(nq * 4);
        ug_time(c, run_ref_fwd, &a, 1, reps < 5 ? reps : 5, &st);
        bench_line(c, "cublas-ref", "fwd", &a.ds, &st, ffl, 0);
        if (target) {
            const double tf = ffl / (st.median_ms * 1e-3) / 1e12;
            ug_summary(c, "cuBLAS ref fwd N%d d%d: %.1f TFLOP/s (unfused: scores in memory)", N, d, tf);
        }
        if (do_bwd) {
            ug_time(c, run_ref_bwd, &a, 1, reps < 5 ? reps : 5, &st);
            bench_line(c, "cublas-ref", "bwd", &a.ds, &st, bfl, 0);
        }
    } else {
        printf("  cublas-ref  skipped at N%d: one kv head's scores need %.1f GiB, %.1f GiB free\n", N,
               (double)mn / 1073741824.0, (double)free_b / 1073741824.0);
    }
    void *p[] = {a.q, a.k, a.v, a.o, a.dout, a.lse, a.o32, a.dq, a.dk, a.dv, a.dr, a.ws};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        if (p[i]) ug_dfree(p[i]);
}

void ug_bench(ug_ctx *c)
{
    printf("\n== attention benchmarks (CUDA events; %d warm-up, median of %d; FLOPs: fwd 4d per visible pair, bwd "
           "2.5x)\n",
           c->o.warmup, c->o.reps);
    c->best_variant = -1;
    const int N = c->o.quick ? 2048 : 16384;
    /* the target: forward, N = 16K, d = 128, bf16, causal, >= 40% of the measured cuBLAS bf16 GEMM rate */
    bench_shape(c, 16, 16, N, 128, 1, KERN_CUDA_BF16, 1, 1);
    if (ug_over_budget(c, 0.55)) {
        printf("  skip the other shapes: past 55%% of the time budget\n");
        return;
    }
    bench_shape(c, 16, 16, N, 128, 0, KERN_CUDA_BF16, 0, 1);
    bench_shape(c, 32, 32, N, 64, 1, KERN_CUDA_BF16, 0, 0);
    bench_shape(c, 16, 16, N, 128, 1, KERN_CUDA_FP16, 0, 0);
    bench_shape(c, 32, 8, N / 4, 128, 1, KERN_CUDA_BF16, 0, 0);
}
