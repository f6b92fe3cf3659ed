/* Activation memory: the formulas of Korthikanti et al. 2022 (none, TP,
 * TP+SP, TP+SP+selective) come out exactly for a GPT-style layer (GELU,
 * f = 4h, MHA, dropout, 2-byte activations, materialised attention), both
 * from the per-layer terms and from the plans of the strategies megatron-tp
 * (TP) and megatron-sp (TP+SP); and the RSA paper's block tables (MLP and
 * attention, TP against SP) with their crossovers BL > 32H and BL > 16AZ come
 * out of the terms of the megatron-tp and rsa plans for BERT Base. */
#include "fixtures.h"

static int close_to(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b) + 1e-6; }

static void korthikanti(void)
{
    uly_model m = fx_model("gpt", 24, 2048, 16, 16, 8192, 51200, 0);
    m.dropout = 1;
    uly_workload w = fx_work(2048);
    w.flash = 0;
    w.micro_batch = 4;
    const double s = 2048, b = 4, h = 2048, a = 16, t = 8;
    uly_act_terms x;
    uly_act_layer_terms(&m, &w, 2048, 1, 0, 1, 0, &x);
    double want = s * b * h * (34.0 + 5.0 * a * s / h);
    CHECK(close_to(x.total, want), "no parallelism: %.0f, want sbh(34 + 5as/h) = %.0f", x.total, want);
    uly_act_layer_terms(&m, &w, 2048, 8, 0, 1, 0, &x);
    want = s * b * h * (10.0 + 24.0 / t + 5.0 * a * s / (h * t));
    CHECK(close_to(x.total, want), "TP: %.0f, want sbh(10 + 24/t + 5as/(ht)) = %.0f", x.total, want);
    uly_act_layer_terms(&m, &w, 2048, 8, 1, 1, 0, &x);
    want = s * b * h * (34.0 / t + 5.0 * a * s / (h * t));
    CHECK(close_to(x.total, want), "TP+SP: %.0f, want sbh(34/t + 5as/(ht)) = %.0f", x.total, want);
    uly_act_layer_terms(&m, &w, 2048, 8, 1, 1, 1, &x);
    want = 34.0 * s * b * h / t;
    CHECK(close_to(x.total, want), "TP+SP+selective: %.0f, want 34sbh/t = %.0f", x.total, want);
}

/* The memory of whole plans: L layers of activations (no recompute: all
 * saved, scores included; selective: the scores of one layer at a time) for
 * megatron-tp and megatron-sp at t = 1, 2, 4, 8; Korthikanti's TP and TP+SP
 * formulas exactly. With flash attention the 5as/(ht) score term becomes the
 * fp32 log-sum-exp of each query row and head, 4 b a s / t bytes. Outside
 * the layers (Korthikanti counts layers only), the embedding's dropout mask:
 * 1 byte per element of the rank's tokens, s b h under TP, s b h / t under
 * SP. */
