/* rng.c: PCG32 (see rng.h for the source of the algorithm). */
#include "rng.h"

#include <math.h>

#define PCG_MULT 6364136223846793005ULL

uint32_t rg_rng_u32(rg_rng *r)
{
    uint64_t old = r->state;
    r->state = old * PCG_MULT + r->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31));
}

void rg_rng_seed(rg_rng *r, uint64_t seed, uint64_t stream)
{
    r->state = 0;
    r->inc = (stream << 1u) | 1u;
    rg_rng_u32(r);
    r->state += seed;
    rg_rng_u32(r);
}

uint32_t rg_rng_below(rg_rng *r, uint32_t n)
{
    uint32_t threshold = (uint32_t)(-n) % n;
    for (;;) {
        uint32_t v = rg_rng_u32(r);
        if (v >= threshold) return v % n;
    }
}

double rg_rng_uniform(rg_rng *r)
{
    uint64_t hi = rg_rng_u32(r) >> 5, lo = rg_rng_u32(r) >> 6; /* 27 + 26 bits */
    return (double)(hi * 67108864ULL + lo) / 9007199254740992.0;
}

double rg_rng_normal(rg_rng *r)
{
    double u1 = rg_rng_uniform(r), u2 = rg_rng_uniform(r);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
}
