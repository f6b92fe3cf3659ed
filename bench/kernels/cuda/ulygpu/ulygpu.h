/* ulygpu.h: internals of ulygpu, the standalone GPU check and benchmark of
 * the CUDA attention kernels (no MPI). Sections, in order:
 *   device      what the GPU is; exit 77 when there is none
 *   rates       cuBLAS bf16/fp16 GEMM rate and device copy bandwidth, measured now
 *   checks      flash and cuBLAS-reference attention against the float64 CPU
 *               reference (small shapes) and against each other (large),
 *               ring blocks + LSE merge against one call; fresh random
 *               inputs, outputs poisoned with NaN, per-dtype tolerances
 *   bench       attention fwd/bwd TFLOP/s (CUDA events, warm-up, median)
 *               against the measured GEMM rate, every forward variant
 *   plans       single-GPU plans (P = 1; Ulysses and ring per-rank compute
 *               at scaled sizes) built by libulysim on the dgx-h200 preset:
 *               each attention and GEMM op run on the GPU, measured against
 *               uly_plan_price's op_time_s
 *   summary     a short table, last
 * and a trace of JSON lines (traces/gpu/README.md). */
#ifndef ULYGPU_H
#define ULYGPU_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kern_cuda.h"
#include "ulysim.h"

#define UG_EXIT_FAIL 1
#define UG_EXIT_USAGE 2
#define UG_EXIT_SKIP 77

typedef struct ug_opts {
    int quick;          /* small sizes: a smoke run (ctest) */
    uint64_t seed;
    int seed_given;
    const char *trace;  /* JSON-lines file; NULL = none */
    const char *gemm_table; /* CSV of the cuBLAS GEMM shape sweep (ulysim calibrate --gemms); NULL = no sweep */
    int warmup, reps;
    double budget_s;    /* whole run; later sections shrink or skip past it */
    const char *cluster, *model;
    int check_presets, self_test_host;
    int no_checks, no_bench, no_plans;
} ug_opts;

/* ----------------------------------------------------------- trace */

/* A JSON object being built: ug_j_* append "key": value pairs. */
typedef struct ug_json {
    char *buf;
    size_t len, cap;
    int first;
} ug_json;

void ug_j_begin(ug_json *j);
void ug_j_str(ug_json *j, const char *key, const char *v);
void ug_j_num(ug_json *j, const char *key, double v); /* NaN/inf -> null */
void ug_j_int(ug_json *j, const char *key, long long v);
void ug_j_bool(ug_json *j, const char *key, int v);
void ug_j_raw(ug_json *j, const char *key, const char *json); /* a value already in JSON */
const char *ug_j_end(ug_json *j);                             /* closes; the text stays valid until ug_j_free */
void ug_j_free(ug_json *j);
void ug_json_escape(const char *s, char *out, size_t n);

int ug_trace_open(const char *path);
void ug_trace_line(ug_json *j); /* writes and frees */
void ug_trace_close(int ok);    /* renames FILE.tmp.<pid> to FILE (ok) or FILE.failed */

/* ----------------------------------------------------------- context */

typedef struct ug_stats {
    double median_ms, min_ms, max_ms;
    int reps;
} ug_stats;

#define UG_MAX_SUMMARY 96

typedef struct ug_ctx {
    ug_opts o;
    int have_gpu;
    struct kern_cuda_device_info dev;
    kern_cuda_blas *blas;
    kern_cuda_timer *timer;
    double t0;
    double gemm_tflops[2];   /* measured cuBLAS rate: [0] bf16, [1] fp16 */
    double copy_GBps;        /* device copy, bytes read + written per second */
    int checks, failures;
    uly_model model;
    uly_cluster cluster;
    char model_src[320], cluster_src[320];
    int best_variant;        /* fastest forward variant at the target size (-1: not measured) */
    /* attention at the target shape (bf16, causal, d 128): efficiency against
     * the preset's peak, forward, backward and both; x = kv length (0: not measured) */
    double eff_fwd, eff_bwd, eff_fb, eff_x;
    char summary[UG_MAX_SUMMARY][160];
    int n_summary;
} ug_ctx;

/* util.c */
double ug_now(void);
double ug_elapsed(const ug_ctx *c);
int ug_over_budget(const ug_ctx *c, double fraction); /* past fraction of the budget */
void ug_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
#define UG_CK(call)                                                                                   \
    do {                                                                                              \
        kern_cuda_status ug_st_ = (call);                                                             \
        if (ug_st_ != KERN_CUDA_OK)                                                                   \
            ug_die("%s failed: %s: %s", #call, kern_cuda_status_str(ug_st_), kern_cuda_last_error()); \
    } while (0)
void *ug_dalloc(size_t bytes);      /* device; dies on failure */
void ug_dfree(void *p);
void *ug_halloc(size_t bytes);      /* host, zeroed; dies on failure */
void ug_rng_seed(uint64_t s);
double ug_normal(void);
/* n normal(0, 1) values rounded to dtype: bits in h16, the rounded values in f */
void ug_fill_normal(uint16_t *h16, float *f, size_t n, kern_cuda_dtype t);
void ug_sort(double *v, int n);
typedef kern_cuda_status (*ug_run_fn)(void *arg);
/* warm-up runs, then reps runs each between CUDA events; median/min/max in ms */
void ug_time(ug_ctx *c, ug_run_fn fn, void *arg, int warmup, int reps, ug_stats *out);
void ug_summary(ug_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* max|x - ref| / max|ref| and ||x - ref||_F / ||ref||_F; NaN in x -> inf;
 * matching infinities are skipped, mismatched ones give inf */
void ug_rel_err(const float *x, const float *ref, size_t n, double *max_rel, double *fro_rel, size_t *nan_count);
/* records one comparison: prints it, counts it, writes a trace line */
int ug_check(ug_ctx *c, const char *group, const char *what, const char *tensor, kern_cuda_dtype t, double max_rel,
             double fro_rel, size_t nans, double tol, const char *tol_reason);

/* presets.c: the cluster and model the plans use */
int ug_presets_load(ug_ctx *c);     /* 0, or 2 with a message */
int ug_presets_check(void);         /* --check-presets: embedded == loaded; exit status */
void ug_presets_json(const ug_ctx *c, ug_json *j);

/* sections */
void ug_rates(ug_ctx *c);
void ug_gemm_sweep(ug_ctx *c); /* --gemm-table FILE: cuBLAS bf16 GEMMs over shapes, for ulysim calibrate --gemms */
void ug_checks(ug_ctx *c);
void ug_bench(ug_ctx *c);
void ug_plans(ug_ctx *c);
int ug_self_test_host(ug_ctx *c);   /* --self-test-host: no GPU; exit status */
void ug_preset_updates(ug_ctx *c);  /* what the measurements say the preset's efficiencies should be */

/* plans.c, for the self-test: the m, n, k and count of the GEMMs a plan op
 * stands for (dgrad + wgrad for backward ops); 0 if the op is unknown */
typedef struct ug_gemm_shape {
    int n_gemms;
    int64_t m[2], n[2], k[2];
} ug_gemm_shape;
int ug_gemm_shape_of(const uly_model *m, const uly_workload *w, const uly_plan *p, const uly_op *op,
                     ug_gemm_shape *out);

/* Tolerances, per dtype, with the reason written next to each (checks.c). */
double ug_tol_o(kern_cuda_dtype t);
double ug_tol_grad(kern_cuda_dtype t);
const char *ug_tol_o_reason(kern_cuda_dtype t);
const char *ug_tol_grad_reason(kern_cuda_dtype t);

#endif /* ULYGPU_H */
