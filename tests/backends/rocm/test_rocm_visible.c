/* ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES on the
 * KFD path, reproducing ROCr's and HIP's own rules, and their effect on the
 * backend's listing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rocm/rocm_visible.h"
#include "rocm_test.h"

/* The four GPUs of the example in ROCR-Runtime's amd_filter_device.h,
 * spelled as ROCr reports UUIDs (lower case). */
static const char *const uuids4[] = {"GPU-babababababababa", "GPU-abbaabbaabbaabba",
                                     "GPU-babaabbaabbababa", "GPU-abbababababaabba"};

static size_t vis(const char *rocr, const char *hip, const char *cuda, size_t *order)
{
    return gpo_rocm_visible(rocr, hip, cuda, uuids4, 4, order, NULL);
}

static void rocr_examples_from_the_runtime_header(void **state)
{
    size_t o[4];
    (void)state;
    /* A1..A3: zero devices. */
    assert_int_equal(vis("", NULL, NULL, o), 0);
    assert_int_equal(vis("-1", NULL, NULL, o), 0);
    assert_int_equal(vis("GPU-XX", NULL, NULL, o), 0);
    /* B: "3,GPU-BABABABABABABABA,4" -> GPU 3 then GPU 0. */
    assert_int_equal(vis("3,GPU-BABABABABABABABA,4", NULL, NULL, o), 2);
    assert_int_equal(o[0], 3);
    assert_int_equal(o[1], 0);
    /* D: a unique UUID prefix selects; "GPU-XX" ends the list. */
    assert_int_equal(vis("3,GPU-BABAABBA,GPU-XX", NULL, NULL, o), 2);
    assert_int_equal(o[0], 3);
    assert_int_equal(o[1], 2);
    /* A repeated device ends the list. */
    assert_int_equal(vis("1,GPU-ABBAABBAABBAABBA,2", NULL, NULL, o), 1);
    assert_int_equal(o[0], 1);
}

static void rocr_tokens_are_trimmed_case_folded_and_base_prefixed(void **state)
{
    size_t o[4];
    (void)state;
    assert_int_equal(vis(" 0x2 , gpu-abbab ", NULL, NULL, o), 2);
    assert_int_equal(o[0], 2);
    assert_int_equal(o[1], 3);
    /* An ambiguous prefix ("GPU-BABA" matches GPUs 0 and 2) terminates. */
    assert_int_equal(vis("1,GPU-BABA,0", NULL, NULL, o), 1);
    /* Too short a UUID token terminates; so do junk and empty tokens. */
    assert_int_equal(vis("GPU-", NULL, NULL, o), 0);
    assert_int_equal(vis("2,x", NULL, NULL, o), 1);
    assert_int_equal(vis("2,,1", NULL, NULL, o), 1);
    assert_int_equal(vis("1abc", NULL, NULL, o), 0);
}

static void hip_indexes_apply_after_rocr_and_stop_at_the_first_invalid(void **state)
{
    size_t o[4];
    char why[256];
    gpo_rocm_visibility v;
    (void)state;
    /* ROCr leaves 3,1,2; HIP's "2,0" picks ROCr's third then first. */
    assert_int_equal(gpo_rocm_visible("3,1,2", "2,0", NULL, uuids4, 4, o, &v), 2);
    gpo_rocm_visibility_describe(&v, why, sizeof why);
    assert_int_equal(o[0], 2);
    assert_int_equal(o[1], 3);
    assert_non_null(strstr(why, "ROCR_VISIBLE_DEVICES=\"3,1,2\" leaves 3 of 4"));
    assert_non_null(strstr(why, "HIP_VISIBLE_DEVICES=\"2,0\" leaves 2 of 3"));
    /* Non-canonical indexes and out-of-range ones end the list. */
    assert_int_equal(vis(NULL, "1,01,2", NULL, o), 1);
    assert_int_equal(vis(NULL, "1, 2", NULL, o), 1);
    assert_int_equal(vis(NULL, "-1", NULL, o), 0);
    assert_int_equal(vis(NULL, "4", NULL, o), 0);
    /* Repeats are skipped, not terminating (unlike ROCr). */
    assert_int_equal(vis(NULL, "1,1,0", NULL, o), 2);
    assert_int_equal(o[0], 1);
    assert_int_equal(o[1], 0);
    /* UUID text as written (lower case, as ROCr reports it). */
    assert_int_equal(vis(NULL, "GPU-abbabab", NULL, o), 1);
    assert_int_equal(o[0], 3);
    assert_int_equal(vis(NULL, "GPU-ABBABAB", NULL, o), 0);
}

