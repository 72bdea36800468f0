/* The constraint and size expression language: C semantics, undefined
 * instead of undefined behaviour, clear parse errors, canonical text, and
 * random input that never crashes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/detail.h"
#include "tune/expr.h"
#include "util/rng.h"

/* Parses, binds a, b, c, N to params 0..2 and size 0, evaluates. */
static int eval_text(const char *text, int64_t a, int64_t b, int64_t c, int64_t n, int64_t *out)
{
    gpo_expr *e = NULL;
    if (gpo_expr_parse(text, &e) != GPUOPT_OK)
        return -1;
    for (int32_t i = 0; i < gpo_expr_var_count(e); i++) {
        const char *v = gpo_expr_var_name(e, i);
        if (strcmp(v, "N") == 0)
            gpo_expr_bind(e, i, GPO_EXPR_SIZE, 0);
        else if (strlen(v) == 1 && v[0] >= 'a' && v[0] <= 'c')
            gpo_expr_bind(e, i, GPO_EXPR_PARAM, v[0] - 'a');
    }
    int64_t params[3] = {a, b, c}, sizes[1] = {n};
    int r = gpo_expr_eval(e, params, 3, sizes, 1, out);
    gpo_expr_destroy(e);
    return r;
}

static void evaluates_with_c_semantics(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int64_t want;
    } cases[] = {
        {"1 + 2 * 3", 7},
        {"(1 + 2) * 3", 9},
        {"-7 / 2", -3}, /* truncation toward zero */
        {"-7 % 2", -1},
        {"7 % -2", 1},
        {"10 - 4 - 3", 3}, /* left associative */
        {"a * b <= 64", 1},
        {"N % a == 0", 1},
        {"N % c == 0", 0},
        {"1 < 2 == 1", 1},
        {"!0 + !5", 1},
        {"-a", -8},
        {"+a", 8},
        {"--a", 8},
        {"a > b ? a : b", 8},
        {"0 ? 1 : 0 ? 2 : 3", 3}, /* right associative */
        {"min(a, b)", 4},
        {"max(a, b, c, 2)", 8},
        {"min(3, a, b, c)", 3},
        {"ceildiv(N, a)", 128},
        {"ceildiv(10, 4)", 3},
        {"ceildiv(-10, 4)", -2},
        {"ceildiv(10, -4)", -2},
        {"ceildiv(-10, -4)", 3},
        {"pow2(a) + pow2(c) + pow2(0) + pow2(-4) + pow2(1)", 2},
        {"0x10 + 0XfF", 271},
        {"a && b", 1},
        {"a && 0", 0},
        {"0 || c", 1},
        {"9223372036854775807", INT64_MAX},
        {"-9223372036854775807 - 1", INT64_MIN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t v = 12345;
        int r = eval_text(cases[i].text, 8, 4, 5, 1024, &v);
        if (r != GPO_EXPR_OK || v != cases[i].want)
            fail_msg("'%s': result %d value %lld, want %lld", cases[i].text, r, (long long)v,
                     (long long)cases[i].want);
    }
}

static void division_by_zero_and_overflow_are_undefined(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "1 / 0",
        "1 % 0",
        "a / (b - 4)",
        "9223372036854775807 + 1",
        "-9223372036854775807 - 2",
        "(-9223372036854775807 - 1) / -1",
        "(-9223372036854775807 - 1) % -1",
        "-(-9223372036854775807 - 1)",
        "4294967296 * 4294967296",
        "ceildiv(1, 0)",
        "ceildiv(-9223372036854775807 - 1, -1)",
        "min(1, 1 / 0)",
        "z + 1", /* unbound */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t v;
        int r = eval_text(cases[i], 8, 4, 5, 1024, &v);
        if (r != GPO_EXPR_UNDEFINED)
            fail_msg("'%s' should be undefined, got %d (%lld)", cases[i], r, (long long)v);
    }
}

