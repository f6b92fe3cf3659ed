/* args_moe.c: the command line of mixture-of-experts layouts and workloads
 * (docs/cli.md, "Mixtures of experts"), in ulysim's names and
 * Megatron-LM's:
 *
 *   --ep N               --expert-model-parallel-size N
 *   --etp N              --expert-tensor-parallel-size N
 *   --moe-dispatcher D   --moe-token-dispatcher-type alltoall|allgather
 *   --moe-capacity F     --moe-expert-capacity-factor F
 *   --moe-imbalance F    (ulysim's)
 *
 * Given both ways, the two must say the same. What they mean for a model
 * (none of them for a dense one, EP dividing the experts) is checked once
 * the model is known (sim_moe_check, context.c); Megatron-LM's --moe-layer-freq
 * pattern is read by formats/moe_freq.c, which the log reader shares
 * (sim_moe_freq_parse). Kept apart from args.c,
 * which reads the other flags. */
#include "args.h"
#include "moe_freq.h"

#include <stdlib.h>
#include <string.h>

enum { M_EP, M_ETP, M_DISPATCHER, M_CAPACITY, M_IMBALANCE, M_COUNT };
/* [ulysim name, Megatron-LM name] (NULL: none) */
static const char *const moe_flags[M_COUNT][2] = {
    [M_EP] = {"--ep", "--expert-model-parallel-size"},
    [M_ETP] = {"--etp", "--expert-tensor-parallel-size"},
    [M_DISPATCHER] = {"--moe-dispatcher", "--moe-token-dispatcher-type"},
    [M_CAPACITY] = {"--moe-capacity", "--moe-expert-capacity-factor"},
    [M_IMBALANCE] = {"--moe-imbalance", NULL},
};

static int flag_of(const char *name, int *form)
{
    for (int k = 0; k < M_COUNT; k++)
        for (int f = 0; f < 2; f++)
            if (moe_flags[k][f] && !strcmp(moe_flags[k][f], name)) {
                if (form) *form = f;
                return k;
            }
    return -1;
}

int sim_moe_takes_value(const char *name) { return flag_of(name, NULL) >= 0; }

/* A degree 1..2^20 (uly_layout_check's bound) */
static int degree_parse(const char *flag, const char *v, int32_t *out, char *why, size_t n)
{
    char qb[80], *end = NULL;
    const long long x = strtoll(v, &end, 10);
    if (!v[0] || !end || *end || x < 1 || x > (1 << 20))
        return sim_fail(why, n, "%s %s: not a degree (valid: a whole number 1..%d; 1: none)", flag,
                        text_quote(v, qb, sizeof qb), 1 << 20);
    *out = (int32_t)x;
    return 0;
}

/* A factor in [lo, 1024], or 0 when zero_ok: the bounds of uly_workload_check */
static int factor_parse(const char *flag, const char *v, double lo, int zero_ok, double *out, char *why, size_t n)
{
    char qb[80], *end = NULL;
    const double x = sim_strtod_dec(v, &end);
    if (!v[0] || !end || *end || !((zero_ok && x == 0) || (x >= lo && x <= 1024)))
        return sim_fail(why, n, "%s %s: not a factor (valid: %s%g..1024)", flag, text_quote(v, qb, sizeof qb),
                        zero_ok ? "0 (dropless) or " : "", lo);
    *out = x;
    return 0;
}

/* The value of flag k in form f into a, remembered as typed */
static int moe_value(sim_args *a, int k, int f, const char *name, const char *val, char *why, size_t n)
{
    sim_moe_args *m = &a->moe;
    char qb[80], qa[80];
    if (m->typed[k][f])
        return sim_fail(why, n, "%s given twice (%s, then %s; valid: one value)", name,
                        text_quote(m->typed[k][f], qa, sizeof qa), text_quote(val, qb, sizeof qb));
    m->typed[k][f] = val;
    switch (k) {
    case M_EP: return degree_parse(name, val, &m->ep, why, n);
    case M_ETP: return degree_parse(name, val, &m->etp, why, n);
    case M_DISPATCHER: {
        const uly_moe_dispatcher d = uly_moe_dispatcher_find(val);
        if (d == ULY_MOE_DISPATCHER_COUNT)
            return sim_fail(why, n, "%s %s: %s (valid: alltoall or allgather)", name, text_quote(val, qb, sizeof qb),
                            !strcmp(val, "flex") ? "Megatron-Core's flex dispatcher (DeepEP, HybridEP) is not priced"
                                                 : "not a dispatcher");
        m->dispatcher = d;
        return 0;
    }
    case M_CAPACITY: return factor_parse(name, val, 0.01, 1, &m->capacity, why, n);
    default: return factor_parse(name, val, 1, 0, &m->imbalance, why, n);
    }
}

int sim_moe_option(sim_args *a, int argc, char **argv, int *i, const char *name, const char *val, char *why, size_t n)
{
    int f = 0;
    const int k = flag_of(name, &f);
    if (k < 0) return -1;
    if (!val) {
        if (*i + 1 >= argc || (argv[*i + 1][0] == '-' && argv[*i + 1][1] == '-'))
            return sim_fail(why, n, "%s needs a value (see ulysim --help)", name);
        val = argv[++*i];
    }
    if (!a->plan_flag) a->plan_flag = moe_flags[k][f];
    if (!a->moe.first) a->moe.first = moe_flags[k][f];
    return moe_value(a, k, f, name, val, why, n);
}

