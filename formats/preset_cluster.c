/* preset_cluster.c: the fields of a cluster preset (sim/presets/README.md): the
 * GPU (peaks, memory, efficiency curves), the links inside a node and the
 * network between nodes (fat-tree, rail or torus), checked field by field,
 * then by libulysim's own uly_cluster_check. Units convert here: TFLOP/s x
 * 1e12, GiB x 2^30, GB/s x 1e9, us x 1e-6. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "preset_internal.h"

/* A curve: [[x, eff], ...], 1..ULY_CURVE_MAX points, x strictly increasing
 * in (0, 1e9], eff in [0.001, 1]. */
static int get_curve(js_doc *d, const cJSON *v, const char *path, const char *x_unit, uly_curve *out)
{
    char p[200];
    memset(out, 0, sizeof *out);
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
    if (n < 1 || n > ULY_CURVE_MAX)
        return js_bad_value(d, path, v, "must be an array of 1..%d points [x, eff] (x: %s, strictly increasing; eff: fraction of peak in [0.001, 1])",
                            ULY_CURVE_MAX, x_unit);
    int i = 0;
    for (const cJSON *pt = v->child; pt; pt = pt->next, i++) {
        snprintf(p, sizeof p, "%s[%d]", path, i);
        if (!cJSON_IsArray(pt) || cJSON_GetArraySize(pt) != 2)
            return js_bad_value(d, p, pt, "must be a pair [x, eff] of numbers");
        const cJSON *x = pt->child, *e = pt->child->next;
        snprintf(p, sizeof p, "%s[%d][0]", path, i);
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || x->valuedouble <= 0 || x->valuedouble > 1e9)
            return js_bad_value(d, p, x, "must be a number in (0, 1e9] (%s)", x_unit);
        if (i > 0 && x->valuedouble <= out->x[i - 1])
            return js_bad_value(d, p, x, "must be greater than the previous point's x (%.15g): x strictly increases",
                                out->x[i - 1]);
        snprintf(p, sizeof p, "%s[%d][1]", path, i);
        /* from 0.1% of peak (the presets' lowest is 14%): an efficiency of
         * 1e-300 priced ops at hundreds of digits of seconds */
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || e->valuedouble < 0.001 || e->valuedouble > 1)
            return js_bad_value(d, p, e, "must be a number in [0.001, 1] (a fraction of the dense peak)");
        out->x[i] = x->valuedouble;
        out->eff[i] = e->valuedouble;
    }
    out->n = n;
    return 0;
}

/* An optional object of named curves, gpu.KEY.NAME for NAME in keys (the
 * list NULL-terminated, out in the same order); absent curves stay empty. */
