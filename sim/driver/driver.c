/* driver.c: the one driver of the planning commands (driver.h): the rows
 * shared over the MPI ranks and gathered on rank 0, a progress bar for the
 * long ones, and the writer of --format. */
#define _POSIX_C_SOURCE 200809L
#include "driver.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "output.h"
#include "par.h"

/* ------------------------------------------------------- the progress bar */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A progress bar on stderr: only on a tty, only after a second, at most ten
 * updates a second; rank 0 shows its own share. */
typedef struct progress {
    int on, shown;
    double t0, last;
    size_t total;
    const char *name;
} progress;

static void progress_start(progress *p, int wanted, const char *name, size_t total)
{
    memset(p, 0, sizeof *p);
    p->on = wanted && sim_par_rank() == 0 && isatty(STDERR_FILENO);
    p->t0 = p->last = now_s();
    p->total = total;
    p->name = name;
}

static void progress_step(progress *p, size_t done)
{
    if (!p->on) return;
    double t = now_s();
    if (t - p->t0 < 1.0 || t - p->last < 0.1) return;
    p->last = t;
    p->shown = 1;
    int width = 40;
    int fill = p->total ? (int)((double)done / (double)p->total * width) : width;
    char bar[64];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = 0;
    double eta = done ? (t - p->t0) * (double)(p->total - done) / (double)done : 0;
    fprintf(stderr, "\rulysim %s [%s] %zu/%zu, %.0f s left ", p->name, bar, done, p->total, eta);
    fflush(stderr);
}

static void progress_end(progress *p)
{
    if (p->on && p->shown) {
        fprintf(stderr, "\r%*s\r", 79, "");
        fflush(stderr);
    }
}

/* ------------------------------------------------------------ the driver */

static void rows_free(sim_rows *r)
{
    free(r->row);
    free(r->plan);
    free(r->result);
    free(r->mark);
}

static int rows_alloc(sim_rows *r, size_t n, int keeps_plans)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    const size_t k = n ? n : 1;
    r->row = calloc(k, sizeof *r->row);
    r->mark = calloc(k, 1);
    if (keeps_plans) {
        r->plan = calloc(k, sizeof *r->plan);
        r->result = calloc(k, sizeof *r->result);
    }
    return r->row && r->mark && (!keeps_plans || (r->plan && r->result));
}

/* Each rank computes its rows (i % size == rank). */
static void rows_compute(const sim_ctx *c, const sim_planning *cmd, sim_rows *r)
{
    size_t mine = 0, done = 0;
    for (size_t i = 0; i < r->n; i++) mine += sim_par_mine(i);
    progress pg;
    progress_start(&pg, cmd->shows_progress && c->a->progress, cmd->name, mine);
    for (size_t i = 0; i < r->n; i++) {
        if (!sim_par_mine(i)) continue;
        cmd->compute(c, i, &r->row[i], r->plan ? &r->plan[i] : NULL, r->result ? &r->result[i] : NULL);
        progress_step(&pg, ++done);
    }
    progress_end(&pg);
}

/* Every row on rank 0: 0, or 1 on failure. A row from another rank holds
 * that process's address of its registry entry: each row's is set again
 * here from its id. */
static int rows_gather(sim_rows *r)
{
    if (sim_par_gather(r->row, sizeof *r->row, r->n) != 0) return 1;
    if (r->plan && sim_par_gather(r->plan, sizeof *r->plan, r->n) != 0) return 1;
    if (r->result && sim_par_gather(r->result, sizeof *r->result, r->n) != 0) return 1;
    for (size_t i = 0; i < r->n; i++) r->row[i].strategy = uly_strategy_get(r->row[i].strategy_id);
    return 0;
}

/* Rank 0: sums the rows up and writes the result. */
static int rows_report(const sim_ctx *c, const sim_planning *cmd, sim_rows *r)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->row[i].status == SIM_ROW_ERROR) {
            sim_err("internal: %s", r->row[i].note);
            return SIM_EXIT_INTERNAL;
        }
    void *result = calloc(1, cmd->result_size ? cmd->result_size : 1);
    if (!result) {
        sim_err("out of memory");
        return SIM_EXIT_INTERNAL;
    }
    int rc = cmd->sum_up(c, r, result);
    const unsigned fmt = (unsigned)c->a->format;
    if (rc == SIM_EXIT_OK) rc = fmt < 3 && cmd->write[fmt] ? cmd->write[fmt](c, result, stdout) : SIM_EXIT_INTERNAL;
    if (rc == SIM_EXIT_OK && cmd->after) rc = cmd->after(c, result);
    free(result);
    return rc;
}

int sim_planning_run(const sim_ctx *c, const sim_planning *cmd)
{
    sim_rows r;
    int rc = SIM_EXIT_OK;
    if (!rows_alloc(&r, cmd->count(c), cmd->keeps_plans)) {
        sim_err("out of memory for %zu rows of %s", r.n, cmd->name);
        sim_par_abort(SIM_EXIT_INTERNAL);
        rc = SIM_EXIT_INTERNAL;
    } else {
        rows_compute(c, cmd, &r);
        if (rows_gather(&r) != 0) {
            sim_err("gathering the results across MPI ranks failed");
            sim_par_abort(SIM_EXIT_INTERNAL);
            rc = SIM_EXIT_INTERNAL;
        } else if (sim_par_rank() == 0) {
            rc = rows_report(c, cmd, &r);
        }
    }
    rows_free(&r);
    return rc;
}

int sim_require_fit(const sim_ctx *c, int any_fits, const char *what)
{
    if (!c->a->require_fit || any_fits) return SIM_EXIT_OK;
    const sim_args *a = c->a;
    const int pinned = a->pin_u > 0 || a->pin_r > 0 || a->pin_t > 0 || a->pin_pp > 0;
    fflush(stdout);
    sim_err("--require-fit: %s (exit %d; the output above says why)",
            pinned ? "the pinned layout cannot run" : what, SIM_EXIT_NOFIT);
    return SIM_EXIT_NOFIT;
}
