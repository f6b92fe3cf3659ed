/* plan_bench.c: how long one plan evaluation (build, memory, price) takes for
 * a 32-layer model, on one core, for each strategy. Target: a median of at
 * most 1 us for every strategy. Prints the median and the fastest of 7 timed
 * batches per strategy (the strategies' batches taken in turn) of this
 * thread's CPU time, so that other processes on a shared machine do not
 * count (cache sharing still does), then the slowest
 * strategy's median against the target, and a checksum of the step times
 * (it must not change when only the speed does).
 * Run: build/bench/model/plan_bench [evaluations per batch] [strategy]
 * (a strategy name times that one alone: for an instruction count per
 * strategy, valgrind --tool=callgrind plan_bench 1000 usp) */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ulysim.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: other processes on a shared machine do not count */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const long per_batch = argc > 1 ? atol(argv[1]) : 200000;
    if (per_batch < 1) {
        fprintf(stderr, "plan_bench: evaluations per batch \"%s\": want a count of at least 1\n", argv[1]);
        return 2;
    }
    int first = 0, last = ULY_STRAT_COUNT - 1;
    if (argc > 2) {
        const uly_strategy *one = uly_strategy_find(argv[2]);
        if (!one) {
            fprintf(stderr, "plan_bench: strategy \"%s\": want one of", argv[2]);
            for (int s = 0; s < ULY_STRAT_COUNT; s++) fprintf(stderr, " %s", uly_strategy_get((uly_strategy_id)s)->name);
            fprintf(stderr, "\n");
            return 2;
        }
        first = last = (int)one->id;
    }
    uly_model m = {.name = "llama3-8b", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8,
                   .head_dim = 128, .ffn_hidden = 14336, .vocab = 128256, .swiglu = 1};
    uly_workload w = {.seq = 1 << 20, .micro_batch = 1, .dtype = ULY_BF16, .causal = 1, .flash = 1,
                      .recompute = ULY_RECOMPUTE_FULL, .zero_stage = 3};
    uly_cluster c;
    memset(&c, 0, sizeof c);
    c.gpu.peak_flops[0] = c.gpu.peak_flops[1] = 989e12;
    c.gpu.peak_flops[2] = 67e12;
    c.gpu.hbm_bytes = 80e9;
    c.gpu.hbm_bw_Bps = 3.35e12;
    c.gpu.mem_eff = 0.8;
    /* GEMMs priced by shape, as the GPU presets do (dgx-h100's numbers) */
    c.gpu.sm_count = 132;
    c.gpu.gemm_peak_frac = 0.803;
    c.gpu.gemm_tile_m = c.gpu.gemm_tile_n = 128;
    c.gpu.gemm_latency_s = 1.8e-6;
    c.nodes = 128;
    c.gpus_per_node = 8;
    c.intra_bw_Bps = 450e9;
    c.intra_lat_s = 3e-6;
    c.intra_switched = 1;
    c.nic_bw_Bps = 48e9;
    c.nic_lat_s = 5e-6;
    c.oversub = 1;
    c.gpus_per_leaf = 256;
    /* collectives priced as the GPU presets price them: NCCL's cost model
     * (an H100: NCCL's Hopper constants), one NIC per GPU */
    c.coll_model = ULY_COLL_NCCL;
    c.nccl_sm = 90;

    uly_layout layouts[ULY_STRAT_COUNT];
    uly_layout_init(&layouts[ULY_STRAT_ULYSSES], ULY_STRAT_ULYSSES, 32, 1, 1, 2);
    uly_layout_init(&layouts[ULY_STRAT_RING], ULY_STRAT_RING, 1, 64, 1, 1);
    uly_layout_init(&layouts[ULY_STRAT_RSA], ULY_STRAT_RSA, 1, 64, 1, 1);
    uly_layout_init(&layouts[ULY_STRAT_ALLGATHER_CP], ULY_STRAT_ALLGATHER_CP, 1, 64, 1, 1);
    uly_layout_init(&layouts[ULY_STRAT_MEGATRON_SP], ULY_STRAT_MEGATRON_SP, 1, 1, 8, 8);
    uly_layout_init(&layouts[ULY_STRAT_USP], ULY_STRAT_USP, 8, 8, 1, 1);
    uly_layout_init(&layouts[ULY_STRAT_MEGATRON_TP], ULY_STRAT_MEGATRON_TP, 1, 1, 8, 8);

    static uly_plan plan;
    static uly_result res;
    printf("# one plan evaluation (uly_evaluate: build + memory + price), 32 layers, 1 core\n");
    printf("# strategy      ops  median_us  min_us\n");
    /* the strategies take turns, batch by batch: on a shared machine a slow
     * spell of a second or two then costs every strategy a batch, rather
     * than all seven batches of whichever strategy ran during it */
    double batch_us[ULY_STRAT_COUNT][7], sink_s[ULY_STRAT_COUNT] = {0};
    int n_ops[ULY_STRAT_COUNT] = {0};
    for (int k = 0; k < 7; k++)
        for (int s = first; s <= last; s++) {
            const double t0 = now_s();
            for (long i = 0; i < per_batch; i++) {
                w.seq = (1 << 20) + (i & 1) * 4096; /* defeat any caching of identical inputs */
                uly_evaluate(&m, &w, &c, &layouts[s], &plan, &res);
                sink_s[s] += res.time.step_s;
            }
            batch_us[s][k] = (now_s() - t0) / (double)per_batch * 1e6;
            n_ops[s] = plan.n_ops;
        }
    double sink = 0, worst_us = 0;
    int worst = first;
    for (int s = first; s <= last; s++) {
        qsort(batch_us[s], 7, sizeof batch_us[s][0], cmp);
        if (batch_us[s][3] > worst_us) {
            worst_us = batch_us[s][3];
            worst = s;
        }
        sink += sink_s[s];
        printf("%-14s %4d  %9.3f  %6.3f\n", uly_strategy_get((uly_strategy_id)s)->name, n_ops[s], batch_us[s][3],
               batch_us[s][0]);
    }
    printf("# slowest median %.3f us (%s)  [target <= 1 us for every strategy: %s]\n", worst_us,
           uly_strategy_get((uly_strategy_id)worst)->name, worst_us <= 1.0 ? "met" : "not met");
    printf("# checksum %g\n", sink);
    return 0;
}