static int get_curve_set(js_doc *d, const cJSON *g, const char *key, const char *const *keys, uly_curve **out,
                         const char *what)
{
    int n = 0;
    for (; keys[n]; n++) memset(out[n], 0, sizeof *out[n]);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(g, key);
    if (!a) return 0;
    char path[64], list[128] = "";
    for (int i = 0; i < n; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", keys[i]);
    snprintf(path, sizeof path, "gpu.%s", key);
    if (!cJSON_IsObject(a)) return js_bad_value(d, path, a, "must be an object with curves %s", list);
    if (js_check_keys(d, a, path, keys, NULL)) return 2;
    for (int i = 0; i < n; i++) {
        const cJSON *cv = cJSON_GetObjectItemCaseSensitive(a, keys[i]);
        snprintf(path, sizeof path, "gpu.%s.%s", key, keys[i]);
        if (cv && get_curve(d, cv, path, what, out[i])) return 2;
    }
    return 0;
}

static const char *const CLUSTER_KEYS[] = {"name", "description", "source", "notes", "sources", "nodes",
                                           "gpus_per_node", "gpu", "intra", "inter", "overlap", "overlap_slowdown",
                                           "host_launch_us", "collectives", "host_cpu", "host", NULL};
static const char *const HOST_KEYS[] = {"cpu_model", "cores", "ranks", "blas_core", NULL};
static const char *const GPU_KEYS[] = {"name", "arch", "peak_tflops", "hbm_gib", "hbm_bw_GBps", "mem_eff",
                                       "reserved_gib", "gemm_eff", "attn_eff", "act_fwd_ns", "act_bwd_ns", "attn_bwd_rel",
                                       "comm_slowdown", "attn_bwd_eff", "act_eff", "sm_count", "gemm_peak_frac",
                                       "gemm_tile", "gemm_latency_us", "boost_clock_mhz", "sustained_clock_mhz", "mb_eff",
                                       "host_link_GBps",
                                       "kernel_floor_us", NULL};
static const char *const PEAK_KEYS[] = {ULY_DTYPES(ULY_X_NAME) NULL};
static const char *const ATTN_KEYS[] = {"causal_d128", "causal_d64", "full_d128", "full_d64", NULL};
static const char *const ACT_KEYS[] = {"fwd", "bwd", NULL};
static const char *const INTRA_KEYS[] = {"bw_GBps_per_dir", "lat_us", "switched", "pcie_gpus_per_switch",
                                         "pcie_uplink_GBps", "socket_GBps", "pcie_p2p", "nvls", NULL};
static const char *const INTER_KEYS[] = {"nic_GBps_per_gpu", "lat_us", "topology", "oversubscription",
                                         "gpus_per_leaf", "torus_k", "torus_dims", "torus_link_GBps",
                                         "nics_per_node", "sharp", NULL};

#define GIB 1073741824.0

/* Optional: the share of hbm_bw_GBps each memory-bound kernel class reaches
 * ("mb_eff": {"stream": 0.8, ...}, a class left out: mem_eff), and the least
 * time of one kernel ("kernel_floor_us"; absent: no floor). */
static int parse_membound(js_doc *d, const cJSON *g, uly_gpu *gpu)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(g, "mb_eff");
    memset(gpu->mb_eff, 0, sizeof gpu->mb_eff);
    if (o) {
        const char *keys[ULY_MB_COUNT + 1];
        for (int k = 0; k < ULY_MB_COUNT; k++) keys[k] = uly_mb_class_name((uly_mb_class)k);
        keys[ULY_MB_COUNT] = NULL;
        if (!cJSON_IsObject(o)) return js_bad_value(d, "gpu.mb_eff", o, "must be an object of fractions by kernel class");
        if (js_check_keys(d, o, "gpu.mb_eff", keys, NULL)) return 2;
        for (int k = 0; k < ULY_MB_COUNT; k++)
            if (cJSON_GetObjectItemCaseSensitive(o, keys[k]) &&
                js_get_num(d, o, "gpu.mb_eff", keys[k], 0.01, 0, 1, "(fraction of hbm_bw_GBps; absent: mem_eff)",
                           &gpu->mb_eff[k]))
                return 2;
    }
    /* "kernel_floor_us": {"stream": 2.5, "graph": 1.3} */
    gpu->kernel_floor_s[0] = gpu->kernel_floor_s[1] = 0;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(g, "kernel_floor_us");
    if (f) {
        static const char *const launch_keys[] = {"stream", "graph", NULL};
        if (!cJSON_IsObject(f))
            return js_bad_value(d, "gpu.kernel_floor_us", f, "must be an object {\"stream\": us, \"graph\": us}");
        if (js_check_keys(d, f, "gpu.kernel_floor_us", launch_keys, NULL)) return 2;
        for (int k = 0; k < 2; k++) {
            double us = 0;
            if (cJSON_GetObjectItemCaseSensitive(f, launch_keys[k]) &&
                js_get_num(d, f, "gpu.kernel_floor_us", launch_keys[k], 0, 0, 1000,
                           "(microseconds a kernel adds to its work; absent: 0)", &us))
                return 2;
            gpu->kernel_floor_s[k] = us * 1e-6;
        }
    }
    return 0;
}

/* GEMMs by shape (sm_count and the fields that go with it) or on the
 * gemm_eff curve, one or the other; the clocks (optional). */
