/* args_alias.c: Megatron-LM's vocabulary on the ulysim command line, for
 * people who come from it, and "did you mean" for misspelt options.
 *
 * Most of Megatron-LM's parallelism flags name one of ulysim's own and are
 * read as it (the table below). Context parallelism is the exception: one
 * Megatron degree, --context-parallel-size, whose meaning depends on
 * --cp-comm-type (Megatron-Core's names for the four schemes), so it is
 * resolved once every flag is read. */
#include "args.h"

#include <string.h>

/* Megatron-LM flag -> the ulysim flag it is read as. */
static const struct {
    const char *megatron, *ulysim;
} alias[] = {
    {"--tensor-model-parallel-size", "--tp"},
    {"--pipeline-model-parallel-size", "--pp"},
    {"--virtual-pipeline-model-parallel-size", "--virtual-stages"},
    {"--micro-batch-size", "--batch"},
    {"--global-batch-size", "--global-batch"},
    {"--seq-length", "--seq"},
};

const char *sim_alias_canonical(const char *name)
{
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
        if (strcmp(name, alias[i].megatron) == 0) return alias[i].ulysim;
    return name;
}

const char *sim_alias_megatron(const char *name)
{
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
        if (strcmp(name, alias[i].ulysim) == 0) return alias[i].megatron;
    return NULL;
}

/* Megatron-Core's --cp-comm-type: the registry's strategy that names it
 * (uly_strategy.megatron_cp_comm); sim_args.cp_comm holds its id. */
int sim_cp_comm_parse(const char *v, int *out, char *why, size_t n)
{
    char qb[80], valid[160] = "";
    for (int i = 0; i < ULY_STRAT_COUNT; i++) {
        const uly_strategy *s = uly_strategy_get((uly_strategy_id)i);
        if (!s || !s->megatron_cp_comm) continue;
        if (strcmp(v, s->megatron_cp_comm) == 0) {
            *out = i;
            return 0;
        }
        sim_join(valid, sizeof valid, ", ", s->megatron_cp_comm);
    }
    return sim_fail(why, n, "--cp-comm-type %s: unknown (valid: %s)", text_quote(v, qb, sizeof qb), valid);
}

/* Megatron's default --cp-comm-type: p2p, the ring */
static const uly_strategy *cp_comm_default(void)
{
    for (int i = 0; i < ULY_STRAT_COUNT; i++) {
        const uly_strategy *s = uly_strategy_get((uly_strategy_id)i);
        if (s && s->megatron_cp_comm && !strcmp(s->megatron_cp_comm, "p2p")) return s;
    }
    return NULL;
}

/* Sets one pinned degree, refusing a different value given another way. */
static int pin(int64_t *slot, int64_t v, const char *flag, const char *from, char *why, size_t n)
{
    if (*slot && *slot != v)
        return sim_fail(why, n, "%s %lld disagrees with %s %lld (valid: give one of them, or the same value)", flag,
                        (long long)*slot, from, (long long)v);
    *slot = v;
    return 0;
}

