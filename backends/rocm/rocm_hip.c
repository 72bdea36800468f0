/* The HIP runtime (libamdhip64), opened at run time: loading, versions,
 * initialisation, per-device queries and free memory. Every call's result is
 * checked and turned into words here, once. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdatomic.h>
#include <unistd.h>

#include "rocm_hip.h"
#include "util/strutil.h"

/* The process in which the runtime was initialised here, 0 before. A
 * fork()ed child inherits the value but not a usable runtime: the KFD file
 * descriptor, queues and mappings the parent's ROCr set up are not the
 * child's, so nothing the parent's HIP state says can be trusted there. */
static atomic_int hip_init_pid;

int gpo_hip_init_pid(void)
{
    return atomic_load(&hip_init_pid);
}

/* Newest first: a machine with several ROCm installs gets the newest
 * runtime. The unversioned name exists only with the development package
 * (and may be any major, hence hipRuntimeGetVersion before anything else). */
static const char *const sonames[] = {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5",
                                      "libamdhip64.so", NULL};

void gpo_hip_error_text(const gpo_hip *hip, gpo_hip_error e, char *out, size_t cap)
{
    const char *name = NULL, *text = NULL;
    if (!out || cap == 0)
        return;
    if (hip && hip->fn.get_error_name)
        name = hip->fn.get_error_name(e);
    /* A runtime that does not know the code answers "hipErrorUnknown" or
     * garbage; only a plausible name is used, else ours. */
    if (!name || strncmp(name, "hipError", 8) != 0 || strlen(name) > 64 ||
        (strcmp(name, "hipErrorUnknown") == 0 && e != GPO_hipErrorUnknown))
        name = NULL;
    if (!name)
        name = gpo_hip_error_name(e);
    if (hip && hip->fn.get_error_string)
        text = hip->fn.get_error_string(e);
    /* ROCm 5's hipGetErrorString returns the name again. */
    if (text && (!*text || (name && strcmp(text, name) == 0) || strlen(text) > 200))
        text = NULL;
    if (name && text)
        gpo_snprintf(out, cap, "%s (%d): %s", name, e, text);
    else if (name)
        gpo_snprintf(out, cap, "%s (%d)", name, e);
    else
        gpo_snprintf(out, cap, "HIP error %d", e);
}

/* Words for one failed call: "hipInit returned hipErrorInvalidDevice (101)". */
static void call_failed(const gpo_hip *hip, const char *call, gpo_hip_error e, char *out,
                        size_t cap)
{
    char words[256];
    gpo_hip_error_text(hip, e, words, sizeof words);
    gpo_snprintf(out, cap, "%s returned %s", call, words);
}

/* hipInit or hipGetDeviceCount failed (HIP `vt`): the reason, and which
 * failure it is. */
static gpo_hip_failure start_failed(const gpo_hip *hip, const char *call, gpo_hip_error e,
                                    const char *vt, char *reason, size_t cap)
{
    char what[320];
    call_failed(hip, call, e, what, sizeof what);
    /* Without a usable GPU the runtime answers hipErrorInvalidDevice from
     * hipInit (observed: Debian libamdhip64 5.2 without /dev/kfd) or
     * hipErrorNoDevice. */
    if (e == GPO_hipErrorNoDevice || e == GPO_hipErrorInvalidDevice) {
        gpo_snprintf(reason, cap, "HIP %s (%s) sees no usable AMD GPU: %s", vt, hip->library, what);
        return GPO_HIP_NO_DEVICE;
    }
    gpo_snprintf(reason, cap, "HIP %s (%s): %s", vt, hip->library, what);
    return e == GPO_hipErrorInsufficientDriver ? GPO_HIP_OLD_DRIVER : GPO_HIP_BROKEN;
}

