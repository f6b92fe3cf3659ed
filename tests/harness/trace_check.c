/* trace_check: validates an ulyharness trace (traces/FORMAT.md), independently
 * of the harness that wrote it.
 *
 *   trace_check FILE                 plan trace: the header (format, version,
 *       plan, model, workload, cluster, software, hardware); the plan in the
 *       header equals the plan libulysim builds again from the header's model,
 *       workload, layout and cluster (op for op: name, phase, bytes); exactly
 *       one op line per plan op id, with the plan's name and phase and
 *       bytes_sent EQUAL to the plan's bytes_sent; sane times; fp8_gemms on
 *       exactly the ops uly_op_fp8 names for the header's dtype; a final summary
 *       line whose checks passed and whose errors are within the tolerance.
 *   trace_check --microbench FILE    micro-benchmark trace.
 * Exit 0 when valid, 1 with the first problem on stderr. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "preset.h"
#include "ulysim.h"

static const char *file;

static int fail(const char *fmt, const char *a, double v)
{
    fprintf(stderr, "trace_check: %s: ", file);
    fprintf(stderr, fmt, a, v);
    fprintf(stderr, "\n");
    return 1;
}

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }
static double num(const cJSON *o, const char *k, double dflt)
{
    const cJSON *x = get(o, k);
    return cJSON_IsNumber(x) ? x->valuedouble : dflt;
}
static const char *str(const cJSON *o, const char *k)
{
    const cJSON *x = get(o, k);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

static char **read_lines(const char *path, int *n)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    char **v = NULL;
    int cap = 0;
    *n = 0;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    while ((len = getline(&line, &lcap, fp)) >= 0) {
        if (len > 0 && line[len - 1] == '\n') line[--len] = 0;
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            v = realloc(v, sizeof *v * (size_t)cap);
        }
        v[(*n)++] = strdup(line);
    }
    free(line);
    fclose(fp);
    return v;
}

static int stats_ok(const cJSON *x, const char *key)
{
    const cJSON *t = get(x, key);
    if (!cJSON_IsObject(t)) return 0;
    double md = num(t, "median", -1), mn = num(t, "min", -1), mx = num(t, "max", -1);
    return md >= 0 && mn >= 0 && mx >= 0 && mn <= md + 1e-12 && md <= mx + 1e-12;
}

static int time_ok(const cJSON *x) { return stats_ok(x, "time_s") && num(x, "reps", 0) >= 1; }

/* version 2: a comm op's time split into the wait for its peers and the
 * transfer; neither can exceed the op's slowest time, and the fastest
 * rank's wait cannot exceed the slowest rank's time */
static int split_ok(const cJSON *x)
{
    if (!stats_ok(x, "wait_s") || !stats_ok(x, "transfer_s")) return 0;
    const double tmax = num(get(x, "time_s"), "max", -1);
    return num(get(x, "wait_s"), "min", -1) <= tmax + 1e-12 && num(get(x, "transfer_s"), "min", -1) <= tmax + 1e-12;
}

static int check_common_header(const cJSON *h)
{
    if (!cJSON_IsObject(h)) return fail("line 1 is not a JSON object%s", "", 0);
    const char *fmt = str(h, "format");
    if (!fmt || strcmp(fmt, "ulysim-trace")) return fail("header format is %s, want ulysim-trace", fmt ? fmt : "missing", 0);
    if (num(h, "version", -1) != 2) return fail("header version %s%g, want 2", "", num(h, "version", -1));
    const char *keys[] = {"software", "hardware", "created"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!get(h, keys[i])) return fail("header has no \"%s\"", keys[i], 0);
    if (!str(get(h, "software"), "mpi_library")) return fail("header software has no mpi_library%s", "", 0);
    if (!str(get(h, "hardware"), "hostname")) return fail("header hardware has no hostname%s", "", 0);
    return 0;
}

