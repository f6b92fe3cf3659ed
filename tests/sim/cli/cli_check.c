/* cli_check: end-to-end checks of the ulysim command.
 *
 *   cli_check fail SUBSTR ULYSIM ARGS...   exit 2, exactly one line on stderr that
 *                                          contains SUBSTR, nothing on stdout
 *   cli_check ok ULYSIM ARGS...            exit 0, nothing on stderr
 *   cli_check golden FILE ULYSIM ARGS...   exit 0, stdout equal to FILE byte for byte;
 *                                          FILE.json: the same JSON document (keys in the
 *                                          same order, strings equal, numbers within 1e-9
 *                                          relative, so last-bit changes of the model pass)
 *   cli_check help ULYSIM                  --help lists every flag and every strategy of
 *                                          the registry with its summary; --version works
 *   cli_check robust ULYSIM                odd inputs: exit 0 or 2, never a signal or a hang
 *
 * An argument spelled @EMPTY@ is passed as the empty string. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <math.h>

#include "runner.h"
#include "ulysim.h"

#define TIMEOUT_S 60.0

static char **make_argv(int n, char **in)
{
    char **v = calloc((size_t)n + 1, sizeof *v);
    if (!v) exit(1);
    for (int i = 0; i < n; i++) v[i] = strcmp(in[i], "@EMPTY@") == 0 ? (char *)"" : in[i];
    return v;
}

static void show(const char *what, const run_out *o)
{
    fprintf(stderr, "%s: rc %d, signal %d%s\n--- stderr ---\n%s--- stdout (first 2000 bytes) ---\n%.2000s\n", what,
            o->rc, o->sig, o->timed_out ? ", TIMED OUT" : "", o->err ? o->err : "", o->out ? o->out : "");
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* exit 2, one line on stderr naming `substr`, no stdout */
static int check_fail(const char *substr, char **argv)
{
    run_out o;
    if (run_cmd(argv, TIMEOUT_S, &o) != 0) { fprintf(stderr, "cannot run %s\n", argv[0]); return 1; }
    int bad = 0;
    if (o.rc != 2) { fprintf(stderr, "FAIL: exit %d, want 2\n", o.rc); bad = 1; }
    if (o.err_len == 0 || o.err[o.err_len - 1] != '\n' || count_lines(o.err) != 1) {
        fprintf(stderr, "FAIL: stderr must be exactly one line\n");
        bad = 1;
    }
    if (substr[0] && !strstr(o.err, substr)) { fprintf(stderr, "FAIL: stderr does not name '%s'\n", substr); bad = 1; }
    if (o.out_len) { fprintf(stderr, "FAIL: something on stdout\n"); bad = 1; }
    if (bad) show("fail", &o);
    else printf("ok: %s", o.err);
    run_free(&o);
    return bad;
}

static int check_ok(char **argv)
{
    run_out o;
    if (run_cmd(argv, TIMEOUT_S, &o) != 0) { fprintf(stderr, "cannot run %s\n", argv[0]); return 1; }
    int bad = o.rc != 0 || o.err_len != 0 || o.out_len == 0;
    if (bad) show("FAIL: want exit 0, output on stdout and nothing on stderr", &o);
    run_free(&o);
    return bad;
}

/* Structural equality with a relative tolerance on numbers; `path` names the first difference. */
static int json_same(const cJSON *a, const cJSON *b, char *path, size_t n)
{
    size_t l = strlen(path);
    if ((a->type & 0xff) != (b->type & 0xff)) {
        snprintf(path + l, n - l, " (type differs)");
        return 0;
    }
    if (cJSON_IsNumber(a)) {
        double x = a->valuedouble, y = b->valuedouble;
        if (fabs(x - y) <= 1e-9 * fmax(fabs(x), fabs(y))) return 1;
        snprintf(path + l, n - l, " (want %.17g, got %.17g)", x, y);
        return 0;
    }
    if (cJSON_IsString(a)) {
        if (!strcmp(a->valuestring, b->valuestring)) return 1;
        snprintf(path + l, n - l, " (want \"%.80s\", got \"%.80s\")", a->valuestring, b->valuestring);
        return 0;
    }
    if (cJSON_IsArray(a) || cJSON_IsObject(a)) {
        const cJSON *x = a->child, *y = b->child;
        int i = 0;
        for (; x && y; x = x->next, y = y->next, i++) {
            if (cJSON_IsObject(a)) {
                if (strcmp(x->string, y->string) != 0) {
                    snprintf(path + l, n - l, " (key %d: want \"%s\", got \"%s\")", i, x->string, y->string);
                    return 0;
                }
                snprintf(path + l, n - l, ".%s", x->string);
            } else {
                snprintf(path + l, n - l, "[%d]", i);
            }
            if (!json_same(x, y, path, n)) return 0;
            path[l] = 0;
        }
        if (x || y) {
            snprintf(path + l, n - l, " (%s has %s elements)", "the output", y ? "more" : "fewer");
            return 0;
        }
        return 1;
    }
    if (cJSON_IsBool(a) && cJSON_IsTrue(a) != cJSON_IsTrue(b)) {
        snprintf(path + l, n - l, " (boolean differs)");
        return 0;
    }
    return 1;
}

