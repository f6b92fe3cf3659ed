/* plot_fig_validation.c: `ulysim plot validation --runs FILE`: the measured
 * step time of each run of a runs file against the time the model predicts
 * for it (validate_runs.h prices the rows, as `ulysim validate --runs`
 * does), log-log, with y = x and a +-10% band (plots/validation-runs.gp), one
 * marker per strategy. Rows without a measured and a predicted step time
 * are left out with a note. */
#include <math.h>
#include <string.h>

#include "context.h"
#include "plot_fig.h"
#include "ulysim.h"
#include "validate_runs.h"

const figure fig_validation_runs_def = {
    .name = "validation-runs",
    .summary = "measured against predicted step time of the runs of a runs file",
    .def_gpus = "8", .def_seq = "128K", .def_spread = -1, .x_what = "--runs FILE",
    .data = fig_validation_runs};

int fig_validation_runs(plot_run *r, FILE *f)
{
    vr_set s;
    char why[1024];
    int rc = vr_load(r->runs_path, &s, why, sizeof why);
    if (rc) {
        sim_err("plot validation: %s", why);
        return rc;
    }
    fprintf(f, "# ulysim %s plot validation --runs: %s\n", ULY_VERSION, r->fig->summary);
    fprintf(f, "# command   %s\n", r->command);
    fprintf(f, "# runs      %s: %d rows, each priced as `ulysim plan` prices its flags (ulysim validate --runs)\n",
            s.path, s.n);
    fprintf(f, "# figure    one point per run: measured step time against predicted; the figure draws y = x and a "
               "+-10%% band\n");
    fprintf(f, "# columns   line: the row's line in the runs file; strategy; gpus; seq; layout: the best layout of "
               "the pins given; predicted_s, measured_s: step time [s]; err_pct: predicted / measured - 1 [%%]; "
               "point: the name written beside the point (the row's label, else its group, else its line); point_side: "
               "1 written right of the point, -1 left (a group's rows alternate); sidx, label, label_short: the "
               "strategy's place in the registry and its legend names\n");
    fprintf(f, "line,strategy,gpus,seq,layout,predicted_s,measured_s,err_pct,point,point_side,sidx,label,label_short\n");
    for (int i = 0; i < s.n; i++) {
        const vr_row *x = &s.rows[i];
        const uly_strategy *st = x->strategy;
        if (isnan(x->meas[VR_STEP]) || isnan(x->pred[VR_STEP])) {
            plot_note(r, "line %d (%s): %s", x->line, x->label[0] ? x->label : "no label",
                      isnan(x->meas[VR_STEP]) ? "no measured step_s" : "not priced");
            continue;
        }
        /* a point the reader can name: its label (else its group, else its
         * line); the rows of a group (22B full, 22B seqsel) lie side by
         * side, so they are named on alternate sides (point_side 1 right,
         * -1 left) */
        char point[160];
        int in_group = 0;
        for (int k = 0; k < i && x->group[0]; k++) in_group += strcmp(s.rows[k].group, x->group) == 0;
        if (x->label[0]) snprintf(point, sizeof point, "%s", x->label);
        else if (x->group[0]) snprintf(point, sizeof point, "%s", x->group);
        else snprintf(point, sizeof point, "line %d", x->line);
        for (char *q = point; *q; q++)
            if (*q == ',' || *q == '"' || (unsigned char)*q < 0x20) *q = ' ';
        fprintf(f, "%d,%s,%lld,%lld,%s,%.10g,%.10g,%.6f,%s,%d", x->line, st->name, (long long)x->gpus,
                (long long)x->seq, x->layout, x->pred[VR_STEP], x->meas[VR_STEP], vr_err(x, VR_STEP) * 100, point,
                in_group % 2 ? -1 : 1);
        plot_strategy_cells(f, st->id);
    }
    vr_free(&s);
    return 0;
}
