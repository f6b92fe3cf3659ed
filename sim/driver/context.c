/* context.c: resolving a planning request once (presets, workload,
 * strategies, the GPU counts and sequence lengths with their defaults and
 * checks), and what the planning commands share: the summary row of an
 * evaluated layout and the best layout of a strategy with its fallback. */
#include "context.h"

#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "preset.h"

/* ------------------------------------------------------------- resolving */

static const char *degree_flag(int which)
{
    return which == 0 ? "--ulysses" : which == 1 ? "--ring" : "--tp";
}

/* Interleaving over V virtual stages can be searched: some P >= 2 stages
 * have P x V dividing the L layers (and P dividing G GPUs, where G > 0). */
static int vstages_searchable(int64_t L, int64_t V, int64_t G)
{
    for (int64_t pp = 2; pp * V <= L; pp++)
        if (L % (pp * V) == 0 && (!G || G % pp == 0)) return 1;
    return 0;
}

/* The GPUs the pinned degrees (--ulysses, --ring, --tp, --pp) take
 * together, capped past SIM_GPUS_MAX; desc: the pins as typed, "--tp 4 --pp 2". */
static int64_t pins_gpus(const sim_args *a, char *desc, size_t n)
{
    const int64_t pins[4] = {a->pin_u, a->pin_r, a->pin_t, a->pin_pp};
    int64_t prod = 1;
    desc[0] = 0;
    for (int k = 0; k < 4; k++) {
        if (pins[k] <= 0) continue;
        size_t l = strlen(desc);
        snprintf(desc + l, n - l, "%s%s %lld", l ? " " : "", k == 3 ? "--pp" : degree_flag(k), (long long)pins[k]);
        if (prod > SIM_GPUS_MAX) continue;
        prod *= pins[k];
    }
    return prod;
}

static int strategy_accepts(const uly_strategy *s, const sim_args *a)
{
    if (a->pin_u > 1 && !s->uses_ulysses) return 0;
    if (a->pin_r > 1 && !s->uses_ring) return 0;
    if (a->pin_t > 1 && !s->uses_tp) return 0;
    /* Megatron's --sequence-parallel: not the TP that keeps every token on every rank */
    if (a->sequence_parallel && s->exec == ULY_EXEC_TP_ALLREDUCE) return 0;
    return 1;
}

/* "--model X: <loader message>", saying X once when the message starts with it. */
static int load_fail(char *why, size_t n, const char *flag, const char *value, char *lib, const char *fallback)
{
    char qb[80];
    sim_one_line(lib);
    if (!lib[0]) return sim_fail(why, n, "%s %s: %s", flag, text_quote(value, qb, sizeof qb), fallback);
    size_t l = strlen(value);
    /* a path that cannot be opened: say what else the flag takes */
    const char *hint = strstr(lib, ": cannot open: ") ? " (valid: a readable JSON file, or a preset name: `ulysim presets` "
                                                        "lists them)"
                                                      : "";
    if (l && strncmp(lib, value, l) == 0 && lib[l] == ':') return sim_fail(why, n, "%s %s%s", flag, lib, hint);
    return sim_fail(why, n, "%s %s: %s%s", flag, text_quote(value, qb, sizeof qb), lib, hint);
}

/* The GPU counts and sequence lengths of the request: as given, else the
 * command's defaults. */
static void lists_resolve(const sim_args *a, sim_ctx *c)
{
    c->n_gpus = a->n_gpus;
    memcpy(c->gpus, a->gpus, (size_t)a->n_gpus * sizeof c->gpus[0]);
    if (!c->n_gpus) {
        /* 8, or one node where 8 GPUs are not whole nodes (7-GPU nodes) */
        const int64_t gpn = c->cluster.gpus_per_node > 0 ? c->cluster.gpus_per_node : 1;
        int64_t g = SIM_DEFAULT_GPUS <= gpn || SIM_DEFAULT_GPUS % gpn == 0 ? SIM_DEFAULT_GPUS : gpn;
        if (a->cmd == SIM_CMD_MINGPUS) { /* the bound: every GPU of the cluster */
            g = c->cluster.nodes * c->cluster.gpus_per_node;
            if (g <= 0) g = c->cluster.gpus_per_node > 0 ? c->cluster.gpus_per_node : 1;
            if (g > SIM_GPUS_MAX) g = SIM_GPUS_MAX;
        }
        c->gpus[c->n_gpus++] = g;
    }
    c->n_seq = a->n_seq;
    memcpy(c->seq, a->seq, (size_t)a->n_seq * sizeof c->seq[0]);
    if (!c->n_seq) c->seq[c->n_seq++] = a->cmd == SIM_CMD_MAXSEQ ? SIM_DEFAULT_MAXSEQ_HI : SIM_DEFAULT_SEQ;
}

