/* The searches of search_limits.c, each held to an expectation worked out
 * here without them: the order of results on hand-made results and against
 * every layout uly_search_best could have picked; the largest micro-batch
 * against a batch-by-batch scan of uly_evaluate; the TP degrees inside a
 * node against a rank-by-rank look at the groups; the best layout with one
 * of them against the degrees pinned one by one. */
#include "fixtures.h"

static uly_plan plan;

/* ------------------------------------------------------------- the order */

static uly_result feasible_at(double tokens_per_s, int64_t bytes)
{
    uly_result r;
    memset(&r, 0, sizeof r);
    r.feasible = 1;
    r.time.tokens_per_s = tokens_per_s;
    r.comm_fwd_bytes = bytes;
    r.mem.total_bytes = 1e9;
    r.mem.capacity_bytes = 2e9;
    return r;
}

static uly_result over_memory(double total, double capacity)
{
    uly_result r;
    memset(&r, 0, sizeof r);
    r.mem.total_bytes = total;
    r.mem.capacity_bytes = capacity;
    return r;
}

static void test_order_rules(void)
{
    const uly_result fast = feasible_at(2e5, 100), slow = feasible_at(1e5, 10), fast_cheap = feasible_at(2e5, 50);
    const uly_result oom_small = over_memory(50e9, 40e9), oom_big = over_memory(90e9, 40e9);
    uly_result shapes;
    memset(&shapes, 0, sizeof shapes); /* never priced */
    CHECK(uly_result_better(&slow, &oom_small) && !uly_result_better(&oom_small, &slow), "feasible beats infeasible");
    CHECK(uly_result_better(&fast, &slow) && !uly_result_better(&slow, &fast), "more tokens/s wins");
    CHECK(uly_result_better(&fast_cheap, &fast) && !uly_result_better(&fast, &fast_cheap),
          "equal tokens/s: fewer bytes wins");
    CHECK(!uly_result_better(&fast, &fast), "a tie keeps the incumbent");
    CHECK(uly_result_priced(&oom_small) && !uly_result_priced(&shapes), "priced: memory was counted");
    CHECK(uly_result_better(&oom_big, &shapes) && !uly_result_better(&shapes, &oom_big),
          "a memory failure beats a shape failure");
    CHECK(uly_result_better(&oom_small, &oom_big) && !uly_result_better(&oom_big, &oom_small),
          "less memory over capacity wins");
    /* the fraction of capacity counts, not the bytes: 60 of 80 GB fits
     * better than 50 of 40 GB */
    const uly_result big_gpu = over_memory(90e9, 80e9);
    CHECK(uly_result_better(&big_gpu, &oom_small), "over capacity by 12%% beats over by 25%%");
    CHECK(!uly_result_better(&shapes, &shapes), "two shape failures tie");
}

/* uly_search_best keeps the best of the layouts it tries: none of them
 * (enumerated here for one strategy without TP) is better by
 * uly_result_better than what it returns. */
static void test_order_agrees_with_search(void)
{
    const uly_model m = fx_gpt7b();
    const uly_cluster c = fx_a100(4);
    uly_workload w = fx_work(65536);
    uly_search_opts o = {0};
    static uly_result best, cur;
    CHECK(uly_search_best(&m, &w, &c, 32, ULY_STRAT_USP, &o, &best, NULL) == ULY_OK, "usp on 32 GPUs searched");
    int n = 0;
    for (int64_t u = 1; u <= 32; u *= 2)
        for (int64_t r = 1; u * r <= 32; r *= 2) {
            uly_layout l;
            uly_layout_init(&l, ULY_STRAT_USP, u, r, 1, 32 / (u * r));
            if (uly_evaluate(&m, &w, &c, &l, &plan, &cur) != ULY_OK) continue;
            n++;
            CHECK(!uly_result_better(&cur, &best), "usp u%lld r%lld beats the search's choice u%lld r%lld",
                  (long long)u, (long long)r, (long long)best.layout.ulysses, (long long)best.layout.ring);
        }
    CHECK(n >= 6, "%d layouts evaluated", n);
}

/* ------------------------------------------------------ the largest batch */

/* A P100 16GB-like node: fp32, 4 GPUs on a switch. */
static uly_cluster p100(void)
{
    uly_cluster c = fx_a100(16);
    c.gpus_per_node = 4;
    c.gpu.hbm_bytes = 16e9;
    c.gpu.reserved_bytes = 2e9;
    c.gpu.peak_flops[ULY_FP32] = 9.3e12;
    return c;
}

