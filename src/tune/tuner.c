/* The public tuner (include/gpuopt/tune.h): the handle and its settings,
 * the subjects' descriptors, the cache key of its runs, and the two ways
 * to run it, gpuopt_tuner_run (run.h) and gpuopt_tuner_step (online.h).
 * Every setter checks its whole struct at once, says what is accepted and
 * changes nothing when it refuses; nothing is built or opened here.
 *
 * The cache key of a run (src/cache/key.h):
 * - hard: kind, the backend of the route the work runs on, the device's
 *   architecture and compute units, a hash of the subject's definition
 *   (source, entry, language, geometry, arguments, reference, tolerance),
 *   a hash of the build options, the space hash of the space as the user
 *   made it, and the workload (problem sizes, argument types, the user's
 *   key);
 * - soft: the route's driver and runtime versions, this library's version,
 *   the device name.
 * One open cache is shared by the tuners of a context and device. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "select.h"
#include "tune/online.h"
#include "tune/run.h"
#include "tune/subject_callback.h"
#include "tune/subject_kernel.h"
#include "tune/tuner.h"
#include "tune/validate.h"
#include "util/detail.h"
#include "util/strutil.h"

enum { SUBJECT_NONE = 0, SUBJECT_KERNEL = 1, SUBJECT_CALLBACK = 2 };

#define DEFAULT_TIMEOUT_S 10.0
#define DEFAULT_ABS_TOL 1e-4
#define DEFAULT_REL_TOL 1e-4
#define MAX_ELEMENTS ((int64_t)1 << 40)

/* The key of a run, and everything it points into. */
typedef struct tkey {
    int usable; /* 0: this run is not cached (mode OFF, callback without key, ...) */
    char backend[16];
    char arch[96];
    char driver[64], compiler[64], device_name[256];
    char *workload;
    gpo_cache_key key;
    gpo_cache_soft soft;
} tkey;

/* The online search's spec and key outlive one call: kept with it. */
typedef struct online_run {
    tkey k;
    gpo_run_spec spec;
} online_run;

struct gpuopt_tuner {
    gpuopt_context *ctx;
    gpuopt_device *dev;
    gpuopt_space *space; /* the tuner's copy; set_size changes its sizes */
    char space_hash[32]; /* of the copy as created (sizes are not in it) */
    int32_t subject;     /* SUBJECT_* */
    gpo_kernel_subject kern;
    gpo_callback_def cb;
    gpuopt_tuner_settings set; /* its workload_key is workload_key */
    char *workload_key;        /* owned; NULL: none */
    gpuopt_progress_fn progress;
    void *progress_user;
    gpo_cache *cache; /* opened on first use, shared (shared_acquire) */
    int cache_tried;
    /* The subject's hashes for cache keys, computed once per change (the
     * source can be large; a cache hit must stay cheap). */
    int key_valid;
    char key_source[32], key_options[32];
    gpo_online *online;
    online_run online_run; /* the online search's key and spec, which it points into */
    /* Tests: overrides the search's clock (time budgets). */
    uint64_t (*clock_ns)(void *user);
    void *clock_user;
};

