/* Memory per GPU (uly_memory_eval through uly_evaluate) on the tiny model of
 * fixtures.h (226,624 parameters), every term worked out here by hand:
 * model states of ZeRO 0..3 (mixed precision: 2 bytes of weights, 2 of
 * gradients, 12 of fp32 master, m and v per parameter; fp32: 4 + 4 + 8),
 * sharded over the data x sequence group and never over TP; each term of a
 * whole plan, the total, the largest term and `fits` at the capacity; the
 * reserve; and the activations of every strategy family against Korthikanti
 * et al. 2022's per-layer formulas (GPT-style: GELU, f = 4h, MHA, dropout,
 * materialised scores, no recompute):
 *   no tensor parallelism, T of s tokens per rank: T b h (34 + 5 a s / h)
 *   TP (t ways):                                   s b h (10 + 24/t + 5 a s / (h t))
 *   TP + SP:                                       s b h (34/t + 5 a s / (h t)) */
#include "fixtures.h"

#define P_TINY 226624.0 /* fx_tiny's parameters */

static int eval(const uly_model *m, const uly_workload *w, const uly_cluster *c, uly_strategy_id s, int64_t u,
                int64_t r, int64_t t, int64_t dp, uly_result *res)
{
    const int st = fx_eval(m, w, c, s, u, r, t, dp, res);
    CHECK(st == 0, "evaluate %s u%lld r%lld t%lld dp%lld: status %d", uly_strategy_get(s)->name, (long long)u,
          (long long)r, (long long)t, (long long)dp, st);
    return st;
}

#define EQ(got, want, ...)                                                                                             \
    do {                                                                                                               \
        const double got_ = (got), want_ = (want);                                                                     \
        if (!fx_close(got_, want_, 1e-12)) {                                                                           \
            CHECK(0, __VA_ARGS__);                                                                                     \
            fprintf(stderr, "    got %.1f, want %.1f\n", got_, want_);                                              \
        }                                                                                                              \
    } while (0)

/* ZeRO stages over the data x sequence group */
static void model_states(void)
{
    const uly_model m = fx_tiny();
    const uly_cluster c = fx_unit(1);
    uly_workload w = fx_work(1024);
    /* [stage]: weights, gradients, optimizer over G = u 2 x dp 2 = 4 ranks:
     * 0: 2P = 453,248; 2P; 12P = 2,719,488
     * 1: optimizer / 4 = 679,872
     * 2: gradients / 4 = 113,312
     * 3: weights / 4 = 113,312 */
    static const double bf16[4][3] = {{453248, 453248, 2719488},
                                      {453248, 453248, 679872},
                                      {453248, 113312, 679872},
                                      {113312, 113312, 679872}};
    /* fp32: 4P = 906,496 weights and gradients, 8P = 1,812,992 optimizer (m, v) */
    static const double fp32[4][3] = {{906496, 906496, 1812992},
                                      {906496, 906496, 453248},
                                      {906496, 226624, 453248},
                                      {226624, 226624, 453248}};
    for (int dt = 0; dt < 2; dt++)
        for (int z = 0; z < 4; z++) {
            w.dtype = dt ? ULY_FP32 : ULY_BF16;
            w.zero_stage = z;
            uly_result r;
            if (eval(&m, &w, &c, ULY_STRAT_ULYSSES, 2, 1, 1, 2, &r)) return;
            const double *want = dt ? fp32[z] : bf16[z];
            for (int k = 0; k < 3; k++)
                EQ(r.mem.term_bytes[ULY_MEM_WEIGHTS + k], want[k], "%s ZeRO-%d, u 2 x dp 2: %s",
                   dt ? "fp32" : "bf16", z, uly_mem_term_name((uly_mem_term)(ULY_MEM_WEIGHTS + k)));
        }
    /* the sequence group counts as data parallel: ring r 4 x dp 1 shards
     * ZeRO-3's 16 P four ways, 906,496 B */
    w.dtype = ULY_BF16;
    w.zero_stage = 3;
    uly_result r;
    if (eval(&m, &w, &c, ULY_STRAT_RING, 1, 4, 1, 1, &r)) return;
    EQ(r.mem.term_bytes[ULY_MEM_WEIGHTS] + r.mem.term_bytes[ULY_MEM_GRADS] + r.mem.term_bytes[ULY_MEM_OPTIM], 906496,
       "ring r 4, ZeRO-3: 16 P / 4");
    /* TP splits the weights, ZeRO shards over the rest: Megatron-SP t 2 x
     * dp 2 holds P / 2 = 113,312 parameters, sharded over G = 2 */
    for (int z = 0; z < 4; z += 3) {
        w.zero_stage = z;
        if (eval(&m, &w, &c, ULY_STRAT_MEGATRON_SP, 1, 1, 2, 2, &r)) return;
        /* ZeRO-0: 226,624 + 226,624 + 1,359,744; ZeRO-3: half of each */
        const double div = z == 3 ? 2.0 : 1.0;
        EQ(r.mem.term_bytes[ULY_MEM_WEIGHTS], 226624 / div, "megatron-sp t 2 x dp 2, ZeRO-%d: weights", z);
        EQ(r.mem.term_bytes[ULY_MEM_GRADS], 226624 / div, "megatron-sp t 2 x dp 2, ZeRO-%d: gradients", z);
        EQ(r.mem.term_bytes[ULY_MEM_OPTIM], 1359744 / div, "megatron-sp t 2 x dp 2, ZeRO-%d: optimizer", z);
    }
}

