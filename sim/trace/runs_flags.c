/* runs_flags.c: the layout and model of `ulysim runs from-megatron` for logs
 * without their argument block (iteration lines pasted into an issue, a log
 * rotated past its start): a launch script (--args-file) or ulysim's own
 * planning flags (--model, --gpus, --seq, --tp, --strategy, ...; Megatron-LM's
 * names too), read by the planning commands' parser (args.c) and written
 * into the mlog_run fields the argument block would have filled, so that the
 * row is made exactly as from a log with its block. */
#include "runs_flags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "preset.h"

int runs_flags_take(int argc, char **argv, int *i, runs_flags *f)
{
    const char *a = argv[*i];
    char name[64];
    if (a[0] != '-' || a[1] != '-') return 0;
    snprintf(name, sizeof name, "%.*s", (int)strcspn(a, "="), a);
    const sim_mlm_name *e = sim_mlm_find(name);
    if (!e && !sim_args_takes_value(name) && !sim_args_is_switch(name) && strcmp(name, "--args-file")) return 0;
    /* a value: after '=', or the next argument for an option that takes one */
    int values = !strchr(a, '=') && (sim_args_takes_value(name) || !strcmp(name, "--args-file") ||
                                      (e && e->values != '0' && e->values != '?'));
    if (f->n + 2 >= RUNS_FLAGS_MAX) return 0;
    f->argv[f->n++] = argv[*i];
    if (values && *i + 1 < argc) f->argv[f->n++] = argv[++*i];
    return 1;
}

/* ulysim's strategy as Megatron-LM's context-parallel settings (what its
 * argument block says): 0, or 2 */
static int layout_fill(const sim_args *a, mlog_run *r, char *why, size_t n)
{
    const uly_strategy *s = a->n_strategies == 1 ? uly_strategy_get(a->strategies[0]) : NULL;
    if (a->n_strategies == 0 && !a->pin_u && !a->pin_r)
        s = uly_strategy_find(a->sequence_parallel ? "megatron-sp" : "megatron-tp"); /* Megatron-LM without CP */
    if (!s)
        return sim_fail(why, n, "runs from-megatron: which strategy ran? (valid: one --strategy, or Megatron-LM's "
                        "--context-parallel-size with --cp-comm-type)");
    if (s->megatron_cp_comm) {
        snprintf(r->cp_comm, sizeof r->cp_comm, "%s", s->megatron_cp_comm);
        const int64_t u = a->pin_u > 0 ? a->pin_u : 1, ring = a->pin_r > 0 ? a->pin_r : 1;
        r->cp = (s->uses_ulysses ? u : 1) * (s->uses_ring ? ring : 1);
        r->hcp_u = u;
        r->hcp_r = ring;
    } else if (s->id == ULY_STRAT_MEGATRON_SP || s->id == ULY_STRAT_MEGATRON_TP) {
        r->cp = 1;
        r->sequence_parallel = s->id == ULY_STRAT_MEGATRON_SP;
    } else {
        return sim_fail(why, n, "runs from-megatron: --strategy %s is not a Megatron-LM layout (valid: megatron-tp, "
                        "megatron-sp, or a context-parallel scheme Megatron-Core names)", s->name);
    }
    r->tp = a->pin_t > 0 ? a->pin_t : 1;
    r->pp = a->pin_pp > 0 ? a->pin_pp : 1;
    r->vpp = a->pin_vpp > 0 ? a->pin_vpp : 0;
    r->layers_per_vstage = a->layers_per_vstage;
    return 0;
}

/* The model's experts and latent attention, and the MoE flags, as the
 * argument block's MoE and MLA arguments (mlog_model, mlog_layout read them
 * back): Megatron-LM's names for ulysim's fields */
static void moe_fill(const sim_args *a, const uly_model *m, mlog_run *r)
{
    r->experts = m->experts;
    r->topk = m->topk;
    r->moe_ffn_hidden = m->moe_ffn_hidden;
    r->shared_ffn_hidden = m->shared_ffn_hidden;
    r->moe_dense_first = m->moe_dense_first;
    r->moe_every = m->moe_every;
    r->ep = a->moe.ep;
    r->etp = a->moe.etp; /* 0: not given, Megatron-LM's default (the run's TP) */
    snprintf(r->moe_dispatcher, sizeof r->moe_dispatcher, "%s", uly_moe_dispatcher_name(a->moe.dispatcher));
    r->moe_capacity = a->moe.capacity;
    r->mla = m->kv_lora_rank > 0;
    r->q_lora_rank = m->q_lora_rank;
    r->kv_lora_rank = m->kv_lora_rank;
    r->qk_head_dim = m->qk_nope_dim;
    r->qk_pos_dim = m->qk_rope_dim;
    r->v_head_dim = m->head_dim;
}

int runs_flags_fill(const runs_flags *f, mlog_run *r, char *why, size_t n)
{
    sim_args *a = malloc(sizeof *a);
    if (!a) return sim_fail(why, n, "out of memory");
    char *argv[RUNS_FLAGS_MAX + 1];
    argv[0] = (char *)"ulysim";
    for (int k = 0; k < f->n; k++) argv[k + 1] = f->argv[k];
    int rc = sim_args_parse(f->n + 1, argv, a, why, n);
    if (!rc && (a->n_gpus != 1 || a->n_seq != 1 || !a->batch_set))
        rc = sim_fail(why, n, "runs from-megatron: a log without its argument block needs the run's %s (valid: "
                      "--gpus N, --seq N, --batch B, or Megatron-LM's --micro-batch-size in --args-file)",
                      a->n_gpus != 1 ? "GPU count" : a->n_seq != 1 ? "sequence length" : "micro-batch");
    uly_model m;
    char lib[512] = "";
    if (!rc && preset_model_load(a->model, &m, lib, sizeof lib) != 0)
        rc = sim_fail(why, n, "runs from-megatron: --model %s: %s", a->model, lib);
    if (!rc) rc = layout_fill(a, r, why, n);
    if (!rc) {
        r->world_size = a->gpus[0];
        r->seq = a->seq[0];
        r->micro_batch = a->batch;
        r->global_batch = a->global_batch;
        r->layers = m.layers;
        r->hidden = m.hidden;
        r->heads = m.heads;
        r->kv_heads = m.kv_heads;
        r->head_dim = m.head_dim;
        r->ffn_hidden = m.ffn_hidden;
        r->vocab = m.vocab;
        r->swiglu = m.swiglu;
        r->untied = !m.tied_embeddings;
        r->dropout = m.dropout;
        r->bias = m.bias;
        r->qkv_bias = m.qkv_bias;
        snprintf(r->transformer_impl, sizeof r->transformer_impl, "%s",
                 uly_transformer_impl_name(a->transformer_impl));
        moe_fill(a, &m, r);
        snprintf(r->recompute, sizeof r->recompute, "%s", a->recompute == ULY_RECOMPUTE_NONE ? "" :
                                                          uly_recompute_name(a->recompute));
        r->distributed_optimizer = a->framework == ULY_FW_MEGATRON && a->zero == 1;
        r->bf16 = a->dtype == ULY_BF16;
        r->fp16 = a->dtype == ULY_FP16;
        /* Megatron-LM reports every log_interval iterations, each report the
         * average of those: the gap between the first two reports (or the
         * first report's iteration when it is the only one) */
        if (r->n_reports > 0)
            r->log_interval = r->n_reports > 1 ? r->reports[1].iteration - r->reports[0].iteration : r->reports[0].iteration;
    }
    free(a);
    return rc;
}
