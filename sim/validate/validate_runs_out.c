/* validate_runs_out.c: `ulysim validate --runs FILE`: its arguments, and the
 * priced rows (validate_runs.c) printed as a table, CSV or JSON with the
 * summary: per quantity the count, median and largest |error|, the
 * out-of-memory agreement, the ranking agreement within groups, and whether
 * the limits given hold. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ulysim.h"
#include "validate_runs.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ulysim validate --runs FILE [--format table|csv|json] [--max-error F] [--max-run-error F]\n"
            "Measured runs (a runs file, docs/runs.md: CSV or JSON Lines, one run per row) against the model:\n"
            "each row is priced as `ulysim plan` prices its configuration columns (a column NAME is the flag\n"
            "--NAME; one strategy per row, at the best layout of the degrees given), beside its measured\n"
            "step_s, tokens_per_s, tflops_per_gpu (in its flop_convention), mem_gib and oom.\n"
            "  --format F            table (default), csv (one line per row and quantity) or json\n"
            "  --max-error F         exit 1 when a quantity's median |error| exceeds F\n"
            "  --max-run-error F     exit 1 when any row's |error| exceeds F\n"
            "Limits, as in every mode of validate, are fractions (0.1 = 10%%), or percent with its sign (10%%).\n"
            "error = predicted / measured - 1. Exit: 0 printed (and the limits hold), 1 a limit exceeded,\n"
            "2 bad usage or a bad runs file (one line naming the file, line, row and value).\n");
}

/* The quantity as the table names it: TFLOP/s with its convention. */
static const char *qname(const vr_row *r, int q)
{
    static char buf[VR_Q_COUNT][40];
    if (q != VR_TFLOPS) return vr_quantity_names[q];
    snprintf(buf[q], sizeof buf[q], "tflops:%s", uly_flop_conv_name(r->flop_conv));
    return buf[q];
}

static const char *yes_no(int b) { return b ? "yes" : "no"; }

static const char *strategy_name(const uly_strategy *st) { return st ? st->name : "?"; }

