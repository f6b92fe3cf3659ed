/* cmd_runs.c: `ulysim runs from-megatron LOG... [-o FILE]`: runs-file rows
 * (the CSV `ulysim validate --runs` reads) from Megatron-LM training logs.
 *
 * Each log is one run: its argument block gives the configuration
 * (formats/megatron_log.c reads it), its iteration reports the measured time
 * and TFLOP/s (the median after the warm-up), its memory reports the peak.
 * The model is written as a preset name when a preset has exactly the log's
 * shape, else as an inline shape; the parallel settings become ulysim's
 * strategy and degrees (mlog_layout). docs/megatron-logs.md has the mapping. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "megatron_log.h"
#include "out_file.h"
#include "output.h"
#include "preset.h"
#include "text_file.h"

int sim_cmd_runs(int argc, char **argv);

#define MLOG_MAX_BYTES (256L * 1024 * 1024) /* a long run's log is tens of MiB */
#define DEFAULT_WARMUP 3

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ulysim runs from-megatron LOG... [-o FILE] [--warmup N] [--cluster NAME|FILE]\n"
            "Runs-file rows (CSV, for `ulysim validate --runs`) from Megatron-LM training logs, one row per log:\n"
            "the argument block Megatron-LM prints at start gives the model, parallel layout and workload; the\n"
            "iteration reports give step_s and tflops_per_gpu (flop_convention megatron-lm), the median over\n"
            "the reports after the warm-up; the memory reports give mem_gib (the largest max reserved).\n"
            "  -o FILE           write FILE (whole, or not at all) instead of standard output\n"
            "  --warmup N        iterations of warm-up left out [default %d]: a report counts when every\n"
            "                    iteration it averages (log_interval of them) comes after these\n"
            "  --cluster P       the cluster column of every row (a preset name or file; the log does not\n"
            "                    say which GPUs ran it) [default: empty, ulysim's default cluster]\n"
            "Exit: 0 written; 2 bad usage or a bad log (one line naming the file and line); 1 internal.\n",
            DEFAULT_WARMUP);
}

/* ----------------------------------------------------------- the model */

typedef struct preset_match {
    const uly_model *shape;
    char name[ULY_NAME_LEN];
} preset_match;

static int same_shape(const uly_model *a, const uly_model *b)
{
    return a->layers == b->layers && a->hidden == b->hidden && a->heads == b->heads && a->kv_heads == b->kv_heads &&
           a->head_dim == b->head_dim && a->ffn_hidden == b->ffn_hidden && a->vocab == b->vocab &&
           a->swiglu == b->swiglu && a->tied_embeddings == b->tied_embeddings && a->dropout == b->dropout &&
           a->embed_norm == b->embed_norm;
}

static void match_one(const char *name, const char *description, const char *source, void *ctx)
{
    preset_match *x = ctx;
    uly_model m;
    char why[512];
    if (x->name[0] || sim_model_load(name, &m, why, sizeof why) != 0) return;
    if (same_shape(&m, x->shape)) snprintf(x->name, sizeof x->name, "%s", name);
}

/* The preset name of the shape, else its inline form (the model preset's
 * keys, key=value,...). */
static void model_cell(const uly_model *m, char *buf, size_t n)
{
    preset_match x = {m, ""};
    sim_preset_list("models", match_one, &x);
    if (x.name[0]) {
        snprintf(buf, n, "%s", x.name);
        return;
    }
    snprintf(buf, n,
             "layers=%lld,hidden=%lld,heads=%lld,kv_heads=%lld,head_dim=%lld,ffn_hidden=%lld,vocab=%lld,swiglu=%s,"
             "tied_embeddings=%s,dropout=%s",
             (long long)m->layers, (long long)m->hidden, (long long)m->heads, (long long)m->kv_heads,
             (long long)m->head_dim, (long long)m->ffn_hidden, (long long)m->vocab, m->swiglu ? "true" : "false",
             m->tied_embeddings ? "true" : "false", m->dropout ? "true" : "false");
}

/* ------------------------------------------------------------ the rows */

/* The runs-file columns this command writes: flag names without the dashes,
 * then the measured quantities. */
