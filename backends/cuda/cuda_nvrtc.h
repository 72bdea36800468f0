/* NVRTC, the CUDA runtime compiler (cuda_nvrtc.c): opened at run time
 * through the slice of nvrtc_api.h, and compiling CUDA C for one device.
 * Used by the runtime (cuda_runtime.c, through the state's
 * gpo_cuda_nvrtc), by the doctor (which NVRTC libgpuopt would use) and by
 * tests. Every function sets the detail and returns a status. */
#ifndef GPO_CUDA_NVRTC_H
#define GPO_CUDA_NVRTC_H

#include <stddef.h>

#include "nvrtc_api.h"

#define GPO_NVRTC_MAX_ARCHS 64
#define GPO_NVRTC_MAX_OPTIONS 128
typedef struct gpo_nvrtc {
    void *handle;
    gpo_nvrtc_api api;
    int major, minor;
    int archs[GPO_NVRTC_MAX_ARCHS]; /* ascending, "sm_XY" as XY */
    int n_archs;                    /* -1: this NVRTC cannot list them (before 11.2) */
    char library[512];              /* the path loaded */
} gpo_nvrtc;

/* What a compilation gives: a CUBIN (machine code for sm_XY) or PTX text
 * (NUL-terminated) that the driver compiles when loading it. */
typedef struct gpo_nvrtc_image {
    char *data;
    size_t size;
    int cubin;
    char target[32]; /* "sm_90", "compute_120" */
} gpo_nvrtc_image;

/* Opens `user_path` (the user's choice; NULL or "": none), else the newest
 * libnvrtc.so.* whose CUDA major is not above the driver's (driver_version
 * 13000; <= 0: any). */
gpuopt_status gpo_nvrtc_open(const char *user_path, int driver_version, gpo_nvrtc **out);
void gpo_nvrtc_close(gpo_nvrtc *nv);
/* Compiles `source` with `options` (blank-separated, quotes group) for the
 * device: to a CUBIN for its sm_XY when this NVRTC knows the architecture,
 * else to PTX of the newest one it knows below (GPUOPT_ERR_UNSUPPORTED for
 * a device older than all it knows); an -arch/--gpu-architecture option in
 * `options` wins. On
 * GPUOPT_ERR_BUILD *log holds NVRTC's log (malloc'd); on success it holds
 * warnings or NULL. `img` is the caller's (gpo_nvrtc_image_free). */
gpuopt_status gpo_nvrtc_compile(const gpo_nvrtc *nv, const char *source, const char *options,
                                int cc_major, int cc_minor, gpo_nvrtc_image *img, char **log);
void gpo_nvrtc_image_free(gpo_nvrtc_image *img);
/* "NVRTC 13.0". */
void gpo_nvrtc_version_text(const gpo_nvrtc *nv, char *out, size_t cap);

#endif
