/* cmd_maxseq.c: `ulysim max-seq`: the longest sequence each strategy fits on
 * --gpus (uly_search_max_seq, up to --seq or 1G tokens). Under MPI the
 * strategies are shared across ranks. */
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "output.h"
#include "par.h"

static void one(const sim_ctx *c, uly_strategy_id s, int64_t gpus, int64_t seq_hi, sim_summary *out)
{
    memset(out, 0, sizeof *out);
    out->strategy = (int32_t)s;
    out->gpus = gpus;
    uly_result *at = calloc(1, sizeof *at);
    if (!at) {
        out->status = SIM_ROW_ERROR;
        snprintf(out->note, sizeof out->note, "out of memory");
        return;
    }
    int64_t best = 0;
    uly_status st = uly_search_max_seq(&c->model, &c->w, &c->cluster, gpus, s, &c->opts, seq_hi, &best, at);
    if (st == ULY_OK && best > 0) {
        out->status = SIM_ROW_OK;
        out->value = best;
        sim_summary_from_result(out, at);
        out->seq = best;
        /* the search stops at the bound, not at memory, when the layout's
         * next length (it steps by its plan's granule) is past the bound */
        uly_plan *p = malloc(sizeof *p);
        uly_reason rs[ULY_MAX_REASONS];
        int nr = 0;
        uly_workload w = c->w;
        w.seq = best;
        if (p && uly_plan_build(&c->model, &w, &c->cluster, &at->layout, p, rs, &nr) == ULY_OK)
            out->at_bound = best > seq_hi - (p->seq_granule > 1 ? p->seq_granule : 1);
        free(p);
    } else if (st == ULY_OK) {
        /* fits no length: say why at a short sequence every layout divides */
        int64_t probe = gpus <= seq_hi / 2 ? 2 * gpus : seq_hi;
        sim_best(c, s, gpus, probe, out);
        out->value = 0;
    } else if (st == ULY_EINVAL || st == ULY_EOVERFLOW) {
        /* nothing with valid shapes: show why at the bound */
        sim_best(c, s, gpus, seq_hi, out);
        if (out->status == SIM_ROW_OK) out->status = SIM_ROW_NOLAYOUT;
        out->value = 0;
    } else {
        out->status = SIM_ROW_ERROR;
        snprintf(out->note, sizeof out->note, "uly_search_max_seq(%s, %lld GPUs): %s", sim_strategy_name(s),
                 (long long)gpus, uly_status_str(st));
    }
    free(at);
}

