/* The memory manager (gpuopt_memory_*, include/gpuopt/gpuopt.h "Memory";
 * docs/memory.md): a budget for one device taken from a plan, allocations
 * the program registers by name, and advice computed with the plan's own
 * workload rules (src/workload_fit.c) on live numbers (src/memory/live.c).
 * It allocates nothing: the program allocates and tells it. One lock per
 * manager; a live reading takes the device's context lock inside it. */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "memory/live.h"
#include "plan.h"
#include "util/json.h"
#include "util/strutil.h"
#include "workload_fit.h"

#define NAME_MAX_LEN 127
#define DEFAULT_THRESHOLD 90
#define N_PLACES 3

static const char *const place_words[N_PLACES] = {"device", "host", "pinned"};

typedef struct alloc {
    char name[NAME_MAX_LEN + 1];
    int32_t place;
    uint64_t bytes;
} alloc;

struct gpuopt_memory {
    pthread_mutex_t lock;
    struct gpuopt_context *ctx;
    gpuopt_device *dev;
    /* From the plan, fixed at creation. */
    uint64_t plan_budget;
    char plan_budget_text[512];
    uint64_t plan_memory; /* what the plan sized against */
    const char *plan_memory_what;
    int32_t level;
    int has_workload;
    gpuopt_workload workload;
    int reduced;
    char reduced_why[256];
    int separate;
    char separate_why[256];
    /* Settings. */
    uint64_t budget;
    char budget_text[512];
    int32_t threshold;
    /* Registered allocations. */
    alloc *allocs;
    size_t n, cap;
    uint64_t bytes[N_PLACES], high[N_PLACES];
};

static gpuopt_status need(const gpuopt_memory *mem)
{
    return mem ? GPUOPT_OK : gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "mem is NULL");
}

/* The budget the plan gives (docs: memory.budget_bytes, then
 * memory.budget_percent of the total, then the plan's headroom rule). */
static gpuopt_status plan_budget(const struct gpuopt_plan *p, gpuopt_memory *m)
{
    uint64_t total = p->device->info.memory_bytes;
    char a[32], t[32];
    const gpo_knob *k = gpo_plan_find(p, "memory.budget_bytes");
    if (k) {
        m->plan_budget = (uint64_t)k->ival;
        gpo_format_bytes(m->plan_budget, a, sizeof a);
        return gpo_say(GPUOPT_OK, m->plan_budget_text, sizeof m->plan_budget_text,
                       "memory.budget_bytes = %s (%s)", a, k->reason);
    }
    k = gpo_plan_find(p, "memory.budget_percent");
    if (k && total) {
        m->plan_budget = total / 100 * (uint64_t)k->ival;
        gpo_format_bytes(m->plan_budget, a, sizeof a);
        gpo_format_bytes(total, t, sizeof t);
        return gpo_say(GPUOPT_OK, m->plan_budget_text, sizeof m->plan_budget_text,
                       "memory.budget_percent = %d%% of %s total = %s (%s)", (int)k->ival, t, a,
                       k->reason);
    }
    gpo_fit_budget b;
    gpo_fit_budget_make(m->plan_memory, m->plan_memory_what, total, m->level >= 1 ? 1 : 0, &b);
    if (!b.usable)
        return gpo_fail(GPUOPT_ERR_UNSUPPORTED,
                        "%s: the device's memory size is unknown, so the plan gives no budget: "
                        "set memory.budget_bytes",
                        p->device->info.id);
    m->plan_budget = b.usable;
    return gpo_say(GPUOPT_OK, m->plan_budget_text, sizeof m->plan_budget_text,
                   "the plan's headroom rule: %s", b.text);
}

GPUOPT_API gpuopt_status gpuopt_memory_create(const gpuopt_plan *plan, gpuopt_memory **out)
{
    GPO_ENTRY_OUT("", plan, "plan", out, NULL);
    gpuopt_memory *m = calloc(1, sizeof *m);
    if (!m)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory creating a memory manager");
    m->ctx = plan->ctx;
    m->dev = plan->device;
    m->level = plan->level_applied;
    m->plan_memory = gpo_plan_device_memory(plan, &m->plan_memory_what);
    const gpuopt_workload *w = gpo_plan_workload(plan);
    if (w) {
        m->has_workload = 1;
        m->workload = *w;
    }
    m->reduced = gpo_plan_reduced_precision(plan, m->reduced_why, sizeof m->reduced_why);
    m->separate = gpo_fit_memory_is_separate(m->dev, m->separate_why, sizeof m->separate_why);
    gpuopt_status st = plan_budget(plan, m);
    if (st) {
        free(m);
        return st;
    }
    m->budget = m->plan_budget;
    gpo_strlcpy(m->budget_text, m->plan_budget_text, sizeof m->budget_text);
    const gpo_knob *k = gpo_plan_find(plan, "memory.warn_percent");
    m->threshold = k ? (int32_t)k->ival : DEFAULT_THRESHOLD;
    if (pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "cannot create the memory manager's lock");
    }
    *out = m;
    return GPUOPT_OK;
}