static void short_circuit_never_evaluates_the_skipped_side(void **state)
{
    (void)state;
    int64_t v;
    assert_int_equal(eval_text("0 && 1 / 0", 0, 0, 0, 0, &v), GPO_EXPR_OK);
    assert_int_equal(v, 0);
    assert_int_equal(eval_text("1 || 1 / 0", 0, 0, 0, 0, &v), GPO_EXPR_OK);
    assert_int_equal(v, 1);
    assert_int_equal(eval_text("N != 0 && 100 / N > 2", 0, 0, 0, 0, &v), GPO_EXPR_OK);
    assert_int_equal(v, 0);
    assert_int_equal(eval_text("a ? 1 / 0 : 5", 0, 0, 0, 0, &v), GPO_EXPR_OK);
    assert_int_equal(v, 5);
    assert_int_equal(eval_text("a ? 5 : 1 / 0", 1, 0, 0, 0, &v), GPO_EXPR_OK);
    assert_int_equal(v, 5);
    assert_int_equal(eval_text("1 && 1 / 0", 0, 0, 0, 0, &v), GPO_EXPR_UNDEFINED);
}

static void malformed_expressions_say_where_what_and_what_was_expected(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *detail;
    } cases[] = {
        {"TILE*", "at column 6: found end of text, expected a number, a name, '(', '-' or '!'"},
        {"", "at column 1: found end of text, expected a number"},
        {"a = b", "at column 3: found '=', expected an operator or end of text (compare with ==)"},
        {"a & b", "(logical and is &&)"},
        {"a | b", "(logical or is ||)"},
        {"(a + b", "at column 7: found end of text, expected ')' or an operator"},
        {"a + b)", "at column 6: found ')', expected end of text (unbalanced ')')"},
        {"1 2", "at column 3: found '2', expected an operator or end of text"},
        {"a ? b", "expected ':' or an operator"},
        {"min(a)", "at column 1: min takes at least 2 arguments, found 1"},
        {"pow2(a, b)", "pow2 takes 1 argument, found 2"},
        {"ceildiv(a)", "ceildiv takes 2 arguments, found 1"},
        {"min(a b)", "found 'b', expected ',' or ')'"},
        {"foo(1)", "unknown function 'foo' (known: min, max, ceildiv, pow2)"},
        {"99999999999999999999", "number larger than 9223372036854775807"},
        {"0x", "'0x' needs hexadecimal digits"},
        {"12ab", "a name cannot start with a digit"},
        {"a @ b", "found '@'"},
        {"a \x01 b", "found byte 0x01"},
        {"a + \xc3\xa9", "found byte 0xc3"},
        {"a $", "found '$'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpo_expr *e = (gpo_expr *)&e;
        gpuopt_status st = gpo_expr_parse(cases[i].text, &e);
        if (st != GPUOPT_ERR_INVALID_ARGUMENT || e != NULL ||
            !strstr(gpo_detail_get(), cases[i].detail))
            fail_msg("'%s': status %d, detail '%s', want '%s'", cases[i].text, st, gpo_detail_get(),
                     cases[i].detail);
    }
    /* The expression itself is quoted in the detail. */
    gpo_expr *e;
    assert_int_equal(gpo_expr_parse("TILE * VEC <= ", &e), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpo_detail_get(), "expression 'TILE * VEC <= ' at column 15"));
}

