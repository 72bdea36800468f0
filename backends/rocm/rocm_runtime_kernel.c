/* The ROCm runtime ops' programs, kernels and launches: HIP source compiled
 * by hiprtc for the device's own target ID and loaded with
 * hipModuleLoadData; kernels from hipModuleGetFunction; launches through
 * hipModuleLaunchKernel on the null stream, timed with events. */
#include <stdlib.h>
#include <string.h>

#include "rocm_runtime.h"
#include "util/strutil.h"

/* ---- programs ------------------------------------------------------------- */

void gpo_rocm_rt_kernel_release(gpo_rt *rt, gpo_rt_kernel *k)
{
    (void)rt;
    gpo_rocm_rt_unlink(&k->h);
    for (int i = 0; i < GPO_ROCM_MAX_ARGS; i++)
        free(k->arg[i]);
    free(k);
}

void gpo_rocm_rt_prog_release(gpo_rt *rt, gpo_rt_prog *p)
{
    /* A module's functions die with it: its kernels go first. */
    rt_obj *head = &rt->lists[RT_LIST_KERNEL];
    for (rt_obj *o = head->next; o != head;) {
        rt_obj *next = o->next;
        if (((gpo_rt_kernel *)o)->prog == p)
            gpo_rocm_rt_kernel_release(rt, (gpo_rt_kernel *)o);
        o = next;
    }
    rt->fn.module_unload(p->module);
    gpo_rocm_rt_unlink(&p->h);
    free(p);
}

gpuopt_status gpo_rocm_rt_program_build(gpo_rt *rt, const char *source, const char *options,
                                        gpo_rt_prog **out, char **log)
{
    const gpo_hiprtc *rtc = NULL;
    void *code = NULL;
    size_t size = 0;
    gpo_rt_prog *p = NULL;
    gpuopt_status st;

    if (out)
        *out = NULL;
    if (log)
        *log = NULL;
    st = gpo_rocm_rt_enter(rt, "program_build");
    if (st != GPUOPT_OK)
        return st;
    if (!source || !out || !log)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s program_build: NULL %s", rt->what,
                        !source ? "source" : "output");
    if (!rt->target[0])
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "%s program_build: the device's gfx target is unknown, so there is "
                        "nothing to compile for",
                        rt->what);
    st = gpo_rocm_hiprtc(rt->st, &rtc);
    if (st != GPUOPT_OK)
        return st;
    st = gpo_hiprtc_compile(rtc, source, rt->target, options, &code, &size, log);
    if (st != GPUOPT_OK)
        return st; /* the detail and, for a build error, the log are set */
    p = calloc(1, sizeof *p);
    if (!p) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory");
        goto out;
    }
    gpo_hip_error e = rt->fn.module_load_data(&p->module, code);
    if (e != GPO_HIP_SUCCESS) {
        st = gpo_rocm_rt_fail(rt, GPUOPT_ERR_DRIVER, "program_build", "hipModuleLoadData", e);
        free(p);
        p = NULL;
        goto out;
    }
    gpo_rocm_rt_link(rt, RT_LIST_PROG, &p->h, RT_PROG);
    *out = p;
out:
    free(code); /* the runtime keeps its own copy of the image */
    if (st != GPUOPT_OK && *log && st != GPUOPT_ERR_BUILD) {
        free(*log);
        *log = NULL;
    }
    return st;
}

void gpo_rocm_rt_program_free(gpo_rt *rt, gpo_rt_prog *p)
{
    if (gpo_rocm_rt_enter(rt, "program_free") != GPUOPT_OK || !gpo_rocm_rt_owns(rt, p, RT_PROG))
        return;
    gpo_rocm_rt_prog_release(rt, p);
}

const char *gpo_rocm_rt_compiler_version(gpo_rt *rt)
{
    if (!rt)
        return "hiprtc (no session)";
    if (!rt->compiler[0]) {
        const gpo_hiprtc *rtc = NULL;
        char rtc_text[160];
        if (gpo_rocm_hiprtc(rt->st, &rtc) == GPUOPT_OK)
            gpo_hiprtc_describe(rtc, rtc_text, sizeof rtc_text);
        else
            gpo_strlcpy(rtc_text, "no hiprtc", sizeof rtc_text);
        /* The cache key needs everything that changes the code: compiler,
         * runtime (its loader and device libraries) and target ID. */
        gpo_snprintf(rt->compiler, sizeof rt->compiler, "%s, HIP %s, %s", rtc_text,
                     rt->st->runtime_version[0] ? rt->st->runtime_version : "?",
                     rt->target[0] ? rt->target : "unknown target");
    }
    return rt->compiler;
}

/* ---- kernels ---------------------------------------------------------------- */

