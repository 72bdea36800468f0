/* The summary of a profile (summary.h). Percentiles are the measurement
 * layer's (src/measure/stats.h: linear interpolation between order
 * statistics, numpy's default), so the profiler and the tuner mean the
 * same by "p95". */
#include "summary.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/stats.h"
#include "util/json.h"
#include "util/detail.h"
#include "util/strutil.h"

static const char *const clock_words[] = {"host", "device", "mixed"};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double gpo_prof_wall_ns(const gpo_prof_snapshot *s)
{
    return s->n_events ? s->last_ns - s->first_ns : 0.0;
}

/* Per-node sums, then rows in tree order. */
typedef struct node_sum {
    uint64_t count, device;
    double total, max;
    uint64_t items, bytes;
    int keep;
    int32_t first_child, next_sibling, row;
} node_sum;

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Pushes the list of siblings from `first`, reversed, so the first pops
 * first. */
static void push_siblings(int32_t *stack, int32_t *sp, const node_sum *sum, int32_t first)
{
    int32_t from = *sp;
    for (int32_t c = first; c >= 0; c = sum[c].next_sibling)
        stack[(*sp)++] = c;
    for (int32_t a = from, b = *sp - 1; a < b; a++, b--) {
        int32_t t = stack[a];
        stack[a] = stack[b];
        stack[b] = t;
    }
}

gpuopt_status gpo_prof_rows(const gpo_prof_snapshot *s, gpo_prof_row **rows_out, uint32_t *n_out)
{
    uint32_t n = s->n_nodes;
    *rows_out = NULL;
    *n_out = 0;
    node_sum *sum = calloc(n ? n : 1, sizeof *sum);
    size_t *offs = calloc((size_t)n + 1, sizeof *offs);
    double *durs = malloc((s->n_events ? s->n_events : 1) * sizeof *durs);
    gpo_prof_row *rows = calloc(n ? n : 1, sizeof *rows);
    int32_t *stack = malloc((n ? n : 1) * sizeof *stack);
    size_t *at = calloc(n ? n : 1, sizeof *at);
    if (!sum || !offs || !durs || !rows || !stack || !at) {
        free(sum), free(offs), free(durs), free(rows), free(stack), free(at);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "profiler: out of memory summarising");
    }
    for (size_t i = 0; i < s->n_events; i++) {
        const gpo_prof_snap_event *e = &s->events[i];
        node_sum *m = &sum[e->node];
        double d = gpo_prof_event_ns(e);
        m->count++;
        m->device += e->device_ns >= 0;
        m->total += d;
        m->max = d > m->max ? d : m->max;
        m->items = add_sat(m->items, e->items);
        m->bytes = add_sat(m->bytes, e->bytes);
        offs[e->node + 1]++;
    }
    for (uint32_t i = 0; i < n; i++)
        offs[i + 1] += offs[i];
    /* Durations grouped by node (a counting sort), each group then sorted. */
    for (size_t i = 0; i < s->n_events; i++) {
        uint32_t k = s->events[i].node;
        durs[offs[k] + at[k]++] = gpo_prof_event_ns(&s->events[i]);
    }
    free(at);
    /* Children have larger ids than their parents (a parent is begun
     * first), so one pass from the end marks every ancestor of a kept
     * section, and building the child lists backwards keeps them in id
     * order. */
    for (uint32_t i = n; i-- > 0;) {
        sum[i].keep |= sum[i].count > 0;
        sum[i].first_child = -1;
        sum[i].row = -1;
    }
    for (uint32_t i = n; i-- > 0;)
        if (sum[i].keep && s->nodes[i].parent >= 0)
            sum[s->nodes[i].parent].keep = 1;
    int32_t first_root = -1;
    for (uint32_t i = n; i-- > 0;) {
        if (!sum[i].keep)
            continue;
        int32_t *head =
            s->nodes[i].parent >= 0 ? &sum[s->nodes[i].parent].first_child : &first_root;
        sum[i].next_sibling = *head;
        *head = (int32_t)i;
    }
    double wall = gpo_prof_wall_ns(s);
    uint32_t nrows = 0;
    int32_t sp = 0;
    /* Depth-first, preorder: each list of siblings is pushed, then
     * reversed on the stack, so the first sibling pops first. */
    push_siblings(stack, &sp, sum, first_root);
    while (sp > 0) {
        int32_t k = stack[--sp];
        node_sum *m = &sum[k];
        gpo_prof_row *row = &rows[nrows];
        m->row = (int32_t)nrows++;
        row->node = (uint32_t)k;
        row->parent = s->nodes[k].parent >= 0 ? sum[s->nodes[k].parent].row : -1;
        row->depth = s->nodes[k].depth;
        row->name = s->nodes[k].name;
        row->clock = m->device == 0          ? GPO_PROF_HOST
                     : m->device == m->count ? GPO_PROF_DEVICE
                                             : GPO_PROF_MIXED;
        row->count = m->count;
        row->total_ns = m->total;
        row->max_ns = m->max;
        if (m->count) {
            double *seg = durs + offs[k];
            qsort(seg, m->count, sizeof *seg, cmp_double);
            row->mean_ns = m->total / (double)m->count;
            row->p50_ns = gpo_quantile_sorted(seg, (int32_t)m->count, 0.50);
            row->p95_ns = gpo_quantile_sorted(seg, (int32_t)m->count, 0.95);
        }
        double of = row->parent >= 0 ? rows[row->parent].total_ns : wall;
        row->share = of > 0 && m->count ? m->total / of : -1.0;
        row->items = m->items;
        row->bytes = m->bytes;
        row->items_per_s = m->items && m->total > 0 ? (double)m->items / (m->total * 1e-9) : -1.0;
        row->bytes_per_s = m->bytes && m->total > 0 ? (double)m->bytes / (m->total * 1e-9) : -1.0;
        push_siblings(stack, &sp, sum, m->first_child); /* first child on top */
    }
    free(sum), free(offs), free(durs), free(stack);
    *rows_out = rows;
    *n_out = nrows;
    return GPUOPT_OK;
}

