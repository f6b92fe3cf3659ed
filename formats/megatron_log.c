/* megatron_log.c: the Megatron-LM log reader (megatron_log.h): the argument
 * block, the vocabulary padding line, iteration and memory reports (what
 * they say of the run's model and parallel layout is megatron_run.c's).
 *
 * Lines may carry a launcher's prefix ("0: ", a timestamp): every pattern is
 * found inside the line, never anchored at its start. */
#include "megatron_log.h"
#include "moe_freq.h"
#include "runs_read.h"
#include "text_file.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* A value as a message quotes it: printable, at most 40 characters (of its
 * first len bytes). */
static const char *quoted_n(const char *v, size_t len, char *buf, size_t n)
{
    size_t j = 0;
    buf[j++] = '\'';
    for (size_t i = 0; i < len && v[i] && j + 5 < n && i < 40; i++)
        buf[j++] = (v[i] >= 0x20 && v[i] < 0x7f) ? v[i] : '?';
    buf[j++] = '\'';
    buf[j] = 0;
    return buf;
}

static const char *quoted(const char *v, char *buf, size_t n) { return quoted_n(v, strlen(v), buf, n); }

/* ---------------------------------------------------------------- numbers */

/* The token at p: a field's value, from its first non-blank up to the
 * separator Megatron-LM prints after it ("4012.5 |", "size: 16,", "new
 * size: 50304)") or the end of the line, less trailing blanks. So the whole
 * field is the number: "4012.5 5 |" is not read as 4012.5. A comma between
 * digits is no separator but part of the number, written through a logger
 * or a locale ("5,123.4", "5123,4"): the token runs on over it, so the
 * number is refused by name (the digits ',' is not one of), never read as
 * its first group (5). */
static const char *token_at(const char *p, size_t *len)
{
    p += strspn(p, " \t");
    size_t k = strcspn(p, "|,)");
    while (p[k] == ',' && k && isdigit((unsigned char)p[k - 1]) && isdigit((unsigned char)p[k + 1]))
        k += 1 + strcspn(p + k + 1, "|,)");
    while (k && (p[k - 1] == ' ' || p[k - 1] == '\t' || p[k - 1] == '\r')) k--;
    *len = k;
    return p;
}

/* The token at p as a finite decimal number: 0, or 2 when the token is not
 * one number whole. strtod alone reads a prefix ("99999x" as 99999, "4\xff0"
 * as 4) and also hex, "inf" and "nan", none of which Megatron-LM prints; an
 * overflow or underflow (ERANGE) is no measurement either. *tok, *tok_len:
 * the token, for the message. */
static int read_real(const char *p, double *x, const char **tok, size_t *tok_len)
{
    const char *t = token_at(p, tok_len);
    *tok = t;
    if (!*tok_len || strspn(t, "0123456789.eE+-") < *tok_len) return 2;
    char *end;
    errno = 0;
    *x = strtod(t, &end);
    return end != t + *tok_len || errno == ERANGE || !isfinite(*x) ? 2 : 0;
}

/* The token at p as a decimal integer in [lo, hi]: 0, or 2 (as read_real). */
static int read_int(const char *p, int64_t lo, int64_t hi, int64_t *x, const char **tok, size_t *tok_len)
{
    const char *t = token_at(p, tok_len);
    *tok = t;
    if (!*tok_len || strspn(t, "0123456789+-") < *tok_len) return 2;
    char *end;
    errno = 0;
    long long v = strtoll(t, &end, 10);
    if (end != t + *tok_len || errno == ERANGE || v < lo || v > hi) return 2;
    *x = v;
    return 0;
}

/* s's label: found inside the line, but not after a '-', so that
 * "tensor-model-parallel size:" is not found inside
 * "encoder-tensor-model-parallel size:". Anything else may precede it:
 * Megatron-LM's start-up line prints "hierarchical context-parallel sizes:
 * Nonetensor-model-parallel size: 8" (no separator in its format string). */
static const char *label_in(const char *s, const char *label)
{
    for (const char *p = strstr(s, label); p; p = strstr(p + 1, label))
        if (p == s || p[-1] != '-') return p;
    return NULL;
}

/* The number after `label` in s: 0 and *x, 1 when the label is absent, 2
 * when what follows it is not a finite non-negative number, its token
 * quoted in bad. */
