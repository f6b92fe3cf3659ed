/* recompute.c: the recompute modes beyond none, core attention and every
 * layer's full recompute, and activation offload to host memory: what a
 * stage's layers keep for backward under each, and what the block method
 * and offload change in a layer's time (docs/model.md, "Recompute modes"
 * and "Activation offload"). The ops the recompute passes re-run are
 * emitted beside the layer's own (uly_layer_recompute_other, below). Sources:
 * Megatron-LM's TransformerConfig (recompute_granularity, recompute_method,
 * recompute_num_layers, recompute_modules, cpu_offloading_num_layers) and
 * megatron/core/recompute.py; torchtitan's op-level selective activation
 * checkpointing (torchtitan/distributed/activation_checkpoint.py);
 * DistFlashAttn (Li et al. 2023, arXiv 2310.03294, sec. 3.3);
 * TransformerEngine's CPU offload (transformer_engine/pytorch/cpu_offload.py). */
#include <math.h>

#include "internal.h"

/* Layers of a stage of L layers in V model chunks that the block method
 * recomputes: the first k of each chunk (Megatron-LM's checkpointed_forward
 * runs over one chunk's layers) */
static double block_layers(double L, int64_t V, int64_t k)
{
    const double c = ceil(L / (double)V), kk = (double)k < c ? (double)k : c;
    const double rec = (double)V * kk;
    return rec < L ? rec : L;
}

void uly_plan_recompute(uly_bctx *x)
{
    uly_plan *p = x->p;
    const uly_workload *w = x->w;
    const double L = (double)p->stage_layers;
    if (L <= 0) return;
    if (w->recompute == ULY_RECOMPUTE_FULL && w->recompute_method == ULY_RMETHOD_BLOCK)
        p->recompute_skip = (L - block_layers(L, p->vpp, w->recompute_layers)) / L;
    if (w->offload_layers > 0) {
        const double off = (double)w->offload_layers < L ? (double)w->offload_layers : L;
        uly_act_terms a;
        uly_act_terms_plan(x->m, w, p, &a);
        p->offload_share = off / L;
        p->offload_bytes = a.total; /* every tensor a layer saves, scores included */
        if (!(x->c->gpu.host_link_bw_Bps > 0))
            uly_reason_add(x, ULY_R_OFFLOAD_NO_HOST_LINK, 1, (double)w->offload_layers, 0, 0);
    }
}

/* What a stage of `layers` layers holding `in_flight` micro-batches keeps
 * (ACTIV: the layers' saved tensors; SCORES: materialised scores; WORKING:
 * the backward's working set, a rebuilt layer's tensors included). D is a
 * layer's residual-stream tensor on this rank (the input of its first
 * GEMM), `input` full recompute's checkpoint. */
