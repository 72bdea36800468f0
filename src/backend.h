/* The ops table: the only contract between the core and a backend.
 *
 * Each backend (backends/<name>/) defines one `const gpo_backend` and the
 * registry (src/registry.c) lists it. The core never includes a vendor
 * header; a backend opens its vendor library with dlopen in `load`, so the
 * library builds and runs without any vendor SDK.
 *
 * Adding a backend: one folder and one line (docs/architecture.md; the
 * test-only backend in tests/backends/example/backend/ is a working model).
 *   1. backends/<name>/CMakeLists.txt adds the folder's sources to
 *      ${GPO_BACKEND_OBJECTS} and calls gpo_register_backend(<name>).
 *   2. The folder defines `const gpo_backend gpo_backend_<name>` (below),
 *      with everything vendor-specific beside it: the slice of the vendor
 *      API it dlopens, load and enumerate, its knob catalogue (sized with
 *      sizeof; each entry with its domain, and a derived knob with its
 *      inputs and derivation: src/knob.h) and tier rules (src/rules.h),
 *      its library variables
 *      (`libraries`: GPUOPT_<NAME>_LIBRARY), its doctor checks (`diagnose`,
 *      src/doctor/doctor.h) and its one visibility parser, its runtime ops.
 *      It reads the environment through gpo_env_* and the plan through
 *      src/rules.h only. Architecture tables another backend also needs
 *      (the OpenCL view of the same GPU) go to src/arch/.
 *   3. backends/CMakeLists.txt gets one add_subdirectory(<name>) line, at
 *      the backend's place in the priority order.
 *   4. Beside the code, not in the core: a row per knob in docs/knobs.md,
 *      tests in tests/backends/<name>/ (a test-double driver in
 *      tests/fakes/<name>/ when the backend dlopens a vendor library).
 * Nothing under src/ changes. A backend that seems to need a core change is
 * asking for a new entry here: add it, optional (NULL = not supported),
 * and bump GPO_BACKEND_ABI. Not yet so: a new kernel language for tier 2
 * and the tuner also needs its name in the public gpuopt_language enum
 * (include/gpuopt/tune.h), src/tune/subject_kernel.c and the tier-2 kernel
 * texts (src/tier2/t2_kernels.c).
 *
 * Life of a backend inside one context:
 *   load      once, on first need (lazily): dlopen + dlsym + driver init.
 *             Returns GPUOPT_OK with state (available, maybe zero devices),
 *             or fills report->reason and returns GPUOPT_ERR_UNAVAILABLE
 *             (library or driver missing) / GPUOPT_ERR_DRIVER (present but
 *             broken). Must not create device contexts or allocate device
 *             memory.
 *             Kernel-side discovery: a backend that cannot use its vendor
 *             library but can still see devices in the kernel's description
 *             (/proc/driver/nvidia, the KFD topology) returns
 *             GPUOPT_ERR_UNAVAILABLE *with a non-NULL state*: the core then
 *             reports the backend unavailable with the reason AND calls
 *             enumerate, so the user learns the GPU is there and what to
 *             install. Such devices must leave routes[0].priv usable by
 *             nothing but the backend's own rules (no runtime).
 *   enumerate once after a successful load: pushes one gpuopt_device per
 *             device (gpo_device_new), in the backend's native order, with
 *             info filled (info.index = the native index) and, when the
 *             backend needs per-device data later, routes[0].priv and
 *             routes[0].priv_free. The core fills the rest: info.id,
 *             info.backend, info.routes, routes[0].backend/backend_state/
 *             index/info, n_routes.
 *   tier0/1/2 per plan: set knobs through gpo_knob_set_* (src/rules.h).
 *   unload    at context destruction: frees the backend's memory. Vendor
 *             libraries are never dlclose'd (driver teardown at exit is a
 *             known source of crashes).
 * Every function reports failures through gpo_fail()/gpo_detail_set() in
 * words and never aborts, exits or prints.
 */
#ifndef GPO_BACKEND_H
#define GPO_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "rules.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/strutil.h"

