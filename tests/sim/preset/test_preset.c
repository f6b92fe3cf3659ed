/* test_preset: the preset loader (formats/) and the shipped presets.
 * Usage: test_preset shipped|values|bad_files|user_files|resolve|list
 * ULYSIM_PRESETS must point at sim/presets (ctest sets it). */
#define _POSIX_C_SOURCE 200809L
#include "preset.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "preset_check.h"

#define GIB 1073741824.0

static const char *const MODELS[] = {"gpt-7b",       "gpt-30b",       "gpt-1.2b",      "bert-base",    "bert-large",
                                     "llama2-7b",    "llama3-8b",     "llama3-70b",    "llama3-405b",  "gpt3-175b",
                                     "mixtral-8x7b", "mixtral-8x22b", "deepseek-v3",   "qwen3-30b-a3b", "qwen3-235b-a22b",
                                     "gpt-oss-120b", NULL};
static const char *const CLUSTERS[] = {"dgx-a100-40g", "dgx-a100-80g", "dgx-h100", "dgx-h200", "gb200-nvl72",
                                       "a800", "piz-daint-p100", "cpu-local", NULL};

/* ------------------------------------------------------------- helpers */

static char tmpdir[256];

static void make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/uly_preset_XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        exit(1);
    }
}

static void rm_tmpdir(void)
{
    char cmd[400];
    if (!tmpdir[0]) return;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", tmpdir);
}

static void tmp_path(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", tmpdir, name); }

static void write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b) b[n] = '\0';
    fclose(f);
    return b;
}

/* s with the first occurrence of `from` replaced by `to` (malloc'd). */
static char *replace(const char *s, const char *from, const char *to)
{
    const char *p = strstr(s, from);
    if (!p) {
        fprintf(stderr, "test bug: \"%s\" not found in the base text\n", from);
        exit(1);
    }
    size_t a = (size_t)(p - s), lf = strlen(from), lt = strlen(to), ls = strlen(s);
    char *r = malloc(ls - lf + lt + 1);
    memcpy(r, s, a);
    memcpy(r + a, to, lt);
    memcpy(r + a + lt, p + lf, ls - a - lf + 1);
    return r;
}

static int one_line(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20) return 0;
    return 1;
}

/* ------------------------------------------------------------- shipped */

/* Every numeric leaf outside the curves needs a "sources" entry at its path
 * or at an ancestor's. Curves count as one leaf (their own path). */
static void check_sourced(const char *file, const cJSON *node, const char *path, const cJSON *sources,
                          int *missing)
{
    if (cJSON_IsObject(node)) {
        for (const cJSON *it = node->child; it; it = it->next) {
            if (!path[0] && (!strcmp(it->string, "sources") || !strcmp(it->string, "notes"))) continue;
            char sub[256];
            snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", it->string);
            check_sourced(file, it, sub, sources, missing);
        }
        return;
    }
    if (!cJSON_IsNumber(node) && !cJSON_IsArray(node) && !cJSON_IsNull(node)) return;
    /* the path or an ancestor must be a key of sources */
    char p[256];
    snprintf(p, sizeof p, "%s", path);
    for (;;) {
        if (cJSON_GetObjectItemCaseSensitive(sources, p)) return;
        char *dot = strrchr(p, '.');
        if (!dot) break;
        *dot = '\0';
    }
    (*missing)++;
    fprintf(stderr, "%s: number \"%s\" has no entry in \"sources\"\n", file, path);
}

static void test_shipped(void)
{
    char why[1024];
    for (int i = 0; MODELS[i]; i++) {
        uly_model m;
        int rc = preset_model_load(MODELS[i], &m, why, sizeof why);
        CHECK(rc == 0, "model %s: rc %d: %s", MODELS[i], rc, why);
        if (rc) continue;
        CHECK(!strcmp(m.name, MODELS[i]), "model %s: name field is \"%s\"", MODELS[i], m.name);
        /* heads x head_dim = hidden for the dense presets; the MoE ones
         * (test_preset_moe.c) need not */
        CHECK(m.experts > 0 || m.heads * m.head_dim == m.hidden, "model %s: heads x head_dim != hidden", MODELS[i]);
        CHECK(m.heads % m.kv_heads == 0, "model %s: kv_heads does not divide heads", MODELS[i]);
        CHECK(uly_model_check(&m, why, sizeof why) == ULY_OK, "model %s: uly_model_check: %s", MODELS[i], why);
    }
    for (int i = 0; CLUSTERS[i]; i++) {
        uly_cluster c;
        int rc = preset_cluster_load(CLUSTERS[i], &c, why, sizeof why);
        CHECK(rc == 0, "cluster %s: rc %d: %s", CLUSTERS[i], rc, why);
        if (rc) continue;
        CHECK(!strcmp(c.name, CLUSTERS[i]), "cluster %s: name field is \"%s\"", CLUSTERS[i], c.name);
        /* a GPU prices GEMMs by shape (its SMs) and has no curve; a CPU
         * profile keeps its measured curve */
        if (strncmp(CLUSTERS[i], "cpu-", 4))
            CHECK(c.gpu.sm_count > 0 && c.gpu.gemm_eff.n == 0 && c.gpu.gemm_peak_frac > 0 && c.gpu.gemm_tile_m > 0,
                  "cluster %s: GEMMs not priced by shape", CLUSTERS[i]);
        else
            CHECK(c.gpu.sm_count == 0 && c.gpu.gemm_eff.n >= 1, "cluster %s: no gemm curve", CLUSTERS[i]);
        CHECK(c.gpu.reserved_bytes < c.gpu.hbm_bytes, "cluster %s: reserved >= hbm", CLUSTERS[i]);
        CHECK(c.nodes * c.gpus_per_node >= 4, "cluster %s: %lld GPUs", CLUSTERS[i],
              (long long)(c.nodes * c.gpus_per_node));
        CHECK(uly_cluster_check(&c, why, sizeof why) == ULY_OK, "cluster %s: uly_cluster_check: %s", CLUSTERS[i],
              why);
    }
    /* Documentation: description and source in every file, every cluster
     * number sourced. */
    const char *kinds[2] = {"models", "clusters"};
    const char *const *lists[2] = {MODELS, CLUSTERS};
    for (int k = 0; k < 2; k++)
        for (int i = 0; lists[k][i]; i++) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s/%s.json", preset_dir(), kinds[k], lists[k][i]);
            char *text = read_all(path);
            CHECK(text != NULL, "cannot read %s", path);
            if (!text) continue;
            cJSON *root = cJSON_Parse(text);
            CHECK(root != NULL, "%s does not parse", path);
            const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "description");
            const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "source");
            CHECK(cJSON_IsString(d) && strlen(d->valuestring) > 10, "%s: no description", path);
            CHECK(cJSON_IsString(s) && strlen(s->valuestring) > 10, "%s: no source", path);
            if (k == 1) {
                int missing = 0;
                const cJSON *src = cJSON_GetObjectItemCaseSensitive(root, "sources");
                CHECK(cJSON_IsObject(src), "%s: no sources object", path);
                check_sourced(path, root, "", src, &missing);
                CHECK(missing == 0, "%s: %d numbers without a source", path, missing);
            }
            cJSON_Delete(root);
            free(text);
        }
}

