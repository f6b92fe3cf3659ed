/* megatron_run.c: what a Megatron-LM log read by megatron_log.c says of
 * its run (megatron_log.h): the median step over the reports after the
 * warm-up, the model (its experts and latent attention included) and the
 * parallel layout. Kept apart from the reader of the text. */
#include "megatron_log.h"
#include "text_file.h"
#include "text_quote.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, int k)
{
    qsort(v, (size_t)k, sizeof *v, cmp_dbl);
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

int mlog_report_counts(const mlog_run *r, int64_t warmup, int i)
{
    const int64_t interval = r->log_interval > 0 ? r->log_interval : 1;
    return r->reports[i].iteration - interval >= warmup; /* else its interval reaches into the warm-up */
}

int mlog_median(const mlog_run *r, int64_t warmup, double *iter_ms, double *tflops, int64_t *first, int64_t *last)
{
    double *ms = malloc(sizeof(double) * (size_t)(r->n_reports + 1));
    double *tf = malloc(sizeof(double) * (size_t)(r->n_reports + 1));
    int k = 0, all_tf = 1;
    *iter_ms = *tflops = NAN;
    *first = *last = 0;
    if (!ms || !tf) {
        free(ms);
        free(tf);
        return 0;
    }
    for (int i = 0; i < r->n_reports; i++) {
        const mlog_report *p = &r->reports[i];
        if (!mlog_report_counts(r, warmup, i)) continue;
        if (!k) *first = p->iteration;
        *last = p->iteration;
        ms[k] = p->iter_ms;
        tf[k] = p->tflops;
        all_tf &= !isnan(p->tflops);
        k++;
    }
    if (k) {
        *iter_ms = median_of(ms, k);
        if (all_tf) *tflops = median_of(tf, k);
    }
    free(ms);
    free(tf);
    return k;
}

/* The experts and latent attention of the model: Megatron-LM reads their
 * sizes only with num_experts and with multi_latent_attention True (it
 * prints its defaults for them otherwise), so neither is read without. */
static int model_moe_mla(const mlog_run *r, const char *shown, uly_model *m, char *why, size_t n)
{
    if (r->experts > 0) {
        if (r->topk <= 0)
            return text_fail_at(why, n, shown, r->args_line, "the log gives num_experts %lld and no moe_router_topk",
                                (long long)r->experts);
        m->experts = r->experts;
        m->topk = r->topk;
        /* validate_args: moe_ffn_hidden_size None is ffn_hidden_size */
        m->moe_ffn_hidden = r->moe_ffn_hidden > 0 ? r->moe_ffn_hidden : r->ffn_hidden;
        m->shared_ffn_hidden = r->shared_ffn_hidden;
        m->moe_dense_first = r->moe_dense_first;
        m->moe_every = r->moe_every > 1 ? r->moe_every : 0; /* 0 or 1: every layer after the dense ones */
    }
    if (r->mla != 1) return 0;
    const struct {
        const char *key;
        int64_t v;
    } need[] = {{"kv_lora_rank", r->kv_lora_rank},
                {"qk_head_dim", r->qk_head_dim},
                {"qk_pos_emb_head_dim", r->qk_pos_dim},
                {"v_head_dim", r->v_head_dim}};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (need[i].v <= 0)
            return text_fail_at(why, n, shown, mlog_arg_line(r, "multi_latent_attention"), "multi_latent_attention "
                                "True and the log gives no %s", need[i].key);
    m->q_lora_rank = r->q_lora_rank; /* None: queries projected directly */
    m->kv_lora_rank = r->kv_lora_rank;
    m->qk_nope_dim = r->qk_head_dim;
    m->qk_rope_dim = r->qk_pos_dim;
    m->head_dim = r->v_head_dim; /* ulysim's head_dim is the value head's under MLA */
    m->kv_heads = m->heads;      /* every head has its keys and values, up-projected from the latent */
    return 0;
}

int mlog_model(const mlog_run *r, const char *shown, uly_model *m, char *why, size_t n)
{
    const struct {
        const char *key;
        int64_t v;
    } need[] = {{"num_layers", r->layers},
                {"hidden_size", r->hidden},
                {"num_attention_heads", r->heads},
                {"ffn_hidden_size", r->ffn_hidden},
                {"vocabulary size (a 'padded vocab ... new size: N' line, padded_vocab_size or vocab_size)",
                 r->vocab}};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (need[i].v <= 0) return text_fail_at(why, n, shown, r->args_line, "the log gives no %s", need[i].key);
    memset(m, 0, sizeof *m);
    m->layers = r->layers;
    m->hidden = r->hidden;
    m->heads = r->heads;
    m->kv_heads = r->kv_heads > 0 ? r->kv_heads : r->heads;
    m->head_dim = r->head_dim > 0 ? r->head_dim : r->hidden / r->heads;
    m->ffn_hidden = r->ffn_hidden;
    m->vocab = r->vocab;
    m->swiglu = r->swiglu == 1;
    m->tied_embeddings = r->untied != 1; /* Megatron-LM ties them unless told not to */
    m->dropout = r->dropout == 1;
    m->bias = r->bias == 1;
    m->qkv_bias = r->qkv_bias == 1 && !m->bias;
    int rc = model_moe_mla(r, shown, m, why, n);
    if (rc) return rc;
    char w[256];
    if (uly_model_check(m, w, sizeof w) != ULY_OK)
        return text_fail_at(why, n, shown, r->args_line, "the model of the argument block is not valid: %s", w);
    return 0;
}

int mlog_layout(const mlog_run *r, const char *shown, uly_layout *l, char *why, size_t n)
{
    const int64_t t = r->tp > 0 ? r->tp : 1, cp = r->cp > 0 ? r->cp : 1, pp = r->pp > 0 ? r->pp : 1;
    const uly_strategy *s = NULL;
    int64_t u = 1, ring = 1;
    if (cp > 1) {
        const char *comm = r->cp_comm[0] ? r->cp_comm : "p2p"; /* Megatron-Core's default */
        char valid[160] = "";
        for (int i = 0; i < ULY_STRAT_COUNT && !s; i++) {
            const uly_strategy *c = uly_strategy_get((uly_strategy_id)i);
            if (!c || !c->megatron_cp_comm) continue;
            if (!strcmp(c->megatron_cp_comm, comm)) s = c;
            else snprintf(valid + strlen(valid), sizeof valid - strlen(valid), "%s%s", valid[0] ? ", " : "",
                          c->megatron_cp_comm);
        }
        char qb[64];
        if (!s) return text_fail_at(why, n, shown, r->args_line, "cp_comm_type %s: not a scheme ulysim models (valid: %s)",
                            text_quote(comm, qb, sizeof qb), valid);
        if (s->uses_ulysses && s->uses_ring) {
            if (r->hcp_u * r->hcp_r != cp)
                return text_fail_at(why, n, shown, r->args_line,
                            "cp_comm_type %s needs hierarchical_context_parallel_sizes [U, R] with U x R = "
                            "context_parallel_size %lld", comm, (long long)cp);
            u = r->hcp_u;
            ring = r->hcp_r;
        } else if (s->uses_ulysses) {
            u = cp;
        } else {
            ring = cp;
        }
    } else {
        s = uly_strategy_get(r->sequence_parallel == 1 ? ULY_STRAT_MEGATRON_SP : ULY_STRAT_MEGATRON_TP);
    }
    const int64_t per_replica = t * cp * pp;
    if (r->world_size <= 0) return text_fail_at(why, n, shown, r->args_line, "the log gives no world_size");
    if (r->world_size % per_replica)
        return text_fail_at(why, n, shown, r->args_line,
                    "world_size %lld is not a multiple of tensor x context x pipeline parallel %lld",
                    (long long)r->world_size, (long long)per_replica);
    uly_layout_init(l, s->id, u, ring, t, r->world_size / per_replica);
    l->pp = pp;
    int64_t vpp = r->vpp > 0 ? r->vpp : 1;
    if (r->vpp <= 0 && r->layers_per_vstage > 0 && r->layers > 0 && pp > 1) {
        vpp = r->layers / pp / r->layers_per_vstage;
        if (vpp < 1) /* not a default of 1: the log asks for more layers per stage than a stage has */
            return text_fail_at(why, n, shown, mlog_arg_line(r, "num_layers_per_virtual_pipeline_stage"),
                                "num_layers_per_virtual_pipeline_stage %lld: more than num_layers %lld over "
                                "pipeline_model_parallel_size %lld gives a stage (valid: at most %lld)",
                                (long long)r->layers_per_vstage, (long long)r->layers, (long long)pp,
                                (long long)(r->layers / pp));
    }
    l->vpp = vpp > 0 ? vpp : 1;
    if (r->experts > 0) {
        /* validate_args: expert_tensor_parallel_size None is the run's TP */
        const int64_t ep = r->ep > 0 ? r->ep : 1, etp = r->etp > 0 ? r->etp : t;
        if (ep > r->world_size || etp > r->world_size / ep || ep > (1 << 20) || etp > (1 << 20))
            return text_fail_at(why, n, shown, mlog_arg_line(r, "expert_model_parallel_size"), "expert_model_parallel_"
                                "size %lld x expert_tensor_parallel_size %lld: more than world_size %lld (valid: "
                                "degrees whose product divides the GPUs)", (long long)ep, (long long)etp,
                                (long long)r->world_size);
        l->ep = (int32_t)ep;
        l->etp = (int32_t)etp;
    }
    return 0;
}
