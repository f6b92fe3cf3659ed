/* args_value.c: the values of ulysim's options, as typed: sizes with their
 * suffixes, lists and ranges, counts, bandwidths with their units,
 * fractions and milliseconds; each refused with one line that names the
 * flag, the value as typed and what would be valid (args.c reads the
 * options and calls these). */
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

double sim_strtod_dec(const char *v, char **end)
{
    const char *p = v;
    if (*p == '+' || *p == '-') p++;
    const int digit = (*p >= '0' && *p <= '9') || (*p == '.' && p[1] >= '0' && p[1] <= '9');
    char *e = NULL;
    const double x = digit ? strtod(v, &e) : NAN;
    /* a digit first rules out inf, nan and blanks; an x in what strtod took is hex */
    for (const char *q = v; digit && q < e; q++)
        if (*q == 'x' || *q == 'X') {
            *end = (char *)v;
            return NAN;
        }
    *end = digit ? e : (char *)v;
    return x;
}

/* A size; part of a list or range (what: "upper bound", ...) when whole is
 * not v: the message names the whole value as typed, then the part. */
static int size_of(const char *flag, const char *whole, const char *what, const char *v, int64_t hi,
                         int64_t *out, char *why, size_t n)
{
    char lib[160] = "", qb[80], qw[80];
    uly_status st = uly_size_parse(v, out, lib, sizeof lib);
    if (st == ULY_OK) return 0;
    sim_one_line(lib);
    if (!lib[0]) snprintf(lib, sizeof lib, "not a size");
    /* the library's message may start with the value itself: say it once */
    const char *msg = lib;
    text_quote(v, qb, sizeof qb);
    size_t ql = strlen(qb);
    if (strncmp(msg, qb, ql) == 0 && msg[ql] == ':') msg += ql + 1;
    while (*msg == ' ') msg++;
    /* past what any size holds (2^62): the flag's own bound is the one to
     * state, where it has one (--seq: 1T), as a value past it but in range
     * is told */
    if (hi < INT64_MAX && strncmp(msg, "too large", 9) == 0) {
        if (whole != v)
            return sim_fail(why, n, "%s %s: %s %s: too large (valid: at most %lld)", flag,
                            text_quote(whole, qw, sizeof qw), what, qb, (long long)hi);
        return sim_fail(why, n, "%s %s: too large (valid: 1..%lld)", flag, qb, (long long)hi);
    }
    if (whole != v)
        return sim_fail(why, n, "%s %s: %s %s: %s (valid: positive integers, e.g. 131072, 128K, 1M, 1e6, 2^20, in a "
                        "list A,B,C or ranges LO..HI; K, M, G, T are powers of 1024)",
                        flag, text_quote(whole, qw, sizeof qw), what, qb, msg);
    return sim_fail(why, n, "%s %s: %s (valid: a positive integer, e.g. 131072, 128K, 1M, 1e6, 2^20; K, M, G, T are powers of 1024)",
                flag, qb, msg);
}

/* hi: the flag's largest value, stated when a size is past what any size
 * holds; INT64_MAX where the flag's bound is checked later */
int sim_parse_size(const char *flag, const char *v, int64_t hi, int64_t *out, char *why, size_t n)
{
    return size_of(flag, v, NULL, v, hi, out, why, n);
}

/* A count in 1..hi, hi being libulysim's bound on the field
 * (uly_workload_check): said here as the flag's range, since the library's
 * own message states 0.. (its 0 is "not given", which the flag never is). */
int sim_parse_count(const char *flag, const char *v, int64_t hi, int64_t *out, char *why, size_t n)
{
    char qb[80];
    int64_t x = 0;
    int rc = sim_parse_size(flag, v, hi, &x, why, n);
    if (rc) return rc;
    if (x > hi) return sim_fail(why, n, "%s %s: too large (valid: 1..%lld)", flag, text_quote(v, qb, sizeof qb), (long long)hi);
    *out = x;
    return 0;
}

/* 1 when v is a number written with thousands separators (1,000,000;
 * 131,072): 1..3 digits, then groups of a comma and three digits, one of
 * them starting with 0 (a list's item never does: 8,128,512 is a list of GPU
 * counts). A comma separates a list's items, so such a number would be read
 * as the list 1, 000, 000 and refused for its zero, which says nothing of
 * the comma. */
