/* What the compiler doubles (NVRTC's, tests/fakes/cuda/fake_nvrtc.c, and
 * hiprtc's, tests/fakes/hip/fake_hiprtc.c) read from a source they do not
 * really compile. */
#ifndef GPO_FAKE_SOURCE_H
#define GPO_FAKE_SOURCE_H

#include <stddef.h>
#include <string.h>

/* The first `#error` line outside every #if/#ifdef/#ifndef block, or
 * NULL. The doubles do not preprocess: an #error inside a conditional is
 * taken as one the defines never reach (sgemm.cu guards its parameters so),
 * one outside fails as the compiler would. */
static inline const char *fake_unconditional_error(const char *source)
{
    int depth = 0;
    for (const char *line = source; line && *line;) {
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '#') {
            const char *hash = p++;
            while (*p == ' ' || *p == '\t')
                p++;
            if (strncmp(p, "if", 2) == 0)
                depth++; /* #if, #ifdef, #ifndef */
            else if (strncmp(p, "endif", 5) == 0 && depth > 0)
                depth--;
            else if (strncmp(p, "error", 5) == 0 && depth == 0)
                return hash;
        }
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return NULL;
}

#endif
