/* Pipeline parallelism (pinned --pp, 1F1B): a stage holds ceil(L/pp) layers; the
 * first stage keeps the activations of min(pp, m) micro-batches, the last
 * the logits; the step runs m + pp - 1 slots of the slowest stage; stage
 * boundaries send b (N/cp) h elements each way per micro-batch; ZeRO shards
 * inside a stage. Each expectation is written out here from those rules,
 * not read back from the model's own helpers. */
#include "fixtures.h"

static uly_plan plan_a, plan_b;

static int eval_pp(const uly_model *m, const uly_workload *w, const uly_cluster *c, uly_strategy_id s, int64_t u,
                   int64_t t, int64_t dp, int64_t pp, uly_plan *p, uly_result *r)
{
    uly_layout l;
    uly_layout_init(&l, s, u, 1, t, dp);
    l.pp = pp;
    return (int)uly_evaluate(m, w, c, &l, p, r);
}

static int has(const uly_result *r, uly_reason_code code, int fatal)
{
    for (int i = 0; i < r->n_reasons; i++)
        if (r->reasons[i].code == code && r->reasons[i].fatal == fatal) return 1;
    return 0;
}

static double op_time(const uly_plan *p, const uly_result *r, const char *name)
{
    for (int i = 0; i < p->n_ops; i++)
        if (!strcmp(uly_op_type_name(p->ops[i].type), name)) return r->op_time_s[i];
    return -1;
}

static const uly_op *op_named(const uly_plan *p, const char *name)
{
    for (int i = 0; i < p->n_ops; i++)
        if (!strcmp(uly_op_type_name(p->ops[i].type), name)) return &p->ops[i];
    return NULL;
}

static int close_rel(double a, double b, double tol) { return fabs(a - b) <= tol * fabs(b); }

/* Megatron-LM's scatter-gather of stage transfers (2021-2023): under plain
 * TP every TP rank holds the whole b N h stage output; with it, each sends
 * 1/t of it (b N h beta / t bytes) and the next stage all-gathers the t
 * pieces over the TP group ((t - 1) pieces sent per rank), forward for the
 * activations and backward for their gradients; sequence parallelism's
 * ranks hold 1/t already, so nothing changes there. Hockney pricing of the
 * fixture: a transfer a + bytes / B, the gather (t - 1) a + bytes / B of
 * NVSwitch. The step runs m + pp - 1 slots, each with its transfers. */
