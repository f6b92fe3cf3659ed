/* hx_args.c: ulyharness command line. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hx.h"
#include "hx_trace.h"
#include "out_file.h"
#include "preset.h"
#include "text_quote.h"

static const char usage_head[] =
    "usage: mpirun -np P ulyharness --strategy S [options]\n"
    "Executes the plan libulysim builds for one transformer layer (forward and\n"
    "backward, plus the per-step DP/ZeRO ops) with real MPI collectives and CPU\n"
    "kernels; counts the bytes handed to MPI per op, times every op and checks\n"
    "the output and gradients against a float64 single-rank reference.\n"
    "\n"
    "  --strategy S        ";
/* ... the strategies of the registry, then: */
static const char usage_rest[] =
    "  --ulysses U --ring R --tp T   degrees. T: tensor parallelism, with sequence\n"
    "                      parallelism (megatron-tp: without), also inside ring,\n"
    "                      ulysses, allgather-cp and usp (heads split T ways, each GEMM\n"
    "                      region all-gathers the CP rank's tokens over TP); default\n"
    "                      1 there, P / PP for megatron-sp and megatron-tp. U, R:\n"
    "                      default what T leaves, P / (PP T); usp: U = 2 when that is\n"
    "                      >= 4, R the rest. DP = P / (U R T PP)\n"
    "  --pp PP             pipeline stages (default 1), the outermost group: every\n"
    "                      stage runs the layer and hands its output on (pp_send_act)\n"
    "                      and the gradient back (pp_send_grad), a ring over the\n"
    "                      stages so each rank sends what a middle stage sends;\n"
    "                      needs --layers >= PP\n"
    "  --seq N             tokens (default 128 * P; K/M suffixes are powers of 1024)\n"
    "  --heads A --kv-heads K --head-dim D   (default 8, 8, 32)\n"
    "  --ffn F             FFN hidden (default 4 * A * D)   --swiglu: SwiGLU MLP\n"
    "  --experts E --topk K --moe-ffn F   a MoE model: every layer's FFN is E\n"
    "                      routed experts F wide, K per token (a deterministic\n"
    "                      router: token g's j-th copy to expert (g K + j) mod E,\n"
    "                      so every rank sends the model's even share; gates the\n"
    "                      softmax of the router's logits over the K), beside\n"
    "  --shared-ffn S      shared experts S wide together (the MLP ops; default none)\n"
    "  --ep N --etp N      expert parallel and expert tensor parallel degrees\n"
    "                      (default 1; ep x etp divides the ranks of a stage, the\n"
    "                      rest is expert data parallelism); needs --tp 1, --zero 0..2\n"
    "  --moe-dispatcher alltoall|allgather   how tokens reach their experts\n"
    "                      (default alltoall); default: no experts (dense)\n"
    "  --batch B           micro-batch (default 1)\n"
    "  --vocab V --layers L   model size for the per-model and per-step ops (1024, 1)\n"
    "  --causal | --no-causal   (default causal)\n"
    "  --split zigzag|contiguous   causal split of ring-style strategies (zigzag)\n"
    "  --recompute none|full   (default none)\n"
    "  --zero 0..3         ZeRO stage over the data x sequence group (default 3)\n"
    "  --kernel ref|flash  attention kernel (default flash)\n"
    "  --backend mpi|nccl  what executes the plan (default mpi). mpi: CPU kernels,\n"
    "                      Open MPI, fp32. nccl: one GPU per rank (local rank), CUDA\n"
    "                      attention (flash: head dim 64 or 128; ref: cuBLAS, any),\n"
    "                      cuBLAS GEMMs, NCCL collectives, bf16/fp16/fp8; strategies\n"
    "                      ulysses, ring, usp (with --tp too), megatron-sp (forward\n"
    "                      and backward); exit 77 when\n"
    "                      there is no GPU; MPI still launches it and bootstraps NCCL\n"
    "  --dtype bf16|fp16|fp8  element type with --backend nccl (default bf16). fp8:\n"
    "                      the linear layers' GEMMs in FP8 through cuBLASLt (E4M3,\n"
    "                      E5M2 gradients, per-tensor current scaling; compute\n"
    "                      capability 8.9+, dimensions multiples of 16, a --cluster\n"
    "                      with FP8 GPUs), everything else bf16; the mpi backend\n"
    "                      refuses bf16, fp16 and fp8 (its CPUs compute in fp32)\n"
    "  --threads N         OpenBLAS / flash threads per rank (default 1)\n"
    "  --warmup W --reps R timing passes after the checked pass (default 1, 5)\n"
    "  --sync op|pass      op: a barrier over all ranks before every op, so an op's\n"
    "                      time is its own (default); pass: one barrier per pass and\n"
    "                      the ops back to back, as in training: with more ranks\n"
    "                      than cores every op then runs at the cores' fair share\n"
    "  --out FILE          write the trace (JSON lines) to FILE\n"
    "  --cluster NAME|FILE cluster profile for the plan and the trace (default cpu-local;\n"
    "                      --cluster-file is the same flag)\n"
    "  --seed S            input seed, 0..2^53 (default 1)\n"
    "  --check auto|full|sampled|none   the float64 single-rank reference check on\n"
    "                      rank 0. full: every head and row; sampled: the attention\n"
    "                      output and dQ, dK, dV of one KV head in eight (its query\n"
    "                      heads) over every row, and dX on 256 random rows, the\n"
    "                      unchecked heads' values taken from the run (see\n"
    "                      docs/design.md); none: skip it (--no-check). auto\n"
    "                      (default): full while the reference's attention is at\n"
    "                      most 1e10 flops (about 2.4K tokens at 8 heads x 32,\n"
    "                      causal), else sampled\n"
    "  --check-seed S      the sample's seed (default: drawn per run, printed and\n"
    "                      written in the trace header; give it to repeat a sample)\n"
    "  --timeout SEC       watchdog: abort when a rank makes no progress this long: no CPU\n"
    "                      time outside MPI, or a wait in MPI longer than this plus\n"
    "                      twice the longest op (default 20)\n"
    "  --microbench        collective micro-benchmark instead of a plan\n"
    "  --mb-min B --mb-max B   its message sizes (default 1K .. 16M, doubling; at\n"
    "                      least 4, one float32; rounded to whole elements per rank)\n"
    "  --print-plan        print the plan and exit\n"
    "  --quiet             no table (a plan's ops, --microbench's sizes): only errors,\n"
    "                      the check's line and the one-line result\n"
    "  --blas-probe        without mpirun: which OpenBLAS kernel set runs SGEMM\n"
    "                      fastest and correctly here, against OpenBLAS's own\n"
    "                      choice (each measured in a child process; set the\n"
    "                      winner with OPENBLAS_CORETYPE), then exit; alone\n"
    "  -V, --version       print the version and exit\n"
    "  -h, --help          print this help and exit\n";

