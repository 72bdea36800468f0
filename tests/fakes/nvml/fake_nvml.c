/* A test double of NVML, the NVIDIA driver's libnvidia-ml.so.1: the slice
 * backends/cuda/nvml_api.h declares, answering from the same JSON
 * descriptions of real GPUs the libcuda.so.1 double reads
 * (the JSON files of tests/fakes/cuda/devices: total_memory_bytes, free_memory_bytes,
 * uuid, PCI_DOMAIN_ID / PCI_BUS_ID / PCI_DEVICE_ID), so the two doubles
 * describe one machine. Like the real NVML it ignores CUDA_VISIBLE_DEVICES
 * (it sees every GPU) and needs nvmlInit_v2 before any device call.
 *
 * Configured from the environment, read at every nvmlInit_v2:
 *   GPUOPT_FAKE_NVML_DEVICES  JSON files, ':'-separated; unset or empty: those of
 *                             GPUOPT_FAKE_CUDA_DEVICES
 *   GPUOPT_FAKE_NVML_INIT     nvmlInit_v2's result (a number; 9 is
 *                             NVML_ERROR_DRIVER_NOT_LOADED)
 *   GPUOPT_FAKE_NVML_FAIL     sym:RESULT: every call of sym returns RESULT
 *   GPUOPT_FAKE_NVML_USED     bytes to add to every GPU's used memory (and
 *                             take from its free memory), as another process
 *                             allocating would
 * Calls are counted by name (gpo_fake_nvml_calls). */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/nvml_api.h"

#define MAX_GPUS 16

typedef struct gpu {
    char uuid[96];
    unsigned domain, bus, device;
    unsigned long long total, free_mem;
} gpu;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gpu gpus[MAX_GPUS];
static int n_gpus, inits;
static char fail_sym[64];
static gpo_nvml_return fail_result;
static struct {
    const char *name;
    long n;
} counts[] = {{"nvmlInit_v2", 0},
              {"nvmlShutdown", 0},
              {"nvmlErrorString", 0},
              {"nvmlDeviceGetHandleByUUID", 0},
              {"nvmlDeviceGetHandleByPciBusId_v2", 0},
              {"nvmlDeviceGetMemoryInfo", 0}};

/* Counts the call; 1 with *r set when GPUOPT_FAKE_NVML_FAIL names it. */
static int enter(const char *sym, gpo_nvml_return *r)
{
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (strcmp(counts[i].name, sym) == 0)
            counts[i].n++;
    if (fail_sym[0] && strcmp(fail_sym, sym) == 0) {
        *r = fail_result;
        return 1;
    }
    return 0;
}

static cJSON *read_json(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = NULL;
    cJSON *root = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long len = ftell(f);
        if (len > 0 && fseek(f, 0, SEEK_SET) == 0 && (text = calloc(1, (size_t)len + 1)) &&
            fread(text, 1, (size_t)len, f) == (size_t)len)
            root = cJSON_Parse(text);
    }
    free(text);
    fclose(f);
    return root;
}

