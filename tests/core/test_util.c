/* The small utilities every part leans on: root-prefixed file reads, CPU
 * lists, strict number parsing, dlopen helpers, the string buffer. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/detail.h"
#include "util/dl.h"
#include "util/file.h"
#include "util/fs.h"
#include "util/strutil.h"
#include "support/testutil.h"

static void fs_reads_are_prefixed_by_the_root_and_trimmed(void **state)
{
    (void)state;
    const char *f = write_temp_file(0, "value.txt", "  42 \n\n");
    char dir[512];
    gpo_strlcpy(dir, f, sizeof dir);
    *strrchr(dir, '/') = '\0';
    gpo_fs fs;
    gpo_fs_init(&fs, dir);
    assert_true(gpo_fs_is_recorded(&fs));
    char buf[16];
    assert_int_equal(gpo_fs_read(&fs, "/value.txt", buf, sizeof buf), GPUOPT_OK);
    assert_string_equal(buf, "  42");
    uint64_t v;
    assert_int_equal(gpo_fs_read_u64(&fs, "/value.txt", &v), GPUOPT_OK);
    assert_int_equal(v, 42);
    assert_int_equal(gpo_fs_readf(&fs, buf, sizeof buf, "/%s.txt", "value"), GPUOPT_OK);
    assert_int_equal(gpo_fs_read(&fs, "/missing", buf, sizeof buf), GPUOPT_ERR_NOT_FOUND);
    assert_non_null(strstr(gpo_detail_get(), dir));
    assert_true(gpo_fs_exists(&fs, "/value.txt"));
    assert_false(gpo_fs_exists(&fs, "/nope"));
    assert_int_equal(gpo_fs_access(&fs, "/value.txt", R_OK), 0);
    /* Truncation keeps the buffer terminated (and trimmed). */
    char tiny[4];
    assert_int_equal(gpo_fs_read(&fs, "/value.txt", tiny, sizeof tiny), GPUOPT_OK);
    assert_string_equal(tiny, "  4");
    char *all;
    size_t len;
    assert_int_equal(gpo_fs_read_alloc(&fs, "/value.txt", &all, &len), GPUOPT_OK);
    assert_int_equal(len, 7);
    free(all);
    assert_int_equal(gpo_fs_read_alloc(&fs, "/missing", &all, &len), GPUOPT_ERR_NOT_FOUND);
    assert_null(all);
    write_temp_file(1, "word.txt", "max\n");
    assert_int_equal(gpo_fs_read_u64(&fs, "/word.txt", &v), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpo_detail_get(), "'max', not a number"));
    write_temp_file(1, "hex.txt", "0x1f\n");
    assert_int_equal(gpo_fs_read_u64(&fs, "/hex.txt", &v), GPUOPT_OK);
    assert_int_equal(v, 31);
    /* A root of "/" or "" is the live system. */
    gpo_fs_init(&fs, "/");
    assert_false(gpo_fs_is_recorded(&fs));
    gpo_fs_init(&fs, NULL);
    assert_int_equal(gpo_fs_read(&fs, "/proc/self/stat", buf, sizeof buf), GPUOPT_OK);
}

/* Files someone else chose are regular files of bounded size: a FIFO in a
 * recorded tree is refused at once (open(2) would wait for a writer), a
 * device or directory too, and a file past the cap names the limit. */
