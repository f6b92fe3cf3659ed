/* preset.c: the model and cluster preset loader (see preset.h and
 * presets/README.md for the schema).
 *
 * A preset file goes through four gates before any field is read, so that no
 * input, however wrong, can crash, hang or exhaust memory:
 *   1. the file: a regular file (never a FIFO or device: opened non-blocking),
 *      at most PRESET_MAX_BYTES, read with a bounded loop;
 *   2. the bytes: valid UTF-8 (no overlongs, surrogates or NULs);
 *   3. a lexical pre-scan: nesting depth at most PRESET_MAX_DEPTH, strict JSON
 *      numbers (cJSON alone accepts "01" and "1."), no raw control characters
 *      and no \u0000 in strings;
 *   4. cJSON, then the schema: every key known (typos are reported with the
 *      closest valid key), no duplicates, every field of the right type and
 *      range, and the cross-field rules (heads x head_dim = hidden, ...).
 * Every message is one line: "<file>: field "<path>" = <value>: <what is valid>".
 */
#define _POSIX_C_SOURCE 200809L
#include "preset.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
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

#define PRESET_MAX_BYTES (1024 * 1024) /* a real preset is a few KiB */
#define PRESET_MAX_DEPTH 8             /* the schema needs 5 */
#define PRESET_MAX_MEMBERS 64          /* keys of one schema object */
#define PRESET_MAX_SOURCES 128         /* keys of "sources" */
#define PRESET_MAX_TEXT 4096           /* description, source, notes, one source entry */
#define PRESET_MAX_LIST 4096           /* files listed per kind */

/* ------------------------------------------------------------- messages */

typedef struct ctx {
    const char *file; /* as shown in messages */
    char *why;
    size_t why_len;
} ctx;

/* One line: control characters (from paths or values) become '?'. */
static void one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

static int failv(char *why, size_t why_len, const char *file, const char *fmt, va_list ap)
{
    if (!why || why_len == 0) return 2;
    int n = file ? snprintf(why, why_len, "%s: ", file) : 0;
    if (n < 0) n = 0;
    if ((size_t)n < why_len) vsnprintf(why + n, why_len - (size_t)n, fmt, ap);
    one_line(why);
    return 2;
}

static int fail(ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    failv(c->why, c->why_len, c->file, fmt, ap);
    va_end(ap);
    return 2;
}

static int fail_plain(char *why, size_t why_len, const char *file, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    failv(why, why_len, file, fmt, ap);
    va_end(ap);
    return 2;
}

/* A JSON value as it should appear in a message: numbers as written,
 * strings quoted and escaped (cut at 40 bytes), the rest by type. */
static void describe(const cJSON *v, char *buf, size_t n)
{
    if (!v) {
        snprintf(buf, n, "(missing)");
    } else if (cJSON_IsNumber(v)) {
        if (isfinite(v->valuedouble))
            snprintf(buf, n, "%.15g", v->valuedouble);
        else
            snprintf(buf, n, "%s (beyond double range)", v->valuedouble < 0 ? "-inf" : "inf");
    } else if (cJSON_IsString(v)) {
        char q[128];
        size_t o = 0;
        const unsigned char *p = (const unsigned char *)v->valuestring;
        for (size_t i = 0; p[i] && o + 7 < sizeof q; i++) {
            if (i >= 40 && (p[i] & 0xC0) != 0x80) {
                memcpy(q + o, "...", 3);
                o += 3;
                break;
            }
            if (p[i] == '"' || p[i] == '\\') {
                q[o++] = '\\';
                q[o++] = (char)p[i];
            } else if (p[i] < 0x20 || p[i] == 0x7f) {
                q[o++] = '?';
            } else {
                q[o++] = (char)p[i];
            }
        }
        q[o] = '\0';
        snprintf(buf, n, "\"%s\" (a string)", q);
    } else if (cJSON_IsBool(v)) {
        snprintf(buf, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
    } else if (cJSON_IsNull(v)) {
        snprintf(buf, n, "null");
    } else if (cJSON_IsArray(v)) {
        snprintf(buf, n, "[...] (an array)");
    } else if (cJSON_IsObject(v)) {
        snprintf(buf, n, "{...} (an object)");
    } else {
        snprintf(buf, n, "(invalid)");
    }
}

static void join_path(char *out, size_t n, const char *prefix, const char *key)
{
    if (prefix && *prefix)
        snprintf(out, n, "%s.%s", prefix, key);
    else
        snprintf(out, n, "%s", key);
}

static int bad_value(ctx *c, const char *path, const cJSON *v, const char *fmt, ...)
{
    char val[160], rule[320];
    va_list ap;
    describe(v, val, sizeof val);
    va_start(ap, fmt);
    vsnprintf(rule, sizeof rule, fmt, ap);
    va_end(ap);
    return fail(c, "field \"%s\" = %s: %s", path, val, rule);
}

/* Edit distance for "did you mean" hints on unknown keys (short keys only). */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 40 || lb > 40) return 99;
    int row[41];
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int prev = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int cur = row[j];
            int sub = prev + (a[i - 1] != b[j - 1]);
            int del = row[j] + 1, ins = row[j - 1] + 1;
            row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
            prev = cur;
        }
    }
    return row[lb];
}

/* ------------------------------------------------------------ file gates */

/* Reads a regular file of at most PRESET_MAX_BYTES into a NUL-terminated
 * buffer. Returns 0, or 2 with a message (open_errno: errno of a failed open). */