/* Bumped whenever this struct, or what it points to (the knob catalogue
 * entry, src/knob.h), changes shape. 3: catalogue entries declare domains
 * and derivations. 4: toolchain_dropped. 5: memory_live replaces
 * memory_free; the runtime ops name their graph API. 6: the runtime ops'
 * marks on a caller's stream, and range ops (the profiler's). */
#define GPO_BACKEND_ABI 6

/* A table member of gpo_backend and its count, from one static array:
 * GPO_BACKEND_TABLE(knobs, cuda_knobs) sets .knobs and .n_knobs. */
#define GPO_BACKEND_TABLE(member, array)                                                           \
    .member = (array), .n_##member = sizeof(array) / sizeof((array)[0])

/* What a backend may read while loading and enumerating: the machine's
 * file-system root (GPUOPT_SYSFS_ROOT), the log, and the paths the user
 * chose for the vendor libraries the backend declared. The core owns the
 * struct (src/backend_env.h); backends read it through these accessors
 * only, so they never see, or depend on, the core's whole configuration. */
typedef struct gpo_backend_env gpo_backend_env;

const gpo_fs *gpo_env_fs(const gpo_backend_env *env);
const gpo_logger *gpo_env_log(const gpo_backend_env *env);
/* The user's path for the library `key` the backend declared in
 * gpo_backend.libraries ("cuda"), or NULL for the backend's own default
 * sonames. */
const char *gpo_env_library(const gpo_backend_env *env, const char *key);

/* A vendor library whose path the user may choose instead of the default
 * soname: the environment variable (read with secure_getenv, so never in a
 * privileged process) and the config file's "libraries" key. */
typedef struct gpo_library_var {
    const char *key;      /* "cuda": config file {"libraries": {"cuda": "/path"}} */
    const char *variable; /* "GPUOPT_CUDA_LIBRARY" */
} gpo_library_var;

struct gpo_dr_run;

/* ---- Live memory -----------------------------------------------------------
 *
 * One reading of a device's memory, with where it came from and when
 * (gpuopt_device_memory, gpuopt_memory_*, plans at level >= 1, the device
 * list). A backend tries its sources in its own order, cheapest and least
 * intrusive first, and says in `source_text` which one answered (or, on
 * failure, in the detail what each said). */
typedef struct gpo_memory_reading {
    uint64_t total;        /* bytes the device has (the source's view); 0 unknown */
    uint64_t free;         /* bytes free now */
    uint64_t used;         /* bytes in use, as the source counts them (total - free when it
                              says nothing else) */
    int32_t source;        /* gpuopt_memory_source */
    uint64_t read_ns;      /* gpo_now_ns() when the numbers were read: a reading the backend
                              reuses shows its age */
    char source_text[256]; /* "NVML nvmlDeviceGetMemoryInfo (by UUID)" */
} gpo_memory_reading;

/* memory_live flags. Without GPO_MEMORY_MAY_CREATE_CONTEXT a backend never
 * creates a driver context to answer (a live view or the device list must
 * not cost the host program device memory); plans pass it, since sizing
 * against free memory is worth one short-lived context when nothing cheaper
 * answers. */
#define GPO_MEMORY_MAY_CREATE_CONTEXT 0x1u

/* Filled by load (reason, library, versions); the core adds timing. */
typedef struct gpo_backend_report {
    char reason[512];  /* why unavailable/error; may also hold a note when available */
    char library[512]; /* path actually loaded (gpo_dl_path) */
    char driver_version[64];
    char runtime_version[64];
} gpo_backend_report;

/* ---- Runtime ops for tier 2 (NULL table when a backend cannot run code) --
 *
 * A session is a device context plus an in-order queue with timing on:
 * the backend's own queue (a non-blocking stream on CUDA and HIP), never a
 * default queue the host program also uses, and no op leaves the calling
 * thread's current context or device changed. Objects are the backend's
 * own; the core only passes them back. Every function releases what it
 * created on failure. A device time is never 0 or not a number: a backend
 * whose timer reads so fails the call. GPUOPT_ERR_FAULT from any op means
 * code on the device faulted and the driver's error is sticky: every
 * later op fails too, so a caller stops (a search ends, naming it). */