static int field_num(const char *s, const char *label, double *x, char *bad, size_t bad_n)
{
    const char *p = label_in(s, label), *tok;
    size_t k;
    if (!p) return 1;
    if (read_real(p + strlen(label), x, &tok, &k) || *x < 0) {
        quoted_n(tok, k, bad, bad_n);
        return 2;
    }
    return 0;
}

/* ------------------------------------------------------ the argument block */

typedef enum { A_INT, A_BOOL, A_REAL, A_WORD, A_PAIR, A_FACTOR, A_FREQ, A_TEXT } arg_type;

/* An argument the reader keeps: its name in the block, its type, where it goes. */
typedef struct arg_spec {
    const char *key;
    arg_type type;
    size_t off;
} arg_spec;

#define F(field) offsetof(mlog_run, field)
static const arg_spec ARGS[] = {
    {"world_size", A_INT, F(world_size)},
    {"tensor_model_parallel_size", A_INT, F(tp)},
    {"context_parallel_size", A_INT, F(cp)},
    {"pipeline_model_parallel_size", A_INT, F(pp)},
    {"virtual_pipeline_model_parallel_size", A_INT, F(vpp)},
    {"num_layers_per_virtual_pipeline_stage", A_INT, F(layers_per_vstage)},
    {"seq_length", A_INT, F(seq)},
    {"micro_batch_size", A_INT, F(micro_batch)},
    {"global_batch_size", A_INT, F(global_batch)},
    {"num_layers", A_INT, F(layers)},
    {"hidden_size", A_INT, F(hidden)},
    {"num_attention_heads", A_INT, F(heads)},
    {"group_query_attention", A_BOOL, F(gqa)},
    {"num_query_groups", A_INT, F(kv_heads)},
    {"kv_channels", A_INT, F(head_dim)},
    {"ffn_hidden_size", A_INT, F(ffn_hidden)},
    {"padded_vocab_size", A_INT, F(padded_vocab_arg)},
    {"vocab_size", A_INT, F(vocab_arg)},
    {"log_interval", A_INT, F(log_interval)},
    {"swiglu", A_BOOL, F(swiglu)},
    {"sequence_parallel", A_BOOL, F(sequence_parallel)},
    {"use_distributed_optimizer", A_BOOL, F(distributed_optimizer)},
    {"fp16", A_BOOL, F(fp16)},
    {"bf16", A_BOOL, F(bf16)},
    {"untie_embeddings_and_output_weights", A_BOOL, F(untied)},
    {"hidden_dropout", A_REAL, F(dropout)},
    {"attention_dropout", A_REAL, F(dropout)},
    {"recompute_granularity", A_WORD, F(recompute)},
    {"cp_comm_type", A_WORD, F(cp_comm)},
    {"hierarchical_context_parallel_sizes", A_PAIR, F(hcp_u)},
    /* FP8 training (Megatron-LM's --fp8-format, --fp8-recipe, --fp8-param-gather) */
    {"fp8", A_WORD, F(fp8)},
    {"fp8_recipe", A_WORD, F(fp8_recipe)},
    {"fp8_param_gather", A_BOOL, F(fp8_param_gather)},
    /* where the main gradients live, as validate_args left it */
    {"accumulate_allreduce_grads_in_fp32", A_BOOL, F(grads_fp32)},
    /* the cross-entropy's kernels */
    {"cross_entropy_loss_fusion", A_BOOL, F(ce_fusion)},
    {"cross_entropy_fusion_impl", A_WORD, F(ce_impl)},
    /* how the main gradients are accumulated */
    {"gradient_accumulation_fusion", A_BOOL, F(grad_accum_fusion)},
    /* the linear layers' biases and the layers' implementation */
    {"add_bias_linear", A_BOOL, F(bias)},
    {"add_qkv_bias", A_BOOL, F(qkv_bias)},
    {"transformer_impl", A_WORD, F(transformer_impl)},
    /* an uneven pipeline's split (megatron/training/arguments.py) */
    {"decoder_first_pipeline_num_layers", A_INT, F(pp_first)},
    {"decoder_last_pipeline_num_layers", A_INT, F(pp_last)},
    {"account_for_embedding_in_pipeline_split", A_BOOL, F(pp_embed)},
    {"account_for_loss_in_pipeline_split", A_BOOL, F(pp_loss)},
    {"pipeline_model_parallel_layout", A_TEXT, F(pp_layout)},
    /* a mixture of experts and latent attention: the argparse dests of
     * Megatron-LM's megatron/training/arguments.py (_add_moe_args,
     * _add_mla_args, and those it takes from TransformerConfig and
     * ModelParallelConfig by their field names) */
    {"num_experts", A_INT, F(experts)},
    {"moe_router_topk", A_INT, F(topk)},
    {"moe_ffn_hidden_size", A_INT, F(moe_ffn_hidden)},
    {"moe_shared_expert_intermediate_size", A_INT, F(shared_ffn_hidden)},
    {"moe_layer_freq", A_FREQ, F(moe_dense_first)},
    {"expert_model_parallel_size", A_INT, F(ep)},
    {"expert_tensor_parallel_size", A_INT, F(etp)},
    {"moe_token_dispatcher_type", A_WORD, F(moe_dispatcher)},
    {"moe_expert_capacity_factor", A_FACTOR, F(moe_capacity)},
    {"multi_latent_attention", A_BOOL, F(mla)},
    {"q_lora_rank", A_INT, F(q_lora_rank)},
    {"kv_lora_rank", A_INT, F(kv_lora_rank)},
    {"qk_head_dim", A_INT, F(qk_head_dim)},
    {"qk_pos_emb_head_dim", A_INT, F(qk_pos_dim)},
    {"v_head_dim", A_INT, F(v_head_dim)},
};
#undef F
#define N_ARGS ((int)(sizeof ARGS / sizeof ARGS[0]))
_Static_assert(sizeof ARGS / sizeof ARGS[0] <= MLOG_MAX_KEYS, "mlog_run keeps a line per argument: raise "
                                                              "MLOG_MAX_KEYS");

