/* attention_rows.h: internal to the attention op (src/nn/attention.c, and its bf16 products in
 * src/nn/attention_bf16.c): one call's job, its blocks, the causal bounds, and the per-row softmax passes both
 * files use (attention_rows.c, below both). Shapes as
 * attention.c: q [B, T, H*hd], k and v [B, S, H*hd], P [B, H, T, S]. Not installed. */
#ifndef RG_ATTENTION_ROWS_H
#define RG_ATTENTION_ROWS_H

#include "nn.h"
#include "../tensor/gemm.h"

/* Keys of row i that the causal mask leaves (a prefix of the row): clamp(i + S - T + 1, 0, S); S when not causal. */
static inline int visible_keys(bool causal, int i, int T, int S)
{
    if (!causal) return S;
    int n = i + S - T + 1;
    return n < 0 ? 0 : n > S ? S : n;
}

/* Causal products run in blocks of this many queries (or keys): a multiple of RG_LANES, so a block's softmax rows
 * group into lanes as the whole block's do. 16 and 32 ran alike on the large model's T = 130, 16 faster on T = 34
 * (results/bench/history/). */
#define BLOCK 16
/* The same with bf16 products (attention_bf16.c), one oneDNN call per block for many (batch, head) pairs: oneDNN
 * has a cost per call and per pair that small blocks multiply (the attention op alone at T = 34 was 2-3.5x slower
 * in blocks of 16 or 32 than in one block of 64; at T = 130 1.3-1.5x in blocks of 16, 1.0-1.2x in 32;
 * results/bench/history/). With 64, train_order's training lengths (T <= 35) are one block. */
#define BF16_BLOCK 64

/* The end of the zeros row i of P (and of dS) needs past its visible keys, with blocks of blk rows (BLOCK, or
 * BF16_BLOCK with bf16 products): the products read it up to its query block's key count
 * (S and P V, dP and dQ) and up to the end of the last key block it sees (dV and dK); nothing reads further, so the
 * masked rest of a long row is never written. */
static inline int zeros_end(bool causal, int blk, int i, int T, int S)
{
    if (!causal) return S;
    const int last = i / blk * blk + blk - 1, vis = visible_keys(causal, i, T, S);
    const int nq = visible_keys(causal, last < T ? last : T - 1, T, S), nk = (vis + blk - 1) / blk * blk;
    const int e = nq > nk ? nq : nk;
    return e < S ? e : S;
}

/* A block of queries [first, first + count) with the n keys its last row sees (the causal prefix of every row in
 * it; S when not causal), or of keys [first, first + count) with the n queries [T - n, T) that see its first key;
 * mm[0] and mm[1] its two products' kernels. */
typedef struct {
    int first, count, n;
    rg_mm mm[2];
} attn_block;

/* One attention call's operands and kernels, shared by the parts of a parallel loop over the (b, h) pairs. */
typedef struct {
    const rg_tensor *q, *k, *v, *bias;
    rg_tensor *out;
    uint16_t *out16;             /* out's bf16 copy, written head block by head block (rg_linear_bf16_slot), or NULL */
    const rg_real *P;            /* [B, H, T, S] (one [T, S] block when not recording: forward only) */
    rg_real *dq, *dk, *dv, *dbias, *scratch;
    const rg_real *dO;
    int B, T, S, D, H, hd;
    bool causal, bias_batched, rec;
    bool by_head;                /* backward: the parts split the heads (a bias gradient shared by the batch) */
    rg_real scale;
    attn_block *qb, *kb;         /* query blocks (S / dP, then O / dQ) and, backward, key blocks (dV, dK) */
    int nqb, nkb;
    int blk;                     /* rows of a causal block: BLOCK, or BF16_BLOCK with bf16 products */
    bool bf16;                   /* the products with bf16 operands on oneDNN (attention_bf16.c) */
    uint16_t *q16, *k16, *v16;   /* bf16: q, k, v rounded ([B, T, D], [B, S, D]) and P [B, H, T, S], */
    uint16_t *p16, *do16;        /* kept for the backward; dO rounded [B, T, D] */
    char *scratch16;             /* bf16 backward: each part's dS scratch, part_bytes apart */
    size_t part_bytes;
    int tile_nb;                 /* bf16 backward: batch entries per tile */
    bool acc_q, acc_k, acc_v;    /* bf16 backward: dQ, dK, dV accumulate (their buffers were not fresh) */
} attn_job;

/* Rows [i_lo, i_hi) of a pair's softmax (scale, bias, mask, zeros to zeros_end) and of its gradient into dS (added
 * to db when not NULL), as attention.c's float32 path runs them (attention_rows.c) */
void rg_attn_softmax_rows(rg_real *P, const rg_real *bias, rg_real scale, int i_lo, int i_hi, int T, int S,
                          bool causal, int blk);
void rg_attn_softmax_grad_rows(rg_real *dS, rg_real *db, const rg_real *P, rg_real scale, int i_lo, int i_hi, int T,
                               int S, bool causal, int blk);


#endif
