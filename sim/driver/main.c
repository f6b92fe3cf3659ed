/* main.c: the ulysim command: main. A command of the registry (commands.c)
 * parses its own arguments; otherwise MPI starts and run.c's sim_run parses
 * the planning flags and runs one planning command, plan by default. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "out_file.h"
#include "par.h"
#include "run.h"

int main(int argc, char **argv)
{
    out_file_signals_install("ulysim"); /* an interrupted write leaves no temporary */
    /* commands with arguments of their own run without MPI */
    const sim_command *cmd = argc > 1 ? sim_command_find(argv[1]) : NULL;
    if (cmd) {
        int rc = sim_run_command(cmd, argc, argv);
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
