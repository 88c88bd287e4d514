/* attention_bf16.c: attention's products in bf16 for src/nn/attention.c's op (the float32 build with oneDNN, when
 * rg_set_linear_precision is bf16: torch.autocast runs matmul and bmm in bf16). Shapes as attention.c: q [B, T,
 * H*hd], k and v [B, S, H*hd], P [B, H, T, S]; a tile is batch entries [b0, b0 + nb) by heads [h0, h0 + nh).
 *
 * The forward's two products (scores = Q K^T, O = P V) and the backward's four (dV = P^T dO, dP = dO V^T,
 * dQ = scale dS K, dK = scale dS^T Q) read bf16 operands and accumulate in float32 on oneDNN, one call
 * (rg_gemm_bf16_batch) per block for every (batch, head) pair of a tile: the heads are read in place through their
 * strides, K and V as K^T and V^T too (no transposes). One call per pair and block, as the float32 path makes them,
 * cost ~1 us each in oneDNN, more than a 16 x 16 block's work; batching spreads that over the tile's pairs. Causal
 * products run in blocks of BF16_BLOCK queries (keys) as the float32 path's, larger because of the per-call and
 * per-pair overhead left (results/bench/history/). The results (scores, O, dP, dQ, dK, dV) are float32, and so are the
 * softmax, its gradient and the saved P. The bf16 operands: q, k and v rounded once per step (in the forward, kept
 * for the backward), P's rows as the softmax has written them (kept for dV: the copy autocast saves for the P V
 * product's backward), dO per tile and dS by query block in the backward. */
#include "attention_bf16.h"

#include <string.h>

#ifndef RG_DOUBLE

/* A tile: batch entries [b0, b0 + nb) and heads [h0, h0 + nh) */
typedef struct {
    int b0, nb, h0, nh;
} attn_tile;

/* One batched product (g's operands at the tile's first pair); with no term (K 0) and beta 0, C's zeros, as
 * block_run */
static void tile_product(rg_bf16_batch g)
{
    if (g.K > 0 || g.beta != 0 || g.M <= 0 || g.N <= 0) {
        rg_gemm_bf16_batch(&g);
        return;
    }
    for (int i1 = 0; i1 < g.nb1; i1++)
        for (int i2 = 0; i2 < g.nb2; i2++)
            for (int r = 0; r < g.M; r++)
                memset(g.C + i1 * g.sc1 + i2 * g.sc2 + (int64_t)r * g.ldc, 0, (size_t)g.N * sizeof *g.C);
}

/* Batch entries per tile: about TILE_SCORES scores ([T, S] blocks of nh heads) per tile, at least one. Larger
 * tiles make fewer calls; a block of a tile (BF16_BLOCK rows of every pair) should stay in cache between its
 * product and the softmax (or its gradient) that reads it. */
#define TILE_SCORES (1 << 16)
int rg_attn_tile_batch(int nh, int T, int S)
{
    const int64_t per = (int64_t)nh * T * S;
    return per >= TILE_SCORES || per == 0 ? 1 : (int)(TILE_SCORES / per);
}

/* Rows [f, f + m) of the tile's P (or dS) blocks rounded to bf16, each pair's rows as far as the block's last row
 * is written (zeros_end; an earlier row's unwritten tail is converted but never read); P [.., T, S] with pair
 * strides s1, s2 */
static void tile_rows_bf16(uint16_t *dst, const rg_real *src, attn_tile t, int64_t s1, int64_t s2, int f, int m,
                           const attn_job *j)
{
    const int S = j->S, e = zeros_end(j->causal, j->blk, f + m - 1, j->T, S);
    for (int b = 0; b < t.nb; b++)
        for (int h = 0; h < t.nh; h++) {
            const int64_t o = b * s1 + h * s2 + (int64_t)f * S;
            rg_bf16_rows(dst + o, S, src + o, S, m, e);
        }
}

/* Forward of a tile, query block by query block: scores [m, n] = Q K^T into P, each pair's softmax of those rows
 * and their bf16 copy, O [m, hd] = P V */
