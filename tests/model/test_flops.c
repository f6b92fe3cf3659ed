/* FLOP accounting: the TFLOP/s per GPU of the Ulysses paper's Tables 2-3
 * follow from their iteration times with the paper's accounting,
 * 96 B N L h^2 (1 + N/(6h) + V/(16 L h)) / (time x GPUs), within 0.5%
 * (GPT-7B: L 32, h 4096, V 50304, global batch 8). */
#include "fixtures.h"

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "traces/published/ulysses_tables_2_3.csv";
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot open %s", path);
    if (!f) FX_DONE();
    uly_model m = fx_gpt7b();
    char line[512];
    int rows = 0;
    /* a runs file (docs/runs.md): the columns by the header's names */
    static const char *const names[5] = {"group", "seq", "gpus", "step_ms", "tflops_per_gpu"};
    int col[5] = {-1, -1, -1, -1, -1};
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        char *cell[32];
        int n = 0;
        for (char *p = line; n < 32 && p; n++) {
            cell[n] = p;
            p = strchr(p, ',');
            if (p) *p++ = 0;
        }
        cell[n - 1][strcspn(cell[n - 1], "\r\n")] = 0;
        if (col[0] < 0) {
            for (int i = 0; i < n; i++)
                for (int k = 0; k < 5; k++)
                    if (strcmp(cell[i], names[k]) == 0) col[k] = i;
            CHECK(col[0] >= 0 && col[1] >= 0 && col[2] >= 0 && col[3] >= 0 && col[4] >= 0, "%s: header lacks a column",
                  path);
            continue;
        }
        if (n <= col[0] || n <= col[1] || n <= col[2] || n <= col[3] || n <= col[4]) continue;
        const char *tab = cell[col[0]];
        const long long seq = atoll(cell[col[1]]), gpus = atoll(cell[col[2]]);
        const double ms = atof(cell[col[3]]), tflops = atof(cell[col[4]]);
        const double fl = uly_flops_megatron(&m, 8, seq, 1);
        const double got = fl / (ms / 1e3) / (double)gpus / 1e12;
        const double err = fabs(got - tflops) / tflops;
        printf("%s N=%lld gpus=%lld: %.2f TFLOP/s from %.1f ms; paper %.2f (%.3f%%)\n", tab, seq, gpus, got, ms,
               tflops, 100 * err);
        CHECK(err <= 0.005, "%s N=%lld gpus=%lld: %.2f vs %.2f", tab, seq, gpus, got, tflops);
        rows++;
    }
    fclose(f);
    CHECK(rows == 6, "expected 6 rows, read %d", rows);
    /* without recompute the accounting is 72 and V/(12Lh); model FLOPs of a
     * plan (no recompute, non-causal, MHA, f = 4h) equal the same formula */
    uly_workload w = fx_work(131072);
    w.causal = 0;
    w.global_batch = 8;
    uly_cluster c = fx_a100(64);
    c.gpu.hbm_bytes = 1e15;
    uly_result r;
    CHECK(fx_eval(&m, &w, &c, ULY_STRAT_ULYSSES, 32, 1, 1, 2, &r) == 0, "evaluate");
    const double want = uly_flops_megatron(&m, 8, 131072, 0);
    CHECK(fabs(r.time.model_flops / want - 1) < 2e-3, "model FLOPs %.6g vs 72BNLh^2(...) %.6g", r.time.model_flops,
          want);

    /* The MLP activation: elements = b x tokens x f / t through the function;
     * priced by bytes when the profile gives no per-element cost (GPUs), at
     * elems x act_ns when that is larger (CPU profiles), backward at its own
     * rate, recompute at the forward's. Ulysses u = 8 at 128K: 16K tokens. */
    static uly_plan plan;
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 8, 1, 1, 1);
    uly_workload wa = fx_work(131072);
    uly_reason why[ULY_MAX_REASONS];
    int n_why = 0;
    CHECK(uly_plan_build(&m, &wa, &c, &l, &plan, why, &n_why) == ULY_OK, "plan");
    const double elems = 16384.0 * 16384.0; /* tokens x f */
    int n_act = 0;
    for (int pass = 0; pass < 2; pass++) {
        uly_cluster ca = c;
        if (pass) {
            ca.gpu.act_fwd_s_per_elem = 30e-9;
            ca.gpu.act_bwd_s_per_elem = 45e-9;
        }
        CHECK(uly_plan_price(&m, &wa, &ca, &plan, &r) == ULY_OK, "price");
        for (int i = 0; i < plan.n_ops; i++) {
            const uly_op *o = &plan.ops[i];
            if (o->type != ULY_OPT_MLP_ACT && o->type != ULY_OPT_MLP_ACT_BWD) {
                CHECK(o->kind != ULY_OP_ELEM || o->act_elems == 0, "%s: act_elems %lld, only the activation has them",
                      uly_op_type_name(o->type), (long long)o->act_elems);
                continue;
            }
            n_act++;
            CHECK(o->act_elems == (int64_t)elems, "%s: act_elems %lld, want %.0f", uly_op_type_name(o->type), (long long)o->act_elems, elems);
            const int bwd = o->phase == ULY_PHASE_BWD && !o->recompute;
            /* by bytes: GELU forward reads its input and writes its output,
             * 2 x 2 bytes x 16384 x 16384 = 1,073,741,824 B; its backward
             * moves twice that; at 2e12 x 0.8 B/s */
            const double mem = 2.0 * 2.0 * elems * (bwd ? 2.0 : 1.0) / (2e12 * 0.8);
            const double want_s = pass ? elems * (bwd ? 45e-9 : 30e-9) : mem;
            CHECK(fabs(r.op_time_s[i] / want_s - 1) < 1e-12, "%s (%s%s): %.6g s, want %.6g s", uly_op_type_name(o->type),
                  uly_phase_name(o->phase), o->recompute ? ", recompute" : "", r.op_time_s[i], want_s);
        }
    }
    CHECK(n_act == 6, "fwd, recompute and bwd activation, twice: %d", n_act);

    /* attn_bwd_rel: the backward flash attention's efficiency over the
     * forward's; 0 (unset) and 1 price both on the same curve, 2 halves the
     * backward's time and leaves the forward and its recompute alone */
    uly_result r1, r2;
    uly_cluster c1 = c, c2 = c;
    c1.gpu.attn_bwd_rel = 1.0;
    c2.gpu.attn_bwd_rel = 2.0;
    CHECK(uly_plan_price(&m, &wa, &c, &plan, &r) == ULY_OK && uly_plan_price(&m, &wa, &c1, &plan, &r1) == ULY_OK &&
              uly_plan_price(&m, &wa, &c2, &plan, &r2) == ULY_OK,
          "price");
    int n_attn = 0;
    for (int i = 0; i < plan.n_ops; i++) {
        const uly_op *o = &plan.ops[i];
        if (o->kind != ULY_OP_ATTN) continue;
        n_attn++;
        const int bwd = o->phase == ULY_PHASE_BWD && !o->recompute;
        CHECK(r.op_time_s[i] == r1.op_time_s[i], "%s: unset and 1 differ", uly_op_type_name(o->type));
        CHECK(fabs(r2.op_time_s[i] / r1.op_time_s[i] - (bwd ? 0.5 : 1.0)) < 1e-12, "%s (%s%s): %.6g s at 2, %.6g at 1",
              uly_op_type_name(o->type), uly_phase_name(o->phase), o->recompute ? ", recompute" : "", r2.op_time_s[i], r1.op_time_s[i]);
    }
    CHECK(n_attn == 3, "attention fwd, recompute, bwd: %d", n_attn);

    /* attn_bwd_eff: a profile with the backward's own curve prices the
     * backward on it, at half the time for twice the efficiency, and
     * attn_bwd_rel no longer applies; the forward and recompute keep the
     * forward's curve. act_eff: an activation element costs act_ns / eff,
     * eff read in log2 of the op's elements (here midway between 1 and 0.5) */
    uly_cluster c3 = c2, c4 = c1, c5 = c1;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            c3.gpu.attn_bwd_eff[i][j] = (uly_curve){.n = 1, .x = {4096}, .eff = {0.2}};
            c4.gpu.attn_bwd_eff[i][j] = (uly_curve){.n = 1, .x = {4096}, .eff = {0.4}};
        }
    c5.gpu.act_fwd_s_per_elem = 30e-9;
    c5.gpu.act_eff[0] = (uly_curve){.n = 2, .x = {elems / 4, elems * 4}, .eff = {1.0, 0.5}};
    uly_result r3, r4, r5;
    CHECK(uly_plan_price(&m, &wa, &c3, &plan, &r3) == ULY_OK && uly_plan_price(&m, &wa, &c4, &plan, &r4) == ULY_OK &&
              uly_plan_price(&m, &wa, &c5, &plan, &r5) == ULY_OK,
          "price");
    for (int i = 0; i < plan.n_ops; i++) {
        const uly_op *o = &plan.ops[i];
        const int bwd = o->phase == ULY_PHASE_BWD && !o->recompute;
        if (o->kind == ULY_OP_ATTN) {
            CHECK(fabs(r3.op_time_s[i] / r4.op_time_s[i] - (bwd ? 2.0 : 1.0)) < 1e-12, "%s%s: eff 0.2 %.6g s, 0.4 %.6g s",
                  uly_op_type_name(o->type), o->recompute ? " (recompute)" : "", r3.op_time_s[i], r4.op_time_s[i]);
            CHECK(bwd || r4.op_time_s[i] == r1.op_time_s[i], "%s: the forward's curve", uly_op_type_name(o->type));
        }
        if (o->act_elems > 0) {
            const double want_s = bwd ? r1.op_time_s[i] : elems * 30e-9 / 0.75;
            CHECK(fabs(r5.op_time_s[i] / want_s - 1) < 1e-12, "%s%s: %.6g s, want %.6g", uly_op_type_name(o->type),
                  o->recompute ? " (recompute)" : "", r5.op_time_s[i], want_s);
        }
    }
    FX_DONE();
}
