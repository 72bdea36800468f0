/* FNV-1a 64 (Fowler, Noll, Vo; constants from the FNV reference page) plus
 * the murmur3 fmix64 finaliser (Appleby, MurmurHash3). */
#include "hash.h"

#include <string.h>

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

void gpo_hash_init(gpo_hash *h)
{
    h->state = FNV_OFFSET;
}

static void hash_bytes(gpo_hash *h, const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t s = h->state;
    for (size_t i = 0; i < len; i++) {
        s ^= p[i];
        s *= FNV_PRIME;
    }
    h->state = s;
}

void gpo_hash_u64(gpo_hash *h, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    hash_bytes(h, b, sizeof b);
}

void gpo_hash_str(gpo_hash *h, const char *s)
{
    if (!s) {
        gpo_hash_u64(h, UINT64_MAX);
        return;
    }
    size_t n = strlen(s);
    gpo_hash_u64(h, (uint64_t)n);
    hash_bytes(h, s, n);
}

uint64_t gpo_hash_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

uint64_t gpo_hash_final(const gpo_hash *h)
{
    return gpo_hash_mix64(h->state);
}

uint64_t gpo_hash64(const void *data, size_t len)
{
    gpo_hash h;
    gpo_hash_init(&h);
    if (data)
        hash_bytes(&h, data, len);
    return gpo_hash_final(&h);
}
