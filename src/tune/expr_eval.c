/* Expression evaluation (a loop over the stack program, no recursion) and
 * the accessors. */
#include "tune/expr_impl.h"

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
