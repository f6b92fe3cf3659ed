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

/* A GEMM kernel of FP8 operands, by its name: counted, the first named */
static void fp8_note(tt_trace *t, const char *name)
{
    char low[512];
    size_t k = 0;
    for (; name[k] && k + 1 < sizeof low; k++) low[k] = (char)tolower((unsigned char)name[k]);
    low[k] = 0;
    if (tt_classify(name, NULL) != TT_GEMM || !(strstr(low, "e4m3") || strstr(low, "e5m2"))) return;
    if (!t->n_fp8_gemms++) snprintf(t->fp8_gemm, sizeof t->fp8_gemm, "%s", name);
}

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

/* A step annotation as read: its number, window, event index and (GPU
 * annotations) the stream it is on, as text. */
typedef struct ann {
    int64_t number;
    double ts, end;
    int event;
    char tid[40];
} ann;

static int cmp_ann(const void *a, const void *b)
{
    const ann *x = a, *y = b;
    if (x->number != y->number) return (x->number > y->number) - (x->number < y->number);
    const int t = strcmp(x->tid, y->tid);
    if (t) return t;
    return (x->event > y->event) - (x->event < y->event);
}

#define TT_MAX_STEP_NUMBER 2147483647LL /* torch.profiler counts steps from 0 in an int */
#define TT_MAX_GPU_ANN (16 * TT_MAX_STEPS) /* a GPU annotation per step and stream */

/* N of "ProfilerStep#N": decimal digits only (strtoll alone takes " 3",
 * "+3", "-3" and clamps 99999999999999999999999 to 2^63-1), in
 * 0..TT_MAX_STEP_NUMBER. 0, or -1. */
static int step_number(const char *s, int64_t *out)
{
    const size_t k = strspn(s, "0123456789");
    if (k == 0 || s[k] || k > 10) return -1;
    const long long v = strtoll(s, NULL, 10);
    if (v > TT_MAX_STEP_NUMBER) return -1;
    *out = v;
    return 0;
}

/* The ProfilerStep#N windows, GPU-side ones when there are any.
 *   - N is a whole number in 0..2147483647 (torch.profiler counts prof.step()
 *     calls from 0);
 *   - one CPU annotation per step: prof.step() records each step once, so a
 *     second ProfilerStep#N is a copy, which would count as another step;
 *   - the GPU annotations (gpu_user_annotation) come one per step and CUDA
 *     stream (the kernels of a step on each stream): those of one step are
 *     its window together (from the first start to the last end), one per
 *     stream;
 *   - the windows, one per step, do not overlap: a kernel is in at most one
 *     step (touching windows are fine). */
