/* The kernel subject, run side: the route whose runtime compiles the
 * kernel's language, the device session (kept by the tuner, with its
 * compiled programs, across runs), the device limits as constraints, and
 * each run's arguments and reference outputs. One candidate's build, bind,
 * run and check are in subject_kernel_cand.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"
#include "tune/subject_kernel.h"
#include "tune/validate.h"

const gpo_runtime_ops *(*gpo_tuner_ops_hook)(const gpo_runtime_ops *real);

static const char *const lang_names[] = {NULL, "opencl-c", "cuda", "hip"};

const char *gpo_language_runtime_name(int32_t language)
{
    return language >= GPUOPT_LANG_OPENCL_C && language <= GPUOPT_LANG_HIP ? lang_names[language]
                                                                           : NULL;
}

const gpo_route *gpo_kernel_route(const gpuopt_tuner *t, gpuopt_status *why)
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
                            "device %s (%s): its %s backend is unavailable (gpuopt_backend_get "
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

void gpo_ksession_free(gpo_ksession *ks)
{
    if (!ks)
        return;
    /* The worker stops before the session it builds on closes. */
    gpo_progcache_destroy(ks->pc);
    if (ks->rt)
        ks->ops->close(ks->rt);
    free(ks);
}

static gpuopt_status session(gpuopt_tuner *t, gpo_ksession **out)
{
    if (t->ks && t->ks->language == t->k.language) {
        *out = t->ks;
        return GPUOPT_OK;
    }
    gpo_ksession_free(t->ks);
    t->ks = NULL;
    gpuopt_status st = GPUOPT_OK;
    const gpo_route *route = gpo_kernel_route(t, &st);
    if (!route)
        return st;
    gpo_ksession *ks = calloc(1, sizeof *ks);
    if (!ks)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory opening a device session");
    const gpo_runtime_ops *real = route->backend->runtime;
    ks->ops = gpo_tuner_ops_hook ? gpo_tuner_ops_hook(real) : real;
    ks->route = route;
    ks->language = t->k.language;
    gpo_detail_clear();
    st = ks->ops->open(route->backend_state, route, &ks->rt);
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
        gpo_ksession_free(ks);
        return st;
    }
    t->ks = *out = ks;
    return GPUOPT_OK;
}

/* ---- device limits ---------------------------------------------------------- */

/* Adds "(a) * (b) ... <= limit" to the run's space. */
static gpuopt_status limit(gpo_trun *r, const gpo_expr *const *parts, int n, uint64_t max,
                           const char *what)
{
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    for (int i = 0; i < n; i++)
        gpo_sbuf_appendf(&b, "%s(%s)", i ? " * " : "", gpo_expr_source(parts[i]));
    gpo_sbuf_appendf(&b, " <= %llu", (unsigned long long)max);
    char *text = gpo_sbuf_take(&b);
    if (!text)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory adding a device limit");
    gpuopt_status st = gpuopt_space_add_constraint(r->space, text);
    if (st != GPUOPT_OK)
        st = gpo_fail(st, "the device's %s limit as a constraint ('%s'): %s", what, text,
                      gpo_detail_get());
    else
        gpo_log_debug(&r->t->ctx->log, "tuner: device limit added as a constraint: %s", text);
    free(text);
    return st;
}

/* The device's work-group and local-memory limits become constraints of
 * the run's space, so configurations past them are never built and cost
 * no budget. (The kernel's own limit, known only once built, is checked
 * per candidate: INVALID.) */
static gpuopt_status kernel_constrain(gpo_trun *r)
{
    const gpuopt_tuner *t = r->t;
    gpuopt_status st = GPUOPT_OK;
    const gpo_route *route = gpo_kernel_route(t, &st);
    if (!route)
        return st;
    if (t->k.geo.dims == 0)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "the kernel has no geometry (gpuopt_tuner_set_geometry)");
    const gpuopt_device_info *info = &route->info;
    if (t->k.geo.has_local && info->max_threads_per_block > 0)
        st = limit(r, (const gpo_expr *const *)t->k.geo.local, t->k.geo.dims,
                   (uint64_t)info->max_threads_per_block, "work-group size");
    if (st == GPUOPT_OK && t->k.lmem && info->shared_mem_per_block > 0)
        st = limit(r, (const gpo_expr *const *)&t->k.lmem, 1, info->shared_mem_per_block,
                   "local memory");
    return st;
}

/* ---- shared helpers --------------------------------------------------------- */

char *gpo_kernel_options(const gpuopt_tuner *t, const gpuopt_config *c)
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

void gpo_kernel_image(const gpuopt_tuner *t, const gpo_targ *a, void *image, size_t count)
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

int gpo_kernel_geometry(gpo_trun *r, const gpo_geometry *g, const uint32_t *idx, size_t global[3],
                        size_t local[3], gpo_eval *ev)
{
    for (int i = 0; i < 3; i++)
        global[i] = local[i] = 1;
    for (int i = 0; i < g->dims; i++) {
        int64_t gv = 0, lv = 1;
        if (gpo_space_eval(r->space, idx, g->global[i], &gv) != GPO_EXPR_OK ||
            (g->has_local && gpo_space_eval(r->space, idx, g->local[i], &lv) != GPO_EXPR_OK)) {
            gpo_snprintf(ev->msg, sizeof ev->msg, "the geometry of dimension %d is undefined", i);
            return -1;
        }
        if (gv < 1 || lv < 1 || (uint64_t)gv > SIZE_MAX / 2 || (uint64_t)lv > SIZE_MAX / 2) {
            gpo_snprintf(ev->msg, sizeof ev->msg,
                         "dimension %d has global size %lld and local size %lld (positive "
                         "values needed)",
                         i, (long long)gv, (long long)lv);
            return -1;
        }
        global[i] = (size_t)((gv + lv - 1) / lv * lv);
        local[i] = (size_t)lv;
    }
    return 0;
}