static int is_none(const char *v) { return !strcmp(v, "None") || !*v; }

/* One value into its field, and into canon as read (an integer in decimal,
 * True/False, the word; "None"), to compare a repeat of the key with.
 * group_query_attention, num_query_groups and the vocabulary are resolved
 * after the block (the groups count only when GQA is on). */
static int arg_store(mlog_run *r, const arg_spec *s, const char *v, char *canon, const char *shown, int line,
                     char *why, size_t n)
{
    char qb[64];
    char *dst = (char *)r + s->off;
    snprintf(canon, MLOG_VALUE, "None");
    if (is_none(v)) return 0;
    switch (s->type) {
    case A_INT: {
        char *end;
        errno = 0;
        long long x = strtoll(v, &end, 10);
        if (end == v || *end || errno == ERANGE || x < 1 || x > (1LL << 40))
            return text_fail_at(why, n, shown, line, "%s %s: not a positive integer", s->key, quoted(v, qb, sizeof qb));
        *(int64_t *)dst = x;
        snprintf(canon, MLOG_VALUE, "%lld", x);
        return 0;
    }
    case A_BOOL:
        if (strcmp(v, "True") && strcmp(v, "False"))
            return text_fail_at(why, n, shown, line, "%s %s: not True or False", s->key, quoted(v, qb, sizeof qb));
        *(int *)dst = !strcmp(v, "True");
        snprintf(canon, MLOG_VALUE, "%s", v);
        return 0;
    case A_REAL: { /* dropout probabilities: any above 0 means masks are kept */
        double x;
        const char *tok;
        size_t k;
        if (read_real(v, &x, &tok, &k) || tok[k] || !(x >= 0 && x <= 1))
            return text_fail_at(why, n, shown, line, "%s %s: not a probability in [0, 1]", s->key, quoted(v, qb, sizeof qb));
        if (x > 0) *(int *)dst = 1;
        else if (*(int *)dst < 0) *(int *)dst = 0;
        snprintf(canon, MLOG_VALUE, "%.17g", x);
        return 0;
    }
    case A_TEXT: { /* the whole value, as printed (a layout string's commas are its own) */
        const size_t k = strlen(v);
        if (k + 1 >= MLOG_TEXT)
            return text_fail_at(why, n, shown, line, "%s %s: longer than %d characters", s->key, quoted(v, qb, sizeof qb),
                                MLOG_TEXT - 1);
        memcpy(dst, v, k + 1);
        /* a repeat compares its first MLOG_VALUE - 1 characters */
        snprintf(canon, MLOG_VALUE, "%.*s", MLOG_VALUE - 1, v);
        return 0;
    }
    case A_WORD: { /* a word, or the first of a per-layer list ['p2p', 'p2p'] */
        const char *p = v;
        while (*p == '[' || *p == '\'' || *p == '"' || *p == ' ') p++;
        size_t k = 0;
        while (p[k] && p[k] != '\'' && p[k] != '"' && p[k] != ',' && p[k] != ']' && k + 1 < MLOG_WORD) k++;
        if (k == 0 || k + 1 >= MLOG_WORD)
            return text_fail_at(why, n, shown, line, "%s %s: not a word", s->key, quoted(v, qb, sizeof qb));
        memcpy(dst, p, k);
        dst[k] = 0;
        if (!strcmp(dst, "None")) dst[0] = 0;
        snprintf(canon, MLOG_VALUE, "%s", dst[0] ? dst : "None");
        return 0;
    }
    case A_FACTOR: { /* moe_expert_capacity_factor: a positive factor */
        double x;
        const char *tok;
        size_t k;
        if (read_real(v, &x, &tok, &k) || tok[k] || !(x > 0 && x <= 1024))
            return text_fail_at(why, n, shown, line, "%s %s: not a factor (valid: None, or above 0 up to 1024)", s->key,
                                quoted(v, qb, sizeof qb));
        *(double *)dst = x;
        snprintf(canon, MLOG_VALUE, "%.17g", x);
        return 0;
    }
    case A_FREQ: { /* an integer, or the evaluated pattern [0, 0, 1, 1]: its length is checked after the block */
        char msg[256];
        int64_t first, every, entries;
        if (moe_freq_parse(s->key, v, 0, &first, &every, &entries, msg, sizeof msg))
            return text_fail_at(why, n, shown, line, "%s", msg);
        r->moe_dense_first = first;
        r->moe_every = every;
        r->moe_freq_entries = entries;
        snprintf(canon, MLOG_VALUE, "%lld/%lld/%lld", (long long)first, (long long)every, (long long)entries);
        return 0;
    }
    case A_PAIR: { /* [u, r], whole: sscanf would stop at "[2, 2x" and call it [2, 2] */
        const char *p = v + strspn(v, " ");
        long long u = 0, rr = 0;
        char *end = NULL;
        int ok = *p++ == '[';
        if (ok) u = strtoll(p, &end, 10), ok = end != p;
        if (ok) p = end + strspn(end, " "), ok = *p++ == ',';
        if (ok) rr = strtoll(p, &end, 10), ok = end != p;
        if (ok) p = end + strspn(end, " "), ok = *p++ == ']' && !p[strspn(p, " ")];
        if (!ok || u < 1 || rr < 1 || u > (1LL << 30) || rr > (1LL << 30))
            return text_fail_at(why, n, shown, line, "%s %s: not two degrees [U, R]", s->key, quoted(v, qb, sizeof qb));
        r->hcp_u = u;
        r->hcp_r = rr;
        snprintf(canon, MLOG_VALUE, "[%lld, %lld]", u, rr);
        return 0;
    }
    }
    return 0;
}

