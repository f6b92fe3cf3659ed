/* attn_flash.cu: the flash attention API: argument checks, then the
 * launches in attn_fwd_bf16.cu, attn_fwd_fp16.cu, attn_bwd.cu (one
 * translation unit each, so nvcc builds them in parallel); the merge
 * (attn_merge_kernel.cuh) is launched here. */
#include <math.h>
#include <stdio.h>

#include "attn_merge_kernel.cuh"
#include "kc_launch.h"

#define KC_OFF_MAX (1ll << 52)

static bool kc_aligned(const void *p, size_t a) { return ((uintptr_t)p & (a - 1)) == 0; }

kern_cuda_status kern_cuda_attn_check(const struct kern_cuda_attn_desc *ds, bool flash)
{
    if (!ds) return KC_EINVAL("desc is NULL");
    if (ds->heads < 1 || ds->kv_heads < 1 || ds->heads % ds->kv_heads != 0)
        return KC_EINVAL("heads must be >= 1 and a multiple of kv_heads >= 1");
    if (ds->n_q < 0 || ds->n_kv < 0 || ds->d < 1) return KC_EINVAL("n_q, n_kv must be >= 0 and d >= 1");
    if (!isfinite(ds->scale)) return KC_EINVAL("scale must be finite");
    if (ds->dtype != KERN_CUDA_BF16 && ds->dtype != KERN_CUDA_FP16) return KC_EINVAL("dtype must be bf16 or fp16");
    if (ds->q_off < -KC_OFF_MAX || ds->q_off > KC_OFF_MAX || ds->kv_off < -KC_OFF_MAX || ds->kv_off > KC_OFF_MAX)
        return KC_EINVAL("q_off and kv_off must be within +-2^52");
    if (flash) {
        if (ds->d != 64 && ds->d != 128)
            return kc_fail(KERN_CUDA_EUNSUPPORTED, "kern_cuda_attn_check", __FILE__, __LINE__,
                           "the flash kernels take head dimension 64 or 128");
        /* grid y limit (65535 blocks): fwd 128-row blocks, bwd 64-key blocks */
        if ((ds->n_q + 127) / 128 > 65535 || (ds->n_kv + 63) / 64 > 65535)
            return kc_fail(KERN_CUDA_EUNSUPPORTED, "kern_cuda_attn_check", __FILE__, __LINE__,
                           "n_q above 8388480 or n_kv above 4194240 rows per call");
    }
    return KERN_CUDA_OK;
}

int kern_cuda_attn_fwd_variants(void) { return KC_FWD_VARIANTS; }

const char *kern_cuda_attn_fwd_variant_name(int d, int variant, char *buf, size_t len)
{
    int mt, bnc;
    if (!buf || !len) return "";
    if (!kc_fwd_shape(d, variant, &mt, &bnc))
        snprintf(buf, len, "(no variant %d)", variant);
    else
        snprintf(buf, len, "v%d: %d query rows x 64 keys per block, %d rows per warp, softmax steps of %d keys", variant,
                 64 * mt, 16 * mt, bnc);
    return buf;
}

kern_cuda_status kern_cuda_attn_fwd_variant(const struct kern_cuda_attn_desc *desc, const void *q, const void *k,
                                            const void *v, void *o, float *lse, int variant, void *stream)
{
    KC_TRY(kern_cuda_attn_check(desc, true));
    int mt, bnc;
    if (!kc_fwd_shape(desc->d, variant, &mt, &bnc)) return KC_EINVAL("unknown forward variant");
    const size_t nq = (size_t)desc->heads * desc->n_q, nkv = (size_t)desc->kv_heads * desc->n_kv;
    if (nq == 0) return KERN_CUDA_OK;
    if (!q || !o || !lse || (nkv > 0 && (!k || !v))) return KC_EINVAL("NULL buffer for a non-empty tensor");
    if (!kc_aligned(q, 16) || !kc_aligned(k, 16) || !kc_aligned(v, 16) || !kc_aligned(o, 4) || !kc_aligned(lse, 4))
        return KC_EINVAL("q, k, v must be 16-byte aligned (cp.async), o and lse 4-byte aligned");
    kc_fwd_params p;
    p.q = static_cast<const uint16_t *>(q);
    p.k = static_cast<const uint16_t *>(k);
    p.v = static_cast<const uint16_t *>(v);
    p.o = static_cast<uint16_t *>(o);
    p.lse = lse;
    p.heads = desc->heads;
    p.kv_heads = desc->kv_heads;
    p.n_q = desc->n_q;
    p.n_kv = desc->n_kv;
    p.scale_log2 = desc->scale * 1.4426950408889634f;
    p.q_off = desc->causal ? desc->q_off : 0;
    p.kv_off = desc->causal ? desc->kv_off : 0;
    p.reverse = desc->causal ? 1 : 0;
    cudaStream_t st = (cudaStream_t)stream;
    return desc->dtype == KERN_CUDA_BF16 ? kc_fwd_launch_bf16(p, desc->d, mt, bnc, desc->causal, st)
                                         : kc_fwd_launch_fp16(p, desc->d, mt, bnc, desc->causal, st);
}

