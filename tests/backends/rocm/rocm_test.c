/* Helpers for the ROCm backend tests (rocm_test.h). */
#include "rocm_test.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/detail.h"
#include "util/strutil.h"

void rocm_env_init(rocm_env *e, const char *sysfs_root, const char *hip_path)
{
    memset(e, 0, sizeof *e);
    gpo_fs_init(&e->cfg.fs, sysfs_root ? sysfs_root : GPO_BUILD_DIR "/no-such-sysfs-root");
    if (hip_path)
        gpo_config_set_library(&e->cfg, "hip", hip_path);
    e->log.level = GPUOPT_LOG_OFF;
    e->env.cfg = &e->cfg;
    e->env.log = &e->log;
}

int rocm_test_clean_env(void **state)
{
    static const char *const vars[] = {"ROCR_VISIBLE_DEVICES",    "HIP_VISIBLE_DEVICES",
                                       "CUDA_VISIBLE_DEVICES",    "GPU_ENABLE_WGP_MODE",
                                       "GPUOPT_FAKE_HIP_VERSION", "GPUOPT_FAKE_HIP_LAUNCH_NS",
                                       "GPUOPT_FAKE_HIP_FAULT"};
    (void)state;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    return 0;
}

const char *fake_hip_path(int major)
{
    static char path[3][512];
    int i = major - 5;
    if (i < 0 || i > 2)
        return NULL;
    snprintf(path[i], sizeof path[i], "%s/fakes/hip%d/libamdhip64.so.%d", GPO_BUILD_DIR, major,
             major);
    return path[i];
}

const char *fake_devices(const char *const *names)
{
    static char buf[4096];
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; names && names[i]; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s/%s.json", i ? ":" : "",
                                GPO_FAKE_HIP_DEVICES_DIR, names[i]);
    return buf;
}

static void *fake_handle(int major)
{
    void *h = dlopen(fake_hip_path(major), RTLD_NOW | RTLD_LOCAL);
    if (!h)
        fprintf(stderr, "cannot open the HIP test double: %s\n", dlerror());
    return h;
}

int fake_reset(int major, const char *devices, const char *fail)
{
    if (devices)
        setenv("GPUOPT_FAKE_HIP_DEVICES", devices, 1);
    else
        unsetenv("GPUOPT_FAKE_HIP_DEVICES");
    if (fail)
        setenv("GPUOPT_FAKE_HIP_FAIL", fail, 1);
    else
        unsetenv("GPUOPT_FAKE_HIP_FAIL");
    void *h = fake_handle(major);
    if (!h)
        return -1;
    int (*reset)(void);
    void *sym = dlsym(h, "gpuoptFakeHipReset");
    memcpy(&reset, &sym, sizeof sym);
    int n = reset ? reset() : -1;
    /* The backend keeps its own reference; ours is balanced here. */
    dlclose(h);
    return n;
}

int fake_faults_fired(int major)
{
    void *h = fake_handle(major);
    if (!h)
        return -1;
    int (*fired)(void);
    void *sym = dlsym(h, "gpuoptFakeHipFaultsFired");
    memcpy(&fired, &sym, sizeof sym);
    int n = fired ? fired() : -1;
    dlclose(h);
    return n;
}

const char *kfd_root(int slot, const char *name)
{
    static char buf[4][512];
    slot &= 3;
    snprintf(buf[slot], sizeof buf[slot], "%s/kfd/%s", GPO_FIXTURES_DIR, name);
    return buf[slot];
}

void rocm_run_do(rocm_run *r, const rocm_env *e)
{
    memset(r, 0, sizeof *r);
    gpo_detail_clear();
    r->load = gpo_backend_rocm.load(&e->env, &r->state, &r->report);
    gpo_strlcpy(r->detail, gpo_detail_get(), sizeof r->detail);
    r->enumerate = GPUOPT_ERR_UNAVAILABLE;
    if (r->state)
        r->enumerate = gpo_backend_rocm.enumerate(r->state, &e->env, &r->list);
}

void rocm_route_of(const rocm_run *r, size_t i, gpo_route *route)
{
    memset(route, 0, sizeof *route);
    route->backend = &gpo_backend_rocm;
    route->backend_state = r->state;
    route->index = r->list.items[i]->info.index;
    route->info = r->list.items[i]->info;
}

gpuopt_status rocm_free(void *state, const gpo_route *route, uint64_t *free_bytes)
{
    gpo_memory_reading live;
    gpuopt_status st = gpo_backend_rocm.memory_live(state, route, 0, &live);
    *free_bytes = st == GPUOPT_OK ? live.free : 0;
    return st;
}