typedef struct gpo_rt gpo_rt;
typedef struct gpo_rt_buf gpo_rt_buf;
typedef struct gpo_rt_prog gpo_rt_prog;
typedef struct gpo_rt_kernel gpo_rt_kernel;
typedef struct gpo_rt_mark gpo_rt_mark;

typedef struct gpo_runtime_ops {
    const char *language; /* source accepted by program_build: "opencl-c", "cuda", "hip" */
    /* 1: program_build may run on a second thread while this session's
     * launches and copies run (never beside another build or program_free).
     * OpenCL allows it (clBuildProgram is thread-safe); a CUDA or HIP module
     * load needs the context current on the loading thread, so 0 there. The
     * tuner builds upcoming candidates ahead only where this is 1. */
    int builds_alongside_launches;
    /* 1: a kernel that faults leaves this process unable to use the device
     * (CUDA's sticky errors: cuda.h says the process "must be terminated
     * and relaunched"; ROCr ends the process on a GPU memory fault). The
     * tuner then measures kernel candidates in a worker process by default
     * (src/isolate/remote.h). */
    int faults_end_process;

    gpuopt_status (*open)(void *backend_state, const gpo_route *route, gpo_rt **rt);
    void (*close)(gpo_rt *rt);

    gpuopt_status (*buffer_alloc)(gpo_rt *rt, size_t bytes, gpo_rt_buf **buf);
    void (*buffer_free)(gpo_rt *rt, gpo_rt_buf *buf);
    /* Blocking copies: the data has arrived when they return (a host clock
     * around one times the whole transfer). */
    gpuopt_status (*buffer_write)(gpo_rt *rt, gpo_rt_buf *buf, size_t offset, const void *src,
                                  size_t bytes);
    gpuopt_status (*buffer_read)(gpo_rt *rt, gpo_rt_buf *buf, size_t offset, void *dst,
                                 size_t bytes);
    /* Device-to-device copy, timed when device_ns is not NULL. May be NULL. */
    gpuopt_status (*buffer_copy)(gpo_rt *rt, gpo_rt_buf *dst, gpo_rt_buf *src, size_t bytes,
                                 double *device_ns);
    /* Page-locked host memory for transfer tests; both NULL when the backend
     * has none. */
    gpuopt_status (*host_alloc_pinned)(gpo_rt *rt, size_t bytes, void **ptr);
    void (*host_free_pinned)(gpo_rt *rt, void *ptr);

    /* Builds `source` with `options`. On failure returns GPUOPT_ERR_BUILD
     * with *log holding the compiler's full log (malloc'd; caller frees). On
     * success *log may hold warnings or be NULL. */
    gpuopt_status (*program_build)(gpo_rt *rt, const char *source, const char *options,
                                   gpo_rt_prog **prog, char **log);
    void (*program_free)(gpo_rt *rt, gpo_rt_prog *prog);

    gpuopt_status (*kernel_create)(gpo_rt *rt, gpo_rt_prog *prog, const char *name,
                                   gpo_rt_kernel **kernel);
    void (*kernel_free)(gpo_rt *rt, gpo_rt_kernel *kernel);
    gpuopt_status (*kernel_set_buffer)(gpo_rt *rt, gpo_rt_kernel *kernel, uint32_t index,
                                       gpo_rt_buf *buf);
    gpuopt_status (*kernel_set_scalar)(gpo_rt *rt, gpo_rt_kernel *kernel, uint32_t index,
                                       const void *value, size_t size);
    /* Dynamic local/shared memory argument of `bytes`; NULL when unsupported. */
    gpuopt_status (*kernel_set_local)(gpo_rt *rt, gpo_rt_kernel *kernel, uint32_t index,
                                      size_t bytes);
    /* Largest work-group this kernel can launch with on this device. */
    gpuopt_status (*kernel_max_group)(gpo_rt *rt, gpo_rt_kernel *kernel, size_t *max_items);

    /* Enqueues one launch. global[] counts work items (OpenCL convention:
     * a multiple of local[] in each dimension); local NULL lets the runtime
     * choose. With device_ns non-NULL the call waits for completion and
     * stores the device-side duration (events/profiling); with NULL it
     * returns once enqueued. */
    gpuopt_status (*launch)(gpo_rt *rt, gpo_rt_kernel *kernel, uint32_t dims,
                            const size_t global[3], const size_t *local, double *device_ns);
    gpuopt_status (*finish)(gpo_rt *rt);

    /* Compiler identity for cache keys ("PoCL 3.1+debian LLVM 15"). Never NULL. */
    const char *(*compiler_version)(gpo_rt *rt);

    /* How a program on this runtime captures a step's launches once and
     * replays them ("a CUDA graph (cuStreamBeginCapture/cuGraphLaunch;
     * PyTorch: torch.compile(mode=\"reduce-overhead\"), torch.cuda.CUDAGraph)"),
     * for the latency advice (src/latency.c); NULL when it has no way.
     * (ABI 5) */
    const char *graph_api;

    /* (ABI 6) Device time on a stream or queue the host program owns, for
     * the profiler's sections (src/prof/): no session is involved, and
     * nothing is ever queued on the stream but the marks.
     *   mark_record   records a mark (an event, a marker) on `stream` (a
     *                 CUstream, hipStream_t or cl_command_queue the program
     *                 made on the route's device) and returns at once, from
     *                 the thread that uses the stream (its current context
     *                 or device is the stream's, which is checked: a mark on
     *                 another device is refused in words).
     *   mark_elapsed  waits until `end` has completed and gives the
     *                 device's time from `start` to `end` (two marks of one
     *                 stream, start first), >= 0; from any thread.
     *   mark_free     releases a mark, recorded or waited for or not, from
     *                 any thread.
     * None leaves the calling thread's current context or device changed.
     * All three NULL: the backend cannot time a caller's stream. */
    gpuopt_status (*mark_record)(void *backend_state, const gpo_route *route, void *stream,
                                 gpo_rt_mark **mark);
    gpuopt_status (*mark_elapsed)(void *backend_state, const gpo_rt_mark *start,
                                  const gpo_rt_mark *end, double *ns);
    void (*mark_free)(void *backend_state, gpo_rt_mark *mark);
} gpo_runtime_ops;