int sim_moe_finish(const sim_args *a, char *why, size_t n)
{
    const sim_moe_args *m = &a->moe;
    for (int k = 0; k < M_COUNT; k++) {
        const char *u = m->typed[k][0], *g = m->typed[k][1];
        if (!u || !g) continue;
        sim_args t;
        char w[200];
        memset(&t, 0, sizeof t);
        moe_value(&t, k, 0, "", u, w, sizeof w);
        sim_moe_args first = t.moe;
        memset(&t, 0, sizeof t);
        moe_value(&t, k, 0, "", g, w, sizeof w);
        if (first.ep != t.moe.ep || first.etp != t.moe.etp || first.dispatcher != t.moe.dispatcher ||
            first.capacity != t.moe.capacity || first.imbalance != t.moe.imbalance)
            return sim_fail(why, n, "%s %.40s disagrees with %s %.40s (valid: give one of them, or the same value)",
                            moe_flags[k][0], u, moe_flags[k][1], g);
    }
    return 0;
}

int sim_moe_check(const sim_args *a, const uly_model *model, char *why, size_t n)
{
    const sim_moe_args *m = &a->moe;
    if (model->experts <= 0) {
        /* EP and ETP of 1 are what a dense model runs; any other MoE flag
         * would be read and dropped. A launch script's Megatron-LM defaults
         * (its dispatcher) are not flags given. */
        for (int k = 0; k < M_COUNT; k++)
            for (int f = 0; f < 2; f++) {
                const int trivial = (k == M_EP && m->ep <= 1) || (k == M_ETP && m->etp <= 1);
                if (!m->typed[k][f] || trivial) continue;
                return sim_fail(why, n, "%s %s: the model has no experts (model %s is dense; valid: leave it out, or a "
                                "mixture-of-experts model such as mixtral-8x7b)", moe_flags[k][f], m->typed[k][f],
                                model->name);
            }
        return 0;
    }
    if (m->ep > 1 && model->experts % m->ep) {
        char divs[160] = "";
        for (int64_t d = 1; d <= model->experts && strlen(divs) + 12 < sizeof divs; d++)
            if (model->experts % d == 0) {
                char one[24];
                snprintf(one, sizeof one, "%lld", (long long)d);
                sim_join(divs, sizeof divs, ", ", one);
            }
        const int f = m->typed[M_EP][0] ? 0 : 1;
        return sim_fail(why, n, "%s %d: does not divide the %lld experts of %s (valid: %s)", moe_flags[M_EP][f],
                        (int)m->ep, (long long)model->experts, model->name, divs);
    }
    return 0;
}

void sim_moe_workload(const sim_args *a, uly_workload *w)
{
    w->moe_dispatcher = a->moe.dispatcher;
    w->moe_capacity = a->moe.capacity;
    w->moe_imbalance = a->moe.imbalance;
}

void sim_moe_help(FILE *f)
{
    fprintf(f,
"\n"
"mixtures of experts (a model with experts: mixtral-8x7b, deepseek-v3, ...; Megatron-LM's\n"
"names in brackets are read the same; a dense model takes none of these but --ep 1):\n"
"  --ep N               pin the expert-parallel degree: the experts spread over N ranks\n"
"                       of a stage [ways; default searched, 1 for a dense model]; it must\n"
"                       divide the experts [--expert-model-parallel-size]\n"
"  --etp N              pin the expert tensor-parallel degree [ways; default searched, 1\n"
"                       for a dense model] [--expert-tensor-parallel-size]\n"
"  --moe-dispatcher D   alltoall|allgather: how tokens reach their experts [default\n"
"                       alltoall; a launch script: allgather, Megatron-LM's default]\n"
"                       [--moe-token-dispatcher-type]\n"
"  --moe-capacity F     an expert takes at most F x its even share of the tokens, the\n"
"                       rest dropped [factor; default 0: dropless]\n"
"                       [--moe-expert-capacity-factor]\n"
"  --moe-imbalance F    the busiest expert rank's tokens over the even share [factor\n"
"                       >= 1; default 1.0: even routing], capped by --moe-capacity\n"
"  --moe-grouped-gemm   accepted [switch; default: on, always]: each rank's experts are\n"
"                       priced as one grouped GEMM (Megatron-LM's flag)\n");
}

/* ---------------------------------------- Megatron-LM's --moe-layer-freq */

/* The pattern reader is formats/moe_freq.c's, shared with the log reader */
int sim_moe_freq_parse(const char *v, int64_t layers, int64_t *dense_first, int64_t *every, char *why, size_t n)
{
    int64_t entries;
    if (moe_freq_parse("--moe-layer-freq", v, layers, dense_first, every, &entries, why, n)) {
        sim_one_line(why);
        return SIM_EXIT_USAGE;
    }
    return 0;
}
