/* The config file (src/config.c): any bytes as the file named by
 * gpuopt_options.config_path, loaded against the real backend list, as an
 * ordinary and as a privileged process. Whatever the file says, loading
 * succeeds (bad values are warnings), the result is in range, and a
 * privileged load takes no path from it. */
#include <stdint.h>
#include <string.h>

#include "backend.h"
#include "config.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (2u << 20))
        return 0;
    const char *path = fz_write(0, "config.json", data, size);
    if (!path)
        return 0;
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_ENV;
    o.config_path = path;
    gpo_logger log = {GPUOPT_LOG_DEBUG, fz_log_sink, NULL};
    for (int privileged = 0; privileged < 2; privileged++) {
        gpo_config cfg;
        gpuopt_status st =
            gpo_config_load_as(&cfg, &o, &log, gpo_backends, gpo_n_backends, privileged);
        fz_check(st == GPUOPT_OK, "a config file failed the load: %d", (int)st);
        fz_check(cfg.level >= 0 && cfg.level <= GPUOPT_LEVEL_MAX, "level %d", (int)cfg.level);
        fz_check(cfg.n_backends >= 0 && cfg.n_backends <= GPO_MAX_BACKENDS, "%d backends",
                 cfg.n_backends);
        if (privileged) {
            fz_check(!cfg.cache_dir[0] && !gpo_fs_is_recorded(&cfg.fs),
                     "a privileged load took a path from the file");
            for (int i = 0; i < cfg.n_libraries; i++)
                fz_check(!cfg.libraries[i].path[0], "a privileged load took a library path");
        }
        gpo_config_free(&cfg);
    }
    return 0;
}