static void forward_tile_bf16(const attn_job *j, attn_tile t)
{
    const int T = j->T, S = j->S, D = j->D, H = j->H, hd = j->hd;
    const int64_t TS = (int64_t)T * S, pt = ((int64_t)t.b0 * H + t.h0) * TS;
    const int64_t qo = (int64_t)t.b0 * T * D + t.h0 * hd, ko = (int64_t)t.b0 * S * D + t.h0 * hd;
    rg_real *P = (rg_real *)j->P;
    for (int x = 0; x < j->nqb; x++) {
        const int f = j->qb[x].first, m = j->qb[x].count, n = j->qb[x].n;
        tile_product((rg_bf16_batch){t.nb, t.nh, false, true, m, n, hd, j->q16 + qo + (int64_t)f * D,
                                     (int64_t)T * D, hd, D, j->k16 + ko, (int64_t)S * D, hd, D,
                                     P + pt + (int64_t)f * S, H * TS, TS, S, 0});
        for (int b = t.b0; b < t.b0 + t.nb; b++)
            for (int h = t.h0; h < t.h0 + t.nh; h++) {
                const int64_t bh = ((int64_t)b * H + h) * TS;
                const rg_real *bb = j->bias ? j->bias->data + ((j->bias_batched ? (int64_t)b * H : 0) + h) * TS : NULL;
                rg_attn_softmax_rows(P + bh, bb, j->scale, f, f + m, T, S, j->causal, j->blk);
            }
        tile_rows_bf16(j->p16 + pt, P + pt, t, H * TS, TS, f, m, j);
        tile_product((rg_bf16_batch){t.nb, t.nh, false, false, m, hd, n, j->p16 + pt + (int64_t)f * S, H * TS, TS,
                                     S, j->v16 + ko, (int64_t)S * D, hd, D, j->out->data + qo + (int64_t)f * D,
                                     (int64_t)T * D, hd, D, 0});
    }
    for (int b = t.b0; j->out16 && b < t.b0 + t.nb; b++) {
        const int64_t o = (int64_t)b * T * D + t.h0 * hd;
        rg_bf16_rows(j->out16 + o, D, j->out->data + o, D, T, t.nh * hd);
    }
}

/* A part of the forward: its batch entries [B part / nparts, B (part + 1) / nparts), every head, in tiles */
void rg_attn_forward_part_bf16(void *p, int part, int nparts)
{
    const attn_job *j = p;
    const int b0 = (int)((int64_t)j->B * part / nparts), b1 = (int)((int64_t)j->B * (part + 1) / nparts);
    const int nb = rg_attn_tile_batch(j->H, j->T, j->S);
    for (int b = b0; b < b1; b += nb)
        forward_tile_bf16(j, (attn_tile){b, b1 - b < nb ? b1 - b : nb, 0, j->H});
}


/* dV (+)= P^T dO, or dK (+)= (scale dS)^T Q, by key blocks: A the tile's P or dS (pair strides s1, s2; row
 * stride S), X dO or Q rounded (at the tile's first pair), C dV or dK */
static void key_blocks_bf16(const attn_job *j, attn_tile t, const uint16_t *A, int64_t s1, int64_t s2,
                            const uint16_t *X, rg_real *C, bool acc)
{
    const int T = j->T, S = j->S, D = j->D, hd = j->hd;
    for (int x = 0; x < j->nkb; x++) {
        const attn_block *kb = &j->kb[x];
        const int r = T - kb->n;
        tile_product((rg_bf16_batch){t.nb, t.nh, true, false, kb->count, hd, kb->n, A + (int64_t)r * S + kb->first,
                                     s1, s2, S, X + (int64_t)r * D, (int64_t)T * D, hd, D,
                                     C + (int64_t)kb->first * D, (int64_t)S * D, hd, D, acc});
    }
}

/* Reads n floats from p in order, for nothing but the cache: the softmax gradient's row sums read P's rows 16 at a
 * time, and no product has read P since the forward (dV reads its bf16 copy, where the float32 path's dV product
 * brings P in), so those 16-row loads wait on memory (perf, the large model's attention op: rg_lanes_dot 16% of it
 * cold, 3% after this pass, which costs 5%: one stream the prefetcher follows). Prefetch instructions before the
 * dP product did not help. */
static void warm_rows(const rg_real *p, int64_t n)
{
    rg_real sum = 0;
    for (int64_t x = 0; x < n; x += 64 / sizeof *p) sum += p[x];
    volatile rg_real sink = sum;
    (void)sink;
}