static int read_capped(const char *path, const char *shown, char **text, size_t *len,
                       char *why, size_t why_len, int *open_errno)
{
    *text = NULL;
    *len = 0;
    *open_errno = 0;
    /* O_NONBLOCK: opening a FIFO must not wait for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        *open_errno = errno;
        return fail_plain(why, why_len, shown, "cannot open: %s", strerror(*open_errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return fail_plain(why, why_len, shown, "cannot stat: %s", strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return fail_plain(why, why_len, shown, "is a directory, not a preset file");
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return fail_plain(why, why_len, shown, "is not a regular file (a FIFO, socket or device); give a .json file");
    }
    if (st.st_size > PRESET_MAX_BYTES) {
        close(fd);
        return fail_plain(why, why_len, shown,
                          "is %lld bytes; a preset may be at most %d bytes (1 MiB)",
                          (long long)st.st_size, PRESET_MAX_BYTES);
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    char *buf = malloc(PRESET_MAX_BYTES + 2);
    if (!buf) {
        close(fd);
        return fail_plain(why, why_len, shown, "out of memory reading the file");
    }
    size_t got = 0;
    for (;;) {
        /* Read one byte past the cap to notice a file that grew. */
        ssize_t r = read(fd, buf + got, (size_t)PRESET_MAX_BYTES + 1 - got);
        if (r < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            free(buf);
            close(fd);
            return fail_plain(why, why_len, shown, "cannot read: %s", strerror(e));
        }
        if (r == 0) break;
        got += (size_t)r;
        if (got > PRESET_MAX_BYTES) {
            free(buf);
            close(fd);
            return fail_plain(why, why_len, shown, "is over %d bytes; a preset may be at most 1 MiB",
                              PRESET_MAX_BYTES);
        }
    }
    close(fd);
    buf[got] = '\0';
    *text = buf;
    *len = got;
    return 0;
}

static void line_col(const char *text, size_t off, int *line, int *col)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < off && text[i]; i++) {
        if (text[i] == '\n') {
            l++;
            c = 1;
        } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *col = c;
}

/* Strict UTF-8: no NUL, overlong forms, surrogates or code points past U+10FFFF. */
static int check_utf8(ctx *c, const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        unsigned char b = s[i];
        size_t need;
        uint32_t cp, min;
        if (b == 0) {
            int l, col;
            line_col(text, i, &l, &col);
            return fail(c, "NUL byte at line %d, column %d: a preset is UTF-8 JSON text", l, col);
        }
        if (b < 0x80) {
            i++;
            continue;
        } else if ((b & 0xE0) == 0xC0) {
            need = 1, cp = b & 0x1F, min = 0x80;
        } else if ((b & 0xF0) == 0xE0) {
            need = 2, cp = b & 0x0F, min = 0x800;
        } else if ((b & 0xF8) == 0xF0) {
            need = 3, cp = b & 0x07, min = 0x10000;
        } else {
            goto bad;
        }
        for (size_t k = 1; k <= need; k++) {
            if (i + k >= len || (s[i + k] & 0xC0) != 0x80) goto bad;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) goto bad;
        i += need + 1;
        continue;
    bad: {
        int l, col;
        line_col(text, i, &l, &col);
        return fail(c, "invalid UTF-8 at byte %zu (line %d, column %d, byte 0x%02x): a preset is UTF-8 JSON text",
                    i, l, col, b);
    }
    }
    return 0;
}

