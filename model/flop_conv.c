/* flop_conv.c: FLOPs per step under the conventions people report TFLOP/s
 * in, so that a measured TFLOP/s per GPU converts to a step time (and a
 * predicted step time to that TFLOP/s). Each needs only the model shape and
 * the workload; the formulas and their sources are in docs/model.md
 * ("FLOP conventions"). */
#include <string.h>

#include "internal.h"

static const char *const conv_names[ULY_FLOP_CONV_COUNT] = {
    [ULY_FLOPS_ULYSIM] = "ulysim",
    [ULY_FLOPS_MEGATRON_LM] = "megatron-lm",
    [ULY_FLOPS_NARAYANAN] = "narayanan",
    [ULY_FLOPS_PALM] = "palm",
};

const char *uly_flop_conv_name(uly_flop_conv c)
{
    return (int)c >= 0 && c < ULY_FLOP_CONV_COUNT ? conv_names[c] : NULL;
}

int uly_flop_conv_find(const char *name)
{
    for (int i = 0; name && i < ULY_FLOP_CONV_COUNT; i++)
        if (!strcmp(name, conv_names[i])) return i;
    return -1;
}

double uly_flops_model_step(const uly_model *m, const uly_workload *w, double seqs)
{
    /* GEMMs and attention fwd + 2x bwd, causal attention halved, logits; no
     * recompute (the model FLOPs MFU is defined on) */
    const double N = (double)w->seq;
    /* scores q.k over a query head's width, then p.v over a value head's
     * (the same but under MLA) */
    const double qk_v = (double)(uly_qk_head_dim(m) + m->head_dim);
    const double attn = 2.0 * N * uly_attention_params(m) +
                        2.0 * N * N * (double)m->heads * qk_v * (w->causal ? 0.5 : 1.0) * uly_attn_density(w) *
                            uly_attn_window_density(m, w, NULL); /* the entries sliding windows leave */
    /* a MoE layer's token meets topk experts, the shared ones and the router */
    const double moe = (double)uly_moe_layers(m), dense = (double)m->layers - moe;
    const double routed = moe > 0 ? uly_expert_params(m) * (double)m->topk / (double)m->experts : 0;
    const double ffn = 2.0 * N * (dense * uly_mlp_params(m) + moe * (routed + uly_moe_other_params(m)));
    const double logits = 2.0 * N * (double)m->hidden * (double)m->vocab;
    return 3.0 * seqs * ((double)m->layers * attn + ffn + logits);
}

/* Megatron-LM's num_floating_point_operations (megatron/training/training.py):
 * 12 B s L h^2 [ (1 + k/a + s/h) (a d / h) + (f / h) g + V / (2 L h) ],
 * g = 3/2 with SwiGLU; full s^2 attention, no recompute. */
static double flops_megatron_lm(const uly_model *m, double B, double s)
{
    const double L = (double)m->layers, h = (double)m->hidden, a = (double)m->heads;
    const double k = (double)m->kv_heads, d = (double)m->head_dim;
    /* MoE: the FFN a token meets on average over the layers, its topk
     * experts' and the shared ones' in a MoE layer (Megatron-LM's
     * moe_ffn_hidden_size x topk + shared expert size term) */
    const double moe = (double)uly_moe_layers(m);
    const double f = moe > 0 ? ((L - moe) * (double)m->ffn_hidden +
                                moe * ((double)(m->moe_ffn_hidden * m->topk) + (double)m->shared_ffn_hidden)) / L
                             : (double)m->ffn_hidden;
    const double V = (double)m->vocab, g = m->swiglu ? 1.5 : 1.0;
    return 12.0 * B * s * L * h * h * ((1.0 + k / a + s / h) * (a * d / h) + (f / h) * g + V / (2.0 * L * h));
}

double uly_flops_step(uly_flop_conv c, const uly_model *m, const uly_workload *w, double seqs)
{
    const double s = (double)w->seq;
    switch (c) {
    case ULY_FLOPS_ULYSIM: return uly_flops_model_step(m, w, seqs);
    case ULY_FLOPS_MEGATRON_LM: return flops_megatron_lm(m, seqs, s);
    case ULY_FLOPS_NARAYANAN:
        /* the paper's 96 counts the full recompute's extra forward; without it, 72 */
        return uly_flops_megatron(m, (int64_t)seqs, w->seq, w->recompute == ULY_RECOMPUTE_FULL);
    case ULY_FLOPS_PALM:
        /* Chowdhery et al. 2022, appendix B: 6 P + 12 L h s per token */
        return seqs * s * (6.0 * uly_model_active_params(m) + 12.0 * (double)m->layers * (double)m->hidden * s);
    case ULY_FLOP_CONV_COUNT: break;
    }
    return 0;
}
