/* Full recompute copies a layer's forward ops to the start of backward, and
 * uly_evaluate prices the copy from the forward ops' times instead of
 * working them out again. That must change nothing: on every strategy and
 * split, with and without TP overlap, ZeRO stages 0-3 with and without
 * prefetch, pipelines plain and interleaved, flash and materialised
 * attention, on switched and PCIe nodes with imperfect overlap, uly_evaluate's
 * timing block and per-op times must equal bit for bit those of
 * uly_plan_price, which prices every op on its own, on the same plan. And
 * the shortcut must really be taken: a copy's op whose FLOPs are changed
 * after the build still costs its forward op's time through the evaluation
 * path, while uly_plan_price sees the change. */
#include "fixtures.h"
#include "../../model/internal.h"

static uly_plan plan;
static uly_result res_eval, res_price;

static int compared, copies, taken;

static void compare(const uly_model *m, const uly_workload *w, const uly_cluster *c, const uly_layout *l,
                    const char *what)
{
    memset(&res_eval, 0, sizeof res_eval);
    memset(&res_price, 0, sizeof res_price);
    if (uly_evaluate(m, w, c, l, &plan, &res_eval) != ULY_OK || res_eval.time.step_s <= 0) return;
    if (uly_plan_price(m, w, c, &plan, &res_price) != ULY_OK) return;
    compared++;
    const char *name = uly_strategy_get(l->strategy)->name;
    const int n = plan.n_ops;
    CHECK(memcmp(&res_eval.time, &res_price.time, sizeof res_eval.time) == 0 &&
              memcmp(res_eval.op_time_s, res_price.op_time_s, sizeof(double) * (size_t)n) == 0 &&
              memcmp(res_eval.op_exposed_s, res_price.op_exposed_s, sizeof(double) * (size_t)n) == 0,
          "%s: %s u %lld r %lld t %lld dp %lld pp %lld: evaluated step %.17g, compute %.17g, exposed %.17g; "
          "priced op by op %.17g, %.17g, %.17g",
          what, name, (long long)l->ulysses, (long long)l->ring, (long long)l->tp, (long long)l->dp,
          (long long)l->pp, res_eval.time.step_s, res_eval.time.compute_s, res_eval.time.comm_exposed_s,
          res_price.time.step_s, res_price.time.compute_s, res_price.time.comm_exposed_s);
    if (w->recompute != ULY_RECOMPUTE_FULL) {
        CHECK(plan.recompute_ops == 0, "%s: %s: a copy without full recompute", what, name);
        return;
    }
    if (plan.recompute_ops <= 0) return;
    copies++;
    /* the copy is the forward ops but for phase, recompute and overlaps */
    for (int j = 0; j < plan.recompute_ops; j++) {
        const uly_op *f = &plan.ops[plan.recompute_src + j], *r = &plan.ops[plan.recompute_at + j];
        CHECK(f->type == r->type && f->kind == r->kind && f->phase == ULY_PHASE_FWD && r->phase == ULY_PHASE_BWD &&
                  !f->recompute && r->recompute && f->flops == r->flops && f->bytes_sent == r->bytes_sent,
              "%s: %s: op %d is not the copy of op %d", what, name, plan.recompute_at + j, plan.recompute_src + j);
    }
    /* a copied GEMM made twice as heavy after the build: the evaluation
     * path keeps the forward's time, op-by-op pricing doubles it */
    for (int j = 0; j < plan.recompute_ops; j++) {
        uly_op *r = &plan.ops[plan.recompute_at + j];
        if (r->kind != ULY_OP_GEMM) continue;
        r->flops *= 2;
        r->bytes_touched *= 2;
        uly_result a, b;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        a.layout = b.layout = *l;
        const int ok = uly_plan_price_totals(m, w, c, &plan, &a) == ULY_OK && uly_plan_price(m, w, c, &plan, &b) == ULY_OK;
        const int at = plan.recompute_at + j, src = plan.recompute_src + j;
        CHECK(ok && a.op_time_s[at] == a.op_time_s[src] && b.op_time_s[at] > 1.5 * b.op_time_s[src],
              "%s: %s: the changed copy costs %.6g (evaluation path) and %.6g (op by op), its forward op %.6g", what,
              name, a.op_time_s[at], b.op_time_s[at], b.op_time_s[src]);
        taken += ok && a.op_time_s[at] == a.op_time_s[src];
        break;
    }
}

static void every_split(const uly_model *m, const uly_workload *w, const uly_cluster *c, int64_t gpus, int64_t pp,
                        const char *what)
{
    for (int s = 0; s < ULY_STRAT_COUNT; s++) {
        const uly_strategy *st = uly_strategy_get((uly_strategy_id)s);
        for (int64_t u = 1; u * pp <= gpus; u *= 2)
            for (int64_t r = 1; u * r * pp <= gpus; r *= 2)
                for (int64_t t = 1; u * r * t * pp <= gpus; t *= 2) {
                    if ((u > 1 && !st->uses_ulysses) || (r > 1 && !st->uses_ring) || (t > 1 && !st->uses_tp)) continue;
                    uly_layout l;
                    uly_layout_init(&l, (uly_strategy_id)s, u, r, t, gpus / (u * r * t * pp));
                    l.pp = pp;
                    if (pp > 1 && (w->global_batch / l.dp) % 4 == 0) l.vpp = 2;
                    compare(m, w, c, &l, what);
                }
    }
}

int main(void)
{
    const uly_model llama = fx_llama3_8b();
    uly_model gpt = fx_gpt7b();
    uly_cluster a100 = fx_a100(4), pc = fx_a100(4);
    a100.overlap_miss = 0.25; /* hidden transfers partly exposed, and slowing the compute under them */
    a100.gpu.comm_slowdown = 0.1;
    pc.intra_switched = 0, pc.intra_bw_Bps = 25e9, pc.pcie_p2p = 0;
    pc.pcie_per_switch = 2, pc.pcie_uplink_bw_Bps = 20e9, pc.socket_bw_Bps = 10e9;
    char what[96];
    for (int zero = 0; zero <= 3; zero++)
        for (int prefetch = -1; prefetch <= 1; prefetch += 2)
            for (int tpo = 0; tpo <= 1; tpo++)
                for (int flash = 0; flash <= 1; flash++) {
                    uly_workload w = fx_work(flash ? 1 << 17 : 1 << 13);
                    w.zero_stage = zero;
                    w.zero_prefetch = prefetch;
                    w.tp_comm_overlap = tpo;
                    w.flash = flash;
                    w.global_batch = 32;
                    snprintf(what, sizeof what, "zero %d prefetch %d tp-overlap %d flash %d", zero, prefetch, tpo,
                             flash);
                    every_split(&llama, &w, &a100, 32, 1, what);
                    every_split(&gpt, &w, &pc, 32, 1, what);
                    every_split(&llama, &w, &a100, 32, 2, what);
                }
    /* without full recompute there is no copy, and nothing changes either */
    uly_workload sel = fx_work(1 << 16), none = fx_work(1 << 16);
    sel.recompute = ULY_RECOMPUTE_SELECTIVE;
    sel.flash = 0;
    none.recompute = ULY_RECOMPUTE_NONE;
    every_split(&llama, &sel, &a100, 32, 1, "selective");
    every_split(&llama, &none, &a100, 32, 1, "none");
    CHECK(compared > 2000 && copies > 1000 && taken == copies, "%d plans compared, %d with a copy, %d took its times",
          compared, copies, taken);
    printf("%d plans compared, %d with a full-recompute copy, the copy's times taken in %d\n", compared, copies, taken);
    FX_DONE();
}
