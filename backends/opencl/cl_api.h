/* The slice of the OpenCL API this backend calls, resolved at run time from
 * the ICD loader (libOpenCL.so.1). Types and constants come from the Khronos
 * headers (Debian opencl-c-headers); no function is linked: every call goes
 * through the table below, filled by gpo_dl_resolve.
 *
 * One list, OCL_API(X), generates the function-pointer struct and the
 * gpo_dl_sym table (cl_load.c); a missing required symbol is reported by
 * name. Entries: X(field, symbol, required, return type, parameter types).
 * Extension functions are never listed here: a vendor extension's entry
 * point comes from clGetExtensionFunctionAddressForPlatform (OpenCL 3.0
 * §4.4), never from dlsym. None is needed so far: every vendor fact read
 * here is a clGetDeviceInfo query. */
#ifndef GPO_OCL_API_H
#define GPO_OCL_API_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include "util/dl.h"

/* Vendor queries the Khronos headers of Debian 12 lack. Values from
 * cl_nv_device_attribute_query (the NVIDIA extension text, revision 2:
 * PCI bus/slot/domain) as used by hwloc's include/hwloc/opencl.h. */
#ifndef CL_DEVICE_INTEGRATED_MEMORY_NV
#define CL_DEVICE_INTEGRATED_MEMORY_NV 0x4006
#endif
#ifndef CL_DEVICE_PCI_BUS_ID_NV
#define CL_DEVICE_PCI_BUS_ID_NV 0x4008
#endif
#ifndef CL_DEVICE_PCI_SLOT_ID_NV
#define CL_DEVICE_PCI_SLOT_ID_NV 0x4009
#endif
#ifndef CL_DEVICE_PCI_DOMAIN_ID_NV
#define CL_DEVICE_PCI_DOMAIN_ID_NV 0x400A
#endif

/* clGetICDLoaderInfoOCLICD, the Khronos cl_loader_info extension (both
 * ocl-icd and the Khronos loader implement it; Debian 12's headers predate
 * it). Answered by the loader itself, so only the platform-less
 * clGetExtensionFunctionAddress returns it. */
typedef cl_uint ocl_icdl_info;
#define OCL_ICDL_OCL_VERSION 1
#define OCL_ICDL_VERSION 2
#define OCL_ICDL_NAME 3
#define OCL_ICDL_VENDOR 4
typedef cl_int(CL_API_CALL *ocl_loader_info_fn)(ocl_icdl_info, size_t, void *, size_t *);

#define OCL_REQ GPO_DL_REQUIRED
#define OCL_OPT GPO_DL_OPTIONAL

/* clCreateCommandQueue is deprecated since 2.0 but every ICD loader exports
 * it; the 2.0 entry point is optional and preferred where the platform is
 * 2.0 or newer. clGetExtensionFunctionAddress is only used for the loader's
 * own information query (see above). clGetCommandQueueInfo and
 * clEnqueueMarkerWithWaitList (OpenCL 1.2) time a caller's queue for the
 * profiler (cl_marks.c), which a loader without them cannot. */
