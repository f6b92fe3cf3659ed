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
 * fp32 log-sum-exp of each query row and head, 4 b a s / t bytes. */
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
            double act = r.mem.term_bytes[ULY_MEM_ACTIV], scr = r.mem.term_bytes[ULY_MEM_SCORES];
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
            act = r.mem.term_bytes[ULY_MEM_ACTIV];
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
    CHECK(close_to(r.mem.term_bytes[ULY_MEM_ACTIV], L * 2.0 * s * b * h), "megatron-tp full recompute: %.0f, want 2 L s b h",
          r.mem.term_bytes[ULY_MEM_ACTIV]);
    CHECK(fx_eval(&m, &w, &c, ULY_STRAT_MEGATRON_SP, 1, 1, 8, 1, &r) == 0, "megatron-sp full recompute");
    CHECK(close_to(r.mem.term_bytes[ULY_MEM_ACTIV], L * 2.0 * s * b * h / 8.0),
          "megatron-sp full recompute: %.0f, want 2 L s b h / t", r.mem.term_bytes[ULY_MEM_ACTIV]);
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

/* Backward's working set (memory.c backward_peak), by hand for plain TP,
 * bf16, no recompute, materialised scores, in units of s b h bytes (x = one
 * bf16 b x s x h tensor, 2 sbh): the MLP's activation step holds dY and the
 * two f-wide gradients, x (1 + 2f/(ht)); its first-GEMM step dY, the
 * activation input's gradient, the GEMM input's and the norm input's,
 * x (3 + f/(ht)); the attention step dY, the context gradient and one
 * score block beside the saved one, x (1 + 1/t + as/(ht)), less the MLP's
 * saved tensors the layer has freed, x (2 + 2f/(ht)) + sbh (dropout mask).
 * Which step is the peak depends on t and s: all three win somewhere. */
static void backward_working_set(void)
{
    uly_model m = fx_model("gpt", 24, 2048, 16, 16, 8192, 51200, 0);
    m.dropout = 1;
    uly_cluster c = fx_a100(1);
    c.gpu.hbm_bytes = 1e15;
    const double b = 4, h = 2048, a = 16, f = 8192, x = 2.0;
    static const struct {
        double s, t;
        const char *peak;
    } cases[] = {{2048, 1, "activation"}, {2048, 8, "first GEMM"}, {8192, 1, "attention"}, {8192, 8, "attention"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const double s = cases[i].s, t = cases[i].t, sbh = s * b * h;
        uly_workload w = fx_work((int64_t)s);
        w.flash = 0;
        w.micro_batch = 4;
        w.zero_stage = 0;
        w.recompute = ULY_RECOMPUTE_NONE;
        uly_result r;
        CHECK(fx_eval(&m, &w, &c, ULY_STRAT_MEGATRON_TP, 1, 1, (int64_t)t, 1, &r) == 0, "megatron-tp t=%.0f s=%.0f", t,
              s);
        const double act = x * sbh * (1.0 + 2.0 * f / (h * t)), gemm = x * sbh * (3.0 + f / (h * t));
        const double attn = x * sbh * (1.0 + 1.0 / t + a * s / (h * t)) - (x * sbh * (2.0 + 2.0 * f / (h * t)) + sbh);
        const double want = fmax(act, fmax(gemm, attn));
        const char *won = want == act ? "activation" : want == gemm ? "first GEMM" : "attention";
        CHECK(close_to(r.mem.term_bytes[ULY_MEM_WORKING], want) && strcmp(won, cases[i].peak) == 0,
              "megatron-tp t=%.0f s=%.0f: working %.0f, want %.0f (%s step; expected the %s step)", t, s,
              r.mem.term_bytes[ULY_MEM_WORKING], want, won, cases[i].peak);
    }
    /* RSA reduces one full-length dK or dV at a time: b N k d plus the K/V
     * block in flight, b 2(N/P) k d, bf16 */
    uly_workload w = fx_work(8192);
    w.micro_batch = 4;
    uly_result r;
    CHECK(fx_eval(&m, &w, &c, ULY_STRAT_RSA, 1, 8, 1, 1, &r) == 0, "rsa r=8");
    const double want = x * b * 2048.0 * (8192.0 + 2.0 * 8192.0 / 8.0);
    CHECK(close_to(r.mem.term_bytes[ULY_MEM_COMM], want), "rsa r=8 comm buffers: %.0f, want %.0f",
          r.mem.term_bytes[ULY_MEM_COMM], want);
}

int main(void)
{
    korthikanti();
    korthikanti_plans();
    backward_working_set();
    rsa_tables();
    FX_DONE();
}
