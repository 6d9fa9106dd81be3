/* cpu_elementwise.c — unary/binary/ternary element-wise ops and reductions of the CPU
 * reference backend, over arbitrary strides (stride 0 = broadcast) and scalar operands.
 * Rows are loaded in chunks into double (or int64 when every input is an integer, so C
 * integer semantics hold exactly: truncating / and %, wrapping + - *), computed with the op
 * switch outside the element loop, and stored with one rounding to the output dtype. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dialect/intops.h"
#include "runner/backend/convert.h"
#include "runner/cpu/cpu_internal.h"

enum { CHUNK = 256 };

static int intlike(hir_dtype t) { return hir_dtype_is_int(t) || t == HIR_DT_BOOL; }

typedef struct ew_ctx {
    int arity;             /* 1..3 */
    int op;
    int dom_int;           /* compute in int64 */
    int cond_first;        /* where: operand 0 is a condition, loaded on its own */
    hir_dtype dt[4];       /* out, inputs */
    hir_diag *e;
} ew_ctx;

#define MAP(expr) for (int64_t i = 0; i < n; i++) r[i] = (expr)

/* The inverse of erf, which C's libm lacks: bisection of erf over [-6, 6] (erf(6) is 1 in
 * double) to the last bit of a double, ±inf at ±1 and NaN outside [-1, 1], as torch.erfinv.
 * Slow (about 64 erf calls) but exact to the double's resolution: this is the reference. */
