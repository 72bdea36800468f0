/* Keys of the tuning cache: device fingerprints and file names, the
 * canonical hard-key text and its hash, soft-field comparison, and the
 * checks on what callers ask to store. */
#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/key.h"
#include "util/hash.h"
#include "util/strutil.h"

/* Lower-case ASCII letters, digits and inner dots stay, runs of anything
 * else become one '-', ends are trimmed: safe in a file name on every file
 * system, never hidden, never "..". */
static void sanitise(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    int dash = 0;
    for (const char *p = in; *p && n + 1 < cap; p++) {
        char ch = *p;
        if (ch >= 'A' && ch <= 'Z')
            ch = (char)(ch - 'A' + 'a');
        if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || (ch == '.' && n > 0)) {
            if (dash && n > 0 && n + 2 < cap)
                out[n++] = '-';
            dash = 0;
            out[n++] = ch;
        } else {
            dash = 1;
        }
    }
    out[n] = '\0';
}

void gpo_cache_device_from_info(const gpuopt_device_info *info, gpo_cache_device *out)
{
    assert(info && out);
    memset(out, 0, sizeof *out);
    gpo_strlcpy(out->backend, info->backend, sizeof out->backend);
    /* OpenCL devices of unknown architecture are told apart by vendor and
     * name, as the anchors' "OpenCL vendor+name+version" arch id suggests. */
    if (info->arch_name[0])
        gpo_strlcpy(out->arch, info->arch_name, sizeof out->arch);
    else if (info->arch_family[0])
        gpo_strlcpy(out->arch, info->arch_family, sizeof out->arch);
    else
        gpo_snprintf(out->arch, sizeof out->arch, "%s %s", info->vendor, info->name);
    out->compute_units = info->compute_units;
    gpo_strlcpy(out->name, info->name, sizeof out->name);
    gpo_strlcpy(out->uuid, info->uuid, sizeof out->uuid);
    gpo_strlcpy(out->pci, info->pci_bus_id, sizeof out->pci);
}

static int device_field(const cJSON *o, const char *name, char *out, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= cap)
        return -1;
    gpo_strlcpy(out, v->valuestring, cap);
    return 0;
}

int gpo_cache_device_from_json(const cJSON *d, gpo_cache_device *dev)
{
    const cJSON *cu = cJSON_GetObjectItemCaseSensitive(d, "compute_units");
    char name[256];
    memset(dev, 0, sizeof *dev);
    if (device_field(d, "backend", dev->backend, sizeof dev->backend) || !dev->backend[0] ||
        device_field(d, "arch", dev->arch, sizeof dev->arch) || !dev->arch[0] ||
        device_field(d, "name", dev->name, sizeof dev->name) ||
        device_field(d, "uuid", dev->uuid, sizeof dev->uuid) ||
        device_field(d, "pci", dev->pci, sizeof dev->pci) || !cJSON_IsNumber(cu) ||
        !(cu->valuedouble >= -1 && cu->valuedouble <= 1e6) ||
        cu->valuedouble != (double)(int32_t)cu->valuedouble)
        return -1;
    dev->compute_units = (int32_t)cu->valuedouble;
    return gpo_cache_file_name(dev, NULL, name, sizeof name) == GPUOPT_OK ? 0 : -1;
}

int gpo_cache_device_same_kind(const gpo_cache_device *a, const gpo_cache_device *b)
{
    return !strcmp(a->backend, b->backend) && !strcmp(a->arch, b->arch) &&
           a->compute_units == b->compute_units;
}

gpuopt_status gpo_cache_file_name(const gpo_cache_device *dev, const char *host, char *out,
                                  size_t cap)
{
    assert(dev && out);
    char backend[17], arch[49], id[65], hostpart[66] = "";
    sanitise(dev->backend, backend, sizeof backend);
    sanitise(dev->arch, arch, sizeof arch);
    const char *uuid = dev->uuid;
    if (strncmp(uuid, "GPU-", 4) == 0 || strncmp(uuid, "MIG-", 4) == 0)
        uuid += 4;
    if (*uuid) {
        sanitise(uuid, id, sizeof id);
    } else if (dev->pci[0]) {
        char pci[40];
        sanitise(dev->pci, pci, sizeof pci);
        gpo_snprintf(id, sizeof id, "pci-%s", pci);
    } else {
        sanitise(dev->name, id, 49);
    }
    if (host) {
        char h[64];
        sanitise(host, h, sizeof h);
        gpo_snprintf(hostpart, sizeof hostpart, "@%s", h[0] ? h : "host");
    }
    int cu = dev->compute_units > 0 ? dev->compute_units : 0;
    int n =
        snprintf(out, cap, "%s_%s_%dcu_%s%s%s", backend[0] ? backend : "unknown",
                 arch[0] ? arch : "unknown", cu, id[0] ? id : "device", hostpart, GPO_CACHE_EXT);
    if (n < 0 || (size_t)n >= cap)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "cache file name needs %d bytes, %zu given", n + 1,
                        cap);
    return GPUOPT_OK;
}

