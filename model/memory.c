/* memory.c: bytes per GPU. Model states follow mixed-precision Adam, 16
 * bytes per parameter (2 weights + 2 grads + 12 fp32 master, m, v; fp32
 * training: 4 + 4 + 8), sharded by ZeRO over the data x sequence group.
 * Activations follow Korthikanti et al. 2022 term by term (generalised to
 * GQA, SwiGLU, flash attention and context parallelism), so their formulas
 * (none, TP, TP+SP, TP+SP+selective) come out exactly for GPT-style models.
 * The backward working set is the peak of the first layer to run backward,
 * with autograd's rule that a gradient is freed once consumed and a saved
 * tensor once its node has run (see backward_peak). */
#include <math.h>
#include <string.h>

#include "internal.h"

/* uly_act_layer_terms with the attention's kernel given (flash) rather
 * than read from the workload: a plan's may differ (RSA materialises). */
static inline __attribute__((always_inline)) void act_layer_terms(const uly_model *m, const uly_workload *w, int flash,
                                                                   int64_t seq_full, int64_t t, int sp,
                            int64_t cp, int selective, int64_t etp, uly_act_terms *o)
{
    const double beta = uly_dtype_bytes(w->dtype), b = (double)w->micro_batch;
    const double s = (double)seq_full, T = s / (double)cp; /* this rank's tokens */
    const double h = (double)m->hidden, a = (double)m->heads, k = (double)m->kv_heads;
    const double d = (double)m->head_dim, tt = (double)t;
    /* a MoE layer's MLP: its shared experts */
    const double f = (double)(m->experts > 0 ? m->shared_ffn_hidden : m->ffn_hidden);
    const double nt = sp ? tt : 1.0; /* the non-TP regions split only under SP */
    const double drop = m->dropout ? 1.0 : 0.0;
    /* a linear layer's saved input: FP8 under FP8 training (beta otherwise) */
    const double q = uly_saved_gemm_input_bytes(w, beta);
    o->ln = 2.0 * beta * b * T * h / nt;
    o->attn_in = q * b * T * h / nt;
    o->qkv = beta * b * T * (a + 2.0 * k) * d / tt;
    o->scores = o->score_masks = 0;
    if (!flash && !selective) {
        /* a/t heads of T queries against all s keys: a s^2 / (cp t) per batch */
        const double sc = b * a * T * s / tt * uly_attn_density(w); /* block-sparse: the computed blocks */
        o->scores = beta * sc;
        o->score_masks = drop * (1.0 + beta) * sc;
    }
    o->lse = flash ? 4.0 * b * a * T / tt : 0; /* fp32 per query row and head */
    /* the output projection's input: under FP8 its quantized copy, beside
     * the bf16 output flash attention keeps for its own backward */
    o->attn_out = (w->dtype != ULY_FP8 ? beta : flash ? beta + q : q) * b * T * a * d / tt;
    o->attn_drop = drop * b * T * h / nt;
    o->mlp_in = q * b * T * h / nt;
    o->act_in = beta * b * T * f * (m->swiglu ? 2.0 : 1.0) / tt;
    o->act_out = q * b * T * f / tt;
    o->mlp_drop = drop * b * T * h / nt;
    o->experts = m->experts > 0 ? uly_moe_act_bytes(m, w, b * T / nt, etp) : 0;
    o->total = o->experts + o->ln + o->attn_in + o->qkv + o->scores + o->score_masks + o->lse + o->attn_out + o->attn_drop +
               o->mlp_in + o->act_in + o->act_out + o->mlp_drop;
}

__attribute__((cold)) void uly_act_terms_plan(const uly_model *m, const uly_workload *w, const uly_plan *plan, uly_act_terms *o)
{
    act_layer_terms(m, w, plan->act_flash, w->seq, plan->act_tp, plan->act_sp, plan->act_cp, 0, plan->layout.etp, o);
}

void uly_act_layer_terms(const uly_model *m, const uly_workload *w, int64_t seq_full,
                         int64_t t, int sp, int64_t cp, int selective, uly_act_terms *o)
{
    act_layer_terms(m, w, w->flash, seq_full, t, sp, cp, selective, 1, o);
}

