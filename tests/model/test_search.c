/* The searches against brute force written here: uly_search_best returns the
 * feasible layout with the most tokens/s of every split of the GPUs into the
 * strategy's degrees x data parallel, or, when none fits, the closest (least
 * memory over capacity, a memory failure before a shape failure) with its
 * reasons; it honours pinned degrees; both_placements can only help, and
 * does when the sequence group is better off across nodes. uly_search_max_seq
 * returns a length that fits while no layout fits any longer one up to the
 * bound; uly_search_min_gpus the fewest GPUs (powers of two inside a node,
 * the whole node, whole nodes past it) on which a layout fits.
 * uly_search_each hands out every layout the search prices: in the default
 * order, exactly the layouts brute force finds evaluable, each as its own
 * evaluation prices it, as many as the search's count, and their best is
 * uly_search_best's. Tiny model and round-rate
 * cluster of fixtures.h, so every evaluation is cheap. */
#include "fixtures.h"

static uly_plan plan;

/* Calls visit on every layout of strategy s on `gpus` GPUs (u r t dp = gpus,
 * degrees the strategy does not use at 1) in the default rank order, and,
 * with all_orders, in each of the 24 orders of the four groups. */
typedef void (*visit_fn)(const uly_layout *l, void *ctx);
static void every_layout(uly_strategy_id s, int64_t gpus, int all_orders, visit_fn visit, void *ctx)
{
    const uly_strategy *st = uly_strategy_get(s);
    static const uly_group g4[4] = {ULY_GROUP_TP, ULY_GROUP_ULYSSES, ULY_GROUP_RING, ULY_GROUP_DP};
    for (int64_t u = 1; u <= gpus; u++)
        for (int64_t r = 1; r <= gpus / u; r++)
            for (int64_t t = 1; t <= gpus / (u * r); t++) {
                if (gpus % (u * r * t)) continue;
                if ((u > 1 && !st->uses_ulysses) || (r > 1 && !st->uses_ring) || (t > 1 && !st->uses_tp)) continue;
                uly_layout l;
                uly_layout_init(&l, s, u, r, t, gpus / (u * r * t));
                if (!all_orders) {
                    visit(&l, ctx);
                    continue;
                }
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++)
                        for (int k = 0; k < 4; k++) {
                            const int q = 6 - i - j - k;
                            if (i == j || i == k || j == k || q < 0 || q > 3 || q == i || q == j || q == k) continue;
                            l.order[0] = g4[i]; l.order[1] = g4[j]; l.order[2] = g4[k]; l.order[3] = g4[q];
                            visit(&l, ctx);
                        }
            }
}

typedef struct brute {
    const uly_model *m;
    const uly_workload *w;
    const uly_cluster *c;
    int64_t pin_u, pin_r, pin_t;
    int n, n_feasible;
    double best_tps;    /* most tokens/s of a feasible layout */
    double least_over;  /* least total / capacity of a layout whose only failure is memory */
    int n_oom;
} brute;

static void brute_visit(const uly_layout *l, void *ctx)
{
    brute *b = ctx;
    if ((b->pin_u && l->ulysses != b->pin_u) || (b->pin_r && l->ring != b->pin_r) || (b->pin_t && l->tp != b->pin_t))
        return;
    uly_result r;
    if (uly_evaluate(b->m, b->w, b->c, l, &plan, &r) != ULY_OK) return;
    b->n++;
    if (r.feasible) {
        b->n_feasible++;
        if (r.time.tokens_per_s > b->best_tps) b->best_tps = r.time.tokens_per_s;
    } else if (r.mem.total_bytes > 0) { /* priced: every shape check passed */
        const double over = r.mem.total_bytes / r.mem.capacity_bytes;
        if (!b->n_oom || over < b->least_over) b->least_over = over;
        b->n_oom++;
    }
}

static brute run_brute(const uly_model *m, const uly_workload *w, const uly_cluster *c, uly_strategy_id s,
                       int64_t gpus, int all_orders, const uly_search_opts *o)
{
    brute b = {.m = m, .w = w, .c = c};
    if (o) {
        b.pin_u = o->pin_ulysses;
        b.pin_r = o->pin_ring;
        b.pin_t = o->pin_tp;
    }
    every_layout(s, gpus, all_orders, brute_visit, &b);
    return b;
}

