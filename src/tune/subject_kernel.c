/* The kernel subject (subject_kernel.h): the route whose runtime compiles
 * the kernel's language, the device session (kept by the tuner, with its
 * compiled programs, across runs), the device limits as constraints, each
 * run's arguments and reference outputs; and one point: its program (from
 * the program cache, built ahead when the runtime allows), its kernel with
 * every argument bound, buffers whose size depends on the parameters, a
 * run (outputs reset first) and the element-by-element check of its
 * outputs. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "isolate/remote.h"
#include "tune/progcache.h"
#include "tune/space.h"
#include "tune/subject_kernel.h"
#include "tune/validate.h"
#include "tune/entries.h"
#include "util/strutil.h"

/* A point's failure: its words in ev->msg, its status returned. */
#define refuse(ev, status, ...) gpo_say(status, (ev)->msg, sizeof(ev)->msg, __VA_ARGS__)
/* The run cannot go on: sc->fatal says why. */
#define end_run(sc, ...) ((sc)->fatal = gpo_fail(__VA_ARGS__), GPO_FATAL)

/* What the tuner keeps across runs: the device session and its programs. */
typedef struct gpo_ksession gpo_ksession;

struct gpo_ksession {
    const gpo_runtime_ops *ops; /* the route's, or a test's wrapper */
    const gpo_route *route;
    gpo_rt *rt;
    gpo_progcache *pc;
    int32_t language;
    int32_t isolation; /* the setting it was opened with */
    int isolated;      /* 1: the route's runtime runs in a measurement worker */
};

/* A buffer on the device with its initial content. */
typedef struct gpo_kbuf {
    gpo_rt_buf *buf;
    void *image; /* initial content, written again before each run for outputs */
    size_t count, bytes;
} gpo_kbuf;

/* One run's arguments, by index (args[i]->index == i). */
typedef struct gpo_krun {
    gpo_ksession *ks;
    const gpo_targ **args; /* by index */
    int32_t nargs;
    gpo_kbuf *fixed; /* per index: buffers whose count reads no parameter */
    void **expect;   /* per index: expected output content, NULL when unchecked */
    size_t *expect_count;
    void *scratch; /* read-back space for the largest output */
    size_t scratch_bytes;
    int entry_found; /* a candidate's program had the entry */
    /* The run holds one reference and each prepared point one: a run
     * whose worker a fault ended is replaced while points prepared on it
     * may still be released. With own_ks, the (dead) session goes too. */
    int refs;
    int own_ks;
} gpo_krun;

/* Points handed out ahead of the one being timed, so their builds overlap
 * its timing, when the program cache builds on a worker. The number does
 * not depend on how fast anything runs, so a seed still gives one
 * sequence. */
#define AHEAD 2

static const gpo_kernel_subject *T(const gpo_subject_ctx *sc)
{
    return sc->def;
}

static const char *const lang_names[] = {NULL, "opencl-c", "cuda", "hip"};

const char *gpo_language_runtime_name(int32_t language)
{
    return language >= GPUOPT_LANG_OPENCL_C && language <= GPUOPT_LANG_HIP ? lang_names[language]
                                                                           : NULL;
}

const gpo_route *gpo_kernel_route(const gpo_kernel_subject *t, gpuopt_status *why)
{
    const gpuopt_device *d = t->dev;
    const char *want = gpo_language_runtime_name(t->k.language);
    const gpo_route *other = NULL;
    for (int i = 0; i < d->n_routes; i++) {
        const gpo_route *r = &d->routes[i];
        const gpo_runtime_ops *rt = r->backend ? r->backend->runtime : NULL;
        if (!rt || !rt->language)
            continue;
        if (strcmp(rt->language, want) != 0) {
            other = other ? other : r;
            continue;
        }
        if (!r->backend_state) {
            *why = gpo_fail(GPUOPT_ERR_UNAVAILABLE,
                            "device %s (%s): its %s backend is unavailable (gpuopt_backend_at "
                            "says why), so it cannot build %s kernels",
                            d->info.id, d->info.name, r->backend->name, want);
            return NULL;
        }
        return r;
    }
    if (other)
        *why = gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "device %s (%s) builds %s kernels (through its %s route) and has no "
                        "runtime for %s kernels",
                        d->info.id, d->info.name, other->backend->runtime->language,
                        other->backend->name, want);
    else
        *why = gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "device %s (%s): the %s backend cannot build and run kernels (it has no "
                        "runtime); tune host code with gpuopt_tuner_set_callback, or choose a "
                        "device with a %s runtime",
                        d->info.id, d->info.name, d->info.backend, want);
    return NULL;
}

void gpo_geometry_free(gpo_geometry *g)
{
    for (int i = 0; i < 3; i++) {
        gpo_expr_destroy(g->global[i]);
        gpo_expr_destroy(g->local[i]);
    }
    memset(g, 0, sizeof *g);
}

void gpo_targ_free(gpo_targ *a)
{
    gpo_expr_destroy(a->expr);
    free(a->data);
    free(a->ref);
    memset(a, 0, sizeof *a);
}

void gpo_kernel_def_free(gpo_kernel_def *k)
{
    free(k->source);
    free(k->entry);
    free(k->options);
    free(k->ref_source);
    free(k->ref_entry);
    free(k->ref_options);
    gpo_geometry_free(&k->geo);
    gpo_geometry_free(&k->ref_geo);
    gpo_expr_destroy(k->lmem);
    for (int32_t i = 0; i < k->nargs; i++)
        gpo_targ_free(&k->args[i]);
    free(k->args);
    memset(k, 0, sizeof *k);
}

