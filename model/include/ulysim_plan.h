/* ulysim_plan.h: what a plan is: one transformer layer's operations on one
 * rank (fwd, bwd with recompute, the per-step ops), in the op vocabulary
 * every executor dispatches on, with the shapes and group placements the
 * strategies share. Included by ulysim.h after the layouts; include that,
 * not this. */
#ifndef ULYSIM_PLAN_H
#define ULYSIM_PLAN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif


#define ULY_PHASES(X) X(ULY_PHASE_FWD, "fwd") X(ULY_PHASE_BWD, "bwd") X(ULY_PHASE_STEP, "step")
typedef enum uly_phase { ULY_PHASES(ULY_X_ENUM) } uly_phase;
enum { ULY_PHASE_COUNT = 0 ULY_PHASES(ULY_X_COUNT) };
#define ULY_OP_KINDS(X) X(ULY_OP_GEMM, "gemm") X(ULY_OP_ATTN, "attn") X(ULY_OP_ELEM, "elem") X(ULY_OP_COMM, "comm")
typedef enum uly_op_kind { ULY_OP_KINDS(ULY_X_ENUM) } uly_op_kind;
enum { ULY_OP_KIND_COUNT = 0 ULY_OP_KINDS(ULY_X_COUNT) };
typedef enum uly_coll {
    ULY_COLL_NONE = 0,
    ULY_COLL_ALLTOALL,
    ULY_COLL_ALLGATHER,
    ULY_COLL_REDUCE_SCATTER,
    ULY_COLL_ALLREDUCE,
    ULY_COLL_SENDRECV, /* one ring hop per step: send to next, receive from previous */
    ULY_COLL_COUNT
} uly_coll;
const char *uly_coll_name(uly_coll c);
const char *uly_phase_name(uly_phase p);
const char *uly_op_kind_name(uly_op_kind k);

enum { ULY_TIER_INTRA = 1, ULY_TIER_INTER = 2 };

/* What an operation's cost scales with, for the schedule. */
enum {
    ULY_OVERLAP_NONE = -1,  /* on the critical path */
    ULY_OVERLAP_PHASE = -2, /* background for the whole phase (ZeRO prefetch) */
};

/* The op vocabulary: every operation a plan can hold, one line each, with
 * the one name traces, JSON and the per-op tables use. Executors dispatch
 * through tables indexed by uly_op_type; uly_op_kind is the cost class. */