/* `gpus` fills whole nodes once past one: 0, or 2 with a reason. */
static int check_gpus_nodes(const sim_ctx *c, int64_t gpus, char *why, size_t n)
{
    const int64_t gpn = c->cluster.gpus_per_node;
    if (gpus <= gpn || gpus % gpn == 0) return 0;
    return sim_fail(why, n, "--gpus %lld: not a whole number of %lld-GPU nodes of %s (valid: up to %lld, or a multiple of %lld)",
                (long long)gpus, (long long)gpn, c->cluster.name, (long long)gpn, (long long)gpn);
}

/* The model and cluster presets, the what-if flags applied to the cluster,
 * and nodes added where the GPUs asked for need more: 0, or 2 with a reason. */
static int presets_load(const sim_args *a, sim_ctx *c, char *why, size_t n)
{
    char lib[512];
    static const char cant[] = "cannot load (valid: a preset name, see 'ulysim presets', or FILE.json)";
    lib[0] = 0;
    if (preset_model_load(a->model, &c->model, lib, sizeof lib) != 0) return load_fail(why, n, "--model", a->model, lib, cant);
    lib[0] = 0;
    if (uly_model_check(&c->model, lib, sizeof lib) != ULY_OK) return load_fail(why, n, "--model", a->model, lib, "invalid model");
    if (sim_moe_check(a, &c->model, why, n)) return SIM_EXIT_USAGE; /* args_moe.c: the MoE flags against the model */
    lib[0] = 0;
    if (preset_cluster_load(a->cluster, &c->cluster, lib, sizeof lib) != 0)
        return load_fail(why, n, "--cluster", a->cluster, lib, cant);
    /* what-if: the preset with its links or node size changed */
    uly_cluster *cl = &c->cluster;
    /* a what-if that restates the preset changes nothing: the plan says so */
    c->whatif_same = (a->nic_bw_Bps > 0 && a->nic_bw_Bps == cl->nic_bw_Bps ? SIM_WHATIF_NIC : 0) |
                     (a->intra_bw_Bps > 0 && a->intra_bw_Bps == cl->intra_bw_Bps ? SIM_WHATIF_INTRA : 0) |
                     (a->gpus_per_node > 0 && a->gpus_per_node == cl->gpus_per_node ? SIM_WHATIF_GPN : 0) |
                     (a->oversub > 0 && a->oversub == cl->oversub ? SIM_WHATIF_OVERSUB : 0);
    if (a->nic_bw_Bps > 0) cl->nic_bw_Bps = a->nic_bw_Bps;
    if (a->intra_bw_Bps > 0) cl->intra_bw_Bps = a->intra_bw_Bps;
    if (a->oversub > 0) {
        if (cl->topo == ULY_TOPO_TORUS)
            return sim_fail(why, n, "--oversub %g: cluster %s is a torus (valid: with a fat-tree or rail cluster)",
                            a->oversub, cl->name);
        cl->oversub = a->oversub;
    }
    if (a->mem_headroom_gib >= 0) { /* the device's memory less this is what a plan may use */
        if (a->mem_headroom_gib * 1073741824.0 >= cl->gpu.hbm_bytes)
            return sim_fail(why, n, "--mem-headroom %g: all of cluster %s's %.1f GiB per GPU (valid: less than it)",
                            a->mem_headroom_gib, cl->name, cl->gpu.hbm_bytes / 1073741824.0);
        cl->gpu.reserved_bytes = a->mem_headroom_gib * 1073741824.0;
    }
    if (a->gpus_per_node > 0) {
        if (cl->topo == ULY_TOPO_TORUS)
            return sim_fail(why, n, "--gpus-per-node %lld: cluster %s is a torus, its nodes fixed (valid: a fat-tree or "
                            "rail cluster)", (long long)a->gpus_per_node, cl->name);
        if (cl->pcie_per_switch > a->gpus_per_node) cl->pcie_per_switch = a->gpus_per_node;
        const int64_t total = cl->nodes * cl->gpus_per_node;
        /* nodes of another size keep the preset's NICs per GPU (its NIC
         * bandwidth is per GPU): 8 GPUs with 8 NICs become 4 with 4 */
        if (cl->nics_per_node > 0) {
            const int64_t nics = (cl->nics_per_node * a->gpus_per_node + cl->gpus_per_node / 2) / cl->gpus_per_node;
            cl->nics_per_node = nics > 0 ? nics : 1;
        }
        cl->gpus_per_node = a->gpus_per_node;
        cl->nodes = (total + a->gpus_per_node - 1) / a->gpus_per_node;
    }
    lib[0] = 0;
    if (uly_cluster_check(&c->cluster, lib, sizeof lib) != ULY_OK)
        return load_fail(why, n, "--cluster", a->cluster, lib, "invalid cluster");
    return 0;
}

/* A preset's node count is a planning default, not a limit: GPUs beyond it
 * (given, or the default 8 on a smaller cluster) add nodes of the same kind
 * (a torus keeps its shape). */
