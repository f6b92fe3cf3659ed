/* trace_read.c: the trace reader (see trace_read.h and traces/FORMAT.md).
 * Every message is one line "PATH:LINE: what is wrong [; what is valid]". */
#define _POSIX_C_SOURCE 200809L
#include "trace_read.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_strict.h"
#include "preset.h"

/* ------------------------------------------------------------- messages */

typedef struct rd {
    const char *path;
    char *why;
    size_t why_len;
    int line;
    int exec_order[ULY_PLAN_MAX_OPS]; /* the header's harness.execution_order */
    int n_exec_order;                 /* 0: none given (older traces): order not checked */
} rd;

/* "PATH:LINE: message", or "PATH: message" for the file as a whole. */
__attribute__((format(printf, 3, 4))) static int fail(rd *r, int line, const char *fmt, ...)
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
static const char *shown(const char *s, char *buf, size_t n)
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

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static const char *str_of(const cJSON *o, const char *k)
{
    const cJSON *x = get(o, k);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

/* An integer member in [lo, hi]. */
static int get_int(rd *r, const cJSON *o, const char *what, const char *k, int64_t lo, int64_t hi, int64_t *out)
{
    const cJSON *x = get(o, k);
    if (!x) return fail(r, r->line, "%s%s\"%s\" is missing", what, *what ? " " : "", k);
    if (!js_is_int_in(x, lo, hi))
        return fail(r, r->line, "%s%s\"%s\" must be an integer in [%lld, %lld]", what, *what ? " " : "", k,
                    (long long)lo, (long long)hi);
    *out = (int64_t)x->valuedouble;
    return 0;
}

static int get_bool(rd *r, const cJSON *o, const char *what, const char *k, int *out)
{
    const cJSON *x = get(o, k);
    if (!cJSON_IsBool(x))
        return fail(r, r->line, "%s \"%s\" must be true or false%s", what, k, x ? "" : " (missing)");
    *out = cJSON_IsTrue(x);
    return 0;
}

static int get_str(rd *r, const cJSON *o, const char *what, const char *k, const char **out)
{
    const char *s = str_of(o, k);
    if (!s) return fail(r, r->line, "%s \"%s\" must be a string%s", what, k, get(o, k) ? "" : " (missing)");
    *out = s;
    return 0;
}

static void copy_str(char *dst, size_t n, const char *s)
{
    snprintf(dst, n, "%s", s ? s : "");
    for (char *p = dst; *p; p++)
        if ((unsigned char)*p < 0x20) *p = '?';
}

/* A time member (time_s, wait_s, transfer_s): {median, min, max}, finite,
 * >= 0, min <= median <= max. */
static int get_stats(rd *r, const cJSON *o, const char *key, trace_time *t)
{
    const cJSON *x = get(o, key);
    if (!cJSON_IsObject(x)) return fail(r, r->line, "\"%s\" must be an object {median, min, max}", key);
    double v[3];
    static const char *k[3] = {"median", "min", "max"};
    for (int i = 0; i < 3; i++) {
        const cJSON *y = get(x, k[i]);
        if (!cJSON_IsNumber(y) || !isfinite(y->valuedouble) || y->valuedouble < 0 || y->valuedouble > 1e6)
            return fail(r, r->line, "\"%s.%s\" must be a number of seconds in [0, 1e6]", key, k[i]);
        v[i] = y->valuedouble;
    }
    if (v[1] > v[0] * (1 + 1e-9) + 1e-15 || v[0] > v[2] * (1 + 1e-9) + 1e-15)
        return fail(r, r->line, "\"%s\" must have min <= median <= max (%g, %g, %g)", key, v[1], v[0], v[2]);
    t->median = v[0];
    t->min = v[1];
    t->max = v[2];
    return 0;
}

/* time_s and reps */
static int get_time(rd *r, const cJSON *o, trace_time *t, int *reps)
{
    if (get_stats(r, o, "time_s", t)) return 2;
    int64_t n = 1;
    if (get(o, "reps") && get_int(r, o, "", "reps", 1, 1000000000, &n)) return 2;
    *reps = (int)n;
    return 0;
}

int trace_group_parse(const char *s, uly_group *g)
{
    for (int i = 0; s && i < ULY_GROUP_COUNT; i++)
        if (!strcmp(s, uly_group_name((uly_group)i))) {
            *g = (uly_group)i;
            return 0;
        }
    return -1;
}

const char *trace_coll_name(uly_coll c) { return uly_coll_name(c); }

static int coll_parse(const char *s, uly_coll *c)
{
    for (int i = 0; s && i < ULY_COLL_COUNT; i++)
        if (!strcmp(s, uly_coll_name((uly_coll)i))) {
            *c = (uly_coll)i;
            return 0;
        }
    return -1;
}

/* ----------------------------------------------------------------- file */

/* Reads a regular file of at most TRACE_MAX_BYTES. */
static int read_file(rd *r, char **text, size_t *len)
{
    js_file f;
    js_file_status st = js_file_read(r->path, TRACE_MAX_BYTES, &f);
    *text = f.text;
    *len = f.len;
    switch (st) {
    case JS_FILE_OK:
        return 0;
    case JS_FILE_OPEN:
        return fail(r, 0, "cannot open: %s", strerror(f.err));
    case JS_FILE_STAT:
        return fail(r, 0, "cannot stat: %s", strerror(f.err));
    case JS_FILE_DIR:
        return fail(r, 0, "is a directory, not a trace file");
    case JS_FILE_SPECIAL:
        return fail(r, 0, "is not a regular file, not a trace file");
    case JS_FILE_BIG:
        return fail(r, 0, "is %lld bytes; a trace may be at most %ld bytes", f.size, TRACE_MAX_BYTES);
    case JS_FILE_GREW:
        return fail(r, 0, "grew past %ld bytes while being read", TRACE_MAX_BYTES);
    case JS_FILE_READ:
        return fail(r, 0, "cannot read: %s", strerror(f.err));
    case JS_FILE_NOMEM:
        break;
    }
    return 1;
}

/* Parses one line (not NUL-terminated in the buffer: the newline is replaced). */
static int parse_line(rd *r, char *s, size_t n, cJSON **out)
{
    *out = NULL;
    if (n > (size_t)TRACE_MAX_LINE)
        return fail(r, r->line, "line of %zu bytes; a trace line may be at most %ld bytes", n, TRACE_MAX_LINE);
    /* strict UTF-8 (no NUL): what the trace holds is shown in messages and
     * exported as JSON, which bytes that are not UTF-8 would make invalid */
    const size_t bad = js_utf8_bad(s, n);
    if (bad < n)
        return fail(r, r->line, "%s at column %zu (byte 0x%02x): a trace is UTF-8 JSON text",
                    s[bad] ? "invalid UTF-8" : "NUL byte", bad + 1, (unsigned char)s[bad]);
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) i++;
    if (i == n) return fail(r, r->line, "empty line: every line of a trace is one JSON object");
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(s, n, &end, 0);
    if (!j) {
        const char *e = cJSON_GetErrorPtr();
        long col = e && e >= s && e <= s + n ? (long)(e - s) + 1 : 0;
        return fail(r, r->line, "malformed JSON (column %ld): every line of a trace is one JSON object", col);
    }
    if (end) {
        const char *p = end;
        while (p < s + n && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
        if (p < s + n) {
            cJSON_Delete(j);
            return fail(r, r->line, "text after the JSON object (column %ld): one object per line",
                        (long)(p - s) + 1);
        }
    }
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return fail(r, r->line, "not a JSON object: every line of a trace is one JSON object");
    }
    char dup[300];
    if (js_dup_key(j, "", dup, sizeof dup)) { /* the reader would take the first and ignore the second */
        cJSON_Delete(j);
        return fail(r, r->line, "key \"%s\" appears twice: give each key once", dup);
    }
    *out = j;
    return 0;
}