/* "  key ........ value": the key is the word before the run of dots. A key
 * given again must say the same: Megatron-LM prints each argument once, so
 * a second value is an edited or spliced log, and neither value can be
 * trusted over the other. */
static int arg_line(mlog_run *r, char *s, const char *shown, int line, char *why, size_t n)
{
    char *dots = strstr(s, " ..");
    if (!dots) return 0; /* not an argument line: Megatron prints nothing else there, but a launcher might */
    char *val = dots + 1;
    while (*val == '.') val++;
    while (*val == ' ') val++;
    size_t vl = strlen(val);
    while (vl && (val[vl - 1] == ' ' || val[vl - 1] == '\r')) val[--vl] = 0;
    char *key_end = dots;
    char *key = key_end;
    while (key > s && key[-1] != ' ') key--;
    *key_end = 0;
    for (int i = 0; i < N_ARGS; i++) {
        if (strcmp(key, ARGS[i].key)) continue;
        char canon[MLOG_VALUE], qa[64], qb[64];
        int rc = arg_store(r, &ARGS[i], val, canon, shown, line, why, n);
        if (rc) return rc;
        if (r->key_line[i] && strcmp(canon, r->key_value[i]))
            return text_fail_at(why, n, shown, line, "%s %s contradicts %s %s on line %d (valid: each argument once, "
                                "or repeated with the same value)", key, quoted(val, qa, sizeof qa), key,
                                quoted(r->key_value[i], qb, sizeof qb), r->key_line[i]);
        if (!r->key_line[i]) {
            r->key_line[i] = line;
            snprintf(r->key_value[i], MLOG_VALUE, "%s", canon);
        }
        return 0;
    }
    return 0;
}

int mlog_arg_line(const mlog_run *r, const char *key)
{
    for (int i = 0; i < N_ARGS; i++)
        if (!strcmp(key, ARGS[i].key)) return r->key_line[i];
    return 0;
}

