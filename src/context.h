/* The context: configuration, the backends' lazily loaded states and the
 * merged device list, all behind one lock. Core-internal. */
#ifndef GPO_CONTEXT_H
#define GPO_CONTEXT_H

#include <pthread.h>

#include "backend.h"
#include "config.h"
#include "device.h"
#include "util/log.h"

typedef struct gpo_ctx_slot {
    const gpo_backend *ops;
    int32_t status; /* gpuopt_backend_status */
    void *state;    /* non-NULL once loaded (also kernel-side only) */
    gpo_backend_report report;
    double init_ms;  /* -1 until probed */
    int32_t n_found; /* devices it enumerated, before merging */
    int warned;      /* 1 once a selection logged that it passed this backend over */
} gpo_ctx_slot;

struct gpuopt_context {
    pthread_mutex_t lock;
    gpo_config cfg;
    gpo_logger log;
    const gpo_backend *const *list; /* the registry, or a test's list */
    size_t n_backends;
    gpo_ctx_slot slots[GPO_MAX_BACKENDS];
    size_t n_probed;         /* slots [0, n_probed) have been probed, in priority order */
    gpo_device_list devices; /* merged, in display order */
    unsigned fork_generation;
    pid_t pid;
};

/* Creates a context over a given backend list (the registry for the public
 * API; synthetic backends in tests). */
gpuopt_status gpo_context_create_with(const gpuopt_options *options, const gpo_backend *const *list,
                                      size_t n, struct gpuopt_context **out);

/* With the lock held: probes backends in priority order up to and including
 * slot `upto`. */
gpuopt_status gpo_ctx_probe_upto(struct gpuopt_context *ctx, size_t upto);
gpuopt_status gpo_ctx_probe_all(struct gpuopt_context *ctx);

/* With the lock held: GPUOPT_ERR_FORKED when this context's driver state
 * belongs to a parent process. */
gpuopt_status gpo_ctx_check_fork(struct gpuopt_context *ctx);

/* "not probed", "available", "unavailable", "error", "disabled": a
 * gpuopt_backend_status in the words of the JSON formats (docs/json.md,
 * docs/doctor.md). */
const char *gpo_ctx_status_word(int32_t status);

/* Slot index of a backend by name, or -1. */
int gpo_ctx_slot_of(const struct gpuopt_context *ctx, const char *name);

/* Locking helpers for the public entry points. */
void gpo_ctx_lock(struct gpuopt_context *ctx);
void gpo_ctx_unlock(struct gpuopt_context *ctx);

#endif
