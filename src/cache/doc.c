/* A cache file's content both ways (doc.h). Everything read is checked
 * before it is kept: a file is data from disk, and what it says reaches
 * plans and tuning results. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cache/doc.h"
#include "util/strutil.h"

void gpo_cache_doc_init(gpo_cache_doc *d)
{
    memset(d, 0, sizeof *d);
}

static void item_free(gpo_cache_item *it)
{
    free(it->canon);
    cJSON_Delete(it->record);
    cJSON_Delete(it->cands);
    cJSON_Delete(it->open);
}

void gpo_cache_doc_free(gpo_cache_doc *d)
{
    for (size_t i = 0; i < d->n; i++)
        item_free(&d->items[i]);
    free(d->items);
    cJSON_Delete(d->device);
    memset(d, 0, sizeof *d);
}

const char *gpo_cache_doc_status_name(int status)
{
    switch (status) {
    case GPO_DOC_OK: return "ok";
    case GPO_DOC_EMPTY: return "empty";
    case GPO_DOC_CORRUPT: return "corrupt";
    case GPO_DOC_NEWER: return "newer-schema";
    case GPO_DOC_OLDER: return "older-schema";
    default: return "unknown";
    }
}

gpo_cache_item *gpo_cache_doc_find(gpo_cache_doc *d, uint64_t hash)
{
    size_t lo = 0, hi = d->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->items[mid].hash == hash)
            return &d->items[mid];
        if (d->items[mid].hash < hash)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

gpo_cache_item *gpo_cache_doc_item(gpo_cache_doc *d, uint64_t hash, const char *canon)
{
    gpo_cache_item *it = gpo_cache_doc_find(d, hash);
    if (it)
        return it;
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        gpo_cache_item *items = realloc(d->items, cap * sizeof *items);
        if (!items)
            return NULL;
        d->items = items;
        d->cap = cap;
    }
    char *copy = gpo_strdup(canon);
    if (!copy)
        return NULL;
    size_t at = 0;
    while (at < d->n && d->items[at].hash < hash)
        at++;
    memmove(&d->items[at + 1], &d->items[at], (d->n - at) * sizeof *d->items);
    d->n++;
    it = &d->items[at];
    memset(it, 0, sizeof *it);
    it->hash = hash;
    it->canon = copy;
    return it;
}

/* ---- checks --------------------------------------------------------------------- */

/* Seconds since the epoch: an integer from 0 to 2^53 (what a double holds
 * exactly), so converting it is always defined. */
static int read_time(const cJSON *o, const char *name, int64_t *out)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!cJSON_IsNumber(f) || !(f->valuedouble >= 0 && f->valuedouble <= 9007199254740992.0) ||
        f->valuedouble != floor(f->valuedouble))
        return -1;
    *out = (int64_t)f->valuedouble;
    return 0;
}

static int is_string(const cJSON *o, const char *name)
{
    return cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, name));
}

static int bad(char *why, size_t cap, const char *what)
{
    gpo_snprintf(why, cap, "%s", what);
    return -1;
}

/* The fields a record and an unfinished tune share: the hard key (whose
 * hash must be "key"), soft fields, time, tune id, search settings, and
 * the candidates. */
static int check_tune(const cJSON *o, uint64_t *hash, char **canon, int64_t *time, char *why,
                      size_t cap)
{
    gpo_cache_key k;
    uint64_t key;
    const cJSON *kf = cJSON_GetObjectItemCaseSensitive(o, "key");
    const cJSON *soft = cJSON_GetObjectItemCaseSensitive(o, "soft");
    const cJSON *budget = cJSON_GetObjectItemCaseSensitive(o, "budget");
    const cJSON *cands = cJSON_GetObjectItemCaseSensitive(o, "candidates"), *c;
    if (!cJSON_IsObject(o) || !cJSON_IsString(kf) || gpo_cache_parse16(kf->valuestring, &key) ||
        gpo_cache_key_from_json(cJSON_GetObjectItemCaseSensitive(o, "hard"), &k))
        return bad(why, cap, "no valid key");
    if (gpo_cache_key_canon(&k, canon, hash) != GPUOPT_OK || *hash != key) {
        free(*canon);
        *canon = NULL;
        return bad(why, cap, "its key is not the hash of its hard key");
    }
    if (!cJSON_IsObject(soft))
        return bad(why, cap, "no soft fields");
    for (uint32_t bit = 1; bit <= GPO_SOFT_DEVICE_NAME; bit <<= 1) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(soft, gpo_cache_soft_name(bit));
        if (f && !cJSON_IsString(f))
            return bad(why, cap, "soft fields that are not text");
    }
    if (read_time(o, "time", time))
        return bad(why, cap, "its time is not seconds since the epoch");
    if (!is_string(o, "tune") || !is_string(o, "strategy") || !is_string(o, "seed") ||
        (budget && !cJSON_IsObject(budget)))
        return bad(why, cap, "no valid search settings");
    if (cands && !cJSON_IsArray(cands))
        return bad(why, cap, "candidates that are not a list");
    cJSON_ArrayForEach(c, cands)
    {
        if (gpo_cache_candidate_valid(c, NULL, why, cap))
            return -1;
    }
    return 0;
}

