/* main.c: ulygpu — checks and benchmarks the CUDA attention kernels on one
 * GPU and compares the model's predicted compute time with what the GPU
 * does. No MPI. scripts/gpu-check.sh builds and runs it; ctest runs
 * `--quick` (skipped without a GPU), `--self-test-host` and
 * `--check-presets` (no GPU needed). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ulygpu.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ulygpu [options]\n"
            "  --quick            small sizes (a smoke run, about a minute)\n"
            "  --seed N           inputs from seed N (default: from the clock; printed either way)\n"
            "  --trace FILE       write the JSON-lines trace (FILE.tmp.<pid>, renamed when complete;\n"
            "                     FILE.failed when a check failed)\n"
            "  --gemm-table FILE  time cuBLAS bf16 GEMMs over a grid of shapes and write them as a CSV that\n"
            "                     ulysim calibrate --gemms reads (m, n, k from 512 to 16384; --quick: 4 shapes)\n"
            "  --warmup N         warm-up runs before timing (default 2)\n"
            "  --reps N           timed runs, median reported (default 7; --quick 3)\n"
            "  --budget-s S       time budget: later sections shrink or skip past it (default 420)\n"
            "  --cluster NAME     cluster preset for the plans (default dgx-h200)\n"
            "  --model NAME       model preset for the plans (default llama3-8b)\n"
            "  --no-checks, --no-bench, --no-plans   leave a section out\n"
            "  --check-presets    compare the embedded presets with the preset files (no GPU)\n"
            "  --self-test-host   test the host-side parts: conversions, trace, plan op shapes (no GPU)\n"
            "exit status: 0 all checks passed; 1 a check or a GPU call failed; 2 bad usage; 77 no GPU\n");
}

static int parse_int(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    const long long v = strtoll(s, &end, 0);
    if (!*s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, ug_opts *o)
{
    memset(o, 0, sizeof *o);
    o->warmup = 2;
    o->reps = -1;
    o->budget_s = 420;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        long long x;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--quick")) {
            o->quick = 1;
        } else if (!strcmp(a, "--seed") && v) {
            char *end;
            o->seed = strtoull(v, &end, 0);
            if (!*v || *end) goto bad_value;
            o->seed_given = 1;
            i++;
        } else if (!strcmp(a, "--trace") && v) {
            o->trace = v;
            i++;
        } else if (!strcmp(a, "--gemm-table") && v) {
            o->gemm_table = v;
            i++;
        } else if (!strcmp(a, "--warmup") && v) {
            if (parse_int(v, 0, 1000, &x)) goto bad_value;
            o->warmup = (int)x;
            i++;
        } else if (!strcmp(a, "--reps") && v) {
            if (parse_int(v, 1, 1000, &x)) goto bad_value;
            o->reps = (int)x;
            i++;
        } else if (!strcmp(a, "--budget-s") && v) {
            char *end;
            o->budget_s = strtod(v, &end);
            if (!*v || *end || !(o->budget_s > 0)) goto bad_value;
            i++;
        } else if (!strcmp(a, "--cluster") && v) {
            o->cluster = v;
            i++;
        } else if (!strcmp(a, "--model") && v) {
            o->model = v;
            i++;
        } else if (!strcmp(a, "--no-checks")) {
            o->no_checks = 1;
        } else if (!strcmp(a, "--no-bench")) {
            o->no_bench = 1;
        } else if (!strcmp(a, "--no-plans")) {
            o->no_plans = 1;
        } else if (!strcmp(a, "--check-presets")) {
            o->check_presets = 1;
        } else if (!strcmp(a, "--self-test-host")) {
            o->self_test_host = 1;
        } else {
            fprintf(stderr, "ulygpu: unknown option or missing value: %s (try --help)\n", a);
            return UG_EXIT_USAGE;
        }
        continue;
    bad_value:
        fprintf(stderr, "ulygpu: bad value for %s: '%s'\n", a, v);
        return UG_EXIT_USAGE;
    }
    if (o->reps < 0) o->reps = o->quick ? 3 : 7;
    return 0;
}

static void header(ug_ctx *c, int argc, char **argv)
{
    const struct kern_cuda_device_info *d = &c->dev;
    char date[64];
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    printf("ulygpu %s: %s (sm_%d%d, %d SMs, %.1f GiB, L2 %.0f MiB, PCI %s), driver %d, runtime %d\n", date, d->name,
           d->major, d->minor, d->sm_count, (double)d->mem_bytes / 1073741824.0, (double)d->l2_bytes / 1048576.0,
           d->pci_bus_id, d->driver_version, d->runtime_version);
    printf("  built: %s; %s\n", kern_cuda_build_info(), kern_cuda_blas_version(c->blas));
    printf("  seed %llu (%s; rerun with --seed %llu)\n", (unsigned long long)c->o.seed,
           c->o.seed_given ? "given" : "from the clock", (unsigned long long)c->o.seed);
    ug_json j;
    ug_j_begin(&j);
    ug_j_str(&j, "format", "ulysim-gpu-check");
    ug_j_int(&j, "version", 1);
    ug_j_str(&j, "type", "header");
    ug_j_str(&j, "created", date);
    {
        ug_json a;
        memset(&a, 0, sizeof a);
        size_t n = 2;
        for (int i = 0; i < argc; i++) n += strlen(argv[i]) * 6 + 4;
        char *buf = ug_halloc(n), *e = ug_halloc(n);
        size_t o = (size_t)snprintf(buf, n, "[");
        for (int i = 0; i < argc; i++) {
            ug_json_escape(argv[i], e, n);
            o += (size_t)snprintf(buf + o, n - o, "%s\"%s\"", i ? "," : "", e);
        }
        snprintf(buf + o, n - o, "]");
        ug_j_raw(&j, "command", buf);
        free(buf);
        free(e);
    }
    ug_j_int(&j, "seed", (long long)c->o.seed);
    ug_j_bool(&j, "quick", c->o.quick);
    ug_j_int(&j, "warmup", c->o.warmup);
    ug_j_int(&j, "reps", c->o.reps);
    ug_json h;
    ug_j_begin(&h);
    ug_j_str(&h, "gpu", d->name);
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", d->major, d->minor);
    ug_j_str(&h, "compute_capability", cc);
    ug_j_int(&h, "sm_count", d->sm_count);
    ug_j_num(&h, "memory_bytes", (double)d->mem_bytes);
    ug_j_num(&h, "l2_bytes", (double)d->l2_bytes);
    ug_j_int(&h, "clock_khz", d->clock_khz);
    ug_j_int(&h, "mem_clock_khz", d->mem_clock_khz);
    ug_j_int(&h, "mem_bus_bits", d->mem_bus_bits);
    ug_j_str(&h, "pci_bus_id", d->pci_bus_id);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    ug_j_str(&h, "hostname", host);
    ug_j_raw(&j, "hardware", ug_j_end(&h));
    ug_j_free(&h);
    ug_json s;
    ug_j_begin(&s);
    ug_j_str(&s, "ulysim", ULY_VERSION);
    ug_j_str(&s, "kernels", kern_cuda_build_info());
    ug_j_str(&s, "cublas", kern_cuda_blas_version(c->blas));
    ug_j_int(&s, "cuda_driver", d->driver_version);
    ug_j_int(&s, "cuda_runtime", d->runtime_version);
#ifdef __VERSION__
    ug_j_str(&s, "host_compiler", "gcc-compatible " __VERSION__);
#endif
    ug_j_str(&s, "timing", "CUDA events around each run on the default stream; warm-up runs first; median, min, max "
                           "over the timed runs");
    ug_j_str(&s, "flops", "attention: forward 4 d per visible (query, key) pair, backward 2.5 x forward; GEMM 2 m n k");
    ug_j_raw(&j, "software", ug_j_end(&s));
    ug_j_free(&s);
    ug_presets_json(c, &j);
    ug_trace_line(&j);
}

void ug_preset_updates(ug_ctx *c)
{
    const uly_gpu *g = &c->cluster.gpu;
    printf("\n== what this run says about the %s preset's GPU efficiencies (not applied: sim/presets is edited by "
           "hand, naming this run as the source)\n",
           c->cluster.name);
    typedef struct upd {
        const char *field;
        double x, preset, measured;
        const char *how;
    } upd;
    upd u[4];
    int n = 0;
    if (c->gemm_tflops[0] > 0) {
        /* the preset's efficiency at the measured square GEMM: by shape
         * (gpu.gemm_peak_frac and the SMs, tiles, fill), or on its curve */
        const double x = c->o.quick ? 4096 : 8192;
        double pre = g->gemm_eff.n <= 1 ? g->gemm_eff.eff[0] : uly_curve_eval(&g->gemm_eff, x);
        if (g->sm_count > 0) {
            uly_gemm_rates r;
            uly_gemm_rates_init(&r, g, ULY_BF16);
            pre = 2 * x * x * x / (uly_gemm_time_s(&r, 1, x, x, x) * g->peak_flops[ULY_BF16]);
        }
        u[n++] = (upd){g->sm_count > 0 ? "gpu.gemm_peak_frac" : "gpu.gemm_eff", x, pre,
                                c->gemm_tflops[0] * 1e12 / g->peak_flops[ULY_BF16],
                                "cuBLAS bf16 GEMM, random inputs, median"};
    }
    if (c->copy_GBps > 0)
        u[n++] = (upd){"gpu.mem_eff", NAN, g->mem_eff, c->copy_GBps * 1e9 / g->hbm_bw_Bps,
                                "device-to-device copy, bytes read + written"};
    if (c->eff_x > 0) {
        const uly_curve *cv = &g->attn_eff[1][1];
        u[n++] = (upd){"gpu.attn_eff.causal_d128", c->eff_x, cv->n ? uly_curve_eval(cv, c->eff_x) : NAN,
                                c->eff_fb,
                                "this repo's flash kernels, forward (default variant) + backward, bf16 causal d 128"};
    }
    for (int i = 0; i < n; i++) {
        printf("  %-26s x=%-7.0f preset %.3f  measured %.3f  (%s)\n", u[i].field, u[i].x, u[i].preset, u[i].measured,
               u[i].how);
        ug_json j;
        ug_j_begin(&j);
        ug_j_str(&j, "type", "preset_update");
        ug_j_str(&j, "cluster", c->cluster.name);
        ug_j_str(&j, "field", u[i].field);
        ug_j_num(&j, "x", u[i].x);
        ug_j_num(&j, "preset", u[i].preset);
        ug_j_num(&j, "measured", u[i].measured);
        ug_j_str(&j, "how", u[i].how);
        ug_j_str(&j, "gpu", c->dev.name);
        ug_trace_line(&j);
    }
    if (c->eff_x > 0)
        printf("  (forward alone %.3f, backward alone %.3f of peak; the preset's curve is FlashAttention-2's "
               "forward+backward)\n",
               c->eff_fwd, c->eff_bwd);
}