static void korthikanti_plans(void)
{
    uly_model m = fx_model("gpt", 24, 2048, 16, 16, 8192, 51200, 0);
    m.dropout = 1;
    uly_cluster c = fx_a100(1);
    c.gpu.hbm_bytes = 1e15;
    const double s = 2048, b = 4, h = 2048, a = 16, L = 24;
    for (int64_t t = 1; t <= 8; t *= 2) {
        const double td = (double)t;
        for (int rc = 0; rc < 3; rc++) {
            uly_workload w = fx_work(2048);
            w.flash = rc == 2;
            w.micro_batch = 4;
            w.zero_stage = 0;
            w.recompute = rc == 1 ? ULY_RECOMPUTE_SELECTIVE : ULY_RECOMPUTE_NONE;
            uly_result r;
            /* megatron-tp: sbh (10 + 24/t + 5as/(ht)) per layer */
            CHECK(fx_eval(&m, &w, &c, ULY_STRAT_MEGATRON_TP, 1, 1, t, 1, &r) == 0 && r.feasible,
                  "megatron-tp t=%lld: evaluate", (long long)t);
            const double base = s * b * h * (10.0 + 24.0 / td), sc = s * b * h * 5.0 * a * s / (h * td);
            const double lse = 4.0 * b * a * s / td;
            double act = r.mem.term_bytes[ULY_MEM_ACTIV] - s * b * h, scr = r.mem.term_bytes[ULY_MEM_SCORES];
            if (rc == 0)
                CHECK(close_to(act + scr, L * (base + sc)), "megatron-tp t=%lld: %.0f, want L sbh(10 + 24/t + 5as/(ht)) = %.0f",
                      (long long)t, act + scr, L * (base + sc));
            else if (rc == 1)
                CHECK(close_to(act, L * base) && close_to(scr, sc),
                      "megatron-tp t=%lld selective: %.0f + %.0f, want L sbh(10 + 24/t) = %.0f + one layer's scores %.0f",
                      (long long)t, act, scr, L * base, sc);
            else
                CHECK(close_to(act, L * (base + lse)) && scr == 0, "megatron-tp t=%lld flash: %.0f, want L (sbh(10 + 24/t) + 4bas/t) = %.0f",
                      (long long)t, act, L * (base + lse));
            /* megatron-sp: sbh (34/t + 5as/(ht)) per layer */
            CHECK(fx_eval(&m, &w, &c, ULY_STRAT_MEGATRON_SP, 1, 1, t, 1, &r) == 0 && r.feasible,
                  "megatron-sp t=%lld: evaluate", (long long)t);
            const double sp = s * b * h * 34.0 / td;
            act = r.mem.term_bytes[ULY_MEM_ACTIV] - s * b * h / td;
            scr = r.mem.term_bytes[ULY_MEM_SCORES];
            if (rc == 0)
                CHECK(close_to(act + scr, L * (sp + sc)), "megatron-sp t=%lld: %.0f, want L sbh(34/t + 5as/(ht)) = %.0f",
                      (long long)t, act + scr, L * (sp + sc));
            else if (rc == 1)
                CHECK(close_to(act, L * sp), "megatron-sp t=%lld selective: %.0f, want L 34sbh/t = %.0f", (long long)t,
                      act, L * sp);
        }
    }
    /* full recompute keeps each layer's input: all N tokens on every TP rank
     * (replicated), N/t under SP */
    uly_workload w = fx_work(2048);
    w.micro_batch = 4;
    w.zero_stage = 0;
    uly_result r;
    CHECK(fx_eval(&m, &w, &c, ULY_STRAT_MEGATRON_TP, 1, 1, 8, 1, &r) == 0, "megatron-tp full recompute");
    CHECK(close_to(r.mem.term_bytes[ULY_MEM_ACTIV], L * 2.0 * s * b * h + s * b * h),
          "megatron-tp full recompute: %.0f, want 2 L s b h + the embedding's mask s b h", r.mem.term_bytes[ULY_MEM_ACTIV]);
    /* the layer backward rebuilds holds Korthikanti's TP activations less
     * its input, which is the checkpoint already counted: flash, t = 8,
     * s b h (10 + 24/t) + 4 b a s / t less 2 s b h, on top of backward's
     * working set (the same walk as without recompute) */
    {
        uly_workload wn = w;
        wn.recompute = ULY_RECOMPUTE_NONE;
        uly_result rn;
        CHECK(fx_eval(&m, &wn, &c, ULY_STRAT_MEGATRON_TP, 1, 1, 8, 1, &rn) == 0, "megatron-tp no recompute");
        const double rebuilt = s * b * h * (8.0 + 24.0 / 8.0) + 4.0 * b * a * s / 8.0;
        CHECK(close_to(r.mem.term_bytes[ULY_MEM_WORKING] - rn.mem.term_bytes[ULY_MEM_WORKING], rebuilt),
              "megatron-tp full recompute: working %.0f - %.0f, want the rebuilt layer without its input %.0f",
              r.mem.term_bytes[ULY_MEM_WORKING], rn.mem.term_bytes[ULY_MEM_WORKING], rebuilt);
    }
    CHECK(fx_eval(&m, &w, &c, ULY_STRAT_MEGATRON_SP, 1, 1, 8, 1, &r) == 0, "megatron-sp full recompute");
    CHECK(close_to(r.mem.term_bytes[ULY_MEM_ACTIV], (L * 2.0 + 1.0) * s * b * h / 8.0),
          "megatron-sp full recompute: %.0f, want (2 L + 1) s b h / t (the embedding's mask)",
          r.mem.term_bytes[ULY_MEM_ACTIV]);
}