/* A group that does not divide the parameters: ZeRO, Megatron's
 * distributed optimizer and FSDP pad their flat buffers to a multiple of G,
 * so a rank holds ceil(P/G) parameters of each sharded term, whole bytes, as
 * the ZeRO traffic counts them. P = 226,624 over G = 3 (dp 3):
 * ceil(75,541.33) = 75,542. Also the optimizer step's passes, over the
 * same padded shard. */
static void padded_shards(void)
{
    const uly_model m = fx_tiny();
    const uly_cluster c = fx_unit(1);
    uly_workload w = fx_work(1024);
    const double sh = 75542;
    static const struct {
        uly_framework fw;
        int zero;
        double want[3]; /* weights, gradients, optimizer */
    } cases[] = {
        {ULY_FW_DEEPSPEED, 3, {2 * 75542, 2 * 75542, 12 * 75542}},
        {ULY_FW_DEEPSPEED, 1, {2 * P_TINY, 2 * P_TINY, 12 * 75542}},
        {ULY_FW_MEGATRON, 1, {2 * P_TINY, 4 * P_TINY, 12 * 75542}},
        /* SHARD_GRAD_OP: the fp32 flat parameter sharded, its bf16 copy whole */
        {ULY_FW_FSDP, 2, {4 * 75542 + 2 * P_TINY, 4 * 75542, 8 * 75542}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        w.framework = cases[i].fw;
        w.zero_stage = cases[i].zero;
        uly_result r;
        if (eval(&m, &w, &c, ULY_STRAT_ULYSSES, 1, 1, 1, 3, &r)) return;
        for (int k = 0; k < 3; k++)
            EQ(r.mem.term_bytes[ULY_MEM_WEIGHTS + k], cases[i].want[k], "%s ZeRO-%d over dp 3: %s (padded shard)",
               uly_framework_name(cases[i].fw), cases[i].zero,
               uly_mem_term_name((uly_mem_term)(ULY_MEM_WEIGHTS + k)));
    }
    /* DeepSpeed bf16, ZeRO-3: the optimizer's passes over the shard, 4 + 28
     * + (4 + 2) bytes per parameter, and the zeroing of the 2-byte gradients
     * the rank holds, its shard: 40 x 75,542 (docs/model.md) */
    w.framework = ULY_FW_DEEPSPEED;
    w.zero_stage = 3;
    static uly_plan plan;
    uly_reason reasons[ULY_MAX_REASONS];
    int n_reasons = 0;
    uly_layout l;
    uly_layout_init(&l, ULY_STRAT_ULYSSES, 1, 1, 1, 3);
    CHECK(uly_plan_build(&m, &w, &c, &l, &plan, reasons, &n_reasons) == ULY_OK, "build dp 3");
    int found = 0;
    for (int i = 0; i < plan.n_ops; i++)
        if (plan.ops[i].type == ULY_OPT_OPTIMIZER) {
            found = 1;
            EQ(plan.ops[i].bytes_touched, 38 * sh + 2 * sh, "optimizer step over the padded shard of dp 3");
        }
    CHECK(found, "dp 3 plan has an optimizer op");
}

/* Every term of one plan: Ulysses u 2 x dp 2 at N 1024, bf16, flash, full
 * recompute, ZeRO-3, a 1,000,000-byte reserve. T = N/u = 512 tokens. */
static void plan_terms(void)
{
    const uly_model m = fx_tiny();
    uly_cluster c = fx_unit(1);
    c.gpu.reserved_bytes = 1e6;
    const uly_workload w = fx_work(1024);
    double want[ULY_MEM_TERM_COUNT] = {0};
    want[ULY_MEM_WEIGHTS] = 113312; /* 2 P / 4 */
    want[ULY_MEM_GRADS] = 113312;   /* 2 P / 4 */
    want[ULY_MEM_OPTIM] = 679872;   /* 12 P / 4 */
    /* each of the 2 layers keeps its input, beta b T h = 2 x 512 x 64 = 65,536 */
    want[ULY_MEM_ACTIV] = 131072;
    /* the layer in backward rebuilt, less that input: its norms' inputs 2 x
     * 65,536, the QKV input 65,536, Q,K,V beta b T (a + 2k) d = 196,608, the
     * fp32 LSE 4 b a T = 8,192, the attention output 65,536, the MLP input
     * 65,536, the GELU's input and output beta b T f = 262,144 each:
     * 1,056,768 - 65,536 = 991,232; plus backward's peak, at the second MLP
     * GEMM: dY, the MLP output's gradient (65,536 each) and its f-wide input's
     * gradient (262,144) = 393,216 */
    want[ULY_MEM_WORKING] = 991232 + 393216;
    want[ULY_MEM_SCORES] = 0;   /* flash */
    want[ULY_MEM_COMM] = 65536; /* an all-to-all's output beside its input: beta b T a d */
    /* ZeRO-3 gathers two layers (the current, the prefetched) or the
     * embedding: 2 x max(2 x 49,280, V h = 64,000) = 197,120 */
    want[ULY_MEM_ZERO_GATHER] = 197120;
    /* logits of the rank's 512 tokens: fp32 copy + bf16, 6 x 512 x 1000 =
     * 3,072,000, and the final norm's input and output 2 x 65,536: 3,203,072,
     * beyond the working set (they never coexist): 3,203,072 - 1,384,448 */
    want[ULY_MEM_LOGITS] = 1818624;
    want[ULY_MEM_RESERVED] = 1e6;
    const double total = 5503296; /* the sum of the above */
    uly_result r;
    if (eval(&m, &w, &c, ULY_STRAT_ULYSSES, 2, 1, 1, 2, &r)) return;
    for (int i = 0; i < ULY_MEM_TERM_COUNT; i++)
        EQ(r.mem.term_bytes[i], want[i], "u 2 x dp 2: term %s", uly_mem_term_name((uly_mem_term)i));
    EQ(r.mem.total_bytes, total, "u 2 x dp 2: total");
    CHECK(r.mem.largest == ULY_MEM_LOGITS, "largest term %s, want logits", uly_mem_term_name((uly_mem_term)r.mem.largest));
    /* fits exactly at the total, not a byte below */
    c.gpu.hbm_bytes = total;
    if (eval(&m, &w, &c, ULY_STRAT_ULYSSES, 2, 1, 1, 2, &r)) return;
    CHECK(r.mem.fits && r.feasible && r.mem.capacity_bytes == total, "capacity = total must fit (fits %d)", r.mem.fits);
    c.gpu.hbm_bytes = total - 1;
    if (eval(&m, &w, &c, ULY_STRAT_ULYSSES, 2, 1, 1, 2, &r)) return;
    CHECK(!r.mem.fits && !r.feasible && fx_has_reason(&r, ULY_R_OUT_OF_MEMORY, 1),
          "capacity = total - 1 must not fit (fits %d)", r.mem.fits);
    for (int i = 0; i < r.n_reasons; i++)
        if (r.reasons[i].code == ULY_R_OUT_OF_MEMORY)
            CHECK(r.reasons[i].v[0] == total && r.reasons[i].v[1] == total - 1 && r.reasons[i].v[2] == ULY_MEM_LOGITS,
                  "out-of-memory reason: %g of %g, term %g", r.reasons[i].v[0], r.reasons[i].v[1], r.reasons[i].v[2]);
    /* the reserve: 3,000,000 instead adds 2,000,000 and becomes the largest term */
    c.gpu.hbm_bytes = total + 2e6;
    c.gpu.reserved_bytes = 3e6;
    if (eval(&m, &w, &c, ULY_STRAT_ULYSSES, 2, 1, 1, 2, &r)) return;
    EQ(r.mem.term_bytes[ULY_MEM_RESERVED], 3e6, "reserve");
    EQ(r.mem.total_bytes, total + 2e6, "total with a 3,000,000 reserve");
    CHECK(r.mem.largest == ULY_MEM_RESERVED && r.mem.fits, "reserve: largest %s, fits %d",
          uly_mem_term_name((uly_mem_term)r.mem.largest), r.mem.fits);
    c.gpu.reserved_bytes = 3e6 + 1;
    if (eval(&m, &w, &c, ULY_STRAT_ULYSSES, 2, 1, 1, 2, &r)) return;
    CHECK(!r.mem.fits, "a byte more of reserve must not fit");
}

/* Activations and scores of the L = 2 layers against Korthikanti, plus the
 * embedding's dropout mask (1 byte per element of the rank's tokens, outside
 * the layers Korthikanti counts). N = s = 1024, b 1, h 64, a 4: 5 a s / h =
 * 320; per layer T x 64 x (34 + 320) = 22,656 T bytes without TP. */
static void korthikanti_families(void)
{
    uly_model m = fx_tiny();
    m.dropout = 1;
    const uly_cluster c = fx_unit(1);
    uly_workload w = fx_work(1024);
    w.causal = 0;
    w.flash = 0;
    w.recompute = ULY_RECOMPUTE_NONE;
    w.zero_stage = 0;
    const double s = 1024, b = 1, h = 64, a = 4, L = 2;
    static const struct {
        uly_strategy_id s;
        int64_t u, r, t;
    } cases[] = {
        {ULY_STRAT_ULYSSES, 2, 1, 1},     {ULY_STRAT_RING, 1, 2, 1},        {ULY_STRAT_ALLGATHER_CP, 1, 2, 1},
        {ULY_STRAT_RSA, 1, 2, 1},         {ULY_STRAT_USP, 2, 2, 1},         {ULY_STRAT_MEGATRON_TP, 1, 1, 2},
        {ULY_STRAT_MEGATRON_SP, 1, 1, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const double t = (double)cases[i].t, cp = (double)(cases[i].u * cases[i].r);
        double want, mask;
        if (cases[i].s == ULY_STRAT_MEGATRON_TP) {
            /* 1024 x 64 x (10 + 12 + 160) = 11,927,552 a layer; the mask s b h */
            want = s * b * h * (10.0 + 24.0 / t + 5.0 * a * s / (h * t));
            mask = s * b * h;
        } else if (cases[i].s == ULY_STRAT_MEGATRON_SP) {
            /* 1024 x 64 x (17 + 160) = 11,599,872 a layer; the mask s b h / t */
            want = s * b * h * (34.0 / t + 5.0 * a * s / (h * t));
            mask = s * b * h / t;
        } else {
            /* T = s / cp: 512 x 22,656 = 11,599,872 a layer (cp 2), 5,799,936 (usp, cp 4) */
            const double T = s / cp;
            want = T * b * h * (34.0 + 5.0 * a * s / h);
            mask = T * b * h;
        }
        uly_result r;
        if (eval(&m, &w, &c, cases[i].s, cases[i].u, cases[i].r, cases[i].t, 1, &r)) return;
        EQ(r.mem.term_bytes[ULY_MEM_ACTIV] + r.mem.term_bytes[ULY_MEM_SCORES], L * want + mask,
           "%s u%lld r%lld t%lld: activations + scores", uly_strategy_get(cases[i].s)->name, (long long)cases[i].u,
           (long long)cases[i].r, (long long)cases[i].t);
        /* the scores' part, 5 a s / (h t) of it, is their own term */
        EQ(r.mem.term_bytes[ULY_MEM_SCORES], L * 5.0 * a * s * s * b / (cp * t), "%s: scores",
           uly_strategy_get(cases[i].s)->name);
    }
}

/* A hybrid at one of its ends is the strategy it reduces to: usp with u = 1
 * runs no all-to-all, so it holds no all-to-all staging and every memory
 * term, the total and the step time are ring's; ulysses with u = 1 (data
 * parallel alone) holds no communication buffer at all. */
static void degenerate_layouts(void)
{
    const uly_model m = fx_tiny();
    const uly_cluster c = fx_unit(1);
    const uly_workload w = fx_work(1024);
    uly_result usp, ring, uly;
    if (eval(&m, &w, &c, ULY_STRAT_USP, 1, 4, 1, 1, &usp) || eval(&m, &w, &c, ULY_STRAT_RING, 1, 4, 1, 1, &ring) ||
        eval(&m, &w, &c, ULY_STRAT_ULYSSES, 1, 1, 1, 4, &uly))
        return;
    for (int i = 0; i < ULY_MEM_TERM_COUNT; i++)
        EQ(usp.mem.term_bytes[i], ring.mem.term_bytes[i], "usp u 1 x r 4 against ring r 4: term %s",
           uly_mem_term_name((uly_mem_term)i));
    EQ(usp.mem.total_bytes, ring.mem.total_bytes, "usp u 1 x r 4 against ring r 4: total");
    EQ(usp.time.step_s, ring.time.step_s, "usp u 1 x r 4 against ring r 4: step time");
    EQ(uly.mem.term_bytes[ULY_MEM_COMM], 0, "ulysses u 1 x dp 4: comm_buffers");
}

int main(void)
{
    model_states();
    padded_shards();
    plan_terms();
    korthikanti_families();
    degenerate_layouts();
    FX_DONE();
}