/* A CSV cell: quoted when it holds a comma, a quote or a newline. */
static void csv_cell(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* Which limits are exceeded, as words into buf; the count. */
static int limits_exceeded(const vr_set *s, double max_median_pct, double max_pct, char *buf, size_t n)
{
    int bad = 0;
    buf[0] = 0;
    for (int q = 0; q < VR_Q_COUNT; q++) {
        vr_stats st;
        vr_stats_of(s, q, &st);
        if (st.count == 0) continue;
        char w[160];
        if (!isnan(max_median_pct) && st.median_abs * 100 > max_median_pct) {
            snprintf(w, sizeof w, "%s median |error| %.2f%% > %g%%", vr_quantity_names[q], st.median_abs * 100,
                     max_median_pct);
            sim_join(buf, n, "; ", w);
            bad++;
        }
        if (!isnan(max_pct) && st.max_abs * 100 > max_pct) {
            snprintf(w, sizeof w, "%s largest |error| %.2f%% > %g%%", vr_quantity_names[q], st.max_abs * 100, max_pct);
            sim_join(buf, n, "; ", w);
            bad++;
        }
    }
    return bad;
}

static void print_table(const vr_set *s, FILE *f)
{
    fprintf(f, "# ulysim %s validate --runs %s: %d run%s priced as `ulysim plan` prices their flags; error = "
               "predicted / measured - 1\n", ULY_VERSION, s->path, s->n, s->n == 1 ? "" : "s");
    fprintf(f, "# %-5s %-24s %-12s %6s %7s %-20s %-15s %12s %12s %8s  %s\n", "line", "label", "strategy", "gpus", "seq",
            "layout", "quantity", "predicted", "measured", "err_pct", "cluster");
    for (int i = 0; i < s->n; i++) {
        const vr_row *r = &s->rows[i];
        int printed = 0;
        for (int q = 0; q < VR_Q_COUNT; q++) {
            if (isnan(r->meas[q])) continue;
            const double e = vr_err(r, q);
            char pred[32] = "-", err[32] = "-";
            if (!isnan(r->pred[q])) snprintf(pred, sizeof pred, "%.4g", r->pred[q]);
            if (!isnan(e)) snprintf(err, sizeof err, "%+.1f", e * 100);
            fprintf(f, "  %-5d %-24.24s %-12s %6lld %7lld %-20s %-15s %12s %12.4g %8s  %s\n", r->line,
                    r->label[0] ? r->label : "-", strategy_name(r->strategy), (long long)r->gpus, (long long)r->seq,
                    r->layout, qname(r, q), pred, r->meas[q], err, r->cluster[0] ? r->cluster : "-");
            printed = 1;
        }
        if (r->oom_meas >= 0) {
            fprintf(f, "  %-5d %-24.24s %-12s %6lld %7lld %-20s %-15s %12s %12s %8s  %s\n", r->line,
                    r->label[0] ? r->label : "-", strategy_name(r->strategy), (long long)r->gpus, (long long)r->seq,
                    r->layout, "oom", r->priced ? yes_no(r->oom_pred) : "-", yes_no(r->oom_meas),
                    !r->priced ? "-" : r->oom_pred == r->oom_meas ? "agree" : "DISAGREE", r->cluster[0] ? r->cluster : "-");
            printed = 1;
        }
        if (!printed)
            fprintf(f, "  %-5d %-24.24s %-12s %6lld %7lld %-20s (nothing measured)\n", r->line,
                    r->label[0] ? r->label : "-", strategy_name(r->strategy), (long long)r->gpus, (long long)r->seq,
                    r->layout);
        if (r->note[0]) fprintf(f, "#   line %d: %s\n", r->line, r->note);
    }
    fprintf(f, "# %-15s %5s %18s %18s\n", "quantity", "runs", "median_abs_err_pct", "max_abs_err_pct");
    for (int q = 0; q < VR_Q_COUNT; q++) {
        vr_stats st;
        vr_stats_of(s, q, &st);
        if (st.count) fprintf(f, "  %-15s %5d %18.2f %18.2f\n", vr_quantity_names[q], st.count, st.median_abs * 100,
                              st.max_abs * 100);
    }
    int oom[4], pairs, agree, ties;
    vr_oom_counts(s, oom);
    if (oom[0] + oom[1] + oom[2] + oom[3])
        fprintf(f, "# out of memory (measured / predicted): both %d, measured only %d, predicted only %d, neither %d\n",
                oom[0], oom[1], oom[2], oom[3]);
    vr_rank_counts(s, &pairs, &agree, &ties);
    if (pairs || ties) {
        fprintf(f, "# ranking within groups: %d of %d pairs ordered as measured", agree, pairs);
        if (ties) fprintf(f, "; %d pair%s tied (equal predicted or measured numbers: not ranked)", ties, ties == 1 ? "" : "s");
        fputc('\n', f);
    }
}

static void print_csv(const vr_set *s, FILE *f)
{
    fprintf(f, "line,label,group,strategy,gpus,seq,layout,quantity,flop_convention,predicted,measured,err_pct,cluster\n");
    for (int i = 0; i < s->n; i++) {
        const vr_row *r = &s->rows[i];
        for (int q = 0; q <= VR_Q_COUNT; q++) {
            const int oom = q == VR_Q_COUNT;
            if (oom ? r->oom_meas < 0 : isnan(r->meas[q])) continue;
            fprintf(f, "%d,", r->line);
            csv_cell(f, r->label);
            fputc(',', f);
            csv_cell(f, r->group);
            fprintf(f, ",%s,%lld,%lld,%s,%s,%s,", strategy_name(r->strategy), (long long)r->gpus, (long long)r->seq,
                    r->layout, oom ? "oom" : vr_quantity_names[q], q == VR_TFLOPS ? uly_flop_conv_name(r->flop_conv) : "");
            if (oom) {
                fprintf(f, "%s,%d,,", r->priced ? (r->oom_pred ? "1" : "0") : "", r->oom_meas);
                csv_cell(f, r->cluster);
                fputc('\n', f);
                continue;
            }
            const double e = vr_err(r, q);
            if (!isnan(r->pred[q])) fprintf(f, "%.6g", r->pred[q]);
            fprintf(f, ",%.6g,", r->meas[q]);
            if (!isnan(e)) fprintf(f, "%.4f", e * 100);
            fputc(',', f);
            csv_cell(f, r->cluster);
            fputc('\n', f);
        }
    }
}

static void json_num(cJSON *o, const char *key, double v)
{
    if (isnan(v)) cJSON_AddNullToObject(o, key);
    else cJSON_AddNumberToObject(o, key, v);
}

static int print_json(const vr_set *s, double max_median_pct, double max_pct, int bad, const char *what, FILE *f)
{
    cJSON *root = cJSON_CreateObject();
    if (!root) return 1;
    cJSON_AddStringToObject(root, "runs_file", s->path);
    cJSON_AddStringToObject(root, "error", "predicted / measured - 1");
    cJSON *rows = cJSON_AddArrayToObject(root, "rows");
    for (int i = 0; i < s->n; i++) {
        const vr_row *r = &s->rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(rows, o);
        cJSON_AddNumberToObject(o, "line", r->line);
        cJSON_AddStringToObject(o, "label", r->label);
        cJSON_AddStringToObject(o, "source", r->source);
        cJSON_AddStringToObject(o, "group", r->group);
        cJSON_AddStringToObject(o, "strategy", strategy_name(r->strategy));
        cJSON_AddStringToObject(o, "cluster", r->cluster); /* the cluster that priced the row */
        cJSON_AddNumberToObject(o, "gpus", (double)r->gpus);
        cJSON_AddNumberToObject(o, "seq", (double)r->seq);
        cJSON_AddBoolToObject(o, "priced", r->priced);
        cJSON_AddStringToObject(o, "layout", r->layout);
        cJSON_AddStringToObject(o, "note", r->note);
        cJSON *qs = cJSON_AddObjectToObject(o, "quantities");
        for (int q = 0; q < VR_Q_COUNT; q++) {
            if (isnan(r->meas[q])) continue;
            cJSON *x = cJSON_AddObjectToObject(qs, vr_quantity_names[q]);
            json_num(x, "predicted", r->pred[q]);
            json_num(x, "measured", r->meas[q]);
            json_num(x, "err_pct", vr_err(r, q) * 100);
            if (q == VR_TFLOPS) cJSON_AddStringToObject(x, "flop_convention", uly_flop_conv_name(r->flop_conv));
        }
        if (r->oom_meas >= 0) {
            cJSON *x = cJSON_AddObjectToObject(o, "oom");
            cJSON_AddBoolToObject(x, "measured", r->oom_meas);
            if (r->priced) cJSON_AddBoolToObject(x, "predicted", r->oom_pred);
            else cJSON_AddNullToObject(x, "predicted");
        }
    }
    cJSON *sum = cJSON_AddObjectToObject(root, "summary");
    for (int q = 0; q < VR_Q_COUNT; q++) {
        vr_stats st;
        vr_stats_of(s, q, &st);
        if (!st.count) continue;
        cJSON *x = cJSON_AddObjectToObject(sum, vr_quantity_names[q]);
        cJSON_AddNumberToObject(x, "count", st.count);
        json_num(x, "median_abs_err_pct", st.median_abs * 100);
        json_num(x, "max_abs_err_pct", st.max_abs * 100);
    }
    int oom[4], pairs, agree, ties;
    vr_oom_counts(s, oom);
    cJSON *o = cJSON_AddObjectToObject(root, "oom");
    cJSON_AddNumberToObject(o, "both", oom[0]);
    cJSON_AddNumberToObject(o, "measured_only", oom[1]);
    cJSON_AddNumberToObject(o, "predicted_only", oom[2]);
    cJSON_AddNumberToObject(o, "neither", oom[3]);
    vr_rank_counts(s, &pairs, &agree, &ties);
    cJSON *rk = cJSON_AddObjectToObject(root, "ranking");
    cJSON_AddNumberToObject(rk, "pairs", pairs);
    cJSON_AddNumberToObject(rk, "agree", agree);
    cJSON_AddNumberToObject(rk, "ties", ties); /* not in pairs: a tie orders nothing */
    cJSON *lim = cJSON_AddObjectToObject(root, "limits");
    json_num(lim, "max_median_err_pct", max_median_pct);
    json_num(lim, "max_err_pct", max_pct);
    cJSON_AddStringToObject(root, "result", isnan(max_median_pct) && isnan(max_pct) ? "no limits" : bad ? "FAIL" : "PASS");
    cJSON_AddStringToObject(root, "exceeded", what);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) return 1;
    fprintf(f, "%s\n", text);
    free(text);
    return 0;
}

