/* A profile in one of the public formats (render.c): the snapshot and the
 * writer of gpuopt_profile_format, for the public calls and the trace
 * file alike. */
#ifndef GPO_PROF_RENDER_H
#define GPO_PROF_RENDER_H

#include "record.h"

/* *out gets the profile of `p` in `format` (a valid gpuopt_profile_format),
 * malloc'd. `read_marks`: as gpo_prof_snapshot_take. */
gpuopt_status gpo_prof_render(gpuopt_profiler *p, int32_t format, int read_marks, char **out);

/* The format a file name asks for: GPUOPT_PROFILE_SVG for a name ending in
 * ".svg", else GPUOPT_PROFILE_TRACE. */
int32_t gpo_prof_format_of_path(const char *path);

#endif
