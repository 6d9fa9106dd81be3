/* dtype.h — element types of tensors and scalars, generated from defs/dtype.def.
 * Shared by the dialect (printing/parsing `T4_g___bfloat`) and the runner (storage). */
#ifndef HIR_DTYPE_H
#define HIR_DTYPE_H

#include <stdbool.h>
#include <stddef.h>

typedef enum hir_dtype {
#define X(E, NAME, SIZE, PREFIX, ISF, ISI, SYM) HIR_DT_##E,
#include "dialect/defs/dtype.def"
#undef X
    HIR_DT_COUNT
} hir_dtype;

const char *hir_dtype_name(hir_dtype t);        /* printed spelling, e.g. "__bfloat" */
size_t      hir_dtype_name_len(hir_dtype t);    /* strlen(hir_dtype_name(t)) */
size_t      hir_dtype_size(hir_dtype t);        /* bytes per element (0: sub-byte) */
int         hir_dtype_is_float(hir_dtype t);
int         hir_dtype_is_int(hir_dtype t);
/* Longest dtype spelling that is a prefix of s[0..n); returns its length or 0. */
size_t      hir_dtype_match(const char *s, size_t n, hir_dtype *out);
/* The dtype of a scalar symbol spelled with prefix s[0..n) ("i" Index, "f" float, "f4x2_",
 * "ptr" Index, ...: dtype.def's prefix column and symbol.def); false for no known prefix. */
bool        hir_dtype_of_symbol_prefix(const char *s, size_t n, hir_dtype *out);

#endif
