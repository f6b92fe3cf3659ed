/* presets.c: the cluster (dgx-h200) and model (llama3-8b) the plan section
 * prices and runs. In the full build (cJSON present) they come from the
 * preset files through the shared loader (formats/preset.h). scripts/gpu-check.sh
 * builds without cJSON (the device machine has no Debian dev packages), so
 * the same numbers are also embedded here; the ctest kcuda_ulygpu_presets
 * (ulygpu --check-presets) fails when the copy and the files disagree. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ulygpu.h"

#ifdef ULYGPU_HAVE_PRESETS
#include "preset.h"
#endif

#define GIB 1073741824.0

/* sim/presets/clusters/dgx-h200.json, converted as the loader does
 * (TFLOP/s x 1e12, GiB x 2^30, GB/s x 1e9, us x 1e-6). */
static void embedded_cluster(uly_cluster *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "dgx-h200");
    c->nodes = 128;
    c->gpus_per_node = 8;
    uly_gpu *g = &c->gpu;
    snprintf(g->name, sizeof g->name, "H200-SXM-141GB");
    g->peak_flops[ULY_BF16] = 989e12;
    g->peak_flops[ULY_FP16] = 989e12;
    g->peak_flops[ULY_FP32] = 67e12;
    g->peak_flops[ULY_FP8] = 1979e12; /* the dense FP8 peak, as the preset file (H200 datasheet) */
    g->hbm_bytes = 141 * GIB;
    g->hbm_bw_Bps = 4800e9;
    g->mem_eff = 0.9;
    g->reserved_bytes = 3 * GIB;
    g->sm_count = 132;
    g->gemm_peak_frac = 0.803;
    g->gemm_tile_m = g->gemm_tile_n = 128;
    g->gemm_latency_s = 1.8e-6;
    g->boost_clock_hz = 1830e6;
    static const double xs[6] = {512, 1024, 2048, 4096, 8192, 16384};
    static const double c128[6] = {0.165, 0.223, 0.268, 0.297, 0.311, 0.332};
    static const double c64[6] = {0.143, 0.194, 0.235, 0.26, 0.276, 0.287};
    static const double f128[6] = {0.251, 0.297, 0.324, 0.33, 0.339, 0.342};
    static const double f64[6] = {0.217, 0.257, 0.277, 0.291, 0.297, 0.299};
    const double *cur[2][2] = {{f64, f128}, {c64, c128}}; /* [causal][d >= 128] */
    for (int ca = 0; ca < 2; ca++)
        for (int big = 0; big < 2; big++) {
            uly_curve *u = &g->attn_eff[ca][big];
            u->n = 6;
            for (int i = 0; i < 6; i++) {
                u->x[i] = xs[i];
                u->eff[i] = cur[ca][big][i];
            }
        }
    c->intra_bw_Bps = 370.8e9;
    c->intra_lat_s = 3.4e-6;
    c->intra_switched = 1;
    c->nic_bw_Bps = 48.5e9;
    c->nic_lat_s = 14e-6;
    c->topo = ULY_TOPO_FATTREE;
    c->oversub = 1.0;
    c->gpus_per_leaf = 32;
}

/* sim/presets/models/llama3-8b.json */
static void embedded_model(uly_model *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "llama3-8b");
    m->layers = 32;
    m->hidden = 4096;
    m->heads = 32;
    m->kv_heads = 8;
    m->head_dim = 128;
    m->ffn_hidden = 14336;
    m->vocab = 128256;
    m->swiglu = 1;
    m->tied_embeddings = 0;
    m->dropout = 0;
}

int ug_presets_load(ug_ctx *c)
{
    const char *cl = c->o.cluster ? c->o.cluster : "dgx-h200";
    const char *md = c->o.model ? c->o.model : "llama3-8b";
#ifdef ULYGPU_HAVE_PRESETS
    char why[512];
    if (preset_cluster_load(cl, &c->cluster, why, sizeof why) != 0) {
        fprintf(stderr, "ulygpu: --cluster %s: %s\n", cl, why);
        return UG_EXIT_USAGE;
    }
    if (preset_model_load(md, &c->model, why, sizeof why) != 0) {
        fprintf(stderr, "ulygpu: --model %s: %s\n", md, why);
        return UG_EXIT_USAGE;
    }
    snprintf(c->cluster_src, sizeof c->cluster_src, "preset \"%s\" loaded from %s", cl, preset_dir());
    snprintf(c->model_src, sizeof c->model_src, "preset \"%s\" loaded from %s", md, preset_dir());
#else
    if (strcmp(cl, "dgx-h200") != 0 || strcmp(md, "llama3-8b") != 0) {
        fprintf(stderr,
                "ulygpu: built without the preset loader (no cJSON): only --cluster dgx-h200 and --model llama3-8b, "
                "embedded, are available\n");
        return UG_EXIT_USAGE;
    }
    embedded_cluster(&c->cluster);
    embedded_model(&c->model);
    snprintf(c->cluster_src, sizeof c->cluster_src,
             "embedded copy of sim/presets/clusters/dgx-h200.json (built without cJSON; ctest "
             "kcuda_ulygpu_presets checks the copy)");
    snprintf(c->model_src, sizeof c->model_src, "embedded copy of sim/presets/models/llama3-8b.json");
#endif
    char why2[256];
    if (uly_cluster_check(&c->cluster, why2, sizeof why2) != ULY_OK ||
        uly_model_check(&c->model, why2, sizeof why2) != ULY_OK) {
        fprintf(stderr, "ulygpu: the preset does not pass the model's checks: %s\n", why2);
        return UG_EXIT_USAGE;
    }
    return 0;
}