static int check_golden(const char *file, char **argv)
{
    FILE *f = fopen(file, "rb");
    if (!f) { fprintf(stderr, "FAIL: cannot open golden file %s (generate with update-golden.sh)\n", file); return 1; }
    char *want = NULL;
    size_t wlen = 0, cap = 0;
    for (;;) {
        if (wlen + 4097 > cap) {
            cap = cap ? cap * 2 : 65536;
            want = realloc(want, cap);
            if (!want) return 1;
        }
        size_t k = fread(want + wlen, 1, 4096, f);
        wlen += k;
        if (!k) break;
    }
    want[wlen] = 0;
    fclose(f);
    run_out o;
    if (run_cmd(argv, TIMEOUT_S, &o) != 0) { fprintf(stderr, "cannot run %s\n", argv[0]); return 1; }
    int bad = 0;
    if (o.rc != 0) { show("FAIL: exit", &o); bad = 1; }
    size_t fl = strlen(file);
    int json = fl > 5 && !strcmp(file + fl - 5, ".json");
    if (!bad && json) {
        cJSON *jw = cJSON_Parse(want), *jg = cJSON_Parse(o.out);
        char path[1024] = "$";
        if (!jw || !jg) {
            fprintf(stderr, "FAIL: %s is not valid JSON\n", jw ? "the output" : file);
            bad = 1;
        } else if (!json_same(jw, jg, path, sizeof path)) {
            fprintf(stderr, "FAIL: output differs from %s at %s\n", file, path);
            bad = 1;
        }
        cJSON_Delete(jw);
        cJSON_Delete(jg);
    }
    if (!bad && !json && (o.out_len != wlen || memcmp(o.out, want, wlen) != 0)) {
        bad = 1;
        /* first differing line */
        int line = 1;
        size_t i = 0;
        while (i < wlen && i < o.out_len && want[i] == o.out[i]) {
            if (want[i] == '\n') line++;
            i++;
        }
        size_t ws = i, gs = i;
        while (ws > 0 && want[ws - 1] != '\n') ws--;
        while (gs > 0 && o.out[gs - 1] != '\n') gs--;
        const char *we = strchr(want + ws, '\n'), *ge = strchr(o.out + gs, '\n');
        fprintf(stderr, "FAIL: output differs from %s at line %d\n  want: %.*s\n  got:  %.*s\n", file, line,
                (int)(we ? (size_t)(we - want - ws) : wlen - ws), want + ws,
                (int)(ge ? (size_t)(ge - o.out - gs) : o.out_len - gs), o.out + gs);
        const char *base = strrchr(file, '/');
        char actual[512];
        snprintf(actual, sizeof actual, "%s.actual", base ? base + 1 : file);
        FILE *a = fopen(actual, "wb");
        if (a) {
            fwrite(o.out, 1, o.out_len, a);
            fclose(a);
            fprintf(stderr, "  the whole output is in %s (in the test's working directory)\n", actual);
        }
    }
    run_free(&o);
    free(want);
    return bad;
}

