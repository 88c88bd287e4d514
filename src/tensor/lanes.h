/* lanes.h: in-order reductions of up to RG_LANES (16) rows at once (internal), for the row maxima and sums of
 * attention's softmax and its backward (src/nn/attention.c).
 *
 * A group is RG_LANES rows of one buffer: row r starts at base + off[r] and has n[r] entries (n[r] = 0 for a lane
 * without a row; off[r] must still point into the buffer, e.g. the group's last row again). Only a row's n[r]
 * entries are read. Lane r of the result is exactly the plain loop over its row in index order:
 *   rg_lanes_max: m = -inf; for j < n[r]: if (row[j] > m) m = row[j]        (NaN entries skipped)
 *   rg_lanes_sum: s = 0;    for j < n[r]: s += row[j]
 *   rg_lanes_dot: s = 0;    for j < n[r]: s += a_row[j] * b_row[j]        (product rounded, then added: no FMA)
 * so the bits are those of the plain loop (a reordered sum would change them; the training runs' results are
 * checked bit for bit, results/bench/history/), except the sign of a NaN: when two NaNs meet, an add keeps one of them
 * by operand order, which the compiler chooses for the plain loop as well.
 * Why: the rows of a causal attention block are 1..T entries long, and one row's sum is a chain of dependent adds
 * that waits for each add's latency; 16 chains side by side, one per lane of an AVX-512 register, hide that
 * latency. The rows are read 16 entries at a time as a 16 x 16 tile, transposed in registers, and column c of the
 * tile (entry j0 + c of the 16 rows) is added in lane r where j0 + c < n[r] (a masked VADDPS / VMAXPS).
 * VMAXPS(x, m) is (x > m ? x : m), the plain loop's comparison, NaN and signed zeros alike (with denormals as
 * zeros under DAZ, which rg_ctx_new sets, as the plain loop's MAXSS sees them). The float32 build on a
 * CPU with AVX-512F takes that path (checked once per process); every other build and CPU runs the plain loops.
 * tests/tensor/test_lanes.c checks both against the plain loops bit for bit (NaN results as NaN). */
#ifndef RG_LANES_H
#define RG_LANES_H

#include <math.h>
#include <stdint.h>
#include "tensor.h"

#define RG_LANES 16

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(RG_DOUBLE)
#define RG_LANES_AVX512 1
#include <immintrin.h>
#endif

static inline void rg_lanes_max_plain(const rg_real *base, const int64_t *off, const int *n, rg_real *m)
{
    for (int r = 0; r < RG_LANES; r++) {
        const rg_real *row = base + off[r];
        rg_real v = -INFINITY;
        for (int j = 0; j < n[r]; j++)
            if (row[j] > v) v = row[j];
        m[r] = v;
    }
}

static inline void rg_lanes_sum_plain(const rg_real *base, const int64_t *off, const int *n, rg_real *s)
{
    for (int r = 0; r < RG_LANES; r++) {
        const rg_real *row = base + off[r];
        rg_real v = 0;
        for (int j = 0; j < n[r]; j++) v += row[j];
        s[r] = v;
    }
}

static inline void rg_lanes_dot_plain(const rg_real *a, const rg_real *b, const int64_t *off, const int *n,
                                      rg_real *s)
{
    for (int r = 0; r < RG_LANES; r++) {
        const rg_real *ar = a + off[r], *br = b + off[r];
        rg_real v = 0;
        for (int j = 0; j < n[r]; j++) v += ar[j] * br[j];
        s[r] = v;
    }
}

#ifdef RG_LANES_AVX512
/* __builtin_cpu_supports reads libgcc's CPU model, set once before main: no cache of our own (a static written by
 * the first caller would be a data race between the pool's threads). */
static inline bool rg_lanes_fast(void) { return __builtin_cpu_supports("avx512f"); }

/* The 16 x 16 tile t transposed in registers: afterwards t[c] holds, in lane r, what t[r] held in lane c (unpack,
 * then 128-bit lane shuffles: 64 shuffles for 256 entries). */
__attribute__((target("avx512f"), always_inline)) static inline void rg_lanes_transpose(__m512 t[RG_LANES])
{
    __m512 u[RG_LANES];
#pragma GCC unroll 16
    for (int i = 0; i < RG_LANES; i += 2) {
        u[i] = _mm512_unpacklo_ps(t[i], t[i + 1]);
        u[i + 1] = _mm512_unpackhi_ps(t[i], t[i + 1]);
    }
#pragma GCC unroll 16
    for (int i = 0; i < RG_LANES; i += 4) {
        t[i] = _mm512_shuffle_ps(u[i], u[i + 2], 0x44);
        t[i + 1] = _mm512_shuffle_ps(u[i], u[i + 2], 0xEE);
        t[i + 2] = _mm512_shuffle_ps(u[i + 1], u[i + 3], 0x44);
        t[i + 3] = _mm512_shuffle_ps(u[i + 1], u[i + 3], 0xEE);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 4; i++) {
        u[i] = _mm512_shuffle_f32x4(t[i], t[i + 4], 0x88);
        u[i + 4] = _mm512_shuffle_f32x4(t[i], t[i + 4], 0xDD);
        u[i + 8] = _mm512_shuffle_f32x4(t[i + 8], t[i + 12], 0x88);
        u[i + 12] = _mm512_shuffle_f32x4(t[i + 8], t[i + 12], 0xDD);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 8; i++) {
        t[i] = _mm512_shuffle_f32x4(u[i], u[i + 8], 0x88);
        t[i + 8] = _mm512_shuffle_f32x4(u[i], u[i + 8], 0xDD);
    }
}

