/* The profiler's public calls, but for the three a program makes around
 * its sections (record.c): creating a profiler with its clocks, vendor
 * tools and file; switching it on and off; reports and files. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "autowrite.h"
#include "backend_env.h"
#include "context.h"
#include "record.h"
#include "render.h"
#include "util/detail.h"
#include "util/file_write.h"
#include "util/strutil.h"

#define KNOWN_FLAGS (GPUOPT_PROFILER_START_DISABLED | GPUOPT_PROFILER_NO_VENDOR_RANGES)

/* The layout of 0.2.0, the first that had gpuopt_profiler_options. */
static const size_t first_options_size =
    offsetof(gpuopt_profiler_options, stream_backend) + sizeof(const char *);

static gpuopt_status read_options(const gpuopt_profiler_options *in, gpuopt_profiler_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    if (!in)
        return GPUOPT_OK;
    GPO_CHECK_STRUCT_SIZE(NULL, gpuopt_profiler_options, in->struct_size, first_options_size);
    memcpy(o, in, in->struct_size < sizeof *o ? in->struct_size : sizeof *o);
    if (o->flags & ~KNOWN_FLAGS)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "gpuopt_profiler_options.flags 0x%x has bits no GPUOPT_PROFILER_* flag "
                        "has (known: 0x%x)",
                        (unsigned)o->flags, (unsigned)KNOWN_FLAGS);
    if (o->max_sections < 0)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_profiler_options.max_sections is %d: accepted 0 (the default, "
                        "%d) or more",
                        (int)o->max_sections, GPUOPT_PROFILER_DEFAULT_MAX_SECTIONS);
    return GPUOPT_OK;
}

/* The route of `dev` through backend `name`, NULL: the primary. */
static const gpo_route *route_of(const gpuopt_device *dev, const char *name)
{
    if (!name)
        return &dev->routes[0];
    for (int i = 0; i < dev->n_routes; i++)
        if (strcmp(dev->routes[i].backend->name, name) == 0)
            return &dev->routes[i];
    return NULL;
}

/* Looks at every backend's vendor tool (NVTX, roctx): the attached ones
 * get the sections as ranges; every one is named in the outputs. With the
 * context's lock held. */
static void attach_tools(gpuopt_profiler *p, gpuopt_context *ctx)
{
    gpo_backend_env env = {&ctx->cfg, &ctx->log};
    for (size_t i = 0; i < ctx->n_backends && p->n_tools < GPO_PROF_MAX_TOOLS; i++) {
        const gpo_range_ops *r = ctx->list[i]->ranges;
        if (!r)
            continue;
        gpo_prof_tool *t = &p->tools[p->n_tools++];
        t->tool = r->tool;
        t->attached = r->attach(&env, t->note, sizeof t->note);
        if (t->attached)
            p->ranges[p->n_ranges++] = r;
    }
}

/* Device time on the caller's stream: one mark recorded now tells whether
 * it works (the thread's context, the stream, the driver), and is the
 * device timeline's zero. */
static void start_device_clock(gpuopt_profiler *p, const gpuopt_device *dev, const gpo_route *route,
                               void *stream)
{
    const char *backend = route->backend->name;
    const gpo_runtime_ops *ops = route->backend->runtime;
    p->device_asked = 1;
    if (!ops || !ops->mark_record || !ops->mark_elapsed || !ops->mark_free) {
        gpo_snprintf(p->device_note, sizeof p->device_note,
                     "the %s backend cannot time work on a caller's stream (it has no device "
                     "events), so %s's sections are host-timed",
                     backend, dev->info.id);
        return;
    }
    gpo_rt_mark *anchor = NULL;
    if (ops->mark_record(route->backend_state, route, stream, &anchor) != GPUOPT_OK) {
        gpo_snprintf(p->device_note, sizeof p->device_note,
                     "recording an event on the stream given for %s failed, so sections are "
                     "host-timed: %s",
                     dev->info.id, gpo_detail_get());
        gpo_detail_clear();
        return;
    }
    p->anchor = anchor;
    p->anchor_ns = gpo_prof_now(p);
    p->timer.ops = ops;
    p->timer.backend_state = route->backend_state;
    p->timer.route = route;
    p->timer.stream = stream;
    gpo_snprintf(p->device_clock, sizeof p->device_clock,
                 "%s events on the caller's stream, on %s (%s)", backend, dev->info.id,
                 dev->info.name);
}

