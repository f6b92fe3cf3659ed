/* plans.c: single-GPU plans. libulysim builds the plan of one layer (and the
 * per-micro-batch logits) for llama3-8b on the dgx-h200 preset and prices it
 * (uly_plan_price: res.op_time_s per op); every attention and GEMM op of
 * the plan then runs on this GPU and its median time is set against the
 * prediction.
 *   P = 1            the whole layer on one GPU
 *   ulysses u = 8    one rank's compute: a/u heads over all N tokens, GEMMs on N/u tokens
 *   ring r = 8       one rank's compute: all heads, N/r queries against r KV
 *                    blocks (zigzag: two chunks each, the pairs a rank
 *                    computes, fully masked ones skipped), merged with
 *                    kern_cuda_attn_merge; contiguous: the critical (last) rank
 * at sequence lengths scaled down from training ones to fit the run's time.
 * Communication and elementwise ops are listed, not executed: there is one
 * GPU, and the plan prices elementwise ops by bytes alone. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ulygpu.h"

int ug_gemm_shape_of(const uly_model *m, const uly_workload *w, const uly_plan *p, const uly_op *op,
                     ug_gemm_shape *out)
{
    memset(out, 0, sizeof *out);
    if (op->kind != ULY_OP_GEMM) return 0;
    const int64_t b = w->micro_batch, t = p->weight_split > 0 ? p->weight_split : 1;
    const int64_t tg = p->dims.tokens, hid = m->hidden, f = m->ffn_hidden;
    const int64_t qkv = (m->heads + 2 * m->kv_heads) * m->head_dim / t;
    int64_t M = 0, N = 0, K = 0;
    char base[64];
    snprintf(base, sizeof base, "%s", uly_op_type_name(op->type));
    const size_t L = strlen(base);
    const int bwd = L > 4 && !strcmp(base + L - 4, "_bwd");
    if (bwd) base[L - 4] = 0;
    if (!strcmp(base, "qkv_proj")) {
        M = b * tg, N = qkv, K = hid;
    } else if (!strcmp(base, "out_proj")) {
        M = b * tg, N = hid, K = m->heads * m->head_dim / t;
    } else if (!strcmp(base, "mlp_up")) {
        M = b * tg, N = f * (m->swiglu ? 2 : 1) / t, K = hid;
    } else if (!strcmp(base, "mlp_down")) {
        M = b * tg, N = hid, K = f / t;
    } else if (!strcmp(base, "logits")) {
        M = b * p->logit_tokens, N = p->logit_vocab, K = hid;
    } else {
        return 0;
    }
    /* the plan's FLOPs must be exactly these GEMMs, or the mapping is wrong */
    const double fl = 2.0 * (double)M * (double)N * (double)K * (bwd ? 2 : 1);
    if (fabs(fl - op->flops) > 1e-9 * op->flops || M <= 0 || N <= 0 || K <= 0) return 0;
    if (!bwd) {
        out->n_gemms = 1;
        out->m[0] = M, out->n[0] = N, out->k[0] = K;
    } else { /* dX (M x K) = dY (M x N) W^T; dW (K x N) = X^T (K x M) dY */
        out->n_gemms = 2;
        out->m[0] = M, out->n[0] = K, out->k[0] = N;
        out->m[1] = K, out->n[1] = N, out->k[1] = M;
    }
    return 1;
}

/* ------------------------------------------------------------ GEMM ops */

typedef struct gop {
    kern_cuda_blas *b;
    ug_gemm_shape s;
    void *a[2], *bm[2], *c[2];
} gop;

