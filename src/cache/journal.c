/* A journal's lines and the in-memory index built from them: one item per
 * hard key with its newest finished record, its newest unfinished tune and
 * its last use. Later lines win, so reading a file front to back, or only
 * its new tail, gives the same index as the writers meant. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/journal.h"
#include "util/strutil.h"

void gpo_cidx_init(gpo_cidx *ix)
{
    memset(ix, 0, sizeof *ix);
}

void gpo_cidx_free(gpo_cidx *ix)
{
    for (size_t i = 0; i < ix->n; i++) {
        free(ix->items[i].canon);
        cJSON_Delete(ix->items[i].record);
        cJSON_Delete(ix->items[i].open_begin);
    }
    free(ix->items);
    free(ix->slots);
    cJSON_Delete(ix->header);
    memset(ix, 0, sizeof *ix);
}

gpo_cidx_item *gpo_cidx_find(gpo_cidx *ix, uint64_t hash)
{
    if (!ix->nslots)
        return NULL;
    size_t mask = ix->nslots - 1;
    for (size_t i = (size_t)hash & mask;; i = (i + 1) & mask) {
        uint32_t s = ix->slots[i];
        if (!s)
            return NULL;
        if (ix->items[s - 1].hash == hash)
            return &ix->items[s - 1];
    }
}

static int grow_slots(gpo_cidx *ix)
{
    size_t n = ix->nslots ? ix->nslots * 2 : 64;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t k = 0; k < ix->n; k++) {
        size_t i = (size_t)ix->items[k].hash & (n - 1);
        while (slots[i])
            i = (i + 1) & (n - 1);
        slots[i] = (uint32_t)(k + 1);
    }
    free(ix->slots);
    ix->slots = slots;
    ix->nslots = n;
    return 0;
}

/* The item of `hash`, created when absent. The caller has checked that the
 * canonical text hashes to `hash`; a different text under the same hash
 * (a real collision) keeps the first and drops the newcomer. */
static gpo_cidx_item *get_item(gpo_cidx *ix, uint64_t hash, char **canon)
{
    gpo_cidx_item *it = gpo_cidx_find(ix, hash);
    if (it) {
        if (strcmp(it->canon, *canon) != 0)
            return NULL;
        return it;
    }
    if ((ix->n + 1) * 2 > ix->nslots && grow_slots(ix))
        return NULL;
    if (ix->n == ix->cap) {
        size_t cap = ix->cap ? ix->cap * 2 : 32;
        gpo_cidx_item *items = realloc(ix->items, cap * sizeof *items);
        if (!items)
            return NULL;
        ix->items = items;
        ix->cap = cap;
    }
    it = &ix->items[ix->n];
    memset(it, 0, sizeof *it);
    it->hash = hash;
    it->canon = *canon;
    *canon = NULL;
    size_t i = (size_t)hash & (ix->nslots - 1);
    while (ix->slots[i])
        i = (i + 1) & (ix->nslots - 1);
    ix->slots[i] = (uint32_t)(++ix->n);
    return it;
}

cJSON *gpo_journal_parse_line(const char *raw, size_t len)
{
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithLengthOpts(raw, len, &end, 0);
    if (!o)
        return NULL;
    while (end && end < raw + len && (*end == ' ' || *end == '\t' || *end == '\r'))
        end++;
    if (!cJSON_IsObject(o) || end != raw + len) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

char *gpo_journal_print(const cJSON *obj, size_t *len)
{
    *len = 0;
    char *s = cJSON_PrintUnformatted(obj);
    if (!s)
        return NULL;
    size_t n = strlen(s);
    if (n + 1 > GPO_CACHE_LINE_MAX) {
        free(s);
        *len = n + 1; /* too long, not out of memory */
        return NULL;
    }
    char *line = realloc(s, n + 2);
    if (!line) {
        free(s);
        return NULL;
    }
    line[n] = '\n';
    line[n + 1] = '\0';
    *len = n + 1;
    return line;
}

cJSON *gpo_journal_header(const gpo_cache_device *dev, int64_t now)
{
    cJSON *h = cJSON_CreateObject(), *d = cJSON_CreateObject();
    /* "t" first: readers recognise lines by their first bytes. Every field
     * is checked, so a short allocation never writes a half header. */
    if (!h || !d || !cJSON_AddStringToObject(h, "t", "header") ||
        !cJSON_AddStringToObject(h, "format", GPO_CACHE_FORMAT) ||
        !cJSON_AddNumberToObject(h, "schema", GPO_CACHE_SCHEMA) ||
        !cJSON_AddStringToObject(d, "backend", dev->backend) ||
        !cJSON_AddStringToObject(d, "arch", dev->arch) ||
        !cJSON_AddNumberToObject(d, "compute_units", dev->compute_units) ||
        !cJSON_AddStringToObject(d, "name", dev->name) ||
        !cJSON_AddStringToObject(d, "uuid", dev->uuid) ||
        !cJSON_AddStringToObject(d, "pci", dev->pci) || !cJSON_AddItemToObject(h, "device", d)) {
        cJSON_Delete(h);
        cJSON_Delete(d);
        return NULL;
    }
    if (!cJSON_AddNumberToObject(h, "created", (double)now) ||
        !cJSON_AddStringToObject(h, "library", gpuopt_version())) {
        cJSON_Delete(h);
        return NULL;
    }
    return h;
}

const char *gpo_journal_status_name(int status)
{
    switch (status) {
    case GPO_J_OK: return "ok";
    case GPO_J_EMPTY: return "empty";
    case GPO_J_CORRUPT: return "corrupt";
    case GPO_J_NEWER: return "newer-schema";
    case GPO_J_OLDER: return "older-schema";
    default: return "unknown";
    }
}

static int hex16(const cJSON *o, const char *name, uint64_t *v)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(f) && gpo_cache_parse16(f->valuestring, v) == 0 ? 0 : -1;
}

