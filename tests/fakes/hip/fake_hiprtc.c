/* hiprtc in the HIP test doubles: built into libamdhip64.so.5 and .6 (where
 * the real runtime exports hiprtc itself) and alone as libhiprtc.so.6/.7
 * (fake_hiprtc_lib.c). It "compiles" by reading the source: the code
 * object it writes is a text stand-in naming the target and the kernels,
 * which the double's hipModuleLoadData accepts (fake_hip_rt.c).
 *   - --offload-arch=<target ID> (or --gpu-architecture=) is required;
 *     other options must start with '-' (HIPRTC_ERROR_INVALID_OPTION);
 *   - a line with #error outside every #if block fails the compile
 *     (HIPRTC_ERROR_COMPILATION) with a clang-style log (no preprocessing:
 *     one inside a conditional is taken as unreached); #warning compiles
 *     with a log;
 *   - kernels are the `__global__ void NAME(` of the source, mangled
 *     ("_Z<len><name>v") unless the source says extern "C";
 *   - amd_comgr_get_isa_count/_name list ROCm 6's targets without gfx950
 *     and RDNA4, so the backend's "unknown target" guard can be exercised;
 *     hiprtcGetProgramLogSize counts the terminating NUL, as NVRTC's does. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_hip.h"
#include "../fake_source.h"

#ifndef FAKE_HIPRTC_MAJOR
#error "build with -DFAKE_HIPRTC_MAJOR=5, 6 or 7"
#endif

#define CODE_MAGIC "GPUOPT-FAKE-CODE-OBJECT\n"

typedef struct fake_program {
    char *src;
    char *log;
    char *code;
    size_t code_size;
} fake_program;

#define MAX_PROGRAMS 64
static fake_program *programs[MAX_PROGRAMS];

static void program_free(fake_program *p)
{
    free(p->src);
    free(p->log);
    free(p->code);
    free(p);
}

int fake_hiprtc_live(void)
{
    int n = 0;
    for (int i = 0; i < MAX_PROGRAMS; i++)
        n += programs[i] != NULL;
    return n;
}

/* Frees what a previous run left (a destroy the tests made fail). */
void fake_hiprtc_reset(void)
{
    for (int i = 0; i < MAX_PROGRAMS; i++) {
        if (programs[i])
            program_free(programs[i]);
        programs[i] = NULL;
    }
}

static const char *const isa[] = {
    "amdgcn-amd-amdhsa--gfx803",  "amdgcn-amd-amdhsa--gfx900",  "amdgcn-amd-amdhsa--gfx906",
    "amdgcn-amd-amdhsa--gfx908",  "amdgcn-amd-amdhsa--gfx90a",  "amdgcn-amd-amdhsa--gfx940",
    "amdgcn-amd-amdhsa--gfx941",  "amdgcn-amd-amdhsa--gfx942",  "amdgcn-amd-amdhsa--gfx1010",
    "amdgcn-amd-amdhsa--gfx1030", "amdgcn-amd-amdhsa--gfx1031", "amdgcn-amd-amdhsa--gfx1032",
    "amdgcn-amd-amdhsa--gfx1100", "amdgcn-amd-amdhsa--gfx1101", "amdgcn-amd-amdhsa--gfx1102",
    "amdgcn-amd-amdhsa--gfx1103",
};

EXPORT int amd_comgr_get_isa_count(size_t *count)
{
    if (fake_enter("amd_comgr_get_isa_count") || !count)
        return 1;
    *count = sizeof isa / sizeof isa[0];
    return 0;
}

EXPORT int amd_comgr_get_isa_name(size_t index, const char **name)
{
    if (fake_enter("amd_comgr_get_isa_name") || !name || index >= sizeof isa / sizeof isa[0])
        return 1;
    *name = isa[index];
    return 0;
}

static const char *const results[] = {"HIPRTC_SUCCESS",
                                      "HIPRTC_ERROR_OUT_OF_MEMORY",
                                      "HIPRTC_ERROR_PROGRAM_CREATION_FAILURE",
                                      "HIPRTC_ERROR_INVALID_INPUT",
                                      "HIPRTC_ERROR_INVALID_PROGRAM",
                                      "HIPRTC_ERROR_INVALID_OPTION",
                                      "HIPRTC_ERROR_COMPILATION",
                                      "HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE",
                                      "HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
                                      "HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
                                      "HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
                                      "HIPRTC_ERROR_INTERNAL_ERROR"};

EXPORT const char *hiprtcGetErrorString(int result)
{
    if (fake_enter("hiprtcGetErrorString"))
        return NULL;
    if (result < 0 || (size_t)result >= sizeof results / sizeof results[0])
        return "Invalid HIPRTC error code";
    return results[result]; /* the name, as hiprtc.h says it does */
}

EXPORT int hiprtcVersion(int *major, int *minor)
{
    ENTER("hiprtcVersion");
    if (!major || !minor)
        return 3;
    *major = FAKE_HIPRTC_MAJOR;
    *minor = 2;
    return 0;
}

EXPORT int hiprtcCreateProgram(void **prog, const char *src, const char *name, int n_headers,
                               const char *const *headers, const char *const *include_names)
{
    ENTER("hiprtcCreateProgram");
    (void)name;
    (void)headers;
    (void)include_names;
    if (!prog || !src || n_headers < 0)
        return 3;
    *prog = NULL;
    int slot = 0;
    while (slot < MAX_PROGRAMS && programs[slot])
        slot++;
    fake_program *p = slot < MAX_PROGRAMS ? calloc(1, sizeof *p) : NULL;
    if (!p || !(p->src = strdup(src)) || !(p->log = strdup(""))) {
        if (p)
            free(p->src);
        free(p);
        return 1;
    }
    programs[slot] = p;
    *prog = p;
    return 0;
}

