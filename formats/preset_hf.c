/* preset_hf.c: a Hugging Face transformers config.json as a model
 * (`--model path/config.json`, or the directory holding one), for the
 * decoder families whose layers ulysim prices: Llama, Mistral, Qwen2,
 * Qwen3, Gemma, GPT-NeoX, Phi and Phi-3, and the mixtures of experts
 * Mixtral, Qwen2-MoE, Qwen3-MoE, DeepSeek-V2/V3 (with their multi-head
 * latent attention) and gpt-oss.
 *
 * Every key of the file is one of three (docs/inputs.md, "Hugging Face
 * configs"): read (the shape: num_hidden_layers, hidden_size,
 * intermediate_size, num_attention_heads, num_key_value_heads, head_dim,
 * vocab_size, tie_word_embeddings, hidden_act, model_type, the dropouts;
 * a MoE family's experts and an MLA family's latents), of no cost in
 * ulysim's model (token ids, norm epsilons, RoPE's constants,
 * initialisation, dtype, biases, routing's constants, which ulysim does not
 * count for any model), or refused by name: the experts' keys in a family
 * that has none, Llama 4, and any key not listed, as it may change what a
 * layer costs. A sliding window is read (window_read). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "preset.h"
#include "text_file.h"

/* How a family's MoE keys read (0: a dense family) */
enum { HF_DENSE, HF_MIXTRAL, HF_QWEN_MOE, HF_DEEPSEEK, HF_GPT_OSS };

/* The families read, whether their MLP is gated (three h x f matrices:
 * LlamaMLP, MistralMLP, Qwen2MLP, Qwen3MLP, GemmaMLP's GeGLU, Phi3MLP's
 * gate_up_proj, the experts of every MoE family here) or not (GPTNeoXMLP,
 * PhiMLP: two), and how their experts are given. */
static const struct {
    const char *type;
    int gated, moe;
} families[] = {{"llama", 1, HF_DENSE},           {"mistral", 1, HF_DENSE},         {"qwen2", 1, HF_DENSE},
                {"qwen3", 1, HF_DENSE},           {"gemma", 1, HF_DENSE},           {"gpt_neox", 0, HF_DENSE},
                {"phi", 0, HF_DENSE},             {"phi3", 1, HF_DENSE},            {"mixtral", 1, HF_MIXTRAL},
                {"qwen2_moe", 1, HF_QWEN_MOE},    {"qwen3_moe", 1, HF_QWEN_MOE},    {"deepseek_v2", 1, HF_DEEPSEEK},
                {"deepseek_v3", 1, HF_DEEPSEEK},  {"gpt_oss", 1, HF_GPT_OSS}};

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
    /* routing's constants and losses: the router's GEMM is priced by its
     * shape alone; the clamp of gpt-oss's SwiGLU; the experts of an
     * inference deployment (ep_size). DeepSeek-V3's multi-token-prediction
     * module (num_nextn_predict_layers) is not priced, as its 671B leaves it
     * out (docs/inputs.md) */
    "router_aux_loss_coef", "output_router_logits", "router_jitter_noise", "norm_topk_prob", "n_group", "topk_group",
    "topk_method", "routed_scaling_factor", "scoring_func", "aux_loss_alpha", "seq_aux", "ep_size",
    "num_nextn_predict_layers", "swiglu_limit", "initial_context_length", "experts_per_token", "rope_interleave",
};

/* The keys of experts and latent attention, the MoE families that read
 * each (bits 1 << HF_*), and what they are; in a family that does not read
 * one it is refused by name. */
