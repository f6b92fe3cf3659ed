/* output_json.c: the JSON of the ulysim subcommands: numbers written as
 * exact integers where they are, the request's configuration, each plan and
 * its ops. */
#include "output.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------- JSON */

const char sim_flop_convention[] =
    "model FLOPs: forward plus 2x forward for backward, no recompute, causal attention halved; "
    "hardware FLOPs add recompute and the attention kernel's 2.5x backward; "
    "tflops_per_gpu and mfu use model FLOPs, hfu hardware FLOPs, over the step time and the dense peak of the dtype";

cJSON *sim_json_int(int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    return cJSON_CreateRaw(buf);
}

cJSON *sim_json_num(double v)
{
    if (!isfinite(v)) return cJSON_CreateNull();
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        char buf[32];
        snprintf(buf, sizeof buf, "%.0f", v == 0 ? 0.0 : v);
        return cJSON_CreateRaw(buf);
    }
    return cJSON_CreateNumber(v);
}

int sim_json_add(cJSON *obj, const char *key, cJSON *item)
{
    if (!obj || !item) {
        cJSON_Delete(item);
        return 1;
    }
    if (cJSON_IsArray(obj)) cJSON_AddItemToArray(obj, item);
    else cJSON_AddItemToObject(obj, key, item);
    return 0;
}

#define ADD(o, k, v) (bad |= sim_json_add((o), (k), (v)))

static const char *dtype_str(uly_dtype t)
{
    const char *s = uly_dtype_name(t);
    return s ? s : "?";
}