static void ksession_free(gpo_ksession *ks)
{
    if (!ks)
        return;
    /* The worker stops before the session it builds on closes. */
    gpo_progcache_destroy(ks->pc);
    if (ks->rt)
        ks->ops->close(ks->rt);
    free(ks);
}

/* Opens ks->rt: in a measurement worker when the setting asks for one, or
 * it is AUTO and a fault on this runtime ends the process; otherwise, or
 * (AUTO) when no worker can start, in this process. */
static gpuopt_status open_rt(const gpo_kernel_subject *t, const gpo_logger *log,
                             const gpo_route *route, gpo_ksession *ks)
{
    const gpo_runtime_ops *real = route->backend->runtime;
    int want = t->isolation == GPUOPT_ISOLATION_WORKER ||
               (t->isolation == GPUOPT_ISOLATION_AUTO && real->faults_end_process);
    gpuopt_status st = GPUOPT_OK;
    if (want) {
        gpo_detail_clear();
        st = gpo_worker_open(route, &ks->rt);
        if (st == GPUOPT_OK) {
            ks->ops = t->wrap ? t->wrap(&gpo_worker_runtime) : &gpo_worker_runtime;
            ks->isolated = 1;
            gpo_worker_set_timeout(ks->rt, t->timeout_s);
            gpo_log_debug(log, "tuner: kernel candidates run in a measurement worker");
            return GPUOPT_OK;
        }
        if (st != GPUOPT_ERR_UNAVAILABLE || t->isolation == GPUOPT_ISOLATION_WORKER)
            return st;
        gpo_log_warn(log,
                     "tuner: %s; candidates run in this process, where a kernel that faults "
                     "ends the search (GPUOPT_ERR_FAULT)",
                     gpo_detail_get());
    }
    ks->ops = t->wrap ? t->wrap(real) : real;
    gpo_detail_clear();
    return ks->ops->open(route->backend_state, route, &ks->rt);
}

static gpuopt_status session(gpo_kernel_subject *t, const gpo_logger *log, gpo_ksession **out)
{
    /* A worker a fault ended in an earlier run's last point is replaced
     * here. */
    if (t->ks && t->ks->language == t->k.language && t->ks->isolation == t->isolation &&
        !(t->ks->isolated && gpo_worker_dead(t->ks->rt))) {
        if (t->ks->isolated)
            gpo_worker_set_timeout(t->ks->rt, t->timeout_s);
        *out = t->ks;
        return GPUOPT_OK;
    }
    ksession_free(t->ks);
    t->ks = NULL;
    gpuopt_status st = GPUOPT_OK;
    const gpo_route *route = gpo_kernel_route(t, &st);
    if (!route)
        return st;
    gpo_ksession *ks = calloc(1, sizeof *ks);
    if (!ks)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory opening a device session");
    ks->route = route;
    ks->language = t->k.language;
    ks->isolation = t->isolation;
    st = open_rt(t, log, route, ks);
    if (st != GPUOPT_OK) {
        st = gpo_fail(st, "cannot open a %s session on device %s (%s): %s", route->backend->name,
                      t->dev->info.id, t->dev->info.name, gpo_detail_get());
        free(ks);
        return st;
    }
    int threaded =
        gpo_progcache_threaded(ks->ops) &&
        (t->overlap == 1 || (t->overlap < 0 && route->info.type != GPUOPT_DEVICE_TYPE_CPU));
    if ((st = gpo_progcache_create(ks->ops, ks->rt, threaded, 0, &ks->pc)) != GPUOPT_OK) {
        ksession_free(ks);
        return st;
    }
    t->ks = *out = ks;
    return GPUOPT_OK;
}

void gpo_kernel_session_close(gpo_kernel_subject *s)
{
    ksession_free(s->ks);
    s->ks = NULL;
}

gpo_progcache *gpo_kernel_progcache(const gpo_kernel_subject *s)
{
    return s->ks ? s->ks->pc : NULL;
}

/* ---- device limits ---------------------------------------------------------- */

/* Adds "(a) * (b) ... <= limit" to the run's space. */
static gpuopt_status limit(gpo_subject_ctx *sc, gpuopt_space *space, const gpo_expr *const *parts,
                           int n, uint64_t max, const char *what)
{
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    for (int i = 0; i < n; i++)
        gpo_sbuf_appendf(&b, "%s(%s)", i ? " * " : "", gpo_expr_source(parts[i]));
    gpo_sbuf_appendf(&b, " <= %llu", (unsigned long long)max);
    char *text = gpo_sbuf_take(&b);
    if (!text)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory adding a device limit");
    gpuopt_status st = gpuopt_space_add_constraint(space, text);
    if (st != GPUOPT_OK)
        st = gpo_fail(st, "the device's %s limit as a constraint ('%s'): %s", what, text,
                      gpo_detail_get());
    else
        gpo_log_debug(sc->log, "tuner: device limit added as a constraint: %s", text);
    free(text);
    return st;
}

/* The device's work-group and local-memory limits become constraints of
 * the run's space, so configurations past them are never built and cost
 * no budget. (The kernel's own limit, known only once built, is checked
 * per candidate: INVALID.) */
