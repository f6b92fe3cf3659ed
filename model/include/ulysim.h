/* ulysim.h: the public API of libulysim, the analytic model of sequence
 * parallelism (Ulysses all-to-all, ring attention, RSA, all-gather CP,
 * Megatron TP+SP, USP hybrids, plain Megatron TP) for one transformer layer
 * on one rank.
 *
 * The library is pure: const specs in, results through out-pointers, status
 * codes back. No I/O, no globals, no allocation on the evaluation path, so a
 * search can price millions of layouts a second.
 *
 * Conventions (docs/model.md has every formula and its source):
 *   b micro-batch, N sequence tokens, L layers, h hidden, a query heads,
 *   k KV heads, d head dim, f FFN hidden, V vocab, beta bytes per element.
 *   "Bytes sent per rank" counts only bytes that leave the rank.
 *   FLOPs: "model" FLOPs count fwd + 2x fwd for bwd, no recompute, causal
 *   attention halved; "hardware" FLOPs add recompute and the attention
 *   kernel's 2.5x backward. MFU uses model FLOPs, HFU hardware FLOPs.
 */
#ifndef ULYSIM_H
#define ULYSIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ULY_VERSION "0.1.0"

typedef enum uly_status {
    ULY_OK = 0,
    ULY_EINVAL = 1,     /* a spec or argument is out of range */
    ULY_EOVERFLOW = 2,  /* a size product does not fit in 63 bits */
    ULY_ENOSPACE = 3,   /* an output buffer is too small */
} uly_status;

const char *uly_status_str(uly_status s);

/* ------------------------------------------------------------------ specs */

/* The vocabularies of a request (dtypes, recompute modes, causal splits,
 * attention kernels, frameworks) are X-macro lists, each written once here:
 * X(ENUMERATOR, "name") in enum order. The enum, its count, uly_X_name,
 * uly_X_find and every list of names (the command lines' choices, the trace
 * header written and read) are expanded from them, so a new entry is one
 * line. (A count outside the enum keeps switches over it exhaustive.) */
#define ULY_X_ENUM(e, name) e,
#define ULY_X_NAME(e, name) name,
#define ULY_X_COUNT(e, name) +1

/* fp8: FP8 training as TransformerEngine runs it: the linear layers' GEMMs
 * in FP8 (uly_op_fp8), everything else (attention unless asked, norms,
 * softmax, loss, embedding, output layer), the activations, gradients and
 * their communication in bf16 (docs/model.md, "FP8 training"). */
#define ULY_DTYPES(X) X(ULY_BF16, "bf16") X(ULY_FP16, "fp16") X(ULY_FP32, "fp32") X(ULY_FP8, "fp8")
typedef enum uly_dtype { ULY_DTYPES(ULY_X_ENUM) ULY_DTYPE_COUNT } uly_dtype;

/* FP8 scaling recipes, TransformerEngine's (transformer_engine/common/
 * recipe/__init__.py) under Megatron-LM's --fp8-recipe names:
 *   delayed     DelayedScaling: one scale per tensor from an amax history
 *               of earlier steps (the cast knows its scale: fused into the
 *               norm or activation that produces the tensor);
 *   tensorwise  Float8CurrentScaling: one scale per tensor from its own
 *               amax, a pass over the tensor before the cast;
 *   blockwise   Float8BlockScaling: fp32 scales per 1x128 block
 *               (activations, gradients) and 128x128 block (weights);
 *   mxfp8       MXFP8BlockScaling: E8M0 scales per 32 elements, Blackwell's
 *               tensor cores apply them. */
#define ULY_FP8_RECIPES(X)                                                                                             \
    X(ULY_FP8_DELAYED, "delayed") X(ULY_FP8_TENSORWISE, "tensorwise") X(ULY_FP8_BLOCKWISE, "blockwise")                 \
    X(ULY_FP8_MXFP8, "mxfp8")
typedef enum uly_fp8_recipe { ULY_FP8_RECIPES(ULY_X_ENUM) ULY_FP8_RECIPE_COUNT } uly_fp8_recipe;
const char *uly_fp8_recipe_name(uly_fp8_recipe r);
uly_fp8_recipe uly_fp8_recipe_find(const char *name);

/* Activation recompute (docs/model.md, "Recompute modes"): none;
 * selective, Megatron-LM's modules (uly_workload.recompute_modules; by
 * default its core_attn: attention's scores and softmax, Korthikanti et
 * al.); full (each layer's input kept, the layer run again; Megatron-LM's
 * uniform and block methods: uly_workload.recompute_method); ops,
 * torchtitan's op-level selective checkpointing with every matmul's and
 * attention's output saved and the rest (norms, activation function) run
 * again; ops-half, torchtitan's default op policy, every other matmul's
 * output recomputed too; attn-skip, full recompute whose checkpoint is
 * attention's output (DistFlashAttn's rematerialisation-aware
 * checkpointing): the recompute skips attention's forward. */
#define ULY_RECOMPUTES(X)                                                                                              \
    X(ULY_RECOMPUTE_NONE, "none") X(ULY_RECOMPUTE_SELECTIVE, "selective") X(ULY_RECOMPUTE_FULL, "full")             \
    X(ULY_RECOMPUTE_OPS, "ops") X(ULY_RECOMPUTE_OPS_HALF, "ops-half") X(ULY_RECOMPUTE_ATTN_SKIP, "attn-skip")
typedef enum uly_recompute { ULY_RECOMPUTES(ULY_X_ENUM) } uly_recompute;
enum { ULY_RECOMPUTE_COUNT = 0 ULY_RECOMPUTES(ULY_X_COUNT) };

