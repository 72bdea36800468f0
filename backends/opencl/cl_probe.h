/* Reading the facts of one OpenCL device (cl_probe.c): clGetDeviceInfo,
 * the vendor extension queries, and a probe kernel where a fact is only
 * known to a built kernel. */
#ifndef GPO_CL_PROBE_H
#define GPO_CL_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "cl_load.h"

#define OCL_MAX_SUB_GROUP_SIZES 16

/* How the preferred work-group size multiple was learnt. */
typedef enum ocl_pref_source {
    OCL_PREF_UNKNOWN = 0,
    OCL_PREF_DEVICE = 1, /* CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE (OpenCL 3.0) */
    OCL_PREF_KERNEL = 2, /* CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE of a built kernel */
    OCL_PREF_FAILED = 3  /* the probe kernel could not be built; not tried again */
} ocl_pref_source;

/* Everything read from one device. Integers are -1 / 0 / "" when unknown,
 * like the public record. */
typedef struct ocl_facts {
    cl_platform_id platform;
    cl_device_id device;
    int platform_index;
    char name[256];
    char vendor[128];
    char version[256];   /* CL_DEVICE_VERSION */
    char c_version[128]; /* CL_DEVICE_OPENCL_C_VERSION */
    char driver[128];
    char profile[32];
    char *extensions; /* malloc'd, never NULL after a successful read */
    char *c_features; /* OpenCL 3.0 feature macros, space separated; malloc'd or NULL */
    cl_uint vendor_id;
    cl_device_type type;
    int ver_major, ver_minor;
    int c_major, c_minor; /* highest OpenCL C version accepted by -cl-std */
    int64_t compute_units;
    int64_t clock_mhz;
    uint64_t global_mem, local_mem, max_alloc, global_cache, const_buf;
    int64_t cacheline;
    int local_dedicated; /* 1 CL_LOCAL, 0 CL_GLOBAL (emulated), -1 unknown */
    int64_t max_wg;
    cl_uint max_dims;
    size_t max_items[3];
    int64_t pref_multiple;
    int pref_source; /* ocl_pref_source */
    size_t sub_group_sizes[OCL_MAX_SUB_GROUP_SIZES];
    size_t n_sub_group_sizes;
    int64_t max_sub_groups;
    int fp64, fp16;         /* 1 / 0 */
    int host_unified;       /* -1 unknown */
    int ecc;                /* -1 unknown */
    int unified_addressing; /* fine-grained system SVM: 1 / 0, -1 unknown */
    int64_t native_vec_float;
    int64_t profiling_resolution_ns;
    char pci_bus_id[32];
    const char *pci_source; /* the query it came from, static */
    char uuid[64];
    int64_t nv_cc_major, nv_cc_minor, nv_warp;
    int nv_integrated;
    char amd_board[128];
    char amd_gfx[64];
    int64_t amd_wavefront, amd_simd_per_cu, amd_simd_width;
    char cpu_triple[64]; /* PoCL HSTR: "x86_64-pc-linux-gnu" */
    char cpu_arch[64];   /* PoCL HSTR: "skylake-avx512" */
} ocl_facts;

/* Reads every fact of device `dev` of platform `plat`. On failure of a
 * required query returns GPUOPT_ERR_DRIVER (GPUOPT_ERR_NO_MEMORY) with the
 * detail set; optional queries leave the fact unknown. Free with
 * gpo_ocl_facts_free (NULL is fine). */
gpuopt_status gpo_ocl_facts_read(const ocl_api *api, const ocl_platform *plat, int platform_index,
                                 cl_device_id dev, ocl_facts *f);
void gpo_ocl_facts_free(ocl_facts *f);

/* Builds a one-line kernel to learn CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE
 * (for devices older than OpenCL 3.0). Sets pref_multiple/pref_source. */
gpuopt_status gpo_ocl_probe_preferred_multiple(const ocl_api *api, ocl_facts *f);

/* The device's free memory now, where its driver says
 * (GPUOPT_ERR_UNSUPPORTED elsewhere). */
gpuopt_status gpo_ocl_facts_free_memory(const ocl_api *api, const ocl_facts *f,
                                        uint64_t *free_bytes);

#endif
