/* plan_out.c: the writers of the plan command's result (plan_out.h): the
 * table for people (its header, the strategies, why not, the
 * recommendation and its operations), CSV and JSON. */
#include <stdlib.h>
#include <string.h>

#include "plan_out.h"

#define WIDTH 120

/* A strategy out of memory on a layout that keeps the whole sequence on
 * every GPU, because even its smallest sequence split (degree 2, or the
 * smallest divisor of the GPUs) fails on divisibility: that failure, not
 * the memory, is why; said with the lengths that would work. */
static void seq_split_note(const sim_ctx *c, const sim_summary *s, char *buf, size_t n)
{
    buf[0] = 0;
    const uly_strategy *st = s->strategy;
    if (!st || !(st->uses_ulysses || st->uses_ring) || s->feasible || s->gpus <= 1) return;
    if (s->layout.ulysses * s->layout.ring > 1) return;
    int oom = 0;
    for (int i = 0; i < s->n_reasons; i++) oom |= s->reasons[i].fatal && s->reasons[i].code == ULY_R_OUT_OF_MEMORY;
    if (!oom) return;
    const int64_t pp = s->layout.pp > 1 ? s->layout.pp : 1, stage = s->gpus / pp;
    int64_t d = 2;
    while (d <= stage && stage % d) d++;
    if (d > stage) return;
    uly_layout l;
    uly_layout_init(&l, st->id, st->uses_ulysses ? d : 1, st->uses_ulysses ? 1 : d, 1, stage / d);
    l.pp = pp;
    uly_plan *plan = malloc(sizeof *plan);
    uly_result *r = malloc(sizeof *r);
    if (plan && r && uly_evaluate(&c->model, &c->w, &c->cluster, &l, plan, r) == ULY_OK)
        for (int i = 0; i < r->n_reasons; i++) {
            if (!r->reasons[i].fatal || r->reasons[i].code != ULY_R_SEQ_NOT_DIVISIBLE) continue;
            char why[400], dw[80];
            uly_reason_format(&r->reasons[i], &c->model, why, sizeof why);
            sim_degrees_words(&l, dw, sizeof dw);
            snprintf(buf, n, "no layout that splits the sequence has valid shapes (the smallest, %s: %s), so this one "
                     "keeps all of it on every GPU", dw, why);
            break;
        }
    free(plan);
    free(r);
}

/* 1 when a row of a context-parallel strategy (one with a Ulysses or ring
 * degree) has those degrees at 1 and TP above 1: what runs is TP with
 * sequence parallelism, Megatron-SP's layout, whatever the row's name. */
static int sequence_degree_one(const sim_summary *s)
{
    const uly_strategy *st = s->strategy;
    return st && (st->uses_ulysses || st->uses_ring) && s->layout.ulysses <= 1 && s->layout.ring <= 1 &&
           s->layout.tp > 1;
}

/* The what-if flags: changed from the preset, or restating it. */
static void whatif_lines(const sim_ctx *c, FILE *f)
{
    const sim_args *a = c->a;
    /* [0]: changed from the preset; [1]: what-if flags that restate it */
    char wi[2][240] = {"", ""};
#define WI(bit, ...)                                                                                                   \
do {                                                                                                               \
    char *w_ = wi[(c->whatif_same & (bit)) != 0];                                                                  \
    snprintf(w_ + strlen(w_), sizeof wi[0] - strlen(w_), __VA_ARGS__);                                            \
} while (0)
    if (a->nic_bw_Bps > 0) WI(SIM_WHATIF_NIC, "; NIC %.4g GB/s", a->nic_bw_Bps / 1e9);
    if (a->intra_bw_Bps > 0) WI(SIM_WHATIF_INTRA, "; in-node %.4g GB/s", a->intra_bw_Bps / 1e9);
    if (a->gpus_per_node > 0) WI(SIM_WHATIF_GPN, "; %lld GPUs per node", (long long)a->gpus_per_node);
    if (a->oversub > 0) WI(SIM_WHATIF_OVERSUB, "; oversubscription %g", a->oversub);
#undef WI
    if (wi[0][0]) fprintf(f, "#           what-if, changed from the preset: %s\n", wi[0] + 2);
    if (wi[1][0]) fprintf(f, "#           what-if flags equal to the preset's values (nothing changed): %s\n", wi[1] + 2);
}

