/* main.c: ulyharness. See hx.h and traces/FORMAT.md.
 * Exit status: 0 every check passed; 1 a check failed (wrong result or
 * bytes that differ from the plan) or a failure on some rank (every rank
 * exits non-zero through MPI_Abort); 2 bad usage or an impossible
 * configuration; 77 nothing to run here (--backend nccl without a GPU).
 *
 * The harness's functions return a status (hx.h) and main alone acts on it:
 * a failure on this rank (HX_FAIL, its reason already printed) aborts the
 * whole job, since the other ranks may be waiting for this one in a
 * collective; bad usage and "skipped", which every rank finds alike, end
 * the run through MPI_Finalize with their exit status. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "hx.h"
#include "hx_trace.h"
#include "out_file.h"
#include "preset.h"

/* MPI_Finalize's code is checked too: a rank that cannot leave cleanly says so */
static int finish(int rc)
{
    hx_beat(-1, "MPI_Finalize");
    if (HX_MPI(MPI_Finalize())) hx_job_abort(1);
    return rc;
}

static void print_table(const hx_ctx *c, double (*ts)[3])
{
    printf("# %s on %d ranks (ulysses %lld, ring %lld, tp %lld, dp %lld, pp %lld), seq %lld, heads %lld/%lld x %lld, "
           "ffn %lld, batch %lld, %s, %s kernel, recompute %s, zero %d\n",
           c->strat->name, c->P, (long long)c->u, (long long)c->r, (long long)c->t, (long long)c->dp,
           (long long)c->l.pp, (long long)c->N,
           (long long)c->a, (long long)c->k, (long long)c->d, (long long)c->f, (long long)c->b,
           c->w.causal ? (c->zig ? "causal zigzag" : "causal") : "non-causal", c->kern->name,
           c->w.recompute == ULY_RECOMPUTE_FULL ? "full" : "none", c->w.zero_stage);
    printf("# time: median over %d reps per rank, then median [min, max] over ranks; ring transfers: exposed part\n",
           c->o.reps);
    printf("# %3s %-18s %-5s %-5s %-14s %12s %12s %10s %10s %10s\n", "id", "name", "phase", "kind", "coll",
           "bytes_sent", "plan_bytes", "med(ms)", "min(ms)", "max(ms)");
    for (int i = 0; i < c->n_order; i++) {
        const int id = c->order[i];
        const uly_op *o = &c->plan.ops[id];
        printf("  %3d %-18s %-5s %-5s %-14s %12lld %12lld %10.3f %10.3f %10.3f%s%s\n", id, uly_op_type_name(o->type),
               uly_phase_name(o->phase), uly_op_kind_name(o->kind), uly_coll_name(o->coll), (long long)c->st[id].bytes,
               (long long)o->bytes_sent, ts[id][0] * 1e3, ts[id][1] * 1e3, ts[id][2] * 1e3,
               c->st[id].bytes == o->bytes_sent ? "" : "  BYTES DIFFER", o->recompute ? "  (recompute)" : "");
    }
}

/* the collective micro-benchmark instead of a plan */
static int run_microbench(const hx_opts *o, hx_trace *trace, int argc, char **argv)
{
    uly_cluster cl;
    char why[512];
    const int have_cl = preset_cluster_load(o->cluster, &cl, why, sizeof why) == 0;
    if (o->out) HX_TRY(hx_trace_open(trace, o->out));
    HX_TRY(hx_trace_header_micro(trace, o, argc, argv, o->cluster, NULL, have_cl ? &cl : NULL));
    hx_mb_result res;
    HX_TRY(hx_microbench(o, trace, &res));
    if (o->out) HX_TRY(hx_trace_close(trace, o->out, 1));
    /* the one-line result, --quiet or not */
    if (hx_world_rank() == 0) {
        printf("microbench on %d ranks: %d points (%d collectives, %lld..%lld B per rank) and the overlap (%.3f)%s%s\n",
               hx_world_size(), res.points, res.collectives, (long long)res.min_bytes, (long long)res.max_bytes,
               res.overlap, o->out ? "; trace " : "", o->out ? o->out : "");
        fflush(stdout);
    }
    return HX_OK;
}

/* The results: the table, the trace's last lines and the one-line verdict
 * (rank 0); *passed: every check passed. */
static int report(const hx_ctx *c, hx_trace *trace, int *passed)
{
    const hx_opts *o = &c->o;
    double (*ts)[3] = hx_alloc(sizeof(double[3]) * (size_t)(HX_STAT_COUNT * c->plan.n_ops), "time stats");
    if (!ts) return HX_FAIL;
    int rc = HX_OK;
    for (int k = 0; rc == HX_OK && k < HX_STAT_COUNT; k++) rc = hx_time_stats(c, k, ts + k * c->plan.n_ops);
    const int ok = (o->no_check || c->check_ok) && c->bytes_ok;
    *passed = ok;
    if (rc == HX_OK && hx_world_rank() == 0) {
        if (!o->quiet) print_table(c, ts);
        rc = hx_trace_ops(trace, c, ts);
        if (rc == HX_OK) rc = hx_trace_summary(trace, c, ok);
        if (rc == HX_OK && o->out) rc = hx_trace_close(trace, o->out, ok);
        char be[64] = "";
        if (c->be != &hx_backend_mpi) snprintf(be, sizeof be, " (%s, %s)", c->be->name, uly_dtype_name(c->w.dtype));
        if (rc == HX_OK) {
            printf("%s: %s on %d ranks%s: %s, bytes %s every op of the plan%s%s\n", ok ? "PASS" : "FAIL",
                   c->strat->name, c->P, be,
                   o->no_check ? "check skipped" : (c->check_ok ? "result correct" : "RESULT WRONG"),
                   c->bytes_ok ? "equal to the plan for" : "DIFFER from the plan for", o->out ? "; trace " : "",
                   o->out ? (ok ? o->out : "written as .failed") : "");
            fflush(stdout);
        }
    }
    free(ts);
    return rc;
}

