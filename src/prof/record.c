/* Recording sections (record.h): the profiler object and the three calls a
 * program makes around its phases, which must cost well under 100 ns for
 * a host-timed section. The hot path takes no lock and makes no system
 * call but the clock read (a vDSO call on Linux): the calling thread's
 * state comes from a four-entry thread-local cache keyed by the
 * profiler's never-reused id, a name is found in the thread's own table
 * by (parent, hash) and confirmed with strcmp, and an ended section is
 * written to the thread's chunk and published with one release store.
 * Only the first section of a thread, or the first use of a name under a
 * parent, takes the profiler's lock. */
#include "record.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/detail.h"
#include "util/strutil.h"

static uint64_t host_clock(void *user)
{
    (void)user;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static atomic_uint_least64_t next_profiler_id = 1;

gpuopt_profiler *gpo_prof_new(int64_t max_sections)
{
    gpuopt_profiler *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    if (pthread_mutex_init(&p->lock, NULL) != 0) {
        free(p);
        return NULL;
    }
    if (pthread_mutex_init(&p->read_lock, NULL) != 0) {
        pthread_mutex_destroy(&p->lock);
        free(p);
        return NULL;
    }
    p->id = atomic_fetch_add(&next_profiler_id, 1);
    atomic_init(&p->enabled, 1);
    p->max_sections = max_sections;
    p->clock = host_clock;
    p->origin_ns = host_clock(NULL);
    p->log.level = GPUOPT_LOG_WARN;
    return p;
}

static void free_mark(gpuopt_profiler *p, gpo_rt_mark *m)
{
    if (m)
        p->timer.ops->mark_free(p->timer.backend_state, m);
}

void gpo_prof_free(gpuopt_profiler *p)
{
    if (!p)
        return;
    for (gpo_prof_thread *t = p->threads, *next; t; t = next) {
        next = t->next;
        uint64_t left = atomic_load(&t->published);
        for (gpo_prof_chunk *c = t->head, *cn; c; c = cn) {
            cn = c->next;
            for (uint64_t i = 0; i < GPO_PROF_CHUNK && i < left; i++) {
                if (!c->ev[i].extra)
                    continue;
                free_mark(p, c->ex[i].mark_start);
                free_mark(p, c->ex[i].mark_end);
            }
            left = left > GPO_PROF_CHUNK ? left - GPO_PROF_CHUNK : 0;
            free(c);
        }
        for (int d = 0; d < t->depth; d++)
            free_mark(p, t->stack[d].mark);
        free(t->map);
        free(t);
    }
    free_mark(p, p->anchor);
    for (uint32_t i = 0; i < p->n_nodes; i++)
        free((void *)p->nodes[i]);
    free(p->nodes);
    free(p->node_map);
    pthread_mutex_destroy(&p->read_lock);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

void gpo_prof_set_clock(gpuopt_profiler *p, gpo_prof_clock_fn clock, void *user)
{
    assert(p && clock && !p->threads);
    p->clock = clock;
    p->clock_user = user;
    p->origin_ns = clock(user);
}

uint64_t gpo_prof_now(const gpuopt_profiler *p)
{
    return p->clock(p->clock_user);
}

gpuopt_status gpo_prof_lists(gpuopt_profiler *p, gpo_prof_thread **threads, int32_t *n_threads,
                             const gpo_prof_node ***nodes, uint32_t *n_nodes)
{
    gpuopt_status st = GPUOPT_OK;
    pthread_mutex_lock(&p->lock);
    *threads = p->threads;
    *n_threads = p->n_threads;
    *n_nodes = p->n_nodes;
    *nodes = malloc((p->n_nodes ? p->n_nodes : 1) * sizeof **nodes);
    if (!*nodes)
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "profiler: out of memory reading its sections");
    else if (p->n_nodes)
        memcpy(*nodes, p->nodes, p->n_nodes * sizeof **nodes);
    pthread_mutex_unlock(&p->lock);
    return st;
}

/* ---- device marks ---------------------------------------------------------- */

static gpo_rt_mark *prof_mark(gpuopt_profiler *p)
{
    if (!p->timer.ops || atomic_load_explicit(&p->device_failed, memory_order_relaxed))
        return NULL;
    gpo_rt_mark *m = NULL;
    if (p->timer.ops->mark_record(p->timer.backend_state, p->timer.route, p->timer.stream, &m) ==
        GPUOPT_OK)
        return m;
    /* The first failure says why; later sections are host-timed. */
    pthread_mutex_lock(&p->lock);
    if (!atomic_load(&p->device_failed)) {
        gpo_snprintf(p->device_note, sizeof p->device_note,
                     "device time stopped at a section's mark, host time from then on: %s",
                     gpo_detail_get());
        atomic_store(&p->device_failed, 1);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* ---- names -------------------------------------------------------------------- */

/* FNV-1a of the name, its length, and whether it has a control character
 * (which no output format could carry as it is). */
static int scan_name(const char *name, uint64_t *hash, size_t *len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t n = 0;
    for (const unsigned char *s = (const unsigned char *)name; *s; s++, n++) {
        if (*s < 0x20 || *s == 0x7f)
            return -1;
        if (n == GPO_PROF_MAX_NAME)
            return -2;
        h = (h ^ *s) * 0x100000001b3ull;
    }
    *hash = h;
    *len = n;
    return n ? 0 : -3;
}

/* 1 when s[0, len) is well-formed UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF). */
static int utf8_ok(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        size_t more;
        unsigned min;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xc2 && c <= 0xdf) {
            more = 1, min = 0x80;
        } else if (c >= 0xe0 && c <= 0xef) {
            more = 2, min = 0x800;
        } else if (c >= 0xf0 && c <= 0xf4) {
            more = 3, min = 0x10000;
        } else {
            return 0;
        }
        if (more >= len - i)
            return 0;
        unsigned cp = c & (0x3f >> more);
        for (size_t k = 1; k <= more; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        i += more + 1;
    }
    return 1;
}

/* strcmp(a, b) == 0 for the short names sections have, inline: libc's
 * vector strcmp costs more in setting up than these compare. */
static inline int same_name(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

static uint32_t slot_of(const gpo_prof_node *parent, uint64_t hash, uint32_t cap)
{
    uint64_t k = hash ^ ((uint64_t)(uintptr_t)parent * 0x9e3779b97f4a7c15ull);
    return (uint32_t)(k ^ (k >> 29)) & (cap - 1);
}

static const gpo_prof_node *map_find(const gpo_prof_node *const *map, uint32_t cap,
                                     const gpo_prof_node *parent, uint64_t hash, const char *name)
{
    if (!cap)
        return NULL;
    for (uint32_t i = slot_of(parent, hash, cap);; i = (i + 1) & (cap - 1)) {
        const gpo_prof_node *n = map[i];
        if (!n)
            return NULL;
        if (n->hash == hash && n->parent == parent && same_name(n->name, name))
            return n;
    }
}

/* Adds `node` to a map holding `count` nodes, doubling it past half full.
 * -1 when out of memory (the map is unchanged). */
static int map_add(const gpo_prof_node ***map, uint32_t *cap, uint32_t count,
                   const gpo_prof_node *node)
{
    if ((count + 1) * 2 > *cap) {
        uint32_t ncap = *cap ? *cap * 2 : 64;
        const gpo_prof_node **nmap = calloc(ncap, sizeof *nmap);
        if (!nmap)
            return -1;
        for (uint32_t i = 0; i < *cap; i++) {
            const gpo_prof_node *n = (*map)[i];
            if (!n)
                continue;
            uint32_t j = slot_of(n->parent, n->hash, ncap);
            while (nmap[j])
                j = (j + 1) & (ncap - 1);
            nmap[j] = n;
        }
        free(*map);
        *map = nmap;
        *cap = ncap;
    }
    uint32_t j = slot_of(node->parent, node->hash, *cap);
    while ((*map)[j])
        j = (j + 1) & (*cap - 1);
    (*map)[j] = node;
    return 0;
}

/* The profiler's node for `name` under `parent`, made on first use. */
static gpuopt_status intern(gpuopt_profiler *p, const gpo_prof_node *parent, const char *name,
                            size_t len, uint64_t hash, const gpo_prof_node **out)
{
    if (!utf8_ok((const unsigned char *)name, len))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "gpuopt_profiler_begin: the section name is not valid UTF-8");
    gpuopt_status st = GPUOPT_OK;
    pthread_mutex_lock(&p->lock);
    const gpo_prof_node *n = map_find(p->node_map, p->node_map_cap, parent, hash, name);
    if (n)
        goto out;
    if (p->n_nodes >= GPO_PROF_MAX_NODES) {
        st = gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                      "gpuopt_profiler_begin(\"%s\"): the profiler already has %d distinct "
                      "sections (a name under a parent); a name that carries an id (a request "
                      "or frame number) makes one per id: put the id in a count instead",
                      name, GPO_PROF_MAX_NODES);
        goto out;
    }
    if (p->n_nodes == p->cap_nodes) {
        uint32_t ncap = p->cap_nodes ? p->cap_nodes * 2 : 64;
        const gpo_prof_node **nn = realloc((void *)p->nodes, ncap * sizeof *nn);
        if (!nn)
            goto oom;
        p->nodes = nn;
        p->cap_nodes = ncap;
    }
    gpo_prof_node *made = malloc(sizeof *made + len + 1);
    if (!made)
        goto oom;
    made->parent = parent;
    made->id = p->n_nodes;
    made->depth = parent ? parent->depth + 1 : 0;
    made->hash = hash;
    memcpy(made->name, name, len + 1);
    if (map_add(&p->node_map, &p->node_map_cap, p->n_nodes, made) != 0) {
        free(made);
        goto oom;
    }
    p->nodes[p->n_nodes++] = made;
    n = made;
    goto out;
oom:
    st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "gpuopt_profiler_begin: out of memory");
out:
    pthread_mutex_unlock(&p->lock);
    *out = n;
    return st;
}

