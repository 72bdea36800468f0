/* The tuner's expression language: constraints ("TILE * VEC <= 64",
 * "N % TILE == 0") and sizes ("N / WPT", "ceildiv(M, TILE) * TILE").
 *
 * Values are int64. Operators, loosest first, as in C:
 *   c ? a : b      (right-associative)
 *   ||   &&        (short-circuit: the right side is not evaluated when
 *                   the left decides, so "N != 0 && M / N > 2" is safe)
 *   == !=   < <= > >=
 *   + -     * / %  (C semantics: division truncates toward zero)
 *   unary - + !
 * Functions: min(a, b, ...), max(a, b, ...), ceildiv(a, b) (the ceiling of
 * a / b), pow2(x) (1 when x is a positive power of two, else 0).
 * Literals are decimal or 0x-hexadecimal, at most INT64_MAX.
 *
 * A division or modulo by zero, and any overflow (including INT64_MIN / -1
 * and -INT64_MIN), makes the value "undefined": evaluation reports it and
 * the caller treats the configuration as illegal. Nothing is ever undefined
 * behaviour in C.
 *
 * Parsing compiles to a small stack program (no recursion at evaluation, so
 * "1+1+...+1" of any length is safe) and builds a canonical text: single
 * spaces around binary operators, no redundant parentheses, decimal
 * literals. Two expressions with the same syntax tree have the same
 * canonical text, whatever their spacing, parentheses or literal bases; the
 * text re-parses to the same tree. It is what goes into hashes. Both the
 * source and the canonical text are held to GPO_EXPR_MAX_TEXT: an
 * expression whose canonical text would be longer ("1+1+...", spaced out)
 * is refused, so the round trip always holds. */
#ifndef GPO_TUNE_EXPR_H
#define GPO_TUNE_EXPR_H

#include <stdint.h>

#include "gpuopt/gpuopt.h"

#define GPO_EXPR_MAX_TEXT 4096  /* characters of source */
#define GPO_EXPR_MAX_NESTING 64 /* parentheses, unary operators, calls, ?: */
#define GPO_EXPR_MAX_NAME 63    /* characters of a name */

typedef struct gpo_expr gpo_expr;

/* What a variable is bound to. */
enum { GPO_EXPR_UNBOUND = 0, GPO_EXPR_PARAM = 1, GPO_EXPR_SIZE = 2 };

/* Result of an evaluation. */
enum { GPO_EXPR_OK = 0, GPO_EXPR_UNDEFINED = 1 };

/* Parses `text`. A malformed expression is GPUOPT_ERR_INVALID_ARGUMENT with
 * a detail naming the expression, the column (1-based), what was found and
 * what was expected. */
gpuopt_status gpo_expr_parse(const char *text, gpo_expr **out);
void gpo_expr_destroy(gpo_expr *e);
gpuopt_status gpo_expr_clone(const gpo_expr *e, gpo_expr **out);

/* The canonical text, and the text as given. */
const char *gpo_expr_text(const gpo_expr *e);
const char *gpo_expr_source(const gpo_expr *e);

/* The distinct names the expression reads, in order of first use. */
int32_t gpo_expr_var_count(const gpo_expr *e);
const char *gpo_expr_var_name(const gpo_expr *e, int32_t i); /* NULL out of range */

/* Binds variable i to a parameter or a size slot. -1 when i or kind is
 * out of range. An unbound variable evaluates as undefined. */
int gpo_expr_bind(gpo_expr *e, int32_t i, int32_t kind, int32_t index);
int32_t gpo_expr_var_kind(const gpo_expr *e, int32_t i);
int32_t gpo_expr_var_index(const gpo_expr *e, int32_t i);

/* Evaluates with parameter and size values (an index outside either array
 * is undefined, never a read out of bounds). GPO_EXPR_OK with *out set, or
 * GPO_EXPR_UNDEFINED. A NULL expression or out is undefined too. */
int gpo_expr_eval(const gpo_expr *e, const int64_t *params, int32_t nparams, const int64_t *sizes,
                  int32_t nsizes, int64_t *out);

#endif
