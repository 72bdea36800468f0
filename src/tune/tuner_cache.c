/* The tuner and the tuning cache (src/cache/cache.h):
 *
 * - the hard key of a run: kind, the backend of the route the work runs
 *   on, the device's architecture and compute units, a hash of the
 *   subject's definition (source, entry, language, geometry, arguments,
 *   reference, tolerance), a hash of the build options, the space hash of
 *   the space as the user made it, and the workload (problem sizes,
 *   argument types, the user's key);
 * - soft fields: the route's driver and runtime versions, this library's
 *   version, the device name;
 * - one open cache shared by the tuners of a context and device;
 * - configurations to and from the cache's {NAME: value} objects.
 * Hits, verification and resuming are in tuner_hit.c. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"
#include "tune/tuner.h"
#include "tune/validate.h"

/* One open cache per (context, device), shared by its tuners: a new
 * tuner's first hit then costs a lookup in the index already in memory,
 * not a read of the whole journal. Tuners die before their context, so an
 * entry is gone (its count back to 0) before the context's address can be
 * reused. */
typedef struct shared_cache {
    const gpuopt_context *ctx;
    const gpuopt_device *dev;
    gpo_cache *cache;
    int32_t users;
} shared_cache;

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static shared_cache *shared;
static int32_t nshared, capshared;

static gpo_cache *shared_acquire(gpuopt_tuner *t)
{
    gpo_cache *c = NULL;
    pthread_mutex_lock(&shared_lock);
    for (int32_t i = 0; i < nshared; i++)
        if (shared[i].ctx == t->ctx && shared[i].dev == t->dev) {
            shared[i].users++;
            c = shared[i].cache;
            goto out;
        }
    if (nshared == capshared) {
        int32_t cap = capshared ? capshared * 2 : 4;
        shared_cache *a = realloc(shared, (size_t)cap * sizeof *a);
        if (!a)
            goto out;
        shared = a;
        capshared = cap;
    }
    /* The cache never fails its host: without one, runs are uncached. */
    if (gpo_cache_open_device(t->ctx, t->dev, NULL, &c) != GPUOPT_OK) {
        gpo_log_warn(&t->ctx->log, "tuner: no tuning cache: %s", gpo_detail_get());
        goto out;
    }
    shared[nshared++] = (shared_cache){t->ctx, t->dev, c, 1};
out:
    pthread_mutex_unlock(&shared_lock);
    return c;
}

void gpo_tuner_cache_release(gpuopt_tuner *t)
{
    if (!t->cache)
        return;
    pthread_mutex_lock(&shared_lock);
    for (int32_t i = 0; i < nshared; i++)
        if (shared[i].cache == t->cache && --shared[i].users == 0) {
            gpo_cache_close(shared[i].cache);
            shared[i] = shared[--nshared];
            break;
        }
    if (nshared == 0) {
        free(shared);
        shared = NULL;
        capshared = 0;
    }
    pthread_mutex_unlock(&shared_lock);
    t->cache = NULL;
}

gpo_cache *gpo_tuner_cache(gpuopt_tuner *t)
{
    if (!t->cache_tried) {
        t->cache_tried = 1;
        t->cache = shared_acquire(t);
    }
    return t->cache;
}

/* ---- keys ------------------------------------------------------------------ */

static void geometry_text(gpo_sbuf *b, const char *name, const gpo_geometry *g)
{
    gpo_sbuf_appendf(b, "%s", name);
    for (int i = 0; i < g->dims; i++)
        gpo_sbuf_appendf(b, " %s", gpo_expr_text(g->global[i]));
    gpo_sbuf_append(b, " /");
    for (int i = 0; g->has_local && i < g->dims; i++)
        gpo_sbuf_appendf(b, " %s", gpo_expr_text(g->local[i]));
    gpo_sbuf_append(b, g->has_local ? "\n" : " runtime\n");
}

static void hash_into(gpo_sbuf *b, const char *label, const void *data, size_t len)
{
    char h[32];
    gpo_cache_hash_text(data ? data : "", data ? len : 0, h, sizeof h);
    gpo_sbuf_appendf(b, "%s %s", label, h);
}

/* The kernel's definition as text, hashed into key_source; the build
 * options into key_options. Both are kept until a setter changes them. */