GPUOPT_API void gpuopt_memory_destroy(gpuopt_memory *mem)
{
    if (!mem)
        return;
    pthread_mutex_destroy(&mem->lock);
    free(mem->allocs);
    free(mem);
}

GPUOPT_API gpuopt_status gpuopt_memory_set_budget(gpuopt_memory *mem, uint64_t bytes)
{
    gpo_detail_clear();
    gpuopt_status st = need(mem);
    if (st)
        return st;
    uint64_t total = mem->dev->info.memory_bytes;
    if (total && bytes > total) {
        char b[32], t[32];
        gpo_format_bytes(bytes, b, sizeof b);
        gpo_format_bytes(total, t, sizeof t);
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "a budget of %s is above %s's %s; accepted 1 byte to the total, or 0 for "
                        "the plan's budget",
                        b, mem->dev->info.id, t);
    }
    pthread_mutex_lock(&mem->lock);
    if (bytes) {
        char b[32];
        mem->budget = bytes;
        gpo_format_bytes(bytes, b, sizeof b);
        gpo_snprintf(mem->budget_text, sizeof mem->budget_text,
                     "%s, set by "
                     "gpuopt_memory_set_budget",
                     b);
    } else {
        mem->budget = mem->plan_budget;
        gpo_strlcpy(mem->budget_text, mem->plan_budget_text, sizeof mem->budget_text);
    }
    pthread_mutex_unlock(&mem->lock);
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_memory_set_threshold(gpuopt_memory *mem, int32_t percent)
{
    gpo_detail_clear();
    gpuopt_status st = need(mem);
    if (st)
        return st;
    if (percent < 1 || percent > 100)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "threshold %d%%: accepted 1 to 100", (int)percent);
    pthread_mutex_lock(&mem->lock);
    mem->threshold = percent;
    pthread_mutex_unlock(&mem->lock);
    return GPUOPT_OK;
}

static alloc *find(gpuopt_memory *mem, const char *name)
{
    for (size_t i = 0; i < mem->n; i++)
        if (strcmp(mem->allocs[i].name, name) == 0)
            return &mem->allocs[i];
    return NULL;
}

GPUOPT_API gpuopt_status gpuopt_memory_register(gpuopt_memory *mem, const char *name, int32_t place,
                                                uint64_t bytes)
{
    gpo_detail_clear();
    if (!mem || !name)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s is NULL", mem ? "name" : "mem");
    size_t len = strlen(name);
    if (len == 0 || len > NAME_MAX_LEN)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "an allocation's name has %zu characters: accepted 1 to %d", len,
                        NAME_MAX_LEN);
    if (place < GPUOPT_PLACE_DEVICE || place > GPUOPT_PLACE_PINNED)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "place %d for \"%s\": accepted 0 (device), 1 (host), 2 (pinned)",
                        (int)place, name);
    if (bytes == 0 || bytes > (uint64_t)INT64_MAX)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                        "%" PRIu64 " bytes for \"%s\": accepted 1 to 2^63 - 1", bytes, name);
    gpuopt_status st = GPUOPT_OK;
    pthread_mutex_lock(&mem->lock);
    if (find(mem, name)) {
        st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                      "an allocation called \"%s\" is already registered: release it first, or "
                      "give this one another name",
                      name);
    } else if (mem->bytes[place] > UINT64_MAX - bytes) {
        st = gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "registering \"%s\" overflows the %s total", name,
                      place_words[place]);
    } else if (gpo_grow(&mem->allocs, sizeof *mem->allocs, mem->n, &mem->cap, 16)) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory registering \"%s\"", name);
    }
    if (st == GPUOPT_OK) {
        alloc *a = &mem->allocs[mem->n++];
        gpo_strlcpy(a->name, name, sizeof a->name);
        a->place = place;
        a->bytes = bytes;
        mem->bytes[place] += bytes;
        if (mem->bytes[place] > mem->high[place])
            mem->high[place] = mem->bytes[place];
    }
    pthread_mutex_unlock(&mem->lock);
    return st;
}

