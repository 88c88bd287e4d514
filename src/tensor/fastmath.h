/* fastmath.h: elementwise helpers for the hot loops (internal). rg_tanh_fast is tanh for the float32 build as a
 * rational function that the compiler vectorizes, unlike libm's tanhf (which made GELU half of a training step):
 * the [13/6] minimax approximation x P(x^2) / Q(x^2) on [-7.905, 7.905] used by Eigen
 * (generic_fast_tanh_float), clamped outside; max |error| 3.9e-7 over [-9, 9] (tests/tensor/test_tensor.c checks it).
 * The float64 build (gradient checks) uses libm's tanh. RG_VECTORIZE compiles a loop for AVX-512 (avx512f), for
 * AVX2 with FMA (arch=x86-64-v3: Haswell and later, AMD Zen), for AVX2 alone and for the baseline, and picks at run
 * time (GCC function multi-versioning; the resolver takes the first clone of that list the CPU supports). GCC's
 * "avx2" target does not include FMA, so without the x86-64-v3 clone an AVX2-only CPU (AMD EPYC Zen 3) ran every
 * C99 fma() of rg_expf (expf.h) as a call into libm, one per element, and the loops around it did not vectorize.
 * The clones compute the same bits: -std=c11 contracts no multiply-add into an FMA (checked in the x86-64-v3
 * clone's code: its only vfmadd are rg_expf's fma() calls), fma() is exactly rounded whether it is an instruction
 * or libm's function, and without -ffast-math no reduction is reordered; only the number of elements per
 * instruction differs (train_order's losses were checked bit for bit after the avx512f clone was added, and its
 * train.csv and report cells after the x86-64-v3 clone: results/bench/history/). */
#ifndef RG_FASTMATH_H
#define RG_FASTMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include "tensor.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define RG_VECTORIZE __attribute__((target_clones("avx512f", "arch=x86-64-v3", "avx2", "default"), optimize("O3")))
#else
#define RG_VECTORIZE
#endif

static inline rg_real rg_tanh_fast(rg_real x)
{
#ifdef RG_DOUBLE
    return tanh(x);
#else
    const float clamp = 7.90531110763549805f;
    x = x > clamp ? clamp : x < -clamp ? -clamp : x;
    float x2 = x * x;
    float p = -2.76076847742355e-16f;
    p = p * x2 + 2.00018790482477e-13f;
    p = p * x2 + -8.60467152213735e-11f;
    p = p * x2 + 5.12229709037114e-08f;
    p = p * x2 + 1.48572235717979e-05f;
    p = p * x2 + 6.37261928875436e-04f;
    p = p * x2 + 4.89352455891786e-03f;
    float q = 1.19825839466702e-06f;
    q = q * x2 + 1.18534705686654e-04f;
    q = q * x2 + 2.26843463243900e-03f;
    q = q * x2 + 4.89352518554385e-03f;
    return x * p / q;
#endif
}

/* x rounded to bfloat16 (the upper 16 bits of a float32): round to nearest, ties to even; a NaN stays a quiet NaN;
 * a subnormal input becomes +-0, as AVX512_BF16's VCVTNEPS2BF16 does (it treats input denormals as zero), so this
 * scalar form, which the compiler vectorizes, gives the instruction's bits for every input (tests/tensor/test_bf16.c).
 * rg_bf16_from_float and rg_bf16_rows (dnnl.c) use it where the CPU has no AVX512_BF16. */
static inline uint16_t rg_bf16_round(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7F800000u) == 0) u &= 0x80000000u;
    uint32_t r = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
    return (uint16_t)((u & 0x7FFFFFFFu) > 0x7F800000u ? (u >> 16) | 0x40u : r);
}

#endif
