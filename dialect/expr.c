/* expr.c — evaluation, constant folding and structural comparison of scalar expressions
 * (loop indices, peers, predicates, extents). Integer semantics follow nvFuser's int64 C++:
 * truncating division and remainder. */
#include "dialect/hir.h"

#include <math.h>
#include <string.h>

bool hir_scalar_is_literal(const hir_scalar *s)
{
    return s->kind == HIR_SC_INT || s->kind == HIR_SC_BOOL || s->kind == HIR_SC_FLOAT;
}

static int fail(char *msg, size_t len, const char *what, const hir_scalar *s)
{
    if (msg && len) {
        if (s && s->kind == HIR_SC_SYMBOL)
            snprintf(msg, len, "%s '%s%lld'", what, s->name, (long long)s->number);
        else if (s && s->kind == HIR_SC_NAMED)
            snprintf(msg, len, "%s '%s'", what, s->name);
        else
            snprintf(msg, len, "%s", what);
    }
    return -1;
}

static int eval_binary(int op, int64_t a, int64_t b, int64_t *r, char *msg, size_t len)
{
    switch (op) {
    case HIR_BIN_ADD: *r = (int64_t)((uint64_t)a + (uint64_t)b); return 0;
    case HIR_BIN_SUB: *r = (int64_t)((uint64_t)a - (uint64_t)b); return 0;
    case HIR_BIN_MUL: *r = (int64_t)((uint64_t)a * (uint64_t)b); return 0;
    case HIR_BIN_DIV:
    case HIR_BIN_MOD:
    case HIR_BIN_CEILDIV:
    case HIR_BIN_FMOD:
    case HIR_BIN_REMAINDER:
        if (b == 0)
            return fail(msg, len, "division by zero in index expression", NULL);
        if (a == INT64_MIN && b == -1)
            return fail(msg, len, "integer overflow in index expression", NULL);
        if (op == HIR_BIN_DIV)
            *r = a / b;
        else if (op == HIR_BIN_CEILDIV)
            *r = a / b + ((a % b != 0) && ((a < 0) == (b < 0)));
        else if (op == HIR_BIN_REMAINDER) {
            int64_t m = a % b;   /* Python-style: sign of divisor */
            *r = (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
        } else
            *r = a % b;
        return 0;
    case HIR_BIN_EQ: *r = a == b; return 0;
    case HIR_BIN_NE: *r = a != b; return 0;
    case HIR_BIN_LT: *r = a < b; return 0;
    case HIR_BIN_LE: *r = a <= b; return 0;
    case HIR_BIN_GT: *r = a > b; return 0;
    case HIR_BIN_GE: *r = a >= b; return 0;
    case HIR_BIN_AND: *r = a && b; return 0;
    case HIR_BIN_OR: *r = a || b; return 0;
    case HIR_BIN_BITAND: *r = a & b; return 0;
    case HIR_BIN_BITOR: *r = a | b; return 0;
    case HIR_BIN_XOR: *r = a ^ b; return 0;
    case HIR_BIN_SHL: *r = (b < 0 || b > 63) ? 0 : (int64_t)((uint64_t)a << b); return 0;
    case HIR_BIN_SHR: *r = (b < 0 || b > 63) ? (a < 0 ? -1 : 0) : a >> b; return 0;
    case HIR_BIN_MAX: case HIR_BIN_FMAX: *r = a > b ? a : b; return 0;
    case HIR_BIN_MIN: case HIR_BIN_FMIN: *r = a < b ? a : b; return 0;
    case HIR_BIN_GCD: {
        uint64_t x = a < 0 ? -(uint64_t)a : (uint64_t)a, y = b < 0 ? -(uint64_t)b : (uint64_t)b;
        while (y) {
            uint64_t t = x % y;
            x = y;
            y = t;
        }
        *r = (int64_t)x;
        return 0;
    }
    case HIR_BIN_POW: {
        if (b < 0)
            return fail(msg, len, "negative exponent in index expression", NULL);
        int64_t v = 1;
        for (int64_t i = 0; i < b && i < 64; i++)
            v = (int64_t)((uint64_t)v * (uint64_t)a);
        *r = v;
        return 0;
    }
    default:
        return fail(msg, len, "operator not supported on integers in index expression", NULL);
    }
}

static int eval_rec(const hir_scalar *s, const hir_scalar_env *env, int64_t *out, char *msg,
                    size_t len, int depth)
{
    if (depth > 10000)
        return fail(msg, len, "index expression nested too deeply", NULL);
    switch (s->kind) {
    case HIR_SC_INT:
    case HIR_SC_BOOL:
        *out = s->ival;
        return 0;
    case HIR_SC_FLOAT:
        if (!isfinite(s->fval) || s->fval != (double)(int64_t)s->fval)
            return fail(msg, len, "floating-point value used as an index", s);
        *out = (int64_t)s->fval;
        return 0;
    case HIR_SC_NAMED:
    case HIR_SC_SYMBOL:
        if (env && env->lookup && env->lookup(env->ctx, s, out) == 0)
            return 0;
        if (!s->def)
            return fail(msg, len, "unbound value", s);
        /* a symbol defined by an expression */
        __attribute__((fallthrough));
    case HIR_SC_ANON: {
        const hir_sexpr *e = s->def;
        if (!e)
            return fail(msg, len, "value without definition", s);
        int64_t a[3] = {0, 0, 0};
        for (int i = 0; i < e->nargs; i++)
            if (eval_rec(e->args[i], env, &a[i], msg, len, depth + 1))
                return -1;
        switch (e->kind) {
        case HIR_SX_BINARY:
            return eval_binary(e->op, a[0], a[1], out, msg, len);
        case HIR_SX_UNARY:
            switch (e->op) {
            case HIR_UN_NEG: *out = (int64_t)(0 - (uint64_t)a[0]); return 0;
            case HIR_UN_NOT: *out = !a[0]; return 0;
            case HIR_UN_BITNOT: *out = ~a[0]; return 0;
            case HIR_UN_ABS: *out = a[0] < 0 ? -a[0] : a[0]; return 0;
            case HIR_UN_SET: case HIR_UN_CEIL: case HIR_UN_FLOOR: case HIR_UN_ROUND:
            case HIR_UN_TRUNC:
                *out = a[0];
                return 0;
            default:
                return fail(msg, len, "operator not supported on integers in index expression", NULL);
            }
        case HIR_SX_TERNARY:
            if (e->op == HIR_TER_WHERE) {
                *out = a[0] ? a[1] : a[2];
                return 0;
            }
            if (e->op == HIR_TER_CLAMP) {
                *out = a[0] < a[1] ? a[1] : a[0] > a[2] ? a[2] : a[0];
                return 0;
            }
            return fail(msg, len, "operator not supported on integers in index expression", NULL);
        case HIR_SX_CALL:
            /* casts between integer types keep the value */
            if (e->nargs == 1) {
                *out = a[0];
                return 0;
            }
            return fail(msg, len, "unknown function in index expression", NULL);
        }
        return fail(msg, len, "bad expression", NULL);
    }
    }
    return fail(msg, len, "bad scalar", NULL);
}

int hir_scalar_eval(const hir_scalar *s, const hir_scalar_env *env, int64_t *out, char *msg,
                    size_t msglen)
{
    if (msg && msglen)
        msg[0] = 0;
    return eval_rec(s, env, out, msg, msglen, 0);
}

bool hir_scalar_const(const hir_scalar *s, int64_t *out)
{
    return hir_scalar_eval(s, NULL, out, NULL, 0) == 0;
}

bool hir_scalar_equal(const hir_scalar *a, const hir_scalar *b)
{
    if (a == b)
        return true;
    if (!a || !b)
        return false;
    bool ea = a->kind == HIR_SC_ANON || (a->kind == HIR_SC_SYMBOL && a->def);
    bool eb = b->kind == HIR_SC_ANON || (b->kind == HIR_SC_SYMBOL && b->def);
    if (ea && eb) {
        const hir_sexpr *x = a->def, *y = b->def;
        if (x->kind != y->kind || x->op != y->op || x->nargs != y->nargs)
            return false;
        if (x->kind == HIR_SX_CALL && x->fn != y->fn)
            return false;
        for (int i = 0; i < x->nargs; i++)
            if (!hir_scalar_equal(x->args[i], y->args[i]))
                return false;
        return true;
    }
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case HIR_SC_INT:
    case HIR_SC_BOOL:
        return a->ival == b->ival;
    case HIR_SC_FLOAT:
        return a->fval == b->fval && a->dtype == b->dtype;
    case HIR_SC_NAMED:
        return a->name == b->name;
    default:
        return false;   /* distinct symbols without definitions */
    }
}

bool hir_scalar_depends_on(const hir_scalar *s, const hir_scalar *leaf)
{
    if (!s)
        return false;
    if (s == leaf)
        return true;
    if (s->kind == HIR_SC_NAMED && leaf->kind == HIR_SC_NAMED && s->name == leaf->name)
        return true;
    if (!s->def)
        return false;
    for (int i = 0; i < s->def->nargs; i++)
        if (hir_scalar_depends_on(s->def->args[i], leaf))
            return true;
    return false;
}
