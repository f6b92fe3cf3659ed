/* args_fp8.c: FP8 training's flags on the planning commands' command line
 * (docs/cli.md, "FP8 training"): --fp8-recipe delayed|tensorwise|blockwise|
 * mxfp8, --fp8-param-gather, --fp8-attention, --first-last-layers-bf16 with
 * --num-layers-at-start-in-bf16 / --num-layers-at-end-in-bf16, and
 * --fp8-amax-history-len, under Megatron-LM's names where it has them;
 * Megatron-LM's --fp8-format hybrid|e4m3 turns FP8 training on as
 * --dtype fp8 does (the two formats run at one tensor-core rate). Kept apart
 * from args.c, which reads the other flags. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

enum { F_RECIPE, F_FORMAT, F_PARAM_GATHER, F_ATTN, F_ATTN_MEGATRON, F_EDGES, F_START, F_END, F_AMAX, F_COUNT };
static const char *const fp8_flags[F_COUNT] = {
    "--fp8-recipe", "--fp8-format", "--fp8-param-gather", "--fp8-attention", "--fp8-dot-product-attention",
    "--first-last-layers-bf16", "--num-layers-at-start-in-bf16", "--num-layers-at-end-in-bf16",
    "--fp8-amax-history-len",
};
/* which take a value */
static const unsigned char fp8_valued[F_COUNT] = {[F_RECIPE] = 1, [F_FORMAT] = 1, [F_START] = 1, [F_END] = 1, [F_AMAX] = 1};

static int flag_index(const char *name)
{
    for (int k = 0; k < F_COUNT; k++)
        if (strcmp(name, fp8_flags[k]) == 0) return k;
    return -1;
}

int sim_args_fp8_is(const char *name) { return flag_index(name) >= 0; }

/* a count in [0, hi] */
static int read_count(const char *name, const char *val, int32_t hi, int32_t *out, char *why, size_t n)
{
    char *end = NULL, qb[80];
    const long v = strtol(val, &end, 10);
    if (!*val || *end || v < 0 || v > hi)
        return sim_fail(why, n, "%s %s: not a count (valid: 0..%d)", name, text_quote(val, qb, sizeof qb), (int)hi);
    *out = (int32_t)v;
    return 0;
}

int sim_args_fp8_read(sim_args *a, int argc, char **argv, int *i, const char *name, const char *val, char *why,
                      size_t n)
{
    const int k = flag_index(name);
    char qb[80];
    sim_fp8_args *f = &a->fp8;
    if (k < 0) return sim_fail(why, n, "unknown option %s (valid: see ulysim --help)", text_quote(name, qb, sizeof qb));
    if (!fp8_valued[k] && val)
        return sim_fail(why, n, "%s takes no value (got %s; valid: %s)", name, text_quote(val, qb, sizeof qb), name);
    if (fp8_valued[k] && !val) {
        if (*i + 1 >= argc || (argv[*i + 1][0] == '-' && argv[*i + 1][1] == '-'))
            return sim_fail(why, n, "%s needs a value (see ulysim --help)", name);
        val = argv[++*i];
    }
    if (!f->first) f->first = fp8_flags[k];
    if (!a->plan_flag) a->plan_flag = fp8_flags[k];
    switch (k) {
    case F_RECIPE: {
        const uly_fp8_recipe r = uly_fp8_recipe_find(val);
        if (r == ULY_FP8_RECIPE_COUNT)
            return sim_fail(why, n, "%s %s: not a recipe (valid: delayed, tensorwise, blockwise or mxfp8)", name,
                            text_quote(val, qb, sizeof qb));
        f->recipe = r, f->recipe_set = 1;
        return 0;
    }
    case F_FORMAT:
        if (strcmp(val, "hybrid") != 0 && strcmp(val, "e4m3") != 0)
            return sim_fail(why, n, "%s %s: not an FP8 format (valid: hybrid or e4m3)", name,
                            text_quote(val, qb, sizeof qb));
        f->format = val;
        return 0;
    case F_PARAM_GATHER: f->param_gather = 1; return 0;
    case F_ATTN: case F_ATTN_MEGATRON: f->attention = 1; return 0;
    case F_EDGES: f->bf16_edges = 1; return 0;
    case F_START: f->start_set = 1; return read_count(name, val, 1 << 20, &f->start, why, n);
    case F_END: f->end_set = 1; return read_count(name, val, 1 << 20, &f->end, why, n);
    default: return read_count(name, val, 1 << 20, &f->amax_history, why, n);
    }
}

