/* A device's memory now (live.h): the primary route's memory_live, with
 * what a missing source means put in words, and the public query. */
#include "memory/live.h"

#include <string.h>

#include "context.h"
#include "util/strutil.h"

/* The enumerators' own words, as the Python binding spells them too. */
static const char *const source_words[] = {"none",        "management", "kernel", "context",
                                           "new_context", "runtime",    "host"};

const char *gpo_memory_source_word(int32_t source)
{
    return source >= 0 && source < (int32_t)(sizeof source_words / sizeof source_words[0])
               ? source_words[source]
               : "none";
}

gpuopt_status gpo_memory_read(gpuopt_device *dev, uint32_t flags, gpo_memory_reading *out)
{
    const gpo_route *route = &dev->routes[0];
    memset(out, 0, sizeof *out);
    gpuopt_status st = GPUOPT_ERR_UNSUPPORTED;
    gpo_detail_clear();
    if (route->backend && route->backend->memory_live)
        st = route->backend->memory_live(route->backend_state, route, flags, out);
    else
        gpo_detail_set("the %s backend has no way to read free memory", dev->info.backend);
    if (st == GPUOPT_OK) {
        if (!out->total)
            out->total = dev->info.memory_bytes;
        dev->info.memory_free_bytes = out->free;
        return GPUOPT_OK;
    }
    char why[sizeof out->source_text];
    gpo_strlcpy(why, gpo_detail_get(), sizeof why);
    memset(out, 0, sizeof *out);
    out->total = dev->info.memory_bytes;
    out->source = GPUOPT_MEMORY_SOURCE_NONE;
    out->read_ns = gpo_now_ns();
    gpo_snprintf(out->source_text, sizeof out->source_text, "free memory unknown: %s",
                 why[0] ? why : gpuopt_strerror(st));
    if (st == GPUOPT_ERR_UNSUPPORTED) {
        gpo_detail_clear();
        return GPUOPT_OK;
    }
    gpo_detail_set("%s", why);
    return st;
}

/* The reading as the public struct (struct_size bytes of it), its age
 * measured at now_ns. */
static void memory_info_fill(const gpo_memory_reading *r, uint64_t now_ns, gpuopt_memory_info *info)
{
    gpuopt_memory_info full;
    memset(&full, 0, sizeof full);
    full.struct_size = info->struct_size;
    full.total_bytes = r->total;
    full.free_bytes = r->free;
    full.used_bytes = r->used;
    full.source = r->source;
    full.age_s = now_ns > r->read_ns ? (double)(now_ns - r->read_ns) / 1e9 : 0.0;
    gpo_strlcpy(full.source_text, r->source_text, sizeof full.source_text);
    memcpy(info, &full, info->struct_size < sizeof full ? info->struct_size : sizeof full);
}

/* The first released layout ends with source_text. */
#define MEMORY_INFO_MIN sizeof(gpuopt_memory_info)

GPUOPT_API gpuopt_status gpuopt_device_memory(gpuopt_device *device, gpuopt_memory_info *info)
{
    gpo_detail_clear();
    if (info && info->struct_size >= MEMORY_INFO_MIN) {
        size_t keep = info->struct_size;
        memset(info, 0, sizeof *info);
        info->struct_size = keep;
    }
    if (!device || !info)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s is NULL", device ? "info" : "device");
    GPO_CHECK_STRUCT_SIZE(NULL, gpuopt_memory_info, info->struct_size, MEMORY_INFO_MIN);
    struct gpuopt_context *ctx = device->ctx;
    gpo_ctx_lock(ctx);
    gpuopt_status st = gpo_ctx_check_fork(ctx);
    gpo_memory_reading r;
    if (st == GPUOPT_OK)
        st = gpo_memory_read(device, 0, &r);
    if (st == GPUOPT_OK)
        memory_info_fill(&r, gpo_now_ns(), info);
    gpo_ctx_unlock(ctx);
    return st; /* on failure, info as zeroed above */
}