static gpuopt_status subject_hashes(gpuopt_tuner *t)
{
    if (t->key_valid)
        return GPUOPT_OK;
    if (t->subject != GPO_SUBJECT_KERNEL) {
        t->key_source[0] = t->key_options[0] = '\0';
        t->key_valid = 1;
        return GPUOPT_OK;
    }
    const gpo_kernel_def *k = &t->k;
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    gpo_sbuf_appendf(&b, "gpuopt-kernel 1\nlanguage %s\nentry %s\n",
                     gpo_language_runtime_name(k->language), k->entry);
    hash_into(&b, "source", k->source, strlen(k->source));
    gpo_sbuf_append(&b, "\n");
    geometry_text(&b, "geometry", &k->geo);
    gpo_sbuf_appendf(&b, "local_memory %s\n", k->lmem ? gpo_expr_text(k->lmem) : "none");
    for (uint32_t ix = 0; ix < GPO_TUNER_MAX_ARGS; ix++) {
        const gpo_targ *a = NULL;
        for (int32_t i = 0; i < k->nargs; i++)
            if (k->args[i].index == ix)
                a = &k->args[i];
        if (!a)
            continue;
        gpo_sbuf_appendf(&b, "arg %u %s ", ix, gpo_elem_name(a->type));
        if (a->kind == GPO_ARG_SCALAR_F64) {
            gpo_sbuf_appendf(&b, "value %.17g\n", a->value);
            continue;
        }
        if (a->kind == GPO_ARG_SCALAR) {
            gpo_sbuf_appendf(&b, "scalar %s\n", gpo_expr_text(a->expr));
            continue;
        }
        static const char *const inits[] = {"", "random", "zeros", "constant", "data"};
        gpo_sbuf_appendf(&b, "buffer %s init %s", gpo_expr_text(a->expr), inits[a->init]);
        if (a->init == GPUOPT_INIT_CONSTANT)
            gpo_sbuf_appendf(&b, " %.17g", a->value);
        if (a->init == GPUOPT_INIT_DATA)
            hash_into(&b, "", a->data, a->data_bytes);
        gpo_sbuf_appendf(&b, " output %d", a->is_output);
        if (a->ref)
            hash_into(&b, " expected", a->ref, a->ref_bytes);
        gpo_sbuf_append(&b, "\n");
    }
    if (k->ref_source) {
        gpo_sbuf_appendf(&b, "reference %s ", k->ref_entry);
        hash_into(&b, "source", k->ref_source, strlen(k->ref_source));
        hash_into(&b, " options", k->ref_options, strlen(k->ref_options));
        gpo_sbuf_append(&b, "\n");
        geometry_text(&b, "reference_geometry", &k->ref_geo);
    }
    gpo_sbuf_appendf(&b, "tolerance %.17g %.17g\n", t->abs_tol, t->rel_tol);
    char *text = gpo_sbuf_take(&b);
    if (!text)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory making a cache key");
    gpo_cache_hash_text(text, strlen(text), t->key_source, sizeof t->key_source);
    gpo_cache_hash_text(k->options, strlen(k->options), t->key_options, sizeof t->key_options);
    free(text);
    t->key_valid = 1;
    return GPUOPT_OK;
}

static int size_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "K=512;M=512;N=512;types=f32,f32,f32,i32;key=..." */
static char *workload_text(const gpo_trun *r)
{
    const gpuopt_tuner *t = r->t;
    const gpuopt_space *sp = t->space;
    int32_t ns = gpo_space_size_count(sp);
    const char *names[GPO_SPACE_MAX_SIZES];
    for (int32_t i = 0; i < ns; i++)
        names[i] = gpo_space_size_name(sp, i);
    qsort(names, (size_t)ns, sizeof names[0], size_cmp);
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    for (int32_t i = 0; i < ns; i++)
        for (int32_t j = 0; j < ns; j++)
            if (strcmp(gpo_space_size_name(sp, j), names[i]) == 0)
                gpo_sbuf_appendf(&b, "%s%s=%lld", i ? ";" : "", names[i],
                                 (long long)gpo_space_size_values(sp)[j]);
    if (t->subject == GPO_SUBJECT_KERNEL) {
        gpo_sbuf_appendf(&b, "%stypes=", b.len ? ";" : "");
        for (uint32_t ix = 0; ix < GPO_TUNER_MAX_ARGS; ix++)
            for (int32_t i = 0; i < t->k.nargs; i++)
                if (t->k.args[i].index == ix)
                    gpo_sbuf_appendf(&b, "%s%s", ix ? "," : "", gpo_elem_name(t->k.args[i].type));
    }
    if (t->workload_key)
        gpo_sbuf_appendf(&b, "%skey=%s", b.len ? ";" : "", t->workload_key);
    return gpo_sbuf_take(&b);
}