static gpuopt_status kernel_constrain(gpo_subject_ctx *sc, gpuopt_space *space)
{
    const gpo_kernel_subject *t = sc->def;
    gpuopt_status st = GPUOPT_OK;
    const gpo_route *route = gpo_kernel_route(t, &st);
    if (!route)
        return st;
    assert(t->k.geo.dims > 0); /* gpuopt_tuner_set_kernel requires global[0] */
    const gpuopt_device_info *info = &route->info;
    if (t->k.geo.has_local && info->max_threads_per_block > 0)
        st = limit(sc, space, (const gpo_expr *const *)t->k.geo.local, t->k.geo.dims,
                   (uint64_t)info->max_threads_per_block, "work-group size");
    if (st == GPUOPT_OK && t->k.lmem && info->shared_mem_per_block > 0)
        st = limit(sc, space, (const gpo_expr *const *)&t->k.lmem, 1, info->shared_mem_per_block,
                   "local memory");
    return st;
}

/* ---- shared helpers --------------------------------------------------------- */

static char *k_options(const gpo_kernel_subject *t, const gpuopt_point *c)
{
    const gpuopt_space *s = gpo_point_space(c);
    const uint32_t *idx = gpo_point_indices(c);
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    gpo_sbuf_append(&b, t->k.options ? t->k.options : "");
    for (int32_t p = 0; p < gpo_space_param_count(s); p++)
        gpo_sbuf_appendf(&b, "%s-D%s=%s", b.len ? " " : "", gpo_space_param_name(s, p),
                         gpo_space_value_text(s, p, idx[p]));
    return gpo_sbuf_take(&b);
}

static void k_image(const gpo_kernel_subject *t, const gpo_targ *a, void *image, size_t count)
{
    switch (a->init) {
    case GPUOPT_INIT_RANDOM: gpo_elem_fill_random(image, count, a->type, t->seed, a->index); break;
    case GPUOPT_INIT_CONSTANT:
        for (size_t i = 0; i < count; i++)
            gpo_elem_set(image, i, a->type, a->value);
        break;
    case GPUOPT_INIT_DATA:
        memcpy(image, a->data,
               a->data_bytes < count * gpo_elem_size(a->type) ? a->data_bytes
                                                              : count * gpo_elem_size(a->type));
        break;
    default: memset(image, 0, count * gpo_elem_size(a->type)); break;
    }
}

static int k_geometry(gpo_subject_ctx *sc, const gpo_geometry *g, const uint32_t *idx,
                      size_t global[3], size_t local[3], gpo_eval *ev)
{
    for (int i = 0; i < 3; i++)
        global[i] = local[i] = 1;
    for (int i = 0; i < g->dims; i++) {
        int64_t gv = 0, lv = 1;
        if (gpo_space_eval(sc->space, idx, g->global[i], &gv) != GPO_EXPR_OK ||
            (g->has_local && gpo_space_eval(sc->space, idx, g->local[i], &lv) != GPO_EXPR_OK))
            return refuse(ev, -1, "the geometry of dimension %d is undefined", i);
        if (gv < 1 || lv < 1 || (uint64_t)gv > SIZE_MAX / 2 || (uint64_t)lv > SIZE_MAX / 2)
            return refuse(ev, -1,
                          "dimension %d has global size %lld and local size %lld (positive "
                          "values needed)",
                          i, (long long)gv, (long long)lv);
        global[i] = (size_t)((gv + lv - 1) / lv * lv);
        local[i] = (size_t)lv;
    }
    return 0;
}

static gpuopt_status k_launch(gpo_ksession *ks, gpo_rt_kernel *k, uint32_t dims,
                              const size_t global[3], const size_t *local, double *ns)
{
    /* The runtime waits for the kernel and stores its device time; one
     * that leaves it unset is timed by the host clock around the call
     * (which waited too). */
    double dev = -1;
    uint64_t t0 = gpo_now_ns();
    gpuopt_status st = ks->ops->launch(ks->rt, k, dims, global, local, &dev);
    if (st == GPUOPT_OK)
        *ns = dev >= 0 ? dev : (double)(gpo_now_ns() - t0);
    return st;
}

static int32_t k_bind_scalar(gpo_subject_ctx *sc, gpo_rt_kernel *k, const gpo_targ *a,
                             const uint32_t *idx, gpo_eval *ev)
{
    gpo_ksession *ks = T(sc)->ks;
    int64_t v = 0;
    double d = a->value;
    if (a->kind == GPO_ARG_SCALAR) {
        if (gpo_space_eval(sc->space, idx, a->expr, &v) != GPO_EXPR_OK)
            return refuse(ev, GPO_CAND_INVALID, "scalar argument %u ('%s') is undefined", a->index,
                          gpo_expr_source(a->expr));
        d = (double)v;
    }
    union {
        float f;
        double d;
        int32_t i32;
        uint32_t u32;
        int64_t i64;
    } u;
    size_t size = gpo_elem_size(a->type);
    int range_ok = 1;
    switch (a->type) {
    case GPUOPT_ELEM_F32: u.f = (float)d; break;
    case GPUOPT_ELEM_F64: u.d = d; break;
    case GPUOPT_ELEM_I32:
        range_ok = a->kind == GPO_ARG_SCALAR ? v >= INT32_MIN && v <= INT32_MAX : 1;
        u.i32 = a->kind == GPO_ARG_SCALAR ? (int32_t)v : (int32_t)d;
        break;
    case GPUOPT_ELEM_U32:
        range_ok = a->kind == GPO_ARG_SCALAR ? v >= 0 && v <= (int64_t)UINT32_MAX : 1;
        u.u32 = a->kind == GPO_ARG_SCALAR ? (uint32_t)v : (uint32_t)d;
        break;
    default: u.i64 = a->kind == GPO_ARG_SCALAR ? v : (int64_t)d; break;
    }
    if (!range_ok)
        return refuse(ev, GPO_CAND_INVALID, "scalar argument %u ('%s') is %lld, outside %s",
                      a->index, gpo_expr_source(a->expr), (long long)v, gpo_elem_name(a->type));
    gpo_detail_clear();
    if (ks->ops->kernel_set_scalar(ks->rt, k, a->index, &u, size) != GPUOPT_OK)
        return refuse(ev, GPO_CAND_LAUNCH_FAILED, "setting scalar argument %u: %s", a->index,
                      gpo_detail_get());
    return GPO_CAND_OK;
}

