/* args_layout.c: the command line of uneven pipelines, recompute's details
 * and activation offload, in ulysim's names and Megatron-LM's (docs/cli.md,
 * docs/model.md "Uneven pipelines", "Recompute modes", "Activation
 * offload"). Kept apart from args.c's table: each option here maps to a
 * field of sim_args.lay, which context.c hands to the layout, the workload
 * and the search.
 *
 *   --pp-first N       --decoder-first-pipeline-num-layers N
 *   --pp-last N        --decoder-last-pipeline-num-layers N
 *   --pp-embed-layer   --account-for-embedding-in-pipeline-split
 *   --pp-loss-layer    --account-for-loss-in-pipeline-split
 *   --pp-layout S      --pipeline-model-parallel-layout S (pp_layout.c)
 *                      --num-virtual-stages-per-pipeline-rank V (--virtual-stages)
 *   --recompute R      --recompute-granularity full|selective (args.c reads --recompute)
 *   --recompute-method --recompute-method uniform|block
 *   --recompute-layers --recompute-num-layers N
 *   --recompute-modules M[,M...]  (Megatron-LM: space-separated, several arguments)
 *   --offload-layers N --cpu-offloading --cpu-offloading-num-layers N */
#include "args.h"

#include <stdlib.h>
#include <string.h>

enum { L_FIRST, L_LAST, L_VSTAGES, L_GRANULARITY, L_METHOD, L_RLAYERS, L_MODULES, L_OFFLOAD, L_PLAYOUT, L_COUNT };
/* valued options: [ulysim name, Megatron-LM name] (NULL: none) */
static const char *const lay_valued[L_COUNT][2] = {
    [L_FIRST] = {"--pp-first", "--decoder-first-pipeline-num-layers"},
    [L_LAST] = {"--pp-last", "--decoder-last-pipeline-num-layers"},
    [L_VSTAGES] = {NULL, "--num-virtual-stages-per-pipeline-rank"},
    [L_GRANULARITY] = {NULL, "--recompute-granularity"},
    [L_METHOD] = {"--recompute-method", NULL},
    [L_RLAYERS] = {"--recompute-layers", "--recompute-num-layers"},
    [L_MODULES] = {"--recompute-modules", NULL},
    [L_OFFLOAD] = {"--offload-layers", "--cpu-offloading-num-layers"},
    [L_PLAYOUT] = {"--pp-layout", "--pipeline-model-parallel-layout"},
};
/* switches: [ulysim name, Megatron-LM name] */
enum { S_EMBED, S_LOSS, S_CPU_OFFLOAD, S_ACTIVATIONS, S_COUNT };
static const char *const lay_switches[S_COUNT][2] = {
    [S_EMBED] = {"--pp-embed-layer", "--account-for-embedding-in-pipeline-split"},
    [S_LOSS] = {"--pp-loss-layer", "--account-for-loss-in-pipeline-split"},
    [S_CPU_OFFLOAD] = {NULL, "--cpu-offloading"},
    /* Megatron-LM's older spelling of --recompute-granularity selective
     * (arguments.py: "if args.recompute_activations: args.recompute_granularity = 'selective'") */
    [S_ACTIVATIONS] = {NULL, "--recompute-activations"},
};

static int find(const char *const (*tab)[2], int count, const char *name)
{
    for (int k = 0; k < count; k++)
        for (int f = 0; f < 2; f++)
            if (tab[k][f] && !strcmp(tab[k][f], name)) return k;
    return -1;
}

int sim_layout_takes_value(const char *name) { return find(lay_valued, L_COUNT, name) >= 0; }

int sim_layout_known(const char *const **names, int *n)
{
    static const char *all[2 * (L_COUNT + S_COUNT)];
    int k = 0;
    for (int i = 0; i < L_COUNT; i++)
        for (int f = 0; f < 2; f++)
            if (lay_valued[i][f]) all[k++] = lay_valued[i][f];
    for (int i = 0; i < S_COUNT; i++)
        for (int f = 0; f < 2; f++)
            if (lay_switches[i][f]) all[k++] = lay_switches[i][f];
    *names = all;
    *n = k;
    return k;
}

