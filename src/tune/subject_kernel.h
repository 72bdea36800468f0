/* The kernel subject's private parts, shared by subject_kernel.c (the
 * session, limits, arguments and reference of a run) and
 * subject_kernel_cand.c (one candidate: build, bind, run, check). */
#ifndef GPO_TUNE_SUBJECT_KERNEL_H
#define GPO_TUNE_SUBJECT_KERNEL_H

#include "tune/progcache.h"
#include "tune/tuner.h"

typedef struct gpo_ksession gpo_ksession;

/* What the tuner keeps across runs: the device session and its programs. */
struct gpo_ksession {
    const gpo_runtime_ops *ops; /* the route's, or a test's wrapper */
    const gpo_route *route;
    gpo_rt *rt;
    gpo_progcache *pc;
    int32_t language;
};

/* A buffer on the device with its initial content. */
typedef struct gpo_kbuf {
    gpo_rt_buf *buf;
    void *image; /* initial content, written again before each run for outputs */
    size_t count, bytes;
} gpo_kbuf;

/* One run's arguments, by index (args[i]->index == i). */
typedef struct gpo_krun {
    gpo_ksession *ks;
    const gpo_targ **args; /* by index */
    int32_t nargs;
    gpo_kbuf *fixed; /* per index: buffers whose count reads no parameter */
    void **expect;   /* per index: expected output content, NULL when unchecked */
    size_t *expect_count;
    void *scratch; /* read-back space for the largest output */
    size_t scratch_bytes;
} gpo_krun;

/* subject_kernel_cand.c */
int32_t gpo_kernel_prepare(gpo_trun *r, const gpuopt_config *c, gpo_prep **p, gpo_eval *ev);
int32_t gpo_kernel_run(gpo_trun *r, gpo_prep *p, double *ns, gpo_eval *ev);
int32_t gpo_kernel_check(gpo_trun *r, gpo_prep *p, gpo_eval *ev);
void gpo_kernel_release(gpo_trun *r, gpo_prep *p);
void gpo_kernel_prefetch(gpo_trun *r, const gpuopt_config *c);

/* Shared helpers (subject_kernel.c). */
/* "<options> -DNAME=value ..." for c (malloc'd; NULL on allocation failure). */
char *gpo_kernel_options(const gpuopt_tuner *t, const gpuopt_config *c);
/* The initial content of buffer argument a with `count` elements. */
void gpo_kernel_image(const gpuopt_tuner *t, const gpo_targ *a, void *image, size_t count);
/* Binds scalar argument a for configuration idx: GPO_CAND_OK, INVALID (a
 * value undefined or out of the type's range) or LAUNCH_FAILED. */
int32_t gpo_kernel_bind_scalar(gpo_trun *r, gpo_rt_kernel *k, const gpo_targ *a,
                               const uint32_t *idx, gpo_eval *ev);
/* Evaluates a geometry for idx into global/local (global rounded up to a
 * multiple of local): 0, or -1 with ev->msg when undefined or not positive. */
int gpo_kernel_geometry(gpo_trun *r, const gpo_geometry *g, const uint32_t *idx, size_t global[3],
                        size_t local[3], gpo_eval *ev);
/* One launch, timed by the device (or the host clock): GPUOPT_OK with *ns. */
gpuopt_status gpo_kernel_launch(gpo_ksession *ks, gpo_rt_kernel *k, uint32_t dims,
                                const size_t global[3], const size_t *local, double *ns);

#endif
