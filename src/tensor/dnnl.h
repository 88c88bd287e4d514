/* dnnl.h: products on oneDNN (dnnl.c): bf16 operands with float32 accumulation, and float32 products where oneDNN
 * wins (gemm.c chooses). Internal to the library; gemm.h, which calls it, includes it for its users. */
#ifndef RG_DNNL_H
#define RG_DNNL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tensor.h"

/* True when bf16 products can run: this build has oneDNN (-DRG_HAVE_DNNL, float32 build) and oneDNN reports a CPU
 * ISA with AVX512_BF16 (AMX implies it). Otherwise false with the reason written to why (n bytes; why may be NULL). */
bool rg_bf16_supported(char *why, size_t n);
/* "AMX", "AVX512_BF16" or "none": the best bf16 instructions oneDNN reports. */
const char *rg_bf16_isa(void);
/* True when this build has oneDNN (float32 products through rg_gemm_dnnl_f32 are then available). */
bool rg_dnnl_available(void);
/* dst[i] = src[i] rounded to bfloat16 (round to nearest even, as oneDNN and PyTorch; NaN stays NaN). */
void rg_bf16_from_float(uint16_t *restrict dst, const float *restrict src, int64_t n);
/* The same rounding of a rows x cols block on the calling thread (no pool): dst[r * ldd + j] = bf16(src[r * lds + j]),
 * VCVTNEPS2BF16 where the CPU has AVX512_BF16 (the tails masked), rg_bf16_round elsewhere. For the passes that write
 * an output's bf16 copy as they produce it, a row or a head's block at a time while it is in cache. */
void rg_bf16_rows(uint16_t *restrict dst, int64_t ldd, const rg_real *restrict src, int64_t lds, int rows, int cols);
float rg_bf16_to_float(uint16_t h);
/* Row-major C [M, N] (float32) = op(A) op(B) + beta C (beta 0 or 1) with bf16 operands and float32 accumulation,
 * on oneDNN's matmul (one primitive per shape, cached); split by rows over the pool when large. Aborts when
 * rg_bf16_supported is false. */
void rg_gemm_bf16(bool trans_a, bool trans_b, int M, int N, int K, const uint16_t *A, int lda, const uint16_t *B,
                  int ldb, float beta, float *C, int ldc);
/* Batched bf16 products on the calling thread, never split over the pool (for callers that are already a part of
 * a pool loop): for every (i1, i2) < (nb1, nb2), C_i [M, N] = op(A_i) op(B_i) + beta C_i (beta 0 or 1), where A_i
 * is at A + i1 sa1 + i2 sa2 (elements), and so on; one oneDNN call, one primitive per shape and strides (cached).
 * Attention's per-(batch, head) products in bf16: heads are strided column blocks, read in place. Nothing is done
 * when a dim is 0. */
typedef struct {
    int nb1, nb2;
    bool ta, tb;
    int M, N, K;
    const uint16_t *A;
    int64_t sa1, sa2;
    int lda;
    const uint16_t *B;
    int64_t sb1, sb2;
    int ldb;
    float *C;
    int64_t sc1, sc2;
    int ldc;
    float beta;
} rg_bf16_batch;
void rg_gemm_bf16_batch(const rg_bf16_batch *g);
/* C [M, N] = op(A) op(B) + bias (a float32 row [N] added to every row, by oneDNN's matmul bias: no broadcast pass
 * and no read of C), otherwise as rg_gemm_bf16 with beta 0: a bf16 Linear's forward with its bias. */
void rg_gemm_bf16_bias(bool trans_a, bool trans_b, int M, int N, int K, const uint16_t *A, int lda, const uint16_t *B,
                       int ldb, const float *bias, float *C, int ldc);
/* The same product in float32 on oneDNN (aborts when rg_dnnl_available is false). */
void rg_gemm_dnnl_f32(bool trans_a, bool trans_b, int M, int N, int K, const float *A, int lda, const float *B,
                      int ldb, float beta, float *C, int ldc);

#endif