GPUOPT_API gpuopt_status gpuopt_memory_release(gpuopt_memory *mem, const char *name)
{
    gpo_detail_clear();
    if (!mem || !name)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s is NULL", mem ? "name" : "mem");
    gpuopt_status st = GPUOPT_OK;
    pthread_mutex_lock(&mem->lock);
    alloc *a = find(mem, name);
    if (!a) {
        st = gpo_fail(GPUOPT_ERR_NOT_FOUND, "no allocation called \"%s\" is registered", name);
    } else {
        mem->bytes[a->place] -= a->bytes;
        *a = mem->allocs[--mem->n];
    }
    pthread_mutex_unlock(&mem->lock);
    return st;
}

/* A live reading of the manager's device, under its context's lock. */
static gpuopt_status read_live(gpuopt_memory *mem, gpo_memory_reading *r)
{
    gpo_ctx_lock(mem->ctx);
    gpuopt_status st = gpo_ctx_check_fork(mem->ctx);
    if (st == GPUOPT_OK)
        st = gpo_memory_read(mem->dev, 0, r);
    gpo_ctx_unlock(mem->ctx);
    return st;
}

GPUOPT_API gpuopt_status gpuopt_memory_get_stats(gpuopt_memory *mem, gpuopt_memory_stats *stats)
{
    gpo_detail_clear();
    if (stats && stats->struct_size >= sizeof *stats) {
        memset(stats, 0, sizeof *stats);
        stats->struct_size = sizeof *stats;
    }
    if (!mem || !stats)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s is NULL", mem ? "stats" : "mem");
    GPO_CHECK_STRUCT_SIZE(NULL, gpuopt_memory_stats, stats->struct_size, sizeof *stats);
    gpo_memory_reading r;
    gpuopt_status st = read_live(mem, &r); /* stats was zeroed above */
    if (st)
        return st;
    pthread_mutex_lock(&mem->lock);
    stats->budget_bytes = mem->budget;
    stats->device_bytes = mem->bytes[GPUOPT_PLACE_DEVICE];
    stats->host_bytes = mem->bytes[GPUOPT_PLACE_HOST];
    stats->pinned_bytes = mem->bytes[GPUOPT_PLACE_PINNED];
    stats->device_high_water_bytes = mem->high[GPUOPT_PLACE_DEVICE];
    stats->host_high_water_bytes = mem->high[GPUOPT_PLACE_HOST];
    stats->pinned_high_water_bytes = mem->high[GPUOPT_PLACE_PINNED];
    stats->allocations = (int32_t)mem->n;
    stats->threshold_percent = mem->threshold;
    stats->budget_share = (double)mem->bytes[GPUOPT_PLACE_DEVICE] / (double)mem->budget;
    pthread_mutex_unlock(&mem->lock);
    stats->live_total_bytes = r.total;
    stats->live_free_bytes = r.free;
    stats->live_used_bytes = r.used;
    stats->live_source = r.source;
    return GPUOPT_OK;
}

static void places_json(gpo_json *b, cJSON *root, const char *key, const uint64_t *v)
{
    cJSON *o = gpo_json_object(b, root, key);
    for (int i = 0; !b->failed && i < N_PLACES; i++)
        gpo_json_num(b, o, place_words[i], (double)v[i]);
}