cJSON *sim_json_config(const sim_ctx *c, const char *command)
{
    int bad = 0;
    const sim_args *a = c->a;
    const uly_model *m = &c->model;
    const uly_cluster *cl = &c->cluster;
    const uly_workload *w = &c->w;
    cJSON *cfg = cJSON_CreateObject();
    ADD(cfg, "command", cJSON_CreateString(command));

    cJSON *mo = cJSON_CreateObject();
    ADD(mo, "name", cJSON_CreateString(m->name));
    ADD(mo, "source", cJSON_CreateString(a->model));
    ADD(mo, "layers", sim_json_int(m->layers));
    ADD(mo, "hidden", sim_json_int(m->hidden));
    ADD(mo, "heads", sim_json_int(m->heads));
    ADD(mo, "kv_heads", sim_json_int(m->kv_heads));
    ADD(mo, "head_dim", sim_json_int(m->head_dim));
    ADD(mo, "ffn_hidden", sim_json_int(m->ffn_hidden));
    ADD(mo, "vocab", sim_json_int(m->vocab));
    ADD(mo, "swiglu", cJSON_CreateBool(m->swiglu));
    ADD(mo, "tied_embeddings", cJSON_CreateBool(m->tied_embeddings));
    ADD(mo, "dropout", cJSON_CreateBool(m->dropout));
    ADD(mo, "embed_norm", cJSON_CreateBool(m->embed_norm));
    ADD(mo, "bias", cJSON_CreateBool(m->bias));
    ADD(mo, "qkv_bias", cJSON_CreateBool(m->qkv_bias));
    ADD(mo, "params", sim_json_num(uly_model_params(m)));
    sim_moe_json_model(mo, m); /* output_moe.c: MoE and MLA models only */
    ADD(cfg, "model", mo);

    cJSON *co = cJSON_CreateObject();
    ADD(co, "name", cJSON_CreateString(cl->name));
    ADD(co, "source", cJSON_CreateString(a->cluster));
    ADD(co, "gpu", cJSON_CreateString(cl->gpu.name));
    ADD(co, "nodes", sim_json_int(cl->nodes));
    ADD(co, "gpus_per_node", sim_json_int(cl->gpus_per_node));
    ADD(co, "peak_flops", sim_json_num(cl->gpu.peak_flops[w->dtype]));
    ADD(co, "hbm_bytes", sim_json_num(cl->gpu.hbm_bytes));
    /* what a plan may use: the device's memory less the headroom (--mem-headroom) */
    ADD(co, "headroom_bytes", sim_json_num(cl->gpu.reserved_bytes));
    ADD(co, "usable_bytes", sim_json_num(cl->gpu.hbm_bytes - cl->gpu.reserved_bytes));
    ADD(co, "intra_bw_Bps", sim_json_num(cl->intra_bw_Bps));
    ADD(co, "nic_bw_Bps", sim_json_num(cl->nic_bw_Bps));
    ADD(co, "topology", cJSON_CreateString(uly_topo_name(cl->topo) ? uly_topo_name(cl->topo) : "?"));
    /* --gpus beyond the preset's nodes grew the cluster: said, not hidden in "nodes" */
    char grown[200];
    ADD(co, "preset_nodes", c->preset_nodes ? sim_json_int(c->preset_nodes) : cJSON_CreateNull());
    ADD(co, "grown", c->preset_nodes ? cJSON_CreateString(sim_cluster_grown(c, grown, sizeof grown)) : cJSON_CreateNull());
    ADD(cfg, "cluster", co);

    cJSON *wo = cJSON_CreateObject();
    if (a->cmd != SIM_CMD_SWEEP && a->cmd != SIM_CMD_MAXSEQ) ADD(wo, "seq", sim_json_int(w->seq));
    ADD(wo, "micro_batch", sim_json_int(w->micro_batch));
    ADD(wo, "global_batch", w->global_batch ? sim_json_int(w->global_batch) : cJSON_CreateNull());
    ADD(wo, "dtype", cJSON_CreateString(dtype_str(w->dtype)));
    ADD(wo, "causal", cJSON_CreateBool(w->causal));
    ADD(wo, "flash", cJSON_CreateBool(w->flash));
    ADD(wo, "recompute", cJSON_CreateString(uly_recompute_name(w->recompute)));
    ADD(wo, "zero_stage", sim_json_int(w->zero_stage));
    ADD(wo, "split", cJSON_CreateString(uly_split_name(w->split)));
    ADD(wo, "framework", cJSON_CreateString(uly_framework_name(w->framework)));
    ADD(wo, "attn_density", sim_json_num(uly_attn_density(w)));
    ADD(wo, "ffn_chunks", sim_json_int(w->ffn_chunks > 1 ? w->ffn_chunks : 1));
    ADD(wo, "loss_chunks", sim_json_int(w->loss_chunks > 1 ? w->loss_chunks : 1));
    ADD(wo, "cross_entropy", cJSON_CreateString(uly_ce_impl_name(w->ce_impl)));
    ADD(wo, "transformer_impl", cJSON_CreateString(uly_transformer_impl_name(w->transformer_impl)));
    ADD(wo, "tp_comm_overlap", cJSON_CreateBool(w->tp_comm_overlap));
    ADD(wo, "overlap_grad_reduce", cJSON_CreateBool(uly_grad_reduce_overlaps(w)));
    uly_state_bytes sb;
    uly_state_bytes_get(w, &sb);
    ADD(wo, "grad_bytes", sim_json_int(sb.grad_wire)); /* per gradient element, held and on the wire */
    /* Megatron-LM's main-gradient accumulation in the weight-gradient GEMMs (null: another framework) */
    ADD(wo, "grad_accum_fusion",
        w->framework == ULY_FW_MEGATRON ? cJSON_CreateBool(w->grad_accum_fusion >= 0) : cJSON_CreateNull());
    ADD(wo, "pp_scatter_gather",
        w->framework == ULY_FW_MEGATRON ? cJSON_CreateBool(w->pp_scatter_gather) : cJSON_CreateNull());
    ADD(wo, "zero_prefetch", sim_json_int(uly_zero_prefetch_layers(w)));
    ADD(wo, "attn_kernel", cJSON_CreateString(uly_attn_kernel_name(w->attn_kernel)));
    ADD(wo, "overlap_param_gather", cJSON_CreateBool(w->overlap_param_gather));
    ADD(wo, "cuda_graphs", cJSON_CreateBool(w->cuda_graphs));
    ADD(wo, "step_overhead_s", sim_json_num(w->step_overhead_s));
    sim_fp8_json_workload(wo, w);
    sim_moe_json_workload(wo, m, w);
    ADD(cfg, "workload", wo);

    cJSON *st = cJSON_CreateArray();
    for (int i = 0; i < c->n_strat; i++) ADD(st, NULL, cJSON_CreateString(sim_strategy_name(c->strat[i])));
    ADD(cfg, "strategies", st);
    cJSON *pin = cJSON_CreateObject();
    ADD(pin, "ulysses", a->pin_u ? sim_json_int(a->pin_u) : cJSON_CreateNull());
    ADD(pin, "ring", a->pin_r ? sim_json_int(a->pin_r) : cJSON_CreateNull());
    ADD(pin, "tp", a->pin_t ? sim_json_int(a->pin_t) : cJSON_CreateNull());
    ADD(pin, "pp", a->pin_pp == ULY_PP_SEARCH ? cJSON_CreateNull() : sim_json_int(a->pin_pp > 1 ? a->pin_pp : 1));
    ADD(pin, "ep", a->moe.ep ? sim_json_int(a->moe.ep) : cJSON_CreateNull());
    ADD(pin, "etp", a->moe.etp ? sim_json_int(a->moe.etp) : cJSON_CreateNull());
    ADD(cfg, "pinned", pin);
    cJSON *so = cJSON_CreateObject();
    ADD(so, "both_placements", cJSON_CreateBool(c->opts.both_placements));
    ADD(so, "search_micro_batch", cJSON_CreateBool(c->opts.search_micro_batch));
    ADD(cfg, "search", so);
    if (bad) {
        cJSON_Delete(cfg);
        return NULL;
    }
    return cfg;
}

