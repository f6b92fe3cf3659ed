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
 * A direct mesh (no NVSwitch) gives each peer 1/(g-1) of the GPU's links. */
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

static double alltoall(const uly_cluster *c, const uly_group_place *gp, double sent)
{
    const double p = (double)gp->size, g = (double)gp->per_node, M = (double)gp->nodes;
    const double buf = sent * p / (p - 1.0); /* the rank's whole buffer, own block included */
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