static int64_t num(const cJSON *o, const char *name)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(f) ? (int64_t)f->valuedouble : 0;
}

static void set_tune(char dst[17], const cJSON *o)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "tune");
    uint64_t v;
    if (cJSON_IsString(f) && gpo_cache_parse16(f->valuestring, &v) == 0)
        gpo_strlcpy(dst, f->valuestring, 17);
    else
        dst[0] = '\0';
}

static void use(gpo_cidx_item *it, int64_t t)
{
    if (t > it->used)
        it->used = t;
}

/* The item a "begin" or "entry" line names, after checking that its "key"
 * is the hash of its "hard" key. NULL with `why` set when not. */
static gpo_cidx_item *keyed_item(gpo_cidx *ix, const cJSON *o, char *why, size_t cap)
{
    uint64_t key;
    gpo_cache_key k;
    const cJSON *hard = cJSON_GetObjectItemCaseSensitive(o, "hard");
    if (hex16(o, "key", &key) || gpo_cache_key_from_json(hard, &k)) {
        gpo_snprintf(why, cap, "a record without a valid key");
        return NULL;
    }
    char *canon = NULL;
    uint64_t h = 0;
    if (gpo_cache_key_canon(&k, &canon, &h) || h != key) {
        free(canon);
        gpo_snprintf(why, cap, "a record whose key is not the hash of its hard key");
        return NULL;
    }
    gpo_cidx_item *it = get_item(ix, h, &canon);
    free(canon);
    if (!it)
        gpo_snprintf(why, cap, "a record the index could not take (memory or hash collision)");
    return it;
}

static int quick_cand(const char *raw, size_t len)
{
    static const char pre[] = "{\"t\":\"cand\",\"key\":\"";
    size_t p = sizeof pre - 1;
    if (len < p + 18 || memcmp(raw, pre, p) != 0 || raw[len - 1] != '}' || raw[p + 16] != '"')
        return 0;
    for (size_t i = p; i < p + 16; i++) {
        char c = raw[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return 0;
    }
    return 1;
}

static int check_cand(const cJSON *o, char *why, size_t cap)
{
    uint64_t v;
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "status");
    if (hex16(o, "key", &v) || hex16(o, "tune", &v)) {
        gpo_snprintf(why, cap, "a candidate without a valid key or tune id");
        return -1;
    }
    if (gpo_cache_params_valid(cJSON_GetObjectItemCaseSensitive(o, "params"), why, cap))
        return -1;
    if (!cJSON_IsString(st) || gpo_cache_status_parse(st->valuestring) < 0) {
        gpo_snprintf(why, cap, "a candidate with an unknown status");
        return -1;
    }
    return 0;
}

/* Applies one record line. 0 on success (unknown kinds are skipped: a
 * later library of the same schema may add some); -1 with `why`.
 * `finished` (17 bytes) receives the tune id of an "entry" line ("" for
 * any other). */