/* RSA paper tables, in elements (B batch, L length, H hidden, Z heads, A
 * head dim, N degree). The terms the paper counts per block: MLP input and
 * the 4H intermediate; attention input, Q, K, V, output and the scores.
 * Weights carry 4 elements per parameter (weight, grad, Adam m and v). */
typedef struct blocks {
    double mlp, attn;
} blocks;

/* The activation split each plan declares: TP is the megatron-tp plan of
 * degree N, SP the rsa plan of degree N. */
static blocks rsa_blocks(const uly_model *m, int64_t B, int64_t L, int64_t N, int sp)
{
    uly_workload w = fx_work(L);
    w.dtype = ULY_FP32; /* 4 bytes: divide by 4 for elements */
    w.flash = 0;
    w.causal = 0;
    w.recompute = ULY_RECOMPUTE_NONE;
    w.micro_batch = B;
    static uly_plan plan;
    uly_reason why[ULY_MAX_REASONS];
    int nwhy = 0;
    uly_layout l;
    uly_layout_init(&l, sp ? ULY_STRAT_RSA : ULY_STRAT_MEGATRON_TP, 1, sp ? N : 1, sp ? 1 : N, 1);
    const uly_cluster c = fx_a100(1);
    CHECK(uly_plan_build(m, &w, &c, &l, &plan, why, &nwhy) == ULY_OK, "%s plan N=%lld", sp ? "rsa" : "megatron-tp",
          (long long)N);
    uly_act_terms x;
    uly_act_layer_terms(m, &w, L, plan.act_tp, plan.act_sp, plan.act_cp, 0, &x);
    const double e = 4.0;
    const double h = (double)m->hidden;
    const double wsplit = (double)plan.weight_split; /* TP splits the weights N ways, SP none */
    blocks r;
    r.mlp = 4.0 * (2.0 * h * (double)m->ffn_hidden) / wsplit + (x.mlp_in + x.act_in) / e;
    r.attn = 4.0 * (4.0 * h * h) / wsplit + (x.attn_in + x.qkv + x.attn_out + x.scores) / e;
    return r;
}

