/* gpuopt_cache_*: the tuning cache directory of a context, for users and
 * the CLI (`gpuopt cache path|list|verify|clear`). The context's lock is
 * held only to copy the directory and the logger; file work runs without
 * it, so a long listing never blocks discovery or planning. */
#include <assert.h>
#include <stdlib.h>

#include "cache/cache.h"
#include "cache/dir.h"
#include "cache/transfer.h"
#include "context.h"
#include "util/strutil.h"

/* GPUOPT_ERR_NOT_FOUND when the context has no cache directory. */
static gpuopt_status snapshot(gpuopt_context *ctx, char *dir, size_t cap, gpo_logger *log)
{
    gpo_ctx_lock(ctx);
    gpo_strlcpy(dir, ctx->cfg.cache_dir, cap);
    if (log)
        *log = ctx->log;
    gpo_ctx_unlock(ctx);
    return dir[0] ? GPUOPT_OK : gpo_fail(GPUOPT_ERR_NOT_FOUND, GPO_NO_CACHE_DIR);
}

gpuopt_status gpo_cache_open_device(struct gpuopt_context *ctx, const gpuopt_device *device,
                                    const gpo_cache_options *opts, gpo_cache **out)
{
    assert(ctx && device && out);
    char dir[GPO_PATH_MAX], shared[GPO_PATH_MAX];
    gpo_logger log;
    *out = NULL;
    gpuopt_status st = snapshot(ctx, dir, sizeof dir, &log);
    if (st)
        return st;
    gpo_cache_device dev;
    gpo_cache_options o = opts ? *opts : (gpo_cache_options){0};
    gpo_ctx_lock(ctx);
    gpo_cache_device_from_info(&device->info, &dev);
    gpo_strlcpy(shared, ctx->cfg.cache_shared, sizeof shared);
    gpo_ctx_unlock(ctx);
    o.shared_dir = shared;
    return gpo_cache_open(dir, &dev, &o, &log, out);
}

GPUOPT_API gpuopt_status gpuopt_cache_path(gpuopt_context *ctx, char **path)
{
    GPO_ENTRY_OUT("", ctx, "ctx", path, NULL);
    char dir[GPO_PATH_MAX];
    gpuopt_status st = snapshot(ctx, dir, sizeof dir, NULL);
    if (st)
        return st;
    char *p = gpo_strdup(dir);
    if (!p)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for the cache path");
    *path = p;
    return GPUOPT_OK;
}

typedef gpuopt_status (*dir_fn)(const char *dir, cJSON **out);

static gpuopt_status dir_json(gpuopt_context *ctx, char **json, dir_fn fn)
{
    GPO_ENTRY_OUT("", ctx, "ctx", json, NULL);
    char dir[GPO_PATH_MAX];
    gpuopt_status st = snapshot(ctx, dir, sizeof dir, NULL);
    if (st)
        return st;
    cJSON *o = NULL;
    st = fn(dir, &o);
    if (st)
        return st;
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!text)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for the cache report");
    *json = text;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_cache_list(gpuopt_context *ctx, char **json)
{
    return dir_json(ctx, json, gpo_cache_dir_list);
}

GPUOPT_API gpuopt_status gpuopt_cache_verify(gpuopt_context *ctx, char **json)
{
    return dir_json(ctx, json, gpo_cache_dir_verify);
}

GPUOPT_API gpuopt_status gpuopt_cache_clear(gpuopt_context *ctx, gpuopt_device *device)
{
    gpo_detail_clear();
    if (!ctx)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "ctx is NULL");
    if (device && device->ctx != ctx)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "the device belongs to another context than the one given");
    char dir[GPO_PATH_MAX];
    gpo_logger log;
    gpuopt_status st = snapshot(ctx, dir, sizeof dir, &log);
    if (st)
        return st;
    gpo_cache_device dev;
    if (device) {
        gpo_ctx_lock(ctx);
        gpo_cache_device_from_info(&device->info, &dev);
        gpo_ctx_unlock(ctx);
    }
    return gpo_cache_dir_clear(dir, device ? &dev : NULL, &log, NULL);
}

GPUOPT_API gpuopt_status gpuopt_cache_export(gpuopt_context *ctx, gpuopt_device *device,
                                             char **text)
{
    GPO_ENTRY_OUT("", ctx, "ctx", text, NULL);
    if (device && device->ctx != ctx)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "the device belongs to another context than the one given");
    char dir[GPO_PATH_MAX];
    snapshot(ctx, dir, sizeof dir, NULL);
    gpo_cache_device dev;
    if (device) {
        gpo_ctx_lock(ctx);
        gpo_cache_device_from_info(&device->info, &dev);
        gpo_ctx_unlock(ctx);
    }
    return gpo_cache_export(dir, device ? &dev : NULL, text);
}

GPUOPT_API gpuopt_status gpuopt_cache_import(gpuopt_context *ctx, const char *text, size_t len,
                                             uint32_t flags, char **report)
{
    gpo_detail_clear();
    if (report)
        *report = NULL;
    if (!ctx || !text)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s is NULL", ctx ? "text" : "ctx");
    if (flags & ~GPUOPT_CACHE_IMPORT_ALL)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "flags 0x%x: accepted 0 or GPUOPT_CACHE_IMPORT_ALL", (unsigned)flags);
    int32_t n = 0;
    gpuopt_status st = gpuopt_device_count(ctx, &n);
    if (st)
        return st;
    gpo_cache_device *here = calloc(n > 0 ? (size_t)n : 1, sizeof *here);
    if (!here)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for the devices of an import");
    for (int32_t i = 0; i < n; i++) {
        gpuopt_device *d = NULL;
        if ((st = gpuopt_device_at(ctx, i, &d)) != GPUOPT_OK) {
            free(here);
            return st;
        }
        gpo_ctx_lock(ctx);
        gpo_cache_device_from_info(&d->info, &here[i]);
        gpo_ctx_unlock(ctx);
    }
    char dir[GPO_PATH_MAX];
    gpo_logger log;
    snapshot(ctx, dir, sizeof dir, &log);
    cJSON *o = NULL;
    st = gpo_cache_import(dir, text, len, here, (size_t)n, (flags & GPUOPT_CACHE_IMPORT_ALL) != 0,
                          &log, &o);
    free(here);
    if (st)
        return st;
    char *out = report ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (report && !out)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for the import report");
    if (report)
        *report = out;
    return GPUOPT_OK;
}
