/* The device list as JSON: backends with their status and reasons, devices
 * with the normalised record, the selected one marked. Key names are a
 * public format (docs/json.md): add keys, never rename them. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "memory/live.h"
#include "select.h"
#include "util/strutil.h"

static const char *const type_words[] = {"other", "cpu", "gpu", "accelerator"};

static const struct {
    const char *key;
    uint32_t bit;
} feature_keys[] = {
    {"fp64", GPUOPT_FEATURE_FP64},
    {"fp16", GPUOPT_FEATURE_FP16},
    {"bf16", GPUOPT_FEATURE_BF16},
    {"tf32", GPUOPT_FEATURE_TF32},
    {"fp8", GPUOPT_FEATURE_FP8},
    {"int8", GPUOPT_FEATURE_INT8},
    {"matrix_units", GPUOPT_FEATURE_MATRIX_UNITS},
};

/* Adds a string, or null when empty. */
static void add_str(cJSON *o, const char *key, const char *v)
{
    if (v && *v)
        cJSON_AddStringToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

static void add_i32(cJSON *o, const char *key, int32_t v)
{
    if (v >= 0)
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

static void add_u64(cJSON *o, const char *key, uint64_t v)
{
    if (v)
        cJSON_AddNumberToObject(o, key, (double)v);
    else
        cJSON_AddNullToObject(o, key);
}

static void add_tristate(cJSON *o, const char *key, int32_t v)
{
    if (v < 0)
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddBoolToObject(o, key, v != 0);
}

static cJSON *backend_json(const gpo_ctx_slot *s)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "name", s->ops->name);
    cJSON_AddStringToObject(o, "status", gpo_ctx_status_word(s->status));
    add_str(o, "reason", s->report.reason);
    add_str(o, "library", s->report.library);
    add_str(o, "driver_version", s->report.driver_version);
    add_str(o, "runtime_version", s->report.runtime_version);
    if (s->init_ms >= 0)
        cJSON_AddNumberToObject(o, "init_ms", (double)(int64_t)(s->init_ms * 1000.0) / 1000.0);
    else
        cJSON_AddNullToObject(o, "init_ms");
    cJSON_AddNumberToObject(o, "device_count", s->n_found);
    return o;
}

cJSON *gpo_device_json(const gpuopt_device *d, int selected)
{
    const gpuopt_device_info *i = &d->info;
    cJSON *o = cJSON_CreateObject();
    cJSON *arch = cJSON_CreateObject();
    cJSON *feat = cJSON_CreateObject();
    if (!o || !arch || !feat) {
        cJSON_Delete(o);
        cJSON_Delete(arch);
        cJSON_Delete(feat);
        return NULL;
    }
    cJSON_AddStringToObject(o, "id", i->id);
    cJSON_AddStringToObject(o, "backend", i->backend);
    cJSON_AddNumberToObject(o, "index", i->index);
    add_str(o, "routes", i->routes);
    cJSON_AddStringToObject(o, "type", type_words[i->type >= 0 && i->type <= 3 ? i->type : 0]);
    add_str(o, "vendor", i->vendor);
    add_str(o, "name", i->name);
    add_str(arch, "family", i->arch_family);
    add_str(arch, "name", i->arch_name);
    if (i->cc_major >= 0) {
        char cc[16];
        gpo_snprintf(cc, sizeof cc, "%d.%d", (int)i->cc_major,
                     (int)(i->cc_minor < 0 ? 0 : i->cc_minor));
        cJSON_AddStringToObject(arch, "compute_capability", cc);
    } else {
        cJSON_AddNullToObject(arch, "compute_capability");
    }
    cJSON_AddBoolToObject(arch, "extrapolated", i->arch_extrapolated == 1);
    cJSON_AddItemToObject(o, "arch", arch);
    add_i32(o, "compute_units", i->compute_units);
    add_i32(o, "simd_width", i->simd_width);
    add_i32(o, "clock_mhz", i->clock_mhz);
    add_u64(o, "memory_bytes", i->memory_bytes);
    add_u64(o, "memory_free_bytes", i->memory_free_bytes);
    add_u64(o, "l2_bytes", i->l2_bytes);
    add_u64(o, "shared_mem_per_block", i->shared_mem_per_block);
    add_i32(o, "max_threads_per_block", i->max_threads_per_block);
    add_tristate(o, "integrated", i->integrated);
    add_tristate(o, "unified_memory", i->unified_memory);
    add_tristate(o, "ecc", i->ecc);
    add_str(o, "pci_bus_id", i->pci_bus_id);
    add_str(o, "uuid", i->uuid);
    add_str(o, "driver_version", i->driver_version);
    add_str(o, "runtime_version", i->runtime_version);
    add_i32(o, "numa_node", d->numa_node);
    add_str(o, "local_cpus", d->local_cpus);
    add_str(o, "local_cores", d->local_cores);
    add_str(o, "device_file", d->device_file);
    for (size_t k = 0; k < sizeof feature_keys / sizeof feature_keys[0]; k++) {
        if (i->features_known & feature_keys[k].bit)
            cJSON_AddBoolToObject(feat, feature_keys[k].key,
                                  (i->features & feature_keys[k].bit) != 0);
        else
            cJSON_AddNullToObject(feat, feature_keys[k].key);
    }
    cJSON_AddItemToObject(o, "features", feat);
    if (d->est_gflops > 0)
        cJSON_AddNumberToObject(o, "est_gflops", (double)(int64_t)d->est_gflops);
    else
        cJSON_AddNullToObject(o, "est_gflops");
    cJSON *matrix = cJSON_AddObjectToObject(o, "est_matrix_gflops");
    for (int p = GPO_PREC_FP32 + 1; matrix && p < GPO_PREC_COUNT; p++) {
        if (d->est_matrix_gflops[p] > 0)
            cJSON_AddNumberToObject(matrix, gpo_precision_name(p),
                                    (double)(int64_t)d->est_matrix_gflops[p]);
        else
            cJSON_AddNullToObject(matrix, gpo_precision_name(p));
    }
    if (d->est_bandwidth_gbs > 0)
        cJSON_AddNumberToObject(o, "est_bandwidth_gbs", (double)(int64_t)d->est_bandwidth_gbs);
    else
        cJSON_AddNullToObject(o, "est_bandwidth_gbs");
    cJSON *warnings = cJSON_AddArrayToObject(o, "warnings");
    char dropped[1024];
    if (warnings && gpo_device_toolchain_dropped(d, dropped, sizeof dropped))
        cJSON_AddItemToArray(warnings, cJSON_CreateString(dropped));
    cJSON_AddBoolToObject(o, "selected", selected);
    if (d->details) {
        cJSON *copy = cJSON_Duplicate(d->details, 1);
        if (copy)
            cJSON_AddItemToObject(o, "details", copy);
    }
    return o;
}

