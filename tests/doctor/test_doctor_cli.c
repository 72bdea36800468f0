/* `gpuopt doctor` on each recorded case (tests/fixtures/doctor/README.md):
 * the exit code (0 only with a usable accelerator), and in the --json answer
 * the check that must fire, its status and its fix. Each case runs the CLI
 * in a child with its own environment, as a user would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "doctor_test_util.h"

#define STUB "/usr/local/cuda/lib64/stubs/libcuda.so"
#define H100 GPO_FAKE_CUDA_DEVICES_DIR "/h100-sxm5.json"

static char env_root[1200], env_lib[1200];

/* "GPUOPT_SYSFS_ROOT=<tree>" */
static const char *root_of(const char *tree)
{
    snprintf(env_root, sizeof env_root, "GPUOPT_SYSFS_ROOT=%s", dr_tree(0, tree));
    return env_root;
}

/* Runs `gpuopt doctor --json` and parses the answer; *rc gets the exit code. */
static cJSON *doctor_json(const char *const *env, int *rc)
{
    static const char *const args[] = {"doctor", "--json", NULL};
    char *out = NULL;
    *rc = dr_run_cli(env, args, &out);
    cJSON *root = cJSON_Parse(out);
    if (!root)
        fail_msg("gpuopt doctor --json printed no JSON (exit %d): %s", *rc, out);
    free(out);
    dr_assert_well_formed(root);
    return root;
}

static const cJSON *must(const cJSON *root, const char *backend, const char *check,
                         const char *status)
{
    const cJSON *f = dr_finding(root, backend, check, status);
    if (!f)
        fail_msg("no %s/%s finding with status %s", backend, check, status ? status : "(any)");
    return f;
}

static void fix_has(const cJSON *f, const char *text)
{
    if (!strstr(dr_str(f, "fix"), text))
        fail_msg("%s/%s: fix '%s' lacks '%s'", dr_str(f, "backend"), dr_str(f, "check"),
                 dr_str(f, "fix"), text);
}

/* ---- NVIDIA ------------------------------------------------------------------ */

