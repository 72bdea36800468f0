/* Kernel-side discovery: the KFD topology parser and scan on the
 * reconstructed trees of tests/fixtures/kfd, libdrm's amdgpu.ids, and the
 * backend listing GPUs from KFD alone when no HIP runtime can be opened. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "rocm/rocm_ids.h"
#include "rocm/rocm_kfd.h"
#include "rocm_test.h"

static const char *const mi300a_node =
    "cpu_cores_count 0\nsimd_count 912\nmem_banks_count 1\ncaches_count 470\n"
    "simd_id_base 2147487744\nmax_waves_per_simd 8\nlds_size_in_kb 64\nwave_front_size 64\n"
    "array_count 24\nsimd_arrays_per_engine 1\ncu_per_simd_array 10\nsimd_per_cu 4\n"
    "gfx_target_version 90402\nvendor_id 4098\ndevice_id 29856\nlocation_id 512\ndomain 1\n"
    "drm_render_minor 136\nhive_id 9034655720432782706\nmax_engine_clk_fcompute 2100\n"
    "unique_id 11940228331418201223\nnum_xcc 6\nmax_engine_clk_ccompute 3700\n";

static void properties_of_a_gpu_node_are_parsed(void **state)
{
    gpo_kfd_gpu g;
    (void)state;
    assert_int_equal(gpo_kfd_parse_properties(mi300a_node, &g), 0);
    assert_int_equal(g.simd_count, 912);
    assert_int_equal(g.cu_count, 228); /* 6 XCCs of 38 CUs */
    assert_int_equal(g.num_xcc, 6);
    assert_string_equal(g.gfx, "gfx942");
    assert_string_equal(g.pci, "0001:02:00.0");
    assert_int_equal(g.device_id, 0x74a0);
    assert_int_equal(g.max_engine_clk_mhz, 2100);
    assert_true(g.unique_id == 11940228331418201223ull);
    assert_string_equal(g.uuid, "GPU-a5b43667c73cac87");
    assert_true(g.hive_id == 9034655720432782706ull);
    assert_int_equal(g.drm_render_minor, 136);
}

static void cpu_nodes_and_empty_text_are_not_gpus(void **state)
{
    gpo_kfd_gpu g;
    (void)state;
    assert_int_equal(gpo_kfd_parse_properties("cpu_cores_count 48\nsimd_count 0\n", &g), -1);
    assert_int_equal(gpo_kfd_parse_properties("", &g), -1);
    assert_int_equal(gpo_kfd_parse_properties("cpu_cores_count 48\n", &g), -1);
    assert_int_equal(gpo_kfd_parse_properties(NULL, &g), -1);
    assert_int_equal(gpo_kfd_parse_properties(mi300a_node, NULL), -1);
}

static void malformed_values_stay_unknown(void **state)
{
    gpo_kfd_gpu g;
    (void)state;
    /* No num_xcc (kernels before 6.5): one XCC; junk values are not read;
     * a gfx_target_version that is no target leaves gfx empty. */
    assert_int_equal(gpo_kfd_parse_properties("simd_count 160\nsimd_per_cu 4\n"
                                              "max_engine_clk_fcompute 1.7GHz\n"
                                              "gfx_target_version 91700\nlocation_id -3\n"
                                              "unique_id 0x1234\nlds_size_in_kb\n"
                                              "a_key_longer_than_the_parser_buffer_of_sixty_four_"
                                              "characters_is_skipped 7\n",
                                              &g),
                     0);
    assert_int_equal(g.cu_count, 40);
    assert_int_equal(g.num_xcc, 1);
    assert_int_equal(g.max_engine_clk_mhz, 0);
    assert_string_equal(g.gfx, "");
    assert_int_equal(g.location_id, 0);
    assert_true(g.unique_id == 0);
    assert_string_equal(g.uuid, "");
    assert_int_equal(g.lds_size_kb, 0);
    /* simd_per_cu missing: CUs unknown, never a division by zero. */
    assert_int_equal(gpo_kfd_parse_properties("simd_count 64\n", &g), 0);
    assert_int_equal(g.cu_count, 0);
}

static void pci_location_text(void **state)
{
    char out[32];
    (void)state;
    gpo_kfd_pci_text(0, 0x4700, out, sizeof out);
    assert_string_equal(out, "0000:47:00.0");
    gpo_kfd_pci_text(2, (0xc1 << 8) | (3 << 3) | 5, out, sizeof out);
    assert_string_equal(out, "0002:c1:03.5");
}

static const char *const ids =
    "# List of AMDGPU IDs\n#\n1.0.0\n"
    "744C,\tC8,\tAMD Radeon RX 7900 XTX\n744C,\tCC,\tAMD Radeon RX 7900 XT\n"
    "74A1,\t00,\tAMD Instinct MI300X\nbroken line\nZZZZ,\t00,\tnot hex\n"
    "15BF,\tC1,\tAMD Radeon 780M\n15BF,\tC4,\tAMD Radeon 780M\n";

