/* calib_cmd.h: what the parts of `ulysim calibrate` share: the command line,
 * the links fitted to the micro-benchmarks and the compute fitted to the
 * kernel runs (cmd_calibrate.c), which calib_profile.c writes as a cluster
 * profile. The fits themselves: calib_fit.h. */
#ifndef SIM_CALIB_CMD_H
#define SIM_CALIB_CMD_H

#include <cjson/cJSON.h>

#include "calib_fit.h"
#include "trace_read.h"

/* The command line. */
typedef struct cal_args {
    const char *out, *base, *name;
    const char **mb_files, **k_files;
    int n_mb, n_k;
} cal_args;

/* The links: the micro-benchmark runs, their points and the fit. */
typedef struct cal_links {
    trace_run *mb;
    int n_mb, ranks, mixed; /* mixed: micro-benchmarks of several rank counts */
    struct {
        const trace_run *run;
        const trace_point *p;
        uly_group_place gp;
        double pred;
    } *pts;
    calib_link_pt *lp;
    int n, n_skip;    /* points fitted; allreduce_mpi points left out */
    int n_skip_empty; /* points left out with no time or no bytes to fit */
    calib_links F;
    uly_cluster cal;  /* the base with the fitted links */
    double med_res;   /* median |residual| through uly_cost_collective */
} cal_links;

/* Curve classes of flash attention, as the profile names them: [causal][head_dim >= 128]. */
extern const char *const calib_attn_name[2][2];

/* A group of compute samples, priced alike. */
typedef struct cal_set {
    calib_sample *s;
    int n;
} cal_set;

/* The compute: samples of the kernel runs by kind, and the fits. */
typedef struct cal_compute {
    trace_run *kr;
    int n_k, k_ranks, mixed; /* mixed: kernel runs of several rank counts */
    cal_set gemm, attn[2][2], attn_bwd[2][2], elem, act[2]; /* [causal][head_dim >= 128]; act [backward] */
    int n_skipped_attn;
    calib_bin gb[ULY_CURVE_MAX], ab[2][2][ULY_CURVE_MAX]; /* FLOP/s per bin: GEMM, attention forward */
    int n_gb, n_ab[2][2];
    calib_bin abw[2][2][ULY_CURVE_MAX]; /* FLOP/s per bin: attention backward, by kv rows of the block */
    int n_abw[2][2];
    calib_bin actb[2][ULY_CURVE_MAX];   /* elements/s per bin: the activation [backward], by elements */
    int n_actb[2];
    double e_rate, e_se, e_res;                /* elementwise B/s, its error, median |residual| */
    double act_rate[2], act_se[2], act_res[2]; /* activation elements/s [backward] */
    calib_logmean rel;                         /* attention backward over the forward curve */
    double peak;                               /* FLOP/s: the best bin */
    double share;                              /* the kernel runs' rates are worth this at the ranks fitted */
} cal_compute;

/* `ulysim calibrate --host ...` (calib_host.c): measures this host with
 * ulyharness and writes its profile; argv[0] is "calibrate". The exit
 * status. */
int sim_calib_host(int argc, char **argv);

/* The last part of a path. */
const char *calib_base_name(const char *p);

/* Checks --name for a profile's name (1..ULY_NAME_LEN-1 characters of
 * [A-Za-z0-9._+-], as the preset loader holds it). 0, or 2 after a message. */
int calib_name_check(const char *name);

/* A list option (--kernels, --gemms: its files are the arguments up to the
 * next option) that got none: s the argument the parse reached (NULL: the
 * end), have the list's length now, at its length when the option came.
 * 1 after a message naming opt, what it needs and hint (the message's
 * tail), else 0. */
int calib_list_empty(const char *opt, const char *what, const char *hint, const char *s, int have, int at);

/* `ulysim calibrate --gemms ...` and a GPU base's --kernels alone
 * (calib_gemm_cmd.c): fits the GEMM-by-shape constants; argv[0] is
 * "calibrate". The exit status. */
int sim_calib_gemms(int argc, char **argv);

/* The base profile's JSON, read again (a preset name or a file); NULL after
 * a message. */
cJSON *calib_profile_base(const char *base);
/* o.k = v, replacing an item of that key. */
void calib_profile_set(cJSON *o, const char *k, cJSON *v);
/* sources.k = text in the profile root. */
void calib_profile_source(cJSON *root, const char *k, const char *text);
/* Prints root, checks that it loads as a cluster (into *chk), writes it to
 * out via a temporary name. 0, or the exit status after a message. */
int calib_profile_emit(cJSON *root, const char *out, uly_cluster *chk);

/* The base profile with the fits in place, checked to load, written to
 * a->out via a temporary name; prints the closing line. 0, or the exit
 * status after a message. */
int calib_profile_write(const cal_args *a, const uly_cluster *bc, const cal_links *L, const cal_compute *C);

#endif
