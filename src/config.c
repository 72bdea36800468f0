/* Configuration: built-in defaults < config file < environment < API options.
 *
 * Every layer goes through the same field setters, so a value means the same
 * thing wherever it is written and is rejected with the same words. A bad
 * value in the file or the environment is a warning (naming the variable, the
 * value and what is accepted) and the lower layer's value is kept; a bad API
 * option fails context creation with GPUOPT_ERR_CONFIG. Warnings are held
 * until the final log level is known, then delivered in order. */
#include "config.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "backend.h"
#include "knob.h"
#include "policy.h"
#include "util/file.h"
#include "util/json.h"
#include "util/strutil.h"

/* ---- the fields every layer can set -------------------------------------- */

typedef enum field {
    F_BACKEND,
    F_DEVICE,
    F_LEVEL,
    F_LOG,
    F_SYSFS_ROOT,
    F_CACHE_DIR,
    F_CACHE_SHARED,
    F_REDUCED_PRECISION,
    F_COUNT
} field;

typedef struct field_name {
    const char *env;    /* environment variable */
    const char *key;    /* config file key */
    const char *option; /* gpuopt_options field */
} field_name;

static const field_name field_names[F_COUNT] = {
    [F_BACKEND] = {"GPUOPT_BACKEND", "backend", "backends"},
    [F_DEVICE] = {"GPUOPT_DEVICE", "device", "device"},
    [F_LEVEL] = {"GPUOPT_LEVEL", "level", "level"},
    [F_LOG] = {"GPUOPT_LOG", "log", "log_level"},
    [F_SYSFS_ROOT] = {"GPUOPT_SYSFS_ROOT", "sysfs_root", "sysfs_root"},
    [F_CACHE_DIR] = {"GPUOPT_CACHE_DIR", "cache_dir", "cache_dir"},
    [F_CACHE_SHARED] = {"GPUOPT_CACHE_SHARED", "cache_shared", NULL},
    [F_REDUCED_PRECISION] = {NULL, "reduced_precision", "reduced_precision"},
};

/* Warnings held until the log level is final. `nomem` latches any
 * allocation that failed while loading (a warning that could not be kept,
 * an override that could not be stored): the load then fails as a whole
 * with GPUOPT_ERR_NO_MEMORY instead of going on without that part. */
typedef struct pending {
    char *items[32];
    int n;
    int dropped;
    int nomem;
} pending;

static void pend(pending *p, const char *fmt, ...) GPO_PRINTF(2, 3);
static void pend(pending *p, const char *fmt, ...)
{
    if (p->n == (int)(sizeof p->items / sizeof p->items[0])) {
        p->dropped++;
        return;
    }
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    p->items[p->n] = gpo_strdup(msg);
    if (p->items[p->n])
        p->n++;
    else
        p->nomem = 1;
}

static void pend_free(pending *p)
{
    for (int i = 0; i < p->n; i++)
        free(p->items[i]);
    p->n = 0;
}

static void pend_flush(pending *p, const gpo_logger *log, int32_t level)
{
    for (int i = 0; i < p->n; i++) {
        gpo_log(log, level, "%s", p->items[i]);
        free(p->items[i]);
    }
    if (p->dropped)
        gpo_log(log, level, "%d further configuration messages were dropped", p->dropped);
    p->n = 0;
    p->dropped = 0;
}

/* ---- parsers shared by the layers ---------------------------------------- */

static int parse_log_level(const char *s, int32_t *out, char *why, size_t cap)
{
    static const struct {
        const char *word;
        int32_t level;
    } words[] = {{"off", GPUOPT_LOG_OFF},      {"none", GPUOPT_LOG_OFF},
                 {"error", GPUOPT_LOG_ERROR},  {"warn", GPUOPT_LOG_WARN},
                 {"warning", GPUOPT_LOG_WARN}, {"info", GPUOPT_LOG_INFO},
                 {"debug", GPUOPT_LOG_DEBUG}};
    char buf[32];
    if (s && gpo_strlcpy(buf, s, sizeof buf) < sizeof buf) {
        gpo_trim(buf);
        for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
            if (gpo_strcaseeq(buf, words[i].word)) {
                *out = words[i].level;
                return 0;
            }
        }
    }
    return gpo_say(-1, why, cap, "accepted: off, error, warn, info, debug");
}

