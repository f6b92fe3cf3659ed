/* reason.c: one-line descriptions of feasibility reasons, for people. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ulysim.h"

/* bytes as GiB with one decimal, in exponent form from a million GiB (a
 * model far beyond any cluster reaches 10^20) */
static const char *gib_str(double b, char *buf, size_t n)
{
    const double g = b / (1024.0 * 1024.0 * 1024.0);
    snprintf(buf, n, g < 1e6 ? "%.1f" : "%.4g", g);
    return buf;
}

/* The uneven pipelines' (a layout's too) and offload's reasons: three numbers each */
static int layout_reason_format(const uly_reason *r, char *buf, size_t n)
{
    static const char *const text[] = {
        "uneven pipeline: %.0f layers on the first stage, %.0f on each middle one, %.0f on the last; the heaviest "
        "stage sets the pace",
        "Megatron-Core refuses this split of %.0f layers over %.0f stages x %.0f virtual: the stages' layers must "
        "divide evenly",
        "activation offload of %.0f layers: the cluster preset gives no GPU-host link (gpu.host_link_GBps) to price "
        "it over"};
    _Static_assert(ULY_R_PP_SPLIT_REFUSED == ULY_R_PP_STAGES + 1 && ULY_R_OFFLOAD_NO_HOST_LINK == ULY_R_PP_STAGES + 2,
                   "the texts follow the codes' order");
    if (r->code == ULY_R_PP_LAYOUT)
        return snprintf(buf, n, "pipeline layout: %.0f layers on the first stage, at most %.0f on a middle one, %.0f on "
                        "the last; the heaviest stage sets the pace", r->v[0], r->v[1], r->v[2]);
    if (r->code == ULY_R_PP_STAGES && r->v[1] < 0) /* two stages: no middle one */
        return snprintf(buf, n, "uneven pipeline: %.0f layers on the first stage, %.0f on the last; the heaviest "
                        "stage sets the pace", r->v[0], r->v[2]);
    return snprintf(buf, n, text[r->code - ULY_R_PP_STAGES], r->v[0], r->v[1], r->v[2]);
}

/* The MoE layouts' reasons */
static int moe_reason_format(const uly_reason *r, char *buf, size_t n)
{
    const double *v = r->v;
    if (r->code == ULY_R_MOE_DENSE_LAYERS)
        return snprintf(buf, n, "%.0f dense layers of %.0f priced as MoE layers (their parameters, memory and FLOPs "
                        "counted as dense)", v[0], v[1]);
    static const char *const why[] = {
        "expert parallelism %.0f x expert tensor parallelism %.0f: the model has no experts (use 1)",
        "expert parallelism x expert tensor parallelism = %.0f does not divide the stage's %.0f GPUs",
        "expert parallelism %.0f does not divide the %.0f experts",
        "tensor parallelism %.0f beside MoE layers needs sequence parallelism (Megatron-Core refuses it without)"};
    const int w = v[0] >= 0 && v[0] <= 3 ? (int)v[0] : 0;
    return snprintf(buf, n, why[w], v[1], v[2]);
}

