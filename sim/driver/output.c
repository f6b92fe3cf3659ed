/* output.c: tables, CSV and JSON for the ulysim subcommands. */
#include "output.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------------- tables */

void sim_table_init(sim_table *t, int ncols, const char *const *names, const char *align)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->names = names;
    t->align = align;
    t->col = ncols; /* no open row */
}

void sim_table_row(sim_table *t)
{
    if (t->oom) return;
    /* pad an unfinished previous row */
    while (t->rows > 0 && t->col < t->ncols) sim_table_cell(t, "%s", "");
    if (t->rows == t->cap) {
        int cap = t->cap ? t->cap * 2 : 16;
        char **cells = realloc(t->cells, (size_t)cap * (size_t)t->ncols * sizeof *cells);
        if (!cells) { t->oom = 1; return; }
        t->cells = cells;
        t->cap = cap;
    }
    for (int i = 0; i < t->ncols; i++) t->cells[(size_t)t->rows * (size_t)t->ncols + (size_t)i] = NULL;
    t->rows++;
    t->col = 0;
}

void sim_table_cell(sim_table *t, const char *fmt, ...)
{
    if (t->oom || t->rows == 0 || t->col >= t->ncols) return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *s = malloc(strlen(buf) + 1);
    if (!s) { t->oom = 1; return; }
    strcpy(s, buf);
    t->cells[(size_t)(t->rows - 1) * (size_t)t->ncols + (size_t)t->col++] = s;
}

static const char *cell(const sim_table *t, int r, int c)
{
    const char *s = t->cells[(size_t)r * (size_t)t->ncols + (size_t)c];
    return s ? s : "";
}

int sim_table_print(const sim_table *t, FILE *f)
{
    if (t->oom) return 1;
    size_t w[64];
    int nc = t->ncols < 64 ? t->ncols : 64;
    for (int c = 0; c < nc; c++) {
        w[c] = strlen(t->names[c]);
        for (int r = 0; r < t->rows; r++) {
            size_t l = strlen(cell(t, r, c));
            if (l == 0) l = 1;
            if (l > w[c]) w[c] = l;
        }
    }
    fputs("#", f);
    for (int c = 0; c < nc; c++) {
        int last = c == nc - 1;
        if (t->align[c] == 'r') fprintf(f, " %*s", (int)w[c], t->names[c]);
        else fprintf(f, " %-*s", last ? 0 : (int)w[c], t->names[c]);
        if (!last) fputs(" ", f);
    }
    fputs("\n", f);
    for (int r = 0; r < t->rows; r++) {
        fputs(" ", f);
        for (int c = 0; c < nc; c++) {
            const char *s = cell(t, r, c);
            if (!s[0]) s = "-";
            int last = c == nc - 1;
            if (t->align[c] == 'r') fprintf(f, " %*s", (int)w[c], s);
            else fprintf(f, " %-*s", last ? 0 : (int)w[c], s);
            if (!last) fputs(" ", f);
        }
        fputs("\n", f);
        if (r + 1 < t->rows) {
            if (t->block_every > 0 && (r + 1) % t->block_every == 0) fputs("\n\n", f);
            else if (t->gap_every > 0 && (r + 1) % t->gap_every == 0) fputs("\n", f);
        }
    }
    return ferror(f) ? 1 : 0;
}

static void csv_field(FILE *f, const char *s)
{
    int quote = s[0] == ' ' || (s[0] && s[strlen(s) - 1] == ' ') || strpbrk(s, ",\"\n\r") != NULL;
    if (!quote) { fputs(s, f); return; }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

int sim_table_print_csv(const sim_table *t, FILE *f)
{
    if (t->oom) return 1;
    for (int c = 0; c < t->ncols; c++) {
        if (c) fputc(',', f);
        csv_field(f, t->names[c]);
    }
    fputc('\n', f);
    for (int r = 0; r < t->rows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            if (c) fputc(',', f);
            csv_field(f, cell(t, r, c));
        }
        fputc('\n', f);
    }
    return ferror(f) ? 1 : 0;
}

void sim_table_free(sim_table *t)
{
    for (size_t i = 0; i < (size_t)t->rows * (size_t)t->ncols; i++) free(t->cells[i]);
    free(t->cells);
    t->cells = NULL;
    t->rows = t->cap = 0;
}

/* ------------------------------------------------------------- formatting */

const char *sim_tiers_name(int tiers)
{
    switch (tiers & (ULY_TIER_INTRA | ULY_TIER_INTER)) {
    case ULY_TIER_INTRA: return "intra";
    case ULY_TIER_INTER: return "inter";
    case ULY_TIER_INTRA | ULY_TIER_INTER: return "intra+inter";
    default: return "none";
    }
}

const char *sim_strategy_name(int id)
{
    const uly_strategy *s = uly_strategy_get((uly_strategy_id)id);
    return s && s->name ? s->name : "?";
}

