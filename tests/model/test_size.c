/* Size parsing: the spellings the contract accepts, and rejections. */
#include "fixtures.h"

int main(void)
{
    static const struct { const char *s; int64_t v; } ok[] = {
        {"131072", 131072}, {"128K", 131072}, {"128k", 131072}, {"1M", 1048576}, {"1e6", 1000000},
        {"2^40", (int64_t)1 << 40}, {"1.5K", 1536}, {"4G", (int64_t)4 << 30}, {"1.5e3", 1500}, {"+8", 8},
    };
    static const char *const bad[] = {"0", "-5", "1.5", "1e30", "12abc", "", "K", "1e-3", "2^64", "18446744073709551616",
                                      "1..2", "0x10", " 8", "8 ", "1.2345K", "1e", "^2",
                                      "0.00000000000000000000000000000000000001e40"};
    char why[160];
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int64_t v = 0;
        uly_status st = uly_size_parse(ok[i].s, &v, why, sizeof why);
        CHECK(st == ULY_OK && v == ok[i].v, "'%s' -> %lld (st %d: %s), want %lld", ok[i].s, (long long)v, st,
              st ? why : "", (long long)ok[i].v);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t v = 0;
        why[0] = 0;
        uly_status st = uly_size_parse(bad[i], &v, why, sizeof why);
        CHECK(st == ULY_EINVAL && why[0], "'%s' should be rejected with a reason (st %d, v %lld)", bad[i], st,
              (long long)v);
    }
    /* the reason names what is wrong: a tiny value is a fraction, not a large size; -0 is not positive */
    static const struct { const char *s, *why; } said[] = {
        {"1e-400", "not an integer"}, {"1e400", "too large"}, {"-0", "negative or -0"}, {"-5", "negative"}};
    for (size_t i = 0; i < sizeof said / sizeof said[0]; i++) {
        int64_t v = 0;
        why[0] = 0;
        uly_status st = uly_size_parse(said[i].s, &v, why, sizeof why);
        CHECK(st == ULY_EINVAL && strstr(why, said[i].why), "'%s': '%s', want it to say '%s'", said[i].s, why,
              said[i].why);
    }
    FX_DONE();
}
