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

int sim_cmd_plot_main(int argc, char **argv);

int sim_cmd_plot_main(int argc, char **argv)
{
    const char *fig_name = NULL, *out = NULL, *scripts = NULL;
    int title = 1, data_only = 0, spread = -1;
    double width = 0, height = 0;
    char names[200];
    figure_names(names, sizeof names);
    /* the planning flags go to sim_args_parse as a `sweep` (lists allowed),
     * after the figure's defaults so that the user's flags win */
    char **pass = calloc((size_t)argc + 12, sizeof *pass);
    if (!pass) {
        sim_err("out of memory");
        return SIM_EXIT_INTERNAL;
    }
    int np = 0, rc = SIM_EXIT_OK;
    char **user = calloc((size_t)argc + 1, sizeof *user);
    char **positional = calloc((size_t)argc + 1, sizeof *positional);
    int nu = 0, npos = 0;
    const char *cluster_arg = NULL, *model_flag = NULL; /* --cluster's value; another planning flag */
    const char *runs_path = NULL;                       /* validation --runs FILE */
    int user_gpus = 0, user_seq = 0;                    /* --gpus, --seq (or its Megatron name) given */
    sim_args *a = NULL;
    sim_ctx *c = NULL;
    plot_run *run = NULL;
    out_file *of = calloc(2, sizeof *of); /* the CSV, the image */
    char *csv = NULL;                      /* the CSV's path: the image's, ending .csv */
    if (of) of[0].slot = of[1].slot = -1;
    if (!user || !positional || !of) {
        sim_err("out of memory");
        rc = SIM_EXIT_INTERNAL;
        goto done;
    }
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const char *val = NULL;
        size_t nl = strcspn(s, "=");
        int has_eq = s[0] == '-' && s[1] == '-' && s[nl] == '=';
#define FLAG(name) ((strcmp(s, name) == 0) || (has_eq && nl == strlen(name) && strncmp(s, name, nl) == 0))
#define TAKE(name)                                                                                                    \
    do {                                                                                                              \
        if (has_eq) val = s + nl + 1;                                                                                 \
        else if (i + 1 < argc) val = argv[++i];                                                                       \
        else {                                                                                                        \
            sim_err("plot: %s needs a value (see ulysim plot --help)", name);                                        \
            rc = SIM_EXIT_USAGE;                                                                                      \
            goto done;                                                                                                \
        }                                                                                                             \
    } while (0)
        if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
            help(stdout);
            goto done;
        } else if (strcmp(s, "-o") == 0 || FLAG("--output")) {
            TAKE("--output");
            out = val;
        } else if (FLAG("--runs")) {
            TAKE("--runs");
            runs_path = val;
        } else if (FLAG("--scripts")) {
            TAKE("--scripts");
            scripts = val;
        } else if (FLAG("--size")) {
            TAKE("--size");
            char *e1 = NULL, *e2 = NULL;
            width = strtod(val, &e1);
            if (e1 && (*e1 == ',' || *e1 == 'x')) height = strtod(e1 + 1, &e2);
            if (!e1 || e1 == val || !e2 || *e2 || !(width >= 1 && width <= 40) || !(height >= 1 && height <= 40)) {
                sim_err("plot: --size '%s': not a size (valid: W,H in inches, each 1 to 40, e.g. 3.5,2.6)", val);
                rc = SIM_EXIT_USAGE;
                goto done;
            }
        } else if (FLAG("--spread")) {
            TAKE("--spread");
            if (strcmp(val, "all") == 0) spread = 1;
            else if (strcmp(val, "best") == 0) spread = 0;
            else {
                sim_err("plot: --spread '%s': unknown value (valid: all, best)", val);
                rc = SIM_EXIT_USAGE;
                goto done;
            }
        } else if (strcmp(s, "--no-title") == 0) {
            title = 0;
        } else if (strcmp(s, "--data-only") == 0) {
            data_only = 1;
        } else if (FLAG("--timeline")) {
            sim_err("plot: --timeline is the plan command's (valid: ulysim plan ... --timeline FILE; plot timeline "
                    "TRACE draws a harness run's schedule)");
            rc = SIM_EXIT_USAGE;
            goto done;
        } else if (FLAG("--format")) {
            sim_err("plot: --format is not used by plot (valid: -o FILE.png|FILE.svg|FILE.pdf picks the image format; the data is always CSV)");
            rc = SIM_EXIT_USAGE;
            goto done;
        } else if (s[0] != '-' || s[1] == 0) {
            if (fig_name) positional[npos++] = argv[i];
            else fig_name = s;
        } else {
            /* a planning flag, with its value when it takes one (the
             * planning parser's table says which: any of them, the
             * Megatron-LM names too) */
            if (FLAG("--cluster")) cluster_arg = has_eq ? s + nl + 1 : i + 1 < argc ? argv[i + 1] : NULL;
            else if (!model_flag) model_flag = s;
            {
                char nm[64];
                snprintf(nm, sizeof nm, "%.*s", (int)nl, s);
                user_gpus |= !strcmp(sim_alias_canonical(nm), "--gpus");
                user_seq |= !strcmp(sim_alias_canonical(nm), "--seq");
            }
            user[nu++] = argv[i];
            /* not an option after it: a value left out is the planning
             * parser's to report (`--framework --seq 512K`) */
            if (!has_eq && sim_args_takes_value(s) && i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
                user[nu++] = argv[++i];
        }
#undef FLAG
#undef TAKE
    }
    if (!fig_name) {
        sim_err("plot: no figure given (valid: %s; see ulysim plot --help)", names);
        rc = SIM_EXIT_USAGE;
        goto done;
    }
    const figure *fig = figure_find(fig_name);
    if (!fig) {
        sim_err("plot: unknown figure '%s' (valid: %s)", fig_name, names);
        rc = SIM_EXIT_USAGE;
        goto done;
    }
    if (runs_path) { /* the runs of a runs file, not traces: plot_fig_validation.c */
        if (fig->data != fig_validation) {
            sim_err("plot %s: --runs %s: only `plot validation --runs FILE` takes a runs file (valid: plot validation "
                    "--runs FILE)", fig->name, runs_path);
            rc = SIM_EXIT_USAGE;
            goto done;
        }
        /* each run is priced on its own row's model and cluster: a flag
         * would be ignored (a --cluster too) */
        const char *extra = npos ? positional[0] : model_flag ? model_flag : cluster_arg ? "--cluster" : NULL;
        if (extra) {
            sim_err("plot validation --runs %s: %s: the runs file gives each run's configuration, cluster included "
                    "(valid: plot validation --runs FILE with -o, --size, --no-title, --data-only, --scripts)",
                    runs_path, extra);
            rc = SIM_EXIT_USAGE;
            goto done;
        }
        fig = &fig_validation_runs_def;
    }
    if (!fig->traces && npos) {
        sim_err("plot %s: unexpected argument '%s' (valid: options start with --; see ulysim plot --help)", fig->name,
                positional[0]);
        rc = SIM_EXIT_USAGE;
        goto done;
    }
    if (fig->traces && (npos == 0 || (fig->traces == 1 && npos != 1))) {
        sim_err("plot %s: %s (valid: %s written by ulyharness --out; e.g. ulysim plot %s run.trace -o %s.png)",
                fig->name, npos ? "more than one trace given" : "no trace given",
                fig->traces == 1 ? "one TRACE" : "one or more TRACE files", fig->name, fig->name);
        rc = SIM_EXIT_USAGE;
        goto done;
    }
    if (fig->traces && model_flag) {
        sim_err("plot %s: %s: the model, workload and layout come from the trace (valid: --cluster NAME|FILE to "
                "predict with another cluster profile, e.g. a calibrated one)", fig->name, model_flag);
        rc = SIM_EXIT_USAGE;
        goto done;
    }
    char def_out[96];
    if (!out) {
        snprintf(def_out, sizeof def_out, "%s.png", fig->name);
        out = def_out;
    }
    const char *ext = strrchr(out, '.');
    const char *slash = strrchr(out, '/');
    const char *term = NULL;
    if (ext && (!slash || ext > slash)) {
        if (strcmp(ext, ".png") == 0) term = "png";
        else if (strcmp(ext, ".svg") == 0) term = "svg";
        else if (strcmp(ext, ".pdf") == 0) term = "pdf";
    }
    if (!term || ext == out || (slash && ext == slash + 1)) {
        sim_err("plot: -o '%s': unknown image format (valid: a file name ending in .png, .svg or .pdf)", out);
        rc = SIM_EXIT_USAGE;
        goto done;
    }
    if (!valid_text(out) || (scripts && !valid_text(scripts))) {
        sim_err("plot: file names with control characters are not supported");
        rc = SIM_EXIT_USAGE;
        goto done;
    }
    {
        /* before the work: gnuplot writes the image by name, and the data
         * goes to the CSV beside it; neither may replace an input, which is
         * read only later (out_file.h) */
        char why[4400];
        if (runs_path) out_file_input_note(runs_path, NULL);
        for (int k = 0; k < npos; k++) out_file_input_note(positional[k], NULL);
        const size_t base = (size_t)(ext - out);
        if (!(csv = malloc(base + 5))) {
            sim_err("out of memory");
            rc = SIM_EXIT_INTERNAL;
            goto done;
        }
        memcpy(csv, out, base);
        strcpy(csv + base, ".csv");
        if (out_file_check(out, data_only ? OUT_FILE_STREAM : OUT_FILE_BY_NAME, why, sizeof why)) {
            sim_err("plot: -o %s", why);
            rc = SIM_EXIT_USAGE;
            goto done;
        }
        if (out_file_check(csv, OUT_FILE_STREAM, why, sizeof why)) {
            sim_err("plot: -o %s writes its data to %s", out, why);
            rc = SIM_EXIT_USAGE;
            goto done;
        }
    }

    pass[np++] = argv[0];
    pass[np++] = (char *)"sweep";
    /* the figure's GPUs and lengths, where the user gave none (an option
     * is given once: the parser refuses a second) */
    if (!user_gpus) {
        pass[np++] = (char *)"--gpus";
        pass[np++] = (char *)fig->def_gpus;
    }
    if (!user_seq) {
        pass[np++] = (char *)"--seq";
        pass[np++] = (char *)fig->def_seq;
    }
    for (int i = 0; i < nu; i++) pass[np++] = user[i];
    a = malloc(sizeof *a);
    c = malloc(sizeof *c);
    run = calloc(1, sizeof *run);
    if (!a || !c || !run) {
        sim_err("out of memory");
        rc = SIM_EXIT_INTERNAL;
        goto done;
    }
    char why[4400];
    rc = sim_args_parse(np, pass, a, why, sizeof why);
    if (rc) {
        sim_err("plot: %s", why);
        goto done;
    }
    if (a->pin_pp > 1 || a->pin_pp == ULY_PP_SEARCH) {
        char ppv[32];
        if (a->pin_pp > 1) snprintf(ppv, sizeof ppv, "%lld", (long long)a->pin_pp);
        else snprintf(ppv, sizeof ppv, "auto");
        sim_err("plot %s: --pp %s: figures are drawn without a pipeline (valid: 1, or leave it out; ulysim --pp "
                "plans with one)", fig->name, ppv);
        rc = SIM_EXIT_USAGE;
        goto done;
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
        rc = SIM_EXIT_USAGE;
        goto done;
    }
    if (!fig->gpus_list && a->n_gpus != 1) {
        sim_err("plot %s: --gpus takes one GPU count here, got %d values (valid: %s)", fig->name, a->n_gpus, fig->x_what);
        rc = SIM_EXIT_USAGE;
        goto done;
    }
    if (!fig->seq_list && a->n_seq != 1) {
        sim_err("plot %s: --seq takes one length here, got %d values (valid: %s)", fig->name, a->n_seq, fig->x_what);
        rc = SIM_EXIT_USAGE;
        goto done;
    }
    if (fig->data == fig_max_batch && (a->global_batch || a->batch_set)) {
        /* a --batch changed the header and the left-out notes' pricing, not the data */
        sim_err("plot max-batch: --%s %lld: the figure searches the batch itself (valid: leave it out)",
                a->global_batch ? "global-batch" : "batch", (long long)(a->global_batch ? a->global_batch : a->batch));
        rc = SIM_EXIT_USAGE;
        goto done;
    }
    if (spread >= 0 && fig->def_spread < 0) {
        sim_err("plot %s: --spread is not used by this figure (valid: with throughput, memory, breakdown)", fig->name);
        rc = SIM_EXIT_USAGE;
        goto done;
    }
    run->spread_all = spread >= 0 ? spread : fig->def_spread > 0;
    run->data_only = data_only;
    /* breakdown of best layouts: the same tokens in every strategy's step,
     * the recommendation's own global batch (plot_breakdown_batch) */
    if (fig->data == fig_breakdown && !run->spread_all && !a->global_batch) {
        rc = sim_ctx_resolve(a, c, why, sizeof why);
        if (rc) {
            sim_err("plot: %s", why);
            goto done;
        }
        a->global_batch = plot_breakdown_batch(c, a->gpus[0], a->seq[0]);
        a->batch_set = 1;
    }
    rc = sim_ctx_resolve(a, c, why, sizeof why);
    if (rc) {
        sim_err("plot: %s", why);
        goto done;
    }
    run->fig = fig;
    run->c = c;
    run->runs_path = runs_path;
    if (fig->traces) {
        run->traces = calloc((size_t)npos, sizeof *run->traces);
        if (!run->traces) {
            sim_err("out of memory");
            rc = SIM_EXIT_INTERNAL;
            goto done;
        }
        run->n_traces = npos;
        for (int k = 0; k < npos; k++) {
            run->traces[k] = calloc(1, sizeof *run->traces[k]);
            if (!run->traces[k]) {
                sim_err("out of memory");
                rc = SIM_EXIT_INTERNAL;
                goto done;
            }
            char twhy[1200];
            rc = plot_trace_load(positional[k], cluster_arg, run->traces[k], twhy, sizeof twhy);
            if (rc) {
                sim_err("plot %s: %s", fig->name, twhy);
                goto done;
            }
        }
    }
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

    /* the CSV beside the image */
    const size_t ol = strlen(out);
    rc = out_file_open(&of[0], csv, OUT_FILE_STREAM, why, sizeof why);
    if (rc) {
        sim_err("plot: %s", why);
        goto done;
    }
    rc = fig->data(run, of[0].fp);
    if (rc == 0) plot_csv_notes(run, of[0].fp);
    if (rc == 0 && out_file_commit(&of[0], "", why, sizeof why)) {
        sim_err("plot: %s", why);
        rc = SIM_EXIT_INTERNAL;
    }
    if (rc) goto done;
    if (data_only) {
        printf("%s\n", csv);
        goto done;
    }

    /* gnuplot */
    char script[4096];
    int fs = sim_gnuplot_script_find(scripts, fig->name, script, sizeof script);
    if (fs == 2) {
        sim_err("plot: %s: no such script (valid: --scripts or $ULYSIM_PLOTS naming a directory with %s.gp); the data is in %s",
                script, fig->name, csv);
        rc = SIM_EXIT_USAGE;
        goto done;
    }
    if (fs) {
        char dirs[9000];
        sim_gnuplot_script_dirs(dirs, sizeof dirs);
        sim_err("plot: cannot find %s.gp in %s (set $ULYSIM_PLOTS or --scripts); the data is in %s", fig->name, dirs,
                csv);
        rc = SIM_EXIT_INTERNAL;
        goto done;
    }
    rc = out_file_open(&of[1], out, OUT_FILE_BY_NAME, why, sizeof why);
    if (rc) {
        sim_err("plot: %s; the data is in %s", why, csv);
        goto done;
    }
    size_t vn = 3 * (ol + strlen(csv)) + 2048;
    char *vars = calloc(vn, 1);
    int bad = !vars;
    if (vars) {
        char strat[256] = "", sub[400] = "", b1[32];
        for (int i = 0; i < c->n_strat && !fig->traces; i++) {
            size_t l = strlen(strat);
            snprintf(strat + l, sizeof strat - l, "%s%s", i ? " " : "", sim_strategy_name(c->strat[i]));
        }
        if (fig->traces) /* the traces' strategies, each once, in the registry's order */
            for (int i = 0; uly_strategy_get((uly_strategy_id)i); i++) {
                int any = 0;
                for (int k = 0; k < run->n_traces; k++) any |= (int)run->traces[k]->run.layout.strategy == i;
                size_t l = strlen(strat);
                if (any) snprintf(strat + l, sizeof strat - l, "%s%s", l ? " " : "", sim_strategy_name(i));
            }
        if (title && fig->traces) {
            const plot_trace *t0 = run->traces[0];
            if (run->n_traces == 1)
                snprintf(sub, sizeof sub, "%s %s on %d ranks, N = %lld, predicted with %s",
                         sim_strategy_name(t0->run.layout.strategy), t0->layout, t0->run.ranks,
                         (long long)t0->run.workload.seq, t0->cluster.name);
            else
                snprintf(sub, sizeof sub, "%d harness runs, predicted with %s", run->n_traces, t0->cluster.name);
        } else if (title && runs_path) {
            const char *rb = strrchr(runs_path, '/');
            snprintf(sub, sizeof sub, "runs of %s, predicted by ulysim", rb ? rb + 1 : runs_path);
        } else if (title) {
            /* short enough for one paper column: what differs from the defaults only */
            size_t o = (size_t)snprintf(sub, sizeof sub, "%s, %s", c->model.name, c->cluster.name);
            if (!fig->gpus_list && o < sizeof sub)
                o += (size_t)snprintf(sub + o, sizeof sub - o, ", %lld GPUs", (long long)a->gpus[0]);
            /* comm-volume's panels say their N (fixed, and per GPU) */
            if (!fig->seq_list && fig->data != fig_comm_volume && o < sizeof sub) {
                sim_size_str(a->seq[0], b1, sizeof b1);
                o += (size_t)snprintf(sub + o, sizeof sub - o, fig->data == fig_max_seq ? ", longest N searched up to %s" : ", N = %s", b1);
            }
            if (c->w.dtype != ULY_BF16 && o < sizeof sub)
                o += (size_t)snprintf(sub + o, sizeof sub - o, ", %s", uly_dtype_name(c->w.dtype));
            if (c->w.micro_batch != 1 && fig->data != fig_max_batch && o < sizeof sub)
                o += (size_t)snprintf(sub + o, sizeof sub - o, ", micro-batch %lld", (long long)c->w.micro_batch);
            if (fig->data == fig_breakdown && c->w.global_batch && o < sizeof sub)
                o += (size_t)snprintf(sub + o, sizeof sub - o, ", global batch %lld", (long long)c->w.global_batch);
            /* breakdown's bars name their layouts; its line names the batch instead */
            if (fig->def_spread >= 0 && fig->data != fig_breakdown && o < sizeof sub)
                snprintf(sub + o, sizeof sub - o, "%s", run->spread_all ? ", SP over all GPUs" : ", best layouts");
        }
        bad |= sim_gnuplot_assign(vars, vn, "data", csv);
        bad |= sim_gnuplot_assign(vars, vn, "out", of[1].tmp);
        bad |= sim_gnuplot_assign(vars, vn, "term", term);
        bad |= sim_gnuplot_assign(vars, vn, "subtitle", sub);
        bad |= sim_gnuplot_assign(vars, vn, "strategies", strat);
        if (width > 0) {
            size_t l = strlen(vars);
            snprintf(vars + l, vn - l, "width=%.4g; height=%.4g; ", width, height);
        }
    }
    if (bad) {
        free(vars);
        sim_err("out of memory");
        rc = SIM_EXIT_INTERNAL;
        goto done;
    }
    if (sim_gnuplot_run("plot", vars, script) != 0) {
        fprintf(stderr, "ulysim: plot: the data is in %s\n", csv);
        free(vars);
        rc = SIM_EXIT_INTERNAL;
        goto done;
    }
    free(vars);
    if (!sim_image_whole(of[1].tmp, term)) { /* a full disk cuts it short, and gnuplot still exits 0 */
        sim_err("plot: gnuplot wrote no whole %s image with %s (a full disk?); the data is in %s", term, script,
                csv);
        rc = SIM_EXIT_INTERNAL;
        goto done;
    }
    if (out_file_commit(&of[1], "", why, sizeof why)) {
        sim_err("plot: %s; the data is in %s", why, csv);
        rc = SIM_EXIT_INTERNAL;
        goto done;
    }
    printf("%s\n%s\n", out, csv);
done:
    free(csv);
    if (of) {
        out_file_discard(&of[0]);
        out_file_discard(&of[1]);
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
    free(pass);
    free(user);
    free(positional);
    free(a);
    free(c);
    free(run);
    return rc;
}
