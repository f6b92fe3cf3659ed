/* commands.c: the registry of subcommands with their own arguments. */
#include <string.h>

#include "commands.h"

/* One line per command; its function lives in sim/FOLDER/cmd_NAME.c. */
int sim_cmd_plot_main(int argc, char **argv); /* cmd_plot.c */
int sim_cmd_reproduce(int argc, char **argv); /* cmd_reproduce.c */
int sim_cmd_validate(int argc, char **argv);  /* cmd_validate.c */
int sim_cmd_calibrate(int argc, char **argv); /* cmd_calibrate.c */
int sim_cmd_trace(int argc, char **argv);     /* cmd_trace.c */
int sim_cmd_runs(int argc, char **argv);      /* cmd_runs.c */
static const sim_command registry[] = {
    {"plot", "paper-style figures (gnuplot) from the model", sim_cmd_plot_main},
    {"reproduce", "the seed papers' experiments: predicted against published, with the error", sim_cmd_reproduce},
    {"validate", "prediction against measurement: ulyharness traces, runs files, torch.profiler traces", sim_cmd_validate},
    {"calibrate", "fit link latency and bandwidth (and CPU compute rates) from traces: a cluster profile", sim_cmd_calibrate},
    {"trace", "trace tools: `trace export RUN.trace -o run.json` (Chrome trace events, Perfetto)", sim_cmd_trace},
    {"runs", "runs files from other tools: `runs from-megatron LOG... -o runs.csv` (Megatron-LM logs)", sim_cmd_runs},
    {NULL, NULL, NULL},
};

int sim_command_count(void) { return (int)(sizeof registry / sizeof registry[0]) - 1; }

const sim_command *sim_command_at(int i) { return i >= 0 && i < sim_command_count() ? &registry[i] : NULL; }

const sim_command *sim_command_find(const char *name)
{
    if (!name) return NULL;
    for (int i = 0; i < sim_command_count(); i++)
        if (strcmp(registry[i].name, name) == 0) return &registry[i];
    return NULL;
}
