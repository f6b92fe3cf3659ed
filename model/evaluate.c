/* evaluate.c: one full evaluation of a layout: build the plan, count its
 * memory, price it, and collect the reasons. */
#include <string.h>

#include "internal.h"

uly_status uly_evaluate(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                        const uly_layout *l, uly_plan *scratch, uly_result *res)
{
    if (!m || !w || !c || !l || !scratch || !res) return ULY_EINVAL;
    res->layout = *l;
    res->micro_batch = w->micro_batch;
    res->n_reasons = 0;
    res->feasible = 0;
    res->comm_fwd_bytes = res->comm_bwd_bytes = res->comm_recompute_bytes = res->zero_bytes = 0;
    res->comm_tiers = 0;
    memset(&res->mem, 0, sizeof res->mem);
    memset(&res->time, 0, sizeof res->time);
    uly_status st = uly_plan_build(m, w, c, l, scratch, res->reasons, &res->n_reasons);
    if (st != ULY_OK) return st;
    int fatal = 0;
    for (int i = 0; i < res->n_reasons; i++) fatal |= res->reasons[i].fatal;
    if (fatal) return ULY_OK; /* shapes are impossible: nothing to price */

    int ovf = 0;
    for (int i = 0; i < scratch->n_ops; i++) {
        const uly_op *o = &scratch->ops[i];
        if (o->kind == ULY_OP_COMM && o->group == ULY_GROUP_PP) res->comm_tiers |= o->tiers; /* stage transfers */
        if (o->kind != ULY_OP_COMM || o->per_step || o->per_model) continue;
        if (o->group == ULY_GROUP_ZERO || o->group == ULY_GROUP_DP) {
            ovf |= __builtin_add_overflow(res->zero_bytes, o->bytes_sent, &res->zero_bytes);
            continue;
        }
        res->comm_tiers |= o->tiers;
        if (o->phase == ULY_PHASE_FWD) ovf |= __builtin_add_overflow(res->comm_fwd_bytes, o->bytes_sent, &res->comm_fwd_bytes);
        else ovf |= __builtin_add_overflow(res->comm_bwd_bytes, o->bytes_sent, &res->comm_bwd_bytes);
        if (o->recompute)
            ovf |= __builtin_add_overflow(res->comm_recompute_bytes, o->bytes_sent, &res->comm_recompute_bytes);
    }
    if (ovf) return ULY_EOVERFLOW;
    uly_memory_eval(m, w, c, scratch, &res->mem);
    uly_plan_price(m, w, c, scratch, res);
    if (!res->mem.fits && res->n_reasons < ULY_MAX_REASONS) {
        uly_reason *r = &res->reasons[res->n_reasons++];
        r->code = ULY_R_OUT_OF_MEMORY;
        r->fatal = 1;
        r->v[0] = res->mem.total_bytes;
        r->v[1] = res->mem.capacity_bytes;
        r->v[2] = res->mem.largest;
        return ULY_OK;
    }
    res->feasible = res->mem.fits;
    return ULY_OK;
}