/* Bytes backward adds at its peak on top of what the layers hold: a walk of
 * the first layer to run backward, op by op in autograd's order. Each op
 * allocates its outputs while its inputs are alive; a gradient is freed once
 * consumed, a saved activation once its node has run (`freed` counts those
 * of this layer). Sizes are this rank's (a: the layer's terms): D the
 * residual stream (b T h, split t ways under SP), F a GEMM region's input or
 * output gradient (whole b N h under TP and SP, all-gathered under SP), the
 * f-wide activation gradients, the score blocks of materialised attention.
 * Gradients are beta bytes an element, what the layer saved may be less
 * (FP8 copies of the GEMM inputs): each is sized as what it is.
 * dY (the gradient of the layer output) lives through the whole walk, as the
 * residual branch adds it in at the end of each block. */
static double backward_peak(const uly_act_terms *a, const uly_model *m, int sp, double t, double beta)
{
    const double D = a->ln / 2.0, F = sp ? D * t : D; /* ln: the two norms' beta-byte inputs */
    const double SP_RS = sp ? D : 0; /* Megatron-SP's reduce-scatter output beside its input */
    const double per_head = a->qkv / (double)(m->heads + 2 * m->kv_heads);
    const double dv = per_head * (double)m->kv_heads, dqk = per_head * (double)(m->heads + m->kv_heads);
    const double O = per_head * (double)m->heads;           /* attention's output, or its gradient */
    const double A = a->act_in / (m->swiglu ? 2.0 : 1.0);    /* the activation's output gradient */
    const double S = a->scores; /* one score block; 0 under flash */
    const double s_mask = S > 0 ? a->score_masks / (1.0 + beta) : 0; /* dropout mask (1 byte) */
    const double s_drop = a->score_masks - s_mask;                  /* dropout output (beta bytes) */
    double freed = 0, peak = 0;
#define STEP(live)                                                                                                     \
    do {                                                                                                               \
        const double x_ = (live) - freed;                                                                              \
        if (x_ > peak) peak = x_;                                                                                      \
    } while (0)
    /* MLP block */
    STEP(D + D); /* dropout-add: dY and the branch's gradient */
    freed += a->mlp_drop;
    if (sp) STEP(D + D + F); /* that gradient all-gathered over TP */
    STEP(D + F + A); /* second GEMM: its input's gradient */
    freed += a->act_out;
    STEP(D + A + a->act_in); /* activation */
    freed += a->act_in;
    STEP(D + a->act_in + F + SP_RS); /* first GEMM: its input's gradient, whole */
    freed += a->mlp_in;
    STEP(D + D + D); /* norm, then the residual sum */
    freed += a->ln / 2.0;
    /* attention block */
    STEP(D + D);
    freed += a->attn_drop;
    if (sp) STEP(D + D + F);
    STEP(D + F + O); /* output projection: the context's gradient */
    if (S > 0) {
        freed += a->attn_out;                  /* the context, saved by the projection only */
        STEP(D + O + S + dv);                  /* dP = dO V^T and dV beside the saved scores */
        freed += s_drop;
        STEP(D + S + S + dv); /* dropout backward; softmax backward then holds the same with more freed */
        freed += s_mask + S;
        STEP(D + S + dv + dqk); /* dQ and dK from dS */
        freed += a->qkv;
    } else {
        /* flash backward: dQ, dK, dV and the fp32 dQ accumulator beside dO */
        freed += a->attn_out - O; /* the projection's FP8 copy (0 but under FP8) */
        STEP(D + O + a->qkv + O * 4.0 / beta);
        freed += a->qkv + O + a->lse;
    }
    STEP(D + a->qkv + a->qkv);           /* dQ, dK, dV joined for the projection */
    STEP(D + a->qkv + F + SP_RS);        /* QKV GEMM: its input's gradient, whole */
    freed += a->attn_in;
    STEP(D + D + D);
#undef STEP
    return peak;
}

/* The activation, score, working-set and logit terms of a stage of
 * `layers` layers holding `in_flight` micro-batches (1F1B), with
 * or without the embedding (the first stage) and the logits (the last). */
