/* trace_torch.h: `ulysim validate --torch-trace FILE.json` (trace_torch.c):
 * a torch.profiler trace's kernel time per category and step against the
 * plan the same flags price. */
#ifndef SIM_TRACE_TORCH_H
#define SIM_TRACE_TORCH_H

#include "ulysim.h"

/* argv[0] is "validate"; the rest: --torch-trace FILE and the plan
 * command's flags. Returns the exit status. */
int sim_validate_torch(int argc, char **argv);

/* The plan's time per step in each category of torch_trace.h (cat_s has
 * TT_CAT_COUNT entries): each op's priced time times its count per step. */
void sim_torch_predict(const uly_plan *p, const uly_result *r, double *cat_s);

#endif
