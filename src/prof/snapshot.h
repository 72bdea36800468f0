/* A profile as the writers read it (snapshot.c): the sections ended so
 * far, copied out of the threads' chunks, sorted, and with device times
 * read from their marks. The writers (summary.c, trace.c, svg.c) read
 * only this, never the live profiler. */
#ifndef GPO_PROF_SNAPSHOT_H
#define GPO_PROF_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

typedef struct gpo_prof_snap_event {
    uint32_t node;   /* id: index into nodes[] */
    int32_t thread;  /* index into threads[] */
    double start_ns; /* host clock, since the profiler was created */
    double dur_ns;
    double device_start_ns; /* device timeline placed on the host's, since creation; -1: none */
    double device_ns;       /* device time; -1: host-timed */
    uint64_t items, bytes;
} gpo_prof_snap_event;

typedef struct gpo_prof_snap_node {
    const char *name; /* lives as long as the profiler */
    int32_t parent;   /* id, -1 at top level */
    uint32_t depth;
} gpo_prof_snap_node;

typedef struct gpo_prof_snap_thread {
    int32_t os_tid;
    char name[16]; /* "" when the thread had none */
    int32_t open;  /* sections open on it now */
} gpo_prof_snap_thread;

typedef struct gpo_prof_snapshot {
    const gpuopt_profiler *p; /* its tools, device and clock words */
    gpo_prof_snap_node *nodes;
    uint32_t n_nodes;
    gpo_prof_snap_thread *threads; /* by the thread's index */
    int32_t n_threads;
    gpo_prof_snap_event *events; /* by thread, then start, outer before inner */
    size_t n_events;
    double first_ns, last_ns; /* earliest start, latest end (host); 0 without events */
    double now_ns;            /* when taken, since creation */
    uint64_t dropped, nesting_errors;
    int64_t open;          /* sections open on every thread */
    int device_timed;      /* sections with device time */
    char device_note[640]; /* why device time was not used, or what failed; "" */
    int32_t pid;
} gpo_prof_snapshot;

/* Takes a snapshot of `p`. With `read_marks`, device marks not read yet
 * are read (waiting for their stream) and freed; without, they are left
 * and the sections count as host-timed here (the note says so). Readers
 * are serialised; recording goes on meanwhile. GPUOPT_ERR_NO_MEMORY
 * leaves nothing to free. */
gpuopt_status gpo_prof_snapshot_take(gpuopt_profiler *p, int read_marks, gpo_prof_snapshot *s);
void gpo_prof_snapshot_free(gpo_prof_snapshot *s);

/* The duration the summary uses for an event: the device's when it has
 * one, else the host's. */
static inline double gpo_prof_event_ns(const gpo_prof_snap_event *e)
{
    return e->device_ns >= 0 ? e->device_ns : e->dur_ns;
}

#endif