int main(int argc, char **argv)
{
    static ug_ctx c; /* zeroed */
    setvbuf(stdout, NULL, _IOLBF, 0);
    int rc = parse_args(argc, argv, &c.o);
    if (rc) return rc;
    c.t0 = ug_now();
    if (c.o.check_presets) return ug_presets_check();
    if ((rc = ug_presets_load(&c)) != 0) return rc;
    if (c.o.self_test_host) return ug_self_test_host(&c);
    if (!c.o.seed_given) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        c.o.seed = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 20);
    }
    ug_rng_seed(c.o.seed);

    int ndev = 0;
    kern_cuda_status st = kern_cuda_device_count(&ndev);
    if (st != KERN_CUDA_OK || ndev < 1) {
        printf("ulygpu: SKIP: no usable CUDA device (%s: %s)\n", kern_cuda_status_str(st), kern_cuda_last_error());
        return UG_EXIT_SKIP;
    }
    UG_CK(kern_cuda_set_device(0));
    UG_CK(kern_cuda_device_query(0, &c.dev));
    if (c.dev.major < 8) {
        printf("ulygpu: SKIP: %s is sm_%d%d; the kernels need sm_80 or newer (bf16 mma.sync, cp.async)\n", c.dev.name,
               c.dev.major, c.dev.minor);
        return UG_EXIT_SKIP;
    }
    c.have_gpu = 1;
    UG_CK(kern_cuda_blas_create(&c.blas));
    UG_CK(kern_cuda_timer_create(&c.timer));
    if (c.o.trace && ug_trace_open(c.o.trace) != 0) return UG_EXIT_FAIL;
    header(&c, argc, argv);

    ug_rates(&c);
    if (c.o.gemm_table) ug_gemm_sweep(&c);
    if (!c.o.no_checks) ug_checks(&c);
    if (!c.o.no_bench) ug_bench(&c);
    if (!c.o.no_plans) ug_plans(&c);
    ug_preset_updates(&c);

    const double wall = ug_elapsed(&c);
    ug_json j;
    ug_j_begin(&j);
    ug_j_str(&j, "type", "summary");
    ug_j_bool(&j, "ok", c.failures == 0);
    ug_j_int(&j, "checks", c.checks);
    ug_j_int(&j, "failed", c.failures);
    ug_j_int(&j, "best_forward_variant", c.best_variant);
    ug_j_num(&j, "wall_s", wall);
    ug_trace_line(&j);

    printf("\n== summary: %s, seed %llu, %.0f s\n", c.dev.name, (unsigned long long)c.o.seed, wall);
    for (int i = 0; i < c.n_summary; i++) printf("  %s\n", c.summary[i]);
    printf("  result         %s: %d checks, %d failed\n", c.failures ? "FAIL" : "PASS", c.checks, c.failures);
    ug_trace_close(c.failures == 0);
    UG_CK(kern_cuda_timer_destroy(c.timer));
    UG_CK(kern_cuda_blas_destroy(c.blas));
    return c.failures ? UG_EXIT_FAIL : 0;
}
