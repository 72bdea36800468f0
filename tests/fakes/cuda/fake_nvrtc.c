/* A test double of NVRTC (libnvrtc.so.13): the slice backends/cuda calls,
 * enough to drive the runtime's build path on machines without the CUDA
 * toolkit and to fail any call on purpose. It does not compile CUDA C: it
 * finds each __global__ function and emits PTX with its entry and
 * parameter list (for a compute_XY target), or a small ELF image whose
 * string table names the entries (for sm_XY, standing in for a CUBIN).
 * An `#error` outside every conditional block fails the compilation with a
 * log, as NVRTC would (one inside is taken as unreached: no preprocessing).
 *
 * Configured from the environment, read at first use and by
 * gpo_fake_nvrtc_reset():
 *   GPUOPT_FAKE_NVRTC_VERSION  "major.minor" (13.0)
 *   GPUOPT_FAKE_NVRTC_ARCHS    supported architectures, comma-separated
 *                              (NVRTC 13.0's list); "none": this NVRTC
 *                              lacks nvrtcGetSupportedArchs
 *   GPUOPT_FAKE_NVRTC_FAIL     sym:N:RESULT[,...]: the Nth call (from 1, or
 *                              '*') of sym returns RESULT (a name or number) */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/nvrtc_api.h"
#include "../fake_source.h"

#define FAKE_MAX_RULES 16

static const char *const fake_syms[] = {
    "nvrtcVersion",           "nvrtcGetNumSupportedArchs",
    "nvrtcGetSupportedArchs", "nvrtcCreateProgram",
    "nvrtcDestroyProgram",    "nvrtcCompileProgram",
    "nvrtcGetPTXSize",        "nvrtcGetPTX",
    "nvrtcGetCUBINSize",      "nvrtcGetCUBIN",
    "nvrtcGetProgramLogSize", "nvrtcGetProgramLog",
    "nvrtcGetErrorString",
};
#define N_SYMS (sizeof fake_syms / sizeof fake_syms[0])

static const struct {
    gpo_nvrtc_result value;
    const char *name;
} result_names[] = {
#define NAME_ROW_(name, value) {value, #name},
    GPO_NVRTC_RESULTS(NAME_ROW_)
#undef NAME_ROW_
};

struct gpo_nvrtc_prog_st {
    struct gpo_nvrtc_prog_st *next; /* every live program, so a reset frees them */
    char *source;
    char *log;
    char *image; /* PTX text or ELF bytes */
    size_t image_size;
    int cubin;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int configured;
static int major = 13, minor = 0;
static int archs[64], n_archs = -1;
static struct {
    char sym[64];
    long nth;
    gpo_nvrtc_result result;
} rules[FAKE_MAX_RULES];
static int n_rules;
static long calls[N_SYMS];
static long live_programs;
static struct gpo_nvrtc_prog_st *programs;

static void program_free(struct gpo_nvrtc_prog_st *p)
{
    free(p->source);
    free(p->log);
    free(p->image);
    free(p);
}

static int parse_result(const char *text, gpo_nvrtc_result *out)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*text && !*end) {
        *out = (gpo_nvrtc_result)v;
        return 0;
    }
    for (size_t i = 0; i < sizeof result_names / sizeof result_names[0]; i++)
        if (strcmp(result_names[i].name, text) == 0) {
            *out = result_names[i].value;
            return 0;
        }
    return -1;
}

