/* Shared by the tuning-cache tests: fresh directories under the build
 * tree, a device and keys to vary, a clock tests move, a log collector. */
#ifndef GPO_TEST_CACHE_UTIL_H
#define GPO_TEST_CACHE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "util/log.h"
#include "support/testutil.h"
#include "cache/cache.h"
#include "cache/dir.h"
#include "cache/doc.h"
#include "cache/file.h"
#include "util/fs.h"

/* An empty directory "<build>/tests/tune-<pid>/<name>" (removed first). */
const char *tc_dir(const char *name);
/* Removes this process's directories (a cmocka group teardown). */
int tc_cleanup(void **state);

/* A GPU fingerprint and a key on it ("kernel" on "opencl"). The key's
 * strings are copies a test may change. */
typedef struct tc_key {
    char kind[32], backend[16], arch[32], source[32], options[32], space[32], workload[64];
    int32_t compute_units;
    gpo_cache_key key;
} tc_key;

void tc_device(gpo_cache_device *dev);
gpo_cache_key *tc_key_init(tc_key *k, const char *workload);
/* Re-points k->key at the strings after a test edits them. */
gpo_cache_key *tc_key_sync(tc_key *k);

/* Seconds a test sets; gpo_cache_options.clock = tc_clock. */
extern int64_t tc_now;
int64_t tc_clock(void);

/* Options with the test clock and the given bounds (0: defaults), saving
 * a tune's candidates after each one. */
gpo_cache_options tc_options(uint32_t max_entries, uint64_t max_bytes);

/* A logger at WARN (or INFO) into `cap`. */
gpo_logger tc_logger(log_capture *cap, int32_t level);

/* {"TILE": tile, "VEC": vec} (caller deletes). */
cJSON *tc_params(int tile, int vec);
gpo_cache_stats tc_stats(double median_ns);

/* A tune of `key` with `n` candidates (TILE 1..n, median 1000*TILE), best
 * and runner-up the two fastest, finished. 0 on success. */
int tc_tune(gpo_cache *c, const gpo_cache_key *key, const gpo_cache_soft *soft, int n);
/* A finished record with no search behind it, holding `payload`. */
int tc_put(gpo_cache *c, const gpo_cache_key *key, const gpo_cache_soft *soft,
           const cJSON *payload);

/* The file's bytes (malloc'd, NUL-terminated) or NULL. */
char *tc_read(const char *path, size_t *len);
/* Writes a whole file. */
void tc_write(const char *path, const char *text);
/* Replaces the first `from` in the file with `to` (fails the test when
 * `from` is not there). */
void tc_edit(const char *path, const char *from, const char *to);
/* Closes `c` and opens the same device's cache in the same directory
 * again (another process, as far as the file is concerned). */
gpo_cache *tc_reopen(gpo_cache *c, gpo_cache_options *o, gpo_logger *log);
/* Appends raw bytes to a file. */
void tc_append_raw(const char *path, const char *bytes);
/* Files under dir whose names contain `part`. */
int tc_count_files(const char *dir, const char *part);
/* gpo_cache_dir_verify of dir: its "ok", and the first file's numbers
 * (entries, candidates, unfinished; NULL when not wanted). */
int tc_verify(const char *dir, int *entries, int *candidates, int *unfinished);

#endif
