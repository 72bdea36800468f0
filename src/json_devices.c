/* The device list as JSON: backends with their status and reasons, devices
 * with the normalised record, the selected one marked. Key names are a
 * public format (docs/json.md): add keys, never rename them. */
#include <cjson/cJSON.h>
#include <stdlib.h>

#include "context.h"
#include "memory/live.h"
#include "select.h"
#include "util/json.h"
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

static void add_i32(gpo_json *b, cJSON *o, const char *key, int32_t v)
{
    gpo_json_num_or_null(b, o, key, v, v >= 0);
}

static void add_u64(gpo_json *b, cJSON *o, const char *key, uint64_t v)
{
    gpo_json_num_or_null(b, o, key, (double)v, v != 0);
}

static void add_tristate(gpo_json *b, cJSON *o, const char *key, int32_t v)
{
    if (v < 0)
        gpo_json_null(b, o, key);
    else
        gpo_json_bool(b, o, key, v != 0);
}

static void backend_json(gpo_json *b, cJSON *list, const gpo_ctx_slot *s)
{
    cJSON *o = gpo_json_object(b, list, NULL);
    gpo_json_str(b, o, "name", s->ops->name);
    gpo_json_str(b, o, "status", gpo_ctx_status_word(s->status));
    gpo_json_text(b, o, "reason", s->report.reason);
    gpo_json_text(b, o, "library", s->report.library);
    gpo_json_text(b, o, "driver_version", s->report.driver_version);
    gpo_json_text(b, o, "runtime_version", s->report.runtime_version);
    gpo_json_num_or_null(b, o, "init_ms", (double)(int64_t)(s->init_ms * 1000.0) / 1000.0,
                         s->init_ms >= 0);
    gpo_json_num(b, o, "device_count", s->n_found);
}

/* The device's record into `o`. */
static void device_json(gpo_json *b, cJSON *o, const gpuopt_device *d, int selected)
{
    const gpuopt_device_info *i = &d->info;
    gpo_json_str(b, o, "id", i->id);
    gpo_json_str(b, o, "backend", i->backend);
    gpo_json_num(b, o, "index", i->index);
    gpo_json_text(b, o, "routes", i->routes);
    gpo_json_str(b, o, "type", type_words[i->type >= 0 && i->type <= 3 ? i->type : 0]);
    gpo_json_text(b, o, "vendor", i->vendor);
    gpo_json_text(b, o, "name", i->name);
    cJSON *arch = gpo_json_object(b, o, "arch");
    gpo_json_text(b, arch, "family", i->arch_family);
    gpo_json_text(b, arch, "name", i->arch_name);
    char cc[16] = "";
    if (i->cc_major >= 0)
        gpo_snprintf(cc, sizeof cc, "%d.%d", (int)i->cc_major,
                     (int)(i->cc_minor < 0 ? 0 : i->cc_minor));
    gpo_json_text(b, arch, "compute_capability", cc);
    gpo_json_bool(b, arch, "extrapolated", i->arch_extrapolated == 1);
    add_i32(b, o, "compute_units", i->compute_units);
    add_i32(b, o, "simd_width", i->simd_width);
    add_i32(b, o, "clock_mhz", i->clock_mhz);
    add_u64(b, o, "memory_bytes", i->memory_bytes);
    add_u64(b, o, "memory_free_bytes", i->memory_free_bytes);
    add_u64(b, o, "l2_bytes", i->l2_bytes);
    add_u64(b, o, "shared_mem_per_block", i->shared_mem_per_block);
    add_i32(b, o, "max_threads_per_block", i->max_threads_per_block);
    add_tristate(b, o, "integrated", i->integrated);
    add_tristate(b, o, "unified_memory", i->unified_memory);
    add_tristate(b, o, "ecc", i->ecc);
    gpo_json_text(b, o, "pci_bus_id", i->pci_bus_id);
    gpo_json_text(b, o, "uuid", i->uuid);
    gpo_json_text(b, o, "driver_version", i->driver_version);
    gpo_json_text(b, o, "runtime_version", i->runtime_version);
    add_i32(b, o, "numa_node", d->numa_node);
    gpo_json_text(b, o, "local_cpus", d->local_cpus);
    gpo_json_text(b, o, "local_cores", d->local_cores);
    gpo_json_text(b, o, "device_file", d->device_file);
    cJSON *feat = gpo_json_object(b, o, "features");
    for (size_t k = 0; k < sizeof feature_keys / sizeof feature_keys[0]; k++)
        add_tristate(b, feat, feature_keys[k].key,
                     !(i->features_known & feature_keys[k].bit)
                         ? -1
                         : (i->features & feature_keys[k].bit) != 0);
    gpo_json_num_or_null(b, o, "est_gflops", (double)(int64_t)d->est_gflops, d->est_gflops > 0);
    cJSON *matrix = gpo_json_object(b, o, "est_matrix_gflops");
    for (int p = GPO_PREC_FP32 + 1; !b->failed && p < GPO_PREC_COUNT; p++)
        gpo_json_num_or_null(b, matrix, gpo_precision_name(p),
                             (double)(int64_t)d->est_matrix_gflops[p], d->est_matrix_gflops[p] > 0);
    gpo_json_num_or_null(b, o, "est_bandwidth_gbs", (double)(int64_t)d->est_bandwidth_gbs,
                         d->est_bandwidth_gbs > 0);
    cJSON *warnings = gpo_json_array(b, o, "warnings");
    char dropped[1024];
    if (gpo_device_toolchain_dropped(d, dropped, sizeof dropped))
        gpo_json_str(b, warnings, NULL, dropped);
    gpo_json_bool(b, o, "selected", selected);
    if (d->details)
        gpo_json_add(b, o, "details", b->failed ? NULL : cJSON_Duplicate(d->details, 1));
}

