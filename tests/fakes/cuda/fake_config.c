/* The test double's configuration: the environment variables and JSON
 * device descriptions fake_cuda.c answers from (see its header comment). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda.h"

static const struct {
    int value;
    const char *name;
} attr_names[] = {
#define ATTR_NAME_(name, value) {value, #name},
    GPO_CU_DEVICE_ATTRIBUTES(ATTR_NAME_)
#undef ATTR_NAME_
};

static const struct {
    gpo_cu_result value;
    const char *name;
} result_names[] = {
#define RESULT_NAME_(name, value) {value, #name},
    GPO_CUDA_RESULTS(RESULT_NAME_)
#undef RESULT_NAME_
};

const char *fake_result_name(gpo_cu_result r)
{
    for (size_t i = 0; i < sizeof result_names / sizeof result_names[0]; i++)
        if (result_names[i].value == r)
            return result_names[i].name;
    return NULL;
}

static int parse_result(const char *text, gpo_cu_result *out)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*text && !*end) {
        *out = (gpo_cu_result)v;
        return 0;
    }
    for (size_t i = 0; i < sizeof result_names / sizeof result_names[0]; i++)
        if (strcmp(result_names[i].name, text) == 0) {
            *out = result_names[i].value;
            return 0;
        }
    return -1;
}

static int attr_index(const char *name)
{
    for (size_t i = 0; i < sizeof attr_names / sizeof attr_names[0]; i++)
        if (strcmp(attr_names[i].name, name) == 0)
            return attr_names[i].value;
    return -1;
}

/* "GPU-" or, for a MIG instance, "MIG-", then 32 hex digits in 8-4-4-4-12. */
static int parse_uuid(const char *text, gpo_cu_uuid *u)
{
    int n = 0;
    memset(u, 0, sizeof *u);
    if (strncmp(text, "GPU-", 4) != 0 && strncmp(text, "MIG-", 4) != 0)
        return -1;
    for (const char *p = text + 4; *p && n < 32; p++) {
        if (*p == '-')
            continue;
        unsigned v;
        if (sscanf(p, "%1x", &v) != 1)
            return -1;
        u->bytes[n / 2] = (char)((unsigned char)u->bytes[n / 2] | (v << (n % 2 ? 0 : 4)));
        n++;
    }
    return n == 32 ? 0 : -1;
}

/* "file.json@9a": the board of file.json at PCI bus 0x9a, its UUID's last
 * byte 0x9a (so several copies of one description stay distinct boards). */
static int load_device_at(fake_config *c, char *entry, fake_device *d);

