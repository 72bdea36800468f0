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

/* GPUOPT_ERR_STRUCT_SIZE, saying how to fix it, for a caller's struct of
 * `type` whose struct_size `have` is below the first released layout;
 * `fn` (or NULL) names the function. GPO_CHECK_STRUCT_SIZE returns it
 * from the calling function. */
gpuopt_status gpo_fail_struct_size(const char *fn, const char *type, size_t have, size_t size);
#define GPO_CHECK_STRUCT_SIZE(fn, type, have, first)                                               \
    do {                                                                                           \
        if ((have) < (first))                                                                      \
            return gpo_fail_struct_size(fn, #type, have, sizeof(type));                            \
    } while (0)

/* The entry of a public function that takes a handle `h` (called `name` in
 * words) and writes `*out`: clears the detail, empties `*out`, and returns
 * GPUOPT_ERR_INVALID_ARGUMENT, naming the NULL one after `prefix`, when
 * either is NULL. */
#define GPO_ENTRY_OUT(prefix, h, name, out, empty)                                                 \
    do {                                                                                           \
        gpo_detail_clear();                                                                        \
        if (out)                                                                                   \
            *(out) = (empty);                                                                      \
        if (!(h) || !(out))                                                                        \
            return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, prefix "%s is NULL", (h) ? #out : name);  \
    } while (0)

#endif