/* --------------------------------------------------------------- header */

static int parse_model(rd *r, const cJSON *m, uly_model *out)
{
    if (!cJSON_IsObject(m)) return fail(r, 1, "header \"model\" must be an object");
    char *text = cJSON_PrintUnformatted(m);
    if (!text) return 1;
    char why[400], where[600];
    snprintf(where, sizeof where, "%s:1: header model", r->path);
    int rc = sim_model_parse(text, strlen(text), where, out, why, sizeof why);
    free(text);
    if (rc) {
        snprintf(r->why, r->why_len, "%s", why);
        return 2;
    }
    return 0;
}

static int parse_workload(rd *r, const cJSON *w, uly_workload *out)
{
    if (!cJSON_IsObject(w)) return fail(r, 1, "header \"workload\" must be an object");
    memset(out, 0, sizeof *out);
    int64_t v;
    const char *s = NULL;
    char b[64];
    if (get_int(r, w, "header workload", "seq", 1, INT64_C(1) << 50, &out->seq)) return 2;
    if (get_int(r, w, "header workload", "micro_batch", 1, 1 << 30, &out->micro_batch)) return 2;
    if (get_int(r, w, "header workload", "global_batch", 0, INT64_C(1) << 40, &out->global_batch)) return 2;
    if (get_str(r, w, "header workload", "dtype", &s)) return 2;
    if (!strcmp(s, "fp32")) out->dtype = ULY_FP32;
    else if (!strcmp(s, "bf16")) out->dtype = ULY_BF16;
    else if (!strcmp(s, "fp16")) out->dtype = ULY_FP16;
    else return fail(r, 1, "header workload \"dtype\" = \"%s\": must be fp32, bf16 or fp16", shown(s, b, sizeof b));
    if (get_bool(r, w, "header workload", "causal", &out->causal)) return 2;
    if (get_bool(r, w, "header workload", "flash", &out->flash)) return 2;
    if (get_str(r, w, "header workload", "recompute", &s)) return 2;
    if (!strcmp(s, "none")) out->recompute = ULY_RECOMPUTE_NONE;
    else if (!strcmp(s, "selective")) out->recompute = ULY_RECOMPUTE_SELECTIVE;
    else if (!strcmp(s, "full")) out->recompute = ULY_RECOMPUTE_FULL;
    else return fail(r, 1, "header workload \"recompute\" = \"%s\": must be none, selective or full", shown(s, b, sizeof b));
    if (get_int(r, w, "header workload", "zero_stage", 0, 3, &v)) return 2;
    out->zero_stage = (int)v;
    if (get_str(r, w, "header workload", "split", &s)) return 2;
    if (!strcmp(s, "zigzag")) out->split = ULY_SPLIT_ZIGZAG;
    else if (!strcmp(s, "contiguous")) out->split = ULY_SPLIT_CONTIGUOUS;
    else return fail(r, 1, "header workload \"split\" = \"%s\": must be zigzag or contiguous", shown(s, b, sizeof b));
    /* optional: traces written before the key existed were planned with the
     * gradient reduction overlapped with backward */
    int ov = 1;
    if (get(w, "overlap_grad_reduce") && get_bool(r, w, "header workload", "overlap_grad_reduce", &ov)) return 2;
    out->overlap_grad_reduce = ov ? 1 : -1;
    char why[300];
    if (uly_workload_check(out, why, sizeof why)) return fail(r, 1, "header workload: %s", why);
    return 0;
}