static void scatter_gather(const uly_model *m, const uly_cluster *c, uly_result *a, uly_result *b)
{
    uly_workload w = fx_work(4096);
    w.framework = ULY_FW_MEGATRON, w.zero_stage = 1, w.global_batch = 32;
    const int64_t t = 8, pp = 4;
    const double mu = 32.0 / 2.0; /* micro-batches: global 32 over dp 2 */
    const int64_t whole = 2LL * 4096 * 4096; /* b N h beta, micro-batch 1, bf16 */
    CHECK(eval_pp(m, &w, c, ULY_STRAT_MEGATRON_TP, 1, t, 2, pp, &plan_a, a) == 0, "megatron-tp pp 4, scatter-gather off");
    w.pp_scatter_gather = 1;
    CHECK(eval_pp(m, &w, c, ULY_STRAT_MEGATRON_TP, 1, t, 2, pp, &plan_b, b) == 0, "megatron-tp pp 4, scatter-gather on");
    const uly_op *off = op_named(&plan_a, "pp_send_act"), *on = op_named(&plan_b, "pp_send_act"),
                 *on_g = op_named(&plan_b, "pp_send_grad");
    CHECK(off && off->bytes_sent == whole, "off: sends %lld bytes, want %lld", off ? (long long)off->bytes_sent : -1LL,
          (long long)whole);
    CHECK(!op_named(&plan_a, "pp_gather_act") && !op_named(&plan_a, "pp_gather_grad"), "off: a gather op");
    CHECK(on && on_g && on->bytes_sent == whole / t && on_g->bytes_sent == whole / t,
          "on: sends %lld / %lld bytes, want %lld", on ? (long long)on->bytes_sent : -1LL,
          on_g ? (long long)on_g->bytes_sent : -1LL, (long long)(whole / t));
    const char *gathers[2] = {"pp_gather_act", "pp_gather_grad"};
    const uly_phase phases[2] = {ULY_PHASE_FWD, ULY_PHASE_BWD};
    double gather_s = 0;
    for (int k = 0; k < 2; k++) {
        const uly_op *g = op_named(&plan_b, gathers[k]);
        CHECK(g && g->coll == ULY_COLL_ALLGATHER && g->group == ULY_GROUP_TP && g->group_size == t &&
                  g->tiers == ULY_TIER_INTRA && g->phase == phases[k] && g->per_model && g->overlaps == -1 &&
                  g->bytes_sent == (t - 1) * (whole / t),
              "%s: coll %d group %d size %d tiers %d phase %d, %lld bytes, want an all-gather over TP 8 in the node "
              "of %lld", gathers[k], g ? (int)g->coll : -1, g ? (int)g->group : -1, g ? g->group_size : -1,
              g ? g->tiers : -1, g ? (int)g->phase : -1, g ? (long long)g->bytes_sent : -1LL,
              (long long)((t - 1) * (whole / t)));
        const double want = (double)(t - 1) * c->intra_lat_s + (double)((t - 1) * (whole / t)) / c->intra_bw_Bps;
        const double got = op_time(&plan_b, b, gathers[k]);
        CHECK(close_rel(got, want, 1e-12), "%s: %.6g s, want %.6g", gathers[k], got, want);
        gather_s += got;
    }
    /* the step moves by the slots' transfers only */
    const double p2p_off = 2.0 * (c->nic_lat_s + (double)whole / c->nic_bw_Bps);
    const double p2p_on = 2.0 * (c->nic_lat_s + (double)(whole / t) / c->nic_bw_Bps) + gather_s;
    const double d_want = (mu + (double)pp - 1.0) * (p2p_off - p2p_on), d = a->time.step_s - b->time.step_s;
    CHECK(d > 0 && close_rel(d, d_want, 1e-9), "the step gains %.6g s, want %.6g", d, d_want);
    /* interleaved, V = 2: twice the bytes in two steps, both ways */
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_MEGATRON_TP, 1, 1, t, 2);
    l.pp = pp, l.vpp = 2;
    CHECK(uly_evaluate(m, &w, c, &l, &plan_b, b) == ULY_OK, "megatron-tp pp 4 x V 2");
    const uly_op *gv = op_named(&plan_b, "pp_gather_grad"), *sv = op_named(&plan_b, "pp_send_act");
    CHECK(gv && sv && sv->bytes_sent == 2 * (whole / t) && sv->steps == 2 && gv->bytes_sent == 2 * (t - 1) * (whole / t),
          "V 2: sends %lld, gathers %lld bytes", sv ? (long long)sv->bytes_sent : -1LL,
          gv ? (long long)gv->bytes_sent : -1LL);
    /* sequence parallelism: each rank sends its own N/t tokens, nothing gathered */
    CHECK(eval_pp(m, &w, c, ULY_STRAT_MEGATRON_SP, 1, t, 2, pp, &plan_b, b) == 0, "megatron-sp pp 4");
    const uly_op *sp = op_named(&plan_b, "pp_send_act");
    CHECK(sp && sp->bytes_sent == whole / t && !op_named(&plan_b, "pp_gather_act") && !op_named(&plan_b, "pp_gather_grad"),
          "megatron-sp: sends %lld bytes (want %lld), gathers none", sp ? (long long)sp->bytes_sent : -1LL,
          (long long)(whole / t));
    /* Megatron-LM's own: refused for another framework */
    char why[200];
    w.framework = ULY_FW_DEEPSPEED;
    CHECK(uly_workload_check(&w, why, sizeof why) == ULY_EINVAL && strstr(why, "pp_scatter_gather"),
          "deepspeed with the scatter-gather accepted (%s)", why);
}

/* Fewer micro-batches than stages, dropout's and the embedding norm's
 * first-stage activations, materialised scores without recompute (w: the
 * main test's workload, its global batch varied here) */
