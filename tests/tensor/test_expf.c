/* test_expf.c (float32): rg_expf (src/tensor/expf.h), the vectorizable expf of attention's softmax, against libm's
 * expf: on a CPU with FMA (where glibc runs its __expf_fma, whose fused multiply-adds rg_expf reproduces) bit for bit
 * over every 251st float bit pattern and a table of edge cases; on a CPU without FMA (glibc's other variant rounds
 * differently in rare cases) within one unit in the last place, with the reason printed. On a CPU with AVX-512F,
 * rg_expf_sub_avx512 (the softmax's row form) equals the scalar rg_expf over the same patterns bit for bit. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tensor/expf.h"

/* Units in the last place between two floats of the same sign (0 when both are NaN). */
static long ulps(float a, float b)
{
    if (a != a && b != b) return 0;
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    long d = (long)ia - (long)ib;
    return d < 0 ? -d : d;
}

static bool cpu_fma(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    return __builtin_cpu_supports("fma");
#else
    return false;
#endif
}

/* The loop attention runs (vectorized in its clones); here in a plain loop of the test's build. */
static void vexp(float *restrict o, const float *restrict x, int n)
{
    for (int i = 0; i < n; i++) o[i] = rg_expf(x[i]);
}

static void check(const float *x, const float *got, int n, bool exact, long *worst)
{
    for (int i = 0; i < n; i++) {
        float want = expf(x[i]);
        long d = ulps(got[i], want);
        if (d > *worst) *worst = d;
        if (exact ? d != 0 : d > 1) fail_msg("rg_expf(%a) = %a, libm expf %a (%ld ulp)", x[i], got[i], want, d);
    }
}

/* The AVX-512 row form (rg_expf_sub_avx512, attention's softmax on such a CPU) against the scalar rg_expf, bit
 * for bit (NaN as NaN), with m = 0 (x - 0 is x) and every tail length up to 16 (the masked rest). */
static void check_rows(const float *x, int n)
{
#ifdef RG_EXPF_AVX512
    if (!rg_expf_avx512()) return;
    static float y[1 << 16];
    assert_true(n <= (int)(sizeof y / sizeof *y));
    for (int len = 1; len <= 17 && len <= n; len++) { /* every tail length, from the start of x */
        memcpy(y, x, (size_t)len * sizeof *y);
        rg_expf_sub_avx512(y, len, 0.0f);
        for (int i = 0; i < len; i++) {
            float want = rg_expf(x[i]);
            if (memcmp(&y[i], &want, 4) && !(isnan(y[i]) && isnan(want)))
                fail_msg("rg_expf_sub_avx512 (length %d): %a -> %a, rg_expf %a", len, x[i], y[i], want);
        }
    }
    memcpy(y, x, (size_t)n * sizeof *y);
    rg_expf_sub_avx512(y, n, 0.0f);
    for (int i = 0; i < n; i++) {
        float want = rg_expf(x[i]);
        if (memcmp(&y[i], &want, 4) && !(isnan(y[i]) && isnan(want)))
            fail_msg("rg_expf_sub_avx512: %a -> %a, rg_expf %a", x[i], y[i], want);
    }
#else
    (void)x, (void)n;
#endif
}

static void test_edges(void **state)
{
    static const float X[] = {0.0f, -0.0f, 1.0f, -1.0f, 0x1p-149f, -0x1p-149f, 88.0f, 0x1.62e42ep6f, 0x1.62e430p6f,
                              -88.0f, -0x1.9d1d9ep6f, -0x1.9d1da0p6f, -0x1.9fe368p6f, -0x1.9fe36ap6f, -103.5f,
                              -104.0f, -1e30f, 1e30f, INFINITY, -INFINITY, NAN, -87.33654f, 0.693147f, -20.5f};
    enum { N = sizeof X / sizeof *X };
    float got[N];
    long worst = 0;
    vexp(got, X, N);
    check(X, got, N, cpu_fma(), &worst);
    check_rows(X, N);
    assert_true(got[19] == 0 && isinf(got[18]) && isnan(got[20]) && got[0] == 1);
}

static void test_dense(void **state)
{
    enum { B = 1 << 16, STRIDE = 251 };
    static float x[B], got[B];
    bool exact = cpu_fma();
    if (!exact) printf("test_expf: this CPU has no FMA: libm's expf is glibc's non-FMA variant; checked within 1 ulp\n");
    long worst = 0, n = 0;
    for (uint64_t u = 0; u < 0x100000000ULL;) {
        int m = 0;
        for (; m < B && u < 0x100000000ULL; u += STRIDE, m++) {
            uint32_t w = (uint32_t)u;
            memcpy(&x[m], &w, 4);
        }
        vexp(got, x, m);
        check(x, got, m, exact, &worst);
        check_rows(x, m);
        n += m;
    }
    printf("test_expf: %ld float bit patterns, largest difference %ld ulp\n", n, worst);
}

/* The shift m: rg_expf_sub_avx512(x, n, m) is rg_expf(x - m) with the float subtraction, as the softmax computes it. */
static void test_shifted_rows(void **state)
{
#ifdef RG_EXPF_AVX512
    if (!rg_expf_avx512()) {
        printf("test_expf: no AVX-512F: the row form is not used on this CPU\n");
        return;
    }
    float x[40], y[40];
    const float M[] = {0.0f, 3.25f, -17.5f, 88.0f, -1e-3f, INFINITY};
    for (size_t k = 0; k < sizeof M / sizeof *M; k++)
        for (int n = 0; n <= 40; n++) {
            for (int i = 0; i < 40; i++) x[i] = y[i] = (float)((i * 37 + (int)k * 11) % 61) * 1.7f - 50.0f;
            rg_expf_sub_avx512(y, n, M[k]);
            for (int i = 0; i < 40; i++) {
                float want = i < n ? rg_expf(x[i] - M[k]) : x[i]; /* past n: untouched */
                if (memcmp(&y[i], &want, 4) && !(isnan(y[i]) && isnan(want)))
                    fail_msg("m %a, n %d, entry %d: %a, want %a", M[k], n, i, y[i], want);
            }
        }
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_dense),
        cmocka_unit_test(test_shifted_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
