/* args.h: the ulysim command line, the resolved configuration it stands for,
 * and what the subcommands share (best-layout search with its fallback, the
 * compact per-strategy summary that travels between MPI ranks).
 *
 * Exit codes (docs/design.md, "Contracts"): 0 success, 2 bad usage or bad input
 * (one line on stderr naming the value and what would be valid), 1 internal
 * failure. */
#ifndef SIM_ARGS_H
#define SIM_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "ulysim.h"

enum { SIM_EXIT_OK = 0, SIM_EXIT_INTERNAL = 1, SIM_EXIT_USAGE = 2 };

typedef enum sim_cmd {
    SIM_CMD_PLAN = 0,
    SIM_CMD_MAXSEQ,
    SIM_CMD_MINGPUS,
    SIM_CMD_SWEEP,
    SIM_CMD_PRESETS,
} sim_cmd;
const char *sim_cmd_name(sim_cmd c);

typedef enum sim_format { SIM_FMT_TABLE = 0, SIM_FMT_JSON, SIM_FMT_CSV } sim_format;

#define SIM_LIST_MAX 256
#define SIM_DEFAULT_MODEL "llama3-8b"
#define SIM_DEFAULT_CLUSTER "dgx-h100"
#define SIM_DEFAULT_GPUS 8
#define SIM_DEFAULT_SEQ 131072         /* 128K */
#define SIM_DEFAULT_MAXSEQ_HI (1LL << 30) /* max-seq searches up to 1G tokens */
#define SIM_GPUS_MAX (1LL << 24)

typedef struct sim_args {
    sim_cmd cmd;
    sim_format format;
    int format_set;
    const char *model;   /* preset name or FILE.json */
    const char *cluster;
    int64_t gpus[SIM_LIST_MAX];
    int n_gpus, gpus_set;
    int64_t seq[SIM_LIST_MAX];
    int n_seq, seq_set;
    uly_strategy_id strategies[ULY_STRAT_COUNT]; /* in the order given */
    int n_strategies;
    int64_t pin_u, pin_r, pin_t, pin_pp; /* 0: not pinned */
    int64_t batch;
    int batch_set;
    int64_t global_batch;                /* 0: micro-batch x dp */
    uly_dtype dtype;
    uly_recompute recompute;
    int zero;
    int causal, flash;
    uly_split split;
    int progress;                        /* sweep: 1 auto (tty), 0 never */
    int help, version;
} sim_args;

/* Parses argv. Returns 0, or 2 with a one-line reason in why. */
int sim_args_parse(int argc, char **argv, sim_args *a, char *why, size_t why_len);
void sim_args_help(FILE *f);

/* Everything a subcommand needs, resolved from the arguments. */
typedef struct sim_ctx {
    const sim_args *a;
    uly_model model;
    uly_cluster cluster;
    uly_workload w;          /* seq is the first --seq value */
    uly_search_opts opts;
    uly_strategy_id strat[ULY_STRAT_COUNT];
    int n_strat;
    int strat_explicit;      /* --strategy given */
    int pinned;              /* any of --ulysses/--ring/--tp given */
    int64_t preset_nodes;    /* the preset's node count, when --gpus needed more */
} sim_ctx;

/* Loads presets, builds and checks the workload, picks the strategies.
 * Returns 0, or 2 (bad input) with a reason, or 1 (internal). */
int sim_ctx_resolve(const sim_args *a, sim_ctx *c, char *why, size_t why_len);

/* Checks that `gpus` fills whole nodes once past one: 0, or 2 with a reason. */
int sim_check_gpus_nodes(const sim_ctx *c, int64_t gpus, char *why, size_t why_len);

/* Checks that pinned degrees divide `gpus`: 0, or 2 with a reason. */
int sim_check_pins_divide(const sim_ctx *c, int64_t gpus, char *why, size_t why_len);

/* What a subcommand keeps of one evaluated layout: plain data, the same on
 * every MPI rank, so rank 0 can gather and print it. */
enum {
    SIM_ROW_OK = 0,        /* the search found a layout with valid shapes */
    SIM_ROW_NOLAYOUT = 1,  /* none has valid shapes: a representative layout's reasons */
    SIM_ROW_OVERFLOW = 2,  /* sizes overflow 63 bits */
    SIM_ROW_ERROR = 3,     /* internal failure */
};
typedef struct sim_summary {
    int32_t status;
    int32_t strategy;
    int64_t seq, gpus;
    int64_t value;         /* max-seq: longest sequence; min-gpus: fewest GPUs */
    uly_layout layout;
    int64_t micro_batch;
    int32_t feasible;
    int32_t n_reasons;
    uly_reason reasons[ULY_MAX_REASONS];
    int64_t comm_fwd, comm_bwd, comm_recompute, zero_bytes;
    int32_t tiers;
    uly_memory mem;
    uly_timing time;
    uint64_t evaluated;
    char note[160];        /* why no reasons could be had (library message), or empty */
} sim_summary;

void sim_summary_from_result(sim_summary *s, const uly_result *r);

/* Best layout of strategy s on gpus GPUs at sequence seq (uly_search_best);
 * when no layout has valid shapes, the reasons of a representative layout
 * (the pinned degrees, or the strategy's own degree over all GPUs). */
void sim_best(const sim_ctx *c, uly_strategy_id s, int64_t gpus, int64_t seq, sim_summary *out);

/* The representative layout sim_best falls back to. */
void sim_pure_layout(const sim_ctx *c, uly_strategy_id s, int64_t gpus, uly_layout *l);

/* Re-evaluates a summary's layout with its micro-batch: plan + result with
 * per-op times. Returns the uly_evaluate status. */
uly_status sim_reevaluate(const sim_ctx *c, const sim_summary *s, uly_plan *plan, uly_result *res);

/* Error message on stderr, rank 0 only, prefixed "ulysim: ". */
void sim_err(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* The subcommands. Each returns an exit code. */
int sim_cmd_plan(const sim_ctx *c);
int sim_cmd_maxseq(const sim_ctx *c);
int sim_cmd_mingpus(const sim_ctx *c);
int sim_cmd_sweep(const sim_ctx *c);
int sim_cmd_presets(const sim_args *a);

#endif
