/* repro_selene.c: the Korthikanti et al. 2022 (arXiv 2205.05198) Table 5
 * iteration times on Selene, reproduced as data: the runs file
 * traces/published/korthikanti_table5_selene.csv priced by the validate
 * machinery (validate_runs.h) and printed with its errors beside Calculon's
 * on the same eight runs. Calculon (Isaev et al. 2023, "Calculon: a
 * Methodology and Tool for High-Level Codesign of Systems and Large Language
 * Models", SC 2023) was run on its own validation inputs for these runs: mean
 * |error| 3.65%, largest 8.87% (docs/reproduce.md). Nothing here tunes the
 * model: the rows are priced as `ulysim plan` prices their flags. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "output.h"
#include "repro.h"
#include "validate_runs.h"

#ifndef ULY_PUBLISHED_DIR_SOURCE
#define ULY_PUBLISHED_DIR_SOURCE "traces/published"
#endif
#ifndef ULY_PUBLISHED_DIR_INSTALLED
#define ULY_PUBLISHED_DIR_INSTALLED "/usr/local/share/ulysim/published"
#endif

#define SELENE_FILE "korthikanti_table5_selene.csv"
#define SELENE_EXP "korthikanti.table5"
/* Calculon's accuracy on the same eight runs, measured by running its own
 * validation (mean and largest |error| of the iteration time, percent). */
#define CALCULON_MEAN_PCT 3.65
#define CALCULON_MAX_PCT 8.87

void rp_published_path(const char *file, char *out, size_t n)
{
    const char *env = getenv("ULYSIM_PUBLISHED");
    struct stat st;
    const char *dir = env && env[0] ? env
                      : stat(ULY_PUBLISHED_DIR_SOURCE, &st) == 0 ? ULY_PUBLISHED_DIR_SOURCE
                                                                  : ULY_PUBLISHED_DIR_INSTALLED;
    snprintf(out, n, "%s/%s", dir, file);
}

/* The runs file priced, and its mean |error| of the iteration times (percent,
 * over the n rows with a prediction). 0, or the exit status after a message. */
static int selene_load(vr_set *s, double *mean, int *n, vr_stats *st)
{
    char path[1200], why[1024];
    rp_published_path(SELENE_FILE, path, sizeof path);
    int rc = vr_load(path, s, why, sizeof why);
    if (rc) {
        sim_err("reproduce: %s", why);
        return rc;
    }
    double sum = 0;
    *n = 0;
    for (int i = 0; i < s->n; i++) {
        const double e = vr_err(&s->rows[i], VR_STEP);
        if (!isnan(e)) {
            sum += fabs(e);
            (*n)++;
        }
    }
    vr_stats_of(s, VR_STEP, st);
    *mean = *n ? sum / *n * 100 : NAN;
    return 0;
}

