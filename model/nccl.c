/* nccl.c: collectives priced as NCCL prices and runs them (docs/model.md,
 * "Collective costs", "NCCL's cost model"). NCCL's tuning model
 * (src/graph/tuning.cc of NVIDIA/nccl: ncclTopoTuneModel builds, for every
 * collective, algorithm and protocol, a latency and a bandwidth;
 * ncclTopoGetAlgoTime prices a call at latency + bytes / bandwidth; and
 * topoGetAlgoInfo in src/enqueue.cc runs the fastest). NCCL reads its
 * bandwidths from the topology graphs it searched (channels x per-channel
 * speed, src/graph/search.cc); here they are the cluster's own achieved link
 * rates, worked out by network.c: the in-node ring bandwidth and the NICs of
 * the group's members shared with the groups running at the same time. Each
 * constant below names the function and table of NCCL's source it is from
 * (NCCL 2.29, master of June 2026). */
#include <float.h>
#include <math.h>

#include "internal.h"

enum { P_LL = 0, P_LL128 = 1, P_SIMPLE = 2, P_COUNT = 3 };
enum { A_TREE = 0, A_RING, A_COLLNET_DIRECT, A_NVLS, A_NVLS_TREE, A_PAT, A_COUNT };
enum { HW_NVLINK = 0, HW_PCI = 1, HW_NET = 2 };

/* tuning.cc, ncclTunerConstantsDefaults.baseLatencies (us): the launch and
 * setup a call pays once, by algorithm and protocol (LL, LL128, Simple). */
static const double BASE_LAT_US[A_COUNT][P_COUNT] = {
    [A_TREE] = {6.8, 14.0, 8.4}, [A_RING] = {6.6, 14.0, 8.4}, [A_PAT] = {8.0, 8.0, 8.0}};

/* tuning.cc, ncclTunerConstantsDefaults.hwLatencies (us): the latency of one
 * step over NVLink, PCIe or the network, by algorithm and protocol. */
static const double HW_LAT_US[3][A_COUNT][P_COUNT] = {
    [HW_NVLINK] = {[A_TREE] = {0.6, 1.25, 4.0}, [A_RING] = {0.6, 1.9, 3.4}, [A_COLLNET_DIRECT] = {0, 0, 3.7},
                   [A_NVLS] = {0, 0, 25}, [A_NVLS_TREE] = {0, 0, 25}, [A_PAT] = {0, 0, 4.0}},
    [HW_PCI] = {[A_TREE] = {1.0, 1.9, 4.0}, [A_RING] = {1.0, 2.5, 5.7}, [A_COLLNET_DIRECT] = {0, 0, 3.7},
                [A_PAT] = {0, 0, 4.0}},
    [HW_NET] = {[A_TREE] = {5.0, 8.5, 14}, [A_RING] = {2.7, 4.0, 14.0}, [A_COLLNET_DIRECT] = {0, 0, 31},
                [A_NVLS] = {0, 0, 18}, [A_NVLS_TREE] = {0, 0, 20.9}, [A_PAT] = {0, 0, 14}}};

/* tuning.cc, ncclTunerConstantsDefaults (GB/s), rows by NCCL's compute
 * capability index (Volta and older, Ampere, Hopper, Blackwell: 0..3),
 * columns by nodes (1, 2, more): llMaxBws (one node: by GPU; more nodes:
 * row 0 Intel or other CPUs, row 1 AMD), perChMaxRingLL128Bws,
 * perChMaxTreeLL128Bws, perChMaxTreeBws, perChMaxNVLSTreeBws. */
static const double LL_MAX_GBPS[4][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0},
                                         {282.0, 90.0, 70.0}};
