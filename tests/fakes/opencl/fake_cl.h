/* A test-double OpenCL ICD loader (libOpenCL.so.1) for the backend's tests.
 *
 * Two modes, chosen on first use:
 *   synthetic    GPUOPT_FAKE_OPENCL_DEVICES names a JSON file of platforms and
 *                devices (tests/fixtures/opencl/); discovery answers from it
 *                and runtime calls work on host memory (kernels do not run).
 *   passthrough  otherwise: every call goes to the real loader
 *                (GPUOPT_FAKE_OPENCL_REAL, else "libOpenCL.so.1" found by the
 *                dynamic linker), so PoCL does the work.
 * In both modes chosen calls fail (GPUOPT_FAKE_OPENCL_FAIL or
 * gpo_fake_cl_set_faults), and every object created and released is
 * counted so a test can assert that nothing is left (gpo_fake_cl_live).
 *
 * Fault spec: comma-separated "clName[@N][=code]": fail the Nth call of
 * clName (1-based; without @N every call) with `code` (default
 * CL_OUT_OF_RESOURCES). Counting starts when the spec is set. */
#ifndef GPO_FAKE_CL_H
#define GPO_FAKE_CL_H

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

/* Control API, found by the tests with dlsym on the fake's handle. */
FAKE_EXPORT void gpo_fake_cl_set_faults(const char *spec);
/* Switches to synthetic mode with the devices of `path`, or to passthrough
 * with NULL. Objects made before the switch must be released first. */
FAKE_EXPORT void gpo_fake_cl_set_devices(const char *path);
FAKE_EXPORT long gpo_fake_cl_live(void);
FAKE_EXPORT int gpo_fake_cl_mode(void); /* 1 synthetic, 2 passthrough, 0 not started */

/* fake_cl.c */
int fake_synthetic(void);          /* 1 in synthetic mode */
cl_int fake_fault(const char *fn); /* the code to fail with, or CL_SUCCESS */
void *fake_real(const char *fn);   /* the real loader's function (passthrough) */
void fake_count(long delta);       /* live-object bookkeeping */

/* fake_cl_synth.c: the synthetic platform (each returns a CL status). */
int synth_load(const char *path); /* 0, or -1 when the file is unusable; NULL unloads */
cl_int synth_platform_ids(cl_uint n, cl_platform_id *out, cl_uint *count);
cl_int synth_platform_info(cl_platform_id p, cl_platform_info what, size_t size, void *value,
                           size_t *ret);
cl_int synth_device_ids(cl_platform_id p, cl_device_type type, cl_uint n, cl_device_id *out,
                        cl_uint *count);
cl_int synth_device_info(cl_device_id d, cl_device_info what, size_t size, void *value,
                         size_t *ret);
size_t synth_kernel_multiple(cl_device_id d);

#endif