/* -------------------------------------------------------------- values */

static void expect_model(const char *name, long long L, long long h, long long a, long long k, long long d,
                         long long f, long long V, int swiglu, int tied, int dropout)
{
    char why[512];
    uly_model m;
    int rc = preset_model_load(name, &m, why, sizeof why);
    CHECK(rc == 0, "%s: %s", name, why);
    if (rc) return;
    CHECK(m.layers == L, "%s layers %lld != %lld", name, (long long)m.layers, L);
    CHECK(m.hidden == h, "%s hidden %lld != %lld", name, (long long)m.hidden, h);
    CHECK(m.heads == a, "%s heads %lld != %lld", name, (long long)m.heads, a);
    CHECK(m.kv_heads == k, "%s kv_heads %lld != %lld", name, (long long)m.kv_heads, k);
    CHECK(m.head_dim == d, "%s head_dim %lld != %lld", name, (long long)m.head_dim, d);
    CHECK(m.ffn_hidden == f, "%s ffn_hidden %lld != %lld", name, (long long)m.ffn_hidden, f);
    CHECK(m.vocab == V, "%s vocab %lld != %lld", name, (long long)m.vocab, V);
    CHECK(m.swiglu == swiglu, "%s swiglu %d", name, m.swiglu);
    CHECK(m.tied_embeddings == tied, "%s tied_embeddings %d", name, m.tied_embeddings);
    CHECK(m.dropout == dropout, "%s dropout %d", name, m.dropout);
    /* BERT's embedding LayerNorm; optional in the files, false when absent */
    const int embed_norm = !strncmp(name, "bert-", 5);
    CHECK(m.embed_norm == embed_norm, "%s embed_norm %d", name, m.embed_norm);
}

static int near(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b); }

static void test_values(void)
{
    /* docs/design.md, "Presets and defaults", and the shapes the papers give. */
    expect_model("gpt-7b", 32, 4096, 32, 32, 128, 16384, 50304, 0, 1, 1);
    expect_model("gpt-30b", 64, 6144, 64, 64, 96, 24576, 50304, 0, 1, 1);
    expect_model("gpt-1.2b", 24, 2048, 16, 16, 128, 8192, 50304, 0, 1, 1);
    expect_model("bert-base", 12, 768, 12, 12, 64, 3072, 30522, 0, 1, 1);
    expect_model("bert-large", 24, 1024, 16, 16, 64, 4096, 30522, 0, 1, 1);
    expect_model("llama2-7b", 32, 4096, 32, 32, 128, 11008, 32000, 1, 0, 0);
    expect_model("llama3-8b", 32, 4096, 32, 8, 128, 14336, 128256, 1, 0, 0);
    expect_model("llama3-70b", 80, 8192, 64, 8, 128, 28672, 128256, 1, 0, 0);
    expect_model("llama3-405b", 126, 16384, 128, 8, 128, 53248, 128256, 1, 0, 0);
    expect_model("gpt3-175b", 96, 12288, 96, 96, 128, 49152, 50257, 0, 1, 1);

    char why[512];
    uly_cluster c;
    CHECK(preset_cluster_load("dgx-h100", &c, why, sizeof why) == 0, "%s", why);
    CHECK(near(c.gpu.peak_flops[ULY_BF16], 989e12), "h100 bf16 %g", c.gpu.peak_flops[ULY_BF16]);
    CHECK(near(c.gpu.peak_flops[ULY_FP16], 989e12), "h100 fp16 %g", c.gpu.peak_flops[ULY_FP16]);
    CHECK(near(c.gpu.peak_flops[ULY_FP32], 67e12), "h100 fp32 %g", c.gpu.peak_flops[ULY_FP32]);
    CHECK(near(c.gpu.hbm_bytes, 80 * GIB), "h100 hbm %g", c.gpu.hbm_bytes);
    CHECK(near(c.gpu.hbm_bw_Bps, 3.35e12), "h100 hbm bw %g", c.gpu.hbm_bw_Bps);
    CHECK(near(c.gpu.reserved_bytes, 3 * GIB), "h100 reserved %g", c.gpu.reserved_bytes);
    CHECK(c.gpus_per_node == 8 && c.nodes == 128, "h100 %lld x %lld", (long long)c.nodes,
          (long long)c.gpus_per_node);
    CHECK(near(c.intra_bw_Bps, 18 * 20.6e9), "h100 nvlink %g (NCCL: 18 links x 20.6 GB/s per direction)", c.intra_bw_Bps);
    CHECK(near(c.intra_lat_s, 3.4e-6), "h100 nvlink lat %g", c.intra_lat_s);
    CHECK(c.intra_switched == 1, "h100 switched");
    CHECK(near(c.nic_bw_Bps, 48.5e9), "h100 nic %g", c.nic_bw_Bps);
    CHECK(near(c.nic_lat_s, 14e-6), "h100 nic lat %g", c.nic_lat_s);
    CHECK(c.topo == ULY_TOPO_FATTREE && c.oversub == 1.0 && c.gpus_per_leaf == 32, "h100 fabric");
    /* GEMMs by shape: 132 SMs, MAMF 794.5 / 989, 128 x 128 tiles, XLA's
     * 1.8 us fill, the 1830 MHz its peak is stated at; no curve */
    CHECK(c.gpu.sm_count == 132 && near(c.gpu.gemm_peak_frac, 0.803) && c.gpu.gemm_tile_m == 128 &&
              c.gpu.gemm_tile_n == 128 && near(c.gpu.gemm_latency_s, 1.8e-6) && near(c.gpu.boost_clock_hz, 1830e6) &&
              c.gpu.sustained_clock_hz == 0 && c.gpu.gemm_eff.n == 0,
          "h100 gemm by shape");
    /* attn_eff[causal][d >= 128]: causal d128 at 16K = 328/989 */
    CHECK(c.gpu.attn_eff[1][1].n == 6 && c.gpu.attn_eff[1][1].x[5] == 16384 &&
              fabs(c.gpu.attn_eff[1][1].eff[5] - 328.0 / 989) < 1e-3,
          "h100 causal d128 curve");
    CHECK(fabs(c.gpu.attn_eff[0][0].eff[0] - 215.0 / 989) < 1e-3, "h100 full d64 at 512");
    CHECK(fabs(c.gpu.attn_eff[1][0].eff[2] - 232.0 / 989) < 1e-3, "h100 causal d64 at 2K");
    CHECK(fabs(c.gpu.attn_eff[0][1].eff[3] - 326.0 / 989) < 1e-3, "h100 full d128 at 4K");

    CHECK(preset_cluster_load("dgx-a100-40g", &c, why, sizeof why) == 0, "%s", why);
    CHECK(near(c.gpu.peak_flops[ULY_BF16], 312e12) && near(c.gpu.hbm_bytes, 40 * GIB) &&
              near(c.intra_bw_Bps, 12 * 20.0e9) && near(c.nic_bw_Bps, 24e9) && near(c.gpu.hbm_bw_Bps, 1.555e12),
          "a100-40g");
    CHECK(fabs(c.gpu.attn_eff[1][1].eff[0] - 99.0 / 312) < 1e-3, "a100 causal d128 at 512");
    CHECK(preset_cluster_load("dgx-a100-80g", &c, why, sizeof why) == 0, "%s", why);
    CHECK(near(c.gpu.hbm_bytes, 80 * GIB) && near(c.gpu.hbm_bw_Bps, 2.039e12), "a100-80g");
    CHECK(preset_cluster_load("dgx-h200", &c, why, sizeof why) == 0, "%s", why);
    CHECK(near(c.gpu.peak_flops[ULY_BF16], 989e12) && near(c.gpu.hbm_bytes, 141 * GIB) &&
              near(c.gpu.hbm_bw_Bps, 4.8e12),
          "h200");
    CHECK(preset_cluster_load("a800", &c, why, sizeof why) == 0, "%s", why);
    CHECK(near(c.intra_bw_Bps, 8 * 20.0e9) && near(c.gpu.peak_flops[ULY_BF16], 312e12), "a800");
    CHECK(preset_cluster_load("gb200-nvl72", &c, why, sizeof why) == 0, "%s", why);
    CHECK(c.gpus_per_node == 72 && near(c.intra_bw_Bps, 18 * 40.1e9) && near(c.gpu.peak_flops[ULY_BF16], 2500e12),
          "gb200");
    CHECK(preset_cluster_load("piz-daint-p100", &c, why, sizeof why) == 0, "%s", why);
    CHECK(c.gpus_per_node == 1 && near(c.gpu.peak_flops[ULY_BF16], 9.3e12) && near(c.gpu.peak_flops[ULY_FP16], 18.7e12) &&
              near(c.gpu.peak_flops[ULY_FP32], 9.3e12) && near(c.gpu.hbm_bytes, 16 * GIB) &&
              c.gpu.attn_eff[1][1].n == 0 && c.topo == ULY_TOPO_FATTREE && c.oversub == 1.0,
          "piz daint");
    CHECK(preset_cluster_load("cpu-local", &c, why, sizeof why) == 0, "%s", why);
    CHECK(c.nodes == 1 && c.gpus_per_node == 4 && c.gpu.peak_flops[ULY_FP32] > 1e10 &&
              c.gpu.peak_flops[ULY_FP32] < 1e12 && c.gpu.peak_flops[ULY_BF16] == c.gpu.peak_flops[ULY_FP32],
          "cpu-local");
}

