/* hx_setup.c: from options to a ready run: the model, workload and layout;
 * the plan from libulysim; one communicator per group of the layout; which
 * tokens and heads this rank holds; every buffer; the seeded inputs and
 * weights (a pure function of the seed and the global index, so each rank
 * builds its own shard and the reference builds the full tensors). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "hx.h"
#include "preset.h"

/* ------------------------------------------------------------ seeded data */

static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

/* Uniform in [-1, 1), 24 random bits: exact in float and in double. */
float hx_rand(uint64_t seed, uint32_t tensor, uint64_t i, uint64_t j)
{
    uint64_t x = mix64(seed * 0x9e3779b97f4a7c15ULL + tensor);
    x = mix64(x ^ (i * 0xd1b54a32d192ed03ULL));
    x = mix64(x ^ (j + 0x2545f4914f6cdd1dULL));
    return (float)((double)(x >> 40) * (2.0 / 16777216.0) - 1.0);
}

/* Weights: uniform scaled to variance 1/fan_in. (row, col) are global
 * indices of the full (unsplit) matrices: Wq h x a*d, Wk and Wv h x k*d,
 * Wo a*d x h, W1 (and the SwiGLU up half W1U) h x f, W2 f x h. */
float hx_weight(const hx_ctx *c, uint32_t tensor, int64_t row, int64_t col)
{
    double fan;
    switch (tensor) {
    case HX_T_WO: fan = (double)(c->a * c->d); break;
    case HX_T_W2: fan = (double)c->f; break;
    case HX_T_EW2: fan = (double)c->m.moe_ffn_hidden; break;
    default: fan = (double)c->h; break;
    }
    return (float)(hx_rand(c->o.seed, tensor, (uint64_t)row, (uint64_t)col) * sqrt(3.0 / fan));
}

/* Token ids: uniform over the rank's vocabulary columns, drawn per rank. */
int64_t hx_token_id(const hx_ctx *c, int64_t i)
{
    return (int64_t)((hx_rand(c->o.seed, HX_T_TOK, (uint64_t)i, (uint64_t)hx_world_rank()) + 1.0f) * 0.5f *
                     (float)c->lv) % c->lv;
}

/* The layer's input X and its upstream gradient G on this rank's token
 * rows: functions of the global (sequence, position, column), so the
 * reference sees the same tensors. */
void hx_layer_io_seed(const hx_ctx *c, float *x, float *g)
{
    const int64_t h = c->h;
    for (int64_t row = 0; row < c->Rt; row++) {
        const uint64_t gi = (uint64_t)(c->tbat[row] * c->N + c->tpos[row]);
        for (int64_t j = 0; j < h; j++) {
            x[row * h + j] = hx_rand(c->o.seed, HX_T_X, gi, (uint64_t)j) * 1.7320508f;
            g[row * h + j] = hx_rand(c->o.seed, HX_T_G, gi, (uint64_t)j);
        }
    }
}

/* ---------------------------------------------------------- token layout */

int64_t hx_ring_part_pos(const hx_ctx *c, int j, int64_t idx)
{
    const int64_t per = c->N / c->r;
    if (c->zig) {
        const int64_t ch = c->N / (2 * c->r);
        return idx < ch ? (int64_t)j * ch + idx : (2 * c->r - 1 - j) * ch + (idx - ch);
    }
    return (int64_t)j * per + idx;
}

void hx_seg_ring_part(const hx_ctx *c, int j, int64_t b, hx_segs *out)
{
    out->n = 0;
    out->rows = 0;
    for (int64_t bb = 0; bb < b; bb++) {
        if (c->zig) {
            const int64_t ch = c->N / (2 * c->r);
            out->s[out->n++] = (hx_seg){bb, (int64_t)j * ch, ch, out->rows};
            out->rows += ch;
            out->s[out->n++] = (hx_seg){bb, (2 * c->r - 1 - j) * ch, ch, out->rows};
            out->rows += ch;
        } else {
            const int64_t per = c->N / c->r;
            out->s[out->n++] = (hx_seg){bb, (int64_t)j * per, per, out->rows};
            out->rows += per;
        }
    }
}


/* ---------------------------------------------------------- communicators */