/* ------------------------------------------------------- the start-up line */

/* "using world size: 16, data-parallel size: 2, context-parallel size: 1,
 * tensor-model-parallel size: 8, pipeline-model-parallel size: 1": the
 * sizes the block also gives, each optional (Megatron-LM versions print
 * different sets). A second such line must say the same. */
static int banner_line(mlog_run *r, const char *s, const char *shown, int line, char *why, size_t n)
{
    const struct {
        const char *label;
        int64_t *dst;
    } F[] = {{"world size:", &r->banner_world},
             {"context-parallel size:", &r->banner_cp},
             {"tensor-model-parallel size:", &r->banner_tp},
             {"pipeline-model-parallel size:", &r->banner_pp}};
    for (size_t i = 0; i < sizeof F / sizeof F[0]; i++) {
        const char *p = label_in(s, F[i].label), *tok;
        size_t k;
        int64_t x;
        char qb[64];
        if (!p) continue;
        if (read_int(p + strlen(F[i].label), 1, 1LL << 40, &x, &tok, &k))
            return text_fail_at(why, n, shown, line, "'%s' %s: not a positive integer", F[i].label,
                                quoted_n(tok, k, qb, sizeof qb));
        if (r->banner_line && *F[i].dst && *F[i].dst != x)
            return text_fail_at(why, n, shown, line, "'%s %lld' contradicts '%s %lld' on line %d (valid: one run per "
                                "log)", F[i].label, (long long)x, F[i].label, (long long)*F[i].dst, r->banner_line);
        *F[i].dst = x;
    }
    if (!r->banner_line) r->banner_line = line;
    return 0;
}

/* The start-up line against the block: the two say the same sizes in other
 * words; where they disagree the log is not one run's, and neither can be
 * taken. The block's default (1) stands for a size it does not give. */
static int banner_check(const mlog_run *r, const char *shown, char *why, size_t n)
{
    if (!r->banner_line) return 0;
    const struct {
        const char *label, *key;
        int64_t said, block, dflt;
    } C[] = {{"world size:", "world_size", r->banner_world, r->world_size, 0},
             {"context-parallel size:", "context_parallel_size", r->banner_cp, r->cp, 1},
             {"tensor-model-parallel size:", "tensor_model_parallel_size", r->banner_tp, r->tp, 1},
             {"pipeline-model-parallel size:", "pipeline_model_parallel_size", r->banner_pp, r->pp, 1}};
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
        const int64_t block = C[i].block > 0 ? C[i].block : C[i].dflt;
        if (!C[i].said || !block || C[i].said == block) continue;
        const int at = mlog_arg_line(r, C[i].key);
        return text_fail_at(why, n, shown, at ? at : r->args_line, "%s %lld%s contradicts '%s %lld' on line %d (valid: "
                            "the sizes the run started with, the same in both)", C[i].key, (long long)block,
                            at ? "" : " (its default: the block does not give it)", C[i].label, (long long)C[i].said,
                            r->banner_line);
    }
    return 0;
}

/* ------------------------------------------------------------ the reports */

/* " iteration   10/  100 |": a report's header. 0: none in s; 1 with the
 * iteration and the run's length; 2 (reason in why) when the header's
 * numbers are not whole positive integers, the iteration at most the
 * length. A header is "iteration ", one token, '/': so "1.5/", "Infinity/"
 * and "-9223372036854775808/" are headers with a bad number, not lines
 * that are no report. */
static int report_header(const char *s, int64_t *it, int64_t *total, const char *shown, int line, char *why, size_t n)
{
    for (const char *p = strstr(s, "iteration "); p; p = strstr(p + 1, "iteration ")) {
        const char *q = p + strlen("iteration ");
        while (*q == ' ') q++;
        size_t k = strcspn(q, " /");
        const char *slash = q + k + strspn(q + k, " ");
        if (!k || *slash != '/') continue;
        char num[64], qb[64];
        const char *tok;
        size_t tk;
        snprintf(num, sizeof num, "%.*s", (int)(k < 63 ? k : 63), q);
        if (k >= 63 || read_int(num, 1, INT64_MAX / 2, it, &tok, &tk))
            return text_fail_at(why, n, shown, line, "iteration %s: not a positive integer (valid: Megatron-LM's "
                                "'iteration N/ TOTAL', N counting from 1)", quoted_n(q, k, qb, sizeof qb));
        if (read_int(slash + 1, 1, INT64_MAX / 2, total, &tok, &tk))
            return text_fail_at(why, n, shown, line, "iteration %lld/ %s: the run's length is not a positive integer "
                                "(valid: Megatron-LM's 'iteration N/ TOTAL')", (long long)*it,
                                quoted_n(tok, tk, qb, sizeof qb));
        if (*it > *total)
            return text_fail_at(why, n, shown, line, "iteration %lld/ %lld: past the run's length (valid: N at most "
                                "TOTAL)", (long long)*it, (long long)*total);
        return 1;
    }
    return 0;
}