GPUOPT_API gpuopt_status gpuopt_context_to_json(gpuopt_context *ctx, char **json)
{
    gpo_detail_clear();
    if (json)
        *json = NULL;
    if (!ctx || !json)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s is NULL", ctx ? "json" : "ctx");
    gpo_ctx_lock(ctx);
    gpuopt_status st = gpo_ctx_probe_all(ctx);
    if (st) {
        gpo_ctx_unlock(ctx);
        return st;
    }
    gpuopt_device *selected = NULL;
    char select_error[1024] = "";
    gpo_selection *why = calloc(1, sizeof *why);
    if (!why) {
        gpo_ctx_unlock(ctx);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory writing devices as JSON");
    }
    if (gpo_ctx_select_for(ctx, NULL, NULL, &selected, why) != GPUOPT_OK)
        gpo_strlcpy(select_error, gpo_detail_get(), sizeof select_error);

    cJSON *root = cJSON_CreateObject();
    cJSON *backends = cJSON_CreateArray();
    cJSON *devices = cJSON_CreateArray();
    int ok = root && backends && devices;
    if (ok) {
        cJSON_AddStringToObject(root, "gpuopt_version", gpuopt_version());
        for (size_t i = 0; ok && i < ctx->n_backends; i++) {
            cJSON *b = backend_json(&ctx->slots[i]);
            ok = b && cJSON_AddItemToArray(backends, b);
        }
        for (size_t i = 0; ok && i < ctx->devices.n; i++) {
            gpuopt_device *d = ctx->devices.items[i];
            gpo_locality_cores(&ctx->cfg.fs, &ctx->core_map, d);
            /* Free memory as it is now, where a source answers without
             * creating a driver context (the record keeps it). */
            gpo_memory_reading live;
            if (gpo_memory_read(d, 0, &live) != GPUOPT_OK)
                live.source = GPUOPT_MEMORY_SOURCE_NONE;
            cJSON *dj = gpo_device_json(d, d == selected);
            ok = dj && cJSON_AddItemToArray(devices, dj);
            if (ok)
                add_str(dj, "memory_source",
                        live.source == GPUOPT_MEMORY_SOURCE_NONE ? NULL : live.source_text);
        }
        ok = ok && cJSON_AddItemToObject(root, "backends", backends);
        if (ok)
            backends = NULL;
        ok = ok && cJSON_AddItemToObject(root, "devices", devices);
        if (ok)
            devices = NULL;
        if (ok) {
            cJSON *sel = cJSON_CreateObject();
            ok = sel != NULL;
            if (ok) {
                cJSON_AddStringToObject(sel, "policy", ctx->cfg.device);
                add_str(sel, "device", selected ? selected->info.id : NULL);
                add_str(sel, "reason", selected ? why->reason : NULL);
                add_str(sel, "error", select_error);
                cJSON *w = cJSON_AddArrayToObject(sel, "warnings");
                for (int i = 0; w && i < why->n_warnings; i++)
                    cJSON_AddItemToArray(w, cJSON_CreateString(why->warnings[i]));
                cJSON_AddItemToObject(root, "selection", sel);
            }
        }
    }
    char *text = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(backends);
    cJSON_Delete(devices);
    cJSON_Delete(root);
    free(why);
    gpo_ctx_unlock(ctx);
    if (!text)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory writing devices as JSON");
    *json = text;
    return GPUOPT_OK;
}
