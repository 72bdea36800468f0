/* The loaded ROCm backend (rocm_state.c): what load found (the KFD
 * topology, the HIP runtime, the GPUs visible on the KFD path) and what the
 * rules and the runtime ops ask of it: whether this process may still use
 * the runtime (fork), and hiprtc, opened on first use. The backend's load
 * fills it; the rules and the runtime ops only read it. */
#ifndef GPO_ROCM_STATE_H
#define GPO_ROCM_STATE_H

#include <stddef.h>
#include <sys/types.h>

#include "rocm_hip.h"
#include "rocm_hiprtc.h"
#include "rocm_kfd.h"
#include "util/fs.h"

typedef struct gpo_rocm_state {
    gpo_fs fs;
    gpo_kfd kfd;
    gpo_hip hip;
    int hip_ok; /* 1: devices come from HIP */
    /* The runtime ops' and marks' slice of HIP (hip_rt_api.h), resolved at
     * load: usable when rt_missing is "", else it names what the library
     * lacks. */
    gpo_hip_rt_fns rt;
    char rt_missing[256];
    pid_t pid;     /* the process that loaded it */
    size_t *order; /* KFD path: visible GPUs, in HIP's order */
    size_t n_order;
    char driver_version[64];
    char runtime_version[64];
    char unavailable[512];          /* load's reason when devices come from KFD alone */
    char hiprtc_path[GPO_PATH_MAX]; /* the user's hiprtc library, "" for the sonames */
    gpo_dl_once rtc_once;           /* hiprtc, opened on first use */
    gpo_hiprtc rtc;
} gpo_rocm_state;

/* A zeroed state reading the machine through `fs`, for this process, with
 * the user's hiprtc library `hiprtc_path` (NULL: the sonames). Returns
 * GPUOPT_ERR_NO_MEMORY (with the detail) when it cannot be made. */
gpuopt_status gpo_rocm_state_new(const gpo_fs *fs, const char *hiprtc_path, gpo_rocm_state **out);

/* Frees the state; the vendor libraries stay loaded (backend.h: never
 * dlclose). NULL is a no-op. */
void gpo_rocm_state_free(gpo_rocm_state *st);

/* HIP state from before a fork() is stale in the child: GPUOPT_ERR_FORKED
 * with words naming `what`, else GPUOPT_OK. */
gpuopt_status gpo_rocm_check_fork(const gpo_rocm_state *st, const char *what);

/* hiprtc for this state, opened on first use (once; a failure is kept and
 * repeated with its reason). */
gpuopt_status gpo_rocm_hiprtc(gpo_rocm_state *st, const gpo_hiprtc **rtc);

#endif