gpo_hip_failure gpo_hip_open(gpo_hip *hip, const char *path, char *reason, size_t cap)
{
    char err[1024];
    char missing[256];
    char what[320];
    gpo_hip_error e;
    const char *one[2] = {path, NULL};

    memset(hip, 0, sizeof *hip);
    hip->runtime_version = hip->driver_version = -1;
    hip->handle = gpo_dl_open_first(path ? one : sonames, err, sizeof err);
    if (!hip->handle) {
        gpo_snprintf(reason, cap, "the HIP runtime library could not be opened: %s", err);
        return GPO_HIP_NOT_FOUND;
    }
    gpo_dl_path(hip->handle, hip->library, sizeof hip->library);
    if (gpo_dl_resolve(hip->handle, gpo_hip_syms, gpo_hip_n_syms, &hip->fn, missing,
                       sizeof missing) != GPUOPT_OK) {
        gpo_snprintf(reason, cap, "%s is not a usable HIP runtime: it lacks %s", hip->library,
                     missing);
        return GPO_HIP_BROKEN;
    }

    /* The version decides the attribute numbering: first, before any other
     * call (it needs no initialised runtime). */
    int v = -1;
    e = hip->fn.runtime_get_version(&v);
    if (e != GPO_HIP_SUCCESS || v < 0) {
        call_failed(hip, "hipRuntimeGetVersion", e, what, sizeof what);
        gpo_snprintf(reason, cap, "%s: %s%s", hip->library, what,
                     e == GPO_HIP_SUCCESS ? " with a negative version" : "");
        return GPO_HIP_BROKEN;
    }
    hip->runtime_version = v;
    char vt[32];
    gpo_hip_version_text(v, vt, sizeof vt);
    hip->abi = gpo_hip_abi_for(v / 10000000, &hip->abi_extrapolated);
    if (!hip->abi) {
        gpo_snprintf(reason, cap,
                     "%s is HIP %s, older than ROCm 5.0 whose renumbering of "
                     "hipDeviceAttribute_t this library relies on; install ROCm 5 or newer",
                     hip->library, vt);
        return GPO_HIP_TOO_OLD;
    }
    if (hip->fn.driver_get_version) {
        int dv = -1;
        e = hip->fn.driver_get_version(&dv);
        if (e == GPO_HIP_SUCCESS && dv >= 0) {
            hip->driver_version = dv;
        } else {
            call_failed(hip, "hipDriverGetVersion", e, what, sizeof what);
            gpo_snprintf(hip->note, sizeof hip->note, "%s: driver version unknown", what);
        }
    }

    if (hip->fn.init) {
        e = hip->fn.init(0);
        if (e != GPO_HIP_SUCCESS)
            return start_failed(hip, "hipInit", e, vt, reason, cap);
    }
    int count = 0;
    e = hip->fn.get_device_count(&count);
    if (e != GPO_HIP_SUCCESS || count < 0)
        return start_failed(hip, "hipGetDeviceCount", e, vt, reason, cap);
    hip->device_count = count;
    atomic_store(&hip_init_pid, (int)getpid());
    return GPO_HIP_OK;
}

static void note(cJSON *notes, const char *fmt, ...) GPO_PRINTF(2, 3);
static void note(cJSON *notes, const char *fmt, ...)
{
    char text[384];
    va_list ap;
    if (!notes)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    cJSON_AddItemToArray(notes, cJSON_CreateString(text));
}

/* gcnArchName from the props struct of this major, read through the
 * explicitly versioned symbol into a zeroed, oversized buffer. */
static void query_target(const gpo_hip *hip, int ordinal, char *out, size_t cap, cJSON *notes);

void gpo_hip_target(const gpo_hip *hip, int ordinal, char *out, size_t cap)
{
    if (!out || cap == 0)
        return;
    out[0] = '\0';
    if (hip && hip->abi)
        query_target(hip, ordinal, out, cap, NULL);
}

static void query_target(const gpo_hip *hip, int ordinal, char *out, size_t cap, cJSON *notes)
{
    gpo_hip_props_fn fn = NULL;
    char what[320];
    const char *sym = hip->abi->props_symbol;

    out[0] = '\0';
    if (strcmp(sym, "hipGetDevicePropertiesR0600") == 0)
        fn = hip->fn.get_device_properties_r0600;
    else
        fn = hip->fn.get_device_properties;
    if (!fn) {
        note(notes, "%s is missing: the gfx target comes from the KFD topology", sym);
        return;
    }
    unsigned char *buf = calloc(1, GPO_HIP_PROPS_BUFFER);
    if (!buf) {
        note(notes, "out of memory reading %s", sym);
        return;
    }
    gpo_hip_error e = fn(buf, ordinal);
    if (e != GPO_HIP_SUCCESS) {
        call_failed(hip, sym, e, what, sizeof what);
        note(notes, "%s", what);
    } else {
        const char *name = (const char *)buf + hip->abi->props_gcn_arch_name;
        size_t n = strnlen(name, 256);
        if (n == 0 || n == 256 || strncmp(name, "gfx", 3) != 0) {
            note(notes, "%s gave no gfx target at offset %zu", sym, hip->abi->props_gcn_arch_name);
        } else {
            if (n >= cap)
                n = cap - 1;
            memcpy(out, name, n);
            out[n] = '\0';
        }
    }
    free(buf);
}