void gpo_prof_format_ns(double ns, char *out, size_t cap)
{
    static const char *const units[] = {"ns", "us", "ms", "s"};
    int u = 0;
    while (u < 3 && fabs(ns) >= 999.5) {
        ns /= 1e3;
        u++;
    }
    if (u == 0 || fabs(ns) >= 99.95)
        gpo_snprintf(out, cap, "%.0f %s", ns, units[u]);
    else if (fabs(ns) >= 9.995)
        gpo_snprintf(out, cap, "%.1f %s", ns, units[u]);
    else
        gpo_snprintf(out, cap, "%.2f %s", ns, units[u]);
}

/* "3.33 k", "120 M": a rate with three significant digits and an SI prefix. */
static void format_rate(double v, const char *unit, char *out, size_t cap)
{
    static const char *const prefix[] = {"", "k", "M", "G", "T", "P"};
    int u = 0;
    while (u < 5 && v >= 999.5) {
        v /= 1e3;
        u++;
    }
    const char *fmt = v >= 99.95 ? "%.0f %s%s" : v >= 9.995 ? "%.1f %s%s" : "%.2f %s%s";
    gpo_snprintf(out, cap, fmt, v, prefix[u], unit);
}

static void throughput(const gpo_prof_row *r, char *out, size_t cap)
{
    char a[48] = "", b[48] = "";
    if (r->items_per_s >= 0)
        format_rate(r->items_per_s, "items/s", a, sizeof a);
    if (r->bytes_per_s >= 0)
        format_rate(r->bytes_per_s, "B/s", b, sizeof b);
    gpo_snprintf(out, cap, "%s%s%s", a, *a && *b ? ", " : "", b);
}

/* Display width: code points, not bytes (names are UTF-8). */
static size_t width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xc0) != 0x80;
    return w;
}

static void pad(gpo_sbuf *b, const char *s, size_t w, int right)
{
    size_t have = width(s);
    if (right)
        for (size_t i = have; i < w; i++)
            gpo_sbuf_append(b, " ");
    gpo_sbuf_append(b, s);
    if (!right)
        for (size_t i = have; i < w; i++)
            gpo_sbuf_append(b, " ");
}

#define NCOLS 10
static const char *const headers[NCOLS] = {"section", "clock", "count", "total", "mean",
                                           "p50",     "p95",   "max",   "share", "throughput"};

/* The notes under the table and in the JSON: the clocks, the tools, what
 * was left out. */
static void clock_note(const gpo_prof_snapshot *s, char *out, size_t cap)
{
    const gpuopt_profiler *p = s->p;
    if (p->timer.ops)
        gpo_snprintf(out, cap, "%s%s%s", p->device_clock, *s->device_note ? "; " : "",
                     s->device_note);
    else if (p->device_asked)
        gpo_snprintf(out, cap, "not used: %s", s->device_note);
    else
        gpo_snprintf(out, cap, "not asked for (no stream given)");
}

