/* The CUDA runtime ops for programs, kernels and launches: CUDA C compiled
 * by NVRTC (cuda_nvrtc.c) for the session's device and loaded with
 * cuModuleLoadData, kernels found with cuModuleGetFunction (their names
 * must not be mangled: declare them extern "C"), launched with
 * cuLaunchKernel. Sizes follow the OpenCL convention of backend.h: global[]
 * counts threads and is a multiple of local[], so grid = global / local and
 * block = local. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_rt.h"
#include "util/strutil.h"

/* ---- words for failures of loading and running code ------------------------
 * Meanings from the CUresult documentation of cuda.h 13.0 and the CUDA C++
 * Programming Guide ("Error Checking": errors from a faulting kernel are
 * sticky and leave the context unusable). */
static const struct {
    gpo_cu_result result;
    gpuopt_status status;
    const char *words;
} load_words[] =
    {
        {GPO_CUDA_ERROR_UNSUPPORTED_PTX_VERSION, GPUOPT_ERR_BUILD,
         "the PTX is of a newer version than this driver can compile: update the driver, or name "
         "an "
         "NVRTC no newer than the driver with GPUOPT_NVRTC_LIBRARY"},
        {GPO_CUDA_ERROR_NO_BINARY_FOR_GPU, GPUOPT_ERR_BUILD,
         "the module holds no code this GPU can run"},
        {GPO_CUDA_ERROR_INVALID_PTX, GPUOPT_ERR_BUILD,
         "the driver's PTX compiler rejected the PTX"},
        {GPO_CUDA_ERROR_INVALID_IMAGE, GPUOPT_ERR_BUILD,
         "the driver does not accept the module image"},
        {GPO_CUDA_ERROR_JIT_COMPILER_NOT_FOUND, GPUOPT_ERR_BUILD,
         "the driver's PTX compiler (libnvidia-ptxjitcompiler) is missing"},
        {GPO_CUDA_ERROR_JIT_COMPILATION_DISABLED, GPUOPT_ERR_BUILD,
         "PTX compilation is disabled (CUDA_DISABLE_PTX_JIT)"},
},
  launch_words[] = {
      {GPO_CUDA_ERROR_NOT_SUPPORTED, GPUOPT_ERR_UNSUPPORTED,
       "this driver cannot run kernels on the device (a test double or a driver without a GPU "
       "behind it): measuring on the device needs a real NVIDIA GPU with its driver"},
      {GPO_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, GPUOPT_ERR_LAUNCH,
       "one block needs more registers or shared memory than a multiprocessor has: use a smaller "
       "block"},
      {GPO_CUDA_ERROR_INVALID_VALUE, GPUOPT_ERR_LAUNCH,
       "the grid, block or shared memory is outside what the kernel and device accept"},
      {GPO_CUDA_ERROR_LAUNCH_TIMEOUT, GPUOPT_ERR_TIMEOUT,
       "the kernel ran past the display watchdog's limit"},
#define STICKY_                                                                                    \
    "the kernel faulted; CUDA keeps this error in the device's primary context, which \
the host program's CUDA runtime shares, until the device is reset (cudaDeviceReset)"
      {GPO_CUDA_ERROR_ILLEGAL_ADDRESS, GPUOPT_ERR_LAUNCH, STICKY_},
      {GPO_CUDA_ERROR_MISALIGNED_ADDRESS, GPUOPT_ERR_LAUNCH, STICKY_},
      {GPO_CUDA_ERROR_ILLEGAL_INSTRUCTION, GPUOPT_ERR_LAUNCH, STICKY_},
      {GPO_CUDA_ERROR_INVALID_PC, GPUOPT_ERR_LAUNCH, STICKY_},
      {GPO_CUDA_ERROR_HARDWARE_STACK_ERROR, GPUOPT_ERR_LAUNCH, STICKY_},
      {GPO_CUDA_ERROR_ASSERT, GPUOPT_ERR_LAUNCH, STICKY_},
      {GPO_CUDA_ERROR_LAUNCH_FAILED, GPUOPT_ERR_LAUNCH, STICKY_},
#undef STICKY_
};