void gpo_hip_query(const gpo_hip *hip, int ordinal, gpo_hip_device *out, cJSON *notes)
{
    char what[320];
    gpo_hip_error e;

    memset(out, 0, sizeof *out);
    for (int a = 0; a < GPO_HIP_ATTR_COUNT; a++) {
        int id = hip->abi->attr[a];
        int value = -1;
        out->attr[a] = -1;
        if (id < 0)
            continue;
        e = hip->fn.device_get_attribute(&value, id, ordinal);
        if (e == GPO_HIP_SUCCESS) {
            out->attr[a] = value;
        } else if (!(e == GPO_hipErrorInvalidValue && a == GPO_HIP_ATTR_PHYSICAL_MP_COUNT)) {
            /* PhysicalMultiProcessorCount only exists from ROCm 5.2 on;
             * older 5.x runtimes refuse it, which is not worth a note. */
            char call[128];
            gpo_snprintf(call, sizeof call, "hipDeviceGetAttribute(%s = %d)",
                         hip->abi->attr_name[a], id);
            call_failed(hip, call, e, what, sizeof what);
            note(notes, "%s: unknown", what);
        }
    }

    e = hip->fn.device_get_name(out->name, (int)sizeof out->name, ordinal);
    out->name[sizeof out->name - 1] = '\0';
    if (e != GPO_HIP_SUCCESS) {
        out->name[0] = '\0';
        call_failed(hip, "hipDeviceGetName", e, what, sizeof what);
        note(notes, "%s", what);
    }

    size_t bytes = 0;
    e = hip->fn.device_total_mem(&bytes, ordinal);
    if (e == GPO_HIP_SUCCESS) {
        out->total_mem = bytes;
    } else {
        call_failed(hip, "hipDeviceTotalMem", e, what, sizeof what);
        note(notes, "%s", what);
    }

    if (hip->fn.device_get_uuid) {
        gpo_hip_uuid u;
        memset(&u, 0, sizeof u);
        e = hip->fn.device_get_uuid(&u, ordinal);
        if (e == GPO_HIP_SUCCESS) {
            /* 16 hex digits of the KFD unique id; "XX" on parts without. */
            int hex = 1;
            for (int i = 0; i < 16; i++)
                hex &= isxdigit((unsigned char)u.bytes[i]) != 0;
            if (hex) {
                memcpy(out->uuid, "GPU-", 4);
                for (int i = 0; i < 16; i++)
                    out->uuid[4 + i] = (char)tolower((unsigned char)u.bytes[i]);
                out->uuid[20] = '\0';
            }
        } else {
            call_failed(hip, "hipDeviceGetUuid", e, what, sizeof what);
            note(notes, "%s", what);
        }
    }

    query_target(hip, ordinal, out->target, sizeof out->target, notes);
}

gpuopt_status gpo_hip_memory(const gpo_hip *hip, int ordinal, uint64_t *free_bytes,
                             uint64_t *total_bytes)
{
    char what[320];
    gpo_hip_error e;
    int previous = -1;
    size_t f = 0, t = 0;
    gpuopt_status st = GPUOPT_OK;

    if (!hip->fn.mem_get_info || !hip->fn.set_device || !hip->fn.get_device)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "%s lacks hipMemGetInfo, hipSetDevice or hipGetDevice: free memory "
                        "unknown",
                        hip->library);
    if (ordinal < 0 || ordinal >= hip->device_count)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "HIP device %d does not exist (%d devices)",
                        ordinal, hip->device_count);

    /* hipMemGetInfo answers for the calling thread's current device, so the
     * device is made current and the caller's choice restored after. */
    e = hip->fn.get_device(&previous);
    if (e != GPO_HIP_SUCCESS) {
        call_failed(hip, "hipGetDevice", e, what, sizeof what);
        return gpo_fail(GPUOPT_ERR_DRIVER, "free memory of HIP device %d: %s", ordinal, what);
    }
    e = hip->fn.set_device(ordinal);
    if (e != GPO_HIP_SUCCESS) {
        call_failed(hip, "hipSetDevice", e, what, sizeof what);
        return gpo_fail(GPUOPT_ERR_DRIVER, "free memory of HIP device %d: %s", ordinal, what);
    }
    e = hip->fn.mem_get_info(&f, &t);
    if (e != GPO_HIP_SUCCESS) {
        call_failed(hip, "hipMemGetInfo", e, what, sizeof what);
        st = gpo_fail(GPUOPT_ERR_DRIVER, "free memory of HIP device %d: %s", ordinal, what);
    }
    if (previous != ordinal) {
        gpo_hip_error r = hip->fn.set_device(previous);
        if (r != GPO_HIP_SUCCESS && st == GPUOPT_OK) {
            call_failed(hip, "hipSetDevice", r, what, sizeof what);
            st = gpo_fail(GPUOPT_ERR_DRIVER,
                          "free memory of HIP device %d was read, but restoring the thread's "
                          "current device %d failed: %s",
                          ordinal, previous, what);
        }
    }
    if (st == GPUOPT_OK) {
        *free_bytes = f;
        if (total_bytes)
            *total_bytes = t;
        if (previous == ordinal)
            gpo_detail_set("rocm:%d: free memory read with hipMemGetInfo on the thread's current "
                           "device",
                           ordinal);
        else
            gpo_detail_set("rocm:%d: free memory read with hipMemGetInfo, the device made current "
                           "for the call and the thread's device %d given back after it",
                           ordinal, previous);
    }
    return st;
}
