/* plot_check_util.c: the helpers of plot_check.c (see plot_check.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plot_check.h"

const char *g_test = "plot_check";

int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL %s: ", g_test);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

/* mkdir -p */
void mkdirs(const char *path)
{
    char b[1100];
    snprintf(b, sizeof b, "%s", path);
    for (char *p = b + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(b, 0777);
            *p = '/';
        }
    mkdir(b, 0777);
}

/* ------------------------------------------------------------ running */


char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap *= 2;
            b = realloc(b, cap);
        }
        size_t k = fread(b + n, 1, cap - n - 1, f);
        n += k;
        if (k == 0) break;
    }
    fclose(f);
    b[n] = 0;
    if (len) *len = n;
    return b;
}

/* Runs argv with stdout and stderr captured. */
int run(char *const argv[], out *o)
{
    char fo[] = "/tmp/plot_check_out.XXXXXX", fe[] = "/tmp/plot_check_err.XXXXXX";
    int a = mkstemp(fo), b = mkstemp(fe);
    if (a < 0 || b < 0) return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(a, 1);
        dup2(b, 2);
        execv(argv[0], argv);
        execvp(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    close(a);
    close(b);
    o->rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    o->out = slurp(fo, NULL);
    o->err = slurp(fe, NULL);
    unlink(fo);
    unlink(fe);
    if (!o->out) o->out = calloc(1, 1);
    if (!o->err) o->err = calloc(1, 1);
    return 0;
}

void out_free(out *o)
{
    free(o->out);
    free(o->err);
}

/* An argv builder. */

void add(args *a, const char *s)
{
    if (a->n < 126) a->v[a->n++] = strdup(s);
    a->v[a->n] = NULL;
}

void addf(args *a, const char *fmt, ...)
{
    char b[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    add(a, b);
}

void args_free(args *a)
{
    for (int i = 0; i < a->n; i++) free(a->v[i]);
    a->n = 0;
}

/* Runs ULYSIM with argv and parses its JSON output. */
cJSON *run_json(args *a)
{
    out o;
    if (run(a->v, &o) != 0) return NULL;
    cJSON *j = o.rc == 0 ? cJSON_Parse(o.out) : NULL;
    if (!j) {
        fprintf(stderr, "  command:");
        for (int i = 0; i < a->n; i++) fprintf(stderr, " %s", a->v[i]);
        fprintf(stderr, "\n  exit %d, stderr: %s\n", o.rc, o.err);
    }
    out_free(&o);
    return j;
}

/* ---------------------------------------------------------------- CSV */


int csv_load(const char *path, csv *c, const char *figure)
{
    memset(c, 0, sizeof *c);
    c->text = slurp(path, NULL);
    if (!c->text) return fail("no CSV %s beside the image", path);
    char want[200];
    snprintf(want, sizeof want, "# ulysim ");
    if (strncmp(c->text, want, strlen(want)) != 0) return fail("%s: the first line is not '# ulysim ...'", path);
    snprintf(want, sizeof want, "plot %s:", figure);
    if (!strstr(c->text, want)) return fail("%s: the header does not name the figure ('%s')", path, want);
    if (!strstr(c->text, "\n# command   ulysim plot ")) return fail("%s: no '# command' line", path);
    if (!strstr(c->text, "\n# columns   ")) return fail("%s: no '# columns' lines", path);
    char *save = NULL;
    for (char *line = strtok_r(c->text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#' || !line[0]) continue;
        char *cells[MAXCOLS];
        int n = 0;
        char *p = line;
        for (;;) {
            char *comma = strchr(p, ',');
            if (n < MAXCOLS) cells[n++] = p;
            if (!comma) break;
            *comma = 0;
            p = comma + 1;
        }
        if (!c->ncols) {
            c->ncols = n;
            memcpy(c->names, cells, sizeof(char *) * (size_t)n);
            continue;
        }
        if (n != c->ncols) return fail("%s: a row has %d cells, the header %d", path, n, c->ncols);
        c->rows = realloc(c->rows, sizeof *c->rows * (size_t)(c->nrows + 1));
        c->rows[c->nrows] = malloc(sizeof(char *) * (size_t)n);
        memcpy(c->rows[c->nrows], cells, sizeof(char *) * (size_t)n);
        c->nrows++;
    }
    if (!c->ncols) return fail("%s: no line of column names", path);
    if (c->nrows < 1) return fail("%s: no data rows", path);
    return 0;
}

int col_of(const csv *c, const char *name)
{
    for (int i = 0; i < c->ncols; i++)
        if (strcmp(c->names[i], name) == 0) return i;
    return -1;
}

const char *cell(const csv *c, int r, const char *name)
{
    int i = col_of(c, name);
    return i >= 0 ? c->rows[r][i] : NULL;
}

double num(const csv *c, int r, const char *name)
{
    const char *s = cell(c, r, name);
    return s && s[0] ? strtod(s, NULL) : NAN;
}

void csv_free(csv *c)
{
    for (int r = 0; r < c->nrows; r++) free(c->rows[r]);
    free(c->rows);
    free(c->text);
}

int need_cols(const csv *c, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (col_of(c, names[i]) < 0) return fail("the CSV has no column '%s'", names[i]);
    return 0;
}

/* ------------------------------------------------------------- images */

int check_image(const char *path, const char *fmt, const char *figure)
{
    size_t n = 0;
    char *b = slurp(path, &n);
    if (!b) return fail("no image %s", path);
    int rc = 0;
    /* sizes: the smallest of the figures here is well above these; an
     * empty canvas or a gnuplot error page is well below */
    if (strcmp(fmt, "png") == 0) {
        static const unsigned char magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
        if (n < 24 || memcmp(b, magic, 8) != 0 || memcmp(b + 12, "IHDR", 4) != 0) rc = fail("%s: not a PNG", path);
        else {
            const unsigned char *u = (const unsigned char *)b;
            uint32_t w = (uint32_t)u[16] << 24 | (uint32_t)u[17] << 16 | (uint32_t)u[18] << 8 | u[19];
            uint32_t h = (uint32_t)u[20] << 24 | (uint32_t)u[21] << 16 | (uint32_t)u[22] << 8 | u[23];
            if (w < 900 || h < 500) rc = fail("%s: %ux%u pixels, expected a 300 dpi figure (>= 900 x 500)", path, w, h);
            if (n < 30000) rc = fail("%s: %zu bytes, suspiciously small for a figure", path, n);
        }
    } else if (strcmp(fmt, "svg") == 0) {
        if (!strstr(b, "<svg") || !strstr(b, "</svg>")) rc = fail("%s: not a complete SVG", path);
        else if (n < 10000) rc = fail("%s: %zu bytes, suspiciously small for a figure", path, n);
        else if (!strstr(b, "<path") && !strstr(b, "<polyline")) rc = fail("%s: the SVG draws nothing", path);
    } else if (strcmp(fmt, "pdf") == 0) {
        if (n < 8 || memcmp(b, "%PDF-", 5) != 0) rc = fail("%s: not a PDF", path);
        else {
            int eof = 0;
            for (size_t i = n > 64 ? n - 64 : 0; i + 5 <= n; i++) eof |= memcmp(b + i, "%%EOF", 5) == 0;
            if (!eof) rc = fail("%s: the PDF has no %%%%EOF (truncated)", path);
            else if (n < 8000) rc = fail("%s: %zu bytes, suspiciously small for a figure", path, n);
        }
    } else {
        rc = fail("unknown format %s", fmt);
    }
    (void)figure;
    free(b);
    return rc;
}

/* ----------------------------------------------------------- comparing */

int close_rel(double a, double b, double tol)
{
    if (a == b) return 1;
    return fabs(a - b) <= tol * fmax(fabs(a), fabs(b));
}

const cJSON *jget(const cJSON *o, const char *path)
{
    /* "a.b.c" */
    char buf[200];
    snprintf(buf, sizeof buf, "%s", path);
    const cJSON *cur = o;
    char *save = NULL;
    for (char *k = strtok_r(buf, ".", &save); k && cur; k = strtok_r(NULL, ".", &save))
        cur = cJSON_GetObjectItemCaseSensitive(cur, k);
    return cur;
}

double jnum(const cJSON *o, const char *path)
{
    const cJSON *v = jget(o, path);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* Appends the pins a layout string ("u8.r4", "tp32.dp2") stands for. */
void add_pins(args *a, const char *layout)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", layout);
    char *save = NULL;
    for (char *t = strtok_r(buf, ".", &save); t; t = strtok_r(NULL, ".", &save)) {
        if (strncmp(t, "tp", 2) == 0) addf(a, "--tp=%s", t + 2);
        else if (t[0] == 'u') addf(a, "--ulysses=%s", t + 1);
        else if (t[0] == 'r') addf(a, "--ring=%s", t + 1);
    }
}

/* "u8.r4" from a plan's degrees, the way the CSV writes them. */
void degrees_str(const cJSON *plan, char *b, size_t n)
{
    struct { const char *p, *k; } d[] = {{"tp", "tp"}, {"u", "ulysses"}, {"r", "ring"}, {"dp", "dp"}, {"pp", "pp"}};
    size_t o = 0;
    b[0] = 0;
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
        char key[40];
        snprintf(key, sizeof key, "degrees.%s", d[i].k);
        double v = jnum(plan, key);
        if (!(v > 1)) continue;
        o += (size_t)snprintf(b + o, n - o, "%s%s%.0f", o ? "." : "", d[i].p, v);
    }
    if (!o) snprintf(b, n, "dp1");
}

const cJSON *plan_of(const cJSON *root, const char *strategy)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, jget(root, "plans"))
    {
        const cJSON *s = jget(p, "strategy");
        if (cJSON_IsString(s) && strcmp(s->valuestring, strategy) == 0) return p;
    }
    return NULL;
}