/* Entry of a public tuner function: clears the detail, refuses NULL. */
#define CHECK_TUNER(t, fn)                                                                         \
    do {                                                                                           \
        gpo_detail_clear();                                                                        \
        if (!(t))                                                                                  \
            return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: tuner is NULL", fn);                 \
    } while (0)

/* ---- the shared cache --------------------------------------------------------- */

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
static int32_t nshared;
static size_t capshared;

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
    if (gpo_grow(&shared, sizeof *shared, (size_t)nshared, &capshared, 4))
        goto out;
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

static void cache_release(gpuopt_tuner *t)
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

static gpo_cache *tuner_cache(gpuopt_tuner *t)
{
    if (!t->cache_tried) {
        t->cache_tried = 1;
        t->cache = shared_acquire(t);
    }
    return t->cache;
}

/* ---- the handle ---------------------------------------------------------------- */

#define MAX_WORKLOAD_KEY 1024

/* A setter changed what is tuned: ends an online search, forgets the
 * cached key hashes. */
static void changed(gpuopt_tuner *t)
{
    gpo_online_free(t->online);
    t->online = NULL;
    t->key_valid = 0;
}

/* The first released layouts of the tuner's structs (0.2.0): a caller's
 * struct_size below one of these is refused; above, the library reads its
 * own layout only. */
#define FIRST_SIZE(type, last) (offsetof(type, last) + sizeof(((type *)0)->last))
static const size_t first_kernel_desc_size = FIRST_SIZE(gpuopt_kernel_desc, local_memory);
static const size_t first_buffer_desc_size = FIRST_SIZE(gpuopt_buffer_desc, is_output);
static const size_t first_scalar_desc_size = FIRST_SIZE(gpuopt_scalar_desc, value);
static const size_t first_reference_desc_size = FIRST_SIZE(gpuopt_reference_desc, local);
static const size_t first_callback_desc_size = FIRST_SIZE(gpuopt_callback_desc, user);
static const size_t first_settings_size = FIRST_SIZE(gpuopt_tuner_settings, workload_key);

/* Reads the caller's struct `in` (`type` names it in the detail) over
 * `out`, `size` bytes long and holding what the fields the caller's struct
 * lacks mean: zeros for a descriptor, the current values for settings. */
static gpuopt_status read_struct(void *out, size_t size, size_t first, const void *in,
                                 const char *fn, const char *type)
{
    if (!in)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: the %s is NULL", fn, type);
    size_t have;
    memcpy(&have, in, sizeof have);
    if (have < first)
        return gpo_fail_struct_size(fn, type, have, size);
    memcpy(out, in, have < size ? have : size);
    memcpy(out, &size, sizeof size);
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_create(gpuopt_context *ctx, gpuopt_device *device,
                                             const gpuopt_space *space, gpuopt_tuner **out)
{
    gpo_detail_clear();
    if (out)
        *out = NULL;
    if (!ctx || !space || !out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_tuner_create: %s is NULL",
                        !ctx     ? "ctx"
                        : !space ? "space"
                                 : "out");
    if (device && device->ctx != ctx)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "gpuopt_tuner_create: the device belongs to another context");
    gpo_ctx_lock(ctx);
    gpuopt_status st = gpo_ctx_check_fork(ctx);
    if (st == GPUOPT_OK && !device)
        st = gpo_ctx_select(ctx, NULL, &device);
    gpo_ctx_unlock(ctx);
    if (st != GPUOPT_OK)
        return st;

    gpuopt_tuner *t = calloc(1, sizeof *t);
    char *canon = NULL;
    if (!t)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory creating a tuner");
    t->ctx = ctx;
    t->dev = device;
    t->kern.dev = device;
    t->kern.overlap = -1;
    /* The defaults are the engine's, so that a tuner and tier 2 time alike. */
    gpo_timing_settings d;
    gpo_timing_defaults(&d);
    t->set.struct_size = sizeof t->set;
    t->set.strategy = GPUOPT_STRATEGY_AUTO;
    t->set.cache_mode = GPUOPT_CACHE_USE;
    t->set.warmup_ms = d.warmup_ms;
    t->set.repeat_ms = d.repeat_ms;
    t->set.min_runs = d.min_runs;
    t->set.max_runs = d.max_runs;
    t->set.timeout_s = DEFAULT_TIMEOUT_S;
    t->set.abs_tol = DEFAULT_ABS_TOL;
    t->set.rel_tol = DEFAULT_REL_TOL;
    if ((st = gpo_space_clone(space, &t->space)) != GPUOPT_OK)
        goto out;
    /* The hash of the space as the user made it: the device limits a run
     * adds are the device's, already in the key through its architecture. */
    if ((st = gpo_space_canonical(t->space, &canon)) != GPUOPT_OK ||
        (st = gpo_cache_hash_text(canon, strlen(canon), t->space_hash, sizeof t->space_hash)) !=
            GPUOPT_OK)
        goto out;
    *out = t;
    t = NULL;
out:
    free(canon);
    gpuopt_tuner_destroy(t);
    return st;
}

GPUOPT_API void gpuopt_tuner_destroy(gpuopt_tuner *t)
{
    if (!t)
        return;
    gpo_online_free(t->online);
    gpo_kernel_session_close(&t->kern);
    free(t->online_run.k.workload);
    cache_release(t);
    gpo_kernel_def_free(&t->kern.k);
    free(t->workload_key);
    if (t->space)
        gpo_space_unref(t->space);
    free(t);
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_size(gpuopt_tuner *t, const char *name, int64_t value)
{
    CHECK_TUNER(t, "gpuopt_tuner_set_size");
    changed(t);
    return gpuopt_space_set_size(t->space, name, value);
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_callback(gpuopt_tuner *t,
                                                   const gpuopt_callback_desc *callback)
{
    static const char fn[] = "gpuopt_tuner_set_callback";
    CHECK_TUNER(t, fn);
    gpuopt_callback_desc d = {0};
    gpuopt_status st =
        read_struct(&d, sizeof d, first_callback_desc_size, callback, fn, "gpuopt_callback_desc");
    if (st != GPUOPT_OK)
        return st;
    if (!d.run)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: run is NULL", fn);
    if (t->subject == SUBJECT_KERNEL)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s: this tuner already has a kernel subject (a tuner tunes one subject)",
                        fn);
    changed(t);
    t->cb = (gpo_callback_def){d.run, d.pre_run, d.validate, d.user};
    t->subject = SUBJECT_CALLBACK;
    return GPUOPT_OK;
}

/* The timing controller's settings for the public ones: the probe is the
 * first runs timed, no more than may be timed at all. */
static gpo_timing_settings timing_of(const gpuopt_tuner_settings *s)
{
    gpo_timing_settings t;
    gpo_timing_defaults(&t);
    t.warmup_ms = s->warmup_ms;
    t.repeat_ms = s->repeat_ms;
    t.min_runs = s->min_runs;
    t.max_runs = s->max_runs;
    if (s->max_runs >= 1 && s->max_runs < t.probe_runs)
        t.probe_runs = s->max_runs;
    return t;
}

/* Every field of `s`, with the field named in the detail. */
static gpuopt_status check_settings(const gpuopt_tuner_settings *s, const char *fn)
{
    if (!gpo_strategy_name(s->strategy))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s: strategy %d unknown (accepted 0 auto, 1 exhaustive, 2 random, 3 "
                        "annealing, 4 model)",
                        fn, (int)s->strategy);
    if (s->max_evaluations < 0 || s->max_failures < 0 ||
        !(isfinite(s->max_seconds) && s->max_seconds >= 0))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s: max_evaluations %d, max_seconds %g, max_failures %d (each >= 0, "
                        "finite; 0 means no limit)",
                        fn, (int)s->max_evaluations, s->max_seconds, (int)s->max_failures);
    if (s->cache_mode < GPUOPT_CACHE_USE || s->cache_mode > GPUOPT_CACHE_OFF)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s: cache_mode %d unknown (accepted 0 use, 1 refresh, 2 off)", fn,
                        (int)s->cache_mode);
    gpo_timing_settings tm = timing_of(s);
    gpuopt_status st = gpo_timing_check(&tm);
    if (st != GPUOPT_OK)
        return gpo_fail(st, "%s: %s", fn, gpo_detail_get());
    if (!(isfinite(s->timeout_s) && s->timeout_s >= 0))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s: timeout_s %g (finite seconds >= 0; 0 disables)", fn, s->timeout_s);
    if (!(isfinite(s->abs_tol) && s->abs_tol >= 0 && isfinite(s->rel_tol) && s->rel_tol >= 0))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s: abs_tol %g and rel_tol %g (finite values >= 0 accepted)", fn,
                        s->abs_tol, s->rel_tol);
    if (s->isolation < GPUOPT_ISOLATION_AUTO || s->isolation > GPUOPT_ISOLATION_WORKER)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s: isolation %d (GPUOPT_ISOLATION_AUTO 0, IN_PROCESS 1 or WORKER 2)", fn,
                        (int)s->isolation);
    if (s->workload_key && strlen(s->workload_key) > MAX_WORKLOAD_KEY)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "%s: workload_key of %zu characters (at most %d)",
                        fn, strlen(s->workload_key), MAX_WORKLOAD_KEY);
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_get_settings(const gpuopt_tuner *t,
                                                   gpuopt_tuner_settings *settings)
{
    static const char fn[] = "gpuopt_tuner_get_settings";
    gpo_detail_clear();
    if (!settings)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: settings is NULL", fn);
    size_t have = settings->struct_size, n = have < sizeof t->set ? have : sizeof t->set;
    GPO_CHECK_STRUCT_SIZE(fn, gpuopt_tuner_settings, have, first_settings_size);
    memset(settings, 0, n);
    settings->struct_size = have;
    if (!t)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: tuner is NULL", fn);
    memcpy(settings, &t->set, n);
    settings->struct_size = have;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_settings(gpuopt_tuner *t,
                                                   const gpuopt_tuner_settings *settings)
{
    static const char fn[] = "gpuopt_tuner_set_settings";
    CHECK_TUNER(t, fn);
    gpuopt_tuner_settings s = t->set;
    gpuopt_status st =
        read_struct(&s, sizeof s, first_settings_size, settings, fn, "gpuopt_tuner_settings");
    if (st == GPUOPT_OK)
        st = check_settings(&s, fn);
    if (st != GPUOPT_OK)
        return st;
    /* The tuner's own key handed back (as gpuopt_tuner_get_settings gave
     * it, or because the caller's struct has no such field) is kept. */
    char *key = t->workload_key;
    if (s.workload_key != t->workload_key) {
        key = NULL;
        if (s.workload_key && *s.workload_key && !(key = gpo_strdup(s.workload_key)))
            return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory copying a workload key");
    }
    changed(t);
    if (key != t->workload_key) {
        free(t->workload_key);
        t->workload_key = key;
    }
    s.workload_key = key;
    t->set = s;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_progress(gpuopt_tuner *t, gpuopt_progress_fn fn,
                                                   void *user)
{
    CHECK_TUNER(t, "gpuopt_tuner_set_progress");
    t->progress = fn;
    t->progress_user = user;
    return GPUOPT_OK;
}

/* ---- the kernel subject ------------------------------------------------------- */

/* Parses and binds an expression to the tuner's space; `what` names it in
 * errors ("geometry global[1]"). */
static gpuopt_status compile(gpuopt_tuner *t, const char *text, const char *what, gpo_expr **out)
{
    *out = NULL;
    gpo_expr *e = NULL;
    gpuopt_status st = gpo_expr_parse(text, &e);
    if (st != GPUOPT_OK)
        return gpo_fail(st, "%s: %s", what, gpo_detail_get());
    if ((st = gpo_space_bind(t->space, e, what)) != GPUOPT_OK) {
        gpo_expr_destroy(e);
        return st;
    }
    *out = e;
    return GPUOPT_OK;
}

/* The first parameter an expression reads, or NULL when it reads sizes only. */
static const char *reads_param(const gpo_expr *e)
{
    for (int32_t i = 0; e && i < gpo_expr_var_count(e); i++)
        if (gpo_expr_var_kind(e, i) == GPO_EXPR_PARAM)
            return gpo_expr_var_name(e, i);
    return NULL;
}

static int valid_entry(const char *s)
{
    if (!s || !*s || strlen(s) > 255)
        return 0;
    for (const char *p = s; *p; p++)
        if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (p > s && *p >= '0' && *p <= '9')))
            return 0;
    return 1;
}

