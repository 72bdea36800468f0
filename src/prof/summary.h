/* The summary of a profile (summary.c): one row per section, in tree
 * order, with count, total, mean, p50, p95, max, share of its parent and
 * throughput; as an aligned text table and as JSON (docs/profiler.md). */
#ifndef GPO_PROF_SUMMARY_H
#define GPO_PROF_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"

typedef enum gpo_prof_clock {
    GPO_PROF_HOST = 0,   /* every kept section host-timed */
    GPO_PROF_DEVICE = 1, /* every one device-timed */
    GPO_PROF_MIXED = 2   /* some of each (device time stopped, or a read failed) */
} gpo_prof_clock;

typedef struct gpo_prof_row {
    uint32_t node;  /* id */
    int32_t parent; /* row index of the parent, -1 at top level */
    uint32_t depth;
    const char *name;
    int clock; /* gpo_prof_clock */
    uint64_t count;
    double total_ns, mean_ns, p50_ns, p95_ns, max_ns; /* 0 when count is 0 */
    double share;          /* of the parent's total (top level: of the wall time); -1 none */
    uint64_t items, bytes; /* summed over the sections */
    double items_per_s, bytes_per_s; /* -1: nothing counted */
} gpo_prof_row;

/* Rows for every section that ended, or has a descendant that ended, in
 * tree order (children after their parent, in the order first begun).
 * *rows is malloc'd (caller frees). */
gpuopt_status gpo_prof_rows(const gpo_prof_snapshot *s, gpo_prof_row **rows, uint32_t *n);

/* The wall time the top-level shares are of: the earliest begin to the
 * latest end of the kept sections, over every thread. */
double gpo_prof_wall_ns(const gpo_prof_snapshot *s);

/* A duration with three significant digits and its unit: "812 ns",
 * "3.42 us", "120 ms", "2.50 s". */
void gpo_prof_format_ns(double ns, char *out, size_t cap);

/* The summary as text or JSON, malloc'd; NULL with the detail set when out
 * of memory. */
char *gpo_prof_summary_table(const gpo_prof_snapshot *s);
char *gpo_prof_summary_json(const gpo_prof_snapshot *s);

#endif
