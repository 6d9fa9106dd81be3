/* types.h — runtime values the interpreter hands to backends: strided views and the
 * element-wise / reduction operator sets (one X-macro table each). */
#ifndef HIR_RUNNER_TYPES_H
#define HIR_RUNNER_TYPES_H

#include <stdint.h>

#include "dialect/dtype.h"

#define HIR_MAX_DIMS 8

/* A strided view of backend memory. data points at element [0,...,0]; strides are in
 * elements and may be 0 (broadcast). ndim may be 0 (a single element). */
typedef struct hir_view {
    void *data;
    hir_dtype dtype;
    int ndim;
    int64_t shape[HIR_MAX_DIMS];
    int64_t stride[HIR_MAX_DIMS];
} hir_view;

/* An operand of an element-wise op: a view, or a scalar broadcast everywhere. */
typedef struct hir_operand {
    int is_scalar;
    int scalar_is_int;
    double f;
    int64_t i;
    hir_view view;
} hir_operand;

/* X(ENUM, name as printed by nvFuser, infix spelling or NULL) */
#define HIR_UNARY_OPS(X) \
    X(NEG, "neg", "-") X(NOT, "not", "!") X(BITNOT, "bitwise_not", "~") \
    X(ABS, "abs", 0) X(EXP, "exp", 0) X(LOG, "log", 0) X(SQRT, "sqrt", 0) \
    X(RSQRT, "rsqrt", 0) X(SIN, "sin", 0) X(COS, "cos", 0) X(TANH, "tanh", 0) \
    X(RELU, "relu", 0) X(SIGMOID, "sigmoid", 0) X(RECIPROCAL, "reciprocal", 0) \
    X(CEIL, "ceil", 0) X(FLOOR, "floor", 0) X(ROUND, "round", 0) X(TRUNC, "trunc", 0) \
    X(ERF, "erf", 0) X(SILU, "silu", 0) X(GELU, "gelu", 0) X(SET, "set", 0)

#define HIR_BINARY_OPS(X) \
    X(ADD, "add", "+") X(SUB, "sub", "-") X(MUL, "mul", "*") X(DIV, "div", "/") \
    X(MOD, "mod", "%") X(EQ, "eq", "==") X(NE, "ne", "!=") X(LT, "lt", "<") \
    X(LE, "le", "<=") X(GT, "gt", ">") X(GE, "ge", ">=") X(AND, "and", "&&") \
    X(OR, "or", "||") X(BITAND, "bitwise_and", "&") X(BITOR, "bitwise_or", "|") \
    X(XOR, "bitwise_xor", "^") X(SHL, "lshift", "<<") X(SHR, "rshift", ">>") \
    X(MAX, "max", 0) X(MIN, "min", 0) X(FMAX, "fmax", 0) X(FMIN, "fmin", 0) \
    X(POW, "pow", 0) X(ATAN2, "atan2", 0) X(FMOD, "fmod", 0) \
    X(REMAINDER, "remainder", 0) X(CEILDIV, "ceilDiv", 0) X(GCD, "gcd", 0)

#define HIR_TERNARY_OPS(X) X(WHERE, "where", 0) X(CLAMP, "clamp", 0) X(LERP, "lerp", 0)

#define HIR_REDUCE_OPS(X) \
    X(SUM, "add", 0) X(PROD, "mul", 0) X(MAX, "max", 0) X(MIN, "min", 0) \
    X(FMAX, "fmax", 0) X(FMIN, "fmin", 0)

#define HIR_ENUM_UN(E, N, S) HIR_UN_##E,
#define HIR_ENUM_BIN(E, N, S) HIR_BIN_##E,
#define HIR_ENUM_TER(E, N, S) HIR_TER_##E,
#define HIR_ENUM_RED(E, N, S) HIR_RED_##E,
typedef enum hir_unary_op { HIR_UNARY_OPS(HIR_ENUM_UN) HIR_UN_COUNT } hir_unary_op;
typedef enum hir_binary_op { HIR_BINARY_OPS(HIR_ENUM_BIN) HIR_BIN_COUNT } hir_binary_op;
typedef enum hir_ternary_op { HIR_TERNARY_OPS(HIR_ENUM_TER) HIR_TER_COUNT } hir_ternary_op;
typedef enum hir_reduce_op { HIR_REDUCE_OPS(HIR_ENUM_RED) HIR_RED_COUNT } hir_reduce_op;
#undef HIR_ENUM_UN
#undef HIR_ENUM_BIN
#undef HIR_ENUM_TER
#undef HIR_ENUM_RED

/* number of elements of a view (product of its shape; 1 for ndim 0); INT64_MAX when the
 * product does not fit (so a size computed from it makes an allocation fail, never wrap) */
int64_t hir_view_numel(const hir_view *v);
/* the same, checked: 0, or -1 when a negative extent or the element count or the byte size
 * does not fit (int64_t elements, size_t bytes) */
int     hir_view_size_checked(const hir_view *v, int64_t *numel, size_t *bytes);
int     hir_view_is_contiguous(const hir_view *v);
/* contiguous row-major strides for v's shape */
void    hir_view_set_contiguous(hir_view *v);
/* fill a contiguous view of data (shape may be NULL when ndim is 0) */
void    hir_view_init(hir_view *v, void *data, hir_dtype dt, int ndim, const int64_t *shape);
/* bytes a contiguous copy of the view's elements takes; SIZE_MAX when it does not fit */
size_t  hir_view_bytes(const hir_view *v);

/* Op names from the X-macro tables: name = nvFuser's spelling ("add"), symbol = infix
 * spelling or NULL. lookup accepts the name or the infix symbol; 0 when found, else -1. */
const char *hir_unary_op_name(hir_unary_op op);
const char *hir_unary_op_symbol(hir_unary_op op);
int         hir_unary_op_lookup(const char *name, hir_unary_op *out);
const char *hir_binary_op_name(hir_binary_op op);
const char *hir_binary_op_symbol(hir_binary_op op);
int         hir_binary_op_lookup(const char *name, hir_binary_op *out);
const char *hir_ternary_op_name(hir_ternary_op op);
int         hir_ternary_op_lookup(const char *name, hir_ternary_op *out);
const char *hir_reduce_op_name(hir_reduce_op op);
int         hir_reduce_op_lookup(const char *name, hir_reduce_op *out);

#endif
