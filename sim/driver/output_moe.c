/* output_moe.c: what the writers say of a mixture of experts, of latent
 * attention or of sliding windows: the model's experts and active
 * parameters, its window and the layers that have it, the workload's
 * dispatcher, capacity and imbalance, and the dispatch and combine bytes of
 * a plan's MoE ops (ULY_OPT_MOE_DISPATCH, ULY_OPT_MOE_COMBINE and their
 * backward). Dense models get none of it: their outputs stay as they were. */
#include "output.h"

#include <string.h>

int sim_moe_model_str(const uly_model *m, char *buf, size_t n)
{
    int k = 0;
    buf[0] = 0;
    if (m->experts > 0) {
        k = snprintf(buf, n, "; %lld experts of %lld, top-%lld", (long long)m->experts, (long long)m->moe_ffn_hidden,
                     (long long)m->topk);
        if (k > 0 && (size_t)k < n && m->shared_ffn_hidden > 0)
            k += snprintf(buf + k, n - (size_t)k, ", shared %lld", (long long)m->shared_ffn_hidden);
        if (k > 0 && (size_t)k < n)
            k += snprintf(buf + k, n - (size_t)k, " in %lld of %lld layers; %.2f B active", (long long)uly_moe_layers(m),
                          (long long)m->layers, uly_model_active_params(m) / 1e9);
    }
    if (k >= 0 && (size_t)k < n && m->kv_lora_rank > 0)
        k += snprintf(buf + k, n - (size_t)k, "; MLA: q latent %lld, kv latent %lld, qk %lld + rope %lld",
                      (long long)m->q_lora_rank, (long long)m->kv_lora_rank, (long long)m->qk_nope_dim,
                      (long long)m->qk_rope_dim);
    if (k >= 0 && (size_t)k < n && m->attn_window > 0)
        k += snprintf(buf + k, n - (size_t)k, "; sliding window %lld tokens in %lld of %lld layers",
                      (long long)m->attn_window, (long long)uly_window_layers(m), (long long)m->layers);
    return k;
}

void sim_moe_json_model(cJSON *mo, const uly_model *m)
{
    if (m->experts > 0) {
        cJSON *e = cJSON_CreateObject();
        sim_json_add(e, "experts", sim_json_int(m->experts));
        sim_json_add(e, "topk", sim_json_int(m->topk));
        sim_json_add(e, "moe_ffn_hidden", sim_json_int(m->moe_ffn_hidden));
        sim_json_add(e, "shared_ffn_hidden", sim_json_int(m->shared_ffn_hidden));
        sim_json_add(e, "moe_dense_first", sim_json_int(m->moe_dense_first));
        sim_json_add(e, "moe_every", sim_json_int(m->moe_every > 1 ? m->moe_every : 1));
        sim_json_add(e, "moe_layers", sim_json_int(uly_moe_layers(m)));
        sim_json_add(mo, "moe", e);
        sim_json_add(mo, "active_params", sim_json_num(uly_model_active_params(m)));
    }
    if (m->kv_lora_rank > 0) {
        cJSON *l = cJSON_CreateObject();
        sim_json_add(l, "q_lora_rank", sim_json_int(m->q_lora_rank));
        sim_json_add(l, "kv_lora_rank", sim_json_int(m->kv_lora_rank));
        sim_json_add(l, "qk_nope_dim", sim_json_int(m->qk_nope_dim));
        sim_json_add(l, "qk_rope_dim", sim_json_int(m->qk_rope_dim));
        sim_json_add(mo, "mla", l);
    }
    if (m->attn_window > 0) {
        cJSON *sw = cJSON_CreateObject();
        sim_json_add(sw, "tokens", sim_json_int(m->attn_window));
        sim_json_add(sw, "layers", sim_json_int(uly_window_layers(m)));
        sim_json_add(mo, "sliding_window", sw);
    }
}

void sim_moe_json_workload(cJSON *wo, const uly_model *m, const uly_workload *w)
{
    if (m->experts <= 0) return;
    cJSON *o = cJSON_CreateObject();
    sim_json_add(o, "dispatcher", cJSON_CreateString(uly_moe_dispatcher_name(w->moe_dispatcher)));
    sim_json_add(o, "capacity", sim_json_num(w->moe_capacity));
    sim_json_add(o, "imbalance", sim_json_num(w->moe_imbalance > 0 ? w->moe_imbalance : 1.0));
    sim_json_add(wo, "moe", o);
}

void sim_moe_bytes(const uly_plan *pl, double bytes[4])
{
    bytes[0] = bytes[1] = bytes[2] = bytes[3] = 0;
    for (int i = 0; pl && i < pl->n_ops && i < ULY_PLAN_MAX_OPS; i++) {
        const uly_op *op = &pl->ops[i];
        if (op->kind != ULY_OP_COMM || op->recompute) continue; /* full recompute's copy: the forward again */
        switch (op->type) {
        case ULY_OPT_MOE_DISPATCH: bytes[0] += (double)op->bytes_sent; break;
        case ULY_OPT_MOE_DISPATCH_BWD: bytes[1] += (double)op->bytes_sent; break;
        case ULY_OPT_MOE_COMBINE: bytes[2] += (double)op->bytes_sent; break;
        case ULY_OPT_MOE_COMBINE_BWD: bytes[3] += (double)op->bytes_sent; break;
        default: break;
        }
    }
}

void sim_moe_note(FILE *f, const uly_model *m, const uly_workload *w, const uly_layout *l, const uly_plan *pl)
{
    if (m->experts <= 0 || !pl) return;
    double b[4];
    sim_moe_bytes(pl, b);
    char line[400];
    snprintf(line, sizeof line,
             "MoE (ep %d, etp %d, %s dispatcher): per MoE layer per rank per micro-batch, dispatch %.2f MiB forward, "
             "%.2f MiB backward; combine %.2f MiB forward, %.2f MiB backward",
             l->ep > 1 ? (int)l->ep : 1, l->etp > 1 ? (int)l->etp : 1, uly_moe_dispatcher_name(w->moe_dispatcher),
             b[0] / 1048576.0, b[1] / 1048576.0, b[2] / 1048576.0, b[3] / 1048576.0);
    sim_print_note(f, "# ", "#   ", line, 120);
}

void sim_moe_json_ops(cJSON *ops, const uly_model *m, const uly_plan *pl)
{
    if (m->experts <= 0 || !pl) return;
    double b[4];
    sim_moe_bytes(pl, b);
    cJSON *o = cJSON_CreateObject();
    sim_json_add(o, "dispatch_fwd", sim_json_num(b[0]));
    sim_json_add(o, "dispatch_bwd", sim_json_num(b[1]));
    sim_json_add(o, "combine_fwd", sim_json_num(b[2]));
    sim_json_add(o, "combine_bwd", sim_json_num(b[3]));
    sim_json_add(ops, "moe_bytes_per_rank", o);
}
