/* Opening the OpenCL ICD loader (cl_load.c): the state every other part of
 * the backend reads, the platform list and each platform's device ids. No
 * context is created while loading. */
#ifndef GPO_CL_LOAD_H
#define GPO_CL_LOAD_H

#include <stdint.h>

#include "backend.h"
#include "cl_api.h"
#include "util/fs.h"

/* The ICD loader's soname (ocl-icd and the Khronos loader both ship it). */
#define OCL_DEFAULT_LIBRARY "libOpenCL.so.1"

typedef struct ocl_platform {
    cl_platform_id id;
    char name[256];
    char vendor[256];
    char version[256]; /* "OpenCL 3.0 PoCL 3.1+debian ..." */
    int ver_major, ver_minor;
    cl_device_id *devices;
    cl_uint n_devices;
    cl_int devices_err; /* clGetDeviceIDs result other than CL_DEVICE_NOT_FOUND */
} ocl_platform;

typedef struct ocl_state {
    void *lib;
    ocl_api api;
    char library[GPO_PATH_MAX];
    ocl_platform *platforms;
    cl_uint n_platforms;
    const gpo_logger *log; /* the context's logger; lives as long as the context */
    uint64_t platforms_ns; /* clGetPlatformIDs, for the debug log and the benchmark */
} ocl_state;

/* The library to open: the user's path (GPUOPT_OPENCL_LIBRARY or the config
 * file), else the loader's soname. The doctor names the same one. */
const char *gpo_ocl_library_name(const char *user_path);

/* gpo_backend.load and .unload. */
gpuopt_status gpo_ocl_load(const gpo_backend_env *env, void **state, gpo_backend_report *report);
void gpo_ocl_unload(void *state);

#endif