/* Once the backend is open: set up, run, report. */
static int run_plan(hx_ctx *c, const hx_opts *o, void *be_state, hx_trace *trace, int argc, char **argv, int *passed)
{
    const int rc = hx_setup(c, o);
    c->be_state = be_state; /* after hx_setup, which clears the context; the backend's close frees it */
    HX_TRY(rc);
    /* --check-seed seeds a sample: --check auto must have drawn one (the
     * parser refused it with full and none); every rank resolves alike */
    _Static_assert((long long)HX_CHECK_FULL_FLOPS == 10000000000LL, "the message says 1e10");
    if (o->check_seed && c->check_mode != HX_CHECK_SAMPLED)
        return hx_args_reject(hx_world_rank(),
                              "--check-seed %llu: --check auto checks this run in full (its reference attention is at "
                              "most 1e10 flops), so no sample is drawn (valid: add --check "
                              "sampled, or leave --check-seed out)", (unsigned long long)o->check_seed);
    if (o->print_plan) {
        if (hx_world_rank() == 0) hx_print_plan(c, stdout);
        *passed = 1;
        return HX_OK;
    }
    HX_TRY(c->be->prepare(c));
    if (o->out) HX_TRY(hx_trace_open(trace, o->out));
    HX_TRY(hx_trace_header(trace, c, argc, argv));
    HX_TRY(hx_run(c));
    return report(c, trace, passed);
}

/* Everything between MPI_Init and MPI_Finalize; *code: the exit status of
 * a run that completed (0 passed, 1 a check failed). */
static int run(int argc, char **argv, int *code)
{
    hx_opts o;
    int rc = hx_args_parse(argc, argv, &o, hx_world_rank());
    if (rc == 1) return HX_OK; /* --help, --version */
    if (rc) return HX_USAGE;
    HX_TRY(hx_args_out_check(&o));
    /* the backend: mpi (hx_exec.c) or nccl (hx_nccl.c, or its stub without CUDA/NCCL) */
    o.be = !strcmp(o.backend, "nccl") ? &hx_backend_nccl : &hx_backend_mpi;
    if (o.be->configure) HX_TRY(o.be->configure(&o, hx_world_rank()));
    kern_blas_threads_set(o.threads);
    HX_TRY(hx_watchdog_start(o.timeout_s));
    void *be_state = NULL;
    if (o.be->open) HX_TRY(o.be->open(&o, &be_state)); /* HX_SKIP: no GPU here */
    hx_trace trace = {0};
    if (o.microbench) {
        *code = 0;
        return run_microbench(&o, &trace, argc, argv);
    }
    hx_ctx *c = calloc(1, sizeof *c);
    if (!c) return hx_fail("out of memory: the run's context");
    int passed = 0;
    rc = run_plan(c, &o, be_state, &trace, argc, argv, &passed);
    if (c->be->close && rc != HX_FAIL) {
        const int rc_close = c->be->close(c);
        if (rc_close != HX_OK) rc = rc_close;
    }
    if (rc != HX_FAIL) {
        const int rc_release = hx_release(c);
        if (rc_release != HX_OK) rc = rc_release;
    }
    free(c);
    *code = passed ? 0 : 1;
    return rc;
}

/* --blas-probe: which OpenBLAS kernel set SGEMM runs fastest with here
 * (kernels/cpu/blas_probe.c), before MPI starts: each candidate is this
 * program again, run with --blas-probe-child and OPENBLAS_CORETYPE set. The
 * lines are read by `ulysim calibrate --host`. */
static int blas_probe(void)
{
    kern_blas_choice ch;
    const int rc = kern_blas_probe("/proc/self/exe", "--blas-probe-child", &ch);
    printf("# %s\n", ch.report);
    printf("default %s %.2f\n", ch.deflt[0] ? ch.deflt : "none", ch.default_gflops);
    if (rc == 0) printf("best %s %.2f\n", ch.best, ch.best_gflops);
    else fprintf(stderr, "ulyharness: --blas-probe: no OpenBLAS kernel set ran SGEMM correctly\n");
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--blas-probe-child")) return kern_blas_probe_child();
    if (argc == 2 && !strcmp(argv[1], "--blas-probe")) return blas_probe();
    int provided = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "ulyharness: MPI_Init_thread failed\n");
        return 1;
    }
    int rc = hx_proc_init();
    if (hx_world_rank() == 0) out_file_signals_install("ulyharness"); /* rank 0 holds the temporary */
    int code = 0;
    if (rc == HX_OK) rc = run(argc, argv, &code);
    if (rc == HX_FAIL) hx_job_abort(1); /* the other ranks may be blocked in a collective */
    return finish(rc ? rc : code);
}
