/* CUDA backend test helpers (see cuda_test_util.h). */
#include "cuda_test_util.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda/cuda_backend.h"
#include "cuda/cuda_load.h"
#include "util/strutil.h"

void cuda_env_init(cuda_env *e, const char *library, const char *sysfs_root)
{
    memset(e, 0, sizeof *e);
    gpo_fs_init(&e->cfg.fs, sysfs_root);
    if (library)
        gpo_config_set_library(&e->cfg, "cuda", library);
    e->log.level = GPUOPT_LOG_OFF;
    e->env.cfg = &e->cfg;
    e->env.log = &e->log;
}

void cuda_env_set_nvrtc(cuda_env *e, const char *library)
{
    gpo_config_set_library(&e->cfg, "nvrtc", library ? library : "");
}

void cuda_env_set_nvml(cuda_env *e, const char *library)
{
    gpo_config_set_library(&e->cfg, "nvml", library ? library : "");
}

int fake_nvml_open(fake_nvml *f, const char *path)
{
    memset(f, 0, sizeof *f);
    f->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!f->handle)
        return -1;
    void *p[3] = {dlsym(f->handle, "gpo_fake_nvml_reset"), dlsym(f->handle, "gpo_fake_nvml_calls"),
                  dlsym(f->handle, "gpo_fake_nvml_live_inits")};
    if (!p[0] || !p[1] || !p[2])
        return -1;
    /* POSIX lets a dlsym result become a function pointer; copy the bytes. */
    memcpy(&f->reset, &p[0], sizeof p[0]);
    memcpy(&f->calls, &p[1], sizeof p[1]);
    memcpy(&f->live_inits, &p[2], sizeof p[2]);
    return 0;
}

int fake_cuda_open(fake_cuda *f, const char *path)
{
    memset(f, 0, sizeof *f);
    f->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!f->handle)
        return -1;
        /* POSIX lets a dlsym result become a function pointer; copy the bytes
         * so -Wpedantic stays quiet. */
#define SYM_(field, name)                                                                          \
    do {                                                                                           \
        void *p_ = dlsym(f->handle, name);                                                         \
        if (!p_)                                                                                   \
            return -1;                                                                             \
        memcpy(&f->field, &p_, sizeof p_);                                                         \
    } while (0)
    SYM_(reset, "gpo_fake_cuda_reset");
    SYM_(calls, "gpo_fake_cuda_calls");
    SYM_(contexts_created, "gpo_fake_cuda_contexts_created");
    SYM_(live_contexts, "gpo_fake_cuda_live_contexts");
    SYM_(stack_depth, "gpo_fake_cuda_stack_depth");
    SYM_(config_error, "gpo_fake_cuda_config_error");
    SYM_(live_objects, "gpo_fake_cuda_live_objects");
    SYM_(make_current, "gpo_fake_cuda_make_current");
    SYM_(clear_current, "gpo_fake_cuda_clear_current");
    SYM_(current_device, "gpo_fake_cuda_current_device");
    SYM_(trace_length, "gpo_fake_cuda_trace_length");
    SYM_(trace_call, "gpo_fake_cuda_trace_call");
    SYM_(stream_flags, "gpo_fake_cuda_stream_flags");
    return 0;
}

int fake_nvrtc_open(fake_nvrtc *f, const char *path)
{
    memset(f, 0, sizeof *f);
    f->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!f->handle)
        return -1;
    SYM_(reset, "gpo_fake_nvrtc_reset");
    SYM_(calls, "gpo_fake_nvrtc_calls");
    SYM_(live_programs, "gpo_fake_nvrtc_live_programs");
#undef SYM_
    return 0;
}

void fake_nvrtc_configure(const fake_nvrtc *f, const char *version, const char *archs,
                          const char *fail)
{
    if (version)
        setenv("GPUOPT_FAKE_NVRTC_VERSION", version, 1);
    else
        unsetenv("GPUOPT_FAKE_NVRTC_VERSION");
    if (archs)
        setenv("GPUOPT_FAKE_NVRTC_ARCHS", archs, 1);
    else
        unsetenv("GPUOPT_FAKE_NVRTC_ARCHS");
    if (fail)
        setenv("GPUOPT_FAKE_NVRTC_FAIL", fail, 1);
    else
        unsetenv("GPUOPT_FAKE_NVRTC_FAIL");
    f->reset();
}

static void set_or_unset(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

static const char *next_launch_ns, *next_fault;

void fake_cuda_launches(const char *launch_ns, const char *fault)
{
    next_launch_ns = launch_ns;
    next_fault = fault;
}

void fake_cuda_configure(const fake_cuda *f, const char *devices, const char *init,
                         const char *fail)
{
    set_or_unset("GPUOPT_FAKE_CUDA_DEVICES", devices);
    set_or_unset("GPUOPT_FAKE_CUDA_INIT", init);
    set_or_unset("GPUOPT_FAKE_CUDA_FAIL", fail);
    set_or_unset("GPUOPT_FAKE_CUDA_LAUNCH_NS", next_launch_ns);
    set_or_unset("GPUOPT_FAKE_CUDA_FAULT", next_fault);
    next_launch_ns = next_fault = NULL;
    f->reset();
}

const char *fake_devices(const char *first, ...)
{
    static char buf[8192];
    char path[1024];
    va_list ap;
    buf[0] = '\0';
    va_start(ap, first);
    for (const char *name = first; name; name = va_arg(ap, const char *)) {
        gpo_snprintf(path, sizeof path, "%s/%s", GPO_FAKE_CUDA_DEVICES_DIR, name);
        if (access(path, R_OK) != 0)
            gpo_snprintf(path, sizeof path, "%s/%s", GPO_FAKE_CUDA_SYNTHETIC_DIR, name);
        size_t n = strlen(buf);
        gpo_snprintf(buf + n, sizeof buf - n, "%s%s", n ? ":" : "", path);
    }
    va_end(ap);
    return buf;
}

gpuopt_status cuda_load_and_list(cuda_env *e, void **state, gpo_device_list *list, char *why,
                                 size_t cap)
{
    gpo_backend_report rep;
    memset(list, 0, sizeof *list);
    gpuopt_status st = gpo_backend_cuda.load(&e->env, state, &rep);
    if (st) {
        gpo_strlcpy(why, rep.reason, cap);
        return st;
    }
    st = gpo_backend_cuda.enumerate(*state, &e->env, list);
    if (st)
        gpo_strlcpy(why, gpo_detail_get(), cap);
    return st;
}

static cJSON *detail(gpuopt_device *dev, const char *key)
{
    cJSON *d = dev->details ? cJSON_GetObjectItem(dev->details, "cuda") : NULL;
    return d ? cJSON_GetObjectItem(d, key) : NULL;
}

double cuda_detail_number(gpuopt_device *dev, const char *key)
{
    cJSON *v = detail(dev, key);
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v) ? 1 : 0;
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

const char *cuda_detail_string(gpuopt_device *dev, const char *key)
{
    cJSON *v = detail(dev, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}
