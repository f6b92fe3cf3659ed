/* ops_check: end-to-end checks of the plan's per-operation outputs.
 *
 *   ops_check flops ULYSIM ARGS...   the table's operations block carries, for
 *                                    each compute op, GFLOP equal to the JSON's
 *                                    "flops" / 1e9 and TFLOPs equal to flops /
 *                                    time_s / 1e12 (worked out here from the
 *                                    JSON, not read from the table's code);
 *                                    communication ops leave both "-".
 *   ops_check timeline FILE ULYSIM ARGS...
 *                                    `ULYSIM ARGS --timeline FILE` writes one
 *                                    JSON document of Chrome trace events: two
 *                                    named processes; process 1's thread 1 (the
 *                                    critical path) sums to the JSON plan's
 *                                    per_layer fwd_s + bwd_s, process 2's to
 *                                    step.time_s; slices on one thread never
 *                                    overlap; each in-flight transfer lasts its
 *                                    op's time_s and each exposed wait its
 *                                    exposed_s (the JSON's operations).
 *
 * The table and the JSON come from two runs of the same arguments. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "runner.h"

#define TIMEOUT_S 60.0

static int fails;

static void expect(int ok, const char *fmt, const char *a, double x, double y)
{
    if (ok) return;
    fails++;
    fprintf(stderr, "FAIL: ");
    fprintf(stderr, fmt, a, x, y);
    fputc('\n', stderr);
}

/* Runs ULYSIM ARGS [extra...]; the output in *o. Exits 1 when it fails. */
static void run_with(char **argv, int argc, const char *const *extra, int n_extra, run_out *o)
{
    char **v = calloc((size_t)(argc + n_extra + 1), sizeof *v);
    if (!v) exit(1);
    for (int i = 0; i < argc; i++) v[i] = argv[i];
    for (int i = 0; i < n_extra; i++) v[argc + i] = (char *)extra[i];
    if (run_cmd(v, TIMEOUT_S, o) != 0 || o->rc != 0) {
        fprintf(stderr, "cannot run %s (rc %d): %s\n", argv[0], o->rc, o->err ? o->err : "");
        exit(1);
    }
    free(v);
}

/* The table's operations block: the header line's column index of name. */
static int column_of(const char *header, const char *name)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", header + 1); /* past '#' */
    int i = 0;
    for (char *t = strtok(buf, " \n"); t; t = strtok(NULL, " \n"), i++)
        if (!strcmp(t, name)) return i;
    return -1;
}

