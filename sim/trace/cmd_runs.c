/* cmd_runs.c: `ulysim runs from-megatron LOG... [-o FILE]`: runs-file rows
 * (the CSV `ulysim validate --runs` reads) from Megatron-LM training logs.
 *
 * Each log is one run: its argument block gives the configuration
 * (formats/megatron_log.c reads it), its iteration reports the measured time
 * and TFLOP/s (the median after the warm-up), its memory reports the peak.
 * The model is written as a preset name when a preset has exactly the log's
 * shape, else as an inline shape; the parallel settings become ulysim's
 * strategy and degrees (mlog_layout). docs/megatron-logs.md has the mapping.
 *
 * Every row is checked as `ulysim validate --runs` checks the rows it reads
 * (vr_check_row, the same code) before it is written: a row that command
 * would refuse is refused here, naming the log line its value came from. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
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
#include "runs_read.h"
#include "text_file.h"
#include "validate_runs.h"
#include "runs_flags.h"

int sim_cmd_runs(int argc, char **argv);

#define MLOG_MAX_BYTES (256L * 1024 * 1024) /* a long run's log is tens of MiB */
#define DEFAULT_WARMUP 3

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ulysim runs from-megatron LOG... [-o FILE] [--warmup N] [--cluster NAME|FILE]\n"
            "                                         [--args-file FILE | PLANNING FLAGS]\n"
            "Runs-file rows (CSV, for `ulysim validate --runs`) from Megatron-LM training logs, one row per log:\n"
            "the argument block Megatron-LM prints at start gives the model, parallel layout and workload; the\n"
            "iteration reports give step_s and tflops_per_gpu (flop_convention megatron-lm), the median over\n"
            "the reports after the warm-up; the memory reports give mem_gib (the largest max reserved).\n"
            "  -o FILE           write FILE (whole, or not at all) instead of standard output (also --output)\n"
            "  --warmup N        iterations of warm-up left out [default %d]: a report counts when every\n"
            "                    iteration it averages (log_interval of them) comes after these\n"
            "  --cluster P       the cluster column of every row (a preset name or file; the log does not\n"
            "                    say which GPUs ran it) [default: empty, ulysim's default cluster]\n"
            "  --args-file FILE  for logs without their argument block (an excerpt of iteration lines): the\n"
            "                    launch script that ran them gives the model and layout; or the planning\n"
            "                    flags do (--model, --gpus, --seq, --batch, --tp, --pp, --strategy, ...,\n"
            "                    Megatron-LM's names too, after the logs) [default: the log's own block]\n"
            "Every row is checked as `ulysim validate --runs` checks the rows it reads before it is written.\n"
            "Options take their value as --opt VALUE or --opt=VALUE; each is given once, each log once.\n"
            "Exit: 0 written; 2 bad usage, a bad log, or a row validate --runs would refuse (one line naming the\n"
            "file and line); 1 internal.\n",
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
           a->embed_norm == b->embed_norm && a->bias == b->bias && a->qkv_bias == b->qkv_bias &&
           a->experts == b->experts && a->topk == b->topk &&
           a->moe_ffn_hidden == b->moe_ffn_hidden && a->shared_ffn_hidden == b->shared_ffn_hidden &&
           a->moe_dense_first == b->moe_dense_first && (a->moe_every > 1 ? a->moe_every : 1) ==
           (b->moe_every > 1 ? b->moe_every : 1) && a->q_lora_rank == b->q_lora_rank &&
           a->kv_lora_rank == b->kv_lora_rank && a->qk_nope_dim == b->qk_nope_dim && a->qk_rope_dim == b->qk_rope_dim;
}

static void match_one(const char *name, const char *description, const char *source, void *ctx)
{
    preset_match *x = ctx;
    uly_model m;
    char why[512];
    if (x->name[0] || preset_model_load(name, &m, why, sizeof why) != 0) return;
    if (same_shape(&m, x->shape)) snprintf(x->name, sizeof x->name, "%s", name);
}

/* The preset name of the shape, else its inline form (the model preset's
 * keys, key=value,..., its experts' and latent attention's after). */
