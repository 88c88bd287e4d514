/* gemm.c: matrix products on libxsmm's JIT kernels or OpenBLAS (see gemm.h for which goes where and why).
 *
 * libxsmm is column-major: the row-major product C [M, N] = op(A) B is the column-major C^T [N, M] = B^T op(A)^T,
 * so the kernel gets (m, n, k) = (N, M, K), its "A" operand is our B (ld ldb) and its "B" operand our A (ld lda,
 * transposed there when trans_a). Kernels are cached per thread by shape (libxsmm also keeps a registry; the cache
 * spares its hashing on every call). */
#include "gemm.h"
#include "pool.h"

#include <cblas.h>
#include <libxsmm.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


static int use_blas_only = -1; /* RG_GEMM=blas */

static bool blas_only(void)
{
    if (use_blas_only < 0) {
        const char *e = getenv("RG_GEMM");
        use_blas_only = e && strcmp(e, "blas") == 0;
    }
    return use_blas_only;
}

/* OpenBLAS fell back to generic SSE kernels (an unknown CPU; blas.h): 5-10x slower than libxsmm's here. */
static int generic_core = -1;

static bool blas_is_generic(void)
{
    if (generic_core < 0) {
        static const char *const generic[] = {"prescott", "core2", "nehalem", "atom", "katmai", "unknown"};
        const char *core = openblas_get_corename();
        int g = 0;
        for (size_t i = 0; core && i < sizeof generic / sizeof *generic; i++)
            if (strcasecmp(core, generic[i]) == 0) g = 1;
        generic_core = g;
    }
    return generic_core;
}

bool rg_gemm_uses_xsmm(int M, int N, int K)
{
    if (blas_only()) return false;
    return blas_is_generic() || (N <= 256 && !(M > 256 && K > 1024));
}

bool rg_gemm_transposes_b(int M, int N, int K)
{
    return rg_gemm_uses_xsmm(M, N, K) && ((int64_t)N * K <= 65536 || blas_is_generic());
}

static void blas(bool ta, bool tb, int M, int N, int K, rg_real alpha, const rg_real *A, int lda, const rg_real *B,
                 int ldb, rg_real beta, rg_real *C, int ldc)
{
#ifdef RG_DOUBLE
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda,
                B, ldb, beta, C, ldc);
#else
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda,
                B, ldb, beta, C, ldc);
#endif
}

/* ---------------------------------------------------------------- kernel cache */

#define CACHE 16
static _Thread_local rg_mm cache[CACHE];
static _Thread_local int cache_next;

static void *dispatch(const rg_mm *k)
{
    libxsmm_blasint m = k->N, n = k->M, kk = k->K, lda = k->ldb, ldb = k->lda, ldc = k->ldc;
    int flags = k->trans_a ? LIBXSMM_GEMM_FLAG_TRANS_B : LIBXSMM_GEMM_FLAG_NONE;
#ifdef RG_DOUBLE
    const double one = 1, beta = k->beta;
    return (void *)libxsmm_dmmdispatch(m, n, kk, &lda, &ldb, &ldc, &one, &beta, &flags, NULL);
#else
    const float one = 1, beta = k->beta;
    return (void *)libxsmm_smmdispatch(m, n, kk, &lda, &ldb, &ldc, &one, &beta, &flags, NULL);
#endif
}

rg_mm rg_mm_get(bool trans_a, int M, int N, int K, int lda, int ldb, int ldc, rg_real beta)
{
    RG_ASSERT(beta == 0 || beta == 1, "rg_mm_get: beta %g (must be 0 or 1)", (double)beta);
    rg_mm key = {NULL, trans_a, M, N, K, lda, ldb, ldc, beta};
    if (!rg_gemm_uses_xsmm(M, N, K)) return key;
    for (int i = 0; i < CACHE; i++) {
        const rg_mm *c = &cache[i];
        if (c->fn && c->trans_a == trans_a && c->M == M && c->N == N && c->K == K && c->lda == lda &&
            c->ldb == ldb && c->ldc == ldc && c->beta == beta)
            return *c;
    }
    key.fn = dispatch(&key);
    if (key.fn) {
        cache[cache_next] = key;
        cache_next = (cache_next + 1) % CACHE;
    }
    return key;
}

