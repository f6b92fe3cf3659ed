/* ulysim_reason.h: the feasibility reasons of libulysim: why a plan cannot
 * run (fatal) or what it assumed, each a code and up to three numbers
 * (uly_reason_format words them). Included by ulysim.h; include that, not
 * this. */
#ifndef ULYSIM_REASON_H
#define ULYSIM_REASON_H

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ feasibility */

typedef enum uly_reason_code {
    ULY_R_NONE = 0,
    ULY_R_GPUS_MISMATCH,      /* v0 product of degrees, v1 gpus */
    ULY_R_HEADS_NOT_DIVISIBLE,/* v0 heads, v1 degree */
    ULY_R_DEGREE_GT_HEADS,    /* v0 degree, v1 heads */
    ULY_R_KV_REPLICATED,      /* v0 k, v1 k_eff, v2 degree (assumption, not a failure) */
    ULY_R_KV_EXPANDED,        /* v0 k, v1 k_eff = a, v2 degree: neither divides, KV expanded to MHA */
    ULY_R_SEQ_NOT_DIVISIBLE,  /* v0 N, v1 divisor needed (2 cp t with the zigzag split, else cp t),
                               * v2 2 t + zigzag */
    ULY_R_OUT_OF_MEMORY,      /* v0 need bytes, v1 have bytes, v2 largest term index */
    ULY_R_BATCH_NOT_DIVISIBLE,/* v0 global batch, v1 micro*dp */
    ULY_R_TP_SPANS_NODES,     /* v0 t, v1 gpus per node (assumption) */
    ULY_R_GPUS_NOT_NODE_MULTIPLE, /* v0 gpus, v1 gpus per node */
    ULY_R_GPUS_EXCEED_CLUSTER,/* v0 gpus, v1 gpus in the cluster */
    ULY_R_NO_FLASH,           /* RSA materialises scores (assumption) */
    ULY_R_CAUSAL_IMBALANCE,   /* v0 critical/average work of the contiguous split */
    ULY_R_UNEVEN_HEADS,       /* v0 heads, v1 degree, v2 imbalance: padded heads */
    ULY_R_PP_LAYERS,          /* v0 pp, v1 layers: more stages than layers */
    ULY_R_PP_UNEVEN,          /* v0 layers of the heaviest stage, v1 layers, v2 pp (assumption) */
    ULY_R_PP_BUBBLE,          /* v0 idle fraction of the step, v1 micro-batches, v2 pp (assumption) */
    ULY_R_PP_VIRTUAL_LAYERS,  /* v0 layers, v1 pp x vpp, v2 pp: the layers do not split into the virtual stages */
    ULY_R_PP_INTERLEAVED,     /* v0 vpp, v1 layers per virtual stage, v2 micro-batches in flight on the first stage
                               * (assumption) */
    ULY_R_PP_STAGES,          /* v0 layers of the first stage, v1 of a middle one (-1: two stages, none), v2 of the last: an uneven split
                               * (assumption) */
    ULY_R_PP_SPLIT_REFUSED,   /* v0 layers, v1 pp, v2 vpp: Megatron-Core refuses the uneven split */
    ULY_R_OFFLOAD_NO_HOST_LINK, /* v0 offloaded layers: the cluster gives no GPU-host link to offload over */
    ULY_R_MOE_LAYOUT,         /* an expert layout Megatron-Core refuses: v0 0 (ep v1, etp v2 for a dense model),
                               * 1 (ep x etp v1 does not divide the stage's v2 ranks), 2 (ep v1 does not divide
                               * the v2 experts), 3 (tensor parallelism v1 beside MoE without sequence parallelism) */
    ULY_R_MOE_DENSE_LAYERS,   /* v0 dense layers of v1 priced as MoE layers (assumption) */
    ULY_R_PP_LAYOUT,          /* v0 layers of the first stage, v1 the most of a middle one, v2 of the last: a
                               * pipeline layout's stages (assumption) */
    ULY_R_CODE_COUNT
} uly_reason_code;

typedef struct uly_reason {
    uly_reason_code code;
    int fatal;        /* 1: makes the plan infeasible; 0: an assumption */
    double v[3];
} uly_reason;

#define ULY_MAX_REASONS 8

#ifdef __cplusplus
}
#endif

#endif
