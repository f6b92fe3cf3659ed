/* search_bench: how fast ulysim searches (docs/benchmarks.md's targets, one
 * core).
 *
 *  1. full search: every strategy, every split of 1024 GPUs into
 *     Ulysses x ring x TP x DP, both placements, at one sequence length
 *     (llama3-8b on dgx-h100, 1M tokens): target < 100 ms. Also with the
 *     micro-batch search (global batch 64).
 *  2. a sweep of 10^6 configurations: uly_evaluate on 10^6 (strategy,
 *     layout, sequence, GPUs) points of llama3-8b on dgx-h100: target < 2 s.
 *     And, for scale, `ulysim sweep`-style best-layout searches over a grid
 *     until 10^6 layouts have been priced.
 *
 * Times are this thread's CPU time, so that other processes on a shared
 * machine do not count (cache sharing still does); the rates are per core.
 *
 * Usage: search_bench [REPEATS]   (default 5; the best of the repeats is shown) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "preset.h"
#include "ulysim.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: other processes on a shared machine do not count */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uly_model model;
static uly_cluster cluster;

static uly_workload workload(int64_t seq)
{
    uly_workload w;
    memset(&w, 0, sizeof w);
    w.seq = seq;
    w.micro_batch = 1;
    w.dtype = ULY_BF16;
    w.causal = 1;
    w.flash = 1;
    w.recompute = ULY_RECOMPUTE_FULL;
    w.zero_stage = 3;
    w.split = ULY_SPLIT_ZIGZAG;
    return w;
}

/* One full search: all strategies on `gpus` at `seq`. */
static uint64_t full_search(int64_t gpus, int64_t seq, int micro, uint64_t *feasible)
{
    uly_workload w = workload(seq);
    uly_search_opts o;
    memset(&o, 0, sizeof o);
    o.both_placements = 1;
    if (micro) {
        w.global_batch = 64;
        o.search_micro_batch = 1;
    }
    uint64_t n = 0;
    for (int s = 0; s < ULY_STRAT_COUNT; s++) {
        uly_result r;
        uly_search_stats st = {0, 0};
        uly_search_best(&model, &w, &cluster, gpus, (uly_strategy_id)s, &o, &r, &st);
        n += st.evaluated;
        if (feasible) *feasible += st.feasible;
    }
    return n;
}

typedef struct cfg {
    uly_layout l;
    int64_t seq;
} cfg;

static int divisors(int64_t n, int64_t *out)
{
    int k = 0;
    for (int64_t d = 1; d <= n; d++)
        if (n % d == 0) out[k++] = d;
    return k;
}

