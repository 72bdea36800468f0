/* The tuner's insides, shared by its files:
 *
 *   tuner.c           the handle, how it tunes, the callback subject
 *   tuner_kernel.c    the kernel subject's setters (kernel, geometry,
 *                     arguments, reference)
 *   tuner_run.c       gpuopt_tuner_run: cache first, then the search loop
 *   tuner_eval.c      one candidate: prepare, first run, check, timing;
 *                     the side-by-side re-timing
 *   tuner_cache.c     cache keys, the shared open cache, parameters by name
 *   tuner_hit.c       answers from a hit, verification, resuming a journal
 *   subject_kernel*.c a kernel on a runtime route of the device
 *   subject_callback.c a host callback
 *   result*.c         results and their JSON / CSV
 *   online.c          gpuopt_tune_step
 *
 * A run (gpo_trun) is one search: its own copy of the space with the
 * device's limits added as constraints, the search, the subject's state
 * for that run, the result being built and the journal it appends to. The
 * tuner keeps what outlives runs: the device session and its compiled
 * programs, and the open cache. */
#ifndef GPO_TUNE_TUNER_H
#define GPO_TUNE_TUNER_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "context.h"
#include "cache/cache.h"
#include "tune/expr.h"
#include "tune/space.h"
#include "measure/timing.h"
#include "tune/status.h"
#include "tune/search.h"

enum { GPO_SUBJECT_NONE = 0, GPO_SUBJECT_KERNEL = 1, GPO_SUBJECT_CALLBACK = 2 };
enum { GPO_ARG_BUFFER = 1, GPO_ARG_SCALAR = 2, GPO_ARG_SCALAR_F64 = 3 };

#define GPO_TUNER_MAX_ARGS 256
#define GPO_TUNER_MSG 640 /* a candidate's message, bytes */
#define GPO_DEFAULT_TIMEOUT_S 10.0
#define GPO_DEFAULT_ABS_TOL 1e-4
#define GPO_DEFAULT_REL_TOL 1e-4

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

typedef struct gpo_callback_def {
    gpuopt_run_fn run;
    gpuopt_pre_run_fn pre_run;
    gpuopt_validate_fn validate;
    void *user;
} gpo_callback_def;

struct gpo_ksession; /* subject_kernel.c */
struct gpo_online;   /* online.c */

struct gpuopt_tuner {
    gpuopt_context *ctx;
    gpuopt_device *dev;
    gpuopt_space *space; /* the tuner's copy; set_size changes its sizes */
    char space_hash[32]; /* of the copy as created (sizes are not in it) */
    int32_t subject;     /* GPO_SUBJECT_* */
    gpo_kernel_def k;
    gpo_callback_def cb;
    double abs_tol, rel_tol;
    int32_t strategy, max_evaluations, max_failures;
    double max_seconds;
    uint64_t seed;
    gpo_timing_settings timing;
    double timeout_s;
    char *workload_key;
    int32_t cache_mode;
    gpuopt_progress_fn progress;
    void *progress_user;

    gpo_cache *cache; /* opened on first use, shared (gpo_tuner_cache) */
    int cache_tried;
    /* The subject's hashes for cache keys, computed once per change (the
     * source can be large; a cache hit must stay cheap). */
    int key_valid;
    char key_source[32], key_options[32];
    /* Build upcoming candidates on a worker while timing: -1 auto (not on
     * CPU devices, where a build steals the cores the timed kernel runs
     * on), 0 never, 1 always (tests). */
    int overlap;
    struct gpo_ksession *ks;
    struct gpo_online *online;
    /* Tests: overrides the search's clock (time budgets). */
    uint64_t (*clock_ns)(void *user);
    void *clock_user;
};

/* A setter changed what is tuned: ends an online search, forgets the
 * cached key hashes. */
void gpo_tuner_changed(gpuopt_tuner *t);
void gpo_kernel_def_free(gpo_kernel_def *k);

/* Entry of a public tuner function: clears the detail, refuses NULL. */
#define GPO_CHECK_TUNER(t, fn)                                                                     \
    do {                                                                                           \
        gpo_detail_clear();                                                                        \
        if (!(t))                                                                                  \
            return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, fn ": tuner is NULL");                    \
    } while (0)

/* ---- a run ------------------------------------------------------------------ */

typedef struct gpo_prep gpo_prep; /* a candidate made ready to run (subject's own) */
typedef struct gpo_trun gpo_trun;

/* What evaluating a candidate found. */
typedef struct gpo_eval {
    int32_t status;    /* GPO_CAND_* */
    gpo_stats stats;   /* count 0 when not timed */
    double compile_ms; /* -1 when nothing was built for it */
    char msg[GPO_TUNER_MSG];
} gpo_eval;

/* Returned by subject ops instead of a candidate status when the run
 * cannot go on (no memory, a broken session): r->fatal holds the status,
 * the detail says why. */
