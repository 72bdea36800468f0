/*
 * libgpuopt — which compute devices are here, which one to use, and how to
 * set work up for it.
 *
 * This header and gpuopt/tune.h (which it includes) are the whole public API
 * and its documentation. Both compile as C99 and as C++.
 *
 * ----------------------------------------------------------------------------
 * Overview
 * ----------------------------------------------------------------------------
 *
 *   gpuopt_context *ctx;
 *   gpuopt_context_create(NULL, &ctx);          // reads config file + env
 *   gpuopt_device *dev;
 *   gpuopt_device_select(ctx, "auto", &dev);     // or NULL: GPUOPT_DEVICE
 *   gpuopt_plan *plan;
 *   gpuopt_plan_create(ctx, dev, GPUOPT_LEVEL_DEFAULT, &plan);
 *   ... gpuopt_plan_knob_find(plan, "threads", &knob) ...
 *   gpuopt_plan_destroy(plan);
 *   gpuopt_context_destroy(ctx);
 *
 * Devices come from backends compiled into the library (CPU, and the GPU
 * backends listed by gpuopt_backend_at). Vendor libraries are opened at run
 * time; a backend that cannot find its library reports "unavailable" with the
 * reason, never an error for the host program.
 *
 * A plan is an ordered list of knobs: named, typed settings with the tier that
 * set them (0 safe defaults, 1 derived from detected hardware, 2 measured),
 * their source and a reason in words.
 *
 * ----------------------------------------------------------------------------
 * Conventions
 * ----------------------------------------------------------------------------
 *
 * Status. Every fallible function returns a gpuopt_status. GPUOPT_OK is 0.
 *   gpuopt_strerror() names a status; gpuopt_last_error() gives, for the
 *   calling thread, the detail of the last failure (what was wrong, what is
 *   accepted, the vendor library's own words). The detail is only meaningful
 *   right after a call returned something other than GPUOPT_OK.
 *
 * Failure means no output. When a function returns anything but GPUOPT_OK,
 *   there is nothing to read from it: every output the caller passed is
 *   cleared, whatever argument was wrong: a pointer output becomes NULL, a
 *   number 0, and a struct with a valid struct_size is zeroed (struct_size
 *   kept). Only a struct whose struct_size is itself the error is left as it
 *   was, since the library cannot know its size. The words are in
 *   gpuopt_last_error(). A call that has an answer to give, even "nothing
 *   found" (a tuning run in which no candidate was valid), returns
 *   GPUOPT_OK with that answer.
 *
 * NULL. A NULL handle or a NULL output pointer is GPUOPT_ERR_INVALID_ARGUMENT,
 *   never a crash, except where a function documents what NULL means
 *   (destroy functions accept NULL and do nothing).
 *
 * Ownership. Handles are created by *_create and released by *_destroy.
 *   Strings returned through `char **` are allocated by the library and freed
 *   with gpuopt_free(). `const char *` results, and the `const char *` fields
 *   of the structs the library fills, point into the object they came from
 *   and live as long as it does; they are never NULL unless documented.
 *
 * Structs filled by the library (gpuopt_device_info, gpuopt_knob,
 *   gpuopt_backend_info) and structs read by it (gpuopt_options) begin with
 *   `size_t struct_size`, which the caller sets to sizeof(the struct) as the
 *   caller's header declares it. The library reads or writes only that many
 *   bytes, so a program built against an older header keeps working with a
 *   newer library. A struct_size smaller than the first released layout is
 *   GPUOPT_ERR_STRUCT_SIZE. Bindings can ask for the current sizes with the
 *   gpuopt_*_size() functions.
 *
 * Thread safety. All functions may be called from any thread. A context
 *   serialises its own work (discovery, selection, planning) with an internal
 *   lock, so one context may be shared by threads. A plan is immutable once
 *   created: any number of threads may read it; destroying it while another
 *   thread reads it is the caller's bug. Device handles belong to their
 *   context and stay valid until it is destroyed.
 *
 * Silence. The library never writes to stdout. Diagnostics go to the log
 *   callback or, without one, to stderr, filtered by the log level (default
 *   "warn"). "No device" is a normal answer, not a warning.
 *
 * Laziness. Nothing runs when the library is loaded. A context reads its
 *   configuration when created; backends are opened on first need; selection
 *   probes backends in priority order and stops as soon as it has its answer.
 *
 * fork(). Vendor driver state does not survive fork(); a context used in a
 *   child process reports GPU backends as stale (GPUOPT_ERR_FORKED) rather
 *   than trusting the parent's handles. Create a new context in the child.
 */
#ifndef GPUOPT_GPUOPT_H
#define GPUOPT_GPUOPT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------- */
/* Export and versions                                                        */
/* ------------------------------------------------------------------------- */

/* The one export macro. The library is built with -fvisibility=hidden and a
 * version script; only what carries GPUOPT_API leaves libgpuopt.so. */
#if defined(__GNUC__) && __GNUC__ >= 4
#define GPUOPT_API __attribute__((visibility("default")))
#else
#define GPUOPT_API
#endif

/* Release version: changes with every release. */
#define GPUOPT_VERSION_MAJOR 0
#define GPUOPT_VERSION_MINOR 2
#define GPUOPT_VERSION_PATCH 0
#define GPUOPT_VERSION_STRING "0.2.0"
/* MAJOR * 10000 + MINOR * 100 + PATCH, for #if comparisons. */
#define GPUOPT_VERSION_NUMBER                                                                      \
    (GPUOPT_VERSION_MAJOR * 10000 + GPUOPT_VERSION_MINOR * 100 + GPUOPT_VERSION_PATCH)

/* API version: (X << 16) | (Y << 8) | Z, bumped only when the API changes
 * (a function, type, enum value or struct field is added, or before 1.0
 * renamed or removed: CHANGELOG.md lists every change). A program may
 * compare gpuopt_api_version() at run time with the value it was built
 * with: the library's must be at least as large.
 *
 * Stability. Before 1.0 a minor release may break the API and the ABI
 * (0.2.0 did), and says so in CHANGELOG.md; breaking is cheaper now than
 * after 1.0. Every exported function carries the symbol version of the
 * release that introduced it (GPUOPT_0.1, GPUOPT_0.2, ... in
 * cmake/gpuopt.map), so a program built against a release whose functions
 * are gone fails when it is loaded, naming the missing version, instead of
 * misbehaving. From 1.0 on, names, values and struct layouts are only
 * added to. */
#define GPUOPT_API_VERSION 0x00000200u

/* The release version of the loaded library, "MAJOR.MINOR.PATCH". Static
 * string; never NULL. */
GPUOPT_API const char *gpuopt_version(void);

/* GPUOPT_API_VERSION of the loaded library. */
GPUOPT_API uint32_t gpuopt_api_version(void);

/* ------------------------------------------------------------------------- */
/* Status                                                                     */
/* ------------------------------------------------------------------------- */

/* Every status, one line each: XX(name, value, description). This one list
 * generates the gpuopt_status enum below, gpuopt_strerror() and
 * gpuopt_status_name() in the library, and the Python binding's constants
 * (tools/python_constants.py); a program may expand it too, as libuv's
 * UV_ERRNO_MAP. Values are pinned forever and grouped in ranges: 1xx the
 * caller's input, 2xx the system, 3xx devices and backends, 4xx running
 * code on a device. A retired status keeps its line and its value, renamed
 * GPUOPT_ERR_RETIRED_<value>, so that its number never takes another
 * meaning (curl's CURLE_OBSOLETE*). */
