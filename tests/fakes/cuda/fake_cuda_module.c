/* The module half of the libcuda test double's runtime (fake_cuda_rt.c
 * has memory and events): cuModuleLoadData takes PTX text or an ELF image
 * (a CUBIN); cuModuleGetFunction finds ".entry NAME" in PTX or NAME in the
 * ELF's string table; cuFuncGetParamInfo reads PTX parameter lists (for an
 * ELF it answers CUDA_ERROR_NOT_SUPPORTED); cuFuncSetAttribute raises a
 * function's dynamic shared-memory limit up to the device's opt-in limit;
 * cuLaunchKernel checks a launch as the driver does (context, handle,
 * stream, geometry, shared memory against the function's limit,
 * parameters) and then refuses it with CUDA_ERROR_NOT_SUPPORTED (the
 * double cannot run code), or, when GPUOPT_FAKE_CUDA_LAUNCH_NS or
 * GPUOPT_FAKE_CUDA_FAULT say so, "runs" it: nothing is computed, the
 * virtual clock advances, and the configured launch faults (fake_cuda.c).
 * Modules belong to the context they were loaded in and die with it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda.h"

#define FAKE_MAX_PARAMS 64
#define FAKE_MAX_FUNCS 16

typedef struct fake_func {
    struct fake_module *module;
    char name[128];
    int n_params; /* -1: the image cannot say (an ELF) */
    size_t param_size[FAKE_MAX_PARAMS];
    size_t param_offset[FAKE_MAX_PARAMS];
    int dynamic_max; /* MAX_DYNAMIC_SHARED_SIZE_BYTES; -1: the default */
} fake_func;

static long launches;

typedef struct fake_module {
    struct fake_module *next;
    fake_device *dev;
    unsigned char *image;
    size_t size;
    int elf;
    fake_func funcs[FAKE_MAX_FUNCS];
    int n_funcs;
} fake_module;

static fake_module *modules;

void fake_modules_free(const fake_device *d)
{
    for (fake_module **pp = &modules; *pp;) {
        fake_module *m = *pp;
        if (d && m->dev != d) {
            pp = &m->next;
            continue;
        }
        *pp = m->next;
        free(m->image);
        free(m);
    }
}

long fake_modules_count(void)
{
    long n = 0;
    fake_lock();
    for (fake_module *m = modules; m; m = m->next)
        n++;
    fake_unlock();
    return n;
}

/* ---- modules ------------------------------------------------------------------- */

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The size of a 64-bit little-endian ELF image: the furthest of its header
 * tables and sections. 0 when it is not one. */
static size_t elf_size(const unsigned char *p)
{
    if (memcmp(p, "\177ELF", 4) != 0 || p[4] != 2 || p[5] != 1)
        return 0;
    uint64_t phoff = le(p + 0x20, 8), shoff = le(p + 0x28, 8);
    uint64_t phentsize = le(p + 0x36, 2), phnum = le(p + 0x38, 2);
    uint64_t shentsize = le(p + 0x3a, 2), shnum = le(p + 0x3c, 2);
    uint64_t end = 64;
    if (phoff + phnum * phentsize > end)
        end = phoff + phnum * phentsize;
    if (shoff + shnum * shentsize > end)
        end = shoff + shnum * shentsize;
    for (uint64_t i = 0; i < shnum && shentsize >= 0x28; i++) {
        const unsigned char *sh = p + shoff + i * shentsize;
        uint64_t type = le(sh + 4, 4), off = le(sh + 0x18, 8), size = le(sh + 0x20, 8);
        if (type != 8 /* SHT_NOBITS */ && off + size > end)
            end = off + size;
    }
    return end > (64u << 20) ? 0 : (size_t)end;
}

/* ".param .u64 k_param_0" is 8 bytes, ".param .align 8 .b8 k_param_1[16]"
 * 16: the type token's bits, or the array length of bytes. */
static size_t ptx_param_size(const char *decl)
{
    const char *open = strchr(decl, '[');
    if (open)
        return (size_t)strtoul(open + 1, NULL, 10);
    const char *t = decl + strlen(".param");
    while ((t = strchr(t, '.')) != NULL) {
        if (strncmp(t, ".align", 6) == 0) {
            t += 6;
            continue;
        }
        const char *digits = t + 2; /* ".u64", ".f32", ".b8" */
        unsigned long bits = strtoul(digits, NULL, 10);
        return bits >= 8 ? bits / 8 : 1;
    }
    return 1;
}

/* Reads the ".param" list after ".entry NAME(" up to ")". */
static void ptx_params(const char *list, fake_func *f)
{
    size_t offset = 0;
    f->n_params = 0;
    for (const char *p = list; *p && *p != ')' && f->n_params < FAKE_MAX_PARAMS;) {
        const char *param = strstr(p, ".param");
        const char *close = strchr(p, ')');
        if (!param || (close && param > close))
            break;
        const char *end = param;
        while (*end && *end != ',' && *end != ')')
            end++;
        char decl[256];
        size_t n =
            (size_t)(end - param) < sizeof decl - 1 ? (size_t)(end - param) : sizeof decl - 1;
        memcpy(decl, param, n);
        decl[n] = '\0';
        size_t size = ptx_param_size(decl);
        size_t align = size >= 8 ? 8 : size >= 4 ? 4 : 1;
        offset = (offset + align - 1) / align * align;
        f->param_offset[f->n_params] = offset;
        f->param_size[f->n_params++] = size;
        offset += size;
        p = end;
    }
}

