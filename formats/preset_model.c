/* preset_model.c: the fields of a model preset (sim/presets/README.md): the
 * shape of the transformer, its experts (a mixture of experts) and its
 * latent attention (MLA), checked field by field and across fields
 * (kv_heads divides heads), then by libulysim's own uly_model_check. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preset_internal.h"

static const char *const MODEL_KEYS[] = {
    "name", "description", "source", "notes", "sources", "layers", "hidden", "heads", "kv_heads",
    "head_dim", "ffn_hidden", "vocab", "swiglu", "tied_embeddings", "dropout", "embed_norm", "bias", "qkv_bias",
    /* optional: a mixture of experts, multi-head latent attention (docs/inputs.md) */
    "experts", "topk", "moe_ffn_hidden", "shared_ffn_hidden", "moe_dense_first", "moe_every", "q_lora_rank",
    "kv_lora_rank", "qk_nope_dim", "qk_rope_dim",
    /* optional: sliding-window attention */
    "attn_window", "window_layers", NULL};

/* The optional integer fields of a MoE or MLA model or of sliding windows
 * (0 when absent: a dense model, plain attention, no window), in
 * uly_model's order, with their ranges (the library's: uly_moe_model_check,
 * uly_window_model_check) */
static const struct {
    const char *key;
    size_t off;
} MODEL_MOE_KEYS[] = {
    {"experts", offsetof(uly_model, experts)},
    {"topk", offsetof(uly_model, topk)},
    {"moe_ffn_hidden", offsetof(uly_model, moe_ffn_hidden)},
    {"shared_ffn_hidden", offsetof(uly_model, shared_ffn_hidden)},
    {"moe_dense_first", offsetof(uly_model, moe_dense_first)},
    {"moe_every", offsetof(uly_model, moe_every)},
    {"q_lora_rank", offsetof(uly_model, q_lora_rank)},
    {"kv_lora_rank", offsetof(uly_model, kv_lora_rank)},
    {"qk_nope_dim", offsetof(uly_model, qk_nope_dim)},
    {"qk_rope_dim", offsetof(uly_model, qk_rope_dim)},
    /* sliding-window attention (uly_window_model_check) */
    {"attn_window", offsetof(uly_model, attn_window)},
    {"window_layers", offsetof(uly_model, window_layers)},
};

/* The ten fields a model file must have: nothing is derived silently
 * (preset_missing lists those it lacks; embed_norm is optional). */
static const preset_req MODEL_REQ[] = {{NULL, "layers"},   {NULL, "hidden"},     {NULL, "heads"},
                                       {NULL, "kv_heads"}, {NULL, "head_dim"},   {NULL, "ffn_hidden"},
                                       {NULL, "vocab"},    {NULL, "swiglu"},     {NULL, "tied_embeddings"},
                                       {NULL, "dropout"}};

