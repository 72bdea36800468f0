/* The runtime-object registry: see objects.h for why a handle is looked up
 * by address and never read. */
#include "rt/objects.h"

#include <assert.h>
#include <stdlib.h>

#include "util/detail.h"

void gpo_rt_objects_init(gpo_rt_objects *r)
{
    for (int k = 0; k < GPO_RT_KINDS; k++) {
        r->heads[k].prev = r->heads[k].next = &r->heads[k];
        r->heads[k].kind = k;
    }
    pthread_mutex_init(&r->lock, NULL);
}

void gpo_rt_objects_destroy(gpo_rt_objects *r)
{
    for (int k = 0; k < GPO_RT_KINDS; k++)
        assert(r->heads[k].next == &r->heads[k]);
    pthread_mutex_destroy(&r->lock);
}

void gpo_rt_objects_add(gpo_rt_objects *r, gpo_rt_obj *o, gpo_rt_kind kind)
{
    assert(kind >= 0 && kind < GPO_RT_KINDS);
    pthread_mutex_lock(&r->lock);
    gpo_rt_obj *head = &r->heads[kind];
    o->kind = kind;
    o->prev = head;
    o->next = head->next;
    head->next->prev = o;
    head->next = o;
    pthread_mutex_unlock(&r->lock);
}

static void unlink_obj(gpo_rt_obj *o)
{
    o->prev->next = o->next;
    o->next->prev = o->prev;
    o->prev = o->next = NULL;
    o->kind = -1;
}

void gpo_rt_objects_remove(gpo_rt_objects *r, gpo_rt_obj *o)
{
    pthread_mutex_lock(&r->lock);
    assert(o->kind >= 0 && o->prev && o->next);
    unlink_obj(o);
    pthread_mutex_unlock(&r->lock);
}

/* The first live object of `kind` that `match` accepts (any, for NULL),
 * unlinked when `take`. */
static gpo_rt_obj *first(gpo_rt_objects *r, gpo_rt_kind kind,
                         int (*match)(const gpo_rt_obj *o, const void *arg), const void *arg,
                         int take)
{
    gpo_rt_obj *found = NULL;
    pthread_mutex_lock(&r->lock);
    for (gpo_rt_obj *o = r->heads[kind].next; o != &r->heads[kind]; o = o->next)
        if (!match || match(o, arg)) {
            found = o;
            if (take)
                unlink_obj(o);
            break;
        }
    pthread_mutex_unlock(&r->lock);
    return found;
}

static int is_obj(const gpo_rt_obj *o, const void *handle)
{
    return (const void *)o == handle;
}

int gpo_rt_objects_owns(gpo_rt_objects *r, const void *handle, gpo_rt_kind kind)
{
    if (!r || !handle || kind < 0 || kind >= GPO_RT_KINDS)
        return 0;
    return first(r, kind, is_obj, handle, 0) != NULL;
}

gpuopt_status gpo_rt_objects_check(gpo_rt_objects *r, const void *handle, gpo_rt_kind kind,
                                   const char *what, const char *op)
{
    static const char *const names[GPO_RT_KINDS] = {"buffer", "program", "kernel", "pinned block"};
    if (gpo_rt_objects_owns(r, handle, kind))
        return GPUOPT_OK;
    return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                    "%s %s: not a %s of this session (NULL, freed, or another session's)", what, op,
                    names[kind]);
}

gpo_rt_obj *gpo_rt_objects_find(gpo_rt_objects *r, gpo_rt_kind kind,
                                int (*match)(const gpo_rt_obj *o, const void *arg), const void *arg)
{
    assert(kind >= 0 && kind < GPO_RT_KINDS && match);
    return first(r, kind, match, arg, 0);
}

gpo_rt_obj *gpo_rt_objects_take(gpo_rt_objects *r, gpo_rt_kind kind,
                                int (*match)(const gpo_rt_obj *o, const void *arg), const void *arg)
{
    assert(kind >= 0 && kind < GPO_RT_KINDS);
    return first(r, kind, match, arg, 1);
}

static int pinned_at(const gpo_rt_obj *o, const void *ptr)
{
    return ((const gpo_rt_pinned *)o)->ptr == ptr;
}

gpo_rt_pinned *gpo_rt_objects_pinned(gpo_rt_objects *r, const void *ptr)
{
    return ptr ? (gpo_rt_pinned *)gpo_rt_objects_find(r, GPO_RT_PINNED, pinned_at, ptr) : NULL;
}

static void destroy_obj(struct gpo_rt *rt, gpo_rt_obj *o, gpo_rt_kind kind,
                        const gpo_rt_destroy_fn destroy[GPO_RT_KINDS])
{
    if (destroy[kind])
        destroy[kind](rt, o);
    free(o);
}

static int owned_by(const gpo_rt_obj *o, const void *owner)
{
    return o->owner == owner;
}

void gpo_rt_objects_release(gpo_rt_objects *r, struct gpo_rt *rt, gpo_rt_obj *o,
                            const gpo_rt_destroy_fn destroy[GPO_RT_KINDS])
{
    gpo_rt_kind kind = (gpo_rt_kind)o->kind;
    for (int k = 0; k < GPO_RT_KINDS; k++)
        for (gpo_rt_obj *child; (child = gpo_rt_objects_take(r, k, owned_by, o));)
            destroy_obj(rt, child, k, destroy);
    gpo_rt_objects_remove(r, o);
    destroy_obj(rt, o, kind, destroy);
}

void gpo_rt_objects_clear(gpo_rt_objects *r, struct gpo_rt *rt,
                          const gpo_rt_destroy_fn destroy[GPO_RT_KINDS])
{
    static const gpo_rt_kind order[] = {GPO_RT_KERNEL, GPO_RT_PROGRAM, GPO_RT_PINNED,
                                        GPO_RT_BUFFER};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        for (gpo_rt_obj *o; (o = gpo_rt_objects_take(r, order[i], NULL, NULL));)
            destroy_obj(rt, o, order[i], destroy);
}

size_t gpo_rt_objects_count(gpo_rt_objects *r, gpo_rt_kind kind)
{
    size_t n = 0;
    pthread_mutex_lock(&r->lock);
    for (const gpo_rt_obj *o = r->heads[kind].next; o != &r->heads[kind]; o = o->next)
        n++;
    pthread_mutex_unlock(&r->lock);
    return n;
}
