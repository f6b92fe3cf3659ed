/* preset_hf.c: a Hugging Face transformers config.json as a model
 * (`--model path/config.json`, or the directory holding one), for the dense
 * decoder families whose layers ulysim prices: Llama, Mistral, Qwen2,
 * Qwen3, Gemma, GPT-NeoX, Phi and Phi-3.
 *
 * Every key of the file is one of three (docs/inputs.md, "Hugging Face
 * configs"): read (the shape: num_hidden_layers, hidden_size,
 * intermediate_size, num_attention_heads, num_key_value_heads, head_dim,
 * vocab_size, tie_word_embeddings, hidden_act, model_type, the dropouts),
 * of no cost in ulysim's model (token ids, norm epsilons, RoPE's constants,
 * initialisation, dtype, biases, which ulysim does not count for any model),
 * or refused by name: experts (num_local_experts, num_experts,
 * n_routed_experts, ...), an active sliding window, and any key not listed,
 * as it may change what a layer costs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "preset.h"
#include "text_file.h"

/* The families read, and whether their MLP is gated (three h x f matrices:
 * LlamaMLP, MistralMLP, Qwen2MLP, Qwen3MLP, GemmaMLP's GeGLU, Phi3MLP's
 * gate_up_proj) or not (GPTNeoXMLP, PhiMLP: two). */
static const struct {
    const char *type;
    int gated;
} families[] = {{"llama", 1}, {"mistral", 1}, {"qwen2", 1}, {"qwen3", 1}, {"gemma", 1},
                {"gpt_neox", 0}, {"phi", 0}, {"phi3", 1}};

/* Keys that change no cost ulysim models. */
static const char *const no_cost[] = {
    "architectures", "_name_or_path", "transformers_version", "torch_dtype", "dtype", "bos_token_id", "eos_token_id",
    "pad_token_id", "initializer_range", "rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "norm_eps",
    "max_position_embeddings", "original_max_position_embeddings", "rope_theta", "rope_scaling", "rotary_emb_base",
    "rotary_pct", "partial_rotary_factor", "use_cache", "pretraining_tp", "attention_bias", "mlp_bias",
    "use_parallel_residual", "use_sliding_window", "max_window_layers", "hidden_activation", "qk_layernorm",
    "tokenizer_class", "auto_map", "model_max_length", "classifier_dropout", "quantization_config", "use_qkv_bias",
    "bias", "hidden_act", "model_type", "num_hidden_layers", "hidden_size", "intermediate_size",
    "num_attention_heads", "num_key_value_heads", "head_dim", "vocab_size", "tie_word_embeddings", "sliding_window",
    "attention_dropout", "hidden_dropout", "resid_pdrop", "embd_pdrop", "attn_pdrop", "is_decoder", "rope_parameters",
    "layer_types", "use_bidirectional_attention", "attn_logit_softcapping", "final_logit_softcapping",
    "query_pre_attn_scalar", "query_key_layernorm",
};

/* Keys of mixture-of-experts and other layers ulysim does not price. */
static const struct {
    const char *key, *what;
} refused[] = {
    {"num_local_experts", "a mixture of experts (Mixtral)"},
    {"num_experts", "a mixture of experts (Qwen2-MoE, Qwen3-MoE)"},
    {"n_routed_experts", "a mixture of experts (DeepSeek)"},
    {"num_experts_per_tok", "a mixture of experts"},
    {"moe_intermediate_size", "a mixture of experts"},
    {"kv_lora_rank", "multi-head latent attention (DeepSeek)"},
};

static int fail(char *why, size_t n, const char *shown, const char *fmt, const char *a, const char *b)
{
    char msg[320];
    snprintf(msg, sizeof msg, fmt, a, b ? b : "");
    return text_fail_at(why, n, shown, 0, "%s", msg);
}

/* An integer key in [1, hi]: 0 with *out; 1 absent (*out untouched); 2 after the message. */
static int get_int(const cJSON *root, const char *key, double hi, int64_t *out, const char *shown, char *why, size_t n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v || cJSON_IsNull(v)) return 1;
    char range[48];
    snprintf(range, sizeof range, "%.0f", hi);
    if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > hi || v->valuedouble != (double)(int64_t)v->valuedouble)
        return fail(why, n, shown, "%s: not an integer in 1..%s", key, range);
    *out = (int64_t)v->valuedouble;
    return 0;
}

