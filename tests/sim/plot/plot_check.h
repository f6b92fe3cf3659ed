/* plot_check.h: what the checks of `ulysim plot` share (plot_check_util.c):
 * running a command and capturing its output, reading the figure's CSV,
 * checking an image file, and reading the model's JSON answers. */
#ifndef PLOT_CHECK_H
#define PLOT_CHECK_H
#include <stddef.h>

#include <cjson/cJSON.h>

extern const char *g_test; /* the mode, for messages */

typedef struct out {
    int rc;
    char *out, *err;
} out;

typedef struct args {
    char *v[128];
    int n;
} args;

#define MAXCOLS 40
typedef struct csv {
    int ncols, nrows;
    char *names[MAXCOLS];
    char ***rows; /* nrows x ncols */
    char *text;   /* the whole file */
} csv;

int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void mkdirs(const char *path);
char *slurp(const char *path, size_t *len);
int run(char *const argv[], out *o);
void out_free(out *o);
void add(args *a, const char *s);
void addf(args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void args_free(args *a);
cJSON *run_json(args *a);
int csv_load(const char *path, csv *c, const char *figure);
int col_of(const csv *c, const char *name);
const char *cell(const csv *c, int r, const char *name);
double num(const csv *c, int r, const char *name);
void csv_free(csv *c);
int need_cols(const csv *c, const char *const *names);
int check_image(const char *path, const char *fmt, const char *figure);
int close_rel(double a, double b, double tol);
const cJSON *jget(const cJSON *o, const char *path);
double jnum(const cJSON *o, const char *path);
void add_pins(args *a, const char *layout);
void degrees_str(const cJSON *plan, char *b, size_t n);
const cJSON *plan_of(const cJSON *root, const char *strategy);

/* What a reader sees (plot_look.c), on an SVG the figure was drawn to:
 * rules of look_check, as flags. */
enum { LOOK_MARKERS = 1, LOOK_TICKS = 2, LOOK_TICKS3 = 4, LOOK_NAMED = 8, LOOK_LANES = 16 };
#define LOOK_MIN_TICKS 3
int look_check(const char *svg_path, const char *figure, const char *title, unsigned rules);
/* The rules for a figure of `ulysim plot` (c: its CSV, for the legend's
 * names), and `plot_check look FIGURE SVG [TITLE]` on any SVG (reproduce's). */
int look_figure(const char *svg_path, const char *figure, const csv *c);
int mode_look(int argc, char **argv);

#endif
