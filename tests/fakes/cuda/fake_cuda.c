/* A test double of the NVIDIA driver's libcuda.so.1: the slice of the driver
 * API that backends/cuda calls, answering from JSON descriptions of real
 * GPUs (the files in devices/), with the real driver's habits where tests depend on
 * them (calls before cuInit fail with CUDA_ERROR_NOT_INITIALIZED, cuInit
 * fails in a fork()ed child of a process that initialised it, cuMemGetInfo
 * needs a current context, primary contexts are reference-counted, a
 * context's limits die with it).
 *
 * Configured from the environment, read on first use and again by
 * gpo_fake_cuda_reset():
 *   GPUOPT_FAKE_CUDA_DEVICES         JSON files, ':'-separated; none: no device.
 *                                    FILE@BB puts that board at PCI bus 0xBB
 *                                    (and makes its UUID's last byte BB), so
 *                                    one description fills a multi-GPU node
 *   GPUOPT_FAKE_CUDA_INIT            cuInit's result, a name or a number
 *   GPUOPT_FAKE_CUDA_DRIVER_VERSION  cuDriverGetVersion's answer (13000)
 *   GPUOPT_FAKE_CUDA_FAIL            sym:N:RESULT[,...]: the Nth call (from 1,
 *                                    or '*' for every call) of sym returns RESULT
 *   GPUOPT_FAKE_CUDA_LAUNCH_NS       launches run (doing nothing) and take this
 *                                    many ns of the virtual clock (0, nan: the
 *                                    readings a timer must refuse); unset: every
 *                                    launch is refused with NOT_SUPPORTED
 *   GPUOPT_FAKE_CUDA_FAULT           N:RESULT: launches run, and the Nth faults
 *                                    with RESULT as a real kernel does: the
 *                                    launch succeeds, the next call that waits
 *                                    for the device returns RESULT, and so does
 *                                    every call doing device work from then on
 *                                    (a sticky error; only a reset clears it)
 *   CUDA_VISIBLE_DEVICES             as the driver reads it: indices or UUIDs
 *                                    (whole or a unique prefix), the listed
 *                                    devices in that order, up to the first
 *                                    entry that names none; "" hides all
 * Every call is recorded in order, with the stream of the calls that take
 * one (gpo_fake_cuda_trace), so tests can tell which stream work went to
 * and what waited before what.
 * Which symbols are exported is the linker map's business (full.map,
 * legacy.map, broken.map), so one source builds every flavour. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_cuda.h"

#define FAKE_STACK 16

/* What a call does, for the double's sticky faults: QUERY calls do no
 * device work (device queries, error names, context bookkeeping) and keep
 * answering after a fault, as a driver whose context is poisoned still
 * does while the process lives on; WORK calls return the fault; WAITS
 * calls wait for the device (cuMemFree and module loads synchronise too),
 * so a pending fault shows there first. */
enum { QUERY, WORK, WAITS };

