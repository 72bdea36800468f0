/* Whole detection through a generated GPUOPT_SYSFS_ROOT tree. The input is
 * a text archive of the tree:
 *
 *   == /proc/cpuinfo          a regular file; its text follows, up to the
 *   processor : 0             next header line (or the end)
 *   ==| /proc/meminfo         a FIFO (nothing may wait on it)
 *   ==/ /sys/class/kfd        a directory
 *
 * Paths are absolute, without "." or ".." components. The tree is written
 * under a scratch directory, then a context over it (backends cpu, cuda and
 * rocm, their vendor libraries pointed at nothing, so CUDA and ROCm list
 * from /proc/driver/nvidia and the KFD topology) lists its devices as JSON
 * and plans level 1 for each. make_seeds.py turns the recorded trees of
 * tests/fixtures into seeds. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gpuopt/gpuopt.h>

#include "fuzz_util.h"

static char root[512];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(root, sizeof root, "%s/root", fz_scratch());
    /* No vendor library: discovery from the kernel's files alone. */
    setenv("GPUOPT_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    setenv("GPUOPT_NVRTC_LIBRARY", "/nonexistent/libnvrtc.so", 1);
    setenv("GPUOPT_HIP_LIBRARY", "/nonexistent/libamdhip64.so", 1);
    setenv("GPUOPT_HIPRTC_LIBRARY", "/nonexistent/libhiprtc.so", 1);
    setenv("GPUOPT_OPENCL_LIBRARY", "/nonexistent/libOpenCL.so.1", 1);
    return 0;
}

/* Creates every directory of root + path up to its last component. */
static int make_parents(char *full, size_t root_len)
{
    for (char *s = full + root_len + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        int rc = mkdir(full, 0755);
        *s = '/';
        if (rc != 0 && errno != EEXIST)
            return -1;
    }
    return 0;
}

static int valid_path(const char *p, size_t n)
{
    if (n < 2 || n > 300 || p[0] != '/')
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\0')
            return 0;
        if (p[i] == '/' &&
            (i + 1 == n || p[i + 1] == '/' ||
             (p[i + 1] == '.' && (i + 2 == n || p[i + 2] == '/' ||
                                  (p[i + 2] == '.' && (i + 3 == n || p[i + 3] == '/'))))))
            return 0;
    }
    return 1;
}

static void unpack(const char *text, size_t size)
{
    fz_empty_dir(root);
    mkdir(root, 0755);
    size_t root_len = strlen(root);
    const char *p = text, *end = text + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        if (line_end - p < 3 || p[0] != '=' || p[1] != '=') {
            p = nl ? nl + 1 : end;
            continue;
        }
        char kind = p[2] == '|' || p[2] == '/' ? p[2] : ' ';
        const char *path = p + (kind == ' ' ? 2 : 3);
        while (path < line_end && *path == ' ')
            path++;
        size_t plen = (size_t)(line_end - path);
        const char *body = nl ? nl + 1 : end;
        const char *next = end;
        if (end - body >= 2 && body[0] == '=' && body[1] == '=') {
            next = body;
        } else if (body < end) {
            const char *q = memmem(body, (size_t)(end - body), "\n==", 3);
            next = q ? q + 1 : end;
        }
        if (valid_path(path, plen)) {
            char full[1024];
            snprintf(full, sizeof full, "%s%.*s", root, (int)plen, path);
            if (make_parents(full, root_len) == 0) {
                if (kind == '/') {
                    mkdir(full, 0755);
                } else if (kind == '|') {
                    mkfifo(full, 0600);
                } else {
                    FILE *f = fopen(full, "wb");
                    if (f) {
                        fwrite(body, 1, (size_t)(next - body), f);
                        fclose(f);
                    }
                }
            }
        }
        p = next;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 20)
        return 0;
    unpack((const char *)data, size);
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    o.backends = "cpu,cuda,rocm";
    o.sysfs_root = root;
    o.level = "1";
    o.log_level = "debug";
    o.log_fn = fz_log_sink;
    gpuopt_context *ctx = NULL;
    fz_check(gpuopt_context_create(&o, &ctx) == GPUOPT_OK, "context: %s", gpuopt_last_error());
    char *json = NULL;
    if (gpuopt_context_to_json(ctx, &json) == GPUOPT_OK)
        gpuopt_free(json);
    int32_t n = 0;
    if (gpuopt_device_count(ctx, &n) == GPUOPT_OK) {
        for (int32_t i = 0; i < n; i++) {
            gpuopt_device *dev = NULL;
            gpuopt_plan *plan = NULL;
            if (gpuopt_device_at(ctx, i, &dev) != GPUOPT_OK)
                continue;
            if (gpuopt_plan_create(ctx, dev, 1, &plan) == GPUOPT_OK) {
                if (gpuopt_plan_to_json(plan, &json) == GPUOPT_OK)
                    gpuopt_free(json);
                if (gpuopt_plan_to_env(plan, &json) == GPUOPT_OK)
                    gpuopt_free(json);
                gpuopt_plan_destroy(plan);
            }
        }
    }
    gpuopt_context_destroy(ctx);
    return 0;
}
