/* A cache file's content both ways (doc.h). Everything read is checked
 * before it is used: a file is data from disk, and what it says reaches
 * plans and tuning results. */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/doc.h"
#include "util/strutil.h"

static const char *const line_kinds[2] = {"record", "unfinished"};

void gpo_cache_doc_init(gpo_cache_doc *d)
{
    memset(d, 0, sizeof *d);
}

static void item_free(gpo_cache_item *it)
{
    free(it->text[0]);
    free(it->text[1]);
    free(it->canon);
    gpo_cache_doc_drop_record(it);
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
    static const char *const words[] = {"ok", "empty", "corrupt", "newer-schema", "older-schema"};
    return status >= GPO_DOC_OK && status <= GPO_DOC_OLDER ? words[status] : "unknown";
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

/* A new empty item of `hash` (absent), in order; NULL without memory. */
static gpo_cache_item *insert(gpo_cache_doc *d, uint64_t hash)
{
    if (gpo_grow(&d->items, sizeof *d->items, d->n, &d->cap, 16))
        return NULL;
    size_t at = d->n;
    while (at > 0 && d->items[at - 1].hash > hash) /* files come sorted: no move */
        at--;
    memmove(&d->items[at + 1], &d->items[at], (d->n - at) * sizeof *d->items);
    d->n++;
    memset(&d->items[at], 0, sizeof d->items[at]);
    d->items[at].hash = hash;
    return &d->items[at];
}

gpo_cache_item *gpo_cache_doc_item(gpo_cache_doc *d, uint64_t hash, const char *canon)
{
    gpo_cache_item *it = gpo_cache_doc_find(d, hash);
    if (it && gpo_cache_doc_read(d, it))
        return NULL;
    if (it && it->canon)
        return it;
    char *copy = gpo_strdup(canon); /* new, or every line of it failed */
    if (!copy || (!it && !(it = insert(d, hash)))) {
        free(copy);
        return NULL;
    }
    it->canon = copy;
    it->read = 1;
    return it;
}

void gpo_cache_doc_drop_record(gpo_cache_item *it)
{
    cJSON_Delete(it->record);
    cJSON_Delete(it->cands);
    free(it->cands_text);
    it->record = it->cands = NULL;
    it->cands_text = NULL;
}

void gpo_cache_doc_changed(gpo_cache_item *it)
{
    assert(it->read);
    for (int w = 0; w < 2; w++) {
        free(it->text[w]);
        it->text[w] = NULL;
    }
}

static void GPO_PRINTF(2, 3) problem(gpo_cache_doc *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!d->dropped++)
        vsnprintf(d->problem, sizeof d->problem, fmt, ap);
    va_end(ap);
}

/* ---- indexing -------------------------------------------------------------------- */

/* A line's kind, key and last use from its first bytes, as this library
 * prints them: {"t":"record","key":"<16 hex>","used":<digits>,... */
static int line_head(const char *s, size_t n, int *which, uint64_t *hash, int64_t *used)
{
    for (int w = 0; w < 2; w++) {
        char pre[40], hex[17];
        int p = snprintf(pre, sizeof pre, "{\"t\":\"%s\",\"key\":\"", line_kinds[w]);
        if (n < (size_t)p + 16 + 10 || memcmp(s, pre, (size_t)p) != 0)
            continue;
        memcpy(hex, s + p, 16);
        hex[16] = '\0';
        const char *q = s + p + 16, *end = s + n;
        if (gpo_cache_parse16(hex, hash) || memcmp(q, "\",\"used\":", 9) != 0)
            return -1;
        int64_t v = 0;
        int digits = 0;
        /* At most 15 digits: under 2^53, what a double holds exactly. */
        for (q += 9; q < end && *q >= '0' && *q <= '9' && digits < 16; q++, digits++)
            v = v * 10 + (*q - '0');
        if (!digits || digits > 15 || q >= end || *q != ',')
            return -1;
        *which = w;
        *used = v;
        return 0;
    }
    return -1;
}

/* One JSON value of `type` (cJSON_Object, cJSON_Array), nothing after it
 * but blanks; NULL otherwise. cJSON cannot tell a syntax error from a
 * failed allocation, so a text is given up only when a second parse fails
 * too (a writer would otherwise set aside a sound file after one failed
 * allocation). */
