/* The environment the core hands a backend's load and enumerate: the
 * context's configuration and log. Only the core and tests see inside;
 * backends use the accessors declared in backend.h. */
#ifndef GPO_BACKEND_ENV_H
#define GPO_BACKEND_ENV_H

#include "backend.h"
#include "config.h"

struct gpo_backend_env {
    const gpo_config *cfg;
    const gpo_logger *log;
};

#endif
