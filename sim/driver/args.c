/* args.c: parsing the ulysim command line (context.c resolves what it
 * names); its --help is args_help.c's, the messages of bad input
 * args_msg.c's. */
#include "args.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "out_file.h"

/* The planning commands, in sim_cmd order. */
static const char *const cmd_names[] = {"plan", "max-seq", "min-gpus", "sweep", "presets"};
#define N_CMDS ((int)(sizeof cmd_names / sizeof cmd_names[0]))

const char *sim_cmd_name(sim_cmd c)
{
    return (int)c >= 0 && (int)c < N_CMDS ? cmd_names[c] : "?";
}

static int parse_choice(const char *flag, const char *v, const char *const *names, int count, int *out,
                        char *why, size_t n)
{
    char qb[80], valid[200] = "";
    for (int i = 0; i < count; i++) {
        if (strcmp(v, names[i]) == 0) { *out = i; return 0; }
        sim_join(valid, sizeof valid, "|", names[i]);
    }
    return sim_fail(why, n, "%s %s: unknown value (valid: %s)", flag, text_quote(v, qb, sizeof qb), valid);
}

static void strategy_names(char *buf, size_t n)
{
    buf[0] = 0;
    for (int i = 0; i < ULY_STRAT_COUNT; i++) {
        const uly_strategy *s = uly_strategy_get((uly_strategy_id)i);
        if (s) sim_join(buf, n, ", ", s->name);
    }
}

/* Whether the comma-separated list v names strategy id more than once. */
static int named_twice(const char *v, uly_strategy_id id)
{
    char name[64];
    const char *p = v;
    int count = 0;
    for (;;) {
        const size_t k = strcspn(p, ",");
        if (k < sizeof name) {
            memcpy(name, p, k);
            name[k] = 0;
            const uly_strategy *s = uly_strategy_find(name);
            if (s && s->id == id && ++count > 1) return 1;
        }
        if (!p[k]) return 0;
        p += k + 1;
    }
}

static int add_strategies(sim_args *a, const char *v, char *why, size_t n)
{
    char qb[80], names[200];
    size_t len = strlen(v);
    char *copy = malloc(len + 1);
    if (!copy) return sim_fail(why, n, "out of memory");
    memcpy(copy, v, len + 1);
    int rc = 0;
    char *p = copy;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = 0;
        if (strcmp(p, "all") == 0) {
            a->strategies_all = 1;
            for (int i = 0; i < ULY_STRAT_COUNT; i++) {
                int seen = 0;
                for (int j = 0; j < a->n_strategies; j++) seen |= a->strategies[j] == (uly_strategy_id)i;
                if (!seen && uly_strategy_get((uly_strategy_id)i)) a->strategies[a->n_strategies++] = (uly_strategy_id)i;
            }
        } else {
            const uly_strategy *s = uly_strategy_find(p);
            if (!s) {
                strategy_names(names, sizeof names);
                rc = sim_fail(why, n, "--strategy %s: unknown strategy (valid: %s, all)", text_quote(p, qb, sizeof qb), names);
                break;
            }
            int seen = 0;
            for (int j = 0; j < a->n_strategies; j++) seen |= a->strategies[j] == s->id;
            /* named twice: refused as sweep refuses a repeated value, not
             * dropped in silence ("all" and a name are a union) */
            if (seen && named_twice(v, s->id)) {
                rc = sim_fail(why, n, "--strategy %s: %s is listed twice (valid: each strategy once)",
                              text_quote(v, qb, sizeof qb), s->name);
                break;
            }
            if (!seen && a->n_strategies < ULY_STRAT_COUNT) a->strategies[a->n_strategies++] = s->id;
        }
        if (!comma) break;
        p = comma + 1;
    }
    free(copy);
    return rc;
}

static const char *const fmt_names[] = {"table", "json", "csv"};
/* the choices of the vocabularies, from ulysim.h's lists */
static const char *const dtype_names[] = {ULY_DTYPES(ULY_X_NAME)};
static const char *const recompute_names[] = {ULY_RECOMPUTES(ULY_X_NAME)};
static const char *const zero_names[] = {"0", "1", "2", "3"};
static const char *const split_names[] = {ULY_SPLITS(ULY_X_NAME)};
static const char *const framework_names[] = {ULY_FRAMEWORKS(ULY_X_NAME)};
static const char *const attn_kernel_names[] = {ULY_ATTN_KERNELS(ULY_X_NAME)};
/* --cross-entropy-fusion-impl names the fused kernels: the vocabulary's
 * names after ULY_CE_UNFUSED (the default, without --cross-entropy-loss-fusion) */