#define GPUOPT_STATUS_MAP(XX)                                                                      \
    XX(GPUOPT_OK, 0, "success")                                                                    \
    /* NULL where a value is needed, or a malformed value */                                       \
    XX(GPUOPT_ERR_INVALID_ARGUMENT, 100, "invalid argument")                                       \
    /* an index or number outside what is accepted */                                              \
    XX(GPUOPT_ERR_OUT_OF_RANGE, 101, "value out of range")                                         \
    /* struct_size not set, or smaller than any known layout */                                    \
    XX(GPUOPT_ERR_STRUCT_SIZE, 102, "struct_size not set or too small")                            \
    /* no knob, device or entry of that name */                                                    \
    XX(GPUOPT_ERR_NOT_FOUND, 103, "not found")                                                     \
    /* a configuration value or file is malformed */                                               \
    XX(GPUOPT_ERR_CONFIG, 104, "bad configuration value")                                          \
    /* a profiler section ended that is not the innermost one open on the */                       \
    /* calling thread, or with none open */                                                        \
    XX(GPUOPT_ERR_NESTING, 105, "profiler sections do not nest")                                   \
    /* an allocation failed */                                                                     \
    XX(GPUOPT_ERR_NO_MEMORY, 200, "out of memory")                                                 \
    /* reading or writing a file failed */                                                         \
    XX(GPUOPT_ERR_IO, 201, "input/output error")                                                   \
    /* the context was created before fork(); GPU state is stale */                                \
    XX(GPUOPT_ERR_FORKED, 202, "context used after fork()")                                        \
    /* no device matches the request */                                                            \
    XX(GPUOPT_ERR_NO_DEVICE, 300, "no matching device")                                            \
    /* the backend cannot be used here (library missing, no driver) */                             \
    XX(GPUOPT_ERR_UNAVAILABLE, 301, "backend unavailable")                                         \
    /* the backend or device cannot do what was asked */                                           \
    XX(GPUOPT_ERR_UNSUPPORTED, 302, "not supported by this backend or device")                     \
    /* a vendor library call failed */                                                             \
    XX(GPUOPT_ERR_DRIVER, 303, "vendor driver call failed")                                        \
    /* the backend is excluded by configuration */                                                 \
    XX(GPUOPT_ERR_DISABLED, 304, "backend disabled by configuration")                              \
    /* a kernel failed to compile; the detail carries the log */                                   \
    XX(GPUOPT_ERR_BUILD, 400, "kernel build failed")                                               \
    /* a kernel failed to launch or run */                                                         \
    XX(GPUOPT_ERR_LAUNCH, 401, "kernel launch failed")                                             \
    /* a measurement ran past its budget */                                                        \
    XX(GPUOPT_ERR_TIMEOUT, 402, "measurement timed out")                                           \
    /* code on the device faulted and the driver's error is sticky: the */                         \
    /* device is unusable in this process until it restarts */                                     \
    XX(GPUOPT_ERR_FAULT, 403, "device fault; the process must restart to use the device again")

typedef enum gpuopt_status {
#define GPUOPT_STATUS_ENUM_(name, value, text) name = value,
    GPUOPT_STATUS_MAP(GPUOPT_STATUS_ENUM_)
#undef GPUOPT_STATUS_ENUM_
    /* Not a status. It ends the generated list (C++98 has no trailing
     * comma in an enum) and keeps the type 32 bits wide whatever the
     * compiler's enum-size options, as Vulkan's VK_RESULT_MAX_ENUM. */
    GPUOPT_STATUS_MAX_ENUM = 0x7fffffff
} gpuopt_status;

/* A static, lower-case description of a status ("invalid argument").
 * Unknown values give "unknown status". Never NULL. */
GPUOPT_API const char *gpuopt_strerror(gpuopt_status status);

/* The symbolic name of a status ("GPUOPT_ERR_INVALID_ARGUMENT"), or
 * "GPUOPT_UNKNOWN_STATUS". Never NULL. */
GPUOPT_API const char *gpuopt_status_name(gpuopt_status status);

/* The detail of the calling thread's last failure, in words: what was wrong
 * and what is accepted, the library path, the vendor's error name. Empty
 * string when there is none. Valid until the thread's next call into the
 * library. Never NULL. */
GPUOPT_API const char *gpuopt_last_error(void);

/* Frees a string or buffer the library returned through a `char **`.
 * NULL does nothing. */
GPUOPT_API void gpuopt_free(void *ptr);

/* ------------------------------------------------------------------------- */
/* Logging                                                                    */
/* ------------------------------------------------------------------------- */

typedef enum gpuopt_log_level {
    GPUOPT_LOG_OFF = 0,
    GPUOPT_LOG_ERROR = 1,
    GPUOPT_LOG_WARN = 2, /* the default */
    GPUOPT_LOG_INFO = 3,
    GPUOPT_LOG_DEBUG = 4
} gpuopt_log_level;

/* Receives one message (no trailing newline) at `level`. Called on the thread
 * that made the library call, while the context's lock is held: the callback
 * must not call back into the same context. */
typedef void (*gpuopt_log_fn)(int32_t level, const char *message, void *user);

/* ------------------------------------------------------------------------- */
/* Context                                                                    */
/* ------------------------------------------------------------------------- */

typedef struct gpuopt_context gpuopt_context;

/* Options flags. */
#define GPUOPT_OPTION_IGNORE_ENV 0x1u         /* do not read GPUOPT_* variables */
#define GPUOPT_OPTION_IGNORE_CONFIG_FILE 0x2u /* do not read any config file */

/* Options for gpuopt_context_create. Every field is optional: a zeroed struct
 * (with struct_size set) changes nothing. String fields take exactly the
 * values the matching environment variables take, and override them
 * (precedence: built-in defaults < config file < environment < these
 * options). A malformed value here makes gpuopt_context_create fail with
 * GPUOPT_ERR_CONFIG and a detail naming the field, the value and what is
 * accepted (the same value in the environment only logs a warning). */
typedef struct gpuopt_options {
    size_t struct_size; /* sizeof(gpuopt_options) */
    uint32_t flags;     /* GPUOPT_OPTION_* */
    const char *backends;    /* like GPUOPT_BACKEND: "auto", "cpu", "cuda,opencl" */
    const char *device;      /* like GPUOPT_DEVICE: "auto", "cuda:1", "GPU-…", "0000:3b:00.0" */
    const char *level;       /* like GPUOPT_LEVEL: "0", "1", "2" */
    const char *log_level;   /* like GPUOPT_LOG: "off", "error", "warn", "info", "debug" */
    const char *config_path; /* like GPUOPT_CONFIG; "" reads no file */
    const char *sysfs_root;  /* like GPUOPT_SYSFS_ROOT */
    const char *cache_dir;   /* like GPUOPT_CACHE_DIR */
    const char *reduced_precision; /* "true"/"false": may plans trade precision for speed */
    gpuopt_log_fn log_fn;    /* NULL: messages go to stderr */
    void *log_user;          /* passed to log_fn */
} gpuopt_options;

/* sizeof(gpuopt_options) in this library. */
GPUOPT_API size_t gpuopt_options_size(void);

/* Creates a context. `options` may be NULL (defaults, config file and
 * environment). On success *out holds the context; on failure *out is NULL.
 * Reads the configuration only: no backend is opened here. */
GPUOPT_API gpuopt_status gpuopt_context_create(const gpuopt_options *options,
                                               gpuopt_context **out);

/* Destroys a context, its devices and its backend state. Plans made from it
 * must be destroyed first. NULL does nothing. Vendor libraries stay loaded
 * (unloading them at run time is unsafe with several drivers). */
GPUOPT_API void gpuopt_context_destroy(gpuopt_context *ctx);

/* Changes the log level and callback of a context. `fn` NULL means stderr.
 * GPUOPT_ERR_OUT_OF_RANGE for a level outside OFF..DEBUG. */
GPUOPT_API gpuopt_status gpuopt_context_set_log(gpuopt_context *ctx, int32_t level,
                                                gpuopt_log_fn fn, void *user);

/* Overrides one knob in every plan this context makes afterwards (source
 * "api", above config file and environment). `value` is parsed by the knob's
 * type: "true"/"false" for bools, an integer for ints, a size such as
 * "268435456", "256MiB" or "2e9" for bytes, text for strings; and checked
 * against the knob's domain (docs/knobs.md: a range, accepted words, a
 * form). Unknown knob names are GPUOPT_ERR_NOT_FOUND; values that do not
 * parse or lie outside the domain are GPUOPT_ERR_INVALID_ARGUMENT, the
 * detail naming the knob, the value and the domain. Knobs derived from
 * others (OMP_NUM_THREADS from "threads") follow an override of their
 * inputs; overriding a derived knob itself wins over its derivation.
 * `value` NULL removes an API override. */
GPUOPT_API gpuopt_status gpuopt_context_set_knob(gpuopt_context *ctx, const char *name,
                                                 const char *value);

/* ------------------------------------------------------------------------- */
/* Backends                                                                   */
/* ------------------------------------------------------------------------- */

typedef enum gpuopt_backend_status {
    GPUOPT_BACKEND_NOT_PROBED = 0,  /* not opened yet (laziness) */
    GPUOPT_BACKEND_AVAILABLE = 1,   /* loaded; may have zero devices */
    GPUOPT_BACKEND_UNAVAILABLE = 2, /* library or driver missing: the reason says which */
    GPUOPT_BACKEND_ERROR = 3,       /* library present but broken: the reason says how */
    GPUOPT_BACKEND_DISABLED = 4     /* excluded by GPUOPT_BACKEND or options */
} gpuopt_backend_status;

