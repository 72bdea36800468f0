/* The expression language (src/tune/expr.h): parse anything; what parses
 * has a canonical text that parses back to itself (the round trip expr.h
 * promises), and the two evaluate alike, as does a clone, for a few sets
 * of parameter values including the extremes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "tune/expr.h"
#include "util/detail.h"

static const int64_t values[] = {0, 1, -1, 2, 7, 64, -3, INT64_MAX, INT64_MIN, 1000000007};
#define NVALUES (int32_t)(sizeof values / sizeof values[0])

static void bind_all(gpo_expr *e)
{
    for (int32_t i = 0; i < gpo_expr_var_count(e); i++)
        gpo_expr_bind(e, i, i % 2 ? GPO_EXPR_SIZE : GPO_EXPR_PARAM, i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 3 * GPO_EXPR_MAX_TEXT)
        return 0;
    char *text = fz_text(data, size);
    gpo_expr *e = NULL;
    if (gpo_expr_parse(text, &e) != GPUOPT_OK) {
        fz_check(e == NULL, "a failed parse left an expression");
        fz_check(gpo_detail_get()[0] != '\0', "a failed parse has no detail: '%s'", text);
        free(text);
        return 0;
    }
    const char *canon = gpo_expr_text(e);
    fz_check(strlen(canon) <= GPO_EXPR_MAX_TEXT, "canonical text over the limit: '%s'", text);
    gpo_expr *again = NULL;
    fz_check(gpo_expr_parse(canon, &again) == GPUOPT_OK,
             "canonical text '%s' of '%s' does not parse: %s", canon, text, gpo_detail_get());
    fz_check(strcmp(gpo_expr_text(again), canon) == 0,
             "canonical text is not a fixed point: '%s' -> '%s'", canon, gpo_expr_text(again));
    fz_check(gpo_expr_var_count(again) == gpo_expr_var_count(e),
             "variables differ after the round trip");
    gpo_expr *copy = NULL;
    fz_check(gpo_expr_clone(e, &copy) == GPUOPT_OK, "clone failed: %s", gpo_detail_get());
    bind_all(e);
    bind_all(again);
    bind_all(copy);
    int32_t n = gpo_expr_var_count(e);
    int64_t params[64], sizes[64];
    for (int32_t set = 0; set < NVALUES; set++) {
        for (int32_t i = 0; i < 64; i++)
            params[i] = sizes[i] = values[(i + set) % NVALUES];
        int64_t a = 0, b = 0, c = 0;
        int ra = gpo_expr_eval(e, params, n < 64 ? n : 64, sizes, n < 64 ? n : 64, &a);
        int rb = gpo_expr_eval(again, params, n < 64 ? n : 64, sizes, n < 64 ? n : 64, &b);
        int rc = gpo_expr_eval(copy, params, n < 64 ? n : 64, sizes, n < 64 ? n : 64, &c);
        fz_check(ra == rb && ra == rc && (ra != GPO_EXPR_OK || (a == b && a == c)),
                 "'%s' and its canonical text '%s' evaluate differently (%d %lld, %d %lld)", text,
                 canon, ra, (long long)a, rb, (long long)b);
    }
    gpo_expr_destroy(copy);
    gpo_expr_destroy(again);
    gpo_expr_destroy(e);
    free(text);
    return 0;
}