static const char *const ce_impl_names[] = {ULY_CE_IMPLS(ULY_X_NAME)};
static const char *const transformer_impl_names[] = {ULY_TRANSFORMER_IMPLS(ULY_X_NAME)};

/* Options that take a value, in the parse switch's order. */
enum {
    O_GPUS, O_SEQ, O_MODEL, O_CLUSTER, O_STRATEGY, O_ULYSSES, O_RING, O_TP, O_PP, O_BATCH, O_GLOBAL_BATCH, O_DTYPE,
    O_RECOMPUTE, O_ZERO, O_SPLIT, O_FORMAT, O_VSTAGES, O_FRAMEWORK, O_ATTN_DENSITY, O_FFN_CHUNKS, O_LOSS_CHUNKS,
    O_CP, O_CP_COMM, O_HCP, O_LAYERS_PER_VSTAGE, O_ZERO_PREFETCH, O_NIC_BW, O_INTRA_BW, O_GPUS_PER_NODE, O_OVERSUB,
    O_ATTN_KERNEL, O_TIMELINE, O_STEP_OVERHEAD, O_MEM_HEADROOM, O_CE_IMPL, O_TRANSFORMER_IMPL,
    O_COUNT
};
static const char *const valued[O_COUNT] = {
    "--gpus", "--seq", "--model", "--cluster", "--strategy", "--ulysses", "--ring", "--tp", "--pp", "--batch",
    "--global-batch", "--dtype", "--recompute", "--zero", "--split", "--format", "--virtual-stages", "--framework",
    "--attn-density", "--ffn-chunks", "--loss-chunks", "--context-parallel-size", "--cp-comm-type",
    "--hierarchical-context-parallel-sizes", "--num-layers-per-virtual-pipeline-stage", "--zero-prefetch",
    "--nic-bw", "--intra-bw", "--gpus-per-node", "--oversub", "--attn-kernel", "--timeline", "--step-overhead-ms",
    "--mem-headroom", "--cross-entropy-fusion-impl", "--transformer-impl",
};

int sim_args_takes_value(const char *name)
{
    const sim_mlm_name *e = sim_mlm_find(name); /* Megatron-LM's own, args_megatron.c */
    if ((e && e->values != '0' && e->values != '?') || !strcmp(name, "--args-file")) return 1;
    const char *canon = sim_alias_canonical(name);
    for (int k = 0; k < O_COUNT; k++)
        if (strcmp(canon, valued[k]) == 0) return 1;
    return sim_layout_takes_value(name) || sim_moe_takes_value(name);
}

/* The two values of an option given both as ulysim's flag and as
 * Megatron-LM's name for it (both checked already): the same value however
 * spelt (128K and 131072, a list in the same order), or not. */
static int alias_values_agree(int which, const char *v0, const char *v1)
{
    if (which == O_SEQ) {
        static int64_t l0[SIM_LIST_MAX], l1[SIM_LIST_MAX];
        int n0 = 0, n1 = 0;
        char why[256];
        if (sim_parse_list("", v0, 1, INT64_MAX, l0, &n0, why, sizeof why) ||
            sim_parse_list("", v1, 1, INT64_MAX, l1, &n1, why, sizeof why))
            return 0;
        return n0 == n1 && memcmp(l0, l1, (size_t)n0 * sizeof l0[0]) == 0;
    }
    const int auto0 = which == O_PP && !strcmp(v0, "auto"), auto1 = which == O_PP && !strcmp(v1, "auto");
    if (auto0 || auto1) return auto0 && auto1;
    int64_t x0 = 0, x1 = 0;
    return uly_size_parse(v0, &x0, NULL, 0) == ULY_OK && uly_size_parse(v1, &x1, NULL, 0) == ULY_OK && x0 == x1;
}

