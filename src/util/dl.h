/* Opening vendor libraries at run time. Each backend lists its vendor
 * symbols once (an X-macro of field, symbol name, required/optional); that
 * list generates its function-pointer struct and a gpo_dl_sym table, and
 * gpo_dl_resolve fills the struct and names every missing required symbol. */
#ifndef GPO_DL_H
#define GPO_DL_H

#include <pthread.h>
#include <stddef.h>

#include "detail.h"

typedef struct gpo_dl_sym {
    const char *symbol; /* the exported name, versioned where the ABI is ("cuDeviceTotalMem_v2") */
    size_t offset;      /* offsetof the function pointer in the backend's table */
    int required;       /* 1: missing means the backend cannot work */
} gpo_dl_sym;

#define GPO_DL_REQUIRED 1
#define GPO_DL_OPTIONAL 0

/* Opens `name` (a soname such as "libcuda.so.1" or a path) with
 * RTLD_NOW | RTLD_LOCAL. NULL on failure with dlerror()'s words in err. */
void *gpo_dl_open(const char *name, char *err, size_t errcap);

/* Opens the first of `names` (NULL-terminated) that loads. On failure err
 * holds every name tried with its dlerror text. */
void *gpo_dl_open_first(const char *const *names, char *err, size_t errcap);

/* Resolves every symbol of `syms` into `table` (a struct of function
 * pointers). Optional symbols that are missing are left NULL. Returns
 * GPUOPT_OK, or GPUOPT_ERR_UNAVAILABLE with `missing` holding the missing
 * required symbols' names, comma-separated. */
gpuopt_status gpo_dl_resolve(void *handle, const gpo_dl_sym *syms, size_t count, void *table,
                             char *missing, size_t missing_cap);

/* A library opened on first use, once: a failure is remembered with its
 * words and repeated (a missing library stays missing, and a compiler
 * library is large to open). */
typedef struct gpo_dl_once {
    pthread_mutex_t lock;
    int tried;
    gpuopt_status status;
    char why[1024];
} gpo_dl_once;

void gpo_dl_once_init(gpo_dl_once *o);
void gpo_dl_once_destroy(gpo_dl_once *o);

/* Calls open(arg) on the first call only, under the lock; every call
 * returns its status, and sets the detail to its words when it failed. */
gpuopt_status gpo_dl_once_run(gpo_dl_once *o, gpuopt_status (*open)(void *arg), void *arg);

/* The absolute path of the file behind `handle` (what was really loaded).
 * Empty string when the loader cannot say. */
void gpo_dl_path(void *handle, char *out, size_t cap);

#endif