static void accepted_backends(const struct gpo_backend *const *list, size_t n, char *why,
                              size_t cap)
{
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    gpo_sbuf_append(&b, "accepted: auto, or a comma-separated list of");
    for (size_t i = 0; i < n; i++)
        gpo_sbuf_appendf(&b, "%s %s", i ? "," : "", list[i]->name);
    gpo_snprintf(why, cap, "%s", b.data ? b.data : "accepted: auto");
    gpo_sbuf_free(&b);
}

static int parse_backends(const char *s, gpo_config *cfg, const struct gpo_backend *const *list,
                          size_t nlist, char *why, size_t cap)
{
    char buf[256];
    if (!s || gpo_strlcpy(buf, s, sizeof buf) >= sizeof buf)
        goto bad;
    gpo_trim(buf);
    if (gpo_strcaseeq(buf, "auto") || gpo_strcaseeq(buf, "all")) {
        cfg->all_backends = 1;
        cfg->n_backends = 0;
        return 0;
    }
    char names[GPO_MAX_BACKENDS][16];
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        gpo_trim(tok);
        size_t k;
        for (k = 0; k < nlist; k++)
            if (gpo_strcaseeq(tok, list[k]->name))
                break;
        if (k == nlist)
            goto bad;
        int dup = 0;
        for (int j = 0; j < n; j++)
            dup |= strcmp(names[j], list[k]->name) == 0;
        if (!dup && n < GPO_MAX_BACKENDS)
            gpo_strlcpy(names[n++], list[k]->name, sizeof names[0]);
    }
    if (n == 0)
        goto bad;
    cfg->all_backends = 0;
    cfg->n_backends = n;
    memcpy(cfg->backends, names, sizeof names);
    return 0;
bad:
    accepted_backends(list, nlist, why, cap);
    return -1;
}

/* Applies one field's text. Returns 0, or -1 with what is accepted in why. */
static int set_field(gpo_config *cfg, field f, const char *v, gpo_origin origin,
                     const struct gpo_backend *const *list, size_t nlist, char *why, size_t cap)
{
    switch (f) {
    case F_BACKEND:
        if (parse_backends(v, cfg, list, nlist, why, cap))
            return -1;
        cfg->backends_origin = origin;
        return 0;
    case F_DEVICE: {
        gpo_policy pol;
        if (gpo_policy_parse(v, list, nlist, &pol, why, cap))
            return -1;
        gpo_strlcpy(cfg->device, v, sizeof cfg->device);
        gpo_trim(cfg->device);
        cfg->device_origin = origin;
        return 0;
    }
    case F_LEVEL: {
        int64_t level;
        if (gpo_parse_i64(v, 0, GPUOPT_LEVEL_MAX, &level))
            return gpo_say(-1, why, cap,
                           "accepted: 0 (safe defaults), 1 (from detected hardware), "
                           "2 (measured on the device)");
        cfg->level = (int32_t)level;
        cfg->level_origin = origin;
        return 0;
    }
    case F_LOG: return parse_log_level(v, &cfg->log_level, why, cap);
    case F_SYSFS_ROOT:
        if (strlen(v) >= sizeof cfg->fs.root)
            return gpo_say(-1, why, cap, "accepted: a directory path shorter than %zu bytes",
                           sizeof cfg->fs.root);
        gpo_fs_init(&cfg->fs, v);
        return 0;
    case F_CACHE_DIR:
        if (!*v || strlen(v) >= sizeof cfg->cache_dir)
            return gpo_say(-1, why, cap,
                           "accepted: a non-empty directory path shorter than %zu bytes",
                           sizeof cfg->cache_dir);
        gpo_strlcpy(cfg->cache_dir, v, sizeof cfg->cache_dir);
        return 0;
    case F_CACHE_SHARED: /* "" turns a config file's layer off */
        if (strlen(v) >= sizeof cfg->cache_shared)
            return gpo_say(-1, why, cap, "accepted: a directory path shorter than %zu bytes",
                           sizeof cfg->cache_shared);
        gpo_strlcpy(cfg->cache_shared, v, sizeof cfg->cache_shared);
        return 0;
    case F_REDUCED_PRECISION: {
        int b;
        if (gpo_parse_bool(v, &b))
            return gpo_say(-1, why, cap, "accepted: true or false");
        cfg->reduced_precision = b;
        cfg->reduced_precision_origin = origin;
        return 0;
    }
    case F_COUNT: break;
    }
    return gpo_say(-1, why, cap, "no such setting");
}

/* ---- knob overrides -------------------------------------------------------- */

static void knob_override_free(gpo_knob_override *k)
{
    free(k->name);
    free(k->value);
    free(k->origin_text);
}

