/* validate_report.c: the writers of `ulysim validate` on harness traces
 * (validate_report.h): per run its ops, bytes, step, overlap and host; then
 * the runs, the summary over them, the ranking and the checks. JSON holds
 * the same, every op of every run included. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "output.h"
#include "validate_report.h"
#include "validate_runs.h"

const char val_step_definition[] =
    "step = one layer of one micro-batch, forward and backward, as the harness executed it: the sum over the "
    "per-layer ops (not per-model, not per-step) of each op's time (the median rank's, or the slowest rank's "
    "where the plan gives the ranks different work: a contiguous causal split); the harness runs every op after a "
    "barrier "
    "(or, --sync pass, the ops back to back after one barrier per pass), "
    "ring K/V transfers inside the attention op they overlap (their line times the exposed wait, the attention "
    "line the rest) and ZeRO prefetches blocking; the prediction sums uly_plan_price's op_time_s the same way, "
    "with op_exposed_s for the overlapped ring transfers";

/* A file's name without its folders, for the table's columns. */
static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

/* ------------------------------------------------------------------- JSON */

static cJSON *json_ops(const trace_join *j)
{
    cJSON *oa = cJSON_CreateArray();
    for (int k = 0; k < j->n; k++) {
        const trace_jop *x = &j->ops[k];
        cJSON *q = cJSON_CreateObject();
        cJSON_AddNumberToObject(q, "id", x->id);
        cJSON_AddStringToObject(q, "name", uly_op_type_name(x->op->type));
        cJSON_AddStringToObject(q, "phase", uly_phase_name(x->op->phase));
        cJSON_AddStringToObject(q, "kind", uly_op_kind_name(x->op->kind));
        cJSON_AddStringToObject(q, "coll", uly_coll_name(x->op->coll));
        cJSON_AddBoolToObject(q, "in_step", x->layer);
        cJSON_AddStringToObject(q, "time_is", x->hidden ? "exposed" : "total");
        cJSON_AddNumberToObject(q, "bytes_planned", (double)x->bytes_plan);
        cJSON_AddNumberToObject(q, "bytes_measured", (double)x->bytes_meas);
        cJSON_AddBoolToObject(q, "bytes_ok", x->bytes_plan == x->bytes_meas);
        cJSON_AddNumberToObject(q, "predicted_s", x->pred_s);
        cJSON_AddNumberToObject(q, "predicted_total_s", x->pred_total_s);
        cJSON_AddNumberToObject(q, "measured_s", x->meas_s);
        cJSON_AddNumberToObject(q, "measured_min_s", x->meas_min_s);
        cJSON_AddNumberToObject(q, "measured_max_s", x->meas_max_s);
        if (isfinite(x->err)) cJSON_AddNumberToObject(q, "error", x->err);
        else cJSON_AddNullToObject(q, "error");
        cJSON_AddItemToArray(oa, q);
    }
    return oa;
}

/* The step, its compute, exposed communication and overlap. */
static void json_times(cJSON *o, const trace_join *j)
{
    cJSON *st = cJSON_AddObjectToObject(o, "step");
    cJSON_AddNumberToObject(st, "predicted_s", j->pred_step_s);
    cJSON_AddNumberToObject(st, "measured_s", j->meas_step_s);
    cJSON_AddNumberToObject(st, "error", j->step_err);
    cJSON_AddNumberToObject(st, "model_layer_s", j->model_layer_s);
    cJSON *cp = cJSON_AddObjectToObject(o, "compute");
    cJSON_AddNumberToObject(cp, "predicted_s", j->pred_compute_s);
    cJSON_AddNumberToObject(cp, "measured_s", j->meas_compute_s);
    cJSON *ce = cJSON_AddObjectToObject(o, "comm_exposed");
    cJSON_AddNumberToObject(ce, "predicted_s", j->pred_comm_exposed_s);
    cJSON_AddNumberToObject(ce, "measured_s", j->meas_comm_exposed_s);
    cJSON_AddNumberToObject(ce, "measured_wait_s", j->meas_wait_s); /* late peers, apart from the transfers */
    cJSON *ov = cJSON_AddObjectToObject(o, "overlap");
    cJSON_AddNumberToObject(ov, "transfer_predicted_s", j->pred_hidden_total_s);
    cJSON_AddNumberToObject(ov, "hidden_predicted_s", j->pred_overlapped_s);
    cJSON_AddNumberToObject(ov, "hidden_measured_s", j->meas_overlapped_s);
    if (j->pred_hidden_total_s > 0) {
        cJSON_AddNumberToObject(ov, "fraction_predicted", j->pred_overlapped_s / j->pred_hidden_total_s);
        cJSON_AddNumberToObject(ov, "fraction_measured", j->meas_overlapped_s / j->pred_hidden_total_s);
    }
}