static void in_flight(const uly_cluster *c, uly_workload w, uly_result *a, uly_result *b)
{
    /* fewer micro-batches than stages: only those are in flight. A small
     * vocabulary keeps the first stage the heavier one. */
    {
        const uly_model sv = fx_model("small-vocab", 32, 4096, 32, 32, 16384, 1024, 0);
        const int64_t gb[3] = {4, 6, 64}; /* m = 2, 3, 32 at dp 2 */
        const double want_f[3] = {2, 3, 4};
        for (int k = 0; k < 3; k++) {
            w.global_batch = gb[k];
            CHECK(eval_pp(&sv, &w, c, ULY_STRAT_ULYSSES, 8, 1, 2, 4, &plan_b, b) == 0, "evaluate m %lld", (long long)gb[k] / 2);
            const double want = want_f[k] * 8.0 * 2.0 * (32768.0 / 8.0) * 4096.0;
            CHECK(plan_b.pp_in_flight == (int64_t)want_f[k] && close_rel(b->mem.term_bytes[ULY_MEM_ACTIV], want, 1e-12),
                  "global batch %lld: in flight %lld, activations %.6g, want %.6g", (long long)gb[k],
                  (long long)plan_b.pp_in_flight, b->mem.term_bytes[ULY_MEM_ACTIV], want);
        }
        CHECK(close_rel(b->time.pp_bubble, 3.0 / 35.0, 1e-15), "bubble %.6f, want 3/35", b->time.pp_bubble);
        /* with dropout the first stage also keeps the embedding's dropout
         * mask, 1 byte per element, for each micro-batch in flight */
        uly_model svd = sv;
        svd.dropout = 1;
        CHECK(eval_pp(&svd, &w, c, ULY_STRAT_ULYSSES, 8, 1, 2, 4, &plan_b, b) == 0, "evaluate with dropout");
        const double T = 32768.0 / 8.0, want_d = 4.0 * (8.0 * 2.0 * T * 4096.0 + T * 4096.0);
        CHECK(close_rel(b->mem.term_bytes[ULY_MEM_ACTIV], want_d, 1e-12), "dropout: first stage activations %.6g, want %.6g",
              b->mem.term_bytes[ULY_MEM_ACTIV], want_d);
        /* and BERT's embedding LayerNorm keeps its input, 2 bytes per element in bf16 */
        svd.embed_norm = 1;
        CHECK(eval_pp(&svd, &w, c, ULY_STRAT_ULYSSES, 8, 1, 2, 4, &plan_b, b) == 0, "evaluate with embed_norm");
        const double want_n = want_d + 4.0 * 2.0 * T * 4096.0;
        CHECK(close_rel(b->mem.term_bytes[ULY_MEM_ACTIV], want_n, 1e-12), "embed_norm: first stage activations %.6g, want %.6g",
              b->mem.term_bytes[ULY_MEM_ACTIV], want_n);
        w.global_batch = 4;
        CHECK(eval_pp(&sv, &w, c, ULY_STRAT_ULYSSES, 8, 1, 2, 4, &plan_b, b) == 0, "evaluate m 2");
        CHECK(close_rel(b->time.pp_bubble, 3.0 / 5.0, 1e-15), "bubble %.6f, want 3/5", b->time.pp_bubble);

        /* no recompute, materialised scores: the first stage keeps every
         * score block of its 8 layers for each of its 2 micro-batches in
         * flight, half of the 32 layers' worth of one micro-batch at pp 1 */
        uly_workload wn = fx_work(2048);
        wn.recompute = ULY_RECOMPUTE_NONE;
        wn.flash = 0;
        wn.global_batch = 4;
        CHECK(eval_pp(&sv, &wn, c, ULY_STRAT_ULYSSES, 8, 1, 2, 1, &plan_a, a) == 0, "evaluate no recompute pp 1");
        CHECK(eval_pp(&sv, &wn, c, ULY_STRAT_ULYSSES, 8, 1, 2, 4, &plan_b, b) == 0, "evaluate no recompute pp 4");
        CHECK(a->mem.term_bytes[ULY_MEM_SCORES] > 0 &&
                  close_rel(b->mem.term_bytes[ULY_MEM_SCORES], 0.5 * a->mem.term_bytes[ULY_MEM_SCORES], 1e-12) &&
                  close_rel(b->mem.term_bytes[ULY_MEM_ACTIV], 0.5 * a->mem.term_bytes[ULY_MEM_ACTIV], 1e-12),
              "no recompute: scores %.6g / %.6g, activations %.6g / %.6g, want half", b->mem.term_bytes[ULY_MEM_SCORES],
              a->mem.term_bytes[ULY_MEM_SCORES], b->mem.term_bytes[ULY_MEM_ACTIV], a->mem.term_bytes[ULY_MEM_ACTIV]);
    }
}

/* A stage's gradient all-reduce under ZeRO-0, its replicated KV weights,
 * and a last stage made the heavier by the logits */
