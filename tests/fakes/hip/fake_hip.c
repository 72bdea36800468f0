/* A test double of AMD's HIP runtime (libamdhip64), built once per HIP major
 * (FAKE_HIP_MAJOR = 5, 6 or 7) with that major's attribute numbering and
 * hipDeviceProp_t layout, so the backend's per-major tables are exercised
 * against an independent copy of the numbers. It implements the slice the
 * ROCm backend calls and behaves as the real runtime does where that
 * matters:
 *   - no device: hipInit returns hipErrorInvalidDevice and hipGetDeviceCount
 *     hipErrorNoDevice with a count of 0 (Debian libamdhip64 5.2 without
 *     /dev/kfd, observed);
 *   - hipDeviceGetAttribute has no case for the gcnArchName / name / uuid
 *     ids (clr hipamd/src/hip_device_runtime.cpp): hipErrorInvalidValue;
 *     ROCm 6 retired those ids ("Unused1..5");
 *   - the unversioned hipGetDeviceProperties fills the ROCm 5 layout in
 *     every flavour (ROCm/clr#151); hipGetDevicePropertiesR0600 (6 and 7
 *     only) fills the 1472-byte layout;
 *   - on gfx10 and later the multiprocessor count is the number of WGPs
 *     (CUs / 2) unless GPU_ENABLE_WGP_MODE=0 (clr rocdevice.cpp);
 *   - HIP_VISIBLE_DEVICES (indexes only) filters and reorders devices;
 *   - hipGetErrorString returns the name in the 5.x flavour (as 5.2 does)
 *     and a sentence in 6.x and 7.x.
 *
 * Environment (read on first use and by gpuoptFakeHipReset):
 *   GPUOPT_FAKE_HIP_DEVICES  ':'-separated JSON files, one GPU each
 *                            (tests/fakes/hip/devices/)
 *   GPUOPT_FAKE_HIP_FAIL     "call:N:error[,call:N:error...]": the N-th use
 *                            (1-based; "*" = every use) of `call` fails with
 *                            `error` (a hipError name or number); calls
 *                            returning text return NULL instead
 *   GPUOPT_FAKE_HIP_VERSION  the number hipRuntimeGetVersion returns
 *   GPUOPT_FAKE_HIP_LAUNCH_NS, GPUOPT_FAKE_HIP_FAULT: launches that run or
 *                            fault (fake_hip_rt.c)
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAKE_HIP_MAJOR
#error "build with -DFAKE_HIP_MAJOR=5, 6 or 7"
#endif

#include "fake_hip.h"

typedef struct {
    char bytes[16];
} hipUUID;

enum field {
    F_ECC,
    F_CLOCK_KHZ,
    F_INTEGRATED,
    F_L2,
    F_CC_MAJOR,
    F_MANAGED,
    F_MAX_THREADS,
    F_BUS_WIDTH,
    F_MEM_CLOCK_KHZ,
    F_CC_MINOR,
    F_MP_COUNT,
    F_PCI_BUS,
    F_PCI_DEVICE,
    F_PCI_DOMAIN,
    F_LDS_BLOCK,
    F_UNIFIED,
    F_WARP,
    F_LDS_CU,
    F_LARGE_BAR,
    F_ASIC_REV,
    F_PHYS_MP,
    F_XCC
};

/* hipDeviceAttribute_t ids answered, per major (from that major's
 * hip_runtime_api.h; an independent copy of backends/rocm/hip_api.h). */
static const struct {
    int id;
    enum field field;
} attrs[] = {
    {0, F_ECC},           {5, F_CLOCK_KHZ},    {16, F_INTEGRATED},
    {19, F_L2},           {23, F_CC_MAJOR},    {24, F_MANAGED},
    {56, F_MAX_THREADS},  {59, F_BUS_WIDTH},   {60, F_MEM_CLOCK_KHZ},
    {61, F_CC_MINOR},     {63, F_MP_COUNT},    {67, F_PCI_BUS},
    {68, F_PCI_DEVICE},   {69, F_PCI_DOMAIN},  {74, F_LDS_BLOCK},
    {85, F_UNIFIED},      {87, F_WARP},        {10002, F_LDS_CU},
    {10011, F_LARGE_BAR}, {10012, F_ASIC_REV}, {10015, F_PHYS_MP},
#if FAKE_HIP_MAJOR >= 7
    {10018, F_XCC},
#endif
};
#define N_ATTRS (sizeof attrs / sizeof attrs[0])

#if FAKE_HIP_MAJOR == 5
#define RUNTIME_VERSION 50731921 /* 5.7.31921 */
#elif FAKE_HIP_MAJOR == 6
#define RUNTIME_VERSION 60241133 /* 6.2.41133 */
#else
#define RUNTIME_VERSION 70051831 /* 7.0.51831 */
#endif