static int apply_line(gpo_cidx *ix, const char *raw, size_t len, int strict, size_t *cands,
                      char *finished, char *why, size_t cap)
{
    finished[0] = '\0';
    if (!strict && quick_cand(raw, len)) {
        (*cands)++;
        return 0;
    }
    cJSON *o = gpo_journal_parse_line(raw, len);
    if (!o) {
        gpo_snprintf(why, cap, "not a JSON object");
        return -1;
    }
    int rc = -1;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "t");
    const char *type = cJSON_IsString(t) ? t->valuestring : "";
    uint64_t key;
    gpo_cidx_item *it;
    if (strcmp(type, "begin") == 0 || strcmp(type, "entry") == 0) {
        if (!(it = keyed_item(ix, o, why, cap)))
            goto out;
        char tune[17];
        set_tune(tune, o);
        use(it, num(o, "time"));
        use(it, num(o, "used"));
        if (type[0] == 'b') {
            if (!tune[0]) {
                gpo_snprintf(why, cap, "a begin record without a tune id");
                goto out;
            }
            cJSON_Delete(it->open_begin);
            it->open_begin = o;
            memcpy(it->open_tune, tune, sizeof tune);
        } else {
            cJSON_Delete(it->record);
            it->record = o;
            memcpy(it->record_tune, tune, sizeof tune);
            memcpy(finished, tune, sizeof tune);
            if (tune[0] && strcmp(tune, it->open_tune) == 0) {
                cJSON_Delete(it->open_begin);
                it->open_begin = NULL;
                it->open_tune[0] = '\0';
            }
        }
        o = NULL;
    } else if (strcmp(type, "cand") == 0) {
        if (check_cand(o, why, cap))
            goto out;
        (*cands)++;
    } else if (strcmp(type, "verify") == 0 || strcmp(type, "touch") == 0) {
        if (hex16(o, "key", &key)) {
            gpo_snprintf(why, cap, "a %s record without a valid key", type);
            goto out;
        }
        /* A key that is not here was evicted or cleared: nothing to do. */
        if ((it = gpo_cidx_find(ix, key))) {
            use(it, num(o, "time"));
            if (type[0] == 'v' && it->record) {
                if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ok"))) {
                    cJSON *soft = cJSON_DetachItemFromObjectCaseSensitive(o, "soft");
                    if (soft)
                        cJSON_ReplaceItemInObjectCaseSensitive(it->record, "soft", soft);
                } else {
                    cJSON_Delete(it->record);
                    it->record = NULL;
                    it->record_tune[0] = '\0';
                }
            }
        }
    } else if (strcmp(type, "header") == 0) {
        gpo_snprintf(why, cap, "a second header");
        goto out;
    }
    rc = 0;
out:
    cJSON_Delete(o);
    return rc;
}

/* The header decides whether the rest may be read at all. */
static void apply_header(gpo_cidx *ix, const char *raw, size_t len, gpo_journal_scan *scan)
{
    cJSON *o = gpo_journal_parse_line(raw, len);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "t");
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "format");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "schema");
    if (!cJSON_IsString(t) || strcmp(t->valuestring, "header") != 0 || !cJSON_IsString(f) ||
        strcmp(f->valuestring, GPO_CACHE_FORMAT) != 0 || !cJSON_IsNumber(s)) {
        scan->status = GPO_J_CORRUPT;
        gpo_snprintf(scan->problem, sizeof scan->problem, "the first line is not a %s header",
                     GPO_CACHE_FORMAT);
        cJSON_Delete(o);
        return;
    }
    scan->schema = s->valueint;
    if (s->valueint > GPO_CACHE_SCHEMA) {
        scan->status = GPO_J_NEWER;
        gpo_snprintf(scan->problem, sizeof scan->problem,
                     "schema %d is newer than this library's %d", s->valueint, GPO_CACHE_SCHEMA);
    } else if (s->valueint < GPO_CACHE_SCHEMA) {
        scan->status = GPO_J_OLDER;
        gpo_snprintf(scan->problem, sizeof scan->problem,
                     "schema %d is older than this library's %d", s->valueint, GPO_CACHE_SCHEMA);
    }
    cJSON_Delete(ix->header);
    ix->header = o;
}

/* A "begin" line as cache.c writes it: {"t":"begin","key":"<16 hex>",
 * "tune":"<16 hex>",...; its tune id in tune[17]. */
static int quick_begin(const char *raw, size_t len, char tune[17])
{
    static const char pre[] = "{\"t\":\"begin\",\"key\":\"", mid[] = "\",\"tune\":\"";
    size_t p = sizeof pre - 1, m = sizeof mid - 1;
    if (len < p + 16 + m + 17 || memcmp(raw, pre, p) != 0 || memcmp(raw + p + 16, mid, m) != 0 ||
        raw[p + 16 + m + 16] != '"')
        return 0;
    memcpy(tune, raw + p + 16 + m, 16);
    tune[16] = '\0';
    uint64_t v;
    return gpo_cache_parse16(tune, &v) == 0;
}

/* A begin line put off until the end of its chunk: most are followed by
 * their tune's entry there, which supersedes them, so they need no parse. */
