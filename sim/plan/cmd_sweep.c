/* cmd_sweep.c: `ulysim sweep`: the best layout of every strategy at every
 * (seq, gpus) of two lists or ranges. Rows go strategy by strategy, then
 * sequence, then GPUs; the driver (driver.h) shares them across MPI ranks,
 * and the output is the same byte for byte as one process. */
#include "driver.h"
#include "output.h"
#include "plan_out.h"

typedef struct sweep {
    const sim_summary *row;
    const unsigned char *best; /* 1: the most tokens/s at its (seq, gpus) */
    size_t n, ns, nq, ng;      /* rows; strategies, sequence lengths, GPU counts */
} sweep;

static size_t count(const sim_ctx *c) { return (size_t)c->n_strat * (size_t)c->n_seq * (size_t)c->n_gpus; }

static void compute(const sim_ctx *c, size_t i, sim_summary *out, uly_plan *plan, uly_result *res)
{
    (void)plan;
    (void)res;
    const size_t nq = (size_t)c->n_seq, ng = (size_t)c->n_gpus;
    const size_t is = i / (nq * ng), iq = i / ng % nq, ig = i % ng;
    sim_best(c, c->strat[is], c->gpus[ig], c->seq[iq], out);
}

/* The best strategy at each (seq, gpus). */
static int sum_up(const sim_ctx *c, sim_rows *rows, void *result)
{
    sweep *S = result;
    const size_t ns = (size_t)c->n_strat, nq = (size_t)c->n_seq, ng = (size_t)c->n_gpus, n = rows->n;
    *S = (sweep){.row = rows->row, .best = rows->mark, .n = n, .ns = ns, .nq = nq, .ng = ng};
    const sim_summary *r = rows->row;
    for (size_t iq = 0; iq < nq; iq++)
        for (size_t ig = 0; ig < ng; ig++) {
            size_t bi = n;
            for (size_t is = 0; is < ns; is++) {
                size_t i = (is * nq + iq) * ng + ig;
                if (r[i].status != SIM_ROW_OK || !r[i].feasible) continue;
                if (bi == n || r[i].time.tokens_per_s > r[bi].time.tokens_per_s) bi = i;
            }
            if (bi < n) rows->mark[bi] = 1;
        }
    return SIM_EXIT_OK;
}

static int write_json(const sim_ctx *c, const void *result, FILE *f)
{
    const sweep *S = result;
    int bad = 0;
    cJSON *root = cJSON_CreateObject();
    bad |= sim_json_add(root, "command", cJSON_CreateString("sweep"));
    cJSON *cfg = sim_json_config(c, "sweep");
    cJSON *sq = cJSON_CreateArray(), *gp = cJSON_CreateArray();
    for (size_t k = 0; k < S->nq; k++) bad |= sim_json_add(sq, NULL, sim_json_int(c->seq[k]));
    for (size_t k = 0; k < S->ng; k++) bad |= sim_json_add(gp, NULL, sim_json_int(c->gpus[k]));
    bad |= sim_json_add(cfg, "seq", sq);
    bad |= sim_json_add(cfg, "gpus", gp);
    bad |= sim_json_add(root, "config", cfg);
    bad |= sim_json_add(root, "flop_convention", cJSON_CreateString(sim_flop_convention));
    cJSON *plans = cJSON_CreateArray();
    for (size_t i = 0; i < S->n && !bad; i++) {
        cJSON *p = sim_json_plan(c, &S->row[i]);
        if (p) bad |= sim_json_add(p, "best", cJSON_CreateBool(S->best[i]));
        bad |= sim_json_add(plans, NULL, p);
    }
    bad |= sim_json_add(root, "plans", plans);
    return sim_json_emit(root, bad, f);
}

/* Table and CSV: the rows, one block per strategy (gnuplot index), a blank
 * line per sequence in the table. */
static int write_rows(const sim_ctx *c, const void *result, FILE *f)
{
    const sweep *S = result;
    if (c->a->format == SIM_FMT_TABLE) {
        fprintf(f, "# ulysim %s sweep: %s on %s; %zu strategies x %zu sequence lengths x %zu GPU counts\n", ULY_VERSION,
                c->model.name, c->cluster.name, S->ns, S->nq, S->ng);
        fprintf(f, "# best layout per row; best = 1: highest tokens/s at its (seq, gpus); one block per strategy (gnuplot index), a blank line per sequence\n");
    }
    char grown[200];
    if (sim_cluster_grown(c, grown, sizeof grown)[0]) {
        if (c->a->format == SIM_FMT_TABLE) fprintf(f, "# cluster   %s\n", grown);
        else sim_err("note: %s", grown); /* the CSV holds rows alone: said on stderr */
    }
    return sim_print_rows(c, S->row, S->n, SIM_ROWS_SWEEP, S->best, (int)S->ng, (int)(S->nq * S->ng), f)
               ? SIM_EXIT_INTERNAL
               : SIM_EXIT_OK;
}

/* --require-fit: no row of the sweep fits */
static int after(const sim_ctx *c, const void *result)
{
    const sweep *S = result;
    int any = 0;
    for (size_t i = 0; i < S->n && !any; i++) any = sim_plan_usable(&S->row[i]);
    return sim_require_fit(c, any, "no strategy fits at any sequence length and GPU count of the sweep");
}

const sim_planning sim_cmd_sweep = {.name = "sweep", .shows_progress = 1, .count = count, .compute = compute,
                                    .result_size = sizeof(sweep), .sum_up = sum_up,
                                    .write = {write_rows, write_json, write_rows}, .after = after};