static void stage_cases(const uly_model *m, const uly_cluster *c, uly_result *b)
{
    /* ZeRO-0: the stage's gradient all-reduce hides under one micro-batch's
     * backward of the stage's 8 layers, and only the rest shows */
    {
        uly_workload w0 = fx_work(2048);
        w0.zero_stage = 0;
        w0.global_batch = 64;
        w0.overlap_grad_reduce = 1; /* on its own stream */
        CHECK(eval_pp(m, &w0, c, ULY_STRAT_ULYSSES, 8, 1, 2, 4, &plan_b, b) == 0, "evaluate zero 0");
        const double ar = op_time(&plan_b, b, "dp_allreduce_grad"), opt = op_time(&plan_b, b, "optimizer");
        const double hide = 8.0 * b->time.layer_bwd_s;
        CHECK(ar > hide, "precondition: the all-reduce (%.4g s) outlasts the stage's backward (%.4g s)", ar, hide);
        CHECK(close_rel(b->time.step_fixed_s, opt + (ar - hide), 1e-12), "step fixed %.6g, want %.6g",
              b->time.step_fixed_s, opt + (ar - hide));
    }

    /* replicated KV weights count for the stage's layers only: llama3-8b's 8
     * KV heads over TP 16 replicate each twice */
    {
        const uly_model ll = fx_llama3_8b();
        uly_workload wk = fx_work(8192);
        wk.zero_stage = 0;
        wk.global_batch = 8;
        CHECK(eval_pp(&ll, &wk, c, ULY_STRAT_MEGATRON_SP, 1, 16, 1, 4, &plan_b, b) == 0, "evaluate megatron-sp tp16 pp4");
        const double h = 4096, d = 128, lp = h * d * (2.0 * 32 + 2.0 * 8) + 3.0 * h * 14336 + 2.0 * h;
        const double kv_extra = 2.0 * h * d * (16 - 8); /* Wk, Wv for 16 KV heads instead of 8 */
        const double params = (8.0 * (lp + kv_extra) + 128256.0 * h + h) / 16.0;
        CHECK(close_rel(b->mem.term_bytes[ULY_MEM_WEIGHTS], 2.0 * params, 1e-12), "tp16 pp4 weights %.6g, want %.6g",
              b->mem.term_bytes[ULY_MEM_WEIGHTS], 2.0 * params);
    }

    /* the last stage is the heavier when the logits outweigh the extra micro-batches */
    {
        uly_model big = fx_model("big-vocab", 8, 1024, 8, 8, 4096, 512000, 0);
        big.dropout = 1; /* the embedding's mask stays on the first stage */
        uly_workload w1 = fx_work(16384);
        w1.global_batch = 2; /* m = 2 at dp 1 */
        CHECK(eval_pp(&big, &w1, c, ULY_STRAT_ULYSSES, 8, 1, 1, 2, &plan_b, b) == 0, "evaluate big vocab");
        /* the last stage holds one micro-batch's inputs of its 4 layers, and
         * no embedding (so no embedding dropout mask) */
        const double in1 = 4.0 * 2.0 * (16384.0 / 8.0) * 1024.0;
        CHECK(b->mem.term_bytes[ULY_MEM_LOGITS] > 0, "the logits stage is the heavier");
        CHECK(close_rel(b->mem.term_bytes[ULY_MEM_ACTIV], in1, 1e-12), "last stage activations %.6g, want %.6g",
              b->mem.term_bytes[ULY_MEM_ACTIV], in1);
    }
}

/* A searched pipeline (--pp auto, uly_search_best with ULY_PP_SEARCH): the
 * best of the pinned searches, each written out here */