static int is_hex(char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

static int is_digit(char ch) { return ch >= '0' && ch <= '9'; }

/* Depth, number grammar and string contents, before cJSON sees the text. */
static int prescan(ctx *c, const char *s, size_t n)
{
    int depth = 0, l, col;
    for (size_t i = 0; i < n;) {
        char ch = s[i];
        if (ch == '"') {
            size_t start = i++;
            while (i < n && s[i] != '"') {
                if ((unsigned char)s[i] < 0x20) {
                    line_col(s, i, &l, &col);
                    return fail(c, "invalid JSON at line %d, column %d: raw control character in a string (write it as an escape, e.g. \\n)",
                                l, col);
                }
                if (s[i] == '\\') {
                    if (i + 1 >= n) break;
                    char e = s[i + 1];
                    if (e == 'u') {
                        if (i + 5 >= n || !is_hex(s[i + 2]) || !is_hex(s[i + 3]) || !is_hex(s[i + 4]) ||
                            !is_hex(s[i + 5])) {
                            line_col(s, i, &l, &col);
                            return fail(c, "invalid JSON at line %d, column %d: \\u must be followed by 4 hex digits",
                                        l, col);
                        }
                        if (!strncmp(s + i + 2, "0000", 4)) {
                            line_col(s, i, &l, &col);
                            return fail(c, "invalid JSON at line %d, column %d: \\u0000 is not allowed in a preset string",
                                        l, col);
                        }
                        i += 6;
                        continue;
                    }
                    if (!strchr("\"\\/bfnrt", e) || e == '\0') {
                        line_col(s, i, &l, &col);
                        return fail(c, "invalid JSON at line %d, column %d: unknown escape \\%c", l, col,
                                    (e >= 0x20 && e < 0x7f) ? e : '?');
                    }
                    i += 2;
                    continue;
                }
                i++;
            }
            if (i >= n) {
                line_col(s, start, &l, &col);
                return fail(c, "invalid JSON: the string opened at line %d, column %d never ends (truncated file?)",
                            l, col);
            }
            i++;
        } else if (ch == '{' || ch == '[') {
            if (++depth > PRESET_MAX_DEPTH) {
                line_col(s, i, &l, &col);
                return fail(c, "nesting deeper than %d levels at line %d, column %d: the preset schema needs at most 5",
                            PRESET_MAX_DEPTH, l, col);
            }
            i++;
        } else if (ch == '}' || ch == ']') {
            if (depth > 0) depth--;
            i++;
        } else if (ch == '-' || is_digit(ch)) {
            size_t st = i;
            int ok = 1;
            if (s[i] == '-') i++;
            if (i < n && s[i] == '0') {
                i++;
            } else if (i < n && is_digit(s[i])) {
                while (i < n && is_digit(s[i])) i++;
            } else {
                ok = 0;
            }
            if (ok && i < n && s[i] == '.') {
                i++;
                if (i >= n || !is_digit(s[i])) ok = 0;
                while (i < n && is_digit(s[i])) i++;
            }
            if (ok && i < n && (s[i] == 'e' || s[i] == 'E')) {
                i++;
                if (i < n && (s[i] == '+' || s[i] == '-')) i++;
                if (i >= n || !is_digit(s[i])) ok = 0;
                while (i < n && is_digit(s[i])) i++;
            }
            if (ok && i < n && (is_digit(s[i]) || s[i] == '.' || s[i] == 'e' || s[i] == 'E' || s[i] == '+' ||
                                s[i] == '-' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
                ok = 0;
            if (!ok) {
                char tok[24];
                size_t k = 0;
                while (st + k < n && k + 1 < sizeof tok && strchr("0123456789+-.eExXabcdfABCDF", s[st + k]) &&
                       s[st + k])
                    tok[k] = s[st + k], k++;
                tok[k] = '\0';
                line_col(s, st, &l, &col);
                return fail(c, "invalid JSON at line %d, column %d: malformed number \"%s\" (JSON numbers look like 12, -3, 0.5, 1e6)",
                            l, col, tok);
            }
        } else {
            i++;
        }
    }
    return 0;
}

/* Parses after the gates. Returns the root object or NULL with a message. */
static cJSON *parse_text(ctx *c, const char *text, size_t len)
{
    if (check_utf8(c, text, len) || prescan(c, text, len)) return NULL;
    size_t k = 0;
    while (k < len && strchr(" \t\r\n", text[k])) k++;
    if (k == len) {
        fail(c, "empty file: a preset is one JSON object");
        return NULL;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        size_t off = (end && end >= text && end <= text + len) ? (size_t)(end - text) : len;
        int l, col;
        line_col(text, off, &l, &col);
        size_t rest = off;
        while (rest < len && strchr(" \t\r\n", text[rest])) rest++;
        if (rest >= len) {
            fail(c, "invalid JSON: the text ends early at line %d, column %d (truncated file?)", l, col);
        } else {
            char near[24];
            size_t m = 0;
            for (size_t i = off; i < len && m + 1 < sizeof near && text[i] != '\n'; i++)
                near[m++] = ((unsigned char)text[i] < 0x20 || (unsigned char)text[i] >= 0x7f) ? '?' : text[i];
            near[m] = '\0';
            fail(c, "invalid JSON at line %d, column %d, near \"%s\"", l, col, near);
        }
        return NULL;
    }
    if (!cJSON_IsObject(root)) {
        char val[160];
        describe(root, val, sizeof val);
        fail(c, "the top level is %s: a preset is one JSON object {...}", val);
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

/* ---------------------------------------------------------------- schema */

static int count_members(const cJSON *o)
{
    int n = 0;
    for (const cJSON *it = o ? o->child : NULL; it; it = it->next) n++;
    return n;
}

/* Every key of obj must be in `allowed` (NULL-terminated), once. */
static int check_keys(ctx *c, const cJSON *obj, const char *prefix, const char *const *allowed,
                      const char *schema_hint)
{
    char path[160];
    int n = count_members(obj);
    if (n > PRESET_MAX_MEMBERS) {
        return fail(c, "object \"%s\" has %d members: the schema allows at most %d", prefix && *prefix ? prefix : "(top level)",
                    n, PRESET_MAX_MEMBERS);
    }
    for (const cJSON *it = obj->child; it; it = it->next) {
        const char *k = it->string ? it->string : "";
        int known = 0;
        for (int i = 0; allowed[i]; i++)
            if (!strcmp(k, allowed[i])) known = 1;
        if (!known) {
            char list[512] = "", hint[128] = "";
            size_t o = 0;
            int best = 99;
            const char *best_key = NULL;
            for (int i = 0; allowed[i]; i++) {
                int w = snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", allowed[i]);
                if (w > 0 && (size_t)w < sizeof list - o) o += (size_t)w;
                int d = edit_distance(k, allowed[i]);
                if (d < best) best = d, best_key = allowed[i];
            }
            if (schema_hint)
                snprintf(hint, sizeof hint, " (%s)", schema_hint);
            else if (best_key && best <= 2)
                snprintf(hint, sizeof hint, " (did you mean \"%s\"?)", best_key);
            char shown[64];
            snprintf(shown, sizeof shown, "%.60s", k);
            join_path(path, sizeof path, prefix, shown);
            return fail(c, "unknown field \"%s\"%s: valid fields here are %s", path, hint, list);
        }
        for (const cJSON *jt = obj->child; jt != it; jt = jt->next)
            if (jt->string && !strcmp(jt->string, k)) {
                join_path(path, sizeof path, prefix, k);
                return fail(c, "field \"%s\" appears twice: give each field once", path);
            }
    }
    return 0;
}

static int get_field(ctx *c, const cJSON *obj, const char *prefix, const char *key, const char *expect,
                     const cJSON **out)
{
    *out = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!*out) {
        char path[160];
        join_path(path, sizeof path, prefix, key);
        return fail(c, "field \"%s\" is missing: expected %s", path, expect);
    }
    return 0;
}

static int get_int(ctx *c, const cJSON *obj, const char *prefix, const char *key, int64_t lo, int64_t hi,
                   int64_t *out)
{
    char path[160], expect[96];
    const cJSON *v;
    snprintf(expect, sizeof expect, "an integer in %lld..%lld", (long long)lo, (long long)hi);
    if (get_field(c, obj, prefix, key, expect, &v)) return 2;
    join_path(path, sizeof path, prefix, key);
    double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!cJSON_IsNumber(v) || !isfinite(x) || x != floor(x) || x < (double)lo || x > (double)hi)
        return bad_value(c, path, v, "must be %s", expect);
    *out = (int64_t)x;
    return 0;
}

/* Range bounds as people write them: 1000000, not 1e+06. */
static const char *fmt_bound(char *b, size_t n, double x)
{
    if (x == floor(x) && fabs(x) < 1e15)
        snprintf(b, n, "%.0f", x);
    else
        snprintf(b, n, "%g", x);
    return b;
}

/* A number in (lo, hi] when lo_open, else [lo, hi]. */
static int get_num(ctx *c, const cJSON *obj, const char *prefix, const char *key, double lo, int lo_open,
                   double hi, const char *unit, double *out)
{
    char path[160], expect[128];
    const cJSON *v;
    char blo[32], bhi[32];
    snprintf(expect, sizeof expect, "a number in %c%s, %s]%s%s", lo_open ? '(' : '[', fmt_bound(blo, sizeof blo, lo),
             fmt_bound(bhi, sizeof bhi, hi), unit ? " " : "", unit ? unit : "");
    if (get_field(c, obj, prefix, key, expect, &v)) return 2;
    join_path(path, sizeof path, prefix, key);
    double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!cJSON_IsNumber(v) || !isfinite(x) || x > hi || x < lo || (lo_open && x == lo))
        return bad_value(c, path, v, "must be %s", expect);
    *out = x;
    return 0;
}

static int get_bool(ctx *c, const cJSON *obj, const char *prefix, const char *key, int *out)
{
    char path[160];
    const cJSON *v;
    if (get_field(c, obj, prefix, key, "true or false", &v)) return 2;
    join_path(path, sizeof path, prefix, key);
    if (!cJSON_IsBool(v)) return bad_value(c, path, v, "must be true or false (without quotes)");
    *out = cJSON_IsTrue(v) ? 1 : 0;
    return 0;
}

static int name_char_ok(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
           ch == '_' || ch == '.' || ch == '+';
}

/* A name: 1..ULY_NAME_LEN-1 characters of [A-Za-z0-9._+-]. */
static int get_name(ctx *c, const cJSON *obj, const char *prefix, const char *key, char *out, size_t out_len)
{
    char path[160], expect[128];
    const cJSON *v;
    snprintf(expect, sizeof expect, "a string of 1..%zu characters from A-Z a-z 0-9 . _ + -", out_len - 1);
    if (get_field(c, obj, prefix, key, expect, &v)) return 2;
    join_path(path, sizeof path, prefix, key);
    if (!cJSON_IsString(v) || !v->valuestring) return bad_value(c, path, v, "must be %s", expect);
    size_t n = strlen(v->valuestring);
    int ok = n >= 1 && n < out_len;
    for (size_t i = 0; ok && i < n; i++) ok = name_char_ok(v->valuestring[i]);
    if (!ok) return bad_value(c, path, v, "must be %s", expect);
    memcpy(out, v->valuestring, n + 1);
    return 0;
}

/* Free text: a string without control characters, at most PRESET_MAX_TEXT
 * bytes. */
static int check_text(ctx *c, const cJSON *v, const char *path)
{
    char expect[96];
    snprintf(expect, sizeof expect, "a one-line string of at most %d bytes", PRESET_MAX_TEXT);
    if (!cJSON_IsString(v) || !v->valuestring) return bad_value(c, path, v, "must be %s", expect);
    size_t n = strlen(v->valuestring);
    if (n > PRESET_MAX_TEXT) return bad_value(c, path, v, "is %zu bytes: must be %s", n, expect);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)v->valuestring[i] < 0x20 || v->valuestring[i] == 0x7f)
            return bad_value(c, path, v, "contains a control character: must be %s", expect);
    return 0;
}