static kern_cuda_status run_gop(void *p)
{
    gop *g = p;
    for (int i = 0; i < g->s.n_gemms; i++) {
        kern_cuda_status st = kern_cuda_gemm(g->b, i == 1, false, (int)g->s.m[i], (int)g->s.n[i], (int)g->s.k[i], 1.f,
                                             g->a[i], i == 1 ? (int)g->s.m[i] : (int)g->s.k[i], g->bm[i],
                                             (int)g->s.n[i], KERN_CUDA_BF16, 0.f, g->c[i], (int)g->s.n[i],
                                             KERN_CUDA_BF16);
        if (st != KERN_CUDA_OK) return st;
    }
    return KERN_CUDA_OK;
}

/* ----------------------------------------------------- attention ops */

typedef struct aop {
    ug_ctx *c;
    int ring, zig, r, rank, nseg, chunk;
    int heads, kvh, d;
    int n;          /* ring: chunk rows; otherwise N */
    kern_cuda_dtype t;
    void *q, *k, *v, *dout, *o16, *ob;
    float *acc, *lacc, *lb, *ninf, *dq, *dk, *dv, *dr;
} aop;

static int seg_chunk(const aop *a, int rank, int s) { return a->zig ? (s == 0 ? rank : 2 * a->r - 1 - rank) : rank; }

static struct kern_cuda_attn_desc aop_desc(const aop *a, long long q_off, long long kv_off)
{
    struct kern_cuda_attn_desc d;
    memset(&d, 0, sizeof d);
    d.heads = a->heads;
    d.kv_heads = a->kvh;
    d.n_q = a->n;
    d.n_kv = a->n;
    d.d = a->d;
    d.scale = (float)(1.0 / sqrt((double)a->d));
    d.causal = true;
    d.q_off = q_off;
    d.kv_off = kv_off;
    d.dtype = a->t;
    return d;
}

static size_t qseg_elems(const aop *a) { return (size_t)a->heads * a->n * a->d; }
static size_t kseg_elems(const aop *a) { return (size_t)a->kvh * a->n * a->d; }

static kern_cuda_status run_attn_fwd(void *p)
{
    aop *a = p;
    if (!a->ring) {
        const struct kern_cuda_attn_desc d = aop_desc(a, 0, 0);
        return kern_cuda_attn_fwd(&d, a->q, a->k, a->v, a->o16, a->acc /* lse */, NULL);
    }
    const size_t qe = qseg_elems(a), ke = kseg_elems(a), rows = (size_t)a->heads * a->n;
    kern_cuda_status st = kern_cuda_d2d(a->lacc, a->ninf, rows * a->nseg * 4, NULL);
    for (int step = 0; st == KERN_CUDA_OK && step < a->r; step++) {
        const int src = (a->rank - step + a->r) % a->r; /* the KV block held at this step */
        for (int qs = 0; st == KERN_CUDA_OK && qs < a->nseg; qs++)
            for (int ks = 0; st == KERN_CUDA_OK && ks < a->nseg; ks++) {
                const int qc = seg_chunk(a, a->rank, qs), kc = seg_chunk(a, src, ks);
                if (kc > qc) continue; /* every key after every query: nothing to do */
                const struct kern_cuda_attn_desc d = aop_desc(a, (long long)qc * a->n, (long long)kc * a->n);
                const size_t kb = ((size_t)src * a->nseg + ks) * ke;
                st = kern_cuda_attn_fwd(&d, (char *)a->q + qs * qe * 2, (char *)a->k + kb * 2, (char *)a->v + kb * 2,
                                        a->ob, a->lb, NULL);
                if (st == KERN_CUDA_OK)
                    st = kern_cuda_attn_merge(a->heads, a->n, a->d, a->acc + qs * qe, a->lacc + qs * rows, a->ob, a->t,
                                              a->lb, NULL);
            }
    }
    /* the merged O in the input type, as the backward and the next op take it */
    if (st == KERN_CUDA_OK) st = kern_cuda_convert(a->o16, a->t, a->acc, KERN_CUDA_F32, qe * a->nseg, NULL);
    return st;
}

