/* validate_host.c: which host a cluster profile was measured on
 * (validate_host.h). A profile written by `ulysim calibrate` records it in
 * "host" (CPU model, cores, ranks, OpenBLAS kernel set); older calibrated
 * profiles name the CPU in their "source" ("... from ulyharness traces of
 * HOST (CPU; MPI ...)"). A run measured on another CPU is priced with rates
 * that are not its own, and validate says so. The host profile of
 * `ulysim calibrate --host` lives in the user's configuration directory,
 * named after the host, so validate finds it from a trace's header. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "json_strict.h"
#include "preset.h"
#include "validate_host.h"

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

/* The host of a profile's JSON text. */
static void host_of_text(const char *text, val_host *h)
{
    memset(h, 0, sizeof *h);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    const cJSON *o = root ? cJSON_GetObjectItemCaseSensitive(root, "host") : NULL;
    if (cJSON_IsObject(o)) {
        const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(o, "cpu_model"),
                    *cores = cJSON_GetObjectItemCaseSensitive(o, "cores"),
                    *ranks = cJSON_GetObjectItemCaseSensitive(o, "ranks"),
                    *blas = cJSON_GetObjectItemCaseSensitive(o, "blas_core");
        if (cJSON_IsString(cpu)) snprintf(h->cpu_model, sizeof h->cpu_model, "%s", cpu->valuestring);
        if (cJSON_IsNumber(cores)) h->cores = cores->valueint;
        if (cJSON_IsNumber(ranks)) h->ranks = ranks->valueint;
        if (cJSON_IsString(blas)) snprintf(h->blas_core, sizeof h->blas_core, "%s", blas->valuestring);
    } else {
        const cJSON *s = root ? cJSON_GetObjectItemCaseSensitive(root, "source") : NULL;
        cpu_of_source(cJSON_IsString(s) ? s->valuestring : NULL, h->cpu_model, sizeof h->cpu_model);
    }
    cJSON_Delete(root);
}

void val_profile_host(const char *profile, const char *embedded_text, val_host *h)
{
    if (!profile) {
        host_of_text(embedded_text, h);
        return;
    }
    char path[4096], why[256];
    const char *kind;
    js_file f;
    memset(h, 0, sizeof *h);
    if (preset_path(profile, path, sizeof path, &kind, why, sizeof why) == 0 &&
        js_file_read(path, 1u << 20, &f) == JS_FILE_OK) {
        host_of_text(f.text, h);
        free(f.text);
    }
}

int val_config_dir(char *dir, size_t n)
{
    const char *e = getenv("ULYSIM_CONFIG_DIR");
    if (e && *e) return snprintf(dir, n, "%s", e) < (int)n ? 0 : -1;
    e = getenv("XDG_CONFIG_HOME");
    if (e && *e) return snprintf(dir, n, "%s/ulysim", e) < (int)n ? 0 : -1;
    e = getenv("HOME");
    if (e && *e) return snprintf(dir, n, "%s/.config/ulysim", e) < (int)n ? 0 : -1;
    if (n) dir[0] = 0;
    return -1;
}

void val_host_profile_name(const char *cpu_model, int cores, int ranks, char *name, size_t n)
{
    char tail[32], slug[ULY_NAME_LEN];
    snprintf(tail, sizeof tail, "-%d-np%d", cores, ranks);
    /* room for "host-", the slug and the tail in a preset name */
    const size_t room = ULY_NAME_LEN - 1 - 5 - strlen(tail);
    size_t k = 0;
    for (const char *p = cpu_model; *p && k < room && k + 1 < sizeof slug; p++) {
        if (*p == '(' && (!strncmp(p, "(R)", 3) || !strncmp(p, "(TM)", 4) || !strncmp(p, "(tm)", 4))) {
            p = strchr(p, ')');
            continue;
        }
        const int c = (unsigned char)*p;
        if (isalnum(c)) slug[k++] = (char)tolower(c);
        else if (k > 0 && slug[k - 1] != '-') slug[k++] = '-';
    }
    while (k > 0 && slug[k - 1] == '-') k--;
    slug[k] = 0;
    snprintf(name, n, "host-%s%s", k ? slug : "unknown-cpu", tail);
}

int val_host_profile_find(const trace_run *run, char *path, size_t n)
{
    char dir[3072], name[ULY_NAME_LEN + 8];
    if (val_config_dir(dir, sizeof dir)) {
        if (n) path[0] = 0;
        return 0;
    }
    val_host_profile_name(run->cpu_model, run->cores_online, run->ranks, name, sizeof name);
    snprintf(path, n, "%s/%s.json", dir, name);
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int val_host_matches(const trace_run *run, const val_host *h)
{
    if (!h->cpu_model[0]) return -1;
    if (strcmp(h->cpu_model, run->cpu_model)) return 0;
    return !(h->cores > 0 && run->cores_online > 0 && h->cores != run->cores_online);
}

void val_host_describe(const char *cpu_model, int cores, char *buf, size_t n)
{
    if (cores > 0) snprintf(buf, n, "%s, %d cores", cpu_model[0] ? cpu_model : "an unknown CPU", cores);
    else snprintf(buf, n, "%s", cpu_model[0] ? cpu_model : "an unknown CPU");
}
