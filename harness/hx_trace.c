/* hx_trace.c: the trace (traces/FORMAT.md): JSON lines, a header first, one
 * line per executed op (or per micro-benchmark point), a summary last.
 * Rank 0 writes FILE.tmp.<pid> as the run goes and renames it to FILE only
 * when the run is complete and every check passed; a run that fails its
 * checks leaves FILE.failed (complete, for diagnosis); a run that dies
 * leaves at most the .tmp file, never FILE (formats/out_file.h: a device
 * node or FIFO is written in place instead). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "hx.h"
#include "hx_trace.h"

/* rank 0's --out opened while the options were checked (a FIFO, a device) */
static struct {
    int open;
    out_file file;
} preopened;

int hx_trace_preopen(const char *path, char *why, size_t why_len)
{
    struct stat st;
    if (!path || stat(path, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) return 0;
    const int rc = out_file_open(&preopened.file, path, OUT_FILE_STREAM, why, why_len);
    preopened.open = rc == 0;
    return rc ? 2 : 0;
}

int hx_trace_open(hx_trace *trace, const char *path)
{
    trace->fp = NULL;
    if (!path || hx_world_rank() != 0) return HX_OK;
    char why[4400];
    if (preopened.open && !strcmp(preopened.file.path, path)) {
        trace->file = preopened.file;
        preopened.open = 0;
    } else if (out_file_open(&trace->file, path, OUT_FILE_STREAM, why, sizeof why))
        return hx_fail("trace: %s", why);
    trace->fp = trace->file.fp;
    return HX_OK;
}

int hx_trace_line(hx_trace *trace, cJSON *obj)
{
    if (!trace->fp) {
        cJSON_Delete(obj);
        return HX_OK;
    }
    char *s = cJSON_PrintUnformatted(obj);
    cJSON_Delete(obj);
    if (!s) return hx_fail("trace: cannot serialise a line");
    const int bad = fputs(s, trace->fp) < 0 || fputc('\n', trace->fp) < 0 || fflush(trace->fp) != 0;
    free(s);
    return bad ? hx_fail("trace: cannot write %s: %s", trace->file.path, strerror(errno)) : HX_OK;
}

int hx_trace_close(hx_trace *trace, const char *path, int ok)
{
    (void)path;
    if (!trace->fp) return HX_OK;
    trace->fp = NULL;
    char why[4400];
    if (out_file_commit(&trace->file, ok ? "" : ".failed", why, sizeof why)) return hx_fail("trace: %s", why);
    return HX_OK;
}

/* --------------------------------------------------------- header parts */

/* A seed (at most 2^53, hx_args.c) as its exact decimal integer: cJSON
 * prints a double with 15 significant digits where 17 would not round-trip
 * ("seed": 9.00719925474099e+15), so the trace would not repeat the run. */
static void add_u53(cJSON *o, const char *key, uint64_t v)
{
    char num[24];
    snprintf(num, sizeof num, "%llu", (unsigned long long)v);
    cJSON_AddRawToObject(o, key, num);
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\r')) s[--n] = 0;
    for (char *p = s; *p; p++)
        if (*p == '\n') *p = ' ';
}

cJSON *hx_json_software(const char *kernel)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "ulysim", ULY_VERSION);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0, ver = 0, sub = 0;
    MPI_Get_library_version(lib, &len);
    trim(lib);
    MPI_Get_version(&ver, &sub);
    cJSON_AddStringToObject(s, "mpi_library", lib);
    char std[32];
    snprintf(std, sizeof std, "%d.%d", ver, sub);
    cJSON_AddStringToObject(s, "mpi_standard", std);
    cJSON_AddStringToObject(s, "blas", kern_blas_config_get());
    /* the kernel set OpenBLAS runs (its own choice, or OPENBLAS_CORETYPE's):
     * a profile measured with another set prices other SGEMM rates */
    cJSON_AddStringToObject(s, "blas_core", kern_blas_core_get());
    cJSON_AddNumberToObject(s, "blas_threads", kern_blas_threads_get());
