/* Reading a profile out of a live profiler (snapshot.h). */
#include "snapshot.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/detail.h"
#include "util/strutil.h"

/* Reads the device time of `e` from its marks and frees them; the first
 * failure goes to the note. */
static void read_marks(gpuopt_profiler *p, gpo_prof_extra *e, char *note, size_t cap)
{
    const gpo_runtime_ops *ops = p->timer.ops;
    double ns = -1.0, off = -1.0;
    gpuopt_status st = ops->mark_elapsed(p->timer.backend_state, e->mark_start, e->mark_end, &ns);
    if (!st && p->anchor)
        st = ops->mark_elapsed(p->timer.backend_state, p->anchor, e->mark_start, &off);
    if (st) {
        if (!*note)
            gpo_snprintf(note, cap,
                         "reading a section's device time failed, so it is host-timed: %s",
                         gpo_detail_get());
    } else {
        e->device_ns = ns;
        e->device_start_ns = (double)(p->anchor_ns - p->origin_ns) + off;
    }
    ops->mark_free(p->timer.backend_state, e->mark_start);
    ops->mark_free(p->timer.backend_state, e->mark_end);
    e->mark_start = e->mark_end = NULL;
}

static int by_thread_start_depth(const void *a, const void *b, void *nodes)
{
    const gpo_prof_snap_event *x = a, *y = b;
    const gpo_prof_snap_node *n = nodes;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    if (n[x->node].depth != n[y->node].depth)
        return n[x->node].depth < n[y->node].depth ? -1 : 1;
    return 0;
}

gpuopt_status gpo_prof_snapshot_take(gpuopt_profiler *p, int marks, gpo_prof_snapshot *s)
{
    assert(p && s);
    memset(s, 0, sizeof *s);
    s->p = p;
    s->pid = (int32_t)getpid();
    gpo_prof_thread *threads = NULL;
    const gpo_prof_node **nodes = NULL;
    int left_marks = 0;

    pthread_mutex_lock(&p->read_lock);
    gpuopt_status st = gpo_prof_lists(p, &threads, &s->n_threads, &nodes, &s->n_nodes);
    if (st)
        goto out;
    /* Each thread's published count, read once: what this snapshot holds. */
    uint64_t *counts = calloc(s->n_threads ? (size_t)s->n_threads : 1, sizeof *counts);
    s->threads = calloc(s->n_threads ? (size_t)s->n_threads : 1, sizeof *s->threads);
    if (!counts || !s->threads) {
        free(counts);
        goto oom;
    }
    size_t total = 0;
    int32_t k = 0;
    for (gpo_prof_thread *t = threads; t && k < s->n_threads; t = t->next, k++) {
        counts[k] = atomic_load_explicit(&t->published, memory_order_acquire);
        total += counts[k];
        gpo_prof_snap_thread *st_ = &s->threads[t->index];
        st_->os_tid = t->os_tid;
        memcpy(st_->name, t->name, sizeof st_->name);
        st_->open = atomic_load_explicit(&t->open, memory_order_relaxed);
        s->open += st_->open;
    }
    /* The sections, listed after the counts were read: an event those counts
     * hold names a section begun before the event was published (its
     * release, the acquire above), so this list has it. Listed before the
     * counts, a thread could begin a section and publish an event in it in
     * between, and the event would name a section the snapshot lacks (the
     * ASan run of prof_threads read past the sums in gpo_prof_rows). */
    gpo_prof_thread *ignored;
    int32_t n_ignored;
    free(nodes);
    nodes = NULL;
    if ((st = gpo_prof_lists(p, &ignored, &n_ignored, &nodes, &s->n_nodes)) != GPUOPT_OK) {
        free(counts);
        gpo_prof_snapshot_free(s);
        goto out;
    }
    s->nodes = calloc(s->n_nodes ? s->n_nodes : 1, sizeof *s->nodes);
    s->events = malloc((total ? total : 1) * sizeof *s->events);
    if (!s->nodes || !s->events) {
        free(counts);
        goto oom;
    }
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        s->nodes[i].name = nodes[i]->name;
        s->nodes[i].parent = nodes[i]->parent ? (int32_t)nodes[i]->parent->id : -1;
        s->nodes[i].depth = nodes[i]->depth;
    }
    k = 0;
    for (gpo_prof_thread *t = threads; t && k < s->n_threads; t = t->next, k++) {
        /* Only as far as the count read: a chunk's link and the list's
         * head are written before the first event in that chunk is
         * published, and not read here before that event is needed. */
        gpo_prof_chunk *c = counts[k] ? t->head : NULL;
        for (uint64_t i = 0; i < counts[k]; c = i < counts[k] ? c->next : c) {
            for (uint32_t j = 0; j < GPO_PROF_CHUNK && i < counts[k]; j++, i++) {
                const gpo_prof_event *e = &c->ev[j];
                gpo_prof_extra *x = e->extra ? &c->ex[j] : NULL;
                if (x && x->mark_start && x->mark_end) {
                    if (marks)
                        read_marks(p, x, s->device_note, sizeof s->device_note);
                    else
                        left_marks = 1;
                }
                gpo_prof_snap_event *o = &s->events[s->n_events++];
                o->node = e->node;
                o->thread = t->index;
                o->start_ns = (double)(e->start_ns - p->origin_ns);
                o->dur_ns = (double)(e->end_ns - e->start_ns);
                o->device_start_ns = x ? x->device_start_ns : -1.0;
                o->device_ns = x ? x->device_ns : -1.0;
                o->items = x ? x->items : 0;
                o->bytes = x ? x->bytes : 0;
                if (o->device_ns >= 0)
                    s->device_timed++;
                if (s->n_events == 1 || o->start_ns < s->first_ns)
                    s->first_ns = o->start_ns;
                if (o->start_ns + o->dur_ns > s->last_ns)
                    s->last_ns = o->start_ns + o->dur_ns;
            }
        }
    }
    free(counts);
    qsort_r(s->events, s->n_events, sizeof *s->events, by_thread_start_depth, s->nodes);
    s->now_ns = (double)(gpo_prof_now(p) - p->origin_ns);
    s->dropped = atomic_load(&p->dropped);
    s->nesting_errors = atomic_load(&p->nesting_errors);
    if (p->device_asked && !p->timer.ops)
        gpo_strlcpy(s->device_note, p->device_note, sizeof s->device_note);
    else if (!*s->device_note && atomic_load(&p->device_failed)) {
        pthread_mutex_lock(&p->lock);
        gpo_strlcpy(s->device_note, p->device_note, sizeof s->device_note);
        pthread_mutex_unlock(&p->lock);
    }
    if (left_marks && !*s->device_note)
        gpo_snprintf(s->device_note, sizeof s->device_note,
                     "written at process exit: device times were not read (the driver may "
                     "already be shut down), so sections not read before are host-timed");
    goto out;
oom:
    st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "profiler: out of memory reading the profile");
    gpo_prof_snapshot_free(s);
out:
    pthread_mutex_unlock(&p->read_lock);
    free(nodes);
    return st;
}

void gpo_prof_snapshot_free(gpo_prof_snapshot *s)
{
    free(s->nodes);
    free(s->threads);
    free(s->events);
    memset(s, 0, sizeof *s);
}