/* ----------------------------------------------------------- bad files */

static const char BASE_MODEL[] =
    "{\n"
    "  \"name\": \"my-model\",\n"
    "  \"description\": \"a test model\",\n"
    "  \"source\": \"the test\",\n"
    "  \"layers\": 32,\n"
    "  \"hidden\": 4096,\n"
    "  \"heads\": 32,\n"
    "  \"kv_heads\": 8,\n"
    "  \"head_dim\": 128,\n"
    "  \"ffn_hidden\": 14336,\n"
    "  \"vocab\": 128256,\n"
    "  \"swiglu\": true,\n"
    "  \"tied_embeddings\": false,\n"
    "  \"dropout\": false\n"
    "}\n";

static const char BASE_CLUSTER[] =
    "{\n"
    "  \"name\": \"my-cluster\",\n"
    "  \"sources\": {\"gpu.hbm_gib\": \"a datasheet\"},\n"
    "  \"nodes\": 4,\n"
    "  \"gpus_per_node\": 8,\n"
    "  \"gpu\": {\n"
    "    \"name\": \"X100\",\n"
    "    \"peak_tflops\": {\"bf16\": 1000, \"fp16\": 1000, \"fp32\": 60},\n"
    "    \"hbm_gib\": 80,\n"
    "    \"hbm_bw_GBps\": 3000,\n"
    "    \"mem_eff\": 0.9,\n"
    "    \"reserved_gib\": 3,\n"
    "    \"gemm_eff\": [[1024, 0.5], [8192, 0.8]],\n"
    "    \"attn_eff\": {\"causal_d128\": [[512, 0.2], [16384, 0.4]]}\n"
    "  },\n"
    "  \"intra\": {\"bw_GBps_per_dir\": 450, \"lat_us\": 3, \"switched\": true},\n"
    "  \"inter\": {\"nic_GBps_per_gpu\": 48, \"lat_us\": 10, \"topology\": \"fat-tree\",\n"
    "            \"oversubscription\": 2, \"gpus_per_leaf\": 16}\n"
    "}\n";

typedef struct bad_case {
    const char *file;   /* name in the temp dir */
    int cluster;        /* 1: load as a cluster */
    const char *from;   /* replace this in the base text ... */
    const char *to;     /* ... with this; from == NULL: `to` is the whole text */
    const char *expect1, *expect2; /* substrings of the message */
} bad_case;