/* the layout's own evaluation agrees with the search's result */
static void same_as_evaluated(const uly_model *m, const uly_workload *w, const uly_cluster *c, const uly_result *got,
                              const char *what)
{
    uly_result r;
    CHECK(uly_evaluate(m, w, c, &got->layout, &plan, &r) == ULY_OK && r.feasible == got->feasible &&
              r.time.tokens_per_s == got->time.tokens_per_s,
          "%s: the returned layout evaluates to %.6g tokens/s (feasible %d), the search said %.6g (%d)", what,
          r.time.tokens_per_s, r.feasible, got->time.tokens_per_s, got->feasible);
}

static void best_is_brute_force(void)
{
    const uly_model m = fx_tiny();
    uly_cluster c = fx_unit(2);
    uly_workload w = fx_work(65536);
    const uly_strategy_id strats[] = {ULY_STRAT_ULYSSES, ULY_STRAT_RING, ULY_STRAT_USP, ULY_STRAT_MEGATRON_SP,
                                      ULY_STRAT_ALLGATHER_CP};
    /* capacities: every layout fits; only some do (the sequence must split
     * a few ways) */
    const double caps[] = {1e12, 230e6};
    for (size_t ci = 0; ci < sizeof caps / sizeof caps[0]; ci++)
        for (size_t si = 0; si < sizeof strats / sizeof strats[0]; si++)
            for (int64_t gpus = 8; gpus <= 16; gpus += 8) {
                c.gpu.hbm_bytes = caps[ci];
                const brute b = run_brute(&m, &w, &c, strats[si], gpus, 0, NULL);
                uly_result got;
                uly_search_stats stats = {0};
                const char *name = uly_strategy_get(strats[si])->name;
                CHECK(uly_search_best(&m, &w, &c, gpus, strats[si], NULL, &got, &stats) == ULY_OK, "%s on %lld: search",
                      name, (long long)gpus);
                CHECK(b.n_feasible > 0 && (ci == 0 || b.n_feasible < b.n), "%s on %lld, capacity %g: %d of %d fit",
                      name, (long long)gpus, caps[ci], b.n_feasible, b.n);
                CHECK(got.feasible && got.time.tokens_per_s == b.best_tps,
                      "%s on %lld GPUs, capacity %g: search %.6g tokens/s (feasible %d), brute force %.6g", name,
                      (long long)gpus, caps[ci], got.time.tokens_per_s, got.feasible, b.best_tps);
                CHECK(uly_layout_gpus(&got.layout) == gpus && got.layout.strategy == strats[si],
                      "%s: layout of %lld GPUs", name, (long long)uly_layout_gpus(&got.layout));
                CHECK(stats.evaluated >= (uint64_t)b.n && stats.feasible >= (uint64_t)b.n_feasible,
                      "%s: stats %llu evaluated, %llu feasible; %d layouts, %d fit", name,
                      (unsigned long long)stats.evaluated, (unsigned long long)stats.feasible, b.n, b.n_feasible);
                same_as_evaluated(&m, &w, &c, &got, name);
            }
}