int gpo_cache_is_file_name(const char *name)
{
    size_t n = strlen(name), e = strlen(GPO_CACHE_EXT);
    if (n <= e || name[0] == '.' || strcmp(name + n - e, GPO_CACHE_EXT) != 0 || strchr(name, '/'))
        return 0;
    const char *a = strchr(name, '_');
    const char *b = a ? strchr(a + 1, '_') : NULL;
    if (!b || !(b[1] >= '0' && b[1] <= '9'))
        return 0;
    const char *p = b + 1;
    while (*p >= '0' && *p <= '9')
        p++;
    return strncmp(p, "cu_", 3) == 0;
}

void gpo_cache_hex16(uint64_t value, char out[17])
{
    snprintf(out, 17, "%016" PRIx64, value);
}

int gpo_cache_parse16(const char *hex, uint64_t *value)
{
    /* Lower case only: one key, one spelling. */
    if (!hex || !value || strlen(hex) != 16 || strspn(hex, "0123456789abcdef") != 16)
        return -1;
    *value = strtoull(hex, NULL, 16);
    return 0;
}

const char *gpo_cache_soft_name(uint32_t bit)
{
    static const char *const names[] = {"driver", "compiler", "library", "device_name"};
    for (int i = 0; i < 4; i++) /* GPO_SOFT_DRIVER is 1 << 0, and on in order */
        if (bit == 1u << i)
            return names[i];
    return NULL;
}

void gpo_cache_soft_words(uint32_t changed, char *out, size_t cap)
{
    out[0] = '\0';
    for (uint32_t bit = 1; bit <= GPO_SOFT_DEVICE_NAME; bit <<= 1)
        if (changed & bit) {
            size_t n = strlen(out);
            gpo_snprintf(out + n, cap - n, "%s%s", n ? ", " : "", gpo_cache_soft_name(bit));
        }
}

gpuopt_status gpo_cache_hash_text(const char *text, size_t len, char *out, size_t cap)
{
    assert(out && cap >= 25 && (text || !len));
    snprintf(out, cap, "fnv1a64:%016" PRIx64, gpo_hash64(text, len));
    return GPUOPT_OK;
}

/* Field names as stored in "hard" and in the canonical text, in order. */
static const char *const key_fields[] = {"kind",   "backend", "arch",  "compute_units",
                                         "source", "options", "space", "workload"};

static void key_strings(const gpo_cache_key *k, const char *s[8])
{
    s[0] = k->kind;
    s[1] = k->backend;
    s[2] = k->arch;
    s[3] = NULL;
    s[4] = k->source_hash;
    s[5] = k->options_hash;
    s[6] = k->space_hash;
    s[7] = k->workload;
}

