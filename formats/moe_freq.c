/* moe_freq.c: Megatron-LM's --moe-layer-freq read as ulysim places MoE
 * layers (moe_freq.h): an integer, or a pattern of 0 and 1 as Python
 * evaluates it. The command line's flag and a log's argument block
 * (which prints the evaluated list) are read here alike. */
#include "moe_freq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text_quote.h"

/* A pattern of Megatron-LM's --moe-layer-freq as Python evaluates it:
 * lists of 0 and 1 ([1,0,1,0]), concatenated (+) and repeated (* N, N *),
 * in parentheses: "([0]*3+[1]*58)". A recursive descent over p; the layers
 * go to out (at most cap); -1 when the text is not such an expression. */
typedef struct freq_text {
    const char *p;
    uint8_t *out;
    int n, cap;
    int over; /* 1: more layers than cap */
} freq_text;

static void freq_blank(freq_text *t)
{
    while (*t->p == ' ') t->p++;
}

static int freq_int(freq_text *t, long *v)
{
    freq_blank(t);
    char *end = NULL;
    *v = strtol(t->p, &end, 10);
    if (end == t->p) return -1;
    t->p = end;
    return 0;
}

static int freq_sum(freq_text *t);

/* atom: [a, b, ...] or (sum); its layers appended from out[n] */
static int freq_atom(freq_text *t)
{
    freq_blank(t);
    if (*t->p == '(') {
        t->p++;
        if (freq_sum(t)) return -1;
        freq_blank(t);
        return *t->p == ')' ? (t->p++, 0) : -1;
    }
    if (*t->p != '[') return -1;
    t->p++;
    for (;;) {
        long v;
        if (freq_int(t, &v) || (v != 0 && v != 1)) return -1;
        if (t->n >= t->cap) return t->over = 1, -1;
        t->out[t->n++] = (uint8_t)v;
        freq_blank(t);
        if (*t->p == ']') return t->p++, 0;
        if (*t->p++ != ',') return -1;
    }
}

/* term: atom (* N)*, or N * atom: the atom's layers repeated */
static int freq_term(freq_text *t)
{
    const int from = t->n;
    long times = 1, v;
    freq_blank(t);
    if (*t->p >= '0' && *t->p <= '9') {
        if (freq_int(t, &times)) return -1;
        freq_blank(t);
        if (*t->p++ != '*') return -1;
    }
    if (freq_atom(t)) return -1;
    for (freq_blank(t); *t->p == '*'; freq_blank(t)) {
        t->p++;
        if (freq_int(t, &v) || v < 0) return -1;
        times *= v;
        if (times > t->cap) return t->over = 1, -1;
    }
    const int len = t->n - from;
    if ((long)from + (long)len * times > t->cap) return t->over = 1, -1;
    for (long r = 1; r < times; r++) memcpy(t->out + t->n, t->out + from, (size_t)len), t->n += len;
    if (times == 0) t->n = from;
    return 0;
}

static int freq_sum(freq_text *t)
{
    if (freq_term(t)) return -1;
    for (freq_blank(t); *t->p == '+'; freq_blank(t)) {
        t->p++;
        if (freq_term(t)) return -1;
    }
    return 0;
}

int moe_freq_parse(const char *name, const char *v, int64_t layers, int64_t *dense_first, int64_t *every,
                   int64_t *entries, char *why, size_t n)
{
    char qb[80];
    *entries = 0;
    if (!strchr(v, '[')) { /* an integer k: layer i is MoE when i % k == 0 */
        char *end = NULL;
        const long long k = strtoll(v, &end, 10);
        if (!v[0] || *end || k < 1 || k > (1 << 20))
            return snprintf(why, n, "%s %s: not a frequency (valid: an integer 1.. or a pattern such as "
                            "\"([0]*3+[1]*58)\")", name, text_quote(v, qb, sizeof qb)), 2;
        *dense_first = 0, *every = k;
        return 0;
    }
    const int64_t cap = layers > 0 ? layers + 1 : MOE_FREQ_MAX_ENTRIES + 1;
    uint8_t *moe = malloc((size_t)cap);
    if (!moe) return snprintf(why, n, "out of memory"), 2;
    freq_text t = {v, moe, 0, (int)cap, 0};
    int ok = !freq_sum(&t) && (freq_blank(&t), !*t.p);
    if (!ok || (layers > 0 && t.n != layers) || t.n > MOE_FREQ_MAX_ENTRIES) {
        free(moe);
        if (!ok && !t.over)
            return snprintf(why, n, "%s %s: not a pattern of 0 and 1 (valid: lists, + and *, e.g. "
                            "\"([0]*3+[1]*58)\")", name, text_quote(v, qb, sizeof qb)), 2;
        if (layers <= 0)
            return snprintf(why, n, "%s %s: more than %d layers (valid: one entry per layer)", name,
                            text_quote(v, qb, sizeof qb), MOE_FREQ_MAX_ENTRIES), 2;
        return snprintf(why, n, "%s %s: %s layers, and the model has %lld (valid: one entry per layer)", name,
                        text_quote(v, qb, sizeof qb), t.over || t.n > layers ? "more" : "fewer", (long long)layers), 2;
    }
    /* the first MoE layer f, the next one f + k; every k-th after f, the rest dense */
    const int64_t all = t.n;
    int64_t f = 0, k = 1;
    while (f < all && !moe[f]) f++;
    while (f + k < all && !moe[f + k]) k++;
    ok = f < all;
    for (int64_t i = 0; ok && i < all; i++) ok = moe[i] == (i >= f && (i - f) % k == 0);
    free(moe);
    if (!ok)
        return snprintf(why, n, "%s %s: %s (valid: the first dense layers, then every k-th MoE, e.g. "
                        "\"([0]*3+[1]*58)\" or \"[1,0,1,0]\")", name, text_quote(v, qb, sizeof qb),
                        f < all ? "a pattern ulysim does not place" : "no MoE layer"), 2;
    *dense_first = f, *every = k, *entries = all;
    return 0;
}
