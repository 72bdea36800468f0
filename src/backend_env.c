/* The accessors through which a backend reads its environment. */
#include "backend_env.h"

#include <stddef.h>

/* A backend loaded without a configuration (a test's bare env) reads the
 * live system and the default library names. */
static const gpo_fs live_fs = {""};

const gpo_fs *gpo_env_fs(const gpo_backend_env *env)
{
    return env && env->cfg ? &env->cfg->fs : &live_fs;
}

const gpo_logger *gpo_env_log(const gpo_backend_env *env)
{
    return env ? env->log : NULL;
}

const char *gpo_env_library(const gpo_backend_env *env, const char *key)
{
    return env && env->cfg ? gpo_config_library(env->cfg, key) : NULL;
}
