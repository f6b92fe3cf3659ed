/* search_limits.c: searches built on uly_evaluate and uly_search_best that
 * callers outside the main search need: the order of two results, the
 * largest micro-batch a fixed layout fits, the tensor-parallel degrees that
 * stay inside a node and the best layout with one of them, as Megatron-LM
 * runs it. Pure: no I/O, no allocation, status codes. */
#include <string.h>

#include "internal.h"

int uly_result_priced(const uly_result *r) { return r->mem.total_bytes > 0; }

/* Feasible first; among feasible, more tokens/s, then fewer bytes sent (the
 * cheaper plan on a network the model does not know); among infeasible,
 * those that failed on memory alone (priced) before shape failures, and the
 * one least over its capacity first. */
int uly_result_better(const uly_result *a, const uly_result *b)
{
    if (a->feasible != b->feasible) return a->feasible;
    if (a->feasible) {
        if (a->time.tokens_per_s != b->time.tokens_per_s) return a->time.tokens_per_s > b->time.tokens_per_s;
        return a->comm_fwd_bytes + a->comm_bwd_bytes < b->comm_fwd_bytes + b->comm_bwd_bytes;
    }
    const int pa = uly_result_priced(a), pb = uly_result_priced(b);
    if (pa != pb) return pa;
    return pa && a->mem.total_bytes / a->mem.capacity_bytes < b->mem.total_bytes / b->mem.capacity_bytes;
}

/* 1: the layout fits micro-batch b; 0: it does not, or b cannot be priced
 * (a size product overflows at a huge batch: as good as not fitting). */
static int batch_fits(const uly_model *m, const uly_workload *w, const uly_cluster *c, const uly_layout *l,
                      int64_t b, uly_plan *plan, uly_result *r)
{
    uly_workload wb = *w;
    wb.micro_batch = b;
    return uly_evaluate(m, &wb, c, l, plan, r) == ULY_OK && r->feasible;
}

uly_status uly_search_max_batch(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                                const uly_layout *l, int64_t batch_hi, int64_t *max_batch, uly_result *at)
{
    if (!m || !w || !c || !l || !max_batch || !at || batch_hi < 1 || w->global_batch != 0) return ULY_EINVAL;
    if (batch_hi == INT64_MAX) batch_hi--; /* hi below runs to batch_hi + 1 */
    uly_plan plan;
    *max_batch = 0;
    uly_workload w1 = *w;
    w1.micro_batch = 1;
    const uly_status st = uly_evaluate(m, &w1, c, l, &plan, at);
    if (st != ULY_OK) return st;
    if (!at->feasible) return ULY_OK; /* at says why: memory, or shapes no batch changes */
    /* memory grows with the batch: double until it fails, then bisect
     * between the last batch that fit (lo) and the first that did not (hi) */
    int64_t lo = 1, hi = 2;
    uly_result cur;
    while (hi <= batch_hi && batch_fits(m, w, c, l, hi, &plan, &cur)) {
        lo = hi;
        if (hi > batch_hi / 2) {
            hi = batch_hi + 1;
            break;
        }
        hi *= 2;
    }
    if (hi > batch_hi + 1) hi = batch_hi + 1;
    while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (batch_fits(m, w, c, l, mid, &plan, &cur)) lo = mid;
        else hi = mid;
    }
    *max_batch = lo;
    batch_fits(m, w, c, l, lo, &plan, at);
    return ULY_OK;
}

int uly_tp_in_node_degrees(const uly_cluster *c, int64_t gpus, int64_t *degrees, int max)
{
    if (!c || !degrees || gpus < 1 || c->gpus_per_node < 1 || max < 0) return -1;
    /* t consecutive ranks with t | gpus_per_node never cross a node boundary */
    int n = 0;
    for (int64_t t = 1; t <= c->gpus_per_node && n < max; t++)
        if (c->gpus_per_node % t == 0 && gpus % t == 0) degrees[n++] = t;
    return n;
}

#define MAX_TP_DEGREES 64

uly_status uly_search_best_tp_in_node(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                                      int64_t gpus, uly_strategy_id s, const uly_search_opts *o,
                                      uly_result *best, uly_search_stats *stats)
{
    int64_t ts[MAX_TP_DEGREES];
    const int nt = uly_tp_in_node_degrees(c, gpus, ts, MAX_TP_DEGREES);
    if (!m || !w || !best || !uly_strategy_get(s) || nt < 0) return ULY_EINVAL;
    uly_search_opts ot = {0};
    if (o) ot = *o;
    uly_result cur;
    int have = 0;
    for (int i = 0; i < nt; i++) {
        ot.pin_tp = ts[i];
        if (uly_search_best(m, w, c, gpus, s, &ot, &cur, stats) != ULY_OK) continue;
        if (!have || uly_result_better(&cur, best)) {
            *best = cur;
            have = 1;
        }
    }
    return have ? ULY_OK : ULY_EINVAL;
}
