/* Visibility variables: CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES,
 * ROCR_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL. Set to "" or "-1" (a common
 * way to say "no GPU" in job scripts) they hide every device, and the
 * driver then answers "no device" as if there were none.
 *
 * The rule (CUDA C++ Programming Guide, "CUDA Environment Variables"; the
 * HIP Programming Guide says HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES
 * behave the same): a comma-separated list of device indices or UUIDs;
 * the driver reads it up to the first entry that is not a device, and only
 * the entries before that one are visible. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "util/strutil.h"

/* 1 when `entry` ("GPU-6f8b0d2e") is a prefix of one of `uuids`. */
static int uuid_matches(const char *entry, const char *const *uuids, size_t n)
{
    size_t len = strlen(entry);
    for (size_t i = 0; i < n; i++)
        if (uuids[i] && strlen(uuids[i]) >= len && strncasecmp(uuids[i], entry, len) == 0)
            return 1;
    return 0;
}

/* Classifies one entry; returns 1 when it names a device. */
static int entry_ok(const char *e, int n_devices, const char *const *uuids, size_t n_uuids,
                    char *why, size_t cap)
{
    if (!*e) {
        gpo_snprintf(why, cap, "an empty entry");
        return 0;
    }
    if (strncmp(e, "GPU-", 4) == 0 || strncmp(e, "MIG-", 4) == 0) {
        /* MIG instance UUIDs are not in the kernel's files: trust them. */
        if (strncmp(e, "GPU-", 4) == 0 && n_uuids && !uuid_matches(e, uuids, n_uuids)) {
            gpo_snprintf(why, cap, "a UUID no GPU here has");
            return 0;
        }
        return 1;
    }
    int64_t idx;
    if (gpo_parse_i64(e, INT32_MIN, INT32_MAX, &idx) != 0) {
        gpo_snprintf(why, cap, "neither a device index nor a GPU-/MIG- UUID");
        return 0;
    }
    if (idx < 0) {
        gpo_snprintf(why, cap, "a negative index");
        return 0;
    }
    if (n_devices >= 0 && idx >= n_devices) {
        gpo_snprintf(why, cap, "index %lld, but the kernel lists %d GPU%s", (long long)idx,
                     n_devices, n_devices == 1 ? "" : "s");
        return 0;
    }
    return 1;
}

void gpo_dr_visible_parse(const char *text, int n_devices, const char *const *uuids, size_t n_uuids,
                          gpo_dr_visible *out)
{
    memset(out, 0, sizeof *out);
    if (!text)
        return;
    char *copy = gpo_strdup(text);
    if (!copy)
        return;
    int stopped = 0;
    char *p = copy;
    if (*gpo_trim(p)) {
        for (;;) {
            char *comma = strchr(p, ',');
            if (comma)
                *comma = '\0';
            char *e = gpo_trim(p);
            out->total++;
            if (!stopped) {
                if (entry_ok(e, n_devices, uuids, n_uuids, out->why_bad, sizeof out->why_bad)) {
                    out->valid++;
                } else {
                    stopped = 1;
                    gpo_strlcpy(out->bad, e, sizeof out->bad);
                }
            }
            if (!comma)
                break;
            p = comma + 1;
        }
    }
    free(copy);
}

void gpo_dr_check_visible(gpo_dr_report *r, const char *backend, const char *const *vars,
                          size_t n_vars, gpo_dr_visible_fn parse, void *arg, int n_devices,
                          int vendor_present)
{
    int any = 0;
    for (size_t i = 0; i < n_vars; i++) {
        const char *value = gpo_dr_env(vars[i]);
        if (!value)
            continue;
        any = 1;
        gpo_dr_visible v;
        parse(vars[i], value, arg, &v);
        gpo_dr_finding *f;
        if (v.valid == 0) {
            f = gpo_dr_add(r, backend, "visible_devices",
                           vendor_present ? GPO_DR_PROBLEM : GPO_DR_WARNING);
            gpo_dr_say(r, f, "%s='%s' hides every GPU from the driver", vars[i], value);
            if (v.total == 0)
                gpo_dr_evidence(r, f, "%s is set and empty: no device is visible", vars[i]);
            else
                gpo_dr_evidence(r, f,
                                "its first entry '%s' is %s, where the driver stops "
                                "reading the list",
                                v.bad, v.why_bad);
            gpo_dr_fix(r, f, "unset %s (or list the GPUs to use, e.g. %s=0)", vars[i], vars[i]);
        } else if (v.bad[0]) {
            f = gpo_dr_add(r, backend, "visible_devices", GPO_DR_WARNING);
            gpo_dr_say(r, f, "%s='%s': only the first %d of its %d entries count", vars[i], value,
                       v.valid, v.total);
            gpo_dr_evidence(r, f,
                            "entry '%s' is %s; the driver ignores it and everything "
                            "after it",
                            v.bad, v.why_bad);
            gpo_dr_fix(r, f, "remove '%s' (and fix the entries after it) in %s", v.bad, vars[i]);
        } else {
            f = gpo_dr_add(r, backend, "visible_devices", GPO_DR_INFO);
            if (n_devices >= 0)
                gpo_dr_say(r, f, "%s='%s' shows %d of the %d GPU%s the kernel lists", vars[i],
                           value, v.valid, n_devices, n_devices == 1 ? "" : "s");
            else
                gpo_dr_say(r, f, "%s='%s' restricts the driver to %d device%s", vars[i], value,
                           v.valid, v.valid == 1 ? "" : "s");
            gpo_dr_evidence(r, f, "%s=%s", vars[i], value);
        }
        gpo_dr_path(r, f, vars[i]);
    }
    if (!any) {
        gpo_sbuf names;
        gpo_sbuf_init(&names);
        for (size_t i = 0; i < n_vars; i++)
            gpo_sbuf_appendf(&names, "%s%s", i ? ", " : "", vars[i]);
        gpo_dr_finding *f = gpo_dr_add(r, backend, "visible_devices", GPO_DR_OK);
        gpo_dr_say(r, f, "no visibility variable hides devices");
        gpo_dr_evidence(r, f, "not set: %s", names.data ? names.data : "");
        if (names.failed)
            r->failed = 1;
        gpo_sbuf_free(&names);
    }
}
