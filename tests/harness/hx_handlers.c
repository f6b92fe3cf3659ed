/* hx_handlers.c: every op type a plan can hold has a handler in each
 * backend that runs the plan's strategy, and the harness's start-up check
 * (hx_schedule) accepts every such plan: its handlers, and the pairing of
 * each overlapped transfer with the op it overlaps, taken from the plan
 * (op types and `overlaps`, never op names).
 *
 * The plans: every registry strategy with each degree it uses at 2 and 2
 * data-parallel replicas, with and without 2 pipeline stages, every
 * recompute mode, ZeRO stage 0..3, causal or not, flash or materialised
 * attention, MHA and GQA. The mpi backend must handle every strategy; the
 * nccl backend (its sources over the host emulation of hx_nccl_emu.c where
 * CUDA's headers are found; otherwise the stub, which handles nothing and is
 * skipped) every strategy whose exec mode it runs. Then the report of an op
 * type without a handler: a plan of a strategy the nccl backend does not
 * run, scheduled with it, must fail at start-up naming that op type.
 * Runs without MPI (nothing here communicates). Exit 0 when all hold. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hx.h"
#include "preset.h"

static int failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    if (failures++ >= 20) return; /* the first ones say it */
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "hx_handlers: FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

/* hx_schedule on a context holding only the plan and the backend: what the
 * harness checks at start-up before anything runs */
static int schedule(hx_ctx *c, const uly_plan *p, const hx_backend *be)
{
    memset(c, 0, sizeof *c);
    hx_args_defaults(&c->o);
    c->plan = *p;
    c->be = be;
    return hx_schedule(c);
}

/* hx_schedule's status, and what it printed on stderr (its reason) into why */
static int schedule_captured(hx_ctx *c, const uly_plan *p, const hx_backend *be, char *why, size_t n)
{
    FILE *tf = tmpfile();
    why[0] = 0;
    if (!tf) return schedule(c, p, be);
    fflush(stderr);
    const int saved = dup(2);
    dup2(fileno(tf), 2);
    const int rc = schedule(c, p, be);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tf);
    const size_t got = fread(why, 1, n - 1, tf);
    why[got] = 0;
    fclose(tf);
    return rc;
}

/* The framework's own ops, FSDP2's copy-out of a gathered layer,
 * Megatron-LM's main-gradient accumulation, its local layers' bias
 * kernels and its pipeline scatter-gather under plain TP (2021-2023): the
 * harness builds its plans without a framework (no --framework) and of
 * models without biases, so it never holds one; a plan that does is
 * refused at start-up, naming the op type */
static void framework_op_plans(const uly_cluster *cl, uly_plan *p, hx_ctx *c, int *seen)
{
    static const struct {
        uly_framework fw;
        int zero, bias, pp_sg; /* pp_sg: a megatron-tp layout of 2 stages x tp 2, scatter-gather on */
        uly_op_type op;
    } fw_ops[] = {{ULY_FW_FSDP, 3, 0, 0, ULY_OPT_FSDP_COPY_OUT},
                  {ULY_FW_MEGATRON, 1, 0, 0, ULY_OPT_GRAD_ACCUM},
                  {ULY_FW_DEEPSPEED, 0, 1, 0, ULY_OPT_LINEAR_BIAS},
                  {ULY_FW_MEGATRON, 0, 0, 1, ULY_OPT_PP_GATHER_ACT},
                  {ULY_FW_MEGATRON, 0, 0, 1, ULY_OPT_PP_GATHER_GRAD}};
    for (size_t f = 0; f < sizeof fw_ops / sizeof fw_ops[0]; f++) {
        uly_model m = {.layers = 4, .heads = 8, .kv_heads = 8, .head_dim = 16, .ffn_hidden = 128, .vocab = 256,
                       .bias = fw_ops[f].bias};
        m.hidden = m.heads * m.head_dim;
        snprintf(m.name, sizeof m.name, "handlers");
        const uly_workload w = {.seq = 1024, .micro_batch = 1, .dtype = ULY_FP32, .causal = 1, .flash = 1,
                                .recompute = ULY_RECOMPUTE_FULL, .zero_stage = fw_ops[f].zero,
                                .split = ULY_SPLIT_ZIGZAG, .framework = fw_ops[f].fw,
                                .transformer_impl = fw_ops[f].bias ? ULY_TI_LOCAL : ULY_TI_TE,
                                .pp_scatter_gather = fw_ops[f].pp_sg};
        const char *fw = uly_framework_name(fw_ops[f].fw), *op = uly_op_type_name(fw_ops[f].op);
        uly_layout l;
        if (fw_ops[f].pp_sg) {
            uly_layout_init(&l, ULY_STRAT_MEGATRON_TP, 1, 1, 2, 1);
            l.pp = 2;
        } else {
            uly_layout_init(&l, ULY_STRAT_ULYSSES, 2, 1, 1, 2);
        }
        uly_reason reasons[ULY_MAX_REASONS];
        int n_reasons = 0, has = 0;
        char said[512];
        if (uly_plan_build(&m, &w, cl, &l, p, reasons, &n_reasons) != ULY_OK) {
            fail("%s plan: uly_plan_build failed", fw);
        } else {
            for (int i = 0; i < p->n_ops; i++) {
                seen[p->ops[i].type] = 1;
                has |= p->ops[i].type == fw_ops[f].op;
            }
            if (!has) fail("%s plan: no %s op", fw, op);
            else if (schedule_captured(c, p, &hx_backend_mpi, said, sizeof said) == HX_OK || !strstr(said, op))
                fail("%s plan: the mpi backend must refuse it naming %s (said: %s)", fw, op, said);
        }
    }
}