static cJSON *parse_text(const char *s, size_t n, int type)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        const char *end = NULL;
        cJSON *o = cJSON_ParseWithLengthOpts(s, n, &end, 0);
        while (o && end && end < s + n && strchr(" \t\r", *end))
            end++;
        if (o && (end != s + n || (o->type & 0xFF) != type)) {
            cJSON_Delete(o);
            return NULL;
        }
        if (o)
            return o;
    }
    return NULL;
}

static int header(gpo_cache_doc *d, const char *s, size_t n)
{
    cJSON *h = parse_text(s, n, cJSON_Object);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(h, "t");
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(h, "format");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(h, "schema");
    d->status = GPO_DOC_CORRUPT;
    if (!cJSON_IsString(t) || strcmp(t->valuestring, "header") != 0 || !cJSON_IsString(f) ||
        strcmp(f->valuestring, GPO_CACHE_FORMAT) != 0 || !cJSON_IsNumber(v) ||
        !(v->valuedouble >= 0 && v->valuedouble < 1e6)) {
        gpo_snprintf(d->problem, sizeof d->problem, "the first line is not a %s header",
                     GPO_CACHE_FORMAT);
    } else {
        d->schema = (int)v->valuedouble;
        d->status = d->schema > GPO_CACHE_SCHEMA   ? GPO_DOC_NEWER
                    : d->schema < GPO_CACHE_SCHEMA ? GPO_DOC_OLDER
                                                   : GPO_DOC_OK;
        if (d->status != GPO_DOC_OK)
            gpo_snprintf(d->problem, sizeof d->problem, "schema %d is %s than this library's %d",
                         d->schema, d->status == GPO_DOC_NEWER ? "newer" : "older",
                         GPO_CACHE_SCHEMA);
        cJSON *dev = cJSON_DetachItemFromObjectCaseSensitive(h, "device");
        if (cJSON_IsObject(dev))
            d->device = dev;
        else
            cJSON_Delete(dev);
    }
    cJSON_Delete(h);
    return d->status == GPO_DOC_OK ? 0 : -1;
}

gpuopt_status gpo_cache_doc_parse(gpo_cache_doc *d, const char *buf, size_t len)
{
    assert(d->n == 0);
    d->status = GPO_DOC_EMPTY;
    const char *end = buf + len, *nl = len ? memchr(buf, '\n', len) : NULL;
    if (!len || header(d, buf, nl ? (size_t)(nl - buf) : len))
        return GPUOPT_OK;
    size_t line = 1;
    for (const char *s = nl ? nl + 1 : end; s < end; s = nl + 1) {
        nl = memchr(s, '\n', (size_t)(end - s));
        nl = nl ? nl : end;
        size_t n = (size_t)(nl - s);
        int w;
        uint64_t hash;
        int64_t used;
        gpo_cache_item *it;
        line++;
        if (!n)
            continue;
        if (line_head(s, n, &w, &hash, &used)) {
            problem(d, "line %zu: not a %s entry", line, GPO_CACHE_FORMAT);
            continue;
        }
        if ((it = gpo_cache_doc_find(d, hash)) && it->text[w]) {
            problem(d, "line %zu: a second %s of one key", line, line_kinds[w]);
            continue;
        }
        if ((!it && !(it = insert(d, hash))) || !(it->text[w] = malloc(n + 1)))
            return GPUOPT_ERR_NO_MEMORY;
        memcpy(it->text[w], s, n);
        it->text[w][n] = '\0';
        it->len[w] = n;
        it->used = used > it->used ? used : it->used;
    }
    return GPUOPT_OK;
}

/* ---- reading a line -------------------------------------------------------------- */

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
    return gpo_say(-1, why, cap, "%s", what);
}

/* What a record and an unfinished tune share: the hard key (whose hash
 * must be `hash`), soft fields, times, tune id, search settings and
 * candidates. 0, -1 with `why`, or -2 without memory. */
