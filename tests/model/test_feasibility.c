/* Feasibility is explained with reasons: heads not divisible by u (with the
 * uneven-head alternative's imbalance), u > a, KV replication or expansion
 * for GQA, N not divisible by the degree (or by 2r for zigzag), and out of
 * memory by how much with the dominant term. */
#include "fixtures.h"

static int has(const uly_result *r, uly_reason_code code, int fatal)
{
    for (int i = 0; i < r->n_reasons; i++)
        if (r->reasons[i].code == code && r->reasons[i].fatal == fatal) return 1;
    return 0;
}

int main(void)
{
    uly_model m = fx_llama3_8b(); /* 32 heads, 8 KV heads */
    uly_cluster c = fx_a100(64);
    uly_workload w = fx_work(1 << 20);
    uly_result r;
    char buf[256];

    /* u = 64 > 32 heads: impossible, and said so */
    CHECK(fx_eval(&m, &w, &c, ULY_STRAT_ULYSSES, 64, 1, 1, 1, &r) == 0, "evaluate u=64");
    CHECK(!r.feasible && has(&r, ULY_R_DEGREE_GT_HEADS, 1), "u=64 > a=32 must be a fatal reason");
    uly_reason_format(&r.reasons[0], &m, buf, sizeof buf);
    CHECK(strstr(buf, "64") && strstr(buf, "32"), "message names the degree and the heads: %s", buf);

    /* u = 12 does not divide 32 heads: fatal, with the uneven imbalance ceil/floor = 3/2 */
    CHECK(fx_eval(&m, &w, &c, ULY_STRAT_ULYSSES, 12, 1, 1, 1, &r) == 0, "evaluate u=12");
    CHECK(!r.feasible && has(&r, ULY_R_HEADS_NOT_DIVISIBLE, 1), "u=12 must not divide 32 heads");
    for (int i = 0; i < r.n_reasons; i++)
        if (r.reasons[i].code == ULY_R_HEADS_NOT_DIVISIBLE)
            CHECK(fabs(r.reasons[i].v[2] - 1.5) < 1e-12, "imbalance %.3f, want 1.5", r.reasons[i].v[2]);

    /* u = 16 > k = 8: KV heads replicated twice, an assumption not a failure */
    CHECK(fx_eval(&m, &w, &c, ULY_STRAT_ULYSSES, 16, 1, 1, 4, &r) == 0, "evaluate u=16");
    CHECK(has(&r, ULY_R_KV_REPLICATED, 0), "u=16 with 8 KV heads must replicate KV");

    /* k = 6 and u = 4 divide neither way: KV expanded to MHA */
    uly_model m6 = fx_model("gqa6", 8, 3072, 24, 6, 8192, 32000, 1);
    CHECK(fx_eval(&m6, &w, &c, ULY_STRAT_ULYSSES, 4, 1, 1, 1, &r) == 0, "evaluate k=6 u=4");
    CHECK(has(&r, ULY_R_KV_EXPANDED, 0), "k=6, u=4 must expand KV");

    /* plain Megatron TP splits heads: t = 12 does not divide 32 (fatal,
     * imbalance 3/2), t = 64 exceeds them; BERT Base's 12 heads over t = 8
     * (RSA Table 4's TP 8) would run at ceil/floor = 2/1 */
    CHECK(fx_eval(&m, &w, &c, ULY_STRAT_MEGATRON_TP, 1, 1, 12, 1, &r) == 0, "evaluate megatron-tp t=12");
    CHECK(!r.feasible && has(&r, ULY_R_HEADS_NOT_DIVISIBLE, 1), "megatron-tp t=12 must not divide 32 heads");
    CHECK(fx_eval(&m, &w, &c, ULY_STRAT_MEGATRON_TP, 1, 1, 64, 1, &r) == 0, "evaluate megatron-tp t=64");
    CHECK(!r.feasible && has(&r, ULY_R_DEGREE_GT_HEADS, 1), "megatron-tp t=64 > a=32 must be a fatal reason");
    {
        uly_model bert = fx_bert_base();
        CHECK(fx_eval(&bert, &w, &c, ULY_STRAT_MEGATRON_TP, 1, 1, 8, 1, &r) == 0, "evaluate bert megatron-tp t=8");
        CHECK(!r.feasible && has(&r, ULY_R_HEADS_NOT_DIVISIBLE, 1), "12 heads over t=8 must be fatal");
        for (int i = 0; i < r.n_reasons; i++)
            if (r.reasons[i].code == ULY_R_HEADS_NOT_DIVISIBLE)
                CHECK(fabs(r.reasons[i].v[2] - 2.0) < 1e-12, "imbalance %.3f, want 2", r.reasons[i].v[2]);
        uly_reason_format(&r.reasons[0], &bert, buf, sizeof buf);
        CHECK(strstr(buf, "12") && strstr(buf, "8"), "message names the heads and the degree: %s", buf);
    }
    /* k = 8 KV heads over t = 16 (heads 32): KV replicated, an assumption */
    CHECK(fx_eval(&m, &w, &c, ULY_STRAT_MEGATRON_TP, 1, 1, 16, 4, &r) == 0, "evaluate megatron-tp t=16");
    CHECK(has(&r, ULY_R_KV_REPLICATED, 0) && has(&r, ULY_R_TP_SPANS_NODES, 0),
          "megatron-tp t=16: KV replicated and TP across nodes, both assumptions");
    /* no sequence split: N = 1M + 8 over t = 8 is fine for plain TP, not for TP+SP */
    {
        uly_workload wn = fx_work((1 << 20) + 8);
        uly_cluster big = c;
        big.gpu.hbm_bytes = 1e15;
        CHECK(fx_eval(&m, &wn, &big, ULY_STRAT_MEGATRON_TP, 1, 1, 8, 1, &r) == 0 && r.feasible &&
                  !has(&r, ULY_R_SEQ_NOT_DIVISIBLE, 1),
              "megatron-tp t=8 at N=%lld: plain TP does not split the sequence", (long long)wn.seq);
        wn.seq = (1 << 20) + 4;
        CHECK(fx_eval(&m, &wn, &big, ULY_STRAT_MEGATRON_SP, 1, 1, 8, 1, &r) == 0 && has(&r, ULY_R_SEQ_NOT_DIVISIBLE, 1),
              "megatron-sp t=8 at N=%lld must need 8 | N", (long long)wn.seq);
    }

    /* N not divisible: 1M + 8 tokens over ring 16 with zigzag needs 32 | N */
    uly_workload wodd = fx_work((1 << 20) + 16);
    CHECK(fx_eval(&m, &wodd, &c, ULY_STRAT_RING, 1, 16, 1, 1, &r) == 0, "evaluate ring");
    CHECK(!r.feasible && has(&r, ULY_R_SEQ_NOT_DIVISIBLE, 1), "N=%lld over zigzag ring 16", (long long)wodd.seq);
    wodd.split = ULY_SPLIT_CONTIGUOUS;
    CHECK(fx_eval(&m, &wodd, &c, ULY_STRAT_RING, 1, 16, 1, 1, &r) == 0 && !has(&r, ULY_R_SEQ_NOT_DIVISIBLE, 1),
          "contiguous split needs only 16 | N");
    CHECK(has(&r, ULY_R_CAUSAL_IMBALANCE, 0), "contiguous causal split reports its imbalance");

    /* out of memory: RSA at 1M tokens on 64 GPUs materialises a huge score block */
    CHECK(fx_eval(&m, &w, &c, ULY_STRAT_RSA, 1, 64, 1, 1, &r) == 0, "evaluate rsa");
    CHECK(!r.feasible && has(&r, ULY_R_OUT_OF_MEMORY, 1), "RSA at 1M must run out of memory");
    /* one layer's score block (full recompute), and backward's working set
     * holds a second one (dP beside P) on top of the rebuilt layer */
    CHECK(r.mem.term_bytes[ULY_MEM_SCORES] > 1000.0 * (1 << 30) &&
              r.mem.term_bytes[ULY_MEM_WORKING] > r.mem.term_bytes[ULY_MEM_SCORES] && r.mem.largest == ULY_MEM_WORKING,
          "RSA at 1M: scores %.0f GiB, working %.0f GiB, largest term %s", r.mem.term_bytes[ULY_MEM_SCORES] / (1 << 30),
          r.mem.term_bytes[ULY_MEM_WORKING] / (1 << 30), uly_mem_term_name(r.mem.largest));
    for (int i = 0; i < r.n_reasons; i++)
        if (r.reasons[i].code == ULY_R_OUT_OF_MEMORY) {
            uly_reason_format(&r.reasons[i], &m, buf, sizeof buf);
            CHECK(strstr(buf, "working") && strstr(buf, "GiB"), "OOM message names the term and the size: %s", buf);
            CHECK(r.reasons[i].v[0] > r.reasons[i].v[1], "need > have");
        }

    /* a plan that fits: Ulysses u=32 x dp=2 at 256K */
    uly_workload w2 = fx_work(256 * 1024);
    CHECK(fx_eval(&m, &w2, &c, ULY_STRAT_ULYSSES, 32, 1, 1, 2, &r) == 0 && r.feasible, "u=32 dp=2 at 256K should fit");
    /* and the same layout on GPUs a byte smaller than it needs does not,
     * with the need and the capacity in its reason (test_memory.c checks
     * each term and the total by hand) */
    {
        uly_cluster tight = c;
        tight.gpu.hbm_bytes = r.mem.total_bytes - 1;
        uly_result rt;
        CHECK(fx_eval(&m, &w2, &tight, ULY_STRAT_ULYSSES, 32, 1, 1, 2, &rt) == 0 && !rt.feasible &&
                  has(&rt, ULY_R_OUT_OF_MEMORY, 1),
              "u=32 dp=2 at 256K on %.0f bytes should not fit", tight.gpu.hbm_bytes);
        for (int i = 0; i < rt.n_reasons; i++)
            if (rt.reasons[i].code == ULY_R_OUT_OF_MEMORY)
                CHECK(rt.reasons[i].v[0] == r.mem.total_bytes && rt.reasons[i].v[1] == tight.gpu.hbm_bytes,
                      "reason: needs %.0f of %.0f", rt.reasons[i].v[0], rt.reasons[i].v[1]);
    }

    /* ZeRO stages shard model states over the data x sequence group */
    uly_result z0, z3;
    w2.zero_stage = 0;
    fx_eval(&m, &w2, &c, ULY_STRAT_ULYSSES, 32, 1, 1, 2, &z0);
    w2.zero_stage = 3;
    fx_eval(&m, &w2, &c, ULY_STRAT_ULYSSES, 32, 1, 1, 2, &z3);
    const double st0 = z0.mem.term_bytes[ULY_MEM_WEIGHTS] + z0.mem.term_bytes[ULY_MEM_GRADS] + z0.mem.term_bytes[ULY_MEM_OPTIM];
    const double st3 = z3.mem.term_bytes[ULY_MEM_WEIGHTS] + z3.mem.term_bytes[ULY_MEM_GRADS] + z3.mem.term_bytes[ULY_MEM_OPTIM];
    CHECK(fabs(st0 / st3 - 64.0) < 1e-9, "ZeRO-3 over 64 GPUs shards the 16 B/param states 64 ways: %.3f", st0 / st3);
    /* Llama 3 8B by hand: 32 layers of 4096 x 128 x (2 x 32 + 2 x 8) =
     * 41,943,040 (attention) + 3 x 4096 x 14336 = 176,160,768 (SwiGLU MLP) +
     * 2 x 4096 (norms) = 218,112,000, plus 2 x 128256 x 4096 = 1,050,673,152
     * (untied embedding and output) and 4096 (final norm): 8,030,261,248 */
    CHECK(fabs(st0 - 16.0 * 8030261248.0) < 1, "16 bytes per parameter unsharded: %.0f", st0);
    FX_DONE();
}
