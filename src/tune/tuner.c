/* The public tuner (include/gpuopt/tune.h): the handle and its settings,
 * the kernel subject's setters, the cache key of its runs, and the two ways
 * to run it, gpuopt_tuner_run (run.h) and gpuopt_tune_step (online.h).
 * Every setter checks its input at once and says what is accepted; nothing
 * is built or opened here.
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
    int32_t strategy, max_evaluations, max_failures;
    double max_seconds;
    uint64_t seed;
    gpo_timing_settings timing;
    double timeout_s;
    char *workload_key;
    int32_t cache_mode;
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
            return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, fn ": tuner is NULL");                    \
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
    t->kern.abs_tol = DEFAULT_ABS_TOL;
    t->kern.rel_tol = DEFAULT_REL_TOL;
    t->timeout_s = DEFAULT_TIMEOUT_S;
    t->cache_mode = GPUOPT_CACHE_USE;
    t->kern.overlap = -1;
    gpo_timing_defaults(&t->timing);
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

GPUOPT_API gpuopt_status gpuopt_tuner_set_callback(gpuopt_tuner *t, gpuopt_run_fn run,
                                                   gpuopt_pre_run_fn pre_run,
                                                   gpuopt_validate_fn validate, void *user)
{
    CHECK_TUNER(t, "gpuopt_tuner_set_callback");
    if (!run)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_tuner_set_callback: run is NULL");
    if (t->subject == SUBJECT_KERNEL)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "gpuopt_tuner_set_callback: this tuner already has a kernel subject (a "
                        "tuner tunes one subject)");
    changed(t);
    t->cb.run = run;
    t->cb.pre_run = pre_run;
    t->cb.validate = validate;
    t->cb.user = user;
    t->subject = SUBJECT_CALLBACK;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_strategy(gpuopt_tuner *t, int32_t strategy)
{
    CHECK_TUNER(t, "gpuopt_tuner_set_strategy");
    if (!gpo_strategy_name(strategy))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_tuner_set_strategy: %d unknown (accepted 0 auto, 1 exhaustive, 2 "
                        "random, 3 annealing, 4 model)",
                        (int)strategy);
    changed(t);
    t->strategy = strategy;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_budget(gpuopt_tuner *t, int32_t max_evaluations,
                                                 double max_seconds, int32_t max_failures)
{
    CHECK_TUNER(t, "gpuopt_tuner_set_budget");
    if (max_evaluations < 0 || max_failures < 0 || !(isfinite(max_seconds) && max_seconds >= 0))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_tuner_set_budget: evaluations %d, seconds %g, failures %d (each "
                        ">= 0, finite; 0 means no limit)",
                        (int)max_evaluations, max_seconds, (int)max_failures);
    changed(t);
    t->max_evaluations = max_evaluations;
    t->max_seconds = max_seconds;
    t->max_failures = max_failures;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_seed(gpuopt_tuner *t, uint64_t seed)
{
    CHECK_TUNER(t, "gpuopt_tuner_set_seed");
    changed(t);
    t->seed = seed;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_timing(gpuopt_tuner *t, double warmup_ms,
                                                 double repeat_ms, int32_t min_runs,
                                                 int32_t max_runs)
{
    CHECK_TUNER(t, "gpuopt_tuner_set_timing");
    gpo_timing_settings s = t->timing;
    s.warmup_ms = warmup_ms;
    s.repeat_ms = repeat_ms;
    s.min_runs = min_runs;
    s.max_runs = max_runs;
    /* The probe is the first runs timed: no more than may be timed at all. */
    gpo_timing_settings d;
    gpo_timing_defaults(&d);
    s.probe_runs = max_runs >= 1 && max_runs < d.probe_runs ? max_runs : d.probe_runs;
    gpuopt_status st = gpo_timing_check(&s);
    if (st != GPUOPT_OK)
        return gpo_fail(st, "gpuopt_tuner_set_timing: %s", gpo_detail_get());
    changed(t);
    t->timing = s;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_timeout(gpuopt_tuner *t, double seconds)
{
    CHECK_TUNER(t, "gpuopt_tuner_set_timeout");
    if (!(isfinite(seconds) && seconds >= 0))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_tuner_set_timeout: %g (finite seconds >= 0; 0 disables)", seconds);
    changed(t);
    t->timeout_s = seconds;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_workload_key(gpuopt_tuner *t, const char *key)
{
    CHECK_TUNER(t, "gpuopt_tuner_set_workload_key");
    char *copy = NULL;
    if (key && *key) {
        if (strlen(key) > MAX_WORKLOAD_KEY)
            return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                            "gpuopt_tuner_set_workload_key: %zu characters (at most %d)",
                            strlen(key), MAX_WORKLOAD_KEY);
        if (!(copy = gpo_strdup(key)))
            return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory copying a workload key");
    }
    changed(t);
    free(t->workload_key);
    t->workload_key = copy;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_cache_mode(gpuopt_tuner *t, int32_t mode)
{
    CHECK_TUNER(t, "gpuopt_tuner_set_cache_mode");
    if (mode < GPUOPT_CACHE_USE || mode > GPUOPT_CACHE_OFF)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_tuner_set_cache_mode: %d unknown (accepted 0 use, 1 refresh, 2 "
                        "off)",
                        (int)mode);
    changed(t);
    t->cache_mode = mode;
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

GPUOPT_API gpuopt_status gpuopt_tuner_set_kernel(gpuopt_tuner *t, const char *source,
                                                 const char *entry, int32_t language,
                                                 const char *build_options)
{
    CHECK_TUNER(t, "gpuopt_tuner_set_kernel");
    if (t->subject == SUBJECT_CALLBACK)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "gpuopt_tuner_set_kernel: this tuner already has a callback subject (a "
                        "tuner tunes one subject)");
    if (!source || !*source)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_tuner_set_kernel: the source is %s",
                        source ? "empty" : "NULL");
    if (!valid_entry(entry))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "gpuopt_tuner_set_kernel: entry '%s' is not a C identifier of 1 to 255 "
                        "characters",
                        entry ? entry : "(null)");
    if (!gpo_language_runtime_name(language))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_tuner_set_kernel: language %d unknown (accepted 1 OpenCL C, 2 "
                        "CUDA, 3 HIP)",
                        (int)language);
    char *s = gpo_strdup(source), *e = gpo_strdup(entry);
    char *o = gpo_strdup(build_options ? build_options : "");
    if (!s || !e || !o) {
        free(s);
        free(e);
        free(o);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory copying a kernel");
    }
    changed(t);
    free(t->kern.k.source);
    free(t->kern.k.entry);
    free(t->kern.k.options);
    t->kern.k.source = s;
    t->kern.k.entry = e;
    t->kern.k.options = o;
    t->kern.k.language = language;
    t->subject = SUBJECT_KERNEL;
    return GPUOPT_OK;
}