static int parse_gemm(js_doc *d, const cJSON *g, uly_gpu *gpu)
{
    const cJSON *v;
    if (!cJSON_GetObjectItemCaseSensitive(g, "sm_count")) {
        static const char *const shape_only[] = {"gemm_peak_frac", "gemm_tile", "gemm_latency_us", NULL};
        for (int i = 0; shape_only[i]; i++) {
            const cJSON *f = cJSON_GetObjectItemCaseSensitive(g, shape_only[i]);
            char path[64];
            snprintf(path, sizeof path, "gpu.%s", shape_only[i]);
            if (f) return js_bad_value(d, path, f, "prices GEMMs by shape: give gpu.sm_count too, or remove it");
        }
        if (js_get_field(d, g, "gpu", "gemm_eff", "an array of points [[x, eff], ...] (or gpu.sm_count: GEMMs by shape)",
                         &v) ||
            get_curve(d, v, "gpu.gemm_eff", "cube root of m*n*k", &gpu->gemm_eff))
            return 2;
    } else {
        int64_t n;
        if (js_get_int(d, g, "gpu", "sm_count", 1, 1 << 20, &n)) return 2;
        gpu->sm_count = (int32_t)n;
        if ((v = cJSON_GetObjectItemCaseSensitive(g, "gemm_eff")))
            return js_bad_value(d, "gpu.gemm_eff", v,
                                "is not read when GEMMs are priced by shape (gpu.sm_count): remove one of them");
        if (js_get_num(d, g, "gpu", "gemm_peak_frac", 0.01, 0, 1, "(best achievable fraction of the dense peak)",
                       &gpu->gemm_peak_frac))
            return 2;
        if (js_get_field(d, g, "gpu", "gemm_tile", "a pair [m, n] of integers in 1..65536 (the output tile of one SM)", &v))
            return 2;
        if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2 || !js_is_int_in(v->child, 1, 1 << 16) ||
            !js_is_int_in(v->child->next, 1, 1 << 16))
            return js_bad_value(d, "gpu.gemm_tile", v,
                                "must be a pair [m, n] of integers in 1..65536 (the output tile of one SM)");
        gpu->gemm_tile_m = (int32_t)v->child->valuedouble;
        gpu->gemm_tile_n = (int32_t)v->child->next->valuedouble;
        double us;
        if (js_get_num(d, g, "gpu", "gemm_latency_us", 0, 0, 1e6, "(microseconds: a GEMM's pipeline fill)", &us)) return 2;
        gpu->gemm_latency_s = us * 1e-6;
    }
    double mhz = 0;
    if (cJSON_GetObjectItemCaseSensitive(g, "boost_clock_mhz")) {
        if (js_get_num(d, g, "gpu", "boost_clock_mhz", 1, 0, 100000, "(MHz: the clock the peaks are stated at)", &mhz))
            return 2;
        gpu->boost_clock_hz = mhz * 1e6;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(g, "sustained_clock_mhz"))) {
        if (!(gpu->boost_clock_hz > 0))
            return js_bad_value(d, "gpu.sustained_clock_mhz", v,
                                "needs gpu.boost_clock_mhz, the clock the peaks are stated at: give both");
        if (js_get_num(d, g, "gpu", "sustained_clock_mhz", 1, 0, 100000,
                       "(MHz: the clock held under load; absent: the boost clock)", &mhz))
            return 2;
        gpu->sustained_clock_hz = mhz * 1e6;
    }
    /* optional: the GPU's link to host memory, per direction (activation offload) */
    double gbps = 0;
    if (cJSON_GetObjectItemCaseSensitive(g, "host_link_GBps") &&
        js_get_num(d, g, "gpu", "host_link_GBps", 0, 1, 1e6,
                   "(GB/s per direction between the GPU and host memory; absent: offload not priced)", &gbps))
        return 2;
    gpu->host_link_bw_Bps = gbps * 1e9;
    return 0;
}

