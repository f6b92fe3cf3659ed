/* args.h: the ulysim command line as typed (sim_args) and how a command
 * reports bad input. What the flags resolve to (presets, workload, GPU
 * counts and sequence lengths) is context.h's sim_ctx.
 *
 * Exit codes (docs/design.md, "Contracts"): 0 success, 2 bad usage or bad input
 * (one line on stderr naming the value and what would be valid), 1 internal
 * failure. */
#ifndef SIM_ARGS_H
#define SIM_ARGS_H

#include "text_quote.h" /* text_quote, text_escape: what messages echo */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "ulysim.h"
#include "args_megatron.h" /* sim_mlm: what Megatron-LM's names said */

/* Exit statuses: the contract's three (docs/design.md), and, asked for with
 * --require-fit, SIM_EXIT_NOFIT: the run worked and no plan fits (nothing
 * fits, or the pinned layout cannot run). Without the flag that answer is
 * a success: the output says why none fits. */
enum { SIM_EXIT_OK = 0, SIM_EXIT_INTERNAL = 1, SIM_EXIT_USAGE = 2, SIM_EXIT_NOFIT = 3 };

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

/* Uneven pipelines, recompute's details, activation offload, as typed
 * (args_layout.c): the uly_layout / uly_workload fields they become */
typedef struct sim_layout_args {
    int64_t pp_first, pp_last;   /* --pp-first/--pp-last; 0: not given */
    const char *pp_layout;       /* --pp-layout (Megatron-Core's layout string); NULL: not given */
    int64_t pp_mid_most;         /* from it: the most layers of a middle stage (0: none) */
    int64_t layout_layers;       /* and its transformer layers, checked against the model's */
    int pp_embed, pp_loss;       /* --pp-embed-layer, --pp-loss-layer */
    uint32_t recompute_modules;  /* bits 1 << ULY_RMOD_*; 0: not given */
    int recompute_method;        /* uly_recompute_method; 0: every layer */
    int64_t recompute_layers;
    int64_t offload_layers;
    int cpu_offloading;          /* Megatron-LM's --cpu-offloading */
    int granularity_set;         /* Megatron-LM's --recompute-granularity given */
} sim_layout_args;
/* FP8 training's flags (args_fp8.c): --fp8-recipe (given or not),
 * Megatron-LM's --fp8-format (sets --dtype fp8), --fp8-param-gather,
 * --fp8-attention, --first-last-layers-bf16, --fp8-amax-history-len. */
typedef struct sim_fp8_args {
    uly_fp8_recipe recipe;
    int recipe_set;
    const char *format;   /* Megatron-LM's --fp8-format (hybrid, e4m3); NULL: not given */
    const char *first;    /* the first FP8 flag given, for messages; NULL: none */
    int param_gather, attention, bf16_edges;
    int32_t start, end;   /* layers kept bf16 at each end (with bf16_edges; 1 unless given) */
    int start_set, end_set;
    int32_t amax_history; /* 0: Megatron-LM's default, 1 */
} sim_fp8_args;

/* Mixtures of experts' flags (args_moe.c): --ep, --etp, --moe-dispatcher,
 * --moe-capacity, --moe-imbalance and Megatron-LM's names for them; each
 * value as typed in ulysim's form [0] and Megatron-LM's [1] (NULL: not
 * given), to check the two agree and to name the flag in messages. */
typedef struct sim_moe_args {
    int32_t ep, etp;               /* 0: not pinned (searched) */
    uly_moe_dispatcher dispatcher; /* default alltoall; a launch script's allgather */
    double capacity;               /* 0: dropless */
    double imbalance;              /* default 1: even routing */
    const char *typed[5][2];
    const char *first;             /* the first of these flags given, for messages; NULL: none */
} sim_moe_args;

