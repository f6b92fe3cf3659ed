/* cmd_plot.c: `ulysim plot FIGURE [options] -o out.png|svg|pdf`: paper-style
 * figures. The figure's numbers come from libulysim (the same calls as the
 * planning commands, so `ulysim --format json` gives the same numbers for the
 * same configuration); they are written as CSV beside the image (out.csv:
 * '#' lines name the configuration, the command and every column with its
 * unit), then gnuplot runs the figure's script plots/FIGURE.gp on it. The
 * scripts stay usable by hand: each documents its variables at the top.
 *
 * Scripts are found in: --scripts DIR, else $ULYSIM_PLOTS, else
 * share/ulysim/plots installed beside this executable (a prefix may be
 * moved), else the source tree's plots/ when it exists (running from a
 * build tree), else the configure-time prefix's (plot_gnuplot.c). gnuplot is $GNUPLOT, else `gnuplot` on PATH.
 * Both files are written through out_file (formats/out_file.h): a temporary
 * renamed when complete, a device node or FIFO in place (the CSV only).
 *
 * This file is the command: its arguments, the table of figures and the run
 * of one (the CSV, then gnuplot). The figures' data: plot_fig_model.c and
 * plot_fig_trace.c; the CSV writers: plot_csv.c. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "out_file.h"
#include "output.h"
#include "plot_fig.h"
#include "plot_gnuplot.h"

/* ------------------------------------------------------------ the figures */

static const figure figures[] = {
    {.name = "comm-volume",
     .summary = "communication bytes per GPU per layer against GPU count, N fixed and N growing with the GPUs",
     .def_gpus = "8..1024", .def_seq = "1M",
     .gpus_list = 1, .def_spread = -1, .x_what = "--gpus: a list or range (x axis), --seq: one N",
     .data = fig_comm_volume},
    {.name = "throughput", .summary = "TFLOP/s per GPU against sequence length, out-of-memory points marked",
     .def_gpus = "32", .def_seq = "16K..4M", .seq_list = 1, .def_spread = 1,
     .x_what = "--gpus: one count, --seq: a list or range (x axis)", .data = fig_throughput},
    {.name = "max-seq", .summary = "longest sequence each strategy fits against GPU count",
     .def_gpus = "8..1024", .def_seq = "1G", .gpus_list = 1, .def_spread = -1,
     .x_what = "--gpus: a list or range (x axis), --seq: one upper bound", .data = fig_max_seq},
    {.name = "max-batch", .summary = "most sequences in flight (micro-batch x dp) each strategy fits against GPU count",
     .def_gpus = "8..1024", .def_seq = "128K", .gpus_list = 1, .def_spread = -1,
     .x_what = "--gpus: a list or range (x axis), --seq: one N", .data = fig_max_batch},
    {.name = "memory", .summary = "memory per GPU by term, stacked, one bar per strategy at its best layout, HBM drawn",
     .def_gpus = "64", .def_seq = "1M", .def_spread = 0, .x_what = "--gpus: one count, --seq: one N",
     .data = fig_memory},
    {.name = "breakdown",
     .summary = "step time split into compute, exposed and overlapped communication per strategy",
     .def_gpus = "64", .def_seq = "1M", .def_spread = 0, .x_what = "--gpus: one count, --seq: one N",
     .data = fig_breakdown},
    {.name = "validation", .summary = "measured against predicted time of every operation of harness traces",
     .def_gpus = "8", .def_seq = "128K", .def_spread = -1, .traces = 2, .x_what = "TRACE...",
     .data = fig_validation},
    {.name = "timeline", .summary = "one harness run's operations in execution order, predicted and measured",
     .def_gpus = "8", .def_seq = "128K", .def_spread = -1, .traces = 1, .x_what = "one TRACE",
     .data = fig_timeline},
};
#define N_FIGURES ((int)(sizeof figures / sizeof figures[0]))

static const figure *figure_find(const char *name)
{
    for (int i = 0; i < N_FIGURES; i++)
        if (strcmp(figures[i].name, name) == 0) return &figures[i];
    return NULL;
}

static void figure_names(char *b, size_t n)
{
    b[0] = 0;
    for (int i = 0; i < N_FIGURES; i++) {
        size_t l = strlen(b);
        snprintf(b + l, n - l, "%s%s", i ? ", " : "", figures[i].name);
    }
}

