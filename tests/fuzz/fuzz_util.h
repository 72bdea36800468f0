/* Helpers the fuzz targets share: a scratch directory for the run, files
 * written into it, a check that aborts with a message (libFuzzer saves the
 * input), and a log sink that formats every message and drops it. */
#ifndef GPO_FUZZ_UTIL_H
#define GPO_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* A directory of this process ($TMPDIR, else /dev/shm, else /tmp), created
 * on first use, removed at exit. */
const char *fz_scratch(void);

/* Writes `len` bytes to scratch/name; returns the full path (static per
 * name slot 0..3) or NULL. */
const char *fz_write(int slot, const char *name, const void *data, size_t len);

/* Removes everything under `dir` (not dir itself). */
void fz_empty_dir(const char *dir);

/* The input as a NUL-terminated string (malloc'd). */
char *fz_text(const uint8_t *data, size_t size);

/* A gpuopt_log_fn that drops the message (the formatting has run). */
void fz_log_sink(int32_t level, const char *message, void *user);

/* Aborts with the message when `ok` is false: a finding. */
void fz_check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
