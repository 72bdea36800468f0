/* hiprtc, opened at run time: finding the library (a separate libhiprtc
 * from ROCm 7 on, the HIP runtime itself before), compiling HIP source to a
 * code object for one gfx target, and the guard that keeps a target the
 * compiler does not know away from it.
 *
 * The guard. Debian's hiprtc 5.2 (inside libamdhip64.so.5, driving
 * libamd_comgr.so.2 5.2.3) aborts the whole process ("munmap_chunk():
 * invalid pointer" from amd_comgr_destroy_action_info) when asked to
 * compile for a target its comgr does not list, such as gfx942 or gfx1100
 * (observed on the development container; comgr 5.2's ISA list ends at
 * gfx90c and gfx1036). The library must never abort its host, so a compile
 * first asks comgr for its ISA list (amd_comgr_get_isa_count/_name) and
 * refuses an unknown target with a reason. A device the runtime drives
 * always has a target its own compiler knows; the guard matters for
 * compiles for another target and for mismatched installs. */
#include <assert.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocm_hiprtc.h"
#include "util/strutil.h"

#define MAX_OPTIONS 64

/* Words for a hiprtc result: "HIPRTC_ERROR_COMPILATION (6)". */
static void result_words(const gpo_hiprtc *rtc, gpo_hiprtc_result r, char *out, size_t cap)
{
    const char *name = gpo_hiprtc_result_name(r);
    const char *text = rtc->fn.get_error_string ? rtc->fn.get_error_string(r) : NULL;
    /* hiprtcGetErrorString answers with the name itself (hiprtc.h). */
    if (text && (!*text || strlen(text) > 160 || (name && strcmp(text, name) == 0)))
        text = NULL;
    if (name && text)
        gpo_snprintf(out, cap, "%s (%d): %s", name, r, text);
    else if (name)
        gpo_snprintf(out, cap, "%s (%d)", name, r);
    else if (text)
        gpo_snprintf(out, cap, "hiprtc result %d: %s", r, text);
    else
        gpo_snprintf(out, cap, "hiprtc result %d", r);
}

/* comgr's ISA list, from the compiler hiprtc drives: its own export when
 * hiprtc links comgr (ROCm 7's libhiprtc.so.7 -> libamd_comgr.so.3), else
 * a comgr already in the process, else the soname of hiprtc's generation
 * (the ROCm 5/6 runtime opens libamd_comgr.so.2 only when it compiles). */
static void open_comgr(gpo_hiprtc *rtc)
{
    static const char *const newest[] = {"libamd_comgr.so.3", "libamd_comgr.so.2", NULL};
    static const char *const oldest[] = {"libamd_comgr.so.2", "libamd_comgr.so.3", NULL};
    void *h = rtc->handle;
    void *count = dlsym(h, "amd_comgr_get_isa_count");
    void *name = dlsym(h, "amd_comgr_get_isa_name");
    if (count && name) {
        gpo_dl_path(h, rtc->comgr, sizeof rtc->comgr);
    } else {
        const char *const *order = rtc->version_major >= 7 ? newest : oldest;
        h = NULL;
        for (int pass = 0; pass < 2 && !h; pass++)
            for (size_t i = 0; order[i] && !h; i++)
                h = dlopen(order[i], RTLD_NOW | RTLD_LOCAL | (pass == 0 ? RTLD_NOLOAD : 0));
        if (!h)
            return; /* no comgr to ask: the guard cannot help */
        count = dlsym(h, "amd_comgr_get_isa_count");
        name = dlsym(h, "amd_comgr_get_isa_name");
        gpo_dl_path(h, rtc->comgr, sizeof rtc->comgr);
        /* comgr stays loaded with hiprtc (never dlclose'd). */
    }
    if (count && name) {
        memcpy(&rtc->isa_count, &count, sizeof count);
        memcpy(&rtc->isa_name, &name, sizeof name);
    } else {
        rtc->comgr[0] = '\0';
    }
}