static const bad_case BAD[] = {
    /* models: fields */
    {"missing.json", 0, "  \"layers\": 32,\n", "", "\"layers\" is missing", "1..100000"},
    {"wrongtype.json", 0, "\"layers\": 32", "\"layers\": \"32\"", "\"layers\" = \"32\" (a string)", "integer"},
    {"negative.json", 0, "\"layers\": 32", "\"layers\": -3", "field \"layers\" = -3: must be an integer in 1..100000", NULL},
    {"zero.json", 0, "\"hidden\": 4096", "\"hidden\": 0", "\"hidden\" = 0", "1..1048576"},
    {"absurd.json", 0, "\"layers\": 32", "\"layers\": 2000000", "\"layers\" = 2000000", "1..100000"},
    {"absurd_vocab.json", 0, "\"vocab\": 128256", "\"vocab\": 1e12", "\"vocab\" = 1000000000000", "1..16777216"},
    {"fraction.json", 0, "\"heads\": 32", "\"heads\": 32.5", "\"heads\" = 32.5", "integer"},
    /* a query head's width need not be hidden / heads (headdim_ok.json below loads); MoE and MLA fields */
    {"moe_neg.json", 0, "\"dropout\": false", "\"dropout\": false, \"experts\": -1", "\"experts\" = -1", "0..4194304"},
    {"moe_str.json", 0, "\"dropout\": false", "\"dropout\": false, \"topk\": \"2\"", "\"topk\" = \"2\" (a string)", "integer"},
    {"moe_topk.json", 0, "\"dropout\": false", "\"dropout\": false, \"experts\": 8, \"topk\": 9, \"moe_ffn_hidden\": 14336",
     "topk = 9", "1..experts (8)"},
    {"moe_noffn.json", 0, "\"dropout\": false", "\"dropout\": false, \"experts\": 8, \"topk\": 2", "moe_ffn_hidden = 0", "FFN hidden size"},
    {"moe_dense_topk.json", 0, "\"dropout\": false", "\"dropout\": false, \"topk\": 2", "experts = 0", "takes no topk"},
    {"moe_first.json", 0, "\"dropout\": false", "\"dropout\": false, \"experts\": 8, \"topk\": 2, \"moe_ffn_hidden\": 64, "
     "\"moe_dense_first\": 32", "moe_dense_first = 32", "0..31"},
    {"mla_kv.json", 0, "\"dropout\": false", "\"dropout\": false, \"kv_lora_rank\": 512, \"qk_rope_dim\": 64", "kv_heads = 8",
     "multi-head latent attention"},
    {"mla_rope.json", 0, "\"kv_heads\": 8", "\"kv_heads\": 32, \"kv_lora_rank\": 512, \"qk_nope_dim\": 128", "qk_rope_dim = 0",
     "rope part"},
    {"mla_dense.json", 0, "\"dropout\": false", "\"dropout\": false, \"q_lora_rank\": 1536", "kv_lora_rank = 0", "q_lora_rank"},
    {"moe_unknown.json", 0, "\"dropout\": false", "\"dropout\": false, \"expert\": 8", "unknown field \"expert\"",
     "did you mean \"experts\""},
    {"kvheads.json", 0, "\"kv_heads\": 8", "\"kv_heads\": 5", "\"kv_heads\" = 5", "must divide heads (32)"},
    {"kvmore.json", 0, "\"kv_heads\": 8", "\"kv_heads\": 64", "\"kv_heads\" = 64", "must divide heads"},
    {"heads_hidden.json", 0, "\"heads\": 32", "\"heads\": 5000", "\"heads\" = 5000", "at most hidden"},
    {"boolnum.json", 0, "\"swiglu\": true", "\"swiglu\": 1", "\"swiglu\" = 1", "true or false"},
    {"boolstr.json", 0, "\"dropout\": false", "\"dropout\": \"false\"", "\"dropout\" = \"false\" (a string)", "true or false"},
    {"embednorm.json", 0, "\"dropout\": false", "\"dropout\": false, \"embed_norm\": 1", "\"embed_norm\" = 1", "true or false"},
    {"null.json", 0, "\"ffn_hidden\": 14336", "\"ffn_hidden\": null", "\"ffn_hidden\" = null", "integer"},
    {"unknown.json", 0, "\"layers\": 32", "\"layers\": 32, \"layer\": 32", "unknown field \"layer\"", "did you mean \"layers\""},
    {"unknown2.json", 0, "\"layers\": 32", "\"layers\": 32, \"rope_theta\": 500000", "unknown field \"rope_theta\"", "valid fields here are"},
    {"case.json", 0, "\"vocab\"", "\"Vocab\"", "unknown field \"Vocab\"", "did you mean \"vocab\""},
    {"duplicate.json", 0, "\"layers\": 32", "\"layers\": 32, \"layers\": 64", "\"layers\" appears twice", NULL},
    {"badname.json", 0, "\"my-model\"", "\"my model\"", "\"name\" = \"my model\"", "A-Z a-z 0-9"},
    {"longname.json", 0, "\"my-model\"", "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"", "\"name\" = \"aaaa", "1..47"},
    {"descnum.json", 0, "\"a test model\"", "42", "\"description\" = 42", "string"},
    {"leadzero.json", 0, "\"layers\": 32", "\"layers\": 032", "malformed number \"032\"", "line 5"},
    {"trailingdot.json", 0, "\"layers\": 32", "\"layers\": 32.", "malformed number", "line 5"},
    {"hugenum.json", 0, "\"layers\": 32", "\"layers\": 1e999", "\"layers\" = inf", "1..100000"},
    {"nul_escape.json", 0, "\"a test model\"", "\"a \\u0000 model\"", "\\u0000", "line 3"},
    {"ctrl.json", 0, "\"a test model\"", "\"a \\n model\"", "\"description\"", "control character"},
    {"cluster_as_model.json", 0, NULL, BASE_CLUSTER, "unknown field \"nodes\"", "looks like a cluster preset"},
    /* syntax */
    {"invalid.json", 0, "\"layers\": 32,", "\"layers\": 32", "invalid JSON at line 6", NULL},
    {"truncated.json", 0, "  \"ffn_hidden\": 14336,\n  \"vocab\": 128256,\n  \"swiglu\": true,\n  \"tied_embeddings\": false,\n  \"dropout\": false\n}\n",
     "  \"ffn_hidden\": 143", "truncated", NULL},
    {"truncated_str.json", 0, "  \"ffn_hidden\": 14336,\n  \"vocab\": 128256,\n  \"swiglu\": true,\n  \"tied_embeddings\": false,\n  \"dropout\": false\n}\n",
     "  \"ffn_hid", "never ends", "truncated"},
    {"utf8.json", 0, "a test model", "a t\xc3\x28st model", "invalid UTF-8", "line 3"},
    {"utf8_overlong.json", 0, "a test model", "a \xc0\xaf model", "invalid UTF-8", NULL},
    {"utf8_surrogate.json", 0, "a test model", "a \xed\xa0\x80 model", "invalid UTF-8", NULL},
    {"deep.json", 0, "\"layers\": 32", "\"layers\": [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]", "nesting deeper than 8", NULL},
    {"deep_valid_depth.json", 0, "\"layers\": 32", "\"layers\": [[1]]", "\"layers\" = [...] (an array)", NULL},
    {"empty.json", 0, NULL, "", "empty file", NULL},
    {"blank.json", 0, NULL, "  \n\t\n", "empty file", NULL},
    {"array.json", 0, NULL, "[1, 2, 3]", "top level is [...]", "one JSON object"},
    {"string.json", 0, NULL, "\"gpt-7b\"", "top level is \"gpt-7b\"", NULL},
    {"trailing.json", 0, NULL, "{} {}", "invalid JSON", NULL},
    {"comment.json", 0, "{\n", "{\n  // a comment\n", "invalid JSON at line 2", NULL},
    /* clusters */
    {"c_missing.json", 1, "    \"hbm_gib\": 80,\n", "", "\"gpu.hbm_gib\" is missing", "[0.001, 100000] (GiB)"},
    {"c_neg_lat.json", 1, "\"lat_us\": 3,", "\"lat_us\": -1,", "\"intra.lat_us\" = -1", "[0, 1000000] (microseconds)"},
    {"c_zero_bw.json", 1, "\"bw_GBps_per_dir\": 450", "\"bw_GBps_per_dir\": 0", "\"intra.bw_GBps_per_dir\" = 0", "[0.001, 100000]"},
    {"c_peak_str.json", 1, "\"bf16\": 1000", "\"bf16\": \"1000\"", "\"gpu.peak_tflops.bf16\" = \"1000\" (a string)", "TFLOP/s"},
    {"c_fp32_null.json", 1, "\"fp32\": 60", "\"fp32\": null", "\"gpu.peak_tflops.fp32\" = null", "[0.001, 100000]"},
    /* a denormal peak priced every op at infinity; 1e-300 efficiency at hundreds of digits of seconds */
    {"c_peak_denormal.json", 1, "\"bf16\": 1000", "\"bf16\": 5e-324", "\"gpu.peak_tflops.bf16\" = 4.94065645841247e-324", "[0.001, 100000]"},
    {"c_fp32_tiny.json", 1, "\"fp32\": 60", "\"fp32\": 0.0009", "\"gpu.peak_tflops.fp32\" = 0.0009", "[0.001, 100000]"},
    {"c_curve_tiny.json", 1, "[[1024, 0.5], [8192, 0.8]]", "[[1024, 0.5], [8192, 1e-300]]", "\"gpu.gemm_eff[1][1]\" = 1e-300", "[0.001, 1]"},
    {"c_peak_missing.json", 1, ", \"fp32\": 60", "", "\"gpu.peak_tflops.fp32\" is missing", "TFLOP/s"},
    {"c_mem_eff.json", 1, "\"mem_eff\": 0.9", "\"mem_eff\": 1.5", "\"gpu.mem_eff\" = 1.5", "[0.01, 1]"},
    /* the optional CPU-profile terms (ulysim calibrate writes them) */
    {"c_act_neg.json", 1, "\"mem_eff\": 0.9", "\"mem_eff\": 0.9, \"act_fwd_ns\": -2", "\"gpu.act_fwd_ns\" = -2",
     "[0, 1000000] (ns per activation element"},
    {"c_act_str.json", 1, "\"mem_eff\": 0.9", "\"mem_eff\": 0.9, \"act_bwd_ns\": \"30\"",
     "\"gpu.act_bwd_ns\" = \"30\" (a string)", "ns per activation element"},
    {"c_attn_bwd_rel.json", 1, "\"mem_eff\": 0.9", "\"mem_eff\": 0.9, \"attn_bwd_rel\": 0", "\"gpu.attn_bwd_rel\" = 0",
     "[0.01, 4]"},
    {"c_reserved.json", 1, "\"reserved_gib\": 3", "\"reserved_gib\": 80", "\"gpu.reserved_gib\" = 80", "less than gpu.hbm_gib"},
    {"c_curve_order.json", 1, "[[1024, 0.5], [8192, 0.8]]", "[[8192, 0.5], [1024, 0.8]]", "\"gpu.gemm_eff[1][0]\" = 1024", "strictly increases"},
    {"c_curve_dup.json", 1, "[[1024, 0.5], [8192, 0.8]]", "[[1024, 0.5], [1024, 0.8]]", "\"gpu.gemm_eff[1][0]\" = 1024", "greater than"},
    {"c_curve_eff.json", 1, "[[1024, 0.5], [8192, 0.8]]", "[[1024, 0.5], [8192, 1.2]]", "\"gpu.gemm_eff[1][1]\" = 1.2", "[0.001, 1]"},
    {"c_curve_zero.json", 1, "[[512, 0.2], [16384, 0.4]]", "[[512, 0], [16384, 0.4]]", "\"gpu.attn_eff.causal_d128[0][1]\" = 0", "[0.001, 1]"},
    {"c_curve_empty.json", 1, "[[1024, 0.5], [8192, 0.8]]", "[]", "\"gpu.gemm_eff\" = [...] (an array)", "1..8 points"},
    {"c_curve_long.json", 1, "[[1024, 0.5], [8192, 0.8]]",
     "[[1,0.1],[2,0.1],[3,0.1],[4,0.1],[5,0.1],[6,0.1],[7,0.1],[8,0.1],[9,0.1]]", "\"gpu.gemm_eff\"", "1..8 points"},
    {"c_curve_pair.json", 1, "[[1024, 0.5], [8192, 0.8]]", "[[1024, 0.5, 3]]", "\"gpu.gemm_eff[0]\"", "pair"},
    {"c_curve_obj.json", 1, "[[1024, 0.5], [8192, 0.8]]", "{\"points\": [[1024, 0.5]]}", "\"gpu.gemm_eff\" = {...} (an object)", "array"},
    /* GEMMs by shape: sm_count and its fields, or the curve; the clocks */
    {"c_sm_and_curve.json", 1, "\"mem_eff\": 0.9", "\"mem_eff\": 0.9, \"sm_count\": 132, \"gemm_peak_frac\": 0.8, "
     "\"gemm_tile\": [128, 128], \"gemm_latency_us\": 1.8", "\"gpu.gemm_eff\" = [...] (an array)", "remove one of them"},
    {"c_frac_no_sm.json", 1, "\"mem_eff\": 0.9", "\"mem_eff\": 0.9, \"gemm_peak_frac\": 0.8", "\"gpu.gemm_peak_frac\" = 0.8",
     "give gpu.sm_count too"},
    {"c_sm_zero.json", 1, "\"gemm_eff\": [[1024, 0.5], [8192, 0.8]]", "\"sm_count\": 0, \"gemm_peak_frac\": 0.8, "
     "\"gemm_tile\": [128, 128], \"gemm_latency_us\": 1.8", "\"gpu.sm_count\" = 0", "1..1048576"},
    {"c_sm_no_frac.json", 1, "\"gemm_eff\": [[1024, 0.5], [8192, 0.8]]", "\"sm_count\": 132, "
     "\"gemm_tile\": [128, 128], \"gemm_latency_us\": 1.8", "\"gpu.gemm_peak_frac\" is missing", "[0.01, 1]"},
    {"c_tile.json", 1, "\"gemm_eff\": [[1024, 0.5], [8192, 0.8]]", "\"sm_count\": 132, \"gemm_peak_frac\": 0.8, "
     "\"gemm_tile\": [128, 0], \"gemm_latency_us\": 1.8", "\"gpu.gemm_tile\" = [...] (an array)", "a pair [m, n] of integers"},
    {"c_sustained.json", 1, "\"mem_eff\": 0.9", "\"mem_eff\": 0.9, \"sustained_clock_mhz\": 1500",
     "\"gpu.sustained_clock_mhz\" = 1500", "needs gpu.boost_clock_mhz"},
    {"c_boost.json", 1, "\"mem_eff\": 0.9", "\"mem_eff\": 0.9, \"boost_clock_mhz\": 0", "\"gpu.boost_clock_mhz\" = 0",
     "[1, 100000] (MHz"},
    {"c_attn_key.json", 1, "\"causal_d128\"", "\"causal_128\"", "unknown field \"gpu.attn_eff.causal_128\"", "did you mean \"causal_d128\""},
    {"c_topology.json", 1, "\"fat-tree\"", "\"dragonfly\"", "\"inter.topology\" = \"dragonfly\"", "\"fat-tree\", \"rail\", \"torus\""},
    {"c_torus_field.json", 1, "\"gpus_per_leaf\": 16", "\"gpus_per_leaf\": 16, \"torus_k\": 4", "\"inter.torus_k\" = 4", "only to topology \"torus\""},
    {"c_torus_shape.json", 1, "\"topology\": \"fat-tree\",\n            \"oversubscription\": 2, \"gpus_per_leaf\": 16",
     "\"topology\": \"torus\", \"torus_k\": 3, \"torus_dims\": 2, \"torus_link_GBps\": 50", "\"inter.torus_k\" = 3", "must equal nodes (4)"},
    {"c_oversub.json", 1, "\"oversubscription\": 2", "\"oversubscription\": 0.5", "\"inter.oversubscription\" = 0.5", "[1, 1000]"},
    {"c_nodes.json", 1, "\"nodes\": 4", "\"nodes\": 0", "\"nodes\" = 0", "1..1048576"},
    {"c_gpus.json", 1, "\"nodes\": 4", "\"nodes\": 1000000, \"x\": 1", "unknown field \"x\"", NULL},
    {"c_too_many.json", 1, "\"nodes\": 4,\n  \"gpus_per_node\": 8", "\"nodes\": 100000,\n  \"gpus_per_node\": 200",
     "\"nodes\" = 100000", "20000000 GPUs: at most 10000000"},
    {"c_intra_array.json", 1, "{\"bw_GBps_per_dir\": 450, \"lat_us\": 3, \"switched\": true}", "[450, 3, true]",
     "\"intra\" = [...] (an array)", "object"},
    {"c_sources_key.json", 1, "{\"gpu.hbm_gib\": \"a datasheet\"}", "{\"gpu.hbm_gb\": \"a datasheet\"}",
     "\"sources.gpu.hbm_gb\"", "names no field"},
    {"c_sources_val.json", 1, "{\"gpu.hbm_gib\": \"a datasheet\"}", "{\"gpu.hbm_gib\": 80}", "\"sources.gpu.hbm_gib\" = 80", "string"},
    {"c_switched.json", 1, "\"switched\": true", "\"switched\": \"yes\"", "\"intra.switched\" = \"yes\" (a string)", "true or false"},
    {"c_model_as_cluster.json", 1, NULL, BASE_MODEL, "unknown field \"layers\"", "looks like a model preset"},
};

