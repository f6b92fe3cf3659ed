/* trace_header.c: the trace reader's header line (traces/FORMAT.md): the
 * run's model, workload, layout and cluster, the plan libulysim rebuilds
 * from them checked against the header's own, and the harness's execution
 * order. The rest of the file is trace_read.c's. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>

#include "preset.h"
#include "text_quote.h"
#include "trace_internal.h"

static int get_bool(rd *r, const cJSON *o, const char *what, const char *k, int *out)
{
    const cJSON *x = get(o, k);
    if (!cJSON_IsBool(x))
        return fail(r, r->line, "%s \"%s\" must be true or false%s", what, k, x ? "" : " (missing)");
    *out = cJSON_IsTrue(x);
    return 0;
}

/* --------------------------------------------------------------- header */

/* The model as a model file holds it, MoE fields included: the preset
 * parser's checks and messages. */
static int parse_model(rd *r, const cJSON *m, uly_model *out)
{
    if (!cJSON_IsObject(m)) return fail(r, 1, "header \"model\" must be an object");
    char *text = cJSON_PrintUnformatted(m);
    if (!text) return 1;
    char why[400], where[600];
    snprintf(where, sizeof where, "%s:1: header model", r->path);
    int rc = preset_model_parse(text, strlen(text), where, out, why, sizeof why);
    free(text);
    if (rc) {
        snprintf(r->why, r->why_len, "%s", why);
        return 2;
    }
    return 0;
}

/* The workload's words, in ulysim.h's vocabularies. */
static const char *const dtype_names[] = {ULY_DTYPES(ULY_X_NAME)};
static const char *const recompute_names[] = {ULY_RECOMPUTES(ULY_X_NAME)};
static const char *const split_names[] = {ULY_SPLITS(ULY_X_NAME)};

/* A word of the header's workload, one of names: its index in *out. */
static int get_word(rd *r, const cJSON *w, const char *k, const char *const *names, int count, int *out)
{
    const char *s = NULL;
    char b[64], valid[160];
    if (get_str(r, w, "header workload", k, &s)) return 2;
    for (*out = 0; *out < count; ++*out)
        if (!strcmp(s, names[*out])) return 0;
    return fail(r, 1, "header workload \"%s\" = \"%s\": must be %s", k, shown(s, b, sizeof b),
                uly_names_join(names, count, ", ", " or ", valid, sizeof valid));
}

static int parse_workload(rd *r, const cJSON *w, uly_workload *out)
{
    if (!cJSON_IsObject(w)) return fail(r, 1, "header \"workload\" must be an object");
    memset(out, 0, sizeof *out);
    int64_t v;
    int word;
    if (get_int(r, w, "header workload", "seq", 1, INT64_C(1) << 50, &out->seq)) return 2;
    if (get_int(r, w, "header workload", "micro_batch", 1, 1 << 30, &out->micro_batch)) return 2;
    if (get_int(r, w, "header workload", "global_batch", 0, INT64_C(1) << 40, &out->global_batch)) return 2;
    if (get_word(r, w, "dtype", dtype_names, ULY_DTYPE_COUNT, &word)) return 2;
    out->dtype = (uly_dtype)word;
    if (get_bool(r, w, "header workload", "causal", &out->causal)) return 2;
    if (get_bool(r, w, "header workload", "flash", &out->flash)) return 2;
    if (get_word(r, w, "recompute", recompute_names, ULY_RECOMPUTE_COUNT, &word)) return 2;
    out->recompute = (uly_recompute)word;
    if (get_int(r, w, "header workload", "zero_stage", 0, 3, &v)) return 2;
    out->zero_stage = (int)v;
    if (get_word(r, w, "split", split_names, ULY_SPLIT_COUNT, &word)) return 2;
    out->split = (uly_split)word;
    /* optional: traces written before the key existed were planned with the
     * gradient reduction overlapped with backward */
    int ov = 1;
    if (get(w, "overlap_grad_reduce") && get_bool(r, w, "header workload", "overlap_grad_reduce", &ov)) return 2;
    out->overlap_grad_reduce = ov ? 1 : -1;
    /* optional: an FP8 run's scaling recipe (ulyharness's nccl backend runs
     * tensorwise); without it, the model's default */
    if (get(w, "fp8_recipe")) {
        static const char *const recipe_names[] = {ULY_FP8_RECIPES(ULY_X_NAME)};
        if (get_word(r, w, "fp8_recipe", recipe_names, ULY_FP8_RECIPE_COUNT, &word)) return 2;
        out->fp8_recipe = (uly_fp8_recipe)word;
    }
    /* optional: a MoE model's dispatcher (written for MoE runs only) */
    if (get(w, "moe_dispatcher")) {
        static const char *const disp_names[] = {ULY_MOE_DISPATCHERS(ULY_X_NAME)};
        if (get_word(r, w, "moe_dispatcher", disp_names, ULY_MOE_DISPATCHER_COUNT, &word)) return 2;
        out->moe_dispatcher = (uly_moe_dispatcher)word;
    }
    char why[300];
    if (uly_workload_check(out, why, sizeof why)) return fail(r, 1, "header workload: %s", why);
    return 0;
}

