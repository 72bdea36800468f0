/* NVRTC, the CUDA runtime compiler: opening libnvrtc.so.* at run time and
 * compiling CUDA C for one device, to a CUBIN for its sm_XY when this NVRTC
 * knows the architecture, else to PTX the driver compiles when it loads it.
 * Used by the runtime ops (cuda_runtime.c), the doctor and tests. */
#include "cuda_nvrtc.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

const gpo_dl_sym gpo_nvrtc_syms[] = {
#define SYM_ROW_(name, required, ret, params) {#name, offsetof(gpo_nvrtc_api, name), required},
    GPO_NVRTC_API(SYM_ROW_)
#undef SYM_ROW_
};
const size_t gpo_nvrtc_n_syms = sizeof gpo_nvrtc_syms / sizeof gpo_nvrtc_syms[0];

const char *gpo_nvrtc_result_name(gpo_nvrtc_result r)
{
    switch ((int)r) {
#define NAME_CASE_(name, value)                                                                    \
    case value: return #name;
        GPO_NVRTC_RESULTS(NAME_CASE_)
#undef NAME_CASE_
    }
    return NULL;
}

/* A result in words: the library's own name when it gives one, else ours.
 * nvrtcGetErrorString returns the enum name ("NVRTC_ERROR_COMPILATION"). */
static void result_words(const gpo_nvrtc *nv, gpo_nvrtc_result r, char *out, size_t cap)
{
    const char *name = nv && nv->api.nvrtcGetErrorString ? nv->api.nvrtcGetErrorString(r) : NULL;
    if (!name || !*name)
        name = gpo_nvrtc_result_name(r);
    if (name)
        gpo_snprintf(out, cap, "%s", name);
    else
        gpo_snprintf(out, cap, "nvrtcResult %d", r);
}

/* GPUOPT_OK for a call that succeeded, else `st` in words. */
static gpuopt_status nvrtc_fail(const gpo_nvrtc *nv, gpuopt_status st, const char *call,
                                gpo_nvrtc_result r)
{
    char words[128];
    if (r == GPO_NVRTC_SUCCESS)
        return GPUOPT_OK;
    result_words(nv, r, words, sizeof words);
    return gpo_fail(st, "cuda: %s failed: %s%s", call, words,
                    r == GPO_NVRTC_ERROR_BUILTIN_OPERATION_FAILURE
                        ? " (NVRTC could not load libnvrtc-builtins.so of its own version, which "
                          "must sit next to libnvrtc)"
                        : "");
}

/* Sonames newest first, each with the CUDA major it belongs to. A newer
 * NVRTC than the driver's CUDA version emits code the driver may refuse,
 * so only majors up to the driver's are tried (CUDA Compatibility guide:
 * minor-version compatibility holds within one major). */
static const struct {
    const char *soname;
    int major;
} nvrtc_sonames[] = {
    {"libnvrtc.so.13", 13},   {"libnvrtc.so.12", 12},   {"libnvrtc.so.11.2", 11},
    {"libnvrtc.so.11.1", 11}, {"libnvrtc.so.11.0", 11}, {"libnvrtc.so.10.2", 10},
};
#define N_SONAMES (sizeof nvrtc_sonames / sizeof nvrtc_sonames[0])

static void *open_default(int driver_version, char *tried, size_t cap)
{
    const char *names[N_SONAMES + 1];
    size_t n = 0;
    int driver_major = driver_version > 0 ? driver_version / 1000 : 0;
    for (size_t i = 0; i < N_SONAMES; i++)
        if (!driver_major || nvrtc_sonames[i].major <= driver_major)
            names[n++] = nvrtc_sonames[i].soname;
    names[n] = NULL;
    if (!n) {
        gpo_snprintf(tried, cap, "no NVRTC soname belongs to CUDA %d or older", driver_major);
        return NULL;
    }
    return gpo_dl_open_first(names, tried, cap);
}

/* The architectures this NVRTC compiles for (11.2+). */
static gpuopt_status read_archs(gpo_nvrtc *nv)
{
    int n = 0;
    gpuopt_status st = nvrtc_fail(nv, GPUOPT_ERR_DRIVER, "nvrtcGetNumSupportedArchs",
                                  nv->api.nvrtcGetNumSupportedArchs(&n));
    if (st)
        return st;
    if (n < 0 || n > GPO_NVRTC_MAX_ARCHS)
        return gpo_fail(GPUOPT_ERR_DRIVER,
                        "cuda: nvrtcGetNumSupportedArchs answered %d (at most %d expected)", n,
                        GPO_NVRTC_MAX_ARCHS);
    if (n && (st = nvrtc_fail(nv, GPUOPT_ERR_DRIVER, "nvrtcGetSupportedArchs",
                              nv->api.nvrtcGetSupportedArchs(nv->archs))))
        return st;
    nv->n_archs = n;
    return GPUOPT_OK;
}