/* Every (strategy, u, r, t, dp, seq) over GPUs 8..1024 and seq 8K..1M. */
static cfg *all_configs(size_t *count)
{
    size_t cap = 1 << 16, n = 0;
    cfg *v = malloc(cap * sizeof *v);
    if (!v) return NULL;
    for (int64_t g = 8; g <= 1024; g *= 2) {
        int64_t du[64], dr[64], dt[64];
        for (int s = 0; s < ULY_STRAT_COUNT; s++) {
            const uly_strategy *st = uly_strategy_get((uly_strategy_id)s);
            int nu = divisors(g, du);
            for (int iu = 0; iu < nu; iu++) {
                if (!st->uses_ulysses && du[iu] != 1) continue;
                int nr = divisors(g / du[iu], dr);
                for (int ir = 0; ir < nr; ir++) {
                    if (!st->uses_ring && dr[ir] != 1) continue;
                    int nt = divisors(g / du[iu] / dr[ir], dt);
                    for (int it = 0; it < nt; it++) {
                        if (!st->uses_tp && dt[it] != 1) continue;
                        for (int64_t seq = 8192; seq <= 1048576; seq *= 2) {
                            if (n == cap) {
                                cap *= 2;
                                cfg *nv = realloc(v, cap * sizeof *v);
                                if (!nv) { free(v); return NULL; }
                                v = nv;
                            }
                            uly_layout_init(&v[n].l, (uly_strategy_id)s, du[iu], dr[ir], dt[it],
                                            g / du[iu] / dr[ir] / dt[it]);
                            v[n].seq = seq;
                            n++;
                        }
                    }
                }
            }
        }
    }
    *count = n;
    return v;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    if (reps < 1) reps = 1;
    char why[512];
    if (preset_model_load("llama3-8b", &model, why, sizeof why) || preset_cluster_load("dgx-h100", &cluster, why, sizeof why)) {
        fprintf(stderr, "search_bench: %s\n", why);
        return 1;
    }

    /* 1. full search over 1024 GPUs */
    for (int micro = 0; micro < 2; micro++) {
        double best = 1e30;
        uint64_t evals = 0, feas = 0;
        for (int i = 0; i < reps; i++) {
            feas = 0;
            double t0 = now_s();
            evals = full_search(1024, 1048576, micro, &feas);
            double t = now_s() - t0;
            if (t < best) best = t;
        }
        printf("full search, %d strategies, 1024 GPUs, seq 1M%s: %.2f ms, %llu layouts evaluated (%llu feasible), %.2f us each  [target < 100 ms]\n",
               (int)ULY_STRAT_COUNT, micro ? ", micro-batches of global batch 64" : ", both placements", best * 1e3,
               (unsigned long long)evals, (unsigned long long)feas, best * 1e6 / (double)(evals ? evals : 1));
    }

    /* 2. 10^6 configurations */
    size_t ncfg = 0;
    cfg *cfgs = all_configs(&ncfg);
    uly_plan *plan = malloc(sizeof *plan);
    uly_result *res = malloc(sizeof *res);
    if (!cfgs || !plan || !res || ncfg == 0) {
        fprintf(stderr, "search_bench: out of memory\n");
        return 1;
    }
    const size_t target = 1000000;
    double best = 1e30;
    uint64_t feasible = 0;
    double sink = 0;
    for (int i = 0; i < reps; i++) {
        feasible = 0;
        double t0 = now_s();
        for (size_t k = 0; k < target; k++) {
            const cfg *c = &cfgs[k % ncfg];
            uly_workload w = workload(c->seq);
            if (uly_evaluate(&model, &w, &cluster, &c->l, plan, res) == ULY_OK) {
                feasible += (uint64_t)res->feasible;
                sink += res->time.step_s;
            }
        }
        double t = now_s() - t0;
        if (t < best) best = t;
    }
    printf("sweep of %zu configurations (uly_evaluate; %zu distinct: %d strategies x every split of 8..1024 GPUs x seq 8K..1M): %.3f s, %.2f us each, %llu feasible  [target < 2 s]\n",
           target, ncfg, (int)ULY_STRAT_COUNT, best, best * 1e6 / (double)target, (unsigned long long)feasible);

    /* best-layout searches over a grid until 10^6 layouts are priced */
    uint64_t evals = 0, searches = 0;
    best = 1e30;
    for (int i = 0; i < reps; i++) {
        evals = searches = 0;
        double t0 = now_s();
        while (evals < target) {
            for (int64_t g = 8; g <= 1024 && evals < target; g *= 2)
                for (int64_t seq = 8192; seq <= 1048576 && evals < target; seq *= 2) {
                    uly_workload w = workload(seq); /* the same grid each round */
                    uly_search_opts o;
                    memset(&o, 0, sizeof o);
                    o.both_placements = 1;
                    for (int s = 0; s < ULY_STRAT_COUNT; s++) {
                        uly_search_stats st = {0, 0};
                        uly_search_best(&model, &w, &cluster, g, (uly_strategy_id)s, &o, res, &st);
                        evals += st.evaluated;
                        searches++;
                    }
                }
        }
        double t = now_s() - t0;
        if (t < best) best = t;
    }
    printf("sweep by search (ulysim sweep): %llu best-layout searches, %llu layouts priced: %.3f s, %.2f us per layout, "
           "%.2f M layouts/s  [target >= 1 M/s]\n",
           (unsigned long long)searches, (unsigned long long)evals, best, best * 1e6 / (double)evals,
           (double)evals / best * 1e-6);
    if (sink < 0) printf("%g\n", sink);
    free(cfgs);
    free(plan);
    free(res);
    return 0;
}