static void none_fits(void)
{
    const uly_model m = fx_tiny();
    uly_cluster c = fx_unit(2);
    c.gpu.hbm_bytes = 1e6; /* below every layout's model states and activations */
    const uly_workload w = fx_work(65536);
    for (int64_t gpus = 8; gpus <= 16; gpus += 8) {
        const brute b = run_brute(&m, &w, &c, ULY_STRAT_ULYSSES, gpus, 0, NULL);
        uly_result got;
        CHECK(b.n_feasible == 0 && b.n_oom > 0, "precondition: none of %d fits, %d run out of memory", b.n, b.n_oom);
        CHECK(uly_search_best(&m, &w, &c, gpus, ULY_STRAT_ULYSSES, NULL, &got, NULL) == ULY_OK, "search, none fits");
        CHECK(!got.feasible && fx_has_reason(&got, ULY_R_OUT_OF_MEMORY, 1), "none fits: feasible %d, out of memory %d",
              got.feasible, fx_has_reason(&got, ULY_R_OUT_OF_MEMORY, 1));
        /* u 8 (more ways than the 4 heads) fails its shapes: not the closest */
        CHECK(got.layout.ulysses <= 4, "the closest is a memory failure, not u %lld > 4 heads",
              (long long)got.layout.ulysses);
        CHECK(got.mem.total_bytes / got.mem.capacity_bytes == b.least_over,
              "closest: %.6g x capacity, brute force least %.6g x", got.mem.total_bytes / got.mem.capacity_bytes,
              b.least_over);
    }
    /* only shape failures: Ulysses pinned at 8 ways over 4 heads */
    uly_search_opts o = {.pin_ulysses = 8};
    uly_result got;
    CHECK(uly_search_best(&m, &w, &c, 8, ULY_STRAT_ULYSSES, &o, &got, NULL) == ULY_OK, "search u pinned at 8");
    CHECK(!got.feasible && got.layout.ulysses == 8 && fx_has_reason(&got, ULY_R_DEGREE_GT_HEADS, 1),
          "u 8 over 4 heads: feasible %d, u %lld, its reason given %d", got.feasible, (long long)got.layout.ulysses,
          fx_has_reason(&got, ULY_R_DEGREE_GT_HEADS, 1));
    /* no layout at all: a pin that does not divide the GPUs */
    o.pin_ulysses = 3;
    CHECK(uly_search_best(&m, &w, &c, 8, ULY_STRAT_ULYSSES, &o, &got, NULL) == ULY_EINVAL, "u 3 on 8 GPUs: EINVAL");
}

