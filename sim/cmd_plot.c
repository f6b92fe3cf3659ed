/* cmd_plot.c: `ulysim plot FIGURE [options] -o out.png|svg|pdf`: paper-style
 * figures. The figure's numbers come from libulysim (the same calls as the
 * planning commands, so `ulysim --format json` gives the same numbers for the
 * same configuration); they are written as CSV beside the image (out.csv:
 * '#' lines name the configuration, the command and every column with its
 * unit), then gnuplot runs the figure's script plots/FIGURE.gp on it. The
 * scripts stay usable by hand: each documents its variables at the top.
 *
 * Scripts are found in: --scripts DIR, else $ULYSIM_PLOTS, else the source
 * tree's plots/ when it exists (running from a build tree), else the
 * installed share/ulysim/plots. gnuplot is $GNUPLOT, else `gnuplot` on PATH.
 * Both files are written under temporary names and renamed when complete. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "output.h"
#include "plot_gnuplot.h"
#include "preset.h"

extern char **environ;

#ifndef ULY_PLOT_DIR_SOURCE
#define ULY_PLOT_DIR_SOURCE "plots"
#endif
#ifndef ULY_PLOT_DIR_INSTALLED
#define ULY_PLOT_DIR_INSTALLED "/usr/local/share/ulysim/plots"
#endif

#define GIB 1073741824.0
#define MAX_BATCH_CAP (1LL << 20) /* max-batch: searched up to 1M sequences */

/* ------------------------------------------------------------- the figures */

typedef struct plot_run plot_run;
typedef int (*fig_data_fn)(plot_run *r, FILE *f);

typedef struct figure {
    const char *name;
    const char *summary;
    const char *def_gpus, *def_seq; /* defaults, given to the argument parser first */
    const char *def_strategies;     /* NULL: all */
    int gpus_list, seq_list;        /* 1: takes a list or range */
    int def_spread;                 /* -1: no --spread; 0: best layout; 1: all GPUs */
    int traces;                     /* 0: from the model; 1: one trace; 2: one or more */
    const char *x_what;             /* what the figure's axis needs, for messages */
    fig_data_fn data;
} figure;

struct plot_run {
    const figure *fig;
    sim_ctx *c;
    char **trace_paths;  /* the trace figures' TRACE arguments */
    int n_traces;
    const char *cluster_override; /* --cluster given with a trace figure */
    struct trace_run **runs;      /* the traces, loaded */
    int spread_all;     /* 1: each strategy over all GPUs; 0: its best layout */
    char command[1024]; /* the ulysim command line, for the CSV header */
    char notes[8192];   /* '#' notes after the rows: points left out and why */
    size_t notes_len;
};