static int parse_cluster(rd *r, const cJSON *h, trace_run *run, int required)
{
    const cJSON *cl = get(h, "cluster");
    run->used_nodes = 1;
    run->used_gpn = run->ranks > 0 ? run->ranks : 1;
    if (!cl || cJSON_IsNull(cl)) {
        if (required) return fail(r, 1, "header \"cluster\" is missing: the plan cannot be rebuilt without it");
        return 0;
    }
    if (!cJSON_IsObject(cl)) return fail(r, 1, "header \"cluster\" must be an object");
    copy_str(run->cluster_source, sizeof run->cluster_source, str_of(cl, "source"));
    const cJSON *used = get(cl, "used");
    if (cJSON_IsObject(used)) {
        if (get_int(r, used, "header cluster.used", "nodes", 1, 1 << 20, &run->used_nodes)) return 2;
        if (get_int(r, used, "header cluster.used", "gpus_per_node", 1, 1 << 20, &run->used_gpn)) return 2;
        run->adjusted = cJSON_IsTrue(get(used, "adjusted"));
    } else if (required) {
        return fail(r, 1, "header \"cluster.used\" must be an object {name, nodes, gpus_per_node}");
    }
    const cJSON *pre = get(cl, "preset");
    if (!pre || cJSON_IsNull(pre)) {
        if (required) return fail(r, 1, "header \"cluster.preset\" is missing: the profile the run predicts with");
        return 0;
    }
    if (!cJSON_IsObject(pre)) return fail(r, 1, "header \"cluster.preset\" must be the preset's JSON object");
    run->cluster_text = cJSON_PrintUnformatted(pre);
    if (!run->cluster_text) return 1;
    char why[600], where[600];
    snprintf(where, sizeof where, "%s:1: header cluster.preset", r->path);
    if (sim_cluster_parse(run->cluster_text, strlen(run->cluster_text), where, &run->cluster, why, sizeof why)) {
        snprintf(r->why, r->why_len, "%s", why);
        return 2;
    }
    run->cluster.nodes = run->used_nodes;
    run->cluster.gpus_per_node = run->used_gpn;
    if (run->cluster.gpus_per_leaf < run->cluster.gpus_per_node) run->cluster.gpus_per_leaf = run->cluster.gpus_per_node;
    return 0;
}

static int parse_layout(rd *r, const cJSON *pl, uly_layout *l)
{
    const char *sname = str_of(pl, "strategy");
    char b[64];
    const uly_strategy *s = uly_strategy_find(sname);
    if (!s) return fail(r, 1, "header plan \"strategy\" = \"%s\": not a strategy libulysim knows", shown(sname, b, sizeof b));
    const cJSON *lo = get(pl, "layout");
    if (!cJSON_IsObject(lo)) return fail(r, 1, "header plan \"layout\" must be an object");
    int64_t u, ri, t, dp, pp;
    if (get_int(r, lo, "header plan.layout", "ulysses", 1, 1 << 20, &u) ||
        get_int(r, lo, "header plan.layout", "ring", 1, 1 << 20, &ri) ||
        get_int(r, lo, "header plan.layout", "tp", 1, 1 << 20, &t) ||
        get_int(r, lo, "header plan.layout", "dp", 1, 1 << 20, &dp))
        return 2;
    pp = 1;
    if (get(lo, "pp") && get_int(r, lo, "header plan.layout", "pp", 1, 1 << 20, &pp)) return 2;
    uly_layout_init(l, s->id, u, ri, t, dp);
    l->pp = pp;
    const cJSON *ord = get(lo, "order");
    if (ord) {
        if (!cJSON_IsArray(ord) || cJSON_GetArraySize(ord) != 4)
            return fail(r, 1, "header plan.layout \"order\" must be an array of the 4 groups tp, ulysses, ring, dp");
        int i = 0;
        for (const cJSON *g = ord->child; g; g = g->next, i++) {
            uly_group gg;
            if (!cJSON_IsString(g) || trace_group_parse(g->valuestring, &gg) || gg == ULY_GROUP_NONE || gg == ULY_GROUP_ZERO)
                return fail(r, 1, "header plan.layout \"order\"[%d] must be one of tp, ulysses, ring, dp", i);
            l->order[i] = gg;
        }
    }
    char why[300];
    if (uly_layout_check(l, why, sizeof why)) return fail(r, 1, "header plan.layout: %s", why);
    return 0;
}