static int parse_gpu(js_doc *d, const cJSON *g, uly_gpu *gpu)
{
    const cJSON *o;
    if (js_check_keys(d, g, "gpu", GPU_KEYS, NULL)) return 2;
    if (js_get_name(d, g, "gpu", "name", gpu->name, sizeof gpu->name)) return 2;
    /* optional: the architecture, for kernels that run on one (FlashAttention-3: hopper) */
    if (cJSON_GetObjectItemCaseSensitive(g, "arch") && js_get_name(d, g, "gpu", "arch", gpu->arch, sizeof gpu->arch))
        return 2;

    if (js_get_object(d, g, "gpu", "peak_tflops", &o) || js_check_keys(d, o, "gpu.peak_tflops", PEAK_KEYS, NULL)) return 2;
    /* fp32 first: a null bf16/fp16 peak means "no native unit for the type"
     * and is priced at the fp32 rate (storage in the type, arithmetic in
     * fp32, as PyTorch emulates bf16 before Ampere and CPU kernels do). */
    double fp32;
    /* from a GFLOP/s (a CPU core's single-precision rate is tens of them):
     * a denormal peak priced every op at infinity */
    if (js_get_num(d, o, "gpu.peak_tflops", "fp32", 0.001, 0, 100000, "(dense TFLOP/s)", &fp32)) return 2;
    gpu->peak_flops[ULY_FP32] = fp32 * 1e12;
    static const uly_dtype half[2] = {ULY_BF16, ULY_FP16};
    for (int i = 0; i < 2; i++) {
        const char *k = PEAK_KEYS[i];
        const cJSON *v;
        if (js_get_field(d, o, "gpu.peak_tflops", k,
                         "a number in [0.001, 100000] (dense TFLOP/s), or null when the GPU has no native unit for the type",
                         &v))
            return 2;
        if (cJSON_IsNull(v)) {
            gpu->peak_flops[half[i]] = gpu->peak_flops[ULY_FP32];
            continue;
        }
        double x;
        if (js_get_num(d, o, "gpu.peak_tflops", k, 0.001, 0, 100000,
                       "(dense TFLOP/s; null when the GPU has no native unit for the type)", &x))
            return 2;
        gpu->peak_flops[half[i]] = x * 1e12;
    }
    /* optional: the dense FP8 rate (Hopper and later); absent or null: none,
     * and FP8 training is refused on the GPU */
    const cJSON *f8 = cJSON_GetObjectItemCaseSensitive(o, "fp8");
    gpu->peak_flops[ULY_FP8] = 0;
    if (f8 && !cJSON_IsNull(f8)) {
        double x;
        if (js_get_num(d, o, "gpu.peak_tflops", "fp8", 0.001, 0, 100000,
                       "(dense TFLOP/s; null or absent when the GPU has no FP8 tensor cores)", &x))
            return 2;
        gpu->peak_flops[ULY_FP8] = x * 1e12;
    }

    double hbm, bw, reserved;
    if (js_get_num(d, g, "gpu", "hbm_gib", 0.001, 0, 100000, "(GiB)", &hbm)) return 2;
    if (js_get_num(d, g, "gpu", "hbm_bw_GBps", 0.001, 0, 1000000, "(GB/s, 1e9 bytes/s)", &bw)) return 2;
    if (js_get_num(d, g, "gpu", "mem_eff", 0.01, 0, 1, "(fraction of hbm_bw_GBps)", &gpu->mem_eff)) return 2;
    if (js_get_num(d, g, "gpu", "reserved_gib", 0, 0, 100000, "(GiB)", &reserved)) return 2;
    if (reserved >= hbm)
        return js_bad_value(d, "gpu.reserved_gib", cJSON_GetObjectItemCaseSensitive(g, "reserved_gib"),
                            "must be less than gpu.hbm_gib (%g)", hbm);
    gpu->hbm_bytes = hbm * GIB;
    gpu->hbm_bw_Bps = bw * 1e9;
    gpu->reserved_bytes = reserved * GIB;
    /* optional: the activation's arithmetic cost per element (CPU profiles
     * from ulysim calibrate); absent = memory-bound, priced by bytes */
    static const char *const act_keys[2] = {"act_fwd_ns", "act_bwd_ns"};
    double *act[2] = {&gpu->act_fwd_s_per_elem, &gpu->act_bwd_s_per_elem};
    for (int i = 0; i < 2; i++) {
        double ns = 0;
        *act[i] = 0;
        if (cJSON_GetObjectItemCaseSensitive(g, act_keys[i]) &&
            js_get_num(d, g, "gpu", act_keys[i], 0, 0, 1e6, "(ns per activation element; absent: memory-bound)", &ns))
            return 2;
        *act[i] = ns * 1e-9;
    }
    gpu->attn_bwd_rel = 1.0;
    if (cJSON_GetObjectItemCaseSensitive(g, "attn_bwd_rel") &&
        js_get_num(d, g, "gpu", "attn_bwd_rel", 0.01, 0, 4, "(backward flash attention's efficiency over forward's; absent: 1)",
                   &gpu->attn_bwd_rel))
        return 2;
    gpu->comm_slowdown = 0;
    if (cJSON_GetObjectItemCaseSensitive(g, "comm_slowdown") &&
        js_get_num(d, g, "gpu", "comm_slowdown", 0, 0, 1,
                   "(fraction compute slows while a transfer runs beside it; absent: 0)", &gpu->comm_slowdown))
        return 2;

    if (parse_membound(d, g, gpu) || parse_gemm(d, g, gpu)) return 2;
    /* attention's forward curves, and (optional, calibrated CPU profiles)
     * the backward's own, [causal][head_dim >= 128] */
    static const int idx[4][2] = {{1, 1}, {1, 0}, {0, 1}, {0, 0}};
    uly_curve *attn[4], *bwd[4];
    for (int i = 0; i < 4; i++) {
        attn[i] = &gpu->attn_eff[idx[i][0]][idx[i][1]];
        bwd[i] = &gpu->attn_bwd_eff[idx[i][0]][idx[i][1]];
    }
    if (get_curve_set(d, g, "attn_eff", ATTN_KEYS, attn, "key/value length of the attention block, tokens") ||
        get_curve_set(d, g, "attn_bwd_eff", ATTN_KEYS, bwd, "key/value length of the attention block, tokens"))
        return 2;
    /* optional: the activation's rate by its element count over the best
     * (act_fwd_ns and act_bwd_ns are then the best bin's cost) */
    uly_curve *act_c[2] = {&gpu->act_eff[0], &gpu->act_eff[1]};
    return get_curve_set(d, g, "act_eff", ACT_KEYS, act_c, "elements through the activation");
}