static void mm_run(const rg_mm *k, const rg_real *A, const rg_real *B, rg_real *C);

void rg_mm_run(const rg_mm *k, const rg_real *A, const rg_real *B, rg_real *C)
{
    double t0 = rg_gemm_profile_enter();
    mm_run(k, A, B, C);
    rg_gemm_profile_leave(t0);
}

static void mm_run(const rg_mm *k, const rg_real *A, const rg_real *B, rg_real *C)
{
    if (!k->fn) {
        blas(k->trans_a, false, k->M, k->N, k->K, 1, A, k->lda, B, k->ldb, k->beta, C, k->ldc);
        return;
    }
#ifdef RG_DOUBLE
    ((libxsmm_dmmfunction)k->fn)(B, A, C);
#else
    ((libxsmm_smmfunction)k->fn)(B, A, C);
#endif
#if defined(__x86_64__) && !defined(__AVX__)
    /* libxsmm 1.17's AVX-512/AVX2 kernels return with the upper vector halves dirty; the library's own code is
     * SSE-encoded (no -march), and on these CPUs every SSE instruction after that pays a merge penalty (measured:
     * the step 25% slower, expf 4x). The kernel ran AVX instructions, so vzeroupper is available. */
    __asm__ volatile("vzeroupper" ::: "memory");
#endif
}

/* ---------------------------------------------------------------- rg_gemm */

static _Thread_local rg_real *scratch;     /* a transposed B; grows to the largest one, never shrinks */
static _Thread_local size_t scratch_cap;

/* B [N, K] (row stride ldb) transposed into the scratch buffer as [K, N] (row stride N). NULL if no memory. */
static const rg_real *transpose_b(const rg_real *B, int N, int K, int ldb)
{
    size_t need = (size_t)N * K;
    if (need > scratch_cap) {
        rg_real *s = realloc(scratch, need * sizeof(rg_real));
        if (!s) return NULL;
        scratch = s;
        scratch_cap = need;
    }
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++) scratch[(size_t)k * N + n] = B[(size_t)n * ldb + k];
    return scratch;
}

/* The rows [M * part / nparts, M * (part + 1) / nparts) of one libxsmm product (B untransposed). */
typedef struct {
    bool trans_a;
    int M, N, K, lda, ldb, ldc;
    rg_real beta;
    const rg_real *A, *B;
    rg_real *C;
} gemm_job;

static void gemm_part(void *p, int part, int nparts)
{
    const gemm_job *j = p;
    int m0 = (int)((int64_t)j->M * part / nparts), m1 = (int)((int64_t)j->M * (part + 1) / nparts);
    if (m1 <= m0) return;
    const rg_real *a = j->trans_a ? j->A + m0 : j->A + (int64_t)m0 * j->lda;
    rg_mm k = rg_mm_get(j->trans_a, m1 - m0, j->N, j->K, j->lda, j->ldb, j->ldc, j->beta);
    rg_mm_run(&k, a, j->B, j->C + (int64_t)m0 * j->ldc);
}

/* Products of at least this many FLOPs are split by rows over the pool's threads. */
#define PAR_FLOPS 4e6

/* C = op(A) op(B) + beta C (beta 0 or 1) on libxsmm kernels, split over the pool when large. False (nothing done)
 * if a kernel or the scratch memory is missing. */