/* MoE plans (every layer MoE; the mpi backend only: the nccl backend
 * refuses MoE runs at configure): both dispatchers, expert TP 1 and 2,
 * ZeRO 0 and 1 with expert data parallelism 2, so that every MoE op type
 * is emitted; each has an mpi handler and passes the start-up check */
static void moe_plans(const uly_cluster *cl, uly_plan *p, hx_ctx *c, int *seen, int *plans)
{
    for (int v = 0; v < 8; v++) {
        const int etp = 1 + v % 2, zero = v / 2 % 2;
        const uly_moe_dispatcher disp = (uly_moe_dispatcher)(v / 4);
        uly_model m = {.layers = 1, .heads = 8, .kv_heads = 8, .head_dim = 16, .ffn_hidden = 128, .vocab = 256,
                       .experts = 8, .topk = 2, .moe_ffn_hidden = 64, .shared_ffn_hidden = 64};
        m.hidden = m.heads * m.head_dim;
        snprintf(m.name, sizeof m.name, "handlers-moe");
        const uly_workload w = {.seq = 1024, .micro_batch = 1, .dtype = ULY_FP32, .causal = 1, .flash = 1,
                                .zero_stage = zero, .split = ULY_SPLIT_ZIGZAG, .moe_dispatcher = disp};
        uly_layout l;
        uly_layout_init(&l, ULY_STRAT_ULYSSES, 2, 1, 1, 4);
        l.ep = 2, l.etp = etp;
        uly_reason reasons[ULY_MAX_REASONS];
        int n_reasons = 0, fatal = 0;
        if (uly_plan_build(&m, &w, cl, &l, p, reasons, &n_reasons) != ULY_OK) {
            fail("moe plan %d: uly_plan_build failed", v);
            continue;
        }
        for (int i = 0; i < n_reasons; i++) fatal |= reasons[i].fatal;
        if (fatal) {
            fail("moe plan %d: a fatal reason", v);
            continue;
        }
        ++*plans;
        for (int i = 0; i < p->n_ops; i++) {
            seen[p->ops[i].type] = 1;
            if (!hx_backend_handler(&hx_backend_mpi, p->ops[i].type))
                fail("moe plan %d: op type %s has no handler in the mpi backend", v, uly_op_type_name(p->ops[i].type));
        }
        if (schedule(c, p, &hx_backend_mpi) != HX_OK) fail("moe plan %d: the mpi backend's start-up check refuses it", v);
    }
}