static void curve_json(char *buf, size_t n, const uly_curve *u)
{
    size_t o = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < u->n && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s[%.9g,%.9g]", i ? "," : "", u->x[i], u->eff[i]);
    if (o < n) snprintf(buf + o, n - o, "]");
}

void ug_presets_json(const ug_ctx *c, ug_json *j)
{
    const uly_gpu *g = &c->cluster.gpu;
    ug_json x;
    ug_j_begin(&x);
    ug_j_str(&x, "name", c->cluster.name);
    ug_j_str(&x, "source", c->cluster_src);
    ug_j_str(&x, "gpu", g->name);
    ug_j_num(&x, "peak_flops_bf16", g->peak_flops[ULY_BF16]);
    ug_j_num(&x, "peak_flops_fp16", g->peak_flops[ULY_FP16]);
    ug_j_num(&x, "hbm_bw_Bps", g->hbm_bw_Bps);
    ug_j_num(&x, "mem_eff", g->mem_eff);
    char b[512];
    ug_j_num(&x, "sm_count", (double)g->sm_count);
    ug_j_num(&x, "gemm_peak_frac", g->gemm_peak_frac);
    ug_j_num(&x, "gemm_tile_m", (double)g->gemm_tile_m);
    ug_j_num(&x, "gemm_tile_n", (double)g->gemm_tile_n);
    ug_j_num(&x, "gemm_latency_s", g->gemm_latency_s);
    ug_j_num(&x, "boost_clock_hz", g->boost_clock_hz);
    static const char *names[2][2] = {{"full_d64", "full_d128"}, {"causal_d64", "causal_d128"}};
    for (int ca = 0; ca < 2; ca++)
        for (int big = 0; big < 2; big++) {
            char key[40];
            snprintf(key, sizeof key, "attn_eff_%s", names[ca][big]);
            curve_json(b, sizeof b, &g->attn_eff[ca][big]);
            ug_j_raw(&x, key, b);
        }
    ug_j_raw(j, "cluster", ug_j_end(&x));
    ug_j_free(&x);
    ug_json m;
    ug_j_begin(&m);
    ug_j_str(&m, "name", c->model.name);
    ug_j_str(&m, "source", c->model_src);
    ug_j_int(&m, "layers", c->model.layers);
    ug_j_int(&m, "hidden", c->model.hidden);
    ug_j_int(&m, "heads", c->model.heads);
    ug_j_int(&m, "kv_heads", c->model.kv_heads);
    ug_j_int(&m, "head_dim", c->model.head_dim);
    ug_j_int(&m, "ffn_hidden", c->model.ffn_hidden);
    ug_j_int(&m, "vocab", c->model.vocab);
    ug_j_bool(&m, "swiglu", c->model.swiglu);
    ug_j_raw(j, "model", ug_j_end(&m));
    ug_j_free(&m);
}

/* ------------------------------------------------------ --check-presets */

#ifdef ULYGPU_HAVE_PRESETS
static int close_enough(double a, double b) { return a == b || fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b)); }

static int cmp_num(const char *what, double a, double b)
{
    if (close_enough(a, b)) return 0;
    printf("  DIFF %s: embedded %.17g, preset file %.17g\n", what, a, b);
    return 1;
}

static int cmp_curve(const char *what, const uly_curve *a, const uly_curve *b)
{
    int bad = cmp_num(what, a->n, b->n);
    for (int i = 0; !bad && i < a->n; i++) {
        char w[96];
        snprintf(w, sizeof w, "%s point %d x", what, i);
        bad += cmp_num(w, a->x[i], b->x[i]);
        snprintf(w, sizeof w, "%s point %d eff", what, i);
        bad += cmp_num(w, a->eff[i], b->eff[i]);
    }
    return bad;
}
#endif