/* One backend as gpuopt_backend_at reports it. The strings point into the
 * context and live as long as it does (a backend is probed once per
 * context, so they never change); none is NULL. They are pointers, not
 * arrays, so that a long library path or a vendor's message is never cut
 * to a length frozen into the ABI (curl's info structs do the same). */
typedef struct gpuopt_backend_info {
    size_t struct_size;
    const char *name;            /* "cuda", "rocm", "opencl", "cpu" */
    int32_t status;              /* gpuopt_backend_status */
    int32_t device_count;        /* devices it found (before merging), 0 when not available */
    double init_ms;              /* wall time of opening and enumerating, -1 when not probed */
    const char *reason;          /* why it is not available; when it is, "" or a note */
    const char *library;         /* path of the vendor library actually loaded; "" if none */
    const char *driver_version;  /* "" when unknown */
    const char *runtime_version; /* "" when unknown */
} gpuopt_backend_info;

GPUOPT_API size_t gpuopt_backend_info_size(void);

/* Number of backends compiled into the library (always at least 1, the CPU). */
GPUOPT_API gpuopt_status gpuopt_backend_count(gpuopt_context *ctx, int32_t *count);

/* Fills `info` for backend `index` (0 .. count-1, in priority order). Probes
 * that backend first if it was not probed yet, unless it is disabled. */
GPUOPT_API gpuopt_status gpuopt_backend_at(gpuopt_context *ctx, int32_t index,
                                           gpuopt_backend_info *info);

/* ------------------------------------------------------------------------- */
/* Devices                                                                    */
/* ------------------------------------------------------------------------- */

typedef struct gpuopt_device gpuopt_device;

typedef enum gpuopt_device_type {
    GPUOPT_DEVICE_TYPE_OTHER = 0,
    GPUOPT_DEVICE_TYPE_CPU = 1,
    GPUOPT_DEVICE_TYPE_GPU = 2,
    GPUOPT_DEVICE_TYPE_ACCELERATOR = 3
} gpuopt_device_type;

/* Feature bits of gpuopt_device_info.features / .features_known. */
typedef enum gpuopt_feature {
    GPUOPT_FEATURE_FP64 = 0x01,
    GPUOPT_FEATURE_FP16 = 0x02,
    GPUOPT_FEATURE_BF16 = 0x04,
    GPUOPT_FEATURE_TF32 = 0x08,
    GPUOPT_FEATURE_FP8 = 0x10,
    GPUOPT_FEATURE_INT8 = 0x20,
    GPUOPT_FEATURE_MATRIX_UNITS = 0x40 /* tensor cores, MFMA, WMMA, AMX */
} gpuopt_feature;

/* A yes/no fact or setting that may be unknown or unset
 * (gpuopt_device_info.integrated, .unified_memory, .ecc;
 * gpuopt_workload.reduced_precision). The fields stay int32_t, as every
 * field of a public struct, and hold these values. */
typedef enum gpuopt_tristate {
    GPUOPT_TRISTATE_UNKNOWN = -1, /* not known (a fact), or not set (a setting) */
    GPUOPT_TRISTATE_NO = 0,
    GPUOPT_TRISTATE_YES = 1
} gpuopt_tristate;

/* The normalised record of one physical device. Unknown or inapplicable
 * facts are -1 (int32, GPUOPT_TRISTATE_UNKNOWN for the gpuopt_tristate
 * ones), 0 (uint64) or "" (strings). The strings are arrays whose sizes
 * follow the vendors' own limits (CUDA's cudaDeviceProp.name[256], a
 * 16-byte UUID, a PCI bus id), and each is terminated inside its array. */
typedef struct gpuopt_device_info {
    size_t struct_size;
    char id[32];        /* "cuda:0": primary backend and its native index */
    char backend[16];   /* primary backend: the native one when several see the device */
    char routes[64];    /* every backend that reaches it, primary first: "cuda,opencl" */
    int32_t index;      /* native index within the primary backend */
    int32_t type;       /* gpuopt_device_type */
    char vendor[64];    /* "NVIDIA", "AMD", "Intel", "GenuineIntel", ... */
    char name[256];     /* marketing or model name */
    char arch_family[32];  /* lower case: "hopper", "cdna3", "rdna3"; a CPU's microarchitecture */
    char arch_name[64];    /* "sm_90", "gfx942", "x86-64-v4" */
    int32_t cc_major;      /* CUDA compute capability, -1 elsewhere */
    int32_t cc_minor;
    int32_t arch_extrapolated; /* 1: newer than the library's tables, facts extrapolated */
    int32_t compute_units;     /* SMs, CUs, OpenCL compute units, usable CPU cores */
    int32_t simd_width;        /* warp 32, wavefront 64/32, CPU 32-bit lanes per vector */
    int32_t clock_mhz;         /* max clock */
    int32_t integrated;        /* gpuopt_tristate: YES shares memory with the host CPU */
    int32_t unified_memory;    /* gpuopt_tristate: YES unified addressing with the host */
    int32_t ecc;               /* gpuopt_tristate: YES ECC on */
    int32_t max_threads_per_block; /* max work-group size */
    uint64_t memory_bytes;         /* total memory the device may use */
    uint64_t memory_free_bytes;    /* free memory at the last reading (a plan,
                                      gpuopt_device_memory, the device list), 0 unknown */
    uint64_t l2_bytes;             /* L2 (GPU) or last-level cache (CPU) */
    uint64_t shared_mem_per_block; /* shared / local memory per block */
    char pci_bus_id[32];           /* "0000:17:00.0" */
    char uuid[64];                 /* "GPU-xxxxxxxx-…" (NVIDIA), vendor form elsewhere */
    char driver_version[64];
    char runtime_version[64];
    uint32_t features;       /* gpuopt_feature bits present */
    uint32_t features_known; /* gpuopt_feature bits the backend could determine */
} gpuopt_device_info;

GPUOPT_API size_t gpuopt_device_info_size(void);

/* Number of devices of every enabled backend, after merging devices seen by
 * several backends. Probes every enabled backend not probed yet. */
GPUOPT_API gpuopt_status gpuopt_device_count(gpuopt_context *ctx, int32_t *count);

/* Device `index` (0 .. count-1): GPUs of native backends first (CUDA, ROCm),
 * then OpenCL, then the CPU, each in its backend's native order. */
GPUOPT_API gpuopt_status gpuopt_device_at(gpuopt_context *ctx, int32_t index,
                                          gpuopt_device **device);

/* Copies the device's record into `info` (struct_size bytes at most). */
GPUOPT_API gpuopt_status gpuopt_device_get_info(const gpuopt_device *device,
                                                gpuopt_device_info *info);

/* Picks a device by policy:
 *   NULL        the context's policy (GPUOPT_DEVICE, config file, else "auto")
 *   "auto"      discrete GPU over integrated GPU over CPU; a native backend
 *               over OpenCL; then the higher estimated fp32 throughput,
 *               more memory, then order (docs/selection.md)
 *   "gpu"       like auto, but only GPUs (GPUOPT_ERR_NO_DEVICE if none)
 *   "cpu", "opencl", "cuda", "rocm"     the best device of that backend
 *   "cuda:1"    backend and native index (decimal digits only)
 *   "GPU-…"     a UUID (or a unique prefix of at least 8 characters)
 *   "0000:3b:00.0" or "3b:00.0"        a PCI bus id
 * The answer does not depend on what was called before: "auto" probes
 * every native GPU backend (CUDA, ROCm) and stops there once one offers a
 * discrete GPU, which nothing probed later could outrank. For a workload,
 * gpuopt_plan_create_for(ctx, NULL, ...) selects with it (fit, then the
 * throughput it needs). A present-but-broken backend the search passes
 * over is logged once per context at warning level. Devices listed only
 * from the kernel's description (their backend is unavailable: driver
 * library missing) are never chosen by "auto", "gpu" or a backend name; a
 * UUID, PCI id or backend:index still names them. A malformed policy is
 * GPUOPT_ERR_INVALID_ARGUMENT; a well-formed one that matches nothing is
 * GPUOPT_ERR_NO_DEVICE; the detail says which and lists what is accepted
 * or present, and why each backend offers nothing. */
GPUOPT_API gpuopt_status gpuopt_device_select(gpuopt_context *ctx, const char *policy,
                                              gpuopt_device **device);