static int check_tune(const cJSON *o, uint64_t hash, char **canon, char *why, size_t cap)
{
    gpo_cache_key k;
    uint64_t h = 0;
    int64_t t;
    const cJSON *soft = cJSON_GetObjectItemCaseSensitive(o, "soft");
    const cJSON *budget = cJSON_GetObjectItemCaseSensitive(o, "budget");
    const cJSON *cands = cJSON_GetObjectItemCaseSensitive(o, "candidates"), *c;
    if (gpo_cache_key_from_json(cJSON_GetObjectItemCaseSensitive(o, "hard"), &k))
        return bad(why, cap, "no valid hard key");
    gpuopt_status st = gpo_cache_key_canon(&k, canon, &h);
    if (st == GPUOPT_ERR_NO_MEMORY)
        return -2;
    if (st || h != hash)
        return bad(why, cap, "its key is not the hash of its hard key");
    if (!cJSON_IsObject(soft))
        return bad(why, cap, "no soft fields");
    for (uint32_t bit = 1; bit <= GPO_SOFT_DEVICE_NAME; bit <<= 1) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(soft, gpo_cache_soft_name(bit));
        if (f && !cJSON_IsString(f))
            return bad(why, cap, "soft fields that are not text");
    }
    if (read_time(o, "time", &t) || read_time(o, "used", &t))
        return bad(why, cap, "a time that is not seconds since the epoch");
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
static int check_record(const cJSON *o, char *why, size_t cap)
{
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(o, "best");
    const cJSON *runner = cJSON_GetObjectItemCaseSensitive(o, "runner_up");
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "evaluated");
    const cJSON *wall = cJSON_GetObjectItemCaseSensitive(o, "wall_s");
    const cJSON *payload = cJSON_GetObjectItemCaseSensitive(o, "payload");
    if (!cJSON_IsNull(best) && gpo_cache_candidate_valid(best, NULL, why, cap))
        return -1;
    if (!cJSON_IsNull(runner) && cJSON_IsNull(best))
        return bad(why, cap, "a runner-up without a best");
    if (!cJSON_IsNull(runner) && gpo_cache_candidate_valid(runner, NULL, why, cap))
        return -1;
    if (!cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(o, "complete")) || !cJSON_IsNumber(ev) ||
        !(ev->valuedouble >= 0 && ev->valuedouble <= INT32_MAX) || !cJSON_IsNumber(wall) ||
        !isfinite(wall->valuedouble) || wall->valuedouble < -1)
        return bad(why, cap, "no valid search outcome");
    if (!cJSON_IsNull(payload) && !cJSON_IsObject(payload))
        return bad(why, cap, "a payload that is not an object");
    return 0;
}

/* Where a record line's candidates start: the last ',"candidates":[' of
 * the line, which this library prints last. A JSON string holds no bare
 * '"', and no candidate holds a list, so nothing after the record's own
 * field can look like it. 0 when the line does not end that way. */
static size_t cands_at(const char *s, size_t n)
{
    static const char key[] = ",\"candidates\":[";
    size_t k = sizeof key - 1;
    if (n < k + 2 || s[n - 1] != '}' || s[n - 2] != ']')
        return 0;
    for (size_t i = n - k - 1; i > 0; i--)
        if (s[i] == ',' && memcmp(s + i, key, k) == 0)
            return i;
    return 0;
}

/* Line `w` of `it` read and checked into the item (a record's candidates
 * kept as text, for gpo_cache_doc_read_cands); a line that fails is
 * dropped. -2 without memory (the line kept as it is). */
static int read_line(gpo_cache_doc *d, gpo_cache_item *it, int w)
{
    char why[200], *canon = NULL, *head = NULL;
    size_t at = w == GPO_LINE_RECORD ? cands_at(it->text[w], it->len[w]) : 0;
    if (at && (!(head = malloc(at + 2)) ||
               !(it->cands_text =
                     gpo_asprintf("%.*s", (int)(it->len[w] - at - 15), it->text[w] + at + 14)))) {
        free(head);
        return -2;
    }
    if (head) {
        memcpy(head, it->text[w], at);
        memcpy(head + at, "}", 2);
    }
    cJSON *o = parse_text(head ? head : it->text[w], head ? at + 1 : it->len[w], cJSON_Object);
    free(head);
    int rc = o ? 0 : bad(why, sizeof why, "not one JSON object");
    if (!rc) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, "t"); /* its kind is where it is kept */
        rc = check_tune(o, it->hash, &canon, why, sizeof why);
    }
    if (!rc && w == GPO_LINE_RECORD)
        rc = check_record(o, why, sizeof why);
    if (rc == -2) {
        free(canon);
        cJSON_Delete(o);
        free(it->cands_text);
        it->cands_text = NULL;
        return -2;
    }
    if (!rc && !it->canon) {
        it->canon = canon;
        canon = NULL;
    }
    free(canon);
    if (rc) {
        char key[17];
        gpo_cache_hex16(it->hash, key);
        problem(d, w ? "the unfinished tune of key %s: %s" : "the record of key %s: %s", key, why);
        cJSON_Delete(o);
        free(it->text[w]);
        it->text[w] = NULL;
        if (w == GPO_LINE_RECORD) {
            free(it->cands_text);
            it->cands_text = NULL;
        }
        return 0;
    }
    if (w == GPO_LINE_OPEN) {
        it->open = o;
    } else {
        it->cands = cJSON_DetachItemFromObjectCaseSensitive(o, "candidates");
        it->record = o;
    }
    return 0;
}