static int thousands_grouped(const char *v)
{
    int lead = 0, zero_led = 0;
    while (isdigit((unsigned char)v[lead])) lead++;
    if (lead < 1 || lead > 3 || v[lead] != ',') return 0;
    for (const char *p = v + lead; *p; p += 4) {
        if (p[0] != ',' || !isdigit((unsigned char)p[1]) || !isdigit((unsigned char)p[2]) ||
            !isdigit((unsigned char)p[3]))
            return 0;
        zero_led |= p[1] == '0';
    }
    return zero_led;
}

/* A list: comma-separated values or ranges A..B (A, 2A, 4A, ... up to B). */
int sim_parse_list(const char *flag, const char *v, int allow_list, int64_t hi_limit,
                      int64_t *out, int *n_out, char *why, size_t n)
{
    char qb[80];
    int count = 0;
    size_t len = strlen(v);
    if (len == 0) return sim_parse_size(flag, v, hi_limit, &out[0], why, n);
    if (thousands_grouped(v)) {
        char digits[64];
        size_t k = 0;
        for (const char *p = v; *p && k + 1 < sizeof digits; p++)
            if (*p != ',') digits[k++] = *p;
        digits[k] = 0;
        return sim_fail(why, n, "%s %s: commas are not accepted in a number (a comma separates the items of a "
                        "list; valid: %s, or a suffix or exponent: 1M = 1048576, 1e6 = 1000000)", flag,
                        text_quote(v, qb, sizeof qb), digits);
    }
    if (!allow_list && (strchr(v, ',') || strstr(v, "..")))
        return sim_fail(why, n, "%s %s: a list or range is only valid with 'sweep' (valid here: one value, e.g. 64)",
                    flag, text_quote(v, qb, sizeof qb));
    char *copy = malloc(len + 1);
    if (!copy) return sim_fail(why, n, "out of memory");
    memcpy(copy, v, len + 1);
    int rc = 0;
    char *p = copy;
    /* a message names the value as typed (v), then the piece of it that is
     * wrong: '8..' is an open range, not an empty --gpus */
    const int one_item = !strchr(v, ',');
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = 0;
        char *dots = strstr(p, "..");
        int64_t lo, hi;
        if (!p[0] || (dots && (dots == p || !dots[2]))) {
            rc = sim_fail(why, n, "%s %s: %s (valid: positive integers in a list A,B,C or ranges LO..HI, e.g. "
                          "8,16,64 or 8..1024)", flag, text_quote(v, qb, sizeof qb),
                          !p[0] ? "an empty item in the list" : dots == p ? "the range has no lower bound"
                                                                          : "the range has no upper bound");
            break;
        }
        if (dots) {
            *dots = 0;
            if ((rc = size_of(flag, v, "lower bound", p, hi_limit, &lo, why, n)) != 0) break;
            if ((rc = size_of(flag, v, "upper bound", dots + 2, hi_limit, &hi, why, n)) != 0) break;
            if (lo > hi) {
                rc = sim_fail(why, n, "%s %s: range bounds reversed (valid: LO..HI with LO <= HI, e.g. 8K..1M)",
                          flag, text_quote(v, qb, sizeof qb));
                break;
            }
        } else {
            if ((rc = one_item ? sim_parse_size(flag, v, hi_limit, &lo, why, n) : size_of(flag, v, "item", p, hi_limit, &lo, why, n)) != 0)
                break;
            hi = lo;
        }
        if (hi > hi_limit) {
            rc = sim_fail(why, n, "%s %s: %lld is too large (valid: at most %lld)", flag, text_quote(v, qb, sizeof qb),
                      (long long)hi, (long long)hi_limit);
            break;
        }
        for (int64_t x = lo; x <= hi; x *= 2) {
            if (count >= SIM_LIST_MAX) {
                rc = sim_fail(why, n, "%s %s: more than %d values (valid: a shorter list or range)", flag,
                          text_quote(v, qb, sizeof qb), SIM_LIST_MAX);
                break;
            }
            out[count++] = x;
            if (x > INT64_MAX / 2) break;
        }
        if (rc) break;
        if (!comma) break;
        p = comma + 1;
    }
    free(copy);
    /* a value listed twice would be priced twice, its rows repeated */
    for (int i = 1; !rc && i < count; i++)
        for (int j = 0; j < i; j++)
            if (out[i] == out[j]) {
                rc = sim_fail(why, n, "%s %s: %lld is listed twice (valid: each value once)", flag,
                              text_quote(v, qb, sizeof qb), (long long)out[i]);
                break;
            }
    if (rc) return rc;
    *n_out = count;
    return 0;
}