GPUOPT_API gpuopt_status gpuopt_memory_to_json(gpuopt_memory *mem, char **json)
{
    GPO_ENTRY_OUT("", mem, "mem", json, NULL);
    gpo_memory_reading r;
    gpuopt_status st = read_live(mem, &r);
    if (st)
        return st;
    uint64_t now = gpo_now_ns();
    gpo_json b = {0};
    cJSON *root = cJSON_CreateObject();
    pthread_mutex_lock(&mem->lock);
    gpo_json_str(&b, root, "device", mem->dev->info.id);
    gpo_json_num(&b, root, "budget_bytes", (double)mem->budget);
    gpo_json_str(&b, root, "budget_source", mem->budget_text);
    gpo_json_num(&b, root, "threshold_percent", mem->threshold);
    places_json(&b, root, "registered", mem->bytes);
    places_json(&b, root, "high_water", mem->high);
    gpo_json_num(&b, root, "budget_share",
                 (double)mem->bytes[GPUOPT_PLACE_DEVICE] / (double)mem->budget);
    /* "live" before "allocations", as the format has them. */
    cJSON *live = gpo_json_object(&b, root, "live");
    cJSON *list = gpo_json_array(&b, root, "allocations");
    for (size_t i = 0; !b.failed && i < mem->n; i++) {
        cJSON *a = gpo_json_object(&b, list, NULL);
        gpo_json_str(&b, a, "name", mem->allocs[i].name);
        gpo_json_str(&b, a, "place", place_words[mem->allocs[i].place]);
        gpo_json_num(&b, a, "bytes", (double)mem->allocs[i].bytes);
    }
    pthread_mutex_unlock(&mem->lock);
    int known = r.source != GPUOPT_MEMORY_SOURCE_NONE;
    gpo_json_num(&b, live, "total_bytes", (double)r.total);
    gpo_json_num_or_null(&b, live, "free_bytes", (double)r.free, known);
    gpo_json_num_or_null(&b, live, "used_bytes", (double)r.used, known);
    gpo_json_str(&b, live, "source", gpo_memory_source_word(r.source));
    gpo_json_str(&b, live, "source_text", r.source_text);
    gpo_json_num(&b, live, "age_s", now > r.read_ns ? (double)(now - r.read_ns) / 1e9 : 0.0);
    char *text = b.failed ? NULL : cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!text)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory writing the memory manager as JSON");
    *json = text;
    return GPUOPT_OK;
}

/* The case the plan's rules size: `model` and `item` against the live free
 * memory with the plan's headroom, or, when no source says what is free,
 * against the plan's own reading (the text says which). */
static void live_case(const gpuopt_memory *mem, const gpo_memory_reading *r, uint64_t model,
                      uint64_t item, gpo_fit_budget *b, char *usable_text, size_t cap,
                      gpo_fit_case *c)
{
    if (r->source != GPUOPT_MEMORY_SOURCE_NONE) {
        gpo_fit_budget_make(r->free, "free", r->total, 1, b);
        gpo_snprintf(usable_text, cap, "%s (live: %s)", b->text, r->source_text);
    } else {
        gpo_fit_budget_make(mem->plan_memory, mem->plan_memory_what, mem->dev->info.memory_bytes,
                            mem->level >= 1 ? 1 : 0, b);
        gpo_snprintf(usable_text, cap, "%s (the plan's reading: %s)", b->text, r->source_text);
    }
    memset(c, 0, sizeof *c);
    c->model = model;
    c->item = item;
    c->usable = b->usable;
    c->usable_text = usable_text;
    c->reduced = mem->reduced;
    c->reduced_why = mem->reduced_why;
    c->quantized = mem->has_workload && mem->workload.quantized == 1;
    c->separate = mem->separate;
    c->separate_why = mem->separate_why;
}

GPUOPT_API gpuopt_status gpuopt_memory_recommend(gpuopt_memory *mem, uint64_t model_bytes,
                                                 uint64_t item_bytes, gpuopt_memory_advice *advice)
{
    gpo_detail_clear();
    if (advice && advice->struct_size >= sizeof *advice) {
        memset(advice, 0, sizeof *advice);
        advice->struct_size = sizeof *advice;
    }
    if (!mem || !advice)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "%s is NULL", mem ? "advice" : "mem");
    GPO_CHECK_STRUCT_SIZE(NULL, gpuopt_memory_advice, advice->struct_size, sizeof *advice);
    if (!model_bytes && !item_bytes)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "model_bytes and item_bytes are both 0: nothing to size");
    if (model_bytes > (uint64_t)INT64_MAX || item_bytes > (uint64_t)INT64_MAX)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "sizes above 2^63 bytes");
    gpo_memory_reading r;
    gpuopt_status st = read_live(mem, &r);
    if (st)
        return st;
    gpo_fit_budget b;
    gpo_fit_case c;
    gpo_fit_advice a;
    char usable_text[512];
    live_case(mem, &r, model_bytes, item_bytes, &b, usable_text, sizeof usable_text, &c);
    gpo_fit_advise(&c, &a);
    advice->free_bytes = b.memory;
    advice->usable_bytes = b.usable;
    advice->quantize_bits = a.bits;
    advice->offload_bytes = a.offload;
    advice->max_batch = a.batch;
    gpo_strlcpy(advice->reason, a.text, sizeof advice->reason);
    return GPUOPT_OK;
}