static void cluster_grow(sim_ctx *c)
{
    int64_t want = 0;
    for (int i = 0; i < c->n_gpus; i++)
        if (c->gpus[i] > want) want = c->gpus[i];
    const int64_t gpn = c->cluster.gpus_per_node;
    if (c->cluster.topo != ULY_TOPO_TORUS && want > c->cluster.nodes * gpn) {
        c->preset_nodes = c->cluster.nodes;
        c->cluster.nodes = (want + gpn - 1) / gpn;
    }
}

/* libulysim's refusal of the workload, said with the flag the field came
 * from: SIM_EXIT_USAGE. */
static int workload_fail(char *lib, char *why, size_t n)
{
    static const struct { const char *field, *flag; } map[] = {
        {"seq", "--seq"}, {"micro_batch", "--batch"}, {"global_batch", "--global-batch"},
        {"zero_stage", "--zero"}, {"dtype", "--dtype"}, {"recompute", "--recompute"}, {"split", "--split"},
        {"framework", "--framework"}, {"attn_density", "--attn-density"}, {"ffn_chunks", "--ffn-chunks"},
        {"loss_chunks", "--loss-chunks"}, {"zero_prefetch", "--zero-prefetch"},
    };
    sim_one_line(lib);
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++) {
        size_t l = strlen(map[k].field);
        if (strncmp(lib, map[k].field, l) == 0 && strncmp(lib + l, " = ", 3) == 0) {
            const char *rest = lib + l + 3;
            const char *colon = strchr(rest, ':');
            if (colon) return sim_fail(why, n, "%s %.*s:%s", map[k].flag, (int)(colon - rest), rest, colon + 1);
        }
    }
    return sim_fail(why, n, "workload: %s", lib);
}

/* The workload of the request, and the settings of what it does not run
 * refused, not dropped: 0, or 2 with a reason. */
static int workload_build(const sim_args *a, sim_ctx *c, char *why, size_t n)
{
    uly_workload *w = &c->w;
    *w = (uly_workload){.seq = c->seq[0], .micro_batch = a->batch, .global_batch = a->global_batch,
                        .dtype = a->dtype, .causal = a->causal, .flash = a->flash, .recompute = a->recompute,
                        .zero_stage = a->zero, .split = a->split, .framework = a->framework,
                        .attn_density = a->attn_density, .ffn_chunks = a->ffn_chunks, .loss_chunks = a->loss_chunks,
                        .tp_comm_overlap = a->tp_comm_overlap, .zero_prefetch = a->zero_prefetch,
                        .overlap_grad_reduce = a->overlap_grad_reduce,
                        .attn_kernel = a->attn_kernel, .overlap_param_gather = a->overlap_param_gather,
                        .grad_reduce_fp32 = a->grad_reduce_fp32, .grad_accum_fusion = a->grad_accum_fusion,
                        .pp_scatter_gather = a->pp_scatter_gather > 0,
                        .transformer_impl = a->transformer_impl,
                        .cuda_graphs = a->cuda_graphs, .step_overhead_s = a->step_overhead_s};
    /* Megatron-LM reads the kernel's name only under the fusion */
    w->ce_impl = !a->ce_fusion ? ULY_CE_UNFUSED : a->ce_fused_impl ? a->ce_fused_impl : ULY_CE_NATIVE;
    sim_args_fp8_workload(a, w);
    sim_moe_workload(a, w); /* args_moe.c */
    if (a->grad_reduce_fp32 && a->framework != ULY_FW_MEGATRON)
        return sim_fail(why, n, "%s: where Megatron-LM keeps its main gradients; --framework %s holds and reduces "
                        "gradients in its own precision (valid with --framework megatron)",
                        a->grad_reduce_fp32 > 0 ? "--accumulate-allreduce-grads-in-fp32" : "--grad-reduce-in-bf16",
                        uly_framework_name(a->framework));
    if (a->grad_accum_fusion && a->framework != ULY_FW_MEGATRON)
        return sim_fail(why, n, "%s: how Megatron-LM adds each micro-batch's gradients into its main gradients; "
                        "--framework %s accumulates them its own way (valid with --framework megatron)",
                        a->grad_accum_fusion > 0 ? "--gradient-accumulation-fusion" : "--no-gradient-accumulation-fusion",
                        uly_framework_name(a->framework));
    if (a->pp_scatter_gather && a->framework != ULY_FW_MEGATRON)
        return sim_fail(why, n, "%s: how Megatron-LM's pipeline stages hand on what every TP rank holds; --framework %s "
                        "sends stage outputs whole (valid with --framework megatron)",
                        a->pp_scatter_gather > 0 ? "--scatter-gather-tensors-in-pipeline"
                                                 : "--no-scatter-gather-tensors-in-pipeline",
                        uly_framework_name(a->framework));
    if (sim_args_fp8_check(a, &c->cluster, why, n)) return SIM_EXIT_USAGE;
    if (sim_attn_kernel_pick(a, &c->cluster, w, why, n)) return SIM_EXIT_USAGE;
    if (a->attn_kernel == ULY_AK_FLASH3 && strcmp(c->cluster.gpu.arch, "hopper") != 0)
        return sim_fail(why, n, "--attn-kernel flash3: FlashAttention-3 runs on Hopper GPUs, and cluster %s's %s is %s "
                        "(valid: flash2, triton or sdpa here)", c->cluster.name, c->cluster.gpu.name,
                        c->cluster.gpu.arch[0] ? c->cluster.gpu.arch : "of unknown architecture (gpu.arch)");
    if (a->attn_kernel_set && !a->flash)
        return sim_fail(why, n, "--attn-kernel %s: a flash attention kernel, and --no-flash materialises the scores "
                        "(valid: one of them)", uly_attn_kernel_name(a->attn_kernel));
    if (a->zero_prefetch > 0 && w->zero_stage < 3) /* none (no prefetch) holds on any stage */
        return sim_fail(why, n, "--zero-prefetch: prefetching gathers ZeRO-3's sharded weights, and the ZeRO stage is "
                        "%d%s (valid: with --zero 3, or leave it out)", w->zero_stage,
                        a->zero_set ? "" : a->framework == ULY_FW_MEGATRON ? " (Megatron-LM's default)" : "");
    if (a->global_batch && a->batch_set && a->global_batch % a->batch != 0)
        return sim_fail(why, n, "--global-batch %lld: not a multiple of --batch %lld (valid: a multiple of the micro-batch)",
                    (long long)a->global_batch, (long long)a->batch);
    char lib[512];
    if (uly_workload_check(w, lib, sizeof lib) != ULY_OK) return workload_fail(lib, why, n);
    return 0;
}

