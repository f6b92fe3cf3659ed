/* hx_trace.h: trace writer (cJSON). Only rank 0 writes; the calls are no-ops
 * elsewhere and when no trace was asked for. */
#ifndef HX_TRACE_H
#define HX_TRACE_H

#include <cjson/cJSON.h>

#include "hx.h"
#include "out_file.h"

/* A trace being written: rank 0's file (out_file: under its temporary
 * name, or in place for a device node or FIFO); fp (file.fp) NULL when
 * there is none (no --out, or another rank). The caller owns it. */
typedef struct hx_trace {
    FILE *fp;
    out_file file;
} hx_trace;

int hx_trace_open(hx_trace *trace, const char *path);          /* FILE.tmp.<pid> */
/* Rank 0, while the options are checked: a FIFO or device --out is opened
 * now, so that a FIFO with no reader is bad usage (exit 2 on every rank)
 * found before any work; hx_trace_open then takes the open file. Other
 * paths are left to hx_trace_open. 0, or 2 with the reason in why. */
int hx_trace_preopen(const char *path, char *why, size_t why_len);
int hx_trace_line(hx_trace *trace, cJSON *obj);                /* writes one line, frees obj */
int hx_trace_close(hx_trace *trace, const char *path, int ok); /* renames to FILE (ok) or FILE.failed */
int hx_trace_header(hx_trace *trace, const hx_ctx *c, int argc, char **argv);
int hx_trace_ops(hx_trace *trace, const hx_ctx *c, double (*ts)[3]); /* ts: HX_STAT_COUNT x n_ops rows */
int hx_trace_summary(hx_trace *trace, const hx_ctx *c, int ok);
/* Per op, over the timed reps: each rank's median, then the median, min and
 * max over ranks (collective; out on rank 0) of the op's time, its wait for
 * the peers (comm ops) or the rest of it (the transfer proper). */
enum { HX_STAT_TIME = 0, HX_STAT_WAIT, HX_STAT_XFER, HX_STAT_COUNT };
int hx_time_stats(const hx_ctx *c, int which, double (*out)[3]);
int hx_trace_header_micro(hx_trace *trace, const hx_opts *o, int argc, char **argv, const char *cluster_src,
                          void *cluster_json, const uly_cluster *cl);
cJSON *hx_json_software(const char *kernel);
cJSON *hx_json_hardware(void);
cJSON *hx_json_cluster(const char *src, void *preset_json, const uly_cluster *used, int adjusted, int64_t orig_nodes,
                       int64_t orig_gpn);

#endif
