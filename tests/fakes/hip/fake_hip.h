/* Shared by the files of the HIP test doubles: fault injection and call
 * counting (fake_faults.c), the described devices (fake_hip.c), emulated
 * memory, modules and launches (fake_hip_rt.c) and hiprtc (fake_hiprtc.c).
 * Each library built from them has its own copy of this state. */
#ifndef GPO_FAKE_HIP_H
#define GPO_FAKE_HIP_H

#include <stddef.h>

#define EXPORT __attribute__((visibility("default")))

typedef int hipError_t;

/* Called once before the first counted call: each library defines it
 * (fake_hip.c reads the devices and the faults; the standalone hiprtc
 * reads the faults). */
void fake_on_first_use(void);

/* Re-reads GPUOPT_FAKE_HIP_FAIL and zeroes the counters. */
void fake_faults_load(void);
/* Counts one use of `call`; returns the injected error, or 0. */
int fake_enter(const char *call);
int fake_faults_fired(void);
long fake_uses(const char *call);

/* hipError_t name and sentence for a value, NULL when unknown. */
const char *fake_error_name(int value);
const char *fake_error_text(int value);

#define ENTER(name)                                                                                \
    do {                                                                                           \
        int injected_ = fake_enter(name);                                                          \
        if (injected_)                                                                             \
            return injected_;                                                                      \
    } while (0)

/* fake_hip.c: the described devices. */
int fake_device_count(void);
int fake_current_device(void);
const char *fake_device_arch(int device); /* gcnArchName */
int fake_device_max_threads(int device);
long long fake_device_free_memory(int device);

/* fake_hip_rt.c: objects still alive (memory, modules, events, pinned). */
int fake_rt_live(void);
void fake_rt_reset(void);

#endif
