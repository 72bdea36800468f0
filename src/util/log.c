/* Log delivery: the user's callback, else one line on stderr. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

static const char *level_word(int32_t level)
{
    static const char *const words[] = {"debug", "error", "warning", "info"};
    return words[level >= GPUOPT_LOG_ERROR && level <= GPUOPT_LOG_INFO ? level : 0];
}

int gpo_log_enabled(const gpo_logger *log, int32_t level)
{
    return log && level > GPUOPT_LOG_OFF && level <= log->level;
}

void gpo_log(const gpo_logger *log, int32_t level, const char *fmt, ...)
{
    if (!gpo_log_enabled(log, level))
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (log->fn)
        log->fn(level, msg, log->user);
    else
        fprintf(stderr, "gpuopt: %s: %s\n", level_word(level), msg);
}
