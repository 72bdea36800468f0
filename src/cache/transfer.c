/* Export and import of finished tuning records (transfer.h). */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "cache/dir.h"
#include "cache/doc.h"
#include "cache/transfer.h"
#include "util/json.h"
#include "util/strutil.h"

/* ---- export --------------------------------------------------------------------- */

/* 1 when the listed file `name` is one of `dev`'s (any host's). */
static int of_device(const char *name, const gpo_cache_device *dev)
{
    char mine[256];
    if (gpo_cache_file_name(dev, NULL, mine, sizeof mine) != GPUOPT_OK)
        return 0;
    size_t base = strlen(mine) - strlen(GPO_CACHE_EXT);
    return strncmp(name, mine, base) == 0 &&
           (strcmp(name + base, GPO_CACHE_EXT) == 0 || name[base] == '@');
}

/* A listed record as the line a cache file holds: "t" first. */
static int add_line(gpo_sbuf *b, const char *kind, const cJSON *o)
{
    char *body = cJSON_PrintUnformatted(o);
    if (!body)
        return -1;
    gpo_sbuf_appendf(b, "{\"t\":\"%s%s%s\n", kind, body[1] == '}' ? "\"" : "\",", body + 1);
    free(body);
    return 0;
}

gpuopt_status gpo_cache_export(const char *dir, const gpo_cache_device *dev, char **text)
{
    assert(dir && text);
    *text = NULL;
    cJSON *list = NULL;
    gpuopt_status st = gpo_cache_dir_list(dir, &list);
    if (st)
        return st;
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    int files = 0, records = 0, e = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(list, "files"))
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(f, "file");
        const cJSON *status = cJSON_GetObjectItemCaseSensitive(f, "status");
        const cJSON *device = cJSON_GetObjectItemCaseSensitive(f, "device");
        const cJSON *entries = cJSON_GetObjectItemCaseSensitive(f, "entries");
        if (!cJSON_IsString(status) || !cJSON_IsObject(device) ||
            (strcmp(status->valuestring, "ok") && strcmp(status->valuestring, "corrupt")) ||
            (dev && !of_device(name->valuestring, dev)) || !cJSON_GetArraySize(entries))
            continue; /* corrupt: the entries that read are listed, the rest dropped */
        cJSON *h = cJSON_CreateObject();
        e = !h || !cJSON_AddStringToObject(h, "format", GPO_CACHE_FORMAT) ||
            !cJSON_AddNumberToObject(h, "schema", GPO_CACHE_SCHEMA) ||
            !cJSON_AddItemReferenceToObject(h, "device", (cJSON *)device) ||
            !cJSON_AddStringToObject(h, "library", gpuopt_version()) || add_line(&b, "header", h);
        cJSON_Delete(h);
        const cJSON *r;
        cJSON_ArrayForEach(r, entries)
        {
            e = e || add_line(&b, "record", r);
            records++;
        }
        files++;
        if (e)
            break;
    }
    cJSON_Delete(list);
    char end[160];
    gpo_snprintf(end, sizeof end, "{\"t\":\"end\",\"format\":\"%s\",\"files\":%d,\"records\":%d}\n",
                 GPO_CACHE_EXPORT_FORMAT, files, records);
    gpo_sbuf_append(&b, end);
    char *out = gpo_sbuf_take(&b);
    if (e || !out) {
        free(out);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for the cache export");
    }
    *text = out;
    return GPUOPT_OK;
}

/* ---- import --------------------------------------------------------------------- */

typedef struct section {
    gpo_cache_doc doc;
    gpo_cache_device dev;
    size_t line; /* of its header, 1-based */
    size_t records;
} section;

static gpuopt_status refuse(size_t line, const char *what)
{
    return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "the cache export, line %zu: %s", line, what);
}

/* The end line's count `name`, or -1. */
static double count(const cJSON *end, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(end, name);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 ? v->valuedouble : -1;
}