static int same_num(double a, double b) { return a == b || fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)); }

/* The header's plan op array against the plan libulysim rebuilt. */
static int compare_header_plan(rd *r, const cJSON *pl, const uly_plan *p)
{
    const cJSON *ops = get(pl, "ops");
    if (!cJSON_IsArray(ops)) return fail(r, 1, "header plan \"ops\" must be an array");
    int n = cJSON_GetArraySize(ops);
    if (n != p->n_ops)
        return fail(r, 1, "header plan has %d ops; libulysim rebuilds %d from the header's model, workload, layout and cluster",
                    n, p->n_ops);
    int i = 0;
    for (const cJSON *o = ops->child; o; o = o->next, i++) {
        const uly_op *q = &p->ops[i];
        char b[64], said[96] = "", want[96] = "";
        const char *bad = NULL;
        const cJSON *id = get(o, "id");
        if (!cJSON_IsObject(o))
            return fail(r, 1, "header plan op %d is not an object (valid: one object per op, in plan order)", i);
        if (!cJSON_IsNumber(id) || id->valuedouble != i)
            return fail(r, 1, "header plan op %d (%s): its id is not %d, its place in the list (valid: the ops in plan "
                        "order, id = index)", i, shown(str_of(o, "name"), b, sizeof b), i);
        /* the first field that differs, with what the header says and what
         * libulysim rebuilds */
        const char *const sv[5] = {uly_op_type_name(q->type), uly_phase_name(q->phase), uly_op_kind_name(q->kind),
                                   uly_coll_name(q->coll), uly_group_name(q->group)};
        static const char *const sk[5] = {"name", "phase", "kind", "coll", "group"};
        for (int k = 0; k < 5 && !bad; k++) {
            const char *v = str_of(o, sk[k]);
            if (v && !strcmp(v, sv[k])) continue;
            bad = sk[k];
            snprintf(said, sizeof said, "%s", v ? shown(v, b, sizeof b) : "(none)");
            snprintf(want, sizeof want, "%s", sv[k]);
        }
        const double nv[5] = {(double)q->group_size, (double)q->steps, (double)q->overlaps, (double)q->bytes_sent,
                              q->flops};
        static const char *const nk[5] = {"group_size", "steps", "overlaps", "bytes_sent", "flops"};
        for (int k = 0; k < 5 && !bad; k++) {
            const cJSON *v = get(o, nk[k]);
            if (cJSON_IsNumber(v) && (k == 4 ? same_num(v->valuedouble, nv[k]) : v->valuedouble == nv[k])) continue;
            bad = nk[k];
            if (cJSON_IsNumber(v)) snprintf(said, sizeof said, "%.17g", v->valuedouble);
            else snprintf(said, sizeof said, "(no number)");
            snprintf(want, sizeof want, "%.17g", nv[k]);
        }
        static const char *const bk[2] = {"per_step", "per_model"};
        const int bv[2] = {!!q->per_step, !!q->per_model};
        for (int k = 0; k < 2 && !bad; k++) {
            if (cJSON_IsTrue(get(o, bk[k])) == bv[k]) continue;
            bad = bk[k];
            snprintf(said, sizeof said, "%s", bv[k] ? "not true" : "true");
            snprintf(want, sizeof want, "%s", bv[k] ? "true" : "false");
        }
        if (bad)
            return fail(r, 1, "header plan op %d (%s): field %s %s differs from the plan libulysim rebuilds from the "
                        "header (%s)", i, sv[0], bad, said, want);
    }
    return 0;
}

static void join_command(const cJSON *cmd, char *out, size_t n)
{
    out[0] = 0;
    if (!cJSON_IsArray(cmd)) return;
    size_t o = 0;
    for (const cJSON *a = cmd->child; a && o + 1 < n; a = a->next) {
        if (!cJSON_IsString(a)) continue;
        const char *s = a->valuestring;
        int quote = !*s || strpbrk(s, " \t'\"$&|;<>()*?") != NULL;
        int w = snprintf(out + o, n - o, quote ? "%s'%s'" : "%s%s", o ? " " : "", s);
        if (w < 0) break;
        o += (size_t)w;
        if (o >= n) {
            o = n - 1;
            break;
        }
    }
    for (char *p = out; *p; p++)
        if ((unsigned char)*p < 0x20) *p = '?';
}

