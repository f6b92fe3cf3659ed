/* calib_host.c: `ulysim calibrate --host`: measures this host and writes
 * its profile where `ulysim validate` finds it (validate_host.c).
 *
 * A profile measured on one CPU prices another's runs with rates that are
 * not its own (cpu-local, measured on a 2-core AMD EPYC, prices an Intel
 * Xeon's runs 2-3x off). So this host is measured the way the CPU proof
 * (scripts/validate-cpu.sh) measures it, with ulyharness under mpirun:
 *   1. which OpenBLAS kernel set runs SGEMM fastest, correctly, here
 *      (ulyharness --blas-probe, kernels/cpu/blas_probe.c); when it beats
 *      OpenBLAS's own choice by more than BLAS_GAIN, the runs below use it
 *      (OPENBLAS_CORETYPE) and the user is told to do the same;
 *   2. the collective micro-benchmark (MPI all-to-all, all-gather,
 *      reduce-scatter, all-reduce, send-recv, and the overlap of a transfer
 *      with compute) at each rank count;
 *   3. kernel runs: plan runs of two strategies that validation does not
 *      use (megatron-sp, allgather-cp) at four lengths, one rank per core:
 *      their GEMMs (SGEMM), flash attention, elementwise ops (the memory
 *      copy rate) and activations;
 * then fits them as `ulysim calibrate MB.trace --kernels ...` does
 * (cmd_calibrate.c) into host-<cpu>-<cores>-np<ranks>.json in the user's
 * configuration directory, one profile per rank count. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "calib_cmd.h"
#include "output.h"
#include "validate_host.h"

int sim_cmd_calibrate(int argc, char **argv);

#define WHO "ulysim calibrate --host"
#define MAX_RANKS 8      /* rank counts in one --ranks */
#define BLAS_GAIN 1.10   /* another kernel set must beat OpenBLAS's own choice by this to replace it */
#define MAX_KERN_RANKS 8 /* the harness's default model has 8 heads: megatron-sp's tp divides them */

typedef struct host_args {
    int ranks[MAX_RANKS], n_ranks;
    const char *harness, *mpirun, *keep, *out;
    int quick;
} host_args;

/* What the runs need: the programs, where the traces go, the host. */
typedef struct host_env {
    char harness[PATH_MAX], mpirun[PATH_MAX], dir[PATH_MAX];
    int open_mpi, cores, k_ranks;
    char coretype[64]; /* OPENBLAS_CORETYPE for the runs, "" for OpenBLAS's own choice */
    char files[64][PATH_MAX + 256];
    int n_files;
} host_env;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ulysim calibrate --host [--ranks P[,P...]] [--harness PATH] [--mpirun CMD] [--keep DIR]\n"
            "                               [-o FILE] [--quick]\n"
            "Measures this host with ulyharness under mpirun and writes its profile, one per rank count, to\n"
            "the configuration directory ($ULYSIM_CONFIG_DIR, else $XDG_CONFIG_HOME/ulysim, else\n"
            "~/.config/ulysim) as host-<cpu>-<cores>-np<P>.json; `ulysim validate RUN.trace` then prices a\n"
            "harness trace of this host (same CPU model, cores and ranks) on it, without --cluster.\n"
            "  1. the OpenBLAS kernel set: ulyharness --blas-probe times SGEMM with each set the CPU can run;\n"
            "     one more than 10%% faster than OpenBLAS's own choice is used (OPENBLAS_CORETYPE)\n"
            "  2. the collective micro-benchmark on P ranks (MPI all-to-all and the other collectives)\n"
            "  3. kernel runs (megatron-sp and allgather-cp, seq 384..3072) with one rank per core: GEMM,\n"
            "     flash attention, elementwise (memory copy) and activation rates\n"
            "  then the fit of `ulysim calibrate MB.trace --kernels ...` (see ulysim calibrate --help).\n"
            "  --ranks P,...   rank counts to profile (default: the cores, at least 2); kernel runs use the\n"
            "                  largest power of two up to min(cores, largest P, %d)\n"
            "  --harness PATH  ulyharness (default: $ULYHARNESS, else beside ulysim or in ../harness/)\n"
            "  --mpirun CMD    the MPI launcher (default: $MPIEXEC, else mpirun)\n"
            "  --keep DIR      keep the traces in DIR (default: a temporary directory, removed)\n"
            "  -o FILE         write the profile here instead (one rank count only)\n"
            "  --quick         three kernel lengths and fewer repetitions (a smoke run, noisier rates)\n"
            "Run it on a quiet host: the rates are what the host gives while nothing else runs.\n"
            "Exit: 0 written; 2 bad usage or ulyharness/mpirun not found; 1 a run or the fit failed.\n",
            MAX_KERN_RANKS);
}

