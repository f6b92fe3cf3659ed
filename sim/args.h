/* args.h: the ulysim command line as typed (sim_args) and how a command
 * reports bad input. What the flags resolve to (presets, workload, GPU
 * counts and sequence lengths) is context.h's sim_ctx.
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
    int causal, flash;
    uly_split split;
    int progress;                        /* sweep: 1 auto (tty), 0 never */
    int help, version;
} sim_args;

/* Parses argv. Returns 0, or 2 with a one-line reason in why. */
int sim_args_parse(int argc, char **argv, sim_args *a, char *why, size_t why_len);
void sim_args_help(FILE *f);

/* Error message on stderr, rank 0 only, prefixed "ulysim: ". */
void sim_err(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Bad input: writes the one-line reason (newlines flattened) to why and
 * returns SIM_EXIT_USAGE. */
int sim_fail(char *why, size_t why_len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Appends item to the list in buf, after sep when buf is not empty. */
void sim_join(char *buf, size_t n, const char *sep, const char *item);
/* Flattens a message to one line. */
void sim_one_line(char *s);
/* A value as a message may quote it: 'value', printable, at most 60 characters. */
const char *sim_quote(const char *v, char *buf, size_t n);

#endif