static void model_cell(const uly_model *m, char *buf, size_t n)
{
    preset_match x = {m, ""};
    preset_list("models", match_one, &x);
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
    /* the biases only where the model has them (the keys are optional) */
    if (m->bias || m->qkv_bias)
        snprintf(buf + strlen(buf), n - strlen(buf), "%s", m->bias ? ",bias=true" : ",qkv_bias=true");
    const size_t o = strlen(buf);
    preset_model_moe_inline(m, buf + o, n - o);
}

/* ------------------------------------------------------------ the rows */

/* The runs-file columns this command writes: flag names without the dashes,
 * then the measured quantities. */
enum {
    C_LABEL, C_SOURCE, C_MODEL, C_CLUSTER, C_GPUS, C_SEQ, C_STRATEGY, C_TP, C_ULYSSES, C_RING, C_PP, C_VSTAGES,
    C_PP_FIRST, C_PP_LAST, C_PP_EMBED, C_PP_LOSS, C_PP_LAYOUT,
    C_EP, C_ETP, C_DISPATCHER, C_CAPACITY, C_BATCH, C_GBATCH, C_RECOMPUTE, C_ZERO, C_FRAMEWORK, C_DTYPE, C_GRAD_BF16,
    C_GRAD_FP32, C_CE_FUSION, C_CE_IMPL, C_GRAD_ACCUM, C_TIMPL, C_STEP, C_TFLOPS, C_CONV, C_MEM, C_OOM, C_COUNT
};
static const char *const COLS[C_COUNT] = {
    "label", "source", "model", "cluster", "gpus", "seq", "strategy", "tp", "ulysses", "ring", "pp",
    "virtual-stages", "pp-first", "pp-last", "pp-embed-layer", "pp-loss-layer", "pp-layout", "ep", "etp", "moe-dispatcher", "moe-capacity", "batch", "global-batch", "recompute", "zero", "framework", "dtype",
    "grad-reduce-in-bf16", "accumulate-allreduce-grads-in-fp32", "cross-entropy-loss-fusion",
    "cross-entropy-fusion-impl", "gradient-accumulation-fusion", "transformer-impl", "step_s",
    "tflops_per_gpu", "flop_convention", "mem_gib", "oom"};

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int print_rows(const sim_table *t, int64_t warmup, FILE *f);

/* An uneven pipeline's split as the log gives it: each cell empty where
 * the log has it unset (the even split) */
static void split_cells(sim_table *t, const mlog_run *r)
{
    if (r->pp_first > 0) sim_table_cell(t, "%lld", (long long)r->pp_first);
    else sim_table_cell(t, "%s", "");
    if (r->pp_last > 0) sim_table_cell(t, "%lld", (long long)r->pp_last);
    else sim_table_cell(t, "%s", "");
    sim_table_cell(t, "%s", r->pp_embed == 1 ? "true" : "");
    sim_table_cell(t, "%s", r->pp_loss == 1 ? "true" : "");
    sim_table_cell(t, "%s", r->pp_layout);
}

/* The report of those counted after the warm-up whose number (iter_ms, or
 * tflops) is nearest the median m: the line a median came from. */
static int median_line(const mlog_run *r, int64_t warmup, int tflops, double m)
{
    int line = 0;
    double best = INFINITY;
    for (int i = 0; i < r->n_reports; i++) {
        const double x = tflops ? r->reports[i].tflops : r->reports[i].iter_ms;
        if (mlog_report_counts(r, warmup, i) && fabs(x - m) < best) {
            best = fabs(x - m);
            line = r->reports[i].line;
        }
    }
    return line;
}

/* The arguments of the block each configuration column is written from:
 * the first the log gives names the line. */
