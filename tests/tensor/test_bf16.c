/* test_bf16.c (float32): the bf16 mixed-precision path (rg_set_linear_precision, tensor.h; src/tensor/dnnl.c).
 *
 * - the float32 -> bf16 rounding (round to nearest even, NaN and infinities kept): a table of bit patterns; and
 *   every sign/exponent/upper-mantissa pattern with 8 lower halves (ties, near-ties, subnormals, NaNs) through
 *   rg_bf16_from_float (VCVTNEPS2BF16 where the CPU has it), rg_bf16_round and rg_bf16_rows (strided rows with a
 *   masked tail, whose gaps must stay untouched) against a remainder-based oracle;
 * - the refusal: with oneDNN limited to AVX-512 without BF16 (DNNL_MAX_CPU_ISA=AVX512_CORE, in a child process that
 *   has not asked oneDNN anything yet), or in a build without oneDNN, bf16 is refused with RG_ERR_ARG and a message
 *   and the setting stays fp32;
 * - rg_gemm_bf16 in every transpose layout and with beta 0 and 1, and rg_gemm_bf16_bias with a bias row, against
 *   a float64 product of the bf16-rounded operands: the only error left is float32 accumulation (|err| <= 1e-5 *
 *   sum_k |a||b|), so operands really are bf16 and the accumulation really is float32;
 * - rg_gemm's float32 weight-gradient products routed to oneDNN (K > 1024) and their libxsmm neighbours, against
 *   float64 (skipped where oneDNN does not load);
 * - a step on a PyTorch fixture (tests/fixtures/model_rope.h5: its parameters, batch, float64 loss and gradients):
 *   bf16's loss within 1e-2 relative of fp32's; against the float64 gradients, all parameters' gradients together
 *   within 2e-2 relative L2 and each parameter's within 1e-1 (fp32: each within 1e-5); and fp32 after a bf16 step
 *   bit for bit the fp32 of before. Measured (AMX, Linear's products in bf16): loss 1.0e-4 relative, all gradients
 *   1.15e-2, the worst parameter 2.4e-2 (a bias gradient: a sum with cancellation); with attention's products in
 *   bf16 too (AVX512_BF16, AMD EPYC family 26): 7.5e-5, 1.18e-2 and 2.44e-2; bf16's unit roundoff is 2^-8 = 3.9e-3
 *   per operand, compounded over 2 layers. The tolerances (1.7-4x the measured errors) leave room for another CPU's summation
 *   order; a wrong operand (a stale or unconverted weight, a transposed layout) misses them by far.
 * The tests that run bf16 products are skipped (counted as skipped by tests/run.sh) where rg_bf16_supported is
 * false, with the reason printed. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tensor/gemm.h"
#include "tensor/fastmath.h"

#define FIXTURE "tests/fixtures/model_rope.h5"

static bool bf16_or_skip(void)
{
    char why[256];
    if (rg_bf16_supported(why, sizeof why)) return true;
    printf("skipped: %s\n", why);
    return false;
}

/* runs first: the child must not have asked oneDNN for its ISA before setting DNNL_MAX_CPU_ISA */
static void test_refused_without_bf16_isa(void **state)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("DNNL_MAX_CPU_ISA", "AVX512_CORE", 1);
        rg_status st = rg_set_linear_precision(RG_PRECISION_BF16);
        int ok = st == RG_ERR_ARG && strstr(rg_last_error(), "bf16") &&
                 rg_get_linear_precision() == RG_PRECISION_FP32;
        if (!ok) fprintf(stderr, "status %d, message \"%s\"\n", (int)st, rg_last_error());
        _exit(ok ? 0 : 1);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    /* and in this process: accepted exactly when supported */
    rg_status st = rg_set_linear_precision(RG_PRECISION_BF16);
    assert_int_equal(st == RG_OK, rg_bf16_supported(NULL, 0));
    if (st) printf("bf16 refused here, as expected: %s\n", rg_last_error());
    assert_int_equal(rg_set_linear_precision(RG_PRECISION_FP32), RG_OK);
    assert_int_equal(rg_set_linear_precision((rg_precision)7), RG_ERR_ARG);
    assert_int_equal(rg_get_linear_precision(), RG_PRECISION_FP32);
}

