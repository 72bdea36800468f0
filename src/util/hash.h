/* A small, stable 64-bit hash for cache keys (space hash, source and option
 * hashes). FNV-1a over the bytes, finished with the murmur3 64-bit mixer so
 * that nearby inputs land far apart. Not cryptographic: it guards against
 * accidents (a changed space or source), not against an adversary.
 *
 * Stability: the value of a given input never changes between runs,
 * machines or byte orders (integers are fed little-endian). Changing the
 * function changes every cache key, so it belongs to the cache schema. */
#ifndef GPO_HASH_H
#define GPO_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct gpo_hash {
    uint64_t state;
} gpo_hash;

void gpo_hash_init(gpo_hash *h);
/* A string with its length first, so ("ab","c") and ("a","bc") differ.
 * NULL hashes like an absent value, distinct from "". */
void gpo_hash_str(gpo_hash *h, const char *s);
void gpo_hash_u64(gpo_hash *h, uint64_t v);
uint64_t gpo_hash_final(const gpo_hash *h);

/* One-shot over a buffer. */
uint64_t gpo_hash64(const void *data, size_t len);

/* The murmur3 finaliser: a bijective 64-bit mix, also used to spread
 * integer keys in hash tables. */
uint64_t gpo_hash_mix64(uint64_t x);

#endif
