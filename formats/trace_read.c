/* trace_read.c: the trace reader (see trace_read.h and traces/FORMAT.md):
 * the file, its lines, the op, overlap, micro-benchmark and summary lines;
 * the header line is trace_header.c's, what both share trace_internal.h's.
 * Every message is one line "PATH:LINE: what is wrong [; what is valid]". */
#define _POSIX_C_SOURCE 200809L
#include "trace_read.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preset.h"
#include "trace_internal.h"

/* A measured time in seconds: 0, or in [TRACE_MIN_TIME_S, TRACE_MAX_TIME_S]
 * (trace_read.h says why the floor). 0 or 2 after the message naming the
 * member (what: "time_s.median", after prefix: "" or "overlap line: "). */
static int time_value(rd *r, const cJSON *y, const char *prefix, const char *what, double *out)
{
    if (!cJSON_IsNumber(y) || !isfinite(y->valuedouble) || y->valuedouble < 0 || y->valuedouble > TRACE_MAX_TIME_S)
        return fail(r, r->line, "%s\"%s\" must be a number of seconds in [0, %g]", prefix, what, TRACE_MAX_TIME_S);
    const double v = y->valuedouble;
    if (v > 0 && v < TRACE_MIN_TIME_S)
        return fail(r, r->line, "%s\"%s\" = %g s: above 0 but below any clock's resolution, not a measured time "
                                "(valid: 0, or seconds in [%g, %g])", prefix, what, v, TRACE_MIN_TIME_S,
                    TRACE_MAX_TIME_S);
    *out = v;
    return 0;
}

/* A time member (time_s, wait_s, transfer_s): {median, min, max}, each a
 * measured time (time_value), min <= median <= max. */