static int64_t degree(const uly_layout *l, uly_group g)
{
    switch (g) {
    case ULY_GROUP_TP: return l->tp;
    case ULY_GROUP_ULYSSES: return l->ulysses;
    case ULY_GROUP_RING: return l->ring;
    case ULY_GROUP_DP: return l->dp;
    case ULY_GROUP_PP: return l->pp;
    default: return 1;
    }
}

int hx_group_make(hx_group *g, int color, int key)
{
    HX_TRY(HX_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, key, &g->comm)));
    HX_TRY(HX_MPI(MPI_Comm_set_errhandler(g->comm, MPI_ERRORS_RETURN)));
    HX_TRY(HX_MPI(MPI_Comm_size(g->comm, &g->size)));
    HX_TRY(HX_MPI(MPI_Comm_rank(g->comm, &g->rank)));
    g->next = (g->rank + 1) % g->size;
    g->prev = (g->rank + g->size - 1) % g->size;
    return HX_OK;
}

static void coords_compute(hx_ctx *c)
{
    int64_t stride = 1;
    for (int i = 0; i < 4; i++) {
        uly_group gid = c->l.order[i];
        int64_t deg = degree(&c->l, gid);
        int co = (int)((hx_world_rank() / stride) % deg);
        if (gid == ULY_GROUP_ULYSSES) c->ui = co;
        else if (gid == ULY_GROUP_RING) c->ri = co;
        else if (gid == ULY_GROUP_TP) c->ti = co;
        else if (gid == ULY_GROUP_DP) c->di = co;
        stride *= deg;
    }
}

static int comms_make(hx_ctx *c)
{
    const int rank = hx_world_rank();
    int64_t stride = 1;
    int coord[ULY_GROUP_COUNT] = {0};
    for (int i = 0; i < 4; i++) {
        uly_group gid = c->l.order[i];
        int64_t deg = degree(&c->l, gid);
        int co = (int)((rank / stride) % deg);
        coord[gid] = co;
        if (c->plan.place[gid].stride != stride)
            return hx_fail("group %s: stride %lld here, %lld in the plan", uly_group_name(gid), (long long)stride,
                   (long long)c->plan.place[gid].stride);
        HX_TRY(hx_group_make(&c->g[gid], (int)(rank - co * stride), co));
        if (c->g[gid].size != deg)
            return hx_fail("group %s: %d ranks, want %lld", uly_group_name(gid), c->g[gid].size, (long long)deg);
        stride *= deg;
    }
    /* the pipeline stages, outside the four: ranks that share every other coordinate */
    {
        const int co = (int)(rank / stride);
        HX_TRY(hx_group_make(&c->g[ULY_GROUP_PP], (int)(rank - co * stride), co));
        coord[ULY_GROUP_PP] = co;
        if (c->g[ULY_GROUP_PP].size != c->l.pp)
            return hx_fail("group pp: %d ranks, want %lld", c->g[ULY_GROUP_PP].size, (long long)c->l.pp);
        if (c->l.pp > 1 && c->plan.place[ULY_GROUP_PP].stride != stride)
            return hx_fail("group pp: stride %lld here, %lld in the plan", (long long)stride,
                   (long long)c->plan.place[ULY_GROUP_PP].stride);
    }
    /* ZeRO shards over everything but TP inside a stage: the ranks sharing a
     * TP and a pipeline coordinate */
    HX_TRY(hx_group_make(&c->g[ULY_GROUP_ZERO], coord[ULY_GROUP_TP] + (int)c->l.tp * coord[ULY_GROUP_PP], rank));
    if (c->g[ULY_GROUP_ZERO].size != c->plan.dims.zero_group)
        return hx_fail("ZeRO group: %d ranks, the plan says %lld", c->g[ULY_GROUP_ZERO].size,
               (long long)c->plan.dims.zero_group);
    if (c->ui != coord[ULY_GROUP_ULYSSES] || c->ri != coord[ULY_GROUP_RING] || c->ti != coord[ULY_GROUP_TP] ||
        c->di != coord[ULY_GROUP_DP])
        return hx_fail("internal: group coordinates disagree");
    return HX_OK;
}

/* ---------------------------------------------------------------- inputs */