/* --ranks "2,4" or "2 4": 0, or 2 after the message. */
static int ranks_parse(const char *v, host_args *a)
{
    char qb[80];
    const char *p = v;
    a->n_ranks = 0;
    while (*p) {
        while (*p == ',' || *p == ' ') p++;
        if (!*p) break;
        char *end;
        errno = 0;
        const long r = strtol(p, &end, 10);
        if (end == p || errno || r < 2 || r > 1024 || (*end && *end != ',' && *end != ' ') || a->n_ranks == MAX_RANKS) {
            sim_err_as(WHO, "--ranks %s: must be up to %d rank counts, each 2..1024, separated by commas "
                       "(e.g. --ranks 2,4)", text_quote(v, qb, sizeof qb), MAX_RANKS);
            return 2;
        }
        for (int k = 0; k < a->n_ranks; k++)
            if (a->ranks[k] == r) {
                sim_err_as(WHO, "--ranks %s: %ld given twice", text_quote(v, qb, sizeof qb), r);
                return 2;
            }
        a->ranks[a->n_ranks++] = (int)r;
        p = end;
    }
    if (!a->n_ranks) {
        sim_err_as(WHO, "--ranks %s: no rank count (e.g. --ranks 2,4)", text_quote(v, qb, sizeof qb));
        return 2;
    }
    return 0;
}

/* 0, -1 after --help, or 2 after the message. */
static int args_parse(int argc, char **argv, host_args *a)
{
    static const char *const RANKS[] = {"--ranks", NULL}, *const HARNESS[] = {"--harness", NULL},
                             *const MPIRUN[] = {"--mpirun", NULL}, *const KEEP[] = {"--keep", NULL},
                             *const OUT[] = {"-o", "--output", "--out", NULL};
    const char *ranks = NULL;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i], *v = NULL;
        int r;
        if ((r = sim_opt_help(WHO, s))) {
            if (r < 0) return 2;
            usage(stdout);
            return -1;
        }
        if ((r = sim_opt_switch(WHO, s, "--host")) || (r = sim_opt_switch(WHO, s, "--quick"))) {
            if (r < 0) return 2;
            if (!strcmp(s, "--quick")) a->quick = 1;
            continue;
        }
        if ((r = sim_opt_value(WHO, argc, argv, &i, RANKS, &ranks, &v)) ||
            (r = sim_opt_value(WHO, argc, argv, &i, HARNESS, &a->harness, &v)) ||
            (r = sim_opt_value(WHO, argc, argv, &i, MPIRUN, &a->mpirun, &v)) ||
            (r = sim_opt_value(WHO, argc, argv, &i, KEEP, &a->keep, &v)) ||
            (r = sim_opt_value(WHO, argc, argv, &i, OUT, &a->out, &v))) {
            if (r < 0) return 2;
            continue;
        }
        char qb[80];
        sim_err_as(WHO, "%s: %s (valid: --ranks, --harness, --mpirun, --keep, -o, --quick; traces to fit are "
                   "given without --host: ulysim calibrate MB.trace --kernels ...; see ulysim calibrate --host --help)",
                   text_quote(s, qb, sizeof qb), s[0] == '-' ? "unknown option" : "a trace does not go with --host");
        return 2;
    }
    if (ranks && ranks_parse(ranks, a)) return 2;
    if (a->out && a->n_ranks > 1) {
        sim_err_as(WHO, "-o %s with %d rank counts: one profile per rank count, so -o takes one (valid: leave -o "
                   "out, the profiles go to the configuration directory)", a->out, a->n_ranks);
        return 2;
    }
    return 0;
}