static const struct {
    int col;
    const char *keys[3];
} COL_ARGS[] = {
    {C_GPUS, {"world_size"}},
    {C_SEQ, {"seq_length"}},
    {C_STRATEGY, {"cp_comm_type", "context_parallel_size", "sequence_parallel"}},
    {C_TP, {"tensor_model_parallel_size"}},
    {C_ULYSSES, {"hierarchical_context_parallel_sizes", "context_parallel_size"}},
    {C_RING, {"hierarchical_context_parallel_sizes", "context_parallel_size"}},
    {C_PP, {"pipeline_model_parallel_size"}},
    {C_VSTAGES, {"virtual_pipeline_model_parallel_size", "num_layers_per_virtual_pipeline_stage"}},
    {C_PP_FIRST, {"decoder_first_pipeline_num_layers"}},
    {C_PP_LAST, {"decoder_last_pipeline_num_layers"}},
    {C_PP_EMBED, {"account_for_embedding_in_pipeline_split"}},
    {C_PP_LOSS, {"account_for_loss_in_pipeline_split"}},
    {C_PP_LAYOUT, {"pipeline_model_parallel_layout"}},
    {C_EP, {"expert_model_parallel_size", "num_experts"}},
    {C_ETP, {"expert_tensor_parallel_size", "tensor_model_parallel_size"}},
    {C_DISPATCHER, {"moe_token_dispatcher_type", "num_experts"}},
    {C_CAPACITY, {"moe_expert_capacity_factor", "num_experts"}},
    {C_BATCH, {"micro_batch_size"}},
    {C_GBATCH, {"global_batch_size"}},
    {C_RECOMPUTE, {"recompute_granularity"}},
    {C_ZERO, {"use_distributed_optimizer"}},
    {C_DTYPE, {"bf16", "fp16"}},
    {C_GRAD_BF16, {"accumulate_allreduce_grads_in_fp32"}},
    {C_GRAD_FP32, {"accumulate_allreduce_grads_in_fp32"}},
    {C_CE_FUSION, {"cross_entropy_loss_fusion"}},
    {C_CE_IMPL, {"cross_entropy_fusion_impl"}},
    {C_GRAD_ACCUM, {"gradient_accumulation_fusion"}},
    {C_TIMPL, {"transformer_impl"}},
};

/* The line of the argument column col is written from, its name in *key;
 * 0 when the log gives none of them. */
static int col_arg_line(const mlog_run *r, int col, const char **key)
{
    for (size_t i = 0; i < sizeof COL_ARGS / sizeof COL_ARGS[0]; i++)
        for (int k = 0; COL_ARGS[i].col == col && k < 3 && COL_ARGS[i].keys[k]; k++) {
            const int line = mlog_arg_line(r, COL_ARGS[i].keys[k]);
            if (line) {
                *key = COL_ARGS[i].keys[k];
                return line;
            }
        }
    return 0;
}

/* A row that `validate --runs` refuses (msg; the column at fault, -1 none):
 * the message names the log line the value came from, and the value. */
static int row_refused(const char *path, const mlog_run *r, int64_t warmup, int col, double ms, double tf,
                       const char *msg, char *why, size_t n)
{
    static const char *const TAIL = "its row would be refused by ulysim validate --runs";
    const char *what = "the argument block";
    int line = r->args_line;
    switch (col) {
    case C_STEP:
        return text_fail_at(why, n, path, median_line(r, warmup, 0, ms), "elapsed time per iteration (ms) %g (the "
                            "median of the reports): %s: %s", ms, TAIL, msg);
    case C_TFLOPS:
    case C_CONV:
        return text_fail_at(why, n, path, median_line(r, warmup, 1, tf), "throughput per GPU (TFLOP/s/GPU) %g (the "
                            "median of the reports): %s: %s", tf, TAIL, msg);
    case C_MEM:
        return text_fail_at(why, n, path, r->mem_line, "memory report %g MB (the largest): %s: %s", r->mem_peak_mb,
                            TAIL, msg);
    case C_LABEL:
    case C_SOURCE: /* written from the log's file name */
        return text_fail_at(why, n, path, 0, "the file name: %s: %s", TAIL, msg);
    case C_CLUSTER:
        return text_fail_at(why, n, path, 0, "--cluster: %s: %s", TAIL, msg);
    case C_MODEL:
        what = "the model of the argument block";
        break;
    default: {
        const char *key;
        const int at = col_arg_line(r, col, &key);
        if (at) line = at, what = key;
    }
    }
    return text_fail_at(why, n, path, line, "%s: %s: %s", what, TAIL, msg);
}

/* The row of one (a table of one row) as `validate --runs` would read it
 * from runs: rendered as it is written, read back by the runs reader, then
 * the row check that command applies. Returns 0, or 2 with msg and *col
 * (vr_check_row's; -2 when the runs reader refuses the text). */
