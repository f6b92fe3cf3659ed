/* schedule.c: prices a plan. Compute ops cost FLOPs over (peak x efficiency)
 * or bytes over HBM bandwidth, whichever is larger, GEMMs on a GPU by their
 * shape (gemm.c), scaled by the critical rank's share of work (an op's time:
 * price_compute.h). Communication on the critical path (Ulysses'
 * all-to-alls, Megatron's all-gathers, RSA's rings) adds its full time; ring
 * transfers hide under the attention blocks they overlap, ZeRO traffic under
 * the whole phase's compute, per-step gradient reduction under the last
 * micro-batch's backward: each as far as the executor overlaps (the
 * cluster's overlap o: exposed = transfer - o x min(transfer, compute); with
 * o = 1 a ring step costs max(block compute, hop)), and the compute under a
 * hidden transfer slows by the GPU's comm_slowdown. A pipeline of pp stages runs
 * 1F1B (Narayanan et al. 2021): m micro-batches take (m + pp - 1) slots of
 * the slowest stage, the last (its layers, the logits and loss, and the
 * transfers to and from its neighbours), so pp - 1 slots are bubble. */
#include <math.h>
#include <string.h>

#include "gemm.h"
#include "internal.h"
#include "price_compute.h"

/* uly_overlap_exposed, inline for the pricing's few calls per plan */
static inline __attribute__((always_inline)) double overlap_exposed(const uly_cluster *c, double transfer_s,
                                                                    double compute_s)
{
    const double o = 1.0 - c->overlap_miss;
    const double e = transfer_s - o * (transfer_s < compute_s ? transfer_s : compute_s);
    return e > 0 ? e : 0;
}

double uly_overlap_exposed(const uly_cluster *c, double transfer_s, double compute_s)
{
    return overlap_exposed(c, transfer_s, compute_s);
}

/* The traffic totals: the strategy's per-layer traffic by phase (recompute
 * also on its own), ZeRO and data-parallel traffic apart, and the tiers it
 * crosses (the pipeline's stage transfers count for the tiers only). An
 * overflow is remembered in ovf. */
typedef struct traffic {
    int64_t fwd, bwd, recompute, zero;
    uint8_t tiers;
    int ovf;
} traffic;

/* A per-layer strategy op's bytes: by name, not dir[phase], as an indexed
 * total lives in memory, and every comm op's add would wait on the previous
 * one's store. */
static inline void traffic_add(traffic *x, const uly_op *o)
{
    const int64_t b = o->bytes_sent;
    if (o->phase == ULY_PHASE_FWD) x->ovf |= __builtin_add_overflow(x->fwd, b, &x->fwd);
    else x->ovf |= __builtin_add_overflow(x->bwd, b, &x->bwd);
    if (o->recompute) x->ovf |= __builtin_add_overflow(x->recompute, b, &x->recompute);
}

/* ZeRO-3's layer gathers: all, those on the critical path, those hidden
 * under each phase, the forward one (the step's first) */
typedef struct zero_gathers {
    double all, crit, bg[2], first;
} zero_gathers;

static inline void zero_gather(zero_gathers *z, const uly_op *o, double ti)
{
    z->all += ti;
    if (o->overlaps == ULY_OVERLAP_PHASE) z->bg[o->phase] += ti;
    else z->crit += ti;
    if (o->phase == ULY_PHASE_FWD) z->first = ti;
}

/* The transfers that hide under an op (a ring hop under its attention
 * block, a TP collective under its GEMM): per such op, their time and most
 * hops, set when the first transfer names it (a TP collective may sit under
 * a GEMM emitted after it), which `mark` records, rather than cleared for
 * every op; ops lists them in that order. */
typedef struct hidden {
    int n;
    int ops[ULY_PLAN_MAX_OPS];
    int hops[ULY_PLAN_MAX_OPS];
    int chunks[ULY_PLAN_MAX_OPS]; /* a GEMM's: the chunks its TP collectives are pipelined in */
    double s[ULY_PLAN_MAX_OPS];
    double sw[ULY_PLAN_MAX_OPS];  /* their seconds weighted by the slowdown each causes */
    uint64_t mark[(ULY_PLAN_MAX_OPS + 63) / 64];
} hidden;

static inline __attribute__((always_inline)) void hidden_add(hidden *h, int a, const uly_op *o, double ti,
                                                             double sigma)
{
    const uint64_t bit = 1ull << (a & 63);
    if (!(h->mark[a >> 6] & bit)) {
        h->mark[a >> 6] |= bit;
        h->ops[h->n++] = a;
        h->s[a] = h->sw[a] = 0;
        h->hops[a] = h->chunks[a] = 0;
    }
    h->s[a] += ti;
    h->sw[a] += ti * sigma;
    if (o->steps > h->hops[a]) h->hops[a] = o->steps;
    if (o->group_size > h->chunks[a]) h->chunks[a] = o->group_size;
}