/* The source and entry of a kernel or reference kernel. */
static gpuopt_status check_source(const char *source, const char *entry, const char *fn)
{
    if (!source || !*source)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: the source is %s", fn,
                        source ? "empty" : "NULL");
    if (!valid_entry(entry))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s: entry '%s' is not a C identifier of 1 to 255 characters", fn,
                        entry ? entry : "(null)");
    return GPUOPT_OK;
}

/* Compiles a geometry; `params_ok` 0 refuses parameters (a reference's). */
static gpuopt_status geometry(gpuopt_tuner *t, const char *const global[3],
                              const char *const local_in[3], int params_ok, const char *fn,
                              gpo_geometry *out)
{
    gpo_geometry g = {0};
    gpuopt_status st = GPUOPT_OK;
    if (!global[0])
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: global[0] is needed", fn);
    while (g.dims < 3 && global[g.dims])
        g.dims++;
    for (int i = g.dims; i < 3; i++)
        if (global[i])
            return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                            "%s: global[%d] is given after an unused global[%d]", fn, i, g.dims);
    /* local[0] NULL: the runtime chooses, and no other local may be given. */
    const char *const *local = local_in[0] ? local_in : NULL;
    g.has_local = local != NULL;
    for (int i = 0; i < 3; i++)
        if (local ? (i < g.dims) != (local[i] != NULL) : local_in[i] != NULL)
            return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                            "%s: local[%d] is %s, but %d dimension%s used (a local size for "
                            "each used dimension, or local[0] NULL)",
                            fn, i, local_in[i] ? "given" : "NULL", g.dims,
                            g.dims > 1 ? "s are" : " is");
    char what[96];
    for (int i = 0; i < g.dims && st == GPUOPT_OK; i++) {
        gpo_snprintf(what, sizeof what, "%s global[%d]", fn, i);
        st = compile(t, global[i], what, &g.global[i]);
        if (st == GPUOPT_OK && local) {
            gpo_snprintf(what, sizeof what, "%s local[%d]", fn, i);
            st = compile(t, local[i], what, &g.local[i]);
        }
        const char *p = NULL;
        if (st == GPUOPT_OK && !params_ok &&
            ((p = reads_param(g.global[i])) || (p = reads_param(g.local[i]))))
            st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                          "%s: dimension %d reads parameter %s; a reference's geometry is of "
                          "problem sizes only",
                          fn, i, p);
    }
    if (st != GPUOPT_OK) {
        gpo_geometry_free(&g);
        return st;
    }
    *out = g;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_kernel(gpuopt_tuner *t, const gpuopt_kernel_desc *kernel)
{
    static const char fn[] = "gpuopt_tuner_set_kernel";
    CHECK_TUNER(t, fn);
    gpuopt_kernel_desc d = {0};
    gpuopt_status st =
        read_struct(&d, sizeof d, first_kernel_desc_size, kernel, fn, "gpuopt_kernel_desc");
    if (st != GPUOPT_OK)
        return st;
    if (t->subject == SUBJECT_CALLBACK)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s: this tuner already has a callback subject (a tuner tunes one "
                        "subject)",
                        fn);
    if ((st = check_source(d.source, d.entry, fn)) != GPUOPT_OK)
        return st;
    if (!gpo_language_runtime_name(d.language))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s: language %d unknown (accepted 1 OpenCL C, 2 CUDA, 3 HIP)", fn,
                        (int)d.language);
    gpo_geometry g;
    if ((st = geometry(t, d.global, d.local, 1, fn, &g)) != GPUOPT_OK)
        return st;
    gpo_expr *lmem = NULL;
    char what[64];
    gpo_snprintf(what, sizeof what, "%s local_memory", fn);
    if (d.local_memory && (st = compile(t, d.local_memory, what, &lmem)) != GPUOPT_OK) {
        gpo_geometry_free(&g);
        return st;
    }
    char *s = gpo_strdup(d.source), *e = gpo_strdup(d.entry);
    char *o = gpo_strdup(d.build_options ? d.build_options : "");
    if (!s || !e || !o) {
        free(s);
        free(e);
        free(o);
        gpo_geometry_free(&g);
        gpo_expr_destroy(lmem);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory copying a kernel");
    }
    changed(t);
    gpo_kernel_def *k = &t->kern.k;
    free(k->source);
    free(k->entry);
    free(k->options);
    gpo_geometry_free(&k->geo);
    gpo_expr_destroy(k->lmem);
    k->source = s;
    k->entry = e;
    k->options = o;
    k->language = d.language;
    k->geo = g;
    k->lmem = lmem;
    t->subject = SUBJECT_KERNEL;
    return GPUOPT_OK;
}

