/* dtype.h — element types of tensors and scalars, generated from dtype.def.
 * Shared by the dialect (printing/parsing `T4_g___bfloat`) and the runner (storage). */
#ifndef HIR_DTYPE_H
#define HIR_DTYPE_H

#include <stddef.h>

typedef enum hir_dtype {
#define X(E, NAME, SIZE, PREFIX, ISF, ISI) HIR_DT_##E,
#include "dialect/dtype.def"
#undef X
    HIR_DT_COUNT
} hir_dtype;

const char *hir_dtype_name(hir_dtype t);        /* printed spelling, e.g. "__bfloat" */
size_t      hir_dtype_size(hir_dtype t);        /* bytes per element (0: sub-byte) */
const char *hir_dtype_prefix(hir_dtype t);      /* scalar-name prefix, e.g. "i" */
int         hir_dtype_is_float(hir_dtype t);
int         hir_dtype_is_int(hir_dtype t);
/* Longest dtype spelling that is a prefix of s[0..n); returns its length or 0. */
size_t      hir_dtype_match(const char *s, size_t n, hir_dtype *out);

#endif
