/* text_quote.c: values and messages made safe to print on one line, for
 * ulysim and ulyharness alike: raw bytes that are not UTF-8, control bytes
 * and line breaks escaped, a quoted value cut at 60 bytes. */
#include "text_quote.h"

#include <stdio.h>
#include <string.h>

/* Bytes in a valid UTF-8 sequence starting at s (1-4), or 0. */
static int utf8_len(const unsigned char *s)
{
    const int n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    return n;
}

void text_escape(const char *msg, char *out, size_t n)
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

const char *text_quote(const char *v, char *buf, size_t n)
{
    char cut[64];
    if (n < 8) return "";
    snprintf(cut, sizeof cut, "%.60s", v ? v : "");
    buf[0] = '\'';
    text_escape(cut, buf + 1, n - 2);
    const size_t j = strlen(buf);
    if (v && strlen(v) > 60 && j + 4 < n) memcpy(buf + j, "...", 4);
    strcat(buf, "'");
    return buf;
}
