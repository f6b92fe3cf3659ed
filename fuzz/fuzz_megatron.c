/* fuzz_megatron.c: libFuzzer target for the Megatron-LM log reader
 * (formats/megatron_log.c) that `ulysim runs from-megatron` uses. The input
 * is the log's text. Properties: never crashes or leaks; mlog_parse returns
 * 0, or 2 with a one-line reason that names the log; on 0 the model,
 * layout and median readers run on the result and return 0 or 2 (with a
 * one-line reason) as well. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "megatron_log.h"

static void one_line(const char *why)
{
    if (!why[0] || strchr(why, '\n') || !strstr(why, "fuzz.log")) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mlog_run run;
    char why[1024] = "";
    const int rc = mlog_parse((const char *)data, size, "fuzz.log", &run, why, sizeof why);
    if (rc != 0 && rc != 2) abort();
    if (rc == 2) {
        one_line(why);
        return 0;
    }
    uly_model m;
    uly_layout l;
    why[0] = 0;
    int r = mlog_model(&run, "fuzz.log", &m, why, sizeof why);
    if (r != 0 && r != 2) abort();
    if (r == 2) one_line(why);
    why[0] = 0;
    r = mlog_layout(&run, "fuzz.log", &l, why, sizeof why);
    if (r != 0 && r != 2) abort();
    if (r == 2) one_line(why);
    double ms, tf;
    int64_t first, last;
    const int used = mlog_median(&run, 0, &ms, &tf, &first, &last);
    if (used < 0 || (used > 0 && !(ms > 0))) abort(); /* every report read is a positive time */
    return 0;
}