/* The usage: the strategies named as the registry has them, wrapped at 80
 * columns under the option's text. */
static void usage_print(FILE *f)
{
    fputs(usage_head, f);
    int col = 22;
    for (int i = 0; i < ULY_STRAT_COUNT; i++) {
        const uly_strategy *s = uly_strategy_get((uly_strategy_id)i);
        if (!s) continue;
        const int last = i == ULY_STRAT_COUNT - 1, w = (int)strlen(s->name) + (last ? 0 : 2);
        if (col > 22 && col + 1 + w > 80) {
            fputs("\n                      ", f);
            col = 22;
        } else if (col > 22) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%s%s", s->name, last ? "" : " |");
        col += w;
    }
    fputc('\n', f);
    fputs(usage_rest, f);
}

void hx_args_defaults(hx_opts *o)
{
    memset(o, 0, sizeof *o);
    o->heads = 8;
    o->kv_heads = 0;
    o->head_dim = 32;
    o->batch = 1;
    o->vocab = 1024;
    o->layers = 1;
    o->pp = 1;
    o->causal = 1;
    o->split = ULY_SPLIT_ZIGZAG;
    o->recompute = ULY_RECOMPUTE_NONE;
    o->zero = 3;
    o->kernel = "flash";
    o->threads = 1;
    o->warmup = 1;
    o->reps = 5;
    o->cluster = "cpu-local";
    o->seed = 1;
    o->backend = "mpi";
    o->dtype = HX_DTYPE_DEFAULT;
    o->timeout_s = 20;
    o->mb_min = 1024;
    o->mb_max = 16 << 20;
    o->inject_fail_rank = o->inject_hang_rank = o->inject_kill_rank = -1;
    o->inject_fail_op = o->inject_hang_op = o->inject_kill_op = -1;
}

