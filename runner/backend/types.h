/* types.h — runtime values the interpreter hands to backends: strided views and operands. The
 * operator enums backends dispatch on come from dialect/tables.h (dialect/defs/ewise.def). */
#ifndef HIR_RUNNER_TYPES_H
#define HIR_RUNNER_TYPES_H

#include <stdint.h>

#include "dialect/dtype.h"
#include "dialect/tables.h"

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
/* one element of a host-memory view as a double: idx has one index per axis; an axis of
 * extent 1 reads index 0 whatever idx says (a broadcast operand) */
double  hir_view_load_at(const hir_view *v, const int64_t *idx);
/* store x (converted to the view's dtype) at idx of a host-memory view */
void    hir_view_store_at(const hir_view *v, const int64_t *idx, double x);


#endif