static void help(FILE *f)
{
    fprintf(f,
"usage: ulysim plot FIGURE [TRACE...] [OPTIONS] [-o out.png|out.svg|out.pdf]\n"
"\n"
"Paper-style figures from the model. Writes the figure's numbers as CSV beside\n"
"the image (out.csv: '#' lines name the configuration, the command and every\n"
"column with its unit) and renders it with gnuplot and plots/FIGURE.gp, which\n"
"can be run by hand (its variables are documented at its top).\n"
"\n"
"figures (defaults in brackets):\n"
"  comm-volume  bytes sent per GPU per layer against GPU count, N fixed and N\n"
"               growing with the GPUs; log axes [--gpus 8..1024 --seq 1M;\n"
"               every strategy over all GPUs; one whose bytes equal an earlier\n"
"               one's at every point is drawn once, unless --strategy names it]\n"
"  throughput   TFLOP/s per GPU against sequence length per strategy, out-of-\n"
"               memory points marked [--gpus 32 --seq 16K..4M --spread all]\n"
"  max-seq      longest sequence each strategy fits against GPU count\n"
"               [--gpus 8..1024; --seq: the search bound, 1G]\n"
"  max-batch    most sequences in flight (micro-batch x dp, over every layout)\n"
"               each strategy fits against GPU count [--gpus 8..1024 --seq 128K]\n"
"  memory       memory per GPU by term, stacked bars, one per strategy at its\n"
"               best layout, HBM limit drawn [--gpus 64 --seq 1M --spread best]\n"
"  breakdown    step time split into compute, exposed and overlapped\n"
"               communication per strategy [--gpus 64 --seq 1M --spread best;\n"
"               global batch: the recommendation's micro-batch x dp, as the\n"
"               plan runs it, unless --global-batch]\n"
"  validation   measured against predicted time of every operation of\n"
"               ulyharness traces, y = x and a +-20%% band: plot validation TRACE...;\n"
"               or measured against predicted step time of the runs of a runs file\n"
"               (docs/runs.md), y = x and a +-10%% band: plot validation --runs FILE\n"
"  timeline     one harness run's operations in execution order, measured and\n"
"               predicted: plot timeline TRACE\n"
"               (traces: the model, workload and layout come from the trace's\n"
"               header; --cluster NAME|FILE predicts with another profile)\n"
"\n"
"options:\n"
"  -o, --output FILE    the image; .png, .svg or .pdf picks the format; the CSV is\n"
"                       FILE with .csv [default FIGURE.png]\n"
"  --gpus, --seq        as for ulysim, and lists A,B,C or ranges A..B (A, 2A, 4A,\n"
"                       ... up to B) where the figure's x axis needs one\n"
"  --model, --cluster, --strategy, --ulysses, --ring, --tp, --batch, --global-batch,\n"
"  --dtype, --recompute, --zero, --causal/--no-causal, --flash/--no-flash, --split\n"
"                       as for ulysim (see ulysim --help)\n"
"  --spread all|best    throughput, memory, breakdown: each strategy over all GPUs\n"
"                       (its own degree = GPUs, dp = 1; %s: Ulysses inside a node,\n"
"                       ring across), or its best layout as in `ulysim plan`\n"
"  --size W,H           image size in inches [default per figure: 3.5 wide, one\n"
"                       paper column; PNG at 300 dpi]\n"
"  --no-title           no title line naming the configuration (for papers)\n"
"  --data-only          write the CSV only, do not run gnuplot\n"
"  --scripts DIR        where FIGURE.gp is [default $ULYSIM_PLOTS, else\n"
"                       share/ulysim/plots installed beside this executable, else\n"
"                       the source tree's plots/, else the configure-time prefix's]\n"
"  -h, --help           this help\n"
"\n"
"gnuplot is $GNUPLOT, else gnuplot on PATH (pngcairo, svg and pdfcairo terminals).\n"
"Exit status: 0 success; 2 bad usage or input; 1 internal failure, or gnuplot\n"
"missing or failing (the CSV is kept).\n",
            plot_hybrid_name());
}

/* ------------------------------------------------------------ the command */

static int valid_text(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20) return 0;
    return 1;
}

/* The command line as read: plot's own options, the traces, and the
 * planning flags passed on to the planning parser. */
typedef struct plot_cmd {
    const char *fig_name, *out, *scripts;
    int title, data_only, spread; /* spread: -1 not given, 0 best, 1 all */
    double width, height;
    char **user; /* the planning flags with their values, nu of them */
    int nu;
    char **positional; /* the arguments after the figure's name, npos of them */
    int npos;
    const char *cluster_arg, *model_flag; /* --cluster's value; another planning flag */
    const char *runs_path;                /* validation --runs FILE */
    int user_gpus, user_seq;              /* --gpus, --seq (or its Megatron name) given */
    const figure *fig;
    const char *term; /* png, svg or pdf, from -o */
    char def_out[96];
    char *csv; /* the CSV's path: the image's, ending .csv */
} plot_cmd;

