/* json_strict.c: strict reading of JSON files (see json_strict.h).
 *
 * A document goes through four gates before any field is read, so that no
 * input, however wrong, can crash, hang or exhaust memory:
 *   1. the file: a regular file (never a FIFO or device: opened non-blocking),
 *      at most the format's cap, read with a bounded loop (js_file_read);
 *   2. the bytes: valid UTF-8 (no overlongs, surrogates or NULs);
 *   3. a lexical pre-scan: nesting depth at most max_depth, strict JSON
 *      numbers (cJSON alone accepts "01" and "1."), no raw control characters
 *      and no \u0000 in strings;
 *   4. cJSON, then the schema: every key known (typos are reported with the
 *      closest valid key), no duplicates, every field of the right type and
 *      range (js_check_keys, js_get_*).
 * Field messages are one line: "<file>: field "<path>" = <value>: <what is valid>".
 */
#define _POSIX_C_SOURCE 200809L
#include "json_strict.h"
#include "out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------- messages */

/* One line: control characters (from paths or values) become '?'. */
static void one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

int js_failv(char *why, size_t why_len, const char *file, const char *fmt, va_list ap)
{
    if (!why || why_len == 0) return 2;
    int n = file ? snprintf(why, why_len, "%s: ", file) : 0;
    if (n < 0) n = 0;
    if ((size_t)n < why_len) vsnprintf(why + n, why_len - (size_t)n, fmt, ap);
    one_line(why);
    return 2;
}

int js_fail(char *why, size_t why_len, const char *file, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    js_failv(why, why_len, file, fmt, ap);
    va_end(ap);
    return 2;
}

int js_doc_fail(js_doc *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    js_failv(d->why, d->why_len, d->file, fmt, ap);
    va_end(ap);
    return 2;
}

/* ----------------------------------------------------------------- files */

js_file_status js_file_read(const char *path, size_t max_bytes, js_file *f)
{
    memset(f, 0, sizeof *f);
    /* O_NONBLOCK: opening a FIFO must not wait for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        f->err = errno;
        return JS_FILE_OPEN;
    }
    struct stat st;
    js_file_status rc = JS_FILE_OK;
    if (fstat(fd, &st) != 0) {
        f->err = errno;
        rc = JS_FILE_STAT;
    } else if (S_ISDIR(st.st_mode)) {
        rc = JS_FILE_DIR;
    } else if (!S_ISREG(st.st_mode)) {
        rc = JS_FILE_SPECIAL;
    } else if ((unsigned long long)st.st_size > max_bytes) {
        f->size = (long long)st.st_size;
        rc = JS_FILE_BIG;
    }
    if (rc != JS_FILE_OK) {
        close(fd);
        return rc;
    }
    f->size = (long long)st.st_size;
    out_file_input_note(path, &st); /* an output may not replace it (out_file.h) */
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    /* The size fstat gave, and one byte more to notice a file that grows;
     * the buffer grows with it up to the cap and one byte past. */
    size_t cap = (size_t)st.st_size + 2, got = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (got + 1 >= cap) {
            if (got > max_bytes) {
                rc = JS_FILE_GREW;
                break;
            }
            size_t nc = cap * 2 > max_bytes + 2 ? max_bytes + 2 : cap * 2;
            char *nb = realloc(buf, nc);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap = nc;
        }
        ssize_t r = read(fd, buf + got, cap - 1 - got);
        if (r < 0) {
            if (errno == EINTR) continue;
            f->err = errno;
            rc = JS_FILE_READ;
            break;
        }
        if (r == 0) break;
        got += (size_t)r;
    }
    close(fd);
    if (!buf) return JS_FILE_NOMEM;
    if (rc != JS_FILE_OK) {
        free(buf);
        return rc;
    }
    buf[got] = '\0';
    f->text = buf;
    f->len = got;
    return JS_FILE_OK;
}

/* ---------------------------------------------------------------- values */

/* A JSON value as it should appear in a message: numbers as written,
 * strings quoted and escaped (cut at 40 bytes), the rest by type. */
void js_describe(const cJSON *v, char *buf, size_t n)
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