/* Backward of a tile with bf16 products, the order of backward_pair; dS [nb, nh, T, S] float32 and ds16 the same
 * count of bf16, the part's scratch */
static void backward_tile_bf16(const attn_job *j, attn_tile t, rg_real *dS, uint16_t *ds16)
{
    const int T = j->T, S = j->S, D = j->D, H = j->H, hd = j->hd;
    const int64_t TS = (int64_t)T * S, pt = ((int64_t)t.b0 * H + t.h0) * TS, ts = (int64_t)t.nh * TS;
    const int64_t qo = (int64_t)t.b0 * T * D + t.h0 * hd, ko = (int64_t)t.b0 * S * D + t.h0 * hd;
    for (int b = t.b0; b < t.b0 + t.nb; b++) {
        const int64_t o = (int64_t)b * T * D + t.h0 * hd;
        rg_bf16_rows(j->do16 + o, D, j->dO + o, D, T, t.nh * hd);
    }
    if (j->dv) key_blocks_bf16(j, t, j->p16 + pt, H * TS, TS, j->do16 + qo, j->dv + ko, j->acc_v);
    if (!(j->dq || j->dk || j->dbias)) return;
    for (int x = 0; x < j->nqb; x++) { /* dP [m, n] = dO V^T, then dS of those rows, pair by pair in b's order */
        const int f = j->qb[x].first, m = j->qb[x].count, n = j->qb[x].n;
        tile_product((rg_bf16_batch){t.nb, t.nh, false, true, m, n, hd, j->do16 + qo + (int64_t)f * D,
                                     (int64_t)T * D, hd, D, j->v16 + ko, (int64_t)S * D, hd, D, dS + (int64_t)f * S,
                                     ts, TS, S, 0});
        for (int b = 0; b < t.nb; b++)
            for (int h = 0; h < t.nh; h++) {
                const int64_t hh = t.h0 + h, bh = ((int64_t)(t.b0 + b) * H + hh) * TS;
                warm_rows(j->P + bh + (int64_t)f * S, (int64_t)m * S);
                rg_real *db = j->dbias ? j->dbias + ((j->bias_batched ? (int64_t)(t.b0 + b) * H : 0) + hh) * TS : NULL;
                rg_attn_softmax_grad_rows(dS + b * ts + h * TS, db, j->P + bh, j->scale, f, f + m, T, S, j->causal,
                                          j->blk);
            }
        tile_rows_bf16(ds16, dS, t, ts, TS, f, m, j);
    }
    for (int x = 0; j->dq && x < j->nqb; x++) { /* dQ [m, hd] (+)= (scale dS) K */
        const int f = j->qb[x].first, m = j->qb[x].count, n = j->qb[x].n;
        tile_product((rg_bf16_batch){t.nb, t.nh, false, false, m, hd, n, ds16 + (int64_t)f * S, ts, TS, S,
                                     j->k16 + ko, (int64_t)S * D, hd, D, j->dq + qo + (int64_t)f * D,
                                     (int64_t)T * D, hd, D, j->acc_q});
    }
    if (j->dk) key_blocks_bf16(j, t, ds16, ts, TS, j->q16 + qo, j->dk + ko, j->acc_k);
}

/* A part of the backward with bf16 products: its batch entries and every head, or (by_head) its heads and every
 * batch entry, in tiles of batch entries in order */
void rg_attn_backward_part_bf16(void *p, int part, int nparts)
{
    const attn_job *j = p;
    int b0 = 0, b1 = j->B, h0 = 0, h1 = j->H;
    if (j->by_head) {
        h0 = (int)((int64_t)j->H * part / nparts), h1 = (int)((int64_t)j->H * (part + 1) / nparts);
    } else {
        b0 = (int)((int64_t)j->B * part / nparts), b1 = (int)((int64_t)j->B * (part + 1) / nparts);
    }
    rg_real *dS = (rg_real *)(j->scratch16 + (size_t)part * j->part_bytes);
    const int nb = j->tile_nb;
    uint16_t *ds16 = (uint16_t *)(dS + (int64_t)nb * j->H * j->T * j->S);
    for (int b = b0; b < b1 && h1 > h0; b += nb)
        backward_tile_bf16(j, (attn_tile){b, b1 - b < nb ? b1 - b : nb, h0, h1 - h0}, dS, ds16);
}

#endif