/* --size W,H and --spread all|best: 0, or 2 after the message. */
static int read_size(plot_cmd *pc, const char *val)
{
    char *e1 = NULL, *e2 = NULL;
    pc->width = strtod(val, &e1);
    if (e1 && (*e1 == ',' || *e1 == 'x')) pc->height = strtod(e1 + 1, &e2);
    if (!e1 || e1 == val || !e2 || *e2 || !(pc->width >= 1 && pc->width <= 40) || !(pc->height >= 1 && pc->height <= 40)) {
        sim_err("plot: --size '%s': not a size (valid: W,H in inches, each 1 to 40, e.g. 3.5,2.6)", val);
        return SIM_EXIT_USAGE;
    }
    return 0;
}

static int read_spread(plot_cmd *pc, const char *val)
{
    if (strcmp(val, "all") == 0) pc->spread = 1;
    else if (strcmp(val, "best") == 0) pc->spread = 0;
    else {
        sim_err("plot: --spread '%s': unknown value (valid: all, best)", val);
        return SIM_EXIT_USAGE;
    }
    return 0;
}

/* A planning flag at argv[*i], with its value when it takes one (the
 * planning parser's table says which: any of them, the Megatron-LM names
 * too), kept to pass on. */
static void keep_planning_flag(plot_cmd *pc, int argc, char **argv, int *i)
{
    const char *s = argv[*i];
    const size_t nl = strcspn(s, "=");
    const int has_eq = s[0] == '-' && s[1] == '-' && s[nl] == '=';
    char nm[64];
    snprintf(nm, sizeof nm, "%.*s", (int)nl, s);
    if (!strcmp(nm, "--cluster")) pc->cluster_arg = has_eq ? s + nl + 1 : *i + 1 < argc ? argv[*i + 1] : NULL;
    else if (!pc->model_flag) pc->model_flag = s;
    pc->user_gpus |= !strcmp(sim_alias_canonical(nm), "--gpus");
    pc->user_seq |= !strcmp(sim_alias_canonical(nm), "--seq");
    pc->user[pc->nu++] = argv[*i];
    /* not an option after it: a value left out is the planning parser's to
     * report (`--framework --seq 512K`) */
    if (!has_eq && sim_args_takes_value(s) && *i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0)
        pc->user[pc->nu++] = argv[++*i];
}

/* Reads the command line into pc: 0, -1 after --help, or 2 after the message. */
static int args_read(plot_cmd *pc, int argc, char **argv)
{
    static const char *const valued[] = {"--output", "--runs", "--scripts", "--size", "--spread"};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i], *val = NULL;
        const size_t nl = strcspn(s, "=");
        const int has_eq = s[0] == '-' && s[1] == '-' && s[nl] == '=';
#define FLAG(name) ((strcmp(s, name) == 0) || (has_eq && nl == strlen(name) && strncmp(s, name, nl) == 0))
        int opt = -1; /* which of valued, its value in val */
        for (int k = 0; k < 5 && opt < 0; k++)
            if (FLAG(valued[k]) || (k == 0 && !strcmp(s, "-o"))) opt = k;
        if (opt >= 0) {
            if (has_eq) val = s + nl + 1;
            else if (i + 1 < argc) val = argv[++i];
            else {
                sim_err("plot: %s needs a value (see ulysim plot --help)", valued[opt]);
                return SIM_EXIT_USAGE;
            }
        }
        if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
            help(stdout);
            return -1;
        } else if (opt == 0) pc->out = val;
        else if (opt == 1) pc->runs_path = val;
        else if (opt == 2) pc->scripts = val;
        else if (opt == 3 && read_size(pc, val)) return SIM_EXIT_USAGE;
        else if (opt == 4 && read_spread(pc, val)) return SIM_EXIT_USAGE;
        else if (opt >= 3) continue;
        else if (strcmp(s, "--no-title") == 0) pc->title = 0;
        else if (strcmp(s, "--data-only") == 0) pc->data_only = 1;
        else if (FLAG("--timeline")) {
            sim_err("plot: --timeline is the plan command's (valid: ulysim plan ... --timeline FILE; plot timeline "
                    "TRACE draws a harness run's schedule)");
            return SIM_EXIT_USAGE;
        } else if (FLAG("--format")) {
            sim_err("plot: --format is not used by plot (valid: -o FILE.png|FILE.svg|FILE.pdf picks the image format; the data is always CSV)");
            return SIM_EXIT_USAGE;
        } else if (s[0] != '-' || s[1] == 0) {
            if (pc->fig_name) pc->positional[pc->npos++] = argv[i];
            else pc->fig_name = s;
        } else {
            keep_planning_flag(pc, argc, argv, &i);
        }
#undef FLAG
    }
    return 0;
}

/* The figure named, and what it takes besides the flags (traces, a runs
 * file): 0, or 2 after the message. */
