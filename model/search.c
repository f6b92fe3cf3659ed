/* search.c: layouts for a GPU count, the best plan of a strategy, the
 * longest sequence that fits, and the fewest GPUs. Every valid split of the
 * GPUs into the strategy's degrees x data parallel is tried, with the
 * placements that matter (which group sits inside the node), and
 * micro-batches when a global batch is fixed. */
#include <string.h>

#include "internal.h"

#define MAX_DIV 256
#define MAX_MICRO 64

static int divisors(int64_t n, int64_t *out)
{
    int k = 0;
    for (int64_t d = 1; d * d <= n && k < MAX_DIV - 1; d++) {
        if (n % d) continue;
        out[k++] = d;
        if (d != n / d && k < MAX_DIV) out[k++] = n / d;
    }
    /* sort ascending (small lists) */
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && out[j - 1] > out[j]; j--) {
            int64_t t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return k;
}

/* Is a better than b? Feasible beats infeasible; among feasible, more
 * tokens/s, then fewer bytes; among infeasible, memory-only failures beat
 * shape failures, and less memory over capacity wins. */
static int better(const uly_result *a, const uly_result *b)
{
    if (a->feasible != b->feasible) return a->feasible;
    if (a->feasible) {
        if (a->time.tokens_per_s != b->time.tokens_per_s) return a->time.tokens_per_s > b->time.tokens_per_s;
        return a->comm_fwd_bytes + a->comm_bwd_bytes < b->comm_fwd_bytes + b->comm_bwd_bytes;
    }
    const int ao = a->mem.total_bytes > 0, bo = b->mem.total_bytes > 0; /* priced: only memory failed */
    if (ao != bo) return ao;
    if (ao) return a->mem.total_bytes / a->mem.capacity_bytes < b->mem.total_bytes / b->mem.capacity_bytes;
    return 0;
}

typedef struct walk {
    const uly_model *m;
    const uly_workload *w;
    const uly_cluster *c;
    const uly_search_opts *o; /* never NULL */
    uly_plan plan;
    uly_result cur;
    double compute_s[ULY_PLAN_MAX_OPS]; /* the plan's compute ops' times, for its other orders */
    uly_result *best;
    uly_plan *best_plan; /* NULL: the caller wants the result only */
    int have;
    uly_search_stats *stats;
    uly_search_visit visit; /* uly_search_each: called on every layout priced; else NULL */
    void *visit_ctx;
    /* max-seq: the bound, and the longest sequence found so far with its layout */
    int64_t seq_hi, best_seq;
    uly_layout best_l;
} walk;

/* A walk with its buffers (plan, result, compute times) left as they are:
 * each evaluation fills them before they are read, and zeroing some 11 KB
 * per search costs as much as pricing a layout or two. */
static void walk_init(walk *k, const uly_model *m, const uly_workload *w, const uly_cluster *c,
                      const uly_search_opts *o)
{
    k->m = m, k->w = w, k->c = c, k->o = o;
    k->best = NULL, k->best_plan = NULL, k->have = 0, k->stats = NULL;
    k->visit = NULL, k->visit_ctx = NULL;
    k->seq_hi = k->best_seq = 0;
    memset(&k->best_l, 0, sizeof k->best_l);
}

static int pinned_ok(int64_t pin, int64_t v) { return pin <= 0 || pin == v; }

/* A MoE model's expert layouts of one split: each expert-parallel degree
 * dividing the experts and, with the expert TP, the stage's GPUs, smaller
 * first (fewer transfers win ties); the expert TP pinned, else none and
 * the split's TP degree (Megatron-LM's default for it). */
__attribute__((noinline)) static void experts_each(walk *k, int64_t gpus, uly_layout *l,
                                                   void (*visit)(walk *k, uly_layout *l))
{
    const int64_t pin = k->o->pin_etp;
    const int64_t etps[2] = {pin > 0 ? pin : 1, pin > 0 || l->tp <= 1 ? 0 : l->tp};
    for (int j = 0; j < 2; j++) {
        const int64_t etp = etps[j];
        int64_t de[MAX_DIV];
        if (etp < 1 || gpus % etp != 0) continue;
        const int ne = divisors(gpus / etp, de);
        for (int i = 0; i < ne; i++) {
            if (k->m->experts % de[i] != 0 || !pinned_ok(k->o->pin_ep, de[i])) continue;
            l->ep = (int32_t)de[i], l->etp = (int32_t)etp;
            visit(k, l);
        }
    }
}

/* Calls visit on every split of one pipeline stage's GPUs into the
 * strategy's degrees (Ulysses, ring, TP) x data parallel that the pins
 * allow, smaller Ulysses then ring then TP degrees first: on ties the first
 * visited wins, so the order is part of the answer. */
