/* attn_ref_tmpl.h: the body of the reference attention, included by
 * attn_ref.c once per (storage, accumulator) pair. One body for all three
 * flavours (float/float, float/double, double/double) so the float64 copy
 * that the finite-difference test proves is the very code the float entry
 * points run, not a look-alike.
 *
 * Before each inclusion define:
 *   REF_T    element type of the buffers (float or double)
 *   REF_ACC  accumulator type (float or double)
 *   REF_SFX  suffix for the generated static functions
 *   REF_EXP, REF_LOG  exp and log for REF_ACC
 * The generated functions assume a checked desc and non-NULL buffers for
 * non-empty tensors.
 */

#define REF_CAT2(a, b) a##_##b
#define REF_CAT(a, b) REF_CAT2(a, b)
#define REF_FN(name) REF_CAT(name, REF_SFX)

static REF_ACC REF_FN(ref_dot)(const REF_T *a, const REF_T *b, int d)
{
    REF_ACC s = 0;
    for (int c = 0; c < d; c++) s += (REF_ACC)a[c] * (REF_ACC)b[c];
    return s;
}

/* O, lse overwritten; one query row at a time: scores, max, exp, weighted sum. */
static kern_status REF_FN(ref_fwd)(const struct kern_attn_desc *ds,
                                   const REF_T *q, const REF_T *k, const REF_T *v,
                                   REF_T *o, REF_T *lse)
{
    const int d = ds->d, n_q = ds->n_q, n_kv = ds->n_kv;
    const int group = ds->heads / ds->kv_heads;
    const REF_ACC scale = (REF_ACC)ds->scale;
    REF_ACC *s = malloc(sizeof *s * (size_t)(n_kv > 0 ? n_kv : 1)); /* scores of one row */
    REF_ACC *acc = malloc(sizeof *acc * (size_t)d);                  /* one output row */
    if (!s || !acc) {
        free(s);
        free(acc);
        return KERN_ENOMEM;
    }
    for (int h = 0; h < ds->heads; h++) {
        const REF_T *kh = k + (size_t)(h / group) * n_kv * d;
        const REF_T *vh = v + (size_t)(h / group) * n_kv * d;
        for (int i = 0; i < n_q; i++) {
            if (ds->progress) ds->progress(ds->progress_arg);
            const size_t row = (size_t)h * n_q + i;
            const REF_T *qi = q + row * d;
            REF_T *oi = o + row * d;
            const int nvis = kern_keys_visible(ds, i);
            if (nvis == 0) {
                for (int c = 0; c < d; c++) oi[c] = 0;
                lse[row] = (REF_T)-INFINITY;
                continue;
            }
            REF_ACC m = (REF_ACC)-INFINITY;
            for (int j = 0; j < nvis; j++) {
                s[j] = scale * REF_FN(ref_dot)(qi, kh + (size_t)j * d, d);
                if (s[j] > m) m = s[j];
            }
            REF_ACC l = 0;
            for (int c = 0; c < d; c++) acc[c] = 0;
            for (int j = 0; j < nvis; j++) {
                const REF_ACC p = REF_EXP(s[j] - m);
                const REF_T *vj = vh + (size_t)j * d;
                l += p;
                for (int c = 0; c < d; c++) acc[c] += p * (REF_ACC)vj[c];
            }
            for (int c = 0; c < d; c++) oi[c] = (REF_T)(acc[c] / l);
            lse[row] = (REF_T)(m + REF_LOG(l));
        }
    }
    free(s);
    free(acc);
    return KERN_OK;
}

/* dQ, dK, dV accumulated (+=). With P = exp(S - lse), dP = dO V^T,
 * D = rowsum(dO o O), dS = P o (dP - D): dQ = scale dS K, dK = scale dS^T Q,
 * dV = P^T dO. Two passes, rows then keys, so that every output element is
 * one sum in REF_ACC added to the caller's buffer once: accumulating into
 * float storage key by key would make the float64 flavour no better than
 * float32, and it is the oracle. */