/* ---- threads ------------------------------------------------------------------- */

typedef struct tls_slot {
    uint64_t profiler; /* gpuopt_profiler.id; 0: empty */
    gpo_prof_thread *thread;
} tls_slot;

static _Thread_local tls_slot tls_cache[4];
static _Thread_local unsigned tls_next;
static _Thread_local uint64_t tls_token;
static atomic_uint_least64_t next_token = 1;

/* The calling thread's state in `p`, made when `create` and there is none
 * (NULL then means out of memory; without `create`, none yet). */
static gpo_prof_thread *thread_slow(gpuopt_profiler *p, int create)
{
    if (!tls_token)
        tls_token = atomic_fetch_add(&next_token, 1);
    pthread_mutex_lock(&p->lock);
    gpo_prof_thread *t = p->threads;
    while (t && t->token != tls_token)
        t = t->next;
    if (!t && create && (t = calloc(1, sizeof *t)) != NULL) {
        t->token = tls_token;
        t->index = p->n_threads++;
        t->os_tid = (int32_t)syscall(SYS_gettid);
        if (pthread_getname_np(pthread_self(), t->name, sizeof t->name) != 0)
            t->name[0] = '\0';
        t->next = p->threads;
        p->threads = t;
    }
    pthread_mutex_unlock(&p->lock);
    if (t) {
        tls_slot *s = &tls_cache[tls_next++ & 3u];
        s->profiler = p->id;
        s->thread = t;
    }
    return t;
}

