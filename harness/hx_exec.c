/* hx_exec.c: runs the plan. Every op of the plan is executed by the handler
 * registered for its type (hx_layer.c, hx_attn.c); an op without a handler
 * stops the run at start-up, so a new op in the model is noticed, not skipped.
 *
 * Order. The plan lists the layer's ops in the order they run, then the
 * per-model ops, then the DP/ZeRO ops, then the optimizer. The executor runs
 * them as a training step would: embedding; ZeRO-3 forward gather (the
 * prefetch); the layer's forward; logits and loss; the logits' backward; the
 * ZeRO-3 backward gather; the layer's backward (recompute first, as the plan
 * lists it); the per-layer grad reduce-scatter; per-step reductions; the
 * optimizer; per-step gathers of the updated shards. Each op appears once.
 *
 * Passes. Pass 0 is checked (its outputs go to the reference comparison and
 * its byte counts are the measured bytes); then --warmup passes, then --reps
 * timed passes. In every pass each op starts after an MPI_Barrier over all
 * ranks, so an op's time is its own; with --sync pass only the pass starts
 * with one and the ops run back to back as in training (a collective then
 * also waits for the slowest rank's preceding compute, and with more ranks
 * than cores every op shares the cores the whole time instead of short ops
 * running alone while others wait at a barrier). A ring's K,V (and dK,dV) transfers run
 * inside the attention op they overlap: the attention op's time is the
 * elapsed time minus the waits, and each transfer op's time is the time spent
 * waiting for it (the part the compute did not hide). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hx.h"

static int slot(const uly_op *o)
{
    const int zero = o->kind == ULY_OP_COMM && o->group == ULY_GROUP_ZERO;
    if (o->phase == ULY_PHASE_STEP) {
        if (o->kind != ULY_OP_COMM) return 9;                 /* optimizer */
        return o->coll == ULY_COLL_ALLGATHER ? 10 : 8;        /* updated shards : grads */
    }
    if (o->phase == ULY_PHASE_FWD) {
        if (o->type == ULY_OPT_EMBED) return 0;
        if (zero) return 1;
        if (o->per_model) return 3;
        return 2;
    }
    if (o->per_model) return 4;
    if (zero) return o->coll == ULY_COLL_ALLGATHER ? 5 : 7;
    return 6;
}

hx_handler hx_backend_handler(const hx_backend *be, uly_op_type t)
{
    if ((unsigned)t >= ULY_OPT_COUNT) return NULL;
    for (int i = 0; i < 3; i++)
        if (be->handlers[i] && be->handlers[i][t]) return be->handlers[i][t];
    return NULL;
}