static kern_status REF_FN(ref_bwd)(const struct kern_attn_desc *ds,
                                   const REF_T *q, const REF_T *k, const REF_T *v,
                                   const REF_T *o, const REF_T *lse, const REF_T *dout,
                                   REF_T *dq, REF_T *dk, REF_T *dv)
{
    const int d = ds->d, n_q = ds->n_q, n_kv = ds->n_kv;
    const int group = ds->heads / ds->kv_heads;
    const REF_ACC scale = (REF_ACC)ds->scale;
    const size_t rows = (size_t)ds->heads * n_q;
    REF_ACC *D = malloc(sizeof *D * (rows > 0 ? rows : 1)); /* rowsum(dO o O) [heads][n_q] */
    REF_ACC *acc_a = malloc(sizeof *acc_a * (size_t)d);
    REF_ACC *acc_b = malloc(sizeof *acc_b * (size_t)d);
    if (!D || !acc_a || !acc_b) {
        free(D);
        free(acc_a);
        free(acc_b);
        return KERN_ENOMEM;
    }
    for (size_t r = 0; r < rows; r++) D[r] = REF_FN(ref_dot)(dout + r * d, o + r * d, d);

    /* Pass 1, per query row: dQ_i = scale * sum_j dS_ij K_j. */
    for (int h = 0; h < ds->heads; h++) {
        const REF_T *kh = k + (size_t)(h / group) * n_kv * d;
        const REF_T *vh = v + (size_t)(h / group) * n_kv * d;
        for (int i = 0; i < n_q; i++) {
            if (ds->progress) ds->progress(ds->progress_arg);
            const size_t row = (size_t)h * n_q + i;
            const REF_ACC lse_i = (REF_ACC)lse[row];
            if (lse_i == (REF_ACC)-INFINITY) continue; /* saw no key: no gradient */
            const REF_T *qi = q + row * d, *doi = dout + row * d;
            const int nvis = kern_keys_visible(ds, i);
            for (int c = 0; c < d; c++) acc_a[c] = 0;
            for (int j = 0; j < nvis; j++) {
                const REF_T *kj = kh + (size_t)j * d, *vj = vh + (size_t)j * d;
                const REF_ACC p = REF_EXP(scale * REF_FN(ref_dot)(qi, kj, d) - lse_i);
                const REF_ACC ds_ij = p * (REF_FN(ref_dot)(doi, vj, d) - D[row]);
                for (int c = 0; c < d; c++) acc_a[c] += ds_ij * (REF_ACC)kj[c];
            }
            REF_T *dqi = dq + row * d;
            for (int c = 0; c < d; c++) dqi[c] = (REF_T)((REF_ACC)dqi[c] + scale * acc_a[c]);
        }
    }

    /* Pass 2, per key: dK_j = scale * sum_i dS_ij Q_i, dV_j = sum_i P_ij dO_i,
     * summed over every query head of the kv head's group. */
    for (int hk = 0; hk < ds->kv_heads; hk++) {
        const REF_T *kh = k + (size_t)hk * n_kv * d, *vh = v + (size_t)hk * n_kv * d;
        for (int j = 0; j < n_kv; j++) {
            if (ds->progress) ds->progress(ds->progress_arg);
            const REF_T *kj = kh + (size_t)j * d, *vj = vh + (size_t)j * d;
            const int i_first = kern_first_row_seeing(ds, j);
            for (int c = 0; c < d; c++) acc_a[c] = acc_b[c] = 0;
            for (int h = hk * group; h < (hk + 1) * group; h++) {
                for (int i = i_first; i < n_q; i++) {
                    const size_t row = (size_t)h * n_q + i;
                    const REF_ACC lse_i = (REF_ACC)lse[row];
                    if (lse_i == (REF_ACC)-INFINITY) continue;
                    const REF_T *qi = q + row * d, *doi = dout + row * d;
                    const REF_ACC p = REF_EXP(scale * REF_FN(ref_dot)(qi, kj, d) - lse_i);
                    const REF_ACC ds_ij = p * (REF_FN(ref_dot)(doi, vj, d) - D[row]);
                    for (int c = 0; c < d; c++) {
                        acc_a[c] += ds_ij * (REF_ACC)qi[c];
                        acc_b[c] += p * (REF_ACC)doi[c];
                    }
                }
            }
            REF_T *dkj = dk + ((size_t)hk * n_kv + j) * d, *dvj = dv + ((size_t)hk * n_kv + j) * d;
            for (int c = 0; c < d; c++) {
                dkj[c] = (REF_T)((REF_ACC)dkj[c] + scale * acc_a[c]);
                dvj[c] = (REF_T)((REF_ACC)dvj[c] + acc_b[c]);
            }
        }
    }
    free(D);
    free(acc_a);
    free(acc_b);
    return KERN_OK;
}

#undef REF_FN
#undef REF_CAT
#undef REF_CAT2
