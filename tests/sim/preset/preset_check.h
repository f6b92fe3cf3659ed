/* preset_check.h: the preset tests' CHECK, counting failures and saying
 * each on stderr with its file and line (test_preset*.c). */
#ifndef PRESET_CHECK_H
#define PRESET_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            failures++;                                                                                                \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);                                   \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
        }                                                                                                              \
    } while (0)

#endif