/* ---- a run's arguments and reference -------------------------------------------- */

static void krun_free(gpo_krun *k)
{
    if (!k)
        return;
    for (int32_t i = 0; i < k->nargs; i++) {
        if (k->fixed && k->fixed[i].buf)
            k->ks->ops->buffer_free(k->ks->rt, k->fixed[i].buf);
        if (k->fixed)
            free(k->fixed[i].image);
        if (k->expect)
            free(k->expect[i]);
    }
    free(k->fixed);
    free(k->expect);
    free(k->expect_count);
    free(k->args);
    free(k->scratch);
    if (k->own_ks)
        ksession_free(k->ks);
    free(k);
}

/* Drops one reference (the run's or a prepared point's). */
static void krun_unref(gpo_krun *k)
{
    if (k && --k->refs == 0)
        krun_free(k);
}

/* Arguments by index; they must be numbered 0 .. n-1. */
static gpuopt_status order_args(const gpo_kernel_subject *t, gpo_krun *k)
{
    k->nargs = t->k.nargs;
    if (k->nargs == 0)
        return GPUOPT_OK;
    if (!(k->args = calloc((size_t)k->nargs, sizeof *k->args)))
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory ordering arguments");
    for (int32_t i = 0; i < k->nargs; i++) {
        uint32_t ix = t->k.args[i].index;
        if (ix >= (uint32_t)k->nargs)
            break;
        k->args[ix] = &t->k.args[i];
    }
    for (int32_t i = 0; i < k->nargs; i++)
        if (!k->args[i])
            return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                            "kernel argument %d is not set: %d arguments are set, so they must "
                            "be numbered 0 to %d",
                            (int)i, (int)k->nargs, (int)k->nargs - 1);
    return GPUOPT_OK;
}

/* A buffer of `count` elements of a's type, holding its initial content. */
static gpuopt_status make_fixed(gpo_subject_ctx *sc, gpo_krun *k, const gpo_targ *a, size_t count)
{
    gpo_kbuf *b = &k->fixed[a->index];
    gpo_ksession *ks = k->ks;
    b->count = count;
    b->bytes = count * gpo_elem_size(a->type);
    if (a->init == GPUOPT_INIT_DATA && a->data_bytes != b->bytes)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "buffer argument %u: its count '%s' is %zu elements with the current "
                        "sizes, but its data holds %zu bytes (%zu elements)",
                        a->index, gpo_expr_source(a->expr), count, a->data_bytes,
                        a->data_bytes / gpo_elem_size(a->type));
    if (!(b->image = malloc(b->bytes)))
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory for argument %u (%zu bytes)", a->index,
                        b->bytes);
    k_image(sc->def, a, b->image, count);
    gpo_detail_clear();
    gpuopt_status st = ks->ops->buffer_alloc(ks->rt, b->bytes, &b->buf);
    if (st == GPUOPT_OK)
        st = ks->ops->buffer_write(ks->rt, b->buf, 0, b->image, b->bytes);
    if (st != GPUOPT_OK)
        return gpo_fail(st, "buffer argument %u (%zu bytes) on the device: %s", a->index, b->bytes,
                        gpo_detail_get());
    return GPUOPT_OK;
}

/* After a program built but its kernel `entry` could not be made: a name
 * the source does not define is the caller's mistake, refused with the
 * names it does define (INVALID_ARGUMENT); GPUOPT_OK otherwise. */
static gpuopt_status no_entry(const gpo_kernel_subject *t, const char *source, const char *entry,
                              const char *what)
{
    char names[512];
    if (gpo_kernel_entries(source, t->k.language, entry, names, sizeof names))
        return GPUOPT_OK;
    return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                    "the %s's entry '%s' is not in its program (%s); the source defines %s%s", what,
                    entry, gpo_detail_get(), *names ? "" : "no entry point", names);
}

/* Runs the reference kernel once; its outputs become the expected values
 * (outputs with reference data keep that). */
