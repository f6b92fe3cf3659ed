/* output.h: what ulysim prints. Tables are for people and gnuplot alike:
 * '#' lines for headers and notes, whitespace-separated columns whose names
 * carry their units, '-' for a missing value, blocks separated by two blank
 * lines (gnuplot's `index`). CSV has one header line and RFC 4180 quoting.
 * JSON is one cJSON document with a stable key order; integers are printed
 * as integers (int64 exactly), other numbers round-trip. */
#ifndef SIM_OUTPUT_H
#define SIM_OUTPUT_H

#include <stdint.h>
#include <stdio.h>
#include <cjson/cJSON.h>

#include "context.h"
#include "ulysim.h"

/* ----------------------------------------------------------------- tables */

typedef struct sim_table {
    int ncols;
    const char *const *names;
    const char *align;  /* one char per column: 'l' or 'r' */
    char **cells;       /* rows x ncols, owned */
    int rows, cap, col, oom;
    int gap_every;      /* table print: a blank line after every gap_every rows (0: none) */
    int block_every;    /* and two blank lines (a gnuplot index) after every block_every rows */
} sim_table;

void sim_table_init(sim_table *t, int ncols, const char *const *names, const char *align);
void sim_table_row(sim_table *t);
void sim_table_cell(sim_table *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Return 0, or 1 when a cell could not be stored (out of memory). */
int sim_table_print(const sim_table *t, FILE *f);
int sim_table_print_csv(const sim_table *t, FILE *f);
void sim_table_free(sim_table *t);

/* ------------------------------------------------------------- formatting */

const char *sim_tiers_name(int tiers);       /* "intra", "inter", "intra+inter", "none" */
const char *sim_strategy_name(int id);
/* "u32.dp2", "u8.r8", "tp8.dp8": the degrees above 1 (dp always when > 1). */
void sim_degrees_str(const uly_layout *l, char *buf, size_t n);
/* The "# workload" line's text: batch, dtype, mask, attention, recompute,
 * ZeRO, split, the model-state convention, and what departs from defaults. */
void sim_workload_str(const uly_workload *w, char *buf, size_t n);
/* FP8 training's share of the output (output_fp8.c), each a no-op unless
 * the dtype is fp8: the workload's FP8 words appended (chars written); an
 * op's kind with " fp8" where it ran in FP8; the peaks of the cluster line;
 * the note on MFU against both peaks; the JSON workload's "fp8" object and
 * the step's "mfu_fp8". */
int sim_fp8_workload_str(const uly_workload *w, char *buf, size_t n);
const char *sim_op_kind_label(const uly_workload *w, const uly_op *op);
/* The parenthesis the workload line puts after a named attention kernel
 * ("" for the FlashAttention family, which --help describes). */
const char *sim_attn_kernel_why(uly_attn_kernel k);
void sim_peak_str(const uly_cluster *cl, const uly_workload *w, char *buf, size_t n);
void sim_fp8_note(FILE *f, const uly_workload *w, const uly_cluster *cl, const uly_timing *t);
void sim_fp8_json_workload(cJSON *wo, const uly_workload *w);
void sim_fp8_json_time(cJSON *st, const uly_workload *w, const uly_cluster *cl, const uly_timing *t, int runs);
/* output_moe.c: a mixture of experts or latent attention in the outputs
 * (nothing for a dense model): the model header's words (its length, 0
 * when none); the model's and workload's JSON objects ("moe", "mla",
 * "active_params"); the bytes a plan's MoE ops send per rank for one
 * layer and micro-batch, [dispatch fwd, dispatch bwd, combine fwd, combine
 * bwd]; the recommendation's line of them and its JSON beside the ops. */
int sim_moe_model_str(const uly_model *m, char *buf, size_t n);
void sim_moe_json_model(cJSON *mo, const uly_model *m);
void sim_moe_json_workload(cJSON *wo, const uly_model *m, const uly_workload *w);
void sim_moe_bytes(const uly_plan *pl, double bytes[4]);
void sim_moe_note(FILE *f, const uly_model *m, const uly_workload *w, const uly_layout *l, const uly_plan *pl);
void sim_moe_json_ops(cJSON *ops, const uly_model *m, const uly_plan *pl);
/* "u32 x dp2"-style words for sentences. */
void sim_degrees_words(const uly_layout *l, char *buf, size_t n);
/* Fatal reasons (or all when none is fatal) of a summary, "; "-separated. */
void sim_reasons_str(const sim_ctx *c, const sim_summary *s, int fatal_only, char *buf, size_t n);
/* 1 when the summary carries priced numbers (a layout with valid shapes). */
int sim_has_numbers(const sim_summary *s);
/* 1 when it may show throughput (tokens/s, TFLOP/s, MFU, HFU): priced and
 * feasible. A plan that does not fit keeps its memory, bytes and step time
 * (what it would take) but shows no throughput, as it cannot run. */
int sim_shows_throughput(const sim_summary *s);
/* 1 when every degree but data parallelism is 1 (no TP, no sequence split). */
int sim_is_plain_dp(const uly_layout *l);
/* What such a layout runs: "plain data parallelism", or "pipeline and data
 * parallelism" when it has pipeline stages. */
const char *sim_plain_dp_words(const uly_layout *l);
/* "s" unless n is 1: "1 GPU", "2 GPUs". */
const char *sim_plural_s(long long n);
/* Short infeasibility tag for a table column: "yes", or "no:oom", "no:heads", ... */
const char *sim_fit_tag(const sim_summary *s);
/* Prints text as '#' comment lines of at most `width` columns: the first
 * starts with `first`, the rest with `cont`; breaks at spaces. */
void sim_print_note(FILE *f, const char *first, const char *cont, const char *text, int width);
/* 1.50M, 128K, 131073: a token count the way people write it. */
void sim_size_str(int64_t v, char *buf, size_t n);
/* The same, rounded when not a whole multiple: 2.41M. */
void sim_size_approx(int64_t v, char *buf, size_t n);
/* v with `decimals` decimals (a sign when `sign`), in exponent form from
 * 1e6 on: an error against a measured time near 0, or a ratio of two, has
 * no bound, and "%.1f" would print hundreds of digits. Returns buf. */
const char *sim_fixed_str(double v, int decimals, int sign, char *buf, size_t n);

/* Table cells a person reads: seconds ("%.4g", whole seconds from 1000 s to
 * 1e9 s) and bytes in GiB (two decimals, exponent form from a million GiB;
 * a model far too large for any cluster reaches 10^20). */
void sim_cell_seconds(sim_table *t, double s);
void sim_cell_gib(sim_table *t, double bytes);
/* Five cells: the degrees u, r, tp, dp and pp (1 when unset). */
void sim_cell_layout(sim_table *t, const uly_layout *l);
/* A MoE model's expert-parallel degrees, ep and etp (1 where unused), after the layout's. */
void sim_cell_layout_moe(sim_table *t, const uly_layout *l);

/* ------------------------------------------------------------------- rows */

/* Rows of summaries, the output of max-seq, min-gpus and sweep. */
typedef enum sim_rows_kind { SIM_ROWS_SWEEP = 0, SIM_ROWS_MAXSEQ, SIM_ROWS_MINGPUS } sim_rows_kind;
/* Table or CSV. best: per-row flag (sweep: best at its point) or NULL.
 * gap_every/block_every: see sim_table. Returns 0, or 1 on failure. */
int sim_print_rows(const sim_ctx *c, const sim_summary *rows, size_t n, sim_rows_kind kind, const unsigned char *best,
                   int gap_every, int block_every, FILE *f);

/* ------------------------------------------------------------------- JSON */

cJSON *sim_json_int(int64_t v);
cJSON *sim_json_num(double v);
/* Adds, returning 0, or 1 on out of memory (the item is freed). */
int sim_json_add(cJSON *obj, const char *key, cJSON *item);
/* "recommended": the index into "plans" of the best plan that fits, or
 * null (the contract of docs/design.md), and "recommended_strategy": that
 * plan's strategy by name, or null; 0, or 1 when out of memory. */
int sim_json_recommended(cJSON *root, const sim_summary *rows, int rec);
/* When --gpus grew the preset's cluster (nodes of the same kind added for
 * the GPUs asked for): "the preset has N nodes; nodes of the same kind were
 * added for G GPUs" in buf, else ""; buf returned. Every writer says it:
 * the plan and limits tables, sweep's table (its CSV on stderr), and JSON's
 * config.cluster (preset_nodes, grown). */
const char *sim_cluster_grown(const sim_ctx *c, char *buf, size_t n);
cJSON *sim_json_config(const sim_ctx *c, const char *command);
cJSON *sim_json_plan(const sim_ctx *c, const sim_summary *s);
/* The per-op breakdown of a plan with its priced result. */
cJSON *sim_json_ops(const uly_plan *p, const uly_result *r);
extern const char sim_flop_convention[];
/* Prints and frees. Returns 0, or 1 on failure. */
int sim_json_print(cJSON *root, FILE *f);
/* A writer's JSON document: printed and freed, or, when bad (an addition
 * failed), freed with the message that memory ran out. Returns an exit
 * status. */
int sim_json_emit(cJSON *root, int bad, FILE *f);

#endif