static int figure_check(plot_cmd *pc)
{
    char names[200];
    figure_names(names, sizeof names);
    if (!pc->fig_name) {
        sim_err("plot: no figure given (valid: %s; see ulysim plot --help)", names);
        return SIM_EXIT_USAGE;
    }
    const figure *fig = pc->fig = figure_find(pc->fig_name);
    if (!fig) {
        sim_err("plot: unknown figure '%s' (valid: %s)", pc->fig_name, names);
        return SIM_EXIT_USAGE;
    }
    if (pc->runs_path) { /* the runs of a runs file, not traces: plot_fig_validation.c */
        if (fig->data != fig_validation) {
            sim_err("plot %s: --runs %s: only `plot validation --runs FILE` takes a runs file (valid: plot validation "
                    "--runs FILE)", fig->name, pc->runs_path);
            return SIM_EXIT_USAGE;
        }
        /* each run is priced on its own row's model and cluster: a flag
         * would be ignored (a --cluster too) */
        const char *extra = pc->npos ? pc->positional[0] : pc->model_flag ? pc->model_flag
                                                         : pc->cluster_arg ? "--cluster" : NULL;
        if (extra) {
            sim_err("plot validation --runs %s: %s: the runs file gives each run's configuration, cluster included "
                    "(valid: plot validation --runs FILE with -o, --size, --no-title, --data-only, --scripts)",
                    pc->runs_path, extra);
            return SIM_EXIT_USAGE;
        }
        fig = pc->fig = &fig_validation_runs_def;
    }
    if (!fig->traces && pc->npos) {
        sim_err("plot %s: unexpected argument '%s' (valid: options start with --; see ulysim plot --help)", fig->name,
                pc->positional[0]);
        return SIM_EXIT_USAGE;
    }
    if (fig->traces && (pc->npos == 0 || (fig->traces == 1 && pc->npos != 1))) {
        sim_err("plot %s: %s (valid: %s written by ulyharness --out; e.g. ulysim plot %s run.trace -o %s.png)",
                fig->name, pc->npos ? "more than one trace given" : "no trace given",
                fig->traces == 1 ? "one TRACE" : "one or more TRACE files", fig->name, fig->name);
        return SIM_EXIT_USAGE;
    }
    if (fig->traces && pc->model_flag) {
        sim_err("plot %s: %s: the model, workload and layout come from the trace (valid: --cluster NAME|FILE to "
                "predict with another cluster profile, e.g. a calibrated one)", fig->name, pc->model_flag);
        return SIM_EXIT_USAGE;
    }
    return 0;
}

/* The image's format from -o and the CSV beside it, both checked before the
 * work: gnuplot writes the image by name, and the data goes to the CSV;
 * neither may replace an input, which is read only later (out_file.h). 0,
 * or 1 / 2 after the message. */
static int outputs_check(plot_cmd *pc)
{
    if (!pc->out) {
        snprintf(pc->def_out, sizeof pc->def_out, "%s.png", pc->fig->name);
        pc->out = pc->def_out;
    }
    const char *out = pc->out, *ext = strrchr(out, '.'), *slash = strrchr(out, '/');
    if (ext && (!slash || ext > slash)) {
        if (strcmp(ext, ".png") == 0) pc->term = "png";
        else if (strcmp(ext, ".svg") == 0) pc->term = "svg";
        else if (strcmp(ext, ".pdf") == 0) pc->term = "pdf";
    }
    if (!pc->term || ext == out || (slash && ext == slash + 1)) {
        sim_err("plot: -o '%s': unknown image format (valid: a file name ending in .png, .svg or .pdf)", out);
        return SIM_EXIT_USAGE;
    }
    if (!valid_text(out) || (pc->scripts && !valid_text(pc->scripts))) {
        sim_err("plot: file names with control characters are not supported");
        return SIM_EXIT_USAGE;
    }
    char why[4400];
    if (pc->runs_path) out_file_input_note(pc->runs_path, NULL);
    for (int k = 0; k < pc->npos; k++) out_file_input_note(pc->positional[k], NULL);
    const size_t base = (size_t)(ext - out);
    if (!(pc->csv = malloc(base + 5))) {
        sim_err("out of memory");
        return SIM_EXIT_INTERNAL;
    }
    memcpy(pc->csv, out, base);
    strcpy(pc->csv + base, ".csv");
    if (out_file_check(out, pc->data_only ? OUT_FILE_STREAM : OUT_FILE_BY_NAME, why, sizeof why)) {
        sim_err("plot: -o %s", why);
        return SIM_EXIT_USAGE;
    }
    if (out_file_check(pc->csv, OUT_FILE_STREAM, why, sizeof why)) {
        sim_err("plot: -o %s writes its data to %s", out, why);
        return SIM_EXIT_USAGE;
    }
    return 0;
}