/* A bandwidth with its unit, decimal as network and datasheet figures are:
 * 400Gb/s, 50GB/s, 25 GB/s, 800Mb/s, 1.6Tb/s ("bps"/"Bps" too); bytes/s out. */
int sim_parse_bw(const char *flag, const char *v, double *out, char *why, size_t n)
{
    char qb[80], *end = NULL;
    const double x = sim_strtod_dec(v, &end);
    while (end && *end == ' ') end++;
    const char *unit = end; /* as typed, for the range below */
    double scale = 0;
    if (end && *end) {
        static const struct { char c; double f; } pre[] = {{'k', 1e3}, {'K', 1e3}, {'M', 1e6}, {'G', 1e9}, {'T', 1e12}};
        double f = 1;
        for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
            if (*end == pre[i].c) {
                f = pre[i].f;
                end++;
                break;
            }
        if (!strcmp(end, "B/s") || !strcmp(end, "Bps")) scale = f;
        else if (!strcmp(end, "b/s") || !strcmp(end, "bps")) scale = f / 8.0;
    }
    if (!v[0] || !(scale > 0) || !(x > 0) || !isfinite(x))
        return sim_fail(why, n, "%s %s: not a bandwidth (valid: a positive number with its unit, e.g. 400Gb/s or "
                        "50GB/s, per GPU per direction)", flag, text_quote(v, qb, sizeof qb));
    /* libulysim holds a cluster's links to 1 MB/s..1 PB/s (uly_cluster_check);
     * checked here, in the unit typed, so that a what-if value out of it is
     * this flag's error and not the preset's (--cluster 'dgx-h100':
     * intra_bw_Bps = ...). Always, even where the link goes unused (one
     * node, one GPU per node): what a flag accepts does not hang on others. */
    if (!(x * scale >= 1e6 && x * scale <= 1e15))
        return sim_fail(why, n, "%s %s: out of range (valid: %g..%g %s per GPU per direction)",
                        flag, text_quote(v, qb, sizeof qb), 1e6 / scale, 1e15 / scale, unit);
    *out = x * scale;
    return 0;
}

/* A fraction in (0, 1]. */
int sim_parse_fraction(const char *flag, const char *v, double *out, char *why, size_t n)
{
    char qb[80], *end = NULL;
    const double x = sim_strtod_dec(v, &end);
    if (!v[0] || !end || *end || !(x > 0 && x <= 1))
        return sim_fail(why, n, "%s %s: not a fraction (valid: a number in (0, 1], e.g. 0.25)", flag,
                        text_quote(v, qb, sizeof qb));
    if (x < DBL_MIN) /* a subnormal: no density of blocks, and its products underflow to 0 */
        return sim_fail(why, n, "%s %s: below the smallest normal number %.3g (valid: a number in [%.3g, 1], e.g. 0.25)",
                        flag, text_quote(v, qb, sizeof qb), DBL_MIN, DBL_MIN);
    *out = x;
    return 0;
}

/* Milliseconds of host work: a decimal in [0, 3.6e6] (an hour) */
int sim_parse_ms(const char *flag, const char *v, double *out, char *why, size_t n)
{
    char qb[80], *end = NULL;
    const double x = sim_strtod_dec(v, &end);
    if (!v[0] || !end || *end || !(x >= 0 && x <= 3.6e6))
        return sim_fail(why, n, "%s %s: not a time in milliseconds (valid: a number in [0, 3600000], e.g. 12.5)", flag,
                        text_quote(v, qb, sizeof qb));
    *out = x;
    return 0;
}
