/* util.c: ulygpu's helpers: clock, errors, memory, random inputs, timing
 * with CUDA events, error measures, the summary and the JSON-lines trace. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ulygpu.h"

double ug_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double ug_elapsed(const ug_ctx *c) { return ug_now() - c->t0; }

int ug_over_budget(const ug_ctx *c, double fraction) { return ug_elapsed(c) > fraction * c->o.budget_s; }

void ug_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ulygpu: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    ug_json j;
    ug_j_begin(&j);
    ug_j_str(&j, "type", "summary");
    ug_j_bool(&j, "ok", 0);
    ug_j_str(&j, "aborted", "a CUDA, cuBLAS or allocation failure ended the run: see stderr");
    ug_trace_line(&j);
    ug_trace_close(0);
    exit(UG_EXIT_FAIL);
}

void *ug_dalloc(size_t bytes)
{
    void *p = NULL;
    UG_CK(kern_cuda_malloc(&p, bytes));
    return p;
}

void ug_dfree(void *p) { UG_CK(kern_cuda_free(p)); }

void *ug_halloc(size_t bytes)
{
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) ug_die("out of host memory (%zu bytes)", bytes);
    return p;
}

/* splitmix64 */
static uint64_t rng_state;

void ug_rng_seed(uint64_t s) { rng_state = s ^ 0x9E3779B97F4A7C15ull; }

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double rng_uniform(void) { return ((double)(rng_next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

double ug_normal(void) { return sqrt(-2.0 * log(rng_uniform())) * cos(6.283185307179586 * rng_uniform()); }

void ug_fill_normal(uint16_t *h16, float *f, size_t n, kern_cuda_dtype t)
{
    for (size_t i = 0; i < n; i++) {
        h16[i] = kern_cuda_host_from_f32((float)ug_normal(), t);
        if (f) f[i] = kern_cuda_host_to_f32(h16[i], t);
    }
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void ug_sort(double *v, int n) { qsort(v, (size_t)n, sizeof *v, cmp_double); }

void ug_time(ug_ctx *c, ug_run_fn fn, void *arg, int warmup, int reps, ug_stats *out)
{
    for (int i = 0; i < warmup; i++) UG_CK(fn(arg));
    UG_CK(kern_cuda_synchronize());
    if (reps < 1) reps = 1;
    double *ms = ug_halloc(sizeof(double) * (size_t)reps);
    for (int i = 0; i < reps; i++) {
        float t = 0;
        UG_CK(kern_cuda_timer_start(c->timer, NULL));
        UG_CK(fn(arg));
        UG_CK(kern_cuda_timer_stop(c->timer, NULL));
        UG_CK(kern_cuda_timer_ms(c->timer, &t));
        ms[i] = t;
    }
    ug_sort(ms, reps);
    out->reps = reps;
    out->min_ms = ms[0];
    out->max_ms = ms[reps - 1];
    out->median_ms = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
    free(ms);
}

void ug_summary(ug_ctx *c, const char *fmt, ...)
{
    if (c->n_summary >= UG_MAX_SUMMARY) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->summary[c->n_summary++], sizeof c->summary[0], fmt, ap);
    va_end(ap);
}

void ug_rel_err(const float *x, const float *ref, size_t n, double *max_rel, double *fro_rel, size_t *nan_count)
{
    double num = 0, den = 0, s2 = 0, r2 = 0;
    size_t nans = 0;
    int inf_mismatch = 0;
    for (size_t i = 0; i < n; i++) {
        const double a = x[i], b = ref[i];
        if (isnan(a) || isnan(b)) {
            nans++;
            continue;
        }
        if (isinf(a) || isinf(b)) {
            if (a != b) inf_mismatch = 1;
            continue;
        }
        const double e = fabs(a - b);
        if (e > num) num = e;
        if (fabs(b) > den) den = fabs(b);
        s2 += e * e;
        r2 += b * b;
    }
    *max_rel = nans || inf_mismatch ? INFINITY : (den > 0 ? num / den : num);
    *fro_rel = nans || inf_mismatch ? INFINITY : (r2 > 0 ? sqrt(s2 / r2) : sqrt(s2));
    if (nan_count) *nan_count = nans;
}

int ug_check(ug_ctx *c, const char *group, const char *what, const char *tensor, kern_cuda_dtype t, double max_rel,
             double fro_rel, size_t nans, double tol, const char *tol_reason)
{
    const int ok = max_rel <= tol;
    c->checks++;
    if (!ok) c->failures++;
    printf("  %-4s %-10s %-44s %-4s %-4s max_rel %.2e  fro_rel %.2e  tol %.1e%s\n", ok ? "ok" : "FAIL", group,
           what, tensor, kern_cuda_dtype_name(t), max_rel, fro_rel, tol,
           nans ? "  (NaN: elements never written or wrong)" : "");
    ug_json j;
    ug_j_begin(&j);
    ug_j_str(&j, "type", "check");
    ug_j_str(&j, "group", group);
    ug_j_str(&j, "case", what);
    ug_j_str(&j, "tensor", tensor);
    ug_j_str(&j, "dtype", kern_cuda_dtype_name(t));
    ug_j_num(&j, "max_rel_err", max_rel);
    ug_j_num(&j, "fro_rel_err", fro_rel);
    ug_j_int(&j, "nan_elements", (long long)nans);
    ug_j_num(&j, "tol", tol);
    ug_j_str(&j, "tol_reason", tol_reason);
    ug_j_bool(&j, "ok", ok);
    ug_trace_line(&j);
    return ok;
}

/* ------------------------------------------------------------- JSON */

static void j_grow(ug_json *j, size_t more)
{
    if (j->len + more + 1 <= j->cap) return;
    size_t cap = j->cap ? j->cap : 256;
    while (cap < j->len + more + 1) cap *= 2;
    char *b = realloc(j->buf, cap);
    if (!b) {
        fprintf(stderr, "ulygpu: out of host memory for the trace\n");
        exit(UG_EXIT_FAIL);
    }
    j->buf = b;
    j->cap = cap;
}

static void j_put(ug_json *j, const char *s)
{
    const size_t n = strlen(s);
    j_grow(j, n);
    memcpy(j->buf + j->len, s, n + 1);
    j->len += n;
}

void ug_json_escape(const char *s, char *out, size_t n)
{
    size_t o = 0;
    if (!n) return;
    for (; s && *s && o + 7 < n; s++) {
        const unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            out[o++] = '\\';
            out[o++] = (char)ch;
        } else if (ch < 0x20) {
            o += (size_t)snprintf(out + o, n - o, "\\u%04x", ch);
        } else {
            out[o++] = (char)ch;
        }
    }
    out[o] = 0;
}

static void j_key(ug_json *j, const char *key)
{
    char k[256];
    ug_json_escape(key, k, sizeof k);
    if (!j->first) j_put(j, ",");
    j->first = 0;
    j_put(j, "\"");
    j_put(j, k);
    j_put(j, "\":");
}

void ug_j_begin(ug_json *j)
{
    memset(j, 0, sizeof *j);
    j->first = 1;
    j_put(j, "{");
}

void ug_j_str(ug_json *j, const char *key, const char *v)
{
    const size_t n = (v ? strlen(v) : 0) * 6 + 8;
    char *e = ug_halloc(n);
    ug_json_escape(v ? v : "", e, n);
    j_key(j, key);
    j_put(j, "\"");
    j_put(j, e);
    j_put(j, "\"");
    free(e);
}

void ug_j_num(ug_json *j, const char *key, double v)
{
    char b[64];
    if (isfinite(v))
        snprintf(b, sizeof b, "%.9g", v);
    else
        snprintf(b, sizeof b, "null");
    j_key(j, key);
    j_put(j, b);
}

void ug_j_int(ug_json *j, const char *key, long long v)
{
    char b[32];
    snprintf(b, sizeof b, "%lld", v);
    j_key(j, key);
    j_put(j, b);
}

void ug_j_bool(ug_json *j, const char *key, int v)
{
    j_key(j, key);
    j_put(j, v ? "true" : "false");
}

void ug_j_raw(ug_json *j, const char *key, const char *json)
{
    j_key(j, key);
    j_put(j, json);
}

const char *ug_j_end(ug_json *j)
{
    j_put(j, "}");
    return j->buf;
}

void ug_j_free(ug_json *j)
{
    free(j->buf);
    memset(j, 0, sizeof *j);
}

/* ------------------------------------------------------------ trace */

static FILE *trace_fp;
static char trace_path[1024], trace_tmp[1100];

int ug_trace_open(const char *path)
{
    snprintf(trace_path, sizeof trace_path, "%s", path);
    snprintf(trace_tmp, sizeof trace_tmp, "%s.tmp.%ld", path, (long)getpid());
    trace_fp = fopen(trace_tmp, "w");
    if (!trace_fp) {
        fprintf(stderr, "ulygpu: cannot write the trace %s: ", trace_tmp);
        perror("");
        return -1;
    }
    return 0;
}

void ug_trace_line(ug_json *j)
{
    const char *s = ug_j_end(j);
    if (trace_fp) {
        if (fputs(s, trace_fp) < 0 || fputc('\n', trace_fp) < 0) {
            fprintf(stderr, "ulygpu: trace write failed\n");
            fclose(trace_fp);
            trace_fp = NULL;
        } else {
            fflush(trace_fp);
        }
    }
    ug_j_free(j);
}

void ug_trace_close(int ok)
{
    if (!trace_fp) return;
    const int bad = fflush(trace_fp) != 0 || fsync(fileno(trace_fp)) != 0;
    fclose(trace_fp);
    trace_fp = NULL;
    char final_path[1100];
    snprintf(final_path, sizeof final_path, "%s%s", trace_path, ok && !bad ? "" : ".failed");
    if (rename(trace_tmp, final_path) != 0) perror("ulygpu: cannot rename the trace");
    else printf("ulygpu: trace written to %s\n", final_path);
}
