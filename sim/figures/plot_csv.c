/* plot_csv.c: the CSV writers of `ulysim plot`: the '#' header that names the
 * figure, the command, the configuration and every column with its unit; the
 * notes on points left out; and the strategy registry's columns the gnuplot
 * scripts draw with. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "output.h"
#include "plot_fig.h"

#define GIB 1073741824.0

void plot_note(plot_run *r, const char *fmt, ...)
{
    if (r->notes_len + 2 >= sizeof r->notes) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(r->notes + r->notes_len, sizeof r->notes - r->notes_len - 1, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    r->notes_len += (size_t)k;
    if (r->notes_len > sizeof r->notes - 2) r->notes_len = sizeof r->notes - 2;
    r->notes[r->notes_len++] = '\n';
    r->notes[r->notes_len] = 0;
}

/* The strategy registry's columns a figure script draws with: its styles,
 * legend order and names come from these, not from a map of names in each
 * script. Rows end with them (plot_strategy_cells). */
static const col strategy_cols[] = {
    {"sidx", "the strategy's position in the registry, from 1: its line style and legend order"},
    {"label", "the strategy's name in legends"},
    {"label_short", "its name where space is short (bar charts)"},
};

static const char *strategy_names(void);

void plot_csv_header(plot_run *r, FILE *f, const char *const *about, const col *cols, int ncols, int with_strategy)
{
    const sim_ctx *c = r->c;
    const uly_model *m = &c->model;
    const uly_cluster *cl = &c->cluster;
    const uly_workload *w = &c->w;
    fprintf(f, "# ulysim %s plot %s: %s\n", ULY_VERSION, r->fig->name, r->fig->summary);
    fprintf(f, "# command   %s\n", r->command);
    if (r->fig->traces) {
        plot_csv_traces(r, f);
        goto rest;
    }
    fprintf(f, "# model     %s: L %lld, h %lld, a %lld heads, k %lld KV heads, d %lld, f %lld %s, V %lld; %.2f B parameters\n",
            m->name, (long long)m->layers, (long long)m->hidden, (long long)m->heads, (long long)m->kv_heads,
            (long long)m->head_dim, (long long)m->ffn_hidden, m->swiglu ? "SwiGLU" : "GELU", (long long)m->vocab,
            uly_model_params(m) / 1e9);
    fprintf(f, "# cluster   %s: %s, %lld nodes x %lld GPUs, %.0f TFLOP/s %s, %.1f GiB HBM; in-node %.0f GB/s, NIC %.0f GB/s per GPU, %s\n",
            cl->name, cl->gpu.name, (long long)cl->nodes, (long long)cl->gpus_per_node,
            cl->gpu.peak_flops[w->dtype] / 1e12, uly_dtype_name(w->dtype), cl->gpu.hbm_bytes / GIB,
            cl->intra_bw_Bps / 1e9, cl->nic_bw_Bps / 1e9, uly_topo_name(cl->topo));
    char wl[400];
    sim_workload_str(w, wl, sizeof wl);
    fprintf(f, "# workload  %s\n", wl);
rest:
    for (int i = 0; about && about[i]; i++) fprintf(f, "# %-9s %s\n", i ? "" : "figure", about[i]);
    const int n_strat = with_strategy ? (int)(sizeof strategy_cols / sizeof strategy_cols[0]) : 0;
    for (int i = 0; i < ncols + n_strat; i++) {
        const col *k = i < ncols ? &cols[i] : &strategy_cols[i - ncols];
        fprintf(f, "# %-9s %s: %s\n", i ? "" : "columns", k->name, k->what ? k->what : strategy_names());
    }
    for (int i = 0; i < ncols + n_strat; i++)
        fprintf(f, "%s%s", i ? "," : "", i < ncols ? cols[i].name : strategy_cols[i - ncols].name);
    fputc('\n', f);
}

void plot_csv_notes(plot_run *r, FILE *f)
{
    if (!r->notes_len) return;
    const char *p = r->notes;
    int first = 1;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        fprintf(f, "# %-9s %.*s\n", first ? "left out" : "", (int)l, p);
        first = 0;
        p += l + (e ? 1 : 0);
    }
}

void plot_reasons_plain(const sim_ctx *c, const sim_summary *s, char *b, size_t n)
{
    sim_reasons_str(c, s, 1, b, n);
    if (!b[0] && s->note[0]) snprintf(b, n, "%s", s->note);
    for (char *p = b; *p; p++)
        if (*p == ',' || *p == '"') *p = ';';
}

/* ------------------------------------------------- the strategy registry */

/* The registry's names, ", "-separated in registry order: what the strategy
 * column holds. */
static const char *strategy_names(void)
{
    static char names[256];
    if (names[0]) return names;
    size_t o = 0;
    for (int i = 0; uly_strategy_get((uly_strategy_id)i) && o < sizeof names; i++) {
        int k = snprintf(names + o, sizeof names - o, "%s%s", i ? ", " : "", uly_strategy_get((uly_strategy_id)i)->name);
        if (k > 0) o += (size_t)k;
    }
    return names;
}

/* A registry text as a CSV cell: the cells stay plain. */
static void cell_plain(FILE *f, const char *s)
{
    fputc(',', f);
    for (; s && *s; s++) fputc(*s == ',' || *s == '"' ? ';' : *s, f);
}

void plot_strategy_cells(FILE *f, uly_strategy_id s)
{
    const uly_strategy *st = uly_strategy_get(s);
    fprintf(f, ",%d", (int)s + 1);
    cell_plain(f, st ? st->label : "?");
    cell_plain(f, st ? st->label_short : "?");
    fputc('\n', f);
}

const char *plot_hybrid_name(void)
{
    for (int i = 0; uly_strategy_get((uly_strategy_id)i); i++) {
        const uly_strategy *s = uly_strategy_get((uly_strategy_id)i);
        if (s->uses_ulysses && s->uses_ring) return s->name;
    }
    return "the hybrid";
}