static int check_help(char *ulysim)
{
    static const char *const flags[] = {
        "--gpus", "--seq", "--model", "--cluster", "--strategy", "--ulysses", "--ring", "--tp", "--pp", "--batch",
        "--global-batch", "--dtype", "--recompute", "--zero", "--causal", "--no-causal", "--flash", "--no-flash",
        "--split", "--format", "--help", "--version", "max-seq", "min-gpus", "sweep", "presets", "default",
    };
    int bad = 0;
    char *argv[] = {ulysim, (char *)"--help", NULL};
    run_out o;
    if (run_cmd(argv, TIMEOUT_S, &o) != 0) return 1;
    if (o.rc != 0 || o.err_len) { show("FAIL: --help", &o); bad = 1; }
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (!strstr(o.out, flags[i])) { fprintf(stderr, "FAIL: --help does not mention %s\n", flags[i]); bad = 1; }
    /* the strategies come from the registry: each on a line of its own, its name then its summary */
    for (int i = 0; i < ULY_STRAT_COUNT && o.out; i++) {
        const uly_strategy *st = uly_strategy_get((uly_strategy_id)i);
        if (!st) continue;
        char line[256];
        snprintf(line, sizeof line, "\n  %-13s %s\n", st->name, st->summary);
        if (!strstr(o.out, line)) { fprintf(stderr, "FAIL: --help does not list strategy %s with its summary\n", st->name); bad = 1; }
    }
    /* every option line states a unit or a default in brackets */
    for (const char *p = o.out; (p = strstr(p, "\n  --")) != NULL; p++) {
        const char *e = strchr(p + 1, '\n');
        const char *nx = e ? e : p + strlen(p);
        /* the bracket may be on the line or on the next, continued one */
        const char *e2 = e ? strchr(e + 1, '\n') : NULL;
        int found = 0;
        for (const char *q = p; q < (e2 ? e2 : nx); q++) found |= *q == '[';
        const char *flag = p + 3;
        int is_bool = !strncmp(flag, "--help", 6) || !strncmp(flag, "--version", 9);
        if (!found && !is_bool) {
            fprintf(stderr, "FAIL: --help line without [unit; default]: %.*s\n", (int)(nx - p - 1), p + 1);
            bad = 1;
        }
    }
    run_free(&o);
    char *argv2[] = {ulysim, (char *)"--version", NULL};
    if (run_cmd(argv2, TIMEOUT_S, &o) != 0) return 1;
    if (o.rc != 0 || strncmp(o.out, "ulysim ", 7) != 0 || count_lines(o.out) != 1) { show("FAIL: --version", &o); bad = 1; }
    /* every command takes -V and --version alone, printing the same line */
    static const char *const cmds[] = {"plan", "max-seq", "min-gpus", "sweep", "presets", "plot", "validate",
                                       "trace", "calibrate", "runs", "reproduce"};
    for (size_t i = 0; o.out && i < sizeof cmds / sizeof cmds[0]; i++)
        for (int k = 0; k < 2; k++) {
            char *argv3[] = {ulysim, (char *)cmds[i], (char *)(k ? "--version" : "-V"), NULL};
            run_out v;
            if (run_cmd(argv3, TIMEOUT_S, &v) != 0) return 1;
            if (v.rc != 0 || !v.out || strcmp(v.out, o.out) != 0) {
                fprintf(stderr, "FAIL: ulysim %s %s: want exit 0 and \"%.*s\"\n", cmds[i], argv3[2],
                        (int)strcspn(o.out, "\n"), o.out);
                show("  got", &v);
                bad = 1;
            }
            run_free(&v);
        }
    run_free(&o);
    return bad;
}

