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

void hn_cuda_check(cudaError_t e, const char *what, const char *file, int line)
{
    if (e != cudaSuccess)
        hx_die("CUDA: %s (%s:%d): %s: %s", what, hx_basename(file), line, cudaGetErrorName(e), cudaGetErrorString(e));
}

void hn_k_check(kern_cuda_status s, const char *what, const char *file, int line)
{
    if (s != KERN_CUDA_OK)
        hx_die("%s (%s:%d): %s: %s", what, hx_basename(file), line, kern_cuda_status_str(s), kern_cuda_last_error());
}

/* ------------------------------------------------------------- memory */

void *hn_dalloc(hn *H, int64_t bytes, const char *what)
{
    void *p = NULL;
    if (bytes < 16) bytes = 16;
    const kern_cuda_status s = kern_cuda_malloc(&p, (size_t)bytes);
    if (s != KERN_CUDA_OK)
        hx_die("cannot allocate %lld bytes of GPU memory for %s: %s: %s", (long long)bytes, what,
               kern_cuda_status_str(s), kern_cuda_last_error());
    /* zeroed before anything else touches it: cudaMemset runs on the legacy
     * stream, which does not order against the non-blocking compute stream */
    HN_CUDA(cudaMemset(p, 0, (size_t)bytes));
    HN_CUDA(cudaDeviceSynchronize());
    if (H->nallocs == HN_MAX_ALLOCS) hx_die("internal: more than %d GPU buffers", HN_MAX_ALLOCS);
    H->allocs[H->nallocs++] = p;
    return p;
}

void *hn_dct(hn *H, int64_t n, const char *what) { return hn_dalloc(H, n * H->es, what); }
float *hn_df32(hn *H, int64_t n, const char *what) { return hn_dalloc(H, n * (int64_t)sizeof(float), what); }

void hn_upload_ct(const hn *H, void *dst, const float *src, int64_t n)
{
    if (n <= 0) return;
    uint16_t *tmp = hx_alloc(sizeof(uint16_t) * (size_t)n, "rounded upload");
    kern_cuda_host_round(src, tmp, (size_t)n, H->ct);
    HN_K(kern_cuda_h2d(dst, tmp, sizeof(uint16_t) * (size_t)n));
    free(tmp);
}

void hn_download_ct(const hn *H, float *dst, const void *src, int64_t n)
{
    if (n <= 0) return;
    uint16_t *tmp = hx_alloc(sizeof(uint16_t) * (size_t)n, "download");
    HN_K(kern_cuda_d2h(tmp, src, sizeof(uint16_t) * (size_t)n));
    kern_cuda_host_widen(tmp, dst, (size_t)n, H->ct);
    free(tmp);
}

static int64_t *upload_i64(hn *H, const int64_t *src, int64_t n, const char *what)
{
    int64_t *p = hn_dalloc(H, n * (int64_t)sizeof(int64_t), what);
    if (n > 0) HN_K(kern_cuda_h2d(p, src, sizeof(int64_t) * (size_t)n));
    return p;
}

/* -------------------------------------------------------------- events */

cudaEvent_t hn_ev_get(hn *H)
{
    if (H->used == H->npool) hx_die("internal: out of CUDA events (%d)", H->npool);
    return H->pool[H->used++];
}

void hn_wait_timed(hn *H, cudaEvent_t ev, double *acc)
{
    if (H->npend == H->maxpend) hx_die("internal: too many timed waits (%d)", H->maxpend);
    hn_pend *p = &H->pend[H->npend++];
    p->a = hn_ev_get(H);
    p->b = hn_ev_get(H);
    p->acc = acc;
    HN_CUDA(cudaEventRecord(p->a, H->cs));
    HN_CUDA(cudaStreamWaitEvent(H->cs, ev, 0));
    HN_CUDA(cudaEventRecord(p->b, H->cs));
}

/* ---------------------------------------------------------------- maps */

static void map_make(hn *H, hn_map *m, const int64_t *doff, const int64_t *soff, int64_t n, int nsrc, int d,
                     const char *what)
{
    m->doff = upload_i64(H, doff, n, what);
    m->soff = upload_i64(H, soff, n * nsrc, what);
    m->n = n;
    m->nsrc = nsrc;
    m->d = d;
}

void hn_map_run(const hn *H, const hn_map *m, int rev, void *dst, kern_cuda_dtype dt, const void *src,
                kern_cuda_dtype st)
{
    if (!m->doff) hx_die("internal: layout map used before it was built");
    if (rev && m->nsrc != 1) hx_die("internal: a summing layout map has no inverse");
    HN_CUDA(hxk_gather(dst, dt, rev ? m->soff : m->doff, src, st, rev ? m->doff : m->soff, m->nsrc, m->n, m->d,
                       H->cs));
}

