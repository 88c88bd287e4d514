/* attention_rows.c: the attention op's per-row passes (attention_rows.h), shared by its float32 products
 * (attention.c) and its bf16 ones (attention_bf16.c): the scaled, biased, masked softmax of a block of score rows and
 * its gradient. Rows are taken RG_LANES at a time (lanes.h) so that the row reductions run in key order, as libm's
 * scalar loop. */
#include "attention_rows.h"
#include "../tensor/lanes.h"
#include "../tensor/fastmath.h"
#include "../tensor/expf.h"

#include <string.h>
#include <tgmath.h>

/* One group of up to RG_LANES rows i0.. (before row `end`) of a T x S block (row stride S), as lanes.h takes it:
 * off[r] the offset of row i0 + r (the group's last row again for lanes past `end`, with n[r] = 0), n[r] its
 * visible keys. */
static void lane_rows(int i0, int end, int T, int S, bool causal, int64_t off[RG_LANES], int n[RG_LANES])
{
    for (int r = 0; r < RG_LANES; r++) {
        const int i = i0 + r < end ? i0 + r : end - 1;
        off[r] = (int64_t)i * S;
        n[r] = i0 + r < end ? visible_keys(causal, i, T, S) : 0;
    }
}

/* In-place scale (+ bias, when not NULL) and softmax of rows [i_lo, i_hi) of the T x S score block P (row stride
 * S; bias the same block's); entries past the visible prefix become 0 up to zeros_end (the whole row when it sees
 * no key). The scale, exp and normalization run along each row (RG_VECTORIZE; rg_expf, expf.h, is libm's expf bit
 * for bit; on a CPU with AVX-512F its row form, 16 at a time with a masked rest, whose bits are the same); the row
 * maxima and sums, reductions in key order, run on 16 rows at once (lanes.h), so the bits are those of libm's
 * scalar loop. */
RG_VECTORIZE void rg_attn_softmax_rows(rg_real *P, const rg_real *bias, rg_real scale, int i_lo, int i_hi, int T, int S,
                                       bool causal, int blk)
{
#if defined(RG_EXPF_AVX512) && !defined(RG_DOUBLE)
    const bool avx512 = rg_expf_avx512();
#endif
    for (int i0 = i_lo; i0 < i_hi; i0 += RG_LANES) {
        int64_t off[RG_LANES];
        int n[RG_LANES];
        rg_real m[RG_LANES], s[RG_LANES];
        lane_rows(i0, i_hi, T, S, causal, off, n);
        const int rows = i_hi - i0 < RG_LANES ? i_hi - i0 : RG_LANES;
        for (int r = 0; r < rows; r++) {
            rg_real *row = P + off[r];
            if (bias) {
                const rg_real *br = bias + off[r];
                for (int j = 0; j < n[r]; j++) row[j] = row[j] * scale + br[j];
            } else {
                for (int j = 0; j < n[r]; j++) row[j] *= scale;
            }
        }
        rg_lanes_max(P, off, n, m);
        for (int r = 0; r < rows; r++) {
            rg_real *row = P + off[r];
            const rg_real mr = m[r];
            if (mr == -INFINITY) { memset(row, 0, (size_t)S * sizeof(rg_real)); n[r] = 0; continue; } /* masked */
#ifdef RG_DOUBLE
            for (int j = 0; j < n[r]; j++) row[j] = exp(row[j] - mr);
#else
#ifdef RG_EXPF_AVX512
            if (avx512) {
                rg_expf_sub_avx512(row, n[r], mr);
                continue;
            }
#endif
            for (int j = 0; j < n[r]; j++) row[j] = rg_expf(row[j] - mr);
#endif
        }
        rg_lanes_sum(P, off, n, s);
        for (int r = 0; r < rows; r++) {
            if (m[r] == -INFINITY) continue;
            rg_real *row = P + off[r];
            const rg_real inv = 1 / s[r];
            for (int j = 0; j < n[r]; j++) row[j] *= inv;
            const int e = zeros_end(causal, blk, i0 + r, T, S);
            if (n[r] < e) memset(row + n[r], 0, (size_t)(e - n[r]) * sizeof(rg_real));
        }
    }
}

/* Rows [i_lo, i_hi) of dS [T, S] (row stride S, holding dP) = P * (dP - rowsum(dP * P)) (added to dbias when not
 * NULL), then scaled; entries past the visible prefix (P = 0) become 0 up to zeros_end. The row sums run in key
 * order, 16 rows at once
 * (lanes.h). */
RG_VECTORIZE void rg_attn_softmax_grad_rows(rg_real *restrict dS, rg_real *restrict db, const rg_real *restrict P,
                                              rg_real scale, int i_lo, int i_hi, int T, int S, bool causal, int blk)
{
    for (int i0 = i_lo; i0 < i_hi; i0 += RG_LANES) {
        int64_t off[RG_LANES];
        int n[RG_LANES]; /* P is 0 past the visible prefix */
        rg_real dots[RG_LANES];
        lane_rows(i0, i_hi, T, S, causal, off, n);
        rg_lanes_dot(dS, P, off, n, dots);
        const int rows = i_hi - i0 < RG_LANES ? i_hi - i0 : RG_LANES;
        for (int r = 0; r < rows; r++) {
            rg_real *ds = dS + off[r];
            const rg_real *pr = P + off[r], dot = dots[r];
            const int nr = n[r];
            if (db) {
                rg_real *dbr = db + off[r];
                for (int x = 0; x < nr; x++) {
                    rg_real g = pr[x] * (ds[x] - dot);
                    dbr[x] += g;
                    ds[x] = g * scale;
                }
            } else {
                for (int x = 0; x < nr; x++) ds[x] = pr[x] * (ds[x] - dot) * scale;
            }
            const int e = zeros_end(causal, blk, i0 + r, T, S);
            if (nr < e) memset(ds + nr, 0, (size_t)(e - nr) * sizeof(rg_real));
        }
    }
}
