/* fuzz_eval.c: libFuzzer target for plan evaluation (uly_evaluate, the
 * search's re-placement path, and on small spaces uly_search_best). The
 * bytes decode into a model, workload, cluster and layout that pass the
 * library's validators (uly_*_check; inputs they reject are dropped), drawn
 * over wide ranges with the extremes the validators accept. Properties:
 *   - the status is one of uly_status's values;
 * when it is ULY_OK and the result was priced (no fatal shape reason):
 *   - every op's time and exposed time are finite, >= 0, exposed <= time;
 *   - every timing field is finite and >= 0; step_s > 0; tokens_per_s > 0;
 *     step_s = slots (stage_layers (fwd + bwd) + model_s) + step_fixed_s
 *     (ulysim.h states it); micro_steps >= 1, slots >= micro_steps;
 *   - hfu <= 1: every efficiency the validator accepts is <= 1 and the
 *     attention kernels' scales are capped at 1, so each compute op runs at
 *     most at peak, but for one knob: attn_bwd_rel (<= 4) multiplies flash
 *     backward's efficiency (schedule.c, compute_time), so with it above 1
 *     the bound is attn_bwd_rel;
 *   - model FLOPs <= hardware FLOPs (so mfu <= hfu);
 *   - byte totals >= 0, the recompute part <= the backward total;
 *   - memory terms finite and >= 0, the total their sum, fits = total <=
 *     capacity, largest the largest term;
 *   - feasible implies mem.fits; infeasible implies a fatal reason;
 *   - priced agrees with uly_result_priced;
 *   - uly_plan_price of the built plan gives uly_evaluate's price;
 *   - memory does not fall when the micro-batch grows by one (global batch
 *     0) or the sequence doubles (the max-batch and max-seq searches'
 *     bisections rely on it);
 * and always:
 *   - the same inputs evaluated twice give bit-identical results;
 *   - uly_evaluate_keep + uly_evaluate_reordered to another rank order give
 *     what a fresh uly_evaluate of that order gives (the search's path);
 *   - a feasible layout in uly_search_best's space bounds its best's
 *     tokens/s; a search's best satisfies the checks above.
 * Unpriced results (fatal shape reasons) must read as zero timing/memory.
 * FUZZ_EVAL_DUMP=1 prints each decoded spec before it is evaluated (for a
 * crash inside the library); FUZZ_EVAL_STATS=1 prints at exit how many
 * inputs were valid, priced and feasible. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h" /* uly_evaluate_keep, uly_evaluate_reordered: the search's path */
#include "ulysim.h"

/* ------------------------------------------------------------- the bytes */

typedef struct rd {
    const uint8_t *p;
    size_t n;
} rd;

static uint64_t rd_bits(rd *r, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) {
        v <<= 8;
        if (r->n) {
            v |= *r->p++;
            r->n--;
        }
    }
    return v;
}
static unsigned u8(rd *r) { return (unsigned)rd_bits(r, 1); }
/* 0..n-1 */
static int64_t pick(rd *r, int64_t n) { return n <= 1 ? 0 : (int64_t)(rd_bits(r, n > 256 ? (n > 65536 ? 4 : 2) : 1) % (uint64_t)n); }
/* a fraction in [0, 1] */
static double frac01(rd *r) { return (double)rd_bits(r, 2) / 65535.0; }

/* an integer in lo..hi, log-uniform-ish, with the ends and powers of two
 * favoured */
static int64_t ilog(rd *r, int64_t lo, int64_t hi)
{
    if (hi <= lo) return lo;
    const unsigned sel = u8(r);
    switch (sel & 7) {
    case 0: return lo;
    case 1: return hi;
    case 2:
    case 3: { /* a power of two in range */
        int64_t p = 1;
        while (p < lo) p <<= 1;
        if (p > hi) return lo;
        int k = 0;
        for (int64_t q = p; q <= hi / 2; q <<= 1) k++;
        return p << pick(r, k + 1);
    }
    default: {
        /* log-uniform: a random bit length, then random low bits */
        const double l0 = log2((double)(lo > 1 ? lo : 1)), l1 = log2((double)hi);
        const double e = l0 + (l1 - l0) * frac01(r);
        int64_t v = (int64_t)llround(exp2(e));
        v += (int64_t)(u8(r) % 3) - 1;
        if (v < lo) v = lo;
        if (v > hi) v = hi;
        return v;
    }
    }
}

/* a double in [lo, hi], log-uniform (lo > 0), with the ends favoured */
static double dlog(rd *r, double lo, double hi)
{
    const unsigned sel = u8(r) & 7;
    if (sel == 0) return lo;
    if (sel == 1) return hi;
    const double e = log(lo) + (log(hi) - log(lo)) * frac01(r);
    double v = exp(e);
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    return v;
}

/* a double in [0, hi] with 0 and hi favoured */
static double dlin(rd *r, double hi)
{
    const unsigned sel = u8(r) & 7;
    if (sel == 0) return 0;
    if (sel == 1) return hi;
    return hi * frac01(r);
}