static void limits_on_length_nesting_and_names_are_errors_not_crashes(void **state)
{
    (void)state;
    gpo_expr *e;
    char buf[GPO_EXPR_MAX_TEXT + 64];
    /* 100 nested parentheses. */
    memset(buf, '(', 100);
    buf[100] = '1';
    memset(buf + 101, ')', 100);
    buf[201] = '\0';
    assert_int_equal(gpo_expr_parse(buf, &e), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpo_detail_get(), "nested more than 64 levels"));
    /* 64 levels are fine. */
    memset(buf, '(', 60);
    buf[60] = '1';
    memset(buf + 61, ')', 60);
    buf[121] = '\0';
    assert_int_equal(gpo_expr_parse(buf, &e), GPUOPT_OK);
    gpo_expr_destroy(e);
    /* Unary chains count as nesting too. */
    memset(buf, '-', 200);
    strcpy(buf + 200, "1");
    assert_int_equal(gpo_expr_parse(buf, &e), GPUOPT_ERR_INVALID_ARGUMENT);
    /* Too long. */
    memset(buf, ' ', GPO_EXPR_MAX_TEXT + 1);
    buf[GPO_EXPR_MAX_TEXT + 1] = '\0';
    assert_int_equal(gpo_expr_parse(buf, &e), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpo_detail_get(), "longer than 4096"));
    /* Names of 63 characters are fine; 64 are not. */
    memset(buf, 'x', 63);
    buf[63] = '\0';
    assert_int_equal(gpo_expr_parse(buf, &e), GPUOPT_OK);
    gpo_expr_destroy(e);
    memset(buf, 'x', 64);
    buf[64] = '\0';
    assert_int_equal(gpo_expr_parse(buf, &e), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gpo_detail_get(), "longer than 63"));
}

/* Canonical text adds spaces around operators: "1+1+...+1" of 4095
 * characters would canonicalise to over 8000 and no longer re-parse. Such
 * an expression is refused, naming the limit, so every accepted
 * expression's canonical text parses back to itself. */
static void an_expression_whose_canonical_text_exceeds_the_limit_is_refused(void **state)
{
    (void)state;
    char buf[GPO_EXPR_MAX_TEXT + 1];
    size_t n = 0;
    while (n + 2 <= GPO_EXPR_MAX_TEXT)
        n += (size_t)sprintf(buf + n, n ? "+1" : "1");
    gpo_expr *e = NULL;
    assert_int_equal(gpo_expr_parse(buf, &e), GPUOPT_ERR_INVALID_ARGUMENT);
    assert_null(e);
    assert_non_null(strstr(gpo_detail_get(), "canonical text"));
    assert_non_null(strstr(gpo_detail_get(), "4096"));
    /* Spaced as the canonical text is, the longest chain that fits is fine
     * and round-trips. */
    n = 0;
    while (n + 4 <= GPO_EXPR_MAX_TEXT)
        n += (size_t)sprintf(buf + n, n ? " + 1" : "1");
    assert_int_equal(gpo_expr_parse(buf, &e), GPUOPT_OK);
    assert_string_equal(gpo_expr_text(e), buf);
    gpo_expr *again = NULL;
    assert_int_equal(gpo_expr_parse(gpo_expr_text(e), &again), GPUOPT_OK);
    assert_string_equal(gpo_expr_text(again), gpo_expr_text(e));
    gpo_expr_destroy(again);
    gpo_expr_destroy(e);
}

static void a_long_flat_chain_evaluates_without_recursion(void **state)
{
    (void)state;
    char buf[GPO_EXPR_MAX_TEXT + 1];
    size_t n = 0;
    /* 1000 terms: its canonical text (with spaces) is 3997 characters. */
    for (int i = 0; i < 1000; i++)
        n += (size_t)sprintf(buf + n, i ? "+1" : "1");
    int64_t v;
    assert_int_equal(eval_text(buf, 0, 0, 0, 0, &v), GPO_EXPR_OK);
    assert_int_equal(v, 1000);
    /* Deeply right-nested within the nesting limit also fits the stack. */
    n = 0;
    for (int i = 0; i < 60; i++)
        n += (size_t)sprintf(buf + n, "1-(");
    n += (size_t)sprintf(buf + n, "1");
    for (int i = 0; i < 60; i++)
        buf[n++] = ')';
    buf[n] = '\0';
    assert_int_equal(eval_text(buf, 0, 0, 0, 0, &v), GPO_EXPR_OK);
    assert_int_equal(v, 1);
}

