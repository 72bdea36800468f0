/* Context lifecycle, lazy backend probing and the merged device list.
 *
 * Backends are probed strictly in priority order (slot 0 first), so a native
 * GPU backend has always listed its devices before OpenCL lists its own and
 * the merge only ever folds a later backend's record into an earlier one.
 * Nothing happens at library load: the fork handler is registered with
 * pthread_once when the first context is created. */
#include "context.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend_env.h"
#include "knob.h"
#include "locality.h"
#include "util/strutil.h"

/* ---- fork ------------------------------------------------------------------- */

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
/* Incremented in every child; a context remembers the value it was made with. */
static volatile unsigned fork_generation;

static void on_fork_child(void)
{
    fork_generation++;
}

static void register_fork_handler(void)
{
    pthread_atfork(NULL, NULL, on_fork_child);
}

gpuopt_status gpo_ctx_check_fork(struct gpuopt_context *ctx)
{
    if (ctx->fork_generation == fork_generation)
        return GPUOPT_OK;
    for (size_t i = 0; i < ctx->n_probed; i++) {
        const gpo_ctx_slot *s = &ctx->slots[i];
        if (s->ops->fork_sensitive && s->state)
            return gpo_fail(GPUOPT_ERR_FORKED,
                            "this context was created in process %d and the %s backend's "
                            "driver state does not survive fork(); create a new context in the "
                            "child process (pid %d)",
                            (int)ctx->pid, s->ops->name, (int)getpid());
    }
    return GPUOPT_OK;
}

/* ---- lifecycle ------------------------------------------------------------------ */

void gpo_ctx_lock(struct gpuopt_context *ctx)
{
    pthread_mutex_lock(&ctx->lock);
}

void gpo_ctx_unlock(struct gpuopt_context *ctx)
{
    pthread_mutex_unlock(&ctx->lock);
}

gpuopt_status gpo_context_create_with(const gpuopt_options *options, const gpo_backend *const *list,
                                      size_t n, struct gpuopt_context **out)
{
    static const size_t first_options_size = offsetof(gpuopt_options, log_user) + sizeof(void *);
    gpuopt_options opts;
    const gpuopt_options *use = NULL;

    if (!out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "out is NULL: pass the address of a "
                                                     "gpuopt_context pointer");
    *out = NULL;
    if (n == 0)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED, "this build of libgpuopt has no backends");
    if (n > GPO_MAX_BACKENDS)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "%zu backends: at most %d are supported", n,
                        GPO_MAX_BACKENDS);
    if (options) {
        GPO_CHECK_STRUCT_SIZE(NULL, gpuopt_options, options->struct_size, first_options_size);
        /* Read only what the caller's layout has; newer fields stay zero. */
        memset(&opts, 0, sizeof opts);
        memcpy(&opts, options,
               options->struct_size < sizeof opts ? options->struct_size : sizeof opts);
        use = &opts;
    }
    pthread_once(&fork_once, register_fork_handler);

    struct gpuopt_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory creating a context");
    ctx->log.level = GPUOPT_LOG_WARN;
    ctx->log.fn = use ? use->log_fn : NULL;
    ctx->log.user = use ? use->log_user : NULL;
    gpuopt_status st = gpo_config_load(&ctx->cfg, use, &ctx->log, list, n);
    if (st) {
        free(ctx);
        return st;
    }
    ctx->log.level = ctx->cfg.log_level;
    if (pthread_mutex_init(&ctx->lock, NULL) != 0) {
        gpo_config_free(&ctx->cfg);
        free(ctx);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cannot create the context's lock");
    }
    ctx->list = list;
    ctx->n_backends = n;
    for (size_t i = 0; i < n; i++) {
        ctx->slots[i].ops = list[i];
        ctx->slots[i].status = GPUOPT_BACKEND_NOT_PROBED;
        ctx->slots[i].init_ms = -1;
    }
    ctx->fork_generation = fork_generation;
    ctx->pid = getpid();
    if (ctx->cfg.config_path[0])
        gpo_log_debug(&ctx->log, "configuration read from %s", ctx->cfg.config_path);
    *out = ctx;
    return GPUOPT_OK;
}

