/* runs_flags.h: the layout and model of `ulysim runs from-megatron` for logs
 * without their argument block, from --args-file or ulysim's planning flags
 * (runs_flags.c). */
#ifndef SIM_RUNS_FLAGS_H
#define SIM_RUNS_FLAGS_H

#include <stddef.h>

#include "megatron_log.h"

#define RUNS_FLAGS_MAX 256

/* The planning arguments as typed, in order (pointers into argv). */
typedef struct runs_flags {
    char *argv[RUNS_FLAGS_MAX];
    int n;
} runs_flags;

/* argv[*i] is a planning option (ulysim's, Megatron-LM's, --args-file):
 * 1 with it (and its value, *i on it) appended to f; 0 when it is not one. */
int runs_flags_take(int argc, char **argv, int *i, runs_flags *f);

/* The flags read by the planning parser into the argument fields of r (a
 * log read by mlog_parse_reports without a block): world size, degrees,
 * strategy's context-parallel settings, sequence, batch, model, recompute,
 * optimizer, precision. 0, or 2 with the reason in why. */
int runs_flags_fill(const runs_flags *f, mlog_run *r, char *why, size_t n);

#endif