gpuopt_status gpo_kernel_launch(gpo_ksession *ks, gpo_rt_kernel *k, uint32_t dims,
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

int32_t gpo_kernel_bind_scalar(gpo_trun *r, gpo_rt_kernel *k, const gpo_targ *a,
                               const uint32_t *idx, gpo_eval *ev)
{
    gpo_ksession *ks = r->t->ks;
    int64_t v = 0;
    double d = a->value;
    if (a->kind == GPO_ARG_SCALAR) {
        if (gpo_space_eval(r->space, idx, a->expr, &v) != GPO_EXPR_OK) {
            gpo_snprintf(ev->msg, sizeof ev->msg, "scalar argument %u ('%s') is undefined",
                         a->index, gpo_expr_source(a->expr));
            return GPO_CAND_INVALID;
        }
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
    if (!range_ok) {
        gpo_snprintf(ev->msg, sizeof ev->msg, "scalar argument %u ('%s') is %lld, outside %s",
                     a->index, gpo_expr_source(a->expr), (long long)v, gpo_elem_name(a->type));
        return GPO_CAND_INVALID;
    }
    gpo_detail_clear();
    if (ks->ops->kernel_set_scalar(ks->rt, k, a->index, &u, size) != GPUOPT_OK) {
        gpo_snprintf(ev->msg, sizeof ev->msg, "setting scalar argument %u: %s", a->index,
                     gpo_detail_get());
        return GPO_CAND_LAUNCH_FAILED;
    }
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
    free(k);
}

/* Arguments by index; they must be numbered 0 .. n-1. */
static gpuopt_status order_args(const gpuopt_tuner *t, gpo_krun *k)
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
static gpuopt_status make_fixed(gpo_trun *r, gpo_krun *k, const gpo_targ *a, size_t count)
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
    gpo_kernel_image(r->t, a, b->image, count);
    gpo_detail_clear();
    gpuopt_status st = ks->ops->buffer_alloc(ks->rt, b->bytes, &b->buf);
    if (st == GPUOPT_OK)
        st = ks->ops->buffer_write(ks->rt, b->buf, 0, b->image, b->bytes);
    if (st != GPUOPT_OK)
        return gpo_fail(st, "buffer argument %u (%zu bytes) on the device: %s", a->index, b->bytes,
                        gpo_detail_get());
    return GPUOPT_OK;
}

/* Runs the reference kernel once; its outputs become the expected values
 * (outputs with reference data keep that). */
static gpuopt_status run_reference(gpo_trun *r, gpo_krun *k)
{
    const gpuopt_tuner *t = r->t;
    gpo_ksession *ks = k->ks;
    gpo_rt_prog *prog = NULL;
    gpo_rt_kernel *kern = NULL;
    char *log = NULL;
    gpo_eval ev;
    memset(&ev, 0, sizeof ev);
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
        st = gpo_fail(st, "the reference kernel: %s", gpo_detail_get());
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
        } else if (gpo_kernel_bind_scalar(r, kern, a, idx, &ev) != GPO_CAND_OK) {
            st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "the reference kernel: %s", ev.msg);
        }
    }
    if (st != GPUOPT_OK)
        goto out;
    if (gpo_kernel_geometry(r, &t->k.ref_geo, idx, global, local, &ev) != 0) {
        st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "the reference kernel: %s", ev.msg);
        goto out;
    }
    gpo_detail_clear();
    st = gpo_kernel_launch(ks, kern, (uint32_t)t->k.ref_geo.dims, global,
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

static gpuopt_status kernel_setup(gpo_trun *r)
{
    gpuopt_tuner *t = r->t;
    gpo_ksession *ks = NULL;
    gpuopt_status st = session(t, &ks);
    if (st != GPUOPT_OK)
        return st;
    gpo_krun *k = calloc(1, sizeof *k);
    if (!k)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory setting up a kernel");
    k->ks = ks;
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
        if (gpo_space_eval(r->space, idx, a->expr, &count) != GPO_EXPR_OK || count < 1 ||
            (uint64_t)count > (SIZE_MAX >> 4) / gpo_elem_size(a->type)) {
            st = gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                          "buffer argument %u: its count '%s' is undefined or not positive with "
                          "the current sizes",
                          a->index, gpo_expr_source(a->expr));
            break;
        }
        st = make_fixed(r, k, a, (size_t)count);
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
        st = run_reference(r, k);
    r->validated = 0;
    for (int32_t i = 0; i < k->nargs; i++)
        r->validated |= k->expect[i] != NULL;
    if (st == GPUOPT_OK && !r->validated)
        gpo_log_info(&t->ctx->log,
                     "tuner: kernel %s has no reference: candidates are not "
                     "validated",
                     t->k.entry);
out:
    if (st != GPUOPT_OK) {
        krun_free(k);
        return st;
    }
    r->subject = k;
    return GPUOPT_OK;
}

static void kernel_teardown(gpo_trun *r)
{
    krun_free(r->subject);
    r->subject = NULL;
}

const gpo_subject_ops gpo_subject_kernel = {
    .kind = "kernel",
    .constrain = kernel_constrain,
    .setup = kernel_setup,
    .teardown = kernel_teardown,
    .prefetch = gpo_kernel_prefetch,
    .prepare = gpo_kernel_prepare,
    .run = gpo_kernel_run,
    .check = gpo_kernel_check,
    .release = gpo_kernel_release,
};