static kern_cuda_status run_attn_bwd(void *p)
{
    aop *a = p;
    if (!a->ring) {
        const struct kern_cuda_attn_desc d = aop_desc(a, 0, 0);
        return kern_cuda_attn_bwd(&d, a->q, a->k, a->v, a->o16, a->acc, a->dout, a->dq, a->dk, a->dv, a->dr, NULL);
    }
    const size_t qe = qseg_elems(a), ke = kseg_elems(a), rows = (size_t)a->heads * a->n;
    kern_cuda_status st = KERN_CUDA_OK;
    for (int step = 0; st == KERN_CUDA_OK && step < a->r; step++) {
        const int src = (a->rank - step + a->r) % a->r;
        for (int qs = 0; st == KERN_CUDA_OK && qs < a->nseg; qs++)
            for (int ks = 0; st == KERN_CUDA_OK && ks < a->nseg; ks++) {
                const int qc = seg_chunk(a, a->rank, qs), kc = seg_chunk(a, src, ks);
                if (kc > qc) continue;
                const struct kern_cuda_attn_desc d = aop_desc(a, (long long)qc * a->n, (long long)kc * a->n);
                const size_t kb = ((size_t)src * a->nseg + ks) * ke;
                st = kern_cuda_attn_bwd(&d, (char *)a->q + qs * qe * 2, (char *)a->k + kb * 2, (char *)a->v + kb * 2,
                                        (char *)a->o16 + qs * qe * 2, a->lacc + qs * rows,
                                        (char *)a->dout + qs * qe * 2, a->dq + qs * qe, a->dk + kb, a->dv + kb, a->dr,
                                        NULL);
            }
    }
    return st;
}

/* ------------------------------------------------------------ plans */

typedef struct pspec {
    const char *label;
    uly_strategy_id s;
    int64_t u, r;
    int64_t seq;
    uly_split split;
} pspec;

typedef struct measured {
    int done;       /* 1 measured, -1 could not run */
    ug_stats st;
    char note[96];
} measured;

/* an earlier op of the same plan with the same work (the recompute pass copies forward ops) */
static int same_op(const uly_op *a, const uly_op *b)
{
    return a->kind == b->kind && a->type == b->type && a->flops == b->flops && a->eff_size == b->eff_size &&
           a->steps == b->steps && a->crit_factor == b->crit_factor;
}

static void gemm_op(ug_ctx *c, const ug_gemm_shape *s, measured *ms)
{
    gop g;
    memset(&g, 0, sizeof g);
    g.b = c->blas;
    g.s = *s;
    size_t need = 0;
    for (int i = 0; i < s->n_gemms; i++)
        need += 2 * (size_t)(s->m[i] * s->k[i] + s->k[i] * s->n[i] + s->m[i] * s->n[i]);
    size_t free_b = 0, total_b = 0;
    UG_CK(kern_cuda_mem_get_info(&free_b, &total_b));
    if (need + ((size_t)1 << 30) > free_b) {
        ms->done = -1;
        snprintf(ms->note, sizeof ms->note, "needs %.1f GiB, %.1f free", need / 1073741824.0, free_b / 1073741824.0);
        return;
    }
    for (int i = 0; i < s->n_gemms; i++) {
        const size_t ea = (size_t)(s->m[i] * s->k[i]), eb = (size_t)(s->k[i] * s->n[i]), ec = (size_t)(s->m[i] * s->n[i]);
        g.a[i] = ug_dalloc(ea * 2);
        g.bm[i] = ug_dalloc(eb * 2);
        g.c[i] = ug_dalloc(ec * 2);
        UG_CK(kern_cuda_fill_uniform(g.a[i], KERN_CUDA_BF16, ea, c->o.seed + 21 + i, -1.f, 1.f, NULL));
        UG_CK(kern_cuda_fill_uniform(g.bm[i], KERN_CUDA_BF16, eb, c->o.seed + 23 + i, -1.f, 1.f, NULL));
    }
    ug_time(c, run_gop, &g, 2, c->o.quick ? 3 : 5, &ms->st);
    ms->done = 1;
    snprintf(ms->note, sizeof ms->note, "%lldx%lldx%lld%s", (long long)s->m[0], (long long)s->n[0], (long long)s->k[0],
             s->n_gemms > 1 ? " dgrad+wgrad" : "");
    for (int i = 0; i < s->n_gemms; i++) {
        ug_dfree(g.a[i]);
        ug_dfree(g.bm[i]);
        ug_dfree(g.c[i]);
    }
}

