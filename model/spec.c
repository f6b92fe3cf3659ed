/* spec.c: names of the enums, and validation of model, workload, cluster and
 * layout. Each check writes one line naming the field, its value and what
 * would be valid; limits are generous but finite so no later product can
 * overflow silently (sizes are also checked where they are multiplied). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

const char *uly_status_str(uly_status s)
{
    switch (s) {
    case ULY_OK: return "ok";
    case ULY_EINVAL: return "invalid input";
    case ULY_EOVERFLOW: return "size overflow";
    case ULY_ENOSPACE: return "buffer too small";
    }
    return "unknown status";
}

int uly_dtype_bytes(uly_dtype t) { return t == ULY_FP32 ? 4 : 2; }

/* The names of each vocabulary, expanded from ulysim.h's lists (so each has
 * exactly its enum's count of entries), and the lookups both ways. */
static const char *const dtype_names[] = {ULY_DTYPES(ULY_X_NAME)};
static const char *const recompute_names[] = {ULY_RECOMPUTES(ULY_X_NAME)};
static const char *const split_names[] = {ULY_SPLITS(ULY_X_NAME)};
static const char *const rmod_names[] = {ULY_RECOMPUTE_MODULES(ULY_X_NAME)};
static const char *const rmethod_names[] = {ULY_RECOMPUTE_METHODS(ULY_X_NAME)};
static const char *const attn_kernel_names[] = {ULY_ATTN_KERNELS(ULY_X_NAME)};
static const char *const framework_names[] = {ULY_FRAMEWORKS(ULY_X_NAME)};
static const char *const moe_dispatcher_names[] = {ULY_MOE_DISPATCHERS(ULY_X_NAME)};
static const char *const ce_impl_names[] = {ULY_CE_IMPLS(ULY_X_NAME)};
static const char *const transformer_impl_names[] = {ULY_TRANSFORMER_IMPLS(ULY_X_NAME)};
static const char *const phase_names[] = {ULY_PHASES(ULY_X_NAME)};
static const char *const op_kind_names[] = {ULY_OP_KINDS(ULY_X_NAME)};
static const char *const mb_class_names[] = {ULY_MB_CLASSES(ULY_X_NAME)};

static const char *vocab_name(const char *const *names, int count, int v) { return v >= 0 && v < count ? names[v] : "?"; }

/* The value named, or count when none is. */
static int vocab_find(const char *const *names, int count, const char *name)
{
    for (int i = 0; name && i < count; i++)
        if (strcmp(names[i], name) == 0) return i;
    return count;
}

const char *uly_names_join(const char *const *names, int count, const char *sep, const char *last, char *buf, size_t n)
{
    size_t o = 0;
    if (n) buf[0] = 0;
    for (int i = 0; i < count && o < n; i++) {
        const int k = snprintf(buf + o, n - o, "%s%s", i == 0 ? "" : i == count - 1 ? last : sep, names[i]);
        if (k < 0) break;
        o += (size_t)k;
    }
    return buf;
}

#define ULY_VOCAB_LOOKUPS(type, prefix, names, count)                                                                  \
    const char *prefix##_name(type v) { return vocab_name(names, count, (int)v); }                                     \
    type prefix##_find(const char *name) { return (type)vocab_find(names, count, name); }
ULY_VOCAB_LOOKUPS(uly_dtype, uly_dtype, dtype_names, ULY_DTYPE_COUNT)
ULY_VOCAB_LOOKUPS(uly_recompute, uly_recompute, recompute_names, ULY_RECOMPUTE_COUNT)
ULY_VOCAB_LOOKUPS(uly_split, uly_split, split_names, ULY_SPLIT_COUNT)
ULY_VOCAB_LOOKUPS(uly_recompute_module, uly_recompute_module, rmod_names, ULY_RMOD_COUNT)
ULY_VOCAB_LOOKUPS(uly_recompute_method, uly_recompute_method, rmethod_names, ULY_RMETHOD_COUNT)
ULY_VOCAB_LOOKUPS(uly_attn_kernel, uly_attn_kernel, attn_kernel_names, ULY_AK_COUNT)
ULY_VOCAB_LOOKUPS(uly_framework, uly_framework, framework_names, ULY_FW_COUNT)
ULY_VOCAB_LOOKUPS(uly_moe_dispatcher, uly_moe_dispatcher, moe_dispatcher_names, ULY_MOE_DISPATCHER_COUNT)
ULY_VOCAB_LOOKUPS(uly_ce_impl, uly_ce_impl, ce_impl_names, ULY_CE_COUNT)
ULY_VOCAB_LOOKUPS(uly_transformer_impl, uly_transformer_impl, transformer_impl_names, ULY_TI_COUNT)
ULY_VOCAB_LOOKUPS(uly_mb_class, uly_mb_class, mb_class_names, ULY_MB_COUNT)
#undef ULY_VOCAB_LOOKUPS

