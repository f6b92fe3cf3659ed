/* torch_trace.c: the torch.profiler trace reader and kernel classifier
 * (torch_trace.h).
 *
 * A kernel belongs to the step during which it was launched: torch.profiler
 * records ProfilerStep#N on the CPU, and the GPU runs a step's kernels after
 * their launches, often past the CPU window's end. So a kernel is placed by
 * its launch (the cuda_runtime or cuda_driver event with its correlation
 * id); where the trace has the GPU-side step annotations
 * (gpu_user_annotation ProfilerStep#N) those windows place it by its own
 * start; a kernel with neither is placed by its own start in the CPU
 * windows. */
#include "torch_trace.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_strict.h"

static const char *const CAT_NAMES[TT_CAT_COUNT] = {
#define TT_CAT_NAME(e, n) n,
    TT_CATEGORIES(TT_CAT_NAME)
#undef TT_CAT_NAME
};

const char *tt_cat_name(tt_cat c) { return c >= 0 && c < TT_CAT_COUNT ? CAT_NAMES[c] : "?"; }

/* The name patterns, in the order they are tried; lower case, matched in
 * the lower-cased name. `also`: a second pattern the name must contain. */
static const struct {
    const char *pattern, *also;
    tt_cat cat;
} PATTERNS[] = {
    /* NCCL: ncclDevKernel_AllGather_RING_LL(...), ncclKernel_AllReduce_RING_LL_Sum_bfloat16 */
    {"alltoall", "nccl", TT_A2A}, {"allgather", "nccl", TT_ALLGATHER}, {"reducescatter", "nccl", TT_REDUCE_SCATTER},
    {"allreduce", "nccl", TT_ALLREDUCE},
    {"sendrecv", "nccl", TT_SENDRECV}, {"send", "nccl", TT_SENDRECV}, {"recv", "nccl", TT_SENDRECV},
    /* attention backward: FlashAttention-2 (flash_bwd_*), PyTorch's copy
     * (pytorch_flash::flash_bwd_kernel), FlashAttention-3
     * (flash::FlashAttnBwdSm90), memory-efficient (fmha_cutlassB_*), cuDNN
     * (..._sdpa_..._flash_bprop_...) */
    {"flash_bwd", NULL, TT_ATTN_BWD}, {"flashattnbwd", NULL, TT_ATTN_BWD}, {"fmha_cutlassb", NULL, TT_ATTN_BWD},
    {"fmha_bwd", NULL, TT_ATTN_BWD}, {"bprop", "sdpa", TT_ATTN_BWD},
    /* attention forward: the same families */
    {"flash_fwd", NULL, TT_ATTN_FWD}, {"flashattnfwd", NULL, TT_ATTN_FWD}, {"fmha_cutlassf", NULL, TT_ATTN_FWD},
    {"fmha_fwd", NULL, TT_ATTN_FWD}, {"fprop", "sdpa", TT_ATTN_FWD},
    /* GEMM: cuBLAS (sm90_xmma_gemm_*, ampere_bf16_s16816gemm_*, nvjet_*),
     * CUTLASS (cutlass_80_tensorop_*gemm*, cutlass3x_sm90_*gemm*) */
    {"gemm", NULL, TT_GEMM}, {"nvjet", NULL, TT_GEMM}, {"xmma", NULL, TT_GEMM}, {"cublas", NULL, TT_GEMM},
};

/* PyTorch's collective names ("Collective name" in the event's args) */
static const struct {
    const char *prefix;
    tt_cat cat;
} COLLECTIVES[] = {
    {"all_to_all", TT_A2A}, {"alltoall", TT_A2A},
    {"_allgather", TT_ALLGATHER}, {"all_gather", TT_ALLGATHER}, {"allgather", TT_ALLGATHER},
    {"_reduce_scatter", TT_REDUCE_SCATTER}, {"reduce_scatter", TT_REDUCE_SCATTER},
    {"allreduce", TT_ALLREDUCE}, {"all_reduce", TT_ALLREDUCE},
    {"send", TT_SENDRECV}, {"recv", TT_SENDRECV},
};

tt_cat tt_classify(const char *name, const char *collective)
{
    char low[512];
    size_t k = 0;
    for (; name[k] && k + 1 < sizeof low; k++) low[k] = (char)tolower((unsigned char)name[k]);
    low[k] = 0;
    if (collective && strstr(low, "nccl"))
        for (size_t i = 0; i < sizeof COLLECTIVES / sizeof COLLECTIVES[0]; i++)
            if (!strncmp(collective, COLLECTIVES[i].prefix, strlen(COLLECTIVES[i].prefix))) return COLLECTIVES[i].cat;
    for (size_t i = 0; i < sizeof PATTERNS / sizeof PATTERNS[0]; i++)
        if (strstr(low, PATTERNS[i].pattern) && (!PATTERNS[i].also || strstr(low, PATTERNS[i].also)))
            return PATTERNS[i].cat;
    return TT_OTHER;
}

/* --------------------------------------------------------------- reading */

typedef struct launch {
    double corr, ts_us;
} launch;

static int cmp_launch(const void *a, const void *b)
{
    const launch *x = a, *y = b;
    return (x->corr > y->corr) - (x->corr < y->corr);
}

static int cmp_step(const void *a, const void *b)
{
    const tt_step *x = a, *y = b;
    return (x->ts_us > y->ts_us) - (x->ts_us < y->ts_us);
}

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A non-negative number member of at most TT_MAX_US, or NAN. The bound
 * keeps sums finite: durations of 1.7e308 us each are finite but add up to
 * infinity, which the validation then showed as "inf" and -100%. */
#define TT_MAX_US 1e15 /* about 32 years */
static double num_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= TT_MAX_US ? v->valuedouble : NAN;
}

