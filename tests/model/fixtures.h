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

/* A tiny GPT-style model whose counts are easy to do by hand: L 2, h 64,
 * a = k = 4 heads of d 16, f 256 (GELU, two h x f matrices), V 1000,
 * untied. Parameters: a layer 4h^2 + 2hf + 2h (the norms' gains)
 * = 16384 + 32768 + 128 = 49280; the model 2 x 49280 + 2 V h + h
 * = 98560 + 128000 + 64 = 226624. */
static inline uly_model fx_tiny(void) { return fx_model("tiny", 2, 64, 4, 4, 256, 1000, 0); }

/* A cluster with round rates, so priced times can be worked out by hand:
 * 1e12 FLOP/s in every dtype at efficiency 1 for every GEMM and attention
 * block, HBM bandwidth so large that memory-bound ops cost nothing, no link
 * latency, 1e9 B/s per direction inside a node (NVSwitch) and 1e8 B/s per
 * GPU between nodes, 8 GPUs per node, a flat fat tree, no reserve and 1 TB
 * of memory per GPU. */
static inline uly_cluster fx_unit(int64_t nodes)
{
    uly_cluster c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "fx-unit");
    snprintf(c.gpu.name, sizeof c.gpu.name, "unit");
    for (int i = 0; i < ULY_DTYPE_COUNT; i++) c.gpu.peak_flops[i] = 1e12;
    c.gpu.hbm_bytes = 1e12; c.gpu.hbm_bw_Bps = 1e30; c.gpu.mem_eff = 1;
    c.gpu.gemm_eff.n = 1; c.gpu.gemm_eff.x[0] = 1; c.gpu.gemm_eff.eff[0] = 1;
    c.nodes = nodes; c.gpus_per_node = 8;
    c.intra_bw_Bps = 1e9; c.intra_switched = 1;
    c.nic_bw_Bps = 1e8; c.topo = ULY_TOPO_FATTREE; c.oversub = 1; c.gpus_per_leaf = 1 << 20;
    return c;
}

/* a within a relative tolerance of b */
static inline int fx_close(double a, double b, double rel) { return fabs(a - b) <= rel * fabs(b); }

static inline int fx_has_reason(const uly_result *r, uly_reason_code code, int fatal)
{
    for (int i = 0; i < r->n_reasons; i++)
        if (r->reasons[i].code == code && r->reasons[i].fatal == fatal) return 1;
    return 0;
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
