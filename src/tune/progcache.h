/* Compiled programs of one device session, kept for a tuner's lifetime and
 * built ahead of need on a worker thread.
 *
 * Key: (source hash, options, device session, compiler version). Options
 * carry the parameters' -D defines, so a configuration tried again (the
 * final re-timing, a second gpuopt_tuner_run for a new problem size, an
 * online step) reuses its program; a build failure is remembered too.
 *
 * Overlap: compilation dominates tuning on JIT backends (77% of a PoCL
 * SGEMM run's wall time was OpenCL compilation), so with `threaded` the
 * cache owns one worker thread that builds queued programs while the
 * caller times the current candidate. Builds never run two at a time, and
 * a program is freed only while no build is running: the runtime contract
 * this relies on is that program_build may run on a second thread
 * alongside launches, copies and kernel calls on the same session, but not
 * alongside another program_build or program_free (true of OpenCL, whose
 * API is thread-safe except clSetKernelArg on one kernel, and of this
 * project's OpenCL session, whose object lists are per kind). Runtimes
 * not known to allow it build on the calling thread (gpo_progcache_threaded
 * decides).
 *
 * A cache is used by one caller thread; the worker is its own. */
#ifndef GPO_TUNE_PROGCACHE_H
#define GPO_TUNE_PROGCACHE_H

#include "backend.h"

typedef struct gpo_progcache gpo_progcache;

/* 1 when builds for `ops` may run on a worker thread (see above). */
int gpo_progcache_threaded(const gpo_runtime_ops *ops);

/* `max_programs` 0: 256. Programs over the bound are freed least recently
 * used first, never one in use. */
gpuopt_status gpo_progcache_create(const gpo_runtime_ops *ops, gpo_rt *rt, int threaded,
                                   int32_t max_programs, gpo_progcache **out);
/* 1 when the cache builds on its worker (prefetching does something). */
int gpo_progcache_overlaps(const gpo_progcache *pc);
/* Stops the worker (after its current build), frees every program. */
void gpo_progcache_destroy(gpo_progcache *pc);

/* Queues a build of (source, options) unless it is built, building or
 * queued. Never blocks on a build; without a worker it does nothing. The
 * source must stay valid until the cache is destroyed (the tuner's copy). */
gpuopt_status gpo_progcache_prefetch(gpo_progcache *pc, const char *source, const char *options);

/* The program of (source, options), built now (ahead of everything queued)
 * or waited for. GPUOPT_OK with *prog, which stays valid until released;
 * or the build's failure (GPUOPT_ERR_BUILD with the log) with the detail
 * set. *log (may be NULL) receives a copy of the build log (malloc'd, may
 * be NULL); *compile_ms the build's duration when this call is the first
 * to receive the program, -1 when it was handed out before. */
gpuopt_status gpo_progcache_get(gpo_progcache *pc, const char *source, const char *options,
                                gpo_rt_prog **prog, char **log, double *compile_ms);
/* Marks a program from gpo_progcache_get no longer in use. */
void gpo_progcache_release(gpo_progcache *pc, gpo_rt_prog *prog);

/* Counters for tests and the overhead figures. */
typedef struct gpo_progcache_stats {
    int64_t builds;     /* program_build calls */
    int64_t hits;       /* gets answered by a program built before */
    int64_t prefetched; /* builds started by a prefetch */
    int64_t evicted;
    double build_ms; /* total build time */
    double wait_ms;  /* time gets spent waiting for the worker */
} gpo_progcache_stats;
void gpo_progcache_get_stats(gpo_progcache *pc, gpo_progcache_stats *out);

#endif
