/* cmd_mingpus.c: `ulysim min-gpus`: the fewest GPUs on which each strategy
 * fits --seq (uly_search_min_gpus, up to --gpus or the cluster's GPUs). */
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "output.h"
#include "par.h"

static void one(const sim_ctx *c, uly_strategy_id s, int64_t gpus_hi, sim_summary *out)
{
    memset(out, 0, sizeof *out);
    out->strategy = (int32_t)s;
    out->seq = c->w.seq;
    uly_result *at = calloc(1, sizeof *at);
    if (!at) {
        out->status = SIM_ROW_ERROR;
        snprintf(out->note, sizeof out->note, "out of memory");
        return;
    }
    int64_t best = 0;
    uly_status st = uly_search_min_gpus(&c->model, &c->w, &c->cluster, s, &c->opts, gpus_hi, &best, at);
    if (st == ULY_OK && best > 0) {
        out->status = SIM_ROW_OK;
        out->value = best;
        sim_summary_from_result(out, at);
        out->gpus = best;
    } else if (st == ULY_OK) {
        /* fits on no count: say why on the most GPUs searched */
        sim_best(c, s, gpus_hi, c->w.seq, out);
        out->value = 0;
    } else if (st == ULY_EINVAL || st == ULY_EOVERFLOW) {
        sim_best(c, s, gpus_hi, c->w.seq, out);
        if (out->status == SIM_ROW_OK) out->status = SIM_ROW_NOLAYOUT;
        out->value = 0;
    } else {
        out->status = SIM_ROW_ERROR;
        snprintf(out->note, sizeof out->note, "uly_search_min_gpus(%s, seq %lld): %s", sim_strategy_name(s),
                 (long long)c->w.seq, uly_status_str(st));
    }
    free(at);
}

int sim_cmd_mingpus(const sim_ctx *c)
{
    const int64_t gpus_hi = c->gpus[0]; /* the bound: --gpus, else the cluster's GPUs */
    int n = c->n_strat;
    sim_summary *items = calloc((size_t)n, sizeof *items);
    if (!items) {
        sim_err("out of memory");
        sim_par_abort(SIM_EXIT_INTERNAL);
        return SIM_EXIT_INTERNAL;
    }
    for (int i = 0; i < n; i++)
        if (sim_par_mine((size_t)i)) one(c, c->strat[i], gpus_hi, &items[i]);
    int rc = SIM_EXIT_OK;
    if (sim_par_gather(items, sizeof *items, (size_t)n) != 0) {
        sim_err("gathering the results across MPI ranks failed");
        sim_par_abort(SIM_EXIT_INTERNAL);
        rc = SIM_EXIT_INTERNAL;
    } else if (sim_par_rank() == 0) {
        rc = sim_limits_print(c, items, n, SIM_ROWS_MINGPUS, gpus_hi);
    }
    free(items);
    return rc;
}