void sim_workload_str(const uly_workload *w, char *buf, size_t n)
{
    char gb[64];
    if (w->global_batch) snprintf(gb, sizeof gb, "global batch %lld", (long long)w->global_batch);
    else snprintf(gb, sizeof gb, "global batch micro-batch x dp");
    uly_state_bytes sb;
    uly_state_bytes_get(w, &sb);
    int k = snprintf(buf, n, "micro-batch %lld, %s, %s, %s, %s, recompute %s, ZeRO-%d, %s split; %s model states "
                     "(%g + %g + %g bytes per parameter)",
                     (long long)w->micro_batch, gb, uly_dtype_name(w->dtype), w->causal ? "causal" : "non-causal",
                     w->flash ? "flash attention" : "materialised scores", uly_recompute_name(w->recompute),
                     w->zero_stage, uly_split_name(w->split),
                     uly_framework_name(w->framework), sb.weights_whole + sb.weights_shard,
                     sb.grads_whole + sb.grads_shard, sb.optim_whole + sb.optim_shard);
    /* what departs from the defaults, said only when it does */
    if (k > 0 && (size_t)k < n && w->recompute == ULY_RECOMPUTE_SELECTIVE && w->flash)
        k += snprintf(buf + k, n - (size_t)k, "; selective recompute is the same as none here: it re-creates the attention "
                      "scores, which flash attention never saves (Korthikanti et al. 2022)");
    if (k > 0 && (size_t)k < n && w->attn_kernel != ULY_AK_FLASH2 && w->flash)
        k += snprintf(buf + k, n - (size_t)k, "; attention kernel %s", uly_attn_kernel_name(w->attn_kernel));
    if (k > 0 && (size_t)k < n && uly_attn_density(w) < 1)
        k += snprintf(buf + k, n - (size_t)k, "; block-sparse attention, density %g", uly_attn_density(w));
    if (k > 0 && (size_t)k < n && w->ffn_chunks > 1)
        k += snprintf(buf + k, n - (size_t)k, "; FFN in %lld chunks", (long long)w->ffn_chunks);
    if (k > 0 && (size_t)k < n && w->loss_chunks > 1)
        k += snprintf(buf + k, n - (size_t)k, "; loss in %lld chunks", (long long)w->loss_chunks);
    if (k > 0 && (size_t)k < n && w->zero_stage >= 3 && w->zero_prefetch < 0)
        k += snprintf(buf + k, n - (size_t)k, "; no ZeRO-3 prefetch");
    else if (k > 0 && (size_t)k < n && w->zero_stage >= 3 && w->zero_prefetch)
        k += snprintf(buf + k, n - (size_t)k, "; ZeRO-3 prefetch %lld layer%s", (long long)uly_zero_prefetch_layers(w),
                      sim_plural_s(uly_zero_prefetch_layers(w)));
    if (k > 0 && (size_t)k < n && w->tp_comm_overlap)
        k += snprintf(buf + k, n - (size_t)k, "; TP communication overlapped with its GEMMs");
    if (k > 0 && (size_t)k < n && w->zero_stage >= 3) /* which schedule priced the gathers (uly_zero_gather_msgs) */
        k += snprintf(buf + k, n - (size_t)k, "; ZeRO-3 gathers as %s sends them, %s", uly_framework_name(w->framework),
                      w->framework == ULY_FW_DEEPSPEED ? "a weight matrix at a time" : "a layer at once");
    if (k > 0 && (size_t)k < n && w->overlap_param_gather)
        k += snprintf(buf + k, n - (size_t)k, "; weight gather under the next step's forward");
    if (k > 0 && (size_t)k < n && w->cuda_graphs)
        k += snprintf(buf + k, n - (size_t)k, "; CUDA graphs");
    if (k > 0 && (size_t)k < n && w->step_overhead_s > 0)
        k += snprintf(buf + k, n - (size_t)k, "; host work %g ms per step", w->step_overhead_s * 1e3);
    if (k > 0 && (size_t)k < n && w->overlap_grad_reduce)
        snprintf(buf + k, n - (size_t)k, "; gradient reduction %s backward",
                 uly_grad_reduce_overlaps(w) ? "overlapped with" : "after");
}

/* The degrees above 1 of a layout, each after its prefix, joined by sep;
 * none when every degree is 1. */
static void degrees_join(const uly_layout *l, const char *const prefix[6], const char *sep, const char *none,
                         char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = 0;
    const int64_t v[6] = {l->tp, l->ulysses, l->ring, l->dp, l->pp, l->pp > 1 ? l->vpp : 1};
    for (size_t i = 0; i < 6; i++) {
        if (v[i] <= 1) continue;
        int k = snprintf(buf + o, n - o, "%s%s%lld", o ? sep : "", prefix[i], (long long)v[i]);
        if (k < 0 || (size_t)k >= n - o) break;
        o += (size_t)k;
    }
    if (!o) snprintf(buf, n, "%s", none);
}

void sim_degrees_str(const uly_layout *l, char *buf, size_t n)
{
    static const char *const prefix[6] = {"tp", "u", "r", "dp", "pp", "vpp"};
    degrees_join(l, prefix, ".", "dp1", buf, n);
}

void sim_degrees_words(const uly_layout *l, char *buf, size_t n)
{
    static const char *const prefix[6] = {"tp=", "u=", "r=", "dp=", "pp=", "vpp="};
    degrees_join(l, prefix, " x ", "one GPU", buf, n);
}

