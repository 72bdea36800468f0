/* Logging sink of a context: a level filter and an optional user callback,
 * else stderr. The library never writes to stdout. */
#ifndef GPO_LOG_H
#define GPO_LOG_H

#include "detail.h"

typedef struct gpo_logger {
    int32_t level; /* gpuopt_log_level */
    gpuopt_log_fn fn;
    void *user;
} gpo_logger;

void gpo_log(const gpo_logger *log, int32_t level, const char *fmt, ...) GPO_PRINTF(3, 4);

/* True when a message at `level` would be delivered (skip costly formatting). */
int gpo_log_enabled(const gpo_logger *log, int32_t level);

#define gpo_log_error(log, ...) gpo_log((log), GPUOPT_LOG_ERROR, __VA_ARGS__)
#define gpo_log_warn(log, ...) gpo_log((log), GPUOPT_LOG_WARN, __VA_ARGS__)
#define gpo_log_info(log, ...) gpo_log((log), GPUOPT_LOG_INFO, __VA_ARGS__)
#define gpo_log_debug(log, ...) gpo_log((log), GPUOPT_LOG_DEBUG, __VA_ARGS__)

#endif
