/* preset_dir.c: where presets are found and how one is read (see preset.h
 * and sim/presets/README.md for the schema). A name ("llama3-8b") is looked up
 * in the preset directory of its kind; anything with a '/' or ending in
 * .json is a path. The file goes through the gates of json_strict.c; the
 * fields of each kind are read by preset_model.c and preset_cluster.c.
 * Every message is one line naming the file, the field and the value. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "preset_internal.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef ULY_PRESET_DIR_SOURCE
#define ULY_PRESET_DIR_SOURCE "sim/presets"
#endif
#ifndef ULY_PRESET_DIR_INSTALLED
#define ULY_PRESET_DIR_INSTALLED "/usr/local/share/ulysim/presets"
#endif
/* The installed data directory relative to the installed executable's
 * directory (bin/ -> share/ulysim), so a copied or moved prefix still works. */
#ifndef ULY_DATA_FROM_BIN
#define ULY_DATA_FROM_BIN "../share/ulysim"
#endif

#define PRESET_MAX_BYTES (1024 * 1024) /* a real preset is a few KiB */
#define PRESET_MAX_DEPTH 8             /* nesting refused beyond this... */
#define PRESET_SCHEMA_DEPTH 5          /* ...where the schema needs this */
#define PRESET_MAX_SOURCES 128         /* keys of "sources" */
#define PRESET_MAX_LIST 4096           /* files listed per kind */

/* ----------------------------------------------------------------- files */

/* A preset document: its messages say "a preset". */
static js_doc preset_doc(const char *shown, char *why, size_t why_len)
{
    js_doc d = {shown, why, why_len, "preset", PRESET_MAX_DEPTH, PRESET_SCHEMA_DEPTH};
    return d;
}

/* Reads a regular file of at most PRESET_MAX_BYTES. Returns 0, or 2 with a
 * message (open_errno: errno of a failed open, else 0). */
static int preset_file_read(const char *path, const char *shown, js_file *f, char *why, size_t why_len,
                            int *open_errno)
{
    js_file_status st = js_file_read(path, PRESET_MAX_BYTES, f);
    *open_errno = st == JS_FILE_OPEN ? f->err : 0;
    switch (st) {
    case JS_FILE_OK:
        return 0;
    case JS_FILE_OPEN:
        return js_fail(why, why_len, shown, "cannot open: %s", strerror(f->err));
    case JS_FILE_STAT:
        return js_fail(why, why_len, shown, "cannot stat: %s", strerror(f->err));
    case JS_FILE_DIR:
        return js_fail(why, why_len, shown, "is a directory, not a preset file");
    case JS_FILE_SPECIAL:
        return js_fail(why, why_len, shown, "is not a regular file (a FIFO, socket or device); give a .json file");
    case JS_FILE_BIG:
        return js_fail(why, why_len, shown, "is %lld bytes; a preset may be at most %d bytes (1 MiB)", f->size,
                       PRESET_MAX_BYTES);
    case JS_FILE_GREW:
        return js_fail(why, why_len, shown, "is over %d bytes; a preset may be at most 1 MiB", PRESET_MAX_BYTES);
    case JS_FILE_READ:
        return js_fail(why, why_len, shown, "cannot read: %s", strerror(f->err));
    case JS_FILE_NOMEM:
        break;
    }
    return js_fail(why, why_len, shown, "out of memory reading the file");
}

/* ---------------------------------------------------------- common fields */

/* What a preset is read into before it is known to be valid. */
typedef union preset_value {
    uly_model model;
    uly_cluster cluster;
} preset_value;

/* The start every preset shares: only the keys of its kind, its name, and
 * the optional one-line texts. */
static int preset_start_read(js_doc *d, const preset_schema *s, const cJSON *root, char *name)
{
    const char *hint = cJSON_GetObjectItemCaseSensitive(root, s->other_key) ? s->other_hint : NULL;
    if (js_check_keys(d, root, "", s->keys, hint)) return 2;
    if (js_get_name(d, root, "", "name", name, ULY_NAME_LEN)) return 2;
    if (js_get_text_opt(d, root, "description") || js_get_text_opt(d, root, "source") ||
        js_get_text_opt(d, root, "notes"))
        return 2;
    return 0;
}

/* Reads the gated root (NULL: the gates failed) as the schema says, and
 * into out only when the whole preset is valid. */
static int preset_root_read(js_doc *d, const preset_schema *s, cJSON *root, void *out)
{
    preset_value v;
    memset(&v, 0, sizeof v);
    int rc = root ? preset_start_read(d, s, root, (char *)&v + s->name_offset) : 2;
    if (rc == 0) rc = s->read(d, root, &v);
    if (rc == 0 && out) memcpy(out, &v, s->size);
    cJSON_Delete(root);
    return rc;
}

