/* The profiler's sections as NVTX ranges, so Nsight Systems' timeline
 * shows them (backend.h, gpo_range_ops): this file is the program's half
 * of NVTX v3's injection protocol (nvtx_api.h), which needs no library of
 * NVIDIA's, only the tool's own, named by NVTX_INJECTION64_PATH.
 *
 * One NVTX "instance" per process for the library: the tool is initialised
 * once, whatever number of profilers and contexts; other NVTX copies in
 * the process (PyTorch's, cuDNN's) initialise their own, as NVTX
 * intends. Unlike NVTX's own loader, the variable is read with
 * secure_getenv: a privileged process never loads a library the
 * environment names.
 *
 * Every module's table is answered, with slots no range uses for the
 * modules other than CORE, so a tool that asks for all of them (to attach
 * its naming calls) is not refused. The CORE slots for nvtxRangePushA and
 * nvtxRangePop are read on every section; a tool writes them while it
 * initialises, which happens under the lock before anything reads them. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "cuda_backend.h"
#include "nvtx_api.h"
#include "util/dl.h"
#include "util/strutil.h"

/* One array of slots per module, and its table of pointers to them. */
#define SLOTS_(name, id, size)                                                                     \
    static gpo_nvtx_fn slots_##name[size + 1];                                                     \
    static gpo_nvtx_fn *table_##name[size + 1];
GPO_NVTX_MODULES(SLOTS_)

static void fill_tables(void)
{
#define FILL_(name, id, size)                                                                      \
    for (int i = 1; i < size; i++)                                                                 \
        table_##name[i] = &slots_##name[i];
    GPO_NVTX_MODULES(FILL_)
}

static int get_module_table(int module, gpo_nvtx_table *out_table, unsigned int *out_size)
{
    switch (module) {
#define CASE_(name, id, size)                                                                      \
    case id:                                                                                       \
        if (out_table)                                                                             \
            *out_table = table_##name;                                                             \
        if (out_size)                                                                              \
            *out_size = size;                                                                      \
        return 1;
        GPO_NVTX_MODULES(CASE_)
    default: return 0;
    }
}

static void set_injection_version(uint32_t version)
{
    (void)version;
}

static const gpo_nvtx_callbacks callbacks = {sizeof callbacks, get_module_table};
static const gpo_nvtx_version_info version_info = {sizeof version_info, GPO_NVTX_VERSION, 0,
                                                   set_injection_version};

static const void *get_export_table(uint32_t id)
{
    return id == GPO_NVTX_ETID_CALLBACKS     ? (const void *)&callbacks
           : id == GPO_NVTX_ETID_VERSIONINFO ? (const void *)&version_info
                                             : NULL;
}

static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER;
static int tried, attached;
static char attach_note[512];

static void try_attach(void)
{
    const char *var = GPO_NVTX_INJECTION_VARIABLE;
    const char *path = secure_getenv(var);
    if (!path || !*path) {
        gpo_snprintf(attach_note, sizeof attach_note,
                     path || !getenv(var)
                         ? "%s is not set: no NVTX tool (Nsight Systems) is attached"
                         : "%s is ignored in a privileged (setuid) process",
                     var);
        return;
    }
    char err[512];
    void *h = gpo_dl_open(path, err, sizeof err);
    if (!h) {
        gpo_snprintf(attach_note, sizeof attach_note, "%s=%s cannot be opened: %s", var, path, err);
        return;
    }
    gpo_nvtx_initialize_fn init =
        (gpo_nvtx_initialize_fn)(uintptr_t)dlsym(h, GPO_NVTX_INITIALIZE_SYMBOL);
    if (!init) {
        gpo_snprintf(attach_note, sizeof attach_note, "%s=%s has no %s: not an NVTX tool", var,
                     path, GPO_NVTX_INITIALIZE_SYMBOL);
        return;
    }
    fill_tables();
    /* 0 is the tool declining (NVTX's loader then unloads it); the library
     * handle is kept either way, as every vendor library's. */
    if (!init(get_export_table)) {
        gpo_snprintf(attach_note, sizeof attach_note, "the NVTX tool %s declined to attach", path);
        return;
    }
    if (!slots_CORE[GPO_NVTX_CBID_CORE_RangePushA] || !slots_CORE[GPO_NVTX_CBID_CORE_RangePop]) {
        gpo_snprintf(attach_note, sizeof attach_note,
                     "the NVTX tool %s attached but takes no ranges (it filled no "
                     "nvtxRangePushA/nvtxRangePop)",
                     path);
        return;
    }
    attached = 1;
    gpo_snprintf(attach_note, sizeof attach_note, "%s=%s", var, path);
}

static int nvtx_attach(const gpo_backend_env *env, char *note, size_t cap)
{
    (void)env; /* NVIDIA's variable, not a library of the configuration */
    pthread_mutex_lock(&attach_lock);
    if (!tried) {
        tried = 1;
        try_attach();
    }
    int yes = attached;
    gpo_strlcpy(note, attach_note, cap);
    pthread_mutex_unlock(&attach_lock);
    return yes;
}

static void nvtx_push(const char *name)
{
    ((gpo_nvtx_range_push_a_fn)(uintptr_t)slots_CORE[GPO_NVTX_CBID_CORE_RangePushA])(name);
}

static void nvtx_pop(void)
{
    ((gpo_nvtx_range_pop_fn)(uintptr_t)slots_CORE[GPO_NVTX_CBID_CORE_RangePop])();
}

const gpo_range_ops gpo_cuda_nvtx_ranges = {"nvtx", nvtx_attach, nvtx_push, nvtx_pop};