/* A count 0..max (layers), as typed */
static int layers_parse(const char *flag, const char *v, int64_t lo, int64_t *out, char *why, size_t n)
{
    char qb[80], *end = NULL;
    const long long x = strtoll(v, &end, 10);
    if (!v[0] || !end || *end || x < lo || x > (1 << 20))
        return sim_fail(why, n, "%s %s: not a layer count (valid: a whole number %lld..%d)", flag,
                        text_quote(v, qb, sizeof qb), (long long)lo, 1 << 20);
    *out = x;
    return 0;
}

/* One of a vocabulary's names, or the valid ones in the message */
static int choice(const char *flag, const char *v, const char *(*name_of)(int), int count, int *out, char *why,
                  size_t n)
{
    char qb[80], valid[200] = "";
    for (int i = 0; i < count; i++) {
        if (!strcmp(v, name_of(i))) {
            *out = i;
            return 0;
        }
        sim_join(valid, sizeof valid, ", ", name_of(i));
    }
    return sim_fail(why, n, "%s %s: unknown (valid: %s)", flag, text_quote(v, qb, sizeof qb), valid);
}

static const char *method_name(int i) { return uly_recompute_method_name((uly_recompute_method)i); }
static const char *module_name(int i) { return uly_recompute_module_name((uly_recompute_module)i); }

/* --recompute-modules: names joined by commas, or (Megatron-LM's nargs='*')
 * in the arguments that follow up to the next option */
static int modules_read(sim_args *a, int argc, char **argv, int *i, const char *name, const char *val, char *why,
                        size_t n)
{
    char one[64];
    int got = 0;
    for (;;) {
        const char *v = val;
        if (!v) {
            if (*i + 1 >= argc || (argv[*i + 1][0] == '-' && argv[*i + 1][1] == '-')) break;
            v = argv[++*i];
        }
        while (*v) {
            const size_t l = strcspn(v, ",");
            snprintf(one, sizeof one, "%.*s", (int)(l < sizeof one ? l : sizeof one - 1), v);
            int k = 0;
            if (choice(name, one, module_name, ULY_RMOD_COUNT, &k, why, n)) return SIM_EXIT_USAGE;
            if (!((1u << k) & ULY_RMOD_DENSE))
                return sim_fail(why, n, "%s %s: a module of MoE or MLA models; ulysim prices dense ones (valid: "
                                "core_attn, layernorm, mlp)", name, one);
            a->lay.recompute_modules |= 1u << k;
            got++;
            v += l + (v[l] == ',');
        }
        if (val) break;
    }
    /* Megatron-LM's default list, core_attn, when none is named */
    if (!got) a->lay.recompute_modules |= 1u << ULY_RMOD_CORE_ATTN;
    return 0;
}