/* a transfer's comm_sigma, from the rates */
static inline double op_sigma(const rates *r, const uly_op *o)
{
    return r->sigma[(o->tiers & ULY_TIER_INTER) ? 1 : 0];
}

/* A layer op's share of the per-layer sums, taken by the loop over the ops
 * and by the pass over full recompute's copy alike: each phase's critical
 * path in its own field (not crit[phase]): a sum through memory would chain
 * every op's add behind the last one's store; the struct stays in registers
 * once the helpers are inlined. */
typedef struct layer_sums {
    double crit_f, crit_b, compute_s, exposed_s, hw_flops;
    int kern_f, kern_b; /* kernels each phase launches (collectives one each) */
} layer_sums;

static inline __attribute__((always_inline)) void layer_compute_add(layer_sums *ls, const uly_op *o, double ti, int k)
{
    ls->hw_flops += o->flops;
    if (o->phase == ULY_PHASE_FWD) ls->crit_f += ti, ls->kern_f += k;
    else ls->crit_b += ti, ls->kern_b += k;
    ls->compute_s += ti;
}

/* a transfer on the critical path */
static inline __attribute__((always_inline)) void layer_exposed_add(layer_sums *ls, const uly_op *o, double ti)
{
    if (o->phase == ULY_PHASE_FWD) ls->crit_f += ti;
    else ls->crit_b += ti;
    ls->exposed_s += ti;
}

/* a layer's collective is one kernel the host issues, exposed or hidden */
static inline __attribute__((always_inline)) void layer_comm_kernel(layer_sums *ls, const uly_op *o)
{
    if (o->phase == ULY_PHASE_FWD) ls->kern_f++;
    else ls->kern_b++;
}

/* The collectives a plan prices repeat: a layer's backward moves what its
 * forward moved, over the same groups. Their times, remembered while
 * pricing one plan (the placements do not change meanwhile), by what
 * uly_cost_collective reads of the op: two per group, the older replaced.
 * A group's collectives alternate between a few sizes (Ulysses' Q and KV),
 * and a fixed pair of tests costs less time than a search of every
 * collective so far, whose length varies from op to op (its branches
 * mispredict): bench/model/paired.sh, fastest batches. */
typedef struct coll_memo {
    struct {
        int64_t bytes;
        int32_t steps;
        uly_coll coll;
        int32_t split; /* a layer's ZeRO-3 gather, priced in the framework's messages */
        double s;
    } e[ULY_GROUP_COUNT][2];
    uint8_t next[ULY_GROUP_COUNT];
    int zero_msgs; /* the messages of a layer's ZeRO-3 gather (uly_zero_gather_msgs) */
} coll_memo;

static inline __attribute__((always_inline)) double coll_time(coll_memo *mm, const uly_cluster *c, const uly_plan *plan, const uly_op *o)
{
    const unsigned g = (unsigned)o->group;
    /* a layer's ZeRO-3 gather sent in several messages (DeepSpeed: a
     * submodule at a time) pays each message's latency and protocol */
    const int32_t split = o->type == ULY_OPT_ZERO_GATHER_W && !o->per_step;
    if (g < ULY_GROUP_COUNT)
        for (int j = 0; j < 2; j++)
            if (mm->e[g][j].bytes == o->bytes_sent && mm->e[g][j].coll == o->coll && mm->e[g][j].steps == o->steps &&
                mm->e[g][j].split == split)
                return mm->e[g][j].s;
    const uly_group_place *q = &plan->place[o->group];
    double s;
    if (__builtin_expect(split, 0)) {
        const int msgs = mm->zero_msgs;
        s = (double)msgs * uly_cost_collective(c, o->coll, q, (double)o->bytes_sent / (double)msgs, o->steps,
                                               q->node_groups);
    } else {
        s = uly_cost_collective(c, o->coll, q, (double)o->bytes_sent, o->steps, q->node_groups);
    }
    if (g < ULY_GROUP_COUNT) {
        const int j = mm->next[g];
        mm->next[g] ^= 1;
        mm->e[g][j].bytes = o->bytes_sent, mm->e[g][j].coll = o->coll, mm->e[g][j].steps = o->steps;
        mm->e[g][j].split = split;
        mm->e[g][j].s = s;
    }
    return s;
}

/* What stays fixed while the ops are priced: the specs, res's per-op
 * arrays (t, ex), the compute times kept or reused, which totals are
 * wanted, and the pass's own tables (locals of price) */