/* Splits and reads every section; INVALID_ARGUMENT for the first problem. */
static gpuopt_status read_sections(const char *text, size_t len, section **out, size_t *n)
{
    static const char head[] = "{\"t\":\"header\"", tail[] = "{\"t\":\"end\"";
    const char *end = text + len, *start = NULL, *s = text;
    size_t line = 0, start_line = 0, records = 0;
    cJSON *last = NULL;
    gpuopt_status st = GPUOPT_OK;
    *out = NULL;
    *n = 0;
    while (!st && s < end && !last) {
        const char *nl = memchr(s, '\n', (size_t)(end - s)), *stop = nl ? nl : end;
        line++;
        int is_head = (size_t)(stop - s) >= sizeof head - 1 && !memcmp(s, head, sizeof head - 1);
        int is_end = (size_t)(stop - s) >= sizeof tail - 1 && !memcmp(s, tail, sizeof tail - 1);
        if ((is_head || is_end) && start) { /* the section before ends here */
            section *v = realloc(*out, (*n + 1) * sizeof *v);
            if (!v)
                return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory to read the cache export");
            *out = v;
            section *x = &v[(*n)++];
            gpo_cache_doc_init(&x->doc);
            x->line = start_line;
            x->records = 0;
            st = gpo_cache_doc_parse(&x->doc, start, (size_t)(s - start));
            if (!st)
                st = gpo_cache_doc_read_all(&x->doc);
            if (!st && x->doc.status != GPO_DOC_OK)
                st = refuse(start_line, x->doc.problem);
            else if (!st && x->doc.dropped)
                st = refuse(start_line, x->doc.problem); /* names the key that fails */
            else if (!st && (!x->doc.device || gpo_cache_device_from_json(x->doc.device, &x->dev)))
                st = refuse(start_line, "a header without a valid device");
            for (size_t i = 0; !st && i < x->doc.n; i++)
                x->records += x->doc.items[i].record != NULL;
            records += st ? 0 : x->records;
            start = NULL;
        }
        if (st)
            break;
        if (is_head) {
            start = s;
            start_line = line;
        } else if (is_end) {
            last = cJSON_ParseWithLength(s, (size_t)(stop - s));
            if (!last)
                st = refuse(line, "an end line that is not JSON");
        } else if (!start && stop > s) {
            st = refuse(line, "a line before any header");
        }
        s = nl ? nl + 1 : end;
    }
    if (!st && !last)
        st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                      "the cache export is cut short: it has no end line after line %zu", line);
    if (!st && (count(last, "files") != (double)*n || count(last, "records") != (double)records))
        st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                      "the cache export is cut short: its end line counts %.0f files and %.0f "
                      "records, %zu and %zu were read",
                      count(last, "files"), count(last, "records"), *n, records);
    cJSON_Delete(last);
    return st;
}

static void free_sections(section *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        gpo_cache_doc_free(&v[i].doc);
    free(v);
}

static const gpo_cache_device *match(const gpo_cache_device *d, const gpo_cache_device *here,
                                     size_t n_here)
{
    for (size_t i = 0; i < n_here; i++)
        if (gpo_cache_device_same_kind(&here[i], d))
            return &here[i];
    return NULL;
}

gpuopt_status gpo_cache_import(const char *dir, const char *text, size_t len,
                               const gpo_cache_device *here, size_t n_here, int all,
                               const gpo_logger *log, cJSON **report)
{
    assert(dir && text && report);
    *report = NULL;
    section *v = NULL;
    size_t n = 0, imported = 0, kept_newer = 0;
    gpuopt_status st = read_sections(text, len, &v, &n);
    cJSON *o = st ? NULL : cJSON_CreateObject();
    gpo_json b = {0};
    cJSON *files = gpo_json_array(&b, o, "files");
    for (size_t i = 0; !st && !b.failed && i < n; i++) {
        const gpo_cache_device *to = match(&v[i].dev, here, n_here);
        to = to ? to : all ? &v[i].dev : NULL;
        size_t added = 0, kept = 0;
        char name[256] = "";
        gpo_cache *c = NULL;
        if (to && !(st = gpo_cache_open(dir, to, NULL, log, &c))) {
            st = gpo_cache_merge(c, &v[i].doc, &added, &kept);
            gpo_strlcpy(name, strrchr(gpo_cache_file(c), '/') + 1, sizeof name);
            gpo_cache_close(c);
        }
        cJSON *f = st ? NULL : gpo_json_object(&b, files, NULL);
        gpo_json_str(&b, f, "device", v[i].dev.name);
        gpo_json_str(&b, f, "file", to ? name : NULL);
        gpo_json_num(&b, f, "records", (double)v[i].records);
        gpo_json_num(&b, f, "imported", (double)added);
        gpo_json_num(&b, f, "kept_newer", (double)kept);
        if (!to)
            gpo_json_str(&b, f, "skipped",
                         "no device here has its backend, architecture and compute units");
        imported += added;
        kept_newer += kept;
    }
    gpo_json_num(&b, o, "imported", (double)imported);
    gpo_json_num(&b, o, "kept_newer", (double)kept_newer);
    if (!st && b.failed)
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for the import report");
    free_sections(v, n);
    if (st) {
        cJSON_Delete(o);
        return st;
    }
    *report = o;
    return GPUOPT_OK;
}