/* The fields after the name into out (a uly_model), then libulysim's own checks. */
static int model_read(js_doc *d, const cJSON *root, void *out)
{
    uly_model *m = out;
    if (preset_missing(d, root, MODEL_REQ, (int)(sizeof MODEL_REQ / sizeof MODEL_REQ[0]),
                       "a complete model to start from: ulysim presets show llama3-8b"))
        return 2;
    if (js_get_int(d, root, "", "layers", 1, 100000, &m->layers)) return 2;
    if (js_get_int(d, root, "", "hidden", 1, 1048576, &m->hidden)) return 2;
    if (js_get_int(d, root, "", "heads", 1, 16384, &m->heads)) return 2;
    if (js_get_int(d, root, "", "kv_heads", 1, 16384, &m->kv_heads)) return 2;
    if (js_get_int(d, root, "", "head_dim", 1, 16384, &m->head_dim)) return 2;
    if (js_get_int(d, root, "", "ffn_hidden", 1, 4194304, &m->ffn_hidden)) return 2;
    if (js_get_int(d, root, "", "vocab", 1, 16777216, &m->vocab)) return 2;
    if (js_get_bool(d, root, "", "swiglu", &m->swiglu)) return 2;
    if (js_get_bool(d, root, "", "tied_embeddings", &m->tied_embeddings)) return 2;
    if (js_get_bool(d, root, "", "dropout", &m->dropout)) return 2;
    /* optional: files written before it existed stay valid */
    if (cJSON_GetObjectItemCaseSensitive(root, "embed_norm") && js_get_bool(d, root, "", "embed_norm", &m->embed_norm))
        return 2;
    if (cJSON_GetObjectItemCaseSensitive(root, "bias") && js_get_bool(d, root, "", "bias", &m->bias)) return 2;
    if (cJSON_GetObjectItemCaseSensitive(root, "qkv_bias") && js_get_bool(d, root, "", "qkv_bias", &m->qkv_bias))
        return 2;
    /* optional, 0 when absent: files of dense models stay as they are. A
     * query head's width need not be hidden / heads (Qwen3-MoE, gpt-oss) */
    for (size_t k = 0; k < sizeof MODEL_MOE_KEYS / sizeof MODEL_MOE_KEYS[0]; k++) {
        int64_t *f = (int64_t *)((char *)m + MODEL_MOE_KEYS[k].off);
        *f = 0;
        if (cJSON_GetObjectItemCaseSensitive(root, MODEL_MOE_KEYS[k].key) &&
            js_get_int(d, root, "", MODEL_MOE_KEYS[k].key, 0, 4194304, f))
            return 2;
    }
    const cJSON *v;
    if (m->heads > m->hidden) {
        v = cJSON_GetObjectItemCaseSensitive(root, "heads");
        return js_bad_value(d, "heads", v, "must be at most hidden (%lld)", (long long)m->hidden);
    }
    if (m->kv_heads > m->heads || m->heads % m->kv_heads != 0) {
        char divs[160] = "";
        size_t o = 0;
        for (int64_t q = 1; q <= m->heads && o + 24 < sizeof divs; q++)
            if (m->heads % q == 0) {
                int w = snprintf(divs + o, sizeof divs - o, "%s%lld", o ? ", " : "", (long long)q);
                if (w > 0) o += (size_t)w;
            }
        v = cJSON_GetObjectItemCaseSensitive(root, "kv_heads");
        return js_bad_value(d, "kv_heads", v, "must divide heads (%lld): one of %s", (long long)m->heads, divs);
    }
    if (preset_sources_check(d, root)) return 2;
    char w[512];
    return uly_model_check(m, w, sizeof w) == ULY_OK ? 0 : js_doc_fail(d, "%s", w);
}

static const preset_schema MODEL_SCHEMA = {"models", MODEL_KEYS, "gpu", "this looks like a cluster preset, not a model",
                                           sizeof(uly_model), offsetof(uly_model, name), model_read};

int preset_model_parse(const char *text, size_t len, const char *shown, uly_model *out, char *why, size_t why_len)
{
    return preset_text_parse(&MODEL_SCHEMA, text, len, shown, out, why, why_len);
}

/* A value of an inline shape as JSON: a number as JSON writes one, true or
 * false as they are, anything else a string (which the field's own check then
 * names as the wrong type, exactly as in a file). */
static int inline_is_literal(const char *v, size_t n)
{
    if ((n == 4 && !memcmp(v, "true", 4)) || (n == 5 && !memcmp(v, "false", 5))) return 1;
    size_t i = 0;
    if (i < n && v[i] == '-') i++;
    if (i >= n || v[i] < '0' || v[i] > '9') return 0;
    if (v[i] == '0' && i + 1 < n && v[i + 1] >= '0' && v[i + 1] <= '9') return 0; /* leading zero */
    while (i < n && ((v[i] >= '0' && v[i] <= '9') || v[i] == '.' || v[i] == 'e' || v[i] == 'E' || v[i] == '+' ||
                     v[i] == '-'))
        i++;
    if (i != n) return 0;
    char num[64], *end = NULL;
    if (n >= sizeof num) return 0;
    memcpy(num, v, n);
    num[n] = '\0';
    (void)strtod(num, &end);
    return end == num + n;
}

static void inline_put(char *buf, size_t cap, size_t *o, const char *s, size_t n, int quote)
{
    if (quote && *o < cap) buf[(*o)++] = '"';
    for (size_t i = 0; i < n && *o + 2 < cap; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (quote && (ch == '"' || ch == '\\')) buf[(*o)++] = '\\';
        buf[(*o)++] = ch < 0x20 ? '?' : (char)ch; /* a control character is never a valid key or value */
    }
    if (quote && *o < cap) buf[(*o)++] = '"';
}

/* The value of key in "k=v,k=v" text, or NULL. */
static const char *inline_find(const char *text, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, key, kl) && p[kl] == '=') return p + kl + 1;
    return NULL;
}