int sim_args_fp8_finish(sim_args *a, char *why, size_t n)
{
    sim_fp8_args *f = &a->fp8;
    if (f->format) a->dtype = ULY_FP8;
    if (f->first && a->dtype != ULY_FP8)
        return sim_fail(why, n, "%s: an FP8 training flag, and --dtype is %s (valid: with --dtype fp8 or Megatron-LM's "
                        "--fp8-format hybrid|e4m3)", f->first, uly_dtype_name(a->dtype));
    return 0;
}

void sim_args_fp8_workload(const sim_args *a, uly_workload *w)
{
    const sim_fp8_args *f = &a->fp8;
    w->fp8_recipe = f->recipe;
    w->fp8_param_gather = f->param_gather;
    w->fp8_attention = f->attention;
    /* Megatron-LM: --first-last-layers-bf16 keeps 1 and 1 unless the counts say */
    w->fp8_bf16_start = f->bf16_edges ? (f->start_set ? f->start : 1) : 0;
    w->fp8_bf16_end = f->bf16_edges ? (f->end_set ? f->end : 1) : 0;
    w->fp8_amax_history = f->amax_history;
}

int sim_args_fp8_check(const sim_args *a, const uly_cluster *c, char *why, size_t n)
{
    if (a->dtype != ULY_FP8) return 0;
    const uly_gpu *g = &c->gpu;
    if (!(g->peak_flops[ULY_FP8] > 0) || g->sm_count <= 0)
        return sim_fail(why, n, "--dtype fp8: cluster %s's %s has no FP8 tensor cores in its preset (gpu.peak_tflops.fp8%s; "
                        "valid: a Hopper or Blackwell cluster such as dgx-h100, dgx-h200, dgx-b200, gb200-nvl72)",
                        c->name, g->name, g->sm_count <= 0 ? " and gpu.sm_count" : "");
    if (a->fp8.recipe == ULY_FP8_MXFP8 && strcmp(g->arch, "blackwell") != 0)
        return sim_fail(why, n, "--fp8-recipe mxfp8: MXFP8 runs on Blackwell's tensor cores, and cluster %s's %s is %s "
                        "(valid: delayed, tensorwise or blockwise here)", c->name, g->name,
                        g->arch[0] ? g->arch : "of unknown architecture (gpu.arch)");
    return 0;
}

void sim_args_fp8_help(FILE *f)
{
    fprintf(f,
"\n"
"FP8 training (--dtype fp8; Hopper and Blackwell presets): the linear layers' GEMMs\n"
"(qkv_proj, out_proj, mlp_up, mlp_down, forward and backward) at the FP8 dense peak with\n"
"their casts; attention, norms, softmax, loss, embedding and output layer in bf16, and\n"
"activations, gradients and their communication too. mfu_pct is against the bf16 dense\n"
"peak (as NVIDIA's performance tables report model TFLOP/s); the note below the\n"
"recommendation and JSON's mfu_fp8 give it against the FP8 peak.\n"
"  --fp8-recipe R       delayed|tensorwise|blockwise|mxfp8 scaling (TransformerEngine's\n"
"                       recipes, Megatron-LM's names) [default delayed]; mxfp8: Blackwell\n"
"  --fp8-format F       Megatron-LM's: hybrid|e4m3, turns FP8 training on as --dtype fp8\n"
"                       [default: not given]; both formats run at one rate\n"
"  --fp8-param-gather   weights kept and gathered in FP8 (distributed optimizer, ZeRO-3):\n"
"                       the linear weights' gather bytes halve [default: off]\n"
"  --fp8-attention      attention in FP8 too (--fp8-dot-product-attention) [default: off]\n"
"  --first-last-layers-bf16  the first and last transformer layers in bf16 [default: off,\n"
"                       as Megatron-LM]; --num-layers-at-start-in-bf16 N and\n"
"                       --num-layers-at-end-in-bf16 N [layers; default 1 each]\n"
"  --fp8-amax-history-len N  delayed scaling's amax history [entries; default 1, as\n"
"                       Megatron-LM; TransformerEngine's own default is 1024]\n");
}

int sim_attn_kernel_pick(const sim_args *a, const uly_cluster *c, uly_workload *w, char *why, size_t n)
{
    const char *arch = c->gpu.arch;
    const int new_nvidia = strcmp(arch, "hopper") == 0 || strcmp(arch, "blackwell") == 0;
    if (a->attn_kernel == ULY_AK_CUDNN && a->attn_kernel_set && !new_nvidia)
        return sim_fail(why, n, "--attn-kernel cudnn: its published rates are cuDNN's on Hopper (H200), and cluster %s's "
                        "%s is %s (valid: flash2, triton or sdpa here)", c->name, c->gpu.name,
                        arch[0] ? arch : "of unknown architecture (gpu.arch)");
    if (!a->attn_kernel_set && a->framework == ULY_FW_MEGATRON && a->flash && new_nvidia) w->attn_kernel = ULY_AK_CUDNN;
    return 0;
}