const char *uly_phase_name(uly_phase p) { return vocab_name(phase_names, ULY_PHASE_COUNT, (int)p); }
const char *uly_op_kind_name(uly_op_kind k) { return vocab_name(op_kind_names, ULY_OP_KIND_COUNT, (int)k); }

const char *uly_topo_name(uly_topo t)
{
    static const char *const n[] = {"fat-tree", "rail", "torus"};
    _Static_assert(sizeof n / sizeof n[0] == ULY_TOPO_COUNT, "one name per value");
    return (unsigned)t < ULY_TOPO_COUNT ? n[t] : "?";
}

const char *uly_coll_model_name(uly_coll_model m)
{
    static const char *const n[] = {"hockney", "nccl"};
    return (unsigned)m < ULY_COLL_MODEL_COUNT ? n[m] : "?";
}

const char *uly_group_name(uly_group g)
{
    static const char *const n[] = {"none", "tp", "ulysses", "ring", "dp", "zero", "pp", "etp", "ep", "edp"};
    _Static_assert(sizeof n / sizeof n[0] == ULY_GROUP_COUNT, "one name per value");
    return (unsigned)g < ULY_GROUP_COUNT ? n[g] : "?";
}

const char *uly_coll_name(uly_coll c)
{
    static const char *const n[] = {"none", "alltoall", "allgather", "reduce_scatter", "allreduce", "sendrecv"};
    _Static_assert(sizeof n / sizeof n[0] == ULY_COLL_COUNT, "one name per value");
    return (unsigned)c < ULY_COLL_COUNT ? n[c] : "?";
}

void uly_attn_kernel_scale(uly_attn_kernel k, double *fwd, double *bwd, double *cap)
{
    /* the sources are in ulysim.h and docs/model.md */
    static const double s[ULY_AK_COUNT][3] = {
        [ULY_AK_FLASH2] = {1.0, 1.0, 1.0},
        [ULY_AK_FLASH3] = {1.5, 1.5, 0.75},
        [ULY_AK_TRITON] = {1.0 / 1.3, 1.0 / 1.3, 1.0},
        [ULY_AK_SDPA] = {298.0 / 405.0, 298.0 / 405.0, 1.0},
        [ULY_AK_CUDNN] = {1.0, 1.0, 1.0}, /* its own curves (uly_cudnn_attn_eff) */
    };
    const unsigned i = (unsigned)k < ULY_AK_COUNT ? (unsigned)k : 0;
    *fwd = s[i][0];
    *bwd = s[i][1];
    *cap = s[i][2];
}

int64_t uly_zero_prefetch_layers(const uly_workload *w)
{
    return w->zero_prefetch < 0 ? 0 : w->zero_prefetch == 0 ? 1 : w->zero_prefetch;
}

int uly_zero_gather_by_submodule(const uly_workload *w)
{
    return w->framework == ULY_FW_DEEPSPEED;
}

int uly_zero_copy_out(const uly_workload *w)
{
    return w->framework == ULY_FW_FSDP;
}

int uly_zero_gather_msgs(const uly_model *m, const uly_workload *w)
{
    return uly_zero_gather_by_submodule(w) ? 4 + (m->swiglu ? 3 : 2) : 1;
}

double uly_bucket_fraction(const uly_workload *w, const uly_plan *p)
{
    const double all = p->model_params_rank;
    if (!(all > 0)) return 1.0;
    double bucket;
    switch (w->framework) {
    case ULY_FW_MEGATRON: {
        /* megatron/core/distributed/distributed_data_parallel_config.py:
         * bucket_size = max(40000000, 1000000 x data-parallel size) */
        const double dp = (double)p->dims.zero_group;
        bucket = 1e6 * dp > 4e7 ? 1e6 * dp : 4e7;
        break;
    }
    case ULY_FW_FSDP: bucket = p->layer_params_rank; break; /* one unit: a layer's flat parameter */
    default: bucket = 5e8; /* deepspeed/runtime/zero/config.py: reduce_bucket_size */
    }
    return bucket < all ? bucket / all : 1.0;
}

