/* calib_profile.c: the cluster profile `ulysim calibrate` writes: the base
 * profile (a preset or file) re-read, the fitted links and compute rates put
 * in place with a source line each saying what they were fitted to, checked
 * to load through the preset loader, then written. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "calib_cmd.h"
#include "out_file.h"
#include "preset.h"

static char *read_text(const char *path, size_t cap)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    char *buf = malloc(cap + 1);
    size_t n = buf ? fread(buf, 1, cap, fp) : 0;
    fclose(fp);
    if (!buf) return NULL;
    buf[n] = 0;
    return buf;
}

/* Bins' rates over peak (peak <= 0: the best bin's) as a profile's curve. */
static cJSON *curve_json(const calib_bin *b, int n, double peak)
{
    uly_curve c;
    calib_curve_rel(b, n, peak, &c);
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < c.n; i++) {
        cJSON *p = cJSON_CreateArray();
        cJSON_AddItemToArray(p, cJSON_CreateNumber(c.x[i]));
        cJSON_AddItemToArray(p, cJSON_CreateNumber(c.eff[i]));
        cJSON_AddItemToArray(a, p);
    }
    return a;
}

void calib_profile_set(cJSON *o, const char *k, cJSON *v)
{
    if (cJSON_GetObjectItemCaseSensitive(o, k)) cJSON_ReplaceItemInObjectCaseSensitive(o, k, v);
    else cJSON_AddItemToObject(o, k, v);
}

/* gpu.KEY as an object (created when absent). */
static cJSON *gpu_object(cJSON *gpu, const char *key)
{
    cJSON *o = cJSON_GetObjectItemCaseSensitive(gpu, key);
    if (!cJSON_IsObject(o)) {
        o = cJSON_CreateObject();
        calib_profile_set(gpu, key, o);
    }
    return o;
}

void calib_profile_source(cJSON *root, const char *k, const char *text)
{
    cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "sources");
    if (!cJSON_IsObject(s)) {
        s = cJSON_CreateObject();
        calib_profile_set(root, "sources", s);
    }
    char buf[4000];
    snprintf(buf, sizeof buf, "%s", text);
    calib_profile_set(s, k, cJSON_CreateString(buf));
}

/* file names for "sources": "a, b, c (and N more)" */
static void list_files(char *out, size_t n, const trace_run *r, int cnt)
{
    size_t o = 0;
    out[0] = 0;
    for (int i = 0; i < cnt && o + 1 < n; i++) {
        if (o > 600) {
            snprintf(out + o, n - o, " and %d more", cnt - i);
            break;
        }
        int w = snprintf(out + o, n - o, "%s%s", i ? ", " : "", calib_base_name(r[i].path));
        if (w < 0) break;
        o += (size_t)w;
    }
}

/* What the sources of the profile say: the date and the files. */
typedef struct cal_src {
    char date[32], files[1024], kfiles[1024];
} cal_src;