/* Every symbol the fake implements, so calls are counted by name. */
static const struct {
    const char *name;
    int kind;
} fake_syms[] = {
    {"cuInit", QUERY},
    {"cuDriverGetVersion", QUERY},
    {"cuDeviceGetCount", QUERY},
    {"cuDeviceGet", QUERY},
    {"cuDeviceGetName", QUERY},
    {"cuDeviceGetAttribute", QUERY},
    {"cuDeviceTotalMem", QUERY},
    {"cuDeviceTotalMem_v2", QUERY},
    {"cuDeviceGetUuid", QUERY},
    {"cuDeviceGetUuid_v2", QUERY},
    {"cuGetErrorName", QUERY},
    {"cuGetErrorString", QUERY},
    {"cuDevicePrimaryCtxRetain", QUERY},
    {"cuDevicePrimaryCtxRelease", QUERY},
    {"cuDevicePrimaryCtxRelease_v2", QUERY},
    {"cuDevicePrimaryCtxGetState", QUERY},
    {"cuCtxPushCurrent", QUERY},
    {"cuCtxPushCurrent_v2", QUERY},
    {"cuCtxPopCurrent", QUERY},
    {"cuCtxPopCurrent_v2", QUERY},
    {"cuMemGetInfo", WORK},
    {"cuMemGetInfo_v2", WORK},
    {"cuCtxGetCurrent", QUERY},
    {"cuCtxGetDevice", QUERY},
    {"cuCtxSetLimit", WORK},
    {"cuCtxGetLimit", WORK},
    /* the runtime half, fake_cuda_rt.c */
    {"cuCtxSynchronize", WAITS},
    {"cuStreamCreate", WORK},
    {"cuStreamDestroy_v2", WORK},
    {"cuStreamSynchronize", WAITS},
    {"cuMemAlloc_v2", WORK},
    {"cuMemFree_v2", WAITS},
    {"cuMemcpyHtoD_v2", WORK},
    {"cuMemcpyDtoH_v2", WORK},
    {"cuMemcpyDtoD_v2", WORK},
    {"cuMemcpyHtoDAsync_v2", WORK},
    {"cuMemcpyDtoHAsync_v2", WORK},
    {"cuMemcpyDtoDAsync_v2", WORK},
    {"cuMemAllocHost_v2", WORK},
    {"cuMemFreeHost", WORK},
    {"cuModuleLoadData", WAITS},
    {"cuModuleUnload", WAITS},
    {"cuModuleGetFunction", WORK},
    {"cuFuncGetAttribute", WORK},
    {"cuFuncSetAttribute", WORK},
    {"cuFuncGetParamInfo", WORK},
    {"cuLaunchKernel", WORK},
    {"cuEventCreate", WORK},
    {"cuEventDestroy_v2", WORK},
    {"cuEventRecord", WORK},
    {"cuEventSynchronize", WAITS},
    {"cuEventElapsedTime_v2", WORK},
    {"cuEventElapsedTime", WORK},
};
#define N_SYMS (sizeof fake_syms / sizeof fake_syms[0])

#define TRACE_MAX 16384
typedef struct trace_entry {
    short sym; /* index into fake_syms */
    short has_stream;
    const void *stream;
} trace_entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int configured;
static fake_config cfg;
static long calls[N_SYMS];
static int initialised;
static pid_t init_pid;
static int contexts_created;
static gpo_cu_result pending_fault, sticky_fault;
static trace_entry trace[TRACE_MAX];
static long trace_len;

static _Thread_local fake_device *stack[FAKE_STACK];
static _Thread_local int depth;

/* Reads the environment and starts afresh; called with the lock held. */
static void configure(void)
{
    fake_rt_reset();
    fake_config_read(&cfg);
    initialised = 0;
    init_pid = 0;
    contexts_created = 0;
    pending_fault = sticky_fault = GPO_CUDA_SUCCESS;
    trace_len = 0;
    memset(calls, 0, sizeof calls);
    if (cfg.error[0])
        fprintf(stderr, "fake libcuda: %s\n", cfg.error);
    configured = 1;
}

/* Counts the call, traces it and applies fault rules and a sticky fault: 1
 * with *r set when the call must fail. A broken configuration fails every
 * call. */
int fake_enter(const char *sym, int has_stream, const void *stream, gpo_cu_result *r)
{
    int fail = 0;
    pthread_mutex_lock(&lock);
    if (!configured)
        configure();
    for (size_t i = 0; i < N_SYMS; i++) {
        if (strcmp(fake_syms[i].name, sym) != 0)
            continue;
        if (pending_fault && fake_syms[i].kind == WAITS) {
            sticky_fault = pending_fault;
            pending_fault = GPO_CUDA_SUCCESS;
        }
        if (sticky_fault && fake_syms[i].kind != QUERY) {
            *r = sticky_fault;
            fail = 1;
        }
        if (trace_len < TRACE_MAX)
            trace[trace_len++] = (trace_entry){(short)i, (short)has_stream, stream};
        long n = ++calls[i];
        for (int k = 0; k < cfg.n_rules; k++)
            if (strcmp(cfg.rules[k].sym, sym) == 0 &&
                (cfg.rules[k].nth == 0 || cfg.rules[k].nth == n)) {
                *r = cfg.rules[k].result;
                fail = 1;
            }
    }
    if (cfg.error[0]) {
        *r = GPO_CUDA_ERROR_UNKNOWN;
        fail = 1;
    }
    pthread_mutex_unlock(&lock);
    return fail;
}