/* The context's backends and devices as one JSON object (see docs/json.md):
 * {gpuopt_version, backends: [...], devices: [...], selection}, the
 * selected device marked and selection.reason saying why it won; a device
 * the compiler found no longer targets carries a warning. Probes every
 * enabled backend. Free *json with gpuopt_free. */
GPUOPT_API gpuopt_status gpuopt_context_to_json(gpuopt_context *ctx, char **json);

/* ------------------------------------------------------------------------- */
/* Diagnosis                                                                  */
/* ------------------------------------------------------------------------- */

/* Why each backend can or cannot use a GPU here, and what to do about it:
 * the answer to "why is there no GPU?" that `gpuopt doctor` prints. Probes
 * every enabled backend, then looks at what the drivers need: GPUs on the
 * PCI bus and the kernel driver bound to each, the kernel modules, the
 * device nodes (/dev/nvidia*, /dev/kfd, /dev/dri/renderD*) and whether this
 * user may open them (with the group to join), the vendor libraries (the
 * toolkit's stub libcuda shadowing the driver's, a driver older than the
 * CUDA runtime found), registered OpenCL ICDs and whether each loads,
 * visibility variables hiding every device (CUDA_VISIBLE_DEVICES="", ...),
 * and container hints. It may open vendor libraries to do so (NVRTC, the
 * CUDA runtime, each OpenCL ICD); it changes nothing on the machine.
 *
 * *json receives one object (docs/doctor.md):
 *   {gpuopt_version, sysfs_root, container, accelerators_usable,
 *    accelerators: ["cuda:0", ...], verdict, user: {name, uid, groups, source},
 *    backends: [{name, compiled_in, status, reason, library, driver_version,
 *                runtime_version, device_count, usable_accelerators, worst}],
 *    findings: [{backend, check, status, summary, evidence: [...], path, fix}]}
 * where a finding's status is "ok", "info", "warning" or "problem" and fix
 * is a command or a sentence (null when nothing is to be done). An
 * accelerator is a device that is not a CPU, reachable through an available
 * backend. Under GPUOPT_SYSFS_ROOT the doctor reads /dev, /etc/group and
 * /etc/OpenCL/vendors from that root too (docs/doctor.md: the stand-in files
 * a recorded tree uses for node owners and the user's groups).
 *
 * Free *json with gpuopt_free; on failure *json is NULL. NULL ctx or json
 * is GPUOPT_ERR_INVALID_ARGUMENT; a context from before fork() is
 * GPUOPT_ERR_FORKED. Takes the context's lock for the whole diagnosis. */
GPUOPT_API gpuopt_status gpuopt_context_diagnose(gpuopt_context *ctx, char **json);

/* ------------------------------------------------------------------------- */
/* Plans and knobs                                                            */
/* ------------------------------------------------------------------------- */

typedef struct gpuopt_plan gpuopt_plan;

#define GPUOPT_LEVEL_DEFAULT (-1) /* the context's level (GPUOPT_LEVEL, else 1) */
#define GPUOPT_LEVEL_MAX 2
#define GPUOPT_TIER_NONE (-1) /* gpuopt_knob.tier of a knob only a user set */

typedef enum gpuopt_knob_type {
    GPUOPT_KNOB_BOOL = 1,   /* int_value 0 or 1; text "true"/"false" */
    GPUOPT_KNOB_INT = 2,    /* int_value */
    GPUOPT_KNOB_BYTES = 3,  /* int_value in bytes; text the plain number */
    GPUOPT_KNOB_STRING = 4  /* text */
} gpuopt_knob_type;

typedef enum gpuopt_knob_source {
    GPUOPT_SOURCE_DEFAULT = 0,   /* tier 0 rule */
    GPUOPT_SOURCE_DETECTED = 1,  /* tier 1 rule on detected facts */
    GPUOPT_SOURCE_BENCHMARK = 2, /* tier 2, measured now */
    GPUOPT_SOURCE_CACHE = 3,     /* tier 2, measured earlier and cached */
    GPUOPT_SOURCE_CONFIG = 4,    /* the config file's "knobs" */
    GPUOPT_SOURCE_ENV = 5,       /* GPUOPT_KNOBS */
    GPUOPT_SOURCE_API = 6        /* gpuopt_context_set_knob */
} gpuopt_knob_source;

/* One knob as read from a plan. Pointers live as long as the plan. */
typedef struct gpuopt_knob {
    size_t struct_size;
    const char *name;    /* dotted stable name: "threads", "launch.block_size" */
    int32_t type;        /* gpuopt_knob_type */
    int32_t tier;        /* the tier that set it: 0, 1, 2; GPUOPT_TIER_NONE: a user only */
    int32_t source;      /* gpuopt_knob_source */
    int32_t reserved;    /* 0 */
    int64_t int_value;   /* bools, ints and bytes; 0 for strings */
    const char *value;   /* the value as text, always set */
    const char *env;     /* environment variable it exports to, or NULL */
    const char *reason;  /* why, with the fact behind it */
} gpuopt_knob;

GPUOPT_API size_t gpuopt_knob_size(void);

/* Builds a plan for `device` (NULL: the context's selected device) at
 * `level` 0..2 (GPUOPT_LEVEL_DEFAULT: the context's level). A tier that
 * cannot run leaves the plan at the last tier that succeeded: the plan is
 * still returned with GPUOPT_OK, gpuopt_plan_level() tells the level applied
 * and gpuopt_plan_warning_at() why. The plan's JSON says why its device was
 * chosen (selection.reason); its warnings name a present-but-broken backend
 * the selection passed over and a compiler that no longer targets the
 * device (level 2 then stays at 1). A level outside -1..2 is
 * GPUOPT_ERR_OUT_OF_RANGE; a device of another context is
 * GPUOPT_ERR_INVALID_ARGUMENT. On failure *out is NULL. */
GPUOPT_API gpuopt_status gpuopt_plan_create(gpuopt_context *ctx, gpuopt_device *device,
                                            int32_t level, gpuopt_plan **out);

/* What the program will run, so a plan can size batches, advise on
 * quantisation or offloading, and decide whether precision may be traded
 * for speed. Zero/unset fields mean "unknown": the knobs that need them are
 * then absent, never guessed. */
typedef enum gpuopt_objective {
    GPUOPT_OBJECTIVE_THROUGHPUT = 0, /* items per second (default) */
    GPUOPT_OBJECTIVE_LATENCY = 1     /* time to one result */
} gpuopt_objective;

/* What limits the workload's speed, for ranking devices (docs/selection.md). */
typedef enum gpuopt_bound {
    GPUOPT_BOUND_UNKNOWN = 0, /* rank by arithmetic throughput (default) */
    GPUOPT_BOUND_COMPUTE = 1, /* arithmetic throughput limits it: the same ranking, said */
    GPUOPT_BOUND_MEMORY = 2   /* memory bandwidth limits it (large elementwise work, LLM
                                 decoding at small batch): rank by peak memory bandwidth */
} gpuopt_bound;

typedef struct gpuopt_workload {
    size_t struct_size;
    uint64_t model_bytes;      /* weights/model data resident on the device; 0 unknown */
    uint64_t item_bytes;       /* device memory per item of a batch; 0 unknown */
    int32_t reduced_precision; /* gpuopt_tristate: YES acceptable, NO precision-sensitive (no
                                  fp16/bf16/tf32/fp8), UNKNOWN: the configuration decides */
    int32_t quantized;         /* 1: the model is already quantised (fp8/int8 paths may apply) */
    int32_t objective;         /* gpuopt_objective */
    int32_t fixed_shapes;      /* 1: shapes repeat call after call (benchmark-once modes pay off) */
    /* Added with gpuopt_bound: a caller whose struct_size ends before it
     * gets GPUOPT_BOUND_UNKNOWN. */
    int32_t bound;             /* gpuopt_bound */
    /* Added in 0.2 for latency advice (docs/latency.md); a caller whose
     * struct_size ends before them gets "unknown" (0) for each. A step is
     * one unit of the program's work that must finish in time: one phrase
     * synthesised, one frame, one request. */
    int32_t launches_per_step;        /* kernel launches one step makes; 0 unknown */
    uint64_t step_time_ns;            /* the step's time target (its latency budget); 0 none */
    uint64_t h2d_bytes_per_step;      /* bytes one step copies host to device; 0 unknown */
    uint64_t d2h_bytes_per_step;      /* bytes one step copies device to host; 0 unknown */
    int32_t items_per_step;           /* items one step holds at once (10 users: 10); 0 unknown */
} gpuopt_workload;