int hx_args_reject(int rank, const char *fmt, ...)
{
    if (rank == 0) {
        /* one line, what the user typed echoed with raw bytes escaped, as
         * ulysim's messages are (text_escape) */
        char msg[1024], safe[4096];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        text_escape(msg, safe, sizeof safe);
        fprintf(stderr, "ulyharness: %s\n", safe);
    }
    return 2;
}

static int parse_size(const char *flag, const char *s, int64_t *out, int rank)
{
    char why[200];
    if (uly_size_parse(s, out, why, sizeof why) != ULY_OK)
        return hx_args_reject(rank, "%s %s: not a positive size (131072, 128K, 1M)", flag, s);
    return 0;
}

/* A decimal integer in lo..hi, the whole value: strtoll alone skips leading
 * blanks (" 5"), takes a '+' and clamps what overflows to LLONG_MAX. */
static int parse_int(const char *flag, const char *s, int64_t lo, int64_t hi, int64_t *out, int rank)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!(isdigit((unsigned char)s[0]) || (s[0] == '-' && isdigit((unsigned char)s[1]))) || *end ||
        errno == ERANGE || v < lo || v > hi)
        return hx_args_reject(rank, "%s '%s': must be an integer in %lld..%lld", flag, s, (long long)lo, (long long)hi);
    *out = v;
    return 0;
}

/* "R" or "R:OP" */
static int parse_inject(const char *flag, const char *s, int *rank_out, int *op_out, int rank)
{
    char *end = NULL;
    long r = strtol(s, &end, 10);
    if (end == s || r < 0) return hx_args_reject(rank, "%s %s: want RANK or RANK:OP", flag, s);
    long op = -1;
    if (*end == ':') {
        char *e2 = NULL;
        op = strtol(end + 1, &e2, 10);
        if (e2 == end + 1 || *e2 || op < 0) return hx_args_reject(rank, "%s %s: want RANK or RANK:OP", flag, s);
    } else if (*end) {
        return hx_args_reject(rank, "%s %s: want RANK or RANK:OP", flag, s);
    }
    *rank_out = (int)r;
    *op_out = (int)op;
    return 0;
}

/* What the command line gave, beyond the values in hx_opts: every option
 * that takes a value, once each, as ulysim holds its own (the last would
 * win in silence); and the first option of a plan run and of
 * --microbench, which the other mode would ignore. canon: the option it
 * is (--cluster-file is --cluster, --no-check is --check none); val NULL:
 * a switch. */
typedef struct {
    const char *canon, *typed, *val;
} hx_given;
typedef struct {
    hx_given v[64];
    int n;
    hx_given plan, mb; /* canon NULL: none given */
} hx_givens;

/* the options a plan run reads and --microbench does not (the inputs, the
 * check, the timing's barriers, the hidden injections) */
static int plan_only(const char *canon)
{
    static const char *const plan[] = {
        "--strategy", "--ulysses", "--ring", "--tp", "--pp", "--seq", "--heads", "--kv-heads", "--head-dim", "--ffn",
        "--batch", "--vocab", "--layers", "--swiglu", "--experts", "--topk", "--moe-ffn", "--shared-ffn", "--ep",
        "--etp", "--moe-dispatcher", "--causal", "--no-causal", "--split", "--recompute", "--zero",
        "--kernel", "--sync", "--seed", "--check", "--no-check", "--check-seed", "--print-plan", "--inject-error",
        "--inject-error-row", "--inject-fail", "--inject-hang", "--inject-kill", "--inject-stop-check"};
    for (size_t k = 0; k < sizeof plan / sizeof plan[0]; k++)
        if (!strcmp(canon, plan[k])) return 1;
    return 0;
}

/* an option as a message names it: NAME 'VALUE', or NAME for a switch */
static const char *given_str(const hx_given *g, int with_name, char *buf, size_t n)
{
    char q[80];
    if (!g->val) snprintf(buf, n, "%s", g->typed);
    else if (with_name) snprintf(buf, n, "%s %s", g->typed, text_quote(g->val, q, sizeof q));
    else snprintf(buf, n, "%s", text_quote(g->val, q, sizeof q));
    return buf;
}

/* Notes option typed (val: its value, NULL for a switch); 2 (said on rank
 * 0) when it takes a value and was given before. */