int sim_layout_option(sim_args *a, int argc, char **argv, int *i, const char *name, const char *val, char *why,
                      size_t n)
{
    char qb[80];
    const int sw = find(lay_switches, S_COUNT, name);
    if (sw >= 0) {
        if (val) return sim_fail(why, n, "%s takes no value (got %s)", name, text_quote(val, qb, sizeof qb));
        if (sw == S_EMBED) {
            a->lay.pp_embed = 1;
        } else if (sw == S_LOSS) {
            a->lay.pp_loss = 1;
        } else if (sw == S_ACTIVATIONS) {
            a->recompute = ULY_RECOMPUTE_SELECTIVE;
            a->lay.granularity_set = 1;
        } else {
            a->lay.cpu_offloading = 1;
        }
        if (!a->plan_flag) a->plan_flag = name;
        return 0;
    }
    const int k = find(lay_valued, L_COUNT, name);
    if (k < 0) return -1;
    if (!a->plan_flag) a->plan_flag = name;
    if (k == L_MODULES) return modules_read(a, argc, argv, i, name, val, why, n);
    if (!val) {
        if (*i + 1 >= argc) return sim_fail(why, n, "%s needs a value (see ulysim --help)", name);
        val = argv[++*i];
    }
    int64_t x = 0;
    int c = 0;
    switch (k) {
    case L_FIRST:
    case L_LAST:
        if (layers_parse(name, val, 1, &x, why, n)) return SIM_EXIT_USAGE;
        *(k == L_FIRST ? &a->lay.pp_first : &a->lay.pp_last) = x;
        return 0;
    case L_VSTAGES:
        if (layers_parse(name, val, 1, &x, why, n)) return SIM_EXIT_USAGE;
        if (a->pin_vpp && a->pin_vpp != x)
            return sim_fail(why, n, "%s %lld disagrees with --virtual-stages %lld (valid: give one of them, or the same "
                            "value)", name, (long long)x, (long long)a->pin_vpp);
        a->pin_vpp = x;
        return 0;
    case L_GRANULARITY:
        if (!strcmp(val, "full")) a->recompute = ULY_RECOMPUTE_FULL;
        else if (!strcmp(val, "selective")) a->recompute = ULY_RECOMPUTE_SELECTIVE;
        else return sim_fail(why, n, "%s %s: unknown (valid: full, selective)", name, text_quote(val, qb, sizeof qb));
        a->lay.granularity_set = 1;
        return 0;
    case L_METHOD:
        if (choice(name, val, method_name, ULY_RMETHOD_COUNT, &c, why, n)) return SIM_EXIT_USAGE;
        a->lay.recompute_method = c;
        return 0;
    case L_RLAYERS:
        if (layers_parse(name, val, 1, &x, why, n)) return SIM_EXIT_USAGE;
        a->lay.recompute_layers = x;
        return 0;
    case L_PLAYOUT: /* read once --pp is known (sim_layout_finish) */
        if (a->lay.pp_layout) {
            char q2[80];
            return sim_fail(why, n, "%s given twice (%s, then %s; valid: one layout)", name,
                            text_quote(a->lay.pp_layout, qb, sizeof qb), text_quote(val, q2, sizeof q2));
        }
        a->lay.pp_layout = val;
        return 0;
    default: /* L_OFFLOAD */
        if (layers_parse(name, val, 0, &x, why, n)) return SIM_EXIT_USAGE;
        a->lay.offload_layers = x;
        return 0;
    }
}

/* --pp-layout over the pinned stages: the split it makes (the first and
 * last stages' layers, the most of a middle one) and its virtual stages */
static int layout_read(sim_args *a, char *why, size_t n)
{
    sim_layout_args *y = &a->lay;
    if (y->pp_first || y->pp_last || y->pp_embed || y->pp_loss)
        return sim_fail(why, n, "--pp-layout with --pp-first/--pp-last/--pp-embed-layer/--pp-loss-layer: a layout "
                        "places every layer itself, and Megatron-Core takes it alone (valid: one of them)");
    if (a->pin_pp < 2)
        return sim_fail(why, n, "--pp-layout: needs the pipeline's stages pinned (valid: with --pp P > 1, "
                        "Megatron-LM's --pipeline-model-parallel-size)");
    sim_pp_layout pl;
    if (sim_pp_layout_parse("--pp-layout", y->pp_layout, a->pin_pp, &pl, why, n)) return SIM_EXIT_USAGE;
    if (a->pin_vpp && a->pin_vpp != pl.vpp)
        return sim_fail(why, n, "--pp-layout: %lld chunks over %lld stages are %lld virtual stages, not --virtual-stages "
                        "%lld (valid: give one of them, or values that agree)", (long long)pl.chunks,
                        (long long)a->pin_pp, (long long)pl.vpp, (long long)a->pin_vpp);
    if (a->pin_pp == 2 && pl.vpp > 1 && (pl.first % pl.vpp || pl.last % pl.vpp))
        return sim_fail(why, n, "--pp-layout over 2 stages of %lld and %lld layers in %lld chunks each: ulysim prices a "
                        "layout's uneven chunks on middle stages only (valid: --pp 2 with whole chunks, or more stages)",
                        (long long)pl.first, (long long)pl.last, (long long)pl.vpp);
    a->pin_vpp = pl.vpp;
    y->pp_first = pl.first, y->pp_last = pl.last;
    y->pp_mid_most = a->pin_pp > 2 ? pl.mid_most : 0;
    y->layout_layers = pl.layers;
    return 0;
}

