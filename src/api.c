/* Versions, status names, the per-thread detail, freeing, struct sizes. */
#include <stdlib.h>

#include "util/detail.h"

/* One list gives both the description and the symbolic name of a status. */
#define GPO_STATUS_MAP(X)                                                                          \
    X(GPUOPT_OK, "success")                                                                        \
    X(GPUOPT_ERR_INVALID_ARGUMENT, "invalid argument")                                             \
    X(GPUOPT_ERR_OUT_OF_RANGE, "value out of range")                                               \
    X(GPUOPT_ERR_STRUCT_SIZE, "struct_size not set or too small")                                 \
    X(GPUOPT_ERR_NOT_FOUND, "not found")                                                           \
    X(GPUOPT_ERR_CONFIG, "bad configuration value")                                                \
    X(GPUOPT_ERR_NO_MEMORY, "out of memory")                                                       \
    X(GPUOPT_ERR_IO, "input/output error")                                                         \
    X(GPUOPT_ERR_FORKED, "context used after fork()")                                              \
    X(GPUOPT_ERR_NO_DEVICE, "no matching device")                                                  \
    X(GPUOPT_ERR_UNAVAILABLE, "backend unavailable")                                               \
    X(GPUOPT_ERR_UNSUPPORTED, "not supported by this backend or device")                           \
    X(GPUOPT_ERR_DRIVER, "vendor driver call failed")                                              \
    X(GPUOPT_ERR_DISABLED, "backend disabled by configuration")                                    \
    X(GPUOPT_ERR_BUILD, "kernel build failed")                                                     \
    X(GPUOPT_ERR_LAUNCH, "kernel launch failed")                                                   \
    X(GPUOPT_ERR_TIMEOUT, "measurement timed out")                                                \
    X(GPUOPT_ERR_FAULT, "device fault; the process must restart to use the device again")

GPUOPT_API const char *gpuopt_version(void) { return GPUOPT_VERSION_STRING; }

GPUOPT_API uint32_t gpuopt_api_version(void) { return GPUOPT_API_VERSION; }

GPUOPT_API const char *gpuopt_strerror(gpuopt_status status)
{
    switch (status) {
#define X(name, text)                                                                              \
    case name: return text;
        GPO_STATUS_MAP(X)
#undef X
    }
    return "unknown status";
}

GPUOPT_API const char *gpuopt_status_name(gpuopt_status status)
{
    switch (status) {
#define X(name, text)                                                                              \
    case name: return #name;
        GPO_STATUS_MAP(X)
#undef X
    }
    return "GPUOPT_UNKNOWN_STATUS";
}

GPUOPT_API const char *gpuopt_last_error(void) { return gpo_detail_get(); }

GPUOPT_API void gpuopt_free(void *ptr) { free(ptr); }

GPUOPT_API size_t gpuopt_options_size(void) { return sizeof(gpuopt_options); }

GPUOPT_API size_t gpuopt_backend_info_size(void) { return sizeof(gpuopt_backend_info); }

GPUOPT_API size_t gpuopt_device_info_size(void) { return sizeof(gpuopt_device_info); }

GPUOPT_API size_t gpuopt_knob_size(void) { return sizeof(gpuopt_knob); }

GPUOPT_API size_t gpuopt_workload_size(void) { return sizeof(gpuopt_workload); }

GPUOPT_API void gpuopt_workload_init(gpuopt_workload *workload)
{
    if (!workload)
        return;
    gpuopt_workload w = {sizeof w, 0, 0, -1, 0, GPUOPT_OBJECTIVE_THROUGHPUT, 0};
    *workload = w;
}