/* The switches: the int field at off set to v. */
static const struct {
    const char *flag;
    size_t off;
    int v;
} switches[] = {
    {"--causal", offsetof(sim_args, causal), 1}, {"--no-causal", offsetof(sim_args, causal), 0},
    {"--flash", offsetof(sim_args, flash), 1}, {"--no-flash", offsetof(sim_args, flash), 0},
    {"--no-progress", offsetof(sim_args, progress), 0}, {"--progress", offsetof(sim_args, progress), 1},
    {"--require-fit", offsetof(sim_args, require_fit), 1},
    {"--help", offsetof(sim_args, help), 1}, {"-h", offsetof(sim_args, help), 1},
    {"--version", offsetof(sim_args, version), 1}, {"-V", offsetof(sim_args, version), 1},
    {"--tp-comm-overlap", offsetof(sim_args, tp_comm_overlap), 1},
    {"--no-tp-comm-overlap", offsetof(sim_args, tp_comm_overlap), 0},
    {"--overlap-grad-reduce", offsetof(sim_args, overlap_grad_reduce), 1},
    {"--no-overlap-grad-reduce", offsetof(sim_args, overlap_grad_reduce), -1},
    {"--sequence-parallel", offsetof(sim_args, sequence_parallel), 1},
    {"--overlap-param-gather", offsetof(sim_args, overlap_param_gather), 1},
    {"--no-overlap-param-gather", offsetof(sim_args, overlap_param_gather), 0},
    /* Megatron-LM's names for where its main gradients live */
    {"--accumulate-allreduce-grads-in-fp32", offsetof(sim_args, grad_reduce_fp32), 1},
    {"--grad-reduce-in-bf16", offsetof(sim_args, grad_reduce_fp32), -1},
    /* ... and how it adds each micro-batch's gradients into them */
    {"--gradient-accumulation-fusion", offsetof(sim_args, grad_accum_fusion), 1},
    {"--no-gradient-accumulation-fusion", offsetof(sim_args, grad_accum_fusion), -1},
    /* ... and how its pipeline stages hand on what every TP rank holds (2021-2023) */
    {"--scatter-gather-tensors-in-pipeline", offsetof(sim_args, pp_scatter_gather), 1},
    {"--no-scatter-gather-tensors-in-pipeline", offsetof(sim_args, pp_scatter_gather), -1},
    {"--cuda-graphs", offsetof(sim_args, cuda_graphs), 1},
    {"--no-cuda-graphs", offsetof(sim_args, cuda_graphs), 0},
    /* Megatron-LM's name for its fused cross-entropy (its kernels:
     * --cross-entropy-fusion-impl) */
    {"--cross-entropy-loss-fusion", offsetof(sim_args, ce_fusion), 1},
};
#define N_SWITCHES ((int)(sizeof switches / sizeof switches[0]))

int sim_args_is_switch(const char *name)
{
    for (int k = 0; k < N_SWITCHES; k++)
        if (!strcmp(name, switches[k].flag)) return 1;
    return 0;
}

/* What the parse keeps besides sim_args: --gpus and --seq as typed (their
 * lists are read again once the command is known), and the last value
 * given in each form of an option (0 ulysim's flag, 1 Megatron-LM's name
 * for it, args_alias.c) and where: given both ways, the two must agree, as
 * --ring and --context-parallel-size do. */
typedef struct args_state {
    int have_cmd;
    const char *gpus_arg, *seq_arg, *seq_flag;
    const char *form_val[O_COUNT][2];
    int form_pos[O_COUNT][2];
} args_state;

void sim_args_defaults(sim_args *a)
{
    memset(a, 0, sizeof *a);
    a->cmd = SIM_CMD_PLAN;
    a->model = SIM_DEFAULT_MODEL;
    a->cluster = SIM_DEFAULT_CLUSTER;
    a->batch = 1;
    a->dtype = ULY_BF16;
    a->recompute = ULY_RECOMPUTE_FULL;
    a->zero = 3;
    a->causal = 1;
    a->flash = 1;
    a->split = ULY_SPLIT_ZIGZAG;
    a->progress = 1;
    a->cp_comm = -1;
    a->mlm.hidden_dropout = a->mlm.attn_dropout = -1; /* not given: Megatron-LM's 0.1 */
    a->mem_headroom_gib = -1;                         /* not given: the cluster preset's */
    a->moe.imbalance = 1.0;                           /* even routing */
}

