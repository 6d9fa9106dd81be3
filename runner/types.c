/* types.c — helpers over runtime views and the name tables of the op X-macros in types.h,
 * so the parser, printer and runner all spell ops the one way the table does. */
#include <stdint.h>
#include <string.h>

#include "runner/types.h"

int hir_view_size_checked(const hir_view *v, int64_t *numel, size_t *bytes)
{
    int64_t n = 1;
    size_t b;
    for (int i = 0; i < v->ndim; i++)
        if (v->shape[i] < 0 || __builtin_mul_overflow(n, v->shape[i], &n))
            return -1;
    if (__builtin_mul_overflow((size_t)n, hir_dtype_size(v->dtype), &b))
        return -1;
    if (numel)
        *numel = n;
    if (bytes)
        *bytes = b;
    return 0;
}

int64_t hir_view_numel(const hir_view *v)
{
    int64_t n = 1;
    for (int i = 0; i < v->ndim; i++)
        if (__builtin_mul_overflow(n, v->shape[i], &n))
            return INT64_MAX;
    return n;
}

int hir_view_is_contiguous(const hir_view *v)
{
    int64_t want = 1;
    for (int i = v->ndim - 1; i >= 0; i--) {
        /* a size-1 axis never moves the pointer, so its stride does not matter */
        if (v->shape[i] != 1 && v->stride[i] != want)
            return 0;
        want *= v->shape[i];
    }
    return 1;
}

void hir_view_set_contiguous(hir_view *v)
{
    int64_t s = 1;
    for (int i = v->ndim - 1; i >= 0; i--) {
        v->stride[i] = s;
        s *= v->shape[i];
    }
}

void hir_view_init(hir_view *v, void *data, hir_dtype dt, int ndim, const int64_t *shape)
{
    memset(v, 0, sizeof *v);
    v->data = data;
    v->dtype = dt;
    v->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        v->shape[i] = shape[i];
    hir_view_set_contiguous(v);
}

size_t hir_view_bytes(const hir_view *v)
{
    size_t b;
    if (hir_view_size_checked(v, NULL, &b))
        return SIZE_MAX;
    return b;
}

/* One generator per op family: the tables are the X-macros, nothing is listed twice. */
#define HIR_NAME_ENTRY(E, N, S) N,
#define HIR_SYM_ENTRY(E, N, S) S,
#define HIR_OP_TABLE(fam, type, COUNT, TABLE)                                              \
    static const char *const fam##_names[] = {TABLE(HIR_NAME_ENTRY)};                      \
    static const char *const fam##_symbols[] = {TABLE(HIR_SYM_ENTRY)};                     \
    static const char *fam##_symbol_of(type op)                                            \
    {                                                                                      \
        return (unsigned)op < COUNT ? fam##_symbols[op] : 0;                               \
    }                                                                                      \
    const char *hir_##fam##_op_name(type op)                                               \
    {                                                                                      \
        return (unsigned)op < COUNT ? fam##_names[op] : "?";                               \
    }                                                                                      \
    int hir_##fam##_op_lookup(const char *name, type *out)                                 \
    {                                                                                      \
        for (int i = 0; i < COUNT; i++)                                                    \
            if (!strcmp(name, fam##_names[i])) {                                           \
                *out = (type)i;                                                            \
                return 0;                                                                  \
            }                                                                              \
        for (int i = 0; i < COUNT; i++)                                                    \
            if (fam##_symbols[i] && !strcmp(name, fam##_symbols[i])) {                     \
                *out = (type)i;                                                            \
                return 0;                                                                  \
            }                                                                              \
        return -1;                                                                         \
    }

HIR_OP_TABLE(unary, hir_unary_op, HIR_UN_COUNT, HIR_UNARY_OPS)
HIR_OP_TABLE(binary, hir_binary_op, HIR_BIN_COUNT, HIR_BINARY_OPS)
HIR_OP_TABLE(ternary, hir_ternary_op, HIR_TER_COUNT, HIR_TERNARY_OPS)
HIR_OP_TABLE(reduce, hir_reduce_op, HIR_RED_COUNT, HIR_REDUCE_OPS)

const char *hir_unary_op_symbol(hir_unary_op op) { return unary_symbol_of(op); }
const char *hir_binary_op_symbol(hir_binary_op op) { return binary_symbol_of(op); }
/* ternary and reduce ops have no infix spelling; keep the generated helpers referenced */
static inline void hir_op_tables_unused(void) { (void)ternary_symbol_of; (void)reduce_symbol_of; }