void sim_reasons_str(const sim_ctx *c, const sim_summary *s, int fatal_only, char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = 0;
    int any_fatal = 0;
    for (int i = 0; i < s->n_reasons && i < ULY_MAX_REASONS; i++) any_fatal |= s->reasons[i].fatal;
    if (s->status == SIM_ROW_OVERFLOW) {
        snprintf(buf, n, "sizes overflow 63 bits");
        return;
    }
    for (int i = 0; i < s->n_reasons && i < ULY_MAX_REASONS; i++) {
        if (fatal_only && any_fatal && !s->reasons[i].fatal) continue;
        char one[256];
        uly_reason_format(&s->reasons[i], &c->model, one, sizeof one);
        int k = snprintf(buf + o, n - o, "%s%s", o ? "; " : "", one);
        if (k < 0 || (size_t)k >= n - o) break;
        o += (size_t)k;
    }
    if (s->hint[0] && o < n) snprintf(buf + o, n - o, "%s%s", o ? "; " : "", s->hint);
}

int sim_has_numbers(const sim_summary *s)
{
    return s->status == SIM_ROW_OK && s->time.step_s > 0;
}

int sim_is_plain_dp(const uly_layout *l) { return l->tp <= 1 && l->ulysses <= 1 && l->ring <= 1; }

const char *sim_plain_dp_words(const uly_layout *l)
{
    return l->pp > 1 ? "pipeline and data parallelism" : "plain data parallelism";
}

const char *sim_plural_s(long long n) { return n == 1 ? "" : "s"; }

int sim_shows_throughput(const sim_summary *s) { return sim_has_numbers(s) && s->feasible; }

const char *sim_fit_tag(const sim_summary *s)
{
    if (s->status == SIM_ROW_OVERFLOW) return "no:overflow";
    if (s->feasible && s->status == SIM_ROW_OK) return "yes";
    for (int i = 0; i < s->n_reasons && i < ULY_MAX_REASONS; i++) {
        if (!s->reasons[i].fatal) continue;
        switch (s->reasons[i].code) {
        case ULY_R_OUT_OF_MEMORY: return "no:memory";
        case ULY_R_HEADS_NOT_DIVISIBLE:
        case ULY_R_DEGREE_GT_HEADS:
        case ULY_R_UNEVEN_HEADS: return "no:heads";
        case ULY_R_SEQ_NOT_DIVISIBLE: return "no:seq";
        case ULY_R_GPUS_MISMATCH:
        case ULY_R_GPUS_NOT_NODE_MULTIPLE:
        case ULY_R_GPUS_EXCEED_CLUSTER: return "no:gpus";
        case ULY_R_BATCH_NOT_DIVISIBLE: return "no:batch";
        case ULY_R_PP_LAYERS: return "no:pp";
        default: return "no";
        }
    }
    return "no";
}

void sim_print_note(FILE *f, const char *first, const char *cont, const char *text, int width)
{
    const char *prefix = first;
    const char *p = text;
    while (*p == ' ') p++;
    do {
        int room = width - (int)strlen(prefix);
        if (room < 20) room = 20;
        size_t len = strlen(p), take = len;
        if ((int)len > room) {
            take = (size_t)room;
            while (take > 0 && p[take] != ' ') take--;
            if (take == 0) { /* one long word */
                take = (size_t)room;
                while (p[take] && p[take] != ' ') take++;
            }
        }
        fprintf(f, "%s%.*s\n", prefix, (int)take, p);
        p += take;
        while (*p == ' ') p++;
        prefix = cont;
    } while (*p);
}

void sim_size_str(int64_t v, char *buf, size_t n)
{
    /* the suffixes --seq reads, T included, so 1T prints as it was typed */
    if (v > 0 && v % (1LL << 40) == 0) snprintf(buf, n, "%lldT", (long long)(v >> 40));
    else if (v > 0 && v % (1LL << 30) == 0) snprintf(buf, n, "%lldG", (long long)(v >> 30));
    else if (v > 0 && v % (1LL << 20) == 0) snprintf(buf, n, "%lldM", (long long)(v >> 20));
    else if (v > 0 && v % (1LL << 10) == 0) snprintf(buf, n, "%lldK", (long long)(v >> 10));
    else snprintf(buf, n, "%lld", (long long)v);
}

void sim_cell_seconds(sim_table *t, double s)
{
    sim_table_cell(t, s >= 1000 && s < 1e9 ? "%.0f" : "%.4g", s);
}

void sim_cell_gib(sim_table *t, double bytes)
{
    const double g = bytes / 1073741824.0;
    sim_table_cell(t, g < 1e6 ? "%.2f" : "%.4g", g);
}

const char *sim_fixed_str(double v, int decimals, int sign, char *buf, size_t n)
{
    if (fabs(v) < 1e6 || !isfinite(v)) snprintf(buf, n, sign ? "%+.*f" : "%.*f", decimals, v);
    else snprintf(buf, n, sign ? "%+.*e" : "%.*e", decimals > 0 ? decimals : 1, v);
    return buf;
}

void sim_size_approx(int64_t v, char *buf, size_t n)
{
    const int64_t K = 1024, M = K * K, G = M * K;
    if (v >= G && v % G) snprintf(buf, n, "%.2fG", (double)v / (double)G);
    else if (v >= M && v < G && v % M) snprintf(buf, n, "%.2fM", (double)v / (double)M);
    else if (v >= K && v < M && v % K) snprintf(buf, n, "%.1fK", (double)v / (double)K);
    else sim_size_str(v, buf, n);
}

/* ------------------------------------------------------------------- rows */

void sim_cell_layout(sim_table *t, const uly_layout *l)
{
    sim_table_cell(t, "%lld", (long long)l->ulysses);
    sim_table_cell(t, "%lld", (long long)l->ring);
    sim_table_cell(t, "%lld", (long long)l->tp);
    sim_table_cell(t, "%lld", (long long)l->dp);
    sim_table_cell(t, "%lld", (long long)(l->pp > 0 ? l->pp : 1));
}

