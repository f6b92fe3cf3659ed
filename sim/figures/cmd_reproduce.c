/* cmd_reproduce.c: `ulysim reproduce ulysses|rsa|korthikanti|all`: re-creates
 * the experiments of the two seed papers (and Korthikanti et al.'s Table 5)
 * from the presets and prints what the
 * model predicts beside what the papers published, with the error and the
 * acceptance check each number is held to.
 *
 *   ulysses  DeepSpeed-Ulysses (Jacobs et al. 2023, arXiv 2309.14509):
 *            Tables 2 and 3 (GPT-7B iteration time and TFLOP/s per GPU) and
 *            the headline claims (longer sequences, speed-up, communication
 *            reduction, 175 TFLOP/s, 1.2B at 1M tokens, Megatron-SP OOM).
 *   rsa      Sequence Parallelism / Ring Self-Attention (Li et al. 2021,
 *            arXiv 2105.13120): Table 4 weak scaling (memory per GPU, the
 *            SP/TP throughput ratio) and the maximum batch and sequence
 *            results against tensor parallelism.
 *
 * The published tables are runs files under traces/published (their
 * sources in their comments), read and priced by validate --runs's
 * machinery (validate_runs.h); the claims' numbers are in repro_*.c. No
 * number of the papers enters a prediction: every degree the papers leave
 * unstated is chosen by the model's own search or by a rule written next to
 * it, and every efficiency comes from the cluster preset (hardware facts,
 * FlashAttention's published throughput). Where the model cannot represent
 * an experiment (12 heads split 8 ways, ...), the row says so: the check
 * fails or is "n/a" rather than being patched.
 *
 * This file is the command: arguments, presets, running the experiments and
 * choosing the output. The parts are listed in repro.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "preset.h"
#include "repro.h"

int sim_cmd_reproduce(int argc, char **argv);

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ulysim reproduce [ulysses|rsa|korthikanti|all] [--format table|csv|json] [-o DIR]\n"
            "                        [--ulysses-cluster NAME|FILE] [--rsa-cluster NAME|FILE]\n"
            "\n"
            "Re-creates the experiments of the two seed papers, and a table of Megatron-LM\n"
            "runs, from the presets and prints the model's prediction beside the published\n"
            "number, with the error and the tolerance each is held to:\n"
            "  ulysses  DeepSpeed-Ulysses (arXiv 2309.14509): Tables 2-3 (GPT-7B iteration\n"
            "           time, TFLOP/s per GPU on A100 40GB) and the headline claims\n"
            "  rsa      Sequence Parallelism / RSA (arXiv 2105.13120): Table 4 weak scaling\n"
            "           (BERT Base memory per GPU on P100 16GB) and the max batch / sequence claims\n"
            "  korthikanti  Korthikanti et al. 2022 (arXiv 2205.05198) Table 5: iteration times\n"
            "           on Selene (22B to 1T, full recompute against sequence parallelism with\n"
            "           selective recompute), from the runs file traces/published/\n"
            "           korthikanti_table5_selene.csv priced by `validate --runs`, beside\n"
            "           Calculon's accuracy on the same runs\n"
            "  all      all of them (default)\n"
            "\n"
            "options:\n"
            "  --format F     table (default), csv (one line per compared number) or json\n"
            "  --ulysses-cluster NAME|FILE  price the DeepSpeed-Ulysses experiments on this\n"
            "                 cluster instead of dgx-a100-40g (a preset or JSON file, e.g. a\n"
            "                 profile of measured rates from `ulysim calibrate`)\n"
            "  --rsa-cluster NAME|FILE  the same for the RSA experiments (default\n"
            "                 piz-daint-p100)\n"
            "  -o, --output DIR  also write the comparison plots there: reproduce_*.dat and\n"
            "                 reproduce_*.png rendered by gnuplot with plots/reproduce_*.gp\n"
            "                 (scripts from $ULYSIM_PLOTS, else share/ulysim/plots\n"
            "                 installed beside this executable, else the source tree's\n"
            "                 plots/, else the configure-time prefix's; gnuplot is $GNUPLOT\n"
            "                 or on PATH)\n"
            "  -h, --help     this help\n"
            "\n"
            "Presets: gpt-7b, gpt-30b, gpt-1.2b, bert-base; dgx-a100-40g, piz-daint-p100,\n"
            "dgx-a100-80g (korthikanti: the models are the runs file's own shapes); their\n"
            "sources say where each number comes from. Published numbers:\n"
            "traces/published/. Exit status: 0 (the report printed, whether or not the\n"
            "numbers agree), 2 bad usage, 1 internal failure or a plot that could not be made.\n");
}

static int load_all(rp_ctx *c)
{
    char why[768];
    struct {
        const char *name;
        uly_model *m;
    } ms[] = {{"gpt-7b", &c->gpt7b}, {"gpt-30b", &c->gpt30b}, {"gpt-1.2b", &c->gpt12b}, {"bert-base", &c->bert}};
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
        if (preset_model_load(ms[i].name, ms[i].m, why, sizeof why)) {
            sim_err("reproduce: %s", why);
            return 1;
        }
    for (int i = 0; i < RP_PAPER_COUNT; i++) {
        const char *arg = c->cluster_arg[i];
        if (preset_cluster_load(arg ? arg : rp_papers[i].preset, &c->cluster[i], why, sizeof why)) {
            if (arg) sim_err("reproduce: %s '%s': %s", rp_papers[i].flag, arg, why);
            else sim_err("reproduce: %s", why);
            return 1;
        }
    }
    return 0;
}

/* The experiment sets: "ulysses, rsa, all". */
static void sets_str(char *buf, size_t n)
{
    size_t o = 0;
    for (int i = 0; i < RP_PAPER_COUNT && o < n; i++) o += (size_t)snprintf(buf + o, n - o, "%s, ", rp_papers[i].id);
    if (o < n) snprintf(buf + o, n - o, "korthikanti, all");
}