static int cluster_setup(hx_ctx *c)
{
    char why[512];
    if (preset_cluster_load(c->o.cluster, &c->cl, why, sizeof why)) {
        if (hx_world_rank() == 0) fprintf(stderr, "ulyharness: --cluster %s: %s\n", c->o.cluster, why);
        return 2;
    }
    const char *s = c->o.cluster;
    size_t n = strlen(s);
    if (strchr(s, '/') || (n >= 5 && !strcmp(s + n - 5, ".json")))
        snprintf(c->cluster_src, sizeof c->cluster_src, "%s", s);
    else
        snprintf(c->cluster_src, sizeof c->cluster_src, "%s/clusters/%s.json", preset_dir(), s);
    if (hx_world_rank() == 0) {
        FILE *fp = fopen(c->cluster_src, "rb");
        if (fp) {
            char *buf = NULL;
            size_t len = 0, cap = 0;
            for (;;) {
                if (len + 4096 + 1 > cap) {
                    cap = cap ? cap * 2 : 16384;
                    char *nb = realloc(buf, cap);
                    if (!nb) break;
                    buf = nb;
                }
                size_t got = fread(buf + len, 1, 4096, fp);
                len += got;
                if (got == 0) break;
            }
            fclose(fp);
            if (buf) {
                buf[len] = 0;
                c->cluster_json = cJSON_Parse(buf);
                free(buf);
            }
        }
    }
    /* The CPU host is one node: a profile with fewer "GPUs" than ranks is
     * stretched to one node of P (the bytes of a plan do not depend on it;
     * the placement tiers do). The trace records the change. */
    c->cluster_orig_gpn = c->cl.gpus_per_node;
    c->cluster_orig_nodes = c->cl.nodes;
    if (c->cl.nodes * c->cl.gpus_per_node < c->P || (c->P > c->cl.gpus_per_node && c->P % c->cl.gpus_per_node)) {
        c->cl.nodes = 1;
        c->cl.gpus_per_node = c->P;
        if (c->cl.gpus_per_leaf < c->P) c->cl.gpus_per_leaf = c->P;
        c->cluster_adjusted = 1;
    }
    return 0;
}

/* bad input found while setting up: one line from rank 0, exit status 2 */
#define bad_input(...) hx_args_reject(hx_world_rank(), __VA_ARGS__)

