/* The doctor's pieces on their own: the visibility finding, node access decided
 * from recorded owners and modes, the user and group databases of a tree,
 * and the report builder, each with malformed and missing input. */
#include <errno.h>
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

#include "doctor/doctor.h"

static const char *tree(const char *name)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", GPO_DOCTOR_TREES, name);
    return path;
}

/* A scratch tree under the build folder, for malformed files. */
static char scratch[512];

static void write_file(const char *rel, const char *content)
{
    char path[1024];
    snprintf(path, sizeof path, "%s%s", scratch, rel);
    for (char *p = path + strlen(scratch) + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
}

static int setup_scratch(void **state)
{
    (void)state;
    snprintf(scratch, sizeof scratch, "%s/tests/doctor-scratch-%d", GPO_BUILD_DIR, (int)getpid());
    mkdir(scratch, 0755);
    return 0;
}

static int teardown_scratch(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- Nodes ------------------------------------------------------------------------ */

static void recorded_node_mode_and_groups_decide_access(void **state)
{
    (void)state;
    gpo_fs fs;
    gpo_dr_user u;
    gpo_dr_node n;
    gpo_fs_init(&fs, tree("nvidia-h100-video-0660"));
    gpo_dr_user_read(&fs, &u);
    assert_true(u.known);
    gpo_dr_node_stat(&fs, &u, "/dev/nvidia0", &n);
    assert_true(n.exists);
    assert_int_equal(n.mode, 0660);
    assert_int_equal(n.gid, 44);
    assert_false(n.accessible);
    assert_int_equal(n.access_errno, EACCES);
    /* In the group: allowed. */
    u.groups[u.n_groups++] = 44;
    gpo_dr_node_stat(&fs, &u, "/dev/nvidia0", &n);
    assert_true(n.accessible);
    /* root may do anything. */
    u.n_groups = 0;
    u.uid = 0;
    gpo_dr_node_stat(&fs, &u, "/dev/nvidia0", &n);
    assert_true(n.accessible);
    /* Missing node. */
    gpo_dr_node_stat(&fs, &u, "/dev/nvidia7", &n);
    assert_false(n.exists);
    assert_int_equal(n.access_errno, ENOENT);
    /* A node the stat file does not list is 0666 root:root. */
    gpo_fs_init(&fs, tree("nvidia-t4-no-libcuda"));
    gpo_dr_user_read(&fs, &u);
    gpo_dr_node_stat(&fs, &u, "/dev/nvidia0", &n);
    assert_int_equal(n.mode, 0666);
    assert_true(n.accessible);
}

static void malformed_stat_lines_and_unknown_user_fall_back_safely(void **state)
{
    (void)state;
    write_file("/dev/nvidia0", "");
    write_file("/dev/.gpuopt-stat", "garbage\n/dev/nvidia0 notoctal 0 0\n\n/dev/nvidia0 600 0\n");
    gpo_fs fs;
    gpo_dr_user u;
    gpo_dr_node n;
    gpo_fs_init(&fs, scratch);
    gpo_dr_user_read(&fs, &u); /* no /proc/self/status in the scratch tree */
    assert_false(u.known);
    assert_string_equal(u.name, "this user");
    gpo_dr_node_stat(&fs, &u, "/dev/nvidia0", &n);
    assert_int_equal(n.mode, 0666); /* no well-formed line */
    assert_true(n.accessible);      /* decided by the "other" bits */
    write_file("/dev/.gpuopt-stat", "/dev/nvidia0 600 0 0\n");
    gpo_dr_node_stat(&fs, &u, "/dev/nvidia0", &n);
    assert_false(n.accessible);
}

/* When the mode lets no group read and write a node, the fix is the
 * backend's own (module options for NVIDIA, udev rules for the others):
 * the core names no vendor. */
static void a_mode_without_group_access_gets_the_backends_fix(void **state)
{
    (void)state;
    write_file("/dev/nvidia0", "");
    write_file("/dev/.gpuopt-stat", "/dev/nvidia0 600 0 0\n");
    gpo_fs fs;
    gpo_dr_user u;
    gpo_dr_node n;
    gpo_dr_report r;
    memset(&r, 0, sizeof r);
    gpo_fs_init(&fs, scratch);
    gpo_dr_user_read(&fs, &u);
    gpo_dr_node_stat(&fs, &u, "/dev/nvidia0", &n);
    const char *paths[] = {"/dev/nvidia0"};
    assert_int_equal(gpo_dr_nodes_denied(&r, &fs, &u, "example", "give %s the node", paths, &n, 1),
                     1);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.items[0].backend, "example");
    assert_string_equal(r.items[0].fix, "give this user the node");
    gpo_dr_report_free(&r);
}

static void denied_nodes_sharing_owner_and_mode_make_one_finding(void **state)
{
    (void)state;
    gpo_fs fs;
    gpo_dr_user u;
    gpo_dr_report r;
    memset(&r, 0, sizeof r);
    gpo_fs_init(&fs, tree("nvidia-h100-video-0660"));
    gpo_dr_user_read(&fs, &u);
    const char *paths[] = {"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia9"};
    gpo_dr_node n[3];
    for (int i = 0; i < 3; i++)
        gpo_dr_node_stat(&fs, &u, paths[i], &n[i]);
    assert_int_equal(gpo_dr_nodes_denied(&r, &fs, &u, "cuda", "reset the mode for %s", paths, n, 3),
                     2);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.items[0].status, GPO_DR_PROBLEM);
    assert_non_null(strstr(r.items[0].fix, "usermod -aG video alice"));
    assert_int_equal(r.items[0].n_evidence, 3);
    /* Nothing denied: no finding. */
    u.uid = 0;
    for (int i = 0; i < 3; i++)
        gpo_dr_node_stat(&fs, &u, paths[i], &n[i]);
    assert_int_equal(gpo_dr_nodes_denied(&r, &fs, &u, "cuda", "reset the mode for %s", paths, n, 3),
                     0);
    assert_int_equal(r.n, 1);
    gpo_dr_report_free(&r);
}

