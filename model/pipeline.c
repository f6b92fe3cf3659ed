/* pipeline.c: how a pipeline splits the layers over its stages and what
 * each stage holds in flight (docs/model.md, "Pipeline parallelism" and
 * "Uneven pipelines"). The splits are Megatron-Core's
 * (megatron/core/transformer/transformer_block.py, get_num_layers_to_build,
 * and megatron/training/arguments.py's checks): an even split; the first
 * and last stages' layers given (--decoder-first/last-pipeline-num-layers),
 * the rest even over the middle stages; or the embedding and the loss
 * counted as one layer each of an even split (--account-for-embedding/
 * loss-in-pipeline-split), which leaves the first / last stage one layer
 * short. Interleaving needs every stage's layers (before the embedding or
 * loss is taken off) to divide into the virtual stages. A pipeline layout
 * (--pipeline-model-parallel-layout,
 * megatron/core/transformer/pipeline_parallel_layer_layout.py) names each
 * chunk's layers itself, so its stages may all differ: it comes reduced to
 * the first and last stages' layers and the most on a middle one
 * (uly_layout.pp_mid_most). */
#include "internal.h"

uly_status uly_pp_stage_layers(const uly_model *m, const uly_layout *l, int64_t layers[3], char *why, size_t n)
{
    if (!m || !l || !layers) return ULY_EINVAL;
    const int64_t L = m->layers, pp = l->pp > 1 ? l->pp : 1, V = l->vpp > 1 && pp > 1 ? l->vpp : 1;
    layers[0] = layers[1] = layers[2] = L;
    if (pp <= 1) return ULY_OK;
    if (l->pp_mid_most > 0) {
        /* a layout: the middle stages hold the rest, none more than the most */
        const int64_t f = l->pp_first, z = l->pp_last, most = l->pp_mid_most, rest = L - f - z, left = pp - 2;
        layers[0] = f, layers[1] = most, layers[2] = z;
        if (left < 1 || f < 1 || z < 1 || rest < left || most > rest || most * left < rest)
            return uly_fail(why, n, "a layout of %lld, at most %lld and %lld layers on the first, middle and last of "
                          "%lld stages: does not hold the %lld layers, each stage at least one", (long long)f,
                          (long long)most, (long long)z, (long long)pp, (long long)L);
        return ULY_OK;
    }
    if (l->pp_first > 0 || l->pp_last > 0) {
        if (l->pp_embed || l->pp_loss)
            return uly_fail(why, n, "first/last stage layers (%lld, %lld) with the embedding or loss counted as a layer: "
                          "Megatron-Core takes one or the other", (long long)l->pp_first, (long long)l->pp_last);
        /* the layers the first and last stages do not take, even over the others */
        const int64_t f = l->pp_first, z = l->pp_last;
        const int64_t rest = L - f - z, left = pp - (f > 0) - (z > 0);
        if (rest < 0 || (left == 0 && rest != 0))
            return uly_fail(why, n, "first/last stage layers %lld + %lld: do not leave the other stages the rest of %lld "
                          "layers", (long long)f, (long long)z, (long long)L);
        const int64_t mid = left > 0 ? rest / left : 0;
        layers[0] = f > 0 ? f : mid;
        layers[1] = mid;
        layers[2] = z > 0 ? z : mid;
        if (left > 0 && (rest % left || mid < 1)) {
            layers[1] = (rest + left - 1) / left;
            return uly_fail(why, n, "%lld layers left over %lld middle stages: Megatron-Core needs them to divide evenly",
                          (long long)rest, (long long)left);
        }
        if (V > 1 && (layers[0] % V || layers[1] % V || layers[2] % V))
            return uly_fail(why, n, "stages of %lld, %lld and %lld layers: interleaving needs each divisible by the "
                          "virtual stages", (long long)layers[0], (long long)layers[1], (long long)layers[2]);
        return ULY_OK;
    }
    /* the even split, of L and the embedding and loss counted as layers */
    const int64_t e = l->pp_embed ? 1 : 0, z = l->pp_loss ? 1 : 0, Lp = L + e + z;
    const int64_t per = (Lp + pp - 1) / pp;
    layers[0] = per - e, layers[1] = per, layers[2] = per - z;
    if (Lp % pp)
        return uly_fail(why, n, "%lld layers (the embedding and loss counted as asked) over %lld stages: Megatron-Core "
                      "needs them to divide evenly", (long long)Lp, (long long)pp);
    if (V > 1 && (per % V || per / V - (e > z ? e : z) < 0))
        return uly_fail(why, n, "%lld layers per stage: interleaving needs them divisible by %lld virtual stages", (long long)per,
                      (long long)V);
    return ULY_OK;
}