int sim_limits_print(const sim_ctx *c, sim_summary *items, int n, sim_rows_kind kind, int64_t bound)
{
    const sim_args *a = c->a;
    int maxseq = kind == SIM_ROWS_MAXSEQ;
    for (int i = 0; i < n; i++)
        if (items[i].status == SIM_ROW_ERROR) {
            sim_err("internal: %s", items[i].note);
            return SIM_EXIT_INTERNAL;
        }
    int rec = -1;
    for (int i = 0; i < n; i++) {
        if (items[i].value <= 0 || items[i].status != SIM_ROW_OK) continue;
        if (rec < 0 || (maxseq ? items[i].value > items[rec].value : items[i].value < items[rec].value) ||
            (items[i].value == items[rec].value && items[i].time.tokens_per_s > items[rec].time.tokens_per_s))
            rec = i;
    }
    FILE *f = stdout;
    if (a->format == SIM_FMT_JSON) {
        int bad = 0;
        cJSON *root = cJSON_CreateObject();
        const char *cmd = maxseq ? "max-seq" : "min-gpus";
        bad |= sim_json_add(root, "command", cJSON_CreateString(cmd));
        cJSON *cfg = sim_json_config(c, cmd);
        if (cfg && maxseq) {
            bad |= sim_json_add(cfg, "gpus", sim_json_int(c->gpus[0]));
            bad |= sim_json_add(cfg, "seq_hi", sim_json_int(bound));
        } else if (cfg) {
            bad |= sim_json_add(cfg, "gpus_hi", sim_json_int(bound));
        }
        bad |= sim_json_add(root, "config", cfg);
        bad |= sim_json_add(root, "flop_convention", cJSON_CreateString(sim_flop_convention));
        cJSON *plans = cJSON_CreateArray();
        for (int i = 0; i < n; i++) {
            cJSON *p = sim_json_plan(c, &items[i]);
            if (p) bad |= sim_json_add(p, maxseq ? "max_seq" : "min_gpus",
                                       items[i].value > 0 ? sim_json_int(items[i].value) : cJSON_CreateNull());
            bad |= sim_json_add(plans, NULL, p);
        }
        bad |= sim_json_add(root, "plans", plans);
        bad |= sim_json_add(root, "recommended", rec >= 0 ? sim_json_int(rec) : cJSON_CreateNull());
        if (bad) {
            cJSON_Delete(root);
            sim_err("out of memory building the JSON output");
            return SIM_EXIT_INTERNAL;
        }
        return sim_json_print(root, f) ? SIM_EXIT_INTERNAL : SIM_EXIT_OK;
    }
    if (a->format == SIM_FMT_TABLE) {
        char b[64];
        if (maxseq) {
            sim_size_str(bound, b, sizeof b);
            fprintf(f, "# ulysim %s max-seq: longest sequence each strategy fits: %s on %s, %lld GPU%s (searched up to %s = %lld tokens)\n",
                    ULY_VERSION, c->model.name, c->cluster.name, (long long)c->gpus[0], sim_plural_s(c->gpus[0]), b,
                    (long long)bound);
        } else {
            sim_size_str(c->w.seq, b, sizeof b);
            fprintf(f, "# ulysim %s min-gpus: fewest GPUs on which each strategy fits: %s on %s, sequence %s (%lld tokens), at most %lld GPUs\n",
                    ULY_VERSION, c->model.name, c->cluster.name, b, (long long)c->w.seq, (long long)bound);
        }
        fprintf(f, "# micro-batch %lld, %s, %s, %s, recompute %s, ZeRO-%d; columns as in `ulysim plan`, at the limit found\n",
                (long long)c->w.micro_batch, uly_dtype_name(c->w.dtype), c->w.causal ? "causal" : "non-causal",
                c->w.flash ? "flash" : "no flash",
                c->w.recompute == ULY_RECOMPUTE_FULL ? "full" : c->w.recompute == ULY_RECOMPUTE_SELECTIVE ? "selective" : "none",
                c->w.zero_stage);
    }
    if (sim_print_rows(c, items, (size_t)n, kind, NULL, 0, 0, f)) return SIM_EXIT_INTERNAL;
    if (a->format == SIM_FMT_TABLE) {
        for (int i = 0; i < n; i++) {
            if (items[i].value > 0 && items[i].status == SIM_ROW_OK) {
                if (maxseq && items[i].at_bound)
                    fprintf(f, "#   %s: fits at the upper bound; raise --seq to search further\n", sim_strategy_name(items[i].strategy));
                continue;
            }
            char r[900];
            sim_reasons_str(c, &items[i], 0, r, sizeof r);
            if (!r[0] && items[i].note[0]) snprintf(r, sizeof r, "%s", items[i].note);
            char line[1200];
            snprintf(line, sizeof line, "%s: %s%s%s", sim_strategy_name(items[i].strategy),
                     maxseq ? "fits no sequence length" : "fits on no GPU count up to the bound", r[0] ? ": " : "", r);
            sim_print_note(f, "#   ", "#       ", line, 120);
        }
        if (rec >= 0) {
            char d[80], b[64];
            sim_degrees_words(&items[rec].layout, d, sizeof d);
            if (maxseq) {
                sim_size_approx(items[rec].value, b, sizeof b);
                fprintf(f, "# longest: %s (%s) at %s tokens\n", sim_strategy_name(items[rec].strategy), d, b);
            } else {
                fprintf(f, "# fewest: %s (%s) on %lld GPU%s\n", sim_strategy_name(items[rec].strategy), d,
                        (long long)items[rec].value, sim_plural_s(items[rec].value));
            }
        }
    }
    return ferror(f) ? SIM_EXIT_INTERNAL : SIM_EXIT_OK;
}

int sim_cmd_maxseq(const sim_ctx *c)
{
    /* one GPU count (checked when resolved); the sequence is the bound */
    const int64_t gpus = c->gpus[0], seq_hi = c->seq[0];
    int n = c->n_strat;
    sim_summary *items = calloc((size_t)n, sizeof *items);
    if (!items) {
        sim_err("out of memory");
        sim_par_abort(SIM_EXIT_INTERNAL);
        return SIM_EXIT_INTERNAL;
    }
    for (int i = 0; i < n; i++)
        if (sim_par_mine((size_t)i)) one(c, c->strat[i], gpus, seq_hi, &items[i]);
    int rc = SIM_EXIT_OK;
    if (sim_par_gather(items, sizeof *items, (size_t)n) != 0) {
        sim_err("gathering the results across MPI ranks failed");
        sim_par_abort(SIM_EXIT_INTERNAL);
        rc = SIM_EXIT_INTERNAL;
    } else if (sim_par_rank() == 0) {
        rc = sim_limits_print(c, items, n, SIM_ROWS_MAXSEQ, seq_hi);
    }
    free(items);
    return rc;
}
