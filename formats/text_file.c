/* text_file.c: a whole input file with the message a bad path gets
 * (text_file.h), on js_file_read's checks (no FIFO, no device, a size cap). */
#include "text_file.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json_strict.h"

int text_file_read(const char *path, size_t max_bytes, const char *noun, char **text, size_t *len, char *why,
                   size_t why_len)
{
    js_file f;
    const js_file_status st = js_file_read(path, max_bytes, &f);
    *text = f.text;
    *len = f.len;
    if (st == JS_FILE_OK) return 0;
    if (st == JS_FILE_NOMEM) return 1;
    char reason[160];
    if (st == JS_FILE_OPEN || st == JS_FILE_STAT || st == JS_FILE_READ)
        snprintf(reason, sizeof reason, "cannot %s: %s", st == JS_FILE_OPEN ? "open" : st == JS_FILE_STAT ? "stat" : "read",
                 strerror(f.err));
    else if (st == JS_FILE_BIG || st == JS_FILE_GREW)
        snprintf(reason, sizeof reason, "larger than %zu bytes (valid: %s of at most that size)", max_bytes, noun);
    else
        snprintf(reason, sizeof reason, "not a regular file (valid: %s)", noun);
    return js_fail(why, why_len, path, "%s", reason);
}

int text_fail_at(char *why, size_t n, const char *path, int line, const char *fmt, ...)
{
    char msg[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (line > 0) snprintf(why, n, "%s:%d: %s", path, line, msg);
    else snprintf(why, n, "%s: %s", path, msg);
    for (char *p = why; *p; p++)
        if ((unsigned char)*p < 0x20) *p = '?';
    return 2;
}