typedef struct pricing {
    const uly_cluster *c;
    const uly_plan *plan;
    int n;                 /* the plan's ops */
    double *t, *ex;        /* res->op_time_s, res->op_exposed_s */
    double *keep;          /* the compute times, kept for a later reuse (or NULL) */
    const double *reuse;   /* the compute times to take rather than work out (or NULL) */
    int totals;            /* the traffic totals wanted */
    int bytes;             /* their bytes too (reused: the byte totals in res stand) */
    rates *rt;
    coll_memo *memo;
    hidden *hd;
    int *late;             /* comm ops whose exposure is known only at the end */
    /* ZeRO's gathers; ZeRO's background per phase, and weighted by the
     * slowdown it causes (arrays indexed by phase: apart from op_sums,
     * which stays in registers) */
    zero_gathers *zg;
    double *bg, *bgw;
} pricing;

/* The pass's sums: the per-layer ones, the traffic, the per-micro-batch
 * and per-step extras; summed in a local (stores through res could alias
 * the plan's ops) of scalars alone, which GCC keeps in registers */
typedef struct op_sums {
    layer_sums ls;
    traffic tr;
    double model_s, step_fixed, dp_grad, dp_w, hw_model;
    double pgather, pg_w; /* the per-step weight gather, when the next step's forward hides it */
    double rs_layer;      /* ZeRO-3: a layer's gradient reduce-scatter under backward */
    int n_late;           /* the entries of pricing.late */
    int odd;              /* ops the copy's pass does not handle (ops_pass) */
} op_sums;

/* A compute op: its time; the phase's critical path, or the micro-batch's
 * model ops, or the step's fixed cost */
static inline __attribute__((always_inline)) void op_compute(op_sums *s, const pricing *x, int i, const uly_op *o,
                                                             int rare)
{
    const int k = uly_op_kernels(o); /* read once: the time's launches and the phase's kernel count */
    const double ti = x->reuse ? x->reuse[i] : compute_time(x->rt, o, k);
    if (x->keep) x->keep[i] = ti;
    x->t[i] = ti;
    x->ex[i] = ti;
    if (__builtin_expect(rare, 0)) {
        s->odd++;
        if (o->per_step) {
            s->step_fixed += ti;
        } else {
            s->model_s += ti;
            s->hw_model += o->flops;
        }
        return;
    }
    layer_compute_add(&s->ls, o, ti, k);
}

/* A comm op once per step or per micro-batch: the model's share, or the
 * step's, exposed or under a whole phase */
static inline __attribute__((always_inline)) void op_comm_rare(op_sums *s, const pricing *x, int i, const uly_op *o,
                                                               double ti)
{
    s->odd++;
    /* of the traffic, only the pipeline's stage transfers' tiers */
    if (x->totals && o->group == ULY_GROUP_PP) s->tr.tiers |= o->tiers;
    if (o->type == ULY_OPT_ZERO_GATHER_W && !o->per_step) zero_gather(x->zg, o, ti);
    if (!o->per_step) {
        s->model_s += ti;
    } else if (o->overlaps == ULY_OVERLAP_PHASE) {
        if (o->type == ULY_OPT_ZERO_GATHER_W) s->pgather += ti, s->pg_w += ti * op_sigma(x->rt, o);
        else s->dp_grad += ti, s->dp_w += ti * op_sigma(x->rt, o);
        x->late[s->n_late++] = i;
    } else {
        s->step_fixed += ti;
    }
}

/* A layer op's traffic, in the totals (a re-placed plan's bytes stand:
 * its tiers alone) */
static inline __attribute__((always_inline)) void op_traffic(op_sums *s, const pricing *x, const uly_op *o)
{
    if (!x->totals) return;
    s->tr.tiers |= o->tiers;
    if (x->bytes) traffic_add(&s->tr, o);
}

/* A layer's comm op: its kernel; on the critical path, under a whole phase
 * (in_phase: not in the copy's pass) or under another op */
static inline __attribute__((always_inline)) void op_comm_layer(op_sums *s, const pricing *x, int i,
                                                                const uly_op *o, double ti, int in_phase)
{
    layer_comm_kernel(&s->ls, o);
    if (o->overlaps == ULY_OVERLAP_NONE) {
        layer_exposed_add(&s->ls, o, ti);
    } else if (in_phase && o->overlaps == ULY_OVERLAP_PHASE) {
        s->odd++;
        if (o->type == ULY_OPT_ZERO_RS_GRAD) s->rs_layer += ti;
        x->bg[o->phase] += ti;
        x->bgw[o->phase] += ti * op_sigma(x->rt, o);
        x->late[s->n_late++] = i;
    } else if (o->overlaps >= 0 && o->overlaps < x->n && o->overlaps != i) {
        hidden_add(x->hd, o->overlaps, o, ti, op_sigma(x->rt, o));
        x->late[s->n_late++] = i;
    }
}