/* An executable file: 1, else 0. */
static int is_exe(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

/* ulyharness: --harness, $ULYHARNESS, beside ulysim (installed), or in the
 * build tree's harness/ (sim/ulysim's ../harness/ulyharness). 0, or 2. */
static int harness_find(const host_args *a, host_env *E)
{
    const char *given = a->harness ? a->harness : getenv("ULYHARNESS");
    if (given && *given) {
        if (!is_exe(given)) {
            sim_err_as(WHO, "%s %s: not an executable file (valid: the ulyharness program)",
                       a->harness ? "--harness" : "$ULYHARNESS", given);
            return 2;
        }
        snprintf(E->harness, sizeof E->harness, "%s", given);
        return 0;
    }
    char exe[PATH_MAX];
    const ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = k > 0 ? (exe[k] = 0, strrchr(exe, '/')) : NULL;
    if (slash) {
        *slash = 0;
        const char *const rel[] = {"ulyharness", "../harness/ulyharness"};
        for (int i = 0; i < 2; i++) {
            char p[PATH_MAX + 32];
            snprintf(p, sizeof p, "%s/%s", exe, rel[i]);
            if (is_exe(p) && realpath(p, E->harness)) return 0;
        }
    }
    sim_err_as(WHO, "ulyharness not found beside ulysim%s%s or in its ../harness/ (valid: --harness PATH, or "
               "ULYHARNESS=PATH; build it: cmake --build build --target ulyharness)", slash ? " in " : "",
               slash ? exe : "");
    return 2;
}

/* Runs argv with stdout and stderr to log; returns the exit status (-1 when
 * it could not start or died of a signal). */
static int run_logged(char *const argv[], const char *log)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    extern char **environ;
    fflush(stdout);
    const int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return -1;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The last lines of a log, on stderr, after a failed run. */
static void log_tail(const char *log)
{
    FILE *f = fopen(log, "r");
    if (!f) return;
    char lines[5][512];
    int n = 0;
    while (fgets(lines[n % 5], sizeof lines[0], f)) n++;
    fclose(f);
    for (int i = n > 5 ? n - 5 : 0; i < n; i++) fprintf(stderr, "  %s", lines[i % 5]);
}

/* A file of the work directory, remembered for removal. */
static const char *work_file(host_env *E, const char *name)
{
    if (E->n_files == (int)(sizeof E->files / sizeof E->files[0])) return NULL;
    snprintf(E->files[E->n_files], sizeof E->files[0], "%s/%s", E->dir, name);
    return E->files[E->n_files++];
}

/* The launcher and whether it is Open MPI's (its flags for root, binding
 * and more ranks than cores). 0, or 2 after the message. */
static int mpirun_check(const host_args *a, host_env *E)
{
    const char *m = a->mpirun ? a->mpirun : getenv("MPIEXEC");
    snprintf(E->mpirun, sizeof E->mpirun, "%s", m && *m ? m : "mpirun");
    const char *log = work_file(E, "mpirun-version.log");
    char *argv[] = {E->mpirun, "--version", NULL};
    if (!log || run_logged(argv, log) != 0) {
        sim_err_as(WHO, "%s --version did not run (valid: --mpirun CMD or MPIEXEC=CMD naming the MPI launcher; "
                   "Debian: apt-get install openmpi-bin)", E->mpirun);
        return 2;
    }
    char line[512];
    FILE *f = fopen(log, "r");
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "Open MPI") || strstr(line, "OpenRTE")) E->open_mpi = 1;
    if (f) fclose(f);
    return 0;
}

/* Step 1: the OpenBLAS kernel set. A caller's OPENBLAS_CORETYPE is kept. */
static int blas_choose(host_env *E)
{
    const char *set = getenv("OPENBLAS_CORETYPE");
    if (set && *set) {
        snprintf(E->coretype, sizeof E->coretype, "%s", set);
        printf("# OpenBLAS kernels: OPENBLAS_CORETYPE=%s, as the caller set it (not probed)\n", set);
        return 0;
    }
    const char *log = work_file(E, "blas-probe.log");
    char *argv[] = {E->harness, "--blas-probe", NULL};
    if (!log || run_logged(argv, log) != 0) {
        sim_err_as(WHO, "%s --blas-probe failed:", E->harness);
        if (log) log_tail(log);
        return 1;
    }
    char line[640], report[600] = "", def[64] = "", best[64] = "";
    double gd = 0, gb = 0;
    FILE *f = fopen(log, "r");
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "# ", 2)) snprintf(report, sizeof report, "%.*s", (int)strcspn(line + 2, "\n"), line + 2);
        else if (sscanf(line, "default %63s %lg", def, &gd) == 2 || sscanf(line, "best %63s %lg", best, &gb) == 2) {}
    }
    if (f) fclose(f);
    if (!best[0]) {
        sim_err_as(WHO, "%s --blas-probe named no kernel set (its output: %s)", E->harness, log);
        return 1;
    }
    /* the sets OpenBLAS groups alike (Zen and Haswell share their SGEMM
     * kernels) time within noise of each other: only a clear gain counts */
    if (strcmp(best, def) && (gd <= 0 || gb > BLAS_GAIN * gd)) {
        snprintf(E->coretype, sizeof E->coretype, "%s", best);
        setenv("OPENBLAS_CORETYPE", best, 1);
        printf("# OpenBLAS kernels: OpenBLAS picks %s here (SGEMM %.1f GFLOP/s), %s runs %.1f: these runs use "
               "OPENBLAS_CORETYPE=%s, and so must the harness runs priced on this profile (%s)\n",
               def[0] ? def : "a set that failed", gd, best, gb, best, report);
    } else {
        printf("# OpenBLAS kernels: %s, OpenBLAS's own choice (no set runs SGEMM more than %.0f%% faster here: %s)\n",
               def, 100 * (BLAS_GAIN - 1), report);
    }
    return 0;
}

