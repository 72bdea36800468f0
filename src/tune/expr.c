/* The expression language (expr.h): a recursive-descent parser in one
 * pass, emitting the stack program and the canonical text as it goes, and
 * the evaluator, a loop over that program (no recursion). */
#include "tune/expr.h"

#include <assert.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util/detail.h"
#include "util/strutil.h"

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

/* Binding strength, loosest first; used to decide where the canonical text
 * needs parentheses. */
enum { P_COND = 1, P_OR, P_AND, P_EQ, P_REL, P_ADD, P_MUL, P_UNARY, P_ATOM };

typedef enum tok {
    T_END,
    T_NUM,
    T_NAME,
    T_LPAREN,
    T_RPAREN,
    T_COMMA,
    T_PLUS,
    T_MINUS,
    T_STAR,
    T_SLASH,
    T_PERCENT,
    T_LT,
    T_LE,
    T_GT,
    T_GE,
    T_EQ,
    T_NE,
    T_AND,
    T_OR,
    T_NOT,
    T_QUESTION,
    T_COLON,
    T_BAD
} tok;

typedef struct parser {
    const char *src;
    size_t pos;
    tok t;
    size_t start, len;
    int64_t number;
    int nesting;
    int failed;
    expr_instr *code;
    int32_t ncode;
    size_t cap, capvars;
    int depth, max_depth;
    expr_var *vars;
    int32_t nvars;
} parser;

/* A piece of canonical text and how tightly it binds. */
typedef struct piece {
    gpo_sbuf text;
    int prec;
} piece;

static const struct {
    tok t;
    const char *text;
    expr_op code;
    int prec;
} binary_ops[] = {
    {T_OR, "||", OP_OR_JUMP, P_OR},  {T_AND, "&&", OP_AND_JUMP, P_AND},
    {T_EQ, "==", OP_EQ, P_EQ},       {T_NE, "!=", OP_NE, P_EQ},
    {T_LT, "<", OP_LT, P_REL},       {T_LE, "<=", OP_LE, P_REL},
    {T_GT, ">", OP_GT, P_REL},       {T_GE, ">=", OP_GE, P_REL},
    {T_PLUS, "+", OP_ADD, P_ADD},    {T_MINUS, "-", OP_SUB, P_ADD},
    {T_STAR, "*", OP_MUL, P_MUL},    {T_SLASH, "/", OP_DIV, P_MUL},
    {T_PERCENT, "%", OP_MOD, P_MUL},
};

static const struct {
    const char *name;
    expr_op code;
    int min_args, max_args; /* max 0: any number >= min */
} functions[] = {
    {"min", OP_MIN, 2, 0},
    {"max", OP_MAX, 2, 0},
    {"ceildiv", OP_CEILDIV, 2, 2},
    {"pow2", OP_POW2, 1, 1},
};

/* ---- errors ------------------------------------------------------------ */

static void describe_token(const parser *p, char *out, size_t cap)
{
    if (p->t == T_END) {
        gpo_snprintf(out, cap, "end of text");
    } else if (p->t == T_BAD) {
        unsigned char c = (unsigned char)p->src[p->start];
        if (isprint(c))
            gpo_snprintf(out, cap, "'%c'", c);
        else
            gpo_snprintf(out, cap, "byte 0x%02x", c);
    } else {
        gpo_snprintf(out, cap, "'%.*s'", (int)(p->len > 40 ? 40 : p->len), p->src + p->start);
    }
}

static void fail_at(parser *p, size_t column, const char *what)
{
    if (p->failed)
        return;
    p->failed = 1;
    gpo_detail_set("expression '%.200s' at column %zu: %s", p->src, column + 1, what);
}

static void fail_expected(parser *p, const char *expected)
{
    char found[64];
    describe_token(p, found, sizeof found);
    char msg[256];
    const char *hint = "";
    if (p->t == T_BAD && p->src[p->start] == '=')
        hint = " (compare with ==)";
    else if (p->t == T_BAD && p->src[p->start] == '&')
        hint = " (logical and is &&)";
    else if (p->t == T_BAD && p->src[p->start] == '|')
        hint = " (logical or is ||)";
    gpo_snprintf(msg, sizeof msg, "found %s, expected %s%s", found, expected, hint);
    fail_at(p, p->start, msg);
}