int vr_print(const vr_set *s, sim_format fmt, double max_median_pct, double max_pct, FILE *f)
{
    char what[1024];
    const int bad = limits_exceeded(s, max_median_pct, max_pct, what, sizeof what);
    if (fmt == SIM_FMT_JSON) {
        if (print_json(s, max_median_pct, max_pct, bad, what, f)) return SIM_EXIT_INTERNAL;
    } else if (fmt == SIM_FMT_CSV) {
        print_csv(s, f);
    } else {
        print_table(s, f);
        if (isnan(max_median_pct) && isnan(max_pct))
            fprintf(f, "# result: no limits given (--max-error F, --max-run-error F)\n");
        else if (bad)
            fprintf(f, "# result: FAIL: %s\n", what);
        else {
            /* each limit given, and only those (a missing one printed "0") */
            char lim[2][64] = {"", ""};
            if (!isnan(max_median_pct)) snprintf(lim[0], sizeof lim[0], " median |error| <= %.3g%%", max_median_pct);
            if (!isnan(max_pct)) snprintf(lim[1], sizeof lim[1], "%s every |error| <= %.3g%%", lim[0][0] ? ";" : "",
                                          max_pct);
            fprintf(f, "# result: PASS (limits:%s%s)\n", lim[0], lim[1]);
        }
    }
    return bad ? 1 : 0;
}

int sim_validate_is_runs(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--runs") || !strncmp(argv[i], "--runs=", 7)) return 1;
    return 0;
}

