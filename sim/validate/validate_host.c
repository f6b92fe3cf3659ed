/* validate_host.c: which host a cluster profile was calibrated on, for
 * `ulysim validate` on harness traces: `ulysim calibrate` records the host
 * and CPU of its traces in the profile's "source" ("... from ulyharness
 * traces of HOST (CPU; MPI ...)"); a run measured on another CPU is priced
 * with rates that are not its own, and the output says so. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_strict.h"
#include "preset.h"
#include "validate_runs.h"

/* The CPU in a profile's source text, or "" when it records none. */
static void cpu_of_source(const char *src, char *cpu, size_t n)
{
    cpu[0] = 0;
    const char *p = src ? strstr(src, "traces of ") : NULL;
    const char *open = p ? strchr(p, '(') : NULL;
    if (!open) return;
    const char *end = strpbrk(open + 1, ";)");
    if (!end) return;
    snprintf(cpu, n, "%.*s", (int)(end - open - 1), open + 1);
}

/* The "source" of a JSON text, into buf. */
static void source_of_text(const char *text, char *buf, size_t n)
{
    buf[0] = 0;
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    const cJSON *s = root ? cJSON_GetObjectItemCaseSensitive(root, "source") : NULL;
    if (cJSON_IsString(s)) snprintf(buf, n, "%s", s->valuestring);
    cJSON_Delete(root);
}

void validate_profile_cpu(const char *profile, const char *embedded_text, char *cpu, size_t n)
{
    char src[2048] = "";
    if (!profile) {
        source_of_text(embedded_text, src, sizeof src);
    } else {
        char path[4096], why[256];
        const char *kind;
        js_file f;
        if (preset_path(profile, path, sizeof path, &kind, why, sizeof why) == 0 &&
            js_file_read(path, 1u << 20, &f) == JS_FILE_OK) {
            source_of_text(f.text, src, sizeof src);
            free(f.text);
        }
    }
    cpu_of_source(src, cpu, n);
}
