/* timeline.c: `ulysim ... --timeline FILE`: the recommended plan's predicted
 * schedule as Chrome trace-event JSON (Perfetto, chrome://tracing), the
 * format `ulysim trace export` writes for measured runs (trace_events.c), so
 * a prediction and a measurement open side by side in one viewer.
 *
 * Process 1 is one layer of one micro-batch, forward then backward, as the
 * schedule (model/schedule.c) prices it. Thread 1 is the critical path:
 * compute ops, blocking collectives, and the exposed part of each
 * overlapped transfer (a ring hop that outlasts its attention block, a TP
 * collective that outlasts its GEMM, ZeRO-3 gathers that outlast their
 * phase); it sums to the plan's layer time (per_layer fwd_s + bwd_s). The
 * other threads are communication in flight under compute: a ring or TP
 * transfer from the start of the op it overlaps, for its whole priced time;
 * a ZeRO-3 prefetch from the start of its phase. Process 2 is one optimizer
 * step: each micro-batch's layers and per-micro-batch ops, the pipeline's
 * fill and drain, the per-step ops; its thread 1 sums to the step time. */
#include "timeline.h"

#include <stdio.h>
#include <string.h>

#include "output.h"
#include "trace_events.h"

#define TL_MAX_STREAMS 16
#define TL_MAX_MICRO 64 /* one slice per micro-batch up to this, else one for all */

typedef struct tl_state {
    cJSON *ev;
    const uly_plan *p;
    const uly_result *r;
    double t;                        /* the critical path's clock */
    double start[ULY_PLAN_MAX_OPS];  /* where each placed op began on it */
    double stream_end[TL_MAX_STREAMS];
    int n_streams;
} tl_state;

static int per_layer(const uly_op *o) { return !o->per_model && !o->per_step; }

static void op_args(cJSON *a, const uly_op *o, int id, double time_s, double exposed_s)
{
    cJSON_AddNumberToObject(a, "id", id);
    cJSON_AddStringToObject(a, "kind", uly_op_kind_name(o->kind));
    cJSON_AddStringToObject(a, "phase", o->recompute ? "recompute" : uly_phase_name(o->phase));
    if (o->kind == ULY_OP_COMM) {
        cJSON_AddStringToObject(a, "coll", uly_coll_name(o->coll));
        cJSON_AddStringToObject(a, "group", uly_group_name(o->group));
        cJSON_AddNumberToObject(a, "group_size", (double)o->group_size);
        cJSON_AddNumberToObject(a, "bytes", (double)o->bytes_sent);
    } else {
        cJSON_AddNumberToObject(a, "flops", o->flops);
    }
    cJSON_AddNumberToObject(a, "time_ms", 1e3 * time_s);
    cJSON_AddNumberToObject(a, "exposed_ms", 1e3 * exposed_s);
}

/* A transfer in flight from s0 for dur: on the first communication thread
 * free by then (threads 2, 3, ...), so slices never overlap on one. */
static void in_flight(tl_state *st, int id, double s0, const char *under)
{
    const uly_op *o = &st->p->ops[id];
    const double dur = st->r->op_time_s[id];
    int k = 0;
    while (k < st->n_streams && st->stream_end[k] > s0 + 1e-15) k++;
    if (k == TL_MAX_STREAMS) k = TL_MAX_STREAMS - 1;
    if (k == st->n_streams) st->n_streams++;
    st->stream_end[k] = s0 + dur;
    char nm[128];
    snprintf(nm, sizeof nm, "%s %s (in flight)", uly_op_type_name(o->type), o->recompute ? "recompute" : uly_phase_name(o->phase));
    cJSON *a = sim_te_slice(st->ev, 1, 2 + k, nm, "comm-overlapped", s0, dur);
    op_args(a, o, id, dur, st->r->op_exposed_s[id]);
    cJSON_AddStringToObject(a, "under", under);
}

/* Op id on the critical path: whole (compute, blocking) or its exposed part. */
static void on_path(tl_state *st, int id)
{
    const uly_op *o = &st->p->ops[id];
    const int comm = o->kind == ULY_OP_COMM;
    const double d = comm && o->overlaps != ULY_OVERLAP_NONE ? st->r->op_exposed_s[id] : st->r->op_time_s[id];
    st->start[id] = st->t;
    if (comm && o->overlaps != ULY_OVERLAP_NONE && d <= 0) return; /* wholly hidden */
    char nm[128];
    snprintf(nm, sizeof nm, "%s %s%s", uly_op_type_name(o->type), o->recompute ? "recompute" : uly_phase_name(o->phase),
             !comm ? "" : o->overlaps == ULY_OVERLAP_NONE ? " (blocking)" : " (exposed wait)");
    cJSON *a = sim_te_slice(st->ev, 1, 1, nm, comm ? "comm-exposed" : uly_op_kind_name(o->kind), st->t, d);
    op_args(a, o, id, st->r->op_time_s[id], st->r->op_exposed_s[id]);
    st->t += d;
}