static int resolve(gpo_hiprtc *rtc, void *h, char *missing, size_t cap)
{
    gpo_hiprtc_fns fns;
    memset(&fns, 0, sizeof fns);
    if (gpo_dl_resolve(h, gpo_hiprtc_syms, gpo_hiprtc_n_syms, &fns, missing, cap) != GPUOPT_OK)
        return -1;
    rtc->fn = fns;
    rtc->handle = h;
    return 0;
}

gpuopt_status gpo_hiprtc_open(gpo_hiprtc *rtc, const char *path, void *hip_handle, int hip_major)
{
    char err[1024], missing[256];
    gpo_sbuf tried;

    assert(rtc);
    memset(rtc, 0, sizeof *rtc);
    rtc->version_major = rtc->version_minor = -1;
    if (path) {
        void *h = gpo_dl_open(path, err, sizeof err);
        if (!h)
            return gpo_fail(GPUOPT_ERR_UNAVAILABLE,
                            "the hiprtc library %s (GPUOPT_HIPRTC_LIBRARY or the config's "
                            "libraries.hiprtc) could not be opened: %s",
                            path, err);
        if (resolve(rtc, h, missing, sizeof missing) != 0) {
            gpo_dl_path(h, err, sizeof err);
            return gpo_fail(GPUOPT_ERR_UNAVAILABLE, "%s is not a usable hiprtc: it lacks %s",
                            err[0] ? err : path, missing);
        }
    } else {
        /* The runtime's own major first: its code objects are the ones its
         * loader is sure to accept. */
        static const char *const sonames[] = {"libhiprtc.so.7", "libhiprtc.so.6",
                                              "libhiprtc.so.5"}; /* majors 7 to 5 */
        const char *names[3];
        size_t n = 0;
        if (hip_major >= 5 && hip_major <= 7)
            names[n++] = sonames[7 - hip_major];
        for (int i = 0; i < 3; i++)
            if (7 - i != hip_major)
                names[n++] = sonames[i];
        gpo_sbuf_init(&tried);
        for (size_t i = 0; i < n && !rtc->handle; i++) {
            void *h = gpo_dl_open(names[i], err, sizeof err);
            if (!h) {
                gpo_sbuf_appendf(&tried, "%s%s", tried.len ? "; " : "", err);
            } else if (resolve(rtc, h, missing, sizeof missing) != 0) {
                gpo_sbuf_appendf(&tried, "%s%s lacks %s", tried.len ? "; " : "", names[i], missing);
            }
        }
        if (!rtc->handle && hip_handle && resolve(rtc, hip_handle, missing, sizeof missing) == 0)
            rtc->in_runtime = 1;
        if (!rtc->handle) {
            gpuopt_status st =
                gpo_fail(GPUOPT_ERR_UNAVAILABLE,
                         "no hiprtc to compile kernels with: %s; and the HIP runtime %s "
                         "(ROCm 7 moved hiprtc out of it into libhiprtc.so.7); install hiprtc "
                         "(Debian/Ubuntu: libhiprtc6 or libhiprtc7; AMD's repositories: "
                         "hip-runtime-amd) or set GPUOPT_HIPRTC_LIBRARY",
                         tried.data && !tried.failed ? tried.data : "no libhiprtc could be opened",
                         hip_handle ? "does not export the hiprtc functions" : "is not loaded");
            gpo_sbuf_free(&tried);
            return st;
        }
        gpo_sbuf_free(&tried);
    }
    gpo_dl_path(rtc->handle, rtc->library, sizeof rtc->library);
    if (rtc->fn.version) {
        int major = -1, minor = -1;
        if (rtc->fn.version(&major, &minor) == GPO_HIPRTC_SUCCESS && major >= 0) {
            rtc->version_major = major;
            rtc->version_minor = minor;
        }
    }
    open_comgr(rtc);
    return GPUOPT_OK;
}