int ug_presets_check(void)
{
#ifndef ULYGPU_HAVE_PRESETS
    printf("ulygpu --check-presets: built without the preset loader; nothing to compare\n");
    return 0;
#else
    uly_cluster e, f;
    uly_model me, mf;
    char why[512];
    embedded_cluster(&e);
    embedded_model(&me);
    if (preset_cluster_load("dgx-h200", &f, why, sizeof why) != 0 || preset_model_load("llama3-8b", &mf, why, sizeof why)) {
        printf("ulygpu --check-presets: cannot load the presets: %s\n", why);
        return UG_EXIT_FAIL;
    }
    int bad = 0;
    bad += strcmp(e.name, f.name) != 0;
    bad += cmp_num("nodes", (double)e.nodes, (double)f.nodes);
    bad += cmp_num("gpus_per_node", (double)e.gpus_per_node, (double)f.gpus_per_node);
    bad += strcmp(e.gpu.name, f.gpu.name) != 0;
    for (int t = 0; t < ULY_DTYPE_COUNT; t++) bad += cmp_num("gpu.peak_flops", e.gpu.peak_flops[t], f.gpu.peak_flops[t]);
    bad += cmp_num("gpu.hbm_bytes", e.gpu.hbm_bytes, f.gpu.hbm_bytes);
    bad += cmp_num("gpu.hbm_bw_Bps", e.gpu.hbm_bw_Bps, f.gpu.hbm_bw_Bps);
    bad += cmp_num("gpu.mem_eff", e.gpu.mem_eff, f.gpu.mem_eff);
    bad += cmp_num("gpu.reserved_bytes", e.gpu.reserved_bytes, f.gpu.reserved_bytes);
    bad += cmp_num("gpu.sm_count", e.gpu.sm_count, f.gpu.sm_count);
    bad += cmp_num("gpu.gemm_peak_frac", e.gpu.gemm_peak_frac, f.gpu.gemm_peak_frac);
    bad += cmp_num("gpu.gemm_tile_m", e.gpu.gemm_tile_m, f.gpu.gemm_tile_m);
    bad += cmp_num("gpu.gemm_tile_n", e.gpu.gemm_tile_n, f.gpu.gemm_tile_n);
    bad += cmp_num("gpu.gemm_latency_s", e.gpu.gemm_latency_s, f.gpu.gemm_latency_s);
    bad += cmp_num("gpu.boost_clock_hz", e.gpu.boost_clock_hz, f.gpu.boost_clock_hz);
    bad += cmp_curve("gpu.gemm_eff", &e.gpu.gemm_eff, &f.gpu.gemm_eff);
    for (int ca = 0; ca < 2; ca++)
        for (int big = 0; big < 2; big++) bad += cmp_curve("gpu.attn_eff", &e.gpu.attn_eff[ca][big], &f.gpu.attn_eff[ca][big]);
    bad += cmp_num("intra_bw_Bps", e.intra_bw_Bps, f.intra_bw_Bps);
    bad += cmp_num("intra_lat_s", e.intra_lat_s, f.intra_lat_s);
    bad += cmp_num("intra_switched", e.intra_switched, f.intra_switched);
    bad += cmp_num("nic_bw_Bps", e.nic_bw_Bps, f.nic_bw_Bps);
    bad += cmp_num("nic_lat_s", e.nic_lat_s, f.nic_lat_s);
    bad += cmp_num("topo", e.topo, f.topo);
    bad += cmp_num("oversub", e.oversub, f.oversub);
    bad += cmp_num("gpus_per_leaf", (double)e.gpus_per_leaf, (double)f.gpus_per_leaf);
    bad += strcmp(me.name, mf.name) != 0;
    bad += cmp_num("model.layers", (double)me.layers, (double)mf.layers);
    bad += cmp_num("model.hidden", (double)me.hidden, (double)mf.hidden);
    bad += cmp_num("model.heads", (double)me.heads, (double)mf.heads);
    bad += cmp_num("model.kv_heads", (double)me.kv_heads, (double)mf.kv_heads);
    bad += cmp_num("model.head_dim", (double)me.head_dim, (double)mf.head_dim);
    bad += cmp_num("model.ffn_hidden", (double)me.ffn_hidden, (double)mf.ffn_hidden);
    bad += cmp_num("model.vocab", (double)me.vocab, (double)mf.vocab);
    bad += cmp_num("model.swiglu", me.swiglu, mf.swiglu);
    bad += cmp_num("model.tied_embeddings", me.tied_embeddings, mf.tied_embeddings);
    bad += cmp_num("model.dropout", me.dropout, mf.dropout);
    if (bad) {
        printf("ulygpu --check-presets: %d field(s) of the embedded dgx-h200 / llama3-8b differ from the preset files: "
               "update bench/kernels/cuda/ulygpu/presets.c\n",
               bad);
        return UG_EXIT_FAIL;
    }
    printf("ulygpu --check-presets: the embedded dgx-h200 and llama3-8b equal the preset files\n");
    return 0;
#endif
}
