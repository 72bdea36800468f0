/* String helpers. */
#include "strutil.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

size_t gpo_strlcpy(char *dst, const char *src, size_t cap)
{
    size_t n = strlen(src);
    if (cap) {
        size_t k = n < cap - 1 ? n : cap - 1;
        memcpy(dst, src, k);
        dst[k] = '\0';
    }
    return n;
}

void gpo_snprintf(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(dst, cap, fmt, ap);
    va_end(ap);
    if (n < 0 && cap)
        dst[0] = '\0';
}

int gpo_say(int ret, char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (vsnprintf(dst, cap, fmt, ap) < 0 && cap)
        dst[0] = '\0';
    va_end(ap);
    return ret;
}

char *gpo_strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

char *gpo_asprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

char *gpo_trim(char *s)
{
    char *p = s;
    while (*p && isspace((unsigned char)*p))
        p++;
    size_t n = strlen(p);
    while (n && isspace((unsigned char)p[n - 1]))
        n--;
    memmove(s, p, n);
    s[n] = '\0';
    return s;
}

int gpo_strcaseeq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

static const char *skip_space(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return s;
}

int gpo_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
    if (!s)
        return -1;
    s = skip_space(s);
    if (!*s)
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *skip_space(end))
        return -1;
    if (v < min || v > max)
        return -1;
    *out = (int64_t)v;
    return 0;
}

int gpo_parse_bool(const char *s, int *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    if (!s)
        return -1;
    char buf[16];
    if (gpo_strlcpy(buf, s, sizeof buf) >= sizeof buf)
        return -1;
    gpo_trim(buf);
    for (size_t i = 0; i < 4; i++) {
        if (gpo_strcaseeq(buf, yes[i])) {
            *out = 1;
            return 0;
        }
        if (gpo_strcaseeq(buf, no[i])) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}

int gpo_parse_bytes(const char *s, uint64_t *out)
{
    static const struct {
        const char *suffix;
        double mult;
    } units[] = {
        {"", 1.0},          {"b", 1.0},
        {"k", 1024.0},      {"kib", 1024.0},          {"kb", 1e3},
        {"m", 1048576.0},   {"mib", 1048576.0},       {"mb", 1e6},
        {"g", 1073741824.0}, {"gib", 1073741824.0},   {"gb", 1e9},
        {"t", 1099511627776.0}, {"tib", 1099511627776.0}, {"tb", 1e12},
    };
    if (!s)
        return -1;
    s = skip_space(s);
    if (!*s || *s == '-' || *s == '+')
        return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v) || v < 0)
        return -1;
    const char *u = skip_space(end);
    char unit[8];
    size_t n = strlen(u);
    while (n && isspace((unsigned char)u[n - 1]))
        n--;
    if (n >= sizeof unit)
        return -1;
    for (size_t i = 0; i < n; i++)
        unit[i] = (char)tolower((unsigned char)u[i]);
    unit[n] = '\0';
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(unit, units[i].suffix) == 0) {
            double bytes = v * units[i].mult;
            if (bytes >= 18446744073709551615.0 || bytes != floor(bytes))
                return -1;
            *out = (uint64_t)bytes;
            return 0;
        }
    }
    return -1;
}

void gpo_format_bytes(uint64_t bytes, char *out, size_t cap)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 5) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        gpo_snprintf(out, cap, "%llu B", (unsigned long long)bytes);
    else if (v == floor(v))
        gpo_snprintf(out, cap, "%.0f %s", v, unit[u]);
    else
        gpo_snprintf(out, cap, "%.1f %s", v, unit[u]);
}

int gpo_grow(void *items, size_t size, size_t n, size_t *cap, size_t first)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : first;
    void *old, *grown;
    memcpy(&old, items, sizeof old); /* a T ** passed as void * */
    if (!(grown = realloc(old, ncap * size)))
        return -1;
    memcpy(items, &grown, sizeof grown);
    *cap = ncap;
    return 0;
}

void gpo_sbuf_init(gpo_sbuf *b) { memset(b, 0, sizeof *b); }

static int sbuf_reserve(gpo_sbuf *b, size_t extra)
{
    if (b->failed)
        return -1;
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) {
        b->failed = 1;
        return -1;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

void gpo_sbuf_append(gpo_sbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (sbuf_reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n + 1);
    b->len += n;
}

void gpo_sbuf_appendf(gpo_sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if (sbuf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *gpo_sbuf_take(gpo_sbuf *b)
{
    if (b->failed) {
        gpo_sbuf_free(b);
        return NULL;
    }
    if (!b->data && sbuf_reserve(b, 0)) {
        gpo_sbuf_free(b);
        return NULL;
    }
    b->data[b->len] = '\0';
    char *d = b->data;
    gpo_sbuf_init(b);
    return d;
}

void gpo_sbuf_free(gpo_sbuf *b)
{
    free(b->data);
    gpo_sbuf_init(b);
}

uint64_t gpo_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The unit changes where three significant digits would round up to 1000
 * ("1e+03 us" for 999.7 us). */
void gpo_format_ns(double ns, char *out, size_t cap)
{
    if (ns >= 999.5e6)
        gpo_snprintf(out, cap, "%.3g s", ns / 1e9);
    else if (ns >= 999.5e3)
        gpo_snprintf(out, cap, "%.3g ms", ns / 1e6);
    else if (ns >= 999.5)
        gpo_snprintf(out, cap, "%.3g us", ns / 1e3);
    else
        gpo_snprintf(out, cap, "%.0f ns", ns);
}

void gpo_format_rate(double bytes_per_s, char *out, size_t cap)
{
    if (bytes_per_s >= 999.5e6)
        gpo_snprintf(out, cap, "%.3g GB/s", bytes_per_s / 1e9);
    else
        gpo_snprintf(out, cap, "%.3g MB/s", bytes_per_s / 1e6);
}
