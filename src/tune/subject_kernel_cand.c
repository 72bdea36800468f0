/* The kernel subject, one candidate: its program (from the program cache,
 * built ahead when the runtime allows), its kernel with every argument
 * bound, buffers whose size depends on the parameters, a run (outputs
 * reset first) and the element-by-element check of its outputs. */
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"
#include "tune/subject_kernel.h"
#include "tune/validate.h"

typedef struct kprep {
    const gpuopt_config *config;
    gpo_rt_prog *prog;
    gpo_rt_kernel *kernel;
    uint32_t dims;
    size_t global[3], local[3];
    int has_local;
    gpo_kbuf *own; /* per index: buffers whose count reads a parameter */
    int32_t nargs;
} kprep;

void gpo_kernel_prefetch(gpo_trun *r, const gpuopt_config *c)
{
    gpo_ksession *ks = r->t->ks;
    char *opts = gpo_kernel_options(r->t, c);
    /* A prefetch that cannot be queued only loses the overlap. */
    if (opts)
        gpo_progcache_prefetch(ks->pc, r->t->k.source, opts);
    free(opts);
}

void gpo_kernel_release(gpo_trun *r, gpo_prep *prep)
{
    kprep *p = (kprep *)prep;
    if (!p)
        return;
    gpo_ksession *ks = r->t->ks;
    if (p->kernel)
        ks->ops->kernel_free(ks->rt, p->kernel);
    gpo_progcache_release(ks->pc, p->prog);
    for (int32_t i = 0; p->own && i < p->nargs; i++) {
        if (p->own[i].buf)
            ks->ops->buffer_free(ks->rt, p->own[i].buf);
        free(p->own[i].image);
    }
    free(p->own);
    free(p);
}

/* The start of a build log, on one line per line kept. */
static void log_excerpt(const char *log, char *out, size_t cap)
{
    gpo_snprintf(out, cap, "build failed: %s", log && *log ? log : "(the compiler gave no log)");
}

/* Buffers whose count reads a parameter, made for this candidate. */
static int32_t own_buffers(gpo_trun *r, const gpo_krun *k, kprep *p, const uint32_t *idx,
                           gpo_eval *ev)
{
    gpo_ksession *ks = k->ks;
    for (int32_t i = 0; i < k->nargs; i++) {
        const gpo_targ *a = k->args[i];
        if (a->kind != GPO_ARG_BUFFER || a->fixed)
            continue;
        if (!p->own && !(p->own = calloc((size_t)k->nargs, sizeof *p->own))) {
            r->fatal = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory for a candidate's buffers");
            return GPO_FATAL;
        }
        gpo_kbuf *b = &p->own[i];
        int64_t count = 0;
        if (gpo_space_eval(r->space, idx, a->expr, &count) != GPO_EXPR_OK || count < 1 ||
            (uint64_t)count > (SIZE_MAX >> 4) / gpo_elem_size(a->type)) {
            gpo_snprintf(ev->msg, sizeof ev->msg,
                         "buffer argument %u: count '%s' is undefined or not positive", a->index,
                         gpo_expr_source(a->expr));
            return GPO_CAND_INVALID;
        }
        b->count = (size_t)count;
        b->bytes = b->count * gpo_elem_size(a->type);
        if (!(b->image = malloc(b->bytes))) {
            r->fatal = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory for argument %u (%zu bytes)",
                                a->index, b->bytes);
            return GPO_FATAL;
        }
        gpo_kernel_image(r->t, a, b->image, b->count);
        gpo_detail_clear();
        if (ks->ops->buffer_alloc(ks->rt, b->bytes, &b->buf) != GPUOPT_OK ||
            ks->ops->buffer_write(ks->rt, b->buf, 0, b->image, b->bytes) != GPUOPT_OK) {
            gpo_snprintf(ev->msg, sizeof ev->msg, "buffer argument %u (%zu bytes): %s", a->index,
                         b->bytes, gpo_detail_get());
            return GPO_CAND_INVALID;
        }
    }
    return GPO_CAND_OK;
}

static int32_t bind(gpo_trun *r, const gpo_krun *k, kprep *p, const uint32_t *idx, gpo_eval *ev)
{
    gpo_ksession *ks = k->ks;
    for (int32_t i = 0; i < k->nargs; i++) {
        const gpo_targ *a = k->args[i];
        if (a->kind != GPO_ARG_BUFFER) {
            int32_t s = gpo_kernel_bind_scalar(r, p->kernel, a, idx, ev);
            if (s != GPO_CAND_OK)
                return s;
            continue;
        }
        gpo_rt_buf *b = a->fixed ? k->fixed[i].buf : p->own[i].buf;
        gpo_detail_clear();
        if (ks->ops->kernel_set_buffer(ks->rt, p->kernel, a->index, b) != GPUOPT_OK) {
            gpo_snprintf(ev->msg, sizeof ev->msg, "setting buffer argument %u: %s", a->index,
                         gpo_detail_get());
            return GPO_CAND_LAUNCH_FAILED;
        }
    }
    return GPO_CAND_OK;
}

