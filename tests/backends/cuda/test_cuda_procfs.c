/* Kernel-side discovery: libcuda.so.1 cannot be opened, but the NVIDIA
 * kernel module lists GPUs under /proc/driver/nvidia (tests/fixtures/nvidia). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda/cuda_backend.h"
#include "cuda/cuda_load.h"
#include "cuda/cuda_procfs.h"
#include "cuda_test_util.h"

#define MISSING_LIBRARY "/nonexistent/libcuda.so.1"

typedef struct listed {
    void *st;
    gpo_device_list list;
    gpo_backend_report rep;
    gpuopt_status load_status;
} listed;

static void list_tree(const char *tree, listed *out)
{
    cuda_env e;
    char root[1024];
    snprintf(root, sizeof root, "%s/nvidia/%s", GPO_FIXTURES_DIR, tree);
    memset(out, 0, sizeof *out);
    cuda_env_init(&e, MISSING_LIBRARY, root);
    out->load_status = gpo_backend_cuda.load(&e.env, &out->st, &out->rep);
    if (out->st)
        assert_int_equal(gpo_backend_cuda.enumerate(out->st, &e.env, &out->list), GPUOPT_OK);
}

static void done(listed *l)
{
    gpo_device_list_free(&l->list);
    gpo_backend_cuda.unload(l->st);
}

static void gpus_of_the_kernel_module_are_listed_when_the_library_is_missing(void **state)
{
    (void)state;
    listed l;
    list_tree("hgx-h100-open-580", &l);
    /* Unavailable, with a state: the core still lists the devices. */
    assert_int_equal(l.load_status, GPUOPT_ERR_UNAVAILABLE);
    assert_non_null(l.st);
    assert_non_null(strstr(l.rep.reason, "cannot open " MISSING_LIBRARY));
    assert_non_null(strstr(l.rep.reason, "the NVIDIA kernel driver 580.65.06 lists 2 GPUs"));
    /* What to install, for the kernel module's version. */
    assert_non_null(strstr(l.rep.reason, "libnvidia-compute-580"));
    assert_string_equal(l.rep.driver_version, "580.65.06");
    assert_int_equal(l.list.n, 2);
    for (size_t i = 0; i < 2; i++) {
        gpuopt_device *d = l.list.items[i];
        assert_string_equal(d->info.name, "NVIDIA H100 80GB HBM3");
        assert_string_equal(d->info.vendor, "NVIDIA");
        assert_int_equal(d->info.type, GPUOPT_DEVICE_TYPE_GPU);
        assert_int_equal(d->info.index, (int)i);
        assert_string_equal(d->info.driver_version, "580.65.06");
        /* Nothing the kernel does not say: architecture unknown. */
        assert_int_equal(d->info.cc_major, -1);
        assert_string_equal(d->info.arch_family, "");
        assert_int_equal(d->info.features_known, 0);
        assert_int_equal(d->info.compute_units, -1);
        assert_true(d->est_gflops == 0);
        assert_string_equal(cuda_detail_string(d, "source"), "kernel");
        assert_true(cuda_detail_number(d, "usable") == 0);
        assert_string_equal(cuda_detail_string(d, "gpu_firmware"), "580.65.06");
        assert_string_equal(cuda_detail_string(d, "pci_device_id"), "0x2330");
        assert_true(cuda_detail_number(d, "excluded") == 0);
    }
    assert_string_equal(l.list.items[0]->info.pci_bus_id, "0000:18:00.0");
    assert_string_equal(l.list.items[0]->info.uuid, "GPU-6f8b0d2e-4a5c-4e7a-9c1d-1e3f5a7b9c1d");
    assert_string_equal(l.list.items[1]->info.pci_bus_id, "0000:2a:00.0");
    done(&l);
}

