/* The file a profiler writes by itself (autowrite.c): the options'
 * trace_path or GPUOPT_PROFILE, written when the profiler is destroyed or,
 * for one never destroyed, when the process exits. */
#ifndef GPO_PROF_AUTOWRITE_H
#define GPO_PROF_AUTOWRITE_H

#include "record.h"

/* Gives `p` its file: `pattern` with "%p" made the process id and "%%" a
 * "%", made absolute against the current directory (a program that
 * changes directory still writes where it was asked). With `numbered`
 * (GPUOPT_PROFILE, shared by every profiler of the process), the second
 * profiler's file is "name.2.ext", the third's "name.3.ext", and so on.
 * GPUOPT_ERR_INVALID_ARGUMENT when the path does not fit; p then has
 * none. */
gpuopt_status gpo_prof_autowrite_arm(gpuopt_profiler *p, const char *pattern, int numbered);

/* Writes p's file, if it has one and this is the process that armed it
 * (a fork()ed child never writes its parent's), reading the device marks;
 * a failure is logged to p's log at warning level. p is forgotten. */
void gpo_prof_autowrite_finish(gpuopt_profiler *p);

#endif