/* The argument slot for `index`, emptied for reuse or appended. */
static gpo_targ *arg_slot(gpuopt_tuner *t, uint32_t index)
{
    for (int32_t i = 0; i < t->kern.k.nargs; i++)
        if (t->kern.k.args[i].index == index)
            return &t->kern.k.args[i];
    gpo_targ *a = realloc(t->kern.k.args, (size_t)(t->kern.k.nargs + 1) * sizeof *a);
    if (!a)
        return NULL;
    t->kern.k.args = a;
    memset(&a[t->kern.k.nargs], 0, sizeof *a);
    a[t->kern.k.nargs].index = index;
    return &a[t->kern.k.nargs++];
}

static gpuopt_status check_arg(uint32_t index, int32_t type, const char *fn)
{
    if (index >= GPO_KERNEL_MAX_ARGS)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "%s: argument index %u (0 to %d accepted)", fn,
                        index, GPO_KERNEL_MAX_ARGS - 1);
    if (!gpo_elem_size(type))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s: element type %d unknown (accepted 1 f32, 2 f64, 3 i32, 4 u32, 5 i64)",
                        fn, (int)type);
    return GPUOPT_OK;
}

/* Evaluates a parameter-free expression with the current sizes. */
static int eval_sizes_only(const gpuopt_tuner *t, const gpo_expr *e, int64_t *v)
{
    uint32_t idx[GPO_SPACE_MAX_PARAMS + 1] = {0};
    return gpo_space_eval(t->space, idx, e, v) == GPO_EXPR_OK ? 0 : -1;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_buffer(gpuopt_tuner *t, uint32_t index,
                                                 const gpuopt_buffer_desc *buffer)
{
    static const char fn[] = "gpuopt_tuner_set_buffer";
    CHECK_TUNER(t, fn);
    gpuopt_buffer_desc d = {0};
    gpuopt_status st =
        read_struct(&d, sizeof d, first_buffer_desc_size, buffer, fn, "gpuopt_buffer_desc");
    if (st == GPUOPT_OK)
        st = check_arg(index, d.type, fn);
    if (st != GPUOPT_OK)
        return st;
    if (!d.count)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: the count expression is NULL", fn);
    if (d.init < GPUOPT_INIT_RANDOM || d.init > GPUOPT_INIT_DATA)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s: init %d unknown (accepted 1 random, 2 zeros, 3 constant, 4 data)", fn,
                        (int)d.init);
    if (d.init == GPUOPT_INIT_CONSTANT && !isfinite(d.constant))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: the constant is not finite", fn);
    if (d.init == GPUOPT_INIT_DATA && !d.data)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: GPUOPT_INIT_DATA with NULL data", fn);
    char what[64];
    gpo_snprintf(what, sizeof what, "%s count of argument %u", fn, index);
    gpo_expr *e = NULL;
    if ((st = compile(t, d.count, what, &e)) != GPUOPT_OK)
        return st;
    void *copy = NULL;
    size_t bytes = 0;
    if (d.init == GPUOPT_INIT_DATA) {
        int64_t n = 0;
        const char *p = reads_param(e);
        if (p)
            st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                          "%s: argument %u has data but its count reads parameter %s (data has "
                          "one length)",
                          fn, index, p);
        else if (eval_sizes_only(t, e, &n) != 0 || n < 1 || n > MAX_ELEMENTS)
            st = gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                          "%s: the count of argument %u ('%s') is undefined or outside 1 .. 2^40",
                          fn, index, gpo_expr_source(e));
        else if (!(copy = malloc(bytes = (size_t)n * gpo_elem_size(d.type))))
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory copying %zu bytes of data", bytes);
        else
            memcpy(copy, d.data, bytes);
    }
    gpo_targ *a = st == GPUOPT_OK ? arg_slot(t, index) : NULL;
    if (st == GPUOPT_OK && !a)
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory adding an argument");
    if (st != GPUOPT_OK) {
        gpo_expr_destroy(e);
        free(copy);
        return st;
    }
    changed(t);
    gpo_targ_free(a);
    a->index = index;
    a->kind = GPO_ARG_BUFFER;
    a->type = d.type;
    a->expr = e;
    a->fixed = reads_param(e) == NULL;
    a->init = d.init;
    a->value = d.constant;
    a->data = copy;
    a->data_bytes = bytes;
    a->is_output = d.is_output != 0;
    return GPUOPT_OK;
}