static void amdgpu_ids_by_device_and_revision(void **state)
{
    char out[64];
    (void)state;
    assert_int_equal(gpo_amdgpu_ids_lookup(ids, 0x744c, 0xc8, out, sizeof out), 1);
    assert_string_equal(out, "AMD Radeon RX 7900 XTX");
    assert_int_equal(gpo_amdgpu_ids_lookup(ids, 0x744c, 0xcc, out, sizeof out), 1);
    assert_string_equal(out, "AMD Radeon RX 7900 XT");
    /* Without a revision: only a device whose entries agree on the name. */
    assert_int_equal(gpo_amdgpu_ids_lookup(ids, 0x744c, -1, out, sizeof out), 0);
    assert_int_equal(gpo_amdgpu_ids_lookup(ids, 0x15bf, -1, out, sizeof out), 1);
    assert_string_equal(out, "AMD Radeon 780M");
    assert_int_equal(gpo_amdgpu_ids_lookup(ids, 0x74a1, -1, out, sizeof out), 1);
    /* An unknown revision of a known device is not guessed. */
    assert_int_equal(gpo_amdgpu_ids_lookup(ids, 0x744c, 0x01, out, sizeof out), 0);
    assert_string_equal(out, "");
    assert_int_equal(gpo_amdgpu_ids_lookup(ids, 0x1234, 0, out, sizeof out), 0);
    /* Truncation, NULL and empty inputs. */
    char small[8];
    assert_int_equal(gpo_amdgpu_ids_lookup(ids, 0x74a1, 0, small, sizeof small), 1);
    assert_string_equal(small, "AMD Ins");
    assert_int_equal(gpo_amdgpu_ids_lookup(NULL, 0x74a1, 0, out, sizeof out), 0);
    assert_int_equal(gpo_amdgpu_ids_lookup(ids, 0x74a1, 0, NULL, 8), 0);
    assert_int_equal(gpo_amdgpu_ids_lookup("", 0x74a1, 0, out, sizeof out), 0);
}

static void mi300x_tree_lists_eight_gpus_and_skips_cpu_nodes(void **state)
{
    gpo_fs fs;
    gpo_kfd k;
    (void)state;
    gpo_fs_init(&fs, kfd_root(0, "mi300x"));
    assert_int_equal(gpo_kfd_scan(&fs, &k), GPUOPT_OK);
    assert_int_equal(k.present, 1);
    assert_int_equal(k.n, 8);
    for (size_t i = 0; i < k.n; i++) {
        assert_int_equal(k.gpus[i].node, 2 + i);
        assert_string_equal(k.gpus[i].gfx, "gfx942");
        assert_int_equal(k.gpus[i].cu_count, 304);
        assert_int_equal(k.gpus[i].simd_per_cu, 4);
        assert_int_equal(k.gpus[i].num_xcc, 8);
        assert_int_equal(k.gpus[i].wave_front_size, 64);
        assert_true(k.gpus[i].vram_bytes == 206158430208ull);
        assert_string_equal(k.gpus[i].name, "AMD Instinct MI300X");
        assert_int_equal(k.gpus[i].revision, 0);
    }
    assert_string_equal(k.gpus[0].pci, "0000:11:00.0");
    assert_string_equal(k.gpus[0].uuid, "GPU-3d7a0f52c19e86b4");
    assert_string_equal(k.gpus[7].pci, "0000:da:00.0");
    gpo_kfd_free(&k);
    gpo_kfd_free(&k); /* twice is harmless */
    gpo_kfd_free(NULL);
}

static void rdna3_tree_has_wave32_two_simds_per_cu_and_no_names_file(void **state)
{
    gpo_fs fs;
    gpo_kfd k;
    (void)state;
    gpo_fs_init(&fs, kfd_root(0, "rx7900xtx"));
    assert_int_equal(gpo_kfd_scan(&fs, &k), GPUOPT_OK);
    assert_int_equal(k.n, 1);
    assert_string_equal(k.gpus[0].gfx, "gfx1100");
    assert_int_equal(k.gpus[0].cu_count, 96);
    assert_int_equal(k.gpus[0].simd_per_cu, 2);
    assert_int_equal(k.gpus[0].wave_front_size, 32);
    assert_string_equal(k.gpus[0].name, ""); /* no amdgpu.ids in this tree */
    assert_int_equal(k.gpus[0].revision, 0xc8);
    gpo_kfd_free(&k);
}