static void pins(void)
{
    const uly_model m = fx_tiny();
    uly_cluster c = fx_unit(2);
    const uly_workload w = fx_work(65536);
    static const struct {
        uly_strategy_id s;
        uly_search_opts o;
    } cases[] = {
        {ULY_STRAT_USP, {.pin_ulysses = 2}},
        {ULY_STRAT_USP, {.pin_ring = 4}},
        {ULY_STRAT_USP, {.pin_ulysses = 1, .pin_ring = 2}},
        {ULY_STRAT_RING, {.pin_ring = 2}},
        {ULY_STRAT_MEGATRON_SP, {.pin_tp = 2}},
        {ULY_STRAT_MEGATRON_TP, {.pin_tp = 4}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const uly_search_opts *o = &cases[i].o;
        const brute b = run_brute(&m, &w, &c, cases[i].s, 16, 0, o);
        uly_result got;
        CHECK(uly_search_best(&m, &w, &c, 16, cases[i].s, o, &got, NULL) == ULY_OK, "pin case %zu: search", i);
        CHECK((!o->pin_ulysses || got.layout.ulysses == o->pin_ulysses) &&
                  (!o->pin_ring || got.layout.ring == o->pin_ring) && (!o->pin_tp || got.layout.tp == o->pin_tp),
              "pin case %zu (%s): got u %lld r %lld t %lld", i, uly_strategy_get(cases[i].s)->name,
              (long long)got.layout.ulysses, (long long)got.layout.ring, (long long)got.layout.tp);
        CHECK(got.feasible && got.time.tokens_per_s == b.best_tps, "pin case %zu: %.6g tokens/s, brute force %.6g", i,
              got.time.tokens_per_s, b.best_tps);
    }
}

/* both_placements tries more rank orders: never worse than the default
 * order's best, never better than the best of all 24 orders; and on
 * nodes of 2 GPUs whose in-node links are slower than the NICs, Ulysses'
 * all-to-alls are better off across nodes with data parallel inside */
static void placements(void)
{
    const uly_model m = fx_tiny();
    const uly_workload w = fx_work(65536);
    for (int rigged = 0; rigged < 2; rigged++) {
        uly_cluster c = fx_unit(4);
        c.gpu.hbm_bytes = 230e6; /* u 1 x dp 8 does not fit: the sequence must split */
        if (rigged) {
            c.gpus_per_node = 2;
            c.intra_bw_Bps = 1e7;
            c.nic_bw_Bps = 1e9;
        }
        const uly_strategy_id strats[] = {ULY_STRAT_ULYSSES, ULY_STRAT_USP};
        for (size_t si = 0; si < 2; si++) {
            const char *name = uly_strategy_get(strats[si])->name;
            const brute one = run_brute(&m, &w, &c, strats[si], 8, 0, NULL);
            const brute all = run_brute(&m, &w, &c, strats[si], 8, 1, NULL);
            const uly_search_opts o = {.both_placements = 1};
            uly_result got, plain;
            CHECK(uly_search_best(&m, &w, &c, 8, strats[si], &o, &got, NULL) == ULY_OK &&
                      uly_search_best(&m, &w, &c, 8, strats[si], NULL, &plain, NULL) == ULY_OK,
                  "%s: search", name);
            CHECK(plain.time.tokens_per_s == one.best_tps, "%s: default order %.6g, brute force %.6g", name,
                  plain.time.tokens_per_s, one.best_tps);
            CHECK(got.feasible && got.time.tokens_per_s >= one.best_tps && got.time.tokens_per_s <= all.best_tps,
                  "%s, rigged %d: both placements %.6g, default order's best %.6g, all orders' %.6g", name, rigged,
                  got.time.tokens_per_s, one.best_tps, all.best_tps);
            same_as_evaluated(&m, &w, &c, &got, name);
            if (rigged && strats[si] == ULY_STRAT_ULYSSES) {
                CHECK(got.time.tokens_per_s > one.best_tps, "rigged: both placements %.6g should beat %.6g",
                      got.time.tokens_per_s, one.best_tps);
                int dp_at = -1, u_at = -1;
                for (int i = 0; i < 4; i++) {
                    if (got.layout.order[i] == ULY_GROUP_DP) dp_at = i;
                    if (got.layout.order[i] == ULY_GROUP_ULYSSES) u_at = i;
                }
                CHECK(got.layout.ulysses > 1 && got.layout.dp > 1 && dp_at < u_at,
                      "rigged: want data parallel inside Ulysses, got u %lld dp %lld, order dp %d u %d",
                      (long long)got.layout.ulysses, (long long)got.layout.dp, dp_at, u_at);
            }
        }
    }
}

/* no layout fits any sequence in (lo, hi] */
typedef struct longer {
    const uly_model *m;
    const uly_workload *w;
    const uly_cluster *c;
    int64_t lo, hi;
    int64_t fits_seq; /* a longer sequence that fits, 0 when none */
    uly_layout fits_l;
} longer;

static void longer_visit(const uly_layout *l, void *ctx)
{
    longer *k = ctx;
    uly_workload ws = *k->w;
    for (int64_t n = k->lo + 1; n <= k->hi && !k->fits_seq; n++) {
        ws.seq = n;
        uly_result r;
        if (uly_evaluate(k->m, &ws, k->c, l, &plan, &r) == ULY_OK && r.feasible) {
            k->fits_seq = n;
            k->fits_l = *l;
        }
    }
}

static int fits_at(const uly_model *m, const uly_workload *w, const uly_cluster *c, const uly_layout *l, int64_t seq)
{
    uly_workload ws = *w;
    ws.seq = seq;
    uly_result r;
    return uly_evaluate(m, &ws, c, l, &plan, &r) == ULY_OK && r.feasible;
}

/* The longest sequence: it fits (on the layout returned), and no layout fits
 * anything longer, checked for every length up to 64 tokens beyond it (more
 * than any layout's granule: u r t, twice that for a causal ring); with a
 * bound, the longest up to the bound. */
static void max_seq(void)
{
    const uly_model m = fx_tiny();
    uly_cluster c = fx_unit(1);
    c.gpu.hbm_bytes = 40e6;
    const uly_workload w = fx_work(1024);
    /* every strategy: megatron-tp keeps the whole sequence on each TP rank,
     * so its lengths need not divide by t */
    const uly_strategy_id strats[] = {ULY_STRAT_ULYSSES,    ULY_STRAT_RING,     ULY_STRAT_USP,  ULY_STRAT_RSA,
                                      ULY_STRAT_ALLGATHER_CP, ULY_STRAT_MEGATRON_SP, ULY_STRAT_MEGATRON_TP};
    for (size_t si = 0; si < sizeof strats / sizeof strats[0]; si++) {
        const char *name = uly_strategy_get(strats[si])->name;
        for (int bounded = 0; bounded < 2; bounded++) {
            int64_t got = 0;
            const int64_t hi = bounded ? 3001 : (int64_t)1 << 30;
            uly_result at;
            CHECK(uly_search_max_seq(&m, &w, &c, 8, strats[si], NULL, hi, &got, &at) == ULY_OK, "%s: max-seq", name);
            CHECK(got > 0 && got <= hi && at.feasible && fits_at(&m, &w, &c, &at.layout, got),
                  "%s: %lld tokens (bound %lld) should fit on the layout returned (feasible %d)", name, (long long)got,
                  (long long)hi, at.feasible);
            longer k = {.m = &m, .w = &w, .c = &c, .lo = got, .hi = got + 64 < hi ? got + 64 : hi};
            every_layout(strats[si], 8, 0, longer_visit, &k);
            CHECK(k.fits_seq == 0, "%s: max-seq %lld, but u %lld r %lld dp %lld fits %lld", name, (long long)got,
                  (long long)k.fits_l.ulysses, (long long)k.fits_l.ring, (long long)k.fits_l.dp,
                  (long long)k.fits_seq);
            if (!bounded) CHECK(got > 3001 + 64, "%s: the unbounded maximum %lld should exceed the bound tried next", name,
                                (long long)got);
        }
    }
    /* none fits: 0 */
    c.gpu.hbm_bytes = 4e5; /* below ZeRO-3's 16 P / 8 = 453,248 B of model states */
    int64_t got = -1;
    uly_result at;
    CHECK(uly_search_max_seq(&m, &w, &c, 8, ULY_STRAT_ULYSSES, NULL, 1 << 20, &got, &at) == ULY_OK && got == 0,
          "nothing fits: max-seq %lld, want 0", (long long)got);
}

/* Fewest GPUs: the candidates are 1, 2, 4 inside a node of 8, then whole
 * nodes; the one returned fits and no smaller candidate does. The ring
 * shrinks activations with its degree: at this capacity it needs 3 nodes. */
static void min_gpus(void)
{
    const uly_model m = fx_tiny();
    uly_cluster c = fx_unit(8);
    c.gpu.hbm_bytes = 35e6; /* r 24: 31.2 MB; r 16 on 16 GPUs: 46.7 MB */
    const uly_workload w = fx_work(98304); /* 3 x 32K: splits 2r ways for r = 24 */
    int64_t got = -1;
    uly_result at;
    CHECK(uly_search_min_gpus(&m, &w, &c, ULY_STRAT_RING, NULL, 64, &got, &at) == ULY_OK, "min-gpus");
    CHECK(got == 24 && at.feasible && uly_layout_gpus(&at.layout) == 24, "min-gpus %lld (feasible %d), want 24",
          (long long)got, at.feasible);
    const int64_t cand[] = {1, 2, 4, 8, 16, 24};
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
        const brute b = run_brute(&m, &w, &c, ULY_STRAT_RING, cand[i], 0, NULL);
        CHECK((b.n_feasible > 0) == (cand[i] == 24), "ring on %lld GPUs: %d of %d layouts fit", (long long)cand[i],
              b.n_feasible, b.n);
    }
    /* a bound below it: 0 */
    CHECK(uly_search_min_gpus(&m, &w, &c, ULY_STRAT_RING, NULL, 16, &got, &at) == ULY_OK && got == 0,
          "bound 16: min-gpus %lld, want 0", (long long)got);

    /* a node of 6 GPUs (72 on GB200 NVL72): after 1, 2, 4 the whole node is
     * tried, not 8 rounded up to 12 nodes' worth; the capacity lies between
     * what 6 and 4 GPUs need at the least */
    uly_cluster c6 = fx_unit(4);
    c6.gpus_per_node = 6;
    c6.gpu.hbm_bytes = 1; /* nothing fits: each count's least need, relative to 1 byte */
    const double need6 = run_brute(&m, &w, &c6, ULY_STRAT_RING, 6, 0, NULL).least_over;
    const double need4 = run_brute(&m, &w, &c6, ULY_STRAT_RING, 4, 0, NULL).least_over;
    CHECK(need6 > 0 && need6 < need4, "6 GPUs need %.6g bytes, 4 need %.6g: want fewer on 6", need6, need4);
    c6.gpu.hbm_bytes = (need6 + need4) / 2;
    CHECK(uly_search_min_gpus(&m, &w, &c6, ULY_STRAT_RING, NULL, 24, &got, &at) == ULY_OK && got == 6 && at.feasible,
          "6-GPU nodes: min-gpus %lld, want 6 (one whole node)", (long long)got);
}

