/* main.c: the ulysim command: main and the command table. A command of the
 * registry (commands.c) parses its own arguments; otherwise the planning
 * flags are parsed, resolved once into a sim_ctx (context.c) and one planning
 * command runs on it, plan by default. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "context.h"
#include "driver.h"
#include "out_file.h"
#include "par.h"

/* -V, --version: one line, for every command */
static void version_print(void)
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

static int run(int argc, char **argv)
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
        if (sim_par_rank() == 0) version_print();
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

int main(int argc, char **argv)
{
    out_file_signals_install("ulysim"); /* an interrupted write leaves no temporary */
    /* commands with arguments of their own run without MPI */
    const sim_command *cmd = argc > 1 ? sim_command_find(argv[1]) : NULL;
    if (cmd) {
        /* `ulysim COMMAND -V` as the planning commands take it */
        const int version = argc == 3 && (!strcmp(argv[2], "-V") || !strcmp(argv[2], "--version"));
        if (version) version_print();
        int rc = version ? 0 : cmd->run(argc - 1, argv + 1);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            fprintf(stderr, "ulysim: cannot write the output: %s\n", strerror(errno));
            rc = SIM_EXIT_INTERNAL;
        }
        return rc;
    }
    if (sim_par_init(&argc, &argv) != 0) {
        fprintf(stderr, "ulysim: MPI initialisation failed\n");
        return SIM_EXIT_INTERNAL;
    }
    int rc = run(argc, argv);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        sim_err("cannot write the output: %s", strerror(errno));
        rc = SIM_EXIT_INTERNAL;
    }
    sim_par_finalize();
    return rc;
}
