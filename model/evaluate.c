/* evaluate.c: one full evaluation of a layout: build the plan, count its
 * memory, price it, and collect the reasons; and the re-evaluation of a
 * built plan under another placement of its groups, which a search runs for
 * every rank order of a split. */
#include <string.h>

#include "internal.h"

/* A fatal reason from the build: the shapes are impossible. The
 * out-of-memory reason is not one; uly_evaluate adds it after pricing. */
static int shapes_fatal(const uly_result *res)
{
    int fatal = 0;
    for (int i = 0; i < res->n_reasons; i++)
        fatal |= res->reasons[i].fatal && res->reasons[i].code != ULY_R_OUT_OF_MEMORY;
    return fatal;
}

/* Nothing priced: the timing and memory blocks read as zero. */
static void unpriced(uly_result *res)
{
    memset(&res->mem, 0, sizeof res->mem);
    memset(&res->time, 0, sizeof res->time);
}

static inline __attribute__((always_inline)) uly_status
evaluate(const uly_model *m, const uly_workload *w, const uly_cluster *c, const uly_layout *l, uly_plan *scratch,
         uly_result *res, double *compute_s)
{
    if (!m || !w || !c || !l || !scratch || !res) return ULY_EINVAL;
    res->layout = *l;
    res->micro_batch = w->micro_batch;
    res->n_reasons = 0;
    res->feasible = 0;
    res->comm_fwd_bytes = res->comm_bwd_bytes = res->comm_recompute_bytes = res->zero_bytes = res->moe_bytes = 0;
    res->comm_tiers = 0;
    /* the timing and memory blocks are zeroed where nothing fills them;
     * pricing and the memory count clear their own before filling them */
    uly_status st = uly_plan_build(m, w, c, l, scratch, res->reasons, &res->n_reasons);
    if (st != ULY_OK || shapes_fatal(res)) { /* shapes are impossible: nothing to price */
        unpriced(res);
        return st;
    }
    st = compute_s ? uly_plan_price_keep(m, w, c, scratch, res, compute_s) : uly_plan_price_totals(m, w, c, scratch, res);
    if (st != ULY_OK) { /* a traffic total overflowed: the sizes are beyond pricing */
        unpriced(res);
        return st;
    }
    if (__builtin_expect(m->experts > 0, 0)) res->moe_bytes = uly_moe_bytes(scratch);
    uly_memory_eval(m, w, c, scratch, &res->mem);
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

uly_status uly_evaluate(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                        const uly_layout *l, uly_plan *scratch, uly_result *res)
{
    return evaluate(m, w, c, l, scratch, res, NULL);
}

uly_status uly_evaluate_keep(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                             const uly_layout *l, uly_plan *scratch, uly_result *res, double *compute_s)
{
    return evaluate(m, w, c, l, scratch, res, compute_s);
}

uly_status uly_evaluate_reordered(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                                  const uly_layout *l, uly_plan *plan, uly_result *res,
                                  const double *compute_s)
{
    const uly_status st = uly_plan_reorder(plan, l, c);
    if (st != ULY_OK) return st;
    res->layout = *l;
    if (shapes_fatal(res)) return ULY_OK; /* as uly_evaluate leaves it: not priced */
    /* the ops and so the memory, the reasons and the byte totals stay; the
     * tiers and the collectives' prices follow the placement; the compute
     * ops' times stay */
    return uly_plan_price_reuse(m, w, c, plan, res, compute_s);
}