void rocm_run_free(rocm_run *r)
{
    gpo_device_list_free(&r->list);
    gpo_backend_rocm.unload(r->state);
    r->state = NULL;
}

const cJSON *rocm_details(const gpuopt_device *dev)
{
    if (!dev || !dev->details)
        return NULL;
    return cJSON_GetObjectItemCaseSensitive(dev->details, "rocm");
}

int rocm_has_note(const gpuopt_device *dev, const char *text)
{
    const cJSON *notes = cJSON_GetObjectItemCaseSensitive(rocm_details(dev), "notes");
    const cJSON *n;
    cJSON_ArrayForEach(n, notes)
    {
        if (cJSON_IsString(n) && strstr(n->valuestring, text))
            return 1;
    }
    return 0;
}

void rocm_env_set_hiprtc(rocm_env *e, const char *path)
{
    gpo_config_set_library(&e->cfg, "hiprtc", "");
    if (path)
        gpo_config_set_library(&e->cfg, "hiprtc", path);
}

const char *fake_hiprtc_lib(int major)
{
    static char path[2][512];
    int i = major - 6;
    if (i < 0 || i > 1)
        return NULL;
    snprintf(path[i], sizeof path[i], "%s/fakes/hiprtc%d/libhiprtc.so.%d", GPO_BUILD_DIR, major,
             major);
    return path[i];
}

const char *fake_hiprtc_for(int major)
{
    return major >= 7 ? fake_hiprtc_lib(7) : fake_hip_path(major);
}

/* Calls `sym` (int (*)(void)) of the library at `path`; -1 when missing. */
static int call_int(const char *path, const char *sym)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
    int (*fn)(void);
    void *p = dlsym(h, sym);
    memcpy(&fn, &p, sizeof p);
    int n = p ? fn() : -1;
    dlclose(h);
    return n;
}

int fake_live(int major)
{
    return call_int(fake_hip_path(major), "gpuoptFakeHipLive");
}

int fake_programs_live(const char *hiprtc_path)
{
    return call_int(hiprtc_path, "gpuoptFakeHiprtcLive");
}

void fake_hiprtc_reset(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    void (*fn)(void);
    void *p = dlsym(h, "gpuoptFakeHiprtcReset");
    memcpy(&fn, &p, sizeof p);
    if (p)
        fn();
    dlclose(h);
}

int fake_hiprtc_faults_fired(const char *path)
{
    return call_int(path, "gpuoptFakeHiprtcFaultsFired");
}

int fake_set_device(int major, int device)
{
    void *h = dlopen(fake_hip_path(major), RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
    int (*fn)(int);
    void *p = dlsym(h, "hipSetDevice");
    memcpy(&fn, &p, sizeof p);
    int e = p ? fn(device) : -1;
    dlclose(h);
    return e;
}

int fake_get_device(int major)
{
    void *h = dlopen(fake_hip_path(major), RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
    int (*fn)(int *);
    void *p = dlsym(h, "hipGetDevice");
    memcpy(&fn, &p, sizeof p);
    int d = -1;
    if (!p || fn(&d) != 0)
        d = -1;
    dlclose(h);
    return d;
}

/* The double's own symbol `name` (dlsym of the library the backend
 * loaded), or NULL. */
static void *fake_hip_sym(int major, const char *name)
{
    void *h = dlopen(fake_hip_path(major), RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return NULL;
    void *p = dlsym(h, name);
    /* The backend keeps the library loaded; ours is balanced here. */
    dlclose(h);
    return p;
}

long fake_trace_length(int major)
{
    long (*fn)(void);
    void *p = fake_hip_sym(major, "gpuoptFakeHipTraceLength");
    memcpy(&fn, &p, sizeof p);
    return p ? fn() : -1;
}

const char *fake_trace(int major, long i, int *has_stream, const void **stream, int *device)
{
    const char *(*fn)(long, int *, const void **, int *);
    void *p = fake_hip_sym(major, "gpuoptFakeHipTrace");
    memcpy(&fn, &p, sizeof p);
    return p ? fn(i, has_stream, stream, device) : NULL;
}

int fake_stream_flags(int major, const void *stream)
{
    int (*fn)(const void *);
    void *p = fake_hip_sym(major, "gpuoptFakeHipStreamFlags");
    memcpy(&fn, &p, sizeof p);
    return p ? fn(stream) : -1;
}
