/* Under full recompute a plan's recompute pass copies the layer's forward
 * ops (plan->recomp_n), and the evaluation prices the copy from the
 * forward's prices instead of op by op. That must change nothing: on every
 * strategy and split, with transfers exposed and hidden (rings, TP
 * collectives under their GEMMs), ZeRO stages, pipelines, overlap misses,
 * the result and the kept compute times must be those of pricing every op
 * on its own (the same plan, recomp_n 0), byte for byte. And the copy must
 * really be taken from the forward: with a copied op edited (which the
 * contract forbids) the copying pricing still gives the forward's price,
 * and uly_plan_price, which never copies, does not. */
#include "fixtures.h"
#include "../../model/internal.h"

static uly_plan plan, plan_one;
static uly_result res_copy, res_one;
static double keep_copy[ULY_PLAN_MAX_OPS], keep_one[ULY_PLAN_MAX_OPS];
static int compared, copied, hidden_copied;

static void compare(const uly_model *m, const uly_workload *w, const uly_cluster *c, const uly_layout *l,
                    const char *what)
{
    uly_reason reasons[ULY_MAX_REASONS];
    int n_reasons = 0;
    if (uly_plan_build(m, w, c, l, &plan, reasons, &n_reasons) != ULY_OK) return;
    plan_one = plan;
    plan_one.recomp_n = 0;
    copied += plan.recomp_n > 0;
    for (int i = plan.recomp_src; i < plan.recomp_src + plan.recomp_n; i++)
        hidden_copied += plan.ops[i].kind == ULY_OP_COMM && plan.ops[i].overlaps >= 0;
    for (int keep = 0; keep < 2; keep++) {
        memset(&res_copy, 0, sizeof res_copy);
        memset(&res_one, 0, sizeof res_one);
        for (int i = 0; i < ULY_PLAN_MAX_OPS; i++) keep_copy[i] = keep_one[i] = -1;
        const uly_status a = keep ? uly_plan_price_keep(m, w, c, &plan, &res_copy, keep_copy)
                                  : uly_plan_price_totals(m, w, c, &plan, &res_copy);
        const uly_status b = keep ? uly_plan_price_keep(m, w, c, &plan_one, &res_one, keep_one)
                                  : uly_plan_price_totals(m, w, c, &plan_one, &res_one);
        compared++;
        CHECK(a == b && memcmp(&res_copy, &res_one, sizeof res_one) == 0 &&
                  memcmp(keep_copy, keep_one, sizeof keep_one) == 0,
              "%s: %s u %lld r %lld t %lld dp %lld pp %lld%s: status %d/%d, step %.17g/%.17g, compute %.17g/%.17g, "
              "exposed %.17g/%.17g, bwd bytes %lld/%lld", what, uly_strategy_get(l->strategy)->name,
              (long long)l->ulysses, (long long)l->ring, (long long)l->tp, (long long)l->dp, (long long)l->pp,
              keep ? " (kept times)" : "", (int)a, (int)b, res_copy.time.step_s, res_one.time.step_s,
              res_copy.time.compute_s, res_one.time.compute_s, res_copy.time.comm_exposed_s,
              res_one.time.comm_exposed_s, (long long)res_copy.comm_bwd_bytes, (long long)res_one.comm_bwd_bytes);
    }
}

static void every_split(const uly_model *m, const uly_workload *w, const uly_cluster *c, int64_t gpus, int64_t pp,
                        const char *what)
{
    for (int s = 0; s < ULY_STRAT_COUNT; s++) {
        const uly_strategy *st = uly_strategy_get((uly_strategy_id)s);
        for (int64_t u = 1; u <= gpus / pp; u *= 2)
            for (int64_t r = 1; u * r <= gpus / pp; r *= 2)
                for (int64_t t = 1; u * r * t <= gpus / pp; t *= 2) {
                    if ((u > 1 && !st->uses_ulysses) || (r > 1 && !st->uses_ring) || (t > 1 && !st->uses_tp)) continue;
                    uly_layout l;
                    uly_layout_init(&l, (uly_strategy_id)s, u, r, t, gpus / (pp * u * r * t));
                    l.pp = pp;
                    compare(m, w, c, &l, what);
                }
    }
}

/* The copying pricing takes the copy's prices from the forward: a copied
 * all-to-all made larger leaves its price as it was; uly_plan_price, op by
 * op, prices the larger transfer. */
static void copy_is_taken(const uly_model *m, const uly_workload *w, const uly_cluster *c)
{
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 8, 1, 1, 8);
    uly_reason reasons[ULY_MAX_REASONS];
    int n_reasons = 0;
    CHECK(uly_plan_build(m, w, c, &l, &plan, reasons, &n_reasons) == ULY_OK && plan.recomp_n > 0, "ulysses plan");
    int k = -1;
    for (int i = plan.recomp_src + plan.recomp_n; i < plan.recomp_src + 2 * plan.recomp_n && k < 0; i++)
        if (plan.ops[i].kind == ULY_OP_COMM) k = i;
    CHECK(k >= 0, "a copied transfer");
    if (k < 0) return;
    plan.ops[k].bytes_sent *= 4;
    CHECK(uly_plan_price_totals(m, w, c, &plan, &res_copy) == ULY_OK && uly_plan_price(m, w, c, &plan, &res_one) == ULY_OK,
          "price the edited plan");
    CHECK(res_copy.op_time_s[k] == res_copy.op_time_s[k - plan.recomp_n],
          "copying: the edited copy %d costs %.9g s, its forward %.9g s", k, res_copy.op_time_s[k],
          res_copy.op_time_s[k - plan.recomp_n]);
    CHECK(res_one.op_time_s[k] > res_one.op_time_s[k - plan.recomp_n],
          "op by op: the edited copy %d costs %.9g s, not more than its forward's %.9g s", k, res_one.op_time_s[k],
          res_one.op_time_s[k - plan.recomp_n]);
}

int main(void)
{
    const uly_model llama = fx_llama3_8b(), tiny = fx_tiny();
    uly_cluster a100 = fx_a100(8), miss = fx_a100(8);
    miss.overlap_miss = 0.25;
    miss.gpu.comm_slowdown = 0.1;
    uly_workload w = fx_work(1 << 17);
    every_split(&llama, &w, &a100, 64, 1, "a100");
    every_split(&llama, &w, &miss, 64, 1, "overlap miss");
    uly_workload tpo = w;
    tpo.tp_comm_overlap = 1; /* TP collectives hidden under GEMMs */
    every_split(&llama, &tpo, &miss, 32, 1, "tp overlap");
    uly_workload mat = w;
    mat.flash = 0;
    mat.causal = 0;
    every_split(&tiny, &mat, &a100, 16, 1, "materialised");
    for (int z = 0; z < 3; z++) {
        uly_workload wz = w;
        wz.zero_stage = z;
        wz.global_batch = 64;
        every_split(&llama, &wz, &a100, 32, 1, "zero");
        every_split(&llama, &wz, &a100, 32, 2, "zero, pipeline");
    }
    uly_workload odd = fx_work(3 * 4096 + 8); /* many splits do not divide it */
    every_split(&tiny, &odd, &a100, 16, 1, "shapes");
    CHECK(compared > 1000 && copied > compared / 4 && hidden_copied > 100,
          "%d pricings compared, %d plans copied their forward, %d copied transfers hidden", compared, copied,
          hidden_copied);
    copy_is_taken(&llama, &w, &a100);
    printf("%d pricings compared; %d plans with a copied forward, %d hidden transfers copied\n", compared, copied,
           hidden_copied);
    FX_DONE();
}