static cJSON *json_run(const val_set *s, int f)
{
    const trace_run *r = &s->runs[f];
    const trace_join *j = &s->joins[f];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "file", r->path);
    cJSON_AddStringToObject(o, "strategy", uly_strategy_get(r->layout.strategy)->name);
    cJSON_AddStringToObject(o, "layout", s->ranking.label[f]);
    cJSON *dg = cJSON_AddObjectToObject(o, "degrees");
    cJSON_AddNumberToObject(dg, "ulysses", (double)r->layout.ulysses);
    cJSON_AddNumberToObject(dg, "ring", (double)r->layout.ring);
    cJSON_AddNumberToObject(dg, "tp", (double)r->layout.tp);
    cJSON_AddNumberToObject(dg, "dp", (double)r->layout.dp);
    cJSON_AddNumberToObject(o, "ranks", r->ranks);
    cJSON_AddNumberToObject(o, "seq", (double)r->workload.seq);
    cJSON_AddNumberToObject(o, "micro_batch", (double)r->workload.micro_batch);
    cJSON_AddBoolToObject(o, "causal", r->workload.causal);
    cJSON_AddStringToObject(o, "cluster", j->cluster_name);
    cJSON_AddStringToObject(o, "profile", s->used_prof[f]);
    cJSON_AddStringToObject(o, "cpu_model", r->cpu_model);
    cJSON_AddStringToObject(o, "profile_cpu_model", s->prof_host[f].cpu_model);
    cJSON_AddBoolToObject(o, "host_matches_profile", val_host_matches(r, &s->prof_host[f]) == 1);
    cJSON_AddNumberToObject(o, "size_group", s->ranking.group[f]);
    json_times(o, j);
    cJSON_AddBoolToObject(o, "bytes_ok", j->n_bytes_bad == 0);
    cJSON_AddNumberToObject(o, "bytes_planned", (double)j->bytes_plan_total);
    cJSON_AddNumberToObject(o, "bytes_measured", (double)j->bytes_meas_total);
    cJSON_AddItemToObject(o, "ops", json_ops(j));
    return o;
}

static void json_summary(cJSON *root, const val_set *s)
{
    cJSON *m = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(m, "runs", s->n);
    cJSON_AddNumberToObject(m, "ops", s->n_ops_total);
    cJSON_AddNumberToObject(m, "ops_bytes_differ", s->n_bytes_bad);
    cJSON_AddNumberToObject(m, "step_error_median_abs", s->med_step);
    cJSON_AddNumberToObject(m, "step_error_max_abs", s->max_step);
    cJSON_AddStringToObject(m, "step_error_max_run", s->runs[s->worst_run].path);
    cJSON_AddNumberToObject(m, "op_error_median_abs", s->med_op);
    cJSON_AddNumberToObject(m, "op_error_max_abs", s->max_op);
    cJSON *wa = cJSON_AddArrayToObject(m, "worst_ops");
    for (int k = 0; k < s->n_worst; k++) {
        const trace_jop *x = &s->joins[s->worst[k].f].ops[s->worst[k].k];
        cJSON *q = cJSON_CreateObject();
        cJSON_AddStringToObject(q, "file", s->runs[s->worst[k].f].path);
        cJSON_AddNumberToObject(q, "id", x->id);
        cJSON_AddStringToObject(q, "name", uly_op_type_name(x->op->type));
        cJSON_AddStringToObject(q, "phase", uly_phase_name(x->op->phase));
        cJSON_AddNumberToObject(q, "predicted_s", x->pred_s);
        cJSON_AddNumberToObject(q, "measured_s", x->meas_s);
        cJSON_AddNumberToObject(q, "error", x->err);
        cJSON_AddItemToArray(wa, q);
    }
}