/* Micro-batches' worth of a stage's activations pipeline rank r holds at
 * once: 1F1B runs pp - r forwards before its first backward (at most the m
 * micro-batches); interleaved 1F1B (Megatron-Core's schedules.py,
 * get_pp_rank_microbatches) runs 2 (pp - r - 1) + (V - 1) pp warm-up chunk
 * forwards and one more, each chunk 1 / V of the rank's layers, at most
 * all m V chunks (Korthikanti et al. 2022, sec. 4.2.3, for r = 0) */
static double in_flight(int64_t r, int64_t pp, int64_t V, int64_t micro)
{
    if (V <= 1) return (double)(micro < pp - r ? micro : pp - r);
    int64_t chunks = 2 * (pp - r - 1) + (V - 1) * pp + 1;
    if (chunks > micro * V) chunks = micro * V;
    return (double)chunks / (double)V;
}

/* The pipeline's part of a plan: each stage's layers, what the first,
 * second and last stages hold in flight, and the notes on the schedule.
 * The bubble noted is the idle share of a stage under the step's pacing by
 * the heaviest stage (uly_timing.pp_bubble prices it; here in layers). */
void uly_plan_pipeline(uly_bctx *x)
{
    uly_plan *plan = x->p;
    const uly_model *m = x->m;
    const uly_layout *l = x->l;
    plan->stage_layers = m->layers;
    plan->pp_in_flight = plan->pp_in_flight_last = plan->pp_in_flight_mid = 1;
    plan->vpp = l->vpp > 1 && l->pp > 1 ? l->vpp : 1;
    if (l->pp <= 1) return;
    const int64_t pp = l->pp, micro = plan->micro_steps, V = plan->vpp;
    plan->pp_staged = l->pp_first > 0 || l->pp_last > 0 || l->pp_embed || l->pp_loss || l->pp_mid_most > 0;
    int64_t *n = plan->pp_stage_layers;
    const uly_status st = uly_pp_stage_layers(m, l, n, NULL, 0);
    /* the middle stages' layers together: a layout's the rest, each of the
     * others' splits the same on every middle stage */
    plan->pp_mid_layers = l->pp_mid_most > 0 ? m->layers - n[0] - n[2] : (pp - 2) * n[1];
    if (pp > m->layers) {
        uly_reason_add(x, ULY_R_PP_LAYERS, 1, (double)pp, (double)m->layers, 0);
        n[0] = n[1] = n[2] = 0;
    } else if (plan->pp_staged) {
        if (st != ULY_OK || n[0] < 1 || n[2] < 1)
            uly_reason_add(x, ULY_R_PP_SPLIT_REFUSED, 1, (double)m->layers, (double)pp, (double)V);
        else if (l->pp_mid_most > 0)
            uly_reason_add(x, ULY_R_PP_LAYOUT, 0, (double)n[0], (double)n[1], (double)n[2]);
        else
            uly_reason_add(x, ULY_R_PP_STAGES, 0, (double)n[0], pp > 2 ? (double)n[1] : -1.0, (double)n[2]);
    } else {
        /* the slowest and fullest stage has ceil(L / pp) layers */
        if (m->layers % pp) uly_reason_add(x, ULY_R_PP_UNEVEN, 0, (double)n[1], (double)m->layers, (double)pp);
        if (V > 1 && m->layers % (pp * V))
            uly_reason_add(x, ULY_R_PP_VIRTUAL_LAYERS, 1, (double)m->layers, (double)(pp * V), (double)pp);
    }
    int64_t most = n[0] > n[1] ? n[0] : n[1];
    if (n[2] > most) most = n[2];
    if (pp <= 2 && plan->pp_staged) most = n[0] > n[2] ? n[0] : n[2]; /* no middle stage */
    if (pp <= m->layers) plan->stage_layers = most;
    plan->pp_in_flight = in_flight(0, pp, V, micro);
    plan->pp_in_flight_mid = in_flight(1, pp, V, micro);
    /* the last rank: its (V - 1) pp warm-up chunks and one more */
    plan->pp_in_flight_last = in_flight(pp - 1, pp, V, micro);
    if (V > 1) /* layers per virtual stage: a middle stage's under an uneven split with middle stages all
                * alike, else on average (a layout's differ; two stages have none) */
        uly_reason_add(x, ULY_R_PP_INTERLEAVED, 0, (double)V,
                       plan->pp_staged && pp > 2 && l->pp_mid_most <= 0 ? (double)n[1] / (double)V
                                                                         : (double)m->layers / (double)(pp * V),
                       plan->pp_in_flight);
    /* the idle share: (pp - 1) / V slots of m + (pp - 1) / V; uneven, the
     * other stages' work over V beside m of the heaviest's, each stage's
     * work counted in layers as Megatron-Core counts them (an embedding or
     * loss it accounts for, one layer) */
    double lag = (double)(pp - 1) / (double)V, pace = 1.0;
    if (plan->pp_staged && most > 0) {
        const double w0 = (double)n[0] + (l->pp_embed ? 1.0 : 0), w1 = (double)n[1];
        const double w2 = (double)n[2] + (l->pp_loss ? 1.0 : 0);
        pace = w0 > w2 ? w0 : w2;
        if (pp > 2 && w1 > pace) pace = w1;
        const double mid = l->pp_mid_most > 0 ? (double)plan->pp_mid_layers : (double)(pp - 2) * w1;
        lag = (w0 + mid + w2 - pace) / (double)V;
    }
    uly_reason_add(x, ULY_R_PP_BUBBLE, 0, lag / ((double)micro * pace + lag), (double)micro, (double)pp);
}

