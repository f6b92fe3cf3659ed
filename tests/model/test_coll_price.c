/* Each comm op of a priced plan costs what the collective formulas of
 * docs/model.md ("Collective costs") give for its collective, group
 * placement, bytes and steps, the formulas written out here: Hockney's on
 * a DGX-A100-like cluster (the CPU model), NCCL's ring, PXN all-to-all and
 * ring hops on the same cluster priced by NCCL (ring only: NCCL_ALGO=Ring).
 * On every strategy and layout of an 8-node cluster, and on plans edited
 * here so that comm ops share their bytes but not their group, collective or
 * steps (the pricing may reuse a time only for an op that matches in all
 * four). Mutants caught: the all-to-all's NIC term dropped, the all-reduce's
 * latency counted once instead of twice, node_groups not passed by the
 * schedule (1 instead), a reused time for an op of another collective. */
#include "fixtures.h"
#include "nccl_expect.h"

static uly_plan plan;
static uly_result res;
static int compared;

/* Hockney (docs/model.md): alpha, B the in-node fabric's inside a node,
 * the NIC's across nodes; fx_a100 is an NVSwitch node on a flat fat tree */
static double hockney(const uly_cluster *c, const uly_op *o, const uly_group_place *q, double n)
{
    const double p = (double)q->size, g = (double)q->per_node, M = (double)q->nodes;
    const int across = q->nodes > 1;
    const double a = across ? c->nic_lat_s : c->intra_lat_s, B = across ? c->nic_bw_Bps : c->intra_bw_Bps;
    switch (o->coll) {
    case ULY_COLL_ALLTOALL: {
        if (!across) return (p - 1) * c->intra_lat_s + n / c->intra_bw_Bps;
        const double buf = n * p / (p - 1);
        double t = (M - 1) * c->nic_lat_s + buf * (M - 1) / M / c->nic_bw_Bps;
        if (g > 1) t += (g - 1) * c->intra_lat_s + buf * (g - 1) / g / c->intra_bw_Bps;
        return t;
    }
    case ULY_COLL_ALLGATHER:
    case ULY_COLL_REDUCE_SCATTER: return (p - 1) * a + n / B;
    case ULY_COLL_ALLREDUCE: return 2 * (p - 1) * a + n / B;
    case ULY_COLL_SENDRECV: return (o->steps > 0 ? o->steps : 1) * a + n / B;
    default: return 0;
    }
}

/* NCCL, ring only, on fx_a100 with NCCL's figures and 2 NICs a node (24
 * GB/s a GPU: 96 GB/s a NIC), Intel hosts, sm 80: a group's members reach
 * g x 2/8 NICs (at least one), and the groups of a kind on a node share its
 * 2 NICs */
static double nccl(const uly_cluster *c, const uly_op *o, const uly_group_place *q, double n)
{
    const double p = (double)q->size, g = (double)q->per_node, M = (double)q->nodes;
    const double groups = 8.0 / g; /* the groups of a kind partition a node's 8 GPUs */
    CHECK(q->node_groups == (int64_t)groups, "node_groups %lld, want %g", (long long)q->node_groups, groups);
    const double r = g * 2.0 / 8.0 < 1 ? 1 : g * 2.0 / 8.0, nics = r < 2.0 / groups ? r : 2.0 / groups;
    const double net = 96e9 * nics; /* the group's share of one node's NICs */
    const double nch = 2 * floor(r); /* a channel per NIC, doubled: 96 GB/s >= 25 */
    switch (o->coll) {
    case ULY_COLL_ALLGATHER:
    case ULY_COLL_REDUCE_SCATTER:
    case ULY_COLL_ALLREDUCE: {
        const nx_case x = {p, g, M, c->intra_bw_Bps, net, M > 1 ? nch : 0, c->intra_lat_s, c->nic_lat_s, 80};
        double t = INFINITY;
        for (int k = 0; k < 3; k++) t = nx_min(t, nx_ring(&x, o->coll == ULY_COLL_ALLREDUCE, k, n));
        return t;
    }
    case ULY_COLL_ALLTOALL: {
        if (M <= 1) return hockney(c, o, q, n);
        /* PXN: NVLink carries the in-node blocks and the relayed remote ones,
         * a rank's NIC share the remote ones; the slower counts */
        const double buf = n * p / (p - 1);
        const double t_net = buf * (M - 1) / M / (net / g);
        const double t_nv = g > 1 ? (buf * (g - 1) / p + buf * (M - 1) / M * (g - 1) / g) / c->intra_bw_Bps : 0;
        return (M - 1) * c->nic_lat_s + (g - 1) * c->intra_lat_s + (t_nv > t_net ? t_nv : t_net);
    }
    case ULY_COLL_SENDRECV: {
        /* a hop: LL at half the link up to 16 KiB (LL's per-step latency),
         * else Simple; across nodes the sender's own NIC, shared when the
         * node's groups outnumber its NICs */
        const double s = o->steps > 0 ? o->steps : 1, hop = n / s;
        const double B = M > 1 ? 96e9 * (groups > 2 ? 2.0 / groups : 1.0) : c->intra_bw_Bps, a = M > 1 ? c->nic_lat_s : c->intra_lat_s;
        const double ll_lat = M > 1 ? 2.7 / 14.0 : 0.6 / 3.4;
        return hop <= 16384 ? s * a * ll_lat + n / (0.5 * B) : s * a + n / B;
    }
    default: return 0;
    }
}