/* The name, description, node layout and links of the profile. */
static void profile_links(cJSON *root, const cal_args *a, const uly_cluster *bc, const cal_links *L,
                          const cal_src *S, const char *nm, const char *kern_blas_core)
{
    const calib_links *F = &L->F;
    const uly_cluster *cal = &L->cal;
    const int ranks = L->ranks;
    const trace_run *m0 = &L->mb[0];
    char buf[4000];
    calib_profile_set(root, "name", cJSON_CreateString(nm));
    snprintf(buf, sizeof buf, "%s, calibrated for %d ranks on one host by ulysim calibrate (%s)", bc->name, ranks,
             S->date);
    calib_profile_set(root, "description", cJSON_CreateString(buf));
    snprintf(buf, sizeof buf, "ulysim calibrate on %s from ulyharness traces of %s (%s; %s): links fitted to %s%s%s",
             S->date, m0->hostname[0] ? m0->hostname : "?", m0->cpu_model, m0->mpi_library, S->files,
             a->n_k ? "; compute fitted to " : "; compute kept from the base profile ", a->n_k ? S->kfiles : bc->name);
    calib_profile_set(root, "source", cJSON_CreateString(buf));
    /* the links are fitted to the Hockney formulas: a base priced by NCCL
     * hands on its GPU and its "collectives" is set back (absent: Hockney) */
    if (cJSON_GetObjectItemCaseSensitive(root, "collectives")) {
        calib_profile_set(root, "collectives", cJSON_CreateString("hockney"));
        calib_profile_source(root, "collectives", "ulysim calibrate fits the Hockney formulas (docs/model.md, Collective costs)");
    }
    calib_profile_set(root, "nodes", cJSON_CreateNumber(1));
    calib_profile_set(root, "gpus_per_node", cJSON_CreateNumber(ranks));
    snprintf(buf, sizeof buf, "the rank count of the micro-benchmarks (%s): ranks share the host's %d cores, so every "
                              "rate below is per rank at this count",
             S->files, m0->cores_online);
    calib_profile_source(root, "gpus_per_node", buf);
    /* the host the rates are of, for ulysim validate to compare with a
     * trace's (validate_host.c): the micro-benchmark's CPU and cores, the
     * kernel runs' OpenBLAS kernel set (they measured the GEMMs) */
    cJSON *host = cJSON_CreateObject();
    cJSON_AddStringToObject(host, "cpu_model", m0->cpu_model);
    cJSON_AddNumberToObject(host, "cores", m0->cores_online > 0 ? m0->cores_online : 1);
    cJSON_AddNumberToObject(host, "ranks", ranks);
    const char *blas = a->n_k && kern_blas_core[0] ? kern_blas_core : m0->blas_core;
    if (blas[0]) cJSON_AddStringToObject(host, "blas_core", blas);
    calib_profile_set(root, "host", host);
    snprintf(buf, sizeof buf, "the host of the micro-benchmarks (%s: hardware.cpu_model and cores_online)%s%s", S->files,
             blas[0] ? "; blas_core: the OpenBLAS kernel set of the " : "", blas[0] ? (a->n_k ? "kernel runs" : "micro-benchmark") : "");
    calib_profile_source(root, "host", buf);
    cJSON *intra = cJSON_GetObjectItemCaseSensitive(root, "intra");
    cJSON *inter = cJSON_GetObjectItemCaseSensitive(root, "inter");
    cJSON *gpu = cJSON_GetObjectItemCaseSensitive(root, "gpu");
    if (F->used[CALIB_LAT_INTRA] && cJSON_IsObject(intra)) {
        calib_profile_set(intra, "bw_GBps_per_dir", cJSON_CreateNumber(round(cal->intra_bw_Bps / 1e9 * 1e4) / 1e4));
        calib_profile_set(intra, "lat_us", cJSON_CreateNumber(round(cal->intra_lat_s * 1e6 * 1e3) / 1e3));
        snprintf(buf, sizeof buf,
                 "ulysim calibrate %s: 1/beta of a weighted least-squares fit (relative residuals) of "
                 "uly_cost_collective to %d points (alltoall, allgather, reduce_scatter, allreduce, sendrecv) of %s: "
                 "%.4f +- %.4f ns/B; median |residual| %.1f%%",
                 S->date, L->n, S->files, 1e9 * F->val[CALIB_INVBW_INTRA], 1e9 * F->se[CALIB_INVBW_INTRA],
                 100 * L->med_res);
        calib_profile_source(root, "intra.bw_GBps_per_dir", buf);
        if (F->fixed0[CALIB_LAT_INTRA])
            snprintf(buf, sizeof buf, "ulysim calibrate %s: alpha of the same fit came out %.3f us (not positive), "
                                      "fixed at 0 and the fit repeated", S->date, 1e6 * F->free_val[CALIB_LAT_INTRA]);
        else
            snprintf(buf, sizeof buf, "ulysim calibrate %s: alpha of the same fit, %.3f +- %.3f us per step", S->date,
                     1e6 * F->val[CALIB_LAT_INTRA], 1e6 * F->se[CALIB_LAT_INTRA]);
        calib_profile_source(root, "intra.lat_us", buf);
    }
    if (F->used[CALIB_LAT_INTER] && cJSON_IsObject(inter)) {
        calib_profile_set(inter, "nic_GBps_per_gpu", cJSON_CreateNumber(round(cal->nic_bw_Bps / 1e9 * 1e4) / 1e4));
        calib_profile_set(inter, "lat_us", cJSON_CreateNumber(round(cal->nic_lat_s * 1e6 * 1e3) / 1e3));
        snprintf(buf, sizeof buf, "ulysim calibrate %s: fitted with the in-node tier to %s", S->date, S->files);
        calib_profile_source(root, "inter.nic_GBps_per_gpu", buf);
        calib_profile_source(root, "inter.lat_us", buf);
    } else if (cJSON_IsObject(inter) && F->used[CALIB_LAT_INTRA] && bc->nodes <= 1) {
        /* one host: the base sets the unused NIC equal to the in-node rate */
        calib_profile_set(inter, "nic_GBps_per_gpu", cJSON_CreateNumber(round(cal->intra_bw_Bps / 1e9 * 1e4) / 1e4));
        calib_profile_set(inter, "lat_us", cJSON_CreateNumber(round(cal->intra_lat_s * 1e6 * 1e3) / 1e3));
        calib_profile_set(inter, "gpus_per_leaf", cJSON_CreateNumber(ranks));
        calib_profile_source(root, "inter.nic_GBps_per_gpu", "Unused: one host; set equal to the fitted in-node rate");
        calib_profile_source(root, "inter.lat_us", "Unused: one host; set equal to the fitted in-node latency");
        calib_profile_source(root, "inter.gpus_per_leaf", "Unused: one host; all ranks");
    }
    if (cJSON_IsObject(gpu) && bc->gpus_per_node != ranks) {
        const double hbm = bc->gpu.hbm_bytes / 1073741824.0 * (double)bc->gpus_per_node / ranks;
        calib_profile_set(gpu, "hbm_gib", cJSON_CreateNumber(round(hbm * 100) / 100));
        snprintf(buf, sizeof buf, "%s's per-rank memory for %lld ranks scaled to %d ranks sharing the host", bc->name,
                 (long long)bc->gpus_per_node, ranks);
        calib_profile_source(root, "gpu.hbm_gib", buf);
    }
    /* the overlap the executor achieves, from the micro-benchmark's overlap
     * line (the first run that has one): how much of a ring hop hides under
     * compute, and how much that compute slows meanwhile */
    for (int f = 0; f < L->n_mb; f++) {
        const trace_run *m = &L->mb[f];
        if (!m->has_overlap) continue;
        calib_profile_set(root, "overlap", cJSON_CreateNumber(round(m->overlap * 1e3) / 1e3));
        snprintf(buf, sizeof buf, "Measured by ulyharness --microbench (%s, %d ranks): a ring hop alone %.3f ms, "
                                  "compute alone %.3f ms, both at once with MPI_Testall between the compute chunks: "
                                  "the share of min(hop, compute) that did not show as a wait after the compute",
                 calib_base_name(m->path), m->ranks, 1e3 * m->overlap_transfer_s, 1e3 * m->overlap_compute_s);
        calib_profile_source(root, "overlap", buf);
        if (cJSON_IsObject(gpu)) {
            calib_profile_set(gpu, "comm_slowdown", cJSON_CreateNumber(round(m->overlap_slowdown * 1e3) / 1e3));
            snprintf(buf, sizeof buf, "Measured by the same micro-benchmark (%s): how much longer the compute ran per "
                                      "second of hop hidden under it (the rank's core copies the bytes inside the "
                                      "progress calls)", calib_base_name(m->path));
            calib_profile_source(root, "gpu.comm_slowdown", buf);
        }
        break;
    }
}

