/* The vendor-neutral mechanics of a kernel launch (launch.h). */
#include "rt/launch.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/detail.h"

gpuopt_status gpo_rt_args_set(gpo_rt_args *a, uint32_t index, const void *value, size_t size,
                              const char *what, const char *op)
{
    assert(index < GPO_RT_MAX_ARGS && value && size > 0);
    unsigned char *copy = malloc(size);
    if (!copy)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "%s %s: out of memory", what, op);
    memcpy(copy, value, size);
    free(a->data[index]);
    a->data[index] = copy;
    a->size[index] = size;
    return GPUOPT_OK;
}

void gpo_rt_args_free(gpo_rt_args *a)
{
    for (int i = 0; i < GPO_RT_MAX_ARGS; i++)
        free(a->data[i]);
}

int gpo_rt_args_pack(const gpo_rt_args *a, int count, void **params, int *n_out)
{
    int n = count;
    if (n < 0)
        for (n = GPO_RT_MAX_ARGS; n > 0 && !a->data[n - 1]; n--)
            ;
    assert(n <= GPO_RT_MAX_ARGS);
    for (int i = 0; i < n; i++) {
        if (!a->data[i])
            return i;
        params[i] = a->data[i];
    }
    *n_out = n;
    return -1;
}

size_t gpo_rt_largest_divisor(size_t n, size_t cap)
{
    for (size_t d = cap < n ? cap : n; d > 1; d--)
        if (n % d == 0)
            return d;
    return 1;
}

gpuopt_status gpo_rt_geometry(const char *what, const char *kernel, uint32_t dims,
                              const size_t *global, const size_t *local, size_t auto_local0,
                              const int *max_block, const int *max_grid, size_t max_threads,
                              size_t g[3], size_t l[3])
{
    size_t threads = 1;
    if (dims < 1 || dims > 3)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "%s launch: %u dimensions (1 to 3)", what, dims);
    for (uint32_t i = 0; i < 3; i++) {
        g[i] = i < dims ? global[i] : 1;
        l[i] = i < dims && local ? local[i] : i == 0 && auto_local0 ? auto_local0 : 1;
        if (g[i] == 0 || l[i] == 0 || g[i] % l[i] != 0)
            return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                            "%s launch: dimension %u has global size %zu and local size %zu "
                            "(global must be a positive multiple of local)",
                            what, i, g[i], l[i]);
        if ((max_block && l[i] > (size_t)max_block[i]) ||
            (max_grid && g[i] / l[i] > (size_t)max_grid[i]))
            return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                            "%s launch: dimension %u: a block of %zu and a grid of %zu exceed the "
                            "device's %d and %d",
                            what, i, l[i], g[i] / l[i], max_block ? max_block[i] : 0,
                            max_grid ? max_grid[i] : 0);
        threads *= l[i];
    }
    if (threads > max_threads)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s launch: a block of %zu threads; kernel %s runs at most %zu on this "
                        "device",
                        what, threads, kernel ? kernel : "", max_threads);
    return GPUOPT_OK;
}

gpuopt_status gpo_rt_event_ns(double ms, const char *what, const char *op, const char *call,
                              double *ns)
{
    if (!(ms > 0.0) || !isfinite(ms))
        return gpo_fail(GPUOPT_ERR_DRIVER,
                        "%s %s: %s read %g ms between the events around the work, which is no "
                        "measurement",
                        what, op, call, ms);
    *ns = ms * 1e6;
    return GPUOPT_OK;
}