static void healthy_h100_with_the_driver_double_exits_0_all_cuda_checks_ok(void **state)
{
    (void)state;
    const char *env[] = {root_of("nvidia-h100"), "GPUOPT_CUDA_LIBRARY=" GPO_FAKE_CUDA,
                         "GPUOPT_FAKE_CUDA_DEVICES=" H100, "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC,
                         NULL};
    int rc;
    cJSON *root = doctor_json(env, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(cJSON_GetObjectItem(root, "accelerators_usable")->valueint, 1);
    assert_string_equal(
        cJSON_GetArrayItem(cJSON_GetObjectItem(root, "accelerators"), 0)->valuestring, "cuda:0");
    static const char *const ok[] = {"backend",
                                     "pci_gpus",
                                     "kernel_driver",
                                     "device_nodes",
                                     "device_permissions",
                                     "driver_library",
                                     "visible_devices",
                                     NULL};
    for (const char *const *c = ok; *c; c++)
        must(root, "cuda", *c, "ok");
    assert_int_equal(dr_count(root, "cuda", "backend", "problem"), 0);
    const cJSON *f = must(root, "cuda", "runtime_version", "ok");
    assert_non_null(strstr(dr_str(f, "summary"), "NVRTC 13.0"));
    /* Nothing in the cuda block is a problem or a warning on a healthy box,
     * except what this machine's own CUDA runtime may add. */
    static const char *const checks[] = {
        "pci_gpus",     "kernel_driver", "device_nodes",    "device_permissions", "driver_library",
        "stub_library", "driver_init",   "visible_devices", "container",          NULL};
    for (const char *const *c = checks; *c; c++) {
        assert_int_equal(dr_count(root, "cuda", *c, "problem"), 0);
        assert_int_equal(dr_count(root, "cuda", *c, "warning"), 0);
    }
    cJSON_Delete(root);
}

static void human_report_marks_each_finding_and_ends_with_the_verdict(void **state)
{
    (void)state;
    const char *env[] = {
        root_of("nvidia-h100-video-0660"),      "GPUOPT_CUDA_LIBRARY=" GPO_FAKE_CUDA,
        "GPUOPT_FAKE_CUDA_DEVICES=" H100,       "GPUOPT_FAKE_CUDA_INIT=CUDA_ERROR_NO_DEVICE",
        "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC, NULL};
    static const char *const args[] = {"doctor", NULL};
    char *out = NULL;
    assert_int_equal(dr_run_cli(env, args, &out), 1);
    assert_non_null(strstr(out, "[FAIL] device_permissions"));
    assert_non_null(strstr(out, "[ ok ] kernel_driver"));
    assert_non_null(strstr(out, "fix: sudo usermod -aG video alice"));
    assert_non_null(strstr(out, "no accelerator is usable"));
    /* Quiet by default: an ok finding is one line; --verbose adds its evidence. */
    assert_null(strstr(out, "- /proc/driver/nvidia/version: NVRM"));
    free(out);
    static const char *const verbose[] = {"doctor", "--verbose", NULL};
    assert_int_equal(dr_run_cli(env, verbose, &out), 1);
    assert_non_null(strstr(out, "- /proc/driver/nvidia/version: NVRM"));
    free(out);
}

/* What to do about a failed cuInit comes from the backend's own table of
 * cuInit results, for each result it knows. */
static void driver_init_failure_says_what_to_do_for_its_result(void **state)
{
    (void)state;
    static const struct {
        const char *init, *fix;
    } cases[] = {
        {"GPUOPT_FAKE_CUDA_INIT=CUDA_ERROR_SYSTEM_NOT_READY", "nvidia-fabricmanager"},
        {"GPUOPT_FAKE_CUDA_INIT=CUDA_ERROR_DEVICE_UNAVAILABLE", "nvidia-smi -c DEFAULT"},
        {"GPUOPT_FAKE_CUDA_INIT=CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "reboot"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *env[] = {root_of("nvidia-h100"),
                             "GPUOPT_CUDA_LIBRARY=" GPO_FAKE_CUDA,
                             "GPUOPT_FAKE_CUDA_DEVICES=" H100,
                             cases[i].init,
                             "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC,
                             NULL};
        int rc;
        cJSON *root = doctor_json(env, &rc);
        assert_int_equal(rc, 1);
        fix_has(must(root, "cuda", "driver_init", "problem"), cases[i].fix);
        cJSON_Delete(root);
    }
}

static void libcuda_missing_with_module_loaded_says_what_to_install(void **state)
{
    (void)state;
    if (dr_library_loads("libcuda.so.1"))
        skip(); /* this machine has a driver: the default soname would load */
    const char *env[] = {root_of("nvidia-t4-no-libcuda"), "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC,
                         NULL};
    int rc;
    cJSON *root = doctor_json(env, &rc);
    assert_int_equal(rc, 1);
    must(root, "cuda", "kernel_driver", "ok");
    must(root, "cuda", "device_nodes", "ok");
    must(root, "cuda", "backend", "problem");
    const cJSON *f = must(root, "cuda", "driver_library", "problem");
    fix_has(f, "libnvidia-compute-535");
    fix_has(f, "535.104.05");
    assert_true(dr_evidence_has(f, "no libcuda.so.1 in"));
    /* The kernel-only listing is not an accelerator. */
    assert_int_equal(cJSON_GetObjectItem(root, "accelerators_usable")->valueint, 0);
    cJSON_Delete(root);
}

static void libcuda_override_pointing_nowhere_names_the_variable(void **state)
{
    (void)state;
    snprintf(env_lib, sizeof env_lib, "GPUOPT_CUDA_LIBRARY=%s/usr/lib/libcuda.so.1",
             dr_tree(1, "nvidia-t4-no-libcuda"));
    const char *env[] = {root_of("nvidia-t4-no-libcuda"), env_lib,
                         "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC, NULL};
    int rc;
    cJSON *root = doctor_json(env, &rc);
    assert_int_equal(rc, 1);
    const cJSON *f = must(root, "cuda", "driver_library", "problem");
    fix_has(f, "GPUOPT_CUDA_LIBRARY");
    assert_true(dr_evidence_has(f, "GPUOPT_CUDA_LIBRARY="));
    cJSON_Delete(root);
}

static void driver_older_than_nvrtc_is_a_problem_with_the_minimum_driver(void **state)
{
    (void)state;
    const char *env[] = {root_of("nvidia-t4-no-libcuda"),
                         "GPUOPT_CUDA_LIBRARY=" GPO_FAKE_CUDA,
                         "GPUOPT_FAKE_CUDA_DEVICES=" H100,
                         "GPUOPT_FAKE_CUDA_DRIVER_VERSION=12020",
                         "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC,
                         "GPUOPT_FAKE_NVRTC_VERSION=13.0",
                         NULL};
    int rc;
    cJSON *root = doctor_json(env, &rc);
    assert_int_equal(rc, 0); /* the double's GPU is usable; NVRTC code would not be */
    const cJSON *f = NULL, *x;
    cJSON_ArrayForEach(x, cJSON_GetObjectItem(root, "findings"))
    {
        if (strcmp(dr_str(x, "check"), "runtime_version") == 0 &&
            strstr(dr_str(x, "summary"), "NVRTC"))
            f = x;
    }
    assert_non_null(f);
    assert_string_equal(dr_str(f, "status"), "problem");
    assert_non_null(strstr(dr_str(f, "summary"), "supports CUDA 12.2"));
    fix_has(f, "580.65.06");
    cJSON_Delete(root);
}

static void nvrtc_newer_minor_than_driver_is_a_warning(void **state)
{
    (void)state;
    const char *env[] = {root_of("nvidia-h100"),
                         "GPUOPT_CUDA_LIBRARY=" GPO_FAKE_CUDA,
                         "GPUOPT_FAKE_CUDA_DEVICES=" H100,
                         "GPUOPT_FAKE_CUDA_DRIVER_VERSION=12020",
                         "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC,
                         "GPUOPT_FAKE_NVRTC_VERSION=12.8",
                         NULL};
    int rc;
    cJSON *root = doctor_json(env, &rc);
    assert_int_equal(rc, 0);
    const cJSON *f = must(root, "cuda", "runtime_version", "warning");
    assert_non_null(strstr(dr_str(f, "summary"), "NVRTC 12.8"));
    fix_has(f, "570.26");
    cJSON_Delete(root);
}

static void toolkit_stub_as_libcuda_is_a_stub_problem(void **state)
{
    (void)state;
    if (access(STUB, R_OK) != 0)
        skip();
    const char *env[] = {root_of("nvidia-h100"), "GPUOPT_CUDA_LIBRARY=" STUB,
                         "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC, NULL};
    int rc;
    cJSON *root = doctor_json(env, &rc);
    assert_int_equal(rc, 1);
    const cJSON *f = must(root, "cuda", "stub_library", "problem");
    fix_has(f, "GPUOPT_CUDA_LIBRARY");
    fix_has(f, "stubs");
    assert_true(dr_evidence_has(f, "CUDA_ERROR_STUB_LIBRARY"));
    assert_null(dr_finding(root, "cuda", "driver_library", "ok"));
    /* The overview points at the finding that says what to do. */
    fix_has(must(root, "cuda", "backend", "problem"), "stub_library");
    cJSON_Delete(root);
}

static void stubs_folder_in_ld_library_path_is_a_warning_even_when_cuda_works(void **state)
{
    (void)state;
    const char *env[] = {root_of("nvidia-h100"),
                         "GPUOPT_CUDA_LIBRARY=" GPO_FAKE_CUDA,
                         "GPUOPT_FAKE_CUDA_DEVICES=" H100,
                         "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC,
                         "LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs",
                         NULL};
    int rc;
    cJSON *root = doctor_json(env, &rc);
    assert_int_equal(rc, 0);
    fix_has(must(root, "cuda", "stub_library", "warning"), "LD_LIBRARY_PATH");
    cJSON_Delete(root);
}

static void node_of_group_video_not_joined_says_usermod(void **state)
{
    (void)state;
    const char *env[] = {
        root_of("nvidia-h100-video-0660"),      "GPUOPT_CUDA_LIBRARY=" GPO_FAKE_CUDA,
        "GPUOPT_FAKE_CUDA_DEVICES=" H100,       "GPUOPT_FAKE_CUDA_INIT=CUDA_ERROR_NO_DEVICE",
        "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC, NULL};
    int rc;
    cJSON *root = doctor_json(env, &rc);
    assert_int_equal(rc, 1);
    /* The nodes CUDA opens (nvidiactl, nvidia-uvm, nvidia0) share owner and
     * mode: one finding names them all. */
    assert_int_equal(dr_count(root, "cuda", "device_permissions", "problem"), 1);
    const cJSON *f = must(root, "cuda", "device_permissions", "problem");
    fix_has(f, "sudo usermod -aG video alice");
    assert_true(dr_evidence_has(f, "/dev/nvidia0: mode 0660"));
    assert_true(dr_evidence_has(f, "group video(44)"));
    assert_true(dr_evidence_has(f, "Permission denied"));
    assert_true(dr_evidence_has(f, "alice(1000), users(100)"));
    fix_has(must(root, "cuda", "driver_init", "problem"), "device_permissions");
    cJSON_Delete(root);
}

static void empty_cuda_visible_devices_hides_every_gpu(void **state)
{
    (void)state;
    const char *env[] = {root_of("nvidia-h100"),           "GPUOPT_CUDA_LIBRARY=" GPO_FAKE_CUDA,
                         "GPUOPT_FAKE_CUDA_DEVICES=" H100, "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC,
                         "CUDA_VISIBLE_DEVICES=",          NULL};
    int rc;
    cJSON *root = doctor_json(env, &rc);
    assert_int_equal(rc, 1);
    const cJSON *f = must(root, "cuda", "visible_devices", "problem");
    fix_has(f, "unset CUDA_VISIBLE_DEVICES");
    assert_string_equal(dr_str(f, "path"), "CUDA_VISIBLE_DEVICES");
    fix_has(must(root, "cuda", "driver_init", "problem"), "visible_devices");
    must(root, "cuda", "device_permissions", "ok");
    cJSON_Delete(root);
}

static void visible_list_with_a_missing_index_or_minus_one_hides_every_gpu(void **state)
{
    (void)state;
    static const char *const values[] = {"CUDA_VISIBLE_DEVICES=1", "CUDA_VISIBLE_DEVICES=-1",
                                         "CUDA_VISIBLE_DEVICES=gpu0"};
    for (size_t i = 0; i < 3; i++) {
        const char *env[] = {root_of("nvidia-h100"),
                             "GPUOPT_CUDA_LIBRARY=" GPO_FAKE_CUDA,
                             "GPUOPT_FAKE_CUDA_DEVICES=" H100,
                             "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC,
                             values[i],
                             NULL};
        int rc;
        cJSON *root = doctor_json(env, &rc);
        assert_int_equal(rc, 1);
        must(root, "cuda", "visible_devices", "problem");
        cJSON_Delete(root);
    }
}

static void visible_list_cut_short_by_a_bad_entry_is_a_warning(void **state)
{
    (void)state;
    const char *env[] = {root_of("nvidia-h100"),           "GPUOPT_CUDA_LIBRARY=" GPO_FAKE_CUDA,
                         "GPUOPT_FAKE_CUDA_DEVICES=" H100, "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC,
                         "CUDA_VISIBLE_DEVICES=0,abc",     NULL};
    int rc;
    cJSON *root = doctor_json(env, &rc);
    assert_int_equal(rc, 0);
    fix_has(must(root, "cuda", "visible_devices", "warning"), "'abc'");
    cJSON_Delete(root);
}

static void container_asking_for_gpus_without_nodes_says_gpus_all(void **state)
{
    (void)state;
    snprintf(env_lib, sizeof env_lib, "GPUOPT_CUDA_LIBRARY=%s/usr/lib/libcuda.so.1",
             dr_tree(1, "nvidia-container-no-nodes"));
    const char *env[] = {root_of("nvidia-container-no-nodes"), env_lib,
                         "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC, "NVIDIA_VISIBLE_DEVICES=all",
                         NULL};
    int rc;
    cJSON *root = doctor_json(env, &rc);
    assert_int_equal(rc, 1);
    const cJSON *f = must(root, "cuda", "container", "problem");
    fix_has(f, "--gpus all");
    assert_true(dr_evidence_has(f, "NVIDIA_VISIBLE_DEVICES=all"));
    assert_true(dr_evidence_has(f, "/.dockerenv"));
    must(root, "cuda", "device_nodes", "problem");
    assert_non_null(strstr(dr_str(root, "container"), "/.dockerenv"));
    cJSON_Delete(root);
}

static void container_without_the_variable_still_points_at_the_missing_nodes(void **state)
{
    (void)state;
    snprintf(env_lib, sizeof env_lib, "GPUOPT_CUDA_LIBRARY=%s/usr/lib/libcuda.so.1",
             dr_tree(1, "nvidia-container-no-nodes"));
    const char *env[] = {root_of("nvidia-container-no-nodes"), env_lib,
                         "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC, NULL};
    int rc;
    cJSON *root = doctor_json(env, &rc);
    assert_int_equal(rc, 1);
    fix_has(must(root, "cuda", "container", "problem"), "--gpus all");
    cJSON_Delete(root);
}

static void backend_excluded_by_configuration_on_a_gpu_box_is_a_warning(void **state)
{
    (void)state;
    const char *env[] = {root_of("nvidia-h100"),
                         "GPUOPT_CUDA_LIBRARY=" GPO_FAKE_CUDA,
                         "GPUOPT_FAKE_CUDA_DEVICES=" H100,
                         "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC,
                         "GPUOPT_BACKEND=cpu",
                         NULL};
    int rc;
    cJSON *root = doctor_json(env, &rc);
    assert_int_equal(rc, 1);
    const cJSON *f = must(root, "cuda", "backend", "warning");
    fix_has(f, "GPUOPT_BACKEND");
    assert_true(dr_evidence_has(f, "excluded by GPUOPT_BACKEND=cpu"));
    assert_null(dr_finding(root, "cuda", "driver_library", NULL));
    cJSON_Delete(root);
}

/* ---- AMD ------------------------------------------------------------------------- */

static void kfd_of_group_render_not_joined_says_usermod_render(void **state)
{
    (void)state;
    snprintf(env_lib, sizeof env_lib, "GPUOPT_HIP_LIBRARY=%s/opt/rocm/lib/libamdhip64.so",
             dr_tree(1, "amd-rx7900xtx-render"));
    const char *env[] = {root_of("amd-rx7900xtx-render"), env_lib,
                         "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC, NULL};
    int rc;
    cJSON *root = doctor_json(env, &rc);
    assert_int_equal(rc, 1);
    must(root, "rocm", "pci_gpus", "ok");
    must(root, "rocm", "kernel_driver", "ok");
    must(root, "rocm", "device_nodes", "ok");
    assert_int_equal(dr_count(root, "rocm", "device_permissions", "problem"), 2);
    const cJSON *render = NULL, *video = NULL, *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(root, "findings"))
    {
        if (strcmp(dr_str(f, "check"), "device_permissions") != 0)
            continue;
        if (strcmp(dr_str(f, "path"), "/dev/kfd") == 0)
            render = f;
        if (strcmp(dr_str(f, "path"), "/dev/dri/renderD128") == 0)
            video = f;
    }
    assert_non_null(render);
    assert_non_null(video);
    fix_has(render, "sudo usermod -aG render alice");
    assert_true(dr_evidence_has(render, "group render(109)"));
    /* The database lists alice in video; her session predates it. */
    fix_has(video, "log out and back in");
    fix_has(video, "newgrp video");
    /* The verdict names each failing check once. */
    const char *verdict = dr_str(root, "verdict");
    const char *first = strstr(verdict, "rocm/device_permissions");
    assert_non_null(first);
    assert_null(strstr(first + 1, "rocm/device_permissions"));
    /* No NVIDIA here: the CUDA block has nothing to fix. */
    assert_int_equal(dr_count(root, "cuda", "pci_gpus", "info"), 1);
    cJSON_Delete(root);
}

static void hip_visible_devices_minus_one_hides_the_amd_gpu(void **state)
{
    (void)state;
    const char *env[] = {root_of("amd-rx7900xtx-render"), "HIP_VISIBLE_DEVICES=-1",
                         "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC, NULL};
    int rc;
    cJSON *root = doctor_json(env, &rc);
    assert_int_equal(rc, 1);
    const cJSON *f = must(root, "rocm", "visible_devices", "problem");
    fix_has(f, "unset HIP_VISIBLE_DEVICES");
    assert_true(dr_evidence_has(f, "negative"));
    cJSON_Delete(root);
}

/* ---- OpenCL --------------------------------------------------------------------- */

static void no_icd_registered_says_what_to_install(void **state)
{
    (void)state;
    const char *env[] = {root_of("opencl-no-icds"), "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC, NULL};
    int rc;
    cJSON *root = doctor_json(env, &rc);
    assert_int_equal(rc, 1);
    const cJSON *f = must(root, "opencl", "icd_registry", "problem");
    fix_has(f, "pocl-opencl-icd");
    assert_true(dr_evidence_has(f, "/etc/OpenCL/vendors (under the recorded root)"));
    cJSON_Delete(root);
}

static void ocl_icd_vendors_pointing_at_an_empty_folder_is_read_instead(void **state)
{
    (void)state;
    char vendors[1200];
    snprintf(vendors, sizeof vendors, "OCL_ICD_VENDORS=%s/etc/OpenCL/vendors",
             dr_tree(1, "opencl-no-icds"));
    const char *env[] = {vendors, "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC, NULL};
    int rc;
    cJSON *root = doctor_json(env, &rc);
    const cJSON *f = must(root, "opencl", "icd_registry", "problem");
    assert_true(dr_evidence_has(f, "OCL_ICD_VENDORS="));
    cJSON_Delete(root);
}

static void icd_naming_a_missing_library_is_a_problem(void **state)
{
    (void)state;
    const char *env[] = {root_of("opencl-stale-icd"), "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC, NULL};
    int rc;
    cJSON *root = doctor_json(env, &rc);
    assert_int_equal(rc, 1);
    must(root, "opencl", "icd_registry", "ok");
    const cJSON *f = must(root, "opencl", "icd_library", "problem");
    assert_non_null(strstr(dr_str(f, "summary"), "libgpuopt-removed-vendor-icd.so.1"));
    fix_has(f, "removed-vendor.icd");
    cJSON_Delete(root);
}

static void a_chosen_loader_that_does_not_load_is_named_as_chosen(void **state)
{
    (void)state;
    const char *env[] = {root_of("opencl-stale-icd"), "GPUOPT_NVRTC_LIBRARY=" GPO_FAKE_NVRTC,
                         "GPUOPT_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1", NULL};
    int rc;
    cJSON *root = doctor_json(env, &rc);
    assert_int_equal(rc, 1);
    const cJSON *f = must(root, "opencl", "loader_library", "problem");
    assert_non_null(strstr(dr_str(f, "summary"), "/nonexistent/libOpenCL.so.1"));
    assert_true(dr_evidence_has(f, "GPUOPT_OPENCL_LIBRARY or the config file chose"));
    assert_string_equal(dr_str(f, "path"), "/nonexistent/libOpenCL.so.1");
    cJSON_Delete(root);
}

/* ---- This machine ---------------------------------------------------------------- */

static void this_machine_as_it_is(void **state)
{
    (void)state;
    int rc;
    cJSON *root = doctor_json(NULL, &rc);
    /* The machines this project is built on have no GPU and PoCL installed
     * (make deps); elsewhere only the invariants are checked. */
    int gpu = access("/dev/nvidiactl", F_OK) == 0 || access("/dev/kfd", F_OK) == 0;
    if (!gpu) {
        assert_int_equal(rc, 1);
        assert_int_equal(cJSON_GetObjectItem(root, "accelerators_usable")->valueint, 0);
    }
    if (access("/etc/OpenCL/vendors/pocl.icd", R_OK) == 0 && !getenv("OCL_ICD_VENDORS")) {
        const cJSON *f = must(root, "opencl", "icd_registry", "ok");
        assert_true(dr_evidence_has(f, "pocl.icd"));
        must(root, "opencl", "icd_library", "ok");
        /* The platforms come from the backend's own load. */
        f = must(root, "opencl", "loader_library", "ok");
        assert_true(dr_evidence_has(f, "platform \"Portable Computing Language\""));
    }
    must(root, "cpu", "backend", "ok");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(root, "sysfs_root")));
    cJSON_Delete(root);
}

/* ---- Usage ------------------------------------------------------------------------- */

static void unknown_option_is_a_usage_error(void **state)
{
    (void)state;
    static const char *const args[] = {"doctor", "--bogus", NULL};
    assert_int_equal(dr_run_cli(NULL, args, NULL), 2);
}

static void help_prints_usage_and_exits_0(void **state)
{
    (void)state;
    static const char *const a1[] = {"doctor", "--help", NULL};
    static const char *const a2[] = {"help", "doctor", NULL};
    char *out = NULL;
    assert_int_equal(dr_run_cli(NULL, a1, &out), 0);
    assert_non_null(strstr(out, "usage: gpuopt doctor"));
    free(out);
    assert_int_equal(dr_run_cli(NULL, a2, &out), 0);
    assert_non_null(strstr(out, "Exit status: 0"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(healthy_h100_with_the_driver_double_exits_0_all_cuda_checks_ok),
        cmocka_unit_test(human_report_marks_each_finding_and_ends_with_the_verdict),
        cmocka_unit_test(driver_init_failure_says_what_to_do_for_its_result),
        cmocka_unit_test(libcuda_missing_with_module_loaded_says_what_to_install),
        cmocka_unit_test(libcuda_override_pointing_nowhere_names_the_variable),
        cmocka_unit_test(driver_older_than_nvrtc_is_a_problem_with_the_minimum_driver),
        cmocka_unit_test(nvrtc_newer_minor_than_driver_is_a_warning),
        cmocka_unit_test(toolkit_stub_as_libcuda_is_a_stub_problem),
        cmocka_unit_test(stubs_folder_in_ld_library_path_is_a_warning_even_when_cuda_works),
        cmocka_unit_test(node_of_group_video_not_joined_says_usermod),
        cmocka_unit_test(empty_cuda_visible_devices_hides_every_gpu),
        cmocka_unit_test(visible_list_with_a_missing_index_or_minus_one_hides_every_gpu),
        cmocka_unit_test(visible_list_cut_short_by_a_bad_entry_is_a_warning),
        cmocka_unit_test(container_asking_for_gpus_without_nodes_says_gpus_all),
        cmocka_unit_test(container_without_the_variable_still_points_at_the_missing_nodes),
        cmocka_unit_test(backend_excluded_by_configuration_on_a_gpu_box_is_a_warning),
        cmocka_unit_test(kfd_of_group_render_not_joined_says_usermod_render),
        cmocka_unit_test(hip_visible_devices_minus_one_hides_the_amd_gpu),
        cmocka_unit_test(no_icd_registered_says_what_to_install),
        cmocka_unit_test(ocl_icd_vendors_pointing_at_an_empty_folder_is_read_instead),
        cmocka_unit_test(icd_naming_a_missing_library_is_a_problem),
        cmocka_unit_test(a_chosen_loader_that_does_not_load_is_named_as_chosen),
        cmocka_unit_test(this_machine_as_it_is),
        cmocka_unit_test(unknown_option_is_a_usage_error),
        cmocka_unit_test(help_prints_usage_and_exits_0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