/* The search's pins: a pinned Ulysses or ring degree leaves the rest to
 * data parallelism (the contract: dp is what remains); TP inside them only
 * when asked. */
static void search_opts(const sim_args *a, sim_ctx *c)
{
    c->pinned = a->pin_u || a->pin_r || a->pin_t || a->pin_pp > 1 || a->pin_pp == ULY_PP_SEARCH;
    c->opts.pin_ulysses = a->pin_u;
    c->opts.pin_ring = a->pin_r;
    c->opts.pin_tp = a->pin_t;
    if ((a->pin_u || a->pin_r) && !a->pin_t) c->opts.pin_tp = 1;
    c->opts.pin_pp = a->pin_pp;
    c->opts.pin_vpp = a->pin_vpp;
    /* 0 when not given: the search's (1 for a dense model) */
    c->opts.pin_ep = a->moe.ep;
    c->opts.pin_etp = a->moe.etp;
    /* a launch script without --expert-tensor-parallel-size runs Megatron-LM's
     * default, the TP degree (arguments.py's validate_args) */
    if (a->mlm.launch && !a->moe.etp && c->model.experts > 0) c->opts.pin_etp = a->pin_t > 0 ? a->pin_t : 1;
    c->opts.both_placements = 1;
    c->opts.search_micro_batch = a->global_batch > 0 && !a->batch_set;
}

/* A strategy named with --strategy, checked against the pinned degrees and
 * --sequence-parallel: 0, or 2 with a reason. */
static int strategy_named(const sim_args *a, const uly_strategy *s, char *why, size_t n)
{
    const int64_t pins[3] = {a->pin_u, a->pin_r, a->pin_t};
    const int uses[3] = {s->uses_ulysses, s->uses_ring, s->uses_tp};
    for (int k = 0; k < 3; k++) {
        if (pins[k] <= 1 || uses[k]) continue;
        char names[200] = "";
        for (int j = 0; j < ULY_STRAT_COUNT; j++) {
            const uly_strategy *o = uly_strategy_get((uly_strategy_id)j);
            const int ou[3] = {o ? o->uses_ulysses : 0, o ? o->uses_ring : 0, o ? o->uses_tp : 0};
            if (o && ou[k]) sim_join(names, sizeof names, ", ", o->name);
        }
        return sim_fail(why, n, "%s %lld: strategy '%s' has no such degree (valid: 1, or a strategy that uses it: %s)",
                        degree_flag(k), (long long)pins[k], s->name, names);
    }
    /* Megatron's --sequence-parallel is TP with SP: asked for together with
     * the TP that has none, one of them would be dropped */
    if (a->sequence_parallel && s->exec == ULY_EXEC_TP_ALLREDUCE)
        return sim_fail(why, n, "--sequence-parallel: strategy '%s' is tensor parallelism without sequence "
                        "parallelism (valid: drop one of them; TP with SP is --strategy megatron-sp)", s->name);
    return 0;
}

/* The strategies of the request: those named, or every one that can take
 * the pinned degrees. 0, or 2 with a reason. */
