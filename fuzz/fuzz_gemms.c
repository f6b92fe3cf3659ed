/* fuzz_gemms.c: libFuzzer target for the GEMM-table reader of `ulysim
 * calibrate --gemms` (sim/validate/calib_gemm.c). The input is the table's
 * text. Properties: never crashes or leaks; it returns 0, or 2 with a
 * one-line reason naming the file (1 only when out of memory); on 0 every
 * row has one GEMM of positive, whole sizes, a positive finite time, a
 * known dtype and a line inside the text. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/validate/calib_gemm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    calib_gemm_pt *p = NULL;
    int n = 0, cap = 0;
    char why[1024] = "";
    const int rc = calib_gemm_table_parse(text, "fuzz.csv", &p, &n, &cap, why, sizeof why);
    if (rc != 0 && rc != 1 && rc != 2) abort();
    if (rc == 2 && (!why[0] || strchr(why, '\n') || !strstr(why, "fuzz.csv"))) abort();
    if (rc == 0) {
        if (n < 1) abort();
        for (int i = 0; i < n; i++) {
            if (p[i].n_gemm != 1 || !(p[i].t_s > 0) || !isfinite(p[i].t_s) || (unsigned)p[i].dtype >= ULY_DTYPE_COUNT)
                abort();
            if (p[i].line < 1 || (size_t)p[i].line > size + 1) abort();
            for (int d = 0; d < 4; d++)
                if (!(p[i].shape[0][d] >= 1) || p[i].shape[0][d] != floor(p[i].shape[0][d])) abort();
        }
    }
    free(p);
    free(text);
    return 0;
}
