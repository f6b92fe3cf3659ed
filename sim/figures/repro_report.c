/* repro_report.c: the output of `ulysim reproduce`: a table for people
 * ('#' comments, aligned columns), CSV (one line per compared number) or
 * JSON (experiments with their rows, and the acceptance items). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "output.h"
#include "repro.h"

static const char *experiment_title(int e)
{
    return rp_experiments[e].title ? rp_experiments[e].title : rp_papers[rp_experiments[e].paper].title;
}

/* ------------------------------------------------------------- the table */

static void fmt_num(char *buf, size_t n, double v, const char *unit)
{
    if (isnan(v)) snprintf(buf, n, "-");
    else if (strcmp(unit, "yes/no") == 0) snprintf(buf, n, "%s", v != 0 ? "yes" : "no");
    else if (strcmp(unit, "tokens") == 0 || strcmp(unit, "MiB") == 0) snprintf(buf, n, "%.0f", v);
    else if (strcmp(unit, "x") == 0 || strcmp(unit, "s") == 0 || strcmp(unit, "%") == 0)
        snprintf(buf, n, fabs(v) < 1 ? "%.3f" : "%.2f", v);
    else snprintf(buf, n, "%.1f", v);
}

static void fmt_err(char *buf, size_t n, const rp_row *x)
{
    const double e = rp_rel_err(x);
    if (isnan(e) || x->check == RP_SAME || x->check == RP_AT_MOST) snprintf(buf, n, "-");
    else snprintf(buf, n, "%+.1f", 100.0 * e);
}

static void fmt_check(char *buf, size_t n, const rp_row *x)
{
    switch (x->check) {
    case RP_WITHIN: snprintf(buf, n, "within %.0f%%", 100 * x->tol); break;
    case RP_AT_LEAST: snprintf(buf, n, ">= %.0f%% of it", 100 * (1 - x->tol)); break;
    case RP_SAME: snprintf(buf, n, "same"); break;
    case RP_AT_MOST: snprintf(buf, n, "<= %g%s", x->tol, x->unit); break;
    case RP_INFO: snprintf(buf, n, "-"); break;
    }
}

static void note(FILE *f, const char *text) { sim_print_note(f, "# ", "#   ", text, 118); }

/* An experiment's title, the cluster when it is not the paper's (the notes
 * that cite the default preset's sources then describe the default) and,
 * for a paper's tables, its assumptions. */
static void print_heading(const rp_ctx *c, FILE *f, int e)
{
    const int p = rp_experiments[e].paper;
    char t[1024];
    snprintf(t, sizeof t, "%s%s", experiment_title(e), rp_experiments[e].heading ? rp_experiments[e].heading : "");
    note(f, t);
    if (c->cluster_arg[p]) {
        snprintf(t, sizeof t,
                 "- priced on cluster %s (from %s '%s') in place of %s: every prediction below uses its rates",
                 c->cluster[p].name, rp_papers[p].flag, c->cluster_arg[p], rp_papers[p].preset);
        sim_print_note(f, "#   ", "#     ", t, 118);
    }
    if (e != rp_papers[p].tables_exp) return;
    for (int i = 0; i < rp_papers[p].n_assumptions; i++) {
        char a[1000];
        rp_assumption_text(&rp_papers[p].assumptions[i], a, sizeof a);
        snprintf(t, sizeof t, "- %s", a);
        sim_print_note(f, "#   ", "#     ", t, 118);
    }
}

/* Prints and frees a table; 1 when a cell could not be stored. */
static int table_done(sim_table *t, FILE *f)
{
    const int bad = sim_table_print(t, f);
    sim_table_free(t);
    return bad;
}

/* Ulysses Tables 2-3: one line per published configuration, time and
 * TFLOP/s side by side. */
