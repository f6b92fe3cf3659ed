/* par_serial.c: one process, no MPI (built when MPI is not found). */
#include "par.h"

int sim_par_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}
void sim_par_finalize(void) {}
void sim_par_abort(int code) { (void)code; }
int sim_par_rank(void) { return 0; }
int sim_par_size(void) { return 1; }
const char *sim_par_kind(void) { return "serial"; }

int sim_par_gather(void *items, size_t item_size, size_t n)
{
    (void)items;
    (void)item_size;
    (void)n;
    return 0;
}
