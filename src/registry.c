/* The registry: every compiled-in backend, in priority order. The list is
 * generated from backends/CMakeLists.txt (one gpo_register_backend line per
 * backend folder), so adding a backend is one folder and one line there.
 * Selection probes in this order and the device list follows it: native GPU
 * APIs first (their devices absorb the OpenCL view of the same GPU), then
 * OpenCL, then the CPU. */
#include "backend.h"

#define GPO_BACKEND(name) extern const gpo_backend gpo_backend_##name;
#include "gpo_registry.inc"
#undef GPO_BACKEND

const gpo_backend *const gpo_backends[] = {
#define GPO_BACKEND(name) &gpo_backend_##name,
#include "gpo_registry.inc"
#undef GPO_BACKEND
    NULL /* keeps the array non-empty in a build without backends */
};

const size_t gpo_n_backends = sizeof gpo_backends / sizeof gpo_backends[0] - 1;