static void missing_topology_is_not_an_error(void **state)
{
    gpo_fs fs;
    gpo_kfd k;
    (void)state;
    gpo_fs_init(&fs, GPO_BUILD_DIR "/no-such-root");
    assert_int_equal(gpo_kfd_scan(&fs, &k), GPUOPT_OK);
    assert_int_equal(k.present, 0);
    assert_int_equal(k.n, 0);
    assert_non_null(strstr(k.note, "no KFD topology"));
    gpo_kfd_free(&k);
}

static void write_file(const char *path, const char *text)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(dir, 0755);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void nodes_are_taken_in_numeric_order(void **state)
{
    char root[512], path[1024];
    gpo_fs fs;
    gpo_kfd k;
    (void)state;
    snprintf(root, sizeof root, "%s/kfd-order-%d", GPO_BUILD_DIR, (int)getpid());
    static const int nodes[] = {2, 10, 9, 11};
    for (size_t i = 0; i < 4; i++) {
        char text[256];
        snprintf(path, sizeof path, "%s/sys/class/kfd/kfd/topology/nodes/%d/properties", root,
                 nodes[i]);
        snprintf(text, sizeof text,
                 "simd_count 8\nsimd_per_cu 2\ngfx_target_version 110000\nlocation_id %d\n",
                 nodes[i] << 8);
        write_file(path, text);
    }
    /* Not a node: ignored. */
    snprintf(path, sizeof path, "%s/sys/class/kfd/kfd/topology/nodes/junk/properties", root);
    write_file(path, "simd_count 8\n");
    /* A node without properties is noted, not fatal. */
    snprintf(path, sizeof path, "%s/sys/class/kfd/kfd/topology/nodes/3/gpu_id", root);
    write_file(path, "1\n");
    gpo_fs_init(&fs, root);
    assert_int_equal(gpo_kfd_scan(&fs, &k), GPUOPT_OK);
    assert_int_equal(k.n, 4);
    assert_int_equal(k.gpus[0].node, 2);
    assert_int_equal(k.gpus[1].node, 9);
    assert_int_equal(k.gpus[2].node, 10);
    assert_int_equal(k.gpus[3].node, 11);
    assert_non_null(strstr(k.note, "node 3"));
    gpo_kfd_free(&k);
}

/* ---- the backend on KFD alone ------------------------------------------- */

static void without_hip_kfd_gpus_are_listed_with_the_reason(void **state)
{
    rocm_env e;
    rocm_run r;
    (void)state;
    unsetenv("ROCR_VISIBLE_DEVICES");
    unsetenv("HIP_VISIBLE_DEVICES");
    unsetenv("CUDA_VISIBLE_DEVICES");
    rocm_env_init(&e, kfd_root(0, "mi300x"), "/nonexistent/libamdhip64.so.6");
    rocm_run_do(&r, &e);
    assert_int_equal(r.load, GPUOPT_ERR_UNAVAILABLE);
    assert_non_null(r.state); /* unavailable, yet listed */
    assert_non_null(strstr(r.report.reason, "/nonexistent/libamdhip64.so.6"));
    assert_non_null(strstr(r.report.reason, "8 AMD GPU(s)"));
    assert_non_null(strstr(r.report.reason, "install the HIP runtime"));
    assert_non_null(strstr(r.detail, "install the HIP runtime"));
    assert_string_equal(r.report.library, "");
    assert_int_equal(r.enumerate, GPUOPT_OK);
    assert_int_equal(r.list.n, 8);
    const gpuopt_device *d = r.list.items[0];
    assert_int_equal(d->info.index, 0);
    assert_string_equal(d->info.name, "AMD Instinct MI300X");
    assert_string_equal(d->info.arch_name, "gfx942");
    assert_string_equal(d->info.arch_family, "cdna3");
    assert_int_equal(d->info.compute_units, 304);
    assert_int_equal(d->info.simd_width, 64);
    assert_int_equal(d->info.clock_mhz, 2100);
    assert_int_equal(d->info.integrated, 0);
    assert_int_equal(d->info.type, GPUOPT_DEVICE_TYPE_GPU);
    assert_string_equal(d->info.vendor, "AMD");
    assert_string_equal(d->info.pci_bus_id, "0000:11:00.0");
    assert_string_equal(d->info.uuid, "GPU-3d7a0f52c19e86b4");
    assert_true(d->info.memory_bytes == 206158430208ull);
    assert_true(d->info.shared_mem_per_block == 65536);
    assert_true(d->info.features & GPUOPT_FEATURE_FP8);
    /* 304 CUs x 128 lanes x 2 x 2.1 GHz = 163.4 TFLOPS (MI300X data sheet). */
    assert_true(d->est_gflops > 163400.0 && d->est_gflops < 163500.0);
    const cJSON *det = rocm_details(d);
    assert_string_equal(cJSON_GetObjectItem(det, "source")->valuestring, "kfd");
    assert_int_equal(cJSON_GetObjectItem(det, "num_xcc")->valueint, 8);
    assert_int_equal(cJSON_GetObjectItem(det, "simd_per_cu")->valueint, 4);
    assert_string_equal(cJSON_GetObjectItem(det, "matrix_units")->valuestring, "mfma");

    /* Free VRAM without a runtime: amdgpu's own counters. */
    gpo_route route;
    uint64_t free_bytes = 0;
    rocm_route_of(&r, 0, &route);
    assert_int_equal(rocm_free(r.state, &route, &free_bytes), GPUOPT_OK);
    assert_true(free_bytes == 206158430208ull - 536870912ull);
    rocm_route_of(&r, 1, &route); /* no counters for this one */
    assert_int_equal(rocm_free(r.state, &route, &free_bytes), GPUOPT_ERR_UNSUPPORTED);
    route.info.pci_bus_id[0] = '\0';
    assert_int_equal(rocm_free(r.state, &route, &free_bytes), GPUOPT_ERR_UNSUPPORTED);
    rocm_run_free(&r);
}