/* 1 when the file's JSON is a Hugging Face config (model_type or
 * architectures at its top level) */
static int is_hf(const cJSON *root)
{
    return cJSON_IsObject(root) && (cJSON_GetObjectItemCaseSensitive(root, "model_type") ||
                                     cJSON_GetObjectItemCaseSensitive(root, "architectures"));
}

/* Every key read, of no cost, or refused by name (experts first, in the
 * table's order, whatever the file's): 0, or 2. */
static int keys_check(const cJSON *root, const char *shown, char *why, size_t n)
{
    for (size_t r = 0; r < sizeof refused / sizeof refused[0]; r++) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(root, refused[r].key);
        if (!k || cJSON_IsNull(k) || (cJSON_IsNumber(k) && k->valuedouble == 0)) continue; /* none */
        return fail(why, n, shown, "%s: %s, which ulysim does not price (valid: a dense model)", refused[r].key,
                    refused[r].what);
    }
    for (const cJSON *k = root->child; k; k = k->next) {
        int known = 0;
        for (size_t c = 0; c < sizeof no_cost / sizeof no_cost[0] && !known; c++) known = !strcmp(k->string, no_cost[c]);
        if (!known)
            return fail(why, n, shown, "%s: a key ulysim does not read, and it may change the cost (valid: the keys "
                        "docs/inputs.md lists for Hugging Face configs)", k->string, NULL);
    }
    return 0;
}

/* A sliding window that is used (Mistral v0.1's 4096; Qwen2/3 only with
 * use_sliding_window): attention over a window, not the causal prefix,
 * which ulysim does not price. */
static int window_check(const cJSON *root, const char *type, const char *shown, char *why, size_t n)
{
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(root, "sliding_window");
    if (!w || cJSON_IsNull(w) || cJSON_IsFalse(w)) return 0;
    const cJSON *use = cJSON_GetObjectItemCaseSensitive(root, "use_sliding_window");
    if ((!strcmp(type, "qwen2") || !strcmp(type, "qwen3")) && !cJSON_IsTrue(use)) return 0;
    return fail(why, n, shown, "sliding_window: attention over a sliding window, which ulysim does not price (valid: "
                "a model attending to the whole causal prefix; sliding_window null)", NULL, NULL);
}

/* The dropouts: any above 0 stores masks (ulysim's dropout) */
static int dropout_of(const cJSON *root)
{
    static const char *const keys[] = {"attention_dropout", "hidden_dropout", "resid_pdrop", "embd_pdrop", "attn_pdrop"};
    int any = 0;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, keys[k]);
        any |= v && cJSON_IsNumber(v) && v->valuedouble > 0;
    }
    return any;
}

