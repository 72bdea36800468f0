/* The HIP runtime (libamdhip64), opened at run time (rocm_hip.c): loading,
 * versions, initialisation, per-device queries and free memory, every
 * result turned into words once. Used by the backend's load and enumerate
 * and by its runtime ops. */
#ifndef GPO_ROCM_HIP_H
#define GPO_ROCM_HIP_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "gpuopt/gpuopt.h"
#include "hip_api.h"

typedef struct gpo_hip {
    void *handle;
    gpo_hip_fns fn;
    const gpo_hip_abi *abi;
    int abi_extrapolated;
    int runtime_version; /* hipRuntimeGetVersion, -1 unknown */
    int driver_version;  /* hipDriverGetVersion, -1 unknown */
    int device_count;
    char library[512]; /* path actually loaded */
    char note[320];    /* a call that failed without stopping the load */
} gpo_hip;

/* Why gpo_hip_open failed, so the backend can pick status and wording. */
typedef enum gpo_hip_failure {
    GPO_HIP_OK = 0,
    GPO_HIP_NOT_FOUND = 1, /* no library could be opened */
    GPO_HIP_BROKEN = 2,    /* opened, but symbols missing or a call failed */
    GPO_HIP_TOO_OLD = 3,   /* HIP 4.x or older */
    GPO_HIP_NO_DEVICE = 4, /* the runtime sees no GPU */
    GPO_HIP_OLD_DRIVER = 5 /* hipErrorInsufficientDriver */
} gpo_hip_failure;

/* Opens the runtime (`path`, else libamdhip64.so.7/.6/.5/.so), resolves
 * the symbols, reads the versions, initialises and counts devices. Fills
 * `reason` in words on failure and returns the kind. No device context is
 * created. On failure hip->handle may stay open (never dlclose'd). */
gpo_hip_failure gpo_hip_open(gpo_hip *hip, const char *path, char *reason, size_t cap);

/* The process that initialised the HIP runtime through this library, 0
 * when none did. */
int gpo_hip_init_pid(void);

/* Words for a HIP error: "hipErrorNoDevice (100): no ROCm-capable device is
 * detected" (the runtime's own name and text when it has them; `hip` may be
 * NULL for ours alone). */
void gpo_hip_error_text(const gpo_hip *hip, gpo_hip_error e, char *out, size_t cap);

/* What HIP says about one device. Values the runtime refused are -1 / 0 / ""
 * and each refusal is appended to `notes` (a cJSON array, may be NULL). */
typedef struct gpo_hip_device {
    char name[256];
    char target[64];              /* gcnArchName: "gfx90a:sramecc+:xnack-" */
    int attr[GPO_HIP_ATTR_COUNT]; /* -1 when unknown */
    uint64_t total_mem;
    char uuid[32]; /* "GPU-..." or "" */
} gpo_hip_device;

void gpo_hip_query(const gpo_hip *hip, int ordinal, gpo_hip_device *out, cJSON *notes);

/* Free and total memory of one device: hipMemGetInfo on the device made
 * current with hipSetDevice, the calling thread's previous device restored.
 * total_bytes may be NULL. */
gpuopt_status gpo_hip_memory(const gpo_hip *hip, int ordinal, uint64_t *free_bytes,
                             uint64_t *total_bytes);

/* The target ID HIP reports for a device ("gfx90a:sramecc+:xnack-"),
 * read from the props struct of the runtime's major; "" when unknown. */
void gpo_hip_target(const gpo_hip *hip, int ordinal, char *out, size_t cap);

#endif