static int specs_setup(hx_ctx *c)
{
    const hx_opts *o = &c->o;
    if (o->pp > c->P || c->P % o->pp != 0)
        return bad_input("--pp %lld: does not divide the %d ranks (valid: a divisor of %d)", (long long)o->pp, c->P,
                         c->P);
    const int P = c->P / (int)o->pp; /* the ranks of one pipeline stage */
    c->strat = uly_strategy_find(o->strategy);
    const uly_strategy *s = c->strat;
    int64_t u = s->uses_ulysses ? o->ulysses : 1;
    int64_t r = s->uses_ring ? o->ring : 1;
    int64_t t = s->uses_tp ? o->tp : 1;
    if (!s->uses_ulysses && o->ulysses > 1) return bad_input("--ulysses %lld: %s does not use it", (long long)o->ulysses, s->name);
    if (!s->uses_ring && o->ring > 1) return bad_input("--ring %lld: %s does not use it", (long long)o->ring, s->name);
    if (!s->uses_tp && o->tp > 1) return bad_input("--tp %lld: %s does not use it", (long long)o->tp, s->name);
    /* TP defaults to 1 where a sequence degree takes the ranks (--tp pins
     * TP inside it), to all of them for Megatron TP; the sequence degrees
     * share what TP leaves */
    if (s->uses_tp && !t) t = s->uses_ulysses || s->uses_ring ? 1 : P;
    const int64_t Q = P / t > 0 ? P / t : 1;
    if (s->uses_ulysses && s->uses_ring) {
        if (!u && !r) {
            u = (Q >= 4 && Q % 2 == 0) ? 2 : Q;
            r = Q / u;
        } else if (!u) {
            u = Q / r > 0 ? Q / r : 1;
        } else if (!r) {
            r = Q / u > 0 ? Q / u : 1;
        }
    } else {
        if (s->uses_ulysses && !u) u = Q;
        if (s->uses_ring && !r) r = Q;
    }
    if (u < 1) u = 1;
    if (r < 1) r = 1;
    if (t < 1) t = 1;
    if (P % (u * r * t) != 0)
        return bad_input("%d ranks per pipeline stage: not a multiple of ulysses x ring x tp = %lld x %lld x %lld", P,
                         (long long)u, (long long)r, (long long)t);
    uly_layout_init(&c->l, s->id, u, r, t, P / (u * r * t));
    c->l.pp = o->pp;

    uly_model *m = &c->m;
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "harness");
    m->layers = o->layers;
    m->heads = o->heads;
    m->kv_heads = o->kv_heads ? o->kv_heads : o->heads;
    m->head_dim = o->head_dim;
    m->hidden = m->heads * m->head_dim;
    m->ffn_hidden = o->ffn ? o->ffn : 4 * m->hidden;
    m->vocab = o->vocab;
    m->swiglu = o->swiglu;
    uly_workload *w = &c->w;
    memset(w, 0, sizeof *w);
    if (hx_moe_model(c, m, w)) return 2; /* --experts: every layer MoE, the layout's ep and etp */
    char why[256];
    if (uly_model_check(m, why, sizeof why) != ULY_OK) return bad_input("model: %s", why);

    w->seq = o->seq ? o->seq : 128 * (int64_t)P; /* 128 tokens per rank of a stage */
    w->micro_batch = o->batch;
    /* the element type the backend computes and communicates in: model bytes =
     * its bytes (the CPU computes in float32; the nccl backend in bf16/fp16) */
    w->dtype = o->dtype == HX_DTYPE_DEFAULT ? ULY_FP32 : o->dtype;
    /* FP8 (the nccl backend): the one recipe it implements, per-tensor
     * current scaling (kern_cuda_gemm_fp8), so the plan is priced with it */
    if (w->dtype == ULY_FP8) w->fp8_recipe = ULY_FP8_TENSORWISE;
    w->causal = o->causal;
    w->flash = !strcmp(o->kernel, "flash");
    w->recompute = o->recompute;
    w->zero_stage = o->zero;
    w->split = o->split;
    if (uly_workload_check(w, why, sizeof why) != ULY_OK) return bad_input("workload: %s", why);
    if (cluster_setup(c)) return 2;
    if (w->dtype == ULY_FP8 && !(c->cl.gpu.peak_flops[ULY_FP8] > 0 && c->cl.gpu.sm_count > 0))
        return bad_input("--dtype fp8: cluster %s has no FP8 tensor cores to plan for (its GPU's fp8 peak is 0); "
                         "valid: a --cluster whose GPUs have them, e.g. dgx-h100, dgx-h200", c->o.cluster);

    uly_status st = uly_plan_build(m, w, &c->cl, &c->l, &c->plan, c->reasons, &c->n_reasons);
    if (st != ULY_OK) return bad_input("uly_plan_build: %s", uly_status_str(st));
    for (int i = 0; i < c->n_reasons; i++) {
        if (!c->reasons[i].fatal) continue;
        char line[300];
        uly_reason_format(&c->reasons[i], m, line, sizeof line);
        return bad_input("%s with ulysses %lld, ring %lld, tp %lld, pp %lld on %d ranks: %s", s->name, (long long)u,
                         (long long)r, (long long)t, (long long)o->pp, c->P, line);
    }
    return 0;
}

/* -------------------------------------------------------------- shapes */

int64_t hx_seg_row(const hx_segs *ss, int64_t batch, int64_t pos)
{
    for (int i = 0; i < ss->n; i++) {
        const hx_seg *s = &ss->s[i];
        if (s->batch == batch && pos >= s->off && pos < s->off + s->len) return s->base + (pos - s->off);
    }
    return -1;
}