int uly_grad_reduce_overlaps(const uly_workload *w)
{
    if (w->overlap_grad_reduce) return w->overlap_grad_reduce > 0;
    /* Megatron-LM's --overlap-grad-reduce is off unless given; DeepSpeed's
     * zero_optimization.overlap_comm defaults to false, except at stage 3
     * where it defaults to true; FSDP reduce-scatters in its post-backward
     * hooks on a separate stream */
    switch (w->framework) {
    case ULY_FW_MEGATRON: return 0;
    case ULY_FW_FSDP: return 1;
    default: return w->zero_stage >= 3;
    }
}

double uly_attn_density(const uly_workload *w) { return w->attn_density > 0 ? w->attn_density : 1.0; }

/* Megatron-LM's main-gradient buffer (megatron/core/distributed/
 * param_and_grad_buffer.py: grad_dtype = torch.float if grad_reduce_in_fp32
 * else param.dtype; megatron/training/arguments.py: under --bf16
 * accumulate_allreduce_grads_in_fp32 is forced on unless
 * --grad-reduce-in-bf16, under --fp16 it stays off unless
 * --accumulate-allreduce-grads-in-fp32 is given, and the 2021 code did the
 * same): fp32 or the parameters' precision */
int uly_megatron_grads_fp32(const uly_workload *w)
{
    if (w->grad_reduce_fp32) return w->grad_reduce_fp32 > 0;
    return w->dtype != ULY_FP16;
}

void uly_state_bytes_get(const uly_workload *w, uly_state_bytes *o)
{
    const double beta = uly_dtype_bytes(w->dtype), fp32 = w->dtype == ULY_FP32;
    const int z = w->zero_stage;
    const double adam = fp32 ? 8.0 : 12.0;
    /* each term: its bytes per parameter, and whether the stage shards it */
    double wb, gb, ob;
    int ws, gs, os;
    switch (w->framework) {
    case ULY_FW_MEGATRON:
        wb = beta, ws = 0;
        gb = uly_megatron_grads_fp32(w) ? 4.0 : beta, gs = 0;
        ob = adam, os = z >= 1;
        o->grad_wire = (int64_t)gb;
        break;
    case ULY_FW_FSDP:
        /* the fp32 flat parameter is the master copy, sharded with the rest;
         * half precision is gathered per unit (ZeRO-3's gathered layer) or,
         * under SHARD_GRAD_OP and NO_SHARD, kept whole beside it */
        wb = 4.0, ws = z >= 2;
        gb = 4.0, gs = z >= 2;
        ob = 8.0, os = z >= 2;
        o->grad_wire = (int64_t)beta;
        break;
    default:
        wb = beta, ws = z >= 3;
        gb = beta, gs = z >= 2;
        ob = adam, os = z >= 1;
        o->grad_wire = (int64_t)beta;
        break;
    }
    const double half = w->framework == ULY_FW_FSDP && !fp32 && z < 3 ? beta : 0.0; /* FSDP's kept half copy */
    o->weights_whole = (ws ? 0.0 : wb) + half, o->weights_shard = ws ? wb : 0.0;
    o->grads_whole = gs ? 0.0 : gb, o->grads_shard = gs ? gb : 0.0;
    o->optim_whole = os ? 0.0 : ob, o->optim_shard = os ? ob : 0.0;
}

double uly_shard_params(double params, double g)
{
    return g > 1 ? ceil(ceil(params) / g) : params;
}

const char *uly_exec_mode_name(uly_exec_mode m)
{
    static const char *const n[] = {"tokens", "ulysses-a2a", "allgather", "rsa", "tp-sp", "tp-allreduce"};
    _Static_assert(sizeof n / sizeof n[0] == ULY_EXEC_COUNT, "one name per value");
    return (unsigned)m < ULY_EXEC_COUNT ? n[m] : "?";
}