static double number(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static void load_gpus(void)
{
    const char *env = getenv("GPUOPT_FAKE_NVML_DEVICES");
    if (!env || !*env)
        env = getenv("GPUOPT_FAKE_CUDA_DEVICES");
    const char *extra = getenv("GPUOPT_FAKE_NVML_USED");
    unsigned long long used = extra ? strtoull(extra, NULL, 10) : 0;
    char buf[8192], *save = NULL;
    n_gpus = 0;
    snprintf(buf, sizeof buf, "%s", env ? env : "");
    for (char *p = strtok_r(buf, ":", &save); p && n_gpus < MAX_GPUS;
         p = strtok_r(NULL, ":", &save)) {
        cJSON *root = read_json(p);
        const cJSON *uuid = cJSON_GetObjectItemCaseSensitive(root, "uuid");
        const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(root, "attributes");
        if (cJSON_IsString(uuid)) {
            gpu *g = &gpus[n_gpus++];
            snprintf(g->uuid, sizeof g->uuid, "%s", uuid->valuestring);
            g->total = (unsigned long long)number(root, "total_memory_bytes");
            const cJSON *fm = cJSON_GetObjectItemCaseSensitive(root, "free_memory_bytes");
            g->free_mem = cJSON_IsNumber(fm) ? (unsigned long long)fm->valuedouble : g->total;
            g->free_mem = g->free_mem > used ? g->free_mem - used : 0;
            g->domain = (unsigned)number(attrs, "PCI_DOMAIN_ID");
            g->bus = (unsigned)number(attrs, "PCI_BUS_ID");
            g->device = (unsigned)number(attrs, "PCI_DEVICE_ID");
        }
        cJSON_Delete(root);
    }
    const char *f = getenv("GPUOPT_FAKE_NVML_FAIL");
    fail_sym[0] = '\0';
    if (f && strchr(f, ':')) {
        snprintf(fail_sym, sizeof fail_sym, "%.*s", (int)(strchr(f, ':') - f), f);
        fail_result = atoi(strchr(f, ':') + 1);
    }
}

gpo_nvml_return nvmlInit_v2(void)
{
    gpo_nvml_return r = GPO_NVML_SUCCESS;
    pthread_mutex_lock(&lock);
    load_gpus();
    const char *init = getenv("GPUOPT_FAKE_NVML_INIT");
    if (!enter("nvmlInit_v2", &r) && init && *init)
        r = atoi(init);
    if (r == GPO_NVML_SUCCESS)
        inits++;
    pthread_mutex_unlock(&lock);
    return r;
}

gpo_nvml_return nvmlShutdown(void)
{
    gpo_nvml_return r = GPO_NVML_SUCCESS;
    pthread_mutex_lock(&lock);
    if (!enter("nvmlShutdown", &r))
        r = inits > 0 ? (inits--, GPO_NVML_SUCCESS) : GPO_NVML_ERROR_UNINITIALIZED;
    pthread_mutex_unlock(&lock);
    return r;
}

const char *nvmlErrorString(gpo_nvml_return result)
{
    gpo_nvml_return ignored;
    pthread_mutex_lock(&lock);
    enter("nvmlErrorString", &ignored);
    pthread_mutex_unlock(&lock);
    switch (result) {
    case GPO_NVML_SUCCESS: return "Success";
    case GPO_NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case GPO_NVML_ERROR_NOT_FOUND: return "Not Found";
    case GPO_NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case GPO_NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    default: return "Unknown Error";
    }
}

/* Handles are 1-based indices into gpus[]. */
static gpo_nvml_device handle_of(int i)
{
    return (gpo_nvml_device)(gpus + i);
}

gpo_nvml_return nvmlDeviceGetHandleByUUID(const char *uuid, gpo_nvml_device *device)
{
    gpo_nvml_return r = GPO_NVML_ERROR_NOT_FOUND;
    pthread_mutex_lock(&lock);
    if (enter("nvmlDeviceGetHandleByUUID", &r))
        goto out;
    if (!inits) {
        r = GPO_NVML_ERROR_UNINITIALIZED;
        goto out;
    }
    if (!uuid || !device) {
        r = GPO_NVML_ERROR_INVALID_ARGUMENT;
        goto out;
    }
    r = GPO_NVML_ERROR_NOT_FOUND;
    for (int i = 0; i < n_gpus; i++)
        if (strcmp(gpus[i].uuid, uuid) == 0) {
            *device = handle_of(i);
            r = GPO_NVML_SUCCESS;
        }
out:
    pthread_mutex_unlock(&lock);
    return r;
}

/* nvml.h: "domain:bus:device.function" or "bus:device.function", in hex. */
gpo_nvml_return nvmlDeviceGetHandleByPciBusId_v2(const char *pci, gpo_nvml_device *device)
{
    gpo_nvml_return r = GPO_NVML_ERROR_NOT_FOUND;
    unsigned d = 0, b, dev, fn;
    pthread_mutex_lock(&lock);
    if (enter("nvmlDeviceGetHandleByPciBusId_v2", &r))
        goto out;
    if (!inits) {
        r = GPO_NVML_ERROR_UNINITIALIZED;
        goto out;
    }
    if (!pci || !device ||
        (sscanf(pci, "%x:%x:%x.%x", &d, &b, &dev, &fn) != 4 &&
         (d = 0, sscanf(pci, "%x:%x.%x", &b, &dev, &fn) != 3))) {
        r = GPO_NVML_ERROR_INVALID_ARGUMENT;
        goto out;
    }
    r = GPO_NVML_ERROR_NOT_FOUND;
    for (int i = 0; i < n_gpus; i++)
        if (gpus[i].domain == d && gpus[i].bus == b && gpus[i].device == dev) {
            *device = handle_of(i);
            r = GPO_NVML_SUCCESS;
        }
out:
    pthread_mutex_unlock(&lock);
    return r;
}

gpo_nvml_return nvmlDeviceGetMemoryInfo(gpo_nvml_device device, gpo_nvml_memory *memory)
{
    gpo_nvml_return r = GPO_NVML_SUCCESS;
    pthread_mutex_lock(&lock);
    if (enter("nvmlDeviceGetMemoryInfo", &r))
        goto out;
    const gpu *g = (const gpu *)device;
    if (!inits)
        r = GPO_NVML_ERROR_UNINITIALIZED;
    else if (!memory || g < gpus || g >= gpus + n_gpus)
        r = GPO_NVML_ERROR_INVALID_ARGUMENT;
    else
        *memory = (gpo_nvml_memory){g->total, g->free_mem, g->total - g->free_mem};
out:
    pthread_mutex_unlock(&lock);
    return r;
}

/* ---- controls for tests ---------------------------------------------------- */

long gpo_fake_nvml_calls(const char *sym)
{
    long n = 0;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (strcmp(counts[i].name, sym) == 0)
            n = counts[i].n;
    pthread_mutex_unlock(&lock);
    return n;
}

/* Inits not yet balanced by a shutdown. */
int gpo_fake_nvml_live_inits(void)
{
    pthread_mutex_lock(&lock);
    int n = inits;
    pthread_mutex_unlock(&lock);
    return n;
}

void gpo_fake_nvml_reset(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        counts[i].n = 0;
    inits = 0;
    pthread_mutex_unlock(&lock);
}