static void searched_stages(const uly_model *m, const uly_cluster *c, uly_result *a, uly_result *b)
{
    /* the search keeps a pinned pipeline and splits the rest; GPUs it does not divide give no layout */
    {
        uly_search_opts o = {.pin_pp = 4, .both_placements = 1};
        const uly_workload w = fx_work(32768);
        CHECK(uly_search_best(m, &w, c, 64, ULY_STRAT_ULYSSES, &o, b, NULL) == ULY_OK, "search pp 4");
        CHECK(b->layout.pp == 4 && uly_layout_gpus(&b->layout) == 64, "searched layout pp %lld on %lld GPUs",
              (long long)b->layout.pp, (long long)uly_layout_gpus(&b->layout));
        o.pin_pp = 3;
        CHECK(uly_search_best(m, &w, c, 64, ULY_STRAT_ULYSSES, &o, b, NULL) == ULY_EINVAL, "pp 3 does not divide 64");
    }
    /* searched stages: the best over every stage count dividing the GPUs is
     * the best of the pinned searches, fewer stages first on a tie. Cases:
     * none wins (ZeRO-3 on 64 GPUs); 96 GPUs, whose divisors 3, 6, 12, 24,
     * 48, 96 are not powers of two (and 32 layers bound them); GPT-30B
     * under ZeRO-0 on 24 GPUs, where 12 stages win */
    {
        const uly_model g7 = fx_gpt7b(), g30 = fx_model("gpt-30b", 64, 6144, 64, 64, 24576, 50304, 0);
        uly_workload wa = fx_work(65536);
        wa.global_batch = 96;
        const struct {
            const uly_model *m;
            int64_t gpus, zero, seq, pp_want; /* pp_want 0: any */
            uly_strategy_id s;
        } cases[] = {{&g7, 64, 3, 65536, 1, ULY_STRAT_ULYSSES},
                     {&g7, 96, 1, 65536, 0, ULY_STRAT_RING},
                     {&g7, 96, 0, 65536, 0, ULY_STRAT_MEGATRON_SP},
                     {&g30, 24, 0, 32768, 12, ULY_STRAT_ULYSSES}};
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            wa.zero_stage = (int)cases[k].zero;
            wa.seq = cases[k].seq;
            /* the context-parallel strategies without TP inside them: what
             * shards the weights here is the pipeline alone */
            uly_search_opts o = {.pin_pp = ULY_PP_SEARCH, .pin_tp = 1, .both_placements = 1, .search_micro_batch = 1};
            if (cases[k].s == ULY_STRAT_MEGATRON_SP) o.pin_tp = 0;
            CHECK(uly_search_best(cases[k].m, &wa, c, cases[k].gpus, cases[k].s, &o, a, NULL) == ULY_OK,
                  "case %zu: search pp auto", k);
            double best = -1;
            int64_t best_pp = 0, tried = 0;
            for (int64_t pp = 1; pp <= cases[k].m->layers; pp++) {
                if (cases[k].gpus % pp) continue;
                o.pin_pp = pp;
                if (uly_search_best(cases[k].m, &wa, c, cases[k].gpus, cases[k].s, &o, b, NULL) != ULY_OK ||
                    !b->feasible)
                    continue;
                tried++;
                if (b->time.tokens_per_s > best) {
                    best = b->time.tokens_per_s;
                    best_pp = pp;
                }
            }
            CHECK(tried > 1 && a->feasible && a->time.tokens_per_s == best && a->layout.pp == best_pp,
                  "case %zu: auto pp %lld at %.6g tokens/s; pinned best pp %lld at %.6g", k, (long long)a->layout.pp,
                  a->time.tokens_per_s, (long long)best_pp, best);
            if (cases[k].pp_want)
                CHECK(best_pp == cases[k].pp_want, "case %zu: the pinned searches' best is pp %lld, want %lld", k,
                      (long long)best_pp, (long long)cases[k].pp_want);
        }
        /* as many stages as layers is a stage count too: a 4-layer model
         * whose model states fit 4 GPUs only one layer apiece (ZeRO-0) */
        const uly_model fat = fx_model("fat", 4, 16384, 128, 128, 65536, 1024, 0);
        uly_workload wf = fx_work(4096);
        wf.zero_stage = 0;
        wf.global_batch = 8;
        uly_search_opts o = {.pin_pp = ULY_PP_SEARCH, .pin_tp = 1};
        CHECK(uly_search_best(&fat, &wf, c, 4, ULY_STRAT_ULYSSES, &o, a, NULL) == ULY_OK && a->feasible &&
                  a->layout.pp == 4,
              "4 layers on 4 GPUs: auto pp %lld, feasible %d; want pp 4", (long long)a->layout.pp, a->feasible);
    }
    /* searched stages: here (ZeRO-1, so model states do not shard over data
     * parallel) a pipeline wins */
    {
        const uly_model g3 = fx_model("gpt3-175b", 96, 12288, 96, 96, 49152, 50257, 0);
        uly_workload w1 = fx_work(32768);
        w1.zero_stage = 1;
        w1.global_batch = 512;
        uly_search_opts o = {.pin_pp = ULY_PP_SEARCH, .both_placements = 1, .search_micro_batch = 1};
        CHECK(uly_search_best(&g3, &w1, c, 512, ULY_STRAT_ULYSSES, &o, a, NULL) == ULY_OK, "search pp auto");
        /* the searched stages and interleaving equal the best pinned pair */
        double best = 0;
        int64_t best_pp = 0, best_v = 0;
        for (int64_t pp = 1; pp <= 96; pp++) {
            if (512 % pp) continue;
            for (int64_t v = 1; v <= 96 / pp; v++) {
                if (v > 1 && (pp == 1 || 96 % (pp * v))) continue;
                o.pin_pp = pp;
                o.pin_vpp = v;
                if (uly_search_best(&g3, &w1, c, 512, ULY_STRAT_ULYSSES, &o, b, NULL) != ULY_OK || !b->feasible)
                    continue;
                if (b->time.tokens_per_s > best) {
                    best = b->time.tokens_per_s;
                    best_pp = pp;
                    best_v = v;
                }
            }
        }
        CHECK(a->feasible && a->time.tokens_per_s == best && a->layout.pp == best_pp && a->layout.vpp == best_v &&
                  best_pp > 1,
              "auto: pp %lld x V %lld at %.6g tokens/s; pinned best pp %lld x V %lld at %.6g", (long long)a->layout.pp,
              (long long)a->layout.vpp, a->time.tokens_per_s, (long long)best_pp, (long long)best_v, best);
    }
}