#ifdef __VERSION__
    cJSON_AddStringToObject(s, "compiler", "gcc-compatible " __VERSION__);
#else
    cJSON_AddStringToObject(s, "compiler", "unknown");
#endif
    cJSON_AddStringToObject(s, "cjson", cJSON_Version());
    if (kernel) {
        const struct kern_attn_impl *k = kern_attn_find(kernel);
        cJSON_AddStringToObject(s, "attention_kernel", kernel);
        cJSON_AddStringToObject(s, "attention_kernel_summary", k ? k->summary : "");
    }
    return s;
}

cJSON *hx_json_hardware(void)
{
    cJSON *h = cJSON_CreateObject();
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    cJSON_AddStringToObject(h, "hostname", host);
    cJSON_AddNumberToObject(h, "cores_online", (double)sysconf(_SC_NPROCESSORS_ONLN));
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psz > 0) cJSON_AddNumberToObject(h, "memory_bytes", (double)pages * (double)psz);
    char model[256] = "unknown";
    FILE *fp = fopen("/proc/cpuinfo", "r");
    if (fp) {
        char line[512];
        while (fgets(line, sizeof line, fp)) {
            if (!strncmp(line, "model name", 10)) {
                char *colon = strchr(line, ':');
                if (colon) {
                    snprintf(model, sizeof model, "%s", colon + 2);
                    trim(model);
                }
                break;
            }
        }
        fclose(fp);
    }
    cJSON_AddStringToObject(h, "cpu_model", model);
    cJSON_AddNumberToObject(h, "ranks", hx_world_size());
    return h;
}

cJSON *hx_json_cluster(const char *src, void *preset_json, const uly_cluster *used, int adjusted, int64_t orig_nodes,
                       int64_t orig_gpn)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "source", src ? src : "");
    cJSON_AddItemToObject(c, "preset", preset_json ? cJSON_Duplicate(preset_json, 1) : cJSON_CreateNull());
    cJSON *u = cJSON_AddObjectToObject(c, "used");
    cJSON_AddStringToObject(u, "name", used->name);
    cJSON_AddNumberToObject(u, "nodes", (double)used->nodes);
    cJSON_AddNumberToObject(u, "gpus_per_node", (double)used->gpus_per_node);
    cJSON_AddBoolToObject(u, "adjusted", adjusted);
    if (adjusted) {
        char note[256];
        snprintf(note, sizeof note,
                 "the profile has %lld node(s) x %lld; the harness ran %d ranks on one host, so the plan used one node "
                 "of %d",
                 (long long)orig_nodes, (long long)orig_gpn, hx_world_size(), hx_world_size());
        cJSON_AddStringToObject(u, "note", note);
    }
    return c;
}

