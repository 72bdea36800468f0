/* hiprtc, opened at run time (rocm_hiprtc.c): finding the library,
 * compiling HIP source for one gfx target, and the guard that keeps a
 * target the compiler does not know away from it. Used by the runtime ops
 * (through the state's lazy open, rocm_state.h). */
#ifndef GPO_ROCM_HIPRTC_H
#define GPO_ROCM_HIPRTC_H

#include <stddef.h>

#include "gpuopt/gpuopt.h"
#include "hip_rt_api.h"

typedef struct gpo_hiprtc {
    void *handle;
    gpo_hiprtc_fns fn;
    int in_runtime;    /* 1: the functions come from libamdhip64 itself (ROCm 5, 6) */
    int version_major; /* hiprtcVersion, -1 unknown */
    int version_minor;
    char library[512]; /* path of what provides the functions */
    /* comgr's ISA list (the compiler hiprtc drives), NULL when no comgr
     * could be opened. */
    gpo_comgr_isa_count_fn isa_count;
    gpo_comgr_isa_name_fn isa_name;
    char comgr[512];
} gpo_hiprtc;

/* Opens hiprtc: `path` (the user's GPUOPT_HIPRTC_LIBRARY / "hiprtc"
 * library) when given, else libhiprtc.so.<hip_major> and the other majors
 * newest first, else `hip_handle` when the HIP runtime exports the hiprtc
 * functions itself (ROCm 5 and 6). Sets the detail and returns
 * GPUOPT_ERR_UNAVAILABLE when none can be used. */
gpuopt_status gpo_hiprtc_open(gpo_hiprtc *rtc, const char *path, void *hip_handle, int hip_major);

/* 1: comgr lists `target` (compared without feature suffixes); 0: it
 * does not (`known`, may be NULL, then lists what it knows,
 * comma-separated); -1: no comgr to ask. */
int gpo_hiprtc_target_known(const gpo_hiprtc *rtc, const char *target, char *known, size_t cap);

/* Compiles HIP `source` for `target` (a gfx target ID) with the extra
 * `options` (whitespace-separated; may be NULL; must not name a target).
 * On success *code / *size hold the code object (malloc'd) and *log the
 * compiler's warnings or NULL. On failure: GPUOPT_ERR_BUILD with *log the
 * compiler's full log (malloc'd), GPUOPT_ERR_UNSUPPORTED for a target
 * comgr does not know (compiling it aborts some comgr releases),
 * GPUOPT_ERR_INVALID_ARGUMENT for a target or options it cannot take,
 * GPUOPT_ERR_NO_MEMORY or GPUOPT_ERR_DRIVER; the detail says which. */
gpuopt_status gpo_hiprtc_compile(const gpo_hiprtc *rtc, const char *source, const char *target,
                                 const char *options, void **code, size_t *size, char **log);

/* "hiprtc 6.2 (libhiprtc.so.6)" */
void gpo_hiprtc_describe(const gpo_hiprtc *rtc, char *out, size_t cap);

#endif