/* Megatron-LM's --recompute-modules, a bit each (1 << ULY_RMOD_*) in
 * uly_workload.recompute_modules; those of MoE and MLA models are named so
 * that a launch line's are refused by name: ulysim prices dense models. */
#define ULY_RECOMPUTE_MODULES(X)                                                                                       \
    X(ULY_RMOD_CORE_ATTN, "core_attn") X(ULY_RMOD_LAYERNORM, "layernorm") X(ULY_RMOD_MLP, "mlp")                     \
    X(ULY_RMOD_MOE_ACT, "moe_act") X(ULY_RMOD_MOE, "moe") X(ULY_RMOD_SHARED_EXPERTS, "shared_experts")             \
    X(ULY_RMOD_MLA_UP_PROJ, "mla_up_proj")
typedef enum uly_recompute_module { ULY_RECOMPUTE_MODULES(ULY_X_ENUM) ULY_RMOD_COUNT } uly_recompute_module;
/* the modules a dense model has */
#define ULY_RMOD_DENSE ((1u << ULY_RMOD_CORE_ATTN) | (1u << ULY_RMOD_LAYERNORM) | (1u << ULY_RMOD_MLP))
const char *uly_recompute_module_name(uly_recompute_module r);
uly_recompute_module uly_recompute_module_find(const char *name);

/* Megatron-LM's --recompute-method of full recompute: every layer
 * (ulysim's full; Megatron-LM's uniform with one layer a chunk); uniform,
 * chunks of recompute_layers layers checkpointed at their input and
 * recomputed whole; block, the first recompute_layers layers of each
 * (virtual) stage recomputed, the rest keeping everything. */
#define ULY_RECOMPUTE_METHODS(X) X(ULY_RMETHOD_EVERY, "every") X(ULY_RMETHOD_UNIFORM, "uniform") X(ULY_RMETHOD_BLOCK, "block")
typedef enum uly_recompute_method { ULY_RECOMPUTE_METHODS(ULY_X_ENUM) ULY_RMETHOD_COUNT } uly_recompute_method;
const char *uly_recompute_method_name(uly_recompute_method r);
uly_recompute_method uly_recompute_method_find(const char *name);

/* How ring-style strategies cut a causal sequence: zigzag (rank i holds
 * chunks i and 2r-1-i, balanced) or contiguous (rank i holds chunk i). */
#define ULY_SPLITS(X) X(ULY_SPLIT_ZIGZAG, "zigzag") X(ULY_SPLIT_CONTIGUOUS, "contiguous")
typedef enum uly_split { ULY_SPLITS(ULY_X_ENUM) } uly_split;
enum { ULY_SPLIT_COUNT = 0 ULY_SPLITS(ULY_X_COUNT) };

/* Bytes of an activation, gradient or communicated element under the
 * dtype: fp8 training keeps them in bf16 (2); uly_dtype_gemm_bytes: of a
 * GEMM operand (fp8: 1). */
int uly_dtype_bytes(uly_dtype t);
int uly_dtype_gemm_bytes(uly_dtype t);
/* Each vocabulary's name ("?" out of range), and the value of a name (the
 * vocabulary's COUNT when it has none). */
const char *uly_dtype_name(uly_dtype t);
uly_dtype uly_dtype_find(const char *name);
const char *uly_recompute_name(uly_recompute r);
uly_recompute uly_recompute_find(const char *name);
const char *uly_split_name(uly_split s);
uly_split uly_split_find(const char *name);
/* The names of a vocabulary for a message, "bf16, fp16 or fp32": joined by
 * sep, the last by last (", " and " or "); into buf (n bytes, cut to fit),
 * which it returns. */
const char *uly_names_join(const char *const *names, int count, const char *sep, const char *last, char *buf, size_t n);

#define ULY_NAME_LEN 48

typedef struct uly_model {
    char name[ULY_NAME_LEN];
    int64_t layers;      /* L */
    int64_t hidden;      /* h = heads * head_dim */
    int64_t heads;       /* a */
    int64_t kv_heads;    /* k: a for MHA, < a for GQA, 1 for MQA */
    int64_t head_dim;    /* d */
    int64_t ffn_hidden;  /* f */
    int64_t vocab;       /* V */
    int swiglu;          /* 1: three h x f matrices; 0: two (GELU) */
    int tied_embeddings; /* 1: output projection shares the embedding */
    int dropout;         /* 1: dropout masks are stored (BERT/GPT-2 era) */
    int embed_norm;      /* 1: a LayerNorm after the embedding sum keeps its input (BERT) */
    /* 1: every linear layer of a transformer layer has a bias (Megatron-LM's
     * add_bias_linear, GPT-2 and GPT-3, BERT); qkv_bias: the QKV projection
     * alone (--add-qkv-bias, Qwen2). Priced only where the implementation
     * runs them as kernels of their own (uly_workload.transformer_impl);
     * not counted as parameters. */
    int bias, qkv_bias;
    /* Mixture of experts (docs/model.md, "Mixture of experts"); experts 0:
     * a dense model. A MoE layer's FFN is experts routed experts of
     * moe_ffn_hidden each, topk of them per token, beside the shared experts
     * (shared_ffn_hidden wide together, every token through them; 0: none)
     * and a router (hidden x experts, no bias). The first moe_dense_first
     * layers keep a dense FFN of ffn_hidden (DeepSeek's
     * first_k_dense_replace); of the rest, every moe_every-th is MoE, the
     * others dense (Megatron-LM's --moe-layer-freq k: layer i is MoE when
     * i % k == 0, counted from the first after the dense ones; 0 or 1: all). */
    int64_t experts, topk, moe_ffn_hidden, shared_ffn_hidden, moe_dense_first, moe_every;
    /* Multi-head latent attention (DeepSeek-V2/V3; kv_lora_rank > 0): queries
     * through a q_lora_rank-wide down-projection (0: none, Wq direct), keys
     * and values through a kv_lora_rank-wide latent; a query or key head is
     * qk_nope_dim + qk_rope_dim wide (the rope part of the key shared by all
     * heads), a value head head_dim wide. kv_heads is then heads. */
    int64_t q_lora_rank, kv_lora_rank, qk_nope_dim, qk_rope_dim;
    /* Sliding-window attention (Mistral 7B v0.1, Gemma 2 and 3, gpt-oss;
     * docs/model.md, "Sliding-window attention"): with attn_window W > 0,
     * window_layers of the L layers (0: all of them) attend each query only
     * to the W keys nearest it (causal: itself and the W - 1 before it), the
     * others to every key. 0: no window. */
    int64_t attn_window, window_layers;
} uly_model;


