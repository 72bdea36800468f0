/* The one registry of runtime objects (buffers, programs, kernels, pinned
 * host blocks) for every backend with runtime ops (src/backend.h).
 *
 * The core hands a backend's runtime its own handles back; a caller's bug
 * can hand back one that was freed, or one of another session. A runtime
 * must refuse such a handle *without reading it*, because reading it is
 * exactly the use-after-free the check exists to prevent. So a handle is
 * never dereferenced to validate it: gpo_rt_objects_owns compares addresses
 * against the session's live objects, as the Khronos ICD loader validates
 * handles once in its dispatch layer rather than trusting a field inside
 * the object.
 *
 * Objects are intrusive: a backend's object struct starts with a
 * gpo_rt_obj, so registering allocates nothing and cannot fail. A session
 * holds a handful of objects at a time (tier 2 and the tuner create a few
 * per candidate), so the walk is short. The registry has its own lock:
 * OpenCL builds programs on a second thread while launches run
 * (gpo_runtime_ops.builds_alongside_launches). */
#ifndef GPO_RT_OBJECTS_H
#define GPO_RT_OBJECTS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "gpuopt/gpuopt.h"

struct gpo_rt; /* a backend's session (src/backend.h) */

typedef enum gpo_rt_kind {
    GPO_RT_BUFFER = 0,
    GPO_RT_PROGRAM = 1,
    GPO_RT_KERNEL = 2,
    GPO_RT_PINNED = 3,
    GPO_RT_KINDS = 4
} gpo_rt_kind;

/* The first member of every registered backend object. */
typedef struct gpo_rt_obj {
    struct gpo_rt_obj *prev, *next;
    int32_t kind; /* gpo_rt_kind while registered, -1 once removed */
    /* What this object dies with, set before it is added: a CUDA or HIP
     * kernel's program, whose module holds its code. NULL: nothing. */
    const void *owner;
} gpo_rt_obj;

typedef struct gpo_rt_objects {
    gpo_rt_obj heads[GPO_RT_KINDS]; /* sentinels of circular lists */
    pthread_mutex_t lock;
} gpo_rt_objects;

void gpo_rt_objects_init(gpo_rt_objects *r);
/* Every object must have been removed first (close() pops them). */
void gpo_rt_objects_destroy(gpo_rt_objects *r);

void gpo_rt_objects_add(gpo_rt_objects *r, gpo_rt_obj *o, gpo_rt_kind kind);
/* Unregisters `o`, which must be registered here. */
void gpo_rt_objects_remove(gpo_rt_objects *r, gpo_rt_obj *o);

/* 1 when `handle` is a live object of `kind` in this registry; 0 for NULL,
 * a freed handle, another session's, or another kind. Never reads
 * *handle. */
int gpo_rt_objects_owns(gpo_rt_objects *r, const void *handle, gpo_rt_kind kind);

/* gpo_rt_objects_owns as an op's first check: GPUOPT_OK, or
 * GPUOPT_ERR_INVALID_ARGUMENT in words ("cuda:0 launch: not a kernel of
 * this session (NULL, freed, or another session's)"). */
gpuopt_status gpo_rt_objects_check(gpo_rt_objects *r, const void *handle, gpo_rt_kind kind,
                                   const char *what, const char *op);

/* The first live object of `kind` that `match` accepts, or NULL: for what
 * is not found by its own address (a pinned block by its host address, a
 * program's kernels by their owner). `match` sees registered objects only, so it may read
 * them; it runs under the registry's lock and must not call back into it. */
gpo_rt_obj *gpo_rt_objects_find(gpo_rt_objects *r, gpo_rt_kind kind,
                                int (*match)(const gpo_rt_obj *o, const void *arg),
                                const void *arg);

/* Removes and returns the first live object of `kind` that `match`
 * accepts (any, when `match` is NULL), or NULL. */
gpo_rt_obj *gpo_rt_objects_take(gpo_rt_objects *r, gpo_rt_kind kind,
                                int (*match)(const gpo_rt_obj *o, const void *arg),
                                const void *arg);

/* Pinned host memory: a backend's record of it starts with this. The
 * caller holds the host address, not the record. */
typedef struct gpo_rt_pinned {
    gpo_rt_obj obj;
    void *ptr; /* the host address handed out */
} gpo_rt_pinned;

/* The live pinned block at host address `ptr` (NULL: none), or NULL: a
 * freed or foreign address matches no live block. */
gpo_rt_pinned *gpo_rt_objects_pinned(gpo_rt_objects *r, const void *ptr);

/* Releases what the vendor holds for one unregistered object of a
 * session; the registry then frees the object (malloc'd) itself. */
typedef void (*gpo_rt_destroy_fn)(struct gpo_rt *rt, gpo_rt_obj *o);

/* Unregisters `o`, registered here, and destroys it with destroy[kind]
 * (NULL: nothing to release) and free(), after the objects it owns. */
void gpo_rt_objects_release(gpo_rt_objects *r, struct gpo_rt *rt, gpo_rt_obj *o,
                            const gpo_rt_destroy_fn destroy[GPO_RT_KINDS]);

/* A session's close(): takes every object the caller left and destroys it
 * as gpo_rt_objects_release does, kernels before the programs
 * they come from, then pinned and device memory. */
void gpo_rt_objects_clear(gpo_rt_objects *r, struct gpo_rt *rt,
                          const gpo_rt_destroy_fn destroy[GPO_RT_KINDS]);

/* Live objects of `kind` (tests count leaks with it). */
size_t gpo_rt_objects_count(gpo_rt_objects *r, gpo_rt_kind kind);

#endif