/* an efficiency in (0, 1] */
static double eff(rd *r)
{
    const unsigned sel = u8(r) & 7;
    if (sel == 0) return 1.0;
    if (sel == 1) return 1e-6;
    const double e = (double)(rd_bits(r, 2) + 1) / 65536.0;
    return e;
}

static void curve(rd *r, uly_curve *c, int min_n)
{
    memset(c, 0, sizeof *c);
    c->n = min_n + (int)pick(r, ULY_CURVE_MAX + 1 - min_n);
    double x = dlog(r, 1e-3, 1e6);
    for (int i = 0; i < c->n; i++) {
        c->x[i] = x;
        c->eff[i] = eff(r);
        x *= 1.0 + dlog(r, 1e-6, 64.0); /* strictly increasing */
    }
}

/* ------------------------------------------------------------ the decode */

static int64_t gcd(int64_t a, int64_t b)
{
    while (b) {
        const int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static void decode_model(rd *r, uly_model *m)
{
    memset(m, 0, sizeof *m);
    strcpy(m->name, "fuzz");
    m->layers = ilog(r, 1, 100000);
    m->heads = ilog(r, 1, 1 << 14);
    m->head_dim = ilog(r, 1, (1 << 20) / m->heads < (1 << 14) ? (1 << 20) / m->heads : (1 << 14));
    m->hidden = m->heads * m->head_dim;
    /* a divisor of the heads: gcd with a drawn number, or MHA / MQA */
    switch (u8(r) & 3) {
    case 0: m->kv_heads = m->heads; break;
    case 1: m->kv_heads = 1; break;
    default: m->kv_heads = gcd(m->heads, ilog(r, 1, 1 << 14)); break;
    }
    m->ffn_hidden = (u8(r) & 1) ? ilog(r, 1, 1 << 22) : (m->hidden * 4 <= (1 << 22) ? m->hidden * 4 : 1 << 22);
    m->vocab = ilog(r, 1, 1 << 24);
    const unsigned f = u8(r);
    m->swiglu = f & 1;
    m->tied_embeddings = (f >> 1) & 1;
    m->dropout = (f >> 2) & 1;
    m->embed_norm = (f >> 3) & 1;
    m->bias = (f >> 4) & 1;
    m->qkv_bias = (f >> 5) & 1;
}

static void decode_layout(rd *r, uly_layout *l)
{
    memset(l, 0, sizeof *l);
    const uly_strategy_id s = (uly_strategy_id)pick(r, ULY_STRAT_COUNT);
    const uly_strategy *st = uly_strategy_get(s);
    /* mostly powers of two (they divide heads and sequences), some odd */
    const int64_t u = st->uses_ulysses ? ilog(r, 1, 1 << 20) : 1;
    const int64_t ring = st->uses_ring ? ilog(r, 1, 1 << 20) : 1;
    const int64_t t = st->uses_tp ? ilog(r, 1, 1 << 20) : 1;
    const int64_t dp = ilog(r, 1, 1 << 20);
    uly_layout_init(l, s, u, ring, t, dp);
    l->pp = (u8(r) & 3) ? 1 : ilog(r, 1, 1 << 20);
    l->vpp = l->pp > 1 && (u8(r) & 1) ? ilog(r, 0, 64) : (u8(r) & 1);
    /* a permutation of the four groups */
    uly_group g[4] = {ULY_GROUP_TP, ULY_GROUP_ULYSSES, ULY_GROUP_RING, ULY_GROUP_DP};
    if (u8(r) & 1)
        for (int i = 3; i > 0; i--) {
            const int j = (int)pick(r, i + 1);
            const uly_group x = g[i];
            g[i] = g[j];
            g[j] = x;
        }
    memcpy(l->order, g, sizeof g);
}

static void decode_workload(rd *r, uly_workload *w, const uly_layout *l)
{
    memset(w, 0, sizeof *w);
    /* sequences: a multiple of the degrees' product times a power of two
     * (mostly: the shapes then split), else anything in range */
    const unsigned how = u8(r) & 3;
    if (how == 0) {
        w->seq = ilog(r, 1, (int64_t)1 << 40);
    } else {
        int64_t g = 2 * l->ulysses * l->ring * l->tp;
        if (g < 1 || g > ((int64_t)1 << 40)) g = 1;
        int64_t k = ilog(r, 1, ((int64_t)1 << 40) / g);
        w->seq = g * k;
    }
    w->micro_batch = ilog(r, 1, 1 << 20);
    switch (u8(r) & 3) {
    case 0: w->global_batch = 0; break;
    case 1: w->global_batch = ilog(r, 0, (int64_t)1 << 40); break;
    default: {
        int64_t per = w->micro_batch * l->dp, k = ilog(r, 1, 1 << 12);
        w->global_batch = per <= (((int64_t)1 << 40) / k) ? per * k : 0;
        break;
    }
    }
    w->dtype = (uly_dtype)pick(r, ULY_DTYPE_COUNT);
    const unsigned f = u8(r);
    w->causal = f & 1;
    w->flash = (f >> 1) & 1 ? 1 : (f >> 2) & 1; /* mostly flash */
    w->split = (f >> 3) & 1 ? ULY_SPLIT_CONTIGUOUS : ULY_SPLIT_ZIGZAG;
    w->tp_comm_overlap = (f >> 4) & 1;
    w->recompute = (uly_recompute)pick(r, 3);
    w->framework = (uly_framework)pick(r, ULY_FW_COUNT);
    w->zero_stage = (int)pick(r, 4);
    if (w->framework == ULY_FW_MEGATRON && w->zero_stage > 1) w->zero_stage = 1;
    if (w->framework == ULY_FW_FSDP && w->zero_stage == 1) w->zero_stage = 3;
    switch (u8(r) & 3) {
    case 0: w->attn_density = 0; break;
    case 1: w->attn_density = 1; break;
    default: w->attn_density = frac01(r); break;
    }
    w->ffn_chunks = (u8(r) & 3) ? 0 : ilog(r, 0, (int64_t)1 << 30);
    w->loss_chunks = (u8(r) & 3) ? 0 : ilog(r, 0, (int64_t)1 << 30);
    w->zero_prefetch = (int)ilog(r, 0, (1 << 20) + 1) - 1;
    w->attn_kernel = (uly_attn_kernel)pick(r, ULY_AK_COUNT);
    w->overlap_grad_reduce = (int)pick(r, 3) - 1;
    w->transformer_impl = (uly_transformer_impl)pick(r, ULY_TI_COUNT);
    if (w->framework == ULY_FW_MEGATRON) w->grad_accum_fusion = (int)pick(r, 3) - 1;
    if (w->framework == ULY_FW_MEGATRON) w->pp_scatter_gather = (int)pick(r, 2);
}

static void decode_cluster(rd *r, uly_cluster *c, const uly_layout *l)
{
    memset(c, 0, sizeof *c);
    strcpy(c->name, "fuzz");
    uly_gpu *g = &c->gpu;
    strcpy(g->name, "fuzz");
    for (int t = 0; t < ULY_DTYPE_COUNT; t++) g->peak_flops[t] = dlog(r, 1e6, 1e18);
    g->hbm_bytes = dlog(r, 1e6, 1e15);
    g->hbm_bw_Bps = dlog(r, 1e6, 1e15);
    g->mem_eff = dlog(r, 0.01, 1.0);
    g->reserved_bytes = (u8(r) & 1) ? 0 : dlin(r, g->hbm_bytes);
    g->act_fwd_s_per_elem = (u8(r) & 3) ? 0 : dlin(r, 1e-3);
    g->act_bwd_s_per_elem = (u8(r) & 3) ? 0 : dlin(r, 1e-3);
    g->attn_bwd_rel = (u8(r) & 3) ? 0 : dlin(r, 4.0);
    g->comm_slowdown = (u8(r) & 1) ? 0 : dlin(r, 1.0);
    curve(r, &g->gemm_eff, 1);
    const unsigned cf = u8(r);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            if (cf & 1) curve(r, &g->attn_eff[i][j], 0);
            if (cf & 2) curve(r, &g->attn_bwd_eff[i][j], 0);
        }
    if (cf & 4)
        for (int i = 0; i < 2; i++) curve(r, &g->act_eff[i], 0);

    /* the fabric: mostly big enough for the layout, whole nodes */
    c->gpus_per_node = ilog(r, 1, 1 << 10);
    const int64_t gpus = uly_layout_gpus(l);
    if ((u8(r) & 3) && gpus > 0) {
        int64_t nodes = (gpus + c->gpus_per_node - 1) / c->gpus_per_node;
        c->nodes = nodes < 1 ? 1 : nodes > (1 << 20) ? (1 << 20) : nodes;
    } else {
        c->nodes = ilog(r, 1, 1 << 20);
    }
    c->intra_bw_Bps = dlog(r, 1e6, 1e15);
    if (c->gpus_per_node == 1 && !(u8(r) & 3)) c->intra_bw_Bps = 0;
    c->intra_lat_s = dlin(r, 1e-3) * ((u8(r) & 7) ? 1 : 1000);
    c->intra_switched = u8(r) & 1;
    c->nic_bw_Bps = dlog(r, 1e6, 1e15);
    if (c->nodes == 1 && !(u8(r) & 3)) c->nic_bw_Bps = 0;
    c->nic_lat_s = dlin(r, 1e-3) * ((u8(r) & 7) ? 1 : 1000);
    c->topo = (uly_topo)pick(r, ULY_TOPO_COUNT);
    c->oversub = dlog(r, 1, 1000);
    c->gpus_per_leaf = ilog(r, 1, (int64_t)1 << 30);
    c->overlap_miss = dlin(r, 1.0);
    if (c->topo == ULY_TOPO_TORUS) {
        c->torus_k = ilog(r, 1, 1 << 16);
        c->torus_dims = ilog(r, 1, 8);
        c->torus_link_bw_Bps = dlog(r, 1e6, 1e15);
    }
    if (!(u8(r) & 3)) {
        c->pcie_per_switch = ilog(r, 1, c->gpus_per_node);
        c->pcie_uplink_bw_Bps = dlog(r, 1e6, 1e15);
        c->socket_bw_Bps = dlin(r, 1e12);
        c->pcie_p2p = u8(r) & 1;
    }
    /* collectives priced by NCCL's model half the time, every architecture,
     * NIC count, in-network reduction and algorithm mask */
    if (u8(r) & 1) {
        static const int32_t sms[] = {0, 60, 70, 80, 89, 90, 100};
        c->coll_model = ULY_COLL_NCCL;
        c->nccl_sm = sms[pick(r, 7)];
        c->host_cpu_amd = u8(r) & 1;
        c->intra_nvls = u8(r) & 1;
        c->inter_sharp = u8(r) & 1;
        c->nics_per_node = (u8(r) & 1) ? ilog(r, 1, 1 << 10) : 0;
        c->nccl_algos = (int32_t)pick(r, ULY_NCCL_ALGO_ALL + 1);
    }
}

/* ------------------------------------------------------------ the checks */

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "fuzz_eval: invariant failed: %s (line %d)\n", #cond, __LINE__);    \
            dump(m, w, c, l, res);                                                             \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

static void dump(const uly_model *m, const uly_workload *w, const uly_cluster *c, const uly_layout *l,
                 const uly_result *res)
{
    fprintf(stderr,
            "model: layers=%lld hidden=%lld heads=%lld kv=%lld d=%lld ffn=%lld vocab=%lld swiglu=%d tied=%d "
            "dropout=%d embed_norm=%d bias=%d qkv_bias=%d\n",
            (long long)m->layers, (long long)m->hidden, (long long)m->heads, (long long)m->kv_heads,
            (long long)m->head_dim, (long long)m->ffn_hidden, (long long)m->vocab, m->swiglu, m->tied_embeddings,
            m->dropout, m->embed_norm, m->bias, m->qkv_bias);
    fprintf(stderr,
            "workload: seq=%lld b=%lld gb=%lld dtype=%s causal=%d flash=%d recompute=%d zero=%d split=%d fw=%s "
            "density=%g ffn_chunks=%lld loss_chunks=%lld tp_overlap=%d prefetch=%d kernel=%s ogr=%d impl=%s accum=%d pp_sg=%d\n",
            (long long)w->seq, (long long)w->micro_batch, (long long)w->global_batch, uly_dtype_name(w->dtype),
            w->causal, w->flash, w->recompute, w->zero_stage, w->split, uly_framework_name(w->framework),
            w->attn_density, (long long)w->ffn_chunks, (long long)w->loss_chunks, w->tp_comm_overlap,
            w->zero_prefetch, uly_attn_kernel_name(w->attn_kernel), w->overlap_grad_reduce,
            uly_transformer_impl_name(w->transformer_impl), w->grad_accum_fusion, w->pp_scatter_gather);
    const uly_gpu *g = &c->gpu;
    fprintf(stderr,
            "gpu: peak=%g/%g/%g hbm=%g bw=%g mem_eff=%g reserved=%g act=%g/%g attn_bwd_rel=%g slowdown=%g\n",
            g->peak_flops[0], g->peak_flops[1], g->peak_flops[2], g->hbm_bytes, g->hbm_bw_Bps, g->mem_eff,
            g->reserved_bytes, g->act_fwd_s_per_elem, g->act_bwd_s_per_elem, g->attn_bwd_rel, g->comm_slowdown);
    fprintf(stderr, "gemm_eff:");
    for (int i = 0; i < g->gemm_eff.n; i++) fprintf(stderr, " (%g, %g)", g->gemm_eff.x[i], g->gemm_eff.eff[i]);
    fprintf(stderr, "\nattn_eff n: %d %d %d %d; attn_bwd_eff n: %d %d %d %d; act_eff n: %d %d\n", g->attn_eff[0][0].n,
            g->attn_eff[0][1].n, g->attn_eff[1][0].n, g->attn_eff[1][1].n, g->attn_bwd_eff[0][0].n,
            g->attn_bwd_eff[0][1].n, g->attn_bwd_eff[1][0].n, g->attn_bwd_eff[1][1].n, g->act_eff[0].n,
            g->act_eff[1].n);
    fprintf(stderr,
            "cluster: nodes=%lld gpn=%lld intra=%g/%g switched=%d nic=%g/%g topo=%s oversub=%g leaf=%lld miss=%g "
            "torus=%lld/%lld/%g pcie=%lld/%g/%g/%d\n",
            (long long)c->nodes, (long long)c->gpus_per_node, c->intra_bw_Bps, c->intra_lat_s, c->intra_switched,
            c->nic_bw_Bps, c->nic_lat_s, uly_topo_name(c->topo), c->oversub, (long long)c->gpus_per_leaf,
            c->overlap_miss, (long long)c->torus_k, (long long)c->torus_dims, c->torus_link_bw_Bps,
            (long long)c->pcie_per_switch, c->pcie_uplink_bw_Bps, c->socket_bw_Bps, c->pcie_p2p);
    fprintf(stderr, "collectives: %s sm=%d amd=%d nvls=%d sharp=%d nics=%lld algos=%d\n", uly_coll_model_name(c->coll_model),
            c->nccl_sm, c->host_cpu_amd, c->intra_nvls, c->inter_sharp, (long long)c->nics_per_node, c->nccl_algos);
    fprintf(stderr, "layout: %s u=%lld r=%lld t=%lld dp=%lld pp=%lld vpp=%lld order=%s,%s,%s,%s\n",
            uly_strategy_get(l->strategy)->name, (long long)l->ulysses, (long long)l->ring, (long long)l->tp,
            (long long)l->dp, (long long)l->pp, (long long)l->vpp, uly_group_name(l->order[0]),
            uly_group_name(l->order[1]), uly_group_name(l->order[2]), uly_group_name(l->order[3]));
    if (!res) return;
    const uly_timing *t = &res->time;
    fprintf(stderr,
            "result: feasible=%d reasons=%d step=%g tok/s=%g fwd=%g bwd=%g compute=%g exposed=%g overlapped=%g "
            "model=%g fixed=%g micro=%lld slots=%g bubble=%g hfu=%g mfu=%g zg=%g/%g mem=%g/%g fits=%d\n",
            res->feasible, res->n_reasons, t->step_s, t->tokens_per_s, t->layer_fwd_s, t->layer_bwd_s, t->compute_s,
            t->comm_exposed_s, t->comm_overlapped_s, t->model_s, t->step_fixed_s, (long long)t->micro_steps, t->slots,
            t->pp_bubble, t->hfu, t->mfu, t->zero_gather_s, t->zero_gather_exposed_s, res->mem.total_bytes,
            res->mem.capacity_bytes, res->mem.fits);
    for (int i = 0; i < res->n_reasons; i++)
        fprintf(stderr, "  reason %d fatal=%d v=%g %g %g\n", res->reasons[i].code, res->reasons[i].fatal,
                res->reasons[i].v[0], res->reasons[i].v[1], res->reasons[i].v[2]);
}

static void dump_ops(const uly_plan *p, const uly_result *res)
{
    for (int i = 0; i < p->n_ops && i < ULY_PLAN_MAX_OPS; i++) {
        const uly_op *o = &p->ops[i];
        fprintf(stderr, "  op %2d %-16s ph=%d kind=%d ov=%d steps=%d bytes=%lld flops=%g t=%g ex=%g\n", i,
                uly_op_type_name(o->type), o->phase, o->kind, o->overlaps, o->steps, (long long)o->bytes_sent,
                o->flops, res->op_time_s[i], res->op_exposed_s[i]);
    }
}

static int fin_nonneg(double x) { return isfinite(x) && x >= 0; }

static int shapes_fatal(const uly_result *res)
{
    for (int i = 0; i < res->n_reasons; i++)
        if (res->reasons[i].fatal && res->reasons[i].code != ULY_R_OUT_OF_MEMORY) return 1;
    return 0;
}

static int any_fatal(const uly_result *res)
{
    for (int i = 0; i < res->n_reasons; i++)
        if (res->reasons[i].fatal) return 1;
    return 0;
}

static void check_result(const uly_model *m, const uly_workload *w, const uly_cluster *c, const uly_layout *l,
                         const uly_plan *plan, uly_status st, const uly_result *res)
{
    CHECK(st == ULY_OK || st == ULY_EINVAL || st == ULY_EOVERFLOW || st == ULY_ENOSPACE);
    if (st != ULY_OK) return;
    CHECK(res->n_reasons >= 0 && res->n_reasons <= ULY_MAX_REASONS);
    for (int i = 0; i < res->n_reasons; i++)
        CHECK((unsigned)res->reasons[i].code < ULY_R_CODE_COUNT && res->reasons[i].code != ULY_R_NONE);
    const uly_timing *t = &res->time;
    if (shapes_fatal(res)) {
        /* not priced: timing and memory read as zero */
        CHECK(!res->feasible);
        CHECK(t->step_s == 0 && t->tokens_per_s == 0 && res->mem.total_bytes == 0);
        CHECK(!uly_result_priced(res));
        return;
    }
    CHECK(uly_result_priced(res));
    CHECK(plan->n_ops > 0 && plan->n_ops <= ULY_PLAN_MAX_OPS);
    int bad_op = -1;
    for (int i = 0; i < plan->n_ops; i++) {
        const double ti = res->op_time_s[i], ex = res->op_exposed_s[i];
        if (!fin_nonneg(ti) || !fin_nonneg(ex) || !(ex <= ti * (1 + 1e-9) + 1e-300)) {
            bad_op = i;
            break;
        }
    }
    if (bad_op >= 0) dump_ops(plan, res);
    CHECK(bad_op < 0);
    const double tf[] = {t->layer_fwd_s, t->layer_bwd_s, t->compute_s, t->comm_exposed_s, t->comm_overlapped_s,
                         t->model_s, t->step_fixed_s, t->step_s, t->pp_bubble, t->slots, t->tokens_per_s,
                         t->model_flops, t->hw_flops, t->tflops_per_gpu, t->mfu, t->hfu, t->zero_gather_s,
                         t->zero_gather_exposed_s};
    for (size_t i = 0; i < sizeof tf / sizeof tf[0]; i++) {
        if (!fin_nonneg(tf[i])) fprintf(stderr, "timing field %zu = %g\n", i, tf[i]);
        CHECK(fin_nonneg(tf[i]));
    }
    CHECK(t->step_s > 0);
    CHECK(t->tokens_per_s > 0);
    CHECK(t->micro_steps >= 1);
    CHECK(t->slots >= (double)t->micro_steps);
    CHECK(t->pp_bubble < 1);
    if (!plan->pp_staged) {
        /* the identity ulysim.h states for step_s (an uneven split is paced
         * by its heaviest stage's own layers and end ops instead) */
        const double want =
            t->slots * ((double)t->stage_layers * (t->layer_fwd_s + t->layer_bwd_s) + t->model_s) + t->step_fixed_s;
        CHECK(fabs(want - t->step_s) <= 1e-9 * t->step_s);
    } else {
        /* at least the heaviest stage's layers for every micro-batch */
        CHECK(t->step_s >= (double)t->micro_steps * (double)t->stage_layers * (t->layer_fwd_s + t->layer_bwd_s) *
                               (1 - 1e-9));
    }
    /* hfu: every op runs at most at peak but flash backward, scaled by
     * attn_bwd_rel when that is above 1 */
    {
        const double rel = c->gpu.attn_bwd_rel > 1 ? c->gpu.attn_bwd_rel : 1.0;
        CHECK(t->hfu <= rel * (1 + 1e-9));
    }
    /* model FLOPs (no recompute, causal halved, 2x backward) never exceed
     * the hardware FLOPs (recompute, 2.5x flash backward, whole masked
     * score blocks, replicated KV heads) */
    CHECK(t->model_flops <= t->hw_flops * (1 + 1e-9));
    CHECK(res->comm_fwd_bytes >= 0 && res->comm_bwd_bytes >= 0 && res->comm_recompute_bytes >= 0 &&
          res->zero_bytes >= 0);
    CHECK(res->comm_recompute_bytes <= res->comm_bwd_bytes);
    const uly_memory *mm = &res->mem;
    double sum = 0;
    int largest = 0;
    for (int i = 0; i < ULY_MEM_TERM_COUNT; i++) {
        CHECK(fin_nonneg(mm->term_bytes[i]));
        sum += mm->term_bytes[i];
        if (mm->term_bytes[i] > mm->term_bytes[largest]) largest = i;
    }
    CHECK(fin_nonneg(mm->total_bytes) && mm->total_bytes > 0);
    CHECK(fabs(sum - mm->total_bytes) <= 1e-9 * mm->total_bytes);
    CHECK(mm->largest == largest);
    CHECK(mm->capacity_bytes == c->gpu.hbm_bytes);
    CHECK(mm->fits == (mm->total_bytes <= mm->capacity_bytes));
    CHECK(!res->feasible || mm->fits);
    CHECK(!res->feasible || !any_fatal(res));
    CHECK(res->feasible || any_fatal(res));
}

/* FUZZ_EVAL_STATS=1: how many inputs reached each stage, at exit */
static unsigned long n_in, n_valid, n_ok, n_priced, n_feasible, n_search;
static void stats_print(void)
{
    fprintf(stderr, "fuzz_eval: %lu inputs, %lu valid, %lu ok, %lu priced, %lu feasible, %lu searches\n", n_in, n_valid,
            n_ok, n_priced, n_feasible, n_search);
}

static uly_plan plan1, plan2;
static uly_result res1, res2;

/* The memory oracle of an evaluation that priced */
static void memory_grows(const uly_model *m, const uly_workload *w, const uly_cluster *c, const uly_layout *l,
                         const uly_result *res1)
{
    /* memory grows with the micro-batch (at one micro-batch per step:
     * uly_search_max_batch's doubling and bisection rely on it) and
     * with the sequence (uly_search_max_seq's); a doubled sequence
     * keeps every divisibility the plan had */
    uly_result r5;
    uly_workload w5 = *w;
    if (w->global_batch == 0 && w->micro_batch < (1 << 20)) {
        w5.micro_batch = w->micro_batch + 1;
        if (uly_evaluate(m, &w5, c, l, &plan2, &r5) == ULY_OK && !shapes_fatal(&r5) &&
            !(r5.mem.total_bytes >= res1->mem.total_bytes)) {
            fprintf(stderr, "fuzz_eval: memory %.17g at micro-batch %lld, %.17g at %lld\n", res1->mem.total_bytes,
                    (long long)w->micro_batch, r5.mem.total_bytes, (long long)w5.micro_batch);
            dump(m, w, c, l, res1);
            abort();
        }
    }
    w5 = *w;
    if (w->seq <= ((int64_t)1 << 39)) {
        w5.seq = 2 * w->seq;
        if (uly_evaluate(m, &w5, c, l, &plan2, &r5) == ULY_OK && !shapes_fatal(&r5) &&
            !(r5.mem.total_bytes >= res1->mem.total_bytes)) {
            fprintf(stderr, "fuzz_eval: memory %.17g at sequence %lld, %.17g at %lld\n", res1->mem.total_bytes,
                    (long long)w->seq, r5.mem.total_bytes, (long long)w5.seq);
            dump(m, w, c, l, res1);
            dump(m, &w5, c, l, &r5);
            abort();
        }
    }
}

/* The search oracles, on some inputs (mode): a search over the evaluated
 * layout's GPUs finds at least its throughput; a search over a small space
 * returns what any evaluation must */
static void search_oracles(const uly_model *m, const uly_workload *w, const uly_cluster *c, const uly_layout *l,
                           const uly_result *res1, uly_status st, unsigned mode)
{
    /* sometimes the search over the evaluated layout's GPUs: a feasible
     * layout in its space (default rank order, no pipeline, the same
     * micro-batch) bounds the best it returns */
    const int64_t gpus_l = uly_layout_gpus(l);
    if ((mode & 7) == 6 && st == ULY_OK && res1->feasible && l->pp == 1 && gpus_l <= 4096 &&
        l->order[0] == ULY_GROUP_TP && l->order[1] == ULY_GROUP_ULYSSES && l->order[2] == ULY_GROUP_RING) {
        n_search++;
        uly_result best;
        uly_search_opts o;
        memset(&o, 0, sizeof o);
        const uly_status ss = uly_search_best(m, w, c, gpus_l, l->strategy, &o, &best, NULL);
        if (ss != ULY_OK || !best.feasible || !(best.time.tokens_per_s >= res1->time.tokens_per_s)) {
            fprintf(stderr, "fuzz_eval: search status %d feasible %d at %g tokens/s below the layout's %g\n", ss,
                    best.feasible, best.time.tokens_per_s, res1->time.tokens_per_s);
            dump(m, w, c, l, res1);
            dump(m, w, c, &best.layout, &best);
            abort();
        }
    }

    /* sometimes a search over a small space: its best must satisfy the same
     * properties as any evaluation (it is one) */
    if ((mode & 7) == 7) {
        const int64_t gpus = 1 + (int64_t)(mode >> 3) % 16;
        uly_search_opts o;
        memset(&o, 0, sizeof o);
        o.both_placements = (mode >> 7) & 1;
        o.search_micro_batch = w->global_batch > 0 && w->global_batch <= 1024;
        o.pin_pp = (mode >> 6) & 1 ? ULY_PP_SEARCH : 0;
        if (m->layers > 64) o.pin_pp = 0; /* keep the space small */
        n_search++;
        uly_result best;
        uly_search_stats stats = {0, 0};
        memset(&best, 0, sizeof best);
        const uly_status ss = uly_search_best_plan(m, w, c, gpus, l->strategy, &o, &best, &plan2, &stats);
        if (ss != ULY_OK && ss != ULY_EINVAL) abort();
        if (ss == ULY_OK) {
            uly_workload wm = *w;
            wm.micro_batch = best.micro_batch;
            check_result(m, &wm, c, &best.layout, &plan2, ULY_OK, &best);
            if (stats.feasible > stats.evaluated) abort();
            if (stats.feasible > 0 && !best.feasible) abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rd r = {data, size};
    static int stats_env = -1;
    if (stats_env < 0 && (stats_env = getenv("FUZZ_EVAL_STATS") != NULL)) atexit(stats_print);
    n_in++;
    uly_model m;
    uly_workload w;
    uly_cluster c;
    uly_layout l;
    const unsigned mode = u8(&r);
    decode_model(&r, &m);
    decode_layout(&r, &l);
    decode_workload(&r, &w, &l);
    decode_cluster(&r, &c, &l);
    if (uly_model_check(&m, NULL, 0) || uly_workload_check(&w, NULL, 0) || uly_cluster_check(&c, NULL, 0) ||
        uly_layout_check(&l, NULL, 0))
        return 0;
    /* FUZZ_EVAL_DUMP=1 ./fuzz_eval CRASH prints the decoded specs first
     * (for a crash inside the library, before any check could) */
    static int dump_env = -1;
    if (dump_env < 0) dump_env = getenv("FUZZ_EVAL_DUMP") != NULL;
    if (dump_env) dump(&m, &w, &c, &l, NULL);
    n_valid++;

    /* the results are compared byte for byte: clear them first so that any
     * field evaluate leaves as it found it compares equal */
    memset(&res1, 0, sizeof res1);
    memset(&res2, 0xa5, sizeof res2);
    const uly_status st = uly_evaluate(&m, &w, &c, &l, &plan1, &res1);
    check_result(&m, &w, &c, &l, &plan1, st, &res1);
    n_ok += st == ULY_OK;
    n_priced += st == ULY_OK && !shapes_fatal(&res1);
    n_feasible += st == ULY_OK && res1.feasible;
    /* determinism: a second evaluation into dirty buffers */
    memset(&plan2, 0x5a, sizeof plan2);
    const uly_status st2 = uly_evaluate(&m, &w, &c, &l, &plan2, &res2);
    if (st2 != st) {
        fprintf(stderr, "fuzz_eval: status %d then %d\n", st, st2);
        abort();
    }
    if (st == ULY_OK) {
        /* the fields evaluate owns: all but op entries past n_ops (not
         * written), compared as bytes through the padding-free parts */
        int same = memcmp(&res1.time, &res2.time, sizeof res1.time) == 0 &&
                   memcmp(&res1.mem, &res2.mem, sizeof res1.mem) == 0 && res1.feasible == res2.feasible &&
                   res1.n_reasons == res2.n_reasons && res1.comm_fwd_bytes == res2.comm_fwd_bytes &&
                   res1.comm_bwd_bytes == res2.comm_bwd_bytes && res1.comm_recompute_bytes == res2.comm_recompute_bytes &&
                   res1.zero_bytes == res2.zero_bytes && res1.comm_tiers == res2.comm_tiers &&
                   plan1.n_ops == plan2.n_ops;
        for (int i = 0; same && i < res1.n_reasons; i++)
            same = res1.reasons[i].code == res2.reasons[i].code && res1.reasons[i].fatal == res2.reasons[i].fatal &&
                   memcmp(res1.reasons[i].v, res2.reasons[i].v, sizeof res1.reasons[i].v) == 0;
        if (same && !shapes_fatal(&res1))
            for (int i = 0; same && i < plan1.n_ops; i++)
                same = memcmp(&res1.op_time_s[i], &res2.op_time_s[i], sizeof(double)) == 0 &&
                       memcmp(&res1.op_exposed_s[i], &res2.op_exposed_s[i], sizeof(double)) == 0;
        if (!same) {
            fprintf(stderr, "fuzz_eval: two evaluations of the same inputs differ\n");
            dump(&m, &w, &c, &l, &res1);
            dump(&m, &w, &c, &l, &res2);
            abort();
        }
    }

    if (st == ULY_OK && !shapes_fatal(&res1)) {
        /* uly_plan_price of the built plan prices full recompute's copy op
         * by op, where uly_evaluate takes the forward ops' times: the
         * shortcut must not change the price */
        uly_result r3;
        memcpy(&r3, &res1, sizeof r3);
        const uly_status s3 = uly_plan_price(&m, &w, &c, &plan1, &r3);
        int same = s3 == ULY_OK && memcmp(&r3.time, &res1.time, sizeof r3.time) == 0;
        for (int i = 0; same && i < plan1.n_ops; i++)
            same = memcmp(&res1.op_time_s[i], &r3.op_time_s[i], sizeof(double)) == 0 &&
                   memcmp(&res1.op_exposed_s[i], &r3.op_exposed_s[i], sizeof(double)) == 0;
        if (!same) {
            fprintf(stderr, "fuzz_eval: uly_plan_price (status %d) and uly_evaluate price the same plan differently\n", s3);
            dump(&m, &w, &c, &l, &res1);
            dump(&m, &w, &c, &l, &r3);
            abort();
        }
    }
    if (st == ULY_OK) {
        /* the search's path: a plan evaluated under one rank order and
         * re-placed to another (uly_evaluate_reordered) must price as a
         * fresh uly_evaluate of that order */
        uly_layout l2 = l;
        const int rot = 1 + (int)((mode >> 3) % 3);
        for (int i = 0; i < 4; i++) l2.order[i] = l.order[(i + rot) % 4];
        double keep[ULY_PLAN_MAX_OPS];
        const uly_status sk = uly_evaluate_keep(&m, &w, &c, &l, &plan2, &res2, keep);
        if (sk != st) {
            fprintf(stderr, "fuzz_eval: uly_evaluate_keep status %d, uly_evaluate %d\n", sk, st);
            abort();
        }
        const uly_status sr = uly_evaluate_reordered(&m, &w, &c, &l2, &plan2, &res2, keep);
        uly_result r4;
        const uly_status s4 = uly_evaluate(&m, &w, &c, &l2, &plan1, &r4);
        int same = sr == s4;
        if (same && s4 == ULY_OK) {
            same = memcmp(&res2.time, &r4.time, sizeof r4.time) == 0 && memcmp(&res2.mem, &r4.mem, sizeof r4.mem) == 0 &&
                   res2.feasible == r4.feasible && res2.n_reasons == r4.n_reasons &&
                   res2.comm_fwd_bytes == r4.comm_fwd_bytes && res2.comm_bwd_bytes == r4.comm_bwd_bytes &&
                   res2.comm_recompute_bytes == r4.comm_recompute_bytes && res2.zero_bytes == r4.zero_bytes &&
                   res2.comm_tiers == r4.comm_tiers;
            for (int i = 0; same && !shapes_fatal(&r4) && i < plan1.n_ops; i++)
                same = memcmp(&res2.op_time_s[i], &r4.op_time_s[i], sizeof(double)) == 0 &&
                       memcmp(&res2.op_exposed_s[i], &r4.op_exposed_s[i], sizeof(double)) == 0;
        }
        if (!same) {
            fprintf(stderr, "fuzz_eval: re-placed plan (status %d) and fresh evaluation (status %d) of the same layout differ\n",
                    sr, s4);
            dump(&m, &w, &c, &l2, &res2);
            dump(&m, &w, &c, &l2, &r4);
            abort();
        }
    }

    if (st == ULY_OK && !shapes_fatal(&res1)) memory_grows(&m, &w, &c, &l, &res1);

    search_oracles(&m, &w, &c, &l, &res1, st, mode);
    return 0;
}
