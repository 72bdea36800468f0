/* xoshiro256** and splitmix64, written from the published algorithms
 * (prng.di.unimi.it). */
#include "rng.h"

/* GCC and Clang both have it; __extension__ keeps -Wpedantic quiet. */
__extension__ typedef unsigned __int128 gpo_u128;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void gpo_rng_seed(gpo_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

uint64_t gpo_rng_next(gpo_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t gpo_rng_below(gpo_rng *r, uint64_t n)
{
    if (n == 0)
        return 0;
    /* Lemire, "Fast random integer generation in an interval" (2019): the
     * high half of a 128-bit product, rejecting the few low halves that
     * would bias it. */
    gpo_u128 m = (gpo_u128)gpo_rng_next(r) * n;
    uint64_t low = (uint64_t)m;
    if (low < n) {
        uint64_t threshold = (0 - n) % n;
        while (low < threshold) {
            m = (gpo_u128)gpo_rng_next(r) * n;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

double gpo_rng_unit(gpo_rng *r)
{
    return (double)(gpo_rng_next(r) >> 11) * 0x1.0p-53;
}