#define ULY_OP_TYPES(X)                                                        \
    /* the layer around attention */                                           \
    X(LN1, "ln1") X(QKV_PROJ, "qkv_proj") X(OUT_PROJ, "out_proj")               \
    X(LN2, "ln2") X(MLP_UP, "mlp_up") X(MLP_ACT, "mlp_act")                     \
    X(MLP_DOWN, "mlp_down") X(MLP_DOWN_BWD, "mlp_down_bwd")                     \
    X(MLP_ACT_BWD, "mlp_act_bwd") X(MLP_UP_BWD, "mlp_up_bwd")                   \
    X(LN2_BWD, "ln2_bwd") X(OUT_PROJ_BWD, "out_proj_bwd")                       \
    X(QKV_PROJ_BWD, "qkv_proj_bwd") X(LN1_BWD, "ln1_bwd")                       \
    /* attention (flash or materialised) */                                    \
    X(ATTN_FWD, "attn_fwd") X(ATTN_BWD, "attn_bwd")                             \
    /* Ulysses all-to-alls */                                                  \
    X(A2A_Q, "a2a_q") X(A2A_K, "a2a_k") X(A2A_V, "a2a_v") X(A2A_O, "a2a_o")      \
    X(A2A_DO, "a2a_do") X(A2A_DQ, "a2a_dq") X(A2A_DK, "a2a_dk")                 \
    X(A2A_DV, "a2a_dv")                                                         \
    /* ring attention hops */                                                  \
    X(RING_KV, "ring_kv") X(RING_DKV, "ring_dkv")                               \
    /* all-gather context parallelism */                                       \
    X(AG_K, "ag_k") X(AG_V, "ag_v") X(RS_DK, "rs_dk") X(RS_DV, "rs_dv")         \
    /* Ring Self-Attention */                                                  \
    X(RING_K, "ring_k") X(RING_V, "ring_v") X(RSA_QK, "rsa_qk")                 \
    X(RSA_SOFTMAX, "rsa_softmax") X(RSA_PV, "rsa_pv")                           \
    X(RSA_PV_BWD, "rsa_pv_bwd") X(RSA_SOFTMAX_BWD, "rsa_softmax_bwd")           \
    X(RSA_QK_BWD, "rsa_qk_bwd") X(ALLREDUCE_DK, "allreduce_dk")                 \
    X(ALLREDUCE_DV, "allreduce_dv")                                             \
    /* Megatron TP+SP all-gathers and reduce-scatters */                       \
    X(SP_AG_ATTN, "sp_ag_attn") X(SP_AG_MLP, "sp_ag_mlp")                       \
    X(SP_AG_DATTN, "sp_ag_dattn") X(SP_AG_DMLP, "sp_ag_dmlp")                   \
    X(SP_RS_ATTN, "sp_rs_attn") X(SP_RS_MLP, "sp_rs_mlp")                       \
    X(SP_RS_DATTN, "sp_rs_dattn") X(SP_RS_DMLP, "sp_rs_dmlp")                   \
    /* backward: a region's input gathered again for its weight gradient */   \
    X(SP_REGATHER_ATTN, "sp_regather_attn") X(SP_REGATHER_MLP, "sp_regather_mlp") \
    /* plain Megatron TP all-reduces */                                        \
    X(TP_AR_ATTN, "tp_ar_attn") X(TP_AR_MLP, "tp_ar_mlp")                       \
    X(TP_AR_DATTN, "tp_ar_dattn") X(TP_AR_DMLP, "tp_ar_dmlp")                   \
    /* per micro-batch, outside the layers */                                  \
    X(EMBED, "embed") X(LOGITS, "logits") X(LOSS, "loss")                       \
    X(LOGITS_BWD, "logits_bwd")                                                 \
    /* pipeline stage transfers */                                             \
    X(PP_SEND_ACT, "pp_send_act") X(PP_SEND_GRAD, "pp_send_grad")               \
    /* Megatron-LM's scatter-gather: the 1/t pieces a stage received        \
     * all-gathered over the TP group */                                       \
    X(PP_GATHER_ACT, "pp_gather_act") X(PP_GATHER_GRAD, "pp_gather_grad")       \
    /* data parallelism and ZeRO, and the optimizer */                         \
    X(ZERO_GATHER_W, "zero_gather_w") X(ZERO_RS_GRAD, "zero_rs_grad")           \
    X(DP_ALLREDUCE_GRAD, "dp_allreduce_grad") X(OPTIMIZER, "optimizer")        \
    /* Megatron-LM's per-micro-batch add of a layer's gradients into its      \
     * main gradients */                                                      \
    X(GRAD_ACCUM, "grad_accum")                                                 \
    /* the linear layers' biases where they are kernels of their own: the   \
     * QKV projection's added, every bias's gradient reduced */               \
    X(LINEAR_BIAS, "linear_bias")                                               \
    /* FSDP2's copy of a gathered layer out of the all-gather buffer */        \
    X(FSDP_COPY_OUT, "fsdp_copy_out")                                           \
    /* mixture of experts: the router, the tokens permuted by expert and sent  \
     * to the experts' ranks (dispatch: all-to-all over EP, or all-gather),   \
     * gathered over expert TP, the local experts' grouped GEMMs, and back    \
     * (combine); the shared experts are the MLP ops of a MoE layer */        \
    X(ROUTER, "router") X(MOE_PERMUTE, "moe_permute")                           \
    X(MOE_DISPATCH, "moe_dispatch") X(MOE_ETP_AG, "moe_etp_ag")                 \
    X(EXPERT_UP, "expert_up") X(EXPERT_ACT, "expert_act")                       \
    X(EXPERT_DOWN, "expert_down") X(MOE_ETP_RS, "moe_etp_rs")                   \
    X(MOE_COMBINE, "moe_combine") X(MOE_UNPERMUTE, "moe_unpermute")             \
    X(MOE_UNPERMUTE_BWD, "moe_unpermute_bwd")                                   \
    X(MOE_COMBINE_BWD, "moe_combine_bwd") X(MOE_ETP_RS_BWD, "moe_etp_rs_bwd")   \
    X(EXPERT_DOWN_BWD, "expert_down_bwd") X(EXPERT_ACT_BWD, "expert_act_bwd")   \
    X(EXPERT_UP_BWD, "expert_up_bwd") X(MOE_ETP_AG_BWD, "moe_etp_ag_bwd")       \
    X(MOE_DISPATCH_BWD, "moe_dispatch_bwd") X(MOE_PERMUTE_BWD, "moe_permute_bwd") \
    X(ROUTER_BWD, "router_bwd")                                                 \
    /* the expert weights' gradients over the expert data-parallel group */    \
    X(EXPERT_GRAD_REDUCE, "expert_grad_reduce") X(EXPERT_PARAM_GATHER, "expert_param_gather")

