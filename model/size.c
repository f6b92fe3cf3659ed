/* size.c: parsing of sizes like 131072, 128K, 1M, 1e6, 2^40 into exact
 * integers. K, M, G, T are powers of 1024 (the project's convention:
 * 1M = 1,048,576 tokens). Fractions, zero, negatives, overflow and trailing
 * garbage are rejected with a reason. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ulysim.h"

#define SIZE_MAX_VALUE ((int64_t)1 << 62)

static uly_status bad(const char *s, const char *what, char *why, size_t n)
{
    if (why && n) snprintf(why, n, "'%.40s': %s", s, what);
    return ULY_EINVAL;
}

uly_status uly_size_parse(const char *s, int64_t *out, char *why, size_t n)
{
    const char *valid = "must be a positive integer like 131072, 128K, 1M, 1e6 or 2^20";
    if (!s || !*s) return bad(s ? s : "", "empty size: must be a positive integer like 131072, 128K, 1M, 1e6", why, n);
    const char *p = s;
    if (*p == '-') return bad(s, "negative or -0: must be a positive integer", why, n);
    if (*p == '+') p++;
    if (!isdigit((unsigned char)*p)) return bad(s, valid, why, n);

    /* mantissa: digits, optional fraction (allowed only when an exponent
     * makes the value an integer, as in 1.5e3) */
    unsigned __int128 mant = 0;
    int frac_digits = 0, seen_dot = 0;
    for (; isdigit((unsigned char)*p) || (*p == '.' && !seen_dot); p++) {
        if (*p == '.') { seen_dot = 1; continue; }
        if (mant > ((unsigned __int128)1 << 100)) return bad(s, "too large: at most 2^62", why, n);
        mant = mant * 10 + (unsigned)(*p - '0');
        /* 10^30 still fits the 128-bit arithmetic below */
        if (seen_dot && ++frac_digits > 30) return bad(s, "too many decimals: sizes are whole numbers", why, n);
    }
    unsigned __int128 v = mant;
    if (*p == '^') {
        /* base^exp, integers only */
        if (seen_dot) return bad(s, valid, why, n);
        p++;
        if (!isdigit((unsigned char)*p)) return bad(s, valid, why, n);
        long e = 0;
        for (; isdigit((unsigned char)*p); p++) {
            e = e * 10 + (*p - '0');
            if (e > 200) return bad(s, "too large", why, n);
        }
        v = 1;
        for (long i = 0; i < e; i++) {
            v *= mant;
            if (v > (unsigned __int128)SIZE_MAX_VALUE) return bad(s, "too large: at most 2^62", why, n);
        }
    } else if (*p == 'e' || *p == 'E') {
        p++;
        int neg = 0;
        if (*p == '+') p++;
        else if (*p == '-') { neg = 1; p++; }
        if (!isdigit((unsigned char)*p)) return bad(s, valid, why, n);
        long e = 0;
        for (; isdigit((unsigned char)*p); p++) {
            e = e * 10 + (*p - '0');
            /* 1e-400 is a fraction, not a large size */
            if (e > 100) return bad(s, neg ? "not an integer: sizes are whole numbers" : "too large: at most 2^62", why, n);
        }
        if (neg) e = -e;
        e -= frac_digits;
        frac_digits = 0;
        for (; e > 0; e--) {
            v *= 10;
            if (v > (unsigned __int128)SIZE_MAX_VALUE) return bad(s, "too large: at most 2^62", why, n);
        }
        for (; e < 0; e++) {
            if (v % 10) return bad(s, "not an integer: sizes are whole numbers", why, n);
            v /= 10;
        }
    }
    if (frac_digits > 0) {
        /* 1.5 alone, or 1.5K: only whole results are sizes */
        unsigned __int128 div = 1;
        for (int i = 0; i < frac_digits; i++) div *= 10;
        unsigned __int128 mul = 1;
        switch (toupper((unsigned char)*p)) {
        case 'K': mul = 1024; break;
        case 'M': mul = 1024 * 1024; break;
        case 'G': mul = 1024ULL * 1024 * 1024; break;
        case 'T': mul = 1024ULL * 1024 * 1024 * 1024; break;
        default: return bad(s, "not an integer: sizes are whole numbers", why, n);
        }
        if ((v * mul) % div) return bad(s, "not an integer: sizes are whole numbers", why, n);
        v = v * mul / div;
        p++;
    } else {
        unsigned __int128 mul = 1;
        switch (*p) {
        case 'k': case 'K': mul = 1024; p++; break;
        case 'm': case 'M': mul = 1024 * 1024; p++; break;
        case 'g': case 'G': mul = 1024ULL * 1024 * 1024; p++; break;
        case 't': case 'T': mul = 1024ULL * 1024 * 1024 * 1024; p++; break;
        default: break;
        }
        v *= mul;
    }
    if (*p) return bad(s, "trailing characters: must be a positive integer like 131072, 128K, 1M, 1e6", why, n);
    if (v > (unsigned __int128)SIZE_MAX_VALUE) return bad(s, "too large: at most 2^62", why, n);
    if (v == 0) return bad(s, "zero: must be at least 1", why, n);
    *out = (int64_t)v;
    return ULY_OK;
}