static int check_flops(int argc, char **argv)
{
    static const char *const as_json[] = {"--format", "json"};
    run_out tab, js;
    run_with(argv, argc, NULL, 0, &tab);
    run_with(argv, argc, as_json, 2, &js);
    cJSON *root = cJSON_Parse(js.out);
    const cJSON *ops = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "operations"), "ops");
    if (!cJSON_IsArray(ops)) {
        fprintf(stderr, "FAIL: no operations.ops in the JSON\n");
        return 1;
    }
    const char *h = strstr(tab.out, "\n# id ");
    if (!h) {
        fprintf(stderr, "FAIL: no operations header in the table\n");
        return 1;
    }
    h++;
    int c_id = column_of(h, "id"), c_gf = column_of(h, "GFLOP"), c_tf = column_of(h, "TFLOPs");
    if (c_id != 0 || c_gf < 0 || c_tf < 0) {
        fprintf(stderr, "FAIL: the operations header lacks id, GFLOP or TFLOPs: %.200s\n", h);
        return 1;
    }
    int rows = 0, compute = 0;
    const char *line = strchr(h, '\n');
    while (line && line[1] && line[1] != '#') {
        line++;
        const char *end = strchr(line, '\n');
        char buf[1024];
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len >= sizeof buf) len = sizeof buf - 1;
        memcpy(buf, line, len);
        buf[len] = 0;
        char *cells[32];
        int n = 0;
        for (char *t = strtok(buf, " "); t && n < 32; t = strtok(NULL, " ")) cells[n++] = t;
        if (n <= c_tf) break;
        int id = atoi(cells[c_id]);
        const cJSON *op = NULL;
        cJSON *it;
        cJSON_ArrayForEach(it, ops) if (cJSON_GetObjectItem(it, "id")->valueint == id) op = it;
        if (!op) {
            fprintf(stderr, "FAIL: table op %d is not in the JSON\n", id);
            return 1;
        }
        const char *kind = cJSON_GetObjectItem(op, "kind")->valuestring;
        const char *name = cJSON_GetObjectItem(op, "name")->valuestring;
        rows++;
        if (!strcmp(kind, "comm")) {
            expect(!strcmp(cells[c_gf], "-") && !strcmp(cells[c_tf], "-"), "%s: a communication op shows FLOPs (%g %g)",
                   name, atof(cells[c_gf]), atof(cells[c_tf]));
        } else {
            compute++;
            double flops = cJSON_GetObjectItem(op, "flops")->valuedouble;
            double t = cJSON_GetObjectItem(op, "time_s")->valuedouble;
            double gf = atof(cells[c_gf]);
            expect(fabs(gf - flops / 1e9) <= 0.0005 + 1e-9 * flops / 1e9, "%s: GFLOP %g, the JSON's flops / 1e9 %g",
                   name, gf, flops / 1e9);
            if (flops > 0 && t > 0) {
                double want = flops / t / 1e12;
                expect(fabs(atof(cells[c_tf]) - want) <= 0.05 + 1e-6 * want, "%s: TFLOPs %g, flops / time %g", name,
                       atof(cells[c_tf]), want);
            } else {
                expect(!strcmp(cells[c_tf], "-"), "%s: TFLOPs shown for an op without FLOPs (%g, %g)", name,
                       atof(cells[c_tf]), flops);
            }
        }
        line = end;
    }
    if (rows != cJSON_GetArraySize(ops) || compute == 0) {
        fprintf(stderr, "FAIL: %d table rows (%d compute), %d JSON ops\n", rows, compute, cJSON_GetArraySize(ops));
        fails++;
    }
    printf("%d ops checked (%d compute), %d failures\n", rows, compute, fails);
    cJSON_Delete(root);
    run_free(&tab);
    run_free(&js);
    return fails ? 1 : 0;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *b = run_slurp(f, NULL);
    fclose(f);
    return b;
}

static const cJSON *op_by_id(const cJSON *ops, int id)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, ops) if (cJSON_GetObjectItem(it, "id")->valueint == id) return it;
    return NULL;
}

static double jd(const cJSON *o, const char *k) { return cJSON_GetNumberValue(cJSON_GetObjectItem(o, k)); }

static int near(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b) + 1e-6; }