void js_join_path(char *out, size_t n, const char *prefix, const char *key)
{
    if (prefix && *prefix)
        snprintf(out, n, "%s.%s", prefix, key);
    else
        snprintf(out, n, "%s", key);
}

int js_bad_value(js_doc *d, const char *path, const cJSON *v, const char *fmt, ...)
{
    char val[160], rule[320];
    va_list ap;
    js_describe(v, val, sizeof val);
    va_start(ap, fmt);
    vsnprintf(rule, sizeof rule, fmt, ap);
    va_end(ap);
    return js_doc_fail(d, "field \"%s\" = %s: %s", path, val, rule);
}

int js_edit_distance(const char *a, const char *b)
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

/* ------------------------------------------------------------ text gates */

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

size_t js_utf8_bad(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        const unsigned char b = s[i];
        size_t need;
        uint32_t cp, min;
        if (b == 0) return i;
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
            return i;
        }
        for (size_t k = 1; k <= need; k++) {
            if (i + k >= len || (s[i + k] & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
        i += need + 1;
    }
    return len;
}

/* Strict UTF-8 (js_utf8_bad), with the line and column of what is not. */
static int check_utf8(js_doc *d, const char *text, size_t len)
{
    const size_t i = js_utf8_bad(text, len);
    if (i == len) return 0;
    int l, col;
    line_col(text, i, &l, &col);
    if (!text[i]) return js_doc_fail(d, "NUL byte at line %d, column %d: a %s is UTF-8 JSON text", l, col, d->noun);
    return js_doc_fail(d, "invalid UTF-8 at byte %zu (line %d, column %d, byte 0x%02x): a %s is UTF-8 JSON text", i, l,
                       col, (unsigned char)text[i], d->noun);
}

static int is_hex(char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

static int is_digit(char ch) { return ch >= '0' && ch <= '9'; }

/* JSON's number grammar from s[i]: -? (0 | [1-9][0-9]*) (. [0-9]+)?
 * ([eE] [+-]? [0-9]+)?; returns where it ends, *ok 0 where the text
 * departs from it (what may follow the number is the caller's to judge). */
static size_t number_scan(const char *s, size_t n, size_t i, int *ok)
{
    *ok = 1;
    if (i < n && s[i] == '-') i++;
    if (i < n && s[i] == '0') i++;
    else if (i < n && is_digit(s[i])) while (i < n && is_digit(s[i])) i++;
    else *ok = 0;
    if (*ok && i < n && s[i] == '.') {
        i++;
        if (i >= n || !is_digit(s[i])) *ok = 0;
        while (i < n && is_digit(s[i])) i++;
    }
    if (*ok && i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        if (i >= n || !is_digit(s[i])) *ok = 0;
        while (i < n && is_digit(s[i])) i++;
    }
    return i;
}

size_t js_number_bad(const char *s, size_t n, size_t *tok_len)
{
    for (size_t i = 0; i < n;) {
        const char ch = s[i];
        if (ch == '"') { /* a string: skipped, escapes and all */
            for (i++; i < n && s[i] != '"'; i++)
                if (s[i] == '\\') i++;
            i++;
            continue;
        }
        if (ch != '-' && !is_digit(ch)) {
            i++;
            continue;
        }
        /* the grammar, and no number character right after it */
        const size_t st = i;
        int ok;
        i = number_scan(s, n, i, &ok);
        if (ok && i < n && (is_digit(s[i]) || s[i] == '.' || s[i] == 'e' || s[i] == 'E' || s[i] == '+' || s[i] == '-'))
            ok = 0;
        if (!ok) {
            size_t k = st;
            while (k < n && strchr("0123456789+-.eE", s[k]) && s[k]) k++;
            if (tok_len) *tok_len = k - st;
            return st;
        }
    }
    if (tok_len) *tok_len = 0;
    return n;
}

/* Depth, number grammar and string contents, before cJSON sees the text. */
static int prescan(js_doc *d, const char *s, size_t n)
{
    int depth = 0, l, col;
    for (size_t i = 0; i < n;) {
        char ch = s[i];
        if (ch == '"') {
            size_t start = i++;
            while (i < n && s[i] != '"') {
                if ((unsigned char)s[i] < 0x20) {
                    line_col(s, i, &l, &col);
                    return js_doc_fail(d, "invalid JSON at line %d, column %d: raw control character in a string (write it as an escape, e.g. \\n)",
                                       l, col);
                }
                if (s[i] == '\\') {
                    if (i + 1 >= n) break;
                    char e = s[i + 1];
                    if (e == 'u') {
                        if (i + 5 >= n || !is_hex(s[i + 2]) || !is_hex(s[i + 3]) || !is_hex(s[i + 4]) ||
                            !is_hex(s[i + 5])) {
                            line_col(s, i, &l, &col);
                            return js_doc_fail(d, "invalid JSON at line %d, column %d: \\u must be followed by 4 hex digits",
                                               l, col);
                        }
                        if (!strncmp(s + i + 2, "0000", 4)) {
                            line_col(s, i, &l, &col);
                            return js_doc_fail(d, "invalid JSON at line %d, column %d: \\u0000 is not allowed in a %s string",
                                               l, col, d->noun);
                        }
                        i += 6;
                        continue;
                    }
                    if (!strchr("\"\\/bfnrt", e) || e == '\0') {
                        line_col(s, i, &l, &col);
                        return js_doc_fail(d, "invalid JSON at line %d, column %d: unknown escape \\%c", l, col,
                                           (e >= 0x20 && e < 0x7f) ? e : '?');
                    }
                    i += 2;
                    continue;
                }
                i++;
            }
            if (i >= n) {
                line_col(s, start, &l, &col);
                return js_doc_fail(d, "invalid JSON: the string opened at line %d, column %d never ends (truncated file?)",
                                   l, col);
            }
            i++;
        } else if (ch == '{' || ch == '[') {
            if (++depth > d->max_depth) {
                line_col(s, i, &l, &col);
                return js_doc_fail(d, "nesting deeper than %d levels at line %d, column %d: the %s schema needs at most %d",
                                   d->max_depth, l, col, d->noun, d->schema_depth);
            }
            i++;
        } else if (ch == '}' || ch == ']') {
            if (depth > 0) depth--;
            i++;
        } else if (ch == '-' || is_digit(ch)) {
            size_t st = i;
            int ok;
            i = number_scan(s, n, i, &ok);
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
                return js_doc_fail(d, "invalid JSON at line %d, column %d: malformed number \"%s\" (JSON numbers look like 12, -3, 0.5, 1e6)",
                                   l, col, tok);
            }
        } else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_') {
            /* a bare word: only true, false and null are JSON; anything else
             * is reported here, where it starts, not at a later token */
            size_t k = 0;
            while (i + k < n && ((s[i + k] >= 'a' && s[i + k] <= 'z') || (s[i + k] >= 'A' && s[i + k] <= 'Z') ||
                                 (s[i + k] >= '0' && s[i + k] <= '9') || s[i + k] == '_'))
                k++;
            if (!((k == 4 && !strncmp(s + i, "true", 4)) || (k == 5 && !strncmp(s + i, "false", 5)) ||
                  (k == 4 && !strncmp(s + i, "null", 4)))) {
                line_col(s, i, &l, &col);
                return js_doc_fail(d, "invalid JSON at line %d, column %d: unexpected \"%.*s\" (JSON values are "
                                   "objects, arrays, \"strings\", numbers, true, false or null)",
                                   l, col, (int)(k < 24 ? k : 24), s + i);
            }
            i += k;
        } else {
            i++;
        }
    }
    return 0;
}