gpuopt_status gpo_cache_key_canon(const gpo_cache_key *key, char **canon, uint64_t *hash)
{
    assert(key && canon);
    *canon = NULL;
    const char *s[8];
    key_strings(key, s);
    for (int i = 0; i < 3; i++)
        if (!s[i] || !*s[i])
            return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "cache key field '%s' is empty",
                            key_fields[i]);
    if (key->compute_units < -1)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "cache key compute_units %d: accepted -1 (unknown) or more",
                        (int)key->compute_units);
    /* Built by hand into one exact allocation: every lookup pays for this. */
    size_t lens[8], total = 0;
    char head[48], cu[32], pre[8][40];
    int hn = snprintf(head, sizeof head, "gpuopt-cache-key/%d\n", GPO_CACHE_SCHEMA);
    int cn = snprintf(cu, sizeof cu, "compute_units=%d\n", (int)key->compute_units);
    int pn[8] = {0};
    total = (size_t)hn + (size_t)cn;
    for (int i = 0; i < 8; i++) {
        if (i == 3)
            continue;
        lens[i] = s[i] ? strlen(s[i]) : 0;
        if (lens[i] > GPO_CACHE_FIELD_MAX)
            return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                            "cache key field '%s' is %zu bytes; at most %u are accepted",
                            key_fields[i], lens[i], GPO_CACHE_FIELD_MAX);
        /* Length-prefixed: no field's content can pose as the next field. */
        pn[i] = snprintf(pre[i], sizeof pre[i], "%s=%zu:", key_fields[i], lens[i]);
        total += (size_t)pn[i] + lens[i] + 1;
    }
    char *text = malloc(total + 1), *p = text;
    if (!text)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "no memory for a cache key");
    memcpy(p, head, (size_t)hn);
    p += hn;
    for (int i = 0; i < 8; i++) {
        if (i == 3) {
            memcpy(p, cu, (size_t)cn);
            p += cn;
            continue;
        }
        memcpy(p, pre[i], (size_t)pn[i]);
        p += pn[i];
        if (lens[i])
            memcpy(p, s[i], lens[i]);
        p += lens[i];
        *p++ = '\n';
    }
    *p = '\0';
    if (hash)
        *hash = gpo_hash64(text, total);
    *canon = text;
    return GPUOPT_OK;
}

int gpo_cache_key_from_json(const cJSON *hard, gpo_cache_key *key)
{
    if (!cJSON_IsObject(hard))
        return -1;
    const char *s[8];
    for (int i = 0; i < 8; i++) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(hard, key_fields[i]);
        if (i == 3) {
            if (!cJSON_IsNumber(f) || f->valuedouble != (double)f->valueint)
                return -1;
            key->compute_units = f->valueint;
            s[i] = NULL;
            continue;
        }
        if (!cJSON_IsString(f))
            return -1;
        s[i] = f->valuestring;
    }
    key->kind = s[0];
    key->backend = s[1];
    key->arch = s[2];
    key->source_hash = s[4];
    key->options_hash = s[5];
    key->space_hash = s[6];
    key->workload = s[7];
    return 0;
}

cJSON *gpo_cache_key_to_json(const gpo_cache_key *key)
{
    cJSON *o = cJSON_CreateObject();
    const char *s[8];
    key_strings(key, s);
    for (int i = 0; o && i < 8; i++) {
        cJSON *v =
            i == 3 ? cJSON_CreateNumber(key->compute_units) : cJSON_CreateString(s[i] ? s[i] : "");
        if (!v || !cJSON_AddItemToObject(o, key_fields[i], v)) {
            cJSON_Delete(v);
            cJSON_Delete(o);
            return NULL;
        }
    }
    return o;
}

static const char *soft_value(const gpo_cache_soft *soft, int i)
{
    if (!soft)
        return i == 2 ? gpuopt_version() : "";
    const char *v[4] = {soft->driver, soft->compiler, soft->library, soft->device_name};
    if (i == 2 && !v[2])
        return gpuopt_version();
    return v[i] ? v[i] : "";
}

cJSON *gpo_cache_soft_to_json(const gpo_cache_soft *soft)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; o && i < 4; i++)
        if (!cJSON_AddStringToObject(o, gpo_cache_soft_name(1u << i), soft_value(soft, i))) {
            cJSON_Delete(o);
            return NULL;
        }
    return o;
}

uint32_t gpo_cache_soft_diff(const cJSON *stored, const gpo_cache_soft *soft)
{
    uint32_t changed = 0;
    for (int i = 0; i < 4; i++) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(stored, gpo_cache_soft_name(1u << i));
        const char *was = cJSON_IsString(f) ? f->valuestring : "";
        /* An unknown value on either side counts as a change: re-timing two
         * candidates costs little, trusting a stale winner can cost a lot. */
        if (strcmp(was, soft_value(soft, i)) != 0)
            changed |= 1u << i;
    }
    return changed;
}