static gpuopt_status run_reference(gpo_subject_ctx *sc, gpo_krun *k)
{
    const gpo_kernel_subject *t = sc->def;
    gpo_ksession *ks = k->ks;
    gpo_rt_prog *prog = NULL;
    gpo_rt_kernel *kern = NULL;
    char *log = NULL;
    gpo_eval ev = {0};
    uint32_t idx[GPO_SPACE_MAX_PARAMS + 1] = {0};
    size_t global[3], local[3];
    double ns = 0;
    gpuopt_status st =
        gpo_progcache_get(ks->pc, t->k.ref_source, t->k.ref_options, &prog, &log, NULL);
    if (st != GPUOPT_OK) {
        st = gpo_fail(st, "the reference kernel did not build: %.900s",
                      log && *log ? log : gpo_detail_get());
        goto out;
    }
    if ((st = ks->ops->kernel_create(ks->rt, prog, t->k.ref_entry, &kern)) != GPUOPT_OK) {
        gpuopt_status why = no_entry(t, t->k.ref_source, t->k.ref_entry, "reference kernel");
        st = why != GPUOPT_OK ? why : gpo_fail(st, "the reference kernel: %s", gpo_detail_get());
        goto out;
    }
    for (int32_t i = 0; i < k->nargs && st == GPUOPT_OK; i++) {
        const gpo_targ *a = k->args[i];
        if (a->kind == GPO_ARG_BUFFER) {
            if (a->is_output)
                st = ks->ops->buffer_write(ks->rt, k->fixed[i].buf, 0, k->fixed[i].image,
                                           k->fixed[i].bytes);
            if (st == GPUOPT_OK)
                st = ks->ops->kernel_set_buffer(ks->rt, kern, a->index, k->fixed[i].buf);
            if (st != GPUOPT_OK)
                st = gpo_fail(st, "the reference kernel's argument %u: %s", a->index,
                              gpo_detail_get());
        } else if (k_bind_scalar(sc, kern, a, idx, &ev) != GPO_CAND_OK) {
            st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "the reference kernel: %s", ev.msg);
        }
    }
    if (st != GPUOPT_OK)
        goto out;
    if (k_geometry(sc, &t->k.ref_geo, idx, global, local, &ev) != 0) {
        st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "the reference kernel: %s", ev.msg);
        goto out;
    }
    gpo_detail_clear();
    st = k_launch(ks, kern, (uint32_t)t->k.ref_geo.dims, global,
                  t->k.ref_geo.has_local ? local : NULL, &ns);
    if (st != GPUOPT_OK) {
        st = gpo_fail(st, "the reference kernel did not run: %s", gpo_detail_get());
        goto out;
    }
    for (int32_t i = 0; i < k->nargs && st == GPUOPT_OK; i++) {
        const gpo_targ *a = k->args[i];
        if (a->kind != GPO_ARG_BUFFER || !a->is_output || a->ref)
            continue;
        if (!(k->expect[i] = malloc(k->fixed[i].bytes)))
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory for a reference output");
        else if ((st = ks->ops->buffer_read(ks->rt, k->fixed[i].buf, 0, k->expect[i],
                                            k->fixed[i].bytes)) != GPUOPT_OK)
            st = gpo_fail(st, "reading the reference kernel's output %u: %s", a->index,
                          gpo_detail_get());
        k->expect_count[i] = k->fixed[i].count;
    }
out:
    if (kern)
        ks->ops->kernel_free(ks->rt, kern);
    gpo_progcache_release(ks->pc, prog);
    free(log);
    return st;
}

static gpuopt_status kernel_setup(gpo_subject_ctx *sc)
{
    gpo_kernel_subject *t = sc->def;
    gpo_ksession *ks = NULL;
    gpuopt_status st = session(t, sc->log, &ks);
    if (st != GPUOPT_OK)
        return st;
    gpo_krun *k = calloc(1, sizeof *k);
    if (!k)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory setting up a kernel");
    k->ks = ks;
    k->refs = 1;
    if ((st = order_args(t, k)) != GPUOPT_OK)
        goto out;
    int has_ref = t->k.ref_source != NULL;
    for (int32_t i = 0; i < k->nargs; i++)
        has_ref |= k->args[i]->ref != NULL;
    size_t n = (size_t)(k->nargs ? k->nargs : 1);
    k->fixed = calloc(n, sizeof *k->fixed);
    k->expect = calloc(n, sizeof *k->expect);
    k->expect_count = calloc(n, sizeof *k->expect_count);
    if (!k->fixed || !k->expect || !k->expect_count) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory setting up a kernel");
        goto out;
    }
    uint32_t idx[GPO_SPACE_MAX_PARAMS + 1] = {0};
    for (int32_t i = 0; i < k->nargs && st == GPUOPT_OK; i++) {
        const gpo_targ *a = k->args[i];
        if (has_ref && !a->fixed)
            st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                          "argument %u ('%s') reads a parameter, but with a reference every "
                          "argument must be the same for all configurations",
                          a->index, a->expr ? gpo_expr_source(a->expr) : "");
        if (st != GPUOPT_OK || a->kind != GPO_ARG_BUFFER || !a->fixed)
            continue;
        int64_t count = 0;
        if (gpo_space_eval(sc->space, idx, a->expr, &count) != GPO_EXPR_OK || count < 1 ||
            (uint64_t)count > (SIZE_MAX >> 4) / gpo_elem_size(a->type)) {
            st = gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                          "buffer argument %u: its count '%s' is undefined or not positive with "
                          "the current sizes",
                          a->index, gpo_expr_source(a->expr));
            break;
        }
        st = make_fixed(sc, k, a, (size_t)count);
    }
    for (int32_t i = 0; i < k->nargs && st == GPUOPT_OK; i++) {
        const gpo_targ *a = k->args[i];
        if (a->ref && a->ref_bytes != k->fixed[i].bytes)
            st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                          "output argument %u holds %zu bytes with the current sizes, its "
                          "reference data %zu",
                          a->index, k->fixed[i].bytes, a->ref_bytes);
        else if (a->ref && !(k->expect[i] = malloc(a->ref_bytes)))
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory for reference data");
        else if (a->ref) {
            memcpy(k->expect[i], a->ref, a->ref_bytes);
            k->expect_count[i] = k->fixed[i].count;
        }
        if (a->kind == GPO_ARG_BUFFER && a->is_output && k->fixed[i].bytes > k->scratch_bytes)
            k->scratch_bytes = k->fixed[i].bytes;
    }
    if (st == GPUOPT_OK && k->scratch_bytes && !(k->scratch = malloc(k->scratch_bytes)))
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory for read-back space");
    if (st == GPUOPT_OK && t->k.ref_source)
        st = run_reference(sc, k);
    sc->validated = 0;
    for (int32_t i = 0; i < k->nargs; i++)
        sc->validated |= k->expect[i] != NULL;
    if (st == GPUOPT_OK && !sc->validated)
        gpo_log_info(sc->log,
                     "tuner: kernel %s has no reference: candidates are not "
                     "validated",
                     t->k.entry);
