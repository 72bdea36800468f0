/* What every CPU reader shares, below them all: the notes that record each
 * fallback taken, the /proc/cpuinfo text (read at most once per facts
 * read), its "key : value" line parser, and the parser of its flag lists.
 * Nothing here calls a reader. */
#ifndef GPO_CPU_PROCFS_H
#define GPO_CPU_PROCFS_H

#include <stddef.h>
#include <stdint.h>

#include "cpu/cpu_facts.h"

/* Appends a note ("; "-separated, truncated when full) and logs it at
 * `level`. */
void gpo_cpu_note(gpo_cpu_facts *f, const gpo_logger *log, int32_t level, const char *fmt, ...)
    GPO_PRINTF(4, 5);

/* /proc/cpuinfo of f's tree, read on first use and kept in f->cpuinfo.
 * Returns the read's status (the same one on later calls) with *text set,
 * or *text NULL on failure. gpo_cpu_facts_read releases it; a caller
 * running the readers one by one calls gpo_cpu_cpuinfo_release. */
gpuopt_status gpo_cpu_cpuinfo(const gpo_fs *fs, gpo_cpu_facts *f, const char **text);
void gpo_cpu_cpuinfo_release(gpo_cpu_facts *f);

/* Iterates the "key : value" lines of /proc/cpuinfo text: returns 1 with
 * the trimmed key and value (truncated to their caps), 0 at the end (or
 * for a NULL text). A blank line (between processors) comes back with an
 * empty key. */
int gpo_cpuinfo_next(const char **cursor, char *key, size_t kcap, char *val, size_t vcap);

/* The value of the first line called `key`. Returns 0, -1 when absent (or
 * when text is NULL). */
int gpo_cpuinfo_field(const char *text, const char *key, char *val, size_t vcap);

/* One ISA feature: its bit, its /proc/cpuinfo spelling, and the name shown
 * in details (NULL: the same as the flag; "": not shown, a baseline
 * feature every CPU of the architecture has). */
typedef struct gpo_isa_name {
    int32_t bit;
    const char *flag;
    const char *display;
} gpo_isa_name;

/* The feature bits named in a blank-separated list of flag names (the
 * /proc/cpuinfo "flags" / "Features" line), by a table's names. Unknown
 * names are skipped; NULL gives 0. */
uint64_t gpo_isa_from_names(const char *names, const gpo_isa_name *table, size_t n);

#endif