/* The '#' lines above the table: the request, the model, the cluster, the
 * workload and the search. */
static void table_head(const sim_ctx *c, const sim_plan_result *R, FILE *f)
{
    const uly_model *m = &c->model;
    const uly_cluster *cl = &c->cluster;
    const uly_workload *w = &c->w;
    char b1[64];
    int64_t gpus = R->row[0].gpus;
    uint64_t evaluated = 0;
    for (int i = 0; i < R->nrows; i++) evaluated += R->row[i].evaluated;

    sim_size_str(w->seq, b1, sizeof b1);
    fprintf(f, "# ulysim %s plan: %s on %s, %lld GPU%s, sequence %s (%lld tokens)\n", ULY_VERSION, m->name, cl->name,
            (long long)gpus, sim_plural_s(gpus), b1, (long long)w->seq);
    char moe[240];
    sim_moe_model_str(m, moe, sizeof moe); /* output_moe.c: empty for a dense model */
    fprintf(f, "# model     L %lld, h %lld, a %lld heads, k %lld KV heads, d %lld, f %lld %s, V %lld; %.2f B parameters%s\n",
            (long long)m->layers, (long long)m->hidden, (long long)m->heads, (long long)m->kv_heads,
            (long long)m->head_dim, (long long)m->ffn_hidden, m->swiglu ? "SwiGLU" : "GELU", (long long)m->vocab,
            uly_model_params(m) / 1e9, moe);
    char peak[80];
    sim_peak_str(cl, w, peak, sizeof peak);
    fprintf(f, "# cluster   %s: %lld node%s x %lld GPU%s, %s, %.1f GiB HBM (%.1f usable, %.1f headroom); in-node %.0f GB/s, NIC %.0f GB/s per GPU, %s\n",
            cl->gpu.name, (long long)cl->nodes, sim_plural_s(cl->nodes), (long long)cl->gpus_per_node,
            sim_plural_s(cl->gpus_per_node), peak, cl->gpu.hbm_bytes / 1073741824.0,
            (cl->gpu.hbm_bytes - cl->gpu.reserved_bytes) / 1073741824.0, cl->gpu.reserved_bytes / 1073741824.0,
            cl->intra_bw_Bps / 1e9, cl->nic_bw_Bps / 1e9, uly_topo_name(cl->topo));
    whatif_lines(c, f);
    char grown[200];
    if (sim_cluster_grown(c, grown, sizeof grown)[0]) fprintf(f, "#           (%s)\n", grown);
    char wl[800];
    sim_workload_str(w, wl, sizeof wl);
    fprintf(f, "# workload  %s\n", wl);
    char pps[160] = "";
    if (c->opts.pin_pp > 1 && c->opts.pin_vpp > 1)
        snprintf(pps, sizeof pps, ", under an interleaved 1F1B pipeline of %lld stages x %lld virtual (pinned)",
                 (long long)c->opts.pin_pp, (long long)c->opts.pin_vpp);
    else if (c->opts.pin_pp > 1)
        snprintf(pps, sizeof pps, ", under a 1F1B pipeline of %lld stages (pinned)", (long long)c->opts.pin_pp);
    else if (c->opts.pin_pp == ULY_PP_SEARCH)
        snprintf(pps, sizeof pps, " x 1F1B pipeline stages (every divisor of the GPUs up to the layers%s)",
                 c->opts.pin_vpp == 1 ? "" : c->opts.pin_vpp > 1 ? ", interleaved as pinned" : ", interleaved where the layers split");
    fprintf(f, "# search    best layout per strategy over u x r x tp x dp, both placements%s%s; %llu layout(s) evaluated\n",
            c->opts.search_micro_batch ? ", micro-batches" : "", pps, (unsigned long long)evaluated);
    fprintf(f, "# columns   comm per rank per layer per micro-batch (fwd; bwd with recompute); link: tiers it crosses; FLOPs: model FLOPs\n");

    fprintf(f, "# marks     *: the recommendation (most tokens/s of the plans that fit); a plan that does not fit shows\n"
               "#           its step time as priced but no tokens/s, TFLOP/s or MFU, as it cannot run\n");
}