static void cuda_visible_devices_counts_only_when_hips_is_unset_or_empty(void **state)
{
    size_t o[4];
    (void)state;
    assert_int_equal(vis(NULL, NULL, "3", o), 1);
    assert_int_equal(o[0], 3);
    assert_int_equal(vis(NULL, "", "3", o), 1);
    assert_int_equal(vis(NULL, "0,1", "3", o), 2);
    /* HIP treats an empty value as no filter at all. */
    assert_int_equal(vis(NULL, "", "", o), 4);
}

static void no_variables_keep_every_gpu_in_order(void **state)
{
    size_t o[4];
    char why[64] = "stale";
    gpo_rocm_visibility v;
    (void)state;
    assert_int_equal(gpo_rocm_visible(NULL, NULL, NULL, uuids4, 4, o, &v), 4);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(o[i], i);
    assert_null(v.rocr.variable);
    assert_null(v.hip.variable);
    gpo_rocm_visibility_describe(&v, why, sizeof why);
    assert_string_equal(why, "");
}

static void no_gpus_and_gpus_without_a_uuid(void **state)
{
    size_t o[4];
    const char *none[] = {"", ""};
    (void)state;
    assert_int_equal(gpo_rocm_visible("0", NULL, NULL, NULL, 0, o, NULL), 0);
    /* GPUs without a UUID are still selectable by index; ROCr never
     * matches them by UUID ("Invalid-UUID")... */
    assert_int_equal(gpo_rocm_visible("GPU-00000", NULL, NULL, none, 2, o, NULL), 0);
    assert_int_equal(gpo_rocm_visible("1", NULL, NULL, none, 2, o, NULL), 1);
    assert_int_equal(o[0], 1);
    /* ...while HIP knows them as "GPU-XX" (ROCr's HSA_AMD_AGENT_INFO_UUID
     * for a GPU without a unique id), which an entry can name. */
    const char *mixed[] = {"GPU-babababababababa", ""};
    assert_int_equal(gpo_rocm_visible(NULL, "GPU-XX", NULL, mixed, 2, o, NULL), 1);
    assert_int_equal(o[0], 1);
}

static void each_filter_says_where_and_why_reading_stopped(void **state)
{
    size_t o[4];
    gpo_rocm_visibility v;
    char why[512];
    (void)state;
    /* ROCr: a repeat ends the list; the entries are counted as written. */
    assert_int_equal(gpo_rocm_visible("1, 0x1 ,2", NULL, NULL, uuids4, 4, o, &v), 1);
    assert_string_equal(v.rocr.variable, "ROCR_VISIBLE_DEVICES");
    assert_int_equal(v.rocr.in, 4);
    assert_int_equal(v.rocr.out, 1);
    assert_int_equal(v.rocr.entries, 3);
    assert_string_equal(v.rocr.stop, "0x1");
    assert_non_null(strstr(v.rocr.why, "again"));
    assert_null(v.hip.variable);
    /* ROCr reads no more entries than there are GPUs: the junk after the
     * fourth is never looked at. */
    assert_int_equal(gpo_rocm_visible("0,1,2,3,junk", NULL, NULL, uuids4, 4, o, &v), 4);
    assert_int_equal(v.rocr.entries, 5);
    assert_string_equal(v.rocr.stop, "");
    assert_string_equal(v.rocr.why, "");
    /* HIP counts what ROCr left; a trailing comma adds no entry. */
    assert_int_equal(gpo_rocm_visible("3,1", "1,2,", NULL, uuids4, 4, o, &v), 1);
    assert_int_equal(v.hip.in, 2);
    assert_int_equal(v.hip.out, 1);
    assert_int_equal(v.hip.entries, 2);
    assert_string_equal(v.hip.stop, "2");
    assert_non_null(strstr(v.hip.why, "ROCR_VISIBLE_DEVICES leaves 2 GPUs"));
    gpo_rocm_visibility_describe(&v, why, sizeof why);
    assert_non_null(strstr(why, "HIP_VISIBLE_DEVICES=\"1,2,\" leaves 1 of 2 (reading stopped at "
                                "'2': index 2"));
    /* CUDA_VISIBLE_DEVICES is HIP's list only when HIP's own is empty. */
    assert_int_equal(gpo_rocm_visible(NULL, "", "01", uuids4, 4, o, &v), 0);
    assert_string_equal(v.hip.variable, "CUDA_VISIBLE_DEVICES");
    assert_non_null(strstr(v.hip.why, "not an index as HIP reads one"));
    /* Set and empty: ROCr shows nothing, with no entry to blame. */
    assert_int_equal(gpo_rocm_visible("", NULL, NULL, uuids4, 4, o, &v), 0);
    assert_int_equal(v.rocr.entries, 0);
    assert_string_equal(v.rocr.why, "");
}

