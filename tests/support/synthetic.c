#include "synthetic.h"

#include <string.h>

#include "util/strutil.h"

syn_spec syn_cuda, syn_rocm, syn_ocl, syn_cpu;

static const gpo_knob_def syn_knobs[] = {
    {.name = "syn.tier0",
     .type = GPUOPT_KNOB_INT,
     .summary = "set by tier 0",
     .min = 0,
     .max = 1000},
    {.name = "syn.tier1", .type = GPUOPT_KNOB_BOOL, .env = "SYN_TIER1", .summary = "set by tier 1"},
    {.name = "syn.tier2",
     .type = GPUOPT_KNOB_BYTES,
     .summary = "set by tier 2",
     .min = 1,
     .max = INT64_C(1) << 40},
    {.name = "syn.text", .type = GPUOPT_KNOB_STRING, .env = "SYN_TEXT", .summary = "a string knob"},
};

static syn_spec *spec_of(void *state)
{
    return (syn_spec *)state;
}

static gpuopt_status load_common(syn_spec *s, void **state, gpo_backend_report *r)
{
    s->loads++;
    *state = NULL;
    if (s->load_result != GPUOPT_OK) {
        gpo_snprintf(r->reason, sizeof r->reason, "synthetic failure %d", (int)s->load_result);
        if (s->kernel_side)
            *state = s;
        return s->load_result;
    }
    gpo_snprintf(r->library, sizeof r->library, "/synthetic/lib.so");
    gpo_snprintf(r->driver_version, sizeof r->driver_version, "1.0");
    *state = s;
    return GPUOPT_OK;
}

static gpuopt_status load_cuda(const gpo_backend_env *e, void **st, gpo_backend_report *r)
{
    (void)e;
    return load_common(&syn_cuda, st, r);
}
static gpuopt_status load_rocm(const gpo_backend_env *e, void **st, gpo_backend_report *r)
{
    (void)e;
    return load_common(&syn_rocm, st, r);
}
static gpuopt_status load_ocl(const gpo_backend_env *e, void **st, gpo_backend_report *r)
{
    (void)e;
    return load_common(&syn_ocl, st, r);
}
static gpuopt_status load_cpu(const gpo_backend_env *e, void **st, gpo_backend_report *r)
{
    (void)e;
    return load_common(&syn_cpu, st, r);
}

static void unload(void *state)
{
    spec_of(state)->unloads++;
}

static gpuopt_status enumerate(void *state, const gpo_backend_env *env, gpo_device_list *out)
{
    (void)env;
    syn_spec *s = spec_of(state);
    s->enumerates++;
    for (int i = 0; i < s->n_devices; i++) {
        gpuopt_device *d = gpo_device_new();
        if (!d)
            return GPUOPT_ERR_NO_MEMORY;
        d->info = s->devices[i];
        d->info.index = i;
        d->est_gflops = s->gflops[i];
        memcpy(d->est_matrix_gflops, s->matrix[i], sizeof d->est_matrix_gflops);
        d->est_bandwidth_gbs = s->bandwidth[i];
        gpuopt_status st = gpo_device_list_push(out, d);
        if (st)
            return st;
    }
    return GPUOPT_OK;
}

static gpuopt_status tier_n(int n, void *state, struct gpuopt_plan *p)
{
    syn_spec *s = spec_of(state);
    if (s->tier_result[n])
        return gpo_fail(s->tier_result[n], "synthetic tier %d failure", n);
    switch (n) {
    case 0: return gpo_knob_set_int(p, "syn.tier0", 10, "tier 0 rule");
    case 1: return gpo_knob_set_bool(p, "syn.tier1", 1, "tier 1 rule");
    default: return gpo_knob_set_bytes(p, "syn.tier2", 4096, "tier 2 measurement");
    }
}

#define TIER_FN(n)                                                                                 \
    static gpuopt_status tier##n(void *state, const gpo_route *r, const gpuopt_device *d,          \
                                 struct gpuopt_plan *p)                                            \
    {                                                                                              \
        (void)r;                                                                                   \
        (void)d;                                                                                   \
        if (!spec_of(state)->has_tier[n])                                                          \
            return GPUOPT_OK;                                                                      \
        return tier_n(n, state, p);                                                                \
    }
TIER_FN(0)
TIER_FN(1)
TIER_FN(2)

#define SYN_BACKEND(var, nm, native, loadfn, libs)                                                 \
    const gpo_backend var = {.abi = GPO_BACKEND_ABI,                                               \
                             .name = nm,                                                           \
                             .description = "synthetic",                                           \
                             .native_gpu = native,                                                 \
                             .fork_sensitive = native,                                             \
                             .load = loadfn,                                                       \
                             .unload = unload,                                                     \
                             .enumerate = enumerate,                                               \
                             .tier0 = tier0,                                                       \
                             .tier1 = tier1,                                                       \
                             .tier2 = tier2,                                                       \
                             .knobs = syn_knobs,                                                   \
                             .n_knobs = sizeof syn_knobs / sizeof syn_knobs[0],                    \
                             .libraries = libs,                                                    \
                             .n_libraries = libs[0].key ? sizeof libs / sizeof libs[0] : 0}

/* The library variables the configuration tests use, declared the way the
 * real CUDA and OpenCL backends declare them. */
static const gpo_library_var gpu_libs[] = {{"cuda", "GPUOPT_CUDA_LIBRARY"},
                                           {"nvrtc", "GPUOPT_NVRTC_LIBRARY"}};
static const gpo_library_var ocl_libs[] = {{"opencl", "GPUOPT_OPENCL_LIBRARY"}};
static const gpo_library_var no_libs[1] = {{NULL, NULL}};

SYN_BACKEND(syn_backend_cuda, "syncuda", 1, load_cuda, gpu_libs);
SYN_BACKEND(syn_backend_rocm, "synrocm", 1, load_rocm, no_libs);
SYN_BACKEND(syn_backend_ocl, "synocl", 0, load_ocl, ocl_libs);
SYN_BACKEND(syn_backend_cpu, "syncpu", 0, load_cpu, no_libs);

const gpo_backend *const syn_list[3] = {&syn_backend_cuda, &syn_backend_ocl, &syn_backend_cpu};
const gpo_backend *const syn_list4[4] = {&syn_backend_cuda, &syn_backend_rocm, &syn_backend_ocl,
                                         &syn_backend_cpu};

void syn_reset(void)
{
    memset(&syn_cuda, 0, sizeof syn_cuda);
    memset(&syn_rocm, 0, sizeof syn_rocm);
    memset(&syn_ocl, 0, sizeof syn_ocl);
    memset(&syn_cpu, 0, sizeof syn_cpu);
    for (int t = 0; t < 3; t++)
        syn_cuda.has_tier[t] = syn_rocm.has_tier[t] = syn_ocl.has_tier[t] = syn_cpu.has_tier[t] = 1;
}

gpuopt_device_info *syn_add(syn_spec *s, int type, const char *name, const char *uuid,
                            const char *pci, double gflops, uint64_t memory)
{
    gpuopt_device *tmp = gpo_device_new();
    gpuopt_device_info *i = &s->devices[s->n_devices];
    *i = tmp->info;
    gpo_device_free(tmp);
    i->type = type;
    gpo_strlcpy(i->name, name, sizeof i->name);
    if (uuid)
        gpo_strlcpy(i->uuid, uuid, sizeof i->uuid);
    if (pci)
        gpo_strlcpy(i->pci_bus_id, pci, sizeof i->pci_bus_id);
    i->memory_bytes = memory;
    s->gflops[s->n_devices] = gflops;
    s->n_devices++;
    return i;
}
