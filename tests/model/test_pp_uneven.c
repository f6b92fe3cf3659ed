/* Uneven pipelines (docs/model.md, "Uneven pipelines"): Llama 3 405B's 126
 * layers over 16 stages, the first and last one layer short, interleaved.
 * Megatron-Core accepts that split as the embedding and the loss counted as
 * a layer each (128 / 16 = 8 per stage, 2 per virtual stage at V = 4), and
 * refuses it as --decoder-first/last-pipeline-num-layers 7 with V = 4 (7
 * does not divide by 4). The step is paced by the heaviest stage: m of its
 * micro-batch times plus the other stages' times over V, the fill and
 * drain. Every expectation below is written out from those rules, with the
 * per-layer and per-op times the pricing reports as its inputs. */
#include "fixtures.h"

static uly_plan plan;

static double op_time(const uly_plan *p, const uly_result *r, const char *name)
{
    double s = 0;
    for (int i = 0; i < p->n_ops; i++)
        if (!strcmp(uly_op_type_name(p->ops[i].type), name)) s += r->op_time_s[i];
    return s;
}

/* What every case starts from: Llama 3 405B (L 126, h 16384, a 128, k 8,
 * f 53248, V 128256, SwiGLU) on 256 GPUs (TP 8 x dp 2 x pp 16 x V 4), 32
 * micro-batches of 8K tokens; the result's storage */
typedef struct fixture {
    uly_model m;
    uly_cluster c;
    uly_workload w;
    uly_layout l;
    uly_result *r;
} fixture;
static fixture F;

/* The even split refused, the embedding and loss counted: its split, step, bubble and memory */
static void interleaved_split(void)
{
    uly_result *r = F.r;
    uly_layout l = F.l;
    char why[256];
    int64_t n[3];
    /* the even split does not interleave: 126 / 16 is no whole number */
    CHECK(uly_pp_stage_layers(&F.m, &l, n, why, sizeof why) == ULY_EINVAL, "126 over 16 x 4 accepted evenly");
    CHECK(uly_evaluate(&F.m, &F.w, &F.c, &l, &plan, r) == ULY_OK && !r->feasible &&
              fx_has_reason(r, ULY_R_PP_VIRTUAL_LAYERS, 1),
          "even 126 over 16 x 4: feasible %d, want the virtual-stage reason", r->feasible);

    /* the embedding and loss counted: (126 + 2) / 16 = 8 a stage, the ends 7 */
    l.pp_embed = l.pp_loss = 1;
    const int64_t per = (126 + 2) / 16;
    CHECK(uly_pp_stage_layers(&F.m, &l, n, why, sizeof why) == ULY_OK && n[0] == per - 1 && n[1] == per &&
              n[2] == per - 1,
          "split %lld/%lld/%lld, want 7/8/7 (%s)", (long long)n[0], (long long)n[1], (long long)n[2], why);
    CHECK(uly_evaluate(&F.m, &F.w, &F.c, &l, &plan, r) == ULY_OK, "evaluate 7/8/7 x 4");
    CHECK(!fx_has_reason(r, ULY_R_PP_VIRTUAL_LAYERS, 1) && !fx_has_reason(r, ULY_R_PP_SPLIT_REFUSED, 1) &&
              fx_has_reason(r, ULY_R_PP_STAGES, 0),
          "7/8/7 x 4: refused, or no note of the split");

    /* each stage's time per micro-batch */
    const double layer = r->time.layer_fwd_s + r->time.layer_bwd_s;
    const double embed = op_time(&plan, r, "embed");
    const double head = op_time(&plan, r, "logits") + op_time(&plan, r, "loss") + op_time(&plan, r, "logits_bwd");
    const double p2p = op_time(&plan, r, "pp_send_act") + op_time(&plan, r, "pp_send_grad");
    CHECK(embed > 0 && head > 0 && p2p > 0, "end ops: embed %g head %g transfers %g", embed, head, p2p);
    CHECK(fx_close(r->time.model_s, embed + head + p2p, 1e-12), "model ops %.6g, want %.6g", r->time.model_s,
          embed + head + p2p);
    const double t0 = 7.0 * layer + embed + p2p, t1 = 8.0 * layer + p2p, t2 = 7.0 * layer + head + p2p;
    double tmax = t0 > t1 ? t0 : t1;
    if (t2 > tmax) tmax = t2;
    const int64_t pace_layers = tmax == t1 ? 8 : 7;
    /* 32 micro-batches of the heaviest stage; the others' over V = 4 */
    const double lag = (t0 + 14.0 * t1 + t2 - tmax) / 4.0;
    const double pipe = 32.0 * tmax + lag;
    CHECK(fx_close(r->time.step_s, pipe + r->time.step_fixed_s, 1e-12), "step %.9g s, want %.9g", r->time.step_s,
          pipe + r->time.step_fixed_s);
    CHECK(fx_close(r->time.pp_bubble, lag / pipe, 1e-12), "bubble %.6g, want %.6g", r->time.pp_bubble, lag / pipe);
    CHECK(r->time.stage_layers == pace_layers, "pacing stage %lld layers, want %lld", (long long)r->time.stage_layers,
          (long long)pace_layers);
    /* equal stages of 8 layers would idle (pp - 1) / V of m + (pp - 1) / V
     * slots: the uneven split's bubble is smaller than that, larger than 0 */
    CHECK(r->time.pp_bubble > 0 && r->time.pp_bubble < (15.0 / 4.0) / (32.0 + 15.0 / 4.0), "bubble %.6g",
          r->time.pp_bubble);

    /* memory: the heaviest stage's states; activations of the stage with
     * the most held (full recompute keeps each layer's input, b N / t h
     * under Megatron-SP): rank 0 holds 2 x 15 + 3 x 16 + 1 = 79 chunks of 2
     * layers of its 7 (the first chunk one short; counted as 19.75
     * micro-batches of its 7), rank 1 2 x 14 + 48 + 1 = 77 chunks (19.25 of
     * its 8): 138.25 layer-inputs against 154 */
    /* a layer: Wq, Wo h x a d, Wk, Wv h x k d (d 128), three h x f, two norms' gains */
    const double lp = 16384.0 * 128.0 * (2.0 * 128.0 + 2.0 * 8.0) + 3.0 * 16384.0 * 53248.0 + 2.0 * 16384.0;
    const double emb = 128256.0 * 16384.0;
    double states = 7.0 * lp + emb + 16384.0; /* the last stage: its 7 layers, the output layer, the final norm */
    if (8.0 * lp > states) states = 8.0 * lp;
    CHECK(fx_close(plan.model_params_rank, states / 8.0, 1e-12), "stage parameters %.6g, want %.6g",
          plan.model_params_rank, states / 8.0);
    CHECK(fx_close(plan.pp_in_flight, 79.0 / 4.0, 1e-12) && fx_close(plan.pp_in_flight_mid, 77.0 / 4.0, 1e-12) &&
              fx_close(plan.pp_in_flight_last, 49.0 / 4.0, 1e-12),
          "in flight %g / %g / %g, want 19.75 / 19.25 / 12.25", plan.pp_in_flight, plan.pp_in_flight_mid,
          plan.pp_in_flight_last);
    const double input = 2.0 * 1.0 * (8192.0 / 8.0) * 16384.0;
    CHECK(fx_close(r->mem.term_bytes[ULY_MEM_ACTIV], 19.25 * 8.0 * input, 1e-12), "activations %.6g, want %.6g",
          r->mem.term_bytes[ULY_MEM_ACTIV], 19.25 * 8.0 * input);
}

