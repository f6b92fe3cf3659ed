/* plan_out.h: the result of the plan command (cmd_plan.c sums the rows up
 * into it) and its writers (plan_out.c): a table for people, CSV, JSON. */
#ifndef SIM_PLAN_OUT_H
#define SIM_PLAN_OUT_H

#include <stdio.h>

#include "driver.h"
#include "output.h"

typedef struct sim_plan_result {
    const sim_summary *row;  /* one per strategy */
    int nrows;
    const sim_summary *pure; /* the pure all-to-all layout, or NULL */
    int rec;                 /* the recommendation, or -1 */
    char why[800];           /* why it wins */
    char note[1400];         /* on the pure all-to-all layout, or empty */
    const uly_plan *plan;    /* the recommendation's plan and per-op times, or NULL */
    const uly_result *pres;
} sim_plan_result;

/* 1 when the row has a layout that fits. */
int sim_plan_usable(const sim_summary *s);

/* The writers of a sim_plan_result (driver.h's sim_writer). */
int sim_plan_write_table(const sim_ctx *c, const void *result, FILE *f);
int sim_plan_write_json(const sim_ctx *c, const void *result, FILE *f);
int sim_plan_write_csv(const sim_ctx *c, const void *result, FILE *f);

#endif
