/* text_quote.h: values and messages made safe to print on one line (the
 * error messages of ulysim and ulyharness echo what the user typed). */
#ifndef FORMATS_TEXT_QUOTE_H
#define FORMATS_TEXT_QUOTE_H

#include <stddef.h>

/* msg into out (n bytes, always terminated): valid UTF-8 kept, line breaks
 * as spaces, other control bytes and invalid bytes as \xNN. */
void text_escape(const char *msg, char *out, size_t n);

/* A value as a message quotes it: 'value', escaped (text_escape), at most
 * 60 bytes of it, then "..." when cut; into buf (n bytes), which it returns. */
const char *text_quote(const char *v, char *buf, size_t n);

#endif