gpuopt_status gpo_config_set_knob(gpo_config *cfg, const char *name, const char *value,
                                  int32_t source, const char *origin_text)
{
    for (int i = 0; i < cfg->n_knobs; i++) {
        if (cfg->knobs[i].source == source && strcmp(cfg->knobs[i].name, name) == 0) {
            if (!value) {
                knob_override_free(&cfg->knobs[i]);
                memmove(&cfg->knobs[i], &cfg->knobs[i + 1],
                        (size_t)(cfg->n_knobs - i - 1) * sizeof cfg->knobs[0]);
                cfg->n_knobs--;
                return GPUOPT_OK;
            }
            char *nv = gpo_strdup(value);
            if (!nv)
                return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory");
            free(cfg->knobs[i].value);
            cfg->knobs[i].value = nv;
            return GPUOPT_OK;
        }
    }
    if (!value)
        return GPUOPT_OK;
    gpo_knob_override *grown =
        realloc(cfg->knobs, (size_t)(cfg->n_knobs + 1) * sizeof cfg->knobs[0]);
    if (!grown)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory");
    cfg->knobs = grown;
    gpo_knob_override *k = &cfg->knobs[cfg->n_knobs];
    k->name = gpo_strdup(name);
    k->value = gpo_strdup(value);
    k->origin_text = gpo_strdup(origin_text);
    k->source = source;
    if (!k->name || !k->value || !k->origin_text) {
        knob_override_free(k);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory");
    }
    cfg->n_knobs++;
    return GPUOPT_OK;
}

/* Checks a knob override against the catalogue: the name must exist and the
 * value parse as its type. -1 with why; GPO_KNOB_PARSE_NO_MEMORY when out
 * of memory. */
static int check_knob(const struct gpo_backend *const *list, size_t nlist, const char *name,
                      const char *value, char *why, size_t cap)
{
    const gpo_knob_def *def = gpo_knob_find(list, nlist, name);
    if (!def)
        return gpo_say(-1, why, cap, "no knob is called '%s' (docs/knobs.md lists them)", name);
    int64_t ival;
    char *norm = NULL;
    char inner[768];
    int rc = gpo_knob_parse(def, value, &ival, &norm, inner, sizeof inner);
    if (rc)
        return gpo_say(rc, why, cap, "knob '%s': %s", name, inner);
    free(norm);
    return 0;
}

/* Checks and stores one override: a refusal is the warning "LABEL: why";
 * a failed allocation is latched in warn. */
static void add_knob(gpo_config *cfg, const struct gpo_backend *const *list, size_t nlist,
                     const char *name, const char *value, int32_t source, const char *origin,
                     const char *label, pending *warn)
{
    char why[1024];
    int rc = check_knob(list, nlist, name, value, why, sizeof why);
    if (rc == GPO_KNOB_PARSE_NO_MEMORY)
        warn->nomem = 1;
    else if (rc)
        pend(warn, "%s: %s", label, why);
    else if (gpo_config_set_knob(cfg, name, value, source, origin) != GPUOPT_OK)
        warn->nomem = 1;
}