/* A failed load or launch in words: the call, the driver's words, and what
 * they mean when known. `fallback` is the status otherwise. */
static gpuopt_status explain(gpo_rt *rt, const char *op, const char *call, gpo_cu_result r,
                             int launch, gpuopt_status fallback)
{
    size_t n = launch ? sizeof launch_words / sizeof launch_words[0]
                      : sizeof load_words / sizeof load_words[0];
    for (size_t i = 0; i < n; i++) {
        const char *words = launch ? launch_words[i].words : load_words[i].words;
        if ((launch ? launch_words[i].result : load_words[i].result) != r)
            continue;
        char name[256];
        gpo_cuda_result_words(rt->api, r, name, sizeof name);
        return gpo_fail(launch ? launch_words[i].status : load_words[i].status,
                        "%s %s: %s failed: %s: %s", rt->what, op, call, name, words);
    }
    return gpo_cuda_rt_fail(rt, fallback, op, call, r);
}

gpuopt_status gpo_cuda_rt_launch_fail(gpo_rt *rt, const char *op, const char *call, gpo_cu_result r)
{
    return explain(rt, op, call, r, 1, GPUOPT_ERR_LAUNCH);
}

/* ---- programs --------------------------------------------------------------- */

gpuopt_status gpo_cuda_rt_program_build(gpo_rt *rt, const char *source, const char *options,
                                        gpo_rt_prog **out, char **log_out)
{
    const gpo_nvrtc *nv = NULL;
    gpo_nvrtc_image img;
    gpo_rt_prog *p = NULL;
    char *log = NULL;
    gpuopt_status st;

    memset(&img, 0, sizeof img);
    if (log_out)
        *log_out = NULL;
    if (!out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cuda program_build: NULL output");
    *out = NULL;
    if (!rt || !source)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cuda program_build: NULL session or source");
    if (!source[0])
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cuda program_build: empty source");
    st = gpo_cuda_nvrtc(rt->s, &nv);
    if (st)
        return st;
    st = gpo_nvrtc_compile(nv, source, options, rt->cc_major, rt->cc_minor, &img, &log);
    if (st)
        goto out;
    p = calloc(1, sizeof *p);
    if (!p) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "cuda program_build: out of memory");
        goto out;
    }
    st = gpo_cuda_rt_enter(rt, "program_build");
    if (st)
        goto out;
    gpo_cu_result r = rt->api->cuModuleLoadData(&p->module, img.data);
    if (r != GPO_CUDA_SUCCESS) {
        p->module = NULL;
        char call[96];
        gpo_snprintf(call, sizeof call, "cuModuleLoadData(%s for %s from %s)",
                     img.cubin ? "CUBIN" : "PTX", img.target, nv->library);
        st = explain(rt, "program_build", call, r, 0, GPUOPT_ERR_DRIVER);
        if (st == GPUOPT_ERR_BUILD) {
            /* The caller reads build failures from the log. */
            free(log);
            log = gpo_strdup(gpo_detail_get());
        }
    }
    st = gpo_cuda_rt_leave(rt, st, "program_build");
out:
    gpo_nvrtc_image_free(&img);
    if (st) {
        if (p && p->module)
            rt->api->cuModuleUnload(p->module);
        free(p);
    } else {
        gpo_cuda_rt_link(rt, RT_LIST_PROG, &p->h, RT_PROG);
        *out = p;
    }
    if (log_out)
        *log_out = log;
    else
        free(log);
    return st;
}

void gpo_cuda_rt_prog_release(gpo_rt *rt, gpo_rt_prog *p)
{
    /* Kernels of this program die with its module. */
    rt_obj *o = rt->lists[RT_LIST_KERNEL].next;
    while (o != &rt->lists[RT_LIST_KERNEL]) {
        rt_obj *next = o->next;
        if (((gpo_rt_kernel *)o)->prog == p)
            gpo_cuda_rt_kernel_release(rt, (gpo_rt_kernel *)o);
        o = next;
    }
    gpo_cuda_rt_unlink(&p->h);
    rt->api->cuModuleUnload(p->module);
    free(p);
}

