/* Marketing names from libdrm's amdgpu.ids (data/amdgpu.ids in libdrm,
 * installed as /usr/share/libdrm/amdgpu.ids by Debian's libdrm-common).
 * Format, from the file's own header: '#' comments, a version line
 * ("1.0.0"), then "DEVICE_ID,\tREVISION_ID,\tPRODUCT_NAME" with both ids in
 * hex. libdrm's amdgpu_get_marketing_name matches device and revision; the
 * KFD path may not know the revision, so a device whose entries all carry
 * one name is accepted without it. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "rocm_ids.h"
#include "util/strutil.h"

/* Parses "73BF,\tC0,\tAMD Radeon RX 6900 XT" (one line, not terminated). */
static int parse_line(const char *line, size_t len, unsigned *dev, unsigned *rev, const char **name,
                      size_t *name_len)
{
    char buf[32];
    const char *c1 = memchr(line, ',', len);
    if (!c1 || c1 == line || (size_t)(c1 - line) >= sizeof buf)
        return -1;
    memcpy(buf, line, (size_t)(c1 - line));
    buf[c1 - line] = '\0';
    char *end;
    unsigned long d = strtoul(buf, &end, 16);
    if (*end || d > 0xffff)
        return -1;
    const char *p = c1 + 1;
    const char *stop = line + len;
    while (p < stop && isspace((unsigned char)*p))
        p++;
    const char *c2 = memchr(p, ',', (size_t)(stop - p));
    if (!c2 || c2 == p || (size_t)(c2 - p) >= sizeof buf)
        return -1;
    memcpy(buf, p, (size_t)(c2 - p));
    buf[c2 - p] = '\0';
    unsigned long r = strtoul(buf, &end, 16);
    if (*end || r > 0xff)
        return -1;
    p = c2 + 1;
    while (p < stop && isspace((unsigned char)*p))
        p++;
    const char *e = stop;
    while (e > p && isspace((unsigned char)e[-1]))
        e--;
    if (e == p)
        return -1;
    *dev = (unsigned)d;
    *rev = (unsigned)r;
    *name = p;
    *name_len = (size_t)(e - p);
    return 0;
}

static void copy_name(char *out, size_t cap, const char *name, size_t len)
{
    if (len >= cap)
        len = cap - 1;
    memcpy(out, name, len);
    out[len] = '\0';
}

int gpo_amdgpu_ids_lookup(const char *text, uint32_t device_id, int32_t revision, char *out,
                          size_t cap)
{
    const char *only = NULL; /* the single name of this device, if single */
    size_t only_len = 0;
    int names = 0;

    if (!text || !out || cap == 0)
        return 0;
    out[0] = '\0';
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        unsigned dev, rev;
        const char *name;
        size_t name_len;
        if (len && line[0] != '#' && parse_line(line, len, &dev, &rev, &name, &name_len) == 0 &&
            dev == device_id) {
            if (revision >= 0 && rev == (unsigned)revision) {
                copy_name(out, cap, name, name_len);
                return 1;
            }
            if (!only) {
                only = name;
                only_len = name_len;
                names = 1;
            } else if (only_len != name_len || memcmp(only, name, name_len) != 0) {
                names = 2;
            }
        }
        line = nl ? nl + 1 : line + len;
    }
    if (revision < 0 && names == 1) {
        copy_name(out, cap, only, only_len);
        return 1;
    }
    return 0;
}
