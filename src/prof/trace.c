/* Chrome trace-event JSON (trace.h). The format: "Trace Event Format",
 * Google, the document linked from chrome://tracing and Perfetto's
 * "Legacy JSON trace" support: a {"traceEvents": [...]} object whose
 * events carry ph (phase), ts and dur in microseconds, pid and tid.
 * Complete events ("X") of one tid must nest, which a thread's sections
 * do; metadata events ("M") name the process and the threads; counter
 * events ("C") make a track per name.
 *
 * Written with a string buffer, not cJSON: a profile may hold a million
 * sections, and a tree of cJSON nodes for them would cost far more memory
 * than the text. */
#include "trace.h"

#include <inttypes.h>
#include <stdio.h>

#include "util/detail.h"
#include "util/strutil.h"

/* A JSON string: names and notes are UTF-8 without control characters
 * (the profiler refuses them), so only '"' and '\\' need escaping; a
 * control character from elsewhere (a note) is escaped all the same. */
static void json_str(gpo_sbuf *b, const char *s)
{
    gpo_sbuf_append(b, "\"");
    const char *run = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c != '"' && c != '\\' && c >= 0x20)
            continue;
        gpo_sbuf_appendf(b, "%.*s", (int)(s - run), run);
        if (c == '"' || c == '\\')
            gpo_sbuf_appendf(b, "\\%c", c);
        else
            gpo_sbuf_appendf(b, "\\u%04x", c);
        run = s + 1;
    }
    gpo_sbuf_appendf(b, "%s\"", run);
}

static void thread_label(const gpo_prof_snapshot *s, int32_t i, char *out, size_t cap)
{
    const gpo_prof_snap_thread *t = &s->threads[i];
    gpo_snprintf(out, cap, "thread %d%s%s%s (tid %d)", (int)i, *t->name ? " \"" : "", t->name,
                 *t->name ? "\"" : "", (int)t->os_tid);
}

static void meta(gpo_sbuf *b, const char *what, int32_t pid, int64_t tid, const char *key,
                 const char *text, long number)
{
    gpo_sbuf_appendf(
        b,
        ",\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%" PRId64 ",\"args\":{\"%s\":", what,
        (int)pid, tid, key);
    if (text)
        json_str(b, text);
    else
        gpo_sbuf_appendf(b, "%ld", number);
    gpo_sbuf_append(b, "}}");
}

/* One complete event of `e`'s section on track `tid`, from start_ns for
 * dur_ns; `args` (JSON members, without braces) and its counts as args. */
static void slice(gpo_sbuf *b, const gpo_prof_snapshot *s, const gpo_prof_snap_event *e,
                  const char *cat, int64_t tid, double start_ns, double dur_ns, const char *args)
{
    gpo_sbuf_appendf(b, ",\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", cat);
    json_str(b, s->nodes[e->node].name);
    gpo_sbuf_appendf(b, ",\"pid\":%d,\"tid\":%" PRId64 ",\"ts\":%.3f,\"dur\":%.3f,\"args\":{%s",
                     (int)s->pid, tid, start_ns / 1e3, dur_ns / 1e3, args);
    if (e->items)
        gpo_sbuf_appendf(b, ",\"items\":%" PRIu64, e->items);
    if (e->bytes)
        gpo_sbuf_appendf(b, ",\"bytes\":%" PRIu64, e->bytes);
    gpo_sbuf_append(b, "}}");
}

