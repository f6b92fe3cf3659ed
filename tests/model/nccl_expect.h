/* nccl_expect.h: NCCL's ring and tree formulas written out for the tests,
 * independently of model/nccl.c: the constants transcribed again from
 * NCCL's src/graph/tuning.cc (ncclTunerConstantsDefaults, ncclTopoTuneModel,
 * ncclTopoGetAlgoTime), only for the cases the tests use (Ampere and Hopper,
 * NVLink in the node, InfiniBand between nodes, Intel hosts). Times in
 * seconds, bandwidths in B/s. */
#ifndef ULY_TEST_NCCL_EXPECT_H
#define ULY_TEST_NCCL_EXPECT_H
#include <math.h>

#include "ulysim.h"

/* a collective's setting: p ranks, g per node, M nodes; the in-node ring
 * bandwidth, the group's NIC bandwidth through one node, NCCL's channels
 * across nodes; the cluster's per-hop latencies (NVLink, network) and its
 * compute capability */
typedef struct nx_case {
    double p, g, M, intra_Bps, net_Bps, nch, lat_nv_s, lat_net_s;
    int sm;
} nx_case;

static inline double nx_min(double a, double b) { return a < b ? a : b; }

/* ring all-gather / reduce-scatter (ar 0) or all-reduce (ar 1) of n bytes
 * sent per rank with protocol k (0 LL, 1 LL128, 2 Simple) */
static inline double nx_ring(const nx_case *x, int ar, int k, double n)
{
    const int hop = x->sm >= 90 ? 2 : 1; /* tuning.cc rows: Ampere 1, Hopper 2 */
    const double base_us[3] = {6.6, 14.0, 8.4};
    const double nv_us[3] = {0.6, 1.9, 3.4}, net_ring_us[3] = {2.7, 4.0, 14.0}, net_tree_us[3] = {5.0, 8.5, 14.0};
    const double idx2 = x->M <= 1 ? 0 : x->M <= 2 ? 1 : 2;
    const double llmax_one[4] = {39.0, 87.7, 141.0, 282.0};   /* one node: by GPU */
    const double llmax_intel[3] = {39.0, 39.0, 20.4};         /* more nodes, Intel hosts */
    const double ll128_ch = hop == 2 ? 36.7 : 20.0;
    const double B = x->M > 1 ? nx_min(x->g > 1 ? x->intra_Bps : INFINITY, x->net_Bps) : x->intra_Bps;
    double bw = B;
    if (k == 0) bw = nx_min(0.5 * B, 1e9 * (x->M <= 1 ? llmax_one[hop] : llmax_intel[(int)idx2]));
    if (k == 1) bw = x->nch > 0 ? nx_min(0.92 * B, x->nch * ll128_ch * 1e9) : 0.92 * B;
    const double steps = ar ? 2 * (x->p - 1) : x->p - 1;
    const double inter = x->M > 1 ? (ar ? 2 * (x->M - 1) : x->M - 1) : 0;
    double lat_in = nv_us[k] * 1e-6 * x->lat_nv_s / 3.4e-6;
    if (x->M > 1 && lat_in < (k == 2 ? 3.0e-6 : 1.0e-6)) lat_in = k == 2 ? 3.0e-6 : 1.0e-6; /* Intel net overhead */
    const double lat_net = (x->g <= 1 ? net_tree_us[k] : net_ring_us[k]) * 1e-6 * x->lat_net_s / 14e-6;
    double lat = base_us[k] * 1e-6 + (steps - inter) * lat_in + inter * lat_net;
    const double nbytes = ar ? n * x->p / (2 * (x->p - 1)) : n * x->p / (x->p - 1);
    if (ar && k == 2 && x->M > 1 && nbytes >= 64 * 2 * x->nch * x->p) lat *= 1.4;
    return lat + n / bw;
}

/* tree all-reduce, Ampere or Hopper, more than two nodes, protocol k */
static inline double nx_tree(const nx_case *x, int k, double n)
{
    const int hop = x->sm >= 90;
    const double base_us[3] = {6.8, 14.0, 8.4};
    const double nv_us[3] = {0.6, 1.25, 4.0}, net_us[3] = {5.0, 8.5, 14.0};
    const double tree_ch = hop ? 36.0 : 17.8, tree_ll128_ch = hop ? 29.0 : 20.0, llmax = 20.4;
    const double B = nx_min(x->g > 1 ? x->intra_Bps : INFINITY, x->net_Bps);
    const double b92 = nx_min(0.92 * B, x->nch * tree_ch * 1e9);
    double bw = k == 2 ? b92 : k == 0 ? nx_min(b92 / 3.8, llmax * 1e9) : nx_min(b92 * 120.0 / 128.0, x->nch * tree_ll128_ch * 1e9);
    const double nbytes = n * x->p / (2 * (x->p - 1));
    /* treeCorrectionFactor by floor(log2(nbytes / 64)) */
    static const double corr[3][23] = {
        {1, 1, 1, 1, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1, 1, 1, 1},
        {1, 1, 1, 1, 1, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1, 1},
        {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
    const int ls = (int)floor(log2(floor(nbytes / 64)));
    if (ls >= 0 && ls < 23) bw *= corr[k][ls];
    const double lat = base_us[k] * 1e-6 + 2e-6 * ((x->g - 1) * nv_us[k] * x->lat_nv_s / 3.4e-6 +
                                                  floor(log2(x->M)) * net_us[k] * x->lat_net_s / 14e-6);
    return lat + 2 * nbytes / bw;
}

#endif
