/* Device records: creation, lists, and joining the records of one physical
 * device seen by several backends (UUID first, PCI bus id second, as hwloc
 * hangs every backend's view of a GPU under its PCI object). */
#include "device.h"

#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "util/json.h"
#include "util/strutil.h"

gpuopt_device *gpo_device_new(void)
{
    gpuopt_device *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    gpuopt_device_info *i = &d->info;
    i->struct_size = sizeof *i;
    i->index = -1;
    i->type = GPUOPT_DEVICE_TYPE_OTHER;
    i->cc_major = -1;
    i->cc_minor = -1;
    i->arch_extrapolated = 0;
    i->compute_units = -1;
    i->simd_width = -1;
    i->clock_mhz = -1;
    i->integrated = -1;
    i->unified_memory = -1;
    i->ecc = -1;
    i->max_threads_per_block = -1;
    d->copy_engines = -1;
    d->numa_node = -1;
    return d;
}

void gpo_device_free(gpuopt_device *dev)
{
    if (!dev)
        return;
    for (int r = 0; r < dev->n_routes; r++)
        if (dev->routes[r].priv && dev->routes[r].priv_free)
            dev->routes[r].priv_free(dev->routes[r].priv);
    cJSON_Delete(dev->details);
    free(dev);
}

cJSON *gpo_device_details(gpuopt_device *dev, const char *backend)
{
    if (!dev || !backend)
        return NULL;
    if (!dev->details)
        dev->details = cJSON_CreateObject(); /* NULL: no object is added below */
    cJSON *obj = cJSON_GetObjectItemCaseSensitive(dev->details, backend);
    gpo_json b = {0};
    return cJSON_IsObject(obj) ? obj : gpo_json_object(&b, dev->details, backend);
}

gpuopt_status gpo_device_list_reserve(gpo_device_list *list, size_t more)
{
    assert(list);
    if (list->cap - list->n >= more)
        return GPUOPT_OK;
    size_t cap = list->cap ? list->cap : 8;
    while (cap - list->n < more)
        cap *= 2;
    gpuopt_device **items = realloc(list->items, cap * sizeof *items);
    if (!items)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory listing devices");
    list->items = items;
    list->cap = cap;
    return GPUOPT_OK;
}

gpuopt_status gpo_device_list_push(gpo_device_list *list, gpuopt_device *dev)
{
    assert(list && dev);
    gpuopt_status st = gpo_device_list_reserve(list, 1);
    if (st) {
        gpo_device_free(dev);
        return st;
    }
    list->items[list->n++] = dev;
    return GPUOPT_OK;
}

void gpo_device_list_free(gpo_device_list *list)
{
    if (!list)
        return;
    for (size_t i = 0; i < list->n; i++)
        gpo_device_free(list->items[i]);
    free(list->items);
    list->items = NULL;
    list->n = list->cap = 0;
}

int gpo_pci_normalise(const char *in, char *out, size_t cap)
{
    unsigned domain = 0, bus, dev, fn;
    char tail;
    if (!in || !*in)
        return -1;
    /* dddd:bb:dd.f (also NVIDIA's 8-digit domain), or bb:dd.f. */
    if (sscanf(in, "%x:%x:%x.%x%c", &domain, &bus, &dev, &fn, &tail) != 4) {
        domain = 0;
        if (sscanf(in, "%x:%x.%x%c", &bus, &dev, &fn, &tail) != 3)
            return -1;
    }
    for (const char *p = in; *p; p++)
        if (!isxdigit((unsigned char)*p) && *p != ':' && *p != '.')
            return -1;
    if (domain > 0xffff || bus > 0xff || dev > 0x1f || fn > 0x7)
        return -1;
    return gpo_say(0, out, cap, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
}

/* UUIDs are compared on their hex digits only, so "GPU-8c3b…" (NVIDIA's form)
 * and "8c3b…" (cl_khr_device_uuid bytes) agree. */
static int uuid_digits(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    if (strncmp(in, "GPU-", 4) == 0 || strncmp(in, "MIG-", 4) == 0)
        in += 4;
    for (; *in && n + 1 < cap; in++) {
        if (isxdigit((unsigned char)*in))
            out[n++] = (char)tolower((unsigned char)*in);
        else if (*in != '-')
            return -1;
    }
    out[n] = '\0';
    return n >= 8 ? 0 : -1;
}

int gpo_device_same_physical(const gpuopt_device_info *a, const gpuopt_device_info *b)
{
    if (!a || !b)
        return 0;
    /* UUIDs decide only when both are in the same form: ROCm's "GPU-" + 16
     * hex digits and an OpenCL 16-byte UUID of the same GPU differ, and then
     * the PCI bus id must decide. */
    char ua[64], ub[64];
    if (a->uuid[0] && b->uuid[0] && uuid_digits(a->uuid, ua, sizeof ua) == 0 &&
        uuid_digits(b->uuid, ub, sizeof ub) == 0 && strlen(ua) == strlen(ub))
        return strcmp(ua, ub) == 0;
    char pa[32], pb[32];
    if (gpo_pci_normalise(a->pci_bus_id, pa, sizeof pa) == 0 &&
        gpo_pci_normalise(b->pci_bus_id, pb, sizeof pb) == 0)
        return strcmp(pa, pb) == 0;
    return 0;
}

void gpo_device_update_routes(gpuopt_device *dev)
{
    /* In place, allocating nothing: merging devices must not fail half-way. */
    char *out = dev->info.routes;
    size_t cap = sizeof dev->info.routes, len = 0;
    out[0] = '\0';
    for (int r = 0; r < dev->n_routes; r++)
        if (dev->routes[r].backend && len < cap)
            len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? "," : "",
                                    dev->routes[r].backend->name);
}