GPUOPT_API size_t gpuopt_workload_size(void);

/* Sets struct_size and every field to "unknown" (reduced_precision
 * GPUOPT_TRISTATE_UNKNOWN). NULL does nothing. */
GPUOPT_API void gpuopt_workload_init(gpuopt_workload *workload);

/* gpuopt_plan_create for a described workload (NULL: none). With device
 * NULL the selection ranks for the workload: a device it fits on first, then
 * the matrix-unit rate of the precision it will use when it accepts reduced
 * precision, peak memory bandwidth when it is memory-bound, fp32 otherwise
 * (docs/selection.md). Without a workload the workload-derived knobs (batch
 * size, quantisation and offload advice) are absent. A field outside its documented values is
 * GPUOPT_ERR_OUT_OF_RANGE, naming the field; fields that contradict each
 * other (reduced_precision 0, precision-sensitive, with quantized 1) are
 * GPUOPT_ERR_INVALID_ARGUMENT, naming both. Tier 2 is skipped, with a warning, for a workload
 * whose device footprint (model_bytes + item_bytes) is under 1 MiB: it
 * finishes before a measurement could pay off. */
GPUOPT_API gpuopt_status gpuopt_plan_create_for(gpuopt_context *ctx, gpuopt_device *device,
                                                int32_t level, const gpuopt_workload *workload,
                                                gpuopt_plan **out);

/* NULL does nothing. */
GPUOPT_API void gpuopt_plan_destroy(gpuopt_plan *plan);

/* The level asked for and the level the plan reached. Either pointer may be
 * NULL when that value is not wanted (not both). */
GPUOPT_API gpuopt_status gpuopt_plan_level(const gpuopt_plan *plan, int32_t *requested,
                                           int32_t *applied);

/* The device the plan is for. */
GPUOPT_API gpuopt_status gpuopt_plan_device(const gpuopt_plan *plan, gpuopt_device **device);

GPUOPT_API gpuopt_status gpuopt_plan_knob_count(const gpuopt_plan *plan, int32_t *count);

/* Knob `index` in plan order (0 .. count-1). */
GPUOPT_API gpuopt_status gpuopt_plan_knob_at(const gpuopt_plan *plan, int32_t index,
                                             gpuopt_knob *knob);

/* The knob called `name`; GPUOPT_ERR_NOT_FOUND when the plan has none. */
GPUOPT_API gpuopt_status gpuopt_plan_knob_find(const gpuopt_plan *plan, const char *name,
                                               gpuopt_knob *knob);

GPUOPT_API gpuopt_status gpuopt_plan_warning_count(const gpuopt_plan *plan, int32_t *count);

/* Warning `index`: why a tier was not applied, a user override that did not
 * apply, ... *text lives as long as the plan. */
GPUOPT_API gpuopt_status gpuopt_plan_warning_at(const gpuopt_plan *plan, int32_t index,
                                                const char **text);

/* The plan as JSON: {level_requested, level_applied, device, selection:
 * {policy, reason}, knobs: [{name, type, value, tier, source, reason, env}],
 * warnings}. Free with gpuopt_free. */
GPUOPT_API gpuopt_status gpuopt_plan_to_json(const gpuopt_plan *plan, char **json);

/* The plan's environment knobs as POSIX shell lines that set a variable
 * only where it is unset, the rule of gpuopt_plan_apply (a variable the
 * user set, even to "", is kept): ': "${OMP_NUM_THREADS=8}"; export
 * OMP_NUM_THREADS\n', the value escaped for the double quotes ($ ` " \ }
 * preceded by a backslash), for `eval` in a POSIX shell (dash, bash). Free
 * with gpuopt_free; an empty string when the plan exports nothing. */
GPUOPT_API gpuopt_status gpuopt_plan_to_env(const gpuopt_plan *plan, char **text);

/* ------------------------------------------------------------------------- */
/* Applying a plan                                                            */
/* ------------------------------------------------------------------------- */

#define GPUOPT_APPLY_ENV 0x1u      /* set the plan's environment knobs (never overwriting) */
#define GPUOPT_APPLY_DEVICE 0x2u   /* settings the library owns on the current device */
#define GPUOPT_APPLY_AFFINITY 0x4u /* bind the calling thread to the plan's cpu.affinity */

/* Applies a plan to this process. GPUOPT_APPLY_ENV sets every environment
 * knob (OMP_NUM_THREADS, CUDA_MODULE_LOADING, ...) that is not already set:
 * a variable the user set, even to "", is never overwritten, and the report
 * says which were kept. setenv() is not thread-safe: apply before starting
 * threads (or before loading the framework that reads the variables).
 * GPUOPT_APPLY_DEVICE applies the device settings the backend owns (e.g. a
 * CUDA context limit) on the calling thread's current device context; a
 * backend with none reports so. GPUOPT_APPLY_AFFINITY binds the calling
 * thread (and so the threads and programs it starts afterwards) to the
 * plan's cpu.affinity with sched_setaffinity(2), the CPUs of the device's
 * NUMA node this process may use (docs/fleet.md); a plan without that knob
 * (a CPU device, no NUMA facts) reports "not bound" and changes nothing. The
 * library never binds a thread unless this flag asks it to; it is applied
 * before the environment, so a refused binding (CPUs gone offline since the
 * plan was made) sets no variable either. `report` (may be NULL) receives
 * one line per action ("set OMP_NUM_THREADS=8", "kept OMP_PLACES=threads
 * (already set; the plan had cores)", "bound to CPUs 0-55,112-167
 * (cpu.affinity)"); free with gpuopt_free. Unknown flag bits are
 * GPUOPT_ERR_INVALID_ARGUMENT. On any failure *report is NULL and the
 * detail says what was refused and why (a variable setenv() refused, a
 * device setting the driver refused); what was applied before the failure
 * stays applied. */
GPUOPT_API gpuopt_status gpuopt_plan_apply(const gpuopt_plan *plan, uint32_t flags,
                                           char **report);

/* The plan as OpenCL build options (knob opencl.build_options), for
 * clBuildProgram; "" when the plan has none. Free with gpuopt_free. */
GPUOPT_API gpuopt_status gpuopt_plan_to_build_options(const gpuopt_plan *plan, char **options);

/* ------------------------------------------------------------------------- */
/* Memory                                                                     */
/* ------------------------------------------------------------------------- */

/* Where a reading of a device's memory came from (docs/memory.md). */
typedef enum gpuopt_memory_source {
    GPUOPT_MEMORY_SOURCE_NONE = 0,        /* free memory unknown: source_text says why; the
                                             total is the device record's */
    GPUOPT_MEMORY_SOURCE_MANAGEMENT = 1,  /* a management library that needs no context
                                             (NVIDIA's NVML, nvmlDeviceGetMemoryInfo) */
    GPUOPT_MEMORY_SOURCE_KERNEL = 2,      /* the kernel driver's own counters (amdgpu's
                                             mem_info_vram_total / mem_info_vram_used) */
    GPUOPT_MEMORY_SOURCE_CONTEXT = 3,     /* the driver's query in a context that was already
                                             current or active (cuMemGetInfo) */
    GPUOPT_MEMORY_SOURCE_NEW_CONTEXT = 4, /* the driver's query in a context created for this
                                             reading and destroyed after it (plans only) */
    GPUOPT_MEMORY_SOURCE_RUNTIME = 5,     /* a runtime's device query (hipMemGetInfo, OpenCL's
                                             CL_DEVICE_GLOBAL_FREE_MEMORY_AMD) */
    GPUOPT_MEMORY_SOURCE_HOST = 6         /* host memory: /proc/meminfo, capped by the cgroup's
                                             memory limit */
} gpuopt_memory_source;

/* One reading of a device's memory. */
typedef struct gpuopt_memory_info {
    size_t struct_size;
    uint64_t total_bytes; /* what the device has, as the source counts it; 0 unknown */
    uint64_t free_bytes;  /* free now; 0 with source NONE: unknown */
    uint64_t used_bytes;  /* in use, as the source counts it (total - free when it says
                             nothing else); 0 with source NONE */
    int32_t source;       /* gpuopt_memory_source */
    int32_t reserved;     /* 0 */
    double age_s;         /* how old the numbers are at return: 0 for a reading taken by
                             this call, more for one a backend reuses (the CPU's, for up
                             to a second) */
    char source_text[256]; /* the source in words ("NVML nvmlDeviceGetMemoryInfo (by UUID)"),
                              or why free memory is unknown */
} gpuopt_memory_info;

