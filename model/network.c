/* network.c: collective cost on a cluster (docs/model.md, "Collective costs").
 * Two models, by the cluster's coll_model. NCCL (GPU presets): the links a
 * group's collective runs over, worked out here (the in-node ring, the NICs
 * of the group's members on each node shared with the other groups of its
 * kind running at once), priced by NCCL's own cost model in nccl.c; its
 * all-to-all goes through the NIC on the destination's rail (PXN), NVLink and
 * network at once. Hockney (CPU hosts, the formulas ulysim calibrate fits):
 * alpha-beta per link tier. A group inside one node pays the in-node fabric;
 * one spanning nodes pays one GPU's NIC share, bounded by the topology:
 *   all-to-all, two levels (g per node, M nodes, n = the rank's buffer):
 *     (g-1) a_l + n (g-1)/g / B_l + (M-1) a_n + n (M-1)/M / B_n
 *   fat tree / rail: B_n divided by max(1, rho (1 - k/p)), k GPUs per leaf
 *   torus: the inter term is at least k n_node / (8 b_link) (bisection)
 *   ring all-gather / reduce-scatter: (p-1) a + sent / B_bottleneck
 *   ring all-reduce: 2 (p-1) a + sent / B_bottleneck
 *   ring hop (send/recv): steps (a + hop / B), hops run both directions at once
 * A direct mesh (no NVSwitch) gives each peer 1/(g-1) of the GPU's links.
 * A PCIe server shares links: each GPU's own x16 link, its switch's uplink
 * (every byte of the switch's GPUs bound elsewhere, and with peer-to-peer
 * off every byte at all, since it bounces through host memory), and the
 * socket link (every byte between GPUs of different sockets). A transfer
 * takes the longest of the three loads over their bandwidths. */
#include <math.h>

#include "internal.h"

static double nic_factor(const uly_cluster *c, const uly_group_place *gp)
{
    if (c->topo == ULY_TOPO_TORUS) return 1.0;
    const double p = (double)gp->size * (double)gp->stride; /* GPUs the group's span covers */
    const double f = c->oversub * (1.0 - (double)c->gpus_per_leaf / (p > 0 ? p : 1));
    return f > 1.0 ? f : 1.0;
}

/* In-node bandwidth available to a group using `peers` of the node's links. */
static double intra_bw(const uly_cluster *c, int64_t peers)
{
    if (c->intra_switched || c->gpus_per_node <= 1) return c->intra_bw_Bps;
    return c->intra_bw_Bps * (double)peers / (double)(c->gpus_per_node - 1);
}

/* Where a group's members of one node sit on a PCIe server: consecutive
 * members are `stride` GPUs apart, so a switch holds s = switch / stride of
 * them (at least one), the node's members fill g / s switches, and they
 * span both sockets when their GPUs reach past the first socket's half. */
typedef struct pcie_span {
    double g, s, switches, sockets;
} pcie_span;

__attribute__((noinline)) static pcie_span pcie_place(const uly_cluster *c, const uly_group_place *gp)
{
    pcie_span o;
    const double stride = gp->stride < c->gpus_per_node ? (double)gp->stride : (double)c->gpus_per_node;
    o.g = (double)gp->per_node;
    o.s = floor((double)c->pcie_per_switch / stride);
    if (o.s < 1) o.s = 1;
    if (o.s > o.g) o.s = o.g;
    o.switches = ceil(o.g / o.s);
    const double span = o.g * stride, half = (double)c->gpus_per_node / 2.0;
    o.sockets = c->socket_bw_Bps > 0 && span > half ? 2.0 : 1.0;
    return o;
}

/* Seconds to move an all-to-all of `buf` bytes per GPU (own block included)
 * among the node's members: the busiest of the GPU link, a switch uplink and
 * the socket link. */
