/* The public tuner's test hooks (tuner.c): what the tests and the overhead
 * benchmark reach inside one tuner. Nothing else includes this. */
#ifndef GPO_TUNE_TUNER_H
#define GPO_TUNE_TUNER_H

#include "backend.h"
#include "tune/progcache.h"

/* Builds on a worker while timing: -1 auto (off on CPU devices), 0, 1. */
void gpo_tuner_test_overlap(gpuopt_tuner *t, int overlap);
/* The runtime ops this tuner's next session calls, for the route's own
 * (tests count calls or fail chosen ones). NULL: the route's. */
void gpo_tuner_test_wrap(gpuopt_tuner *t,
                         const gpo_runtime_ops *(*wrap)(const gpo_runtime_ops *real));
/* The open session's program cache; NULL while the tuner has no session. */
gpo_progcache *gpo_tuner_test_progcache(const gpuopt_tuner *t);
/* The journal of the tuner's cache ("" while it has none). */
const char *gpo_tuner_test_cache_file(const gpuopt_tuner *t);

#endif
