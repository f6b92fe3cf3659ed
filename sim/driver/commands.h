/* commands.h: subcommands with arguments of their own (validate, calibrate,
 * trace, plot, reproduce). The planning family (plan, max-seq, min-gpus,
 * sweep, presets) shares args.c's flags and runs from main.c's table on a
 * context resolved once (context.h); a command in
 * this registry gets argv from its name on and parses the rest itself
 * (sim_args_parse can still be used for the model/cluster/workload flags).
 * Adding one: a file sim/FOLDER/cmd_NAME.c (the
 * folder of its axis, sim/cli.cmake) defining the function, and one line in
 * commands.c. */
#ifndef SIM_COMMANDS_H
#define SIM_COMMANDS_H

typedef struct sim_command {
    const char *name;
    const char *summary; /* one line for --help */
    /* argv[0] is the command's name; returns the exit status (0, 1, 2) */
    int (*run)(int argc, char **argv);
} sim_command;

/* NULL when name is not a registered command. */
const sim_command *sim_command_find(const char *name);
/* The registry, for --help: count and i-th entry. */
int sim_command_count(void);
const sim_command *sim_command_at(int i);

#endif