static int check_timeline(const char *file, int argc, char **argv)
{
    const char *extra[] = {"--format", "json", "--timeline", file};
    run_out js;
    remove(file);
    run_with(argv, argc, extra, 4, &js);
    cJSON *plan = cJSON_Parse(js.out);
    char *text = slurp(file);
    cJSON *tl = text ? cJSON_Parse(text) : NULL;
    if (!plan || !tl) {
        fprintf(stderr, "FAIL: %s\n", !plan ? "the plan's JSON does not parse" : "the timeline is missing or not JSON");
        return 1;
    }
    const cJSON *rec = cJSON_GetArrayItem(cJSON_GetObjectItem(plan, "plans"), cJSON_GetObjectItem(plan, "recommended")->valueint);
    const cJSON *ops = cJSON_GetObjectItem(cJSON_GetObjectItem(plan, "operations"), "ops");
    const double layer_s = jd(cJSON_GetObjectItem(rec, "per_layer"), "fwd_s") + jd(cJSON_GetObjectItem(rec, "per_layer"), "bwd_s");
    const double step_s = jd(cJSON_GetObjectItem(rec, "step"), "time_s");
    const cJSON *ev = cJSON_GetObjectItem(tl, "traceEvents");
    if (!cJSON_IsArray(ev) || !ops) {
        fprintf(stderr, "FAIL: no traceEvents array, or no operations in the plan\n");
        return 1;
    }
    /* per (pid, tid): the sum of durations and the latest end, for overlap */
    double sum[3][32] = {{0}}, end[3][32] = {{0}};
    int named[3] = {0}, n_flight = 0, n_exposed = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, ev)
    {
        const char *ph = cJSON_GetStringValue(cJSON_GetObjectItem(e, "ph"));
        int pid = (int)jd(e, "pid"), tid = (int)jd(e, "tid");
        if (!ph || pid < 1 || pid > 2 || tid < 0 || tid >= 32) {
            fprintf(stderr, "FAIL: an event without ph, or pid %d / tid %d out of range\n", pid, tid);
            return 1;
        }
        if (!strcmp(ph, "M")) {
            if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e, "name")), "process_name")) named[pid] = 1;
            continue;
        }
        const double ts = jd(e, "ts") * 1e-6, dur = jd(e, "dur") * 1e-6;
        expect(ts >= end[pid][tid] - 1e-9 * (1 + ts) && dur >= 0, "%s: overlaps the slice before it on its thread (%g, %g)",
               cJSON_GetStringValue(cJSON_GetObjectItem(e, "name")), ts, end[pid][tid]);
        end[pid][tid] = ts + dur;
        sum[pid][tid] += dur;
        const char *cat = cJSON_GetStringValue(cJSON_GetObjectItem(e, "cat"));
        const cJSON *args = cJSON_GetObjectItem(e, "args");
        if (pid != 1 || !cJSON_GetObjectItem(args, "id")) continue;
        const cJSON *op = op_by_id(ops, (int)jd(args, "id"));
        if (!op) {
            fprintf(stderr, "FAIL: a slice names op %d, which the plan lacks\n", (int)jd(args, "id"));
            return 1;
        }
        if (!strcmp(cat, "comm-overlapped")) {
            n_flight++;
            expect(tid >= 2 && near(dur, jd(op, "time_s")), "%s: in flight for %g s, the op's time is %g s",
                   cJSON_GetStringValue(cJSON_GetObjectItem(e, "name")), dur, jd(op, "time_s"));
        } else if (!strcmp(cat, "comm-exposed")) {
            n_exposed++;
            expect(tid == 1 && near(dur, jd(op, "exposed_s")), "%s: exposed for %g s, the op's exposed part is %g s",
                   cJSON_GetStringValue(cJSON_GetObjectItem(e, "name")), dur, jd(op, "exposed_s"));
        } else {
            expect(tid == 1 && near(dur, jd(op, "time_s")), "%s: lasts %g s on the critical path, the op %g s",
                   cJSON_GetStringValue(cJSON_GetObjectItem(e, "name")), dur, jd(op, "time_s"));
        }
    }
    expect(named[1] && named[2], "%s: process names %g and %g", "the timeline", named[1], named[2]);
    expect(near(sum[1][1], layer_s), "%s: the layer's critical path sums to %g s, the plan says %g s", "process 1",
           sum[1][1], layer_s);
    expect(near(sum[2][1], step_s), "%s: the step's critical path sums to %g s, the plan says %g s", "process 2",
           sum[2][1], step_s);
    printf("timeline: layer %.6g s (plan %.6g s), step %.6g s (plan %.6g s), %d transfers in flight, %d exposed waits, "
           "%d failures\n",
           sum[1][1], layer_s, sum[2][1], step_s, n_flight, n_exposed, fails);
    cJSON_Delete(plan);
    cJSON_Delete(tl);
    free(text);
    run_free(&js);
    return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "flops")) return check_flops(argc - 2, argv + 2);
    if (argc >= 4 && !strcmp(argv[1], "timeline")) return check_timeline(argv[2], argc - 3, argv + 3);
    fprintf(stderr, "usage: ops_check flops ULYSIM ARGS... | ops_check timeline FILE ULYSIM ARGS...\n");
    return 2;
}