char *gpo_prof_summary_table(const gpo_prof_snapshot *s)
{
    gpo_prof_row *rows = NULL;
    uint32_t n = 0;
    if (gpo_prof_rows(s, &rows, &n))
        return NULL;
    char(*cells)[NCOLS][320] = calloc(n ? n : 1, sizeof *cells);
    if (!cells) {
        free(rows);
        gpo_fail(GPUOPT_ERR_NO_MEMORY, "profiler: out of memory writing the summary");
        return NULL;
    }
    size_t w[NCOLS];
    for (int c = 0; c < NCOLS; c++)
        w[c] = strlen(headers[c]);
    for (uint32_t i = 0; i < n; i++) {
        const gpo_prof_row *r = &rows[i];
        char(*row)[320] = cells[i];
        gpo_snprintf(row[0], 320, "%*s%s", (int)(2 * r->depth), "", r->name);
        gpo_strlcpy(row[1], r->count ? clock_words[r->clock] : "-", 320);
        gpo_snprintf(row[2], 320, "%" PRIu64, r->count);
        if (r->count) {
            gpo_prof_format_ns(r->total_ns, row[3], 320);
            gpo_prof_format_ns(r->mean_ns, row[4], 320);
            gpo_prof_format_ns(r->p50_ns, row[5], 320);
            gpo_prof_format_ns(r->p95_ns, row[6], 320);
            gpo_prof_format_ns(r->max_ns, row[7], 320);
        } else {
            for (int c = 3; c <= 7; c++)
                gpo_strlcpy(row[c], "-", 320);
        }
        if (r->share >= 0)
            gpo_snprintf(row[8], 320, "%.1f%%", 100.0 * r->share);
        else
            gpo_strlcpy(row[8], "-", 320);
        throughput(r, row[9], 320);
        for (int c = 0; c < NCOLS; c++)
            w[c] = width(row[c]) > w[c] ? width(row[c]) : w[c];
    }
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    for (uint32_t i = 0; i <= n; i++) {
        size_t start = b.len;
        for (int c = 0; c < NCOLS; c++) {
            pad(&b, i ? cells[i - 1][c] : headers[c], c == NCOLS - 1 ? 0 : w[c], c >= 2 && c <= 8);
            gpo_sbuf_append(&b, c == NCOLS - 1 ? "" : "  ");
        }
        /* No trailing blanks where the last columns are empty. */
        while (!b.failed && b.len > start && b.data[b.len - 1] == ' ')
            b.data[--b.len] = '\0';
        gpo_sbuf_append(&b, "\n");
    }
    if (!n)
        gpo_sbuf_append(&b, "(no section has ended)\n");
    char wall[32], note[1024];
    gpo_prof_format_ns(gpo_prof_wall_ns(s), wall, sizeof wall);
    gpo_sbuf_appendf(&b,
                     "\nwall time %s (first begin to last end, %d thread%s); shares are of the "
                     "parent, top-level ones of the wall time\n",
                     wall, (int)s->n_threads, s->n_threads == 1 ? "" : "s");
    gpo_sbuf_appendf(&b, "clock: host CLOCK_MONOTONIC; device: ");
    clock_note(s, note, sizeof note);
    gpo_sbuf_appendf(&b, "%s\n", note);
    const gpuopt_profiler *p = s->p;
    gpo_sbuf_append(&b, "vendor ranges:");
    if (!p->n_tools)
        gpo_sbuf_append(&b, " off");
    for (int i = 0; i < p->n_tools; i++)
        gpo_sbuf_appendf(&b, "%s %s %s (%s)", i ? ";" : "", p->tools[i].tool,
                         p->tools[i].attached ? "attached" : "not attached", p->tools[i].note);
    gpo_sbuf_append(&b, "\n");
    if (s->dropped)
        gpo_sbuf_appendf(&b, "%" PRIu64 " sections dropped after the first %" PRId64 " kept\n",
                         s->dropped, p->max_sections);
    if (s->nesting_errors)
        gpo_sbuf_appendf(&b,
                         "%" PRIu64 " nesting errors (an end without its begin, or of the "
                         "wrong section)\n",
                         s->nesting_errors);
    if (s->open)
        gpo_sbuf_appendf(&b, "%" PRId64 " section%s still open, not counted\n", s->open,
                         s->open == 1 ? "" : "s");
    free(cells);
    free(rows);
    char *out = gpo_sbuf_take(&b);
    if (!out)
        gpo_fail(GPUOPT_ERR_NO_MEMORY, "profiler: out of memory writing the summary");
    return out;
}

