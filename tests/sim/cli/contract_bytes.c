/* contract_bytes: `ulysim --format json` end to end against the formulas of
 * docs/model.md, "Strategies" (bytes sent per rank, one layer, one
 * micro-batch), computed here from the model dimensions, not from ulysim.
 *
 *   contract_bytes ULYSIM CASE     CASE: ulysses ring rsa megatron-sp megatron-tp allgather-cp usp gqa json-ints json-unpriced
 *
 * Model dimensions (docs/design.md, "Presets and defaults"): gpt-7b L 32, h 4096, a = k = 32,
 * d 128; llama3-8b h 4096, a 32, k 8, d 128. b = 1, bf16 (beta 2) unless
 * stated. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static const char *ulysim;
static int failures;

/* Runs ulysim ARGS --format json; returns plans[0] (the whole document in *doc). */
static cJSON *plan0(cJSON **doc, char **raw, const char *const *args)
{
    char *argv[40] = {(char *)ulysim};
    int n = 1;
    for (; args[n - 1] && n < 36; n++) argv[n] = (char *)args[n - 1];
    argv[n++] = (char *)"--format";
    argv[n++] = (char *)"json";
    argv[n] = NULL;
    run_out o;
    *doc = NULL;
    if (raw) *raw = NULL;
    if (run_cmd(argv, 60.0, &o) != 0 || o.rc != 0) {
        fprintf(stderr, "FAIL: ulysim");
        for (int i = 1; i < n; i++) fprintf(stderr, " %s", argv[i]);
        fprintf(stderr, ": exit %d signal %d: %s\n", o.rc, o.sig, o.err ? o.err : "");
        run_free(&o);
        failures++;
        return NULL;
    }
    *doc = cJSON_Parse(o.out);
    if (raw) {
        *raw = o.out;
        o.out = NULL;
    }
    run_free(&o);
    cJSON *plans = cJSON_GetObjectItemCaseSensitive(*doc, "plans");
    cJSON *p = cJSON_GetArrayItem(plans, 0);
    if (!p) {
        fprintf(stderr, "FAIL: no plans[0] in the JSON\n");
        failures++;
    }
    return p;
}

static double num(const cJSON *p, const char *a, const char *b, const char *c)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(p, a);
    if (b) x = cJSON_GetObjectItemCaseSensitive(x, b);
    if (c) x = cJSON_GetObjectItemCaseSensitive(x, c);
    return cJSON_IsNumber(x) ? x->valuedouble : -1.0;
}

static void expect_eq(const char *what, double got, int64_t want)
{
    if (got == (double)want) {
        printf("ok   %-48s %" PRId64 "\n", what, want);
        return;
    }
    fprintf(stderr, "FAIL %-48s got %.17g, want %" PRId64 " (docs/model.md)\n", what, got, want);
    failures++;
}

static void expect_plan(const cJSON *p, const char *strategy, int64_t u, int64_t r, int64_t t, int64_t dp)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(p, "strategy");
    if (!cJSON_IsString(s) || strcmp(s->valuestring, strategy) != 0) {
        fprintf(stderr, "FAIL plans[0].strategy is %s, want %s\n", cJSON_IsString(s) ? s->valuestring : "?", strategy);
        failures++;
    }
    char w[64];
    snprintf(w, sizeof w, "%s degrees.ulysses", strategy);
    expect_eq(w, num(p, "degrees", "ulysses", NULL), u);
    snprintf(w, sizeof w, "%s degrees.ring", strategy);
    expect_eq(w, num(p, "degrees", "ring", NULL), r);
    snprintf(w, sizeof w, "%s degrees.tp", strategy);
    expect_eq(w, num(p, "degrees", "tp", NULL), t);
    snprintf(w, sizeof w, "%s degrees.dp", strategy);
    expect_eq(w, num(p, "degrees", "dp", NULL), dp);
    snprintf(w, sizeof w, "%s degrees.pp", strategy);
    expect_eq(w, num(p, "degrees", "pp", NULL), 1);
}

/* fwd exactly; with --recompute none bwd exactly (when bwd_none >= 0); with
 * full recompute: recompute == fwd and bwd == bwd_none + fwd. */
