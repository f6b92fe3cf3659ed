/* test_trace_reject: broken copies of a good plan trace must be rejected by
 * the trace reader (formats/trace_read.c) and by `ulysim validate`,
 * with exit status 2 and one line naming the file and the offending line.
 *
 *   test_trace_reject GOOD.trace OUTDIR ULYSIM
 *
 * Cases: truncated mid-line, truncated before the summary, another version,
 * another format, malformed JSON, an unknown op id, a duplicate op line, an
 * op line without id, an op line whose name or collective is not the plan's,
 * bytes that are not UTF-8 (an op line, the header), a key given twice,
 * a missing op line, two op lines out of execution order, a header plan libulysim rebuilds differently,
 * arrays nested past cJSON's limit, lines ending in CR alone, a number
 * that is not JSON's ("05", "1."), a transfer_s or wait_s above its
 * time_s, a summary whose ok contradicts bytes_ok, a summary "ops" or a
 * header plan.n_ops other than the op count; then a trace whose measured
 * bytes differ (read fine; validate exits 1), the good trace itself (read
 * fine), a copy whose summary says the run failed its checks (read, trace
 * check says so; validate exits 2), and copies with every time 0 and
 * 1e-300 s (refused by the reader, trace check and validate alike: nothing
 * timed, or a time no clock measures) and at the 1e-10 s floor (read;
 * validate's output has no inf or nan). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "trace_read.h"

static char **lines;
static int n_lines;
static const char *outdir, *ulysim;
static int failures;

static void load(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int cap_l = 0;
    while ((len = getline(&line, &cap, fp)) >= 0) {
        if (len > 0 && line[len - 1] == '\n') line[len - 1] = 0;
        if (n_lines == cap_l) {
            cap_l = cap_l ? 2 * cap_l : 64;
            lines = realloc(lines, sizeof *lines * (size_t)cap_l);
        }
        lines[n_lines++] = strdup(line);
    }
    free(line);
    fclose(fp);
}

/* first op line whose text contains needle (1-based line number), or the first op line */
static int find_op(const char *needle)
{
    for (int i = 1; i < n_lines - 1; i++)
        if (strstr(lines[i], "\"type\":\"op\"") && (!needle || strstr(lines[i], needle))) return i + 1;
    return 0;
}

/* replaces the first occurrence of a by b in s (new string) */
static char *replace(const char *s, const char *a, const char *b)
{
    const char *p = strstr(s, a);
    if (!p) {
        fprintf(stderr, "test setup: \"%s\" not found\n", a);
        exit(2);
    }
    size_t n = strlen(s) - strlen(a) + strlen(b) + 1;
    char *r = malloc(n);
    memcpy(r, s, (size_t)(p - s));
    strcpy(r + (p - s), b);
    strcat(r, p + strlen(a));
    return r;
}

typedef enum { M_NONE, M_SWAP, M_REPLACE, M_DROP, M_DUP, M_CUT, M_SET } mut_kind;

/* Writes OUTDIR/NAME.trace: the good lines with line `at` (1-based) changed. */
static void write_case(const char *path, mut_kind k, int at, const char *a, const char *b)
{
    FILE *fp = fopen(path, "wb");
    if (!fp) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
    for (int i = 0; i < n_lines; i++) {
        const int ln = i + 1;
        if (ln == at && k == M_DROP) continue;
        if (ln == at && k == M_CUT) { /* the writer stopped in the middle of this line */
            fwrite(lines[i], 1, strlen(lines[i]) / 2, fp);
            break;
        }
        if (ln == at && k == M_REPLACE) {
            char *r = replace(lines[i], a, b);
            fprintf(fp, "%s\n", r);
            free(r);
            continue;
        }
        if (ln == at && k == M_SET) {
            fprintf(fp, "%s\n", a);
            continue;
        }
        if (ln == at && k == M_SWAP && i + 1 < n_lines) { /* this line and the next change places */
            fprintf(fp, "%s\n%s\n", lines[i + 1], lines[i]);
            i++;
            continue;
        }
        fprintf(fp, "%s\n", lines[i]);
        if (ln == at && k == M_DUP) fprintf(fp, "%s\n", lines[i]);
    }
    fclose(fp);
}