static void test_rounding(void **state)
{
    static const struct { uint32_t in; uint16_t out; } cases[] = {
        {0x3F800000u, 0x3F80}, /* 1 */
        {0x3F808000u, 0x3F80}, /* 1 + 2^-8: a tie, to even (down) */
        {0x3F818000u, 0x3F82}, /* a tie, to even (up) */
        {0x3F808001u, 0x3F81}, /* just above the tie */
        {0x3F807FFFu, 0x3F80}, /* just below */
        {0xBF808001u, 0xBF81}, /* negative */
        {0x7F7FFFFFu, 0x7F80}, /* the largest float rounds to +inf */
        {0x7F800000u, 0x7F80}, /* +inf */
        {0xFF800000u, 0xFF80}, /* -inf */
        {0x00000000u, 0x0000},
        {0x80000000u, 0x8000}, /* -0 */
    };
    /* one call over 3 copies of the table (the vector path, AVX512_BF16 where present, and its scalar tail) and
     * one call per value (the scalar path) must both give the table */
    enum { NC = sizeof cases / sizeof *cases, NV = 3 * NC };
    float f[NV];
    uint16_t h1[NV], h2[NV];
    for (int i = 0; i < NV; i++) memcpy(&f[i], &cases[i % NC].in, 4);
    rg_bf16_from_float(h1, f, NV);
    for (int i = 0; i < NV; i++) rg_bf16_from_float(&h2[i], &f[i], 1);
    for (int i = 0; i < NV; i++)
        if (h1[i] != cases[i % NC].out || h2[i] != cases[i % NC].out)
            fail_msg("0x%08x -> 0x%04x (vector) 0x%04x (scalar), want 0x%04x", cases[i % NC].in, h1[i], h2[i],
                     cases[i % NC].out);
    uint32_t nan_bits = 0x7FC00001u, snan = 0x7F800001u;
    float nan, sn;
    memcpy(&nan, &nan_bits, 4);
    memcpy(&sn, &snan, 4);
    uint16_t h[2];
    rg_bf16_from_float(&h[0], &nan, 1);
    rg_bf16_from_float(&h[1], &sn, 1);
    assert_true(isnan(rg_bf16_to_float(h[0])) && isnan(rg_bf16_to_float(h[1])));
    assert_true(rg_bf16_to_float(0x3F80) == 1.0f);
}

/* The oracle: subnormal -> +-0 (as VCVTNEPS2BF16), NaN -> quiet NaN, else the truncation plus one ulp when the
 * dropped half is above a tie or a tie on an odd truncation (a carry into the exponent makes +-inf). */
static uint16_t oracle_round(uint32_t u)
{
    if ((u & 0x7F800000u) == 0) return (uint16_t)((u >> 16) & 0x8000u);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x40u);
    uint16_t t = (uint16_t)(u >> 16);
    uint32_t rem = u & 0xFFFFu;
    return (uint16_t)(rem > 0x8000u || (rem == 0x8000u && (t & 1)) ? t + 1 : t);
}

