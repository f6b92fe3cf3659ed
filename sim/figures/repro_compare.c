/* repro_compare.c: how `ulysim reproduce` compares: a row per predicted
 * number, the check and tolerance it is held to, its status, and the
 * acceptance items that hold when all their rows pass. Also the papers the
 * experiments come from and the words rows use for a result. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "repro.h"

const char *const rp_check_names[] = {"within", "at-least", "same", "at-most", "info"};
const char *const rp_status_names[] = {"pass", "FAIL", "n/a", "info"};

/* The acceptance items and the tolerance each asserts. */
const rp_accept rp_accepts[RP_ACC_COUNT] = {
    [RP_ACC_ULY_TABLES_EACH] = {"ulysses-tables-each", RP_PAPER_ULYSSES,
                                "Ulysses Tables 2-3: every iteration time within 10%"},
    [RP_ACC_ULY_TABLES_MEDIAN] = {"ulysses-tables-median", RP_PAPER_ULYSSES,
                                  "Ulysses Tables 2-3: median |error| of the iteration times <= 5%"},
    [RP_ACC_RSA_TABLE4] = {"rsa-table4-memory", RP_PAPER_RSA,
                           "RSA Table 4: every memory cell within 10% (an empty cell: out of memory)"},
    [RP_ACC_ULY_HEADLINE] = {"ulysses-headline", RP_PAPER_ULYSSES,
                             "Ulysses headline claims: ratios within 20%, bounds and yes/no statements hold"},
    [RP_ACC_RSA_HEADLINE] = {"rsa-headline", RP_PAPER_RSA, "RSA headline claims: ratios within 20%"},
};

rp_row *rp_row_add(rp_rows *r, const char *exp, const char *accept, const char *unit, rp_check check, double tol,
                   double pub)
{
    if (r->oom) return NULL;
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 64;
        rp_row *v = realloc(r->v, (size_t)cap * sizeof *v);
        if (!v) {
            r->oom = 1;
            return NULL;
        }
        r->v = v;
        r->cap = cap;
    }
    rp_row *x = &r->v[r->n++];
    memset(x, 0, sizeof *x);
    x->exp = exp;
    x->accept = accept;
    x->unit = unit;
    x->check = check;
    x->tol = tol;
    x->pub = pub;
    x->pred = NAN;
    return x;
}

double rp_rel_err(const rp_row *x)
{
    if (isnan(x->pred) || isnan(x->pub) || x->pub == 0) return NAN;
    return x->pred / x->pub - 1.0;
}

void rp_row_judge(rp_row *x)
{
    switch (x->check) {
    case RP_WITHIN: {
        const double e = rp_rel_err(x);
        x->status = isnan(e) ? RP_NA : fabs(e) <= x->tol + 1e-12 ? RP_PASS : RP_FAIL;
        break;
    }
    case RP_AT_LEAST:
        x->status = isnan(x->pred) ? RP_NA : x->pred >= x->pub * (1.0 - x->tol) ? RP_PASS : RP_FAIL;
        break;
    case RP_SAME:
        x->status = isnan(x->pred) ? RP_NA : x->pred == x->pub ? RP_PASS : RP_FAIL;
        break;
    case RP_AT_MOST:
        x->status = isnan(x->pred) ? RP_NA : x->pred <= x->tol + 1e-12 ? RP_PASS : RP_FAIL;
        break;
    case RP_INFO:
        x->status = RP_SHOWN;
        break;
    }
}

const rp_row *rp_row_find(const rp_rows *r, const char *exp, const char *id)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->v[i].exp, exp) == 0 && strcmp(r->v[i].id, id) == 0) return &r->v[i];
    return NULL;
}

