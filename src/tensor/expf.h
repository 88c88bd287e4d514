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
 * tests/test_expf.c compares it with libm's expf over every 251st float bit pattern (all 2^32 of them once, at
 * commit time: 0 differ on this machine's glibc 2.36). libm's expf is not vectorized and was the largest single
 * elementwise cost of the step. */
#ifndef RG_EXPF_H
#define RG_EXPF_H

#include <math.h>
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

#endif
