/* The profiler's sections as roctx ranges, so rocprof's timeline shows
 * them (backend.h, gpo_range_ops). roctx is a library of its own, opened
 * at run time like every vendor library: rocprofiler-sdk's
 * librocprofiler-sdk-roctx (ROCm 6.2 and later: .so.0 at rocprofiler-sdk
 * 0.x, .so.1 from 1.x, ROCm 7), which rocprofv3 recommends ("link your
 * application with librocprofiler-sdk-roctx.so", rocprofiler-sdk,
 * "Using ROCTx"), then roctracer's libroctx64.so.4 (ROCm up to 6, export
 * map ROCTX_4.1), whose marker tracing older rocprof reads. Both export
 * the plain C calls used here: int roctxRangePushA(const char *) and int
 * roctxRangePop(void) (rocprofiler-sdk-roctx/roctx.h; roctracer's
 * roctx.h). GPUOPT_ROCTX_LIBRARY (or the config file's "libraries":
 * {"roctx": ...}) names another file.
 *
 * Opened once per process, by the first profiler; the ranges then go to
 * whichever tool the roctx library reports to. Without a tool attached,
 * roctx's calls do nothing but return. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>

#include "rocm_backend.h"
#include "util/dl.h"
#include "util/strutil.h"

typedef int (*roctx_push_fn)(const char *message);
typedef int (*roctx_pop_fn)(void);

static const char *const sonames[] = {"librocprofiler-sdk-roctx.so.1",
                                      "librocprofiler-sdk-roctx.so.0", "libroctx64.so.4", NULL};

static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER;
static int tried, attached;
static char attach_note[512];
static roctx_push_fn push_fn;
static roctx_pop_fn pop_fn;

static void try_attach(const char *path)
{
    char err[1024], where[512];
    const char *const mine[] = {path, NULL};
    void *h = gpo_dl_open_first(path ? mine : sonames, err, sizeof err);
    if (!h && path) {
        gpo_snprintf(attach_note, sizeof attach_note, "GPUOPT_ROCTX_LIBRARY: %s", err);
        return;
    }
    if (!h) {
        gpo_snprintf(attach_note, sizeof attach_note,
                     "no roctx library (%s, %s or %s): rocprof is not installed", sonames[0],
                     sonames[1], sonames[2]);
        return;
    }
    gpo_dl_path(h, where, sizeof where);
    push_fn = (roctx_push_fn)(uintptr_t)dlsym(h, "roctxRangePushA");
    pop_fn = (roctx_pop_fn)(uintptr_t)dlsym(h, "roctxRangePop");
    if (!push_fn || !pop_fn) {
        gpo_snprintf(attach_note, sizeof attach_note, "%s lacks roctxRangePushA/roctxRangePop",
                     where);
        return;
    }
    attached = 1;
    gpo_snprintf(attach_note, sizeof attach_note, "%s", where);
}

static int roctx_attach(const gpo_backend_env *env, char *note, size_t cap)
{
    pthread_mutex_lock(&attach_lock);
    if (!tried) {
        tried = 1;
        try_attach(gpo_env_library(env, "roctx"));
    }
    int yes = attached;
    gpo_strlcpy(note, attach_note, cap);
    pthread_mutex_unlock(&attach_lock);
    return yes;
}

static void roctx_push(const char *name)
{
    push_fn(name);
}

static void roctx_pop(void)
{
    pop_fn();
}

const gpo_range_ops gpo_rocm_roctx_ranges = {"roctx", roctx_attach, roctx_push, roctx_pop};
