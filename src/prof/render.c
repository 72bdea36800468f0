/* A profile in one of the public formats (render.h). */
#include "render.h"

#include <assert.h>
#include <string.h>

#include "snapshot.h"
#include "summary.h"
#include "svg.h"
#include "trace.h"
#include "util/strutil.h"

gpuopt_status gpo_prof_render(gpuopt_profiler *p, int32_t format, int read_marks, char **out)
{
    assert(p && out);
    *out = NULL;
    gpo_prof_snapshot s;
    gpuopt_status st = gpo_prof_snapshot_take(p, read_marks, &s);
    if (st)
        return st;
    switch (format) {
    case GPUOPT_PROFILE_TABLE: *out = gpo_prof_summary_table(&s); break;
    case GPUOPT_PROFILE_JSON: *out = gpo_prof_summary_json(&s); break;
    case GPUOPT_PROFILE_TRACE: *out = gpo_prof_trace_json(&s); break;
    case GPUOPT_PROFILE_SVG: *out = gpo_prof_svg(&s); break;
    default: assert(!"a format the caller checked"); break;
    }
    gpo_prof_snapshot_free(&s);
    return *out ? GPUOPT_OK : GPUOPT_ERR_NO_MEMORY;
}

int32_t gpo_prof_format_of_path(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && gpo_strcaseeq(path + n - 4, ".svg") ? GPUOPT_PROFILE_SVG
                                                         : GPUOPT_PROFILE_TRACE;
}