/* ---- Users and groups ------------------------------------------------------------- */

static void recorded_user_and_groups_come_from_the_tree(void **state)
{
    (void)state;
    gpo_fs fs;
    gpo_dr_user u;
    char name[64], text[256];
    gpo_fs_init(&fs, tree("amd-rx7900xtx-render"));
    gpo_dr_user_read(&fs, &u);
    assert_string_equal(u.name, "alice");
    assert_int_equal(u.uid, 1000);
    assert_int_equal(u.gid, 1000);
    assert_int_equal(u.n_groups, 2);
    assert_true(gpo_dr_user_in_group(&u, 100));
    assert_false(gpo_dr_user_in_group(&u, 44));
    gpo_dr_group_name(&fs, 109, name, sizeof name);
    assert_string_equal(name, "render");
    gpo_dr_group_name(&fs, 4242, name, sizeof name);
    assert_string_equal(name, "gid 4242");
    assert_int_equal(gpo_dr_group_lists_user(&fs, 44, "alice"), 1);
    assert_int_equal(gpo_dr_group_lists_user(&fs, 109, "alice"), 0);
    assert_int_equal(gpo_dr_group_lists_user(&fs, 1000, "alice"), 1); /* primary, /etc/passwd */
    assert_int_equal(gpo_dr_group_lists_user(&fs, 44, NULL), -1);
    assert_int_equal(gpo_dr_group_lists_user(&fs, 44, "uid 1000"), -1);
    gpo_dr_user_groups_text(&fs, &u, text, sizeof text);
    assert_string_equal(text, "alice(1000), users(100)");
}

static void malformed_databases_are_skipped_line_by_line(void **state)
{
    (void)state;
    write_file("/proc/self/status", "Name:\tx\nUid:\tabc\nGid:\t5\n");
    write_file("/etc/group", "broken line\nvideo:x:notanumber:alice\n# comment\nrender:x:109\n"
                             "ok:x:7:bob,alice\n");
    gpo_fs fs;
    gpo_dr_user u;
    char name[64];
    gpo_fs_init(&fs, scratch);
    gpo_dr_user_read(&fs, &u);
    assert_false(u.known); /* Uid: is not a number */
    gpo_dr_group_name(&fs, 109, name, sizeof name);
    assert_string_equal(name, "gid 109"); /* three fields: no member list, skipped */
    gpo_dr_group_name(&fs, 7, name, sizeof name);
    assert_string_equal(name, "ok");
    assert_int_equal(gpo_dr_group_lists_user(&fs, 7, "alice"), 1);
    assert_int_equal(gpo_dr_group_lists_user(&fs, 7, "carol"), 0);
}

