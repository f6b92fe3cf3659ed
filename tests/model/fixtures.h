/* fixtures.h: models and clusters for the model tests, written out here so
 * the tests of the pure library do not depend on the preset files. */
#ifndef ULY_TEST_FIXTURES_H
#define ULY_TEST_FIXTURES_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ulysim.h"

static int fx_fail_count;
#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond)) {                                                    \
            fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);         \
            fprintf(stderr, __VA_ARGS__);                                 \
            fprintf(stderr, "\n");                                        \
            fx_fail_count++;                                              \
        }                                                                 \
    } while (0)
#define FX_DONE()                                                         \
    do {                                                                  \
        if (fx_fail_count) fprintf(stderr, "%d check(s) failed\n", fx_fail_count); \
        return fx_fail_count ? 1 : 0;                                     \
    } while (0)

static inline uly_model fx_model(const char *name, int64_t L, int64_t h, int64_t a, int64_t k, int64_t f,
                                 int64_t V, int swiglu)
{
    uly_model m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "%s", name);
    m.layers = L; m.hidden = h; m.heads = a; m.kv_heads = k; m.head_dim = h / a;
    m.ffn_hidden = f; m.vocab = V; m.swiglu = swiglu;
    return m;
}

static inline uly_model fx_gpt7b(void) { return fx_model("gpt-7b", 32, 4096, 32, 32, 16384, 50304, 0); }
static inline uly_model fx_llama3_8b(void) { return fx_model("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 1); }
static inline uly_model fx_bert_base(void)
{
    uly_model m = fx_model("bert-base", 12, 768, 12, 12, 3072, 30522, 0);
    m.dropout = 1;
    return m;
}

static inline uly_workload fx_work(int64_t seq)
{
    uly_workload w;
    memset(&w, 0, sizeof w);
    w.seq = seq; w.micro_batch = 1; w.dtype = ULY_BF16; w.causal = 1; w.flash = 1;
    w.recompute = ULY_RECOMPUTE_FULL; w.zero_stage = 3; w.split = ULY_SPLIT_ZIGZAG;
    return w;
}

/* A DGX-A100-like cluster: 8 GPUs per node on NVSwitch (300 GB/s per
 * direction), one 200 Gb/s NIC per GPU (24 GB/s achieved), fat tree. */
static inline uly_cluster fx_a100(int64_t nodes)
{
    uly_cluster c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "fx-a100");
    snprintf(c.gpu.name, sizeof c.gpu.name, "A100");
    c.gpu.peak_flops[ULY_BF16] = c.gpu.peak_flops[ULY_FP16] = 312e12;
    c.gpu.peak_flops[ULY_FP32] = 19.5e12;
    c.gpu.hbm_bytes = 80e9; c.gpu.hbm_bw_Bps = 2.0e12; c.gpu.mem_eff = 0.8;
    c.gpu.gemm_eff.n = 1; c.gpu.gemm_eff.x[0] = 8192; c.gpu.gemm_eff.eff[0] = 0.8;
    c.gpu.reserved_bytes = 2e9;
    c.nodes = nodes; c.gpus_per_node = 8;
    c.intra_bw_Bps = 300e9; c.intra_lat_s = 3e-6; c.intra_switched = 1;
    c.nic_bw_Bps = 24e9; c.nic_lat_s = 5e-6; c.topo = ULY_TOPO_FATTREE; c.oversub = 1; c.gpus_per_leaf = 256;
    return c;
}

static inline int fx_eval(const uly_model *m, const uly_workload *w, const uly_cluster *c, uly_strategy_id s,
                          int64_t u, int64_t r, int64_t t, int64_t dp, uly_result *res)
{
    static uly_plan plan;
    uly_layout l;
    uly_layout_init(&l, s, u, r, t, dp);
    return (int)uly_evaluate(m, w, c, &l, &plan, res);
}
#endif
