/* The program cache and its build worker (see progcache.h). */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/strutil.h"
#include "tune/progcache.h"

enum { E_NEW = 0, E_QUEUED = 1, E_BUILDING = 2, E_DONE = 3 };

typedef struct pc_source {
    uint64_t hash;
    char *text;
} pc_source;

typedef struct pc_entry {
    uint64_t hash; /* of source hash and options */
    const pc_source *src;
    char *options;
    int state;
    struct pc_entry *qnext; /* build queue */
    gpo_rt_prog *prog;
    gpuopt_status status;
    char *log;
    char *detail; /* the failure's detail, set on the thread that built */
    double build_ms;
    int handed;
    int32_t in_use;
    uint64_t last_use;
} pc_entry;

struct gpo_progcache {
    const gpo_runtime_ops *ops;
    gpo_rt *rt;
    uint64_t compiler_hash;
    int threaded;
    int32_t max_programs;
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    pthread_t worker;
    int worker_started, stop, building;
    pc_entry **entries;
    int32_t n;
    size_t cap, capsrc;
    pc_source **sources; /* each allocated alone: entries point at them */
    int32_t nsrc;
    pc_entry *qhead;
    uint64_t tick;
    gpo_progcache_stats stats;
};

int gpo_progcache_threaded(const gpo_runtime_ops *ops)
{
    /* The runtime says whether a build may run beside launches (backend.h). */
    return ops && ops->builds_alongside_launches;
}

/* ---- building ------------------------------------------------------------- */

/* What one build produced; stored into its entry under the lock, so no
 * other thread reads an entry while the worker fills it. */
typedef struct built_t {
    gpo_rt_prog *prog;
    gpuopt_status status;
    char *log, *detail;
    double ms;
} built_t;

/* Runs without the lock (on the worker, or alone on the caller). */
static void build(gpo_progcache *pc, const char *source, const char *options, built_t *b)
{
    uint64_t t0 = gpo_now_ns();
    memset(b, 0, sizeof *b);
    gpo_detail_clear();
    b->status = pc->ops->program_build(pc->rt, source, options, &b->prog, &b->log);
    b->ms = (double)(gpo_now_ns() - t0) / 1e6;
    if (b->status != GPUOPT_OK) {
        b->prog = NULL;
        b->detail = gpo_strdup(gpo_detail_get());
    }
}

/* With the lock held. */
static void store(gpo_progcache *pc, pc_entry *e, const built_t *b)
{
    e->prog = b->prog;
    e->status = b->status;
    e->log = b->log;
    e->detail = b->detail;
    e->build_ms = b->ms;
    e->state = E_DONE;
    pc->stats.builds++;
    pc->stats.build_ms += b->ms;
}

static void *worker_main(void *arg)
{
    gpo_progcache *pc = arg;
    pthread_mutex_lock(&pc->lock);
    while (!pc->stop) {
        pc_entry *e = pc->qhead;
        if (!e) {
            pthread_cond_wait(&pc->work, &pc->lock);
            continue;
        }
        pc->qhead = e->qnext;
        e->qnext = NULL;
        e->state = E_BUILDING;
        pc->building = 1;
        /* The source and options of an entry never change once made. */
        const char *source = e->src->text, *options = e->options;
        pthread_mutex_unlock(&pc->lock);
        built_t b;
        build(pc, source, options, &b);
        pthread_mutex_lock(&pc->lock);
        store(pc, e, &b);
        pc->building = 0;
        pthread_cond_broadcast(&pc->done);
    }
    pthread_mutex_unlock(&pc->lock);
    return NULL;
}

/* ---- lifecycle ------------------------------------------------------------ */

gpuopt_status gpo_progcache_create(const gpo_runtime_ops *ops, gpo_rt *rt, int threaded,
                                   int32_t max_programs, gpo_progcache **out)
{
    assert(ops && ops->program_build && ops->program_free && rt && out && max_programs >= 0);
    *out = NULL;
    gpo_progcache *pc = calloc(1, sizeof *pc);
    if (!pc)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory creating a program cache");
    pc->ops = ops;
    pc->rt = rt;
    pc->max_programs = max_programs ? max_programs : 256;
    const char *cv = ops->compiler_version ? ops->compiler_version(rt) : "";
    pc->compiler_hash = gpo_hash64(cv, strlen(cv));
    if (pthread_mutex_init(&pc->lock, NULL) != 0) {
        free(pc);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cannot create the program cache's lock");
    }
    if (pthread_cond_init(&pc->work, NULL) != 0 || pthread_cond_init(&pc->done, NULL) != 0) {
        pthread_mutex_destroy(&pc->lock);
        free(pc);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cannot create the program cache's conditions");
    }
    /* A worker that cannot start only costs the overlap. */
    if (threaded && pthread_create(&pc->worker, NULL, worker_main, pc) == 0)
        pc->worker_started = 1;
    pc->threaded = pc->worker_started;
    *out = pc;
    return GPUOPT_OK;
}