/* The compute rates and curves of the profile, where kernel runs gave them. */
static void profile_compute(cJSON *root, const cal_compute *C, const cal_src *S)
{
    cJSON *gpu = cJSON_GetObjectItemCaseSensitive(root, "gpu");
    if (!C->n_k || !cJSON_IsObject(gpu)) return;
    char buf[4000];
    if (C->peak > 0 && C->n_gb > 0) {
        cJSON *pk = cJSON_GetObjectItemCaseSensitive(gpu, "peak_tflops");
        if (cJSON_IsObject(pk)) calib_profile_set(pk, uly_dtype_name(ULY_FP32), cJSON_CreateNumber(C->peak / 1e12));
        snprintf(buf, sizeof buf, "ulysim calibrate %s: the best per-rank rate of the compute ops of %s (%d ranks, "
                                  "%d threads)%s: %.3f GFLOP/s; bf16/fp16 as the base",
                 S->date, S->kfiles, C->k_ranks, C->kr[0].threads,
                 C->share != 1.0 ? ", times the share of the cores" : "", C->peak / 1e9);
        calib_profile_source(root, "gpu.peak_tflops", buf);
        calib_profile_set(gpu, "gemm_eff", curve_json(C->gb, C->n_gb, C->peak));
        snprintf(buf, sizeof buf, "ulysim calibrate %s: %d GEMM ops of %s in %d bins of cube root of m*n*k; each "
                                  "point a rate fitted with relative residuals (gsl_fit_wmul), over the peak",
                 S->date, C->gemm.n, S->kfiles, C->n_gb);
        calib_profile_source(root, "gpu.gemm_eff", buf);
        int na = 0, any_a = 0;
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) any_a |= C->n_ab[a][b] > 0;
        if (any_a) {
            cJSON *ae = gpu_object(gpu, "attn_eff");
            for (int a = 0; a < 2; a++)
                for (int b = 0; b < 2; b++)
                    if (C->n_ab[a][b]) {
                        calib_profile_set(ae, calib_attn_name[a][b], curve_json(C->ab[a][b], C->n_ab[a][b], C->peak));
                        na += C->attn[a][b].n;
                    }
            snprintf(buf, sizeof buf, "ulysim calibrate %s: %d flash-attention ops (forward and backward) of %s, "
                                      "binned by key/value rows per block; curves not measured keep the base's",
                     S->date, na, S->kfiles);
            calib_profile_source(root, "gpu.attn_eff", buf);
        }
        /* the backward's own curves, where some class has two bins or more
         * (one bin is a ratio, which attn_bwd_rel already carries) */
        int nb = 0;
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++)
                if (C->n_abw[a][b] > 1) {
                    calib_profile_set(gpu_object(gpu, "attn_bwd_eff"), calib_attn_name[a][b],
                             curve_json(C->abw[a][b], C->n_abw[a][b], C->peak));
                    nb += C->attn_bwd[a][b].n;
                }
        if (nb) {
            snprintf(buf, sizeof buf, "ulysim calibrate %s: %d flash-attention backward ops of %s, binned by "
                                      "key/value rows per block, over the peak: the backward priced on its own "
                                      "curve (attn_bwd_rel applies only to classes without one)",
                     S->date, nb, S->kfiles);
            calib_profile_source(root, "gpu.attn_bwd_eff", buf);
        }
    }
    if (C->elem.n && C->e_rate > 0) {
        calib_profile_set(gpu, "hbm_bw_GBps", cJSON_CreateNumber(round(C->e_rate / 1e9 * 1e4) / 1e4));
        calib_profile_set(gpu, "mem_eff", cJSON_CreateNumber(1));
        snprintf(buf, sizeof buf, "ulysim calibrate %s: one rate for the %d elementwise ops of %s (bytes_touched / "
                                  "time, relative residuals): %.3f +- %.3f GB/s, median |residual| %.0f%%",
                 S->date, C->elem.n, S->kfiles, C->e_rate / 1e9, C->e_se / 1e9, 100 * C->e_res);
        calib_profile_source(root, "gpu.hbm_bw_GBps", buf);
        calib_profile_source(root, "gpu.mem_eff", "hbm_bw_GBps is itself the fitted elementwise rate");
    }
    const double rel = calib_logmean_gmean(&C->rel);
    if (C->rel.n && rel > 0) {
        calib_profile_set(gpu, "attn_bwd_rel", cJSON_CreateNumber(round(rel * 1e4) / 1e4));
        snprintf(buf, sizeof buf, "ulysim calibrate %s: the %d flash-attention backward ops of %s: rate over the "
                                  "forward curve's at the same key, geometric mean %.4f (sd of log %.3f)",
                 S->date, C->rel.n, S->kfiles, rel, calib_logmean_sd(&C->rel));
        calib_profile_source(root, "gpu.attn_bwd_rel", buf);
    }
    static const char *const act_key[2] = {"act_fwd_ns", "act_bwd_ns"}, *const act_cls[2] = {"fwd", "bwd"};
    for (int b = 0; b < 2; b++)
        if (C->n_actb[b] > 1) {
            /* by element count: the best bin's cost, the curve the bins over it */
            const double best = calib_bins_peak(C->actb[b], C->n_actb[b], 0);
            calib_profile_set(gpu, act_key[b], cJSON_CreateNumber(round(1e9 / best * 1e4) / 1e4));
            calib_profile_set(gpu_object(gpu, "act_eff"), act_cls[b], curve_json(C->actb[b], C->n_actb[b], 0));
            snprintf(buf, sizeof buf, "ulysim calibrate %s: the %d MLP activation ops (%s) of %s in %d bins of their "
                                      "element count: elements / time per bin (relative residuals); act_%s_ns the "
                                      "best bin's %.3f ns per element, gpu.act_eff.%s the bins' rates over it",
                     S->date, C->act[b].n, b ? "backward" : "forward and recompute", S->kfiles, C->n_actb[b],
                     act_cls[b], 1e9 / best, act_cls[b]);
            char key[32];
            snprintf(key, sizeof key, "gpu.%s", act_key[b]);
            calib_profile_source(root, key, buf);
            snprintf(key, sizeof key, "gpu.act_eff.%s", act_cls[b]);
            calib_profile_source(root, key, buf);
        } else if (C->act[b].n && C->act_rate[b] > 0) {
            calib_profile_set(gpu, act_key[b], cJSON_CreateNumber(round(1e9 / C->act_rate[b] * 1e4) / 1e4));
            snprintf(buf, sizeof buf, "ulysim calibrate %s: the %d MLP activation ops (%s) of %s: elements / time, "
                                      "relative residuals: %.3f +- %.3f ns per element, median |residual| %.0f%%",
                     S->date, C->act[b].n, b ? "backward" : "forward and recompute", S->kfiles, 1e9 / C->act_rate[b],
                     1e9 * C->act_se[b] / (C->act_rate[b] * C->act_rate[b]), 100 * C->act_res[b]);
            char key[32];
            snprintf(key, sizeof key, "gpu.%s", act_key[b]);
            calib_profile_source(root, key, buf);
        }
}