/* A fixed scalar's value fits its type (integers: integral and in range). */
static int fits(int32_t type, double v)
{
    static const double lo[] = {0, 0, 0, -2147483648.0, 0, -9223372036854775808.0};
    static const double hi[] = {0, 0, 0, 2147483647.0, 4294967295.0, 9223372036854775807.0};
    if (gpo_elem_is_float(type))
        return 1;
    return v == floor(v) && v >= lo[type] &&
           (type == GPUOPT_ELEM_I64 ? v < hi[type] : v <= hi[type]);
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_scalar(gpuopt_tuner *t, uint32_t index,
                                                 const gpuopt_scalar_desc *scalar)
{
    static const char fn[] = "gpuopt_tuner_set_scalar";
    CHECK_TUNER(t, fn);
    gpuopt_scalar_desc d = {0};
    gpuopt_status st =
        read_struct(&d, sizeof d, first_scalar_desc_size, scalar, fn, "gpuopt_scalar_desc");
    if (st == GPUOPT_OK)
        st = check_arg(index, d.type, fn);
    if (st != GPUOPT_OK)
        return st;
    gpo_expr *e = NULL;
    if (d.expression) {
        char what[64];
        gpo_snprintf(what, sizeof what, "%s argument %u", fn, index);
        if ((st = compile(t, d.expression, what, &e)) != GPUOPT_OK)
            return st;
    } else if (!fits(d.type, d.value)) {
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "%s: value %g is not a %s value", fn, d.value,
                        gpo_elem_name(d.type));
    }
    gpo_targ *a = arg_slot(t, index);
    if (!a) {
        gpo_expr_destroy(e);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory adding an argument");
    }
    changed(t);
    gpo_targ_free(a);
    a->index = index;
    a->kind = e ? GPO_ARG_SCALAR : GPO_ARG_SCALAR_F64;
    a->type = d.type;
    a->expr = e;
    a->value = e ? 0 : d.value;
    a->fixed = reads_param(e) == NULL;
    return GPUOPT_OK;
}