static void note(plot_run *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void note(plot_run *r, const char *fmt, ...)
{
    if (r->notes_len + 2 >= sizeof r->notes) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(r->notes + r->notes_len, sizeof r->notes - r->notes_len - 1, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    r->notes_len += (size_t)k;
    if (r->notes_len > sizeof r->notes - 2) r->notes_len = sizeof r->notes - 2;
    r->notes[r->notes_len++] = '\n';
    r->notes[r->notes_len] = 0;
}

/* ------------------------------------------------------------ CSV helpers */

typedef struct col {
    const char *name;
    const char *what; /* meaning and unit */
} col;

static const char *recompute_name(uly_recompute r)
{
    return r == ULY_RECOMPUTE_FULL ? "full" : r == ULY_RECOMPUTE_SELECTIVE ? "selective" : "none";
}

static void csv_traces(plot_run *r, FILE *f);

/* The '#' header: figure, command, model, cluster, workload, the figure's own
 * lines, the columns; then the line of column names. */
static void csv_header(plot_run *r, FILE *f, const char *const *about, const col *cols, int ncols)
{
    const sim_ctx *c = r->c;
    const uly_model *m = &c->model;
    const uly_cluster *cl = &c->cluster;
    const uly_workload *w = &c->w;
    fprintf(f, "# ulysim %s plot %s: %s\n", ULY_VERSION, r->fig->name, r->fig->summary);
    fprintf(f, "# command   %s\n", r->command);
    if (r->fig->traces) {
        csv_traces(r, f);
        goto rest;
    }
    fprintf(f, "# model     %s: L %lld, h %lld, a %lld heads, k %lld KV heads, d %lld, f %lld %s, V %lld; %.2f B parameters\n",
            m->name, (long long)m->layers, (long long)m->hidden, (long long)m->heads, (long long)m->kv_heads,
            (long long)m->head_dim, (long long)m->ffn_hidden, m->swiglu ? "SwiGLU" : "GELU", (long long)m->vocab,
            uly_model_params(m) / 1e9);
    fprintf(f, "# cluster   %s: %s, %lld nodes x %lld GPUs, %.0f TFLOP/s %s, %.1f GiB HBM; in-node %.0f GB/s, NIC %.0f GB/s per GPU, %s\n",
            cl->name, cl->gpu.name, (long long)cl->nodes, (long long)cl->gpus_per_node,
            cl->gpu.peak_flops[w->dtype] / 1e12, uly_dtype_name(w->dtype), cl->gpu.hbm_bytes / GIB,
            cl->intra_bw_Bps / 1e9, cl->nic_bw_Bps / 1e9, uly_topo_name(cl->topo));
    char gb[64];
    if (w->global_batch) snprintf(gb, sizeof gb, "global batch %lld", (long long)w->global_batch);
    else snprintf(gb, sizeof gb, "global batch micro-batch x dp");
    fprintf(f, "# workload  micro-batch %lld, %s, %s, %s, %s, recompute %s, ZeRO-%d, %s split\n",
            (long long)w->micro_batch, gb, uly_dtype_name(w->dtype), w->causal ? "causal" : "non-causal",
            w->flash ? "flash attention" : "materialised scores", recompute_name(w->recompute), w->zero_stage,
            w->split == ULY_SPLIT_CONTIGUOUS ? "contiguous" : "zigzag");
rest:
    for (int i = 0; about && about[i]; i++) fprintf(f, "# %-9s %s\n", i ? "" : "figure", about[i]);
    for (int i = 0; i < ncols; i++) fprintf(f, "# %-9s %s: %s\n", i ? "" : "columns", cols[i].name, cols[i].what);
    for (int i = 0; i < ncols; i++) fprintf(f, "%s%s", i ? "," : "", cols[i].name);
    fputc('\n', f);
}

static void csv_notes(plot_run *r, FILE *f)
{
    if (!r->notes_len) return;
    const char *p = r->notes;
    int first = 1;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        fprintf(f, "# %-9s %.*s\n", first ? "left out" : "", (int)l, p);
        first = 0;
        p += l + (e ? 1 : 0);
    }
}

/* "u8.r4", "tp8.dp2": the layout's degrees above 1. */
static void layout_str(const uly_layout *l, char *b, size_t n) { sim_degrees_str(l, b, n); }

/* The reasons of a summary as one line without commas (CSV cells stay plain). */
static void reasons_plain(const sim_ctx *c, const sim_summary *s, char *b, size_t n)
{
    sim_reasons_str(c, s, 1, b, n);
    if (!b[0] && s->note[0]) snprintf(b, n, "%s", s->note);
    for (char *p = b; *p; p++)
        if (*p == ',' || *p == '"') *p = ';';
}

static int has_fatal(const uly_reason *rs, int n, uly_reason_code code)
{
    for (int i = 0; i < n && i < ULY_MAX_REASONS; i++)
        if (rs[i].fatal && rs[i].code == code) return 1;
    return 0;
}

/* Fatal reasons that only say "does not fit this cluster" (memory, GPU
 * count), as opposed to shapes that make the layout meaningless. */
static int shapes_valid(const uly_reason *rs, int n)
{
    for (int i = 0; i < n && i < ULY_MAX_REASONS; i++) {
        if (!rs[i].fatal) continue;
        if (rs[i].code != ULY_R_OUT_OF_MEMORY && rs[i].code != ULY_R_GPUS_EXCEED_CLUSTER &&
            rs[i].code != ULY_R_GPUS_NOT_NODE_MULTIPLE && rs[i].code != ULY_R_BATCH_NOT_DIVISIBLE)
            return 0;
    }
    return 1;
}

static void size_words(int64_t v, char *b, size_t n) { sim_size_approx(v, b, n); }

/* ---------------------------------------------------- figure 1: comm-volume */

static int fig_comm_volume(plot_run *r, FILE *f)
{
    const sim_ctx *c = r->c;
    const sim_args *a = c->a;
    int64_t n_fixed = a->seq[0], p0 = a->gpus[0];
    if (n_fixed < p0) {
        sim_err("plot comm-volume: --seq %lld is shorter than the first GPU count %lld (valid: --seq >= --gpus, "
                "the scaled panel keeps --seq / %lld tokens per GPU)",
                (long long)n_fixed, (long long)p0, (long long)p0);
        return SIM_EXIT_USAGE;
    }
    int64_t per_gpu = n_fixed / p0;
    char b1[32], b2[32], l1[200], l2[200];
    size_words(n_fixed, b1, sizeof b1);
    size_words(per_gpu, b2, sizeof b2);
    snprintf(l1, sizeof l1, "panel fixed: N = %s tokens (%lld) on every GPU count", b1, (long long)n_fixed);
    snprintf(l2, sizeof l2, "panel scaled: N grows with the GPUs, N = %s tokens (%lld) per GPU x gpus", b2,
             (long long)per_gpu);
    const char *about[] = {
        "communication bytes sent per GPU for one layer and one micro-batch (the per_layer.comm_bytes_per_rank",
        "of `ulysim --format json`), each strategy spread over all GPUs: its own degree = gpus, dp = 1",
        "(usp: Ulysses inside a node, the ring across nodes; pinned --ulysses/--ring/--tp are kept)",
        l1, l2, NULL};
    static const col cols[] = {
        {"panel", "fixed (N constant) or scaled (N proportional to gpus)"},
        {"strategy", "ulysses, ring, rsa, allgather-cp, megatron-sp, usp, megatron-tp"},
        {"gpus", "GPUs [count]"},
        {"seq", "sequence length N [tokens]"},
        {"layout", "degrees above 1 (u: Ulysses, r: context/ring, tp: tensor, dp: data)"},
        {"comm_fwd_bytes", "bytes sent per GPU, one layer, forward [bytes]"},
        {"comm_bwd_bytes", "bytes sent per GPU, one layer, backward with recompute [bytes]"},
        {"comm_total_bytes", "fwd + bwd [bytes]"},
        {"fits", "1: the layout also fits in memory (not needed for the volume)"},
    };
    csv_header(r, f, about, cols, (int)(sizeof cols / sizeof cols[0]));
    uly_plan *plan = malloc(sizeof *plan);
    uly_result *res = malloc(sizeof *res);
    if (!plan || !res) {
        free(plan);
        free(res);
        sim_err("out of memory");
        return SIM_EXIT_INTERNAL;
    }
    static const char *const panels[2] = {"fixed", "scaled"};
    for (int pi = 0; pi < 2; pi++)
        for (int si = 0; si < c->n_strat; si++)
            for (int gi = 0; gi < a->n_gpus; gi++) {
                uly_strategy_id s = c->strat[si];
                int64_t P = a->gpus[gi];
                int64_t N = pi == 0 ? n_fixed : per_gpu * P;
                if (pi == 1 && per_gpu > INT64_MAX / P) continue;
                uly_layout l;
                sim_pure_layout(c, s, P, &l);
                uly_workload w = c->w;
                w.seq = N;
                memset(res, 0, sizeof *res);
                uly_status st = uly_layout_gpus(&l) == P ? uly_evaluate(&c->model, &w, &c->cluster, &l, plan, res)
                                                         : ULY_EINVAL;
                char ls[64], why[400] = "";
                layout_str(&l, ls, sizeof ls);
                if (st != ULY_OK || !shapes_valid(res->reasons, res->n_reasons)) {
                    if (st == ULY_OK) {
                        sim_summary sm;
                        memset(&sm, 0, sizeof sm);
                        sim_summary_from_result(&sm, res);
                        reasons_plain(c, &sm, why, sizeof why);
                    } else {
                        snprintf(why, sizeof why, "%s", uly_layout_gpus(&l) == P ? uly_status_str(st) : "pinned degrees do not divide the GPUs");
                    }
                    note(r, "%s %s, %lld GPUs (%s): %s", panels[pi], sim_strategy_name(s), (long long)P, ls, why);
                    continue;
                }
                fprintf(f, "%s,%s,%lld,%lld,%s,%lld,%lld,%lld,%d\n", panels[pi], sim_strategy_name(s), (long long)P,
                        (long long)N, ls, (long long)res->comm_fwd_bytes, (long long)res->comm_bwd_bytes,
                        (long long)(res->comm_fwd_bytes + res->comm_bwd_bytes), res->feasible ? 1 : 0);
            }
    free(plan);
    free(res);
    return 0;
}

/* ----------------------------------------------------- figure 2: throughput */

/* Strategy s at (P GPUs, N tokens): its best layout (--spread best, as
 * `ulysim --gpus P --seq N`), or its own degree over all GPUs with dp = 1
 * (--spread all, as `ulysim --gpus P --seq N --strategy S` with the degrees
 * pinned: --ulysses P, --ring P, --tp P; usp: Ulysses inside a node). */
static void strategy_at(const plot_run *r, uly_strategy_id s, int64_t P, int64_t N, sim_summary *out)
{
    const sim_ctx *c = r->c;
    if (!r->spread_all) {
        sim_best(c, s, P, N, out);
        return;
    }
    memset(out, 0, sizeof *out);
    out->strategy = (int32_t)s;
    out->gpus = P;
    out->seq = N;
    out->micro_batch = c->w.micro_batch;
    sim_pure_layout(c, s, P, &out->layout);
    if (uly_layout_gpus(&out->layout) != P) {
        out->status = SIM_ROW_NOLAYOUT;
        snprintf(out->note, sizeof out->note, "the pinned degrees do not divide %lld GPUs", (long long)P);
        return;
    }
    uly_plan *plan = malloc(sizeof *plan);
    uly_result *res = calloc(1, sizeof *res);
    if (!plan || !res) {
        free(plan);
        free(res);
        out->status = SIM_ROW_ERROR;
        snprintf(out->note, sizeof out->note, "out of memory");
        return;
    }
    uly_workload w = c->w;
    w.seq = N;
    uly_layout l = out->layout;
    uly_status st = uly_evaluate(&c->model, &w, &c->cluster, &l, plan, res);
    if (st == ULY_OK) {
        sim_summary_from_result(out, res);
        out->layout = l;
        if (out->micro_batch <= 0) out->micro_batch = w.micro_batch;
        out->status = shapes_valid(res->reasons, res->n_reasons) ? SIM_ROW_OK : SIM_ROW_NOLAYOUT;
    } else {
        out->status = st == ULY_EOVERFLOW ? SIM_ROW_OVERFLOW : SIM_ROW_NOLAYOUT;
        char why[160] = "";
        if (uly_layout_check(&l, why, sizeof why) != ULY_OK && why[0]) snprintf(out->note, sizeof out->note, "%s", why);
        else snprintf(out->note, sizeof out->note, "%s", uly_status_str(st));
    }
    free(plan);
    free(res);
}

/* The figure line saying which layouts: for the CSV header. */
static void spread_line(const plot_run *r, int64_t P, const char *seq_words, char *b, size_t n)
{
    if (r->spread_all)
        snprintf(b, n, "each strategy over all %lld GPUs at %s: its own degree = %lld, dp = 1 (usp: Ulysses inside a node, ring across), "
                 "as `ulysim --gpus %lld --seq N --strategy S` with --ulysses/--ring/--tp pinned to the layout column",
                 (long long)P, seq_words, (long long)P, (long long)P);
    else
        snprintf(b, n, "best layout of each strategy on %lld GPUs at %s (as `ulysim --gpus %lld --seq N%s`)", (long long)P,
                 seq_words, (long long)P, r->c->w.global_batch ? " --global-batch G" : "");
}

/* spread_line for the figures at one (P GPUs, N tokens): memory, breakdown. */
static void spread_line_at(const plot_run *r, int64_t P, int64_t N, char *b, size_t n)
{
    char words[64];
    size_words(N, words, sizeof words);
    snprintf(words + strlen(words), sizeof words - strlen(words), " tokens");
    spread_line(r, P, words, b, n);
}

static int is_oom(const sim_summary *s)
{
    return sim_has_numbers(s) && !s->feasible && has_fatal(s->reasons, s->n_reasons, ULY_R_OUT_OF_MEMORY);
}

/* The figures at one GPU count (throughput, memory, breakdown) have no point
 * to draw when the pinned degrees do not divide it: 0, or the usage error,
 * reported. */
static int pins_check(plot_run *r, int64_t P)
{
    int rc = sim_check_pins_divide(r->c, P, r->notes, sizeof r->notes);
    if (rc) sim_err("plot %s: %s", r->fig->name, r->notes);
    return rc;
}

/* strategy_at for one row of a figure, with the layout as text in ls: 0, or
 * SIM_EXIT_INTERNAL (reported) when libulysim itself failed. */
static int row_at(const plot_run *r, uly_strategy_id id, int64_t P, int64_t N, sim_summary *s, char *ls, size_t ls_n)
{
    strategy_at(r, id, P, N, s);
    if (s->status == SIM_ROW_ERROR) {
        sim_err("internal: %s", s->note);
        return SIM_EXIT_INTERNAL;
    }
    layout_str(&s->layout, ls, ls_n);
    return 0;
}

/* A row the one-point figures (memory, breakdown) cannot draw, having no
 * numbers: 1, with the reason noted; an infeasible plan with numbers is
 * drawn (fits = 0). */
static int row_unpriced(plot_run *r, const sim_summary *s, const char *ls)
{
    if (sim_has_numbers(s) && s->status == SIM_ROW_OK) return 0;
    char why[600];
    reasons_plain(r->c, s, why, sizeof why);
    note(r, "%s (%s): %s", sim_strategy_name(s->strategy), ls, why);
    return 1;
}

static int fig_throughput(plot_run *r, FILE *f)
{
    const sim_ctx *c = r->c;
    const sim_args *a = c->a;
    int64_t P = a->gpus[0];
    char l1[400];
    spread_line(r, P, "each sequence length N", l1, sizeof l1);
    const char *about[] = {
        l1,
        "fits = 0 and oom = 1: out of memory; tflops_per_gpu is then what the closest layout (least memory over",
        "the HBM) would reach if it fitted: the figure marks these points, it does not join them",
        NULL};
    static const col cols[] = {
        {"strategy", "ulysses, ring, rsa, allgather-cp, megatron-sp, usp, megatron-tp"},
        {"seq", "sequence length N [tokens]"},
        {"gpus", "GPUs [count]"},
        {"layout", "degrees above 1 of the best layout"},
        {"micro_batch", "sequences per replica per micro-step"},
        {"fits", "1: fits in memory and has valid shapes"},
        {"oom", "1: only memory stops it"},
        {"mem_bytes", "memory per GPU [bytes]"},
        {"tflops_per_gpu", "model TFLOP/s per GPU [1e12 FLOP/s] (step.tflops_per_gpu)"},
        {"tokens_per_s", "tokens per second, all GPUs [tokens/s]"},
        {"mfu", "model FLOPs utilisation [fraction]"},
        {"step_s", "one optimizer step [s]"},
    };
    int rc = pins_check(r, P);
    if (rc) return rc;
    csv_header(r, f, about, cols, (int)(sizeof cols / sizeof cols[0]));
    for (int si = 0; si < c->n_strat; si++)
        for (int qi = 0; qi < a->n_seq; qi++) {
            sim_summary s;
            char ls[64], why[600];
            if (row_at(r, c->strat[si], P, a->seq[qi], &s, ls, sizeof ls)) return SIM_EXIT_INTERNAL;
            /* out-of-memory points stay: the figure marks them */
            int fits = s.status == SIM_ROW_OK && s.feasible;
            if (!sim_has_numbers(&s) || s.status != SIM_ROW_OK || (!fits && !is_oom(&s))) {
                reasons_plain(c, &s, why, sizeof why);
                note(r, "%s at %lld tokens (%s): %s", sim_strategy_name(s.strategy), (long long)s.seq, ls, why);
                continue;
            }
            fprintf(f, "%s,%lld,%lld,%s,%lld,%d,%d,%.0f,%.10g,%.10g,%.10g,%.10g\n", sim_strategy_name(s.strategy),
                    (long long)s.seq, (long long)P, ls, (long long)s.micro_batch, fits, is_oom(&s), s.mem.total_bytes,
                    s.time.tflops_per_gpu, s.time.tokens_per_s, s.time.mfu, s.time.step_s);
        }
    return 0;
}

/* ------------------------------------------- figures over GPU counts: 3, 3b */

/* One point of a figure whose x axis is the GPU count: strategy s on P GPUs,
 * its row written to f or why not noted. res: scratch for the search (a
 * uly_result is too large for the stack). 0, or an exit status that stops
 * the figure (reported). */
typedef int (*gpus_point_fn)(plot_run *r, FILE *f, uly_strategy_id s, int64_t P, uly_result *res);

/* Runs point on each strategy and GPU count. A count the pinned degrees do
 * not divide is a point left out, not an error: the axis is a list or range. */
static int gpus_points(plot_run *r, FILE *f, gpus_point_fn point)
{
    const sim_ctx *c = r->c;
    const sim_args *a = c->a;
    uly_result *res = malloc(sizeof *res);
    if (!res) {
        sim_err("out of memory");
        return SIM_EXIT_INTERNAL;
    }
    int rc = 0;
    for (int si = 0; si < c->n_strat && !rc; si++)
        for (int gi = 0; gi < a->n_gpus && !rc; gi++) {
            uly_strategy_id s = c->strat[si];
            int64_t P = a->gpus[gi];
            char why[600];
            if (sim_check_pins_divide(c, P, why, sizeof why)) {
                note(r, "%s on %lld GPUs: %s", sim_strategy_name(s), (long long)P, why);
                continue;
            }
            rc = point(r, f, s, P, res);
        }
    free(res);
    return rc;
}

/* -------------------------------------------------------- figure 3: max-seq */

/* The longest sequence up to the bound --seq that some layout of s fits on P GPUs. */
static int max_seq_point(plot_run *r, FILE *f, uly_strategy_id s, int64_t P, uly_result *at)
{
    const sim_ctx *c = r->c;
    int64_t hi = c->a->seq[0], best = 0;
    memset(at, 0, sizeof *at);
    uly_status st = uly_search_max_seq(&c->model, &c->w, &c->cluster, P, s, &c->opts, hi, &best, at);
    if (st != ULY_OK && st != ULY_EINVAL && st != ULY_EOVERFLOW) {
        sim_err("internal: uly_search_max_seq(%s, %lld GPUs): %s", sim_strategy_name(s), (long long)P,
                uly_status_str(st));
        return SIM_EXIT_INTERNAL;
    }
    if (st != ULY_OK || best <= 0) {
        /* why not: the reasons at a short length every layout divides */
        sim_summary sm;
        char why[600];
        int64_t probe = P <= hi / 2 ? 2 * P : hi;
        sim_best(c, s, P, probe, &sm);
        reasons_plain(c, &sm, why, sizeof why);
        note(r, "%s on %lld GPUs fits no sequence length: %s", sim_strategy_name(s), (long long)P, why);
        return 0;
    }
    char ls[64];
    layout_str(&at->layout, ls, sizeof ls);
    fprintf(f, "%s,%lld,%lld,%s,%.0f,%.10g,%d\n", sim_strategy_name(s), (long long)P, (long long)best, ls,
            at->mem.total_bytes, at->time.tokens_per_s, best == hi);
    return 0;
}

static int fig_max_seq(plot_run *r, FILE *f)
{
    int64_t hi = r->c->a->seq[0];
    char l1[200], b[32];
    size_words(hi, b, sizeof b);
    snprintf(l1, sizeof l1, "longest sequence each strategy fits on each GPU count (as `ulysim max-seq --gpus P`), searched up to %s = %lld tokens",
             b, (long long)hi);
    const char *about[] = {l1, "layout: the best layout at that length; at_bound = 1: fits the bound, the true limit is higher", NULL};
    static const col cols[] = {
        {"strategy", "ulysses, ring, rsa, allgather-cp, megatron-sp, usp, megatron-tp"},
        {"gpus", "GPUs [count]"},
        {"max_seq", "longest sequence that fits [tokens]"},
        {"layout", "degrees above 1 of the best layout at max_seq"},
        {"mem_bytes", "memory per GPU at max_seq [bytes]"},
        {"tokens_per_s", "tokens per second at max_seq [tokens/s]"},
        {"at_bound", "1: max_seq is the search bound (--seq)"},
    };
    csv_header(r, f, about, cols, (int)(sizeof cols / sizeof cols[0]));
    return gpus_points(r, f, max_seq_point);
}

/* ------------------------------------------------------ figure 3b: max-batch */

/* 1 when some layout of s on P GPUs fits micro-batch b at sequence N. */
static int batch_fits(const sim_ctx *c, uly_strategy_id s, int64_t P, int64_t N, int64_t b, uly_result *res)
{
    uly_workload w = c->w;
    w.seq = N;
    w.micro_batch = b;
    w.global_batch = 0;
    uly_search_opts o = c->opts;
    o.search_micro_batch = 0;
    uly_search_stats stats = {0, 0};
    memset(res, 0, sizeof *res);
    uly_status st = uly_search_best(&c->model, &w, &c->cluster, P, s, &o, res, &stats);
    return st == ULY_OK && res->feasible;
}

/* The largest micro-batch at --seq that some layout of s fits on P GPUs. */
static int max_batch_point(plot_run *r, FILE *f, uly_strategy_id s, int64_t P, uly_result *res)
{
    const sim_ctx *c = r->c;
    int64_t N = c->a->seq[0];
    if (!batch_fits(c, s, P, N, 1, res)) {
        sim_summary sm;
        char why[600];
        sim_best(c, s, P, N, &sm);
        reasons_plain(c, &sm, why, sizeof why);
        note(r, "%s on %lld GPUs fits no batch at %lld tokens: %s", sim_strategy_name(s), (long long)P,
             (long long)N, why);
        return 0;
    }
    int64_t lo = 1, hi = 0; /* lo fits; hi (when > 0) does not */
    for (int64_t bb = 2; bb <= MAX_BATCH_CAP; bb *= 2) {
        if (batch_fits(c, s, P, N, bb, res)) lo = bb;
        else { hi = bb; break; }
    }
    if (hi)
        while (hi - lo > 1) {
            int64_t mid = lo + (hi - lo) / 2;
            if (batch_fits(c, s, P, N, mid, res)) lo = mid;
            else hi = mid;
        }
    else note(r, "%s on %lld GPUs: fits the search bound of %lld sequences", sim_strategy_name(s),
              (long long)P, (long long)MAX_BATCH_CAP);
    batch_fits(c, s, P, N, lo, res);
    char ls[64];
    layout_str(&res->layout, ls, sizeof ls);
    fprintf(f, "%s,%lld,%lld,%lld,%lld,%lld,%s,%.0f,%.10g\n", sim_strategy_name(s), (long long)P,
            (long long)N, (long long)lo, (long long)res->layout.dp, (long long)(lo * res->layout.dp), ls,
            res->mem.total_bytes, res->time.tokens_per_s);
    return 0;
}

static int fig_max_batch(plot_run *r, FILE *f)
{
    int64_t N = r->c->a->seq[0];
    char l1[240], b[32];
    size_words(N, b, sizeof b);
    snprintf(l1, sizeof l1, "largest micro-batch b (sequences of %s = %lld tokens per model replica) for which some layout fits,",
             b, (long long)N);
    const char *about[] = {
        l1,
        "on each GPU count (as `ulysim --gpus P --seq N --batch b`: fits at b, not at b + 1; searched up to 1M);",
        "max_batch = b x dp of the best layout at b: sequences in flight at once on all GPUs", NULL};
    static const col cols[] = {
        {"strategy", "ulysses, ring, rsa, allgather-cp, megatron-sp, usp, megatron-tp"},
        {"gpus", "GPUs [count]"},
        {"seq", "sequence length N [tokens]"},
        {"max_micro_batch", "largest micro-batch that fits [sequences per replica]"},
        {"dp", "data-parallel degree of the best layout at max_micro_batch"},
        {"max_batch", "max_micro_batch x dp [sequences]"},
        {"layout", "degrees above 1 of that layout"},
        {"mem_bytes", "memory per GPU there [bytes]"},
        {"tokens_per_s", "tokens per second there [tokens/s]"},
    };
    csv_header(r, f, about, cols, (int)(sizeof cols / sizeof cols[0]));
    return gpus_points(r, f, max_batch_point);
}

/* --------------------------------------------------------- figure 4: memory */

static int fig_memory(plot_run *r, FILE *f)
{
    const sim_ctx *c = r->c;
    const sim_args *a = c->a;
    int64_t P = a->gpus[0], N = a->seq[0];
    char l1[400];
    spread_line_at(r, P, N, l1, sizeof l1);
    const char *about[] = {"memory per GPU by term:", l1,
                           "the *_bytes term columns sum to total_bytes (memory.terms of the JSON output); capacity_bytes: the HBM", NULL};
    col cols[8 + ULY_MEM_TERM_COUNT];
    char names[ULY_MEM_TERM_COUNT][48];
    int n = 0;
    cols[n++] = (col){"strategy", "ulysses, ring, rsa, allgather-cp, megatron-sp, usp, megatron-tp"};
    cols[n++] = (col){"layout", "degrees above 1 of the best layout"};
    cols[n++] = (col){"gpus", "GPUs [count]"};
    cols[n++] = (col){"seq", "sequence length N [tokens]"};
    cols[n++] = (col){"micro_batch", "sequences per replica per micro-step"};
    cols[n++] = (col){"fits", "1: fits in memory and has valid shapes"};
    for (int t = 0; t < ULY_MEM_TERM_COUNT; t++) {
        snprintf(names[t], sizeof names[t], "%s_bytes", uly_mem_term_name((uly_mem_term)t));
        cols[n++] = (col){names[t], "memory per GPU of this term [bytes]"};
    }
    cols[n++] = (col){"total_bytes", "memory per GPU [bytes] (memory.total_bytes)"};
    cols[n++] = (col){"capacity_bytes", "usable HBM per GPU [bytes]"};
    int rc = pins_check(r, P);
    if (rc) return rc;
    csv_header(r, f, about, cols, n);
    for (int si = 0; si < c->n_strat; si++) {
        sim_summary s;
        char ls[64];
        if (row_at(r, c->strat[si], P, N, &s, ls, sizeof ls)) return SIM_EXIT_INTERNAL;
        if (row_unpriced(r, &s, ls)) continue;
        fprintf(f, "%s,%s,%lld,%lld,%lld,%d", sim_strategy_name(s.strategy), ls, (long long)P, (long long)N,
                (long long)s.micro_batch, s.feasible ? 1 : 0);
        for (int t = 0; t < ULY_MEM_TERM_COUNT; t++) fprintf(f, ",%.0f", s.mem.term_bytes[t]);
        fprintf(f, ",%.0f,%.0f\n", s.mem.total_bytes, s.mem.capacity_bytes);
    }
    return 0;
}

/* ------------------------------------------------------ figure 6: breakdown */

static int fig_breakdown(plot_run *r, FILE *f)
{
    const sim_ctx *c = r->c;
    const sim_args *a = c->a;
    int64_t P = a->gpus[0], N = a->seq[0];
    char l1[400];
    spread_line_at(r, P, N, l1, sizeof l1);
    const char *about[] = {
        "one optimizer step split by what its time is spent on:", l1,
        "(with --spread best and no --global-batch, the global batch is GPUs x micro-batch, so that every",
        "strategy's step holds the same tokens: as `ulysim --gpus P --seq N --batch B --global-batch P*B`)",
        "compute_s + comm_exposed_s + step_fixed_s = step_s; comm_overlapped_s runs hidden under compute_s",
        "(layers: micro_steps x L x the per_layer times of the JSON output; compute_s includes model_s)",
        "(plot takes no --pp: figures are drawn without a pipeline)", NULL};
    static const col cols[] = {
        {"strategy", "ulysses, ring, rsa, allgather-cp, megatron-sp, usp, megatron-tp"},
        {"layout", "degrees above 1 of the best layout"},
        {"gpus", "GPUs [count]"},
        {"seq", "sequence length N [tokens]"},
        {"micro_batch", "sequences per replica per micro-step"},
        {"micro_steps", "micro-steps per optimizer step"},
        {"fits", "1: fits in memory and has valid shapes"},
        {"compute_s", "compute on the critical path per step: layers plus embedding/logits [s]"},
        {"comm_exposed_s", "communication not hidden, per step [s]"},
        {"step_fixed_s", "per step: optimizer and exposed gradient synchronisation [s]"},
        {"comm_overlapped_s", "communication hidden under compute, per step [s]"},
        {"step_s", "one optimizer step [s] (step.time_s)"},
        {"tokens_per_step", "tokens per optimizer step, all GPUs [tokens]"},
        {"layer_compute_s", "per layer, one micro-batch (per_layer.compute_s) [s]"},
        {"layer_comm_exposed_s", "per layer, one micro-batch (per_layer.comm_exposed_s) [s]"},
        {"layer_comm_overlapped_s", "per layer, one micro-batch (per_layer.comm_overlapped_s) [s]"},
        {"model_s", "per micro-batch outside the layers (step.model_s) [s]"},
    };
    int rc = pins_check(r, P);
    if (rc) return rc;
    csv_header(r, f, about, cols, (int)(sizeof cols / sizeof cols[0]));
    for (int si = 0; si < c->n_strat; si++) {
        sim_summary s;
        char ls[64];
        if (row_at(r, c->strat[si], P, N, &s, ls, sizeof ls)) return SIM_EXIT_INTERNAL;
        if (row_unpriced(r, &s, ls)) continue;
        const uly_timing *t = &s.time;
        /* plot refuses --pp, so a stage is the whole model and there is no bubble */
        const double L = (double)t->stage_layers, ms = (double)(t->micro_steps > 0 ? t->micro_steps : 1);
        double compute = ms * (L * t->compute_s + t->model_s);
        double exposed = ms * L * t->comm_exposed_s;
        double hidden = ms * L * t->comm_overlapped_s;
        fprintf(f, "%s,%s,%lld,%lld,%lld,%lld,%d,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g\n",
                sim_strategy_name(s.strategy), ls, (long long)P, (long long)N, (long long)s.micro_batch,
                (long long)t->micro_steps, s.feasible ? 1 : 0, compute, exposed, t->step_fixed_s, hidden, t->step_s,
                t->tokens_per_s * t->step_s, t->compute_s, t->comm_exposed_s, t->comm_overlapped_s, t->model_s);
    }
    return 0;
}

/* ------------------------------------------- figures 5: validation, timeline */

/* A plan trace of ulyharness (traces/FORMAT.md, version 1) with the plan
 * rebuilt and priced by libulysim: predicted op times beside measured ones. */
typedef struct trace_op {
    int seen;
    char name[40], phase[12], kind[12], coll[24];
    double median, min, max;  /* measured seconds */
    int exposed;              /* time_is "exposed": only the part not hidden under compute */
    int64_t bytes, bytes_planned;
} trace_op;

typedef struct trace_run {
    char path[1024];
    char base[256];           /* the file name without its directory, safe in a CSV cell */
    char strategy[32], layout[64], created[40];
    int ranks, ok, n_order;
    int order[ULY_PLAN_MAX_OPS]; /* execution order of op ids */
    trace_op ops[ULY_PLAN_MAX_OPS];
    uly_model m;
    uly_workload w;
    uly_cluster c;
    char cluster_from[1100];
    uly_plan plan;
    uly_result res;
} trace_run;

static const cJSON *jget(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }
static double jnum(const cJSON *o, const char *k, double d)
{
    const cJSON *v = jget(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : d;
}
static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = jget(o, k);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}
static void jcopy(char *dst, size_t n, const cJSON *o, const char *k)
{
    const char *v = jstr(o, k);
    snprintf(dst, n, "%s", v ? v : "");
    for (char *p = dst; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == ',' || *p == '"') *p = '_';
}

/* Reads one line of any length; NULL at the end. */
static char *read_line(FILE *f, char **buf, size_t *cap)
{
    ssize_t n = getline(buf, cap, f);
    if (n < 0) return NULL;
    while (n > 0 && ((*buf)[n - 1] == '\n' || (*buf)[n - 1] == '\r')) (*buf)[--n] = 0;
    return *buf;
}

#define TFAIL(...)                                                                                                    \
    do {                                                                                                              \
        snprintf(why, why_n, __VA_ARGS__);                                                                            \
        goto fail;                                                                                                    \
    } while (0)

/* Loads and prices a trace. Returns 0, or 2 (bad input) with a reason. */
static int trace_load(const char *path, const char *cluster_override, trace_run *t, char *why, size_t why_n)
{
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", path);
    const char *sl = strrchr(t->path, '/');
    snprintf(t->base, sizeof t->base, "%.255s", sl ? sl + 1 : t->path);
    for (char *p = t->base; *p; p++)
        if (*p == ',' || *p == '"' || *p == '#' || (unsigned char)*p < 0x20) *p = '_';
    char *line = NULL;
    size_t cap = 0;
    cJSON *h = NULL;
    int lineno = 1, have_summary = 0;
    char lib[400] = "";
    FILE *f = fopen(path, "r");
    if (!f) TFAIL("cannot read it: %s", strerror(errno));
    if (!read_line(f, &line, &cap)) TFAIL("empty file (valid: a trace written by ulyharness --out)");
    h = cJSON_Parse(line);
    if (!h) TFAIL("line 1 is not JSON (valid: a trace written by ulyharness --out, JSON lines)");
    const char *fmt = jstr(h, "format");
    if (!fmt || strcmp(fmt, "ulysim-trace") != 0) TFAIL("line 1: format is not \"ulysim-trace\" (valid: a trace written by ulyharness --out)");
    double ver = jnum(h, "version", -1);
    if (ver != 1) TFAIL("trace format version %g is not supported (valid: 1)", ver);
    const char *kind = jstr(h, "kind");
    if (!kind || strcmp(kind, "plan") != 0)
        TFAIL("kind \"%s\": a micro-benchmark trace has no plan to predict (valid: a trace of a plan, ulyharness --strategy S)", kind ? kind : "?");
    jcopy(t->created, sizeof t->created, h, "created");
    t->ranks = (int)jnum(jget(h, "hardware"), "ranks", 0);

    /* model and workload */
    const cJSON *m = jget(h, "model"), *w = jget(h, "workload"), *pl = jget(h, "plan"), *cl = jget(h, "cluster");
    if (!m || !w || !pl || !cl) TFAIL("header lacks model, workload, plan or cluster (valid: FORMAT.md version 1)");
    snprintf(t->m.name, sizeof t->m.name, "%s", jstr(m, "name") ? jstr(m, "name") : "trace");
    t->m.layers = (int64_t)jnum(m, "layers", 0);
    t->m.hidden = (int64_t)jnum(m, "hidden", 0);
    t->m.heads = (int64_t)jnum(m, "heads", 0);
    t->m.kv_heads = (int64_t)jnum(m, "kv_heads", 0);
    t->m.head_dim = (int64_t)jnum(m, "head_dim", 0);
    t->m.ffn_hidden = (int64_t)jnum(m, "ffn_hidden", 0);
    t->m.vocab = (int64_t)jnum(m, "vocab", 0);
    t->m.swiglu = cJSON_IsTrue(jget(m, "swiglu"));
    t->m.tied_embeddings = cJSON_IsTrue(jget(m, "tied_embeddings"));
    t->m.dropout = cJSON_IsTrue(jget(m, "dropout"));
    t->m.embed_norm = cJSON_IsTrue(jget(m, "embed_norm"));
    if (uly_model_check(&t->m, lib, sizeof lib) != ULY_OK) TFAIL("header model: %s", lib);
    t->w.seq = (int64_t)jnum(w, "seq", 0);
    t->w.micro_batch = (int64_t)jnum(w, "micro_batch", 0);
    t->w.global_batch = (int64_t)jnum(w, "global_batch", 0);
    const char *dt = jstr(w, "dtype");
    t->w.dtype = dt && !strcmp(dt, "fp32") ? ULY_FP32 : dt && !strcmp(dt, "fp16") ? ULY_FP16 : ULY_BF16;
    t->w.causal = cJSON_IsTrue(jget(w, "causal"));
    t->w.flash = cJSON_IsTrue(jget(w, "flash"));
    const char *rc = jstr(w, "recompute");
    t->w.recompute = rc && !strcmp(rc, "full") ? ULY_RECOMPUTE_FULL
                   : rc && !strcmp(rc, "selective") ? ULY_RECOMPUTE_SELECTIVE : ULY_RECOMPUTE_NONE;
    t->w.zero_stage = (int)jnum(w, "zero_stage", 0);
    const char *sp = jstr(w, "split");
    t->w.split = sp && !strcmp(sp, "contiguous") ? ULY_SPLIT_CONTIGUOUS : ULY_SPLIT_ZIGZAG;
    if (uly_workload_check(&t->w, lib, sizeof lib) != ULY_OK) TFAIL("header workload: %s", lib);

    /* the cluster: --cluster, else the profile the run used (verbatim in the
     * header), with the node shape the plan was built for */
    if (cluster_override) {
        if (sim_cluster_load(cluster_override, &t->c, lib, sizeof lib) != 0) TFAIL("--cluster %s: %s", cluster_override, lib);
        snprintf(t->cluster_from, sizeof t->cluster_from, "--cluster %s", cluster_override);
    } else {
        const cJSON *pre = jget(cl, "preset");
        char *text = pre ? cJSON_PrintUnformatted(pre) : NULL;
        const char *src = jstr(cl, "source");
        if (text) {
            int e = sim_cluster_parse(text, strlen(text), "header cluster.preset", &t->c, lib, sizeof lib);
            free(text);
            if (e) TFAIL("%s", lib);
            snprintf(t->cluster_from, sizeof t->cluster_from, "the header's cluster.preset (%s)", src ? src : "?");
        } else if (src) {
            if (sim_cluster_load(src, &t->c, lib, sizeof lib) != 0) TFAIL("header cluster.source: %s", lib);
            snprintf(t->cluster_from, sizeof t->cluster_from, "%s", src);
        } else {
            TFAIL("header cluster has neither preset nor source");
        }
    }
    const cJSON *used = jget(cl, "used");
    t->c.nodes = (int64_t)jnum(used, "nodes", (double)t->c.nodes);
    t->c.gpus_per_node = (int64_t)jnum(used, "gpus_per_node", (double)t->c.gpus_per_node);
    if (t->c.gpus_per_leaf < t->c.gpus_per_node) t->c.gpus_per_leaf = t->c.gpus_per_node;
    if (uly_cluster_check(&t->c, lib, sizeof lib) != ULY_OK) TFAIL("cluster: %s", lib);

    /* the layout, with its rank order */
    jcopy(t->strategy, sizeof t->strategy, pl, "strategy");
    const uly_strategy *st = uly_strategy_find(t->strategy);
    if (!st) TFAIL("header plan.strategy \"%s\" is unknown", t->strategy);
    const cJSON *l = jget(pl, "layout");
    uly_layout lay;
    uly_layout_init(&lay, st->id, (int64_t)jnum(l, "ulysses", 1), (int64_t)jnum(l, "ring", 1),
                    (int64_t)jnum(l, "tp", 1), (int64_t)jnum(l, "dp", 1));
    const cJSON *ord = jget(l, "order");
    if (cJSON_IsArray(ord) && cJSON_GetArraySize(ord) == 4) {
        uly_group g4[4];
        int good = 1;
        for (int i = 0; i < 4; i++) {
            const cJSON *it = cJSON_GetArrayItem(ord, i);
            g4[i] = ULY_GROUP_NONE;
            for (int g = 1; g < ULY_GROUP_COUNT; g++)
                if (cJSON_IsString(it) && strcmp(it->valuestring, uly_group_name((uly_group)g)) == 0) g4[i] = (uly_group)g;
            good &= g4[i] != ULY_GROUP_NONE;
        }
        if (good) memcpy(lay.order, g4, sizeof g4);
    }
    sim_degrees_str(&lay, t->layout, sizeof t->layout);
    uly_reason rs[ULY_MAX_REASONS];
    int nr = 0;
    if (uly_plan_build(&t->m, &t->w, &t->c, &lay, &t->plan, rs, &nr) != ULY_OK)
        TFAIL("libulysim cannot rebuild the plan of the header (%s %s)", t->strategy, t->layout);
    const cJSON *hops = jget(pl, "ops");
    if (!cJSON_IsArray(hops) || cJSON_GetArraySize(hops) != t->plan.n_ops)
        TFAIL("the header's plan has %d ops, libulysim builds %d for it (a trace of another ulysim version?)",
              cJSON_IsArray(hops) ? cJSON_GetArraySize(hops) : 0, t->plan.n_ops);
    for (int i = 0; i < t->plan.n_ops; i++) {
        const char *nm = jstr(cJSON_GetArrayItem(hops, i), "name");
        if (!nm || strcmp(nm, uly_op_type_name(t->plan.ops[i].type)) != 0)
            TFAIL("op %d is \"%s\" in the header, \"%s\" in the plan libulysim builds (a trace of another ulysim version?)",
                  i, nm ? nm : "?", uly_op_type_name(t->plan.ops[i].type));
    }
    if (uly_plan_price(&t->m, &t->w, &t->c, &t->plan, &t->res) != ULY_OK) TFAIL("libulysim cannot price the plan");

    /* the op lines and the summary */
    while (read_line(f, &line, &cap)) {
        lineno++;
        if (!line[0]) continue;
        cJSON *o = cJSON_Parse(line);
        if (!o) TFAIL("line %d is not JSON", lineno);
        const char *type = jstr(o, "type");
        if (type && strcmp(type, "summary") == 0) {
            have_summary = 1;
            t->ok = cJSON_IsTrue(jget(o, "ok"));
        } else if (type && strcmp(type, "op") == 0) {
            double idd = jnum(o, "id", -1);
            int id = (int)idd;
            const cJSON *ts = jget(o, "time_s");
            if (idd != (double)id || id < 0 || id >= t->plan.n_ops || t->ops[id].seen || !cJSON_IsObject(ts)) {
                cJSON_Delete(o);
                TFAIL("line %d: op id %g is out of range, repeated, or has no time_s", lineno, idd);
            }
            trace_op *op = &t->ops[id];
            op->seen = 1;
            jcopy(op->name, sizeof op->name, o, "name");
            jcopy(op->phase, sizeof op->phase, o, "phase");
            jcopy(op->kind, sizeof op->kind, o, "kind");
            jcopy(op->coll, sizeof op->coll, o, "coll");
            op->median = jnum(ts, "median", NAN);
            op->min = jnum(ts, "min", NAN);
            op->max = jnum(ts, "max", NAN);
            const char *ti = jstr(o, "time_is");
            op->exposed = ti && strcmp(ti, "exposed") == 0;
            op->bytes = (int64_t)jnum(o, "bytes_sent", 0);
            op->bytes_planned = (int64_t)jnum(o, "bytes_planned", 0);
            if (t->n_order < ULY_PLAN_MAX_OPS) t->order[t->n_order++] = id;
        }
        cJSON_Delete(o);
    }
    if (!have_summary) TFAIL("no summary line: the run did not complete (valid: a complete trace; see FORMAT.md)");
    for (int i = 0; i < t->plan.n_ops; i++)
        if (!t->ops[i].seen) TFAIL("op %d (%s) has no line: the trace is incomplete", i, uly_op_type_name(t->plan.ops[i].type));
    cJSON_Delete(h);
    free(line);
    fclose(f);
    return 0;
fail:
    cJSON_Delete(h);
    free(line);
    if (f) fclose(f);
    for (char *p = why; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return SIM_EXIT_USAGE;
}

/* Predicted seconds of op i, comparable with what the trace measured. */
static double trace_predicted(const trace_run *t, int i)
{
    return t->ops[i].exposed ? t->res.op_exposed_s[i] : t->res.op_time_s[i];
}

static void csv_traces(plot_run *r, FILE *f)
{
    for (int k = 0; k < r->n_traces; k++) {
        const trace_run *t = r->runs[k];
        fprintf(f, "# trace     %s: %s %s on %d ranks, %s, created %s%s\n", t->path, t->strategy, t->layout, t->ranks,
                t->m.name, t->created, t->ok ? "" : "; its checks FAILED (summary.ok false)");
        fprintf(f, "#           model L %lld, h %lld, a %lld, k %lld, d %lld, f %lld; seq %lld, micro-batch %lld, %s, %s, recompute %s, ZeRO-%d\n",
                (long long)t->m.layers, (long long)t->m.hidden, (long long)t->m.heads, (long long)t->m.kv_heads,
                (long long)t->m.head_dim, (long long)t->m.ffn_hidden, (long long)t->w.seq, (long long)t->w.micro_batch,
                uly_dtype_name(t->w.dtype), t->w.causal ? "causal" : "non-causal", recompute_name(t->w.recompute),
                t->w.zero_stage);
        fprintf(f, "#           predicted with %s: %s, %lld node(s) x %lld\n", t->cluster_from, t->c.name,
                (long long)t->c.nodes, (long long)t->c.gpus_per_node);
    }
}

static const col trace_cols_common[] = {
    {"trace", "trace file name"},
    {"strategy", "ulysses, ring, rsa, allgather-cp, megatron-sp, usp, megatron-tp"},
    {"layout", "degrees above 1"},
    {"op_id", "operation id (the plan's)"},
    {"op", "operation name"},
    {"phase", "fwd, bwd, step"},
    {"kind", "gemm, attn, elem, comm"},
    {"time_is", "total, or exposed: a transfer hidden under compute, only the part that was not"},
    {"predicted_s", "libulysim's time of the op re-priced from the trace header [s] (op_exposed_s when time_is = exposed)"},
    {"measured_s", "median over reps and ranks [s]"},
};
#define N_TRACE_COLS ((int)(sizeof trace_cols_common / sizeof trace_cols_common[0]))

static void trace_row_common(FILE *f, const trace_run *t, int i)
{
    const trace_op *op = &t->ops[i];
    fprintf(f, "%s,%s,%s,%d,%s,%s,%s,%s,%.10g,%.10g", t->base, t->strategy, t->layout, i, op->name, op->phase,
            op->kind, op->exposed ? "exposed" : "total", trace_predicted(t, i), op->median);
}

static int fig_validation(plot_run *r, FILE *f)
{
    const char *about[] = {
        "one point per operation of each trace: measured time (ulyharness) against the time libulysim predicts for",
        "the same plan; the figure draws y = x and a +-20% band", NULL};
    col cols[N_TRACE_COLS + 5];
    memcpy(cols, trace_cols_common, sizeof trace_cols_common);
    int n = N_TRACE_COLS;
    cols[n++] = (col){"measured_min_s", "fastest rank's median [s]"};
    cols[n++] = (col){"measured_max_s", "slowest rank's median [s]"};
    cols[n++] = (col){"ratio", "measured_s / predicted_s"};
    cols[n++] = (col){"bytes_sent", "measured bytes sent per rank [bytes]"};
    cols[n++] = (col){"bytes_planned", "the plan's bytes sent per rank [bytes]"};
    csv_header(r, f, about, cols, n);
    for (int k = 0; k < r->n_traces; k++) {
        const trace_run *t = r->runs[k];
        for (int i = 0; i < t->plan.n_ops; i++) {
            const trace_op *op = &t->ops[i];
            double p = trace_predicted(t, i);
            if (!(p > 0) || !(op->median > 0)) {
                note(r, "%s op %d %s: predicted %.3g s, measured %.3g s (a log axis needs both > 0)", t->base, i,
                     op->name, p, op->median);
                continue;
            }
            trace_row_common(f, t, i);
            fprintf(f, ",%.10g,%.10g,%.10g,%lld,%lld\n", op->min, op->max, op->median / p, (long long)op->bytes,
                    (long long)op->bytes_planned);
        }
    }
    return 0;
}

static int fig_timeline(plot_run *r, FILE *f)
{
    const trace_run *t = r->runs[0];
    const char *about[] = {
        "the run's operations in execution order, one after the other as the harness runs them (a barrier before",
        "each): measured (ulyharness) and predicted (libulysim, the same plan re-priced) start and duration", NULL};
    col cols[N_TRACE_COLS + 3];
    memcpy(cols, trace_cols_common, sizeof trace_cols_common);
    int n = N_TRACE_COLS;
    cols[n++] = (col){"order", "position in the execution order (0 first)"};
    cols[n++] = (col){"predicted_start_s", "sum of the predicted times of the ops before it [s]"};
    cols[n++] = (col){"measured_start_s", "sum of the measured times of the ops before it [s]"};
    csv_header(r, f, about, cols, n);
    double ps = 0, ms = 0;
    for (int k = 0; k < t->n_order; k++) {
        int i = t->order[k];
        double p = trace_predicted(t, i), m = t->ops[i].median;
        trace_row_common(f, t, i);
        fprintf(f, ",%d,%.10g,%.10g\n", k, ps, ms);
        if (p > 0) ps += p;
        if (m > 0) ms += m;
    }
    return 0;
}

/* -------------------------------------------------------------- registry */

static const figure figures[] = {
    {.name = "comm-volume",
     .summary = "communication bytes per GPU per layer against GPU count, N fixed and N growing with the GPUs",
     .def_gpus = "8..1024", .def_seq = "1M", .def_strategies = "ulysses,ring,rsa,megatron-sp,usp",
     .gpus_list = 1, .def_spread = -1, .x_what = "--gpus: a list or range (x axis), --seq: one N",
     .data = fig_comm_volume},
    {.name = "throughput", .summary = "TFLOP/s per GPU against sequence length, out-of-memory points marked",
     .def_gpus = "32", .def_seq = "16K..4M", .seq_list = 1, .def_spread = 1,
     .x_what = "--gpus: one count, --seq: a list or range (x axis)", .data = fig_throughput},
    {.name = "max-seq", .summary = "longest sequence each strategy fits against GPU count",
     .def_gpus = "8..1024", .def_seq = "1G", .gpus_list = 1, .def_spread = -1,
     .x_what = "--gpus: a list or range (x axis), --seq: one upper bound", .data = fig_max_seq},
    {.name = "max-batch", .summary = "largest batch each strategy fits against GPU count",
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
"               ulysses, ring, rsa, megatron-sp, usp over all GPUs]\n"
"  throughput   TFLOP/s per GPU against sequence length per strategy, out-of-\n"
"               memory points marked [--gpus 32 --seq 16K..4M --spread all]\n"
"  max-seq      longest sequence each strategy fits against GPU count\n"
"               [--gpus 8..1024; --seq: the search bound, 1G]\n"
"  max-batch    largest batch (micro-batch x dp) each strategy fits against GPU\n"
"               count [--gpus 8..1024 --seq 128K]\n"
"  memory       memory per GPU by term, stacked bars, one per strategy at its\n"
"               best layout, HBM limit drawn [--gpus 64 --seq 1M --spread best]\n"
"  breakdown    step time split into compute, exposed and overlapped\n"
"               communication per strategy [--gpus 64 --seq 1M --spread best;\n"
"               global batch: GPUs x micro-batch unless --global-batch]\n""  validation   measured against predicted time of every operation of\n"
"               ulyharness traces, y = x and a +-20%% band: plot validation TRACE...\n"
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
"                       (its own degree = GPUs, dp = 1; usp: Ulysses inside a node,\n"
"                       ring across), or its best layout as in `ulysim plan`\n"
"  --size W,H           image size in inches [default per figure: 3.5 wide, one\n"
"                       paper column; PNG at 300 dpi]\n"
"  --no-title           no title line naming the configuration (for papers)\n"
"  --data-only          write the CSV only, do not run gnuplot\n"
"  --scripts DIR        where FIGURE.gp is [default $ULYSIM_PLOTS, else the source\n"
"                       tree's plots/, else the installed share/ulysim/plots]\n"
"  -h, --help           this help\n"
"\n"
"gnuplot is $GNUPLOT, else gnuplot on PATH (pngcairo, svg and pdfcairo terminals).\n"
"Exit status: 0 success; 2 bad usage or input; 1 internal failure, or gnuplot\n"
"missing or failing (the CSV is kept).\n");
}

/* ------------------------------------------------------------ the command */

/* Appends s to b, single-quoted as gnuplot reads it ('' is one quote). */
static int gp_quote(char *b, size_t n, const char *s)
{
    size_t o = strlen(b);
    if (o + 2 >= n) return 1;
    b[o++] = '\'';
    for (; *s; s++) {
        if (o + 3 >= n) return 1;
        if (*s == '\'') b[o++] = '\'';
        b[o++] = *s;
    }
    b[o++] = '\'';
    b[o] = 0;
    return 0;
}

static int gp_assign(char *b, size_t n, const char *var, const char *val)
{
    size_t o = strlen(b);
    int k = snprintf(b + o, n - o, "%s=", var);
    if (k < 0 || (size_t)k >= n - o) return 1;
    if (gp_quote(b, n, val)) return 1;
    o = strlen(b);
    k = snprintf(b + o, n - o, "; ");
    return k < 0 || (size_t)k >= n - o;
}


/* A temporary file beside `path`: its name in tmp, with the permissions a
 * new file gets (mkstemp makes it private). Returns 0, or 1. */
static int temp_beside(const char *path, char *tmp, size_t n)
{
    int k = snprintf(tmp, n, "%s.tmp.XXXXXX", path);
    if (k < 0 || (size_t)k >= n) return 1;
    int fd = mkstemp(tmp);
    if (fd < 0) return 1;
    mode_t um = umask(0);
    umask(um);
    if (fchmod(fd, 0666 & ~um) != 0) { /* keep the private mode */ }
    close(fd);
    return 0;
}

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
    int np = 0, user_strategy = 0, rc = SIM_EXIT_OK;
    char **user = calloc((size_t)argc + 1, sizeof *user);
    char **positional = calloc((size_t)argc + 1, sizeof *positional);
    int nu = 0, npos = 0;
    const char *cluster_arg = NULL, *model_flag = NULL; /* --cluster's value; another planning flag */
    sim_args *a = NULL;
    sim_ctx *c = NULL;
    plot_run *run = NULL;
    char *csv_tmp = NULL, *img_tmp = NULL;
    if (!user || !positional) {
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
        } else if (FLAG("--format")) {
            sim_err("plot: --format is not used by plot (valid: -o FILE.png|FILE.svg|FILE.pdf picks the image format; the data is always CSV)");
            rc = SIM_EXIT_USAGE;
            goto done;
        } else if (s[0] != '-' || s[1] == 0) {
            if (fig_name) positional[npos++] = argv[i];
            else fig_name = s;
        } else {
            /* a planning flag, with its value when it takes one */
            static const char *const valued[] = {"--gpus", "--seq", "--model", "--cluster", "--strategy",
                                                 "--ulysses", "--ring", "--tp", "--pp", "--batch",
                                                 "--global-batch", "--dtype", "--recompute", "--zero", "--split"};
            if (FLAG("--strategy")) user_strategy = 1;
            if (FLAG("--cluster")) cluster_arg = has_eq ? s + nl + 1 : i + 1 < argc ? argv[i + 1] : NULL;
            else if (!model_flag) model_flag = s;
            user[nu++] = argv[i];
            for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
                if (strcmp(s, valued[k]) == 0 && i + 1 < argc) {
                    user[nu++] = argv[++i];
                    break;
                }
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

    pass[np++] = argv[0];
    pass[np++] = (char *)"sweep";
    pass[np++] = (char *)"--gpus";
    pass[np++] = (char *)fig->def_gpus;
    pass[np++] = (char *)"--seq";
    pass[np++] = (char *)fig->def_seq;
    if (fig->def_strategies && !user_strategy) {
        pass[np++] = (char *)"--strategy";
        pass[np++] = (char *)fig->def_strategies;
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
    char why[768];
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
    if (fig->data == fig_max_batch && a->global_batch) {
        sim_err("plot max-batch: --global-batch %lld: the figure searches the batch itself (valid: leave it out)",
                (long long)a->global_batch);
        rc = SIM_EXIT_USAGE;
        goto done;
    }
    if (spread >= 0 && fig->def_spread < 0) {
        sim_err("plot %s: --spread is not used by this figure (valid: with throughput, memory, breakdown)", fig->name);
        rc = SIM_EXIT_USAGE;
        goto done;
    }
    run->spread_all = spread >= 0 ? spread : fig->def_spread > 0;
    /* breakdown of best layouts: the same tokens in every strategy's step */
    if (fig->data == fig_breakdown && !run->spread_all && !a->global_batch) {
        a->global_batch = a->gpus[0] * a->batch;
        a->batch_set = 1;
    }
    rc = sim_ctx_resolve(a, c, why, sizeof why);
    if (rc) {
        sim_err("plot: %s", why);
        goto done;
    }
    run->fig = fig;
    run->c = c;
    if (fig->traces) {
        run->trace_paths = positional;
        run->n_traces = npos;
        run->cluster_override = cluster_arg;
        run->runs = calloc((size_t)npos, sizeof *run->runs);
        if (!run->runs) {
            sim_err("out of memory");
            rc = SIM_EXIT_INTERNAL;
            goto done;
        }
        for (int k = 0; k < npos; k++) {
            run->runs[k] = malloc(sizeof *run->runs[k]);
            if (!run->runs[k]) {
                sim_err("out of memory");
                rc = SIM_EXIT_INTERNAL;
                goto done;
            }
            char twhy[600];
            rc = trace_load(positional[k], cluster_arg, run->runs[k], twhy, sizeof twhy);
            if (rc) {
                sim_err("plot %s: %s: %s", fig->name, positional[k], twhy);
                goto done;
            }
        }
    }
    {
        size_t o = 0;
        o += (size_t)snprintf(run->command, sizeof run->command, "ulysim plot %s", fig->name);
        for (int i = 1; i < argc && o < sizeof run->command; i++) {
            if (strcmp(argv[i], fig_name) == 0) continue;
            int k = snprintf(run->command + o, sizeof run->command - o, " %s", argv[i]);
            if (k > 0) o += (size_t)k;
        }
        for (char *p = run->command; *p; p++)
            if ((unsigned char)*p < 0x20) *p = '?';
    }

    /* the CSV beside the image */
    size_t ol = strlen(out), base = (size_t)(ext - out);
    char *csv = malloc(ol + 8);
    csv_tmp = malloc(ol + 32);
    img_tmp = malloc(ol + 32);
    if (!csv || !csv_tmp || !img_tmp) {
        free(csv);
        sim_err("out of memory");
        rc = SIM_EXIT_INTERNAL;
        goto done;
    }
    memcpy(csv, out, base);
    strcpy(csv + base, ".csv");
    if (temp_beside(csv, csv_tmp, ol + 32)) {
        sim_err("plot: -o %s: cannot create a file beside it: %s (valid: a path in a writable directory)", out,
                strerror(errno));
        free(csv);
        free(csv_tmp);
        csv_tmp = NULL;
        rc = SIM_EXIT_USAGE;
        goto done;
    }
    FILE *f = fopen(csv_tmp, "w");
    if (!f) {
        sim_err("plot: cannot write %s: %s", csv_tmp, strerror(errno));
        free(csv);
        rc = SIM_EXIT_INTERNAL;
        goto done;
    }
    rc = fig->data(run, f);
    if (rc == 0) csv_notes(run, f);
    if (fclose(f) != 0 || rc) {
        if (!rc) {
            sim_err("plot: cannot write %s: %s", csv, strerror(errno));
            rc = SIM_EXIT_INTERNAL;
        }
        free(csv);
        goto done;
    }
    if (rename(csv_tmp, csv) != 0) {
        sim_err("plot: cannot write %s: %s", csv, strerror(errno));
        free(csv);
        rc = SIM_EXIT_INTERNAL;
        goto done;
    }
    free(csv_tmp);
    csv_tmp = NULL;
    if (data_only) {
        printf("%s\n", csv);
        free(csv);
        goto done;
    }

    /* gnuplot */
    char script[4096];
    int fs = sim_gnuplot_script_find(scripts, fig->name, script, sizeof script);
    if (fs == 2) {
        sim_err("plot: %s: no such script (valid: --scripts or $ULYSIM_PLOTS naming a directory with %s.gp); the data is in %s",
                script, fig->name, csv);
        free(csv);
        rc = SIM_EXIT_USAGE;
        goto done;
    }
    if (fs) {
        sim_err("plot: cannot find %s.gp in %s or %s (set $ULYSIM_PLOTS or --scripts); the data is in %s", fig->name,
                ULY_PLOT_DIR_SOURCE, ULY_PLOT_DIR_INSTALLED, csv);
        free(csv);
        rc = SIM_EXIT_INTERNAL;
        goto done;
    }
    if (temp_beside(out, img_tmp, ol + 32)) {
        sim_err("plot: cannot create a file beside %s: %s; the data is in %s", out, strerror(errno), csv);
        free(csv);
        free(img_tmp);
        img_tmp = NULL;
        rc = SIM_EXIT_INTERNAL;
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
            for (int i = 0; i < ULY_STRAT_COUNT; i++) {
                int any = 0;
                for (int k = 0; k < run->n_traces; k++) any |= strcmp(run->runs[k]->strategy, sim_strategy_name(i)) == 0;
                size_t l = strlen(strat);
                if (any) snprintf(strat + l, sizeof strat - l, "%s%s", l ? " " : "", sim_strategy_name(i));
            }
        if (title && fig->traces) {
            const trace_run *t0 = run->runs[0];
            if (run->n_traces == 1)
                snprintf(sub, sizeof sub, "%s %s on %d ranks, N = %lld, predicted with %s", t0->strategy, t0->layout,
                         t0->ranks, (long long)t0->w.seq, t0->c.name);
            else
                snprintf(sub, sizeof sub, "%d harness runs, predicted with %s", run->n_traces, t0->c.name);
        } else if (title) {
            /* short enough for one paper column: what differs from the defaults only */
            size_t o = (size_t)snprintf(sub, sizeof sub, "%s, %s", c->model.name, c->cluster.name);
            if (!fig->gpus_list && o < sizeof sub)
                o += (size_t)snprintf(sub + o, sizeof sub - o, ", %lld GPUs", (long long)a->gpus[0]);
            if (!fig->seq_list && o < sizeof sub) {
                sim_size_str(a->seq[0], b1, sizeof b1);
                o += (size_t)snprintf(sub + o, sizeof sub - o, ", N %s %s", fig->data == fig_max_seq ? "up to" : "=", b1);
            }
            if (c->w.dtype != ULY_BF16 && o < sizeof sub)
                o += (size_t)snprintf(sub + o, sizeof sub - o, ", %s", uly_dtype_name(c->w.dtype));
            if (c->w.micro_batch != 1 && fig->data != fig_max_batch && o < sizeof sub)
                o += (size_t)snprintf(sub + o, sizeof sub - o, ", micro-batch %lld", (long long)c->w.micro_batch);
            if (fig->def_spread >= 0 && o < sizeof sub)
                snprintf(sub + o, sizeof sub - o, "%s", run->spread_all ? ", SP over all GPUs" : ", best layouts");
        }
        bad |= gp_assign(vars, vn, "data", csv);
        bad |= gp_assign(vars, vn, "out", img_tmp);
        bad |= gp_assign(vars, vn, "term", term);
        bad |= gp_assign(vars, vn, "subtitle", sub);
        bad |= gp_assign(vars, vn, "strategies", strat);
        if (width > 0) {
            size_t l = strlen(vars);
            snprintf(vars + l, vn - l, "width=%.4g; height=%.4g; ", width, height);
        }
    }
    if (bad) {
        free(vars);
        free(csv);
        sim_err("out of memory");
        rc = SIM_EXIT_INTERNAL;
        goto done;
    }
    if (sim_gnuplot_run("plot", vars, script) != 0) {
        fprintf(stderr, "ulysim: plot: the data is in %s\n", csv);
        free(vars);
        free(csv);
        rc = SIM_EXIT_INTERNAL;
        goto done;
    }
    free(vars);
    struct stat st;
    if (stat(img_tmp, &st) != 0 || st.st_size == 0) {
        sim_err("plot: gnuplot wrote no image with %s; the data is in %s", script, csv);
        free(csv);
        rc = SIM_EXIT_INTERNAL;
        goto done;
    }
    if (rename(img_tmp, out) != 0) {
        sim_err("plot: cannot write %s: %s; the data is in %s", out, strerror(errno), csv);
        free(csv);
        rc = SIM_EXIT_INTERNAL;
        goto done;
    }
    free(img_tmp);
    img_tmp = NULL;
    printf("%s\n%s\n", out, csv);
    free(csv);
done:
    if (csv_tmp) {
        unlink(csv_tmp);
        free(csv_tmp);
    }
    if (img_tmp) {
        unlink(img_tmp);
        free(img_tmp);
    }
    if (run && run->runs) {
        for (int k = 0; k < run->n_traces; k++) free(run->runs[k]);
        free(run->runs);
    }
    free(pass);
    free(user);
    free(positional);
    free(a);
    free(c);
    free(run);
    return rc;
}