/* The paper whose cluster flag a is ("--rsa-cluster", or "--rsa-cluster=..."
 * when eq, its value then in *val); -1 when none. */
static int cluster_flag(const char *a, int eq, const char **val)
{
    for (int i = 0; i < RP_PAPER_COUNT; i++) {
        const size_t n = strlen(rp_papers[i].flag);
        if (strncmp(a, rp_papers[i].flag, n)) continue;
        if (!eq && a[n] == 0) return i;
        if (eq && a[n] == '=') {
            *val = a + n + 1;
            return i;
        }
    }
    return -1;
}

/* Reads the command line into c, fmt and dir; SIM_EXIT_OK, or the exit
 * status after a one-line message (help: *done). */
static int parse(int argc, char **argv, rp_ctx *c, const char **fmt, const char **dir, int *done)
{
    const char *which = NULL, *v = NULL;
    char sets[64];
    sets_str(sets, sizeof sets);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int p;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            *done = 1;
            return SIM_EXIT_OK;
        } else if (strcmp(a, "--format") == 0 || strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 ||
                   cluster_flag(a, 0, &v) >= 0) {
            if (i + 1 >= argc) {
                sim_err("reproduce: %s needs a value", a);
                return SIM_EXIT_USAGE;
            }
            if (strcmp(a, "--format") == 0) *fmt = argv[++i];
            else if ((p = cluster_flag(a, 0, &v)) >= 0) c->cluster_arg[p] = argv[++i];
            else *dir = argv[++i];
        } else if (strncmp(a, "--format=", 9) == 0) {
            *fmt = a + 9;
        } else if (strncmp(a, "--output=", 9) == 0) {
            *dir = a + 9;
        } else if ((p = cluster_flag(a, 1, &v)) >= 0) {
            c->cluster_arg[p] = v;
        } else if (a[0] == '-' && a[1]) {
            sim_err("reproduce: unknown option '%s' (valid: --format, -o/--output, %s, %s, --help)", a,
                    rp_papers[RP_PAPER_ULYSSES].flag, rp_papers[RP_PAPER_RSA].flag);
            return SIM_EXIT_USAGE;
        } else if (which) {
            sim_err("reproduce: one experiment set only: got '%s' after '%s' (valid: %s)", a, which, sets);
            return SIM_EXIT_USAGE;
        } else {
            which = a;
        }
    }
    if (!which || strcmp(which, "all") == 0) {
        for (int i = 0; i < RP_PAPER_COUNT; i++) c->run[i] = 1;
        c->run_selene = 1;
    } else if (strcmp(which, "korthikanti") == 0) {
        c->run_selene = 1;
    } else {
        const int p = rp_paper_find(which);
        if (p < 0) {
            sim_err("reproduce: unknown experiment set '%s' (valid: %s)", which, sets);
            return SIM_EXIT_USAGE;
        }
        c->run[p] = 1;
    }
    if (strcmp(*fmt, "table") && strcmp(*fmt, "csv") && strcmp(*fmt, "json")) {
        sim_err("reproduce: --format '%s' (valid: table, csv, json)", *fmt);
        return SIM_EXIT_USAGE;
    }
    /* what the set asked for would not use: said, not dropped */
    int papers = 0;
    for (int p = 0; p < RP_PAPER_COUNT; p++) {
        papers |= c->run[p];
        if (c->cluster_arg[p] && !c->run[p]) {
            sim_err("reproduce %s: %s %s: the %s experiments are not run (valid: reproduce %s or all with it)",
                    which, rp_papers[p].flag, c->cluster_arg[p], rp_papers[p].id, rp_papers[p].id);
            return SIM_EXIT_USAGE;
        }
    }
    if (*dir && !papers) { /* Selene's runs alone: its figure is plot validation's */
        sim_err("reproduce %s: -o %s: this set has no reproduce figure (valid: ulysim plot validation --runs "
                "traces/published/korthikanti_table5_selene.csv -o FILE.png draws its runs)", which, *dir);
        return SIM_EXIT_USAGE;
    }
    if (*dir && (!(*dir)[0] || strpbrk(*dir, "'\n\r"))) {
        sim_err("reproduce: -o '%s': give a directory name without quotes or line breaks", *dir);
        return SIM_EXIT_USAGE;
    }
    return SIM_EXIT_OK;
}