/* Interleaved 1F1B against plain 1F1B on the same layout */
static void interleaved(const uly_model *m, const uly_cluster *c, uly_result *a, uly_result *b)
{
    /* interleaved 1F1B (virtual stages V): a stage holds L / pp layers in V
     * chunks; the fill and drain shrink to (pp - 1) / V slots (Narayanan et
     * al. 2021: bubble (pp - 1) / (V m) of the ideal step); the first rank
     * holds pp + (pp - 1) / V micro-batches of its layers' activations
     * (2 (pp - 1) + (V - 1) pp + 1 chunk forwards of L / (pp V) layers each
     * before its first backward); each micro-batch crosses a stage boundary V
     * times each way; L must divide by pp V */
    {
        uly_workload wv = fx_work(32768);
        wv.global_batch = 64;
        wv.recompute = ULY_RECOMPUTE_NONE;
        uly_layout l;
        uly_layout_init(&l, ULY_STRAT_ULYSSES, 8, 1, 1, 2);
        l.pp = 4;
        CHECK(uly_evaluate(m, &wv, c, &l, &plan_a, a) == ULY_OK && a->feasible, "pp 4 V 1");
        for (int64_t V = 2; V <= 8; V *= 2) {
            l.vpp = V;
            CHECK(uly_evaluate(m, &wv, c, &l, &plan_b, b) == ULY_OK && b->feasible, "pp 4 V %lld", (long long)V);
            const double lag = 3.0 / (double)V, mv = 32.0;
            CHECK(close_rel(b->time.pp_bubble, lag / (mv + lag), 1e-12), "V %lld: bubble %.6g, want %.6g", (long long)V,
                  b->time.pp_bubble, lag / (mv + lag));
            CHECK(close_rel(b->time.slots, mv + lag, 1e-12), "V %lld: slots %.6g, want %.6g", (long long)V,
                  b->time.slots, mv + lag);
            /* the same per-slot work: the step shrinks by the bubble's difference */
            const double slot_a = (a->time.step_s - a->time.step_fixed_s) / a->time.slots;
            const double slot_b = (b->time.step_s - b->time.step_fixed_s) / b->time.slots;
            const uly_op *pa = op_named(&plan_a, "pp_send_act"), *pb = op_named(&plan_b, "pp_send_act");
            CHECK(pa && pb && pb->bytes_sent == V * pa->bytes_sent && pb->steps == V,
                  "V %lld: stage transfer %lld bytes in %d steps, want %lld in %lld", (long long)V,
                  pb ? (long long)pb->bytes_sent : -1LL, pb ? pb->steps : -1, pa ? (long long)(V * pa->bytes_sent) : -1LL,
                  (long long)V);
            CHECK(slot_b >= slot_a, "V %lld: a slot %.6g s, shorter than plain 1F1B's %.6g s", (long long)V, slot_b,
                  slot_a);
            const double in_flight = 4.0 + 3.0 / (double)V;
            CHECK(close_rel(plan_b.pp_in_flight, in_flight, 1e-12), "V %lld: in flight %.6g, want %.6g", (long long)V,
                  plan_b.pp_in_flight, in_flight);
            /* without recompute the first stage's activations scale with it */
            CHECK(close_rel(b->mem.term_bytes[ULY_MEM_ACTIV] / a->mem.term_bytes[ULY_MEM_ACTIV], in_flight / 4.0, 1e-9),
                  "V %lld: activations x%.6g of plain 1F1B's, want x%.6g", (long long)V,
                  b->mem.term_bytes[ULY_MEM_ACTIV] / a->mem.term_bytes[ULY_MEM_ACTIV], in_flight / 4.0);
            CHECK(has(b, ULY_R_PP_INTERLEAVED, 0), "V %lld: no interleaving note", (long long)V);
        }
        /* few micro-batches cap what is in flight: m V chunks in all */
        wv.global_batch = 4; /* m = 2 */
        l.vpp = 2;
        CHECK(uly_evaluate(m, &wv, c, &l, &plan_b, b) == ULY_OK, "pp 4 V 2 m 2");
        CHECK(close_rel(plan_b.pp_in_flight, 2.0, 1e-12), "m 2: in flight %.6g, want 2", plan_b.pp_in_flight);
        /* 32 layers do not split into 4 x 16 virtual stages */
        wv.global_batch = 64;
        l.vpp = 16;
        CHECK(uly_evaluate(m, &wv, c, &l, &plan_b, b) == ULY_OK && !b->feasible && has(b, ULY_R_PP_VIRTUAL_LAYERS, 1),
              "pp 4 x V 16 of 32 layers: feasible %d, want the virtual-stage reason", b->feasible);
        char why[200];
        l.pp = 1;
        l.vpp = 2;
        CHECK(uly_layout_check(&l, why, sizeof why) == ULY_EINVAL, "virtual stages without a pipeline accepted");
    }
}