static int check_one(const sim_table *one, int64_t warmup, const char *runs, int *col, char *msg, size_t n)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return sim_fail(msg, n, "out of memory"), SIM_EXIT_INTERNAL;
    const int bad = print_rows(one, warmup, f);
    if (fclose(f) || bad) {
        free(text);
        return sim_fail(msg, n, "out of memory"), SIM_EXIT_INTERNAL;
    }
    runs_table t;
    int rc = runs_parse(text, len, runs, &t, msg, n);
    free(text);
    *col = -2;
    if (rc) return rc;
    if (t.n_rows == 1) {
        rc = vr_check_row(&t, 0, runs, col, msg, n);
    } else { /* print_rows wrote one */
        sim_fail(msg, n, "internal: %d rows read back, not 1", t.n_rows);
        rc = SIM_EXIT_INTERNAL;
    }
    runs_free(&t);
    return rc;
}

/* check_one, with a refusal's message naming the log line the value came
 * from. out: where the rows go (validate --runs finds a row's model and
 * cluster files beside it; standard output is read where it is run). */
static int check_row(const char *path, const mlog_run *r, int64_t warmup, double ms, double tf, sim_table *one,
                     const char *out, char *why, size_t n)
{
    char msg[768], retry[768];
    const char *runs = out ? out : "standard output";
    int col, rc = check_one(one, warmup, runs, &col, msg, sizeof msg);
    char *cluster = one->cells[C_CLUSTER];
    if (rc == 2 && col == -1 && cluster[0]) {
        /* the run's settings together: the --cluster given, when the row
         * passes without it (the log says nothing of the cluster) */
        const char keep = cluster[0];
        int col2;
        cluster[0] = 0;
        if (check_one(one, warmup, runs, &col2, retry, sizeof retry) == 0) col = C_CLUSTER;
        cluster[0] = keep;
    }
    if (rc == 2 && col == -2) return text_fail_at(why, n, path, 0, "its row is not one the runs reader reads: %s", msg);
    if (rc == 2) return row_refused(path, r, warmup, col, ms, tf, msg, why, n);
    if (rc) snprintf(why, n, "%s", msg);
    return rc;
}

/* The MoE columns of a row: a mixture of experts' expert parallel degrees,
 * dispatcher and capacity (the log's; empty for a dense model, whose run
 * has no experts to place) */
static void moe_cells(sim_table *one, const mlog_run *r, const uly_layout *l)
{
    const int moe = r->experts > 0;
    if (moe) sim_table_cell(one, "%d", (int)l->ep), sim_table_cell(one, "%d", (int)l->etp);
    else sim_table_cell(one, "%s", ""), sim_table_cell(one, "%s", "");
    sim_table_cell(one, "%s", moe ? r->moe_dispatcher : "");
    if (moe && r->moe_capacity > 0) sim_table_cell(one, "%.9g", r->moe_capacity);
    else sim_table_cell(one, "%s", ""); /* None: dropless, the column's default */
}

/* One log into one row of t, checked as `validate --runs` will check it
 * in out (NULL: standard output). Returns 0, or 2 with the reason in why. */
