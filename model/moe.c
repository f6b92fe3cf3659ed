/* moe.c: what a mixture-of-experts or multi-head-latent-attention model
 * is made of: which layers are MoE, the parameters of each part, and the
 * checks of those fields (docs/model.md, "Mixture of experts" and
 * "Multi-head latent attention"). */
#include <math.h>

#include "internal.h"

int64_t uly_moe_layers(const uly_model *m)
{
    if (m->experts <= 0 || m->layers <= m->moe_dense_first) return 0;
    const int64_t rest = m->layers - m->moe_dense_first, every = m->moe_every > 1 ? m->moe_every : 1;
    /* Megatron-LM's pattern: layer i of the rest is MoE when i % every == 0 */
    return (rest + every - 1) / every;
}

int64_t uly_qk_head_dim(const uly_model *m)
{
    return m->kv_lora_rank > 0 ? m->qk_nope_dim + m->qk_rope_dim : m->head_dim;
}

double uly_attention_params(const uly_model *m)
{
    return m->kv_lora_rank > 0 ? uly_mla_params(m, m->head_dim) : uly_attn_params(m);
}

double uly_mla_params(const uly_model *m, int64_t v_head_dim)
{
    const double h = (double)m->hidden, a = (double)m->heads, dv = (double)v_head_dim;
    /* DeepSeek-V2/V3's MLA (modeling_deepseek.py's DeepseekV3Attention):
     * q_a_proj h x q_lora, its RMSNorm, q_b_proj q_lora x a (nope + rope)
     * (or q_proj h x a (nope + rope) without a q latent); kv_a_proj_with_mqa
     * h x (kv_lora + rope), its RMSNorm, kv_b_proj kv_lora x a (nope + v);
     * o_proj a v x h */
    const double dqk = (double)uly_qk_head_dim(m), ql = (double)m->q_lora_rank, kvl = (double)m->kv_lora_rank;
    const double q = ql > 0 ? h * ql + ql + ql * a * dqk : h * a * dqk;
    const double kv = h * (kvl + (double)m->qk_rope_dim) + kvl + kvl * a * ((double)m->qk_nope_dim + dv);
    return q + kv + a * dv * h;
}

double uly_expert_params(const uly_model *m)
{
    const double per = (double)m->hidden * (double)m->moe_ffn_hidden * (m->swiglu ? 3.0 : 2.0);
    return (double)m->experts * per;
}

double uly_moe_other_params(const uly_model *m)
{
    /* the shared experts, one FFN of their width together, and the router */
    const double shared = (double)m->hidden * (double)m->shared_ffn_hidden * (m->swiglu ? 3.0 : 2.0);
    return shared + (double)m->hidden * (double)m->experts;
}


double uly_model_active_params(const uly_model *m)
{
    const int64_t moe = uly_moe_layers(m);
    if (!moe) return uly_model_params(m);
    const double routed_unused = (double)(m->experts - m->topk) / (double)m->experts * uly_expert_params(m);
    return uly_model_params(m) - (double)moe * routed_unused;
}

uly_status uly_moe_model_check(const uly_model *m, char *why, size_t n)
{
    const int64_t f[] = {m->experts, m->topk, m->moe_ffn_hidden, m->shared_ffn_hidden, m->moe_dense_first, m->moe_every,
                         m->q_lora_rank, m->kv_lora_rank, m->qk_nope_dim, m->qk_rope_dim};
    static const char *const name[] = {"experts", "topk", "moe_ffn_hidden", "shared_ffn_hidden", "moe_dense_first",
                                       "moe_every", "q_lora_rank", "kv_lora_rank", "qk_nope_dim", "qk_rope_dim"};
    for (int i = 0; i < (int)(sizeof f / sizeof f[0]); i++)
        if (f[i] < 0 || f[i] > (1 << 22))
            return uly_fail(why, n, "%s = %lld: must be an integer in 0..%d", name[i], (long long)f[i], 1 << 22);
    if (m->experts > 0) {
        if (m->topk < 1 || m->topk > m->experts)
            return uly_fail(why, n, "topk = %lld: a MoE model routes each token to 1..experts (%lld) experts",
                            (long long)m->topk, (long long)m->experts);
        if (m->moe_ffn_hidden < 1)
            return uly_fail(why, n, "moe_ffn_hidden = 0: a MoE model needs its experts' FFN hidden size");
        if (m->moe_dense_first >= m->layers)
            return uly_fail(why, n, "moe_dense_first = %lld: must leave MoE layers of the %lld (0..%lld)",
                            (long long)m->moe_dense_first, (long long)m->layers, (long long)m->layers - 1);
    } else if (m->topk || m->moe_ffn_hidden || m->shared_ffn_hidden || m->moe_dense_first || m->moe_every > 1) {
        return uly_fail(why, n, "experts = 0: a dense model takes no topk, moe_ffn_hidden, shared_ffn_hidden, "
                        "moe_dense_first or moe_every");
    }
    if (m->kv_lora_rank > 0) {
        if (m->qk_nope_dim + m->qk_rope_dim < 1 || m->qk_rope_dim < 1)
            return uly_fail(why, n, "qk_rope_dim = %lld: multi-head latent attention needs its rope part (1 or more)",
                            (long long)m->qk_rope_dim);
        if ((uly_qk_head_dim(m) + m->head_dim) % 2 != 0)
            return uly_fail(why, n, "qk_nope_dim + qk_rope_dim + head_dim = %lld: ulysim prices multi-head latent "
                            "attention's heads at their mean width, which needs an even sum",
                            (long long)(uly_qk_head_dim(m) + m->head_dim));
        if (m->kv_heads != m->heads)
            return uly_fail(why, n, "kv_heads = %lld: multi-head latent attention up-projects every head (kv_heads = "
                            "heads = %lld)", (long long)m->kv_heads, (long long)m->heads);
    } else if (m->q_lora_rank || m->qk_nope_dim || m->qk_rope_dim) {
        return uly_fail(why, n, "kv_lora_rank = 0: q_lora_rank, qk_nope_dim and qk_rope_dim are multi-head latent "
                        "attention's (kv_lora_rank > 0)");
    }
    return ULY_OK;
}
