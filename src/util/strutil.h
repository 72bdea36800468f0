/* Small string helpers: bounded copies, a growable buffer, strict number
 * parsing. Nothing here allocates unless its name says so. */
#ifndef GPO_STRUTIL_H
#define GPO_STRUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "detail.h"

/* Copies at most cap-1 bytes and always terminates (cap > 0). Returns the
 * length of src, so truncation is `>= cap`. */
size_t gpo_strlcpy(char *dst, const char *src, size_t cap);

/* snprintf that always terminates and never fails: truncates silently. */
void gpo_snprintf(char *dst, size_t cap, const char *fmt, ...) GPO_PRINTF(3, 4);

/* gpo_snprintf, then `ret`: a check that refuses writes its words and
 * returns its verdict in one statement. */
int gpo_say(int ret, char *dst, size_t cap, const char *fmt, ...) GPO_PRINTF(4, 5);

/* malloc'd copy, NULL on allocation failure (or when s is NULL). */
char *gpo_strdup(const char *s);

/* Room for element `n` in the array `*items` (`items` is the address of
 * the array's pointer) of `size`-byte elements and capacity `*cap`,
 * doubling it from `first`: 0, or -1 with the array untouched when out of
 * memory. */
int gpo_grow(void *items, size_t size, size_t n, size_t *cap, size_t first);

/* malloc'd printf; NULL on allocation failure. */
char *gpo_asprintf(const char *fmt, ...) GPO_PRINTF(1, 2);

/* Trims ASCII whitespace at both ends, in place; returns s. */
char *gpo_trim(char *s);

/* ASCII case-insensitive comparison. */
int gpo_strcaseeq(const char *a, const char *b);

/* Strict parsers: the whole string must be the number (surrounding
 * whitespace allowed). Return 0 on success, -1 when malformed or outside
 * [min, max]. */
int gpo_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);
int gpo_parse_bool(const char *s, int *out); /* true/false/yes/no/on/off/1/0 */

/* A size in bytes: "4096", "256MiB", "16 GiB", "2e9", "7.5e9", "64k"
 * (k/M/G/T and KiB/MiB/GiB/TiB are powers of 1024; KB/MB/GB/TB powers of
 * 1000). Negative, fractional-byte and overflowing values are -1. */
int gpo_parse_bytes(const char *s, uint64_t *out);

/* "1.5 GiB" style, for reasons and tables. */
void gpo_format_bytes(uint64_t bytes, char *out, size_t cap);

/* A duration for reasons: "730 ns", "48.2 us", "1.25 ms", "2.5 s". */
void gpo_format_ns(double ns, char *out, size_t cap);

/* A transfer rate in decimal units, as vendors quote them: "12.4 GB/s",
 * "840 MB/s". */
void gpo_format_rate(double bytes_per_s, char *out, size_t cap);

/* Growable NUL-terminated buffer. On allocation failure it latches `failed`
 * and further appends do nothing; check once at the end. */
typedef struct gpo_sbuf {
    char *data;
    size_t len;
    size_t cap;
    int failed;
} gpo_sbuf;

void gpo_sbuf_init(gpo_sbuf *b);
void gpo_sbuf_append(gpo_sbuf *b, const char *s);
void gpo_sbuf_appendf(gpo_sbuf *b, const char *fmt, ...) GPO_PRINTF(2, 3);
/* Takes the string (caller frees) or NULL if anything failed; resets b. */
char *gpo_sbuf_take(gpo_sbuf *b);
void gpo_sbuf_free(gpo_sbuf *b);

/* Monotonic clock in nanoseconds. */
uint64_t gpo_now_ns(void);

#endif
