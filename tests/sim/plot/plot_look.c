/* plot_look.c: what a reader of a figure sees, checked on the SVG gnuplot
 * writes (plot_check.h, "look"): the texts (where, how large, turned how
 * far) and the data markers (where, how large, which colour), read from the
 * SVG terminal's <g transform="translate(x,y) rotate(a)" font-size=..>
 * <text>..</text></g> and <use xlink:href='#gpPtN' transform='translate(x,y)
 * scale(s)' color=..>. A text's box is estimated from its characters (the
 * advance widths of DejaVu Sans, gnuplot's "Sans", in classes: i 0.28 em,
 * digits 0.64, m 0.97...; one em high): close enough to tell "10 µs100 µs"
 * from labels with a gap between them, which is what the rules are for.
 *
 * The rules (look_check; each names the figure's elements it finds wrong):
 *   size      no text smaller than LOOK_MIN_PT points as printed (a canvas
 *             wider than a page, LOOK_PAGE_W, is printed a page wide: its
 *             fonts shrink with it); the figures' smallest is their font
 *             size less two
 *   canvas    every text inside the image: a rotated label does not spill
 *             past the frame
 *   overlap   no two texts overlap (tick labels that run into each other)
 *   title     nothing above the title (a legend above it reads as the title)
 *   markers   (line figures) every data marker the same size, and no marker
 *             of one colour hidden under another's (centres at least a
 *             radius apart)
 *   ticks     (line figures) every marker between the lowest and the highest
 *             labelled y tick; and at least LOOK_MIN_TICKS labelled ticks on
 *             each axis where asked
 *   named     (validation-runs) every data marker has a text beside it
 *   lanes     (timeline) every operation named in the predicted lane is
 *             named in the measured lane */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_check.h"

#define LOOK_MIN_PT 6.9
#define LOOK_PAGE_W 504.0 /* a page's width in points (7 in): a wider canvas is printed smaller */
#define LOOK_EM_W 0.6 /* a character's width, in em (Sans), where a class below does not say */
#define LOOK_PI 3.14159265358979323846

typedef struct ltext {
    long at; /* its place in the file */
    double x, y, size, rot;
    int anchor; /* -1 start, 0 middle, 1 end */
    char s[160];
    double x0, y0, x1, y1; /* its box on the page */
    double ua, ub, va, vb; /* its box along and across its baseline, from the anchor */
} ltext;

typedef struct lmark {
    double x, y, r;
    char color[40];
    int after; /* the text just before it in the file, -1 none: a legend's sample follows its text */
} lmark;

typedef struct lfig {
    double w, h;
    ltext *t;
    int nt;
    lmark *m;
    int nm;
} lfig;

/* The number after key= in s (key like "width=\"" or "scale("), NAN if absent. */
static double attr_num(const char *s, const char *end, const char *key)
{
    const char *p = strstr(s, key);
    return p && p < end ? strtod(p + strlen(key), NULL) : NAN;
}

/* A character's advance width in DejaVu Sans, in em (its metrics, by class). */
static double char_em(const char *c)
{
    static const struct {
        const char *set;
        double em;
    } W[] = {{" ", 0.32}, {"ijl|'", 0.28}, {"ftr", 0.4}, {"()[]{}", 0.39}, {".,:;", 0.32}, {"-", 0.36},
             {"m", 0.97}, {"w", 0.82}, {"MW", 0.93}, {"0123456789", 0.64}, {"ABCDEFGHIJKLNOPQRSTUVXYZ", 0.7}};
    if ((unsigned char)*c >= 0x80) return 0.7; /* µ, ×, ±: a wide-ish glyph */
    for (size_t i = 0; i < sizeof W / sizeof W[0]; i++)
        if (strchr(W[i].set, *c)) return W[i].em;
    return LOOK_EM_W;
}

/* The characters of a text element, tags dropped, entities decoded; *em its
 * width in em (a UTF-8 sequence counted once); *nchar its characters. */
