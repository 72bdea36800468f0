/* The profiler's recording layer (record.c): the profiler object, each
 * thread's stack of open sections, the interned section names, and the
 * ended sections each thread publishes for readers. gpuopt_profiler_begin,
 * _count and _end live there, beside the data they touch; everything that
 * reads a profile (snapshot.c and the writers above it) reads what this
 * layer publishes and never writes to it.
 *
 * Concurrency. A thread's stack, name lookup and write position are the
 * thread's own: begin and end take no lock. Ended sections go to chunks a
 * thread fills in order and publishes with one release store of its
 * count; a reader loads the count (acquire) and reads that many. Chunks
 * and names are never moved or freed before the profiler, so a reader
 * holds pointers into them safely. The profiler's lock guards only the
 * list of threads and the table of names, taken the first time a thread
 * or a name is seen. */
#ifndef GPO_PROF_RECORD_H
#define GPO_PROF_RECORD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "backend.h"
#include "gpuopt/gpuopt.h"
#include "util/fs.h"
#include "util/log.h"

#define GPO_PROF_MAX_NAME 255    /* bytes of a section name */
#define GPO_PROF_MAX_DEPTH 256   /* open sections on one thread */
#define GPO_PROF_MAX_NODES 65536 /* distinct sections (name under parent) */
#define GPO_PROF_MAX_TOOLS 4     /* vendor tools a profiler forwards to */
#define GPO_PROF_CHUNK 1024      /* ended sections per chunk */

/* A section as the summary knows it: a name under a parent. Interned once
 * per profiler and kept until it is destroyed. */
typedef struct gpo_prof_node {
    const struct gpo_prof_node *parent; /* NULL: top level */
    uint32_t id;                        /* 0, 1, ... in the order first begun */
    uint32_t depth;                     /* 0 at top level */
    uint64_t hash;                      /* of the name */
    char name[];
} gpo_prof_node;

/* One ended section: 24 bytes, so a program that records millions of
 * host-timed sections touches little memory (the first write to a page
 * costs a page fault, which dominates an end() otherwise). What only some
 * sections have lives in the chunk's `ex` array beside it, whose pages are
 * never touched when no section uses them. */
typedef struct gpo_prof_event {
    uint64_t start_ns, end_ns; /* host clock, absolute */
    uint32_t node;             /* gpo_prof_node.id */
    uint32_t extra;            /* 1: ex[] at the same index holds counts or marks */
} gpo_prof_event;

/* Counts and device time of a section that has them. The device fields
 * are filled when a reader first reads the marks (snapshot.c), which it
 * then frees. */
typedef struct gpo_prof_extra {
    uint64_t items, bytes;   /* gpuopt_profiler_count */
    gpo_rt_mark *mark_start; /* NULL: host-timed, or already read */
    gpo_rt_mark *mark_end;
    double device_start_ns; /* on the host timeline (the anchor's); -1: none */
    double device_ns;       /* device time; -1: host-timed */
} gpo_prof_extra;

typedef struct gpo_prof_chunk {
    struct gpo_prof_chunk *next; /* set before the first event in it is published */
    gpo_prof_event ev[GPO_PROF_CHUNK];
    gpo_prof_extra ex[GPO_PROF_CHUNK];
} gpo_prof_chunk;

/* An open section. */
typedef struct gpo_prof_open {
    const gpo_prof_node *node;
    uint64_t start_ns;
    uint64_t items, bytes;
    gpo_rt_mark *mark;
} gpo_prof_open;

/* A thread that recorded into a profiler. */
typedef struct gpo_prof_thread {
    struct gpo_prof_thread *next; /* the profiler's list; set before publishing */
    uint64_t token;               /* the thread's process-unique number */
    int32_t index;                /* 0, 1, ... in the order threads first began */
    int32_t os_tid;               /* gettid() */
    char name[16];                /* pthread_getname_np, "" when none */

    /* The owning thread's alone. */
    gpo_prof_open stack[GPO_PROF_MAX_DEPTH];
    int depth;
    const gpo_prof_node **map; /* open addressing, keyed by (parent, name) */
    uint32_t map_cap, map_n;
    gpo_prof_chunk *tail;
    uint32_t tail_n; /* events in tail */
    uint32_t quota;  /* sections this thread may still keep before asking for more */

    /* What readers see. */
    gpo_prof_chunk *head;       /* first chunk, set before the first publish */
    _Atomic uint64_t published; /* events readable, in order from head */
    atomic_int open;            /* depth, for "sections still open" */
} gpo_prof_thread;

