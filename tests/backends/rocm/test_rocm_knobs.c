/* The ROCm knob catalogue against its documentation, and the
 * HSA_OVERRIDE_GFX_VERSION advice table against the facts it rests on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arch/amd.h"
#include "rocm/rocm_rules_env.h"
#include "rocm_test.h"

static char *read_docs(void)
{
    FILE *f = fopen(GPO_FIXTURES_DIR "/../../docs/knobs.md", "rb");
    assert_non_null(f);
    char *text = calloc(1, 1 << 20);
    assert_non_null(text);
    size_t n = fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

static void every_rocm_knob_is_documented_in_the_rocm_section(void **state)
{
    char *docs = read_docs();
    char *section = strstr(docs, "\n## ROCm backend");
    (void)state;
    assert_non_null(section);
    char *next = strstr(section + 1, "\n## ");
    if (next)
        *next = '\0';
    for (size_t i = 0; i < gpo_backend_rocm.n_knobs; i++) {
        const gpo_knob_def *k = &gpo_backend_rocm.knobs[i];
        char cell[96];
        assert_int_equal(strncmp(k->name, "rocm.", 5), 0);
        assert_true(k->summary && k->summary[0]);
        snprintf(cell, sizeof cell, "| `%s` |", k->name);
        if (!strstr(section, cell))
            fail_msg("%s is not in the ROCm section of docs/knobs.md", k->name);
        if (k->env && !strstr(section, k->env))
            fail_msg("%s exports %s, which the ROCm section does not name", k->name, k->env);
    }
    /* The core knobs these rules set are in the table too. */
    assert_non_null(strstr(section, "| `launch.block_size` | int | 1 |"));
    assert_non_null(strstr(section, "| `launch.block_multiple` | int | 1 |"));
    free(docs);
}

static void the_unsafe_knobs_say_so_and_only_one_exports(void **state)
{
    (void)state;
    for (size_t i = 0; i < gpo_backend_rocm.n_knobs; i++) {
        const gpo_knob_def *k = &gpo_backend_rocm.knobs[i];
        if (strcmp(k->name, "rocm.gfx_override_advice") == 0) {
            assert_null(k->env); /* advice is never exported */
            assert_non_null(strstr(k->summary, "UNSAFE"));
        }
        if (strcmp(k->name, "rocm.hsa_override_gfx_version") == 0) {
            assert_string_equal(k->env, "HSA_OVERRIDE_GFX_VERSION");
            assert_non_null(strstr(k->summary, "UNSAFE"));
        }
    }
}

/* "10.3.0" -> "gfx1030": the value ROCr would report is the listed target. */
static void value_to_gfx(const char *value, char *out, size_t cap)
{
    unsigned major = 0, minor = 0, step = 0;
    assert_int_equal(sscanf(value, "%u.%u.%u", &major, &minor, &step), 3);
    assert_int_equal(gpo_arch_amd_gfx_from_version(major * 10000 + minor * 100 + step, out, cap),
                     0);
}

static void override_advice_covers_only_unlisted_targets_with_a_listed_twin(void **state)
{
    static const char *const advised[] = {"gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035",
                                          "gfx1036", "gfx1101", "gfx1102", "gfx1103", "gfx1150",
                                          "gfx1151", "gfx1152", "gfx1153"};
    /* Listed in ROCm 6.2's Linux matrix, data-centre parts, or without a
     * listed target of the same ISA: never advised. */
    static const char *const never[] = {"gfx1030", "gfx1100", "gfx942",  "gfx90a", "gfx908",
                                        "gfx906",  "gfx900",  "gfx90c",  "gfx803", "gfx1010",
                                        "gfx1012", "gfx1200", "gfx1201", "gfx950", "",
                                        "gfx",     "gfx10310"};
    (void)state;
    for (size_t i = 0; i < sizeof advised / sizeof advised[0]; i++) {
        const gpo_rocm_override *o = gpo_rocm_override_for(advised[i]);
        char as[16];
        gpo_arch_amd_info a, b;
        if (!o)
            fail_msg("%s should be advised", advised[i]);
        assert_string_equal(o->gfx, advised[i]);
        assert_true(strcmp(o->as, "gfx1030") == 0 || strcmp(o->as, "gfx1100") == 0);
        value_to_gfx(o->value, as, sizeof as);
        assert_string_equal(as, o->as);
        /* The same family in the architecture table (the same wave size,
         * matrix units and features). */
        assert_int_equal(gpo_arch_amd_lookup(o->gfx, &a), 0);
        assert_int_equal(gpo_arch_amd_lookup(o->as, &b), 0);
        assert_int_equal(a.wavefront, b.wavefront);
        assert_int_equal(a.matrix, b.matrix);
        assert_int_equal(a.features, b.features);
        assert_true(o->caveat && o->caveat[0]);
    }
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
        if (gpo_rocm_override_for(never[i]))
            fail_msg("%s must not be advised", never[i]);
    assert_null(gpo_rocm_override_for(NULL));
    /* A target ID with feature suffixes is its bare target. */
    assert_non_null(gpo_rocm_override_for("gfx1031:xnack-"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_rocm_knob_is_documented_in_the_rocm_section),
        cmocka_unit_test(the_unsafe_knobs_say_so_and_only_one_exports),
        cmocka_unit_test(override_advice_covers_only_unlisted_targets_with_a_listed_twin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