/* Parses after the gates. Returns the root object or NULL with a message. */
int js_dup_key(const cJSON *v, const char *prefix, char *path, size_t n)
{
    char here[256];
    int i = 0;
    for (const cJSON *it = v ? v->child : NULL; it; it = it->next, i++) {
        if (cJSON_IsObject(v) && it->string) {
            for (const cJSON *jt = v->child; jt != it; jt = jt->next)
                if (jt->string && !strcmp(jt->string, it->string)) {
                    char shown[64];
                    snprintf(shown, sizeof shown, "%.60s", it->string);
                    js_join_path(path, n, prefix, shown);
                    return 1;
                }
        }
        if (!cJSON_IsObject(it) && !cJSON_IsArray(it)) continue;
        if (cJSON_IsObject(v)) {
            char shown[64];
            snprintf(shown, sizeof shown, "%.60s", it->string ? it->string : "");
            js_join_path(here, sizeof here, prefix, shown);
        } else {
            snprintf(here, sizeof here, "%.200s[%d]", prefix ? prefix : "", i);
        }
        if (js_dup_key(it, here, path, n)) return 1;
    }
    return 0;
}

cJSON *js_parse_object(js_doc *d, const char *text, size_t len)
{
    if (check_utf8(d, text, len) || prescan(d, text, len)) return NULL;
    size_t k = 0;
    while (k < len && strchr(" \t\r\n", text[k])) k++;
    if (k == len) {
        js_doc_fail(d, "empty file: a %s is one JSON object", d->noun);
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
            js_doc_fail(d, "invalid JSON: the text ends early at line %d, column %d (truncated file?)", l, col);
        } else {
            char near[24];
            size_t m = 0;
            for (size_t i = off; i < len && m + 1 < sizeof near && text[i] != '\n'; i++)
                near[m++] = ((unsigned char)text[i] < 0x20 || (unsigned char)text[i] >= 0x7f) ? '?' : text[i];
            near[m] = '\0';
            js_doc_fail(d, "invalid JSON at line %d, column %d, near \"%s\"", l, col, near);
        }
        return NULL;
    }
    if (!cJSON_IsObject(root)) {
        char val[160];
        js_describe(root, val, sizeof val);
        js_doc_fail(d, "the top level is %s: a %s is one JSON object {...}", val, d->noun);
        cJSON_Delete(root);
        return NULL;
    }
    /* cJSON keeps both of a repeated key and its lookups find the first:
     * the second would be silently ignored */
    char path[300];
    if (js_dup_key(root, "", path, sizeof path)) {
        js_doc_fail(d, "field \"%s\" appears twice: give each field once", path);
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

/* ---------------------------------------------------------------- schema */

int js_count_members(const cJSON *o)
{
    int n = 0;
    for (const cJSON *it = o ? o->child : NULL; it; it = it->next) n++;
    return n;
}

/* Every key of obj must be in `allowed` (NULL-terminated), once. */
int js_check_keys(js_doc *d, const cJSON *obj, const char *prefix, const char *const *allowed,
                  const char *schema_hint)
{
    char path[160];
    int n = js_count_members(obj);
    if (n > JS_MAX_MEMBERS) {
        return js_doc_fail(d, "object \"%s\" has %d members: the schema allows at most %d", prefix && *prefix ? prefix : "(top level)",
                           n, JS_MAX_MEMBERS);
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
                int dist = js_edit_distance(k, allowed[i]);
                if (dist < best) best = dist, best_key = allowed[i];
            }
            if (schema_hint)
                snprintf(hint, sizeof hint, " (%s)", schema_hint);
            else if (best_key && best <= 2)
                snprintf(hint, sizeof hint, " (did you mean \"%s\"?)", best_key);
            char shown[64];
            snprintf(shown, sizeof shown, "%.60s", k);
            js_join_path(path, sizeof path, prefix, shown);
            return js_doc_fail(d, "unknown field \"%s\"%s: valid fields here are %s", path, hint, list);
        }
        /* a repeated field never gets here: js_parse_object refuses it */
    }
    return 0;
}

