/* hx_nccl.c: the nccl backend of ulyharness (--backend nccl).
 *
 * The same plan, op ids, execution order, passes, byte accounting, check and
 * trace as the mpi backend (hx_exec.c, hx_check.c, hx_trace.c); what differs
 * is where the data lives and what moves it:
 *   - one GPU per rank, device = local rank % visible devices (local rank
 *     from MPI_Comm_split_type SHARED); NCCL needs distinct GPUs within a
 *     communicator, so more local ranks than GPUs is refused;
 *   - MPI stays the launcher: it builds the plan's group communicators, and
 *     broadcasts each group's ncclUniqueId over them (kern_nccl_comm_create);
 *     one NCCL communicator per plan group that has a communication op;
 *   - every tensor lives on the GPU in the run's 16-bit type (--dtype bf16 or
 *     fp16; the plan is built with that dtype, so its bytes are 2 per
 *     element; --dtype fp8 keeps them bf16 and runs the linear layers' GEMMs
 *     in FP8, hx_nccl_fp8.c); accumulators that the kernels need in float32 are float32
 *     (the attention output being merged over ring steps, dQ/dK/dV of the
 *     backward, RMS statistics, the optimizer's master weights and moments);
 *   - communication ops go through kern_nccl (grouped ncclSend/ncclRecv
 *     all-to-all and ring steps, all-gather, reduce-scatter, all-reduce as
 *     reduce-scatter + all-gather) on the communicator's own stream; bytes are
 *     counted by kern_nccl from the counts passed, by the CPU harness's rules;
 *   - attention runs the kernels/cuda flash kernels (--kernel flash, head
 *     dimension 64 or 128) or the cuBLAS reference (--kernel ref, any head
 *     dimension), per (query segment, key segment) pair as on the CPU, the
 *     partial results merged by log-sum-exp in float32; GEMMs are cuBLAS
 *     (cublasGemmEx, float32 accumulation); norms, activations, loss, Adam
 *     and the layout changes are the small kernels of hx_nccl_kern.cu;
 *   - each op is timed by CUDA events on the compute stream (communication
 *     ops make their communicator's stream wait for the compute stream, and
 *     the compute stream wait for theirs, so the pair of events spans them),
 *     and the device is synchronised after every op;
 *   - ring K,V (and dK,dV accumulator) transfers are issued on the ring
 *     communicator's stream before each step's attention on the compute
 *     stream; events order them, and the time the compute stream spends
 *     waiting for a transfer (an event recorded before and after the wait)
 *     is that transfer op's exposed time, subtracted from the attention op.
 *
 * Strategies: ulysses, ring, usp (each with TP+SP inside, --tp T) and
 * megatron-sp, forward and backward, every ZeRO stage, recompute none or
 * full, GQA, batch, SwiGLU: the token-side (mode TOK, and TP_SP: the token
 * mode on one CP rank) and Ulysses all-to-all (mode ULY) paths of the CPU
 * harness, with the TP group's gathered rows on the GEMM side when t > 1.
 * rsa, allgather-cp and megatron-tp need their own layouts here and are
 * refused (exit 2).
 *
 * Every CUDA, cuBLAS and NCCL call is checked: a failure names the call and
 * the library's message and returns HX_FAIL, on which main aborts the job.
 *
 * This file is the backend's lifecycle; its state, memory, layer ops and
 * attention are in hx_nccl.h, hx_nccl_mem.c, hx_nccl_layer.c and
 * hx_nccl_attn.c. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "hx_nccl.h"


static const struct kern_attn_impl hn_kern_flash = {
    "cuda-flash",
    "kernels/cuda FlashAttention-2 style forward and backward (ldmatrix + mma.sync, bf16/fp16 in, float32 "
    "accumulation), ring blocks merged by log-sum-exp in float32",
    NULL, NULL};
static const struct kern_attn_impl hn_kern_ref = {
    "cuda-ref",
    "kernels/cuda cuBLAS reference attention (scores materialised in float32, softmax kernel, P V), ring blocks "
    "merged by log-sum-exp in float32",
    NULL, NULL};


/* ------------------------------------------------------------ the backend */

