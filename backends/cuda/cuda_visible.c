/* CUDA_VISIBLE_DEVICES as the CUDA driver reads it (CUDA C++ Programming
 * Guide, "CUDA Environment Variables"): a comma-separated list of device
 * indices or UUIDs ("GPU-...", or "MIG-..." for a MIG instance); the
 * driver reads it up to the first entry that is not a device, and only the
 * entries before that one are visible. Set to "" or "-1" (a common way to
 * say "no GPU" in job scripts) it hides every device, and the driver then
 * answers "no device" as if there were none. */
#include "cuda_visible.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

void gpo_cuda_visible_parse(const char *text, int n_devices, const char *const *uuids,
                            size_t n_uuids, gpo_dr_visible *out)
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
