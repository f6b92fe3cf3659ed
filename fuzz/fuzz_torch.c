/* fuzz_torch.c: libFuzzer target for the PyTorch profiler trace reader
 * (formats/torch_trace.c) that `ulysim validate --torch-trace` uses. The
 * input, NUL-terminated as the reader wants it, is the trace's text.
 * Properties: never crashes or leaks; tt_read returns 0, or 2 with a
 * one-line reason that names the trace (1 only when out of memory); on 0
 * every step's window and kernel times are finite and non-negative. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "torch_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    static tt_trace t;
    char why[1024] = "";
    const int rc = tt_read(text, size, "fuzz.trace.json", &t, why, sizeof why);
    free(text);
    if (rc == 1) return 0;
    if (rc != 0 && rc != 2) abort();
    if (rc == 2 && (!why[0] || strchr(why, '\n') || !strstr(why, "fuzz.trace.json"))) abort();
    if (rc == 0) {
        if (t.n_steps < 1 || t.n_steps > TT_MAX_STEPS) abort();
        for (int s = 0; s < t.n_steps; s++) {
            if (!isfinite(t.steps[s].dur_us) || t.steps[s].dur_us < 0) abort();
            for (int k = 0; k < TT_CAT_COUNT; k++)
                if (!isfinite(t.steps[s].cat_us[k]) || t.steps[s].cat_us[k] < 0) abort();
        }
    }
    return 0;
}
