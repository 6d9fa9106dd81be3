/* npy.h — NumPy .npy files for program inputs and outputs: write v1.0, read v1/v2/v3,
 * little-endian C-order arrays of the host-storable dtypes. */
#ifndef HIR_RUNNER_NPY_H
#define HIR_RUNNER_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "runner/backend/backend.h"

/* NumPy has no bfloat16: bf16 arrays are written as '<f4' (exact widening) unless this flag
 * asks for the raw 16-bit patterns as '<u2' (view them with ml_dtypes.bfloat16). */
#define HIR_NPY_RAW_BF16 1

typedef struct hir_npy_header {
    int version;                 /* 1, 2 or 3 */
    char descr[16];              /* e.g. "<f4" */
    int fortran_order;
    int ndim;
    int64_t shape[HIR_MAX_DIMS];
    size_t data_offset;          /* bytes before the array data */
} hir_npy_header;

/* descr written for dt ("<f4", "|i1", ...), NULL when dt has no .npy form */
const char *hir_npy_descr(hir_dtype dt, int flags);
/* Parse the magic, version and header dict at the start of buf[0..len). */
int hir_npy_parse_header(const unsigned char *buf, size_t len, hir_npy_header *h,
                         const char *name, hir_diag *e);
int hir_npy_write(const char *path, const void *data, hir_dtype dt, int ndim,
                  const int64_t *shape, int flags, hir_diag *e);
/* Read path into data (numel(shape) elements of dt) after checking that the file holds
 * exactly that shape and a matching dtype. bf16 accepts '<f4' (rounded to nearest even)
 * and '<u2' (raw bits). */
int hir_npy_read(const char *path, void *data, hir_dtype dt, int ndim, const int64_t *shape,
                 hir_diag *e);
int hir_npy_read_header(const char *path, hir_npy_header *h, hir_diag *e);

#endif