EXPORT int hiprtcDestroyProgram(void **prog)
{
    ENTER("hiprtcDestroyProgram");
    if (!prog || !*prog)
        return 3;
    for (int i = 0; i < MAX_PROGRAMS; i++)
        if (programs[i] == *prog) {
            program_free(programs[i]);
            programs[i] = NULL;
            *prog = NULL;
            return 0;
        }
    return 4;
}

static void set_log(fake_program *p, const char *text)
{
    char *copy = strdup(text);
    if (copy) {
        free(p->log);
        p->log = copy;
    }
}

/* The line number (1-based) of position `at` in `src`. */
static int line_of(const char *src, const char *at)
{
    int line = 1;
    for (const char *c = src; c < at; c++)
        line += *c == '\n';
    return line;
}

/* "name\n" for each `__global__ void NAME(` of the source. */
static void kernel_names(const char *src, int extern_c, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (const char *p = strstr(src, "__global__"); p; p = strstr(p + 1, "__global__")) {
        const char *q = p + 10;
        while (isspace((unsigned char)*q))
            q++;
        if (strncmp(q, "void", 4) != 0)
            continue;
        q += 4;
        while (isspace((unsigned char)*q))
            q++;
        /* __launch_bounds__(...) may stand between the type and the name. */
        if (strncmp(q, "__launch_bounds__", 17) == 0 && (q = strchr(q, ')')) != NULL) {
            q++;
            while (isspace((unsigned char)*q))
                q++;
        }
        if (!q)
            continue;
        size_t n = 0;
        while (isalnum((unsigned char)q[n]) || q[n] == '_')
            n++;
        if (n == 0)
            continue;
        int w = extern_c ? snprintf(out + len, cap - len, "%.*s\n", (int)n, q)
                         : snprintf(out + len, cap - len, "_Z%zu%.*sv\n", n, (int)n, q);
        if (w < 0 || (size_t)w >= cap - len)
            break;
        len += (size_t)w;
    }
}

EXPORT int hiprtcCompileProgram(void *prog, int n_options, const char *const *options)
{
    ENTER("hiprtcCompileProgram");
    fake_program *p = prog;
    char target[64] = "", log[1024], kernels[1024];
    if (!p)
        return 4;
    if (n_options < 0 || (n_options > 0 && !options))
        return 3;
    for (int i = 0; i < n_options; i++) {
        const char *o = options[i];
        if (!o)
            return 3;
        if (strncmp(o, "--offload-arch=", 15) == 0)
            snprintf(target, sizeof target, "%s", o + 15);
        else if (strncmp(o, "--gpu-architecture=", 19) == 0)
            snprintf(target, sizeof target, "%s", o + 19);
        else if (o[0] != '-') {
            snprintf(log, sizeof log, "error: unknown argument: '%s'\n", o);
            set_log(p, log);
            return 5;
        }
    }
    if (!target[0]) {
        set_log(p, "error: no --offload-arch: the double does not query a device\n");
        return 5;
    }
    const char *err = fake_unconditional_error(p->src);
    if (err) {
        size_t n = strcspn(err, "\n");
        snprintf(log, sizeof log,
                 "gpuopt.hip:%d:2: error: %.*s\n1 error generated when compiling for %s.\n",
                 line_of(p->src, err), (int)(n > 7 ? n - 7 : 0), err + 7, target);
        set_log(p, log);
        return 6;
    }
    const char *warn = strstr(p->src, "#warning");
    if (warn) {
        size_t n = strcspn(warn, "\n");
        snprintf(log, sizeof log, "gpuopt.hip:%d:2: warning: %.*s [-W#warnings]\n",
                 line_of(p->src, warn), (int)(n > 9 ? n - 9 : 0), warn + 9);
        set_log(p, log);
    }
    kernel_names(p->src, strstr(p->src, "extern \"C\"") != NULL, kernels, sizeof kernels);
    size_t size = strlen(CODE_MAGIC) + strlen(target) + strlen(kernels) + 32;
    char *code = malloc(size);
    if (!code)
        return 1;
    int w = snprintf(code, size, "%starget=%s\nkernels=\n%s", CODE_MAGIC, target, kernels);
    free(p->code);
    p->code = code;
    p->code_size = (size_t)w + 1;
    return 0;
}

EXPORT int hiprtcGetProgramLogSize(void *prog, size_t *size)
{
    ENTER("hiprtcGetProgramLogSize");
    fake_program *p = prog;
    if (!p || !size)
        return 3;
    *size = strlen(p->log) + 1;
    return 0;
}

EXPORT int hiprtcGetProgramLog(void *prog, char *log)
{
    ENTER("hiprtcGetProgramLog");
    fake_program *p = prog;
    if (!p || !log)
        return 3;
    memcpy(log, p->log, strlen(p->log) + 1);
    return 0;
}

EXPORT int hiprtcGetCodeSize(void *prog, size_t *size)
{
    ENTER("hiprtcGetCodeSize");
    fake_program *p = prog;
    if (!p || !size)
        return 3;
    if (!p->code)
        return 4;
    *size = p->code_size;
    return 0;
}

EXPORT int hiprtcGetCode(void *prog, char *code)
{
    ENTER("hiprtcGetCode");
    fake_program *p = prog;
    if (!p || !code)
        return 3;
    if (!p->code)
        return 4;
    memcpy(code, p->code, p->code_size);
    return 0;
}