static void bytes_case(const char *name, const char *strategy, int64_t u, int64_t r, int64_t t, int64_t dp,
                       int64_t fwd, int64_t bwd_none, const char *const *args)
{
    cJSON *doc;
    cJSON *p = plan0(&doc, NULL, args);
    char w[96];
    if (p) {
        expect_plan(p, strategy, u, r, t, dp);
        snprintf(w, sizeof w, "%s comm_bytes_per_rank.fwd", name);
        expect_eq(w, num(p, "per_layer", "comm_bytes_per_rank", "fwd"), fwd);
        if (bwd_none >= 0) {
            snprintf(w, sizeof w, "%s (full recompute) .recompute", name);
            expect_eq(w, num(p, "per_layer", "comm_bytes_per_rank", "recompute"), fwd);
            snprintf(w, sizeof w, "%s (full recompute) .bwd", name);
            expect_eq(w, num(p, "per_layer", "comm_bytes_per_rank", "bwd"), bwd_none + fwd);
        }
    }
    cJSON_Delete(doc);
    if (bwd_none < 0) return;
    const char *args2[40];
    int n = 0;
    for (; args[n] && n < 36; n++) args2[n] = args[n];
    args2[n++] = "--recompute";
    args2[n++] = "none";
    args2[n] = NULL;
    p = plan0(&doc, NULL, args2);
    if (p) {
        snprintf(w, sizeof w, "%s (no recompute) .fwd", name);
        expect_eq(w, num(p, "per_layer", "comm_bytes_per_rank", "fwd"), fwd);
        snprintf(w, sizeof w, "%s (no recompute) .bwd", name);
        expect_eq(w, num(p, "per_layer", "comm_bytes_per_rank", "bwd"), bwd_none);
        snprintf(w, sizeof w, "%s (no recompute) .recompute", name);
        expect_eq(w, num(p, "per_layer", "comm_bytes_per_rank", "recompute"), 0);
    }
    cJSON_Delete(doc);
}

/* docs/model.md, "Strategies" */
static int64_t ulysses_fwd(int64_t b, int64_t N, int64_t d, int64_t a, int64_t k, int64_t u, int64_t beta)
{
    int64_t k_eff = u % k == 0 && u > k ? u : k; /* k divides u: each KV head replicated u/k times */
    return b * N * d * (2 * a + 2 * k_eff) * (u - 1) / (u * u) * beta;
}

