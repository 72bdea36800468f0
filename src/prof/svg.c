/* The SVG picture of a profile (svg.h): SVG 1.1 with presentation
 * attributes only (no CSS, no script), so every viewer draws it the same.
 * Text is XML-escaped; names are UTF-8 without control characters (the
 * profiler refuses those), which XML 1.0 accepts as they are. */
#include "svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "summary.h"
#include "util/detail.h"
#include "util/strutil.h"

#define WIDTH 1200
#define LABEL_W 170 /* lane labels on the left */
#define PLOT_W (WIDTH - LABEL_W - 20)
#define ROW_H 18
#define MAX_ROWS 24 /* nesting levels drawn per lane */
#define CHAR_W 6.6  /* of the 11 px sans-serif, for fitting names in boxes */

static void xml_text(gpo_sbuf *b, const char *s)
{
    const char *run = s;
    for (; *s; s++) {
        const char *rep = *s == '&'   ? "&amp;"
                          : *s == '<' ? "&lt;"
                          : *s == '>' ? "&gt;"
                          : *s == '"' ? "&quot;"
                                      : NULL;
        if (!rep)
            continue;
        gpo_sbuf_appendf(b, "%.*s%s", (int)(s - run), run, rep);
        run = s + 1;
    }
    gpo_sbuf_append(b, run);
}

/* A colour per section, spread around the hue circle (golden angle), as
 * #rrggbb: SVG 1.1 takes CSS2 colours, which have no hsl(). */
static void colour(uint32_t node, int device, char out[8])
{
    double h = fmod(node * 137.508, 360.0) / 60.0, s = device ? 0.35 : 0.55,
           l = device ? 0.72 : 0.62;
    double c = (1 - fabs(2 * l - 1)) * s, x = c * (1 - fabs(fmod(h, 2.0) - 1)), m = l - c / 2;
    double rgb[3][6] = {{c, x, 0, 0, x, c}, {x, c, c, x, 0, 0}, {0, 0, x, c, c, x}};
    int k = (int)h % 6;
    gpo_snprintf(out, 8, "#%02x%02x%02x", (int)lround((rgb[0][k] + m) * 255),
                 (int)lround((rgb[1][k] + m) * 255), (int)lround((rgb[2][k] + m) * 255));
}

/* The first `chars` code points of `name`, with "…" when cut; "" when not
 * even two fit. */
static void fit(const char *name, double px, char *out, size_t cap)
{
    size_t n = 0, len = strlen(name);
    for (const char *s = name; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    size_t fits = px > 6 ? (size_t)((px - 6) / CHAR_W) : 0;
    if (fits >= n) {
        gpo_strlcpy(out, name, cap);
        return;
    }
    if (fits < 3) {
        out[0] = '\0';
        return;
    }
    size_t keep = fits - 1, i = 0, cps = 0;
    while (i < len && cps <= keep) {
        if (((unsigned char)name[i] & 0xc0) != 0x80 && ++cps > keep)
            break;
        i++;
    }
    gpo_snprintf(out, cap, "%.*s\xe2\x80\xa6", (int)i, name);
}

typedef struct layout {
    double t0, t1; /* host ns shown, since creation */
    double min_px; /* narrower boxes are not drawn */
    size_t omitted;
} layout;

static double x_of(const layout *L, double t)
{
    return LABEL_W + (t - L->t0) / (L->t1 - L->t0) * PLOT_W;
}

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x > y ? -1 : x < y;
}