/* A comm op: its time, then where it goes */
static inline __attribute__((always_inline)) void op_comm(op_sums *s, const pricing *x, int i, const uly_op *o,
                                                          int rare)
{
    const double ti = coll_time(x->memo, x->c, x->plan, o);
    x->t[i] = ti;
    x->ex[i] = ti;
    if (__builtin_expect(rare, 0)) {
        op_comm_rare(s, x, i, o, ti);
        return;
    }
    /* the traffic totals, then where the time goes */
    if (o->group == ULY_GROUP_ZERO || o->group == ULY_GROUP_DP) {
        s->odd++;
        if (x->bytes) s->tr.ovf |= __builtin_add_overflow(s->tr.zero, o->bytes_sent, &s->tr.zero);
    } else {
        op_traffic(s, x, o);
    }
    if (o->type == ULY_OPT_ZERO_GATHER_W) {
        s->odd++;
        zero_gather(x->zg, o, ti);
    }
    op_comm_layer(s, x, i, o, ti, 1);
}

/* Full recompute's copy of the forward ops: the loop's steps for a layer
 * op on the critical path or under another op, its time the forward op's.
 * The copy's integer sums are the forward ops' too (fwd: what the pass
 * counted over them, src_*): their kernels, all in backward; their bytes,
 * backward's and recompute's (the adds wrap as the op-by-op adds would, and
 * as no op sends negative bytes, one overflows when any of those would);
 * their tiers, in the mask already. */
typedef struct copy_src {
    int kern;
    int64_t bytes;
} copy_src;

static inline __attribute__((always_inline)) copy_src copy_src_of(const op_sums *s)
{
    return (copy_src){s->ls.kern_f + s->ls.kern_b, (int64_t)((uint64_t)s->tr.fwd + (uint64_t)s->tr.bwd)};
}

static inline __attribute__((always_inline)) void copy_pass(op_sums *s, const pricing *x, int rc_at, int rc_n,
                                                            copy_src from)
{
    const copy_src to = copy_src_of(s);
    s->ls.kern_b += to.kern - from.kern;
    if (x->bytes) {
        const int64_t b = (int64_t)((uint64_t)to.bytes - (uint64_t)from.bytes);
        s->tr.ovf |= __builtin_add_overflow(s->tr.bwd, b, &s->tr.bwd);
        s->tr.ovf |= __builtin_add_overflow(s->tr.recompute, b, &s->tr.recompute);
    }
    layer_sums *ls = &s->ls;
    for (int j = rc_at; j < rc_at + rc_n; j++) {
        const uly_op *o = &x->plan->ops[j];
        const double ti = x->t[j - rc_n];
        x->t[j] = ti;
        x->ex[j] = ti;
        if (o->kind != ULY_OP_COMM) {
            if (x->keep) x->keep[j] = ti;
            ls->hw_flops += o->flops;
            ls->crit_b += ti;
            ls->compute_s += ti;
        } else if (o->overlaps == ULY_OVERLAP_NONE) {
            ls->crit_b += ti;
            ls->exposed_s += ti;
        } else if (o->overlaps >= 0 && o->overlaps < x->n && o->overlaps != j) {
            hidden_add(x->hd, o->overlaps, o, ti, op_sigma(x->rt, o));
            x->late[s->n_late++] = j;
        }
    }
}

/* One pass over the ops: each op's time; the per-layer critical path of
 * each phase; the background (ZeRO) totals; for each attention op the
 * transfers that hide under it; the per-micro-batch and per-step extras */
static inline __attribute__((always_inline)) void ops_pass(op_sums *s, const pricing *x, int copies)
{
    const uly_plan *plan = x->plan;
    const int n = x->n;
    /* full recompute's copy of the forward ops (copies: the plan as
     * uly_plan_build left it) takes their times rather than working them
     * out again, a quarter of a plan's ops, when the copy follows them and
     * none of them is one the copy's pass below does not handle: `odd`
     * counts those (per-step and per-micro-batch ops, ZeRO and data-parallel
     * traffic, transfers under a whole phase) */
    const int rc_src = plan->recompute_src, rc_at = plan->recompute_at, rc_n = plan->recompute_ops;
    const int copy = copies && rc_n > 0 && rc_src >= 0 && rc_at == rc_src + rc_n && rc_at + rc_n <= n;
    int odd_src = 0;
    copy_src src = {0, 0};
    /* the ops in runs, the copy's bounds between them, so that the loop
     * over a run tests nothing more than its end */
    int lo = 0, hi = copy ? rc_src : n;
    for (;;) {
        for (int i = lo; i < hi; i++) {
            const uly_op *o = &plan->ops[i];
            /* once per step or per micro-batch: the exceptions, a few per plan */
            const int rare = o->per_step | o->per_model;
            if (o->kind != ULY_OP_COMM) op_compute(s, x, i, o, rare);
            else op_comm(s, x, i, o, rare);
        }
        if (hi == n) break;
        lo = hi;
        if (hi == rc_src) { /* the forward ops start */
            odd_src = s->odd;
            src = copy_src_of(s);
            hi = rc_at;
            continue;
        }
        hi = n;
        if (s->odd != odd_src) continue; /* priced op by op */
        copy_pass(s, x, rc_at, rc_n, src);
        lo = rc_at + rc_n;
    }
}