static int log_row(const char *path, int64_t warmup, const char *cluster, const char *out, const runs_flags *flags,
                   mlog_run *r, sim_table *t, char *why, size_t n)
{
    char *text = NULL;
    size_t len = 0;
    int rc = text_file_read(path, MLOG_MAX_BYTES, "a Megatron-LM log", &text, &len, why, n);
    if (!rc) rc = flags->n ? mlog_parse_reports(text, len, path, r, why, n) : mlog_parse(text, len, path, r, why, n);
    free(text);
    if (rc) return rc;
    /* the flags stand for a missing block, never beside one: they would be dropped */
    if (flags->n && r->args_line)
        return sim_fail(why, n, "%s:%d: the log has its argument block, and %s would not be used (valid: leave the "
                        "planning flags out for a whole log)", path, r->args_line, flags->argv[0]);
    if (flags->n && (rc = runs_flags_fill(flags, r, why, n))) return rc;
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
    char model[768], label[128];
    model_cell(&m, model, sizeof model);
    snprintf(label, sizeof label, "%s", base_name(path));
    char *dot = strrchr(label, '.');
    if (dot && dot != label) *dot = 0;
    /* the row alone first: checked, then added to t */
    sim_table one;
    sim_table_init(&one, C_COUNT, COLS, NULL);
    sim_table_row(&one);
    sim_table_cell(&one, "%s", label);
    sim_table_cell(&one, "Megatron-LM log %s: median of %d reports, iterations %lld..%lld", base_name(path), k,
                   (long long)first, (long long)last);
    sim_table_cell(&one, "%s", model);
    /* validate --runs reads a cluster file relative to the runs file's
     * directory: a relative path given here, where the command runs, is
     * written absolute when the rows go to another directory */
    char cl_abs[PATH_MAX];
    const int moved = cluster && out && strchr(out, '/') && cluster[0] != '/' && preset_is_path(cluster) &&
                      realpath(cluster, cl_abs) != NULL;
    sim_table_cell(&one, "%s", moved ? cl_abs : cluster ? cluster : "");
    sim_table_cell(&one, "%lld", (long long)r->world_size);
    sim_table_cell(&one, "%lld", (long long)r->seq);
    sim_table_cell(&one, "%s", s->name);
    sim_table_cell(&one, "%lld", (long long)l.tp);
    if (s->uses_ulysses) sim_table_cell(&one, "%lld", (long long)l.ulysses);
    else sim_table_cell(&one, "%s", "");
    if (s->uses_ring) sim_table_cell(&one, "%lld", (long long)l.ring);
    else sim_table_cell(&one, "%s", "");
    sim_table_cell(&one, "%lld", (long long)l.pp);
    if (l.vpp > 1) sim_table_cell(&one, "%lld", (long long)l.vpp);
    else sim_table_cell(&one, "%s", "");
    split_cells(&one, r);
    moe_cells(&one, r, &l);
    sim_table_cell(&one, "%lld", (long long)r->micro_batch);
    if (r->global_batch > 0) sim_table_cell(&one, "%lld", (long long)r->global_batch);
    else sim_table_cell(&one, "%s", "");
    sim_table_cell(&one, "%s", r->recompute[0] ? r->recompute : "none");
    sim_table_cell(&one, "%d", r->distributed_optimizer == 1);
    sim_table_cell(&one, "%s", uly_framework_name(ULY_FW_MEGATRON));
    /* FP8 training (fp8 = hybrid or e4m3) trains with bf16 or fp16 beside it: fp8 wins */
    const uly_dtype dt = r->fp8[0] ? ULY_FP8 : r->bf16 == 1 ? ULY_BF16 : r->fp16 == 1 ? ULY_FP16 : ULY_FP32;
    sim_table_cell(&one, "%s", uly_dtype_name(dt));
    /* the main gradients where the log says they were, against the rule
     * ulysim applies without it (fp32 under bf16 and FP8, fp16 under fp16) */
    sim_table_cell(&one, "%s", (dt == ULY_BF16 || dt == ULY_FP8) && r->grads_fp32 == 0 ? "true" : "");
    sim_table_cell(&one, "%s", dt == ULY_FP16 && r->grads_fp32 == 1 ? "true" : "");
    /* the cross-entropy's kernels, the implementation only under the
     * fusion (Megatron-LM reads it only then) */
    sim_table_cell(&one, "%s", r->ce_fusion == 1 ? "true" : "");
    sim_table_cell(&one, "%s", r->ce_fusion == 1 ? r->ce_impl : "");
    /* the main gradients' accumulation where the log turned its fusion off
     * (on is ulysim's default, as Megatron-LM's) */
    sim_table_cell(&one, "%s", r->grad_accum_fusion == 0 ? "false" : "");
    /* Megatron-LM's own layers where the log ran them (TransformerEngine's
     * is ulysim's default, as Megatron-LM's) */
    sim_table_cell(&one, "%s", !strcmp(r->transformer_impl, "local") ? "local" : "");
    sim_table_cell(&one, "%.9g", ms / 1000.0);
    if (isnan(tf)) {
        sim_table_cell(&one, "%s", "");
        sim_table_cell(&one, "%s", "");
    } else {
        sim_table_cell(&one, "%.9g", tf);
        sim_table_cell(&one, "%s", "megatron-lm");
    }
    if (r->mem_peak_mb > 0) sim_table_cell(&one, "%.6g", r->mem_peak_mb / 1024.0);
    else sim_table_cell(&one, "%s", "");
    sim_table_cell(&one, "%s", "false");
    rc = one.oom ? SIM_EXIT_INTERNAL : check_row(path, r, warmup, ms, tf, &one, out, why, n);
    if (!rc) {
        sim_table_row(t);
        for (int c = 0; c < C_COUNT; c++) sim_table_cell(t, "%s", one.cells[c]);
    }
    sim_table_free(&one);
    return rc;
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
    /* bad usage is one line on stderr (args.h); the whole usage is --help's */
    if (argc < 2) {
        sim_err_as("ulysim runs", "which action? (valid: from-megatron; see ulysim runs --help)");
        return SIM_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return SIM_EXIT_OK;
    }
    if (strcmp(argv[1], "from-megatron")) {
        sim_err_as("ulysim runs", "unknown action %s (valid: from-megatron; see ulysim runs --help)",
                   text_quote(argv[1], why, 80));
        return SIM_EXIT_USAGE;
    }
    const char *out = NULL, *cluster = NULL;
    int64_t warmup = DEFAULT_WARMUP;
    const char **logs = calloc((size_t)argc, sizeof *logs);
    int n_logs = 0, rc = 0;
    if (!logs) return SIM_EXIT_INTERNAL;
    static const char *const WHO = "ulysim runs";
    static const char *const OUT[] = {"-o", "--output", NULL}, *const WARMUP[] = {"--warmup", NULL},
                             *const CLUSTER[] = {"--cluster", NULL};
    const char *warmup_v = NULL;
    static runs_flags flags;
    flags.n = 0;
    for (int i = 2; i < argc && !rc; i++) {
        const char *a = argv[i], *v = NULL;
        char qb[80];
        int r = sim_opt_help(WHO, a); /* r < 0: the option was misused, the message is out */
        if (r > 0) {
            usage(stdout);
            free(logs);
            return SIM_EXIT_OK;
        } else if (!r && (r = sim_opt_value(WHO, argc, argv, &i, OUT, &out, &v)) > 0) {
            /* an empty -o: the writer says why */
        } else if (!r && (r = sim_opt_value(WHO, argc, argv, &i, CLUSTER, &cluster, &v)) > 0) {
            if (!*v) rc = sim_fail(why, sizeof why, "--cluster needs a value (see %s --help)", WHO);
        } else if (!r && (r = sim_opt_value(WHO, argc, argv, &i, WARMUP, &warmup_v, &v)) > 0) {
            char *end;
            const long long x = strtoll(v, &end, 10);
            if (!*v || *end || x < 0 || x > 1000000000)
                rc = sim_fail(why, sizeof why, "--warmup %s: not a count of iterations (valid: 0 to 1000000000)",
                              text_quote(v, qb, sizeof qb));
            warmup = x;
        } else if (r) {
            free(logs);
            return SIM_EXIT_USAGE;
        } else if (runs_flags_take(argc, argv, &i, &flags)) {
            /* read with the other planning flags, for logs without their block */
        } else if (a[0] == '-' && a[1]) {
            rc = sim_fail(why, sizeof why, "unknown option %s (valid: -o, --warmup, --cluster; see ulysim runs "
                          "--help)", text_quote(a, qb, sizeof qb));
        } else {
            logs[n_logs++] = a;
        }
    }
    if (!rc && n_logs == 0) rc = sim_fail(why, sizeof why, "no log given (usage: ulysim runs from-megatron LOG...)");
    /* one log given twice (by any name) would be two rows of one run */
    if (!rc) rc = sim_files_distinct(logs, n_logs, why, sizeof why);
    for (int i = 0; i < n_logs; i++) out_file_input_note(logs[i], NULL); /* -o may not replace them */
    if (!rc && out) rc = out_file_check(out, OUT_FILE_STREAM, why, sizeof why); /* before the work */
    mlog_run *r = rc ? NULL : malloc(sizeof *r);
    if (!rc && !r) rc = SIM_EXIT_INTERNAL;
    sim_table t;
    sim_table_init(&t, C_COUNT, COLS, NULL);
    for (int i = 0; i < n_logs && !rc; i++) rc = log_row(logs[i], warmup, cluster, out, &flags, r, &t, why, sizeof why);
    if (!rc) rc = write_rows(&t, warmup, out, why, sizeof why);
    if (rc && why[0]) sim_err_as("ulysim runs", "%s", why);
    else if (rc) sim_err_as("ulysim runs", "internal failure");
    sim_table_free(&t);
    free(r);
    free(logs);
    return rc;
}
