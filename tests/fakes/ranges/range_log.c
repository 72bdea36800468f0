/* The vendor-tool test doubles' record of ranges (range_log.h). */
#include "range_log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEPTH 1024

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *text;
static size_t len, cap;
static int logging = -1;
static _Thread_local unsigned long long stamps[MAX_DEPTH];
static _Thread_local int depth;

static int want_log(void)
{
    if (logging < 0) {
        const char *v = getenv("GPUOPT_FAKE_RANGES_LOG");
        logging = v && *v && strcmp(v, "0") != 0;
    }
    return logging;
}

static void append(const char *line)
{
    size_t n = strlen(line);
    pthread_mutex_lock(&lock);
    if (len + n + 2 > cap) {
        size_t ncap = (len + n + 2) * 2;
        char *t = realloc(text, ncap);
        if (!t) {
            pthread_mutex_unlock(&lock);
            return;
        }
        text = t;
        cap = ncap;
    }
    memcpy(text + len, line, n);
    len += n;
    text[len++] = '\n';
    text[len] = '\0';
    pthread_mutex_unlock(&lock);
}

int range_log_push(const char *name)
{
    if (want_log()) {
        char line[512];
        snprintf(line, sizeof line, "push %ld %s", (long)syscall(SYS_gettid), name);
        append(line);
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if (depth < MAX_DEPTH)
        stamps[depth] =
            (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
    return depth++;
}

int range_log_pop(void)
{
    if (want_log()) {
        char line[64];
        snprintf(line, sizeof line, "pop %ld", (long)syscall(SYS_gettid));
        append(line);
    }
    return depth > 0 ? --depth : -1;
}

size_t range_log_read(char *out, size_t out_cap)
{
    pthread_mutex_lock(&lock);
    size_t n = len < out_cap - 1 ? len : out_cap - 1;
    if (text)
        memcpy(out, text, n);
    out[n] = '\0';
    size_t all = len;
    pthread_mutex_unlock(&lock);
    return all;
}

void range_log_reset(void)
{
    pthread_mutex_lock(&lock);
    len = 0;
    if (text)
        text[0] = '\0';
    pthread_mutex_unlock(&lock);
}
