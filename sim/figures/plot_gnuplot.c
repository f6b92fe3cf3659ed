/* plot_gnuplot.c: finding a figure's gnuplot script and running gnuplot,
 * shared by `ulysim plot` and `ulysim reproduce`. */
#define _POSIX_C_SOURCE 200809L
#include "plot_gnuplot.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "args.h"
#include "preset.h"

extern char **environ;

#ifndef ULY_PLOT_DIR_SOURCE
#define ULY_PLOT_DIR_SOURCE "plots"
#endif
#ifndef ULY_PLOT_DIR_INSTALLED
#define ULY_PLOT_DIR_INSTALLED "/usr/local/share/ulysim/plots"
#endif

int sim_is_file(const char *p)
{
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int sim_gnuplot_script_find(const char *dir, const char *name, char *out, size_t n)
{
    if (!out || n == 0) return 1;
    const char *env = getenv("ULYSIM_PLOTS");
    if (!dir && env && env[0]) dir = env;
    if (dir) {
        snprintf(out, n, "%s/%s.gp", dir, name);
        return sim_is_file(out) ? 0 : 2;
    }
    /* the scripts installed beside this executable, then the source tree's
     * (a build tree), then the configure-time prefix's, as for presets */
    char beside[4096];
    if (preset_data_dir_beside_exe("plots", beside, sizeof beside) == 0) {
        snprintf(out, n, "%s/%s.gp", beside, name);
        if (sim_is_file(out)) return 0;
    }
    snprintf(out, n, "%s/%s.gp", ULY_PLOT_DIR_SOURCE, name);
    if (sim_is_file(out)) return 0;
    snprintf(out, n, "%s/%s.gp", ULY_PLOT_DIR_INSTALLED, name);
    return sim_is_file(out) ? 0 : 1;
}

void sim_gnuplot_script_dirs(char *out, size_t n)
{
    char beside[4096];
    if (!out || n == 0) return;
    if (preset_data_dir_beside_exe("plots", beside, sizeof beside) == 0)
        snprintf(out, n, "%s, %s or %s", beside, ULY_PLOT_DIR_SOURCE, ULY_PLOT_DIR_INSTALLED);
    else
        snprintf(out, n, "%s or %s", ULY_PLOT_DIR_SOURCE, ULY_PLOT_DIR_INSTALLED);
}

int sim_gnuplot_run(const char *who, const char *vars, const char *script)
{
    const char *gp = getenv("GNUPLOT");
    if (!gp || !gp[0]) gp = "gnuplot";
    char *argv[] = {(char *)gp, (char *)"-e", (char *)vars, (char *)script, NULL};
    pid_t pid;
    fflush(stdout);
    fflush(stderr);
    int err = posix_spawnp(&pid, gp, NULL, NULL, argv, environ);
    if (err) {
        sim_err("%s: cannot run gnuplot '%s': %s (install gnuplot, e.g. the gnuplot-nox package, or set $GNUPLOT)",
                who, gp, strerror(err));
        return 1;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            sim_err("%s: waiting for gnuplot: %s", who, strerror(errno));
            return 1;
        }
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        sim_err("%s: cannot run gnuplot '%s' (install gnuplot, e.g. the gnuplot-nox package, or set $GNUPLOT)", who, gp);
    else if (WIFEXITED(status))
        sim_err("%s: gnuplot failed (exit %d) on %s", who, WEXITSTATUS(status), script);
    else
        sim_err("%s: gnuplot was killed (signal %d) on %s", who, WIFSIGNALED(status) ? WTERMSIG(status) : 0, script);
    return 1;
}

int sim_image_whole(const char *path, const char *term)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    /* the end of the file: PNG's last chunk is exactly 12 bytes (length 0,
     * "IEND", its CRC); SVG and PDF may end in whitespace after the mark */
    char tail[1025];
    size_t got = 0;
    if (fseek(f, -(long)(sizeof tail - 1), SEEK_END) != 0) rewind(f);
    got = fread(tail, 1, sizeof tail - 1, f);
    fclose(f);
    tail[got] = 0;
    if (!strcmp(term, "png")) {
        static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
        return got >= sizeof iend && !memcmp(tail + got - sizeof iend, iend, sizeof iend);
    }
    const char *mark = !strcmp(term, "svg") ? "</svg>" : !strcmp(term, "pdf") ? "%%EOF" : NULL;
    if (!mark) return got > 0;
    for (size_t i = 0; i < got; i++) /* a NUL inside must not hide the mark from strstr */
        if (!tail[i]) tail[i] = ' ';
    const char *at = strstr(tail, mark), *next;
    if (!at) return 0;
    while ((next = strstr(at + 1, mark))) at = next;
    for (const char *p = at + strlen(mark); *p; p++)
        if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') return 0;
    return 1;
}

/* Appends s to b, single-quoted as gnuplot reads it ('' is one quote). */
static int gp_quote(char *b, size_t n, const char *s)
{
    size_t o = strlen(b);
    if (o + 2 >= n) return 1;
    b[o++] = '\'';
    for (; *s; s++) {
        if (o + 3 >= n) return 1;
        if (*s == '\'') b[o++] = '\'';
        b[o++] = *s;
    }
    b[o++] = '\'';
    b[o] = 0;
    return 0;
}

int sim_gnuplot_assign(char *b, size_t n, const char *var, const char *val)
{
    size_t o = strlen(b);
    int k = snprintf(b + o, n - o, "%s=", var);
    if (k < 0 || (size_t)k >= n - o) return 1;
    if (gp_quote(b, n, val)) return 1;
    o = strlen(b);
    k = snprintf(b + o, n - o, "; ");
    return k < 0 || (size_t)k >= n - o;
}
