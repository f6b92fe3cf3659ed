/* fuzz_preset.c: libFuzzer target for the model and cluster JSON loader
 * (formats/) on text in memory. Properties: never crashes or leaks;
 * the result is 0 (valid, and then the model library's own checks accept
 * it) or 2 with a one-line reason. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "preset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[512];
    uly_model m;
    uly_cluster c;
    int rc = preset_model_parse((const char *)data, size, "fuzz", &m, why, sizeof why);
    if (rc != 0 && rc != 2) abort();
    if (rc == 2 && (why[0] == 0 || strchr(why, '\n'))) abort();
    if (rc == 0 && uly_model_check(&m, NULL, 0) != ULY_OK) abort();
    rc = preset_cluster_parse((const char *)data, size, "fuzz", &c, why, sizeof why);
    if (rc != 0 && rc != 2) abort();
    if (rc == 2 && (why[0] == 0 || strchr(why, '\n'))) abort();
    if (rc == 0 && uly_cluster_check(&c, NULL, 0) != ULY_OK) abort();
    return 0;
}
