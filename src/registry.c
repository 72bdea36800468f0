/* The registry: every compiled-in backend, in priority order, and the
 * public constructor that gives a context this build's backends. The list
 * is generated from backends/CMakeLists.txt (one gpo_register_backend line
 * per backend folder), so adding a backend is one folder and one line
 * there. Selection probes in this order and the device list follows it:
 * native GPU APIs first (their devices absorb the OpenCL view of the same
 * GPU), then OpenCL, then the CPU.
 *
 * Nothing else in the core names the registry: a context carries its own
 * list (tests hand it synthetic backends), and everything below it reads
 * that. This file is compiled once per library, against that library's
 * generated list (tests/backends/example builds one with a test-only
 * backend added). */
#include "backend.h"
#include "context.h"
#include "knob.h"

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

GPUOPT_API gpuopt_status gpuopt_context_create(const gpuopt_options *options, gpuopt_context **out)
{
    gpo_detail_clear();
    return gpo_context_create_with(options, gpo_backends, gpo_n_backends, out);
}