int hx_schedule(hx_ctx *c)
{
    const uly_plan *p = &c->plan;
    c->n_order = 0;
    for (int s = 0; s <= 10; s++)
        for (int i = 0; i < p->n_ops; i++)
            if (slot(&p->ops[i]) == s) c->order[c->n_order++] = i;
    /* every op type the backend cannot run, named once each in one line */
    char missing[512] = "";
    int seen[ULY_OPT_COUNT] = {0};
    size_t len = 0;
    for (int i = 0; i < p->n_ops; i++) {
        c->fuse_kv[i] = c->fuse_dkv[i] = -1;
        c->handler[i] = hx_backend_handler(c->be ? c->be : &hx_backend_mpi, p->ops[i].type);
        if (c->handler[i] || seen[p->ops[i].type]++ || len >= sizeof missing) continue;
        const int w = snprintf(missing + len, sizeof missing - len, "%sop %d (%s)", len ? ", " : "", i,
                               uly_op_type_name(p->ops[i].type));
        len = w > 0 ? len + (size_t)w : sizeof missing;
    }
    if (missing[0])
        return hx_fail("plan %s: no handler in the harness's %s backend", missing, c->be ? c->be->name : "mpi");
    for (int i = 0; i < p->n_ops; i++) {
        const uly_op *o = &p->ops[i];
        if (o->kind == ULY_OP_COMM && o->overlaps >= 0) {
            if (o->coll != ULY_COLL_SENDRECV || p->ops[o->overlaps].kind != ULY_OP_ATTN)
                return hx_fail("plan op %d (%s) overlaps op %d: the harness fuses only ring transfers into attention",
                               i, uly_op_type_name(o->type), o->overlaps);
            if (o->type == ULY_OPT_RING_DKV) c->fuse_dkv[o->overlaps] = i;
            else c->fuse_kv[o->overlaps] = i;
        }
    }
    /* fault injection targets: an op id, or the first comm op executed */
    int first_comm = -1;
    for (int i = 0; i < c->n_order && first_comm < 0; i++)
        if (p->ops[c->order[i]].kind == ULY_OP_COMM) first_comm = c->order[i];
    if (first_comm < 0) first_comm = c->order[0];
    int *tgt[3] = {&c->inject_fail_id, &c->inject_hang_id, &c->inject_kill_id};
    const int want[3] = {c->o.inject_fail_op, c->o.inject_hang_op, c->o.inject_kill_op};
    for (int k = 0; k < 3; k++) {
        int id = want[k] >= 0 ? want[k] : first_comm;
        if (id >= p->n_ops) return hx_fail("fault injection at op %d: the plan has %d ops", id, p->n_ops);
        /* a fused ring transfer runs inside the attention op it overlaps */
        if (p->ops[id].kind == ULY_OP_COMM && p->ops[id].overlaps >= 0) id = p->ops[id].overlaps;
        *tgt[k] = id;
    }
    return HX_OK;
}

static int inject(hx_ctx *c, int id)
{
    const uly_op *op = &c->plan.ops[id];
    if (c->pass != 0) return HX_OK;
    if (c->o.inject_fail_rank == hx_world_rank() && id == c->inject_fail_id) {
        fprintf(stderr, "ulyharness: rank %d: injected failure at op %d (%s): an MPI call to a rank that does not exist\n",
                hx_world_rank(), id, uly_op_type_name(op->type));
        float x = 0;
        HX_TRY(HX_MPI(MPI_Send(&x, 1, MPI_FLOAT, hx_world_size(), 0, MPI_COMM_WORLD)));
    }
    if (c->o.inject_kill_rank == hx_world_rank() && id == c->inject_kill_id) {
        fprintf(stderr, "ulyharness: rank %d: injected kill at op %d (%s)\n", hx_world_rank(), id, uly_op_type_name(op->type));
        fflush(stderr);
        raise(SIGKILL);
    }
    if (c->o.inject_hang_rank == hx_world_rank() && id == c->inject_hang_id) {
        fprintf(stderr, "ulyharness: rank %d: injected hang at op %d (%s)\n", hx_world_rank(), id, uly_op_type_name(op->type));
        fflush(stderr);
        hx_beat(id, uly_op_type_name(op->type));
        for (;;) pause();
    }
    return HX_OK;
}

int hx_exec_op(hx_ctx *c, int id)
{
    const uly_op *op = &c->plan.ops[id];
    hx_opstat *s = &c->st[id];
    if (s->done) return HX_OK; /* ran inside the op it overlaps */
    hx_beat(id, uly_op_type_name(op->type));
    HX_TRY(inject(c, id));
    /* A collective starts when the last rank of its group arrives: the time
     * a barrier over the group takes before it is the op's wait for its
     * peers (load imbalance, a descheduled rank), the rest is the transfer
     * proper. Under --sync op the world barrier just before leaves only the
     * barrier's own latency here. */
    double wait = 0;
    const hx_group *g = op->kind == ULY_OP_COMM && (unsigned)op->group < ULY_GROUP_COUNT ? &c->g[op->group] : NULL;
    if (g && g->comm != MPI_COMM_NULL && g->size > 1) {
        const double t0 = hx_now();
        HX_TRY(HX_MPI(MPI_Barrier(g->comm)));
        wait = hx_now() - t0;
    }
    double el = 0;
    HX_TRY(c->be->exec(c, id, &el));
    if (op->kind == ULY_OP_COMM) {
        s->t_pass = el + wait;
        s->w_pass = wait;
        s->done = 1;
        return HX_OK;
    }
    if (c->fuse_kv[id] >= 0) el -= c->st[c->fuse_kv[id]].t_pass;
    if (c->fuse_dkv[id] >= 0) el -= c->st[c->fuse_dkv[id]].t_pass;
    /* the waits lie inside the op's time; rounding (and CUDA events' 0.5 us
     * resolution) must not leave a fully exposed op a negative time */
    s->t_pass = el > 0 ? el : 0;
    s->done = 1;
    hx_watchdog_op_time(s->t_pass);
    return HX_OK;
}

