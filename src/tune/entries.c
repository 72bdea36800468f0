/* Entry points by their language's marker: OpenCL C's `__kernel` (or
 * `kernel`), CUDA's and HIP's `__global__`; the name is the last identifier
 * before the parameter list, past attributes such as
 * `__attribute__((reqd_work_group_size(...)))` or `__launch_bounds__(...)`.
 * Comments, string and character literals and preprocessor lines are
 * skipped. */
#include <ctype.h>
#include <string.h>

#include "gpuopt/tune.h"
#include "tune/entries.h"
#include "util/strutil.h"

static const char *skip_noise(const char *p)
{
    for (;;) {
        while (isspace((unsigned char)*p))
            p++;
        if (p[0] == '/' && p[1] == '/') {
            p += strcspn(p, "\n");
        } else if (p[0] == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            p = end ? end + 2 : p + strlen(p);
        } else {
            return p;
        }
    }
}

/* Past a literal starting at p (a quote), escapes included. */
static const char *skip_literal(const char *p)
{
    char q = *p++;
    while (*p && *p != q)
        p += p[0] == '\\' && p[1] ? 2 : 1;
    return *p ? p + 1 : p;
}

/* Past the balanced parentheses starting at p ('('). */
static const char *skip_parens(const char *p)
{
    int depth = 0;
    do {
        if (*p == '"' || *p == '\'') {
            p = skip_literal(p);
            continue;
        }
        depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
        p++;
    } while (*p && depth > 0);
    return p;
}

static int is_marker(const char *w, size_t n, int32_t language)
{
    if (language == GPUOPT_LANG_OPENCL_C)
        return (n == 8 && !memcmp(w, "__kernel", 8)) || (n == 6 && !memcmp(w, "kernel", 6));
    return n == 10 && !memcmp(w, "__global__", 10);
}

static int is_attribute(const char *w, size_t n)
{
    return (n == 13 && !memcmp(w, "__attribute__", 13)) ||
           (n == 17 && !memcmp(w, "__launch_bounds__", 17));
}

static void add_name(char *names, size_t cap, const char *w, size_t n)
{
    size_t len = strlen(names);
    if (len + 4 >= cap || (len >= 3 && !strcmp(names + len - 3, "...")))
        return;
    if (len + n + 2 + 4 >= cap) /* room for ", ..." */
        gpo_snprintf(names + len, cap - len, "%s...", len ? ", " : "");
    else
        gpo_snprintf(names + len, cap - len, "%s%.*s", len ? ", " : "", (int)n, w);
}

int gpo_kernel_entries(const char *source, int32_t language, const char *entry, char *names,
                       size_t cap)
{
    int armed = 0, found = 0, line_start = 1;
    const char *last = NULL;
    size_t last_n = 0;
    if (cap)
        names[0] = '\0';
    for (const char *p = source; p && *p;) {
        const char *q = skip_noise(p);
        line_start = line_start || memchr(p, '\n', (size_t)(q - p)) != NULL;
        p = q;
        if (!*p)
            break;
        if (*p == '#' && line_start) { /* a preprocessor line, continuations included */
            while (*p && !(*p == '\n' && p[-1] != '\\'))
                p++;
            continue;
        }
        line_start = 0;
        if (*p == '"' || *p == '\'') {
            p = skip_literal(p);
        } else if (isalpha((unsigned char)*p) || *p == '_') {
            const char *w = p;
            while (isalnum((unsigned char)*p) || *p == '_')
                p++;
            size_t n = (size_t)(p - w);
            if (is_marker(w, n, language)) {
                armed = 1;
                last = NULL;
            } else if (armed) {
                last = w;
                last_n = n;
            }
        } else if (*p == '(' && armed && last && is_attribute(last, last_n)) {
            p = skip_parens(p);
            last = NULL;
        } else if (*p == '(' && armed && last) {
            add_name(names, cap, last, last_n);
            found = found || (strlen(entry) == last_n && !memcmp(entry, last, last_n));
            armed = 0;
            p++;
        } else {
            if (*p == ';' || *p == '{' || *p == '}')
                armed = 0;
            p++;
        }
    }
    return found;
}