gpuopt_status gpo_cache_doc_read(gpo_cache_doc *d, gpo_cache_item *it)
{
    for (int w = 0; !it->read && w < 2; w++)
        if (it->text[w] && !(w ? it->open : it->record) && read_line(d, it, w) == -2)
            return GPUOPT_ERR_NO_MEMORY;
    it->read = 1;
    return GPUOPT_OK;
}

gpuopt_status gpo_cache_doc_read_cands(gpo_cache_doc *d, gpo_cache_item *it)
{
    if (!it->cands_text)
        return GPUOPT_OK;
    char why[200] = "", key[17];
    cJSON *list = parse_text(it->cands_text, strlen(it->cands_text), cJSON_Array), *c;
    if (!list)
        gpo_snprintf(why, sizeof why, "candidates that are not a list");
    for (c = list ? list->child : NULL; c; c = c->next)
        if (gpo_cache_candidate_valid(c, NULL, why, sizeof why))
            break;
    free(it->cands_text);
    it->cands_text = NULL;
    if (why[0]) {
        gpo_cache_hex16(it->hash, key);
        problem(d, "the record of key %s: %s", key, why);
        cJSON_Delete(list);
        gpo_cache_doc_changed(it); /* printed again without them */
        return GPUOPT_OK;
    }
    it->cands = list;
    return GPUOPT_OK;
}

gpuopt_status gpo_cache_doc_read_all(gpo_cache_doc *d)
{
    for (size_t i = 0; i < d->n; i++)
        if (gpo_cache_doc_read(d, &d->items[i]) || gpo_cache_doc_read_cands(d, &d->items[i]))
            return GPUOPT_ERR_NO_MEMORY;
    return GPUOPT_OK;
}

/* ---- printing ------------------------------------------------------------------- */

/* Line `w` of `it` printed from its objects into it->text[w]; -1 without
 * memory. A record's candidates are spliced in when `cands`. */
static int print_line(gpo_cache_item *it, int w, int cands)
{
    cJSON *o = w ? it->open : it->record;
    cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "used"), (double)it->used);
    char *body = cJSON_PrintUnformatted(o);
    char *list = !w && cands && it->cands ? cJSON_PrintUnformatted(it->cands) : NULL;
    const char *raw = !w && cands && !it->cands ? it->cands_text : list; /* unread: as stored */
    free(it->text[w]);
    it->text[w] = NULL;
    if (body && (raw || w || !cands || !it->cands))
        it->text[w] = gpo_asprintf("{\"t\":\"%s\",%.*s%s%s}", line_kinds[w], (int)strlen(body) - 2,
                                   body + 1, raw ? ",\"candidates\":" : "", raw ? raw : "");
    it->len[w] = it->text[w] ? strlen(it->text[w]) : 0;
    free(body);
    free(list);
    return it->text[w] ? 0 : -1;
}

typedef struct sized {
    gpo_cache_item *it;
    size_t core, extra; /* the line that stays longest, and what goes first */
    int keep, keep_extra;
} sized;

static int by_use(const void *a, const void *b)
{
    const sized *x = a, *y = b;
    if (x->it->used != y->it->used)
        return x->it->used > y->it->used ? -1 : 1;
    return x->it->hash < y->it->hash ? -1 : x->it->hash > y->it->hash;
}

/* Over a bound, the most recently used keys are taken first (their record
 * without candidates, or their unfinished tune when they have no record),
 * then their candidates and unfinished tunes while bytes remain. The
 * items are read and their lines printed apart: a rare path. */