static void files_are_regular_and_capped_and_fifos_never_block(void **state)
{
    (void)state;
    char root[512], path[600], why[128];
    snprintf(root, sizeof root, "%s/tests/fs-kinds", GPO_BUILD_DIR);
    snprintf(path, sizeof path, "%s/proc", root);
    mkdir(root, 0755);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/proc/cpuinfo", root);
    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    gpo_fs fs;
    gpo_fs_init(&fs, root);
    char buf[64], *text = NULL;
    assert_int_equal(gpo_fs_read(&fs, "/proc/cpuinfo", buf, sizeof buf), GPUOPT_ERR_IO);
    assert_non_null(strstr(gpo_detail_get(), "not a regular file (a FIFO)"));
    assert_int_equal(gpo_fs_read_alloc(&fs, "/proc/cpuinfo", &text, NULL), GPUOPT_ERR_IO);
    assert_null(text);
    assert_non_null(strstr(gpo_detail_get(), "not a regular file (a FIFO)"));
    unlink(path);
    /* A sparse file one byte past the cap: refused by its size. */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), (off_t)GPO_FS_MAX_FILE + 1), 0);
    fclose(f);
    assert_int_equal(gpo_fs_read_alloc(&fs, "/proc/cpuinfo", &text, NULL), GPUOPT_ERR_IO);
    assert_non_null(strstr(gpo_detail_get(), "larger than the limit of 16 MiB"));
    unlink(path);
    /* The reader itself: exactly the cap is fine, one more byte is not;
     * devices and directories are refused by type. */
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("0123456789", f);
    fclose(f);
    size_t len = 0;
    assert_int_equal(gpo_file_read(path, 10, &text, &len, why, sizeof why), 0);
    assert_int_equal(len, 10);
    assert_string_equal(text, "0123456789");
    free(text);
    assert_int_equal(gpo_file_read(path, 9, &text, &len, why, sizeof why), -1);
    assert_int_equal(errno, EFBIG);
    assert_string_equal(why, "larger than the limit of 9 bytes");
    assert_null(text);
    assert_int_equal(gpo_file_read("/dev/zero", 1 << 20, &text, NULL, why, sizeof why), -1);
    assert_int_equal(errno, EINVAL);
    assert_string_equal(why, "not a regular file (a character device)");
    assert_int_equal(gpo_file_read(root, 1 << 20, &text, NULL, why, sizeof why), -1);
    assert_int_equal(errno, EISDIR);
    assert_int_equal(gpo_file_read("/nonexistent/x", 1, &text, NULL, why, sizeof why), -1);
    assert_int_equal(errno, ENOENT);
    unlink(path);
}

static void fs_lists_directories_sorted(void **state)
{
    (void)state;
    const char *f = write_temp_file(0, "x", "");
    char dir[512], sub[600];
    gpo_strlcpy(dir, f, sizeof dir);
    *strrchr(dir, '/') = '\0';
    snprintf(sub, sizeof sub, "%s/list", dir);
    mkdir(sub, 0700);
    const char *names[] = {"node10", "node2", "cpu1", "node1"};
    for (int i = 0; i < 4; i++) {
        char p[700];
        snprintf(p, sizeof p, "%s/%s", sub, names[i]);
        FILE *fp = fopen(p, "w");
        fclose(fp);
    }
    gpo_fs fs;
    gpo_fs_init(&fs, dir);
    char **list;
    size_t n;
    assert_int_equal(gpo_fs_list(&fs, "/list", &list, &n), GPUOPT_OK);
    assert_int_equal(n, 4);
    assert_string_equal(list[0], "cpu1");
    assert_string_equal(list[1], "node1");
    assert_string_equal(list[2], "node10");
    assert_string_equal(list[3], "node2");
    gpo_fs_list_free(list, n);
    assert_int_equal(gpo_fs_list(&fs, "/nolist", &list, &n), GPUOPT_ERR_NOT_FOUND);
    assert_null(list);
    gpo_fs_list_free(NULL, 0);
}

static void cpulists_parse_ranges_and_reject_garbage(void **state)
{
    (void)state;
    unsigned char bits[16];
    assert_int_equal(gpo_parse_cpulist("0-3,8,10-11\n", bits, 128), 7);
    assert_int_equal(bits[0], 0x0f);
    assert_int_equal(bits[1], 0x0d);
    assert_int_equal(gpo_parse_cpulist("", bits, 128), 0);
    assert_int_equal(gpo_parse_cpulist("3,3,3", bits, 128), 1);
    assert_int_equal(gpo_parse_cpulist("0-200", bits, 128), 128); /* clipped, not overrun */
    const char *bad[] = {"a", "1-", "-1", "3-1", "1,,2", "1 2", "1;2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(gpo_parse_cpulist(bad[i], bits, 128), -1);
}

static void numbers_parse_strictly(void **state)
{
    (void)state;
    int64_t i;
    assert_int_equal(gpo_parse_i64(" 12 ", 0, 100, &i), 0);
    assert_int_equal(i, 12);
    assert_int_equal(gpo_parse_i64("101", 0, 100, &i), -1);
    assert_int_equal(gpo_parse_i64("1x", 0, 100, &i), -1);
    assert_int_equal(gpo_parse_i64("", 0, 100, &i), -1);
    assert_int_equal(gpo_parse_i64(NULL, 0, 100, &i), -1);
    assert_int_equal(gpo_parse_i64("99999999999999999999", INT64_MIN, INT64_MAX, &i), -1);
    int b;
    assert_int_equal(gpo_parse_bool("Yes", &b), 0);
    assert_true(b);
    assert_int_equal(gpo_parse_bool("off", &b), 0);
    assert_false(b);
    assert_int_equal(gpo_parse_bool("2", &b), -1);
    assert_int_equal(gpo_parse_bool("a-very-long-word-indeed", &b), -1);
    uint64_t bytes;
    const struct {
        const char *s;
        uint64_t v;
    } ok[] = {{"4096", 4096},         {"256MiB", 256ull << 20}, {"16 GiB", 16ull << 30},
              {"2e9", 2000000000ull}, {"7.5e9", 7500000000ull}, {"64k", 65536},
              {"1.5KiB", 1536},       {"3GB", 3000000000ull}};
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        assert_int_equal(gpo_parse_bytes(ok[k].s, &bytes), 0);
        assert_int_equal(bytes, ok[k].v);
    }
    const char *bad[] = {"-1", "1.5", "12 parsecs", "", "GiB", "1e30", "nan", "inf", NULL};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        assert_int_equal(gpo_parse_bytes(bad[k], &bytes), -1);
    char out[32];
    gpo_format_bytes(1536, out, sizeof out);
    assert_string_equal(out, "1.5 KiB");
    gpo_format_bytes(80ull << 30, out, sizeof out);
    assert_string_equal(out, "80 GiB");
    gpo_format_bytes(12, out, sizeof out);
    assert_string_equal(out, "12 B");
}

