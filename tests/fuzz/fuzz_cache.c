/* The tuning cache's file parser, through the public cache API: the input
 * is a journal file in a cache directory, which gpuopt_cache_list and
 * gpuopt_cache_verify read line by line. Both must answer (a report, or a
 * status with a detail) and never crash, leak or rewrite the file.
 *
 * Kept to the public entry points on purpose: the cache is being redesigned
 * (issue 12, items 2, 7-9, 11), and these two calls are the file parser's
 * contract whatever its insides become. The file name is one the cache
 * takes for a journal ("<backend>_<arch>_<N>cu_<name>.jsonl"). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpuopt/gpuopt.h>

#include "fuzz_util.h"

static gpuopt_context *ctx;
static char dir[512];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(dir, sizeof dir, "%s", fz_scratch());
    gpuopt_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = GPUOPT_OPTION_IGNORE_ENV | GPUOPT_OPTION_IGNORE_CONFIG_FILE;
    o.backends = "cpu";
    o.cache_dir = dir;
    o.log_level = "off";
    if (gpuopt_context_create(&o, &ctx) != GPUOPT_OK)
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 20)
        return 0;
    const char *name = "cpu_x86-64-v4_2cu_fuzz.jsonl";
    const char *path = fz_write(0, name, data, size);
    if (!path)
        return 0;
    char *json = NULL;
    gpuopt_status st = gpuopt_cache_list(ctx, &json);
    fz_check((st == GPUOPT_OK) == (json != NULL), "list: status %d with output %p", (int)st,
             (void *)json);
    gpuopt_free(json);
    json = NULL;
    st = gpuopt_cache_verify(ctx, &json);
    fz_check((st == GPUOPT_OK) == (json != NULL), "verify: status %d with output %p", (int)st,
             (void *)json);
    gpuopt_free(json);
    /* Whatever verify made of it, the file is as written. */
    FILE *f = fopen(path, "rb");
    fz_check(f != NULL, "verify removed or renamed the journal");
    uint8_t *back = malloc(size + 1);
    size_t got = fread(back, 1, size + 1, f);
    fclose(f);
    fz_check(got == size && memcmp(back, data, size) == 0, "verify rewrote the journal");
    free(back);
    fz_empty_dir(dir);
    return 0;
}