/* GPUOPT_KNOBS="name=value;name=value". */
static void env_knobs(gpo_config *cfg, const char *text, const struct gpo_backend *const *list,
                      size_t nlist, pending *warn)
{
    char *copy = gpo_strdup(text);
    if (!copy) {
        warn->nomem = 1;
        return;
    }
    char *save = NULL;
    for (char *item = strtok_r(copy, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
        gpo_trim(item);
        if (!*item)
            continue;
        char *eq = strchr(item, '=');
        if (!eq) {
            pend(warn,
                 "GPUOPT_KNOBS: '%s' is not name=value; accepted: "
                 "\"name=value;name=value\" (e.g. \"threads=4;launch.block_size=128\")",
                 item);
            continue;
        }
        *eq = '\0';
        char *name = gpo_trim(item), *value = gpo_trim(eq + 1);
        char label[1024];
        gpo_snprintf(label, sizeof label, "GPUOPT_KNOBS: ignoring '%s=%s'", name, value);
        add_knob(cfg, list, nlist, name, value, GPUOPT_SOURCE_ENV, "GPUOPT_KNOBS", label, warn);
    }
    free(copy);
}

/* ---- the config file --------------------------------------------------------- */

/* A configuration is a few hundred bytes; the cap keeps a wrong path (a
 * log, an image) from being read whole. */
#define CONFIG_MAX_BYTES ((size_t)1 << 20)

static void offset_to_line(const char *text, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && text[i]; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* A JSON scalar as the text a setting takes. */
static int json_scalar_text(const cJSON *item, char *out, size_t cap)
{
    if (cJSON_IsString(item))
        return gpo_say(0, out, cap, "%s", item->valuestring);
    if (cJSON_IsBool(item))
        return gpo_say(0, out, cap, "%s", cJSON_IsTrue(item) ? "true" : "false");
    if (cJSON_IsNumber(item)) {
        int64_t i;
        if (gpo_json_int64(item, &i) == 0)
            gpo_snprintf(out, cap, "%lld", (long long)i);
        else
            gpo_snprintf(out, cap, "%.17g", item->valuedouble);
        return 0;
    }
    return -1;
}

static gpo_library_path *find_library(gpo_config *cfg, const char *key)
{
    for (int i = 0; i < cfg->n_libraries; i++)
        if (strcmp(cfg->libraries[i].key, key) == 0)
            return &cfg->libraries[i];
    return NULL;
}

/* The vendor libraries the backends of the list declare, paths empty. */
static void declare_libraries(gpo_config *cfg, const struct gpo_backend *const *list, size_t nlist)
{
    for (size_t b = 0; b < nlist; b++)
        for (size_t i = 0; i < list[b]->n_libraries; i++) {
            const gpo_library_var *v = &list[b]->libraries[i];
            if (find_library(cfg, v->key))
                continue;
            assert(cfg->n_libraries < GPO_MAX_LIBRARIES);
            cfg->libraries[cfg->n_libraries].key = v->key;
            cfg->libraries[cfg->n_libraries].variable = v->variable;
            cfg->n_libraries++;
        }
}

static void library_keys(const gpo_config *cfg, char *out, size_t cap)
{
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    for (int i = 0; i < cfg->n_libraries; i++)
        gpo_sbuf_appendf(&b, "%s%s", i ? ", " : "", cfg->libraries[i].key);
    gpo_strlcpy(out, b.data && !b.failed ? b.data : "none", cap);
    gpo_sbuf_free(&b);
}

static void file_libraries(gpo_config *cfg, const cJSON *obj, const char *path, pending *warn)
{
    if (!cJSON_IsObject(obj)) {
        pend(warn,
             "config file %s: \"libraries\" must be an object such as "
             "{\"cuda\": \"/path/libcuda.so.1\"}; ignored",
             path);
        return;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, obj)
    {
        gpo_library_path *lib = find_library(cfg, it->string);
        if (!lib || !cJSON_IsString(it) || !*it->valuestring) {
            char keys[256];
            library_keys(cfg, keys, sizeof keys);
            pend(warn, "config file %s: libraries.%s ignored: accepted keys %s, each with a path",
                 path, it->string, keys);
            continue;
        }
        gpo_strlcpy(lib->path, it->valuestring, sizeof lib->path);
    }
}

static void file_knobs(gpo_config *cfg, const cJSON *obj, const char *path,
                       const struct gpo_backend *const *list, size_t nlist, pending *warn)
{
    if (!cJSON_IsObject(obj)) {
        pend(warn,
             "config file %s: \"knobs\" must be an object such as {\"threads\": 4}; "
             "ignored",
             path);
        return;
    }
    char origin[GPO_PATH_MAX + 16];
    gpo_snprintf(origin, sizeof origin, "config file %s", path);
    const cJSON *it;
    cJSON_ArrayForEach(it, obj)
    {
        char value[1024];
        if (json_scalar_text(it, value, sizeof value)) {
            const gpo_knob_def *def = gpo_knob_find(list, nlist, it->string);
            char dom[512] = "";
            if (def)
                gpo_knob_domain_text(def, dom, sizeof dom);
            pend(warn, "config file %s: knobs.%s must be a string, number or boolean%s%s; ignored",
                 path, it->string, def ? " in its domain: " : "", dom);
            continue;
        }
        char label[GPO_PATH_MAX + 128];
        gpo_snprintf(label, sizeof label, "config file %s: ignoring knobs.%s", path, it->string);
        add_knob(cfg, list, nlist, it->string, value, GPUOPT_SOURCE_CONFIG, origin, label, warn);
    }
}

/* A configuration's backend list, to compare and restore. */
typedef struct backend_choice {
    int all;
    char names[GPO_MAX_BACKENDS][16];
    int n;
    gpo_origin origin;
} backend_choice;

static void backends_save(const gpo_config *cfg, backend_choice *c)
{
    c->all = cfg->all_backends;
    memcpy(c->names, cfg->backends, sizeof c->names);
    c->n = cfg->n_backends;
    c->origin = cfg->backends_origin;
}

static void backends_restore(gpo_config *cfg, const backend_choice *c)
{
    cfg->all_backends = c->all;
    memcpy(cfg->backends, c->names, sizeof cfg->backends);
    cfg->n_backends = c->n;
    cfg->backends_origin = c->origin;
}

/* The legacy "use_cuda" key of the origin project's configuration: false
 * means the CPU only, true today's "auto". With a "backend" key that says
 * otherwise the two contradict: neither is used (the backend list stays
 * what it was before the file) and the warning names both. */
static void file_use_cuda(gpo_config *cfg, const backend_choice *before, const cJSON *use_cuda,
                          const cJSON *backend, const char *path,
                          const struct gpo_backend *const *list, size_t nlist, pending *warn)
{
    char value[64], why[512], bv[256] = "";
    int on;
    if (json_scalar_text(use_cuda, value, sizeof value) || gpo_parse_bool(value, &on)) {
        pend(warn,
             "config file %s: \"use_cuda\" is not accepted (accepted: true, the default "
             "backend choice, or false, the CPU only); ignored",
             path);
        return;
    }
    const char *wanted = on ? "auto" : "cpu";
    backend_choice from_backend, from_use_cuda;
    backends_save(cfg, &from_backend);
    backends_restore(cfg, before);
    if (set_field(cfg, F_BACKEND, wanted, GPO_ORIGIN_FILE, list, nlist, why, sizeof why)) {
        pend(warn,
             "config file %s: \"use_cuda\": %s needs backend \"%s\", which is not "
             "accepted here (%s); ignored",
             path, value, wanted, why);
        backends_restore(cfg, &from_backend);
        return;
    }
    backends_save(cfg, &from_use_cuda);
    if (!backend)
        return;
    json_scalar_text(backend, bv, sizeof bv);
    int same = from_backend.origin == GPO_ORIGIN_FILE && from_backend.all == from_use_cuda.all &&
               (from_backend.all || from_backend.n == from_use_cuda.n);
    for (int i = 0; same && !from_backend.all && i < from_backend.n; i++)
        same = strcmp(from_backend.names[i], from_use_cuda.names[i]) == 0;
    if (!same) {
        pend(warn,
             "config file %s: \"use_cuda\": %s and \"backend\": \"%s\" contradict each other "
             "(use_cuda %s means backend \"%s\"); both are ignored",
             path, on ? "true" : "false", bv, on ? "true" : "false", wanted);
        backends_restore(cfg, before);
    }
}

static void apply_file(gpo_config *cfg, const char *path, int must_exist, int privileged,
                       const struct gpo_backend *const *list, size_t nlist, pending *warn)
{
    char *text = NULL, why[128];
    size_t len;
    if (gpo_file_read(path, CONFIG_MAX_BYTES, &text, &len, why, sizeof why)) {
        if (errno == ENOMEM)
            warn->nomem = 1;
        else if (must_exist || (errno != ENOENT && errno != ENOTDIR))
            pend(warn, "config file %s cannot be read: %s; using defaults", path, why);
        return;
    }
    if (memchr(text, '\0', len)) {
        pend(warn, "config file %s holds a NUL byte: not JSON text; ignored", path);
        free(text);
        return;
    }
    gpo_strlcpy(cfg->config_path, path, sizeof cfg->config_path);
    /* On failure `end` is where parsing stopped (cJSON.h), which, unlike
     * cJSON_GetErrorPtr, is this thread's own. cJSON fails alike on bad
     * syntax and on a failed allocation: a second parse tells a passing
     * shortage from a malformed file (under a lasting one the file is
     * reported malformed). */
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root)
        root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root || !cJSON_IsObject(root)) {
        int line, col;
        size_t off = end && end >= text ? (size_t)(end - text) : 0;
        offset_to_line(text, off, &line, &col);
        pend(warn,
             "config file %s: line %d, column %d (offset %zu): %s; the whole file is "
             "ignored",
             path, line, col, off, root ? "the top level must be a JSON object" : "malformed JSON");
        cJSON_Delete(root);
        free(text);
        return;
    }
    /* The backend list before the file, for the legacy use_cuda key. */
    backend_choice before;
    backends_save(cfg, &before);
    const cJSON *use_cuda = cJSON_GetObjectItemCaseSensitive(root, "use_cuda");
    const cJSON *it;
    cJSON_ArrayForEach(it, root)
    {
        if (strcmp(it->string, "use_cuda") == 0)
            continue; /* after the loop: it is checked against "backend" */
        if (privileged &&
            (strcmp(it->string, "libraries") == 0 || strcmp(it->string, "cache_dir") == 0 ||
             strcmp(it->string, "cache_shared") == 0 || strcmp(it->string, "sysfs_root") == 0)) {
            pend(warn,
                 "config file %s: \"%s\" ignored: a privileged process takes paths only from "
                 "gpuopt_options (docs/security.md)",
                 path, it->string);
            continue;
        }
        if (strcmp(it->string, "libraries") == 0) {
            file_libraries(cfg, it, path, warn);
            continue;
        }
        if (strcmp(it->string, "knobs") == 0) {
            file_knobs(cfg, it, path, list, nlist, warn);
            continue;
        }
        int f_id = -1;
        for (int i = 0; i < F_COUNT; i++)
            if (strcmp(it->string, field_names[i].key) == 0)
                f_id = i;
        if (f_id < 0) {
            pend(warn,
                 "config file %s: unknown key \"%s\" ignored; accepted keys: backend, "
                 "device, level, log, sysfs_root, cache_dir, cache_shared, reduced_precision, "
                 "libraries, knobs, use_cuda",
                 path, it->string);
            continue;
        }
        char value[1024], why[512];
        if (json_scalar_text(it, value, sizeof value)) {
            pend(warn, "config file %s: \"%s\" must be a string, number or boolean; ignored", path,
                 it->string);
            continue;
        }
        if (set_field(cfg, (field)f_id, value, GPO_ORIGIN_FILE, list, nlist, why, sizeof why))
            pend(warn, "config file %s: \"%s\": %s is not accepted (%s); keeping the default", path,
                 it->string, value, why);
    }
    if (use_cuda)
        file_use_cuda(cfg, &before, use_cuda, cJSON_GetObjectItemCaseSensitive(root, "backend"),
                      path, list, nlist, warn);
    cJSON_Delete(root);
    free(text);
}