typedef enum uly_op_type {
#define ULY_OP_TYPE_ENUM(e, n) ULY_OPT_##e,
    ULY_OP_TYPES(ULY_OP_TYPE_ENUM)
#undef ULY_OP_TYPE_ENUM
    ULY_OPT_COUNT
} uly_op_type;

/* The op's name ("?" out of range); the type of a name, ULY_OPT_COUNT when
 * the vocabulary has none. */
const char *uly_op_type_name(uly_op_type t);
uly_op_type uly_op_type_find(const char *name);

typedef struct uly_op {
    int32_t id;          /* index in the plan, stable across executors */
    uly_op_type type;    /* which operation: the executors' dispatch key */
    uly_phase phase;
    uly_op_kind kind;
    uly_coll coll;
    uly_group group;
    int32_t group_size;
    int32_t group_stride;  /* rank distance between neighbours in the group */
    int32_t steps;         /* ring hops or attention blocks; 1 otherwise */
    uint8_t tiers;         /* ULY_TIER_* mask the traffic crosses */
    uint8_t recompute;     /* re-runs a forward op inside backward */
    uint8_t per_step;      /* once per optimizer step, not per micro-batch */
    uint8_t per_model;     /* once per micro-batch for the whole model, not per layer */
    uint8_t flash;         /* attention: blockwise kernel (1) or materialised scores (0) */
    uint8_t mb_class;      /* uly_mb_class of its memory-bound bytes (set from the type) */
    uint8_t kernels;       /* kernels it launches (attention: per block of its steps) */
    int32_t overlaps;      /* op id whose compute hides this transfer, or ULY_OVERLAP_* */
    int64_t bytes_sent;    /* per rank, all steps together */
    int64_t comm_elems;    /* comm: elements per rank in the collective's input buffer */
    int64_t act_elems;     /* elem: elements through the MLP activation function (0: none) */
    double flops;          /* hardware FLOPs this op executes (per rank) */
    double bytes_touched;  /* HBM traffic for memory-bound ops */
    double eff_size;       /* efficiency-curve key: GEMM m*n*k (curve reads its cube root), attention kv rows */
    /* GEMM shape, priced by shape on GPUs (uly_gemm_time_s): batch x
     * (m x k)(k x n) of the forward product; a backward op (phase backward,
     * not recompute) runs its two GEMMs, the input gradient (m x n)(n x k)
     * and the weight gradient (k x m)(m x n). Materialised attention: its
     * score GEMM QK^T, batch x (q x d)(d x kv), and PV after it. 0: none. */
    double gemm_batch, gemm_m, gemm_n, gemm_k;
    double crit_factor;    /* critical rank's work / this rank's average (>= 1) */
} uly_op;

#define ULY_PLAN_MAX_OPS 80

/* Shapes and derived sizes shared by every strategy. */
typedef struct uly_dims {
    int64_t cp;          /* context-parallel degree u*r: how many ways tokens split */
    int64_t tokens;      /* N / cp: tokens a rank owns between attention blocks */
    int64_t heads;       /* query heads this rank computes attention for */
    int64_t kv_eff;      /* KV heads after replication for Ulysses (k_eff), else k */
    int64_t kv_heads;    /* KV heads this rank computes attention with */
    int64_t attn_q;      /* query rows per attention call */
    int64_t attn_kv;     /* key rows per attention call (per block for rings) */
    int64_t zero_group;  /* ranks ZeRO shards over */
} uly_dims;

/* Where a group of the layout sits: how it spreads over nodes, which link
 * tiers its traffic crosses. */
typedef struct uly_group_place {
    int64_t size;      /* ranks in the group */
    int64_t stride;    /* rank distance between members */
    int64_t per_node;  /* members that share a node */
    int64_t nodes;     /* nodes the group spans */
    int64_t node_groups; /* groups of this kind with members on one node, all running at once */
    uint8_t tiers;
} uly_group_place;

