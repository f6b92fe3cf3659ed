/* A search builds the plan of a split once and re-places it for each
 * further rank order of its groups (uly_evaluate_reordered, with the compute
 * ops' times the first evaluation kept): the plan and
 * the result must be those uly_evaluate gives for that order from scratch,
 * byte for byte, on every strategy, on clusters where the order moves
 * traffic between tiers (NVSwitch nodes, PCIe switches and sockets, a
 * torus), for layouts that fit, that run out of memory and whose shapes are
 * impossible; and uly_search_best_plan with both placements must return the
 * plan uly_evaluate builds for its winner. */
#include "fixtures.h"
#include "../../model/internal.h"

static uly_plan plan_re, plan_new;
static uly_result res_re, res_new;
static double compute_s[ULY_PLAN_MAX_OPS]; /* the compute ops' times the first evaluation kept */

static const uly_group g4[4] = {ULY_GROUP_TP, ULY_GROUP_ULYSSES, ULY_GROUP_RING, ULY_GROUP_DP};

/* the k-th of the 24 orders of the four groups */
static void order_set(uly_layout *l, int k)
{
    int left[4] = {0, 1, 2, 3}, n = 4;
    for (int i = 0; i < 4; i++) {
        const int f = i == 0 ? 6 : i == 1 ? 2 : 1; /* (3 - i)! */
        const int j = (k / f) % n;
        l->order[i] = g4[left[j]];
        for (int q = j; q < n - 1; q++) left[q] = left[q + 1];
        n--;
    }
}

static int checked, differed, fits;

/* evaluates l in order 0, then walks it through every order re-placing the
 * same plan, comparing each step with a fresh evaluation */
static void walk_orders(const uly_model *m, const uly_workload *w, const uly_cluster *c, uly_layout l, const char *what)
{
    memset(&plan_re, 0, sizeof plan_re);
    memset(&res_re, 0, sizeof res_re);
    order_set(&l, 0);
    for (int i = 0; i < ULY_PLAN_MAX_OPS; i++) compute_s[i] = -1; /* a time not kept shows */
    if (uly_evaluate_keep(m, w, c, &l, &plan_re, &res_re, compute_s) != ULY_OK) return; /* reuse needs an evaluated plan */
    double prev_s = res_re.time.step_s;
    int prev_tiers = res_re.comm_tiers;
    for (int step = 1; step < 24; step++) {
        const int k = (step * 7) % 24; /* jump about, so consecutive orders differ in more than one place */
        order_set(&l, k);
        memset(&plan_new, 0, sizeof plan_new);
        memset(&res_new, 0, sizeof res_new);
        const uly_status a = uly_evaluate_reordered(m, w, c, &l, &plan_re, &res_re, compute_s);
        const uly_status b = uly_evaluate(m, w, c, &l, &plan_new, &res_new);
        checked++;
        const int same_plan = plan_re.n_ops == plan_new.n_ops &&
                              memcmp(&plan_re, &plan_new, offsetof(uly_plan, ops) + sizeof(uly_op) * (size_t)plan_new.n_ops) == 0;
        const int same_res = memcmp(&res_re, &res_new, sizeof res_new) == 0;
        /* the order changed the price or the tiers: the reuse had to follow */
        differed += res_new.time.step_s != prev_s || res_new.comm_tiers != prev_tiers;
        prev_s = res_new.time.step_s;
        prev_tiers = res_new.comm_tiers;
        CHECK(a == b && same_plan && same_res,
              "%s: %s u %lld r %lld t %lld dp %lld order %d: status %d/%d, plan %s, result %s (step %.9g vs %.9g)",
              what, uly_strategy_get(l.strategy)->name, (long long)l.ulysses, (long long)l.ring, (long long)l.tp,
              (long long)l.dp, k, (int)a, (int)b, same_plan ? "same" : "differs", same_res ? "same" : "differs",
              res_re.time.step_s, res_new.time.step_s);
        if (a != ULY_OK) return;
    }
}

