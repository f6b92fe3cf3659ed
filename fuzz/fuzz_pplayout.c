/* fuzz_pplayout.c: libFuzzer target for sim_pp_layout_parse, the reader of
 * Megatron-Core's pipeline layout strings (--pp-layout,
 * --pipeline-model-parallel-layout). Input: one byte of stage count (2..65),
 * then the string. Properties: never crashes; a rejection carries a reason;
 * an accepted layout has V x pp chunks, every rank at least one layer, and
 * the first, last and most-middle ranks' layers within the layers. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const int64_t pp = 2 + data[0] % 64;
    char s[512];
    size_t n = size - 1 < sizeof s - 1 ? size - 1 : sizeof s - 1;
    memcpy(s, data + 1, n);
    s[n] = 0;
    sim_pp_layout o;
    char why[256] = "";
    if (sim_pp_layout_parse("--pp-layout", s, pp, &o, why, sizeof why) != 0) {
        if (!why[0]) abort();
        return 0;
    }
    if (o.vpp < 1 || o.chunks != o.vpp * pp || o.first < 1 || o.last < 1 || (pp > 2 && o.mid_most < 1)) abort();
    if (o.first + o.last + (pp > 2 ? o.mid_most : 0) > o.layers) abort();
    if (pp > 2 && o.mid_most * (pp - 2) < o.layers - o.first - o.last) abort();
    return 0;
}