/* hipDeviceProp_t layouts: R0000 (ROCm 5, and the legacy symbol of 6+) and
 * R0600. Offsets from the headers (name at 0 in both). */
#define R0000_SIZE 792
#define R0000_TOTAL_GLOBAL_MEM 256
#define R0000_MP_COUNT 336
#define R0000_GCN_ARCH_NAME 396
#define R0600_SIZE 1472
#define R0600_TOTAL_GLOBAL_MEM 288
#define R0600_MP_COUNT 388
#define R0600_GCN_ARCH_NAME 1160

typedef struct device {
    char name[256];
    char arch[256];
    int value[F_XCC + 1];
    long long memory, free_memory;
    char unique_id[17]; /* "" for parts without one */
} device;

static device devs[64];
static int n_devs;
/* Aligned beyond malloc's 16 bytes so glibc places this dlopen'd module's
 * TLS block at a 64-byte boundary: LeakSanitizer (GCC 12) guesses the size
 * of a dynamic TLS block it did not see memaligned from a header it expects
 * 16 bytes into a page, and when malloc happened to return such an address
 * it read garbage and crashed at exit (sanitizer_tls_get_addr.cpp,
 * DTLS_on_tls_get_addr); a 64-byte aligned block is never there. */
static _Alignas(64) _Thread_local int current;

static long get_int(const cJSON *o, const char *key, long fallback)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? (long)v->valuedouble : fallback;
}

static void load_device(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    cJSON *j = NULL;
    long len;
    if (!f)
        return;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = calloc(1, (size_t)len + 1)) && fread(text, 1, (size_t)len, f) == (size_t)len)
        j = cJSON_Parse(text);
    fclose(f);
    free(text);
    if (!j || n_devs >= 64) {
        cJSON_Delete(j);
        return;
    }
    device *d = &devs[n_devs++];
    memset(d, 0, sizeof *d);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "name");
    snprintf(d->name, sizeof d->name, "%s", cJSON_IsString(s) ? s->valuestring : "");
    s = cJSON_GetObjectItemCaseSensitive(j, "gcnArchName");
    snprintf(d->arch, sizeof d->arch, "%s", cJSON_IsString(s) ? s->valuestring : "");
    s = cJSON_GetObjectItemCaseSensitive(j, "uniqueId");
    snprintf(d->unique_id, sizeof d->unique_id, "%s", cJSON_IsString(s) ? s->valuestring : "");
    const cJSON *pci = cJSON_GetObjectItemCaseSensitive(j, "pci");
    long cus = get_int(j, "computeUnits", 0);
    int major = 0, minor = 0;
    const char *a = d->arch + 3;
    size_t digits = strcspn(a, ":");
    if (digits >= 3) {
        for (size_t i = 0; i + 2 < digits; i++)
            major = major * 10 + (a[i] - '0');
        minor = isdigit((unsigned char)a[digits - 2]) ? a[digits - 2] - '0' : 10;
    }
    long mp = cus;
    const char *wgp = getenv("GPU_ENABLE_WGP_MODE");
    if (major >= 10 && !(wgp && strcmp(wgp, "0") == 0))
        mp = cus / 2;
    d->value[F_ECC] = (int)get_int(j, "ecc", 0);
    d->value[F_CLOCK_KHZ] = (int)get_int(j, "maxClockMHz", 0) * 1000;
    d->value[F_INTEGRATED] = (int)get_int(j, "integrated", 0);
    d->value[F_L2] = (int)get_int(j, "l2CacheBytes", 0);
    d->value[F_CC_MAJOR] = major;
    d->value[F_CC_MINOR] = minor;
    d->value[F_MANAGED] = 1;
    d->value[F_MAX_THREADS] = (int)get_int(j, "maxThreadsPerBlock", 1024);
    d->value[F_BUS_WIDTH] = (int)get_int(j, "memoryBusWidth", 0);
    d->value[F_MEM_CLOCK_KHZ] = (int)get_int(j, "memoryClockMHz", 0) * 1000;
    d->value[F_MP_COUNT] = (int)mp;
    d->value[F_PHYS_MP] = (int)mp;
    d->value[F_PCI_BUS] = (int)get_int(pci, "bus", 0);
    d->value[F_PCI_DEVICE] = (int)get_int(pci, "device", 0);
    d->value[F_PCI_DOMAIN] = (int)get_int(pci, "domain", 0);
    d->value[F_LDS_BLOCK] = (int)get_int(j, "ldsBytesPerBlock", 65536);
    d->value[F_LDS_CU] = (int)get_int(j, "ldsBytesPerCU", 65536);
    d->value[F_UNIFIED] = 1; /* "HIP runtime always uses SVM" (clr) */
    d->value[F_WARP] = (int)get_int(j, "wavefrontSize", 64);
    d->value[F_LARGE_BAR] = (int)get_int(j, "largeBar", 1);
    d->value[F_ASIC_REV] = (int)get_int(j, "asicRevision", 0);
    d->value[F_XCC] = (int)get_int(j, "xcc", 1);
    d->memory = get_int(j, "memoryBytes", 0);
    d->free_memory = get_int(j, "freeBytes", d->memory);
    cJSON_Delete(j);
}