static const char *const op_type_names[ULY_OPT_COUNT] = {
#define ULY_OP_TYPE_NAME(e, n) [ULY_OPT_##e] = n,
    ULY_OP_TYPES(ULY_OP_TYPE_NAME)
#undef ULY_OP_TYPE_NAME
};

const char *uly_op_type_name(uly_op_type t)
{
    return (unsigned)t < ULY_OPT_COUNT ? op_type_names[t] : "?";
}

uly_op_type uly_op_type_find(const char *name) { return (uly_op_type)vocab_find(op_type_names, ULY_OPT_COUNT, name); }

const char *uly_mem_term_name(uly_mem_term t)
{
    static const char *const n[] = {"weights", "grads", "optimizer", "activations", "working",
                                    "scores", "comm_buffers", "zero3_gather", "logits", "reserved"};
    _Static_assert(sizeof n / sizeof n[0] == ULY_MEM_TERM_COUNT, "one name per value");
    return (unsigned)t < ULY_MEM_TERM_COUNT ? n[t] : "?";
}

void uly_layout_init(uly_layout *l, uly_strategy_id s, int64_t u, int64_t r, int64_t t, int64_t dp)
{
    l->strategy = s;
    l->ulysses = u;
    l->ring = r;
    l->tp = t;
    l->dp = dp;
    l->pp = 1;
    l->vpp = 1;
    l->pp_first = l->pp_last = l->pp_mid_most = 0;
    l->pp_embed = l->pp_loss = 0;
    l->ep = l->etp = 1;
    l->order[0] = ULY_GROUP_TP;
    l->order[1] = ULY_GROUP_ULYSSES;
    l->order[2] = ULY_GROUP_RING;
    l->order[3] = ULY_GROUP_DP;
}

int64_t uly_layout_gpus(const uly_layout *l)
{
    int64_t g = 1;
    if (__builtin_mul_overflow(l->ulysses, l->ring, &g) || __builtin_mul_overflow(g, l->tp, &g) ||
        __builtin_mul_overflow(g, l->dp, &g) || __builtin_mul_overflow(g, l->pp, &g))
        return -1;
    return g;
}

uly_status uly_fail(char *why, size_t n, const char *fmt, ...)
{
    if (why && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, n, fmt, ap);
        va_end(ap);
    }
    return ULY_EINVAL;
}
#define fail uly_fail

#define RANGE_I(obj, field, lo, hi)                                                                      \
    do {                                                                                                 \
        if ((obj)->field < (lo) || (obj)->field > (hi))                                                  \
            return fail(why, n, #field " = %lld: must be an integer in %lld..%lld", (long long)(obj)->field, \
                        (long long)(lo), (long long)(hi));                                               \
    } while (0)

#define RANGE_D(obj, field, lo, hi)                                                                    \
    do {                                                                                               \
        if (!isfinite((obj)->field) || (obj)->field < (lo) || (obj)->field > (hi))                     \
            return fail(why, n, #field " = %g: must be a number in %g..%g", (obj)->field, (double)(lo), \
                        (double)(hi));                                                                 \
    } while (0)

uly_status uly_model_check(const uly_model *m, char *why, size_t n)
{
    if (!m) return fail(why, n, "model is missing");
    RANGE_I(m, layers, 1, 100000);
    RANGE_I(m, hidden, 1, 1 << 20);
    RANGE_I(m, heads, 1, 1 << 14);
    RANGE_I(m, kv_heads, 1, m->heads);
    RANGE_I(m, head_dim, 1, 1 << 14);
    RANGE_I(m, ffn_hidden, 1, 1 << 22);
    RANGE_I(m, vocab, 1, 1 << 24);
    RANGE_I(m, bias, 0, 1);
    RANGE_I(m, qkv_bias, 0, 1);
    if (m->heads % m->kv_heads != 0)
        return fail(why, n, "kv_heads = %lld: must divide heads = %lld", (long long)m->kv_heads,
                    (long long)m->heads);
    const uly_status st = uly_moe_model_check(m, why, n);
    return st != ULY_OK ? st : uly_window_model_check(m, why, n);
}

/* field = v: one of a vocabulary's values, or a message naming them. */
static uly_status vocab_check(const char *field, int v, const char *const *names, int count, char *why, size_t n)
{
    char valid[160];
    if (v >= 0 && v < count) return ULY_OK;
    return fail(why, n, "%s = %d: must be %s", field, v, uly_names_join(names, count, ", ", " or ", valid, sizeof valid));
}

