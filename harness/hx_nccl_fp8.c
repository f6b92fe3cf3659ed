/* hx_nccl_fp8.c: --dtype fp8 in the nccl backend. The linear layers'
 * GEMMs (the op types uly_op_fp8 names: QKV, output projection, MLP up and
 * down, forward and both backward GEMMs) run through kern_cuda_gemm_fp8 on
 * cuBLASLt, per-tensor current scaling (TransformerEngine's
 * Float8CurrentScaling, the plan's recipe "tensorwise"), activations and
 * weights in E4M3 and gradients in E5M2 (the "hybrid" format); every
 * tensor between ops stays bf16, and attention, norms, the embedding and
 * the logits run in bf16 as in a bf16 run. Here: the GEMM dispatch, the
 * shape check, and the check's tolerance. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>

#include "hx_nccl.h"

int hn_linear(hx_ctx *c, const uly_op *op, int grad, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
              const void *a, int64_t lda, const void *b, int64_t ldb, float beta, void *cc, int64_t ldc)
{
    hn *H = c->be_state;
    if (!H->fp8 || !uly_op_fp8(&c->w, op->type)) return hn_gemm(H, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, cc, ldc);
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || lda > INT32_MAX || ldb > INT32_MAX || ldc > INT32_MAX)
        return hx_fail("FP8 GEMM %lld x %lld x %lld: too large for cuBLASLt's int interface", (long long)m,
                       (long long)n, (long long)k);
    /* the workspace grows to the largest GEMM as pass 0 meets them (pass 0 is not timed) */
    const size_t need = kern_cuda_gemm_fp8_workspace((int)m, (int)n, (int)k);
    if (need > H->fp8_ws_bytes) {
        if (!(H->fp8_ws = hn_dalloc(H, (int64_t)need, "the FP8 GEMM workspace"))) return HX_FAIL;
        H->fp8_ws_bytes = need;
    }
    const kern_cuda_fp8 fa = grad == HN_GRAD_A ? KERN_CUDA_E5M2 : KERN_CUDA_E4M3;
    const kern_cuda_fp8 fb = grad == HN_GRAD_B ? KERN_CUDA_E5M2 : KERN_CUDA_E4M3;
    H->fp8_calls++;
    return HN_K(kern_cuda_gemm_fp8(H->blas, ta != 0, tb != 0, (int)m, (int)n, (int)k, alpha, a, (int)lda, fa, b,
                                   (int)ldb, fb, H->ct, beta, cc, (int)ldc, H->fp8_ws, H->fp8_ws_bytes));
}

int hn_fp8_prepare(hx_ctx *c)
{
    const hn *H = c->be_state;
    if (!H->fp8) return HX_OK;
    /* every linear GEMM's m, n and k is one of these (hx_nccl_layer.c) */
    const struct {
        const char *name;
        int64_t v;
    } dims[] = {{"rows per rank (batch x tokens)", c->Rg}, {"hidden", c->h},     {"Q columns", c->qc},
                {"K/V columns", c->kc},                    {"FFN width", c->fl}, {"MLP up width", hn_f1l(c)}};
    const int nd = (int)(sizeof dims / sizeof dims[0]);
    int bad[2] = {nd, H->info.major * 10 + H->info.minor < 89}; /* FP8 tensor cores: compute capability 8.9 */
    for (int i = nd - 1; i >= 0; i--)
        if (dims[i].v % 16) bad[0] = i;
    /* the same answer on every rank, so that all of them stop (or none) */
    int first[2] = {bad[0], -bad[1]};
    HX_TRY(HX_MPI(MPI_Allreduce(MPI_IN_PLACE, first, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD)));
    if (first[1] < 0)
        return hx_args_reject(hx_world_rank(), "--dtype fp8: a GPU of compute capability below 8.9 on some rank (rank "
                                               "0's: %d.%d) has no FP8 tensor cores (valid there: --dtype bf16 or "
                                               "fp16)", H->info.major, H->info.minor);
    if (first[0] < nd)
        return hx_args_reject(hx_world_rank(), "--dtype fp8: a linear GEMM dimension (%s) is not a multiple of 16 on "
                                               "some rank (valid: cuBLASLt's FP8 GEMMs take multiples of 16; choose "
                                               "--seq, --heads, --head-dim, --ffn so they are)", dims[first[0]].name);
    return HX_OK;
}

/* The tolerance of the normwise error (max |x - ref| / max |ref|) against
 * the float64 reference, which multiplies the unquantized bf16 tensors.
 * One FP8 GEMM: each product a_l b_l carries two independent rounding
 * errors, relative, at most u in size (u = 2^-4 for E4M3's 3 mantissa
 * bits, 2^-3 for E5M2's 2), of variance at most u^2 / 3 (uniform in
 * [-u, u]). Over k terms of random sign the error's rms grows like sqrt(k)
 * u rms(ab), and so does the output's scale (sqrt(k) rms(ab)): relative to
 * the output, e = sqrt((u_a^2 + u_b^2) / 3), whatever k: 0.051 for
 * E4M3 x E4M3, 0.081 for E5M2 x E4M3 (test_kcuda_fp8 holds the FP8 GEMM to
 * this bound). The checked tensors sit at the end of a chain of such GEMMs
 * (dX: the forward's linear GEMMs, then the backward's input-gradient
 * GEMMs), whose independent errors add in quadrature: sqrt(n_f e_f^2 +
 * n_b e_b^2) with n_f, n_b the forward and backward op types that run FP8
 * here (uly_op_fp8 over the plan's ops: 4 and 4, 0.19), plus the bf16
 * run's own 24 u_bf16 (hx_nccl.c) for the rest; the max over the tensor of
 * an error of that rms against the max of the reference is the same ratio
 * for Gaussian-like tensors. Wrong results (a missing scale, a wrong
 * operand, a lost block) give errors of order 1 and more. */
void hn_fp8_tolerance(hx_ctx *c)
{
    hn *H = c->be_state;
    const double u4 = ldexp(1.0, -4), u5 = ldexp(1.0, -3), u_bf16 = ldexp(1.0, -9);
    const double e_f = sqrt(2.0 * u4 * u4 / 3.0), e_b = sqrt((u4 * u4 + u5 * u5) / 3.0);
    int seen_f[ULY_OPT_COUNT] = {0}, seen_b[ULY_OPT_COUNT] = {0}, n_f = 0, n_b = 0;
    for (int i = 0; i < c->plan.n_ops; i++) {
        const uly_op *o = &c->plan.ops[i];
        if (!uly_op_fp8(&c->w, o->type)) continue;
        int *seen = o->phase == ULY_PHASE_BWD ? seen_b : seen_f;
        if (!seen[o->type]++) *(o->phase == ULY_PHASE_BWD ? &n_b : &n_f) += 1;
    }
    const double grow = c->N > 4096 ? sqrt((double)c->N / 4096.0) : 1.0;
    c->tol = (sqrt(n_f * e_f * e_f + n_b * e_b * e_b) + 24.0 * u_bf16) * grow;
    snprintf(H->fp8_tol_reason, sizeof H->fp8_tol_reason,
             "nccl fp8: per FP8 GEMM a relative rms error sqrt((u_a^2 + u_b^2) / 3) of the output's scale, "
             "independent of k (E4M3 u = 2^-4: %.3f forward; E5M2 gradients u = 2^-3: %.3f backward), %d forward "
             "and %d backward FP8 op types in quadrature, plus the bf16 run's 24 u_bf16: %.3f; errors of a wrong "
             "result are O(1)", e_f, e_b, n_f, n_b, c->tol);
    c->tol_reason = H->fp8_tol_reason;
}