/* Every required field a file lacks, named together when two or more are
 * missing (one is left to its reader's own message): 0, or 2. */
int preset_missing(js_doc *d, const cJSON *root, const preset_req *req, int n_req, const char *start_from)
{
    char list[800] = "";
    int n = 0;
    for (int i = 0; i < n_req; i++) {
        const cJSON *o = req[i].obj ? cJSON_GetObjectItemCaseSensitive(root, req[i].obj) : root;
        if (!cJSON_IsObject(o) || cJSON_GetObjectItemCaseSensitive(o, req[i].key)) continue;
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s%s%s", n ? ", " : "", req[i].obj ? req[i].obj : "",
                 req[i].obj ? "." : "", req[i].key);
        n++;
    }
    if (n < 2) return 0;
    return js_doc_fail(d, "%d fields are missing: %s (%s)", n, list, start_from);
}

/* "sources": { "<dotted field path>": "<where the number comes from>" }. */
int preset_sources_check(js_doc *d, const cJSON *root)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "sources");
    if (!s) return 0;
    if (!cJSON_IsObject(s))
        return js_bad_value(d, "sources", s, "must be an object mapping field paths (e.g. \"gpu.hbm_gib\") to strings");
    int n = js_count_members(s);
    if (n > PRESET_MAX_SOURCES)
        return js_doc_fail(d, "object \"sources\" has %d members: at most %d allowed", n, PRESET_MAX_SOURCES);
    for (const cJSON *it = s->child; it; it = it->next) {
        char path[200];
        snprintf(path, sizeof path, "sources.%.120s", it->string ? it->string : "");
        if (!it->string || !js_path_exists(root, it->string) || !strncmp(it->string, "sources", 7))
            return js_doc_fail(d, "field \"%s\": \"%.120s\" names no field of this file (keys of \"sources\" are field paths such as \"gpu.hbm_gib\")",
                               path, it->string ? it->string : "");
        if (js_check_text(d, it, path)) return 2;
    }
    return 0;
}

/* ------------------------------------------------------------ resolving */

int preset_data_dir_beside_exe(const char *sub, char *out, size_t n)
{
    /* /proc/self/exe, not argv[0]: it is the file that runs, whatever PATH
     * or symbolic link found it. */
    char exe[PATH_MAX], dir[PATH_MAX + 64], real[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0 || !out || n == 0) return -1;
    exe[k] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = '\0';
    int w = snprintf(dir, sizeof dir, "%s/%s/%s", exe, ULY_DATA_FROM_BIN, sub);
    if (w < 0 || (size_t)w >= sizeof dir || !realpath(dir, real)) return -1;
    struct stat st;
    if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode) || strlen(real) >= n) return -1;
    memcpy(out, real, strlen(real) + 1);
    return 0;
}

const char *preset_dir(void)
{
    /* The order README.md and --help describe: an explicit choice, then the
     * copy installed with this executable (wherever the prefix now lies),
     * then the source tree of a build that is not installed, then the
     * configure-time prefix. */
    static char beside[PATH_MAX];
    const char *env = getenv("ULYSIM_PRESETS");
    if (env && *env) return env;
    if (preset_data_dir_beside_exe("presets", beside, sizeof beside) == 0) return beside;
    struct stat st;
    if (stat(ULY_PRESET_DIR_SOURCE, &st) == 0 && S_ISDIR(st.st_mode)) return ULY_PRESET_DIR_SOURCE;
    return ULY_PRESET_DIR_INSTALLED;
}

int preset_is_path(const char *s)
{
    size_t n = strlen(s);
    return strchr(s, '/') != NULL || (n >= 5 && !strcmp(s + n - 5, ".json"));
}

static int valid_preset_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= ULY_NAME_LEN || s[0] == '.') return 0;
    for (size_t i = 0; i < n; i++)
        if (!js_name_char_ok(s[i])) return 0;
    return 1;
}