/* The function fields of a backend's gpo_runtime_ops, for a backend that
 * names its (static) functions rt_<field>: rt_open, rt_close, ... */
#define GPO_RUNTIME_OPS_FUNCTIONS                                                                  \
    .open = rt_open, .close = rt_close, .buffer_alloc = rt_buffer_alloc,                           \
    .buffer_free = rt_buffer_free, .buffer_write = rt_buffer_write, .buffer_read = rt_buffer_read, \
    .buffer_copy = rt_buffer_copy, .host_alloc_pinned = rt_host_alloc_pinned,                      \
    .host_free_pinned = rt_host_free_pinned, .program_build = rt_program_build,                    \
    .program_free = rt_program_free, .kernel_create = rt_kernel_create,                            \
    .kernel_free = rt_kernel_free, .kernel_set_buffer = rt_kernel_set_buffer,                      \
    .kernel_set_scalar = rt_kernel_set_scalar, .kernel_set_local = rt_kernel_set_local,            \
    .kernel_max_group = rt_kernel_max_group, .launch = rt_launch, .finish = rt_finish,             \
    .compiler_version = rt_compiler_version

/* ---- Ranges of the vendor's own profiler (ABI 6) ---------------------------
 * The profiler's sections forwarded to a tool the vendor ships (NVTX for
 * Nsight Systems, roctx for rocprof), so the tool's timeline shows the
 * same names. They need no loaded backend, device or context: a tool
 * attaches to the process, not to a device. */
typedef struct gpo_range_ops {
    const char *tool; /* "nvtx", "roctx": named in the profiler's outputs */
    /* Connects to the tool when the process has one, once per process: a
     * later call gives the first call's answer. 1 connected; 0 not, with
     * `note` (cap > 0) saying why ("NVTX_INJECTION64_PATH is not set: no
     * NVTX tool is attached"). `env` gives the user's library path (the
     * backend's `libraries`). Thread-safe. */
    int (*attach)(const gpo_backend_env *env, char *note, size_t cap);
    /* Opens and closes a range on the calling thread, after attach said 1.
     * Called on every section's begin and end: cheap, never failing,
     * thread-safe. */
    void (*push)(const char *name);
    void (*pop)(void);
} gpo_range_ops;