/* The fields a cluster file must have (preset_missing lists those it lacks;
 * gpu.gemm_eff is parse_gemm's to ask for: a GPU priced by shape has none). */
static const preset_req CLUSTER_REQ[] = {
    {NULL, "nodes"},         {NULL, "gpus_per_node"},    {NULL, "gpu"},           {NULL, "intra"},
    {NULL, "inter"},         {"gpu", "name"},            {"gpu", "peak_tflops"},  {"gpu", "hbm_gib"},
    {"gpu", "hbm_bw_GBps"},  {"gpu", "mem_eff"},         {"gpu", "reserved_gib"},
    {"intra", "bw_GBps_per_dir"}, {"intra", "lat_us"},   {"intra", "switched"},   {"inter", "nic_GBps_per_gpu"},
    {"inter", "lat_us"},     {"inter", "topology"}};

/* Optional "host": the machine a measured profile's rates are of (ulysim
 * calibrate writes it; ulysim validate compares it with a trace's host).
 * The model never reads it: checked here for its shape only. */
static int host_check(js_doc *d, const cJSON *root)
{
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(root, "host");
    if (!h) return 0;
    int64_t x;
    if (js_get_object(d, root, "", "host", &h) || js_check_keys(d, h, "host", HOST_KEYS, NULL)) return 2;
    const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(h, "cpu_model");
    if (!cJSON_IsString(cpu))
        return js_bad_value(d, "host.cpu_model", cpu, "must be a string: the CPU's model name as /proc/cpuinfo gives it");
    if (js_check_text(d, cpu, "host.cpu_model")) return 2;
    if (js_get_int(d, h, "host", "cores", 1, 1 << 20, &x)) return 2;
    if (cJSON_GetObjectItemCaseSensitive(h, "ranks") && js_get_int(d, h, "host", "ranks", 1, 1 << 20, &x)) return 2;
    const cJSON *blas = cJSON_GetObjectItemCaseSensitive(h, "blas_core");
    if (blas && !cJSON_IsString(blas))
        return js_bad_value(d, "host.blas_core", blas, "must be a string: an OpenBLAS kernel set (e.g. \"Zen\")");
    return blas ? js_check_text(d, blas, "host.blas_core") : 0;
}

/* Optional: which model prices the collectives (absent: "hockney", the
 * formulas ulysim calibrate fits, so calibrated profiles keep them), the
 * host CPU (NCCL's constants differ on AMD hosts), and for "nccl" the GPU's
 * compute capability from gpu.arch (NCCL's per-architecture constants). */
static int parse_collectives(js_doc *d, const cJSON *root, uly_cluster *cl)
{
    static const char *const models[] = {"hockney", "nccl"};
    static const char *const cpus[] = {"intel", "amd", "arm"};
    static const struct {
        const char *arch;
        int sm;
    } sms[] = {{"pascal", 60}, {"volta", 70}, {"ampere", 80}, {"ada", 89}, {"hopper", 90}, {"blackwell", 100}};
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "collectives");
    cl->coll_model = ULY_COLL_HOCKNEY;
    if (v) {
        int k = 0;
        while (k < 2 && !(cJSON_IsString(v) && !strcmp(v->valuestring, models[k]))) k++;
        if (k == 2) return js_bad_value(d, "collectives", v, "must be \"nccl\" (GPUs) or \"hockney\" (MPI on CPU hosts)");
        cl->coll_model = (uly_coll_model)k;
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "host_cpu");
    cl->host_cpu_amd = 0;
    if (v) {
        int k = 0;
        while (k < 3 && !(cJSON_IsString(v) && !strcmp(v->valuestring, cpus[k]))) k++;
        if (k == 3) return js_bad_value(d, "host_cpu", v, "must be one of \"intel\", \"amd\", \"arm\"");
        cl->host_cpu_amd = k == 1;
    }
    cl->nccl_sm = 0;
    if (cl->coll_model != ULY_COLL_NCCL) return 0;
    for (size_t i = 0; i < sizeof sms / sizeof sms[0]; i++)
        if (!strcmp(cl->gpu.arch, sms[i].arch)) cl->nccl_sm = sms[i].sm;
    if (!cl->nccl_sm)
        return js_bad_value(d, "collectives", v,
                            "\"nccl\" needs gpu.arch, one of pascal, volta, ampere, ada, hopper, blackwell (it selects "
                            "NCCL's per-architecture constants)");
    return 0;
}