void gpo_cuda_rt_program_free(gpo_rt *rt, gpo_rt_prog *p)
{
    if (!gpo_cuda_rt_owns(rt, p, RT_PROG))
        return;
    int pushed = gpo_cuda_rt_enter(rt, "program_free") == GPUOPT_OK;
    gpo_cuda_rt_prog_release(rt, p);
    if (pushed)
        gpo_cuda_rt_leave(rt, GPUOPT_OK, "program_free");
}

/* ---- kernels ------------------------------------------------------------------ */

/* Reads the parameter sizes when the driver can tell (cuFuncGetParamInfo,
 * CUDA 12.4+): an index past the last answers CUDA_ERROR_INVALID_VALUE;
 * CUDA_ERROR_NOT_SUPPORTED means this module cannot say. */
static gpuopt_status read_params(gpo_rt *rt, gpo_rt_kernel *k)
{
    k->n_params = -1;
    if (!rt->api->cuFuncGetParamInfo)
        return GPUOPT_OK;
    for (int i = 0; i <= GPO_CUDA_MAX_ARGS; i++) {
        size_t offset = 0, size = 0;
        gpo_cu_result r = rt->api->cuFuncGetParamInfo(k->func, (size_t)i, &offset, &size);
        if (r == GPO_CUDA_ERROR_INVALID_VALUE) {
            k->n_params = i;
            return GPUOPT_OK;
        }
        if (r == GPO_CUDA_ERROR_NOT_SUPPORTED)
            return GPUOPT_OK;
        if (r != GPO_CUDA_SUCCESS)
            return gpo_cuda_rt_fail(rt, GPUOPT_ERR_DRIVER, "kernel_create", "cuFuncGetParamInfo",
                                    r);
        if (i == GPO_CUDA_MAX_ARGS)
            break;
        k->param_size[i] = size;
    }
    return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                    "%s kernel_create: kernel %s takes more than %d parameters", rt->what, k->name,
                    GPO_CUDA_MAX_ARGS);
}

gpuopt_status gpo_cuda_rt_kernel_create(gpo_rt *rt, gpo_rt_prog *p, const char *name,
                                        gpo_rt_kernel **out)
{
    if (!out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cuda kernel_create: NULL output");
    *out = NULL;
    if (!gpo_cuda_rt_owns(rt, p, RT_PROG) || !name || !name[0])
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "cuda kernel_create: NULL session or name, or not a program of this "
                        "session");
    gpo_rt_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cuda kernel_create: out of memory");
    gpo_strlcpy(k->name, name, sizeof k->name);
    k->prog = p;
    gpuopt_status st = gpo_cuda_rt_enter(rt, "kernel_create");
    if (st) {
        free(k);
        return st;
    }
    gpo_cu_result r = rt->api->cuModuleGetFunction(&k->func, p->module, name);
    if (r == GPO_CUDA_ERROR_NOT_FOUND)
        st = gpo_fail(GPUOPT_ERR_NOT_FOUND,
                      "%s: the program has no kernel named \"%s\" (declare kernels extern \"C\" "
                      "so NVRTC does not mangle their names)",
                      rt->what, name);
    else if (r != GPO_CUDA_SUCCESS)
        st = gpo_cuda_rt_fail(rt, GPUOPT_ERR_DRIVER, "kernel_create", "cuModuleGetFunction", r);
    if (!st)
        st = read_params(rt, k);
    st = gpo_cuda_rt_leave(rt, st, "kernel_create");
    if (st) {
        free(k);
        return st;
    }
    gpo_cuda_rt_link(rt, RT_LIST_KERNEL, &k->h, RT_KERNEL);
    *out = k;
    return GPUOPT_OK;
}

void gpo_cuda_rt_kernel_release(gpo_rt *rt, gpo_rt_kernel *k)
{
    (void)rt; /* a CUfunction belongs to its module: nothing to release */
    gpo_cuda_rt_unlink(&k->h);
    for (int i = 0; i < GPO_CUDA_MAX_ARGS; i++)
        free(k->args[i].data);
    free(k);
}