/* The columns of the rows of kind (bit 1 << kind), the table's name and
 * CSV's (NULL: the column is the table's only); some only in CSV. */
enum { ROWS_ALL = 7, ROWS_CSV_ONLY = 8, ROWS_IF_BEST = 16 };
static const struct rows_col {
    const char *table, *csv;
    char align;
    unsigned when;
} rows_cols[] = {
    {"strategy", "strategy", 'l', ROWS_ALL},
    {"seq_tokens", "seq", 'r', 1 << SIM_ROWS_SWEEP},
    {"gpus", "gpus", 'r', 1 << SIM_ROWS_SWEEP},
    {"max_seq_tokens", "max_seq", 'r', 1 << SIM_ROWS_MAXSEQ},
    {"max_seq", NULL, 'r', 1 << SIM_ROWS_MAXSEQ},
    {"gpus", "gpus", 'r', 1 << SIM_ROWS_MAXSEQ},
    {"seq", "seq", 'r', 1 << SIM_ROWS_MINGPUS},
    {"min_gpus", "min_gpus", 'r', 1 << SIM_ROWS_MINGPUS},
    {"u", "ulysses", 'r', ROWS_ALL},
    {"r", "ring", 'r', ROWS_ALL},
    {"tp", "tp", 'r', ROWS_ALL},
    {"dp", "dp", 'r', ROWS_ALL},
    {"pp", "pp", 'r', ROWS_ALL},
    {"mb", "micro_batch", 'r', ROWS_ALL},
    {NULL, "feasible", 'l', ROWS_ALL | ROWS_CSV_ONLY},
    {"fits", "fits", 'l', ROWS_ALL},
    {"mem_GiB", "mem_bytes", 'r', ROWS_ALL},
    {"mem_largest", "mem_largest", 'l', ROWS_ALL},
    {"fwd_MiB", "comm_fwd_bytes", 'r', ROWS_ALL},
    {"bwd_MiB", "comm_bwd_bytes", 'r', ROWS_ALL},
    {"link", "link", 'l', ROWS_ALL},
    {"step_s", "step_s", 'r', ROWS_ALL},
    {"tokens_per_s", "tokens_per_s", 'r', ROWS_ALL},
    {"TFLOPs_gpu", "tflops_per_gpu", 'r', ROWS_ALL},
    {"mfu_pct", "mfu", 'r', ROWS_ALL},
    {"best", "best", 'r', ROWS_ALL | ROWS_IF_BEST},
    {NULL, "reasons", 'l', ROWS_ALL | ROWS_CSV_ONLY},
};

static int rows_columns(int csv, sim_rows_kind kind, int best, const char **names, char *align)
{
    int nc = 0;
    for (size_t k = 0; k < sizeof rows_cols / sizeof rows_cols[0]; k++) {
        const struct rows_col *col = &rows_cols[k];
        const char *name = csv ? col->csv : col->table;
        if (!(col->when & (1u << kind)) || !name || ((col->when & ROWS_IF_BEST) && !best)) continue;
        names[nc] = name;
        align[nc++] = col->align;
    }
    align[nc] = 0;
    return nc;
}

/* One row's cells; best: its flag, or NULL. */
static void rows_cells(sim_table *t, const sim_ctx *c, const sim_summary *s, sim_rows_kind kind, int csv,
                       const unsigned char *best)
{
    const uly_layout *l = &s->layout;
    int found = kind == SIM_ROWS_SWEEP || s->value > 0;
    int have = sim_has_numbers(s) && found;
    char b[64];
    sim_table_row(t);
    sim_table_cell(t, "%s", s->strategy->name);
    if (kind == SIM_ROWS_SWEEP) {
        sim_table_cell(t, "%lld", (long long)s->seq);
        sim_table_cell(t, "%lld", (long long)s->gpus);
    } else if (kind == SIM_ROWS_MAXSEQ) {
        if (s->value > 0) sim_table_cell(t, "%lld", (long long)s->value);
        else sim_table_cell(t, "%s", "");
        if (!csv) {
            sim_size_approx(s->value, b, sizeof b);
            sim_table_cell(t, "%s", s->value > 0 ? b : "");
        }
        sim_table_cell(t, "%lld", (long long)s->gpus);
    } else {
        sim_table_cell(t, "%lld", (long long)s->seq);
        if (s->value > 0) sim_table_cell(t, "%lld", (long long)s->value);
        else sim_table_cell(t, "%s", "");
    }
    if (found && s->status != SIM_ROW_OVERFLOW && s->layout.dp > 0) {
        sim_cell_layout(t, l);
    } else {
        for (int k = 0; k < 5; k++) sim_table_cell(t, "%s", "");
    }
    if (have) sim_table_cell(t, "%lld", (long long)s->micro_batch);
    else sim_table_cell(t, "%s", "");
    int feasible = have && s->feasible;
    if (csv) sim_table_cell(t, "%d", feasible);
    sim_table_cell(t, "%s", kind != SIM_ROWS_SWEEP && !found ? "no" : sim_fit_tag(s));
    if (have) {
        /* whole bytes below 1e17 (%.17g), exponent form above */
        if (csv) sim_table_cell(t, "%.17g", s->mem.total_bytes);
        else sim_cell_gib(t, s->mem.total_bytes);
        sim_table_cell(t, "%s", uly_mem_term_name((uly_mem_term)s->mem.largest));
        if (csv) {
            sim_table_cell(t, "%lld", (long long)s->comm_fwd);
            sim_table_cell(t, "%lld", (long long)s->comm_bwd);
        } else {
            sim_table_cell(t, "%.1f", (double)s->comm_fwd / 1048576.0);
            sim_table_cell(t, "%.1f", (double)s->comm_bwd / 1048576.0);
        }
        sim_table_cell(t, "%s", sim_tiers_name(s->tiers));
        if (csv) sim_table_cell(t, "%.9g", s->time.step_s);
        else sim_cell_seconds(t, s->time.step_s);
        if (sim_shows_throughput(s)) {
            sim_table_cell(t, csv ? "%.9g" : "%.0f", s->time.tokens_per_s);
            sim_table_cell(t, csv ? "%.9g" : "%.1f", s->time.tflops_per_gpu);
            sim_table_cell(t, csv ? "%.9g" : "%.1f", csv ? s->time.mfu : s->time.mfu * 100.0);
        } else {
            for (int k = 0; k < 3; k++) sim_table_cell(t, "%s", "");
        }
    } else {
        for (int k = 0; k < 9; k++) sim_table_cell(t, "%s", "");
    }
    if (best) sim_table_cell(t, "%d", *best ? 1 : 0);
    if (csv) {
        char r[900];
        sim_reasons_str(c, s, 0, r, sizeof r);
        if (!r[0] && s->note[0]) snprintf(r, sizeof r, "%s", s->note);
        sim_table_cell(t, "%s", r);
    }
}