static void load_all(void)
{
    const char *list = getenv("GPUOPT_FAKE_HIP_DEVICES");
    device all[64];
    int n_all;

    n_devs = 0;
    fake_faults_load();
    fake_rt_reset();
    if (list) {
        char buf[8192];
        snprintf(buf, sizeof buf, "%s", list);
        for (char *save = NULL, *p = strtok_r(buf, ":", &save); p; p = strtok_r(NULL, ":", &save))
            load_device(p);
    }
    /* HIP_VISIBLE_DEVICES: indexes, first invalid one ends the list, a
     * repeated one is skipped (clr rocdevice.cpp, Device::init). */
    const char *vis = getenv("HIP_VISIBLE_DEVICES");
    if (vis && *vis) {
        memcpy(all, devs, sizeof devs);
        n_all = n_devs;
        n_devs = 0;
        char buf[256];
        int used[64] = {0};
        snprintf(buf, sizeof buf, "%s", vis);
        for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
            char *end;
            long i = strtol(p, &end, 10);
            if (*end || i < 0 || i >= n_all)
                break;
            if (used[i])
                continue;
            used[i] = 1;
            devs[n_devs++] = all[i];
        }
    }
}

void fake_on_first_use(void)
{
    load_all();
}

/* ---- test controls ---------------------------------------------------------- */

#ifdef FAKE_HIPRTC_MAJOR
void fake_hiprtc_reset(void);
#endif

EXPORT int gpuoptFakeHipReset(void)
{
    load_all();
#ifdef FAKE_HIPRTC_MAJOR
    fake_hiprtc_reset();
#endif
    current = 0;
    return n_devs;
}

EXPORT int gpuoptFakeHipFaultsFired(void)
{
    return fake_faults_fired();
}

EXPORT long gpuoptFakeHipUses(const char *call)
{
    return fake_uses(call);
}

/* Emulated objects (memory, modules, events, pinned memory) still alive. */
EXPORT int gpuoptFakeHipLive(void)
{
    return fake_rt_live();
}

#ifdef FAKE_HIPRTC_MAJOR
/* hiprtc programs created and not destroyed (ROCm 5 and 6 flavours, whose
 * runtime exports hiprtc). */
int fake_hiprtc_live(void);
EXPORT int gpuoptFakeHiprtcLive(void)
{
    return fake_hiprtc_live();
}
#endif

/* ---- for fake_hip_rt.c ------------------------------------------------------------ */

int fake_device_count(void)
{
    return n_devs;
}

int fake_current_device(void)
{
    return current;
}

const char *fake_device_arch(int device)
{
    return device >= 0 && device < n_devs ? devs[device].arch : "";
}

int fake_device_max_threads(int device)
{
    return device >= 0 && device < n_devs ? devs[device].value[F_MAX_THREADS] : 0;
}

long long fake_device_free_memory(int device)
{
    return device >= 0 && device < n_devs ? devs[device].free_memory : 0;
}

/* ---- the HIP slice -------------------------------------------------------------- */

EXPORT hipError_t hipRuntimeGetVersion(int *v)
{
    ENTER("hipRuntimeGetVersion");
    if (!v)
        return 1;
    const char *o = getenv("GPUOPT_FAKE_HIP_VERSION");
    *v = o && *o ? atoi(o) : RUNTIME_VERSION;
    return 0;
}

EXPORT hipError_t hipDriverGetVersion(int *v)
{
    ENTER("hipDriverGetVersion");
    if (!v)
        return 1;
    *v = RUNTIME_VERSION;
    return 0;
}

EXPORT hipError_t hipInit(unsigned int flags)
{
    ENTER("hipInit");
    if (flags != 0)
        return 1;
    return n_devs ? 0 : 101;
}

EXPORT hipError_t hipGetDeviceCount(int *count)
{
    ENTER("hipGetDeviceCount");
    if (!count)
        return 1;
    *count = n_devs;
    return n_devs ? 0 : 100;
}