typedef struct name_list {
    char **v;
    int n, cap;
} name_list;

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorted stems of dir/kind/ *.json. Returns 0, or -1 when unreadable. */
static int list_names(const char *kind, name_list *out)
{
    char dir[4096];
    out->v = NULL;
    out->n = out->cap = 0;
    snprintf(dir, sizeof dir, "%s/%s", preset_dir(), kind);
    DIR *d = opendir(dir);
    if (!d) return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && out->n < PRESET_MAX_LIST) {
        size_t n = strlen(e->d_name);
        if (n <= 5 || strcmp(e->d_name + n - 5, ".json")) continue;
        char stem[ULY_NAME_LEN + 8];
        if (n - 5 >= sizeof stem) continue;
        memcpy(stem, e->d_name, n - 5);
        stem[n - 5] = '\0';
        if (!valid_preset_name(stem)) continue;
        if (out->n == out->cap) {
            int cap = out->cap ? out->cap * 2 : 16;
            char **nv = realloc(out->v, (size_t)cap * sizeof *nv);
            if (!nv) break;
            out->v = nv;
            out->cap = cap;
        }
        out->v[out->n] = strdup(stem);
        if (out->v[out->n]) out->n++;
    }
    closedir(d);
    if (out->n > 1) qsort(out->v, (size_t)out->n, sizeof *out->v, cmp_str);
    return 0;
}

static void free_names(name_list *l)
{
    for (int i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

/* The kind's names, comma-separated, into buf: 0, or -1 when the directory
 * cannot be read. */
/* The names of kind, comma-separated, into buf; near: the name closest to
 * typed (a "did you mean" hint, as unknown options get one), "" when none
 * is within two edits, or a third of its length. 0, or -1 when the
 * directory cannot be read. */
static int names_of(const char *kind, const char *typed, char *buf, size_t n, char *near, size_t near_n)
{
    name_list l;
    buf[0] = 0;
    if (near_n) near[0] = 0;
    if (list_names(kind, &l) != 0) return -1;
    size_t o = 0;
    int best = 99;
    for (int i = 0; i < l.n; i++) {
        int w = snprintf(buf + o, n - o, "%s%s", i ? ", " : "", l.v[i]);
        if (w < 0 || (size_t)w >= n - o) break;
        o += (size_t)w;
        const int d = typed ? js_edit_distance(typed, l.v[i]) : 99;
        const int room = (int)strlen(l.v[i]) / 3 > 2 ? (int)strlen(l.v[i]) / 3 : 2;
        if (d <= room && d < best && near_n) {
            best = d;
            snprintf(near, near_n, "%s", l.v[i]);
        }
    }
    free_names(&l);
    return 0;
}

/* kind: "models" or "clusters". Fills path and shown. Returns 0 or 2. */
static int resolve(const char *kind, const char *name_or_path, char *path, size_t path_len, char *shown,
                   size_t shown_len, char *why, size_t why_len)
{
    const char *what = !strcmp(kind, "models") ? "model" : "cluster";
    if (!name_or_path || !*name_or_path)
        return js_fail(why, why_len, NULL, "empty %s name: give a preset name (see --help) or a path to a .json file",
                       what);
    if (strlen(name_or_path) >= path_len)
        return js_fail(why, why_len, NULL, "%s path is too long (%zu bytes; at most %zu)", what,
                       strlen(name_or_path), path_len - 1);
    if (preset_is_path(name_or_path)) {
        snprintf(path, path_len, "%s", name_or_path);
        snprintf(shown, shown_len, "%s", name_or_path);
        return 0;
    }
    const char *dir = preset_dir();
    if (valid_preset_name(name_or_path)) {
        snprintf(path, path_len, "%s/%s/%s.json", dir, kind, name_or_path);
        snprintf(shown, shown_len, "%s", path);
        struct stat st;
        if (stat(path, &st) == 0) return 0;
    }
    char names[1024], near[64], hint[96] = "";
    if (names_of(kind, name_or_path, names, sizeof names, near, sizeof near) != 0)
        snprintf(names, sizeof names, "(none: cannot read %s/%s; set ULYSIM_PRESETS)", dir, kind);
    if (near[0]) snprintf(hint, sizeof hint, " (did you mean %s?)", near);
    char shown_name[80];
    snprintf(shown_name, sizeof shown_name, "%.64s%s", name_or_path, strlen(name_or_path) > 64 ? "..." : "");
    return js_fail(why, why_len, NULL, "unknown %s preset \"%s\"%s: valid names are %s (or a path to a .json file)",
                   what, shown_name, hint, names);
}

int preset_path(const char *name, char *path, size_t path_len, const char **kind, char *why, size_t why_len)
{
    static const char *const kinds[] = {"models", "clusters"};
    char shown[1024];
    for (int k = 0; k < 2; k++) {
        if (resolve(kinds[k], name, path, path_len, shown, sizeof shown, why, why_len) != 0) continue;
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > PRESET_MAX_BYTES)
            return js_fail(why, why_len, path, "is %lld bytes; a preset may be at most %d bytes (1 MiB), as --model "
                                               "and --cluster read it", (long long)st.st_size, PRESET_MAX_BYTES);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            *kind = kinds[k];
            return 0;
        }
        /* listed by its name, so not unknown: what it is instead */
        if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode))
            return js_fail(why, why_len, path, "is not a regular file (a FIFO, socket or device); a preset is a .json "
                                               "file");
        if (preset_is_path(name)) return js_fail(why, why_len, NULL, "%s: no such preset file", path);
    }
    char models[1024], clusters[1024], shown_name[80], near_m[64], near_c[64], hint[96] = "";
    names_of("models", name, models, sizeof models, near_m, sizeof near_m);
    names_of("clusters", name, clusters, sizeof clusters, near_c, sizeof near_c);
    if (near_m[0] || near_c[0]) snprintf(hint, sizeof hint, " (did you mean %s?)", near_m[0] ? near_m : near_c);
    snprintf(shown_name, sizeof shown_name, "%.64s%s", name ? name : "", name && strlen(name) > 64 ? "..." : "");
    return js_fail(why, why_len, NULL, "unknown preset \"%s\"%s: valid names are the models %s and the clusters %s",
                   shown_name, hint, models, clusters);
}