static int load_device(fake_config *c, const char *path, fake_device *d)
{
    int rc = -1;
    char *text = NULL;
    cJSON *root = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(c->error, sizeof c->error, "cannot open %s", path);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = calloc(1, (size_t)len + 1);
    if (!text || fread(text, 1, (size_t)len, f) != (size_t)len)
        goto out;
    root = cJSON_Parse(text);
    const cJSON *name = cJSON_GetObjectItem(root, "name");
    const cJSON *cc = cJSON_GetObjectItem(root, "compute_capability");
    const cJSON *total = cJSON_GetObjectItem(root, "total_memory_bytes");
    const cJSON *free_mem = cJSON_GetObjectItem(root, "free_memory_bytes");
    const cJSON *uuid = cJSON_GetObjectItem(root, "uuid");
    /* A MIG instance ("uuid": "MIG-...") names its GPU's UUID, which the
     * unversioned cuDeviceGetUuid answers. */
    const cJSON *gpu_uuid = cJSON_GetObjectItem(root, "gpu_uuid");
    const cJSON *attrs = cJSON_GetObjectItem(root, "attributes");
    if (!cJSON_IsString(name) || !cJSON_IsArray(cc) || cJSON_GetArraySize(cc) != 2 ||
        !cJSON_IsNumber(total) || !cJSON_IsString(uuid) || !cJSON_IsObject(attrs)) {
        snprintf(c->error, sizeof c->error,
                 "%s: needs name, compute_capability [major, minor], total_memory_bytes, uuid, "
                 "attributes",
                 path);
        goto out;
    }
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name->valuestring);
    d->total = (size_t)total->valuedouble;
    d->free_mem = cJSON_IsNumber(free_mem) ? (size_t)free_mem->valuedouble : d->total;
    snprintf(d->uuid_text, sizeof d->uuid_text, "%s", uuid->valuestring);
    if (parse_uuid(uuid->valuestring, &d->uuid) != 0 ||
        parse_uuid(cJSON_IsString(gpu_uuid) ? gpu_uuid->valuestring : uuid->valuestring,
                   &d->gpu_uuid) != 0 ||
        (strncmp(uuid->valuestring, "MIG-", 4) == 0) != cJSON_IsString(gpu_uuid)) {
        snprintf(c->error, sizeof c->error,
                 "%s: malformed uuid (GPU-..., or MIG-... with the GPU's gpu_uuid)", path);
        goto out;
    }
    d->attrs[GPO_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR] =
        cJSON_GetArrayItem(cc, 0)->valueint;
    d->attrs[GPO_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR] =
        cJSON_GetArrayItem(cc, 1)->valueint;
    d->attrs_set[GPO_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR] = 1;
    d->attrs_set[GPO_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR] = 1;
    const cJSON *a;
    cJSON_ArrayForEach(a, attrs)
    {
        int idx = attr_index(a->string);
        if (idx < 0 || !cJSON_IsNumber(a)) {
            snprintf(c->error, sizeof c->error, "%s: unknown attribute or value %s", path,
                     a->string);
            goto out;
        }
        d->attrs[idx] = a->valueint;
        d->attrs_set[idx] = 1;
    }
    rc = 0;
out:
    if (rc && !c->error[0])
        snprintf(c->error, sizeof c->error, "%s: not valid JSON", path);
    cJSON_Delete(root);
    free(text);
    fclose(f);
    return rc;
}

static int load_device_at(fake_config *c, char *entry, fake_device *d)
{
    char *at = strrchr(entry, '@');
    if (!at)
        return load_device(c, entry, d);
    *at = '\0';
    char *end;
    long bus = strtol(at + 1, &end, 16);
    if (!at[1] || *end || bus < 0 || bus > 0xff) {
        snprintf(c->error, sizeof c->error, "%s: '@%s' is not a PCI bus number", entry, at + 1);
        return -1;
    }
    if (load_device(c, entry, d) != 0)
        return -1;
    d->attrs[GPO_CU_DEVICE_ATTRIBUTE_PCI_BUS_ID] = (int)bus;
    d->attrs_set[GPO_CU_DEVICE_ATTRIBUTE_PCI_BUS_ID] = 1;
    d->uuid.bytes[15] = (char)bus;
    d->gpu_uuid.bytes[15] = (char)bus;
    size_t n = strlen(d->uuid_text);
    if (n >= 2)
        snprintf(d->uuid_text + n - 2, 3, "%02lx", bus);
    return 0;
}

static void parse_rules(fake_config *c, const char *text)
{
    char buf[1024];
    char *save = NULL;
    snprintf(buf, sizeof buf, "%s", text);
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *c1 = strchr(tok, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        fake_rule *r = &c->rules[c->n_rules];
        if (!c2 || c->n_rules == FAKE_MAX_RULES) {
            snprintf(c->error, sizeof c->error, "GPUOPT_FAKE_CUDA_FAIL: bad rule %s", tok);
            return;
        }
        *c1 = *c2 = '\0';
        snprintf(r->sym, sizeof r->sym, "%s", tok);
        r->nth = strcmp(c1 + 1, "*") == 0 ? 0 : strtol(c1 + 1, NULL, 10);
        if ((r->nth < 1 && strcmp(c1 + 1, "*") != 0) || parse_result(c2 + 1, &r->result) != 0) {
            snprintf(c->error, sizeof c->error, "GPUOPT_FAKE_CUDA_FAIL: bad rule %s", tok);
            return;
        }
        c->n_rules++;
    }
}