/* the registry's strategies whose exec mode this backend runs (exec_modes) */
static void hn_strategy_names(char *buf, size_t n)
{
    buf[0] = 0;
    for (int i = 0; i < ULY_STRAT_COUNT; i++) {
        const uly_strategy *s = uly_strategy_get((uly_strategy_id)i);
        if (!s || !hx_backend_runs(&hx_backend_nccl, s->exec)) continue;
        size_t l = strlen(buf);
        snprintf(buf + l, n - l, "%s%s", l ? ", " : "", s->name);
    }
}

static int hn_configure(hx_opts *o, int rank)
{
    if (o->microbench)
        return hx_args_reject(rank, "--microbench: runs with --backend mpi only (nccl-tests measures NCCL)");
    if (o->experts > 0) /* the routed experts have CPU handlers only (hx_moe.c) */
        return hx_args_reject(rank, "--experts %lld: MoE layers run with --backend mpi only (valid with nccl: a dense "
                                    "model, no --experts)", (long long)o->experts);
    const uly_strategy *st = o->strategy ? uly_strategy_find(o->strategy) : NULL;
    if (st && !hx_backend_runs(&hx_backend_nccl, st->exec)) {
        char names[160];
        hn_strategy_names(names, sizeof names);
        return hx_args_reject(rank, "--strategy %s: not run by --backend nccl; valid with nccl: %s (every strategy "
                                    "runs with --backend mpi)", o->strategy, names);
    }
    if (o->dtype == HX_DTYPE_DEFAULT) o->dtype = ULY_BF16;
    if (o->dtype != ULY_BF16 && o->dtype != ULY_FP16 && o->dtype != ULY_FP8)
        return hx_args_reject(rank, "--dtype %s: --backend nccl runs bf16, fp16 or fp8", uly_dtype_name(o->dtype));
    if (!strcmp(o->kernel, "flash") && o->head_dim != 64 && o->head_dim != 128)
        return hx_args_reject(rank, "--head-dim %lld: the CUDA flash kernels take 64 or 128 (or --kernel ref: the "
                                    "cuBLAS reference, any head dimension)", (long long)o->head_dim);
    return HX_OK;
}

/* Before the plan: this rank's GPU, or exit 77 (skipped) when there is none.
 * The backend's state goes to *state (main hands it to the context). */