/* Recompute's details and activation offload, as Megatron-LM's
 * TransformerConfig checks them: modules only under selective, a method
 * and its layers only under full, offload not beside recompute. */
static uly_status recompute_check(const uly_workload *w, char *why, size_t n)
{
    RANGE_I(w, recompute_layers, 0, 1 << 20);
    RANGE_I(w, offload_layers, 0, 1 << 20);
    if (vocab_check("recompute_method", (int)w->recompute_method, rmethod_names, ULY_RMETHOD_COUNT, why, n))
        return ULY_EINVAL;
    if (w->recompute_modules & ~ULY_RMOD_DENSE) {
        int k = 0;
        while (!(w->recompute_modules & ~ULY_RMOD_DENSE & (1u << k))) k++;
        return fail(why, n, "recompute_modules: %s is a module of MoE or MLA models; ulysim prices dense ones "
                    "(core_attn, layernorm, mlp)", k < ULY_RMOD_COUNT ? rmod_names[k] : "?");
    }
    if (w->recompute_modules && w->recompute != ULY_RECOMPUTE_SELECTIVE)
        return fail(why, n, "recompute_modules: selective recompute's (recompute = %s)", recompute_names[w->recompute]);
    if (w->recompute_method != ULY_RMETHOD_EVERY && w->recompute != ULY_RECOMPUTE_FULL)
        return fail(why, n, "recompute_method = %s: full recompute's (recompute = %s)", rmethod_names[w->recompute_method],
                    recompute_names[w->recompute]);
    if ((w->recompute_method != ULY_RMETHOD_EVERY) != (w->recompute_layers > 0))
        return fail(why, n, "recompute_layers = %lld: the uniform and block methods take one, no other recompute does",
                    (long long)w->recompute_layers);
    if (w->offload_layers > 0 && w->recompute != ULY_RECOMPUTE_NONE)
        return fail(why, n, "offload_layers = %lld: activation offload works without recompute (recompute = %s), as "
                    "Megatron-LM's --cpu-offloading", (long long)w->offload_layers, recompute_names[w->recompute]);
    return ULY_OK;
}