static cJSON *json_plan(const hx_ctx *c)
{
    const uly_plan *p = &c->plan;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "strategy", c->strat->name);
    cJSON *l = cJSON_AddObjectToObject(j, "layout");
    cJSON_AddNumberToObject(l, "ulysses", (double)p->layout.ulysses);
    cJSON_AddNumberToObject(l, "ring", (double)p->layout.ring);
    cJSON_AddNumberToObject(l, "tp", (double)p->layout.tp);
    cJSON_AddNumberToObject(l, "dp", (double)p->layout.dp);
    cJSON_AddNumberToObject(l, "pp", (double)p->layout.pp);
    if (c->m.experts > 0) {
        cJSON_AddNumberToObject(l, "ep", (double)(p->layout.ep > 1 ? p->layout.ep : 1));
        cJSON_AddNumberToObject(l, "etp", (double)(p->layout.etp > 1 ? p->layout.etp : 1));
    }
    cJSON *ord = cJSON_AddArrayToObject(l, "order");
    for (int i = 0; i < 4; i++) cJSON_AddItemToArray(ord, cJSON_CreateString(uly_group_name(p->layout.order[i])));
    cJSON *d = cJSON_AddObjectToObject(j, "dims");
    cJSON_AddNumberToObject(d, "cp", (double)p->dims.cp);
    cJSON_AddNumberToObject(d, "tokens", (double)p->dims.tokens);
    cJSON_AddNumberToObject(d, "heads", (double)p->dims.heads);
    cJSON_AddNumberToObject(d, "kv_eff", (double)p->dims.kv_eff);
    cJSON_AddNumberToObject(d, "kv_heads", (double)p->dims.kv_heads);
    cJSON_AddNumberToObject(d, "attn_q", (double)p->dims.attn_q);
    cJSON_AddNumberToObject(d, "attn_kv", (double)p->dims.attn_kv);
    cJSON_AddNumberToObject(d, "zero_group", (double)p->dims.zero_group);
    cJSON *rs = cJSON_AddArrayToObject(j, "reasons");
    for (int i = 0; i < c->n_reasons; i++) {
        char line[300];
        uly_reason_format(&c->reasons[i], &c->m, line, sizeof line);
        cJSON_AddItemToArray(rs, cJSON_CreateString(line));
    }
    cJSON_AddNumberToObject(j, "n_ops", p->n_ops);
    cJSON *ops = cJSON_AddArrayToObject(j, "ops");
    for (int i = 0; i < p->n_ops; i++) {
        const uly_op *o = &p->ops[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "id", o->id);
        cJSON_AddStringToObject(x, "name", uly_op_type_name(o->type));
        cJSON_AddStringToObject(x, "phase", uly_phase_name(o->phase));
        cJSON_AddStringToObject(x, "kind", uly_op_kind_name(o->kind));
        cJSON_AddStringToObject(x, "coll", uly_coll_name(o->coll));
        cJSON_AddStringToObject(x, "group", uly_group_name(o->group));
        cJSON_AddNumberToObject(x, "group_size", o->group_size);
        cJSON_AddNumberToObject(x, "group_stride", o->group_stride);
        cJSON_AddNumberToObject(x, "steps", o->steps);
        cJSON_AddNumberToObject(x, "tiers", o->tiers);
        cJSON_AddBoolToObject(x, "recompute", o->recompute);
        cJSON_AddBoolToObject(x, "per_step", o->per_step);
        cJSON_AddBoolToObject(x, "per_model", o->per_model);
        cJSON_AddNumberToObject(x, "overlaps", o->overlaps);
        cJSON_AddNumberToObject(x, "bytes_sent", (double)o->bytes_sent);
        /* the format's one "elems": the collective's input, the activation's
         * elements, or 1 for a flash attention */
        cJSON_AddNumberToObject(x, "elems", (double)(o->kind == ULY_OP_COMM   ? o->comm_elems
                                                     : o->kind == ULY_OP_ATTN ? o->flash
                                                                              : o->act_elems));
        cJSON_AddNumberToObject(x, "flops", o->flops);
        cJSON_AddNumberToObject(x, "bytes_touched", o->bytes_touched);
        cJSON_AddNumberToObject(x, "eff_size", o->eff_size);
        cJSON_AddNumberToObject(x, "crit_factor", o->crit_factor);
        cJSON_AddItemToArray(ops, x);
    }
    return j;
}

