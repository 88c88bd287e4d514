/* gemm.h: the one place ropegrad calls BLAS. Row-major C = alpha op(A) op(B) + beta C with cblas_sgemm, or
 * cblas_dgemm in the float64 (RG_DOUBLE) build. Internal to the library. */
#ifndef RG_GEMM_H
#define RG_GEMM_H

#include <cblas.h>
#include "tensor.h"

/* C [M, N] = alpha * op(A) [M, K] * op(B) [K, N] + beta * C; lda/ldb/ldc are the row strides as stored. */
static inline void rg_gemm(bool trans_a, bool trans_b, int M, int N, int K, rg_real alpha, const rg_real *A,
                           int lda, const rg_real *B, int ldb, rg_real beta, rg_real *C, int ldc)
{
#ifdef RG_DOUBLE
    cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, M, N, K,
                alpha, A, lda, B, ldb, beta, C, ldc);
#else
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, M, N, K,
                alpha, A, lda, B, ldb, beta, C, ldc);
#endif
}

#endif