/* what a walk over the splits works on, and the best it has seen */
typedef struct cfg {
    const uly_model *m;
    const uly_workload *w;
    const uly_cluster *c;
    const char *what;
    double best_tps;
    int64_t best_b;
} cfg;

/* Calls visit on every split of `gpus` GPUs into power-of-two degrees the
 * strategy uses, in the default order. */
static void splits_each(uly_strategy_id s, int64_t gpus, void (*visit)(uly_layout *l, cfg *x), cfg *x)
{
    const uly_strategy *st = uly_strategy_get(s);
    for (int64_t u = 1; u <= gpus; u *= 2)
        for (int64_t r = 1; u * r <= gpus; r *= 2)
            for (int64_t t = 1; u * r * t <= gpus; t *= 2) {
                if ((u > 1 && !st->uses_ulysses) || (r > 1 && !st->uses_ring) || (t > 1 && !st->uses_tp)) continue;
                uly_layout l;
                uly_layout_init(&l, s, u, r, t, gpus / (u * r * t));
                visit(&l, x);
            }
}

static void walk_visit(uly_layout *l, cfg *x) { walk_orders(x->m, x->w, x->c, *l, x->what); }

static void every_split(const uly_model *m, const uly_workload *w, const uly_cluster *c, int64_t gpus, const char *what)
{
    cfg x = {.m = m, .w = w, .c = c, .what = what};
    for (int s = 0; s < ULY_STRAT_COUNT; s++) splits_each((uly_strategy_id)s, gpus, walk_visit, &x);
}

/* a PCIe server: 8 GPUs, 2 per switch, two sockets, peer-to-peer off */
static uly_cluster pcie(void)
{
    uly_cluster c = fx_a100(4);
    c.intra_switched = 0, c.intra_bw_Bps = 25e9, c.pcie_p2p = 0;
    c.pcie_per_switch = 2, c.pcie_uplink_bw_Bps = 20e9, c.socket_bw_Bps = 10e9;
    return c;
}

/* the search's winner and its plan against uly_evaluate of that layout */
static void search_plan(const uly_model *m, const uly_workload *w, const uly_cluster *c, int64_t gpus)
{
    const uly_search_opts o = {.both_placements = 1};
    for (int s = 0; s < ULY_STRAT_COUNT; s++) {
        static uly_plan best_plan;
        uly_result best;
        memset(&best_plan, 0, sizeof best_plan);
        memset(&plan_new, 0, sizeof plan_new);
        if (uly_search_best_plan(m, w, c, gpus, (uly_strategy_id)s, &o, &best, &best_plan, NULL) != ULY_OK) continue;
        CHECK(uly_evaluate(m, w, c, &best.layout, &plan_new, &res_new) == ULY_OK, "evaluate the winner");
        CHECK(best_plan.n_ops == plan_new.n_ops &&
                  memcmp(&best_plan, &plan_new, offsetof(uly_plan, ops) + sizeof(uly_op) * (size_t)plan_new.n_ops) == 0 &&
                  best.time.step_s == res_new.time.step_s && best.comm_tiers == res_new.comm_tiers,
              "%s on %lld GPUs: the search's plan is not the winner's", uly_strategy_get((uly_strategy_id)s)->name,
              (long long)gpus);
    }
}

/* With the micro-batch search each order tries several micro-batches, so no
 * order may start from the plan the one before left (built for the last
 * micro-batch): the search's best against every (split, order, micro-batch)
 * evaluated from scratch */
static void micro_visit(uly_layout *l, cfg *x)
{
    const uly_workload *w = x->w;
    for (int k = 0; k < 24; k++) {
        order_set(l, k);
        if (l->order[0] != ULY_GROUP_TP) continue; /* the search keeps TP innermost */
        for (int64_t b = 1; b <= w->global_batch / l->dp; b++) {
            uly_workload wb = *w;
            wb.micro_batch = b;
            if (w->global_batch % (l->dp * b)) continue;
            if (uly_evaluate(x->m, &wb, x->c, l, &plan_new, &res_new) == ULY_OK && res_new.feasible &&
                res_new.time.tokens_per_s > x->best_tps) {
                x->best_tps = res_new.time.tokens_per_s;
                x->best_b = b;
            }
        }
    }
}