/* MoE layers of the model, of its L layers (0: dense). */
int64_t uly_moe_layers(const uly_model *m);
/* A query / key head's width: head_dim, or nope + rope under MLA. */
int64_t uly_qk_head_dim(const uly_model *m);
/* Parameters of one MoE layer's routed experts (all of them), its shared
 * experts and router; of attention (MLA's projections and latent norms, or
 * Wq, Wk, Wv, Wo). */
double uly_expert_params(const uly_model *m);
double uly_moe_other_params(const uly_model *m);
double uly_attention_params(const uly_model *m);
/* Parameters a token meets: the model's with topk of the experts in each
 * MoE layer (the "active" count model cards give). */
double uly_model_active_params(const uly_model *m);

#include "ulysim_kernels.h"

/* Whose conventions the model states follow: what a parameter costs in
 * bytes and what the data-parallel sharding (--zero) shards.
 *   deepspeed  ZeRO (Rajbhandari et al. 2020): half-precision weights and
 *              gradients, fp32 master weights and Adam moments, 2 + 2 + 12
 *              bytes; ZeRO 1/2/3 shard optimizer, gradients, weights.
 *   megatron   Megatron-LM's mixed precision: half-precision weights, fp32
 *              main gradients (accumulated and all-reduced in fp32), fp32
 *              main weights and moments: 2 + 4 + 12 bytes; the distributed
 *              optimizer (--zero 1) shards the 12 over data x context
 *              parallel; ZeRO 2/3 are not Megatron-LM's.
 *   fsdp       PyTorch FSDP with mixed precision (Zhao et al. 2023): fp32
 *              flat parameters and gradients and Adam moments, 4 + 4 + 8,
 *              sharded by FULL_SHARD (--zero 3), SHARD_GRAD_OP (--zero 2,
 *              which keeps the half-precision parameters gathered from
 *              forward to backward) or not (NO_SHARD, --zero 0); --zero 1
 *              is not an FSDP mode.
 * In fp32 training every convention keeps 4 + 4 + 8. */
#define ULY_FRAMEWORKS(X) X(ULY_FW_DEEPSPEED, "deepspeed") X(ULY_FW_MEGATRON, "megatron") X(ULY_FW_FSDP, "fsdp")
typedef enum uly_framework { ULY_FRAMEWORKS(ULY_X_ENUM) ULY_FW_COUNT } uly_framework;

/* How MoE tokens reach their experts (Megatron-Core's
 * --moe-token-dispatcher-type): alltoall, each (token, expert) pair sent
 * to the expert's rank over the expert-parallel group and back (combine);
 * allgather, every token all-gathered over the expert-parallel (and expert
 * tensor-parallel) group, each rank running its experts on the tokens
 * routed to them, the outputs reduce-scattered back. */
#define ULY_MOE_DISPATCHERS(X) X(ULY_MOE_ALLTOALL, "alltoall") X(ULY_MOE_ALLGATHER, "allgather")
typedef enum uly_moe_dispatcher { ULY_MOE_DISPATCHERS(ULY_X_ENUM) ULY_MOE_DISPATCHER_COUNT } uly_moe_dispatcher;
const char *uly_moe_dispatcher_name(uly_moe_dispatcher d);
uly_moe_dispatcher uly_moe_dispatcher_find(const char *name);
const char *uly_framework_name(uly_framework f);
uly_framework uly_framework_find(const char *name);

/* The longest sequence uly_workload_check accepts (1T tokens): the
 * command line checks its --seq values, a sweep's every one, against it. */
#define ULY_SEQ_MAX ((int64_t)1 << 40)