enum {
    C_LABEL, C_SOURCE, C_MODEL, C_CLUSTER, C_GPUS, C_SEQ, C_STRATEGY, C_TP, C_ULYSSES, C_RING, C_PP, C_VSTAGES,
    C_BATCH, C_GBATCH, C_RECOMPUTE, C_ZERO, C_FRAMEWORK, C_DTYPE, C_STEP, C_TFLOPS, C_CONV, C_MEM, C_OOM, C_COUNT
};
static const char *const COLS[C_COUNT] = {
    "label", "source", "model", "cluster", "gpus", "seq", "strategy", "tp", "ulysses", "ring", "pp",
    "virtual-stages", "batch", "global-batch", "recompute", "zero", "framework", "dtype", "step_s",
    "tflops_per_gpu", "flop_convention", "mem_gib", "oom"};

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* One log into one row of t. Returns 0, or 2 with the reason in why. */
static int log_row(const char *path, int64_t warmup, const char *cluster, mlog_run *r, sim_table *t, char *why,
                   size_t n)
{
    char *text = NULL;
    size_t len = 0;
    int rc = text_file_read(path, MLOG_MAX_BYTES, "a Megatron-LM log", &text, &len, why, n);
    if (!rc) rc = mlog_parse(text, len, path, r, why, n);
    free(text);
    if (rc) return rc;
    uly_model m;
    uly_layout l;
    if ((rc = mlog_model(r, path, &m, why, n)) || (rc = mlog_layout(r, path, &l, why, n))) return rc;
    if (r->seq <= 0 || r->micro_batch <= 0)
        return sim_fail(why, n, "%s:%d: the log gives no %s", path, r->args_line,
                        r->seq <= 0 ? "seq_length" : "micro_batch_size");
    double ms, tf;
    int64_t first, last;
    const int k = mlog_median(r, warmup, &ms, &tf, &first, &last);
    if (k == 0)
        return sim_fail(why, n, "%s:%d: every iteration report (the last at iteration %lld, log_interval %lld) "
                        "averages warm-up iterations (--warmup %lld; valid: a smaller --warmup, or a longer run)",
                        path, r->reports[r->n_reports - 1].line, (long long)r->reports[r->n_reports - 1].iteration,
                        (long long)(r->log_interval > 0 ? r->log_interval : 1), (long long)warmup);
    const uly_strategy *s = uly_strategy_get(l.strategy);
    char model[512], label[128];
    model_cell(&m, model, sizeof model);
    snprintf(label, sizeof label, "%s", base_name(path));
    char *dot = strrchr(label, '.');
    if (dot && dot != label) *dot = 0;
    sim_table_row(t);
    sim_table_cell(t, "%s", label);
    sim_table_cell(t, "Megatron-LM log %s: median of %d reports, iterations %lld..%lld", base_name(path), k,
                   (long long)first, (long long)last);
    sim_table_cell(t, "%s", model);
    sim_table_cell(t, "%s", cluster ? cluster : "");
    sim_table_cell(t, "%lld", (long long)r->world_size);
    sim_table_cell(t, "%lld", (long long)r->seq);
    sim_table_cell(t, "%s", s->name);
    sim_table_cell(t, "%lld", (long long)l.tp);
    if (s->uses_ulysses) sim_table_cell(t, "%lld", (long long)l.ulysses);
    else sim_table_cell(t, "%s", "");
    if (s->uses_ring) sim_table_cell(t, "%lld", (long long)l.ring);
    else sim_table_cell(t, "%s", "");
    sim_table_cell(t, "%lld", (long long)l.pp);
    if (l.vpp > 1) sim_table_cell(t, "%lld", (long long)l.vpp);
    else sim_table_cell(t, "%s", "");
    sim_table_cell(t, "%lld", (long long)r->micro_batch);
    if (r->global_batch > 0) sim_table_cell(t, "%lld", (long long)r->global_batch);
    else sim_table_cell(t, "%s", "");
    sim_table_cell(t, "%s", r->recompute[0] ? r->recompute : "none");
    sim_table_cell(t, "%d", r->distributed_optimizer == 1);
    sim_table_cell(t, "%s", uly_framework_name(ULY_FW_MEGATRON));
    sim_table_cell(t, "%s", uly_dtype_name(r->bf16 == 1 ? ULY_BF16 : r->fp16 == 1 ? ULY_FP16 : ULY_FP32));
    sim_table_cell(t, "%.9g", ms / 1000.0);
    if (isnan(tf)) {
        sim_table_cell(t, "%s", "");
        sim_table_cell(t, "%s", "");
    } else {
        sim_table_cell(t, "%.9g", tf);
        sim_table_cell(t, "%s", "megatron-lm");
    }
    if (r->mem_peak_mb > 0) sim_table_cell(t, "%.6g", r->mem_peak_mb / 1024.0);
    else sim_table_cell(t, "%s", "");
    sim_table_cell(t, "%s", "false");
    return 0;
}

