/* out_file.h: writing an output file without destroying what is at its
 * path, for every writer of ulysim and ulyharness (trace export, plot and
 * its CSV, calibrate, reproduce, the harness's trace).
 *
 * What is at the path decides how it is written:
 *   - nothing, or a regular file: the bytes go to a temporary beside it
 *     (PATH.tmp.PID; .ulysim.tmp.PID in its directory when that name would
 *     be too long) that is renamed over it only when complete, so a run
 *     that dies never leaves half a file under the final name; a replaced
 *     file keeps its permission bits;
 *   - a symbolic link: written through to what it names (resolved link by
 *     link, a dangling one included), the temporary beside the target;
 *   - a character device (/dev/null, a terminal) or a FIFO: written in
 *     place, never replaced; a FIFO must have a reader already (otherwise
 *     opening it would wait forever): no reader is bad input;
 *   - a directory, a block device, a socket: refused (bad input), since
 *     writing into them directly would destroy data or make no sense;
 *   - a file this run reads (out_file_input_note), reached by any name or
 *     link: refused (bad input), since replacing it would destroy the input
 *     (`trace export run.trace -o run.trace`, a plot's CSV named like its
 *     runs file).
 * Outputs that another program writes by name (gnuplot's image) accept
 * only the first two (OUT_FILE_BY_NAME).
 *
 * Status: 0 success; 2 a bad output path (the reason names the path and
 * what would be valid), found before any work by out_file_check; 1 a
 * write that failed (the reason names the file and the system's reason).
 *
 * SIGINT, SIGTERM and SIGHUP (out_file_signals_install): the process says
 * it was interrupted, removes the temporaries still open and exits 1.
 * A committed file's directory is synced after the rename. */
#ifndef ULY_OUT_FILE_H
#define ULY_OUT_FILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

enum { OUT_FILE_STREAM = 0, OUT_FILE_BY_NAME = 1 };

typedef struct out_file {
    char path[4096];   /* as the user named it */
    char target[4096]; /* where the bytes end up: path, or a symbolic link's target */
    char tmp[4160];    /* the temporary beside target; "" when written in place */
    FILE *fp;          /* open for writing (OUT_FILE_STREAM) */
    int slot;          /* in the registry the signal handler reads; -1: none */
} out_file;

/* Notes path as an input of this run (js_file_read does for every file it
 * reads; a reader that opens a file itself, or a command that knows an
 * input before reading it, calls this): st is the file's stat, or NULL to
 * stat path here. Only regular files count; the first 4096 distinct files
 * are remembered. */
void out_file_input_note(const char *path, const struct stat *st);

/* Whether path can be written (how: as out_file_open), without creating
 * anything: 0, or 2 with "PATH: reason (valid: ...)" in why. */
int out_file_check(const char *path, int how, char *why, size_t why_len);

/* Opens path for writing as described above: OUT_FILE_STREAM gives f->fp;
 * OUT_FILE_BY_NAME creates f->tmp for another program to fill. 0, 2 (bad
 * path) or 1 (the system refused), with the reason in why. */
int out_file_open(out_file *f, const char *path, int how, char *why, size_t why_len);

/* Finishes: flushes and closes, then renames the temporary to the target
 * (to the target with suffix appended when suffix is not ""; written in
 * place, the suffix is moot). 0, or 1 with "cannot write FILE: reason". */
int out_file_commit(out_file *f, const char *suffix, char *why, size_t why_len);

/* Closes the stream (flushed, a temporary synced) but keeps the temporary
 * f->tmp unrenamed, for another program to read by that private name
 * before out_file_commit renames it (plot renders from its CSV's
 * temporary: a concurrent run's CSV under the final name is never read).
 * 0, or 1 with "cannot write FILE: reason" (the temporary removed). */
int out_file_finish(out_file *f, char *why, size_t why_len);

/* Abandons: closes and removes the temporary. Safe to call twice. */
void out_file_discard(out_file *f);

/* The whole of text and a newline to path (open, write, commit). */
int out_file_write_text(const char *path, const char *text, char *why, size_t why_len);

/* SIGINT, SIGTERM, SIGHUP: "PROG: interrupted by SIGINT; removed FILE.tmp.PID",
 * then exit status 1. */
int out_file_signals_install(const char *prog);

/* Removes every temporary still registered; async-signal-safe (for a job's
 * abort path as well as the handler). */
void out_file_temporaries_remove(void);

#endif