/* An argument that is not an option: the command, or `presets show NAME`. */
static int positional(sim_args *a, args_state *st, const char *arg, char *why, size_t n)
{
    char qb[80];
    if (st->have_cmd && a->cmd == SIM_CMD_PRESETS && !a->presets_show && !strcmp(arg, "show")) {
        a->presets_show = 1;
        return 0;
    }
    if (st->have_cmd && a->presets_show && !a->show_name) {
        a->show_name = arg;
        return 0;
    }
    if (st->have_cmd)
        return sim_fail(why, n, "unexpected argument %s (valid: options start with --; see --help)",
                        text_quote(arg, qb, sizeof qb));
    int c = 0;
    if (parse_choice("command", arg, cmd_names, N_CMDS, &c, why, n) != 0) {
        char valid[240] = "";
        for (int k = 0; k < N_CMDS; k++) sim_join(valid, sizeof valid, ", ", cmd_names[k]);
        for (int k = 0; k < sim_command_count(); k++) sim_join(valid, sizeof valid, ", ", sim_command_at(k)->name);
        return sim_fail(why, n, "unknown command %s (valid: %s; see --help)", text_quote(arg, qb, sizeof qb), valid);
    }
    a->cmd = (sim_cmd)c;
    st->have_cmd = 1;
    return 0;
}

/* A switch named name (val: a value given with '=', refused): 1 when it is
 * one, 0 when not, -1 (SIM_EXIT_USAGE in *rc) when given a value. */
static int read_switch(sim_args *a, const char *name, const char *val, int *rc, char *why, size_t n)
{
    char qb[80];
    for (int k = 0; k < N_SWITCHES; k++) {
        if (strcmp(name, switches[k].flag) != 0) continue;
        if (val) {
            *rc = sim_fail(why, n, "%s takes no value (got %s)", switches[k].flag, text_quote(val, qb, sizeof qb));
            return -1;
        }
        const size_t off = switches[k].off;
        *(int *)((char *)a + off) = switches[k].v;
        if (!a->plan_flag && off != offsetof(sim_args, help) && off != offsetof(sim_args, version) &&
            off != offsetof(sim_args, progress))
            a->plan_flag = switches[k].flag;
        return 1;
    }
    return 0;
}

/* An option no table knows: SIM_EXIT_USAGE, with the nearest known one. */
static int unknown_option(const char *name, char *why, size_t n)
{
    char qb[80];
    const char *known[O_COUNT + N_SWITCHES];
    int nk = 0;
    for (int k = 0; k < O_COUNT; k++) known[nk++] = valued[k];
    for (int k = 0; k < N_SWITCHES; k++) known[nk++] = switches[k].flag;
    const char *near = name[0] == '-' && name[1] == '-' ? sim_nearest_option(name, known, nk) : NULL;
    if (near)
        return sim_fail(why, n, "unknown option %s (did you mean %s? see ulysim --help)", text_quote(name, qb, sizeof qb),
                        near);
    return sim_fail(why, n, "unknown option %s (valid: see ulysim --help)", text_quote(name, qb, sizeof qb));
}

/* The value of option name at argv[*i] when not given with '=': the next
 * argument, unless it is another option (a file named --gpus written for
 * `--timeline --gpus`). 0, or SIM_EXIT_USAGE. */
static int take_value(int argc, char **argv, int *i, const char *name, const char **val, char *why, size_t n)
{
    if (*i + 1 >= argc) return sim_fail(why, n, "%s needs a value (see ulysim --help)", name);
    const char *next = argv[*i + 1];
    if (next[0] == '-' && next[1] == '-' && next[2]) {
        char nn[64];
        snprintf(nn, sizeof nn, "%.*s", (int)strcspn(next, "="), next);
        int known = sim_args_takes_value(nn);
        for (int k = 0; !known && k < N_SWITCHES; k++) known = !strcmp(nn, switches[k].flag);
        if (known)
            return sim_fail(why, n, "%s needs a value (got the option %s next; valid: %s VALUE, see ulysim --help)",
                            name, nn, name);
    }
    *val = argv[++*i];
    return 0;
}

/* A degree or count of the layout (--ulysses, --ring, --tp, --pp,
 * --virtual-stages and their Megatron-LM names). */
