/* schedule.c: prices a plan. Compute ops cost FLOPs over (peak x efficiency)
 * or bytes over HBM bandwidth, whichever is larger, scaled by the critical
 * rank's share of work. Communication on the critical path (Ulysses'
 * all-to-alls, Megatron's all-gathers, RSA's rings) adds its full time; ring
 * transfers hide under the attention blocks they overlap (a step costs
 * max(block compute, hop)); ZeRO traffic is prefetched under the whole
 * phase's compute and only its excess shows. Per-step gradient reduction
 * hides under the last micro-batch's backward. */
#include <math.h>
#include <string.h>

#include "internal.h"

static double compute_time(const uly_model *m, const uly_workload *w, const uly_cluster *c, const uly_op *o)
{
    const uly_gpu *g = &c->gpu;
    const double peak = g->peak_flops[w->dtype];
    const double mem = o->bytes_touched / (g->hbm_bw_Bps * g->mem_eff);
    double t = 0;
    switch (o->kind) {
    case ULY_OP_GEMM:
        t = o->flops / (peak * uly_curve_eval(&g->gemm_eff, o->eff_size));
        if (mem > t) t = mem;
        break;
    case ULY_OP_ATTN:
        if (o->elems) { /* flash */
            const uly_curve *cv = &g->attn_eff[w->causal ? 1 : 0][m->head_dim >= 128 ? 1 : 0];
            double e = cv->n ? uly_curve_eval(cv, o->eff_size) : uly_curve_eval(&g->gemm_eff, o->eff_size);
            t = o->flops / (peak * e);
        } else { /* materialised: GEMMs plus the softmax's passes over the scores */
            t = o->flops / (peak * uly_curve_eval(&g->gemm_eff, o->eff_size)) + mem;
        }
        break;
    case ULY_OP_ELEM:
        t = mem;
        break;
    default:
        break;
    }
    return t * o->crit_factor;
}

static int is_layer_op(const uly_op *o) { return !o->per_model && !o->per_step; }