static int read_steps(const cJSON *events, tt_trace *t, js_doc *d)
{
    int n_cpu = 0, n_gpu = 0, idx = -1, rc = 0;
    ann *cpu = malloc(sizeof(ann) * TT_MAX_STEPS), *gpu = malloc(sizeof(ann) * TT_MAX_GPU_ANN);
    if (!cpu || !gpu) {
        free(cpu);
        free(gpu);
        return 1;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        idx++;
        const char *name = str_of(e, "name"), *cat = str_of(e, "cat");
        if (!name || strncmp(name, "ProfilerStep#", 13)) continue;
        const double ts = num_of(e, "ts"), dur = num_of(e, "dur");
        int64_t number = 0;
        if (isnan(ts) || isnan(dur) || !name[13]) {
            rc = js_doc_fail(d, "event %d (%.40s): a step annotation needs ProfilerStep#N with a ts and dur in "
                                "0..1e15 us", idx, name);
            goto out;
        }
        if (step_number(name + 13, &number)) {
            rc = js_doc_fail(d, "event %d (%.40s): the step number is not a whole number in 0..%lld (valid: "
                                "ProfilerStep#N, N as prof.step() counts the steps, from 0)",
                             idx, name, TT_MAX_STEP_NUMBER);
            goto out;
        }
        const int is_gpu = cat && !strcmp(cat, "gpu_user_annotation");
        const int cap = is_gpu ? TT_MAX_GPU_ANN : TT_MAX_STEPS;
        if ((is_gpu ? n_gpu : n_cpu) >= cap) { /* its kernels would count as outside every step */
            rc = js_doc_fail(d, "event %d (%.40s): more than %d %s step annotations (valid: a trace of at most %d "
                                "steps: profile fewer, e.g. with torch.profiler's schedule)",
                             idx, name, cap, is_gpu ? "GPU" : "CPU", TT_MAX_STEPS);
            goto out;
        }
        ann *a = is_gpu ? &gpu[n_gpu++] : &cpu[n_cpu++];
        memset(a, 0, sizeof *a);
        a->number = number;
        a->ts = ts;
        a->end = ts + dur;
        a->event = idx;
        if (is_gpu) { /* the stream: tid, a number or a name */
            const cJSON *tid = cJSON_GetObjectItemCaseSensitive(e, "tid");
            if (cJSON_IsNumber(tid)) snprintf(a->tid, sizeof a->tid, "%.17g", tid->valuedouble);
            else if (cJSON_IsString(tid)) snprintf(a->tid, sizeof a->tid, "s:%.36s", tid->valuestring);
        }
    }
    t->gpu_windows = n_gpu > 0;
    ann *list = t->gpu_windows ? gpu : cpu;
    const int n_list = t->gpu_windows ? n_gpu : n_cpu;
    if (n_list == 0) {
        rc = js_doc_fail(d, "no ProfilerStep#N annotation (valid: a trace of torch.profiler with prof.step() "
                            "called once per training step)");
        goto out;
    }
    /* by number (and stream): a step twice, or a step's windows on its streams */
    qsort(list, (size_t)n_list, sizeof *list, cmp_ann);
    t->n_steps = 0;
    for (int i = 0; i < n_list; i++) {
        const ann *a = &list[i];
        if (i > 0 && a->number == list[i - 1].number) {
            if (!strcmp(a->tid, list[i - 1].tid)) {
                rc = js_doc_fail(d, "event %d (ProfilerStep#%lld): step %lld is annotated twice%s%s (first at event "
                                    "%d) (valid: %s)",
                                 a->event, (long long)a->number, (long long)a->number,
                                 t->gpu_windows ? " on GPU stream " : "", t->gpu_windows ? a->tid : "",
                                 list[i - 1].event,
                                 t->gpu_windows ? "one gpu_user_annotation per step and stream"
                                                : "one ProfilerStep#N per step, as prof.step() records them");
                goto out;
            }
            tt_step *s = &t->steps[t->n_steps - 1]; /* the same step on another stream: one window */
            const double end = fmax(s->ts_us + s->dur_us, a->end);
            s->ts_us = fmin(s->ts_us, a->ts);
            s->dur_us = end - s->ts_us;
            continue;
        }
        if (t->n_steps >= TT_MAX_STEPS) {
            rc = js_doc_fail(d, "event %d (ProfilerStep#%lld): more than %d steps (valid: a trace of at most %d "
                                "steps: profile fewer, e.g. with torch.profiler's schedule)",
                             a->event, (long long)a->number, TT_MAX_STEPS, TT_MAX_STEPS);
            goto out;
        }
        tt_step *s = &t->steps[t->n_steps++];
        memset(s, 0, sizeof *s);
        s->number = a->number;
        s->ts_us = a->ts;
        s->dur_us = a->end - a->ts;
        s->event = a->event;
    }
    qsort(t->steps, (size_t)t->n_steps, sizeof t->steps[0], cmp_step);
    for (int i = 1; i < t->n_steps; i++) {
        const tt_step *p = &t->steps[i - 1], *s = &t->steps[i];
        if (s->ts_us < p->ts_us + p->dur_us) {
            rc = js_doc_fail(d, "event %d (ProfilerStep#%lld): its %s window %.3f..%.3f us overlaps step %lld's "
                                "%.3f..%.3f us (event %d) (valid: steps one after another, each window ending "
                                "before the next starts: a kernel belongs to one step)",
                             s->event, (long long)s->number, t->gpu_windows ? "GPU" : "CPU", s->ts_us,
                             s->ts_us + s->dur_us, (long long)p->number, p->ts_us, p->ts_us + p->dur_us, p->event);
            goto out;
        }
    }
out:
    free(cpu);
    free(gpu);
    return rc;
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
        /* CUPTI times kernels in ns, which the exporter writes as us with
         * three decimals: a duration above 0 is at least 0.001 us (smaller,
         * the per-step sums validate divides by are no measurement) */
        if (dur > 0 && dur < TT_MIN_DUR_US) {
            rc = js_doc_fail(&d, "event %d (%.40s): a kernel's dur %g us is above 0 but below CUPTI's 1 ns "
                                 "resolution (valid: 0, or at least %g us)", idx, name, dur, TT_MIN_DUR_US);
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
        fp8_note(t, name);
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