static int is_launch(const char *cat) { return cat && (!strcmp(cat, "cuda_runtime") || !strcmp(cat, "cuda_driver")); }

static int is_kernel(const char *cat) { return cat && (!strcmp(cat, "kernel") || !strcmp(cat, "Kernel")); }

/* The step whose window holds t, or NULL (steps sorted by start). */
static tt_step *step_at(tt_trace *t, double ts)
{
    for (int i = t->n_steps - 1; i >= 0; i--) {
        if (t->steps[i].ts_us > ts) continue;
        return ts <= t->steps[i].ts_us + t->steps[i].dur_us ? &t->steps[i] : NULL;
    }
    return NULL;
}

/* The ProfilerStep#N windows, GPU-side ones when there are any. */
static int read_steps(const cJSON *events, tt_trace *t, js_doc *d)
{
    int n_cpu = 0, idx = -1;
    tt_step *gpu_list = t->steps;
    tt_step *cpu_list = malloc(sizeof(tt_step) * TT_MAX_STEPS);
    if (!cpu_list) return 1;
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        idx++;
        const char *name = str_of(e, "name"), *cat = str_of(e, "cat");
        if (!name || strncmp(name, "ProfilerStep#", 13)) continue;
        const double ts = num_of(e, "ts"), dur = num_of(e, "dur");
        char *end;
        const long long number = strtoll(name + 13, &end, 10);
        if (isnan(ts) || isnan(dur) || *end || end == name + 13) {
            free(cpu_list);
            return js_doc_fail(d, "event %d (%s): a step annotation needs ProfilerStep#N with a ts and dur in "
                               "0..1e15 us", idx, name);
        }
        const int gpu = cat && !strcmp(cat, "gpu_user_annotation");
        tt_step *s = gpu ? (t->n_steps < TT_MAX_STEPS ? &gpu_list[t->n_steps++] : NULL)
                         : (n_cpu < TT_MAX_STEPS ? &cpu_list[n_cpu++] : NULL);
        if (!s) { /* its kernels would count as outside every step */
            free(cpu_list);
            return js_doc_fail(d, "event %d (%s): more than %d %s step annotations (valid: a trace of at most %d "
                                  "steps: profile fewer, e.g. with torch.profiler's schedule)",
                               idx, name, TT_MAX_STEPS, gpu ? "GPU" : "CPU", TT_MAX_STEPS);
        }
        memset(s, 0, sizeof *s);
        s->number = number;
        s->ts_us = ts;
        s->dur_us = dur;
    }
    t->gpu_windows = t->n_steps > 0;
    if (!t->gpu_windows) {
        memcpy(t->steps, cpu_list, sizeof(tt_step) * (size_t)n_cpu);
        t->n_steps = n_cpu;
    }
    free(cpu_list);
    if (t->n_steps == 0)
        return js_doc_fail(d, "no ProfilerStep#N annotation (valid: a trace of torch.profiler with prof.step() "
                              "called once per training step)");
    qsort(t->steps, (size_t)t->n_steps, sizeof t->steps[0], cmp_step);
    return 0;
}

int tt_read(const char *text, size_t len, const char *shown, tt_trace *t, char *why, size_t n)
{
    memset(t, 0, sizeof *t);
    js_doc d = {shown, why, n, "torch.profiler trace", 64, 4};
    cJSON *root = js_parse_object(&d, text, len);
    if (!root) return 2;
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    int rc = 0;
    launch *ln = NULL;
    if (!cJSON_IsArray(events)) {
        rc = js_doc_fail(&d, "no traceEvents array (valid: the Chrome trace JSON torch.profiler exports)");
        goto out;
    }
    if ((rc = read_steps(events, t, &d)) != 0) goto out;
    /* the launches, by correlation id */
    const int n_events = cJSON_GetArraySize(events);
    ln = malloc(sizeof *ln * (size_t)(n_events + 1));
    if (!ln) {
        rc = 1;
        goto out;
    }
    int n_ln = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        if (!is_launch(str_of(e, "cat"))) continue;
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
        const double corr = num_of(args, "correlation"), ts = num_of(e, "ts");
        if (!isnan(corr) && !isnan(ts)) ln[n_ln++] = (launch){corr, ts};
    }
    qsort(ln, (size_t)n_ln, sizeof *ln, cmp_launch);
    int idx = -1;
    cJSON_ArrayForEach(e, events)
    {
        idx++;
        if (!is_kernel(str_of(e, "cat"))) continue;
        const char *name = str_of(e, "name");
        const double ts = num_of(e, "ts"), dur = num_of(e, "dur");
        if (!name || isnan(ts) || isnan(dur)) {
            rc = js_doc_fail(&d, "event %d: a kernel needs a name and a ts and dur in 0..1e15 us", idx);
            goto out;
        }
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
        double at = ts;
        if (!t->gpu_windows) {
            launch key = {num_of(args, "correlation"), 0};
            const launch *l = isnan(key.corr) ? NULL : bsearch(&key, ln, (size_t)n_ln, sizeof *ln, cmp_launch);
            if (l) at = l->ts_us;
        }
        t->n_kernels++;
        tt_step *s = step_at(t, at);
        if (!s) {
            t->n_outside++;
            t->outside_us += dur;
            continue;
        }
        s->kernels++;
        s->cat_us[tt_classify(name, str_of(args, "Collective name"))] += dur;
    }
    if (t->n_kernels == 0)
        rc = js_doc_fail(&d, "no GPU kernel (no event of cat \"kernel\"): a trace of CPU activity only (valid: "
                             "profile with ProfilerActivity.CUDA)");
out:
    free(ln);
    cJSON_Delete(root);
    return rc;
}