/* A path from the environment: none in a privileged process. (The two
 * tests agree in a real one; `privileged` alone lets tests act as one.) */
static const char *path_env(const char *name, int privileged)
{
    return privileged ? NULL : secure_getenv(name);
}

/* The file to read: API option, else GPUOPT_CONFIG, else the XDG location.
 * Returns 0 with *must_exist, or -1 when no file is to be read. */
static int config_file_path(const gpuopt_options *opts, int use_env, int privileged, char *out,
                            size_t cap, int *must_exist)
{
    *must_exist = 1;
    if (opts && opts->config_path) {
        if (!*opts->config_path)
            return -1;
        gpo_strlcpy(out, opts->config_path, cap);
        return 0;
    }
    const char *env = use_env ? path_env("GPUOPT_CONFIG", privileged) : NULL;
    if (env) {
        if (!*env)
            return -1;
        gpo_strlcpy(out, env, cap);
        return 0;
    }
    *must_exist = 0;
    const char *xdg = path_env("XDG_CONFIG_HOME", privileged);
    const char *home = path_env("HOME", privileged);
    if (xdg && *xdg)
        gpo_snprintf(out, cap, "%s/gpuopt/config.json", xdg);
    else if (home && *home)
        gpo_snprintf(out, cap, "%s/.config/gpuopt/config.json", home);
    else
        return -1;
    return 0;
}