static void stage_layouts_each(walk *k, uly_strategy_id s, int64_t gpus, int64_t pp, int64_t vpp,
                               const uly_layout *split, void (*visit)(walk *k, uly_layout *l))
{
    const uly_strategy *st = uly_strategy_get(s);
    const uly_search_opts *o = k->o;
    int64_t du[MAX_DIV], dr[MAX_DIV], dt[MAX_DIV];
    const int nu = divisors(gpus, du);
    for (int iu = 0; iu < nu; iu++) {
        const int64_t u = du[iu];
        if ((!st->uses_ulysses && u != 1) || !pinned_ok(o->pin_ulysses, u)) continue;
        const int nr = divisors(gpus / u, dr);
        for (int ir = 0; ir < nr; ir++) {
            const int64_t r = dr[ir];
            if ((!st->uses_ring && r != 1) || !pinned_ok(o->pin_ring, r)) continue;
            const int nt = divisors(gpus / (u * r), dt);
            for (int it = 0; it < nt; it++) {
                const int64_t t = dt[it];
                if ((!st->uses_tp && t != 1) || !pinned_ok(o->pin_tp, t)) continue;
                uly_layout l;
                uly_layout_init(&l, s, u, r, t, gpus / (u * r * t));
                l.pp = pp;
                l.vpp = vpp;
                l.pp_first = split->pp_first, l.pp_last = split->pp_last, l.pp_mid_most = split->pp_mid_most;
                l.pp_embed = split->pp_embed, l.pp_loss = split->pp_loss;
                if (__builtin_expect(k->m->experts > 0, 0)) {
                    experts_each(k, gpus, &l, visit);
                    continue;
                }
                visit(k, &l);
            }
        }
    }
}

/* The splits of pp stages x V virtual ones tried: the pinned one; else
 * the even split (when it interleaves, V > 1), and each Megatron-Core
 * accepts with the embedding, the loss or both counted as a layer whose
 * stages' layers differ from the even split's (where they do not, it is
 * the even split again). */
static void splits_each(walk *k, uly_strategy_id s, int64_t gpus, int64_t pp, int64_t V,
                        void (*visit)(walk *k, uly_layout *l))
{
    uly_layout sp;
    uly_layout_init(&sp, s, 1, 1, 1, 1);
    sp.pp = pp, sp.vpp = V;
    if (k->o->pin_split || pp <= 1) {
        sp.pp_first = k->o->split_first, sp.pp_last = k->o->split_last, sp.pp_mid_most = k->o->split_mid_most;
        sp.pp_embed = k->o->split_embed, sp.pp_loss = k->o->split_loss;
        stage_layouts_each(k, s, gpus, pp, V, &sp, visit);
        return;
    }
    int64_t even[3], n[3];
    const int even_ok = uly_pp_stage_layers(k->m, &sp, even, NULL, 0) == ULY_OK;
    if (even_ok || V <= 1) stage_layouts_each(k, s, gpus, pp, V, &sp, visit);
    for (int f = 1; f <= 3; f++) {
        sp.pp_embed = (uint8_t)(f & 1), sp.pp_loss = (uint8_t)(f >> 1);
        if (uly_pp_stage_layers(k->m, &sp, n, NULL, 0) != ULY_OK || n[0] < 1 || n[2] < 1) continue;
        if (even_ok && n[0] == even[0] && n[1] == even[1] && n[2] == even[2]) continue;
        stage_layouts_each(k, s, gpus, pp, V, &sp, visit);
    }
}

/* The pipeline degree: none, the pinned one (its stages taken off the top),
 * or, searched, every stage count that divides the GPUs and leaves each
 * stage a layer, fewer stages first (they win ties). */
static void layouts_each(walk *k, uly_strategy_id s, int64_t gpus, void (*visit)(walk *k, uly_layout *l))
{
    const int64_t pin = k->o->pin_pp;
    if (pin != ULY_PP_SEARCH) {
        const int64_t pp = pin > 1 ? pin : 1;
        const int64_t vpp = pp > 1 && k->o->pin_vpp > 1 ? k->o->pin_vpp : 1;
        if (gpus % pp == 0) splits_each(k, s, gpus / pp, pp, vpp, visit);
        return;
    }
    /* searched: every stage count, and with it every interleaving V that
     * divides a stage's layers, evenly split or with the embedding and loss
     * counted as two more (plain 1F1B first: it wins ties), or the pinned V */
    int64_t dp[MAX_DIV], dv[MAX_DIV];
    const int np = divisors(gpus, dp);
    for (int i = 0; i < np && dp[i] <= k->m->layers; i++) {
        if (k->o->pin_vpp <= 1) splits_each(k, s, gpus / dp[i], dp[i], 1, visit);
        if (k->o->pin_vpp == 1 || dp[i] <= 1) continue; /* plain 1F1B asked for */
        const int64_t per = k->m->layers % dp[i] ? (k->m->layers + 2) / dp[i] : k->m->layers / dp[i];
        if (per < 1) continue;
        const int nv = divisors(per, dv);
        for (int j = 0; j < nv; j++)
            if (dv[j] > 1 && (k->o->pin_vpp <= 1 || dv[j] == k->o->pin_vpp))
                splits_each(k, s, gpus / dp[i], dp[i], dv[j], visit);
    }
}