int sim_print_rows(const sim_ctx *c, const sim_summary *rows, size_t n, sim_rows_kind kind, const unsigned char *best,
                   int gap_every, int block_every, FILE *f)
{
    const int csv = c->a->format == SIM_FMT_CSV;
    const char *names[sizeof rows_cols / sizeof rows_cols[0]];
    char align[sizeof rows_cols / sizeof rows_cols[0] + 1];
    const int nc = rows_columns(csv, kind, best != NULL, names, align);
    sim_table t;
    sim_table_init(&t, nc, names, align);
    t.gap_every = gap_every;
    t.block_every = block_every;
    for (size_t i = 0; i < n; i++) rows_cells(&t, c, &rows[i], kind, csv, best ? &best[i] : NULL);
    int bad = csv ? sim_table_print_csv(&t, f) : sim_table_print(&t, f);
    sim_table_free(&t);
    return bad;
}

/* ------------------------------------------------------------------- JSON */

const char sim_flop_convention[] =
    "model FLOPs: forward plus 2x forward for backward, no recompute, causal attention halved; "
    "hardware FLOPs add recompute and the attention kernel's 2.5x backward; "
    "tflops_per_gpu and mfu use model FLOPs, hfu hardware FLOPs, over the step time and the dense peak of the dtype";

cJSON *sim_json_int(int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    return cJSON_CreateRaw(buf);
}

cJSON *sim_json_num(double v)
{
    if (!isfinite(v)) return cJSON_CreateNull();
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        char buf[32];
        snprintf(buf, sizeof buf, "%.0f", v == 0 ? 0.0 : v);
        return cJSON_CreateRaw(buf);
    }
    return cJSON_CreateNumber(v);
}

int sim_json_add(cJSON *obj, const char *key, cJSON *item)
{
    if (!obj || !item) {
        cJSON_Delete(item);
        return 1;
    }
    if (cJSON_IsArray(obj)) cJSON_AddItemToArray(obj, item);
    else cJSON_AddItemToObject(obj, key, item);
    return 0;
}

#define ADD(o, k, v) (bad |= sim_json_add((o), (k), (v)))

static const char *dtype_str(uly_dtype t)
{
    const char *s = uly_dtype_name(t);
    return s ? s : "?";
}