/* runs the plan's attention forward and backward ops (measured[] for both) */
static void attn_ops(ug_ctx *c, const pspec *ps, const uly_plan *plan, int fwd_id, int bwd_id, measured *mf,
                     measured *mb)
{
    aop a;
    memset(&a, 0, sizeof a);
    a.c = c;
    a.t = KERN_CUDA_BF16;
    a.heads = (int)plan->dims.heads;
    a.kvh = (int)plan->dims.kv_heads;
    a.d = (int)c->model.head_dim;
    a.ring = ps->s == ULY_STRAT_RING && ps->r > 1;
    if (a.ring) {
        a.r = (int)ps->r;
        a.zig = ps->split == ULY_SPLIT_ZIGZAG;
        a.nseg = a.zig ? 2 : 1;
        a.n = (int)(ps->seq / (a.zig ? 2 * ps->r : ps->r));
        a.rank = a.zig ? 0 : a.r - 1; /* zigzag: every rank the same work; contiguous: the critical one */
    } else {
        a.r = 1;
        a.nseg = 1;
        a.n = (int)plan->dims.attn_q;
    }
    if (a.d != 64 && a.d != 128) {
        mf->done = mb->done = -1;
        snprintf(mf->note, sizeof mf->note, "head dim %d: the flash kernels take 64 or 128", a.d);
        snprintf(mb->note, sizeof mb->note, "%s", mf->note);
        return;
    }
    const size_t qe = qseg_elems(&a) * a.nseg, ke = kseg_elems(&a) * a.nseg * a.r, rows = (size_t)a.heads * a.n * a.nseg;
    const size_t need = qe * (2 + 2 + 2 + 2 + 4 + 4) + ke * (2 + 2 + 4 + 4) + rows * 16;
    size_t free_b = 0, total_b = 0;
    UG_CK(kern_cuda_mem_get_info(&free_b, &total_b));
    if (need + ((size_t)1 << 30) > free_b) {
        mf->done = mb->done = -1;
        snprintf(mf->note, sizeof mf->note, "needs %.1f GiB", need / 1073741824.0);
        snprintf(mb->note, sizeof mb->note, "%s", mf->note);
        return;
    }
    a.q = ug_dalloc(qe * 2);
    a.dout = ug_dalloc(qe * 2);
    a.o16 = ug_dalloc(qe * 2);
    a.ob = ug_dalloc(qseg_elems(&a) * 2);
    a.k = ug_dalloc(ke * 2);
    a.v = ug_dalloc(ke * 2);
    a.acc = ug_dalloc((a.ring ? qe : rows) * 4); /* ring: the float32 O accumulator; else the lse */
    a.lacc = ug_dalloc(rows * 4);
    a.lb = ug_dalloc(rows * 4);
    a.ninf = ug_dalloc(rows * 4);
    a.dq = ug_dalloc(qe * 4);
    a.dk = ug_dalloc(ke * 4);
    a.dv = ug_dalloc(ke * 4);
    a.dr = ug_dalloc(qseg_elems(&a) / a.d * 4 * a.nseg + 256);
    const uint64_t s = c->o.seed * 7919 + (uint64_t)ps->seq;
    UG_CK(kern_cuda_fill_uniform(a.q, a.t, qe, s + 1, -1.7f, 1.7f, NULL));
    UG_CK(kern_cuda_fill_uniform(a.k, a.t, ke, s + 2, -1.7f, 1.7f, NULL));
    UG_CK(kern_cuda_fill_uniform(a.v, a.t, ke, s + 3, -1.7f, 1.7f, NULL));
    UG_CK(kern_cuda_fill_uniform(a.dout, a.t, qe, s + 4, -1.7f, 1.7f, NULL));
    {
        float *h = ug_halloc(rows * 4);
        for (size_t i = 0; i < rows; i++) h[i] = -INFINITY;
        UG_CK(kern_cuda_h2d(a.ninf, h, rows * 4));
        free(h);
    }
    UG_CK(kern_cuda_memset0(a.dq, qe * 4, NULL));
    UG_CK(kern_cuda_memset0(a.dk, ke * 4, NULL));
    UG_CK(kern_cuda_memset0(a.dv, ke * 4, NULL));
    const int reps = c->o.quick ? 3 : 5;
    if (fwd_id >= 0) {
        ug_time(c, run_attn_fwd, &a, 1, reps, &mf->st);
        mf->done = 1;
    }
    if (bwd_id >= 0) {
        UG_CK(run_attn_fwd(&a)); /* O and lse for the backward */
        ug_time(c, run_attn_bwd, &a, 1, reps, &mb->st);
        mb->done = 1;
    }
    if (!a.ring)
        snprintf(mf->note, sizeof mf->note, "one call");
    else if (a.zig)
        snprintf(mf->note, sizeof mf->note, "rank 0 of %d, zigzag: chunk pairs per step, merges included", a.r);
    else
        snprintf(mf->note, sizeof mf->note, "critical rank %d of the contiguous split, merges included", a.r - 1);
    snprintf(mb->note, sizeof mb->note, "%s", mf->note);
    void *p[] = {a.q, a.dout, a.o16, a.ob, a.k, a.v, a.acc, a.lacc, a.lb, a.ninf, a.dq, a.dk, a.dv, a.dr};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) ug_dfree(p[i]);
}

