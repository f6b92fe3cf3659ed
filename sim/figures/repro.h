/* repro.h: the parts of `ulysim reproduce` (cmd_reproduce.c) and what they
 * share. The command re-creates the seed papers' experiments; each
 * experiment appends rows (one compared number each) to the context, the
 * check framework judges every row against its tolerance, and the report
 * prints the rows as a table, CSV or JSON, and plots them.
 *
 *   repro_compare.c  rows, checks, tolerances, the acceptance items
 *   repro_ulysses.c  DeepSpeed-Ulysses: Tables 2-3 (a runs file priced by validate --runs) and the
 *                    headline claims
 *   repro_rsa.c      Sequence Parallelism / RSA: Table 4 (a runs file, one pipeline stage priced) and the claims
 *   repro_selene.c   Korthikanti et al. 2022 Table 5 (Selene), a runs file priced by validate --runs
 *   repro_report.c   table, CSV and JSON output
 *   repro_plot.c     data files and gnuplot renderings (-o DIR) */
#ifndef SIM_REPRO_H
#define SIM_REPRO_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "ulysim.h"

/* ------------------------------------------------------------ the checks */

/* How a predicted number is held against the published one. */
typedef enum rp_check {
    RP_WITHIN = 0, /* |predicted / published - 1| <= tol */
    RP_AT_LEAST,   /* predicted >= published x (1 - tol): the paper states a bound ("over", "reaches") */
    RP_SAME,       /* yes/no statements: predicted == published (1 yes, 0 no) */
    RP_AT_MOST,    /* predicted <= tol (a summary statistic, in the row's unit) */
    RP_INFO,       /* shown, not checked */
} rp_check;
extern const char *const rp_check_names[];

typedef enum rp_status { RP_PASS = 0, RP_FAIL, RP_NA, RP_SHOWN } rp_status;
extern const char *const rp_status_names[];

typedef struct rp_row {
    const char *exp;      /* rp_experiments' id */
    char id[64];          /* stable id within the experiment */
    char label[128];      /* what it is, in words */
    const char *unit;
    double pred, pub;     /* NAN: none */
    rp_check check;
    double tol;           /* relative (or, for RP_AT_MOST, in the unit) */
    const char *accept;   /* acceptance item the row belongs to, or NULL */
    char setup[160];      /* the layout or configuration the prediction comes from */
    char note[480];       /* why it fails, what stands in for what */
    rp_status status;
} rp_row;

/* An acceptance item: the rows that name it must all pass. */
typedef struct rp_accept {
    const char *id;
    int paper; /* rp_papers' index */
    const char *criterion;
} rp_accept;
enum {
    RP_ACC_ULY_TABLES_EACH = 0,
    RP_ACC_ULY_TABLES_MEDIAN,
    RP_ACC_RSA_TABLE4,
    RP_ACC_ULY_HEADLINE,
    RP_ACC_RSA_HEADLINE,
    RP_ACC_COUNT
};
extern const rp_accept rp_accepts[RP_ACC_COUNT];

typedef struct rp_rows {
    rp_row *v;
    int n, cap, oom;
} rp_rows;

/* An acceptance item holds when every row of it passes; the counts of its
 * rows and of those that fail or have no prediction. */
int rp_accept_holds(const rp_rows *r, const rp_accept *a, int *n_rows, int *n_bad);
/* The row of experiment exp with id, or NULL. */
const rp_row *rp_row_find(const rp_rows *r, const char *exp, const char *id);

/* A new row of experiment exp (acceptance item accept, or NULL): the
 * published number pub in unit, held to check with tolerance tol; no
 * prediction yet (NAN). NULL (and r->oom) when out of memory. */
rp_row *rp_row_add(rp_rows *r, const char *exp, const char *accept, const char *unit, rp_check check, double tol,
                   double pub);
/* predicted / published - 1; NAN when either is missing or published is 0. */
double rp_rel_err(const rp_row *x);
/* Sets x->status from its check and tolerance. */
void rp_row_judge(rp_row *x);
/* Median of v[0..n) (sorts v); NAN when n is 0. */
double rp_median(double *v, int n);

#define SETF(buf, ...) snprintf((buf), sizeof(buf), __VA_ARGS__)

/* ------------------------------------------------------------ the papers */

/* An assumption printed under an experiment's title: text, with the name
 * of strategy `strat` in place of its one %s (strat < 0: none). */
typedef struct rp_assumption {
    const char *fmt;
    int strat;
} rp_assumption;

/* A seed paper: the experiment set `ulysim reproduce ID` runs, the cluster
 * its experiments run on and the flag that replaces it, and the title and
 * assumptions of its tables experiment. */