static void default_cache_dir(gpo_config *cfg, int privileged)
{
    if (cfg->cache_dir[0] || privileged)
        return;
    const char *xdg = path_env("XDG_CACHE_HOME", privileged);
    const char *home = path_env("HOME", privileged);
    if (xdg && *xdg)
        gpo_snprintf(cfg->cache_dir, sizeof cfg->cache_dir, "%s/gpuopt", xdg);
    else if (home && *home)
        gpo_snprintf(cfg->cache_dir, sizeof cfg->cache_dir, "%s/.cache/gpuopt", home);
    else
        /* Per user, so another user cannot pre-create it for us. */
        gpo_snprintf(cfg->cache_dir, sizeof cfg->cache_dir, "/tmp/gpuopt-cache-%u",
                     (unsigned)getuid());
}

static const char *option_value(const gpuopt_options *o, field f)
{
    switch (f) {
    case F_BACKEND: return o->backends;
    case F_DEVICE: return o->device;
    case F_LEVEL: return o->level;
    case F_LOG: return o->log_level;
    case F_SYSFS_ROOT: return o->sysfs_root;
    case F_CACHE_DIR: return o->cache_dir;
    case F_CACHE_SHARED: return NULL; /* no option: the environment or the config file */
    case F_REDUCED_PRECISION: return o->reduced_precision;
    case F_COUNT: break;
    }
    return NULL;
}

