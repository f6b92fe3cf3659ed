/* trace_events.h: the Chrome trace-event JSON (Perfetto, chrome://tracing)
 * that `ulysim trace export` writes for measured runs and `ulysim
 * --timeline` for a predicted plan, so both open in the same viewer alike. */
#ifndef SIM_TRACE_EVENTS_H
#define SIM_TRACE_EVENTS_H

#include <cjson/cJSON.h>

/* A metadata event (what: "process_name", "thread_name") naming pid/tid. */
void sim_te_meta(cJSON *ev, const char *what, int pid, int tid, const char *name);

/* A complete slice ("ph": "X") from ts_s lasting dur_s, in seconds (written
 * in microseconds, as the format has it); returns its "args" object. */
cJSON *sim_te_slice(cJSON *ev, int pid, int tid, const char *name, const char *cat, double ts_s, double dur_s);

/* Writes root (and deletes it) to out under a temporary name, renamed when
 * complete. who prefixes the one-line message on failure. Returns 0, or 1
 * (internal) / 2 (cannot write out) with the message printed. */
int sim_te_write(cJSON *root, const char *out, const char *who);

#endif