static cJSON *json_model(const uly_model *m)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", m->name);
    cJSON_AddNumberToObject(j, "layers", (double)m->layers);
    cJSON_AddNumberToObject(j, "hidden", (double)m->hidden);
    cJSON_AddNumberToObject(j, "heads", (double)m->heads);
    cJSON_AddNumberToObject(j, "kv_heads", (double)m->kv_heads);
    cJSON_AddNumberToObject(j, "head_dim", (double)m->head_dim);
    cJSON_AddNumberToObject(j, "ffn_hidden", (double)m->ffn_hidden);
    cJSON_AddNumberToObject(j, "vocab", (double)m->vocab);
    cJSON_AddBoolToObject(j, "swiglu", m->swiglu);
    cJSON_AddBoolToObject(j, "tied_embeddings", m->tied_embeddings);
    cJSON_AddBoolToObject(j, "dropout", m->dropout);
    if (m->experts > 0) { /* a MoE model (trace_header.c reads them back) */
        cJSON_AddNumberToObject(j, "experts", (double)m->experts);
        cJSON_AddNumberToObject(j, "topk", (double)m->topk);
        cJSON_AddNumberToObject(j, "moe_ffn_hidden", (double)m->moe_ffn_hidden);
        cJSON_AddNumberToObject(j, "shared_ffn_hidden", (double)m->shared_ffn_hidden);
        cJSON_AddNumberToObject(j, "moe_dense_first", (double)m->moe_dense_first);
        cJSON_AddNumberToObject(j, "moe_every", (double)m->moe_every);
    }
    return j;
}

static cJSON *json_workload(const uly_workload *w, int moe)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "seq", (double)w->seq);
    cJSON_AddNumberToObject(j, "micro_batch", (double)w->micro_batch);
    cJSON_AddNumberToObject(j, "global_batch", (double)w->global_batch);
    cJSON_AddStringToObject(j, "dtype", uly_dtype_name(w->dtype));
    if (w->dtype == ULY_FP8) cJSON_AddStringToObject(j, "fp8_recipe", uly_fp8_recipe_name(w->fp8_recipe));
    cJSON_AddBoolToObject(j, "causal", w->causal);
    cJSON_AddBoolToObject(j, "flash", w->flash);
    cJSON_AddStringToObject(j, "recompute", uly_recompute_name(w->recompute));
    cJSON_AddNumberToObject(j, "zero_stage", w->zero_stage);
    cJSON_AddStringToObject(j, "split", uly_split_name(w->split));
    cJSON_AddBoolToObject(j, "overlap_grad_reduce", uly_grad_reduce_overlaps(w));
    if (moe) cJSON_AddStringToObject(j, "moe_dispatcher", uly_moe_dispatcher_name(w->moe_dispatcher));
    return j;
}

static void add_time(cJSON *root, int argc, char **argv)
{
    char ts[64];
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    cJSON_AddStringToObject(root, "created", ts);
    cJSON *a = cJSON_AddArrayToObject(root, "command");
    for (int i = 0; i < argc; i++) cJSON_AddItemToArray(a, cJSON_CreateString(argv[i]));
}