static int run_validate(const char *path, char *err, size_t n)
{
    char cmd[16384], errf[4200];
    snprintf(errf, sizeof errf, "%s.stderr", path);
    snprintf(cmd, sizeof cmd, "'%s' validate '%s' --max-error none > /dev/null 2> '%s'", ulysim, path, errf);
    int st = system(cmd);
    err[0] = 0;
    FILE *fp = fopen(errf, "r");
    if (fp) {
        size_t got = fread(err, 1, n - 1, fp);
        err[got] = 0;
        fclose(fp);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The case: the reader returns want_rc with a message naming "path:line:"
 * and containing `what`; `ulysim validate` exits 2 with the same line (or 1
 * for want_rc 0 with validate_rc 1). */
static void check(const char *name, mut_kind k, int at, const char *a, const char *b, int want_line, const char *what,
                  int validate_rc)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.trace", outdir, name);
    write_case(path, k, at, a, b);
    static trace_run run;
    char why[2048];
    int rc = trace_read(path, &run, why, sizeof why);
    trace_free(&run);
    char want[4200];
    snprintf(want, sizeof want, "%s:%d: ", path, want_line);
    int ok = 1;
    if (validate_rc == 2) {
        if (rc != 2) {
            printf("FAIL %s: reader returned %d, want 2 (%s)\n", name, rc, why);
            ok = 0;
        } else if (!strstr(why, want) || !strstr(why, what) || strchr(why, '\n')) {
            printf("FAIL %s: message \"%s\" should name \"%s\" and say \"%s\" on one line\n", name, why, want, what);
            ok = 0;
        }
    } else if (rc != 0) {
        printf("FAIL %s: reader rejected it: %s\n", name, why);
        ok = 0;
    }
    char err[8192];
    int vrc = run_validate(path, err, sizeof err);
    if (vrc != validate_rc) {
        printf("FAIL %s: ulysim validate exited %d, want %d; stderr: %s\n", name, vrc, validate_rc, err);
        ok = 0;
    } else if (validate_rc == 2 && (!strstr(err, want) || !strstr(err, what))) {
        printf("FAIL %s: ulysim validate stderr \"%s\" should name \"%s\" and say \"%s\"\n", name, err, want, what);
        ok = 0;
    } else if (validate_rc == 1 && !strstr(err, what)) {
        printf("FAIL %s: ulysim validate stderr \"%s\" should say \"%s\"\n", name, err, what);
        ok = 0;
    }
    if (ok)
        printf("ok   %-22s %s\n", name,
               validate_rc == 2 ? why : validate_rc == 1 ? "read; ulysim validate exits 1 (bytes differ)" : "read and validated");
    else failures++;
}

/* s with the object value of member key ("transfer_s") replaced by obj (new string). */
static char *set_member(const char *s, const char *key, const char *obj)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":{", key);
    const char *p = strstr(s, k);
    if (!p) {
        fprintf(stderr, "test setup: %s not found\n", k);
        exit(2);
    }
    const char *e = strchr(p, '}');
    char *r = malloc(strlen(s) + strlen(obj) + 64);
    sprintf(r, "%.*s\"%s\":%s%s", (int)(p - s), s, key, obj, e + 1);
    return r;
}