/* the JSON's integers, contract keys and recommendation (the default plan) */
static void case_json_ints(void)
{
    /* integers print as integers (no exponent, no fraction), the contract keys exist,
     * recommended is null or a feasible plan's index */
    const char *args[] = {"--gpus", "64", "--seq", "1M", NULL};
    cJSON *doc;
    char *raw;
    cJSON *p = plan0(&doc, &raw, args);
    if (p && raw) {
        regex_t re;
        const char *keys[] = {"fwd", "bwd", "recompute", "zero_bytes_per_rank", "ulysses", "ring", "tp", "dp", "pp",
                              "total_bytes", "micro_batch", "micro_steps"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            char pat[128], bad[128];
            snprintf(pat, sizeof pat, "\"%s\":[[:space:]]*-?[0-9]+[,}\n\r]", keys[i]);
            snprintf(bad, sizeof bad, "\"%s\":[[:space:]]*-?[0-9]+[.eE]", keys[i]);
            regcomp(&re, pat, REG_EXTENDED);
            int found = regexec(&re, raw, 0, NULL, 0) == 0;
            regfree(&re);
            regcomp(&re, bad, REG_EXTENDED);
            int wrong = regexec(&re, raw, 0, NULL, 0) == 0;
            regfree(&re);
            if (!found || wrong) {
                fprintf(stderr, "FAIL \"%s\" is not printed as a plain integer\n", keys[i]);
                failures++;
            } else {
                printf("ok   \"%s\" printed as an integer\n", keys[i]);
            }
        }
        cJSON *plans = cJSON_GetObjectItemCaseSensitive(doc, "plans");
        cJSON *rec = cJSON_GetObjectItemCaseSensitive(doc, "recommended");
        /* the six of the contract (docs/design.md), and megatron-tp: one plan each */
        static const char *const names[] = {"ulysses", "ring", "rsa", "megatron-sp", "usp", "allgather-cp",
                                            "megatron-tp"};
        const int n_names = (int)(sizeof names / sizeof names[0]);
        if (!cJSON_IsArray(plans) || cJSON_GetArraySize(plans) != n_names) {
            fprintf(stderr, "FAIL plans must hold the %d strategies\n", n_names);
            failures++;
        } else {
            for (int i = 0; i < n_names; i++) {
                int found = 0;
                cJSON *pl;
                cJSON_ArrayForEach(pl, plans) {
                    cJSON *s = cJSON_GetObjectItemCaseSensitive(pl, "strategy");
                    found += cJSON_IsString(s) && !strcmp(s->valuestring, names[i]);
                }
                if (found != 1) {
                    fprintf(stderr, "FAIL plans hold strategy %s %d times, want once\n", names[i], found);
                    failures++;
                }
            }
        }
        if (!(cJSON_IsNull(rec) ||
              (cJSON_IsNumber(rec) &&
               cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(plans, rec->valueint), "feasible"))))) {
            fprintf(stderr, "FAIL recommended must be null or the index of a feasible plan\n");
            failures++;
        }
        cJSON *pl;
        cJSON_ArrayForEach(pl, plans)
        {
            const char *need[] = {"strategy", "degrees", "feasible", "reasons", "memory", "per_layer", "step", "placement"};
            for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
                if (!cJSON_GetObjectItemCaseSensitive(pl, need[i])) {
                    fprintf(stderr, "FAIL a plan lacks \"%s\"\n", need[i]);
                    failures++;
                }
            /* throughput only for a plan that fits: null otherwise, and a
             * number under step.if_it_fit instead */
            const int fits = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(pl, "feasible"));
            const cJSON *stp = cJSON_GetObjectItemCaseSensitive(pl, "step");
            const char *rate[] = {"tokens_per_s", "tflops_per_gpu", "mfu", "hfu"};
            for (size_t i = 0; i < sizeof rate / sizeof rate[0]; i++) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(stp, rate[i]);
                const cJSON *w = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(stp, "if_it_fit"), rate[i]);
                if (fits ? !cJSON_IsNumber(v) || w : !cJSON_IsNull(v) || !cJSON_IsNumber(w)) {
                    fprintf(stderr, "FAIL step.%s of a plan that %s: want %s\n", rate[i], fits ? "fits" : "does not fit",
                            fits ? "a number and no step.if_it_fit" : "null, and a number under step.if_it_fit");
                    failures++;
                }
            }
            const char *step[] = {"time_s", "micro_batch", "micro_steps"};
            for (size_t i = 0; i < sizeof step / sizeof step[0]; i++)
                if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(stp, step[i]))) {
                    fprintf(stderr, "FAIL step.%s is not a number\n", step[i]);
                    failures++;
                }
        }
        const char *top[] = {"config", "flop_convention", "plans", "recommended"};
        for (size_t i = 0; i < sizeof top / sizeof top[0]; i++)
            if (!cJSON_GetObjectItemCaseSensitive(doc, top[i])) {
                fprintf(stderr, "FAIL no top-level \"%s\"\n", top[i]);
                failures++;
            }
    }
    free(raw);
    cJSON_Delete(doc);
    /* pure Ulysses over 64 GPUs with llama3-8b is explained */
    {
        cJSON *d2;
        const char *args2[] = {"--gpus", "64", "--seq", "1M", NULL};
        plan0(&d2, NULL, args2);
        cJSON *pu = cJSON_GetObjectItemCaseSensitive(d2, "pure_ulysses");
        if (!pu || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(pu, "feasible")) ||
            num(pu, "degrees", "ulysses", NULL) != 64) {
            fprintf(stderr, "FAIL pure_ulysses: want the u=64 layout, infeasible\n");
            failures++;
        } else {
            printf("ok   pure_ulysses u=64 is infeasible and explained\n");
        }
        cJSON_Delete(d2);
    }
}