static int given(hx_givens *g, const char *typed, const char *val, int rank)
{
    const char *canon = !strcmp(typed, "--cluster-file") ? "--cluster" : !strcmp(typed, "--no-check") ? "--check" : typed;
    const hx_given now = {canon, typed, val};
    if (val || !strcmp(typed, "--no-check")) {
        for (int k = 0; k < g->n; k++) {
            const hx_given *was = &g->v[k];
            if (strcmp(was->canon, canon)) continue;
            if (!val && !was->val) return 0; /* --no-check again: the same */
            char b1[200], b2[200];
            const int names = strcmp(was->typed, typed) != 0;
            return hx_args_reject(rank, "%s given twice (%s, then %s; valid: one value)", canon,
                                  given_str(was, names, b1, sizeof b1), given_str(&now, names, b2, sizeof b2));
        }
        if (g->n < (int)(sizeof g->v / sizeof g->v[0])) g->v[g->n++] = now;
    }
    if (!g->plan.canon && plan_only(canon)) g->plan = now;
    if (!g->mb.canon && (!strcmp(canon, "--mb-min") || !strcmp(canon, "--mb-max"))) g->mb = now;
    return 0;
}

static const hx_given *given_find(const hx_givens *g, const char *canon)
{
    for (int k = 0; k < g->n; k++)
        if (!strcmp(g->v[k].canon, canon)) return &g->v[k];
    return NULL;
}

/* A MoE model's options: --topk and --moe-ffn with --experts, and the
 * expert options only with it. */
static int moe_cross_check(const hx_opts *o, const hx_givens *g, int rank)
{
    static const char *const moe_only[] = {"--topk", "--moe-ffn", "--shared-ffn", "--ep", "--etp", "--moe-dispatcher"};
    char b[200];
    for (size_t k = 0; k < sizeof moe_only / sizeof moe_only[0] && !o->experts; k++) {
        const hx_given *x = given_find(g, moe_only[k]);
        if (x)
            return hx_args_reject(rank, "%s without --experts: a dense model has no experts (valid: add --experts E, "
                                  "or leave it out)", given_str(x, 1, b, sizeof b));
    }
    if (o->experts && (!o->topk || !o->moe_ffn))
        return hx_args_reject(rank, "--experts %lld without %s: a MoE layer needs how many experts a token goes to and "
                              "their FFN width (valid: --topk K --moe-ffn F)", (long long)o->experts,
                              !o->topk ? "--topk" : "--moe-ffn");
    return 0;
}

/* The checks between options, once all are read: what one mode would
 * ignore, a seed for no sample, message sizes no float32 message has. */
static int args_cross_check(const hx_opts *o, const hx_givens *g, int rank)
{
    char b[200];
    if (o->microbench && g->plan.canon)
        return hx_args_reject(rank, "%s with --microbench: the micro-benchmark runs no plan, so it would be ignored "
                              "(valid: one of them)", given_str(&g->plan, 1, b, sizeof b));
    if (!o->microbench && !o->strategy) return hx_args_reject(rank, "--strategy is required (or --microbench); see --help");
    if (!o->microbench && g->mb.canon)
        return hx_args_reject(rank, "%s without --microbench: it sizes the micro-benchmark's messages, and a plan run "
                              "has none (valid: add --microbench, or leave it out)", given_str(&g->mb, 1, b, sizeof b));
    if (moe_cross_check(o, g, rank)) return 2;
    const hx_given *seed = given_find(g, "--check-seed"), *check = given_find(g, "--check");
    if (seed && check && o->check != HX_CHECK_SAMPLED && o->check != HX_CHECK_AUTO) {
        char b2[200];
        return hx_args_reject(rank, "%s with %s: only a sampled check draws a sample to seed (valid: --check sampled, "
                              "or --check auto where it samples)", given_str(seed, 1, b, sizeof b),
                              given_str(check, 1, b2, sizeof b2));
    }
    if (o->microbench) {
        /* a float32 element at least, so that no point is 0 bytes: each
         * collective rounds its size to whole elements per rank */
        const char *const flag[2] = {"--mb-min", "--mb-max"};
        const int64_t v[2] = {o->mb_min, o->mb_max};
        for (int k = 0; k < 2; k++)
            if (v[k] < (int64_t)sizeof(float))
                return hx_args_reject(rank, "%s %lld: below one float32 element (valid: %zu or more bytes)", flag[k],
                                      (long long)v[k], sizeof(float));
        if (o->mb_min > o->mb_max)
            return hx_args_reject(rank, "--mb-min %lld%s exceeds --mb-max %lld%s (valid: --mb-min at most --mb-max)",
                                  (long long)o->mb_min, given_find(g, "--mb-min") ? "" : " (the default)",
                                  (long long)o->mb_max, given_find(g, "--mb-max") ? "" : " (the default)");
    }
    return 0;
}