static int shapes_setup(hx_ctx *c)
{
    const uly_plan *p = &c->plan;
    c->b = c->w.micro_batch;
    c->N = c->w.seq;
    c->a = c->m.heads;
    c->k = c->m.kv_heads;
    c->d = c->m.head_dim;
    c->h = c->m.hidden;
    c->f = c->m.experts > 0 ? c->m.shared_ffn_hidden : c->m.ffn_hidden; /* a MoE layer's MLP: its shared experts */
    c->V = c->m.vocab;
    c->u = c->l.ulysses;
    c->r = c->l.ring;
    c->t = c->l.tp;
    c->dp = c->l.dp;
    /* the registry's mode; a mode whose communication needs a degree falls
     * back to the rank's own tokens when that degree is 1 */
    c->mode = c->strat->exec;
    if ((c->mode == ULY_EXEC_A2A && c->u == 1) || (c->mode == ULY_EXEC_ALLGATHER && c->r == 1))
        c->mode = ULY_EXEC_TOKENS;
    c->zig = c->w.causal && c->w.split == ULY_SPLIT_ZIGZAG && c->r > 1 && c->strat->causal_split;
    if (c->f % c->t) return bad_input("ffn %lld: not divisible by tp %lld", (long long)c->f, (long long)c->t);
    c->fl = c->f / c->t;
    c->f1 = c->m.swiglu ? 2 * c->f : c->f;
    /* The GEMM side: this TP rank's heads and weights (heads split t ways
     * first; KV heads replicated over the t ranks when k < t, as the model
     * replicates them), with the Megatron-SP gather of the TP group's token
     * rows unless plain TP holds every row already. */
    c->sp = c->t > 1 && c->mode != ULY_EXEC_TP_ALLREDUCE;
    c->gq = c->a / c->t;
    c->gkv = uly_kv_heads_spread(c->k, c->a, c->t) / c->t;
    c->hq0 = c->ti * c->gq;
    c->hk0 = c->ti * c->gkv;
    c->kv_eff = c->gkv;
    /* tokens per sequence on the token side: the CP rank's, split t ways
     * (plain TP: all N on every rank) */
    switch (c->mode) {
    case ULY_EXEC_A2A:
        c->T = c->N / (c->u * c->r * c->t);
        c->kv_eff = p->dims.kv_eff; /* the TP rank's KV heads, replicated over the Ulysses group */
        c->Hq = c->gq / c->u;
        c->Hkv = c->kv_eff / c->u;
        break;
    case ULY_EXEC_TP_ALLREDUCE: c->T = c->N; break;
    default: c->T = c->N / (c->r * c->t); break;
    }
    if (c->mode != ULY_EXEC_A2A) {
        c->Hq = c->gq;
        c->Hkv = c->gkv;
    }
    if (c->Hq != p->dims.heads || c->Hkv != p->dims.kv_heads)
        return hx_fail("internal: attention heads %lld/%lld here, %lld/%lld in the plan", (long long)c->Hq,
                       (long long)c->Hkv,
               (long long)p->dims.heads, (long long)p->dims.kv_heads);
    if (c->mode == ULY_EXEC_A2A && c->kv_eff != uly_kv_heads_spread(c->gkv, c->gq, c->u))
        return hx_fail("internal: %lld KV heads over the Ulysses group here, %lld in the plan",
                       (long long)uly_kv_heads_spread(c->gkv, c->gq, c->u), (long long)c->kv_eff);
    if (c->Hkv < 1 || c->Hq % c->Hkv)
        return hx_fail("internal: %lld query heads over %lld kv heads", (long long)c->Hq, (long long)c->Hkv);
    c->qc = c->gq * c->d;
    c->kc = c->gkv * c->d;
    c->Tg = c->sp ? c->t * c->T : c->T;
    c->Rt = c->b * c->T;
    c->Rg = c->b * c->Tg;

    /* attention-side query segments */
    if (c->mode == ULY_EXEC_TP_SP || c->mode == ULY_EXEC_TP_ALLREDUCE) {
        if (c->b > HX_MAX_SEGS) return bad_input("--batch %lld: at most %d", (long long)c->b, HX_MAX_SEGS);
        c->qs.n = 0;
        c->qs.rows = 0;
        for (int64_t bb = 0; bb < c->b; bb++) {
            c->qs.s[c->qs.n++] = (hx_seg){bb, 0, c->N, c->qs.rows};
            c->qs.rows += c->N;
        }
    } else if (c->mode != ULY_EXEC_RSA) {
        if (c->b * 2 > HX_MAX_SEGS) return bad_input("--batch %lld: at most %d", (long long)c->b, HX_MAX_SEGS / 2);
        hx_seg_ring_part(c, c->ri, c->b, &c->qs);
    }
    if (c->mode == ULY_EXEC_ALLGATHER) {
        c->fulls.n = 0;
        c->fulls.rows = 0;
        for (int64_t bb = 0; bb < c->b; bb++) {
            c->fulls.s[c->fulls.n++] = (hx_seg){bb, 0, c->N, c->fulls.rows};
            c->fulls.rows += c->N;
        }
    }
    /* rows of one K,V block on the attention side; the per-model ops' logit
     * tokens and vocabulary columns */
    if (c->mode != ULY_EXEC_RSA) c->kv_rows = c->mode == ULY_EXEC_ALLGATHER ? c->fulls.rows : c->qs.rows;
    c->lt = c->plan.logit_tokens;
    c->lv = c->plan.logit_vocab;
    return HX_OK;
}

