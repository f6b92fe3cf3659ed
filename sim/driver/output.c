/* output.c: tables and CSV for the ulysim subcommands, and the words
 * shared by every writer; the JSON is output_json.c's. */
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

/* What a named attention kernel is, for the workload line: cuDNN's source */
const char *sim_attn_kernel_why(uly_attn_kernel k)
{
    return k == ULY_AK_CUDNN ? " (TransformerEngine's cuDNN fused attention, Megatron-Core's on Hopper and Blackwell; "
                               "NVIDIA's published cuDNN rates)"
                             : "";
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
    if (k > 0 && (size_t)k < n) k += sim_fp8_workload_str(w, buf + k, n - (size_t)k);
    /* (FP8's words above name the kernel that priced attention) */
    if (k > 0 && (size_t)k < n && w->attn_kernel != ULY_AK_FLASH2 && w->flash && w->dtype != ULY_FP8)
        k += snprintf(buf + k, n - (size_t)k, "; attention kernel %s%s", uly_attn_kernel_name(w->attn_kernel),
                      sim_attn_kernel_why(w->attn_kernel));
    if (k > 0 && (size_t)k < n && uly_attn_density(w) < 1)
        k += snprintf(buf + k, n - (size_t)k, "; block-sparse attention, density %g", uly_attn_density(w));
    if (k > 0 && (size_t)k < n && w->ffn_chunks > 1)
        k += snprintf(buf + k, n - (size_t)k, "; FFN in %lld chunks", (long long)w->ffn_chunks);
    if (k > 0 && (size_t)k < n && w->loss_chunks > 1)
        k += snprintf(buf + k, n - (size_t)k, "; loss in %lld chunks", (long long)w->loss_chunks);
    if (k > 0 && (size_t)k < n && w->ce_impl != ULY_CE_UNFUSED)
        k += snprintf(buf + k, n - (size_t)k, "; cross-entropy fused (%s)",
                      w->ce_impl == ULY_CE_TE ? "TransformerEngine's kernels" : "Megatron-Core's native fusion");
    if (k > 0 && (size_t)k < n && w->zero_stage >= 3 && w->zero_prefetch < 0)
        k += snprintf(buf + k, n - (size_t)k, "; no ZeRO-3 prefetch");
    else if (k > 0 && (size_t)k < n && w->zero_stage >= 3 && w->zero_prefetch)
        k += snprintf(buf + k, n - (size_t)k, "; ZeRO-3 prefetch %lld layer%s", (long long)uly_zero_prefetch_layers(w),
                      sim_plural_s(uly_zero_prefetch_layers(w)));
    if (k > 0 && (size_t)k < n && w->tp_comm_overlap)
        k += snprintf(buf + k, n - (size_t)k, "; TP communication overlapped with its GEMMs");
    if (k > 0 && (size_t)k < n && w->zero_stage >= 3) /* which schedule priced the gathers (uly_zero_gather_msgs) */
        k += snprintf(buf + k, n - (size_t)k, "; ZeRO-3 gathers as %s sends them, %s", uly_framework_name(w->framework),
                      uly_zero_gather_by_submodule(w) ? "a weight matrix at a time" : "a layer at once");
    if (k > 0 && (size_t)k < n && w->overlap_param_gather)
        k += snprintf(buf + k, n - (size_t)k, "; weight gather under the next step's forward");
    if (k > 0 && (size_t)k < n && w->framework == ULY_FW_MEGATRON && sb.grad_wire < 4)
        k += snprintf(buf + k, n - (size_t)k, "; main gradients kept and reduced in %s",
                      w->dtype == ULY_FP16 ? "fp16" : "bf16");
    if (k > 0 && (size_t)k < n && w->transformer_impl == ULY_TI_LOCAL)
        k += snprintf(buf + k, n - (size_t)k, "; Megatron-LM's local layers (biases by kernels of their own)");
    if (k > 0 && (size_t)k < n && w->framework == ULY_FW_MEGATRON && w->grad_accum_fusion < 0)
        k += snprintf(buf + k, n - (size_t)k, "; gradients added into the main gradients by a kernel per parameter");
    if (k > 0 && (size_t)k < n && w->pp_scatter_gather)
        k += snprintf(buf + k, n - (size_t)k, "; stage transfers scattered over the TP ranks and gathered");
    if (k > 0 && (size_t)k < n && w->cuda_graphs)
        k += snprintf(buf + k, n - (size_t)k, "; CUDA graphs");
    if (k > 0 && (size_t)k < n && w->step_overhead_s > 0)
        k += snprintf(buf + k, n - (size_t)k, "; host work %g ms per step", w->step_overhead_s * 1e3);
    if (k > 0 && (size_t)k < n && w->overlap_grad_reduce)
        snprintf(buf + k, n - (size_t)k, "; gradient reduction %s backward",
                 uly_grad_reduce_overlaps(w) ? "overlapped with" : "after");
}