#define ENTER(sym) FAKE_ENTER(sym)
#define NEED_INIT() FAKE_NEED_INIT()

const fake_config *fake_cfg(void)
{
    return &cfg;
}

void fake_fault_pending(gpo_cu_result r)
{
    pthread_mutex_lock(&lock);
    if (!sticky_fault)
        pending_fault = r;
    pthread_mutex_unlock(&lock);
}

int fake_initialised(void)
{
    return initialised;
}

fake_device *fake_current(void)
{
    return depth ? stack[depth - 1] : NULL;
}

fake_device *fake_device_at(int index)
{
    return index >= 0 && index < cfg.n_devices ? &cfg.devices[index] : NULL;
}

void fake_lock(void)
{
    pthread_mutex_lock(&lock);
}

void fake_unlock(void)
{
    pthread_mutex_unlock(&lock);
}

#define DEVICE(d, dev)                                                                             \
    do {                                                                                           \
        if ((dev) < 0 || (dev) >= cfg.n_devices)                                                   \
            return GPO_CUDA_ERROR_INVALID_DEVICE;                                                  \
        (d) = &cfg.devices[(dev)];                                                                 \
    } while (0)

/* ---- The driver API slice ------------------------------------------------ */

gpo_cu_result cuInit(unsigned int flags)
{
    ENTER("cuInit");
    if (flags != 0)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    /* NVIDIA's driver refuses a child of a process that initialised it. */
    if (initialised && init_pid != getpid())
        return GPO_CUDA_ERROR_NOT_INITIALIZED;
    if (cfg.init_result != GPO_CUDA_SUCCESS)
        return cfg.init_result;
    if (!initialised) {
        initialised = 1;
        init_pid = getpid();
    }
    return GPO_CUDA_SUCCESS;
}

gpo_cu_result cuDriverGetVersion(int *version)
{
    ENTER("cuDriverGetVersion");
    if (!version)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    *version = cfg.driver_version;
    return GPO_CUDA_SUCCESS;
}

/* The driver's private table of internal entry points, which NVRTC 13
 * looks up in whatever libcuda.so.1 the process already has and calls
 * without checking (a segfault inside nvrtcCompileProgram when the symbol
 * is missing). The double has no such tables. */
gpo_cu_result cuGetExportTable(const void **table, const void *id)
{
    (void)id;
    if (table)
        *table = NULL;
    return GPO_CUDA_ERROR_NOT_SUPPORTED;
}

gpo_cu_result cuDeviceGetCount(int *count)
{
    ENTER("cuDeviceGetCount");
    NEED_INIT();
    if (!count)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    *count = cfg.n_devices;
    return GPO_CUDA_SUCCESS;
}

gpo_cu_result cuDeviceGet(gpo_cu_device *device, int ordinal)
{
    ENTER("cuDeviceGet");
    NEED_INIT();
    if (!device)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    if (ordinal < 0 || ordinal >= cfg.n_devices)
        return GPO_CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return GPO_CUDA_SUCCESS;
}

gpo_cu_result cuDeviceGetName(char *name, int len, gpo_cu_device dev)
{
    fake_device *d;
    ENTER("cuDeviceGetName");
    NEED_INIT();
    if (!name || len <= 0)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    DEVICE(d, dev);
    snprintf(name, (size_t)len, "%s", d->name);
    return GPO_CUDA_SUCCESS;
}