int js_get_field(js_doc *d, const cJSON *obj, const char *prefix, const char *key, const char *expect,
                 const cJSON **out)
{
    *out = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!*out) {
        char path[160];
        js_join_path(path, sizeof path, prefix, key);
        return js_doc_fail(d, "field \"%s\" is missing: expected %s", path, expect);
    }
    return 0;
}

int js_is_int_in(const cJSON *v, int64_t lo, int64_t hi)
{
    double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    return cJSON_IsNumber(v) && isfinite(x) && x == floor(x) && x >= (double)lo && x <= (double)hi;
}

int js_get_int(js_doc *d, const cJSON *obj, const char *prefix, const char *key, int64_t lo, int64_t hi,
               int64_t *out)
{
    char path[160], expect[96];
    const cJSON *v;
    snprintf(expect, sizeof expect, "an integer in %lld..%lld", (long long)lo, (long long)hi);
    if (js_get_field(d, obj, prefix, key, expect, &v)) return 2;
    js_join_path(path, sizeof path, prefix, key);
    if (!js_is_int_in(v, lo, hi)) return js_bad_value(d, path, v, "must be %s", expect);
    *out = (int64_t)v->valuedouble;
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
int js_get_num(js_doc *d, const cJSON *obj, const char *prefix, const char *key, double lo, int lo_open,
               double hi, const char *unit, double *out)
{
    char path[160], expect[128];
    const cJSON *v;
    char blo[32], bhi[32];
    snprintf(expect, sizeof expect, "a number in %c%s, %s]%s%s", lo_open ? '(' : '[', fmt_bound(blo, sizeof blo, lo),
             fmt_bound(bhi, sizeof bhi, hi), unit ? " " : "", unit ? unit : "");
    if (js_get_field(d, obj, prefix, key, expect, &v)) return 2;
    js_join_path(path, sizeof path, prefix, key);
    double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!cJSON_IsNumber(v) || !isfinite(x) || x > hi || x < lo || (lo_open && x == lo))
        return js_bad_value(d, path, v, "must be %s", expect);
    *out = x;
    return 0;
}