__attribute__((noinline)) static double pcie_alltoall_s(const uly_cluster *c, const pcie_span *q, double buf)
{
    const double g = q->g, out = buf * (g - 1.0) / g;
    double t = out / c->intra_bw_Bps;
    /* a switch's uplink: its s GPUs' bytes to members under other switches,
     * or all their bytes without peer-to-peer */
    const double up = q->s * (c->pcie_p2p ? buf * (g - q->s) / g : out);
    if (c->pcie_uplink_bw_Bps > 0 && up / c->pcie_uplink_bw_Bps > t) t = up / c->pcie_uplink_bw_Bps;
    if (q->sockets > 1) {
        /* half the members send half their buffer across */
        const double x = (g / 2.0) * buf * (g / 2.0) / g;
        if (x / c->socket_bw_Bps > t) t = x / c->socket_bw_Bps;
    }
    return t;
}

/* Bandwidth of one ring neighbour transfer per GPU, every member sending to
 * the next at once: the ring leaves each switch once (or, without
 * peer-to-peer, every hop goes up and down its switch's uplink) and crosses
 * the socket link once each way. */
__attribute__((noinline)) static double pcie_ring_bw(const uly_cluster *c, const pcie_span *q)
{
    double b = c->intra_bw_Bps;
    const double on_uplink = c->pcie_p2p ? (q->switches > 1 ? 1.0 : 0.0) : q->s;
    if (on_uplink > 0 && c->pcie_uplink_bw_Bps > 0 && c->pcie_uplink_bw_Bps / on_uplink < b)
        b = c->pcie_uplink_bw_Bps / on_uplink;
    if (q->sockets > 1 && c->socket_bw_Bps < b) b = c->socket_bw_Bps;
    return b;
}

/* A PCIe server's ring neighbour bandwidth for a placed group. */
__attribute__((noinline)) static double pcie_link_bw(const uly_cluster *c, const uly_group_place *gp)
{
    const pcie_span q = pcie_place(c, gp);
    return pcie_ring_bw(c, &q);
}

static double alltoall(const uly_cluster *c, const uly_group_place *gp, double sent)
{
    const double p = (double)gp->size, g = (double)gp->per_node, M = (double)gp->nodes;
    const double buf = sent * p / (p - 1.0); /* the rank's whole buffer, own block included */
    if (c->pcie_per_switch > 0) {
        const pcie_span q = pcie_place(c, gp);
        const double lat = (g - 1.0) * c->intra_lat_s;
        if (gp->nodes <= 1) return lat + pcie_alltoall_s(c, &q, buf);
        const double t = gp->per_node > 1 ? lat + pcie_alltoall_s(c, &q, buf) : 0;
        return t + (M - 1.0) * c->nic_lat_s + buf * (M - 1.0) / M / (c->nic_bw_Bps / nic_factor(c, gp));
    }
    if (gp->nodes <= 1) return (p - 1.0) * c->intra_lat_s + sent / intra_bw(c, gp->size - 1);
    double t = 0;
    if (gp->per_node > 1) t += (g - 1.0) * c->intra_lat_s + buf * (g - 1.0) / g / intra_bw(c, gp->per_node - 1);
    double inter = buf * (M - 1.0) / M / (c->nic_bw_Bps / nic_factor(c, gp));
    if (c->topo == ULY_TOPO_TORUS && c->torus_link_bw_Bps > 0) {
        const double k = ceil(pow(M, 1.0 / (double)(c->torus_dims > 0 ? c->torus_dims : 1)) - 1e-9);
        const double bis = k * buf * g / (8.0 * c->torus_link_bw_Bps);
        if (bis > inter) inter = bis;
    }
    return t + (M - 1.0) * c->nic_lat_s + inter;
}

static double link_bw(const uly_cluster *c, const uly_group_place *gp, int neighbour_only)
{
    if (gp->nodes > 1) {
        double b = c->nic_bw_Bps;
        if (c->topo == ULY_TOPO_TORUS && c->torus_link_bw_Bps > 0 && c->torus_link_bw_Bps < b)
            b = c->torus_link_bw_Bps;
        return b;
    }
    if (c->pcie_per_switch > 0) return pcie_link_bw(c, gp);
    return neighbour_only ? intra_bw(c, 1) : intra_bw(c, gp->size - 1);
}

/* ---------------------------------------------------------------- NCCL */