/* What only a finished record has. */
static int check_record(const cJSON *o, int64_t *used, char *why, size_t cap)
{
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(o, "best");
    const cJSON *runner = cJSON_GetObjectItemCaseSensitive(o, "runner_up");
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "evaluated");
    const cJSON *wall = cJSON_GetObjectItemCaseSensitive(o, "wall_s");
    const cJSON *payload = cJSON_GetObjectItemCaseSensitive(o, "payload");
    if (!cJSON_IsNull(best) && gpo_cache_candidate_valid(best, NULL, why, cap))
        return -1;
    if (!cJSON_IsNull(runner) &&
        (cJSON_IsNull(best) || gpo_cache_candidate_valid(runner, NULL, why, cap)))
        return cJSON_IsNull(best) ? bad(why, cap, "a runner-up without a best") : -1;
    if (!cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(o, "complete")) || !cJSON_IsNumber(ev) ||
        !(ev->valuedouble >= 0 && ev->valuedouble <= INT32_MAX) || !cJSON_IsNumber(wall) ||
        !isfinite(wall->valuedouble) || wall->valuedouble < -1)
        return bad(why, cap, "no valid search outcome");
    if (!cJSON_IsNull(payload) && !cJSON_IsObject(payload))
        return bad(why, cap, "a payload that is not an object");
    int64_t t = *used;
    if (cJSON_GetObjectItemCaseSensitive(o, "used") && read_time(o, "used", &t))
        return bad(why, cap, "its last use is not seconds since the epoch");
    if (t > *used)
        *used = t;
    return 0;
}

/* Takes element `o` (detached) of "records" (is_record) or "unfinished"
 * into the document; a bad one is dropped, with the first problem kept. */
static gpuopt_status take(gpo_cache_doc *d, cJSON *o, int is_record, size_t index)
{
    char why[200], *canon = NULL;
    uint64_t hash = 0;
    int64_t time = 0;
    gpo_cache_item *it = NULL;
    gpuopt_status st = GPUOPT_OK;
    int rc = check_tune(o, &hash, &canon, &time, why, sizeof why);
    if (!rc && is_record)
        rc = check_record(o, &time, why, sizeof why);
    if (!rc) {
        it = gpo_cache_doc_find(d, hash);
        if (it && (is_record ? it->record != NULL : it->open != NULL))
            rc = bad(why, sizeof why, "a second one of its key");
        else if (!it && !(it = gpo_cache_doc_item(d, hash, canon)))
            st = GPUOPT_ERR_NO_MEMORY;
    }
    free(canon);
    if (rc) {
        if (!d->dropped++)
            gpo_snprintf(d->problem, sizeof d->problem, "%s %zu: %s",
                         is_record ? "record" : "unfinished tune", index, why);
        cJSON_Delete(o);
        return GPUOPT_OK;
    }
    if (st) {
        cJSON_Delete(o);
        return st;
    }
    if (time > it->used)
        it->used = time;
    if (!is_record) {
        it->open = o;
        return GPUOPT_OK;
    }
    /* Candidates apart, so a hit copies only the record; "used" kept up to
     * date in place (printing sets it without allocating). */
    it->cands = cJSON_DetachItemFromObjectCaseSensitive(o, "candidates");
    it->record = o;
    cJSON *u = cJSON_GetObjectItemCaseSensitive(o, "used");
    if (u)
        cJSON_SetNumberValue(u, (double)it->used);
    else if (!cJSON_AddNumberToObject(o, "used", (double)it->used))
        return GPUOPT_ERR_NO_MEMORY;
    return GPUOPT_OK;
}