static cJSON *tiers_json(int tiers)
{
    cJSON *a = cJSON_CreateArray();
    if (tiers & ULY_TIER_INTRA) sim_json_add(a, NULL, cJSON_CreateString("intra"));
    if (tiers & ULY_TIER_INTER) sim_json_add(a, NULL, cJSON_CreateString("inter"));
    return a;
}

/* A plan's status, read alone: "ok" only for a plan that was priced and
 * fits; "does-not-fit" for one priced that does not (memory or a fatal
 * reason, in "reasons"), so that a script reading "status" alone never
 * takes a plan that cannot run for one that can. */
static const char *status_name(const sim_summary *s)
{
    switch (s->status) {
    case SIM_ROW_OK: return s->feasible ? "ok" : "does-not-fit";
    case SIM_ROW_NOLAYOUT: return "no-valid-layout";
    case SIM_ROW_OVERFLOW: return "overflow";
    default: return "error";
    }
}

const char *sim_cluster_grown(const sim_ctx *c, char *buf, size_t n)
{
    const int64_t gpus = c->cluster.nodes * c->cluster.gpus_per_node;
    if (c->preset_nodes)
        snprintf(buf, n, "the preset has %lld node%s; nodes of the same kind were added for %lld GPUs",
                 (long long)c->preset_nodes, sim_plural_s(c->preset_nodes), (long long)gpus);
    else if (n)
        buf[0] = 0;
    return buf;
}

int sim_json_recommended(cJSON *root, const sim_summary *rows, int rec)
{
    int bad = sim_json_add(root, "recommended", rec >= 0 ? sim_json_int(rec) : cJSON_CreateNull());
    return bad | sim_json_add(root, "recommended_strategy",
                              rec >= 0 ? cJSON_CreateString(rows[rec].strategy->name) : cJSON_CreateNull());
}