/* One NIC's bandwidth per direction: the node's NICs together are
 * nic_bw_Bps per GPU; on a torus a NIC is no faster than one torus link. */
static double nic_one_bw(const uly_cluster *c)
{
    const double G = (double)c->gpus_per_node, N = c->nics_per_node > 0 ? (double)c->nics_per_node : G;
    double b = c->nic_bw_Bps * G / N;
    if (c->topo == ULY_TOPO_TORUS && c->torus_link_bw_Bps > 0 && c->torus_link_bw_Bps < b) b = c->torus_link_bw_Bps;
    return b;
}

/* The NICs of one node a group's inter-node traffic runs over: its members'
 * (NCCL maps its channels to the NICs nearest each ring's GPUs, one per GPU
 * on rail-optimised nodes; several GPUs share one where a node has fewer),
 * r = g N / G of them, at least one and at most N; the `groups` groups of its
 * kind on the node run at once and share the N NICs, N / groups each. The
 * group's bandwidth through one node: one NIC's x min(r, N / groups). */
static double group_net_bw(const uly_cluster *c, const uly_group_place *gp, int64_t groups, double *nics)
{
    const double G = (double)c->gpus_per_node, N = c->nics_per_node > 0 ? (double)c->nics_per_node : G;
    double r = (double)gp->per_node * N / G;
    if (r < 1) r = 1;
    if (r > N) r = N;
    const double share = N / (double)(groups > 1 ? groups : 1);
    *nics = r;
    return nic_one_bw(c) * (r < share ? r : share);
}

/* The links NCCL's model reads for a ring, tree or NVLS collective. Graph
 * channels across nodes: one per NIC at the NIC's speed, doubled when a
 * channel is 25 GB/s or more (but not on sm > 80 below 50 GB/s with more
 * than 4 channels; ncclTopoDupChannels, src/graph/search.cc), at most 32
 * (MAXCHANNELS / 2, the ring graph's maxChannels in src/init.cc). */
static void nccl_links(const uly_cluster *c, const uly_group_place *gp, int64_t groups, uly_nccl_links *L)
{
    L->sm = c->nccl_sm;
    L->intra_bw = gp->per_node <= 1 ? INFINITY : c->pcie_per_switch > 0 ? pcie_link_bw(c, gp) : intra_bw(c, 1);
    if (gp->nodes <= 1) {
        L->ring_bw = L->tree_bw = L->intra_bw;
        L->net_bw = L->nch = 0;
        return;
    }
    double nics;
    const double net = group_net_bw(c, gp, groups, &nics);
    L->net_bw = net;
    L->ring_bw = L->intra_bw < net ? L->intra_bw : net;
    L->tree_bw = L->ring_bw;
    if (gp->nodes == 2) L->tree_bw = 2 * net < L->intra_bw ? 2 * net : L->intra_bw;
    const double speed = nic_one_bw(c);
    double nch = (double)(int64_t)nics; /* whole NICs: nics is 1..1024 */
    if (speed >= 25e9 && !(c->nccl_sm > 80 && speed < 50e9 && nch > 4)) nch = 2 * nch < 32 ? 2 * nch : 32;
    L->nch = nch;
}

/* All-to-all as NCCL runs it: grouped sends and receives to every peer at
 * once, each remote block through the NIC on its destination's rail (PXN:
 * first over NVLink to the local GPU on that rail). NVLink carries the
 * in-node blocks and the relayed remote ones, the NICs the remote ones; the
 * slower sets the time. The latency terms are the Hockney model's (NCCL has
 * no cost model for its all-to-all). */
