/* args_msg.c: the one-line messages of bad input that every command of
 * ulysim prints (sim_err, sim_fail, sim_quote: raw bytes escaped, rank 0
 * only), and the check that the files a command reads are distinct. Split
 * from args.c, which parses the planning commands' flags. */
#include "args.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "par.h"

/* Bytes in a valid UTF-8 sequence starting at s (1-4), or 0. */
static int utf8_len(const unsigned char *s)
{
    const int n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    return n;
}

void sim_escape(const char *msg, char *out, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t j = 0;
    if (!n) return;
    for (const unsigned char *p = (const unsigned char *)msg; *p && j + 5 < n;) {
        const int u = *p >= 0x80 ? utf8_len(p) : 0;
        if (u) {
            if (j + (size_t)u + 1 >= n) break;
            memcpy(out + j, p, (size_t)u);
            j += (size_t)u;
            p += u;
            continue;
        }
        if (*p == '\n' || *p == '\r') out[j++] = ' ';
        else if (*p >= 0x20 && *p < 0x7f) out[j++] = (char)*p;
        else {
            out[j++] = '\\';
            out[j++] = 'x';
            out[j++] = hex[*p >> 4];
            out[j++] = hex[*p & 15];
        }
        p++;
    }
    out[j] = 0;
}

static void err_v(const char *who, const char *fmt, va_list ap)
{
    if (sim_par_rank() != 0) return;
    char buf[1024], safe[4096];
    vsnprintf(buf, sizeof buf, fmt, ap);
    sim_escape(buf, safe, sizeof safe);
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

const char *sim_quote(const char *v, char *buf, size_t n)
{
    char cut[64];
    if (n < 8) return "";
    snprintf(cut, sizeof cut, "%.60s", v ? v : "");
    buf[0] = '\'';
    sim_escape(cut, buf + 1, n - 2);
    const size_t j = strlen(buf);
    if (v && strlen(v) > 60 && j + 4 < n) memcpy(buf + j, "...", 4);
    strcat(buf, "'");
    return buf;
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