#define GPO_FATAL (-1)

typedef struct gpo_subject_ops {
    const char *kind; /* "kernel", "callback": the cache key's kind */
    /* Adds what the device limits to the run's space (may be NULL). */
    gpuopt_status (*constrain)(gpo_trun *r);
    /* Once per run before the first candidate: session, arguments, the
     * reference. Sets r->validated. */
    gpuopt_status (*setup)(gpo_trun *r);
    /* Frees what setup made (the session stays with the tuner). */
    void (*teardown)(gpo_trun *r);
    /* Starts preparing c ahead of need (may be NULL). */
    void (*prefetch)(gpo_trun *r, const gpuopt_config *c);
    /* Each returns a GPO_CAND_* status (ev->msg set on failure) or
     * GPO_FATAL. prepare fills ev->compile_ms and *p (on OK); run does the
     * pre-run reset and one run, storing its time in *ns; check compares
     * the last run's output with the reference. */
    int32_t (*prepare)(gpo_trun *r, const gpuopt_config *c, gpo_prep **p, gpo_eval *ev);
    int32_t (*run)(gpo_trun *r, gpo_prep *p, double *ns, gpo_eval *ev);
    int32_t (*check)(gpo_trun *r, gpo_prep *p, gpo_eval *ev);
    void (*release)(gpo_trun *r, gpo_prep *p);
} gpo_subject_ops;

extern const gpo_subject_ops gpo_subject_kernel;
extern const gpo_subject_ops gpo_subject_callback;

/* The cache key's parts for one run (tuner_cache.c). */
typedef struct gpo_tkey {
    int usable; /* 0: this run is not cached (mode OFF, callback without key, ...) */
    char backend[16];
    char arch[96];
    int32_t compute_units;
    char source_hash[32];
    char options_hash[32];
    char *workload;
    char driver[64], compiler[64], device_name[256];
    gpo_cache_key key;
    gpo_cache_soft soft;
} gpo_tkey;

struct gpo_trun {
    gpuopt_tuner *t;
    const gpo_subject_ops *ops;
    gpuopt_space *space; /* this run's: the tuner's plus device-limit constraints */
    gpo_search *search;
    void *subject; /* the subject's per-run state */
    int set_up;
    int validated; /* a reference or validate callback checks candidates */
    gpuopt_status fatal;
    uint64_t start_ns;
    double best_ns; /* the probe rule's reference, -1 none */
    gpuopt_result *result;
    gpo_tkey key;
    gpo_cache_tune *journal; /* NULL when not journaling */
    cJSON *resume;           /* candidates to resume (gpo_resume_fetch) */
};

/* Route of the device whose runtime builds `language`, or NULL with the
 * detail saying why not (subject_kernel.c). */
const gpo_route *gpo_kernel_route(const gpuopt_tuner *t, gpuopt_status *why);
/* "opencl-c", "cuda", "hip"; NULL for an unknown language. */
const char *gpo_language_runtime_name(int32_t language);
/* Frees the tuner's device session (subject_kernel.c). */
void gpo_ksession_free(struct gpo_ksession *ks);

/* Starts a run (checks the subject and fork state). Nothing is copied
 * yet: a cache hit needs nothing more. */
gpuopt_status gpo_trun_begin(gpuopt_tuner *t, gpo_trun **out);
/* The run's space: the tuner's, plus the subject's device limits. */
gpuopt_status gpo_trun_space(gpo_trun *r);
/* Creates the run's search with the tuner's settings. */
gpuopt_status gpo_trun_search(gpo_trun *r);
/* Sets the subject up once (no-op afterwards). */
gpuopt_status gpo_trun_setup(gpo_trun *r);
/* Sets the subject up, creates the search, the result and the journal
 * (resuming a killed run's candidates). */
gpuopt_status gpo_trun_start_search(gpo_trun *r);
/* Records an evaluated candidate: search, result, journal, progress. -1
 * when the run must stop (r->fatal). */
int gpo_trun_record(gpo_trun *r, const gpuopt_config *c, const gpo_eval *ev);
/* Writes the finished record (best and runner-up by result index, -1
 * none) and closes the journal. */
void gpo_trun_finish_journal(gpo_trun *r, int32_t best, int32_t runner, double wall_s);
/* Ends a run: abandons an unfinished journal, tears the subject down,
 * frees everything but r->result (which the caller took or freed). */
void gpo_trun_end(gpo_trun *r);

/* ---- evaluation (tuner_eval.c) -------------------------------------------------- */

/* Evaluates c: prepare, one run, check, then the timing controller with
 * the probe rule against best_ns (-1: none) and the timeout. Returns 0, or
 * -1 when the run must stop (r->fatal). */
int gpo_eval_candidate(gpo_trun *r, const gpuopt_config *c, double best_ns, gpo_eval *ev);