static double alltoall_nccl(const uly_cluster *c, const uly_group_place *gp, double sent, int64_t groups)
{
    if (gp->nodes <= 1) return alltoall(c, gp, sent);
    const double p = (double)gp->size, g = (double)gp->per_node, M = (double)gp->nodes;
    const double buf = sent * p / (p - 1.0);
    double nics;
    const double rate = group_net_bw(c, gp, groups, &nics) / g / nic_factor(c, gp); /* one rank's */
    double inter = buf * (M - 1.0) / M / rate;
    if (c->topo == ULY_TOPO_TORUS && c->torus_link_bw_Bps > 0) {
        const double k = ceil(pow(M, 1.0 / (double)(c->torus_dims > 0 ? c->torus_dims : 1)) - 1e-9);
        const double bis = k * buf * g / (8.0 * c->torus_link_bw_Bps);
        if (bis > inter) inter = bis;
    }
    double lat = (M - 1.0) * c->nic_lat_s, nv = 0;
    if (gp->per_node > 1) {
        lat += (g - 1.0) * c->intra_lat_s;
        if (c->pcie_per_switch > 0) {
            const pcie_span q = pcie_place(c, gp);
            nv = pcie_alltoall_s(c, &q, buf);
        } else {
            nv = (buf * (g - 1.0) / p + buf * (M - 1.0) / M * (g - 1.0) / g) / intra_bw(c, gp->per_node - 1);
        }
    }
    return lat + (nv > inter ? nv : inter);
}

/* A ring hop's bandwidth: inside a node the link's; across nodes the
 * sender's own NIC, shared when the node's groups outnumber its NICs. */
static double hop_bw(const uly_cluster *c, const uly_group_place *gp, int64_t groups)
{
    if (gp->nodes <= 1) return link_bw(c, gp, 1);
    const double G = (double)c->gpus_per_node, N = c->nics_per_node > 0 ? (double)c->nics_per_node : G;
    const double share = N / (double)(groups > 1 ? groups : 1);
    return nic_one_bw(c) * (share < 1 ? share : 1);
}

static double nccl_cost(const uly_cluster *c, uly_coll coll, const uly_group_place *gp, double bytes_sent, int steps,
                        int64_t groups)
{
    switch (coll) {
    case ULY_COLL_ALLTOALL:
        return alltoall_nccl(c, gp, bytes_sent, groups);
    case ULY_COLL_ALLGATHER:
    case ULY_COLL_REDUCE_SCATTER:
    case ULY_COLL_ALLREDUCE: {
        uly_nccl_links L;
        nccl_links(c, gp, groups, &L);
        return uly_nccl_coll_s(c, coll, gp, bytes_sent, &L);
    }
    case ULY_COLL_SENDRECV:
        return uly_nccl_hop_s(c, gp, bytes_sent, steps, hop_bw(c, gp, groups));
    default:
        return 0;
    }
}

double uly_cost_collective(const uly_cluster *c, uly_coll coll, const uly_group_place *gp,
                           double bytes_sent, int steps, int64_t concurrent_groups_per_node)
{
    if (gp->size <= 1 || bytes_sent <= 0) return 0;
    if (c->coll_model == ULY_COLL_NCCL) return nccl_cost(c, coll, gp, bytes_sent, steps, concurrent_groups_per_node);
    /* Hockney: each GPU's NIC share, whatever the groups beside it */
    const double p = (double)gp->size;
    const double lat = gp->nodes > 1 ? c->nic_lat_s : c->intra_lat_s;
    switch (coll) {
    case ULY_COLL_ALLTOALL:
        return alltoall(c, gp, bytes_sent);
    case ULY_COLL_ALLGATHER:
    case ULY_COLL_REDUCE_SCATTER:
        /* a ring through all members: the rings cross each node boundary
         * once, so the NIC (not NVLink) sets the pace when the group spans nodes */
        return (p - 1.0) * lat + bytes_sent / link_bw(c, gp, 1);
    case ULY_COLL_ALLREDUCE:
        return 2.0 * (p - 1.0) * lat + bytes_sent / link_bw(c, gp, 1);
    case ULY_COLL_SENDRECV: {
        const double s = steps > 0 ? steps : 1;
        return s * lat + bytes_sent / link_bw(c, gp, 1);
    }
    default:
        return 0;
    }
}

double uly_ring_min_block_tokens(double flops_per_s, double bw_Bps)
{
    /* a block of c tokens costs 4 d c^2 FLOPs and moves K, V: 2 x 2 bytes x
     * c d; compute hides the transfer when 4 d c^2 / F >= 4 c d / B */
    if (!(bw_Bps > 0)) return INFINITY;
    return flops_per_s / bw_Bps;
}