/* The prefix of bad usage, as validate's other modes have it (cmd_validate.c). */
static const char *const WHO = "ulysim validate";

/* A limit, as every mode of validate takes it (val_limit_parse), as the
 * percent this mode computes in. The spellings before the modes shared
 * one convention took percent without its sign: refused, naming the one
 * that means the same. */
static int parse_limit(const char *flag, const char *v, double *pct_out)
{
    double frac = 0;
    if (val_limit_parse(flag, v, 1e4, &frac)) return SIM_EXIT_USAGE;
    *pct_out = frac * 100;
    return 0;
}

static int old_limit(const char *a, const char *v)
{
    char qb[80];
    const char *now = !strncmp(a, "--max-median-err", 16) ? "--max-error" : "--max-run-error";
    char *end = NULL;
    const double x = v ? strtod(v, &end) : NAN;
    if (v && end && !*end && x >= 0)
        sim_err_as(WHO, "%.*s %s: validate's limits are fractions in every mode now (valid: %s %g, or %s %g%%)",
                   (int)strcspn(a, "="), a, text_quote(v, qb, sizeof qb), now, x / 100, now, x);
    else
        sim_err_as(WHO, "%.*s: validate's limits are fractions in every mode now (valid: %s F, e.g. 0.1 or 10%%)",
                   (int)strcspn(a, "="), a, now);
    return SIM_EXIT_USAGE;
}

int sim_validate_runs(int argc, char **argv)
{
    static const char *const RUNS[] = {"--runs", NULL}, *const FORMAT[] = {"--format", NULL},
                             *const MEDIAN[] = {"--max-error", NULL}, *const MAX[] = {"--max-run-error", NULL},
                             *const OLD[] = {"--max-median-err", NULL}, *const OLD_MAX[] = {"--max-err", NULL};
    const char *path = NULL, *format = NULL, *median_v = NULL, *max_v = NULL;
    double max_median = NAN, max_err = NAN;
    sim_format fmt = SIM_FMT_TABLE;
    char qb[80];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int rc = 0, r = sim_opt_help(WHO, a); /* r < 0: an option misused, the message is out */
        if (r > 0) {
            usage(stdout);
            return 0;
        } else if (!r && (r = sim_opt_value(WHO, argc, argv, &i, RUNS, &path, &v)) > 0) {
            /* an empty one: refused below */
        } else if (!r && (r = sim_opt_value(WHO, argc, argv, &i, FORMAT, &format, &v)) > 0) {
            if (!strcmp(v, "table")) fmt = SIM_FMT_TABLE;
            else if (!strcmp(v, "csv")) fmt = SIM_FMT_CSV;
            else if (!strcmp(v, "json")) fmt = SIM_FMT_JSON;
            else {
                sim_err_as(WHO, "--format %s: unknown (valid: table, csv, json)", text_quote(v, qb, sizeof qb));
                return SIM_EXIT_USAGE;
            }
        } else if (!r && (r = sim_opt_value(WHO, argc, argv, &i, MEDIAN, &median_v, &v)) > 0) {
            rc = parse_limit(MEDIAN[0], v, &max_median);
        } else if (!r && (r = sim_opt_value(WHO, argc, argv, &i, MAX, &max_v, &v)) > 0) {
            rc = parse_limit(MAX[0], v, &max_err);
        } else if (!r && ((r = sim_opt_value(WHO, argc, argv, &i, OLD, NULL, &v)) > 0 ||
                          (r = sim_opt_value(WHO, argc, argv, &i, OLD_MAX, NULL, &v)) > 0)) {
            return old_limit(a, v);
        } else if (r) {
            return SIM_EXIT_USAGE;
        } else if (a[0] != '-' || !a[1]) {
            sim_err_as(WHO, "%s: a harness trace and --runs cannot be combined (valid: ulysim validate "
                       "RUN.trace... for ulyharness traces, or ulysim validate --runs FILE; see ulysim validate "
                       "--help)", text_quote(a, qb, sizeof qb));
            return SIM_EXIT_USAGE;
        } else {
            sim_err_as(WHO, "%s: not an option of validate --runs (valid: --runs FILE, --format table|csv|json, "
                       "--max-error F, --max-run-error F)", text_quote(a, qb, sizeof qb));
            return SIM_EXIT_USAGE;
        }
        if (rc) return rc;
    }
    if (!path || !path[0]) {
        sim_err_as(WHO, "--runs needs a file (valid: --runs FILE.csv or FILE.jsonl)");
        return SIM_EXIT_USAGE;
    }
    vr_set s;
    char why[1024];
    int rc = vr_load(path, &s, why, sizeof why);
    if (rc) {
        sim_err_as(WHO, "%s", why);
        return rc;
    }
    rc = vr_print(&s, fmt, max_median, max_err, stdout);
    vr_free(&s);
    return rc;
}