/* "key=value,key=value": the same object a JSON file holds, read by the same
 * schema, so the keys, their ranges and the cross-field checks are the file's.
 * What a shape leaves out and a file must state is derived the way the presets
 * state it (docs/inputs.md): name "inline", kv_heads = heads (MHA), head_dim =
 * hidden / heads, ffn_hidden = 4 hidden, no SwiGLU, untied embeddings, no
 * dropout masks; no experts and plain attention unless the keys of a MoE or
 * MLA model say (experts=8,topk=2,moe_ffn_hidden=14336, kv_lora_rank=512...). */
static int model_inline_parse(const char *text, uly_model *out, char *why, size_t why_len)
{
    enum { CAP = 4096 };
    char json[CAP], shown[160];
    size_t o = 0, len = strlen(text);
    snprintf(shown, sizeof shown, "inline model");
    if (len > 2048) return snprintf(why, why_len, "%s: %zu characters (at most 2048)", shown, len), 2;
    json[o++] = '{';
    for (const char *p = text; *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        if (!eq || eq == p) {
            snprintf(why, why_len, "%s: '%.*s' is not key=value (valid: keys of a model file, e.g. "
                     "layers=32,hidden=4096,heads=32,vocab=32000)", shown, (int)(n < 60 ? n : 60), p);
            return 2;
        }
        if (o > 1) json[o++] = ',';
        inline_put(json, CAP, &o, p, (size_t)(eq - p), 1);
        json[o++] = ':';
        const char *v = eq + 1;
        size_t vn = n - (size_t)(eq - p) - 1;
        inline_put(json, CAP, &o, v, vn, !inline_is_literal(v, vn));
        if (!end) break;
        p = end + 1;
    }
    /* what a file states and a shape may leave out; the value is only derived
     * from fields given as plain integers (else the file's check reports them) */
    const char *hv = inline_find(text, "hidden"), *av = inline_find(text, "heads");
    const long long hidden = hv ? strtoll(hv, NULL, 10) : 0, heads = av ? strtoll(av, NULL, 10) : 0;
    char extra[256] = "";
    size_t e = 0;
#define INLINE_DEFAULT(key, ...)                                                                        \
    if (!inline_find(text, key) && e < sizeof extra)                                                     \
        e += (size_t)snprintf(extra + e, sizeof extra - e, ",\"" key "\":" __VA_ARGS__)
    INLINE_DEFAULT("name", "\"inline\"");
    if (heads > 0) INLINE_DEFAULT("kv_heads", "%lld", heads);
    if (heads > 0 && hidden > 0 && hidden % heads == 0) INLINE_DEFAULT("head_dim", "%lld", hidden / heads);
    if (hidden > 0 && hidden <= 1048576) INLINE_DEFAULT("ffn_hidden", "%lld", 4 * hidden);
    INLINE_DEFAULT("swiglu", "false");
    INLINE_DEFAULT("tied_embeddings", "false");
    INLINE_DEFAULT("dropout", "false");
#undef INLINE_DEFAULT
    if (o + e + 2 >= CAP) return snprintf(why, why_len, "%s: too long", shown), 2;
    memcpy(json + o, extra, e);
    o += e;
    json[o++] = '}';
    return preset_text_parse(&MODEL_SCHEMA, json, o, shown, out, why, why_len);
}

size_t preset_model_moe_inline(const uly_model *m, char *buf, size_t n)
{
    size_t o = 0;
    if (n) buf[0] = 0;
    for (size_t k = 0; k < sizeof MODEL_MOE_KEYS / sizeof MODEL_MOE_KEYS[0]; k++) {
        const int64_t v = *(const int64_t *)((const char *)m + MODEL_MOE_KEYS[k].off);
        if (v) o += (size_t)snprintf(buf + (o < n ? o : n), o < n ? n - o : 0, ",%s=%lld", MODEL_MOE_KEYS[k].key, (long long)v);
    }
    return o;
}

int preset_model_load(const char *name_or_path, uly_model *out, char *why, size_t why_len)
{
    if (name_or_path && strchr(name_or_path, '=')) return model_inline_parse(name_or_path, out, why, why_len);
    const int hf = name_or_path ? preset_model_hf_try(name_or_path, out, why, why_len) : -1;
    if (hf >= 0) return hf;
    return preset_file_load(&MODEL_SCHEMA, name_or_path, out, why, why_len);
}