/* "gfx90a:sramecc+:xnack-" and "amdgcn-amd-amdhsa--gfx90a" both to
 * "gfx90a". */
static void bare_target(const char *in, char *out, size_t cap)
{
    const char *p = strstr(in, "--");
    p = p ? p + 2 : in;
    size_t n = strcspn(p, ":");
    if (n >= cap)
        n = cap - 1;
    memcpy(out, p, n);
    out[n] = '\0';
}

int gpo_hiprtc_target_known(const gpo_hiprtc *rtc, const char *target, char *known, size_t cap)
{
    size_t count = 0;
    char want[64];
    gpo_sbuf list;
    int found = 0;

    if (known && cap)
        known[0] = '\0';
    if (!rtc || !target || !rtc->isa_count || !rtc->isa_name || rtc->isa_count(&count) != 0 ||
        count == 0)
        return -1;
    bare_target(target, want, sizeof want);
    gpo_sbuf_init(&list);
    for (size_t i = 0; i < count && i < 4096; i++) {
        const char *name = NULL;
        char bare[64];
        if (rtc->isa_name(i, &name) != 0 || !name)
            continue;
        bare_target(name, bare, sizeof bare);
        if (strcmp(bare, want) == 0)
            found = 1;
        else if (!strstr(list.data ? list.data : "", bare))
            gpo_sbuf_appendf(&list, "%s%s", list.len ? ", " : "", bare);
    }
    if (!found && known && cap)
        gpo_strlcpy(known, list.data && !list.failed ? list.data : "", cap);
    gpo_sbuf_free(&list);
    return found;
}

void gpo_hiprtc_describe(const gpo_hiprtc *rtc, char *out, size_t cap)
{
    const char *base = strrchr(rtc->library, '/');
    base = base ? base + 1 : rtc->library;
    if (rtc->version_major >= 0)
        gpo_snprintf(out, cap, "hiprtc %d.%d (%s%s)", rtc->version_major, rtc->version_minor, base,
                     rtc->in_runtime ? ", inside the HIP runtime" : "");
    else
        gpo_snprintf(out, cap, "hiprtc (%s%s)", base,
                     rtc->in_runtime ? ", inside the HIP runtime" : "");
}

/* Splits `options` on whitespace into argv[first..]; refuses a target of
 * the caller's (the target is the device's). Returns the count or -1. */
static int split_options(char *copy, const char **argv, int first)
{
    int n = first;
    for (char *save = NULL, *t = strtok_r(copy, " \t\r\n", &save); t;
         t = strtok_r(NULL, " \t\r\n", &save)) {
        if (strncmp(t, "--offload-arch", 14) == 0 || strncmp(t, "--gpu-architecture", 18) == 0 ||
            strcmp(t, "-arch") == 0) {
            gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                     "hiprtc options name a target (%s): the runtime compiles for the device's "
                     "own target; leave it out",
                     t);
            return -1;
        }
        if (n >= MAX_OPTIONS) {
            gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "more than %d hiprtc options", MAX_OPTIONS - 1);
            return -1;
        }
        argv[n++] = t;
    }
    return n;
}

/* The program's log (malloc'd, never NULL unless out of memory). */
static char *program_log(const gpo_hiprtc *rtc, gpo_hiprtc_program prog)
{
    size_t n = 0;
    if (rtc->fn.get_program_log_size(prog, &n) != GPO_HIPRTC_SUCCESS || n > (64u << 20))
        n = 0;
    char *log = calloc(1, n + 1);
    if (log && n && rtc->fn.get_program_log(prog, log) != GPO_HIPRTC_SUCCESS)
        log[0] = '\0';
    if (log)
        log[n] = '\0';
    return log;
}