cJSON *sim_json_plan(const sim_ctx *c, const sim_summary *s)
{
    int bad = 0;
    const uly_layout *l = &s->layout;
    cJSON *p = cJSON_CreateObject();
    ADD(p, "strategy", cJSON_CreateString(s->strategy->name));
    cJSON *d = cJSON_CreateObject();
    ADD(d, "ulysses", sim_json_int(l->ulysses));
    ADD(d, "ring", sim_json_int(l->ring));
    ADD(d, "tp", sim_json_int(l->tp));
    ADD(d, "dp", sim_json_int(l->dp));
    ADD(d, "pp", sim_json_int(l->pp ? l->pp : 1));
    ADD(d, "vpp", sim_json_int(l->pp > 1 && l->vpp > 1 ? l->vpp : 1));
    /* the MoE layers' expert parallel and expert tensor parallel degrees; 1 where unused */
    ADD(d, "ep", sim_json_int(l->ep > 1 ? l->ep : 1));
    ADD(d, "etp", sim_json_int(l->etp > 1 ? l->etp : 1));
    ADD(p, "degrees", d);
    cJSON *pl = cJSON_CreateArray();
    for (int i = 0; i < 4; i++)
        if (l->order[i] != ULY_GROUP_NONE) ADD(pl, NULL, cJSON_CreateString(uly_group_name(l->order[i])));
    ADD(p, "placement", pl);
    ADD(p, "gpus", sim_json_int(s->gpus));
    ADD(p, "seq", sim_json_int(s->seq));
    ADD(p, "feasible", cJSON_CreateBool(s->feasible && s->status == SIM_ROW_OK));
    ADD(p, "status", cJSON_CreateString(status_name(s)));
    cJSON *rs = cJSON_CreateArray();
    if (s->status == SIM_ROW_NOLAYOUT)
        ADD(rs, NULL, cJSON_CreateString("no layout of this strategy has valid shapes; reasons of the layout shown"));
    if (s->status == SIM_ROW_OVERFLOW) ADD(rs, NULL, cJSON_CreateString("sizes overflow 63 bits"));
    if (s->hint[0]) ADD(rs, NULL, cJSON_CreateString(s->hint));
    for (int i = 0; i < s->n_reasons && i < ULY_MAX_REASONS; i++) {
        char one[256];
        uly_reason_format(&s->reasons[i], &c->model, one, sizeof one);
        ADD(rs, NULL, cJSON_CreateString(one));
    }
    ADD(p, "reasons", rs);

    /* a plan refused on its shapes (or whose sizes overflow) was never
     * priced: its memory, traffic and times are unknown, null here as the
     * table's "-" and the CSV's empty cells, not 0, which a script taking
     * the smallest memory or step time would pick */
    const int priced = sim_has_numbers(s);
#define NUM(v) (priced ? sim_json_num(v) : cJSON_CreateNull())
#define INT(v) (priced ? sim_json_int(v) : cJSON_CreateNull())
    cJSON *mem = cJSON_CreateObject();
    ADD(mem, "total_bytes", NUM(s->mem.total_bytes));
    ADD(mem, "capacity_bytes", NUM(s->mem.capacity_bytes));
    cJSON *terms = cJSON_CreateObject();
    for (int t = 0; t < ULY_MEM_TERM_COUNT; t++)
        ADD(terms, uly_mem_term_name((uly_mem_term)t), NUM(s->mem.term_bytes[t]));
    ADD(mem, "terms", terms);
    int lg = s->mem.largest >= 0 && s->mem.largest < ULY_MEM_TERM_COUNT ? s->mem.largest : 0;
    ADD(mem, "largest", priced ? cJSON_CreateString(uly_mem_term_name((uly_mem_term)lg)) : cJSON_CreateNull());
    ADD(p, "memory", mem);

    cJSON *per = cJSON_CreateObject();
    cJSON *cb = cJSON_CreateObject();
    ADD(cb, "fwd", INT(s->comm_fwd));
    ADD(cb, "bwd", INT(s->comm_bwd));
    ADD(cb, "recompute", INT(s->comm_recompute));
    ADD(per, "comm_bytes_per_rank", cb);
    ADD(per, "zero_bytes_per_rank", INT(s->zero_bytes));
    ADD(per, "tiers", priced ? tiers_json(s->tiers) : cJSON_CreateNull());
    ADD(per, "fwd_s", NUM(s->time.layer_fwd_s));
    ADD(per, "bwd_s", NUM(s->time.layer_bwd_s));
    ADD(per, "compute_s", NUM(s->time.compute_s));
    ADD(per, "comm_exposed_s", NUM(s->time.comm_exposed_s));
    ADD(per, "comm_overlapped_s", NUM(s->time.comm_overlapped_s));
    ADD(p, "per_layer", per);

    cJSON *st = cJSON_CreateObject();
    ADD(st, "time_s", NUM(s->time.step_s));
    /* null where the plan does not fit: it cannot run at any rate; what it
     * would reach if it fitted (the throughput figure's open markers) is
     * kept apart, under "if_it_fit" */
    const int runs = sim_shows_throughput(s);
    ADD(st, "tokens_per_s", runs ? sim_json_num(s->time.tokens_per_s) : cJSON_CreateNull());
    ADD(st, "tflops_per_gpu", runs ? sim_json_num(s->time.tflops_per_gpu) : cJSON_CreateNull());
    ADD(st, "mfu", runs ? sim_json_num(s->time.mfu) : cJSON_CreateNull());
    ADD(st, "hfu", runs ? sim_json_num(s->time.hfu) : cJSON_CreateNull());
    sim_fp8_json_time(st, &c->w, &c->cluster, &s->time, runs);
    if (!runs && priced) {
        cJSON *w = cJSON_CreateObject();
        ADD(w, "tokens_per_s", sim_json_num(s->time.tokens_per_s));
        ADD(w, "tflops_per_gpu", sim_json_num(s->time.tflops_per_gpu));
        ADD(w, "mfu", sim_json_num(s->time.mfu));
        ADD(w, "hfu", sim_json_num(s->time.hfu));
        ADD(st, "if_it_fit", w);
    }
    ADD(st, "micro_batch", INT(s->micro_batch));
    ADD(st, "micro_steps", INT(s->time.micro_steps));
    ADD(st, "stage_layers", INT(s->time.stage_layers));
    ADD(st, "pp_bubble", NUM(s->time.pp_bubble));
    ADD(st, "model_s", NUM(s->time.model_s));
    ADD(st, "step_fixed_s", NUM(s->time.step_fixed_s));
    ADD(st, "model_flops", NUM(s->time.model_flops));
    ADD(st, "hw_flops", NUM(s->time.hw_flops));
    ADD(st, "zero_gather_s", NUM(s->time.zero_gather_s));
    ADD(st, "zero_gather_exposed_s", NUM(s->time.zero_gather_exposed_s));
#undef NUM
#undef INT
    ADD(p, "step", st);
    ADD(p, "layouts_evaluated", sim_json_int((int64_t)s->evaluated));
    if (bad) {
        cJSON_Delete(p);
        return NULL;
    }
    return p;
}