cJSON *sim_json_config(const sim_ctx *c, const char *command)
{
    int bad = 0;
    const sim_args *a = c->a;
    const uly_model *m = &c->model;
    const uly_cluster *cl = &c->cluster;
    const uly_workload *w = &c->w;
    cJSON *cfg = cJSON_CreateObject();
    ADD(cfg, "command", cJSON_CreateString(command));

    cJSON *mo = cJSON_CreateObject();
    ADD(mo, "name", cJSON_CreateString(m->name));
    ADD(mo, "source", cJSON_CreateString(a->model));
    ADD(mo, "layers", sim_json_int(m->layers));
    ADD(mo, "hidden", sim_json_int(m->hidden));
    ADD(mo, "heads", sim_json_int(m->heads));
    ADD(mo, "kv_heads", sim_json_int(m->kv_heads));
    ADD(mo, "head_dim", sim_json_int(m->head_dim));
    ADD(mo, "ffn_hidden", sim_json_int(m->ffn_hidden));
    ADD(mo, "vocab", sim_json_int(m->vocab));
    ADD(mo, "swiglu", cJSON_CreateBool(m->swiglu));
    ADD(mo, "tied_embeddings", cJSON_CreateBool(m->tied_embeddings));
    ADD(mo, "dropout", cJSON_CreateBool(m->dropout));
    ADD(mo, "embed_norm", cJSON_CreateBool(m->embed_norm));
    ADD(mo, "params", sim_json_num(uly_model_params(m)));
    ADD(cfg, "model", mo);

    cJSON *co = cJSON_CreateObject();
    ADD(co, "name", cJSON_CreateString(cl->name));
    ADD(co, "source", cJSON_CreateString(a->cluster));
    ADD(co, "gpu", cJSON_CreateString(cl->gpu.name));
    ADD(co, "nodes", sim_json_int(cl->nodes));
    ADD(co, "gpus_per_node", sim_json_int(cl->gpus_per_node));
    ADD(co, "peak_flops", sim_json_num(cl->gpu.peak_flops[w->dtype]));
    ADD(co, "hbm_bytes", sim_json_num(cl->gpu.hbm_bytes));
    ADD(co, "intra_bw_Bps", sim_json_num(cl->intra_bw_Bps));
    ADD(co, "nic_bw_Bps", sim_json_num(cl->nic_bw_Bps));
    ADD(co, "topology", cJSON_CreateString(uly_topo_name(cl->topo) ? uly_topo_name(cl->topo) : "?"));
    /* --gpus beyond the preset's nodes grew the cluster: said, not hidden in "nodes" */
    char grown[200];
    ADD(co, "preset_nodes", c->preset_nodes ? sim_json_int(c->preset_nodes) : cJSON_CreateNull());
    ADD(co, "grown", c->preset_nodes ? cJSON_CreateString(sim_cluster_grown(c, grown, sizeof grown)) : cJSON_CreateNull());
    ADD(cfg, "cluster", co);

    cJSON *wo = cJSON_CreateObject();
    if (a->cmd != SIM_CMD_SWEEP && a->cmd != SIM_CMD_MAXSEQ) ADD(wo, "seq", sim_json_int(w->seq));
    ADD(wo, "micro_batch", sim_json_int(w->micro_batch));
    ADD(wo, "global_batch", w->global_batch ? sim_json_int(w->global_batch) : cJSON_CreateNull());
    ADD(wo, "dtype", cJSON_CreateString(dtype_str(w->dtype)));
    ADD(wo, "causal", cJSON_CreateBool(w->causal));
    ADD(wo, "flash", cJSON_CreateBool(w->flash));
    ADD(wo, "recompute", cJSON_CreateString(uly_recompute_name(w->recompute)));
    ADD(wo, "zero_stage", sim_json_int(w->zero_stage));
    ADD(wo, "split", cJSON_CreateString(uly_split_name(w->split)));
    ADD(wo, "framework", cJSON_CreateString(uly_framework_name(w->framework)));
    ADD(wo, "attn_density", sim_json_num(uly_attn_density(w)));
    ADD(wo, "ffn_chunks", sim_json_int(w->ffn_chunks > 1 ? w->ffn_chunks : 1));
    ADD(wo, "loss_chunks", sim_json_int(w->loss_chunks > 1 ? w->loss_chunks : 1));
    ADD(wo, "tp_comm_overlap", cJSON_CreateBool(w->tp_comm_overlap));
    ADD(wo, "overlap_grad_reduce", cJSON_CreateBool(uly_grad_reduce_overlaps(w)));
    ADD(wo, "zero_prefetch", sim_json_int(uly_zero_prefetch_layers(w)));
    ADD(wo, "attn_kernel", cJSON_CreateString(uly_attn_kernel_name(w->attn_kernel)));
    ADD(wo, "overlap_param_gather", cJSON_CreateBool(w->overlap_param_gather));
    ADD(wo, "cuda_graphs", cJSON_CreateBool(w->cuda_graphs));
    ADD(wo, "step_overhead_s", sim_json_num(w->step_overhead_s));
    ADD(cfg, "workload", wo);

    cJSON *st = cJSON_CreateArray();
    for (int i = 0; i < c->n_strat; i++) ADD(st, NULL, cJSON_CreateString(sim_strategy_name(c->strat[i])));
    ADD(cfg, "strategies", st);
    cJSON *pin = cJSON_CreateObject();
    ADD(pin, "ulysses", a->pin_u ? sim_json_int(a->pin_u) : cJSON_CreateNull());
    ADD(pin, "ring", a->pin_r ? sim_json_int(a->pin_r) : cJSON_CreateNull());
    ADD(pin, "tp", a->pin_t ? sim_json_int(a->pin_t) : cJSON_CreateNull());
    ADD(pin, "pp", a->pin_pp == ULY_PP_SEARCH ? cJSON_CreateNull() : sim_json_int(a->pin_pp > 1 ? a->pin_pp : 1));
    ADD(cfg, "pinned", pin);
    cJSON *so = cJSON_CreateObject();
    ADD(so, "both_placements", cJSON_CreateBool(c->opts.both_placements));
    ADD(so, "search_micro_batch", cJSON_CreateBool(c->opts.search_micro_batch));
    ADD(cfg, "search", so);
    if (bad) {
        cJSON_Delete(cfg);
        return NULL;
    }
    return cfg;
}

static cJSON *tiers_json(int tiers)
{
    cJSON *a = cJSON_CreateArray();
    if (tiers & ULY_TIER_INTRA) sim_json_add(a, NULL, cJSON_CreateString("intra"));
    if (tiers & ULY_TIER_INTER) sim_json_add(a, NULL, cJSON_CreateString("inter"));
    return a;
}