size_t uly_reason_format(const uly_reason *r, const uly_model *m, char *buf, size_t n)
{
    const double *v = r->v;
    int k = 0;
    switch (r->code) {
    case ULY_R_GPUS_MISMATCH:
        k = snprintf(buf, n, "degrees multiply to %.0f GPUs, not %.0f", v[0], v[1]);
        break;
    case ULY_R_HEADS_NOT_DIVISIBLE:
        k = snprintf(buf, n,
                     "%.0f heads do not split evenly %.0f ways (uneven heads would run at %.2fx imbalance; not modelled)",
                     v[0], v[1], v[2]);
        break;
    case ULY_R_DEGREE_GT_HEADS:
        k = snprintf(buf, n, "degree %.0f exceeds the %.0f attention heads: each rank needs at least one head",
                     v[0], v[1]);
        break;
    case ULY_R_KV_REPLICATED:
        k = snprintf(buf, n, "%.0f KV heads replicated to %.0f so each of %.0f ranks owns one (%.1fx K,V traffic)",
                     v[0], v[1], v[2], v[1] / v[0]);
        break;
    case ULY_R_KV_EXPANDED:
        k = snprintf(buf, n, "%.0f KV heads and degree %.0f do not divide each other: KV expanded to %.0f heads (MHA)",
                     v[0], v[2], v[1]);
        break;
    case ULY_R_SEQ_NOT_DIVISIBLE: {
        /* which split needs it, and the nearest lengths that divide */
        const int zig = (int)v[2] % 2;
        const double t = v[2] > 0 ? (double)((int64_t)v[2] / 2) : 1.0, cp = v[1] / (t * (zig ? 2.0 : 1.0));
        const double lo = floor(v[0] / v[1]) * v[1], hi = lo + v[1];
        char what[120];
        if (zig)
            snprintf(what, sizeof what, "2 x %.0f context-parallel ranks: the zigzag causal split's 2 chunks per rank",
                     cp);
        else if (t > 1 && cp > 1)
            snprintf(what, sizeof what, "%.0f context-parallel ranks x tp %.0f", cp, t);
        else if (t > 1)
            snprintf(what, sizeof what, "tp %.0f: sequence parallelism splits the tokens", t);
        else
            snprintf(what, sizeof what, "%.0f context-parallel ranks", cp);
        if (zig && t > 1) {
            size_t l = strlen(what);
            snprintf(what + l, sizeof what - l, ", each split %.0f ways by sequence parallelism", t);
        }
        if (lo > 0)
            k = snprintf(buf, n, "sequence %.0f is not divisible by %.0f (%s); the nearest that are: %.0f and %.0f",
                         v[0], v[1], what, lo, hi);
        else
            k = snprintf(buf, n, "sequence %.0f is not divisible by %.0f (%s); the shortest that is: %.0f", v[0], v[1],
                         what, hi);
        break;
    }
    case ULY_R_OUT_OF_MEMORY: {
        int t = (int)v[2];
        char g[3][24];
        k = snprintf(buf, n, "out of memory: needs %s GiB of %s GiB (%s GiB over; largest term %s)",
                     gib_str(v[0], g[0], sizeof g[0]), gib_str(v[1], g[1], sizeof g[1]),
                     gib_str(v[0] - v[1], g[2], sizeof g[2]), uly_mem_term_name((uly_mem_term)t));
        break;
    }
    case ULY_R_BATCH_NOT_DIVISIBLE:
        k = snprintf(buf, n, "global batch %.0f is not a multiple of micro-batch x data-parallel = %.0f", v[0], v[1]);
        break;
    case ULY_R_TP_SPANS_NODES:
        k = snprintf(buf, n, "tensor parallelism of %.0f spans nodes of %.0f GPUs (its collectives use the NICs)",
                     v[0], v[1]);
        break;
    case ULY_R_GPUS_NOT_NODE_MULTIPLE:
        k = snprintf(buf, n, "%.0f GPUs is not a whole number of %.0f-GPU nodes", v[0], v[1]);
        break;
    case ULY_R_GPUS_EXCEED_CLUSTER:
        k = snprintf(buf, n, "%.0f GPUs exceed the cluster's %.0f", v[0], v[1]);
        break;
    case ULY_R_NO_FLASH:
        k = snprintf(buf, n, "RSA materialises the score block (no flash attention)");
        break;
    case ULY_R_CAUSAL_IMBALANCE:
        k = snprintf(buf, n, "contiguous causal split: the last rank does %.2fx the average attention work", v[0]);
        break;
    case ULY_R_UNEVEN_HEADS:
        k = snprintf(buf, n, "%.0f heads padded over %.0f ranks: %.2fx imbalance", v[0], v[1], v[2]);
        break;
    case ULY_R_PP_LAYERS:
        k = snprintf(buf, n, "%.0f pipeline stages for %.0f layer%s: each stage needs at least one", v[0], v[1],
                     v[1] == 1 ? "" : "s");
        break;
    case ULY_R_PP_UNEVEN:
        k = snprintf(buf, n, "%.0f layers over %.0f stages: the heaviest stage has %.0f layers and sets the pace "
                     "(%.2fx the average)", v[1], v[2], v[0], v[0] * v[2] / v[1]);
        break;
    case ULY_R_PP_BUBBLE:
        k = snprintf(buf, n, "1F1B pipeline of %.0f stages with %.0f micro-batch%s per step: each stage idles %.1f%% "
                     "of the step%s", v[2], v[1], v[1] == 1 ? "" : "es", 100.0 * v[0],
                     v[0] >= 0.01 ? " (a larger --global-batch, i.e. more micro-batches, shrinks it)" : "");
        break;
    case ULY_R_PP_VIRTUAL_LAYERS:
        k = snprintf(buf, n, "%.0f layers do not split into %.0f virtual stages (%.0f pipeline ranks x %.0f): "
                     "interleaving needs the layers divisible by pp x virtual stages", v[0], v[1], v[2], v[1] / v[2]);
        break;
    case ULY_R_PP_INTERLEAVED:
        k = snprintf(buf, n, "interleaved 1F1B: %.0f virtual stages of %.4g layers per pipeline rank; the first rank "
                     "holds %.3g micro-batches of activations", v[0], v[1], v[2]);
        break;
    case ULY_R_MOE_LAYOUT:
    case ULY_R_MOE_DENSE_LAYERS:
        k = moe_reason_format(r, buf, n);
        break;
    case ULY_R_PP_LAYOUT:
    case ULY_R_PP_STAGES:
    case ULY_R_PP_SPLIT_REFUSED:
    case ULY_R_OFFLOAD_NO_HOST_LINK:
        k = layout_reason_format(r, buf, n);
        break;
    default:
        k = snprintf(buf, n, "unknown reason %d", (int)r->code);
        break;
    }
    (void)m;
    return k < 0 ? 0 : (size_t)k;
}