static int print_uly_tables(const rp_ctx *c, FILE *f, int e)
{
    char a[64], b[64], d[64];
    fprintf(f, "\n");
    print_heading(c, f, e);
    static const char *const cols[] = {"table", "seq", "gpus", "layout", "mb", "time_s_pred", "time_s_pub",
                                       "err_pct", "tflops_pred", "tflops_pub", "err_pct", "check"};
    sim_table t;
    sim_table_init(&t, 12, cols, "lrrlrrrrrrrl");
    for (int i = 0; i < c->n_uly_tab; i++) {
        const rp_row *x = &c->r.v[c->uly_tab[i].row_time], *y = &c->r.v[c->uly_tab[i].row_tf];
        char sq[16];
        sim_size_str(c->uly_tab[i].seq, sq, sizeof sq);
        sim_table_row(&t);
        sim_table_cell(&t, "%s", c->uly_tab[i].table);
        sim_table_cell(&t, "%s", sq);
        sim_table_cell(&t, "%lld", (long long)c->uly_tab[i].gpus);
        sim_table_cell(&t, "%s", c->uly_tab[i].layout);
        sim_table_cell(&t, "%lld", (long long)c->uly_tab[i].mb);
        const rp_row *const tx[2] = {x, y};
        static const char *const units[2] = {"s", "TFLOP/s"};
        for (int k = 0; k < 2; k++) {
            fmt_num(a, sizeof a, tx[k]->pred, units[k]);
            fmt_num(b, sizeof b, tx[k]->pub, units[k]);
            fmt_err(d, sizeof d, tx[k]);
            sim_table_cell(&t, "%s", a);
            sim_table_cell(&t, "%s", b);
            sim_table_cell(&t, "%s", d);
        }
        sim_table_cell(&t, "%s", rp_status_names[x->status]);
    }
    if (table_done(&t, f)) return 1;
    const rp_row *m = rp_row_find(&c->r, rp_experiments[e].id, "median_abs_error");
    if (m) {
        fmt_num(a, sizeof a, m->pred, "%");
        fprintf(f, "# median |error| of the iteration times: %s%% (at most 5%%): %s\n", a, rp_status_names[m->status]);
    }
    fprintf(f, "# layout: u = Ulysses degree, dp = data-parallel replicas, mb = micro-batch; tflops in the "
               "paper's accounting\n");
    for (int i = 0; i < c->r.n; i++) {
        const rp_row *x = &c->r.v[i];
        if (strcmp(x->exp, rp_experiments[e].id) == 0 && x->note[0] && x->status == RP_NA) {
            char line[800];
            snprintf(line, sizeof line, "%s: %s", x->id, x->note);
            note(f, line);
        }
    }
    return 0;
}

/* The claims and Table 4: one line per compared number, then what each row
 * is, its setup and why it fails (for a table, only rows with something to
 * say). */
static int print_rows(const rp_ctx *c, FILE *f, int e)
{
    static const char *const cols[] = {"id", "published", "predicted", "unit", "err_pct", "check", "status"};
    const char *exp = rp_experiments[e].id;
    const int is_table = e == rp_papers[rp_experiments[e].paper].tables_exp;
    char a[64], b[64], d[64], k[64];
    fprintf(f, "\n\n");
    print_heading(c, f, e);
    sim_table t;
    sim_table_init(&t, 7, cols, "lrrlrll");
    for (int i = 0; i < c->r.n; i++) {
        const rp_row *x = &c->r.v[i];
        if (strcmp(x->exp, exp)) continue;
        fmt_num(a, sizeof a, x->pub, x->unit);
        fmt_num(b, sizeof b, x->pred, x->unit);
        fmt_err(d, sizeof d, x);
        fmt_check(k, sizeof k, x);
        sim_table_row(&t);
        sim_table_cell(&t, "%s", x->id);
        sim_table_cell(&t, "%s", a);
        sim_table_cell(&t, "%s", b);
        sim_table_cell(&t, "%s", x->unit);
        sim_table_cell(&t, "%s", d);
        sim_table_cell(&t, "%s", k);
        sim_table_cell(&t, "%s", rp_status_names[x->status]);
    }
    if (table_done(&t, f)) return 1;
    for (int i = 0; i < c->r.n; i++) {
        const rp_row *x = &c->r.v[i];
        if (strcmp(x->exp, exp)) continue;
        if (is_table && !x->note[0] && x->status != RP_FAIL && x->status != RP_NA) continue;
        char line[1400];
        snprintf(line, sizeof line, "%s: %s. %s%s%s", x->id, x->label, x->setup, x->note[0] ? ". " : "", x->note);
        sim_print_note(f, "#   ", "#       ", line, 118);
    }
    return 0;
}

