/* validate_host.h: the host a cluster profile was measured on, and the
 * profile `ulysim calibrate --host` writes for this host in the user's
 * configuration directory, which `ulysim validate` prices a harness trace
 * of the same host with (validate_host.c). */
#ifndef SIM_VALIDATE_HOST_H
#define SIM_VALIDATE_HOST_H

#include <stddef.h>

#include "trace_read.h"

/* A host as a profile records it ("host": {"cpu_model", "cores", "ranks",
 * "blas_core"}), or as older calibrated profiles name it in their "source"
 * (the CPU alone). */
typedef struct val_host {
    char cpu_model[128]; /* "" when the profile names no host */
    int cores;           /* logical CPUs online; 0 when not recorded */
    int ranks;           /* ranks sharing them; 0 when not recorded */
    char blas_core[32];  /* OpenBLAS kernel set the rates were measured with; "" when not recorded */
} val_host;

/* The host of profile (a preset name or file), or, profile NULL, of the JSON
 * text a trace embeds; cpu_model "" when it records none. */
void val_profile_host(const char *profile, const char *embedded_text, val_host *h);

/* The user's configuration directory: $ULYSIM_CONFIG_DIR, else
 * $XDG_CONFIG_HOME/ulysim, else $HOME/.config/ulysim. 0, or -1 when none of
 * them is set (no HOME). */
int val_config_dir(char *dir, size_t n);

/* The host profile's name for a CPU model, core count and rank count:
 * host-<model, lower case, runs of other characters as '-', (R) and (TM)
 * dropped>-<cores>-np<ranks>, at most ULY_NAME_LEN - 1 characters. */
void val_host_profile_name(const char *cpu_model, int cores, int ranks, char *name, size_t n);

/* The host profile for run in the configuration directory: 1 with its path
 * in path when the file exists, 0 when not (path: where it would be; "" when
 * there is no configuration directory). */
int val_host_profile_find(const trace_run *run, char *path, size_t n);

/* Whether a run's host is the profile's: 1 the same CPU model (and core
 * count, where the profile records one), 0 another, -1 the profile records
 * no host. */
int val_host_matches(const trace_run *run, const val_host *h);

/* "CPU, N cores" (or "CPU" where the core count is not recorded), for
 * messages. */
void val_host_describe(const char *cpu_model, int cores, char *buf, size_t n);

#endif
