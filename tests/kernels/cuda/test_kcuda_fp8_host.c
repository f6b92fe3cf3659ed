/* test_kcuda_fp8_host.c: the host reference of the FP8 formats
 * (kern_cuda_host.c) against the formats' definition, recomputed here
 * independently, over all 256 bit patterns of E4M3 and E5M2:
 *   decode  every pattern against (-1)^s 2^(E - bias) (1 + M / 2^mbits)
 *           (subnormal: 2^(1 - bias) M / 2^mbits), E4M3's S.1111.111 and
 *           E5M2's exponent 31 as NaN / infinity, and the OCP FP8 table's
 *           anchors (448, 57344, 2^-9, 2^-16);
 *   encode  round to nearest even with saturation, checked against a brute
 *           force search of the decoded table: every representable value,
 *           every midpoint between neighbours (the tie goes to the even
 *           code), the floats just either side of each midpoint, values past
 *           the largest finite (saturated), infinity, NaN, and 200000 random
 *           floats over the range;
 *   scale   kern_cuda_fp8_scale: fp8_max / amax, 1 for amax 0, NaN for
 *           amax infinite or NaN.
 * No GPU. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kern_cuda.h"

static int fails;
#define CHECK(cond, ...)                                                                                                \
    do {                                                                                                                \
        if (!(cond)) {                                                                                                  \
            if (fails++ < 20) {                                                                                         \
                printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                            \
                printf(__VA_ARGS__);                                                                                    \
                printf("\n");                                                                                           \
            }                                                                                                           \
        }                                                                                                               \
    } while (0)

typedef struct fmt {
    kern_cuda_fp8 f;
    const char *name;
    int ebits, mbits, bias;
    double max;
} fmt;

/* the definition, with pow() and the fields as the OCP FP8 specification lists them */
static double spec_decode(const fmt *F, int bits)
{
    const int s = bits >> 7, E = (bits >> F->mbits) & ((1 << F->ebits) - 1), M = bits & ((1 << F->mbits) - 1);
    const double sign = s ? -1.0 : 1.0, frac = (double)M / pow(2.0, F->mbits);
    if (F->f == KERN_CUDA_E4M3 && E == 15 && M == 7) return NAN;
    if (F->f == KERN_CUDA_E5M2 && E == 31) return M ? NAN : sign * INFINITY;
    if (E == 0) return sign * pow(2.0, 1 - F->bias) * frac;
    return sign * pow(2.0, E - F->bias) * (1.0 + frac);
}

/* nearest finite code by search over the table, ties to the even code;
 * beyond the largest finite value: the largest (saturation) */
static int brute_encode(const fmt *F, const double table[256], double x)
{
    const int sign = signbit(x) ? 0x80 : 0;
    const double a = fabs(x);
    if (a >= F->max) {
        for (int c = 0; c < 128; c++)
            if (table[c] == F->max) return sign | c;
    }
    int best = -1;
    double bd = INFINITY;
    for (int c = 0; c < 128; c++) {
        if (!isfinite(table[c])) continue;
        const double d = fabs(table[c] - a);
        if (d < bd || (d == bd && (c & 1) == 0)) best = c, bd = d;
    }
    return sign | best;
}

