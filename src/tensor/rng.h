/* rng.h: the framework's seedable random number generator: PCG32 (O'Neill 2014, "PCG: A Family of Simple Fast
 * Space-Efficient Statistically Good Algorithms for Random Number Generation", pcg32 = PCG-XSH-RR 64/32 with the
 * reference seeding of pcg32_srandom_r). Its whole state is two uint64 values, saved and restored exactly. */
#ifndef RG_RNG_H
#define RG_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t state;
    uint64_t inc; /* stream selector, always odd */
} rg_rng;

/* Seeds as pcg32_srandom_r(rng, seed, stream). */
void rg_rng_seed(rg_rng *r, uint64_t seed, uint64_t stream);
/* The next 32 random bits. */
uint32_t rg_rng_u32(rg_rng *r);
/* Uniform integer in [0, n), n >= 1, unbiased (rejection, as pcg32_boundedrand_r). */
uint32_t rg_rng_below(rg_rng *r, uint32_t n);
/* Uniform double in [0, 1) with 53 random bits (two draws). */
double rg_rng_uniform(rg_rng *r);
/* Standard normal sample, Box-Muller (two uniforms per sample, no cached spare: the state alone defines the
 * stream). */
double rg_rng_normal(rg_rng *r);

#endif
