/* network.c: collective cost on a cluster (docs/model.md, "Collective costs").
 * Hockney alpha-beta per link tier. A group inside one node pays the in-node
 * fabric; one spanning nodes pays the NICs, bounded by the topology:
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

double uly_cost_collective(const uly_cluster *c, uly_coll coll, const uly_group_place *gp,
                           double bytes_sent, int steps, int64_t concurrent_groups_per_node)
{
    (void)concurrent_groups_per_node; /* each GPU has its own NIC share in the presets */
    if (gp->size <= 1 || bytes_sent <= 0) return 0;
    const double p = (double)gp->size;
    const double lat = gp->nodes > 1 ? c->nic_lat_s : c->intra_lat_s;
    switch (coll) {
    case ULY_COLL_ALLTOALL:
        return alltoall(c, gp, bytes_sent);
    case ULY_COLL_ALLGATHER:
    case ULY_COLL_REDUCE_SCATTER:
        /* a ring through all members: NCCL's rings cross each node boundary
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