typedef uint64_t (*gpo_prof_clock_fn)(void *user);

/* Device time on the caller's stream (backend.h, mark_*). */
typedef struct gpo_prof_timer {
    const gpo_runtime_ops *ops; /* NULL: host time only */
    void *backend_state;
    const gpo_route *route;
    void *stream;
} gpo_prof_timer;

/* A vendor tool a profiler forwards to, or one that is absent. */
typedef struct gpo_prof_tool {
    const char *tool; /* "nvtx" */
    int attached;
    char note[512];
} gpo_prof_tool;

struct gpuopt_profiler {
    uint64_t id; /* process-unique, never reused: keys the threads' caches */
    atomic_int enabled;
    int64_t max_sections;
    gpo_prof_clock_fn clock;
    void *clock_user;
    uint64_t origin_ns; /* creation, on `clock` */

    pthread_mutex_t lock; /* threads and names below */
    gpo_prof_thread *threads;
    int32_t n_threads;
    const gpo_prof_node **nodes; /* by id */
    uint32_t n_nodes, cap_nodes;
    const gpo_prof_node **node_map; /* open addressing, keyed by (parent, name) */
    uint32_t node_map_cap;

    _Atomic int64_t kept; /* sections the threads' quotas took from max_sections */
    _Atomic uint64_t dropped;
    _Atomic uint64_t nesting_errors;

    /* Vendor ranges: the attached tools' ops, in order; every tool looked
     * at, attached or not, for the outputs. */
    const gpo_range_ops *ranges[GPO_PROF_MAX_TOOLS];
    int n_ranges;
    gpo_prof_tool tools[GPO_PROF_MAX_TOOLS];
    int n_tools;

    /* Device time: asked for (a stream was given), and whether it works. */
    int device_asked;
    gpo_prof_timer timer;      /* ops NULL: host time */
    atomic_int device_failed;  /* 1 after a mark failed: host time from then on */
    char device_clock[160];    /* "cuda:0 events on the caller's stream" */
    char device_note[512];     /* why not, or what failed */
    pthread_mutex_t read_lock; /* readers: one resolves the marks at a time */
    gpo_rt_mark *anchor;       /* the first mark, the device timeline's zero */
    uint64_t anchor_ns;        /* its host time */

    char device_id[32]; /* "cuda:0", "" without a device */
    gpo_logger log;
    char trace_path[GPO_PATH_MAX]; /* written at destroy/exit; "" none */
};

/* A new profiler with the host clock, nothing recorded; NULL when out of
 * memory. The caller fills the tools, timer and paths. */
gpuopt_profiler *gpo_prof_new(int64_t max_sections);

/* Frees every thread, chunk, name and unread mark. */
void gpo_prof_free(gpuopt_profiler *p);

/* Tests: time sections with `clock` instead of CLOCK_MONOTONIC. Before any
 * section is recorded; resets the origin. */
void gpo_prof_set_clock(gpuopt_profiler *p, gpo_prof_clock_fn clock, void *user);

/* The host clock now, on the profiler's clock. */
uint64_t gpo_prof_now(const gpuopt_profiler *p);

/* The profiler's threads and names as they are now, for readers:
 * *threads gets the list's head (threads are only ever added in front, so
 * the list from it stays valid) and *n_threads its length; *nodes a
 * malloc'd copy of the names by id (caller frees) and *n_nodes their
 * number. GPUOPT_ERR_NO_MEMORY leaves *nodes NULL. */
gpuopt_status gpo_prof_lists(gpuopt_profiler *p, gpo_prof_thread **threads, int32_t *n_threads,
                             const gpo_prof_node ***nodes, uint32_t *n_nodes);

#endif