gpuopt_status gpo_rocm_rt_kernel_create(gpo_rt *rt, gpo_rt_prog *p, const char *name,
                                        gpo_rt_kernel **out)
{
    gpuopt_status st = gpo_rocm_rt_enter(rt, "kernel_create");
    if (out)
        *out = NULL;
    if (st != GPUOPT_OK)
        return st;
    if (!out || !name)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s kernel_create: NULL %s", rt->what,
                        !name ? "name" : "output");
    if (!gpo_rocm_rt_owns(rt, p, RT_PROG))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s kernel_create: not a program of this session", rt->what);
    size_t len = strlen(name);
    if (len == 0 || len >= sizeof((gpo_rt_kernel *)0)->name)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s kernel_create: a kernel name of %zu characters (1 to 127 accepted)",
                        rt->what, len);
    gpo_rt_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory");
    gpo_hip_error e = rt->fn.module_get_function(&k->func, p->module, name);
    if (e != GPO_HIP_SUCCESS) {
        free(k);
        if (e == GPO_hipErrorNotFound || e == GPO_hipErrorInvalidDeviceFunction)
            return gpo_fail(GPUOPT_ERR_NOT_FOUND,
                            "%s kernel_create: the program has no kernel '%s' "
                            "(hipModuleGetFunction: %s); declare it extern \"C\" __global__ so "
                            "its name is not mangled",
                            rt->what, name, gpo_hip_error_name(e));
        return gpo_rocm_rt_fail(rt, GPUOPT_ERR_DRIVER, "kernel_create", "hipModuleGetFunction", e);
    }
    k->prog = p;
    memcpy(k->name, name, len + 1);
    gpo_rocm_rt_link(rt, RT_LIST_KERNEL, &k->h, RT_KERNEL);
    *out = k;
    return GPUOPT_OK;
}

void gpo_rocm_rt_kernel_free(gpo_rt *rt, gpo_rt_kernel *k)
{
    if (gpo_rocm_rt_enter(rt, "kernel_free") != GPUOPT_OK || !gpo_rocm_rt_owns(rt, k, RT_KERNEL))
        return;
    gpo_rocm_rt_kernel_release(rt, k);
}

static gpuopt_status arg_checks(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index, const char *op)
{
    gpuopt_status st = gpo_rocm_rt_enter(rt, op);
    if (st != GPUOPT_OK)
        return st;
    if (!gpo_rocm_rt_owns(rt, k, RT_KERNEL))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s %s: not a kernel of this session",
                        rt->what, op);
    if (index >= GPO_ROCM_MAX_ARGS)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "%s %s: argument %u of '%s' (0 to %d accepted)",
                        rt->what, op, index, k->name, GPO_ROCM_MAX_ARGS - 1);
    return GPUOPT_OK;
}

static gpuopt_status set_arg(gpo_rt_kernel *k, uint32_t index, const void *value, size_t size)
{
    unsigned char *copy = malloc(size);
    if (!copy)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory");
    memcpy(copy, value, size);
    free(k->arg[index]);
    k->arg[index] = copy;
    k->arg_size[index] = size;
    return GPUOPT_OK;
}

gpuopt_status gpo_rocm_rt_kernel_set_buffer(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index,
                                            gpo_rt_buf *buf)
{
    gpuopt_status st = arg_checks(rt, k, index, "kernel_set_buffer");
    if (st != GPUOPT_OK)
        return st;
    if (!gpo_rocm_rt_owns(rt, buf, RT_BUF))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s kernel_set_buffer: argument %u of '%s' is not a buffer of this "
                        "session",
                        rt->what, index, k->name);
    return set_arg(k, index, &buf->ptr, sizeof buf->ptr);
}

gpuopt_status gpo_rocm_rt_kernel_set_scalar(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index,
                                            const void *value, size_t size)
{
    gpuopt_status st = arg_checks(rt, k, index, "kernel_set_scalar");
    if (st != GPUOPT_OK)
        return st;
    if (!value)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s kernel_set_scalar: NULL value", rt->what);
    if (size == 0 || size > GPO_ROCM_MAX_ARG_BYTES)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s kernel_set_scalar: a %zu-byte argument (1 to %d accepted)", rt->what,
                        size, GPO_ROCM_MAX_ARG_BYTES);
    return set_arg(k, index, value, size);
}

/* HIP has one dynamic LDS region per launch (`extern __shared__`), sized at
 * launch, not a kernel parameter: `index` names no parameter and the bytes
 * become the launch's dynamic LDS (a later call replaces them). */
gpuopt_status gpo_rocm_rt_kernel_set_local(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index,
                                           size_t bytes)
{
    gpuopt_status st = arg_checks(rt, k, index, "kernel_set_local");
    if (st != GPUOPT_OK)
        return st;
    uint64_t limit = rt->lds_per_block ? rt->lds_per_block : 65536;
    if (bytes > limit)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s kernel_set_local: %zu bytes of LDS for '%s' exceed the %llu bytes a "
                        "work-group may use",
                        rt->what, bytes, k->name, (unsigned long long)limit);
    k->shared_bytes = (unsigned int)bytes;
    return GPUOPT_OK;
}

