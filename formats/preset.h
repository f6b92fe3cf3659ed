/* preset.h: model and cluster presets (JSON, cJSON) for ulysim, ulyharness
 * and ulygpu.
 * A preset is a shipped file under presets/models or presets/clusters, or a
 * user file given by path; both use one schema, validated field by field.
 * Messages written to `why` are one line and name the file, the field and the
 * offending value. */
#ifndef FORMATS_PRESET_H
#define FORMATS_PRESET_H

#include <stddef.h>
#include "ulysim.h"

/* The preset directory: $ULYSIM_PRESETS if set, else share/ulysim/presets
 * installed beside this executable (found from /proc/self/exe, so a moved
 * prefix works), else the source tree's when it exists (running from a build
 * tree), else the configure-time install prefix's. */
const char *preset_dir(void);

/* SUB ("presets", "plots") of the data directory installed beside the
 * running executable (bin/../share/ulysim/SUB), canonical, into out.
 * Returns 0, or -1 when there is none (a build tree, say). */
int preset_data_dir_beside_exe(const char *sub, char *out, size_t n);

/* name_or_path: a preset name ("llama3-8b") or a path to a .json file.
 * Returns 0, or 2 (bad input) with a reason in why. */
int preset_model_load(const char *name_or_path, uly_model *out, char *why, size_t why_len);
/* A Hugging Face config.json (path, or a directory holding one) as a model
 * (preset_hf.c; preset_model_load calls it first): 0, 2 with the key it
 * refuses named, or -1 when path is not one (a preset's own file). */
int preset_model_hf_try(const char *path, uly_model *out, char *why, size_t why_len);
/* The same over a config's text (the fuzzer's entry): -1 when it is not a
 * Hugging Face config (no model_type), else 0 or 2 as above; name is the
 * model's, shown the file named in messages. */
int preset_model_hf_parse(const char *text, size_t len, const char *name, const char *shown, uly_model *out,
                          char *why, size_t why_len);
int preset_cluster_load(const char *name_or_path, uly_cluster *out, char *why, size_t why_len);
/* The optional keys of a model (its experts, its latent attention) that are
 * not 0, as the inline form writes them (",experts=8,topk=2,..."), into buf
 * (n bytes); "" for a dense model with plain attention. Returns the length
 * (n or more: cut). */
size_t preset_model_moe_inline(const uly_model *m, char *buf, size_t n);

/* The same schema and checks on text already in memory (a trace header, a
 * fuzzer's input): len bytes of text, not necessarily NUL-terminated;
 * `shown` names the source in messages. */
int preset_model_parse(const char *text, size_t len, const char *shown, uly_model *out, char *why, size_t why_len);
int preset_cluster_parse(const char *text, size_t len, const char *shown, uly_cluster *out, char *why, size_t why_len);

/* Calls fn once per preset of a kind ("models" or "clusters"), sorted by name,
 * with its name and the "description" and "source" fields. Returns the count,
 * or -1 when the directory cannot be read. */
typedef void (*preset_fn)(const char *name, const char *description, const char *source, void *ctx);
int preset_list(const char *kind, preset_fn fn, void *ctx);

/* 1 when s names a file (a '/' in it, or ending .json), not a preset */
int preset_is_path(const char *s);
/* The file of a preset name (a model or a cluster) or path, and its kind
 * ("models" or "clusters"): 0, or 2 with the valid names in why. */
int preset_path(const char *name, char *path, size_t path_len, const char **kind, char *why, size_t why_len);

#endif
