/* megatron_log.c: the Megatron-LM log reader (megatron_log.h): the argument
 * block, the vocabulary padding line, iteration and memory reports, and what
 * they say of the run's model and parallel layout.
 *
 * Lines may carry a launcher's prefix ("0: ", a timestamp): every pattern is
 * found inside the line, never anchored at its start. */
#include "megatron_log.h"
#include "text_file.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* A value as a message quotes it: printable, at most 40 characters. */
static const char *quoted(const char *v, char *buf, size_t n)
{
    size_t j = 0;
    buf[j++] = '\'';
    for (size_t i = 0; v[i] && j + 5 < n && i < 40; i++)
        buf[j++] = (v[i] >= 0x20 && v[i] < 0x7f) ? v[i] : '?';
    buf[j++] = '\'';
    buf[j] = 0;
    return buf;
}

/* ------------------------------------------------------ the argument block */

typedef enum { A_INT, A_BOOL, A_REAL, A_WORD, A_PAIR } arg_type;

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
    {"num_query_groups", A_INT, F(kv_heads)},
    {"kv_channels", A_INT, F(head_dim)},
    {"ffn_hidden_size", A_INT, F(ffn_hidden)},
    {"padded_vocab_size", A_INT, F(vocab)},
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
};
#undef F

/* Read but only where padded_vocab_size is not in the block. */
static int64_t parse_vocab_arg(const char *v)
{
    char *end;
    long long x = strtoll(v, &end, 10);
    return end != v && !*end && x > 0 ? x : 0;
}

static int is_none(const char *v) { return !strcmp(v, "None") || !*v; }

/* One value into its field. group_query_attention and num_query_groups are
 * resolved after the block (the groups count only when GQA is on). */
static int arg_store(mlog_run *r, const arg_spec *s, const char *v, const char *shown, int line, char *why, size_t n)
{
    char qb[64];
    char *dst = (char *)r + s->off;
    if (is_none(v)) return 0;
    switch (s->type) {
    case A_INT: {
        char *end;
        long long x = strtoll(v, &end, 10);
        if (end == v || *end || x < 1 || x > (1LL << 40))
            return text_fail_at(why, n, shown, line, "%s %s: not a positive integer", s->key, quoted(v, qb, sizeof qb));
        *(int64_t *)dst = x;
        return 0;
    }
    case A_BOOL:
        if (strcmp(v, "True") && strcmp(v, "False"))
            return text_fail_at(why, n, shown, line, "%s %s: not True or False", s->key, quoted(v, qb, sizeof qb));
        *(int *)dst = !strcmp(v, "True");
        return 0;
    case A_REAL: { /* dropout probabilities: any above 0 means masks are kept */
        char *end;
        double x = strtod(v, &end);
        if (end == v || *end || !(x >= 0 && x <= 1))
            return text_fail_at(why, n, shown, line, "%s %s: not a probability in [0, 1]", s->key, quoted(v, qb, sizeof qb));
        if (x > 0) *(int *)dst = 1;
        else if (*(int *)dst < 0) *(int *)dst = 0;
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
        return 0;
    }
    case A_PAIR: { /* [u, r] */
        long long u = 0, rr = 0;
        char tail = 0;
        if (sscanf(v, " [ %lld , %lld ] %c", &u, &rr, &tail) != 2 || u < 1 || rr < 1 || u > (1LL << 30) ||
            rr > (1LL << 30))
            return text_fail_at(why, n, shown, line, "%s %s: not two degrees [U, R]", s->key, quoted(v, qb, sizeof qb));
        r->hcp_u = u;
        r->hcp_r = rr;
        return 0;
    }
    }
    return 0;
}

/* "  key ........ value": the key is the word before the run of dots. */
static int arg_line(mlog_run *r, char *s, int *gqa, const char *shown, int line, char *why, size_t n)
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
    if (!strcmp(key, "group_query_attention")) {
        if (strcmp(val, "True") && strcmp(val, "False")) {
            char qb[64];
            return text_fail_at(why, n, shown, line, "group_query_attention %s: not True or False", quoted(val, qb, sizeof qb));
        }
        *gqa = !strcmp(val, "True");
        return 0;
    }
    if (!strcmp(key, "vocab_size")) {
        if (!r->vocab) r->vocab = parse_vocab_arg(val);
        return 0;
    }
    for (size_t i = 0; i < sizeof ARGS / sizeof ARGS[0]; i++)
        if (!strcmp(key, ARGS[i].key)) return arg_store(r, &ARGS[i], val, shown, line, why, n);
    return 0;
}

/* ------------------------------------------------------------ the reports */

/* The number after `label` in s: 0 and *x, 1 when the label is absent, 2
 * when what follows it is not a finite non-negative number. */
