/* The kernel subject (subject_kernel.c): a kernel (source, entry, language,
 * build options) with its launch geometry, arguments and reference, built
 * and run through the runtime ops of the device's route for its language.
 * The public tuner's kernel setters fill the definition; expressions in it
 * are bound to the tuner's space. */
#ifndef GPO_TUNE_SUBJECT_KERNEL_H
#define GPO_TUNE_SUBJECT_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "tune/expr.h"
#include "tune/subject.h"

enum { GPO_ARG_BUFFER = 1, GPO_ARG_SCALAR = 2, GPO_ARG_SCALAR_F64 = 3 };
#define GPO_KERNEL_MAX_ARGS 256

/* One kernel argument. */
typedef struct gpo_targ {
    int32_t kind; /* GPO_ARG_* */
    uint32_t index;
    int32_t type;   /* gpuopt_elem_type */
    gpo_expr *expr; /* a buffer's count, a scalar's value */
    int fixed;      /* expr reads no parameter */
    double value;   /* GPO_ARG_SCALAR_F64; the constant of GPUOPT_INIT_CONSTANT */
    int32_t init;   /* gpuopt_buffer_init */
    void *data;     /* GPUOPT_INIT_DATA, data_bytes long */
    size_t data_bytes;
    int is_output;
    void *ref; /* expected output (set_reference_data) */
    size_t ref_bytes;
} gpo_targ;

typedef struct gpo_geometry {
    gpo_expr *global[3], *local[3];
    int dims;      /* 0: not set */
    int has_local; /* 0: the runtime picks the work-group */
} gpo_geometry;

typedef struct gpo_kernel_def {
    char *source, *entry, *options;
    int32_t language;
    gpo_geometry geo;
    gpo_expr *lmem;
    gpo_targ *args;
    int32_t nargs;
    char *ref_source, *ref_entry, *ref_options; /* ref_source NULL: no reference kernel */
    gpo_geometry ref_geo;
} gpo_kernel_def;

struct gpo_ksession; /* the device session and its compiled programs */

/* sc->def of the kernel subject: the kernel and what runs it. */
typedef struct gpo_kernel_subject {
    gpo_kernel_def k;
    const gpuopt_device *dev;
    double abs_tol, rel_tol;
    uint64_t seed; /* random buffer contents */
    /* Build upcoming points on a worker while timing: -1 auto (not on CPU
     * devices, where a build steals the cores the timed kernel runs on), 0
     * never, 1 always (tests). */
    int overlap;
    /* Where candidates run: a gpuopt_isolation (AUTO: a measurement worker
     * on runtimes whose faults end the process). */
    int32_t isolation;
    double timeout_s; /* a worker's kernel running longer is stopped (0: none) */
    /* Tests: the runtime ops the session calls, for the route's own. */
    const gpo_runtime_ops *(*wrap)(const gpo_runtime_ops *real);
    struct gpo_ksession *ks; /* opened by the first run that measures; kept */
} gpo_kernel_subject;

extern const gpo_subject_ops gpo_subject_kernel;

/* Free the contents of a definition, a geometry, an argument, and empty
 * them. */
void gpo_kernel_def_free(gpo_kernel_def *k);
void gpo_geometry_free(gpo_geometry *g);
void gpo_targ_free(gpo_targ *a);
/* Closes the subject's session (NULL: nothing open). */
void gpo_kernel_session_close(gpo_kernel_subject *s);
/* The session's program cache, NULL while none is open (tests, overhead
 * figures). */
struct gpo_progcache *gpo_kernel_progcache(const gpo_kernel_subject *s);

/* The route of the device whose runtime builds the kernel's language, or
 * NULL with the detail saying why not (*why its status). */
const gpo_route *gpo_kernel_route(const gpo_kernel_subject *s, gpuopt_status *why);
/* "opencl-c", "cuda", "hip"; NULL for an unknown language. */
const char *gpo_language_runtime_name(int32_t language);

#endif