static void configure(void)
{
    static const int nvrtc13[] = {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};
    const char *env;
    /* Programs a failed nvrtcDestroyProgram kept go with the reset. */
    while (programs) {
        struct gpo_nvrtc_prog_st *p = programs;
        programs = p->next;
        program_free(p);
    }
    live_programs = 0;
    major = 13;
    minor = 0;
    n_rules = 0;
    memset(calls, 0, sizeof calls);
    if ((env = getenv("GPUOPT_FAKE_NVRTC_VERSION")) && *env)
        sscanf(env, "%d.%d", &major, &minor);
    n_archs = (int)(sizeof nvrtc13 / sizeof nvrtc13[0]);
    memcpy(archs, nvrtc13, sizeof nvrtc13);
    if ((env = getenv("GPUOPT_FAKE_NVRTC_ARCHS")) && *env) {
        n_archs = strcmp(env, "none") == 0 ? -1 : 0;
        for (const char *p = env; n_archs >= 0 && *p && n_archs < 64;) {
            archs[n_archs++] = (int)strtol(p, (char **)&p, 10);
            if (*p == ',')
                p++;
            else
                break;
        }
    }
    if ((env = getenv("GPUOPT_FAKE_NVRTC_FAIL")) && *env) {
        char buf[1024], *save = NULL;
        snprintf(buf, sizeof buf, "%s", env);
        for (char *tok = strtok_r(buf, ",", &save); tok && n_rules < FAKE_MAX_RULES;
             tok = strtok_r(NULL, ",", &save)) {
            char *c1 = strchr(tok, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
            if (!c2)
                continue;
            *c1 = *c2 = '\0';
            snprintf(rules[n_rules].sym, sizeof rules[n_rules].sym, "%s", tok);
            rules[n_rules].nth = strcmp(c1 + 1, "*") == 0 ? 0 : strtol(c1 + 1, NULL, 10);
            if (parse_result(c2 + 1, &rules[n_rules].result) == 0)
                n_rules++;
        }
    }
    configured = 1;
}

static int enter(const char *sym, gpo_nvrtc_result *r)
{
    int fail = 0;
    pthread_mutex_lock(&lock);
    if (!configured)
        configure();
    for (size_t i = 0; i < N_SYMS; i++) {
        if (strcmp(fake_syms[i], sym) != 0)
            continue;
        long n = ++calls[i];
        for (int k = 0; k < n_rules; k++)
            if (strcmp(rules[k].sym, sym) == 0 && (rules[k].nth == 0 || rules[k].nth == n)) {
                *r = rules[k].result;
                fail = 1;
            }
    }
    pthread_mutex_unlock(&lock);
    return fail;
}

#define ENTER(sym)                                                                                 \
    do {                                                                                           \
        gpo_nvrtc_result injected_;                                                                \
        if (enter(sym, &injected_))                                                                \
            return injected_;                                                                      \
    } while (0)

/* ---- the API slice ------------------------------------------------------------- */

const char *nvrtcGetErrorString(gpo_nvrtc_result result)
{
    gpo_nvrtc_result ignored;
    enter("nvrtcGetErrorString", &ignored);
    for (size_t i = 0; i < sizeof result_names / sizeof result_names[0]; i++)
        if (result_names[i].value == result)
            return result_names[i].name;
    return "NVRTC_ERROR unknown";
}

gpo_nvrtc_result nvrtcVersion(int *maj, int *min)
{
    ENTER("nvrtcVersion");
    if (!maj || !min)
        return GPO_NVRTC_ERROR_INVALID_INPUT;
    *maj = major;
    *min = minor;
    return GPO_NVRTC_SUCCESS;
}

gpo_nvrtc_result nvrtcGetNumSupportedArchs(int *count)
{
    ENTER("nvrtcGetNumSupportedArchs");
    if (!count)
        return GPO_NVRTC_ERROR_INVALID_INPUT;
    *count = n_archs < 0 ? 0 : n_archs;
    return GPO_NVRTC_SUCCESS;
}

gpo_nvrtc_result nvrtcGetSupportedArchs(int *out)
{
    ENTER("nvrtcGetSupportedArchs");
    if (!out)
        return GPO_NVRTC_ERROR_INVALID_INPUT;
    for (int i = 0; i < n_archs; i++)
        out[i] = archs[i];
    return GPO_NVRTC_SUCCESS;
}

gpo_nvrtc_result nvrtcCreateProgram(gpo_nvrtc_program *prog, const char *src, const char *name,
                                    int num_headers, const char *const *headers,
                                    const char *const *include_names)
{
    (void)name;
    (void)headers;
    (void)include_names;
    ENTER("nvrtcCreateProgram");
    if (!prog || !src || num_headers < 0)
        return GPO_NVRTC_ERROR_INVALID_INPUT;
    struct gpo_nvrtc_prog_st *p = calloc(1, sizeof *p);
    if (!p || !(p->source = strdup(src))) {
        free(p);
        return GPO_NVRTC_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&lock);
    live_programs++;
    p->next = programs;
    programs = p;
    pthread_mutex_unlock(&lock);
    *prog = p;
    return GPO_NVRTC_SUCCESS;
}

gpo_nvrtc_result nvrtcDestroyProgram(gpo_nvrtc_program *prog)
{
    ENTER("nvrtcDestroyProgram");
    if (!prog || !*prog)
        return GPO_NVRTC_ERROR_INVALID_PROGRAM;
    gpo_nvrtc_result r = GPO_NVRTC_ERROR_INVALID_PROGRAM;
    pthread_mutex_lock(&lock);
    for (struct gpo_nvrtc_prog_st **pp = &programs; *pp; pp = &(*pp)->next) {
        if (*pp != *prog)
            continue;
        *pp = (*prog)->next;
        program_free(*prog);
        *prog = NULL;
        live_programs--;
        r = GPO_NVRTC_SUCCESS;
        break;
    }
    pthread_mutex_unlock(&lock);
    return r;
}

/* Appends to a growing buffer; 0 on success. */
static int append(char **buf, size_t *len, const char *s, size_t n)
{
    char *p = realloc(*buf, *len + n + 1);
    if (!p)
        return -1;
    memcpy(p + *len, s, n);
    *len += n;
    p[*len] = '\0';
    *buf = p;
    return 0;
}

/* Bytes of one parameter declared in C ("const float *A", "int n"). */
static int c_param_bytes(const char *decl, size_t n)
{
    char d[256];
    snprintf(d, sizeof d, "%.*s", (int)(n < 255 ? n : 255), decl);
    if (strchr(d, '*') || strstr(d, "double") || strstr(d, "long") || strstr(d, "size_t") ||
        strstr(d, "int64") || strstr(d, "uint64"))
        return 8;
    if (strstr(d, "short"))
        return 2;
    if (strstr(d, "char"))
        return 1;
    return 4;
}

/* Every `__global__ ... NAME(params)`: calls fn(name, params, n) for each. */
static int each_kernel(const char *src,
                       int (*fn)(void *, const char *, size_t, const char *, size_t), void *user)
{
    for (const char *p = strstr(src, "__global__"); p; p = strstr(p + 1, "__global__")) {
        const char *from = p, *open, *e, *b;
        /* The name is the identifier before the first '(' that does not
         * open __launch_bounds__(...). */
        for (;;) {
            open = strchr(from, '(');
            if (!open)
                return 0;
            e = open;
            while (e > p && (e[-1] == ' ' || e[-1] == '\n' || e[-1] == '\t'))
                e--;
            b = e;
            while (b > p && (b[-1] == '_' || (b[-1] >= '0' && b[-1] <= '9') ||
                             ((b[-1] | 32) >= 'a' && (b[-1] | 32) <= 'z')))
                b--;
            if ((size_t)(e - b) != 17 || strncmp(b, "__launch_bounds__", 17) != 0)
                break;
            from = strchr(open, ')');
            if (!from)
                return 0;
        }
        const char *close = strchr(open, ')');
        if (!close || e == b)
            break;
        if (fn(user, b, (size_t)(e - b), open + 1, (size_t)(close - open - 1)))
            return -1;
    }
    return 0;
}

typedef struct emit {
    char *buf;
    size_t len;
} emit;

static int emit_ptx_entry(void *user, const char *name, size_t n, const char *params, size_t pn)
{
    emit *out = user;
    char line[256];
    int index = 0;
    snprintf(line, sizeof line, ".visible .entry %.*s(\n", (int)n, name);
    if (append(&out->buf, &out->len, line, strlen(line)))
        return -1;
    for (const char *p = params; p < params + pn;) {
        const char *comma = memchr(p, ',', (size_t)(params + pn - p));
        const char *end = comma ? comma : params + pn;
        int blank = 1;
        for (const char *c = p; c < end; c++)
            blank &= *c == ' ' || *c == '\n' || *c == '\t' || (*c == 'v' && !strncmp(c, "void", 4));
        if (!blank) {
            int bytes = c_param_bytes(p, (size_t)(end - p));
            snprintf(line, sizeof line, "%s\t.param .u%d %.*s_param_%d\n", index ? ",\n" : "",
                     bytes * 8, (int)n, name, index);
            if (append(&out->buf, &out->len, line, strlen(line)))
                return -1;
            index++;
        }
        p = end + 1;
    }
    return append(&out->buf, &out->len, ")\n{\n\tret;\n}\n", 12);
}

static int emit_strtab(void *user, const char *name, size_t n, const char *params, size_t pn)
{
    (void)params;
    (void)pn;
    emit *out = user;
    return append(&out->buf, &out->len, name, n) || append(&out->buf, &out->len, "\0", 1);
}

static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* A minimal 64-bit ELF: header, string table, one section header. */
static int make_elf(const char *src, char **image, size_t *size)
{
    emit tab = {NULL, 0};
    if (append(&tab.buf, &tab.len, "\0", 1) || each_kernel(src, emit_strtab, &tab)) {
        free(tab.buf);
        return -1;
    }
    size_t shoff = (64 + tab.len + 7) / 8 * 8;
    size_t total = shoff + 64;
    unsigned char *p = calloc(1, total);
    if (!p) {
        free(tab.buf);
        return -1;
    }
    memcpy(p, "\177ELF\2\1\1", 7);
    put_le(p + 0x10, 2, 2);     /* ET_EXEC */
    put_le(p + 0x12, 190, 2);   /* EM_CUDA */
    put_le(p + 0x28, shoff, 8); /* e_shoff */
    put_le(p + 0x34, 64, 2);    /* e_ehsize */
    put_le(p + 0x3a, 64, 2);    /* e_shentsize */
    put_le(p + 0x3c, 1, 2);     /* e_shnum */
    memcpy(p + 64, tab.buf, tab.len);
    unsigned char *sh = p + shoff;
    put_le(sh + 4, 3, 4);          /* SHT_STRTAB */
    put_le(sh + 0x18, 64, 8);      /* sh_offset */
    put_le(sh + 0x20, tab.len, 8); /* sh_size */
    free(tab.buf);
    *image = (char *)p;
    *size = total;
    return 0;
}

static int supported(int arch)
{
    for (int i = 0; i < n_archs; i++)
        if (archs[i] == arch)
            return 1;
    return n_archs < 0; /* an NVRTC that cannot list them accepts any */
}

gpo_nvrtc_result nvrtcCompileProgram(gpo_nvrtc_program prog, int num_options,
                                     const char *const *options)
{
    ENTER("nvrtcCompileProgram");
    if (!prog)
        return GPO_NVRTC_ERROR_INVALID_PROGRAM;
    if (num_options < 0 || (num_options && !options))
        return GPO_NVRTC_ERROR_INVALID_INPUT;
    free(prog->log);
    free(prog->image);
    prog->log = prog->image = NULL;
    int arch = 52, cubin = 0; /* NVRTC 13's default is compute_75; any will do */
    for (int i = 0; i < num_options; i++) {
        const char *v = NULL;
        if (!strncmp(options[i], "--gpu-architecture=", 19))
            v = options[i] + 19;
        else if (!strncmp(options[i], "-arch=", 6))
            v = options[i] + 6;
        if (!v)
            continue;
        cubin = !strncmp(v, "sm_", 3);
        arch = atoi(v + (cubin ? 3 : 8));
        if ((!cubin && strncmp(v, "compute_", 8)) || !supported(arch)) {
            prog->log = strdup("nvrtc: error: invalid value for --gpu-architecture (-arch)\n");
            return GPO_NVRTC_ERROR_INVALID_OPTION;
        }
    }
    const char *err = fake_unconditional_error(prog->source);
    if (err) {
        int line = 1;
        for (const char *c = prog->source; c < err; c++)
            line += *c == '\n';
        const char *eol = strchr(err, '\n');
        char text[512];
        snprintf(text, sizeof text,
                 "gpuopt_kernel.cu(%d): error: %.*s\n\n1 error detected in the "
                 "compilation of \"gpuopt_kernel.cu\".\n",
                 line, (int)(eol ? eol - err : (long)strlen(err)), err);
        prog->log = strdup(text);
        return GPO_NVRTC_ERROR_COMPILATION;
    }
    if (cubin) {
        prog->cubin = 1;
        if (make_elf(prog->source, &prog->image, &prog->image_size))
            return GPO_NVRTC_ERROR_OUT_OF_MEMORY;
        return GPO_NVRTC_SUCCESS;
    }
    emit ptx = {NULL, 0};
    char head[128];
    snprintf(head, sizeof head,
             "//\n// fake NVRTC %d.%d\n//\n.version 9.0\n.target sm_%d\n"
             ".address_size 64\n\n",
             major, minor, arch);
    if (append(&ptx.buf, &ptx.len, head, strlen(head)) ||
        each_kernel(prog->source, emit_ptx_entry, &ptx)) {
        free(ptx.buf);
        return GPO_NVRTC_ERROR_OUT_OF_MEMORY;
    }
    prog->image = ptx.buf;
    prog->image_size = ptx.len + 1;
    return GPO_NVRTC_SUCCESS;
}

gpo_nvrtc_result nvrtcGetPTXSize(gpo_nvrtc_program prog, size_t *size)
{
    ENTER("nvrtcGetPTXSize");
    if (!prog || !size)
        return GPO_NVRTC_ERROR_INVALID_INPUT;
    *size = prog->image && !prog->cubin ? prog->image_size : 0;
    return GPO_NVRTC_SUCCESS;
}

gpo_nvrtc_result nvrtcGetPTX(gpo_nvrtc_program prog, char *ptx)
{
    ENTER("nvrtcGetPTX");
    if (!prog || !ptx || !prog->image || prog->cubin)
        return GPO_NVRTC_ERROR_INVALID_INPUT;
    memcpy(ptx, prog->image, prog->image_size);
    return GPO_NVRTC_SUCCESS;
}

gpo_nvrtc_result nvrtcGetCUBINSize(gpo_nvrtc_program prog, size_t *size)
{
    ENTER("nvrtcGetCUBINSize");
    if (!prog || !size)
        return GPO_NVRTC_ERROR_INVALID_INPUT;
    *size = prog->image && prog->cubin ? prog->image_size : 0;
    return GPO_NVRTC_SUCCESS;
}

gpo_nvrtc_result nvrtcGetCUBIN(gpo_nvrtc_program prog, char *cubin)
{
    ENTER("nvrtcGetCUBIN");
    if (!prog || !cubin || !prog->image || !prog->cubin)
        return GPO_NVRTC_ERROR_INVALID_INPUT;
    memcpy(cubin, prog->image, prog->image_size);
    return GPO_NVRTC_SUCCESS;
}

gpo_nvrtc_result nvrtcGetProgramLogSize(gpo_nvrtc_program prog, size_t *size)
{
    ENTER("nvrtcGetProgramLogSize");
    if (!prog || !size)
        return GPO_NVRTC_ERROR_INVALID_INPUT;
    *size = (prog->log ? strlen(prog->log) : 0) + 1;
    return GPO_NVRTC_SUCCESS;
}

gpo_nvrtc_result nvrtcGetProgramLog(gpo_nvrtc_program prog, char *log)
{
    ENTER("nvrtcGetProgramLog");
    if (!prog || !log)
        return GPO_NVRTC_ERROR_INVALID_INPUT;
    strcpy(log, prog->log ? prog->log : "");
    return GPO_NVRTC_SUCCESS;
}

/* Each definition above must match the backend's prototype (nvrtc_api.h). */
#define PROTOTYPE_CHECK_(name, required, ret, params)                                              \
    __attribute__((unused)) static const gpo_pfn_##name check_##name = name;
GPO_NVRTC_API(PROTOTYPE_CHECK_)
#undef PROTOTYPE_CHECK_

/* ---- control, for tests ------------------------------------------------------------ */

void gpo_fake_nvrtc_reset(void)
{
    pthread_mutex_lock(&lock);
    configure();
    pthread_mutex_unlock(&lock);
}

long gpo_fake_nvrtc_calls(const char *sym)
{
    long n = 0;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < N_SYMS; i++)
        if (!sym || strcmp(fake_syms[i], sym) == 0)
            n += calls[i];
    pthread_mutex_unlock(&lock);
    return n;
}

long gpo_fake_nvrtc_live_programs(void)
{
    return live_programs;
}
