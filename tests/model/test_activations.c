/* Activation memory: the formulas of Korthikanti et al. 2022 (none, TP,
 * TP+SP, TP+SP+selective) come out exactly for a GPT-style layer (GELU,
 * f = 4h, MHA, dropout, 2-byte activations, materialised attention); and the
 * RSA paper's block tables (MLP and attention, TP against SP) with their
 * crossovers BL > 32H and BL > 16AZ come out of the same terms for BERT Base. */
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

/* RSA paper tables, in elements (B batch, L length, H hidden, Z heads, A
 * head dim, N degree). The terms the paper counts per block: MLP input and
 * the 4H intermediate; attention input, Q, K, V, output and the scores.
 * Weights carry 4 elements per parameter (weight, grad, Adam m and v). */
typedef struct blocks {
    double mlp, attn;
} blocks;

static blocks rsa_blocks(const uly_model *m, int64_t B, int64_t L, int64_t N, int sp)
{
    uly_workload w = fx_work(L);
    w.dtype = ULY_FP32; /* 4 bytes: divide by 4 for elements */
    w.flash = 0;
    w.micro_batch = B;
    uly_act_terms x;
    if (sp) uly_act_layer_terms(m, &w, L, 1, 0, N, 0, &x);
    else uly_act_layer_terms(m, &w, L, N, 0, 1, 0, &x);
    const double e = 4.0;
    const double h = (double)m->hidden;
    const double wsplit = sp ? 1.0 : (double)N;
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

int main(void)
{
    korthikanti();
    rsa_tables();
    FX_DONE();
}
