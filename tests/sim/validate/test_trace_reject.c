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
 * arrays nested past cJSON's limit, lines ending in CR alone; then a
 * trace whose measured bytes differ (read fine; validate exits 1), and the
 * good trace itself (read fine), and its copies with every time 0 (validate
 * exits 2: nothing to compare) and 1e-300 s (no number of hundreds of digits). */
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
        /* measured bytes differ: the reader accepts it (data), validate exits 1 */
        char *p = strstr(lines[comm - 1], "\"bytes_sent\":");
        if (p) {
            long long v = atoll(p + strlen("\"bytes_sent\":"));
            char a[64], b[64];
            snprintf(a, sizeof a, "\"bytes_sent\":%lld", v);
            snprintf(b, sizeof b, "\"bytes_sent\":%lld", v + 4);
            check("bytes_differ", M_REPLACE, comm, a, b, 0, "different number of bytes than planned", 1);
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
        /* every measured time 0: read (an op may time at 0 on a coarse
         * clock), but validate has nothing to compare with (it printed nan) */
        char path[4096], err[8192];
        snprintf(path, sizeof path, "%s/all_times_zero.trace", outdir);
        FILE *fp = fopen(path, "wb");
        if (!fp) return 2;
        for (int i = 0; i < n_lines; i++) {
            if (strstr(lines[i], "\"type\":\"op\"")) times_set(lines[i], fp, "0");
            else fprintf(fp, "%s\n", lines[i]);
        }
        fclose(fp);
        static trace_run zrun;
        char why[2048];
        const int rrc = trace_read(path, &zrun, why, sizeof why);
        trace_free(&zrun);
        const int vrc = run_validate(path, err, sizeof err);
        if (rrc != 0 || vrc != 2 || !strstr(err, "measured times add up to 0 s")) {
            printf("FAIL all_times_zero: reader %d (want 0: %s), validate %d (want 2): %s\n", rrc, why, vrc, err);
            failures++;
        } else {
            printf("ok   %-22s %s", "all_times_zero", err);
        }
    }
    {
        /* every measured time 1e-300 s: read, and validate's errors (against
         * nearly nothing) have no bound; printed as "%.1f" they ran to 300
         * digits a number: none longer than 20 digits */
        char path[4096], out[4200], cmd[16384];
        snprintf(path, sizeof path, "%s/all_times_tiny.trace", outdir);
        snprintf(out, sizeof out, "%s.stdout", path);
        FILE *fp = fopen(path, "wb");
        if (!fp) return 2;
        for (int i = 0; i < n_lines; i++) {
            if (strstr(lines[i], "\"type\":\"op\"")) times_set(lines[i], fp, "1e-300");
            else fprintf(fp, "%s\n", lines[i]);
        }
        fclose(fp);
        snprintf(cmd, sizeof cmd, "'%s' validate '%s' --max-error none > '%s' 2>&1", ulysim, path, out);
        const int st = system(cmd);
        int longest = 0, run = 0;
        fp = fopen(out, "r");
        for (int ch; fp && (ch = fgetc(fp)) != EOF;) {
            run = ch >= '0' && ch <= '9' ? run + 1 : 0;
            if (run > longest) longest = run;
        }
        if (fp) fclose(fp);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || longest > 20) {
            printf("FAIL all_times_tiny: validate exit %d (want 0), longest run of digits %d (want <= 20): %s\n",
                   WIFEXITED(st) ? WEXITSTATUS(st) : -1, longest, out);
            failures++;
        } else {
            printf("ok   %-22s read and validated; longest number %d digits\n", "all_times_tiny", longest);
        }
    }
    if (failures) printf("%d case(s) failed\n", failures);
    else printf("all cases rejected as expected\n");
    for (int i = 0; i < n_lines; i++) free(lines[i]);
    free(lines);
    return failures ? 1 : 0;
}
