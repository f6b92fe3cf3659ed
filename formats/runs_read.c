/* runs_read.c: the runs-file reader (runs_read.h). CSV as RFC 4180 has it
 * (fields separated by commas, quoted with "...", "" a quote inside, CRLF or
 * LF line ends, a newline allowed inside quotes), with '#' comment lines and
 * blank lines skipped outside quotes; JSON Lines when the first line that is
 * neither blank nor a comment starts with '{'. */
#include "runs_read.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_strict.h"

static int fail_at(char *why, size_t n, const char *shown, int line, int col, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (col > 0) return js_fail(why, n, NULL, "%s:%d:%d: %s", shown, line, col, msg);
    return js_fail(why, n, NULL, "%s:%d: %s", shown, line, msg);
}

void runs_free(runs_table *t)
{
    if (!t) return;
    for (int c = 0; c < t->n_cols; c++) free(t->cols[c]);
    for (int r = 0; r < t->n_rows; r++) {
        for (int c = 0; t->cells[r] && c < t->n_cols; c++) free(t->cells[r][c]);
        free(t->cells[r]);
    }
    free(t->cols);
    free(t->cells);
    free(t->line);
    memset(t, 0, sizeof *t);
}

int runs_col(const runs_table *t, const char *name)
{
    for (int c = 0; c < t->n_cols; c++)
        if (!strcmp(t->cols[c], name)) return c;
    return -1;
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

/* A new row of n_cols empty cells. 0, or 1 out of memory. */
static int row_add(runs_table *t, int line)
{
    if (t->n_rows % 64 == 0) {
        char ***c = realloc(t->cells, (size_t)(t->n_rows + 64) * sizeof *c);
        if (!c) return 1;
        t->cells = c;
        int *l = realloc(t->line, (size_t)(t->n_rows + 64) * sizeof *l);
        if (!l) return 1;
        t->line = l;
    }
    /* room for the columns in blocks of 16, as jsonl_parse grows every
     * row when a later row brings a new key (a row of exactly n_cols had
     * no room for it: a heap overflow the runs fuzzer found) */
    char **row = calloc((size_t)(t->n_cols / 16 + 1) * 16, sizeof *row);
    if (!row) return 1;
    t->cells[t->n_rows] = row;
    t->line[t->n_rows++] = line;
    return 0;
}

/* -------------------------------------------------------------------- CSV */

typedef struct csv_field {
    char *text;
    size_t len, cap;
} csv_field;

static int field_put(csv_field *f, char ch)
{
    if (f->len + 1 >= f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 64;
        char *t = realloc(f->text, cap);
        if (!t) return 1;
        f->text = t;
        f->cap = cap;
    }
    f->text[f->len++] = ch;
    f->text[f->len] = 0;
    return 0;
}

/* One record from *pos into fields (strdup'd, *n of them); *line advances
 * over its newlines. Returns 0, 2 with the message, or 1 out of memory. */
static int csv_record(const char *s, size_t len, size_t *pos, int *line, const char *shown, char ***fields, int *n,
                      char *why, size_t wn)
{
    size_t i = *pos;
    size_t line_start = i;
    int count = 0, rc = 0;
    char **v = calloc(RUNS_MAX_COLS + 1, sizeof *v);
    csv_field f = {0};
    if (!v) return 1;
    for (;;) {
        f.len = 0;
        if (field_put(&f, 0)) { rc = 1; break; }
        f.len = 0;
        if (i < len && s[i] == '"') {
            const int qline = *line, qcol = (int)(i - line_start) + 1;
            i++;
            for (;;) {
                if (i >= len) {
                    rc = fail_at(why, wn, shown, qline, qcol, "a quoted field is not closed (valid: \"...\" with \"\" "
                                 "for a quote inside)");
                    break;
                }
                if (s[i] == '"') {
                    if (i + 1 < len && s[i + 1] == '"') {
                        if (field_put(&f, '"')) { rc = 1; break; }
                        i += 2;
                        continue;
                    }
                    i++;
                    break;
                }
                if (s[i] == '\n') {
                    (*line)++;
                    line_start = i + 1;
                }
                if (s[i] == 0) {
                    rc = fail_at(why, wn, shown, *line, (int)(i - line_start) + 1, "a NUL byte (valid: text)");
                    break;
                }
                if (field_put(&f, s[i++])) { rc = 1; break; }
            }
            if (rc) break;
            if (i < len && s[i] != ',' && s[i] != '\n' && s[i] != '\r') {
                rc = fail_at(why, wn, shown, *line, (int)(i - line_start) + 1,
                             "text after a closing quote (valid: a comma or the end of the line)");
                break;
            }
        } else {
            while (i < len && s[i] != ',' && s[i] != '\n' && s[i] != '\r') {
                if (s[i] == '"' || s[i] == 0) {
                    rc = fail_at(why, wn, shown, *line, (int)(i - line_start) + 1, "%s inside an unquoted field "
                                 "(valid: quote the whole field, \"...\", with \"\" for a quote)",
                                 s[i] ? "a quote" : "a NUL byte");
                    break;
                }
                if (field_put(&f, s[i++])) { rc = 1; break; }
            }
            if (rc) break;
        }
        if (count >= RUNS_MAX_COLS) {
            rc = fail_at(why, wn, shown, *line, 0, "more than %d fields", RUNS_MAX_COLS);
            break;
        }
        if (!(v[count++] = dup_n(f.text, f.len))) { rc = 1; break; }
        if (i < len && s[i] == ',') {
            i++;
            continue;
        }
        if (i < len && s[i] == '\r') i++;
        if (i < len && s[i] == '\n') i++;
        else if (i < len) {
            rc = fail_at(why, wn, shown, *line, (int)(i - line_start) + 1, "a carriage return inside a line");
            break;
        }
        (*line)++;
        break;
    }
    free(f.text);
    if (rc) {
        for (int k = 0; k < count; k++) free(v[k]);
        free(v);
        return rc;
    }
    *pos = i;
    *fields = v;
    *n = count;
    return 0;
}

/* Skips blank lines and '#' comment lines at *pos. */
static void skip_comments(const char *s, size_t len, size_t *pos, int *line)
{
    size_t i = *pos;
    while (i < len) {
        size_t j = i;
        while (j < len && (s[j] == ' ' || s[j] == '\t')) j++;
        if (j < len && s[j] != '#' && s[j] != '\n' && s[j] != '\r') break;
        while (j < len && s[j] != '\n') j++;
        if (j < len) j++;
        i = j;
        (*line)++;
    }
    *pos = i;
}

static void fields_free(char **v, int n)
{
    for (int k = 0; k < n; k++) free(v[k]);
    free(v);
}

static int csv_parse(const char *s, size_t len, const char *shown, runs_table *t, char *why, size_t wn)
{
    size_t pos = 0;
    int line = 1, rc;
    skip_comments(s, len, &pos, &line);
    if (pos >= len) return fail_at(why, wn, shown, line, 0, "no header line (valid: the column names, e.g. "
                                   "model,gpus,seq,strategy,step_s)");
    char **hdr;
    int nh;
    const int hline = line;
    if ((rc = csv_record(s, len, &pos, &line, shown, &hdr, &nh, why, wn)) != 0) return rc;
    t->cols = hdr;
    t->n_cols = nh;
    for (int c = 0; c < nh; c++) {
        if (!hdr[c][0]) return fail_at(why, wn, shown, hline, 0, "column %d has no name", c + 1);
        for (int d = 0; d < c; d++)
            if (!strcmp(hdr[c], hdr[d]))
                return fail_at(why, wn, shown, hline, 0, "column '%.60s' appears twice (columns %d and %d)", hdr[c],
                               d + 1, c + 1);
    }
    for (;;) {
        skip_comments(s, len, &pos, &line);
        if (pos >= len) break;
        if (t->n_rows >= RUNS_MAX_ROWS) return fail_at(why, wn, shown, line, 0, "more than %d rows", RUNS_MAX_ROWS);
        const int start = line;
        char **v;
        int n;
        if ((rc = csv_record(s, len, &pos, &line, shown, &v, &n, why, wn)) != 0) return rc;
        if (n != nh) {
            fields_free(v, n);
            return fail_at(why, wn, shown, start, 0, "%d fields, the header has %d (valid: one per column; an empty "
                           "field for the default)", n, nh);
        }
        if (row_add(t, start)) {
            fields_free(v, n);
            return 1;
        }
        free(t->cells[t->n_rows - 1]);
        t->cells[t->n_rows - 1] = v;
    }
    return 0;
}

/* ------------------------------------------------------------ JSON Lines */

/* A value of a JSON Lines row as the cell's text. */
static char *json_cell(const cJSON *v)
{
    char buf[64];
    if (cJSON_IsNull(v)) return dup_n("", 0);
    if (cJSON_IsTrue(v)) return dup_n("true", 4);
    if (cJSON_IsFalse(v)) return dup_n("false", 5);
    if (cJSON_IsString(v)) return dup_n(v->valuestring, strlen(v->valuestring));
    /* in range before the cast: converting 1e103 to long long is undefined */
    if (v->valuedouble > -9e15 && v->valuedouble < 9e15 && v->valuedouble == (double)(long long)v->valuedouble)
        snprintf(buf, sizeof buf, "%lld", (long long)v->valuedouble);
    else
        snprintf(buf, sizeof buf, "%.17g", v->valuedouble);
    return dup_n(buf, strlen(buf));
}

static int jsonl_parse(const char *s, size_t len, const char *shown, runs_table *t, char *why, size_t wn)
{
    size_t pos = 0;
    int line = 1;
    char where[600];
    for (;;) {
        skip_comments(s, len, &pos, &line);
        if (pos >= len) break;
        size_t end = pos;
        while (end < len && s[end] != '\n') end++;
        if (t->n_rows >= RUNS_MAX_ROWS) return fail_at(why, wn, shown, line, 0, "more than %d rows", RUNS_MAX_ROWS);
        snprintf(where, sizeof where, "%s:%d", shown, line);
        js_doc d = {where, why, wn, "row", 2, 1};
        char *text = dup_n(s + pos, end - pos);
        if (!text) return 1;
        cJSON *root = js_parse_object(&d, text, end - pos);
        free(text);
        if (!root) return 2;
        int rc = row_add(t, line);
        for (const cJSON *m = root->child; !rc && m; m = m->next) {
            if (cJSON_IsObject(m) || cJSON_IsArray(m)) {
                rc = fail_at(why, wn, shown, line, 0, "\"%.60s\" is an %s (valid: a string, number, true, false or null)",
                             m->string, cJSON_IsObject(m) ? "object" : "array");
                break;
            }
            int c = runs_col(t, m->string);
            if (c < 0) {
                if (t->n_cols >= RUNS_MAX_COLS) {
                    rc = fail_at(why, wn, shown, line, 0, "more than %d columns", RUNS_MAX_COLS);
                    break;
                }
                if (t->n_cols % 16 == 0) {
                    char **cols = realloc(t->cols, (size_t)(t->n_cols + 16) * sizeof *cols);
                    if (!cols) { rc = 1; break; }
                    t->cols = cols;
                    for (int r = 0; r < t->n_rows && !rc; r++) {
                        char **row = realloc(t->cells[r], (size_t)(t->n_cols + 16) * sizeof *row);
                        if (!row) rc = 1;
                        else t->cells[r] = row;
                    }
                    if (rc) break;
                }
                if (!(t->cols[t->n_cols] = dup_n(m->string, strlen(m->string)))) { rc = 1; break; }
                for (int r = 0; r < t->n_rows; r++) t->cells[r][t->n_cols] = NULL;
                c = t->n_cols++;
            }
            char **row = t->cells[t->n_rows - 1];
            if (row[c]) {
                rc = fail_at(why, wn, shown, line, 0, "key \"%.60s\" appears twice", m->string);
                break;
            }
            if (!(row[c] = json_cell(m))) rc = 1;
        }
        cJSON_Delete(root);
        if (rc) return rc;
        pos = end < len ? end + 1 : end;
        line++;
    }
    /* a key a row leaves out is empty there: the default */
    for (int r = 0; r < t->n_rows; r++)
        for (int c = 0; c < t->n_cols; c++)
            if (!t->cells[r][c] && !(t->cells[r][c] = dup_n("", 0))) return 1;
    return 0;
}

/* Every name and cell is printable UTF-8: a table or JSON output shows
 * them, and a control character (an escape sequence) or a byte that is not
 * UTF-8 would reach the terminal or make the JSON invalid. 0, or 2. */
static int text_check(const runs_table *t, const char *shown, char *why, size_t n)
{
    for (int r = -1; r < t->n_rows; r++)
        for (int c = 0; c < t->n_cols; c++) {
            const char *v = r < 0 ? t->cols[c] : t->cells[r][c];
            const size_t len = strlen(v);
            size_t bad = js_utf8_bad(v, len);
            for (size_t i = 0; i < bad; i++)
                if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f) bad = i;
            if (bad == len) continue;
            const char *what = (unsigned char)v[bad] < 0x80 ? "a control character" : "not UTF-8";
            if (r < 0)
                return fail_at(why, n, shown, 1, 0, "column %d's name: byte 0x%02x at offset %zu is %s (valid: "
                               "printable UTF-8 text)", c + 1, (unsigned char)v[bad], bad, what);
            return fail_at(why, n, shown, t->line[r], 0, "column %s: byte 0x%02x at offset %zu is %s (valid: printable "
                           "UTF-8 text)", t->cols[c], (unsigned char)v[bad], bad, what);
        }
    return 0;
}