/* ---- lexer ------------------------------------------------------------- */

static int name_char(int c, int first)
{
    return c == '_' || isalpha(c) || (!first && isdigit(c));
}

static void lex_number(parser *p)
{
    const char *s = p->src + p->pos;
    int base = 10;
    size_t i = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        i = 2;
    }
    uint64_t v = 0;
    size_t digits = 0;
    int overflow = 0;
    for (;; i++) {
        int c = (unsigned char)s[i], d;
        if (isdigit(c))
            d = c - '0';
        else if (base == 16 && isxdigit(c))
            d = tolower(c) - 'a' + 10;
        else
            break;
        if (v > ((uint64_t)INT64_MAX - (uint64_t)d) / (uint64_t)base)
            overflow = 1;
        else
            v = v * (uint64_t)base + (uint64_t)d;
        digits++;
    }
    p->t = T_NUM;
    p->len = i;
    p->number = (int64_t)v;
    if (name_char((unsigned char)s[i], 0)) {
        while (name_char((unsigned char)s[p->len], 0))
            p->len++;
        fail_at(p, p->start, "malformed number (a name cannot start with a digit)");
    } else if (base == 16 && digits == 0) {
        fail_at(p, p->start, "malformed number ('0x' needs hexadecimal digits)");
    } else if (overflow) {
        fail_at(p, p->start, "number larger than 9223372036854775807");
    }
}

static void lex(parser *p)
{
    while (p->src[p->pos] == ' ' || p->src[p->pos] == '\t' || p->src[p->pos] == '\n' ||
           p->src[p->pos] == '\r')
        p->pos++;
    p->start = p->pos;
    const char *s = p->src + p->pos;
    int c = (unsigned char)s[0];
    p->len = 1;
    if (c == '\0') {
        p->t = T_END;
        p->len = 0;
    } else if (isdigit(c)) {
        lex_number(p);
    } else if (name_char(c, 1)) {
        while (name_char((unsigned char)s[p->len], 0))
            p->len++;
        p->t = T_NAME;
        if (p->len > GPO_EXPR_MAX_NAME)
            fail_at(p, p->start, "name longer than 63 characters");
    } else {
        static const struct {
            const char *text;
            tok t;
        } punct[] = {
            {"<=", T_LE},   {">=", T_GE},    {"==", T_EQ},      {"!=", T_NE},     {"&&", T_AND},
            {"||", T_OR},   {"(", T_LPAREN}, {")", T_RPAREN},   {",", T_COMMA},   {"+", T_PLUS},
            {"-", T_MINUS}, {"*", T_STAR},   {"/", T_SLASH},    {"%", T_PERCENT}, {"<", T_LT},
            {">", T_GT},    {"!", T_NOT},    {"?", T_QUESTION}, {":", T_COLON},
        };
        p->t = T_BAD;
        for (size_t i = 0; i < sizeof punct / sizeof punct[0]; i++) {
            size_t n = strlen(punct[i].text);
            if (strncmp(s, punct[i].text, n) == 0) {
                p->t = punct[i].t;
                p->len = n;
                break;
            }
        }
    }
    p->pos = p->start + p->len;
}

/* ---- code emission ----------------------------------------------------- */

static int32_t emit(parser *p, expr_op code, int32_t arg, int64_t value, int stack_effect)
{
    if (p->failed)
        return -1;
    if (gpo_grow(&p->code, sizeof *p->code, (size_t)p->ncode, &p->cap, 32)) {
        p->failed = 2;
        gpo_detail_set("out of memory compiling an expression");
        return -1;
    }
    p->code[p->ncode] = (expr_instr){code, arg, value};
    p->depth += stack_effect;
    if (p->depth > p->max_depth)
        p->max_depth = p->depth;
    return p->ncode++;
}

static void patch(parser *p, int32_t at)
{
    if (!p->failed && at >= 0)
        p->code[at].arg = p->ncode;
}