void gpo_nvrtc_close(gpo_nvrtc *nv)
{
    /* The library stays loaded, as every vendor library does here. */
    free(nv);
}

gpuopt_status gpo_nvrtc_open(const char *user_path, int driver_version, gpo_nvrtc **out)
{
    char err[1024], missing[256];
    gpuopt_status st = GPUOPT_OK;
    assert(out);
    *out = NULL;
    gpo_nvrtc *nv = calloc(1, sizeof *nv);
    if (!nv)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cuda: out of memory opening NVRTC");
    nv->n_archs = -1;

    const char *user = user_path && *user_path ? user_path : NULL;
    nv->handle =
        user ? gpo_dl_open(user, err, sizeof err) : open_default(driver_version, err, sizeof err);
    if (!nv->handle) {
        if (user)
            st = gpo_fail(GPUOPT_ERR_UNAVAILABLE, "cuda: cannot open %s (GPUOPT_NVRTC_LIBRARY): %s",
                          user, err);
        else
            st = gpo_fail(GPUOPT_ERR_UNAVAILABLE,
                          "cuda: NVRTC, the CUDA runtime compiler that builds kernels, cannot be "
                          "opened (%s): install NVRTC of CUDA %d or older (NVIDIA's cuda-nvrtc "
                          "package, or pip's nvidia-cuda-nvrtc-cu12), or name it with "
                          "GPUOPT_NVRTC_LIBRARY",
                          err, driver_version > 0 ? driver_version / 1000 : 13);
        goto out;
    }
    gpo_dl_path(nv->handle, nv->library, sizeof nv->library);
    if (!nv->library[0])
        gpo_strlcpy(nv->library, user ? user : "libnvrtc", sizeof nv->library);
    if (gpo_dl_resolve(nv->handle, gpo_nvrtc_syms, gpo_nvrtc_n_syms, &nv->api, missing,
                       sizeof missing) != GPUOPT_OK) {
        st = gpo_fail(GPUOPT_ERR_UNAVAILABLE, "cuda: %s lacks %s: it is not NVRTC", nv->library,
                      missing);
        goto out;
    }
    st = nvrtc_fail(nv, GPUOPT_ERR_DRIVER, "nvrtcVersion",
                    nv->api.nvrtcVersion(&nv->major, &nv->minor));
    if (!st && nv->api.nvrtcGetNumSupportedArchs && nv->api.nvrtcGetSupportedArchs)
        st = read_archs(nv);
out:
    if (st) {
        gpo_nvrtc_close(nv);
        return st;
    }
    *out = nv;
    return GPUOPT_OK;
}

void gpo_nvrtc_version_text(const gpo_nvrtc *nv, char *out, size_t cap)
{
    if (!nv)
        gpo_snprintf(out, cap, "NVRTC not loaded");
    else
        gpo_snprintf(out, cap, "NVRTC %d.%d", nv->major, nv->minor);
}

/* "sm_75 to sm_121" for reasons. */
static void archs_text(const gpo_nvrtc *nv, char *out, size_t cap)
{
    if (nv->n_archs <= 0)
        gpo_snprintf(out, cap, "no architecture");
    else
        gpo_snprintf(out, cap, "sm_%d to sm_%d", nv->archs[0], nv->archs[nv->n_archs - 1]);
}

/* The target for a device of capability major.minor: "sm_XY" with *cubin 1
 * when this NVRTC knows the architecture, "compute_XY" of the newest one it
 * knows below (PTX, *cubin 0) for a newer device. */