static void dl_reports_missing_libraries_and_symbols_by_name(void **state)
{
    (void)state;
    char err[512];
    assert_null(gpo_dl_open("/nonexistent/libnothing.so.1", err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/libnothing.so.1"));
    const char *const names[] = {"libnothing-a.so.1", "libnothing-b.so.2", NULL};
    assert_null(gpo_dl_open_first(names, err, sizeof err));
    assert_non_null(strstr(err, "libnothing-a.so.1"));
    assert_non_null(strstr(err, "libnothing-b.so.2"));
    void *h = gpo_dl_open("libm.so.6", err, sizeof err);
    assert_non_null(h);
    struct {
        double (*cos_fn)(double);
        void (*missing_fn)(void);
        void (*optional_fn)(void);
    } table;
    const gpo_dl_sym syms[] = {
        {"cos", offsetof(__typeof__(table), cos_fn), GPO_DL_REQUIRED},
        {"no_such_symbol_anywhere", offsetof(__typeof__(table), missing_fn), GPO_DL_REQUIRED},
        {"no_such_optional", offsetof(__typeof__(table), optional_fn), GPO_DL_OPTIONAL},
    };
    char missing[128];
    assert_int_equal(gpo_dl_resolve(h, syms, 3, &table, missing, sizeof missing),
                     GPUOPT_ERR_UNAVAILABLE);
    assert_string_equal(missing, "no_such_symbol_anywhere");
    assert_non_null(table.cos_fn);
    assert_true(table.cos_fn(0.0) == 1.0);
    assert_null(table.optional_fn);
    assert_int_equal(gpo_dl_resolve(h, syms, 1, &table, missing, sizeof missing), GPUOPT_OK);
    char path[512];
    gpo_dl_path(h, path, sizeof path);
    assert_true(path[0] == '/');
    assert_non_null(strstr(path, "libm"));
    gpo_dl_path(NULL, path, sizeof path);
    assert_string_equal(path, "");
}

static void string_buffer_grows_and_strings_copy_safely(void **state)
{
    (void)state;
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    for (int i = 0; i < 1000; i++)
        gpo_sbuf_appendf(&b, "%d,", i);
    char *s = gpo_sbuf_take(&b);
    assert_non_null(s);
    assert_int_equal(strncmp(s, "0,1,2,", 6), 0);
    assert_int_equal(strlen(s), 3890);
    free(s);
    gpo_sbuf_init(&b);
    s = gpo_sbuf_take(&b);
    assert_string_equal(s, "");
    free(s);
    char small[4];
    assert_int_equal(gpo_strlcpy(small, "abcdef", sizeof small), 6);
    assert_string_equal(small, "abc");
    char t[] = "  x y \t\n";
    assert_string_equal(gpo_trim(t), "x y");
    assert_true(gpo_strcaseeq("AbC", "aBc"));
    assert_false(gpo_strcaseeq("abc", "abcd"));
    assert_null(gpo_strdup(NULL));
    assert_true(gpo_now_ns() > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fs_reads_are_prefixed_by_the_root_and_trimmed),
        cmocka_unit_test(files_are_regular_and_capped_and_fifos_never_block),
        cmocka_unit_test(fs_lists_directories_sorted),
        cmocka_unit_test(cpulists_parse_ranges_and_reject_garbage),
        cmocka_unit_test(numbers_parse_strictly),
        cmocka_unit_test(dl_reports_missing_libraries_and_symbols_by_name),
        cmocka_unit_test(string_buffer_grows_and_strings_copy_safely),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
