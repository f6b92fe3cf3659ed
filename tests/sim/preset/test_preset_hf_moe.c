/* test_preset_hf_moe: Hugging Face configs of mixtures of experts and of
 * latent attention (formats/preset_hf.c). The published configs of
 * Mixtral 8x7B, Qwen3-30B-A3B, DeepSeek-V3 and gpt-oss-120b (tests/sim/hf)
 * read as the presets of the same models (whose shapes test_preset_moe
 * holds to the same sources); the layer patterns of Qwen's
 * decoder_sparse_step and mlp_only_layers and of DeepSeek's
 * first_k_dense_replace and moe_layer_freq give the MoE layers the
 * transformers modules build, counted here from their rules; what is not
 * read is refused by name.
 * Usage: test_preset_hf_moe DIR (tests/sim/hf); ULYSIM_PRESETS set. */
#include "preset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preset_check.h"

static const char *dir;

static int load(const char *file, uly_model *m, char *why, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return preset_model_load(path, m, why, n);
}

/* The config in dir/file reads as preset `name`, field for field. */
static void same_as_preset(const char *file, const char *name)
{
    char why[512];
    uly_model hf, p;
    int rc = load(file, &hf, why, sizeof why);
    CHECK(rc == 0, "%s: %s", file, why);
    rc |= preset_model_load(name, &p, why, sizeof why);
    CHECK(rc == 0, "%s: %s", name, why);
    if (rc) return;
    const int64_t a[] = {hf.layers, hf.hidden, hf.heads, hf.kv_heads, hf.head_dim, hf.ffn_hidden, hf.vocab,
                         hf.swiglu, hf.tied_embeddings, hf.dropout, hf.experts, hf.topk, hf.moe_ffn_hidden,
                         hf.shared_ffn_hidden, hf.moe_dense_first, hf.moe_every > 1 ? hf.moe_every : 1,
                         hf.q_lora_rank, hf.kv_lora_rank, hf.qk_nope_dim, hf.qk_rope_dim};
    const int64_t b[] = {p.layers, p.hidden, p.heads, p.kv_heads, p.head_dim, p.ffn_hidden, p.vocab,
                         p.swiglu, p.tied_embeddings, p.dropout, p.experts, p.topk, p.moe_ffn_hidden,
                         p.shared_ffn_hidden, p.moe_dense_first, p.moe_every > 1 ? p.moe_every : 1,
                         p.q_lora_rank, p.kv_lora_rank, p.qk_nope_dim, p.qk_rope_dim};
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
        CHECK(a[i] == b[i], "%s against preset %s: field %zu is %lld, the preset's %lld", file, name, i, (long long)a[i],
              (long long)b[i]);
}

/* The MoE layers of L layers whose rule is (i + 1) % step == 0 past the
 * dense_only first ones (Qwen2MoeDecoderLayer), or i >= first and i % freq
 * == 0 (DeepseekV3DecoderLayer) */
static int64_t qwen_moe_layers(int64_t L, int64_t step, int64_t dense_only)
{
    int64_t k = 0;
    for (int64_t i = 0; i < L; i++) k += i >= dense_only && (i + 1) % step == 0;
    return k;
}

static int64_t deepseek_moe_layers(int64_t L, int64_t first, int64_t freq)
{
    int64_t k = 0;
    for (int64_t i = 0; i < L; i++) k += i >= first && i % freq == 0;
    return k;
}

static void expect_refused(const char *file, const char *what1, const char *what2)
{
    char why[512] = "";
    uly_model m;
    const int rc = load(file, &m, why, sizeof why);
    CHECK(rc == 2 && strstr(why, what1) && (!what2 || strstr(why, what2)) && !strchr(why, '\n'),
          "%s: rc %d, message [%s] should name [%s]", file, rc, why, what1);
}

static void test_patterns(void)
{
    char why[512];
    uly_model m;
    /* decoder_sparse_step 2 over 24 layers: MoE at 1, 3, ..., 23 */
    int rc = load("qwen2-moe-step2.json", &m, why, sizeof why);
    CHECK(rc == 0, "step2: %s", why);
    if (!rc)
        CHECK(m.experts == 60 && m.topk == 4 && m.moe_ffn_hidden == 1408 && m.shared_ffn_hidden == 5632 &&
                  uly_moe_layers(&m) == qwen_moe_layers(24, 2, 0) && m.moe_dense_first == 1,
              "step2: experts %lld topk %lld moe_f %lld shared %lld moe layers %lld (want %lld), first %lld",
              (long long)m.experts, (long long)m.topk, (long long)m.moe_ffn_hidden, (long long)m.shared_ffn_hidden,
              (long long)uly_moe_layers(&m), (long long)qwen_moe_layers(24, 2, 0), (long long)m.moe_dense_first);
    /* mlp_only_layers [0, 1]: 22 MoE layers after two dense */
    rc = load("qwen2-moe-leading-dense.json", &m, why, sizeof why);
    CHECK(rc == 0, "leading: %s", why);
    if (!rc)
        CHECK(uly_moe_layers(&m) == qwen_moe_layers(24, 1, 2) && m.moe_dense_first == 2, "leading: %lld MoE layers",
              (long long)uly_moe_layers(&m));
    /* first_k_dense_replace 3, moe_layer_freq 2 over 12 layers: MoE at 4, 6, 8, 10 */
    rc = load("deepseek-freq2.json", &m, why, sizeof why);
    CHECK(rc == 0, "freq2: %s", why);
    if (!rc)
        CHECK(uly_moe_layers(&m) == deepseek_moe_layers(12, 3, 2) && m.moe_dense_first == 4 && m.moe_every == 2,
              "freq2: %lld MoE layers (want %lld), first %lld", (long long)uly_moe_layers(&m),
              (long long)deepseek_moe_layers(12, 3, 2), (long long)m.moe_dense_first);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_preset_hf_moe DIR\n");
        return 2;
    }
    dir = argv[1];
    same_as_preset("Mixtral-8x7B-v0.1/config.json", "mixtral-8x7b");
    same_as_preset("Qwen3-30B-A3B", "qwen3-30b-a3b");
    same_as_preset("DeepSeek-V3/config.json", "deepseek-v3");
    same_as_preset("gpt-oss-120b/config.json", "gpt-oss-120b");
    test_patterns();
    expect_refused("qwen2-moe-irregular.json", "mlp_only_layers", "[0, ..., j-1]");
    expect_refused("llama4.json", "Llama 4", "chunks");
    expect_refused("llama-with-experts.json", "num_local_experts", "does not read for this model_type");
    /* gpt-oss's two names of the experts per token must agree */
    char why[512];
    uly_model m;
    char path[1024];
    snprintf(path, sizeof path, "%s/gpt-oss-120b/config.json", dir);
    FILE *f = fopen(path, "rb");
    char text[8192];
    const size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[len] = 0;
    char *p = strstr(text, "\"experts_per_token\": 4");
    CHECK(p != NULL, "gpt-oss fixture lacks experts_per_token");
    if (p) {
        p[strlen("\"experts_per_token\": ")] = '5';
        const int rc = preset_model_hf_parse(text, len, "oss", "oss.json", &m, why, sizeof why);
        CHECK(rc == 2 && strstr(why, "experts_per_token"), "disagreeing counts: rc %d [%s]", rc, why);
    }
    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
