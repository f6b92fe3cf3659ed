/* fuzz_args.c: libFuzzer target for the ulysim command line: the input is
 * split at NUL and newline bytes into argv; sim_args_parse and, when it
 * accepts, sim_ctx_resolve (presets, workload, strategies) run on it.
 * Properties: never crashes or leaks; the result is 0 or 2 (bad input) with
 * a one-line reason, never anything else. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "context.h"

/* The parser lists the registry's commands in --help only; the fuzzer
 * links the parser without them (those commands parse their own flags). */
int sim_command_count(void) { return 0; }
const sim_command *sim_command_at(int i) { (void)i; return NULL; }

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "ulysim";
    char *p = buf, *end = buf + size;
    while (p <= end && argc < MAX_ARGS) {
        char *q = p;
        while (q < end && *q && *q != '\n') q++;
        *q = 0;
        argv[argc++] = p;
        p = q + 1;
    }
    argv[argc] = NULL;
    static sim_args a;
    static sim_ctx c;
    char why[768];
    why[0] = 0;
    int rc = sim_args_parse(argc, argv, &a, why, sizeof why);
    if (rc != 0 && rc != 2) abort();
    if (rc == 2 && (!why[0] || strchr(why, '\n'))) abort();
    if (rc == 0 && !a.help && !a.version && a.cmd != SIM_CMD_PRESETS) {
        why[0] = 0;
        rc = sim_ctx_resolve(&a, &c, why, sizeof why);
        if (rc != 0 && rc != 2) abort();
        if (rc == 2 && (!why[0] || strchr(why, '\n'))) abort();
    }
    free(buf);
    return 0;
}