static int read_degree(sim_args *a, int which, const char *name, const char *val, char *why, size_t n)
{
    char qb[80];
    int64_t x = 0;
    if (which == O_PP && !strcmp(val, "auto")) {
        a->pin_pp = ULY_PP_SEARCH;
        return 0;
    }
    int rc = sim_parse_size(name, val, SIM_GPUS_MAX, &x, why, n);
    if (rc) {
        size_t l = strlen(why);
        if (which == O_PP && l > 0 && why[l - 1] == ')') snprintf(why + l - 1, n - (l - 1), "; or auto)");
        return rc;
    }
    if (x > SIM_GPUS_MAX)
        return sim_fail(why, n, "%s %s: too large (valid: at most %lld)", name, text_quote(val, qb, sizeof qb),
                        (long long)SIM_GPUS_MAX);
    int64_t *const dst[] = {[O_ULYSSES] = &a->pin_u, [O_RING] = &a->pin_r, [O_TP] = &a->pin_t, [O_PP] = &a->pin_pp,
                            [O_VSTAGES] = &a->pin_vpp, [O_CP] = &a->cp, [O_LAYERS_PER_VSTAGE] = &a->layers_per_vstage};
    *dst[which] = x;
    return 0;
}

/* --oversub, --zero-prefetch, --hierarchical-context-parallel-sizes:
 * values of their own form. */
static int read_special(sim_args *a, int which, const char *name, const char *val, char *why, size_t n)
{
    char qb[80], *end = NULL;
    if (which == O_OVERSUB) {
        a->oversub = sim_strtod_dec(val, &end);
        if (!val[0] || !end || *end || !(a->oversub >= 1 && a->oversub <= 1000))
            return sim_fail(why, n, "%s %s: not an oversubscription (valid: a ratio 1..1000, 1 = non-blocking)", name,
                            text_quote(val, qb, sizeof qb));
        return 0;
    }
    if (which == O_ZERO_PREFETCH) {
        /* D layers gathered ahead; 0 of them is no prefetch, the same as
         * none (docs/model.md's D_z = 0; the JSON's zero_prefetch 0) */
        int64_t x = 0;
        if (!strcmp(val, "none") || (val[0] && strspn(val, "0") == strlen(val))) {
            a->zero_prefetch = -1;
            return 0;
        }
        const int count = uly_size_parse(val, &x, NULL, 0) == ULY_OK;
        if (count && x <= 1024) a->zero_prefetch = (int)x;
        else return sim_fail(why, n, "%s %s: %s (valid: a layer count 0..1024; 0 or none: no prefetch)", name,
                             text_quote(val, qb, sizeof qb), count ? "too many layers" : "not a layer count");
        return 0;
    }
    /* O_HCP: U,R */
    const long long u = strtoll(val, &end, 10);
    long long r = 0;
    if (end && (*end == ',' || *end == ' ')) r = strtoll(end + 1, &end, 10);
    a->hcp_u = u;
    a->hcp_r = r;
    if (!end || *end || u < 1 || r < 1 || u > SIM_GPUS_MAX || r > SIM_GPUS_MAX)
        return sim_fail(why, n, "%s %s: not two degrees (valid: U,R, e.g. 4,2)", name, text_quote(val, qb, sizeof qb));
    return 0;
}

/* A non-empty name: --model, --cluster, --timeline. */
static int read_name(const char **dst, const char *flag, const char *val, const char *valid, char *why, size_t n)
{
    if (!val[0]) return sim_fail(why, n, "%s '': empty (valid: %s)", flag, valid);
    *dst = val;
    return 0;
}

/* One option's value, checked as typed (a list or range too: whether the
 * command takes one is known once every argument is read). The bounds are
 * libulysim's (uly_workload_check). */