static void json_ranking(cJSON *root, const val_set *s)
{
    const sim_ranking *g = &s->ranking;
    cJSON *rk = cJSON_AddObjectToObject(root, "ranking");
    cJSON_AddNumberToObject(rk, "pairs", g->n_pairs);
    cJSON_AddNumberToObject(rk, "pairs_agree", g->n_agree);
    cJSON_AddNumberToObject(rk, "ties", g->n_ties); /* not in pairs: equal steps order nothing */
    if (g->n_pairs) cJSON_AddNumberToObject(rk, "agreement", s->agree);
    else cJSON_AddNullToObject(rk, "agreement");
    cJSON_AddNumberToObject(rk, "sizes", g->n_win);
    cJSON_AddNumberToObject(rk, "winner_agrees", g->n_win_agree);
    cJSON *pa = cJSON_AddArrayToObject(rk, "cases");
    for (int k = 0; k < g->n_pairs + g->n_ties; k++) {
        const sim_rank_pair *p = &g->pairs[k];
        const trace_join *ja = &s->joins[p->a], *jb = &s->joins[p->b];
        cJSON *q = cJSON_CreateObject();
        cJSON_AddStringToObject(q, "a", g->label[p->a]);
        cJSON_AddStringToObject(q, "b", g->label[p->b]);
        cJSON_AddStringToObject(q, "a_file", s->runs[p->a].path);
        cJSON_AddStringToObject(q, "b_file", s->runs[p->b].path);
        cJSON_AddNumberToObject(q, "seq", (double)s->runs[p->a].workload.seq);
        cJSON_AddNumberToObject(q, "ranks", s->runs[p->a].ranks);
        cJSON_AddNumberToObject(q, "predicted_ratio", ja->pred_step_s / jb->pred_step_s);
        cJSON_AddNumberToObject(q, "measured_ratio", ja->meas_step_s / jb->meas_step_s);
        cJSON_AddBoolToObject(q, "tie", p->tie);
        if (p->tie) cJSON_AddNullToObject(q, "agree");
        else cJSON_AddBoolToObject(q, "agree", p->agree);
        cJSON_AddItemToArray(pa, q);
    }
}

static void json_checks(cJSON *root, const val_opts *o, const val_set *s)
{
    cJSON *ck = cJSON_AddObjectToObject(root, "checks");
    cJSON_AddBoolToObject(ck, "bytes_equal", !s->fail_bytes);
    if (isfinite(o->max_err)) cJSON_AddNumberToObject(ck, "max_error", o->max_err);
    cJSON_AddBoolToObject(ck, "max_error_default", s->default_limit);
    if (isfinite(o->max_run_err)) cJSON_AddNumberToObject(ck, "max_run_error", o->max_run_err);
    if (!isnan(o->min_agree)) cJSON_AddNumberToObject(ck, "min_agreement", o->min_agree);
    cJSON_AddBoolToObject(ck, "median_step_error_ok", !s->fail_med);
    cJSON_AddBoolToObject(ck, "run_step_error_ok", !s->fail_run);
    cJSON_AddBoolToObject(ck, "ranking_ok", !s->fail_agree);
    cJSON_AddBoolToObject(root, "ok", s->ok);
}

int val_write_json(const val_opts *o, const val_set *s)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "step_definition", val_step_definition);
    cJSON *ra = cJSON_AddArrayToObject(root, "runs");
    for (int f = 0; f < s->n; f++) cJSON_AddItemToArray(ra, json_run(s, f));
    json_summary(root, s);
    json_ranking(root, s);
    json_checks(root, o, s);
    return sim_json_print(root, stdout);
}

/* ------------------------------------------------------------------ table */

/* One op's line of a run's table. */
static void table_op(const trace_jop *x)
{
    char e[16], v[32];
    if (isfinite(x->err)) snprintf(e, sizeof e, "%7s%%", sim_fixed_str(100 * x->err, 1, 1, v, sizeof v));
    else snprintf(e, sizeof e, "%8s", "-");
    printf("  %3d %-16s %-5s %-4s %-14s %12lld %12lld %5s %10.3f %10.3f %8s %s\n", x->id, uly_op_type_name(x->op->type),
           uly_phase_name(x->op->phase), uly_op_kind_name(x->op->kind), uly_coll_name(x->op->coll),
           (long long)x->bytes_plan, (long long)x->bytes_meas, x->bytes_plan == x->bytes_meas ? "ok" : "DIFF",
           1e3 * x->pred_s, 1e3 * x->meas_s, e,
           !x->layer ? (x->op->per_step ? "per-step, not in step" : "per-model, not in step")
           : x->hidden ? "exposed part (overlaps attention)" : "");
}