static void test_format(const fmt *F)
{
    double table[256];
    for (int b = 0; b < 256; b++) {
        table[b] = spec_decode(F, b);
        const float got = kern_cuda_host_fp8_to_f32((uint8_t)b, F->f);
        if (isnan(table[b])) CHECK(isnan(got), "%s decode 0x%02x: %g, want NaN", F->name, b, got);
        else CHECK((double)got == table[b] && !signbit(got) == !signbit(table[b]), "%s decode 0x%02x: %.9g, want %.9g",
                   F->name, b, got, table[b]);
    }
    /* encode each finite value back to its own code, and the midpoints */
    for (int sign = 0; sign < 2; sign++) {
        for (int c = 0; c < 127; c++) {
            const int code = (sign << 7) | c;
            if (!isfinite(table[code])) continue;
            const uint8_t e = kern_cuda_host_fp8_from_f32((float)table[code], F->f);
            CHECK(e == code, "%s encode %.9g: 0x%02x, want 0x%02x", F->name, table[code], e, code);
            const int next = code + 1;
            if ((next & 0x7f) == 0 || !isfinite(table[next])) continue;
            const float mid = (float)((table[code] + table[next]) / 2); /* exact: a few significant bits */
            CHECK((double)mid == (table[code] + table[next]) / 2, "%s midpoint not exact", F->name);
            const int want = brute_encode(F, table, mid);
            CHECK(want == ((code & 1) ? next : code), "test's brute force: tie not to even at 0x%02x", code);
            uint8_t got = kern_cuda_host_fp8_from_f32(mid, F->f);
            CHECK(got == want, "%s encode midpoint %.9g: 0x%02x, want 0x%02x", F->name, mid, got, want);
            const float lo = nextafterf(mid, 0.0f), hi = nextafterf(mid, sign ? -INFINITY : INFINITY);
            got = kern_cuda_host_fp8_from_f32(lo, F->f);
            CHECK(got == code, "%s encode %.9g (below a midpoint): 0x%02x, want 0x%02x", F->name, lo, got, code);
            got = kern_cuda_host_fp8_from_f32(hi, F->f);
            CHECK(got == next, "%s encode %.9g (above a midpoint): 0x%02x, want 0x%02x", F->name, hi, got, next);
        }
    }
    /* saturation and specials */
    const float big[] = {(float)F->max, nextafterf((float)F->max, INFINITY), (float)(F->max * 1.07), 1e30f, INFINITY};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
        for (int sign = 0; sign < 2; sign++) {
            const float x = sign ? -big[i] : big[i];
            const uint8_t got = kern_cuda_host_fp8_from_f32(x, F->f);
            CHECK(kern_cuda_host_fp8_to_f32(got, F->f) == (float)(sign ? -F->max : F->max),
                  "%s encode %g: 0x%02x, want saturation to %g", F->name, x, got, sign ? -F->max : F->max);
        }
    CHECK(isnan(kern_cuda_host_fp8_to_f32(kern_cuda_host_fp8_from_f32(NAN, F->f), F->f)), "%s NaN lost", F->name);
    CHECK(kern_cuda_host_fp8_from_f32(-0.0f, F->f) == 0x80, "%s -0", F->name);
    CHECK(kern_cuda_fp8_max(F->f) == (float)F->max, "%s max", F->name);
    /* random floats over the range, against the search */
    uint64_t s = 0x243f6a8885a308d3ULL;
    for (int i = 0; i < 200000; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        const double u = (double)(s >> 11) / 9007199254740992.0; /* [0, 1) */
        const double lg = -20.0 + 38.0 * u;                       /* 2^-20 .. 2^18 */
        const float x = (float)(((s & 1) ? -1.0 : 1.0) * pow(2.0, lg));
        const uint8_t got = kern_cuda_host_fp8_from_f32(x, F->f);
        const int want = brute_encode(F, table, x);
        CHECK(got == want, "%s encode %.9g: 0x%02x, want 0x%02x", F->name, x, got, want);
    }
    /* scales */
    CHECK(kern_cuda_fp8_scale(2.0f, F->f) == (float)(F->max / 2.0), "%s scale of 2", F->name);
    CHECK(kern_cuda_fp8_scale(3.0f, F->f) == (float)F->max / 3.0f, "%s scale of 3", F->name);
    CHECK(kern_cuda_fp8_scale(0.0f, F->f) == 1.0f, "%s scale of amax 0", F->name);
    CHECK(isnan(kern_cuda_fp8_scale(INFINITY, F->f)) && isnan(kern_cuda_fp8_scale(NAN, F->f)),
          "%s scale of a non-finite amax is not NaN", F->name);
}

int main(void)
{
    const fmt fmts[] = {{KERN_CUDA_E4M3, "e4m3", 4, 3, 7, 448.0}, {KERN_CUDA_E5M2, "e5m2", 5, 2, 15, 57344.0}};
    /* the OCP FP8 table's anchors: largest finite, smallest subnormal, E5M2's infinity */
    CHECK(spec_decode(&fmts[0], 0x7e) == 448.0 && spec_decode(&fmts[0], 0x01) == pow(2.0, -9),
          "test's E4M3 definition");
    CHECK(spec_decode(&fmts[1], 0x7b) == 57344.0 && spec_decode(&fmts[1], 0x01) == pow(2.0, -16) &&
              isinf(spec_decode(&fmts[1], 0x7c)),
          "test's E5M2 definition");
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) test_format(&fmts[i]);
    if (fails) {
        printf("kcuda_fp8_host: %d failure(s)\n", fails);
        return 1;
    }
    printf("kcuda_fp8_host: E4M3 and E5M2 decode (256 patterns each), round-to-nearest-even encode with saturation, "
           "scales: pass\n");
    return 0;
}