/* Evaluates l at each micro-batch candidate and keeps the best. reuse: the
 * walk's plan and result hold l under another order, evaluated ULY_OK at
 * its only micro-batch (the candidates depend on dp alone, the same in
 * every order): only the placement is redone. Returns whether a later
 * order may reuse this evaluation so. */
static int try_layout(walk *k, const uly_layout *l, int reuse)
{
    uly_workload wb = *k->w;
    int64_t bs[MAX_DIV];
    int nb = 1;
    bs[0] = k->w->micro_batch;
    if (k->o->search_micro_batch && k->w->global_batch > 0 && k->w->global_batch % l->dp == 0) {
        /* micro-batches dividing the replica's share, up to MAX_MICRO: long
         * sequences leave no room for more, and the list stays short */
        const int64_t share = k->w->global_batch / l->dp;
        nb = 0;
        for (int64_t b = 1; b <= share && b <= MAX_MICRO; b++)
            if (share % b == 0) bs[nb++] = b;
    }
    int ok = 0;
    for (int i = 0; i < nb; i++) {
        wb.micro_batch = bs[i];
        ok = (reuse ? uly_evaluate_reordered(k->m, &wb, k->c, l, &k->plan, &k->cur, k->compute_s)
                    : uly_evaluate_keep(k->m, &wb, k->c, l, &k->plan, &k->cur, k->compute_s)) == ULY_OK;
        if (!ok) continue;
        if (k->stats) {
            k->stats->evaluated++;
            k->stats->feasible += (uint64_t)k->cur.feasible;
        }
        if (k->visit) k->visit(k->visit_ctx, l, &wb, &k->cur);
        if (!k->have || better(&k->cur, k->best)) {
            *k->best = k->cur;
            /* copied only on a new best: the plan of the winner, without
             * building it a second time */
            if (k->best_plan) *k->best_plan = k->plan;
            k->have = 1;
        }
    }
    return ok && nb == 1;
}

static void try_orders(walk *k, uly_layout *l)
{
    const int both = k->o->both_placements;
    uly_layout v = *l;
    /* the plan is built once per split: each further order only re-places it */
    int reuse = try_layout(k, &v, 0);
    if (!both) return;
    if (l->ulysses > 1 && l->ring > 1) { /* ring inside the node, Ulysses across */
        v.order[0] = ULY_GROUP_TP; v.order[1] = ULY_GROUP_RING; v.order[2] = ULY_GROUP_ULYSSES; v.order[3] = ULY_GROUP_DP;
        reuse = try_layout(k, &v, reuse);
    }
    if (l->dp > 1 && l->ulysses * l->ring > 1) { /* data parallel inside, sequence across */
        v.order[0] = ULY_GROUP_TP; v.order[1] = ULY_GROUP_DP; v.order[2] = ULY_GROUP_ULYSSES; v.order[3] = ULY_GROUP_RING;
        try_layout(k, &v, reuse);
    }
}

uly_status uly_search_best_plan(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                                int64_t gpus, uly_strategy_id s, const uly_search_opts *o,
                                uly_result *best, uly_plan *best_plan, uly_search_stats *stats)
{
    const uly_strategy *st = uly_strategy_get(s);
    if (!m || !w || !c || !best || !st || gpus < 1) return ULY_EINVAL;
    const uly_search_opts none = {0};
    if (!o) o = &none;
    walk k;
    walk_init(&k, m, w, c, o);
    k.best = best, k.best_plan = best_plan, k.stats = stats;
    layouts_each(&k, s, gpus, try_orders);
    return k.have ? ULY_OK : ULY_EINVAL;
}

uly_status uly_search_best(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                           int64_t gpus, uly_strategy_id s, const uly_search_opts *o,
                           uly_result *best, uly_search_stats *stats)
{
    return uly_search_best_plan(m, w, c, gpus, s, o, best, NULL, stats);
}