/* ------------------------------------------------------- the mpi backend */

static int exec_host(hx_ctx *c, int id, double *seconds)
{
    const double t0 = hx_now();
    HX_TRY(c->handler[id](c, &c->plan.ops[id]));
    *seconds = hx_now() - t0;
    return HX_OK;
}

static int prepare_host(hx_ctx *c) { return hx_schedule(c); }

static int configure_host(hx_opts *o, int rank)
{
    if (o->dtype == HX_DTYPE_DEFAULT) o->dtype = ULY_FP32;
    if (o->dtype == ULY_FP8) { /* FP8 training needs FP8 tensor cores: a CPU has no FP8 GEMM */
        if (rank == 0)
            fprintf(stderr, "ulyharness: --dtype fp8: the mpi backend runs on CPUs, which have no FP8 GEMM; the mpi "
                            "backend computes in fp32\n");
        return 2;
    }
    if (o->dtype != ULY_FP32) {
        if (rank == 0)
            fprintf(stderr, "ulyharness: --dtype %s: the mpi backend computes in fp32; bf16 and fp16 run with "
                            "--backend nccl\n", uly_dtype_name(o->dtype));
        return 2;
    }
    return 0;
}

/* host buffers, CPU kernels (hx_layer.c, hx_attn.c, hx_moe.c), MPI collectives (hx_mpi.c) */
const hx_backend hx_backend_mpi = {
    .name = "mpi",
    .host_buffers = 1,
    .exec_modes = (1u << ULY_EXEC_COUNT) - 1, /* every strategy */
    .configure = configure_host,
    .prepare = prepare_host,
    .handlers = {hx_layer_handlers, hx_attn_handlers, hx_moe_handlers},
    .exec = exec_host,
};

static int one_pass(hx_ctx *c)
{
    for (int i = 0; i < c->plan.n_ops; i++) {
        c->st[i].done = 0;
        c->st[i].bytes_pass = 0;
        c->st[i].t_pass = c->st[i].w_pass = 0;
    }
    for (int i = 0; i < c->n_order; i++) {
        const int id = c->order[i];
        if (c->st[id].done) continue;
        if (!c->o.sync_pass || i == 0) {
            hx_beat(id, "barrier before op");
            HX_TRY(HX_MPI(MPI_Barrier(MPI_COMM_WORLD)));
        }
        HX_TRY(hx_exec_op(c, id));
    }
    hx_beat(-1, "end of pass");
    return HX_OK;
}