uly_status uly_workload_check(const uly_workload *w, char *why, size_t n)
{
    if (!w) return fail(why, n, "workload is missing");
    RANGE_I(w, seq, 1, ULY_SEQ_MAX);
    RANGE_I(w, micro_batch, 1, 1 << 20);
    RANGE_I(w, global_batch, 0, (int64_t)1 << 40);
    if (vocab_check("dtype", (int)w->dtype, dtype_names, ULY_DTYPE_COUNT, why, n)) return ULY_EINVAL;
    if (vocab_check("recompute", (int)w->recompute, recompute_names, ULY_RECOMPUTE_COUNT, why, n)) return ULY_EINVAL;
    RANGE_I(w, zero_stage, 0, 3);
    if (vocab_check("split", (int)w->split, split_names, ULY_SPLIT_COUNT, why, n)) return ULY_EINVAL;
    if (!(w->attn_density >= 0 && w->attn_density <= 1))
        return fail(why, n, "attn_density = %g: must be a fraction in (0, 1]", w->attn_density);
    RANGE_I(w, ffn_chunks, 0, (int64_t)1 << 30);
    RANGE_I(w, zero_prefetch, -1, 1 << 20);
    RANGE_I(w, overlap_grad_reduce, -1, 1);
    RANGE_I(w, loss_chunks, 0, (int64_t)1 << 30);
    RANGE_I(w, cuda_graphs, 0, 1);
    RANGE_I(w, overlap_param_gather, 0, 1);
    RANGE_I(w, grad_reduce_fp32, -1, 1);
    RANGE_I(w, grad_accum_fusion, -1, 1);
    RANGE_I(w, pp_scatter_gather, 0, 1);
    RANGE_D(w, step_overhead_s, 0, 3600);
    if (vocab_check("attn_kernel", (int)w->attn_kernel, attn_kernel_names, ULY_AK_COUNT, why, n)) return ULY_EINVAL;
    if (vocab_check("framework", (int)w->framework, framework_names, ULY_FW_COUNT, why, n)) return ULY_EINVAL;
    if (vocab_check("ce_impl", (int)w->ce_impl, ce_impl_names, ULY_CE_COUNT, why, n)) return ULY_EINVAL;
    if (vocab_check("transformer_impl", (int)w->transformer_impl, transformer_impl_names, ULY_TI_COUNT, why, n))
        return ULY_EINVAL;
    if (uly_fp8_check(w, why, n)) return ULY_EINVAL;
    if (vocab_check("moe_dispatcher", (int)w->moe_dispatcher, moe_dispatcher_names, ULY_MOE_DISPATCHER_COUNT, why, n))
        return ULY_EINVAL;
    if (!(w->moe_capacity == 0 || (w->moe_capacity >= 0.01 && w->moe_capacity <= 1024)))
        return fail(why, n, "moe_capacity = %g: must be 0 (dropless) or a factor in 0.01..1024", w->moe_capacity);
    if (!(w->moe_imbalance == 0 || (w->moe_imbalance >= 1 && w->moe_imbalance <= 1024)))
        return fail(why, n, "moe_imbalance = %g: must be 1 (even routing) or more, at most 1024", w->moe_imbalance);
    if (w->framework == ULY_FW_MEGATRON && w->zero_stage > 1)
        return fail(why, n, "zero_stage = %d: the megatron framework shards the optimizer (zero 1, the distributed "
                    "optimizer) or nothing (zero 0)", w->zero_stage);
    if (w->grad_reduce_fp32 && w->framework != ULY_FW_MEGATRON)
        return fail(why, n, "grad_reduce_fp32 = %d: Megatron-LM's main gradients (framework megatron); framework %s "
                    "reduces gradients in its own precision", w->grad_reduce_fp32, framework_names[w->framework]);
    if (w->grad_accum_fusion && w->framework != ULY_FW_MEGATRON)
        return fail(why, n, "grad_accum_fusion = %d: Megatron-LM's main gradients (framework megatron); framework %s "
                    "accumulates gradients its own way", w->grad_accum_fusion, framework_names[w->framework]);
    if (w->pp_scatter_gather && w->framework != ULY_FW_MEGATRON)
        return fail(why, n, "pp_scatter_gather = %d: Megatron-LM's pipeline transfers (framework megatron); framework "
                    "%s sends stage outputs whole", w->pp_scatter_gather, framework_names[w->framework]);
    if (w->framework == ULY_FW_FSDP && w->zero_stage == 1)
        return fail(why, n, "zero_stage = 1: not an FSDP sharding; fsdp takes zero 0 (NO_SHARD), 2 (SHARD_GRAD_OP) or 3 "
                    "(FULL_SHARD)");
    return recompute_check(w, why, n);
}

static uly_status curve_check(const uly_curve *c, const char *name, char *why, size_t n)
{
    if (c->n < 0 || c->n > ULY_CURVE_MAX)
        return fail(why, n, "%s: %d points: must be 0..%d", name, c->n, ULY_CURVE_MAX);
    for (int i = 0; i < c->n; i++) {
        if (!(c->x[i] > 0) || !isfinite(c->x[i]) || (i > 0 && !(c->x[i] > c->x[i - 1])))
            return fail(why, n, "%s: x[%d] = %g: must be positive and increasing", name, i, c->x[i]);
        if (!(c->eff[i] > 0 && c->eff[i] <= 1))
            return fail(why, n, "%s: eff[%d] = %g: must be in (0, 1]", name, i, c->eff[i]);
    }
    return ULY_OK;
}