static void live_user_is_this_process(void **state)
{
    (void)state;
    gpo_fs fs;
    gpo_dr_user u;
    char name[64];
    gpo_fs_init(&fs, NULL);
    gpo_dr_user_read(&fs, &u);
    assert_true(u.known);
    assert_int_equal(u.uid, getuid());
    assert_string_equal(u.source, "this process");
    gpo_dr_group_name(&fs, getgid(), name, sizeof name);
    assert_true(name[0] != '\0');
    gpo_dr_group_name(&fs, 4000000000u, name, sizeof name);
    assert_string_equal(name, "gid 4000000000");
}

/* ---- Facts ------------------------------------------------------------------------- */

static void pci_scan_keeps_display_and_accelerator_functions_with_their_driver(void **state)
{
    (void)state;
    gpo_fs fs;
    gpo_dr_facts f;
    gpo_fs_init(&fs, tree("nvidia-h100"));
    gpo_dr_facts_read(&fs, &f);
    assert_true(f.pci_readable);
    assert_int_equal(f.n_pci_scanned, 2);
    assert_int_equal(f.n_gpus, 1); /* the host bridge (class 0x0600) is not a GPU */
    assert_string_equal(f.gpus[0].bdf, "0000:18:00.0");
    assert_int_equal(f.gpus[0].vendor, 0x10de);
    assert_int_equal(f.gpus[0].device, 0x2330);
    assert_string_equal(f.gpus[0].driver, "nvidia");
    assert_int_equal(gpo_dr_pci_count(&f, 0x10de), 1);
    assert_int_equal(gpo_dr_pci_count(&f, 0x1002), 0);
    assert_string_equal(f.container, "");
    assert_string_equal(gpo_dr_pci_class_word(0x030200), "3D controller");
    assert_string_equal(gpo_dr_pci_class_word(0x120000), "processing accelerator");
    assert_string_equal(gpo_dr_pci_class_word(0x03ff00), "display controller");
    assert_string_equal(gpo_dr_pci_class_word(0x0), "accelerator");

    gpo_fs_init(&fs, tree("nvidia-container-no-nodes"));
    gpo_dr_facts_read(&fs, &f);
    assert_non_null(strstr(f.container, "/.dockerenv"));

    /* A malformed vendor file is skipped; a missing bus is not readable. */
    write_file("/sys/bus/pci/devices/0000:01:00.0/vendor", "nonsense\n");
    write_file("/sys/bus/pci/devices/0000:01:00.0/class", "0x030000\n");
    write_file("/proc/1/cgroup", "0::/kubepods/burstable/pod1234\n");
    gpo_fs_init(&fs, scratch);
    gpo_dr_facts_read(&fs, &f);
    assert_int_equal(f.n_gpus, 0);
    assert_int_equal(f.n_pci_scanned, 1);
    assert_non_null(strstr(f.container, "kubepods"));
    gpo_fs_init(&fs, tree("does-not-exist"));
    gpo_dr_facts_read(&fs, &f);
    assert_false(f.pci_readable);
}

/* ---- Report ------------------------------------------------------------------------- */