static int parse_cluster(rd *r, const cJSON *h, trace_run *run, int required)
{
    const cJSON *cl = get(h, "cluster");
    run->used_nodes = 1;
    run->used_gpn = run->ranks > 0 ? run->ranks : 1;
    if (!cl || cJSON_IsNull(cl)) {
        if (required) return fail(r, 1, "header \"cluster\" is missing: the plan cannot be rebuilt without it");
        return 0;
    }
    if (!cJSON_IsObject(cl)) return fail(r, 1, "header \"cluster\" must be an object");
    copy_str(run->cluster_source, sizeof run->cluster_source, str_of(cl, "source"));
    const cJSON *used = get(cl, "used");
    if (cJSON_IsObject(used)) {
        if (get_int(r, used, "header cluster.used", "nodes", 1, 1 << 20, &run->used_nodes)) return 2;
        if (get_int(r, used, "header cluster.used", "gpus_per_node", 1, 1 << 20, &run->used_gpn)) return 2;
        run->adjusted = cJSON_IsTrue(get(used, "adjusted"));
    } else if (required) {
        return fail(r, 1, "header \"cluster.used\" must be an object {name, nodes, gpus_per_node}");
    }
    const cJSON *pre = get(cl, "preset");
    if (!pre || cJSON_IsNull(pre)) {
        if (required) return fail(r, 1, "header \"cluster.preset\" is missing: the profile the run predicts with");
        return 0;
    }
    if (!cJSON_IsObject(pre)) return fail(r, 1, "header \"cluster.preset\" must be the preset's JSON object");
    run->cluster_text = cJSON_PrintUnformatted(pre);
    if (!run->cluster_text) return 1;
    char why[600], where[600];
    snprintf(where, sizeof where, "%s:1: header cluster.preset", r->path);
    if (preset_cluster_parse(run->cluster_text, strlen(run->cluster_text), where, &run->cluster, why, sizeof why)) {
        snprintf(r->why, r->why_len, "%s", why);
        return 2;
    }
    run->cluster.nodes = run->used_nodes;
    run->cluster.gpus_per_node = run->used_gpn;
    if (run->cluster.gpus_per_leaf < run->cluster.gpus_per_node) run->cluster.gpus_per_leaf = run->cluster.gpus_per_node;
    return 0;
}

static int parse_layout(rd *r, const cJSON *pl, uly_layout *l)
{
    const char *sname = str_of(pl, "strategy");
    char b[64];
    const uly_strategy *s = uly_strategy_find(sname);
    if (!s) return fail(r, 1, "header plan \"strategy\" = \"%s\": not a strategy libulysim knows", shown(sname, b, sizeof b));
    const cJSON *lo = get(pl, "layout");
    if (!cJSON_IsObject(lo)) return fail(r, 1, "header plan \"layout\" must be an object");
    int64_t u, ri, t, dp, pp;
    if (get_int(r, lo, "header plan.layout", "ulysses", 1, 1 << 20, &u) ||
        get_int(r, lo, "header plan.layout", "ring", 1, 1 << 20, &ri) ||
        get_int(r, lo, "header plan.layout", "tp", 1, 1 << 20, &t) ||
        get_int(r, lo, "header plan.layout", "dp", 1, 1 << 20, &dp))
        return 2;
    pp = 1;
    if (get(lo, "pp") && get_int(r, lo, "header plan.layout", "pp", 1, 1 << 20, &pp)) return 2;
    uly_layout_init(l, s->id, u, ri, t, dp);
    l->pp = pp;
    int64_t ep = 1, etp = 1; /* optional: a MoE run's expert parallel degrees */
    if (get(lo, "ep") && get_int(r, lo, "header plan.layout", "ep", 1, 1 << 20, &ep)) return 2;
    if (get(lo, "etp") && get_int(r, lo, "header plan.layout", "etp", 1, 1 << 20, &etp)) return 2;
    l->ep = (int32_t)ep, l->etp = (int32_t)etp;
    const cJSON *ord = get(lo, "order");
    if (ord) {
        if (!cJSON_IsArray(ord) || cJSON_GetArraySize(ord) != 4)
            return fail(r, 1, "header plan.layout \"order\" must be an array of the 4 groups tp, ulysses, ring, dp");
        int i = 0;
        for (const cJSON *g = ord->child; g; g = g->next, i++) {
            uly_group gg;
            if (!cJSON_IsString(g) || trace_group_parse(g->valuestring, &gg) || gg == ULY_GROUP_NONE || gg == ULY_GROUP_ZERO)
                return fail(r, 1, "header plan.layout \"order\"[%d] must be one of tp, ulysses, ring, dp", i);
            l->order[i] = gg;
        }
    }
    char why[300];
    if (uly_layout_check(l, why, sizeof why)) return fail(r, 1, "header plan.layout: %s", why);
    return 0;
}

