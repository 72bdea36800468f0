/* Synthetic backends for core tests: ops tables whose devices, failures and
 * rules a test sets up, and which count how often they were probed. They
 * let the core's selection, merging and tier logic be tested on device
 * mixes no machine here has. */
#ifndef GPO_TEST_SYNTHETIC_H
#define GPO_TEST_SYNTHETIC_H

#include "backend.h"

#define SYN_MAX_DEVICES 8

typedef struct syn_spec {
    gpuopt_device_info devices[SYN_MAX_DEVICES];
    double gflops[SYN_MAX_DEVICES];
    double matrix[SYN_MAX_DEVICES][GPO_PREC_COUNT]; /* est_matrix_gflops */
    double bandwidth[SYN_MAX_DEVICES];              /* est_bandwidth_gbs */
    int n_devices;
    gpuopt_status load_result;    /* GPUOPT_OK, or the failure load returns */
    int kernel_side;              /* with a failing load: keep a state (devices seen) */
    gpuopt_status tier_result[3]; /* what tier N returns (GPUOPT_OK = sets its knob) */
    int has_tier[3];
    int loads; /* counters */
    int enumerates;
    int unloads;
} syn_spec;

/* Three backends in priority order: "syncuda" (native GPU), "synocl"
 * (OpenCL-like), "syncpu". Their specs are reset by syn_reset(). */
extern syn_spec syn_cuda, syn_ocl, syn_cpu;
extern const gpo_backend syn_backend_cuda, syn_backend_ocl, syn_backend_cpu;
extern const gpo_backend *const syn_list[3];

/* A second native GPU backend, "synrocm", and the four in priority order
 * (syncuda, synrocm, synocl, syncpu), for selection across GPU vendors. */
extern syn_spec syn_rocm;
extern const gpo_backend syn_backend_rocm;
extern const gpo_backend *const syn_list4[4];

void syn_reset(void);

/* Adds a device to a spec; returns its info for further edits. */
gpuopt_device_info *syn_add(syn_spec *s, int type, const char *name, const char *uuid,
                            const char *pci, double gflops, uint64_t memory);

#endif
