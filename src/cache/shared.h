/* The shared, read-only layer of the tuning cache (shared.c): a directory
 * the fleet fills (gpuopt cache import --all on one machine, then an NFS
 * export or a copied ConfigMap) and every node reads without writing
 * there. A local miss asks it; what it answers is merged into the local
 * file first (cache.c), so a hit is then an ordinary local one: its use,
 * its re-verification after a driver change, its later replacement. */
#ifndef GPO_CACHE_SHARED_H
#define GPO_CACHE_SHARED_H

#include <stddef.h>
#include <stdint.h>

#include "cache/doc.h"
#include "cache/key.h"

/* Finds the record of `hash` (whose canonical hard key is `canon`) in the
 * device files of `dir` whose header names a device of dev's kind
 * (gpo_cache_device_same_kind), in name order. GPUOPT_OK with *out (an
 * initialised, empty document) holding that file with only this record
 * read; GPUOPT_ERR_NOT_FOUND; GPUOPT_ERR_IO with `why` when the directory
 * is not one to trust (owned by this user or root, written by nobody
 * else); GPUOPT_ERR_NO_MEMORY. Files that do not read are passed over. */
gpuopt_status gpo_cache_shared_find(const char *dir, const gpo_cache_device *dev, uint64_t hash,
                                    const char *canon, gpo_cache_doc *out, char *why, size_t cap);

#endif