static int strategies_pick(const sim_args *a, sim_ctx *c, char *why, size_t n)
{
    if (a->n_strategies && !a->strategies_all) {
        c->strat_explicit = 1;
        for (int i = 0; i < a->n_strategies; i++) {
            const uly_strategy *s = uly_strategy_get(a->strategies[i]);
            if (!s) return sim_fail(why, n, "internal: strategy %d missing from the registry", (int)a->strategies[i]);
            int rc = strategy_named(a, s, why, n);
            if (rc) return rc;
            c->strat[c->n_strat++] = s->id;
        }
    } else {
        c->strat_explicit = a->strategies_all; /* named, all of them: a plot draws each */
        for (int i = 0; i < ULY_STRAT_COUNT; i++) {
            const uly_strategy *s = uly_strategy_get((uly_strategy_id)i);
            if (s && strategy_accepts(s, a)) c->strat[c->n_strat++] = s->id;
        }
        if (c->n_strat == 0) {
            const int64_t pins[3] = {a->pin_u, a->pin_r, a->pin_t};
            char pinned[120] = "";
            for (int k = 0; k < 3; k++)
                if (pins[k] > 1) {
                    size_t l = strlen(pinned);
                    snprintf(pinned + l, sizeof pinned - l, "%s%s %lld", l ? " " : "", degree_flag(k), (long long)pins[k]);
                }
            return sim_fail(why, n, "%s: no strategy uses all these degrees together (valid: see --strategy in ulysim --help)", pinned);
        }
    }
    for (int i = 0; i < c->n_strat; i++) c->opts.strategies |= 1u << c->strat[i];
    return 0;
}

/* A pinned head-splitting degree must split the heads: asking for an
 * impossible layout is bad input, not a plan to explain. */
static int heads_check(const sim_args *a, const sim_ctx *c, char *why, size_t n)
{
    const int64_t heads = c->model.heads;
    const int64_t hpins[2] = {a->pin_u, a->pin_t};
    const char *hflags[2] = {"--ulysses", "--tp"};
    for (int k = 0; k < 2; k++) {
        if (hpins[k] <= 1 || (hpins[k] <= heads && heads % hpins[k] == 0)) continue;
        char valid[200] = "";
        for (int64_t d = 1; d <= heads; d++)
            if (heads % d == 0) {
                size_t l = strlen(valid);
                snprintf(valid + l, sizeof valid - l, "%s%lld", l ? ", " : "", (long long)d);
            }
        return sim_fail(why, n, "%s %lld: does not split the %lld attention heads of %s evenly (valid: %s)", hflags[k],
                    (long long)hpins[k], (long long)heads, c->model.name, valid);
    }
    return 0;
}

/* Interleaving over searched stages: some P >= 2 must have P x V dividing
 * the layers (on plan's and max-seq's one GPU count, P dividing it too), or
 * no layout is left to search. */
static int vstages_search_check(const sim_args *a, const sim_ctx *c, char *why, size_t n)
{
    const int64_t L = c->model.layers, V = c->opts.pin_vpp;
    const int64_t G = a->cmd == SIM_CMD_PLAN || a->cmd == SIM_CMD_MAXSEQ ? c->gpus[0] : 0;
    if (vstages_searchable(L, V, G)) return 0;
    char valid[200] = "";
    for (int64_t v = 2; 2 * v <= L; v++)
        if (vstages_searchable(L, v, G)) {
            size_t l = strlen(valid);
            snprintf(valid + l, sizeof valid - l, "%s%lld", l ? ", " : "", (long long)v);
        }
    char on[64] = "";
    if (G) snprintf(on, sizeof on, " and P dividing %lld GPUs", (long long)G);
    return sim_fail(why, n, "--virtual-stages %lld with --pp auto: no stage count P >= 2 has P x %lld "
                    "dividing the %lld layers of %s%s (valid: %s)", (long long)V, (long long)V, (long long)L,
                    c->model.name, on, valid[0] ? valid : "no interleaving here: leave --virtual-stages out");
}

/* The pipeline: a stage needs at least one layer; interleaving, given as
 * virtual stages or as Megatron's layers per virtual stage (V = L / (pp N)),
 * needs a pipeline whose stages split the layers into chunks. */