static void path_of(gpo_json *b, cJSON *o, const gpo_prof_snapshot *s, uint32_t node)
{
    const char *names[GPO_PROF_MAX_DEPTH + 1];
    int n = 0;
    for (int32_t k = (int32_t)node; k >= 0 && n <= GPO_PROF_MAX_DEPTH; k = s->nodes[k].parent)
        names[n++] = s->nodes[k].name;
    cJSON *a = gpo_json_array(b, o, "path");
    for (int i = n - 1; i >= 0; i--)
        gpo_json_str(b, a, NULL, names[i]);
}

char *gpo_prof_summary_json(const gpo_prof_snapshot *s)
{
    gpo_prof_row *rows = NULL;
    uint32_t n = 0;
    if (gpo_prof_rows(s, &rows, &n))
        return NULL;
    const gpuopt_profiler *p = s->p;
    gpo_json b = {0};
    char note[1024];
    cJSON *root = cJSON_CreateObject();
    b.failed = !root;
    gpo_json_str(&b, root, "gpuopt_version", GPUOPT_VERSION_STRING);
    gpo_json_str(&b, root, "device", *p->device_id ? p->device_id : NULL);
    cJSON *clock = gpo_json_object(&b, root, "clock");
    gpo_json_str(&b, clock, "host", "CLOCK_MONOTONIC");
    gpo_json_str(&b, clock, "device", p->timer.ops ? p->device_clock : NULL);
    clock_note(s, note, sizeof note);
    gpo_json_str(&b, clock, "device_note", p->timer.ops && !*s->device_note ? NULL : note);
    cJSON *tools = gpo_json_array(&b, root, "vendor_ranges");
    for (int i = 0; !b.failed && i < p->n_tools; i++) {
        cJSON *t = gpo_json_object(&b, tools, NULL);
        gpo_json_str(&b, t, "tool", p->tools[i].tool);
        gpo_json_bool(&b, t, "attached", p->tools[i].attached);
        gpo_json_str(&b, t, "note", p->tools[i].note);
    }
    gpo_json_num(&b, root, "wall_ns", gpo_prof_wall_ns(s));
    gpo_json_num(&b, root, "threads", s->n_threads);
    gpo_json_num(&b, root, "sections_kept", (double)s->n_events);
    gpo_json_num(&b, root, "sections_dropped", (double)s->dropped);
    gpo_json_num(&b, root, "nesting_errors", (double)s->nesting_errors);
    gpo_json_num(&b, root, "open_sections", (double)s->open);
    cJSON *secs = gpo_json_array(&b, root, "sections");
    for (uint32_t i = 0; !b.failed && i < n; i++) {
        const gpo_prof_row *r = &rows[i];
        cJSON *o = gpo_json_object(&b, secs, NULL);
        gpo_json_str(&b, o, "name", r->name);
        path_of(&b, o, s, r->node);
        gpo_json_num(&b, o, "depth", r->depth);
        gpo_json_str(&b, o, "clock", r->count ? clock_words[r->clock] : NULL);
        gpo_json_num(&b, o, "count", (double)r->count);
        gpo_json_num(&b, o, "total_ns", r->total_ns);
        gpo_json_num(&b, o, "mean_ns", r->mean_ns);
        gpo_json_num(&b, o, "p50_ns", r->p50_ns);
        gpo_json_num(&b, o, "p95_ns", r->p95_ns);
        gpo_json_num(&b, o, "max_ns", r->max_ns);
        gpo_json_num_or_null(&b, o, "share_of_parent", r->share, r->share >= 0);
        gpo_json_num(&b, o, "items", (double)r->items);
        gpo_json_num(&b, o, "bytes", (double)r->bytes);
        gpo_json_num_or_null(&b, o, "items_per_s", r->items_per_s, r->items_per_s >= 0);
        gpo_json_num_or_null(&b, o, "bytes_per_s", r->bytes_per_s, r->bytes_per_s >= 0);
    }
    char *out = b.failed ? NULL : cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    free(rows);
    if (!out)
        gpo_fail(GPUOPT_ERR_NO_MEMORY, "profiler: out of memory writing the summary");
    return out;
}