static int read_value(sim_args *a, args_state *st, int which, int form, const char *name, const char *val, char *why,
                      size_t n)
{
    static const char presets[] = "a preset name, see 'ulysim presets', or FILE.json";
    int rc = 0, c = 0;
    switch (which) {
    case O_GPUS:
        st->gpus_arg = val;
        return sim_parse_list(name, val, 1, SIM_GPUS_MAX, a->gpus, &a->n_gpus, why, n);
    case O_SEQ:
        st->seq_arg = val;
        st->seq_flag = form ? sim_alias_megatron(valued[O_SEQ]) : valued[O_SEQ];
        return sim_parse_list(name, val, 1, ULY_SEQ_MAX, a->seq, &a->n_seq, why, n);
    case O_MODEL: return read_name(&a->model, "--model", val, presets, why, n);
    case O_CLUSTER: return read_name(&a->cluster, "--cluster", val, presets, why, n);
    case O_TIMELINE: return read_name(&a->timeline, "--timeline", val, "a file to write, e.g. plan.json", why, n);
    case O_STRATEGY: return add_strategies(a, val, why, n);
    case O_ULYSSES: case O_RING: case O_TP: case O_PP: case O_VSTAGES: case O_CP: case O_LAYERS_PER_VSTAGE:
        return read_degree(a, which, name, val, why, n);
    case O_BATCH:
        a->batch_set = 1;
        return sim_parse_count(name, val, (int64_t)1 << 20, &a->batch, why, n);
    case O_GLOBAL_BATCH: return sim_parse_count(name, val, (int64_t)1 << 40, &a->global_batch, why, n);
    case O_DTYPE: rc = parse_choice(name, val, dtype_names, ULY_DTYPE_COUNT, &c, why, n); a->dtype = (uly_dtype)c; break;
    case O_RECOMPUTE: rc = parse_choice(name, val, recompute_names, ULY_RECOMPUTE_COUNT, &c, why, n); a->recompute = (uly_recompute)c; break;
    case O_ZERO: rc = parse_choice(name, val, zero_names, 4, &c, why, n); a->zero = c; a->zero_set = 1; break;
    case O_SPLIT: rc = parse_choice(name, val, split_names, ULY_SPLIT_COUNT, &c, why, n); a->split = (uly_split)c; break;
    case O_FORMAT: rc = parse_choice(name, val, fmt_names, 3, &c, why, n); a->format = (sim_format)c; a->format_set = 1; break;
    case O_FRAMEWORK: rc = parse_choice(name, val, framework_names, ULY_FW_COUNT, &c, why, n); a->framework = (uly_framework)c; break;
    case O_ATTN_KERNEL:
        rc = parse_choice(name, val, attn_kernel_names, ULY_AK_COUNT, &c, why, n);
        a->attn_kernel = (uly_attn_kernel)c;
        a->attn_kernel_set = 1;
        break;
    case O_CE_IMPL:
        rc = parse_choice(name, val, ce_impl_names + ULY_CE_NATIVE, ULY_CE_COUNT - ULY_CE_NATIVE, &c, why, n);
        a->ce_fused_impl = (uly_ce_impl)(ULY_CE_NATIVE + c);
        break;
    case O_TRANSFORMER_IMPL:
        rc = parse_choice(name, val, transformer_impl_names, ULY_TI_COUNT, &c, why, n);
        a->transformer_impl = (uly_transformer_impl)c;
        break;
    case O_ATTN_DENSITY: return sim_parse_fraction(name, val, &a->attn_density, why, n);
    case O_FFN_CHUNKS: return sim_parse_count(name, val, (int64_t)1 << 30, &a->ffn_chunks, why, n);
    case O_LOSS_CHUNKS: return sim_parse_count(name, val, (int64_t)1 << 30, &a->loss_chunks, why, n);
    case O_STEP_OVERHEAD: {
        double ms = 0;
        if ((rc = sim_parse_ms(name, val, &ms, why, n)) == 0) a->step_overhead_s = ms * 1e-3;
        break;
    }
    case O_CP_COMM: return sim_cp_comm_parse(val, &a->cp_comm, why, n);
    case O_MEM_HEADROOM: return sim_mem_headroom_parse(name, val, &a->mem_headroom_gib, why, n);
    case O_NIC_BW: return sim_parse_bw(name, val, &a->nic_bw_Bps, why, n);
    case O_INTRA_BW: return sim_parse_bw(name, val, &a->intra_bw_Bps, why, n);
    case O_GPUS_PER_NODE: {
        char qb[80];
        if ((rc = sim_parse_size(name, val, 1024, &a->gpus_per_node, why, n)) == 0 && a->gpus_per_node > 1024)
            rc = sim_fail(why, n, "%s %s: too many (valid: 1..1024)", name, text_quote(val, qb, sizeof qb));
        break;
    }
    default: return read_special(a, which, name, val, why, n);
    }
    return rc;
}