static int hn_open(const hx_opts *o, void **state)
{
    *state = NULL;
    int local[2]; /* this rank's place among the ranks on its host */
    MPI_Comm sh;
    HX_TRY(HX_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, hx_world_rank(), MPI_INFO_NULL, &sh)));
    HX_TRY(HX_MPI(MPI_Comm_rank(sh, &local[0])));
    HX_TRY(HX_MPI(MPI_Comm_size(sh, &local[1])));
    HX_TRY(HX_MPI(MPI_Comm_free(&sh)));
    int n = 0;
    char why[400] = "";
    const kern_cuda_status s = kern_cuda_device_count(&n);
    if (s != KERN_CUDA_OK || n < 1) {
        n = 0;
        snprintf(why, sizeof why, "%s", s != KERN_CUDA_OK ? kern_cuda_last_error() : "cudaGetDeviceCount: 0 devices");
    }
    /* every rank ends the same way: skipped if any rank has no GPU, bad usage if any has too few */
    int rc[2] = {n == 0 ? HX_SKIP : 0, n > 0 && local[1] > n ? HX_USAGE : 0}, all[2];
    HX_TRY(HX_MPI(MPI_Allreduce(rc, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD)));
    if (all[0]) {
        if (hx_world_rank() == 0)
            fprintf(stderr, "ulyharness: --backend nccl: no CUDA device %s (%s): nothing to run, exit 77 (skipped)\n",
                    n == 0 ? "on this host" : "on another rank's host", n == 0 ? why : "see that rank");
        return HX_SKIP;
    }
    if (all[1]) {
        if (hx_world_rank() == 0)
            fprintf(stderr, "ulyharness: --backend nccl: %d ranks on a host with %d GPU(s): NCCL needs one GPU per "
                            "rank; run at most %d ranks per host\n", local[1], n, n);
        return HX_USAGE;
    }
    hn *H = calloc(1, sizeof *H);
    if (!H) return hx_fail("out of memory: the nccl backend's state");
    *state = H; /* close frees it, whatever of it is set up */
    H->local_rank = local[0];
    H->local_size = local[1];
    H->ndev = n;
    H->device = H->local_rank % n;
    H->ct = o->dtype == ULY_FP16 ? KERN_CUDA_FP16 : KERN_CUDA_BF16; /* fp8: bf16 between ops (hx_nccl_fp8.c) */
    H->es = (int64_t)kern_cuda_dtype_size(H->ct);
    H->fp8 = o->dtype == ULY_FP8;
    H->flash = !strcmp(o->kernel, "flash");
    HX_TRY(HN_K(kern_cuda_set_device(H->device)));
    HX_TRY(HN_K(kern_cuda_device_query(H->device, &H->info)));
    HX_TRY(HN_CUDA(cudaDriverGetVersion(&H->driver)));
    HX_TRY(HN_CUDA(cudaRuntimeGetVersion(&H->runtime)));
    int code = 0;
    HX_TRY(HN_K(kern_nccl_version(&code, H->nccl_version, sizeof H->nccl_version)));
    void *st = NULL;
    HX_TRY(HN_K(kern_cuda_stream_create(&st)));
    H->cs = (cudaStream_t)st;
    HX_TRY(HN_K(kern_cuda_blas_create(&H->blas)));
    HX_TRY(HN_K(kern_cuda_blas_set_stream(H->blas, H->cs)));
    HX_TRY(HN_CUDA(cudaEventCreate(&H->t0)));
    return HN_CUDA(cudaEventCreate(&H->t1));
}

static int bcast_id(void *id, size_t n, void *ctx)
{
    return MPI_Bcast(id, (int)n, MPI_BYTE, 0, *(MPI_Comm *)ctx) == MPI_SUCCESS ? 0 : -1;
}

static int comms_make(hx_ctx *c)
{
    hn *H = c->be_state;
    int used[ULY_GROUP_COUNT] = {0};
    for (int i = 0; i < c->plan.n_ops; i++)
        if (c->plan.ops[i].kind == ULY_OP_COMM) used[c->plan.ops[i].group] = 1;
    /* the same order on every rank: NCCL's set-up is collective per group */
    for (int gid = 0; gid < ULY_GROUP_COUNT; gid++) {
        if (!used[gid]) continue;
        hx_group *g = &c->g[gid];
        if (g->comm == MPI_COMM_NULL || g->size < 1)
            return hx_fail("internal: group %s has no MPI communicator", uly_group_name(gid));
        hx_beat(-1, "NCCL communicator set-up");
        HX_TRY(HN_K(kern_nccl_comm_create(g->size, g->rank, H->device, bcast_id, &g->comm, &H->nc[gid])));
    }
    return HX_OK;
}

/* ------------------------------------------------------------- buffers */

/* Device memory in three slabs by lifetime, as the CPU executor's host
 * slabs (hx_mem.c): the token side with the per-model ops' tensors, the
 * attention side with the ring, all-to-all buffers and kernel workspaces,
 * the parameters with the optimizer's state. */