cJSON *sim_json_ops(const uly_plan *pl, const uly_result *r)
{
    int bad = 0;
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < pl->n_ops && i < ULY_PLAN_MAX_OPS; i++) {
        const uly_op *op = &pl->ops[i];
        cJSON *o = cJSON_CreateObject();
        ADD(o, "id", sim_json_int(op->id));
        ADD(o, "name", cJSON_CreateString(uly_op_type_name(op->type)));
        ADD(o, "phase", cJSON_CreateString(uly_phase_name(op->phase)));
        ADD(o, "kind", cJSON_CreateString(uly_op_kind_name(op->kind)));
        ADD(o, "per", cJSON_CreateString(op->per_step ? "step" : op->per_model ? "model" : "layer"));
        ADD(o, "recompute", cJSON_CreateBool(op->recompute));
        if (op->kind == ULY_OP_COMM) {
            ADD(o, "coll", cJSON_CreateString(uly_coll_name(op->coll)));
            ADD(o, "group", cJSON_CreateString(uly_group_name(op->group)));
            ADD(o, "group_size", sim_json_int(op->group_size));
            ADD(o, "steps", sim_json_int(op->steps));
            ADD(o, "bytes_sent", sim_json_int(op->bytes_sent));
            ADD(o, "tiers", tiers_json(op->tiers));
            if (op->overlaps >= 0) ADD(o, "overlaps", sim_json_int(op->overlaps));
            else ADD(o, "overlaps", op->overlaps == ULY_OVERLAP_PHASE ? cJSON_CreateString("phase") : cJSON_CreateNull());
        } else {
            ADD(o, "flops", sim_json_num(op->flops));
            ADD(o, "bytes_touched", sim_json_num(op->bytes_touched));
        }
        ADD(o, "time_s", sim_json_num(r->op_time_s[i]));
        ADD(o, "exposed_s", sim_json_num(r->op_exposed_s[i]));
        ADD(arr, NULL, o);
    }
    if (bad) {
        cJSON_Delete(arr);
        return NULL;
    }
    return arr;
}

int sim_json_print(cJSON *root, FILE *f)
{
    if (!root) return 1;
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (!s) return 1;
    fputs(s, f);
    fputc('\n', f);
    cJSON_free(s);
    return ferror(f) ? 1 : 0;
}

int sim_json_emit(cJSON *root, int bad, FILE *f)
{
    if (bad) {
        cJSON_Delete(root);
        sim_err("out of memory building the JSON output");
        return SIM_EXIT_INTERNAL;
    }
    return sim_json_print(root, f) ? SIM_EXIT_INTERNAL : SIM_EXIT_OK;
}
