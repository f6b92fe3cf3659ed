/* args_msg.c: the one-line messages of bad input that every command of
 * ulysim prints (sim_err, sim_fail, text_quote: raw bytes escaped, rank 0
 * only), and the check that the files a command reads are distinct. Split
 * from args.c, which parses the planning commands' flags. */
#include "args.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "par.h"

static void err_v(const char *who, const char *fmt, va_list ap)
{
    if (sim_par_rank() != 0) return;
    char buf[1024], safe[4096];
    vsnprintf(buf, sizeof buf, fmt, ap);
    text_escape(buf, safe, sizeof safe);
    fprintf(stderr, "%s: %s\n", who, safe);
}

void sim_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_v("ulysim", fmt, ap);
    va_end(ap);
}

void sim_err_as(const char *who, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_v(who, fmt, ap);
    va_end(ap);
}

void sim_one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r') *s = ' ';
}

int sim_fail(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    sim_one_line(why);
    return SIM_EXIT_USAGE;
}

void sim_join(char *buf, size_t n, const char *sep, const char *item)
{
    size_t l = strlen(buf);
    if (l < n) snprintf(buf + l, n - l, "%s%s", l ? sep : "", item);
}

int sim_files_distinct(const char *const *files, int n, char *why, size_t why_len)
{
    for (int f = 1; f < n; f++) {
        struct stat sf, sg;
        if (stat(files[f], &sf) != 0) continue;
        for (int g = 0; g < f; g++)
            if (stat(files[g], &sg) == 0 && sf.st_dev == sg.st_dev && sf.st_ino == sg.st_ino)
                return sim_fail(why, why_len, "%s and %s are the same file (valid: each run once)", files[g], files[f]);
    }
    return 0;
}
