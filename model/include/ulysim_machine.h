/* ulysim_machine.h: the machine libulysim prices a plan on: a GPU (peaks,
 * memory, efficiency curves, the kernel classes of memory-bound work, GEMMs
 * by shape, clocks) and a cluster of them (the links in a node and between
 * nodes, the topology, how collectives are priced, overlap and the host's
 * costs). Included by ulysim.h where the specs need it; include that, not
 * this. */
#ifndef ULYSIM_MACHINE_H
#define ULYSIM_MACHINE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An efficiency curve: fraction of peak as a function of a size x,
 * interpolated linearly in log2(x), clamped at the ends. n == 0 means
 * "use the fallback" (the GEMM curve for attention). */
#define ULY_CURVE_MAX 8
typedef struct uly_curve {
    int n;
    double x[ULY_CURVE_MAX];
    double eff[ULY_CURVE_MAX];
} uly_curve;

double uly_curve_eval(const uly_curve *c, double x);

/* An attention curve past its last point follows the kernel's trend rather
 * than its last point: the efficiency e(x) = x / (a x + b) through the last
 * two points (per-block overheads amortised over a longer key/value block,
 * approaching 1/a); inside the points, and where the last two points do not
 * rise, as uly_curve_eval. GPU presets' FlashAttention curves only
 * (docs/model.md, "Compute costs"). */
double uly_curve_eval_trend(const uly_curve *c, double x);

/* cuDNN fused attention's efficiency (--attn-kernel cudnn), [backward]
 * [causal], by the kv length of the block, as a fraction of the dense bf16
 * peak (model/attn_cudnn.c: NVIDIA's published cuDNN SDPA benchmark). */
extern const uly_curve uly_cudnn_attn_eff[2][2];

typedef enum uly_topo { ULY_TOPO_FATTREE = 0, ULY_TOPO_RAIL = 1, ULY_TOPO_TORUS = 2, ULY_TOPO_COUNT } uly_topo;
const char *uly_topo_name(uly_topo t);

/* Memory-bound kernel classes: what a kernel does with the bytes it moves,
 * which decides the share of HBM bandwidth it reaches (uly_gpu.mb_eff).
 *   stream   element-wise: adds, casts, bias + activation, dropout, rotary,
 *            gathers (one pass, no reduction);
 *   norm     row reductions with a second pass: layer norm, RMS norm
 *            forward (statistics, then the normalised rows);
 *   norm_bwd their backward (two row reductions, and the gains' gradient
 *            summed over the rows);
 *   softmax  softmax over score rows and the cross-entropy over logits rows
 *            (max, exp-sum, normalise);
 *   optim    the optimizer step's multi-tensor passes (many tensors per
 *            launch, four or more streams per element). */
#define ULY_MB_CLASSES(X) \
    X(ULY_MB_STREAM, "stream") X(ULY_MB_NORM, "norm") X(ULY_MB_NORM_BWD, "norm_bwd") X(ULY_MB_SOFTMAX, "softmax") \
    X(ULY_MB_OPTIM, "optim")
typedef enum uly_mb_class { ULY_MB_CLASSES(ULY_X_ENUM) ULY_MB_COUNT } uly_mb_class;
/* The class's name ("?" out of range); the class of a name, ULY_MB_COUNT when none. */
const char *uly_mb_class_name(uly_mb_class c);
uly_mb_class uly_mb_class_find(const char *name);

/* How collectives are priced (docs/model.md, "Collective costs"). Hockney:
 * alpha-beta per link tier, the formulas ulysim calibrate fits on CPU hosts
 * (MPI); the zero value, so a cluster written before this field, and every
 * calibrated profile, keeps it. NCCL: NCCL's own cost model (its
 * src/graph/tuning.cc): algorithms, protocols, channels, the fastest chosen,
 * over every NIC of a node. */
typedef enum uly_coll_model { ULY_COLL_HOCKNEY = 0, ULY_COLL_NCCL = 1, ULY_COLL_MODEL_COUNT } uly_coll_model;
const char *uly_coll_model_name(uly_coll_model m);

/* NCCL's algorithms, as bits of uly_cluster.nccl_algos (NCCL_ALGO): 0 or
 * ULY_NCCL_ALGO_ALL lets NCCL choose among all it would use. */
enum {
    ULY_NCCL_ALGO_RING = 1,
    ULY_NCCL_ALGO_TREE = 2,
    ULY_NCCL_ALGO_NVLS = 4,    /* NVLS, NVLSTree (intra_nvls) */
    ULY_NCCL_ALGO_COLLNET = 8, /* CollNet Direct (inter_sharp) */
    ULY_NCCL_ALGO_PAT = 16,
    ULY_NCCL_ALGO_ALL = 31
};