int js_get_bool(js_doc *d, const cJSON *obj, const char *prefix, const char *key, int *out)
{
    char path[160];
    const cJSON *v;
    if (js_get_field(d, obj, prefix, key, "true or false", &v)) return 2;
    js_join_path(path, sizeof path, prefix, key);
    if (!cJSON_IsBool(v)) return js_bad_value(d, path, v, "must be true or false (without quotes)");
    *out = cJSON_IsTrue(v) ? 1 : 0;
    return 0;
}

int js_name_char_ok(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
           ch == '_' || ch == '.' || ch == '+';
}

/* A name: 1..ULY_NAME_LEN-1 characters of [A-Za-z0-9._+-]. */
int js_get_name(js_doc *d, const cJSON *obj, const char *prefix, const char *key, char *out, size_t out_len)
{
    char path[160], expect[128];
    const cJSON *v;
    snprintf(expect, sizeof expect, "a string of 1..%zu characters from A-Z a-z 0-9 . _ + -", out_len - 1);
    if (js_get_field(d, obj, prefix, key, expect, &v)) return 2;
    js_join_path(path, sizeof path, prefix, key);
    if (!cJSON_IsString(v) || !v->valuestring) return js_bad_value(d, path, v, "must be %s", expect);
    size_t n = strlen(v->valuestring);
    int ok = n >= 1 && n < out_len;
    for (size_t i = 0; ok && i < n; i++) ok = js_name_char_ok(v->valuestring[i]);
    if (!ok) return js_bad_value(d, path, v, "must be %s", expect);
    memcpy(out, v->valuestring, n + 1);
    return 0;
}

/* Free text: a string without control characters, at most JS_MAX_TEXT
 * bytes. */
int js_check_text(js_doc *d, const cJSON *v, const char *path)
{
    char expect[96];
    snprintf(expect, sizeof expect, "a one-line string of at most %d bytes", JS_MAX_TEXT);
    if (!cJSON_IsString(v) || !v->valuestring) return js_bad_value(d, path, v, "must be %s", expect);
    size_t n = strlen(v->valuestring);
    if (n > JS_MAX_TEXT) return js_bad_value(d, path, v, "is %zu bytes: must be %s", n, expect);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)v->valuestring[i] < 0x20 || v->valuestring[i] == 0x7f)
            return js_bad_value(d, path, v, "contains a control character: must be %s", expect);
    return 0;
}

int js_get_text_opt(js_doc *d, const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return v ? js_check_text(d, v, key) : 0;
}

/* Does a dotted path name a field present in root? */
int js_path_exists(const cJSON *root, const char *path)
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

int js_get_object(js_doc *d, const cJSON *obj, const char *prefix, const char *key, const cJSON **out)
{
    char path[160];
    if (js_get_field(d, obj, prefix, key, "an object {...}", out)) return 2;
    js_join_path(path, sizeof path, prefix, key);
    if (!cJSON_IsObject(*out)) return js_bad_value(d, path, *out, "must be an object {...}");
    return 0;
}
