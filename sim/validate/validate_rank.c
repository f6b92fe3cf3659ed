/* validate_rank.c: the ranking of `ulysim validate`'s harness runs
 * (validate_rank.h): labels, size groups, pairs and each size's fastest.
 * Split from cmd_validate.c, which reads, prices and reports the runs. */
#define _POSIX_C_SOURCE 200809L
#include "validate_rank.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "usp u2 r2 t1", "ring r1 t1 pp2", "megatron-sp t4", "ring r4 t1 contiguous
 * dp2": what tells the runs of one size apart, and two different layouts
 * never share one (the ranking pairs runs by it, and skips two runs of one
 * label as repeats of one layout). Every degree the strategy has is said:
 * with pp (or dp) the sequence degree is no longer ranks / dp; pp and dp
 * when above 1, the group order when it is not the default (TP, Ulysses,
 * ring, DP, innermost first). */
static void layout_label(const trace_run *r, char *buf, size_t n)
{
    const uly_layout *l = &r->layout;
    const uly_strategy *st = uly_strategy_get(l->strategy);
    size_t k = (size_t)snprintf(buf, n, "%s", st->name);
    if (st->uses_ulysses && k < n) k += (size_t)snprintf(buf + k, n - k, " u%lld", (long long)l->ulysses);
    if (st->uses_ring && k < n) k += (size_t)snprintf(buf + k, n - k, " r%lld", (long long)l->ring);
    if (st->uses_tp && k < n) k += (size_t)snprintf(buf + k, n - k, " t%lld", (long long)l->tp);
    if (l->pp > 1 && k < n) k += (size_t)snprintf(buf + k, n - k, " pp%lld", (long long)l->pp);
    /* a contiguous causal split is another layout of the same strategy (the
     * last rank does 2r-1 times the first's attention): ranked on its own */
    if (st->uses_ring && r->workload.causal && r->workload.split == ULY_SPLIT_CONTIGUOUS && l->ring > 1 && k < n)
        k += (size_t)snprintf(buf + k, n - k, " contiguous");
    if (l->dp > 1 && k < n) k += (size_t)snprintf(buf + k, n - k, " dp%lld", (long long)l->dp);
    uly_layout d;
    uly_layout_init(&d, l->strategy, l->ulysses, l->ring, l->tp, l->dp);
    if (memcmp(d.order, l->order, sizeof d.order) && k < n) {
        k += (size_t)snprintf(buf + k, n - k, " order");
        for (int i = 0; i < 4 && k < n; i++)
            k += (size_t)snprintf(buf + k, n - k, "%c%s", i ? ',' : '=', uly_group_name(l->order[i]));
    }
}

/* Two step times the ranking cannot tell apart: equal to 1 part in 1e9 (the
 * model's own rounding; a measured tie is two equal numbers). A tie orders
 * nothing, so it is neither an agreement nor a disagreement: such a pair is
 * not ranked, and is counted apart as a tie. */
static int same_time(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)); }

/* Runs compared for the ranking: same model shape, workload, rank count and
 * threads; differ only in the strategy or its degrees. */
static int same_size(const trace_run *a, const trace_run *b)
{
    const uly_model *m = &a->model, *n = &b->model;
    const uly_workload *w = &a->workload, *v = &b->workload;
    return m->hidden == n->hidden && m->heads == n->heads && m->kv_heads == n->kv_heads && m->head_dim == n->head_dim &&
           m->ffn_hidden == n->ffn_hidden && m->vocab == n->vocab && m->swiglu == n->swiglu &&
           w->seq == v->seq && w->micro_batch == v->micro_batch && w->causal == v->causal &&
           w->recompute == v->recompute && w->zero_stage == v->zero_stage && w->flash == v->flash &&
           a->ranks == b->ranks && a->threads == b->threads;
}

int sim_rank_runs(const trace_run *runs, const trace_join *joins, int n, sim_ranking *out)
{
    memset(out, 0, sizeof *out);
    out->label = calloc((size_t)n + 1, sizeof *out->label);
    out->group = calloc((size_t)n + 1, sizeof *out->group);
    out->pairs = calloc((size_t)n * (size_t)n / 2 + 1, sizeof *out->pairs);
    int *win_pred = calloc((size_t)n + 1, sizeof(int)), *win_meas = calloc((size_t)n + 1, sizeof(int));
    int *size = calloc((size_t)n + 1, sizeof(int));
    if (!out->label || !out->group || !out->pairs || !win_pred || !win_meas || !size) {
        free(win_pred);
        free(win_meas);
        free(size);
        sim_ranking_free(out);
        return 1;
    }
    /* each run's label once: the pairs and every report read it */
    for (int f = 0; f < n; f++) layout_label(&runs[f], out->label[f], sizeof out->label[f]);
    int n_groups = 0;
    for (int a = 0; a < n; a++) out->group[a] = -1;
    for (int a = 0; a < n; a++) {
        if (out->group[a] < 0) out->group[a] = n_groups++;
        for (int b = a + 1; b < n; b++) {
            if (!same_size(&runs[a], &runs[b])) continue;
            out->group[b] = out->group[a];
            if (!strcmp(out->label[a], out->label[b])) continue; /* a repeat of one layout */
            const int pm = joins[a].pred_step_s < joins[b].pred_step_s;
            const int mm = joins[a].meas_step_s < joins[b].meas_step_s;
            sim_rank_pair *pr = &out->pairs[out->n_pairs + out->n_ties];
            pr->a = a;
            pr->b = b;
            pr->tie = same_time(joins[a].pred_step_s, joins[b].pred_step_s) ||
                      same_time(joins[a].meas_step_s, joins[b].meas_step_s);
            pr->agree = !pr->tie && pm == mm;
            if (pr->tie) {
                out->n_ties++;
            } else {
                out->n_agree += pr->agree;
                out->n_pairs++;
            }
        }
    }
    /* winners per group with at least two layouts */
    for (int g = 0; g < n_groups; g++) win_pred[g] = win_meas[g] = -1;
    for (int f = 0; f < n; f++) {
        const int g = out->group[f];
        size[g]++;
        if (win_pred[g] < 0 || joins[f].pred_step_s < joins[win_pred[g]].pred_step_s) win_pred[g] = f;
        if (win_meas[g] < 0 || joins[f].meas_step_s < joins[win_meas[g]].meas_step_s) win_meas[g] = f;
    }
    for (int g = 0; g < n_groups; g++)
        if (size[g] > 1) {
            out->n_win++;
            /* the measured fastest is (one of) the predicted fastest */
            out->n_win_agree += !strcmp(out->label[win_pred[g]], out->label[win_meas[g]]) ||
                                same_time(joins[win_meas[g]].pred_step_s, joins[win_pred[g]].pred_step_s);
        }
    free(win_pred);
    free(win_meas);
    free(size);
    return 0;
}

void sim_ranking_free(sim_ranking *r)
{
    free(r->label);
    free(r->group);
    free(r->pairs);
    memset(r, 0, sizeof *r);
}
