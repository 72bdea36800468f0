/* Shared by the libcuda.so.1 test double's two files (fake_cuda.c: the
 * driver API slice and the controls; fake_config.c: reading the
 * environment and the JSON descriptions). */
#ifndef GPO_FAKE_CUDA_H
#define GPO_FAKE_CUDA_H

#include <stddef.h>

#include "cuda/cuda_api.h"

#define FAKE_MAX_DEVICES 16
#define FAKE_MAX_RULES 16

typedef struct fake_device {
    char name[256];
    int attrs_set[160]; /* 1 when attrs[i] comes from the file */
    int attrs[160];
    size_t total, free_mem;
    char uuid_text[64];   /* as the file spells it: "GPU-..." or "MIG-..." */
    gpo_cu_uuid uuid;     /* cuDeviceGetUuid_v2's answer */
    gpo_cu_uuid gpu_uuid; /* the unversioned call's: the parent GPU's for a MIG instance */
    int refcount;         /* primary context retains minus releases */
    size_t l2_persisting; /* the primary context's CU_LIMIT_PERSISTING_L2_CACHE_SIZE */
} fake_device;

typedef struct fake_rule {
    char sym[64];
    long nth; /* 0: every call */
    gpo_cu_result result;
} fake_rule;

/* What the environment describes. */
typedef struct fake_config {
    char error[512]; /* why the configuration is broken, "" when fine */
    fake_device devices[FAKE_MAX_DEVICES];
    int n_devices;
    gpo_cu_result init_result;
    int driver_version;
    fake_rule rules[FAKE_MAX_RULES];
    int n_rules;
    /* Launches: refused (CUDA_ERROR_NOT_SUPPORTED) unless launch_runs; a
     * run advances the virtual clock by launch_ns (any double, NaN too). */
    int launch_runs;
    double launch_ns;
    long fault_nth; /* the launch that faults (from 1), 0: none */
    gpo_cu_result fault_result;
    unsigned fault_block; /* only launches of blocks this wide count; 0: all */
} fake_config;

void fake_config_read(fake_config *c);

/* "CUDA_ERROR_NO_DEVICE", or NULL for a value cuda.h does not name. */
const char *fake_result_name(gpo_cu_result r);

/* Every driver symbol the backend declares, with the backend's prototype:
 * a definition in the fake that differs does not compile. */
#define FAKE_DECLARE_(field, symbol, required, checked, params) gpo_cu_result symbol params;
GPO_CUDA_API(FAKE_DECLARE_)
#undef FAKE_DECLARE_

/* Shared by fake_cuda.c and fake_cuda_rt.c (the runtime half: memory,
 * modules, events, launches). */
/* Counts the call of `sym`, records it in the call trace (with `stream`
 * when `has_stream`: the calls that take one) and applies the fault rules
 * and a sticky fault: 1 with *r set when the call must fail. */
int fake_enter(const char *sym, int has_stream, const void *stream, gpo_cu_result *r);
/* The configuration (under the lock or after the first call). */
const fake_config *fake_cfg(void);
/* A launch faulted with `r`: the fault surfaces at the next call that
 * waits for the device, and sticks from then on (fake_cuda.c). */
void fake_fault_pending(gpo_cu_result r);
/* GPUOPT_FAKE_CUDA_FAULT=N:hang: the Nth launch never ends (an endless
 * loop on a GPU without a watchdog); the next call that waits blocks. */
#define FAKE_HANG ((gpo_cu_result)0x7fffffff)
/* fake_cuda_rt.c: advances the virtual clock (launches). */
void fake_clock_advance(double ns);
/* fake_cuda_rt.c: 1 when `stream` is NULL (the legacy default stream) or a
 * live stream of device `d`. */
int fake_stream_ok(const fake_device *d, const void *stream);
int fake_initialised(void);
/* The device whose context is current on this thread, or NULL. */
fake_device *fake_current(void);
fake_device *fake_device_at(int index);
void fake_lock(void);
void fake_unlock(void);
/* Frees every runtime object (called by a reset, under the lock). */
void fake_rt_reset(void);
/* Frees the runtime objects of `d`'s context, which has just died (its
 * last primary-context reference was released; under the lock). */
void fake_rt_context_destroyed(const fake_device *d);
/* fake_cuda_module.c: frees the modules of `d` (NULL: all; under the
 * lock), and counts the live ones. */
void fake_modules_free(const fake_device *d);
long fake_modules_count(void);
/* fake_cuda_module.c: restarts the count of launches (a reset). */
void fake_launches_reset(void);

#define FAKE_ENTER(sym)                                                                            \
    do {                                                                                           \
        gpo_cu_result injected_;                                                                   \
        if (fake_enter(sym, 0, NULL, &injected_))                                                  \
            return injected_;                                                                      \
    } while (0)

/* The same for a call that takes a stream (recorded in the trace). */
#define FAKE_ENTER_ON(sym, stream)                                                                 \
    do {                                                                                           \
        gpo_cu_result injected_;                                                                   \
        if (fake_enter(sym, 1, (stream), &injected_))                                              \
            return injected_;                                                                      \
    } while (0)

/* Sets d to the current context's device, or fails as the driver does. */
#define FAKE_NEED_CONTEXT(d)                                                                       \
    do {                                                                                           \
        FAKE_NEED_INIT();                                                                          \
        if (!((d) = fake_current()))                                                               \
            return GPO_CUDA_ERROR_INVALID_CONTEXT;                                                 \
    } while (0)

#define FAKE_NEED_INIT()                                                                           \
    do {                                                                                           \
        if (!fake_initialised())                                                                   \
            return GPO_CUDA_ERROR_NOT_INITIALIZED;                                                 \
    } while (0)

#endif