static double erfinv(double y)
{
    if (isnan(y) || y < -1 || y > 1)
        return NAN;
    if (y == 1 || y == -1)
        return y * INFINITY;
    double lo = -6, hi = 6;
    for (int k = 0; k < 200 && lo < hi; k++) {
        double mid = 0.5 * (lo + hi);
        if (mid == lo || mid == hi)
            break;
        if (erf(mid) < y)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

static double erfcinv_d(double y) { return erfinv(1.0 - y); }
static double frac_d(double x) { return x - trunc(x); }   /* torch.frac: the sign of x */
static double signbit_d(double x) { return signbit(x) != 0; }
static double isfinite_d(double x) { return isfinite(x) != 0; }
static double isinf_d(double x) { return isinf(x) != 0; }
static double isnan_d(double x) { return isnan(x) != 0; }
static double isneginf_d(double x) { return isinf(x) && x < 0; }
static double isposinf_d(double x) { return isinf(x) && x > 0; }
static double isreal_d(double x) { (void)x; return 1; }   /* no complex values here */

/* The unary operators that are one function of a double (the rest of nvFuser's UnaryOpType,
 * dialect/defs/ewise.def): a table rather than more cases in un_f's switch. */
static double (*const un_fn[HIR_UN_COUNT])(double) = {
    [HIR_UN_ACOS] = acos,
    [HIR_UN_ACOSH] = acosh,
    [HIR_UN_ASIN] = asin,
    [HIR_UN_ASINH] = asinh,
    [HIR_UN_ATAN] = atan,
    [HIR_UN_ATANH] = atanh,
    [HIR_UN_COSH] = cosh,
    [HIR_UN_SINH] = sinh,
    [HIR_UN_TAN] = tan,
    [HIR_UN_EXP2] = exp2,
    [HIR_UN_EXPM1] = expm1,
    [HIR_UN_ERFC] = erfc,
    [HIR_UN_ERFINV] = erfinv,
    [HIR_UN_ERFCINV] = erfcinv_d,
    [HIR_UN_FRAC] = frac_d,
    [HIR_UN_LGAMMA] = lgamma,
    [HIR_UN_LOG10] = log10,
    [HIR_UN_LOG1P] = log1p,
    [HIR_UN_LOG2] = log2,
    [HIR_UN_SIGNBIT] = signbit_d,
    [HIR_UN_ISFINITE] = isfinite_d,
    [HIR_UN_ISINF] = isinf_d,
    [HIR_UN_ISNAN] = isnan_d,
    [HIR_UN_ISNEGINF] = isneginf_d,
    [HIR_UN_ISPOSINF] = isposinf_d,
    [HIR_UN_ISREAL] = isreal_d,
};

static int un_f(int op, double *r, const double *a, int64_t n, hir_diag *e)
{
    if ((unsigned)op < HIR_UN_COUNT && un_fn[op]) {
        double (*fn)(double) = un_fn[op];
        MAP(fn(a[i]));
        return 0;
    }
    switch ((hir_unary_op)op) {
    case HIR_UN_NEG: MAP(-a[i]); break;
    case HIR_UN_NOT: MAP(a[i] == 0); break;
    case HIR_UN_ABS: MAP(fabs(a[i])); break;
    case HIR_UN_EXP: MAP(exp(a[i])); break;
    case HIR_UN_LOG: MAP(log(a[i])); break;
    case HIR_UN_SQRT: MAP(sqrt(a[i])); break;
    case HIR_UN_RSQRT: MAP(1.0 / sqrt(a[i])); break;
    case HIR_UN_SIN: MAP(sin(a[i])); break;
    case HIR_UN_COS: MAP(cos(a[i])); break;
    case HIR_UN_TANH: MAP(tanh(a[i])); break;
    case HIR_UN_RELU: MAP(a[i] > 0 ? a[i] : (isnan(a[i]) ? a[i] : 0.0)); break;
    case HIR_UN_SIGMOID: MAP(1.0 / (1.0 + exp(-a[i]))); break;
    case HIR_UN_RECIPROCAL: MAP(1.0 / a[i]); break;
    case HIR_UN_CEIL: MAP(ceil(a[i])); break;
    case HIR_UN_FLOOR: MAP(floor(a[i])); break;
    case HIR_UN_ROUND: MAP(nearbyint(a[i])); break;   /* half to even, like torch.round */
    case HIR_UN_TRUNC: MAP(trunc(a[i])); break;
    case HIR_UN_ERF: MAP(erf(a[i])); break;
    case HIR_UN_SILU: MAP(a[i] / (1.0 + exp(-a[i]))); break;
    case HIR_UN_GELU: MAP(0.5 * a[i] * (1.0 + erf(a[i] * M_SQRT1_2))); break;
    case HIR_UN_SET: MAP(a[i]); break;
    default:
        return hir_fail(e, "%s: not defined on floating-point values",
                             hir_unary_op_name((hir_unary_op)op));
    }
    return 0;
}

static int un_i(int op, int64_t *r, const int64_t *a, int64_t n, hir_diag *e)
{
    switch ((hir_unary_op)op) {
    case HIR_UN_NEG: for (int64_t i = 0; i < n; i++) hir_iop_neg(a[i], &r[i]); break;
    case HIR_UN_NOT: MAP(a[i] == 0); break;
    case HIR_UN_BITNOT: MAP(~a[i]); break;
    case HIR_UN_ABS: for (int64_t i = 0; i < n; i++) hir_iop_abs(a[i], &r[i]); break;
    case HIR_UN_RELU: MAP(a[i] > 0 ? a[i] : 0); break;
    case HIR_UN_CEIL: case HIR_UN_FLOOR: case HIR_UN_ROUND: case HIR_UN_TRUNC:
    case HIR_UN_SET: MAP(a[i]); break;
    default:
        return hir_fail(e, "%s: internal error, no integer form",
                             hir_unary_op_name((hir_unary_op)op));
    }
    return 0;
}

static double py_rem(double a, double b)
{
    double m = fmod(a, b);
    if (m != 0 && ((m < 0) != (b < 0)))
        m += b;
    return m;
}

static int bin_f(int op, double *r, const double *a, const double *b, int64_t n, hir_diag *e)
{
    switch ((hir_binary_op)op) {
    case HIR_BIN_ADD: MAP(a[i] + b[i]); break;
    case HIR_BIN_SUB: MAP(a[i] - b[i]); break;
    case HIR_BIN_MUL: MAP(a[i] * b[i]); break;
    case HIR_BIN_DIV: MAP(a[i] / b[i]); break;
    case HIR_BIN_MOD: case HIR_BIN_FMOD: MAP(fmod(a[i], b[i])); break;  /* truncating, as C % */
    case HIR_BIN_EQ: MAP(a[i] == b[i]); break;
    case HIR_BIN_NE: MAP(a[i] != b[i]); break;
    case HIR_BIN_LT: MAP(a[i] < b[i]); break;
    case HIR_BIN_LE: MAP(a[i] <= b[i]); break;
    case HIR_BIN_GT: MAP(a[i] > b[i]); break;
    case HIR_BIN_GE: MAP(a[i] >= b[i]); break;
    case HIR_BIN_AND: MAP(a[i] != 0 && b[i] != 0); break;
    case HIR_BIN_OR: MAP(a[i] != 0 || b[i] != 0); break;
    /* max/min propagate NaN (torch.maximum); fmax/fmin ignore it (C fmax) */
    case HIR_BIN_MAX: MAP(isnan(a[i]) || isnan(b[i]) ? NAN : (a[i] > b[i] ? a[i] : b[i])); break;
    case HIR_BIN_MIN: MAP(isnan(a[i]) || isnan(b[i]) ? NAN : (a[i] < b[i] ? a[i] : b[i])); break;
    case HIR_BIN_FMAX: MAP(fmax(a[i], b[i])); break;
    case HIR_BIN_FMIN: MAP(fmin(a[i], b[i])); break;
    case HIR_BIN_POW: MAP(pow(a[i], b[i])); break;
    case HIR_BIN_ATAN2: MAP(atan2(a[i], b[i])); break;
    case HIR_BIN_REMAINDER: MAP(py_rem(a[i], b[i])); break;
    case HIR_BIN_CEILDIV: MAP(ceil(a[i] / b[i])); break;
    default:
        return hir_fail(e, "%s: not defined on floating-point operands",
                             hir_binary_op_name((hir_binary_op)op));
    }
    return 0;
}

/* The integer semantics of dialect/intops.h, element by element: wrapped values are kept,
 * division by zero (and pow(0, negative)) is an error. */
static int bin_iop(int (*f)(int64_t, int64_t, int64_t *), hir_binary_op o, int64_t *r,
                   const int64_t *a, const int64_t *b, int64_t n, hir_diag *e)
{
    int st = 0;
    for (int64_t i = 0; i < n; i++)
        st |= f(a[i], b[i], &r[i]);
    if (st & HIR_IOP_DIV0)
        return hir_fail(e, "%s: integer division by zero", hir_binary_op_name(o));
    return 0;
}

static int bin_i(int op, int64_t *r, const int64_t *a, const int64_t *b, int64_t n, hir_diag *e)
{
    hir_binary_op o = (hir_binary_op)op;
    switch (o) {
    case HIR_BIN_ADD: return bin_iop(hir_iop_add, o, r, a, b, n, e);
    case HIR_BIN_SUB: return bin_iop(hir_iop_sub, o, r, a, b, n, e);
    case HIR_BIN_MUL: return bin_iop(hir_iop_mul, o, r, a, b, n, e);
    case HIR_BIN_DIV: return bin_iop(hir_iop_div, o, r, a, b, n, e);
    case HIR_BIN_MOD: case HIR_BIN_FMOD: return bin_iop(hir_iop_mod, o, r, a, b, n, e);
    case HIR_BIN_REMAINDER: return bin_iop(hir_iop_remainder, o, r, a, b, n, e);
    case HIR_BIN_CEILDIV: return bin_iop(hir_iop_ceildiv, o, r, a, b, n, e);
    case HIR_BIN_SHL: return bin_iop(hir_iop_shl, o, r, a, b, n, e);
    case HIR_BIN_SHR: return bin_iop(hir_iop_shr, o, r, a, b, n, e);
    case HIR_BIN_POW: return bin_iop(hir_iop_pow, o, r, a, b, n, e);
    case HIR_BIN_GCD: return bin_iop(hir_iop_gcd, o, r, a, b, n, e);
    case HIR_BIN_EQ: MAP(a[i] == b[i]); break;
    case HIR_BIN_NE: MAP(a[i] != b[i]); break;
    case HIR_BIN_LT: MAP(a[i] < b[i]); break;
    case HIR_BIN_LE: MAP(a[i] <= b[i]); break;
    case HIR_BIN_GT: MAP(a[i] > b[i]); break;
    case HIR_BIN_GE: MAP(a[i] >= b[i]); break;
    case HIR_BIN_AND: MAP(a[i] != 0 && b[i] != 0); break;
    case HIR_BIN_OR: MAP(a[i] != 0 || b[i] != 0); break;
    case HIR_BIN_BITAND: MAP(a[i] & b[i]); break;
    case HIR_BIN_BITOR: MAP(a[i] | b[i]); break;
    case HIR_BIN_XOR: MAP(a[i] ^ b[i]); break;
    case HIR_BIN_MAX: case HIR_BIN_FMAX: MAP(a[i] > b[i] ? a[i] : b[i]); break;
    case HIR_BIN_MIN: case HIR_BIN_FMIN: MAP(a[i] < b[i] ? a[i] : b[i]); break;
    default:
        return hir_fail(e, "%s: internal error, no integer form", hir_binary_op_name(o));
    }
    return 0;
}

static int ter_f(int op, double *r, const double *a, const double *b, const double *c,
                 int64_t n, hir_diag *e)
{
    switch ((hir_ternary_op)op) {
    case HIR_TER_WHERE: MAP(a[i] != 0 ? b[i] : c[i]); break;
    case HIR_TER_CLAMP:
        MAP(isnan(a[i]) ? a[i] : a[i] < b[i] ? b[i] : a[i] > c[i] ? c[i] : a[i]);
        break;
    case HIR_TER_LERP: MAP(a[i] + c[i] * (b[i] - a[i])); break;
    case HIR_TER_THRESHOLD: MAP(a[i] <= b[i] ? c[i] : a[i]); break;
    default:
        return hir_fail(e, "ternary op %d unknown", op);
    }
    return 0;
}

static int ter_i(int op, int64_t *r, const int64_t *a, const int64_t *b, const int64_t *c,
                 int64_t n, hir_diag *e)
{
    switch ((hir_ternary_op)op) {
    case HIR_TER_WHERE: MAP(a[i] != 0 ? b[i] : c[i]); break;
    case HIR_TER_CLAMP: MAP(a[i] < b[i] ? b[i] : a[i] > c[i] ? c[i] : a[i]); break;
    case HIR_TER_THRESHOLD: MAP(a[i] <= b[i] ? c[i] : a[i]); break;
    default:
        return hir_fail(e, "%s: internal error, no integer form",
                             hir_ternary_op_name((hir_ternary_op)op));
    }
    return 0;
}
#undef MAP

static int ew_row(void *vctx, char **p, const int64_t *st, int64_t n)
{
    ew_ctx *c = vctx;
    size_t es[4];
    for (int v = 0; v <= c->arity; v++)
        es[v] = hir_dtype_size(c->dt[v]);
    for (int64_t i0 = 0; i0 < n; i0 += CHUNK) {
        int64_t k = n - i0 < CHUNK ? n - i0 : CHUNK;
        int rc;
        if (c->dom_int) {
            int64_t in[3][CHUNK], r[CHUNK];
            for (int v = 1; v <= c->arity; v++)
                hir_load_i64_n(in[v - 1], p[v] + i0 * st[v] * (int64_t)es[v], c->dt[v], st[v], k);
            rc = c->arity == 1 ? un_i(c->op, r, in[0], k, c->e)
               : c->arity == 2 ? bin_i(c->op, r, in[0], in[1], k, c->e)
                               : ter_i(c->op, r, in[0], in[1], in[2], k, c->e);
            if (rc)
                return rc;
            cpu_store_i64(p[0] + i0 * st[0] * (int64_t)es[0], c->dt[0], st[0], r, k);
        } else {
            double in[3][CHUNK], r[CHUNK];
            for (int v = 1; v <= c->arity; v++)
                hir_load_f64_n(in[v - 1], p[v] + i0 * st[v] * (int64_t)es[v], c->dt[v], st[v], k);
            rc = c->arity == 1 ? un_f(c->op, r, in[0], k, c->e)
               : c->arity == 2 ? bin_f(c->op, r, in[0], in[1], k, c->e)
                               : ter_f(c->op, r, in[0], in[1], in[2], k, c->e);
            if (rc)
                return rc;
            cpu_store_f64(p[0] + i0 * st[0] * (int64_t)es[0], c->dt[0], st[0], r, k);
        }
    }
    return 0;
}

/* Turn operands into out-shaped views: a scalar becomes a stride-0 view of a local value. */
typedef struct ew_args {
    hir_view v[4];
    double sf[3];
    int64_t si[3];
} ew_args;

static int ew_prepare(ew_args *a, const hir_view *out, const hir_operand *const *ops, int n,
                      const char *name, hir_diag *e)
{
    if (cpu_check_view(out, name, e))
        return -1;
    a->v[0] = *out;
    for (int i = 0; i < n; i++) {
        if (!ops[i])
            return hir_fail(e, "%s: operand %d missing", name, i);
        if (ops[i]->is_scalar) {
            hir_view *s = &a->v[i + 1];
            memset(s, 0, sizeof *s);
            s->ndim = out->ndim;
            for (int d = 0; d < out->ndim; d++)
                s->shape[d] = out->shape[d];
            if (ops[i]->scalar_is_int) {
                a->si[i] = ops[i]->i;
                s->data = &a->si[i];
                s->dtype = HIR_DT_INT64;
            } else {
                a->sf[i] = ops[i]->f;
                s->data = &a->sf[i];
                s->dtype = HIR_DT_DOUBLE;
            }
            continue;
        }
        const hir_view *v = &ops[i]->view;
        if (cpu_check_view(v, name, e))
            return -1;
        if (v->ndim != out->ndim)
            return hir_fail(e, "%s: operand %d has rank %d, output %d", name, i, v->ndim,
                                 out->ndim);
        for (int d = 0; d < out->ndim; d++)
            if (v->shape[d] != out->shape[d] && !(v->shape[d] == 1 || v->stride[d] == 0))
                return hir_fail(e, "%s: operand %d extent %lld on axis %d, output %lld",
                                     name, i, (long long)v->shape[d], d,
                                     (long long)out->shape[d]);
        a->v[i + 1] = *v;
        /* a size-1 axis against a larger output is a broadcast: give it stride 0 */
        for (int d = 0; d < out->ndim; d++)
            if (a->v[i + 1].shape[d] != out->shape[d]) {
                a->v[i + 1].shape[d] = out->shape[d];
                a->v[i + 1].stride[d] = 0;
            }
    }
    return 0;
}

static int ew_run(ew_ctx *c, ew_args *a)
{
    const hir_view *vs[4];
    for (int v = 0; v <= c->arity; v++) {
        vs[v] = &a->v[v];
        c->dt[v] = a->v[v].dtype;
    }
    return cpu_for_rows(a->v[0].ndim, a->v[0].shape, c->arity + 1, vs, ew_row, c);
}

int cpu_unary(hir_backend *be, hir_stream *s, hir_unary_op op, const hir_view *out,
              const hir_operand *a, hir_diag *e)
{
    ew_args args;
    const hir_operand *ops[1] = {a};
    if ((unsigned)op >= HIR_UN_COUNT)
        return hir_fail(e, "unary op %d unknown", (int)op);
    if (ew_prepare(&args, out, ops, 1, hir_unary_op_name(op), e))
        return -1;
    int in_int = intlike(args.v[1].dtype);
    if (op == HIR_UN_BITNOT && !in_int)
        return hir_fail(e, "bitwise_not: not defined on floating-point values");
    ew_ctx c = {.arity = 1, .op = op, .e = e};
    c.dom_int = in_int && (op == HIR_UN_NEG || op == HIR_UN_NOT || op == HIR_UN_BITNOT ||
                           op == HIR_UN_ABS || op == HIR_UN_RELU || op == HIR_UN_SET ||
                           op == HIR_UN_CEIL || op == HIR_UN_FLOOR || op == HIR_UN_ROUND ||
                           op == HIR_UN_TRUNC);
    /* ~ on bool is logical not, as in torch */
    if (op == HIR_UN_BITNOT && args.v[1].dtype == HIR_DT_BOOL)
        c.op = HIR_UN_NOT;
    return ew_run(&c, &args);
}

int cpu_binary(hir_backend *be, hir_stream *s, hir_binary_op op, const hir_view *out,
               const hir_operand *a, const hir_operand *b, hir_diag *e)
{
    ew_args args;
    const hir_operand *ops[2] = {a, b};
    if ((unsigned)op >= HIR_BIN_COUNT)
        return hir_fail(e, "binary op %d unknown", (int)op);
    if (ew_prepare(&args, out, ops, 2, hir_binary_op_name(op), e))
        return -1;
    ew_ctx c = {.arity = 2, .op = op, .e = e};
    c.dom_int = intlike(args.v[1].dtype) && intlike(args.v[2].dtype) && op != HIR_BIN_ATAN2;
    return ew_run(&c, &args);
}

int cpu_ternary(hir_backend *be, hir_stream *s, hir_ternary_op op, const hir_view *out,
                const hir_operand *a, const hir_operand *b, const hir_operand *c3,
                hir_diag *e)
{
    ew_args args;
    const hir_operand *ops[3] = {a, b, c3};
    if ((unsigned)op >= HIR_TER_COUNT)
        return hir_fail(e, "ternary op %d unknown", (int)op);
    if (ew_prepare(&args, out, ops, 3, hir_ternary_op_name(op), e))
        return -1;
    ew_ctx c = {.arity = 3, .op = op, .e = e};
    /* where's condition is only tested against zero, so it does not pick the domain */
    int first = op == HIR_TER_WHERE ? 2 : 1;
    c.dom_int = op != HIR_TER_LERP;
    for (int v = first; v <= 3; v++)
        c.dom_int &= intlike(args.v[v].dtype);
    return ew_run(&c, &args);
}

/* ---------------------------------------------------------------- reductions */

typedef struct red_ctx {
    hir_reduce_op op;
    int dom_int;
    hir_dtype in_dt;
} red_ctx;

static int red_row(void *vctx, char **p, const int64_t *st, int64_t n)
{
    red_ctx *c = vctx;
    size_t es = hir_dtype_size(c->in_dt);
    for (int64_t i0 = 0; i0 < n; i0 += CHUNK) {
        int64_t k = n - i0 < CHUNK ? n - i0 : CHUNK;
        const char *src = p[1] + i0 * st[1] * (int64_t)es;
        if (c->dom_int) {
            int64_t x[CHUNK];
            int64_t *acc = (int64_t *)p[0] + i0 * st[0];
            hir_load_i64_n(x, src, c->in_dt, st[1], k);
            for (int64_t i = 0; i < k; i++) {
                int64_t *a = acc + i * st[0];
                switch (c->op) {
                case HIR_RED_SUM: *a = (int64_t)((uint64_t)*a + (uint64_t)x[i]); break;
                case HIR_RED_PROD: *a = (int64_t)((uint64_t)*a * (uint64_t)x[i]); break;
                case HIR_RED_MAX: case HIR_RED_FMAX: if (x[i] > *a) *a = x[i]; break;
                default: if (x[i] < *a) *a = x[i]; break;
                }
            }
        } else {
            double x[CHUNK];
            double *acc = (double *)p[0] + i0 * st[0];
            hir_load_f64_n(x, src, c->in_dt, st[1], k);
            for (int64_t i = 0; i < k; i++) {
                double *a = acc + i * st[0];
                switch (c->op) {
                case HIR_RED_SUM: *a += x[i]; break;
                case HIR_RED_PROD: *a *= x[i]; break;
                /* amax/amin propagate NaN; fmax/fmin skip it (identity NaN: all-NaN -> NaN) */
                case HIR_RED_MAX: if (isnan(x[i]) || x[i] > *a) *a = isnan(*a) ? *a : x[i]; break;
                case HIR_RED_MIN: if (isnan(x[i]) || x[i] < *a) *a = isnan(*a) ? *a : x[i]; break;
                case HIR_RED_FMAX: *a = fmax(*a, x[i]); break;
                case HIR_RED_FMIN: *a = fmin(*a, x[i]); break;
                default: break;
                }
            }
        }
    }
    return 0;
}

int cpu_reduce(hir_backend *be, hir_stream *s, hir_reduce_op op, const hir_view *out,
               const hir_view *in, uint32_t reduce_mask, hir_diag *e)
{
    if (cpu_check_view(out, "reduce output", e) || cpu_check_view(in, "reduce input", e))
        return -1;
    if ((unsigned)op >= HIR_RED_COUNT)
        return hir_fail(e, "reduction op %d unknown", (int)op);
    if (out->ndim != in->ndim)
        return hir_fail(e, "reduce: output rank %d, input rank %d", out->ndim, in->ndim);
    for (int d = 0; d < in->ndim; d++) {
        int64_t want = (reduce_mask >> d) & 1 ? 1 : in->shape[d];
        if (out->shape[d] != want)
            return hir_fail(e, "reduce: output extent %lld on axis %d, expected %lld",
                                 (long long)out->shape[d], d, (long long)want);
    }
    /* Accumulate in a contiguous out-shaped buffer of double (int64 for integers) rather than
     * in the output dtype: a bf16 running sum would lose the small addends. */
    red_ctx c = {op, intlike(in->dtype), in->dtype};
    int64_t nout = hir_view_numel(out);
    void *acc = malloc((size_t)(nout ? nout : 1) * 8);
    if (!acc)
        return hir_fail(e, "reduce: out of memory");
    for (int64_t i = 0; i < nout; i++) {
        if (c.dom_int) {
            int64_t v = op == HIR_RED_SUM ? 0 : op == HIR_RED_PROD ? 1
                      : (op == HIR_RED_MAX || op == HIR_RED_FMAX) ? INT64_MIN : INT64_MAX;
            ((int64_t *)acc)[i] = v;
        } else {
            double v = op == HIR_RED_SUM ? 0.0 : op == HIR_RED_PROD ? 1.0
                     : op == HIR_RED_MAX ? -INFINITY : op == HIR_RED_MIN ? INFINITY : NAN;
            ((double *)acc)[i] = v;
        }
    }
    hir_view accv;
    hir_view_init(&accv, acc, c.dom_int ? HIR_DT_INT64 : HIR_DT_DOUBLE, out->ndim, out->shape);
    /* seen through in's shape, reduced axes of the accumulator have stride 0 */
    hir_view walk = accv;
    for (int d = 0; d < in->ndim; d++) {
        walk.shape[d] = in->shape[d];
        if ((reduce_mask >> d) & 1)
            walk.stride[d] = 0;
    }
    const hir_view *vs[2] = {&walk, in};
    int rc = cpu_for_rows(in->ndim, in->shape, 2, vs, red_row, &c);
    if (rc == 0)
        rc = cpu_copy_view(out, &accv, e);
    free(acc);
    return rc;
}