/* "weights 6.0 GiB, kv 1.5 GiB": the largest device allocations. */
static void largest(const gpuopt_memory *mem, gpo_sbuf *b)
{
    int shown[3] = {-1, -1, -1};
    for (int k = 0; k < 3; k++) {
        int best = -1;
        for (size_t i = 0; i < mem->n; i++) {
            if (mem->allocs[i].place != GPUOPT_PLACE_DEVICE || (int)i == shown[0] ||
                (int)i == shown[1])
                continue;
            if (best < 0 || mem->allocs[i].bytes > mem->allocs[best].bytes)
                best = (int)i;
        }
        if (best < 0)
            break;
        shown[k] = best;
        char s[32];
        gpo_format_bytes(mem->allocs[best].bytes, s, sizeof s);
        gpo_sbuf_appendf(b, "%s%s %s", k ? ", " : "", mem->allocs[best].name, s);
    }
}

GPUOPT_API gpuopt_status gpuopt_memory_check(gpuopt_memory *mem, char **warning)
{
    GPO_ENTRY_OUT("", mem, "mem", warning, NULL);
    gpo_memory_reading r;
    gpuopt_status st = read_live(mem, &r);
    if (st)
        return st;
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    char x[32], y[32];
    pthread_mutex_lock(&mem->lock);
    uint64_t dev_bytes = mem->bytes[GPUOPT_PLACE_DEVICE];
    int over_budget = (double)dev_bytes * 100.0 >= (double)mem->budget * mem->threshold;
    int live_known = r.source != GPUOPT_MEMORY_SOURCE_NONE && r.total;
    int over_live = live_known && (double)r.used >= (double)r.total * mem->threshold / 100.0;
    if (over_budget || over_live) {
        gpo_sbuf_appendf(&b, "%s: ", mem->dev->info.id);
        if (over_budget) {
            gpo_format_bytes(dev_bytes, x, sizeof x);
            gpo_format_bytes(mem->budget, y, sizeof y);
            gpo_sbuf_appendf(&b, "%s registered on the device is %.0f%% of the %s budget (%s)", x,
                             100.0 * (double)dev_bytes / (double)mem->budget, y, mem->budget_text);
        }
        if (over_live) {
            gpo_format_bytes(r.used, x, sizeof x);
            gpo_format_bytes(r.total, y, sizeof y);
            gpo_sbuf_appendf(&b, "%s%s of %s is in use on the device (%.0f%%, %s)",
                             over_budget ? "; " : "", x, y,
                             100.0 * (double)r.used / (double)r.total, r.source_text);
        }
        gpo_sbuf_appendf(&b, ", at or above the %d%% threshold", (int)mem->threshold);
        if (mem->has_workload && (mem->workload.model_bytes || mem->workload.item_bytes)) {
            /* What the program could hold now: what it holds plus what is
             * still free, within its budget; sized by the plan's rules. */
            gpo_fit_budget fb;
            gpo_fit_case c;
            gpo_fit_advice a;
            char usable_text[512];
            live_case(mem, &r, mem->workload.model_bytes, mem->workload.item_bytes, &fb,
                      usable_text, sizeof usable_text, &c);
            if (live_known) {
                uint64_t have = fb.usable + dev_bytes;
                c.usable = have < mem->budget ? have : mem->budget;
                gpo_format_bytes(fb.usable, x, sizeof x);
                gpo_format_bytes(c.usable, y, sizeof y);
                gpo_snprintf(usable_text, sizeof usable_text,
                             "the program can hold %s (%s usable of the free memory, %s + what "
                             "it registered, within its budget)",
                             y, x, r.source_text);
            }
            gpo_fit_advise(&c, &a);
            gpo_sbuf_appendf(&b, ". Advice from the plan's workload rules: %s", a.text);
            if (a.batch >= 0)
                gpo_sbuf_appendf(&b, "; use batches of at most %lld items", (long long)a.batch);
        } else if (dev_bytes) {
            gpo_sbuf_appendf(&b, ". The largest device allocations: ");
            largest(mem, &b);
            gpo_sbuf_appendf(&b, "; use a smaller batch, quantise the model, or offload part of "
                                 "it to host memory (describe the workload to the plan for "
                                 "sizes)");
        } else {
            gpo_sbuf_appendf(&b, "; other processes hold it: use a smaller batch, or wait for "
                                 "memory to be freed");
        }
    }
    pthread_mutex_unlock(&mem->lock);
    if (b.failed) {
        gpo_sbuf_free(&b);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory writing the memory warning");
    }
    if (b.len) {
        gpo_ctx_lock(mem->ctx);
        gpo_log_warn(&mem->ctx->log, "%s", b.data);
        gpo_ctx_unlock(mem->ctx);
        *warning = gpo_sbuf_take(&b);
    }
    gpo_sbuf_free(&b);
    return GPUOPT_OK;
}
