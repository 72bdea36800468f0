/* What the vendor-tool test doubles (fake_nvtx.c, fake_roctx.c) received:
 * one line per call, "push <tid> <name>" or "pop <tid>", kept when
 * GPUOPT_FAKE_RANGES_LOG is set (tests). Without it, a push only stores a
 * timestamp in a per-thread stack and a pop takes it off, about what a
 * real tool does per range (the benchmark's mode). */
#ifndef GPO_FAKE_RANGE_LOG_H
#define GPO_FAKE_RANGE_LOG_H

#include <stddef.h>

int range_log_push(const char *name);
int range_log_pop(void);
/* The lines so far, '\n'-separated, into out (cap > 0); the length. */
size_t range_log_read(char *out, size_t cap);
void range_log_reset(void);

#endif