uly_status uly_cluster_check(const uly_cluster *c, char *why, size_t n)
{
    if (!c) return fail(why, n, "cluster is missing");
    const uly_gpu *g = &c->gpu;
    for (int t = 0; t < ULY_DTYPE_COUNT; t++)
        if (!isfinite(g->peak_flops[t]) || g->peak_flops[t] < 0 || (g->peak_flops[t] == 0 && t != ULY_FP8) ||
            g->peak_flops[t] > 1e18)
            return fail(why, n, "gpu peak %s = %g FLOP/s: must be in (0, 1e18]%s", uly_dtype_name((uly_dtype)t),
                        g->peak_flops[t], t == ULY_FP8 ? ", or 0 (no FP8 tensor cores)" : "");
    RANGE_D(g, hbm_bytes, 1e6, 1e15);
    RANGE_D(g, hbm_bw_Bps, 1e6, 1e15);
    RANGE_D(g, mem_eff, 0.01, 1.0);
    RANGE_D(g, reserved_bytes, 0, g->hbm_bytes);
    RANGE_D(g, act_fwd_s_per_elem, 0, 1e-3);
    RANGE_D(g, act_bwd_s_per_elem, 0, 1e-3);
    RANGE_D(g, attn_bwd_rel, 0, 4.0);
    RANGE_D(g, comm_slowdown, 0, 1.0);
    for (int k = 0; k < ULY_MB_COUNT; k++)
        if (!(g->mb_eff[k] >= 0 && g->mb_eff[k] <= 1.0))
            return fail(why, n, "gpu mb_eff.%s = %g: must be in [0, 1] (0: mem_eff)", uly_mb_class_name((uly_mb_class)k),
                        g->mb_eff[k]);
    RANGE_D(g, kernel_floor_s[0], 0, 1e-3);
    RANGE_D(g, kernel_floor_s[1], 0, 1e-3);
    uly_status s = curve_check(&g->gemm_eff, "gemm_eff", why, n);
    if (s) return s;
    RANGE_I(g, sm_count, 0, 1 << 20);
    if (g->sm_count > 0) {
        /* GEMMs by shape: the curve is not read */
        RANGE_D(g, gemm_peak_frac, 0.01, 1.0);
        RANGE_I(g, gemm_tile_m, 1, 1 << 16);
        RANGE_I(g, gemm_tile_n, 1, 1 << 16);
        RANGE_D(g, gemm_latency_s, 0, 1.0);
    } else if (g->gemm_eff.n == 0) {
        return fail(why, n, "gemm_eff: needs at least one point (or sm_count > 0, GEMMs priced by shape)");
    }
    RANGE_D(g, boost_clock_hz, 0, 1e11);
    RANGE_D(g, sustained_clock_hz, 0, 1e11);
    if (g->sustained_clock_hz > 0 && !(g->boost_clock_hz > 0))
        return fail(why, n, "sustained_clock_hz = %g: needs boost_clock_hz, the clock the peak is stated at",
                    g->sustained_clock_hz);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            if ((s = curve_check(&g->attn_eff[i][j], "attn_eff", why, n)) ||
                (s = curve_check(&g->attn_bwd_eff[i][j], "attn_bwd_eff", why, n)))
                return s;
    for (int i = 0; i < 2; i++)
        if ((s = curve_check(&g->act_eff[i], "act_eff", why, n))) return s;
    RANGE_I(c, nodes, 1, 1 << 20);
    RANGE_I(c, gpus_per_node, 1, 1 << 10);
    RANGE_D(c, intra_bw_Bps, c->gpus_per_node > 1 ? 1e6 : 0, 1e15);
    RANGE_D(c, intra_lat_s, 0, 1);
    RANGE_D(c, nic_bw_Bps, c->nodes > 1 ? 1e6 : 0, 1e15);
    RANGE_D(c, nic_lat_s, 0, 1);
    if ((unsigned)c->topo >= ULY_TOPO_COUNT) return fail(why, n, "topology = %d: must be fat-tree, rail or torus", c->topo);
    RANGE_D(c, oversub, 1, 1000);
    RANGE_D(c, overlap_miss, 0, 1.0);
    RANGE_D(c, host_launch_s, 0, 1e-2);
    for (int k = 0; k < 2; k++)
        if (!(c->overlap_slowdown[k] >= 0 && c->overlap_slowdown[k] <= 1.0))
            return fail(why, n, "overlap_slowdown.%s = %g: must be in [0, 1] (0: the GPU's comm_slowdown)",
                        k ? "inter" : "intra", c->overlap_slowdown[k]);
    RANGE_I(c, gpus_per_leaf, 1, (int64_t)1 << 30);
    if (c->topo == ULY_TOPO_TORUS) {
        RANGE_I(c, torus_k, 1, 1 << 16);
        RANGE_I(c, torus_dims, 1, 8);
        RANGE_D(c, torus_link_bw_Bps, 1e6, 1e15);
    }
    RANGE_I(c, nics_per_node, 0, 1 << 10);
    if ((unsigned)c->coll_model >= ULY_COLL_MODEL_COUNT)
        return fail(why, n, "coll_model = %d: must be hockney or nccl", c->coll_model);
    if (c->coll_model == ULY_COLL_NCCL) {
        RANGE_I(c, nccl_sm, 0, 1000);
        RANGE_I(c, nccl_algos, 0, ULY_NCCL_ALGO_ALL);
    }
    RANGE_I(c, pcie_per_switch, 0, c->gpus_per_node);
    if (c->pcie_per_switch > 0) {
        RANGE_D(c, pcie_uplink_bw_Bps, 1e6, 1e15);
        RANGE_D(c, socket_bw_Bps, 0, 1e15);
    }
    return ULY_OK;
}