static int fits(const uly_model *m, const uly_workload *w, const uly_cluster *c, const uly_layout *l, int64_t b)
{
    static uly_result r;
    uly_workload wb = *w;
    wb.micro_batch = b;
    return uly_evaluate(m, &wb, c, l, &plan, &r) == ULY_OK && r.feasible;
}

/* The largest batch by scanning up from 1: the b that fits while b + 1
 * does not (0 when 1 does not fit). */
static int64_t scan_max_batch(const uly_model *m, const uly_workload *w, const uly_cluster *c, const uly_layout *l)
{
    int64_t b = 0;
    while (b < 100000 && fits(m, w, c, l, b + 1)) b++;
    return b;
}

static void check_max_batch(const char *what, const uly_model *m, const uly_workload *w, const uly_cluster *c,
                            const uly_layout *l, int64_t want_lo, int64_t want_hi)
{
    static uly_result at;
    int64_t got = -1;
    CHECK(uly_search_max_batch(m, w, c, l, 1LL << 40, &got, &at) == ULY_OK, "%s: searched", what);
    const int64_t want = scan_max_batch(m, w, c, l);
    CHECK(got == want, "%s: largest batch %lld, the scan finds %lld", what, (long long)got, (long long)want);
    CHECK(want >= want_lo && want <= want_hi, "%s: %lld outside the expected range [%lld, %lld]", what,
          (long long)want, (long long)want_lo, (long long)want_hi);
    CHECK(fits(m, w, c, l, got) && !fits(m, w, c, l, got + 1), "%s: %lld fits and %lld does not", what,
          (long long)got, (long long)got + 1);
    CHECK(at.feasible && at.micro_batch == got, "%s: the result returned is the one at %lld (%lld)", what,
          (long long)got, (long long)at.micro_batch);
    /* a bound below the limit is the answer */
    if (got > 3) {
        int64_t capped = 0;
        uly_search_max_batch(m, w, c, l, got - 2, &capped, &at);
        CHECK(capped == got - 2, "%s: at most %lld gives %lld", what, (long long)got - 2, (long long)capped);
    }
}

static void test_max_batch(void)
{
    const uly_model bert = fx_bert_base(), gpt = fx_gpt7b();
    const uly_cluster pc = p100(), ac = fx_a100(4);
    uly_workload wr = fx_work(512);
    wr.dtype = ULY_FP32;
    wr.causal = 0;
    wr.flash = 0;
    wr.recompute = ULY_RECOMPUTE_NONE;
    wr.zero_stage = 0;
    uly_layout l;
    /* the ranges: BERT Base's activations at seq 512 in fp32 without
     * recompute are some tens of MB per sequence per rank, so 14 GB hold
     * tens to a few thousand sequences; GPT-7B at 32K on 8 ranks holds a
     * handful */
    uly_layout_init(&l, ULY_STRAT_RSA, 1, 4, 1, 1);
    check_max_batch("bert rsa r4", &bert, &wr, &pc, &l, 10, 5000);
    uly_layout_init(&l, ULY_STRAT_MEGATRON_TP, 1, 1, 4, 1);
    check_max_batch("bert megatron-tp tp4", &bert, &wr, &pc, &l, 10, 5000);
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 8, 1, 1, 4);
    uly_workload wg = fx_work(32768);
    check_max_batch("gpt-7b ulysses u8 dp4", &gpt, &wg, &ac, &l, 1, 200);

    static uly_result at;
    int64_t got = -1;
    /* batch 1 over memory: 0, and the result says memory */
    uly_workload wl = fx_work(4 << 20);
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 8, 1, 1, 1);
    CHECK(uly_search_max_batch(&gpt, &wl, &ac, &l, 1000, &got, &at) == ULY_OK && got == 0,
          "4M tokens on 8 A100: nothing fits (%lld)", (long long)got);
    CHECK(!at.feasible && uly_result_priced(&at), "that result failed on memory alone");
    /* no valid shapes: 12 heads do not split 8 ways */
    uly_layout_init(&l, ULY_STRAT_MEGATRON_TP, 1, 1, 8, 1);
    got = -1;
    CHECK(uly_search_max_batch(&bert, &wr, &pc, &l, 1000, &got, &at) == ULY_OK && got == 0,
          "bert tp8: nothing fits (%lld)", (long long)got);
    int heads = 0;
    for (int i = 0; i < at.n_reasons; i++) heads |= at.reasons[i].code == ULY_R_HEADS_NOT_DIVISIBLE;
    CHECK(!uly_result_priced(&at) && heads, "bert tp8: a shape failure, heads not divisible");
    /* bad arguments */
    uly_workload wgb = wr;
    wgb.global_batch = 64;
    uly_layout_init(&l, ULY_STRAT_RSA, 1, 4, 1, 1);
    CHECK(uly_search_max_batch(&bert, &wgb, &pc, &l, 1000, &got, &at) == ULY_EINVAL, "a fixed global batch");
    CHECK(uly_search_max_batch(&bert, &wr, &pc, &l, 0, &got, &at) == ULY_EINVAL, "batch_hi 0");
    CHECK(uly_search_max_batch(&bert, &wr, &pc, &l, 10, NULL, &at) == ULY_EINVAL, "no out-pointer");
}