/* One run: its header, host, ops, step, overlap, waits and bytes. */
static void table_run(const val_set *s, int f)
{
    const trace_run *r = &s->runs[f];
    const trace_join *j = &s->joins[f];
    printf("\n## %s: %s, %d ranks, seq %lld, batch %lld, %s, zero %d; priced on %s (%s)\n", r->path,
           s->ranking.label[f], r->ranks, (long long)r->workload.seq, (long long)r->workload.micro_batch,
           r->workload.causal ? "causal" : "non-causal", r->workload.zero_stage, j->cluster_name, s->used_prof[f]);
    const char *pcpu = s->prof_host[f].cpu_model;
    if (!pcpu[0])
        printf("# host: %s (%s); the profile records no calibration host: its rates are not measured on this "
               "CPU (ulysim calibrate writes a profile that does)\n", r->hostname, r->cpu_model);
    else
        printf("# host: %s (%s); %s was calibrated on %s: %s\n", r->hostname, r->cpu_model,
               s->prof_kind[f] == VAL_PROF_HOST ? "this host's profile (ulysim calibrate --host)" : "the profile",
               pcpu, val_host_matches(r, &s->prof_host[f]) ? "the same CPU"
               : strcmp(pcpu, r->cpu_model) ? "ANOTHER CPU, its rates are not this host's"
               : "the same CPU with another core count, its rates are not this host's");
    printf("# %3s %-16s %-5s %-4s %-14s %12s %12s %5s %10s %10s %8s %s\n", "id", "op", "phase", "kind", "coll",
           "bytes_plan", "bytes_meas", "bytes", "pred_ms", "meas_ms", "err", "note");
    for (int k = 0; k < j->n; k++) table_op(&j->ops[k]);
    char se[32];
    printf("# step %.3f ms predicted, %.3f ms measured: %s%%;  compute %.3f / %.3f ms;  exposed comm "
           "%.3f / %.3f ms\n",
           1e3 * j->pred_step_s, 1e3 * j->meas_step_s, sim_fixed_str(100 * j->step_err, 1, 1, se, sizeof se),
           1e3 * j->pred_compute_s,
           1e3 * j->meas_compute_s, 1e3 * j->pred_comm_exposed_s, 1e3 * j->meas_comm_exposed_s);
    if (j->pred_hidden_total_s > 0)
        printf("# overlap: ring transfers %.3f ms (predicted), hidden %.3f ms predicted (%.0f%%), %.3f ms "
               "achieved (%.0f%%: predicted transfer time - measured exposed wait)\n",
               1e3 * j->pred_hidden_total_s, 1e3 * j->pred_overlapped_s,
               100 * j->pred_overlapped_s / j->pred_hidden_total_s, 1e3 * j->meas_overlapped_s,
               100 * j->meas_overlapped_s / j->pred_hidden_total_s);
    printf("# waiting for late peers (imbalance, in the measured step, not in comm): %.3f ms\n",
           1e3 * j->meas_wait_s);
    printf("# bytes: %s (%lld planned, %lld measured)\n",
           j->n_bytes_bad ? "DIFFER" : "equal for every op", (long long)j->bytes_plan_total,
           (long long)j->bytes_meas_total);
}

/* A line per run, then the summary: bytes, step and op errors, worst ops. */
static void table_runs_summary(const val_set *s)
{
    printf("\n## runs\n# %-40s %-22s %5s %7s %10s %10s %8s %10s %10s %6s\n", "file", "layout", "ranks", "seq",
           "pred_ms", "meas_ms", "err", "comm_pred", "comm_meas", "bytes");
    for (int f = 0; f < s->n; f++) {
        const trace_join *j = &s->joins[f];
        char se[32];
        printf("  %-40s %-22s %5d %7lld %10.3f %10.3f %7s%% %10.3f %10.3f %6s\n", base_name(s->runs[f].path),
               s->ranking.label[f], s->runs[f].ranks, (long long)s->runs[f].workload.seq, 1e3 * j->pred_step_s,
               1e3 * j->meas_step_s, sim_fixed_str(100 * j->step_err, 1, 1, se, sizeof se),
               1e3 * j->pred_comm_exposed_s, 1e3 * j->meas_comm_exposed_s, j->n_bytes_bad ? "DIFF" : "ok");
    }
    printf("\n## summary\n");
    printf("# bytes: %s (%d ops of %d runs)\n",
           s->n_bytes_bad ? "DIFFER" : "planned = measured for every op", s->n_ops_total, s->n);
    char p1[32], p2[32];
    printf("# step-time error: median |err| %s%%, max |err| %s%% (%s)\n",
           sim_fixed_str(100 * s->med_step, 1, 0, p1, sizeof p1), sim_fixed_str(100 * s->max_step, 1, 0, p2, sizeof p2),
           s->runs[s->worst_run].path);
    printf("# per-op error (per-layer ops): median |err| %s%%, max |err| %s%%\n",
           sim_fixed_str(100 * s->med_op, 1, 0, p1, sizeof p1), sim_fixed_str(100 * s->max_op, 1, 0, p2, sizeof p2));
    printf("# worst ops by |predicted - measured|:\n");
    for (int k = 0; k < s->n_worst; k++) {
        const trace_jop *x = &s->joins[s->worst[k].f].ops[s->worst[k].k];
        printf("#   %-40s %3d %-14s %-4s pred %8.3f ms, meas %8.3f ms (%s%%)\n", base_name(s->runs[s->worst[k].f].path),
               x->id, uly_op_type_name(x->op->type), uly_phase_name(x->op->phase), 1e3 * x->pred_s, 1e3 * x->meas_s,
               sim_fixed_str(100 * x->err, 0, 1, p1, sizeof p1));
    }
}