void uly_recompute_stage_terms(const uly_model *m, const uly_workload *w, const uly_plan *plan,
                               const uly_act_terms *full, double grads_live, double L, double f, double *tb)
{
    const double beta = uly_dtype_bytes(w->dtype), b = (double)w->micro_batch;
    /* D: the two norms' inputs are beta-byte residual-stream tensors (the
     * GEMM inputs may be saved smaller: FP8 copies) */
    const double scores = full->scores + full->score_masks, keep = full->total - scores, D = full->ln / 2.0;
    const double input = beta * b * (double)plan->act_tokens * (double)m->hidden;
    const double rebuilt = full->total - full->ln / 2.0 - scores; /* a layer rebuilt from its input */
    tb[ULY_MEM_WORKING] = grads_live;
    switch (w->recompute) {
    case ULY_RECOMPUTE_NONE: {
        /* offload: the layers offloaded leave HBM but for the one in transit
         * (TransformerEngine copies a layer's tensors out while the next
         * runs, and back while the one after it runs backward) */
        const double off = (double)w->offload_layers < L ? (double)w->offload_layers : L;
        const double held = L - off + (off > 0 ? 1.0 : 0.0);
        tb[ULY_MEM_ACTIV] = f * held * keep;
        tb[ULY_MEM_SCORES] = f * held * scores;
        break;
    }
    case ULY_RECOMPUTE_SELECTIVE: {
        /* Megatron-LM's modules: core_attn drops the scores (kept for one
         * layer while it is rebuilt), layernorm the norms' outputs (output-
         * discarding checkpoints), mlp its intermediates (checkpointed at
         * its input) */
        const uint32_t mods = w->recompute_modules ? w->recompute_modules : 1u << ULY_RMOD_CORE_ATTN;
        const double drop = ((mods & (1u << ULY_RMOD_LAYERNORM)) ? full->attn_in + full->mlp_in : 0) +
                            ((mods & (1u << ULY_RMOD_MLP)) ? full->act_in + full->act_out : 0);
        tb[ULY_MEM_ACTIV] = f * L * (keep - drop);
        tb[ULY_MEM_SCORES] = (mods & (1u << ULY_RMOD_CORE_ATTN)) ? scores : f * L * scores;
        break;
    }
    case ULY_RECOMPUTE_FULL: {
        const double V = (double)(plan->vpp > 1 ? plan->vpp : 1), c = ceil(L / V);
        const double k = (double)w->recompute_layers;
        if (w->recompute_method == ULY_RMETHOD_UNIFORM) {
            /* chunks of k layers keep their input and are rebuilt whole */
            const double kk = k < c ? k : c;
            tb[ULY_MEM_ACTIV] = f * V * ceil(c / kk) * input;
            tb[ULY_MEM_SCORES] = kk * scores;
            tb[ULY_MEM_WORKING] = kk * rebuilt + (kk - 1.0) * full->ln / 2.0 + grads_live;
        } else if (w->recompute_method == ULY_RMETHOD_BLOCK) {
            /* the first k of each chunk keep their input, the rest everything */
            const double rec = block_layers(L, plan->vpp, w->recompute_layers);
            tb[ULY_MEM_ACTIV] = f * (rec * input + (L - rec) * keep);
            tb[ULY_MEM_SCORES] = f * (L - rec) * scores + (rec > 0 ? scores : 0);
            if (rec > 0) tb[ULY_MEM_WORKING] = rebuilt + grads_live;
        } else {
            tb[ULY_MEM_ACTIV] = f * L * input;
            tb[ULY_MEM_SCORES] = scores;
            tb[ULY_MEM_WORKING] = rebuilt + grads_live;
        }
        break;
    }
    case ULY_RECOMPUTE_OPS:
    case ULY_RECOMPUTE_OPS_HALF:
        /* every matmul's output and attention's saved, with the layer's
         * input: the norms' outputs (2 D) and the activation's output go,
         * the output projection's and the MLP down projection's outputs (D
         * each) come, the layer's input stays (one of the norms' inputs):
         * D + act_out less; every other matmul: the output projection's
         * output recomputed too, D more less. The norms' outputs as saved
         * (attn_in, mlp_in: D each, but under FP8) */
        tb[ULY_MEM_ACTIV] = f * L * (keep - full->attn_in - full->mlp_in + D - full->act_out -
                                     (w->recompute == ULY_RECOMPUTE_OPS_HALF ? D : 0));
        tb[ULY_MEM_SCORES] = f * L * scores;
        break;
    case ULY_RECOMPUTE_ATTN_SKIP:
        /* checkpointed at attention's output: the layer's input, the output
         * and its log-sum-exp; materialised scores stay (attention is not
         * run again to rebuild them) */
        tb[ULY_MEM_ACTIV] = f * L * (input + full->attn_out + full->lse);
        tb[ULY_MEM_SCORES] = f * L * scores;
        tb[ULY_MEM_WORKING] = rebuilt - full->attn_out - full->lse + grads_live;
        break;
    }
}

void uly_recompute_price(const uly_cluster *c, const uly_workload *w, const uly_plan *plan, const double *ex,
                         uly_timing *tm, double *layer_hw_flops)
{
    (void)w;
    if (plan->recompute_skip > 0 && plan->recompute_ops > 0) {
        /* the block method: the layers not recomputed skip the copy's
         * critical path and FLOPs; the layer's times become the stage's
         * average layer's */
        double rc_s = 0, rc_flops = 0;
        for (int i = plan->recompute_at; i < plan->recompute_at + plan->recompute_ops; i++) {
            rc_s += ex[i];
            rc_flops += plan->ops[i].flops;
        }
        tm->layer_bwd_s -= plan->recompute_skip * rc_s;
        *layer_hw_flops -= plan->recompute_skip * rc_flops;
    }
    if (plan->offload_share > 0 && c->gpu.host_link_bw_Bps > 0) {
        /* an offloaded layer's tensors go out under the next layer's
         * forward and come back under the previous one's backward, on the
         * copy engines: what outlasts that compute is exposed */
        const double xfer = plan->offload_bytes / c->gpu.host_link_bw_Bps;
        const double ef = uly_overlap_exposed(c, xfer, tm->layer_fwd_s);
        const double eb = uly_overlap_exposed(c, xfer, tm->layer_bwd_s);
        const double sh = plan->offload_share;
        tm->layer_fwd_s += sh * ef;
        tm->layer_bwd_s += sh * eb;
        tm->comm_exposed_s += sh * (ef + eb);
        tm->comm_overlapped_s += sh * (2.0 * xfer - ef - eb);
    }
}

/* ------------------------------------------- the other recompute passes */

