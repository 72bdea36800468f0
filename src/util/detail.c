/* Per-thread last-failure detail. */
#include "detail.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define DETAIL_CAP 1024

static _Thread_local char detail_text[DETAIL_CAP];

/* Formats into a scratch buffer first: a caller may pass the current
 * detail as an argument ("...: %s", gpo_detail_get()) to add context, and
 * vsnprintf into the buffer it reads from is undefined. */
static void detail_vset(const char *fmt, va_list ap)
{
    char text[DETAIL_CAP];
    vsnprintf(text, sizeof text, fmt, ap);
    memcpy(detail_text, text, strlen(text) + 1);
}

void gpo_detail_set(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    detail_vset(fmt, ap);
    va_end(ap);
}

void gpo_detail_clear(void) { detail_text[0] = '\0'; }

const char *gpo_detail_get(void) { return detail_text; }

gpuopt_status gpo_fail(gpuopt_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    detail_vset(fmt, ap);
    va_end(ap);
    return status;
}

gpuopt_status gpo_fail_struct_size(const char *fn, const char *type, size_t have, size_t size)
{
    return gpo_fail(GPUOPT_ERR_STRUCT_SIZE,
                    "%s%s%s.struct_size is %zu; set it to sizeof(%s) (%zu in this library)",
                    fn ? fn : "", fn ? ": " : "", type, have, type, size);
}