static void tokens_carve(hx_ctx *c, hx_slab *s)
{
    hn *H = c->be_state;
    const int64_t Rt = c->Rt, Rg = c->Rg, h = c->h, act = c->plan.act_tokens;
    void **tok[] = {&H->X, &H->Y1, &H->X1, &H->Y2, &H->G, &H->dY1, &H->dX1, &H->dY2, &H->dX, &H->Z, &H->M};
    for (size_t i = 0; i < sizeof tok / sizeof tok[0]; i++) *tok[i] = hn_slab_ct(H, s, Rt * h);
    H->rms1 = hx_slab_f(s, Rt);
    H->rms2 = hx_slab_f(s, Rt);
    H->dg32 = hx_slab_f(s, h);
    /* TP+SP gathers into GEMM-side buffers of their own (as on the host) */
    void **gemm[] = {&H->Y1g, &H->Y2g, &H->Gg, &H->dX1g, &H->Zg, &H->Mg, &H->dY2g, &H->dY1g};
    void *same[] = {H->Y1, H->Y2, H->G, H->dX1, H->Z, H->M, H->dY2, H->dY1};
    for (int i = 0; i < 8; i++) *gemm[i] = c->sp ? hn_slab_ct(H, s, Rg * h) : same[i];
    H->U = hn_slab_ct(H, s, Rg * hn_f1l(c));
    H->dU = hn_slab_ct(H, s, Rg * hn_f1l(c));
    H->A = hn_slab_ct(H, s, Rg * c->fl);
    H->dA = hn_slab_ct(H, s, Rg * c->fl);
    void **q[] = {&H->Q, &H->O, &H->dO, &H->dQ}, **kv[] = {&H->K, &H->V, &H->dK, &H->dV};
    for (int i = 0; i < 4; i++) *q[i] = hn_slab_ct(H, s, Rg * c->qc);
    for (int i = 0; i < 4; i++) *kv[i] = hn_slab_ct(H, s, Rg * c->kc);
    /* per-model ops (not checked: their inputs are seeded, not the CPU's draws) */
    H->emb_in = hn_slab_ct(H, s, c->lv * h);
    H->emb_x = hn_slab_ct(H, s, c->b * act * h);
    H->pp_rx = c->l.pp > 1 ? hn_slab_ct(H, s, c->b * act * h) : NULL;
    H->xf = hn_slab_ct(H, s, c->b * c->lt * h);
    H->emb_out = hn_slab_ct(H, s, c->lv * h);
    H->logit = hn_slab_ct(H, s, c->b * c->lt * c->lv);
    H->dxf = hn_slab_ct(H, s, c->b * c->lt * h);
    H->demb = hn_slab_ct(H, s, c->lv * h);
}

static void attn_carve(hx_ctx *c, hx_slab *s)
{
    hn *H = c->be_state;
    const int64_t nqa = c->qs.rows * c->Hq, d = c->d, blk = 2 * c->kv_rows * c->Hkv * d;
    void **qside[] = {&H->qa, &H->oa, &H->doa, &H->tmp_o};
    for (int i = 0; i < 4; i++) *qside[i] = hn_slab_ct(H, s, nqa * d);
    H->oacc = hx_slab_f(s, nqa * d);
    H->dqa = hx_slab_f(s, nqa * d);
    H->lse = hx_slab_f(s, nqa);
    H->tmp_lse = hx_slab_f(s, nqa);
    H->tmp_o32 = H->flash ? NULL : hx_slab_f(s, nqa * d);
    H->kv_own = hn_slab_ct(H, s, blk);
    H->dkv = hx_slab_f(s, blk);
    const int ring = hn_ringed(c);
    H->acc32 = ring ? hx_slab_f(s, blk) : NULL;
    for (int i = 0; i < 2; i++) {
        H->rot[i] = ring ? hn_slab_ct(H, s, blk) : NULL;
        H->accs[i] = ring ? hn_slab_ct(H, s, blk) : NULL;
        H->accr[i] = ring ? hn_slab_ct(H, s, blk) : NULL;
    }
    if (c->mode == ULY_EXEC_A2A) {
        const int64_t nq = c->Rg * c->gq * d, nk = c->Rg * c->kv_eff * d;
        void **qb[] = {&H->s_q, &H->r_q, &H->s_o, &H->r_o, &H->s_do, &H->r_do, &H->s_dq, &H->r_dq};
        void **kb[] = {&H->s_k, &H->r_k, &H->s_v, &H->r_v, &H->s_dk, &H->r_dk, &H->s_dv, &H->r_dv};
        for (int i = 0; i < 8; i++) *qb[i] = hn_slab_ct(H, s, nq);
        for (int i = 0; i < 8; i++) *kb[i] = hn_slab_ct(H, s, nk);
    }
    H->bwd_ws = hx_slab_take(s, (int64_t)H->bwd_ws_bytes);
    H->ref_ws = H->flash ? NULL : hx_slab_take(s, (int64_t)H->ref_ws_bytes);
}

