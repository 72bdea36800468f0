/* Tune specs (tools/gpuopt/tune_spec.h) into spaces: any text either loads
 * with a message-free success or fails with a message naming the file; a
 * loaded spec builds its space or says why, and the space is counted with
 * a bounded walk and described canonically. Relative file names resolve in
 * examples/tuning (the kernels the seeds name). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "tune/space.h"
#include "tune_spec.h"

#ifndef GPO_EXAMPLES_DIR
#error "GPO_EXAMPLES_DIR must name examples/tuning"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    char *text = fz_text(data, size);
    char err[1024] = "";
    tune_spec *s = tune_spec_parse(text, "fuzz.json", GPO_EXAMPLES_DIR, err, sizeof err);
    if (!s) {
        fz_check(strncmp(err, "fuzz.json", 9) == 0, "a refusal does not name the file: '%s'", err);
        free(text);
        return 0;
    }
    fz_check(s->n_defaults == 0 || s->n_defaults == s->n_params, "%d defaults for %d parameters",
             (int)s->n_defaults, (int)s->n_params);
    gpuopt_space *space = NULL;
    if (tune_spec_space(s, &space, err, sizeof err) == GPUOPT_OK) {
        uint64_t count = 0;
        int exact = 0;
        gpo_space_count_legal(space, 10000, 20000, &count, &exact);
        char *canon = NULL;
        if (gpo_space_canonical(space, &canon) == GPUOPT_OK)
            free(canon);
        char sizes[256];
        tune_spec_sizes_text(s, sizes, sizeof sizes);
        gpuopt_space_destroy(space);
    } else {
        fz_check(space == NULL && strncmp(err, "fuzz.json", 9) == 0, "a space that failed: '%s'",
                 err);
    }
    tune_spec_free(s);
    free(text);
    return 0;
}
