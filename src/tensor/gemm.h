/* gemm.h: the one place ropegrad calls matrix-product libraries. Row-major C = alpha op(A) op(B) + beta C.
 * Internal to the library.
 *
 * Kernels: small and medium products run on libxsmm 1.17's JIT kernels (Debian libxsmm-dev: code generated for the
 * CPU that CPUID reports, AVX-512 or AVX2, so no OPENBLAS_CORETYPE is needed for them); the rest on OpenBLAS
 * (cblas_sgemm, or cblas_dgemm in the float64 build, -DRG_DOUBLE, with libxsmm's double kernels likewise). Which
 * product goes where (rg_gemm_uses_xsmm) follows measurements on the training step's shapes (results/bench/history/):
 * libxsmm was 1.1-1.5x faster for every shape with N <= 256 except when both M > 256 and K > 1024, and equal or
 * slower on the large model's 1024-wide products. libxsmm 1.17 JIT kernels need alpha = 1, beta 0 or 1, and an
 * untransposed B in row-major terms; rg_gemm transposes a small B (N*K <= 65536) into a per-thread scratch buffer
 * and sends everything else to OpenBLAS. When OpenBLAS runs its generic SSE kernels (a CPU newer than the
 * installed OpenBLAS; blas.h), EVERY product goes to libxsmm (any size, alpha and beta applied after the product),
 * so a program gets AVX-512/AVX2 kernels with no OPENBLAS_CORETYPE and no re-execution. Products of 4 MFLOP or
 * more are split by rows over the library's thread pool (pool.h). Weight-gradient products with K > 1024 and
 * M*N >= 16384 run on oneDNN's float32 matmul when libdnnl.so.2 loads (gemm.c, dnnl_f32_wins: 1.1-2.2x faster
 * than libxsmm there). Setting RG_GEMM=blas in the environment sends every product to OpenBLAS (read once, for
 * A/B measurements). */
#ifndef RG_GEMM_H
#define RG_GEMM_H

#include <stdbool.h>
#include <stdint.h>
#include "tensor.h"
#include "dnnl.h"         /* oneDNN's products: below this file, which calls them; here for this file's users */
#include "gemm_profile.h" /* product time, below both */

/* C [M, N] = alpha * op(A) [M, K] * op(B) [K, N] + beta * C; lda/ldb/ldc are the row strides as stored. */
void rg_gemm(bool trans_a, bool trans_b, int M, int N, int K, rg_real alpha, const rg_real *A, int lda,
             const rg_real *B, int ldb, rg_real beta, rg_real *C, int ldc);

/* A kernel for one fixed product shape, looked up once (rg_mm_get) and run many times (rg_mm_run): for loops of
 * equal-shaped products such as attention's per-(batch, head) products. */
typedef struct {
    void *fn;                 /* the libxsmm kernel, or NULL: rg_mm_run then calls OpenBLAS */
    bool trans_a;
    int M, N, K, lda, ldb, ldc;
    rg_real beta;
} rg_mm;

/* C = op(A) B + beta C (alpha 1, B untransposed, beta 0 or 1; aborts otherwise). */
rg_mm rg_mm_get(bool trans_a, int M, int N, int K, int lda, int ldb, int ldc, rg_real beta);
void rg_mm_run(const rg_mm *k, const rg_real *A, const rg_real *B, rg_real *C);

/* True if rg_gemm sends this product (alpha 1, beta 0 or 1, B untransposed) to libxsmm. */
bool rg_gemm_uses_xsmm(int M, int N, int K);
/* True if rg_gemm(false, true, M, N, K, alpha 1, beta 0 or 1, ...) transposes B [N, K] into scratch and runs
 * libxsmm on it: the caller may pass a B^T it keeps instead (rg_linear_product caches a weight's transpose). */
bool rg_gemm_transposes_b(int M, int N, int K);

/* Linear's products in the precision of rg_set_linear_precision (ops_matmul.c): y [rows, out] = x W^T + beta y
 * (beta 0 or 1) for x [..., in], W [out, in]; and the backward's dx (+)= dy W (written when x's gradient buffer is
 * fresh) and dW += dy^T x, for those of x and W that require a gradient (dy [rows, out]). In bf16, dy16 is dy
 * already rounded (rg_bf16_rows) by the pass that wrote or read dy, or NULL to have it converted here. */
void rg_linear_product(rg_tensor *x, rg_tensor *w, rg_real beta, rg_real *y);
void rg_linear_grads(rg_ctx *c, rg_tensor *x, rg_tensor *w, const rg_real *dy, const uint16_t *dy16);
/* When Linear's products run in bf16: the memory of t's bf16 copy [t->numel], claimed for t's present data, for
 * the pass producing t to fill (every element, rg_bf16_rows of its value) before t is read, so that a Linear
 * taking t does not convert it again ("each activation once, where it is produced"). NULL in fp32, in the float64
 * build, or when the copy is already current: then the producer writes nothing more. As every derived copy, it
 * holds for t's data, version and derivation epoch (tensor.h rg_derived): a pass writing into t afterwards within the
 * same step bumps t's version (rg_tensor_bump_version), else a Linear reads the producer's values. */
uint16_t *rg_linear_bf16_slot(rg_tensor *t);
/* When Linear (x [..., in], W [out, in]) runs in bf16 and its backward has a product to run (x or W requires a
 * gradient): arena memory (c's) for the bf16 copy of its output gradient dy [n values], for the backward pass that
 * writes or reads dy (the bias gradient's, a fused op's) to fill with rg_bf16_rows as it goes and hand to
 * rg_linear_grads as dy16. NULL otherwise (fp32, the float64 build, no product): rg_linear_grads gets dy16 NULL. */
uint16_t *rg_linear_grad_bf16(rg_ctx *c, const rg_tensor *x, const rg_tensor *w, int64_t n);

#endif