GPUOPT_API size_t gpuopt_memory_info_size(void);

/* Reads the device's memory now, without creating a driver context: NVML
 * for NVIDIA GPUs, amdgpu's sysfs counters for AMD GPUs (no ROCm user
 * space needed), the driver where a context is already current or active,
 * /proc/meminfo and the cgroup limit for the CPU. A device no source can
 * answer for is still GPUOPT_OK, with source GPUOPT_MEMORY_SOURCE_NONE,
 * the record's total and source_text saying what was tried (NVML missing,
 * no context active, ...). Updates the record's memory_free_bytes when
 * free memory is known. NULL device or info is
 * GPUOPT_ERR_INVALID_ARGUMENT; a context from before fork() is
 * GPUOPT_ERR_FORKED. Takes the device's context lock. */
GPUOPT_API gpuopt_status gpuopt_device_memory(gpuopt_device *device, gpuopt_memory_info *info);

/* Where a registered allocation lives. */
typedef enum gpuopt_memory_place {
    GPUOPT_PLACE_DEVICE = 0, /* device memory: counts against the budget */
    GPUOPT_PLACE_HOST = 1,   /* ordinary (pageable) host memory */
    GPUOPT_PLACE_PINNED = 2  /* page-locked host memory (cudaHostAlloc, hipHostMalloc) */
} gpuopt_memory_place;

/* A memory manager: a budget for one device, the allocations a program
 * registers by name, and advice computed from live numbers with the plan's
 * own workload rules (docs/memory.md). It allocates nothing itself: the
 * program allocates as it always does and tells the manager. All its
 * functions may be called from any thread (it has its own lock). */
typedef struct gpuopt_memory gpuopt_memory;

/* Creates a manager for the plan's device, with what the plan decided:
 * the budget is the knob memory.budget_bytes when set (config file
 * "knobs", GPUOPT_KNOBS, gpuopt_context_set_knob), else memory.budget_percent
 * of the device's total, else the plan's headroom rule (the usable memory
 * its batch size was computed from: 90% of the free memory it read, 80% of
 * the total at level 0); the warning threshold is memory.warn_percent, else
 * 90; the workload is the plan's. The plan may be destroyed afterwards; the
 * manager must be destroyed before the plan's context. NULL plan or out is
 * GPUOPT_ERR_INVALID_ARGUMENT; on failure *out is NULL. */
GPUOPT_API gpuopt_status gpuopt_memory_create(const gpuopt_plan *plan, gpuopt_memory **out);

/* NULL does nothing. Registered allocations are forgotten. */
GPUOPT_API void gpuopt_memory_destroy(gpuopt_memory *mem);

/* Sets the budget in bytes of device memory; 0 goes back to the one the
 * plan gave. A budget above the device's total is GPUOPT_ERR_OUT_OF_RANGE. */
GPUOPT_API gpuopt_status gpuopt_memory_set_budget(gpuopt_memory *mem, uint64_t bytes);

/* Sets the warning threshold, percent of the budget or of the device's
 * memory in use (1..100; default 90). Outside it is GPUOPT_ERR_OUT_OF_RANGE. */
GPUOPT_API gpuopt_status gpuopt_memory_set_threshold(gpuopt_memory *mem, int32_t percent);

/* Registers an allocation of `bytes` called `name` (1..127 characters, unique
 * among the live ones) in `place` (gpuopt_memory_place). A name already
 * registered is GPUOPT_ERR_INVALID_ARGUMENT; a place outside the enum or 0
 * bytes GPUOPT_ERR_OUT_OF_RANGE. Registering past the budget is allowed
 * (the program did allocate): gpuopt_memory_check says so. */
GPUOPT_API gpuopt_status gpuopt_memory_register(gpuopt_memory *mem, const char *name,
                                                int32_t place, uint64_t bytes);

/* Forgets the allocation called `name`; GPUOPT_ERR_NOT_FOUND when none is. */
GPUOPT_API gpuopt_status gpuopt_memory_release(gpuopt_memory *mem, const char *name);

/* What a manager holds and sees, at the call. */
typedef struct gpuopt_memory_stats {
    size_t struct_size;
    uint64_t budget_bytes;             /* device memory the program may use */
    uint64_t device_bytes;             /* registered now, per place */
    uint64_t host_bytes;
    uint64_t pinned_bytes;
    uint64_t device_high_water_bytes;  /* the most ever registered at once, per place */
    uint64_t host_high_water_bytes;
    uint64_t pinned_high_water_bytes;
    int32_t allocations;               /* live registered allocations */
    int32_t threshold_percent;         /* the warning threshold */
    double budget_share;               /* device_bytes / budget_bytes (1.0 = all of it) */
    uint64_t live_total_bytes;         /* a live reading (gpuopt_device_memory) */
    uint64_t live_free_bytes;
    uint64_t live_used_bytes;
    int32_t live_source;               /* gpuopt_memory_source */
    int32_t reserved;                  /* 0 */
} gpuopt_memory_stats;

GPUOPT_API size_t gpuopt_memory_stats_size(void);

GPUOPT_API gpuopt_status gpuopt_memory_get_stats(gpuopt_memory *mem, gpuopt_memory_stats *stats);

/* The stats and every live allocation as JSON (docs/memory.md):
 * {device, budget_bytes, budget_source, threshold_percent, registered:
 * {device, host, pinned}, high_water: {...}, budget_share, live: {total_bytes,
 * free_bytes, used_bytes, source, source_text, age_s}, allocations: [{name,
 * place, bytes}]}. Free with gpuopt_free. */
GPUOPT_API gpuopt_status gpuopt_memory_to_json(gpuopt_memory *mem, char **json);

/* Checks the registered device memory against the budget, and the device's
 * memory in use (a live reading) against its total. At or above the
 * threshold, *warning receives what is over and the advice, computed with
 * the plan's workload rules from the live free memory: a smaller batch (the
 * largest that fits), quantising (when the workload accepts reduced
 * precision), offloading to host memory (where device memory is separate);
 * the warning is also logged at warning level. Below it, *warning is NULL.
 * Free with gpuopt_free. */
GPUOPT_API gpuopt_status gpuopt_memory_check(gpuopt_memory *mem, char **warning);

/* What the plan's workload rules give for a model of `model_bytes` (its
 * weights in 16 bits, as for gpuopt_workload) and items of `item_bytes`,
 * sized against the device's live free memory (with the plan's 10%
 * headroom) instead of the plan's earlier reading. */
typedef struct gpuopt_memory_advice {
    size_t struct_size;
    uint64_t free_bytes;     /* the live free memory it was sized against */
    uint64_t usable_bytes;   /* after headroom */
    int32_t quantize_bits;   /* 0: the model fits as it is; 8 or 4: quantise to fit
                                (only when the workload accepts reduced precision) */
    int32_t reserved;        /* 0 */
    uint64_t offload_bytes;  /* the part of the model to keep in host memory; 0 none */
    int64_t max_batch;       /* the largest batch beside the model; 0 when not one item
                                fits; -1 without an item size */
    char reason[1024];       /* the arithmetic in words */
} gpuopt_memory_advice;

GPUOPT_API size_t gpuopt_memory_advice_size(void);

/* model_bytes 0 with item_bytes 0 is GPUOPT_ERR_INVALID_ARGUMENT (nothing
 * to size); either above 2^63 is GPUOPT_ERR_OUT_OF_RANGE. */
GPUOPT_API gpuopt_status gpuopt_memory_recommend(gpuopt_memory *mem, uint64_t model_bytes,
                                                 uint64_t item_bytes,
                                                 gpuopt_memory_advice *advice);

/* ------------------------------------------------------------------------- */
/* Tuning cache                                                               */
/* ------------------------------------------------------------------------- */

/* The tuning cache (GPUOPT_CACHE_DIR, default $XDG_CACHE_HOME/gpuopt; one
 * file per device). Path of the directory; a JSON listing of its entries;
 * a check of every file (rewriting nothing) with a JSON report; removal of
 * every entry, or of one device's file when `device` is not NULL.
 * docs/tuning.md describes the files and both JSON documents. Strings are
 * freed with gpuopt_free. A missing directory lists and checks as empty and
 * clears as nothing; a directory or file that cannot be read or removed is
 * GPUOPT_ERR_IO with the path in the detail. Other files in the directory
 * are never touched. A privileged process (set-user-ID, set-group-ID, file
 * capabilities) has no cache directory unless gpuopt_options.cache_dir
 * names one: these calls are then GPUOPT_ERR_NOT_FOUND (docs/security.md). */