static void run_bad(const bad_case *b)
{
    char path[512], why[1024];
    tmp_path(path, sizeof path, b->file);
    const char *base = b->cluster ? BASE_CLUSTER : BASE_MODEL;
    char *text = b->from ? replace(base, b->from, b->to) : strdup(b->to);
    write_file(path, text, strlen(text));
    free(text);
    int rc;
    memset(why, 0, sizeof why);
    if (b->cluster) {
        uly_cluster c;
        rc = preset_cluster_load(path, &c, why, sizeof why);
    } else {
        uly_model m;
        rc = preset_model_load(path, &m, why, sizeof why);
    }
    CHECK(rc == 2, "%s: rc %d (want 2), message: %s", b->file, rc, why);
    CHECK(strstr(why, b->file) != NULL, "%s: message does not name the file: %s", b->file, why);
    CHECK(strstr(why, b->expect1) != NULL, "%s: message lacks [%s]: %s", b->file, b->expect1, why);
    CHECK(!b->expect2 || strstr(why, b->expect2) != NULL, "%s: message lacks [%s]: %s", b->file, b->expect2, why);
    CHECK(one_line(why), "%s: message is not one line: %s", b->file, why);
    if (getenv("PRESET_TEST_VERBOSE")) printf("%-26s %s\n", b->file, why);
}