static void reference_free(gpo_kernel_def *k)
{
    free(k->ref_source);
    free(k->ref_entry);
    free(k->ref_options);
    k->ref_source = k->ref_entry = k->ref_options = NULL;
    gpo_geometry_free(&k->ref_geo);
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_reference_kernel(gpuopt_tuner *t,
                                                           const gpuopt_reference_desc *reference)
{
    static const char fn[] = "gpuopt_tuner_set_reference_kernel";
    CHECK_TUNER(t, fn);
    if (!reference) {
        changed(t);
        reference_free(&t->kern.k);
        return GPUOPT_OK;
    }
    gpuopt_reference_desc d = {0};
    gpuopt_status st = read_struct(&d, sizeof d, first_reference_desc_size, reference, fn,
                                   "gpuopt_reference_desc");
    if (st != GPUOPT_OK)
        return st;
    if (t->subject == SUBJECT_CALLBACK)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s: a callback subject validates through its validate callback", fn);
    if ((st = check_source(d.source, d.entry, fn)) != GPUOPT_OK)
        return st;
    gpo_geometry g;
    if ((st = geometry(t, d.global, d.local, 0, fn, &g)) != GPUOPT_OK)
        return st;
    char *s = gpo_strdup(d.source), *e = gpo_strdup(d.entry);
    char *o = gpo_strdup(d.build_options ? d.build_options : "");
    if (!s || !e || !o) {
        free(s);
        free(e);
        free(o);
        gpo_geometry_free(&g);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory copying a reference kernel");
    }
    changed(t);
    reference_free(&t->kern.k);
    t->kern.k.ref_source = s;
    t->kern.k.ref_entry = e;
    t->kern.k.ref_options = o;
    t->kern.k.ref_geo = g;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_reference_data(gpuopt_tuner *t, uint32_t index,
                                                         const void *data, size_t bytes)
{
    static const char fn[] = "gpuopt_tuner_set_reference_data";
    CHECK_TUNER(t, fn);
    gpo_targ *a = NULL;
    for (int32_t i = 0; i < t->kern.k.nargs; i++)
        if (t->kern.k.args[i].index == index)
            a = &t->kern.k.args[i];
    if (!a || a->kind != GPO_ARG_BUFFER)
        return gpo_fail(GPUOPT_ERR_NOT_FOUND,
                        "%s: argument %u is not a buffer (set it with gpuopt_tuner_set_buffer "
                        "first)",
                        fn, index);
    if (!a->is_output)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s: argument %u is not an output (is_output 0): nothing compares it", fn,
                        index);
    if (data && bytes == 0)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: 0 bytes of data", fn);
    int64_t n = 0;
    if (data && a->fixed && eval_sizes_only(t, a->expr, &n) == 0 && n > 0 &&
        (uint64_t)n * gpo_elem_size(a->type) != bytes)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s: argument %u holds %lld %s elements (%llu bytes), the data has %zu "
                        "bytes",
                        fn, index, (long long)n, gpo_elem_name(a->type),
                        (unsigned long long)((uint64_t)n * gpo_elem_size(a->type)), bytes);
    void *copy = NULL;
    if (data) {
        if (!(copy = malloc(bytes)))
            return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory copying %zu bytes", bytes);
        memcpy(copy, data, bytes);
    }
    changed(t);
    free(a->ref);
    a->ref = copy;
    a->ref_bytes = data ? bytes : 0;
    return GPUOPT_OK;
}