/* Compiles a geometry; `params_ok` 0 refuses parameters (a reference's). */
static gpuopt_status geometry(gpuopt_tuner *t, const char *const global[3],
                              const char *const local[3], int params_ok, const char *fn,
                              gpo_geometry *out)
{
    gpo_geometry g;
    memset(&g, 0, sizeof g);
    gpuopt_status st = GPUOPT_OK;
    if (!global || !global[0])
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: global[0] is needed", fn);
    while (g.dims < 3 && global[g.dims])
        g.dims++;
    for (int i = g.dims; i < 3; i++)
        if (global[i])
            return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                            "%s: global[%d] is given after an unused global[%d]", fn, i, g.dims);
    g.has_local = local != NULL;
    for (int i = 0; local && i < 3; i++)
        if ((i < g.dims) != (local[i] != NULL))
            return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                            "%s: local[%d] is %s, but %d dimension%s used (a local size for "
                            "each used dimension, or local NULL)",
                            fn, i, local[i] ? "given" : "NULL", g.dims,
                            g.dims > 1 ? "s are" : " is");
    char what[64];
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

GPUOPT_API gpuopt_status gpuopt_tuner_set_geometry(gpuopt_tuner *t, const char *const global[3],
                                                   const char *const local[3])
{
    CHECK_TUNER(t, "gpuopt_tuner_set_geometry");
    gpo_geometry g;
    gpuopt_status st = geometry(t, global, local, 1, "gpuopt_tuner_set_geometry", &g);
    if (st != GPUOPT_OK)
        return st;
    changed(t);
    gpo_geometry_free(&t->kern.k.geo);
    t->kern.k.geo = g;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_local_memory(gpuopt_tuner *t, const char *bytes)
{
    CHECK_TUNER(t, "gpuopt_tuner_set_local_memory");
    gpo_expr *e = NULL;
    if (bytes) {
        gpuopt_status st = compile(t, bytes, "gpuopt_tuner_set_local_memory", &e);
        if (st != GPUOPT_OK)
            return st;
    }
    changed(t);
    gpo_expr_destroy(t->kern.k.lmem);
    t->kern.k.lmem = e;
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

GPUOPT_API gpuopt_status gpuopt_tuner_add_buffer(gpuopt_tuner *t, uint32_t index, int32_t type,
                                                 const char *count_expression, int32_t init,
                                                 double constant, const void *data,
                                                 int32_t is_output)
{
    static const char fn[] = "gpuopt_tuner_add_buffer";
    CHECK_TUNER(t, "gpuopt_tuner_add_buffer");
    gpuopt_status st = check_arg(index, type, fn);
    if (st != GPUOPT_OK)
        return st;
    if (!count_expression)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: the count expression is NULL", fn);
    if (init < GPUOPT_INIT_RANDOM || init > GPUOPT_INIT_DATA)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%s: init %d unknown (accepted 1 random, 2 zeros, 3 constant, 4 data)", fn,
                        (int)init);
    if (init == GPUOPT_INIT_CONSTANT && !isfinite(constant))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: the constant is not finite", fn);
    if (init == GPUOPT_INIT_DATA && !data)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: GPUOPT_INIT_DATA with NULL data", fn);
    char what[64];
    gpo_snprintf(what, sizeof what, "%s count of argument %u", fn, index);
    gpo_expr *e = NULL;
    if ((st = compile(t, count_expression, what, &e)) != GPUOPT_OK)
        return st;
    void *copy = NULL;
    size_t bytes = 0;
    if (init == GPUOPT_INIT_DATA) {
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
        else if (!(copy = malloc(bytes = (size_t)n * gpo_elem_size(type))))
            st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory copying %zu bytes of data", bytes);
        else
            memcpy(copy, data, bytes);
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
    a->type = type;
    a->expr = e;
    a->fixed = reads_param(e) == NULL;
    a->init = init;
    a->value = constant;
    a->data = copy;
    a->data_bytes = bytes;
    a->is_output = is_output != 0;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_add_scalar(gpuopt_tuner *t, uint32_t index, int32_t type,
                                                 const char *expression)
{
    static const char fn[] = "gpuopt_tuner_add_scalar";
    CHECK_TUNER(t, "gpuopt_tuner_add_scalar");
    gpuopt_status st = check_arg(index, type, fn);
    if (st != GPUOPT_OK)
        return st;
    if (!expression)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: the expression is NULL", fn);
    char what[64];
    gpo_snprintf(what, sizeof what, "%s argument %u", fn, index);
    gpo_expr *e = NULL;
    if ((st = compile(t, expression, what, &e)) != GPUOPT_OK)
        return st;
    gpo_targ *a = arg_slot(t, index);
    if (!a) {
        gpo_expr_destroy(e);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory adding an argument");
    }
    changed(t);
    gpo_targ_free(a);
    a->index = index;
    a->kind = GPO_ARG_SCALAR;
    a->type = type;
    a->expr = e;
    a->fixed = reads_param(e) == NULL;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_add_scalar_f64(gpuopt_tuner *t, uint32_t index, int32_t type,
                                                     double value)
{
    static const char fn[] = "gpuopt_tuner_add_scalar_f64";
    CHECK_TUNER(t, "gpuopt_tuner_add_scalar_f64");
    gpuopt_status st = check_arg(index, type, fn);
    if (st != GPUOPT_OK)
        return st;
    static const double lo[] = {0, 0, 0, -2147483648.0, 0, -9223372036854775808.0};
    static const double hi[] = {0, 0, 0, 2147483647.0, 4294967295.0, 9223372036854775807.0};
    if (!gpo_elem_is_float(type) &&
        !(value == floor(value) && value >= lo[type] &&
          (type == GPUOPT_ELEM_I64 ? value < hi[type] : value <= hi[type])))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "%s: %g is not a %s value", fn, value,
                        gpo_elem_name(type));
    gpo_targ *a = arg_slot(t, index);
    if (!a)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory adding an argument");
    changed(t);
    gpo_targ_free(a);
    a->index = index;
    a->kind = GPO_ARG_SCALAR_F64;
    a->type = type;
    a->value = value;
    a->fixed = 1;
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_tuner_set_reference_kernel(gpuopt_tuner *t, const char *source,
                                                           const char *entry,
                                                           const char *build_options,
                                                           const char *const global[3],
                                                           const char *const local[3])
{
    static const char fn[] = "gpuopt_tuner_set_reference_kernel";
    CHECK_TUNER(t, "gpuopt_tuner_set_reference_kernel");
    if (!source) {
        changed(t);
        free(t->kern.k.ref_source);
        free(t->kern.k.ref_entry);
        free(t->kern.k.ref_options);
        t->kern.k.ref_source = t->kern.k.ref_entry = t->kern.k.ref_options = NULL;
        gpo_geometry_free(&t->kern.k.ref_geo);
        return GPUOPT_OK;
    }
    if (t->subject == SUBJECT_CALLBACK)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s: a callback subject validates through its validate callback", fn);
    if (!*source)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s: the source is empty", fn);
    if (!valid_entry(entry))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "%s: entry '%s' is not a C identifier of 1 to 255 characters", fn,
                        entry ? entry : "(null)");
    gpo_geometry g;
    gpuopt_status st = geometry(t, global, local, 0, fn, &g);
    if (st != GPUOPT_OK)
        return st;
    char *s = gpo_strdup(source), *e = gpo_strdup(entry);
    char *o = gpo_strdup(build_options ? build_options : "");
    if (!s || !e || !o) {
        free(s);
        free(e);
        free(o);
        gpo_geometry_free(&g);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory copying a reference kernel");
    }
    changed(t);
    free(t->kern.k.ref_source);
    free(t->kern.k.ref_entry);
    free(t->kern.k.ref_options);
    gpo_geometry_free(&t->kern.k.ref_geo);
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
    CHECK_TUNER(t, "gpuopt_tuner_set_reference_data");
    gpo_targ *a = NULL;
    for (int32_t i = 0; i < t->kern.k.nargs; i++)
        if (t->kern.k.args[i].index == index)
            a = &t->kern.k.args[i];
    if (!a || a->kind != GPO_ARG_BUFFER)
        return gpo_fail(GPUOPT_ERR_NOT_FOUND,
                        "%s: argument %u is not a buffer (add it with gpuopt_tuner_add_buffer "
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

GPUOPT_API gpuopt_status gpuopt_tuner_set_tolerance(gpuopt_tuner *t, double abs_tol, double rel_tol)
{
    CHECK_TUNER(t, "gpuopt_tuner_set_tolerance");
    if (!(isfinite(abs_tol) && abs_tol >= 0 && isfinite(rel_tol) && rel_tol >= 0))
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_tuner_set_tolerance: %g and %g (finite values >= 0 accepted)",
                        abs_tol, rel_tol);
    changed(t);
    t->kern.abs_tol = abs_tol;
    t->kern.rel_tol = rel_tol;
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
    gpo_sbuf_appendf(&b, "tolerance %.17g %.17g\n", t->kern.abs_tol, t->kern.rel_tol);
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
    if (t->cache_mode == GPUOPT_CACHE_OFF)
        return GPUOPT_OK;
    if (t->subject == SUBJECT_CALLBACK && !t->workload_key) {
        gpo_log_info(&t->ctx->log, "tuner: a callback subject without a workload key is not "
                                   "cached (gpuopt_tuner_set_workload_key names it)");
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
    t->kern.seed = t->seed;
    memset(spec, 0, sizeof *spec);
    spec->space = t->space;
    spec->ops = ops;
    spec->subject = t->subject == SUBJECT_KERNEL ? (void *)&t->kern : (void *)&t->cb;
    spec->log = &t->ctx->log;
    gpo_search_defaults(&spec->search);
    spec->search.strategy = t->strategy;
    spec->search.seed = t->seed;
    spec->search.max_evaluations = t->max_evaluations;
    spec->search.max_seconds = t->max_seconds;
    spec->search.max_failures = t->max_failures;
    spec->search.clock_ns = t->clock_ns;
    spec->search.clock_user = t->clock_user;
    spec->timing = t->timing;
    spec->timeout_s = t->timeout_s;
    spec->floor = GPO_NOISE_FLOOR;
    spec->finalists = GPO_FINALISTS;
    spec->cache = k->usable ? t->cache : NULL;
    spec->cache_mode = t->cache_mode;
    spec->key = &k->key;
    spec->soft = &k->soft;
    spec->info =
        (gpo_result_info){t->dev->info.id, t->dev->info.name, k->backend,         ops->kind,
                          t->strategy,     t->seed,           t->max_evaluations, t->max_failures,
                          t->max_seconds,  t->timing,         t->timeout_s,       k->workload};
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
    gpo_detail_clear();
    if (out)
        *out = NULL;
    if (!t || !out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_tuner_run: %s is NULL",
                        t ? "out" : "tuner");
    gpo_online_free(t->online);
    t->online = NULL;
    gpuopt_status st = run(t, out);
    if (st != GPUOPT_OK || gpo_result_best_index(*out) >= 0)
        return st;
    if (gpo_result_from(*out) != GPO_FROM_SEARCH)
        return gpo_fail(GPUOPT_ERR_NOT_FOUND,
                        "the cached tune of this key found no valid candidate (tune again with "
                        "GPUOPT_CACHE_REFRESH after changing the kernel or the space)");
    return gpo_fail(GPUOPT_ERR_NOT_FOUND,
                    "no valid candidate among the %d evaluated (the result lists each with its "
                    "status and message)",
                    (int)gpo_result_count_of(*out));
}

GPUOPT_API gpuopt_status gpuopt_tune_step(gpuopt_tuner *t, const gpuopt_point **config,
                                          int32_t *done)
{
    gpo_detail_clear();
    if (config)
        *config = NULL;
    if (done)
        *done = 0;
    if (!t)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_tune_step: tuner is NULL");
    if (!t->online) {
        free(t->online_run.k.workload);
        gpuopt_status st = spec_of(t, &t->online_run.k, &t->online_run.spec);
        if (st == GPUOPT_OK)
            st = gpo_online_start(&t->online_run.spec, &t->online);
        if (st != GPUOPT_OK)
            return st;
    }
    return gpo_online_step(t->online, config, done);
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