static double preset_eff(const ug_ctx *c, const uly_op *o, int causal)
{
    const uly_gpu *g = &c->cluster.gpu;
    if (o->kind == ULY_OP_GEMM && g->sm_count > 0 && o->gemm_m > 0) {
        /* by shape: the op's FLOPs over the time of its GEMMs (a backward
         * op's input and weight gradients), as the schedule prices them */
        uly_gemm_rates r;
        uly_gemm_rates_init(&r, g, ULY_BF16);
        const double b = o->gemm_batch, m = o->gemm_m, n = o->gemm_n, k = o->gemm_k;
        const double t = o->phase == ULY_PHASE_BWD && !o->recompute
                             ? uly_gemm_time_s(&r, b, m, k, n) + uly_gemm_time_s(&r, b, k, n, m)
                             : uly_gemm_time_s(&r, b, m, n, k);
        return o->flops / (t * g->peak_flops[ULY_BF16]);
    }
    if (o->kind == ULY_OP_GEMM) return g->gemm_eff.n <= 1 ? g->gemm_eff.eff[0] : uly_curve_eval(&g->gemm_eff, cbrt(o->eff_size));
    const uly_curve *u = &g->attn_eff[causal ? 1 : 0][c->model.head_dim >= 128 ? 1 : 0];
    return u->n ? uly_curve_eval(u, o->eff_size) : NAN;
}