/* Decides the time range and the narrowest box drawn. -1: out of memory. */
static int plan_layout(const gpo_prof_snapshot *s, layout *L)
{
    L->t0 = s->first_ns;
    L->t1 = s->last_ns;
    for (size_t i = 0; i < s->n_events; i++) {
        const gpo_prof_snap_event *e = &s->events[i];
        if (e->device_start_ns >= 0 && e->device_ns >= 0) {
            L->t0 = e->device_start_ns < L->t0 ? e->device_start_ns : L->t0;
            L->t1 = e->device_start_ns + e->device_ns > L->t1 ? e->device_start_ns + e->device_ns
                                                              : L->t1;
        }
    }
    if (!(L->t1 > L->t0))
        L->t1 = L->t0 + 1;
    L->min_px = 0.5;
    L->omitted = 0;
    size_t boxes = s->n_events + (size_t)s->device_timed;
    if (boxes <= GPO_PROF_SVG_MAX_BOXES)
        return 0;
    double *w = malloc(boxes * sizeof *w);
    if (!w)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < s->n_events; i++) {
        w[n++] = s->events[i].dur_ns / (L->t1 - L->t0) * PLOT_W;
        if (s->events[i].device_ns >= 0)
            w[n++] = s->events[i].device_ns / (L->t1 - L->t0) * PLOT_W;
    }
    qsort(w, n, sizeof *w, cmp_desc);
    /* The widest boxes are drawn (boxes as wide as the last one drawn are
     * too, so a tie may add a few). */
    if (w[GPO_PROF_SVG_MAX_BOXES - 1] > L->min_px)
        L->min_px = w[GPO_PROF_SVG_MAX_BOXES - 1];
    free(w);
    return 0;
}

static void box(gpo_sbuf *b, const gpo_prof_snapshot *s, const layout *L,
                const gpo_prof_snap_event *e, int device, double y)
{
    double start = device ? e->device_start_ns : e->start_ns;
    double dur = device ? e->device_ns : e->dur_ns;
    double x = x_of(L, start), w = dur / (L->t1 - L->t0) * PLOT_W;
    const char *name = s->nodes[e->node].name;
    char fill[8], text[GPO_PROF_MAX_NAME * 2], took[32];
    colour(e->node, device, fill);
    gpo_prof_format_ns(dur, took, sizeof took);
    gpo_sbuf_append(b, "<g><title>");
    xml_text(b, name);
    gpo_sbuf_appendf(b,
                     ": %s (%s)</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
                     "fill=\"%s\" stroke=\"#ffffff\" stroke-width=\"0.5\"/>",
                     took, device ? "device" : "host", x, y, w < 0.5 ? 0.5 : w, ROW_H - 2, fill);
    fit(name, w, text, sizeof text);
    if (*text) {
        gpo_sbuf_appendf(b, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + ROW_H - 6);
        xml_text(b, text);
        gpo_sbuf_append(b, "</text>");
    }
    gpo_sbuf_append(b, "</g>\n");
}

/* One lane: thread `t`'s sections (device ones when `device`). Returns the
 * lane's height; 0 when it has nothing to draw. */
static double lane(gpo_sbuf *b, const gpo_prof_snapshot *s, layout *L, int32_t t, int device,
                   double y)
{
    uint32_t rows = 0;
    int any = 0;
    for (size_t i = 0; i < s->n_events; i++) {
        const gpo_prof_snap_event *e = &s->events[i];
        if (e->thread != t || (device && !(e->device_ns >= 0 && e->device_start_ns >= 0)))
            continue;
        any = 1;
        uint32_t d = s->nodes[e->node].depth + 1;
        rows = d > rows ? d : rows;
    }
    if (!any)
        return 0;
    rows = rows > MAX_ROWS ? MAX_ROWS : rows;
    const gpo_prof_snap_thread *th = &s->threads[t];
    gpo_sbuf_appendf(b, "<text x=\"8\" y=\"%.1f\" font-weight=\"bold\">", y + 13);
    if (device)
        gpo_sbuf_appendf(b, "device (thread %d)", (int)t);
    else {
        gpo_sbuf_appendf(b, "thread %d", (int)t);
        if (*th->name) {
            gpo_sbuf_append(b, " ");
            xml_text(b, th->name);
        }
    }
    gpo_sbuf_appendf(b,
                     "</text>\n<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%u\" "
                     "fill=\"#f4f4f4\"/>\n",
                     LABEL_W, y, PLOT_W, rows * ROW_H);
    for (size_t i = 0; i < s->n_events; i++) {
        const gpo_prof_snap_event *e = &s->events[i];
        if (e->thread != t || (device && !(e->device_ns >= 0 && e->device_start_ns >= 0)))
            continue;
        double dur = device ? e->device_ns : e->dur_ns;
        uint32_t depth = s->nodes[e->node].depth;
        if (depth >= MAX_ROWS || dur / (L->t1 - L->t0) * PLOT_W < L->min_px) {
            L->omitted++;
            continue;
        }
        box(b, s, L, e, device, y + depth * ROW_H);
    }
    return rows * ROW_H + 12;
}