/* plans never priced carry null, not 0 */
static void case_json_unpriced(void)
{
    /* a global batch of 3 sequences does not split over the data-parallel
     * degree of the plain layouts (no:batch): those plans are never
     * priced, and their memory, traffic and times are null (the table's
     * "-"), not 0, while the plans that were priced carry numbers */
    const char *args[] = {"--gpus", "64", "--seq", "1M", "--global-batch", "3", NULL};
    cJSON *doc;
    plan0(&doc, NULL, args);
    int n_unpriced = 0, n_priced = 0;
    cJSON *pl;
    cJSON_ArrayForEach(pl, cJSON_GetObjectItemCaseSensitive(doc, "plans"))
    {
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(pl, "step");
        const cJSON *mem = cJSON_GetObjectItemCaseSensitive(pl, "memory");
        const cJSON *per = cJSON_GetObjectItemCaseSensitive(pl, "per_layer");
        const cJSON *vals[] = {cJSON_GetObjectItemCaseSensitive(st, "time_s"),
                               cJSON_GetObjectItemCaseSensitive(st, "micro_batch"),
                               cJSON_GetObjectItemCaseSensitive(mem, "total_bytes"),
                               cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(mem, "terms"), "weights"),
                               cJSON_GetObjectItemCaseSensitive(per, "fwd_s"),
                               cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(per, "comm_bytes_per_rank"), "fwd")};
        const int n_vals = (int)(sizeof vals / sizeof vals[0]);
        int nulls = 0, positive = 0;
        for (int i = 0; i < n_vals; i++) {
            nulls += cJSON_IsNull(vals[i]);
            positive += cJSON_IsNumber(vals[i]) && vals[i]->valuedouble > 0;
        }
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(pl, "strategy");
        const char *name = cJSON_IsString(s) ? s->valuestring : "?";
        if (nulls == n_vals && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(pl, "feasible"))) {
            n_unpriced++;
            printf("ok   %s: not priced, memory, traffic and times null\n", name);
        } else if (positive == n_vals) {
            n_priced++;
            printf("ok   %s: priced, memory, traffic and times numbers\n", name);
        } else {
            fprintf(stderr, "FAIL %s: %d of %d of step.time_s, step.micro_batch, memory.total_bytes, "
                            "memory.terms.weights, per_layer.fwd_s, per_layer.comm_bytes_per_rank.fwd null, "
                            "%d positive: want all null (not priced) or all positive\n",
                    name, nulls, n_vals, positive);
            failures++;
        }
    }
    if (n_unpriced < 1 || n_priced < 1) {
        fprintf(stderr, "FAIL want plans of both kinds, got %d not priced and %d priced\n", n_unpriced, n_priced);
        failures++;
    }
    cJSON_Delete(doc);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: contract_bytes ULYSIM CASE\n");
        return 2;
    }
    ulysim = argv[1];
    const char *c = argv[2];
    const int64_t h = 4096, a = 32, d = 128;
    const int64_t b = 1, beta = 2;

    if (!strcmp(c, "ulysses")) {
        /* gpt-7b, 32 GPUs, 128K, u = 32: b N d (2a + 2k)(u-1)/u^2 beta; bwd mirrors fwd */
        const int64_t N = 131072, u = 32, k = 32;
        const int64_t fwd = b * N * d * (2 * a + 2 * k) * (u - 1) / (u * u) * beta;
        const char *args[] = {"--model", "gpt-7b", "--cluster", "dgx-a100-40g", "--gpus", "32", "--seq", "128K",
                              "--strategy", "ulysses", "--ulysses", "32", NULL};
        bytes_case("ulysses u32", "ulysses", 32, 1, 1, 1, fwd, fwd, args);
        /* micro-batch 2 doubles it */
        const char *args2[] = {"--model", "gpt-7b", "--cluster", "dgx-a100-40g", "--gpus", "32", "--seq", "128K",
                               "--strategy", "ulysses", "--ulysses", "32", "--batch", "2", NULL};
        bytes_case("ulysses u32 batch 2", "ulysses", 32, 1, 1, 1, 2 * fwd, -1, args2);
        /* u = 8 with dp = 4 on 32 GPUs: the group, not the GPU count, sets the bytes */
        const char *args3[] = {"--model", "gpt-7b", "--cluster", "dgx-a100-40g", "--gpus", "32", "--seq", "128K",
                               "--strategy", "ulysses", "--ulysses", "8", NULL};
        bytes_case("ulysses u8 dp4", "ulysses", 8, 1, 1, 4, ulysses_fwd(b, N, d, a, k, 8, beta), -1, args3);
    } else if (!strcmp(c, "gqa")) {
        /* llama3-8b (k = 8): u = 16 replicates KV heads to k_eff = u = 16; u = 4 divides k: k_eff = k */
        const int64_t N = 262144, k = 8;
        const char *a16[] = {"--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "16", "--seq", "256K",
                             "--strategy", "ulysses", "--ulysses", "16", NULL};
        bytes_case("llama3-8b ulysses u16 (k_eff 16)", "ulysses", 16, 1, 1, 1,
                   b * N * d * (2 * a + 2 * 16) * 15 / 256 * beta, ulysses_fwd(b, N, d, a, k, 16, beta), a16);
        const char *a4[] = {"--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "8", "--seq", "256K",
                            "--strategy", "ulysses", "--ulysses", "4", NULL};
        bytes_case("llama3-8b ulysses u4 dp2 (k_eff 8)", "ulysses", 4, 1, 1, 2,
                   b * N * d * (2 * a + 2 * 8) * 3 / 16 * beta, -1, a4);
    } else if (!strcmp(c, "ring")) {
        /* gpt-7b, r = 32: 2(r-1) b (N/r) k d beta; bwd: K,V rotated again and dK,dV: twice forward */
        const int64_t N = 131072, r = 32, k = 32;
        const int64_t fwd = 2 * (r - 1) * b * (N / r) * k * d * beta;
        const char *args[] = {"--model", "gpt-7b", "--cluster", "dgx-a100-40g", "--gpus", "32", "--seq", "128K",
                              "--strategy", "ring", "--ring", "32", NULL};
        bytes_case("ring r32", "ring", 1, 32, 1, 1, fwd, 2 * fwd, args);
        /* fp32: beta = 4 */
        const char *args2[] = {"--model", "gpt-7b", "--cluster", "dgx-a100-40g", "--gpus", "32", "--seq", "128K",
                               "--strategy", "ring", "--ring", "32", "--dtype", "fp32", NULL};
        bytes_case("ring r32 fp32", "ring", 1, 32, 1, 1, 2 * fwd, -1, args2);
    } else if (!strcmp(c, "rsa")) {
        /* 2(P-1) b (N/P) h beta forward; 6(P-1) b (N/P) h beta backward */
        const int64_t N = 131072, P = 32;
        const int64_t fwd = 2 * (P - 1) * b * (N / P) * h * beta;
        const int64_t bwd = 6 * (P - 1) * b * (N / P) * h * beta;
        const char *args[] = {"--model", "gpt-7b", "--cluster", "dgx-a100-40g", "--gpus", "32", "--seq", "128K",
                              "--strategy", "rsa", "--ring", "32", NULL};
        bytes_case("rsa P32", "rsa", 1, 32, 1, 1, fwd, bwd, args);
    } else if (!strcmp(c, "megatron-sp")) {
        /* 4(t-1)/t b N h beta forward; backward those mirrored and both
         * regions' inputs gathered again for the weight gradients: 6(t-1)/t */
        const int64_t N = 32768, t = 8;
        const int64_t fwd = 4 * (t - 1) * b * N * h * beta / t, bwd = 6 * (t - 1) * b * N * h * beta / t;
        const char *args[] = {"--model", "gpt-7b", "--cluster", "dgx-a100-40g", "--gpus", "8", "--seq", "32K",
                              "--strategy", "megatron-sp", "--tp", "8", NULL};
        bytes_case("megatron-sp t8", "megatron-sp", 1, 1, 8, 1, fwd, bwd, args);
    } else if (!strcmp(c, "megatron-tp")) {
        /* plain TP: two ring all-reduces of b N h each way, 2(t-1)/t of the buffer each */
        const int64_t N = 32768, t = 8;
        const int64_t fwd = 2 * (2 * (t - 1) * b * N * h * beta / t);
        const char *args[] = {"--model", "gpt-7b", "--cluster", "dgx-a100-40g", "--gpus", "8", "--seq", "32K",
                              "--strategy", "megatron-tp", "--tp", "8", NULL};
        bytes_case("megatron-tp t8", "megatron-tp", 1, 1, 8, 1, fwd, fwd, args);
    } else if (!strcmp(c, "allgather-cp")) {
        /* (r-1)/r 2 b N k d beta forward, not overlapped */
        const int64_t N = 65536, r = 8, k = 32;
        const int64_t fwd = (r - 1) * 2 * b * N * k * d * beta / r;
        const char *args[] = {"--model", "gpt-7b", "--cluster", "dgx-a100-40g", "--gpus", "8", "--seq", "64K",
                              "--strategy", "allgather-cp", "--ring", "8", NULL};
        bytes_case("allgather-cp r8", "allgather-cp", 1, 8, 1, 1, fwd, -1, args);
    } else if (!strcmp(c, "usp")) {
        /* u = 4 inside a node, r = 8 across: b N d (2a + 2k)(u-1)/(u^2 r) beta + 2(r-1) b (N/r)(k/u) d beta */
        const int64_t N = 131072, u = 4, r = 8, k = 32;
        const int64_t a2a = b * N * d * (2 * a + 2 * k) * (u - 1) / (u * u * r) * beta;
        const int64_t ring = 2 * (r - 1) * b * (N / r) * (k / u) * d * beta;
        const char *args[] = {"--model", "gpt-7b", "--cluster", "dgx-a100-40g", "--gpus", "32", "--seq", "128K",
                              "--strategy", "usp", "--ulysses", "4", "--ring", "8", NULL};
        bytes_case("usp u4 r8", "usp", 4, 8, 1, 1, a2a + ring, -1, args);
    } else if (!strcmp(c, "json-ints")) {
        case_json_ints();
    } else if (!strcmp(c, "json-unpriced")) {
        case_json_unpriced();
    } else {
        fprintf(stderr, "unknown case %s\n", c);
        return 2;
    }
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