/* The planning flags a figure cannot take: 0, or 2 after the message. */
static int flags_check(const figure *fig, const plot_cmd *pc, const sim_args *a)
{
    if (a->pin_pp > 1 || a->pin_pp == ULY_PP_SEARCH) {
        char ppv[32];
        if (a->pin_pp > 1) snprintf(ppv, sizeof ppv, "%lld", (long long)a->pin_pp);
        else snprintf(ppv, sizeof ppv, "auto");
        sim_err("plot %s: --pp %s: figures are drawn without a pipeline (valid: 1, or leave it out; ulysim --pp "
                "plans with one)", fig->name, ppv);
        return SIM_EXIT_USAGE;
    }
    if (a->pin_vpp > 1 || a->layers_per_vstage > 0) {
        if (a->pin_vpp > 1)
            sim_err("plot %s: --virtual-stages %lld: figures are drawn without a pipeline, so without interleaving "
                    "(valid: leave it out; ulysim --pp P --virtual-stages V plans with one)", fig->name,
                    (long long)a->pin_vpp);
        else
            sim_err("plot %s: --num-layers-per-virtual-pipeline-stage %lld: figures are drawn without a pipeline, so "
                    "without interleaving (valid: leave it out; ulysim --pp P --virtual-stages V plans with one)",
                    fig->name, (long long)a->layers_per_vstage);
        return SIM_EXIT_USAGE;
    }
    if (!fig->gpus_list && a->n_gpus != 1) {
        sim_err("plot %s: --gpus takes one GPU count here, got %d values (valid: %s)", fig->name, a->n_gpus, fig->x_what);
        return SIM_EXIT_USAGE;
    }
    if (!fig->seq_list && a->n_seq != 1) {
        sim_err("plot %s: --seq takes one length here, got %d values (valid: %s)", fig->name, a->n_seq, fig->x_what);
        return SIM_EXIT_USAGE;
    }
    if (fig->data == fig_max_batch && (a->global_batch || a->batch_set)) {
        /* a --batch changed the header and the left-out notes' pricing, not the data */
        sim_err("plot max-batch: --%s %lld: the figure searches the batch itself (valid: leave it out)",
                a->global_batch ? "global-batch" : "batch", (long long)(a->global_batch ? a->global_batch : a->batch));
        return SIM_EXIT_USAGE;
    }
    if (pc->spread >= 0 && fig->def_spread < 0) {
        sim_err("plot %s: --spread is not used by this figure (valid: with throughput, memory, breakdown)", fig->name);
        return SIM_EXIT_USAGE;
    }
    return 0;
}

/* The planning flags parsed as a `sweep` (lists allowed), after the
 * figure's GPUs and lengths where the user gave none (an option is given
 * once: the parser refuses a second), and resolved into c: 0, or 1 / 2
 * after the message. */
static int request_resolve(const plot_cmd *pc, char *argv0, sim_args *a, sim_ctx *c, plot_run *run)
{
    const figure *fig = pc->fig;
    char **pass = calloc((size_t)pc->nu + 8, sizeof *pass);
    if (!pass) {
        sim_err("out of memory");
        return SIM_EXIT_INTERNAL;
    }
    int np = 0;
    pass[np++] = argv0;
    pass[np++] = (char *)"sweep";
    if (!pc->user_gpus) pass[np++] = (char *)"--gpus", pass[np++] = (char *)fig->def_gpus;
    if (!pc->user_seq) pass[np++] = (char *)"--seq", pass[np++] = (char *)fig->def_seq;
    for (int i = 0; i < pc->nu; i++) pass[np++] = pc->user[i];
    char why[4400];
    int rc = sim_args_parse(np, pass, a, why, sizeof why);
    free(pass);
    if (rc) {
        sim_err("plot: %s", why);
        return rc;
    }
    if ((rc = flags_check(fig, pc, a)) != 0) return rc;
    run->spread_all = pc->spread >= 0 ? pc->spread : fig->def_spread > 0;
    run->data_only = pc->data_only;
    /* breakdown of best layouts: the same tokens in every strategy's step,
     * the recommendation's own global batch (plot_breakdown_batch) */
    if (fig->data == fig_breakdown && !run->spread_all && !a->global_batch) {
        if ((rc = sim_ctx_resolve(a, c, why, sizeof why)) != 0) {
            sim_err("plot: %s", why);
            return rc;
        }
        a->global_batch = plot_breakdown_batch(c, a->gpus[0], a->seq[0]);
        a->batch_set = 1;
    }
    if ((rc = sim_ctx_resolve(a, c, why, sizeof why)) != 0) sim_err("plot: %s", why);
    return rc;
}

