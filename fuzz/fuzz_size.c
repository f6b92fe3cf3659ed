/* fuzz_size.c: libFuzzer target for uly_size_parse, the parser of every size
 * on the command line. Properties: never crashes; an accepted size is in
 * 1..2^62 and a rejection always carries a reason. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ulysim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char s[256];
    if (size >= sizeof s) size = sizeof s - 1;
    memcpy(s, data, size);
    s[size] = 0;
    int64_t v = -1;
    char why[160] = "";
    uly_status st = uly_size_parse(s, &v, why, sizeof why);
    if (st == ULY_OK && (v < 1 || v > ((int64_t)1 << 62))) abort();
    if (st != ULY_OK && why[0] == 0) abort();
    return 0;
}