/* the parameters and their shards as the host's (hx_mem.c), in the run's
 * type; the optimizer's master values and moments in float32 */
static void params_carve(hx_ctx *c, hx_slab *s)
{
    hn *H = c->be_state;
    H->wt = hn_slab_ct(H, s, c->n_alloc);
    H->gwt = hn_slab_ct(H, s, c->n_alloc);
    H->wshard = c->wshard ? hn_slab_ct(H, s, c->layer_sh) : NULL;
    H->gshard = c->gshard ? hn_slab_ct(H, s, c->layer_sh) : NULL;
    H->gmshard = c->gmshard ? hn_slab_ct(H, s, c->model_sh) : NULL;
    H->wmshard = c->wmshard ? hn_slab_ct(H, s, c->model_sh) : NULL;
    H->master = hx_slab_f(s, c->n_opt);
    H->adam_m = hx_slab_f(s, c->n_opt);
    H->adam_v = hx_slab_f(s, c->n_opt);
}

/* the host copies of the results the check reads (hn_fetch fills them after pass 0) */
static void host_copies_carve(hx_ctx *c, hx_slab *s)
{
    c->Og = hx_slab_f(s, c->Rg * c->qc);
    c->dQg = hx_slab_f(s, c->Rg * c->qc);
    c->dKg = hx_slab_f(s, c->Rg * c->kc);
    c->dVg = hx_slab_f(s, c->Rg * c->kc);
    c->dX = hx_slab_f(s, c->Rt * c->h);
}

static int buffers_make(hx_ctx *c)
{
    hn *H = c->be_state;
    const int64_t Rt = c->Rt, h = c->h;
    hn_attn_workspaces(c);
    HX_TRY(hn_slab_carve(c, "token-side GPU buffers", tokens_carve));
    HX_TRY(hn_slab_carve(c, "attention-side GPU buffers", attn_carve));
    HX_TRY(hn_slab_carve(c, "GPU parameters", params_carve));
    HX_TRY(hx_slab_carve(c, &c->mem.tokens, "host copies of the results", host_copies_carve));

    /* parameters: the host weights hx_params_setup built, rounded once */
    HX_TRY(hn_upload_ct(H, H->wt, c->wt, c->n_alloc));
    if (c->wshard) HX_TRY(hn_upload_ct(H, H->wshard, c->wshard, c->layer_sh));
    if (c->wmshard) HX_TRY(hn_upload_ct(H, H->wmshard, c->wmshard, c->model_sh));
    if (c->n_opt > 0) HX_TRY(HN_K(kern_cuda_h2d(H->master, c->master, sizeof(float) * (size_t)c->n_opt)));

    const uint64_t sd = c->o.seed * 0x9e3779b97f4a7c15ULL + (uint64_t)hx_world_rank();
    HX_TRY(HN_K(kern_cuda_fill_uniform(H->emb_in, H->ct, (size_t)(c->lv * h), sd + 1, -0.02f, 0.02f, H->cs)));
    HX_TRY(HN_K(kern_cuda_fill_uniform(H->emb_out, H->ct, (size_t)(c->lv * h), sd + 2, -0.02f, 0.02f, H->cs)));
    HX_TRY(HN_K(kern_cuda_fill_uniform(H->xf, H->ct, (size_t)(c->b * c->lt * h), sd + 3, -1.0f, 1.0f, H->cs)));

    /* the layer's input and upstream gradient: the CPU's seeded tensors */
    float *x = hx_falloc(Rt * h, "X"), *gr = hx_falloc(Rt * h, "G");
    int rc = x && gr ? HX_OK : HX_FAIL;
    if (rc == HX_OK) {
        hx_layer_io_seed(c, x, gr);
        rc = hn_upload_ct(H, H->X, x, Rt * h);
    }
    if (rc == HX_OK) rc = hn_upload_ct(H, H->G, gr, Rt * h);
    free(x);
    free(gr);
    return rc;
}

