/* repro_plot.c: `ulysim reproduce -o DIR`: the comparison data files
 * (reproduce_*.dat) and their gnuplot renderings (reproduce_*.png) with the
 * scripts plots/reproduce_*.gp. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "args.h"
#include "out_file.h"
#include "output.h"
#include "plot_gnuplot.h"
#include "repro.h"

/* One data line: the quoted label, then the numbers (NaN: none), then,
 * when why is given, the missing bar's slot offset and why it is missing. */
static void dat_line(FILE *f, const char *label, const double *v, int n, double why_x, const char *why)
{
    fprintf(f, "\"%s\"", label);
    for (int i = 0; i < n; i++) {
        if (isnan(v[i])) fputs(" NaN", f);
        else fprintf(f, " %.6g", v[i]);
    }
    if (why) {
        if (isnan(why_x)) fputs(" NaN", f);
        else fprintf(f, " %.2f", why_x);
        fprintf(f, " \"%s\"", why);
    }
    fputc('\n', f);
}

static int dat_ulysses(const rp_ctx *c, FILE *f)
{
    fprintf(f, "# ulysim reproduce: DeepSpeed-Ulysses Tables 2-3, GPT-7B on A100 40GB; predicted (model) and "
               "published\n");
    fprintf(f, "# label time_s_pub time_s_pred tflops_pub tflops_pred\n");
    for (int i = 0; i < c->n_uly_tab; i++) {
        char s[16], label[64];
        sim_size_str(c->uly_tab[i].seq, s, sizeof s);
        snprintf(label, sizeof label, "%s %s/%lld", c->uly_tab[i].table, s, (long long)c->uly_tab[i].gpus);
        const double v[4] = {c->uly_tab[i].pub_s, c->uly_tab[i].pred_s, c->uly_tab[i].pub_tf, c->uly_tab[i].pred_tf};
        dat_line(f, label, v, 4, NAN, NULL);
    }
    return ferror(f) ? 1 : 0;
}

/* The note of the report row `id` (NULL when none): why a value is missing. */
static const char *row_note(const rp_ctx *c, const char *id)
{
    for (int i = 0; i < c->r.n; i++)
        if (!strcmp(c->r.v[i].id, id)) return c->r.v[i].note[0] ? c->r.v[i].note : NULL;
    return NULL;
}

/* Why a table cell has no bar, short enough to stand in its slot: a
 * published NaN is the paper's out-of-memory cell; a predicted one the
 * model's reason (its note, up to the first parenthesis). */
static void missing_why(const rp_ctx *c, int k, const char *series, const double v[2], char *b, size_t n)
{
    char id[96], why[200] = "";
    b[0] = 0;
    if (!isnan(v[0]) && !isnan(v[1])) return;
    snprintf(id, sizeof id, "P%lld.b%lld.n%lld.%s_mem", (long long)c->rsa_tab[k].p, (long long)c->rsa_tab[k].batch,
             (long long)c->rsa_tab[k].seq, series);
    const char *note = row_note(c, id), *colon = note ? strstr(note, ": ") : NULL;
    snprintf(why, sizeof why, "%s", colon ? colon + 2 : "no layout");
    char *paren = strstr(why, " (");
    if (paren) *paren = 0;
    snprintf(b, n, "%s: %s%s%s", series[0] == 't' ? "TP" : "SP", isnan(v[0]) ? "out of memory in the paper" : "",
             isnan(v[0]) && isnan(v[1]) ? "; " : "", isnan(v[1]) ? "model: " : "");
    if (isnan(v[1])) snprintf(b + strlen(b), n - strlen(b), "%s", why);
}

static int dat_rsa(const rp_ctx *c, FILE *f)
{
    fprintf(f, "# ulysim reproduce: RSA Table 4, BERT Base on P100 16GB, pipeline 8; memory per GPU in MiB\n");
    fprintf(f, "# block 0: batch scaling (seq 512); block 1: sequence scaling (batch 64)\n");
    fprintf(f, "# label tp_pub tp_pred sp_pub sp_pred why_x why: why_x is the offset of the first missing bar's\n"
               "# slot in its cluster (NaN: no bar missing), why says why it is missing\n");
    for (int blk = 0; blk < 2; blk++) {
        if (blk) fputs("\n\n", f);
        for (int i = 0; i < c->n_rsa_tab; i++) {
            const int seq_scaling = c->rsa_tab[i].batch == 64 && !(c->rsa_tab[i].p == 1 && c->rsa_tab[i].seq == 512);
            if (seq_scaling != blk) continue;
            char label[64];
            snprintf(label, sizeof label, "P%lld b%lld N%lld", (long long)c->rsa_tab[i].p,
                     (long long)c->rsa_tab[i].batch, (long long)c->rsa_tab[i].seq);
            const double v[4] = {c->rsa_tab[i].tp_pub, c->rsa_tab[i].tp_pred, c->rsa_tab[i].sp_pub,
                                 c->rsa_tab[i].sp_pred};
            char tp[160], sp[160], why[330];
            missing_why(c, i, "tp", v, tp, sizeof tp);
            missing_why(c, i, "sp", v + 2, sp, sizeof sp);
            snprintf(why, sizeof why, "%s%s%s", tp, tp[0] && sp[0] ? "; " : "", sp);
            /* four bars 0.2 apart around the cluster's centre (histogram gap 1) */
            int first = -1;
            for (int k = 3; k >= 0; k--)
                if (isnan(v[k])) first = k;
            dat_line(f, label, v, 4, first < 0 ? NAN : (first - 1.5) * 0.2, why);
        }
    }
    return ferror(f) ? 1 : 0;
}