/* The same split as first and last stage layers; splits refused */
static void first_last_split(void)
{
    uly_result *r = F.r;
    uly_layout l = F.l;
    char why[256];
    int64_t n[3];
    /* the same split given as first and last stage layers: plain 1F1B
     * accepts it, the fill and drain then every other stage's whole time */
    uly_layout e = l;
    e.pp_embed = e.pp_loss = 0;
    e.pp_first = e.pp_last = 7;
    e.vpp = 4;
    CHECK(uly_pp_stage_layers(&F.m, &e, n, why, sizeof why) == ULY_EINVAL, "first/last 7 with V 4 accepted");
    CHECK(uly_evaluate(&F.m, &F.w, &F.c, &e, &plan, r) == ULY_OK && !r->feasible &&
              fx_has_reason(r, ULY_R_PP_SPLIT_REFUSED, 1),
          "first/last 7 x 4: feasible %d, want refused", r->feasible);
    e.vpp = 1;
    CHECK(uly_pp_stage_layers(&F.m, &e, n, why, sizeof why) == ULY_OK && n[0] == 7 && n[1] == (126 - 14) / 14 &&
              n[2] == 7,
          "first/last 7: %lld/%lld/%lld (%s)", (long long)n[0], (long long)n[1], (long long)n[2], why);
    CHECK(uly_evaluate(&F.m, &F.w, &F.c, &e, &plan, r) == ULY_OK, "evaluate first/last 7");
    {
        const double L1 = r->time.layer_fwd_s + r->time.layer_bwd_s;
        const double a0 = 7.0 * L1 + op_time(&plan, r, "embed"), pp1 = op_time(&plan, r, "pp_send_act") +
                                                                           op_time(&plan, r, "pp_send_grad");
        const double a2 = 7.0 * L1 + op_time(&plan, r, "logits") + op_time(&plan, r, "loss") +
                          op_time(&plan, r, "logits_bwd");
        const double s0 = a0 + pp1, s1 = 8.0 * L1 + pp1, s2 = a2 + pp1;
        double mx = s0 > s1 ? s0 : s1;
        if (s2 > mx) mx = s2;
        const double want = 31.0 * mx + s0 + 14.0 * s1 + s2; /* (m - 1) max t + sum t */
        CHECK(fx_close(r->time.step_s - r->time.step_fixed_s, want, 1e-12), "1F1B step %.9g s, want %.9g",
              r->time.step_s - r->time.step_fixed_s, want);
    }
    /* a split that leaves the middle stages uneven is refused */
    e.pp_first = 6;
    CHECK(uly_pp_stage_layers(&F.m, &e, n, why, sizeof why) == ULY_EINVAL, "first 6 last 7 (113 over 14) accepted");
    /* counting the embedding alone: 127 over 16 does not divide */
    e.pp_first = e.pp_last = 0;
    e.pp_embed = 1;
    CHECK(uly_pp_stage_layers(&F.m, &e, n, why, sizeof why) == ULY_EINVAL, "127 over 16 accepted");
    /* a split needs a pipeline */
    uly_layout one;
    uly_layout_init(&one, ULY_STRAT_MEGATRON_SP, 1, 1, 8, 2);
    one.pp_loss = 1;
    CHECK(uly_layout_check(&one, why, sizeof why) == ULY_EINVAL, "a split without a pipeline accepted");
}