static int get_text_opt(ctx *c, const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return v ? check_text(c, v, key) : 0;
}

/* Does a dotted path name a field present in root? */
static int path_exists(const cJSON *root, const char *path)
{
    char seg[128];
    const cJSON *cur = root;
    const char *p = path;
    while (*p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n == 0 || n >= sizeof seg || !cJSON_IsObject(cur)) return 0;
        memcpy(seg, p, n);
        seg[n] = '\0';
        cur = cJSON_GetObjectItemCaseSensitive(cur, seg);
        if (!cur) return 0;
        p += n + (dot ? 1 : 0);
        if (dot && !*p) return 0;
    }
    return cur != root;
}

/* "sources": { "<dotted field path>": "<where the number comes from>" }. */
static int check_sources(ctx *c, const cJSON *root)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "sources");
    if (!s) return 0;
    if (!cJSON_IsObject(s))
        return bad_value(c, "sources", s, "must be an object mapping field paths (e.g. \"gpu.hbm_gib\") to strings");
    int n = count_members(s);
    if (n > PRESET_MAX_SOURCES)
        return fail(c, "object \"sources\" has %d members: at most %d allowed", n, PRESET_MAX_SOURCES);
    for (const cJSON *it = s->child; it; it = it->next) {
        char path[200];
        snprintf(path, sizeof path, "sources.%.120s", it->string ? it->string : "");
        if (!it->string || !path_exists(root, it->string) || !strncmp(it->string, "sources", 7))
            return fail(c, "field \"%s\": \"%.120s\" names no field of this file (keys of \"sources\" are field paths such as \"gpu.hbm_gib\")",
                        path, it->string ? it->string : "");
        for (const cJSON *jt = s->child; jt != it; jt = jt->next)
            if (!strcmp(jt->string, it->string))
                return fail(c, "field \"%s\" appears twice: give each field once", path);
        if (check_text(c, it, path)) return 2;
    }
    return 0;
}

/* A curve: [[x, eff], ...], 1..ULY_CURVE_MAX points, x strictly increasing
 * in (0, 1e9], eff in (0, 1]. */
static int get_curve(ctx *c, const cJSON *v, const char *path, const char *x_unit, uly_curve *out)
{
    char p[200];
    memset(out, 0, sizeof *out);
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
    if (n < 1 || n > ULY_CURVE_MAX)
        return bad_value(c, path, v, "must be an array of 1..%d points [x, eff] (x: %s, strictly increasing; eff: fraction of peak in (0, 1])",
                         ULY_CURVE_MAX, x_unit);
    int i = 0;
    for (const cJSON *pt = v->child; pt; pt = pt->next, i++) {
        snprintf(p, sizeof p, "%s[%d]", path, i);
        if (!cJSON_IsArray(pt) || cJSON_GetArraySize(pt) != 2)
            return bad_value(c, p, pt, "must be a pair [x, eff] of numbers");
        const cJSON *x = pt->child, *e = pt->child->next;
        snprintf(p, sizeof p, "%s[%d][0]", path, i);
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || x->valuedouble <= 0 || x->valuedouble > 1e9)
            return bad_value(c, p, x, "must be a number in (0, 1e9] (%s)", x_unit);
        if (i > 0 && x->valuedouble <= out->x[i - 1])
            return bad_value(c, p, x, "must be greater than the previous point's x (%.15g): x strictly increases",
                             out->x[i - 1]);
        snprintf(p, sizeof p, "%s[%d][1]", path, i);
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || e->valuedouble <= 0 || e->valuedouble > 1)
            return bad_value(c, p, e, "must be a number in (0, 1] (a fraction of the dense peak)");
        out->x[i] = x->valuedouble;
        out->eff[i] = e->valuedouble;
    }
    out->n = n;
    return 0;
}

