/* Per-thread detail of the last failure (what gpuopt_last_error returns).
 * Set it where the failure is understood, once, in words; return the status. */
#ifndef GPO_DETAIL_H
#define GPO_DETAIL_H

#include "gpuopt/gpuopt.h"

#if defined(__GNUC__)
#define GPO_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define GPO_PRINTF(fmt, args)
#endif

/* Replaces the calling thread's detail string (truncated at 1 KiB). */
void gpo_detail_set(const char *fmt, ...) GPO_PRINTF(1, 2);

/* Empties it. Entry points call this first so a stale detail never leaks
 * into a later failure's report. */
void gpo_detail_clear(void);

/* The current detail; "" when none. */
const char *gpo_detail_get(void);

/* Sets the detail and returns `status`: `return gpo_fail(GPUOPT_ERR_X, "...")`. */
gpuopt_status gpo_fail(gpuopt_status status, const char *fmt, ...) GPO_PRINTF(2, 3);

#endif
