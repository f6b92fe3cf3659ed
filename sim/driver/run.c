/* run.c: one planning command run on a command line (sim_run): the flags
 * parsed, resolved once into a sim_ctx (context.c) and the command of the
 * table below run on it, plan by default; and the --version line. Split from
 * main.c so that the Python package's extension runs the same commands in
 * its own process (python/src/ulysim_ext.c), without main's MPI start-up. */
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "context.h"
#include "driver.h"
#include "par.h"
#include "run.h"

/* -V, --version: one line, for every command */
void sim_version_print(void)
{
    printf("ulysim %s (libulysim %s, %s build)\n", ULY_VERSION, ULY_VERSION, sim_par_kind());
}

/* The planning commands that the driver runs on a resolved context, by sim_cmd. */
static const sim_planning *const planning[] = {
    [SIM_CMD_PLAN] = &sim_cmd_plan,
    [SIM_CMD_MAXSEQ] = &sim_cmd_maxseq,
    [SIM_CMD_MINGPUS] = &sim_cmd_mingpus,
    [SIM_CMD_SWEEP] = &sim_cmd_sweep,
};

int sim_run(int argc, char **argv)
{
    sim_args *a = malloc(sizeof *a);
    sim_ctx *c = malloc(sizeof *c);
    char why[768];
    int rc;
    if (!a || !c) {
        sim_err("out of memory");
        rc = SIM_EXIT_INTERNAL;
        goto out;
    }
    rc = sim_args_parse(argc, argv, a, why, sizeof why);
    if (rc) {
        sim_err("%s", why);
        goto out;
    }
    if (a->help) {
        if (sim_par_rank() == 0) sim_args_help(stdout);
        goto out;
    }
    if (a->version) {
        if (sim_par_rank() == 0) sim_version_print();
        goto out;
    }
    if (a->cmd == SIM_CMD_PRESETS) { /* no model or cluster to resolve */
        rc = sim_cmd_presets(a);
        goto out;
    }
    rc = sim_ctx_resolve(a, c, why, sizeof why);
    if (rc) {
        sim_err("%s", why);
        goto out;
    }
    if (sim_par_rank() == 0) sim_mlm_report(a, &c->model, stderr);
    const size_t n_planning = sizeof planning / sizeof planning[0];
    rc = (size_t)a->cmd < n_planning && planning[a->cmd] ? sim_planning_run(c, planning[a->cmd]) : SIM_EXIT_INTERNAL;
out:
    free(a);
    free(c);
    return rc;
}


int sim_run_command(const sim_command *cmd, int argc, char **argv)
{
    /* `ulysim COMMAND -V` as the planning commands take it */
    if (argc == 3 && (!strcmp(argv[2], "-V") || !strcmp(argv[2], "--version"))) {
        sim_version_print();
        return SIM_EXIT_OK;
    }
    return cmd->run(argc - 1, argv + 1);
}

int sim_run_any(int argc, char **argv)
{
    const sim_command *cmd = argc > 1 ? sim_command_find(argv[1]) : NULL;
    return cmd ? sim_run_command(cmd, argc, argv) : sim_run(argc, argv);
}