gpuopt_status gpo_rocm_rt_kernel_max_group(gpo_rt *rt, gpo_rt_kernel *k, size_t *max_items)
{
    gpuopt_status st = arg_checks(rt, k, 0, "kernel_max_group");
    if (st != GPUOPT_OK)
        return st;
    if (!max_items)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s kernel_max_group: NULL output", rt->what);
    if (!rt->fn.func_get_attribute) {
        *max_items = (size_t)rt->max_threads; /* the device's limit */
        return GPUOPT_OK;
    }
    int v = 0;
    gpo_hip_error e =
        rt->fn.func_get_attribute(&v, GPO_HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k->func);
    if (e != GPO_HIP_SUCCESS)
        return gpo_rocm_rt_fail(rt, GPUOPT_ERR_DRIVER, "kernel_max_group", "hipFuncGetAttribute",
                                e);
    if (v <= 0)
        return gpo_fail(GPUOPT_ERR_DRIVER,
                        "%s kernel_max_group: hipFuncGetAttribute gave %d threads for '%s'",
                        rt->what, v, k->name);
    *max_items = (size_t)(v < rt->max_threads ? v : rt->max_threads);
    return GPUOPT_OK;
}

/* ---- launch --------------------------------------------------------------------- */

/* The work-group when the caller leaves it to the runtime: HIP has no such
 * choice, so the largest power of two up to 256 that divides global[0]
 * (256: four wave64 or eight wave32 wavefronts, a multiple of either). */
static void default_local(const gpo_rt *rt, const size_t global[3], size_t local[3])
{
    size_t x = 256;
    while (x > 1 && (x > (size_t)rt->max_threads || global[0] % x != 0))
        x /= 2;
    local[0] = x;
    local[1] = local[2] = 1;
}

gpuopt_status gpo_rocm_rt_launch(gpo_rt *rt, gpo_rt_kernel *k, uint32_t dims,
                                 const size_t global[3], const size_t *local, double *device_ns)
{
    size_t g[3] = {1, 1, 1}, l[3] = {1, 1, 1};
    void *params[GPO_ROCM_MAX_ARGS];
    int n_args = 0;
    gpuopt_status st = arg_checks(rt, k, 0, "launch");
    if (st != GPUOPT_OK)
        return st;
    if (dims < 1 || dims > 3)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "%s launch: %u dimensions (1 to 3 accepted)",
                        rt->what, dims);
    if (!global)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s launch: NULL global size", rt->what);
    for (uint32_t d = 0; d < dims; d++)
        g[d] = global[d];
    if (local)
        for (uint32_t d = 0; d < dims; d++)
            l[d] = local[d];
    else
        default_local(rt, g, l);
    size_t threads = 1;
    for (int d = 0; d < 3; d++) {
        /* HIP: gridDim x blockDim must stay below 2^32 in each dimension
         * (hipModuleLaunchKernel's documentation). */
        if (g[d] == 0 || l[d] == 0 || g[d] % l[d] != 0 || g[d] > UINT32_MAX)
            return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                            "%s launch of '%s': global %zu and local %zu in dimension %d (global "
                            "must be a non-zero multiple of local, below 2^32)",
                            rt->what, k->name, g[d], l[d], d);
        threads *= l[d];
    }
    if (threads > (size_t)rt->max_threads)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s launch of '%s': %zu work-items per group, above the device's %d",
                        rt->what, k->name, threads, rt->max_threads);
    for (int i = 0; i < GPO_ROCM_MAX_ARGS; i++)
        if (k->arg[i])
            n_args = i + 1;
    for (int i = 0; i < n_args; i++) {
        if (!k->arg[i])
            return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                            "%s launch of '%s': argument %d was not set (arguments 0 to %d are)",
                            rt->what, k->name, i, n_args - 1);
        params[i] = k->arg[i];
    }
    if (device_ns && (st = gpo_rocm_rt_time_begin(rt, "launch")) != GPUOPT_OK)
        return st;
    gpo_hip_error e = rt->fn.module_launch_kernel(
        k->func, (unsigned)(g[0] / l[0]), (unsigned)(g[1] / l[1]), (unsigned)(g[2] / l[2]),
        (unsigned)l[0], (unsigned)l[1], (unsigned)l[2], k->shared_bytes, NULL,
        n_args ? params : NULL, NULL);
    if (e != GPO_HIP_SUCCESS)
        return gpo_rocm_rt_fail(rt, GPUOPT_ERR_LAUNCH, "launch", "hipModuleLaunchKernel", e);
    return device_ns ? gpo_rocm_rt_time_end(rt, "launch", device_ns) : GPUOPT_OK;
}