static int check_summary(const cJSON *s, int want_check)
{
    if (!cJSON_IsObject(s) || !str(s, "type") || strcmp(str(s, "type"), "summary"))
        return fail("the last line is not the summary%s", "", 0);
    if (!cJSON_IsTrue(get(s, "ok"))) return fail("summary: ok is not true%s", "", 0);
    if (!want_check) return 0;
    if (!cJSON_IsTrue(get(s, "bytes_ok"))) return fail("summary: bytes_ok is not true%s", "", 0);
    const cJSON *ck = get(s, "check");
    if (!cJSON_IsTrue(get(ck, "ok"))) return fail("summary: check.ok is not true%s", "", 0);
    double tol = num(ck, "tolerance", -1);
    if (!(tol > 0)) return fail("summary: no tolerance%s", "", 0);
    const cJSON *e = get(ck, "max_rel_err");
    const char *names[] = {"O", "dQ", "dK", "dV", "dX"};
    for (int i = 0; i < 5; i++) {
        double v = num(e, names[i], NAN);
        if (!(v <= tol)) return fail("summary: max_rel_err.%s = %g exceeds the tolerance", names[i], v);
    }
    if (get(e, "moe") && !(num(e, "moe", NAN) <= num(ck, "moe_tolerance", -1)))
        return fail("summary: max_rel_err.moe = %s%g exceeds moe_tolerance", "", num(e, "moe", NAN));
    return 0;
}

static int build_plan(const cJSON *h, uly_plan *p)
{
    const cJSON *m = get(h, "model"), *w = get(h, "workload"), *pl = get(h, "plan"), *cl = get(h, "cluster");
    if (!m || !w || !pl || !cl) return fail("header lacks model, workload, plan or cluster%s", "", 0);
    uly_model mo;
    memset(&mo, 0, sizeof mo);
    snprintf(mo.name, sizeof mo.name, "%s", str(m, "name") ? str(m, "name") : "x");
    mo.layers = (int64_t)num(m, "layers", 0);
    mo.hidden = (int64_t)num(m, "hidden", 0);
    mo.heads = (int64_t)num(m, "heads", 0);
    mo.kv_heads = (int64_t)num(m, "kv_heads", 0);
    mo.head_dim = (int64_t)num(m, "head_dim", 0);
    mo.ffn_hidden = (int64_t)num(m, "ffn_hidden", 0);
    mo.vocab = (int64_t)num(m, "vocab", 0);
    mo.swiglu = cJSON_IsTrue(get(m, "swiglu"));
    mo.tied_embeddings = cJSON_IsTrue(get(m, "tied_embeddings"));
    mo.dropout = cJSON_IsTrue(get(m, "dropout"));
    /* a MoE model's fields (absent: dense) */
    mo.experts = (int64_t)num(m, "experts", 0);
    mo.topk = (int64_t)num(m, "topk", 0);
    mo.moe_ffn_hidden = (int64_t)num(m, "moe_ffn_hidden", 0);
    mo.shared_ffn_hidden = (int64_t)num(m, "shared_ffn_hidden", 0);
    mo.moe_dense_first = (int64_t)num(m, "moe_dense_first", 0);
    mo.moe_every = (int64_t)num(m, "moe_every", 0);
    char why[300];
    if (uly_model_check(&mo, why, sizeof why)) return fail("header model: %s%g", why, 0);
    uly_workload wo;
    memset(&wo, 0, sizeof wo);
    wo.seq = (int64_t)num(w, "seq", 0);
    wo.micro_batch = (int64_t)num(w, "micro_batch", 0);
    wo.global_batch = (int64_t)num(w, "global_batch", 0);
    /* a word outside ulysim.h's vocabularies is the vocabulary's count:
     * uly_workload_check refuses it */
    wo.dtype = uly_dtype_find(str(w, "dtype"));
    wo.causal = cJSON_IsTrue(get(w, "causal"));
    wo.flash = cJSON_IsTrue(get(w, "flash"));
    wo.recompute = uly_recompute_find(str(w, "recompute"));
    wo.zero_stage = (int)num(w, "zero_stage", 0);
    wo.split = uly_split_find(str(w, "split"));
    if (get(w, "moe_dispatcher")) wo.moe_dispatcher = uly_moe_dispatcher_find(str(w, "moe_dispatcher"));
    if (uly_workload_check(&wo, why, sizeof why)) return fail("header workload: %s%g", why, 0);
    uly_cluster c;
    const char *src = str(cl, "source");
    if (!src || preset_cluster_load(src, &c, why, sizeof why)) return fail("header cluster source: %s%g", why, 0);
    const cJSON *used = get(cl, "used");
    c.nodes = (int64_t)num(used, "nodes", (double)c.nodes);
    c.gpus_per_node = (int64_t)num(used, "gpus_per_node", (double)c.gpus_per_node);
    if (c.gpus_per_leaf < c.gpus_per_node) c.gpus_per_leaf = c.gpus_per_node;
    const uly_strategy *s = uly_strategy_find(str(pl, "strategy"));
    if (!s) return fail("header plan strategy %s unknown%g", str(pl, "strategy") ? str(pl, "strategy") : "?", 0);
    const cJSON *l = get(pl, "layout");
    uly_layout lay;
    uly_layout_init(&lay, s->id, (int64_t)num(l, "ulysses", 1), (int64_t)num(l, "ring", 1), (int64_t)num(l, "tp", 1),
                    (int64_t)num(l, "dp", 1));
    lay.pp = (int64_t)num(l, "pp", 1);
    lay.ep = (int32_t)num(l, "ep", 1);
    lay.etp = (int32_t)num(l, "etp", 1);
    uly_reason rs[ULY_MAX_REASONS];
    int nr = 0;
    if (uly_plan_build(&mo, &wo, &c, &lay, p, rs, &nr) != ULY_OK) return fail("libulysim cannot rebuild the plan%s", "", 0);
    return 0;
}