int32_t gpo_kernel_prepare(gpo_trun *r, const gpuopt_config *c, gpo_prep **out, gpo_eval *ev)
{
    const gpuopt_tuner *t = r->t;
    const gpo_krun *k = r->subject;
    gpo_ksession *ks = k->ks;
    const uint32_t *idx = gpo_point_indices(c);
    char *opts = NULL, *log = NULL;
    int32_t s = GPO_CAND_OK;
    *out = NULL;
    kprep *p = calloc(1, sizeof *p);
    if (!p) {
        r->fatal = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory preparing a candidate");
        return GPO_FATAL;
    }
    p->config = c;
    p->nargs = k->nargs;
    p->dims = (uint32_t)t->k.geo.dims;
    p->has_local = t->k.geo.has_local;
    if (gpo_kernel_geometry(r, &t->k.geo, idx, p->global, p->local, ev) != 0) {
        s = GPO_CAND_INVALID;
        goto out;
    }
    if ((s = own_buffers(r, k, p, idx, ev)) != GPO_CAND_OK)
        goto out;
    if (!(opts = gpo_kernel_options(t, c))) {
        r->fatal = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory for build options");
        s = GPO_FATAL;
        goto out;
    }
    gpuopt_status st =
        gpo_progcache_get(ks->pc, t->k.source, opts, &p->prog, &log, &ev->compile_ms);
    if (st == GPUOPT_ERR_NO_MEMORY) {
        r->fatal = st;
        s = GPO_FATAL;
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
    if ((st = ks->ops->kernel_create(ks->rt, p->prog, t->k.entry, &p->kernel)) != GPUOPT_OK) {
        gpo_snprintf(ev->msg, sizeof ev->msg, "kernel %s: %s", t->k.entry, gpo_detail_get());
        s = GPO_CAND_COMPILE_FAILED;
        goto out;
    }
    size_t max = 0;
    if (p->has_local && ks->ops->kernel_max_group &&
        ks->ops->kernel_max_group(ks->rt, p->kernel, &max) == GPUOPT_OK && max > 0 &&
        p->local[0] * p->local[1] * p->local[2] > max) {
        gpo_snprintf(ev->msg, sizeof ev->msg,
                     "work-group of %zu items is over this kernel's limit of %zu on the device",
                     p->local[0] * p->local[1] * p->local[2], max);
        s = GPO_CAND_INVALID;
        goto out;
    }
    s = bind(r, k, p, idx, ev);
out:
    free(opts);
    free(log);
    if (s != GPO_CAND_OK) {
        gpo_kernel_release(r, (gpo_prep *)p);
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

int32_t gpo_kernel_run(gpo_trun *r, gpo_prep *prep, double *ns, gpo_eval *ev)
{
    const gpo_krun *k = r->subject;
    kprep *p = (kprep *)prep;
    gpo_ksession *ks = k->ks;
    gpo_detail_clear();
    /* pre_run: outputs start from their initial content every time. */
    for (int32_t i = 0; i < k->nargs; i++) {
        if (k->args[i]->kind != GPO_ARG_BUFFER || !k->args[i]->is_output)
            continue;
        const gpo_kbuf *b = outbuf(k, p, i);
        if (ks->ops->buffer_write(ks->rt, b->buf, 0, b->image, b->bytes) != GPUOPT_OK) {
            gpo_snprintf(ev->msg, sizeof ev->msg, "resetting output %d: %s", (int)i,
                         gpo_detail_get());
            return GPO_CAND_LAUNCH_FAILED;
        }
    }
    gpuopt_status st =
        gpo_kernel_launch(ks, p->kernel, p->dims, p->global, p->has_local ? p->local : NULL, ns);
    if (st == GPUOPT_ERR_UNSUPPORTED) {
        /* Not this candidate's fault: the runtime runs no kernel at all (a
         * driver without a GPU behind it). Every candidate would fail the
         * same way, so the run stops here and says so. */
        const gpuopt_device_info *d = &r->t->dev->info;
        r->fatal = gpo_fail(st, "the tuner cannot run kernels on device %s (%s): %s", d->id,
                            d->name, gpo_detail_get());
        return GPO_FATAL;
    }
    if (st != GPUOPT_OK) {
        gpo_snprintf(ev->msg, sizeof ev->msg, "launch failed: %s", gpo_detail_get());
        return GPO_CAND_LAUNCH_FAILED;
    }
    return GPO_CAND_OK;
}

int32_t gpo_kernel_check(gpo_trun *r, gpo_prep *prep, gpo_eval *ev)
{
    const gpo_krun *k = r->subject;
    kprep *p = (kprep *)prep;
    gpo_ksession *ks = k->ks;
    for (int32_t i = 0; i < k->nargs; i++) {
        if (!k->expect[i])
            continue;
        const gpo_kbuf *b = outbuf(k, p, i);
        gpo_detail_clear();
        if (ks->ops->buffer_read(ks->rt, b->buf, 0, k->scratch, b->bytes) != GPUOPT_OK) {
            gpo_snprintf(ev->msg, sizeof ev->msg, "reading output %d: %s", (int)i,
                         gpo_detail_get());
            return GPO_CAND_LAUNCH_FAILED;
        }
        gpo_mismatch m;
        if (!gpo_validate(k->scratch, k->expect[i], k->expect_count[i], k->args[i]->type,
                          r->t->abs_tol, r->t->rel_tol, &m)) {
            gpo_validate_describe(&m, (uint32_t)i, k->expect_count[i], r->t->abs_tol, r->t->rel_tol,
                                  ev->msg, sizeof ev->msg);
            return GPO_CAND_WRONG_RESULT;
        }
    }
    return GPO_CAND_OK;
}
