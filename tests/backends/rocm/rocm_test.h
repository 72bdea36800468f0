/* Helpers for the ROCm backend tests: a hand-built backend environment, the
 * HIP test double's controls, and one load + enumerate run. */
#ifndef GPO_ROCM_TEST_H
#define GPO_ROCM_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "backend_env.h"
#include "backend.h"
#include "rocm/rocm_backend.h"

typedef struct rocm_env {
    gpo_config cfg;
    gpo_logger log;
    gpo_backend_env env;
} rocm_env;

/* A zeroed configuration with `sysfs_root` (NULL: a root that does not
 * exist, so no KFD topology) and the HIP library `hip_path` (NULL: the
 * default sonames). */
void rocm_env_init(rocm_env *e, const char *sysfs_root, const char *hip_path);

/* Unsets the variables that change what HIP or KFD show (visibility, WGP
 * mode, the fake's version override): a group setup for every test. */
int rocm_test_clean_env(void **state);

/* Path of the test double of HIP major 5, 6 or 7. */
const char *fake_hip_path(int major);

/* ':'-joined paths of tests/fakes/hip/devices/<name>.json for each name of
 * the NULL-terminated list (static buffer). */
const char *fake_devices(const char *const *names);

/* Sets the fake's environment (NULL unsets) and makes fake `major` re-read
 * it. Returns its device count. */
int fake_reset(int major, const char *devices, const char *fail);

/* The fake's count of injected failures since its last reset. */
int fake_faults_fired(int major);

/* The fake's emulated objects still alive (memory, modules, events,
 * pinned memory), and hiprtc programs not destroyed. */
int fake_live(int major);
int fake_programs_live(const char *hiprtc_path);

/* Path of the standalone hiprtc double of major 6 or 7 (libhiprtc.so.N). */
const char *fake_hiprtc_lib(int major);
/* The hiprtc a test of HIP major `major` should name: the runtime double
 * itself for 5 and 6 (which export hiprtc), libhiprtc.so.7 for 7. */
const char *fake_hiprtc_for(int major);
/* Re-reads GPUOPT_FAKE_HIP_FAIL in the standalone hiprtc double (the
 * runtime doubles do it in fake_reset). */
void fake_hiprtc_reset(const char *path);
int fake_hiprtc_faults_fired(const char *path);

/* Calls the double's hipSetDevice / hipGetDevice (the calling thread's
 * current device). */
int fake_set_device(int major, int device);
int fake_get_device(int major);

/* The double's trace of calls doing device work since its last reset
 * (fake_hip_rt.c): how many, and the i-th one's name (NULL past the end),
 * whether it takes a stream and which, and the calling thread's device. */
long fake_trace_length(int major);
const char *fake_trace(int major, long i, int *has_stream, const void **stream, int *device);
/* The flags a live stream of the double was made with, -1 for none. */
int fake_stream_flags(int major, const void *stream);

/* Sets the hiprtc library of a test environment (NULL: the sonames). */
void rocm_env_set_hiprtc(rocm_env *e, const char *path);

/* The fixture root tests/fixtures/kfd/<name> (static buffer per slot 0..3). */
const char *kfd_root(int slot, const char *name);

/* One run: load, and enumerate when load left a state. */
typedef struct rocm_run {
    gpuopt_status load;
    gpuopt_status enumerate; /* GPUOPT_ERR_UNAVAILABLE when not called */
    void *state;
    gpo_backend_report report;
    gpo_device_list list;
    char detail[1024]; /* gpuopt_last_error after load */
} rocm_run;

void rocm_run_do(rocm_run *r, const rocm_env *e);
/* Fills routes[0] the way the core does, for memory_live. */
void rocm_route_of(const rocm_run *r, size_t i, gpo_route *route);
/* The ops table's memory_live (no context may be created), its free
 * memory into *free_bytes (0 on failure). */
gpuopt_status rocm_free(void *state, const gpo_route *route, uint64_t *free_bytes);
void rocm_run_free(rocm_run *r);

/* The "rocm" details object of a device, or NULL. */
const cJSON *rocm_details(const gpuopt_device *dev);
/* 1 when a note of the device's details contains `text`. */
int rocm_has_note(const gpuopt_device *dev, const char *text);

#endif
