/* run.h: a planning command run on a command line (run.c), for main.c and
 * for the Python package's extension, which runs it in its own process. */
#ifndef SIM_RUN_H
#define SIM_RUN_H

/* -V, --version: the one line every command prints */
void sim_version_print(void);

/* Parses argv (argv[0] the program) as the planning commands' flags and runs
 * the command (plan, max-seq, min-gpus, sweep, presets): output on stdout,
 * a bad value's one line on stderr. Returns the exit status (args.h).
 * MPI, where built in, is the caller's to start (sim_par_init). */
int sim_run(int argc, char **argv);

/* A command of the registry (commands.h; argv[1] its name) as main runs
 * it: `ulysim COMMAND -V` prints the version line, else the command parses
 * the rest. Returns the exit status. */
struct sim_command;
int sim_run_command(const struct sim_command *cmd, int argc, char **argv);

/* The registry's commands (validate, trace, ...) as main runs them, else
 * sim_run: argv[0] the program. Without MPI start-up (one process). */
int sim_run_any(int argc, char **argv);

#endif