static inline __attribute__((always_inline)) void stage_terms(const uly_model *m, const uly_workload *w, const uly_plan *plan, const uly_act_terms *full,
                        double grads_live, int64_t layers, double in_flight, int embed_here, int logits_here,
                        double *tb)
{
    const double beta = uly_dtype_bytes(w->dtype), b = (double)w->micro_batch;
    const double scores = full->scores + full->score_masks;
    const double L = (double)layers, f = in_flight;
    /* the other recompute modes and offload: recompute.c */
    if (__builtin_expect(w->recompute > ULY_RECOMPUTE_FULL || w->recompute_modules || w->recompute_method ||
                             w->offload_layers,
                         0))
        uly_recompute_stage_terms(m, w, plan, full, grads_live, L, f, tb);
    else switch (w->recompute) {
    case ULY_RECOMPUTE_NONE:
        tb[ULY_MEM_ACTIV] = f * L * (full->total - scores);
        tb[ULY_MEM_SCORES] = f * L * scores;
        tb[ULY_MEM_WORKING] = grads_live;
        break;
    case ULY_RECOMPUTE_SELECTIVE:
        tb[ULY_MEM_ACTIV] = f * L * (full->total - scores);
        tb[ULY_MEM_SCORES] = scores; /* recomputed for one layer at a time */
        tb[ULY_MEM_WORKING] = grads_live;
        break;
    case ULY_RECOMPUTE_FULL:
        /* each layer keeps its input; the layer in backward rebuilds the
         * rest (its first norm saves that same input: not counted twice) */
        tb[ULY_MEM_ACTIV] = f * L * beta * b * (double)plan->act_tokens * (double)m->hidden;
        tb[ULY_MEM_SCORES] = scores;
        tb[ULY_MEM_WORKING] = full->total - full->ln / 2.0 - scores + grads_live;
        break;
    case ULY_RECOMPUTE_OPS:
    case ULY_RECOMPUTE_OPS_HALF:
    case ULY_RECOMPUTE_ATTN_SKIP:
        break; /* recompute.c's, above */
    }
    /* the embedding's dropout keeps its mask (1 byte per element of the
     * rank's tokens) until the embedding's backward, outside any recomputed
     * layer */
    if (embed_here && m->dropout) tb[ULY_MEM_ACTIV] += f * b * (double)plan->act_tokens * (double)m->hidden;
    /* BERT's embedding LayerNorm keeps its input (beta bytes per element) */
    if (embed_here && m->embed_norm)
        tb[ULY_MEM_ACTIV] += f * beta * b * (double)plan->act_tokens * (double)m->hidden;
    /* the logits of this rank's tokens: the fp32 copy the loss works in
     * (its gradient reuses the buffer) beside the half-precision logits in
     * forward, or their gradient in backward; with them, what the final norm
     * and the output layer save for their backward: the norm's input and its
     * output, the output GEMM's input, over the rank's own tokens (Megatron-SP
     * saves the GEMM's input before its all-gather and gathers it again in
     * backward). All are freed once the final norm's backward has run,
     * before any transformer layer's backward, so they never coexist with
     * backward's working set: the peak holds the larger of the two, and this
     * term is what the logits phase adds beyond it */
    const double logit_elem_bytes = 4.0 + (beta < 4.0 ? beta : 0.0);
    const double loss_chunks = w->loss_chunks > 1 ? (double)w->loss_chunks : 1.0; /* one block's logits at a time */
    const double logits =
        logits_here ? logit_elem_bytes * b * (double)plan->logit_tokens * (double)plan->logit_vocab / loss_chunks +
                          2.0 * beta * b * (double)plan->act_tokens * (double)m->hidden
                    : 0;
    tb[ULY_MEM_LOGITS] = logits > tb[ULY_MEM_WORKING] ? logits - tb[ULY_MEM_WORKING] : 0;
}

/* tb becomes the terms of the stage of `layers` layers and `in_flight`
 * micro-batches (no logits) when that stage holds more in all */
__attribute__((cold)) static void heavier_stage(const uly_model *m, const uly_workload *w, const uly_plan *plan, const uly_act_terms *full,
                          double grads_live, int64_t layers, double in_flight, int embed_here, double *tb)
{
    double other[ULY_MEM_TERM_COUNT];
    memcpy(other, tb, sizeof other);
    stage_terms(m, w, plan, full, grads_live, layers, in_flight, embed_here, 0, other);
    double a = 0, z = 0;
    for (int i = 0; i < ULY_MEM_TERM_COUNT; i++) {
        a += other[i];
        z += tb[i];
    }
    if (a > z) memcpy(tb, other, sizeof other);
}