/* ---- the cache ------------------------------------------------------------------ */

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
    if (t->subject != SUBJECT_KERNEL) {
        t->key_source[0] = t->key_options[0] = '\0';
        t->key_valid = 1;
        return GPUOPT_OK;
    }
    const gpo_kernel_def *k = &t->kern.k;
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    gpo_sbuf_appendf(&b, "gpuopt-kernel 1\nlanguage %s\nentry %s\n",
                     gpo_language_runtime_name(k->language), k->entry);
    hash_into(&b, "source", k->source, strlen(k->source));
    gpo_sbuf_append(&b, "\n");
    geometry_text(&b, "geometry", &k->geo);
    gpo_sbuf_appendf(&b, "local_memory %s\n", k->lmem ? gpo_expr_text(k->lmem) : "none");
    for (uint32_t ix = 0; ix < GPO_KERNEL_MAX_ARGS; ix++) {
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
    gpo_sbuf_appendf(&b, "tolerance %.17g %.17g\n", t->set.abs_tol, t->set.rel_tol);
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
static char *workload_text(const gpuopt_tuner *t)
{
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
    if (t->subject == SUBJECT_KERNEL) {
        gpo_sbuf_appendf(&b, "%stypes=", b.len ? ";" : "");
        for (uint32_t ix = 0; ix < GPO_KERNEL_MAX_ARGS; ix++)
            for (int32_t i = 0; i < t->kern.k.nargs; i++)
                if (t->kern.k.args[i].index == ix)
                    gpo_sbuf_appendf(&b, "%s%s", ix ? "," : "",
                                     gpo_elem_name(t->kern.k.args[i].type));
    }
    if (t->workload_key)
        gpo_sbuf_appendf(&b, "%skey=%s", b.len ? ";" : "", t->workload_key);
    return gpo_sbuf_take(&b);
}

static gpuopt_status make_key(gpuopt_tuner *t, const gpo_subject_ops *ops, tkey *k)
{
    memset(k, 0, sizeof *k);
    gpuopt_status st = subject_hashes(t);
    if (st != GPUOPT_OK)
        return st;
    const gpuopt_device_info *info = &t->dev->info;
    if (t->subject == SUBJECT_KERNEL) {
        const gpo_route *route = gpo_kernel_route(&t->kern, &st);
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
    if (!(k->workload = workload_text(t)))
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory making a cache key");
    gpo_strlcpy(k->driver, info->driver_version, sizeof k->driver);
    gpo_strlcpy(k->compiler, info->runtime_version, sizeof k->compiler);
    gpo_strlcpy(k->device_name, t->dev->info.name, sizeof k->device_name);
    k->key = (gpo_cache_key){ops->kind,     k->backend,     k->arch,       cd.compute_units,
                             t->key_source, t->key_options, t->space_hash, k->workload};
    k->soft = (gpo_cache_soft){k->driver, k->compiler, NULL, k->device_name};
    /* The key is made even when unused: results show the workload. */
    if (t->set.cache_mode == GPUOPT_CACHE_OFF)
        return GPUOPT_OK;
    if (t->subject == SUBJECT_CALLBACK && !t->workload_key) {
        gpo_log_info(&t->ctx->log, "tuner: a callback subject without a workload key is not "
                                   "cached (gpuopt_tuner_settings.workload_key names it)");
        return GPUOPT_OK;
    }
    char *canon = NULL;
    if (gpo_cache_key_canon(&k->key, &canon, NULL) != GPUOPT_OK) {
        /* A key too long to store (a huge workload key): run uncached. */
        gpo_log_warn(&t->ctx->log, "tuner: not cached: %s", gpo_detail_get());
        return GPUOPT_OK;
    }
    free(canon);
    k->usable = tuner_cache(t) != NULL;
    return GPUOPT_OK;
}

/* ---- running ------------------------------------------------------------------- */

/* A run of the tuner as it is set now. */
static gpuopt_status spec_of(gpuopt_tuner *t, tkey *k, gpo_run_spec *spec)
{
    memset(k, 0, sizeof *k);
    if (t->subject == SUBJECT_NONE)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "the tuner has nothing to tune: give it gpuopt_tuner_set_kernel or "
                        "gpuopt_tuner_set_callback");
    gpo_ctx_lock(t->ctx);
    gpuopt_status st = gpo_ctx_check_fork(t->ctx);
    gpo_ctx_unlock(t->ctx);
    const gpo_subject_ops *ops =
        t->subject == SUBJECT_KERNEL ? &gpo_subject_kernel : &gpo_subject_callback;
    if (st == GPUOPT_OK)
        st = make_key(t, ops, k);
    if (st != GPUOPT_OK)
        return st;
    const gpuopt_tuner_settings *set = &t->set;
    t->kern.seed = set->seed;
    t->kern.abs_tol = set->abs_tol;
    t->kern.rel_tol = set->rel_tol;
    t->kern.isolation = set->isolation;
    t->kern.timeout_s = set->timeout_s;
    memset(spec, 0, sizeof *spec);
    spec->space = t->space;
    spec->ops = ops;
    spec->subject = t->subject == SUBJECT_KERNEL ? (void *)&t->kern : (void *)&t->cb;
    spec->log = &t->ctx->log;
    gpo_search_defaults(&spec->search);
    spec->search.strategy = set->strategy;
    spec->search.seed = set->seed;
    spec->search.max_evaluations = set->max_evaluations;
    spec->search.max_seconds = set->max_seconds;
    spec->search.max_failures = set->max_failures;
    spec->search.clock_ns = t->clock_ns;
    spec->search.clock_user = t->clock_user;
    spec->timing = timing_of(set);
    spec->timeout_s = set->timeout_s;
    spec->floor = GPO_NOISE_FLOOR;
    spec->finalists = GPO_FINALISTS;
    spec->cache = k->usable ? t->cache : NULL;
    spec->cache_mode = set->cache_mode;
    spec->key = &k->key;
    spec->soft = &k->soft;
    spec->info = (gpo_result_info){
        t->dev->info.id,  t->dev->info.name, k->backend,           ops->kind,
        set->strategy,    set->seed,         set->max_evaluations, set->max_failures,
        set->max_seconds, spec->timing,      set->timeout_s,       k->workload};
    spec->progress = t->progress;
    spec->progress_user = t->progress_user;
    return GPUOPT_OK;
}

/* The cache, then the search. */
static gpuopt_status run(gpuopt_tuner *t, gpuopt_result **out)
{
    tkey k;
    gpo_run_spec spec;
    gpo_run *r = NULL;
    gpuopt_status st = spec_of(t, &k, &spec);
    if (st == GPUOPT_OK)
        st = gpo_run_begin(&spec, &r);
    if (st != GPUOPT_OK)
        goto out;
    int found = gpo_run_lookup(r, out);
    if (found < 0) {
        st = (gpuopt_status)-found;
        goto out;
    }
    if (found == GPO_RUN_HIT)
        goto out;
    if (found == GPO_RUN_CHANGED && (st = gpo_run_verify(r, out)) != GPUOPT_ERR_NOT_FOUND)
        goto out;
    const gpuopt_result *res = NULL;
    if ((st = gpo_run_tune(r, &res)) == GPUOPT_OK)
        st = gpo_run_finish(r, NULL, out);
out:
    gpo_run_end(r);
    free(k.workload);
    return st;
}

GPUOPT_API gpuopt_status gpuopt_tuner_run(gpuopt_tuner *t, gpuopt_result **out)
{
    GPO_ENTRY_OUT("gpuopt_tuner_run: ", t, "tuner", out, NULL);
    gpo_online_free(t->online);
    t->online = NULL;
    /* A run in which no candidate was valid is an answer too: the result
     * says so (gpuopt_result_best), and lists why each one failed. */
    return run(t, out);
}

GPUOPT_API gpuopt_status gpuopt_tuner_step(gpuopt_tuner *t, const gpuopt_point **point,
                                           int32_t *done)
{
    gpo_detail_clear();
    if (point)
        *point = NULL;
    if (done)
        *done = 0;
    if (!t)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_tuner_step: tuner is NULL");
    if (!t->online) {
        free(t->online_run.k.workload);
        gpuopt_status st = spec_of(t, &t->online_run.k, &t->online_run.spec);
        if (st == GPUOPT_OK)
            st = gpo_online_start(&t->online_run.spec, &t->online);
        if (st != GPUOPT_OK)
            return st;
    }
    return gpo_online_step(t->online, point, done);
}

/* ---- tests ------------------------------------------------------------------------- */

void gpo_tuner_test_overlap(gpuopt_tuner *t, int overlap)
{
    t->kern.overlap = overlap;
}

void gpo_tuner_test_wrap(gpuopt_tuner *t,
                         const gpo_runtime_ops *(*wrap)(const gpo_runtime_ops *real))
{
    t->kern.wrap = wrap;
}

gpo_progcache *gpo_tuner_test_progcache(const gpuopt_tuner *t)
{
    return gpo_kernel_progcache(&t->kern);
}

const char *gpo_tuner_test_cache_file(const gpuopt_tuner *t)
{
    return gpo_cache_file(t->cache);
}