int hx_run(hx_ctx *c)
{
    if (c->n_order == 0) HX_TRY(hx_schedule(c));
    free(c->times);
    if (!(c->times = hx_alloc(sizeof(double) * (size_t)(2 * c->plan.n_ops * c->o.reps), "timings"))) return HX_FAIL;
    for (int i = 0; i < c->plan.n_ops; i++) {
        c->st[i].t = c->times + i * c->o.reps;
        c->st[i].w = c->times + (c->plan.n_ops + i) * c->o.reps;
    }
    const int passes = 1 + c->o.warmup + c->o.reps;
    const double t0 = hx_now();
    for (int p = 0; p < passes; p++) {
        c->pass = p;
        c->timed_rep = p - 1 - c->o.warmup;
        HX_TRY(one_pass(c));
        for (int i = 0; i < c->plan.n_ops; i++) {
            hx_opstat *s = &c->st[i];
            if (p == 0) s->bytes = s->bytes_pass;
            else if (s->bytes_pass != s->bytes)
                return hx_fail("op %d (%s): sent %lld bytes in pass %d, %lld in pass 0", i,
                               uly_op_type_name(c->plan.ops[i].type), (long long)s->bytes_pass, p, (long long)s->bytes);
            if (c->timed_rep >= 0) {
                s->t[c->timed_rep] = s->t_pass;
                s->w[c->timed_rep] = s->w_pass;
            }
        }
        if (p == 0 && c->be->fetch) HX_TRY(c->be->fetch(c)); /* results to the host buffers the check reads */
        if (p == 0 && c->o.inject_error && hx_world_rank() == hx_world_size() - 1) {
            /* the hidden wrong-result switch: one element of dQ, after the fact */
            c->dQg[c->Rg * c->qc / 2] += 0.5f;
            fprintf(stderr, "ulyharness: rank %d: injected error: dQ element %lld perturbed by 0.5\n", hx_world_rank(),
                    (long long)(c->Rg * c->qc / 2));
        }
        if (p == 0 && c->o.inject_error_row && hx_world_rank() == hx_world_size() - 1) {
            /* every head of one token: a wrong row map would look like this */
            for (int64_t j = 0; j < c->qc; j++) c->dQg[c->Rg / 2 * c->qc + j] += 0.5f;
            fprintf(stderr, "ulyharness: rank %d: injected error: dQ row %lld (GEMM side) perturbed by 0.5\n",
                    hx_world_rank(), (long long)(c->Rg / 2));
        }
        if (p == 0 && !c->o.no_check) HX_TRY(hx_check(c));
    }
    c->t_total = hx_now() - t0;
    /* measured bytes against the plan, every op, every rank */
    int ok = 1;
    for (int i = 0; i < c->plan.n_ops; i++) {
        const uly_op *op = &c->plan.ops[i];
        if (c->st[i].bytes != op->bytes_sent) {
            ok = 0;
            fprintf(stderr, "ulyharness: rank %d: op %d (%s, %s): sent %lld bytes, the plan says %lld\n",
                    hx_world_rank(), i, uly_op_type_name(op->type), uly_phase_name(op->phase), (long long)c->st[i].bytes,
                    (long long)op->bytes_sent);
        }
    }
    HX_TRY(HX_MPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD)));
    c->bytes_ok = ok;
    return HX_OK;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double hx_median(double *v, int n)
{
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void hx_print_plan(const hx_ctx *c, FILE *fp)
{
    const uly_plan *p = &c->plan;
    fprintf(fp, "# plan: %s  ulysses %lld ring %lld tp %lld dp %lld  seq %lld heads %lld/%lld d %lld  mode %s\n",
            c->strat->name, (long long)p->layout.ulysses, (long long)p->layout.ring, (long long)p->layout.tp,
            (long long)p->layout.dp, (long long)c->N, (long long)c->a, (long long)c->k, (long long)c->d,
            uly_exec_mode_name(c->mode));
    fprintf(fp, "# %3s %-18s %-5s %-5s %-14s %-8s %5s %5s %12s %10s %s\n", "id", "name", "phase", "kind", "coll",
            "group", "size", "steps", "bytes_sent", "elems", "flags");
    for (int i = 0; i < p->n_ops; i++) {
        const uly_op *o = &p->ops[i];
        fprintf(fp, "  %3d %-18s %-5s %-5s %-14s %-8s %5d %5d %12lld %10lld %s%s%s", o->id, uly_op_type_name(o->type),
                uly_phase_name(o->phase), uly_op_kind_name(o->kind), uly_coll_name(o->coll), uly_group_name(o->group),
                o->group_size, o->steps, (long long)o->bytes_sent, (long long)(o->kind == ULY_OP_COMM ? o->comm_elems : o->kind == ULY_OP_ATTN ? o->flash : o->act_elems), o->recompute ? "recompute " : "",
                o->per_model ? "per-model " : "", o->per_step ? "per-step " : "");
        if (o->overlaps >= 0) fprintf(fp, "overlaps %d", o->overlaps);
        fprintf(fp, "\n");
    }
}