int main(void)
{
    const uly_model m = fx_gpt7b(); /* L 32, h 4096, V 50304 */
    const uly_cluster c = fx_a100(64);
    uly_workload w = fx_work(32768);
    w.global_batch = 64;
    uly_result *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    if (!a || !b) return 1;

    /* A: Ulysses 8 x dp 2 on 16 GPUs; B: the same stage layout, 4 stages on 64 */
    CHECK(eval_pp(&m, &w, &c, ULY_STRAT_ULYSSES, 8, 1, 2, 1, &plan_a, a) == 0, "evaluate pp 1");
    CHECK(eval_pp(&m, &w, &c, ULY_STRAT_ULYSSES, 8, 1, 2, 4, &plan_b, b) == 0, "evaluate pp 4");
    CHECK(a->feasible && b->feasible, "both fit (a %d, b %d)", a->feasible, b->feasible);
    const double mu = 64.0 / 2.0; /* micro-batches per step: global 64 over micro-batch 1 x dp 2 */
    CHECK(b->time.micro_steps == (int64_t)mu, "micro-steps %lld, want %.0f", (long long)b->time.micro_steps, mu);

    /* the bubble: (pp - 1) of m + pp - 1 slots, and said as an assumption */
    CHECK(fabs(b->time.pp_bubble - 3.0 / (mu + 3.0)) < 1e-15, "bubble %.6f, want 3/35", b->time.pp_bubble);
    CHECK(a->time.pp_bubble == 0, "no bubble without a pipeline: %g", a->time.pp_bubble);
    CHECK(has(b, ULY_R_PP_BUBBLE, 0) && !has(a, ULY_R_PP_BUBBLE, 0), "the bubble is a reason only under a pipeline");
    for (int i = 0; i < b->n_reasons; i++)
        if (b->reasons[i].code == ULY_R_PP_BUBBLE)
            CHECK(b->reasons[i].v[0] == b->time.pp_bubble && b->reasons[i].v[1] == mu && b->reasons[i].v[2] == 4,
                  "bubble reason %g %g %g", b->reasons[i].v[0], b->reasons[i].v[1], b->reasons[i].v[2]);
    /* the same 64 sequences per step: every layer runs once per micro-batch
     * on one stage, so the hardware FLOPs equal those of the 16-GPU layout */
    CHECK(close_rel(b->time.hw_flops, a->time.hw_flops, 1e-12), "hw FLOPs %.6g, want %.6g", b->time.hw_flops,
          a->time.hw_flops);
    /* hardware FLOPs by hand: a rank of Ulysses 8 runs GEMMs on T = 4096
     * tokens, 2 T (4h^2 + 2hf) = 1,649,267,441,664 forward, again in the
     * recompute and twice in backward (4x); causal flash attention for 32/8
     * = 4 heads over N = 32768, 4 x 4 N^2 d / 2 = 1,099,511,627,776 forward,
     * again recomputed, 2.5x backward (4.5x); the logits 2 T h V =
     * 1,687,922,147,328 forward, twice backward (3x). The 16 ranks of each
     * stage share the 32 layers and the last stage's ranks the logits, for
     * each of the 32 micro-batches: (32 layers x (4 x 1,649,267,441,664 +
     * 4.5 x 1,099,511,627,776) + 3 x 1,687,922,147,328) x 32 x 16 */
    const double hw = (32.0 * (4.0 * 1649267441664.0 + 4.5 * 1099511627776.0) + 3.0 * 1687922147328.0) * 32.0 * 16.0;
    CHECK(close_rel(b->time.hw_flops, hw, 1e-12), "hw FLOPs %.6g, want %.6g", b->time.hw_flops, hw);
    CHECK(close_rel(b->time.hfu, hw / (b->time.step_s * 64.0 * 312e12), 1e-12), "hfu %g", b->time.hfu);

    /* the same per-layer work; a stage runs 8 of the 32 layers */
    CHECK(a->time.layer_fwd_s == b->time.layer_fwd_s && a->time.layer_bwd_s == b->time.layer_bwd_s,
          "per-layer times differ: fwd %g vs %g", a->time.layer_fwd_s, b->time.layer_fwd_s);
    CHECK(b->time.stage_layers == 8 && a->time.stage_layers == 32, "stage layers %lld / %lld",
          (long long)b->time.stage_layers, (long long)a->time.stage_layers);

    /* stage transfers: b x (N / u) x h elements, bf16, each way, per micro-batch, across nodes (stride 16) */
    const uly_op *sa = op_named(&plan_b, "pp_send_act"), *sg = op_named(&plan_b, "pp_send_grad");
    const int64_t send = 2LL * 1 * (32768 / 8) * 4096;
    CHECK(sa && sg && sa->bytes_sent == send && sg->bytes_sent == send, "pp sends %lld / %lld bytes, want %lld",
          sa ? (long long)sa->bytes_sent : -1LL, sg ? (long long)sg->bytes_sent : -1LL, (long long)send);
    CHECK(sa && sa->group == ULY_GROUP_PP && sa->group_size == 4 && sa->group_stride == 16 && sa->tiers == ULY_TIER_INTER,
          "pp group: size %d stride %d tiers %d", sa ? sa->group_size : -1, sa ? sa->group_stride : -1,
          sa ? sa->tiers : -1);
    CHECK(!op_named(&plan_a, "pp_send_act"), "no stage transfers without a pipeline");
    const double p2p = op_time(&plan_b, b, "pp_send_act") + op_time(&plan_b, b, "pp_send_grad");
    const double p2p_want = 2.0 * (c.nic_lat_s + (double)send / c.nic_bw_Bps);
    CHECK(close_rel(p2p, p2p_want, 1e-12), "pp transfers %.6g s, want %.6g", p2p, p2p_want);

    /* the step: m + pp - 1 slots of 8 layers plus the model ops and the transfers */
    const double slot = 8.0 * (a->time.layer_fwd_s + a->time.layer_bwd_s) + a->time.model_s + p2p;
    const double step_want = (mu + 3.0) * slot + b->time.step_fixed_s;
    CHECK(close_rel(b->time.step_s, step_want, 1e-12), "step %.6g s, want %.6g", b->time.step_s, step_want);
    /* 4x the GPUs for 4x the tokens per step would be ideal; the bubble and transfers cost */
    CHECK(b->time.tokens_per_s < 4.0 * a->time.tokens_per_s, "pp 4 can't beat 4x pp 1");

    /* ZeRO shards inside a stage: 16 ranks in both */
    CHECK(plan_b.dims.zero_group == 16 && plan_a.dims.zero_group == 16, "zero groups %lld / %lld",
          (long long)plan_b.dims.zero_group, (long long)plan_a.dims.zero_group);

    /* memory: a stage's model states (8 layers + the output layer + final norm) */
    const double layer = 4.0 * 4096.0 * 4096.0 + 2.0 * 4096.0 * 16384.0 + 2.0 * 4096.0;
    const double stage_params = 8.0 * layer + 50304.0 * 4096.0 + 4096.0;
    CHECK(close_rel(b->mem.term_bytes[ULY_MEM_WEIGHTS], 2.0 * stage_params / 16.0, 1e-12), "stage weights %.6g, want %.6g",
          b->mem.term_bytes[ULY_MEM_WEIGHTS], 2.0 * stage_params / 16.0);
    /* full recompute: each of the stage's 8 layers keeps its input, for 4 micro-batches in flight */
    const double inputs = 4.0 * 8.0 * 2.0 * (32768.0 / 8.0) * 4096.0;
    CHECK(close_rel(b->mem.term_bytes[ULY_MEM_ACTIV], inputs, 1e-12), "first stage activations %.6g, want %.6g",
          b->mem.term_bytes[ULY_MEM_ACTIV], inputs);
    CHECK(b->mem.term_bytes[ULY_MEM_LOGITS] == 0, "the first stage is heavier here and has no logits");

    in_flight(&c, w, a, b);
    stage_cases(&m, &c, b);

    /* plain TP without SP sends the whole b N h from every TP rank */
    w = fx_work(8192);
    w.global_batch = 8;
    CHECK(eval_pp(&m, &w, &c, ULY_STRAT_MEGATRON_TP, 1, 8, 1, 2, &plan_b, b) == 0, "evaluate megatron-tp pp 2");
    sa = op_named(&plan_b, "pp_send_act");
    CHECK(sa && sa->bytes_sent == 2LL * 8192 * 4096, "megatron-tp pp send %lld, want %lld",
          sa ? (long long)sa->bytes_sent : -1LL, 2LL * 8192 * 4096);

    /* uneven stages: 32 layers over 5 stages, the heaviest has 7 and sets the pace; more stages than layers is fatal */
    w = fx_work(8192);
    w.global_batch = 8;
    CHECK(eval_pp(&m, &w, &c, ULY_STRAT_ULYSSES, 8, 1, 1, 5, &plan_b, b) == 0, "evaluate pp 5");
    CHECK(b->feasible && has(b, ULY_R_PP_UNEVEN, 0) && b->time.stage_layers == 7, "pp 5: feasible %d, stage layers %lld",
          b->feasible, (long long)b->time.stage_layers);
    CHECK(eval_pp(&m, &w, &c, ULY_STRAT_ULYSSES, 1, 1, 1, 33, &plan_b, b) == 0, "evaluate pp 33");
    CHECK(!b->feasible && has(b, ULY_R_PP_LAYERS, 1), "pp 33 over 32 layers must be fatal");

    searched_stages(&m, &c, a, b);
    interleaved(&m, &c, a, b);
    scatter_gather(&m, &c, a, b);
    free(a);
    free(b);
    FX_DONE();
}