char *gpo_prof_trace_json(const gpo_prof_snapshot *s)
{
    const gpuopt_profiler *p = s->p;
    int32_t pid = s->pid;
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    gpo_sbuf_appendf(&b,
                     "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"libgpuopt "
                     "%s\",\"host_clock\":\"CLOCK_MONOTONIC\",\"device_clock\":",
                     GPUOPT_VERSION_STRING);
    if (p->timer.ops)
        json_str(&b, p->device_clock);
    else
        gpo_sbuf_append(&b, "null");
    gpo_sbuf_append(&b, ",\"device_note\":");
    json_str(&b, s->device_note);
    gpo_sbuf_appendf(&b,
                     ",\"sections_dropped\":%" PRIu64 ",\"nesting_errors\":%" PRIu64
                     ",\"open_sections\":%" PRId64 ",\"vendor_ranges\":\"",
                     s->dropped, s->nesting_errors, s->open);
    for (int i = 0; i < p->n_tools; i++)
        gpo_sbuf_appendf(&b, "%s%s %s", i ? "; " : "", p->tools[i].tool,
                         p->tools[i].attached ? "attached" : "not attached");
    gpo_sbuf_append(&b, "\"},\n\"traceEvents\":[");

    char label[96];
    gpo_snprintf(label, sizeof label, "gpuopt profile (pid %d)", (int)pid);
    gpo_sbuf_appendf(&b,
                     "\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,"
                     "\"args\":{\"name\":",
                     (int)pid);
    json_str(&b, label);
    gpo_sbuf_append(&b, "}}");
    /* Tracks in the order threads first began; a thread's device track
     * right after it. */
    for (int32_t i = 0; i < s->n_threads; i++) {
        thread_label(s, i, label, sizeof label);
        meta(&b, "thread_name", pid, s->threads[i].os_tid, "name", label, 0);
        meta(&b, "thread_sort_index", pid, s->threads[i].os_tid, "sort_index", NULL, 2L * i);
    }
    int32_t last_device_thread = -1;
    for (size_t k = 0; k < s->n_events; k++) {
        const gpo_prof_snap_event *e = &s->events[k];
        char args[96];
        if (e->device_ns >= 0)
            gpo_snprintf(args, sizeof args,
                         "\"clock\":\"host; device time on the device track\",\"device_ms\":%.6f",
                         e->device_ns / 1e6);
        else
            gpo_snprintf(args, sizeof args, "\"clock\":\"host\"");
        slice(&b, s, e, "section", s->threads[e->thread].os_tid, e->start_ns, e->dur_ns, args);
        if (e->device_ns >= 0 && e->device_start_ns >= 0) {
            int64_t dtid = GPO_PROF_DEVICE_TID_BASE + e->thread;
            if (e->thread != last_device_thread) {
                /* Named once per thread: events are ordered by thread. */
                gpo_snprintf(label, sizeof label, "device: %s, sections of thread %d", p->device_id,
                             (int)e->thread);
                meta(&b, "thread_name", pid, dtid, "name", label, 0);
                meta(&b, "thread_sort_index", pid, dtid, "sort_index", NULL, 2L * e->thread + 1);
                last_device_thread = e->thread;
            }
            gpo_snprintf(args, sizeof args, "\"clock\":\"device\",\"host_ms\":%.6f",
                         e->dur_ns / 1e6);
            slice(&b, s, e, "device", dtid, e->device_start_ns, e->device_ns, args);
        }
        /* Throughput as counters, one track per section and unit. */
        double d = gpo_prof_event_ns(e);
        if (d > 0 && (e->items || e->bytes)) {
            gpo_sbuf_appendf(&b, ",\n{\"ph\":\"C\",\"name\":");
            char cname[GPO_PROF_MAX_NAME + 32];
            gpo_snprintf(cname, sizeof cname, "%s throughput", s->nodes[e->node].name);
            json_str(&b, cname);
            gpo_sbuf_appendf(&b, ",\"pid\":%d,\"ts\":%.3f,\"args\":{", (int)pid,
                             (e->start_ns + e->dur_ns) / 1e3);
            if (e->items)
                gpo_sbuf_appendf(&b, "\"items/s\":%.6g%s", (double)e->items / (d * 1e-9),
                                 e->bytes ? "," : "");
            if (e->bytes)
                gpo_sbuf_appendf(&b, "\"bytes/s\":%.6g", (double)e->bytes / (d * 1e-9));
            gpo_sbuf_append(&b, "}}");
        }
    }
    gpo_sbuf_append(&b, "\n]}\n");
    char *out = gpo_sbuf_take(&b);
    if (!out)
        gpo_fail(GPUOPT_ERR_NO_MEMORY, "profiler: out of memory writing the trace");
    return out;
}