/* ---------------------------------------------------------- the options */

/* The readers of the options that are more than a number in a range. Each
 * returns 0, or 2 after the message (rank 0). */
static int read_strategy(hx_opts *o, const char *a, const char *v, int rank)
{
    if (!uly_strategy_find(v)) {
        char valid[200] = "";
        for (int i = 0; i < ULY_STRAT_COUNT; i++) {
            const uly_strategy *s = uly_strategy_get((uly_strategy_id)i);
            if (!s) continue;
            size_t l = strlen(valid);
            snprintf(valid + l, sizeof valid - l, "%s%s", l ? ", " : "", s->name);
        }
        return hx_args_reject(rank, "%s %s: unknown; valid: %s", a, v, valid);
    }
    o->strategy = v;
    return 0;
}

/* v one of a vocabulary's names (count of them): its index in *out */
static int read_word(const char *a, const char *v, const char *const *names, int count, int *out, int rank)
{
    char valid[200];
    for (*out = 0; *out < count; ++*out)
        if (!strcmp(v, names[*out])) return 0;
    return hx_args_reject(rank, "%s %s: must be %s", a, v, uly_names_join(names, count, ", ", " or ", valid, sizeof valid));
}

/* the harness runs none and full: selective keeps all K,V blocks */
static int read_recompute(hx_opts *o, const char *a, const char *v, int rank)
{
    const uly_recompute runs[] = {ULY_RECOMPUTE_NONE, ULY_RECOMPUTE_FULL};
    const char *const names[] = {uly_recompute_name(runs[0]), uly_recompute_name(runs[1])};
    if (uly_recompute_find(v) == ULY_RECOMPUTE_SELECTIVE)
        return hx_args_reject(rank, "%s %s: not executed by the harness (the model keeps all K,V blocks for it); use "
                              "none or full", a, v);
    int k;
    if (read_word(a, v, names, 2, &k, rank)) return 2;
    o->recompute = runs[k];
    return 0;
}

static int read_backend(hx_opts *o, const char *a, const char *v, int rank)
{
    if (strcmp(v, "mpi") && strcmp(v, "nccl")) return hx_args_reject(rank, "%s %s: unknown; valid: mpi, nccl", a, v);
    o->backend = v;
    return 0;
}

static int read_kernel(hx_opts *o, const char *a, const char *v, int rank)
{
    static const char *const names[] = {"ref", "flash"};
    int k;
    if (read_word(a, v, names, 2, &k, rank)) return 2;
    o->kernel = names[k];
    return 0;
}

static int read_out(hx_opts *o, const char *a, const char *v, int rank)
{
    /* the trace is a file: stdout carries the table and the result line */
    if (!strcmp(v, "-"))
        return hx_args_reject(rank, "%s -: the trace is written to a file, not to standard output, which carries the "
                              "table and the result (valid: a file path; ./- for a file named -)", a);
    o->out = v;
    return 0;
}

static int read_cluster(hx_opts *o, const char *a, const char *v, int rank)
{
    (void)a, (void)rank;
    o->cluster = v;
    return 0;
}

static int read_timeout(hx_opts *o, const char *a, const char *v, int rank)
{
    /* decimal digits from the first character: strtod alone takes " 7",
     * hex ("0x10" as 16) and "inf" */
    char *end = NULL;
    double t = strtod(v, &end);
    if (!isdigit((unsigned char)v[0]) || strspn(v, "0123456789.eE+-") != strlen(v) || *end || !(t >= 0) || t > 1e6)
        return hx_args_reject(rank, "%s '%s': not a number of seconds (valid: 0..1000000, 0: off)", a, v);
    o->timeout_s = t;
    return 0;
}

/* The words of the options that take one (the --check modes in the order
 * of HX_CHECK_AUTO .. HX_CHECK_NONE; --sync op is 0, pass 1). */