static inline gpo_prof_thread *thread_of(gpuopt_profiler *p, int create)
{
    for (int i = 0; i < 4; i++)
        if (tls_cache[i].profiler == p->id)
            return tls_cache[i].thread;
    return thread_slow(p, create);
}

/* ---- the calls ----------------------------------------------------------------- */

GPUOPT_API gpuopt_status gpuopt_profiler_begin(gpuopt_profiler *p, const char *name)
{
    if (!p)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_profiler_begin: prof is NULL");
    if (!atomic_load_explicit(&p->enabled, memory_order_relaxed))
        return GPUOPT_OK;
    if (!name)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_profiler_begin: name is NULL");
    uint64_t hash = 0;
    size_t len = 0;
    switch (scan_name(name, &hash, &len)) {
    case 0: break;
    case -1:
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "gpuopt_profiler_begin: the section name has a control character; names "
                        "are printable UTF-8");
    case -2:
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_profiler_begin: the section name is longer than %d bytes",
                        GPO_PROF_MAX_NAME);
    default:
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "gpuopt_profiler_begin: the section name is empty");
    }
    gpo_prof_thread *t = thread_of(p, 1);
    if (!t)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "gpuopt_profiler_begin: out of memory");
    if (t->depth >= GPO_PROF_MAX_DEPTH)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_profiler_begin(\"%s\"): %d sections are already open on this "
                        "thread, the most there may be (an end missing in a loop?); innermost: "
                        "\"%s\"",
                        name, GPO_PROF_MAX_DEPTH, t->stack[t->depth - 1].node->name);
    const gpo_prof_node *parent = t->depth ? t->stack[t->depth - 1].node : NULL;
    const gpo_prof_node *node = map_find(t->map, t->map_cap, parent, hash, name);
    if (!node) {
        gpuopt_status st = intern(p, parent, name, len, hash, &node);
        if (st)
            return st;
        /* Without room in the thread's table the name is looked up under
         * the lock again next time: slower, still right. */
        if (map_add(&t->map, &t->map_cap, t->map_n, node) == 0)
            t->map_n++;
    }
    gpo_prof_open *o = &t->stack[t->depth];
    o->node = node;
    o->items = o->bytes = 0;
    for (int i = 0; i < p->n_ranges; i++)
        p->ranges[i]->push(node->name);
    o->mark = p->timer.ops ? prof_mark(p) : NULL;
    o->start_ns = p->clock(p->clock_user);
    t->depth++;
    atomic_store_explicit(&t->open, t->depth, memory_order_relaxed);
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_profiler_count(gpuopt_profiler *p, int32_t unit, uint64_t amount)
{
    if (!p)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_profiler_count: prof is NULL");
    if (unit != GPUOPT_COUNT_ITEMS && unit != GPUOPT_COUNT_BYTES)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "gpuopt_profiler_count: unit %d is neither GPUOPT_COUNT_ITEMS (1) nor "
                        "GPUOPT_COUNT_BYTES (2)",
                        (int)unit);
    if (!atomic_load_explicit(&p->enabled, memory_order_relaxed))
        return GPUOPT_OK;
    gpo_prof_thread *t = thread_of(p, 0);
    if (!t || t->depth == 0) {
        atomic_fetch_add(&p->nesting_errors, 1);
        return gpo_fail(GPUOPT_ERR_NESTING,
                        "gpuopt_profiler_count: no section is open on this thread to count into");
    }
    uint64_t *sum =
        unit == GPUOPT_COUNT_ITEMS ? &t->stack[t->depth - 1].items : &t->stack[t->depth - 1].bytes;
    *sum = *sum > UINT64_MAX - amount ? UINT64_MAX : *sum + amount;
    return GPUOPT_OK;
}