/* Runs `ulysim ARGS 'path'` (stdout to path.out, stderr to err); the exit status. */
static int run_ulysim(const char *args, const char *path, char *err, size_t n)
{
    char cmd[16384], errf[4200];
    snprintf(errf, sizeof errf, "%s.stderr", path);
    snprintf(cmd, sizeof cmd, "'%s' %s '%s' > '%s.out' 2> '%s'", ulysim, args, path, path, errf);
    int st = system(cmd);
    err[0] = 0;
    FILE *fp = fopen(errf, "r");
    if (fp) {
        size_t got = fread(err, 1, n - 1, fp);
        err[got] = 0;
        fclose(fp);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Writes OUTDIR/NAME.trace with every op line's times made `to`; the path. */
static void write_times(const char *name, const char *to, char *path, size_t n);

/* Writes line to fp with every "median", "min" and "max" number made `to`. */
static void times_set(const char *line, FILE *fp, const char *to)
{
    static const char *const keys[] = {"\"median\":", "\"min\":", "\"max\":"};
    for (const char *p = line; *p;) {
        int hit = 0;
        for (int k = 0; k < 3 && !hit; k++) {
            const size_t kl = strlen(keys[k]);
            if (strncmp(p, keys[k], kl)) continue;
            fputs(keys[k], fp);
            fputs(to, fp);
            p += kl;
            while (*p && strchr("0123456789.eE+-", *p)) p++;
            hit = 1;
        }
        if (!hit) fputc(*p++, fp);
    }
    fputc('\n', fp);
}

static void write_times(const char *name, const char *to, char *path, size_t n)
{
    snprintf(path, n, "%s/%s.trace", outdir, name);
    FILE *fp = fopen(path, "wb");
    if (!fp) exit(2);
    for (int i = 0; i < n_lines; i++) {
        if (strstr(lines[i], "\"type\":\"op\"")) times_set(lines[i], fp, to);
        else fprintf(fp, "%s\n", lines[i]);
    }
    fclose(fp);
}

/* A file the reader, `ulysim trace check` and `ulysim validate` all refuse
 * (exit 2) with one line containing want (and the path). */
static void refused_by_all(const char *name, const char *path, const char *want)
{
    static trace_run run;
    char why[2048], err1[8192], err2[8192];
    const int rrc = trace_read(path, &run, why, sizeof why);
    trace_free(&run);
    const int crc = run_ulysim("trace check", path, err1, sizeof err1);
    const int vrc = run_validate(path, err2, sizeof err2);
    if (rrc != 2 || !strstr(why, want) || !strstr(why, path) || crc != 2 || !strstr(err1, want) || vrc != 2 ||
        !strstr(err2, want)) {
        printf("FAIL %s: reader %d (%s), trace check %d (%s), validate %d (%s); want 2 and \"%s\" from each\n", name,
               rrc, why, crc, err1, vrc, err2, want);
        failures++;
    } else {
        printf("ok   %-22s %s\n", name, why);
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: test_trace_reject GOOD.trace OUTDIR ULYSIM\n");
        return 2;
    }
    outdir = argv[2];
    ulysim = argv[3];
    load(argv[1]);
    if (n_lines < 4) {
        fprintf(stderr, "%s: too short for the test\n", argv[1]);
        return 2;
    }
    const int last = n_lines;        /* the summary line */
    const int op = find_op(NULL);    /* the first op line */
    const int op2 = op + 1;
    char buf[256];

    /* the good trace is read as is */
    check("good", M_NONE, 0, NULL, NULL, 0, "", 0);
    check("truncated_midline", M_CUT, op2, NULL, NULL, op2, "truncated: the last line has no newline", 2);
    check("truncated_nosummary", M_DROP, last, NULL, NULL, last - 1, "truncated: the trace ends without its summary", 2);
    check("version_99", M_REPLACE, 1, "\"version\":", "\"version\":99,\"v\":", 1, "trace format version 99", 2);
    /* version 2 (wait_s, transfer_s on comm ops); version 1 is still read, its
     * comm ops without the split */
    if (strstr(lines[0], "\"version\":2")) {
        check("version_1_read", M_REPLACE, 1, "\"version\":2", "\"version\":1", 0, "", 0);
        const int w = find_op("\"wait_s\":");
        if (!w) {
            fprintf(stderr, "a version 2 trace without wait_s on any op\n");
            failures++;
        } else {
            check("missing_wait", M_REPLACE, w, "\"wait_s\":", "\"wait_x\":", w, "\"wait_s\" must be an object", 2);
            check("bad_transfer", M_REPLACE, w, "\"transfer_s\":{\"median\":", "\"transfer_s\":{\"median\":-1,\"x\":", w,
                  "transfer_s.median", 2);
        }
    }
    check("other_format", M_REPLACE, 1, "\"format\":\"ulysim-trace\"", "\"format\":\"nccl-tests\"", 1,
          "not an ulysim trace", 2);
    check("malformed_json", M_SET, op2, "{\"type\":\"op\",\"id\":", NULL, op2, "malformed JSON", 2);
    check("unknown_id", M_REPLACE, op2, "\"id\":", "\"id\":9999,\"x\":", op2, "op id 9999 is not an op of the plan", 2);
    snprintf(buf, sizeof buf, "appears twice");
    check("duplicate_id", M_DUP, op2, NULL, NULL, op2 + 1, buf, 2);
    check("missing_id", M_REPLACE, op2, "\"id\":", "\"no_id\":", op2, "op line without \"id\"", 2);
    check("name_mismatch", M_REPLACE, op2, "\"name\":\"", "\"name\":\"x", op2, "does not match the plan", 2);
    /* bytes that are not UTF-8 (in a name the messages show, in the header
     * that trace export copies into JSON): refused with the column */
    /* a key given twice: the reader would take the first and ignore the second */
    check("duplicate_key", M_REPLACE, op2, "\"name\":\"", "\"name\":\"x\",\"name\":\"", op2,
          "key \"name\" appears twice", 2);
    check("name_not_utf8", M_REPLACE, op2, "\"name\":\"", "\"name\":\"\xff\xfe", op2, "invalid UTF-8 at column", 2);
    check("header_not_utf8", M_REPLACE, 1, "\"format\":\"", "\"x\":\"\xc0\xaf\",\"format\":\"", 1,
          "invalid UTF-8 at column", 2);
    const int comm = find_op("\"kind\":\"comm\"");
    if (comm) {
        const char *c = strstr(lines[comm - 1], "\"coll\":\"alltoall\"") ? "\"coll\":\"alltoall\""
                      : strstr(lines[comm - 1], "\"coll\":\"sendrecv\"") ? "\"coll\":\"sendrecv\""
                      : strstr(lines[comm - 1], "\"coll\":\"allgather\"") ? "\"coll\":\"allgather\""
                      : "\"coll\":\"reduce_scatter\"";
        check("coll_mismatch", M_REPLACE, comm, c, "\"coll\":\"allreduce\"", comm, "coll", 2);
        /* measured bytes differ under a summary saying "bytes_ok": true: the
         * trace contradicts itself, refused at the op line (trace check
         * used to say ok); with no "bytes_ok" in the summary the bytes are
         * data: the reader accepts them, validate exits 1 */
        char *p = strstr(lines[comm - 1], "\"bytes_sent\":");
        if (p) {
            long long v = atoll(p + strlen("\"bytes_sent\":"));
            char a[64], b[64];
            snprintf(a, sizeof a, "\"bytes_sent\":%lld", v);
            snprintf(b, sizeof b, "\"bytes_sent\":%lld", v + 4);
            check("bytes_differ_said_ok", M_REPLACE, comm, a, b, comm, "says \"bytes_ok\": true", 2);
            char *summary = lines[last - 1];
            lines[last - 1] = replace(summary, "\"bytes_ok\":true,", "");
            check("bytes_differ", M_REPLACE, comm, a, b, 0, "different number of bytes than planned", 1);
            free(lines[last - 1]);
            lines[last - 1] = summary;
        }
    }
    /* two op lines exchanged: the header's execution order is broken at the first */
    check("out_of_order", M_SWAP, op2, NULL, NULL, op2, "out of execution order", 2);
    check("missing_op_line", M_DROP, op2, NULL, NULL, last - 1, "has no op line", 2);
    /* the header's plan altered: libulysim rebuilds it differently */
    /* the message gives both values: what the header says, what is rebuilt */
    check("header_plan_differs", M_REPLACE, 1, "\"flops\":", "\"flops\":1,\"x\":", 1,
          "field flops 1 differs from the plan libulysim rebuilds from the header (0)", 2);
    check("header_model_differs", M_REPLACE, 1, "\"ffn_hidden\":", "\"ffn_hidden\":2", 1,
          "differs from the plan libulysim rebuilds", 2);
    check("line_after_summary", M_DUP, last, NULL, NULL, last + 1, "after the summary", 2);
    check("not_json_object", M_SET, op2, "[1,2,3]", NULL, op2, "not a JSON object", 2);
    {
        /* a line past the 4 MiB cap: refused by its length, not parsed */
        const size_t huge = (size_t)TRACE_MAX_LINE + 4096;
        char *big = malloc(huge + 1);
        if (!big) return 2;
        memset(big, 'x', huge);
        static const char head[] = "{\"type\":\"op\",\"pad\":\"";
        memcpy(big, head, sizeof head - 1);
        big[huge] = 0;
        check("huge_line", M_SET, op2, big, NULL, op2, "a trace line may be at most", 2);
        free(big);
    }
    {
        /* nested past cJSON's limit: refused as too deep, not as a syntax error */
        char *deep = malloc(20000);
        if (!deep) return 2;
        int k = sprintf(deep, "{\"type\":\"op\",\"x\":");
        for (int i = 0; i < 2000; i++) deep[k++] = '[';
        for (int i = 0; i < 2000; i++) deep[k++] = ']';
        strcpy(deep + k, "}");
        check("nesting_too_deep", M_SET, op2, deep, NULL, op2, "nesting 1000 levels deep at column", 2);
        free(deep);
    }
    {
        /* lines ending in CR alone all run together: said so, not "truncated" */
        char path[4096];
        snprintf(path, sizeof path, "%s/cr_line_ends.trace", outdir);
        FILE *fp = fopen(path, "wb");
        if (!fp) return 2;
        for (int i = 0; i < n_lines; i++) fprintf(fp, "%s\r", lines[i]);
        fclose(fp);
        static trace_run crun;
        char why[2048];
        const int rrc = trace_read(path, &crun, why, sizeof why);
        trace_free(&crun);
        char want[4200];
        snprintf(want, sizeof want, "%s:1: line ends of CR alone (column %zu)", path, strlen(lines[0]) + 1);
        if (rrc != 2 || !strstr(why, want)) {
            printf("FAIL cr_line_ends: reader %d (want 2), \"%s\" (want \"%s\")\n", rrc, why, want);
            failures++;
        } else {
            printf("ok   %-22s %s\n", "cr_line_ends", why);
        }
    }
    check("bad_time", M_REPLACE, op2, "\"median\":", "\"median\":-1,\"x\":", op2, "time_s.median", 2);
    {
        /* every measured time 0: nothing was timed (validate printed nan, and
         * trace check said ok where validate refused): refused by all three */
        char path[4096];
        write_times("all_times_zero", "0", path, sizeof path);
        refused_by_all("all_times_zero", path, "measured times add up to 0 s");
    }
    {
        /* every measured time 1e-300 s (and 1e-322, a denormal): no clock
         * measures it, and predicted / measured overflowed to inf ("+inf%",
         * "result: PASS"): refused naming the value and the valid range */
        char path[4096];
        write_times("all_times_tiny", "1e-300", path, sizeof path);
        refused_by_all("all_times_tiny", path,
                       "\"time_s.median\" = 1e-300 s: above 0 but below any clock's resolution, not a measured time "
                       "(valid: 0, or seconds in [1e-10, 1e+06])");
        write_times("all_times_denormal", "1e-322", path, sizeof path);
        refused_by_all("all_times_denormal", path, "below any clock's resolution");
    }
    {
        /* at the floor, 1e-10 s: read and validated, every ratio finite: no
         * inf or nan in the table or the JSON */
        char path[4096], err[8192];
        write_times("all_times_floor", "1e-10", path, sizeof path);
        for (int json = 0; json < 2; json++) {
            const int vrc = run_ulysim(json ? "validate --max-error none --format json" : "validate --max-error none",
                                       path, err, sizeof err);
            char outp[4200];
            snprintf(outp, sizeof outp, "%s.out", path);
            FILE *fp = fopen(outp, "r");
            char line[65536];
            int bad = 0;
            while (fp && fgets(line, sizeof line, fp))
                if (strstr(line, "inf") || strstr(line, "nan")) {
                    /* the words of the step definition are no numbers */
                    for (char *p = line; (p = strpbrk(p, "in")); p++)
                        if ((!strncmp(p, "inf", 3) || !strncmp(p, "nan", 3)) && (p == line || !strchr("abcdefghijklmnopqrstuvwxyz", p[-1])) &&
                            !strchr("abcdefghijklmnopqrstuvwxyz", p[3]))
                            bad = 1;
                }
            if (fp) fclose(fp);
            if (vrc != 0 || bad) {
                printf("FAIL all_times_floor%s: validate %d (want 0), inf or nan in %s: %s\n", json ? " (json)" : "", vrc,
                       outp, err);
                failures++;
            } else {
                printf("ok   %-22s read and validated, no inf or nan%s\n", "all_times_floor", json ? " (json)" : "");
            }
        }
    }
    {
        /* a JSON number cJSON reads but JSON has not: refused */
        check("leading_zero", M_REPLACE, op2, "\"reps\":", "\"reps\":0", op2, "malformed number \"0", 2);
        check("bare_point", M_REPLACE, op2, "\"bytes_sent\":", "\"x\":1.,\"bytes_sent\":", op2,
              "malformed number \"1.\"", 2);
        /* the summary against itself and the file (traces/FORMAT.md: ok is
         * bytes_ok and check.ok; ops the op lines) */
        check("ok_but_bytes_not", M_REPLACE, last, "\"bytes_ok\":true", "\"bytes_ok\":false", last,
              "summary \"ok\" is true but \"bytes_ok\" is false", 2);
        check("summary_ops", M_REPLACE, last, "\"ops\":", "\"ops\":7,\"x\":", last,
              "summary \"ops\" = 7, but the trace has", 2);
        check("header_n_ops", M_REPLACE, 1, "\"n_ops\":", "\"n_ops\":5,\"x\":", 1,
              "header plan.n_ops = 5, but plan.ops has", 2);
    }
    if (comm) {
        /* a part of a comm op's time above the whole (FORMAT.md: transfer_s
         * = time - wait): refused, naming both values */
        const int w = find_op("\"transfer_s\":");
        if (w) {
            char *a = set_member(lines[w - 1], "transfer_s", "{\"median\":10,\"min\":10,\"max\":10}");
            check("transfer_above_time", M_SET, w, a, NULL, w, "transfer_s.median 10 s exceeds time_s.median", 2);
            free(a);
            a = set_member(lines[w - 1], "wait_s", "{\"median\":10,\"min\":10,\"max\":10}");
            check("wait_above_time", M_SET, w, a, NULL, w, "wait_s.median 10 s exceeds time_s.median", 2);
            free(a);
        }
    }
    {
        /* a run that failed its checks (a FILE.failed): read, trace check
         * says so (exit 0), validate refuses it (exit 2) naming the file,
         * its summary line and the failure */
        char path[4096], err[8192];
        snprintf(path, sizeof path, "%s/failed_run.trace", outdir);
        char *a = replace(lines[last - 1], "\"ok\":true,\"bytes_ok\":true,\"check\":{\"ok\":true",
                          "\"ok\":false,\"bytes_ok\":true,\"check\":{\"ok\":false");
        write_case(path, M_SET, last, a, NULL);
        free(a);
        static trace_run frun;
        char why[2048], want[4200];
        const int rrc = trace_read(path, &frun, why, sizeof why);
        trace_free(&frun);
        const int crc = run_ulysim("trace check", path, err, sizeof err);
        char out[4200], cout[8192] = "";
        snprintf(out, sizeof out, "%s.out", path);
        FILE *fp = fopen(out, "r");
        if (fp) {
            size_t got = fread(cout, 1, sizeof cout - 1, fp);
            cout[got] = 0;
            fclose(fp);
        }
        const int vrc = run_validate(path, err, sizeof err);
        snprintf(want, sizeof want, "%s:%d: the summary says the run FAILED its checks (its result differs", path, last);
        if (rrc != 0 || crc != 0 || !strstr(cout, "FAILED its checks") || vrc != 2 || !strstr(err, want) ||
            strchr(err, '\n') != strrchr(err, '\n')) {
            printf("FAIL failed_run: reader %d (want 0: %s), trace check %d (want 0, saying FAILED: %s), validate %d "
                   "(want 2, one line \"%s\"): %s\n", rrc, why, crc, cout, vrc, want, err);
            failures++;
        } else {
            printf("ok   %-22s %s", "failed_run", err);
        }
    }
    if (failures) printf("%d case(s) failed\n", failures);
    else printf("all cases rejected as expected\n");
    for (int i = 0; i < n_lines; i++) free(lines[i]);
    free(lines);
    return failures ? 1 : 0;
}