/* The pairs of strategies at one size, ordered by prediction and by measurement. */
static void table_ranking(const val_set *s)
{
    const sim_ranking *g = &s->ranking;
    if (!(g->n_pairs + g->n_ties)) {
        printf("# ranking: no two runs of different strategies at the same size\n");
        return;
    }
    char tie[160] = "", p1[32], p2[32];
    if (g->n_ties)
        snprintf(tie, sizeof tie, "; %d pair%s tied (equal predicted or measured steps: not ranked)", g->n_ties,
                 g->n_ties == 1 ? "" : "s");
    if (g->n_pairs)
        printf("# ranking: %d of %d strategy pairs at the same size ordered as measured (%.0f%%); fastest "
               "agrees at %d of %d sizes%s\n",
               g->n_agree, g->n_pairs, 100 * s->agree, g->n_win_agree, g->n_win, tie);
    else
        printf("# ranking: no strategy pair at the same size to rank; fastest agrees at %d of %d sizes%s\n",
               g->n_win_agree, g->n_win, tie);
    for (int k = 0; k < g->n_pairs + g->n_ties; k++) {
        const sim_rank_pair *p = &g->pairs[k];
        const trace_join *ja = &s->joins[p->a], *jb = &s->joins[p->b];
        printf("#   P %d seq %-7lld %-18s / %-18s predicted %s, measured %s  %s\n", s->runs[p->a].ranks,
               (long long)s->runs[p->a].workload.seq, g->label[p->a], g->label[p->b],
               sim_fixed_str(ja->pred_step_s / jb->pred_step_s, 2, 0, p1, sizeof p1),
               sim_fixed_str(ja->meas_step_s / jb->meas_step_s, 2, 0, p2, sizeof p2),
               p->tie ? "tie: not ranked" : p->agree ? "agree" : "DISAGREE");
    }
}

static void table_checks(const val_opts *o, const val_set *s)
{
    char p1[32];
    if (isfinite(o->max_err))
        printf("# check: median |step err| %s%% <= %.1f%%%s: %s\n", sim_fixed_str(100 * s->med_step, 1, 0, p1, sizeof p1),
               100 * o->max_err,
               s->default_limit ? " (the default; --max-error F to set another)" : "", s->fail_med ? "FAIL" : "pass");
    if (isfinite(o->max_run_err))
        printf("# check: every run's |step err| <= %.1f%%: %s\n", 100 * o->max_run_err, s->fail_run ? "FAIL" : "pass");
    if (!isnan(o->min_agree) && s->ranking.n_pairs)
        printf("# check: ranking agreement %.0f%% >= %.0f%%: %s\n", 100 * s->agree, 100 * o->min_agree,
               s->fail_agree ? "FAIL" : "pass");
    else if (!isnan(o->min_agree)) /* nothing to rank is no evidence of agreement */
        printf("# check: ranking agreement >= %.0f%%: no pair to rank: %s\n", 100 * o->min_agree,
               s->fail_agree ? "FAIL" : "pass");
    printf("# check: bytes equal: %s\n", s->fail_bytes ? "FAIL" : "pass");
    printf("# result: %s\n", s->ok ? "PASS" : "FAIL");
}

int val_write_table(const val_opts *o, const val_set *s)
{
    printf("# ulysim validate: %d run%s; times in ms; error = predicted / measured - 1\n", s->n, s->n == 1 ? "" : "s");
    printf("# %s\n", val_step_definition);
    for (int f = 0; f < s->n && !o->brief; f++) table_run(s, f);
    table_runs_summary(s);
    table_ranking(s);
    table_checks(o, s);
    return 0;
}