gpuopt_status gpo_hiprtc_compile(const gpo_hiprtc *rtc, const char *source, const char *target,
                                 const char *options, void **code, size_t *size, char **log)
{
    gpo_hiprtc_program prog = NULL;
    const char *argv[MAX_OPTIONS];
    char arch[96], known[512], words[256];
    char *copy = NULL, *text = NULL;
    gpuopt_status st = GPUOPT_OK;
    gpo_hiprtc_result r;

    assert(rtc && rtc->handle && source && target && code && size && log);
    *code = NULL;
    *size = 0;
    *log = NULL;
    if (strncmp(target, "gfx", 3) != 0 || strlen(target) > 63 || strpbrk(target, " \t\n"))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "hiprtc compile: '%s' is not a gfx target ID (e.g. gfx90a, "
                        "gfx90a:sramecc+:xnack-)",
                        target);
    int k = gpo_hiprtc_target_known(rtc, target, known, sizeof known);
    if (k == 0)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "the compiler behind %s (comgr %s) does not know %s (it knows %s); "
                        "compiling for an unknown target aborts the process with some comgr "
                        "releases, so it is not attempted: use a ROCm release that supports %s",
                        rtc->library, rtc->comgr, target, known, target);
    gpo_snprintf(arch, sizeof arch, "--offload-arch=%s", target);
    argv[0] = arch;
    int argc = 1;
    if (options) {
        copy = gpo_strdup(options);
        if (!copy)
            return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory copying hiprtc options");
        argc = split_options(copy, argv, 1);
        if (argc < 0) {
            st = GPUOPT_ERR_INVALID_ARGUMENT;
            goto out;
        }
    }

    r = rtc->fn.create_program(&prog, source, "gpuopt.hip", 0, NULL, NULL);
    if (r != GPO_HIPRTC_SUCCESS) {
        prog = NULL;
        result_words(rtc, r, words, sizeof words);
        st = gpo_fail(r == 1 ? GPUOPT_ERR_NO_MEMORY : GPUOPT_ERR_DRIVER,
                      "hiprtcCreateProgram returned %s", words);
        goto out;
    }
    r = rtc->fn.compile_program(prog, argc, argv);
    text = program_log(rtc, prog);
    if (!text) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory reading the hiprtc log");
        goto out;
    }
    if (r != GPO_HIPRTC_SUCCESS) {
        result_words(rtc, r, words, sizeof words);
        if (!text[0]) {
            free(text);
            text = gpo_asprintf("hiprtcCompileProgram returned %s and left no log", words);
            if (!text) {
                st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory");
                goto out;
            }
        }
        st = gpo_fail(r == 1 ? GPUOPT_ERR_NO_MEMORY : GPUOPT_ERR_BUILD,
                      "hiprtc could not compile the program for %s: hiprtcCompileProgram "
                      "returned %s; the log says: %.400s",
                      target, words, text);
        *log = text;
        text = NULL;
        goto out;
    }
    size_t n = 0;
    r = rtc->fn.get_code_size(prog, &n);
    if (r != GPO_HIPRTC_SUCCESS || n == 0) {
        result_words(rtc, r, words, sizeof words);
        st = gpo_fail(GPUOPT_ERR_DRIVER, "hiprtcGetCodeSize returned %s%s", words,
                      r == GPO_HIPRTC_SUCCESS ? " with an empty code object" : "");
        goto out;
    }
    void *bytes = malloc(n);
    if (!bytes) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory for a %zu-byte code object", n);
        goto out;
    }
    r = rtc->fn.get_code(prog, bytes);
    if (r != GPO_HIPRTC_SUCCESS) {
        free(bytes);
        result_words(rtc, r, words, sizeof words);
        st = gpo_fail(GPUOPT_ERR_DRIVER, "hiprtcGetCode returned %s", words);
        goto out;
    }
    *code = bytes;
    *size = n;
    if (text[0]) {
        *log = text; /* warnings */
        text = NULL;
    }
out:
    if (prog)
        rtc->fn.destroy_program(&prog);
    free(text);
    free(copy);
    return st;
}