/* Entries [j0, j0 + 16) of the group's rows (row r from p + off[r]) as a tile t[r]; a row's entries at or past
 * n[r] are 0 and are not read (masked loads). */
__attribute__((target("avx512f"), always_inline)) static inline void rg_lanes_load(const float *p, const int64_t *off,
                                                                                  const int *n, int j0,
                                                                                  __m512 t[RG_LANES])
{
#pragma GCC unroll 16
    for (int r = 0; r < RG_LANES; r++) {
        const int left = n[r] - j0;
        const __mmask16 k = left >= RG_LANES ? (__mmask16)0xFFFF : left > 0 ? (__mmask16)((1u << left) - 1) : 0;
        t[r] = _mm512_maskz_loadu_ps(k, p + off[r] + (left > 0 ? j0 : 0));
    }
}

/* The group's longest row. */
static inline int rg_lanes_longest(const int *n)
{
    int mx = 0;
    for (int r = 0; r < RG_LANES; r++)
        if (n[r] > mx) mx = n[r];
    return mx;
}

/* v after the transposed tile's columns c = 0..15, in order: column c (entry j0 + c of each row) is compared
 * (max true) or added in lane r where c < left[r] = n[r] - j0. */
__attribute__((target("avx512f"), always_inline)) static inline __m512 rg_lanes_columns(__m512 v,
                                                                                      const __m512 t[RG_LANES],
                                                                                      __m512i left, bool max)
{
#pragma GCC unroll 16
    for (int c = 0; c < RG_LANES; c++) {
        const __mmask16 k = _mm512_cmpgt_epi32_mask(left, _mm512_set1_epi32(c));
        v = max ? _mm512_mask_max_ps(v, k, t[c], v) : _mm512_mask_add_ps(v, k, v, t[c]);
    }
    return v;
}

/* Lane r: the maximum (max true) or the sum of its row's n[r] entries, in order. Each 16 x 16 tile of the rows is
 * transposed in registers (rg_lanes_transpose), so that column c of the tile is one vector: entry j0 + c of every
 * row, added (or compared) in lane r where j0 + c < n[r]. Until 4f33a32 a VGATHERDPS read each column, 2.5-3x
 * slower in cache on AMD Zen 4 (results/bench/history/, "The softmax's row reductions and exp without gathers ..."). */
__attribute__((target("avx512f"))) static inline void rg_lanes_reduce_avx512(const float *base, const int64_t *off,
                                                                             const int *n, float *out, bool max)
{
    const int nmax = rg_lanes_longest(n);
    const __m512i nv = _mm512_loadu_si512(n);
    __m512 v = max ? _mm512_set1_ps(-INFINITY) : _mm512_setzero_ps();
    for (int j0 = 0; j0 < nmax; j0 += RG_LANES) {
        __m512 t[RG_LANES];
        rg_lanes_load(base, off, n, j0, t);
        rg_lanes_transpose(t);
        v = rg_lanes_columns(v, t, _mm512_sub_epi32(nv, _mm512_set1_epi32(j0)), max);
    }
    _mm512_storeu_ps(out, v);
}

/* Lane r: the in-order sum of a_row[j] * b_row[j] over its n[r] entries; each product is rounded before the add
 * (computed on the rows' tiles before they are transposed). */
__attribute__((target("avx512f"))) static inline void rg_lanes_dot_avx512(const float *a, const float *b,
                                                                          const int64_t *off, const int *n, float *s)
{
    const int nmax = rg_lanes_longest(n);
    const __m512i nv = _mm512_loadu_si512(n);
    __m512 v = _mm512_setzero_ps();
    for (int j0 = 0; j0 < nmax; j0 += RG_LANES) {
        __m512 t[RG_LANES], u[RG_LANES];
        rg_lanes_load(a, off, n, j0, t);
        rg_lanes_load(b, off, n, j0, u);
#pragma GCC unroll 16
        for (int r = 0; r < RG_LANES; r++) t[r] = _mm512_mul_ps(t[r], u[r]);
        rg_lanes_transpose(t);
        v = rg_lanes_columns(v, t, _mm512_sub_epi32(nv, _mm512_set1_epi32(j0)), false);
    }
    _mm512_storeu_ps(s, v);
}
#endif

static inline void rg_lanes_max(const rg_real *base, const int64_t *off, const int *n, rg_real *m)
{
#ifdef RG_LANES_AVX512
    if (rg_lanes_fast()) { rg_lanes_reduce_avx512(base, off, n, m, true); return; }
#endif
    rg_lanes_max_plain(base, off, n, m);
}

static inline void rg_lanes_sum(const rg_real *base, const int64_t *off, const int *n, rg_real *s)
{
#ifdef RG_LANES_AVX512
    if (rg_lanes_fast()) { rg_lanes_reduce_avx512(base, off, n, s, false); return; }
#endif
    rg_lanes_sum_plain(base, off, n, s);
}

static inline void rg_lanes_dot(const rg_real *a, const rg_real *b, const int64_t *off, const int *n, rg_real *s)
{
#ifdef RG_LANES_AVX512
    if (rg_lanes_fast()) { rg_lanes_dot_avx512(a, b, off, n, s); return; }
#endif
    rg_lanes_dot_plain(a, b, off, n, s);
}

#endif