static void rsa_tables(void)
{
    uly_model m = fx_bert_base();
    m.dropout = 0; /* the RSA tables count no dropout masks */
    const double H = 768, Z = 12, A = 64;
    const int64_t N = 4;
    for (int64_t B = 1; B <= 64; B *= 4) {
        const int64_t L = 512;
        blocks tp = rsa_blocks(&m, B, L, N, 0), sp = rsa_blocks(&m, B, L, N, 1);
        const double Bd = (double)B, Ld = (double)L, Nd = (double)N;
        CHECK(close_to(tp.mlp, 32 * H * H / Nd + 4 * Bd * Ld * H / Nd + Bd * Ld * H), "MLP TP B=%lld", (long long)B);
        CHECK(close_to(sp.mlp, 32 * H * H + 5 * Bd * Ld * H / Nd), "MLP SP B=%lld", (long long)B);
        CHECK(close_to(tp.attn, 16 * A * Z * H / Nd + 4 * Bd * Ld * Z * A / Nd + Bd * Z * Ld * Ld / Nd + Bd * Ld * H),
              "attention TP B=%lld", (long long)B);
        CHECK(close_to(sp.attn, 16 * A * Z * H + 4 * Bd * Z * Ld * A / Nd + Bd * Z * Ld * Ld / Nd + Bd * Ld * H / Nd),
              "attention SP B=%lld", (long long)B);
    }
    /* crossovers: SP uses less memory exactly when BL > 32H (MLP) and BL > 16AZ (attention) */
    const int64_t mlp_cross = 32 * 768, attn_cross = 16 * 64 * 12;
    for (int64_t BL = mlp_cross - 1024; BL <= mlp_cross + 1024; BL += 512) {
        blocks tp = rsa_blocks(&m, BL / 512, 512, N, 0), sp = rsa_blocks(&m, BL / 512, 512, N, 1);
        if (BL % 512) continue;
        if (BL > mlp_cross) CHECK(sp.mlp < tp.mlp, "MLP: SP should win at BL=%lld > 32H", (long long)BL);
        if (BL < mlp_cross) CHECK(sp.mlp > tp.mlp, "MLP: TP should win at BL=%lld < 32H", (long long)BL);
        if (BL == mlp_cross) CHECK(close_to(sp.mlp, tp.mlp), "MLP: equal at BL = 32H");
    }
    for (int64_t B = 1; B <= 64; B++) {
        const int64_t L = 256;
        blocks tp = rsa_blocks(&m, B, L, N, 0), sp = rsa_blocks(&m, B, L, N, 1);
        const int64_t BL = B * L;
        if (BL > attn_cross) CHECK(sp.attn < tp.attn, "attention: SP should win at BL=%lld > 16AZ", (long long)BL);
        if (BL < attn_cross) CHECK(sp.attn > tp.attn, "attention: TP should win at BL=%lld < 16AZ", (long long)BL);
        if (BL == attn_cross) CHECK(close_to(sp.attn, tp.attn), "attention: equal at BL = 16AZ");
    }
    printf("BERT Base crossovers: MLP at BL = 32H = %lld, attention at BL = 16AZ = %lld\n", (long long)mlp_cross,
           (long long)attn_cross);
}

/* Backward's working set (memory.c backward_peak), from an event list
 * written here tensor by tensor: the first layer to run backward, in
 * autograd's order, each op allocating its outputs before its saved inputs
 * and consumed gradients are freed. Live bytes start at zero (what the
 * layers hold is counted elsewhere) and go negative as this layer's saved
 * tensors are freed; the working set is the highest point. */
typedef struct walk {
    double live, peak;
} walk;
static void w_alloc(walk *k, double bytes)
{
    k->live += bytes;
    if (k->live > k->peak) k->peak = k->live;
}
static void w_free(walk *k, double bytes) { k->live -= bytes; }

typedef struct shape {
    double b, T, N, h, a, kv, d, f, t, beta;
    int sp, flash, swiglu, drop;
    double qb; /* bytes of a linear layer's saved input: beta, or an FP8 copy's (0: beta) */
} shape;