/* One phase of the layer: its ops in plan order, each transfer that hides
 * under an op right after it, the ZeRO prefetches in flight from the
 * phase's start and their exposed part at its end. */
static void lay_phase(tl_state *st, uly_phase ph)
{
    const uly_plan *p = st->p;
    const double phase_start = st->t;
    for (int i = 0; i < p->n_ops; i++) {
        const uly_op *o = &p->ops[i];
        if (!per_layer(o) || o->phase != ph || (o->kind == ULY_OP_COMM && o->overlaps != ULY_OVERLAP_NONE)) continue;
        on_path(st, i);
        for (int j = 0; j < p->n_ops; j++) {
            const uly_op *h = &p->ops[j];
            if (h->kind != ULY_OP_COMM || h->overlaps != i || !per_layer(h)) continue;
            char under[96];
            snprintf(under, sizeof under, "op %d (%s)", i, uly_op_type_name(o->type));
            in_flight(st, j, st->start[i], under);
            on_path(st, j);
        }
    }
    for (int i = 0; i < p->n_ops; i++) {
        const uly_op *o = &p->ops[i];
        if (!per_layer(o) || o->phase != ph || o->kind != ULY_OP_COMM || o->overlaps != ULY_OVERLAP_PHASE) continue;
        in_flight(st, i, phase_start, ph == ULY_PHASE_FWD ? "the forward phase" : "the backward phase");
        on_path(st, i);
    }
    /* what no op carries: compute slowed beside the phase's background
     * transfers, and the wait on an eager host issuing the phase's kernels */
    const double extra[2] = {st->r->time.layer_slowdown_s[ph], st->r->time.layer_host_wait_s[ph]};
    static const char *const what[2] = {"compute slowed beside background transfers", "waiting on the host's kernel issue"};
    for (int k = 0; k < 2; k++) {
        if (!(extra[k] > 0)) continue;
        char nm[128];
        snprintf(nm, sizeof nm, "%s (%s)", what[k], uly_phase_name(ph));
        sim_te_slice(st->ev, 1, 1, nm, k ? "host" : "compute", st->t, extra[k]);
        st->t += extra[k];
    }
}

/* Process 2: one step on the critical path, from the plan's timing. */
static void lay_step(cJSON *ev, const uly_plan *p, const uly_result *r, const uly_workload *w)
{
    const uly_timing *tm = &r->time;
    const double L = (double)tm->stage_layers, layers_s = L * (tm->layer_fwd_s + tm->layer_bwd_s);
    const int64_t m = tm->micro_steps > 0 ? tm->micro_steps : 1;
    const int each = m <= TL_MAX_MICRO;
    double t = 0, last_bwd = 0;
    char nm[160];
    for (int64_t k = 0; k < (each ? m : 1); k++) {
        const double n = each ? 1.0 : (double)m;
        if (each) snprintf(nm, sizeof nm, "micro-batch %lld: %lld layers, forward and backward", (long long)(k + 1), (long long)tm->stage_layers);
        else snprintf(nm, sizeof nm, "micro-batches 1..%lld: %lld layers each, forward and backward", (long long)m, (long long)tm->stage_layers);
        cJSON *a = sim_te_slice(ev, 2, 1, nm, "layers", t, n * layers_s);
        cJSON_AddNumberToObject(a, "layer_fwd_ms", 1e3 * tm->layer_fwd_s);
        cJSON_AddNumberToObject(a, "layer_bwd_ms", 1e3 * tm->layer_bwd_s);
        last_bwd = t + n * L * tm->layer_fwd_s;
        t += n * layers_s;
        if (tm->model_s > 0) {
            snprintf(nm, sizeof nm, "%s: embedding, logits, loss%s", each ? "its ops outside the layers" : "their ops outside the layers",
                     p->layout.pp > 1 ? ", stage transfers" : "");
            sim_te_slice(ev, 2, 1, nm, "model", t, n * tm->model_s);
            t += n * tm->model_s;
        }
    }
    const double lag = tm->slots - (double)m;
    if (lag > 1e-12) {
        snprintf(nm, sizeof nm, "pipeline fill and drain (bubble, %.1f%% of the step)", 100.0 * tm->pp_bubble);
        sim_te_slice(ev, 2, 1, nm, "bubble", t, lag * (layers_s + tm->model_s));
        t += lag * (layers_s + tm->model_s);
    }
    /* per step: each op's exposed part; what the step adds beyond them is
     * the first ZeRO-3 gather, which has no compute to hide under */
    double fixed = 0;
    for (int i = 0; i < p->n_ops; i++) {
        const uly_op *o = &p->ops[i];
        if (!o->per_step) continue;
        if (o->kind == ULY_OP_COMM && o->overlaps == ULY_OVERLAP_PHASE) {
            snprintf(nm, sizeof nm, "%s (in flight under the last backward)", uly_op_type_name(o->type));
            cJSON *a = sim_te_slice(ev, 2, 2, nm, "comm-overlapped", last_bwd, r->op_time_s[i]);
            op_args(a, o, i, r->op_time_s[i], r->op_exposed_s[i]);
        }
        const double d = r->op_exposed_s[i];
        if (d <= 0) continue;
        snprintf(nm, sizeof nm, "%s%s", uly_op_type_name(o->type), o->kind == ULY_OP_COMM ? " (exposed)" : "");
        cJSON *a = sim_te_slice(ev, 2, 1, nm, o->kind == ULY_OP_COMM ? "comm-exposed" : "step", t, d);
        op_args(a, o, i, r->op_time_s[i], d);
        t += d;
        fixed += d;
    }
    /* the host's own work per step, as the user gave it */
    if (w->step_overhead_s > 0) {
        sim_te_slice(ev, 2, 1, "host work per step (--step-overhead-ms)", "host", t, w->step_overhead_s);
        t += w->step_overhead_s;
        fixed += w->step_overhead_s;
    }
    /* what no op carries: compute slowed beside the per-step transfers it
     * hides and, under ZeRO-3, the step's first gather and last
     * reduce-scatter, which have no compute to hide under */
    const double rest = tm->step_fixed_s - fixed;
    if (rest > 1e-12 * tm->step_s) {
        const char *what = w->zero_stage == 3
                               ? "ZeRO-3's first gather and last reduce-scatter, and compute slowed beside hidden transfers"
                               : "compute slowed beside the transfers it hides";
        sim_te_slice(ev, 2, 1, what, w->zero_stage == 3 ? "comm-exposed" : "compute", t, rest);
    }
    sim_te_meta(ev, "thread_name", 2, 1, "critical path: the step");
    sim_te_meta(ev, "thread_name", 2, 2, "communication in flight (overlapped)");
}