/* The columns of the table and of CSV. */
static const char *const table_cols[] = {"strategy", "u", "r", "tp", "dp", "pp", "mb", "fits", "mem_GiB",
                                         "mem_largest", "fwd_MiB", "bwd_MiB", "link", "step_s", "tokens_per_s",
                                         "TFLOPs_gpu", "mfu_pct"};
static const char *const csv_cols[] = {"strategy", "ulysses", "ring", "tp", "dp", "pp", "gpus", "seq", "micro_batch",
                                       "feasible", "fits", "mem_bytes", "mem_capacity_bytes", "mem_largest",
                                       "comm_fwd_bytes", "comm_bwd_bytes", "comm_recompute_bytes", "zero_bytes",
                                       "link", "step_s", "tokens_per_s", "tflops_per_gpu", "mfu", "hfu",
                                       "recommended", "reasons"};

static const char *const csv_cols_moe[] = {"strategy", "ulysses", "ring", "tp", "dp", "pp", "ep", "etp", "gpus", "seq",
                                           "micro_batch", "feasible", "fits", "mem_bytes", "mem_capacity_bytes",
                                           "mem_largest", "comm_fwd_bytes", "comm_bwd_bytes", "comm_recompute_bytes",
                                           "zero_bytes", "link", "step_s", "tokens_per_s", "tflops_per_gpu", "mfu",
                                           "hfu", "recommended", "reasons"};

/* A MoE model's table: the expert-parallel degrees after the pipeline's. */
static const char *const table_cols_moe[] = {"strategy", "u", "r", "tp", "dp", "pp", "ep", "etp", "mb", "fits",
                                             "mem_GiB", "mem_largest", "fwd_MiB", "bwd_MiB", "link", "step_s",
                                             "tokens_per_s", "TFLOPs_gpu", "mfu_pct"};

/* One row per strategy; returns 1 when a cell could not be stored. */
static int table_rows(const sim_plan_result *R, int moe, FILE *f)
{
    sim_table t;
    if (moe) sim_table_init(&t, 19, table_cols_moe, "lrrrrrrrrlrlrrlrrrr");
    else sim_table_init(&t, 17, table_cols, "lrrrrrrlrlrrlrrrr");
    for (const sim_summary *s = R->row; s < R->row + R->nrows; s++) {
        const uly_layout *l = &s->layout;
        sim_table_row(&t);
        sim_table_cell(&t, "%s%s", s->strategy->name, s - R->row == R->rec ? "*" : "");
        sim_cell_layout(&t, l);
        if (moe) sim_cell_layout_moe(&t, l);
        if (!sim_has_numbers(s)) {
            sim_table_cell(&t, "%s", "");
            sim_table_cell(&t, "%s", sim_fit_tag(s));
            for (int k = 0; k < 9; k++) sim_table_cell(&t, "%s", "");
            continue;
        }
        sim_table_cell(&t, "%lld", (long long)s->micro_batch);
        sim_table_cell(&t, "%s", sim_fit_tag(s));
        sim_cell_gib(&t, s->mem.total_bytes);
        sim_table_cell(&t, "%s", uly_mem_term_name((uly_mem_term)s->mem.largest));
        sim_table_cell(&t, "%.1f", (double)s->comm_fwd / 1048576.0);
        sim_table_cell(&t, "%.1f", (double)s->comm_bwd / 1048576.0);
        sim_table_cell(&t, "%s", sim_tiers_name(s->tiers));
        sim_cell_seconds(&t, s->time.step_s);
        if (sim_shows_throughput(s)) {
            sim_table_cell(&t, "%.0f", s->time.tokens_per_s);
            sim_table_cell(&t, "%.1f", s->time.tflops_per_gpu);
            sim_table_cell(&t, "%.1f", s->time.mfu * 100.0);
        } else {
            for (int k = 0; k < 3; k++) sim_table_cell(&t, "%s", "");
        }
    }
    int bad = sim_table_print(&t, f);
    sim_table_free(&t);

    return bad;
}