/* Runs what the command line asks for on a parsed context. */
static int run(rp_ctx *c, const char *fmt, const char *dir)
{
    if (load_all(c)) return SIM_EXIT_USAGE;
    if (dir && rp_plot_dir_ready(dir)) return SIM_EXIT_USAGE;
    if ((c->run[RP_PAPER_ULYSSES] && rp_ulysses_run(c)) || (c->run[RP_PAPER_RSA] && rp_rsa_run(c)) || c->r.oom) {
        if (c->exit_rc) return c->exit_rc;
        sim_err("reproduce: out of memory");
        return SIM_EXIT_INTERNAL;
    }
    int bad = 0, papers = 0;
    for (int i = 0; i < RP_PAPER_COUNT; i++) papers |= c->run[i];
    if (strcmp(fmt, "json") == 0) bad = rp_print_json(c, stdout); /* Selene's section inside */
    else if (strcmp(fmt, "csv") == 0) bad = rp_print_csv(c, stdout); /* the header leads even without a paper */
    else if (papers) bad = rp_print_table(c, stdout);
    if (bad) return bad > 1 ? bad : SIM_EXIT_INTERNAL;
    /* Selene's runs file, after the seed papers */
    if (c->run_selene && strcmp(fmt, "json")) {
        const int rc = rp_selene_print(strcmp(fmt, "csv") == 0, !papers, stdout);
        if (rc) return rc;
    }
    if (dir) {
        const int rc = rp_plots(c, dir);
        if (rc) return rc == SIM_EXIT_USAGE ? SIM_EXIT_USAGE : SIM_EXIT_INTERNAL;
    }
    return SIM_EXIT_OK;
}

int sim_cmd_reproduce(int argc, char **argv)
{
    const char *dir = NULL, *fmt = "table";
    rp_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        sim_err("reproduce: out of memory");
        return SIM_EXIT_INTERNAL;
    }
    int done = 0;
    int rc = parse(argc, argv, c, &fmt, &dir, &done);
    if (rc == SIM_EXIT_OK && !done) rc = run(c, fmt, dir);
    free(c->r.v);
    free(c);
    return rc;
}