int rp_print_table(const rp_ctx *c, FILE *f)
{
    fprintf(f, "# ulysim %s reproduce: the seed papers' experiments, predicted by the model against the published "
               "numbers\n",
            ULY_VERSION);
    fprintf(f, "# error = predicted / published - 1; check: the tolerance each number is held to; "
               "FAIL and n/a rows say why\n");
    for (int e = 0; e < RP_EXP_COUNT; e++) {
        if (!c->run[rp_experiments[e].paper]) continue;
        /* the Ulysses tables have their own layout; the rest share one */
        const int bad = e == RP_EXP_ULY_TABLES ? print_uly_tables(c, f, e) : print_rows(c, f, e);
        if (bad) return 1;
    }
    fprintf(f, "\n\n# acceptance:\n");
    for (int i = 0; i < RP_ACC_COUNT; i++) {
        if (!c->run[rp_accepts[i].paper]) continue;
        int nr, nb;
        const int ok = rp_accept_holds(&c->r, &rp_accepts[i], &nr, &nb);
        fprintf(f, "#   %-22s %s: %s", rp_accepts[i].id, rp_accepts[i].criterion, ok ? "holds" : "does not hold");
        if (!ok) fprintf(f, " (%d of %d rows fail or have no prediction)", nb, nr);
        fprintf(f, "\n");
    }
    return ferror(f) ? 1 : 0;
}

/* --------------------------------------------------------------- the CSV */

static void csv_num(char *buf, size_t n, double v)
{
    if (isnan(v)) buf[0] = 0;
    else snprintf(buf, n, "%.10g", v);
}

int rp_print_csv(const rp_ctx *c, FILE *f)
{
    static const char *const cols[] = {"experiment", "id", "label", "unit", "predicted", "published", "error_pct",
                                       "check", "tolerance", "status", "acceptance", "setup", "note"};
    sim_table t;
    sim_table_init(&t, 13, cols, "lllllllllllll");
    for (int i = 0; i < c->r.n; i++) {
        const rp_row *x = &c->r.v[i];
        char p[40], q[40], e[40], tol[40];
        csv_num(p, sizeof p, x->pred);
        csv_num(q, sizeof q, x->pub);
        const double er = rp_rel_err(x);
        csv_num(e, sizeof e, isnan(er) || x->check == RP_SAME ? NAN : 100.0 * er);
        /* no tolerance where nothing is compared or the answer is yes/no */
        if (x->check == RP_INFO || x->check == RP_SAME) tol[0] = 0;
        else snprintf(tol, sizeof tol, "%g", x->tol);
        const char *const cells[13] = {x->exp, x->id, x->label, x->unit, p, q, e, rp_check_names[x->check], tol,
                                       x->status == RP_FAIL ? "fail" : rp_status_names[x->status],
                                       x->accept ? x->accept : "", x->setup, x->note};
        sim_table_row(&t);
        for (int k = 0; k < 13; k++) sim_table_cell(&t, "%s", cells[k]);
    }
    const int rc = sim_table_print_csv(&t, f);
    sim_table_free(&t);
    return rc;
}

/* -------------------------------------------------------------- the JSON */

static cJSON *json_str(const char *s) { return cJSON_CreateString(s ? s : ""); }

int rp_json_row(cJSON *rows, const rp_row *x)
{
    int bad = 0;
    cJSON *r = cJSON_CreateObject();
    bad |= sim_json_add(r, "id", json_str(x->id));
    bad |= sim_json_add(r, "label", json_str(x->label));
    bad |= sim_json_add(r, "unit", json_str(x->unit));
    bad |= sim_json_add(r, "predicted", sim_json_num(x->pred));
    bad |= sim_json_add(r, "published", sim_json_num(x->pub));
    const double er = rp_rel_err(x);
    bad |= sim_json_add(r, "error", sim_json_num(x->check == RP_SAME ? NAN : er));
    bad |= sim_json_add(r, "check", json_str(rp_check_names[x->check]));
    bad |= sim_json_add(r, "tolerance",
                        x->check == RP_INFO || x->check == RP_SAME ? cJSON_CreateNull() : sim_json_num(x->tol));
    bad |= sim_json_add(r, "status", json_str(x->status == RP_FAIL ? "fail" : rp_status_names[x->status]));
    bad |= sim_json_add(r, "acceptance", x->accept ? json_str(x->accept) : cJSON_CreateNull());
    bad |= sim_json_add(r, "setup", json_str(x->setup));
    bad |= sim_json_add(r, "note", json_str(x->note));
    bad |= sim_json_add(rows, NULL, r);
    return bad;
}