/* One harness run of np ranks into name.trace: 0, or 1 after the message. */
static int harness_run(host_env *E, const char *name, int np, const char *const *args, const char **trace)
{
    char tname[128], lname[128], nps[16];
    snprintf(tname, sizeof tname, "%s.trace", name);
    snprintf(lname, sizeof lname, "%s.log", name);
    snprintf(nps, sizeof nps, "%d", np);
    const char *out = work_file(E, tname), *log = work_file(E, lname);
    if (!out || !log) return 1;
    char *argv[64];
    int n = 0;
    argv[n++] = E->mpirun, argv[n++] = "-np", argv[n++] = nps;
    if (E->open_mpi) {
        argv[n++] = "--oversubscribe";
        if (geteuid() == 0) argv[n++] = "--allow-run-as-root";
        /* one rank per core, pinned, where the host has the cores */
        if (np <= E->cores) argv[n++] = "--bind-to", argv[n++] = "core", argv[n++] = "--map-by", argv[n++] = "core";
        else argv[n++] = "--bind-to", argv[n++] = "none";
    }
    argv[n++] = E->harness;
    for (int i = 0; args[i] && n < 56; i++) argv[n++] = (char *)args[i];
    argv[n++] = "--out", argv[n++] = (char *)out, argv[n++] = "--quiet", argv[n] = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const int rc = run_logged(argv, log);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc != 0) {
        sim_err_as(WHO, "the harness run %s on %d ranks failed (exit %d); the end of its output:", name, np, rc);
        log_tail(log);
        return 1;
    }
    printf("#   %s (%d ranks, %.1f s)\n", tname, np, (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
    *trace = out;
    return 0;
}

/* The largest power of two up to x. */
static int pow2_floor(int x)
{
    int p = 1;
    while (p * 2 <= x) p *= 2;
    return p;
}

/* Steps 2 and 3 and the fit, per rank count. 0, or the exit status. */
static int host_measure(const host_args *a, host_env *E)
{
    static const char *const KSEQ[] = {"384", "768", "1536", "3072"};
    const int n_kseq = a->quick ? 3 : 4;
    const char *reps = a->quick ? "5" : "9";
    const char *kfiles[8];
    int n_k = 0;
    printf("# 1. kernel runs on %d ranks\n", E->k_ranks);
    for (int s = 0; s < n_kseq; s++)
        for (int st = 0; st < 2; st++) {
            const char *strat = st ? "allgather-cp" : "megatron-sp";
            char name[96];
            snprintf(name, sizeof name, "kern-%s-np%d-s%s", strat, E->k_ranks, KSEQ[s]);
            const char *args[] = {"--strategy", strat, "--seq", KSEQ[s], "--zero", "0", "--warmup", "1",
                                  "--reps", reps, "--sync", "op", NULL};
            if (harness_run(E, name, E->k_ranks, args, &kfiles[n_k])) return 1;
            n_k++;
        }
    char dir[PATH_MAX];
    if (!a->out && val_config_dir(dir, sizeof dir)) {
        sim_err_as(WHO, "no configuration directory: neither ULYSIM_CONFIG_DIR, XDG_CONFIG_HOME nor HOME is set "
                   "(valid: set one, or give -o FILE)");
        return 2;
    }
    for (int r = 0; r < a->n_ranks; r++) {
        const int np = a->ranks[r];
        char name[64], out[PATH_MAX + 64], why[1024];
        snprintf(name, sizeof name, "mb-np%d", np);
        printf("# 2. the collective micro-benchmark on %d ranks\n", np);
        const char *mb;
        const char *args[] = {"--microbench", "--mb-min", "1K", "--mb-max", "4M", "--warmup", "2", "--reps", "20", NULL};
        if (harness_run(E, name, np, args, &mb)) return 1;
        /* the profile's name from the host as the trace records it: what validate matches */
        trace_run run;
        memset(&run, 0, sizeof run);
        const int rr = trace_read(mb, &run, why, sizeof why);
        char pname[ULY_NAME_LEN + 8];
        if (!rr) val_host_profile_name(run.cpu_model, run.cores_online, np, pname, sizeof pname);
        trace_free(&run);
        if (rr) {
            sim_err_as(WHO, "%s", why);
            return 1;
        }
        if (a->out) snprintf(out, sizeof out, "%s", a->out);
        else {
            if (mkdir(dir, 0755) && errno != EEXIST) {
                sim_err_as(WHO, "cannot make the configuration directory %s: %s (valid: ULYSIM_CONFIG_DIR naming a "
                           "directory you can write, or -o FILE)", dir, strerror(errno));
                return 2;
            }
            snprintf(out, sizeof out, "%s/%s.json", dir, pname);
        }
        printf("# 3. the fit (ulysim calibrate %s --kernels %d kernel runs -o %s --name %s)\n", mb, n_k, out, pname);
        char *cargv[24];
        int cn = 0;
        cargv[cn++] = "calibrate", cargv[cn++] = (char *)mb, cargv[cn++] = "--kernels";
        for (int k = 0; k < n_k; k++) cargv[cn++] = (char *)kfiles[k];
        cargv[cn++] = "-o", cargv[cn++] = out, cargv[cn++] = "--name", cargv[cn++] = pname, cargv[cn] = NULL;
        const int rc = sim_cmd_calibrate(cn, cargv);
        if (rc) return rc;
        printf("# host profile for %d ranks: %s; ulysim validate prices this host's %d-rank harness traces on it%s%s\n",
               np, out, np, E->coretype[0] ? ", run with OPENBLAS_CORETYPE=" : "", E->coretype);
    }
    return 0;
}

int sim_calib_host(int argc, char **argv)
{
    host_args a;
    host_env *E = calloc(1, sizeof *E);
    memset(&a, 0, sizeof a);
    if (!E) return 1;
    int rc = args_parse(argc, argv, &a);
    if (rc) {
        free(E);
        return rc < 0 ? 0 : rc;
    }
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    E->cores = cores > 0 ? (int)cores : 1;
    if (!a.n_ranks) a.ranks[a.n_ranks++] = E->cores >= 2 ? E->cores : 2;
    int max_r = 0;
    for (int r = 0; r < a.n_ranks; r++) max_r = a.ranks[r] > max_r ? a.ranks[r] : max_r;
    E->k_ranks = pow2_floor(fmin(fmin(E->cores, max_r), MAX_KERN_RANKS));
    if (E->k_ranks < 2) E->k_ranks = 2;
    if ((rc = harness_find(&a, E))) goto out;
    if (a.keep) {
        if (mkdir(a.keep, 0755) && errno != EEXIST) {
            sim_err_as(WHO, "--keep %s: %s", a.keep, strerror(errno));
            rc = 2;
            goto out;
        }
        snprintf(E->dir, sizeof E->dir, "%s", a.keep);
    } else {
        snprintf(E->dir, sizeof E->dir, "%s/ulysim-host.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!mkdtemp(E->dir)) {
            sim_err_as(WHO, "cannot make a temporary directory %s: %s", E->dir, strerror(errno));
            E->dir[0] = 0;
            rc = 1;
            goto out;
        }
    }
    /* as scripts/validate-cpu.sh runs them: one BLAS thread per rank (the
     * ranks are the parallelism), Open MPI allowed to run as root and to
     * place more ranks than cores */
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 1);
    printf("# ulysim calibrate --host: %d cores; ranks", E->cores);
    for (int r = 0; r < a.n_ranks; r++) printf(" %d", a.ranks[r]);
    printf("; harness %s; traces in %s%s\n", E->harness, E->dir, a.keep ? "" : " (removed at the end)");
    if ((rc = mpirun_check(&a, E)) || (rc = blas_choose(E)) || (rc = host_measure(&a, E))) goto out;
out:
    if (!a.keep && E->dir[0]) {
        for (int i = 0; i < E->n_files; i++) unlink(E->files[i]);
        rmdir(E->dir);
    }
    free(E);
    return rc;
}