gpuopt_status gpo_cache_doc_parse(gpo_cache_doc *d, const char *buf, size_t len)
{
    assert(d->n == 0);
    d->status = GPO_DOC_EMPTY;
    if (!len)
        return GPUOPT_OK;
    /* cJSON cannot tell a syntax error from a failed allocation: a text
     * is called corrupt only when a second parse fails too (a writer would
     * otherwise set aside a sound file after one failed allocation). */
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
    if (!root)
        root = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
    while (root && end && end < buf + len && strchr(" \t\r\n", *end))
        end++;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "schema");
    d->status = GPO_DOC_CORRUPT;
    if (!root || end != buf + len || !cJSON_IsObject(root)) {
        gpo_snprintf(d->problem, sizeof d->problem, "not one JSON object");
    } else if (!cJSON_IsString(f) || strcmp(f->valuestring, GPO_CACHE_FORMAT) != 0 ||
               !cJSON_IsNumber(s) || !(s->valuedouble >= 0 && s->valuedouble < 1e6)) {
        gpo_snprintf(d->problem, sizeof d->problem, "not a %s file", GPO_CACHE_FORMAT);
    } else {
        d->schema = (int)s->valuedouble;
        d->status = d->schema > GPO_CACHE_SCHEMA   ? GPO_DOC_NEWER
                    : d->schema < GPO_CACHE_SCHEMA ? GPO_DOC_OLDER
                                                   : GPO_DOC_OK;
        if (d->status != GPO_DOC_OK)
            gpo_snprintf(d->problem, sizeof d->problem, "schema %d is %s than this library's %d",
                         d->schema, d->status == GPO_DOC_NEWER ? "newer" : "older",
                         GPO_CACHE_SCHEMA);
    }
    if (d->status == GPO_DOC_OK && cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "device")))
        d->device = cJSON_DetachItemFromObjectCaseSensitive(root, "device");
    static const char *const lists[2] = {"records", "unfinished"};
    for (int l = 0; l < 2 && d->status == GPO_DOC_OK; l++) {
        cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, lists[l]);
        if (arr && !cJSON_IsArray(arr)) {
            d->status = GPO_DOC_CORRUPT;
            gpo_snprintf(d->problem, sizeof d->problem, "\"%s\" is not a list", lists[l]);
            break;
        }
        for (size_t i = 0; arr && arr->child; i++) {
            gpuopt_status st = take(d, cJSON_DetachItemViaPointer(arr, arr->child), l == 0, i);
            if (st) {
                cJSON_Delete(root);
                return st;
            }
        }
    }
    cJSON_Delete(root);
    return GPUOPT_OK;
}

/* ---- printing ------------------------------------------------------------------- */

typedef struct printed {
    gpo_cache_item *it;
    char *rec, *cands, *open; /* printed, NULL when absent */
    size_t rec_n, cands_n, open_n;
    int keep, keep_extra;
} printed;

static int by_use(const void *a, const void *b)
{
    const printed *x = *(const printed *const *)a, *y = *(const printed *const *)b;
    if (x->it->used != y->it->used)
        return x->it->used > y->it->used ? -1 : 1;
    return x->it->hash < y->it->hash ? -1 : x->it->hash > y->it->hash;
}

/* Within the bounds everything stays; over one, the most recently used keys
 * are taken first (their record, or their unfinished tune when they have no
 * record), then their candidates and unfinished tunes while bytes remain. */
static void choose(printed **order, size_t n, size_t header_n, uint64_t max_bytes,
                   uint32_t max_entries)
{
    uint64_t total = header_n;
    for (size_t i = 0; i < n; i++)
        total += order[i]->rec_n + order[i]->cands_n + order[i]->open_n + 4; /* ",\n" each */
    int over = total > max_bytes || n > max_entries;
    uint64_t cap_bytes = over ? max_bytes / 4 * 3 : UINT64_MAX;
    size_t cap_keys = over ? (size_t)max_entries * 3 / 4 : n;
    uint64_t bytes = header_n;
    size_t taken = 0;
    for (size_t i = 0; i < n && taken < (cap_keys ? cap_keys : 1); i++) {
        printed *p = order[i];
        uint64_t core = p->rec ? p->rec_n : p->open_n;
        /* The most recent key always stays, even alone over a tiny bound:
         * evicting what was just measured would only measure it again. */
        if (i > 0 && bytes + core > cap_bytes)
            continue;
        bytes += core;
        p->keep = 1;
        taken++;
    }
    for (size_t i = 0; i < n; i++) {
        printed *p = order[i];
        uint64_t extra = p->cands_n + (p->rec ? p->open_n : 0);
        if (p->keep && (!extra || bytes + extra <= cap_bytes)) {
            bytes += extra;
            p->keep_extra = 1;
        }
    }
}

static char *print_json(const cJSON *o, size_t *n)
{
    char *s = cJSON_PrintUnformatted(o);
    *n = s ? strlen(s) : 0;
    return s;
}