/* harness.execution_order: every plan id once; the op lines must follow it
 * (traces/FORMAT.md). Absent in older traces: then not checked. */
static int parse_exec_order(rd *r, const cJSON *eo, int n_ops)
{
    r->n_exec_order = 0;
    if (!eo) return 0;
    if (!cJSON_IsArray(eo) || cJSON_GetArraySize(eo) != n_ops)
        return fail(r, 1, "header harness.execution_order must be an array of the plan's %d op ids", n_ops);
    unsigned char seen[ULY_PLAN_MAX_OPS] = {0};
    int k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, eo) {
        const double v = cJSON_IsNumber(e) ? e->valuedouble : -1;
        if (!(v >= 0 && v < n_ops) || v != (int)v || seen[(int)v])
            return fail(r, 1, "header harness.execution_order[%d]: not a plan op id seen once (0 .. %d)", k, n_ops - 1);
        seen[(int)v] = 1;
        r->exec_order[k++] = (int)v;
    }
    r->n_exec_order = k;
    return 0;
}

static int parse_header(rd *r, const cJSON *h, trace_run *run)
{
    r->line = 1;
    char b[64];
    const cJSON *f = get(h, "format");
    if (!cJSON_IsString(f) || strcmp(f->valuestring, TRACE_FORMAT))
        return fail(r, 1, "header \"format\" is %s%s%s, not \"%s\": not an ulysim trace",
                    cJSON_IsString(f) ? "\"" : "", cJSON_IsString(f) ? shown(f->valuestring, b, sizeof b) : "missing",
                    cJSON_IsString(f) ? "\"" : "", TRACE_FORMAT);
    const cJSON *v = get(h, "version");
    if (!cJSON_IsNumber(v))
        return fail(r, 1, "header \"version\" is missing or not a number; this reader reads versions 1 to %d", TRACE_VERSION);
    if (v->valuedouble != TRACE_VERSION && v->valuedouble != 1)
        return fail(r, 1, "trace format version %.15g; this reader reads versions 1 to %d (see traces/FORMAT.md)",
                    v->valuedouble, TRACE_VERSION);
    run->version = (int)v->valuedouble;
    const char *ty = str_of(h, "type");
    if (!ty || strcmp(ty, "header")) return fail(r, 1, "line 1 must be the header (\"type\": \"header\")");
    const char *kind = str_of(h, "kind");
    if (kind && !strcmp(kind, "plan")) run->kind = TRACE_PLAN;
    else if (kind && !strcmp(kind, "microbench")) run->kind = TRACE_MICROBENCH;
    else return fail(r, 1, "header \"kind\" = \"%s\": must be \"plan\" or \"microbench\"", shown(kind, b, sizeof b));

    copy_str(run->created, sizeof run->created, str_of(h, "created"));
    join_command(get(h, "command"), run->command, sizeof run->command);
    const cJSON *hw = get(h, "hardware"), *sw = get(h, "software"), *hx = get(h, "harness");
    copy_str(run->hostname, sizeof run->hostname, str_of(hw, "hostname"));
    copy_str(run->cpu_model, sizeof run->cpu_model, str_of(hw, "cpu_model"));
    copy_str(run->mpi_library, sizeof run->mpi_library, str_of(sw, "mpi_library"));
    copy_str(run->blas, sizeof run->blas, str_of(sw, "blas"));
    copy_str(run->kernel, sizeof run->kernel, str_of(sw, "attention_kernel"));
    copy_str(run->mode, sizeof run->mode, str_of(hx, "mode"));
    int64_t x;
    if (cJSON_IsObject(hw) && get(hw, "ranks")) {
        if (get_int(r, hw, "header hardware", "ranks", 1, 1 << 24, &x)) return 2;
        run->ranks = (int)x;
    }
    if (cJSON_IsObject(hw) && cJSON_IsNumber(get(hw, "cores_online"))) run->cores_online = get(hw, "cores_online")->valueint;
    if (cJSON_IsObject(hx) && cJSON_IsNumber(get(hx, "threads"))) run->threads = get(hx, "threads")->valueint;
    if (cJSON_IsObject(hx) && cJSON_IsNumber(get(hx, "warmup"))) run->warmup = get(hx, "warmup")->valueint;
    if (cJSON_IsObject(hx) && cJSON_IsNumber(get(hx, "reps"))) run->reps = get(hx, "reps")->valueint;

    if (run->kind == TRACE_MICROBENCH) {
        const cJSON *mb = get(h, "microbench");
        if (!cJSON_IsObject(mb)) return fail(r, 1, "microbench header has no \"microbench\" object");
        if (get_int(r, mb, "header microbench", "ranks", 1, 1 << 24, &x)) return 2;
        if (run->ranks && run->ranks != x)
            return fail(r, 1, "header microbench.ranks (%lld) differs from hardware.ranks (%d)", (long long)x, run->ranks);
        run->ranks = (int)x;
        if (cJSON_IsNumber(get(mb, "reps"))) run->reps = get(mb, "reps")->valueint;
        return parse_cluster(r, h, run, 0);
    }

    const cJSON *pl = get(h, "plan");
    if (!cJSON_IsObject(pl)) return fail(r, 1, "header \"plan\" must be an object for a plan trace");
    int rc;
    if ((rc = parse_model(r, get(h, "model"), &run->model))) return rc;
    if ((rc = parse_workload(r, get(h, "workload"), &run->workload))) return rc;
    if ((rc = parse_layout(r, pl, &run->layout))) return rc;
    if (!run->ranks) run->ranks = (int)uly_layout_gpus(&run->layout);
    if (run->ranks != uly_layout_gpus(&run->layout))
        return fail(r, 1, "header hardware.ranks (%d) is not the layout's product of degrees (%lld)", run->ranks,
                    (long long)uly_layout_gpus(&run->layout));
    if ((rc = parse_cluster(r, h, run, 1))) return rc;
    uly_reason rs[ULY_MAX_REASONS];
    int nr = 0;
    uly_status st = uly_plan_build(&run->model, &run->workload, &run->cluster, &run->layout, &run->plan, rs, &nr);
    if (st != ULY_OK)
        return fail(r, 1, "libulysim cannot rebuild the header's plan: %s", uly_status_str(st));
    for (int i = 0; i < nr && i < ULY_MAX_REASONS; i++)
        if (rs[i].fatal) {
            char why[300];
            uly_reason_format(&rs[i], &run->model, why, sizeof why);
            return fail(r, 1, "the header's layout is not a valid plan for libulysim: %s", why);
        }
    if ((rc = compare_header_plan(r, pl, &run->plan))) return rc;
    return parse_exec_order(r, get(hx, "execution_order"), run->plan.n_ops);
}