out:
    if (st != GPUOPT_OK) {
        krun_free(k);
        return st;
    }
    sc->state = k;
    sc->ahead = gpo_progcache_overlaps(ks->pc) ? AHEAD : 0;
    return GPUOPT_OK;
}

static void kernel_teardown(gpo_subject_ctx *sc)
{
    krun_unref(sc->state);
    sc->state = NULL;
}

/* A fault ended the run's worker: its session and run state go (with the
 * last point prepared on them) and a new worker is set up as the run
 * began, reference and all. */
static int32_t replace_worker(gpo_subject_ctx *sc)
{
    gpo_kernel_subject *t = sc->def;
    gpo_krun *old = sc->state;
    assert(old->ks == t->ks);
    old->own_ks = 1;
    t->ks = NULL;
    sc->state = NULL;
    krun_unref(old);
    gpuopt_status st = kernel_setup(sc);
    if (st != GPUOPT_OK)
        return end_run(sc, st,
                       "the tuner cannot replace the measurement worker a fault "
                       "ended: %s",
                       gpo_detail_get());
    gpo_log_info(sc->log, "tuner: a new measurement worker replaces the one a fault ended");
    return GPO_CAND_OK;
}

/* ---- one point ------------------------------------------------------------------ */

typedef struct kprep {
    const gpuopt_point *config;
    gpo_krun *k; /* the run state (and session) it was prepared on */
    gpo_rt_prog *prog;
    gpo_rt_kernel *kernel;
    uint32_t dims;
    size_t global[3], local[3];
    int has_local;
    gpo_kbuf *own; /* per index: buffers whose count reads a parameter */
    int32_t nargs;
} kprep;

static void k_prefetch(gpo_subject_ctx *sc, const gpuopt_point *c)
{
    const gpo_kernel_subject *t = sc->def;
    char *opts = k_options(t, c);
    /* A prefetch that cannot be queued only loses the overlap. */
    if (opts && t->ks)
        gpo_progcache_prefetch(t->ks->pc, t->k.source, opts);
    free(opts);
}

static void k_release(gpo_subject_ctx *sc, gpo_prep *prep)
{
    kprep *p = (kprep *)prep;
    (void)sc;
    if (!p)
        return;
    gpo_ksession *ks = p->k->ks;
    if (p->kernel)
        ks->ops->kernel_free(ks->rt, p->kernel);
    gpo_progcache_release(ks->pc, p->prog);
    for (int32_t i = 0; p->own && i < p->nargs; i++) {
        if (p->own[i].buf)
            ks->ops->buffer_free(ks->rt, p->own[i].buf);
        free(p->own[i].image);
    }
    free(p->own);
    krun_unref(p->k);
    free(p);
}

/* A sticky device fault (GPUOPT_ERR_FAULT, backend.h) is no candidate's
 * build, launch or result. In a measurement worker it ended the worker
 * alone: the candidate is FAULT, in the driver's words, and the next
 * point gets a new worker (k_prepare). In this process every later call
 * fails the same way, so the run ends at once, naming the fault and when
 * it showed (otherwise the next candidate's module load reads as a
 * compile failure). */
static int32_t fault_ends_run(gpo_subject_ctx *sc, const gpo_krun *k, const gpuopt_point *c,
                              const char *when, gpo_eval *ev)
{
    if (k->ks->isolated)
        return refuse(ev, GPO_CAND_FAULT, "device fault while %s: %s", when, gpo_detail_get());
    const gpuopt_device_info *d = &T(sc)->dev->info;
    char why[1024], *config = NULL;
    gpo_strlcpy(why, gpo_detail_get(), sizeof why);
    if (c && gpuopt_point_to_string(c, &config) != GPUOPT_OK)
        config = NULL; /* the fault is the news; the configuration only helps */
    sc->fatal = gpo_fail(GPUOPT_ERR_FAULT,
                         "the tuner stopped on device %s (%s): code on the device faulted (%s%s%s "
                         "%s), and the fault leaves the device unusable in this process: %s",
                         d->id, d->name, config ? "candidate " : "", config ? config : "",
                         config ? ", seen while" : "seen while", when, why);
    free(config);
    return GPO_FATAL;
}

/* The start of a build log, on one line per line kept. */
static void log_excerpt(const char *log, char *out, size_t cap)
{
    gpo_snprintf(out, cap, "build failed: %s", log && *log ? log : "(the compiler gave no log)");
}