kern_cuda_status kern_cuda_attn_fwd(const struct kern_cuda_attn_desc *desc, const void *q, const void *k,
                                    const void *v, void *o, float *lse, void *stream)
{
    return kern_cuda_attn_fwd_variant(desc, q, k, v, o, lse, 0, stream);
}

/* ------------------------------------------------------------- backward */

size_t kern_cuda_attn_bwd_workspace(const struct kern_cuda_attn_desc *desc)
{
    if (!desc || desc->heads < 0 || desc->n_q < 0) return 0;
    return (size_t)desc->heads * (size_t)desc->n_q * sizeof(float);
}

kern_cuda_status kern_cuda_attn_bwd(const struct kern_cuda_attn_desc *desc, const void *q, const void *k,
                                    const void *v, const void *o, const float *lse, const void *dout, float *dq,
                                    float *dk, float *dv, void *workspace, void *stream)
{
    KC_TRY(kern_cuda_attn_check(desc, true));
    const size_t nq = (size_t)desc->heads * desc->n_q, nkv = (size_t)desc->kv_heads * desc->n_kv;
    if (nq == 0 || nkv == 0) return KERN_CUDA_OK; /* no pair of a row and a key: nothing to add */
    if (!q || !k || !v || !o || !lse || !dout || !dq || !dk || !dv) return KC_EINVAL("NULL buffer");
    if (!kc_aligned(q, 16) || !kc_aligned(k, 16) || !kc_aligned(v, 16) || !kc_aligned(dout, 16) ||
        !kc_aligned(dq, 4) || !kc_aligned(dk, 4) || !kc_aligned(dv, 4) || !kc_aligned(workspace, 4))
        return KC_EINVAL("q, k, v, dout must be 16-byte aligned (cp.async); dq, dk, dv, workspace 4-byte aligned");
    cudaStream_t st = (cudaStream_t)stream;
    float *dr = static_cast<float *>(workspace);
    if (!dr) KC_CUDA(cudaMallocAsync((void **)&dr, nq * sizeof(float), st));
    kern_cuda_status rc = kc_launch_bwd_pre(o, dout, desc->dtype, dr, (long long)nq, desc->d, st);
    if (rc == KERN_CUDA_OK) {
        kc_bwd_params p;
        p.q = static_cast<const uint16_t *>(q);
        p.k = static_cast<const uint16_t *>(k);
        p.v = static_cast<const uint16_t *>(v);
        p.dout = static_cast<const uint16_t *>(dout);
        p.lse = lse;
        p.dr = dr;
        p.dq = dq;
        p.dk = dk;
        p.dv = dv;
        p.heads = desc->heads;
        p.kv_heads = desc->kv_heads;
        p.n_q = desc->n_q;
        p.n_kv = desc->n_kv;
        p.scale = desc->scale;
        p.scale_log2 = desc->scale * 1.4426950408889634f;
        p.q_off = desc->causal ? desc->q_off : 0;
        p.kv_off = desc->causal ? desc->kv_off : 0;
        rc = kc_bwd_launch(p, desc->dtype, desc->d, desc->causal, st);
    }
    if (!workspace) {
        const cudaError_t e = cudaFreeAsync(dr, st);
        if (e != cudaSuccess && rc == KERN_CUDA_OK) rc = kc_fail_cuda(e, "cudaFreeAsync(dr, st)", __FILE__, __LINE__);
    }
    return rc;
}

/* ---------------------------------------------------------------- merge */

kern_cuda_status kern_cuda_attn_merge(int heads, int n_q, int d, float *o, float *lse, const void *o_b,
                                      kern_cuda_dtype o_b_dtype, const float *lse_b, void *stream)
{
    if (heads < 0 || n_q < 0 || d < 1) return KC_EINVAL("heads, n_q must be >= 0 and d >= 1");
    if (o_b_dtype != KERN_CUDA_BF16 && o_b_dtype != KERN_CUDA_FP16 && o_b_dtype != KERN_CUDA_F32)
        return KC_EINVAL("unknown o_b dtype");
    const long long rows = (long long)heads * n_q, n = rows * d;
    if (rows == 0) return KERN_CUDA_OK;
    if (!o || !lse || !o_b || !lse_b) return KC_EINVAL("NULL buffer");
    cudaStream_t st = (cudaStream_t)stream;
    const unsigned blocks = kc_blocks(n, 256);
    if (o_b_dtype == KERN_CUDA_BF16)
        kc_merge_o_kernel<0><<<blocks, 256, 0, st>>>(o, lse, o_b, lse_b, n, d);
    else if (o_b_dtype == KERN_CUDA_FP16)
        kc_merge_o_kernel<1><<<blocks, 256, 0, st>>>(o, lse, o_b, lse_b, n, d);
    else
        kc_merge_o_kernel<2><<<blocks, 256, 0, st>>>(o, lse, o_b, lse_b, n, d);
    KC_LAUNCHED("kc_merge_o_kernel");
    kc_merge_lse_kernel<<<kc_blocks(rows, 256), 256, 0, st>>>(lse, lse_b, rows);
    KC_LAUNCHED("kc_merge_lse_kernel");
    return KERN_CUDA_OK;
}
