/* preset_internal.h: what the preset loader's files share (preset_dir.c
 * finds and reads a preset, preset_model.c and preset_cluster.c read the
 * fields of each kind). Callers use preset.h. */
#ifndef FORMATS_PRESET_INTERNAL_H
#define FORMATS_PRESET_INTERNAL_H

#include <stddef.h>

#include "json_strict.h"
#include "preset.h"

/* One kind of preset. Every preset starts the same way, read by the loader:
 * only the keys of its kind, its "name", and the optional one-line texts
 * "description", "source" and "notes"; `read` reads the rest. */
typedef struct preset_schema {
    const char *dir;         /* its directory under the preset directory: "models" */
    const char *const *keys; /* its top-level keys (NULL-terminated) */
    const char *other_key;   /* a key only the other kind has: a file with it... */
    const char *other_hint;  /* ...is told this with an unknown key */
    size_t size;             /* of the value read: a uly_model, a uly_cluster */
    size_t name_offset;      /* of the value's char name[ULY_NAME_LEN] */
    /* The fields after the start into out, then "sources", then the model
     * library's own checks. Returns 0 or 2 with the message in d. */
    int (*read)(js_doc *d, const cJSON *root, void *out);
} preset_schema;

/* name_or_path as preset_model_load takes it. The schema's size bytes of out
 * (NULL: none) are written only when the whole preset is valid. */
int preset_file_load(const preset_schema *s, const char *name_or_path, void *out, char *why, size_t why_len);
/* The same on len bytes of text in memory, named `shown` in messages. */
int preset_text_parse(const preset_schema *s, const char *text, size_t len, const char *shown, void *out, char *why,
                      size_t why_len);

/* The end of every preset: "sources", an optional object mapping dotted field
 * paths of the file ("gpu.hbm_gib") to where each number comes from. */
int preset_sources_check(js_doc *d, const cJSON *root);

/* A required field: obj (NULL: the top level) and key. */
typedef struct preset_req {
    const char *obj, *key;
} preset_req;
/* Every required field of req a file lacks, at once: one missing field
 * keeps its own message (from the field's reader, with what it expects);
 * two or more are listed together, with start_from (where a complete file
 * is), so that a hand-written file is fixed in one go. 0, or 2 after the
 * message. */
int preset_missing(js_doc *d, const cJSON *root, const preset_req *req, int n_req, const char *start_from);

#endif
