/* Shared set-up of the OpenCL backend tests. */
#include "ocl_test.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/strutil.h"

void ocl_fx_init(ocl_fx *fx, const char *library)
{
    memset(fx, 0, sizeof *fx);
    fx->cfg = calloc(1, sizeof *fx->cfg);
    if (!fx->cfg)
        abort();
    gpo_fs_init(&fx->cfg->fs, NULL);
    fx->cfg->level = 1;
    if (library)
        gpo_config_set_library(fx->cfg, "opencl", library);
    fx->log.level = getenv("GPO_TEST_DEBUG") ? GPUOPT_LOG_DEBUG : GPUOPT_LOG_ERROR;
    fx->env.cfg = fx->cfg;
    fx->env.log = &fx->log;
}

gpuopt_status ocl_fx_open(ocl_fx *fx)
{
    fx->load_status = gpo_backend_opencl.load(&fx->env, &fx->state, &fx->report);
    if (fx->load_status != GPUOPT_OK)
        return fx->load_status;
    gpuopt_status s = gpo_backend_opencl.enumerate(fx->state, &fx->env, &fx->list);
    /* What the core adds to each record (src/context.c, adopt_devices). */
    for (size_t i = 0; i < fx->list.n; i++) {
        fx->list.items[i]->routes[0].backend = &gpo_backend_opencl;
        fx->list.items[i]->routes[0].backend_state = fx->state;
    }
    return s;
}

void ocl_fx_free(ocl_fx *fx)
{
    gpo_device_list_free(&fx->list);
    if (fx->state)
        gpo_backend_opencl.unload(fx->state);
    free(fx->cfg);
    memset(fx, 0, sizeof *fx);
}

gpuopt_device *ocl_fx_open_runtime_device(ocl_fx *fx, int any)
{
    if (ocl_fx_open(fx) != GPUOPT_OK) {
        fprintf(stderr, "OpenCL did not load: %s (%s)\n", fx->report.reason, gpo_detail_get());
        return NULL;
    }
    gpuopt_device *dev = any ? (fx->list.n ? fx->list.items[0] : NULL)
                             : ocl_fx_find_type(fx, GPUOPT_DEVICE_TYPE_CPU);
    if (!dev)
        fprintf(stderr, "no OpenCL %s (is pocl-opencl-icd installed?)\n",
                any ? "device" : "CPU device");
    return dev;
}

gpuopt_device *ocl_fx_find_type(ocl_fx *fx, int type)
{
    for (size_t i = 0; i < fx->list.n; i++)
        if (fx->list.items[i]->info.type == type)
            return fx->list.items[i];
    return NULL;
}

gpuopt_device *ocl_fx_find_name(ocl_fx *fx, const char *part)
{
    for (size_t i = 0; i < fx->list.n; i++)
        if (strstr(fx->list.items[i]->info.name, part))
            return fx->list.items[i];
    return NULL;
}

static void *fake_sym(const char *path, const char *name)
{
    /* The same handle the backend gets when it opens `path`; kept open
     * (loaders are never unloaded). */
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    void *p = h ? dlsym(h, name) : NULL;
    if (!p) {
        fprintf(stderr, "the fake loader %s: %s\n", path, dlerror());
        abort();
    }
    return p;
}

void ocl_fake_set_faults(const char *path, const char *spec)
{
    void (*fn)(const char *);
    void *p = fake_sym(path, "gpo_fake_cl_set_faults");
    memcpy(&fn, &p, sizeof fn);
    fn(spec);
}

void ocl_fake_set_devices(const char *path, const char *devices)
{
    void (*fn)(const char *);
    void *p = fake_sym(path, "gpo_fake_cl_set_devices");
    memcpy(&fn, &p, sizeof fn);
    fn(devices);
}

long ocl_fake_live(const char *path)
{
    long (*fn)(void);
    void *p = fake_sym(path, "gpo_fake_cl_live");
    memcpy(&fn, &p, sizeof fn);
    return fn();
}

unsigned ocl_test_seed(void)
{
    const char *e = getenv("GPO_TEST_SEED");
    unsigned seed = e ? (unsigned)strtoul(e, NULL, 10) : (unsigned)time(NULL) ^ (unsigned)clock();
    fprintf(stderr, "random seed %u (replay with GPO_TEST_SEED=%u)\n", seed, seed);
    srand(seed);
    return seed;
}