typedef struct uly_plan {
    uly_layout layout;
    uly_dims dims;
    double comm_buf_bytes;   /* largest communication buffers live at once (strategy's own) */
    int64_t act_tokens;      /* tokens of token-local activations per rank (N/cp, or N/t for TP+SP) */
    int64_t act_cp;          /* context-parallel ways for the activation model */
    int64_t act_tp;          /* tensor-parallel ways for the activation model */
    int act_sp;              /* Megatron SP: non-TP regions split t ways too */
    int act_flash;           /* scores are not materialised */
    int64_t logit_tokens;    /* tokens whose logits this rank computes */
    int64_t logit_vocab;     /* vocabulary columns this rank computes */
    int64_t weight_split;    /* t: how many ways the layer weights are split */
    int64_t stage_layers;    /* layers of one pipeline stage (all of them without a pipeline; the most of any stage) */
    /* an uneven split (uly_layout's pp_first, pp_last, pp_embed, pp_loss):
     * pp_staged 1, each stage priced for its own layers and end ops; the
     * layers of the first, a middle and the last stage; the micro-batches'
     * worth of activations the second stage holds at once */
    int pp_staged;
    int64_t pp_stage_layers[3];
    int64_t pp_mid_layers;   /* the middle stages' layers together (a layout's may differ stage to stage) */
    double pp_in_flight_mid;
    int64_t micro_steps;     /* micro-batches per step per replica: global batch / (micro-batch x dp), >= 1 */
    double pp_in_flight;     /* micro-batches' worth of its layers' activations the first stage holds at once */
    double pp_in_flight_last; /* the same for the last stage (1 but under interleaving) */
    int64_t vpp;             /* virtual stages per pipeline rank (1: plain 1F1B) */
    double layer_params_rank; /* parameters of one layer this rank holds (replicated KV heads included; a MoE
                               * layer's routed experts not) */
    double expert_params_rank; /* the routed experts' parameters of the stage's MoE layers this rank holds */
    double expert_params_shard; /* its padded shard over the expert data-parallel group (uly_shard_params) */
    double model_params_rank; /* parameters of the model (of the heaviest stage) this rank holds before ZeRO */
    double model_params_shard; /* its padded ZeRO shard over dims.zero_group (uly_shard_params) */
    int64_t seq_granule;     /* the sequence lengths the layout accepts are its multiples (the strategy's checks; 0 or 1: any) */
    uly_group_place place[ULY_GROUP_COUNT]; /* each group's placement on the cluster */
    /* full recompute: ops [recompute_at, recompute_at + recompute_ops) are
     * ops [recompute_src, ...) re-run at the start of backward, as built
     * (phase backward, recompute 1, overlaps moved with them); 0 ops: none.
     * uly_evaluate prices such a copy from its forward op's time; code that
     * edits a built plan's ops prices it with uly_plan_price, which does not. */
    int recompute_src, recompute_at, recompute_ops;
    /* full recompute's block method: the share of the stage's layers that
     * are not recomputed (their recompute's time and FLOPs taken off the
     * layer's); activation offload: the share of the stage's layers
     * offloaded, and the bytes of one layer's saved activations each moves
     * each way per micro-batch (docs/model.md, "Recompute modes",
     * "Activation offload") */
    double recompute_skip;
    double offload_share, offload_bytes;
    int price_rare;          /* 1: an uneven split, the block method or offload: priced past the common path */
    int n_ops;
    uly_op ops[ULY_PLAN_MAX_OPS];
} uly_plan;

/* The messages a framework sends a layer's ZeRO-3 weight gather in: DeepSpeed
 * fetches a submodule at a time (its pre-forward and pre-backward hooks, one
 * all-gather per weight matrix: Q, K, V, O and the MLP's two or three), FSDP
 * a unit, the layer's flat parameter, at once. The plan's op is the layer's
 * gather (the executors run it whole); the pricing splits it. */
int uly_zero_gather_msgs(const uly_model *m, const uly_workload *w);
/* 1 when the framework gathers a submodule at a time (DeepSpeed), 0 a layer at once (FSDP). */
int uly_zero_gather_by_submodule(const uly_workload *w);
/* 1 when the framework copies each gathered layer out of its all-gather
 * buffer on the compute stream (FSDP2's fully_shard: split_with_sizes_copy
 * in foreach_all_gather_copy_out), 0 when the layer is used where it was
 * gathered (DeepSpeed, Megatron-LM's distributed optimizer). */
int uly_zero_copy_out(const uly_workload *w);

/* The share of a rank's model parameters in one bucket of the framework's
 * overlapped gradient reduction and parameter gather, at most 1: the last
 * bucket's reduction waits for the end of backward, the first bucket's
 * gather comes before the forward. Megatron-LM: max(40M, 1M x data-parallel
 * size) parameters (DistributedDataParallelConfig.bucket_size); DeepSpeed:
 * reduce_bucket_size, 5e8 elements; FSDP: one unit, a layer. */
double uly_bucket_fraction(const uly_workload *w, const uly_plan *p);

#ifdef __cplusplus
}
#endif
#endif /* ULYSIM_PLAN_H */