int hx_trace_header(hx_trace *trace, const hx_ctx *c, int argc, char **argv)
{
    if (!trace->fp) return HX_OK;
    cJSON *h = cJSON_CreateObject();
    cJSON_AddStringToObject(h, "format", HX_TRACE_FORMAT);
    cJSON_AddNumberToObject(h, "version", HX_TRACE_VERSION);
    cJSON_AddStringToObject(h, "type", "header");
    cJSON_AddStringToObject(h, "kind", "plan");
    add_time(h, argc, argv);
    cJSON_AddItemToObject(h, "plan", json_plan(c));
    cJSON_AddItemToObject(h, "model", json_model(&c->m));
    cJSON_AddItemToObject(h, "workload", json_workload(&c->w, c->m.experts > 0));
    cJSON_AddItemToObject(h, "cluster", hx_json_cluster(c->cluster_src, c->cluster_json, &c->cl, c->cluster_adjusted,
                                                        c->cluster_orig_nodes, c->cluster_orig_gpn));
    cJSON *x = cJSON_AddObjectToObject(h, "harness");
    cJSON_AddStringToObject(x, "mode", uly_exec_mode_name(c->mode));
    cJSON_AddNumberToObject(x, "threads", c->o.threads);
    cJSON_AddNumberToObject(x, "warmup", c->o.warmup);
    cJSON_AddNumberToObject(x, "reps", c->o.reps);
    add_u53(x, "seed", c->o.seed);
    cJSON_AddStringToObject(x, "backend", c->be ? c->be->name : "mpi");
    cJSON_AddStringToObject(x, "sync", c->o.sync_pass ? "pass" : "op");
    static const char *const check_names[] = {"auto", "full", "sampled", "none"};
    cJSON_AddStringToObject(x, "check", check_names[c->check_mode]);
    if (c->check_mode == HX_CHECK_SAMPLED) add_u53(x, "check_seed", c->check_seed);
    /* the two sync modes differ only in their first sentence */
    char timing[768];
    snprintf(timing, sizeof timing,
             "%s; time_s is the median over reps per rank, then median/min/max over ranks; a communication op's "
             "time is wait_s (a barrier over its group before it: waiting for the peers) plus transfer_s (the "
             "rest); ring transfers fused into the attention op they overlap report the time spent waiting for "
             "them after the compute (exposed), split into waiting for the peer's zero-byte ready message "
             "(wait_s) and then for the bytes (transfer_s), MPI_Testall between the attention kernel calls "
             "driving them, and that op reports the rest",
             c->o.sync_pass ? "MPI_Barrier over all ranks once per pass, ops back to back"
                            : "MPI_Barrier over all ranks before every op");
    cJSON_AddStringToObject(x, "timing", timing);
    cJSON_AddStringToObject(x, "bytes",
                            "bytes handed to MPI that leave the rank, from the counts passed: alltoall count*(p-1), "
                            "allgather count*(p-1), reduce-scatter block*(p-1), all-reduce = reduce-scatter + "
                            "all-gather, send count; float32");
    cJSON *ord = cJSON_AddArrayToObject(x, "execution_order");
    for (int i = 0; i < c->n_order; i++) cJSON_AddItemToArray(ord, cJSON_CreateNumber(c->order[i]));
    cJSON_AddItemToObject(h, "software", hx_json_software(c->kern->name));
    cJSON_AddItemToObject(h, "hardware", hx_json_hardware());
    if (c->be && c->be->describe) c->be->describe(c, h); /* the GPU, CUDA and NCCL of the nccl backend */
    return hx_trace_line(trace, h);
}

/* collective: per-op median over reps on each rank, then across ranks */
/* One rep's value of op i: its time, its wait for the peers, or the rest
 * (the transfer proper: time - wait). */
static double rep_value(const hx_opstat *s, int which, int rep)
{
    return which == HX_STAT_WAIT ? s->w[rep] : which == HX_STAT_XFER ? s->t[rep] - s->w[rep] : s->t[rep];
}

