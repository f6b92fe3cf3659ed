/* The Ulysses paper's central claim, numerically: at fixed N, Ulysses'
 * bytes per rank fall as 1/P while Megatron-SP's and ring's do not; with N
 * and P growing together, Ulysses' stay constant (4Nh/P per link). */
#include "fixtures.h"

static int64_t fwd(uly_strategy_id s, int64_t N, int64_t P)
{
    uly_model m = fx_gpt7b();
    uly_workload w = fx_work(N);
    w.recompute = ULY_RECOMPUTE_NONE;
    uly_cluster c = fx_a100(64);
    c.gpu.hbm_bytes = 1e15;
    uly_result r;
    int64_t u = s == ULY_STRAT_ULYSSES ? P : 1, rr = s == ULY_STRAT_RING ? P : 1, t = s == ULY_STRAT_MEGATRON_SP ? P : 1;
    if (fx_eval(&m, &w, &c, s, u, rr, t, 1, &r) != 0) return -1;
    return r.comm_fwd_bytes;
}

int main(void)
{
    const int64_t N = 262144;
    /* fixed N: P from 4 to 32 */
    const double u4 = (double)fwd(ULY_STRAT_ULYSSES, N, 4), u32 = (double)fwd(ULY_STRAT_ULYSSES, N, 32);
    const double m4 = (double)fwd(ULY_STRAT_MEGATRON_SP, N, 4), m32 = (double)fwd(ULY_STRAT_MEGATRON_SP, N, 32);
    const double r4 = (double)fwd(ULY_STRAT_RING, N, 4), r32 = (double)fwd(ULY_STRAT_RING, N, 32);
    /* Ulysses: (u-1)/u^2 -> ratio (3/16)/(31/1024) = 6.19, about the 8x of 1/P */
    const double want = (3.0 / 16.0) / (31.0 / 1024.0);
    CHECK(fabs(u4 / u32 - want) < 1e-9, "ulysses P=4 -> 32 shrinks %.4fx, want %.4fx", u4 / u32, want);
    CHECK(u4 / u32 > 6.0, "ulysses should fall close to 1/P: %.3f", u4 / u32);
    /* Megatron-SP grows with (t-1)/t; ring's per-rank bytes grow with (r-1)/r */
    CHECK(m32 >= m4, "megatron-sp should not fall with P: %.0f -> %.0f", m4, m32);
    CHECK(r32 >= r4 * 0.99, "ring should not fall with P: %.0f -> %.0f", r4, r32);
    /* at P = 32, Ulysses moves about P/4 less than Megatron-SP per rank (4Nh/P vs 4Nh per link) */
    CHECK(m32 / u32 > 7.0, "megatron-sp / ulysses at P=32: %.2f, want > 7", m32 / u32);
    /* N and P growing together (N = 32K per GPU): Ulysses' volume per rank is constant to within (u-1)/u */
    double first = 0;
    for (int64_t P = 4; P <= 32; P *= 2) {
        const double v = (double)fwd(ULY_STRAT_ULYSSES, 32768 * P, P);
        const double norm = v / ((double)(P - 1) / (double)P);
        if (P == 4) first = norm;
        CHECK(fabs(norm / first - 1.0) < 1e-12, "ulysses at N=32K*P, P=%lld: %.0f bytes, want constant %.0f",
              (long long)P, norm, first);
        const double mv = (double)fwd(ULY_STRAT_MEGATRON_SP, 32768 * P, P);
        CHECK(P == 4 || mv > first * (double)P / 8.0, "megatron-sp should grow with N: %.0f", mv);
    }
    printf("ulysses P=4->32 at N=%lld: %.3gx less; megatron-sp/ulysses at P=32: %.1fx\n", (long long)N, u4 / u32,
           m32 / u32);
    FX_DONE();
}
