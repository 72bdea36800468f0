#include "test_cache_util.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <unistd.h>

#include "util/strutil.h"

int64_t tc_now = 1700000000;

int64_t tc_clock(void)
{
    return tc_now;
}

static void rm_rf(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char p[1024];
            snprintf(p, sizeof p, "%s/%s", path, e->d_name);
            rm_rf(p);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

const char *tc_dir(const char *name)
{
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    char top[400];
    snprintf(top, sizeof top, "%s/tests/tune-%d", GPO_BUILD_DIR, (int)getpid());
    mkdir(top, 0700);
    snprintf(p, 512, "%.400s/%.100s", top, name);
    rm_rf(p);
    mkdir(p, 0700);
    return p;
}

int tc_cleanup(void **state)
{
    (void)state;
    char top[400];
    snprintf(top, sizeof top, "%s/tests/tune-%d", GPO_BUILD_DIR, (int)getpid());
    rm_rf(top);
    return 0;
}

void tc_device(gpo_cache_device *dev)
{
    gpuopt_device_info info;
    memset(&info, 0, sizeof info);
    gpo_strlcpy(info.backend, "cuda", sizeof info.backend);
    gpo_strlcpy(info.name, "NVIDIA H100 80GB HBM3", sizeof info.name);
    gpo_strlcpy(info.vendor, "NVIDIA", sizeof info.vendor);
    gpo_strlcpy(info.arch_name, "sm_90", sizeof info.arch_name);
    gpo_strlcpy(info.uuid, "GPU-5d2f0c3a-1b7e-4c1d-9a42-0f6d3e2b1a77", sizeof info.uuid);
    gpo_strlcpy(info.pci_bus_id, "0000:17:00.0", sizeof info.pci_bus_id);
    info.compute_units = 132;
    gpo_cache_device_from_info(&info, dev);
}

gpo_cache_key *tc_key_sync(tc_key *k)
{
    k->key.kind = k->kind;
    k->key.backend = k->backend;
    k->key.arch = k->arch;
    k->key.compute_units = k->compute_units;
    k->key.source_hash = k->source;
    k->key.options_hash = k->options;
    k->key.space_hash = k->space;
    k->key.workload = k->workload;
    return &k->key;
}

gpo_cache_key *tc_key_init(tc_key *k, const char *workload)
{
    memset(k, 0, sizeof *k);
    strcpy(k->kind, "kernel");
    strcpy(k->backend, "cuda");
    strcpy(k->arch, "sm_90");
    strcpy(k->source, "fnv1a64:00000000000000a1");
    strcpy(k->options, "fnv1a64:00000000000000b2");
    strcpy(k->space, "fnv1a64:00000000000000c3");
    gpo_strlcpy(k->workload, workload, sizeof k->workload);
    k->compute_units = 132;
    return tc_key_sync(k);
}

gpo_cache_options tc_options(uint32_t max_entries, uint64_t max_bytes)
{
    gpo_cache_options o;
    memset(&o, 0, sizeof o);
    o.max_entries = max_entries;
    o.max_bytes = max_bytes;
    o.clock = tc_clock;
    o.per_host = -1;
    o.checkpoint_ms = -1;
    return o;
}

gpo_logger tc_logger(log_capture *cap, int32_t level)
{
    memset(cap, 0, sizeof *cap);
    gpo_logger l = {level, capture_log, cap};
    return l;
}

cJSON *tc_params(int tile, int vec)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "TILE", tile);
    cJSON_AddNumberToObject(p, "VEC", vec);
    return p;
}

gpo_cache_stats tc_stats(double median_ns)
{
    gpo_cache_stats s = {0,   10, median_ns, median_ns * 0.9, median_ns * 0.95, median_ns * 1.1,
                         12.5};
    return s;
}

int tc_tune(gpo_cache *c, const gpo_cache_key *key, const gpo_cache_soft *soft, int n)
{
    gpo_cache_search search = {"exhaustive", 42, 0, 0, 0};
    gpo_cache_tune *t;
    if (gpo_cache_begin(c, key, soft, &search, &t))
        return -1;
    for (int i = 1; i <= n; i++) {
        cJSON *p = tc_params(i, 4);
        gpo_cache_stats s = tc_stats(1000.0 * i);
        int rc = gpo_cache_add_candidate(t, p, &s);
        cJSON_Delete(p);
        if (rc) {
            gpo_cache_abandon(t);
            return -1;
        }
    }
    cJSON *b = tc_params(1, 4), *r = n > 1 ? tc_params(2, 4) : NULL;
    gpo_cache_stats bs = tc_stats(1000), rs = tc_stats(2000);
    int rc = gpo_cache_finish(t, b, &bs, r, r ? &rs : NULL, 1, 1.5, NULL);
    cJSON_Delete(b);
    cJSON_Delete(r);
    return rc ? -1 : 0;
}

int tc_put(gpo_cache *c, const gpo_cache_key *key, const gpo_cache_soft *soft, const cJSON *payload)
{
    gpo_cache_search search = {"exhaustive", 0, 0, 0, 0};
    gpo_cache_tune *t;
    if (gpo_cache_begin(c, key, soft, &search, &t))
        return -1;
    return gpo_cache_finish(t, NULL, NULL, NULL, NULL, 1, 0, payload) ? -1 : 0;
}

char *tc_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = '\0';
    fclose(f);
    if (len)
        *len = got;
    return b;
}

void tc_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

void tc_append_raw(const char *path, const char *bytes)
{
    FILE *f = fopen(path, "ab");
    if (f) {
        fputs(bytes, f);
        fclose(f);
    }
}

void tc_edit(const char *path, const char *from, const char *to)
{
    char *text = tc_read(path, NULL);
    char *at = text ? strstr(text, from) : NULL;
    if (!at)
        fail_msg("\"%s\" is not in %s", from, path);
    char *out = malloc(strlen(text) + strlen(to) + 1);
    sprintf(out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    tc_write(path, out);
    free(out);
    free(text);
}

gpo_cache *tc_reopen(gpo_cache *c, gpo_cache_options *o, gpo_logger *log)
{
    char dir[1024];
    gpo_strlcpy(dir, gpo_cache_file(c), sizeof dir);
    *strrchr(dir, '/') = '\0';
    gpo_cache_close(c);
    gpo_cache_device dev;
    tc_device(&dev);
    c = NULL;
    assert_int_equal(gpo_cache_open(dir, &dev, o, log, &c), GPUOPT_OK);
    return c;
}

int tc_count_files(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, part) != NULL;
    if (d)
        closedir(d);
    return n;
}

int tc_verify(const char *dir, int *entries, int *candidates, int *unfinished)
{
    cJSON *r = NULL;
    if (gpo_cache_dir_verify(dir, &r) != GPUOPT_OK)
        return -1;
    int ok = cJSON_IsTrue(cJSON_GetObjectItem(r, "ok"));
    cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "files"), 0);
    if (entries)
        *entries = f ? cJSON_GetObjectItem(f, "entries")->valueint : 0;
    if (candidates)
        *candidates = f ? cJSON_GetObjectItem(f, "candidates")->valueint : 0;
    if (unfinished)
        *unfinished = f ? cJSON_GetObjectItem(f, "unfinished")->valueint : 0;
    cJSON_Delete(r);
    return ok;
}
