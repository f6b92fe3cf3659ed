/* runner.h: runs a command with an exact argv (empty arguments included),
 * captures stdout and stderr, and kills it after a timeout. */
#ifndef CLI_RUNNER_H
#define CLI_RUNNER_H

#include <stddef.h>
#include <stdio.h>

typedef struct run_out {
    int rc;          /* exit status, or -1 when it did not exit */
    int sig;         /* signal that ended it, or 0 */
    int timed_out;
    char *out, *err; /* NUL-terminated */
    size_t out_len, err_len;
} run_out;

/* Returns 0 when the command ran (whatever its status), -1 when it could not start. */
int run_cmd(char *const argv[], double timeout_s, run_out *o);
void run_free(run_out *o);
/* The whole of an open file from its start, NUL-terminated (len: its bytes, may be NULL); NULL when out of memory. */
char *run_slurp(FILE *f, size_t *len);

#endif