static int field_num(const char *s, const char *label, double *x)
{
    const char *p = strstr(s, label);
    if (!p) return 1;
    p += strlen(label);
    char *end;
    *x = strtod(p, &end);
    if (end == p || !isfinite(*x) || *x < 0) return 2;
    return 0;
}

/* " iteration   10/  100 |": the report's iteration number, or -1. */
static int64_t iteration_of(const char *s)
{
    for (const char *p = strstr(s, "iteration "); p; p = strstr(p + 1, "iteration ")) {
        const char *q = p + strlen("iteration ");
        while (*q == ' ') q++;
        char *end;
        long long it = strtoll(q, &end, 10);
        if (end == q) continue;
        while (*end == ' ') end++;
        if (*end == '/' && it >= 0) return it;
    }
    return -1;
}

static int report_line(mlog_run *r, const char *s, int64_t it, int last_unterminated, const char *shown, int line,
                       char *why, size_t n)
{
    static const char *const TIME = "elapsed time per iteration (ms):";
    static const char *const TPUT = "throughput per GPU (TFLOP/s/GPU):";
    double ms, tf = NAN;
    int st = field_num(s, TIME, &ms);
    if (st == 1)
        return text_fail_at(why, n, shown, line, "iteration %lld: no '%s'%s", (long long)it, TIME,
                    last_unterminated ? " (the log is cut short)" : " (valid: Megatron-LM's iteration report)");
    if (st == 2 || !(ms > 0))
        return text_fail_at(why, n, shown, line, "iteration %lld: '%s' is not a positive number", (long long)it, TIME);
    if (last_unterminated)
        return text_fail_at(why, n, shown, line, "iteration %lld: the last line has no newline (the log is cut short)",
                    (long long)it);
    st = field_num(s, TPUT, &tf);
    if (st == 2) return text_fail_at(why, n, shown, line, "iteration %lld: '%s' is not a number", (long long)it, TPUT);
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
    int st = field_num(s, "max reserved:", &x);
    if (st == 1) st = field_num(s, "max allocated:", &x);
    if (st == 1) return 0;
    if (st == 2) return text_fail_at(why, n, shown, line, "memory report: 'max reserved' or 'max allocated' is not a number");
    if (x > r->mem_peak_mb) {
        r->mem_peak_mb = x;
        r->mem_line = line;
    }
    return 0;
}

/* ------------------------------------------------------------------ parse */

int mlog_parse(const char *text, size_t len, const char *shown, mlog_run *r, char *why, size_t n)
{
    memset(r, 0, sizeof *r);
    r->swiglu = r->sequence_parallel = r->distributed_optimizer = r->fp16 = r->bf16 = r->untied = r->dropout = -1;
    enum { BEFORE, IN, AFTER } state = BEFORE;
    int gqa = -1, line = 0;
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
            else rc = arg_line(r, buf, &gqa, shown, line, why, n);
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
        const char *v = strstr(buf, "padded vocab (size:");
        if (v) {
            double nv;
            if (field_num(v, "new size:", &nv) || nv < 1 || nv > (1 << 24) || nv != floor(nv)) {
                rc = text_fail_at(why, n, shown, line, "padded vocab: no 'new size: N' with a vocabulary size");
                break;
            }
            r->vocab = (int64_t)nv;
            r->vocab_line = line;
            continue;
        }
        int64_t it = iteration_of(buf);
        if (it >= 0 && state == AFTER) rc = report_line(r, buf, it, !nl, shown, line, why, n);
        else if (strstr(buf, "memory (MB)")) rc = memory_line(r, buf, shown, line, why, n);
    }
    free(buf);
    if (rc) return rc;
    if (state == BEFORE)
        return text_fail_at(why, n, shown, 0, "no Megatron-LM argument block ('---- arguments ----'; valid: the log of a "
                                      "Megatron-LM training run from its start)");
    if (state == IN)
        return text_fail_at(why, n, shown, line, "the argument block from line %d is not closed ('---- end of arguments "
                                         "----'): the log is cut short", r->args_line);
    if (gqa != 1) r->kv_heads = r->heads; /* num_query_groups counts only under group_query_attention */
    if (r->n_reports == 0)
        return text_fail_at(why, n, shown, 0, "no iteration report ('iteration N/ M | ... | elapsed time per iteration "
                                      "(ms): T |'): the run logged no step");
    return 0;
}