/* The search finds the split Megatron-Core accepts */
static void search_split(void)
{
    uly_result *r = F.r;
    /* the search tries the splits Megatron-Core accepts: pinned pp 16 x V 4
     * finds 7/8/7 with the embedding and loss counted */
    uly_search_opts o = {0};
    o.strategies = 1u << ULY_STRAT_MEGATRON_SP;
    o.pin_tp = 8;
    o.pin_pp = 16;
    o.pin_vpp = 4;
    CHECK(uly_search_best(&F.m, &F.w, &F.c, 256, ULY_STRAT_MEGATRON_SP, &o, r, NULL) == ULY_OK, "search pp 16 x 4");
    CHECK(r->layout.pp == 16 && r->layout.vpp == 4 && r->layout.pp_embed == 1 && r->layout.pp_loss == 1 &&
              !fx_has_reason(r, ULY_R_PP_VIRTUAL_LAYERS, 1),
          "search: pp %lld V %lld embed %d loss %d", (long long)r->layout.pp, (long long)r->layout.vpp,
          r->layout.pp_embed, r->layout.pp_loss);
}

/* Two stages: no middle one to name or to quote */
static void two_stages(void)
{
    uly_result *r = F.r;
    uly_layout l = F.l;
    /* two stages have no middle one: the split's note names the first and
     * the last (126 layers, the first given 62: the last 64) */
    l.pp = 2;
    l.vpp = 1;
    l.pp_embed = l.pp_loss = 0;
    l.pp_first = 62;
    l.pp_last = 0;
    CHECK(uly_evaluate(&F.m, &F.w, &F.c, &l, &plan, r) == ULY_OK && fx_has_reason(r, ULY_R_PP_STAGES, 0), "62/64 over 2");
    for (int i = 0; i < r->n_reasons; i++) {
        if (r->reasons[i].code != ULY_R_PP_STAGES) continue;
        char text[256];
        uly_reason_format(&r->reasons[i], &F.m, text, sizeof text);
        CHECK(strstr(text, "62 layers on the first stage, 64 on the last") && !strstr(text, "middle"),
              "two stages: %s", text);
    }
    /* interleaved over two stages: no middle stage to quote, so the note
     * gives the layers per virtual stage on average, 126 / (2 x 2) */
    l.pp_last = 64;
    l.vpp = 2;
    CHECK(uly_evaluate(&F.m, &F.w, &F.c, &l, &plan, r) == ULY_OK, "62/64 over 2 x 2");
    for (int i = 0; i < r->n_reasons; i++)
        if (r->reasons[i].code == ULY_R_PP_INTERLEAVED)
            CHECK(fabs(r->reasons[i].v[1] - 126.0 / 4.0) < 1e-12, "62/64 x 2: %g layers per virtual stage, want 31.5",
                  r->reasons[i].v[1]);
    CHECK(fx_has_reason(r, ULY_R_PP_INTERLEAVED, 0), "62/64 x 2: no note of the interleaving");
    l.vpp = 1;
    l.pp_last = 0;
}