/* Why a strategy does not fit, or what its row assumed. */
static void table_why_not(const sim_ctx *c, const sim_plan_result *R, FILE *f)
{
    const sim_summary *rows = R->row;
    const int nrows = R->nrows;
    fprintf(f, "#\n# why not, and what was assumed:\n");
    for (int i = 0; i < nrows; i++) {
        char r[1000], d[80], split[600];
        sim_reasons_str(c, &rows[i], 0, r, sizeof r);
        if (!r[0] && rows[i].note[0]) snprintf(r, sizeof r, "%s", rows[i].note);
        if (rows[i].status == SIM_ROW_OK && sim_is_plain_dp(&rows[i].layout)) {
            /* a strategy's degrees all 1: its name would claim a scheme that does not run */
            char dp[200];
            snprintf(dp, sizeof dp, "degrees 1: %s, no %s (every strategy reduces to it)",
                     sim_plain_dp_words(&rows[i].layout), rows[i].strategy->label);
            sim_join(r, sizeof r, "; ", dp);
        } else if (rows[i].status == SIM_ROW_OK && sequence_degree_one(&rows[i])) {
            /* TP alone under a context-parallel name: the row is Megatron-SP's layout */
            char sp[240];
            snprintf(sp, sizeof sp, "context-parallel degree 1: %s's layout (TP %lld with sequence parallelism), no %s",
                     uly_strategy_get(ULY_STRAT_MEGATRON_SP)->label, (long long)rows[i].layout.tp,
                     rows[i].strategy->label);
            sim_join(r, sizeof r, "; ", sp);
        }
        seq_split_note(c, &rows[i], split, sizeof split);
        if (!r[0] && !split[0]) continue;
        sim_degrees_words(&rows[i].layout, d, sizeof d);
        char line[1800];
        snprintf(line, sizeof line, "%s (%s)%s: %s%s%s", rows[i].strategy->name, d,
                 rows[i].status == SIM_ROW_NOLAYOUT ? ", no layout has valid shapes; this one" : "", split,
                 split[0] && r[0] ? "; " : "", r);
        sim_print_note(f, "#   ", "#       ", line, WIDTH);
    }
}