int preset_file_load(const preset_schema *s, const char *name_or_path, void *out, char *why, size_t why_len)
{
    const char *kind = s->dir;
    char path[4096], shown[4096];
    char dummy[8];
    if (!why || why_len == 0) {
        why = dummy;
        why_len = sizeof dummy;
    }
    why[0] = '\0';
    if (resolve(kind, name_or_path, path, sizeof path, shown, sizeof shown, why, why_len)) return 2;
    js_file f;
    int oerr;
    if (preset_file_read(path, shown, &f, why, why_len, &oerr)) {
        /* "gpt-7b.json" in the working directory does not exist: point at the preset. */
        size_t n = strlen(name_or_path);
        if (oerr == ENOENT && n > 5 && !strchr(name_or_path, '/') && n - 5 < ULY_NAME_LEN) {
            char stem[ULY_NAME_LEN], probe[4096];
            memcpy(stem, name_or_path, n - 5);
            stem[n - 5] = '\0';
            snprintf(probe, sizeof probe, "%s/%s/%s.json", preset_dir(), kind, stem);
            struct stat st;
            size_t w = strlen(why);
            if (valid_preset_name(stem) && stat(probe, &st) == 0 && w + 64 < why_len)
                snprintf(why + w, why_len - w, " (did you mean the preset %s?)", stem);
        }
        return 2;
    }
    js_doc d = preset_doc(shown, why, why_len);
    int rc = preset_root_read(&d, s, js_parse_object(&d, f.text, f.len), out);
    free(f.text);
    return rc;
}

int preset_text_parse(const preset_schema *s, const char *text, size_t len, const char *shown, void *out, char *why,
                      size_t why_len)
{
    char dummy[8];
    if (!why || why_len == 0) {
        why = dummy;
        why_len = sizeof dummy;
    }
    why[0] = '\0';
    js_doc d = preset_doc(shown ? shown : "(text)", why, why_len);
    if (!text || len > PRESET_MAX_BYTES) return js_doc_fail(&d, "text of %zu bytes: at most %d", len, PRESET_MAX_BYTES);
    char *copy = malloc(len + 1); /* cJSON reads up to a NUL */
    if (!copy) return js_doc_fail(&d, "out of memory");
    memcpy(copy, text, len);
    copy[len] = '\0';
    int rc = preset_root_read(&d, s, js_parse_object(&d, copy, len), out);
    free(copy);
    return rc;
}

int preset_list(const char *kind, preset_fn fn, void *ctx)
{
    if (!kind || (strcmp(kind, "models") && strcmp(kind, "clusters"))) return -1;
    name_list l;
    if (list_names(kind, &l) != 0) return -1;
    for (int i = 0; i < l.n; i++) {
        char path[4096], why[256];
        const char *desc = "", *src = "";
        cJSON *root = NULL;
        snprintf(path, sizeof path, "%s/%s/%s.json", preset_dir(), kind, l.v[i]);
        js_file f = {0};
        int oerr;
        if (preset_file_read(path, path, &f, why, sizeof why, &oerr) == 0) {
            js_doc d = preset_doc(path, why, sizeof why);
            root = js_parse_object(&d, f.text, f.len);
        }
        if (root) {
            const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "description");
            const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "source");
            if (cJSON_IsString(d)) desc = d->valuestring;
            if (cJSON_IsString(s)) src = s->valuestring;
        } else {
            desc = "(unreadable preset file)";
        }
        if (fn) fn(l.v[i], desc, src, ctx);
        cJSON_Delete(root);
        free(f.text);
    }
    int n = l.n;
    free_names(&l);
    return n;
}
