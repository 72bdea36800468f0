/* The tuner's pseudo-random numbers: xoshiro256** (Blackman and Vigna,
 * "Scrambled linear pseudorandom number generators", 2021), its 256-bit
 * state filled from the user's 64-bit seed by splitmix64, as the authors
 * recommend. The same seed gives the same sequence on every platform, which
 * is what makes a tuning run reproducible (CLTune seeds from the clock and
 * cannot be replayed). */
#ifndef GPO_TUNE_RNG_H
#define GPO_TUNE_RNG_H

#include <stdint.h>

typedef struct gpo_rng {
    uint64_t s[4];
} gpo_rng;

void gpo_rng_seed(gpo_rng *r, uint64_t seed);
uint64_t gpo_rng_next(gpo_rng *r);
/* Uniform in [0, n), unbiased (Lemire's multiply-and-reject); 0 when n is 0. */
uint64_t gpo_rng_below(gpo_rng *r, uint64_t n);
/* Uniform in [0, 1) with 53 random bits. */
double gpo_rng_unit(gpo_rng *r);

#endif