/* ------------------------------------------------------------- op lines */

static int parse_op(rd *r, const cJSON *x, trace_run *run)
{
    const uly_plan *p = &run->plan;
    char b[64];
    const cJSON *idj = get(x, "id");
    if (!idj) return fail(r, r->line, "op line without \"id\"");
    if (!cJSON_IsNumber(idj) || !isfinite(idj->valuedouble) || idj->valuedouble != floor(idj->valuedouble))
        return fail(r, r->line, "op \"id\" must be an integer");
    if (idj->valuedouble < 0 || idj->valuedouble >= p->n_ops)
        return fail(r, r->line, "op id %.15g is not an op of the plan (ids 0..%d)", idj->valuedouble, p->n_ops - 1);
    const int id = (int)idj->valuedouble;
    const uly_op *q = &p->ops[id];
    trace_op *o = &run->ops[id];
    if (o->present) return fail(r, r->line, "op id %d (%s) appears twice (first at line %d)", id, uly_op_type_name(q->type), o->line);
    struct {
        const char *key, *want;
    } f[] = {{"name", uly_op_type_name(q->type)},
             {"phase", uly_phase_name(q->phase)},
             {"kind", uly_op_kind_name(q->kind)},
             {"coll", uly_coll_name(q->coll)},
             {"group", uly_group_name(q->group)}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        const char *s = str_of(x, f[i].key);
        if (!s && i >= 2 && !get(x, f[i].key)) continue; /* kind, coll, group may be omitted */
        if (!s || strcmp(s, f[i].want))
            return fail(r, r->line, "op id %d: %s \"%s\" does not match the plan's \"%s\"", id, f[i].key,
                        shown(s, b, sizeof b), f[i].want);
    }
    int64_t v;
    if (get(x, "group_size")) {
        if (get_int(r, x, "op", "group_size", 1, 1 << 24, &v)) return 2;
        if (v != q->group_size)
            return fail(r, r->line, "op id %d (%s): group_size %lld does not match the plan's %d", id, uly_op_type_name(q->type),
                        (long long)v, q->group_size);
    }
    if (get_int(r, x, "op", "bytes_sent", 0, INT64_C(1) << 62, &o->bytes_sent)) return 2;
    o->bytes_planned = q->bytes_sent;
    if (get(x, "bytes_planned")) {
        if (get_int(r, x, "op", "bytes_planned", 0, INT64_C(1) << 62, &v)) return 2;
        if (v != q->bytes_sent)
            return fail(r, r->line, "op id %d (%s): bytes_planned %lld is not the plan's %lld bytes", id, uly_op_type_name(q->type),
                        (long long)v, (long long)q->bytes_sent);
    }
    if (get_time(r, x, &o->t, &o->reps)) return 2;
    /* version 2: a transfer's time split into waiting for the peers and the
     * transfer proper; version 1 has no split (all of it counts as transfer) */
    o->wait = (trace_time){0, 0, 0};
    o->xfer = o->t;
    o->has_split = 0;
    if (run->version >= 2 && q->kind == ULY_OP_COMM) {
        if (get_stats(r, x, "wait_s", &o->wait) || get_stats(r, x, "transfer_s", &o->xfer)) return 2;
        o->has_split = 1;
    }
    o->overlaps = -1;
    const char *ti = str_of(x, "time_is");
    if (ti && strcmp(ti, "exposed"))
        return fail(r, r->line, "op id %d: \"time_is\" = \"%s\": versions 1 and 2 know only \"exposed\"", id, shown(ti, b, sizeof b));
    if (get(x, "overlaps")) {
        if (get_int(r, x, "op", "overlaps", -2, ULY_PLAN_MAX_OPS, &v)) return 2;
        if (v != q->overlaps)
            return fail(r, r->line, "op id %d (%s): overlaps %lld does not match the plan's %d", id, uly_op_type_name(q->type),
                        (long long)v, q->overlaps);
        o->overlaps = (int)v;
    }
    o->exposed = ti != NULL;
    if (o->exposed && q->overlaps < 0)
        return fail(r, r->line, "op id %d (%s): time_is \"exposed\" but the plan's op overlaps nothing", id, uly_op_type_name(q->type));
    o->present = 1;
    o->line = r->line;
    run->order[run->n_order++] = id;
    return 0;
}

