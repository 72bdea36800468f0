/* Environment values: the input is lines, one value per variable below
 * (GPUOPT_KNOBS, GPUOPT_DEVICE, GPUOPT_BACKEND, GPUOPT_LEVEL, GPUOPT_LOG,
 * GPUOPT_CACHE_DIR, and the visibility variables the CUDA and ROCm
 * backends read). The configuration is loaded from them (no config file),
 * the device selector is parsed on its own, and both visibility parsers run
 * over four GPUs. Nothing may fail but by a warning. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "config.h"
#include "cuda/cuda_visible.h"
#include "fuzz_util.h"
#include "policy.h"
#include "rocm/rocm_visible.h"

static const char *const names[] = {
    "GPUOPT_KNOBS",         "GPUOPT_DEVICE",        "GPUOPT_BACKEND",
    "GPUOPT_LEVEL",         "GPUOPT_LOG",           "GPUOPT_CACHE_DIR",
    "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"};
#define NNAMES (sizeof names / sizeof names[0])

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    char *text = fz_text(data, size);
    const char *value[NNAMES] = {0};
    char *line = text;
    for (size_t i = 0; i < NNAMES && line; i++) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        value[i] = line;
        line = nl ? nl + 1 : NULL;
    }
    for (size_t i = 0; i < NNAMES; i++) {
        if (value[i])
            setenv(names[i], value[i], 1);
        else
            unsetenv(names[i]);
    }
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    gpo_logger log = {GPUOPT_LOG_DEBUG, fz_log_sink, NULL};
    gpo_config cfg;
    fz_check(gpo_config_load(&cfg, &o, &log, gpo_backends, gpo_n_backends) == GPUOPT_OK,
             "the environment failed the load");
    fz_check(cfg.level >= 0 && cfg.level <= GPUOPT_LEVEL_MAX, "level %d", (int)cfg.level);
    gpo_config_free(&cfg);

    gpo_policy pol;
    char why[512];
    if (value[1])
        gpo_policy_parse(value[1], gpo_backends, gpo_n_backends, &pol, why, sizeof why);

    static const char *const uuids[] = {
        "GPU-0a1b2c3d-0000-1111-2222-333344445555", "GPU-1a1b2c3d-0000-1111-2222-333344445555",
        "GPU-2a1b2c3d-0000-1111-2222-333344445555", "GPU-3a1b2c3d-0000-1111-2222-333344445555"};
    size_t order[GPO_ROCM_VISIBLE_MAX];
    gpo_rocm_visibility vis;
    size_t n = gpo_rocm_visible(value[7], value[8], value[6], uuids, 4, order, &vis);
    fz_check(n <= 4, "%zu GPUs visible of 4", n);
    for (size_t i = 0; i < n; i++)
        fz_check(order[i] < 4, "visible GPU %zu is %zu", i, order[i]);
    char describe[1024], entry[128];
    gpo_rocm_visibility_describe(&vis, describe, sizeof describe);
    if (value[8])
        gpo_rocm_hip_list_entry(value[8], 1, entry, sizeof entry);
    gpo_dr_visible cv;
    if (value[6])
        gpo_cuda_visible_parse(value[6], 4, uuids, 4, &cv);
    free(text);
    return 0;
}
