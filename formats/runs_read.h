/* runs_read.h: the runs-file reader (docs/runs.md): a table of measured runs,
 * one run per row, as CSV (RFC 4180 quoting, '#' comment lines) or JSON Lines
 * (one object per line). Pure: text in, a table of strings out, a status and
 * a one-line message with the line (and column) back. What the columns mean
 * is the caller's (sim/validate/validate_runs.c). */
#ifndef FORMATS_RUNS_READ_H
#define FORMATS_RUNS_READ_H

#include <stddef.h>

#define RUNS_MAX_BYTES (16u << 20) /* a runs file is read whole: at most 16 MiB */
#define RUNS_MAX_COLS 128
#define RUNS_MAX_ROWS 100000

/* The measured quantities a row may hold, in their valid ranges (docs/runs.md),
 * shared with the Megatron-LM log reader that writes rows. The floors are
 * physical: below them a number measured nothing, and predicted / measured
 * would overflow to inf (1e-320 is a positive double).
 *   step_s: a step launches kernels and collectives, and one launch alone
 *     takes microseconds (any timer ticks in 1 ns or coarser): >= 1 us;
 *   tokens_per_s: a run slower than one token in 1e6 s (11.6 days) trained
 *     nothing measurable: >= 1e-6;
 *   tflops_per_gpu: any processor that trains a model does more than 1
 *     MFLOP/s: >= 1e-6 TFLOP/s;
 *   mem_gib: a GPU process holds its CUDA context (hundreds of MiB), and
 *     PyTorch's caching allocator reserves blocks of 2 MiB: >= 1 MiB.
 * Every quantity is below RUNS_MAX_VALUE (sums and products stay finite). */
#define RUNS_MIN_STEP_S 1e-6
#define RUNS_MIN_TOKENS_PER_S 1e-6
#define RUNS_MIN_TFLOPS 1e-6
#define RUNS_MIN_MEM_GIB (1.0 / 1024)
#define RUNS_MAX_VALUE 1e30

typedef struct runs_table {
    int n_cols;
    char **cols;   /* column names, in order (JSON Lines: keys in order of first appearance) */
    int n_rows;
    char ***cells; /* cells[row][col]: the text, "" when empty or absent (JSON null too) */
    int *line;     /* the line each row starts on (1-based) */
    int jsonl;     /* 1: read as JSON Lines */
} runs_table;

/* len bytes of text (NUL-terminated not needed), named `shown` in messages.
 * Returns 0, or 2 (bad input) with "shown:LINE:COL: what" in why; 1 when out
 * of memory. The table is valid (maybe empty) on 0 and freed on failure. */
int runs_parse(const char *text, size_t len, const char *shown, runs_table *out, char *why, size_t why_len);

/* Reads a file with runs_parse; a directory, a FIFO, a file over
 * RUNS_MAX_BYTES are refused before reading. */
int runs_load(const char *path, runs_table *out, char *why, size_t why_len);

/* The column of a name, or -1. */
int runs_col(const runs_table *t, const char *name);

void runs_free(runs_table *t);

#endif