static void test_bad_files(void)
{
    char path[512], why[1024];
    uly_model m;
    uly_cluster c;
    make_tmpdir();
    /* the base texts themselves are valid */
    tmp_path(path, sizeof path, "base_model.json");
    write_file(path, BASE_MODEL, strlen(BASE_MODEL));
    CHECK(preset_model_load(path, &m, why, sizeof why) == 0, "base model: %s", why);
    /* a query head's width apart from hidden / heads (Qwen3-MoE's 32 x 128 on
     * hidden 2048) loads as it is */
    char *hd = replace(BASE_MODEL, "\"head_dim\": 128", "\"head_dim\": 100");
    tmp_path(path, sizeof path, "headdim_ok.json");
    write_file(path, hd, strlen(hd));
    free(hd);
    CHECK(preset_model_load(path, &m, why, sizeof why) == 0 && m.head_dim == 100 && m.hidden == 4096, "head_dim 100: %s",
          why);
    tmp_path(path, sizeof path, "base_cluster.json");
    write_file(path, BASE_CLUSTER, strlen(BASE_CLUSTER));
    CHECK(preset_cluster_load(path, &c, why, sizeof why) == 0, "base cluster: %s", why);

    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) run_bad(&BAD[i]);

    /* Oversize: a 100 MB (sparse) file is refused by its size, never read. */
    tmp_path(path, sizeof path, "huge.json");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && ftruncate(fd, 100 * 1000 * 1000) == 0, "cannot make %s", path);
    if (fd >= 0) close(fd);
    CHECK(preset_model_load(path, &m, why, sizeof why) == 2 && strstr(why, "huge.json") && strstr(why, "100000000 bytes") &&
              strstr(why, "1 MiB"),
          "huge: %s", why);
    /* Just over the cap: valid JSON padded with spaces. */
    size_t n = 1024 * 1024 + 1;
    char *big = malloc(n);
    memset(big, ' ', n);
    memcpy(big, BASE_MODEL, strlen(BASE_MODEL));
    tmp_path(path, sizeof path, "big.json");
    write_file(path, big, n);
    free(big);
    CHECK(preset_model_load(path, &m, why, sizeof why) == 2 && strstr(why, "1048577 bytes"), "big: %s", why);

    /* Not a regular file: a directory, a FIFO (must not block), a device. */
    tmp_path(path, sizeof path, "dir.json");
    CHECK(mkdir(path, 0755) == 0, "mkdir");
    CHECK(preset_model_load(path, &m, why, sizeof why) == 2 && strstr(why, "directory"), "dir: %s", why);
    tmp_path(path, sizeof path, "fifo.json");
    CHECK(mkfifo(path, 0644) == 0, "mkfifo: %s", strerror(errno));
    CHECK(preset_cluster_load(path, &c, why, sizeof why) == 2 && strstr(why, "not a regular file"), "fifo: %s", why);
    CHECK(preset_model_load("/dev/zero", &m, why, sizeof why) == 2 && strstr(why, "/dev/zero"), "dev: %s", why);
    /* Missing and unreadable files. */
    tmp_path(path, sizeof path, "nonexistent.json");
    CHECK(preset_model_load(path, &m, why, sizeof why) == 2 && strstr(why, "nonexistent.json") &&
              strstr(why, "No such file"),
          "missing: %s", why);
    if (geteuid() != 0) {
        tmp_path(path, sizeof path, "noperm.json");
        write_file(path, BASE_MODEL, strlen(BASE_MODEL));
        chmod(path, 0);
        CHECK(preset_model_load(path, &m, why, sizeof why) == 2 && strstr(why, "cannot open"), "noperm: %s", why);
    }
    /* NUL byte in the middle of the text. */
    tmp_path(path, sizeof path, "nul.json");
    char *t = strdup(BASE_MODEL);
    t[40] = '\0';
    write_file(path, t, strlen(BASE_MODEL));
    free(t);
    CHECK(preset_model_load(path, &m, why, sizeof why) == 2 && strstr(why, "NUL byte"), "nul: %s", why);

    /* A failed load leaves *out untouched, and NULL/short why is safe. */
    memset(&m, 0x5a, sizeof m);
    uly_model before = m;
    tmp_path(path, sizeof path, "negative.json");
    CHECK(preset_model_load(path, &m, NULL, 0) == 2, "why NULL");
    CHECK(!memcmp(&m, &before, sizeof m), "a failed load wrote to *out");
    char tiny[8];
    CHECK(preset_model_load(path, &m, tiny, sizeof tiny) == 2 && strlen(tiny) == 7, "short why: [%s]", tiny);
    rm_tmpdir();
}