typedef struct uly_workload {
    int64_t seq;          /* N, tokens per sequence; 1..ULY_SEQ_MAX */
    int64_t micro_batch;  /* b, sequences per model replica per micro-step */
    int64_t global_batch; /* sequences per optimizer step; 0 = micro_batch * dp */
    uly_dtype dtype;
    int causal;
    int flash;            /* 1: blockwise attention; 0: materialised scores */
    uly_recompute recompute;
    int zero_stage;       /* 0..3, over the data x sequence group */
    uly_split split;      /* causal split of ring-style strategies */
    uly_framework framework; /* model-state conventions (ULY_FW_DEEPSPEED: 0) */
    /* Block-sparse attention (DeepSpeed's sparse attention): the fraction of
     * the score blocks a dense kernel would compute that are computed; 0 or
     * 1: dense. Scales attention FLOPs and materialised score memory, not
     * the sequence-parallel communication (K, V and Q move whole). */
    double attn_density;
    /* Chunked FFN (the blockwise feedforward of Liu et al. 2023): the MLP
     * runs over ffn_chunks blocks of the rank's tokens and its f-wide
     * intermediates are not kept for backward but rebuilt a block at a time
     * (one more up-projection and activation in backward); 0 or 1: whole. */
    int64_t ffn_chunks;
    /* Chunked (fused) loss: the output layer and cross-entropy run over
     * loss_chunks blocks of tokens, so the logits are never held whole;
     * 0 or 1: whole. Same FLOPs. */
    int64_t loss_chunks;
    uly_ce_impl ce_impl; /* the cross-entropy's kernels (ULY_CE_UNFUSED: 0) */
    /* 1: tensor-parallel all-gathers and reduce-scatters run under the GEMM
     * they feed or that feeds them (TransformerEngine's userbuffers,
     * Megatron-LM --tp-comm-overlap); 0: on the critical path. */
    int tp_comm_overlap;
    /* ZeRO-3 / FSDP parameter prefetch: layers whose gathered weights are
     * fetched ahead of their compute (DeepSpeed's stage3_prefetch_bucket_size,
     * FSDP's forward_prefetch / BACKWARD_PRE): 0 the default, one layer; -1
     * none (every gather waits on the critical path); D > 0 D layers. Each
     * prefetched layer is live memory; a step's first gather has nothing to
     * hide under. */
    int zero_prefetch;
    uly_attn_kernel attn_kernel; /* flash attention's kernel (ULY_AK_FLASH2: 0, the presets' curves) */
    /* Data-parallel gradient reduction on its own stream under backward
     * (Megatron-LM --overlap-grad-reduce, DeepSpeed overlap_comm, FSDP's
     * post-backward reduce-scatter) or after it on the critical path:
     * 1 on, -1 off, 0 the framework's default (uly_grad_reduce_overlaps). */
    int overlap_grad_reduce;
    /* Megatron-LM's main gradients (the framework megatron only): 1 kept,
     * accumulated and reduced in fp32 (--accumulate-allreduce-grads-in-fp32),
     * -1 in the parameters' precision (--grad-reduce-in-bf16), 0 Megatron-
     * LM's default, fp32 under bf16 (and FP8, whose parameters are bf16)
     * and the parameters' fp16 under fp16 (uly_state_bytes_get). */
    int grad_reduce_fp32;
    /* Megatron-LM's gradient accumulation fusion (the framework megatron
     * only): 1 the weight-gradient GEMMs accumulate into the main gradients
     * (--gradient-accumulation-fusion, its default), -1 a kernel per
     * parameter adds each micro-batch's gradient into them
     * (--no-gradient-accumulation-fusion), 0 the default */
    int grad_accum_fusion;
    /* Megatron-LM's scatter-gather of pipeline transfers under plain TP
     * (the framework megatron only; its --scatter-gather-tensors-in-pipeline,
     * on by default from 2021-02 until Megatron-Core's pipeline of 2023-03,
     * which sends whole tensors): 1 each TP rank sends 1/t of the stage
     * output it holds whole and the next stage all-gathers it over the TP
     * group; 0 every TP rank sends it whole (today's Megatron-LM). */
    int pp_scatter_gather;
    uly_transformer_impl transformer_impl; /* the layers' implementation (ULY_TI_TE: 0) */
    /* 1: the step's kernels are replayed from CUDA graphs (no host issue
     * cost per kernel, the graph's launch floor); 0: eager launches. */
    int cuda_graphs;
    /* 1: the per-step weight all-gather of a sharded optimizer (ZeRO 1-2,
     * Megatron-LM's distributed optimizer) runs bucket by bucket under the
     * next step's forward (Megatron-LM --overlap-param-gather); 0: after
     * the optimizer step, on the critical path. */
    int overlap_param_gather;
    /* Host work per step outside the kernels (data loading, logging, host
     * synchronisations), as the user measured it for their framework; no
     * published figure stands for all (docs/model.md, "Fixed costs"). */
    double step_overhead_s;
    /* Recompute's details (docs/model.md, "Recompute modes"): selective's
     * modules (bits 1 << ULY_RMOD_*; 0: core_attn, Megatron-LM's default);
     * full's method and its layers (uniform: a chunk's; block: how many of
     * a stage's are recomputed). */
    uint32_t recompute_modules;
    uly_recompute_method recompute_method;
    int64_t recompute_layers;
    /* Activation offload to host memory (Megatron-LM --cpu-offloading
     * --cpu-offloading-num-layers, TransformerEngine's CPU offload): the
     * saved activations of this many layers of a stage go to host memory
     * in forward and come back in backward over the GPU's host link
     * (uly_gpu.host_link_bw_Bps), under the next layer's compute where it
     * hides them; 0: none. */
    int64_t offload_layers;
    /* FP8 training (dtype ULY_FP8; ignored otherwise): the scaling recipe;
     * 1: the sharded optimizer's and ZeRO-3's weight gathers move the FP8
     * weights (Megatron-LM --fp8-param-gather: the linear layers' weights
     * kept in FP8, no bf16 copy); 1: attention in FP8 too (TransformerEngine
     * fp8_dpa, FlashAttention-3 FP8); the transformer layers at the start and
     * at the end of the model kept in bf16 (Megatron-LM
     * --first-last-layers-bf16, off by default); the delayed recipe's amax
     * history length (Megatron-LM --fp8-amax-history-len, default 1; 0: 1). */
    uly_fp8_recipe fp8_recipe;
    int fp8_param_gather;
    int fp8_attention;
    int32_t fp8_bf16_start, fp8_bf16_end;
    int32_t fp8_amax_history;
    /* MoE (ignored for dense models): the dispatcher; the capacity factor
     * (Megatron-LM --moe-expert-capacity-factor: an expert takes at most
     * capacity x its even share of the (token, expert) pairs, the rest
     * dropped; 0: dropless); the load imbalance, the busiest expert rank's
     * pairs over the even share (>= 1; 0: 1, even routing), which the
     * capacity caps. */
    uly_moe_dispatcher moe_dispatcher;
    double moe_capacity;
    double moe_imbalance;
} uly_workload;