static double walk_layer(const shape *z)
{
    walk k = {0, 0};
    const double nt = z->sp ? z->t : 1.0, bt = z->b * z->T, be = z->beta;
    const double res = be * bt * z->h / nt;      /* residual stream, this rank */
    const double whole = be * bt * z->h;         /* a GEMM region's input or output */
    const double mask = z->drop * bt * z->h / nt; /* 1-byte dropout masks */
    const double act_out = be * bt * z->f / z->t, act_in = act_out * (z->swiglu ? 2 : 1);
    const double q = be * bt * z->a * z->d / z->t, kv = be * bt * z->kv * z->d / z->t;
    const double qkv = q + 2 * kv, ctx = q;
    /* what the linear layers saved of their inputs: under FP8 the copies
     * TransformerEngine quantized (qb bytes an element), the gradients
     * still beta */
    const double qs = z->qb > 0 ? z->qb / be : 1.0;
    const double res_saved = res * qs, act_out_saved = act_out * qs, ctx_copy = z->qb > 0 ? ctx * qs : 0;
    const double sc = z->b * z->a * z->T * z->N / z->t, P = z->flash ? 0 : be * sc;
    const double smask = z->flash ? 0 : z->drop * sc, sdrop = z->flash ? 0 : z->drop * be * sc;
    const double lse = z->flash ? 4.0 * z->b * z->a * z->T / z->t : 0;
    /* MLP: out = x + dropout(fc2(act(fc1(ln2(x))))) */
    w_alloc(&k, res);                   /* dY arrives */
    w_alloc(&k, res);                   /* dropout backward: the branch's gradient */
    w_free(&k, mask);
    double g = res;
    if (z->sp) {                        /* all-gathered for the row-parallel GEMM */
        w_alloc(&k, whole);
        w_free(&k, res);
        g = whole;
    }
    w_alloc(&k, act_out);               /* fc2 backward */
    w_free(&k, act_out_saved);          /* its saved input */
    w_free(&k, g);
    w_alloc(&k, act_in);                /* activation backward */
    w_free(&k, act_in);
    w_free(&k, act_out);
    w_alloc(&k, whole);                 /* fc1 backward */
    if (z->sp) {                        /* reduce-scattered back to this rank's tokens */
        w_alloc(&k, res);
        w_free(&k, whole);
    }
    w_free(&k, act_in);
    w_free(&k, res_saved);              /* fc1's saved input (the norm's output) */
    w_alloc(&k, res);                   /* ln2 backward */
    w_free(&k, res);                    /* its saved input */
    w_free(&k, z->sp ? res : whole);
    w_alloc(&k, res);                   /* residual sum: the block input's gradient */
    w_free(&k, res);
    w_free(&k, res);                    /* dY and the norm's gradient consumed */
    /* attention: x + dropout(proj(attn(qkv(ln1(x))))) */
    w_alloc(&k, res);
    w_free(&k, mask);
    g = res;
    if (z->sp) {
        w_alloc(&k, whole);
        w_free(&k, res);
        g = whole;
    }
    w_alloc(&k, ctx);                   /* projection backward */
    w_free(&k, g);
    if (!z->flash) {
        w_free(&k, ctx * qs);           /* the context was saved by the projection only */
        w_alloc(&k, P);                 /* d(P_drop) = dO V^T */
        w_alloc(&k, kv);                /* dV */
        w_free(&k, sdrop);
        w_free(&k, ctx);                /* dO consumed */
        w_alloc(&k, P);                 /* dropout backward */
        w_free(&k, smask);
        w_free(&k, P);
        w_alloc(&k, P);                 /* softmax backward */
        w_free(&k, P);                  /* the saved probabilities */
        w_free(&k, P);
        w_alloc(&k, q + kv);            /* dQ, dK */
        w_free(&k, P);
        w_free(&k, qkv);                /* the saved Q, K, V */
    } else {
        w_free(&k, ctx_copy);           /* the projection's own FP8 copy of the context */
        w_alloc(&k, qkv);               /* dQ, dK, dV */
        w_alloc(&k, ctx * 4.0 / be);    /* the fp32 dQ accumulator */
        w_free(&k, ctx * 4.0 / be);
        w_free(&k, qkv + ctx + lse);    /* saved Q, K, V, output, LSE */
        w_free(&k, ctx);                /* dO consumed */
    }
    w_alloc(&k, qkv);                   /* joined for the QKV GEMM */
    w_free(&k, qkv);
    w_alloc(&k, whole);                 /* QKV GEMM backward */
    if (z->sp) {
        w_alloc(&k, res);
        w_free(&k, whole);
    }
    w_free(&k, qkv);
    w_free(&k, res_saved);              /* its saved input */
    w_alloc(&k, res);                   /* ln1 */
    w_alloc(&k, res);                   /* residual sum */
    return k.peak;
}