/* A link's object (intra, inter) into o, checked against its keys: its
 * bandwidth per GPU per direction (field bw_key, GB/s) and latency (lat_us) */
static int parse_link(js_doc *d, const cJSON *root, const char *key, const char *const *keys, const char *bw_key,
                      const cJSON **o, double *bw_Bps, double *lat_s)
{
    double x;
    if (js_get_object(d, root, "", key, o) || js_check_keys(d, *o, key, keys, NULL)) return 2;
    if (js_get_num(d, *o, key, bw_key, 0.001, 0, 100000, "(GB/s per GPU per direction)", &x)) return 2;
    *bw_Bps = x * 1e9;
    if (js_get_num(d, *o, key, "lat_us", 0, 0, 1000000, "(microseconds)", &x)) return 2;
    *lat_s = x * 1e-6;
    return 0;
}

/* The links inside a node: intra's bandwidth, latency and switch, NVLink
 * SHARP, or a PCIe server's switches and socket link. */
static int parse_intra(js_doc *d, const cJSON *root, uly_cluster *cl)
{
    const cJSON *o;
    double x;
    if (parse_link(d, root, "intra", INTRA_KEYS, "bw_GBps_per_dir", &o, &cl->intra_bw_Bps, &cl->intra_lat_s)) return 2;
    if (js_get_bool(d, o, "intra", "switched", &cl->intra_switched)) return 2;
    /* optional: NVLink SHARP on the node's NVSwitches (NCCL's NVLS) */
    cl->intra_nvls = 0;
    if (cJSON_GetObjectItemCaseSensitive(o, "nvls") && js_get_bool(d, o, "intra", "nvls", &cl->intra_nvls)) return 2;
    if (cl->intra_nvls && !cl->intra_switched)
        return js_bad_value(d, "intra.nvls", cJSON_GetObjectItemCaseSensitive(o, "nvls"),
                            "needs NVSwitches (intra.switched true): NVLink SHARP runs in the switch");
    /* optional: a PCIe server (no NVLink): GPUs under PCIe switches, the
     * switches' uplinks, the socket link, peer-to-peer on or off */
    if (cJSON_GetObjectItemCaseSensitive(o, "pcie_gpus_per_switch")) {
        if (js_get_int(d, o, "intra", "pcie_gpus_per_switch", 1, cl->gpus_per_node, &cl->pcie_per_switch)) return 2;
        if (js_get_num(d, o, "intra", "pcie_uplink_GBps", 0.001, 0, 100000, "(GB/s per switch uplink per direction)", &x))
            return 2;
        cl->pcie_uplink_bw_Bps = x * 1e9;
        cl->socket_bw_Bps = 0;
        if (cJSON_GetObjectItemCaseSensitive(o, "socket_GBps")) {
            if (js_get_num(d, o, "intra", "socket_GBps", 0, 0, 100000,
                           "(GB/s per direction between the two CPU sockets; 0: one socket)", &x))
                return 2;
            cl->socket_bw_Bps = x * 1e9;
        }
        if (js_get_bool(d, o, "intra", "pcie_p2p", &cl->pcie_p2p)) return 2;
    } else {
        static const char *const pcie_only[] = {"pcie_uplink_GBps", "socket_GBps", "pcie_p2p", NULL};
        for (int i = 0; pcie_only[i]; i++) {
            const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, pcie_only[i]);
            if (!f) continue;
            char path[64];
            snprintf(path, sizeof path, "intra.%s", pcie_only[i]);
            return js_bad_value(d, path, f, "describes a PCIe server: give intra.pcie_gpus_per_switch too, or remove it");
        }
    }
    return 0;
}