GPUOPT_API void gpuopt_context_destroy(gpuopt_context *ctx)
{
    if (!ctx)
        return;
    gpo_device_list_free(&ctx->devices);
    for (size_t i = 0; i < ctx->n_probed; i++)
        if (ctx->slots[i].state && ctx->slots[i].ops->unload)
            ctx->slots[i].ops->unload(ctx->slots[i].state);
    gpo_config_free(&ctx->cfg);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

GPUOPT_API gpuopt_status gpuopt_context_set_log(gpuopt_context *ctx, int32_t level,
                                                gpuopt_log_fn fn, void *user)
{
    gpo_detail_clear();
    if (!ctx)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "ctx is NULL");
    if (level < GPUOPT_LOG_OFF || level > GPUOPT_LOG_DEBUG)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "log level %d: accepted 0 (off) to 4 (debug), see gpuopt_log_level",
                        (int)level);
    gpo_ctx_lock(ctx);
    ctx->log.level = level;
    ctx->log.fn = fn;
    ctx->log.user = user;
    gpo_ctx_unlock(ctx);
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_context_set_knob(gpuopt_context *ctx, const char *name,
                                                 const char *value)
{
    gpo_detail_clear();
    if (!ctx || !name)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s is NULL", ctx ? "name" : "ctx");
    const gpo_knob_def *def = gpo_knob_find(ctx->list, ctx->n_backends, name);
    if (!def)
        return gpo_fail(GPUOPT_ERR_NOT_FOUND,
                        "no knob is called '%s'; docs/knobs.md lists every knob", name);
    if (value) {
        int64_t ival;
        char *norm = NULL, why[768];
        int rc = gpo_knob_parse(def, value, &ival, &norm, why, sizeof why);
        if (rc == GPO_KNOB_PARSE_NO_MEMORY)
            return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory checking knob %s", name);
        if (rc)
            return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "knob %s: %s", name, why);
        free(norm);
    }
    gpo_ctx_lock(ctx);
    gpuopt_status st =
        gpo_config_set_knob(&ctx->cfg, name, value, GPUOPT_SOURCE_API, "gpuopt_context_set_knob");
    gpo_ctx_unlock(ctx);
    return st;
}

/* ---- probing --------------------------------------------------------------------- */

const char *gpo_ctx_status_word(int32_t status)
{
    static const char *const words[] = {"not probed", "available", "unavailable", "error",
                                        "disabled"};
    assert(status >= 0 && (size_t)status < sizeof words / sizeof words[0]);
    return words[status];
}

int gpo_ctx_slot_of(const struct gpuopt_context *ctx, const char *name)
{
    for (size_t i = 0; i < ctx->n_backends; i++)
        if (strcmp(ctx->slots[i].ops->name, name) == 0)
            return (int)i;
    return -1;
}

/* Adds one backend's freshly enumerated devices to the context list, folding
 * each into a device an earlier (native) backend already listed when they are
 * the same physical device. */
static void adopt_devices(struct gpuopt_context *ctx, gpo_ctx_slot *slot, gpo_device_list *found)
{
    for (size_t i = 0; i < found->n; i++) {
        gpuopt_device *d = found->items[i];
        found->items[i] = NULL;
        d->n_routes = 1;
        d->routes[0].backend = slot->ops;
        d->routes[0].backend_state = slot->state;
        d->routes[0].index = d->info.index;
        d->info.struct_size = sizeof d->info;
        gpo_strlcpy(d->info.backend, slot->ops->name, sizeof d->info.backend);
        gpo_snprintf(d->info.id, sizeof d->info.id, "%s:%d", slot->ops->name, (int)d->info.index);
        d->routes[0].info = d->info;
        d->ctx = ctx;
        gpo_device_update_routes(d);
        gpo_locality_read(&ctx->cfg.fs, d);

        gpuopt_device *twin = NULL;
        if (!slot->ops->native_gpu && d->info.type != GPUOPT_DEVICE_TYPE_CPU) {
            for (size_t k = 0; k < ctx->devices.n && !twin; k++) {
                gpuopt_device *e = ctx->devices.items[k];
                if (e->routes[0].backend->native_gpu &&
                    gpo_device_same_physical(&e->info, &d->info))
                    twin = e;
            }
        }
        int32_t native_index = d->routes[0].index;
        if (twin && gpo_device_merge(twin, d) == GPUOPT_OK) { /* d is consumed */
            gpo_log_debug(&ctx->log, "%s:%d is %s (same %s): listed once", slot->ops->name,
                          (int)native_index, twin->info.id,
                          twin->info.uuid[0] ? "UUID" : "PCI bus id");
            continue;
        }
        /* Room was reserved: the push cannot fail. */
        gpuopt_status st = gpo_device_list_push(&ctx->devices, d);
        assert(st == GPUOPT_OK);
        (void)st;
    }
    gpo_device_list_free(found);
}

/* Out of memory while probing: the slot goes back to "not probed", so that
 * the call fails and a later one probes again, rather than the backend
 * being reported broken for the context's life. */