cJSON *calib_profile_base(const char *base)
{
    char bpath[4096];
    if (strchr(base, '/') || (strlen(base) >= 5 && !strcmp(base + strlen(base) - 5, ".json")))
        snprintf(bpath, sizeof bpath, "%s", base);
    else
        snprintf(bpath, sizeof bpath, "%s/clusters/%s.json", preset_dir(), base);
    char *btext = read_text(bpath, 1 << 20);
    cJSON *root = btext ? cJSON_Parse(btext) : NULL;
    free(btext);
    if (!root) sim_err_as("ulysim calibrate", "cannot read the base profile %s again", bpath);
    return root;
}

int calib_profile_emit(cJSON *root, const char *out, uly_cluster *chk)
{
    char why[1024];
    char *text = cJSON_Print(root);
    if (!text) return 1;
    /* the fit's values within what a cluster profile may hold: a link of
     * millions of GB/s comes from points whose times or volumes are not a
     * real link's, and the profile would be refused on every later run */
    if (preset_cluster_parse(text, strlen(text), "the fitted profile", chk, why, sizeof why)) {
        sim_err_as("ulysim calibrate", "nothing written to %s: %s (the measured times and sizes do not describe a "
                   "link or GPU ulysim can price; see the residuals above)", out, why);
        free(text);
        return 1;
    }
    const int rc = out_file_write_text(out, text, why, sizeof why);
    free(text);
    if (rc) sim_err_as("ulysim calibrate", "%s", why);
    return rc;
}