static bool xsmm_product(bool trans_a, bool trans_b, int M, int N, int K, const rg_real *A, int lda, const rg_real *B,
                         int ldb, rg_real beta, rg_real *C, int ldc)
{
    if (trans_b) {
        if (!(B = transpose_b(B, N, K, ldb))) return false;
        ldb = N;
    }
    int nt = rg_pool_threads();
    if (nt > 1 && 2.0 * M * N * K >= PAR_FLOPS && M >= 16 * nt) {
        gemm_job j = {trans_a, M, N, K, lda, ldb, ldc, beta, A, B, C};
        rg_pool_run(gemm_part, &j, nt);
        return true;
    }
    rg_mm k = rg_mm_get(trans_a, M, N, K, lda, ldb, ldc, beta);
    if (!k.fn) return false;
    rg_mm_run(&k, A, B, C);
    return true;
}

static _Thread_local rg_real *product;     /* op(A) op(B) before alpha and beta are applied (generic OpenBLAS) */
static _Thread_local size_t product_cap;

/* Weight-gradient products (A transposed) with a long reduction and a large result go to oneDNN's float32 matmul
 * when it is loaded (dnnl.c). Measured here, 1 thread, thread CPU time, best of 5 x 200 calls (results/bench/history/):
 * [M x N x K] 64x256x2176 libxsmm 1233 us, OpenBLAS 689, oneDNN 552; 256x64x2176 690 / 623 / 576;
 * 64x256x1088 297 / 312 / 255; but 64x64x2176 103 / 173 / 125 and 30x64x2176 47 / 98 / 57 (libxsmm stays). A fixed
 * rule, not a timing at run time: the kernel of a product (and so the bits of a result) must not depend on the
 * machine's load. train_order's micro-batches (K <= 272) never reach it. */
#ifndef RG_DOUBLE
static bool dnnl_f32_wins(bool trans_a, bool trans_b, int M, int N, int K)
{
    return trans_a && !trans_b && K > 1024 && (int64_t)M * N >= 16384 && !blas_only() && rg_dnnl_available();
}
#endif

static void gemm(bool trans_a, bool trans_b, int M, int N, int K, rg_real alpha, const rg_real *A, int lda,
                 const rg_real *B, int ldb, rg_real beta, rg_real *C, int ldc);

void rg_gemm(bool trans_a, bool trans_b, int M, int N, int K, rg_real alpha, const rg_real *A, int lda,
             const rg_real *B, int ldb, rg_real beta, rg_real *C, int ldc)
{
    double t0 = rg_gemm_profile_enter();
    gemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    rg_gemm_profile_leave(t0);
}

static void gemm(bool trans_a, bool trans_b, int M, int N, int K, rg_real alpha, const rg_real *A, int lda,
                 const rg_real *B, int ldb, rg_real beta, rg_real *C, int ldc)
{
    const bool generic = blas_is_generic(), plain = alpha == 1 && (beta == 0 || beta == 1);
#ifndef RG_DOUBLE
    if (plain && dnnl_f32_wins(trans_a, trans_b, M, N, K)) {
        rg_gemm_dnnl_f32(trans_a, trans_b, M, N, K, A, lda, B, ldb, beta, C, ldc);
        return;
    }
#endif
    if (!trans_b ? rg_gemm_uses_xsmm(M, N, K) : rg_gemm_transposes_b(M, N, K)) {
        if (plain && xsmm_product(trans_a, trans_b, M, N, K, A, lda, B, ldb, beta, C, ldc)) return;
        if (!plain && generic) { /* OpenBLAS would run its slow kernels: the product here, then alpha and beta */
            size_t need = (size_t)M * N;
            if (need > product_cap) {
                rg_real *p = realloc(product, need * sizeof(rg_real));
                if (p) { product = p; product_cap = need; }
            }
            if (need <= product_cap && xsmm_product(trans_a, trans_b, M, N, K, A, lda, B, ldb, 0, product, N)) {
                for (int i = 0; i < M; i++) {
                    rg_real *c = C + (int64_t)i * ldc;
                    const rg_real *t = product + (int64_t)i * N;
                    if (beta == 0)
                        for (int j = 0; j < N; j++) c[j] = alpha * t[j];
                    else
                        for (int j = 0; j < N; j++) c[j] = alpha * t[j] + beta * c[j];
                }
                return;
            }
        }
    }
    blas(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