/* The degrees above 1 of a layout, each after its prefix, joined by sep;
 * none when every degree is 1. The MoE layers' expert degrees last (1, or
 * 0 unset, for a dense model: not shown). */
static void degrees_join(const uly_layout *l, const char *const prefix[8], const char *sep, const char *none,
                         char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = 0;
    const int64_t v[8] = {l->tp, l->ulysses, l->ring, l->dp, l->pp, l->pp > 1 ? l->vpp : 1, l->ep, l->etp};
    for (size_t i = 0; i < 8; i++) {
        if (v[i] <= 1) continue;
        int k = snprintf(buf + o, n - o, "%s%s%lld", o ? sep : "", prefix[i], (long long)v[i]);
        if (k < 0 || (size_t)k >= n - o) break;
        o += (size_t)k;
    }
    if (!o) snprintf(buf, n, "%s", none);
}

void sim_degrees_str(const uly_layout *l, char *buf, size_t n)
{
    static const char *const prefix[8] = {"tp", "u", "r", "dp", "pp", "vpp", "ep", "etp"};
    degrees_join(l, prefix, ".", "dp1", buf, n);
}

void sim_degrees_words(const uly_layout *l, char *buf, size_t n)
{
    static const char *const prefix[8] = {"tp=", "u=", "r=", "dp=", "pp=", "vpp=", "ep=", "etp="};
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

void sim_cell_layout_moe(sim_table *t, const uly_layout *l)
{
    sim_table_cell(t, "%lld", (long long)(l->ep > 1 ? l->ep : 1));
    sim_table_cell(t, "%lld", (long long)(l->etp > 1 ? l->etp : 1));
}

/* The columns of the rows of kind (bit 1 << kind), the table's name and
 * CSV's (NULL: the column is the table's only); some only in CSV. */
enum { ROWS_ALL = 7, ROWS_CSV_ONLY = 8, ROWS_IF_BEST = 16, ROWS_IF_MOE = 32 };
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
    {"ep", "ep", 'r', ROWS_ALL | ROWS_IF_MOE}, /* a MoE model's: the expert-parallel degrees */
    {"etp", "etp", 'r', ROWS_ALL | ROWS_IF_MOE},
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

static int rows_columns(int csv, sim_rows_kind kind, int best, int moe, const char **names, char *align)
{
    int nc = 0;
    for (size_t k = 0; k < sizeof rows_cols / sizeof rows_cols[0]; k++) {
        const struct rows_col *col = &rows_cols[k];
        const char *name = csv ? col->csv : col->table;
        if (!(col->when & (1u << kind)) || !name || ((col->when & ROWS_IF_BEST) && !best) ||
            ((col->when & ROWS_IF_MOE) && !moe))
            continue;
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
    const int moe = c->model.experts > 0;
    if (found && s->status != SIM_ROW_OVERFLOW && s->layout.dp > 0) {
        sim_cell_layout(t, l);
        if (moe) sim_cell_layout_moe(t, l);
    } else {
        for (int k = 0; k < 5 + 2 * moe; k++) sim_table_cell(t, "%s", "");
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
    const int nc = rows_columns(csv, kind, best != NULL, c->model.experts > 0, names, align);
    sim_table t;
    sim_table_init(&t, nc, names, align);
    t.gap_every = gap_every;
    t.block_every = block_every;
    for (size_t i = 0; i < n; i++) rows_cells(&t, c, &rows[i], kind, csv, best ? &best[i] : NULL);
    int bad = csv ? sim_table_print_csv(&t, f) : sim_table_print(&t, f);
    sim_table_free(&t);
    return bad;
}