void gpo_tkey_free(gpo_tkey *k)
{
    free(k->workload);
    memset(k, 0, sizeof *k);
}

gpuopt_status gpo_tkey_make(gpo_trun *r)
{
    gpuopt_tuner *t = r->t;
    gpo_tkey *k = &r->key;
    gpo_tkey_free(k);
    gpuopt_status st = subject_hashes(t);
    if (st != GPUOPT_OK)
        return st;
    const gpuopt_device_info *info = &t->dev->info;
    if (t->subject == GPO_SUBJECT_KERNEL) {
        const gpo_route *route = gpo_kernel_route(t, &st);
        if (!route)
            return st;
        info = &route->info;
        gpo_strlcpy(k->backend, route->backend->name, sizeof k->backend);
    } else {
        gpo_strlcpy(k->backend, t->dev->info.backend, sizeof k->backend);
    }
    gpo_cache_device cd;
    gpo_cache_device_from_info(&t->dev->info, &cd);
    gpo_strlcpy(k->arch, cd.arch, sizeof k->arch);
    k->compute_units = cd.compute_units;
    gpo_strlcpy(k->source_hash, t->key_source, sizeof k->source_hash);
    gpo_strlcpy(k->options_hash, t->key_options, sizeof k->options_hash);
    if (!(k->workload = workload_text(r)))
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory making a cache key");
    gpo_strlcpy(k->driver, info->driver_version, sizeof k->driver);
    gpo_strlcpy(k->compiler, info->runtime_version, sizeof k->compiler);
    gpo_strlcpy(k->device_name, t->dev->info.name, sizeof k->device_name);
    k->key.kind = r->ops->kind;
    k->key.backend = k->backend;
    k->key.arch = k->arch;
    k->key.compute_units = k->compute_units;
    k->key.source_hash = k->source_hash;
    k->key.options_hash = k->options_hash;
    k->key.space_hash = t->space_hash;
    k->key.workload = k->workload;
    k->soft.driver = k->driver;
    k->soft.compiler = k->compiler;
    k->soft.library = NULL;
    k->soft.device_name = k->device_name;
    /* The key is made even when unused: results show the workload. */
    if (t->cache_mode == GPUOPT_CACHE_OFF)
        return GPUOPT_OK;
    if (t->subject == GPO_SUBJECT_CALLBACK && !t->workload_key) {
        gpo_log_info(&t->ctx->log, "tuner: a callback subject without a workload key is not "
                                   "cached (gpuopt_tuner_set_workload_key names it)");
        return GPUOPT_OK;
    }
    char *canon = NULL;
    uint64_t h;
    if (gpo_cache_key_canon(&k->key, &canon, &h) != GPUOPT_OK) {
        /* A key too long to store (a huge workload key): run uncached. */
        gpo_log_warn(&t->ctx->log, "tuner: not cached: %s", gpo_detail_get());
        return GPUOPT_OK;
    }
    free(canon);
    k->usable = gpo_tuner_cache(t) != NULL;
    return GPUOPT_OK;
}

void gpo_eval_to_cache_stats(const gpo_eval *ev, gpo_cache_stats *out)
{
    int timed = ev->stats.count > 0;
    out->status = ev->status;
    out->runs = timed ? ev->stats.count : 0;
    out->median_ns = timed ? ev->stats.median : -1;
    out->min_ns = timed ? ev->stats.min : -1;
    out->p20_ns = timed ? ev->stats.p20 : -1;
    out->p80_ns = timed ? ev->stats.p80 : -1;
    out->compile_ms = ev->compile_ms;
}