static int get_stats(rd *r, const cJSON *o, const char *key, trace_time *t)
{
    const cJSON *x = get(o, key);
    if (!cJSON_IsObject(x)) return fail(r, r->line, "\"%s\" must be an object {median, min, max}", key);
    double v[3];
    static const char *k[3] = {"median", "min", "max"};
    for (int i = 0; i < 3; i++) {
        char what[64];
        snprintf(what, sizeof what, "%s.%s", key, k[i]);
        if (time_value(r, get(x, k[i]), "", what, &v[i])) return 2;
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

double trace_coll_volume_factor(uly_coll c, int p)
{
    if (c == ULY_COLL_SENDRECV) return 1.0;
    if (c == ULY_COLL_ALLREDUCE || c == ULY_COLL_NONE) return 2.0 * (p - 1) / p;
    return (double)(p - 1) / p;
}

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
        /* cJSON stops at CJSON_NESTING_LIMIT levels, a limit and not a
         * syntax error: say so (the depth counted outside strings) */
        int depth = 0, in_str = 0;
        for (size_t k = 0; k < n && depth < CJSON_NESTING_LIMIT; k++) {
            const char ch = s[k];
            if (in_str) {
                if (ch == '\\') k++;
                else if (ch == '"') in_str = 0;
            } else if (ch == '"') {
                in_str = 1;
            } else if (ch == '{' || ch == '[') {
                if (++depth == CJSON_NESTING_LIMIT) col = (long)k + 1;
            } else if (ch == '}' || ch == ']') {
                depth--;
            }
        }
        if (depth >= CJSON_NESTING_LIMIT)
            return fail(r, r->line, "nesting %d levels deep at column %ld: a trace line's objects and arrays are a "
                                    "few levels deep (at most %d read)",
                        CJSON_NESTING_LIMIT, col, CJSON_NESTING_LIMIT - 1);
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
    /* cJSON reads "05" as 5 and "1." as 1: not JSON, so not a trace (a
     * strict reader elsewhere would refuse the same file) */
    size_t tok = 0;
    const size_t badnum = js_number_bad(s, n, &tok);
    if (badnum < n) {
        cJSON_Delete(j);
        return fail(r, r->line, "malformed number \"%.*s\" at column %zu (valid: a JSON number: no leading zero, "
                                "digits after the point, e.g. 5, 0.5, 1e-3)",
                    (int)(tok < 24 ? tok : 24), s + badnum, badnum + 1);
    }
    char dup[300];
    if (js_dup_key(j, "", dup, sizeof dup)) { /* the reader would take the first and ignore the second */
        cJSON_Delete(j);
        return fail(r, r->line, "key \"%s\" appears twice: give each key once", dup);
    }
    *out = j;
    return 0;
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
        /* both are parts of time_s, rep by rep on each rank (traces/FORMAT.md:
         * "transfer_s = time - wait", the wait an MPI_Barrier inside the
         * op's time), and a median, minimum or maximum of parts is at most
         * the same statistic of the wholes: a part above its whole is no
         * measurement (validate would count it in the step) */
        static const char *const st[3] = {"median", "min", "max"};
        static const char *const pk[2] = {"wait_s", "transfer_s"};
        const trace_time *part[2] = {&o->wait, &o->xfer};
        const double w3[3] = {o->t.median, o->t.min, o->t.max};
        for (int p2 = 0; p2 < 2; p2++)
            for (int i = 0; i < 3; i++) {
                const double a3[3] = {part[p2]->median, part[p2]->min, part[p2]->max};
                const double a = a3[i], w = w3[i];
                if (a > w * (1 + 1e-9) + 1e-15)
                    return fail(r, r->line, "op id %d (%s): %s.%s %g s exceeds time_s.%s %g s (valid: %s.%s <= "
                                            "time_s.%s: %s is part of the op's time, transfer_s = time - wait, "
                                            "traces/FORMAT.md)",
                                id, uly_op_type_name(q->type), pk[p2], st[i], a, st[i], w, pk[p2], st[i], st[i],
                                pk[p2]);
            }
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
        if (i >= 2) { /* the times: measured times, as an op's */
            if (time_value(r, y, "overlap line: ", k[i], &v[i])) return 2;
            continue;
        }
        if (!cJSON_IsNumber(y) || !isfinite(y->valuedouble) || y->valuedouble < 0 || y->valuedouble > 1)
            return fail(r, r->line, "overlap line: \"%s\" must be a number in [0, 1]", k[i]);
        v[i] = y->valuedouble;
    }
    /* the hop it measured: a hop of no bytes overlaps nothing, and its
     * "overlap" would still go into a profile (calibrate) */
    int64_t size;
    if (get(x, "size_bytes") && get_int(r, x, "overlap line", "size_bytes", 1, INT64_C(1) << 50, &size)) return 2;
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
    /* bytes_sent is what the collective's algorithm sends per rank for
     * size_bytes (traces/FORMAT.md): (p-1)/p of it for alltoall, allgather
     * and reduce_scatter, 2(p-1)/p for the all-reduces, all of it for
     * sendrecv; the harness rounds each rank's block down to whole elements,
     * at most 2(p-1) elements of at most 8 bytes off. A point that says
     * otherwise would fit calibrate's bandwidth to a volume never sent. */
    {
        const double p = (double)pt->group_size, size = (double)pt->size_bytes;
        const double f = trace_coll_volume_factor(pt->coll, pt->group_size);
        const double want = f * size, slack = 16.0 * (p - 1.0);
        if (fabs((double)pt->bytes_sent - want) > slack)
            return fail(r, r->line,
                        "microbench \"bytes_sent\" = %lld for %s of %lld bytes over %d ranks: want %.0f (%s of "
                        "size_bytes, give or take whole elements)",
                        (long long)pt->bytes_sent, pt->coll_name, (long long)pt->size_bytes, pt->group_size, want,
                        pt->coll == ULY_COLL_SENDRECV ? "all" : f > (p - 1.0) / p ? "2(p-1)/p" : "(p-1)/p");
    }
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

/* A summary boolean that may be absent: 0 (*v untouched when absent) or 2. */
static int summary_bool(rd *r, const cJSON *o, const char *what, const char *k, int *v)
{
    const cJSON *b = get(o, k);
    if (!b) return 0;
    if (!cJSON_IsBool(b)) return fail(r, r->line, "summary \"%s\" must be true or false", what);
    *v = cJSON_IsTrue(b);
    return 0;
}

static int parse_summary(rd *r, const cJSON *x, trace_run *run)
{
    run->summary_line = r->line;
    if (!cJSON_IsBool(get(x, "ok"))) return fail(r, r->line, "summary \"ok\" must be true or false");
    run->ok = cJSON_IsTrue(get(x, "ok"));
    run->bytes_ok = run->check_ok = 1; /* absent: not said to have failed */
    run->check_skipped = 0;
    const cJSON *ck = get(x, "check");
    if (ck && !cJSON_IsObject(ck)) return fail(r, r->line, "summary \"check\" must be an object");
    if (summary_bool(r, x, "bytes_ok", "bytes_ok", &run->bytes_ok) ||
        (ck && (summary_bool(r, ck, "check.ok", "ok", &run->check_ok) ||
                summary_bool(r, ck, "check.skipped", "skipped", &run->check_skipped))))
        return 2;
    /* traces/FORMAT.md: "ok is bytes_ok and check.ok" (a skipped check
     * passes nothing and fails nothing): a summary that says otherwise
     * contradicts itself, and which of its words is the run's is unknown */
    r->bytes_ok_said = get(x, "bytes_ok") != NULL;
    const int want = run->bytes_ok && (run->check_skipped || run->check_ok);
    if ((get(x, "bytes_ok") || (ck && get(ck, "ok"))) && run->ok != want)
        return fail(r, r->line, "summary \"ok\" is %s but \"bytes_ok\" is %s and \"check\" %s (valid: ok = "
                                "bytes_ok and check.ok, traces/FORMAT.md)",
                    run->ok ? "true" : "false", run->bytes_ok ? "true" : "false",
                    run->check_skipped ? "was skipped" : run->check_ok ? "passed" : "failed");
    /* the op lines the run wrote (checked against them once the plan's
     * own checks have named a missing line) */
    if (run->kind == TRACE_PLAN && get(x, "ops") &&
        get_int(r, x, "summary", "ops", 0, ULY_PLAN_MAX_OPS, &r->summary_ops))
        return 2;
    const cJSON *w = get(x, "wall_s");
    run->wall_s = cJSON_IsNumber(w) ? w->valuedouble : 0;
    return 0;
}

/* A plan trace read whole: every op has its line, in the header's
 * execution order, as many as the summary counts, and something was
 * timed. 0, or 2 after the message. */
static int plan_complete(rd *r, const trace_run *run, int seen_summary)
{
    for (int i = 0; i < run->plan.n_ops; i++)
        if (!run->ops[i].present)
            return fail(r, seen_summary, "plan op %d (%s, %s) has no op line before the summary", i,
                        uly_op_type_name(run->plan.ops[i].type), uly_phase_name(run->plan.ops[i].phase));
    /* every op has its line: now they must come in the header's execution order */
    for (int k = 0; k < r->n_exec_order; k++)
        if (run->order[k] != r->exec_order[k]) {
            const int id = run->order[k];
            return fail(r, run->ops[id].line,
                        "op id %d (%s) out of execution order: harness.execution_order has op %d here "
                        "(op lines come in execution order)", id, uly_op_type_name(run->plan.ops[id].type),
                        r->exec_order[k]);
        }
    /* a summary that counts other op lines than the file has is not
     * this file's: lines lost or added, by hand or by a tool */
    if (r->summary_ops >= 0 && r->summary_ops != run->n_order)
        return fail(r, seen_summary, "summary \"ops\" = %lld, but the trace has %d op lines (valid: the number "
                                      "of op lines, one per plan op)", (long long)r->summary_ops, run->n_order);
    /* bytes that differ from the plan are data (validate reports them), but
     * a summary saying "bytes_ok": true over an op line that differs
     * contradicts itself: which one is the run's is unknown */
    for (int k = 0; r->bytes_ok_said && run->bytes_ok && k < run->n_order; k++) {
        const trace_op *o = &run->ops[run->order[k]];
        if (o->bytes_sent != o->bytes_planned)
            return fail(r, o->line, "op id %d (%s): bytes_sent %lld is not bytes_planned %lld, but the summary on "
                                    "line %d says \"bytes_ok\": true (valid: bytes_ok false, or the planned bytes)",
                        run->order[k], uly_op_type_name(run->plan.ops[run->order[k]].type), (long long)o->bytes_sent,
                        (long long)o->bytes_planned, run->summary_line);
    }
    /* the measured step as validate works it out (sim/trace/trace_join.c: per
     * layer op, a transfer's transfer_s plus its wait_s, another op's
     * time_s; the slowest rank's where the plan gives the ranks different
     * work, else the median rank's): nothing timed, nothing to compare a
     * prediction with; trace check says so as validate does */
    double step = 0;
    for (int k = 0; k < run->n_order; k++) {
        const int id = run->order[k];
        const uly_op *o = &run->plan.ops[id];
        if (o->per_model || o->per_step) continue;
        double wait;
        step += trace_op_measured_s(run, id, &wait) + wait;
    }
    if (!(step > 0))
        return fail(r, 0, "its layer ops' measured times add up to 0 s: nothing was timed, nothing to compare a "
                           "prediction against (valid: the trace of a timed run)");
    return 0;
}

/* ----------------------------------------------------------------- main */

int trace_read(const char *path, trace_run *run, char *why, size_t why_len)
{
    memset(run, 0, sizeof *run);
    snprintf(run->path, sizeof run->path, "%s", path);
    if (why && why_len) why[0] = 0;
    rd r = {.path = run->path, .why = why, .why_len = why_len, .line = 0, .summary_ops = -1};
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
            /* a last line without its newline: the writer stopped mid-line;
             * unless its lines end in CR alone (a classic Mac OS text file,
             * or a CR-only conversion): then they all run together here */
            const char *cr = memchr(s, '\r', n);
            if (cr && cr + 1 < s + n)
                rc = fail(&r, ln, "line ends of CR alone (column %ld): a trace's lines end in LF or CR LF",
                          (long)(cr - s) + 1);
            else
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
            rc = trace_header_parse(&r, x, run);
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
    if (run->kind == TRACE_PLAN) return plan_complete(&r, run, seen_summary);
    if (run->n_points == 0) return fail(&r, seen_summary, "a microbench trace without micro-benchmark lines");
    return 0;
}

double trace_op_measured_s(const trace_run *run, int id, double *wait_s)
{
    const uly_op *o = &run->plan.ops[id];
    const trace_op *m = &run->ops[id];
    const int comm = o->kind == ULY_OP_COMM;
    const trace_time *mt = comm ? &m->xfer : &m->t;
    const int crit = o->crit_factor > 1.0 + 1e-9 && mt->max > 0;
    *wait_s = comm ? (crit ? m->wait.max : m->wait.median) : 0;
    return crit ? mt->max : mt->median;
}

int trace_require_passed(const trace_run *run, const char *use, char *why, size_t why_len)
{
    if (run->ok) return 0;
    const int result = !run->check_skipped && !run->check_ok, bytes = !run->bytes_ok;
    snprintf(why, why_len, "%s:%d: the summary says the run FAILED its checks (%s%s%s%s): the times of a wrong run "
             "are no evidence for %s (valid: the trace of a run that passed its checks; ulysim trace check reads "
             "this one)", run->path, run->summary_line, result ? "its result differs from the float64 reference" : "",
             result && bytes ? "; " : "", bytes ? "its bytes differ from the plan" : "",
             !result && !bytes ? "\"ok\": false" : "", use);
    for (char *p = why; *p; p++)
        if ((unsigned char)*p < 0x20) *p = '?';
    return 2;
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
        if (preset_cluster_load(profile, out, why, why_len)) return 2;
    }
    out->nodes = run->used_nodes;
    out->gpus_per_node = run->used_gpn;
    if (out->gpus_per_leaf < out->gpus_per_node) out->gpus_per_leaf = out->gpus_per_node;
    return 0;
}