/* Forward ops [from, to) run again at the start of backward (phase
 * backward, recompute 1): copied as full recompute's are, an op hidden
 * under another of the range hidden under its copy, else exposed. Copied
 * rather than emitted again, which keeps the emitters' call sites (and
 * their inlining on the hot path) as they are. */
__attribute__((cold)) static void recompute_ops_copy(uly_bctx *x, int from, int to)
{
    uly_plan *p = x->p;
    if (p->n_ops + (to - from) > ULY_PLAN_MAX_OPS) {
        x->overflow = 1;
        return;
    }
    const int shift = p->n_ops - from;
    for (int i = from; i < to; i++) {
        uly_op *o = &p->ops[p->n_ops];
        *o = p->ops[i];
        o->id = p->n_ops++;
        o->phase = ULY_PHASE_BWD;
        o->recompute = 1;
        if (o->overlaps >= from && o->overlaps < to) o->overlaps += shift;
        else if (o->overlaps >= 0) o->overlaps = ULY_OVERLAP_NONE;
    }
}

/* The forward op of `type` in [first, end), or -1 */
static int fwd_op(const uly_plan *p, int first, int end, uly_op_type type)
{
    for (int i = first; i < end; i++)
        if (p->ops[i].type == type) return i;
    return -1;
}

/* DistFlashAttn's checkpoint at attention's output: the layer's forward
 * again without attention's forward and the transfers that hide under it
 * (a ring's hops), which the backward does not need again */
__attribute__((cold)) static void recompute_skip_attn(uly_bctx *x, int first, int end)
{
    uly_plan *p = x->p;
    for (int i = first; i < end; i++) {
        const uly_op *o = &p->ops[i];
        const int under = o->kind == ULY_OP_COMM && o->overlaps >= first && o->overlaps < end &&
                          p->ops[o->overlaps].kind == ULY_OP_ATTN;
        if (o->kind == ULY_OP_ATTN || under) continue;
        /* runs of kept ops copied together, so that a transfer keeps the op it hides under */
        int j = i + 1;
        while (j < end && p->ops[j].kind != ULY_OP_ATTN &&
               !(p->ops[j].kind == ULY_OP_COMM && p->ops[j].overlaps >= first && p->ops[j].overlaps < end &&
                 p->ops[p->ops[j].overlaps].kind == ULY_OP_ATTN))
            j++;
        recompute_ops_copy(x, i, j);
        i = j - 1;
    }
}

/* The recompute passes other than full's copy and core attention's (rare:
 * a search's default is full): Megatron-LM's layernorm and mlp modules,
 * torchtitan's op-level policies, DistFlashAttn's attention-skipping
 * checkpoint; forward ops [first, end) re-run at the start of backward
 * (docs/model.md, "Recompute modes") */
__attribute__((cold, noinline)) void uly_layer_recompute_other(uly_bctx *x, const uly_layer_hooks *h, int first)
{
    const uly_workload *w = x->w;
    const uly_plan *p = x->p;
    const int end = p->n_ops;
    if (w->recompute == ULY_RECOMPUTE_ATTN_SKIP) {
        recompute_skip_attn(x, first, end);
        return;
    }
    const uint32_t mods = w->recompute == ULY_RECOMPUTE_SELECTIVE ? w->recompute_modules : 0;
    if ((mods & (1u << ULY_RMOD_CORE_ATTN)) && !p->act_flash) h->attn_fwd(x, ULY_RECOMP_SELECTIVE, h->ctx);
    const int ops = w->recompute == ULY_RECOMPUTE_OPS || w->recompute == ULY_RECOMPUTE_OPS_HALF;
    const int ln1 = fwd_op(p, first, end, ULY_OPT_LN1), ln2 = fwd_op(p, first, end, ULY_OPT_LN2);
    const int out = fwd_op(p, first, end, ULY_OPT_OUT_PROJ), act = fwd_op(p, first, end, ULY_OPT_MLP_ACT);
    if (ln1 < 0 || ln2 < 0 || out < 0 || act < 0) return;
    /* the norms' outputs (their inputs kept) */
    if (ops || (mods & (1u << ULY_RMOD_LAYERNORM))) recompute_ops_copy(x, ln1, ln1 + 1);
    /* every other matmul's output: the output projection's (the residual
     * the second norm reads) */
    if (w->recompute == ULY_RECOMPUTE_OPS_HALF) recompute_ops_copy(x, out, out + 1);
    if (ops || (mods & (1u << ULY_RMOD_LAYERNORM))) recompute_ops_copy(x, ln2, ln2 + 1);
    /* the MLP checkpointed at its input: all of it again, its
     * tensor-parallel transfers included; op-level: the activation */
    if (mods & (1u << ULY_RMOD_MLP)) recompute_ops_copy(x, ln2 + 1, end);
    else if (ops) recompute_ops_copy(x, act, act + 1);
}