static void test_rounding_all_patterns(void **state)
{
    static const uint16_t lows[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x1234, 0xC000};
    enum { NL = sizeof lows / sizeof *lows, N = 65536 * NL };
    float *f = malloc(sizeof(float) * N);
    uint16_t *h = malloc(sizeof(uint16_t) * N);
    assert_non_null(f);
    assert_non_null(h);
    for (uint32_t hi = 0; hi < 65536; hi++)
        for (int l = 0; l < NL; l++) {
            uint32_t u = hi << 16 | lows[l];
            memcpy(&f[hi * NL + l], &u, 4);
        }
    rg_bf16_from_float(h, f, N);
    /* rg_bf16_rows: rows of COLS patterns (a masked tail of 13) into rows of LDD, whose gaps must stay untouched */
    enum { COLS = 29, LDD = 32, ROWS = N / COLS, LAST = N % COLS, SENTINEL = 0xABCD };
    uint16_t *g = malloc(sizeof(uint16_t) * (ROWS + 1) * LDD);
    assert_non_null(g);
    for (int i = 0; i < (ROWS + 1) * LDD; i++) g[i] = SENTINEL;
    rg_bf16_rows(g, LDD, f, COLS, ROWS, COLS);
    rg_bf16_rows(g + (int64_t)ROWS * LDD, LDD, f + (int64_t)ROWS * COLS, COLS, 1, LAST);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        uint32_t u;
        memcpy(&u, &f[i], 4);
        uint16_t want = oracle_round(u), r = rg_bf16_round(f[i]), row = g[(i / COLS) * LDD + i % COLS];
        if ((h[i] != want || r != want || row != want) && bad++ < 5)
            printf("0x%08x: rg_bf16_from_float 0x%04x, rg_bf16_round 0x%04x, rg_bf16_rows 0x%04x, want 0x%04x\n", u,
                   h[i], r, row, want);
    }
    for (int i = 0; i < (ROWS + 1) * LDD; i++) {
        const int j = i % LDD;
        if ((j >= COLS || (i / LDD == ROWS && j >= LAST)) && g[i] != SENTINEL && bad++ < 10)
            printf("rg_bf16_rows wrote 0x%04x at row %d column %d, outside the block\n", g[i], i / LDD, j);
    }
    free(f);
    free(h);
    free(g);
    assert_int_equal(bad, 0);
}

static void test_gemm_bf16(void **state)
{
    if (!bf16_or_skip()) { skip(); return; }
    rg_rng rng;
    rg_rng_seed(&rng, 11, 0);
    static const struct { bool ta, tb; int M, N, K; float beta; } cases[] = {
        {false, true, 37, 30, 64, 0}, {false, true, 272, 256, 64, 1}, {false, false, 100, 64, 256, 0},
        {false, false, 64, 64, 64, 1}, {true, false, 64, 256, 272, 1}, {true, false, 30, 64, 33, 0},
        {true, true, 17, 19, 23, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const bool ta = cases[c].ta, tb = cases[c].tb;
        const int M = cases[c].M, N = cases[c].N, K = cases[c].K;
        const int lda = ta ? M : K, ldb = tb ? K : N;
        float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N), *C = malloc(sizeof(float) * M * N);
        uint16_t *ha = malloc(2 * (size_t)M * K), *hb = malloc(2 * (size_t)K * N);
        for (int i = 0; i < M * K; i++) a[i] = (float)rg_rng_normal(&rng);
        for (int i = 0; i < K * N; i++) b[i] = (float)rg_rng_normal(&rng);
        for (int i = 0; i < M * N; i++) C[i] = (float)rg_rng_normal(&rng);
        rg_bf16_from_float(ha, a, (int64_t)M * K);
        rg_bf16_from_float(hb, b, (int64_t)K * N);
        float *C0 = malloc(sizeof(float) * M * N);
        memcpy(C0, C, sizeof(float) * M * N);
        rg_gemm_bf16(ta, tb, M, N, K, ha, lda, hb, ldb, cases[c].beta, C, N);
        /* the bias form: C0's first row as the bias, C's former values ignored (beta 0) */
        float *Cb = malloc(sizeof(float) * M * N);
        for (int i = 0; i < M * N; i++) Cb[i] = NAN;
        rg_gemm_bf16_bias(ta, tb, M, N, K, ha, lda, hb, ldb, C0, Cb, N);
        double worst = 0, worst_bias = 0;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = 0, mag = 0;
                for (int k = 0; k < K; k++) {
                    double x = rg_bf16_to_float(ha[ta ? k * lda + i : i * lda + k]);
                    double y = rg_bf16_to_float(hb[tb ? j * ldb + k : k * ldb + j]);
                    s += x * y;
                    mag += fabs(x * y);
                }
                worst_bias = tc_max(worst_bias, fabs(Cb[i * N + j] - (s + C0[j])) / (mag + fabs(C0[j])));
                s += cases[c].beta * C0[i * N + j];
                mag += fabs(C0[i * N + j]);
                worst = tc_max(worst, fabs(C[i * N + j] - s) / mag);
            }
        if (!(worst <= 1e-5) || !(worst_bias <= 1e-5))
            fail_msg("case %zu (ta %d tb %d %dx%dx%d beta %g): worst error %.3g (with a bias row %.3g) of "
                     "sum|a||b|", c, ta, tb, M, N, K, (double)cases[c].beta, worst, worst_bias);
        free(a); free(b); free(C); free(C0); free(Cb); free(ha); free(hb);
    }
}