#define HF_B(k) (1u << (k))
static const struct {
    const char *key, *what;
    unsigned read_by;
} moe_keys[] = {
    {"num_local_experts", "a mixture of experts (Mixtral, gpt-oss)", HF_B(HF_MIXTRAL) | HF_B(HF_GPT_OSS)},
    {"num_experts", "a mixture of experts (Qwen2-MoE, Qwen3-MoE)", HF_B(HF_QWEN_MOE)},
    {"n_routed_experts", "a mixture of experts (DeepSeek)", HF_B(HF_DEEPSEEK)},
    {"num_experts_per_tok", "a mixture of experts",
     HF_B(HF_MIXTRAL) | HF_B(HF_QWEN_MOE) | HF_B(HF_DEEPSEEK) | HF_B(HF_GPT_OSS)},
    {"moe_intermediate_size", "a mixture of experts", HF_B(HF_QWEN_MOE) | HF_B(HF_DEEPSEEK)},
    {"shared_expert_intermediate_size", "shared experts (Qwen2-MoE)", HF_B(HF_QWEN_MOE)},
    {"decoder_sparse_step", "a mixture of experts (Qwen2-MoE, Qwen3-MoE)", HF_B(HF_QWEN_MOE)},
    {"mlp_only_layers", "a mixture of experts (Qwen2-MoE, Qwen3-MoE)", HF_B(HF_QWEN_MOE)},
    {"n_shared_experts", "shared experts (DeepSeek)", HF_B(HF_DEEPSEEK)},
    {"first_k_dense_replace", "a mixture of experts (DeepSeek)", HF_B(HF_DEEPSEEK)},
    {"moe_layer_freq", "a mixture of experts (DeepSeek)", HF_B(HF_DEEPSEEK)},
    {"kv_lora_rank", "multi-head latent attention (DeepSeek)", HF_B(HF_DEEPSEEK)},
    {"q_lora_rank", "multi-head latent attention (DeepSeek)", HF_B(HF_DEEPSEEK)},
    {"qk_nope_head_dim", "multi-head latent attention (DeepSeek)", HF_B(HF_DEEPSEEK)},
    {"qk_rope_head_dim", "multi-head latent attention (DeepSeek)", HF_B(HF_DEEPSEEK)},
    {"v_head_dim", "multi-head latent attention (DeepSeek)", HF_B(HF_DEEPSEEK)},
};

static int fail(char *why, size_t n, const char *shown, const char *fmt, const char *a, const char *b)
{
    char msg[320];
    snprintf(msg, sizeof msg, fmt, a, b ? b : "");
    return text_fail_at(why, n, shown, 0, "%s", msg);
}

/* An integer key in [lo, hi]: 0 with *out; 1 absent or null (*out
 * untouched); 2 after the message. */
static int get_int_in(const cJSON *root, const char *key, double lo, double hi, int64_t *out, const char *shown,
                      char *why, size_t n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v || cJSON_IsNull(v)) return 1;
    char range[64];
    snprintf(range, sizeof range, "%.0f..%.0f", lo, hi);
    if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi ||
        v->valuedouble != (double)(int64_t)v->valuedouble)
        return fail(why, n, shown, "%s: not an integer in %s", key, range);
    *out = (int64_t)v->valuedouble;
    return 0;
}

static int get_int(const cJSON *root, const char *key, double hi, int64_t *out, const char *shown, char *why, size_t n)
{
    return get_int_in(root, key, 1, hi, out, shown, why, n);
}

/* 1 when the file's JSON is a Hugging Face config (model_type or
 * architectures at its top level) */
static int is_hf(const cJSON *root)
{
    return cJSON_IsObject(root) && (cJSON_GetObjectItemCaseSensitive(root, "model_type") ||
                                     cJSON_GetObjectItemCaseSensitive(root, "architectures"));
}

/* A key that says "none": absent, null, 0, an empty list */
static int key_none(const cJSON *k)
{
    return !k || cJSON_IsNull(k) || (cJSON_IsNumber(k) && k->valuedouble == 0) ||
           (cJSON_IsArray(k) && !cJSON_GetArraySize(k));
}

/* Every key read, of no cost, or refused by name (the experts' keys of
 * another family first, in the table's order, whatever the file's): 0, or
 * 2. moe: the family's HF_* kind. */