int rp_selene_print(int csv, int first, FILE *f)
{
    vr_set s;
    vr_stats st;
    double mean;
    int n;
    const int rc = selene_load(&s, &mean, &n, &st);
    if (rc) return rc;
    if (csv) {
        /* the columns of reproduce's CSV: shown, not checked */
        for (int i = 0; i < s.n; i++) {
            const vr_row *r = &s.rows[i];
            const double e = vr_err(r, VR_STEP);
            fprintf(f, "korthikanti.table5,%s,Table 5 on Selene: %s: iteration time,s,", r->label, r->label);
            if (!isnan(r->pred[VR_STEP])) fprintf(f, "%.10g", r->pred[VR_STEP]);
            fprintf(f, ",%.10g,", r->meas[VR_STEP]);
            if (!isnan(e)) fprintf(f, "%.10g", e * 100);
            fprintf(f, ",-,,shown,,%s %s,\n", r->strategy->name, r->layout);
        }
        fprintf(f, "korthikanti.table5,mean_abs_err,Table 5 on Selene: mean |error| of the iteration times (Calculon: "
                   "%.2f%%),%%,%.10g,%.2f,,-,,shown,,,\n", CALCULON_MEAN_PCT, mean, CALCULON_MEAN_PCT);
        fprintf(f, "korthikanti.table5,max_abs_err,Table 5 on Selene: largest |error| of the iteration times (Calculon: "
                   "%.2f%%),%%,%.10g,%.2f,,-,,shown,,,\n", CALCULON_MAX_PCT, st.max_abs * 100, CALCULON_MAX_PCT);
        vr_free(&s);
        return 0;
    }
    fprintf(f, "%s# Korthikanti et al. 2022 (arXiv 2205.05198) Table 5: iteration time on Selene (DGX A100 80GB, "
               "dgx-a100-80g), fp16,\n#   sequence 2048; full = megatron-tp --recompute full, seqsel = megatron-sp "
               "--recompute selective; the runs file\n#   traces/published/%s, priced by `ulysim validate --runs` (shown, "
               "not checked)\n", first ? "" : "\n\n", SELENE_FILE);
    fprintf(f, "# %-12s %5s %-20s %11s %10s %8s\n", "run", "gpus", "layout", "time_s_pred", "time_s_pub", "err_pct");
    for (int i = 0; i < s.n; i++) {
        const vr_row *r = &s.rows[i];
        const double e = vr_err(r, VR_STEP);
        char pred[32] = "-", err[32] = "-";
        if (!isnan(r->pred[VR_STEP])) snprintf(pred, sizeof pred, "%.2f", r->pred[VR_STEP]);
        if (!isnan(e)) snprintf(err, sizeof err, "%+.1f", e * 100);
        fprintf(f, "  %-12s %5lld %-20s %11s %10.2f %8s\n", r->label, (long long)r->gpus, r->layout, pred,
                r->meas[VR_STEP], err);
    }
    fprintf(f, "# |error| of the iteration times over the %d runs: ulysim mean %.2f%%, median %.2f%%, largest %.2f%%;\n"
               "#   Calculon (Isaev et al. 2023) on the same %d runs, measured by running its own validation: mean "
               "%.2f%%, largest %.2f%%\n",
            n, mean, st.median_abs * 100, st.max_abs * 100, s.n, CALCULON_MEAN_PCT, CALCULON_MAX_PCT);
    vr_free(&s);
    return 0;
}

int rp_selene_json(cJSON *exps)
{
    vr_set s;
    vr_stats st;
    double mean;
    int n;
    int bad = selene_load(&s, &mean, &n, &st);
    if (bad) return bad;
    cJSON *o = cJSON_CreateObject(), *rows = cJSON_CreateArray();
    bad |= sim_json_add(o, "id", cJSON_CreateString(SELENE_EXP));
    bad |= sim_json_add(o, "title", cJSON_CreateString("Korthikanti et al. 2022 (arXiv 2205.05198) Table 5: iteration "
                                                       "time on Selene (DGX A100 80GB), fp16, sequence 2048"));
    bad |= sim_json_add(o, "cluster", cJSON_CreateString("dgx-a100-80g"));
    bad |= sim_json_add(o, "cluster_given", cJSON_CreateBool(0));
    bad |= sim_json_add(o, "runs_file", cJSON_CreateString(SELENE_FILE));
    /* one row per run, then the summary beside Calculon's: shown, not checked */
    for (int i = 0; i <= s.n + 1; i++) {
        rp_row x = {.exp = SELENE_EXP, .unit = "s", .check = RP_INFO, .status = RP_SHOWN};
        if (i < s.n) {
            const vr_row *r = &s.rows[i];
            SETF(x.id, "%.63s", r->label);
            SETF(x.label, "Table 5 on Selene: %.90s: iteration time", r->label);
            x.pred = r->pred[VR_STEP];
            x.pub = r->meas[VR_STEP];
            SETF(x.setup, "%s %s", r->strategy->name, r->layout);
            SETF(x.note, "%.479s", r->note);
        } else {
            const int is_mean = i == s.n;
            x.unit = "%";
            SETF(x.id, "%s", is_mean ? "mean_abs_err" : "max_abs_err");
            SETF(x.label, "Table 5 on Selene: %s |error| of the iteration times (Calculon: %.2f%%)",
                 is_mean ? "mean" : "largest", is_mean ? CALCULON_MEAN_PCT : CALCULON_MAX_PCT);
            x.pred = is_mean ? mean : st.max_abs * 100;
            x.pub = is_mean ? CALCULON_MEAN_PCT : CALCULON_MAX_PCT;
            SETF(x.note, "published: Calculon's (Isaev et al. 2023) on the same %d runs, measured by running its own "
                 "validation", s.n);
        }
        bad |= rp_json_row(rows, &x);
        /* Calculon's numbers are not what ulysim predicts: no error, as in the CSV */
        if (i >= s.n && !bad)
            bad |= !cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetArrayItem(rows, i), "error", cJSON_CreateNull());
    }
    bad |= sim_json_add(o, "rows", rows);
    bad |= sim_json_add(exps, NULL, o);
    vr_free(&s);
    return bad;
}