int gpo_progcache_overlaps(const gpo_progcache *pc)
{
    return pc && pc->threaded;
}

static void entry_free(gpo_progcache *pc, pc_entry *e)
{
    if (e->prog)
        pc->ops->program_free(pc->rt, e->prog);
    free(e->options);
    free(e->log);
    free(e->detail);
    free(e);
}

void gpo_progcache_destroy(gpo_progcache *pc)
{
    if (!pc)
        return;
    if (pc->worker_started) {
        pthread_mutex_lock(&pc->lock);
        pc->stop = 1;
        pthread_cond_broadcast(&pc->work);
        pthread_mutex_unlock(&pc->lock);
        pthread_join(pc->worker, NULL);
    }
    for (int32_t i = 0; i < pc->n; i++)
        entry_free(pc, pc->entries[i]);
    for (int32_t i = 0; i < pc->nsrc; i++) {
        free(pc->sources[i]->text);
        free(pc->sources[i]);
    }
    free(pc->sources);
    free(pc->entries);
    pthread_cond_destroy(&pc->work);
    pthread_cond_destroy(&pc->done);
    pthread_mutex_destroy(&pc->lock);
    free(pc);
}

/* ---- lookup ----------------------------------------------------------------- */

/* The interned copy of a source; NULL on allocation failure. Sources are
 * few (a kernel and its reference, one more per set_kernel). */
static const pc_source *intern(gpo_progcache *pc, const char *source, uint64_t h)
{
    for (int32_t i = 0; i < pc->nsrc; i++)
        if (pc->sources[i]->hash == h && strcmp(pc->sources[i]->text, source) == 0)
            return pc->sources[i];
    if (gpo_grow(&pc->sources, sizeof *pc->sources, (size_t)pc->nsrc, &pc->capsrc, 4))
        return NULL;
    pc_source *s = calloc(1, sizeof *s);
    if (!s || !(s->text = gpo_strdup(source))) {
        free(s);
        return NULL;
    }
    s->hash = h;
    pc->sources[pc->nsrc++] = s;
    return s;
}

static uint64_t key_hash(const gpo_progcache *pc, uint64_t source_hash, const char *options)
{
    gpo_hash h;
    gpo_hash_init(&h);
    gpo_hash_u64(&h, source_hash);
    gpo_hash_str(&h, options);
    gpo_hash_u64(&h, pc->compiler_hash);
    return gpo_hash_final(&h);
}

/* The entry of (source, options), created when absent (state E_NEW); NULL
 * on allocation failure. With the lock held. */
static pc_entry *entry_for(gpo_progcache *pc, const char *source, const char *options)
{
    uint64_t sh = gpo_hash64(source, strlen(source));
    uint64_t h = key_hash(pc, sh, options);
    for (int32_t i = 0; i < pc->n; i++) {
        pc_entry *e = pc->entries[i];
        if (e->hash == h && e->src->hash == sh && strcmp(e->options, options) == 0 &&
            strcmp(e->src->text, source) == 0)
            return e;
    }
    if (gpo_grow(&pc->entries, sizeof *pc->entries, (size_t)pc->n, &pc->cap, 32))
        return NULL;
    const pc_source *src = intern(pc, source, sh);
    pc_entry *e = src ? calloc(1, sizeof *e) : NULL;
    if (!e || !(e->options = gpo_strdup(options))) {
        free(e);
        return NULL;
    }
    e->hash = h;
    e->src = src;
    e->state = E_NEW;
    pc->entries[pc->n++] = e;
    return e;
}