/* Layers the workload prefetches under ZeRO-3 (0: none). */
int64_t uly_zero_prefetch_layers(const uly_workload *w);

/* 1 when the data-parallel gradient reduction overlaps backward: as asked,
 * else the framework's default (Megatron-LM and DeepSpeed ZeRO 0-2: off;
 * DeepSpeed ZeRO-3 and FSDP: on). */
int uly_grad_reduce_overlaps(const uly_workload *w);

/* The workload's attention density: attn_density, or 1 when unset. */
double uly_attn_density(const uly_workload *w);

/* Layers with a sliding window (0: none). */
int64_t uly_window_layers(const uly_model *m);
/* The score entries sliding windows leave to compute, averaged over the
 * layers: sum over layers of each layer's visible entries at the workload's
 * sequence, over L times a full layer's (1 without a window; causal: query i
 * sees min(i + 1, W) keys against i + 1; bidirectional: the keys within
 * W - 1 of it). *share: the windowed layers' part of what remains (0..1),
 * what their kernels run at the window's efficiency. */
double uly_attn_window_density(const uly_model *m, const uly_workload *w, double *share);

/* Bytes per parameter of one rank's model states under the workload's
 * framework and ZeRO stage: weights (what forward reads, plus any fp32 copy
 * the framework calls its parameters), gradients, optimizer states. The
 * *_whole part a rank holds for each of its P parameters; the *_shard part,
 * which the stage shards over the ZeRO group of g ranks, only for each of
 * its shard's uly_shard_params(P, g). Unsharded, a term is whole + shard
 * bytes per parameter. grad_wire: bytes per gradient element on the wire. */
typedef struct uly_state_bytes {
    double weights_whole, grads_whole, optim_whole;
    double weights_shard, grads_shard, optim_shard;
    int64_t grad_wire;
} uly_state_bytes;
void uly_state_bytes_get(const uly_workload *w, uly_state_bytes *out);
/* 1 when Megatron-LM keeps, accumulates and reduces its main gradients in
 * fp32 under the workload (uly_workload.grad_reduce_fp32, else its default:
 * fp32 but under fp16); 0 in the parameters' precision. */
int uly_megatron_grads_fp32(const uly_workload *w);
/* The parameters of one rank's shard of `params` over g ranks: padded to
 * whole parameters, ceil(ceil(params) / g), as ZeRO, Megatron's distributed
 * optimizer and FSDP pad their flat buffers to divide by g (and as the ZeRO
 * traffic counts them); params itself when g <= 1. */
double uly_shard_params(double params, double g);

/* The machine: GPUs, their links and how the model prices them (efficiency
 * curves, memory-bound kernel classes, GEMMs by shape, collectives). */
#include "ulysim_machine.h"

/* --------------------------------------------------------------- layouts */

typedef enum uly_strategy_id {
    ULY_STRAT_ULYSSES = 0,
    ULY_STRAT_RING,
    ULY_STRAT_RSA,
    ULY_STRAT_ALLGATHER_CP,
    ULY_STRAT_MEGATRON_SP,
    ULY_STRAT_USP,
    ULY_STRAT_MEGATRON_TP, /* plain Megatron TP, no SP */
    ULY_STRAT_COUNT
} uly_strategy_id;

/* Parallel groups, in the order they can appear in the rank order. */
typedef enum uly_group {
    ULY_GROUP_NONE = 0,
    ULY_GROUP_TP,
    ULY_GROUP_ULYSSES,
    ULY_GROUP_RING,
    ULY_GROUP_DP,
    ULY_GROUP_ZERO, /* data x sequence (x ring x ulysses): where ZeRO shards */
    ULY_GROUP_PP,   /* pipeline stages: always the outermost group */
    /* the expert layers' own groups over a stage's ranks (Megatron-Core's
     * parallel folding): expert tensor parallel innermost, then expert
     * parallel, then expert data parallel */
    ULY_GROUP_ETP,
    ULY_GROUP_EP,
    ULY_GROUP_EDP,
    ULY_GROUP_COUNT
} uly_group;
const char *uly_group_name(uly_group g);

typedef struct uly_layout {
    uly_strategy_id strategy;
    int64_t ulysses; /* u */
    int64_t ring;    /* r: context-parallel degree of ring, rsa, allgather-cp, usp */
    int64_t tp;      /* t */
    int64_t dp;      /* D */
    int64_t pp;      /* pipeline stages (1F1B), outside every other group */
    int64_t vpp;     /* virtual stages per pipeline rank (interleaved 1F1B); 1 (or 0): plain 1F1B */
    uly_group order[4]; /* innermost first: a permutation of TP, ULYSSES, RING, DP */
    /* An uneven pipeline, as Megatron-Core splits one (docs/model.md,
     * "Uneven pipelines"): pp_first / pp_last layers on the first / last
     * stage (--decoder-first/last-pipeline-num-layers; 0: as a middle stage)
     * and the rest evenly over the others; or the embedding (pp_embed) and
     * the loss (pp_loss) each counted as one layer of an even split
     * (--account-for-embedding/loss-in-pipeline-split), the first / last
     * stage then one layer short. All 0: the even split. A pipeline layout
     * (Megatron-Core's --pipeline-model-parallel-layout, whose chunks may
     * differ) reduced to what prices it: pp_mid_most > 0 the most layers
     * any middle stage holds, the middle stages holding the rest (L -
     * pp_first - pp_last) between them, and pp_first, pp_last exact (each
     * at least 1); interleaving then asks no divisibility. */
    int32_t pp_first, pp_last;
    int32_t pp_mid_most;
    uint8_t pp_embed, pp_loss;
    /* MoE layers' expert parallelism and expert tensor parallelism
     * (Megatron-Core --expert-model-parallel-size,
     * --expert-tensor-parallel-size), folded over the stage's
     * tp x ulysses x ring x dp ranks: ep x etp divides them, the rest is
     * expert data parallelism; 0 or 1: none. Dense models: 1. */
    int32_t ep, etp;
} uly_layout;