static const char *const TIME = "elapsed time per iteration (ms):";
static const char *const TPUT = "throughput per GPU (TFLOP/s/GPU):";

static int report_line(mlog_run *r, const char *s, int64_t it, int64_t total, int last_unterminated, const char *shown,
                       int line, char *why, size_t n)
{
    double ms, tf = NAN;
    char bad[64];
    if (r->last_iteration && it <= r->last_iteration)
        return text_fail_at(why, n, shown, line, "iteration %lld after iteration %lld on line %d (valid: reports in "
                            "the order of their iterations, each once: one run per log)", (long long)it,
                            (long long)r->last_iteration, r->last_iteration_line);
    if (r->train_iters && total != r->train_iters)
        return text_fail_at(why, n, shown, line, "iteration %lld/ %lld contradicts the run's length %lld on line %d "
                            "(valid: one run per log)", (long long)it, (long long)total, (long long)r->train_iters,
                            r->train_iters_line);
    int st = field_num(s, TIME, &ms, bad, sizeof bad);
    if (st == 1)
        return text_fail_at(why, n, shown, line, "iteration %lld: no '%s'%s", (long long)it, TIME,
                    last_unterminated ? " (the log is cut short)" : " (valid: Megatron-LM's iteration report)");
    if (st == 2 || !(ms > 0)) {
        if (st == 0) snprintf(bad, sizeof bad, "'%g'", ms);
        return text_fail_at(why, n, shown, line, "iteration %lld: '%s' is not a positive number: %s (valid: "
                            "milliseconds, e.g. 4012.5)", (long long)it, TIME, bad);
    }
    /* the row's step_s floor (runs_read.h: no step is shorter than a
     * microsecond), in the log's milliseconds */
    if (ms < RUNS_MIN_STEP_S * 1e3)
        return text_fail_at(why, n, shown, line, "iteration %lld: '%s' %g: below any step's time (valid: milliseconds "
                            "of at least %g, e.g. 4012.5)", (long long)it, TIME, ms, RUNS_MIN_STEP_S * 1e3);
    if (last_unterminated)
        return text_fail_at(why, n, shown, line, "iteration %lld: the last line has no newline (the log is cut short)",
                    (long long)it);
    st = field_num(s, TPUT, &tf, bad, sizeof bad);
    if (st == 2)
        return text_fail_at(why, n, shown, line, "iteration %lld: '%s' is not a number: %s (valid: TFLOP/s, e.g. "
                            "135.2)", (long long)it, TPUT, bad);
    if (st == 0 && tf < RUNS_MIN_TFLOPS) /* runs_read.h: no processor that trains a model is that slow */
        return text_fail_at(why, n, shown, line, "iteration %lld: '%s' %g: below any GPU's throughput (valid: "
                            "TFLOP/s of at least %g, e.g. 135.2)", (long long)it, TPUT, tf, RUNS_MIN_TFLOPS);
    r->last_iteration = it;
    r->last_iteration_line = line;
    if (!r->train_iters) {
        r->train_iters = total;
        r->train_iters_line = line;
    }
    if (r->n_reports < MLOG_MAX_REPORTS) {
        mlog_report *p = &r->reports[r->n_reports++];
        p->line = line;
        p->iteration = it;
        p->iter_ms = ms;
        p->tflops = st == 0 ? tf : NAN;
    }
    return 0;
}

