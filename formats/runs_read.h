/* runs_read.h: the runs-file reader (docs/runs.md): a table of measured runs,
 * one run per row, as CSV (RFC 4180 quoting, '#' comment lines) or JSON Lines
 * (one object per line). Pure: text in, a table of strings out, a status and
 * a one-line message with the line (and column) back. What the columns mean
 * is the caller's (sim/validate_runs.c). */
#ifndef FORMATS_RUNS_READ_H
#define FORMATS_RUNS_READ_H

#include <stddef.h>

#define RUNS_MAX_BYTES (16u << 20) /* a runs file is read whole: at most 16 MiB */
#define RUNS_MAX_COLS 128
#define RUNS_MAX_ROWS 100000

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