/* The overlap micro-benchmark's line (version 2): overlap and slowdown in
 * [0, 1], the times it came from */
static int parse_overlap(rd *r, const cJSON *x, trace_run *run)
{
    static const char *const k[6] = {"overlap", "slowdown", "transfer_s", "compute_s", "both_compute_s", "both_wait_s"};
    double v[6];
    for (int i = 0; i < 6; i++) {
        const cJSON *y = get(x, k[i]);
        const double hi = i < 2 ? 1 : 1e6;
        if (!cJSON_IsNumber(y) || !isfinite(y->valuedouble) || y->valuedouble < 0 || y->valuedouble > hi)
            return fail(r, r->line, "overlap line: \"%s\" must be a number in [0, %g]", k[i], hi);
        v[i] = y->valuedouble;
    }
    run->has_overlap = 1;
    run->overlap = v[0];
    run->overlap_slowdown = v[1];
    run->overlap_transfer_s = v[2];
    run->overlap_compute_s = v[3];
    return 0;
}

static int parse_point(rd *r, const cJSON *x, trace_run *run, int cap)
{
    if (run->n_points >= cap) return fail(r, r->line, "more than %d micro-benchmark lines", TRACE_MAX_POINTS);
    trace_point *pt = &run->points[run->n_points];
    memset(pt, 0, sizeof *pt);
    pt->line = r->line;
    char b[64];
    const char *c = NULL;
    if (get_str(r, x, "microbench line", "coll", &c)) return 2;
    copy_str(pt->coll_name, sizeof pt->coll_name, c);
    if (!strcmp(c, "allreduce_mpi")) pt->coll = ULY_COLL_NONE;
    else if (coll_parse(c, &pt->coll) || pt->coll == ULY_COLL_NONE)
        return fail(r, r->line, "microbench \"coll\" = \"%s\": must be alltoall, allgather, reduce_scatter, allreduce, "
                                "allreduce_mpi or sendrecv",
                    shown(c, b, sizeof b));
    int64_t v;
    if (get_int(r, x, "microbench line", "group_size", 2, 1 << 24, &v)) return 2;
    pt->group_size = (int)v;
    if (get_int(r, x, "microbench line", "size_bytes", 1, INT64_C(1) << 50, &pt->size_bytes)) return 2;
    if (get_int(r, x, "microbench line", "bytes_sent", 0, INT64_C(1) << 50, &pt->bytes_sent)) return 2;
    if (get(x, "count") && get_int(r, x, "microbench line", "count", 0, INT64_C(1) << 50, &pt->count)) return 2;
    if (get_time(r, x, &pt->t, &pt->reps)) return 2;
    /* a point twice would count twice in calibrate's fit */
    for (int i = 0; i < run->n_points; i++) {
        const trace_point *q = &run->points[i];
        if (!strcmp(q->coll_name, pt->coll_name) && q->group_size == pt->group_size && q->size_bytes == pt->size_bytes)
            return fail(r, r->line, "microbench point (%s, %lld bytes, %d ranks) appears twice (first at line %d)",
                        pt->coll_name, (long long)pt->size_bytes, pt->group_size, q->line);
    }
    run->n_points++;
    return 0;
}

static int parse_summary(rd *r, const cJSON *x, trace_run *run)
{
    run->ok = cJSON_IsTrue(get(x, "ok"));
    run->bytes_ok = get(x, "bytes_ok") ? cJSON_IsTrue(get(x, "bytes_ok")) : run->ok;
    const cJSON *ck = get(x, "check");
    run->check_ok = ck ? cJSON_IsTrue(get(ck, "ok")) : 1;
    run->check_skipped = ck ? cJSON_IsTrue(get(ck, "skipped")) : 0;
    const cJSON *w = get(x, "wall_s");
    run->wall_s = cJSON_IsNumber(w) ? w->valuedouble : 0;
    if (!cJSON_IsBool(get(x, "ok"))) return fail(r, r->line, "summary \"ok\" must be true or false");
    return 0;
}