/* The base profile with the fits in place, checked to load, written via a
 * temporary name. 0, or the exit status after a message. */
int calib_profile_write(const cal_args *a, const uly_cluster *bc, const cal_links *L, const cal_compute *C)
{
    cJSON *root = calib_profile_base(a->base);
    if (!root) return 2;
    cal_src S;
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(S.date, sizeof S.date, "%Y-%m-%d", &tmv);
    char nm[ULY_NAME_LEN];
    if (a->name) snprintf(nm, sizeof nm, "%s", a->name);
    else snprintf(nm, sizeof nm, "%.24s-calibrated-np%d", bc->name, L->ranks);
    list_files(S.files, sizeof S.files, L->mb, L->n_mb);
    list_files(S.kfiles, sizeof S.kfiles, C->kr, C->n_k);
    profile_links(root, a, bc, L, &S, nm, C->n_k ? C->kr[0].blas_core : "");
    profile_compute(root, C, &S);
    uly_cluster chk;
    const int rc = calib_profile_emit(root, a->out, &chk);
    cJSON_Delete(root);
    if (rc) return rc;
    printf("# wrote %s (cluster \"%s\": intra %.3f GB/s, %.3f us%s)\n", a->out, nm, L->cal.intra_bw_Bps / 1e9,
           L->cal.intra_lat_s * 1e6, a->n_k ? "; compute from the kernel traces" : "; compute as the base");
    return 0;
}
