/* Device visibility as ROCr and HIP apply it (rocm_visible.h). With HIP
 * loaded the runtime applies these variables itself; this reading is for
 * the GPUs listed from the KFD topology and for the doctor.
 *
 * Two filters, in this order:
 *  1. ROCR_VISIBLE_DEVICES, applied by ROCr to the GPU nodes in KFD order
 *     (ROCR-Runtime core/runtime/amd_filter_device.cpp, RvdFilter): set but
 *     empty shows no GPU; entries are split on ',' (std::getline: a trailing
 *     comma adds none), trimmed and upper-cased; ROCr reads at most as many
 *     entries as there are GPUs (BuildUsrDeviceList's loopCnt). An entry
 *     starting with 'G' is a UUID prefix of 5 to 20 characters that must
 *     match exactly one GPU's "GPU-<16 hex>" (ProcessUuidToken); any other
 *     is an index read with strtol base 0 ("0x1" is 1, "010" is 8). The
 *     first entry that is malformed, out of range, ambiguous or a repeat
 *     ends the list; the entries before it are kept, in the given order.
 *  2. HIP_VISIBLE_DEVICES, or CUDA_VISIBLE_DEVICES when HIP's is unset or
 *     empty, applied by HIP to what ROCr left (clr rocclr/device/rocm/
 *     rocdevice.cpp, Device::init: `HIP_VISIBLE_DEVICES[0] != '\0' ?
 *     HIP_VISIBLE_DEVICES : CUDA_VISIBLE_DEVICES`; GPU_DEVICE_ORDINAL is
 *     read there only for OpenCL). An empty value filters nothing. An entry
 *     containing "GPU-" names the first GPU whose UUID contains it, as
 *     written (ROCr's HSA_AMD_AGENT_INFO_UUID is lower-case hex, and
 *     "GPU-XX" for a GPU without a unique id: amd_gpu_agent.cpp); any other
 *     must be an index written canonically (atoi, then compared with
 *     std::to_string: "1", not "01" or " 1"). The first invalid entry ends
 *     the list; repeats are skipped. HIP releases before 6.2 took no UUIDs
 *     there (HIP CHANGELOG, 6.2); this is the newer rule. */
#include "rocm_visible.h"

#include <assert.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

#define TOKEN_CAP 64

/* HIP's text for a GPU without a unique id (ROCr, amd_gpu_agent.cpp). */
#define HIP_NO_UUID "GPU-XX"

/* The next entry of *p into tok, split as both runtimes split: "a,,b" is
 * three entries, a trailing comma adds none, "" has none. Sets *too_long
 * when the entry does not fit (no index or UUID is that long). */
static int next_entry(const char **p, char *tok, size_t cap, int *too_long)
{
    const char *s = *p;
    if (!s || !*s)
        return 0;
    const char *c = strchr(s, ',');
    size_t len = c ? (size_t)(c - s) : strlen(s);
    *too_long = len >= cap;
    size_t keep = *too_long ? cap - 1 : len;
    memcpy(tok, s, keep);
    tok[keep] = '\0';
    *p = c ? c + 1 : s + len;
    return 1;
}

static size_t count_entries(const char *value)
{
    char tok[TOKEN_CAP];
    int too_long;
    size_t n = 0;
    while (next_entry(&value, tok, sizeof tok, &too_long))
        n++;
    return n;
}

static void stop_at(gpo_rocm_filter *f, const char *entry, const char *fmt, ...) GPO_PRINTF(3, 4);
static void stop_at(gpo_rocm_filter *f, const char *entry, const char *fmt, ...)
{
    va_list ap;
    gpo_strlcpy(f->stop, entry, sizeof f->stop);
    va_start(ap, fmt);
    vsnprintf(f->why, sizeof f->why, fmt, ap);
    va_end(ap);
}

static const char *plural(size_t n)
{
    return n == 1 ? "" : "s";
}

/* ROCr: the position in cur[] of the one GPU whose upper-cased UUID starts
 * with the upper-cased entry `tok`, else -1 with the reason set. */