uly_status uly_search_each(const uly_model *m, const uly_workload *w, const uly_cluster *c, int64_t gpus,
                           uly_strategy_id s, const uly_search_opts *o, uly_search_visit visit, void *ctx,
                           uly_search_stats *stats)
{
    const uly_strategy *st = uly_strategy_get(s);
    if (!m || !w || !c || !visit || !st || gpus < 1) return ULY_EINVAL;
    const uly_search_opts none = {0};
    if (!o) o = &none;
    uly_result best; /* the walk keeps its best as uly_search_best does; only the visits are handed out */
    walk k;
    walk_init(&k, m, w, c, o);
    k.best = &best, k.stats = stats, k.visit = visit, k.visit_ctx = ctx;
    layouts_each(&k, s, gpus, try_orders);
    return k.have ? ULY_OK : ULY_EINVAL;
}

/* Smallest sequence step every check of the layout accepts, as its plan
 * records it (uly_check_seq: megatron-tp keeps the whole sequence on every
 * TP rank, rsa's rings ignore the causal split); the product of all the
 * degrees, twice that for a causal ring, when no plan can be built. */
static int64_t seq_granule(walk *k, const uly_layout *l)
{
    uly_workload ws = *k->w;
    ws.seq = k->seq_hi < ((int64_t)1 << 20) ? k->seq_hi : (int64_t)1 << 20;
    if (uly_evaluate(k->m, &ws, k->c, l, &k->plan, &k->cur) == ULY_OK) {
        if (k->stats) k->stats->evaluated++;
        return k->plan.seq_granule > 1 ? k->plan.seq_granule : 1;
    }
    int64_t g = l->ulysses * l->ring * l->tp;
    if (k->w->causal && l->ring > 1) g *= 2;
    return g;
}

static int fits_at(walk *k, const uly_layout *l, int64_t seq)
{
    uly_workload ws = *k->w;
    ws.seq = seq;
    if (uly_evaluate(k->m, &ws, k->c, l, &k->plan, &k->cur) != ULY_OK) return 0;
    if (k->stats) k->stats->evaluated++;
    return k->cur.feasible;
}

/* The longest sequence up to k->seq_hi the layout fits, kept when it beats
 * the longest so far. */
static void try_longest(walk *k, uly_layout *l)
{
    const int64_t g = seq_granule(k, l);
    if (g > k->seq_hi || !fits_at(k, l, g)) return;
    /* memory grows with N: double until it fails, then bisect */
    int64_t lo = 1, hi = 2; /* in granules: lo fits, hi unknown */
    const int64_t top = k->seq_hi / g;
    while (hi <= top && fits_at(k, l, hi * g)) {
        lo = hi;
        if (hi > top / 2) { hi = top + 1; break; }
        hi *= 2;
    }
    if (hi > top + 1) hi = top + 1;
    while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (fits_at(k, l, mid * g)) lo = mid;
        else hi = mid;
    }
    if (lo * g > k->best_seq) {
        k->best_seq = lo * g;
        k->best_l = *l;
    }
}

uly_status uly_search_max_seq(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                              int64_t gpus, uly_strategy_id s, const uly_search_opts *o,
                              int64_t seq_hi, int64_t *max_seq, uly_result *at)
{
    const uly_strategy *st = uly_strategy_get(s);
    if (!m || !w || !c || !max_seq || !at || !st || gpus < 1 || seq_hi < 1) return ULY_EINVAL;
    const uly_search_opts none = {0};
    if (!o) o = &none;
    walk k;
    walk_init(&k, m, w, c, o);
    k.seq_hi = seq_hi;
    layouts_each(&k, s, gpus, try_longest);
    *max_seq = k.best_seq;
    if (k.best_seq > 0) {
        uly_workload ws = *w;
        ws.seq = k.best_seq;
        uly_evaluate(m, &ws, c, &k.best_l, &k.plan, at);
    } else {
        memset(at, 0, sizeof *at);
    }
    return ULY_OK;
}

uly_status uly_search_min_gpus(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                               uly_strategy_id s, const uly_search_opts *o,
                               int64_t gpus_hi, int64_t *min_gpus, uly_result *at)
{
    if (!m || !w || !c || !min_gpus || !at || !uly_strategy_get(s) || gpus_hi < 1) return ULY_EINVAL;
    const int64_t gpn = c->gpus_per_node;
    *min_gpus = 0;
    int64_t g = 1;
    while (g <= gpus_hi) {
        uly_result r;
        if (uly_search_best(m, w, c, g, s, o, &r, NULL) == ULY_OK && r.feasible) {
            *min_gpus = g;
            *at = r;
            return ULY_OK;
        }
        /* within a node: powers of two, then the whole node (72 on GB200
         * NVL72, past 64); past it: whole nodes, then doubling once the node
         * count is large enough that single steps cost too much */
        if (g < gpn) g = 2 * g < gpn ? 2 * g : gpn;
        else if (g / gpn < 512) g += gpn;
        else g *= 2;
        if (g > gpn && g % gpn) g = (g / gpn + 1) * gpn;
    }
    memset(at, 0, sizeof *at);
    return ULY_OK;
}