/* GEMM-side rows are [TP rank][batch][token]: TP rank j's token-side rows,
 * which hold local indices [j T, (j+1) T) of the CP rank's tokens in its CP
 * order (the ring part, and within it the Ulysses rank's share). */
int64_t hx_row_batch(const hx_ctx *c, int64_t gr) { return gr % c->Rt / c->T; }

int64_t hx_row_pos(const hx_ctx *c, int ring_rank, int uly_rank, int64_t gr)
{
    const int64_t loc = gr / c->Rt * c->T + gr % c->Rt % c->T;
    return hx_ring_part_pos(c, ring_rank, uly_rank * c->Tg + loc);
}

/* The index maps: which position and sequence each token-side (and
 * GEMM-side) row holds, and where each lands on the attention side. */
static int maps_setup(hx_ctx *c)
{
    HX_TRY(hx_slab_carve(c, &c->mem.layout, "index maps", hx_layout_carve));
    const int64_t own = c->sp ? c->ti * c->Rt : 0; /* this TP rank's rows among the GEMM side's */
    for (int64_t row = 0; row < c->Rt; row++) {
        c->tpos[row] = hx_row_pos(c, c->ri, c->ui, own + row);
        c->tbat[row] = hx_row_batch(c, row);
    }
    if (c->gpos != c->tpos) /* TP+SP: the GEMM side holds every TP rank's rows */
        for (int64_t gr = 0; gr < c->Rg; gr++) {
            c->gpos[gr] = hx_row_pos(c, c->ri, c->ui, gr);
            c->gbat[gr] = hx_row_batch(c, gr);
        }
    if (c->uly_map)
        for (int64_t pe = 0; pe < c->u; pe++)
            for (int64_t gr = 0; gr < c->Rg; gr++) {
                const int64_t pos = hx_row_pos(c, c->ri, (int)pe, gr), bb = c->gbat[gr];
                if ((c->uly_map[pe * c->Rg + gr] = hx_seg_row(&c->qs, bb, pos)) < 0)
                    return hx_fail("internal: position %lld of sequence %lld is not in this rank's segments",
                                   (long long)pos, (long long)bb);
            }
    if (c->g2a)
        for (int64_t gr = 0; gr < c->Rg; gr++)
            if ((c->g2a[gr] = hx_seg_row(&c->qs, c->gbat[gr], c->gpos[gr])) < 0)
                return hx_fail("internal: GEMM-side row %lld is not in this rank's attention segments", (long long)gr);
    return HX_OK;
}

int hx_setup(hx_ctx *c, const hx_opts *o)
{
    memset(c, 0, sizeof *c);
    c->o = *o;
    c->P = hx_world_size();
    c->timed_rep = -1;
    c->be = o->be ? o->be : &hx_backend_mpi;
    int rc = specs_setup(c);
    if (rc) return rc;
    coords_compute(c);
    rc = shapes_setup(c);
    if (rc) return rc;
    /* before any buffer that scales with the run: what the check will do,
     * and whether this node has the memory for all of it */
    HX_TRY(hx_check_plan(c));
    HX_TRY(hx_mem_check(c));
    HX_TRY(maps_setup(c));
    c->kern = kern_attn_find(o->kernel);
    if (!c->kern) return bad_input("--kernel %s: not in the kernel registry", o->kernel);
    if (o->print_plan) return HX_OK;
    HX_TRY(comms_make(c));
    HX_TRY(hx_params_setup(c));
    if (c->be->host_buffers) HX_TRY(hx_buffers_setup(c)); /* else the backend allocates its own (prepare) */
    HX_TRY(hx_moe_setup(c));
    return HX_OK;
}

