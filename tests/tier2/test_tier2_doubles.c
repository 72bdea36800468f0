/* Tier 2 on the CUDA and HIP test doubles, through the public API: the
 * generic engine gets as far as the doubles go (session, compile, module,
 * buffers) and falls back to level 1 at the first launch, with words that
 * say a real GPU is needed, and nothing is cached for a later plan to
 * trust. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpuopt/gpuopt.h"

static char dir[512];

static int fresh(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/tests/tier2/doubles-XXXXXX", GPO_BUILD_DIR);
    return mkdtemp(dir) ? 0 : -1;
}

static int cleanup(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Plans level 2 on `id` twice; both stay at level 1 with `words`. */
static void falls_back(const char *backends, const char *sysfs, const char *id,
                       const char *const *words)
{
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    o.backends = backends;
    o.cache_dir = dir;
    o.sysfs_root = sysfs;
    o.log_level = "off";
    gpuopt_context *ctx = NULL;
    assert_int_equal(gpuopt_context_create(&o, &ctx), GPUOPT_OK);
    for (int round = 0; round < 2; round++) {
        gpuopt_device *d = NULL;
        gpuopt_plan *p = NULL;
        if (gpuopt_device_select(ctx, id, &d) != GPUOPT_OK)
            fail_msg("no %s: %s", id, gpuopt_last_error());
        assert_int_equal(gpuopt_plan_create(ctx, d, 2, &p), GPUOPT_OK);
        int32_t asked, got;
        assert_int_equal(gpuopt_plan_level(p, &asked, &got), GPUOPT_OK);
        assert_int_equal(got, 1);
        const char *w = NULL;
        assert_int_equal(gpuopt_plan_warning_at(p, 0, &w), GPUOPT_OK);
        for (int i = 0; words[i]; i++)
            if (!strstr(w, words[i]))
                fail_msg("round %d: \"%s\" not in the warning: %s", round, words[i], w);
        gpuopt_knob k;
        memset(&k, 0, sizeof k);
        k.struct_size = sizeof k;
        assert_int_equal(gpuopt_plan_knob_find(p, "measured.launch_latency_ns", &k),
                         GPUOPT_ERR_NOT_FOUND);
        gpuopt_plan_destroy(p);
    }
    gpuopt_context_destroy(ctx);
}

static void the_cuda_double_falls_back_saying_a_real_gpu_is_needed(void **state)
{
    (void)state;
    setenv("GPUOPT_CUDA_LIBRARY", GPO_FAKE_CUDA, 1);
    setenv("GPUOPT_NVRTC_LIBRARY", GPO_FAKE_NVRTC, 1);
    setenv("GPUOPT_FAKE_CUDA_DEVICES", GPO_CUDA_DEVICES "/h100-sxm5.json", 1);
    static const char *const words[] = {
        "level 2", "cuda: ", "cuLaunchKernel", "needs a real NVIDIA GPU", "stays at level 1", NULL};
    falls_back("cuda", NULL, "cuda:0", words);
}

static void the_hip_double_falls_back_saying_a_real_gpu_is_needed(void **state)
{
    (void)state;
    setenv("GPUOPT_HIP_LIBRARY", GPO_FAKE_HIP, 1);
    setenv("GPUOPT_FAKE_HIP_DEVICES", GPO_HIP_DEVICES "/mi300x.json", 1);
    static const char *const words[] = {
        "level 2",          "rocm: ", "hipModuleLaunchKernel", "needs a real AMD GPU",
        "stays at level 1", NULL};
    falls_back("rocm", GPO_FIXTURES_DIR "/kfd/mi300x", "rocm:0", words);
}

int main(void)
{
    unsetenv("HIP_VISIBLE_DEVICES");
    unsetenv("ROCR_VISIBLE_DEVICES");
    unsetenv("CUDA_VISIBLE_DEVICES");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(the_cuda_double_falls_back_saying_a_real_gpu_is_needed,
                                        fresh, cleanup),
        cmocka_unit_test_setup_teardown(the_hip_double_falls_back_saying_a_real_gpu_is_needed,
                                        fresh, cleanup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