/* The transfers hidden under an op: ring transfers: a step costs max(block
 * compute, hop) under full overlap; a TP collective under its GEMM (one
 * step) shows what outlasts the GEMM. Each one's exposed fraction into
 * frac, the hidden ops' critical path into crit. */
static inline __attribute__((always_inline)) void hidden_settle(uly_timing *tm, double crit[2], double *frac,
                                                                const pricing *x)
{
    const hidden *hd = x->hd;
    double *t = x->t, *ex = x->ex;
    for (int j = 0; j < hd->n; j++) {
        const int a = hd->ops[j];
        const uly_op *A = &x->plan->ops[a];
        const double blk = t[a] / (double)(A->steps > 0 ? A->steps : 1);
        double e = overlap_exposed(x->c, hd->s[a], (double)hd->hops[a] * blk);
        if (A->kind == ULY_OP_GEMM && hd->chunks[a] > 1) {
            /* TP collectives pipelined with their GEMM in chunks (one per TP
             * rank, TransformerEngine's userbuffers): the first chunk's
             * transfer (all-gather) or the last's (reduce-scatter) has no
             * GEMM chunk beside it */
            const double h = hd->s[a] - e;
            e += (h < blk ? h : blk) / (double)hd->chunks[a];
            if (e > hd->s[a]) e = hd->s[a];
        }
        const double slow = hd->s[a] > 0 ? (hd->s[a] - e) * (hd->sw[a] / hd->s[a]) : 0; /* the blocks under the hops, slowed */
        t[a] += slow;
        ex[a] += slow;
        crit[A->phase] += e + slow;
        tm->compute_s += slow;
        tm->comm_exposed_s += e;
        tm->comm_overlapped_s += hd->s[a] - e;
        frac[a] = e / hd->s[a];
    }
}

/* The phases' background: ZeRO's prefetch, of which only what outlasts the
 * phase's critical path shows (each phase's exposed fraction into bg_frac),
 * and the host's issue of the phase's kernels */
static inline __attribute__((always_inline)) void phase_background(uly_timing *tm, double crit[2], double bg_frac[2],
                                                                   const op_sums *s, const pricing *x,
                                                                   const uly_workload *w)
{
    const uly_cluster *c = x->c;
    const double *bg = x->bg, *bgw = x->bgw;
    for (int ph = 0; ph < 2; ph++) {
        bg_frac[ph] = 0;
        if (bg[ph] <= 0) continue;
        const double e = overlap_exposed(c, bg[ph], crit[ph]);
        tm->layer_slowdown_s[ph] = (bg[ph] - e) * (bgw[ph] / bg[ph]);
        crit[ph] += e + tm->layer_slowdown_s[ph];
        tm->compute_s += tm->layer_slowdown_s[ph]; /* compute, slowed */
        tm->comm_exposed_s += e;
        tm->comm_overlapped_s += bg[ph] - e;
        bg_frac[ph] = e / bg[ph];
    }
    /* an eager framework issues each kernel from the host: a phase whose
     * kernels are shorter than their issue waits on the host */
    const double host_s = w->cuda_graphs ? 0.0 : c->host_launch_s;
    const int kern[2] = {s->ls.kern_f, s->ls.kern_b};
    for (int ph = 0; ph < 2; ph++)
        if ((double)kern[ph] * host_s > crit[ph]) {
            tm->layer_host_wait_s[ph] = (double)kern[ph] * host_s - crit[ph];
            crit[ph] = (double)kern[ph] * host_s;
            tm->compute_s += tm->layer_host_wait_s[ph]; /* the compute stream, waiting on its kernels' issue */
        }
}

/* What the step's fixed cost reads of the pass: its per-step sums, the
 * late comm ops, ZeRO's gathers (a copy: their address is not taken) and
 * the ops' times. Its own struct, filled field by field, rather than
 * op_sums and pricing whole: price_rare takes its address, and the
 * aggregate copies of those that its call took kept a memory image of
 * them on the common path too (about 60 instructions per evaluation,
 * plan_bench under callgrind). */
typedef struct step_in {
    const uly_cluster *c;
    const uly_plan *plan;
    double *t, *ex;
    const int *late;
    zero_gathers zg;
    double step_fixed, dp_grad, dp_w, pgather, pg_w, rs_layer;
    int n_late;
} step_in;