static int32_t variable(parser *p, const char *name, size_t len)
{
    for (int32_t i = 0; i < p->nvars; i++)
        if (strlen(p->vars[i].name) == len && memcmp(p->vars[i].name, name, len) == 0)
            return i;
    int full = gpo_grow(&p->vars, sizeof *p->vars, (size_t)p->nvars, &p->capvars, 4);
    char *copy = malloc(len + 1);
    if (full || !copy) {
        free(copy);
        p->failed = 2;
        gpo_detail_set("out of memory compiling an expression");
        return -1;
    }
    memcpy(copy, name, len);
    copy[len] = '\0';
    p->vars[p->nvars] = (expr_var){copy, GPO_EXPR_UNBOUND, -1};
    return p->nvars++;
}

/* ---- canonical text ---------------------------------------------------- */

static void wrap(piece *x, int need)
{
    if (x->prec >= need)
        return;
    gpo_sbuf w;
    gpo_sbuf_init(&w);
    gpo_sbuf_appendf(&w, "(%s)", x->text.data ? x->text.data : "");
    if (x->text.failed)
        w.failed = 1;
    gpo_sbuf_free(&x->text);
    x->text = w;
    x->prec = P_ATOM;
}

static void join(piece *left, const char *op_text, piece *right, int prec)
{
    gpo_sbuf_appendf(&left->text, " %s %s", op_text, right->text.data ? right->text.data : "");
    if (right->text.failed)
        left->text.failed = 1;
    gpo_sbuf_free(&right->text);
    left->prec = prec;
}

/* ---- grammar ----------------------------------------------------------- */

static piece parse_cond(parser *p);

static int enter(parser *p)
{
    if (++p->nesting > GPO_EXPR_MAX_NESTING) {
        fail_at(p, p->start, "nested more than 64 levels deep");
        return 0;
    }
    return 1;
}

static piece parse_call(parser *p, size_t name_start, size_t name_len)
{
    piece out = {{0}, P_ATOM};
    gpo_sbuf_init(&out.text);
    int f = -1;
    for (int i = 0; i < (int)(sizeof functions / sizeof functions[0]); i++)
        if (strlen(functions[i].name) == name_len &&
            memcmp(functions[i].name, p->src + name_start, name_len) == 0)
            f = i;
    if (f < 0) {
        char msg[160];
        gpo_snprintf(msg, sizeof msg, "unknown function '%.*s' (known: min, max, ceildiv, pow2)",
                     (int)name_len, p->src + name_start);
        fail_at(p, name_start, msg);
        return out;
    }
    gpo_sbuf_appendf(&out.text, "%s(", functions[f].name);
    lex(p); /* past '(' */
    int args = 0;
    for (;;) {
        piece a = parse_cond(p);
        if (args > 0)
            gpo_sbuf_append(&out.text, ", ");
        gpo_sbuf_append(&out.text, a.text.data ? a.text.data : "");
        gpo_sbuf_free(&a.text);
        if (p->failed)
            return out;
        args++;
        /* min and max of more than two fold left. */
        if (args > 2 || (args == 2 && functions[f].max_args == 0))
            emit(p, functions[f].code, 0, 0, -1);
        if (p->t == T_RPAREN)
            break;
        if (p->t != T_COMMA) {
            fail_expected(p, "',' or ')'");
            return out;
        }
        lex(p);
    }
    if (args < functions[f].min_args || (functions[f].max_args && args > functions[f].max_args)) {
        char msg[128];
        int want = functions[f].min_args;
        gpo_snprintf(msg, sizeof msg, "%s takes %s%d argument%s, found %d", functions[f].name,
                     functions[f].max_args ? "" : "at least ", want, want == 1 ? "" : "s", args);
        fail_at(p, name_start, msg);
        return out;
    }
    if (functions[f].max_args != 0)
        emit(p, functions[f].code, 0, 0, 1 - args);
    gpo_sbuf_append(&out.text, ")");
    lex(p); /* past ')' */
    return out;
}

