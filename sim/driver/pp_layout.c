/* pp_layout.c: Megatron-Core's pipeline layout string
 * (--pipeline-model-parallel-layout; ulysim's --pp-layout), read as
 * megatron/core/transformer/pipeline_parallel_layer_layout.py reads it
 * (PipelineParallelLayerLayout.parse_str_to_list and validate_layer_layout),
 * and reduced to what ulysim prices: the layers of each pipeline rank (chunk
 * c of pp x V runs on rank c mod pp), then the first and last ranks' and
 * the most of a middle one (docs/model.md, "Uneven pipelines").
 *
 * The grammar: commas are cosmetic; "(X)*n" repeats X (no ')' inside) n
 * times, then "x*n" repeats one character; '|' ends a chunk; a chunk holds
 * E (the embedding), t (a transformer layer), m (a multi-token prediction
 * layer) and L (the loss). The first element is E and the last L, each
 * once; the chunks divide by pp. */
#include <stdlib.h>
#include <string.h>

#include "args.h"

/* the longest layout unrolled: far beyond any model's layers and stages */
#define LAYOUT_MAX_CHARS (1 << 20)

/* Appends c n times to the buffer (grown as needed); 0, or -1 past the cap */
static int put(char **buf, size_t *len, size_t *cap, const char *c, size_t clen, long long times)
{
    for (long long k = 0; k < times; k++) {
        if (*len + clen + 1 > LAYOUT_MAX_CHARS) return -1;
        if (*len + clen + 1 > *cap) {
            size_t nc = *cap ? *cap * 2 : 256;
            while (nc < *len + clen + 1) nc *= 2;
            char *b = realloc(*buf, nc);
            if (!b) return -1;
            *buf = b, *cap = nc;
        }
        memcpy(*buf + *len, c, clen);
        *len += clen;
        (*buf)[*len] = 0;
    }
    return 0;
}

/* "*n" at s: n (1..LAYOUT_MAX_CHARS) and the characters it takes, else 0 */
static size_t repeat_at(const char *s, long long *n)
{
    if (s[0] != '*' || s[1] < '0' || s[1] > '9') return 0;
    long long x = 0;
    size_t k = 1;
    while (s[k] >= '0' && s[k] <= '9') {
        if (x <= LAYOUT_MAX_CHARS) x = x * 10 + (s[k] - '0');
        k++;
    }
    *n = x;
    return k;
}

/* One unrolling pass: groups ("(X)*n", X without ')') when groups, else
 * single characters ("x*n"), left to right as re.sub scans */
static char *unroll(const char *in, int groups, int *too_long)
{
    char *out = NULL;
    size_t len = 0, cap = 0;
    long long n = 0;
    if (put(&out, &len, &cap, "", 0, 1)) goto fail;
    for (size_t i = 0; in[i];) {
        if (groups && in[i] == '(') {
            const char *close = strchr(in + i + 1, ')');
            size_t r;
            if (close && close > in + i + 1 && (r = repeat_at(close + 1, &n)) > 0) {
                if (n > LAYOUT_MAX_CHARS || put(&out, &len, &cap, in + i + 1, (size_t)(close - in - i - 1), n))
                    goto fail;
                i = (size_t)(close - in) + 1 + r;
                continue;
            }
        }
        size_t r;
        if (!groups && in[i + 1] && (r = repeat_at(in + i + 1, &n)) > 0) {
            if (n > LAYOUT_MAX_CHARS || put(&out, &len, &cap, in + i, 1, n)) goto fail;
            i += 1 + r;
            continue;
        }
        if (put(&out, &len, &cap, in + i, 1, 1)) goto fail;
        i++;
    }
    return out;
fail:
    free(out);
    *too_long = 1;
    return NULL;
}

int sim_pp_layout_parse(const char *flag, const char *s, int64_t pp, sim_pp_layout *o, char *why, size_t n)
{
    char qb[80];
    memset(o, 0, sizeof *o);
    if (!s || !s[0]) return sim_fail(why, n, "%s: empty (valid: Megatron-Core's layout, e.g. \"Et*3|(tt|)*6,ttL\")", flag);
    /* commas are cosmetic */
    char *plain = malloc(strlen(s) + 1);
    if (!plain) return sim_fail(why, n, "%s: out of memory", flag);
    size_t k = 0;
    for (const char *p = s; *p; p++)
        if (*p != ',') plain[k++] = *p;
    plain[k] = 0;
    int too_long = 0;
    char *g = unroll(plain, 1, &too_long);
    free(plain);
    char *u = g ? unroll(g, 0, &too_long) : NULL;
    free(g);
    if (!u)
        return sim_fail(why, n, "%s %s: unrolls past %d characters (valid: a layout of the model's layers)", flag,
                        text_quote(s, qb, sizeof qb), LAYOUT_MAX_CHARS);
    int rc = 0;
    int64_t chunks = 1, embeds = 0, losses = 0, layers = 0;
    for (const char *p = u; *p; p++) {
        if (*p == '|') chunks++;
        else if (*p == 'E') embeds++;
        else if (*p == 'L') losses++;
        else if (*p == 't') layers++;
        else if (*p == 'm') {
            rc = sim_fail(why, n, "%s: multi-token prediction layers ('m') are not priced by ulysim (valid: E, t, L, "
                          "'|', '(X)*n', 'x*n')", flag);
            goto done;
        } else {
            rc = sim_fail(why, n, "%s %s: '%c' is not a layer (valid: E the embedding, t a transformer layer, L the "
                          "loss, '|' between chunks, '(X)*n' and 'x*n' repeats)", flag, text_quote(s, qb, sizeof qb),
                          *p);
            goto done;
        }
    }
    const size_t ul = strlen(u);
    if (embeds != 1 || losses != 1 || u[0] != 'E' || u[ul - 1] != 'L') {
        rc = sim_fail(why, n, "%s %s: the embedding E must come first and the loss L last, each once, as "
                      "Megatron-Core requires", flag, text_quote(s, qb, sizeof qb));
        goto done;
    }
    if (pp < 2 || chunks % pp) {
        rc = sim_fail(why, n, "%s %s: %lld chunk%s over %lld pipeline stages (valid: a multiple of --pp's stages, "
                      "--pp P > 1 given)", flag, text_quote(s, qb, sizeof qb), (long long)chunks, chunks == 1 ? "" : "s",
                      (long long)pp);
        goto done;
    }
    /* each rank's layers: chunk c runs on rank c mod pp */
    int64_t *rank = calloc((size_t)pp, sizeof *rank);
    if (!rank) {
        rc = sim_fail(why, n, "%s: out of memory", flag);
        goto done;
    }
    int64_t c = 0;
    for (const char *p = u; *p; p++) {
        if (*p == '|') c++;
        else if (*p == 't') rank[c % pp]++;
    }
    o->chunks = chunks, o->vpp = chunks / pp, o->layers = layers;
    o->first = rank[0], o->last = rank[pp - 1];
    for (int64_t r = 1; r + 1 < pp; r++)
        if (rank[r] > o->mid_most) o->mid_most = rank[r];
    int64_t empty = -1;
    for (int64_t r = 0; r < pp && empty < 0; r++)
        if (rank[r] < 1) empty = r;
    free(rank);
    if (empty >= 0)
        rc = sim_fail(why, n, "%s %s: pipeline rank %lld holds no transformer layer; ulysim prices stages of one "
                      "layer or more", flag, text_quote(s, qb, sizeof qb), (long long)empty);
done:
    free(u);
    return rc;
}