static int pipeline_check(const sim_args *a, sim_ctx *c, char *why, size_t n)
{
    const int64_t L = c->model.layers;
    if (a->pin_pp > L)
        return sim_fail(why, n, "--pp %lld: more stages than the %lld layers of %s (valid: 1..%lld)", (long long)a->pin_pp,
                    (long long)L, c->model.name, (long long)L);
    if (a->lay.pp_layout && a->lay.layout_layers != L)
        return sim_fail(why, n, "--pp-layout: %lld transformer layers ('t'), and %s has %lld (valid: one 't' a layer, "
                        "as Megatron-Core checks)", (long long)a->lay.layout_layers, c->model.name, (long long)L);
    if (a->layers_per_vstage) {
        const int64_t pp = a->pin_pp > 1 ? a->pin_pp : 0, per = a->layers_per_vstage;
        if (!pp)
            return sim_fail(why, n, "--num-layers-per-virtual-pipeline-stage %lld: needs a pinned --pp "
                            "(--pipeline-model-parallel-size) above 1", (long long)per);
        if (L % (pp * per))
            return sim_fail(why, n, "--num-layers-per-virtual-pipeline-stage %lld: %lld layers over %lld stages do not "
                            "split into chunks of %lld (valid: a divisor of %lld)", (long long)per, (long long)L,
                            (long long)pp, (long long)per, L % pp ? 0LL : (long long)(L / pp));
        const int64_t v = L / (pp * per);
        if (a->pin_vpp && a->pin_vpp != v)
            return sim_fail(why, n, "--virtual-stages %lld disagrees with --num-layers-per-virtual-pipeline-stage %lld "
                            "(%lld layers over %lld stages: %lld virtual stages; valid: give one of them, or values "
                            "that agree)", (long long)a->pin_vpp, (long long)per, (long long)L, (long long)pp, (long long)v);
        c->opts.pin_vpp = v;
    }
    if (c->opts.pin_vpp <= 1) return 0;
    if (a->pin_pp == 0 || a->pin_pp == 1)
        return sim_fail(why, n, "--virtual-stages %lld: interleaving needs a pipeline (valid: with --pp P > 1 or "
                        "--pp auto)", (long long)c->opts.pin_vpp);
    if (a->pin_pp > 1 && !sim_layout_interleaves(&c->model, a->pin_pp, c->opts.pin_vpp, &c->opts))
        return sim_fail(why, n, "--virtual-stages %lld: %lld layers do not split into %lld x %lld chunks as "
                        "Megatron-Core splits them (valid: V with %lld x V dividing %lld, or %lld with the embedding "
                        "and loss counted, --pp-embed-layer --pp-loss-layer)", (long long)c->opts.pin_vpp,
                        (long long)L, (long long)a->pin_pp, (long long)c->opts.pin_vpp, (long long)a->pin_pp,
                        (long long)L, (long long)L + 2);
    return a->pin_pp == ULY_PP_SEARCH ? vstages_search_check(a, c, why, n) : 0;
}

/* The GPU counts against the layout: plan and max-seq run on one count,
 * which must hold it; min-gpus searches up to its bound, under which the
 * pinned layout must fit (rows of "no" without a reason, else). */
static int gpus_check(const sim_args *a, const sim_ctx *c, char *why, size_t n)
{
    if (a->cmd == SIM_CMD_PLAN || a->cmd == SIM_CMD_MAXSEQ) {
        int rc = sim_check_pins_divide(c, c->gpus[0], why, n);
        return rc ? rc : check_gpus_nodes(c, c->gpus[0], why, n);
    }
    if (a->cmd == SIM_CMD_MINGPUS) {
        char desc[120];
        const int64_t prod = pins_gpus(a, desc, sizeof desc);
        if (prod > c->gpus[0])
            return sim_fail(why, n, "%s: the pinned degrees need %lld GPUs, more than the bound --gpus %lld (valid: a "
                            "bound of at least %lld, or smaller degrees)", desc, (long long)prod, (long long)c->gpus[0],
                            (long long)prod);
    }
    return 0;
}

int sim_ctx_resolve(const sim_args *a, sim_ctx *c, char *why, size_t n)
{
    memset(c, 0, sizeof *c);
    c->a = a;
    int rc = presets_load(a, c, why, n);
    if (rc) return rc;
    lists_resolve(a, c);
    cluster_grow(c);
    if ((rc = workload_build(a, c, why, n)) != 0) return rc;
    search_opts(a, c);
    if ((rc = sim_layout_apply(a, &c->w, &c->opts, why, n)) != 0) return rc; /* args_layout.c */
    if ((rc = strategies_pick(a, c, why, n)) != 0) return rc;
    if ((rc = heads_check(a, c, why, n)) != 0) return rc;
    if ((rc = pipeline_check(a, c, why, n)) != 0) return rc;
    return gpus_check(a, c, why, n);
}

int sim_check_pins_divide(const sim_ctx *c, int64_t gpus, char *why, size_t n)
{
    char desc[120];
    const int64_t prod = pins_gpus(c->a, desc, sizeof desc);
    if (prod > 1 && (prod > gpus || gpus % prod != 0))
        return sim_fail(why, n, "%s: the pinned degrees (product %lld) do not divide --gpus %lld (valid: degrees whose product divides %lld)",
                    desc, (long long)prod, (long long)gpus, (long long)gpus);
    return 0;
}

/* ------------------------------------------------------- the summary row */

void sim_summary_start(sim_summary *out, uly_strategy_id s)
{
    memset(out, 0, sizeof *out);
    out->strategy = uly_strategy_get(s);
    out->strategy_id = s;
}

