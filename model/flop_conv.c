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
    const double layer = 2.0 * N * (uly_attn_params(m) + uly_mlp_params(m)) +
                         4.0 * N * N * (double)(m->heads * m->head_dim) * (w->causal ? 0.5 : 1.0) *
                             uly_attn_density(w);
    const double logits = 2.0 * N * (double)m->hidden * (double)m->vocab;
    return 3.0 * seqs * ((double)m->layers * layer + logits);
}

/* Megatron-LM's num_floating_point_operations (megatron/training/training.py):
 * 12 B s L h^2 [ (1 + k/a + s/h) (a d / h) + (f / h) g + V / (2 L h) ],
 * g = 3/2 with SwiGLU; full s^2 attention, no recompute. */
static double flops_megatron_lm(const uly_model *m, double B, double s)
{
    const double L = (double)m->layers, h = (double)m->hidden, a = (double)m->heads;
    const double k = (double)m->kv_heads, d = (double)m->head_dim, f = (double)m->ffn_hidden;
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
        return seqs * s * (6.0 * uly_model_params(m) + 12.0 * (double)m->layers * (double)m->hidden * s);
    case ULY_FLOP_CONV_COUNT: break;
    }
    return 0;
}
