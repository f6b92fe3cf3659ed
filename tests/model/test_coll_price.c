/* Each comm op of a priced plan costs what uly_cost_collective gives for its
 * own collective, group placement, bytes and steps: on every strategy and
 * layout of a multi-node cluster, and on plans edited here so that comm ops
 * share their bytes but not their group, collective or steps (the pricing
 * may reuse a time only for an op that matches in all four). */
#include "fixtures.h"

static uly_plan plan;
static uly_result res;
static int compared;

static void check_plan(const uly_model *m, const uly_workload *w, const uly_cluster *c, const char *what)
{
    if (uly_plan_price(m, w, c, &plan, &res) != ULY_OK) return;
    for (int i = 0; i < plan.n_ops; i++) {
        const uly_op *o = &plan.ops[i];
        if (o->kind != ULY_OP_COMM) continue;
        const double want = uly_cost_collective(c, o->coll, &plan.place[o->group], (double)o->bytes_sent, o->steps, 1);
        compared++;
        CHECK(res.op_time_s[i] == want, "%s: %s op %d (%s, group %s, %lld bytes, %d steps): %.9g s, want %.9g", what,
              uly_strategy_get(plan.layout.strategy)->name, i, uly_op_type_name(o->type), uly_group_name(o->group),
              (long long)o->bytes_sent, o->steps, res.op_time_s[i], want);
    }
}

/* gives every comm op the bytes of the first, and, by `how`, its
 * collective (1) or its steps (2) too, leaving the group its own */
static void collide(int how)
{
    int first = -1;
    for (int i = 0; i < plan.n_ops; i++) {
        uly_op *o = &plan.ops[i];
        if (o->kind != ULY_OP_COMM) continue;
        if (first < 0) {
            first = i;
            continue;
        }
        const uly_op *f = &plan.ops[first];
        o->bytes_sent = f->bytes_sent;
        if (how == 1) o->coll = f->coll;
        if (how == 2) o->steps = f->steps;
    }
}

int main(void)
{
    const uly_model m = fx_llama3_8b();
    const uly_workload w = fx_work(1 << 17);
    const uly_cluster c = fx_a100(8);
    uly_reason reasons[ULY_MAX_REASONS];
    int n_reasons = 0;
    for (int s = 0; s < ULY_STRAT_COUNT; s++) {
        const uly_strategy *st = uly_strategy_get((uly_strategy_id)s);
        for (int64_t u = 1; u <= 16; u *= 4)
            for (int64_t r = 1; u * r <= 16; r *= 4)
                for (int64_t t = 1; u * r * t <= 16; t *= 2) {
                    if ((u > 1 && !st->uses_ulysses) || (r > 1 && !st->uses_ring) || (t > 1 && !st->uses_tp)) continue;
                    uly_layout l;
                    uly_layout_init(&l, (uly_strategy_id)s, u, r, t, 64 / (u * r * t));
                    for (int how = -1; how < 3; how++) {
                        if (uly_plan_build(&m, &w, &c, &l, &plan, reasons, &n_reasons) != ULY_OK) break;
                        if (how >= 0) collide(how);
                        check_plan(&m, &w, &c, how < 0 ? "as built" : how == 0 ? "same bytes" : how == 1 ? "same bytes and collective" : "same bytes and steps");
                    }
                }
    }
    CHECK(compared > 1000, "%d comm ops compared", compared);
    printf("%d comm op prices compared\n", compared);
    FX_DONE();
}
