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

#include "repro.h"
#include "validate_runs.h"

#ifndef ULY_PUBLISHED_DIR_SOURCE
#define ULY_PUBLISHED_DIR_SOURCE "traces/published"
#endif
#ifndef ULY_PUBLISHED_DIR_INSTALLED
#define ULY_PUBLISHED_DIR_INSTALLED "/usr/local/share/ulysim/published"
#endif

#define SELENE_FILE "korthikanti_table5_selene.csv"
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

int rp_selene_print(int csv, int first, FILE *f)
{
    char path[1200], why[1024];
    rp_published_path(SELENE_FILE, path, sizeof path);
    vr_set s;
    int rc = vr_load(path, &s, why, sizeof why);
    if (rc) {
        sim_err("reproduce: %s", why);
        return rc;
    }
    double sum = 0;
    int n = 0;
    for (int i = 0; i < s.n; i++) {
        const double e = vr_err(&s.rows[i], VR_STEP);
        if (!isnan(e)) {
            sum += fabs(e);
            n++;
        }
    }
    vr_stats st;
    vr_stats_of(&s, VR_STEP, &st);
    const double mean = n ? sum / n * 100 : NAN;
    if (csv) {
        /* the columns of reproduce's CSV: shown, not checked */
        for (int i = 0; i < s.n; i++) {
            const vr_row *r = &s.rows[i];
            const double e = vr_err(r, VR_STEP);
            fprintf(f, "korthikanti.table5,%s,Table 5 on Selene: %s: iteration time,s,", r->label, r->label);
            if (!isnan(r->pred[VR_STEP])) fprintf(f, "%.10g", r->pred[VR_STEP]);
            fprintf(f, ",%.10g,", r->meas[VR_STEP]);
            if (!isnan(e)) fprintf(f, "%.10g", e * 100);
            fprintf(f, ",-,,shown,,%s %s,\n", uly_strategy_get((uly_strategy_id)r->strategy)->name, r->layout);
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
