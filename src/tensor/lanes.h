/* lanes.h: in-order reductions of up to RG_LANES (16) rows at once (internal), for the row maxima and sums of
 * attention's softmax and its backward (src/nn/attention.c).
 *
 * A group is RG_LANES rows of one buffer: row r starts at base + off[r] and has n[r] entries (n[r] = 0 for a lane
 * without a row; off[r] must still point at readable memory, e.g. the group's last row again; every off[r] - off[0]
 * + n[r] below 2^31). Lane r of the result is exactly the plain loop over its row in index order:
 *   rg_lanes_max: m = -inf; for j < n[r]: if (row[j] > m) m = row[j]        (NaN entries skipped)
 *   rg_lanes_sum: s = 0;    for j < n[r]: s += row[j]
 *   rg_lanes_dot: s = 0;    for j < n[r]: s += a_row[j] * b_row[j]        (product rounded, then added: no FMA)
 * so the bits are those of the plain loop (a reordered sum would change them; the training runs' results are
 * checked bit for bit, bench/README.md), except the sign of a NaN: when two NaNs meet, an add keeps one of them
 * by operand order, which the compiler chooses for the plain loop as well. Why: the rows of a causal attention block are 1..T entries long, and one
 * row's sum is a chain of dependent adds that waits for each add's latency; 16 chains side by side, one per lane of
 * an AVX-512 register (VGATHERDPS reads entry j of the 16 rows, a masked VADDPS / VMAXPS adds it where j < n[r]),
 * hide that latency. VMAXPS(x, m) is (x > m ? x : m), the plain loop's comparison, NaN and signed zeros alike.
 * The float32 build on a CPU with AVX-512F takes that path (checked once per process); every other build and CPU
 * runs the plain loops. tests/test_lanes.c checks both against the plain loops bit for bit (NaN results as NaN). */
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

/* The group's gather indices (offsets from off[0]) and its longest row. */
__attribute__((target("avx512f"))) static inline __m512i rg_lanes_index(const int64_t *off, const int *n, int *nmax)
{
    int idx[RG_LANES], mx = 0;
    for (int r = 0; r < RG_LANES; r++) {
        idx[r] = (int)(off[r] - off[0]);
        if (n[r] > mx) mx = n[r];
    }
    *nmax = mx;
    return _mm512_loadu_si512(idx);
}

/* Lane r: the maximum (max true) or the sum of its row's n[r] entries, in order. */
__attribute__((target("avx512f"))) static inline void rg_lanes_reduce_avx512(const float *base, const int64_t *off,
                                                                             const int *n, float *out, bool max)
{
    int nmax;
    const __m512i idx = rg_lanes_index(off, n, &nmax), nv = _mm512_loadu_si512(n);
    const float *p = base + off[0];
    __m512 v = max ? _mm512_set1_ps(-INFINITY) : _mm512_setzero_ps();
    for (int j = 0; j < nmax; j++) {
        __mmask16 k = _mm512_cmpgt_epi32_mask(nv, _mm512_set1_epi32(j));
        __m512 x = _mm512_mask_i32gather_ps(v, k, idx, p + j, 4);
        v = max ? _mm512_mask_max_ps(v, k, x, v) : _mm512_mask_add_ps(v, k, v, x);
    }
    _mm512_storeu_ps(out, v);
}

__attribute__((target("avx512f"))) static inline void rg_lanes_dot_avx512(const float *a, const float *b,
                                                                          const int64_t *off, const int *n, float *s)
{
    int nmax;
    const __m512i idx = rg_lanes_index(off, n, &nmax), nv = _mm512_loadu_si512(n);
    const float *pa = a + off[0], *pb = b + off[0];
    __m512 v = _mm512_setzero_ps();
    for (int j = 0; j < nmax; j++) {
        __mmask16 k = _mm512_cmpgt_epi32_mask(nv, _mm512_set1_epi32(j));
        __m512 x = _mm512_mask_i32gather_ps(v, k, idx, pa + j, 4);
        __m512 y = _mm512_mask_i32gather_ps(v, k, idx, pb + j, 4);
        v = _mm512_mask_add_ps(v, k, v, _mm512_mul_ps(x, y));
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