static piece parse_unary(parser *p)
{
    piece out = {{0}, P_ATOM};
    gpo_sbuf_init(&out.text);
    if (p->failed)
        return out;
    if (p->t == T_MINUS || p->t == T_PLUS || p->t == T_NOT) {
        tok t = p->t;
        if (!enter(p))
            return out;
        lex(p);
        piece x = parse_unary(p);
        p->nesting--;
        if (t == T_PLUS) /* no node: the canonical text drops it */
            return x;
        wrap(&x, P_UNARY);
        if (t == T_MINUS)
            emit(p, OP_NEG, 0, 0, 0);
        else if (t == T_NOT)
            emit(p, OP_NOT, 0, 0, 0);
        gpo_sbuf_appendf(&out.text, "%s%s", t == T_MINUS ? "-" : "!",
                         x.text.data ? x.text.data : "");
        out.prec = P_UNARY;
        gpo_sbuf_free(&x.text);
        return out;
    }
    if (p->t == T_NUM) {
        emit(p, OP_NUM, 0, p->number, 1);
        gpo_sbuf_appendf(&out.text, "%lld", (long long)p->number);
        lex(p);
    } else if (p->t == T_NAME) {
        size_t start = p->start, len = p->len;
        lex(p);
        if (p->t == T_LPAREN) {
            gpo_sbuf_free(&out.text);
            if (!enter(p))
                return out;
            out = parse_call(p, start, len);
            p->nesting--;
            return out;
        }
        int32_t v = variable(p, p->src + start, len);
        emit(p, OP_VAR, v, 0, 1);
        gpo_sbuf_appendf(&out.text, "%.*s", (int)len, p->src + start);
    } else if (p->t == T_LPAREN) {
        gpo_sbuf_free(&out.text);
        if (!enter(p))
            return out;
        lex(p);
        out = parse_cond(p);
        p->nesting--;
        if (!p->failed && p->t != T_RPAREN)
            fail_expected(p, "')' or an operator");
        lex(p);
    } else {
        fail_expected(p, "a number, a name, '(', '-' or '!'");
    }
    return out;
}

/* Left-associative binary levels, P_OR .. P_MUL. */
static piece parse_binary(parser *p, int prec)
{
    if (prec > P_MUL)
        return parse_unary(p);
    piece left = parse_binary(p, prec + 1);
    for (;;) {
        if (p->failed)
            return left;
        size_t k = 0;
        while (k < sizeof binary_ops / sizeof binary_ops[0] &&
               !(binary_ops[k].t == p->t && binary_ops[k].prec == prec))
            k++;
        if (k == sizeof binary_ops / sizeof binary_ops[0])
            return left;
        lex(p);
        wrap(&left, prec);
        int32_t jump = -1;
        if (binary_ops[k].code == OP_AND_JUMP || binary_ops[k].code == OP_OR_JUMP)
            jump = emit(p, binary_ops[k].code, 0, 0, -1);
        piece right = parse_binary(p, prec + 1);
        wrap(&right, prec + 1);
        if (jump >= 0) {
            emit(p, OP_BOOL, 0, 0, 0);
            patch(p, jump);
        } else {
            emit(p, binary_ops[k].code, 0, 0, -1);
        }
        join(&left, binary_ops[k].text, &right, prec);
    }
}

static piece parse_cond(parser *p)
{
    piece c = parse_binary(p, P_OR);
    if (p->failed || p->t != T_QUESTION)
        return c;
    wrap(&c, P_OR);
    if (!enter(p))
        return c;
    lex(p);
    int32_t to_else = emit(p, OP_JUMP_IF_ZERO, 0, 0, -1);
    piece a = parse_cond(p);
    int32_t to_end = emit(p, OP_JUMP, 0, 0, 0);
    p->depth--; /* the else branch starts from the same depth as the then branch */
    if (!p->failed && p->t != T_COLON)
        fail_expected(p, "':' or an operator");
    lex(p);
    patch(p, to_else);
    piece b = parse_cond(p);
    patch(p, to_end);
    p->nesting--;
    join(&c, "?", &a, P_COND);
    join(&c, ":", &b, P_COND);
    return c;
}