/* The path variables a privileged process ignores, for its log line. The
 * library variables are the backends' (cfg->libraries). */
static const char *const path_variables[] = {
    "GPUOPT_CONFIG",     "XDG_CONFIG_HOME",    "HOME", "GPUOPT_CACHE_DIR", "XDG_CACHE_HOME",
    "GPUOPT_SYSFS_ROOT", "GPUOPT_CACHE_SHARED"};

/* One line naming what a privileged process ignored and what it uses
 * instead. A warning when a GPUOPT_ variable was set (someone meant it to
 * count), else information: HOME is set in every login. */
static void privileged_note(const gpo_config *cfg, int use_env, pending *warn, pending *info)
{
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    int meant = 0;
    for (size_t i = 0; i < sizeof path_variables / sizeof path_variables[0]; i++) {
        const char *v = path_variables[i];
        int ours = strncmp(v, "GPUOPT_", 7) == 0;
        if ((ours && !use_env) || !getenv(v))
            continue;
        gpo_sbuf_appendf(&b, "%s%s", b.len ? ", " : "", v);
        meant |= ours;
    }
    for (int i = 0; use_env && i < cfg->n_libraries; i++) {
        const char *v = cfg->libraries[i].variable;
        if (v && getenv(v)) {
            gpo_sbuf_appendf(&b, "%s%s", b.len ? ", " : "", v);
            meant = 1;
        }
    }
    pend(meant ? warn : info,
         "privileged process (set-user-ID, set-group-ID or file capabilities: glibc's "
         "secure-execution mode): paths from the environment and config files are ignored%s%s; "
         "config file: %s; cache: %s; /sys and /proc: %s; vendor libraries: their default "
         "sonames (docs/security.md)",
         b.len ? ": " : "", b.data && !b.failed ? b.data : "",
         cfg->config_path[0] ? cfg->config_path : "none",
         cfg->cache_dir[0] ? cfg->cache_dir : "none", cfg->fs.root[0] ? cfg->fs.root : "live");
    if (b.failed)
        warn->nomem = 1;
    gpo_sbuf_free(&b);
}

gpuopt_status gpo_config_load(gpo_config *cfg, const gpuopt_options *opts, const gpo_logger *log,
                              const struct gpo_backend *const *list, size_t nlist)
{
    /* AT_SECURE is what glibc's secure_getenv and ld.so go by: set when the
     * real and effective user or group differ, or the file carried
     * capabilities (getauxval(3), ld.so(8) "Secure-execution mode"). */
    return gpo_config_load_as(cfg, opts, log, list, nlist, getauxval(AT_SECURE) != 0);
}