static void search_micro(const uly_model *m, const uly_workload *w, const uly_cluster *c, int64_t gpus)
{
    const uly_search_opts o = {.both_placements = 1, .search_micro_batch = 1};
    for (int s = 0; s < ULY_STRAT_COUNT; s++) {
        const char *name = uly_strategy_get((uly_strategy_id)s)->name;
        cfg x = {.m = m, .w = w, .c = c, .what = "micro"};
        splits_each((uly_strategy_id)s, gpus, micro_visit, &x);
        uly_result got;
        const int found = uly_search_best(m, w, c, gpus, (uly_strategy_id)s, &o, &got, NULL) == ULY_OK && got.feasible;
        if (x.best_tps == 0) { /* nothing fits at all */
            CHECK(!found, "%s: the search found a fit no candidate has", name);
            continue;
        }
        fits++;
        CHECK(found && got.time.tokens_per_s == x.best_tps && got.micro_batch == x.best_b,
              "%s, micro-batches searched: the search's best %.9g tokens/s at micro-batch %lld, every candidate's "
              "%.9g at %lld", name, found ? got.time.tokens_per_s : 0.0, (long long)got.micro_batch, x.best_tps,
              (long long)x.best_b);
    }
}

int main(void)
{
    const uly_model llama = fx_llama3_8b(), tiny = fx_tiny();
    uly_workload w = fx_work(1 << 17);
    uly_cluster a100 = fx_a100(8), pc = pcie(), torus = fx_a100(8);
    torus.topo = ULY_TOPO_TORUS;
    torus.torus_dims = 2;
    torus.torus_link_bw_Bps = 10e9;
    a100.overlap_miss = 0.25;
    a100.gpu.comm_slowdown = 0.1;
    every_split(&llama, &w, &a100, 64, "a100");
    every_split(&llama, &w, &pc, 32, "pcie");
    every_split(&llama, &w, &torus, 64, "torus");
    uly_workload small = fx_work(1 << 20); /* most layouts run out of memory */
    every_split(&llama, &small, &a100, 16, "out of memory");
    uly_workload odd = fx_work(3 * 4096 + 8); /* many splits do not divide it */
    every_split(&tiny, &odd, &a100, 16, "shapes");
    uly_workload zero1 = fx_work(1 << 16);
    zero1.zero_stage = 1;
    zero1.global_batch = 64;
    every_split(&tiny, &zero1, &pc, 16, "zero-1");
    CHECK(checked > 5000 && differed > checked / 4, "%d orders checked, %d of them changed the price", checked, differed);
    search_plan(&llama, &w, &a100, 64);
    search_plan(&llama, &w, &pc, 32);
    for (int tight = 0; tight < 3; tight++) {
        /* nodes of 2 GPUs whose in-node links are slower than the NICs:
         * data parallel inside, sequence across wins; long sequences, so
         * the sequence must split; less memory, so the largest
         * micro-batches stop fitting */
        uly_cluster c2 = fx_a100(8);
        c2.gpus_per_node = 2;
        c2.intra_bw_Bps = 1e9;
        c2.nic_bw_Bps = 50e9;
        c2.gpu.hbm_bytes = tight == 0 ? 80e9 : tight == 1 ? 40e9 : 20e9;
        uly_workload micro = fx_work(1 << 16);
        micro.global_batch = 16;
        search_micro(&llama, &micro, &c2, 16);
    }
    CHECK(fits > 12, "%d micro-batch searches had a fit", fits);
    printf("%d micro-batch searches with a fit checked\n", fits);
    printf("%d re-placed evaluations checked, %d of them priced differently from the order before\n", checked, differed);
    FX_DONE();
}
