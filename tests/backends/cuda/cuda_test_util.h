/* Helpers for the CUDA backend tests: a hand-built backend environment, the
 * libcuda.so.1 test double's controls (tests/fakes/cuda/fake_cuda.c), and
 * paths to its device descriptions. */
#ifndef GPO_CUDA_TEST_UTIL_H
#define GPO_CUDA_TEST_UTIL_H

#include "backend_env.h"
#include "backend.h"

/* A gpo_backend_env over a zeroed gpo_config: fs root `sysfs_root` (NULL:
 * the live system), the CUDA library override `library` (NULL: default
 * soname), logging off. */
typedef struct cuda_env {
    gpo_config cfg;
    gpo_logger log;
    gpo_backend_env env;
} cuda_env;

void cuda_env_init(cuda_env *e, const char *library, const char *sysfs_root);
/* Names the NVRTC library the runtime opens (NULL: the default sonames). */
void cuda_env_set_nvrtc(cuda_env *e, const char *library);

/* Names the NVML library live memory opens (NULL: the default soname). */
void cuda_env_set_nvml(cuda_env *e, const char *library);

/* The NVML double's controls (tests/fakes/nvml/fake_nvml.c). */
typedef struct fake_nvml {
    void *handle;
    void (*reset)(void);
    long (*calls)(const char *sym);
    int (*live_inits)(void);
} fake_nvml;

/* Opens the NVML double at `path`; 0 on success. */
int fake_nvml_open(fake_nvml *f, const char *path);

#define FAKE_NVML GPO_BUILD_DIR "/tests/fakes/nvml/libnvidia-ml.so.1"

/* The fake's control functions, found with dlsym in the same library object
 * the backend loads (dlopen of the same path returns the same object). */
typedef struct fake_cuda {
    void *handle;
    void (*reset)(void);
    long (*calls)(const char *sym);
    int (*contexts_created)(void);
    int (*live_contexts)(void);
    int (*stack_depth)(void);
    const char *(*config_error)(void);
    long (*live_objects)(const char *kind); /* runtime objects: memory, modules, events */
    /* As a framework would: retain device `index`'s primary context and make
     * it current on this thread (0, or -1); clear_current undoes it. */
    int (*make_current)(int index);
    int (*clear_current)(void);
    /* The device whose context is current on this thread, -1 for none. */
    int (*current_device)(void);
    /* The calls since the last reset, in order: trace_call gives the i-th
     * one's symbol (NULL past the end) and, for a call that takes a
     * stream, which (NULL: the legacy default stream). */
    long (*trace_length)(void);
    const char *(*trace_call)(long i, int *has_stream, const void **stream);
    /* The flags a live stream was created with, -1 for no live stream. */
    int (*stream_flags)(const void *stream);
} fake_cuda;

/* Opens the fake at `path`; 0 on success. */
int fake_cuda_open(fake_cuda *f, const char *path);

/* Sets GPUOPT_FAKE_CUDA_DEVICES/INIT/FAIL (NULL unsets) and resets the fake
 * so it reads them. Launches are refused (GPUOPT_FAKE_CUDA_LAUNCH_NS and
 * GPUOPT_FAKE_CUDA_FAULT are unset) unless fake_cuda_launches set them. */
void fake_cuda_configure(const fake_cuda *f, const char *devices, const char *init,
                         const char *fail);
/* For the next fake_cuda_configure: launches run and take `launch_ns` of
 * the double's clock ("1000", "0", "nan"; NULL: launches are refused), and
 * `fault` ("N:RESULT", NULL: none) faults one of them. */
void fake_cuda_launches(const char *launch_ns, const char *fault);

/* ":"-joined absolute paths of device descriptions by file name
 * ("h100-sxm5.json"), looked up in devices/ then synthetic/. Static buffer. */
const char *fake_devices(const char *first, ...);

/* The NVRTC double's controls (tests/fakes/cuda/fake_nvrtc.c). */
typedef struct fake_nvrtc {
    void *handle;
    void (*reset)(void);
    long (*calls)(const char *sym);
    long (*live_programs)(void);
} fake_nvrtc;

/* Opens the NVRTC double at `path`; 0 on success. */
int fake_nvrtc_open(fake_nvrtc *f, const char *path);

/* Sets GPUOPT_FAKE_NVRTC_VERSION/ARCHS/FAIL (NULL unsets) and resets it. */
void fake_nvrtc_configure(const fake_nvrtc *f, const char *version, const char *archs,
                          const char *fail);

/* The flavours of the fake, built by tests/fakes/cuda. */
#define FAKE_CUDA_FULL GPO_BUILD_DIR "/tests/fakes/cuda/full/libcuda.so.1"
#define FAKE_CUDA_R12 GPO_BUILD_DIR "/tests/fakes/cuda/r12/libcuda.so.1"
#define FAKE_NVRTC GPO_BUILD_DIR "/tests/fakes/cuda/nvrtc/libnvrtc.so.13"
#define FAKE_NVRTC11 GPO_BUILD_DIR "/tests/fakes/cuda/nvrtc11/libnvrtc.so.11.0"
#define FAKE_CUDA_LEGACY GPO_BUILD_DIR "/tests/fakes/cuda/legacy/libcuda.so.1"
#define FAKE_CUDA_BROKEN GPO_BUILD_DIR "/tests/fakes/cuda/broken/libcuda.so.1"

/* The CUDA toolkit's stub, the real no-driver case. */
#define CUDA_TOOLKIT_STUB "/usr/local/cuda/lib64/stubs/libcuda.so"

/* Loads and enumerates with `e`; on success *state and *list are the
 * caller's (gpo_cuda_unload, gpo_device_list_free). Returns the first
 * failing status; *why gets the report's reason or the detail. */
gpuopt_status cuda_load_and_list(cuda_env *e, void **state, gpo_device_list *list, char *why,
                                 size_t cap);

/* The device's details["cuda"][key] as a number, or -1 when absent. */
double cuda_detail_number(gpuopt_device *dev, const char *key);
/* ... as a string, or "" when absent. */
const char *cuda_detail_string(gpuopt_device *dev, const char *key);

#endif
