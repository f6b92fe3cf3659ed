/* text_file.h: reading a whole input file (a log, a profiler trace) for the
 * readers of other tools' formats, with the one-line message a bad path
 * gets: what the file is, and why it cannot be read. */
#ifndef FORMATS_TEXT_FILE_H
#define FORMATS_TEXT_FILE_H

#include <stddef.h>

/* Reads path (a regular file of at most max_bytes) into *text (malloc,
 * NUL-terminated; the caller frees it) and *len. Returns 0, 2 with
 * "PATH: reason" in why (noun: what the file should be, "a Megatron-LM
 * log"), or 1 when out of memory. */
int text_file_read(const char *path, size_t max_bytes, const char *noun, char **text, size_t *len, char *why,
                   size_t why_len);

/* The one-line message of bad input in a file: "PATH:LINE: message", or
 * "PATH: message" when line <= 0, into why (control characters shown as
 * '?', so one line whatever the file held). Returns 2, bad input. */
int text_fail_at(char *why, size_t why_len, const char *path, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