gpuopt_status gpo_expr_parse(const char *text, gpo_expr **out)
{
    gpuopt_status st = GPUOPT_OK;
    gpo_expr *e = NULL;
    parser p = {0};
    piece whole = {{0}, 0};
    gpo_sbuf_init(&whole.text);
    assert(text && out);
    *out = NULL;
    if (strlen(text) > GPO_EXPR_MAX_TEXT)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                        "expression '%.60s...' is longer than %d characters", text,
                        GPO_EXPR_MAX_TEXT);
    p.src = text;
    lex(&p);
    whole = parse_cond(&p);
    if (!p.failed && p.t != T_END)
        fail_expected(&p, p.t == T_RPAREN ? "end of text (unbalanced ')')"
                                          : "an operator or end of text");
    if (!p.failed && p.max_depth > EXPR_MAX_STACK)
        fail_at(&p, 0, "too complex (evaluation stack over 256 values)");
    /* The canonical text adds spaces around operators and spells literals
     * in decimal, so it can outgrow its source: past the limit it would no
     * longer parse, and the round trip expr.h promises would break. */
    if (!p.failed && !whole.text.failed && whole.text.len > GPO_EXPR_MAX_TEXT) {
        st = gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT,
                      "expression '%.60s...': its canonical text (operators spaced, literals "
                      "in decimal) is %zu characters, longer than %d",
                      text, whole.text.len, GPO_EXPR_MAX_TEXT);
        goto out;
    }
    if (p.failed) {
        st = p.failed == 2 ? GPUOPT_ERR_NO_MEMORY : GPUOPT_ERR_INVALID_ARGUMENT;
        goto out;
    }
    e = calloc(1, sizeof *e);
    if (!e) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory compiling an expression");
        goto out;
    }
    e->source = gpo_strdup(text);
    e->text = gpo_sbuf_take(&whole.text);
    e->code = p.code;
    e->ncode = p.ncode;
    e->vars = p.vars;
    e->nvars = p.nvars;
    p.code = NULL;
    p.vars = NULL;
    p.nvars = 0;
    if (!e->source || !e->text) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory compiling an expression");
        goto out;
    }
    *out = e;
    e = NULL;
out:
    gpo_sbuf_free(&whole.text);
    free(p.code);
    for (int32_t i = 0; i < p.nvars; i++)
        free(p.vars[i].name);
    free(p.vars);
    gpo_expr_destroy(e);
    return st;
}

void gpo_expr_destroy(gpo_expr *e)
{
    if (!e)
        return;
    for (int32_t i = 0; i < e->nvars; i++)
        free(e->vars[i].name);
    free(e->vars);
    free(e->code);
    free(e->text);
    free(e->source);
    free(e);
}

gpuopt_status gpo_expr_clone(const gpo_expr *e, gpo_expr **out)
{
    assert(e && out);
    *out = NULL;
    gpo_expr *c = NULL;
    gpuopt_status st = gpo_expr_parse(e->source, &c);
    if (st != GPUOPT_OK)
        return st;
    for (int32_t i = 0; i < e->nvars; i++)
        c->vars[i].kind = e->vars[i].kind, c->vars[i].index = e->vars[i].index;
    *out = c;
    return GPUOPT_OK;
}

/* ---- evaluation (a loop over the stack program, no recursion) and accessors ---- */

const char *gpo_expr_text(const gpo_expr *e)
{
    return e ? e->text : NULL;
}

const char *gpo_expr_source(const gpo_expr *e)
{
    return e ? e->source : NULL;
}

int32_t gpo_expr_var_count(const gpo_expr *e)
{
    return e ? e->nvars : 0;
}

const char *gpo_expr_var_name(const gpo_expr *e, int32_t i)
{
    return e && i >= 0 && i < e->nvars ? e->vars[i].name : NULL;
}

int gpo_expr_bind(gpo_expr *e, int32_t i, int32_t kind, int32_t index)
{
    if (!e || i < 0 || i >= e->nvars || kind < GPO_EXPR_UNBOUND || kind > GPO_EXPR_SIZE)
        return -1;
    e->vars[i].kind = kind;
    e->vars[i].index = index;
    return 0;
}

int32_t gpo_expr_var_kind(const gpo_expr *e, int32_t i)
{
    return e && i >= 0 && i < e->nvars ? e->vars[i].kind : GPO_EXPR_UNBOUND;
}

int32_t gpo_expr_var_index(const gpo_expr *e, int32_t i)
{
    return e && i >= 0 && i < e->nvars ? e->vars[i].index : -1;
}

