/* hx_nccl_mem.c: the nccl backend's memory and events (see hx_nccl.h):
 * checked CUDA and kern_cuda calls, zeroed device buffers (freed by
 * hn_close), host <-> device copies in the run's 16-bit type, the event pool
 * for ring steps and the timed waits, and the index tables (layout maps)
 * that move tensors between the token side, the all-to-all buffers and the
 * attention side on the device. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "hx_nccl.h"

/* ------------------------------------------------------------- checking */

int hn_cuda_check(cudaError_t e, const char *what, const char *file, int line)
{
    if (e == cudaSuccess) return HX_OK;
    return hx_fail("CUDA: %s (%s:%d): %s: %s", what, hx_basename(file), line, cudaGetErrorName(e),
                   cudaGetErrorString(e));
}

int hn_k_check(kern_cuda_status s, const char *what, const char *file, int line)
{
    if (s == KERN_CUDA_OK) return HX_OK;
    return hx_fail("%s (%s:%d): %s: %s", what, hx_basename(file), line, kern_cuda_status_str(s),
                   kern_cuda_last_error());
}

/* ------------------------------------------------------------- memory */

void *hn_dalloc(hn *H, int64_t bytes, const char *what)
{
    void *p = NULL;
    if (bytes < 16) bytes = 16;
    if (H->nallocs == HN_MAX_ALLOCS) {
        hx_fail("internal: more than %d GPU buffers", HN_MAX_ALLOCS);
        return NULL;
    }
    const kern_cuda_status s = kern_cuda_malloc(&p, (size_t)bytes);
    if (s != KERN_CUDA_OK) {
        hx_fail("cannot allocate %lld bytes of GPU memory for %s: %s: %s", (long long)bytes, what,
                kern_cuda_status_str(s), kern_cuda_last_error());
        return NULL;
    }
    H->allocs[H->nallocs++] = p;
    /* zeroed before anything else touches it: cudaMemset runs on the legacy
     * stream, which does not order against the non-blocking compute stream */
    if (HN_CUDA(cudaMemset(p, 0, (size_t)bytes)) || HN_CUDA(cudaDeviceSynchronize())) return NULL;
    return p;
}

int hn_slab_carve(hx_ctx *c, const char *what, hx_carve_fn carve)
{
    hx_slab s = {.align = 256};
    carve(c, &s);
    void *base = hn_dalloc(c->be_state, (int64_t)s.used, what);
    if (!base) return HX_FAIL;
    hx_slab_start(&s, base);
    carve(c, &s);
    return hx_slab_carved(&s, what);
}

int hn_upload_ct(const hn *H, void *dst, const float *src, int64_t n)
{
    if (n <= 0) return HX_OK;
    uint16_t *tmp = hx_alloc(sizeof(uint16_t) * (size_t)n, "rounded upload");
    if (!tmp) return HX_FAIL;
    kern_cuda_host_round(src, tmp, (size_t)n, H->ct);
    const int rc = HN_K(kern_cuda_h2d(dst, tmp, sizeof(uint16_t) * (size_t)n));
    free(tmp);
    return rc;
}

int hn_download_ct(const hn *H, float *dst, const void *src, int64_t n)
{
    if (n <= 0) return HX_OK;
    uint16_t *tmp = hx_alloc(sizeof(uint16_t) * (size_t)n, "download");
    if (!tmp) return HX_FAIL;
    const int rc = HN_K(kern_cuda_d2h(tmp, src, sizeof(uint16_t) * (size_t)n));
    if (rc == HX_OK) kern_cuda_host_widen(tmp, dst, (size_t)n, H->ct);
    free(tmp);
    return rc;
}

static int upload_i64(hn *H, int64_t **dst, const int64_t *src, int64_t n, const char *what)
{
    if (!(*dst = hn_dalloc(H, n * (int64_t)sizeof(int64_t), what))) return HX_FAIL;
    return n > 0 ? HN_K(kern_cuda_h2d(*dst, src, sizeof(int64_t) * (size_t)n)) : HX_OK;
}

/* -------------------------------------------------------------- events */

int hn_ev_get(hn *H, cudaEvent_t *ev)
{
    if (H->used == H->npool) return hx_fail("internal: out of CUDA events (%d)", H->npool);
    *ev = H->pool[H->used++];
    return HX_OK;
}

int hn_wait_timed(hn *H, cudaEvent_t ev, double *acc)
{
    if (H->npend == H->maxpend) return hx_fail("internal: too many timed waits (%d)", H->maxpend);
    hn_pend *p = &H->pend[H->npend++];
    HX_TRY(hn_ev_get(H, &p->a));
    HX_TRY(hn_ev_get(H, &p->b));
    p->acc = acc;
    HX_TRY(HN_CUDA(cudaEventRecord(p->a, H->cs)));
    HX_TRY(HN_CUDA(cudaStreamWaitEvent(H->cs, ev, 0)));
    return HN_CUDA(cudaEventRecord(p->b, H->cs));
}

/* ---------------------------------------------------------------- maps */

/* the map from host tables; frees them (whether or not it succeeds) */
static int map_make(hn *H, hn_map *m, int64_t *doff, int64_t *soff, int64_t n, int nsrc, int d, const char *what)
{
    int rc = doff && soff ? HX_OK : HX_FAIL;
    if (rc == HX_OK) rc = upload_i64(H, &m->doff, doff, n, what);
    if (rc == HX_OK) rc = upload_i64(H, &m->soff, soff, n * nsrc, what);
    free(doff);
    free(soff);
    m->n = n;
    m->nsrc = nsrc;
    m->d = d;
    return rc;
}

