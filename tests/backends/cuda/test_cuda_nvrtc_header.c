/* Checks backends/cuda/nvrtc_api.h against the real nvrtc.h of the CUDA
 * toolkit on the build machine (built only where nvrtc.h exists): every
 * nvrtcResult value, the program handle's size, and every prototype of the
 * slice (with nvrtc.h's types substituted, so a wrong parameter type or
 * return type does not compile). At run time: the dlsym table names
 * exactly the slice's functions. */
#include <nvrtc.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cuda/nvrtc_api.h"

#define RESULT_CHECK_(name, value)                                                                 \
    _Static_assert(GPO_##name == (int)name && (value) == (int)name, #name " differs from "         \
                                                                          "nvrtc.h");
GPO_NVRTC_RESULTS(RESULT_CHECK_)

_Static_assert(sizeof(gpo_nvrtc_result) == sizeof(nvrtcResult), "nvrtcResult size");
_Static_assert(sizeof(gpo_nvrtc_program) == sizeof(nvrtcProgram), "nvrtcProgram size");

/* From here on the slice's type names mean nvrtc.h's types. */
#define gpo_nvrtc_result nvrtcResult
#define gpo_nvrtc_program nvrtcProgram

#define PROTO_CHECK_(name, required, ret, params)                                                  \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&name), ret(*) params),                 \
                   #name " prototype differs from nvrtc.h");
GPO_NVRTC_API(PROTO_CHECK_)

static const char *const names[] = {
#define NAME_(name, required, ret, params) #name,
    GPO_NVRTC_API(NAME_)
#undef NAME_
};

static void the_dlsym_table_names_the_slice_s_functions(void **state)
{
    (void)state;
    assert_int_equal(gpo_nvrtc_n_syms, sizeof names / sizeof names[0]);
    for (size_t i = 0; i < gpo_nvrtc_n_syms; i++)
        assert_string_equal(gpo_nvrtc_syms[i].symbol, names[i]);
}

static void result_names_come_from_the_slice(void **state)
{
    (void)state;
    assert_string_equal(gpo_nvrtc_result_name(NVRTC_ERROR_COMPILATION), "NVRTC_ERROR_COMPILATION");
    assert_string_equal(gpo_nvrtc_result_name(NVRTC_SUCCESS), "NVRTC_SUCCESS");
    assert_null(gpo_nvrtc_result_name(12345));
    assert_null(gpo_nvrtc_result_name(-1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_dlsym_table_names_the_slice_s_functions),
        cmocka_unit_test(result_names_come_from_the_slice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