EXPORT hipError_t hipDeviceGetAttribute(int *pi, int attr, int device)
{
    ENTER("hipDeviceGetAttribute");
    if (!pi)
        return 1;
    if (device < 0 || device >= n_devs)
        return 101;
    for (size_t i = 0; i < N_ATTRS; i++)
        if (attrs[i].id == attr) {
            *pi = devs[device].value[attrs[i].field];
            return 0;
        }
    return 1;
}

EXPORT hipError_t hipDeviceGetName(char *name, int len, int device)
{
    ENTER("hipDeviceGetName");
    if (!name || len <= 0)
        return 1;
    if (device < 0 || device >= n_devs)
        return 101;
    snprintf(name, (size_t)len, "%s", devs[device].name);
    return 0;
}

EXPORT hipError_t hipDeviceGetUuid(hipUUID *uuid, int device)
{
    ENTER("hipDeviceGetUuid");
    if (!uuid)
        return 1;
    if (device < 0 || device >= n_devs)
        return 101;
    memset(uuid->bytes, 0, sizeof uuid->bytes);
    if (devs[device].unique_id[0])
        memcpy(uuid->bytes, devs[device].unique_id, 16);
    else
        memcpy(uuid->bytes, "XX", 2); /* ROCr's "GPU-XX" without its prefix */
    return 0;
}

EXPORT hipError_t hipDeviceTotalMem(size_t *bytes, int device)
{
    ENTER("hipDeviceTotalMem");
    if (!bytes)
        return 1;
    if (device < 0 || device >= n_devs)
        return 101;
    *bytes = (size_t)devs[device].memory;
    return 0;
}

static void fill_props(unsigned char *p, size_t size, size_t mem, size_t mp, size_t arch,
                       int ordinal)
{
    const device *d = &devs[ordinal];
    size_t total = (size_t)d->memory;
    memset(p, 0, size);
    memcpy(p, d->name, strlen(d->name) + 1);
    memcpy(p + mem, &total, sizeof total);
    memcpy(p + mp, &d->value[F_MP_COUNT], sizeof(int));
    memcpy(p + arch, d->arch, strlen(d->arch) + 1);
}

/* The legacy symbol: the ROCm 5 layout in every major. */
EXPORT hipError_t hipGetDeviceProperties(void *props, int device)
{
    ENTER("hipGetDeviceProperties");
    if (!props)
        return 1;
    if (device < 0 || device >= n_devs)
        return 101;
    fill_props(props, R0000_SIZE, R0000_TOTAL_GLOBAL_MEM, R0000_MP_COUNT, R0000_GCN_ARCH_NAME,
               device);
    return 0;
}

#if FAKE_HIP_MAJOR >= 6
EXPORT hipError_t hipGetDevicePropertiesR0000(void *props, int device)
{
    ENTER("hipGetDevicePropertiesR0000");
    if (!props)
        return 1;
    if (device < 0 || device >= n_devs)
        return 101;
    fill_props(props, R0000_SIZE, R0000_TOTAL_GLOBAL_MEM, R0000_MP_COUNT, R0000_GCN_ARCH_NAME,
               device);
    return 0;
}

EXPORT hipError_t hipGetDevicePropertiesR0600(void *props, int device)
{
    ENTER("hipGetDevicePropertiesR0600");
    if (!props)
        return 1;
    if (device < 0 || device >= n_devs)
        return 101;
    fill_props(props, R0600_SIZE, R0600_TOTAL_GLOBAL_MEM, R0600_MP_COUNT, R0600_GCN_ARCH_NAME,
               device);
    return 0;
}
#endif

EXPORT hipError_t hipGetDevice(int *device)
{
    ENTER("hipGetDevice");
    if (!device)
        return 1;
    *device = current;
    return 0;
}

EXPORT hipError_t hipSetDevice(int device)
{
    ENTER("hipSetDevice");
    if (device < 0 || device >= n_devs)
        return 101;
    current = device;
    return 0;
}

EXPORT hipError_t hipMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    ENTER("hipMemGetInfo");
    if (!free_bytes || !total_bytes)
        return 1;
    if (current >= n_devs)
        return 101;
    *free_bytes = (size_t)devs[current].free_memory;
    *total_bytes = (size_t)devs[current].memory;
    return 0;
}

EXPORT const char *hipGetErrorName(hipError_t e)
{
    if (fake_enter("hipGetErrorName"))
        return NULL;
    const char *name = fake_error_name(e);
    return name ? name : "hipErrorUnknown";
}

EXPORT const char *hipGetErrorString(hipError_t e)
{
    if (fake_enter("hipGetErrorString"))
        return NULL;
    const char *name = fake_error_name(e);
    if (FAKE_HIP_MAJOR == 5)
        return name ? name : "hipErrorUnknown";
    const char *text = fake_error_text(e);
    return text ? text : "unknown error";
}
