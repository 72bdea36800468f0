#include "doctor_test_util.h"

#include <dlfcn.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

extern char **environ;

const char *const dr_controlled_vars[] = {"GPUOPT_SYSFS_ROOT",
                                          "GPUOPT_BACKEND",
                                          "GPUOPT_CUDA_LIBRARY",
                                          "GPUOPT_NVRTC_LIBRARY",
                                          "GPUOPT_HIP_LIBRARY",
                                          "GPUOPT_OPENCL_LIBRARY",
                                          "GPUOPT_EXAMPLE_LIBRARY",
                                          "GPUOPT_KNOBS",
                                          "GPUOPT_FAKE_CUDA_DEVICES",
                                          "GPUOPT_FAKE_CUDA_INIT",
                                          "GPUOPT_FAKE_CUDA_DRIVER_VERSION",
                                          "GPUOPT_FAKE_CUDA_FAIL",
                                          "GPUOPT_FAKE_NVRTC_VERSION",
                                          "CUDA_VISIBLE_DEVICES",
                                          "NVIDIA_VISIBLE_DEVICES",
                                          "HIP_VISIBLE_DEVICES",
                                          "ROCR_VISIBLE_DEVICES",
                                          "GPU_DEVICE_ORDINAL",
                                          "OCL_ICD_VENDORS",
                                          "OCL_ICD_FILENAMES",
                                          "OPENCL_VENDOR_PATH",
                                          "container",
                                          NULL};

const char *dr_tree(int slot, const char *name)
{
    static char paths[4][1024];
    snprintf(paths[slot], sizeof paths[slot], "%s/%s", GPO_DOCTOR_TREES, name);
    return paths[slot];
}

const char *dr_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static int matches(const cJSON *f, const char *backend, const char *check, const char *status)
{
    return strcmp(dr_str(f, "backend"), backend) == 0 && strcmp(dr_str(f, "check"), check) == 0 &&
           (!status || strcmp(dr_str(f, "status"), status) == 0);
}

const cJSON *dr_finding(const cJSON *root, const char *backend, const char *check,
                        const char *status)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(root, "findings"))
    {
        if (matches(f, backend, check, status))
            return f;
    }
    return NULL;
}

int dr_count(const cJSON *root, const char *backend, const char *check, const char *status)
{
    int n = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(root, "findings"))
    {
        n += matches(f, backend, check, status);
    }
    return n;
}

int dr_evidence_has(const cJSON *f, const char *text)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(f, "evidence"))
    {
        if (cJSON_IsString(e) && strstr(e->valuestring, text))
            return 1;
    }
    return 0;
}

static int one_of(const char *s, const char *const *set)
{
    for (; *set; set++)
        if (strcmp(s, *set) == 0)
            return 1;
    return 0;
}

void dr_assert_well_formed(const cJSON *root)
{
    static const char *const statuses[] = {"ok", "info", "warning", "problem", NULL};
    assert_non_null(root);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(root, "accelerators_usable")));
    assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "accelerators")));
    assert_true(dr_str(root, "verdict")[0] != '\0');
    assert_true(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "user")));
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "backends");
    assert_true(cJSON_IsArray(list));
    assert_true(cJSON_GetArraySize(list) >= 4);
    /* Every finding belongs to a backend of the list. */
    const char *backends[16] = {NULL};
    int n_backends = 0;
    const cJSON *b;
    cJSON_ArrayForEach(b, list)
    {
        assert_true(dr_str(b, "name")[0] != '\0');
        assert_true(one_of(dr_str(b, "worst"), statuses));
        assert_true(n_backends < 15);
        backends[n_backends++] = dr_str(b, "name");
    }
    const cJSON *findings = cJSON_GetObjectItemCaseSensitive(root, "findings");
    assert_true(cJSON_IsArray(findings));
    assert_true(cJSON_GetArraySize(findings) > 0);
    const cJSON *f;
    cJSON_ArrayForEach(f, findings)
    {
        if (!one_of(dr_str(f, "backend"), backends) || !one_of(dr_str(f, "status"), statuses) ||
            !dr_str(f, "check")[0] || !dr_str(f, "summary")[0])
            fail_msg("malformed finding: %s/%s %s '%s'", dr_str(f, "backend"), dr_str(f, "check"),
                     dr_str(f, "status"), dr_str(f, "summary"));
        assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(f, "evidence")));
        if (strcmp(dr_str(f, "status"), "problem") == 0 && !dr_str(f, "fix")[0])
            fail_msg("problem without a fix: %s/%s: %s", dr_str(f, "backend"), dr_str(f, "check"),
                     dr_str(f, "summary"));
    }
}

static int controlled(const char *entry)
{
    for (const char *const *v = dr_controlled_vars; *v; v++) {
        size_t n = strlen(*v);
        if (strncmp(entry, *v, n) == 0 && entry[n] == '=')
            return 1;
    }
    return 0;
}

int dr_run_cli(const char *const *env, const char *const *args, char **out)
{
    return dr_run_program(GPO_CLI, env, args, out);
}

int dr_run_program(const char *program, const char *const *env, const char *const *args, char **out)
{
    size_t n_env = 0, n_args = 0, k = 0;
    while (environ[n_env])
        n_env++;
    for (const char *const *e = env; e && *e; e++)
        n_env++;
    while (args[n_args])
        n_args++;
    char **envp = calloc(n_env + 1, sizeof *envp);
    char **argv = calloc(n_args + 2, sizeof *argv);
    assert_non_null(envp);
    assert_non_null(argv);
    for (char **e = environ; *e; e++)
        if (!controlled(*e))
            envp[k++] = *e;
    for (const char *const *e = env; e && *e; e++)
        envp[k++] = (char *)*e;
    argv[0] = (char *)program;
    for (size_t i = 0; i < n_args; i++)
        argv[i + 1] = (char *)args[i];

    int fds[2];
    assert_int_equal(pipe(fds), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    pid_t pid;
    int rc = posix_spawn(&pid, program, &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    free(envp);
    free(argv);
    size_t len = 0, cap = 65536;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (;;) {
        if (len + 1 == cap) {
            char *bigger = realloc(buf, cap * 2);
            assert_non_null(bigger);
            buf = bigger;
            cap *= 2;
        }
        ssize_t r = read(fds[0], buf + len, cap - 1 - len);
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    close(fds[0]);
    buf[len] = '\0';
    int status = -1;
    if (rc == 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
        status = WEXITSTATUS(status);
    else
        status = -1;
    if (out)
        *out = buf;
    else
        free(buf);
    return status;
}

int dr_library_loads(const char *name)
{
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 0;
    dlclose(h);
    return 1;
}