/* Default rank order, lowest (innermost) to highest: TP, Ulysses, ring, DP;
 * the even pipeline split. */
void uly_layout_init(uly_layout *l, uly_strategy_id s, int64_t u, int64_t r, int64_t t, int64_t dp);
int64_t uly_layout_gpus(const uly_layout *l);

/* The layers of a pipeline's stages as Megatron-Core builds them for
 * layout l (get_num_layers_to_build): layers[0] on the first stage, [1] on
 * each middle one, [2] on the last (all three L without a pipeline).
 * ULY_OK when Megatron-Core accepts the split, interleaving included (each
 * stage's layers, less the embedding or loss it counts, divide into l->vpp
 * virtual stages); ULY_EINVAL with the reason in why when it refuses it,
 * layers[] then the split ulysim prices anyway (ceil(L / pp) for an even
 * split that does not divide; 0 where none exists). */
uly_status uly_pp_stage_layers(const uly_model *m, const uly_layout *l, int64_t layers[3], char *why, size_t why_len);

/* The plan of one layer on one rank: its phases, the op vocabulary and
 * each op's fields, the shapes and placements every strategy shares. */
#include "ulysim_plan.h"

/* ------------------------------------------------------------ feasibility */

/* The reasons a plan cannot run, or what it assumed: ulysim_reason.h, part
 * of this API. */
#include "ulysim_reason.h"

/* --------------------------------------------------------------- results */

typedef enum uly_mem_term {
    ULY_MEM_WEIGHTS = 0,
    ULY_MEM_GRADS,
    ULY_MEM_OPTIM,
    ULY_MEM_ACTIV,       /* saved activations over all layers */
    ULY_MEM_WORKING,     /* one layer's live tensors during its backward */
    ULY_MEM_SCORES,      /* materialised attention scores (non-flash, RSA) */
    ULY_MEM_COMM,        /* ring double buffers, all-to-all staging, gathered K,V */
    ULY_MEM_ZERO_GATHER, /* ZeRO-3 gathered layer weights (current + prefetch) */
    ULY_MEM_LOGITS,      /* logits and loss of this rank's tokens */
    ULY_MEM_RESERVED,    /* runtime and allocator */
    ULY_MEM_TERM_COUNT
} uly_mem_term;
const char *uly_mem_term_name(uly_mem_term t);

typedef struct uly_memory {
    double term_bytes[ULY_MEM_TERM_COUNT];
    double total_bytes;
    double capacity_bytes;
    int largest;         /* uly_mem_term with the most bytes */
    int fits;
} uly_memory;

typedef struct uly_timing {
    double layer_fwd_s;        /* one layer, one micro-batch, critical path (the stage's average layer: with
                                * activation offload's exposed transfers) */
    double layer_bwd_s;        /* includes recompute (the average layer's, under the block method) */
    double compute_s;          /* per layer fwd+bwd compute on the critical path (slowed beside background
                                * transfers, and waiting on an eager host's kernel issue, included) */
    double comm_exposed_s;     /* per layer fwd+bwd communication not hidden */
    double comm_overlapped_s;  /* per layer fwd+bwd communication hidden under compute */
    double model_s;            /* per micro-batch, outside the layers (embedding, logits, loss, stage transfers) */
    double step_fixed_s;       /* per step: optimizer, DP gradient reduction exposed */
    double step_s;             /* one optimizer step */
    int64_t micro_steps;       /* micro-batches per step per replica */
    double pp_bubble;          /* fraction of the step a pipeline stage idles (0 without a pipeline) */
    double slots;              /* micro-batch slots of the slowest stage per step: micro_steps + (pp - 1) / vpp */
    int64_t stage_layers;      /* layers of that stage: step_s = slots (stage_layers (fwd + bwd) + model_s)
                                * + step_fixed_s; an uneven split (uly_plan.pp_staged) paces the step by its
                                * heaviest stage's own layers and end ops instead (uly_pp_staged_s) */
    double tokens_per_s;       /* global tokens per second */
    double model_flops;        /* per step, all GPUs */
    double hw_flops;           /* per step, all GPUs */
    double tflops_per_gpu;     /* model FLOPs / step_s / gpus / 1e12 */
    double mfu;
    double hfu;
    double zero_gather_s;         /* ZeRO-3 weight gathers per step, per rank (0 below ZeRO-3) */
    double zero_gather_exposed_s; /* the part not hidden under compute, the step's first gather included */
    /* A layer phase's time [fwd, bwd] that no op carries: its compute slowed
     * beside the phase's background transfers (ZeRO), and its wait on an
     * eager host issuing its kernels; layer_*_s includes both. */
    double layer_slowdown_s[2];
    double layer_host_wait_s[2];
} uly_timing;

typedef struct uly_result {
    uly_layout layout;
    int64_t micro_batch;
    int feasible;
    int n_reasons;
    uly_reason reasons[ULY_MAX_REASONS];
    int64_t comm_fwd_bytes;    /* per rank, one layer, one micro-batch: strategy ops of phase fwd */
    int64_t comm_bwd_bytes;    /* the same for bwd, recompute included */
    int64_t comm_recompute_bytes; /* the part of comm_bwd_bytes that re-runs forward ops */
    int64_t zero_bytes;        /* per rank, one layer: ZeRO/DP traffic per micro-batch */
    int64_t moe_bytes;         /* per rank, one MoE layer, one micro-batch: its tokens' dispatch and combine over
                                * EP and ETP, forward and backward, recompute included (part of comm_*_bytes) */
    uint8_t comm_tiers;        /* ULY_TIER_* mask of the strategy's traffic */
    uly_memory mem;
    uly_timing time;
    double op_time_s[ULY_PLAN_MAX_OPS];    /* priced time of each op (all steps) */
    double op_exposed_s[ULY_PLAN_MAX_OPS]; /* part of it on the critical path */
} uly_result;