static const char *const split_words[] = {ULY_SPLITS(ULY_X_NAME)};
static const char *const dtype_words[] = {ULY_DTYPES(ULY_X_NAME)};
static const char *const sync_words[] = {"op", "pass"};
static const char *const dispatcher_words[] = {ULY_MOE_DISPATCHERS(ULY_X_NAME)};
static const char *const check_words[] = {"auto", "full", "sampled", "none"};

/* How each option is read: a number in [lo, hi] or a size into the field at
 * off (its type by kind), a switch setting the int field at off to lo, one
 * of hi words (its index into the int or enum field at off), or a reader. */
typedef enum { OPT_I64, OPT_INT, OPT_U64, OPT_SIZE, OPT_SWITCH, OPT_INJECT, OPT_WORD, OPT_READ } opt_kind;
typedef struct hx_opt {
    const char *name;
    opt_kind kind;
    size_t off, off2; /* OPT_INJECT: the rank's field and the op's */
    int64_t lo, hi;
    int (*read)(hx_opts *o, const char *a, const char *v, int rank);
    const char *const *words;
} hx_opt;

#define F(field) offsetof(hx_opts, field)
#define NUM(name, kind, field, lo, hi) {name, kind, F(field), 0, lo, hi, NULL, NULL}
#define SIZE(name, field) {name, OPT_SIZE, F(field), 0, 0, 0, NULL, NULL}
#define SWITCH(name, field, value) {name, OPT_SWITCH, F(field), 0, value, 0, NULL, NULL}
#define WORD(name, field, words, count) {name, OPT_WORD, F(field), 0, 0, count, NULL, words}
#define INJECT(name, rank, op) {name, OPT_INJECT, F(rank), F(op), 0, 0, NULL, NULL}
#define READ(name, fn) {name, OPT_READ, 0, 0, 0, 0, fn, NULL}
static const hx_opt opts[] = {
    READ("--strategy", read_strategy),
    NUM("--ulysses", OPT_I64, ulysses, 1, 1 << 20),
    NUM("--ring", OPT_I64, ring, 1, 1 << 20),
    NUM("--tp", OPT_I64, tp, 1, 1 << 20),
    NUM("--pp", OPT_I64, pp, 1, 1 << 20),
    SIZE("--seq", seq),
    NUM("--heads", OPT_I64, heads, 1, 4096),
    NUM("--kv-heads", OPT_I64, kv_heads, 1, 4096),
    NUM("--head-dim", OPT_I64, head_dim, 1, 4096),
    SIZE("--ffn", ffn),
    NUM("--batch", OPT_I64, batch, 1, 1024),
    SIZE("--vocab", vocab),
    NUM("--layers", OPT_I64, layers, 1, 1000),
    SWITCH("--swiglu", swiglu, 1),
    NUM("--experts", OPT_I64, experts, 1, 4096),
    NUM("--topk", OPT_I64, topk, 1, 4096),
    SIZE("--moe-ffn", moe_ffn),
    SIZE("--shared-ffn", shared_ffn),
    NUM("--ep", OPT_I64, ep, 1, 1 << 20),
    NUM("--etp", OPT_I64, etp, 1, 1 << 20),
    WORD("--moe-dispatcher", moe_dispatcher, dispatcher_words, ULY_MOE_DISPATCHER_COUNT),
    SWITCH("--causal", causal, 1),
    SWITCH("--no-causal", causal, 0),
    WORD("--split", split, split_words, ULY_SPLIT_COUNT),
    READ("--recompute", read_recompute),
    NUM("--zero", OPT_INT, zero, 0, 3),
    READ("--backend", read_backend),
    WORD("--dtype", dtype, dtype_words, ULY_DTYPE_COUNT),
    READ("--kernel", read_kernel),
    NUM("--threads", OPT_INT, threads, 1, 256),
    NUM("--warmup", OPT_INT, warmup, 0, 100000),
    WORD("--sync", sync_pass, sync_words, 2),
    NUM("--reps", OPT_INT, reps, 1, 100000),
    READ("--out", read_out),
    READ("--cluster", read_cluster),
    READ("--cluster-file", read_cluster),
    NUM("--seed", OPT_U64, seed, 0, (int64_t)1 << 53), /* the trace's JSON number holds it exactly */
    READ("--timeout", read_timeout),
    SWITCH("--microbench", microbench, 1),
    SIZE("--mb-min", mb_min),
    SIZE("--mb-max", mb_max),
    SWITCH("--print-plan", print_plan, 1),
    SWITCH("--quiet", quiet, 1),
    SWITCH("--no-check", check, HX_CHECK_NONE),
    WORD("--check", check, check_words, 4),
    NUM("--check-seed", OPT_U64, check_seed, 1, (int64_t)1 << 53),
    SWITCH("--inject-error-row", inject_error_row, 1),
    SWITCH("--inject-error", inject_error, 1),
    INJECT("--inject-fail", inject_fail_rank, inject_fail_op),
    INJECT("--inject-hang", inject_hang_rank, inject_hang_op),
    INJECT("--inject-kill", inject_kill_rank, inject_kill_op),
    SWITCH("--inject-stop-check", inject_stop_check, 1),
};
#undef F
#undef NUM
#undef SIZE
#undef SWITCH
#undef WORD
#undef INJECT
#undef READ

