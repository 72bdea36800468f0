/* Internals shared by the OpenCL backend's files: the loaded state, the
 * facts read from each device, and the entry points of each file. Nothing
 * here leaves backends/opencl/ except through gpo_backend_opencl. */
#ifndef GPO_OPENCL_H
#define GPO_OPENCL_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "cl_api.h"
#include "util/fs.h"

#define OCL_DEFAULT_LIBRARY "libOpenCL.so.1"
#define OCL_MAX_SUB_GROUP_SIZES 16

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

/* What a device record's route carries (route->priv). */
typedef struct ocl_dev_priv {
    ocl_facts facts;
    char platform_name[256];
    char platform_vendor[256];
    char platform_version[256];
    char other_platforms[512]; /* platforms that also expose this device, "; "-joined */
} ocl_dev_priv;

/* cl_load.c */
gpuopt_status gpo_ocl_load(const gpo_backend_env *env, void **state, gpo_backend_report *report);
void gpo_ocl_unload(void *state);

/* cl_probe.c: reads every fact of one device. On failure of a required
 * query returns GPUOPT_ERR_DRIVER with the detail set; optional queries
 * leave the fact unknown. Free with gpo_ocl_facts_free. */
gpuopt_status gpo_ocl_facts_read(const ocl_api *api, const ocl_platform *plat, int platform_index,
                                 cl_device_id dev, ocl_facts *f);
void gpo_ocl_facts_free(ocl_facts *f);
/* Builds a one-line kernel to learn CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE
 * (for devices older than OpenCL 3.0). Sets pref_multiple/pref_source. */
gpuopt_status gpo_ocl_probe_preferred_multiple(const ocl_api *api, ocl_facts *f);
gpuopt_status gpo_ocl_memory_free(void *state, const gpo_route *route, uint64_t *free_bytes);

/* cl_device.c */
gpuopt_status gpo_ocl_enumerate(void *state, const gpo_backend_env *env, gpo_device_list *out);
void gpo_ocl_priv_free(void *priv);
/* The vendor's short name for a PCI vendor id ("NVIDIA"), NULL when unknown. */
const char *gpo_ocl_vendor_short(cl_uint vendor_id);

/* cl_rules.c */
gpuopt_status gpo_ocl_tier0(void *state, const gpo_route *route, const gpuopt_device *dev,
                            struct gpuopt_plan *plan);
gpuopt_status gpo_ocl_tier1(void *state, const gpo_route *route, const gpuopt_device *dev,
                            struct gpuopt_plan *plan);
#define OCL_N_KNOBS 3
extern const gpo_knob_def gpo_ocl_knobs[OCL_N_KNOBS];

/* cl_runtime.c */
extern const gpo_runtime_ops gpo_ocl_runtime_ops;

/* cl_doctor.c: the OpenCL block of gpuopt_context_diagnose (gpo_backend_opencl.diagnose). */
struct gpo_dr_run;
void gpo_dr_check_opencl(struct gpo_dr_run *run);

#endif