/* ------------------------------------------------------------ what it says */

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, int k)
{
    qsort(v, (size_t)k, sizeof *v, cmp_dbl);
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

int mlog_median(const mlog_run *r, int64_t warmup, double *iter_ms, double *tflops, int64_t *first, int64_t *last)
{
    const int64_t interval = r->log_interval > 0 ? r->log_interval : 1;
    double *ms = malloc(sizeof(double) * (size_t)(r->n_reports + 1));
    double *tf = malloc(sizeof(double) * (size_t)(r->n_reports + 1));
    int k = 0, all_tf = 1;
    *iter_ms = *tflops = NAN;
    *first = *last = 0;
    if (!ms || !tf) {
        free(ms);
        free(tf);
        return 0;
    }
    for (int i = 0; i < r->n_reports; i++) {
        const mlog_report *p = &r->reports[i];
        if (p->iteration - interval < warmup) continue; /* its interval reaches into the warm-up */
        if (!k) *first = p->iteration;
        *last = p->iteration;
        ms[k] = p->iter_ms;
        tf[k] = p->tflops;
        all_tf &= !isnan(p->tflops);
        k++;
    }
    if (k) {
        *iter_ms = median_of(ms, k);
        if (all_tf) *tflops = median_of(tf, k);
    }
    free(ms);
    free(tf);
    return k;
}

int mlog_model(const mlog_run *r, const char *shown, uly_model *m, char *why, size_t n)
{
    const struct {
        const char *key;
        int64_t v;
    } need[] = {{"num_layers", r->layers},
                {"hidden_size", r->hidden},
                {"num_attention_heads", r->heads},
                {"ffn_hidden_size", r->ffn_hidden},
                {"vocabulary size (a 'padded vocab ... new size: N' line, padded_vocab_size or vocab_size)",
                 r->vocab}};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (need[i].v <= 0) return text_fail_at(why, n, shown, r->args_line, "the log gives no %s", need[i].key);
    memset(m, 0, sizeof *m);
    m->layers = r->layers;
    m->hidden = r->hidden;
    m->heads = r->heads;
    m->kv_heads = r->kv_heads > 0 ? r->kv_heads : r->heads;
    m->head_dim = r->head_dim > 0 ? r->head_dim : r->hidden / r->heads;
    m->ffn_hidden = r->ffn_hidden;
    m->vocab = r->vocab;
    m->swiglu = r->swiglu == 1;
    m->tied_embeddings = r->untied != 1; /* Megatron-LM ties them unless told not to */
    m->dropout = r->dropout == 1;
    char w[256];
    if (uly_model_check(m, w, sizeof w) != ULY_OK)
        return text_fail_at(why, n, shown, r->args_line, "the model of the argument block is not valid: %s", w);
    return 0;
}

int mlog_layout(const mlog_run *r, const char *shown, uly_layout *l, char *why, size_t n)
{
    const int64_t t = r->tp > 0 ? r->tp : 1, cp = r->cp > 0 ? r->cp : 1, pp = r->pp > 0 ? r->pp : 1;
    const uly_strategy *s = NULL;
    int64_t u = 1, ring = 1;
    if (cp > 1) {
        const char *comm = r->cp_comm[0] ? r->cp_comm : "p2p"; /* Megatron-Core's default */
        char valid[160] = "";
        for (int i = 0; i < ULY_STRAT_COUNT && !s; i++) {
            const uly_strategy *c = uly_strategy_get((uly_strategy_id)i);
            if (!c || !c->megatron_cp_comm) continue;
            if (!strcmp(c->megatron_cp_comm, comm)) s = c;
            else snprintf(valid + strlen(valid), sizeof valid - strlen(valid), "%s%s", valid[0] ? ", " : "",
                          c->megatron_cp_comm);
        }
        char qb[64];
        if (!s) return text_fail_at(why, n, shown, r->args_line, "cp_comm_type %s: not a scheme ulysim models (valid: %s)",
                            quoted(comm, qb, sizeof qb), valid);
        if (s->uses_ulysses && s->uses_ring) {
            if (r->hcp_u * r->hcp_r != cp)
                return text_fail_at(why, n, shown, r->args_line,
                            "cp_comm_type %s needs hierarchical_context_parallel_sizes [U, R] with U x R = "
                            "context_parallel_size %lld", comm, (long long)cp);
            u = r->hcp_u;
            ring = r->hcp_r;
        } else if (s->uses_ulysses) {
            u = cp;
        } else {
            ring = cp;
        }
    } else {
        s = uly_strategy_get(r->sequence_parallel == 1 ? ULY_STRAT_MEGATRON_SP : ULY_STRAT_MEGATRON_TP);
    }
    const int64_t per_replica = t * cp * pp;
    if (r->world_size <= 0) return text_fail_at(why, n, shown, r->args_line, "the log gives no world_size");
    if (r->world_size % per_replica)
        return text_fail_at(why, n, shown, r->args_line,
                    "world_size %lld is not a multiple of tensor x context x pipeline parallel %lld",
                    (long long)r->world_size, (long long)per_replica);
    uly_layout_init(l, s->id, u, ring, t, r->world_size / per_replica);
    l->pp = pp;
    int64_t vpp = r->vpp > 0 ? r->vpp : 1;
    if (r->vpp <= 0 && r->layers_per_vstage > 0 && r->layers > 0 && pp > 1)
        vpp = r->layers / pp / r->layers_per_vstage;
    l->vpp = vpp > 0 ? vpp : 1;
    return 0;
}