gpo_cu_result cuModuleLoadData(gpo_cu_module *module, const void *image)
{
    fake_device *d;
    FAKE_ENTER("cuModuleLoadData");
    FAKE_NEED_CONTEXT(d);
    if (!module || !image)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    const unsigned char *p = image;
    size_t size = elf_size(p);
    int elf = size > 0;
    if (!elf) {
        if (memcmp(p, "\177ELF", 4) == 0)
            return GPO_CUDA_ERROR_INVALID_IMAGE;
        size = strlen(image) + 1;
        if (!strstr(image, ".version") || !strstr(image, ".target"))
            return GPO_CUDA_ERROR_INVALID_IMAGE;
    }
    fake_module *m = calloc(1, sizeof *m);
    if (!m || !(m->image = malloc(size))) {
        free(m);
        return GPO_CUDA_ERROR_OUT_OF_MEMORY;
    }
    memcpy(m->image, p, size);
    m->size = size;
    m->elf = elf;
    m->dev = d;
    fake_lock();
    m->next = modules;
    modules = m;
    fake_unlock();
    *module = (gpo_cu_module)(void *)m;
    return GPO_CUDA_SUCCESS;
}

static fake_module *find_module(gpo_cu_module handle)
{
    fake_module *found = NULL;
    fake_lock();
    for (fake_module *m = modules; m; m = m->next)
        if ((void *)m == (void *)handle)
            found = m;
    fake_unlock();
    return found;
}

static fake_func *find_func(gpo_cu_function handle)
{
    fake_func *found = NULL;
    fake_lock();
    for (fake_module *m = modules; m; m = m->next)
        for (int i = 0; i < m->n_funcs; i++)
            if ((void *)&m->funcs[i] == (void *)handle)
                found = &m->funcs[i];
    fake_unlock();
    return found;
}

gpo_cu_result cuModuleUnload(gpo_cu_module module)
{
    gpo_cu_result r = GPO_CUDA_ERROR_INVALID_HANDLE;
    fake_device *d;
    FAKE_ENTER("cuModuleUnload");
    FAKE_NEED_CONTEXT(d);
    fake_lock();
    for (fake_module **pp = &modules; *pp; pp = &(*pp)->next) {
        if ((void *)*pp != (void *)module)
            continue;
        fake_module *m = *pp;
        *pp = m->next;
        free(m->image);
        free(m);
        r = GPO_CUDA_SUCCESS;
        break;
    }
    fake_unlock();
    return r;
}

static const void *find_bytes(const unsigned char *hay, size_t n, const char *needle, size_t k)
{
    for (size_t i = 0; k <= n && i <= n - k; i++)
        if (memcmp(hay + i, needle, k) == 0)
            return hay + i;
    return NULL;
}

gpo_cu_result cuModuleGetFunction(gpo_cu_function *func, gpo_cu_module module, const char *name)
{
    fake_device *d;
    FAKE_ENTER("cuModuleGetFunction");
    FAKE_NEED_CONTEXT(d);
    fake_module *m = find_module(module);
    if (!m)
        return GPO_CUDA_ERROR_INVALID_HANDLE;
    if (!func || !name || !*name || strlen(name) > 120)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < m->n_funcs; i++)
        if (strcmp(m->funcs[i].name, name) == 0) {
            *func = (gpo_cu_function)(void *)&m->funcs[i];
            return GPO_CUDA_SUCCESS;
        }
    char needle[160];
    const char *at;
    if (m->elf) {
        /* A string-table entry is NUL on both sides. */
        needle[0] = '\0';
        memcpy(needle + 1, name, strlen(name) + 1);
        at = find_bytes(m->image, m->size, needle, strlen(name) + 2);
    } else {
        snprintf(needle, sizeof needle, ".entry %s", name);
        at = strstr((const char *)m->image, needle);
        while (at && at[strlen(needle)] != '(' && at[strlen(needle)] != '\n' &&
               at[strlen(needle)] != ' ')
            at = strstr(at + 1, needle);
    }
    if (!at || m->n_funcs == FAKE_MAX_FUNCS)
        return GPO_CUDA_ERROR_NOT_FOUND;
    fake_func *f = &m->funcs[m->n_funcs];
    memset(f, 0, sizeof *f);
    f->module = m;
    snprintf(f->name, sizeof f->name, "%s", name);
    f->n_params = -1;
    f->dynamic_max = -1;
    if (!m->elf)
        ptx_params((const char *)at + strlen(needle), f);
    m->n_funcs++;
    *func = (gpo_cu_function)(void *)f;
    return GPO_CUDA_SUCCESS;
}

