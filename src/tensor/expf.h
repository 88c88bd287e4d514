/* expf.h: rg_expf, float32 e^x as a loop the compiler vectorizes, bit for bit the value of glibc's expf on an
 * x86-64 machine with FMA (internal). The algorithm is glibc's (sysdeps/ieee754/flt-32/e_expf.c, from Arm's
 * optimized-routines, Szabolcs Nagy 2017): k = round(x N / ln 2) with N = 32 (EXP2F_TABLE_BITS 5), r = x N / ln 2 -
 * k, 2^(k/N) = 2^(k div N) tab[k mod N], e^x = 2^(k/N) (1 + C2 r + (C0 r + C1) r^2) in double, rounded to float
 * once. The constants and the table are the values of glibc's __exp2f_data (tab[i] = the bits of 2^(i/32) minus i
 * << 47; checked against the library's own data), and the four products-and-sums are the fused multiply-adds of
 * glibc's __expf_fma (the variant ld.so picks on a CPU with FMA: its disassembly has fma for k + shift, r, C0 r +
 * C1, C2 r + 1 and the final sum), written as C99 fma() so that every build and clone computes the same bits (a
 * clone without FMA instructions calls libm's exact fma). The edge cases are glibc's: NaN stays NaN, x > 88.72 is
 * inf, x < -103.97 is 0, x in [-103.97, -103.28) is the smallest subnormal (glibc's __math_may_uflowf), -inf is 0.
 * tests/tensor/test_expf.c compares it with libm's expf over every 251st float bit pattern (all 2^32 of them once, at
 * commit time: 0 differ on this machine's glibc 2.36). libm's expf is not vectorized and was the largest single
 * elementwise cost of the step. rg_expf_sub_avx512 (below) is the same function on a row, 16 at a time in AVX-512
 * intrinsics, for attention's softmax on a CPU with AVX-512F (the compiler's loop ended short rows in scalar code);
 * tests/tensor/test_expf.c checks it against rg_expf bit for bit. */
#ifndef RG_EXPF_H
#define RG_EXPF_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static const uint64_t RG_EXPF_TAB[32] = {
    0x3ff0000000000000ULL, 0x3fefd9b0d3158574ULL, 0x3fefb5586cf9890fULL, 0x3fef9301d0125b51ULL,
    0x3fef72b83c7d517bULL, 0x3fef54873168b9aaULL, 0x3fef387a6e756238ULL, 0x3fef1e9df51fdee1ULL,
    0x3fef06fe0a31b715ULL, 0x3feef1a7373aa9cbULL, 0x3feedea64c123422ULL, 0x3feece086061892dULL,
    0x3feebfdad5362a27ULL, 0x3feeb42b569d4f82ULL, 0x3feeab07dd485429ULL, 0x3feea47eb03a5585ULL,
    0x3feea09e667f3bcdULL, 0x3fee9f75e8ec5f74ULL, 0x3feea11473eb0187ULL, 0x3feea589994cce13ULL,
    0x3feeace5422aa0dbULL, 0x3feeb737b0cdc5e5ULL, 0x3feec49182a3f090ULL, 0x3feed503b23e255dULL,
    0x3feee89f995ad3adULL, 0x3feeff76f2fb5e47ULL, 0x3fef199bdd85529cULL, 0x3fef3720dcef9069ULL,
    0x3fef5818dcfba487ULL, 0x3fef7c97337b9b5fULL, 0x3fefa4afa2a490daULL, 0x3fefd0765b6e4540ULL,
};