/* A plan's status, read alone: "ok" only for a plan that was priced and
 * fits; "does-not-fit" for one priced that does not (memory or a fatal
 * reason, in "reasons"), so that a script reading "status" alone never
 * takes a plan that cannot run for one that can. */
static const char *status_name(const sim_summary *s)
{
    switch (s->status) {
    case SIM_ROW_OK: return s->feasible ? "ok" : "does-not-fit";
    case SIM_ROW_NOLAYOUT: return "no-valid-layout";
    case SIM_ROW_OVERFLOW: return "overflow";
    default: return "error";
    }
}

const char *sim_cluster_grown(const sim_ctx *c, char *buf, size_t n)
{
    const int64_t gpus = c->cluster.nodes * c->cluster.gpus_per_node;
    if (c->preset_nodes)
        snprintf(buf, n, "the preset has %lld node%s; nodes of the same kind were added for %lld GPUs",
                 (long long)c->preset_nodes, sim_plural_s(c->preset_nodes), (long long)gpus);
    else if (n)
        buf[0] = 0;
    return buf;
}

int sim_json_recommended(cJSON *root, const sim_summary *rows, int rec)
{
    int bad = sim_json_add(root, "recommended", rec >= 0 ? sim_json_int(rec) : cJSON_CreateNull());
    return bad | sim_json_add(root, "recommended_strategy",
                              rec >= 0 ? cJSON_CreateString(rows[rec].strategy->name) : cJSON_CreateNull());
}

cJSON *sim_json_plan(const sim_ctx *c, const sim_summary *s)
{
    int bad = 0;
    const uly_layout *l = &s->layout;
    cJSON *p = cJSON_CreateObject();
    ADD(p, "strategy", cJSON_CreateString(s->strategy->name));
    cJSON *d = cJSON_CreateObject();
    ADD(d, "ulysses", sim_json_int(l->ulysses));
    ADD(d, "ring", sim_json_int(l->ring));
    ADD(d, "tp", sim_json_int(l->tp));
    ADD(d, "dp", sim_json_int(l->dp));
    ADD(d, "pp", sim_json_int(l->pp ? l->pp : 1));
    ADD(d, "vpp", sim_json_int(l->pp > 1 && l->vpp > 1 ? l->vpp : 1));
    ADD(p, "degrees", d);
    cJSON *pl = cJSON_CreateArray();
    for (int i = 0; i < 4; i++)
        if (l->order[i] != ULY_GROUP_NONE) ADD(pl, NULL, cJSON_CreateString(uly_group_name(l->order[i])));
    ADD(p, "placement", pl);
    ADD(p, "gpus", sim_json_int(s->gpus));
    ADD(p, "seq", sim_json_int(s->seq));
    ADD(p, "feasible", cJSON_CreateBool(s->feasible && s->status == SIM_ROW_OK));
    ADD(p, "status", cJSON_CreateString(status_name(s)));
    cJSON *rs = cJSON_CreateArray();
    if (s->status == SIM_ROW_NOLAYOUT)
        ADD(rs, NULL, cJSON_CreateString("no layout of this strategy has valid shapes; reasons of the layout shown"));
    if (s->status == SIM_ROW_OVERFLOW) ADD(rs, NULL, cJSON_CreateString("sizes overflow 63 bits"));
    if (s->hint[0]) ADD(rs, NULL, cJSON_CreateString(s->hint));
    for (int i = 0; i < s->n_reasons && i < ULY_MAX_REASONS; i++) {
        char one[256];
        uly_reason_format(&s->reasons[i], &c->model, one, sizeof one);
        ADD(rs, NULL, cJSON_CreateString(one));
    }
    ADD(p, "reasons", rs);

    /* a plan refused on its shapes (or whose sizes overflow) was never
     * priced: its memory, traffic and times are unknown, null here as the
     * table's "-" and the CSV's empty cells, not 0, which a script taking
     * the smallest memory or step time would pick */
    const int priced = sim_has_numbers(s);
#define NUM(v) (priced ? sim_json_num(v) : cJSON_CreateNull())
#define INT(v) (priced ? sim_json_int(v) : cJSON_CreateNull())
    cJSON *mem = cJSON_CreateObject();
    ADD(mem, "total_bytes", NUM(s->mem.total_bytes));
    ADD(mem, "capacity_bytes", NUM(s->mem.capacity_bytes));
    cJSON *terms = cJSON_CreateObject();
    for (int t = 0; t < ULY_MEM_TERM_COUNT; t++)
        ADD(terms, uly_mem_term_name((uly_mem_term)t), NUM(s->mem.term_bytes[t]));
    ADD(mem, "terms", terms);
    int lg = s->mem.largest >= 0 && s->mem.largest < ULY_MEM_TERM_COUNT ? s->mem.largest : 0;
    ADD(mem, "largest", priced ? cJSON_CreateString(uly_mem_term_name((uly_mem_term)lg)) : cJSON_CreateNull());
    ADD(p, "memory", mem);

    cJSON *per = cJSON_CreateObject();
    cJSON *cb = cJSON_CreateObject();
    ADD(cb, "fwd", INT(s->comm_fwd));
    ADD(cb, "bwd", INT(s->comm_bwd));
    ADD(cb, "recompute", INT(s->comm_recompute));
    ADD(per, "comm_bytes_per_rank", cb);
    ADD(per, "zero_bytes_per_rank", INT(s->zero_bytes));
    ADD(per, "tiers", priced ? tiers_json(s->tiers) : cJSON_CreateNull());
    ADD(per, "fwd_s", NUM(s->time.layer_fwd_s));
    ADD(per, "bwd_s", NUM(s->time.layer_bwd_s));
    ADD(per, "compute_s", NUM(s->time.compute_s));
    ADD(per, "comm_exposed_s", NUM(s->time.comm_exposed_s));
    ADD(per, "comm_overlapped_s", NUM(s->time.comm_overlapped_s));
    ADD(p, "per_layer", per);

    cJSON *st = cJSON_CreateObject();
    ADD(st, "time_s", NUM(s->time.step_s));
    /* null where the plan does not fit: it cannot run at any rate; what it
     * would reach if it fitted (the throughput figure's open markers) is
     * kept apart, under "if_it_fit" */
    const int runs = sim_shows_throughput(s);
    ADD(st, "tokens_per_s", runs ? sim_json_num(s->time.tokens_per_s) : cJSON_CreateNull());
    ADD(st, "tflops_per_gpu", runs ? sim_json_num(s->time.tflops_per_gpu) : cJSON_CreateNull());
    ADD(st, "mfu", runs ? sim_json_num(s->time.mfu) : cJSON_CreateNull());
    ADD(st, "hfu", runs ? sim_json_num(s->time.hfu) : cJSON_CreateNull());
    if (!runs && priced) {
        cJSON *w = cJSON_CreateObject();
        ADD(w, "tokens_per_s", sim_json_num(s->time.tokens_per_s));
        ADD(w, "tflops_per_gpu", sim_json_num(s->time.tflops_per_gpu));
        ADD(w, "mfu", sim_json_num(s->time.mfu));
        ADD(w, "hfu", sim_json_num(s->time.hfu));
        ADD(st, "if_it_fit", w);
    }
    ADD(st, "micro_batch", INT(s->micro_batch));
    ADD(st, "micro_steps", INT(s->time.micro_steps));
    ADD(st, "stage_layers", INT(s->time.stage_layers));
    ADD(st, "pp_bubble", NUM(s->time.pp_bubble));
    ADD(st, "model_s", NUM(s->time.model_s));
    ADD(st, "step_fixed_s", NUM(s->time.step_fixed_s));
    ADD(st, "model_flops", NUM(s->time.model_flops));
    ADD(st, "hw_flops", NUM(s->time.hw_flops));
    ADD(st, "zero_gather_s", NUM(s->time.zero_gather_s));
    ADD(st, "zero_gather_exposed_s", NUM(s->time.zero_gather_exposed_s));
#undef NUM
#undef INT
    ADD(p, "step", st);
    ADD(p, "layouts_evaluated", sim_json_int((int64_t)s->evaluated));
    if (bad) {
        cJSON_Delete(p);
        return NULL;
    }
    return p;
}