/* ----------------------------------------------------------------- main */

int trace_read(const char *path, trace_run *run, char *why, size_t why_len)
{
    memset(run, 0, sizeof *run);
    snprintf(run->path, sizeof run->path, "%s", path);
    if (why && why_len) why[0] = 0;
    rd r = {.path = run->path, .why = why, .why_len = why_len, .line = 0};
    char *text = NULL;
    size_t len = 0;
    int rc = read_file(&r, &text, &len);
    if (rc) return rc;
    if (len == 0) {
        free(text);
        return fail(&r, 1, "empty file: a trace starts with a header line");
    }
    /* count lines: the file must end with a newline */
    int n_lines = 0;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n') n_lines++;
    const int last_nl = text[len - 1] == '\n';
    const int total = n_lines + (last_nl ? 0 : 1);
    run->n_lines = total;

    int cap = 0;
    size_t pos = 0;
    int seen_summary = 0;
    for (int ln = 1; ln <= total && rc == 0; ln++) {
        r.line = ln;
        char *s = text + pos;
        char *nl = memchr(s, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - s) : len - pos;
        pos += n + 1;
        if (!nl) {
            /* a last line without its newline: the writer stopped mid-line */
            rc = fail(&r, ln, "truncated: the last line has no newline (the trace was cut short%s)",
                      seen_summary ? "" : " before its summary line");
            break;
        }
        if (seen_summary) {
            rc = fail(&r, ln, "line after the summary line %d: the summary is the last line", ln - 1);
            break;
        }
        cJSON *x = NULL;
        rc = parse_line(&r, s, n, &x);
        if (rc) break;
        if (ln == 1) {
            rc = parse_header(&r, x, run);
            if (!rc && run->kind == TRACE_MICROBENCH) {
                cap = total < TRACE_MAX_POINTS ? total : TRACE_MAX_POINTS;
                run->points = calloc((size_t)cap + 1, sizeof *run->points);
                if (!run->points) rc = 1;
            }
            cJSON_Delete(x);
            continue;
        }
        const char *ty = str_of(x, "type");
        char b[64];
        r.line = ln;
        if (ty && !strcmp(ty, "summary")) {
            rc = parse_summary(&r, x, run);
            seen_summary = ln;
        } else if (run->kind == TRACE_PLAN && ty && !strcmp(ty, "op")) {
            rc = parse_op(&r, x, run);
        } else if (run->kind == TRACE_MICROBENCH && ty && !strcmp(ty, "microbench")) {
            rc = parse_point(&r, x, run, cap);
        } else if (run->kind == TRACE_MICROBENCH && ty && !strcmp(ty, "overlap") && run->version >= 2) {
            rc = parse_overlap(&r, x, run);
        } else {
            rc = fail(&r, ln, "line \"type\" = \"%s\": a %s trace has \"%s\" lines and a final \"summary\"",
                      shown(ty, b, sizeof b), run->kind == TRACE_PLAN ? "plan" : "microbench",
                      run->kind == TRACE_PLAN ? "op" : "microbench");
        }
        cJSON_Delete(x);
    }
    free(text);
    if (rc) return rc;
    if (!seen_summary)
        return fail(&r, total, "truncated: the trace ends without its summary line (the run did not finish)");
    if (run->kind == TRACE_PLAN) {
        for (int i = 0; i < run->plan.n_ops; i++)
            if (!run->ops[i].present)
                return fail(&r, seen_summary, "plan op %d (%s, %s) has no op line before the summary", i,
                            uly_op_type_name(run->plan.ops[i].type), uly_phase_name(run->plan.ops[i].phase));
        /* every op has its line: now they must come in the header's execution order */
        for (int k = 0; k < r.n_exec_order; k++)
            if (run->order[k] != r.exec_order[k]) {
                const int id = run->order[k];
                return fail(&r, run->ops[id].line,
                            "op id %d (%s) out of execution order: harness.execution_order has op %d here "
                            "(op lines come in execution order)", id, uly_op_type_name(run->plan.ops[id].type),
                            r.exec_order[k]);
            }
    } else if (run->n_points == 0) {
        return fail(&r, seen_summary, "a microbench trace without micro-benchmark lines");
    }
    return 0;
}

void trace_free(trace_run *run)
{
    if (!run) return;
    free(run->cluster_text);
    free(run->points);
    run->cluster_text = NULL;
    run->points = NULL;
}

int trace_cluster_for(const trace_run *run, const char *profile, uly_cluster *out, char *why, size_t why_len)
{
    if (!profile) {
        if (!run->cluster_text) {
            snprintf(why, why_len, "%s:1: the header embeds no cluster preset; give --cluster", run->path);
            return 2;
        }
        *out = run->cluster;
    } else {
        if (sim_cluster_load(profile, out, why, why_len)) return 2;
    }
    out->nodes = run->used_nodes;
    out->gpus_per_node = run->used_gpn;
    if (out->gpus_per_leaf < out->gpus_per_node) out->gpus_per_leaf = out->gpus_per_node;
    return 0;
}