void gpo_cuda_rt_kernel_free(gpo_rt *rt, gpo_rt_kernel *k)
{
    if (gpo_cuda_rt_owns(rt, k, RT_KERNEL))
        gpo_cuda_rt_kernel_release(rt, k);
}

static gpuopt_status set_arg(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index, const void *value,
                             size_t size, const char *op)
{
    if (index >= GPO_CUDA_MAX_ARGS || (k->n_params >= 0 && index >= (uint32_t)k->n_params))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s %s: kernel %s has no parameter %u (it takes %d)", rt->what, op, k->name,
                        index, k->n_params >= 0 ? k->n_params : GPO_CUDA_MAX_ARGS);
    if (k->n_params >= 0 && k->param_size[index] != size)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s %s: parameter %u of kernel %s is %zu bytes, not %zu", rt->what, op,
                        index, k->name, k->param_size[index], size);
    unsigned char *copy = malloc(size);
    if (!copy)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "%s %s: out of memory", rt->what, op);
    memcpy(copy, value, size);
    free(k->args[index].data);
    k->args[index].data = copy;
    k->args[index].size = size;
    return GPUOPT_OK;
}

gpuopt_status gpo_cuda_rt_kernel_set_buffer(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index,
                                            gpo_rt_buf *b)
{
    if (!gpo_cuda_rt_owns(rt, k, RT_KERNEL) || !gpo_cuda_rt_owns(rt, b, RT_BUF))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "cuda kernel_set_buffer: NULL session, or a kernel or buffer not of this "
                        "session");
    return set_arg(rt, k, index, &b->ptr, sizeof b->ptr, "kernel_set_buffer");
}

gpuopt_status gpo_cuda_rt_kernel_set_scalar(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index,
                                            const void *value, size_t size)
{
    if (!gpo_cuda_rt_owns(rt, k, RT_KERNEL) || !value || size == 0)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "cuda kernel_set_scalar: NULL session or value, size 0, or not a kernel "
                        "of this session");
    return set_arg(rt, k, index, value, size, "kernel_set_scalar");
}

/* CUDA has one dynamic shared-memory area per launch (extern __shared__),
 * not a parameter: `index` takes no parameter slot, and the bytes become
 * every later launch's dynamic shared memory. */
gpuopt_status gpo_cuda_rt_kernel_set_local(gpo_rt *rt, gpo_rt_kernel *k, uint32_t index,
                                           size_t bytes)
{
    (void)index;
    if (!gpo_cuda_rt_owns(rt, k, RT_KERNEL) || bytes == 0)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "cuda kernel_set_local: NULL session, 0 bytes, or not a kernel of this "
                        "session");
    if (bytes > UINT_MAX)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "cuda kernel_set_local: %zu bytes", bytes);
    k->shared_bytes = (unsigned int)bytes;
    return GPUOPT_OK;
}

static gpuopt_status kernel_threads(gpo_rt *rt, gpo_rt_kernel *k, const char *op, size_t *out)
{
    int v = 0;
    gpo_cu_result r =
        rt->api->cuFuncGetAttribute(&v, GPO_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k->func);
    if (r != GPO_CUDA_SUCCESS)
        return gpo_cuda_rt_fail(rt, GPUOPT_ERR_DRIVER, op,
                                "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)", r);
    if (v <= 0)
        return gpo_fail(GPUOPT_ERR_DRIVER,
                        "%s %s: the driver says kernel %s runs %d threads per block", rt->what, op,
                        k->name, v);
    *out = (size_t)v;
    return GPUOPT_OK;
}

gpuopt_status gpo_cuda_rt_kernel_max_group(gpo_rt *rt, gpo_rt_kernel *k, size_t *max_items)
{
    if (!gpo_cuda_rt_owns(rt, k, RT_KERNEL) || !max_items)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "cuda kernel_max_group: NULL session or output, or not a kernel of this "
                        "session");
    *max_items = 0;
    gpuopt_status st = gpo_cuda_rt_enter(rt, "kernel_max_group");
    if (st)
        return st;
    st = kernel_threads(rt, k, "kernel_max_group", max_items);
    return gpo_cuda_rt_leave(rt, st, "kernel_max_group");
}