int hx_time_stats(const hx_ctx *c, int which, double (*out)[3])
{
    const int n = c->plan.n_ops, P = hx_world_size(), root = hx_world_rank() == 0;
    double *med = hx_alloc(sizeof(double) * (size_t)n, "timings");
    double *tmp = hx_alloc(sizeof(double) * (size_t)c->o.reps, "timings");
    double *all = root ? hx_alloc(sizeof(double) * (size_t)(n * P), "timings") : NULL;
    double *v = root ? hx_alloc(sizeof(double) * (size_t)P, "timings") : NULL;
    int rc = !med || !tmp || (root && (!all || !v)) ? HX_FAIL : HX_OK;
    for (int i = 0; rc == HX_OK && i < n; i++) {
        for (int k = 0; k < c->o.reps; k++) tmp[k] = rep_value(&c->st[i], which, k);
        med[i] = hx_median(tmp, c->o.reps);
    }
    if (rc == HX_OK) rc = HX_MPI(MPI_Gather(med, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    for (int i = 0; rc == HX_OK && root && i < n; i++) {
        double mn = 1e300, mx = -1e300;
        for (int r = 0; r < P; r++) {
            v[r] = all[r * n + i];
            mn = v[r] < mn ? v[r] : mn;
            mx = v[r] > mx ? v[r] : mx;
        }
        out[i][0] = hx_median(v, P);
        out[i][1] = mn;
        out[i][2] = mx;
    }
    free(v);
    free(all);
    free(med);
    free(tmp);
    return rc;
}

/* ts: the op stats of hx_time_stats for HX_STAT_TIME, then HX_STAT_WAIT,
 * then HX_STAT_XFER (3 x n_ops rows) */
static void add_stats(cJSON *x, const char *name, const double *v)
{
    cJSON *t = cJSON_AddObjectToObject(x, name);
    cJSON_AddNumberToObject(t, "median", v[0]);
    cJSON_AddNumberToObject(t, "min", v[1]);
    cJSON_AddNumberToObject(t, "max", v[2]);
}

int hx_trace_ops(hx_trace *trace, const hx_ctx *c, double (*ts)[3])
{
    if (!trace->fp) return HX_OK;
    for (int i = 0; i < c->n_order; i++) {
        const int id = c->order[i];
        const uly_op *o = &c->plan.ops[id];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "type", "op");
        cJSON_AddNumberToObject(x, "id", id);
        cJSON_AddStringToObject(x, "name", uly_op_type_name(o->type));
        cJSON_AddStringToObject(x, "phase", uly_phase_name(o->phase));
        cJSON_AddStringToObject(x, "kind", uly_op_kind_name(o->kind));
        cJSON_AddStringToObject(x, "coll", uly_coll_name(o->coll));
        cJSON_AddStringToObject(x, "group", uly_group_name(o->group));
        cJSON_AddNumberToObject(x, "group_size", o->group_size);
        cJSON_AddNumberToObject(x, "bytes_sent", (double)c->st[id].bytes);
        cJSON_AddNumberToObject(x, "bytes_planned", (double)o->bytes_sent);
        add_stats(x, "time_s", ts[id]);
        if (o->kind == ULY_OP_COMM) {
            const int n = c->plan.n_ops;
            add_stats(x, "wait_s", ts[HX_STAT_WAIT * n + id]);
            add_stats(x, "transfer_s", ts[HX_STAT_XFER * n + id]);
        }
        cJSON_AddNumberToObject(x, "reps", c->o.reps);
        if (c->st[id].fp8_gemms) cJSON_AddNumberToObject(x, "fp8_gemms", c->st[id].fp8_gemms);
        if (o->overlaps >= 0) {
            cJSON_AddNumberToObject(x, "overlaps", o->overlaps);
            cJSON_AddStringToObject(x, "time_is", "exposed");
        }
        HX_TRY(hx_trace_line(trace, x));
    }
    return HX_OK;
}

int hx_trace_summary(hx_trace *trace, const hx_ctx *c, int ok)
{
    if (!trace->fp) return HX_OK;
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "type", "summary");
    cJSON_AddBoolToObject(s, "ok", ok);
    cJSON_AddBoolToObject(s, "bytes_ok", c->bytes_ok);
    cJSON *ck = cJSON_AddObjectToObject(s, "check");
    cJSON_AddBoolToObject(ck, "ok", c->check_ok);
    cJSON_AddBoolToObject(ck, "skipped", c->o.no_check);
    cJSON_AddStringToObject(ck, "measure", c->check_mode == HX_CHECK_SAMPLED
                                               ? "max |x - ref| / max |ref| per tensor over the sample, float64 "
                                                 "single-rank reference"
                                               : "max |x - ref| / max |ref| per tensor, float64 single-rank reference");
    cJSON_AddNumberToObject(ck, "tolerance", c->tol);
    cJSON_AddStringToObject(ck, "tolerance_reason", c->tol_reason ? c->tol_reason : "");
    if (c->check_mode == HX_CHECK_SAMPLED) {
        /* what the sample compared: the heads over every row, dX on the rows */
        const struct hx_sample *S = &c->sample;
        cJSON *sm = cJSON_AddObjectToObject(ck, "sample");
        add_u53(sm, "seed", c->check_seed);
        cJSON *kv = cJSON_AddArrayToObject(sm, "kv_heads"), *q = cJSON_AddArrayToObject(sm, "heads");
        cJSON *rows = cJSON_AddArrayToObject(sm, "dx_rows");
        for (int64_t i = 0; i < S->n_kv; i++) cJSON_AddItemToArray(kv, cJSON_CreateNumber((double)S->kv[i]));
        for (int64_t i = 0; i < S->n_q; i++) cJSON_AddItemToArray(q, cJSON_CreateNumber((double)S->q[i]));
        for (int64_t i = 0; i < S->n_rows; i++) cJSON_AddItemToArray(rows, cJSON_CreateNumber((double)S->rows[i]));
    }
    cJSON *e = cJSON_AddObjectToObject(ck, "max_rel_err");
    static const char *const nm[5] = {"O", "dQ", "dK", "dV", "dX"};
    for (int t = 0; t < 5; t++) cJSON_AddNumberToObject(e, nm[t], c->err[t]);
    if (c->moe) { /* the routed experts' output, held to its own tolerance (hx_moe_tol) */
        cJSON_AddNumberToObject(e, "moe", c->err[5]);
        cJSON_AddNumberToObject(ck, "moe_tolerance", c->tol_moe);
        cJSON_AddStringToObject(ck, "moe_tolerance_reason", c->tol_moe_reason ? c->tol_moe_reason : "");
    }
    cJSON_AddNumberToObject(s, "ops", c->n_order);
    cJSON_AddNumberToObject(s, "passes", 1 + c->o.warmup + c->o.reps);
    cJSON_AddNumberToObject(s, "wall_s", c->t_total);
    return hx_trace_line(trace, s);
}

