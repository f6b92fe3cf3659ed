/* plot_gnuplot.h: finding a figure's gnuplot script and running gnuplot,
 * shared by `ulysim plot` and `ulysim reproduce`. */
#ifndef SIM_PLOT_GNUPLOT_H
#define SIM_PLOT_GNUPLOT_H

#include <stddef.h>

/* 1 if p is a regular file. */
int sim_is_file(const char *p);

/* The script NAME.gp: in dir when given, else in $ULYSIM_PLOTS, else in
 * share/ulysim/plots installed beside this executable, else the source
 * tree's plots/, else the configure-time prefix's. Returns 0
 * (path in out), 2 when a given or $ULYSIM_PLOTS directory lacks it, 1 when
 * none has it. */
int sim_gnuplot_script_find(const char *dir, const char *name, char *out, size_t n);

/* The directories sim_gnuplot_script_find searches without a given
 * directory or $ULYSIM_PLOTS, in its order, for a message naming where a
 * script was looked for: "BESIDE, SOURCE or INSTALLED" (BESIDE is
 * BIN/../share/ulysim/plots when that directory exists). */
void sim_gnuplot_script_dirs(char *out, size_t n);

/* Runs $GNUPLOT (default gnuplot) -e VARS SCRIPT. Returns 0, or 1 with a
 * one-line message prefixed by `who` ("plot", "reproduce") on stderr. */
int sim_gnuplot_run(const char *who, const char *vars, const char *script);

/* Whether gnuplot's image at path is whole: it ends as its format (term:
 * "png", "svg", "pdf") ends, with PNG's IEND chunk, SVG's </svg>, PDF's
 * %%EOF. gnuplot exits 0 when a full disk cut its image short, and the
 * cut file would otherwise be renamed to the final name. Returns 1 whole,
 * 0 not (missing, empty, or cut). */
int sim_image_whole(const char *path, const char *term);

/* Appends `var='val'; ` to the -e string b (n bytes), val quoted as gnuplot
 * reads it. Returns 0, or 1 when b is too small. */
int sim_gnuplot_assign(char *b, size_t n, const char *var, const char *val);

#endif