/* ---- launch ---------------------------------------------------------------------- */

/* Checks sizes against the device and turns them into grid and block.
 * Without local[], dimension 0 gets the largest block that divides it and
 * the kernel can run, the others 1 (OpenCL leaves this to the runtime;
 * CUDA has no such choice). */
static gpuopt_status geometry(gpo_rt *rt, gpo_rt_kernel *k, uint32_t dims, const size_t *global,
                              const size_t *local, unsigned int grid[3], unsigned int block[3])
{
    size_t threads = 1, cap = 0;
    gpuopt_status st = kernel_threads(rt, k, "launch", &cap);
    if (st)
        return st;
    for (uint32_t i = 0; i < 3; i++) {
        size_t g = i < dims ? global[i] : 1;
        size_t l = 1;
        if (i < dims && local)
            l = local[i];
        else if (i == 0)
            for (size_t d = cap < g ? cap : g; d >= 1; d--)
                if (g % d == 0) {
                    l = d;
                    break;
                }
        if (g == 0 || l == 0 || g % l != 0)
            return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                            "%s launch: dimension %u has global size %zu and local size %zu "
                            "(global must be a positive multiple of local)",
                            rt->what, i, g, l);
        if (l > (size_t)rt->max_block[i] || g / l > (size_t)rt->max_grid[i])
            return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                            "%s launch: dimension %u: a block of %zu and a grid of %zu exceed the "
                            "device's %d and %d",
                            rt->what, i, l, g / l, rt->max_block[i], rt->max_grid[i]);
        threads *= l;
        block[i] = (unsigned int)l;
        grid[i] = (unsigned int)(g / l);
    }
    if (threads > cap)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s launch: a block of %zu threads; kernel %s runs at most %zu on this "
                        "device",
                        rt->what, threads, k->name, cap);
    return GPUOPT_OK;
}

gpuopt_status gpo_cuda_rt_launch(gpo_rt *rt, gpo_rt_kernel *k, uint32_t dims,
                                 const size_t global[3], const size_t *local, double *device_ns)
{
    void *params[GPO_CUDA_MAX_ARGS];
    unsigned int grid[3], block[3];

    if (device_ns)
        *device_ns = 0.0;
    if (!gpo_cuda_rt_owns(rt, k, RT_KERNEL) || !global)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "cuda launch: NULL session or global size, or not a kernel of this "
                        "session");
    if (dims < 1 || dims > 3)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "cuda launch: %u dimensions (1 to 3)", dims);
    int n = k->n_params;
    if (n < 0)
        for (n = GPO_CUDA_MAX_ARGS; n > 0 && !k->args[n - 1].data; n--)
            ;
    for (int i = 0; i < n; i++) {
        if (!k->args[i].data)
            return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                            "%s launch: parameter %d of kernel %s is not set", rt->what, i,
                            k->name);
        params[i] = k->args[i].data;
    }
    gpuopt_status st = gpo_cuda_rt_enter(rt, "launch");
    if (st)
        return st;
    st = geometry(rt, k, dims, global, local, grid, block);
    if (!st && device_ns)
        st = gpo_cuda_rt_time_begin(rt, "launch");
    if (!st) {
        gpo_cu_result r =
            rt->api->cuLaunchKernel(k->func, grid[0], grid[1], grid[2], block[0], block[1],
                                    block[2], k->shared_bytes, NULL, n ? params : NULL, NULL);
        if (r != GPO_CUDA_SUCCESS)
            st = gpo_cuda_rt_launch_fail(rt, "launch", "cuLaunchKernel", r);
    }
    if (!st && device_ns)
        st = gpo_cuda_rt_time_end(rt, "launch", device_ns);
    return gpo_cuda_rt_leave(rt, st, "launch");
}