/* The header's fields, without the closing brace. */
static char *print_header(const gpo_cache_device *dev, int64_t now, size_t *n)
{
    cJSON *h = cJSON_CreateObject(), *dv = cJSON_CreateObject();
    char *text = NULL;
    if (h && dv && cJSON_AddStringToObject(h, "format", GPO_CACHE_FORMAT) &&
        cJSON_AddNumberToObject(h, "schema", GPO_CACHE_SCHEMA) &&
        cJSON_AddStringToObject(dv, "backend", dev->backend) &&
        cJSON_AddStringToObject(dv, "arch", dev->arch) &&
        cJSON_AddNumberToObject(dv, "compute_units", dev->compute_units) &&
        cJSON_AddStringToObject(dv, "name", dev->name) &&
        cJSON_AddStringToObject(dv, "uuid", dev->uuid) &&
        cJSON_AddStringToObject(dv, "pci", dev->pci) && cJSON_AddItemToObject(h, "device", dv)) {
        dv = NULL;
        if (cJSON_AddStringToObject(h, "library", gpuopt_version()) &&
            cJSON_AddNumberToObject(h, "written", (double)now))
            text = cJSON_PrintUnformatted(h);
    }
    cJSON_Delete(dv);
    cJSON_Delete(h);
    if (text)
        text[strlen(text) - 1] = '\0';
    *n = text ? strlen(text) + 30 : 0;
    return text;
}

/* A list's lines: records with their candidates spliced in before the
 * closing brace (kept apart in memory), or unfinished tunes. */
static void print_list(gpo_sbuf *b, const char *name, printed *p, size_t n, int records)
{
    int first = 1;
    gpo_sbuf_appendf(b, ",\n\"%s\":[", name);
    for (size_t i = 0; i < n; i++) {
        /* An unfinished tune beside a record is an extra; alone, the core. */
        const char *text = records ? p[i].rec : p[i].rec && !p[i].keep_extra ? NULL : p[i].open;
        if (!p[i].keep || !text)
            continue;
        gpo_sbuf_append(b, first ? "\n" : ",\n");
        first = 0;
        if (records && p[i].cands && p[i].keep_extra)
            gpo_sbuf_appendf(b, "%.*s,\"candidates\":%s}", (int)(p[i].rec_n - 1), text, p[i].cands);
        else
            gpo_sbuf_append(b, text);
    }
    gpo_sbuf_append(b, first ? "]" : "\n]");
}

char *gpo_cache_doc_print(gpo_cache_doc *d, const gpo_cache_device *dev, int64_t now,
                          uint64_t max_bytes, uint32_t max_entries, size_t *len, size_t *evicted)
{
    *len = 0;
    *evicted = 0;
    size_t header_n = 0, n = 0, all = d->n;
    char *header = print_header(dev, now, &header_n), *out = NULL;
    printed *p = calloc(d->n ? d->n : 1, sizeof *p);
    printed **order = calloc(d->n ? d->n : 1, sizeof *order);
    if (!header || !p || !order)
        goto out;
    for (size_t i = 0; i < d->n; i++) {
        gpo_cache_item *it = &d->items[i];
        p[i].it = it;
        if (it->record)
            cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(it->record, "used"),
                                 (double)it->used);
        if ((it->record && !(p[i].rec = print_json(it->record, &p[i].rec_n))) ||
            (it->cands && !(p[i].cands = print_json(it->cands, &p[i].cands_n))) ||
            (it->open && !(p[i].open = print_json(it->open, &p[i].open_n))))
            goto out;
        if (p[i].cands)
            p[i].cands_n += 13; /* ,"candidates": */
        if (it->record || it->open)
            order[n++] = &p[i];
    }
    qsort(order, n, sizeof *order, by_use);
    choose(order, n, header_n, max_bytes, max_entries);
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    gpo_sbuf_append(&b, header);
    print_list(&b, "records", p, d->n, 1);
    print_list(&b, "unfinished", p, d->n, 0);
    gpo_sbuf_append(&b, "}\n");
    if (!(out = gpo_sbuf_take(&b)))
        goto out;
    *len = strlen(out);
    /* The document becomes what was printed. */
    size_t kept = 0;
    for (size_t i = 0; i < all; i++) {
        gpo_cache_item *it = &d->items[i];
        if (!p[i].keep) {
            *evicted += it->record || it->open;
            item_free(it);
            continue;
        }
        if (!p[i].keep_extra) {
            cJSON_Delete(it->cands);
            it->cands = NULL;
            if (it->record) {
                cJSON_Delete(it->open);
                it->open = NULL;
            }
        }
        d->items[kept++] = *it;
    }
    d->n = kept;
out:
    for (size_t i = 0; p && i < all; i++) {
        free(p[i].rec);
        free(p[i].cands);
        free(p[i].open);
    }
    free(p);
    free(order);
    free(header);
    return out;
}