uly_status uly_layout_check(const uly_layout *l, char *why, size_t n)
{
    if (!l) return fail(why, n, "layout is missing");
    if ((unsigned)l->strategy >= ULY_STRAT_COUNT) return fail(why, n, "strategy = %d: unknown", l->strategy);
    RANGE_I(l, ulysses, 1, 1 << 20);
    RANGE_I(l, ring, 1, 1 << 20);
    RANGE_I(l, tp, 1, 1 << 20);
    RANGE_I(l, dp, 1, 1 << 20);
    RANGE_I(l, pp, 1, 1 << 20);
    if (l->vpp < 0 || l->vpp > (1 << 20)) return fail(why, n, "vpp = %lld: must be 1..%d", (long long)l->vpp, 1 << 20);
    if (l->vpp > 1 && l->pp <= 1)
        return fail(why, n, "vpp = %lld: virtual stages need a pipeline (pp > 1)", (long long)l->vpp);
    if (l->pp_first < 0 || l->pp_last < 0 || l->pp_embed > 1 || l->pp_loss > 1)
        return fail(why, n, "pp_first = %d, pp_last = %d, pp_embed = %d, pp_loss = %d: layers 0 or more, flags 0 or 1",
                    (int)l->pp_first, (int)l->pp_last, (int)l->pp_embed, (int)l->pp_loss);
    if ((l->pp_first || l->pp_last || l->pp_embed || l->pp_loss) && l->pp <= 1)
        return fail(why, n, "an uneven pipeline split needs a pipeline (pp > 1)");
    if (l->pp_mid_most < 0 || (l->pp_mid_most > 0 && (l->pp <= 2 || l->pp_first < 1 || l->pp_last < 1 || l->pp_embed ||
                                                      l->pp_loss)))
        return fail(why, n, "pp_mid_most = %d: a layout's middle stages (pp > 2) beside its first and last stages' "
                    "layers (pp_first, pp_last >= 1), without pp_embed or pp_loss", (int)l->pp_mid_most);
    if (l->ep < 0 || l->ep > (1 << 20) || l->etp < 0 || l->etp > (1 << 20))
        return fail(why, n, "ep = %d, etp = %d: must be 1..%d", (int)l->ep, (int)l->etp, 1 << 20);
    if (uly_layout_gpus(l) < 1 || uly_layout_gpus(l) > ((int64_t)1 << 24))
        return fail(why, n, "ulysses x ring x tp x dp x pp: must be 1..%lld GPUs", (long long)1 << 24);
    const uly_strategy *s = uly_strategy_get(l->strategy);
    if (!s->uses_ulysses && l->ulysses != 1)
        return fail(why, n, "ulysses = %lld: strategy %s has no Ulysses degree; use 1", (long long)l->ulysses, s->name);
    if (!s->uses_ring && l->ring != 1)
        return fail(why, n, "ring = %lld: strategy %s has no ring degree; use 1", (long long)l->ring, s->name);
    if (!s->uses_tp && l->tp != 1)
        return fail(why, n, "tp = %lld: strategy %s has no tensor-parallel degree; use 1", (long long)l->tp, s->name);
    int seen = 0;
    for (int i = 0; i < 4; i++) {
        if (l->order[i] < ULY_GROUP_TP || l->order[i] > ULY_GROUP_DP || (seen & (1 << l->order[i])))
            return fail(why, n, "order: must be a permutation of tp, ulysses, ring, dp");
        seen |= 1 << l->order[i];
    }
    return ULY_OK;
}