/* "[Rank 0] (after 10 iterations) memory (MB) | allocated: ... | max reserved: ..." */
static int memory_line(mlog_run *r, const char *s, const char *shown, int line, char *why, size_t n)
{
    double x;
    char bad[64];
    const char *label = "max reserved:";
    int st = field_num(s, label, &x, bad, sizeof bad);
    if (st == 1) st = field_num(s, label = "max allocated:", &x, bad, sizeof bad);
    if (st == 1) return 0;
    if (st == 2)
        return text_fail_at(why, n, shown, line, "memory report: '%s' is not a number: %s (valid: MB, e.g. 61440.0)",
                            label, bad);
    /* 0: nothing reserved yet, no peak; above 0, the row's mem_gib floor
     * (runs_read.h: the allocator reserves 2 MiB blocks) */
    if (x > 0 && x < RUNS_MIN_MEM_GIB * 1024)
        return text_fail_at(why, n, shown, line, "memory report: '%s' %g: below any GPU process's memory (valid: 0, "
                            "or MB of at least %g, e.g. 61440.0)", label, x, RUNS_MIN_MEM_GIB * 1024);
    if (x > r->mem_peak_mb) {
        r->mem_peak_mb = x;
        r->mem_line = line;
    }
    return 0;
}

/* ------------------------------------------------------------------ parse */

/* What the block gives in two words, and the padding line against it, once
 * the whole log is read. */
static int resolve(mlog_run *r, const char *shown, char *why, size_t n)
{
    int rc = banner_check(r, shown, why, n);
    if (rc) return rc;
    if (r->gqa != 1) r->kv_heads = r->heads; /* num_query_groups counts only under group_query_attention */
    /* the padding line and padded_vocab_size both give the padded size */
    const int pv_line = mlog_arg_line(r, "padded_vocab_size"), v_line = mlog_arg_line(r, "vocab_size");
    if (r->vocab_line && r->padded_vocab_arg && r->vocab != r->padded_vocab_arg)
        return text_fail_at(why, n, shown, r->vocab_line, "padded vocab new size %lld contradicts padded_vocab_size "
                            "%lld on line %d (valid: one run per log)", (long long)r->vocab,
                            (long long)r->padded_vocab_arg, pv_line);
    if (!r->vocab_line) r->vocab = r->padded_vocab_arg ? r->padded_vocab_arg : r->vocab_arg;
    /* padding only adds tokens */
    if (r->vocab_arg && r->vocab < r->vocab_arg)
        return text_fail_at(why, n, shown, r->vocab_line ? r->vocab_line : pv_line, "padded vocabulary %lld is smaller "
                            "than vocab_size %lld on line %d (valid: a padded size at least the vocabulary)",
                            (long long)r->vocab, (long long)r->vocab_arg, v_line);
    /* the evaluated --moe-layer-freq pattern has an entry per layer (moe_freq_type) */
    if (r->experts > 0 && r->moe_freq_entries && r->layers > 0 && r->moe_freq_entries != r->layers)
        return text_fail_at(why, n, shown, mlog_arg_line(r, "moe_layer_freq"), "moe_layer_freq: %lld entries, and "
                            "num_layers %lld on line %d (valid: one entry per layer)", (long long)r->moe_freq_entries,
                            (long long)r->layers, mlog_arg_line(r, "num_layers"));
    /* Megatron-LM computes virtual_pipeline_model_parallel_size from
     * num_layers_per_virtual_pipeline_stage when that is given, and prints both */
    if (r->vpp > 0 && r->layers_per_vstage > 0 && r->layers > 0) {
        const int64_t pp = r->pp > 0 ? r->pp : 1, want = r->layers / pp / r->layers_per_vstage;
        if (want != r->vpp)
            return text_fail_at(why, n, shown, mlog_arg_line(r, "virtual_pipeline_model_parallel_size"),
                                "virtual_pipeline_model_parallel_size %lld contradicts num_layers_per_virtual_pipeline_"
                                "stage %lld on line %d (%lld layers over %lld stages: %lld virtual stages)",
                                (long long)r->vpp, (long long)r->layers_per_vstage,
                                mlog_arg_line(r, "num_layers_per_virtual_pipeline_stage"), (long long)r->layers,
                                (long long)pp, (long long)want);
    }
    return 0;
}

/* need_block: 0 reads a log without its argument block too (an excerpt, a
 * log rotated past its start): its iteration reports are then read from
 * the first line on, as after a block (mlog_parse_reports) */