static gpuopt_status probe_out_of_memory(gpo_ctx_slot *slot)
{
    char detail[512];
    gpo_strlcpy(detail, gpo_detail_get(), sizeof detail);
    if (slot->state && slot->ops->unload)
        slot->ops->unload(slot->state);
    slot->state = NULL;
    slot->status = GPUOPT_BACKEND_NOT_PROBED;
    slot->n_found = 0;
    memset(&slot->report, 0, sizeof slot->report);
    return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory while probing backend %s%s%s",
                    slot->ops->name, detail[0] ? ": " : "", detail);
}

static gpuopt_status probe_one(struct gpuopt_context *ctx, size_t i)
{
    gpo_ctx_slot *slot = &ctx->slots[i];
    const gpo_backend *ops = slot->ops;
    gpo_backend_env env = {&ctx->cfg, &ctx->log};

    if (!gpo_config_backend_allowed(&ctx->cfg, ops->name)) {
        char allowed[128] = "";
        for (int k = 0; k < ctx->cfg.n_backends; k++) {
            size_t used = strlen(allowed);
            gpo_snprintf(allowed + used, sizeof allowed - used, "%s%s", k ? "," : "",
                         ctx->cfg.backends[k]);
        }
        const char *by = ctx->cfg.backends_origin == GPO_ORIGIN_API ? "gpuopt_options.backends"
                         : ctx->cfg.backends_origin == GPO_ORIGIN_FILE
                             ? "the config file's \"backend\""
                             : "GPUOPT_BACKEND";
        slot->status = GPUOPT_BACKEND_DISABLED;
        return gpo_say(GPUOPT_OK, slot->report.reason, sizeof slot->report.reason,
                       "excluded by %s=%s", by, allowed);
    }
    uint64_t t0 = gpo_now_ns();
    void *state = NULL;
    gpo_detail_clear();
    gpuopt_status st = ops->load(&env, &state, &slot->report);
    slot->state = state;
    if (st == GPUOPT_ERR_NO_MEMORY)
        return probe_out_of_memory(slot);
    if (st == GPUOPT_OK) {
        slot->status = GPUOPT_BACKEND_AVAILABLE;
    } else {
        slot->status =
            st == GPUOPT_ERR_UNAVAILABLE ? GPUOPT_BACKEND_UNAVAILABLE : GPUOPT_BACKEND_ERROR;
        if (!slot->report.reason[0])
            gpo_snprintf(slot->report.reason, sizeof slot->report.reason, "%s",
                         gpo_detail_get()[0] ? gpo_detail_get() : gpuopt_strerror(st));
        gpo_log_debug(&ctx->log, "backend %s: %s", ops->name, slot->report.reason);
    }
    /* Enumerate when loaded, and also for kernel-side discovery (unavailable
     * with a state): the user learns the device is there. */
    if (state && (st == GPUOPT_OK || st == GPUOPT_ERR_UNAVAILABLE)) {
        gpo_device_list found = {0};
        gpuopt_status est = ops->enumerate(state, &env, &found);
        if (est == GPUOPT_OK)
            est = gpo_device_list_reserve(&ctx->devices, found.n);
        if (est == GPUOPT_ERR_NO_MEMORY) {
            gpo_device_list_free(&found);
            return probe_out_of_memory(slot);
        }
        slot->n_found = (int32_t)found.n;
        if (est) {
            if (st == GPUOPT_OK) {
                slot->status = GPUOPT_BACKEND_ERROR;
                gpo_snprintf(slot->report.reason, sizeof slot->report.reason,
                             "listing devices failed: %s", gpo_detail_get());
            }
            gpo_device_list_free(&found);
        } else {
            adopt_devices(ctx, slot, &found);
        }
    }
    slot->init_ms = (double)(gpo_now_ns() - t0) / 1e6;
    gpo_log_debug(&ctx->log, "backend %s probed in %.2f ms: %d device(s)", ops->name, slot->init_ms,
                  (int)slot->n_found);
    return GPUOPT_OK;
}

gpuopt_status gpo_ctx_probe_upto(struct gpuopt_context *ctx, size_t upto)
{
    gpuopt_status st = gpo_ctx_check_fork(ctx);
    if (st)
        return st;
    if (upto >= ctx->n_backends)
        upto = ctx->n_backends - 1;
    while (ctx->n_probed <= upto) {
        st = probe_one(ctx, ctx->n_probed);
        if (st)
            return st; /* the slot stays unprobed: the next call tries again */
        ctx->n_probed++;
    }
    return GPUOPT_OK;
}