/* The traces of a figure drawn from harness runs: 0, or 1 / 2 after the message. */
static int traces_load(const plot_cmd *pc, plot_run *run)
{
    run->traces = calloc((size_t)pc->npos, sizeof *run->traces);
    if (!run->traces) {
        sim_err("out of memory");
        return SIM_EXIT_INTERNAL;
    }
    run->n_traces = pc->npos;
    for (int k = 0; k < pc->npos; k++) {
        run->traces[k] = calloc(1, sizeof *run->traces[k]);
        if (!run->traces[k]) {
            sim_err("out of memory");
            return SIM_EXIT_INTERNAL;
        }
        char twhy[1200];
        int rc = plot_trace_load(pc->positional[k], pc->cluster_arg, run->traces[k], twhy, sizeof twhy);
        if (rc) {
            sim_err("plot %s: %s", pc->fig->name, twhy);
            return rc;
        }
    }
    return 0;
}

/* The command as typed, for the CSV's header (control bytes as '?'). */
static void command_line(plot_run *run, const char *fig_name, int argc, char **argv)
{
    size_t o = 0;
    o += (size_t)snprintf(run->command, sizeof run->command, "ulysim plot %s", fig_name);
    for (int i = 1; i < argc && o < sizeof run->command; i++) {
        if (strcmp(argv[i], fig_name) == 0) continue;
        int k = snprintf(run->command + o, sizeof run->command - o, " %s", argv[i]);
        if (k > 0) o += (size_t)k;
    }
    for (char *p = run->command; *p; p++)
        if ((unsigned char)*p < 0x20) *p = '?';
}

/* The figure's data as CSV beside the image: 0, or 1 / 2 after the message. */
static int csv_write(const plot_cmd *pc, plot_run *run, out_file *of)
{
    char why[4400];
    int rc = out_file_open(of, pc->csv, OUT_FILE_STREAM, why, sizeof why);
    if (rc) {
        sim_err("plot: %s", why);
        return rc;
    }
    rc = pc->fig->data(run, of->fp);
    if (rc == 0) plot_csv_notes(run, of->fp);
    /* kept under its private temporary until the image drawn from it is
     * done: gnuplot reading the final name could read a concurrent run's */
    if (rc == 0 && (pc->data_only ? out_file_commit(of, "", why, sizeof why) : out_file_finish(of, why, sizeof why))) {
        sim_err("plot: %s", why);
        rc = SIM_EXIT_INTERNAL;
    }
    return rc;
}

/* The CSV under the name gnuplot reads it by, private to this run: its
 * temporary; written in place (a FIFO, a device), a second copy beside the
 * image (IMAGE.data.tmp.PID, never renamed). 0, or 1 / 2 after the message. */
static int data_private(const plot_cmd *pc, plot_run *run, const out_file *csv, out_file *copy, const char **path)
{
    if (csv->tmp[0]) {
        *path = csv->tmp;
        return 0;
    }
    char name[4200], why[4400];
    snprintf(name, sizeof name, "%s.data", pc->out);
    int rc = out_file_open(copy, name, OUT_FILE_STREAM, why, sizeof why);
    if (!rc && !copy->tmp[0]) rc = 2, snprintf(why, sizeof why, "%s: not a new or regular file", name);
    if (!rc && (rc = pc->fig->data(run, copy->fp)) == 0) rc = out_file_finish(copy, why, sizeof why);
    if (rc) {
        sim_err("plot: the image's private copy of the data: %s", why);
        return rc;
    }
    *path = copy->tmp;
    return 0;
}

/* The strategies the script draws: the request's, or the traces' (each
 * once, in the registry's order). */
static void strategies_drawn(const plot_run *run, char *strat, size_t n)
{
    const sim_ctx *c = run->c;
    strat[0] = 0;
    for (int i = 0; i < c->n_strat && !run->fig->traces; i++) {
        size_t l = strlen(strat);
        snprintf(strat + l, n - l, "%s%s", i ? " " : "", sim_strategy_name(c->strat[i]));
    }
    if (!run->fig->traces) return;
    for (int i = 0; uly_strategy_get((uly_strategy_id)i); i++) {
        int any = 0;
        for (int k = 0; k < run->n_traces; k++) any |= (int)run->traces[k]->run.layout.strategy == i;
        size_t l = strlen(strat);
        if (any) snprintf(strat + l, n - l, "%s%s", l ? " " : "", sim_strategy_name(i));
    }
}

/* The title's second line: the traces, the runs file, or what of the
 * configuration differs from the defaults (short enough for one paper
 * column). */