GPUOPT_API gpuopt_status gpuopt_context_to_json(gpuopt_context *ctx, char **json)
{
    GPO_ENTRY_OUT("", ctx, "ctx", json, NULL);
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
    st = gpo_ctx_select_for(ctx, NULL, NULL, &selected, why);
    if (st == GPUOPT_ERR_NO_MEMORY) {
        free(why);
        gpo_ctx_unlock(ctx);
        return st;
    }
    if (st != GPUOPT_OK)
        gpo_strlcpy(select_error, gpo_detail_get(), sizeof select_error);

    gpo_json b = {0};
    cJSON *root = cJSON_CreateObject();
    gpo_json_str(&b, root, "gpuopt_version", gpuopt_version());
    cJSON *backends = gpo_json_array(&b, root, "backends");
    for (size_t i = 0; !b.failed && i < ctx->n_backends; i++)
        backend_json(&b, backends, &ctx->slots[i]);
    cJSON *devices = gpo_json_array(&b, root, "devices");
    for (size_t i = 0; !b.failed && i < ctx->devices.n; i++) {
        gpuopt_device *d = ctx->devices.items[i];
        gpo_locality_cores(&ctx->cfg.fs, &ctx->core_map, d);
        /* Free memory as it is now, where a source answers without
         * creating a driver context (the record keeps it). */
        gpo_memory_reading live;
        if (gpo_memory_read(d, 0, &live) != GPUOPT_OK)
            live.source = GPUOPT_MEMORY_SOURCE_NONE;
        cJSON *dj = gpo_json_object(&b, devices, NULL);
        device_json(&b, dj, d, d == selected);
        gpo_json_text(&b, dj, "memory_source",
                      live.source == GPUOPT_MEMORY_SOURCE_NONE ? NULL : live.source_text);
    }
    cJSON *sel = gpo_json_object(&b, root, "selection");
    gpo_json_str(&b, sel, "policy", ctx->cfg.device);
    gpo_json_text(&b, sel, "device", selected ? selected->info.id : NULL);
    gpo_json_text(&b, sel, "reason", selected ? why->reason : NULL);
    gpo_json_text(&b, sel, "error", select_error);
    cJSON *warnings = gpo_json_array(&b, sel, "warnings");
    for (int i = 0; !b.failed && i < why->n_warnings; i++)
        gpo_json_str(&b, warnings, NULL, why->warnings[i]);
    int ok = !b.failed;
    char *text = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    free(why);
    gpo_ctx_unlock(ctx);
    if (!text)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory writing devices as JSON");
    *json = text;
    return GPUOPT_OK;
}
