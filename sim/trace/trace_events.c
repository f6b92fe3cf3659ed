/* trace_events.c: Chrome trace-event JSON, shared by `ulysim trace export`
 * (measured runs) and `ulysim --timeline` (a predicted plan); see
 * trace_events.h. */
#define _POSIX_C_SOURCE 200809L
#include "trace_events.h"

#include "args.h"
#include "out_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void sim_te_meta(cJSON *ev, const char *what, int pid, int tid, const char *name)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "name", what);
    cJSON_AddStringToObject(m, "ph", "M");
    cJSON_AddNumberToObject(m, "pid", pid);
    cJSON_AddNumberToObject(m, "tid", tid);
    cJSON *a = cJSON_AddObjectToObject(m, "args");
    cJSON_AddStringToObject(a, "name", name);
    cJSON_AddItemToArray(ev, m);
}

cJSON *sim_te_slice(cJSON *ev, int pid, int tid, const char *name, const char *cat, double ts_s, double dur_s)
{
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "name", name);
    cJSON_AddStringToObject(x, "cat", cat);
    cJSON_AddStringToObject(x, "ph", "X");
    cJSON_AddNumberToObject(x, "pid", pid);
    cJSON_AddNumberToObject(x, "tid", tid);
    cJSON_AddNumberToObject(x, "ts", ts_s * 1e6);
    cJSON_AddNumberToObject(x, "dur", dur_s * 1e6);
    cJSON_AddItemToArray(ev, x);
    return cJSON_AddObjectToObject(x, "args");
}

int sim_te_write(cJSON *root, const char *out, const char *who)
{
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!text) {
        fprintf(stderr, "%s: out of memory writing %s\n", who, out);
        return 1;
    }
    /* the one output writer: never replaces a device node, writes through a
     * link, whole or not at all (formats/out_file.h) */
    char why[8192];
    const int rc = out_file_write_text(out, text, why, sizeof why);
    free(text);
    if (rc) sim_err_as(who, "%s", why);
    return rc;
}