/* The recommendation and why, or why there is none: 1 when there is one. */
static int table_recommendation(const sim_ctx *c, const sim_plan_result *R, FILE *f)
{
    const sim_summary *rows = R->row;
    const int nrows = R->nrows, rec = R->rec;
    const int64_t gpus = rows[0].gpus;
    const uly_workload *w = &c->w;
    const char *note = R->note, *why = R->why;
    if (note[0]) {
        fprintf(f, "#\n");
        sim_print_note(f, "# ", "#   ", note, WIDTH);
    }
    fprintf(f, "#\n");
    if (rec < 0) {
        /* more GPUs help only where memory stopped a strategy; shapes that
         * do not divide (sequence, heads, global batch) need other sizes */
        int oom = 0;
        for (int i = 0; i < nrows && !oom; i++)
            for (int k = 0; k < rows[i].n_reasons && k < ULY_MAX_REASONS; k++)
                oom |= rows[i].reasons[k].code == ULY_R_OUT_OF_MEMORY;
        char none[300];
        snprintf(none, sizeof none, "recommended: none: no strategy fits %lld GPU%s at %lld tokens (see the reasons "
                 "above; %s)", (long long)gpus, sim_plural_s(gpus), (long long)w->seq,
                 oom ? "try more GPUs, `ulysim min-gpus`, or `ulysim max-seq`"
                     : "no layout's degrees divide these sizes: choose a sequence length, GPU count or global batch they divide");
        sim_print_note(f, "# ", "#   ", none, WIDTH);
        return 0;
    }
    char d[80];
    sim_degrees_words(&rows[rec].layout, d, sizeof d);
    char line[1200];
    char as[120] = "";
    if (sim_is_plain_dp(&rows[rec].layout))
        snprintf(as, sizeof as, "%s, as ", sim_plain_dp_words(&rows[rec].layout));
    else if (sequence_degree_one(&rows[rec]))
        snprintf(as, sizeof as, "%s's layout, as ", uly_strategy_get(ULY_STRAT_MEGATRON_SP)->label);
    snprintf(line, sizeof line, "recommended: %s%s (%s), micro-batch %lld: %.0f tokens/s, %.1f%% MFU; %s", as,
             rows[rec].strategy->name, d,
             (long long)rows[rec].micro_batch, rows[rec].time.tokens_per_s, rows[rec].time.mfu * 100.0, why);
    sim_print_note(f, "# ", "#   ", line, WIDTH);
    const uly_timing *rt = &rows[rec].time;
    sim_fp8_note(f, w, &c->cluster, rt);
    sim_moe_note(f, &c->model, w, &rows[rec].layout, R->plan); /* output_moe.c: MoE models only */
    if (rt->zero_gather_s > 0) {
        const int64_t pf = uly_zero_prefetch_layers(w);
        char pfs[80];
        if (pf) snprintf(pfs, sizeof pfs, "prefetched %lld layer%s ahead, the step's first waits", (long long)pf, pf > 1 ? "s" : "");
        else snprintf(pfs, sizeof pfs, "no prefetch: each waits on the critical path");
        snprintf(line, sizeof line, "ZeRO-3 weight gathers: %.3g s per step per GPU, %.3g s of it exposed (%.0f%% hidden; %s)",
                 rt->zero_gather_s, rt->zero_gather_exposed_s,
                 100.0 * (1.0 - rt->zero_gather_exposed_s / rt->zero_gather_s), pfs);
        sim_print_note(f, "# ", "#   ", line, WIDTH);
    }

    return 1;
}

/* The recommendation's operations: one layer, one micro-batch, per rank;
 * returns 1 when a cell could not be stored. */