typedef struct sim_args {
    sim_cmd cmd;
    sim_format format;
    int format_set;
    const char *model;   /* preset name or FILE.json */
    const char *cluster;
    /* --gpus and --seq as typed, lists and ranges expanded (n 0: not given);
     * the request's values, defaults applied, are sim_ctx's */
    int64_t gpus[SIM_LIST_MAX];
    int n_gpus;
    int64_t seq[SIM_LIST_MAX];
    int n_seq;
    uly_strategy_id strategies[ULY_STRAT_COUNT]; /* in the order given */
    int n_strategies;
    int64_t pin_u, pin_r, pin_t, pin_pp; /* 0: not pinned */
    int64_t batch;
    int batch_set;
    int64_t global_batch;                /* 0: micro-batch x dp */
    uly_dtype dtype;
    uly_recompute recompute;
    int zero;
    int zero_set;                        /* --zero given (megatron's default is 1, the others' 3) */
    int strategies_all;                  /* --strategy all (in a list too): as without --strategy, the
                                          * strategies that can take the pinned degrees */
    int attn_kernel_set;                 /* --attn-kernel given */
    int causal, flash;
    uly_split split;
    int progress;                        /* sweep: 1 auto (tty), 0 never */
    int require_fit;                     /* --require-fit: exit SIM_EXIT_NOFIT when no plan fits */
    int64_t pin_vpp;                     /* virtual stages per pipeline rank (interleaved 1F1B); 0: 1, or searched
                                          * under --pp auto */
    int64_t layers_per_vstage;           /* Megatron's --num-layers-per-virtual-pipeline-stage; 0: not given */
    uly_framework framework;
    double attn_density;                 /* block-sparse attention; 0: dense */
    int64_t ffn_chunks, loss_chunks;     /* 0: whole */
    int tp_comm_overlap;
    int overlap_grad_reduce; /* 1 on, -1 off, 0 the framework's default */
    int overlap_param_gather;            /* Megatron's --overlap-param-gather */
    int grad_reduce_fp32; /* main gradients: 1 fp32, -1 the parameters' precision, 0 Megatron-LM's default */
    int grad_accum_fusion; /* their accumulation: 1 in the weight-gradient GEMMs, -1 by adds, 0 the default (1) */
    int pp_scatter_gather; /* Megatron-LM's pipeline scatter-gather under plain TP: 1 on, -1 off, 0 the default (off) */
    uly_transformer_impl transformer_impl; /* --transformer-impl (0: transformer_engine) */
    int cuda_graphs;                     /* the step's kernels replayed from CUDA graphs */
    int ce_fusion;                       /* --cross-entropy-loss-fusion */
    uly_ce_impl ce_fused_impl;           /* --cross-entropy-fusion-impl; 0 (not given): native, Megatron-LM's default */
    double step_overhead_s;              /* --step-overhead-ms: the host's own work per step */
    int zero_prefetch;                   /* layers prefetched under ZeRO-3; 0 default (1), -1 none */
    uly_attn_kernel attn_kernel;
    int sequence_parallel;               /* Megatron's --sequence-parallel: TP splits the sequence too */
    int64_t cp;                          /* Megatron's --context-parallel-size; 0: not given */
    int cp_comm;                         /* Megatron's --cp-comm-type (args_alias.c order); -1: not given */
    int64_t hcp_u, hcp_r;                /* --hierarchical-context-parallel-sizes U,R; 0: not given */
    int help, version;
    /* what-if overrides of the cluster preset (0: the preset's) */
    double nic_bw_Bps, intra_bw_Bps;     /* per GPU per direction */
    int64_t gpus_per_node;
    double oversub;
    const char *timeline;                /* plan: --timeline FILE, the predicted schedule; NULL: none */
    int presets_show;                    /* `presets show NAME` */
    const char *plan_flag;               /* the first planning flag given (not --format, --help, --version,
                                          * --progress), as ulysim or Megatron-LM names it; NULL: none */
    const char *show_name;
    sim_mlm mlm;                         /* Megatron-LM's model, precision and optimizer arguments, --args-file */
    double mem_headroom_gib;             /* --mem-headroom: GiB of device memory held back; < 0: the preset's */
    sim_layout_args lay;                 /* pipelines' splits, recompute modes, activation offload (args_layout.c) */
    sim_fp8_args fp8;                    /* FP8 training's flags (args_fp8.c) */
    sim_moe_args moe;                    /* mixtures of experts' flags (args_moe.c) */
} sim_args;

/* args_moe.c: the flags of mixture-of-experts layouts and workloads. An
 * option NAME at argv[*i] (val its "=value" or NULL): -1 when it is none of
 * them, else 0 or SIM_EXIT_USAGE; whether NAME is one; once every argument
 * is read, the ulysim and Megatron-LM forms agree; once the model is known
 * (context.c), what a dense model or the experts' count refuse; the
 * workload's fields; --help's lines. */
int sim_moe_option(sim_args *a, int argc, char **argv, int *i, const char *name, const char *val, char *why, size_t n);
int sim_moe_takes_value(const char *name);
int sim_moe_finish(const sim_args *a, char *why, size_t n);
int sim_moe_check(const sim_args *a, const uly_model *m, char *why, size_t n);
void sim_moe_workload(const sim_args *a, uly_workload *w);
void sim_moe_help(FILE *f);
/* Megatron-LM's --moe-layer-freq: an integer k (every k-th layer from the
 * first), or a pattern "([0]*3+[1]*58)" of the model's layers that is the
 * first dense layers, then every k-th MoE: *dense_first, *every; 0, or
 * SIM_EXIT_USAGE naming the value. */