/* The double's kernels have no static shared memory, so the default
 * dynamic limit is the device's per-block limit and the opt-in one its
 * OPTIN attribute (cuda.h, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES). */
static int dynamic_max(const fake_func *f)
{
    return f->dynamic_max >= 0
               ? f->dynamic_max
               : f->module->dev->attrs[GPO_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK];
}

static int optin_max(const fake_device *d)
{
    int optin = d->attrs[GPO_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN];
    int block = d->attrs[GPO_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK];
    return optin > block ? optin : block;
}

gpo_cu_result cuFuncSetAttribute(gpo_cu_function func, gpo_cu_function_attribute attrib, int value)
{
    fake_device *d;
    FAKE_ENTER("cuFuncSetAttribute");
    FAKE_NEED_CONTEXT(d);
    fake_func *f = find_func(func);
    if (!f)
        return GPO_CUDA_ERROR_INVALID_HANDLE;
    if (attrib != GPO_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || value < 0 ||
        value > optin_max(f->module->dev))
        return GPO_CUDA_ERROR_INVALID_VALUE;
    f->dynamic_max = value;
    return GPO_CUDA_SUCCESS;
}

gpo_cu_result cuFuncGetAttribute(int *value, gpo_cu_function_attribute attrib, gpo_cu_function func)
{
    fake_device *d;
    FAKE_ENTER("cuFuncGetAttribute");
    FAKE_NEED_CONTEXT(d);
    fake_func *f = find_func(func);
    if (!f)
        return GPO_CUDA_ERROR_INVALID_HANDLE;
    if (!value)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    switch (attrib) {
    case GPO_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
        *value = f->module->dev->attrs[GPO_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK];
        return GPO_CUDA_SUCCESS;
    case GPO_CU_FUNC_ATTRIBUTE_NUM_REGS: *value = 32; return GPO_CUDA_SUCCESS;
    case GPO_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = 0; return GPO_CUDA_SUCCESS;
    case GPO_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        *value = dynamic_max(f);
        return GPO_CUDA_SUCCESS;
    default: return GPO_CUDA_ERROR_INVALID_VALUE;
    }
}

gpo_cu_result cuFuncGetParamInfo(gpo_cu_function func, size_t index, size_t *offset, size_t *size)
{
    fake_device *d;
    FAKE_ENTER("cuFuncGetParamInfo");
    FAKE_NEED_CONTEXT(d);
    fake_func *f = find_func(func);
    if (!f)
        return GPO_CUDA_ERROR_INVALID_HANDLE;
    if (f->n_params < 0)
        return GPO_CUDA_ERROR_NOT_SUPPORTED;
    if (!offset || !size || index >= (size_t)f->n_params)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    *offset = f->param_offset[index];
    *size = f->param_size[index];
    return GPO_CUDA_SUCCESS;
}

/* ---- launches -------------------------------------------------------------------- */

gpo_cu_result cuLaunchKernel(gpo_cu_function func, unsigned int grid_x, unsigned int grid_y,
                             unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                             unsigned int block_z, unsigned int shared_bytes, gpo_cu_stream stream,
                             void **params, void **extra)
{
    fake_device *d;
    FAKE_ENTER_ON("cuLaunchKernel", stream);
    FAKE_NEED_CONTEXT(d);
    fake_func *f = find_func(func);
    if (!f || f->module->dev != d || !fake_stream_ok(d, stream))
        return GPO_CUDA_ERROR_INVALID_HANDLE;
    if (extra)
        return GPO_CUDA_ERROR_INVALID_VALUE; /* the backend does not use it */
    const int *a = d->attrs;
    unsigned long long threads = (unsigned long long)block_x * block_y * block_z;
    if (!grid_x || !grid_y || !grid_z || !block_x || !block_y || !block_z ||
        block_x > (unsigned)a[GPO_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X] ||
        block_y > (unsigned)a[GPO_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y] ||
        block_z > (unsigned)a[GPO_CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z] ||
        grid_x > (unsigned)a[GPO_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X] ||
        grid_y > (unsigned)a[GPO_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y] ||
        grid_z > (unsigned)a[GPO_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z] ||
        threads > (unsigned)a[GPO_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK] ||
        shared_bytes > (unsigned)dynamic_max(f))
        return GPO_CUDA_ERROR_INVALID_VALUE;
    if (f->n_params > 0 && !params)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; f->n_params > 0 && i < f->n_params; i++)
        if (!params[i])
            return GPO_CUDA_ERROR_INVALID_VALUE;
    /* Everything checked: this is where a GPU would run the kernel. */
    const fake_config *c = fake_cfg();
    if (!c->launch_runs)
        return GPO_CUDA_ERROR_NOT_SUPPORTED;
    fake_lock();
    long n = c->fault_block && block_x != c->fault_block ? 0 : ++launches;
    fake_unlock();
    if (n == c->fault_nth)
        fake_fault_pending(c->fault_result);
    fake_clock_advance(c->launch_ns);
    return GPO_CUDA_SUCCESS;
}

void fake_launches_reset(void)
{
    launches = 0;
}