typedef struct rp_paper {
    const char *id, *flag, *preset;
    int tables_exp;  /* rp_experiments' index of the experiment the title and assumptions belong to */
    const char *title;
    const rp_assumption *assumptions;
    int n_assumptions;
} rp_paper;

enum { RP_PAPER_ULYSSES = 0, RP_PAPER_RSA, RP_PAPER_COUNT };
extern const rp_paper rp_papers[RP_PAPER_COUNT];

/* The experiments, in output order. title: for JSON (NULL: the paper's);
 * heading: what the table adds to the title under its heading. */
typedef struct rp_experiment {
    const char *id;
    int paper;
    const char *title, *heading;
} rp_experiment;
enum { RP_EXP_ULY_TABLES = 0, RP_EXP_ULY_CLAIMS, RP_EXP_RSA_TABLE4, RP_EXP_RSA_CLAIMS, RP_EXP_COUNT };
extern const rp_experiment rp_experiments[RP_EXP_COUNT];
/* rp_papers' index of an id; -1 when none. */
int rp_paper_find(const char *id);
/* The text of an assumption, the strategy name filled in. */
void rp_assumption_text(const rp_assumption *a, char *buf, size_t n);

/* ------------------------------------------------------------ the context */

typedef struct rp_ctx {
    uly_model gpt7b, gpt30b, gpt12b, bert;
    /* by rp_papers' index: the cluster the paper's experiments run on, and
     * the --*-cluster value that replaced the paper's preset (NULL: none);
     * a user's measured profile prices every row */
    uly_cluster cluster[RP_PAPER_COUNT];
    const char *cluster_arg[RP_PAPER_COUNT];
    uly_plan plan;  /* scratch */
    rp_rows r;
    int exit_rc;             /* an experiment stopped after saying why (a bad published file): the exit status */
    int run[RP_PAPER_COUNT]; /* which papers' experiments run */
    int run_selene;          /* Korthikanti et al. 2022 Table 5 (repro_selene.c) */
    /* what the report and plots need beyond the rows */
    int n_uly_tab;
    struct {
        char table[16];  /* the runs file's group: "T2" */
        int64_t seq, gpus;
        double pub_s, pred_s, pub_tf, pred_tf;
        char layout[48];  /* degrees the search chose, "-" when none */
        int64_t mb;
        int row_time, row_tf; /* indices into r */
    } uly_tab[8];
    int n_rsa_tab;
    struct {
        int64_t p, batch, seq;
        double tp_pub, tp_pred, sp_pub, sp_pred; /* MiB; NAN none */
    } rsa_tab[8];
} rp_ctx;

/* "ulysses u8.dp8 mb1": strategy, degrees and micro-batch. */
void rp_layout_str(const uly_layout *l, int64_t mb, char *buf, size_t n);
/* First fatal reason of a result, in words (or "" when none). */
void rp_why_str(const uly_model *m, const uly_result *r, char *buf, size_t n);

/* ------------------------------------------------------- the experiments */

/* Each appends its rows; 0, or 1 when out of memory or (c->exit_rc set)
 * after saying why its published runs file cannot be used. */
int rp_ulysses_run(rp_ctx *c);
int rp_rsa_run(rp_ctx *c);

/* ------------------------------------------------------------ the report */

/* Each returns 0, or 1 on a failure it has reported (rp_print_json: or the
 * exit status Selene's runs file stopped it with). */
int rp_print_table(const rp_ctx *c, FILE *f);
int rp_print_csv(const rp_ctx *c, FILE *f);
int rp_print_json(const rp_ctx *c, FILE *f);
/* dir made ready for the figures (created if missing): 0, or 2 after a
 * one-line message (missing parent, not a directory). Called before the
 * work, so that a bad -o prints nothing else. */
int rp_plot_dir_ready(const char *dir);
/* Data files and their gnuplot renderings in dir (rp_plot_dir_ready first). */
int rp_plots(const rp_ctx *c, const char *dir);

/* The published tables: path of file in $ULYSIM_PUBLISHED, else the source
 * tree's traces/published while it exists (a build tree), else the
 * installed copy (repro_selene.c). */
void rp_published_path(const char *file, char *out, size_t n);

/* Korthikanti et al. 2022 Table 5 on Selene, from its runs file, beside
 * Calculon's accuracy (repro_selene.c): the table section, or (csv) rows in
 * reproduce's CSV columns; first: nothing printed before it. Returns 0, or
 * the exit status after a message. */
int rp_selene_print(int csv, int first, FILE *f);
/* The same as an experiment of reproduce's JSON (its rows shaped as
 * rp_json_row's), appended to exps. Returns 0, 1 out of memory, or the exit
 * status after a message. */
int rp_selene_json(cJSON *exps);
/* A row of reproduce's JSON appended to rows; 1 when out of memory. */
int rp_json_row(cJSON *rows, const rp_row *x);

#endif