static long rocr_uuid(gpo_rocm_filter *f, const char *entry, const char *tok,
                      const char *const *uuids, const size_t *cur, size_t n)
{
    size_t len = strlen(tok);
    size_t matches = 0;
    long found = -1;
    if (len < 5 || len > 20) {
        stop_at(f, entry, "a UUID prefix of %zu characters (ROCr takes 5 to 20)", len);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const char *u = uuids[cur[i]];
        if (!*u || strlen(u) < len)
            continue; /* ROCr's "Invalid-UUID" for a GPU without one never matches */
        size_t k = 0;
        while (k < len && toupper((unsigned char)u[k]) == tok[k])
            k++;
        if (k == len) {
            matches++;
            found = (long)i;
        }
    }
    if (matches == 0)
        stop_at(f, entry, "a UUID prefix no GPU here has");
    else if (matches > 1)
        stop_at(f, entry, "a UUID prefix %zu GPUs share", matches);
    return matches == 1 ? found : -1;
}

static size_t apply_rocr(gpo_rocm_filter *f, const char *const *uuids, size_t *cur, size_t n)
{
    size_t out[GPO_ROCM_VISIBLE_MAX];
    size_t m = 0;
    char tok[TOKEN_CAP];
    int too_long;
    const char *p = f->value;

    f->in = n;
    f->entries = count_entries(f->value);
    while (m < n && next_entry(&p, tok, sizeof tok, &too_long)) {
        char *entry = gpo_trim(tok);
        char upper[TOKEN_CAP];
        size_t len = strlen(entry);
        for (size_t i = 0; i <= len; i++)
            upper[i] = (char)toupper((unsigned char)entry[i]);
        long idx;
        if (too_long) {
            stop_at(f, entry, "longer than any index or UUID");
            break;
        }
        if (!*upper) {
            stop_at(f, entry, "an empty entry");
            break;
        }
        if (upper[0] == 'G') {
            idx = rocr_uuid(f, entry, upper, uuids, cur, n);
            if (idx < 0)
                break;
        } else {
            char *end;
            idx = strtol(upper, &end, 0);
            if (*end) {
                stop_at(f, entry, "neither an index (decimal, 0x hex, 0 octal) nor a UUID prefix");
                break;
            }
            if (idx < 0) {
                stop_at(f, entry, "a negative index");
                break;
            }
            if ((size_t)idx >= n) {
                stop_at(f, entry, "index %ld, but the KFD topology lists %zu GPU%s", idx, n,
                        plural(n));
                break;
            }
        }
        int seen = 0;
        for (size_t k = 0; k < m; k++)
            seen |= out[k] == cur[idx];
        if (seen) {
            stop_at(f, entry, "GPU %ld again, which ROCr reads as the end of the list", idx);
            break;
        }
        out[m++] = cur[idx];
    }
    memcpy(cur, out, m * sizeof *cur);
    f->out = m;
    return m;
}

/* HIP's index entry: atoi, then compared with std::to_string, so only the
 * canonical spelling is an index. */
static int hip_index(const char *tok, long *v)
{
    char canon[32];
    char *end;
    *v = strtol(tok, &end, 10);
    snprintf(canon, sizeof canon, "%ld", *v);
    return *tok && !*end && strcmp(canon, tok) == 0;
}