static int same_num(double a, double b) { return a == b || fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)); }

/* The header's plan op array against the plan libulysim rebuilt. */
static int compare_header_plan(rd *r, const cJSON *pl, const uly_plan *p)
{
    const cJSON *ops = get(pl, "ops");
    if (!cJSON_IsArray(ops)) return fail(r, 1, "header plan \"ops\" must be an array");
    int n = cJSON_GetArraySize(ops);
    if (n != p->n_ops)
        return fail(r, 1, "header plan has %d ops; libulysim rebuilds %d from the header's model, workload, layout and cluster",
                    n, p->n_ops);
    /* the count beside the list (traces/FORMAT.md: plan.n_ops): one that
     * disagrees with it is a header edited or cut, whichever it was */
    const cJSON *nj = get(pl, "n_ops");
    if (nj && (!js_is_int_in(nj, 0, ULY_PLAN_MAX_OPS) || nj->valuedouble != n)) {
        char said[64];
        js_describe(nj, said, sizeof said);
        return fail(r, 1, "header plan.n_ops = %s, but plan.ops has %d ops (valid: n_ops = the length of plan.ops)",
                    said, n);
    }
    int i = 0;
    for (const cJSON *o = ops->child; o; o = o->next, i++) {
        const uly_op *q = &p->ops[i];
        char b[64], said[96] = "", want[96] = "";
        const char *bad = NULL;
        const cJSON *id = get(o, "id");
        if (!cJSON_IsObject(o))
            return fail(r, 1, "header plan op %d is not an object (valid: one object per op, in plan order)", i);
        if (!cJSON_IsNumber(id) || id->valuedouble != i)
            return fail(r, 1, "header plan op %d (%s): its id is not %d, its place in the list (valid: the ops in plan "
                        "order, id = index)", i, shown(str_of(o, "name"), b, sizeof b), i);
        /* the first field that differs, with what the header says and what
         * libulysim rebuilds */
        const char *const sv[5] = {uly_op_type_name(q->type), uly_phase_name(q->phase), uly_op_kind_name(q->kind),
                                   uly_coll_name(q->coll), uly_group_name(q->group)};
        static const char *const sk[5] = {"name", "phase", "kind", "coll", "group"};
        for (int k = 0; k < 5 && !bad; k++) {
            const char *v = str_of(o, sk[k]);
            if (v && !strcmp(v, sv[k])) continue;
            bad = sk[k];
            snprintf(said, sizeof said, "%s", v ? shown(v, b, sizeof b) : "(none)");
            snprintf(want, sizeof want, "%s", sv[k]);
        }
        const double nv[5] = {(double)q->group_size, (double)q->steps, (double)q->overlaps, (double)q->bytes_sent,
                              q->flops};
        static const char *const nk[5] = {"group_size", "steps", "overlaps", "bytes_sent", "flops"};
        for (int k = 0; k < 5 && !bad; k++) {
            const cJSON *v = get(o, nk[k]);
            if (cJSON_IsNumber(v) && (k == 4 ? same_num(v->valuedouble, nv[k]) : v->valuedouble == nv[k])) continue;
            bad = nk[k];
            if (cJSON_IsNumber(v)) snprintf(said, sizeof said, "%.17g", v->valuedouble);
            else snprintf(said, sizeof said, "(no number)");
            snprintf(want, sizeof want, "%.17g", nv[k]);
        }
        static const char *const bk[2] = {"per_step", "per_model"};
        const int bv[2] = {!!q->per_step, !!q->per_model};
        for (int k = 0; k < 2 && !bad; k++) {
            if (cJSON_IsTrue(get(o, bk[k])) == bv[k]) continue;
            bad = bk[k];
            snprintf(said, sizeof said, "%s", bv[k] ? "not true" : "true");
            snprintf(want, sizeof want, "%s", bv[k] ? "true" : "false");
        }
        if (bad)
            return fail(r, 1, "header plan op %d (%s): field %s %s differs from the plan libulysim rebuilds from the "
                        "header (%s)", i, sv[0], bad, said, want);
    }
    return 0;
}