int runs_parse(const char *text, size_t len, const char *shown, runs_table *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    if (!shown) shown = "(runs)";
    if (len > RUNS_MAX_BYTES) return js_fail(why, why_len, shown, "%zu bytes: at most %u", len, RUNS_MAX_BYTES);
    /* a UTF-8 byte order mark (spreadsheets write one) is not part of the first name */
    if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) text += 3, len -= 3;
    size_t pos = 0;
    int line = 1;
    skip_comments(text, len, &pos, &line);
    size_t p = pos;
    while (p < len && (text[p] == ' ' || text[p] == '\t')) p++;
    out->jsonl = p < len && text[p] == '{';
    int rc = out->jsonl ? jsonl_parse(text, len, shown, out, why, why_len)
                        : csv_parse(text, len, shown, out, why, why_len);
    if (!rc) rc = text_check(out, shown, why, why_len);
    if (rc == 1) js_fail(why, why_len, shown, "out of memory");
    if (rc) runs_free(out);
    return rc;
}

int runs_load(const char *path, runs_table *out, char *why, size_t why_len)
{
    js_file f;
    memset(out, 0, sizeof *out);
    switch (js_file_read(path, RUNS_MAX_BYTES, &f)) {
    case JS_FILE_OK: break;
    case JS_FILE_DIR: return js_fail(why, why_len, path, "a directory (valid: a runs file, CSV or JSON Lines)");
    case JS_FILE_SPECIAL: return js_fail(why, why_len, path, "not a regular file (valid: a runs file)");
    case JS_FILE_BIG:
    case JS_FILE_GREW: return js_fail(why, why_len, path, "larger than %u bytes (valid: a runs file)", RUNS_MAX_BYTES);
    case JS_FILE_NOMEM: return js_fail(why, why_len, path, "out of memory");
    default: return js_fail(why, why_len, path, "cannot read it: %s", strerror(f.err));
    }
    int rc = runs_parse(f.text, f.len, path, out, why, why_len);
    free(f.text);
    return rc;
}