/* The step's model FLOPs per GPU over peak_flops (FLOP/s): MFU against a
 * peak other than the one uly_timing.mfu uses (the dtype's; bf16 for fp8
 * training): FP8 training's against the FP8 peak. 0 when peak <= 0. */
double uly_mfu_at(const uly_timing *t, double peak_flops);

/* ------------------------------------------------------------- functions */

/* Validation: ULY_OK, or ULY_EINVAL with a one-line reason naming the field
 * and value written to why (may be NULL). */
uly_status uly_model_check(const uly_model *m, char *why, size_t why_len);
uly_status uly_workload_check(const uly_workload *w, char *why, size_t why_len);
uly_status uly_cluster_check(const uly_cluster *c, char *why, size_t why_len);
uly_status uly_layout_check(const uly_layout *l, char *why, size_t why_len);

/* What stays exposed of a transfer of transfer_s that runs alongside
 * compute_s of compute on this cluster's executor:
 * transfer_s - overlap x min(transfer_s, compute_s), overlap = 1 - c->overlap_miss. */
double uly_overlap_exposed(const uly_cluster *c, double transfer_s, double compute_s);

/* Parses a size: 131072, 128K, 1M, 1G (powers of 1024), 1e6 (must be an
 * integer), 2^40. Rejects 0, negatives, fractions, overflow and garbage. */
uly_status uly_size_parse(const char *s, int64_t *out, char *why, size_t why_len);

/* How an executor runs a strategy's layer: what moves its tensors between
 * the token side (the rank's own tokens, where the norms and GEMMs run) and
 * the attention side. */
typedef enum uly_exec_mode {
    ULY_EXEC_TOKENS = 0,   /* attention on the rank's own tokens; ring hops fused into it */
    ULY_EXEC_A2A,          /* Ulysses all-to-alls around attention (tokens when u = 1) */
    ULY_EXEC_ALLGATHER,    /* K, V all-gathered over the ring group (tokens when r = 1) */
    ULY_EXEC_RSA,          /* materialised ring self-attention */
    ULY_EXEC_TP_SP,        /* Megatron TP+SP: heads split, gathers around the GEMM regions */
    ULY_EXEC_TP_ALLREDUCE, /* plain Megatron TP: heads split, every token everywhere, all-reduces */
    ULY_EXEC_COUNT
} uly_exec_mode;
const char *uly_exec_mode_name(uly_exec_mode m);

/* The strategy registry: one entry per file in model/strategy/, the single
 * source of what the CLI, the plots, validate and the harness know of a
 * strategy. Registry order (uly_strategy_id) is the order of tables, plots
 * and legends. */
typedef struct uly_strategy {
    uly_strategy_id id;
    const char *name;          /* contract name: "ulysses", "ring", ... */
    const char *summary;       /* one line for --help and presets */
    const char *label;         /* for figures and legends: "Ulysses", "All-gather CP" */
    const char *label_short;   /* where space is short (bar charts): "AG-CP" */
    /* Which degrees the strategy uses (the rest must be 1, except dp). */
    int uses_ulysses, uses_ring, uses_tp;
    /* 1: the ring degree's tokens follow the causal split (zigzag or
     * contiguous); 0: contiguous blocks whatever the split */
    int causal_split;
    uly_exec_mode exec;        /* how the harness runs it */
    /* Megatron-Core's --cp-comm-type for this scheme ("p2p", "all_gather",
     * "a2a", "a2a+p2p"), or NULL when Megatron-Core has none */
    const char *megatron_cp_comm;
    /* Appends this strategy's per-layer ops (fwd, then bwd with recompute). */
    uly_status (*build)(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                        const uly_layout *l, uly_plan *p,
                        uly_reason *reasons, int *n_reasons);
} uly_strategy;

const uly_strategy *uly_strategy_get(uly_strategy_id id);
const uly_strategy *uly_strategy_find(const char *name);

/* Builds the plan of one layer (fwd and bwd) plus the per-step DP/ZeRO ops.
 * Shape problems that make the layout impossible are reported as fatal
 * reasons, not errors: the status is ULY_OK and the plan is partial. */
uly_status uly_plan_build(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                          const uly_layout *l, uly_plan *plan,
                          uly_reason *reasons, int *n_reasons);

/* Placement of group g of a layout on a cluster. */
uly_status uly_group_place_get(const uly_layout *l, const uly_cluster *c, uly_group g,
                               uly_group_place *out);

/* Collective time on the cluster for n bytes sent per rank (all steps of a
 * ring together when steps > 1) over a placed group, while
 * concurrent_groups_per_node groups of its kind (gp->node_groups in a plan)
 * share each node's NICs; below 1 counts 1. */
double uly_cost_collective(const uly_cluster *c, uly_coll coll, const uly_group_place *gp,
                           double bytes_sent, int steps, int64_t concurrent_groups_per_node);

/* Minimum ring block (tokens) whose compute hides its transfer: c >= F/B, the
 * Ring Attention rule, with F in FLOP/s and B in bytes/s per direction. */
double uly_ring_min_block_tokens(double flops_per_s, double bw_Bps);

/* Prices one plan: schedule, per-layer and per-step time. */
uly_status uly_plan_price(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                          const uly_plan *plan, uly_result *res);