/* The network's shape: inter.topology, the fields of a fat tree or rail
 * (oversubscription, GPUs per leaf) or of a torus (k, dims, link), none of
 * the other shape's. */
static int parse_topology(js_doc *d, const cJSON *o, uly_cluster *cl)
{
    double x;
    const cJSON *t;
    if (js_get_field(d, o, "inter", "topology", "one of \"fat-tree\", \"rail\", \"torus\"", &t)) return 2;
    if (cJSON_IsString(t) && !strcmp(t->valuestring, "fat-tree"))
        cl->topo = ULY_TOPO_FATTREE;
    else if (cJSON_IsString(t) && !strcmp(t->valuestring, "rail"))
        cl->topo = ULY_TOPO_RAIL;
    else if (cJSON_IsString(t) && !strcmp(t->valuestring, "torus"))
        cl->topo = ULY_TOPO_TORUS;
    else
        return js_bad_value(d, "inter.topology", t, "must be one of \"fat-tree\", \"rail\", \"torus\"");

    static const char *const tree_keys[] = {"oversubscription", "gpus_per_leaf", NULL};
    static const char *const torus_keys[] = {"torus_k", "torus_dims", "torus_link_GBps", NULL};
    const char *const *foreign = cl->topo == ULY_TOPO_TORUS ? tree_keys : torus_keys;
    for (int i = 0; foreign[i]; i++) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, foreign[i]);
        if (f) {
            char path[64];
            snprintf(path, sizeof path, "inter.%s", foreign[i]);
            return js_bad_value(d, path, f, "applies only to topology %s, and this cluster's is \"%s\": remove it",
                                cl->topo == ULY_TOPO_TORUS ? "\"fat-tree\" or \"rail\"" : "\"torus\"",
                                t->valuestring);
        }
    }
    if (cl->topo == ULY_TOPO_TORUS) {
        if (js_get_int(d, o, "inter", "torus_k", 2, 65536, &cl->torus_k)) return 2;
        if (js_get_int(d, o, "inter", "torus_dims", 1, 8, &cl->torus_dims)) return 2;
        if (js_get_num(d, o, "inter", "torus_link_GBps", 0.001, 0, 100000, "(GB/s per link per direction)", &x)) return 2;
        cl->torus_link_bw_Bps = x * 1e9;
        int64_t p = 1;
        for (int64_t i = 0; i < cl->torus_dims && p <= cl->nodes; i++) p *= cl->torus_k;
        if (p != cl->nodes)
            return js_bad_value(d, "inter.torus_k", cJSON_GetObjectItemCaseSensitive(o, "torus_k"),
                                "torus_k ^ torus_dims (%lld dims) must equal nodes (%lld)", (long long)cl->torus_dims,
                                (long long)cl->nodes);
        cl->oversub = 1.0;
        cl->gpus_per_leaf = cl->gpus_per_node;
    } else {
        if (js_get_num(d, o, "inter", "oversubscription", 1, 0, 1000, "(leaf downlink:uplink ratio; 1 = non-blocking)",
                       &cl->oversub))
            return 2;
        if (js_get_int(d, o, "inter", "gpus_per_leaf", 1, 10000000, &cl->gpus_per_leaf)) return 2;
    }
    return 0;
}

/* The network between nodes: inter's NIC bandwidth and latency, NICs per
 * node, IB SHARP, then its shape. */
static int parse_inter(js_doc *d, const cJSON *root, uly_cluster *cl)
{
    const cJSON *o;
    if (parse_link(d, root, "inter", INTER_KEYS, "nic_GBps_per_gpu", &o, &cl->nic_bw_Bps, &cl->nic_lat_s)) return 2;
    /* optional: the node's NICs (absent: one per GPU) and IB SHARP in the
     * switches (NCCL's CollNet) */
    cl->nics_per_node = 0;
    if (cJSON_GetObjectItemCaseSensitive(o, "nics_per_node") &&
        js_get_int(d, o, "inter", "nics_per_node", 1, 1024, &cl->nics_per_node))
        return 2;
    cl->inter_sharp = 0;
    if (cJSON_GetObjectItemCaseSensitive(o, "sharp") && js_get_bool(d, o, "inter", "sharp", &cl->inter_sharp)) return 2;
    return parse_topology(d, o, cl);
}

/* The executor's overlap of transfers with compute, the host's cost of a
 * kernel's issue, compute's slowdown beside a transfer: all optional. */
