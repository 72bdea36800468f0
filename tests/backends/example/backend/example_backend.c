/* A test-only backend: one fake accelerator, the "Example X1". It exists to
 * prove that a backend is one folder plus one registry line: nothing outside
 * this folder names it, yet it is listed, selected, planned for and
 * diagnosed like the real ones (tests/backends/example builds libgpuopt
 * again with it added). Each ops-table entry is the smallest honest form of
 * what a real backend does there; the comments say what that would be.
 *
 * Its "vendor library" is a path the user may choose with
 * GPUOPT_EXAMPLE_LIBRARY (or the config file's "libraries": {"example": ...}),
 * declared in the ops table like GPUOPT_CUDA_LIBRARY: a real backend would
 * dlopen it; this one only checks that the file is there. */
#include <stdlib.h>
#include <unistd.h>

#include "backend.h"
#include "example_doctor.h"

typedef struct example_state {
    char library[512]; /* the user's path, "" for none */
} example_state;

static gpuopt_status example_load(const gpo_backend_env *env, void **state,
                                  gpo_backend_report *report)
{
    /* A real backend: dlopen the vendor library (the user's path, else its
     * soname), dlsym its slice of the API, initialise the driver. */
    const char *lib = gpo_env_library(env, "example");
    if (lib && access(lib, R_OK) != 0) {
        gpo_snprintf(report->reason, sizeof report->reason,
                     "GPUOPT_EXAMPLE_LIBRARY names %s, which cannot be read", lib);
        return GPUOPT_ERR_UNAVAILABLE;
    }
    example_state *s = calloc(1, sizeof *s);
    if (!s)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "example: out of memory");
    gpo_strlcpy(s->library, lib ? lib : "", sizeof s->library);
    gpo_strlcpy(report->library, lib ? lib : "(built in)", sizeof report->library);
    gpo_strlcpy(report->driver_version, "1.0", sizeof report->driver_version);
    gpo_log_debug(gpo_env_log(env), "example: loaded %s", report->library);
    *state = s;
    return GPUOPT_OK;
}

static void example_unload(void *state)
{
    free(state);
}

static gpuopt_status example_enumerate(void *state, const gpo_backend_env *env,
                                       gpo_device_list *out)
{
    (void)state;
    (void)env;
    /* A real backend: one record per device the driver lists, in its
     * native order, with the facts it can read. */
    gpuopt_device *dev = gpo_device_new();
    if (!dev)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "example: out of memory");
    gpuopt_device_info *i = &dev->info;
    i->index = 0;
    i->type = GPUOPT_DEVICE_TYPE_ACCELERATOR;
    gpo_strlcpy(i->vendor, "Example", sizeof i->vendor);
    gpo_strlcpy(i->name, "Example X1", sizeof i->name);
    gpo_strlcpy(i->arch_family, "example", sizeof i->arch_family);
    gpo_strlcpy(i->arch_name, "x1", sizeof i->arch_name);
    gpo_strlcpy(i->uuid, "EXAMPLE-0000-0001", sizeof i->uuid);
    gpo_strlcpy(i->driver_version, "1.0", sizeof i->driver_version);
    i->compute_units = 8;
    i->simd_width = 16;
    i->max_threads_per_block = 512;
    i->integrated = 0;
    i->memory_bytes = 2ull << 30;
    cJSON *details = gpo_device_details(dev, "example");
    if (!details || !cJSON_AddNumberToObject(details, "queues", 4)) {
        gpo_device_free(dev);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "example: out of memory");
    }
    return gpo_device_list_push(out, dev);
}

/* Level 0: nothing read from the device is trusted yet. */
static gpuopt_status example_tier0(void *state, const gpo_route *route, const gpuopt_device *dev,
                                   struct gpuopt_plan *plan)
{
    (void)state;
    (void)route;
    (void)dev;
    gpuopt_status st =
        gpo_knob_set_int(plan, "example.queues", 1, "one command queue is always safe");
    if (!st)
        st = gpo_knob_set_int(plan, "launch.block_size", 64,
                              "64 work-items fit every Example device");
    return st;
}

/* Level 1: from the detected facts, each reason naming the fact. */
static gpuopt_status example_tier1(void *state, const gpo_route *route, const gpuopt_device *dev,
                                   struct gpuopt_plan *plan)
{
    (void)state;
    (void)route;
    const gpuopt_device_info *i = &dev->info;
    gpuopt_status st =
        gpo_knob_set_int(plan, "example.queues", i->compute_units / 2,
                         "%d compute units / 2 compute units per queue", (int)i->compute_units);
    if (!st)
        st = gpo_knob_set_int(plan, "launch.block_size", i->max_threads_per_block,
                              "the device's largest work-group is %d work-items",
                              (int)i->max_threads_per_block);
    if (!st)
        st = gpo_knob_set_int(plan, "launch.block_multiple", i->simd_width,
                              "the device runs %d lanes per SIMD unit", (int)i->simd_width);
    return st;
}

/* The knobs only this backend sets; the catalogue's size follows from it. */
static const gpo_knob_def example_knobs[] = {
    {.name = "example.queues",
     .type = GPUOPT_KNOB_INT,
     .env = "EXAMPLE_QUEUES",
     .summary = "command queues to keep busy on an Example accelerator",
     .min = 1,
     .max = 64,
     .units = "queues"},
};

static const gpo_library_var example_libraries[] = {
    {"example", "GPUOPT_EXAMPLE_LIBRARY"},
};

const gpo_backend gpo_backend_example = {
    .abi = GPO_BACKEND_ABI,
    .name = "example",
    .description = "test-only fake accelerator",
    .native_gpu = 0,
    .fork_sensitive = 0,
    .load = example_load,
    .unload = example_unload,
    .enumerate = example_enumerate,
    .tier0 = example_tier0,
    .tier1 = example_tier1,
    GPO_BACKEND_TABLE(knobs, example_knobs),
    GPO_BACKEND_TABLE(libraries, example_libraries),
    .diagnose = gpo_example_diagnose,
};