static void apu_is_integrated_and_named_by_revision(void **state)
{
    rocm_env e;
    rocm_run r;
    (void)state;
    rocm_env_init(&e, kfd_root(0, "apu-phoenix"), "/nonexistent/libamdhip64.so");
    rocm_run_do(&r, &e);
    assert_int_equal(r.load, GPUOPT_ERR_UNAVAILABLE);
    assert_int_equal(r.enumerate, GPUOPT_OK);
    assert_int_equal(r.list.n, 1);
    const gpuopt_device *d = r.list.items[0];
    assert_string_equal(d->info.name, "AMD Radeon 780M");
    assert_string_equal(d->info.arch_name, "gfx1103");
    assert_string_equal(d->info.arch_family, "rdna3");
    assert_int_equal(d->info.integrated, 1);
    assert_int_equal(d->info.compute_units, 12);
    assert_int_equal(d->info.simd_width, 32);
    assert_string_equal(d->info.uuid, ""); /* no unique_id published */
    assert_true(d->info.features & GPUOPT_FEATURE_MATRIX_UNITS);
    rocm_run_free(&r);
}

static void unknown_name_falls_back_to_target_and_pci_id(void **state)
{
    rocm_env e;
    rocm_run r;
    (void)state;
    rocm_env_init(&e, kfd_root(0, "rx7900xtx"), "/nonexistent/libamdhip64.so");
    rocm_run_do(&r, &e);
    assert_int_equal(r.list.n, 1);
    assert_string_equal(r.list.items[0]->info.name, "AMD GPU gfx1100 [1002:744c]");
    assert_int_equal(r.list.items[0]->info.compute_units, 96);
    /* 96 x 128 x 2 x 2.5 GHz = 61.4 TFLOPS (RX 7900 XTX product page). */
    assert_true(r.list.items[0]->est_gflops > 61400.0 && r.list.items[0]->est_gflops < 61500.0);
    rocm_run_free(&r);
}

static void nothing_anywhere_is_unavailable_without_state(void **state)
{
    rocm_env e;
    rocm_run r;
    (void)state;
    rocm_env_init(&e, NULL, "/nonexistent/libamdhip64.so.6");
    rocm_run_do(&r, &e);
    assert_int_equal(r.load, GPUOPT_ERR_UNAVAILABLE);
    assert_null(r.state);
    assert_non_null(strstr(r.report.reason, "/nonexistent/libamdhip64.so.6"));
    assert_non_null(strstr(r.report.reason, "no KFD topology"));
    assert_int_equal(r.list.n, 0);
    rocm_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(properties_of_a_gpu_node_are_parsed),
        cmocka_unit_test(cpu_nodes_and_empty_text_are_not_gpus),
        cmocka_unit_test(malformed_values_stay_unknown),
        cmocka_unit_test(pci_location_text),
        cmocka_unit_test(amdgpu_ids_by_device_and_revision),
        cmocka_unit_test(mi300x_tree_lists_eight_gpus_and_skips_cpu_nodes),
        cmocka_unit_test(rdna3_tree_has_wave32_two_simds_per_cu_and_no_names_file),
        cmocka_unit_test(missing_topology_is_not_an_error),
        cmocka_unit_test(nodes_are_taken_in_numeric_order),
        cmocka_unit_test(without_hip_kfd_gpus_are_listed_with_the_reason),
        cmocka_unit_test(apu_is_integrated_and_named_by_revision),
        cmocka_unit_test(unknown_name_falls_back_to_target_and_pci_id),
        cmocka_unit_test(nothing_anywhere_is_unavailable_without_state),
    };
    return cmocka_run_group_tests(tests, rocm_test_clean_env, NULL);
}