static int table_ops(const sim_ctx *c, const sim_plan_result *R, FILE *f)
{
    const sim_summary *rows = R->row;
    const int rec = R->rec;
    const uly_plan *plan = R->plan;
    const uly_result *pres = R->pres;
    char d[80];
    sim_degrees_words(&rows[rec].layout, d, sizeof d);
    int bad = 0;
    sim_table t;
    fprintf(f, "\n\n# operations of the recommendation, %s (%s): one layer, one micro-batch, per rank; per-step ops last\n",
            rows[rec].strategy->name, d);
    fprintf(f, "# overlap: exposed (on the critical path), hidden (under compute), partly; compute ops run on the critical path\n");
    /* GFLOP and TFLOPs (achieved: the op's FLOPs over its priced time) for
     * compute ops, what the kernels execute (recompute and attention's
     * backward included), so a slow op shows where the time goes. */
    static const char *const onames[] = {"id", "op", "phase", "per", "kind", "group", "MiB_sent", "link", "GFLOP",
                                         "TFLOPs", "time_ms", "exposed_ms", "overlap"};
    sim_table_init(&t, 13, onames, "rllllrrlrrrrl");
    for (int i = 0; i < plan->n_ops && i < ULY_PLAN_MAX_OPS; i++) {
        const uly_op *op = &plan->ops[i];
        double tm = pres->op_time_s[i], ex = pres->op_exposed_s[i];
        sim_table_row(&t);
        sim_table_cell(&t, "%d", (int)op->id);
        sim_table_cell(&t, "%s", uly_op_type_name(op->type));
        sim_table_cell(&t, "%s", op->recompute ? "recomp" : uly_phase_name(op->phase));
        sim_table_cell(&t, "%s", op->per_step ? "step" : op->per_model ? "model" : "layer");
        if (op->kind == ULY_OP_COMM) {
            sim_table_cell(&t, "%s", uly_coll_name(op->coll));
            sim_table_cell(&t, "%s%d", uly_group_name(op->group), (int)op->group_size);
            sim_table_cell(&t, "%.2f", (double)op->bytes_sent / 1048576.0);
            sim_table_cell(&t, "%s", sim_tiers_name(op->tiers));
            sim_table_cell(&t, "%s", "");
            sim_table_cell(&t, "%s", "");
        } else {
            sim_table_cell(&t, "%s", sim_op_kind_label(&c->w, op));
            sim_table_cell(&t, "%s", "");
            sim_table_cell(&t, "%s", "");
            sim_table_cell(&t, "%s", "");
            sim_table_cell(&t, "%.3f", op->flops / 1e9);
            if (tm > 0 && op->flops > 0) sim_table_cell(&t, "%.1f", op->flops / tm / 1e12);
            else sim_table_cell(&t, "%s", "");
        }
        sim_table_cell(&t, "%.3f", tm * 1e3);
        sim_table_cell(&t, "%.3f", ex * 1e3);
        const char *ov = "compute";
        if (op->kind == ULY_OP_COMM) {
            if (tm <= 0) ov = "-";
            else if (ex <= 1e-6 * tm) ov = "hidden";
            else if (ex >= tm * (1 - 1e-6)) ov = "exposed";
            else ov = "partly";
        }
        sim_table_cell(&t, "%s", ov);
    }
    bad |= sim_table_print(&t, f);
    sim_table_free(&t);
    char ms[5][32];
    const double ms_v[5] = {pres->time.layer_fwd_s, pres->time.layer_bwd_s, pres->time.compute_s,
                            pres->time.comm_exposed_s, pres->time.comm_overlapped_s};
    for (int k = 0; k < 5; k++) sim_fixed_str(ms_v[k] * 1e3, 3, 0, ms[k], sizeof ms[k]);
    fprintf(f, "# per layer: fwd %s ms, bwd %s ms (compute %s ms, comm exposed %s ms, hidden %s ms); per step: %lld micro-step(s), %.4g s\n",
            ms[0], ms[1], ms[2], ms[3], ms[4], (long long)pres->time.micro_steps, pres->time.step_s);
    return bad;
}

int sim_plan_write_table(const sim_ctx *c, const void *result, FILE *f)
{
    const sim_plan_result *R = result;
    table_head(c, R, f);
    int bad = table_rows(R, c->model.experts > 0, f);
    table_why_not(c, R, f);
    if (table_recommendation(c, R, f) && R->plan) bad |= table_ops(c, R, f);
    return bad ? SIM_EXIT_INTERNAL : SIM_EXIT_OK;
}

