/* preset_model.c: the fields of a model preset (sim/presets/README.md): the
 * shape of the transformer, checked field by field and across fields
 * (heads x head_dim = hidden, kv_heads divides heads), then by libulysim's
 * own uly_model_check. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "preset_internal.h"

static const char *const MODEL_KEYS[] = {
    "name", "description", "source", "notes", "sources", "layers", "hidden", "heads", "kv_heads",
    "head_dim", "ffn_hidden", "vocab", "swiglu", "tied_embeddings", "dropout", "embed_norm", NULL};

/* The fields after the name into out (a uly_model), then libulysim's own checks. */
static int model_read(js_doc *d, const cJSON *root, void *out)
{
    uly_model *m = out;
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
    const cJSON *v;
    if (m->heads > m->hidden) {
        v = cJSON_GetObjectItemCaseSensitive(root, "heads");
        return js_bad_value(d, "heads", v, "must be at most hidden (%lld)", (long long)m->hidden);
    }
    if (m->heads * m->head_dim != m->hidden) {
        v = cJSON_GetObjectItemCaseSensitive(root, "head_dim");
        if (m->hidden % m->heads == 0)
            return js_bad_value(d, "head_dim", v, "heads (%lld) x head_dim must equal hidden (%lld): head_dim = %lld would",
                                (long long)m->heads, (long long)m->hidden, (long long)(m->hidden / m->heads));
        return js_bad_value(d, "head_dim", v, "heads (%lld) x head_dim must equal hidden (%lld), and heads does not divide hidden",
                            (long long)m->heads, (long long)m->hidden);
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

int sim_model_parse(const char *text, size_t len, const char *shown, uly_model *out, char *why, size_t why_len)
{
    return preset_text_parse(&MODEL_SCHEMA, text, len, shown, out, why, why_len);
}

int sim_model_load(const char *name_or_path, uly_model *out, char *why, size_t why_len)
{
    return preset_file_load(&MODEL_SCHEMA, name_or_path, out, why, why_len);
}
