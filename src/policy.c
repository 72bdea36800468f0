/* Device selectors: the syntax ("auto", "gpu", a backend, backend:index, a
 * UUID or unique prefix, a PCI bus id) and the match of one device. */
#include "policy.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "backend.h"
#include "util/strutil.h"

static const char accepted_policies[] =
    "accepted: auto, gpu, a backend name (%s), backend:index (e.g. %s:0), a UUID (GPU-... "
    "or a unique prefix of at least 8 characters), or a PCI bus id (0000:3b:00.0 or 3b:00.0)";

static void why_accepted(const struct gpo_backend *const *list, size_t n, char *why, size_t cap)
{
    char names[128] = "";
    for (size_t i = 0; i < n; i++) {
        size_t used = strlen(names);
        gpo_snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", list[i]->name);
    }
    gpo_snprintf(why, cap, accepted_policies, names, n ? list[0]->name : "cpu");
}

static int looks_like_uuid(const char *s)
{
    size_t digits = 0;
    if (strncmp(s, "GPU-", 4) == 0 || strncmp(s, "MIG-", 4) == 0)
        s += 4;
    for (; *s; s++) {
        if (isxdigit((unsigned char)*s))
            digits++;
        else if (*s != '-')
            return 0;
    }
    return digits >= 8;
}

int gpo_policy_parse(const char *text, const struct gpo_backend *const *list, size_t n,
                     gpo_policy *out, char *why, size_t cap)
{
    char buf[GPO_POLICY_MAX];
    memset(out, 0, sizeof *out);
    out->index = -1;
    if (!text || gpo_strlcpy(buf, text, sizeof buf) >= sizeof buf)
        goto bad;
    gpo_trim(buf);
    if (!*buf)
        goto bad;
    if (gpo_strcaseeq(buf, "auto")) {
        out->kind = GPO_POLICY_AUTO;
        return 0;
    }
    if (gpo_strcaseeq(buf, "gpu")) {
        out->kind = GPO_POLICY_GPU;
        return 0;
    }
    char *colon = strchr(buf, ':');
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(list[i]->name);
        if (strncasecmp(buf, list[i]->name, len) != 0)
            continue;
        if (buf[len] == '\0') {
            out->kind = GPO_POLICY_BACKEND;
            gpo_strlcpy(out->backend, list[i]->name, sizeof out->backend);
            return 0;
        }
        if (buf[len] == ':') {
            int64_t idx;
            const char *digits = buf + len + 1;
            /* Digits only: "cpu: 0" and "cpu:+0" are typos, not indices. */
            for (const char *c = digits; *c; c++)
                if (!isdigit((unsigned char)*c))
                    goto bad;
            if (gpo_parse_i64(digits, 0, INT32_MAX, &idx))
                goto bad;
            out->kind = GPO_POLICY_INDEX;
            gpo_strlcpy(out->backend, list[i]->name, sizeof out->backend);
            out->index = (int32_t)idx;
            return 0;
        }
    }
    if (colon && gpo_pci_normalise(buf, out->key, sizeof out->key) == 0) {
        out->kind = GPO_POLICY_PCI;
        return 0;
    }
    if (looks_like_uuid(buf)) {
        out->kind = GPO_POLICY_UUID;
        gpo_strlcpy(out->key, buf, sizeof out->key);
        return 0;
    }
bad:
    why_accepted(list, n, why, cap);
    return -1;
}

/* Hex digits of a UUID, lower case, without "GPU-" and dashes. */
static void uuid_hex(const char *in, char *out, size_t cap)
{
    size_t k = 0;
    if (strncmp(in, "GPU-", 4) == 0 || strncmp(in, "MIG-", 4) == 0)
        in += 4;
    for (; *in && k + 1 < cap; in++)
        if (isxdigit((unsigned char)*in))
            out[k++] = (char)tolower((unsigned char)*in);
    out[k] = '\0';
}

int gpo_policy_matches(const gpo_policy *pol, const gpuopt_device *dev)
{
    switch (pol->kind) {
    case GPO_POLICY_AUTO: return 1;
    case GPO_POLICY_GPU: return dev->info.type == GPUOPT_DEVICE_TYPE_GPU;
    case GPO_POLICY_BACKEND:
    case GPO_POLICY_INDEX:
        /* Any route counts: "opencl:0" still finds a GPU listed as cuda:0. */
        for (int r = 0; r < dev->n_routes; r++) {
            if (!dev->routes[r].backend || strcmp(dev->routes[r].backend->name, pol->backend))
                continue;
            if (pol->kind == GPO_POLICY_BACKEND || dev->routes[r].index == pol->index)
                return 1;
        }
        return 0;
    case GPO_POLICY_UUID: {
        char want[64], have[64];
        if (!dev->info.uuid[0])
            return 0;
        uuid_hex(pol->key, want, sizeof want);
        uuid_hex(dev->info.uuid, have, sizeof have);
        return strncmp(have, want, strlen(want)) == 0;
    }
    case GPO_POLICY_PCI: {
        char have[32];
        return gpo_pci_normalise(dev->info.pci_bus_id, have, sizeof have) == 0 &&
               strcmp(have, pol->key) == 0;
    }
    }
    return 0;
}

int gpo_policy_is_search(const gpo_policy *pol)
{
    return pol->kind == GPO_POLICY_AUTO || pol->kind == GPO_POLICY_GPU ||
           pol->kind == GPO_POLICY_BACKEND;
}
