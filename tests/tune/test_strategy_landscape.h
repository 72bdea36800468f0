/* A synthetic objective for the search strategies: a model of a tiled
 * SGEMM kernel's time (1024^3, a device of 4 TFLOP/s peak) as a function
 * of its tuning parameters, with what makes real landscapes hard: cliffs
 * (register spills, then a compile failure), a failure region (work-groups
 * over the device limit fail to launch), a planted wrong-answer region
 * that would be the fastest of all if it counted, a narrow planted
 * optimum 20% ahead of anything else, and deterministic +-3% ruggedness.
 * No device is involved: the engine will drive the same strategies with
 * real timings. */
#ifndef GPO_TEST_STRATEGY_LANDSCAPE_H
#define GPO_TEST_STRATEGY_LANDSCAPE_H

#include <stdint.h>

#include "tune/space.h"
#include "tune/status.h"

/* big: 9 parameters, CLTune-like, 6,728 legal configurations; else 6
 * parameters (one an enum), 362 legal, near the size of the 260-point PoCL
 * SGEMM space in the anchors. */
gpuopt_space *landscape_space(int big);

/* A GPO_CAND_* status and, for OK, the time in ns. */
int32_t landscape_eval(const gpuopt_space *space, const uint32_t *idx, double *ns);

/* Exhaustive facts about a landscape space: legal count, the best OK time
 * and its configuration (idx, param_count entries). */
void landscape_optimum(const gpuopt_space *space, uint64_t *legal, double *best_ns, uint32_t *best);

#endif