static int dat_claims(const rp_ctx *c, FILE *f)
{
    fprintf(f, "# ulysim reproduce: headline ratios, published and predicted (x); yes/no claims left out\n");
    fprintf(f, "# label published predicted\n");
    for (int i = 0; i < c->r.n; i++) {
        const rp_row *x = &c->r.v[i];
        const int claim = !strcmp(x->exp, rp_experiments[RP_EXP_ULY_CLAIMS].id) ||
                          !strcmp(x->exp, rp_experiments[RP_EXP_RSA_CLAIMS].id);
        if (!claim) continue;
        if (strcmp(x->unit, "x") || !x->accept) continue;
        const double v[2] = {x->pub, x->pred};
        dat_line(f, x->id, v, 2, NAN, NULL);
    }
    return ferror(f) ? 1 : 0;
}

/* The data and its image, as a pair: the data goes to a temporary that
 * gnuplot reads, and both are renamed into place only once the image is
 * whole, so a failed rendering leaves an earlier pair as it was rather
 * than new data beside an old image. */
static int render(const char *dir, const char *name, int (*fn)(const rp_ctx *, FILE *), const rp_ctx *c)
{
    char dat[4200], png[4200], script[4200], vars[9000];
    snprintf(dat, sizeof dat, "%s/%s.dat", dir, name);
    snprintf(png, sizeof png, "%s/%s.png", dir, name);
    if (sim_gnuplot_script_find(NULL, name, script, sizeof script)) {
        char dirs[9000];
        sim_gnuplot_script_dirs(dirs, sizeof dirs);
        sim_err("reproduce: no gnuplot script %s.gp (looked in $ULYSIM_PLOTS, %s); %s and %s not written", name, dirs,
                dat, png);
        return 1;
    }
    out_file data, img;
    char why[4400];
    int rc = out_file_open(&data, dat, OUT_FILE_STREAM, why, sizeof why);
    if (rc) {
        sim_err("reproduce: %s", why);
        return rc;
    }
    if (fn(c, data.fp) || fflush(data.fp) != 0) {
        out_file_discard(&data);
        sim_err("reproduce: cannot write %s: %s", dat, strerror(errno));
        return 1;
    }
    rc = out_file_open(&img, png, OUT_FILE_BY_NAME, why, sizeof why);
    if (rc) {
        out_file_discard(&data);
        sim_err("reproduce: %s", why);
        return rc;
    }
    /* gnuplot reads the data's temporary (or the path, written in place)
     * and writes the image's temporary: never half an image under the
     * final name */
    vars[0] = 0;
    if (sim_gnuplot_assign(vars, sizeof vars, "datafile", data.tmp[0] ? data.tmp : dat) ||
        sim_gnuplot_assign(vars, sizeof vars, "outfile", img.tmp)) {
        out_file_discard(&img);
        out_file_discard(&data);
        sim_err("reproduce: path too long: %s", dat);
        return 1;
    }
    if (sim_gnuplot_run("reproduce", vars, script)) {
        out_file_discard(&img);
        out_file_discard(&data);
        sim_err("reproduce: %s and %s not written (any earlier pair is left as it was)", dat, png);
        return 1;
    }
    if (!sim_image_whole(img.tmp, "png")) {
        out_file_discard(&img);
        out_file_discard(&data);
        sim_err("reproduce: gnuplot wrote no whole %s (a full disk?); %s not written either", png, dat);
        return 1;
    }
    if (out_file_commit(&data, "", why, sizeof why)) {
        out_file_discard(&img);
        sim_err("reproduce: %s", why);
        return 1;
    }
    if (out_file_commit(&img, "", why, sizeof why)) {
        sim_err("reproduce: %s", why);
        return 1;
    }
    return 0;
}

int rp_plot_dir_ready(const char *dir)
{
    struct stat st;
    /* a bad -o is bad usage (2), found before any work or output */
    if (stat(dir, &st) != 0) {
        if (mkdir(dir, 0777) != 0) {
            sim_err("reproduce: cannot create -o directory '%s': %s (valid: a directory, or a new one's path in an "
                    "existing writable directory)", dir, strerror(errno));
            return 2;
        }
    } else if (!S_ISDIR(st.st_mode)) {
        sim_err("reproduce: -o '%s' is not a directory (valid: a directory, or a new one's path in an existing "
                "writable directory)", dir);
        return 2;
    }
    return 0;
}

int rp_plots(const rp_ctx *c, const char *dir)
{
    /* the first figure that fails ends the run with its status, one message */
    int rc = 0;
    if (c->run[RP_PAPER_ULYSSES]) rc = render(dir, "reproduce_ulysses", dat_ulysses, c);
    if (!rc && c->run[RP_PAPER_RSA]) rc = render(dir, "reproduce_rsa", dat_rsa, c);
    if (!rc) rc = render(dir, "reproduce_claims", dat_claims, c);
    return rc;
}