/* Stage s of an uneven split runs t_s = n_s layer_s and its end ops per
 * micro-batch. In steady state the heaviest stage paces every micro-batch;
 * before the first micro-batch reaches it and after the last leaves it, the
 * other stages' chunks of one micro-batch run in turn, 1 / V of each
 * stage's t under interleaving: m max t + (sum t - max t) / V, which is
 * (m + (pp - 1) / V) t for equal stages (Narayanan et al. 2021) and
 * (m - 1) max t + sum t for plain 1F1B (the fill and drain of one
 * micro-batch through every stage). */
double uly_pp_staged_s(const uly_plan *plan, const double *op_s, double layer_s, double model_s, uly_timing *tm,
                       double *pace_s)
{
    /* the model ops by stage: the embedding the first's, the transfers
     * every stage's, the rest (logits, loss) the last's */
    double embed_s = 0, pp_s = 0;
    for (int i = 0; i < plan->n_ops; i++) {
        const uly_op *o = &plan->ops[i];
        if (!o->per_model || o->per_step) continue;
        if (o->type == ULY_OPT_EMBED) embed_s += op_s[i];
        else if (o->group == ULY_GROUP_PP) pp_s += op_s[i];
    }
    const double head_s = model_s - embed_s - pp_s;
    const int64_t *n = plan->pp_stage_layers, pp = plan->layout.pp;
    const double V = (double)(plan->vpp > 1 ? plan->vpp : 1);
    const double t0 = (double)n[0] * layer_s + embed_s + pp_s, t2 = (double)n[2] * layer_s + head_s + pp_s;
    const double t1 = pp > 2 ? (double)n[1] * layer_s + pp_s : 0;
    double most = t0;
    int64_t layers = n[0];
    if (t2 > most) most = t2, layers = n[2];
    if (t1 > most) most = t1, layers = n[1];
    /* every middle stage's work: a layout's stages differ, the others' do not */
    const double mids = plan->layout.pp_mid_most > 0 ? (double)plan->pp_mid_layers * layer_s + (double)(pp - 2) * pp_s
                                                     : (double)(pp > 2 ? pp - 2 : 0) * t1;
    const double lag = (t0 + mids + t2 - most) / V;
    const double pipe = (double)plan->micro_steps * most + lag;
    tm->pp_bubble = pipe > 0 ? lag / pipe : 0;
    tm->stage_layers = layers;
    *pace_s = most;
    return pipe;
}