int sim_moe_freq_parse(const char *v, int64_t layers, int64_t *dense_first, int64_t *every, char *why, size_t n);

/* args_layout.c: its options (ulysim's names and Megatron-LM's); -1 when
 * NAME is none of them, else 0 or SIM_EXIT_USAGE (argv[*i] is the option,
 * val its "=value" or NULL; values taken move *i); whether one takes a
 * value; the checks once every argument is read. */
int sim_layout_option(sim_args *a, int argc, char **argv, int *i, const char *name, const char *val, char *why,
                      size_t n);
int sim_layout_takes_value(const char *name);
int sim_layout_finish(sim_args *a, char *why, size_t n);
void sim_layout_help(FILE *f);
/* and what they make of the request (context.c): the workload's and
 * search's fields; whether pp x V stages have a split Megatron-Core
 * accepts; a pinned layout's split */
int sim_layout_apply(const sim_args *a, uly_workload *w, uly_search_opts *o, char *why, size_t n);
/* pp_layout.c: a pipeline layout string over pp stages, read as
 * Megatron-Core reads it, into its chunks, virtual stages, transformer
 * layers, and the layers of the first and last ranks and the most of a
 * middle one: 0, or SIM_EXIT_USAGE naming what is wrong (flag: the option
 * as typed). */
typedef struct sim_pp_layout {
    int64_t chunks, vpp, layers;
    int64_t first, last, mid_most;
} sim_pp_layout;
int sim_pp_layout_parse(const char *flag, const char *s, int64_t pp, sim_pp_layout *o, char *why, size_t n);
int sim_layout_interleaves(const uly_model *m, int64_t pp, int64_t V, const uly_search_opts *o);
void sim_layout_split(const uly_model *m, const uly_search_opts *o, uly_layout *l);

/* 1 when name is one of FP8 training's flags; reads it (its value taken
 * from val or the next argument): 0 or SIM_EXIT_USAGE. */
int sim_args_fp8_is(const char *name);
int sim_args_fp8_read(sim_args *a, int argc, char **argv, int *i, const char *name, const char *val, char *why,
                      size_t n);
/* Once every argument is read: --fp8-format sets --dtype fp8, and the other
 * FP8 flags need it. */
int sim_args_fp8_finish(sim_args *a, char *why, size_t n);
/* FP8 training on the cluster: its GPU has FP8 tensor cores and GEMMs
 * priced by shape, and mxfp8 needs Blackwell's: 0, or SIM_EXIT_USAGE. */
int sim_args_fp8_check(const sim_args *a, const uly_cluster *c, char *why, size_t n);
/* The attention kernel on the cluster: cuDNN fused attention under
 * --framework megatron on Hopper and Blackwell unless --attn-kernel says
 * otherwise (Megatron-Core's TransformerEngine layer spec), else the flag's
 * or FlashAttention-2; cudnn refused off Hopper and Blackwell (its
 * published rates are Hopper's): 0, or SIM_EXIT_USAGE. */
int sim_attn_kernel_pick(const sim_args *a, const uly_cluster *c, uly_workload *w, char *why, size_t n);
/* FP8 training's lines of --help, with their defaults. */
void sim_args_fp8_help(FILE *f);
/* The workload's FP8 fields from the flags. */
void sim_args_fp8_workload(const sim_args *a, uly_workload *w);

/* Megatron-LM's names (args_alias.c): the ulysim flag a Megatron flag is
 * read as (the name itself when it is not one); the Megatron flag read as a
 * ulysim one (NULL: none); --cp-comm-type's value; context parallelism
 * resolved to a strategy and its degrees once every flag is read; the
 * nearest known option to a misspelt one, or NULL. */
const char *sim_alias_canonical(const char *name);
const char *sim_alias_megatron(const char *name);
int sim_cp_comm_parse(const char *v, int *out, char *why, size_t n);
int sim_megatron_resolve(sim_args *a, char *why, size_t n);
const char *sim_nearest_option(const char *name, const char *const *known, int n_known);

/* 1 when NAME (no "=value"; ulysim's flag, Megatron-LM's name for one or
 * any Megatron-LM argument with a value, --args-file) is a planning option
 * that takes a value: `plot` passes these on with the argument after them */