static int keys_check(const cJSON *root, int moe, const char *shown, char *why, size_t n)
{
    for (size_t r = 0; r < sizeof moe_keys / sizeof moe_keys[0]; r++) {
        if (moe_keys[r].read_by & HF_B(moe)) continue;
        if (key_none(cJSON_GetObjectItemCaseSensitive(root, moe_keys[r].key))) continue;
        return fail(why, n, shown, "%s: %s, which ulysim does not read for this model_type (valid: a dense model, or "
                    "the MoE families mixtral, qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3, gpt_oss)",
                    moe_keys[r].key, moe_keys[r].what);
    }
    for (const cJSON *k = root->child; k; k = k->next) {
        int known = 0;
        for (size_t c = 0; c < sizeof no_cost / sizeof no_cost[0] && !known; c++) known = !strcmp(k->string, no_cost[c]);
        for (size_t c = 0; c < sizeof moe_keys / sizeof moe_keys[0] && !known; c++)
            known = !strcmp(k->string, moe_keys[c].key);
        if (!known)
            return fail(why, n, shown, "%s: a key ulysim does not read, and it may change the cost (valid: the keys "
                        "docs/inputs.md lists for Hugging Face configs)", k->string, NULL);
    }
    return 0;
}

/* The sliding window (docs/inputs.md): its width from sliding_window, and
 * which layers have it: those layer_types names "sliding_attention" where
 * the config lists them (gpt-oss, transformers' newer configs); Qwen2/3's
 * layers from max_window_layers on, only with use_sliding_window
 * (transformers' Qwen2Attention); gpt-oss's even layers when it lists none
 * (GptOssConfig's default layer_types); else every layer (Mistral 7B v0.1,
 * Phi-3). sliding_window null, false or absent: none. 0, or 2. */