int hx_trace_header_micro(hx_trace *trace, const hx_opts *o, int argc, char **argv, const char *cluster_src,
                          void *cluster_json, const uly_cluster *cl)
{
    if (!trace->fp) return HX_OK;
    cJSON *h = cJSON_CreateObject();
    cJSON_AddStringToObject(h, "format", HX_TRACE_FORMAT);
    cJSON_AddNumberToObject(h, "version", HX_TRACE_VERSION);
    cJSON_AddStringToObject(h, "type", "header");
    cJSON_AddStringToObject(h, "kind", "microbench");
    add_time(h, argc, argv);
    cJSON_AddItemToObject(h, "plan", cJSON_CreateNull());
    if (cl) cJSON_AddItemToObject(h, "cluster", hx_json_cluster(cluster_src, cluster_json, cl, 0, cl->nodes, cl->gpus_per_node));
    cJSON *x = cJSON_AddObjectToObject(h, "microbench");
    cJSON_AddNumberToObject(x, "ranks", hx_world_size());
    cJSON_AddNumberToObject(x, "warmup", o->warmup);
    cJSON_AddNumberToObject(x, "reps", o->reps);
    cJSON_AddStringToObject(x, "dtype", uly_dtype_name(ULY_FP32));
    cJSON_AddStringToObject(x, "size",
                            "nccl-tests: alltoall and reduce_scatter the send buffer, allgather the receive buffer, "
                            "allreduce the buffer, sendrecv the message; bytes per rank");
    cJSON_AddStringToObject(x, "time", "per rep the slowest rank (MPI_Barrier before each rep); median over reps");
    cJSON_AddStringToObject(x, "busbw", "algbw x (p-1)/p for alltoall, allgather, reduce_scatter; 2(p-1)/p for "
                                        "allreduce; 1 for sendrecv");
    cJSON_AddItemToObject(h, "software", hx_json_software(NULL));
    cJSON_AddItemToObject(h, "hardware", hx_json_hardware());
    return hx_trace_line(trace, h);
}