static int get_object(ctx *c, const cJSON *obj, const char *prefix, const char *key, const cJSON **out)
{
    char path[160];
    if (get_field(c, obj, prefix, key, "an object {...}", out)) return 2;
    join_path(path, sizeof path, prefix, key);
    if (!cJSON_IsObject(*out)) return bad_value(c, path, *out, "must be an object {...}");
    return 0;
}

/* --------------------------------------------------------------- models */

static const char *const MODEL_KEYS[] = {
    "name", "description", "source", "notes", "sources", "layers", "hidden", "heads", "kv_heads",
    "head_dim", "ffn_hidden", "vocab", "swiglu", "tied_embeddings", "dropout", "embed_norm", NULL};

static int parse_model(ctx *c, const cJSON *root, uly_model *m)
{
    memset(m, 0, sizeof *m);
    if (check_keys(c, root, "", MODEL_KEYS,
                   cJSON_GetObjectItemCaseSensitive(root, "gpu") ? "this looks like a cluster preset, not a model"
                                                                 : NULL))
        return 2;
    if (get_name(c, root, "", "name", m->name, sizeof m->name)) return 2;
    if (get_text_opt(c, root, "description") || get_text_opt(c, root, "source") || get_text_opt(c, root, "notes"))
        return 2;
    if (get_int(c, root, "", "layers", 1, 100000, &m->layers)) return 2;
    if (get_int(c, root, "", "hidden", 1, 1048576, &m->hidden)) return 2;
    if (get_int(c, root, "", "heads", 1, 16384, &m->heads)) return 2;
    if (get_int(c, root, "", "kv_heads", 1, 16384, &m->kv_heads)) return 2;
    if (get_int(c, root, "", "head_dim", 1, 16384, &m->head_dim)) return 2;
    if (get_int(c, root, "", "ffn_hidden", 1, 4194304, &m->ffn_hidden)) return 2;
    if (get_int(c, root, "", "vocab", 1, 16777216, &m->vocab)) return 2;
    if (get_bool(c, root, "", "swiglu", &m->swiglu)) return 2;
    if (get_bool(c, root, "", "tied_embeddings", &m->tied_embeddings)) return 2;
    if (get_bool(c, root, "", "dropout", &m->dropout)) return 2;
    /* optional: files written before it existed stay valid */
    if (cJSON_GetObjectItemCaseSensitive(root, "embed_norm") && get_bool(c, root, "", "embed_norm", &m->embed_norm))
        return 2;
    const cJSON *v;
    if (m->heads > m->hidden) {
        v = cJSON_GetObjectItemCaseSensitive(root, "heads");
        return bad_value(c, "heads", v, "must be at most hidden (%lld)", (long long)m->hidden);
    }
    if (m->heads * m->head_dim != m->hidden) {
        v = cJSON_GetObjectItemCaseSensitive(root, "head_dim");
        if (m->hidden % m->heads == 0)
            return bad_value(c, "head_dim", v, "heads (%lld) x head_dim must equal hidden (%lld): head_dim = %lld would",
                             (long long)m->heads, (long long)m->hidden, (long long)(m->hidden / m->heads));
        return bad_value(c, "head_dim", v, "heads (%lld) x head_dim must equal hidden (%lld), and heads does not divide hidden",
                         (long long)m->heads, (long long)m->hidden);
    }
    if (m->kv_heads > m->heads || m->heads % m->kv_heads != 0) {
        char divs[160] = "";
        size_t o = 0;
        for (int64_t d = 1; d <= m->heads && o + 24 < sizeof divs; d++)
            if (m->heads % d == 0) {
                int w = snprintf(divs + o, sizeof divs - o, "%s%lld", o ? ", " : "", (long long)d);
                if (w > 0) o += (size_t)w;
            }
        v = cJSON_GetObjectItemCaseSensitive(root, "kv_heads");
        return bad_value(c, "kv_heads", v, "must divide heads (%lld): one of %s", (long long)m->heads, divs);
    }
    return check_sources(c, root);
}

/* ------------------------------------------------------------- clusters */

static const char *const CLUSTER_KEYS[] = {"name", "description", "source", "notes", "sources", "nodes",
                                           "gpus_per_node", "gpu", "intra", "inter", NULL};
static const char *const GPU_KEYS[] = {"name", "peak_tflops", "hbm_gib", "hbm_bw_GBps", "mem_eff",
                                       "reserved_gib", "gemm_eff", "attn_eff", "act_fwd_ns", "act_bwd_ns", "attn_bwd_rel", NULL};
static const char *const PEAK_KEYS[] = {"bf16", "fp16", "fp32", NULL};
static const char *const ATTN_KEYS[] = {"causal_d128", "causal_d64", "full_d128", "full_d64", NULL};
static const char *const INTRA_KEYS[] = {"bw_GBps_per_dir", "lat_us", "switched", NULL};
static const char *const INTER_KEYS[] = {"nic_GBps_per_gpu", "lat_us", "topology", "oversubscription",
                                         "gpus_per_leaf", "torus_k", "torus_dims", "torus_link_GBps", NULL};

#define GIB 1073741824.0

