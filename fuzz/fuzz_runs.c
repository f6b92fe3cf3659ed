/* fuzz_runs.c: libFuzzer target for the runs-file reader
 * (formats/runs_read.c: CSV or JSON Lines) that `ulysim validate --runs` and
 * `plot validation --runs` use. The input is the file's text. Properties:
 * never crashes or leaks; runs_parse returns 0, or 2 with a one-line reason
 * that names the file (1 only when out of memory); on 0 every row has
 * every column, each cell a string, and its line is in the file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runs_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    runs_table t;
    char why[1024] = "";
    const int rc = runs_parse((const char *)data, size, "fuzz.csv", &t, why, sizeof why);
    if (rc == 1) return 0;
    if (rc != 0 && rc != 2) abort();
    if (rc == 2) {
        if (!why[0] || strchr(why, '\n') || !strstr(why, "fuzz.csv")) abort();
        return 0;
    }
    for (int r = 0; r < t.n_rows; r++) {
        if (t.line[r] < 1 || (size_t)t.line[r] > size + 1) abort();
        for (int c = 0; c < t.n_cols; c++)
            if (!t.cells[r][c]) abort();
    }
    for (int c = 0; c < t.n_cols; c++)
        if (!t.cols[c] || runs_col(&t, t.cols[c]) < 0) abort();
    runs_free(&t);
    return 0;
}