static inline __attribute__((always_inline)) step_in step_in_of(const op_sums *s, const pricing *x)
{
    return (step_in){.c = x->c, .plan = x->plan, .t = x->t, .ex = x->ex, .late = x->late, .zg = *x->zg,
                     .step_fixed = s->step_fixed, .dp_grad = s->dp_grad, .dp_w = s->dp_w, .pgather = s->pgather,
                     .pg_w = s->pg_w, .rs_layer = s->rs_layer, .n_late = s->n_late};
}

/* The step's fixed cost: its own ops, the gradient buckets and the weight
 * gather beside the layers, ZeRO-3's first gather and last reduce-scatter,
 * the host's work; the late comm ops' exposed times */
static inline __attribute__((always_inline)) double step_fixed_s(uly_timing *tm, const step_in *s,
                                                                 const double *frac, const double bg_frac[2],
                                                                 const uly_workload *w)
{
    const uly_cluster *c = s->c;
    const uly_plan *plan = s->plan;
    const double L = (double)plan->stage_layers;
    double step_fixed = s->step_fixed;
    /* gradient buckets reduce while the last micro-batch's backward runs;
     * the last bucket only starts once backward is done. The per-step
     * weight gather, overlapped, runs bucket by bucket under the next
     * step's first forward, the first bucket before it. */
    const double fb = uly_bucket_fraction(w, plan);
    const double hide = L * tm->layer_bwd_s;
    const double dp_grad = s->dp_grad, pgather = s->pgather;
    double dp_e = overlap_exposed(c, dp_grad, hide);
    if (dp_e < dp_grad * fb) dp_e = dp_grad * fb;
    step_fixed += dp_e + (dp_grad > 0 ? (dp_grad - dp_e) * (s->dp_w / dp_grad) : 0);
    double pg_e = overlap_exposed(c, pgather, L * tm->layer_fwd_s);
    if (pg_e < pgather * fb) pg_e = pgather * fb;
    step_fixed += pg_e + (pgather > 0 ? (pgather - pg_e) * (s->pg_w / pgather) : 0);
    double *t = s->t, *ex = s->ex;
    for (int j = 0; j < s->n_late; j++) {
        const int i = s->late[j];
        const uly_op *o = &plan->ops[i];
        if (o->per_step) ex[i] = o->type == ULY_OPT_ZERO_GATHER_W ? t[i] * pg_e / pgather : t[i] * dp_e / dp_grad;
        else if (o->overlaps == ULY_OVERLAP_PHASE) ex[i] = t[i] * bg_frac[o->phase];
        else ex[i] = t[i] * frac[o->overlaps];
    }
    /* ZeRO-3's gathers per step: what the phases did not hide; the step's
     * first gather (the first layer's, before any compute) has nothing to
     * hide under when prefetching */
    const double gathers = (double)plan->micro_steps * L;
    const zero_gathers *zg = &s->zg;
    const double zg_ex = zg->crit + zg->bg[0] * bg_frac[0] + zg->bg[1] * bg_frac[1];
    tm->zero_gather_s = gathers * zg->all;
    tm->zero_gather_exposed_s = gathers * zg_ex;
    if (zg->first > 0 && uly_zero_prefetch_layers(w) > 0) {
        step_fixed += zg->first;
        tm->zero_gather_exposed_s += zg->first * (1.0 - bg_frac[0]);
    }
    /* and the step's last gradient reduce-scatter (the first layer's) has
     * no backward left to hide under: the optimizer waits for it */
    step_fixed += s->rs_layer * (1.0 - bg_frac[1]);
    step_fixed += w->step_overhead_s; /* the host's own work per step, as the user gave it */
    return step_fixed;
}

/* The step's time, throughput and FLOPs, from the layers' critical paths,
 * the model ops and the step's fixed cost (in tm) */