int sim_megatron_resolve(sim_args *a, char *why, size_t n)
{
    if (a->cp_comm < 0 && !a->cp && !a->hcp_u) return 0;
    /* a context-parallel size of 1 is no context parallelism (Megatron's
     * default): nothing to say against strategies that split no sequence */
    if (a->cp_comm < 0 && a->cp == 1 && !a->hcp_u && a->n_strategies > 0) {
        int cp_any = 0;
        for (int i = 0; i < a->n_strategies; i++) {
            const uly_strategy *g = uly_strategy_get(a->strategies[i]);
            cp_any |= g && (g->uses_ulysses || g->uses_ring);
        }
        if (!cp_any) return 0;
    }
    const uly_strategy *s = a->cp_comm >= 0 ? uly_strategy_get((uly_strategy_id)a->cp_comm) : cp_comm_default();
    if (!s) return sim_fail(why, n, "internal: no strategy for --cp-comm-type");
    if (a->n_strategies == 0) {
        a->strategies[a->n_strategies++] = s->id;
    } else if (a->n_strategies != 1 || a->strategies[0] != s->id) {
        if (a->cp_comm < 0) /* the default communication named as such, not as a flag given */
            return sim_fail(why, n, "--context-parallel-size %lld is --strategy %s (Megatron's default --cp-comm-type "
                            "%s) (valid: drop --strategy, ask for %s alone, or give --cp-comm-type)",
                            (long long)a->cp, s->name, s->megatron_cp_comm, s->name);
        return sim_fail(why, n, "--cp-comm-type %s is --strategy %s (valid: drop --strategy, or ask for %s alone)",
                        s->megatron_cp_comm, s->name, s->name);
    }
    const char *cp_flag = "--context-parallel-size";
    if (s->uses_ulysses && s->uses_ring) {
        /* a2a+p2p: Megatron-Core takes the two levels from
         * --hierarchical-context-parallel-sizes, and so do we */
        if (!a->hcp_u) {
            if (a->pin_u && a->pin_r) return 0; /* given the ulysim way */
            return sim_fail(why, n, "--cp-comm-type a2a+p2p needs --hierarchical-context-parallel-sizes U,R (the "
                            "all-to-all and ring degrees, U x R = the context-parallel size)");
        }
        if (a->cp && a->hcp_u * a->hcp_r != a->cp)
            return sim_fail(why, n, "--hierarchical-context-parallel-sizes %lld,%lld: %lld ways, not the "
                            "--context-parallel-size %lld (valid: two degrees whose product it is)",
                            (long long)a->hcp_u, (long long)a->hcp_r, (long long)(a->hcp_u * a->hcp_r), (long long)a->cp);
        int rc = pin(&a->pin_u, a->hcp_u, "--ulysses", "--hierarchical-context-parallel-sizes", why, n);
        return rc ? rc : pin(&a->pin_r, a->hcp_r, "--ring", "--hierarchical-context-parallel-sizes", why, n);
    }
    if (a->hcp_u)
        return sim_fail(why, n, "--hierarchical-context-parallel-sizes: only with --cp-comm-type a2a+p2p");
    if (!a->cp) return 0;
    if (s->uses_ulysses) return pin(&a->pin_u, a->cp, "--ulysses", cp_flag, why, n);
    return pin(&a->pin_r, a->cp, "--ring", cp_flag, why, n);
}

/* Levenshtein distance, capped: options are short. */
static int distance(const char *a, const char *b)
{
    int prev[64], cur[64];
    const int la = (int)strlen(a), lb = (int)strlen(b);
    if (la >= 63 || lb >= 63) return 99;
    for (int j = 0; j <= lb; j++) prev[j] = j;
    for (int i = 1; i <= la; i++) {
        cur[0] = i;
        for (int j = 1; j <= lb; j++) {
            int d = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < d) d = prev[j] + 1;
            if (cur[j - 1] + 1 < d) d = cur[j - 1] + 1;
            cur[j] = d;
        }
        memcpy(prev, cur, sizeof(int) * (size_t)(lb + 1));
    }
    return prev[lb];
}

const char *sim_nearest_option(const char *name, const char *const *known, int n_known)
{
    const char *best = NULL;
    int bd = 99;
    for (int i = 0; i < n_known; i++) {
        const int d = distance(name, known[i]);
        if (d < bd) {
            bd = d;
            best = known[i];
        }
    }
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++) {
        const int d = distance(name, alias[i].megatron);
        if (d < bd) {
            bd = d;
            best = alias[i].megatron;
        }
    }
    for (int i = 0; i < sim_mlm_names_count; i++) { /* every name of Megatron-LM's (args_megatron.c) */
        const int d = distance(name, sim_mlm_names[i].name);
        if (d < bd) {
            bd = d;
            best = sim_mlm_names[i].name;
        }
    }
    /* close enough to be a slip: a third of the name, at least 2 edits */
    const int limit = (int)strlen(name) / 3 > 2 ? (int)strlen(name) / 3 : 2;
    return bd <= limit ? best : NULL;
}