GPUOPT_API gpuopt_status gpuopt_cache_path(gpuopt_context *ctx, char **path);
GPUOPT_API gpuopt_status gpuopt_cache_list(gpuopt_context *ctx, char **json);
GPUOPT_API gpuopt_status gpuopt_cache_verify(gpuopt_context *ctx, char **json);
GPUOPT_API gpuopt_status gpuopt_cache_clear(gpuopt_context *ctx, gpuopt_device *device);

/* Sharing results between identical machines (docs/tuning.md, "Sharing
 * results"). gpuopt_cache_export: the finished records of every device
 * file, or of `device`'s only, as text (JSON Lines: each file's header with
 * its device fingerprint, its records, then an end line with the counts).
 * gpuopt_cache_import: `len` bytes of such text into this context's cache.
 * Everything is read and checked before anything is written: a cut export,
 * another schema or a record that fails its checks is
 * GPUOPT_ERR_INVALID_ARGUMENT naming the line, and nothing is imported.
 * Each exported file's records go to the file of this context's first
 * device with the same backend, architecture and compute units (probing
 * the backends not probed yet), or, with GPUOPT_CACHE_IMPORT_ALL, to a file
 * of the exported device itself when none matches (filling a shared
 * directory); a local record measured at the same time or later is kept.
 * Records whose driver, compiler or library differ from this machine's are
 * re-verified on first use, as any such hit is. Each file is replaced
 * whole, under its lock. *report (may be NULL): JSON {"files": [{"device",
 * "file", "records", "imported", "kept_newer", "skipped"}], "imported",
 * "kept_newer"}; free with gpuopt_free. A file that cannot be written is
 * GPUOPT_ERR_IO. */
#define GPUOPT_CACHE_IMPORT_ALL 1u
GPUOPT_API gpuopt_status gpuopt_cache_export(gpuopt_context *ctx, gpuopt_device *device,
                                             char **text);
GPUOPT_API gpuopt_status gpuopt_cache_import(gpuopt_context *ctx, const char *text, size_t len,
                                             uint32_t flags, char **report);

/* ------------------------------------------------------------------------- */
/* Profiler                                                                   */
/* ------------------------------------------------------------------------- */

/* Named, nested sections of a program's run ("load_model", "preprocess",
 * "inference", "postprocess") and where the time went: a summary per
 * section (count, total, mean, p50, p95, max, share of its parent,
 * throughput) as an aligned table or JSON, a Chrome trace (Perfetto,
 * chrome://tracing) and an SVG picture. docs/profiler.md describes every
 * output.
 *
 *   gpuopt_profiler *prof;
 *   gpuopt_profiler_create(ctx, NULL, NULL, &prof);
 *   gpuopt_profiler_begin(prof, "inference");
 *   gpuopt_profiler_count(prof, GPUOPT_COUNT_ITEMS, batch);  // throughput
 *   ... the work ...
 *   gpuopt_profiler_end(prof, "inference");
 *   char *table;
 *   gpuopt_profiler_report(prof, GPUOPT_PROFILE_TABLE, &table);
 *   ... gpuopt_free(table) ...
 *   gpuopt_profiler_destroy(prof);
 *
 * Sections. Each thread has its own stack of open sections: begin pushes,
 * end pops, and a section begun inside another is its child (the same name
 * under two parents is two sections of the summary). A section begins and
 * ends on one thread. Ending a section that is not the innermost open one
 * of the calling thread, or ending with none open, is GPUOPT_ERR_NESTING:
 * nothing changes, the detail names both sections, and the summary counts
 * the error. Names are 1 to 255 bytes of UTF-8 without control characters;
 * the library copies them.
 *
 * Clocks. Sections are timed with the host's monotonic clock. For a device
 * whose backend can time work on a stream the caller owns (CUDA and HIP
 * events, OpenCL markers on a queue made with CL_QUEUE_PROFILING_ENABLE),
 * given that stream in the options, each begin and end also records an
 * event on it, and the summary uses the device's time between them: the
 * time the stream's work between begin and end took, not the host's. The
 * events are read when a report is made; they never make begin or end
 * wait. Every output says which clock timed each section, and why device
 * time was not used when it was asked for.
 *
 * Vendor profilers. Sections are also ranges of the vendors' profilers
 * when one is attached to the process: NVTX ranges for Nsight Systems
 * (through the NVTX injection protocol: the tool's NVTX_INJECTION64_PATH),
 * roctx ranges for rocprof (the roctx library, found at run time). Nothing
 * is linked against either; the outputs say which were found.
 *
 * GPUOPT_PROFILE. When the environment names a file (GPUOPT_PROFILE=
 * trace.json; "%p" in it becomes the process id) and the context reads
 * the environment, every profiler writes its Chrome trace there when it is
 * destroyed or, if it never is, when the process exits; a name ending in
 * ".svg" gets the SVG picture instead. A second profiler of the process
 * writes "trace.2.json", and so on. `gpuopt profile -- CMD` sets it. The
 * file is written whole (a temporary file renamed over it) or not at all,
 * and the variable is ignored in a privileged (setuid) process.
 *
 * Cost. A begin/end pair of a host-timed section costs two reads of the
 * monotonic clock and about 50 ns more (docs/benchmarks.md). A disabled
 * profiler returns at once. The GPUOPT_PROFILE_* macros below take a NULL
 * profiler and then cost one branch and no call: a program can keep its
 * sections and pass NULL when it does not profile.
 *
 * Thread safety. begin, count and end may be called by any number of
 * threads at once on one profiler. report and write may run while other
 * threads record: they see every section ended before they started.
 * set_enabled may be called from any thread; change it while the calling
 * threads have no section open (between frames, requests or phases), since
 * a section that is open across the change is left unmatched. destroy must
 * not race with any other call on the same profiler. The context (and the
 * device) must outlive the profiler. */
typedef struct gpuopt_profiler gpuopt_profiler;

/* Options flags. */
#define GPUOPT_PROFILER_START_DISABLED 0x1u   /* record nothing until set_enabled(prof, 1) */
#define GPUOPT_PROFILER_NO_VENDOR_RANGES 0x2u /* do not forward sections to NVTX or roctx */

/* The most sections a profiler keeps by default (gpuopt_profiler_options). */
#define GPUOPT_PROFILER_DEFAULT_MAX_SECTIONS 1048576

/* Options for gpuopt_profiler_create. A zeroed struct (struct_size set) is
 * the default: host time, vendor ranges on, GPUOPT_PROFILE honoured. */
typedef struct gpuopt_profiler_options {
    size_t struct_size;     /* sizeof(gpuopt_profiler_options) */
    uint32_t flags;         /* GPUOPT_PROFILER_* */
    int32_t max_sections;   /* ended sections kept, 0: GPUOPT_PROFILER_DEFAULT_MAX_SECTIONS (24
                               bytes each, 80 with counts or device time); later ones are
                               counted as dropped, not kept */
    void *stream;           /* the caller's CUstream, hipStream_t or cl_command_queue on the
                               profiler's device: device time is recorded on it. NULL: host time */
    const char *trace_path; /* where to write the trace when destroyed (as GPUOPT_PROFILE,
                               which it replaces); NULL: GPUOPT_PROFILE; "": nowhere */
    const char *stream_backend; /* whose API `stream` is: "cuda", "rocm" (HIP) or "opencl", a
                                   backend reaching the device; NULL: the device's primary one
                                   (gpuopt_device_info.backend) */
} gpuopt_profiler_options;

GPUOPT_API size_t gpuopt_profiler_options_size(void);

/* What a section counts, for throughput (gpuopt_profiler_count). */
typedef enum gpuopt_count_unit {
    GPUOPT_COUNT_ITEMS = 1, /* items: samples, images, tokens, requests */
    GPUOPT_COUNT_BYTES = 2  /* bytes moved or processed */
} gpuopt_count_unit;

/* The forms of a profile (gpuopt_profiler_report, gpuopt_profiler_write). */
typedef enum gpuopt_profile_format {
    GPUOPT_PROFILE_TABLE = 1, /* the summary as an aligned text table */
    GPUOPT_PROFILE_JSON = 2,  /* the summary as JSON (docs/profiler.md) */
    GPUOPT_PROFILE_TRACE = 3, /* Chrome trace-event JSON: Perfetto, chrome://tracing */
    GPUOPT_PROFILE_SVG = 4    /* a self-contained SVG timeline and summary */
} gpuopt_profile_format;

