/* The result's layout, shared by result.c and result_export.c. */
#ifndef GPO_TUNE_RESULT_IMPL_H
#define GPO_TUNE_RESULT_IMPL_H

#include "tune/tuner.h"

typedef struct gpo_rcand {
    gpuopt_config *config; /* owned; keeps the space alive */
    int32_t status;
    int timed; /* stats hold timed runs (OK, PRUNED) */
    gpo_stats stats;
    double compile_ms;
    char *message;
    int resumed; /* measured by an earlier run and read back from the journal */
} gpo_rcand;

typedef struct gpo_rfinal {
    int32_t index; /* candidate */
    gpo_stats stats;
} gpo_rfinal;

struct gpuopt_result {
    const gpuopt_space *space;
    gpo_rcand *c;
    int32_t n, cap;
    int32_t best;
    int32_t from_cache;
    int validated;
    gpo_rfinal *final;
    int32_t nfinal;
    /* how it ran */
    char device[32], device_name[256], backend[16], subject[16];
    char strategy[16], requested[16];
    uint64_t seed;
    int32_t max_evaluations, max_failures;
    double max_seconds;
    gpo_timing_settings timing;
    double timeout_s;
    char stop[32];
    double wall_s;
    uint64_t legal;
    int32_t evaluations, failures;
    char *workload;
};

#endif
