/* Compaction (compact.h): the journal's latest state to a temp file,
 * then renamed over it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/compact.h"
#include "cache/journal.h"
#include "util/fs.h"
#include "util/strutil.h"

typedef struct span {
    const char *p;
    size_t n;
} span;

typedef struct spans {
    span *v;
    size_t n, cap;
    size_t bytes;
} spans;

typedef struct kept {
    gpo_cidx_item *it;
    char *record; /* printed lines with their newline, or NULL */
    size_t record_n;
    char *begin;
    size_t begin_n;
    spans rc, oc; /* candidate lines of the record's tune and of the open tune */
    int keep, keep_cands;
} kept;

typedef struct collect {
    gpo_cidx *ix;
    kept *k; /* parallel to ix->items */
    int failed;
} collect;

static int spans_push(spans *s, const char *p, size_t n)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        span *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n].p = p;
    s->v[s->n].n = n;
    s->n++;
    s->bytes += n + 1;
    return 0;
}

static void on_line(const cJSON *o, const char *raw, size_t n, void *user)
{
    collect *col = user;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "t");
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "key");
    const cJSON *tune = cJSON_GetObjectItemCaseSensitive(o, "tune");
    uint64_t h;
    char why[64];
    if (!cJSON_IsString(t) || strcmp(t->valuestring, "cand") != 0 || !cJSON_IsString(k) ||
        !cJSON_IsString(tune) || gpo_cache_parse16(k->valuestring, &h) ||
        gpo_cache_params_valid(cJSON_GetObjectItemCaseSensitive(o, "params"), why, sizeof why))
        return;
    gpo_cidx_item *it = gpo_cidx_find(col->ix, h);
    if (!it)
        return;
    kept *kp = &col->k[it - col->ix->items];
    if (it->record && strcmp(tune->valuestring, it->record_tune) == 0)
        col->failed |= spans_push(&kp->rc, raw, n);
    else if (it->open_begin && strcmp(tune->valuestring, it->open_tune) == 0)
        col->failed |= spans_push(&kp->oc, raw, n);
}

/* A record or begin line with its last use folded in. */
static char *print_with_use(cJSON *o, int64_t used, size_t *n)
{
    cJSON *u = cJSON_CreateNumber((double)used);
    if (!u)
        return NULL;
    if (cJSON_GetObjectItemCaseSensitive(o, "used"))
        cJSON_ReplaceItemInObjectCaseSensitive(o, "used", u);
    else
        cJSON_AddItemToObject(o, "used", u);
    return gpo_journal_print(o, n);
}

static int by_use(const void *a, const void *b)
{
    const kept *x = *(const kept *const *)a, *y = *(const kept *const *)b;
    if (x->it->used != y->it->used)
        return x->it->used > y->it->used ? -1 : 1;
    return x->it->hash < y->it->hash ? -1 : x->it->hash > y->it->hash;
}

static int by_key(const void *a, const void *b)
{
    const kept *x = *(const kept *const *)a, *y = *(const kept *const *)b;
    return x->it->hash < y->it->hash ? -1 : x->it->hash > y->it->hash;
}

/* Chooses what stays. Within the bounds everything does; over one, the
 * most recently used keys are taken first (their record or begin line),
 * then their candidates while bytes remain. */
static void select_kept(kept **order, size_t n, size_t header_n, uint64_t max_bytes,
                        uint32_t max_entries)
{
    uint64_t total = header_n;
    for (size_t i = 0; i < n; i++)
        total += order[i]->record_n + order[i]->begin_n + order[i]->rc.bytes + order[i]->oc.bytes;
    int over = total > max_bytes || n > max_entries;
    uint64_t cap_bytes = over ? max_bytes / 4 * 3 : UINT64_MAX;
    size_t cap_entries = over ? (size_t)max_entries * 3 / 4 : n;
    if (cap_entries < 1)
        cap_entries = 1;
    uint64_t bytes = header_n;
    size_t taken = 0;
    for (size_t i = 0; i < n && taken < cap_entries; i++) {
        uint64_t b = order[i]->record_n + order[i]->begin_n;
        /* The most recent key always stays, even alone over a tiny bound:
         * evicting what was just measured would only measure it again. */
        if (i > 0 && bytes + b > cap_bytes)
            continue;
        bytes += b;
        order[i]->keep = 1;
        taken++;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t b = order[i]->rc.bytes + order[i]->oc.bytes;
        if (order[i]->keep && bytes + b <= cap_bytes) {
            bytes += b;
            order[i]->keep_cands = 1;
        }
    }
}

static int write_spans(int fd, const spans *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (gpo_journal_write(fd, s->v[i].p, s->v[i].n) || gpo_journal_write(fd, "\n", 1))
            return -1;
    return 0;
}