typedef struct uly_gpu {
    char name[ULY_NAME_LEN];
    char arch[16];                      /* "hopper", "ampere", ... ("" unknown): which kernels run on it */
    double peak_flops[ULY_DTYPE_COUNT]; /* dense FLOP/s per dtype */
    double hbm_bytes;                   /* usable device memory */
    double hbm_bw_Bps;
    double mem_eff;                     /* fraction of hbm_bw_Bps elementwise kernels reach */
    uly_curve gemm_eff;                 /* x: cube root of m*n*k */
    uly_curve attn_eff[2][2];           /* [causal][head_dim >= 128]; x: kv length of the block */
    double reserved_bytes;              /* runtime, allocator and fragmentation held back */
    /* The MLP activation (GELU, SiLU) where it is bound by its arithmetic
     * rather than by memory: on CPUs tanhf/expf cost tens of ns per element,
     * far above the bytes they move; on GPUs these are 0 (memory-bound, priced
     * by bytes alone). Seconds per activation element, forward and backward. */
    double act_fwd_s_per_elem;
    double act_bwd_s_per_elem;
    /* Flash attention backward's efficiency over the forward's at the same
     * block (its FLOPs are 2.5x the forward's): kernel runs measure it (the
     * CPU kernel's backward runs at ~1.35x its forward's FLOP rate); 0 or 1:
     * the same curve for both (GPU presets: FlashAttention-2 publishes
     * forward + backward together). */
    double attn_bwd_rel;
    /* Shape classes a CPU profile's kernel runs measure (ulysim calibrate);
     * n == 0 keeps the rules above (GPU presets). attn_bwd_eff: backward
     * flash attention's own efficiency by the block's kv rows, [causal]
     * [head_dim >= 128] as attn_eff (attn_bwd_rel is then not applied: the
     * curve is the backward's rate). act_eff: the activation's per-element
     * rate by the op's element count over its best, [backward]: an element
     * costs act_*_s_per_elem / act_eff(elements) (on a CPU the rate falls
     * once the activation's input outgrows the caches). */
    uly_curve attn_bwd_eff[2][2];
    uly_curve act_eff[2];
    /* Compute running while a transfer is in flight slows by this fraction
     * (GPU communication kernels occupy SMs and memory bandwidth); the
     * compute under a hidden transfer costs (1 + comm_slowdown) x its time
     * there. 0: no slowdown (CPU ranks: the transfer is a copy by the
     * library between the kernel calls, priced in the overlap below). */
    double comm_slowdown;
    /* Memory-bound kernels reach a share of hbm_bw_Bps that depends on what
     * they do with the bytes (a copy streams, a norm reduces rows, a softmax
     * reduces rows twice): the fraction each class reaches at large sizes,
     * from published kernel measurements (docs/model.md, "Memory-bound
     * ops"); 0: mem_eff. */
    double mb_eff[ULY_MB_COUNT];
    /* What one kernel adds to its own work on the GPU, launched back to back
     * from a stream [0] or replayed from a CUDA graph [1] (launch latency and
     * ramp): an op of k kernels costs k x this more; 0: nothing. */
    double kernel_floor_s[2];
    /* GEMMs priced by shape (model/gemm.c; docs/model.md, "Compute costs"):
     * sm_count > 0 prices a GEMM by its output tiles over the SMs, its k
     * loop and its bytes, and gemm_eff is not used; 0 (CPU profiles) keeps
     * the curve. gemm_peak_frac: the best fraction of the dense peak a GEMM
     * reaches (published "maximum achievable matmul FLOPS"); gemm_tile_m x
     * gemm_tile_n: the output tile one SM computes at a time;
     * gemm_latency_s: a GEMM kernel's pipeline fill, paid once per GEMM. */
    int32_t sm_count;
    int32_t gemm_tile_m, gemm_tile_n;
    double gemm_peak_frac;
    double gemm_latency_s;
    /* Clocks: the datasheet's peak is stated at boost_clock_hz; a GPU that
     * sustains a lower clock under load (a power cap) runs its tensor cores,
     * GEMM and attention, at sustained / boost of the peaks. 0: not given
     * (the boost clock is held; uly_gpu_clock_scale 1). */
    double boost_clock_hz;
    double sustained_clock_hz;
    /* The GPU's link to host memory, per direction (its PCIe lanes, or
     * NVLink-C2C on Grace superchips): what activation offload moves over
     * (uly_workload.offload_layers). 0: not given, offload refused. */
    double host_link_bw_Bps;
} uly_gpu;

/* The fraction of its datasheet tensor rate the GPU's clock allows:
 * sustained_clock_hz / boost_clock_hz, 1 when either is not given. */
double uly_gpu_clock_scale(const uly_gpu *g);

/* A GEMM by shape on a GPU (sm_count > 0), as cuBLAS runs it
 * (model/gemm.c; docs/model.md, "Compute costs"): the rates worked out once
 * per GPU and dtype, then the time of batch x (m x k)(k x n) GEMMs with
 * operands of `beta` bytes per element and output of as many, but for FP8
 * (beta 1): its GEMMs write bf16, 2 (cuBLASLt's FP8 matmul with a bf16 D,
 * as TransformerEngine calls it). */