int sim_timeline_write(const char *path, const sim_ctx *c, const sim_summary *rec, const uly_plan *p,
                       const uly_result *r)
{
    static tl_state st;
    memset(&st, 0, sizeof st);
    cJSON *root = cJSON_CreateObject();
    st.ev = cJSON_AddArrayToObject(root, "traceEvents");
    st.p = p;
    st.r = r;
    char d[80], pname[300];
    sim_degrees_words(&rec->layout, d, sizeof d);
    snprintf(pname, sizeof pname, "predicted: %s (%s) on %s, one layer, one micro-batch", rec->strategy->name, d,
             c->cluster.name);
    sim_te_meta(st.ev, "process_name", 1, 0, pname);
    snprintf(pname, sizeof pname, "predicted: %s (%s) on %s, one step", rec->strategy->name, d, c->cluster.name);
    sim_te_meta(st.ev, "process_name", 2, 0, pname);
    lay_phase(&st, ULY_PHASE_FWD);
    lay_phase(&st, ULY_PHASE_BWD);
    sim_te_meta(st.ev, "thread_name", 1, 1, "critical path: compute and exposed communication");
    for (int k = 0; k < st.n_streams; k++) {
        char nm[64];
        snprintf(nm, sizeof nm, "communication in flight %d (overlapped)", k + 1);
        sim_te_meta(st.ev, "thread_name", 1, 2 + k, nm);
    }
    lay_step(st.ev, p, r, &c->w);
    cJSON_AddStringToObject(root, "displayTimeUnit", "ms");
    cJSON *md = cJSON_AddObjectToObject(root, "otherData");
    cJSON_AddStringToObject(md, "source", "predicted by libulysim (ulysim --timeline), not measured");
    cJSON_AddStringToObject(md, "strategy", rec->strategy->name);
    cJSON_AddStringToObject(md, "layout", d);
    cJSON_AddStringToObject(md, "model", c->model.name);
    cJSON_AddStringToObject(md, "cluster", c->cluster.name);
    cJSON_AddNumberToObject(md, "seq", (double)rec->seq);
    cJSON_AddNumberToObject(md, "gpus", (double)rec->gpus);
    cJSON_AddNumberToObject(md, "layer_fwd_ms", 1e3 * r->time.layer_fwd_s);
    cJSON_AddNumberToObject(md, "layer_bwd_ms", 1e3 * r->time.layer_bwd_s);
    cJSON_AddNumberToObject(md, "step_ms", 1e3 * r->time.step_s);
    cJSON_AddNumberToObject(md, "micro_steps", (double)r->time.micro_steps);
    return sim_te_write(root, path, "ulysim --timeline");
}