static const double RING_LL128_CH_GBPS[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40, 40, 40}};
static const double TREE_LL128_CH_GBPS[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
static const double TREE_CH_GBPS[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
static const double NVLS_TREE_CH_GBPS[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};
/* tuning.cc, nvlsEfficiency: NVLink SHARP's share of the NVLink bandwidth */
static const double NVLS_EFF[4] = {0.0, 0.0, 0.85, 0.74};

/* tuning.cc, treeCorrectionFactor[protocol][log2(bytes / 64)]: NCCL's
 * measured shortfall of its trees at medium sizes (64 B to 256 MB) */
static const float TREE_CORR[P_COUNT][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};

/* the smaller (no libm call: fmin is not inlined without -ffinite-math-only) */
static inline double dmin(double a, double b) { return a < b ? a : b; }

/* NCCL's compute capability index (tuning.cc, ncclTopoTuneModel) */
static int cc_index(int sm) { return sm >= 100 ? 3 : sm >= 90 ? 2 : sm >= 80 ? 1 : 0; }

/* floor(log2(floor(x))) (NCCL's log2i of an integer), -1 below 1 */
static int log2_floor(double x)
{
    if (!(x >= 1)) return -1;
    if (x >= 9.2e18) return 63;
    return 63 - __builtin_clzll((unsigned long long)x);
}

/* What a call's candidates share: NCCL's indices for this group and the
 * latency scales (the cluster's per-hop latencies over NCCL's Simple-ring
 * figures for the same links: 1 for the NVLink and InfiniBand presets). */
typedef struct nccl_ctx {
    const uly_nccl_links *L;
    double p, g, M, n, nbytes;
    int ar, cci, idx2, hw_intra;
    double s_in, s_net, ll_max_Bps, net_overhead_s, best;
} nccl_ctx;

static double hw_lat_s(const nccl_ctx *x, int hw, int a, int proto)
{
    return HW_LAT_US[hw][a][proto] * 1e-6 * (hw == HW_NET ? x->s_net : x->s_in);
}

/* The inter-node step latency: with one rank per node every step is
 * exposed and NCCL takes the tree's network figure (tuning.cc). */
static double inter_lat_s(const nccl_ctx *x, int a, int proto)
{
    return hw_lat_s(x, HW_NET, x->g <= 1 ? A_TREE : a, proto);
}

static void take(nccl_ctx *x, double t)
{
    if (t < x->best) x->best = t;
}

static double cap(double bw, double nch, double per_ch_gbps)
{
    /* per-channel caps apply across nodes, where the channels are the NICs' */
    return nch > 0 && nch * per_ch_gbps * 1e9 < bw ? nch * per_ch_gbps * 1e9 : bw;
}

/* Ring: nsteps = 2(p-1) (all-reduce) or p-1 steps, M-1 (or 2(M-1)) of them
 * between nodes; time = latency + sent / bus bandwidth. Simple first: LL128
 * (at most 0.92 of its bandwidth) and LL (at most half) are priced only
 * when their data time alone would beat the best so far, which they cannot
 * for the large messages most plans send (the minimum is the same). */
typedef struct ring_steps {
    double all, inter, data_s; /* steps, those between nodes; Simple's data time */
} ring_steps;

/* One protocol's candidate at bandwidth bw (Simple: its data time); proto
 * a constant at each call, so that its table entries fold */
static inline __attribute__((always_inline)) void ring_proto(nccl_ctx *x, const ring_steps *st, int proto, double bw)
{
    const uly_nccl_links *L = x->L;
    double intra = hw_lat_s(x, x->hw_intra, A_RING, proto);
    if (x->M > 1) {
        const double ovh = x->net_overhead_s * (proto == P_SIMPLE ? 3 : 1);
        if (ovh > intra) intra = ovh;
    }
    double lat = BASE_LAT_US[A_RING][proto] * 1e-6 + (st->all - st->inter) * intra +
                 st->inter * inter_lat_s(x, A_RING, proto);
    /* ncclTopoGetAlgoTime: the ring's plateau across nodes */
    if (x->ar && proto == P_SIMPLE && x->M > 1 && x->nbytes >= 64.0 * 2.0 * L->nch * x->p)
        lat *= L->sm < 80 ? 1.9 : 1.4;
    take(x, lat + (proto == P_SIMPLE ? st->data_s : x->n / bw));
}

/* Inline at both its calls: out of line, the call took the context's
 * address, and every field of it went through memory (about 70
 * instructions per collective priced, plan_bench under callgrind) */
static inline __attribute__((always_inline)) void ring(nccl_ctx *x, int ll128)
{
    const uly_nccl_links *L = x->L;
    const ring_steps st = {.all = x->ar ? 2 * (x->p - 1) : x->p - 1,
                           .inter = x->M > 1 ? (x->ar ? 2 * (x->M - 1) : x->M - 1) : 0,
                           .data_s = x->n / L->ring_bw};
    ring_proto(x, &st, P_SIMPLE, L->ring_bw);
    if (ll128 && !(st.data_s * (1.0 / 0.92) >= x->best)) /* (NaN times priced on, as before) */
        ring_proto(x, &st, P_LL128, cap(0.92 * L->ring_bw, L->nch, RING_LL128_CH_GBPS[x->cci][x->idx2]));
    if (!(2.0 * st.data_s >= x->best)) ring_proto(x, &st, P_LL, dmin(x->ll_max_Bps, 0.5 * L->ring_bw));
}

/* Tree all-reduce: a chain in each node and a double binary tree between
 * nodes; algorithm bandwidth half the bus bandwidth, corrected by size. */
static void tree(nccl_ctx *x, int ll128)
{
    const uly_nccl_links *L = x->L;
    const double b92 = cap(0.92 * L->tree_bw, L->nch, TREE_CH_GBPS[x->cci][x->idx2]);
    /* no protocol's bandwidth exceeds b92 nor a correction 1: data time at
     * least 2S / b92 */
    if (2 * x->nbytes / b92 >= x->best) return;
    const int ls = log2_floor(x->nbytes * (1.0 / 64.0));
    const double hops_in = x->g - 1, hops_net = log2_floor(x->M);
    for (int proto = 0; proto < P_COUNT; proto++) {
        double bw = b92;
        if (proto == P_LL) bw = dmin(b92 / 3.8, x->ll_max_Bps);
        if (proto == P_LL128) {
            if (!ll128) continue;
            bw = cap(b92 * (x->M <= 1 ? 7.0 / 9.0 : 120.0 / 128.0), L->nch, TREE_LL128_CH_GBPS[x->cci][x->idx2]);
        }
        if (ls >= 0 && ls < 23) bw *= TREE_CORR[proto][ls];
        const double lat = BASE_LAT_US[A_TREE][proto] * 1e-6 +
                           2 * (hops_in * hw_lat_s(x, x->hw_intra, A_TREE, proto) + hops_net * inter_lat_s(x, A_TREE, proto));
        take(x, lat + 2 * x->nbytes / bw);
    }
}

/* NVLink SHARP: the NVSwitch reduces; NVLSTree across nodes, and with IB
 * SHARP NVLS itself across nodes. All-reduce only (NCCL's NVLS all-gather
 * and reduce-scatter run at eff (c-1)/c of NVLink, below the ring). */
static void nvls(nccl_ctx *x, int sharp)
{
    const uly_nccl_links *L = x->L;
    const double nch = x->g < 32 ? x->g : 32; /* the NVLS graph: one channel per local GPU */
    const double intra = L->intra_bw * NVLS_EFF[x->cci] * (nch - 1) / nch * 2.0;
    const double lat_in = hw_lat_s(x, HW_NVLINK, A_NVLS, P_SIMPLE);
    if (x->M <= 1) {
        take(x, lat_in + x->n / intra);
        return;
    }
    const double inter = L->net_bw * (x->M <= 2 ? 2.0 : 1.0);
    double bw = dmin(intra, inter);
    const double ch = NVLS_TREE_CH_GBPS[x->cci][x->idx2] * 1e9 * nch;
    if (ch < bw) bw = ch;
    take(x, hw_lat_s(x, HW_NVLINK, A_NVLS_TREE, P_SIMPLE) +
                2 * log2_floor(x->M) * inter_lat_s(x, A_NVLS_TREE, P_SIMPLE) + x->n / bw);
    if (sharp) take(x, lat_in + inter_lat_s(x, A_NVLS, P_SIMPLE) + x->n / dmin(intra, L->net_bw));
}

/* CollNet Direct (IB SHARP, all-reduce): the switches reduce across nodes;
 * at most 8 local GPUs, one NIC each at full speed. */
static void collnet(nccl_ctx *x)
{
    const uly_nccl_links *L = x->L;
    if (x->g > 8) return;
    double bw = x->g > 1 ? dmin(L->intra_bw, 2 * L->net_bw) : 2 * L->net_bw;
    if (L->sm >= 90) bw *= 0.85;
    const double lat = 2 * ((x->g > 1 ? 1 : 0) * hw_lat_s(x, x->hw_intra, A_COLLNET_DIRECT, P_SIMPLE) +
                            (x->g - 1) * 0.4e-6) + inter_lat_s(x, A_COLLNET_DIRECT, P_SIMPLE);
    take(x, lat + 2 * x->nbytes / bw);
}

double uly_nccl_coll_s(const uly_cluster *c, uly_coll coll, const uly_group_place *gp, double bytes_sent,
                       const uly_nccl_links *L)
{
    nccl_ctx x;
    x.L = L;
    x.p = (double)gp->size;
    x.g = (double)gp->per_node;
    x.M = (double)gp->nodes;
    x.n = bytes_sent;
    x.ar = coll == ULY_COLL_ALLREDUCE;
    /* NCCL's size: the all-reduce buffer, the all-gather's output, the
     * reduce-scatter's input (src/include/enqueue.h, ncclFuncMaxSendRecvCount) */
    x.nbytes = x.ar ? bytes_sent * x.p / (2 * (x.p - 1)) : bytes_sent * x.p / (x.p - 1);
    x.cci = cc_index(L->sm);
    x.idx2 = gp->nodes <= 2 ? (int)gp->nodes - 1 : 2;
    const int idx1 = gp->nodes <= 1 ? x.cci : c->host_cpu_amd ? 1 : 0;
    x.ll_max_Bps = LL_MAX_GBPS[idx1][x.idx2] * 1e9;
    x.hw_intra = c->pcie_per_switch > 0 ? HW_PCI : HW_NVLINK;
    /* over NCCL's Simple-ring step latencies: 5.7 us PCIe, 3.4 NVLink, 14 network */
    x.s_in = c->intra_lat_s * (x.hw_intra == HW_PCI ? 1e6 / 5.7 : 1e6 / 3.4);
    x.s_net = c->nic_lat_s * (1e6 / 14.0);
    /* tuning.cc, getNetOverhead: the proxy's post per network step */
    x.net_overhead_s = c->host_cpu_amd ? 2.0e-6 : 1.0e-6;
    x.best = DBL_MAX;
    /* tuning.cc: LL128 by default only where the GPUs talk over NVLink
     * (path NVB or better) and from Volta on */
    const int ll128 = L->sm >= 70 && c->pcie_per_switch == 0;
    const int algos = c->nccl_algos > 0 ? c->nccl_algos : ULY_NCCL_ALGO_ALL;
    if (algos & ULY_NCCL_ALGO_RING) ring(&x, ll128);
    if (x.ar && (algos & ULY_NCCL_ALGO_TREE)) tree(&x, ll128);
    if (x.ar && c->intra_nvls && gp->per_node >= 2 && NVLS_EFF[x.cci] > 0 && (algos & ULY_NCCL_ALGO_NVLS))
        nvls(&x, c->inter_sharp);
    if (x.ar && c->inter_sharp && gp->nodes > 1 && c->intra_switched && (algos & ULY_NCCL_ALGO_COLLNET)) collnet(&x);
    /* PAT (tuning.cc, ncclPatEnable): all-gather and reduce-scatter with one
     * rank per node */
    if (!x.ar && gp->per_node == 1 && gp->nodes > 1 && L->sm >= 60 && (algos & ULY_NCCL_ALGO_PAT)) {
        const double lat = BASE_LAT_US[A_PAT][P_SIMPLE] * 1e-6 + log2_floor(x.M) * inter_lat_s(&x, A_PAT, P_SIMPLE) / 3.5 +
                           x.p * 2.8e-6;
        take(&x, lat + x.nbytes / (0.75 * L->net_bw));
    }
    /* a mask that leaves the collective no algorithm (NCCL refuses such a
     * call: "No algorithm/protocol available"): priced as the ring */
    if (x.best == DBL_MAX) ring(&x, ll128);
    return x.best;
}

/* Ring hops (send/recv): NCCL sends a peer message of at most
 * P2P_LL_THRESHOLD (16 KiB, src/enqueue.cc) with LL, at half the link rate
 * and LL's step latency, larger ones with Simple. */
double uly_nccl_hop_s(const uly_cluster *c, const uly_group_place *gp, double bytes_sent, int steps, double bw)
{
    const double s = steps > 0 ? steps : 1, hop = bytes_sent / s;
    const int ll = hop <= 16384;
    const int net = gp->nodes > 1;
    const int hw = net ? HW_NET : c->pcie_per_switch > 0 ? HW_PCI : HW_NVLINK;
    const double own = net ? c->nic_lat_s : c->intra_lat_s;
    const double lat = own * HW_LAT_US[hw][A_RING][ll ? P_LL : P_SIMPLE] / HW_LAT_US[hw][A_RING][P_SIMPLE];
    return s * lat + bytes_sent / (ll ? 0.5 * bw : bw);
}