static void canonical_text_ignores_spacing_parentheses_and_literal_base(void **state)
{
    (void)state;
    static const struct {
        const char *text, *canon;
    } cases[] = {
        {"TILE*VEC<=64", "TILE * VEC <= 64"},
        {"  ( TILE * VEC ) <= 0x40 ", "TILE * VEC <= 64"},
        {"((a))", "a"},
        {"a-(b-c)", "a - (b - c)"},
        {"(a-b)-c", "a - b - c"},
        {"(a+b)*c", "(a + b) * c"},
        {"a+(b*c)", "a + b * c"},
        {"-(a+b)", "-(a + b)"},
        {"+x", "x"},
        {"+(a+b)", "a + b"},
        {"- - 5", "--5"},
        {"a?b:c?d:e", "a ? b : c ? d : e"},
        {"(a?b:c)?d:e", "(a ? b : c) ? d : e"},
        {"a ? (b ? c : d) : e", "a ? b ? c : d : e"},
        {"!(a<b)", "!(a < b)"},
        {"min( a,b ,c)", "min(a, b, c)"},
        {"ceildiv(N,TILE)*TILE", "ceildiv(N, TILE) * TILE"},
        {"a||b&&c", "a || b && c"},
        {"(a||b)&&c", "(a || b) && c"},
        {"N%TILE==0&&TILE<=N", "N % TILE == 0 && TILE <= N"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpo_expr *e, *again;
        assert_int_equal(gpo_expr_parse(cases[i].text, &e), GPUOPT_OK);
        if (strcmp(gpo_expr_text(e), cases[i].canon) != 0)
            fail_msg("'%s' -> '%s', want '%s'", cases[i].text, gpo_expr_text(e), cases[i].canon);
        assert_string_equal(gpo_expr_source(e), cases[i].text);
        /* The canonical text is a fixed point. */
        assert_int_equal(gpo_expr_parse(gpo_expr_text(e), &again), GPUOPT_OK);
        assert_string_equal(gpo_expr_text(again), cases[i].canon);
        gpo_expr_destroy(again);
        gpo_expr_destroy(e);
    }
}

static void variables_are_listed_once_in_order_of_use(void **state)
{
    (void)state;
    gpo_expr *e, *c;
    assert_int_equal(gpo_expr_parse("N % TILE == 0 && TILE <= N && min(VEC, N)", &e), GPUOPT_OK);
    assert_int_equal(gpo_expr_var_count(e), 3);
    assert_string_equal(gpo_expr_var_name(e, 0), "N");
    assert_string_equal(gpo_expr_var_name(e, 1), "TILE");
    assert_string_equal(gpo_expr_var_name(e, 2), "VEC");
    assert_null(gpo_expr_var_name(e, 3));
    assert_null(gpo_expr_var_name(e, -1));
    assert_int_equal(gpo_expr_var_kind(e, 0), GPO_EXPR_UNBOUND);
    assert_int_equal(gpo_expr_bind(e, 0, GPO_EXPR_SIZE, 0), 0);
    assert_int_equal(gpo_expr_bind(e, 1, GPO_EXPR_PARAM, 0), 0);
    assert_int_equal(gpo_expr_bind(e, 2, GPO_EXPR_PARAM, 1), 0);
    assert_int_equal(gpo_expr_bind(e, 3, GPO_EXPR_PARAM, 1), -1);
    assert_int_equal(gpo_expr_bind(e, 0, 7, 1), -1);
    assert_int_equal(gpo_expr_var_kind(e, 1), GPO_EXPR_PARAM);
    assert_int_equal(gpo_expr_var_index(e, 2), 1);
    /* A clone keeps the bindings. */
    assert_int_equal(gpo_expr_clone(e, &c), GPUOPT_OK);
    int64_t params[2] = {16, 4}, sizes[1] = {64}, v;
    assert_int_equal(gpo_expr_eval(c, params, 2, sizes, 1, &v), GPO_EXPR_OK);
    assert_int_equal(v, 1);
    /* An index past the arrays given is undefined, never a wild read. */
    assert_int_equal(gpo_expr_eval(c, params, 1, sizes, 1, &v), GPO_EXPR_UNDEFINED);
    assert_int_equal(gpo_expr_eval(c, params, 2, NULL, 0, &v), GPO_EXPR_UNDEFINED);
    gpo_expr_destroy(c);
    gpo_expr_destroy(e);
}

static void readers_answer_neutrally_for_null(void **state)
{
    (void)state;
    gpo_expr *e = NULL;
    int64_t v;
    assert_int_equal(gpo_expr_eval(NULL, NULL, 0, NULL, 0, &v), GPO_EXPR_UNDEFINED);
    assert_int_equal(gpo_expr_parse("1", &e), GPUOPT_OK);
    assert_int_equal(gpo_expr_eval(e, NULL, 0, NULL, 0, NULL), GPO_EXPR_UNDEFINED);
    gpo_expr_destroy(e);
    assert_null(gpo_expr_text(NULL));
    assert_null(gpo_expr_source(NULL));
    assert_int_equal(gpo_expr_var_count(NULL), 0);
    assert_null(gpo_expr_var_name(NULL, 0));
    assert_int_equal(gpo_expr_bind(NULL, 0, GPO_EXPR_PARAM, 0), -1);
    assert_int_equal(gpo_expr_var_kind(NULL, 0), GPO_EXPR_UNBOUND);
    assert_int_equal(gpo_expr_var_index(NULL, 0), -1);
    gpo_expr_destroy(NULL);
}

/* A random well-formed expression (so the round trip below is exercised
 * on many shapes), written with random spacing and parentheses. */
static void gen(gpo_rng *rng, char *buf, size_t *n, size_t cap, int depth)
{
    static const char *const leaves[] = {"a", "b", "c", "N", "0", "1", "3", "0x10", "-2"};
    static const char *const ops[] = {
        "+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||"};
    if (*n + 64 >= cap)
        return;
    uint64_t kind = depth > 4 ? 0 : gpo_rng_below(rng, 7);
#define PUT(str) (*n += (size_t)snprintf(buf + *n, cap - *n, "%s", (str)))
    switch (kind) {
    case 0: PUT(leaves[gpo_rng_below(rng, sizeof leaves / sizeof leaves[0])]); break;
    case 1:
        PUT(gpo_rng_below(rng, 2) ? "-" : "!");
        gen(rng, buf, n, cap, depth + 1);
        break;
    case 2:
        PUT("(");
        gen(rng, buf, n, cap, depth + 1);
        PUT(")");
        break;
    case 3:
        gen(rng, buf, n, cap, depth + 1);
        PUT(" ? ");
        gen(rng, buf, n, cap, depth + 1);
        PUT(" : ");
        gen(rng, buf, n, cap, depth + 1);
        break;
    case 4: {
        static const char *const fns[] = {"min(", "max(", "ceildiv(", "pow2("};
        uint64_t f = gpo_rng_below(rng, 4);
        PUT(fns[f]);
        gen(rng, buf, n, cap, depth + 1);
        if (f < 3) {
            PUT(",");
            gen(rng, buf, n, cap, depth + 1);
        }
        PUT(")");
        break;
    }
    default:
        gen(rng, buf, n, cap, depth + 1);
        PUT(gpo_rng_below(rng, 2) ? " " : "");
        PUT(ops[gpo_rng_below(rng, sizeof ops / sizeof ops[0])]);
        PUT(gpo_rng_below(rng, 2) ? " " : "");
        gen(rng, buf, n, cap, depth + 1);
    }
#undef PUT
}

/* Random token soup and random bytes: parsing never crashes (ASan/UBSan
 * watch), and whatever parses re-parses from its canonical text to the
 * same text and the same value. */
static void random_input_never_crashes_and_canonical_text_round_trips(void **state)
{
    (void)state;
    static const char *const tokens[] = {
        "a",  "b",    "c",    "N",        "0",     "1",    "7",  "-1", "9223372036854775807",
        "+",  "-",    "*",    "/",        "%",     "<",    "<=", ">",  ">=",
        "==", "!=",   "&&",   "||",       "!",     "?",    ":",  "(",  ")",
        ",",  "min(", "max(", "ceildiv(", "pow2(", "0x7f", " ",  "=",  "&",
        "$",  "\xff",
    };
    gpo_rng rng;
    gpo_rng_seed(&rng, 42);
    int parsed = 0;
    for (int iter = 0; iter < 20000; iter++) {
        char buf[256];
        size_t n = 0;
        int len = 1 + (int)gpo_rng_below(&rng, 24);
        for (int t = 0; t < len; t++) {
            const char *tok = tokens[gpo_rng_below(&rng, sizeof tokens / sizeof tokens[0])];
            if (iter % 5 == 0) { /* raw bytes too */
                buf[n++] = (char)(1 + gpo_rng_below(&rng, 255));
                continue;
            }
            size_t k = strlen(tok);
            if (n + k + 1 >= sizeof buf)
                break;
            memcpy(buf + n, tok, k);
            n += k;
        }
        buf[n] = '\0';
        if (iter % 2 == 1) { /* well-formed, sometimes with one byte changed */
            n = 0;
            gen(&rng, buf, &n, sizeof buf, 0);
            if (n > 0 && iter % 10 == 1)
                buf[gpo_rng_below(&rng, n)] = (char)(1 + gpo_rng_below(&rng, 255));
        }
        gpo_expr *e = NULL;
        if (gpo_expr_parse(buf, &e) != GPUOPT_OK) {
            assert_null(e);
            assert_true(strlen(gpo_detail_get()) > 0);
            continue;
        }
        parsed++;
        int64_t params[3], sizes[1];
        for (int i = 0; i < 3; i++)
            params[i] = (int64_t)gpo_rng_below(&rng, 9) - 4;
        sizes[0] = (int64_t)gpo_rng_next(&rng);
        for (int32_t i = 0; i < gpo_expr_var_count(e); i++) {
            const char *v = gpo_expr_var_name(e, i);
            if (strcmp(v, "N") == 0)
                gpo_expr_bind(e, i, GPO_EXPR_SIZE, 0);
            else if (strlen(v) == 1 && v[0] >= 'a' && v[0] <= 'c')
                gpo_expr_bind(e, i, GPO_EXPR_PARAM, v[0] - 'a');
        }
        int64_t v1 = 0, v2 = 0;
        int r1 = gpo_expr_eval(e, params, 3, sizes, 1, &v1);
        gpo_expr *again;
        assert_int_equal(gpo_expr_parse(gpo_expr_text(e), &again), GPUOPT_OK);
        assert_string_equal(gpo_expr_text(again), gpo_expr_text(e));
        for (int32_t i = 0; i < gpo_expr_var_count(e); i++)
            gpo_expr_bind(again, i, gpo_expr_var_kind(e, i), gpo_expr_var_index(e, i));
        int r2 = gpo_expr_eval(again, params, 3, sizes, 1, &v2);
        assert_int_equal(r1, r2);
        if (r1 == GPO_EXPR_OK)
            assert_true(v1 == v2);
        gpo_expr_destroy(again);
        gpo_expr_destroy(e);
    }
    /* The soup is not all errors: the round trip was exercised. */
    assert_true(parsed > 5000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(evaluates_with_c_semantics),
        cmocka_unit_test(division_by_zero_and_overflow_are_undefined),
        cmocka_unit_test(short_circuit_never_evaluates_the_skipped_side),
        cmocka_unit_test(malformed_expressions_say_where_what_and_what_was_expected),
        cmocka_unit_test(limits_on_length_nesting_and_names_are_errors_not_crashes),
        cmocka_unit_test(a_long_flat_chain_evaluates_without_recursion),
        cmocka_unit_test(an_expression_whose_canonical_text_exceeds_the_limit_is_refused),
        cmocka_unit_test(canonical_text_ignores_spacing_parentheses_and_literal_base),
        cmocka_unit_test(variables_are_listed_once_in_order_of_use),
        cmocka_unit_test(readers_answer_neutrally_for_null),
        cmocka_unit_test(random_input_never_crashes_and_canonical_text_round_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
