/* test_blas.c: the kernels rg_gemm runs compute sgemm correctly: libxsmm's JIT kernels (alpha 1, beta 0 or 1; a
 * transposed B through the scratch transpose) and the OpenBLAS kernels rg_blas_prefer_fast_kernels selects (the
 * binary re-executes itself like train_order does; alpha 0.5 always goes to OpenBLAS). Compares rg_gemm (every
 * transpose combination, odd sizes, row strides larger than the width as the attention op uses) with a
 * double-precision triple loop. */
#include "common.h"
#include "tensor/gemm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_gemm_against_reference(void **state)
{
    rg_rng rng;
    rg_rng_seed(&rng, 7, 3);
    print_message("OpenBLAS core: %s\n", rg_blas_core());
    const int sizes[] = {1, 2, 3, 7, 16, 17, 35, 64, 65, 131, 256};
    int ns = sizeof sizes / sizeof *sizes, cases = 0, xsmm = 0;
    for (int it = 0; it < 300; it++) {
        int M = sizes[rg_rng_below(&rng, ns)], N = sizes[rg_rng_below(&rng, ns)], K = sizes[rg_rng_below(&rng, ns)];
        bool ta = rg_rng_below(&rng, 2), tb = rg_rng_below(&rng, 2);
        int pad = (int)rg_rng_below(&rng, 3) * 5; /* extra row stride */
        int lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
        int64_t na = (int64_t)(ta ? K : M) * lda, nb = (int64_t)(tb ? N : K) * ldb, nc = (int64_t)M * ldc;
        float *A = malloc(sizeof(float) * na), *B = malloc(sizeof(float) * nb), *C = malloc(sizeof(float) * nc);
        for (int64_t i = 0; i < na; i++) A[i] = (float)rg_rng_normal(&rng);
        for (int64_t i = 0; i < nb; i++) B[i] = (float)rg_rng_normal(&rng);
        for (int64_t i = 0; i < nc; i++) C[i] = (float)rg_rng_normal(&rng);
        float beta = it % 2 ? 1.0f : 0.0f, alpha = it % 3 == 0 ? 0.5f : 1.0f;
        xsmm += alpha == 1 && rg_gemm_uses_xsmm(M, N, K) && (!tb || N * K <= 65536);
        double *want = malloc(sizeof(double) * nc);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int k = 0; k < K; k++) {
                    double a = ta ? A[(int64_t)k * lda + i] : A[(int64_t)i * lda + k];
                    double b = tb ? B[(int64_t)j * ldb + k] : B[(int64_t)k * ldb + j];
                    s += a * b;
                }
                want[(int64_t)i * ldc + j] = alpha * s + beta * C[(int64_t)i * ldc + j];
            }
        rg_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double got = C[(int64_t)i * ldc + j], w = want[(int64_t)i * ldc + j];
                if (fabs(got - w) > 1e-5 * (1 + sqrt((double)K)) * (1 + fabs(w)))
                    fail_msg("sgemm %s%s M=%d N=%d K=%d pad=%d: C[%d,%d] = %.7g, want %.7g (core %s)", ta ? "T" : "N",
                             tb ? "T" : "N", M, N, K, pad, i, j, got, w, rg_blas_core());
            }
        free(A); free(B); free(C); free(want);
        cases++;
    }
    print_message("%d sgemm cases exact to float32 rounding (%d on libxsmm kernels)\n", cases, xsmm);
    assert_true(xsmm > 50);
}


int main(int argc, char **argv)
{
    rg_blas_prefer_fast_kernels(argv);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_gemm_against_reference)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