static void subtitle(const plot_cmd *pc, const plot_run *run, const sim_args *a, char *sub, size_t n)
{
    const figure *fig = pc->fig;
    const sim_ctx *c = run->c;
    char b1[32];
    sub[0] = 0;
    if (!pc->title) return;
    if (fig->traces) {
        const plot_trace *t0 = run->traces[0];
        if (run->n_traces == 1)
            snprintf(sub, n, "%s %s on %d ranks, N = %lld, predicted with %s",
                     sim_strategy_name(t0->run.layout.strategy), t0->layout, t0->run.ranks,
                     (long long)t0->run.workload.seq, t0->cluster.name);
        else
            snprintf(sub, n, "%d harness runs, predicted with %s", run->n_traces, t0->cluster.name);
        return;
    }
    if (pc->runs_path) {
        const char *rb = strrchr(pc->runs_path, '/');
        snprintf(sub, n, "runs of %s, predicted by ulysim", rb ? rb + 1 : pc->runs_path);
        return;
    }
    size_t o = (size_t)snprintf(sub, n, "%s, %s", c->model.name, c->cluster.name);
    if (!fig->gpus_list && o < n) o += (size_t)snprintf(sub + o, n - o, ", %lld GPUs", (long long)a->gpus[0]);
    /* comm-volume's panels say their N (fixed, and per GPU) */
    if (!fig->seq_list && fig->data != fig_comm_volume && o < n) {
        sim_size_str(a->seq[0], b1, sizeof b1);
        o += (size_t)snprintf(sub + o, n - o, fig->data == fig_max_seq ? ", longest N searched up to %s" : ", N = %s", b1);
    }
    if (c->w.dtype != ULY_BF16 && o < n) o += (size_t)snprintf(sub + o, n - o, ", %s", uly_dtype_name(c->w.dtype));
    if (c->w.micro_batch != 1 && fig->data != fig_max_batch && o < n)
        o += (size_t)snprintf(sub + o, n - o, ", micro-batch %lld", (long long)c->w.micro_batch);
    if (fig->data == fig_breakdown && c->w.global_batch && o < n)
        o += (size_t)snprintf(sub + o, n - o, ", global batch %lld", (long long)c->w.global_batch);
    /* breakdown's bars name their layouts; its line names the batch instead */
    if (fig->def_spread >= 0 && fig->data != fig_breakdown && o < n)
        snprintf(sub + o, n - o, "%s", run->spread_all ? ", SP over all GPUs" : ", best layouts");
}

/* Whether the CSV holds a row to draw: a line past its header that is not
 * a # comment (a figure where no layout runs at any point has none, and
 * gnuplot's scripts cannot scale empty axes) */
static int csv_has_rows(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return 1; /* gnuplot says what is wrong with it */
    char line[512];
    int seen = 0, header = 0;
    while (!seen && fgets(line, sizeof line, f)) {
        const int whole = strchr(line, '\n') != NULL;
        if (line[0] != '#' && line[0] != '\n') {
            if (header) seen = 1;
            else header = 1;
        }
        /* the rest of a long line */
        while (!whole && fgets(line, sizeof line, f) && !strchr(line, '\n')) {
        }
    }
    fclose(f);
    return seen;
}

/* gnuplot renders the CSV with the figure's script into the image: 0, or
 * 1 / 2 after the message (the CSV stays). */