static void enqueue(gpo_progcache *pc, pc_entry *e, int front)
{
    /* Out of the queue first, when there (a get overtaking its prefetch). */
    for (pc_entry **p = &pc->qhead; *p; p = &(*p)->qnext)
        if (*p == e) {
            *p = e->qnext;
            break;
        }
    e->qnext = NULL;
    if (front) {
        e->qnext = pc->qhead;
        pc->qhead = e;
    } else {
        pc_entry **p = &pc->qhead;
        while (*p)
            p = &(*p)->qnext;
        *p = e;
    }
    e->state = E_QUEUED;
    pthread_cond_signal(&pc->work);
}

/* Frees least recently used programs past the bound. Only while no build
 * runs (progcache.h); with the lock held, so none can start. */
static void evict(gpo_progcache *pc)
{
    while (pc->n > pc->max_programs && !pc->building) {
        int32_t victim = -1;
        for (int32_t i = 0; i < pc->n; i++) {
            pc_entry *e = pc->entries[i];
            if (e->state == E_DONE && e->in_use == 0 &&
                (victim < 0 || e->last_use < pc->entries[victim]->last_use))
                victim = i;
        }
        if (victim < 0)
            return;
        entry_free(pc, pc->entries[victim]);
        pc->entries[victim] = pc->entries[--pc->n];
        pc->stats.evicted++;
    }
}

gpuopt_status gpo_progcache_prefetch(gpo_progcache *pc, const char *source, const char *options)
{
    assert(pc && source && options);
    if (!pc->threaded)
        return GPUOPT_OK;
    gpuopt_status st = GPUOPT_OK;
    pthread_mutex_lock(&pc->lock);
    pc_entry *e = entry_for(pc, source, options);
    if (!e) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory queueing a build");
    } else if (e->state == E_NEW) {
        enqueue(pc, e, 0);
        pc->stats.prefetched++;
    }
    pthread_mutex_unlock(&pc->lock);
    return st;
}

gpuopt_status gpo_progcache_get(gpo_progcache *pc, const char *source, const char *options,
                                gpo_rt_prog **prog, char **log, double *compile_ms)
{
    assert(pc && source && options && prog);
    *prog = NULL;
    if (log)
        *log = NULL;
    if (compile_ms)
        *compile_ms = -1;
    gpuopt_status st = GPUOPT_OK;
    pthread_mutex_lock(&pc->lock);
    pc_entry *e = entry_for(pc, source, options);
    if (!e) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory looking up a program");
        goto out;
    }
    if (e->state == E_DONE && e->handed)
        pc->stats.hits++;
    if (e->state == E_NEW || e->state == E_QUEUED) {
        if (pc->threaded) {
            enqueue(pc, e, 1);
        } else {
            /* Alone: no worker can look at the entry meanwhile. */
            built_t b;
            e->state = E_BUILDING;
            build(pc, e->src->text, e->options, &b);
            store(pc, e, &b);
        }
    }
    if (e->state != E_DONE) {
        uint64_t t0 = gpo_now_ns();
        while (e->state != E_DONE)
            pthread_cond_wait(&pc->done, &pc->lock);
        pc->stats.wait_ms += (double)(gpo_now_ns() - t0) / 1e6;
    }
    e->last_use = ++pc->tick;
    if (compile_ms && !e->handed)
        *compile_ms = e->build_ms;
    e->handed = 1;
    if (log && e->log && !(*log = gpo_strdup(e->log))) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory copying a build log");
        goto out;
    }
    if (e->status != GPUOPT_OK) {
        st = gpo_fail(e->status, "%s", e->detail ? e->detail : "the program did not build");
        goto out;
    }
    e->in_use++;
    *prog = e->prog;
    evict(pc);
out:
    pthread_mutex_unlock(&pc->lock);
    return st;
}

void gpo_progcache_release(gpo_progcache *pc, gpo_rt_prog *prog)
{
    if (!pc || !prog)
        return;
    pthread_mutex_lock(&pc->lock);
    for (int32_t i = 0; i < pc->n; i++)
        if (pc->entries[i]->prog == prog && pc->entries[i]->in_use > 0) {
            pc->entries[i]->in_use--;
            break;
        }
    evict(pc);
    pthread_mutex_unlock(&pc->lock);
}

void gpo_progcache_get_stats(gpo_progcache *pc, gpo_progcache_stats *out)
{
    assert(pc && out);
    pthread_mutex_lock(&pc->lock);
    *out = pc->stats;
    pthread_mutex_unlock(&pc->lock);
}