/* Creates a profiler for the context, and `device` (may be NULL: host time
 * only) whose backend times the caller's stream when `options->stream` is
 * set. `options` may be NULL. A stream without a device, flags outside
 * GPUOPT_PROFILER_*, a device of another context, or a stream_backend that
 * does not reach the device are GPUOPT_ERR_INVALID_ARGUMENT; a negative
 * max_sections is GPUOPT_ERR_OUT_OF_RANGE. With a stream, create records
 * one event on it, from the calling thread (whose current context must be
 * the stream's, as for any call on it): a backend or stream that cannot be
 * timed that way is not an error: the sections are host-timed and every
 * output says why. On failure *out is NULL. */
GPUOPT_API gpuopt_status gpuopt_profiler_create(gpuopt_context *ctx, gpuopt_device *device,
                                                const gpuopt_profiler_options *options,
                                                gpuopt_profiler **out);

/* Writes the trace when a path is set (options, GPUOPT_PROFILE; a failure
 * to write is logged at warning level) and frees the profiler. Sections
 * still open are left out. NULL does nothing. */
GPUOPT_API void gpuopt_profiler_destroy(gpuopt_profiler *prof);

/* 1 records sections, 0 makes begin, count and end return GPUOPT_OK at
 * once (see "Thread safety" above on when to switch). Other values are
 * GPUOPT_ERR_OUT_OF_RANGE. */
GPUOPT_API gpuopt_status gpuopt_profiler_set_enabled(gpuopt_profiler *prof, int32_t enabled);

/* Opens section `name` on the calling thread, inside the thread's
 * innermost open section. NULL, "" or a name with control characters or
 * bad UTF-8 is GPUOPT_ERR_INVALID_ARGUMENT; one longer than 255 bytes, or
 * a 257th open section on one thread (an end missing in a loop), is
 * GPUOPT_ERR_OUT_OF_RANGE. */
GPUOPT_API gpuopt_status gpuopt_profiler_begin(gpuopt_profiler *prof, const char *name);

/* Adds `amount` of `unit` (gpuopt_count_unit) to the calling thread's
 * innermost open section: the summary divides the total by the time for
 * throughput. With no section open, GPUOPT_ERR_NESTING; an unknown unit,
 * GPUOPT_ERR_OUT_OF_RANGE. Sums saturate at UINT64_MAX. */
GPUOPT_API gpuopt_status gpuopt_profiler_count(gpuopt_profiler *prof, int32_t unit,
                                               uint64_t amount);

/* Ends the calling thread's innermost open section. `name` NULL ends it
 * whatever its name; otherwise it must be that section's name, else
 * GPUOPT_ERR_NESTING (nothing ends). With no section open on the thread,
 * GPUOPT_ERR_NESTING. */
GPUOPT_API gpuopt_status gpuopt_profiler_end(gpuopt_profiler *prof, const char *name);

/* The profile so far in `format` (gpuopt_profile_format), as one
 * NUL-terminated string; free with gpuopt_free. Reads the device events of
 * the sections ended so far (waiting for their stream to reach them). An
 * unknown format is GPUOPT_ERR_OUT_OF_RANGE. */
GPUOPT_API gpuopt_status gpuopt_profiler_report(gpuopt_profiler *prof, int32_t format, char **text);

/* gpuopt_profiler_report written to the file `path`: whole or not at all
 * (a temporary file in the same directory, renamed over `path`).
 * GPUOPT_ERR_IO, naming the path and the system's words, when it cannot be
 * written; a file that was there stays as it was. */
GPUOPT_API gpuopt_status gpuopt_profiler_write(gpuopt_profiler *prof, int32_t format,
                                               const char *path);

/* The macro pair and the scoped form. `prof` may be NULL: then they cost
 * one branch and make no call. Their statuses are dropped (a nesting error
 * is still counted in the summary); call the functions to see them.
 *
 *   GPUOPT_PROFILE_BEGIN(prof, "preprocess");
 *   ...
 *   GPUOPT_PROFILE_END(prof, "preprocess");
 *
 *   {   GPUOPT_PROFILE_SCOPE(prof, "inference");   // ends with the block
 *       GPUOPT_PROFILE_COUNT(prof, GPUOPT_COUNT_ITEMS, batch);
 *       ...
 *   }
 *
 * GPUOPT_PROFILE_SCOPE needs C++ or a compiler with the cleanup attribute
 * (GCC, Clang); elsewhere it is not defined. Defining GPUOPT_PROFILE_OFF
 * before including this header turns all four into nothing. */
static inline void gpuopt_profile_begin_(gpuopt_profiler *prof, const char *name)
{
    if (prof)
        (void)gpuopt_profiler_begin(prof, name);
}
static inline void gpuopt_profile_end_(gpuopt_profiler *prof, const char *name)
{
    if (prof)
        (void)gpuopt_profiler_end(prof, name);
}
static inline void gpuopt_profile_count_(gpuopt_profiler *prof, int32_t unit, uint64_t amount)
{
    if (prof)
        (void)gpuopt_profiler_count(prof, unit, amount);
}
#define GPUOPT_PROFILE_CAT2_(a, b) a##b
#define GPUOPT_PROFILE_CAT_(a, b) GPUOPT_PROFILE_CAT2_(a, b)

#if defined(GPUOPT_PROFILE_OFF)
/* sizeof uses the arguments (no unused-variable warning) without evaluating them. */
#define GPUOPT_PROFILE_BEGIN(prof, name) ((void)sizeof(prof), (void)sizeof(name))
#define GPUOPT_PROFILE_END(prof, name) ((void)sizeof(prof), (void)sizeof(name))
#define GPUOPT_PROFILE_COUNT(prof, unit, amount)                                                   \
    ((void)sizeof(prof), (void)sizeof(unit), (void)sizeof(amount))
#define GPUOPT_PROFILE_SCOPE(prof, name) ((void)sizeof(prof), (void)sizeof(name))
#else
#define GPUOPT_PROFILE_BEGIN(prof, name) gpuopt_profile_begin_((prof), (name))
#define GPUOPT_PROFILE_END(prof, name) gpuopt_profile_end_((prof), (name))
#define GPUOPT_PROFILE_COUNT(prof, unit, amount) gpuopt_profile_count_((prof), (unit), (amount))
#if !defined(__cplusplus) && defined(__GNUC__)
typedef struct gpuopt_profile_scope_ {
    gpuopt_profiler *prof;
    const char *name;
} gpuopt_profile_scope_;
static inline gpuopt_profile_scope_ gpuopt_profile_scope_begin_(gpuopt_profiler *prof,
                                                                const char *name)
{
    gpuopt_profile_scope_ scope;
    scope.prof = prof;
    scope.name = name;
    gpuopt_profile_begin_(prof, name);
    return scope;
}
static inline void gpuopt_profile_scope_end_(gpuopt_profile_scope_ *scope)
{
    gpuopt_profile_end_(scope->prof, scope->name);
}
#define GPUOPT_PROFILE_SCOPE(prof, name)                                                           \
    gpuopt_profile_scope_ GPUOPT_PROFILE_CAT_(gpuopt_profile_scope_at_, __LINE__)                  \
        __attribute__((cleanup(gpuopt_profile_scope_end_), unused)) =                              \
            gpuopt_profile_scope_begin_((prof), (name))
#endif
#endif

#ifdef __cplusplus
} /* extern "C" */

#if !defined(GPUOPT_PROFILE_OFF)
/* GPUOPT_PROFILE_SCOPE in C++: a section that ends with the scope. */
class gpuopt_profile_scope_
{
  public:
    gpuopt_profile_scope_(gpuopt_profiler *prof, const char *name) : prof_(prof), name_(name)
    {
        gpuopt_profile_begin_(prof_, name_);
    }
    ~gpuopt_profile_scope_()
    {
        gpuopt_profile_end_(prof_, name_);
    }

  private:
    gpuopt_profile_scope_(const gpuopt_profile_scope_ &);
    gpuopt_profile_scope_ &operator=(const gpuopt_profile_scope_ &);
    gpuopt_profiler *prof_;
    const char *name_;
};
#define GPUOPT_PROFILE_SCOPE(prof, name)                                                           \
    gpuopt_profile_scope_ GPUOPT_PROFILE_CAT_(gpuopt_profile_scope_at_, __LINE__)((prof), (name))
#endif
#endif

/* The tuner's API (spaces, tuners, results) lives in its own header, with
 * its own stability promise; it is included here so that one include still
 * gives the whole library. */
#include "gpuopt/tune.h"

#endif /* GPUOPT_GPUOPT_H */