int sim_plan_write_csv(const sim_ctx *c, const void *result, FILE *f)
{
    const sim_plan_result *R = result;
    sim_table t;
    const int moe = c->model.experts > 0;
    if (moe) sim_table_init(&t, 28, csv_cols_moe, "llllllllllllllllllllllllllll");
    else sim_table_init(&t, 26, csv_cols, "llllllllllllllllllllllllll");
    for (int i = 0; i < R->nrows; i++) {
        const sim_summary *s = &R->row[i];
        char r[900];
        sim_table_row(&t);
        sim_table_cell(&t, "%s", s->strategy->name);
        sim_cell_layout(&t, &s->layout);
        if (moe) sim_cell_layout_moe(&t, &s->layout);
        sim_table_cell(&t, "%lld", (long long)s->gpus);
        sim_table_cell(&t, "%lld", (long long)s->seq);
        sim_table_cell(&t, "%lld", (long long)s->micro_batch);
        sim_table_cell(&t, "%d", sim_plan_usable(s));
        sim_table_cell(&t, "%s", sim_fit_tag(s));
        if (sim_has_numbers(s)) {
            sim_table_cell(&t, "%.17g", s->mem.total_bytes);
            sim_table_cell(&t, "%.17g", s->mem.capacity_bytes);
            sim_table_cell(&t, "%s", uly_mem_term_name((uly_mem_term)s->mem.largest));
            sim_table_cell(&t, "%lld", (long long)s->comm_fwd);
            sim_table_cell(&t, "%lld", (long long)s->comm_bwd);
            sim_table_cell(&t, "%lld", (long long)s->comm_recompute);
            sim_table_cell(&t, "%lld", (long long)s->zero_bytes);
            sim_table_cell(&t, "%s", sim_tiers_name(s->tiers));
            sim_table_cell(&t, "%.9g", s->time.step_s);
            if (sim_shows_throughput(s)) {
                sim_table_cell(&t, "%.9g", s->time.tokens_per_s);
                sim_table_cell(&t, "%.9g", s->time.tflops_per_gpu);
                sim_table_cell(&t, "%.9g", s->time.mfu);
                sim_table_cell(&t, "%.9g", s->time.hfu);
            } else {
                for (int k = 0; k < 4; k++) sim_table_cell(&t, "%s", "");
            }
        } else {
            for (int k = 0; k < 13; k++) sim_table_cell(&t, "%s", "");
        }
        sim_table_cell(&t, "%d", i == R->rec);
        sim_reasons_str(c, s, 0, r, sizeof r);
        if (!r[0] && s->note[0]) snprintf(r, sizeof r, "%s", s->note);
        sim_table_cell(&t, "%s", r);
    }
    int bad = sim_table_print_csv(&t, f);
    sim_table_free(&t);
    return bad ? SIM_EXIT_INTERNAL : SIM_EXIT_OK;
}

int sim_plan_write_json(const sim_ctx *c, const void *result, FILE *f)
{
    const sim_plan_result *R = result;
    const sim_summary *rows = R->row, *pure = R->pure;
    const int nrows = R->nrows, rec = R->rec;
    const char *why = R->why, *note = R->note;
    const uly_plan *plan = R->plan;
    const uly_result *pres = R->pres;
    int bad = 0;
    cJSON *root = cJSON_CreateObject();
    bad |= sim_json_add(root, "command", cJSON_CreateString("plan"));
    cJSON *cfg = sim_json_config(c, "plan");
    if (cfg) bad |= sim_json_add(cfg, "gpus", sim_json_int(rows[0].gpus));
    bad |= sim_json_add(root, "config", cfg);
    bad |= sim_json_add(root, "flop_convention", cJSON_CreateString(sim_flop_convention));
    cJSON *plans = cJSON_CreateArray();
    for (int i = 0; i < nrows; i++) bad |= sim_json_add(plans, NULL, sim_json_plan(c, &rows[i]));
    bad |= sim_json_add(root, "plans", plans);
    bad |= sim_json_recommended(root, rows, rec);
    bad |= sim_json_add(root, "why", rec >= 0 ? cJSON_CreateString(why) : cJSON_CreateNull());
    cJSON *notes = cJSON_CreateArray();
    if (note[0]) bad |= sim_json_add(notes, NULL, cJSON_CreateString(note));
    bad |= sim_json_add(root, "notes", notes);
    if (pure) {
        cJSON *pj = sim_json_plan(c, pure);
        if (pj) bad |= sim_json_add(pj, "note", cJSON_CreateString(note));
        bad |= sim_json_add(root, "pure_ulysses", pj);
    }
    if (plan && rec >= 0) {
        cJSON *ops = cJSON_CreateObject();
        bad |= sim_json_add(ops, "plan", sim_json_int(rec));
        bad |= sim_json_add(ops, "ops", sim_json_ops(plan, pres));
        sim_moe_json_ops(ops, &c->model, plan); /* output_moe.c: MoE models only */
        bad |= sim_json_add(root, "operations", ops);
    } else {
        bad |= sim_json_add(root, "operations", cJSON_CreateNull());
    }
    return sim_json_emit(root, bad, f);
}