static int hn_prepare(hx_ctx *c)
{
    hn *H = c->be_state;
    if (!hx_backend_runs(&hx_backend_nccl, c->mode))
        return hx_fail("internal: --backend nccl does not run mode %s", uly_exec_mode_name(c->mode));
    c->kern = H->flash ? &hn_kern_flash : &hn_kern_ref;
    /* Tolerance of the normwise error against the float64 reference: every
     * tensor between ops is stored in 16 bits (unit roundoff u = 2^-9 for
     * bf16, 2^-11 for fp16), the inputs and weights are rounded once, the
     * attention kernels round P to 16 bits for P V and dS for dQ, dK (fp32
     * accumulation throughout), and the longest path (dX) crosses about 20
     * such roundings: 24 u, i.e. 4.7e-2 (bf16) and 1.2e-2 (fp16); grown by
     * sqrt(N / 4096) past 4096 tokens as the CPU's. An emulation of exactly
     * these roundings in float64 (one rank, N 256..1024, d 32 and 64, GQA,
     * SwiGLU, causal or not) gave 4-7 u for bf16 and 2-3 u for fp16, so the
     * bound leaves about 4x for what the emulation leaves out (the ring's
     * 16-bit dK,dV accumulators, the kernels' exp2 and summation order). A
     * wrong mask, block, layout or reduction gives errors of order 1. Not
     * yet measured on a GPU: the first GPU run's errors belong next to this. */
    const double u = H->ct == KERN_CUDA_BF16 ? ldexp(1.0, -9) : ldexp(1.0, -11);
    const double grow = c->N > 4096 ? sqrt((double)c->N / 4096.0) : 1.0;
    c->tol = 24.0 * u * grow;
    c->tol_reason = H->ct == KERN_CUDA_BF16
                        ? "nccl bf16: 16-bit storage between ops (u = 2^-9), inputs and weights rounded once, P and "
                          "dS rounded in the kernels, ~20 roundings on the longest path: 24 u; errors of a wrong "
                          "result are O(1)"
                        : "nccl fp16: 16-bit storage between ops (u = 2^-11), inputs and weights rounded once, P and "
                          "dS rounded in the kernels, ~20 roundings on the longest path: 24 u; errors of a wrong "
                          "result are O(1)";
    if (H->fp8) hn_fp8_tolerance(c); /* the FP8 GEMMs' rounding on top of the bf16 run's */
    HX_TRY(hn_fp8_prepare(c));
    HX_TRY(hx_schedule(c));
    hx_beat(-1, "GPU buffers");
    HX_TRY(buffers_make(c));
    HX_TRY(hn_maps_build(c));
    HX_TRY(comms_make(c));
    const int npool = 8 * (int)c->r + 16;
    if (!(H->pool = hx_alloc(sizeof(cudaEvent_t) * (size_t)npool, "events"))) return HX_FAIL;
    for (; H->npool < npool; H->npool++) HX_TRY(HN_CUDA(cudaEventCreate(&H->pool[H->npool])));
    H->maxpend = H->npool / 2;
    if (!(H->pend = hx_alloc(sizeof(hn_pend) * (size_t)H->maxpend, "timed waits"))) return HX_FAIL;
    return HN_CUDA(cudaDeviceSynchronize());
}

/* Runs one op between two events on the compute stream; the exposed waits
 * of the ring transfers it carries are read once it has finished. */