void hn_maps_build(hx_ctx *c)
{
    hn *H = c->be_state;
    const int64_t d = c->d, Rt = c->Rt;
    int64_t *dof, *sof;
    if (c->mode == ULY_EXEC_TOKENS) {
        /* token-major [Rg][Hh*d] <-> attention side, as tok_to_att / att_to_tok */
        for (int kv = 0; kv < 2; kv++) {
            const int64_t Hh = kv ? c->Hkv : c->Hq, ld = kv ? c->kc : c->qc, n = c->Rg * Hh;
            dof = hx_alloc(sizeof(int64_t) * (size_t)n, "map");
            sof = hx_alloc(sizeof(int64_t) * (size_t)n, "map");
            for (int64_t row = 0; row < c->Rg; row++)
                for (int64_t hh = 0; hh < Hh; hh++) {
                    dof[row * Hh + hh] = hx_att_off(&c->qs, c->g2a[row], hh, Hh, d);
                    sof[row * Hh + hh] = row * ld + hh * d;
                }
            map_make(H, kv ? &H->m_tk : &H->m_tq, dof, sof, n, 1, (int)d, "token/attention map");
            free(dof);
            free(sof);
        }
    } else if (c->mode == ULY_EXEC_A2A) {
        /* pack: token-major [Rt][src_heads*d] -> send [peer][Rt][Htot/u][d], as uly_pack_heads */
        for (int kv = 0; kv < 2; kv++) {
            const int64_t Htot = kv ? c->kv_eff : c->a, srch = kv ? c->k : c->a, Hp = Htot / c->u;
            const int64_t rep = Htot / srch, n = c->u * Rt * Hp;
            dof = hx_alloc(sizeof(int64_t) * (size_t)n, "map");
            sof = hx_alloc(sizeof(int64_t) * (size_t)n, "map");
            int64_t i = 0;
            for (int64_t p = 0; p < c->u; p++)
                for (int64_t row = 0; row < Rt; row++)
                    for (int64_t j = 0; j < Hp; j++, i++) {
                        const int64_t e = p * Hp + j;
                        dof[i] = ((p * Rt + row) * Hp + j) * d;
                        sof[i] = row * srch * d + (e / rep) * d;
                    }
            map_make(H, kv ? &H->m_pk : &H->m_pq, dof, sof, n, 1, (int)d, "all-to-all pack map");
            free(dof);
            free(sof);
        }
        /* unpack dK, dV: receive [head group][Rt][kv_eff/u][d] -> [Rt][k*d],
         * the replicas of a KV head summed into it, as uly_unpack_heads */
        {
            const int64_t Htot = c->kv_eff, Hp = Htot / c->u, rep = Htot / c->k, n = Rt * c->k;
            dof = hx_alloc(sizeof(int64_t) * (size_t)n, "map");
            sof = hx_alloc(sizeof(int64_t) * (size_t)(n * rep), "map");
            for (int64_t row = 0; row < Rt; row++)
                for (int64_t sh = 0; sh < c->k; sh++) {
                    const int64_t i = row * c->k + sh;
                    dof[i] = row * c->k * d + sh * d;
                    for (int64_t t = 0; t < rep; t++) {
                        const int64_t e = sh * rep + t, q = e / Hp, j = e % Hp;
                        sof[i * rep + t] = ((q * Rt + row) * Hp + j) * d;
                    }
                }
            map_make(H, &H->m_uk, dof, sof, n, (int)rep, (int)d, "all-to-all unpack map");
            free(dof);
            free(sof);
        }
        /* receive [peer][Rt][Hh][d] <-> attention side, as uly_recv_to_att / uly_att_to_send */
        for (int kv = 0; kv < 2; kv++) {
            const int64_t Hh = kv ? c->Hkv : c->Hq, n = c->u * Rt * Hh;
            dof = hx_alloc(sizeof(int64_t) * (size_t)n, "map");
            sof = hx_alloc(sizeof(int64_t) * (size_t)n, "map");
            for (int64_t pr = 0; pr < c->u * Rt; pr++)
                for (int64_t j = 0; j < Hh; j++) {
                    dof[pr * Hh + j] = hx_att_off(&c->qs, c->uly_map[pr], j, Hh, d);
                    sof[pr * Hh + j] = (pr * Hh + j) * d;
                }
            map_make(H, kv ? &H->m_ak : &H->m_aq, dof, sof, n, 1, (int)d, "all-to-all/attention map");
            free(dof);
            free(sof);
        }
    } else {
        hx_die("internal: the nccl backend has no layout for mode %s", uly_exec_mode_name(c->mode));
    }
    /* embedding: this rank's token ids, as buffers_setup draws them */
    const int64_t n = c->b * c->plan.act_tokens, h = c->h;
    dof = hx_alloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1), "map");
    sof = hx_alloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1), "map");
    for (int64_t i = 0; i < n; i++) {
        dof[i] = i * h;
        sof[i] = hx_token_id(c, i) * h;
    }
    map_make(H, &H->m_emb, dof, sof, n, 1, (int)h, "embedding map");
    free(dof);
    free(sof);
}