static void text_content(const char *p, const char *end, char *dst, size_t n, int *nchar, double *em)
{
    *em = 0;
    size_t k = 0;
    *nchar = 0;
    for (int tag = 0; p < end && k + 1 < n; p++) {
        if (*p == '<') tag = 1;
        else if (*p == '>') tag = 0;
        else if (!tag) {
            if (*p == '&') {
                const char *semi = strchr(p, ';');
                dst[k++] = semi && !strncmp(p, "&amp;", 5) ? '&' : semi && !strncmp(p, "&lt;", 4) ? '<' : '?';
                if (semi) p = semi;
            } else {
                dst[k++] = *p;
            }
            if (((unsigned char)dst[k - 1] & 0xC0) != 0x80) (*nchar)++, *em += char_em(&dst[k - 1]);
        }
    }
    dst[k] = 0;
}

static void text_box(ltext *t, double em)
{
    const double w = em * t->size, h = t->size;
    /* along the baseline from the anchor: [a, b]; across: the ink of most glyphs, cap height 0.72 em above
     * the baseline to 0.1 em below (a descender reaching into the next line does not make two lines one) */
    const double a = t->anchor < 0 ? 0 : t->anchor == 0 ? -w / 2 : -w, b = a + w;
    t->ua = a, t->ub = b, t->va = -0.72 * h, t->vb = 0.1 * h;
    const double c = cos(t->rot * LOOK_PI / 180), s = sin(t->rot * LOOK_PI / 180);
    double xs[4], ys[4];
    const double u[4] = {a, b, a, b}, v[4] = {-0.72 * h, -0.72 * h, 0.1 * h, 0.1 * h};
    for (int i = 0; i < 4; i++) xs[i] = t->x + u[i] * c - v[i] * s, ys[i] = t->y + u[i] * s + v[i] * c;
    t->x0 = t->x1 = xs[0], t->y0 = t->y1 = ys[0];
    for (int i = 1; i < 4; i++) {
        t->x0 = fmin(t->x0, xs[i]), t->x1 = fmax(t->x1, xs[i]);
        t->y0 = fmin(t->y0, ys[i]), t->y1 = fmax(t->y1, ys[i]);
    }
}

static int svg_load(const char *path, lfig *f)
{
    size_t len;
    char *s = slurp(path, &len);
    if (!s) return fail("cannot read %s", path);
    memset(f, 0, sizeof *f);
    const char *svg = strstr(s, "<svg");
    f->w = svg ? attr_num(svg, s + len, "width=\"") : NAN;
    f->h = svg ? attr_num(svg, s + len, "height=\"") : NAN;
    size_t cap = 64;
    f->t = malloc(cap * sizeof *f->t);
    f->m = malloc(cap * 4 * sizeof *f->m);
    for (const char *p = s; (p = strstr(p, "<g transform=\"translate(")) != NULL; p++) {
        const char *gt = strchr(p, '>'), *te = gt ? strstr(gt, "</text>") : NULL, *tb = gt ? strstr(gt, "<text") : NULL;
        if (!gt || !tb || !te || tb > strstr(gt, "</g>")) continue;
        if (f->nt == (int)cap) f->t = realloc(f->t, (cap *= 2) * sizeof *f->t);
        ltext *t = &f->t[f->nt];
        memset(t, 0, sizeof *t);
        t->at = p - s;
        t->x = attr_num(p, gt, "translate(");
        const char *comma = strchr(p + 22, ',');
        t->y = comma ? strtod(comma + 1, NULL) : NAN;
        const double rot = attr_num(p, gt, "rotate(");
        t->rot = isnan(rot) ? 0 : rot;
        t->size = attr_num(p, gt, "font-size=\"");
        const char *an = strstr(p, "text-anchor=\"");
        t->anchor = an && an < gt ? (an[13] == 's' ? -1 : an[13] == 'm' ? 0 : 1) : -1;
        int nchar;
        double em;
        text_content(tb, te, t->s, sizeof t->s, &nchar, &em);
        if (!nchar || isnan(t->size)) continue;
        text_box(t, em);
        f->nt++;
    }
    int mcap = (int)cap * 4;
    for (const char *p = s; (p = strstr(p, "<use xlink:href='#gpPt")) != NULL; p++) {
        const char *e = strstr(p, "/>");
        if (!e || !strstr(p, "translate(") || strstr(p, "translate(") > e) continue; /* a marker's definition */
        if (f->nm == mcap) f->m = realloc(f->m, (size_t)(mcap *= 2) * sizeof *f->m);
        lmark *m = &f->m[f->nm++];
        m->x = attr_num(p, e, "translate(");
        const char *comma = strchr(strstr(p, "translate("), ',');
        m->y = strtod(comma + 1, NULL);
        const double sc = attr_num(p, e, "scale(");
        m->r = isnan(sc) ? 1 : sc;
        m->after = -1;
        for (int i = 0; i < f->nt && f->t[i].at < p - s; i++) m->after = i;
        const char *c = strstr(p, "color='");
        snprintf(m->color, sizeof m->color, "%.*s", c && c < e ? (int)strcspn(c + 7, "'") : 0, c ? c + 7 : "");
    }
    free(s);
    return 0;
}