/* ---------------------------------------------------------- user files */

static void test_user_files(void)
{
    char path[512], why[1024];
    make_tmpdir();
    /* A copy of a shipped preset, by path, loads to the same values. */
    char src[1024];
    snprintf(src, sizeof src, "%s/models/llama3-70b.json", preset_dir());
    char *text = read_all(src);
    CHECK(text != NULL, "read %s", src);
    tmp_path(path, sizeof path, "mine.json");
    write_file(path, text, strlen(text));
    free(text);
    uly_model a, b;
    CHECK(preset_model_load("llama3-70b", &a, why, sizeof why) == 0, "%s", why);
    CHECK(preset_model_load(path, &b, why, sizeof why) == 0, "%s", why);
    CHECK(!memcmp(&a, &b, sizeof a), "copy differs");

    /* A minimal model: no description/source/notes. MQA, odd sizes. */
    const char *mini = "{\"name\":\"tiny-mqa\",\"layers\":2,\"hidden\":96,\"heads\":3,\"kv_heads\":1,"
                       "\"head_dim\":32,\"ffn_hidden\":100,\"vocab\":7,\"swiglu\":false,"
                       "\"tied_embeddings\":true,\"dropout\":false}";
    tmp_path(path, sizeof path, "mini.json");
    write_file(path, mini, strlen(mini));
    CHECK(preset_model_load(path, &a, why, sizeof why) == 0, "%s", why);
    CHECK(a.layers == 2 && a.hidden == 96 && a.kv_heads == 1 && a.vocab == 7 && !strcmp(a.name, "tiny-mqa"),
          "mini values");

    /* A path without ".json" but with a slash is a path too. */
    tmp_path(path, sizeof path, "model.txt");
    write_file(path, mini, strlen(mini));
    CHECK(preset_model_load(path, &a, why, sizeof why) == 0, "%s", why);

    /* Relative path with ./ */
    char cwd[512];
    CHECK(getcwd(cwd, sizeof cwd) != NULL, "getcwd");
    CHECK(chdir(tmpdir) == 0, "chdir");
    CHECK(preset_model_load("./mini.json", &a, why, sizeof why) == 0, "%s", why);
    CHECK(preset_model_load("mini.json", &a, why, sizeof why) == 0, "%s", why);
    CHECK(chdir(cwd) == 0, "chdir back");

    /* A torus cluster, a rail cluster, a cluster whose GPU lacks bf16. */
    const char *torus =
        "{\"name\":\"tpu-like\",\"description\":\"a 3D torus\",\"nodes\":64,\"gpus_per_node\":4,"
        "\"gpu\":{\"name\":\"chip\",\"peak_tflops\":{\"bf16\":459,\"fp16\":null,\"fp32\":100},"
        "\"hbm_gib\":95,\"hbm_bw_GBps\":2765,\"mem_eff\":0.85,\"reserved_gib\":1,\"gemm_eff\":[[4096,0.7]]},"
        "\"intra\":{\"bw_GBps_per_dir\":100,\"lat_us\":1,\"switched\":false},"
        "\"inter\":{\"nic_GBps_per_gpu\":50,\"lat_us\":2,\"topology\":\"torus\",\"torus_k\":4,"
        "\"torus_dims\":3,\"torus_link_GBps\":50}}";
    tmp_path(path, sizeof path, "torus.json");
    write_file(path, torus, strlen(torus));
    uly_cluster c;
    CHECK(preset_cluster_load(path, &c, why, sizeof why) == 0, "%s", why);
    CHECK(c.topo == ULY_TOPO_TORUS && c.torus_k == 4 && c.torus_dims == 3 && near(c.torus_link_bw_Bps, 50e9) &&
              near(c.gpu.peak_flops[ULY_FP16], 100e12) && near(c.gpu.peak_flops[ULY_BF16], 459e12) && c.intra_switched == 0 &&
              c.gpu.attn_eff[0][0].n == 0,
          "torus values");
    char *rail = replace(BASE_CLUSTER, "\"fat-tree\"", "\"rail\"");
    tmp_path(path, sizeof path, "rail.json");
    write_file(path, rail, strlen(rail));
    free(rail);
    CHECK(preset_cluster_load(path, &c, why, sizeof why) == 0, "%s", why);
    CHECK(c.topo == ULY_TOPO_RAIL && c.oversub == 2.0 && c.gpus_per_leaf == 16 && c.nodes == 4, "rail values");
    CHECK(c.gpu.gemm_eff.n == 2 && c.gpu.attn_eff[1][1].n == 2 && c.gpu.attn_eff[1][0].n == 0, "curves");
    /* GEMMs by shape with a power cap: the fields in their units, no curve */
    char *shape = replace(BASE_CLUSTER, "\"gemm_eff\": [[1024, 0.5], [8192, 0.8]]",
                          "\"sm_count\": 100, \"gemm_peak_frac\": 0.75, \"gemm_tile\": [128, 256], "
                          "\"gemm_latency_us\": 2.5, \"boost_clock_mhz\": 1800, \"sustained_clock_mhz\": 1500");
    tmp_path(path, sizeof path, "shape.json");
    write_file(path, shape, strlen(shape));
    free(shape);
    CHECK(preset_cluster_load(path, &c, why, sizeof why) == 0, "%s", why);
    CHECK(c.gpu.sm_count == 100 && near(c.gpu.gemm_peak_frac, 0.75) && c.gpu.gemm_tile_m == 128 &&
              c.gpu.gemm_tile_n == 256 && near(c.gpu.gemm_latency_s, 2.5e-6) && near(c.gpu.boost_clock_hz, 1.8e9) &&
              near(c.gpu.sustained_clock_hz, 1.5e9) && c.gpu.gemm_eff.n == 0 &&
              near(uly_gpu_clock_scale(&c.gpu), 1500.0 / 1800.0),
          "GEMMs by shape, power-capped");
    rm_tmpdir();
}