static size_t apply_hip(gpo_rocm_filter *f, const char *const *uuids, size_t *cur, size_t n,
                        int after_rocr)
{
    size_t out[GPO_ROCM_VISIBLE_MAX];
    size_t m = 0;
    char tok[TOKEN_CAP];
    int too_long;
    const char *p = f->value;

    f->in = n;
    f->entries = count_entries(f->value);
    while (next_entry(&p, tok, sizeof tok, &too_long)) {
        long idx = -1;
        if (too_long) {
            stop_at(f, tok, "longer than any index or UUID");
            break;
        }
        if (strstr(tok, "GPU-")) {
            for (size_t i = 0; i < n && idx < 0; i++) {
                const char *u = uuids[cur[i]];
                if (strstr(*u ? u : HIP_NO_UUID, tok))
                    idx = (long)i;
            }
            if (idx < 0) {
                stop_at(f, tok, "a UUID no GPU here has (matched as written, lower-case hex)");
                break;
            }
        } else {
            long v;
            if (!*tok) {
                stop_at(f, tok, "an empty entry");
                break;
            }
            if (!hip_index(tok, &v)) {
                stop_at(f, tok, "not an index as HIP reads one (\"1\", not \"01\" or \" 1\")");
                break;
            }
            if (v < 0) {
                stop_at(f, tok, "a negative index");
                break;
            }
            if ((size_t)v >= n) {
                stop_at(f, tok, "index %ld, but %s %zu GPU%s", v,
                        after_rocr ? "ROCR_VISIBLE_DEVICES leaves" : "the KFD topology lists", n,
                        plural(n));
                break;
            }
            idx = v;
        }
        int seen = 0;
        for (size_t k = 0; k < m; k++)
            seen |= out[k] == cur[idx];
        if (!seen)
            out[m++] = cur[idx];
    }
    memcpy(cur, out, m * sizeof *cur);
    f->out = m;
    return m;
}

size_t gpo_rocm_visible(const char *rocr, const char *hip, const char *cuda,
                        const char *const *uuids, size_t n, size_t *order, gpo_rocm_visibility *out)
{
    gpo_rocm_visibility local;
    gpo_rocm_visibility *v = out ? out : &local;

    assert(order && (n == 0 || uuids));
    memset(v, 0, sizeof *v);
    if (n > GPO_ROCM_VISIBLE_MAX)
        n = GPO_ROCM_VISIBLE_MAX;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    size_t m = n;
    if (rocr) {
        v->rocr.variable = "ROCR_VISIBLE_DEVICES";
        v->rocr.value = rocr;
        m = apply_rocr(&v->rocr, uuids, order, m);
    }
    if (hip && *hip) {
        v->hip.variable = "HIP_VISIBLE_DEVICES";
        v->hip.value = hip;
    } else if (cuda && *cuda) {
        v->hip.variable = "CUDA_VISIBLE_DEVICES";
        v->hip.value = cuda;
    }
    if (v->hip.variable)
        m = apply_hip(&v->hip, uuids, order, m, rocr != NULL);
    v->n = m;
    return m;
}

int gpo_rocm_hip_list_entry(const char *list, size_t ordinal, char *out, size_t cap)
{
    char seen[GPO_ROCM_VISIBLE_MAX][TOKEN_CAP];
    size_t n_seen = 0;
    char tok[TOKEN_CAP];
    int too_long;
    long v;

    while (n_seen < GPO_ROCM_VISIBLE_MAX && next_entry(&list, tok, sizeof tok, &too_long)) {
        if (too_long || (!strstr(tok, "GPU-") && !hip_index(tok, &v)))
            break; /* where HIP stops reading */
        int repeat = 0;
        for (size_t j = 0; j < n_seen; j++)
            repeat |= strcmp(seen[j], tok) == 0;
        if (repeat)
            continue;
        if (n_seen == ordinal)
            return gpo_strlcpy(out, tok, cap) < cap ? 0 : -1;
        memcpy(seen[n_seen++], tok, sizeof tok);
    }
    return -1;
}

void gpo_rocm_visibility_describe(const gpo_rocm_visibility *v, char *out, size_t cap)
{
    const gpo_rocm_filter *filters[] = {&v->rocr, &v->hip};
    gpo_sbuf msg;

    gpo_sbuf_init(&msg);
    for (size_t i = 0; i < 2; i++) {
        const gpo_rocm_filter *f = filters[i];
        if (!f->variable)
            continue;
        gpo_sbuf_appendf(&msg, "%s%s=\"%s\" leaves %zu of %zu%s", msg.len ? "; " : "", f->variable,
                         f->value, f->out, f->in, i == 0 ? " GPUs" : "");
        if (f->why[0])
            gpo_sbuf_appendf(&msg, " (reading stopped at '%s': %s)", f->stop, f->why);
    }
    gpo_strlcpy(out, msg.data && !msg.failed ? msg.data : "", cap);
    gpo_sbuf_free(&msg);
}
