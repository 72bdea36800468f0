/* A backend is one folder plus one line: the gpuopt command, unchanged,
 * run against libgpuopt built again with the test-only backend of backend/
 * registered, lists its fake accelerator, plans for it with a knob from its
 * catalogue, and gives it a doctor block through its diagnose entry, while
 * the library of this build knows nothing of it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "doctor/doctor_test_util.h"

/* Runs the example build's gpuopt with `args` and parses its JSON output. */
static cJSON *run_json(const char *program, const char *const *env, const char *const *args,
                       int want_rc)
{
    char *out = NULL;
    int rc = dr_run_program(program, env, args, &out);
    if (rc != want_rc)
        fail_msg("%s exited %d, expected %d; output: %s", args[0], rc, want_rc, out);
    cJSON *root = cJSON_Parse(out);
    if (!root)
        fail_msg("%s: not JSON: %s", args[0], out);
    free(out);
    return root;
}

static const cJSON *find_named(const cJSON *array, const char *key, const char *value)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, array)
    {
        if (strcmp(dr_str(it, key), value) == 0)
            return it;
    }
    return NULL;
}

static void devices_lists_the_fake_accelerator_after_the_real_backends(void **state)
{
    (void)state;
    cJSON *root = run_json(GPO_CLI, NULL, (const char *const[]){"devices", "--json", NULL}, 0);
    const cJSON *backends = cJSON_GetObjectItemCaseSensitive(root, "backends");
    int n = cJSON_GetArraySize(backends);
    assert_true(n >= 2);
    /* Registered with one line after libgpuopt's own: last in priority. */
    const cJSON *last = cJSON_GetArrayItem(backends, n - 1);
    assert_string_equal(dr_str(last, "name"), "example");
    assert_string_equal(dr_str(last, "status"), "available");
    assert_string_equal(dr_str(last, "library"), "(built in)");

    const cJSON *dev =
        find_named(cJSON_GetObjectItemCaseSensitive(root, "devices"), "id", "example:0");
    assert_non_null(dev);
    assert_string_equal(dr_str(dev, "name"), "Example X1");
    assert_string_equal(dr_str(dev, "type"), "accelerator");
    cJSON_Delete(root);
}

static void plan_for_the_fake_device_sets_its_catalogue_knob_from_its_facts(void **state)
{
    (void)state;
    cJSON *root = run_json(
        GPO_CLI, NULL,
        (const char *const[]){"plan", "--device", "example:0", "--level", "1", "--json", NULL}, 0);
    assert_string_equal(dr_str(root, "device"), "example:0");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(root, "level_applied")->valueint, 1);
    const cJSON *knobs = cJSON_GetObjectItemCaseSensitive(root, "knobs");
    const cJSON *queues = find_named(knobs, "name", "example.queues");
    assert_non_null(queues);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(queues, "value")->valueint, 4);
    assert_string_equal(dr_str(queues, "env"), "EXAMPLE_QUEUES");
    assert_non_null(strstr(dr_str(queues, "reason"), "8 compute units"));
    const cJSON *block = find_named(knobs, "name", "launch.block_size");
    assert_non_null(block);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(block, "value")->valueint, 512);
    cJSON_Delete(root);
}

static void the_user_may_override_the_backends_knob_like_any_other(void **state)
{
    (void)state;
    const char *const env[] = {"GPUOPT_KNOBS=example.queues=3", NULL};
    cJSON *root = run_json(
        GPO_CLI, env, (const char *const[]){"plan", "--device", "example:0", "--json", NULL}, 0);
    const cJSON *queues =
        find_named(cJSON_GetObjectItemCaseSensitive(root, "knobs"), "name", "example.queues");
    assert_non_null(queues);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(queues, "value")->valueint, 3);
    assert_string_equal(dr_str(queues, "source"), "env");
    cJSON_Delete(root);
}

static void doctor_gives_the_backend_its_own_block(void **state)
{
    (void)state;
    cJSON *root = run_json(GPO_CLI, NULL, (const char *const[]){"doctor", "--json", NULL}, 0);
    dr_assert_well_formed(root);
    const cJSON *block =
        find_named(cJSON_GetObjectItemCaseSensitive(root, "backends"), "name", "example");
    assert_non_null(block);
    assert_string_equal(dr_str(block, "status"), "available");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(block, "usable_accelerators")->valueint, 1);
    assert_non_null(dr_finding(root, "example", "backend", "ok"));
    const cJSON *lib = dr_finding(root, "example", "library", "ok");
    assert_non_null(lib);
    assert_true(dr_evidence_has(lib, "GPUOPT_EXAMPLE_LIBRARY is not set"));
    const cJSON *ids = cJSON_GetObjectItemCaseSensitive(root, "accelerators");
    int listed = 0;
    const cJSON *id;
    cJSON_ArrayForEach(id, ids)
    {
        listed |= strcmp(id->valuestring, "example:0") == 0;
    }
    assert_true(listed);
    cJSON_Delete(root);
}

/* The library variable the backend declares in its ops table reaches its
 * load (through the narrow environment) and its diagnose (gpo_dr_library). */
static void its_library_variable_reaches_load_and_doctor(void **state)
{
    (void)state;
    const char *const env[] = {"GPUOPT_EXAMPLE_LIBRARY=/nonexistent/libexample.so.1", NULL};
    cJSON *root = run_json(GPO_CLI, env, (const char *const[]){"doctor", "--json", NULL}, 1);
    dr_assert_well_formed(root);
    const cJSON *block =
        find_named(cJSON_GetObjectItemCaseSensitive(root, "backends"), "name", "example");
    assert_string_equal(dr_str(block, "status"), "unavailable");
    const cJSON *lib = dr_finding(root, "example", "library", "problem");
    assert_non_null(lib);
    assert_string_equal(dr_str(lib, "path"), "/nonexistent/libexample.so.1");
    assert_true(dr_evidence_has(lib, "cannot be read"));
    cJSON_Delete(root);
}

static void the_library_of_this_build_knows_nothing_of_it(void **state)
{
    (void)state;
    cJSON *root =
        run_json(GPO_PLAIN_CLI, NULL, (const char *const[]){"devices", "--json", NULL}, 0);
    assert_null(find_named(cJSON_GetObjectItemCaseSensitive(root, "backends"), "name", "example"));
    cJSON_Delete(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(devices_lists_the_fake_accelerator_after_the_real_backends),
        cmocka_unit_test(plan_for_the_fake_device_sets_its_catalogue_knob_from_its_facts),
        cmocka_unit_test(the_user_may_override_the_backends_knob_like_any_other),
        cmocka_unit_test(doctor_gives_the_backend_its_own_block),
        cmocka_unit_test(its_library_variable_reaches_load_and_doctor),
        cmocka_unit_test(the_library_of_this_build_knows_nothing_of_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
