/* The worker's wire protocol (wire.h): building, reading, sending and
 * receiving messages. */
#include "isolate/wire.h"

#include <errno.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

typedef struct wire_header {
    uint32_t magic;
    uint16_t version;
    uint16_t op;
    int32_t status;
    uint32_t pad;
    uint64_t len;
} wire_header;

void gpo_wire_init(gpo_wire_msg *m, uint16_t op, int32_t status)
{
    memset(m, 0, sizeof *m);
    m->op = op;
    m->status = status;
}

void gpo_wire_free(gpo_wire_msg *m)
{
    free(m->data);
    m->data = NULL;
    m->len = m->cap = m->pos = 0;
}

static void put(gpo_wire_msg *m, const void *p, size_t n)
{
    if (m->bad)
        return;
    if (m->len + n > m->cap) {
        size_t cap = m->cap ? m->cap : 256;
        while (cap < m->len + n)
            cap *= 2;
        unsigned char *d = realloc(m->data, cap);
        if (!d) {
            m->bad = 1;
            return;
        }
        m->data = d;
        m->cap = cap;
    }
    if (n)
        memcpy(m->data + m->len, p, n);
    m->len += n;
}

void gpo_wire_put_u64(gpo_wire_msg *m, uint64_t v)
{
    put(m, &v, sizeof v);
}

void gpo_wire_put_f64(gpo_wire_msg *m, double v)
{
    put(m, &v, sizeof v);
}

void gpo_wire_put_bytes(gpo_wire_msg *m, const void *p, size_t n)
{
    gpo_wire_put_u64(m, n);
    put(m, p, n);
}

void gpo_wire_put_text(gpo_wire_msg *m, const char *s)
{
    gpo_wire_put_bytes(m, s ? s : "", s ? strlen(s) : 0);
}

static const void *get(gpo_wire_msg *m, size_t n)
{
    if (m->bad || n > m->len - m->pos) {
        m->bad = 1;
        return NULL;
    }
    const void *p = m->data + m->pos;
    m->pos += n;
    return p;
}

uint64_t gpo_wire_get_u64(gpo_wire_msg *m)
{
    uint64_t v = 0;
    const void *p = get(m, sizeof v);
    if (p)
        memcpy(&v, p, sizeof v);
    return v;
}

double gpo_wire_get_f64(gpo_wire_msg *m)
{
    double v = 0;
    const void *p = get(m, sizeof v);
    if (p)
        memcpy(&v, p, sizeof v);
    return v;
}

const void *gpo_wire_get_bytes(gpo_wire_msg *m, size_t *n)
{
    uint64_t len = gpo_wire_get_u64(m);
    const void *p = get(m, len < SIZE_MAX ? (size_t)len : SIZE_MAX);
    *n = p ? (size_t)len : 0;
    return p;
}

char *gpo_wire_get_text(gpo_wire_msg *m)
{
    size_t n = 0;
    const void *p = gpo_wire_get_bytes(m, &n);
    char *s = p ? malloc(n + 1) : NULL;
    if (!s) {
        m->bad = 1;
        return NULL;
    }
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

/* Sends (`out`) or receives all n bytes: 0, or -1 with errno (0 at the
 * end of the stream). */
static int move_all(int fd, void *p, size_t n, int out)
{
    unsigned char *b = p;
    while (n > 0) {
        ssize_t r = out ? send(fd, b, n, MSG_NOSIGNAL) : recv(fd, b, n, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            errno = 0;
        if (r <= 0)
            return -1;
        b += r;
        n -= (size_t)r;
    }
    return 0;
}

int gpo_wire_send(int fd, const gpo_wire_msg *m)
{
    if (m->bad) {
        errno = ENOMEM;
        return -1;
    }
    wire_header h = {GPO_WIRE_MAGIC, GPO_WIRE_VERSION, m->op, m->status, 0, m->len};
    return move_all(fd, &h, sizeof h, 1) == 0 && move_all(fd, m->data, m->len, 1) == 0 ? 0 : -1;
}

int gpo_wire_recv(int fd, gpo_wire_msg *m)
{
    wire_header h;
    gpo_wire_init(m, 0, 0);
    if (move_all(fd, &h, sizeof h, 0) != 0)
        return -1;
    if (h.magic != GPO_WIRE_MAGIC || h.version != GPO_WIRE_VERSION || h.len > GPO_WIRE_MAX_PAYLOAD)
        return -2;
    m->op = h.op;
    m->status = h.status;
    if (h.len && !(m->data = malloc((size_t)h.len))) {
        errno = ENOMEM;
        return -1;
    }
    m->len = m->cap = (size_t)h.len;
    if (move_all(fd, m->data, m->len, 0) != 0) {
        gpo_wire_free(m);
        return -1;
    }
    return 0;
}