/* One run of a prepared candidate: its measurement in *ns, the wall time
 * of the call (what the timeout limits) in *wall_ns. */
int32_t gpo_eval_run(gpo_trun *r, gpo_prep *p, double *ns, double *wall_ns, gpo_eval *ev);

/* Prepares c and runs it once, checked: for re-timing candidates known
 * before (a cache's winner). GPO_CAND_* or GPO_FATAL; *p set on OK. */
int32_t gpo_eval_ready(gpo_trun *r, const gpuopt_config *c, gpo_prep **p, gpo_eval *ev);

/* Re-times k prepared candidates side by side (slot 0 the incumbent) and
 * picks the winner by gpo_stats_beats; stats (k entries) receive each
 * slot's statistics. Returns the winning slot, or -1 (r->fatal set when a
 * run failed fatally; a candidate whose run fails here loses). */
int32_t gpo_eval_retime(gpo_trun *r, gpo_prep **preps, int32_t k, gpo_stats *stats);

/* ---- cache (tuner_cache.c) ------------------------------------------------------- */

/* Fills r->key for this run; key.usable 0 when the run is not cached. */
gpuopt_status gpo_tkey_make(gpo_trun *r);
void gpo_tkey_free(gpo_tkey *k);
/* The tuner's open cache, or NULL (opened on first use; never fails). The
 * cache is shared by the tuners of one context and device. */
gpo_cache *gpo_tuner_cache(gpuopt_tuner *t);
/* Drops the tuner's share of its cache (the last one closes it). */
void gpo_tuner_cache_release(gpuopt_tuner *t);

/* Cache statistics from an evaluation, and back. */
void gpo_eval_to_cache_stats(const gpo_eval *ev, gpo_cache_stats *out);

/* Answers from a hit without running anything: the stored winner and
 * runner-up as the result (from_cache 1). GPUOPT_ERR_NOT_FOUND when the
 * record cannot serve (no winner, parameters that no longer map). */
gpuopt_status gpo_result_from_hit(gpo_trun *r, const gpo_cache_hit *hit, int32_t from_cache,
                                  gpuopt_result **out);

/* Trust-but-verify after a soft change: re-times the stored winner and
 * runner-up side by side, records the outcome, and on success returns the
 * result (from_cache 2). GPUOPT_ERR_NOT_FOUND when the winner no longer
 * holds (the caller tunes again); other errors are fatal. */
gpuopt_status gpo_verify_hit(gpo_trun *r, const gpo_cache_hit *hit, gpuopt_result **out);

/* Reads the candidates of an unfinished tune of this key (a run that was
 * killed), before this run's journal begins; then, once it has begun and
 * before the first candidate, preloads them into the search and the
 * result and journals them again under this run's tune (so a run killed
 * again still resumes from all of them). */
gpuopt_status gpo_resume_fetch(gpo_trun *r);
gpuopt_status gpo_resume_apply(gpo_trun *r);

/* ---- results (result.c) ------------------------------------------------------------ */

gpuopt_result *gpo_result_new(gpuopt_tuner *t, const gpuopt_space *space);
/* Appends a candidate (copying idx); its index, or -1 on allocation failure. */
int32_t gpo_result_add(gpuopt_result *res, const uint32_t *idx, const gpo_eval *ev, int resumed);
/* The run's description, for JSON. */
void gpo_result_set_search(gpuopt_result *res, const gpo_search *s, double wall_s);
void gpo_result_set_best(gpuopt_result *res, int32_t index);
void gpo_result_set_from_cache(gpuopt_result *res, int32_t from_cache);
void gpo_result_set_validated(gpuopt_result *res, int validated);
/* The backend the work ran on and the workload key text (-1: no memory). */
int gpo_result_set_workload(gpuopt_result *res, const char *backend, const char *workload);
/* One entry of the final re-timing (candidate index and its statistics). */
int gpo_result_add_final(gpuopt_result *res, int32_t index, const gpo_stats *stats);
int32_t gpo_result_count_of(const gpuopt_result *res);
/* The index of the candidate with c's values; -1 when none. */
int32_t gpo_result_index_of(const gpuopt_result *res, const gpuopt_config *c);
int32_t gpo_result_best_index(const gpuopt_result *res);
const gpuopt_config *gpo_result_config(const gpuopt_result *res, int32_t i);
/* Candidate i's status and statistics as the cache stores them. */
void gpo_result_cache_stats(const gpuopt_result *res, int32_t i, gpo_cache_stats *out);

/* ---- tests --------------------------------------------------------------------------- */

/* When set, the kernel subject calls the runtime through the table this
 * returns for the real one (tests count calls, or fail chosen ones). */
extern const gpo_runtime_ops *(*gpo_tuner_ops_hook)(const gpo_runtime_ops *real);

#endif