typedef struct deferred {
    size_t pos, n, line;
    char tune[17];
} deferred;

typedef struct deferrals {
    deferred *v;
    size_t n, cap;
} deferrals;

static int defer(deferrals *d, size_t pos, size_t n, size_t line, const char *tune)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        deferred *v = realloc(d->v, cap * sizeof *v);
        if (!v)
            return -1;
        d->v = v;
        d->cap = cap;
    }
    d->v[d->n++] = (deferred){pos, n, line, {0}};
    memcpy(d->v[d->n - 1].tune, tune, 17);
    return 0;
}

/* Applies line `line` (buf[pos, pos + n)); 0, or -1 when the chunk must
 * stop there (a bad line without GPO_J_SKIP_BAD). */
static int apply_at(gpo_cidx *ix, const char *buf, size_t pos, size_t n, size_t line, int flags,
                    char *finished, gpo_journal_scan *scan)
{
    if (n <= GPO_CACHE_LINE_MAX && !apply_line(ix, buf + pos, n, flags & GPO_J_STRICT, &scan->cands,
                                               finished, scan->problem, sizeof scan->problem))
        return 0;
    if (n > GPO_CACHE_LINE_MAX)
        gpo_snprintf(scan->problem, sizeof scan->problem, "a line of %zu bytes", n);
    if (!scan->bad)
        scan->bad_line = line;
    scan->bad++;
    if (flags & GPO_J_SKIP_BAD)
        return 0;
    scan->status = GPO_J_CORRUPT;
    return -1;
}

void gpo_journal_apply(gpo_cidx *ix, const char *buf, size_t len, size_t first_line, int flags,
                       gpo_journal_scan *scan)
{
    memset(scan, 0, sizeof *scan);
    scan->status = GPO_J_OK;
    scan->schema = ix->header ? GPO_CACHE_SCHEMA : 0;
    deferrals d = {NULL, 0, 0};
    size_t pos = 0, line = first_line;
    char tune[17];
    while (pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        if (!nl)
            break;
        size_t n = (size_t)(nl - (buf + pos));
        if (n && buf[pos + n - 1] == '\r')
            n--;
        if (line == 1) {
            apply_header(ix, buf + pos, n, scan);
            if (scan->status != GPO_J_OK) {
                scan->bad_line = 1;
                goto out;
            }
        } else if (flags & GPO_J_STRICT || !quick_begin(buf + pos, n, tune) ||
                   defer(&d, pos, n, line, tune)) {
            if (apply_at(ix, buf, pos, n, line, flags, tune, scan))
                goto out;
            for (size_t i = 0; tune[0] && i < d.n; i++)
                if (strcmp(d.v[i].tune, tune) == 0)
                    d.v[i].tune[0] = '\0'; /* finished: nothing to keep of it */
        }
        pos = (size_t)(nl - buf) + 1;
        scan->consumed = pos;
        scan->lines++;
        ix->lines++;
        line++;
    }
    scan->torn = len - pos;
    /* The begins whose tune did not finish in this chunk, in file order. */
    for (size_t i = 0; i < d.n; i++)
        if (d.v[i].tune[0] &&
            apply_at(ix, buf, d.v[i].pos, d.v[i].n, d.v[i].line, flags, tune, scan))
            goto out;
    if (!ix->header && scan->status == GPO_J_OK)
        scan->status = GPO_J_EMPTY;
out:
    free(d.v);
}

void gpo_journal_each(const char *buf, size_t len, gpo_journal_line_fn fn, void *user)
{
    size_t pos = 0;
    while (pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        if (!nl)
            return;
        size_t n = (size_t)(nl - (buf + pos));
        if (n && buf[pos + n - 1] == '\r')
            n--;
        cJSON *o = n <= GPO_CACHE_LINE_MAX ? gpo_journal_parse_line(buf + pos, n) : NULL;
        if (o)
            fn(o, buf + pos, n, user);
        cJSON_Delete(o);
        pos = (size_t)(nl - buf) + 1;
    }
}

/* ---- files ------------------------------------------------------------------- */

int gpo_journal_lock(int fd, int op)
{
    while (flock(fd, op) != 0)
        if (errno != EINTR)
            return -1;
    return 0;
}

int gpo_journal_write(int fd, const char *buf, size_t n)
{
    while (n) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

int gpo_journal_slurp(int fd, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    struct stat st;
    if (fstat(fd, &st))
        return -1;
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *b = malloc(cap);
    if (!b)
        return -1;
    for (;;) {
        if (n + 1 == cap) {
            char *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                return -1;
            }
            b = nb;
            cap *= 2;
        }
        ssize_t r = pread(fd, b + n, cap - 1 - n, (off_t)n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(b);
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}