/* ---- evaluation -------------------------------------------------------- */

static int ceildiv(int64_t a, int64_t b, int64_t *out)
{
    if (b == 0 || (a == INT64_MIN && b == -1))
        return GPO_EXPR_UNDEFINED;
    int64_t q = a / b;
    /* Truncation rounded toward zero; step up when the exact quotient is
     * positive and had a fraction. */
    if (a % b != 0 && ((a < 0) == (b < 0)))
        q++;
    *out = q;
    return GPO_EXPR_OK;
}

int gpo_expr_eval(const gpo_expr *e, const int64_t *params, int32_t nparams, const int64_t *sizes,
                  int32_t nsizes, int64_t *out)
{
    if (!e || !out)
        return GPO_EXPR_UNDEFINED;
    int64_t st[EXPR_MAX_STACK];
    int sp = 0;
    for (int32_t pc = 0; pc < e->ncode; pc++) {
        const expr_instr *in = &e->code[pc];
        int64_t a, b, r = 0;
        switch ((expr_op)in->op) {
        case OP_NUM: st[sp++] = in->value; continue;
        case OP_VAR: {
            const expr_var *v = &e->vars[in->arg];
            if (v->kind == GPO_EXPR_PARAM && params && v->index >= 0 && v->index < nparams)
                st[sp++] = params[v->index];
            else if (v->kind == GPO_EXPR_SIZE && sizes && v->index >= 0 && v->index < nsizes)
                st[sp++] = sizes[v->index];
            else
                return GPO_EXPR_UNDEFINED;
            continue;
        }
        case OP_NEG:
            if (st[sp - 1] == INT64_MIN)
                return GPO_EXPR_UNDEFINED;
            st[sp - 1] = -st[sp - 1];
            continue;
        case OP_NOT: st[sp - 1] = !st[sp - 1]; continue;
        case OP_BOOL: st[sp - 1] = st[sp - 1] != 0; continue;
        case OP_POW2:
            a = st[sp - 1];
            st[sp - 1] = a > 0 && (a & (a - 1)) == 0;
            continue;
        case OP_AND_JUMP:
            if (st[sp - 1] == 0)
                pc = in->arg - 1;
            else
                sp--;
            continue;
        case OP_OR_JUMP:
            if (st[sp - 1] != 0) {
                st[sp - 1] = 1;
                pc = in->arg - 1;
            } else {
                sp--;
            }
            continue;
        case OP_JUMP_IF_ZERO:
            if (st[--sp] == 0)
                pc = in->arg - 1;
            continue;
        case OP_JUMP: pc = in->arg - 1; continue;
        default: break;
        }
        b = st[--sp];
        a = st[sp - 1];
        switch ((expr_op)in->op) {
        case OP_ADD:
            if (__builtin_add_overflow(a, b, &r))
                return GPO_EXPR_UNDEFINED;
            break;
        case OP_SUB:
            if (__builtin_sub_overflow(a, b, &r))
                return GPO_EXPR_UNDEFINED;
            break;
        case OP_MUL:
            if (__builtin_mul_overflow(a, b, &r))
                return GPO_EXPR_UNDEFINED;
            break;
        case OP_DIV:
        case OP_MOD:
            if (b == 0 || (a == INT64_MIN && b == -1))
                return GPO_EXPR_UNDEFINED;
            r = in->op == OP_DIV ? a / b : a % b;
            break;
        case OP_CEILDIV:
            if (ceildiv(a, b, &r) != GPO_EXPR_OK)
                return GPO_EXPR_UNDEFINED;
            break;
        case OP_LT: r = a < b; break;
        case OP_LE: r = a <= b; break;
        case OP_GT: r = a > b; break;
        case OP_GE: r = a >= b; break;
        case OP_EQ: r = a == b; break;
        case OP_NE: r = a != b; break;
        case OP_MIN: r = a < b ? a : b; break;
        case OP_MAX: r = a > b ? a : b; break;
        default: return GPO_EXPR_UNDEFINED;
        }
        st[sp - 1] = r;
    }
    if (sp != 1)
        return GPO_EXPR_UNDEFINED;
    *out = st[0];
    return GPO_EXPR_OK;
}