gpo_cu_result cuDeviceGetAttribute(int *value, gpo_cu_device_attribute attrib, gpo_cu_device dev)
{
    fake_device *d;
    ENTER("cuDeviceGetAttribute");
    NEED_INIT();
    if (!value)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    DEVICE(d, dev);
    /* An attribute the description leaves out answers like an older driver
     * that does not know it. */
    if (attrib < 0 || attrib >= (int)(sizeof d->attrs / sizeof d->attrs[0]) ||
        !d->attrs_set[attrib])
        return GPO_CUDA_ERROR_INVALID_VALUE;
    *value = d->attrs[attrib];
    return GPO_CUDA_SUCCESS;
}

gpo_cu_result cuDeviceTotalMem_v2(size_t *bytes, gpo_cu_device dev)
{
    fake_device *d;
    ENTER("cuDeviceTotalMem_v2");
    NEED_INIT();
    if (!bytes)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    DEVICE(d, dev);
    *bytes = d->total;
    return GPO_CUDA_SUCCESS;
}

/* The legacy ABI: 32-bit sizes, as before CUDA 3.2. A backend resolving the
 * unversioned name would see large memories wrapped. */
gpo_cu_result cuDeviceTotalMem(unsigned int *bytes, gpo_cu_device dev)
{
    fake_device *d;
    ENTER("cuDeviceTotalMem");
    NEED_INIT();
    if (!bytes)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    DEVICE(d, dev);
    *bytes = (unsigned int)d->total;
    return GPO_CUDA_SUCCESS;
}

/* _v2 answers a MIG instance's own UUID, the unversioned call its GPU's
 * (the same for a whole GPU). */
static gpo_cu_result get_uuid(gpo_cu_uuid *uuid, gpo_cu_device dev, int v2)
{
    fake_device *d;
    NEED_INIT();
    if (!uuid)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    DEVICE(d, dev);
    *uuid = v2 ? d->uuid : d->gpu_uuid;
    return GPO_CUDA_SUCCESS;
}

gpo_cu_result cuDeviceGetUuid_v2(gpo_cu_uuid *uuid, gpo_cu_device dev)
{
    ENTER("cuDeviceGetUuid_v2");
    return get_uuid(uuid, dev, 1);
}

gpo_cu_result cuDeviceGetUuid(gpo_cu_uuid *uuid, gpo_cu_device dev)
{
    ENTER("cuDeviceGetUuid");
    return get_uuid(uuid, dev, 0);
}

gpo_cu_result cuGetErrorName(gpo_cu_result error, const char **text)
{
    ENTER("cuGetErrorName");
    if (!text)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    *text = fake_result_name(error);
    return *text ? GPO_CUDA_SUCCESS : GPO_CUDA_ERROR_INVALID_VALUE;
}