static int parse_overlap(js_doc *d, const cJSON *root, uly_cluster *cl)
{
    /* optional: the overlap of transfers with compute that the executor
     * achieves (ulysim calibrate measures it on CPU hosts); absent: 1 */
    cl->overlap_miss = 0;
    if (cJSON_GetObjectItemCaseSensitive(root, "overlap")) {
        double ov = 1;
        if (js_get_num(d, root, "", "overlap", 0, 0, 1,
                       "(fraction of min(transfer, compute) hidden when they run together; absent: 1)", &ov))
            return 2;
        cl->overlap_miss = 1.0 - ov;
    }
    /* optional: the host's cost of issuing one kernel eagerly */
    cl->host_launch_s = 0;
    if (cJSON_GetObjectItemCaseSensitive(root, "host_launch_us")) {
        double us = 0;
        if (js_get_num(d, root, "", "host_launch_us", 0, 0, 10000,
                       "(microseconds the host spends issuing one kernel eagerly; absent: 0)", &us))
            return 2;
        cl->host_launch_s = us * 1e-6;
    }
    /* optional: how much compute slows beside a transfer, per tier */
    cl->overlap_slowdown[0] = cl->overlap_slowdown[1] = 0;
    const cJSON *os = cJSON_GetObjectItemCaseSensitive(root, "overlap_slowdown");
    if (os) {
        static const char *const tier_keys[] = {"intra", "inter", NULL};
        if (!cJSON_IsObject(os))
            return js_bad_value(d, "overlap_slowdown", os, "must be an object {\"intra\": x, \"inter\": y}");
        if (js_check_keys(d, os, "overlap_slowdown", tier_keys, NULL)) return 2;
        for (int k = 0; k < 2; k++)
            if (cJSON_GetObjectItemCaseSensitive(os, tier_keys[k]) &&
                js_get_num(d, os, "overlap_slowdown", tier_keys[k], 0, 0, 1,
                           "(fraction compute slows beside a transfer on this tier; absent: gpu.comm_slowdown)",
                           &cl->overlap_slowdown[k]))
                return 2;
    }
    return 0;
}

/* The fields after the name into out (a uly_cluster), then libulysim's own checks. */
static int cluster_read(js_doc *d, const cJSON *root, void *out)
{
    uly_cluster *cl = out;
    if (preset_missing(d, root, CLUSTER_REQ, (int)(sizeof CLUSTER_REQ / sizeof CLUSTER_REQ[0]),
                       "a complete cluster to start from: ulysim presets show dgx-h100"))
        return 2;
    if (js_get_int(d, root, "", "nodes", 1, 1048576, &cl->nodes)) return 2;
    if (js_get_int(d, root, "", "gpus_per_node", 1, 1024, &cl->gpus_per_node)) return 2;
    if (cl->nodes * cl->gpus_per_node > 10000000)
        return js_bad_value(d, "nodes", cJSON_GetObjectItemCaseSensitive(root, "nodes"),
                            "nodes x gpus_per_node (%lld) = %lld GPUs: at most 10000000", (long long)cl->gpus_per_node,
                            (long long)(cl->nodes * cl->gpus_per_node));

    const cJSON *o;
    if (js_get_object(d, root, "", "gpu", &o) || parse_gpu(d, o, &cl->gpu)) return 2;
    if (parse_intra(d, root, cl) || parse_inter(d, root, cl) || parse_overlap(d, root, cl)) return 2;
    if (parse_collectives(d, root, cl) || host_check(d, root)) return 2;
    if (preset_sources_check(d, root)) return 2;
    char w[512];
    return uly_cluster_check(cl, w, sizeof w) == ULY_OK ? 0 : js_doc_fail(d, "%s", w);
}

static const preset_schema CLUSTER_SCHEMA = {"clusters", CLUSTER_KEYS, "layers",
                                             "this looks like a model preset, not a cluster", sizeof(uly_cluster),
                                             offsetof(uly_cluster, name), cluster_read};

int preset_cluster_parse(const char *text, size_t len, const char *shown, uly_cluster *out, char *why,
                      size_t why_len)
{
    return preset_text_parse(&CLUSTER_SCHEMA, text, len, shown, out, why, why_len);
}

int preset_cluster_load(const char *name_or_path, uly_cluster *out, char *why, size_t why_len)
{
    return preset_file_load(&CLUSTER_SCHEMA, name_or_path, out, why, why_len);
}
