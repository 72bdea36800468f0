/* The measurement worker's wire protocol (version GPO_WIRE_VERSION): how the
 * library (remote.c) and its worker process (serve.c) talk over one
 * stream socket pair. Both ends are built from this one header, and the
 * first exchange (HELLO) checks that they speak the same version, so a
 * worker left over from another release is refused with words, never
 * misread.
 *
 * A message is a header (magic "GPOW", version, op, status, payload
 * length; native byte order: both ends run on one machine) and a payload
 * of fields in a fixed order per op: u64 and f64 as 8 bytes, text and
 * byte strings as a u64 length and the bytes. Each request is answered by
 * one reply of the same op whose status is the runtime call's
 * gpuopt_status, followed by the detail text (the driver's words on
 * failure), then the op's results; the *_FREE ops and CLOSE are not
 * answered. docs/tuning.md ("Isolation") lists the ops and their fields. */
#ifndef GPO_ISOLATE_WIRE_H
#define GPO_ISOLATE_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "gpuopt/gpuopt.h"

#define GPO_WIRE_MAGIC 0x574f5047u /* "GPOW" */
#define GPO_WIRE_VERSION 1u
/* Larger payloads are refused: a buffer this big is no tuning argument. */
#define GPO_WIRE_MAX_PAYLOAD ((uint64_t)1 << 34)

/* Requests; the reply carries the same op. */
enum {
    GPO_WIRE_HELLO = 1,   /* u64 version, text backend, u64 index, text name, text language ->
                             text compiler version */
    GPO_WIRE_CLOSE = 2,   /* (no reply) */
    GPO_WIRE_BUF_ALLOC,   /* u64 bytes -> u64 id */
    GPO_WIRE_BUF_FREE,    /* u64 id (no reply) */
    GPO_WIRE_BUF_WRITE,   /* u64 id, u64 offset, bytes */
    GPO_WIRE_BUF_READ,    /* u64 id, u64 offset, u64 bytes -> bytes */
    GPO_WIRE_PROG_BUILD,  /* text source, text options -> u64 id, u64 has log, text log */
    GPO_WIRE_PROG_FREE,   /* u64 id (no reply) */
    GPO_WIRE_KERN_CREATE, /* u64 program, text name -> u64 id */
    GPO_WIRE_KERN_FREE,   /* u64 id (no reply) */
    GPO_WIRE_KERN_BUF,    /* u64 kernel, u64 index, u64 buffer */
    GPO_WIRE_KERN_SCALAR, /* u64 kernel, u64 index, bytes value */
    GPO_WIRE_KERN_LOCAL,  /* u64 kernel, u64 index, u64 bytes */
    GPO_WIRE_KERN_GROUP,  /* u64 kernel -> u64 max items */
    GPO_WIRE_LAUNCH,      /* u64 kernel, u64 dims, u64 global[3], u64 has local, u64 local[3],
                             u64 timed -> f64 device ns (< 0: none), f64 worker's host ns */
    GPO_WIRE_FINISH,
    GPO_WIRE_OPS_END
};

/* A message being built or read. */
typedef struct gpo_wire_msg {
    uint16_t op;
    int32_t status;
    unsigned char *data;
    size_t len, cap;
    size_t pos; /* reading */
    int bad;    /* a read past the end, or an allocation failed */
} gpo_wire_msg;

void gpo_wire_init(gpo_wire_msg *m, uint16_t op, int32_t status);
void gpo_wire_free(gpo_wire_msg *m);
void gpo_wire_put_u64(gpo_wire_msg *m, uint64_t v);
void gpo_wire_put_f64(gpo_wire_msg *m, double v);
void gpo_wire_put_bytes(gpo_wire_msg *m, const void *p, size_t n);
void gpo_wire_put_text(gpo_wire_msg *m, const char *s); /* NULL as "" */
uint64_t gpo_wire_get_u64(gpo_wire_msg *m);
double gpo_wire_get_f64(gpo_wire_msg *m);
/* A byte string in place (valid while m is): *n its length. */
const void *gpo_wire_get_bytes(gpo_wire_msg *m, size_t *n);
/* A text, malloc'd and NUL-terminated; NULL (m->bad) when out of memory. */
char *gpo_wire_get_text(gpo_wire_msg *m);

/* Sends m on fd (never raises SIGPIPE). 0, or -1 with errno. */
int gpo_wire_send(int fd, const gpo_wire_msg *m);
/* Receives one message into m (initialised here): 0; -1 with errno (0 at
 * end of stream); -2 for a message that is not this protocol's version. */
int gpo_wire_recv(int fd, gpo_wire_msg *m);

#endif