/* A pipeline layout whose middle stages differ */
static void layout_split(void)
{
    uly_result *r = F.r;
    uly_layout l = F.l;
    char why[256];
    int64_t n[3];

    /* a pipeline layout (Megatron-Core's --pipeline-model-parallel-layout),
     * whose middle stages differ: 126 layers over 16 stages x 4 chunks, the
     * first stage 7, the last 7, the middle ones 8 but one of 10 and two of
     * 7 (112 = 11 x 8 + 10 + 2 x 7). The step: m of the heaviest stage's
     * micro-batch time, the others' sum over V; the first-rank memory as
     * before, the middle priced at its most, 10 */
    l.pp = 16;
    l.vpp = 4;
    l.pp_first = 7, l.pp_last = 7, l.pp_mid_most = 10;
    CHECK(uly_layout_check(&l, why, sizeof why) == ULY_OK, "layout: %s", why);
    CHECK(uly_pp_stage_layers(&F.m, &l, n, why, sizeof why) == ULY_OK && n[0] == 7 && n[1] == 10 && n[2] == 7,
          "layout 7/10/7: %lld/%lld/%lld (%s)", (long long)n[0], (long long)n[1], (long long)n[2], why);
    CHECK(uly_evaluate(&F.m, &F.w, &F.c, &l, &plan, r) == ULY_OK && fx_has_reason(r, ULY_R_PP_LAYOUT, 0) &&
              !fx_has_reason(r, ULY_R_PP_SPLIT_REFUSED, 1) && !fx_has_reason(r, ULY_R_PP_VIRTUAL_LAYERS, 1),
          "layout: evaluate, noted as a layout");
    {
        const double L1 = r->time.layer_fwd_s + r->time.layer_bwd_s;
        const double pp1 = op_time(&plan, r, "pp_send_act") + op_time(&plan, r, "pp_send_grad");
        const double s0 = 7.0 * L1 + op_time(&plan, r, "embed") + pp1;
        const double s2 = 7.0 * L1 + op_time(&plan, r, "logits") + op_time(&plan, r, "loss") +
                          op_time(&plan, r, "logits_bwd") + pp1;
        const double mids = 112.0 * L1 + 14.0 * pp1, mx = 10.0 * L1 + pp1;
        const double hi = mx > s0 ? (mx > s2 ? mx : s2) : (s0 > s2 ? s0 : s2);
        const double lag_l = (s0 + mids + s2 - hi) / 4.0;
        CHECK(fx_close(r->time.step_s - r->time.step_fixed_s, 32.0 * hi + lag_l, 1e-12), "layout step %.9g s, want %.9g",
              r->time.step_s - r->time.step_fixed_s, 32.0 * hi + lag_l);
        CHECK(r->time.stage_layers == (hi == mx ? 10 : 7), "layout: pacing stage %lld layers",
              (long long)r->time.stage_layers);
    }
    for (int i = 0; i < r->n_reasons; i++) {
        if (r->reasons[i].code != ULY_R_PP_LAYOUT) continue;
        char text[256];
        uly_reason_format(&r->reasons[i], &F.m, text, sizeof text);
        CHECK(strstr(text, "7 layers on the first stage, at most 10 on a middle one, 7 on the last"), "layout: %s", text);
    }
    /* a layout that cannot hold the layers: 14 middle stages of at most 7 hold 98 of the 112 */
    l.pp_mid_most = 7;
    CHECK(uly_pp_stage_layers(&F.m, &l, n, why, sizeof why) == ULY_EINVAL, "middle of at most 7 for 112 accepted");
    /* nor with the embedding counted, nor on two stages */
    l.pp_mid_most = 10;
    l.pp_embed = 1;
    CHECK(uly_layout_check(&l, why, sizeof why) == ULY_EINVAL, "layout with the embedding counted accepted");
    l.pp_embed = 0;
    l.pp = 2;
    CHECK(uly_layout_check(&l, why, sizeof why) == ULY_EINVAL, "layout over two stages accepted");
}

int main(void)
{
    F.m = fx_model("llama3-405b", 126, 16384, 128, 8, 53248, 128256, 1);
    F.c = fx_a100(32); /* 256 GPUs: TP 8 x dp 2 x pp 16 */
    F.w = fx_work(8192);
    F.w.global_batch = 64; /* m = 64 / (1 x 2) = 32 micro-batches */
    F.r = calloc(1, sizeof *F.r);
    if (!F.r) return 1;
    uly_layout_init(&F.l, ULY_STRAT_MEGATRON_SP, 1, 1, 8, 2);
    F.l.pp = 16;
    F.l.vpp = 4;
    interleaved_split();
    first_last_split();
    search_split();
    two_stages();
    layout_split();
    free(F.r);
    FX_DONE();
}