/* ---- The backend ---------------------------------------------------------- */

typedef struct gpo_backend {
    uint32_t abi;            /* GPO_BACKEND_ABI */
    const char *name;        /* "cpu", "opencl", "cuda", "rocm" */
    const char *description; /* "host CPU", "OpenCL (ICD loader)" */
    int native_gpu;          /* 1: a vendor's own GPU API (wins merges and ties) */
    int fork_sensitive;      /* 1: driver state is stale in a fork()ed child */

    gpuopt_status (*load)(const gpo_backend_env *env, void **state, gpo_backend_report *report);
    void (*unload)(void *state);
    gpuopt_status (*enumerate)(void *state, const gpo_backend_env *env, gpo_device_list *out);

    /* Tier rules; tier2 may be NULL (the core's measured tier uses runtime). */
    gpuopt_status (*tier0)(void *state, const gpo_route *route, const gpuopt_device *dev,
                           struct gpuopt_plan *plan);
    gpuopt_status (*tier1)(void *state, const gpo_route *route, const gpuopt_device *dev,
                           struct gpuopt_plan *plan);
    gpuopt_status (*tier2)(void *state, const gpo_route *route, const gpuopt_device *dev,
                           struct gpuopt_plan *plan);

    /* The device's memory now (gpo_memory_reading above): GPUOPT_OK with
     * free memory known; GPUOPT_ERR_UNSUPPORTED when no source can say,
     * the detail naming what each source answered (the core then reports
     * the total alone, with those words); another failure (forked, out of
     * memory) as it is. Never creates a driver context unless `flags` has
     * GPO_MEMORY_MAY_CREATE_CONTEXT. NULL when the backend has no source
     * (the device's total is used instead). (ABI 5; was memory_free.) */
    gpuopt_status (*memory_live)(void *state, const gpo_route *route, uint32_t flags,
                                 gpo_memory_reading *out);

    const gpo_runtime_ops *runtime; /* NULL: cannot run code */

    /* gpuopt_plan_apply(GPUOPT_APPLY_DEVICE): applies the plan's device
     * settings the backend owns on the calling thread's current context,
     * one line per action appended to `report`. NULL: the backend has none. */
    gpuopt_status (*apply_device)(void *state, const gpo_route *route,
                                  const struct gpuopt_plan *plan, gpo_sbuf *report);

    /* knobs and libraries are set with GPO_BACKEND_TABLE (above). */
    const gpo_knob_def *knobs; /* the knobs this backend's rules set */
    size_t n_knobs;

    /* The vendor libraries whose paths the user may choose. */
    const gpo_library_var *libraries;
    size_t n_libraries;

    /* gpuopt_context_diagnose: adds this backend's findings (src/doctor/doctor.h) to
     * the run, after the context has probed every backend. NULL: the core
     * adds only the generic "backend" finding (status, reason, devices). */
    void (*diagnose)(struct gpo_dr_run *run);

    /* Whether the compiler and release this backend found (NVRTC's version
     * and architecture list, the ROCm release) still target the device's
     * architecture. 0 when they do or it cannot tell; 1 when they no longer
     * do, with `why` (cap > 0) naming the release, and the last one that
     * supports the device. The device list and plans show it as a warning,
     * tier 2 falls back with it instead of compiling, and the backend's
     * doctor reports it. May open the compiler library (once). NULL:
     * nothing to check. (ABI 4) */
    int (*toolchain_dropped)(void *state, const gpo_route *route, const gpuopt_device *dev,
                             char *why, size_t cap);

    /* The vendor's profiler ranges (above). NULL: the vendor has none.
     * (ABI 6) */
    const gpo_range_ops *ranges;
} gpo_backend;

/* The registry (src/registry.c): every compiled-in backend, in priority
 * order (CUDA, ROCm, OpenCL, CPU). Only the public gpuopt_context_create
 * and tests read it; the core works on a context's own list. */
extern const gpo_backend *const gpo_backends[];
extern const size_t gpo_n_backends;

#endif