static int check_robust(char *ulysim)
{
    static char longarg[20000];
    memset(longarg, '9', sizeof longarg - 1);
    static char longname[5000];
    memset(longname, 'x', sizeof longname - 1);
    memcpy(longname, "--", 2);
    static const char *const cases[][12] = {
        {"--seq", "9223372036854775807"}, {"--seq", "9223372036854775808"}, {"--seq", "-0"}, {"--seq", "0x10"},
        {"--seq", " 1M"}, {"--seq", "1M "}, {"--seq", "1e-3"}, {"--seq", "1k"}, {"--seq", "1MM"}, {"--seq", "2^"},
        {"--seq", "^2"}, {"--seq", "1e"}, {"--seq", "nan"}, {"--seq", "inf"}, {"--seq", "1,2"}, {"--seq", ".."},
        {"--gpus", "3", "--seq", "7"}, {"--gpus", "1", "--seq", "1"}, {"--gpus", "1023", "--seq", "1M"},
        {"--gpus", "16777216", "--seq", "2^40"}, {"--gpus", "2^24"}, {"--gpus", "2^25"},
        {"--batch", "1048576", "--seq", "1M"}, {"--global-batch", "1099511627776", "--gpus", "64"},
        {"--model", "/dev/null"}, {"--model", "/dev/zero"}, {"--model", "/"}, {"--model", "."}, {"--model", "../x"},
        {"--cluster", "/dev/urandom"}, {"--model", "a/b/c.json"}, {"--model", "\xff\xfe"},
        {"--strategy", ""}, {"--strategy", ",,,"}, {"--strategy", "ulysses,"}, {"--strategy", "ALL"},
        {"--ulysses", "1", "--ring", "1", "--tp", "1"}, {"--ulysses", "64", "--gpus", "64", "--strategy", "ulysses"},
        {"--ring", "3", "--gpus", "6", "--seq", "7"}, {"--tp", "64", "--gpus", "64"},
        {"sweep", "--seq", "1..2^40", "--gpus", "1..2^24", "--strategy", "rsa"},
        {"sweep", "--seq", "8K,8K,8K", "--gpus", "8"}, {"sweep", "--gpus", "2^24..1"}, {"sweep", "--seq", "1..1"},
        {"max-seq", "--gpus", "1"}, {"max-seq", "--gpus", "3"}, {"min-gpus", "--seq", "1"}, {"min-gpus", "--seq", "2^40"},
        {"min-gpus", "--gpus", "1"}, {"presets", "--format", "json"}, {"presets", "--format", "csv"},
        {"--format=json", "--format=csv", "--format=table"}, {"--gpus=", "64"}, {"--=x"}, {"-"}, {"--"}, {"-x"},
        {"plan", "plan"}, {"sweep", "--format", "json", "--seq", "4K", "--gpus", "4"},
        {"--no-flash", "--no-causal", "--recompute", "none", "--zero", "0", "--dtype", "fp32", "--split", "contiguous"},
        {"--model", "bert-base", "--gpus", "64", "--seq", "1M"}, {"--model", "llama3-405b", "--cluster", "cpu-local", "--gpus", "2"},
        {"--cluster", "piz-daint-p100", "--gpus", "4096", "--seq", "16M"},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] + 2; i++) {
        char *argv[16] = {ulysim};
        int n = 1;
        if (i < sizeof cases / sizeof cases[0]) {
            for (int k = 0; k < 12 && cases[i][k]; k++) argv[n++] = (char *)cases[i][k];
        } else if (i == sizeof cases / sizeof cases[0]) {
            argv[n++] = (char *)"--seq";
            argv[n++] = longarg;
        } else {
            argv[n++] = longname;
        }
        argv[n] = NULL;
        run_out o;
        if (run_cmd(argv, TIMEOUT_S, &o) != 0) return 1;
        int ok = !o.sig && !o.timed_out && (o.rc == 0 || o.rc == 2);
        if (o.rc == 2) ok &= o.err_len > 0 && o.err_len < 2000 && count_lines(o.err) == 1;
        if (o.rc == 0) ok &= o.out_len > 0;
        if (!ok) {
            fprintf(stderr, "FAIL: case %zu:", i);
            for (int k = 1; k < n; k++) fprintf(stderr, " '%.40s'", argv[k]);
            fprintf(stderr, "\n");
            show("robust", &o);
            bad = 1;
        }
        run_free(&o);
    }
    if (!bad) printf("%zu odd inputs: no crash, no hang, exit 0 or 2 with one line\n", sizeof cases / sizeof cases[0] + 2);
    return bad;
}

int main(int argc, char **argv)
{
    int rc = 2;
    char **v = NULL;
    if (argc >= 4 && !strcmp(argv[1], "fail")) {
        v = make_argv(argc - 3, argv + 3);
        rc = check_fail(argv[2], v);
    } else if (argc >= 3 && !strcmp(argv[1], "ok")) {
        v = make_argv(argc - 2, argv + 2);
        rc = check_ok(v);
    } else if (argc >= 4 && !strcmp(argv[1], "golden")) {
        v = make_argv(argc - 3, argv + 3);
        rc = check_golden(argv[2], v);
    } else if (argc == 3 && !strcmp(argv[1], "help")) {
        rc = check_help(argv[2]);
    } else if (argc == 3 && !strcmp(argv[1], "robust")) {
        rc = check_robust(argv[2]);
    } else {
        fprintf(stderr, "usage: cli_check fail SUBSTR ULYSIM ARGS... | ok ULYSIM ARGS... | golden FILE ULYSIM ARGS... | help ULYSIM | robust ULYSIM\n");
    }
    free(v);
    return rc;
}