GPUOPT_API gpuopt_status gpuopt_profiler_create(gpuopt_context *ctx, gpuopt_device *device,
                                                const gpuopt_profiler_options *options,
                                                gpuopt_profiler **out)
{
    gpuopt_profiler_options o;
    gpo_detail_clear();
    if (!out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "gpuopt_profiler_create: out is NULL: pass the address of a "
                        "gpuopt_profiler pointer");
    *out = NULL;
    if (!ctx)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_profiler_create: ctx is NULL");
    gpuopt_status st = read_options(options, &o);
    if (st)
        return st;
    if (device && device->ctx != ctx)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "gpuopt_profiler_create: the device belongs to another context");
    if (o.stream && !device)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "gpuopt_profiler_create: a stream was given without the device it is "
                        "on: pass the device too");
    const gpo_route *route = NULL;
    if (device && o.stream && !(route = route_of(device, o.stream_backend)))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "gpuopt_profiler_create: stream_backend \"%.64s\" does not reach %s "
                        "(its backends: %s)",
                        o.stream_backend, device->info.id, device->info.routes);

    gpuopt_profiler *p =
        gpo_prof_new(o.max_sections ? o.max_sections : GPUOPT_PROFILER_DEFAULT_MAX_SECTIONS);
    if (!p)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "gpuopt_profiler_create: out of memory");
    atomic_store(&p->enabled, !(o.flags & GPUOPT_PROFILER_START_DISABLED));

    gpo_ctx_lock(ctx);
    p->log = ctx->log;
    char pattern[GPO_PATH_MAX];
    int numbered = !o.trace_path;
    gpo_strlcpy(pattern, o.trace_path ? o.trace_path : ctx->cfg.profile_path, sizeof pattern);
    if (!(o.flags & GPUOPT_PROFILER_NO_VENDOR_RANGES))
        attach_tools(p, ctx);
    if (device) {
        gpo_strlcpy(p->device_id, device->info.id, sizeof p->device_id);
        if (o.stream)
            start_device_clock(p, device, route, o.stream);
    }
    gpo_ctx_unlock(ctx);

    if (pattern[0]) {
        st = gpo_prof_autowrite_arm(p, pattern, numbered);
        if (st && numbered) {
            /* GPUOPT_PROFILE is the environment's, not this call's: the
             * profiler works, without its file. */
            gpo_log_warn(&p->log, "GPUOPT_PROFILE: %s; no profile will be written",
                         gpo_detail_get());
            gpo_detail_clear();
            st = GPUOPT_OK;
        }
        if (st) {
            gpo_prof_free(p);
            return st;
        }
    }
    *out = p;
    return GPUOPT_OK;
}

GPUOPT_API void gpuopt_profiler_destroy(gpuopt_profiler *prof)
{
    if (!prof)
        return;
    gpo_prof_autowrite_finish(prof);
    gpo_prof_free(prof);
}

GPUOPT_API gpuopt_status gpuopt_profiler_set_enabled(gpuopt_profiler *prof, int32_t enabled)
{
    gpo_detail_clear();
    if (!prof)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_profiler_set_enabled: prof is NULL");
    if (enabled != 0 && enabled != 1)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_profiler_set_enabled: enabled is %d: accepted 0 and 1",
                        (int)enabled);
    atomic_store(&prof->enabled, enabled);
    return GPUOPT_OK;
}

static gpuopt_status check_format(const char *call, int32_t format)
{
    if (format >= GPUOPT_PROFILE_TABLE && format <= GPUOPT_PROFILE_SVG)
        return GPUOPT_OK;
    return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                    "%s: format %d is none of GPUOPT_PROFILE_TABLE (1), _JSON (2), _TRACE (3), "
                    "_SVG (4)",
                    call, (int)format);
}

GPUOPT_API gpuopt_status gpuopt_profiler_report(gpuopt_profiler *prof, int32_t format, char **text)
{
    gpo_detail_clear();
    if (!text)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_profiler_report: text is NULL");
    *text = NULL;
    if (!prof)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_profiler_report: prof is NULL");
    gpuopt_status st = check_format("gpuopt_profiler_report", format);
    return st ? st : gpo_prof_render(prof, format, 1, text);
}

GPUOPT_API gpuopt_status gpuopt_profiler_write(gpuopt_profiler *prof, int32_t format,
                                               const char *path)
{
    gpo_detail_clear();
    if (!prof)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_profiler_write: prof is NULL");
    if (!path || !*path)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_profiler_write: path is %s",
                        path ? "empty" : "NULL");
    gpuopt_status st = check_format("gpuopt_profiler_write", format);
    char *text = NULL;
    if (!st)
        st = gpo_prof_render(prof, format, 1, &text);
    if (!st)
        st = gpo_file_write_atomic(path, text, strlen(text));
    free(text);
    return st;
}