/* Two texts overlap: turned alike (x labels at 30 degrees), compared along
 * and across their baselines; else by their boxes on the page. */
static int boxes_meet(const ltext *a, const ltext *b)
{
    if (fabs(a->rot - b->rot) < 0.5) {
        const double c = cos(a->rot * LOOK_PI / 180), s = sin(a->rot * LOOK_PI / 180);
        const double du = (b->x - a->x) * c + (b->y - a->y) * s, dv = -(b->x - a->x) * s + (b->y - a->y) * c;
        return a->ua < du + b->ub && du + b->ua < a->ub && a->va < dv + b->vb && dv + b->va < a->vb;
    }
    return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

/* The legend's samples are markers too: gnuplot writes each entry's text,
 * then its sample, on one line. Data markers: the others (a point's own
 * label, drawn by a later plot, comes after every marker). */
static int is_legend_mark(const lfig *f, const lmark *m)
{
    if (m->after < 0) return 0;
    const ltext *t = &f->t[m->after];
    return fabs(t->y - t->size * 0.3 - m->y) < t->size * 0.6 && t->rot == 0 &&
           ((t->anchor < 0 && t->x0 > m->x && t->x0 - m->x < 6 * t->size) ||
            (t->anchor > 0 && t->x1 < m->x && m->x - t->x1 < 6 * t->size));
}

/* Labelled y ticks: texts anchored at their end, left of every data marker,
 * unturned. lo, hi: the SVG y of the lowest and highest on the page. */
static int y_ticks(const lfig *f, double xmin, double *top, double *bottom)
{
    int n = 0;
    for (int i = 0; i < f->nt; i++) {
        const ltext *t = &f->t[i];
        if (t->anchor != 1 || t->rot != 0 || t->x1 > xmin) continue;
        const double yc = t->y - 0.3 * t->size; /* the label's middle: the tick's y */
        if (!n++) *top = *bottom = yc;
        *top = fmin(*top, yc), *bottom = fmax(*bottom, yc);
    }
    return n;
}

/* Labelled x ticks: the row of centred, unturned texts just below every data
 * marker with the most members. */
static int x_ticks(const lfig *f, double ymax)
{
    int best = 0;
    for (int i = 0; i < f->nt; i++) {
        const ltext *t = &f->t[i];
        if (t->anchor != 0 || t->rot != 0 || t->y0 < ymax) continue;
        int n = 0;
        for (int j = 0; j < f->nt; j++)
            n += f->t[j].anchor == 0 && f->t[j].rot == 0 && fabs(f->t[j].y - t->y) < 0.5;
        if (n > best) best = n;
    }
    return best;
}

int look_check(const char *svg_path, const char *figure, const char *title, unsigned rules)
{
    lfig f;
    memset(&f, 0, sizeof f);
    if (svg_load(svg_path, &f)) return 1;
    int bad = 0;
    for (int i = 0; i < f.nt; i++) {
        const ltext *t = &f.t[i];
        const double printed = t->size * fmin(1.0, LOOK_PAGE_W / f.w);
        if (printed < LOOK_MIN_PT)
            bad |= fail("%s: text '%s' is %.1f pt printed a page wide (%.0f of a %.0f-unit canvas; the smallest a "
                        "reader reads: %.0f pt)", figure, t->s, printed, t->size, f.w, ceil(LOOK_MIN_PT));
        if (t->x0 < -0.5 || t->y0 < -0.5 || t->x1 > f.w + 0.5 || t->y1 > f.h + 0.5)
            bad |= fail("%s: text '%s' (turned %.0f degrees) runs past the image's edge (%.0f..%.0f x %.0f..%.0f of "
                        "%.0f x %.0f)", figure, t->s, t->rot, t->x0, t->x1, t->y0, t->y1, f.w, f.h);
        for (int j = 0; j < i; j++) /* a text drawn twice in one place (over a white box) is one text */
            if (boxes_meet(t, &f.t[j]) &&
                !(!strcmp(t->s, f.t[j].s) && fabs(t->x - f.t[j].x) < 0.5 && fabs(t->y - f.t[j].y) < 0.5))
                bad |= fail("%s: texts '%s' and '%s' overlap", figure, f.t[j].s, t->s);
    }
    if (title) {
        const ltext *tt = NULL;
        for (int i = 0; i < f.nt && !tt; i++)
            if (strstr(f.t[i].s, title)) tt = &f.t[i];
        if (!tt) bad |= fail("%s: no title containing '%s'", figure, title);
        for (int i = 0; tt && i < f.nt; i++)
            if (f.t[i].y1 < tt->y0 + 0.5)
                bad |= fail("%s: '%s' is above the title '%s'", figure, f.t[i].s, tt->s);
    }
    /* the data markers */
    lmark *dm = malloc((size_t)(f.nm + 1) * sizeof *dm);
    int nd = 0;
    double xmin = INFINITY, ymax = -INFINITY;
    for (int i = 0; i < f.nm; i++)
        if (!is_legend_mark(&f, &f.m[i])) {
            dm[nd++] = f.m[i];
            xmin = fmin(xmin, f.m[i].x - f.m[i].r), ymax = fmax(ymax, f.m[i].y + f.m[i].r);
        }
    if (rules & LOOK_MARKERS) {
        for (int i = 0; i < nd; i++) {
            if (fabs(dm[i].r - dm[0].r) > 0.01 * dm[0].r)
                bad |= fail("%s: markers of unequal size: %s at (%.0f, %.0f) scale %.2f, %s at (%.0f, %.0f) scale %.2f",
                            figure, dm[0].color, dm[0].x, dm[0].y, dm[0].r, dm[i].color, dm[i].x, dm[i].y, dm[i].r);
            for (int j = 0; j < i; j++)
                if (strcmp(dm[i].color, dm[j].color) &&
                    hypot(dm[i].x - dm[j].x, dm[i].y - dm[j].y) < fmax(dm[i].r, dm[j].r))
                    bad |= fail("%s: the marker %s at (%.1f, %.1f) and %s at (%.1f, %.1f) lie on each other: one "
                                "hides the other", figure, dm[j].color, dm[j].x, dm[j].y, dm[i].color, dm[i].x, dm[i].y);
        }
    }
    if (rules & (LOOK_TICKS | LOOK_TICKS3)) {
        double top = 0, bottom = 0;
        const int ny = y_ticks(&f, xmin, &top, &bottom), nx = x_ticks(&f, ymax);
        for (int i = 0; (rules & LOOK_TICKS) && ny && i < nd; i++)
            if (dm[i].y < top - 1 || dm[i].y > bottom + 1)
                bad |= fail("%s: the marker %s at y %.1f lies outside the labelled y ticks (%.1f..%.1f): the reader "
                            "cannot read its value", figure, dm[i].color, dm[i].y, top, bottom);
        if ((rules & LOOK_TICKS3) && (nx < LOOK_MIN_TICKS || ny < LOOK_MIN_TICKS))
            bad |= fail("%s: %d labelled x ticks and %d labelled y ticks: at least %d on each axis", figure, nx, ny,
                        LOOK_MIN_TICKS);
    }
    if (rules & LOOK_NAMED) {
        int named = 0;
        for (int i = 0; i < nd; i++)
            for (int k = 0; k < f.nt; k++)
                if (f.t[k].rot == 0 && hypot(f.t[k].x - dm[i].x, f.t[k].y - 0.3 * f.t[k].size - dm[i].y) <
                                           dm[i].r + 2.5 * f.t[k].size + LOOK_EM_W * f.t[k].size * strlen(f.t[k].s)) {
                    named++;
                    break;
                }
        if (named < nd) bad |= fail("%s: %d of %d points have no text beside them", figure, nd - named, nd);
    }
    if (rules & LOOK_LANES) {
        /* the names in the lanes: the smallest texts, each in the lane whose
         * tick label ("measured", "predicted") is nearest. Every name of the
         * predicted lane must be in the measured one: measured blocks
         * unlabelled where predicted ones are hide what the comparison is for */
        double small = INFINITY, y_meas = NAN, y_pred = NAN;
        for (int i = 0; i < f.nt; i++) {
            small = fmin(small, f.t[i].size);
            if (!strcmp(f.t[i].s, "measured")) y_meas = f.t[i].y;
            if (!strcmp(f.t[i].s, "predicted")) y_pred = f.t[i].y;
        }
        if (isnan(y_meas) || isnan(y_pred)) bad |= fail("%s: no lanes named measured and predicted", figure);
#define IN_PRED(t) (fabs((t)->y - y_pred) < fabs((t)->y - y_meas))
        for (int i = 0; !bad && i < f.nt; i++) {
            const ltext *t = &f.t[i];
            if (t->size > small + 0.01 || !IN_PRED(t)) continue;
            int found = 0;
            for (int j = 0; j < f.nt && !found; j++)
                found = f.t[j].size <= small + 0.01 && !IN_PRED(&f.t[j]) && !strcmp(f.t[j].s, t->s);
            if (!found) bad |= fail("%s: '%s' is named in the predicted lane, not in the measured one", figure, t->s);
        }
#undef IN_PRED
    }
    if (!bad)
        printf("  %s looks right: %d texts, %d data markers (%s%s%s%s%s)\n", svg_path, f.nt, nd,
               "size, canvas, overlap", title ? ", title" : "", rules & LOOK_MARKERS ? ", markers" : "",
               rules & LOOK_TICKS ? ", ticks" : "", rules & LOOK_NAMED ? ", named" : "");
    free(dm);
    free(f.t);
    free(f.m);
    return bad;
}

int look_figure(const char *svg_path, const char *figure, const csv *c)
{
    static const struct {
        const char *fig;
        unsigned rules;
    } R[] = {{"comm-volume", LOOK_MARKERS | LOOK_TICKS}, {"throughput", LOOK_MARKERS | LOOK_TICKS},
             {"max-seq", LOOK_MARKERS | LOOK_TICKS},     {"max-batch", LOOK_MARKERS | LOOK_TICKS},
             {"validation-runs", LOOK_TICKS3 | LOOK_NAMED}, {"timeline", LOOK_LANES}};
    unsigned rules = 0;
    for (size_t i = 0; i < sizeof R / sizeof R[0]; i++)
        if (!strcmp(R[i].fig, figure)) rules = R[i].rules;
    int bad = look_check(svg_path, figure, NULL, rules);
    /* comm-volume: a strategy drawn as another (same bytes) is named in the legend */
    const int k = c ? col_of(c, "same_as_label") : -1;
    if (c && k < 0 && !strcmp(figure, "comm-volume"))
        bad |= fail("%s: no same_as_label column: a strategy drawn as another (the same bytes) goes unnamed",
                    figure);
    if (k >= 0) {
        size_t len;
        char *svg = slurp(svg_path, &len);
        for (int r = 0; svg && r < c->nrows; r++) {
            const char *same = c->rows[r][k];
            char want[256];
            snprintf(want, sizeof want, "%s = %s", cell(c, r, "label"), same);
            if (same[0] && !strstr(svg, want))
                bad |= fail("%s: %s is drawn as %s (the same bytes) but the legend does not say '%s'", figure, same,
                            cell(c, r, "label"), want);
        }
        free(svg);
    }
    return bad;
}

int mode_look(int argc, char **argv)
{
    if (argc < 4) return fail("usage: plot_check look FIGURE SVG [TITLE]");
    if (argc > 4) return look_check(argv[3], argv[2], argv[4], 0);
    return look_figure(argv[3], argv[2], NULL);
}
