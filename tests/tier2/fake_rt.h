/* A test double of a backend with runtime ops, for the tier-2 engine:
 * buffers in host memory, the tier-2 kernels "run" on the host (the copy
 * copies, the reduction really sums, so the engine's checks pass or fail
 * for real) and report simulated device times chosen by the test, so which
 * group size wins is known in advance. Every op is counted, and any op can
 * be told to fail on its Nth call.
 *
 * Three backends share it: "fakegpu" (a native GPU backend), "fakecl" (an
 * OpenCL-like secondary route to the same device: same UUID) and "bare"
 * (a device whose backend has neither runtime ops nor tier-2 rules). */
#ifndef GPO_TEST_FAKE_RT_H
#define GPO_TEST_FAKE_RT_H

#include "backend.h"

typedef struct fake_spec {
    int enabled;         /* enumerates the device */
    char driver[32];     /* the route's driver version (a soft field) */
    int64_t best_copy;   /* the copy kernel's fastest group size */
    int64_t best_reduce; /* the reduction's */
    double copy_ns;      /* a copy launch at its best size */
    double reduce_ns;
    double slope; /* each factor of 2 away from the best adds this share */
    /* Two modes, as PoCL's copy kernel has: every lucky_every-th launch
     * with groups of lucky_local runs in half the time (0: never). */
    int64_t lucky_local;
    int lucky_every;
    long lucky_seen;
    double pageable_spin_ns, pinned_spin_ns; /* host time of a 16 MiB copy */
    int wrong_sum;                           /* the reduction adds one too many */
    size_t kernel_max;                       /* kernel_max_group */
    uint64_t l2_bytes;                       /* the device's last-level cache */
    const char *fail_op;                     /* "launch", "buffer_alloc", ...; NULL: none */
    int fail_nth;                            /* 1-based; 0: every call */
    long fail_seen;                          /* calls of fail_op so far (reset it with fail_op) */
    const char *fail_words;
    gpuopt_status fail_status;
    /* counters */
    long calls; /* every op */
    long opens, launches, live;
    long unwritten_copies; /* copy launches whose source held zeros (never written) */
    int64_t locals[64];    /* distinct local sizes launched */
    int n_locals;
} fake_spec;

extern fake_spec fake_gpu, fake_cl;
extern const gpo_backend fake_backend_gpu, fake_backend_cl, fake_backend_bare;
extern int fake_bare_enabled;

/* Resets both specs: enabled, driver "1.0", copy best 512 at 100 us,
 * reduction best 128 at 50 us, slope 0.5, pageable 200 us / pinned 100 us,
 * kernels up to 1024, a 4 MiB last-level cache. */
void fake_reset(void);

/* A context over the three fake backends with the cache in `cache_dir`. */
gpuopt_status fake_context(const char *cache_dir, gpuopt_context **ctx);
/* The /proc/loadavg line fake_context records (reset: an idle machine). */
extern const char *fake_loadavg;
/* The /sys/devices/system/cpu/online list it records (reset: NULL, none:
 * the machine that runs the tests counts). */
extern const char *fake_online;

#endif