static int parse_gpu(ctx *c, const cJSON *g, uly_gpu *gpu)
{
    const cJSON *o;
    if (check_keys(c, g, "gpu", GPU_KEYS, NULL)) return 2;
    if (get_name(c, g, "gpu", "name", gpu->name, sizeof gpu->name)) return 2;

    if (get_object(c, g, "gpu", "peak_tflops", &o) || check_keys(c, o, "gpu.peak_tflops", PEAK_KEYS, NULL)) return 2;
    /* fp32 first: a null bf16/fp16 peak means "no native unit for the type"
     * and is priced at the fp32 rate (storage in the type, arithmetic in
     * fp32, as PyTorch emulates bf16 before Ampere and CPU kernels do). */
    double fp32;
    if (get_num(c, o, "gpu.peak_tflops", "fp32", 0, 1, 100000, "(dense TFLOP/s)", &fp32)) return 2;
    gpu->peak_flops[ULY_FP32] = fp32 * 1e12;
    static const uly_dtype half[2] = {ULY_BF16, ULY_FP16};
    for (int i = 0; i < 2; i++) {
        const char *k = PEAK_KEYS[i];
        const cJSON *v;
        if (get_field(c, o, "gpu.peak_tflops", k,
                      "a number in (0, 100000] (dense TFLOP/s), or null when the GPU has no native unit for the type",
                      &v))
            return 2;
        if (cJSON_IsNull(v)) {
            gpu->peak_flops[half[i]] = gpu->peak_flops[ULY_FP32];
            continue;
        }
        double x;
        if (get_num(c, o, "gpu.peak_tflops", k, 0, 1, 100000,
                    "(dense TFLOP/s; null when the GPU has no native unit for the type)", &x))
            return 2;
        gpu->peak_flops[half[i]] = x * 1e12;
    }

    double hbm, bw, reserved;
    if (get_num(c, g, "gpu", "hbm_gib", 0.001, 0, 100000, "(GiB)", &hbm)) return 2;
    if (get_num(c, g, "gpu", "hbm_bw_GBps", 0.001, 0, 1000000, "(GB/s, 1e9 bytes/s)", &bw)) return 2;
    if (get_num(c, g, "gpu", "mem_eff", 0.01, 0, 1, "(fraction of hbm_bw_GBps)", &gpu->mem_eff)) return 2;
    if (get_num(c, g, "gpu", "reserved_gib", 0, 0, 100000, "(GiB)", &reserved)) return 2;
    if (reserved >= hbm)
        return bad_value(c, "gpu.reserved_gib", cJSON_GetObjectItemCaseSensitive(g, "reserved_gib"),
                         "must be less than gpu.hbm_gib (%g)", hbm);
    gpu->hbm_bytes = hbm * GIB;
    gpu->hbm_bw_Bps = bw * 1e9;
    gpu->reserved_bytes = reserved * GIB;
    /* optional: the activation's arithmetic cost per element (CPU profiles
     * from ulysim calibrate); absent = memory-bound, priced by bytes */
    static const char *const act_keys[2] = {"act_fwd_ns", "act_bwd_ns"};
    double *act[2] = {&gpu->act_fwd_s_per_elem, &gpu->act_bwd_s_per_elem};
    for (int i = 0; i < 2; i++) {
        double ns = 0;
        *act[i] = 0;
        if (cJSON_GetObjectItemCaseSensitive(g, act_keys[i]) &&
            get_num(c, g, "gpu", act_keys[i], 0, 0, 1e6, "(ns per activation element; absent: memory-bound)", &ns))
            return 2;
        *act[i] = ns * 1e-9;
    }
    gpu->attn_bwd_rel = 1.0;
    if (cJSON_GetObjectItemCaseSensitive(g, "attn_bwd_rel") &&
        get_num(c, g, "gpu", "attn_bwd_rel", 0, 1, 4, "(backward flash attention's efficiency over forward's; absent: 1)",
                &gpu->attn_bwd_rel))
        return 2;

    const cJSON *v;
    if (get_field(c, g, "gpu", "gemm_eff", "an array of points [[x, eff], ...]", &v) ||
        get_curve(c, v, "gpu.gemm_eff", "cube root of m*n*k", &gpu->gemm_eff))
        return 2;
    memset(gpu->attn_eff, 0, sizeof gpu->attn_eff);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(g, "attn_eff");
    if (a) {
        if (!cJSON_IsObject(a))
            return bad_value(c, "gpu.attn_eff", a, "must be an object with curves causal_d128, causal_d64, full_d128, full_d64");
        if (check_keys(c, a, "gpu.attn_eff", ATTN_KEYS, NULL)) return 2;
        /* [causal][head_dim >= 128] */
        static const int idx[4][2] = {{1, 1}, {1, 0}, {0, 1}, {0, 0}};
        for (int i = 0; i < 4; i++) {
            const cJSON *cv = cJSON_GetObjectItemCaseSensitive(a, ATTN_KEYS[i]);
            char path[64];
            snprintf(path, sizeof path, "gpu.attn_eff.%s", ATTN_KEYS[i]);
            if (cv && get_curve(c, cv, path, "key/value length of the attention block, tokens",
                                &gpu->attn_eff[idx[i][0]][idx[i][1]]))
                return 2;
        }
    }
    return 0;
}