int hn_map_run(const hn *H, const hn_map *m, int rev, void *dst, kern_cuda_dtype dt, const void *src,
               kern_cuda_dtype st)
{
    if (!m->doff) return hx_fail("internal: layout map used before it was built");
    if (rev && m->nsrc != 1) return hx_fail("internal: a summing layout map has no inverse");
    return HN_CUDA(hxk_gather(dst, dt, rev ? m->soff : m->doff, src, st, rev ? m->doff : m->soff, m->nsrc, m->n,
                              m->d, H->cs));
}

/* host index tables of n (and n * nsrc) offsets; NULL (reason printed) on failure */
static int64_t *offsets(int64_t n)
{
    return hx_alloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1), "layout map");
}

int hn_maps_build(hx_ctx *c)
{
    hn *H = c->be_state;
    const int64_t d = c->d, Rg = c->Rg;
    int64_t *dof, *sof;
    if (c->mode == ULY_EXEC_TOKENS || c->mode == ULY_EXEC_TP_SP) {
        /* token-major [Rg][Hh*d] <-> attention side, as tok_to_att / att_to_tok */
        for (int kv = 0; kv < 2; kv++) {
            const int64_t Hh = kv ? c->Hkv : c->Hq, ld = kv ? c->kc : c->qc, n = c->Rg * Hh;
            dof = offsets(n);
            sof = offsets(n);
            for (int64_t row = 0; dof && sof && row < c->Rg; row++)
                for (int64_t hh = 0; hh < Hh; hh++) {
                    dof[row * Hh + hh] = hx_att_off(&c->qs, c->g2a[row], hh, Hh, d);
                    sof[row * Hh + hh] = row * ld + hh * d;
                }
            HX_TRY(map_make(H, kv ? &H->m_tk : &H->m_tq, dof, sof, n, 1, (int)d, "token/attention map"));
        }
    } else if (c->mode == ULY_EXEC_A2A) {
        /* pack: GEMM-side [Rg][src_heads*d] -> send [peer][Rg][Htot/u][d], as uly_pack_heads */
        for (int kv = 0; kv < 2; kv++) {
            const int64_t Htot = kv ? c->kv_eff : c->gq, srch = kv ? c->gkv : c->gq, Hp = Htot / c->u;
            const int64_t rep = Htot / srch, n = c->u * Rg * Hp;
            dof = offsets(n);
            sof = offsets(n);
            int64_t i = 0;
            for (int64_t p = 0; dof && sof && p < c->u; p++)
                for (int64_t row = 0; row < Rg; row++)
                    for (int64_t j = 0; j < Hp; j++, i++) {
                        const int64_t e = p * Hp + j;
                        dof[i] = ((p * Rg + row) * Hp + j) * d;
                        sof[i] = row * srch * d + (e / rep) * d;
                    }
            HX_TRY(map_make(H, kv ? &H->m_pk : &H->m_pq, dof, sof, n, 1, (int)d, "all-to-all pack map"));
        }
        /* unpack dK, dV: receive [head group][Rg][kv_eff/u][d] -> [Rg][gkv*d],
         * the replicas of a KV head summed into it, as uly_unpack_heads */
        {
            const int64_t Htot = c->kv_eff, Hp = Htot / c->u, sk = c->gkv, rep = Htot / sk, n = Rg * sk;
            dof = offsets(n);
            sof = offsets(n * rep);
            for (int64_t row = 0; dof && sof && row < Rg; row++)
                for (int64_t sh = 0; sh < sk; sh++) {
                    const int64_t i = row * sk + sh;
                    dof[i] = row * sk * d + sh * d;
                    for (int64_t t = 0; t < rep; t++) {
                        const int64_t e = sh * rep + t, q = e / Hp, j = e % Hp;
                        sof[i * rep + t] = ((q * Rg + row) * Hp + j) * d;
                    }
                }
            HX_TRY(map_make(H, &H->m_uk, dof, sof, n, (int)rep, (int)d, "all-to-all unpack map"));
        }
        /* receive [peer][Rg][Hh][d] <-> attention side, as uly_recv_to_att / uly_att_to_send */
        for (int kv = 0; kv < 2; kv++) {
            const int64_t Hh = kv ? c->Hkv : c->Hq, n = c->u * Rg * Hh;
            dof = offsets(n);
            sof = offsets(n);
            for (int64_t pr = 0; dof && sof && pr < c->u * Rg; pr++)
                for (int64_t j = 0; j < Hh; j++) {
                    dof[pr * Hh + j] = hx_att_off(&c->qs, c->uly_map[pr], j, Hh, d);
                    sof[pr * Hh + j] = (pr * Hh + j) * d;
                }
            HX_TRY(map_make(H, kv ? &H->m_ak : &H->m_aq, dof, sof, n, 1, (int)d, "all-to-all/attention map"));
        }
    } else {
        return hx_fail("internal: the nccl backend has no layout for mode %s", uly_exec_mode_name(c->mode));
    }
    /* embedding: this rank's token ids, as buffers_setup draws them */
    const int64_t n = c->b * c->plan.act_tokens, h = c->h;
    dof = offsets(n);
    sof = offsets(n);
    for (int64_t i = 0; dof && sof && i < n; i++) {
        dof[i] = i * h;
        sof[i] = hx_token_id(c, i) * h;
    }
    return map_make(H, &H->m_emb, dof, sof, n, 1, (int)h, "embedding map");
}