int sim_layout_finish(sim_args *a, char *why, size_t n)
{
    sim_layout_args *y = &a->lay;
    /* Megatron-LM: --cpu-offloading-num-layers counts only with --cpu-offloading */
    if (y->cpu_offloading && !y->offload_layers)
        return sim_fail(why, n, "--cpu-offloading: how many layers? (valid: with --cpu-offloading-num-layers N, or "
                        "ulysim's --offload-layers N)");
    if (y->offload_layers && a->recompute != ULY_RECOMPUTE_NONE)
        return sim_fail(why, n, "--offload-layers %lld: activation offload runs without recompute, as Megatron-LM's "
                        "--cpu-offloading (valid: with --recompute none)", (long long)y->offload_layers);
    if (y->recompute_method && a->recompute != ULY_RECOMPUTE_FULL)
        return sim_fail(why, n, "--recompute-method %s: a method of full recompute (valid: with --recompute full)",
                        uly_recompute_method_name((uly_recompute_method)y->recompute_method));
    if (y->recompute_method && !y->recompute_layers)
        return sim_fail(why, n, "--recompute-method %s: how many layers? (valid: with --recompute-layers N, "
                        "Megatron-LM's --recompute-num-layers)",
                        uly_recompute_method_name((uly_recompute_method)y->recompute_method));
    if (y->recompute_layers && !y->recompute_method) {
        /* Megatron-LM requires a method with full recompute; ulysim's
         * plain full is every layer, so layers alone mean nothing */
        return sim_fail(why, n, "--recompute-layers %lld: needs --recompute-method uniform or block",
                        (long long)y->recompute_layers);
    }
    if (y->recompute_modules && a->recompute != ULY_RECOMPUTE_SELECTIVE)
        return sim_fail(why, n, "--recompute-modules: the modules of selective recompute (valid: with --recompute "
                        "selective, Megatron-LM's --recompute-granularity selective)");
    if (y->pp_layout && layout_read(a, why, n)) return SIM_EXIT_USAGE;
    if ((y->pp_first || y->pp_last) && (y->pp_embed || y->pp_loss))
        return sim_fail(why, n, "--pp-first/--pp-last with --pp-embed-layer/--pp-loss-layer: Megatron-Core takes one "
                        "or the other (valid: one of the two ways)");
    if ((y->pp_first || y->pp_last || y->pp_embed || y->pp_loss) && !(a->pin_pp > 1 || a->pin_pp == ULY_PP_SEARCH))
        return sim_fail(why, n, "an uneven pipeline split needs a pipeline (valid: with --pp P > 1 or --pp auto)");
    return 0;
}

/* The split, the recompute details and the offload into the request's
 * workload and search (context.c, once both are built): 0, or 2 when the
 * library refuses the workload */
int sim_layout_apply(const sim_args *a, uly_workload *w, uly_search_opts *o, char *why, size_t n)
{
    const sim_layout_args *y = &a->lay;
    w->recompute_modules = y->recompute_modules;
    w->recompute_method = (uly_recompute_method)y->recompute_method;
    w->recompute_layers = y->recompute_layers;
    w->offload_layers = y->offload_layers;
    o->pin_split = y->pp_first || y->pp_last || y->pp_embed || y->pp_loss;
    o->split_first = (int32_t)y->pp_first, o->split_last = (int32_t)y->pp_last;
    o->split_mid_most = (int32_t)y->pp_mid_most;
    o->split_embed = (uint8_t)y->pp_embed, o->split_loss = (uint8_t)y->pp_loss;
    char lib[256];
    if (uly_workload_check(w, lib, sizeof lib) != ULY_OK) return sim_fail(why, n, "workload: %s", lib);
    return 0;
}

/* The pinned split into layout l */
static void split_pinned(const uly_search_opts *o, uly_layout *l)
{
    l->pp_first = o->split_first, l->pp_last = o->split_last, l->pp_mid_most = o->split_mid_most;
    l->pp_embed = o->split_embed, l->pp_loss = o->split_loss;
}