/* The shape of an HF config already parsed: 0, or 2. */
static int hf_model(const cJSON *root, const char *name, const char *shown, uly_model *m, char *why, size_t n)
{
    if (keys_check(root, shown, why, n)) return 2;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    char valid[160] = "";
    int gated = -1;
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        if (t && cJSON_IsString(t) && !strcmp(t->valuestring, families[f].type)) gated = families[f].gated;
        snprintf(valid + strlen(valid), sizeof valid - strlen(valid), "%s%s", f ? ", " : "", families[f].type);
    }
    if (gated < 0)
        return fail(why, n, shown, "model_type %s: not a family ulysim reads (valid: %s)",
                    t && cJSON_IsString(t) ? t->valuestring : "(missing)", valid);
    if (window_check(root, t->valuestring, shown, why, n)) return 2;
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    static const char *const need[] = {"num_hidden_layers", "hidden_size", "intermediate_size", "num_attention_heads",
                                       "vocab_size"};
    int64_t *const dst[] = {&m->layers, &m->hidden, &m->ffn_hidden, &m->heads, &m->vocab};
    const double hi[] = {100000, 1048576, 4194304, 16384, 16777216};
    for (size_t k = 0; k < sizeof need / sizeof need[0]; k++) {
        const int rc = get_int(root, need[k], hi[k], dst[k], shown, why, n);
        if (rc == 1) return fail(why, n, shown, "%s: missing (valid: a config.json as transformers writes it)", need[k], NULL);
        if (rc) return 2;
    }
    m->kv_heads = m->heads; /* transformers' default: multi-head attention */
    if (get_int(root, "num_key_value_heads", 16384, &m->kv_heads, shown, why, n) == 2) return 2;
    m->head_dim = m->hidden / m->heads;
    if (get_int(root, "head_dim", 16384, &m->head_dim, shown, why, n) == 2) return 2;
    if (m->heads * m->head_dim != m->hidden) {
        char a[96], b[48];
        snprintf(a, sizeof a, "%lld x head_dim %lld = %lld", (long long)m->heads, (long long)m->head_dim,
                 (long long)(m->heads * m->head_dim));
        snprintf(b, sizeof b, "%lld", (long long)m->hidden);
        return fail(why, n, shown, "num_attention_heads %s is not hidden_size %s: ulysim's layers project to "
                    "heads x head_dim = hidden (valid: such a model)", a, b);
    }
    if (m->heads % m->kv_heads)
        return fail(why, n, shown, "num_key_value_heads: must divide num_attention_heads%s%s", "", NULL);
    /* transformers' PretrainedConfig ties the embeddings unless told not to */
    const cJSON *tie = cJSON_GetObjectItemCaseSensitive(root, "tie_word_embeddings");
    if (tie && !cJSON_IsBool(tie)) return fail(why, n, shown, "tie_word_embeddings: not true or false", NULL, NULL);
    m->tied_embeddings = !tie || cJSON_IsTrue(tie);
    m->swiglu = gated;
    m->dropout = dropout_of(root);
    char lib[256];
    if (uly_model_check(m, lib, sizeof lib) != ULY_OK) return fail(why, n, shown, "%s", lib, NULL);
    return 0;
}

int preset_model_hf_parse(const char *text, size_t len, const char *name, const char *shown, uly_model *out,
                          char *why, size_t n)
{
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!is_hf(root)) {
        cJSON_Delete(root);
        return -1;
    }
    const int rc = hf_model(root, name, shown, out, why, n);
    cJSON_Delete(root);
    return rc;
}

int preset_model_hf_try(const char *path, uly_model *out, char *why, size_t n)
{
    char file[4096], name[ULY_NAME_LEN];
    struct stat st;
    /* a path, not a preset's name: a '/' in it or .json at its end
     * (`--model ./Meta-Llama-3-8B`; a bare ".." stays a name to refuse) */
    if (!path || !preset_is_path(path) || stat(path, &st) != 0) return -1;
    const int dir = S_ISDIR(st.st_mode);
    snprintf(file, sizeof file, dir ? "%s/config.json" : "%s", path);
    if (!dir && (strlen(path) < 5 || strcmp(path + strlen(path) - 5, ".json"))) return -1;
    char *text = NULL;
    size_t len = 0;
    int rc = text_file_read(file, (size_t)1 << 22, "a Hugging Face config.json", &text, &len, why, n);
    if (rc) return dir ? 2 : -1; /* a file: the preset loader says what is wrong */
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    if (!is_hf(root)) {
        cJSON_Delete(root);
        return dir ? text_fail_at(why, n, file, 0, "not a Hugging Face config (no model_type)") : -1;
    }
    /* its name: the directory's (meta-llama/Meta-Llama-3-8B/config.json) */
    char base[4096];
    snprintf(base, sizeof base, "%s", file);
    char *slash = strrchr(base, '/');
    if (slash) *slash = 0;
    const char *b = slash ? (strrchr(base, '/') ? strrchr(base, '/') + 1 : base) : "hf";
    snprintf(name, sizeof name, "%.47s", !strcmp(b, ".") || !b[0] ? "hf" : b);
    rc = hf_model(root, name, file, out, why, n);
    cJSON_Delete(root);
    return rc;
}