/* One option at argv[*i] (its value taken): 0, or SIM_EXIT_USAGE. */
static int read_option(sim_args *a, args_state *st, int argc, char **argv, int *i, char *why, size_t n)
{
    const char *arg = argv[*i];
    /* --flag=value or --flag value */
    char name[64], qb[80];
    const char *val = NULL, *eq = strchr(arg, '=');
    if (eq && arg[1] == '-') {
        size_t l = (size_t)(eq - arg);
        if (l >= sizeof name) l = sizeof name - 1;
        memcpy(name, arg, l);
        name[l] = 0;
        val = eq + 1;
    } else {
        snprintf(name, sizeof name, "%s", arg);
    }
    int rc = 0;
    const int sw = read_switch(a, name, val, &rc, why, n);
    if (sw) return rc;
    if (sim_args_fp8_is(name)) return sim_args_fp8_read(a, argc, argv, i, name, val, why, n);
    int which = -1;
    for (int k = 0; k < O_COUNT; k++)
        if (strcmp(sim_alias_canonical(name), valued[k]) == 0) which = k;
    if (which < 0) {
        const int lo = sim_layout_option(a, argc, argv, i, name, val, why, n); /* args_layout.c */
        if (lo >= 0) return lo;
        const int mo = sim_moe_option(a, argc, argv, i, name, val, why, n); /* args_moe.c */
        if (mo >= 0) return mo;
        const int mlm = sim_mlm_option(a, name, val, argc, argv, i, &rc, why, n); /* args_mlm.c */
        return mlm > 0 ? 0 : mlm < 0 ? rc : unknown_option(name, why, n);
    }
    if (!val && (rc = take_value(argc, argv, i, name, &val, why, n)) != 0) return rc;
    const int form = strcmp(name, valued[which]) != 0;
    if (!a->plan_flag && which != O_FORMAT) {
        const char *mf = form ? sim_alias_megatron(valued[which]) : NULL;
        a->plan_flag = mf ? mf : valued[which];
    }
    /* one value per option, as the subcommands hold theirs (sim_opt_value):
     * the last would win in silence; --strategy adds up */
    if (st->form_val[which][form] && which != O_STRATEGY) {
        char q1[80];
        return sim_fail(why, n, "%s given twice (%s, then %s; valid: one value)", name,
                        text_quote(st->form_val[which][form], q1, sizeof q1), text_quote(val, qb, sizeof qb));
    }
    st->form_val[which][form] = val;
    st->form_pos[which][form] = *i;
    return read_value(a, st, which, form, name, val, why, n);
}

/* Once every argument is read: what one option means for another. */
static int args_finish(sim_args *a, const args_state *st, char *why, size_t n)
{
    /* Megatron-LM shards nothing or (distributed optimizer) the optimizer:
     * without --zero its large runs' choice, the distributed optimizer */
    if (a->framework == ULY_FW_MEGATRON && !a->zero_set) a->zero = 1;
    if (a->presets_show && !a->show_name)
        return sim_fail(why, n, "presets show: which preset? (valid: presets show NAME, a name from 'ulysim presets')");
    /* presets lists files: a planning flag there would be read and dropped */
    if (a->cmd == SIM_CMD_PRESETS && a->plan_flag)
        return sim_fail(why, n, "presets: %s is not used by presets (valid: presets [--format table|csv|json], or "
                        "presets show NAME)", a->plan_flag);
    if (a->presets_show && a->format_set)
        return sim_fail(why, n, "presets show %s: --format: the preset's file is printed as it is, JSON (valid: "
                        "presets show NAME)", a->show_name);
    for (int k = 0; k < O_COUNT; k++) {
        if (!st->form_val[k][0] || !st->form_val[k][1] || alias_values_agree(k, st->form_val[k][0], st->form_val[k][1]))
            continue;
        const int f = st->form_pos[k][0] < st->form_pos[k][1] ? 0 : 1; /* the one typed first, named first */
        const char *flag[2] = {valued[k], sim_alias_megatron(valued[k])};
        return sim_fail(why, n, "%s %.60s disagrees with %s %.60s (valid: give one of them, or the same value)", flag[f],
                        st->form_val[k][f], flag[!f], st->form_val[k][!f]);
    }
    int rc = sim_mlm_finish(a, st->form_val[O_MODEL][0] != NULL, st->form_val[O_DTYPE][0], st->form_val[O_ZERO][0],
                            why, n);
    if (rc) return rc;
    rc = sim_megatron_resolve(a, why, n);
    if (rc || (rc = sim_layout_finish(a, why, n)) || (rc = sim_args_fp8_finish(a, why, n)) ||
        (rc = sim_moe_finish(a, why, n)))
        return rc;
    /* the lists as typed; their defaults depend on the command and the
     * cluster, and are the context's (context.c) */
    const int lists = a->cmd == SIM_CMD_SWEEP;
    if (st->gpus_arg && (rc = sim_parse_list(valued[O_GPUS], st->gpus_arg, lists, SIM_GPUS_MAX, a->gpus, &a->n_gpus, why, n)))
        return rc;
    if (st->seq_arg && (rc = sim_parse_list(st->seq_flag, st->seq_arg, lists, ULY_SEQ_MAX, a->seq, &a->n_seq, why, n)))
        return rc;
    if (!a->format_set && a->cmd == SIM_CMD_SWEEP) a->format = SIM_FMT_CSV;
    if (a->timeline && a->cmd != SIM_CMD_PLAN)
        return sim_fail(why, n, "--timeline %s: only the plan command writes a timeline (got %s)", a->timeline,
                        sim_cmd_name(a->cmd));
    if (a->timeline && out_file_check(a->timeline, OUT_FILE_STREAM, why, n)) /* before the work */
        return SIM_EXIT_USAGE;
    return 0;
}