/* ------------------------------------------------------------- resolve */

static void test_resolve(void)
{
    char why[2048];
    uly_model m;
    uly_cluster c;
    /* unknown names list the valid ones */
    CHECK(preset_model_load("llama9", &m, why, sizeof why) == 2, "llama9");
    CHECK(strstr(why, "unknown model preset \"llama9\"") && strstr(why, "llama3-8b") && strstr(why, "gpt-7b") &&
              strstr(why, "bert-base") && one_line(why),
          "unknown model: %s", why);
    CHECK(preset_cluster_load("dgx-h300", &c, why, sizeof why) == 2, "h300");
    CHECK(strstr(why, "unknown cluster preset \"dgx-h300\"") && strstr(why, "dgx-h100") && strstr(why, "cpu-local"),
          "unknown cluster: %s", why);
    /* kinds are separate: a cluster name is not a model */
    CHECK(preset_model_load("dgx-h100", &m, why, sizeof why) == 2 && strstr(why, "unknown model preset"), "%s", why);
    /* empty, odd and hostile names */
    CHECK(preset_model_load("", &m, why, sizeof why) == 2 && strstr(why, "empty"), "empty: %s", why);
    CHECK(preset_model_load(NULL, &m, why, sizeof why) == 2, "NULL name");
    CHECK(preset_model_load("a b\nc", &m, why, sizeof why) == 2 && one_line(why), "newline name: %s", why);
    CHECK(preset_model_load("..", &m, why, sizeof why) == 2 && strstr(why, "unknown model preset"), "dotdot: %s", why);
    char longname[5000];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    CHECK(preset_model_load(longname, &m, why, sizeof why) == 2 && strlen(why) < 400, "long name: %s", why);
    /* "NAME.json" not in the working directory points at the preset */
    CHECK(preset_model_load("gpt-7b.json", &m, why, sizeof why) == 2 && strstr(why, "did you mean the preset gpt-7b"),
          "json name: %s", why);
    /* ULYSIM_PRESETS decides the directory */
    const char *saved = getenv("ULYSIM_PRESETS");
    char *keep = saved ? strdup(saved) : NULL;
    make_tmpdir();
    char d[512], path[600];
    snprintf(d, sizeof d, "%s/models", tmpdir);
    CHECK(mkdir(d, 0755) == 0, "mkdir");
    snprintf(path, sizeof path, "%s/only-one.json", d);
    const char *mini = "{\"name\":\"only-one\",\"layers\":1,\"hidden\":64,\"heads\":1,\"kv_heads\":1,"
                       "\"head_dim\":64,\"ffn_hidden\":256,\"vocab\":10,\"swiglu\":false,"
                       "\"tied_embeddings\":false,\"dropout\":false}";
    write_file(path, mini, strlen(mini));
    setenv("ULYSIM_PRESETS", tmpdir, 1);
    CHECK(!strcmp(preset_dir(), tmpdir), "dir %s", preset_dir());
    CHECK(preset_model_load("only-one", &m, why, sizeof why) == 0 && m.layers == 1, "%s", why);
    CHECK(preset_model_load("gpt-7b", &m, why, sizeof why) == 2 && strstr(why, "valid names are only-one"), "%s", why);
    CHECK(preset_cluster_load("dgx-h100", &c, why, sizeof why) == 2 && strstr(why, "cannot read"), "%s", why);
    CHECK(preset_list("clusters", NULL, NULL) == -1, "list of a missing dir");
    if (keep) {
        setenv("ULYSIM_PRESETS", keep, 1);
        free(keep);
    } else {
        unsetenv("ULYSIM_PRESETS");
    }
    rm_tmpdir();
    /* Without $ULYSIM_PRESETS the source tree's directory is used. */
    char *k2 = getenv("ULYSIM_PRESETS") ? strdup(getenv("ULYSIM_PRESETS")) : NULL;
    unsetenv("ULYSIM_PRESETS");
    CHECK(preset_model_load("llama3-8b", &m, why, sizeof why) == 0, "source dir: %s (%s)", why, preset_dir());
    if (k2) {
        setenv("ULYSIM_PRESETS", k2, 1);
        free(k2);
    }
}

/* ---------------------------------------------------------------- list */

typedef struct seen {
    char names[64][ULY_NAME_LEN];
    int n;
    int bad;
} seen;

static void collect(const char *name, const char *description, const char *source, void *ctx)
{
    seen *s = ctx;
    if (s->n < 64) snprintf(s->names[s->n++], ULY_NAME_LEN, "%s", name);
    if (!description || !*description || !source || !*source) s->bad++;
}

static void test_list(void)
{
    const char *kinds[2] = {"models", "clusters"};
    const char *const *lists[2] = {MODELS, CLUSTERS};
    for (int k = 0; k < 2; k++) {
        seen s = {.n = 0};
        int n = preset_list(kinds[k], collect, &s);
        CHECK(n == s.n && n > 0, "%s: count %d, callbacks %d", kinds[k], n, s.n);
        CHECK(s.bad == 0, "%s: %d presets without description or source", kinds[k], s.bad);
        for (int i = 1; i < s.n; i++)
            CHECK(strcmp(s.names[i - 1], s.names[i]) < 0, "%s: not sorted: %s, %s", kinds[k], s.names[i - 1],
                  s.names[i]);
        for (int i = 0; lists[k][i]; i++) {
            int found = 0;
            for (int j = 0; j < s.n; j++) found |= !strcmp(s.names[j], lists[k][i]);
            CHECK(found, "%s: %s not listed", kinds[k], lists[k][i]);
        }
    }
    CHECK(preset_list("gpus", collect, NULL) == -1, "bad kind");
    CHECK(preset_list(NULL, collect, NULL) == -1, "NULL kind");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_preset shipped|values|bad_files|user_files|resolve|list\n");
        return 2;
    }
    const char *t = argv[1];
    if (!strcmp(t, "shipped"))
        test_shipped();
    else if (!strcmp(t, "values"))
        test_values();
    else if (!strcmp(t, "bad_files"))
        test_bad_files();
    else if (!strcmp(t, "user_files"))
        test_user_files();
    else if (!strcmp(t, "resolve"))
        test_resolve();
    else if (!strcmp(t, "list"))
        test_list();
    else {
        fprintf(stderr, "unknown test %s\n", t);
        return 2;
    }
    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