int sim_args_takes_value(const char *name);
/* 1 when NAME is one of the planning commands' switches (--causal, ...) */
int sim_args_is_switch(const char *name);

/* --mem-headroom's value (args_headroom.c): GiB, a decimal in [0, 1024]. */
int sim_mem_headroom_parse(const char *flag, const char *v, double *gib, char *why, size_t n);

/* Parses argv. Returns 0, or 2 with a one-line reason in why. */
int sim_args_parse(int argc, char **argv, sim_args *a, char *why, size_t why_len);
void sim_args_help(FILE *f);
/* The parse's defaults, before any argument (args.c; --help states them). */
void sim_args_defaults(sim_args *a);

/* The options of the subcommands that read their own command line
 * (validate, calibrate, trace, runs; args_opt.c), read one way by all, so
 * that each takes `NAME VALUE` and `NAME=VALUE` alike and says the same
 * thing when one is misused. Messages are one line prefixed by who (the
 * command as typed, "ulysim trace export"), which --help they point to.
 *
 * sim_opt_value: argv[*i] is one of names (NULL-terminated; names[0] the one
 * messages use, the others its other spellings), typed NAME VALUE or
 * NAME=VALUE: 1 with *v its value and *i on the last argument taken; 0 when
 * argv[*i] is another argument; -1 after the message when the value is
 * missing ("NAME needs a value"), or when seen is not NULL and *seen is
 * already set: the option given twice, naming both values, as the last
 * would win in silence (*seen is set to the value otherwise; seen NULL: an
 * option that may be repeated).
 * sim_opt_switch: 1 when a is the switch name; 0 when another argument; -1
 * after the message when it is given as name=VALUE (a switch takes none).
 * sim_opt_help: sim_opt_switch for --help or -h. */
int sim_opt_value(const char *who, int argc, char **argv, int *i, const char *const *names, const char **seen,
                  const char **v);
int sim_opt_switch(const char *who, const char *a, const char *name);
int sim_opt_help(const char *who, const char *a);

/* Error message on stderr, rank 0 only, prefixed "ulysim: ", on one line
 * with raw bytes escaped (text_escape). */
void sim_err(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* The same with another prefix (a subcommand's: "ulysim trace export"). */
void sim_err_as(const char *who, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Bad input: writes the one-line reason (newlines flattened) to why and
 * returns SIM_EXIT_USAGE. */
int sim_fail(char *why, size_t why_len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* strtod for a value a user typed: decimal notation only (digits, a point,
 * an exponent, a leading sign). strtod's hex ("0x10" is 16), inf, nan and
 * leading blanks are refused as sizes refuse them (uly_size_parse): NAN is
 * returned with *end at v. */
double sim_strtod_dec(const char *v, char **end);
/* The values of options (args_value.c): each 0, or nonzero with the one-line
 * reason in why (naming flag and the value as typed). A size (suffixes K, M,
 * G, T, 1e6, 2^20) at most hi; a count (a plain whole number) at most hi; a
 * list of sizes or ranges A..B (A, 2A, 4A, ... B) into out[0..*n_out), one
 * value unless allow_list, each at most hi_limit; a bandwidth with its unit
 * (400Gb/s, 50GB/s) in bytes/s; a fraction in (0, 1]; milliseconds in
 * [0, 3.6e6]. */
int sim_parse_size(const char *flag, const char *v, int64_t hi, int64_t *out, char *why, size_t n);
int sim_parse_count(const char *flag, const char *v, int64_t hi, int64_t *out, char *why, size_t n);
int sim_parse_list(const char *flag, const char *v, int allow_list, int64_t hi_limit, int64_t *out, int *n_out,
                   char *why, size_t n);
int sim_parse_bw(const char *flag, const char *v, double *out, char *why, size_t n);
int sim_parse_fraction(const char *flag, const char *v, double *out, char *why, size_t n);
int sim_parse_ms(const char *flag, const char *v, double *out, char *why, size_t n);
/* Appends item to the list in buf, after sep when buf is not empty. */
void sim_join(char *buf, size_t n, const char *sep, const char *item);
/* Flattens a message to one line. */
void sim_one_line(char *s);
/* The n files named are n different files (by device and inode, whatever
 * their names): 0, or 2 with "A and B are the same file" in why. One run
 * given twice would count twice (validate's medians, calibrate's fit). A
 * file that cannot be stat'ed passes: its reader says what is wrong. */
int sim_files_distinct(const char *const *files, int n, char *why, size_t why_len);

#endif