static void check_plan(const uly_model *m, const uly_workload *w, const uly_cluster *c, const char *what)
{
    if (uly_plan_price(m, w, c, &plan, &res) != ULY_OK) return;
    for (int i = 0; i < plan.n_ops; i++) {
        const uly_op *o = &plan.ops[i];
        if (o->kind != ULY_OP_COMM) continue;
        const uly_group_place *q = &plan.place[o->group];
        /* a gather or reduction in several messages (ZeRO-3 under DeepSpeed,
         * a submodule at a time): each message its share of the bytes, each
         * priced whole; a ring's steps are its hops */
        const double msgs = o->type == ULY_OPT_ZERO_GATHER_W && !o->per_step && w->framework == ULY_FW_DEEPSPEED
                                ? 4 + (m->swiglu ? 3 : 2) : 1;
        const double n = (double)o->bytes_sent / msgs;
        const double want = msgs * (c->coll_model == ULY_COLL_NCCL ? nccl(c, o, q, n) : hockney(c, o, q, n));
        compared++;
        CHECK(fx_close(res.op_time_s[i], want, 1e-12), "%s, %s: %s op %d (%s, group %s of %lld, %lld a node, %lld bytes, %d steps): %.9g s, want %.9g",
              what, uly_coll_model_name(c->coll_model), uly_strategy_get(plan.layout.strategy)->name, i,
              uly_op_type_name(o->type), uly_group_name(o->group), (long long)q->size, (long long)q->per_node,
              (long long)o->bytes_sent, o->steps, res.op_time_s[i], want);
    }
}

/* gives every comm op the bytes of the first, and, by `how`, its
 * collective (1) or its steps (2) too, leaving the group its own */
static void collide(int how)
{
    int first = -1;
    for (int i = 0; i < plan.n_ops; i++) {
        uly_op *o = &plan.ops[i];
        if (o->kind != ULY_OP_COMM) continue;
        if (first < 0) {
            first = i;
            continue;
        }
        const uly_op *f = &plan.ops[first];
        o->bytes_sent = f->bytes_sent;
        if (how == 1) o->coll = f->coll;
        if (how == 2) o->steps = f->steps;
    }
}

int main(void)
{
    const uly_model m = fx_llama3_8b();
    const uly_workload w = fx_work(1 << 17);
    uly_cluster clusters[2] = {fx_a100(8), fx_a100(8)};
    clusters[1].coll_model = ULY_COLL_NCCL;
    clusters[1].nccl_sm = 80;
    clusters[1].nccl_algos = ULY_NCCL_ALGO_RING;
    clusters[1].nics_per_node = 2;
    clusters[1].intra_lat_s = 3.4e-6;
    clusters[1].nic_lat_s = 14e-6;
    uly_reason reasons[ULY_MAX_REASONS];
    int n_reasons = 0;
    for (int ci = 0; ci < 2; ci++) {
        const uly_cluster *c = &clusters[ci];
        for (int s = 0; s < ULY_STRAT_COUNT; s++) {
            const uly_strategy *st = uly_strategy_get((uly_strategy_id)s);
            for (int64_t u = 1; u <= 16; u *= 4)
                for (int64_t r = 1; u * r <= 16; r *= 4)
                    for (int64_t t = 1; u * r * t <= 16; t *= 2) {
                        if ((u > 1 && !st->uses_ulysses) || (r > 1 && !st->uses_ring) || (t > 1 && !st->uses_tp)) continue;
                        uly_layout l;
                        uly_layout_init(&l, (uly_strategy_id)s, u, r, t, 64 / (u * r * t));
                        for (int how = -1; how < 3; how++) {
                            if (uly_plan_build(&m, &w, c, &l, &plan, reasons, &n_reasons) != ULY_OK) break;
                            if (how >= 0) collide(how);
                            check_plan(&m, &w, c, how < 0 ? "as built" : how == 0 ? "same bytes" : how == 1 ? "same bytes and collective" : "same bytes and steps");
                        }
                    }
        }
    }
    CHECK(compared > 2000, "%d comm ops compared", compared);
    printf("%d comm op prices compared with the formulas\n", compared);
    FX_DONE();
}
