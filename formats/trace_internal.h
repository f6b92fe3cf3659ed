/* trace_internal.h: what the trace reader's two files share (trace_read.c:
 * the file, its lines, op and micro-benchmark lines; trace_header.c: the
 * header line): the reading state, the one-line message and the checked
 * accessors of a line's JSON. Not part of the reader's interface. The
 * functions are defined here, static in each file that includes this one,
 * so that the compiler sees them whole, as when the reader was one file
 * (declared apart, it warned of values maybe unset behind a failed get_int). */
#ifndef FORMATS_TRACE_INTERNAL_H
#define FORMATS_TRACE_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json_strict.h"
#include "trace_read.h"

/* ------------------------------------------------------------- messages */

typedef struct rd {
    const char *path;
    char *why;
    size_t why_len;
    int line;
    int exec_order[ULY_PLAN_MAX_OPS]; /* the header's harness.execution_order */
    int n_exec_order;                 /* 0: none given (older traces): order not checked */
    int64_t summary_ops;              /* the summary's "ops", -1 when absent: checked once every line is read */
    int bytes_ok_said;                /* the summary has "bytes_ok" (checked against the op lines at the end) */
} rd;

/* "PATH:LINE: message", or "PATH: message" for the file as a whole. */
__attribute__((format(printf, 3, 4), unused)) static int fail(rd *r, int line, const char *fmt, ...)
{
    char where[600]; /* the path (at most 511 bytes, trace_run.path) and ":LINE" */
    if (line > 0)
        snprintf(where, sizeof where, "%s:%d", r->path, line);
    else
        snprintf(where, sizeof where, "%s", r->path);
    va_list ap;
    va_start(ap, fmt);
    js_failv(r->why, r->why_len, where, fmt, ap);
    va_end(ap);
    return 2;
}

/* A string value for messages: cut at 40 bytes, control characters '?'. */
__attribute__((unused)) static const char *shown(const char *s, char *buf, size_t n)
{
    if (!s) return "(missing)";
    size_t i = 0;
    for (; s[i] && i + 4 < n && i < 40; i++) buf[i] = ((unsigned char)s[i] < 0x20) ? '?' : s[i];
    if (s[i]) {
        memcpy(buf + i, "...", 4);
    } else {
        buf[i] = 0;
    }
    return buf;
}

/* --------------------------------------------------------------- access */

__attribute__((unused)) static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

__attribute__((unused)) static const char *str_of(const cJSON *o, const char *k)
{
    const cJSON *x = get(o, k);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

/* An integer member in [lo, hi]. */
__attribute__((unused)) static int get_int(rd *r, const cJSON *o, const char *what, const char *k, int64_t lo, int64_t hi, int64_t *out)
{
    const cJSON *x = get(o, k);
    if (!x) return fail(r, r->line, "%s%s\"%s\" is missing", what, *what ? " " : "", k);
    if (!js_is_int_in(x, lo, hi))
        return fail(r, r->line, "%s%s\"%s\" must be an integer in [%lld, %lld]", what, *what ? " " : "", k,
                    (long long)lo, (long long)hi);
    *out = (int64_t)x->valuedouble;
    return 0;
}

__attribute__((unused)) static int get_str(rd *r, const cJSON *o, const char *what, const char *k, const char **out)
{
    const char *s = str_of(o, k);
    if (!s) return fail(r, r->line, "%s \"%s\" must be a string%s", what, k, get(o, k) ? "" : " (missing)");
    *out = s;
    return 0;
}

__attribute__((unused)) static void copy_str(char *dst, size_t n, const char *s)
{
    snprintf(dst, n, "%s", s ? s : "");
    for (char *p = dst; *p; p++)
        if ((unsigned char)*p < 0x20) *p = '?';
}

/* The header (line 1): its format and version, what ran (model, workload,
 * layout, cluster), the plan libulysim rebuilds from them and compares with
 * the header's, and the harness's execution order (into r). 0 or 2. */
int trace_header_parse(rd *r, const cJSON *h, trace_run *run);

#endif
