/* fuzz_trace.c: libFuzzer target for the trace reader (formats/trace_read.c)
 * that `ulysim validate`, `calibrate` and `trace export` use. The input is
 * written to a private temporary file in the current directory (scripts/fuzz.sh
 * runs the target inside its build tree), removed at exit, and read back as
 * a trace. Properties:
 * never crashes or leaks; the result is 0, or 2 with a one-line reason that
 * names the file (and the line). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace_read.h"

static char path[64];

static void remove_path(void) { unlink(path); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        snprintf(path, sizeof path, "fuzz_trace.%d.trace", (int)getpid());
        atexit(remove_path);
    }
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    if (size && fwrite(data, 1, size, f) != size) {
        fclose(f);
        return 0;
    }
    fclose(f);
    static trace_run run;
    char why[1024];
    why[0] = 0;
    int rc = trace_read(path, &run, why, sizeof why);
    trace_free(&run);
    if (rc != 0 && rc != 2) abort();
    if (rc == 2 && (!why[0] || strchr(why, '\n') || !strstr(why, path))) abort();
    return 0;
}