static inline __attribute__((always_inline)) void step_time(uly_timing *tm, const uly_model *m, const uly_workload *w,
                                                            const uly_cluster *c, const uly_plan *plan,
                                                            double layer_hw_flops, double hw_model,
                                                            const double *staged_op_s)
{
    const double L = (double)plan->stage_layers, pp = (double)plan->layout.pp;
    const uly_layout *l = &plan->layout;
    const int64_t gpus = uly_layout_gpus(l);
    const double seqs = w->global_batch > 0 ? (double)w->global_batch : (double)w->micro_batch * (double)l->dp;
    tm->micro_steps = plan->micro_steps;
    /* 1F1B: m + pp - 1 slots of a stage's micro-batch; interleaved over V
     * virtual stages the fill and drain shrink to (pp - 1) / V of a slot
     * (Narayanan et al. 2021: bubble (pp - 1) / (V m) of the ideal step) */
    if (staged_op_s) {
        /* an uneven split (price_rare's call; NULL, a constant, in
         * price's): each stage's own layers and end ops, the step paced by
         * the heaviest (pipeline.c) */
        double pace_s;
        const double pipe =
            uly_pp_staged_s(plan, staged_op_s, tm->layer_fwd_s + tm->layer_bwd_s, tm->model_s, tm, &pace_s);
        tm->slots = pace_s > 0 ? pipe / pace_s : 0;
        tm->step_s = pipe + tm->step_fixed_s;
    } else {
        const double lag = (pp - 1.0) / (double)(plan->vpp > 1 ? plan->vpp : 1);
        const double slots = (double)tm->micro_steps + lag;
        tm->pp_bubble = lag / slots;
        tm->slots = slots;
        tm->stage_layers = plan->stage_layers;
        tm->step_s = slots * (L * (tm->layer_fwd_s + tm->layer_bwd_s) + tm->model_s) + tm->step_fixed_s;
    }
    tm->tokens_per_s = seqs * (double)w->seq / tm->step_s;

    tm->model_flops = uly_flops_model_step(m, w, seqs);
    /* every GPU runs its stage's layers, the end stages the model ops */
    tm->hw_flops = ((double)m->layers * layer_hw_flops + hw_model) * (double)tm->micro_steps * (double)gpus / pp;
    /* FP8 training's MFU against the bf16 peak, as NVIDIA's tables report
     * it (uly_mfu_at gives it against any other) */
    const double peak = c->gpu.peak_flops[w->dtype == ULY_FP8 ? ULY_BF16 : w->dtype];
    tm->tflops_per_gpu = tm->model_flops / tm->step_s / (double)gpus / 1e12;
    tm->mfu = tm->model_flops / (tm->step_s * (double)gpus * peak);
    tm->hfu = tm->hw_flops / (tm->step_s * (double)gpus * peak);
}

/* The rest of a rare plan's price (plan->price_rare), after the common
 * one: the block method's layers not recomputed and offload's transfers in
 * the layer's times (recompute.c), then the step's fixed cost and time
 * again from them, stage by stage under an uneven split (pipeline.c). Kept
 * out of price, whose common path it would otherwise weigh on. */
__attribute__((cold, noinline)) static void price_rare(uly_timing *tm, const step_in *s, double layer_hw,
                                                       double hw_model, const double *frac, const double bg_frac[2],
                                                       const uly_model *m, const uly_workload *w)
{
    const uly_plan *plan = s->plan;
    if ((plan->recompute_skip > 0) | (plan->offload_share > 0)) uly_recompute_price(s->c, w, plan, s->ex, tm, &layer_hw);
    tm->step_fixed_s = step_fixed_s(tm, s, frac, bg_frac, w);
    step_time(tm, m, w, s->c, plan, layer_hw, hw_model, plan->pp_staged ? s->t : NULL);
}

/* Prices the plan; with totals, in the same pass over the ops, also the
 * traffic totals (ULY_EOVERFLOW when one overflows). The compute times are
 * taken from times where given: the caller's, kept from an earlier pricing
 * of the plan (reused: the byte totals in res stand), or FP8 training's. */
static inline __attribute__((always_inline)) uly_status
price_ops(const uly_model *m, const uly_workload *w, const uly_cluster *c, const uly_plan *plan, uly_result *res,
          int totals, double *compute_s_keep, const double *times, int reused, int copies)
{
    rates rt;
    rates_init(&rt, m, w, c);
    uly_timing *tm = &res->time;
    /* the timing's sums start at 0; every other field is set below (a
     * memset of the whole struct cost more than the pricing of a few ops) */
    _Static_assert(sizeof(uly_timing) == 24 * sizeof(double), "uly_timing changed: set its new field in price");
    tm->comm_overlapped_s = 0;
    tm->layer_slowdown_s[0] = tm->layer_slowdown_s[1] = 0;
    tm->layer_host_wait_s[0] = tm->layer_host_wait_s[1] = 0;
    int late[ULY_PLAN_MAX_OPS];
    hidden hd;
    hd.n = 0;
    memset(hd.mark, 0, sizeof hd.mark);
    zero_gathers zg = {0, 0, {0, 0}, 0};
    double bg[2] = {0, 0}, bgw[2] = {0, 0};
    coll_memo memo;
    for (int k = 0; k < ULY_GROUP_COUNT; k++) {
        memo.e[k][0].bytes = memo.e[k][1].bytes = -1; /* no transfer has negative bytes */
        memo.next[k] = 0;
    }
    memo.zero_msgs = uly_zero_gather_msgs(m, w);
    const pricing x = {.c = c, .plan = plan, .n = plan->n_ops, .t = res->op_time_s, .ex = res->op_exposed_s,
                       .keep = compute_s_keep, .reuse = times, .totals = totals,
                       .bytes = totals && !reused, .rt = &rt, .memo = &memo, .hd = &hd, .late = late,
                       .zg = &zg, .bg = bg, .bgw = bgw};
    /* summed in locals: stores through res could alias the plan's ops */
    op_sums s = {0};
    ops_pass(&s, &x, copies);

    int ovf = 0;
    double crit[2] = {s.ls.crit_f, s.ls.crit_b};
    tm->compute_s = s.ls.compute_s;
    tm->comm_exposed_s = s.ls.exposed_s;
    if (reused) {
        res->comm_tiers = s.tr.tiers;
    } else if (totals) {
        ovf = s.tr.ovf;
        res->comm_fwd_bytes = s.tr.fwd, res->comm_bwd_bytes = s.tr.bwd;
        res->comm_recompute_bytes = s.tr.recompute, res->zero_bytes = s.tr.zero;
        res->comm_tiers = s.tr.tiers;
    }
    double frac[ULY_PLAN_MAX_OPS], bg_frac[2];
    hidden_settle(tm, crit, frac, &x);
    phase_background(tm, crit, bg_frac, &s, &x, w);
    tm->layer_fwd_s = crit[0];
    tm->layer_bwd_s = crit[1];
    tm->model_s = s.model_s;
    const step_in si = step_in_of(&s, &x);
    tm->step_fixed_s = step_fixed_s(tm, &si, frac, bg_frac, w);
    step_time(tm, m, w, c, plan, s.ls.hw_flops, s.hw_model, NULL);
    /* an uneven pipeline, the block method, activation offload: priced
     * again from here, apart from the common path */
    if (__builtin_expect(plan->price_rare, 0)) {
        /* a copy: si's address taken would keep it out of registers on
         * the common path */
        const step_in si_rare = step_in_of(&s, &x);
        price_rare(tm, &si_rare, s.ls.hw_flops, s.hw_model, frac, bg_frac, m, w);
    }
    return ovf ? ULY_EOVERFLOW : ULY_OK;
}