gpo_cu_result cuGetErrorString(gpo_cu_result error, const char **text)
{
    static const struct {
        gpo_cu_result r;
        const char *text;
    } words[] = {
        {GPO_CUDA_ERROR_UNKNOWN, "unknown error"},
        {GPO_CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"},
        {GPO_CUDA_ERROR_INVALID_VALUE, "invalid argument"},
        {GPO_CUDA_ERROR_OUT_OF_MEMORY, "out of memory"},
        {GPO_CUDA_ERROR_NOT_INITIALIZED, "initialization error"},
        {GPO_CUDA_ERROR_INVALID_CONTEXT, "invalid device context"},
        {GPO_CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"},
        {GPO_CUDA_ERROR_NOT_FOUND, "named symbol not found"},
        /* The real driver says "operation not supported"; the double says
         * why it answers so to every launch. */
        {GPO_CUDA_ERROR_NOT_SUPPORTED,
         "operation not supported: the libcuda test double cannot run kernels"},
    };
    ENTER("cuGetErrorString");
    if (!text)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    *text = NULL;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (words[i].r == error)
            *text = words[i].text;
    if (!*text && fake_result_name(error))
        *text = "described in cuda.h";
    return *text ? GPO_CUDA_SUCCESS : GPO_CUDA_ERROR_INVALID_VALUE;
}

gpo_cu_result cuDevicePrimaryCtxRetain(gpo_cu_context *ctx, gpo_cu_device dev)
{
    fake_device *d;
    ENTER("cuDevicePrimaryCtxRetain");
    NEED_INIT();
    if (!ctx)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    DEVICE(d, dev);
    pthread_mutex_lock(&lock);
    if (d->refcount++ == 0)
        contexts_created++;
    pthread_mutex_unlock(&lock);
    *ctx = (gpo_cu_context)(void *)d;
    return GPO_CUDA_SUCCESS;
}

static gpo_cu_result release(gpo_cu_device dev)
{
    fake_device *d;
    gpo_cu_result r = GPO_CUDA_SUCCESS;
    NEED_INIT();
    DEVICE(d, dev);
    pthread_mutex_lock(&lock);
    if (d->refcount == 0)
        r = GPO_CUDA_ERROR_INVALID_CONTEXT;
    else if (--d->refcount == 0) {
        fake_rt_context_destroyed(d);
        d->l2_persisting = 0; /* a new primary context starts from the defaults */
    }
    pthread_mutex_unlock(&lock);
    return r;
}

gpo_cu_result cuDevicePrimaryCtxRelease_v2(gpo_cu_device dev)
{
    ENTER("cuDevicePrimaryCtxRelease_v2");
    return release(dev);
}

gpo_cu_result cuDevicePrimaryCtxRelease(gpo_cu_device dev)
{
    ENTER("cuDevicePrimaryCtxRelease");
    return release(dev);
}

/* Active while anyone holds a reference; the flags are never set here. */
gpo_cu_result cuDevicePrimaryCtxGetState(gpo_cu_device dev, unsigned int *flags, int *active)
{
    fake_device *d;
    ENTER("cuDevicePrimaryCtxGetState");
    NEED_INIT();
    if (!flags || !active)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    DEVICE(d, dev);
    pthread_mutex_lock(&lock);
    *flags = 0;
    *active = d->refcount > 0;
    pthread_mutex_unlock(&lock);
    return GPO_CUDA_SUCCESS;
}

static gpo_cu_result push(gpo_cu_context ctx)
{
    NEED_INIT();
    if (!ctx)
        return GPO_CUDA_ERROR_INVALID_CONTEXT;
    if (depth == FAKE_STACK)
        return GPO_CUDA_ERROR_OUT_OF_MEMORY;
    stack[depth++] = (fake_device *)(void *)ctx;
    return GPO_CUDA_SUCCESS;
}

static gpo_cu_result pop(gpo_cu_context *ctx)
{
    NEED_INIT();
    if (depth == 0)
        return GPO_CUDA_ERROR_INVALID_CONTEXT;
    fake_device *d = stack[--depth];
    if (ctx)
        *ctx = (gpo_cu_context)(void *)d;
    return GPO_CUDA_SUCCESS;
}

gpo_cu_result cuCtxPushCurrent_v2(gpo_cu_context ctx)
{
    ENTER("cuCtxPushCurrent_v2");
    return push(ctx);
}

gpo_cu_result cuCtxPushCurrent(gpo_cu_context ctx)
{
    ENTER("cuCtxPushCurrent");
    return push(ctx);
}

gpo_cu_result cuCtxPopCurrent_v2(gpo_cu_context *ctx)
{
    ENTER("cuCtxPopCurrent_v2");
    return pop(ctx);
}

gpo_cu_result cuCtxPopCurrent(gpo_cu_context *ctx)
{
    ENTER("cuCtxPopCurrent");
    return pop(ctx);
}

gpo_cu_result cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
    ENTER("cuMemGetInfo_v2");
    NEED_INIT();
    if (!free_bytes || !total_bytes)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    if (depth == 0)
        return GPO_CUDA_ERROR_INVALID_CONTEXT;
    *free_bytes = stack[depth - 1]->free_mem;
    *total_bytes = stack[depth - 1]->total;
    return GPO_CUDA_SUCCESS;
}

gpo_cu_result cuMemGetInfo(unsigned int *free_bytes, unsigned int *total_bytes)
{
    ENTER("cuMemGetInfo");
    NEED_INIT();
    if (!free_bytes || !total_bytes)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    if (depth == 0)
        return GPO_CUDA_ERROR_INVALID_CONTEXT;
    *free_bytes = (unsigned int)stack[depth - 1]->free_mem;
    *total_bytes = (unsigned int)stack[depth - 1]->total;
    return GPO_CUDA_SUCCESS;
}

/* ---- Context queries and limits (gpuopt_plan_apply) --------------------- */

gpo_cu_result cuCtxGetCurrent(gpo_cu_context *ctx)
{
    ENTER("cuCtxGetCurrent");
    NEED_INIT();
    if (!ctx)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    /* No context is not an error: the driver answers NULL (cuda.h). */
    *ctx = (gpo_cu_context)(void *)fake_current();
    return GPO_CUDA_SUCCESS;
}

gpo_cu_result cuCtxGetDevice(gpo_cu_device *device)
{
    fake_device *d;
    ENTER("cuCtxGetDevice");
    FAKE_NEED_CONTEXT(d);
    if (!device)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    *device = (gpo_cu_device)(d - cfg.devices);
    return GPO_CUDA_SUCCESS;
}

/* The persisting-L2 set-aside, the one limit the double keeps (others answer
 * CUDA_ERROR_UNSUPPORTED_LIMIT). Below compute capability 8.0, or where the
 * device's maximum is 0 (MIG), there is none. The driver may clamp the
 * value (cuCtxSetLimit in cuda.h): the double clamps to the device's
 * CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE. */
static int persisting_max(const fake_device *d, size_t *max)
{
    const int a = GPO_CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE;
    if (d->attrs[GPO_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR] < 8 || !d->attrs_set[a] ||
        d->attrs[a] <= 0)
        return 0;
    *max = (size_t)d->attrs[a];
    return 1;
}

gpo_cu_result cuCtxSetLimit(gpo_cu_limit limit, size_t value)
{
    fake_device *d;
    size_t max = 0;
    ENTER("cuCtxSetLimit");
    FAKE_NEED_CONTEXT(d);
    if (limit != GPO_CU_LIMIT_PERSISTING_L2_CACHE_SIZE || !persisting_max(d, &max))
        return GPO_CUDA_ERROR_UNSUPPORTED_LIMIT;
    pthread_mutex_lock(&lock);
    d->l2_persisting = value < max ? value : max;
    pthread_mutex_unlock(&lock);
    return GPO_CUDA_SUCCESS;
}

gpo_cu_result cuCtxGetLimit(size_t *value, gpo_cu_limit limit)
{
    fake_device *d;
    size_t max = 0;
    ENTER("cuCtxGetLimit");
    FAKE_NEED_CONTEXT(d);
    if (!value)
        return GPO_CUDA_ERROR_INVALID_VALUE;
    if (limit != GPO_CU_LIMIT_PERSISTING_L2_CACHE_SIZE || !persisting_max(d, &max))
        return GPO_CUDA_ERROR_UNSUPPORTED_LIMIT;
    pthread_mutex_lock(&lock);
    *value = d->l2_persisting;
    pthread_mutex_unlock(&lock);
    return GPO_CUDA_SUCCESS;
}

/* Each definition above must match the prototype the backend declares for
 * the symbol (cuda_api.h): a mismatch is an incompatible-pointer warning. */
#define PROTOTYPE_CHECK_(field, symbol, required, checked, params)                                 \
    __attribute__((unused)) static const gpo_pfn_##field check_##field = symbol;
GPO_CUDA_API(PROTOTYPE_CHECK_)
#undef PROTOTYPE_CHECK_

/* ---- Control, for tests (tests/backends/cuda/cuda_test_util.h) ----------- */

void gpo_fake_cuda_reset(void)
{
    pthread_mutex_lock(&lock);
    configure();
    depth = 0;
    pthread_mutex_unlock(&lock);
}

/* Calls of `sym` since the last reset; NULL: every call. */
long gpo_fake_cuda_calls(const char *sym)
{
    long n = 0;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < N_SYMS; i++)
        if (!sym || strcmp(fake_syms[i].name, sym) == 0)
            n += calls[i];
    pthread_mutex_unlock(&lock);
    return n;
}

