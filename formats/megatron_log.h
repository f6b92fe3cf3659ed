/* megatron_log.h: reading a Megatron-LM training log (the text it prints on
 * stdout): the argument block it prints at start-up, the vocabulary padding
 * line, the iteration reports and the memory reports. Text in, struct out:
 * no I/O, so a test or a fuzzer can feed it any bytes. What the fields mean
 * for ulysim, and how they map to a runs-file row, is docs/megatron-logs.md.
 *
 * Messages written to `why` are one line and name the file (as `shown`) and
 * the line. */
#ifndef FORMATS_MEGATRON_LOG_H
#define FORMATS_MEGATRON_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "ulysim.h"

#define MLOG_MAX_REPORTS 4096 /* iteration reports kept; a longer log keeps its first ones */
#define MLOG_MAX_LINE 65536   /* longer lines are bad input */
#define MLOG_WORD 32
#define MLOG_MAX_KEYS 64      /* the arguments the reader keeps (megatron_log.c's table) */
#define MLOG_TEXT 256         /* a whole argument value kept as text (the pipeline layout) */
#define MLOG_VALUE 48         /* an argument's value as read, to compare a repeat with */

typedef struct mlog_report {
    int line;
    int64_t iteration;
    double iter_ms;      /* elapsed time per iteration (ms): the average over the log interval */
    double tflops;       /* throughput per GPU (TFLOP/s/GPU), NAN when not logged */
} mlog_report;

typedef struct mlog_run {
    int args_line;               /* the line of the "arguments" banner */
    /* the argument block; 0 (sizes) or -1 (flags) where the log has none */
    int64_t world_size, tp, cp, pp, vpp, layers_per_vstage;
    int64_t seq, micro_batch, global_batch;
    int64_t layers, hidden, heads, kv_heads, head_dim, ffn_hidden;
    int64_t hcp_u, hcp_r;        /* hierarchical_context_parallel_sizes [u, r] */
    int64_t log_interval;
    int swiglu, sequence_parallel, distributed_optimizer, fp16, bf16, untied, dropout;
    char recompute[MLOG_WORD];   /* recompute_granularity: "full", "selective" or "" (None) */
    char cp_comm[MLOG_WORD];     /* cp_comm_type ("p2p", "a2a", ...; the first of a per-layer list), "" absent */
    char fp8[MLOG_WORD];         /* fp8 (--fp8-format): "hybrid", "e4m3", or "" (None: no FP8 training) */
    char fp8_recipe[MLOG_WORD];  /* fp8_recipe: "delayed", "tensorwise", "blockwise", "mxfp8", "" absent */
    int fp8_param_gather;        /* fp8_param_gather: 1, 0, -1 absent */
    int grads_fp32;              /* accumulate_allreduce_grads_in_fp32 (the main gradients' precision after
                                  * Megatron-LM's own rule): 1, 0, -1 absent */
    int ce_fusion;               /* cross_entropy_loss_fusion: 1, 0, -1 absent */
    int grad_accum_fusion;       /* gradient_accumulation_fusion (as validate_args left it): 1, 0, -1 absent */
    int bias, qkv_bias;          /* add_bias_linear, add_qkv_bias: 1, 0, -1 absent */
    char transformer_impl[MLOG_WORD]; /* transformer_impl: "transformer_engine", "local", "" absent */
    char ce_impl[MLOG_WORD];     /* cross_entropy_fusion_impl: "native", "te", "" absent */
    /* an uneven pipeline: decoder_first/last_pipeline_num_layers (0 None),
     * account_for_embedding/loss_in_pipeline_split (1, 0, -1 absent),
     * pipeline_model_parallel_layout ("" None) */
    int64_t pp_first, pp_last;
    int pp_embed, pp_loss;
    char pp_layout[MLOG_TEXT];
    int gqa;                     /* group_query_attention: 1, 0, -1 absent */
    /* a mixture of experts (num_experts; 0: dense, the other MoE fields
     * then unused) and multi-head latent attention (docs/megatron-logs.md) */
    int64_t experts, topk, moe_ffn_hidden, shared_ffn_hidden; /* 0 where None */
    int64_t moe_dense_first, moe_every;  /* moe_layer_freq (moe_freq.h); 0, 0 absent */
    int64_t moe_freq_entries;            /* its list's length, checked against num_layers; 0 an integer */
    int64_t ep, etp;                     /* expert_model_parallel_size, expert_tensor_parallel_size */
    char moe_dispatcher[MLOG_WORD];      /* moe_token_dispatcher_type, "" absent */
    double moe_capacity;                 /* moe_expert_capacity_factor, 0: None (dropless) */
    int mla;                             /* multi_latent_attention: 1, 0, -1 absent */
    int64_t q_lora_rank, kv_lora_rank, qk_head_dim, qk_pos_dim, v_head_dim; /* 0 where None */
    int64_t padded_vocab_arg, vocab_arg; /* padded_vocab_size, vocab_size of the block; 0 absent */
    int64_t vocab;               /* the vocabulary: the padding line's, else padded_vocab_size, else vocab_size */
    int vocab_line;              /* the padding line (0: none, the vocabulary is the argument block's) */
    /* where each argument was read (megatron_log.c's table order; 0 absent)
     * and its value as read: a repeat must say the same (mlog_arg_line) */
    int key_line[MLOG_MAX_KEYS];
    char key_value[MLOG_MAX_KEYS][MLOG_VALUE];
    /* the start-up line "using world size: W, data-parallel size: D,
     * context-parallel size: C, tensor-model-parallel size: T,
     * pipeline-model-parallel size: P": what it says must agree with the
     * block (0: not printed) */
    int banner_line;
    int64_t banner_world, banner_cp, banner_tp, banner_pp;
    /* the iteration reports, in the log's order */
    int n_reports;
    mlog_report reports[MLOG_MAX_REPORTS];
    int64_t last_iteration;      /* of every report, kept or not: the next must be larger */
    int last_iteration_line;
    int64_t train_iters;         /* the N of "iteration I/ N", the same in every report */
    int train_iters_line;        /* the first report's line */
    /* the largest "max reserved" (else "max allocated") of the memory
     * reports over ranks and times, MB (2^20 bytes); 0 when none */
    double mem_peak_mb;
    int mem_line;
} mlog_run;