static int parse_cluster(ctx *c, const cJSON *root, uly_cluster *cl)
{
    memset(cl, 0, sizeof *cl);
    if (check_keys(c, root, "", CLUSTER_KEYS,
                   cJSON_GetObjectItemCaseSensitive(root, "layers") ? "this looks like a model preset, not a cluster"
                                                                    : NULL))
        return 2;
    if (get_name(c, root, "", "name", cl->name, sizeof cl->name)) return 2;
    if (get_text_opt(c, root, "description") || get_text_opt(c, root, "source") || get_text_opt(c, root, "notes"))
        return 2;
    if (get_int(c, root, "", "nodes", 1, 1048576, &cl->nodes)) return 2;
    if (get_int(c, root, "", "gpus_per_node", 1, 1024, &cl->gpus_per_node)) return 2;
    if (cl->nodes * cl->gpus_per_node > 10000000)
        return bad_value(c, "nodes", cJSON_GetObjectItemCaseSensitive(root, "nodes"),
                         "nodes x gpus_per_node (%lld) = %lld GPUs: at most 10000000", (long long)cl->gpus_per_node,
                         (long long)(cl->nodes * cl->gpus_per_node));

    const cJSON *o;
    if (get_object(c, root, "", "gpu", &o) || parse_gpu(c, o, &cl->gpu)) return 2;

    double x;
    if (get_object(c, root, "", "intra", &o) || check_keys(c, o, "intra", INTRA_KEYS, NULL)) return 2;
    if (get_num(c, o, "intra", "bw_GBps_per_dir", 0.001, 0, 100000, "(GB/s per GPU per direction)", &x)) return 2;
    cl->intra_bw_Bps = x * 1e9;
    if (get_num(c, o, "intra", "lat_us", 0, 0, 1000000, "(microseconds)", &x)) return 2;
    cl->intra_lat_s = x * 1e-6;
    if (get_bool(c, o, "intra", "switched", &cl->intra_switched)) return 2;

    if (get_object(c, root, "", "inter", &o) || check_keys(c, o, "inter", INTER_KEYS, NULL)) return 2;
    if (get_num(c, o, "inter", "nic_GBps_per_gpu", 0.001, 0, 100000, "(GB/s per GPU per direction)", &x)) return 2;
    cl->nic_bw_Bps = x * 1e9;
    if (get_num(c, o, "inter", "lat_us", 0, 0, 1000000, "(microseconds)", &x)) return 2;
    cl->nic_lat_s = x * 1e-6;
    const cJSON *t;
    if (get_field(c, o, "inter", "topology", "one of \"fat-tree\", \"rail\", \"torus\"", &t)) return 2;
    if (cJSON_IsString(t) && !strcmp(t->valuestring, "fat-tree"))
        cl->topo = ULY_TOPO_FATTREE;
    else if (cJSON_IsString(t) && !strcmp(t->valuestring, "rail"))
        cl->topo = ULY_TOPO_RAIL;
    else if (cJSON_IsString(t) && !strcmp(t->valuestring, "torus"))
        cl->topo = ULY_TOPO_TORUS;
    else
        return bad_value(c, "inter.topology", t, "must be one of \"fat-tree\", \"rail\", \"torus\"");

    static const char *const tree_keys[] = {"oversubscription", "gpus_per_leaf", NULL};
    static const char *const torus_keys[] = {"torus_k", "torus_dims", "torus_link_GBps", NULL};
    const char *const *foreign = cl->topo == ULY_TOPO_TORUS ? tree_keys : torus_keys;
    for (int i = 0; foreign[i]; i++) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, foreign[i]);
        if (f) {
            char path[64];
            snprintf(path, sizeof path, "inter.%s", foreign[i]);
            return bad_value(c, path, f, "applies only to topology %s, and this cluster's is \"%s\": remove it",
                             cl->topo == ULY_TOPO_TORUS ? "\"fat-tree\" or \"rail\"" : "\"torus\"",
                             t->valuestring);
        }
    }
    if (cl->topo == ULY_TOPO_TORUS) {
        if (get_int(c, o, "inter", "torus_k", 2, 65536, &cl->torus_k)) return 2;
        if (get_int(c, o, "inter", "torus_dims", 1, 8, &cl->torus_dims)) return 2;
        if (get_num(c, o, "inter", "torus_link_GBps", 0.001, 0, 100000, "(GB/s per link per direction)", &x)) return 2;
        cl->torus_link_bw_Bps = x * 1e9;
        int64_t p = 1;
        for (int64_t i = 0; i < cl->torus_dims && p <= cl->nodes; i++) p *= cl->torus_k;
        if (p != cl->nodes)
            return bad_value(c, "inter.torus_k", cJSON_GetObjectItemCaseSensitive(o, "torus_k"),
                             "torus_k ^ torus_dims (%lld dims) must equal nodes (%lld)", (long long)cl->torus_dims,
                             (long long)cl->nodes);
        cl->oversub = 1.0;
        cl->gpus_per_leaf = cl->gpus_per_node;
    } else {
        if (get_num(c, o, "inter", "oversubscription", 1, 0, 1000, "(leaf downlink:uplink ratio; 1 = non-blocking)",
                    &cl->oversub))
            return 2;
        if (get_int(c, o, "inter", "gpus_per_leaf", 1, 10000000, &cl->gpus_per_leaf)) return 2;
    }
    return check_sources(c, root);
}

/* ------------------------------------------------------------ resolving */

const char *sim_preset_dir(void)
{
    const char *env = getenv("ULYSIM_PRESETS");
    if (env && *env) return env;
    struct stat st;
    if (stat(ULY_PRESET_DIR_SOURCE, &st) == 0 && S_ISDIR(st.st_mode)) return ULY_PRESET_DIR_SOURCE;
    return ULY_PRESET_DIR_INSTALLED;
}

static int is_path(const char *s)
{
    size_t n = strlen(s);
    return strchr(s, '/') != NULL || (n >= 5 && !strcmp(s + n - 5, ".json"));
}

static int valid_preset_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= ULY_NAME_LEN || s[0] == '.') return 0;
    for (size_t i = 0; i < n; i++)
        if (!name_char_ok(s[i])) return 0;
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
    snprintf(dir, sizeof dir, "%s/%s", sim_preset_dir(), kind);
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

/* kind: "models" or "clusters". Fills path and shown. Returns 0 or 2. */
static int resolve(const char *kind, const char *name_or_path, char *path, size_t path_len, char *shown,
                   size_t shown_len, char *why, size_t why_len)
{
    const char *what = !strcmp(kind, "models") ? "model" : "cluster";
    if (!name_or_path || !*name_or_path)
        return fail_plain(why, why_len, NULL, "empty %s name: give a preset name (see --help) or a path to a .json file",
                          what);
    if (strlen(name_or_path) >= path_len)
        return fail_plain(why, why_len, NULL, "%s path is too long (%zu bytes; at most %zu)", what,
                          strlen(name_or_path), path_len - 1);
    if (is_path(name_or_path)) {
        snprintf(path, path_len, "%s", name_or_path);
        snprintf(shown, shown_len, "%s", name_or_path);
        return 0;
    }
    const char *dir = sim_preset_dir();
    if (valid_preset_name(name_or_path)) {
        snprintf(path, path_len, "%s/%s/%s.json", dir, kind, name_or_path);
        snprintf(shown, shown_len, "%s", path);
        struct stat st;
        if (stat(path, &st) == 0) return 0;
    }
    name_list l;
    char names[1024] = "";
    if (list_names(kind, &l) == 0) {
        size_t o = 0;
        for (int i = 0; i < l.n; i++) {
            int w = snprintf(names + o, sizeof names - o, "%s%s", i ? ", " : "", l.v[i]);
            if (w < 0 || (size_t)w >= sizeof names - o) break;
            o += (size_t)w;
        }
        free_names(&l);
    } else {
        snprintf(names, sizeof names, "(none: cannot read %s/%s; set ULYSIM_PRESETS)", dir, kind);
    }
    char shown_name[80];
    snprintf(shown_name, sizeof shown_name, "%.64s%s", name_or_path, strlen(name_or_path) > 64 ? "..." : "");
    return fail_plain(why, why_len, NULL, "unknown %s preset \"%s\": valid names are %s (or a path to a .json file)",
                      what, shown_name, names);
}