/* rg_gemm's weight-gradient products that go to oneDNN's float32 matmul (gemm.c: trans_a, K > 1024, M*N >= 16384)
 * and the neighbours that stay on libxsmm: each against a float64 product, |err| <= 1e-5 of sum |a||b| (float32
 * accumulation), beta 0 and 1. */
static void test_gemm_fp32_routes(void **state)
{
    if (!rg_dnnl_available()) { printf("skipped: no oneDNN in this build or on this machine\n"); skip(); return; }
    rg_rng rng;
    rg_rng_seed(&rng, 12, 0);
    static const struct { int M, N, K; float beta; } cases[] = {
        {64, 256, 2176, 1}, {256, 64, 1100, 0}, {64, 64, 2176, 1}, {30, 64, 2176, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const int M = cases[c].M, N = cases[c].N, K = cases[c].K;
        float *a = malloc(sizeof(float) * K * M), *b = malloc(sizeof(float) * K * N), *C = malloc(sizeof(float) * M * N);
        float *C0 = malloc(sizeof(float) * M * N);
        for (int i = 0; i < K * M; i++) a[i] = (float)rg_rng_normal(&rng);
        for (int i = 0; i < K * N; i++) b[i] = (float)rg_rng_normal(&rng);
        for (int i = 0; i < M * N; i++) C0[i] = C[i] = (float)rg_rng_normal(&rng);
        rg_gemm(true, false, M, N, K, 1, a, M, b, N, cases[c].beta, C, N); /* C = A^T B (+ C), A [K, M] */
        double worst = 0;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = cases[c].beta * C0[i * N + j], mag = fabs(s);
                for (int k = 0; k < K; k++) {
                    s += (double)a[k * M + i] * b[k * N + j];
                    mag += fabs((double)a[k * M + i] * b[k * N + j]);
                }
                worst = tc_max(worst, fabs(C[i * N + j] - s) / mag);
            }
        if (!(worst <= 1e-5)) fail_msg("%dx%dx%d beta %g: worst error %.3g of sum|a||b|", M, N, K,
                                       (double)cases[c].beta, worst);
        free(a); free(b); free(C); free(C0);
    }
}

/* loss and gradients of the fixture's batch at the current precision; grads copied into a malloc'ed block */
static double fixture_step(rg_model *m, const int32_t *tokens, const int32_t *targets, int B, int T, float **grads)
{
    rg_ctx *c = rg_ctx_new();
    rg_params_zero_grad(&m->params);
    double loss;
    assert_int_equal(rg_model_loss_backward(c, m, tokens, targets, NULL, B, T, 1, -100, &loss), RG_OK);
    int64_t n = m->params.offset[m->params.n_packed];
    *grads = malloc(sizeof(float) * (size_t)n);
    memcpy(*grads, m->params.grad, sizeof(float) * (size_t)n);
    rg_ctx_free(c);
    return loss;
}

