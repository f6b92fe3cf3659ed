/* ulysim_search.h: the search over layouts of libulysim (best layout per
 * strategy, the limits max-seq and min-gpus search, their options and
 * statistics). Included by ulysim.h; include that, not this. */
#ifndef ULYSIM_SEARCH_H
#define ULYSIM_SEARCH_H

#include "ulysim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- search */

#define ULY_PP_SEARCH (-1)

typedef struct uly_search_opts {
    uint32_t strategies;      /* bit per uly_strategy_id; 0 = all */
    int64_t pin_ulysses, pin_ring, pin_tp; /* 0 = search */
    int64_t pin_pp;           /* pipeline stages: 0 or 1 none, P > 1 pinned, ULY_PP_SEARCH every stage
                               * count dividing the GPUs, up to the layers */
    int64_t pin_vpp;          /* virtual stages per pipeline rank: 0 unpinned (1 with a pinned pp, searched
                               * with ULY_PP_SEARCH); V > 0 pinned (1: plain 1F1B) */
    int both_placements;      /* also try the sequence group outside DP etc. */
    int search_micro_batch;   /* 1: try micro-batches dividing global_batch/dp */
    /* The pipeline's split of the layers (uly_layout's pp_first, pp_last,
     * pp_embed, pp_loss): pin_split 1 takes split_*'s as given; 0 tries the
     * even split and each one Megatron-Core accepts that puts the layers
     * otherwise: the embedding, the loss or both counted as a layer. */
    int pin_split;
    int32_t split_first, split_last, split_mid_most;
    uint8_t split_embed, split_loss;
    /* A MoE model's expert parallelism: pinned (> 0), or 0, every degree
     * dividing both the stage's GPUs and the experts; expert tensor
     * parallelism pinned (> 0), or 0, none (1) and the layout's TP degree
     * (Megatron-LM's default). Dense models: 1. */
    int64_t pin_ep, pin_etp;
} uly_search_opts;

typedef struct uly_search_stats {
    uint64_t evaluated;
    uint64_t feasible;
} uly_search_stats;

/* Best layout of one strategy on `gpus` GPUs: the feasible result with the
 * highest tokens/s (equal to shortest step time at a fixed global batch);
 * when none is feasible, the "closest" one (least memory over capacity)
 * with its reasons. Returns ULY_EINVAL when no layout has valid shapes. */
uly_status uly_search_best(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                           int64_t gpus, uly_strategy_id s, const uly_search_opts *o,
                           uly_result *best, uly_search_stats *stats);

/* uly_search_best that also hands back the plan `best` prices (best_plan may
 * be NULL): copied when a better layout is found, never built twice. */
uly_status uly_search_best_plan(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                                int64_t gpus, uly_strategy_id s, const uly_search_opts *o,
                                uly_result *best, uly_plan *best_plan, uly_search_stats *stats);

/* What uly_search_each hands its caller for each layout it prices: the
 * layout (with its placement), the workload as priced (its micro_batch the
 * one tried) and the result, valid only during the call. */
typedef void (*uly_search_visit)(void *ctx, const uly_layout *l, const uly_workload *w, const uly_result *r);

/* Every layout uly_search_best would price for one strategy on `gpus` GPUs,
 * in the same order (placements and micro-batches included), each handed to
 * visit (with ctx) as it is priced: the whole search space, not only the
 * winner, for callers that rank or plot it themselves (the Python package's
 * search). No allocation; returns ULY_EINVAL when no layout has valid shapes. */
uly_status uly_search_each(const uly_model *m, const uly_workload *w, const uly_cluster *c, int64_t gpus,
                           uly_strategy_id s, const uly_search_opts *o, uly_search_visit visit, void *ctx,
                           uly_search_stats *stats);

/* Longest sequence (a multiple of `granule`, at most seq_hi) the strategy
 * fits on `gpus` GPUs; 0 when none fits. */
uly_status uly_search_max_seq(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                              int64_t gpus, uly_strategy_id s, const uly_search_opts *o,
                              int64_t seq_hi, int64_t *max_seq, uly_result *at);

/* Fewest GPUs (tried: powers of two inside a node, the whole node, then
 * multiples of gpus_per_node; at most gpus_hi) on which the strategy fits
 * the workload; 0 when none. */
uly_status uly_search_min_gpus(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                               uly_strategy_id s, const uly_search_opts *o,
                               int64_t gpus_hi, int64_t *min_gpus, uly_result *at);

/* --------------------------------------------- search: limits and order */

/* 1: r was priced, so only memory can have made it infeasible; 0: its
 * shapes failed before pricing. */
int uly_result_priced(const uly_result *r);

/* Is a better than b? Feasible first; among feasible, more tokens/s, then
 * fewer bytes sent; among infeasible, memory failures (priced) before shape
 * failures, then the least memory over capacity. Ties keep b. */
int uly_result_better(const uly_result *a, const uly_result *b);

/* Largest micro-batch, at most batch_hi, that the fixed layout l fits
 * (memory grows with the batch: doubling, then bisection). w's micro_batch
 * is ignored; its global_batch must be 0 (one micro-batch per replica: a
 * fixed global batch admits only its divisors). *max_batch is 0 when batch 1
 * does not fit, and at is then batch 1's result, whose fatal reasons say
 * why (uly_result_priced: memory, or shapes no batch changes); otherwise at
 * is the result at *max_batch. */
uly_status uly_search_max_batch(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                                const uly_layout *l, int64_t batch_hi, int64_t *max_batch, uly_result *at);

/* The tensor-parallel degrees whose groups stay inside a node on `gpus`
 * GPUs: those dividing both gpus_per_node and gpus, ascending (TP is the
 * innermost group of every layout the searches try). Writes at most max;
 * returns how many, or -1 for bad arguments. */
int uly_tp_in_node_degrees(const uly_cluster *c, int64_t gpus, int64_t *degrees, int max);

/* uly_search_best with tensor parallelism inside a node (Megatron-LM
 * practice): each of uly_tp_in_node_degrees pinned in turn (o's pin_tp is
 * replaced) and the best result kept (uly_result_better; the smaller degree
 * on ties). */
uly_status uly_search_best_tp_in_node(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                                      int64_t gpus, uly_strategy_id s, const uly_search_opts *o,
                                      uly_result *best, uly_search_stats *stats);

#ifdef __cplusplus
}
#endif
#endif /* ULYSIM_SEARCH_H */