#define FILL_STR(field)                                                                            \
    do {                                                                                           \
        if (!into->info.field[0])                                                                  \
            gpo_strlcpy(into->info.field, extra->info.field, sizeof into->info.field);             \
    } while (0)
#define FILL_I32(field)                                                                            \
    do {                                                                                           \
        if (into->info.field < 0)                                                                  \
            into->info.field = extra->info.field;                                                  \
    } while (0)
#define FILL_U64(field)                                                                            \
    do {                                                                                           \
        if (!into->info.field)                                                                     \
            into->info.field = extra->info.field;                                                  \
    } while (0)

gpuopt_status gpo_device_merge(gpuopt_device *into, gpuopt_device *extra)
{
    assert(into && extra);
    if (into->n_routes + extra->n_routes > GPO_MAX_ROUTES)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "device %s already has %d routes", into->info.id,
                        into->n_routes);
    FILL_STR(vendor);
    FILL_STR(name);
    FILL_STR(arch_family);
    FILL_STR(arch_name);
    FILL_STR(pci_bus_id);
    FILL_STR(uuid);
    if (!into->device_file[0])
        gpo_strlcpy(into->device_file, extra->device_file, sizeof into->device_file);
    FILL_I32(cc_major);
    FILL_I32(cc_minor);
    FILL_I32(compute_units);
    FILL_I32(simd_width);
    FILL_I32(clock_mhz);
    FILL_I32(integrated);
    FILL_I32(unified_memory);
    FILL_I32(ecc);
    FILL_I32(max_threads_per_block);
    FILL_U64(memory_bytes);
    FILL_U64(l2_bytes);
    FILL_U64(shared_mem_per_block);
    /* Features the primary could not determine are taken from the extra. */
    uint32_t unknown = ~into->info.features_known & extra->info.features_known;
    into->info.features |= extra->info.features & unknown;
    into->info.features_known |= unknown;

    for (int r = 0; r < extra->n_routes; r++)
        into->routes[into->n_routes++] = extra->routes[r];
    extra->n_routes = 0; /* the privs now belong to `into` */

    if (extra->details) {
        if (!into->details) {
            into->details = extra->details;
            extra->details = NULL;
        } else {
            cJSON *child = extra->details->child;
            while (child) {
                cJSON *next = child->next;
                cJSON *moved = cJSON_DetachItemViaPointer(extra->details, child);
                /* Appending keeps the item's own key: nothing is allocated,
                 * so nothing can fail (cJSON_AddItemToObject copies it). */
                if (!cJSON_GetObjectItemCaseSensitive(into->details, moved->string))
                    cJSON_AddItemToArray(into->details, moved);
                else
                    cJSON_Delete(moved);
                child = next;
            }
        }
    }
    gpo_device_update_routes(into);
    gpo_device_free(extra);
    return GPUOPT_OK;
}

int gpo_device_toolchain_dropped(const gpuopt_device *dev, char *why, size_t cap)
{
    assert(dev && why && cap > 0);
    int dropped = 0;
    why[0] = '\0';
    for (int r = 0; r < dev->n_routes; r++) {
        const gpo_route *rt = &dev->routes[r];
        char one[512];
        if (!rt->backend || !rt->backend->toolchain_dropped ||
            !rt->backend->toolchain_dropped(rt->backend_state, rt, dev, one, sizeof one))
            continue;
        size_t n = strlen(why);
        gpo_snprintf(why + n, cap - n, "%s%s: %s", dropped ? "; " : "", rt->backend->name, one);
        dropped = 1;
    }
    return dropped;
}
