/* timeline.h: the recommended plan's predicted schedule as a Chrome
 * trace-event file (`ulysim --timeline FILE`; timeline.c says what it lays
 * out). */
#ifndef SIM_TIMELINE_H
#define SIM_TIMELINE_H

#include "context.h"

/* Writes rec's plan p, priced in r, to path. Returns 0, 1 (internal) or 2
 * (cannot write path), the message printed. */
int sim_timeline_write(const char *path, const sim_ctx *c, const sim_summary *rec, const uly_plan *p,
                       const uly_result *r);

#endif