uly_status uly_memory_eval(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                           const uly_plan *plan, uly_memory *out)
{
    if (!m || !w || !c || !plan || !out) return ULY_EINVAL;
    memset(out, 0, sizeof *out);
    double *tb = out->term_bytes;
    const double beta = uly_dtype_bytes(w->dtype);
    const double tsplit = (double)plan->weight_split;
    const double G = (double)plan->dims.zero_group;
    const double params = plan->model_params_rank;
    const double shard = plan->model_params_shard; /* padded */
    uly_state_bytes sb;
    uly_state_bytes_get(w, &sb);
    tb[ULY_MEM_WEIGHTS] = sb.weights_whole * params + sb.weights_shard * shard;
    tb[ULY_MEM_GRADS] = sb.grads_whole * params + sb.grads_shard * shard;
    tb[ULY_MEM_OPTIM] = sb.optim_whole * params + sb.optim_shard * shard;
    if (__builtin_expect(plan->expert_params_rank > 0, 0)) {
        /* the routed experts' states, sharded over the expert data-parallel group */
        const double pe = plan->expert_params_rank, se = plan->expert_params_shard;
        tb[ULY_MEM_WEIGHTS] += sb.weights_whole * pe + sb.weights_shard * se;
        tb[ULY_MEM_GRADS] += sb.grads_whole * pe + sb.grads_shard * se;
        tb[ULY_MEM_OPTIM] += sb.optim_whole * pe + sb.optim_shard * se;
    }
    /* FP8 training's weight copies, scales and amax histories (fp8.c) */
    if (__builtin_expect(w->dtype == ULY_FP8, 0)) tb[ULY_MEM_WEIGHTS] += uly_fp8_mem_total(m, w, plan);

    uly_act_terms full;
    act_layer_terms(m, w, plan->act_flash, w->seq, plan->act_tp, plan->act_sp, plan->act_cp, 0, plan->layout.etp, &full);
    if (w->ffn_chunks > 1) {
        /* chunked FFN: the f-wide intermediates are not saved, and one
         * block's are live at a time in backward */
        const double C = (double)w->ffn_chunks;
        full.total -= full.act_in + full.act_out;
        full.act_in /= C;
        full.act_out /= C;
    }
    const double grads_live = backward_peak(&full, m, plan->act_sp, (double)plan->act_tp, beta);
    tb[ULY_MEM_COMM] = plan->comm_buf_bytes;
    if (w->zero_stage >= 3 && G > 1) {
        /* the layer being computed and those prefetched, or the embedding;
         * at most the stage's layers: a deeper prefetch has no further
         * layer to fetch */
        double held = (double)(1 + uly_zero_prefetch_layers(w));
        if (held > (double)plan->stage_layers) held = (double)plan->stage_layers;
        /* a MoE layer's local experts gathered too (over expert data parallelism) */
        const double experts = plan->expert_params_rank > 0 ? uly_layer_expert_params_rank(m, &plan->layout) : 0;
        const double layer = held * (plan->layer_params_rank + experts);
        const double emb = (double)m->vocab * (double)m->hidden / tsplit;
        tb[ULY_MEM_ZERO_GATHER] = beta * (layer > emb ? layer : emb);
    }
    tb[ULY_MEM_RESERVED] = c->gpu.reserved_bytes;
    /* A pipeline's heaviest stage is its first (activations of every
     * micro-batch in flight) or its last (the logits); without one the single
     * stage is both */
    const int64_t *n = plan->pp_stage_layers, most = plan->stage_layers;
    const int staged = plan->pp_staged;
    stage_terms(m, w, plan, &full, grads_live, staged ? n[2] : most,
                plan->layout.pp > 1 ? plan->pp_in_flight_last : 1.0, plan->layout.pp <= 1, 1, tb);
    if (plan->layout.pp > 1) {
        heavier_stage(m, w, plan, &full, grads_live, staged ? n[0] : most, plan->pp_in_flight, 1, tb);
        /* uneven: the second stage, more layers than the first and one
         * micro-batch fewer in flight, may hold the most */
        if (staged && plan->layout.pp > 2) heavier_stage(m, w, plan, &full, grads_live, n[1], plan->pp_in_flight_mid, 0, tb);
    }

    /* summed in locals (through out, each add reloads what the last one
     * stored: the compiler cannot keep a field of out in a register
     * while tb, in out too, is read) */
    double total = 0;
    int largest = 0;
    for (int i = 0; i < ULY_MEM_TERM_COUNT; i++) {
        total += tb[i];
        if (tb[i] > tb[largest]) largest = i;
    }
    out->total_bytes = total;
    out->largest = largest;
    out->capacity_bytes = c->gpu.hbm_bytes;
    out->fits = out->total_bytes <= out->capacity_bytes;
    return ULY_OK;
}