static gpuopt_status nvrtc_target(const gpo_nvrtc *nv, int cc_major, int cc_minor, char *target,
                                  size_t cap, int *cubin)
{
    assert(nv && target && cubin && cap >= 16);
    if (cc_major < 1 || cc_minor < 0 || cc_minor > 9)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "cuda: compute capability %d.%d is not one",
                        cc_major, cc_minor);
    int arch = cc_major * 10 + cc_minor;
    *cubin = 0;
    if (nv->n_archs < 0) {
        /* NVRTC before 11.2 cannot list its architectures: ask for PTX of
         * the device's own virtual architecture and let it say no. */
        gpo_snprintf(target, cap, "compute_%d", arch);
        return GPUOPT_OK;
    }
    int below = 0;
    for (int i = 0; i < nv->n_archs; i++) {
        if (nv->archs[i] == arch) {
            /* A CUBIN when this NVRTC can hand one out (11.1+), so the
             * driver loads machine code and JITs nothing. */
            *cubin = nv->api.nvrtcGetCUBIN && nv->api.nvrtcGetCUBINSize;
            gpo_snprintf(target, cap, "%s_%d", *cubin ? "sm" : "compute", arch);
            return GPUOPT_OK;
        }
        if (nv->archs[i] < arch)
            below = nv->archs[i];
    }
    char range[64];
    archs_text(nv, range, sizeof range);
    if (below) {
        /* A device newer than this NVRTC: PTX of the newest architecture it
         * knows runs on newer GPUs, compiled by the driver at load
         * (CUDA C++ Programming Guide, "Application Compatibility"). */
        gpo_snprintf(target, cap, "compute_%d", below);
        return GPUOPT_OK;
    }
    return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                    "cuda: NVRTC %d.%d compiles for %s; this device is sm_%d, older than all of "
                    "them: name an NVRTC of a CUDA release that still supports sm_%d with "
                    "GPUOPT_NVRTC_LIBRARY",
                    nv->major, nv->minor, range, arch, arch);
}

/* Splits `options` at blank space; '...' and "..." group words. Returns the
 * count, or -1 when there are more than `max` or a quote is unclosed. The
 * words point into `buf`, a modified copy of `options`. */
static int split_options(char *buf, const char **argv, int max)
{
    int n = 0;
    char *p = buf, *w = buf;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        if (!*p)
            break;
        if (n == max)
            return -1;
        argv[n++] = w;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
            if (*p == '\'' || *p == '"') {
                char q = *p++;
                while (*p && *p != q)
                    *w++ = *p++;
                if (*p != q)
                    return -1;
                p++;
            } else {
                *w++ = *p++;
            }
        }
        if (*p)
            p++;
        *w++ = '\0';
    }
    return n;
}

/* The architecture an option names ("-arch=sm_80", "--gpu-architecture
 * compute_90", ...), or NULL when it names none. `next` is the following
 * option, for the two-word forms. */
static const char *named_arch(const char *opt, const char *next)
{
    static const char *const prefixes[] = {"--gpu-architecture", "-arch"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t n = strlen(prefixes[i]);
        if (strncmp(opt, prefixes[i], n) != 0)
            continue;
        if (opt[n] == '=')
            return opt + n + 1;
        if (opt[n] == '\0')
            return next ? next : "";
    }
    return NULL;
}

static char *program_log(const gpo_nvrtc *nv, gpo_nvrtc_program prog)
{
    size_t size = 0;
    if (nv->api.nvrtcGetProgramLogSize(prog, &size) != GPO_NVRTC_SUCCESS || size > (64u << 20))
        return NULL;
    char *log = malloc(size + 1);
    if (!log)
        return NULL;
    if (!size || nv->api.nvrtcGetProgramLog(prog, log) != GPO_NVRTC_SUCCESS)
        size = 0;
    log[size] = '\0';
    gpo_trim(log);
    return log;
}

/* Copies the compiled image out of `prog`. */
static gpuopt_status take_image(const gpo_nvrtc *nv, gpo_nvrtc_program prog, int cubin,
                                gpo_nvrtc_image *img)
{
    size_t size = 0;
    gpo_nvrtc_result r =
        cubin ? nv->api.nvrtcGetCUBINSize(prog, &size) : nv->api.nvrtcGetPTXSize(prog, &size);
    if (r != GPO_NVRTC_SUCCESS)
        return nvrtc_fail(nv, GPUOPT_ERR_DRIVER, cubin ? "nvrtcGetCUBINSize" : "nvrtcGetPTXSize",
                          r);
    if (size == 0)
        return gpo_fail(GPUOPT_ERR_BUILD, "cuda: NVRTC produced an empty %s",
                        cubin ? "CUBIN" : "PTX");
    img->data = malloc(size + 1);
    if (!img->data)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cuda: out of memory for a %zu-byte module", size);
    r = cubin ? nv->api.nvrtcGetCUBIN(prog, img->data) : nv->api.nvrtcGetPTX(prog, img->data);
    if (r != GPO_NVRTC_SUCCESS) {
        free(img->data);
        img->data = NULL;
        return nvrtc_fail(nv, GPUOPT_ERR_DRIVER, cubin ? "nvrtcGetCUBIN" : "nvrtcGetPTX", r);
    }
    img->data[size] = '\0'; /* PTX must end in NUL for cuModuleLoadData */
    img->size = size;
    img->cubin = cubin;
    return GPUOPT_OK;
}

