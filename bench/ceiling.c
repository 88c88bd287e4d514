/* bench/ceiling.c: the product ceilings the benchmark's rows are measured against (bench/README.md, "The
 * ceilings"), run in a child process of their own (bench --child-ceiling). For one thread count it times an
 * N x N x N product (row-major, no transposes, C = A B) on every kernel the library can reach:
 *   openblas     cblas_sgemm with the OpenBLAS kernel set of this process (OPENBLAS_CORETYPE, chosen by the parent)
 *   libxsmm      libxsmm's JIT kernels on XSMM_BM x XSMM_BN blocks of C, XSMM_BK deep, through rg_mm, the operands
 *                stored block by block (each block contiguous: copied so before the timing, as OpenBLAS and oneDNN
 *                pack theirs inside the call; read in place at a power-of-two stride the blocks' rows fall on the
 *                same cache sets and the kernel measures the conflicts, not itself), the rows of blocks split over
 *                the library's pool as rg_gemm splits a large product
 *   onednn_f32   oneDNN's float32 matmul (rg_gemm_dnnl_f32), when libdnnl.so.2 loads
 *   onednn_bf16  oneDNN's matmul with bf16 operands and float32 accumulation (rg_gemm_bf16), where bf16 runs
 * each the best and median of `reps` calls after a warm-up call, in GFLOP/s of 2 N^3. The fp32 ceiling is the
 * fastest of the first three (the parent runs openblas with the CPU's own kernel set, bench_own_coretype), the
 * bf16 ceiling the last: what the machine can do at each precision, so a row's share of it says how much of the
 * step is left on the table. Other processes on the machine only lower these.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "bench.h"
#include "tensor/gemm.h"
#include "tensor/pool.h"

/* libxsmm's blocks: C [64 x 64] += A [64 x 256] B [256 x 64], each block contiguous. */
#define XSMM_BM 64
#define XSMM_BN 64
#define XSMM_BK 256

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *bench_own_coretype(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
    return NULL;
}

typedef struct {
    int N;
    const float *A, *B;
    float *C;
    const float *Ab, *Bb; /* A and B block by block (pack_blocks) */
    float *Cb;            /* C block by block */
} square;

/* src [N, N] (row stride N) into dst as blocks of br x bc, each contiguous, block rows then block columns. */
static void pack_blocks(float *dst, const float *src, int N, int br, int bc)
{
    for (int i = 0; i < N; i += br)
        for (int j = 0; j < N; j += bc)
            for (int r = 0; r < br; r++, dst += bc) memcpy(dst, src + (int64_t)(i + r) * N + j, sizeof(float) * bc);
}

/* Rows of blocks [nb * part / nparts, nb * (part + 1) / nparts) of C = A B on libxsmm kernels. */
static void xsmm_part(void *p, int part, int nparts)
{
    const square *s = p;
    int N = s->N, nb = N / XSMM_BM, nk = N / XSMM_BK, nn = N / XSMM_BN, b0 = nb * part / nparts,
        b1 = nb * (part + 1) / nparts;
    rg_mm k0 = rg_mm_get(false, XSMM_BM, XSMM_BN, XSMM_BK, XSMM_BK, XSMM_BN, XSMM_BN, 0);
    rg_mm k1 = rg_mm_get(false, XSMM_BM, XSMM_BN, XSMM_BK, XSMM_BK, XSMM_BN, XSMM_BN, 1);
    for (int bi = b0; bi < b1; bi++)
        for (int bj = 0; bj < nn; bj++)
            for (int bk = 0; bk < nk; bk++)
                rg_mm_run(bk ? &k1 : &k0, s->Ab + ((int64_t)bi * nk + bk) * XSMM_BM * XSMM_BK,
                          s->Bb + ((int64_t)bk * nn + bj) * XSMM_BK * XSMM_BN,
                          s->Cb + ((int64_t)bi * nn + bj) * XSMM_BM * XSMM_BN);
}

typedef enum { K_OPENBLAS, K_XSMM, K_DNNL_F32, K_DNNL_BF16 } kernel;
static const char *const KERNEL_NAME[] = {"openblas", "libxsmm", "onednn_f32", "onednn_bf16"};