/* ----------------------------------------------------- TP inside a node */

static int tp_in_node(const uly_result *r, const uly_cluster *c, int64_t *nodes)
{
    uly_group_place gp;
    *nodes = -1;
    if (uly_group_place_get(&r->layout, c, ULY_GROUP_TP, &gp) != ULY_OK) return 0;
    *nodes = gp.nodes;
    for (int i = 0; i < r->n_reasons; i++)
        if (r->reasons[i].code == ULY_R_TP_SPANS_NODES) return 0;
    return gp.nodes == 1 && c->gpus_per_node % r->layout.tp == 0;
}

/* The best with TP pinned to each degree dividing the node, compared by
 * tokens/s (feasible) or memory over capacity (none feasible): what the
 * in-node search must match. */
static void best_pinned(const uly_model *m, const uly_workload *w, const uly_cluster *c, int64_t gpus,
                        double *tokens_per_s, double *over)
{
    static uly_result r;
    *tokens_per_s = 0;
    *over = INFINITY;
    for (int64_t t = 1; t <= c->gpus_per_node; t++) {
        if (c->gpus_per_node % t || gpus % t) continue;
        uly_search_opts o = {.pin_tp = t, .both_placements = 1};
        if (uly_search_best(m, w, c, gpus, ULY_STRAT_MEGATRON_SP, &o, &r, NULL) != ULY_OK) continue;
        if (r.feasible && r.time.tokens_per_s > *tokens_per_s) *tokens_per_s = r.time.tokens_per_s;
        if (!r.feasible && r.mem.total_bytes > 0 && r.mem.total_bytes / r.mem.capacity_bytes < *over)
            *over = r.mem.total_bytes / r.mem.capacity_bytes;
    }
}

/* min_tp: the smallest TP degree memory leaves (so the case exercises the
 * restriction), 1 when any fits. */
static void check_best_in_node(const char *what, const uly_model *m, const uly_workload *w, const uly_cluster *c,
                               int64_t gpus, int64_t min_tp)
{
    static uly_result best, free_best;
    uly_search_opts o = {.both_placements = 1};
    CHECK(uly_search_best_tp_in_node(m, w, c, gpus, ULY_STRAT_MEGATRON_SP, &o, &best, NULL) == ULY_OK, "%s: searched",
          what);
    int64_t nodes;
    CHECK(tp_in_node(&best, c, &nodes), "%s: tp%lld on %lld GPUs per node spans %lld nodes", what,
          (long long)best.layout.tp, (long long)c->gpus_per_node, (long long)nodes);
    CHECK(best.layout.tp >= min_tp, "%s: tp%lld, below tp%lld the layout cannot fit", what, (long long)best.layout.tp,
          (long long)min_tp);
    double tps, over;
    best_pinned(m, w, c, gpus, &tps, &over);
    if (tps > 0)
        CHECK(best.feasible && best.time.tokens_per_s == tps, "%s: %g tokens/s, the best pinned degree gives %g",
              what, best.time.tokens_per_s, tps);
    else
        CHECK(!best.feasible && best.mem.total_bytes / best.mem.capacity_bytes == over,
              "%s: none fits; closest %g of capacity, pinned %g", what,
              best.mem.total_bytes / best.mem.capacity_bytes, over);
    /* the free search may go across nodes; it is never worse */
    CHECK(uly_search_best(m, w, c, gpus, ULY_STRAT_MEGATRON_SP, &o, &free_best, NULL) == ULY_OK &&
              !uly_result_better(&best, &free_best),
          "%s: the unrestricted search is at least as good", what);
}