/* Reads, parses and checks one file of a kind. */
typedef int (*parse_fn)(ctx *c, const cJSON *root, void *out);

static int load_any(const char *kind, const char *name_or_path, parse_fn parse, void *out, char *why,
                    size_t why_len)
{
    char path[4096], shown[4096];
    char dummy[8];
    if (!why || why_len == 0) {
        why = dummy;
        why_len = sizeof dummy;
    }
    why[0] = '\0';
    if (resolve(kind, name_or_path, path, sizeof path, shown, sizeof shown, why, why_len)) return 2;
    char *text;
    size_t len;
    int oerr;
    if (read_capped(path, shown, &text, &len, why, why_len, &oerr)) {
        /* "gpt-7b.json" in the working directory does not exist: point at the preset. */
        size_t n = strlen(name_or_path);
        if (oerr == ENOENT && n > 5 && !strchr(name_or_path, '/') && n - 5 < ULY_NAME_LEN) {
            char stem[ULY_NAME_LEN], probe[4096];
            memcpy(stem, name_or_path, n - 5);
            stem[n - 5] = '\0';
            snprintf(probe, sizeof probe, "%s/%s/%s.json", sim_preset_dir(), kind, stem);
            struct stat st;
            size_t w = strlen(why);
            if (valid_preset_name(stem) && stat(probe, &st) == 0 && w + 64 < why_len)
                snprintf(why + w, why_len - w, " (did you mean the preset %s?)", stem);
        }
        return 2;
    }
    ctx c = {shown, why, why_len};
    cJSON *root = parse_text(&c, text, len);
    int rc = root ? parse(&c, root, out) : 2;
    cJSON_Delete(root);
    free(text);
    return rc;
}

static int parse_model_v(ctx *c, const cJSON *root, void *out)
{
    uly_model *m = out;
    if (parse_model(c, root, m)) return 2;
    char w[512];
    if (uly_model_check(m, w, sizeof w) != ULY_OK) return fail(c, "%s", w);
    return 0;
}

static int parse_cluster_v(ctx *c, const cJSON *root, void *out)
{
    uly_cluster *cl = out;
    if (parse_cluster(c, root, cl)) return 2;
    char w[512];
    if (uly_cluster_check(cl, w, sizeof w) != ULY_OK) return fail(c, "%s", w);
    return 0;
}

static int parse_any(const char *text, size_t len, const char *shown, parse_fn parse, void *out, char *why,
                     size_t why_len)
{
    char dummy[8];
    if (!why || why_len == 0) {
        why = dummy;
        why_len = sizeof dummy;
    }
    why[0] = '\0';
    ctx c = {shown ? shown : "(text)", why, why_len};
    if (!text || len > PRESET_MAX_BYTES) return fail(&c, "text of %zu bytes: at most %d", len, PRESET_MAX_BYTES);
    char *copy = malloc(len + 1); /* cJSON reads up to a NUL */
    if (!copy) return fail(&c, "out of memory");
    memcpy(copy, text, len);
    copy[len] = '\0';
    cJSON *root = parse_text(&c, copy, len);
    int rc = root ? parse(&c, root, out) : 2;
    cJSON_Delete(root);
    free(copy);
    return rc;
}

int sim_model_parse(const char *text, size_t len, const char *shown, uly_model *out, char *why, size_t why_len)
{
    uly_model m;
    int rc = parse_any(text, len, shown, parse_model_v, &m, why, why_len);
    if (rc == 0 && out) *out = m;
    return rc;
}

int sim_cluster_parse(const char *text, size_t len, const char *shown, uly_cluster *out, char *why,
                      size_t why_len)
{
    uly_cluster cl;
    int rc = parse_any(text, len, shown, parse_cluster_v, &cl, why, why_len);
    if (rc == 0 && out) *out = cl;
    return rc;
}

int sim_model_load(const char *name_or_path, uly_model *out, char *why, size_t why_len)
{
    uly_model m;
    int rc = load_any("models", name_or_path, parse_model_v, &m, why, why_len);
    if (rc == 0 && out) *out = m;
    return rc;
}

int sim_cluster_load(const char *name_or_path, uly_cluster *out, char *why, size_t why_len)
{
    uly_cluster cl;
    int rc = load_any("clusters", name_or_path, parse_cluster_v, &cl, why, why_len);
    if (rc == 0 && out) *out = cl;
    return rc;
}

int sim_preset_list(const char *kind, sim_preset_fn fn, void *ctx_)
{
    if (!kind || (strcmp(kind, "models") && strcmp(kind, "clusters"))) return -1;
    name_list l;
    if (list_names(kind, &l) != 0) return -1;
    for (int i = 0; i < l.n; i++) {
        char path[4096], why[256];
        char *text = NULL;
        size_t len = 0;
        const char *desc = "", *src = "";
        cJSON *root = NULL;
        snprintf(path, sizeof path, "%s/%s/%s.json", sim_preset_dir(), kind, l.v[i]);
        int oerr;
        if (read_capped(path, path, &text, &len, why, sizeof why, &oerr) == 0) {
            ctx c = {path, why, sizeof why};
            root = parse_text(&c, text, len);
        }
        if (root) {
            const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "description");
            const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "source");
            if (cJSON_IsString(d)) desc = d->valuestring;
            if (cJSON_IsString(s)) src = s->valuestring;
        } else {
            desc = "(unreadable preset file)";
        }
        if (fn) fn(l.v[i], desc, src, ctx_);
        cJSON_Delete(root);
        free(text);
    }
    int n = l.n;
    free_names(&l);
    return n;
}