static int image_render(const plot_cmd *pc, const plot_run *run, const sim_args *a, out_file *img, const char *data)
{
    const figure *fig = pc->fig;
    const char *csv = pc->csv;
    char script[4096], why[4400];
    int fs = sim_gnuplot_script_find(pc->scripts, fig->name, script, sizeof script);
    if (fs == 2) {
        sim_err("plot: %s: no such script (valid: --scripts or $ULYSIM_PLOTS naming a directory with %s.gp); the data is in %s",
                script, fig->name, csv);
        return SIM_EXIT_USAGE;
    }
    if (fs) {
        char dirs[9000];
        sim_gnuplot_script_dirs(dirs, sizeof dirs);
        sim_err("plot: cannot find %s.gp in %s (set $ULYSIM_PLOTS or --scripts); the data is in %s", fig->name, dirs,
                csv);
        return SIM_EXIT_INTERNAL;
    }
    if (!csv_has_rows(data)) {
        sim_err("plot: nothing to draw: no layout runs at any point of the figure (valid: sizes and GPU counts "
                "where one fits; the # lines of %s say why each does not)", csv);
        return SIM_EXIT_USAGE;
    }
    int rc = out_file_open(img, pc->out, OUT_FILE_BY_NAME, why, sizeof why);
    if (rc) {
        sim_err("plot: %s; the data is in %s", why, csv);
        return rc;
    }
    const size_t vn = 3 * (strlen(pc->out) + strlen(data)) + 2048;
    char *vars = calloc(vn, 1), strat[256], sub[400];
    int bad = !vars;
    if (vars) {
        strategies_drawn(run, strat, sizeof strat);
        subtitle(pc, run, a, sub, sizeof sub);
        bad |= sim_gnuplot_assign(vars, vn, "data", data);
        bad |= sim_gnuplot_assign(vars, vn, "out", img->tmp);
        bad |= sim_gnuplot_assign(vars, vn, "term", pc->term);
        bad |= sim_gnuplot_assign(vars, vn, "subtitle", sub);
        bad |= sim_gnuplot_assign(vars, vn, "strategies", strat);
        if (pc->width > 0) {
            size_t l = strlen(vars);
            snprintf(vars + l, vn - l, "width=%.4g; height=%.4g; ", pc->width, pc->height);
        }
    }
    if (bad) {
        free(vars);
        sim_err("out of memory");
        return SIM_EXIT_INTERNAL;
    }
    rc = sim_gnuplot_run("plot", vars, script);
    free(vars);
    if (rc != 0) {
        fprintf(stderr, "ulysim: plot: the data is in %s\n", csv);
        return SIM_EXIT_INTERNAL;
    }
    if (!sim_image_whole(img->tmp, pc->term)) { /* a full disk cuts it short, and gnuplot still exits 0 */
        sim_err("plot: gnuplot wrote no whole %s image with %s (a full disk?); the data is in %s", pc->term, script,
                csv);
        return SIM_EXIT_INTERNAL;
    }
    if (out_file_commit(img, "", why, sizeof why)) {
        sim_err("plot: %s; the data is in %s", why, csv);
        return SIM_EXIT_INTERNAL;
    }
    return 0;
}

/* The image from a private copy of the data, then the pair renamed into
 * place, image first; the CSV is kept when the image fails ("the data is
 * in"). of: the CSV (finished, unrenamed), the image, the private copy. */
static int image_and_csv(const plot_cmd *pc, plot_run *run, const sim_args *a, out_file *of)
{
    const char *data = NULL;
    char why[4400];
    int rc = data_private(pc, run, &of[0], &of[2], &data);
    if (!rc) rc = image_render(pc, run, a, &of[1], data);
    out_file_discard(&of[2]);
    if (out_file_commit(&of[0], "", why, sizeof why)) {
        sim_err("plot: %s", why);
        return rc ? rc : SIM_EXIT_INTERNAL;
    }
    if (!rc) printf("%s\n%s\n", pc->out, pc->csv);
    return rc;
}

int sim_cmd_plot_main(int argc, char **argv);

int sim_cmd_plot_main(int argc, char **argv)
{
    plot_cmd pc = {.title = 1, .spread = -1};
    pc.user = calloc((size_t)argc + 1, sizeof *pc.user);
    pc.positional = calloc((size_t)argc + 1, sizeof *pc.positional);
    sim_args *a = malloc(sizeof *a);
    sim_ctx *c = malloc(sizeof *c);
    plot_run *run = calloc(1, sizeof *run);
    out_file *of = calloc(3, sizeof *of); /* the CSV, the image, the image's private copy of the data */
    if (of) of[0].slot = of[1].slot = of[2].slot = -1;
    int rc = SIM_EXIT_OK;
    if (!pc.user || !pc.positional || !a || !c || !run || !of) {
        sim_err("out of memory");
        rc = SIM_EXIT_INTERNAL;
    }
    if (!rc) rc = args_read(&pc, argc, argv);
    if (!rc) rc = figure_check(&pc);
    if (!rc) rc = outputs_check(&pc);
    if (!rc) rc = request_resolve(&pc, argv[0], a, c, run);
    if (!rc) {
        run->fig = pc.fig;
        run->c = c;
        run->runs_path = pc.runs_path;
        if (pc.fig->traces) rc = traces_load(&pc, run);
    }
    if (!rc) {
        command_line(run, pc.fig_name, argc, argv);
        rc = csv_write(&pc, run, &of[0]);
    }
    if (!rc && pc.data_only) printf("%s\n", pc.csv);
    else if (!rc) rc = image_and_csv(&pc, run, a, of);
    if (!rc && run->summary[0]) fputs(run->summary, stdout);
    free(pc.csv);
    if (of) {
        out_file_discard(&of[0]);
        out_file_discard(&of[1]);
        out_file_discard(&of[2]);
        free(of);
    }
    if (run && run->traces) {
        for (int k = 0; k < run->n_traces; k++)
            if (run->traces[k]) {
                trace_free(&run->traces[k]->run);
                free(run->traces[k]);
            }
        free(run->traces);
    }
    free(pc.user);
    free(pc.positional);
    free(a);
    free(c);
    free(run);
    return rc < 0 ? SIM_EXIT_OK : rc;
}