static int check_plan_trace(char **lines, int n)
{
    cJSON *h = cJSON_Parse(lines[0]);
    int rc = check_common_header(h);
    if (rc) goto out;
    const cJSON *pl = get(h, "plan");
    const cJSON *ops = get(pl, "ops");
    if (!cJSON_IsArray(ops)) {
        rc = fail("header plan has no ops%s", "", 0);
        goto out;
    }
    const int nops = cJSON_GetArraySize(ops);
    static uly_plan p;
    rc = build_plan(h, &p);
    if (rc) goto out;
    if (p.n_ops != nops) {
        rc = fail("the header plan has %s%g ops; libulysim builds a different count", "", nops);
        goto out;
    }
    for (int i = 0; i < nops; i++) {
        const cJSON *o = cJSON_GetArrayItem(ops, i);
        if (num(o, "id", -1) != i || !str(o, "name") || strcmp(str(o, "name"), uly_op_type_name(p.ops[i].type)) ||
            strcmp(str(o, "phase") ? str(o, "phase") : "", uly_phase_name(p.ops[i].phase)) ||
            num(o, "bytes_sent", -1) != (double)p.ops[i].bytes_sent) {
            rc = fail("header plan op %s differs from libulysim's plan (id %g)", uly_op_type_name(p.ops[i].type), i);
            goto out;
        }
    }
    /* the workload's dtype decides which ops run FP8 GEMMs (uly_op_fp8) */
    uly_workload w8;
    memset(&w8, 0, sizeof w8);
    w8.dtype = uly_dtype_find(str(get(h, "workload"), "dtype"));
    int *seen = calloc((size_t)nops, sizeof *seen);
    int nop_lines = 0;
    for (int li = 1; li < n - 1; li++) {
        cJSON *x = cJSON_Parse(lines[li]);
        const char *ty = str(x, "type");
        if (!x || !ty || strcmp(ty, "op")) {
            cJSON_Delete(x);
            rc = fail("line %s%g is not an op line", "", li + 1);
            break;
        }
        int id = (int)num(x, "id", -1);
        if (id < 0 || id >= nops) {
            rc = fail("op line with id %s%g: not a plan op", "", id);
        } else if (seen[id]++) {
            rc = fail("plan op %s (id %g) has two op lines", uly_op_type_name(p.ops[id].type), id);
        } else if (!str(x, "name") || strcmp(str(x, "name"), uly_op_type_name(p.ops[id].type)) ||
                   strcmp(str(x, "phase") ? str(x, "phase") : "", uly_phase_name(p.ops[id].phase))) {
            rc = fail("op line id %s%g: name or phase differ from the plan", "", id);
        } else if (num(x, "bytes_sent", -1) != (double)p.ops[id].bytes_sent) {
            fprintf(stderr, "trace_check: %s: op %d (%s, %s): measured %.0f bytes, the plan says %lld\n", file, id,
                    uly_op_type_name(p.ops[id].type), uly_phase_name(p.ops[id].phase), num(x, "bytes_sent", -1),
                    (long long)p.ops[id].bytes_sent);
            rc = 1;
        } else if (!time_ok(x)) {
            rc = fail("op line id %s%g: time_s missing or inconsistent", "", id);
        } else if (p.ops[id].kind == ULY_OP_COMM && !split_ok(x)) {
            rc = fail("comm op line id %s%g: wait_s/transfer_s missing or inconsistent", "", id);
        } else if ((num(x, "fp8_gemms", 0) > 0) != (uly_op_fp8(&w8, p.ops[id].type) != 0)) {
            /* an FP8 run's linear ops, and only they, ran FP8 GEMMs */
            fprintf(stderr, "trace_check: %s: op %d (%s): fp8_gemms %g, but the model library says it %s in FP8 "
                            "under dtype %s\n", file, id, uly_op_type_name(p.ops[id].type), num(x, "fp8_gemms", 0),
                    uly_op_fp8(&w8, p.ops[id].type) ? "runs" : "does not run", uly_dtype_name(w8.dtype));
            rc = 1;
        }
        cJSON_Delete(x);
        if (rc) break;
        nop_lines++;
    }
    if (!rc)
        for (int i = 0; i < nops; i++)
            if (!seen[i]) {
                rc = fail("plan op %s (id %g) has no op line", uly_op_type_name(p.ops[i].type), i);
                break;
            }
    free(seen);
    if (!rc) {
        cJSON *s = cJSON_Parse(lines[n - 1]);
        rc = check_summary(s, !cJSON_IsTrue(get(get(s, "check"), "skipped")));
        cJSON_Delete(s);
    }
    if (!rc)
        printf("trace_check: %s: %s, %d ops, one line each, bytes equal to libulysim's plan for every op\n", file,
               str(pl, "strategy"), nop_lines);
out:
    cJSON_Delete(h);
    return rc;
}

