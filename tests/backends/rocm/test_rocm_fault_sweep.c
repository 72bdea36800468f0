/* The fault sweep: every HIP call the backend can make (the whole symbol
 * list of hip_api.h) is made to fail through the test double, on its first
 * use, on later uses and on every use, for the ROCm 5 and ROCm 6 flavours,
 * with and without a KFD topology. Each run must end in a reason that names
 * the failing call (load's reason, a device note, or memory_free's detail),
 * never in a crash; ASan/LSan builds check that nothing leaks on any path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/detail.h"
#include "rocm/hip_api.h"
#include "rocm_test.h"
#include "util/strutil.h"

static const char *const three[] = {"mi300x", "rx7900xtx", "rx580", NULL};

/* Everything the backend said during one run, for the "names the call"
 * check. */
static void collect(const rocm_run *r, gpo_sbuf *all)
{
    gpo_sbuf_append(all, r->report.reason);
    gpo_sbuf_append(all, "\n");
    for (size_t i = 0; i < r->list.n; i++) {
        const cJSON *notes = cJSON_GetObjectItem(rocm_details(r->list.items[i]), "notes");
        const cJSON *n;
        cJSON_ArrayForEach(n, notes)
        {
            gpo_sbuf_append(all, n->valuestring);
            gpo_sbuf_append(all, "\n");
        }
    }
}

static void one_run(int major, const char *root, const char *fail, const char *call)
{
    rocm_env e;
    rocm_run r;
    gpo_sbuf all;
    int expect_devices = fake_reset(major, fake_devices(three), fail);

    assert_int_equal(expect_devices, 3);
    rocm_env_init(&e, root, fake_hip_path(major));
    gpo_sbuf_init(&all);
    rocm_run_do(&r, &e);

    if (r.load == GPUOPT_OK || (r.load == GPUOPT_ERR_UNAVAILABLE && r.state)) {
        assert_int_equal(r.enumerate, GPUOPT_OK);
        assert_true(r.list.n > 0);
        for (size_t i = 0; i < r.list.n; i++) {
            const gpuopt_device *d = r.list.items[i];
            /* A record is always usable: a name, a type, a native index. */
            assert_true(d->info.name[0] != '\0');
            assert_int_equal(d->info.type, GPUOPT_DEVICE_TYPE_GPU);
            assert_int_equal(d->info.index, (int)i);
            gpo_route route;
            uint64_t free_bytes = 0;
            rocm_route_of(&r, i, &route);
            gpo_detail_clear();
            gpuopt_status st = rocm_free(r.state, &route, &free_bytes);
            if (st != GPUOPT_OK) {
                assert_true(gpo_detail_get()[0] != '\0');
                gpo_sbuf_appendf(&all, "%s\n", gpo_detail_get());
            } else if (r.load == GPUOPT_OK) {
                assert_true(free_bytes > 0);
            }
        }
    } else {
        assert_null(r.state);
        assert_true(r.report.reason[0] != '\0');
        assert_string_equal(r.detail, r.report.reason);
    }
    collect(&r, &all);

    /* The error-text calls fail while another call's failure is described:
     * that one is named, with the error's name from our own table. */
    int text_call = strcmp(call, "hipGetErrorName") == 0 || strcmp(call, "hipGetErrorString") == 0;
    const char *named = text_call ? "hipDeviceGetAttribute" : call;
    int fired = fake_faults_fired(major);
    if (fired > 0 && !strstr(all.data ? all.data : "", named))
        fail_msg("HIP %d, %s, root %s: the fault fired %d time(s) but nothing names %s:\n%s", major,
                 fail, root ? root : "(none)", fired, named, all.data ? all.data : "");
    if (fired > 0)
        assert_non_null(strstr(all.data ? all.data : "", "hipErrorUnknown (999)"));
    gpo_sbuf_free(&all);
    rocm_run_free(&r);
}

static void every_hip_call_failing_gives_a_reason_and_no_crash(void **state)
{
    static const char *const uses[] = {"1", "2", "3", "*"};
    const char *roots[2] = {NULL, NULL};
    char fail[256];
    int fired_any[64] = {0};
    (void)state;
    unsetenv("HIP_VISIBLE_DEVICES");
    unsetenv("ROCR_VISIBLE_DEVICES");
    unsetenv("GPU_ENABLE_WGP_MODE");
    roots[1] = kfd_root(0, "mi300x");

    for (int major = 5; major <= 6; major++)
        for (size_t s = 0; s < gpo_hip_n_syms; s++)
            for (size_t u = 0; u < sizeof uses / sizeof uses[0]; u++)
                for (size_t k = 0; k < 2; k++) {
                    const char *call = gpo_hip_syms[s].symbol;
                    /* The error-text calls only run when another call has
                     * failed: pair them with a failing attribute query. */
                    if (strcmp(call, "hipGetErrorName") == 0 ||
                        strcmp(call, "hipGetErrorString") == 0)
                        snprintf(fail, sizeof fail,
                                 "%s:%s:hipErrorUnknown,hipDeviceGetAttribute:1:hipErrorUnknown",
                                 call, uses[u]);
                    else
                        snprintf(fail, sizeof fail, "%s:%s:hipErrorUnknown", call, uses[u]);
                    one_run(major, roots[k], fail, call);
                    fired_any[s] |= fake_faults_fired(major) > 0;
                }
    /* The sweep is real: every call the backend resolves was made, and
     * failed, in some run. */
    assert_true(gpo_hip_n_syms <= 64);
    for (size_t s = 0; s < gpo_hip_n_syms; s++)
        if (!fired_any[s])
            fail_msg("%s never failed in the sweep", gpo_hip_syms[s].symbol);
}

static void every_use_of_every_per_device_call_failing_still_lists_the_gpus(void **state)
{
    static const char *const calls[] = {"hipDeviceGetAttribute", "hipDeviceGetName",
                                        "hipDeviceTotalMem", "hipDeviceGetUuid",
                                        "hipGetDevicePropertiesR0600"};
    (void)state;
    for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
        char fail[128];
        rocm_env e;
        rocm_run r;
        snprintf(fail, sizeof fail, "%s:*:hipErrorOutOfMemory", calls[c]);
        fake_reset(6, fake_devices(three), fail);
        rocm_env_init(&e, NULL, fake_hip_path(6));
        rocm_run_do(&r, &e);
        assert_int_equal(r.load, GPUOPT_OK);
        assert_int_equal(r.list.n, 3);
        for (size_t i = 0; i < r.list.n; i++)
            assert_true(rocm_has_note(r.list.items[i], calls[c]));
        rocm_run_free(&r);
    }
    /* Without gcnArchName, the KFD node of the same GPU supplies the target. */
    {
        rocm_env e;
        rocm_run r;
        fake_reset(6, fake_devices(three), "hipGetDevicePropertiesR0600:*:hipErrorUnknown");
        rocm_env_init(&e, kfd_root(0, "mi300x"), fake_hip_path(6));
        rocm_run_do(&r, &e);
        assert_string_equal(r.list.items[0]->info.arch_name, "gfx942");
        assert_string_equal(r.list.items[0]->info.arch_family, "cdna3");
        /* rx7900xtx and rx580 have no node in this tree: target unknown. */
        assert_string_equal(r.list.items[1]->info.arch_name, "");
        assert_true(rocm_has_note(r.list.items[1], "gfx target is unknown"));
        rocm_run_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_hip_call_failing_gives_a_reason_and_no_crash),
        cmocka_unit_test(every_use_of_every_per_device_call_failing_still_lists_the_gpus),
    };
    return cmocka_run_group_tests(tests, rocm_test_clean_env, NULL);
}