static void join_command(const cJSON *cmd, char *out, size_t n)
{
    out[0] = 0;
    if (!cJSON_IsArray(cmd)) return;
    size_t o = 0;
    for (const cJSON *a = cmd->child; a && o + 1 < n; a = a->next) {
        if (!cJSON_IsString(a)) continue;
        const char *s = a->valuestring;
        int quote = !*s || strpbrk(s, " \t'\"$&|;<>()*?") != NULL;
        int w = snprintf(out + o, n - o, quote ? "%s'%s'" : "%s%s", o ? " " : "", s);
        if (w < 0) break;
        o += (size_t)w;
        if (o >= n) {
            o = n - 1;
            break;
        }
    }
    for (char *p = out; *p; p++)
        if ((unsigned char)*p < 0x20) *p = '?';
}

/* harness.execution_order: every plan id once; the op lines must follow it
 * (traces/FORMAT.md). Absent in older traces: then not checked. */
static int parse_exec_order(rd *r, const cJSON *eo, int n_ops)
{
    r->n_exec_order = 0;
    if (!eo) return 0;
    if (!cJSON_IsArray(eo) || cJSON_GetArraySize(eo) != n_ops)
        return fail(r, 1, "header harness.execution_order must be an array of the plan's %d op ids", n_ops);
    unsigned char seen[ULY_PLAN_MAX_OPS] = {0};
    int k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, eo) {
        const double v = cJSON_IsNumber(e) ? e->valuedouble : -1;
        if (!(v >= 0 && v < n_ops) || v != (int)v || seen[(int)v])
            return fail(r, 1, "header harness.execution_order[%d]: not a plan op id seen once (0 .. %d)", k, n_ops - 1);
        seen[(int)v] = 1;
        r->exec_order[k++] = (int)v;
    }
    r->n_exec_order = k;
    return 0;
}

