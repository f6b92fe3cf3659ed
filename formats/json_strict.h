/* json_strict.h: strict reading of JSON files with cJSON, shared by the preset
 * loader and the trace reader. cJSON alone accepts more than JSON ("01",
 * "1.", raw control characters, duplicate keys) and says little about what
 * is wrong; these helpers refuse all of that and write one-line messages
 * that name the file, the line and column or the field, and the value.
 * The helpers that check return 0, or 2 (bad input, the programs' exit
 * status for it) with the message in the caller's buffer. */
#ifndef FORMATS_JSON_STRICT_H
#define FORMATS_JSON_STRICT_H

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define JS_MAX_MEMBERS 64 /* keys of one schema object */
#define JS_MAX_TEXT 4096  /* one free-text string (a description, a note) */

/* ------------------------------------------------------------- messages */

/* "<file>: <message>" into why (file NULL: the message alone), on one line:
 * control characters from paths or values become '?'. Returns 2. */
int js_failv(char *why, size_t why_len, const char *file, const char *fmt, va_list ap);
__attribute__((format(printf, 4, 5))) int js_fail(char *why, size_t why_len, const char *file, const char *fmt, ...);

/* ----------------------------------------------------------------- files */

typedef enum js_file_status {
    JS_FILE_OK = 0,
    JS_FILE_OPEN,    /* open failed (err) */
    JS_FILE_STAT,    /* fstat failed (err) */
    JS_FILE_DIR,     /* a directory */
    JS_FILE_SPECIAL, /* not a regular file: a FIFO, socket or device */
    JS_FILE_BIG,     /* over max_bytes (size) */
    JS_FILE_GREW,    /* grew past max_bytes while being read */
    JS_FILE_READ,    /* read failed (err) */
    JS_FILE_NOMEM
} js_file_status;

typedef struct js_file {
    char *text;     /* NUL-terminated (malloc; the caller frees it) */
    size_t len;     /* bytes read */
    int err;        /* errno of a failed open, stat or read */
    long long size; /* the size fstat reported */
} js_file;

/* Reads a regular file of at most max_bytes, never blocking on a FIFO and
 * never reading past the cap. The caller words the message for its format. */
js_file_status js_file_read(const char *path, size_t max_bytes, js_file *f);

/* -------------------------------------------------------------- documents */

/* One document being read: where messages go and what they call it. */
typedef struct js_doc {
    const char *file; /* the file as shown in messages */
    char *why;
    size_t why_len;
    const char *noun; /* "preset": "a preset is one JSON object" */
    int max_depth;    /* nesting refused beyond this */
    int schema_depth; /* the nesting the schema needs, for that message */
} js_doc;

__attribute__((format(printf, 2, 3))) int js_doc_fail(js_doc *d, const char *fmt, ...);

/* Where len bytes of text stop being strict UTF-8 (a NUL, an overlong form,
 * a surrogate, a code point past U+10FFFF, a cut sequence): the offset of
 * the first bad byte, or len when all are good. */
size_t js_utf8_bad(const char *text, size_t len);

/* Where the first number of a JSON text (outside strings) that is not
 * JSON's number grammar starts ("05", "1.", "-.5", "1e"): its offset, or
 * len when every number is good; *tok_len (when not NULL) gets the length
 * of the bad token. cJSON alone reads "05" as 5 and "1." as 1. For text
 * cJSON has already parsed whole (a trace line): its other gates are
 * cJSON's. */
size_t js_number_bad(const char *text, size_t len, size_t *tok_len);

/* Whether an object inside v (v itself included) repeats a key: 1 with its
 * path ("gpu.hbm_gib", "traceEvents[3].args.x", below prefix) in path,
 * else 0. cJSON keeps both and its lookups find the first. */
int js_dup_key(const cJSON *v, const char *prefix, char *path, size_t n);

/* The text (len bytes, NUL-terminated) through the gates: strict UTF-8 (no
 * NUL, overlong forms or surrogates), nesting at most max_depth, strict JSON
 * numbers, no raw control characters or \u0000 in strings, then cJSON with
 * nothing after the value. Returns the root, which must be an object, or
 * NULL with a message giving the line and column. */
cJSON *js_parse_object(js_doc *d, const char *text, size_t len);

/* ---------------------------------------------------------------- values */

/* A JSON value as a message shows it: numbers as written, strings quoted and
 * escaped (cut at 40 bytes), the rest by type. */
void js_describe(const cJSON *v, char *buf, size_t n);

/* "prefix.key", or "key" when prefix is empty. */
void js_join_path(char *out, size_t n, const char *prefix, const char *key);

/* "field "<path>" = <value>: <rule>". Returns 2. */
__attribute__((format(printf, 4, 5))) int js_bad_value(js_doc *d, const char *path, const cJSON *v, const char *fmt,
                                                       ...);

int js_count_members(const cJSON *o);

/* Is v a number with an integer value in [lo, hi]? */
int js_is_int_in(const cJSON *v, int64_t lo, int64_t hi);

/* A character of a name: A-Z a-z 0-9 . _ + - */
int js_name_char_ok(char ch);
/* Edit distance (insertions, deletions, substitutions) between two short
 * strings, for "did you mean" hints on unknown keys and preset names; 99
 * past 40 characters. */
int js_edit_distance(const char *a, const char *b);

/* Does a dotted path ("gpu.hbm_gib") name a member of root? */
int js_path_exists(const cJSON *root, const char *path);

/* ---------------------------------------------------------------- schema */

/* Every key of obj is in `allowed` (NULL-terminated) and appears once; an
 * unknown key is reported with the valid ones and schema_hint, or else the
 * closest valid key. At most JS_MAX_MEMBERS keys. */
int js_check_keys(js_doc *d, const cJSON *obj, const char *prefix, const char *const *allowed,
                  const char *schema_hint);

/* Required members of obj at prefix; each returns 0, or 2 with a message
 * naming the field, the value and what is valid. */
int js_get_field(js_doc *d, const cJSON *obj, const char *prefix, const char *key, const char *expect,
                 const cJSON **out);
int js_get_object(js_doc *d, const cJSON *obj, const char *prefix, const char *key, const cJSON **out);
int js_get_int(js_doc *d, const cJSON *obj, const char *prefix, const char *key, int64_t lo, int64_t hi,
               int64_t *out);
/* A number in (lo, hi] when lo_open, else [lo, hi]; unit follows the range. */
int js_get_num(js_doc *d, const cJSON *obj, const char *prefix, const char *key, double lo, int lo_open, double hi,
               const char *unit, double *out);
int js_get_bool(js_doc *d, const cJSON *obj, const char *prefix, const char *key, int *out);
/* A name: 1..out_len-1 characters of [A-Za-z0-9._+-]. */
int js_get_name(js_doc *d, const cJSON *obj, const char *prefix, const char *key, char *out, size_t out_len);

/* Free text: a string without control characters, at most JS_MAX_TEXT bytes;
 * the optional form accepts an absent key. */
int js_check_text(js_doc *d, const cJSON *v, const char *path);
int js_get_text_opt(js_doc *d, const cJSON *obj, const char *key);

#endif