#define OCL_API(X)                                                                                 \
    X(GetPlatformIDs, "clGetPlatformIDs", OCL_REQ, cl_int, (cl_uint, cl_platform_id *, cl_uint *)) \
    X(GetPlatformInfo, "clGetPlatformInfo", OCL_REQ, cl_int,                                       \
      (cl_platform_id, cl_platform_info, size_t, void *, size_t *))                                \
    X(GetDeviceIDs, "clGetDeviceIDs", OCL_REQ, cl_int,                                             \
      (cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *))                        \
    X(GetDeviceInfo, "clGetDeviceInfo", OCL_REQ, cl_int,                                           \
      (cl_device_id, cl_device_info, size_t, void *, size_t *))                                    \
    X(CreateContext, "clCreateContext", OCL_REQ, cl_context,                                       \
      (const cl_context_properties *, cl_uint, const cl_device_id *,                               \
       void(CL_CALLBACK *)(const char *, const void *, size_t, void *), void *, cl_int *))         \
    X(ReleaseContext, "clReleaseContext", OCL_REQ, cl_int, (cl_context))                           \
    X(CreateCommandQueue, "clCreateCommandQueue", OCL_REQ, cl_command_queue,                       \
      (cl_context, cl_device_id, cl_command_queue_properties, cl_int *))                           \
    X(CreateCommandQueueWithProperties, "clCreateCommandQueueWithProperties", OCL_OPT,             \
      cl_command_queue, (cl_context, cl_device_id, const cl_queue_properties *, cl_int *))         \
    X(ReleaseCommandQueue, "clReleaseCommandQueue", OCL_REQ, cl_int, (cl_command_queue))           \
    X(CreateBuffer, "clCreateBuffer", OCL_REQ, cl_mem,                                             \
      (cl_context, cl_mem_flags, size_t, void *, cl_int *))                                        \
    X(ReleaseMemObject, "clReleaseMemObject", OCL_REQ, cl_int, (cl_mem))                           \
    X(EnqueueWriteBuffer, "clEnqueueWriteBuffer", OCL_REQ, cl_int,                                 \
      (cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint, const cl_event *, \
       cl_event *))                                                                                \
    X(EnqueueReadBuffer, "clEnqueueReadBuffer", OCL_REQ, cl_int,                                   \
      (cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint, const cl_event *,       \
       cl_event *))                                                                                \
    X(EnqueueCopyBuffer, "clEnqueueCopyBuffer", OCL_REQ, cl_int,                                   \
      (cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint, const cl_event *,        \
       cl_event *))                                                                                \
    X(EnqueueMapBuffer, "clEnqueueMapBuffer", OCL_REQ, void *,                                     \
      (cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t, cl_uint, const cl_event *, \
       cl_event *, cl_int *))                                                                      \
    X(EnqueueUnmapMemObject, "clEnqueueUnmapMemObject", OCL_REQ, cl_int,                           \
      (cl_command_queue, cl_mem, void *, cl_uint, const cl_event *, cl_event *))                   \
    X(CreateProgramWithSource, "clCreateProgramWithSource", OCL_REQ, cl_program,                   \
      (cl_context, cl_uint, const char **, const size_t *, cl_int *))                              \
    X(BuildProgram, "clBuildProgram", OCL_REQ, cl_int,                                             \
      (cl_program, cl_uint, const cl_device_id *, const char *,                                    \
       void(CL_CALLBACK *)(cl_program, void *), void *))                                           \
    X(GetProgramBuildInfo, "clGetProgramBuildInfo", OCL_REQ, cl_int,                               \
      (cl_program, cl_device_id, cl_program_build_info, size_t, void *, size_t *))                 \
    X(ReleaseProgram, "clReleaseProgram", OCL_REQ, cl_int, (cl_program))                           \
    X(CreateKernel, "clCreateKernel", OCL_REQ, cl_kernel, (cl_program, const char *, cl_int *))    \
    X(ReleaseKernel, "clReleaseKernel", OCL_REQ, cl_int, (cl_kernel))                              \
    X(SetKernelArg, "clSetKernelArg", OCL_REQ, cl_int, (cl_kernel, cl_uint, size_t, const void *)) \
    X(GetKernelWorkGroupInfo, "clGetKernelWorkGroupInfo", OCL_REQ, cl_int,                         \
      (cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void *, size_t *))              \
    X(EnqueueNDRangeKernel, "clEnqueueNDRangeKernel", OCL_REQ, cl_int,                             \
      (cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *,       \
       cl_uint, const cl_event *, cl_event *))                                                     \
    X(WaitForEvents, "clWaitForEvents", OCL_REQ, cl_int, (cl_uint, const cl_event *))              \
    X(GetEventProfilingInfo, "clGetEventProfilingInfo", OCL_REQ, cl_int,                           \
      (cl_event, cl_profiling_info, size_t, void *, size_t *))                                     \
    X(ReleaseEvent, "clReleaseEvent", OCL_REQ, cl_int, (cl_event))                                 \
    X(Finish, "clFinish", OCL_REQ, cl_int, (cl_command_queue))                                     \
    X(GetCommandQueueInfo, "clGetCommandQueueInfo", OCL_OPT, cl_int,                               \
      (cl_command_queue, cl_command_queue_info, size_t, void *, size_t *))                         \
    X(EnqueueMarkerWithWaitList, "clEnqueueMarkerWithWaitList", OCL_OPT, cl_int,                   \
      (cl_command_queue, cl_uint, const cl_event *, cl_event *))                                   \
    X(GetExtensionFunctionAddress, "clGetExtensionFunctionAddress", OCL_OPT, void *, (const char *))

/* What an ICD (a vendor's driver library, named by an .icd file) exports
 * for the ICD loader (the cl_khr_icd extension): its platforms under the
 * ICD name clIcdGetPlatformIDsKHR, exported directly or handed out by
 * clGetExtensionFunctionAddress. The backend never
 * opens an ICD (the loader does); only the doctor looks at one
 * (cl_doctor.c). */
#define OCL_ICD_API(X)                                                                             \
    X(IcdGetPlatformIDs, "clIcdGetPlatformIDsKHR", OCL_OPT, cl_int,                                \
      (cl_uint, cl_platform_id *, cl_uint *))                                                      \
    X(GetExtensionFunctionAddress, "clGetExtensionFunctionAddress", OCL_OPT, void *, (const char *))

/* One function-pointer field per row of OCL_API / OCL_ICD_API. */
#define OCL_API_FIELD(field, symbol, required, ret, params) ret(CL_API_CALL *field) params;
typedef struct ocl_api {
    OCL_API(OCL_API_FIELD)
} ocl_api;
typedef struct ocl_icd_api {
    OCL_ICD_API(OCL_API_FIELD)
} ocl_icd_api;
#undef OCL_API_FIELD

/* The gpo_dl_sym table generated from OCL_API (cl_load.c). */
extern const gpo_dl_sym gpo_ocl_api_syms[];
extern const size_t gpo_ocl_api_n_syms;

/* "CL_OUT_OF_RESOURCES" for -5, "CL_UNKNOWN_ERROR" otherwise (cl_errors.c). */
const char *gpo_ocl_error_name(cl_int err);

/* The gpuopt status a failed call maps to: allocation failures to
 * GPUOPT_ERR_NO_MEMORY, invalid sizes and indices to OUT_OF_RANGE, the rest
 * to `fallback` (cl_errors.c). */
gpuopt_status gpo_ocl_status(cl_int err, gpuopt_status fallback);

#endif
