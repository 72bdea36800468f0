/* Shared set-up of the OpenCL backend tests: a hand-built backend
 * environment (zeroed configuration, live file system), load + enumerate,
 * and the test-double loader's control functions. */
#ifndef GPO_OCL_TEST_H
#define GPO_OCL_TEST_H

#include <stddef.h>

#include "backend_env.h"
#include "backend.h"
#include "config.h"
#include "device.h"

typedef struct ocl_fx {
    gpo_config *cfg;
    gpo_logger log;
    gpo_backend_env env;
    void *state;
    gpo_backend_report report;
    gpo_device_list list;
    gpuopt_status load_status;
} ocl_fx;

extern const gpo_backend gpo_backend_opencl;

/* `library` NULL: the default soname. */
void ocl_fx_init(ocl_fx *fx, const char *library);
/* Loads, and enumerates when the load succeeded; returns the first failure. */
gpuopt_status ocl_fx_open(ocl_fx *fx);
void ocl_fx_free(ocl_fx *fx);

/* Opens (ocl_fx_open) and picks the device the runtime tests run on: the
 * first one when `any` (synthetic devices), else PoCL's CPU device. NULL,
 * with the reason on stderr, when there is none. */
gpuopt_device *ocl_fx_open_runtime_device(ocl_fx *fx, int any);

/* The device whose record says `type` (GPUOPT_DEVICE_TYPE_*), or NULL. */
gpuopt_device *ocl_fx_find_type(ocl_fx *fx, int type);
/* The device whose name contains `part`, or NULL. */
gpuopt_device *ocl_fx_find_name(ocl_fx *fx, const char *part);

/* The test-double loader at `path` (opened here if the backend has not yet). */
void ocl_fake_set_faults(const char *path, const char *spec);
long ocl_fake_live(const char *path);
/* Synthetic devices from the JSON file `devices`; NULL: pass through to
 * the real loader. */
void ocl_fake_set_devices(const char *path, const char *devices);

/* Seeds rand() from the clock and prints the seed, so a failure can be
 * replayed with GPO_TEST_SEED. */
unsigned ocl_test_seed(void);

#endif
