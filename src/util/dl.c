/* dlopen helpers (see dl.h). */
#include "dl.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"

void *gpo_dl_open(const char *name, char *err, size_t errcap)
{
    dlerror();
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h && err && errcap) {
        const char *e = dlerror();
        gpo_snprintf(err, errcap, "%s", e ? e : "dlopen failed");
    }
    return h;
}

void *gpo_dl_open_first(const char *const *names, char *err, size_t errcap)
{
    gpo_sbuf tried;
    gpo_sbuf_init(&tried);
    for (size_t i = 0; names[i]; i++) {
        char one[512];
        void *h = gpo_dl_open(names[i], one, sizeof one);
        if (h) {
            gpo_sbuf_free(&tried);
            return h;
        }
        gpo_sbuf_appendf(&tried, "%s%s", i ? "; " : "", one);
    }
    if (err && errcap)
        gpo_snprintf(err, errcap, "%s", tried.data ? tried.data : "no library name given");
    gpo_sbuf_free(&tried);
    return NULL;
}

gpuopt_status gpo_dl_resolve(void *handle, const gpo_dl_sym *syms, size_t count, void *table,
                             char *missing, size_t missing_cap)
{
    size_t used = 0;
    int any = 0;
    if (missing && missing_cap)
        missing[0] = '\0';
    for (size_t i = 0; i < count; i++) {
        void *p = dlsym(handle, syms[i].symbol);
        /* POSIX guarantees a data pointer from dlsym converts to a function
         * pointer; copy the bytes so -Wpedantic stays quiet. */
        memcpy((char *)table + syms[i].offset, &p, sizeof p);
        if (!p && syms[i].required) {
            any = 1;
            if (missing && used < missing_cap) {
                gpo_snprintf(missing + used, missing_cap - used, "%s%s", used ? ", " : "",
                             syms[i].symbol);
                used = strlen(missing);
            }
        }
    }
    return any ? GPUOPT_ERR_UNAVAILABLE : GPUOPT_OK;
}

void gpo_dl_path(void *handle, char *out, size_t cap)
{
    struct link_map *lm = NULL;
    if (cap)
        out[0] = '\0';
    if (!handle || dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name)
        return;
    char resolved[PATH_MAX];
    if (realpath(lm->l_name, resolved))
        gpo_strlcpy(out, resolved, cap);
    else
        gpo_strlcpy(out, lm->l_name, cap);
}

void gpo_dl_once_init(gpo_dl_once *o)
{
    memset(o, 0, sizeof *o);
    pthread_mutex_init(&o->lock, NULL);
}

void gpo_dl_once_destroy(gpo_dl_once *o)
{
    pthread_mutex_destroy(&o->lock);
}

gpuopt_status gpo_dl_once_run(gpo_dl_once *o, gpuopt_status (*open)(void *arg), void *arg)
{
    pthread_mutex_lock(&o->lock);
    if (!o->tried) {
        o->tried = 1;
        gpo_detail_clear();
        o->status = open(arg);
        gpo_strlcpy(o->why, gpo_detail_get(), sizeof o->why);
    }
    gpuopt_status st = o->status;
    pthread_mutex_unlock(&o->lock);
    return st ? gpo_fail(st, "%s", o->why) : GPUOPT_OK;
}
