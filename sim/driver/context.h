/* context.h: one planning request, resolved once from the command line: the
 * model, cluster and workload, the strategies, and the GPU counts and
 * sequence lengths (defaults applied, checked here so that no command checks
 * them again). Also what the planning commands share: the summary row of an
 * evaluated layout, the best layout of a strategy, and the commands. */
#ifndef SIM_CONTEXT_H
#define SIM_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "args.h"
#include "ulysim.h"

/* the what-if flags, as bits of sim_ctx.whatif_same */
enum { SIM_WHATIF_NIC = 1, SIM_WHATIF_INTRA = 2, SIM_WHATIF_GPN = 4, SIM_WHATIF_OVERSUB = 8 };

typedef struct sim_ctx {
    const sim_args *a;
    uly_model model;
    uly_cluster cluster;
    uly_workload w;          /* seq is seq[0] */
    uly_search_opts opts;
    uly_strategy_id strat[ULY_STRAT_COUNT];
    int n_strat;
    int strat_explicit;      /* --strategy given */
    int pinned;              /* any of --ulysses/--ring/--tp/--pp given */
    int64_t preset_nodes;    /* the preset's node count, when --gpus needed more */
    unsigned whatif_same;    /* SIM_WHATIF_* bits: what-if flags that equal the preset's value */
    /* GPU counts: --gpus, else 8; min-gpus: the upper bound, else the
     * cluster's GPUs. plan and max-seq take one, a whole number of nodes
     * that the pinned degrees divide. */
    int64_t gpus[SIM_LIST_MAX];
    int n_gpus;
    /* Sequence lengths: --seq, else 128K; max-seq: the upper bound, else 1G. */
    int64_t seq[SIM_LIST_MAX];
    int n_seq;
} sim_ctx;

/* Loads presets, builds and checks the workload, picks the strategies, sets
 * the GPU counts and sequence lengths. Returns 0, or 2 (bad input) with a
 * reason, or 1 (internal). */
int sim_ctx_resolve(const sim_args *a, sim_ctx *c, char *why, size_t why_len);

/* Checks that pinned degrees divide `gpus`: 0, or 2 with a reason. */
int sim_check_pins_divide(const sim_ctx *c, int64_t gpus, char *why, size_t why_len);

/* What a command keeps of one evaluated layout: plain data, the same on
 * every MPI rank, so rank 0 can gather and print it. */
enum {
    SIM_ROW_OK = 0,        /* the search found a layout with valid shapes */
    SIM_ROW_NOLAYOUT = 1,  /* none has valid shapes: a representative layout's reasons */
    SIM_ROW_OVERFLOW = 2,  /* sizes overflow 63 bits */
    SIM_ROW_ERROR = 3,     /* internal failure */
};
typedef struct sim_summary {
    int32_t status;
    const uly_strategy *strategy; /* the registry's entry */
    uly_strategy_id strategy_id;  /* its id: what crosses MPI ranks, where the
                                   * entry's address is another process's */
    int64_t seq, gpus;
    int64_t value;         /* max-seq: longest sequence; min-gpus: fewest GPUs */
    uly_layout layout;
    int64_t micro_batch;
    int32_t feasible;
    int32_t n_reasons;
    uly_reason reasons[ULY_MAX_REASONS];
    int64_t comm_fwd, comm_bwd, comm_recompute, zero_bytes;
    int64_t moe_bytes;     /* a MoE layer's token dispatch and combine (uly_result.moe_bytes) */
    int32_t tiers;
    uly_memory mem;
    uly_timing time;
    uint64_t evaluated;
    int32_t at_bound;      /* max-seq: the layout's next length (value + its granule) is past the bound searched */
    char note[160];        /* why no reasons could be had (library message), or empty */
    char hint[240];        /* no layout valid: the constraint to meet (the global batch's divisor), or empty */
} sim_summary;

/* A row begun: zeroed, with strategy s (its registry entry and id). */
void sim_summary_start(sim_summary *out, uly_strategy_id s);

/* The one mapping of an evaluation to a summary row: layout, micro-batch,
 * feasibility, reasons, traffic, memory and time. */
void sim_summary_from_result(sim_summary *s, const uly_result *r);

/* One layout evaluated at sequence seq with the context's workload into a
 * summary row (strategy, gpus and evaluated are the caller's): on ULY_OK the
 * result's numbers, status SIM_ROW_OK; otherwise SIM_ROW_OVERFLOW or
 * SIM_ROW_NOLAYOUT with a note (the layout check's message, else the
 * library's). plan and res are the evaluation's buffers. Returns the
 * uly_evaluate status. */
uly_status sim_summary_of_layout(const sim_ctx *c, const uly_layout *l, int64_t seq, sim_summary *out,
                                 uly_plan *plan, uly_result *res);

/* Best layout of strategy s on gpus GPUs at sequence seq (uly_search_best);
 * when no layout has valid shapes, the reasons of a representative layout
 * (the pinned degrees, or the strategy's own degree over all GPUs). */
void sim_best(const sim_ctx *c, uly_strategy_id s, int64_t gpus, int64_t seq, sim_summary *out);

/* sim_best that also hands back the winner's plan and priced result (per-op
 * times) in plan and res, when out->status is SIM_ROW_OK. */
void sim_best_plan(const sim_ctx *c, uly_strategy_id s, int64_t gpus, int64_t seq, sim_summary *out,
                   uly_plan *plan, uly_result *res);

/* The representative layout sim_best falls back to. */
void sim_pure_layout(const sim_ctx *c, uly_strategy_id s, int64_t gpus, uly_layout *l);

/* The planning commands run through the driver (driver.h); presets needs
 * no model or cluster and runs alone. */
int sim_cmd_presets(const sim_args *a);

#endif