/* Why `name` cannot end now on thread `t` (whose innermost is another). */
static gpuopt_status wrong_end(gpuopt_profiler *p, const gpo_prof_thread *t, const char *name)
{
    atomic_fetch_add(&p->nesting_errors, 1);
    const char *inner = t->stack[t->depth - 1].node->name;
    for (int d = t->depth - 2; d >= 0; d--)
        if (strcmp(t->stack[d].node->name, name) == 0)
            return gpo_fail(GPUOPT_ERR_NESTING,
                            "gpuopt_profiler_end(\"%s\"): \"%s\" was begun inside it and is "
                            "still open on this thread: end \"%s\" first",
                            name, inner, inner);
    return gpo_fail(GPUOPT_ERR_NESTING,
                    "gpuopt_profiler_end(\"%.255s\"): no section of that name is open on this "
                    "thread; the innermost open one is \"%s\"",
                    name, inner);
}

GPUOPT_API gpuopt_status gpuopt_profiler_end(gpuopt_profiler *p, const char *name)
{
    if (!p)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_profiler_end: prof is NULL");
    if (!atomic_load_explicit(&p->enabled, memory_order_relaxed))
        return GPUOPT_OK;
    uint64_t end_ns = p->clock(p->clock_user);
    gpo_prof_thread *t = thread_of(p, 0);
    if (!t || t->depth == 0) {
        atomic_fetch_add(&p->nesting_errors, 1);
        return gpo_fail(GPUOPT_ERR_NESTING,
                        "gpuopt_profiler_end(%s%.255s%s): no section is open on this thread "
                        "(sections end on the thread that began them)",
                        name ? "\"" : "", name ? name : "NULL", name ? "\"" : "");
    }
    gpo_prof_open *o = &t->stack[t->depth - 1];
    /* Always by content: a pointer equal to begin's may hold other text by
     * now (a binding's temporary buffer, freed and reused). */
    if (name && !same_name(name, o->node->name))
        return wrong_end(p, t, name);

    /* Room for the section: a chunk holds GPO_PROF_CHUNK, and taking one
     * reserves as many from max_sections, so most ends touch no shared
     * counter. Out of memory, nothing changes. */
    if (!t->tail || t->tail_n == GPO_PROF_CHUNK) {
        int64_t want = GPO_PROF_CHUNK;
        int64_t was = atomic_fetch_add_explicit(&p->kept, want, memory_order_relaxed);
        int64_t got = was >= p->max_sections         ? 0
                      : p->max_sections - was < want ? p->max_sections - was
                                                     : want;
        gpo_prof_chunk *c = got ? malloc(sizeof *c) : NULL;
        if (got && !c) {
            atomic_fetch_sub_explicit(&p->kept, want, memory_order_relaxed);
            return gpo_fail(GPUOPT_ERR_NO_MEMORY,
                            "gpuopt_profiler_end(\"%s\"): out of memory; the section stays open",
                            o->node->name);
        }
        if (c) {
            c->next = NULL;
            if (t->tail)
                t->tail->next = c;
            else
                t->head = c;
            t->tail = c;
            t->tail_n = 0;
        }
        t->quota = (uint32_t)got;
    }
    gpo_rt_mark *mark_end = o->mark ? prof_mark(p) : NULL;
    for (int i = p->n_ranges - 1; i >= 0; i--)
        p->ranges[i]->pop();
    t->depth--;
    atomic_store_explicit(&t->open, t->depth, memory_order_relaxed);
    if (!t->quota) {
        atomic_fetch_add_explicit(&p->dropped, 1, memory_order_relaxed);
        free_mark(p, o->mark);
        free_mark(p, mark_end);
        return GPUOPT_OK;
    }
    t->quota--;
    if (!mark_end && o->mark) {
        /* Device time stopped during this section: it is host-timed. */
        free_mark(p, o->mark);
        o->mark = NULL;
    }
    uint32_t j = t->tail_n++;
    gpo_prof_event *e = &t->tail->ev[j];
    e->start_ns = o->start_ns;
    e->end_ns = end_ns;
    e->node = o->node->id;
    e->extra = o->items || o->bytes || o->mark;
    if (e->extra) {
        gpo_prof_extra *x = &t->tail->ex[j];
        x->items = o->items;
        x->bytes = o->bytes;
        x->mark_start = o->mark;
        x->mark_end = mark_end;
        x->device_start_ns = -1.0;
        x->device_ns = -1.0;
    }
    atomic_store_explicit(&t->published,
                          atomic_load_explicit(&t->published, memory_order_relaxed) + 1,
                          memory_order_release);
    return GPUOPT_OK;
}