static void axis(gpo_sbuf *b, const layout *L, double y, double bottom)
{
    double span = L->t1 - L->t0, step = pow(10, floor(log10(span / 8)));
    if (span / step > 16)
        step *= 5;
    else if (span / step > 8)
        step *= 2;
    /* Round times from the first section's start, which is 0 on the axis. */
    for (double k = 0; L->t0 + k * step <= L->t1 + step * 1e-9; k++) {
        double x = x_of(L, L->t0 + k * step);
        char when[32];
        gpo_prof_format_ns(k * step, when, sizeof when);
        gpo_sbuf_appendf(
            b,
            "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"#dddddd\"/>"
            "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#666666\">%s"
            "</text>\n",
            x, y + 4, x, bottom, x, y, when);
    }
}

char *gpo_prof_svg(const gpo_prof_snapshot *s)
{
    gpo_prof_row *rows = NULL;
    uint32_t n_rows = 0;
    layout L;
    if (gpo_prof_rows(s, &rows, &n_rows))
        return NULL;
    if (plan_layout(s, &L)) {
        free(rows);
        gpo_fail(GPUOPT_ERR_NO_MEMORY, "profiler: out of memory drawing the profile");
        return NULL;
    }
    const gpuopt_profiler *p = s->p;
    gpo_sbuf body, b;
    gpo_sbuf_init(&body);
    gpo_sbuf_init(&b);
    char wall[32];
    gpo_prof_format_ns(gpo_prof_wall_ns(s), wall, sizeof wall);
    gpo_sbuf_appendf(&body,
                     "<text x=\"8\" y=\"22\" font-size=\"16\" font-weight=\"bold\">gpuopt "
                     "profile</text>\n<text x=\"8\" y=\"40\" fill=\"#444444\">wall time %s, "
                     "%d thread%s, %zu sections; clock: host%s",
                     wall, (int)s->n_threads, s->n_threads == 1 ? "" : "s", s->n_events,
                     p->timer.ops ? " and device (" : "");
    if (p->timer.ops) {
        xml_text(&body, p->device_clock);
        gpo_sbuf_append(&body, ")");
    }
    gpo_sbuf_append(&body, "</text>\n");

    /* The timeline: lanes first (their height decides the axis' length). */
    gpo_sbuf lanes;
    gpo_sbuf_init(&lanes);
    double y = 74;
    for (int32_t t = 0; t < s->n_threads; t++) {
        y += lane(&lanes, s, &L, t, 0, y);
        y += lane(&lanes, s, &L, t, 1, y);
    }
    if (s->n_events)
        axis(&body, &L, 64, y - 12);
    gpo_sbuf_append(&body, lanes.data ? lanes.data : "");
    body.failed |= lanes.failed;
    gpo_sbuf_free(&lanes);

    /* The summary: a bar per section, its length the section's total. */
    y += 24;
    gpo_sbuf_appendf(&body,
                     "<text x=\"8\" y=\"%.1f\" font-size=\"14\" font-weight=\"bold\">summary"
                     "</text>\n",
                     y);
    double longest = 0;
    for (uint32_t i = 0; i < n_rows; i++)
        longest = rows[i].total_ns > longest ? rows[i].total_ns : longest;
    for (uint32_t i = 0; i < n_rows; i++) {
        const gpo_prof_row *r = &rows[i];
        char fill[8], total[32], p50[32], p95[32];
        y += 20;
        colour(r->node, 0, fill);
        gpo_prof_format_ns(r->total_ns, total, sizeof total);
        gpo_prof_format_ns(r->p50_ns, p50, sizeof p50);
        gpo_prof_format_ns(r->p95_ns, p95, sizeof p95);
        gpo_sbuf_appendf(&body, "<text x=\"%u\" y=\"%.1f\">", 8 + 12 * r->depth, y);
        xml_text(&body, r->name);
        double w = longest > 0 ? r->total_ns / longest * 560 : 0;
        gpo_sbuf_appendf(&body,
                         "</text><rect x=\"%d\" y=\"%.1f\" width=\"%.2f\" height=\"14\" "
                         "fill=\"%s\"/><text x=\"%.2f\" y=\"%.1f\" fill=\"#333333\">%s, "
                         "%llu\xc3\x97, p50 %s, p95 %s",
                         LABEL_W + 110, y - 11, w, fill, LABEL_W + 110 + w + 6, y, total,
                         (unsigned long long)r->count, p50, p95);
        if (r->share >= 0)
            gpo_sbuf_appendf(&body, ", %.1f%% of %s", 100 * r->share,
                             r->parent >= 0 ? "parent" : "wall");
        gpo_sbuf_append(&body, "</text>\n");
    }
    if (!n_rows) {
        y += 20;
        gpo_sbuf_appendf(&body, "<text x=\"8\" y=\"%.1f\">no section has ended</text>\n", y);
    }
    /* What the picture leaves out, and the tools. */
    y += 28;
    gpo_sbuf_appendf(&body, "<text x=\"8\" y=\"%.1f\" fill=\"#666666\">vendor ranges:", y);
    if (!p->n_tools)
        gpo_sbuf_append(&body, " off");
    for (int i = 0; i < p->n_tools; i++)
        gpo_sbuf_appendf(&body, "%s %s %s", i ? ";" : "", p->tools[i].tool,
                         p->tools[i].attached ? "attached" : "not attached");
    if (L.omitted)
        gpo_sbuf_appendf(&body, "; %zu section boxes too narrow or too deep to draw", L.omitted);
    if (s->dropped)
        gpo_sbuf_appendf(&body, "; %llu sections dropped", (unsigned long long)s->dropped);
    if (s->nesting_errors)
        gpo_sbuf_appendf(&body, "; %llu nesting errors", (unsigned long long)s->nesting_errors);
    gpo_sbuf_append(&body, "</text>\n");
    if (*s->device_note) {
        y += 18;
        gpo_sbuf_appendf(&body, "<text x=\"8\" y=\"%.1f\" fill=\"#666666\">device: ", y);
        xml_text(&body, s->device_note);
        gpo_sbuf_append(&body, "</text>\n");
    }
    y += 16;

    gpo_sbuf_appendf(&b,
                     "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                     "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
                     "height=\"%.0f\" viewBox=\"0 0 %d %.0f\" font-family=\"sans-serif\" "
                     "font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" "
                     "fill=\"#ffffff\"/>\n",
                     WIDTH, ceil(y), WIDTH, ceil(y));
    gpo_sbuf_append(&b, body.data ? body.data : "");
    gpo_sbuf_append(&b, "</svg>\n");
    b.failed |= body.failed;
    gpo_sbuf_free(&body);
    free(rows);
    char *out = gpo_sbuf_take(&b);
    if (!out)
        gpo_fail(GPUOPT_ERR_NO_MEMORY, "profiler: out of memory drawing the profile");
    return out;
}