static void backward_working_set(void)
{
    uly_model gelu = fx_model("gpt", 24, 2048, 16, 16, 8192, 51200, 0);
    gelu.dropout = 1;
    uly_model glu = fx_llama3_8b();
    uly_cluster c = fx_a100(1);
    c.gpu.hbm_bytes = 1e15;
    static const struct {
        int llama, strat, flash;
        double s, deg;
    } cases[] = {
        {0, ULY_STRAT_MEGATRON_TP, 0, 2048, 1}, {0, ULY_STRAT_MEGATRON_TP, 0, 2048, 8},
        {0, ULY_STRAT_MEGATRON_TP, 0, 8192, 8}, {0, ULY_STRAT_MEGATRON_SP, 0, 4096, 8},
        {0, ULY_STRAT_MEGATRON_SP, 1, 4096, 4}, {1, ULY_STRAT_ULYSSES, 1, 65536, 8},
        {1, ULY_STRAT_RING, 1, 65536, 4},       {1, ULY_STRAT_MEGATRON_TP, 1, 8192, 8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const uly_model *m = cases[i].llama ? &glu : &gelu;
        const double s = cases[i].s, p = cases[i].deg;
        uly_workload w = fx_work((int64_t)s);
        w.flash = cases[i].flash;
        w.micro_batch = 2;
        w.zero_stage = 0;
        w.recompute = ULY_RECOMPUTE_NONE;
        const int tp = cases[i].strat == ULY_STRAT_MEGATRON_TP || cases[i].strat == ULY_STRAT_MEGATRON_SP;
        const int64_t d = (int64_t)p;
        uly_result r;
        CHECK(fx_eval(m, &w, &c, (uly_strategy_id)cases[i].strat, cases[i].strat == ULY_STRAT_ULYSSES ? d : 1,
                      cases[i].strat == ULY_STRAT_RING ? d : 1, tp ? d : 1, 1, &r) == 0,
              "case %zu: evaluate", i);
        const shape z = {.b = 2, .T = tp ? s : s / p, .N = s, .h = (double)m->hidden, .a = (double)m->heads,
                         .kv = (double)m->kv_heads, .d = (double)m->head_dim, .f = (double)m->ffn_hidden,
                         .t = tp ? p : 1, .beta = 2, .sp = cases[i].strat == ULY_STRAT_MEGATRON_SP,
                         .flash = cases[i].flash, .swiglu = m->swiglu, .drop = m->dropout};
        const double want = walk_layer(&z);
        CHECK(close_to(r.mem.term_bytes[ULY_MEM_WORKING], want), "case %zu (%s, %s, s %.0f, degree %.0f): working %.0f, want %.0f",
              i, m->name, uly_strategy_get((uly_strategy_id)cases[i].strat)->name, s, p,
              r.mem.term_bytes[ULY_MEM_WORKING], want);
    }
    /* the logits phase and backward's working set never coexist: the
     * logits term is what the logits ((4 + 2) bytes per element in bf16: the
     * fp32 copy and the bf16 logits or their gradient) and the final norm's
     * input and output (2 + 2 bytes per element of the rank's b N/8 h) add
     * beyond the working set, zero when the working set is larger */
    for (int k = 0; k < 2; k++) {
        uly_workload wl = fx_work(65536);
        wl.flash = k == 0;
        wl.zero_stage = 0;
        uly_result rl;
        CHECK(fx_eval(&glu, &wl, &c, k == 0 ? ULY_STRAT_ULYSSES : ULY_STRAT_RSA, k == 0 ? 8 : 1, k == 0 ? 1 : 8, 1, 1,
                      &rl) == 0,
              "logits case %d: evaluate", k);
        const double logits = 6.0 * 65536.0 / 8.0 * (double)glu.vocab + 4.0 * 65536.0 / 8.0 * (double)glu.hidden,
                     wk = rl.mem.term_bytes[ULY_MEM_WORKING];
        const double want = logits > wk ? logits - wk : 0;
        CHECK(close_to(rl.mem.term_bytes[ULY_MEM_LOGITS], want) && (k == 0 ? want > 0 : want == 0),
              "logits case %d: logits term %.0f, want %.0f (logits %.0f beyond working %.0f)", k,
              rl.mem.term_bytes[ULY_MEM_LOGITS], want, logits, wk);
    }
    /* Megatron-SP: the logits of all N tokens over V/t vocabulary columns,
     * the final norm's input and output over the rank's N/t tokens (the
     * output GEMM keeps its input before the all-gather) */
    {
        uly_workload wl = fx_work(65536);
        wl.zero_stage = 0;
        uly_result rl;
        CHECK(fx_eval(&glu, &wl, &c, ULY_STRAT_MEGATRON_SP, 1, 1, 8, 1, &rl) == 0, "logits megatron-sp: evaluate");
        const double logits = 6.0 * 65536.0 * (double)glu.vocab / 8.0 + 4.0 * 65536.0 / 8.0 * (double)glu.hidden;
        const double wk = rl.mem.term_bytes[ULY_MEM_WORKING];
        CHECK(logits > wk && close_to(rl.mem.term_bytes[ULY_MEM_LOGITS], logits - wk),
              "logits megatron-sp: logits term %.0f, want %.0f (logits %.0f beyond working %.0f)",
              rl.mem.term_bytes[ULY_MEM_LOGITS], logits - wk, logits, wk);
    }
    /* RSA: one full-length dK or dV plus the K/V block in flight, b 2(N/P) k d, bf16 */
    uly_workload w = fx_work(8192);
    w.micro_batch = 4;
    uly_result r;
    CHECK(fx_eval(&gelu, &w, &c, ULY_STRAT_RSA, 1, 8, 1, 1, &r) == 0, "rsa r=8");
    const double want = 2.0 * 4 * 2048.0 * (8192.0 + 2.0 * 8192.0 / 8.0);
    CHECK(close_to(r.mem.term_bytes[ULY_MEM_COMM], want), "rsa r=8 comm buffers: %.0f, want %.0f",
          r.mem.term_bytes[ULY_MEM_COMM], want);
}

/* An H100 as the FP8 runs need it: FP8 tensor cores, GEMMs by shape */
static uly_cluster h100_fp8(void)
{
    uly_cluster c = fx_a100(1);
    snprintf(c.gpu.arch, sizeof c.gpu.arch, "hopper");
    c.gpu.peak_flops[ULY_BF16] = c.gpu.peak_flops[ULY_FP16] = 989e12;
    c.gpu.peak_flops[ULY_FP8] = 1979e12;
    c.gpu.hbm_bytes = 1e15;
    c.gpu.sm_count = 132;
    c.gpu.gemm_peak_frac = 0.803;
    c.gpu.gemm_tile_m = c.gpu.gemm_tile_n = 128;
    return c;
}

/* FP8 training: TransformerEngine's linear layers save the FP8 copy of
 * their input (1 byte an element, the block recipes' scales beside it), not
 * the bf16 one: QKV's, fc1's and fc2's inputs; the output projection's copy
 * comes beside the bf16 output flash attention keeps (materialised: alone).
 * Written out for a Llama 3 8B layer, TP 4 with SP, b 2, s 8192: the bf16
 * terms less (2 - q) bytes on b s h / t twice and b s f / t, plus q b s a d / t
 * under flash; then backward's working set by the walk above with the FP8
 * copies' sizes. Mutants caught: attn_out left at beta (flash: the q term),
 * the blockwise scales dropped, backward_peak's D read from attn_in. */
static void fp8_saved_inputs(void)
{
    const uly_model m = fx_llama3_8b();
    const double b = 2, s = 8192, t = 4, h = (double)m.hidden, f = (double)m.ffn_hidden;
    const double ad = (double)m.heads * (double)m.head_dim;
    static const struct {
        uly_fp8_recipe rc;
        int flash;
        double q;
    } cases[] = {{ULY_FP8_TENSORWISE, 1, 1.0}, {ULY_FP8_DELAYED, 1, 1.0}, {ULY_FP8_BLOCKWISE, 1, 1.0 + 4.0 / 128.0},
                 {ULY_FP8_BLOCKWISE, 0, 1.0 + 4.0 / 128.0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uly_workload w = fx_work((int64_t)s);
        w.micro_batch = (int64_t)b;
        w.flash = cases[i].flash;
        uly_act_terms bf, x;
        uly_act_layer_terms(&m, &w, (int64_t)s, (int64_t)t, 1, 1, 0, &bf);
        w.dtype = ULY_FP8;
        w.fp8_recipe = cases[i].rc;
        uly_act_layer_terms(&m, &w, (int64_t)s, (int64_t)t, 1, 1, 0, &x);
        const double q = cases[i].q;
        double want = bf.total - (2.0 - q) * (2.0 * b * s * h / t + b * s * f / t);
        want += cases[i].flash ? q * b * s * ad / t : -(2.0 - q) * b * s * ad / t;
        CHECK(close_to(x.total, want), "fp8 %s %s: layer %.0f bytes, want %.0f (bf16 %.0f)",
              uly_fp8_recipe_name(cases[i].rc), cases[i].flash ? "flash" : "materialised", x.total, want, bf.total);
        CHECK(close_to(x.ln, bf.ln) && close_to(x.qkv, bf.qkv) && close_to(x.act_in, bf.act_in),
              "fp8: the norms' inputs, Q K V and the activation's input stay bf16");
    }
    /* backward's working set and the stage's activations, from whole plans */
    uly_cluster c = h100_fp8();
    static const struct {
        int strat, flash;
        uly_fp8_recipe rc;
        double q;
    } plans[] = {{ULY_STRAT_MEGATRON_SP, 1, ULY_FP8_TENSORWISE, 1.0},
                 {ULY_STRAT_MEGATRON_TP, 1, ULY_FP8_BLOCKWISE, 1.0 + 4.0 / 128.0},
                 {ULY_STRAT_MEGATRON_TP, 0, ULY_FP8_TENSORWISE, 1.0}};
    for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) {
        uly_workload w = fx_work((int64_t)s);
        w.micro_batch = (int64_t)b;
        w.flash = plans[i].flash;
        w.zero_stage = 0;
        w.recompute = ULY_RECOMPUTE_NONE;
        w.dtype = ULY_FP8;
        w.fp8_recipe = plans[i].rc;
        char why[200];
        CHECK(uly_workload_check(&w, why, sizeof why) == ULY_OK, "fp8 plan %zu: %s", i, why);
        uly_result r;
        CHECK(fx_eval(&m, &w, &c, (uly_strategy_id)plans[i].strat, 1, 1, (int64_t)t, 1, &r) == 0,
              "fp8 plan %zu: evaluate", i);
        const shape z = {.b = b, .T = s, .N = s, .h = h, .a = (double)m.heads, .kv = (double)m.kv_heads,
                         .d = (double)m.head_dim, .f = f, .t = t, .beta = 2,
                         .sp = plans[i].strat == ULY_STRAT_MEGATRON_SP, .flash = plans[i].flash, .swiglu = m.swiglu,
                         .drop = m.dropout, .qb = plans[i].q};
        const double want = walk_layer(&z);
        CHECK(close_to(r.mem.term_bytes[ULY_MEM_WORKING], want), "fp8 plan %zu: working %.0f, want %.0f", i,
              r.mem.term_bytes[ULY_MEM_WORKING], want);
    }
}

int main(void)
{
    fp8_saved_inputs();
    korthikanti();
    korthikanti_plans();
    backward_working_set();
    rsa_tables();
    FX_DONE();
}
