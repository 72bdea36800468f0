/* A profile as Chrome trace-event JSON (trace.c), the format Perfetto
 * (ui.perfetto.dev) and chrome://tracing open: one track per thread with
 * its sections as nested complete ("X") events, one device track per
 * thread that timed sections on a stream, and a counter track of each
 * counted section's throughput. docs/profiler.md shows an example. */
#ifndef GPO_PROF_TRACE_H
#define GPO_PROF_TRACE_H

#include "snapshot.h"

/* The trace, malloc'd; NULL with the detail set when out of memory. */
char *gpo_prof_trace_json(const gpo_prof_snapshot *s);

/* Thread ids of the device tracks: above any Linux thread id (pid_max is
 * at most 2^22, proc(5)), so they never collide with a real one. */
#define GPO_PROF_DEVICE_TID_BASE 4194304

#endif
