/* The configuration of a context, merged once at creation from four layers:
 * built-in defaults < config file (JSON) < environment < API options.
 * Backends read it (through gpo_backend_env) but never change it. */
#ifndef GPO_CONFIG_H
#define GPO_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "util/fs.h"
#include "util/log.h"

#define GPO_MAX_BACKENDS 8

/* Where a configuration value came from, for log lines and knob sources. */
typedef enum gpo_origin {
    GPO_ORIGIN_DEFAULT = 0,
    GPO_ORIGIN_FILE = 1,
    GPO_ORIGIN_ENV = 2,
    GPO_ORIGIN_API = 3
} gpo_origin;

/* A user's override of one knob (config file "knobs", GPUOPT_KNOBS, API). */
typedef struct gpo_knob_override {
    char *name;
    char *value;       /* text, parsed by the knob's type when applied */
    int32_t source;    /* GPUOPT_SOURCE_CONFIG / _ENV / _API */
    char *origin_text; /* "config file /x.json", "GPUOPT_KNOBS", "gpuopt_context_set_knob" */
} gpo_knob_override;

/* A vendor library whose path the user may choose: the backends declare
 * them (gpo_backend.libraries), the configuration fills in the paths
 * (GPUOPT_<NAME>_LIBRARY read with secure_getenv; config file
 * "libraries": {"cuda": "..."}). */
#define GPO_MAX_LIBRARIES 16

typedef struct gpo_library_path {
    const char *key;         /* static: "cuda", from the declaring backend */
    const char *variable;    /* static: "GPUOPT_CUDA_LIBRARY" */
    char path[GPO_PATH_MAX]; /* "" = the backend's default sonames */
} gpo_library_path;

typedef struct gpo_config {
    /* Allowed backends in priority order. all_backends = 1 for "auto". */
    int all_backends;
    char backends[GPO_MAX_BACKENDS][16];
    int n_backends;
    gpo_origin backends_origin;

    char device[GPO_POLICY_MAX]; /* selection policy, default "auto" */
    gpo_origin device_origin;

    int32_t level; /* 0..2, default 1 */
    gpo_origin level_origin;

    int32_t log_level; /* gpuopt_log_level, default WARN */

    int reduced_precision; /* 0 (default) or 1 */
    gpo_origin reduced_precision_origin;

    char config_path[GPO_PATH_MAX]; /* the file read, "" when none */
    /* Resolved: option/env/file, else $XDG_CACHE_HOME/gpuopt; "" when there
     * is none (a privileged process without gpuopt_options.cache_dir):
     * measurements are then not cached (GPO_NO_CACHE_DIR says why). */
    char cache_dir[GPO_PATH_MAX];
    /* The shared read-only layer (env/file; never in a privileged process);
     * "" none. */
    char cache_shared[GPO_PATH_MAX];
    gpo_fs fs; /* GPUOPT_SYSFS_ROOT */

    gpo_library_path libraries[GPO_MAX_LIBRARIES]; /* declared by the backends of the list */
    int n_libraries;

    gpo_knob_override *knobs; /* in precedence order: file, env, api */
    int n_knobs;

    /* GPUOPT_PROFILE: the file profilers write their trace to (src/prof/),
     * "" for none. Environment only, read with secure_getenv: a path from
     * the environment is never written to by a privileged process. */
    char profile_path[GPO_PATH_MAX];
} gpo_config;

/* Builds the configuration against the `nlist` backends of `list` (the
 * context's: they declare the knobs and library variables accepted).
 * Warnings (bad env values, a malformed config file) go to `log` and the
 * default is kept; a bad API option fails with GPUOPT_ERR_CONFIG. On
 * failure the config holds nothing to free. */
struct gpo_backend;
gpuopt_status gpo_config_load(gpo_config *cfg, const gpuopt_options *opts, const gpo_logger *log,
                              const struct gpo_backend *const *list, size_t nlist);

/* gpo_config_load with the process's privilege given: 1 as in a set-user-ID
 * program (tests; gpo_config_load asks getauxval(AT_SECURE)). A privileged
 * configuration takes no path from the environment or a config file (the
 * config file is read only when gpuopt_options names it, and its
 * "libraries", "cache_dir" and "sysfs_root" are ignored), has no cache
 * directory unless gpuopt_options.cache_dir names one, and logs one line
 * saying what it ignored (docs/security.md). */
gpuopt_status gpo_config_load_as(gpo_config *cfg, const gpuopt_options *opts, const gpo_logger *log,
                                 const struct gpo_backend *const *list, size_t nlist,
                                 int privileged);

/* Why a configuration has no cache directory, for messages. */
#define GPO_NO_CACHE_DIR                                                                           \
    "no cache directory: a privileged process (set-user-ID, set-group-ID or file capabilities) "   \
    "has one only when gpuopt_options.cache_dir names it"

void gpo_config_free(gpo_config *cfg);

/* 1 when `backend` ("cuda") may be used. */
int gpo_config_backend_allowed(const gpo_config *cfg, const char *backend);

/* The user's path for the vendor library `key` ("cuda"), or NULL for the
 * backend's default sonames. */
const char *gpo_config_library(const gpo_config *cfg, const char *key);

/* Sets the path of library `key` (tests and tools that build a config by
 * hand); adds the key when no backend declared it. GPUOPT_ERR_OUT_OF_RANGE
 * when the table is full or the path too long. */
gpuopt_status gpo_config_set_library(gpo_config *cfg, const char *key, const char *path);

/* Adds or removes (value NULL) an override; replaces one of the same name
 * and source. */
gpuopt_status gpo_config_set_knob(gpo_config *cfg, const char *name, const char *value,
                                  int32_t source, const char *origin_text);

#endif