cJSON *sim_json_ops(const uly_plan *pl, const uly_result *r)
{
    int bad = 0;
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < pl->n_ops && i < ULY_PLAN_MAX_OPS; i++) {
        const uly_op *op = &pl->ops[i];
        cJSON *o = cJSON_CreateObject();
        ADD(o, "id", sim_json_int(op->id));
        ADD(o, "name", cJSON_CreateString(uly_op_type_name(op->type)));
        ADD(o, "phase", cJSON_CreateString(uly_phase_name(op->phase)));
        ADD(o, "kind", cJSON_CreateString(uly_op_kind_name(op->kind)));
        ADD(o, "per", cJSON_CreateString(op->per_step ? "step" : op->per_model ? "model" : "layer"));
        ADD(o, "recompute", cJSON_CreateBool(op->recompute));
        if (op->kind == ULY_OP_COMM) {
            ADD(o, "coll", cJSON_CreateString(uly_coll_name(op->coll)));
            ADD(o, "group", cJSON_CreateString(uly_group_name(op->group)));
            ADD(o, "group_size", sim_json_int(op->group_size));
            ADD(o, "steps", sim_json_int(op->steps));
            ADD(o, "bytes_sent", sim_json_int(op->bytes_sent));
            ADD(o, "tiers", tiers_json(op->tiers));
            if (op->overlaps >= 0) ADD(o, "overlaps", sim_json_int(op->overlaps));
            else ADD(o, "overlaps", op->overlaps == ULY_OVERLAP_PHASE ? cJSON_CreateString("phase") : cJSON_CreateNull());
        } else {
            ADD(o, "flops", sim_json_num(op->flops));
            ADD(o, "bytes_touched", sim_json_num(op->bytes_touched));
        }
        ADD(o, "time_s", sim_json_num(r->op_time_s[i]));
        ADD(o, "exposed_s", sim_json_num(r->op_exposed_s[i]));
        ADD(arr, NULL, o);
    }
    if (bad) {
        cJSON_Delete(arr);
        return NULL;
    }
    return arr;
}

int sim_json_print(cJSON *root, FILE *f)
{
    if (!root) return 1;
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    if (!s) return 1;
    fputs(s, f);
    fputc('\n', f);
    cJSON_free(s);
    return ferror(f) ? 1 : 0;
}

int sim_json_emit(cJSON *root, int bad, FILE *f)
{
    if (bad) {
        cJSON_Delete(root);
        sim_err("out of memory building the JSON output");
        return SIM_EXIT_INTERNAL;
    }
    return sim_json_print(root, f) ? SIM_EXIT_INTERNAL : SIM_EXIT_OK;
}