void sim_summary_from_result(sim_summary *s, const uly_result *r)
{
    s->layout = r->layout;
    s->micro_batch = r->micro_batch;
    s->feasible = r->feasible;
    s->n_reasons = r->n_reasons < 0 ? 0 : r->n_reasons > ULY_MAX_REASONS ? ULY_MAX_REASONS : r->n_reasons;
    memcpy(s->reasons, r->reasons, sizeof s->reasons);
    s->comm_fwd = r->comm_fwd_bytes;
    s->comm_bwd = r->comm_bwd_bytes;
    s->comm_recompute = r->comm_recompute_bytes;
    s->zero_bytes = r->zero_bytes;
    s->moe_bytes = r->moe_bytes;
    s->tiers = r->comm_tiers;
    s->mem = r->mem;
    s->time = r->time;
}

uly_status sim_summary_of_layout(const sim_ctx *c, const uly_layout *l, int64_t seq, sim_summary *out,
                                 uly_plan *plan, uly_result *res)
{
    uly_workload w = c->w;
    w.seq = seq;
    out->seq = seq;
    out->layout = *l;
    out->micro_batch = w.micro_batch;
    memset(res, 0, sizeof *res);
    const uly_status st = uly_evaluate(&c->model, &w, &c->cluster, l, plan, res);
    if (st == ULY_OK) {
        sim_summary_from_result(out, res);
        out->status = SIM_ROW_OK;
        return st;
    }
    out->status = st == ULY_EOVERFLOW ? SIM_ROW_OVERFLOW : SIM_ROW_NOLAYOUT;
    char why[160] = "";
    if (uly_layout_check(l, why, sizeof why) != ULY_OK && why[0]) snprintf(out->note, sizeof out->note, "%s", why);
    else snprintf(out->note, sizeof out->note, "%s", uly_status_str(st));
    return st;
}

/* The global batch nearest to w's, above (dir 1) or below (dir -1), within
 * BATCH_HINT_TRIES, for which strategy s has a layout on gpus GPUs whose
 * data-parallel degree and micro-batch divide it: 0 when none; *res that
 * layout's result (scratch). */
#define BATCH_HINT_TRIES 64
static int64_t nearest_batch(const sim_ctx *c, uly_strategy_id s, int64_t gpus, const uly_workload *w, int dir,
                             uly_result *res)
{
    for (int k = 1; k <= BATCH_HINT_TRIES; k++) {
        uly_workload t = *w;
        t.global_batch = w->global_batch + dir * k;
        if (t.global_batch < 1) return 0;
        uly_search_stats stats = {0, 0};
        if (uly_search_best_plan(&c->model, &t, &c->cluster, gpus, s, &c->opts, res, NULL, &stats) == ULY_OK &&
            res->feasible)
            return t.global_batch;
        for (int i = 0; i < res->n_reasons && i < ULY_MAX_REASONS; i++) /* fits but for memory: a batch that runs */
            if (res->reasons[i].code == ULY_R_OUT_OF_MEMORY) return t.global_batch;
    }
    return 0;
}

/* No layout of strategy s divides the global batch: the layout shown (plain
 * data parallelism over every GPU) says "not a multiple of micro-batch x
 * data-parallel = G", which is not the constraint to meet: the strategy's
 * other layouts run other data-parallel degrees. The nearest global batches
 * some layout runs say what would: out->hint. res: scratch (the row's
 * numbers are already in out). */
static void batch_hint(const sim_ctx *c, uly_strategy_id s, int64_t gpus, const uly_workload *w, sim_summary *out,
                       uly_result *res)
{
    int has = 0;
    for (int i = 0; i < out->n_reasons && i < ULY_MAX_REASONS; i++)
        has |= out->reasons[i].code == ULY_R_BATCH_NOT_DIVISIBLE;
    if (!has || w->global_batch <= 0 || !res) return;
    char near[2][120] = {"", ""};
    for (int d = 0; d < 2; d++) {
        const int64_t g = nearest_batch(c, s, gpus, w, d ? 1 : -1, res);
        char ls[64];
        sim_degrees_str(&res->layout, ls, sizeof ls);
        if (g)
            snprintf(near[d], sizeof near[d], "%lld (%s, micro-batch %lld)", (long long)g, ls,
                     (long long)res->micro_batch);
    }
    const char *name = uly_strategy_get(s)->name;
    if (!near[0][0] && !near[1][0])
        snprintf(out->hint, sizeof out->hint, "no %s layout on %lld GPUs runs a global batch within %d of %lld",
                 name, (long long)gpus, BATCH_HINT_TRIES, (long long)w->global_batch);
    else
        snprintf(out->hint, sizeof out->hint,
                 "no %s layout on %lld GPUs runs global batch %lld (a global batch is a multiple of micro-batch x dp, the "
                 "sequences a step runs at once); "
                 "the nearest that one does: %s%s%s", name, (long long)gpus, (long long)w->global_batch, near[0],
                 near[0][0] && near[1][0] ? " or " : "", near[1]);
}