/* The pricings that keep the compute times, and that take them (reused:
 * the byte totals in res stand): out of line, FP8 training's pricing calls
 * them too */
__attribute__((noinline)) static uly_status price_keep(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                                                       const uly_plan *plan, uly_result *res, double *compute_s)
{
    if (!m || !w || !c || !plan || !res) return ULY_EINVAL;
    return price_ops(m, w, c, plan, res, 1, compute_s, NULL, 0, 1);
}

__attribute__((noinline)) static uly_status price_reuse(const uly_model *m, const uly_workload *w,
                                                        const uly_cluster *c, const uly_plan *plan, uly_result *res,
                                                        const double *compute_s)
{
    if (!m || !w || !c || !plan || !res) return ULY_EINVAL;
    return price_ops(m, w, c, plan, res, 1, NULL, compute_s, 1, 1);
}

/* FP8 training's pricing: the plan priced keeping its compute times (the
 * traffic totals with them), the GEMM ops' times replaced by FP8 training's
 * (fp8_gemm_times), then priced again taking those; keep: where the caller
 * wants them, or NULL. Out of the bf16 path, which prices as before. */
__attribute__((noinline, cold)) static uly_status price_fp8(const uly_model *m, const uly_workload *w,
                                                            const uly_cluster *c, const uly_plan *plan,
                                                            uly_result *res, double *keep)
{
    double t[ULY_PLAN_MAX_OPS];
    const uly_status st = price_keep(m, w, c, plan, res, t);
    if (st != ULY_OK) return st;
    uly_fp8_gemm_times(m, w, c, plan, t);
    if (keep) memcpy(keep, t, sizeof t[0] * (size_t)plan->n_ops);
    return price_reuse(m, w, c, plan, res, t);
}

static inline __attribute__((always_inline)) uly_status
price(const uly_model *m, const uly_workload *w, const uly_cluster *c, const uly_plan *plan, uly_result *res,
      int totals, int copies)
{
    if (!m || !w || !c || !plan || !res) return ULY_EINVAL;
    if (__builtin_expect(w->dtype == ULY_FP8, 0)) return price_fp8(m, w, c, plan, res, NULL);
    return price_ops(m, w, c, plan, res, totals, NULL, NULL, 0, copies);
}

uly_status uly_plan_price(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                          const uly_plan *plan, uly_result *res)
{
    return price(m, w, c, plan, res, 0, 0);
}

uly_status uly_plan_price_totals(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                                 const uly_plan *plan, uly_result *res)
{
    return price(m, w, c, plan, res, 1, 1);
}

uly_status uly_plan_price_keep(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                               const uly_plan *plan, uly_result *res, double *compute_s)
{
    if (w && __builtin_expect(w->dtype == ULY_FP8, 0)) return price_fp8(m, w, c, plan, res, compute_s);
    return price_keep(m, w, c, plan, res, compute_s);
}

uly_status uly_plan_price_reuse(const uly_model *m, const uly_workload *w, const uly_cluster *c,
                                const uly_plan *plan, uly_result *res, const double *compute_s)
{
    return price_reuse(m, w, c, plan, res, compute_s);
}