static int parse(const char *text, size_t len, const char *shown, mlog_run *r, int need_block, char *why, size_t n)
{
    memset(r, 0, sizeof *r);
    r->swiglu = r->sequence_parallel = r->distributed_optimizer = r->fp16 = r->bf16 = r->untied = r->dropout = -1;
    r->fp8_param_gather = r->grads_fp32 = r->ce_fusion = r->grad_accum_fusion = r->bias = r->qkv_bias = r->pp_embed =
        r->pp_loss = -1;
    r->gqa = -1;
    r->mla = -1;
    enum { BEFORE, IN, AFTER } state = BEFORE;
    int line = 0;
    char *buf = malloc(MLOG_MAX_LINE + 1);
    if (!buf) return text_fail_at(why, n, shown, 0, "out of memory");
    size_t pos = 0;
    int rc = 0;
    while (pos < len && !rc) {
        line++;
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t l = nl ? (size_t)(nl - (text + pos)) : len - pos;
        if (l > MLOG_MAX_LINE) {
            rc = text_fail_at(why, n, shown, line, "a line of more than %d bytes (valid: a Megatron-LM log)", MLOG_MAX_LINE);
            break;
        }
        if (memchr(text + pos, 0, l)) {
            rc = text_fail_at(why, n, shown, line, "a NUL byte (valid: a text log)");
            break;
        }
        memcpy(buf, text + pos, l);
        buf[l] = 0;
        pos += l + (nl ? 1 : 0);
        if (state == IN) {
            if (strstr(buf, "- end of arguments -")) state = AFTER;
            else rc = arg_line(r, buf, shown, line, why, n);
            continue;
        }
        if (strstr(buf, "- arguments -")) {
            if (state == AFTER) {
                rc = text_fail_at(why, n, shown, line, "a second argument block (valid: one run per log; give each run's "
                                               "log on its own)");
                break;
            }
            state = IN;
            r->args_line = line;
            continue;
        }
        if (strstr(buf, "using world size:")) {
            rc = banner_line(r, buf, shown, line, why, n);
            continue;
        }
        const char *v = strstr(buf, "padded vocab (size:");
        if (v) {
            const char *p = strstr(v, "new size:"), *tok = v;
            size_t k = 0;
            int64_t nv;
            char qb[64];
            if (!p || read_int(p + strlen("new size:"), 1, 1 << 24, &nv, &tok, &k))
                rc = text_fail_at(why, n, shown, line, "padded vocab: %s%s (valid: '(new size: N)', N from 1 to "
                                  "16777216)", p ? "not a vocabulary size: new size " : "no 'new size: N'",
                                  p ? quoted_n(tok, k, qb, sizeof qb) : "");
            else if (r->vocab_line && nv != r->vocab)
                rc = text_fail_at(why, n, shown, line, "padded vocab new size %lld contradicts new size %lld on line %d "
                                  "(valid: one run per log)", (long long)nv, (long long)r->vocab, r->vocab_line);
            else if (!r->vocab_line) {
                r->vocab = nv;
                r->vocab_line = line;
            }
            continue;
        }
        int64_t it = 0, total = 0;
        const int reports = state == AFTER || (!need_block && state == BEFORE);
        int hdr = reports ? report_header(buf, &it, &total, shown, line, why, n) : 0;
        if (hdr == 2) rc = 2;
        else if (hdr == 1) rc = report_line(r, buf, it, total, !nl, shown, line, why, n);
        else if (reports && strstr(buf, TIME))
            /* Megatron-LM prints the time only in the report, after its header */
            rc = text_fail_at(why, n, shown, line, "'%s' without 'iteration N/ TOTAL' (valid: Megatron-LM's iteration "
                              "report)", TIME);
        else if (strstr(buf, "memory (MB)")) rc = memory_line(r, buf, shown, line, why, n);
    }
    free(buf);
    if (rc) return rc;
    if (state == BEFORE && need_block)
        return text_fail_at(why, n, shown, 0, "no Megatron-LM argument block ('---- arguments ----'; valid: the log of a "
                                      "Megatron-LM training run from its start, or, for `runs from-megatron`, "
                                      "the layout and model by --args-file FILE or ulysim's flags)");
    if (state == IN)
        return text_fail_at(why, n, shown, line, "the argument block from line %d is not closed ('---- end of arguments "
                                         "----'): the log is cut short", r->args_line);
    if ((rc = resolve(r, shown, why, n))) return rc;
    if (r->n_reports == 0)
        return text_fail_at(why, n, shown, 0, "no iteration report ('iteration N/ M | ... | elapsed time per iteration "
                                      "(ms): T |'): the run logged no step");
    return 0;
}

int mlog_parse(const char *text, size_t len, const char *shown, mlog_run *r, char *why, size_t n)
{
    return parse(text, len, shown, r, 1, why, n);
}

int mlog_parse_reports(const char *text, size_t len, const char *shown, mlog_run *r, char *why, size_t n)
{
    return parse(text, len, shown, r, 0, why, n);
}
