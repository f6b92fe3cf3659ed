/* fuzz_hf.c: libFuzzer target for the Hugging Face config.json reader
 * (formats/preset_hf.c): any bytes either are no HF config (-1), or give a
 * model the library accepts (0), or are refused (2) with one line naming
 * why; nothing else, no crash, no undefined behaviour. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "preset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[512];
    uly_model m;
    why[0] = 0;
    const int rc = preset_model_hf_parse((const char *)data, size, "fuzz", "fuzz/config.json", &m, why, sizeof why);
    if (rc != 0 && rc != 2 && rc != -1) abort();
    if (rc == 2 && (why[0] == 0 || strchr(why, '\n'))) abort();
    if (rc == 0 && uly_model_check(&m, NULL, 0) != ULY_OK) abort();
    return 0;
}