static int check_micro_trace(char **lines, int n)
{
    cJSON *h = cJSON_Parse(lines[0]);
    int rc = check_common_header(h);
    if (!rc && (!str(h, "kind") || strcmp(str(h, "kind"), "microbench"))) rc = fail("header kind is not microbench%s", "", 0);
    cJSON_Delete(h);
    int pts = 0, ovl = 0;
    for (int li = 1; !rc && li < n - 1; li++) {
        cJSON *x = cJSON_Parse(lines[li]);
        if (x && str(x, "type") && !strcmp(str(x, "type"), "overlap")) {
            /* the overlap micro-benchmark: fractions in [0, 1], times > 0 */
            const double ov = num(x, "overlap", -1), sl = num(x, "slowdown", -1);
            if (!(ov >= 0 && ov <= 1 && sl >= 0 && sl <= 1 && num(x, "transfer_s", 0) > 0 && num(x, "compute_s", 0) > 0))
                rc = fail("line %s%g is not a valid overlap line", "", li + 1);
            ovl++;
            cJSON_Delete(x);
            continue;
        }
        if (!x || !str(x, "kind") || strcmp(str(x, "kind"), "microbench") || !str(x, "coll") || !time_ok(x) ||
            !(num(x, "size_bytes", 0) > 0) || !(num(x, "busbw_GBps", -1) >= 0) || !(num(x, "algbw_GBps", -1) >= 0))
            rc = fail("line %s%g is not a valid microbench line", "", li + 1);
        pts++;
        cJSON_Delete(x);
    }
    if (!rc && pts == 0) rc = fail("no microbench lines%s", "", 0);
    if (!rc && ovl != 1) rc = fail("%s%g overlap lines, want 1", "", ovl);
    if (!rc) {
        cJSON *s = cJSON_Parse(lines[n - 1]);
        rc = check_summary(s, 0);
        cJSON_Delete(s);
    }
    if (!rc) printf("trace_check: %s: microbench, %d points\n", file, pts);
    return rc;
}

int main(int argc, char **argv)
{
    int micro = 0;
    int i = 1;
    if (i < argc && !strcmp(argv[i], "--microbench")) {
        micro = 1;
        i++;
    }
    if (i != argc - 1) {
        fprintf(stderr, "usage: trace_check [--microbench] TRACE\n");
        return 2;
    }
    file = argv[i];
    int n = 0;
    char **lines = read_lines(file, &n);
    if (!lines) return fail("cannot read it%s", "", 0);
    if (n < 3) return fail("%s%g lines: a trace has a header, op lines and a summary", "", n);
    int rc = micro ? check_micro_trace(lines, n) : check_plan_trace(lines, n);
    for (int k = 0; k < n; k++) free(lines[k]);
    free(lines);
    return rc;
}