/* uly_search_each's visitor: counts, checks each visit against the layout's
 * own evaluation, and keeps the best feasible tokens/s and the default-order
 * layouts seen */
typedef struct each_seen {
    const uly_model *m;
    const uly_cluster *c;
    int n, n_default, n_mismatch;
    double best_tps;
} each_seen;

static void each_visit(void *ctx, const uly_layout *l, const uly_workload *w, const uly_result *r)
{
    each_seen *e = ctx;
    uly_result own;
    e->n++;
    if (uly_evaluate(e->m, w, e->c, l, &plan, &own) != ULY_OK || own.feasible != r->feasible ||
        own.time.step_s != r->time.step_s || own.mem.total_bytes != r->mem.total_bytes)
        e->n_mismatch++;
    if (r->feasible && r->time.tokens_per_s > e->best_tps) e->best_tps = r->time.tokens_per_s;
    uly_layout d;
    uly_layout_init(&d, l->strategy, l->ulysses, l->ring, l->tp, l->dp);
    e->n_default += !memcmp(d.order, l->order, sizeof d.order) && w->micro_batch == 1;
}

static void each_is_every_layout(void)
{
    const uly_model m = fx_tiny();
    uly_cluster c = fx_unit(4);
    c.gpu.hbm_bytes = 230e6; /* only some fit */
    const uly_strategy_id strats[] = {ULY_STRAT_ULYSSES, ULY_STRAT_RING, ULY_STRAT_USP, ULY_STRAT_MEGATRON_SP};
    for (int batch = 0; batch < 2; batch++)
        for (size_t si = 0; si < sizeof strats / sizeof strats[0]; si++) {
            uly_workload w = fx_work(65536);
            uly_search_opts o = {.both_placements = 1};
            if (batch) {
                w.global_batch = 16; /* micro-batches 1, 2 (dp 8), 1, 2, 4 (dp 4), ... */
                o.search_micro_batch = 1;
            }
            const char *name = uly_strategy_get(strats[si])->name;
            const brute b = run_brute(&m, &w, &c, strats[si], 8, 0, NULL);
            each_seen e = {.m = &m, .c = &c};
            uly_search_stats st = {0, 0};
            uly_result best;
            CHECK(uly_search_each(&m, &w, &c, 8, strats[si], &o, each_visit, &e, &st) == ULY_OK &&
                      uly_search_best(&m, &w, &c, 8, strats[si], &o, &best, NULL) == ULY_OK,
                  "%s: search", name);
            CHECK(e.n == (int)st.evaluated && e.n_mismatch == 0, "%s, batch %d: %d visits, %llu evaluated, %d unlike "
                  "their own evaluation", name, batch, e.n, (unsigned long long)st.evaluated, e.n_mismatch);
            /* with one micro-batch, every evaluable split once in the default order; the other placements on
             * top (megatron-sp has a TP group alone: no other placement) */
            CHECK(e.n_default == b.n && (e.n > b.n || strats[si] == ULY_STRAT_MEGATRON_SP), "%s, batch %d: %d default-order visits of %d visits, brute force %d",
                  name, batch, e.n_default, e.n, b.n);
            CHECK(best.feasible && e.best_tps == best.time.tokens_per_s, "%s, batch %d: best visit %.6g, search %.6g",
                  name, batch, e.best_tps, best.time.tokens_per_s);
        }
}

int main(void)
{
    each_is_every_layout();
    best_is_brute_force();
    none_fits();
    pins();
    placements();
    max_seq();
    min_gpus();
    FX_DONE();
}
