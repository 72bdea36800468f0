/* Small helpers shared by core tests: a log collector, temporary files, and
 * a context over the synthetic backends. */
#ifndef GPO_TEST_UTIL_H
#define GPO_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "gpuopt/gpuopt.h"

typedef struct log_capture {
    char text[16384];
    size_t len;
    int count;
} log_capture;

/* gpuopt_log_fn appending "level:message\n" to a log_capture. */
void capture_log(int32_t level, const char *message, void *user);

/* Writes `content` to a new file under the build tree; returns its path
 * (static buffer per call slot 0..3). */
const char *write_temp_file(int slot, const char *name, const char *content);

/* A context over the synthetic backends (tests/support/synthetic.h), with
 * the config file ignored unless `config_path` is given. */
gpuopt_status syn_context(const char *backends, const char *config_path, log_capture *log,
                          gpuopt_context **ctx);

#endif