/* --args-file FILE (at most one), at argv[i]: its value, *i on it; NULL
 * when argv[i] is another argument */
static const char *args_file_at(int argc, char **argv, int *i)
{
    if (!strncmp(argv[*i], "--args-file=", 12)) return argv[*i] + 12;
    if (strcmp(argv[*i], "--args-file")) return NULL;
    return *i + 1 < argc ? argv[++*i] : "";
}

/* The launch script's arguments (args_file.c), read before the command
 * line's and under Megatron-LM's defaults: 0 (also when none), or
 * SIM_EXIT_USAGE. Its words stay allocated: the parse points into them. */
static int args_file_first(int argc, char **argv, sim_args *a, args_state *st, char *why, size_t n)
{
    static char **fargv;
    static int fargc;
    const char *path = NULL, *v;
    char qb[80];
    for (int i = 1; i < argc; i++) {
        if (!(v = args_file_at(argc, argv, &i))) continue;
        if (!v[0]) return sim_fail(why, n, "--args-file needs a value (valid: --args-file FILE, a launch script)");
        if (path) return sim_fail(why, n, "--args-file given twice (%s, then %s; valid: one launch script)", path, v);
        path = v;
    }
    if (!path) return 0;
    sim_args_file_free(fargc, fargv);
    fargv = NULL;
    int rc = sim_args_file_read(path, &fargc, &fargv, why, n);
    if (rc) return rc;
    sim_mlm_launch_defaults(a);
    a->mlm.args_file = path;
    a->plan_flag = "--args-file";
    for (int j = 1; j < fargc && !rc; j++) {
        if (fargv[j][0] != '-' || fargv[j][1] != '-')
            return sim_fail(why, n, "--args-file %s: %s in its launch command is not an argument (valid: Megatron-LM "
                            "arguments after the .py script)", path, text_quote(fargv[j], qb, sizeof qb));
        const int own = sim_mlm_file_option(a, fargc, fargv, &j, &rc, why, n);
        if (!own) rc = read_option(a, st, fargc, fargv, &j, why, n);
    }
    return rc;
}

int sim_args_parse(int argc, char **argv, sim_args *a, char *why, size_t n)
{
    args_state st;
    memset(&st, 0, sizeof st);
    st.seq_flag = "--seq";
    sim_args_defaults(a);
    int rc = args_file_first(argc, argv, a, &st, why, n);
    if (rc) return rc;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (args_file_at(argc, argv, &i)) continue;
        rc = arg[0] != '-' || arg[1] == 0 ? positional(a, &st, arg, why, n) : read_option(a, &st, argc, argv, &i, why, n);
        if (rc) return rc;
    }
    if (a->help || a->version) return 0;
    return args_finish(a, &st, why, n);
}