static void run_plan(ug_ctx *c, const pspec *ps, int index)
{
    uly_workload w;
    memset(&w, 0, sizeof w);
    w.seq = ps->seq;
    w.micro_batch = 1;
    w.global_batch = 0;
    w.dtype = ULY_BF16;
    w.causal = 1;
    w.flash = 1;
    w.recompute = ULY_RECOMPUTE_FULL;
    w.zero_stage = 3;
    w.split = ps->split;
    uly_layout l;
    uly_layout_init(&l, ps->s, ps->u, ps->r, 1, 1);
    static uly_plan plan; /* large: keep it off the stack */
    static uly_result res;
    uly_reason reasons[ULY_MAX_REASONS];
    int nr = 0;
    char why[256];
    if (uly_workload_check(&w, why, sizeof why) != ULY_OK || uly_layout_check(&l, why, sizeof why) != ULY_OK) {
        printf("  plan %s: %s\n", ps->label, why);
        return;
    }
    if (uly_plan_build(&c->model, &w, &c->cluster, &l, &plan, reasons, &nr) != ULY_OK ||
        uly_plan_price(&c->model, &w, &c->cluster, &plan, &res) != ULY_OK) {
        printf("  plan %s: the model refused it\n", ps->label);
        return;
    }
    for (int i = 0; i < nr; i++)
        if (reasons[i].fatal) {
            uly_reason_format(&reasons[i], &c->model, why, sizeof why);
            printf("  plan %s: infeasible: %s\n", ps->label, why);
            return;
        }
    printf("\n  plan %d: %s — %s on %s, N = %lld, %s split, per-rank dims: %lld heads / %lld kv heads, attention "
           "%lld x %lld, GEMM tokens %lld\n",
           index, ps->label, c->model.name, c->cluster.name, (long long)ps->seq,
           uly_split_name(ps->split), (long long)plan.dims.heads,
           (long long)plan.dims.kv_heads, (long long)plan.dims.attn_q, (long long)plan.dims.attn_kv,
           (long long)plan.dims.tokens);
    printf("  %3s %-14s %-5s %-4s %12s %12s %7s %8s %8s  %s\n", "id", "op", "phase", "kind", "predicted_ms",
           "measured_ms", "ratio", "eff_now", "eff_pre", "note");
    {
        ug_json j;
        ug_j_begin(&j);
        ug_j_str(&j, "type", "plan");
        ug_j_int(&j, "index", index);
        ug_j_str(&j, "label", ps->label);
        ug_j_str(&j, "strategy", uly_strategy_get(ps->s)->name);
        ug_j_int(&j, "ulysses", ps->u);
        ug_j_int(&j, "ring", ps->r);
        ug_j_int(&j, "seq", ps->seq);
        ug_j_str(&j, "split", uly_split_name(ps->split));
        ug_j_str(&j, "dtype", uly_dtype_name(ULY_BF16));
        ug_j_bool(&j, "causal", 1);
        ug_j_str(&j, "recompute", "full");
        ug_j_int(&j, "heads", plan.dims.heads);
        ug_j_int(&j, "kv_heads", plan.dims.kv_heads);
        ug_j_int(&j, "attn_q", plan.dims.attn_q);
        ug_j_int(&j, "attn_kv", plan.dims.attn_kv);
        ug_j_int(&j, "gemm_tokens", plan.dims.tokens);
        ug_j_int(&j, "n_ops", plan.n_ops);
        ug_trace_line(&j);
    }
    measured *ms = ug_halloc(sizeof(measured) * (size_t)plan.n_ops);
    int fwd_id = -1, bwd_id = -1;
    for (int i = 0; i < plan.n_ops; i++) {
        const uly_op *o = &plan.ops[i];
        if (o->kind != ULY_OP_ATTN) continue;
        if (!o->flash) continue; /* materialised attention: not this kernel */
        if (o->type == ULY_OPT_ATTN_FWD && fwd_id < 0) fwd_id = i;
        if (o->type == ULY_OPT_ATTN_BWD && bwd_id < 0) bwd_id = i;
    }
    if (fwd_id >= 0 || bwd_id >= 0) {
        measured mf, mb;
        memset(&mf, 0, sizeof mf);
        memset(&mb, 0, sizeof mb);
        attn_ops(c, ps, &plan, fwd_id, bwd_id, &mf, &mb);
        if (fwd_id >= 0) ms[fwd_id] = mf;
        if (bwd_id >= 0) ms[bwd_id] = mb;
    }
    double pred_sum = 0, meas_sum = 0, pred_attn = 0, meas_attn = 0;
    int unmeasured = 0;
    for (int i = 0; i < plan.n_ops; i++) {
        const uly_op *o = &plan.ops[i];
        measured *m = &ms[i];
        if (!m->done && (o->kind == ULY_OP_GEMM || o->kind == ULY_OP_ATTN)) {
            for (int j = 0; j < i; j++)
                if (ms[j].done && same_op(&plan.ops[j], o)) {
                    *m = ms[j];
                    snprintf(m->note, sizeof m->note, "same work as op %d", j);
                    break;
                }
            if (!m->done && o->kind == ULY_OP_GEMM) {
                ug_gemm_shape s;
                if (ug_gemm_shape_of(&c->model, &w, &plan, o, &s))
                    gemm_op(c, &s, m);
                else {
                    m->done = -1;
                    snprintf(m->note, sizeof m->note, "GEMM shape not derivable from the plan");
                }
            }
            if (!m->done && o->kind == ULY_OP_ATTN) {
                m->done = -1;
                snprintf(m->note, sizeof m->note, o->flash ? "a second attention op of its kind" : "materialised attention");
            }
        }
        const double pred = res.op_time_s[i];
        const char *kind = uly_op_kind_name(o->kind);
        if (o->kind == ULY_OP_COMM || o->kind == ULY_OP_ELEM) {
            printf("  %3d %-14s %-5s %-4s %12.3f %12s %7s %8s %8s  %s\n", i, uly_op_type_name(o->type), uly_phase_name(o->phase), kind,
                   pred * 1e3, "-", "-", "-", "-", o->kind == ULY_OP_COMM ? "communication: not run on one GPU" : "elementwise: not run");
        } else if (m->done == 1) {
            const double meas = m->st.median_ms * 1e-3;
            /* the rank run here is the critical one: it does crit_factor times the op's (average) FLOPs */
            const double eff_now = o->flops * o->crit_factor / (meas * c->cluster.gpu.peak_flops[ULY_BF16]);
            const double eff_pre = preset_eff(c, o, 1);
            printf("  %3d %-14s %-5s %-4s %12.3f %12.3f %7.2f %8.3f %8.3f  %s\n", i, uly_op_type_name(o->type), uly_phase_name(o->phase),
                   kind, pred * 1e3, meas * 1e3, meas / pred, eff_now, eff_pre, m->note);
            if (!o->per_model) {
                pred_sum += pred;
                meas_sum += meas;
                if (o->kind == ULY_OP_ATTN) {
                    pred_attn += pred;
                    meas_attn += meas;
                }
            }
        } else {
            unmeasured++;
            printf("  %3d %-14s %-5s %-4s %12.3f %12s %7s %8s %8s  not run: %s\n", i, uly_op_type_name(o->type),
                   uly_phase_name(o->phase), kind, pred * 1e3, "-", "-", "-", "-", m->note);
        }
        ug_json j;
        ug_j_begin(&j);
        ug_j_str(&j, "type", "op");
        ug_j_int(&j, "plan", index);
        ug_j_int(&j, "id", o->id);
        ug_j_str(&j, "name", uly_op_type_name(o->type));
        ug_j_str(&j, "phase", uly_phase_name(o->phase));
        ug_j_str(&j, "kind", kind);
        ug_j_bool(&j, "recompute", o->recompute);
        ug_j_bool(&j, "per_model", o->per_model);
        ug_j_num(&j, "flops", o->flops);
        ug_j_num(&j, "bytes_touched", o->bytes_touched);
        ug_j_num(&j, "eff_size", o->eff_size);
        ug_j_int(&j, "steps", o->steps);
        ug_j_num(&j, "crit_factor", o->crit_factor);
        ug_j_num(&j, "predicted_s", pred);
        ug_j_bool(&j, "executed", m->done == 1);
        if (m->done == 1) {
            ug_j_num(&j, "measured_median_s", m->st.median_ms * 1e-3);
            ug_j_num(&j, "measured_min_s", m->st.min_ms * 1e-3);
            ug_j_num(&j, "measured_max_s", m->st.max_ms * 1e-3);
            ug_j_int(&j, "reps", m->st.reps);
            ug_j_num(&j, "ratio_measured_predicted", m->st.median_ms * 1e-3 / pred);
            ug_j_num(&j, "efficiency_measured",
                     o->flops * o->crit_factor / (m->st.median_ms * 1e-3 * c->cluster.gpu.peak_flops[ULY_BF16]));
            ug_j_num(&j, "efficiency_preset", preset_eff(c, o, 1));
        }
        ug_j_str(&j, "note", o->kind == ULY_OP_COMM ? "communication: not run on one GPU"
                             : o->kind == ULY_OP_ELEM ? "elementwise: not run"
                                                      : m->note);
        ug_trace_line(&j);
    }
    printf("  per layer (fwd + recompute + bwd), executed compute ops: predicted %.3f ms, measured %.3f ms (ratio "
           "%.2f); attention predicted %.3f ms, measured %.3f ms (ratio %.2f)%s\n",
           pred_sum * 1e3, meas_sum * 1e3, meas_sum / pred_sum, pred_attn * 1e3, meas_attn * 1e3,
           meas_attn / pred_attn, unmeasured ? "; some ops not run (see above)" : "");
    ug_summary(c, "plan %-22s compute/layer predicted %8.2f ms measured %8.2f ms (x%.2f); attention x%.2f",
               ps->label, pred_sum * 1e3, meas_sum * 1e3, meas_sum / pred_sum, meas_attn / pred_attn);
    ug_json j;
    ug_j_begin(&j);
    ug_j_str(&j, "type", "plan_total");
    ug_j_int(&j, "plan", index);
    ug_j_num(&j, "predicted_compute_s", pred_sum);
    ug_j_num(&j, "measured_compute_s", meas_sum);
    ug_j_num(&j, "predicted_attention_s", pred_attn);
    ug_j_num(&j, "measured_attention_s", meas_attn);
    ug_j_str(&j, "scope", "per layer: the forward, the recompute pass and the backward; executed GEMM and attention "
                          "ops only (per-micro-batch logits listed, not summed)");
    ug_trace_line(&j);
    free(ms);
}