static inline float rg_expf(float x)
{
    const double inv_ln2_n = 0x1.71547652b82fep+5, shift = 0x1.8p+52;
    double xd = (double)x, kd = fma(inv_ln2_n, xd, shift);
    uint64_t ki;
    memcpy(&ki, &kd, sizeof ki);
    kd -= shift;
    double r = fma(inv_ln2_n, xd, -kd);
    uint64_t t = RG_EXPF_TAB[ki % 32] + (ki << 47);
    double s;
    memcpy(&s, &t, sizeof s);
    double z = fma(r, 0x1.c6af84b912394p-20, 0x1.ebfce50fac4f3p-13), r2 = r * r;
    double y = fma(r, 0x1.62e42ff0c52d6p-6, 1.0);
    y = fma(z, r2, y);
    float v = (float)(y * s);
    v = x < -0x1.9d1d9ep6f ? 0x1p-149f : v;
    v = x < -0x1.9fe368p6f ? 0.0f : v;
    v = x > 0x1.62e42ep6f ? INFINITY : v;
    return x != x ? x + x : v;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define RG_EXPF_AVX512 1
#include <immintrin.h>

/* rg_expf's steps on 8 doubles (one half of 16 floats), the same operations in the same order: the fused
 * multiply-adds are VFMADD, the table is read by two 16-entry permutes (no gather) and a blend on bit 4 of the
 * index; the result is rounded to float as the scalar cast rounds it. */
__attribute__((target("avx512f"), always_inline)) static inline __m256 rg_expf8_core(__m512d xd)
{
    const __m512d inv_ln2_n = _mm512_set1_pd(0x1.71547652b82fep+5), shift = _mm512_set1_pd(0x1.8p+52);
    __m512d kd = _mm512_fmadd_pd(inv_ln2_n, xd, shift);
    const __m512i ki = _mm512_castpd_si512(kd);
    kd = _mm512_sub_pd(kd, shift);
    const __m512d r = _mm512_fmsub_pd(inv_ln2_n, xd, kd); /* fma(a, b, -c): the negation is exact */
    const __m512i idx = _mm512_and_si512(ki, _mm512_set1_epi64(31));
    const double *tp = (const double *)RG_EXPF_TAB;
    const __m512d t0 = _mm512_loadu_pd(tp), t1 = _mm512_loadu_pd(tp + 8), t2 = _mm512_loadu_pd(tp + 16);
    const __m512d t3 = _mm512_loadu_pd(tp + 24);
    const __m512d lo = _mm512_permutex2var_pd(t0, idx, t1), hi = _mm512_permutex2var_pd(t2, idx, t3);
    const __m512d tab = _mm512_mask_blend_pd(_mm512_test_epi64_mask(idx, _mm512_set1_epi64(16)), lo, hi);
    const __m512d s = _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(tab), _mm512_slli_epi64(ki, 47)));
    const __m512d z = _mm512_fmadd_pd(r, _mm512_set1_pd(0x1.c6af84b912394p-20), _mm512_set1_pd(0x1.ebfce50fac4f3p-13));
    const __m512d r2 = _mm512_mul_pd(r, r);
    __m512d y = _mm512_fmadd_pd(r, _mm512_set1_pd(0x1.62e42ff0c52d6p-6), _mm512_set1_pd(1.0));
    y = _mm512_fmadd_pd(z, r2, y);
    return _mm512_cvtpd_ps(_mm512_mul_pd(y, s));
}

/* rg_expf of 16 floats, lane for lane the scalar function's bits (tests/tensor/test_expf.c checks every 251st pattern). */
__attribute__((target("avx512f"), always_inline)) static inline __m512 rg_expf16_avx512(__m512 x)
{
    const __m256 xl = _mm512_castps512_ps256(x);
    const __m256 xh = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1));
    const __m256 vl = rg_expf8_core(_mm512_cvtps_pd(xl)), vh = rg_expf8_core(_mm512_cvtps_pd(xh));
    __m512 v = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(vl)),
                                                   _mm256_castps_pd(vh), 1));
    v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(-0x1.9d1d9ep6f), _CMP_LT_OQ), v,
                             _mm512_set1_ps(0x1p-149f));
    v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(-0x1.9fe368p6f), _CMP_LT_OQ), v, _mm512_setzero_ps());
    v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(0x1.62e42ep6f), _CMP_GT_OQ), v,
                             _mm512_set1_ps(INFINITY));
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), v, _mm512_add_ps(x, x));
}

/* x[j] = rg_expf(x[j] - m) for j < n, 16 at a time and the rest under a mask: the compiler's vectorized loop ends
 * short rows (attention's causal rows are 1..T entries) in scalar code, which was most of the softmax's time. Call
 * only where rg_expf_avx512() is true. */
__attribute__((target("avx512f"))) static inline void rg_expf_sub_avx512(float *x, int n, float m)
{
    const __m512 mv = _mm512_set1_ps(m);
    int j = 0;
    for (; j + 16 <= n; j += 16) _mm512_storeu_ps(x + j, rg_expf16_avx512(_mm512_sub_ps(_mm512_loadu_ps(x + j), mv)));
    if (j < n) {
        const __mmask16 k = (__mmask16)((1u << (n - j)) - 1);
        _mm512_mask_storeu_ps(x + j, k, rg_expf16_avx512(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + j), mv)));
    }
}

static inline bool rg_expf_avx512(void) { return __builtin_cpu_supports("avx512f"); }
#endif

#endif