static int window_read(const cJSON *root, const char *type, uly_model *m, const char *shown, char *why, size_t n)
{
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(root, "sliding_window");
    if (!w || cJSON_IsNull(w) || cJSON_IsFalse(w)) return 0;
    const cJSON *use = cJSON_GetObjectItemCaseSensitive(root, "use_sliding_window");
    const int qwen = !strncmp(type, "qwen", 4);
    if (qwen && !cJSON_IsTrue(use)) return 0;
    int64_t win = 0;
    if (get_int_in(root, "sliding_window", 1, 4194304, &win, shown, why, n)) return 2;
    int64_t nw = m->layers;
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(root, "layer_types");
    if (types && !cJSON_IsNull(types)) {
        if (!cJSON_IsArray(types) || cJSON_GetArraySize(types) != m->layers)
            return fail(why, n, shown, "layer_types: not a list of num_hidden_layers entries (valid: one of "
                        "\"sliding_attention\" or \"full_attention\" per layer)", NULL, NULL);
        nw = 0;
        const cJSON *t;
        cJSON_ArrayForEach(t, types) {
            if (!cJSON_IsString(t) || (strcmp(t->valuestring, "sliding_attention") &&
                                       strcmp(t->valuestring, "full_attention")))
                return fail(why, n, shown, "layer_types: an entry neither \"sliding_attention\" nor "
                            "\"full_attention\" (valid: those two, one per layer)", NULL, NULL);
            nw += !strcmp(t->valuestring, "sliding_attention");
        }
    } else if (qwen) {
        int64_t full = 28 < m->layers ? 28 : m->layers; /* Qwen2Config's and Qwen3Config's default */
        const int rc = get_int_in(root, "max_window_layers", 0, 100000, &full, shown, why, n);
        if (rc == 2) return 2;
        nw = full < m->layers ? m->layers - full : 0;
    } else if (!strcmp(type, "gpt_oss")) {
        nw = (m->layers + 1) / 2;
    }
    if (nw > 0) m->attn_window = win, m->window_layers = nw;
    return 0;
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

/* Qwen2/3-MoE's layers: MoE where (i + 1) % decoder_sparse_step == 0 and i
 * is not in mlp_only_layers (Qwen2MoeDecoderLayer). A step k is ulysim's
 * moe_dense_first k - 1, moe_every k (the same layers: k-1, 2k-1, ...);
 * mlp_only_layers [0, ..., j-1] with step 1 is moe_dense_first j; any other
 * list is refused. 0, or 2. */
static int qwen_layers(const cJSON *root, uly_model *m, const char *shown, char *why, size_t n)
{
    int64_t step = 1;
    if (get_int(root, "decoder_sparse_step", 1 << 20, &step, shown, why, n) == 2) return 2;
    const cJSON *only = cJSON_GetObjectItemCaseSensitive(root, "mlp_only_layers");
    int j = 0;
    if (only && !cJSON_IsNull(only)) {
        if (!cJSON_IsArray(only)) return fail(why, n, shown, "mlp_only_layers: not a list of layer indices", NULL, NULL);
        for (const cJSON *e = only->child; e; e = e->next, j++)
            if (!cJSON_IsNumber(e) || e->valuedouble != (double)j)
                return fail(why, n, shown, "mlp_only_layers: dense layers other than the first ones (0, 1, ...), "
                            "which ulysim does not place (valid: [] or [0, ..., j-1])", NULL, NULL);
    }
    if (j && step > 1)
        return fail(why, n, shown, "mlp_only_layers: leading dense layers with decoder_sparse_step above 1, which "
                    "ulysim does not place (valid: one of the two)", NULL, NULL);
    m->moe_dense_first = j ? j : step - 1;
    m->moe_every = step;
    return 0;
}

/* DeepSeek's layers: MoE where i >= first_k_dense_replace and i %
 * moe_layer_freq == 0 (DeepseekV3DecoderLayer): the first MoE layer is
 * the first multiple of the frequency at or after the dense ones. And its
 * latent attention; head_dim is the value head. 0, or 2. */
static int deepseek_fields(const cJSON *root, uly_model *m, const char *shown, char *why, size_t n)
{
    int64_t first = 0, freq = 1, shared = 0;
    if (get_int_in(root, "first_k_dense_replace", 0, 1 << 20, &first, shown, why, n) == 2) return 2;
    if (get_int(root, "moe_layer_freq", 1 << 20, &freq, shown, why, n) == 2) return 2;
    if (get_int_in(root, "n_shared_experts", 0, 1 << 20, &shared, shown, why, n) == 2) return 2;
    m->moe_dense_first = (first + freq - 1) / freq * freq;
    m->moe_every = freq;
    m->shared_ffn_hidden = shared * m->moe_ffn_hidden;
    static const char *const mla[] = {"kv_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim"};
    int64_t *const dst[] = {&m->kv_lora_rank, &m->q_lora_rank, &m->qk_nope_dim, &m->qk_rope_dim};
    for (size_t k = 0; k < sizeof mla / sizeof mla[0]; k++)
        if (get_int_in(root, mla[k], 0, 4194304, dst[k], shown, why, n) == 2) return 2;
    if (m->kv_lora_rank > 0) {
        const int rc = get_int(root, "v_head_dim", 16384, &m->head_dim, shown, why, n);
        if (rc == 1) return fail(why, n, shown, "v_head_dim: missing (valid: multi-head latent attention's value head "
                                 "width, as DeepSeek's config.json gives it)", NULL, NULL);
        if (rc) return 2;
    }
    return 0;
}

/* The experts of a MoE family (moe, HF_*): 0, or 2. */
static int hf_experts(const cJSON *root, int moe, uly_model *m, const char *shown, char *why, size_t n)
{
    static const char *const count_key[] = {[HF_MIXTRAL] = "num_local_experts", [HF_QWEN_MOE] = "num_experts",
                                            [HF_DEEPSEEK] = "n_routed_experts", [HF_GPT_OSS] = "num_local_experts"};
    int rc = get_int_in(root, count_key[moe], 0, 4194304, &m->experts, shown, why, n);
    if (rc == 2) return 2;
    if (m->experts == 0) return 0; /* none: a dense model of the family */
    rc = get_int(root, "num_experts_per_tok", 4194304, &m->topk, shown, why, n);
    int64_t per_token = 0;
    if (rc == 1 && moe == HF_GPT_OSS) /* openai's own key */
        rc = get_int(root, "experts_per_token", 4194304, &m->topk, shown, why, n);
    else if (rc == 0 && get_int(root, "experts_per_token", 4194304, &per_token, shown, why, n) == 0 && per_token != m->topk)
        return fail(why, n, shown, "experts_per_token: disagrees with num_experts_per_tok (valid: the same count)",
                    NULL, NULL);
    if (rc == 1) return fail(why, n, shown, "num_experts_per_tok: missing (valid: the experts a token is routed to)",
                             NULL, NULL);
    if (rc) return 2;
    /* Mixtral's and gpt-oss's experts are intermediate_size wide; Qwen's
     * and DeepSeek's moe_intermediate_size */
    if (moe == HF_MIXTRAL || moe == HF_GPT_OSS) {
        m->moe_ffn_hidden = m->ffn_hidden;
    } else {
        rc = get_int(root, "moe_intermediate_size", 4194304, &m->moe_ffn_hidden, shown, why, n);
        if (rc == 1) return fail(why, n, shown, "moe_intermediate_size: missing (valid: one expert's FFN width)", NULL, NULL);
        if (rc) return 2;
    }
    if (moe == HF_QWEN_MOE) {
        if (get_int_in(root, "shared_expert_intermediate_size", 0, 4194304, &m->shared_ffn_hidden, shown, why, n) == 2)
            return 2;
        return qwen_layers(root, m, shown, why, n);
    }
    return moe == HF_DEEPSEEK ? deepseek_fields(root, m, shown, why, n) : 0;
}

/* The family of model_type: its index in families, or -1 after the message
 * (Llama 4 refused by name). */
static int hf_family(const cJSON *root, const char *shown, char *why, size_t n)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    const char *type = t && cJSON_IsString(t) ? t->valuestring : "(missing)";
    if (!strncmp(type, "llama4", 6)) {
        fail(why, n, shown, "model_type %s: Llama 4, whose layers attend over 8192-token chunks in three of four "
             "(and interleave their experts, interleave_moe_layer_step), which ulysim does not price (valid: a model "
             "attending to the whole causal prefix)", type, NULL);
        return -1;
    }
    char valid[240] = "";
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        if (!strcmp(type, families[f].type)) return (int)f;
        snprintf(valid + strlen(valid), sizeof valid - strlen(valid), "%s%s", f ? ", " : "", families[f].type);
    }
    fail(why, n, shown, "model_type %s: not a family ulysim reads (valid: %s)", type, valid);
    return -1;
}

