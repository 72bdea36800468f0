/* The host-callback subject (subject_callback.c): anything that is not one
 * kernel (a CPU routine, a library call, a sequence of launches). The run
 * calls pre_run (untimed), then run, timed by the monotonic clock unless
 * the callback reports its own measurement (device events it recorded);
 * the validate callback checks a point's first run. */
#ifndef GPO_TUNE_SUBJECT_CALLBACK_H
#define GPO_TUNE_SUBJECT_CALLBACK_H

#include "tune/subject.h"

typedef struct gpo_callback_def {
    gpuopt_run_fn run;
    gpuopt_pre_run_fn pre_run;
    gpuopt_validate_fn validate;
    void *user;
} gpo_callback_def;

/* sc->def is a gpo_callback_def. */
extern const gpo_subject_ops gpo_subject_callback;

#endif