int main(void)
{
    uly_cluster cl;
    char why[512];
    if (preset_cluster_load("cpu-local", &cl, why, sizeof why)) {
        fprintf(stderr, "hx_handlers: cluster cpu-local: %s\n", why);
        return 1;
    }
    /* one node of as many "GPUs" as the layouts take, as the harness stretches it */
    cl.nodes = 1;
    cl.gpus_per_node = cl.gpus_per_leaf = 64;

    const hx_backend *nccl = hx_backend_nccl.handlers[0] ? &hx_backend_nccl : NULL;
    int seen[ULY_OPT_COUNT] = {0}, plans = 0;
    uly_plan *p = malloc(sizeof *p), *refused = NULL; /* a plan the nccl backend does not run */
    hx_ctx *c = calloc(1, sizeof *c);
    if (!p || !c) return 1;
    for (int si = 0; si < ULY_STRAT_COUNT; si++) {
        const uly_strategy *s = uly_strategy_get((uly_strategy_id)si);
        const int nccl_runs = nccl && hx_backend_runs(nccl, s->exec);
        for (int variant = 0; variant < 2 * 2 * 3 * 4 * 2 * 2 * 2; variant++) {
            int v = variant;
            const int pp = 1 + v % 2;
            v /= 2;
            const int gqa = v % 2;
            v /= 2;
            const uly_recompute rc = (uly_recompute)(v % 3);
            v /= 3;
            const int zero = v % 4;
            v /= 4;
            const int causal = v % 2;
            v /= 2;
            const int flash = v % 2;
            v /= 2;
            const int swiglu = v % 2;
            uly_model m = {.layers = 4, .heads = 8, .kv_heads = gqa ? 2 : 8, .head_dim = 16, .ffn_hidden = 128,
                           .vocab = 256, .swiglu = swiglu};
            m.hidden = m.heads * m.head_dim;
            snprintf(m.name, sizeof m.name, "handlers");
            const uly_workload w = {.seq = 1024, .micro_batch = 1, .dtype = ULY_FP32, .causal = causal,
                                    .flash = flash, .recompute = rc, .zero_stage = zero,
                                    .split = ULY_SPLIT_ZIGZAG};
            uly_layout l;
            uly_layout_init(&l, s->id, s->uses_ulysses ? 2 : 1, s->uses_ring ? 2 : 1, s->uses_tp ? 2 : 1, 2);
            l.pp = pp;
            uly_reason reasons[ULY_MAX_REASONS];
            int n_reasons = 0;
            char cfg[160];
            snprintf(cfg, sizeof cfg, "pp %d, %s, recompute %d, zero %d, %s, %s, %s", pp, gqa ? "GQA" : "MHA", (int)rc,
                     zero, causal ? "causal" : "non-causal", flash ? "flash" : "materialised",
                     swiglu ? "SwiGLU" : "GELU");
            if (uly_plan_build(&m, &w, &cl, &l, p, reasons, &n_reasons) != ULY_OK) {
                fail("%s (%s): uly_plan_build failed", s->name, cfg);
                continue;
            }
            for (int i = 0; i < n_reasons; i++)
                if (reasons[i].fatal) {
                    char line[300];
                    uly_reason_format(&reasons[i], &m, line, sizeof line);
                    fail("%s (%s): no plan: %s", s->name, cfg, line);
                }
            plans++;
            for (int i = 0; i < p->n_ops; i++) {
                const uly_op_type t = p->ops[i].type;
                seen[t] = 1;
                if (!hx_backend_handler(&hx_backend_mpi, t))
                    fail("%s (%s): op type %s has no handler in the mpi backend", s->name, cfg, uly_op_type_name(t));
                if (nccl_runs && !hx_backend_handler(nccl, t))
                    fail("%s (%s): op type %s has no handler in the nccl backend", s->name, cfg, uly_op_type_name(t));
            }
            if (schedule(c, p, &hx_backend_mpi) != HX_OK)
                fail("%s (%s): the mpi backend's start-up check refuses the plan", s->name, cfg);
            if (nccl_runs && schedule(c, p, nccl) != HX_OK)
                fail("%s (%s): the nccl backend's start-up check refuses the plan", s->name, cfg);
            if (nccl && !nccl_runs && !refused && (refused = malloc(sizeof *refused))) *refused = *p;
        }
    }
    framework_op_plans(&cl, p, c, seen);
    moe_plans(&cl, p, c, seen, &plans);
    int n_seen = 0;
    char unseen[1024] = "";
    for (int t = 0; t < ULY_OPT_COUNT; t++) {
        if (seen[t]) n_seen++;
        else snprintf(unseen + strlen(unseen), sizeof unseen - strlen(unseen), " %s", uly_op_type_name(t));
    }
    if (n_seen < ULY_OPT_COUNT) fail("op types no plan emitted:%s", unseen);

    /* a plan the nccl backend does not run: refused at start-up, naming the op type */
    if (refused) {
        uly_op_type missing = ULY_OPT_COUNT;
        for (int i = 0; i < refused->n_ops && missing == ULY_OPT_COUNT; i++)
            if (!hx_backend_handler(nccl, refused->ops[i].type)) missing = refused->ops[i].type;
        char out[2048];
        const int rc = schedule_captured(c, refused, nccl, out, sizeof out);
        if (missing == ULY_OPT_COUNT)
            fail("every op of a plan the nccl backend does not run has a handler there");
        else if (rc != HX_FAIL)
            fail("an op type without a handler (%s) passed the start-up check", uly_op_type_name(missing));
        else if (!strstr(out, uly_op_type_name(missing)) || !strstr(out, "no handler"))
            fail("the start-up check's report does not name %s: \"%s\"", uly_op_type_name(missing), out);
        free(refused);
    }
    free(p);
    free(c);
    if (failures) {
        fprintf(stderr, "hx_handlers: %d failure(s) over %d plans\n", failures, plans);
        return 1;
    }
    printf("hx_handlers: %d plans, %d of %d op types emitted; every type has an mpi handler%s\n", plans, n_seen,
           (int)ULY_OPT_COUNT,
           nccl ? ", and an nccl handler in every plan of a strategy the nccl backend runs; an op type without a "
                  "handler is refused at start-up by name"
                : " (the nccl backend is a stub in this build: not checked)");
    return 0;
}