uly_status uly_plan_price(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                          const uly_plan *plan, uly_result *res)
{
    if (!m || !w || !c || !plan || !res) return ULY_EINVAL;
    const int n = plan->n_ops;
    double *t = res->op_time_s, *ex = res->op_exposed_s;
    uly_group_place gp[ULY_GROUP_COUNT];
    for (int g = ULY_GROUP_TP; g < ULY_GROUP_COUNT; g++) uly_group_place_get(&plan->layout, c, (uly_group)g, &gp[g]);

    for (int i = 0; i < n; i++) {
        const uly_op *o = &plan->ops[i];
        if (o->kind == ULY_OP_COMM)
            t[i] = uly_cost_collective(c, o->coll, &gp[o->group], (double)o->bytes_sent, o->steps, 1);
        else
            t[i] = compute_time(m, w, c, o);
        ex[i] = 0;
    }

    uly_timing *tm = &res->time;
    memset(tm, 0, sizeof *tm);
    double phase_s[2] = {0, 0};
    for (int ph = ULY_PHASE_FWD; ph <= ULY_PHASE_BWD; ph++) {
        double crit = 0, bg = 0;
        for (int i = 0; i < n; i++) {
            const uly_op *o = &plan->ops[i];
            if ((int)o->phase != ph || !is_layer_op(o)) continue;
            if (o->kind != ULY_OP_COMM) {
                crit += t[i];
                ex[i] = t[i];
                tm->compute_s += t[i];
            } else if (o->overlaps == ULY_OVERLAP_NONE) {
                crit += t[i];
                ex[i] = t[i];
                tm->comm_exposed_s += t[i];
            } else if (o->overlaps == ULY_OVERLAP_PHASE) {
                bg += t[i];
            }
        }
        /* ring transfers: each attention op with the comm that hides under it */
        for (int a = 0; a < n; a++) {
            const uly_op *A = &plan->ops[a];
            if ((int)A->phase != ph || A->kind != ULY_OP_ATTN) continue;
            double tc = 0;
            int hops = 0;
            for (int i = 0; i < n; i++)
                if (plan->ops[i].kind == ULY_OP_COMM && plan->ops[i].overlaps == a) {
                    tc += t[i];
                    if (plan->ops[i].steps > hops) hops = plan->ops[i].steps;
                }
            if (tc <= 0) continue;
            const double blk = t[a] / (double)(A->steps > 0 ? A->steps : 1);
            double e = tc - (double)hops * blk;
            if (e < 0) e = 0;
            crit += e;
            tm->comm_exposed_s += e;
            tm->comm_overlapped_s += tc - e;
            for (int i = 0; i < n; i++)
                if (plan->ops[i].kind == ULY_OP_COMM && plan->ops[i].overlaps == a) ex[i] = t[i] * e / tc;
        }
        if (bg > 0) {
            double e = bg > crit ? bg - crit : 0;
            for (int i = 0; i < n; i++) {
                const uly_op *o = &plan->ops[i];
                if ((int)o->phase == ph && is_layer_op(o) && o->kind == ULY_OP_COMM &&
                    o->overlaps == ULY_OVERLAP_PHASE)
                    ex[i] = t[i] * e / bg;
            }
            crit += e;
            tm->comm_exposed_s += e;
            tm->comm_overlapped_s += bg - e;
        }
        phase_s[ph] = crit;
    }
    tm->layer_fwd_s = phase_s[0];
    tm->layer_bwd_s = phase_s[1];

    const double L = (double)m->layers;
    double model_s = 0, step_fixed = 0, dp_grad = 0;
    for (int i = 0; i < n; i++) {
        const uly_op *o = &plan->ops[i];
        if (is_layer_op(o)) continue;
        if (!o->per_step) {
            model_s += t[i];
            ex[i] = t[i];
        } else if (o->kind == ULY_OP_COMM && o->overlaps == ULY_OVERLAP_PHASE) {
            dp_grad += t[i];
        } else {
            step_fixed += t[i];
            ex[i] = t[i];
        }
    }
    if (dp_grad > 0) {
        /* gradient buckets reduce while the last micro-batch's backward runs */
        const double hide = L * tm->layer_bwd_s;
        const double e = dp_grad > hide ? dp_grad - hide : 0;
        for (int i = 0; i < n; i++) {
            const uly_op *o = &plan->ops[i];
            if (o->per_step && o->kind == ULY_OP_COMM && o->overlaps == ULY_OVERLAP_PHASE) ex[i] = t[i] * e / dp_grad;
        }
        step_fixed += e;
    }
    tm->model_s = model_s;
    tm->step_fixed_s = step_fixed;

    const uly_layout *l = &plan->layout;
    const int64_t gpus = uly_layout_gpus(l);
    const double seqs = w->global_batch > 0 ? (double)w->global_batch : (double)w->micro_batch * (double)l->dp;
    tm->micro_steps = (int64_t)llround(seqs / ((double)w->micro_batch * (double)l->dp));
    if (tm->micro_steps < 1) tm->micro_steps = 1;
    tm->step_s = (double)tm->micro_steps * (L * (tm->layer_fwd_s + tm->layer_bwd_s) + model_s) + step_fixed;
    tm->tokens_per_s = seqs * (double)w->seq / tm->step_s;

    /* model FLOPs of one sequence: GEMMs and attention fwd + 2x bwd,
     * causal attention halved, logits; no recompute */
    const double N = (double)w->seq;
    const double layer = 2.0 * N * (uly_attn_params(m) + uly_mlp_params(m)) +
                         4.0 * N * N * (double)(m->heads * m->head_dim) * (w->causal ? 0.5 : 1.0);
    const double logits = 2.0 * N * (double)m->hidden * (double)m->vocab;
    tm->model_flops = 3.0 * seqs * ((double)m->layers * layer + logits);
    double hw_layer = 0, hw_model = 0;
    for (int i = 0; i < n; i++) {
        const uly_op *o = &plan->ops[i];
        if (o->per_step) continue;
        if (o->per_model) hw_model += o->flops;
        else hw_layer += o->flops;
    }
    tm->hw_flops = (L * hw_layer + hw_model) * (double)tm->micro_steps * (double)gpus;
    const double peak = c->gpu.peak_flops[w->dtype];
    tm->tflops_per_gpu = tm->model_flops / tm->step_s / (double)gpus / 1e12;
    tm->mfu = tm->model_flops / (tm->step_s * (double)gpus * peak);
    tm->hfu = tm->hw_flops / (tm->step_s * (double)gpus * peak);
    return ULY_OK;
}