static void run_kernel(kernel k, square *s, const uint16_t *a16, const uint16_t *b16)
{
    int N = s->N;
    switch (k) {
    case K_OPENBLAS:
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, s->A, N, s->B, N, 0.0f, s->C, N);
        break;
    case K_XSMM: rg_pool_run(xsmm_part, s, rg_pool_threads()); break;
    case K_DNNL_F32: rg_gemm_dnnl_f32(false, false, N, N, N, s->A, N, s->B, N, 0, s->C, N); break;
    case K_DNNL_BF16: rg_gemm_bf16(false, false, N, N, N, a16, N, b16, N, 0, s->C, N); break;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Times kernel k: a warm-up call, then reps calls; prints its CEIL line. */
static void time_kernel(kernel k, square *s, const uint16_t *a16, const uint16_t *b16, int reps, double *g)
{
    double flops = 2.0 * s->N * (double)s->N * s->N;
    run_kernel(k, s, a16, b16);
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        run_kernel(k, s, a16, b16);
        g[r] = flops / (now_s() - t0) * 1e-9;
    }
    qsort(g, (size_t)reps, sizeof *g, cmp_double);
    double med = reps % 2 ? g[reps / 2] : 0.5 * (g[reps / 2 - 1] + g[reps / 2]);
    printf("CEIL\t%s\t%.3f\t%.3f\t%s\n", KERNEL_NAME[k], med, g[reps - 1],
           k == K_OPENBLAS ? bench_core_name() : k == K_XSMM ? "JIT" : k == K_DNNL_BF16 ? rg_bf16_isa() : "-");
    fflush(stdout);
}

int bench_child_ceiling(int N, int threads, int reps, bool blas_only)
{
    if (N % XSMM_BM || N % XSMM_BK) {
        fprintf(stderr, "bench: the ceiling's size %d is not a multiple of %d\n", N, XSMM_BK);
        return 1;
    }
    rg_set_num_threads(threads);
    size_t nn = (size_t)N * (size_t)N;
    float *a = malloc(nn * sizeof(float)), *b = malloc(nn * sizeof(float)), *c = calloc(nn, sizeof(float));
    uint16_t *a16 = malloc(nn * sizeof(uint16_t)), *b16 = malloc(nn * sizeof(uint16_t));
    float *ab = malloc(nn * sizeof(float)), *bb = malloc(nn * sizeof(float)), *cb = malloc(nn * sizeof(float));
    double *g = malloc(sizeof(double) * (size_t)reps);
    int rc = 0;
    if (!a || !b || !c || !a16 || !b16 || !g || !ab || !bb || !cb) {
        fprintf(stderr, "bench: out of memory\n");
        rc = 1;
        goto done;
    }
    rg_rng rng;
    rg_rng_seed(&rng, 3, 3);
    for (size_t i = 0; i < nn; i++) {
        a[i] = (float)(rg_rng_uniform(&rng) - 0.5);
        b[i] = (float)(rg_rng_uniform(&rng) - 0.5);
    }
    rg_bf16_from_float(a16, a, (int64_t)nn);
    rg_bf16_from_float(b16, b, (int64_t)nn);
    pack_blocks(ab, a, N, XSMM_BM, XSMM_BK);
    pack_blocks(bb, b, N, XSMM_BK, XSMM_BN);
    square s = {N, a, b, c, ab, bb, cb};
    time_kernel(K_OPENBLAS, &s, a16, b16, reps, g);
    if (!blas_only) {
        /* libxsmm only where it has a JIT kernel for the block (rg_mm_run would otherwise call OpenBLAS) */
        if (rg_mm_get(false, XSMM_BM, XSMM_BN, XSMM_BK, XSMM_BK, XSMM_BN, XSMM_BN, 1).fn) {
            time_kernel(K_XSMM, &s, a16, b16, reps, g);
            /* the blocked product is the product: its first and last values against OpenBLAS's (still in c) */
            for (size_t i = 0; i < nn; i += nn - 1)
                if (!(fabsf(cb[i] - c[i]) <= 1e-3f * (1 + fabsf(c[i]))))
                    fprintf(stderr, "bench: libxsmm's blocked product gave %g where OpenBLAS gave %g\n", cb[i], c[i]);
        }
        if (rg_dnnl_available()) time_kernel(K_DNNL_F32, &s, a16, b16, reps, g);
        if (rg_bf16_supported(NULL, 0)) time_kernel(K_DNNL_BF16, &s, a16, b16, reps, g);
    }
done:
    free(a);
    free(b);
    free(c);
    free(a16);
    free(b16);
    free(g);
    free(ab);
    free(bb);
    free(cb);
    return rc;
}