void ug_plans(ug_ctx *c)
{
    printf("\n== plans: the model's predicted compute time per op (uly_plan_price) against this GPU\n");
    printf("  cluster: %s\n  model:   %s\n", c->cluster_src, c->model_src);
    printf("  ratio = measured / predicted; eff_now = FLOPs / (peak x measured), the efficiency the preset would need; "
           "eff_pre = the preset's\n");
    const int64_t n1 = c->o.quick ? 4096 : 16384, n8 = c->o.quick ? 8192 : 65536;
    const pspec plans[] = {
        {"P=1", ULY_STRAT_ULYSSES, 1, 1, n1, ULY_SPLIT_ZIGZAG},
        {"ulysses u=8, one rank", ULY_STRAT_ULYSSES, 8, 1, n8, ULY_SPLIT_ZIGZAG},
        {"ring r=8 zigzag, one rank", ULY_STRAT_RING, 1, 8, n8, ULY_SPLIT_ZIGZAG},
        {"ring r=8 contig, last rank", ULY_STRAT_RING, 1, 8, n8, ULY_SPLIT_CONTIGUOUS},
    };
    for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) {
        if (ug_over_budget(c, 0.85)) {
            printf("  skip the remaining plans: past 85%% of the time budget\n");
            break;
        }
        run_plan(c, &plans[i], (int)i);
    }
}