gpuopt_status gpo_ctx_probe_all(struct gpuopt_context *ctx)
{
    return gpo_ctx_probe_upto(ctx, ctx->n_backends - 1);
}

/* ---- backends and devices: public ------------------------------------------------- */

GPUOPT_API gpuopt_status gpuopt_backend_count(gpuopt_context *ctx, int32_t *count)
{
    GPO_ENTRY_OUT("", ctx, "ctx", count, 0);
    *count = (int32_t)ctx->n_backends;
    return GPUOPT_OK;
}

static const size_t first_backend_info_size =
    offsetof(gpuopt_backend_info, runtime_version) + sizeof(const char *);

/* The strings point into the slot's report, which a slot's one probe writes
 * before anyone can read it: they stay valid and unchanged for the
 * context's life, as gpuopt.h promises. A failure copies the zeroed `out`. */
GPUOPT_API gpuopt_status gpuopt_backend_at(gpuopt_context *ctx, int32_t index,
                                           gpuopt_backend_info *info)
{
    gpo_detail_clear();
    if (!info)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "info is NULL");
    GPO_CHECK_STRUCT_SIZE(NULL, gpuopt_backend_info, info->struct_size, first_backend_info_size);
    gpuopt_backend_info out;
    memset(&out, 0, sizeof out);
    out.struct_size = info->struct_size;
    gpuopt_status st = GPUOPT_OK;
    if (!ctx)
        st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "ctx is NULL");
    else if (index < 0 || (size_t)index >= ctx->n_backends)
        st = gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "backend index %d: accepted 0 to %zu", (int)index,
                      ctx->n_backends - 1);
    if (st == GPUOPT_OK) {
        gpo_ctx_lock(ctx);
        st = gpo_ctx_probe_upto(ctx, (size_t)index);
        if (st == GPUOPT_OK) {
            const gpo_ctx_slot *s = &ctx->slots[index];
            out.name = s->ops->name;
            out.status = s->status;
            out.device_count = s->n_found;
            out.init_ms = s->init_ms;
            out.reason = s->report.reason;
            out.library = s->report.library;
            out.driver_version = s->report.driver_version;
            out.runtime_version = s->report.runtime_version;
        }
        gpo_ctx_unlock(ctx);
    }
    memcpy(info, &out, info->struct_size < sizeof out ? info->struct_size : sizeof out);
    return st;
}

GPUOPT_API gpuopt_status gpuopt_device_count(gpuopt_context *ctx, int32_t *count)
{
    GPO_ENTRY_OUT("", ctx, "ctx", count, 0);
    gpo_ctx_lock(ctx);
    gpuopt_status st = gpo_ctx_probe_all(ctx);
    *count = st ? 0 : (int32_t)ctx->devices.n;
    gpo_ctx_unlock(ctx);
    return st;
}

GPUOPT_API gpuopt_status gpuopt_device_at(gpuopt_context *ctx, int32_t index,
                                          gpuopt_device **device)
{
    GPO_ENTRY_OUT("", ctx, "ctx", device, NULL);
    gpo_ctx_lock(ctx);
    gpuopt_status st = gpo_ctx_probe_all(ctx);
    if (st == GPUOPT_OK) {
        if (index < 0 || (size_t)index >= ctx->devices.n)
            st = ctx->devices.n
                     ? gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "device index %d: accepted 0 to %zu",
                                (int)index, ctx->devices.n - 1)
                     : gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                                "device index %d: this context has no devices", (int)index);
        else
            *device = ctx->devices.items[index];
    }
    gpo_ctx_unlock(ctx);
    return st;
}

static const size_t first_device_info_size =
    offsetof(gpuopt_device_info, features_known) + sizeof(uint32_t);

GPUOPT_API gpuopt_status gpuopt_device_get_info(const gpuopt_device *device,
                                                gpuopt_device_info *info)
{
    gpo_detail_clear();
    if (!info)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "info is NULL");
    GPO_CHECK_STRUCT_SIZE(NULL, gpuopt_device_info, info->struct_size, first_device_info_size);
    size_t keep = info->struct_size, n = keep < sizeof device->info ? keep : sizeof device->info;
    struct gpuopt_context *ctx = device ? device->ctx : NULL;
    if (ctx)
        gpo_ctx_lock(ctx);
    if (device)
        memcpy(info, &device->info, n);
    else
        memset(info, 0, n);
    info->struct_size = keep;
    if (ctx)
        gpo_ctx_unlock(ctx);
    return device ? GPUOPT_OK : gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "device is NULL");
}
