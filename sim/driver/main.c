/* main.c: the ulysim command: main. A command of the registry (commands.c)
 * parses its own arguments; otherwise MPI starts and run.c's sim_run parses
 * the planning flags and runs one planning command, plan by default. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "context.h"
#include "driver.h"
#include "out_file.h"
#include "par.h"
#include "run.h"

int main(int argc, char **argv)
{
    out_file_signals_install("ulysim"); /* an interrupted write leaves no temporary */
    /* commands with arguments of their own run without MPI */
    const sim_command *cmd = argc > 1 ? sim_command_find(argv[1]) : NULL;
    if (cmd) {
        /* `ulysim COMMAND -V` as the planning commands take it */
        const int version = argc == 3 && (!strcmp(argv[2], "-V") || !strcmp(argv[2], "--version"));
        if (version) sim_version_print();
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
    int rc = sim_run(argc, argv);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        sim_err("cannot write the output: %s", strerror(errno));
        rc = SIM_EXIT_INTERNAL;
    }
    sim_par_finalize();
    return rc;
}