/* The shape of an HF config already parsed: 0, or 2. */
static int hf_model(const cJSON *root, const char *name, const char *shown, uly_model *m, char *why, size_t n)
{
    const int fam = hf_family(root, shown, why, n);
    if (fam < 0 || keys_check(root, families[fam].moe, shown, why, n)) return 2;
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
    const int hd = get_int(root, "head_dim", 16384, &m->head_dim, shown, why, n);
    if (hd == 2) return 2;
    /* a query head's width need not be hidden / heads (Qwen3-MoE, gpt-oss),
     * but without head_dim it is, and must be whole */
    if (hd == 1 && m->hidden % m->heads)
        return fail(why, n, shown, "head_dim: missing, and num_attention_heads does not divide hidden_size (valid: "
                    "head_dim given, or heads that divide it)", NULL, NULL);
    if (m->heads % m->kv_heads)
        return fail(why, n, shown, "num_key_value_heads: must divide num_attention_heads%s%s", "", NULL);
    /* transformers' PretrainedConfig ties the embeddings unless told not to */
    const cJSON *tie = cJSON_GetObjectItemCaseSensitive(root, "tie_word_embeddings");
    if (tie && !cJSON_IsBool(tie)) return fail(why, n, shown, "tie_word_embeddings: not true or false", NULL, NULL);
    m->tied_embeddings = !tie || cJSON_IsTrue(tie);
    m->swiglu = families[fam].gated;
    m->dropout = dropout_of(root);
    if (families[fam].moe && hf_experts(root, families[fam].moe, m, shown, why, n)) return 2;
    if (window_read(root, families[fam].type, m, shown, why, n)) return 2;
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