static void proprietary_module_version_line_is_read_too(void **state)
{
    (void)state;
    listed l;
    list_tree("t4-proprietary-535", &l);
    assert_int_equal(l.load_status, GPUOPT_ERR_UNAVAILABLE);
    assert_string_equal(l.rep.driver_version, "535.104.05");
    assert_non_null(strstr(l.rep.reason, "lists 1 GPU,"));
    assert_non_null(strstr(l.rep.reason, "libnvidia-compute-535"));
    assert_int_equal(l.list.n, 1);
    assert_string_equal(l.list.items[0]->info.name, "Tesla T4");
    assert_string_equal(l.list.items[0]->info.pci_bus_id, "0000:00:1e.0");
    assert_string_equal(cuda_detail_string(l.list.items[0], "gpu_firmware"), "");
    done(&l);
}

static void question_mark_uuids_are_unknown_and_exclusion_is_shown(void **state)
{
    (void)state;
    listed l;
    list_tree("k80-470-uninitialised", &l);
    assert_int_equal(l.list.n, 2);
    assert_string_equal(l.list.items[0]->info.uuid, "");
    assert_string_equal(l.list.items[1]->info.uuid, "");
    assert_string_equal(l.list.items[0]->info.pci_bus_id, "0000:83:00.0");
    assert_true(cuda_detail_number(l.list.items[0], "excluded") == 0);
    assert_true(cuda_detail_number(l.list.items[1], "excluded") == 1);
    done(&l);
}

static void module_without_gpus_is_plainly_unavailable(void **state)
{
    (void)state;
    listed l;
    list_tree("module-no-gpus", &l);
    assert_int_equal(l.load_status, GPUOPT_ERR_UNAVAILABLE);
    assert_null(l.st);
    assert_non_null(strstr(l.rep.reason, "cannot open " MISSING_LIBRARY));
    assert_null(strstr(l.rep.reason, "kernel driver"));
}

static void malformed_kernel_files_fall_back_without_crashing(void **state)
{
    (void)state;
    listed l;
    list_tree("malformed", &l);
    assert_int_equal(l.load_status, GPUOPT_ERR_UNAVAILABLE);
    assert_non_null(l.st);
    assert_string_equal(l.rep.driver_version, "");
    assert_int_equal(l.list.n, 2);
    /* No key parsed: a generic name, the bus id from the folder's name. */
    gpuopt_device *d = l.list.items[0];
    assert_string_equal(d->info.name, "NVIDIA GPU");
    assert_string_equal(d->info.uuid, "");
    assert_string_equal(d->info.pci_bus_id, "0000:65:00.0");
    /* A folder that is no bus id: listed, with no bus id. */
    assert_string_equal(l.list.items[1]->info.pci_bus_id, "");
    done(&l);
}

static void live_system_without_nvidia_files_lists_nothing(void **state)
{
    (void)state;
    listed l;
    list_tree("absent", &l);
    assert_int_equal(l.load_status, GPUOPT_ERR_UNAVAILABLE);
    assert_null(l.st);
}

static void kernel_version_parser_takes_only_versions(void **state)
{
    (void)state;
    char out[64];
    gpo_fs fs;
    gpo_fs_init(&fs, GPO_FIXTURES_DIR "/nvidia/hgx-h100-open-580");
    gpo_cuda_procfs_version(&fs, out, sizeof out);
    assert_string_equal(out, "580.65.06");
    /* x86_64 is not a version; a short buffer truncates safely. */
    gpo_cuda_procfs_version(&fs, out, 4);
    assert_string_equal(out, "580");
    gpo_fs_init(&fs, GPO_FIXTURES_DIR "/nvidia/malformed");
    gpo_cuda_procfs_version(&fs, out, sizeof out);
    assert_string_equal(out, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpus_of_the_kernel_module_are_listed_when_the_library_is_missing),
        cmocka_unit_test(proprietary_module_version_line_is_read_too),
        cmocka_unit_test(question_mark_uuids_are_unknown_and_exclusion_is_shown),
        cmocka_unit_test(module_without_gpus_is_plainly_unavailable),
        cmocka_unit_test(malformed_kernel_files_fall_back_without_crashing),
        cmocka_unit_test(live_system_without_nvidia_files_lists_nothing),
        cmocka_unit_test(kernel_version_parser_takes_only_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
