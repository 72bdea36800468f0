/* TEMPORARY: the few core functions the OpenCL backend calls, until the
 * lead's src/config.c and src/device.c land on main. Removed by the merge
 * that brings them. Minimal on purpose: what device.h and config.h say,
 * nothing more. */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "device.h"

const char *gpo_config_library(const gpo_config *cfg, gpo_library_id id)
{
    if (!cfg || id < 0 || id >= GPO_LIB_COUNT || !cfg->libraries[id][0])
        return NULL;
    return cfg->libraries[id];
}

gpuopt_device *gpo_device_new(void)
{
    gpuopt_device *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    gpuopt_device_info *i = &d->info;
    i->struct_size = sizeof *i;
    i->index = i->type = -1;
    i->cc_major = i->cc_minor = i->arch_extrapolated = -1;
    i->compute_units = i->simd_width = i->clock_mhz = -1;
    i->integrated = i->unified_memory = i->ecc = i->max_threads_per_block = -1;
    i->type = GPUOPT_DEVICE_TYPE_OTHER;
    return d;
}

void gpo_device_free(gpuopt_device *d)
{
    if (!d)
        return;
    for (int r = 0; r < d->n_routes; r++)
        if (d->routes[r].priv_free)
            d->routes[r].priv_free(d->routes[r].priv);
    cJSON_Delete(d->details);
    free(d);
}

cJSON *gpo_device_details(gpuopt_device *d, const char *backend)
{
    if (!d || !backend)
        return NULL;
    if (!d->details && !(d->details = cJSON_CreateObject()))
        return NULL;
    cJSON *o = cJSON_GetObjectItemCaseSensitive(d->details, backend);
    if (!o)
        o = cJSON_AddObjectToObject(d->details, backend);
    return o;
}

gpuopt_status gpo_device_list_push(gpo_device_list *l, gpuopt_device *d)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        gpuopt_device **items = realloc(l->items, cap * sizeof *items);
        if (!items) {
            gpo_device_free(d);
            return GPUOPT_ERR_NO_MEMORY;
        }
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = d;
    return GPUOPT_OK;
}

void gpo_device_list_free(gpo_device_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        gpo_device_free(l->items[i]);
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* Rules are only tested once the core's plan lands; until then the setters
 * refuse. */
#include "knob.h"
#include "plan.h"

const gpo_config *gpo_plan_config(const struct gpuopt_plan *p)
{
    (void)p;
    return NULL;
}

gpuopt_status gpo_knob_set_int(struct gpuopt_plan *p, const char *n, int64_t v, const char *f, ...)
{
    (void)p, (void)n, (void)v, (void)f;
    return GPUOPT_ERR_UNSUPPORTED;
}

gpuopt_status gpo_knob_set_bytes(struct gpuopt_plan *p, const char *n, uint64_t v, const char *f,
                                 ...)
{
    (void)p, (void)n, (void)v, (void)f;
    return GPUOPT_ERR_UNSUPPORTED;
}

gpuopt_status gpo_knob_set_string(struct gpuopt_plan *p, const char *n, const char *v,
                                  const char *f, ...)
{
    (void)p, (void)n, (void)v, (void)f;
    return GPUOPT_ERR_UNSUPPORTED;
}