void (*gpo_cache_fault_hook)(const char *point);

static void hook(const char *point)
{
    if (gpo_cache_fault_hook)
        gpo_cache_fault_hook(point);
}

/* Temp files of this journal left by a compaction that died: we hold the
 * journal's exclusive lock, so no live process is writing one. */
static void remove_stale_temps(const gpo_compact_target *c)
{
    DIR *d = opendir(c->dir);
    if (!d)
        return;
    char prefix[300];
    gpo_snprintf(prefix, sizeof prefix, ".%s.tmp-", c->name);
    size_t pl = strlen(prefix);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, prefix, pl) == 0)
            unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

static int write_file(const gpo_compact_target *c, kept **order, size_t n, const char *header,
                      size_t header_n)
{
    char tmp[GPO_PATH_MAX + 64];
    gpo_snprintf(tmp, sizeof tmp, "%s/.%s.tmp-%ld-%llu", c->dir, c->name, (long)getpid(),
                 (unsigned long long)++*c->serial);
    remove_stale_temps(c);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    int rc = gpo_journal_write(fd, header, header_n);
    for (size_t i = 0; !rc && i < n; i++) {
        kept *k = order[i];
        if (!k->keep)
            continue;
        if (k->record)
            rc = gpo_journal_write(fd, k->record, k->record_n) ||
                 (k->keep_cands && write_spans(fd, &k->rc));
        if (!rc && k->begin)
            rc = gpo_journal_write(fd, k->begin, k->begin_n) ||
                 (k->keep_cands && write_spans(fd, &k->oc));
    }
    if (!rc)
        hook("compact:temp-written");
    if (!rc)
        rc = fsync(fd);
    if (close(fd) != 0)
        rc = -1;
    if (!rc) {
        hook("compact:before-rename");
        rc = rename(tmp, c->path);
    }
    if (rc) {
        int err = errno;
        unlink(tmp);
        errno = err;
        return -1;
    }
    hook("compact:renamed");
    /* The rename itself reaches the disk only with the directory. */
    int dfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return 0;
}

int gpo_journal_compact(const gpo_compact_target *c, const char *buf, size_t len, int salvage)
{
    int rc = -1;
    gpo_cidx ix;
    gpo_cidx_init(&ix);
    kept *k = NULL, **order = NULL;
    char *header = NULL;
    size_t header_n = 0, n = 0;
    gpo_journal_scan scan;
    gpo_journal_apply(&ix, buf, len, 1, salvage ? GPO_J_SKIP_BAD : 0, &scan);
    if (scan.status != GPO_J_OK || !ix.header)
        goto out;
    header = gpo_journal_print(ix.header, &header_n);
    k = calloc(ix.n ? ix.n : 1, sizeof *k);
    order = calloc(ix.n ? ix.n : 1, sizeof *order);
    if (!header || !k || !order)
        goto out;
    collect col = {&ix, k, 0};
    gpo_journal_each(buf, len, on_line, &col);
    if (col.failed)
        goto out;
    for (size_t i = 0; i < ix.n; i++) {
        gpo_cidx_item *it = &ix.items[i];
        k[i].it = it;
        if (!it->record && !it->open_begin)
            continue; /* a record dropped by a failed verification, and no tune since */
        if (it->record && !(k[i].record = print_with_use(it->record, it->used, &k[i].record_n)))
            goto out;
        if (it->open_begin &&
            !(k[i].begin = print_with_use(it->open_begin, it->used, &k[i].begin_n)))
            goto out;
        order[n++] = &k[i];
    }
    qsort(order, n, sizeof *order, by_use);
    select_kept(order, n, header_n, c->max_bytes, c->max_entries);
    size_t evicted = 0;
    for (size_t i = 0; i < n; i++)
        evicted += !order[i]->keep;
    qsort(order, n, sizeof *order, by_key);
    if (write_file(c, order, n, header, header_n) != 0) {
        gpo_log_warn(c->log, "cannot compact cache file %s: %s (it is kept as it was)", c->path,
                     strerror(errno));
        goto out;
    }
    if (evicted)
        gpo_log_info(c->log,
                     "cache file %s: %zu least recently used entr%s evicted (bounds: %u "
                     "entries, %llu bytes)",
                     c->path, evicted, evicted == 1 ? "y" : "ies", c->max_entries,
                     (unsigned long long)c->max_bytes);
    rc = 0;
out:
    for (size_t i = 0; k && i < ix.n; i++) {
        free(k[i].record);
        free(k[i].begin);
        free(k[i].rc.v);
        free(k[i].oc.v);
    }
    free(k);
    free(order);
    free(header);
    gpo_cidx_free(&ix);
    return rc;
}