gpuopt_status gpo_config_load_as(gpo_config *cfg, const gpuopt_options *opts, const gpo_logger *log,
                                 const struct gpo_backend *const *list, size_t nlist,
                                 int privileged)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->all_backends = 1;
    gpo_strlcpy(cfg->device, "auto", sizeof cfg->device);
    cfg->level = 1;
    cfg->log_level = GPUOPT_LOG_WARN;
    declare_libraries(cfg, list, nlist);

    uint32_t flags = opts ? opts->flags : 0;
    int use_env = !(flags & GPUOPT_OPTION_IGNORE_ENV);
    pending warn = {0}, info = {0};
    gpuopt_status st = GPUOPT_OK;

    /* Layer 1: the config file. A privileged process reads only one that
     * gpuopt_options names. */
    char path[GPO_PATH_MAX];
    int must_exist;
    if (!(flags & GPUOPT_OPTION_IGNORE_CONFIG_FILE) &&
        config_file_path(opts, use_env, privileged, path, sizeof path, &must_exist) == 0)
        apply_file(cfg, path, must_exist, privileged, list, nlist, &warn);

    /* Layer 2: the environment. An empty variable counts as unset. */
    if (use_env) {
        for (int f = 0; f < F_COUNT; f++) {
            const char *name = field_names[f].env;
            /* Paths: never from a privileged process's environment. */
            int is_path = f == F_SYSFS_ROOT || f == F_CACHE_DIR || f == F_CACHE_SHARED;
            const char *v = !name ? NULL : is_path ? path_env(name, privileged) : getenv(name);
            char why[512];
            if (!v || !*v)
                continue;
            if (set_field(cfg, (field)f, v, GPO_ORIGIN_ENV, list, nlist, why, sizeof why)) {
                char kept[64];
                if (f == F_LEVEL)
                    gpo_snprintf(kept, sizeof kept, "level %d", (int)cfg->level);
                else
                    gpo_snprintf(kept, sizeof kept, "the previous value");
                pend(&warn, "%s=%s is not accepted (%s); keeping %s", name, v, why, kept);
            }
        }
        for (int i = 0; i < cfg->n_libraries; i++) {
            /* Library paths choose code to load: never from a setuid context. */
            const char *v = path_env(cfg->libraries[i].variable, privileged);
            if (v && *v)
                gpo_strlcpy(cfg->libraries[i].path, v, sizeof cfg->libraries[i].path);
        }
        const char *profile = secure_getenv("GPUOPT_PROFILE");
        if (profile && strlen(profile) >= sizeof cfg->profile_path)
            /* Cut short, it would name another file. */
            pend(&warn,
                 "GPUOPT_PROFILE is %zu bytes, longer than the %zu a path may have here: "
                 "ignored, no profile will be written",
                 strlen(profile), sizeof cfg->profile_path - 1);
        else if (profile && *profile)
            gpo_strlcpy(cfg->profile_path, profile, sizeof cfg->profile_path);
        else if (!profile && getenv("GPUOPT_PROFILE"))
            pend(&warn, "GPUOPT_PROFILE is ignored: this process runs with privileges (setuid, "
                        "capabilities), and a file named by the environment is never written "
                        "by such a process");
        const char *knobs = getenv("GPUOPT_KNOBS");
        if (knobs && *knobs)
            env_knobs(cfg, knobs, list, nlist, &warn);
    }

    /* Layer 3: API options. */
    if (opts) {
        for (int f = 0; f < F_COUNT; f++) {
            const char *v = option_value(opts, (field)f);
            char why[512];
            if (!v)
                continue;
            if (set_field(cfg, (field)f, v, GPO_ORIGIN_API, list, nlist, why, sizeof why)) {
                st = gpo_fail(GPUOPT_ERR_CONFIG, "gpuopt_options.%s = \"%s\" is not accepted: %s",
                              field_names[f].option, v, why);
                break;
            }
        }
    }
    default_cache_dir(cfg, privileged);
    if (privileged)
        privileged_note(cfg, use_env, &warn, &info);

    if (!st && (warn.nomem || info.nomem))
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory reading the configuration");
    if (st == GPUOPT_ERR_NO_MEMORY) {
        /* Nothing is said about a configuration that is not used. */
        pend_free(&warn);
        pend_free(&info);
        gpo_config_free(cfg);
        return st;
    }
    gpo_logger final_log = log ? *log : (gpo_logger){GPUOPT_LOG_WARN, NULL, NULL};
    final_log.level = cfg->log_level;
    pend_flush(&warn, &final_log, GPUOPT_LOG_WARN);
    pend_flush(&info, &final_log, GPUOPT_LOG_INFO);
    if (st)
        gpo_config_free(cfg);
    return st;
}

void gpo_config_free(gpo_config *cfg)
{
    for (int i = 0; i < cfg->n_knobs; i++)
        knob_override_free(&cfg->knobs[i]);
    free(cfg->knobs);
    cfg->knobs = NULL;
    cfg->n_knobs = 0;
}

int gpo_config_backend_allowed(const gpo_config *cfg, const char *backend)
{
    if (cfg->all_backends)
        return 1;
    for (int i = 0; i < cfg->n_backends; i++)
        if (strcmp(cfg->backends[i], backend) == 0)
            return 1;
    return 0;
}

const char *gpo_config_library(const gpo_config *cfg, const char *key)
{
    assert(cfg && key);
    for (int i = 0; i < cfg->n_libraries; i++)
        if (strcmp(cfg->libraries[i].key, key) == 0)
            return cfg->libraries[i].path[0] ? cfg->libraries[i].path : NULL;
    return NULL;
}

gpuopt_status gpo_config_set_library(gpo_config *cfg, const char *key, const char *path)
{
    gpo_library_path *lib = find_library(cfg, key);
    if (!lib) {
        if (cfg->n_libraries >= GPO_MAX_LIBRARIES)
            return GPUOPT_ERR_OUT_OF_RANGE;
        lib = &cfg->libraries[cfg->n_libraries++];
        lib->key = key;
        lib->variable = NULL;
    }
    if (gpo_strlcpy(lib->path, path ? path : "", sizeof lib->path) >= sizeof lib->path)
        return GPUOPT_ERR_OUT_OF_RANGE;
    return GPUOPT_OK;
}