/* Primary contexts brought to life (reference count 0 -> 1). */
int gpo_fake_cuda_contexts_created(void)
{
    return contexts_created;
}

/* Primary context references still held, over all devices. */
int gpo_fake_cuda_live_contexts(void)
{
    int n = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < cfg.n_devices; i++)
        n += cfg.devices[i].refcount;
    pthread_mutex_unlock(&lock);
    return n;
}

/* What a framework does before the host program calls gpuopt_plan_apply
 * (cudaSetDevice, torch.cuda.set_device): retains device `index`'s primary
 * context and makes it current on the calling thread, without a driver call
 * being counted or failed. 0, or -1 for an unknown index, a driver not
 * initialised or a full context stack. Undo with
 * gpo_fake_cuda_clear_current. */
int gpo_fake_cuda_make_current(int index)
{
    int rc = -1;
    pthread_mutex_lock(&lock);
    if (configured && initialised && index >= 0 && index < cfg.n_devices && depth < FAKE_STACK) {
        fake_device *d = &cfg.devices[index];
        if (d->refcount++ == 0)
            contexts_created++;
        stack[depth++] = d;
        rc = 0;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

/* Pops the calling thread's current context and releases the primary
 * context reference gpo_fake_cuda_make_current took. 0, or -1 when no
 * context is current. */
int gpo_fake_cuda_clear_current(void)
{
    int rc = -1;
    pthread_mutex_lock(&lock);
    if (depth > 0) {
        fake_device *d = stack[--depth];
        if (d->refcount > 0 && --d->refcount == 0) {
            fake_rt_context_destroyed(d);
            d->l2_persisting = 0;
        }
        rc = 0;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

/* Contexts pushed and not popped on the calling thread. */
int gpo_fake_cuda_stack_depth(void)
{
    return depth;
}

/* The index of the device whose context is current on the calling thread,
 * or -1 for none. */
int gpo_fake_cuda_current_device(void)
{
    return depth ? (int)(stack[depth - 1] - cfg.devices) : -1;
}

/* Calls recorded since the last reset (at most TRACE_MAX). */
long gpo_fake_cuda_trace_length(void)
{
    pthread_mutex_lock(&lock);
    long n = trace_len;
    pthread_mutex_unlock(&lock);
    return n;
}

/* The i-th call since the last reset: its symbol, and in *has_stream and
 * *stream whether it takes a stream and which (NULL: the legacy default
 * stream). NULL past the end. */
const char *gpo_fake_cuda_trace_call(long i, int *has_stream, const void **stream)
{
    const char *sym = NULL;
    pthread_mutex_lock(&lock);
    if (i >= 0 && i < trace_len) {
        sym = fake_syms[trace[i].sym].name;
        *has_stream = trace[i].has_stream;
        *stream = trace[i].stream;
    }
    pthread_mutex_unlock(&lock);
    return sym;
}

/* Why the configuration is broken; "" when it is fine. */
const char *gpo_fake_cuda_config_error(void)
{
    return cfg.error;
}