static int hn_exec(hx_ctx *c, int id, double *seconds)
{
    hn *H = c->be_state;
    H->used = 0;
    H->npend = 0;
    H->fp8_calls = 0;
    HX_TRY(HN_CUDA(cudaEventRecord(H->t0, H->cs)));
    HX_TRY(c->handler[id](c, &c->plan.ops[id]));
    c->st[id].fp8_gemms = H->fp8_calls;
    HX_TRY(HN_CUDA(cudaEventRecord(H->t1, H->cs)));
    HX_TRY(HN_CUDA(cudaEventSynchronize(H->t1)));
    float ms = 0;
    HX_TRY(HN_CUDA(cudaEventElapsedTime(&ms, H->t0, H->t1)));
    for (int i = 0; i < H->npend; i++) {
        float w = 0;
        HX_TRY(HN_CUDA(cudaEventElapsedTime(&w, H->pend[i].a, H->pend[i].b)));
        if (w > 0) *H->pend[i].acc += 1e-3 * w;
    }
    *seconds = 1e-3 * ms;
    return HX_OK;
}

static int hn_fetch(hx_ctx *c)
{
    hn *H = c->be_state;
    HX_TRY(HN_CUDA(cudaStreamSynchronize(H->cs)));
    HX_TRY(hn_download_ct(H, c->Og, H->O, c->Rg * c->qc));
    HX_TRY(hn_download_ct(H, c->dQg, H->dQ, c->Rg * c->qc));
    HX_TRY(hn_download_ct(H, c->dKg, H->dK, c->Rg * c->kc));
    HX_TRY(hn_download_ct(H, c->dVg, H->dV, c->Rg * c->kc));
    return hn_download_ct(H, c->dX, H->dX, c->Rt * c->h);
}

static void replace(cJSON *o, const char *k, cJSON *v)
{
    if (!o) {
        cJSON_Delete(v);
        return;
    }
    if (cJSON_GetObjectItemCaseSensitive(o, k)) cJSON_ReplaceItemInObjectCaseSensitive(o, k, v);
    else cJSON_AddItemToObject(o, k, v);
}

static void hn_describe(const hx_ctx *c, void *header)
{
    hn *H = c->be_state;
    cJSON *hd = header;
    cJSON *sw = cJSON_GetObjectItemCaseSensitive(hd, "software");
    cJSON *hw = cJSON_GetObjectItemCaseSensitive(hd, "hardware");
    cJSON *hx = cJSON_GetObjectItemCaseSensitive(hd, "harness");
    char b[160];
    replace(sw, "backend", cJSON_CreateString("nccl"));
    replace(sw, "attention_kernel_summary", cJSON_CreateString(c->kern->summary));
    replace(sw, "dtype", cJSON_CreateString(H->fp8 ? "fp8" : kern_cuda_dtype_name(H->ct)));
    if (H->fp8)
        replace(hx, "fp8",
                cJSON_CreateString("the linear layers' GEMMs (the ops uly_op_fp8 names; fp8_gemms on their op lines: "
                                   "the calls per pass) through kern_cuda_gemm_fp8 on cuBLASLt: per-tensor current "
                                   "scaling (scale = FP8 max / amax, computed on the device per operand), E4M3 "
                                   "activations and weights, E5M2 gradients (hybrid), float32 accumulation, bf16 "
                                   "output; every tensor between ops, attention, norms, embedding and logits bf16"));
    snprintf(b, sizeof b, "%d.%d", H->runtime / 1000, (H->runtime % 1000) / 10);
    replace(sw, "cuda_runtime", cJSON_CreateString(b));
    snprintf(b, sizeof b, "%d.%d", H->driver / 1000, (H->driver % 1000) / 10);
    replace(sw, "cuda_driver", cJSON_CreateString(b));
    replace(sw, "nccl", cJSON_CreateString(H->nccl_version));
    replace(sw, "cublas", cJSON_CreateString(kern_cuda_blas_version(H->blas)));
    replace(sw, "kernels_cuda_build", cJSON_CreateString(kern_cuda_build_info()));
    cJSON *gpu = cJSON_CreateObject();
    cJSON_AddStringToObject(gpu, "name", H->info.name);
    snprintf(b, sizeof b, "%d.%d", H->info.major, H->info.minor);
    cJSON_AddStringToObject(gpu, "compute_capability", b);
    cJSON_AddNumberToObject(gpu, "sm_count", H->info.sm_count);
    cJSON_AddNumberToObject(gpu, "memory_bytes", (double)H->info.mem_bytes);
    cJSON_AddNumberToObject(gpu, "clock_khz", H->info.clock_khz);
    cJSON_AddNumberToObject(gpu, "mem_clock_khz", H->info.mem_clock_khz);
    cJSON_AddNumberToObject(gpu, "mem_bus_bits", H->info.mem_bus_bits);
    cJSON_AddStringToObject(gpu, "pci_bus_id", H->info.pci_bus_id);
    replace(hw, "gpu", gpu);
    replace(hw, "gpus_visible", cJSON_CreateNumber(H->ndev));
    replace(hw, "gpu_choice", cJSON_CreateString("device = local rank % visible devices (rank 0's GPU above)"));
    replace(hx, "timing",
            cJSON_CreateString("CUDA events on the compute stream around each op (a communication op makes its "
                               "NCCL stream wait for the compute stream and the compute stream for it), the device "
                               "synchronised after each op, MPI_Barrier as in harness.sync; time_s is the median over "
                               "reps per rank, then median/min/max over ranks; ring transfers run on the ring "
                               "communicator's stream during the attention op they overlap and report the time the "
                               "compute stream waited for them (exposed), and that op reports the rest"));
    snprintf(b, sizeof b, "%s", kern_cuda_dtype_name(H->ct));
    char note[400];
    snprintf(note, sizeof note,
             "bytes handed to NCCL that leave the rank, from the counts passed (kern_nccl): alltoall count*(p-1), "
             "allgather count*(p-1), reduce-scatter block*(p-1), all-reduce = reduce-scatter + all-gather, send "
             "count; %s (2 bytes)", b);
    replace(hx, "bytes", cJSON_CreateString(note));
}