static int json_experiment(const rp_ctx *c, cJSON *exps, int e)
{
    int bad = 0;
    const int p = rp_experiments[e].paper;
    cJSON *o = cJSON_CreateObject();
    bad |= sim_json_add(o, "id", json_str(rp_experiments[e].id));
    bad |= sim_json_add(o, "title", json_str(experiment_title(e)));
    bad |= sim_json_add(o, "cluster", json_str(c->cluster[p].name));
    bad |= sim_json_add(o, "cluster_given", cJSON_CreateBool(c->cluster_arg[p] != NULL));
    cJSON *as = cJSON_CreateArray();
    for (int i = 0; i < rp_papers[p].n_assumptions; i++) {
        char t[1000];
        rp_assumption_text(&rp_papers[p].assumptions[i], t, sizeof t);
        bad |= sim_json_add(as, NULL, json_str(t));
    }
    bad |= sim_json_add(o, "assumptions", as);
    cJSON *rs = cJSON_CreateArray();
    for (int i = 0; i < c->r.n; i++)
        if (strcmp(c->r.v[i].exp, rp_experiments[e].id) == 0) bad |= rp_json_row(rs, &c->r.v[i]);
    bad |= sim_json_add(o, "rows", rs);
    bad |= sim_json_add(exps, NULL, o);
    return bad;
}

static int json_accept(const rp_ctx *c, cJSON *acc, const rp_accept *a)
{
    int bad = 0, nr, nb;
    const int ok = rp_accept_holds(&c->r, a, &nr, &nb);
    cJSON *o = cJSON_CreateObject();
    bad |= sim_json_add(o, "id", json_str(a->id));
    bad |= sim_json_add(o, "criterion", json_str(a->criterion));
    bad |= sim_json_add(o, "holds", cJSON_CreateBool(ok));
    cJSON *fl = cJSON_CreateArray();
    for (int j = 0; j < c->r.n; j++) {
        const rp_row *x = &c->r.v[j];
        if (x->accept && strcmp(x->accept, a->id) == 0 && x->status != RP_PASS) {
            char t[140];
            snprintf(t, sizeof t, "%s/%s", x->exp, x->id);
            bad |= sim_json_add(fl, NULL, json_str(t));
        }
    }
    bad |= sim_json_add(o, "not_passing", fl);
    bad |= sim_json_add(acc, NULL, o);
    return bad;
}

int rp_print_json(const rp_ctx *c, FILE *f)
{
    int bad = 0;
    cJSON *root = cJSON_CreateObject();
    bad |= sim_json_add(root, "command", json_str("reproduce"));
    bad |= sim_json_add(root, "version", json_str(ULY_VERSION));
    bad |= sim_json_add(root, "error_convention",
                        json_str("error = predicted / published - 1; within: |error| <= tolerance; at-least: "
                                 "predicted >= published x (1 - tolerance); same: equal; at-most: predicted <= "
                                 "tolerance (in the unit)"));
    cJSON *exps = cJSON_CreateArray();
    for (int e = 0; e < RP_EXP_COUNT; e++)
        if (c->run[rp_experiments[e].paper]) bad |= json_experiment(c, exps, e);
    /* Selene's runs file, after the seed papers */
    if (c->run_selene) {
        const int rc = rp_selene_json(exps);
        if (rc > 1) {
            cJSON_Delete(root);
            cJSON_Delete(exps);
            return rc;
        }
        bad |= rc;
    }
    bad |= sim_json_add(root, "experiments", exps);
    cJSON *acc = cJSON_CreateArray();
    for (int i = 0; i < RP_ACC_COUNT; i++)
        if (c->run[rp_accepts[i].paper]) bad |= json_accept(c, acc, &rp_accepts[i]);
    bad |= sim_json_add(root, "acceptance", acc);
    if (bad) {
        cJSON_Delete(root);
        sim_err("reproduce: out of memory building the JSON output");
        return 1;
    }
    return sim_json_print(root, f);
}