int trace_header_parse(rd *r, const cJSON *h, trace_run *run)
{
    r->line = 1;
    char b[64];
    const cJSON *f = get(h, "format");
    if (!cJSON_IsString(f) || strcmp(f->valuestring, TRACE_FORMAT))
        return fail(r, 1, "header \"format\" is %s%s%s, not \"%s\": not an ulysim trace",
                    cJSON_IsString(f) ? "\"" : "", cJSON_IsString(f) ? shown(f->valuestring, b, sizeof b) : "missing",
                    cJSON_IsString(f) ? "\"" : "", TRACE_FORMAT);
    const cJSON *v = get(h, "version");
    if (!cJSON_IsNumber(v))
        return fail(r, 1, "header \"version\" is missing or not a number; this reader reads versions 1 to %d", TRACE_VERSION);
    if (v->valuedouble != TRACE_VERSION && v->valuedouble != 1)
        return fail(r, 1, "trace format version %.15g; this reader reads versions 1 to %d (see traces/FORMAT.md)",
                    v->valuedouble, TRACE_VERSION);
    run->version = (int)v->valuedouble;
    const char *ty = str_of(h, "type");
    if (!ty || strcmp(ty, "header")) return fail(r, 1, "line 1 must be the header (\"type\": \"header\")");
    const char *kind = str_of(h, "kind");
    if (kind && !strcmp(kind, "plan")) run->kind = TRACE_PLAN;
    else if (kind && !strcmp(kind, "microbench")) run->kind = TRACE_MICROBENCH;
    else return fail(r, 1, "header \"kind\" = \"%s\": must be \"plan\" or \"microbench\"", shown(kind, b, sizeof b));

    copy_str(run->created, sizeof run->created, str_of(h, "created"));
    join_command(get(h, "command"), run->command, sizeof run->command);
    const cJSON *hw = get(h, "hardware"), *sw = get(h, "software"), *hx = get(h, "harness");
    copy_str(run->hostname, sizeof run->hostname, str_of(hw, "hostname"));
    copy_str(run->cpu_model, sizeof run->cpu_model, str_of(hw, "cpu_model"));
    copy_str(run->mpi_library, sizeof run->mpi_library, str_of(sw, "mpi_library"));
    copy_str(run->blas, sizeof run->blas, str_of(sw, "blas"));
    copy_str(run->blas_core, sizeof run->blas_core, str_of(sw, "blas_core"));
    copy_str(run->kernel, sizeof run->kernel, str_of(sw, "attention_kernel"));
    copy_str(run->mode, sizeof run->mode, str_of(hx, "mode"));
    copy_str(run->backend, sizeof run->backend, str_of(hx, "backend") ? str_of(hx, "backend") : "mpi");
    int64_t x;
    if (cJSON_IsObject(hw) && get(hw, "ranks")) {
        if (get_int(r, hw, "header hardware", "ranks", 1, 1 << 24, &x)) return 2;
        run->ranks = (int)x;
    }
    if (cJSON_IsObject(hw) && cJSON_IsNumber(get(hw, "cores_online"))) run->cores_online = get(hw, "cores_online")->valueint;
    if (cJSON_IsObject(hx) && cJSON_IsNumber(get(hx, "threads"))) run->threads = get(hx, "threads")->valueint;
    if (cJSON_IsObject(hx) && cJSON_IsNumber(get(hx, "warmup"))) run->warmup = get(hx, "warmup")->valueint;
    if (cJSON_IsObject(hx) && cJSON_IsNumber(get(hx, "reps"))) run->reps = get(hx, "reps")->valueint;

    if (run->kind == TRACE_MICROBENCH) {
        const cJSON *mb = get(h, "microbench");
        if (!cJSON_IsObject(mb)) return fail(r, 1, "microbench header has no \"microbench\" object");
        if (get_int(r, mb, "header microbench", "ranks", 1, 1 << 24, &x)) return 2;
        if (run->ranks && run->ranks != x)
            return fail(r, 1, "header microbench.ranks (%lld) differs from hardware.ranks (%d)", (long long)x, run->ranks);
        run->ranks = (int)x;
        if (cJSON_IsNumber(get(mb, "reps"))) run->reps = get(mb, "reps")->valueint;
        return parse_cluster(r, h, run, 0);
    }

    const cJSON *pl = get(h, "plan");
    if (!cJSON_IsObject(pl)) return fail(r, 1, "header \"plan\" must be an object for a plan trace");
    int rc;
    if ((rc = parse_model(r, get(h, "model"), &run->model))) return rc;
    if ((rc = parse_workload(r, get(h, "workload"), &run->workload))) return rc;
    if ((rc = parse_layout(r, pl, &run->layout))) return rc;
    if (!run->ranks) run->ranks = (int)uly_layout_gpus(&run->layout);
    if (run->ranks != uly_layout_gpus(&run->layout))
        return fail(r, 1, "header hardware.ranks (%d) is not the layout's product of degrees (%lld)", run->ranks,
                    (long long)uly_layout_gpus(&run->layout));
    if ((rc = parse_cluster(r, h, run, 1))) return rc;
    uly_reason rs[ULY_MAX_REASONS];
    int nr = 0;
    uly_status st = uly_plan_build(&run->model, &run->workload, &run->cluster, &run->layout, &run->plan, rs, &nr);
    if (st != ULY_OK)
        return fail(r, 1, "libulysim cannot rebuild the header's plan: %s", uly_status_str(st));
    for (int i = 0; i < nr && i < ULY_MAX_REASONS; i++)
        if (rs[i].fatal) {
            char why[300];
            uly_reason_format(&rs[i], &run->model, why, sizeof why);
            return fail(r, 1, "the header's layout is not a valid plan for libulysim: %s", why);
        }
    if ((rc = compare_header_plan(r, pl, &run->plan))) return rc;
    return parse_exec_order(r, get(hx, "execution_order"), run->plan.n_ops);
}
