/* text_file.c: a whole input file with the message a bad path gets
 * (text_file.h), on js_file_read's checks (no FIFO, no device, a size cap). */
#include "text_file.h"

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
