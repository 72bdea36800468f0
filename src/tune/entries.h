/* The kernel entry points a source defines, read from its text (entries.c),
 * so that an entry name the program lacks is refused with the names it has. */
#ifndef GPO_TUNE_ENTRIES_H
#define GPO_TUNE_ENTRIES_H

#include <stddef.h>
#include <stdint.h>

/* Lists in `names` (", "-separated, cut with "..." past `cap`) the entry
 * points `source` defines in `language` (gpuopt_kernel_language); 1 when
 * `entry` is one of them, else 0. Names a macro builds are not seen. */
int gpo_kernel_entries(const char *source, int32_t language, const char *entry, char *names,
                       size_t cap);

#endif