/* Whether pp stages x V virtual stages of the model's layers have a split
 * Megatron-Core accepts: the pinned one, else the even one or one with the
 * embedding and / or loss counted as a layer (as the search tries them) */
int sim_layout_interleaves(const uly_model *m, int64_t pp, int64_t V, const uly_search_opts *o)
{
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 1, 1, 1, 1);
    l.pp = pp, l.vpp = V;
    int64_t n[3];
    if (o->pin_split) {
        split_pinned(o, &l);
        return uly_pp_stage_layers(m, &l, n, NULL, 0) == ULY_OK;
    }
    for (int f = 0; f < 4; f++) {
        l.pp_embed = (uint8_t)(f & 1), l.pp_loss = (uint8_t)(f >> 1);
        if (uly_pp_stage_layers(m, &l, n, NULL, 0) == ULY_OK && n[0] > 0 && n[2] > 0) return 1;
    }
    return 0;
}

/* The split a pinned layout gets: the pinned one, else the first the
 * search would try that Megatron-Core accepts (the even split first) */
void sim_layout_split(const uly_model *m, const uly_search_opts *o, uly_layout *l)
{
    int64_t n[3];
    if (l->pp <= 1) return;
    if (o->pin_split) {
        split_pinned(o, l);
        return;
    }
    for (int f = 0; f < 4; f++) {
        l->pp_embed = (uint8_t)(f & 1), l->pp_loss = (uint8_t)(f >> 1);
        if (uly_pp_stage_layers(m, l, n, NULL, 0) == ULY_OK && n[0] > 0 && n[2] > 0) return;
    }
    l->pp_embed = l->pp_loss = 0; /* none accepted: the even split, with its reason */
}

void sim_layout_help(FILE *f)
{
    fprintf(f,
"\n"
"uneven pipelines, recompute modes, activation offload (docs/model.md; Megatron-LM's\n"
"names in brackets are read the same):\n"
"  --pp-first N         layers of the first pipeline stage, the rest even over the\n"
"                       others [--decoder-first-pipeline-num-layers]\n"
"  --pp-last N          layers of the last stage [--decoder-last-pipeline-num-layers]\n"
"  --pp-embed-layer     the embedding counted as a layer of an even split: the first\n"
"                       stage one layer short [--account-for-embedding-in-pipeline-split]\n"
"  --pp-loss-layer      the loss likewise, the last stage [--account-for-loss-in-pipeline-split]\n"
"                       (without these, --pp with --virtual-stages takes the first split\n"
"                       Megatron-Core accepts; --pp auto tries each)\n"
"                       [--num-virtual-stages-per-pipeline-rank V: --virtual-stages V]\n"
"  --pp-layout S        every chunk's layers [--pipeline-model-parallel-layout S; default\n"
"                       none]: Megatron-Core's layout string, E, t (a layer), L, '|' between\n"
"                       chunks, (X)*n and x*n repeats; chunk c on rank c mod --pp, V = chunks\n"
"                       / pp; e.g. \"Et*2|(t*2|)*34,t*3|(t*2|)*3,tL\": 80 layers, --pp 8, V 5\n"
"  --recompute ops|ops-half|attn-skip  [also; default full] torchtitan's op-level\n"
"                       checkpointing (matmul and attention outputs saved; ops-half: every\n"
"                       other matmul recomputed), DistFlashAttn's checkpoint at attention's\n"
"                       output (no attention forward again) [--recompute-granularity\n"
"                       full|selective]\n"
"  --recompute-modules M[,M]  selective: core_attn (default), layernorm, mlp (Megatron-LM\n"
"                       takes them space-separated too)\n"
"  --recompute-method every|uniform|block  [default every] full: chunks of\n"
"                       --recompute-layers layers checkpointed at their input (uniform),\n"
"                       or only the first --recompute-layers of each stage recomputed (block)\n"
"  --recompute-layers N the method's layers [--recompute-num-layers]\n"
"  --offload-layers N   [layers; default 0] activation offload to host memory over the\n"
"                       GPU's host link (the preset's gpu.host_link_GBps), with --recompute none\n"
"                       [--cpu-offloading --cpu-offloading-num-layers N]\n");
}