/* Reads the log text (len bytes, not necessarily NUL-terminated). Returns 0,
 * or 2 with a reason: no argument block, an argument block not closed (a
 * truncated log), an argument the run needs missing or not a number, an
 * argument given twice with different values (both lines named), a
 * start-up line or padding line that contradicts the block, an iteration
 * report without its time, with a number that is not whole (every number
 * read is its whole token: "4x" is refused, not read as 4), or with an
 * iteration that is not a positive integer above the previous report's and
 * at most the run's length, no iteration report at all, a NUL byte or an
 * overlong line. */
int mlog_parse(const char *text, size_t len, const char *shown, mlog_run *out, char *why, size_t why_len);

/* mlog_parse for a log that may lack its argument block (iteration lines
 * pasted into an issue, a log rotated past its start): without one,
 * args_line is 0 and the iteration reports are read from the first line;
 * the layout and model are then the caller's to fill in (the argument
 * fields stay 0 / -1). With a block, the same as mlog_parse. */
int mlog_parse_reports(const char *text, size_t len, const char *shown, mlog_run *out, char *why, size_t why_len);

/* The line of an argument in the block (its key, "seq_length"), 0 when the
 * block does not give it or the reader does not keep it. */
int mlog_arg_line(const mlog_run *r, const char *key);

/* 1 when report i counts after `warmup` iterations: its whole log interval
 * comes after them (Megatron-LM averages a report over the log_interval
 * iterations up to it). */
int mlog_report_counts(const mlog_run *r, int64_t warmup, int i);

/* The median of the reports' iter_ms (and tflops, NAN when any report lacks
 * it) over the reports that count after `warmup` (mlog_report_counts).
 * Returns the count used (0: none, medians NAN). */
int mlog_median(const mlog_run *r, int64_t warmup, double *iter_ms, double *tflops, int64_t *first, int64_t *last);

/* The model shape of the run (name empty), its experts and latent attention
 * included. Returns 0, or 2 with the missing argument named in why. */
int mlog_model(const mlog_run *r, const char *shown, uly_model *m, char *why, size_t why_len);

/* ulysim's strategy and degrees for the run's parallel settings: context
 * parallelism by cp_comm_type through the registry's megatron_cp_comm
 * (TP inside), else Megatron TP with sequence parallelism (megatron-sp) or
 * without (megatron-tp); a MoE model's expert parallel degrees (ep, etp).
 * Returns 0, or 2 when the settings name no strategy. */
int mlog_layout(const mlog_run *r, const char *shown, uly_layout *l, char *why, size_t why_len);

#endif