int rp_accept_holds(const rp_rows *r, const rp_accept *a, int *n_rows, int *n_bad)
{
    *n_rows = *n_bad = 0;
    for (int i = 0; i < r->n; i++) {
        const rp_row *x = &r->v[i];
        if (!x->accept || strcmp(x->accept, a->id) != 0) continue;
        (*n_rows)++;
        if (x->status != RP_PASS) (*n_bad)++;
    }
    return *n_rows > 0 && *n_bad == 0;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double rp_median(double *v, int n)
{
    if (n <= 0) return NAN;
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ------------------------------------------------------------ the papers */

/* The paper ids are the experiment sets of the command line and the
 * prefixes of the experiment ids; the strategies they mention come from the
 * registry (rp_assumption). */
static const rp_assumption uly_assumptions[] = {
    {"the sequence-parallel (Ulysses) degree is not published: it is the model's own choice, uly_search_best for "
     "strategy %s with the global batch fixed at 8 and the micro-batch searched (the layout column)",
     ULY_STRAT_ULYSSES},
    {"attention is priced non-causal: the paper's TFLOP/s accounting (96 B N L h^2 (1 + N/6h + V/16Lh)) counts the "
     "full N^2, and only the full N^2 is consistent with its times (a causal kernel at FlashAttention-2's causal "
     "efficiency predicts about half of every published time)",
     -1},
    {"efficiencies from the dgx-a100-40g preset: attention from FlashAttention-2's published A100 throughput, "
     "GEMMs by shape on 108 SMs at up to 0.869 of peak, NVLink 240 GB/s (12 NVLink3 links at NCCL's 20 GB/s each) "
     "and HDR 24 GB/s per GPU per "
     "direction (see the preset's sources)",
     -1},
    {"Megatron-SP baseline of the claims: TP inside a node (Megatron-LM practice), ZeRO-1 (its distributed "
     "optimizer; without it GPT-30B does not fit at TP 8: 60 GB of model states per GPU)",
     -1},
};
static const rp_assumption rsa_assumptions[] = {
    {"pipeline size 8: the memory of a GPU is that of the first stage, ceil(12/8) = 2 layers plus the embedding "
     "(uniform partition), with the whole batch in flight (1F1B with at most 8 micro-batches), evaluated as a "
     "2-layer model; logits live on the last stage and are not counted",
     -1},
    {"memory is torch's max allocated (MiB): the model's total less the preset's runtime reserve, plus the stage's "
     "output of every micro-batch in flight, which the schedule holds for its backward (b N h on every TP rank, "
     "b N/P h under SP; PyTorch keeps it unless the schedule frees it by hand, as later Megatron-LM versions do)",
     -1},
    {"backward's peak is the model's walk of the first layer to run backward in autograd's order (memory.c), for "
     "one micro-batch of the whole batch: the paper does not give the micro-batch count, and one is the most "
     "memory; RSA's full-length dK, dV add one b N kd buffer beside the K/V block at that peak",
     -1},
    {"fp32 training, no activation recompute, no ZeRO, materialised scores: the paper states no precision; fp16 "
     "would make Table 4's score memory (about 19-20 bytes per score element over the stage, 9 per layer in fp32) "
     "half of what it reports",
     -1},
    {"TP is plain Megatron tensor parallelism (Shoeybi et al. 2019), the model's %s: weights and heads split "
     "t ways, layer norm, dropout and residual activations replicated on every rank (Korthikanti et al.'s "
     "s b h (10 + 24/t + 5as/(ht)) per layer), all-reduces run in place; TP degrees must divide the 12 heads",
     ULY_STRAT_MEGATRON_TP},
    {"claims (max batch, max sequence) without a pipeline: the whole 12-layer model, 16 GiB less the preset's 2 GiB "
     "reserve",
     -1},
};

const rp_paper rp_papers[RP_PAPER_COUNT] = {
    [RP_PAPER_ULYSSES] = {"ulysses", "--ulysses-cluster", "dgx-a100-40g", RP_EXP_ULY_TABLES,
                          "DeepSpeed-Ulysses (Jacobs et al. 2023, arXiv 2309.14509) Tables 2 and 3: GPT-7B (gpt-7b), "
                          "global batch 8, A100 40GB (dgx-a100-40g), fp16, ZeRO-3 over all GPUs, full activation "
                          "recompute, flash attention",
                          uly_assumptions, (int)(sizeof uly_assumptions / sizeof uly_assumptions[0])},
    [RP_PAPER_RSA] = {"rsa", "--rsa-cluster", "piz-daint-p100", RP_EXP_RSA_TABLE4,
                      "Sequence Parallelism / Ring Self-Attention (Li et al. 2021, arXiv 2105.13120) Table 4 weak "
                      "scaling: BERT Base (bert-base) on Piz Daint P100 16GB (piz-daint-p100), pipeline size 8",
                      rsa_assumptions, (int)(sizeof rsa_assumptions / sizeof rsa_assumptions[0])},
};

const rp_experiment rp_experiments[RP_EXP_COUNT] = {
    [RP_EXP_ULY_TABLES] = {"ulysses.tables", RP_PAPER_ULYSSES, NULL, NULL},
    [RP_EXP_ULY_CLAIMS] = {"ulysses.claims", RP_PAPER_ULYSSES,
                           "DeepSpeed-Ulysses headline claims (traces/published/headline_claims.md)",
                           "; A100 40GB (dgx-a100-40g), fp16, full recompute, flash attention priced non-causal"},
    [RP_EXP_RSA_TABLE4] = {"rsa.table4", RP_PAPER_RSA, NULL, NULL},
    [RP_EXP_RSA_CLAIMS] = {"rsa.claims", RP_PAPER_RSA,
                           "Sequence Parallelism / RSA headline claims (traces/published/headline_claims.md)",
                           ": BERT Base on Piz Daint P100 16GB, fp32, no recompute, no pipeline"},
};

int rp_paper_find(const char *id)
{
    for (int i = 0; i < RP_PAPER_COUNT; i++)
        if (strcmp(rp_papers[i].id, id) == 0) return i;
    return -1;
}

void rp_assumption_text(const rp_assumption *a, char *buf, size_t n)
{
    if (a->strat < 0) snprintf(buf, n, "%s", a->fmt);
    else snprintf(buf, n, a->fmt, sim_strategy_name(a->strat));
}

/* ------------------------------------------------- a result in the rows */

void rp_layout_str(const uly_layout *l, int64_t mb, char *buf, size_t n)
{
    char d[64];
    sim_degrees_str(l, d, sizeof d);
    snprintf(buf, n, "%s %s mb%lld", sim_strategy_name(l->strategy), d, (long long)mb);
}

void rp_why_str(const uly_model *m, const uly_result *r, char *buf, size_t n)
{
    buf[0] = 0;
    for (int i = 0; i < r->n_reasons && i < ULY_MAX_REASONS; i++)
        if (r->reasons[i].fatal) {
            uly_reason_format(&r->reasons[i], m, buf, n);
            return;
        }
}