/* Buffers whose count reads a parameter, made for this candidate. */
static int32_t own_buffers(gpo_subject_ctx *sc, const gpo_krun *k, kprep *p, const uint32_t *idx,
                           gpo_eval *ev)
{
    gpo_ksession *ks = k->ks;
    for (int32_t i = 0; i < k->nargs; i++) {
        const gpo_targ *a = k->args[i];
        if (a->kind != GPO_ARG_BUFFER || a->fixed)
            continue;
        if (!p->own && !(p->own = calloc((size_t)k->nargs, sizeof *p->own)))
            return end_run(sc, GPUOPT_ERR_NO_MEMORY, "out of memory for a candidate's buffers");
        gpo_kbuf *b = &p->own[i];
        int64_t count = 0;
        if (gpo_space_eval(sc->space, idx, a->expr, &count) != GPO_EXPR_OK || count < 1 ||
            (uint64_t)count > (SIZE_MAX >> 4) / gpo_elem_size(a->type))
            return refuse(ev, GPO_CAND_INVALID,
                          "buffer argument %u: count '%s' is undefined or not positive", a->index,
                          gpo_expr_source(a->expr));
        b->count = (size_t)count;
        b->bytes = b->count * gpo_elem_size(a->type);
        if (!(b->image = malloc(b->bytes)))
            return end_run(sc, GPUOPT_ERR_NO_MEMORY, "out of memory for argument %u (%zu bytes)",
                           a->index, b->bytes);
        k_image(sc->def, a, b->image, b->count);
        gpo_detail_clear();
        gpuopt_status st = ks->ops->buffer_alloc(ks->rt, b->bytes, &b->buf);
        if (st == GPUOPT_OK)
            st = ks->ops->buffer_write(ks->rt, b->buf, 0, b->image, b->bytes);
        if (st == GPUOPT_ERR_FAULT)
            return fault_ends_run(sc, k, p->config, "making its buffers", ev);
        if (st != GPUOPT_OK)
            return refuse(ev, GPO_CAND_INVALID, "buffer argument %u (%zu bytes): %s", a->index,
                          b->bytes, gpo_detail_get());
    }
    return GPO_CAND_OK;
}

static int32_t bind(gpo_subject_ctx *sc, const gpo_krun *k, kprep *p, const uint32_t *idx,
                    gpo_eval *ev)
{
    gpo_ksession *ks = k->ks;
    for (int32_t i = 0; i < k->nargs; i++) {
        const gpo_targ *a = k->args[i];
        if (a->kind != GPO_ARG_BUFFER) {
            int32_t s = k_bind_scalar(sc, p->kernel, a, idx, ev);
            if (s != GPO_CAND_OK)
                return s;
            continue;
        }
        gpo_rt_buf *b = a->fixed ? k->fixed[i].buf : p->own[i].buf;
        gpo_detail_clear();
        if (ks->ops->kernel_set_buffer(ks->rt, p->kernel, a->index, b) != GPUOPT_OK)
            return refuse(ev, GPO_CAND_LAUNCH_FAILED, "setting buffer argument %u: %s", a->index,
                          gpo_detail_get());
    }
    return GPO_CAND_OK;
}

static int32_t k_prepare(gpo_subject_ctx *sc, const gpuopt_point *c, gpo_prep **out, gpo_eval *ev)
{
    const gpo_kernel_subject *t = sc->def;
    *out = NULL;
    if (((gpo_krun *)sc->state)->ks->isolated && gpo_worker_dead(((gpo_krun *)sc->state)->ks->rt) &&
        replace_worker(sc) != GPO_CAND_OK)
        return GPO_FATAL;
    gpo_krun *k = sc->state;
    gpo_ksession *ks = k->ks;
    const uint32_t *idx = gpo_point_indices(c);
    char *opts = NULL, *log = NULL;
    int32_t s = GPO_CAND_OK;
    kprep *p = calloc(1, sizeof *p);
    if (!p)
        return end_run(sc, GPUOPT_ERR_NO_MEMORY, "out of memory preparing a candidate");
    p->config = c;
    p->k = k;
    k->refs++;
    p->nargs = k->nargs;
    p->dims = (uint32_t)t->k.geo.dims;
    p->has_local = t->k.geo.has_local;
    if (k_geometry(sc, &t->k.geo, idx, p->global, p->local, ev) != 0) {
        s = GPO_CAND_INVALID;
        goto out;
    }
    if ((s = own_buffers(sc, k, p, idx, ev)) != GPO_CAND_OK)
        goto out;
    if (!(opts = k_options(t, c))) {
        s = end_run(sc, GPUOPT_ERR_NO_MEMORY, "out of memory for build options");
        goto out;
    }
    gpuopt_status st =
        gpo_progcache_get(ks->pc, t->k.source, opts, &p->prog, &log, &ev->compile_ms);
    if (st == GPUOPT_ERR_NO_MEMORY) {
        sc->fatal = st;
        s = GPO_FATAL;
        goto out;
    }
    if (st == GPUOPT_ERR_FAULT) {
        s = fault_ends_run(sc, k, c, "loading its program", ev);
        goto out;
    }
    if (st != GPUOPT_OK) {
        if (st == GPUOPT_ERR_BUILD)
            log_excerpt(log, ev->msg, sizeof ev->msg);
        else
            gpo_snprintf(ev->msg, sizeof ev->msg, "build failed: %s", gpo_detail_get());
        s = GPO_CAND_COMPILE_FAILED;
        goto out;
    }
    gpo_detail_clear();
    if ((st = ks->ops->kernel_create(ks->rt, p->prog, t->k.entry, &p->kernel)) ==
        GPUOPT_ERR_FAULT) {
        s = fault_ends_run(sc, k, c, "finding its kernel", ev);
        goto out;
    }
    if (st != GPUOPT_OK && !k->entry_found &&
        (sc->fatal = no_entry(t, t->k.source, t->k.entry, "kernel")) != GPUOPT_OK) {
        s = GPO_FATAL; /* no candidate can have it: nothing more is built */
        goto out;
    }
    if (st != GPUOPT_OK) {
        s = refuse(ev, GPO_CAND_COMPILE_FAILED, "kernel %s: %s", t->k.entry, gpo_detail_get());
        goto out;
    }
    k->entry_found = 1;
    size_t max = 0;
    if (p->has_local && ks->ops->kernel_max_group &&
        ks->ops->kernel_max_group(ks->rt, p->kernel, &max) == GPUOPT_OK && max > 0 &&
        p->local[0] * p->local[1] * p->local[2] > max) {
        s = refuse(ev, GPO_CAND_INVALID,
                   "work-group of %zu items is over this kernel's limit of %zu on the device",
                   p->local[0] * p->local[1] * p->local[2], max);
        goto out;
    }
    s = bind(sc, k, p, idx, ev);
out:
    free(opts);
    free(log);
    if (s != GPO_CAND_OK) {
        k_release(sc, (gpo_prep *)p);
        return s;
    }
    *out = (gpo_prep *)p;
    return GPO_CAND_OK;
}

