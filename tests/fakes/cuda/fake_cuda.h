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
    gpo_cu_uuid uuid;
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
/* Counts the call of `sym` and applies the fault rules: 1 with *r set when
 * the call must fail. */
int fake_enter(const char *sym, gpo_cu_result *r);
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

#define FAKE_ENTER(sym)                                                                            \
    do {                                                                                           \
        gpo_cu_result injected_;                                                                   \
        if (fake_enter(sym, &injected_))                                                           \
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