/* the first failure is the status; what comes after it still runs */
static void keep(int *rc, int r)
{
    if (*rc == HX_OK) *rc = r;
}

/* Frees what open and prepare made, as far as they got. */
static int hn_close(hx_ctx *c)
{
    hn *H = c->be_state;
    if (!H) return HX_OK;
    int rc = HX_OK;
    for (int g = 0; g < ULY_GROUP_COUNT; g++)
        if (H->nc[g]) keep(&rc, HN_K(kern_nccl_comm_destroy(H->nc[g])));
    for (int i = 0; i < H->nallocs; i++) keep(&rc, HN_K(kern_cuda_free(H->allocs[i])));
    for (int i = 0; i < H->npool; i++) keep(&rc, HN_CUDA(cudaEventDestroy(H->pool[i])));
    if (H->t0) keep(&rc, HN_CUDA(cudaEventDestroy(H->t0)));
    if (H->t1) keep(&rc, HN_CUDA(cudaEventDestroy(H->t1)));
    if (H->blas) keep(&rc, HN_K(kern_cuda_blas_destroy(H->blas)));
    if (H->cs) keep(&rc, HN_K(kern_cuda_stream_destroy(H->cs)));
    free(H->pool);
    free(H->pend);
    free(H);
    c->be_state = NULL;
    return rc;
}

/* The backend runs the token and all-to-all modes (attention on the rank's
 * tokens with ring hops fused in, Ulysses' all-to-alls around it), each with
 * TP+SP inside, and Megatron TP+SP (the token mode on one CP rank): the
 * strategies it takes are the registry's entries of those modes. */
const hx_backend hx_backend_nccl = {
    .name = "nccl",
    .host_buffers = 0,
    .exec_modes = (1u << ULY_EXEC_TOKENS) | (1u << ULY_EXEC_A2A) | (1u << ULY_EXEC_TP_SP),
    .configure = hn_configure,
    .open = hn_open,
    .prepare = hn_prepare,
    .handlers = {hn_layer_handlers, hn_attn_handlers},
    .exec = hn_exec,
    .fetch = hn_fetch,
    .describe = hn_describe,
    .close = hn_close,
};
