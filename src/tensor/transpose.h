/* transpose.h: rg_transpose_block, a strided float block transpose (internal), for attention's per-head K^T and V^T
 * (src/nn/attention.c). dst [cols, rows] (row stride ldd) = src [rows, cols] (row stride lds) transposed. A copy:
 * every path gives the same bits. The compiler does not vectorize the plain loop (strided stores; it was 3% of
 * train_order's step on an AVX2 CPU, one scalar element per cycle); in the float32 build on an x86-64 CPU with AVX,
 * 8 x 8 blocks go through eight 256-bit loads, the classic unpack / shuffle / permute transpose and eight stores,
 * the edges through the plain loop. tests/tensor/test_transpose.c checks it against the plain loop on awkward shapes. */
#ifndef RG_TRANSPOSE_H
#define RG_TRANSPOSE_H

#include <stdint.h>
#include "tensor.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(RG_DOUBLE)
#define RG_TRANSPOSE_AVX 1
#include <immintrin.h>
#endif

/* The plain loop, on the block [r0, r1) x [c0, c1) of src. */
static inline void rg_transpose_plain(rg_real *restrict dst, int ldd, const rg_real *restrict src, int lds, int r0,
                                      int r1, int c0, int c1)
{
    for (int r = r0; r < r1; r++)
        for (int c = c0; c < c1; c++) dst[(int64_t)c * ldd + r] = src[(int64_t)r * lds + c];
}

#ifdef RG_TRANSPOSE_AVX
/* 8 x 8 blocks with AVX, the rest with the plain loop. */
__attribute__((target("avx"))) static inline void rg_transpose_avx(float *restrict dst, int ldd,
                                                                     const float *restrict src, int lds, int rows,
                                                                     int cols)
{
    const int r8 = rows / 8 * 8, c8 = cols / 8 * 8;
    for (int r = 0; r < r8; r += 8)
        for (int c = 0; c < c8; c += 8) {
            const float *s = src + (int64_t)r * lds + c;
            __m256 a0 = _mm256_loadu_ps(s), a1 = _mm256_loadu_ps(s + lds), a2 = _mm256_loadu_ps(s + 2 * lds),
                   a3 = _mm256_loadu_ps(s + 3 * lds), a4 = _mm256_loadu_ps(s + 4 * lds),
                   a5 = _mm256_loadu_ps(s + 5 * lds), a6 = _mm256_loadu_ps(s + 6 * lds),
                   a7 = _mm256_loadu_ps(s + 7 * lds);
            __m256 t0 = _mm256_unpacklo_ps(a0, a1), t1 = _mm256_unpackhi_ps(a0, a1), t2 = _mm256_unpacklo_ps(a2, a3),
                   t3 = _mm256_unpackhi_ps(a2, a3), t4 = _mm256_unpacklo_ps(a4, a5), t5 = _mm256_unpackhi_ps(a4, a5),
                   t6 = _mm256_unpacklo_ps(a6, a7), t7 = _mm256_unpackhi_ps(a6, a7);
            __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE),
                   u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE),
                   u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE),
                   u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
            float *d = dst + (int64_t)c * ldd + r;
            _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
            _mm256_storeu_ps(d + ldd, _mm256_permute2f128_ps(u1, u5, 0x20));
            _mm256_storeu_ps(d + 2 * ldd, _mm256_permute2f128_ps(u2, u6, 0x20));
            _mm256_storeu_ps(d + 3 * ldd, _mm256_permute2f128_ps(u3, u7, 0x20));
            _mm256_storeu_ps(d + 4 * ldd, _mm256_permute2f128_ps(u0, u4, 0x31));
            _mm256_storeu_ps(d + 5 * ldd, _mm256_permute2f128_ps(u1, u5, 0x31));
            _mm256_storeu_ps(d + 6 * ldd, _mm256_permute2f128_ps(u2, u6, 0x31));
            _mm256_storeu_ps(d + 7 * ldd, _mm256_permute2f128_ps(u3, u7, 0x31));
        }
    rg_transpose_plain(dst, ldd, src, lds, 0, r8, c8, cols);
    rg_transpose_plain(dst, ldd, src, lds, r8, rows, 0, cols);
}
#endif

/* dst [cols, rows] (row stride ldd) = src [rows, cols] (row stride lds) transposed; avx false: the plain loop only
 * (the test's reference). */
static inline void rg_transpose_block(rg_real *restrict dst, int ldd, const rg_real *restrict src, int lds, int rows,
                                int cols, bool avx)
{
#ifdef RG_TRANSPOSE_AVX
    if (avx && __builtin_cpu_supports("avx")) {
        rg_transpose_avx(dst, ldd, src, lds, rows, cols);
        return;
    }
#endif
    rg_transpose_plain(dst, ldd, src, lds, 0, rows, 0, cols);
}

#endif