static int evict(gpo_cache_doc *d, size_t header_n, uint64_t max_bytes, uint32_t max_entries,
                 size_t *evicted)
{
    sized *v = calloc(d->n ? d->n : 1, sizeof *v);
    int rc = v && gpo_cache_doc_read_all(d) == GPUOPT_OK ? 0 : -1;
    size_t n = 0;
    for (size_t i = 0; !rc && i < d->n; i++) {
        gpo_cache_item *it = &d->items[i];
        size_t open_n = 0;
        if (!it->record && !it->open)
            continue;
        v[n].it = it;
        if (it->record && !(rc = print_line(it, GPO_LINE_RECORD, 0)))
            v[n].core = it->len[0] + 1;
        if (!rc && it->open && !(rc = print_line(it, GPO_LINE_OPEN, 1)))
            open_n = it->len[1] + 1;
        if (!rc && it->record && it->cands && !(rc = print_line(it, GPO_LINE_RECORD, 1)))
            v[n].extra = it->len[0] + 1 - v[n].core;
        if (it->record)
            v[n].extra += open_n;
        else
            v[n].core = open_n;
        n++;
    }
    if (!rc) {
        qsort(v, n, sizeof *v, by_use);
        uint64_t cap = max_bytes / 4 * 3, bytes = header_n;
        size_t keys = (size_t)max_entries * 3 / 4, taken = 0;
        for (size_t i = 0; i < n; i++)
            /* The most recent key always stays, even alone over a tiny
             * bound: evicting what was just measured would only measure it
             * again. */
            if (i == 0 || (taken < keys && bytes + v[i].core <= cap)) {
                bytes += v[i].core;
                v[i].keep = 1;
                taken++;
            }
        for (size_t i = 0; i < n; i++)
            if (v[i].keep && bytes + v[i].extra <= cap) {
                bytes += v[i].extra;
                v[i].keep_extra = 1;
            }
        for (size_t i = 0; i < n; i++) {
            gpo_cache_item *it = v[i].it;
            if (!v[i].keep) {
                gpo_cache_doc_drop_record(it);
                cJSON_Delete(it->open);
                it->open = NULL;
                ++*evicted;
            } else if (!v[i].keep_extra && v[i].extra) {
                cJSON_Delete(it->cands); /* read: no text left */
                it->cands = NULL;
                if (it->record) {
                    cJSON_Delete(it->open);
                    it->open = NULL;
                }
            }
            gpo_cache_doc_changed(it);
        }
    }
    free(v);
    return rc;
}

/* The header line, with its newline. */
static char *print_header(const gpo_cache_device *dev, int64_t now)
{
    cJSON *h = cJSON_CreateObject(), *dv = cJSON_CreateObject();
    char *text = NULL;
    if (h && dv && cJSON_AddStringToObject(h, "t", "header") &&
        cJSON_AddStringToObject(h, "format", GPO_CACHE_FORMAT) &&
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
    return text;
}

char *gpo_cache_doc_print(gpo_cache_doc *d, const gpo_cache_device *dev, int64_t now,
                          uint64_t max_bytes, uint32_t max_entries, size_t *len, size_t *evicted)
{
    *len = 0;
    *evicted = 0;
    char *header = print_header(dev, now);
    if (!header)
        return NULL;
    uint64_t total = strlen(header) + 1;
    size_t keys = 0;
    for (size_t i = 0; i < d->n; i++) {
        gpo_cache_item *it = &d->items[i];
        for (int w = 0; w < 2; w++)
            if (!it->text[w] && (w ? it->open : it->record) && print_line(it, w, 1)) {
                free(header);
                return NULL;
            }
        total += (it->text[0] ? it->len[0] + 1 : 0) + (it->text[1] ? it->len[1] + 1 : 0);
        keys += it->text[0] || it->text[1];
    }
    int over = total > max_bytes || keys > max_entries;
    if (over && evict(d, strlen(header) + 1, max_bytes, max_entries, evicted)) {
        free(header);
        return NULL;
    }
    for (size_t i = 0; over && i < d->n; i++)
        for (int w = 0; w < 2; w++)
            if ((w ? d->items[i].open : d->items[i].record) && print_line(&d->items[i], w, 1)) {
                free(header);
                return NULL;
            }
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    gpo_sbuf_appendf(&b, "%s\n", header);
    free(header);
    size_t kept = 0;
    for (size_t i = 0; i < d->n; i++) {
        gpo_cache_item *it = &d->items[i];
        for (int w = 0; w < 2; w++)
            if (it->text[w])
                gpo_sbuf_appendf(&b, "%s\n", it->text[w]);
        if (it->text[0] || it->text[1] || it->record || it->open)
            d->items[kept++] = *it;
        else
            item_free(it); /* dropped by a verification, evicted */
    }
    d->n = kept;
    char *out = gpo_sbuf_take(&b);
    *len = out ? strlen(out) : 0;
    return out;
}
