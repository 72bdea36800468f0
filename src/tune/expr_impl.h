/* The compiled form of an expression, shared by the parser (expr.c) and
 * the evaluator (expr_eval.c). */
#ifndef GPO_TUNE_EXPR_IMPL_H
#define GPO_TUNE_EXPR_IMPL_H

#include "tune/expr.h"

/* The evaluator's stack holds at most this many values; nesting is bounded,
 * so only a pathological expression comes near it, and it is refused. */
#define EXPR_MAX_STACK 256

typedef enum expr_op {
    OP_NUM,
    OP_VAR,
    OP_NEG,
    OP_NOT,
    OP_BOOL,
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_DIV,
    OP_MOD,
    OP_LT,
    OP_LE,
    OP_GT,
    OP_GE,
    OP_EQ,
    OP_NE,
    OP_MIN,
    OP_MAX,
    OP_CEILDIV,
    OP_POW2,
    OP_AND_JUMP, /* top == 0: leave 0 and jump; else pop */
    OP_OR_JUMP,  /* top != 0: leave 1 and jump; else pop */
    OP_JUMP_IF_ZERO,
    OP_JUMP
} expr_op;

typedef struct expr_instr {
    int32_t op;
    int32_t arg; /* variable index or jump target */
    int64_t value;
} expr_instr;

typedef struct expr_var {
    char *name;
    int32_t kind;
    int32_t index;
} expr_var;

struct gpo_expr {
    char *source;
    char *text;
    expr_instr *code;
    int32_t ncode;
    expr_var *vars;
    int32_t nvars;
};

#endif