static void the_entry_behind_a_hip_device_is_read_as_hip_reads_the_list(void **state)
{
    char e[32];
    (void)state;
    /* HIP device 0 under "1,0" came from entry "1". */
    assert_int_equal(gpo_rocm_hip_list_entry("1,0", 0, e, sizeof e), 0);
    assert_string_equal(e, "1");
    /* Repeats are skipped: device 1 under "1,1,0" is "0". */
    assert_int_equal(gpo_rocm_hip_list_entry("1,1,0", 1, e, sizeof e), 0);
    assert_string_equal(e, "0");
    /* UUID text is an entry as written. */
    assert_int_equal(gpo_rocm_hip_list_entry("GPU-abba,2", 0, e, sizeof e), 0);
    assert_string_equal(e, "GPU-abba");
    /* HIP stops at " 1" (not canonical) and at an empty entry: there is no
     * device behind what follows. */
    assert_int_equal(gpo_rocm_hip_list_entry("0, 1", 1, e, sizeof e), -1);
    assert_int_equal(gpo_rocm_hip_list_entry("0,,1", 1, e, sizeof e), -1);
    assert_int_equal(gpo_rocm_hip_list_entry("0", 1, e, sizeof e), -1);
    /* An entry that does not fit the output is no answer. */
    assert_int_equal(gpo_rocm_hip_list_entry("GPU-babababababababa", 0, e, 8), -1);
}

static void backend_kfd_listing_honours_the_variables(void **state)
{
    rocm_env e;
    rocm_run r;
    (void)state;
    setenv("ROCR_VISIBLE_DEVICES", "GPU-86c3f2d9,5,2", 1); /* nodes 9, 7, 4 */
    setenv("HIP_VISIBLE_DEVICES", "1,0", 1);
    unsetenv("CUDA_VISIBLE_DEVICES");
    rocm_env_init(&e, kfd_root(0, "mi300x"), "/nonexistent/libamdhip64.so");
    rocm_run_do(&r, &e);
    assert_int_equal(r.load, GPUOPT_ERR_UNAVAILABLE);
    assert_int_equal(r.list.n, 2);
    assert_int_equal(r.list.items[0]->info.index, 0);
    assert_string_equal(r.list.items[0]->info.pci_bus_id, "0000:aa:00.0"); /* GPU 5 */
    assert_string_equal(r.list.items[1]->info.pci_bus_id, "0000:da:00.0"); /* GPU 7 */
    assert_non_null(strstr(r.report.reason, "leaves 2 of 3"));
    rocm_run_free(&r);

    /* Hiding every GPU: nothing listed, and the reason says which variable. */
    setenv("HIP_VISIBLE_DEVICES", "-1", 1);
    unsetenv("ROCR_VISIBLE_DEVICES");
    rocm_run_do(&r, &e);
    assert_int_equal(r.load, GPUOPT_ERR_UNAVAILABLE);
    assert_null(r.state);
    assert_non_null(strstr(r.report.reason, "HIP_VISIBLE_DEVICES=\"-1\" leaves 0 of 8"));
    rocm_run_free(&r);
    unsetenv("HIP_VISIBLE_DEVICES");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rocr_examples_from_the_runtime_header),
        cmocka_unit_test(rocr_tokens_are_trimmed_case_folded_and_base_prefixed),
        cmocka_unit_test(hip_indexes_apply_after_rocr_and_stop_at_the_first_invalid),
        cmocka_unit_test(cuda_visible_devices_counts_only_when_hips_is_unset_or_empty),
        cmocka_unit_test(no_variables_keep_every_gpu_in_order),
        cmocka_unit_test(no_gpus_and_gpus_without_a_uuid),
        cmocka_unit_test(each_filter_says_where_and_why_reading_stopped),
        cmocka_unit_test(the_entry_behind_a_hip_device_is_read_as_hip_reads_the_list),
        cmocka_unit_test(backend_kfd_listing_honours_the_variables),
    };
    return cmocka_run_group_tests(tests, rocm_test_clean_env, NULL);
}