/* Memory per GPU of a plan. */
uly_status uly_memory_eval(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                           const uly_plan *plan, uly_memory *out);

/* 1 when op type t runs its GEMMs in FP8 under w: the transformer layers'
 * linear layers (QKV, output projection, the MLP's) in fp8 training, and
 * attention's forward with fp8_attention; never the output layer (logits), the
 * embedding, norms, activations, softmax or the loss. */
int uly_op_fp8(const uly_workload *w, uly_op_type t);

/* FP8 training's extra memory per rank (docs/model.md, "FP8 training"):
 * the linear weights' FP8 copies and transposes (or, under
 * fp8_param_gather, the transposes beside FP8 weights that replace the
 * bf16 ones), the per-block scales, the delayed recipe's amax histories and
 * scales. */
typedef struct uly_fp8_mem {
    double copies_bytes, scales_bytes, amax_bytes, total_bytes;
} uly_fp8_mem;
uly_status uly_fp8_mem_eval(const uly_model *m, const uly_workload *w, const uly_plan *plan, uly_fp8_mem *out);
/* The rank's linear-layer weights (QKV, output projection, MLP) of the plan's stage. */
double uly_plan_linear_params(const uly_model *m, const uly_plan *plan);

/* Activation terms of one layer, in bytes per rank, split by what they are.
 * tokens: the rank's sequence share for token-local tensors; seq_full: the
 * length attention sees; t: tensor-parallel ways; sp: 1 if Megatron sequence
 * parallelism splits the non-TP regions; cp: context-parallel ways. */
typedef struct uly_act_terms {
    double ln;          /* layer-norm inputs */
    double attn_in;     /* input of the QKV projection */
    double qkv;         /* Q, K, V */
    double scores;      /* softmax output (materialised only) */
    double score_masks; /* dropout mask and output of the scores */
    double lse;         /* flash: log-sum-exp per query row */
    double attn_out;    /* input of the output projection */
    double attn_drop;   /* dropout mask after attention */
    double mlp_in;      /* input of the first MLP GEMM(s) */
    double act_in;      /* activation function input(s) */
    double act_out;     /* activation output (second GEMM input) */
    double mlp_drop;    /* dropout mask after the MLP */
    double experts;     /* a MoE layer's routed experts: their gathered inputs, activation input and output, outputs
                         * before the combine, of the busiest rank (docs/model.md, "Mixture of experts") */
    double total;
} uly_act_terms;
void uly_act_layer_terms(const uly_model *m, const uly_workload *w, int64_t seq_full,
                         int64_t t, int sp, int64_t cp, int selective, uly_act_terms *out);

/* KV heads a head-splitting group of u ranks (Ulysses u, TP t) holds, of
 * k KV heads for a query heads: k when u | k, u when k | u (each KV head
 * replicated), else a (KV expanded to MHA). Plans record the assumption as
 * a reason; executors use this to lay out the same heads. */
int64_t uly_kv_heads_spread(int64_t k, int64_t a, int64_t u);

/* Total parameters of the model and of one layer. */
double uly_model_params(const uly_model *m);
double uly_layer_params(const uly_model *m);

/* FLOPs per iteration in the Megatron accounting (Narayanan et al. 2021) that
 * the Ulysses paper's tables use (docs/model.md, "FLOPs, MFU and HFU"):
 * 96 B N L h^2 (1 + N/(6h) + V/(16 L h)) with full recompute, 72 and
 * V/(12 L h) without; attention counted non-causal, MHA, f = 4h. */
double uly_flops_megatron(const uly_model *m, int64_t global_batch, int64_t seq, int recompute_full);

/* FLOP conventions a measured TFLOP/s per GPU is reported in (docs/runs.md,
 * "FLOP conventions"):
 *   ulysim       this model's model FLOPs (uly_timing.model_flops): fwd + 2x
 *                fwd, causal attention halved, no recompute;
 *   megatron-lm  Megatron-LM's num_floating_point_operations: full s^2
 *                attention, GQA, SwiGLU, 3x forward;
 *   narayanan    Narayanan et al. 2021 (arXiv 2104.04473):
 *                96 B s L h^2 (1 + s/(6h) + V/(16 L h)), which counts the
 *                full recompute (uly_flops_megatron);
 *   palm         Chowdhery et al. 2022 (arXiv 2204.02311): 6 P + 12 L h s
 *                per token. */
typedef enum uly_flop_conv {
    ULY_FLOPS_ULYSIM = 0,
    ULY_FLOPS_MEGATRON_LM,
    ULY_FLOPS_NARAYANAN,
    ULY_FLOPS_PALM,
    ULY_FLOP_CONV_COUNT
} uly_flop_conv;
/* The convention's name; NULL out of range. */
const char *uly_flop_conv_name(uly_flop_conv c);
/* The convention of a name, or -1. */
int uly_flop_conv_find(const char *name);
/* FLOPs of one optimizer step of `seqs` sequences of w->seq tokens under
 * convention c (w's causal, attention density and recompute where the
 * convention counts them). */
double uly_flops_step(uly_flop_conv c, const uly_model *m, const uly_workload *w, double seqs);
/* This model's model FLOPs of a step of seqs sequences (the ulysim
 * convention, uly_timing.model_flops). */
double uly_flops_model_step(const uly_model *m, const uly_workload *w, double seqs);

/* Full evaluation: build, memory, price. */
uly_status uly_evaluate(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                        const uly_layout *l, uly_plan *scratch, uly_result *res);

/* Writes a one-line human description of a reason. */
size_t uly_reason_format(const uly_reason *r, const uly_model *m, char *buf, size_t n);

/* The search over layouts: ulysim_search.h, part of this API. */
#include "ulysim_search.h"

#ifdef __cplusplus
}
#endif
#endif /* ULYSIM_H */
