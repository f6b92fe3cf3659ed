/* args_megatron.h: a Megatron-LM launch line read as it is (args_megatron.c):
 * Megatron-LM's own argument names for the model's shape, precision and
 * optimizer, the arguments that change no cost accepted and listed once, and
 * `--args-file FILE`, a launch script read through the shell subset of
 * args_file.c. What each name maps to is docs/inputs.md's table. */
#ifndef SIM_ARGS_MEGATRON_H
#define SIM_ARGS_MEGATRON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ulysim.h"

/* One of Megatron-LM's argument names (megatron_names.c, generated):
 * values '0' a switch, '1' one value, '?' an optional one, '+' or '*' several
 * (argparse's nargs), '2'.. that many; group: the _add_*_args function or
 * configuration dataclass that declares it. */
typedef struct sim_mlm_name {
    const char *name;
    char values;
    const char *group;
} sim_mlm_name;
extern const sim_mlm_name sim_mlm_names[];
extern const int sim_mlm_names_count;

#define SIM_MLM_IGNORED_MAX 256
#define SIM_MLM_MODEL_TEXT 768

/* What the Megatron-LM names said (0 / -1: not given). */
typedef struct sim_mlm {
    int launch;                 /* read from --args-file: Megatron-LM's defaults hold for what it leaves out */
    const char *args_file;      /* the file, for messages */
    const char *shape_flag;     /* the first model-shape argument given (NULL: none) */
    int64_t layers, hidden, ffn, heads, groups, kv_channels;
    int64_t vocab, padded_vocab, divisible_by; /* divisible_by 0: 128, Megatron-LM's default */
    int no_bias, add_bias, qkv_bias; /* --disable-bias-linear, --add-bias-linear, --add-qkv-bias */
    int gqa, swiglu, untie, no_pad, rmsnorm;  /* rmsnorm: --normalization RMSNorm (Megatron-LM's default LayerNorm) */
    double hidden_dropout, attn_dropout;       /* -1: Megatron-LM's default, 0.1 */
    int bf16, fp16, dist_opt, unfused_attn;
    /* a mixture of experts (--num-experts ...; 0: not given) and multi-head
     * latent attention (--multi-latent-attention with its ranks and head
     * widths; 0: Megatron-LM's defaults) */
    int64_t experts, topk, moe_ffn, shared_ffn, q_lora, kv_lora, qk_head, qk_pos, v_head;
    const char *moe_freq;                      /* --moe-layer-freq as typed; NULL: 1, every layer */
    int mla, grouped_gemm;
    const char *ignored[SIM_MLM_IGNORED_MAX];  /* accepted, no cost: listed once */
    int n_ignored;
    char model_text[SIM_MLM_MODEL_TEXT];       /* the model built from the shape, as --model's inline form */
    double params_megatron;                    /* Megatron-LM's formula's count of that model; 0: none built;
                                                * -1: built, of experts or latent attention, which the dense
                                                * formula does not count */
} sim_mlm;

struct sim_args;

/* The table entry of a Megatron-LM name (no "=value"), or NULL. */
const sim_mlm_name *sim_mlm_find(const char *name);

/* A Megatron-LM argument at argv[*i] named name (val: its value after '=',
 * or NULL) that args.c's own tables do not hold: 1 when read (its value
 * taken from argv, *i moved past it), 0 when name is not Megatron-LM's (the
 * caller says unknown option), or -1 with *rc = SIM_EXIT_USAGE and the reason
 * in why (a value it cannot price, an argument that changes cost and is not
 * priced). */
int sim_mlm_option(struct sim_args *a, const char *name, const char *val, int argc, char **argv, int *i, int *rc,
                   char *why, size_t n);

/* A launch script's argument at argv[*i] that ulysim's command line reads
 * another way (--split): read as Megatron-LM's, 1; 0 when it is not one of
 * those; -1 as sim_mlm_option. */
int sim_mlm_file_option(struct sim_args *a, int argc, char **argv, int *i, int *rc, char *why, size_t n);

/* Before a launch script's arguments: Megatron-LM's defaults (fp32, no
 * distributed optimizer, no recompute, no overlap, the megatron model-state
 * convention). */
void sim_mlm_launch_defaults(struct sim_args *a);

/* Once every argument is read: the model built from the shape (a->model set
 * to its inline form), the precision and optimizer reconciled with ulysim's
 * own flags, and, for a launch script, the degrees and strategy Megatron-LM
 * runs when it does not name them. model_given: --model was typed;
 * dtype_typed, zero_typed: --dtype's and --zero's values as typed, or NULL
 * (they must agree with --bf16 / --fp16 / --use-distributed-optimizer). 0, or
 * SIM_EXIT_USAGE with the reason. */
int sim_mlm_finish(struct sim_args *a, int model_given, const char *dtype_typed, const char *zero_typed, char *why,
                   size_t n);

/* On f (stderr, rank 0), once the request is resolved: the model built
 * from Megatron-LM's shape arguments with its parameter count beside
 * Megatron-LM's formula's, and the arguments ignored, on one line each. */
void sim_mlm_report(const struct sim_args *a, const uly_model *model, FILE *f);

/* --help's list of the Megatron-LM names read here and what each maps to. */
void sim_mlm_help(FILE *f);

/* The parameter count of the model by Megatron-LM's own formula
 * (megatron/training/theoretical_memory_usage.py,
 * compute_weight_and_optimizer_memory, dense layers). */
double sim_mlm_params_formula(const sim_mlm *m, int64_t ffn, int64_t groups, int64_t kv_channels, int64_t padded_vocab);

/* `--args-file FILE` (args_file.c): the arguments of the script's launch
 * command (after the .py it runs), expanded as the shell subset it
 * understands would; *argv_out allocated (free with sim_args_file_free).
 * 0, or SIM_EXIT_USAGE with "FILE:LINE: ..." in why. */
int sim_args_file_read(const char *path, int *argc_out, char ***argv_out, char *why, size_t n);
void sim_args_file_free(int argc, char **argv);

#endif