gpuopt_status gpo_nvrtc_compile(const gpo_nvrtc *nv, const char *source, const char *options,
                                int cc_major, int cc_minor, gpo_nvrtc_image *img, char **log_out)
{
    const char *argv[GPO_NVRTC_MAX_OPTIONS + 1];
    char arch_opt[48], *buf = NULL, *log = NULL;
    gpo_nvrtc_program prog = NULL;
    gpuopt_status st = GPUOPT_OK;
    int cubin = 0, user_arch = 0;

    assert(nv && source && img);
    if (log_out)
        *log_out = NULL;
    memset(img, 0, sizeof *img);
    if (!source[0])
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cuda: nvrtc compile: empty source");
    buf = gpo_strdup(options ? options : "");
    if (!buf)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cuda: out of memory for build options");
    int argc = split_options(buf, argv, GPO_NVRTC_MAX_OPTIONS);
    if (argc < 0) {
        st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                      "cuda: build options \"%s\": an unclosed quote, or more than %d options",
                      options, GPO_NVRTC_MAX_OPTIONS);
        goto out;
    }
    for (int i = 0; i < argc && !user_arch; i++) {
        const char *arch = named_arch(argv[i], i + 1 < argc ? argv[i + 1] : NULL);
        if (arch) {
            user_arch = 1;
            gpo_snprintf(img->target, sizeof img->target, "%s", arch);
        }
    }
    if (user_arch) {
        /* The caller chose: take a CUBIN when NVRTC made one, else PTX. */
        cubin = -1;
    } else {
        st = nvrtc_target(nv, cc_major, cc_minor, img->target, sizeof img->target, &cubin);
        if (st)
            goto out;
        gpo_snprintf(arch_opt, sizeof arch_opt, "--gpu-architecture=%s", img->target);
        argv[argc++] = arch_opt;
    }

    gpo_nvrtc_result r =
        nv->api.nvrtcCreateProgram(&prog, source, "gpuopt_kernel.cu", 0, NULL, NULL);
    if (r != GPO_NVRTC_SUCCESS) {
        prog = NULL;
        st = nvrtc_fail(nv, GPUOPT_ERR_DRIVER, "nvrtcCreateProgram", r);
        goto out;
    }
    r = nv->api.nvrtcCompileProgram(prog, argc, argv);
    log = program_log(nv, prog);
    if (r != GPO_NVRTC_SUCCESS) {
        char words[128];
        result_words(nv, r, words, sizeof words);
        if (!log || !log[0]) {
            free(log);
            log = gpo_asprintf("%s", words);
        }
        st = gpo_fail(GPUOPT_ERR_BUILD,
                      "cuda: the kernel did not build for %s%s%s: nvrtcCompileProgram failed "
                      "with %s: %.700s",
                      img->target, options && options[0] ? " with options " : "",
                      options ? options : "", words, log ? log : "(no log)");
        goto out;
    }
    if (cubin < 0) {
        size_t size = 0;
        cubin = nv->api.nvrtcGetCUBINSize && nv->api.nvrtcGetCUBIN &&
                nv->api.nvrtcGetCUBINSize(prog, &size) == GPO_NVRTC_SUCCESS && size > 0;
    }
    st = take_image(nv, prog, cubin, img);
out:
    if (prog)
        nv->api.nvrtcDestroyProgram(&prog);
    free(buf);
    if (log && !log[0]) {
        free(log);
        log = NULL;
    }
    if (log_out)
        *log_out = log;
    else
        free(log);
    if (st)
        gpo_nvrtc_image_free(img);
    return st;
}

void gpo_nvrtc_image_free(gpo_nvrtc_image *img)
{
    if (!img)
        return;
    free(img->data);
    img->data = NULL;
    img->size = 0;
}