/* A comment line saying how the rows were made, then the CSV. */
static int print_rows(const sim_table *t, int64_t warmup, FILE *f)
{
    fprintf(f, "# ulysim runs from-megatron: step_s and tflops_per_gpu are medians of the iteration reports after "
               "the first %lld iterations; mem_gib the largest max reserved of the memory reports\n",
            (long long)warmup);
    return sim_table_print_csv(t, f);
}

/* Writes the rows to stdout, or to path through the one output writer
 * (formats/out_file.h: whole or not at all, never replacing a device). */
static int write_rows(const sim_table *t, int64_t warmup, const char *out, char *why, size_t n)
{
    if (!out) { /* main's check of standard output reports a failed write */
        print_rows(t, warmup, stdout);
        return 0;
    }
    out_file f;
    const int rc = out_file_open(&f, out, OUT_FILE_STREAM, why, n);
    if (rc) return rc;
    if (print_rows(t, warmup, f.fp)) {
        snprintf(why, n, "cannot write %s: %s", out, strerror(errno));
        out_file_discard(&f);
        return SIM_EXIT_INTERNAL;
    }
    return out_file_commit(&f, "", why, n);
}

int sim_cmd_runs(int argc, char **argv)
{
    char why[1024] = "";
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? SIM_EXIT_USAGE : SIM_EXIT_OK;
    }
    if (strcmp(argv[1], "from-megatron")) {
        sim_err_as("ulysim runs", "unknown action %s (valid: from-megatron; see ulysim runs --help)",
                   sim_quote(argv[1], why, 80));
        return SIM_EXIT_USAGE;
    }
    const char *out = NULL, *cluster = NULL;
    int64_t warmup = DEFAULT_WARMUP;
    const char **logs = calloc((size_t)argc, sizeof *logs);
    int n_logs = 0, rc = 0;
    if (!logs) return SIM_EXIT_INTERNAL;
    for (int i = 2; i < argc && !rc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char qb[80];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            free(logs);
            return SIM_EXIT_OK;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--warmup") || !strcmp(a, "--cluster")) {
            if (!v || (!*v && strcmp(a, "-o"))) { /* an empty -o: the writer says why */
                rc = sim_fail(why, sizeof why, "%s needs a value (see ulysim runs --help)", a);
                break;
            }
            i++;
            if (!strcmp(a, "-o")) out = v;
            else if (!strcmp(a, "--cluster")) cluster = v;
            else {
                char *end;
                long long x = strtoll(v, &end, 10);
                if (*end || x < 0 || x > 1000000000)
                    rc = sim_fail(why, sizeof why, "--warmup %s: not a count of iterations (valid: 0 or more)",
                                  sim_quote(v, qb, sizeof qb));
                warmup = x;
            }
        } else if (a[0] == '-' && a[1]) {
            rc = sim_fail(why, sizeof why, "unknown option %s (valid: -o, --warmup, --cluster; see ulysim runs "
                          "--help)", sim_quote(a, qb, sizeof qb));
        } else {
            logs[n_logs++] = a;
        }
    }
    if (!rc && n_logs == 0) rc = sim_fail(why, sizeof why, "no log given (usage: ulysim runs from-megatron LOG...)");
    for (int i = 0; i < n_logs; i++) out_file_input_note(logs[i], NULL); /* -o may not replace them */
    if (!rc && out) rc = out_file_check(out, OUT_FILE_STREAM, why, sizeof why); /* before the work */
    mlog_run *r = rc ? NULL : malloc(sizeof *r);
    if (!rc && !r) rc = SIM_EXIT_INTERNAL;
    sim_table t;
    sim_table_init(&t, C_COUNT, COLS, NULL);
    for (int i = 0; i < n_logs && !rc; i++) rc = log_row(logs[i], warmup, cluster, r, &t, why, sizeof why);
    if (!rc) rc = write_rows(&t, warmup, out, why, sizeof why);
    if (rc && why[0]) sim_err_as("ulysim runs", "%s", why);
    else if (rc) sim_err_as("ulysim runs", "internal failure");
    sim_table_free(&t);
    free(r);
    free(logs);
    return rc;
}