/* ------------------------------------------------------ the best layout */

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

void sim_pure_layout(const sim_ctx *c, uly_strategy_id s, int64_t gpus, uly_layout *l)
{
    const uly_strategy *st = uly_strategy_get(s);
    const uly_search_opts *o = &c->opts;
    int64_t u = o->pin_ulysses ? o->pin_ulysses : 1, r = o->pin_ring ? o->pin_ring : 1, t = o->pin_tp ? o->pin_tp : 1;
    const int64_t pp = o->pin_pp > 1 ? o->pin_pp : 1;
    int64_t prod = u * r * t * pp;
    int64_t rest = prod > 0 && gpus % prod == 0 ? gpus / prod : 1;
    if (st) {
        int fu = st->uses_ulysses && !o->pin_ulysses, fr = st->uses_ring && !o->pin_ring, ft = st->uses_tp && !o->pin_tp;
        if (fu && fr) {
            /* hybrid: Ulysses inside a node, the ring across */
            u = gcd64(rest, c->cluster.gpus_per_node > 0 ? c->cluster.gpus_per_node : 1);
            r = rest / u;
        } else if (fu) u = rest;
        else if (fr) r = rest;
        else if (ft) t = rest;
    }
    prod = u * r * t * pp;
    int64_t dp = prod > 0 && gpus % prod == 0 ? gpus / prod : 1;
    uly_layout_init(l, s, u, r, t, dp);
    l->pp = pp;
    l->vpp = pp > 1 && o->pin_vpp > 1 ? o->pin_vpp : 1;
    if (o->pin_ep > 0) l->ep = o->pin_ep;
    if (o->pin_etp > 0) l->etp = o->pin_etp;
    sim_layout_split(&c->model, o, l); /* args_layout.c */
}

void sim_best_plan(const sim_ctx *c, uly_strategy_id s, int64_t gpus, int64_t seq, sim_summary *out,
                   uly_plan *plan, uly_result *res)
{
    sim_summary_start(out, s);
    out->seq = seq;
    out->gpus = gpus;
    /* the caller's buffers, else scratch */
    uly_plan *own_plan = plan ? NULL : malloc(sizeof *own_plan);
    uly_result *own_res = res ? NULL : malloc(sizeof *own_res);
    if (!plan) plan = own_plan;
    if (!res) res = own_res;
    if (!res || !plan) {
        out->status = SIM_ROW_ERROR;
        snprintf(out->note, sizeof out->note, "out of memory");
        goto done;
    }
    uly_workload w = c->w;
    w.seq = seq;
    memset(res, 0, sizeof *res);
    uly_search_stats stats = {0, 0};
    /* the winner's plan is wanted only when the caller asked for it */
    uly_status st = uly_search_best_plan(&c->model, &w, &c->cluster, gpus, s, &c->opts, res, own_plan ? NULL : plan,
                                         &stats);
    out->evaluated = stats.evaluated;
    if (st == ULY_OK) {
        out->status = SIM_ROW_OK;
        sim_summary_from_result(out, res);
        if (!out->feasible) batch_hint(c, s, gpus, &w, out, res);
        goto done;
    }
    if (st != ULY_EINVAL && st != ULY_EOVERFLOW) {
        const uly_strategy *rs = uly_strategy_get(s);
        out->status = SIM_ROW_ERROR;
        snprintf(out->note, sizeof out->note, "uly_search_best(%s, %lld GPUs, seq %lld): %s", rs ? rs->name : "?",
                 (long long)gpus, (long long)seq, uly_status_str(st));
        goto done;
    }
    /* No layout with valid shapes (or sizes overflow): show why, on the
     * representative layout. */
    uly_layout l;
    sim_pure_layout(c, s, gpus, &l);
    if (uly_layout_gpus(&l) != gpus) {
        out->layout = l;
        out->micro_batch = w.micro_batch;
        out->status = SIM_ROW_NOLAYOUT;
        out->n_reasons = 1;
        out->reasons[0].code = ULY_R_GPUS_MISMATCH;
        out->reasons[0].fatal = 1;
        out->reasons[0].v[0] = (double)uly_layout_gpus(&l);
        out->reasons[0].v[1] = (double)gpus;
        goto done;
    }
    if (sim_summary_of_layout(c, &l, seq, out, plan, res) == ULY_OK) out->feasible = 0;
    /* the search's overflow is the row's too, whatever the layout's own status */
    out->status = st == ULY_EOVERFLOW || out->status == SIM_ROW_OVERFLOW ? SIM_ROW_OVERFLOW : SIM_ROW_NOLAYOUT;
    batch_hint(c, s, gpus, &w, out, res);
done:
    free(own_plan);
    free(own_res);
}

void sim_best(const sim_ctx *c, uly_strategy_id s, int64_t gpus, int64_t seq, sim_summary *out)
{
    sim_best_plan(c, s, gpus, seq, out, NULL, NULL);
}
