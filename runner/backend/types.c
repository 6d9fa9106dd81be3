/* types.c — helpers over runtime views: element counts and byte sizes (checked against
 * overflow), contiguity and contiguous strides. */
#include <stdint.h>
#include <string.h>

#include "runner/backend/convert.h"
#include "runner/backend/types.h"

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

double hir_view_load_at(const hir_view *v, const int64_t *idx)
{
    int64_t off = 0;
    for (int d = 0; d < v->ndim; d++)
        off += (v->shape[d] == 1 ? 0 : idx[d]) * v->stride[d];
    return hir_load_f64((const char *)v->data + off * (int64_t)hir_dtype_size(v->dtype), v->dtype);
}

void hir_view_store_at(const hir_view *v, const int64_t *idx, double x)
{
    int64_t off = 0;
    for (int d = 0; d < v->ndim; d++)
        off += idx[d] * v->stride[d];
    hir_store_f64((char *)v->data + off * (int64_t)hir_dtype_size(v->dtype), v->dtype, x);
}