typedef struct uly_gemm_rates {
    double sm_flops;      /* one SM's achievable FLOP/s: peak x gemm_peak_frac x clock scale / SMs */
    double inv_bw;        /* s per byte at the achievable HBM rate */
    double s_per_elem;    /* s per operand element read: beta x inv_bw */
    double sms;           /* SMs */
    double tile_m, tile_n;
    double tile_s_per_k;  /* one tile's seconds per unit of k: 2 tile_m tile_n / sm_flops */
    double latency_s;     /* pipeline fill, once per GEMM */
    double beta;          /* bytes per operand element */
} uly_gemm_rates;
void uly_gemm_rates_init(uly_gemm_rates *r, const uly_gpu *g, uly_dtype dt);
double uly_gemm_time_s(const uly_gemm_rates *r, double batch, double m, double n, double k);


typedef struct uly_cluster {
    char name[ULY_NAME_LEN];
    uly_gpu gpu;
    int64_t nodes;
    int64_t gpus_per_node;
    /* in-node fabric */
    double intra_bw_Bps;     /* per GPU per direction */
    double intra_lat_s;
    int intra_switched;      /* 1: NVSwitch crossbar; 0: direct mesh (1/(g-1) per peer) */
    /* PCIe servers (no NVLink): GPUs sit under PCIe switches, pcie_per_switch
     * to a switch, whose uplinks meet at the CPU sockets' root complexes; the
     * sockets are joined by UPI or xGMI. intra_bw_Bps is then one GPU's own
     * PCIe link. pcie_per_switch 0: not a PCIe server (the fields below are
     * unused). */
    int64_t pcie_per_switch;    /* GPUs under one PCIe switch */
    double pcie_uplink_bw_Bps;  /* one switch's uplink to its socket, per direction */
    double socket_bw_Bps;       /* the link between the two sockets, per direction (0: one socket) */
    int pcie_p2p;               /* 1: GPUs under one switch exchange directly; 0: every transfer goes
                                 * through host memory (up the switch uplink and down again) */
    /* between nodes */
    double nic_bw_Bps;       /* per GPU per direction: the node's NICs together / gpus_per_node */
    double nic_lat_s;
    int64_t nics_per_node;   /* NICs of a node (0: one per GPU); each carries nic_bw_Bps x gpus / nics */
    uly_topo topo;
    double oversub;          /* fat tree: leaf uplink oversubscription rho >= 1 */
    int64_t gpus_per_leaf;   /* fat tree: GPUs under one leaf switch */
    int64_t torus_k;         /* torus: nodes per dimension */
    int64_t torus_dims;      /* torus: dimensions */
    double torus_link_bw_Bps;/* torus: one link, one direction */
    /* The overlap the executor achieves: of a transfer that runs alongside
     * compute, overlap x min(transfer, compute) is hidden and the rest is
     * exposed. Stored as its complement so that a zeroed cluster keeps full
     * hiding (GPUs: copy engines and NCCL's own kernels move the bytes while
     * compute runs): overlap = 1 - overlap_miss, in [0, 1]. */
    double overlap_miss;
    /* Compute running beside a transfer slows by this fraction, by the link
     * tier the transfer crosses [intra, inter]: NCCL's kernels hold about one
     * SM per channel, and more channels serve NVLink than a NIC (docs/model.md,
     * "Overlap costs compute"); the compute under a hidden transfer of
     * hidden_s costs this x hidden_s more. 0: the GPU's comm_slowdown. */
    double overlap_slowdown[2];
    /* What the host spends issuing one kernel from an eager framework (the
     * Python, dispatcher and launch call of one op): a phase whose kernels
     * run faster than the host issues them waits on the host. Not spent
     * under CUDA graphs (uly_workload.cuda_graphs). 0: never host-bound. */
    double host_launch_s;
    /* Collectives (docs/model.md, "Collective costs"): the model; for NCCL,
     * the GPU's compute capability x 10 that selects NCCL's per-architecture
     * constants (60 Pascal, 70 Volta, 80 Ampere, 89 Ada, 90 Hopper, 100
     * Blackwell), the host CPU (AMD hosts get NCCL's AMD constants), NVLink
     * SHARP on the node's NVSwitches (NCCL's NVLS, NVLSTree), IB SHARP in
     * the network (NCCL's CollNet), and the algorithms allowed (NCCL_ALGO,
     * ULY_NCCL_ALGO_* bits; 0: all). */
    uly_coll_model coll_model;
    int32_t nccl_sm;
    int32_t host_cpu_amd;
    int32_t intra_nvls;
    int32_t inter_sharp;
    int32_t nccl_algos;
} uly_cluster;

#ifdef __cplusplus
}
#endif
#endif /* ULYSIM_MACHINE_H */