/* The buffer of output argument i for this candidate. */
static const gpo_kbuf *outbuf(const gpo_krun *k, const kprep *p, int32_t i)
{
    return k->args[i]->fixed ? &k->fixed[i] : &p->own[i];
}

static int32_t k_run(gpo_subject_ctx *sc, gpo_prep *prep, double *ns, gpo_eval *ev)
{
    kprep *p = (kprep *)prep;
    const gpo_krun *k = p->k;
    gpo_ksession *ks = k->ks;
    gpo_detail_clear();
    /* pre_run: outputs start from their initial content every time. */
    for (int32_t i = 0; i < k->nargs; i++) {
        if (k->args[i]->kind != GPO_ARG_BUFFER || !k->args[i]->is_output)
            continue;
        const gpo_kbuf *b = outbuf(k, p, i);
        gpuopt_status wst = ks->ops->buffer_write(ks->rt, b->buf, 0, b->image, b->bytes);
        if (wst == GPUOPT_ERR_FAULT)
            return fault_ends_run(sc, k, p->config, "resetting its outputs", ev);
        if (wst != GPUOPT_OK)
            return refuse(ev, GPO_CAND_LAUNCH_FAILED, "resetting output %d: %s", (int)i,
                          gpo_detail_get());
    }
    gpuopt_status st =
        k_launch(ks, p->kernel, p->dims, p->global, p->has_local ? p->local : NULL, ns);
    if (st == GPUOPT_ERR_UNSUPPORTED) {
        /* Not this candidate's fault: the runtime runs no kernel at all (a
         * driver without a GPU behind it). Every candidate would fail the
         * same way, so the run stops here and says so. */
        const gpuopt_device_info *d = &T(sc)->dev->info;
        sc->fatal = gpo_fail(st, "the tuner cannot run kernels on device %s (%s): %s", d->id,
                             d->name, gpo_detail_get());
        return GPO_FATAL;
    }
    if (st == GPUOPT_ERR_FAULT)
        return fault_ends_run(sc, k, p->config, "running it", ev);
    if (st == GPUOPT_ERR_TIMEOUT && k->ks->isolated) {
        /* The worker was stopped mid-kernel: the next point gets a new one. */
        gpo_strlcpy(ev->msg, gpo_detail_get(), sizeof ev->msg);
        return GPO_CAND_TIMEOUT;
    }
    if (st != GPUOPT_OK)
        return refuse(ev, GPO_CAND_LAUNCH_FAILED, "launch failed: %s", gpo_detail_get());
    return GPO_CAND_OK;
}

static int32_t k_check(gpo_subject_ctx *sc, gpo_prep *prep, gpo_eval *ev)
{
    kprep *p = (kprep *)prep;
    const gpo_krun *k = p->k;
    gpo_ksession *ks = k->ks;
    for (int32_t i = 0; i < k->nargs; i++) {
        if (!k->expect[i])
            continue;
        const gpo_kbuf *b = outbuf(k, p, i);
        gpo_detail_clear();
        gpuopt_status rst = ks->ops->buffer_read(ks->rt, b->buf, 0, k->scratch, b->bytes);
        if (rst == GPUOPT_ERR_FAULT)
            return fault_ends_run(sc, k, p->config, "reading its outputs", ev);
        if (rst != GPUOPT_OK)
            return refuse(ev, GPO_CAND_LAUNCH_FAILED, "reading output %d: %s", (int)i,
                          gpo_detail_get());
        gpo_mismatch m;
        if (!gpo_validate(k->scratch, k->expect[i], k->expect_count[i], k->args[i]->type,
                          T(sc)->abs_tol, T(sc)->rel_tol, &m)) {
            gpo_validate_describe(&m, (uint32_t)i, k->expect_count[i], T(sc)->abs_tol,
                                  T(sc)->rel_tol, ev->msg, sizeof ev->msg);
            return GPO_CAND_WRONG_RESULT;
        }
    }
    return GPO_CAND_OK;
}

const gpo_subject_ops gpo_subject_kernel = {
    .kind = "kernel",
    .constrain = kernel_constrain,
    .setup = kernel_setup,
    .teardown = kernel_teardown,
    .prefetch = k_prefetch,
    .prepare = k_prepare,
    .run = k_run,
    .check = k_check,
    .release = k_release,
};
