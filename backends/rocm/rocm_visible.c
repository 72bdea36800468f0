/* Device visibility for the KFD path, reproducing what the HIP runtime would
 * show (when HIP itself is loaded, the runtime applies these variables and
 * the backend keeps its ordinals as they are).
 *
 * Two filters, in this order:
 *  1. ROCR_VISIBLE_DEVICES, applied by ROCr to the GPU nodes in KFD order
 *     (ROCR-Runtime core/inc/amd_filter_device.h, amd_filter_device.cpp):
 *     set but empty shows no GPU; comma-separated tokens, trimmed and
 *     upper-cased; a token is an index (strtol base 0: "0x1" is 1) or a
 *     UUID prefix starting with "G" (5..20 characters, matching exactly one
 *     GPU's "GPU-<16 hex>"). The first token that is malformed, out of
 *     range, ambiguous or a repeat ends the list; the tokens before it are
 *     kept, in the given order.
 *  2. HIP_VISIBLE_DEVICES, or CUDA_VISIBLE_DEVICES when HIP's is unset or
 *     empty, applied by HIP (clr rocclr/device/rocm/rocdevice.cpp,
 *     Device::init) to what ROCr left: an empty value filters nothing;
 *     tokens are indexes written canonically ("1", not "01" or " 1") or
 *     text containing "GPU-" found inside a GPU's UUID (case as written:
 *     ROCr's UUIDs are lower case). The first invalid token ends the list;
 *     repeats are skipped. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocm_internal.h"
#include "util/strutil.h"

#define MAX_TOKEN 64
/* More GPU nodes than any machine has (8 MI300X in CPX mode are 64). */
#define MAX_GPUS 256

/* Next comma-separated token of *p into tok; 0 at the end. */
static int next_token(const char **p, char *tok, size_t cap)
{
    const char *s = *p;
    if (!s)
        return 0;
    const char *c = strchr(s, ',');
    size_t len = c ? (size_t)(c - s) : strlen(s);
    if (len >= cap)
        len = cap - 1;
    memcpy(tok, s, len);
    tok[len] = '\0';
    *p = c ? c + 1 : NULL;
    return 1;
}

/* ROCr: index of the single GPU whose upper-cased UUID starts with tok. */
static long rocr_uuid(const char *tok, const char *const *uuids, const size_t *cur, size_t n)
{
    size_t len = strlen(tok);
    long found = -1;
    if (len < 5 || len > 20)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const char *u = uuids[cur[i]];
        if (!u || !*u || strlen(u) < len)
            continue;
        size_t k = 0;
        while (k < len && toupper((unsigned char)u[k]) == tok[k])
            k++;
        if (k == len) {
            if (found >= 0)
                return -1; /* ambiguous: terminating */
            found = (long)i;
        }
    }
    return found;
}

static size_t apply_rocr(const char *value, const char *const *uuids, size_t *cur, size_t n)
{
    size_t out[MAX_GPUS];
    size_t m = 0;
    char tok[MAX_TOKEN];
    const char *p = value;

    while (m < n && next_token(&p, tok, sizeof tok)) {
        char *t = gpo_trim(tok);
        for (char *q = t; *q; q++)
            *q = (char)toupper((unsigned char)*q);
        long idx;
        if (t[0] == 'G') {
            idx = rocr_uuid(t, uuids, cur, n);
        } else {
            char *end;
            if (!*t)
                break;
            idx = strtol(t, &end, 0);
            if (*end)
                break;
        }
        if (idx < 0 || (size_t)idx >= n)
            break;
        int seen = 0;
        for (size_t k = 0; k < m; k++)
            seen |= out[k] == cur[idx];
        if (seen)
            break;
        out[m++] = cur[idx];
    }
    memcpy(cur, out, m * sizeof *cur);
    return m;
}

static size_t apply_hip(const char *value, const char *const *uuids, size_t *cur, size_t n)
{
    size_t out[MAX_GPUS];
    size_t m = 0;
    char tok[MAX_TOKEN];
    const char *p = value;

    while (next_token(&p, tok, sizeof tok)) {
        long idx = -1;
        if (strstr(tok, "GPU-")) {
            for (size_t i = 0; i < n; i++) {
                const char *u = uuids[cur[i]];
                if (u && *u && strstr(u, tok)) {
                    idx = (long)i;
                    break;
                }
            }
        } else {
            char canon[32];
            char *end;
            long v = strtol(tok, &end, 10);
            snprintf(canon, sizeof canon, "%ld", v);
            if (*tok && !*end && strcmp(canon, tok) == 0)
                idx = v;
        }
        if (idx < 0 || (size_t)idx >= n)
            break;
        int seen = 0;
        for (size_t k = 0; k < m; k++)
            seen |= out[k] == cur[idx];
        if (!seen && m < n)
            out[m++] = cur[idx];
    }
    memcpy(cur, out, m * sizeof *cur);
    return m;
}

size_t gpo_rocm_visible(const char *rocr, const char *hip, const char *cuda,
                        const char *const *uuids, size_t n, size_t *order, char *why,
                        size_t why_cap)
{
    size_t m = n;
    gpo_sbuf msg;

    if (why && why_cap)
        why[0] = '\0';
    if (!order || (n && !uuids))
        return 0;
    if (n > MAX_GPUS)
        n = m = MAX_GPUS;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    gpo_sbuf_init(&msg);
    if (rocr) {
        m = apply_rocr(rocr, uuids, order, m);
        gpo_sbuf_appendf(&msg, "ROCR_VISIBLE_DEVICES=\"%s\" leaves %zu of %zu GPUs", rocr, m, n);
    }
    const char *h = hip && *hip ? hip : NULL;
    const char *name = "HIP_VISIBLE_DEVICES";
    if (!h && cuda && *cuda) {
        h = cuda;
        name = "CUDA_VISIBLE_DEVICES";
    }
    if (h) {
        size_t before = m;
        m = apply_hip(h, uuids, order, m);
        gpo_sbuf_appendf(&msg, "%s%s=\"%s\" leaves %zu of %zu", msg.len ? "; " : "", name, h, m,
                         before);
    }
    if (why && why_cap)
        gpo_strlcpy(why, msg.data ? msg.data : "", why_cap);
    gpo_sbuf_free(&msg);
    return m;
}