/* Option d with its value v (NULL for a switch) into o: 0, or 2 after the
 * message. */
static int opt_read(const hx_opt *d, hx_opts *o, const char *a, const char *v, int rank)
{
    char *base = (char *)o;
    int64_t x = 0;
    switch (d->kind) {
    case OPT_SWITCH: *(int *)(base + d->off) = (int)d->lo; return 0;
    case OPT_SIZE: return parse_size(a, v, (int64_t *)(base + d->off), rank);
    case OPT_INJECT: return parse_inject(a, v, (int *)(base + d->off), (int *)(base + d->off2), rank);
    case OPT_WORD: return read_word(a, v, d->words, (int)d->hi, (int *)(base + d->off), rank);
    case OPT_READ: return d->read(o, a, v, rank);
    default: break;
    }
    if (parse_int(a, v, d->lo, d->hi, &x, rank)) return 2;
    if (d->kind == OPT_I64) *(int64_t *)(base + d->off) = x;
    else if (d->kind == OPT_U64) *(uint64_t *)(base + d->off) = (uint64_t)x;
    else *(int *)(base + d->off) = (int)x;
    return 0;
}

int hx_args_parse(int argc, char **argv, hx_opts *o, int rank)
{
    hx_args_defaults(o);
    hx_givens g;
    memset(&g, 0, sizeof g);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            if (rank == 0) usage_print(stdout);
            return 1;
        }
        if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
            /* the libulysim whose plans it executes: one version for both */
            if (rank == 0) printf("ulyharness %s (libulysim %s)\n", ULY_VERSION, ULY_VERSION);
            return 1;
        }
        if (!strcmp(a, "--blas-probe") || !strcmp(a, "--blas-probe-child")) /* main.c reads it alone */
            return hx_args_reject(rank, "%s runs alone, before MPI (valid: ulyharness --blas-probe, without "
                                  "mpirun or other options)", a);
        const hx_opt *d = NULL;
        for (size_t k = 0; k < sizeof opts / sizeof opts[0] && !d; k++)
            if (!strcmp(a, opts[k].name)) d = &opts[k];
        if (!d) return hx_args_reject(rank, "%s: unknown option (see --help)", a);
        /* a value is taken once; a switch takes none */
        const char *v = NULL;
        if (d->kind != OPT_SWITCH) {
            if (i + 1 >= argc) return hx_args_reject(rank, "%s: needs a value", a);
            v = argv[++i];
        }
        if (given(&g, a, v, rank) || opt_read(d, o, a, v, rank)) return 2;
    }
    if (args_cross_check(o, &g, rank)) return 2;
    o->no_check = o->check == HX_CHECK_NONE;
    return 0;
}

/* --out is checked before any work, on rank 0 which writes it; every rank
 * learns the verdict, so that a bad path ends the run on all of them. */
int hx_args_out_check(const hx_opts *o)
{
    if (!o->out) return HX_OK;
    int bad = 0;
    if (hx_world_rank() == 0) {
        char why[4400], cluster[4096];
        const char *kind = NULL;
        /* the cluster file is read later: an --out naming it must not pass */
        if (o->cluster && !preset_path(o->cluster, cluster, sizeof cluster, &kind, why, sizeof why))
            out_file_input_note(cluster, NULL);
        bad = out_file_check(o->out, OUT_FILE_STREAM, why, sizeof why);
        if (!bad) bad = hx_trace_preopen(o->out, why, sizeof why); /* a FIFO's reader */
        if (bad) hx_args_reject(0, "--out %s", why);
    }
    HX_TRY(HX_MPI(MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD)));
    return bad ? HX_USAGE : HX_OK;
}