/* The device a CUDA_VISIBLE_DEVICES entry names: an index, or a UUID
 * ("GPU-..."/"MIG-...") given whole or by a prefix only one device has;
 * -1 for none. */
static int visible_entry(const fake_device *all, int n_all, const char *e, size_t len)
{
    char *end;
    long idx = strtol(e, &end, 10);
    if (end != e && (size_t)(end - e) == len)
        return idx >= 0 && idx < n_all ? (int)idx : -1;
    int found = -1;
    for (int i = 0; i < n_all; i++)
        if (len >= 5 && strncmp(all[i].uuid_text, e, len) == 0) {
            if (found >= 0)
                return -1; /* ambiguous */
            found = i;
        }
    return found;
}

/* CUDA_VISIBLE_DEVICES with indices or UUIDs (the CUDA C++ Programming
 * Guide, "CUDA Environment Variables": devices not listed are hidden, the
 * order is the listed one, and an invalid entry ends the list). */
static void apply_visibility(fake_config *c, const char *text)
{
    static fake_device all[FAKE_MAX_DEVICES]; /* under the fake's lock */
    int n_all = c->n_devices, n = 0;
    memcpy(all, c->devices, sizeof all);
    const char *p = text;
    while (*p && n < FAKE_MAX_DEVICES) {
        size_t len = strcspn(p, ",");
        int idx = visible_entry(all, n_all, p, len);
        if (idx < 0)
            break;
        c->devices[n++] = all[idx];
        p += len;
        if (*p != ',')
            break;
        p++;
    }
    c->n_devices = n;
}

/* Reads the environment into *c; called under the fake's lock. */
void fake_config_read(fake_config *c)
{
    const char *env;
    memset(c, 0, sizeof *c);
    c->init_result = GPO_CUDA_SUCCESS;
    c->driver_version = 13000;
    if ((env = getenv("GPUOPT_FAKE_CUDA_DEVICES")) && *env) {
        char buf[8192];
        char *save = NULL;
        snprintf(buf, sizeof buf, "%s", env);
        for (char *p = strtok_r(buf, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
            if (c->n_devices == FAKE_MAX_DEVICES ||
                load_device_at(c, p, &c->devices[c->n_devices]) != 0)
                break;
            c->n_devices++;
        }
    }
    if ((env = getenv("CUDA_VISIBLE_DEVICES")))
        apply_visibility(c, env);
    if ((env = getenv("GPUOPT_FAKE_CUDA_INIT")) && *env) {
        if (parse_result(env, &c->init_result) != 0)
            snprintf(c->error, sizeof c->error, "GPUOPT_FAKE_CUDA_INIT: unknown %s", env);
    } else {
        /* What the real driver answers on a machine without an NVIDIA GPU. */
        c->init_result = c->n_devices ? GPO_CUDA_SUCCESS : GPO_CUDA_ERROR_NO_DEVICE;
    }
    if ((env = getenv("GPUOPT_FAKE_CUDA_DRIVER_VERSION")) && *env)
        c->driver_version = atoi(env);
    if ((env = getenv("GPUOPT_FAKE_CUDA_FAIL")) && *env)
        parse_rules(c, env);
    if ((env = getenv("GPUOPT_FAKE_CUDA_LAUNCH_NS")) && *env) {
        char *end;
        c->launch_ns = strtod(env, &end);
        c->launch_runs = 1;
        if (*end)
            snprintf(c->error, sizeof c->error, "GPUOPT_FAKE_CUDA_LAUNCH_NS: not a number: %s",
                     env);
    }
    if ((env = getenv("GPUOPT_FAKE_CUDA_FAULT")) && *env) {
        char *end;
        c->fault_nth = strtol(env, &end, 10);
        if (c->fault_nth < 1 || *end != ':' || parse_result(end + 1, &c->fault_result) != 0)
            snprintf(c->error, sizeof c->error, "GPUOPT_FAKE_CUDA_FAULT: not N:RESULT: %s", env);
        if (!c->launch_runs) {
            c->launch_runs = 1;
            c->launch_ns = 1000.0;
        }
    }
}