static void report_builder_accepts_a_null_finding_and_frees_everything(void **state)
{
    (void)state;
    gpo_dr_report r;
    memset(&r, 0, sizeof r);
    gpo_dr_say(&r, NULL, "ignored %d", 1);
    gpo_dr_evidence(&r, NULL, "ignored");
    gpo_dr_fix(&r, NULL, "ignored");
    gpo_dr_path(&r, NULL, "/x");
    gpo_dr_finding *f = gpo_dr_add(&r, "cuda", "device_nodes", GPO_DR_WARNING);
    gpo_dr_say(&r, f, "first");
    gpo_dr_say(&r, f, "second %s", "wins");
    gpo_dr_fix(&r, f, "a");
    gpo_dr_fix(&r, f, "b");
    gpo_dr_path(&r, f, NULL);
    gpo_dr_path(&r, f, "/dev/x");
    for (int i = 0; i < 100; i++) /* grows past the first allocation */
        gpo_dr_add(&r, "cpu", "backend", GPO_DR_OK);
    f = &r.items[0];
    assert_string_equal(f->summary, "second wins");
    assert_string_equal(f->fix, "b");
    assert_string_equal(f->path, "/dev/x");
    assert_int_equal(r.n, 101);
    assert_false(r.failed);
    assert_string_equal(gpo_dr_status_word(GPO_DR_PROBLEM), "problem");
    assert_string_equal(gpo_dr_status_word((gpo_dr_status)99), "unknown");
    assert_string_equal(gpo_dr_status_word((gpo_dr_status)-1), "unknown");
    gpo_dr_report_free(&r);
    assert_int_equal(r.n, 0);
    gpo_dr_report_free(NULL);
}

/* A backend's parser as the check sees one (each backend tests its own
 * rule): here every entry of a one-GPU machine is "0", and the rest is not
 * a device. */
static void parse_one_gpu(const char *variable, const char *value, void *arg, gpo_dr_visible *out)
{
    (void)variable;
    (void)arg;
    memset(out, 0, sizeof *out);
    const char *p = value;
    while (*p) {
        size_t len = strcspn(p, ",");
        out->total++;
        if (!out->bad[0] && len == 1 && *p == '0') {
            out->valid++;
        } else if (!out->bad[0]) {
            snprintf(out->bad, sizeof out->bad, "%.*s", (int)len, p);
            snprintf(out->why_bad, sizeof out->why_bad, "not GPU 0");
        }
        p += len;
        if (*p == ',')
            p++;
    }
}

static void visibility_check_adds_one_finding_per_variable_set(void **state)
{
    (void)state;
    static const char *const vars[] = {"GPUOPT_TEST_VIS_A", "GPUOPT_TEST_VIS_B"};
    gpo_dr_report r;
    memset(&r, 0, sizeof r);
    unsetenv("GPUOPT_TEST_VIS_A");
    unsetenv("GPUOPT_TEST_VIS_B");
    gpo_dr_check_visible(&r, "rocm", vars, 2, parse_one_gpu, NULL, 1, 1);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.items[0].status, GPO_DR_OK);
    setenv("GPUOPT_TEST_VIS_A", "", 1);
    setenv("GPUOPT_TEST_VIS_B", "0", 1);
    gpo_dr_check_visible(&r, "rocm", vars, 2, parse_one_gpu, NULL, 1, 0);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.items[1].status, GPO_DR_WARNING); /* hides all, but no such GPU here */
    assert_int_equal(r.items[2].status, GPO_DR_INFO);
    assert_non_null(strstr(r.items[2].summary, "shows 1 of the 1 GPU"));
    unsetenv("GPUOPT_TEST_VIS_A");
    unsetenv("GPUOPT_TEST_VIS_B");
    gpo_dr_report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(recorded_node_mode_and_groups_decide_access),
        cmocka_unit_test(malformed_stat_lines_and_unknown_user_fall_back_safely),
        cmocka_unit_test(a_mode_without_group_access_gets_the_backends_fix),
        cmocka_unit_test(denied_nodes_sharing_owner_and_mode_make_one_finding),
        cmocka_unit_test(recorded_user_and_groups_come_from_the_tree),
        cmocka_unit_test(malformed_databases_are_skipped_line_by_line),
        cmocka_unit_test(live_user_is_this_process),
        cmocka_unit_test(pci_scan_keeps_display_and_accelerator_functions_with_their_driver),
        cmocka_unit_test(report_builder_accepts_a_null_finding_and_frees_everything),
        cmocka_unit_test(visibility_check_adds_one_finding_per_variable_set),
    };
    return cmocka_run_group_tests(tests, setup_scratch, teardown_scratch);
}