static void test_step_vs_fp32(void **state)
{
    if (!bf16_or_skip()) { skip(); return; }
    rg_model *m = tc_fx_model(FIXTURE, NULL);
    int64_t n;
    int shape[4], ndim;
    int32_t *tokens = tc_h5_read_int(FIXTURE, "/input/tokens", &n, shape, &ndim);
    int32_t *targets = tc_h5_read_int(FIXTURE, "/input/targets", NULL, NULL, NULL);
    const int B = shape[0], T = shape[1];
    double *want_loss = tc_h5_read(FIXTURE, "/expected/loss", NULL, NULL, NULL);
    float *g32, *g16, *g32b;
    double l32 = fixture_step(m, tokens, targets, B, T, &g32);
    assert_int_equal(rg_set_linear_precision(RG_PRECISION_BF16), RG_OK);
    double l16 = fixture_step(m, tokens, targets, B, T, &g16);
    assert_int_equal(rg_set_linear_precision(RG_PRECISION_FP32), RG_OK);
    double l32b = fixture_step(m, tokens, targets, B, T, &g32b);
    int64_t total = m->params.offset[m->params.n_packed];
    assert_true(l32b == l32); /* fp32 after bf16: bit for bit */
    assert_memory_equal(g32, g32b, sizeof(float) * (size_t)total);
    double rel_loss = fabs(l16 - l32) / fabs(l32);
    printf("loss: PyTorch float64 %.9g, fp32 %.9g, bf16 %.9g (bf16 vs fp32 rel %.2e)\n", want_loss[0], l32, l16,
           rel_loss);
    assert_true(fabs(l32 - want_loss[0]) <= 1e-5 * fabs(want_loss[0]));
    assert_true(rel_loss <= 1e-2);
    double worst16 = 0, worst32 = 0, all16 = 0, all_norm = 0;
    const char *worst_name = "";
    for (int i = 0; i < m->params.n; i++) {
        rg_tensor *p = m->params.items[i];
        char path[128];
        snprintf(path, sizeof path, "/expected/grads/%s", p->name);
        int64_t k;
        double *want = tc_h5_read(FIXTURE, path, &k, NULL, NULL);
        assert_int_equal(k, p->numel);
        const int64_t off = m->params.offset[i];
        double e16 = 0, e32 = 0, norm = 0;
        for (int64_t j = 0; j < k; j++) {
            e16 += (g16[off + j] - want[j]) * (g16[off + j] - want[j]);
            e32 += (g32[off + j] - want[j]) * (g32[off + j] - want[j]);
            norm += want[j] * want[j];
        }
        free(want);
        all16 += e16;
        all_norm += norm;
        if (norm == 0) continue;
        e16 = sqrt(e16 / norm);
        e32 = sqrt(e32 / norm);
        if (!(e16 <= worst16)) { worst16 = e16; worst_name = m->params.items[i]->name; }
        worst32 = tc_max(worst32, e32);
    }
    all16 = sqrt(all16 / all_norm);
    printf("gradients, relative L2 error against PyTorch float64: fp32 worst parameter %.2e; bf16 all parameters "
           "%.2e, worst parameter %.2e (%s)\n", worst32, all16, worst16, worst_name);
    assert_true(worst32 <= 1e-5);
    assert_true(all16 <= 2e-2);
    assert_true(worst16 <= 1e-1);
    free(g32); free(g16); free(g32b); free(tokens); free(targets); free(want_loss);
    rg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_without_bf16_isa), /* first: see the test */
        cmocka_unit_test(test_rounding),
        cmocka_unit_test(test_rounding_all_patterns),
        cmocka_unit_test(test_gemm_bf16),
        cmocka_unit_test(test_gemm_fp32_routes),
        cmocka_unit_test(test_step_vs_fp32),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