static void test_tp_in_node(void)
{
    const uly_model gpt = fx_gpt7b(), bert = fx_bert_base();
    const uly_cluster a100 = fx_a100(8);
    uly_workload w = fx_work(32768);
    w.zero_stage = 1;
    check_best_in_node("gpt-7b 32K 32 GPUs", &gpt, &w, &a100, 32, 1);
    check_best_in_node("gpt-7b 32K 4 GPUs (under a node)", &gpt, &w, &a100, 4, 1);
    /* 512K on 16 GPUs fits only at TP 8, a whole node */
    uly_workload wl = fx_work(1 << 19);
    wl.zero_stage = 1;
    check_best_in_node("gpt-7b 512K 16 GPUs", &gpt, &wl, &a100, 16, 8);
    /* 1M: not at TP 8 either; the closest in-node layout, where TP 16 across
     * two nodes would be the unrestricted search's */
    wl.seq = 1 << 20;
    check_best_in_node("gpt-7b 1M 16 GPUs", &gpt, &wl, &a100, 16, 8);
    {
        static uly_result across;
        uly_search_opts o = {.both_placements = 1};
        CHECK(uly_search_best(&gpt, &wl, &a100, 16, ULY_STRAT_MEGATRON_SP, &o, &across, NULL) == ULY_OK &&
                  across.feasible && across.layout.tp > a100.gpus_per_node,
              "gpt-7b 1M 16 GPUs: unrestricted, TP %lld across nodes fits (%d)", (long long)across.layout.tp,
              across.feasible);
    }
    /* six GPUs a node: degrees 1, 2, 3, 6 (4 would straddle two nodes) */
    uly_cluster six = fx_a100(4);
    six.gpus_per_node = 6;
    uly_workload wb = fx_work(8192);
    check_best_in_node("bert 8K 24 GPUs, 6 per node", &bert, &wb, &six, 24, 1);
    wb.seq = 3 << 18;
    check_best_in_node("bert 768K 24 GPUs, 6 per node", &bert, &wb, &six, 24, 3);
    wb.seq = 3 << 19;
    check_best_in_node("bert 1.5M 24 GPUs, 6 per node", &bert, &wb, &six, 24, 6);

    static uly_result at;
    uly_search_opts o = {.both_placements = 1};
    /* a strategy without TP: degree 1 only, the plain search */
    static uly_result plain;
    CHECK(uly_search_best(&gpt, &w, &a100, 64, ULY_STRAT_ULYSSES, &o, &plain, NULL) == ULY_OK &&
              uly_search_best_tp_in_node(&gpt, &w, &a100, 64, ULY_STRAT_ULYSSES, &o, &at, NULL) == ULY_OK &&
              at.time.tokens_per_s == plain.time.tokens_per_s && at.layout.ulysses == plain.layout.ulysses,
          "ulysses: the plain search's layout");
    CHECK(uly_search_best_tp_in_node(&gpt, &w, &a100, 0, ULY_STRAT_MEGATRON_SP, &o, &at, NULL) == ULY_EINVAL,
          "0 GPUs");
}

/* The degrees against a rank-by-rank look: t GPUs in a TP group (TP is
 * innermost: ranks t i .. t i + t - 1) all on one node of gpn, for every
 * group, and t dividing the GPUs. */
static void test_tp_degrees(void)
{
    static const int64_t cases[][2] = {{8, 64}, {8, 4}, {8, 12}, {6, 24}, {6, 9}, {16, 16}, {1, 5}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uly_cluster c = fx_a100(4);
        c.gpus_per_node = cases[k][0];
        const int64_t gpus = cases[k][1];
        int64_t d[64];
        const int n = uly_tp_in_node_degrees(&c, gpus, d, 64);
        int want_n = 0;
        for (int64_t t = 1; t <= 2 * c.gpus_per_node; t++) {
            int ok = gpus % t == 0;
            for (int64_t g = 0; ok && g < gpus / t; g++)
                ok = (g * t) / c.gpus_per_node == (g * t + t - 1) / c.gpus_per_node;
            int listed = 0;
            for (int i = 0; i < n; i++) listed |= d[i] == t;
            CHECK(ok == listed, "gpn %lld, %lld GPUs: TP %lld %s in a node but %s", (long long)c.gpus_per_node,
                  (long long)gpus, (long long)t, ok ? "stays" : "does not stay", listed ? "listed" : "not listed");
            want_n += ok;
        }
        CHECK(n == want_n, "gpn %lld, %lld GPUs: %d degrees, want %d", (long long)c.gpus_per_node, (long long)gpus, n,
              want_n);
        for (int i = 1; i < n; i++) CHECK(d[i] > d[i - 1], "ascending");
    }
    uly_cluster c = fx_a100(1);
    int64_t d[2];
    CHECK(uly_tp_in_node_degrees(&c, 64, d, 2) == 2 && d[0] == 1 && d[1] == 2, "at most max, the smallest first");
    CHECK(uly_tp_in_node_degrees(&c, 0, d, 2) == -1 && uly_tp_in_node_degrees(NULL, 8, d, 2) == -1, "bad arguments");
}

int main(void)
{
    test_order_rules();
    test_order_agrees_with_search();
    test_max_batch();
    test_tp_degrees();
    test_tp_in_node();
    FX_DONE();
}