int gpo_cache_params_valid(const cJSON *params, char *why, size_t cap)
{
    if (!cJSON_IsObject(params))
        return gpo_say(-1, why, cap, "parameters must be a JSON object of names to values");
    int n = 0;
    for (const cJSON *p = params->child; p; p = p->next, n++) {
        if (n == GPO_CACHE_PARAMS_MAX)
            return gpo_say(-1, why, cap, "more than %d parameters", GPO_CACHE_PARAMS_MAX);
        if (!p->string || !p->string[0])
            return gpo_say(-1, why, cap, "parameter %d has no name", n);
        if (!(cJSON_IsString(p) || (cJSON_IsNumber(p) && isfinite(p->valuedouble))))
            return gpo_say(-1, why, cap, "parameter '%s' is neither a finite number nor a string",
                           p->string);
        for (const cJSON *q = params->child; q != p; q = q->next)
            if (strcmp(q->string, p->string) == 0)
                return gpo_say(-1, why, cap, "parameter '%s' appears twice", p->string);
    }
    return 0;
}

static const char *const status_names[] = {
    "ok", "invalid", "compile_failed", "launch_failed", "wrong_result", "timeout", "pruned", "fault"};
#define N_STATUS ((int32_t)(sizeof status_names / sizeof status_names[0]))

const char *gpo_cache_status_name(int32_t status)
{
    return status >= 0 && status < N_STATUS ? status_names[status] : NULL;
}

int32_t gpo_cache_status_parse(const char *name)
{
    for (int32_t i = 0; name && i < N_STATUS; i++)
        if (strcmp(name, status_names[i]) == 0)
            return i;
    return -1;
}

static const char *const stat_names[5] = {"median_ns", "min_ns", "p20_ns", "p80_ns", "compile_ms"};

static void stat_values(const gpo_cache_stats *s, double v[5])
{
    v[0] = s->median_ns;
    v[1] = s->min_ns;
    v[2] = s->p20_ns;
    v[3] = s->p80_ns;
    v[4] = s->compile_ms;
}

int gpo_cache_stats_valid(const gpo_cache_stats *s, char *why, size_t cap)
{
    if (!gpo_cache_status_name(s->status))
        return gpo_say(-1, why, cap, "candidate status %d: accepted 0 (ok) to %d (pruned)",
                       (int)s->status, (int)N_STATUS - 1);
    if (s->runs < 0)
        return gpo_say(-1, why, cap, "runs %d is negative", (int)s->runs);
    double v[5];
    stat_values(s, v);
    for (int i = 0; i < 5; i++)
        if (!isfinite(v[i]) || (v[i] < 0 && v[i] != -1))
            return gpo_say(-1, why, cap,
                           "%s %g: accepted a finite value >= 0, or -1 (not measured)",
                           stat_names[i], v[i]);
    return 0;
}

int gpo_cache_stats_to_json(cJSON *obj, const gpo_cache_stats *s)
{
    double v[5];
    stat_values(s, v);
    if (!cJSON_AddStringToObject(obj, "status", gpo_cache_status_name(s->status)) ||
        !cJSON_AddNumberToObject(obj, "runs", s->runs))
        return -1;
    for (int i = 0; i < 5; i++)
        if (!cJSON_AddNumberToObject(obj, stat_names[i], v[i]))
            return -1;
    return 0;
}

int gpo_cache_candidate_valid(const cJSON *cand, gpo_cache_stats *out, char *why, size_t cap)
{
    gpo_cache_stats s;
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(cand, "status");
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(cand, "runs");
    if (!cJSON_IsObject(cand))
        return gpo_say(-1, why, cap, "a candidate that is not an object");
    if (gpo_cache_params_valid(cJSON_GetObjectItemCaseSensitive(cand, "params"), why, cap))
        return -1;
    if (!cJSON_IsString(status) || (s.status = gpo_cache_status_parse(status->valuestring)) < 0)
        return gpo_say(-1, why, cap, "a candidate with an unknown status");
    /* Range first: a double outside int32_t must never be converted. */
    if (!cJSON_IsNumber(runs) || !(runs->valuedouble >= 0 && runs->valuedouble <= INT32_MAX) ||
        runs->valuedouble != (double)(int32_t)runs->valuedouble)
        return gpo_say(-1, why, cap, "a candidate whose runs are not a count");
    s.runs = (int32_t)runs->valuedouble;
    double *v[5] = {&s.median_ns, &s.min_ns, &s.p20_ns, &s.p80_ns, &s.compile_ms};
    for (int i = 0; i < 5; i++) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(cand, stat_names[i]);
        if (!cJSON_IsNumber(f))
            return gpo_say(-1, why, cap, "a candidate without %s", stat_names[i]);
        *v[i] = f->valuedouble;
    }
    if (gpo_cache_stats_valid(&s, why, cap))
        return -1;
    if (out)
        *out = s;
    return 0;
}
